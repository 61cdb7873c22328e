//! The socket server's connection keys (Kafka's `SocketServerConfigs`): `max.connections`
//! (node-wide, and per listener as `listener.name.<l>.max.connections`, Kafka's
//! `ConnectionQuotas.maxListenerConnections`), `max.connections.per.ip`,
//! `max.connections.per.ip.overrides`, `connections.max.idle.ms`, and the checks
//! `KafkaConfig.validateValues` makes across them.

use std::collections::BTreeMap;

use super::error::{invalid, ConfigError};
use kraftwerk_log::java_properties::JavaProperties;

use super::keys;
use super::tls::listener_prefix;
use super::values::Values;

/// The connection settings of a controller listener.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionSettings {
    /// `max.connections` (default `i32::MAX`, ≥ 0).
    pub max_connections: i32,
    /// `max.connections.per.ip` (default `i32::MAX`, ≥ 0; 0 only with overrides).
    pub max_connections_per_ip: i32,
    /// `max.connections.per.ip.overrides` (default empty): `(host or address, max)`.
    pub max_connections_per_ip_overrides: Vec<(String, i32)>,
    /// `connections.max.idle.ms` (ms, default 600000; negative: never).
    pub connections_max_idle_ms: i64,
    /// `listener.name.<l>.max.connections` (≥ 0) of each controller listener that sets it,
    /// by listener name: a cap on that listener on top of `max.connections`.
    pub listener_max_connections: BTreeMap<String, i32>,
}

/// `host:count,...` as Kafka's `CoreUtils.parseCsvMap` reads it (split at the last `:`, so IPv6
/// addresses work), each count an INT (`KafkaConfig.maxConnectionsPerIpOverrides`).
pub(crate) fn parse_per_ip_overrides(text: &str) -> Result<Vec<(String, i32)>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|entry| {
            let entry = entry.trim();
            let (host, count) = entry
                .rsplit_once(':')
                .ok_or_else(|| format!("`{entry}` is not `host:count`"))?;
            let host = host.trim();
            if host.is_empty() {
                return Err(format!("`{entry}` names no host"));
            }
            let count = count
                .trim()
                .parse::<i32>()
                .map_err(|_| format!("`{count}` in `{entry}` is not an INT"))?;
            Ok((host.to_owned(), count))
        })
        .collect()
}

/// `listener.name.<l>.max.connections` of each of `listener_names` that sets it, an INT ≥ 0
/// like `max.connections` itself.
fn listener_max_connections(
    props: &JavaProperties,
    listener_names: &[String],
) -> Result<BTreeMap<String, i32>, ConfigError> {
    let mut caps = BTreeMap::new();
    for name in listener_names {
        let key = format!("{}{}", listener_prefix(name), keys::MAX_CONNECTIONS);
        let Some(text) = props.get(&key).map(str::trim) else {
            continue;
        };
        match text.parse::<i32>() {
            Ok(n) if n >= 0 => {
                caps.insert(name.clone(), n);
            }
            _ => {
                return Err(ConfigError::Inconsistent(format!(
                    "Invalid value `{text}` for configuration `{key}`: must be an INT of at \
                     least 0"
                )))
            }
        }
    }
    Ok(caps)
}

/// Reads the connection keys (the per-listener caps of `listener_names`) and checks them
/// together.
pub(crate) fn connection_settings(
    props: &JavaProperties,
    values: &Values,
    listener_names: &[String],
) -> Result<ConnectionSettings, ConfigError> {
    let text = values
        .text(keys::MAX_CONNECTIONS_PER_IP_OVERRIDES)
        .unwrap_or("");
    let overrides = parse_per_ip_overrides(text).map_err(|reason| {
        invalid(
            keys::MAX_CONNECTIONS_PER_IP_OVERRIDES,
            text,
            format!(
                "Error parsing configuration property '{}': {reason}",
                keys::MAX_CONNECTIONS_PER_IP_OVERRIDES
            ),
        )
    })?;
    let per_ip = values.int(keys::MAX_CONNECTIONS_PER_IP);
    if per_ip == 0 && overrides.is_empty() {
        return Err(ConfigError::Inconsistent(format!(
            "{} can be set to zero only if {} property is set.",
            keys::MAX_CONNECTIONS_PER_IP,
            keys::MAX_CONNECTIONS_PER_IP_OVERRIDES
        )));
    }
    Ok(ConnectionSettings {
        max_connections: values.int(keys::MAX_CONNECTIONS),
        max_connections_per_ip: per_ip,
        max_connections_per_ip_overrides: overrides,
        connections_max_idle_ms: values.long(keys::CONNECTIONS_MAX_IDLE_MS),
        listener_max_connections: listener_max_connections(props, listener_names)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_parse_like_kafka() {
        assert_eq!(parse_per_ip_overrides(" "), Ok(vec![]));
        assert_eq!(
            parse_per_ip_overrides("hostName1:100, 10.0.0.1 : 0,::1:5"),
            Ok(vec![
                ("hostName1".to_owned(), 100),
                ("10.0.0.1".to_owned(), 0),
                ("::1".to_owned(), 5)
            ])
        );
        assert!(parse_per_ip_overrides("host").is_err());
        assert!(parse_per_ip_overrides(":5").is_err());
        assert!(parse_per_ip_overrides("host:many").is_err());
    }
}
