//! The configurations of the layers below, built from a [`NodeConfig`] and the formatted
//! metadata directory: server, Raft core, controller, metadata log, snapshots.

use std::collections::BTreeMap;

use kraftwerk_controller::ControllerConfig;
use kraftwerk_log::formatted::FormattedDir;
use kraftwerk_log::LogConfig;
use kraftwerk_node::SnapshotPolicy;
use kraftwerk_raft::{Endpoint as RaftEndpoint, RaftConfig};
use kraftwerk_server::registration::RegisteredEndpoint;
use kraftwerk_server::resources::LimitSettings;
use kraftwerk_server::{ListenerSettings, ServerConfig};

use super::NodeConfig;

impl NodeConfig {
    /// Everything the server needs to start this node, from this configuration and the
    /// formatted metadata directory (identity and bootstrap records).
    pub fn server_config(&self, formatted: &FormattedDir) -> ServerConfig {
        ServerConfig {
            metadata_log_dir: self.metadata_log_dir.clone(),
            log: LogConfig {
                segment_bytes: self.metadata_log_segment_bytes as u64,
                segment_min_bytes: self.metadata_log_segment_min_bytes as u64,
                segment_ms: self.metadata_log_segment_ms,
                retention_bytes: self.metadata_max_retention_bytes,
                retention_ms: self.metadata_max_retention_ms,
            },
            raft: self.raft_config(formatted),
            controller: self.controller_config(formatted),
            snapshot_policy: SnapshotPolicy {
                max_bytes_between_snapshots: self.metadata_snapshot_max_new_record_bytes.max(1)
                    as u64,
                max_interval_ms: self.metadata_snapshot_max_interval_ms.max(0) as u64,
                ..SnapshotPolicy::default()
            },
            listeners: self
                .served_controller_listeners()
                .into_iter()
                .map(|e| ListenerSettings {
                    name: e.listener_name.clone(),
                    host: e.host.clone(),
                    port: e.port,
                    tls: self.listener_tls(&e.listener_name).cloned(),
                    sasl: self.listener_sasl(&e.listener_name).cloned(),
                    max_connections: self
                        .connections
                        .listener_max_connections
                        .get(&e.listener_name)
                        .map(|n| *n as usize),
                })
                .collect(),
            max_frame_bytes: self.socket_request_max_bytes as usize,
            limits: self.limit_settings(),
            connections_max_idle_ms: u64::try_from(self.connections.connections_max_idle_ms)
                .unwrap_or(u64::MAX),
            registration_endpoints: self.registration_endpoints(),
            metrics_addr: self
                .metrics_listener
                .as_ref()
                .map(|m| (m.host.clone(), m.port)),
            unstable_feature_versions_enable: self.unstable_feature_versions_enable,
            raft_client_sasl: self.raft_client_sasl.clone(),
        }
    }

    /// The endpoint this controller registers (KIP-919 ControllerRegistration, what
    /// DescribeCluster lists for `--bootstrap-controller` tools): its controller listener as
    /// advertised (`advertised.listeners`, else `listeners`), as Java's
    /// `ControllerRegistrationManager` registers `effectiveAdvertisedControllerListeners`; when
    /// that names no host (`CONTROLLER://:9093`), a static voter's `controller.quorum.voters`
    /// entry. `None` for a static observer without a host to name. (The server is handed
    /// [`Self::registration_endpoints`]; this first one is what tests look at.)
    #[cfg(test)]
    pub(crate) fn registration_endpoint(&self) -> Option<(String, u16)> {
        self.registration_endpoints()
            .into_iter()
            .next()
            .map(|e| (e.host, e.port))
    }

    /// Every endpoint this controller registers, one per controller listener in
    /// `controller.listener.names` order, as Java registers its whole `ListenerInfo`: the first
    /// is [`Self::registration_endpoint`]; another names its advertised host, else (binding
    /// every interface) the first one's host, with its own port. Empty when the first has no
    /// host to name.
    pub(crate) fn registration_endpoints(&self) -> Vec<RegisteredEndpoint> {
        let Some((first_host, first_port)) = self.first_registration_endpoint() else {
            return Vec::new();
        };
        let first_name = &self.controller_listener().listener_name;
        self.controller_listener_names
            .iter()
            .filter_map(|name| {
                let e = self
                    .advertised_controller_listeners
                    .iter()
                    .find(|e| e.listener_name == *name)
                    .or_else(|| self.listeners.iter().find(|e| e.listener_name == *name))?;
                let (host, port) = if name == first_name {
                    (first_host.clone(), first_port)
                } else if e.host.is_empty() {
                    (first_host.clone(), e.port)
                } else {
                    (e.host.clone(), e.port)
                };
                Some(RegisteredEndpoint {
                    listener_name: e.listener_name.clone(),
                    host,
                    port,
                    security_protocol: e.security_protocol.id(),
                })
            })
            .collect()
    }

    /// The first controller listener's registered host and port (see
    /// [`Self::registration_endpoint`]).
    fn first_registration_endpoint(&self) -> Option<(String, u16)> {
        let listener = self.advertised_controller_listener();
        if !listener.host.is_empty() {
            return Some((listener.host.clone(), listener.port));
        }
        self.local_voter().map(|v| (v.host.clone(), v.port))
    }

    /// The listener's connection caps (validated ≥ 0; a negative override count, which Kafka
    /// accepts, refuses every connection as 0 does).
    pub(crate) fn limit_settings(&self) -> LimitSettings {
        let c = &self.connections;
        LimitSettings {
            max_connections: c.max_connections.max(0) as usize,
            max_connections_per_ip: c.max_connections_per_ip.max(0) as usize,
            per_ip_overrides: c
                .max_connections_per_ip_overrides
                .iter()
                .map(|(host, max)| (host.clone(), (*max).max(0) as usize))
                .collect(),
        }
    }

    /// The Raft core's configuration: identity, static voters, `controller.quorum.*` timeouts.
    fn raft_config(&self, formatted: &FormattedDir) -> RaftConfig {
        let voters: BTreeMap<i32, RaftEndpoint> = self
            .quorum_voters
            .iter()
            .map(|v| {
                (
                    v.id,
                    RaftEndpoint {
                        host: v.host.clone(),
                        port: v.port,
                    },
                )
            })
            .collect();
        let mut raft = RaftConfig::new(
            self.node_id,
            formatted.cluster_id.clone(),
            formatted.directory_id,
            voters,
            self.controller_listener().listener_name.clone(),
        );
        raft.election_timeout_ms = self.quorum_election_timeout_ms as u64;
        raft.election_backoff_max_ms = self.quorum_election_backoff_max_ms as u64;
        raft.fetch_timeout_ms = self.quorum_fetch_timeout_ms as u64;
        raft.request_timeout_ms = self.quorum_request_timeout_ms as u64;
        raft.retry_backoff_ms = self.quorum_retry_backoff_ms as u64;
        raft.append_linger_ms = self.quorum_append_linger_ms as u64;
        raft.fetch_max_bytes = self.quorum_fetch_max_bytes;
        raft.fetch_snapshot_max_bytes = self.quorum_fetch_snapshot_max_bytes;
        raft.auto_join = self.quorum_auto_join_enable;
        raft.bootstrap_servers = self
            .quorum_bootstrap_servers
            .iter()
            .map(|b| RaftEndpoint {
                host: b.host.clone(),
                port: b.port,
            })
            .collect();
        // A dynamic voter's own entry (VotersRecord, LeaderEndpoints, UpdateRaftVoter): its
        // controller listener as advertised. A static quorum keeps the entry
        // `controller.quorum.voters` gives it.
        let listener = self.advertised_controller_listener();
        if self.quorum_voters.is_empty() && !listener.host.is_empty() {
            raft.local_endpoints.insert(
                listener.listener_name.clone(),
                RaftEndpoint {
                    host: listener.host.clone(),
                    port: listener.port,
                },
            );
        }
        raft
    }

    /// The controller's configuration: identity, bootstrap records, broker session and topic
    /// defaults, the quorum's node ids.
    fn controller_config(&self, formatted: &FormattedDir) -> ControllerConfig {
        let mut c = ControllerConfig::new(
            self.node_id,
            formatted.cluster_id.clone(),
            formatted.bootstrap.records.clone(),
        );
        c.session_timeout_ms = self.broker_session_timeout_ms as u64;
        c.heartbeat_interval_ms = self.broker_heartbeat_interval_ms as u64;
        c.noop_interval_ms = self.metadata_max_idle_interval_ms as u64;
        c.default_replication_factor = self.default_replication_factor as i16;
        c.default_num_partitions = self.num_partitions;
        c.kraft_version = 0;
        c.quorum_node_ids = self.quorum_voters.iter().map(|v| v.id).collect();
        c.enable_unstable_feature_versions = self.unstable_feature_versions_enable;
        c.delete_topic_enable = self.delete_topic_enable;
        c.auto_leader_rebalance_enable = self.auto_leader_rebalance_enable;
        c.leader_imbalance_check_interval_ms =
            (self.leader_imbalance_check_interval_seconds as u64).saturating_mul(1_000);
        c.min_insync_replicas = self.min_insync_replicas;
        c.unclean_leader_election_enable = self.unclean_leader_election_enable;
        c.unclean_leader_election_interval_ms = self.unclean_leader_election_interval_ms as u64;
        c.remote_log_storage_system_enable = self.remote_log_storage_system_enable;
        c.authorizer = self.authorizer.clone();
        c.delegation_tokens = self.delegation_tokens.clone();
        c
    }
}
