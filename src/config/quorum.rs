//! The controller quorum keys: `controller.quorum.voters` (`id@host:port,...`) and
//! `controller.quorum.bootstrap.servers` (`host:port,...`), as `QuorumConfig` parses them, and
//! the `host:port` syntax they share with `kraftwerk.metrics.listener`.

use super::def::list_items;
use super::error::{invalid, ConfigError};
use super::keys;
use super::values::Values;

/// One entry of `controller.quorum.voters` (`id@host:port`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuorumVoter {
    /// The voter's `node.id`.
    pub id: i32,
    /// Host name or IP literal (never `0.0.0.0`).
    pub host: String,
    /// Port of its controller listener.
    pub port: u16,
}

/// A `host:port` pair (`controller.quorum.bootstrap.servers`, `kraftwerk.metrics.listener`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPort {
    /// Host name or IP literal without brackets.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

/// `Utils.getHost`/`getPort` (`HOST_PORT_PATTERN`): optional `scheme://`, optional brackets,
/// host chars `[0-9a-zA-Z-%._:]`, then `:port`.
pub(super) fn parse_host_port(text: &str) -> Option<HostPort> {
    let rest = match text.find("://") {
        Some(i)
            if text[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-%._".contains(c)) =>
        {
            &text[i + 3..]
        }
        _ => text,
    };
    let colon = rest.rfind(':')?;
    let (host, port) = (&rest[..colon], &rest[colon + 1..]);
    if port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let host = host.strip_prefix('[').unwrap_or(host);
    let host = host.strip_suffix(']').unwrap_or(host);
    if !host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-%._:".contains(c))
    {
        return None;
    }
    Some(HostPort {
        host: host.to_owned(),
        port: port.parse().ok()?,
    })
}

/// `QuorumConfig.parseVoterConnections`: `id@host:port` items, ids unique, host routable.
/// Errors are the reason, for [`ConfigError::Invalid`] of `controller.quorum.voters`.
pub(super) fn parse_voters(text: &str) -> Result<Vec<QuorumVoter>, String> {
    let mut voters: Vec<QuorumVoter> = Vec::new();
    for entry in list_items(text) {
        let form = "Each entry should be in the form `{id}@{host}:{port}`.";
        let (id, address) = entry
            .split_once('@')
            .filter(|(_, a)| !a.contains('@'))
            .ok_or_else(|| format!("entry `{entry}`: {form}"))?;
        let id: i32 = id
            .parse()
            .map_err(|_| format!("entry `{entry}`: voter id `{id}` is not an integer"))?;
        let HostPort { host, port } = parse_host_port(address)
            .filter(|a| !a.host.is_empty())
            .ok_or_else(|| format!("entry `{entry}`: {form}"))?;
        if host == "0.0.0.0" {
            return Err(format!("Host string ({host}) is not routeable"));
        }
        if voters.iter().any(|v| v.id == id) {
            return Err(format!("voter id {id} appears more than once"));
        }
        voters.push(QuorumVoter { id, host, port });
    }
    Ok(voters)
}

/// `QuorumConfig.parseBootstrapServers`: `host:port` items with a non-empty host.
pub(super) fn parse_bootstrap_servers(text: &str) -> Result<Vec<HostPort>, String> {
    list_items(text)
        .into_iter()
        .map(|entry| {
            parse_host_port(entry)
                .filter(|a| !a.host.is_empty())
                .ok_or_else(|| {
                    format!(
                        "entry `{entry}`: each entry should be in the form \"{{host}}:{{port}}\""
                    )
                })
        })
        .collect()
}

/// `kraftwerk.metrics.listener`: empty (no endpoint) or `host:port`.
pub(super) fn parse_metrics_listener(text: &str) -> Result<Option<HostPort>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    parse_host_port(text)
        .map(Some)
        .ok_or_else(|| "expected host:port".to_owned())
}

/// The static voter set, checked against the rest of the quorum configuration
/// (`KafkaConfig.validateValues` for a controller): voters or bootstrap servers are set, and a
/// static voter set contains `node_id`.
pub(super) fn static_voters(
    values: &Values,
    node_id: i32,
) -> Result<Vec<QuorumVoter>, ConfigError> {
    let text = values.text(keys::QUORUM_VOTERS).unwrap_or("");
    let voters = parse_voters(text).map_err(|reason| invalid(keys::QUORUM_VOTERS, text, reason))?;
    let bootstrap = values.text(keys::QUORUM_BOOTSTRAP_SERVERS).unwrap_or("");
    if voters.is_empty() && list_items(bootstrap).is_empty() {
        return Err(ConfigError::Inconsistent(format!(
            "If using {}, either {} must contain the set of bootstrap controllers or {} must \
             contain a parseable set of controllers.",
            keys::PROCESS_ROLES,
            keys::QUORUM_BOOTSTRAP_SERVERS,
            keys::QUORUM_VOTERS
        )));
    }
    if !voters.is_empty() && !voters.iter().any(|v| v.id == node_id) {
        let ids: Vec<String> = voters.iter().map(|v| v.id.to_string()).collect();
        return Err(ConfigError::Inconsistent(format!(
            "If {} contains the 'controller' role, the node id {node_id} must be included in \
             the set of voters {}={{{}}}",
            keys::PROCESS_ROLES,
            keys::QUORUM_VOTERS,
            ids.join(", ")
        )));
    }
    Ok(voters)
}
