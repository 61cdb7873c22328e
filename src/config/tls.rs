//! The `ssl.*` keys of an SSL controller listener (Kafka's `SslConfigs` and
//! `BrokerSecurityConfigs`), each also settable as `listener.name.<listener>.ssl.*`, which wins
//! over the plain key as in Kafka's `KafkaConfig.valuesWithPrefixOverride`. The table entries
//! are in [`super::keys`]; this module resolves the prefixed forms and turns the values into
//! [`TlsSettings`]. Key files are read when the node starts (`ListenerTls::build`), not here,
//! so `kraftwerk format` does not need them.

use std::path::PathBuf;

use kraftwerk_log::java_properties::JavaProperties;
use kraftwerk_server::ListenerTls;
use kraftwerk_tls::{
    ClientAuth, KeyStoreSource, SslPrincipalMapper, TlsSettings, TrustStoreSource,
};

use super::def::{list_items, Value};
use super::error::ConfigError;
use super::keys::{self, lookup};
use super::values::Values;

/// The `listener.name.<listener lowercase>.` prefix of Kafka's per-listener keys.
pub(super) fn listener_prefix(listener_name: &str) -> String {
    format!("listener.name.{}.", listener_name.to_lowercase())
}

/// Every `ssl.*` key of the table (the ones a listener prefix may carry).
pub(super) fn is_ssl_key(name: &str) -> bool {
    name.starts_with("ssl.") && lookup(name).is_some()
}

/// One listener's view of the keys: the prefixed value when the file sets it (validated like
/// the plain key), else the plain key's value or default.
struct ListenerValues<'a> {
    props: &'a JavaProperties,
    values: &'a Values<'a>,
    prefix: String,
}

impl<'a> ListenerValues<'a> {
    fn text(&self, key: &'static str) -> Result<Option<&'a str>, ConfigError> {
        let prefixed = format!("{}{key}", self.prefix);
        match self.props.get(&prefixed).map(str::trim) {
            Some(text) => {
                let def = lookup(key).expect("an ssl key of the table");
                match def.parse(text) {
                    Ok(Value::Text(t)) => Ok(Some(t)),
                    Ok(_) => unreachable!("ssl keys are STRING, LIST or PASSWORD"),
                    // The message names the key as written, prefix included.
                    Err(e) => Err(ConfigError::Inconsistent(
                        e.to_string().replacen(key, &prefixed, 1),
                    )),
                }
            }
            None => Ok(self.values.text(key)),
        }
    }

    /// Every prefixed form is validated, the ones kraftwerk only checks (and refuses when set
    /// to what it cannot honour) included.
    fn check_all(&self) -> Result<(), ConfigError> {
        for key in keys::CONFIG_DEF.iter().filter(|k| is_ssl_key(k.name)) {
            self.text(key.name)?;
        }
        Ok(())
    }

    /// A non-empty value.
    fn set(&self, key: &'static str) -> Result<Option<&'a str>, ConfigError> {
        Ok(self.text(key)?.filter(|t| !t.is_empty()))
    }
}

fn refused(listener: &str, reason: impl std::fmt::Display) -> ConfigError {
    ConfigError::Inconsistent(format!("listener {listener} uses SSL: {reason}"))
}

/// The TLS settings of `listener_name` (an SSL listener), from the plain and prefixed keys.
///
/// Errors: a prefixed value that fails its key's check, or a combination Kafka refuses (no key
/// store; a PKCS12/JKS store without its password; inline PEM with a file type; a password on a
/// PEM trust store).
pub(super) fn listener_tls(
    props: &JavaProperties,
    values: &Values,
    listener_name: &str,
) -> Result<ListenerTls, ConfigError> {
    let v = ListenerValues {
        props,
        values,
        prefix: listener_prefix(listener_name),
    };
    v.check_all()?;
    let store_type = |key: &'static str| -> Result<String, ConfigError> {
        Ok(v.text(key)?.unwrap_or("JKS").to_ascii_uppercase())
    };
    let key_password = v.set(keys::SSL_KEY_PASSWORD)?.map(str::to_owned);
    let keystore_type = store_type(keys::SSL_KEYSTORE_TYPE)?;
    let location = v.set(keys::SSL_KEYSTORE_LOCATION)?;
    let inline_key = v.set(keys::SSL_KEYSTORE_KEY)?;
    let inline_chain = v.set(keys::SSL_KEYSTORE_CERTIFICATE_CHAIN)?;
    let keystore = match (keystore_type.as_str(), location, inline_key, inline_chain) {
        ("PEM", Some(_), Some(_) | None, Some(_)) | ("PEM", Some(_), Some(_), None) => {
            return Err(refused(
                listener_name,
                format!(
                    "set either {} or {} with {}, not both",
                    keys::SSL_KEYSTORE_LOCATION,
                    keys::SSL_KEYSTORE_KEY,
                    keys::SSL_KEYSTORE_CERTIFICATE_CHAIN
                ),
            ))
        }
        ("PEM", None, Some(key), Some(chain)) => KeyStoreSource::PemInline {
            chain: chain.to_owned(),
            key: key.to_owned(),
            key_password,
        },
        ("PEM", None, Some(_), None) | ("PEM", None, None, Some(_)) => {
            return Err(refused(
                listener_name,
                format!(
                    "{} and {} go together",
                    keys::SSL_KEYSTORE_KEY,
                    keys::SSL_KEYSTORE_CERTIFICATE_CHAIN
                ),
            ))
        }
        ("PEM", Some(path), None, None) => KeyStoreSource::PemFile {
            path: PathBuf::from(path),
            key_password,
        },
        (_, _, Some(_), _) | (_, _, _, Some(_)) => {
            return Err(refused(
                listener_name,
                format!(
                    "{} and {} need {}=PEM (Kafka: SSL private key can be specified only for \
                     PEM key stores)",
                    keys::SSL_KEYSTORE_KEY,
                    keys::SSL_KEYSTORE_CERTIFICATE_CHAIN,
                    keys::SSL_KEYSTORE_TYPE
                ),
            ))
        }
        (_, Some(path), None, None) => {
            let password = v.set(keys::SSL_KEYSTORE_PASSWORD)?.ok_or_else(|| {
                refused(
                    listener_name,
                    format!(
                        "SSL key store is specified, but key store password is not specified \
                         ({})",
                        keys::SSL_KEYSTORE_PASSWORD
                    ),
                )
            })?;
            KeyStoreSource::Pkcs12 {
                path: PathBuf::from(path),
                password: password.to_owned(),
                key_password,
                named_jks: keystore_type == "JKS",
            }
        }
        (_, None, None, None) => {
            return Err(refused(
                listener_name,
                format!(
                    "a listener needs its key and certificate: set {} (with {}) or, with {}=PEM, \
                     {} and {} (also as {}ssl.*)",
                    keys::SSL_KEYSTORE_LOCATION,
                    keys::SSL_KEYSTORE_PASSWORD,
                    keys::SSL_KEYSTORE_TYPE,
                    keys::SSL_KEYSTORE_KEY,
                    keys::SSL_KEYSTORE_CERTIFICATE_CHAIN,
                    v.prefix
                ),
            ))
        }
    };
    let truststore_type = store_type(keys::SSL_TRUSTSTORE_TYPE)?;
    let trust_location = v.set(keys::SSL_TRUSTSTORE_LOCATION)?;
    let trust_password = v.set(keys::SSL_TRUSTSTORE_PASSWORD)?;
    let trust_inline = v.set(keys::SSL_TRUSTSTORE_CERTIFICATES)?;
    let truststore = match (truststore_type.as_str(), trust_location, trust_inline) {
        ("PEM", _, _) if trust_password.is_some() => {
            return Err(refused(
                listener_name,
                format!(
                    "SSL trust store password cannot be specified for PEM format ({})",
                    keys::SSL_TRUSTSTORE_PASSWORD
                ),
            ))
        }
        ("PEM", Some(_), Some(_)) => {
            return Err(refused(
                listener_name,
                format!(
                    "set either {} or {}, not both",
                    keys::SSL_TRUSTSTORE_LOCATION,
                    keys::SSL_TRUSTSTORE_CERTIFICATES
                ),
            ))
        }
        ("PEM", None, Some(certs)) => TrustStoreSource::PemInline {
            certificates: certs.to_owned(),
        },
        ("PEM", Some(path), None) => TrustStoreSource::PemFile {
            path: PathBuf::from(path),
        },
        (_, _, Some(_)) => {
            return Err(refused(
                listener_name,
                format!(
                    "{} needs {}=PEM",
                    keys::SSL_TRUSTSTORE_CERTIFICATES,
                    keys::SSL_TRUSTSTORE_TYPE
                ),
            ))
        }
        (_, Some(path), None) => TrustStoreSource::Pkcs12 {
            path: PathBuf::from(path),
            password: trust_password.unwrap_or("").to_owned(),
            named_jks: truststore_type == "JKS",
        },
        (_, None, None) => TrustStoreSource::System,
    };
    let client_auth = ClientAuth::parse(v.text(keys::SSL_CLIENT_AUTH)?.unwrap_or("none"))
        .expect("checked by the key's validator");
    let list = |key: &'static str| -> Result<Vec<String>, ConfigError> {
        Ok(list_items(v.text(key)?.unwrap_or(""))
            .into_iter()
            .map(str::to_owned)
            .collect())
    };
    let settings = TlsSettings {
        keystore: Some(keystore),
        truststore,
        client_auth,
        enabled_protocols: list(keys::SSL_ENABLED_PROTOCOLS)?,
        cipher_suites: list(keys::SSL_CIPHER_SUITES)?,
        endpoint_identification: !v
            .text(keys::SSL_ENDPOINT_IDENTIFICATION_ALGORITHM)?
            .unwrap_or("https")
            .is_empty(),
    };
    Ok(ListenerTls {
        settings,
        principal_mapping_rules: v
            .text(keys::SSL_PRINCIPAL_MAPPING_RULES)?
            .unwrap_or("DEFAULT")
            .to_owned(),
    })
}

// Validators of the table's ssl.* entries (single values; see `keys.rs`).

pub(super) fn store_type_syntax(text: &str) -> Result<(), String> {
    match text.to_ascii_uppercase().as_str() {
        "PKCS12" | "PEM" | "JKS" => Ok(()),
        _ => Err(
            "kraftwerk reads PKCS12 and PEM stores (and JKS-named files that are PKCS12, \
                  as keytool writes them since Java 9)"
                .into(),
        ),
    }
}

pub(super) fn client_auth_syntax(text: &str) -> Result<(), String> {
    ClientAuth::parse(text)
        .map(drop)
        .ok_or_else(|| "must be one of required, requested, none".into())
}

pub(super) fn endpoint_identification_syntax(text: &str) -> Result<(), String> {
    if text.is_empty() || text.eq_ignore_ascii_case("https") {
        Ok(())
    } else {
        Err("kraftwerk knows `https` (check the peer's name) and empty (do not)".into())
    }
}

pub(super) fn ssl_protocol_syntax(text: &str) -> Result<(), String> {
    // The SSLContext protocol: with ssl.enabled.protocols naming the versions, any of these
    // gives the same connections; older ones Java 17 disables.
    match text {
        "TLS" | "TLSv1.2" | "TLSv1.3" => Ok(()),
        _ => Err(
            "kraftwerk speaks TLS, TLSv1.2 and TLSv1.3 (rustls); older protocols are \
                  disabled as in Java 17"
                .into(),
        ),
    }
}

pub(super) fn principal_rules_syntax(text: &str) -> Result<(), String> {
    SslPrincipalMapper::from_rules(text)
        .map(drop)
        .map_err(|e| e.to_string())
}

pub(super) fn refuse_provider(_: &str) -> Result<(), String> {
    Err("kraftwerk's TLS is rustls with the ring provider; a JCA provider cannot be chosen".into())
}

pub(super) fn refuse_secure_random(_: &str) -> Result<(), String> {
    Err(
        "kraftwerk's TLS draws randomness from the ring provider (the OS generator); a Java \
         SecureRandom implementation cannot be chosen"
            .into(),
    )
}

pub(super) fn refuse_engine_factory(_: &str) -> Result<(), String> {
    Err("kraftwerk's TLS is rustls; a Java SslEngineFactory cannot be plugged in".into())
}

pub(super) fn key_manager_syntax(text: &str) -> Result<(), String> {
    if text == "SunX509" {
        Ok(())
    } else {
        Err(
            "kraftwerk presents the key store's one key and chain, as the default SunX509 \
             key manager does; no other key manager can be chosen"
                .into(),
        )
    }
}

pub(super) fn trust_manager_syntax(text: &str) -> Result<(), String> {
    if text == "PKIX" {
        Ok(())
    } else {
        Err(
            "kraftwerk verifies chains with webpki, as the default PKIX trust manager does; \
             no other trust manager can be chosen"
                .into(),
        )
    }
}
