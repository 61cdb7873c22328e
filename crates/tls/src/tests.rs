//! Handshakes in memory between the configurations built from the fixtures (keytool/openssl
//! output, `fixtures/make-fixtures.sh`): what an operator notices is whether a broker or peer
//! can connect, so every test drives a real TLS handshake.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{ClientConnection, ServerConnection};

use super::*;

const PASSWORD: &str = "test-password";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/fixtures")
        .join(name)
}

fn text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

fn p12_keystore(who: &str) -> KeyStoreSource {
    KeyStoreSource::Pkcs12 {
        path: fixture(&format!("{who}.p12")),
        password: PASSWORD.into(),
        key_password: Some(PASSWORD.into()),
        named_jks: false,
    }
}

fn p12_truststore() -> TrustStoreSource {
    TrustStoreSource::Pkcs12 {
        path: fixture("truststore.p12"),
        password: PASSWORD.into(),
        named_jks: false,
    }
}

fn server_settings(auth: ClientAuth) -> TlsSettings {
    let mut s = TlsSettings::new(p12_truststore());
    s.keystore = Some(p12_keystore("server"));
    s.client_auth = auth;
    s
}

fn client_settings(keystore: Option<KeyStoreSource>) -> TlsSettings {
    let mut s = TlsSettings::new(TrustStoreSource::PemFile {
        path: fixture("ca.crt"),
    });
    s.keystore = keystore;
    s
}

/// Runs the handshake to completion in memory; on success returns the subject of the client
/// certificate the server saw (DER of the leaf), if any.
fn handshake(
    client: Arc<rustls::ClientConfig>,
    server: Arc<rustls::ServerConfig>,
    name: &str,
) -> Result<Option<Vec<u8>>, rustls::Error> {
    let mut c = ClientConnection::new(client, ServerName::try_from(name.to_string()).unwrap())?;
    let mut s = ServerConnection::new(server)?;
    for _ in 0..20 {
        let mut buf = Vec::new();
        while c.wants_write() {
            c.write_tls(&mut buf).unwrap();
        }
        if !buf.is_empty() {
            s.read_tls(&mut buf.as_slice()).unwrap();
            s.process_new_packets()?;
        }
        let mut back = Vec::new();
        while s.wants_write() {
            s.write_tls(&mut back).unwrap();
        }
        if !back.is_empty() {
            c.read_tls(&mut back.as_slice()).unwrap();
            c.process_new_packets()?;
        }
        if !c.is_handshaking() && !s.is_handshaking() {
            return Ok(s
                .peer_certificates()
                .and_then(|certs| certs.first())
                .map(|leaf| leaf.as_ref().to_vec()));
        }
    }
    panic!("handshake did not finish");
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn pkcs12_key_store_and_trust_store_made_by_keytool_handshake() {
    let server = server_config(&server_settings(ClientAuth::None)).unwrap();
    let client = client_config(&client_settings(None)).unwrap();
    assert_eq!(handshake(client, server, "localhost").unwrap(), None);
}

#[test]
fn pem_key_stores_from_a_file_and_inline_with_encrypted_and_plain_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let both = tmp.path().join("server.pem");
    std::fs::write(
        &both,
        text("server-key-encrypted.pem") + &text("server-chain.pem"),
    )
    .unwrap();
    for keystore in [
        KeyStoreSource::PemFile {
            path: both,
            key_password: Some(PASSWORD.into()),
        },
        KeyStoreSource::PemInline {
            chain: text("server-chain.pem"),
            key: text("server-key.pem"),
            key_password: None,
        },
        KeyStoreSource::PemInline {
            chain: text("server-chain.pem"),
            key: text("server-key-encrypted.pem"),
            key_password: Some(PASSWORD.into()),
        },
    ] {
        let mut s = server_settings(ClientAuth::None);
        s.keystore = Some(keystore.clone());
        let server = server_config(&s).unwrap_or_else(|e| panic!("{keystore:?}: {e}"));
        let client = client_config(&client_settings(None)).unwrap();
        handshake(client, server, "127.0.0.1").unwrap();
    }
}

#[test]
fn an_encrypted_pem_key_needs_the_right_password() {
    let mut s = server_settings(ClientAuth::None);
    s.keystore = Some(KeyStoreSource::PemInline {
        chain: text("server-chain.pem"),
        key: text("server-key-encrypted.pem"),
        key_password: Some("wrong".into()),
    });
    let e = server_config(&s).unwrap_err().to_string();
    assert!(e.contains("does not decrypt with ssl.key.password"), "{e}");
    s.keystore = Some(KeyStoreSource::PemInline {
        chain: text("server-chain.pem"),
        key: text("server-key-encrypted.pem"),
        key_password: None,
    });
    let e = server_config(&s).unwrap_err().to_string();
    assert!(e.contains("ssl.key.password is not set"), "{e}");
}

#[test]
fn a_true_jks_store_is_refused_with_the_keytool_command_and_a_wrong_password_is_named() {
    let mut s = server_settings(ClientAuth::Required);
    s.truststore = TrustStoreSource::Pkcs12 {
        path: fixture("truststore.jks"),
        password: PASSWORD.into(),
        named_jks: true,
    };
    let e = server_config(&s).unwrap_err().to_string();
    assert!(e.contains("is a JKS key store"), "{e}");
    assert!(e.contains("keytool -importkeystore"), "{e}");
    assert!(e.contains("ssl.truststore.type=PKCS12"), "{e}");

    let mut s = server_settings(ClientAuth::None);
    s.keystore = Some(KeyStoreSource::Pkcs12 {
        path: fixture("server.p12"),
        password: "nope".into(),
        key_password: None,
        named_jks: false,
    });
    let e = server_config(&s).unwrap_err().to_string();
    assert!(e.contains("wrong password"), "{e}");
    assert!(!e.contains("nope"), "a password in an error: {e}");
}

#[test]
fn mutual_tls_required_refuses_a_client_without_a_certificate_and_sees_the_subject() {
    let server = server_config(&server_settings(ClientAuth::Required)).unwrap();
    let anonymous = client_config(&client_settings(None)).unwrap();
    assert!(handshake(anonymous, server.clone(), "localhost").is_err());
    let with_cert = client_config(&client_settings(Some(p12_keystore("client")))).unwrap();
    let leaf = handshake(with_cert, server, "localhost").unwrap().unwrap();
    assert!(
        contains(&leaf, b"client"),
        "the server saw the client's certificate"
    );
}

#[test]
fn mutual_tls_requested_lets_an_anonymous_client_in() {
    let server = server_config(&server_settings(ClientAuth::Requested)).unwrap();
    let anonymous = client_config(&client_settings(None)).unwrap();
    assert_eq!(handshake(anonymous, server, "localhost").unwrap(), None);
}

#[test]
fn endpoint_identification_checks_the_name_unless_disabled() {
    let server = server_config(&server_settings(ClientAuth::None)).unwrap();
    let strict = client_config(&client_settings(None)).unwrap();
    let e = handshake(strict, server.clone(), "controller-9.example").unwrap_err();
    assert!(format!("{e}").contains("not valid for"), "{e}");
    let mut lax = client_settings(None);
    lax.endpoint_identification = false;
    handshake(
        client_config(&lax).unwrap(),
        server.clone(),
        "controller-9.example",
    )
    .unwrap();
    // The chain is still checked: a trust store without our CA fails either way.
    let mut untrusted = lax.clone();
    untrusted.truststore = TrustStoreSource::PemInline {
        certificates: text("client.crt"),
    };
    assert!(handshake(client_config(&untrusted).unwrap(), server, "localhost").is_err());
}

#[test]
fn protocols_and_cipher_suites_follow_kafka_names() {
    let mut s = server_settings(ClientAuth::None);
    s.enabled_protocols = vec!["TLSv1.1".into()];
    let e = server_config(&s).unwrap_err().to_string();
    assert!(e.contains("TLSv1.2 and TLSv1.3 only"), "{e}");
    s.enabled_protocols = vec!["TLSv1.4".into()];
    assert!(server_config(&s).is_err());

    s.enabled_protocols = vec!["TLSv1.3".into(), "TLSv1.1".into()];
    let server = server_config(&s).unwrap();
    let mut old_client = client_settings(None);
    old_client.enabled_protocols = vec!["TLSv1.2".into()];
    assert!(handshake(
        client_config(&old_client).unwrap(),
        server.clone(),
        "localhost"
    )
    .is_err());
    handshake(
        client_config(&client_settings(None)).unwrap(),
        server,
        "localhost",
    )
    .unwrap();

    let mut s = server_settings(ClientAuth::None);
    s.cipher_suites = vec!["TLS_RSA_WITH_RC4_128_MD5".into()];
    let e = server_config(&s).unwrap_err().to_string();
    assert!(
        e.contains("TLS_AES_128_GCM_SHA256"),
        "lists what it has: {e}"
    );
    s.cipher_suites = vec!["TLS_AES_256_GCM_SHA384".into()];
    let server = server_config(&s).unwrap();
    let mut c = client_settings(None);
    c.cipher_suites = vec!["TLS_AES_128_GCM_SHA256".into()];
    assert!(handshake(client_config(&c).unwrap(), server.clone(), "localhost").is_err());
    c.cipher_suites = vec!["TLS_AES_256_GCM_SHA384".into()];
    handshake(client_config(&c).unwrap(), server, "localhost").unwrap();
}

#[test]
fn a_listener_without_a_key_store_is_refused() {
    let mut s = server_settings(ClientAuth::None);
    s.keystore = None;
    let e = server_config(&s).unwrap_err().to_string();
    assert!(e.contains("ssl.keystore.location"), "{e}");
}

#[test]
fn client_certificate_subject_prints_like_x500_principal() {
    let pem = std::fs::read(fixture("client.crt")).unwrap();
    use rustls::pki_types::pem::PemObject;
    let der = rustls::pki_types::CertificateDer::from_pem_slice(&pem).unwrap();
    // `openssl x509 -nameopt RFC2253` and Java's X500Principal.getName() agree here.
    assert_eq!(
        subject_rfc2253(&der).unwrap(),
        "CN=client,OU=test,O=kraftwerk"
    );
    let mapper = SslPrincipalMapper::from_rules("RULE:^CN=([^,]+),.*$/$1/U,DEFAULT").unwrap();
    assert_eq!(mapper.principal(&der).unwrap(), "User:CLIENT");
}
