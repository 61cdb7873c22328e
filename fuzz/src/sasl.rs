//! The `sasl` target: SaslAuthenticate `auth_bytes` into a server exchange, the way a client on
//! a SASL listener drives it.
//!
//! Input: `mechanism` (1 byte: low bits 0 PLAIN, 1 SCRAM-SHA-256, 2 SCRAM-SHA-512),
//! `first length` (u16 big-endian), the first message, then the rest as the second message.
//! The server knows RFC 7677's user (`user`/`pencil`, SHA-256 and SHA-512) and PLAIN users
//! `admin`/`alice`, and its server nonce is RFC 7677's, so the RFC exchange is a seed that
//! authenticates. The same messages go into a client exchange as server messages.
//!
//! What must hold: `step` never panics; it authenticates only a known user; after `Done` or an
//! error every further message fails; `client_message` never carries the password.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use kraftwerk_sasl::{
    credential_from_password, AuthError, ClientExchange, CredentialStore, Mechanism,
    ScramCredential, ServerExchange, ServerStep,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// RFC 7677's server nonce.
pub const SERVER_NONCE: &str = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
/// RFC 7677's salt (base64).
pub const SALT: &str = "W22ZaJ0SNY7soEsUEjb6gQ==";
const PASSWORD: &str = "pencil";

struct Store {
    sha256: ScramCredential,
    sha512: ScramCredential,
}

impl CredentialStore for Store {
    fn scram(&self, user: &str, mech: Mechanism) -> Option<ScramCredential> {
        match (user, mech) {
            ("user", Mechanism::ScramSha256) => Some(self.sha256.clone()),
            ("user", Mechanism::ScramSha512) => Some(self.sha512.clone()),
            _ => None,
        }
    }
}

fn store() -> Arc<dyn CredentialStore> {
    // Hi() with 4096 iterations costs milliseconds: derive once per process.
    static STORE: std::sync::OnceLock<Arc<Store>> = std::sync::OnceLock::new();
    STORE
        .get_or_init(|| {
            let salt = STANDARD.decode(SALT).unwrap_or_default();
            Arc::new(Store {
                sha256: credential_from_password(
                    Mechanism::ScramSha256,
                    PASSWORD,
                    salt.clone(),
                    4096,
                ),
                sha512: credential_from_password(Mechanism::ScramSha512, PASSWORD, salt, 4096),
            })
        })
        .clone()
}

fn plain_users() -> Arc<BTreeMap<String, String>> {
    Arc::new(
        [("admin", "admin-secret"), ("alice", "alice-secret")]
            .into_iter()
            .map(|(u, p)| (u.to_owned(), p.to_owned()))
            .collect(),
    )
}

/// Splits an input into `(mechanism, first message, second message)`.
pub fn split(data: &[u8]) -> Option<(Mechanism, &[u8], &[u8])> {
    let (&m, rest) = data.split_first()?;
    let mech = match m % 3 {
        0 => Mechanism::Plain,
        1 => Mechanism::ScramSha256,
        _ => Mechanism::ScramSha512,
    };
    let (len, rest) = rest.split_at_checked(2)?;
    let len = usize::from(u16::from_be_bytes([len[0], len[1]])).min(rest.len());
    let (first, second) = rest.split_at(len);
    Some((mech, first, second))
}

/// Encodes an input of [`run`]'s layout (for seeds).
pub fn input(mech: Mechanism, first: &[u8], second: &[u8]) -> Vec<u8> {
    let m = match mech {
        Mechanism::Plain => 0,
        Mechanism::ScramSha256 => 1,
        Mechanism::ScramSha512 => 2,
    };
    let len = u16::try_from(first.len()).unwrap_or(u16::MAX);
    let mut out = vec![m];
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&first[..usize::from(len)]);
    out.extend_from_slice(second);
    out
}

fn check_error(e: &AuthError) {
    assert!(
        !e.client_message().contains("secret") && !e.client_message().contains(PASSWORD),
        "client message carries a password: {e:?}"
    );
}

/// Runs one input.
pub fn run(data: &[u8]) {
    let Some((mech, first, second)) = split(data) else {
        return;
    };
    let mut server = ServerExchange::with_nonce_source(
        mech,
        plain_users(),
        store(),
        Box::new(|| SERVER_NONCE.to_owned()),
    );
    let mut finished = false;
    for message in [first, second] {
        match server.step(message) {
            Ok(ServerStep::Challenge(_)) => {
                assert!(!finished, "a challenge after the end");
            }
            Ok(ServerStep::Done {
                authorization_id, ..
            }) => {
                assert!(!finished, "authenticated twice");
                let known = match mech {
                    Mechanism::Plain => ["admin", "alice"].contains(&authorization_id.as_str()),
                    _ => authorization_id == "user",
                };
                assert!(known, "authenticated unknown user {authorization_id:?}");
                finished = true;
            }
            Err(e) => {
                check_error(&e);
                assert!(
                    server.step(b"n,,n=user,r=x").is_err(),
                    "failed, then went on"
                );
                break;
            }
        }
    }
    let mut client = ClientExchange::with_nonce(mech, "user", PASSWORD, "rOprNGfwEbeRWgbNEkqO");
    client.first_message();
    for message in [first, second] {
        if let Err(e) = client.step(message) {
            check_error(&e);
            break;
        }
    }
}

/// Seeds: RFC 7677's exchange, a SCRAM-SHA-512 first message, PLAIN logins.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let rfc_first = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
    let rfc_final = b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    vec![
        (
            "made-scram-sha-256-rfc7677".into(),
            input(Mechanism::ScramSha256, rfc_first, rfc_final),
        ),
        (
            "made-scram-sha-512-first".into(),
            input(
                Mechanism::ScramSha512,
                b"n,a=user,n=user,r=abc,tokenauth=false",
                b"c=bixhPXVzZXIs,r=abc,p=AAAA",
            ),
        ),
        (
            "made-plain-alice".into(),
            input(Mechanism::Plain, b"\0alice\0alice-secret", b""),
        ),
        (
            "made-plain-authzid".into(),
            input(Mechanism::Plain, b"admin\0alice\0alice-secret", b"x"),
        ),
    ]
}
