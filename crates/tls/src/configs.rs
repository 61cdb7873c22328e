//! rustls configurations from [`TlsSettings`]: the listener's [`server_config`] and the
//! [`client_config`] a controller dials its peers with.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::settings::{ClientAuth, TlsProtocol, TlsSettings};
use super::stores::{load_key_material, load_trusted, TlsError};

/// The protocol versions of `ssl.enabled.protocols`. TLSv1 and TLSv1.1 are dropped (Java 17
/// disables them in `jdk.tls.disabledAlgorithms`; rustls has neither); nothing else left, or a
/// name Java does not know, is an error.
pub fn protocols(settings: &TlsSettings) -> Result<Vec<TlsProtocol>, TlsError> {
    let mut out = Vec::new();
    for name in &settings.enabled_protocols {
        match name.trim() {
            "TLSv1.3" => out.push(TlsProtocol::Tls13),
            "TLSv1.2" => out.push(TlsProtocol::Tls12),
            "TLSv1" | "TLSv1.1" | "SSLv3" | "SSLv2Hello" => {}
            other => {
                return Err(TlsError::Unsupported {
                    key: "ssl.enabled.protocols",
                    value: other.to_string(),
                    reason: "not a TLS protocol name (TLSv1.2, TLSv1.3)".into(),
                })
            }
        }
    }
    out.sort();
    out.dedup();
    if out.is_empty() {
        return Err(TlsError::Unsupported {
            key: "ssl.enabled.protocols",
            value: settings.enabled_protocols.join(","),
            reason: "kraftwerk speaks TLSv1.2 and TLSv1.3 only (Java 17 disables older versions)"
                .into(),
        });
    }
    Ok(out)
}

/// The IANA name of a rustls suite (`TLS13_AES_128_GCM_SHA256` is IANA's
/// `TLS_AES_128_GCM_SHA256`, the name Java uses).
fn iana_name(suite: rustls::SupportedCipherSuite) -> String {
    let debug = format!("{:?}", suite.suite());
    match debug.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => debug,
    }
}

/// The crypto provider (ring) restricted to `ssl.cipher.suites` when set.
///
/// Errors: a suite name rustls does not implement (the message lists those it does).
pub fn provider(settings: &TlsSettings) -> Result<Arc<CryptoProvider>, TlsError> {
    let mut provider = rustls::crypto::ring::default_provider();
    if !settings.cipher_suites.is_empty() {
        let available = provider.cipher_suites.clone();
        let mut chosen = Vec::new();
        for name in settings
            .cipher_suites
            .iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
        {
            match available.iter().find(|s| iana_name(**s) == name) {
                Some(s) => chosen.push(*s),
                None => {
                    return Err(TlsError::Unsupported {
                        key: "ssl.cipher.suites",
                        value: name.to_string(),
                        reason: format!(
                            "not a suite kraftwerk implements; it has {}",
                            available
                                .iter()
                                .map(|s| iana_name(*s))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    })
                }
            }
        }
        provider.cipher_suites = chosen;
    }
    Ok(Arc::new(provider))
}

fn versions(protocols: &[TlsProtocol]) -> Vec<&'static rustls::SupportedProtocolVersion> {
    protocols
        .iter()
        .map(|p| match p {
            TlsProtocol::Tls12 => &rustls::version::TLS12,
            TlsProtocol::Tls13 => &rustls::version::TLS13,
        })
        .collect()
}

fn roots(settings: &TlsSettings) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    let (_added, _ignored) = roots.add_parsable_certificates(load_trusted(&settings.truststore)?);
    if roots.is_empty() {
        return Err(TlsError::NoCertificates {
            what: format!("{:?} (no usable CA certificate)", settings.truststore),
        });
    }
    Ok(roots)
}

/// The listener's configuration: its key store, and with `ssl.client.auth` requested or
/// required a client-certificate verifier over the trust store.
///
/// Errors: no key store, unreadable material, unsupported protocols or suites, a key that does
/// not match its certificate.
pub fn server_config(settings: &TlsSettings) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let keystore = settings.keystore.as_ref().ok_or(TlsError::NoKey {
        what: "the listener (ssl.keystore.location or ssl.keystore.key is required)".into(),
    })?;
    let material = load_key_material(keystore)?;
    let provider = provider(settings)?;
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions(&protocols(settings)?))?;
    let builder = match settings.client_auth {
        ClientAuth::None => builder.with_no_client_auth(),
        auth => {
            let verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots(settings)?), provider);
            let verifier = if auth == ClientAuth::Requested {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            builder.with_client_cert_verifier(
                verifier
                    .build()
                    .map_err(|e| TlsError::Verifier(e.to_string()))?,
            )
        }
    };
    Ok(Arc::new(
        builder.with_single_cert(material.chain, material.key)?,
    ))
}

/// The configuration for connections this node makes: the trust store verifies the server
/// (its name too unless `ssl.endpoint.identification.algorithm` is empty), and the key store,
/// when set, answers a server that asks for a client certificate.
///
/// Errors: unreadable material, unsupported protocols or suites.
pub fn client_config(settings: &TlsSettings) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let provider = provider(settings)?;
    let verifier =
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots(settings)?), provider.clone())
            .build()
            .map_err(|e| TlsError::Verifier(e.to_string()))?;
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions(&protocols(settings)?))?;
    let builder = if settings.endpoint_identification {
        builder.with_webpki_verifier(verifier)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(ChainOnly(verifier)))
    };
    let config = match &settings.keystore {
        Some(ks) => {
            let m = load_key_material(ks)?;
            builder.with_client_auth_cert(m.chain, m.key)?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// `ssl.endpoint.identification.algorithm=` (empty): the chain is verified as usual, the name
/// is not. webpki checks the chain before the name, so a name mismatch is the only error
/// passed over.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
