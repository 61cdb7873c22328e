//! kraftwerk-tls: TLS for the controller listener and the connections a controller makes (issue 11), from
//! Kafka's `ssl.*` settings, with rustls.
//!
//! Follows Kafka's `DefaultSslEngineFactory` (`clients/src/main/java/org/apache/kafka/common/
//! security/ssl/DefaultSslEngineFactory.java`) for what each setting means:
//! - key store: `ssl.keystore.type` PKCS12, PEM, or JKS (Kafka's default name: a file named JKS
//!   that is really PKCS12 — what `keytool` writes since Java 9 — is read like Java's
//!   `keystore.type.compat` does; a true JKS file is refused with the `keytool` command that
//!   converts it), `ssl.keystore.location` / `ssl.keystore.password`, `ssl.key.password`; for PEM
//!   either a file holding the key and the chain or `ssl.keystore.key` +
//!   `ssl.keystore.certificate.chain` values, the key PKCS#8 (encrypted with `ssl.key.password`
//!   or not);
//! - trust store: `ssl.truststore.type` / `location` / `password` / `ssl.truststore.certificates`
//!   (PEM), else the system's CA certificates (Java: the JDK's `cacerts`);
//! - `ssl.client.auth` none / requested / required (mutual TLS);
//! - `ssl.enabled.protocols` (TLSv1.2, TLSv1.3; TLSv1 and TLSv1.1 are dropped as Java 17's
//!   `jdk.tls.disabledAlgorithms` drops them), `ssl.cipher.suites` (IANA names, as Java's);
//! - `ssl.endpoint.identification.algorithm` `https` (default: the peer's certificate must name
//!   the host dialled) or empty (chain checked, name not).
//!
//! [`settings`] holds the parsed settings, [`stores`] reads key and trust material, [`configs`]
//! builds the rustls server and client configurations, [`principal`] names a client by its
//! certificate (`ssl.principal.mapping.rules`).

pub mod configs;
pub mod principal;
pub mod settings;
pub mod stores;

#[cfg(test)]
mod tests;

pub use configs::{client_config, server_config};
pub use principal::{subject_rfc2253, PrincipalError, SslPrincipalMapper, ANONYMOUS};
pub use settings::{ClientAuth, KeyStoreSource, TlsProtocol, TlsSettings, TrustStoreSource};
pub use stores::{KeyMaterial, TlsError};
