//! Whole exchanges through `ServerExchange` and `ClientExchange`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use kraftwerk_sasl::*;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

struct Store(BTreeMap<(String, Mechanism), ScramCredential>);

impl CredentialStore for Store {
    fn scram(&self, user: &str, mech: Mechanism) -> Option<ScramCredential> {
        self.0.get(&(user.to_owned(), mech)).cloned()
    }
}

const RFC_CLIENT_NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
const RFC_SERVER_NONCE: &str = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";

fn store(entries: &[(&str, Mechanism, &str, &[u8], i32)]) -> Arc<dyn CredentialStore> {
    Arc::new(Store(
        entries
            .iter()
            .map(|(user, mech, password, salt, iterations)| {
                (
                    (user.to_string(), *mech),
                    credential_from_password(*mech, password, salt.to_vec(), *iterations),
                )
            })
            .collect(),
    ))
}

fn rfc_store() -> Arc<dyn CredentialStore> {
    let salt = STANDARD.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
    store(&[("user", Mechanism::ScramSha256, "pencil", &salt, 4096)])
}

fn server(mech: Mechanism, store: Arc<dyn CredentialStore>) -> ServerExchange {
    ServerExchange::with_nonce_source(
        mech,
        Arc::new(BTreeMap::new()),
        store,
        Box::new(|| RFC_SERVER_NONCE.to_owned()),
    )
}

fn plain_server() -> ServerExchange {
    let users: BTreeMap<String, String> = [("admin", "admin-secret"), ("alice", "alice-secret")]
        .into_iter()
        .map(|(u, p)| (u.to_owned(), p.to_owned()))
        .collect();
    ServerExchange::new(Mechanism::Plain, Arc::new(users), store(&[]))
}

fn challenge(step: Result<ServerStep, AuthError>) -> Vec<u8> {
    match step.unwrap() {
        ServerStep::Challenge(c) => c,
        other => panic!("expected a challenge, got {other:?}"),
    }
}

fn s(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

#[test]
fn mechanism_names_and_ids() {
    for m in [
        Mechanism::Plain,
        Mechanism::ScramSha256,
        Mechanism::ScramSha512,
    ] {
        assert_eq!(Mechanism::from_name(m.name()), Some(m));
    }
    assert_eq!(Mechanism::from_name("scram-sha-256"), None);
    assert_eq!(Mechanism::ScramSha256.scram_type(), Some(1));
    assert_eq!(Mechanism::ScramSha512.scram_type(), Some(2));
    assert_eq!(Mechanism::Plain.scram_type(), None);
}

#[test]
fn rfc7677_example_end_to_end() {
    let mut server = server(Mechanism::ScramSha256, rfc_store());
    let mut client =
        ClientExchange::with_nonce(Mechanism::ScramSha256, "user", "pencil", RFC_CLIENT_NONCE);
    let first = client.first_message();
    assert_eq!(s(&first), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
    let server_first = challenge(server.step(&first));
    assert_eq!(
        s(&server_first),
        "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    );
    let client_final = client.step(&server_first).unwrap().unwrap();
    assert_eq!(
        s(&client_final),
        "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    );
    let ServerStep::Done {
        authorization_id,
        final_message,
        token_expiry_ms: None,
    } = server.step(&client_final).unwrap()
    else {
        panic!("not done")
    };
    assert_eq!(authorization_id, "user");
    assert_eq!(
        s(&final_message),
        "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    );
    assert_eq!(client.step(&final_message), Ok(None));
    // Nothing after the end.
    assert!(server.step(b"again").is_err());
}

fn scram_round_trip(
    mech: Mechanism,
    store: Arc<dyn CredentialStore>,
    user: &str,
    password: &str,
) -> Result<String, AuthError> {
    let mut server = ServerExchange::new(mech, Arc::new(BTreeMap::new()), store);
    let mut client = ClientExchange::new(mech, user, password);
    let server_first = challenge(server.step(&client.first_message()));
    let client_final = client.step(&server_first)?.unwrap();
    match server.step(&client_final)? {
        ServerStep::Done {
            authorization_id,
            final_message,
            token_expiry_ms: None,
        } => {
            assert_eq!(client.step(&final_message), Ok(None));
            Ok(authorization_id)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn scram_sha512_round_trip_and_failures() {
    let st = store(&[
        (
            "alice",
            Mechanism::ScramSha512,
            "alice-secret",
            b"salt-1",
            8192,
        ),
        ("a=b,c", Mechanism::ScramSha512, "odd", b"salt-2", 4096),
    ]);
    assert_eq!(
        scram_round_trip(Mechanism::ScramSha512, st.clone(), "alice", "alice-secret").as_deref(),
        Ok("alice")
    );
    // saslname escaping both ways.
    assert_eq!(
        scram_round_trip(Mechanism::ScramSha512, st.clone(), "a=b,c", "odd").as_deref(),
        Ok("a=b,c")
    );
    let generic = "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512";
    let wrong = scram_round_trip(Mechanism::ScramSha512, st.clone(), "alice", "nope").unwrap_err();
    assert!(matches!(wrong, AuthError::InvalidCredentials { .. }));
    assert_eq!(wrong.client_message(), generic);
    assert!(!wrong.to_string().contains("nope"));
    // Unknown user: a made-up credential, failing at the proof with the same message.
    let unknown = scram_round_trip(Mechanism::ScramSha512, st.clone(), "bob", "x").unwrap_err();
    assert!(matches!(unknown, AuthError::InvalidCredentials { .. }));
    assert_eq!(unknown.client_message(), generic);
    // A SHA-256 credential does not answer for SHA-512.
    let st256 = store(&[("carol", Mechanism::ScramSha256, "pw", b"salt", 4096)]);
    assert!(scram_round_trip(Mechanism::ScramSha512, st256.clone(), "carol", "pw").is_err());
    assert!(scram_round_trip(Mechanism::ScramSha256, st256, "carol", "pw").is_ok());
}

#[test]
fn unknown_user_salt_is_stable() {
    let first = |user: &str| {
        let mut server = server(Mechanism::ScramSha256, rfc_store());
        challenge(server.step(format!("n,,n={user},r=abc").as_bytes()))
    };
    assert_eq!(first("ghost"), first("ghost"));
    assert_ne!(first("ghost"), first("phantom"));
}

#[test]
fn scram_final_checks() {
    let final_ok = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    let run = |first: &str, last: &str| {
        let mut server = server(Mechanism::ScramSha256, rfc_store());
        challenge(server.step(first.as_bytes()));
        server.step(last.as_bytes())
    };
    let first = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
    assert!(run(first, final_ok).is_ok());
    // Mismatched nonce.
    let bad_nonce = final_ok.replace("k0,p", "k1,p");
    assert!(matches!(
        run(first, &bad_nonce),
        Err(AuthError::InvalidNonce { .. })
    ));
    // Channel binding not the GS2 header ("y,," / "n,a=user,").
    let bad_cb = final_ok.replace("c=biws", "c=eSws");
    assert!(matches!(
        run(first, &bad_cb),
        Err(AuthError::ChannelBinding { .. })
    ));
    let with_authzid = "n,a=user,n=user,r=rOprNGfwEbeRWgbNEkqO";
    assert!(matches!(
        run(with_authzid, final_ok),
        Err(AuthError::ChannelBinding { .. })
    ));
    // Tampered proof.
    let bad_proof = final_ok.replace("p=dHzb", "p=dHzc");
    let e = run(first, &bad_proof).unwrap_err();
    assert!(matches!(e, AuthError::InvalidCredentials { .. }));
    assert_eq!(
        e.client_message(),
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"
    );
    // Proof of the wrong length.
    assert!(run(first, &final_ok.replace("p=dHzb", "p=")).is_err());
    assert!(matches!(
        run(first, "garbage"),
        Err(AuthError::Malformed { .. })
    ));
}

#[test]
fn scram_first_checks() {
    let mut sv = server(Mechanism::ScramSha256, rfc_store());
    let e = sv.step(b"n,a=admin,n=user,r=abc").unwrap_err();
    assert!(matches!(e, AuthError::AuthorizationIdMismatch { .. }));
    assert_eq!(
        e.client_message(),
        "Authentication failed: Client requested an authorization id that is different from username"
    );
    // Failed exchanges stay failed.
    assert!(matches!(
        sv.step(b"n,,n=user,r=abc"),
        Err(AuthError::UnexpectedMessage { .. })
    ));
    let first = |m: &str| server(Mechanism::ScramSha256, rfc_store()).step(m.as_bytes());
    // authzid equal to the user is fine; other extensions are ignored.
    assert!(first("n,a=user,n=user,r=abc").is_ok());
    assert!(first("n,,n=user,r=abc,foo=bar").is_ok());
    // An unknown token goes on with a made-up credential, as an unknown user does.
    assert!(first("n,,n=user,r=abc,tokenauth=true").is_ok());
    assert!(first("n,,n=user,r=abc,tokenauth=false").is_ok());
    for bad in [
        "y,,n=user,r=abc",
        "p=tls-unique,,n=user,r=abc",
        "n,,n=us=er,r=abc",
        "n,,n=user=2,r=abc",
        "n,,n=,r=abc",
        "n,,n=user,r=",
        "n,,n=user",
        "n,,n=user,r=abc,=x",
        "n,,n=üser,r=abc",
        "",
    ] {
        assert!(
            matches!(first(bad), Err(AuthError::Malformed { .. })),
            "{bad:?}"
        );
    }
    let big = vec![b'a'; MAX_MESSAGE_SIZE + 1];
    assert!(matches!(
        first(s(&big)),
        Err(AuthError::MessageTooLarge { .. })
    ));
}

#[test]
fn stored_iterations_are_bounded() {
    for iterations in [4095, 16385, -1] {
        let st: Arc<dyn CredentialStore> = Arc::new(Store(
            [(
                ("u".to_owned(), Mechanism::ScramSha256),
                ScramCredential {
                    salt: b"s".to_vec(),
                    stored_key: vec![0; 32],
                    server_key: vec![0; 32],
                    iterations,
                },
            )]
            .into_iter()
            .collect(),
        ));
        assert!(matches!(
            server(Mechanism::ScramSha256, st).step(b"n,,n=u,r=abc"),
            Err(AuthError::Iterations { .. })
        ));
    }
}

#[test]
fn client_checks_the_server() {
    let mut c = ClientExchange::with_nonce(Mechanism::ScramSha256, "user", "pencil", "abc");
    c.first_message();
    // The server nonce must extend the client's.
    assert!(matches!(
        c.step(b"r=xyz123,s=c2FsdA==,i=4096"),
        Err(AuthError::InvalidNonce { .. })
    ));
    let mut c = ClientExchange::with_nonce(Mechanism::ScramSha256, "user", "pencil", "abc");
    c.first_message();
    assert!(matches!(
        c.step(b"r=abc123,s=c2FsdA==,i=100000000"),
        Err(AuthError::Iterations { .. })
    ));
    let mut c = ClientExchange::with_nonce(Mechanism::ScramSha256, "user", "pencil", "abc");
    c.first_message();
    assert!(c.step(b"r=abc123,s=c2FsdA==,i=4096").unwrap().is_some());
    assert!(matches!(
        c.step(b"v=AAAA"),
        Err(AuthError::ServerSignature { .. })
    ));
    let mut c = ClientExchange::with_nonce(Mechanism::ScramSha256, "user", "pencil", "abc");
    c.first_message();
    c.step(b"r=abc123,s=c2FsdA==,i=4096").unwrap();
    assert_eq!(
        c.step(b"e=invalid-proof"),
        Err(AuthError::ServerError {
            mechanism: Mechanism::ScramSha256,
            error: "invalid-proof".into()
        })
    );
}

#[test]
fn plain_exchanges() {
    let done = |r: Result<ServerStep, AuthError>| match r {
        Ok(ServerStep::Done {
            authorization_id,
            final_message,
            token_expiry_ms: None,
        }) => {
            assert!(final_message.is_empty());
            Ok(authorization_id)
        }
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(e),
    };
    let mut client = ClientExchange::new(Mechanism::Plain, "alice", "alice-secret");
    let mut sv = plain_server();
    assert_eq!(
        done(sv.step(&client.first_message())).as_deref(),
        Ok("alice")
    );
    assert_eq!(client.step(b""), Ok(None));
    assert_eq!(
        done(plain_server().step(b"alice\0alice\0alice-secret")).as_deref(),
        Ok("alice")
    );
    let invalid = "Authentication failed: Invalid username or password";
    for bad in [
        &b"\0alice\0wrong"[..],
        b"\0mallory\0alice-secret",
        b"\0alice\0alice-secre",
    ] {
        let e = plain_server().step(bad).unwrap_err();
        assert_eq!(e.client_message(), invalid);
        assert!(!e.to_string().contains("secre"));
    }
    let e = plain_server()
        .step(b"admin\0alice\0alice-secret")
        .unwrap_err();
    assert_eq!(
        e.client_message(),
        "Authentication failed: Client requested an authorization id that is different from username"
    );
    assert_eq!(
        plain_server()
            .step(b"alice\0alice-secret")
            .unwrap_err()
            .client_message(),
        "Invalid SASL/PLAIN response: expected 3 tokens, got 2"
    );
    assert_eq!(
        plain_server()
            .step(b"a\0b\0c\0d")
            .unwrap_err()
            .client_message(),
        "Invalid SASL/PLAIN response: expected 3 tokens, got 4"
    );
    assert_eq!(
        plain_server().step(b"\0\0x").unwrap_err().client_message(),
        "Authentication failed: username not specified"
    );
    assert_eq!(
        plain_server()
            .step(b"\0alice\0")
            .unwrap_err()
            .client_message(),
        "Authentication failed: password not specified"
    );
}

#[test]
fn salted_password_matches_rfc7677() {
    // RFC 7677's ClientProof is only right if Hi() is; check the derived StoredKey directly too.
    let salt = STANDARD.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
    let salted = salted_password(Mechanism::ScramSha256, b"pencil", &salt, 4096);
    let cred = credential_from_salted(Mechanism::ScramSha256, salt.clone(), &salted, 4096);
    assert_eq!(
        cred,
        credential_from_password(Mechanism::ScramSha256, "pencil", salt, 4096)
    );
    assert_eq!(
        scram_keys(1, &salted),
        Some((cred.stored_key.clone(), cred.server_key.clone()))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_input_never_panics(
        mech in prop::sample::select(vec![Mechanism::Plain, Mechanism::ScramSha256, Mechanism::ScramSha512]),
        first in prop::collection::vec(any::<u8>(), 0..200),
        second in prop::collection::vec(any::<u8>(), 0..200),
        prefix in prop::sample::select(vec!["", "n,,n=user,r=", "c=biws,r=", "n,a="]),
    ) {
        let mut sv = server(mech, rfc_store());
        let mut m1 = prefix.as_bytes().to_vec();
        m1.extend_from_slice(&first);
        let _ = sv.step(&m1);
        let _ = sv.step(&second);
        let mut c = ClientExchange::with_nonce(mech, "user", "pencil", "abc");
        c.first_message();
        let _ = c.step(&first);
        let _ = c.step(&second);
    }
}

/// A store with one delegation token ("tok1", owned by alice, expiring at 5,000) and one user
/// "tok1" with a password, to show the two are looked up apart.
struct TokenStore;

const TOKEN_SECRET: &str = "token-secret";

impl CredentialStore for TokenStore {
    fn scram(&self, user: &str, mech: Mechanism) -> Option<ScramCredential> {
        (user == "tok1").then(|| credential_from_password(mech, "user-pw", b"salt".to_vec(), 4096))
    }

    fn token(&self, token_id: &str) -> Option<StoredToken> {
        (token_id == "tok1").then(|| StoredToken {
            hmac: token_hmac(TOKEN_SECRET, token_id),
            owner: "alice".to_owned(),
            expiry_timestamp_ms: 5_000,
        })
    }
}

fn token_round_trip(
    mech: Mechanism,
    token_id: &str,
    password: &str,
    token_auth: bool,
) -> Result<(String, Option<i64>), AuthError> {
    let mut server = ServerExchange::new(mech, Arc::new(BTreeMap::new()), Arc::new(TokenStore));
    let mut client = ClientExchange::new(mech, token_id, password);
    if token_auth {
        client = client.with_token_auth();
    }
    let first = client.first_message();
    assert_eq!(s(&first).ends_with(",tokenauth=true"), token_auth);
    let server_first = challenge(server.step(&first));
    let client_final = client.step(&server_first)?.unwrap();
    match server.step(&client_final)? {
        ServerStep::Done {
            authorization_id,
            final_message,
            token_expiry_ms,
        } => {
            assert_eq!(client.step(&final_message), Ok(None));
            Ok((authorization_id, token_expiry_ms))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn delegation_tokens_authenticate_as_their_owner() {
    let hmac_b64 = token_password(&token_hmac(TOKEN_SECRET, "tok1"));
    for mech in [Mechanism::ScramSha256, Mechanism::ScramSha512] {
        // Token id + base64 HMAC with tokenauth=true: the owner, token-authenticated.
        assert_eq!(
            token_round_trip(mech, "tok1", &hmac_b64, true),
            Ok(("alice".to_owned(), Some(5_000)))
        );
        // Without the extension the same name is a user, checked against its own password.
        assert_eq!(
            token_round_trip(mech, "tok1", "user-pw", false),
            Ok(("tok1".to_owned(), None))
        );
        assert!(token_round_trip(mech, "tok1", &hmac_b64, false).is_err());
        // The user's password is no token password, an unknown token id fails the same way,
        // and an HMAC made with another secret is refused.
        for (id, pw) in [
            ("tok1", "user-pw".to_owned()),
            ("tok2", token_password(&token_hmac(TOKEN_SECRET, "tok2"))),
            ("tok1", token_password(&token_hmac("other-secret", "tok1"))),
        ] {
            assert!(
                matches!(
                    token_round_trip(mech, id, &pw, true),
                    Err(AuthError::InvalidCredentials { .. })
                ),
                "{id} {pw}"
            );
        }
    }
}

#[test]
fn an_unknown_token_gets_the_same_salt_as_a_known_one_would() {
    let salt_of = |id: &str| {
        let mut server = ServerExchange::new(
            Mechanism::ScramSha512,
            Arc::new(BTreeMap::new()),
            Arc::new(TokenStore),
        );
        let mut client = ClientExchange::new(Mechanism::ScramSha512, id, "x").with_token_auth();
        let first = challenge(server.step(&client.first_message()));
        let text = s(&first).to_owned();
        text.split(',').nth(1).unwrap().to_owned()
    };
    assert_eq!(salt_of("tok1"), salt_of("tok1"));
    assert_eq!(salt_of("tok2"), salt_of("tok2"));
    assert!(salt_of("tok1").starts_with("s="));
}
