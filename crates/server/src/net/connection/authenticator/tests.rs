//! The authenticator's states driven by kraftwerk-sasl's client: what a Kafka client sees at
//! each step (answers, error codes, messages, closes) and which principal the rest is served as.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, MetadataRequest, RequestKind, ResponseKind,
    SaslAuthenticateRequest, SaslHandshakeRequest,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_sasl::{
    credential_from_password, token_hmac, token_password, ClientExchange, CredentialStore,
    Mechanism, ScramCredential, StoredToken,
};

use super::{Authenticator, RawStep, Step};
use crate::net::sasl::{ListenerSasl, ServerSasl};

struct Store(BTreeMap<(String, Mechanism), ScramCredential>);

impl CredentialStore for Store {
    fn scram(&self, user: &str, mech: Mechanism) -> Option<ScramCredential> {
        self.0.get(&(user.to_owned(), mech)).cloned()
    }

    /// One delegation token, "tok1" owned by alice, expiring in an hour; "old" expired.
    fn token(&self, token_id: &str) -> Option<StoredToken> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        let expiry_timestamp_ms = match token_id {
            "tok1" => now + 3_600_000,
            "old" => now - 1,
            _ => return None,
        };
        Some(StoredToken {
            hmac: token_hmac("secret", token_id),
            owner: "alice".to_owned(),
            expiry_timestamp_ms,
        })
    }
}

fn sasl(reauth_ms: u64) -> ServerSasl {
    let settings = ListenerSasl {
        enabled_mechanisms: vec![Mechanism::Plain, Mechanism::ScramSha512],
        plain_users: BTreeMap::from([("controller".to_owned(), "controller-secret".to_owned())]),
        reauth_ms,
        failed_authentication_delay_ms: 100,
        max_receive_size: 524_288,
    };
    let mut creds = BTreeMap::new();
    for user in ["alice", "bob"] {
        let credential = credential_from_password(
            Mechanism::ScramSha512,
            &format!("{user}-secret"),
            b"salt-of-the-earth".to_vec(),
            4096,
        );
        creds.insert((user.to_owned(), Mechanism::ScramSha512), credential);
    }
    ServerSasl::new(settings, Arc::new(Store(creds)))
}

fn handshake(mech: &str) -> RequestKind {
    let mut request = SaslHandshakeRequest::default();
    request.mechanism = StrBytes::from_string(mech.to_owned());
    RequestKind::SaslHandshake(request)
}

fn authenticate(bytes: Vec<u8>) -> RequestKind {
    let mut request = SaslAuthenticateRequest::default();
    request.auth_bytes = bytes.into();
    RequestKind::SaslAuthenticate(request)
}

fn metadata() -> RequestKind {
    RequestKind::Metadata(MetadataRequest::default())
}

fn key(body: &RequestKind) -> ApiKey {
    match body {
        RequestKind::SaslHandshake(_) => ApiKey::SaslHandshake,
        RequestKind::SaslAuthenticate(_) => ApiKey::SaslAuthenticate,
        RequestKind::ApiVersions(_) => ApiKey::ApiVersions,
        RequestKind::Metadata(_) => ApiKey::Metadata,
        other => panic!("not used here: {other:?}"),
    }
}

fn step(auth: &mut Authenticator, version: i16, body: RequestKind, now: Instant) -> Step {
    auth.on_request(key(&body), version, &body, now)
}

fn handshake_answer(step: Step) -> (i16, Vec<String>) {
    match step {
        Step::Answer(ResponseKind::SaslHandshake(r)) => (
            r.error_code,
            r.mechanisms.iter().map(|m| m.to_string()).collect(),
        ),
        other => panic!("expected a SaslHandshake answer, got {other:?}"),
    }
}

/// Runs a whole client exchange at SaslAuthenticate `version`; returns the last step.
fn login(
    auth: &mut Authenticator,
    mech: Mechanism,
    user: &str,
    password: &str,
    version: i16,
    now: Instant,
) -> Step {
    login_with(
        auth,
        mech,
        ClientExchange::new(mech, user, password),
        version,
        now,
    )
}

fn login_with(
    auth: &mut Authenticator,
    mech: Mechanism,
    mut client: ClientExchange,
    version: i16,
    now: Instant,
) -> Step {
    let (error, _) = handshake_answer(step(auth, 1, handshake(mech.name()), now));
    assert_eq!(error, 0);
    let mut message = client.first_message();
    loop {
        match step(auth, version, authenticate(message), now) {
            Step::Answer(ResponseKind::SaslAuthenticate(r)) if r.error_code == 0 => {
                match client
                    .step(&r.auth_bytes)
                    .expect("the server's answer verifies")
                {
                    Some(next) => message = next,
                    None => return Step::Answer(ResponseKind::SaslAuthenticate(r)),
                }
            }
            other => return other,
        }
    }
}

fn principal_of(auth: &mut Authenticator, now: Instant) -> String {
    match step(auth, 12, metadata(), now) {
        Step::Serve(principal) => principal.to_string(),
        other => panic!("expected the request to be served, got {other:?}"),
    }
}

#[test]
fn plain_and_scram_logins_name_the_principal() {
    let now = Instant::now();
    let mut auth = Authenticator::new(sasl(0));
    assert!(matches!(
        step(
            &mut auth,
            3,
            RequestKind::ApiVersions(ApiVersionsRequest::default()),
            now
        ),
        Step::Serve(_)
    ));
    let done = login(
        &mut auth,
        Mechanism::Plain,
        "controller",
        "controller-secret",
        2,
        now,
    );
    let Step::Answer(ResponseKind::SaslAuthenticate(r)) = done else {
        panic!("{done:?}")
    };
    assert_eq!(r.session_lifetime_ms, 0, "no connections.max.reauth.ms");
    assert_eq!(principal_of(&mut auth, now), "User:controller");

    let mut auth = Authenticator::new(sasl(0));
    login(
        &mut auth,
        Mechanism::ScramSha512,
        "alice",
        "alice-secret",
        1,
        now,
    );
    assert_eq!(principal_of(&mut auth, now), "User:alice");
}

#[test]
fn wrong_passwords_and_unknown_users_fail_with_kafkas_messages() {
    let now = Instant::now();
    for (mech, user, expected) in [
        (
            Mechanism::Plain,
            "controller",
            "Authentication failed: Invalid username or password",
        ),
        (
            Mechanism::ScramSha512,
            "alice",
            "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
        ),
        (
            Mechanism::ScramSha512,
            "mallory",
            "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
        ),
    ] {
        let mut auth = Authenticator::new(sasl(0));
        let failed = login(&mut auth, mech, user, "wrong", 2, now);
        let Step::Fail {
            response: Some(ResponseKind::SaslAuthenticate(r)),
            reason,
        } = failed
        else {
            panic!("{mech:?} {user}: {failed:?}")
        };
        assert_eq!(r.error_code, 58, "SASL_AUTHENTICATION_FAILED");
        assert_eq!(r.error_message.as_deref(), Some(expected));
        assert!(!reason.contains("wrong"), "the password is never logged: {reason}");
        assert_eq!(auth.failure_delay(), Duration::from_millis(100));
        assert!(matches!(step(&mut auth, 12, metadata(), now), Step::Close(_)));
    }
}

#[test]
fn a_mechanism_not_enabled_is_refused_with_the_enabled_list() {
    let now = Instant::now();
    for name in ["SCRAM-SHA-256", "GSSAPI", "plain"] {
        let mut auth = Authenticator::new(sasl(0));
        let Step::Fail {
            response: Some(ResponseKind::SaslHandshake(r)),
            reason,
        } = step(&mut auth, 1, handshake(name), now)
        else {
            panic!("{name}")
        };
        assert_eq!(r.error_code, 33, "UNSUPPORTED_SASL_MECHANISM");
        let listed: Vec<String> = r.mechanisms.iter().map(|m| m.to_string()).collect();
        assert_eq!(listed, ["PLAIN", "SCRAM-SHA-512"]);
        assert_eq!(reason, format!("Unsupported SASL mechanism {name}"));
    }
}

#[test]
fn requests_before_authentication_close_the_connection() {
    let now = Instant::now();
    let mut auth = Authenticator::new(sasl(0));
    match step(&mut auth, 12, metadata(), now) {
        Step::Fail {
            response: None,
            reason,
        } => assert_eq!(
            reason,
            "Unexpected Kafka request of type METADATA during SASL handshake."
        ),
        other => panic!("{other:?}"),
    }
    // Between the handshake and the end of the exchange.
    let mut auth = Authenticator::new(sasl(0));
    step(&mut auth, 1, handshake("SCRAM-SHA-512"), now);
    assert!(matches!(
        step(&mut auth, 12, metadata(), now),
        Step::Fail { response: None, .. }
    ));
    // A second ApiVersions before the handshake.
    let mut auth = Authenticator::new(sasl(0));
    let versions = || RequestKind::ApiVersions(ApiVersionsRequest::default());
    assert!(matches!(
        step(&mut auth, 3, versions(), now),
        Step::Serve(_)
    ));
    assert!(matches!(
        step(&mut auth, 3, versions(), now),
        Step::Fail { .. }
    ));
}

#[test]
fn frames_are_bounded_by_sasl_server_max_receive_size_until_authenticated() {
    let now = Instant::now();
    let mut auth = Authenticator::new(sasl(0));
    assert_eq!(auth.max_frame_bytes(100 << 20), 524_288);
    // The close line names the key whose limit applied.
    assert_eq!(
        auth.max_frame_key(100 << 20),
        "sasl.server.max.receive.size"
    );
    assert_eq!(
        auth.max_frame_key(1024),
        "socket.request.max.bytes",
        "the smaller limit is the one in force"
    );
    login(
        &mut auth,
        Mechanism::Plain,
        "controller",
        "controller-secret",
        2,
        now,
    );
    assert_eq!(auth.max_frame_bytes(100 << 20), 100 << 20);
    assert_eq!(auth.max_frame_key(100 << 20), "socket.request.max.bytes");
}

#[test]
fn sessions_expire_and_re_authenticate_with_the_same_principal() {
    let start = Instant::now();
    let mut auth = Authenticator::new(sasl(60_000));
    let done = login(
        &mut auth,
        Mechanism::ScramSha512,
        "alice",
        "alice-secret",
        2,
        start,
    );
    let Step::Answer(ResponseKind::SaslAuthenticate(r)) = done else {
        panic!("{done:?}")
    };
    assert_eq!(r.session_lifetime_ms, 60_000);
    let later = start + Duration::from_secs(59);
    assert_eq!(principal_of(&mut auth, later), "User:alice");
    // Re-authenticating renews the session.
    login(
        &mut auth,
        Mechanism::ScramSha512,
        "alice",
        "alice-secret",
        2,
        later,
    );
    let after_first_expiry = start + Duration::from_secs(61);
    assert_eq!(principal_of(&mut auth, after_first_expiry), "User:alice");
    // Without re-authenticating, the first request after expiry closes the connection.
    let expired = later + Duration::from_secs(60);
    assert!(matches!(
        step(&mut auth, 12, metadata(), expired),
        Step::Close(_)
    ));
}

#[test]
fn re_authentication_cannot_change_the_principal_or_the_mechanism() {
    let now = Instant::now();
    let mut auth = Authenticator::new(sasl(60_000));
    login(
        &mut auth,
        Mechanism::ScramSha512,
        "alice",
        "alice-secret",
        2,
        now,
    );
    match login(
        &mut auth,
        Mechanism::ScramSha512,
        "bob",
        "bob-secret",
        2,
        now,
    ) {
        Step::Fail {
            response: Some(ResponseKind::SaslAuthenticate(r)),
            ..
        } => assert_eq!(
            r.error_message.as_deref(),
            Some("Cannot change principals during re-authentication from User.alice: User.bob")
        ),
        other => panic!("{other:?}"),
    }

    let mut auth = Authenticator::new(sasl(60_000));
    login(
        &mut auth,
        Mechanism::ScramSha512,
        "alice",
        "alice-secret",
        2,
        now,
    );
    let (error, _) = handshake_answer(step(&mut auth, 1, handshake("PLAIN"), now));
    assert_eq!(
        error, 0,
        "Java answers the handshake, then fails the next token"
    );
    match step(&mut auth, 2, authenticate(b"\0controller\0controller-secret".to_vec()), now) {
        Step::Fail { reason, .. } => assert_eq!(
            reason,
            "SASL mechanism 'PLAIN' requested by client is not supported for re-authentication of mechanism 'SCRAM-SHA-512'"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_v0_client_cannot_re_authenticate_and_gets_illegal_sasl_state() {
    let now = Instant::now();
    let mut auth = Authenticator::new(sasl(60_000));
    login(
        &mut auth,
        Mechanism::Plain,
        "controller",
        "controller-secret",
        0,
        now,
    );
    let (error, _) = handshake_answer(step(&mut auth, 1, handshake("PLAIN"), now));
    assert_eq!(error, 34, "ILLEGAL_SASL_STATE, as ControllerApis answers");
    match step(&mut auth, 2, authenticate(Vec::new()), now) {
        Step::Answer(ResponseKind::SaslAuthenticate(r)) => assert_eq!(r.error_code, 34),
        other => panic!("{other:?}"),
    }
}

#[test]
fn raw_tokens_after_a_v0_handshake() {
    let now = Instant::now();
    let mut auth = Authenticator::new(sasl(0));
    let (error, _) = handshake_answer(step(&mut auth, 0, handshake("SCRAM-SHA-512"), now));
    assert_eq!(error, 0);
    assert!(auth.expects_raw_token());
    let mut client = ClientExchange::new(Mechanism::ScramSha512, "alice", "alice-secret");
    let RawStep::Send(server_first) = auth.on_raw_token(&client.first_message(), now) else {
        panic!()
    };
    let client_final = client.step(&server_first).unwrap().unwrap();
    let RawStep::Send(server_final) = auth.on_raw_token(&client_final, now) else {
        panic!()
    };
    assert_eq!(client.step(&server_final).unwrap(), None);
    assert!(!auth.expects_raw_token());
    assert_eq!(principal_of(&mut auth, now), "User:alice");

    let mut auth = Authenticator::new(sasl(0));
    step(&mut auth, 0, handshake("PLAIN"), now);
    assert!(matches!(
        auth.on_raw_token(b"\0controller\0nope", now),
        RawStep::Fail(_)
    ));
}

#[test]
fn a_delegation_token_logs_in_as_its_owner_until_it_expires() {
    let now = Instant::now();
    let hmac = token_password(&token_hmac("secret", "tok1"));
    let token_client =
        || ClientExchange::new(Mechanism::ScramSha512, "tok1", &hmac).with_token_auth();
    let mut auth = Authenticator::new(sasl(0));
    let done = login_with(&mut auth, Mechanism::ScramSha512, token_client(), 2, now);
    let Step::Answer(ResponseKind::SaslAuthenticate(r)) = done else {
        panic!("{done:?}")
    };
    // The session lasts until the token expires (about an hour), even without
    // connections.max.reauth.ms.
    assert!(
        (3_590_000..=3_600_000).contains(&r.session_lifetime_ms),
        "{}",
        r.session_lifetime_ms
    );
    assert!(auth.token_authenticated());
    assert_eq!(principal_of(&mut auth, now), "User:alice");
    let later = now + Duration::from_millis(3_600_001);
    assert!(matches!(
        step(&mut auth, 12, metadata(), later),
        Step::Close(_)
    ));

    // connections.max.reauth.ms shorter than the token: that.
    let mut auth = Authenticator::new(sasl(60_000));
    let Step::Answer(ResponseKind::SaslAuthenticate(r)) =
        login_with(&mut auth, Mechanism::ScramSha512, token_client(), 2, now)
    else {
        panic!()
    };
    assert_eq!(r.session_lifetime_ms, 60_000);

    // A password login is not token-authenticated; the HMAC is no password for a user.
    let mut auth = Authenticator::new(sasl(0));
    login(
        &mut auth,
        Mechanism::ScramSha512,
        "alice",
        "alice-secret",
        2,
        now,
    );
    assert!(!auth.token_authenticated());
    let mut auth = Authenticator::new(sasl(0));
    let step = login_with(
        &mut auth,
        Mechanism::ScramSha512,
        ClientExchange::new(Mechanism::ScramSha512, "tok1", "alice-secret").with_token_auth(),
        2,
        now,
    );
    assert!(matches!(step, Step::Fail { .. }), "{step:?}");
}
