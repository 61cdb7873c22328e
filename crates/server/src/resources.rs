//! Process resources a controller needs before it serves: the open-files limit, and the
//! connection limits of the controller listener derived from it and from `server.properties`.
//!
//! Like the JVM (HotSpot raises `RLIMIT_NOFILE`'s soft limit to the hard limit at start,
//! `-XX:+MaxFDLimit`, on by default), the node raises its soft open-files limit to the hard
//! limit. Connections then get at most what is left after [`FDS_KEPT_FOR_STORAGE`]: a flood of
//! connections must be refused at accept, never turn into a failed `open` in the log and a node
//! that stops on a storage error.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, ToSocketAddrs};

use tracing::{info, warn};

use crate::net::quotas::canonical;
use crate::net::ConnectionLimits;

/// File descriptors kept out of reach of connections: the metadata log's segments, snapshots,
/// RocksDB's files, `quorum-state`, the peers' and metrics' sockets.
pub const FDS_KEPT_FOR_STORAGE: u64 = 1_024;

/// Slots reserved per other voter for its connections (one Raft client, plus a reconnect whose
/// predecessor is still closing, plus tools on the same host).
pub const PEER_SLOTS_PER_VOTER: usize = 4;

/// The open-files limit after start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFilesLimit {
    /// The soft limit before it was raised.
    pub before: u64,
    /// The soft limit now.
    pub soft: u64,
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and logs it; `None` (with a warning) when
/// the limit cannot be read.
pub fn raise_open_files_limit() -> Option<OpenFilesLimit> {
    let before = match rlimit::Resource::NOFILE.get() {
        Ok((soft, _hard)) => soft,
        Err(e) => {
            warn!(error = %e, "cannot read the open-files limit");
            return None;
        }
    };
    let soft = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(soft) => soft,
        Err(e) => {
            warn!(error = %e, before, "cannot raise the open-files limit");
            before
        }
    };
    if soft > before {
        info!(
            before,
            now = soft,
            "raised the open-files soft limit to the hard limit"
        );
    } else {
        info!(limit = soft, "open-files limit (already at the hard limit)");
    }
    Some(OpenFilesLimit { before, soft })
}

/// The most connections the open-files limit leaves room for: everything above
/// [`FDS_KEPT_FOR_STORAGE`], and at least half of a small limit.
pub fn connections_allowed_by(limit: OpenFilesLimit) -> usize {
    let fds = limit
        .soft
        .saturating_sub(FDS_KEPT_FOR_STORAGE)
        .max(limit.soft / 2);
    usize::try_from(fds).unwrap_or(usize::MAX)
}

/// Resolves `host` as Kafka's `InetAddress.getByName` does, to every address it has.
pub fn resolve_host(host: &str) -> std::io::Result<Vec<IpAddr>> {
    Ok((host, 0)
        .to_socket_addrs()?
        .map(|a| canonical(a.ip()))
        .collect())
}

/// What the listener's limits come from.
#[derive(Debug, Clone)]
pub struct LimitSettings {
    /// `max.connections`.
    pub max_connections: usize,
    /// `max.connections.per.ip`.
    pub max_connections_per_ip: usize,
    /// `max.connections.per.ip.overrides`: `(host, max)`.
    pub per_ip_overrides: Vec<(String, usize)>,
}

/// Why the connection limits could not be built.
#[derive(Debug, thiserror::Error)]
#[error("max.connections.per.ip.overrides: cannot resolve {host}: {source}")]
pub struct ResolveError {
    /// The host that did not resolve.
    pub host: String,
    /// The resolver's error.
    #[source]
    pub source: std::io::Error,
}

/// The listener's limits: `settings` with `max.connections` capped by the open-files limit,
/// override hosts resolved (one that does not resolve stops the start, as Kafka's
/// `UnknownHostException` does), and the other voters' addresses with their reserve (a voter
/// host that does not resolve now gets no reserve, with a warning).
pub fn connection_limits<'a>(
    settings: &LimitSettings,
    open_files: Option<OpenFilesLimit>,
    other_voter_hosts: impl IntoIterator<Item = &'a str>,
) -> Result<ConnectionLimits, ResolveError> {
    let mut per_ip_overrides = HashMap::new();
    for (host, max) in &settings.per_ip_overrides {
        let ips = resolve_host(host).map_err(|source| ResolveError {
            host: host.clone(),
            source,
        })?;
        for ip in ips {
            per_ip_overrides.insert(ip, *max);
        }
    }
    let mut peer_addresses = HashSet::new();
    let mut voters = 0;
    for host in other_voter_hosts {
        voters += 1;
        match resolve_host(host) {
            Ok(ips) => peer_addresses.extend(ips),
            Err(e) => {
                warn!(host, error = %e, "voter host does not resolve: no connection reserve for it")
            }
        }
    }
    let peer_reserve = voters * PEER_SLOTS_PER_VOTER;
    let mut max_connections = settings.max_connections;
    if let Some(limit) = open_files {
        let allowed = connections_allowed_by(limit).saturating_sub(peer_reserve);
        if allowed < max_connections {
            info!(
                max_connections = settings.max_connections,
                open_files = limit.soft,
                allowed,
                "max.connections capped to what the open-files limit leaves"
            );
            max_connections = allowed;
        }
    }
    Ok(ConnectionLimits {
        max_connections,
        max_connections_per_ip: settings.max_connections_per_ip,
        per_ip_overrides,
        peer_addresses,
        peer_reserve,
    })
}

/// The hosts whose connections get a reserve ([`connection_limits`]): the other static voters,
/// or for a dynamic quorum the bootstrap servers (the controllers as configured; their ids are
/// unknown, so this node's own entry is among them). Voters added later at other hosts get it
/// from [`follow_voter_hosts`].
pub fn reserve_hosts(raft: &kraftwerk_raft::RaftConfig) -> Vec<&str> {
    if raft.voters.is_empty() {
        return raft
            .bootstrap_servers
            .iter()
            .map(|e| e.host.as_str())
            .collect();
    }
    raft.voters
        .iter()
        .filter(|(id, _)| **id != raft.node_id)
        .map(|(_, e)| e.host.as_str())
        .collect()
}

/// Keeps the listener's connection reserve on the voter set in force
/// ([`kraftwerk_node::NodeStatus::voter_hosts`]): a voter added at a host the configuration
/// did not name gets [`PEER_SLOTS_PER_VOTER`] slots and its addresses, as the configured ones
/// have. A host that does not resolve gets none, with a warning. Ends when the node stops.
pub async fn follow_voter_hosts(
    mut status: tokio::sync::watch::Receiver<kraftwerk_node::NodeStatus>,
    quotas: crate::net::ConnectionQuotas,
    configured: Vec<String>,
) {
    let mut last: Option<Vec<String>> = None;
    loop {
        let hosts = status.borrow_and_update().voter_hosts.clone();
        if last.as_ref() != Some(&hosts) {
            let learned: Vec<&String> = hosts.iter().filter(|h| !configured.contains(h)).collect();
            let mut addresses = HashSet::new();
            for host in &learned {
                match tokio::net::lookup_host((host.as_str(), 0)).await {
                    Ok(found) => addresses.extend(found.map(|a| canonical(a.ip()))),
                    Err(e) => warn!(
                        host = host.as_str(),
                        error = %e,
                        "voter host does not resolve: no connection reserve for it"
                    ),
                }
            }
            if !learned.is_empty() {
                info!(hosts = ?learned, "connection reserve extended to voters added at run time");
            }
            quotas.set_learned_peers(addresses, learned.len() * PEER_SLOTS_PER_VOTER);
            last = Some(hosts);
        }
        if status.changed().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dynamic_quorum_reserves_for_its_bootstrap_servers() {
        use kraftwerk_raft::{Endpoint, RaftConfig};
        let e = |h: &str| Endpoint {
            host: h.into(),
            port: 9093,
        };
        let voters = [(1, e("10.0.0.1")), (2, e("10.0.0.2")), (3, e("10.0.0.3"))].into();
        let static_quorum = RaftConfig::new(2, "c", uuid::Uuid::nil(), voters, "CONTROLLER");
        assert_eq!(reserve_hosts(&static_quorum), ["10.0.0.1", "10.0.0.3"]);
        let mut dynamic =
            RaftConfig::new(2, "c", uuid::Uuid::nil(), Default::default(), "CONTROLLER");
        dynamic.bootstrap_servers = vec![e("10.0.0.7"), e("10.0.0.8")];
        assert_eq!(reserve_hosts(&dynamic), ["10.0.0.7", "10.0.0.8"]);
    }

    fn settings() -> LimitSettings {
        LimitSettings {
            max_connections: i32::MAX as usize,
            max_connections_per_ip: i32::MAX as usize,
            per_ip_overrides: vec![("127.0.0.5".into(), 3)],
        }
    }

    #[test]
    fn connections_leave_room_for_storage() {
        let limit = |soft| OpenFilesLimit { before: soft, soft };
        assert_eq!(connections_allowed_by(limit(20_000)), 20_000 - 1_024);
        assert_eq!(connections_allowed_by(limit(1_024)), 512);
        let limits = connection_limits(&settings(), Some(limit(20_000)), ["127.0.0.2"]).unwrap();
        assert_eq!(
            limits.max_connections,
            20_000 - 1_024 - PEER_SLOTS_PER_VOTER
        );
        assert_eq!(limits.peer_reserve, PEER_SLOTS_PER_VOTER);
        assert!(limits
            .peer_addresses
            .contains(&"127.0.0.2".parse().unwrap()));
        assert_eq!(limits.per_ip_overrides[&"127.0.0.5".parse().unwrap()], 3);
        // A configured cap below the limit stays.
        let small = LimitSettings {
            max_connections: 10,
            ..settings()
        };
        let limits = connection_limits(&small, Some(limit(20_000)), []).unwrap();
        assert_eq!((limits.max_connections, limits.peer_reserve), (10, 0));
    }

    #[test]
    fn an_override_host_that_does_not_resolve_stops_the_start() {
        let bad = LimitSettings {
            per_ip_overrides: vec![("no-such-host.invalid".into(), 1)],
            ..settings()
        };
        let e = connection_limits(&bad, None, []).unwrap_err();
        assert_eq!(e.host, "no-such-host.invalid");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_soft_limit_is_raised_to_the_hard_limit() {
        let (_, hard) = rlimit::Resource::NOFILE.get().unwrap();
        // Lower the soft limit (always allowed), as a shell's `ulimit -Sn` would have.
        let lowered = (hard / 2).max(1_024).min(hard);
        rlimit::Resource::NOFILE.set(lowered, hard).unwrap();
        let limit = raise_open_files_limit().expect("the limit is readable here");
        let (soft, _) = rlimit::Resource::NOFILE.get().unwrap();
        assert_eq!(
            limit,
            OpenFilesLimit {
                before: lowered,
                soft: hard
            }
        );
        assert_eq!(soft, hard);
    }
}
