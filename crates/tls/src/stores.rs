//! Reading key stores and trust stores: PKCS12 (with `p12-keystore`, which reads what Java's
//! `keytool` writes), PEM (PKCS#8 keys, plain or encrypted, and X.509 certificates), and the
//! system's CA certificates.

use std::path::{Path, PathBuf};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use thiserror::Error;

use super::settings::{KeyStoreSource, TrustStoreSource};

/// The magic number that starts a JKS file (`sun.security.provider.JavaKeyStore`).
const JKS_MAGIC: [u8; 4] = [0xFE, 0xED, 0xFE, 0xED];

/// Why TLS material could not be loaded or a configuration built. Messages name the setting
/// and the file, never a password or key.
#[derive(Debug, Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("cannot read {what} {path}: {source}")]
    Io {
        /// Which setting named it.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A true JKS file (Java's legacy format, which no maintained Rust library reads).
    #[error(
        "{what} {path} is a JKS key store, which kraftwerk cannot read: convert it with \
         `keytool -importkeystore -srckeystore {path} -destkeystore {path}.p12 -deststoretype PKCS12` \
         and set {type_key}=PKCS12 with the new file"
    )]
    Jks {
        /// Which setting named it.
        what: &'static str,
        /// The file.
        path: String,
        /// The `*.type` key to change.
        type_key: &'static str,
    },
    /// A PKCS12 file could not be opened (wrong password, unsupported encryption, damage).
    #[error(
        "cannot open the PKCS12 {what} {path} (wrong password or unsupported format): {reason}"
    )]
    Pkcs12 {
        /// Which setting named it.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The library's reason.
        reason: String,
    },
    /// PEM text could not be used.
    #[error("invalid PEM in {what}: {reason}")]
    Pem {
        /// Which setting (or file) it came from.
        what: String,
        /// What was wrong.
        reason: String,
    },
    /// A key store without a private key and certificate chain.
    #[error("{what} has no private key with a certificate chain")]
    NoKey {
        /// Which setting or file.
        what: String,
    },
    /// A trust store without certificates.
    #[error("{what} has no certificates")]
    NoCertificates {
        /// Which setting or file.
        what: String,
    },
    /// A setting kraftwerk cannot honour.
    #[error("{key}={value}: {reason}")]
    Unsupported {
        /// The Kafka key.
        key: &'static str,
        /// Its value.
        value: String,
        /// Why, and what is supported.
        reason: String,
    },
    /// rustls refused the assembled configuration (e.g. the key does not match the leaf).
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
    /// The trust store's certificates could not be used for verification.
    #[error("trust store: {0}")]
    Verifier(String),
}

/// A private key and its certificate chain, leaf first.
#[derive(Debug)]
pub struct KeyMaterial {
    /// Leaf first, then intermediates (and the root, when the store has it).
    pub chain: Vec<CertificateDer<'static>>,
    /// The leaf's key.
    pub key: PrivateKeyDer<'static>,
}

fn read(what: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Io {
        what,
        path: path.to_path_buf(),
        source,
    })
}

fn refuse_jks(
    data: &[u8],
    what: &'static str,
    path: &Path,
    type_key: &'static str,
) -> Result<(), TlsError> {
    if data.starts_with(&JKS_MAGIC) {
        return Err(TlsError::Jks {
            what,
            path: path.display().to_string(),
            type_key,
        });
    }
    Ok(())
}

fn open_pkcs12(
    data: &[u8],
    password: &str,
    what: &'static str,
    path: &Path,
) -> Result<p12_keystore::KeyStore, TlsError> {
    p12_keystore::KeyStore::from_pkcs12(data, password, p12_keystore::Pkcs12ImportPolicy::Relaxed)
        .map_err(|e| TlsError::Pkcs12 {
            what,
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
}

/// Loads the key and chain of `source`.
///
/// Errors: unreadable file, JKS, wrong password, no key with a chain, bad PEM.
pub fn load_key_material(source: &KeyStoreSource) -> Result<KeyMaterial, TlsError> {
    match source {
        KeyStoreSource::Pkcs12 {
            path,
            password,
            key_password,
            named_jks: _,
        } => {
            let what = "ssl.keystore.location";
            let data = read(what, path)?;
            refuse_jks(&data, what, path, "ssl.keystore.type")?;
            // PKCS12 stores written by keytool use one password for the store and its keys;
            // a separate ssl.key.password is tried when the store password does not open it.
            let store = match open_pkcs12(&data, password, what, path) {
                Ok(s) => s,
                Err(e) => match key_password {
                    Some(k) if k != password => open_pkcs12(&data, k, what, path)?,
                    _ => return Err(e),
                },
            };
            let (_, chain) = store.private_key_chain().ok_or_else(|| TlsError::NoKey {
                what: path.display().to_string(),
            })?;
            if chain.certs().is_empty() {
                return Err(TlsError::NoKey {
                    what: path.display().to_string(),
                });
            }
            Ok(KeyMaterial {
                chain: chain
                    .certs()
                    .iter()
                    .map(|c| CertificateDer::from(c.as_der().to_vec()))
                    .collect(),
                key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(chain.key().as_der().to_vec())),
            })
        }
        KeyStoreSource::PemFile { path, key_password } => {
            let text = read("ssl.keystore.location", path)?;
            pem_key_material(
                &text,
                &text,
                key_password.as_deref(),
                &path.display().to_string(),
            )
        }
        KeyStoreSource::PemInline {
            chain,
            key,
            key_password,
        } => pem_key_material(
            chain.as_bytes(),
            key.as_bytes(),
            key_password.as_deref(),
            "ssl.keystore.certificate.chain / ssl.keystore.key",
        ),
    }
}

/// Kafka's PEM key store (`DefaultSslEngineFactory.PemStore`): certificates from `chain`, the
/// PKCS#8 key from `key` — `ENCRYPTED PRIVATE KEY` decrypted with `key_password`, or
/// `PRIVATE KEY` when no password is set.
fn pem_key_material(
    chain: &[u8],
    key: &[u8],
    key_password: Option<&str>,
    what: &str,
) -> Result<KeyMaterial, TlsError> {
    let certs = pem_certificates(chain, what)?;
    if certs.is_empty() {
        return Err(TlsError::NoKey { what: what.into() });
    }
    let pem_err = |reason: String| TlsError::Pem {
        what: what.into(),
        reason,
    };
    let key = match (pem_block(key, "ENCRYPTED PRIVATE KEY"), key_password) {
        (Some(block), Some(password)) => {
            let (_, der) = pkcs8::der::pem::decode_vec(block.as_bytes())
                .map_err(|e| pem_err(format!("encrypted key: {e}")))?;
            let info = pkcs8::EncryptedPrivateKeyInfoRef::try_from(der.as_slice())
                .map_err(|e| pem_err(format!("encrypted key: {e}")))?;
            let doc = info
                .decrypt(password)
                .map_err(|_| pem_err("the key does not decrypt with ssl.key.password".into()))?;
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(doc.as_bytes().to_vec()))
        }
        (Some(_), None) => {
            return Err(pem_err(
                "the key is encrypted but ssl.key.password is not set".into(),
            ))
        }
        (None, _) => match PrivatePkcs8KeyDer::from_pem_slice(key) {
            Ok(k) => PrivateKeyDer::Pkcs8(k),
            Err(_) => return Err(pem_err(
                "no PKCS#8 key (`-----BEGIN PRIVATE KEY-----` or `-----BEGIN ENCRYPTED PRIVATE \
                     KEY-----`; Kafka's PEM key store takes PKCS#8 only)"
                    .into(),
            )),
        },
    };
    Ok(KeyMaterial { chain: certs, key })
}

/// The first `-----BEGIN <label>-----` … `-----END <label>-----` block of `text`.
fn pem_block(text: &[u8], label: &str) -> Option<String> {
    let text = std::str::from_utf8(text).ok()?;
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = text.find(&begin)?;
    let stop = text[start..].find(&end)? + start + end.len();
    Some(text[start..stop].to_string())
}

fn pem_certificates(text: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    CertificateDer::pem_slice_iter(text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Pem {
            what: what.into(),
            reason: e.to_string(),
        })
}

/// Loads the trusted certificates of `source`.
///
/// Errors: unreadable file, JKS, wrong password, no certificates.
pub fn load_trusted(source: &TrustStoreSource) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = match source {
        TrustStoreSource::Pkcs12 { path, password, .. } => {
            let what = "ssl.truststore.location";
            let data = read(what, path)?;
            refuse_jks(&data, what, path, "ssl.truststore.type")?;
            let store = open_pkcs12(&data, password, what, path)?;
            store
                .entries()
                .flat_map(|(_, entry)| match entry {
                    p12_keystore::KeyStoreEntry::Certificate(c) => vec![c.as_der().to_vec()],
                    p12_keystore::KeyStoreEntry::PrivateKeyChain(k) => {
                        k.certs().iter().map(|c| c.as_der().to_vec()).collect()
                    }
                    p12_keystore::KeyStoreEntry::Secret(_) => Vec::new(),
                })
                .map(CertificateDer::from)
                .collect()
        }
        TrustStoreSource::PemFile { path } => {
            let text = read("ssl.truststore.location", path)?;
            pem_certificates(&text, &path.display().to_string())?
        }
        TrustStoreSource::PemInline { certificates } => {
            pem_certificates(certificates.as_bytes(), "ssl.truststore.certificates")?
        }
        TrustStoreSource::System => {
            let found = rustls_native_certs::load_native_certs();
            found.certs
        }
    };
    if certs.is_empty() {
        return Err(TlsError::NoCertificates {
            what: format!("{source:?}"),
        });
    }
    Ok(certs)
}
