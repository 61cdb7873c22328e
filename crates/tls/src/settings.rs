//! The TLS settings of one listener or client, as Kafka's `ssl.*` keys give them (already
//! split into typed values; `src/config` maps the keys, with `listener.name.<l>.` prefixes).

use std::path::PathBuf;

/// Where the private key and its certificate chain come from (`ssl.keystore.*`).
#[derive(Clone, PartialEq, Eq)]
pub enum KeyStoreSource {
    /// A PKCS12 file (`ssl.keystore.type=PKCS12`, or `JKS` naming a PKCS12 file):
    /// `ssl.keystore.location`, `ssl.keystore.password`, and `ssl.key.password` when the key
    /// has its own password.
    Pkcs12 {
        /// `ssl.keystore.location`.
        path: PathBuf,
        /// `ssl.keystore.password`.
        password: String,
        /// `ssl.key.password`.
        key_password: Option<String>,
        /// True when the type said JKS (only changes the error for a true JKS file).
        named_jks: bool,
    },
    /// A PEM file with the private key (PKCS#8) and the chain, leaf first
    /// (`ssl.keystore.type=PEM` with `ssl.keystore.location`).
    PemFile {
        /// `ssl.keystore.location`.
        path: PathBuf,
        /// `ssl.key.password`, for an encrypted key.
        key_password: Option<String>,
    },
    /// PEM text from the configuration (`ssl.keystore.key`, `ssl.keystore.certificate.chain`).
    PemInline {
        /// `ssl.keystore.certificate.chain`: certificates, leaf first.
        chain: String,
        /// `ssl.keystore.key`: the PKCS#8 key.
        key: String,
        /// `ssl.key.password`, for an encrypted key.
        key_password: Option<String>,
    },
}

impl std::fmt::Debug for KeyStoreSource {
    // Passwords and inline keys never reach a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Pkcs12 { path, .. } => write!(f, "Pkcs12({})", path.display()),
            Self::PemFile { path, .. } => write!(f, "PemFile({})", path.display()),
            Self::PemInline { .. } => write!(f, "PemInline([hidden])"),
        }
    }
}

/// Where the trusted certificates come from (`ssl.truststore.*`).
#[derive(Clone, PartialEq, Eq)]
pub enum TrustStoreSource {
    /// A PKCS12 file of trusted certificates (`ssl.truststore.type=PKCS12`, or `JKS` naming a
    /// PKCS12 file).
    Pkcs12 {
        /// `ssl.truststore.location`.
        path: PathBuf,
        /// `ssl.truststore.password` (Java reads a PKCS12 trust store without one only when
        /// its certificates are not encrypted; keytool encrypts them).
        password: String,
        /// True when the type said JKS.
        named_jks: bool,
    },
    /// A PEM file of certificates (`ssl.truststore.type=PEM`, `ssl.truststore.location`).
    PemFile {
        /// `ssl.truststore.location`.
        path: PathBuf,
    },
    /// PEM text (`ssl.truststore.certificates`).
    PemInline {
        /// The certificates.
        certificates: String,
    },
    /// No trust store set: the operating system's CA certificates (Java: `cacerts`).
    System,
}

impl std::fmt::Debug for TrustStoreSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Pkcs12 { path, .. } => write!(f, "Pkcs12({})", path.display()),
            Self::PemFile { path } => write!(f, "PemFile({})", path.display()),
            Self::PemInline { .. } => write!(f, "PemInline"),
            Self::System => write!(f, "System"),
        }
    }
}

/// `ssl.client.auth` (Kafka `SslClientAuth`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClientAuth {
    /// `none` (default): no client certificate asked for.
    #[default]
    None,
    /// `requested`: asked for, not required; a client without one is `ANONYMOUS`.
    Requested,
    /// `required`: a client without a trusted certificate fails the handshake.
    Required,
}

impl ClientAuth {
    /// Parses Kafka's value (case-insensitive, as `SslClientAuth.forConfig`).
    pub fn parse(value: &str) -> Option<ClientAuth> {
        match value.trim().to_ascii_lowercase().as_str() {
            "none" | "" => Some(ClientAuth::None),
            "requested" => Some(ClientAuth::Requested),
            "required" => Some(ClientAuth::Required),
            _ => None,
        }
    }
}

/// A protocol version of `ssl.enabled.protocols` that rustls implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsProtocol {
    /// `TLSv1.2`.
    Tls12,
    /// `TLSv1.3`.
    Tls13,
}

/// Everything a TLS endpoint needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsSettings {
    /// Own key and certificate chain: required for a listener, and for a client whose server
    /// asks for a certificate.
    pub keystore: Option<KeyStoreSource>,
    /// Certificates trusted to sign the peer's.
    pub truststore: TrustStoreSource,
    /// `ssl.client.auth` (listeners only).
    pub client_auth: ClientAuth,
    /// `ssl.enabled.protocols` (default `TLSv1.2,TLSv1.3`), raw names.
    pub enabled_protocols: Vec<String>,
    /// `ssl.cipher.suites` (default empty: the library's defaults), IANA names.
    pub cipher_suites: Vec<String>,
    /// `ssl.endpoint.identification.algorithm`: `https` (default) checks the peer's name.
    pub endpoint_identification: bool,
}

impl TlsSettings {
    /// Kafka's defaults with the given trust store and no key store.
    pub fn new(truststore: TrustStoreSource) -> Self {
        TlsSettings {
            keystore: None,
            truststore,
            client_auth: ClientAuth::None,
            enabled_protocols: vec!["TLSv1.2".into(), "TLSv1.3".into()],
            cipher_suites: Vec::new(),
            endpoint_identification: true,
        }
    }
}
