//! SASL on the listener and in the peer client over loopback: PLAIN and SCRAM-SHA-512 logins
//! name the principal the handler sees, a wrong password gets Kafka's error and no request
//! through, an unauthenticated request closes the connection, sessions with a lifetime are
//! renewed by the client, and a listener without SASL answers SASL requests
//! ILLEGAL_SASL_STATE as Java's controller does.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kraftwerk_sasl::{credential_from_password, CredentialStore, Mechanism, ScramCredential};

use super::peer::client;
use super::*;
use crate::net::sasl::{ClientSasl, ListenerSasl, ServerSasl};

pub(super) struct Store;

impl CredentialStore for Store {
    fn scram(&self, user: &str, mech: Mechanism) -> Option<ScramCredential> {
        (user == "alice" && mech == Mechanism::ScramSha512)
            .then(|| credential_from_password(mech, "alice-secret", b"NaCl".to_vec(), 4096))
    }
}

/// The test table plus the SASL apis (the served table lists them on every listener).
pub(super) fn sasl_table() -> Arc<ApiTable> {
    let mut apis: Vec<(ApiKey, i16, i16)> = server_table()
        .ranges()
        .iter()
        .map(|r| (r.api_key, r.min_version, r.max_version))
        .collect();
    apis.extend([
        (ApiKey::SaslHandshake, 0, 1),
        (ApiKey::SaslAuthenticate, 0, 2),
    ]);
    Arc::new(ApiTable::new(apis).unwrap())
}

/// PLAIN (`controller`/`controller-secret`) and SCRAM-SHA-512 (`alice`/`alice-secret`), a
/// 10 ms failed-authentication delay, `sasl.server.max.receive.size` 524288.
pub(super) fn server_sasl(reauth_ms: u64) -> ServerSasl {
    let settings = ListenerSasl {
        enabled_mechanisms: vec![Mechanism::Plain, Mechanism::ScramSha512],
        plain_users: BTreeMap::from([("controller".to_owned(), "controller-secret".to_owned())]),
        reauth_ms,
        failed_authentication_delay_ms: 10,
        max_receive_size: 524_288,
    };
    ServerSasl::new(settings, Arc::new(Store))
}

async fn sasl_listener(reauth_ms: u64) -> (Listener, Arc<TestHandler>) {
    let config = ListenerConfig {
        sasl: Some(server_sasl(reauth_ms)),
        ..ListenerConfig::default()
    };
    let handler = Arc::new(TestHandler::default());
    let listener = Listener::bind(
        "127.0.0.1:0".parse().unwrap(),
        config,
        sasl_table(),
        features(),
        handler.clone(),
    )
    .await
    .unwrap();
    (listener, handler)
}

pub(super) fn sasl_client(
    addr: std::net::SocketAddr,
    mechanism: Mechanism,
    username: &str,
    password: &str,
) -> PeerClient {
    let sasl = ClientSasl {
        mechanism,
        username: username.into(),
        password: password.into(),
    };
    client(addr, |cfg| cfg.sasl = Some(sasl))
}

#[tokio::test]
async fn plain_and_scram_clients_are_served_as_their_user() {
    init_logs();
    let (listener, handler) = sasl_listener(0).await;
    let plain = sasl_client(
        listener.local_addr(),
        Mechanism::Plain,
        "controller",
        "controller-secret",
    );
    let (_, response) = plain.send(ApiKey::Vote, |_| vote(3)).await.unwrap();
    assert_eq!(vote_epoch(&response), 3);
    let scram = sasl_client(
        listener.local_addr(),
        Mechanism::ScramSha512,
        "alice",
        "alice-secret",
    );
    scram.send(ApiKey::Vote, |_| vote(4)).await.unwrap();
    let seen = handler.seen.lock().unwrap();
    let principals: Vec<&str> = seen.iter().map(|c| &*c.principal).collect();
    assert_eq!(principals, ["User:controller", "User:alice"]);
}

#[tokio::test]
async fn wrong_credentials_and_disabled_mechanisms_are_refused() {
    init_logs();
    let (listener, handler) = sasl_listener(0).await;
    for (mechanism, user, password, expected) in [
        (
            Mechanism::Plain,
            "controller",
            "guess",
            "Authentication failed: Invalid username or password",
        ),
        (
            Mechanism::ScramSha512,
            "alice",
            "guess",
            "invalid credentials with SASL mechanism SCRAM-SHA-512",
        ),
        (
            Mechanism::ScramSha256,
            "alice",
            "alice-secret",
            "(it enables PLAIN,SCRAM-SHA-512)",
        ),
    ] {
        let peer = sasl_client(listener.local_addr(), mechanism, user, password);
        let err = peer.send(ApiKey::Vote, |_| vote(1)).await.unwrap_err();
        match &err {
            PeerError::Authentication { reason } => {
                assert!(reason.contains(expected), "{mechanism:?}: {reason}");
                assert!(!reason.contains("guess"), "no password in errors: {reason}");
            }
            other => panic!("{mechanism:?}: {other:?}"),
        }
    }
    assert!(handler.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_request_before_authentication_closes_the_connection() {
    init_logs();
    let (listener, handler) = sasl_listener(0).await;
    let mut raw = RawClient::connect(listener.local_addr()).await;
    raw.send(ApiKey::Vote, 0, 1, vote(2)).await;
    raw.expect_closed().await;
    // A plain Raft client (no SASL configured) gets nowhere either.
    let peer = client(listener.local_addr(), |_| {});
    assert!(peer.send(ApiKey::Vote, |_| vote(2)).await.is_err());
    assert!(handler.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_client_renews_a_session_before_it_expires() {
    init_logs();
    let (listener, handler) = sasl_listener(300).await;
    let peer = sasl_client(
        listener.local_addr(),
        Mechanism::ScramSha512,
        "alice",
        "alice-secret",
    );
    // Three session lifetimes of requests: each is served, none hits an expired session.
    for epoch in 0..12 {
        let (_, response) = peer.send(ApiKey::Vote, move |_| vote(epoch)).await.unwrap();
        assert_eq!(vote_epoch(&response), epoch);
        tokio::time::sleep(Duration::from_millis(75)).await;
    }
    assert_eq!(handler.seen.lock().unwrap().len(), 12);
}

#[tokio::test]
async fn an_expired_session_is_closed_on_its_next_request() {
    init_logs();
    let (listener, handler) = sasl_listener(200).await;
    let mut raw = RawClient::connect(listener.local_addr()).await;
    let mut handshake = SaslHandshakeRequest::default();
    handshake.mechanism = StrBytes::from_static_str("PLAIN");
    raw.send(
        ApiKey::SaslHandshake,
        1,
        1,
        RequestKind::SaslHandshake(handshake),
    )
    .await;
    raw.recv(ApiKey::SaslHandshake, 1).await;
    let mut auth = SaslAuthenticateRequest::default();
    auth.auth_bytes = Bytes::from_static(b"\0controller\0controller-secret");
    raw.send(
        ApiKey::SaslAuthenticate,
        2,
        2,
        RequestKind::SaslAuthenticate(auth),
    )
    .await;
    let (_, ResponseKind::SaslAuthenticate(answer)) = raw.recv(ApiKey::SaslAuthenticate, 2).await
    else {
        panic!()
    };
    assert_eq!((answer.error_code, answer.session_lifetime_ms), (0, 200));
    raw.send(ApiKey::Vote, 0, 3, vote(1)).await;
    raw.recv(ApiKey::Vote, 0).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    raw.send(ApiKey::Vote, 0, 4, vote(2)).await;
    raw.expect_closed().await;
    assert_eq!(handler.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_listener_without_sasl_answers_illegal_sasl_state() {
    init_logs();
    let handler = Arc::new(TestHandler::default());
    let listener = Listener::bind(
        "127.0.0.1:0".parse().unwrap(),
        ListenerConfig::default(),
        sasl_table(),
        features(),
        handler.clone(),
    )
    .await
    .unwrap();
    let mut raw = RawClient::connect(listener.local_addr()).await;
    let mut handshake = SaslHandshakeRequest::default();
    handshake.mechanism = StrBytes::from_static_str("PLAIN");
    raw.send(
        ApiKey::SaslHandshake,
        1,
        1,
        RequestKind::SaslHandshake(handshake),
    )
    .await;
    let (_, ResponseKind::SaslHandshake(answer)) = raw.recv(ApiKey::SaslHandshake, 1).await else {
        panic!()
    };
    assert_eq!(answer.error_code, 34, "ILLEGAL_SASL_STATE");
    // The connection stays usable, as on Java's controller.
    raw.send(ApiKey::Vote, 0, 2, vote(1)).await;
    raw.recv(ApiKey::Vote, 0).await;
}
