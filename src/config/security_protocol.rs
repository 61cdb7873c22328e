//! Listener security protocols and `listener.security.protocol.map`, with KRaft's default for
//! controller listeners (`KafkaConfig.effectiveListenerSecurityProtocolMap`).

use std::fmt;

use super::error::{invalid, ConfigError};
use super::keys;
use super::values::Values;

/// A listener security protocol (`SecurityProtocol`); kraftwerk serves all four (SASL with the
/// PLAIN and SCRAM mechanisms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SecurityProtocol {
    /// Un-authenticated, non-encrypted.
    Plaintext,
    /// TLS.
    Ssl,
    /// SASL over plaintext.
    SaslPlaintext,
    /// SASL over TLS.
    SaslSsl,
}

impl SecurityProtocol {
    /// `SecurityProtocol.id`, as a registration's endpoints carry it: 0, 1, 2, 3.
    pub fn id(self) -> i16 {
        match self {
            Self::Plaintext => 0,
            Self::Ssl => 1,
            Self::SaslPlaintext => 2,
            Self::SaslSsl => 3,
        }
    }

    /// Kafka's name (`PLAINTEXT`, `SSL`, `SASL_PLAINTEXT`, `SASL_SSL`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Plaintext => "PLAINTEXT",
            Self::Ssl => "SSL",
            Self::SaslPlaintext => "SASL_PLAINTEXT",
            Self::SaslSsl => "SASL_SSL",
        }
    }

    /// Parses a name case-insensitively (`SecurityProtocol.forName`).
    pub fn from_name(name: &str) -> Option<Self> {
        [
            Self::Plaintext,
            Self::Ssl,
            Self::SaslPlaintext,
            Self::SaslSsl,
        ]
        .into_iter()
        .find(|p| p.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for SecurityProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Listener name (upper-cased) → protocol, in file order, later entries replacing earlier ones.
pub(super) type ProtocolMap = Vec<(String, SecurityProtocol)>;

/// `Csv.parseCsvMap` of `listener.security.protocol.map`: `NAME:PROTOCOL,...`, names
/// upper-cased. Errors are the reason.
pub(super) fn parse_protocol_map(text: &str) -> Result<ProtocolMap, String> {
    let mut map = ProtocolMap::new();
    if text.is_empty() {
        return Ok(map);
    }
    for entry in text.split(',').map(str::trim) {
        let (name, protocol) = entry
            .rsplit_once(':')
            .ok_or_else(|| format!("entry `{entry}` is not NAME:PROTOCOL"))?;
        let protocol = SecurityProtocol::from_name(protocol.trim())
            .ok_or_else(|| format!("Invalid security protocol `{}`", protocol.trim()))?;
        let name = name.trim().to_uppercase();
        map.retain(|(n, _)| *n != name);
        map.push((name, protocol));
    }
    Ok(map)
}

/// The protocol map in effect: the key's value, and when the file does not set it and nothing
/// uses SSL or SASL, every controller listener name mapped to PLAINTEXT (KRaft's default).
pub(super) fn effective_protocol_map(
    values: &Values,
    controller_listener_names: &[String],
) -> Result<ProtocolMap, ConfigError> {
    let key = keys::LISTENER_SECURITY_PROTOCOL_MAP;
    let text = values.text(key).unwrap_or("");
    let mut protocols = parse_protocol_map(text).map_err(|reason| invalid(key, text, reason))?;
    if values.written(key).is_none() {
        let secure = |name: &str| ["SSL", "SASL_SSL", "SASL_PLAINTEXT"].contains(&name);
        let mut listener_names = values
            .text(keys::LISTENERS)
            .unwrap_or("")
            .split(',')
            .filter_map(|l| l.split_once(':').map(|(n, _)| n.trim().to_uppercase()));
        let uses_secure = controller_listener_names.iter().any(|n| secure(n))
            || listener_names.any(|n| secure(&n));
        if !uses_secure {
            for name in controller_listener_names
                .iter()
                .filter(|n| *n != "PLAINTEXT")
            {
                protocols.retain(|(n, _)| n != name);
                protocols.push((name.clone(), SecurityProtocol::Plaintext));
            }
        }
    }
    Ok(protocols)
}
