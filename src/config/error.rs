//! Why `server.properties` was rejected.

use std::path::PathBuf;

use kraftwerk_log::java_properties::PropertiesSyntaxError;
use thiserror::Error;

/// Why `server.properties` was rejected. Messages name the key and the bad value.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}", path = path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid Java properties syntax.
    #[error("{path}: {source}", path = path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// Where.
        #[source]
        source: PropertiesSyntaxError,
    },
    /// A required key is absent.
    #[error("Missing required configuration `{key}` which has no default value.")]
    Missing {
        /// The key.
        key: &'static str,
    },
    /// A value does not parse or is out of range (Kafka's `ConfigException(name, value, msg)`).
    #[error("Invalid value `{value}` for configuration `{key}`: {reason}")]
    Invalid {
        /// The key.
        key: &'static str,
        /// The value as written (trimmed).
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// Values that are fine alone but inconsistent together; the message names the keys.
    #[error("{0}")]
    Inconsistent(String),
}

/// [`ConfigError::Invalid`] for `key`'s value `value`; the value of a secret key (Kafka's
/// PASSWORD type) is shown as `[hidden]`, as `ConfigException` does for `Password` values.
pub(crate) fn invalid(key: &'static str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key,
        value: if is_secret(key) {
            "[hidden]".to_owned()
        } else {
            value.to_owned()
        },
        reason: reason.into(),
    }
}

/// Keys of Kafka's PASSWORD type (SslConfigs, SaslConfigs, DelegationTokenManagerConfigs), also
/// under a `listener.name.<l>.` prefix.
pub(crate) fn is_secret(key: &str) -> bool {
    key.ends_with(".password")
        || key.ends_with("ssl.keystore.key")
        || key.ends_with("ssl.keystore.certificate.chain")
        || key.ends_with("ssl.truststore.certificates")
        || key.ends_with("sasl.jaas.config")
        || key.ends_with("delegation.token.secret.key")
        || key.ends_with("delegation.token.master.key")
}
