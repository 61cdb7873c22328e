//! Static configuration of one Raft node (Kafka `QuorumConfig` plus identity).

use std::collections::BTreeMap;
use uuid::Uuid;

pub use kraftwerk_protocol::constants::{
    MAX_FETCH_BYTES, METADATA_PARTITION, METADATA_TOPIC_ID, METADATA_TOPIC_NAME,
};
/// Kafka `KafkaRaftClient.MAX_FETCH_WAIT_MS`: long-poll bound of a Fetch this node sends, in ms.
pub const FETCH_MAX_WAIT_MS: i32 = 500;
/// Observers with no Fetch for this long disappear from DescribeQuorum
/// (`LeaderState.OBSERVER_SESSION_TIMEOUT_MS`), in ms.
pub const OBSERVER_SESSION_TIMEOUT_MS: u64 = 300_000;

/// A host and port on the controller listener.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

/// Configuration of a Raft node. Timeouts are in milliseconds and default to Kafka's
/// (`raft/src/main/java/org/apache/kafka/raft/QuorumConfig.java`).
#[derive(Clone, Debug)]
pub struct RaftConfig {
    /// This node's `node.id`.
    pub node_id: i32,
    /// The `cluster.id` from `meta.properties`; requests carrying another id are refused with
    /// `INCONSISTENT_CLUSTER_ID`.
    pub cluster_id: String,
    /// Directory id of the metadata log directory (`directory.id` in `meta.properties`).
    pub directory_id: Uuid,
    /// Static voters (`controller.quorum.voters`, kraft.version 0): id → controller endpoint.
    pub voters: BTreeMap<i32, Endpoint>,
    /// Name of the controller listener (first of `controller.listener.names`).
    pub listener_name: String,
    /// `controller.quorum.election.timeout.ms` (1000): timers are drawn from `[T, 2T)`.
    pub election_timeout_ms: u64,
    /// `controller.quorum.election.backoff.max.ms` (1000).
    pub election_backoff_max_ms: u64,
    /// `controller.quorum.fetch.timeout.ms` (2000).
    pub fetch_timeout_ms: u64,
    /// `controller.quorum.request.timeout.ms` (2000).
    pub request_timeout_ms: u64,
    /// `controller.quorum.retry.backoff.ms` (20).
    pub retry_backoff_ms: u64,
    /// `controller.quorum.append.linger.ms` (25).
    pub append_linger_ms: u64,
    /// Ask for pre-votes before an election (KIP-996, Vote v2), as Kafka 4.x does.
    pub pre_vote: bool,
    /// kraftwerk-specific fast failure detection: a voter whose every request to the leader
    /// failed at the connection (refused or reset: the leader process is gone) for this long
    /// starts a pre-vote without waiting for the fetch timeout; `None` disables it. Pre-vote
    /// makes this safe: voters that still reach the leader refuse, and nothing changes.
    pub fast_failure_detection_ms: Option<u64>,
    /// Random delay added to a fast detection (uniform in `[0, this)`), so two followers that
    /// lost the same leader do not run for election at the same instant and split the vote.
    pub fast_failure_jitter_ms: u64,
}

impl RaftConfig {
    /// A configuration with Kafka's default timeouts.
    pub fn new(
        node_id: i32,
        cluster_id: impl Into<String>,
        directory_id: Uuid,
        voters: BTreeMap<i32, Endpoint>,
        listener_name: impl Into<String>,
    ) -> Self {
        Self {
            node_id,
            cluster_id: cluster_id.into(),
            directory_id,
            voters,
            listener_name: listener_name.into(),
            election_timeout_ms: 1000,
            election_backoff_max_ms: 1000,
            fetch_timeout_ms: 2000,
            request_timeout_ms: 2000,
            retry_backoff_ms: 20,
            append_linger_ms: 25,
            pre_vote: true,
            fast_failure_detection_ms: Some(200),
            fast_failure_jitter_ms: 300,
        }
    }

    /// True if this node is one of the voters.
    pub fn is_voter(&self) -> bool {
        self.voters.contains_key(&self.node_id)
    }

    /// Size of a majority of the voters.
    pub fn majority(&self) -> usize {
        self.voters.len() / 2 + 1
    }
}
