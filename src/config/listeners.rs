//! `listeners` and `advertised.listeners` (`NAME://host:port,...`) of a controller, with the
//! checks `KafkaConfig` makes for `process.roles=controller`. Every security protocol is served
//! (the SASL side of a SASL listener is `sasl.rs`).

use std::net::{Ipv4Addr, Ipv6Addr};

use super::def::list_items;
use super::error::{invalid, ConfigError};
use super::keys;
use super::security_protocol::{effective_protocol_map, ProtocolMap, SecurityProtocol};
use super::values::Values;

/// One entry of `listeners` / `advertised.listeners` (`NAME://host:port`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// Listener name, upper-cased (`ListenerName.normalised`).
    pub listener_name: String,
    /// Host name or IP literal without brackets; empty means all interfaces (bind) or the
    /// canonical host name (advertise), as in Kafka.
    pub host: String,
    /// TCP port; 0 means an ephemeral port (tests).
    pub port: u16,
    /// From `listener.security.protocol.map`.
    pub security_protocol: SecurityProtocol,
}

/// `listeners` and the controller listeners as advertised, checked against
/// `controller.listener.names`, the protocol map and `advertised.listeners`
/// (`KafkaConfig.validateValues` for a controller): every listener is a controller listener,
/// every controller listener name is a listener, and none advertises `0.0.0.0`. Returns
/// (listeners, effective advertised controller listeners).
pub(super) fn controller_listeners(
    values: &Values,
    controller_listener_names: &[String],
) -> Result<(Vec<Endpoint>, Vec<Endpoint>), ConfigError> {
    let protocols = effective_protocol_map(values, controller_listener_names)?;
    let listeners_text = values.text(keys::LISTENERS).unwrap_or("");
    let listeners = parse_endpoints(keys::LISTENERS, listeners_text, &protocols, true)?;
    // What a dynamic controller tells others to dial (its voter entry, ControllerRegistration);
    // a static voter is dialled at its controller.quorum.voters entry whatever it advertises.
    let advertised =
        advertised_controller_listeners(values, controller_listener_names, &protocols, &listeners)?;
    if listeners
        .iter()
        .any(|e| !controller_listener_names.contains(&e.listener_name))
    {
        return Err(ConfigError::Inconsistent(format!(
            "The {} config must only contain KRaft controller listeners from {} when {}=controller \
             ({}={listeners_text}, {}={})",
            keys::LISTENERS,
            keys::CONTROLLER_LISTENER_NAMES,
            keys::PROCESS_ROLES,
            keys::LISTENERS,
            keys::CONTROLLER_LISTENER_NAMES,
            controller_listener_names.join(",")
        )));
    }
    let in_listeners = |name: &String| listeners.iter().any(|e| e.listener_name == *name);
    if let Some(missing) = controller_listener_names.iter().find(|n| !in_listeners(n)) {
        return Err(ConfigError::Inconsistent(format!(
            "{} must only contain values appearing in the '{}' configuration when running the \
             KRaft controller role: `{missing}` is not in {}={listeners_text}",
            keys::CONTROLLER_LISTENER_NAMES,
            keys::LISTENERS,
            keys::LISTENERS
        )));
    }
    if let Some(e) = advertised.iter().find(|e| e.host == "0.0.0.0") {
        return Err(invalid(
            keys::ADVERTISED_LISTENERS,
            values
                .written(keys::ADVERTISED_LISTENERS)
                .unwrap_or(listeners_text),
            format!(
                "listener {} cannot advertise the nonroutable meta-address 0.0.0.0; use a \
                 routable IP address",
                e.listener_name
            ),
        ));
    }
    Ok((listeners, advertised))
}

/// The controller listeners as they would be advertised
/// (`KafkaConfig.effectiveAdvertisedControllerListeners`): from `advertised.listeners` when it
/// names them, else from `listeners`; in `controller.listener.names` order.
pub(super) fn advertised_controller_listeners(
    values: &Values,
    controller_listener_names: &[String],
    protocols: &ProtocolMap,
    listeners: &[Endpoint],
) -> Result<Vec<Endpoint>, ConfigError> {
    let advertised = match values.text(keys::ADVERTISED_LISTENERS) {
        Some(text) => parse_endpoints(keys::ADVERTISED_LISTENERS, text, protocols, false)?,
        None => Vec::new(),
    };
    Ok(controller_listener_names
        .iter()
        .filter_map(|name| {
            advertised
                .iter()
                .find(|e| e.listener_name == *name)
                .or_else(|| listeners.iter().find(|e| e.listener_name == *name))
                .cloned()
        })
        .collect())
}

/// `SocketServerConfigs.listenerListToEndPoints` plus `CoreUtils` duplicate checks.
fn parse_endpoints(
    key: &'static str,
    text: &str,
    protocols: &ProtocolMap,
    require_distinct_ports: bool,
) -> Result<Vec<Endpoint>, ConfigError> {
    let mut endpoints: Vec<Endpoint> = Vec::new();
    for entry in list_items(text) {
        let (listener_name, host, port) = parse_endpoint(entry).ok_or_else(|| {
            invalid(
                key,
                text,
                format!("Unable to parse `{entry}` to a broker endpoint (NAME://host:port)"),
            )
        })?;
        let security_protocol = protocols
            .iter()
            .find(|(n, _)| *n == listener_name)
            .map(|(_, p)| *p)
            .ok_or_else(|| {
                invalid(
                    key,
                    text,
                    format!(
                        "No security protocol defined for listener {listener_name} (add it to {})",
                        keys::LISTENER_SECURITY_PROTOCOL_MAP
                    ),
                )
            })?;
        if endpoints.iter().any(|e| e.listener_name == listener_name) {
            return Err(invalid(
                key,
                text,
                "Each listener must have a different name",
            ));
        }
        endpoints.push(Endpoint {
            listener_name,
            host,
            port,
            security_protocol,
        });
    }
    if require_distinct_ports {
        if let Some(port) = shared_port(&endpoints) {
            return Err(invalid(
                key,
                text,
                format!(
                    "Each listener must have a different port unless exactly one listener has an \
                     IPv4 address and the other IPv6 address (port {port})"
                ),
            ));
        }
    }
    Ok(endpoints)
}

/// `NAME://host:port` → (upper-cased name, host without brackets, port).
fn parse_endpoint(entry: &str) -> Option<(String, String, u16)> {
    let (name, address) = entry.split_once("://")?;
    let (host, port) = address.rsplit_once(':')?;
    let host = host.strip_prefix('[').unwrap_or(host);
    let host = host.strip_suffix(']').unwrap_or(host);
    let host_ok = host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-%._:".contains(c));
    let port: u16 = port.parse().ok()?;
    host_ok.then(|| (name.to_uppercase(), host.to_owned(), port))
}

/// A non-zero port used by more than one listener, unless by exactly one IPv4 and one IPv6
/// literal (`CoreUtils.validateOneIsIpv4AndOtherIpv6`).
fn shared_port(endpoints: &[Endpoint]) -> Option<u16> {
    endpoints
        .iter()
        .filter(|e| e.port != 0)
        .find(|endpoint| {
            let same: Vec<&Endpoint> = endpoints
                .iter()
                .filter(|e| e.port == endpoint.port)
                .collect();
            match same.as_slice() {
                [_] => false,
                [a, b] => {
                    let v4 = |h: &str| h.parse::<Ipv4Addr>().is_ok();
                    let v6 = |h: &str| h.parse::<Ipv6Addr>().is_ok();
                    !((v4(&a.host) && v6(&b.host)) || (v6(&a.host) && v4(&b.host)))
                }
                _ => true,
            }
        })
        .map(|e| e.port)
}
