//! TLS on the listener and in the peer client, over loopback with the `kraftwerk-tls` fixtures
//! (a CA, server and client key pairs signed by it, SAN 127.0.0.1): mutual TLS lets a client
//! with a trusted certificate in under its mapped principal and shuts out one without, and a
//! plaintext client gets no Kafka answer.

use std::path::PathBuf;
use std::sync::Arc;

use kraftwerk_tls::{ClientAuth, KeyStoreSource, TlsSettings, TrustStoreSource};

use super::peer::client_table;
use super::*;
use crate::server::ListenerTls;

const PASSWORD: &str = "test-password";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tls/src/fixtures")
        .join(name)
}

pub(super) fn settings(keystore: Option<&str>, client_auth: ClientAuth) -> TlsSettings {
    let mut s = TlsSettings::new(TrustStoreSource::Pkcs12 {
        path: fixture("truststore.p12"),
        password: PASSWORD.into(),
        named_jks: false,
    });
    s.keystore = keystore.map(|who| KeyStoreSource::Pkcs12 {
        path: fixture(&format!("{who}.p12")),
        password: PASSWORD.into(),
        key_password: Some(PASSWORD.into()),
        named_jks: false,
    });
    s.client_auth = client_auth;
    s
}

/// The listener side of the fixtures: the server key pair, certificate subjects mapped to
/// their CN.
pub(super) fn server_tls(client_auth: ClientAuth) -> crate::net::ServerTls {
    ListenerTls {
        settings: settings(Some("server"), client_auth),
        principal_mapping_rules: "RULE:^CN=([^,]+),.*$/$1/U,DEFAULT".into(),
    }
    .server()
    .unwrap()
}

async fn tls_listener(client_auth: ClientAuth) -> (Listener, Arc<TestHandler>) {
    let config = ListenerConfig {
        tls: Some(server_tls(client_auth)),
        ..ListenerConfig::default()
    };
    start(config, "127.0.0.1:0".parse().unwrap()).await
}

fn tls_client(addr: std::net::SocketAddr, keystore: Option<&str>) -> PeerClient {
    let config = kraftwerk_tls::client_config(&settings(keystore, ClientAuth::None)).unwrap();
    let mut cfg = PeerClientConfig::raft(7, client_table());
    cfg.tls = Some(ClientTls { config });
    cfg.request_timeout_ms = 2_000;
    PeerClient::new(
        PeerNode {
            node_id: 1,
            host: addr.ip().to_string(),
            port: addr.port(),
        },
        cfg,
    )
}

#[tokio::test]
async fn mutual_tls_admits_a_trusted_client_under_its_mapped_principal() {
    init_logs();
    let (listener, handler) = tls_listener(ClientAuth::Required).await;
    let peer = tls_client(listener.local_addr(), Some("client"));
    let (_, response) = peer.send(ApiKey::Vote, |_| vote(5)).await.unwrap();
    assert_eq!(vote_epoch(&response), 5);
    let seen = handler.seen.lock().unwrap();
    assert_eq!(&*seen[0].principal, "User:CLIENT");
}

#[tokio::test]
async fn mutual_tls_refuses_a_client_without_a_certificate_and_plaintext() {
    init_logs();
    let (listener, handler) = tls_listener(ClientAuth::Required).await;
    let peer = tls_client(listener.local_addr(), None);
    let err = peer.send(ApiKey::Vote, |_| vote(5)).await.unwrap_err();
    assert!(
        matches!(err, PeerError::Io(_) | PeerError::Disconnected { .. }),
        "{err:?}"
    );
    // A plaintext Kafka client: the bytes are not TLS, no Kafka frame comes back.
    let mut raw = RawClient::connect(listener.local_addr()).await;
    raw.send(
        ApiKey::ApiVersions,
        0,
        1,
        RequestKind::ApiVersions(ApiVersionsRequest::default()),
    )
    .await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(WAIT, raw.stream.read_to_end(&mut answer)).await;
    assert!(
        answer.len() < 8 || answer[4..8] != 1i32.to_be_bytes(),
        "a plaintext client got a Kafka answer: {answer:?}"
    );
    assert!(handler.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn requested_client_auth_lets_an_anonymous_client_in_and_plaintext_is_anonymous() {
    init_logs();
    let (listener, handler) = tls_listener(ClientAuth::Requested).await;
    let peer = tls_client(listener.local_addr(), None);
    peer.send(ApiKey::Vote, |_| vote(1)).await.unwrap();
    assert_eq!(
        &*handler.seen.lock().unwrap()[0].principal,
        "User:ANONYMOUS"
    );

    let (plain, handler) = start_default().await;
    let peer = super::peer::client(plain.local_addr(), |_| {});
    peer.send(ApiKey::Vote, |_| vote(1)).await.unwrap();
    assert_eq!(
        &*handler.seen.lock().unwrap()[0].principal,
        "User:ANONYMOUS"
    );
}

/// `listener.security.protocol.map=CONTROLLER:SSL,CONTROLLER2:PLAINTEXT`: the SSL listener
/// admits only a TLS client with a trusted certificate, the PLAINTEXT one a plaintext client;
/// each request carries its listener's name and principal.
#[tokio::test]
async fn an_ssl_and_a_plaintext_listener_each_speak_their_own_protocol() {
    init_logs();
    let server = ListenerTls {
        settings: settings(Some("server"), ClientAuth::Required),
        principal_mapping_rules: "RULE:^CN=([^,]+),.*$/$1/U,DEFAULT".into(),
    }
    .server()
    .unwrap();
    let ssl = ListenerConfig {
        tls: Some(server),
        ..super::multi::named("CONTROLLER")
    };
    let plain = super::multi::named("CONTROLLER2");
    let quotas = crate::net::ConnectionQuotas::new(crate::net::ConnectionLimits::default());
    let (listeners, handler) = super::multi::start_several(vec![ssl, plain], quotas).await;
    let (ssl_addr, plain_addr) = (listeners[0].local_addr(), listeners[1].local_addr());

    let peer = tls_client(ssl_addr, Some("client"));
    let (_, response) = peer.send(ApiKey::Vote, |_| vote(5)).await.unwrap();
    assert_eq!(vote_epoch(&response), 5);
    let peer = super::peer::client(plain_addr, |_| {});
    let (_, response) = peer.send(ApiKey::Vote, |_| vote(6)).await.unwrap();
    assert_eq!(vote_epoch(&response), 6);
    // TLS on the PLAINTEXT listener, plaintext on the SSL one: no Kafka answer.
    let wrong = tls_client(plain_addr, Some("client"));
    assert!(wrong.send(ApiKey::Vote, |_| vote(7)).await.is_err());
    let mut raw = RawClient::connect(ssl_addr).await;
    raw.send(ApiKey::Vote, 1, 8, vote(8)).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(WAIT, raw.stream.read_to_end(&mut answer)).await;
    assert!(
        answer.len() < 8 || answer[4..8] != 8i32.to_be_bytes(),
        "a plaintext client got a Kafka answer on the SSL listener: {answer:?}"
    );

    let seen: Vec<(String, String)> = handler
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|ctx| (ctx.listener_name.to_string(), ctx.principal.to_string()))
        .collect();
    assert_eq!(
        seen,
        [
            ("CONTROLLER".to_owned(), "User:CLIENT".to_owned()),
            ("CONTROLLER2".to_owned(), "User:ANONYMOUS".to_owned()),
        ]
    );
    for listener in listeners {
        listener.shutdown(Duration::from_secs(1)).await;
    }
}
