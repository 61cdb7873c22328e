//! Static configuration of one Raft node (Kafka `QuorumConfig` plus identity).

use std::collections::BTreeMap;
use uuid::Uuid;

pub use kraftwerk_protocol::constants::{
    MAX_FETCH_BYTES, METADATA_PARTITION, METADATA_TOPIC_ID, METADATA_TOPIC_NAME,
};
/// Kafka `KafkaRaftClient.MAX_FETCH_WAIT_MS`: long-poll bound of a Fetch this node sends, in ms.
pub const FETCH_MAX_WAIT_MS: i32 = 500;
/// Most observers (brokers, tools, non-voting controllers) the leader tracks at once. Each
/// fetch names its own replica id, so without a bound a client could grow the table without
/// end; past the bound, expired observers go first, then the one whose last fetch is oldest.
/// (Java's `LeaderState` keeps every observer until its session expires.)
pub const MAX_OBSERVERS: usize = 10_000;
/// Observers with no Fetch for this long disappear from DescribeQuorum
/// (`LeaderState.OBSERVER_SESSION_TIMEOUT_MS`), in ms.
pub const OBSERVER_SESSION_TIMEOUT_MS: u64 = 300_000;

/// Default of `controller.quorum.election.timeout.ms`, in ms
/// (`QuorumConfig.DEFAULT_QUORUM_ELECTION_TIMEOUT_MS`).
pub const DEFAULT_ELECTION_TIMEOUT_MS: u64 = 1000;
/// Default of `controller.quorum.election.backoff.max.ms`, in ms
/// (`QuorumConfig.DEFAULT_QUORUM_ELECTION_BACKOFF_MAX_MS`).
pub const DEFAULT_ELECTION_BACKOFF_MAX_MS: u64 = 1000;
/// Default of `controller.quorum.fetch.timeout.ms`, in ms
/// (`QuorumConfig.DEFAULT_QUORUM_FETCH_TIMEOUT_MS`).
pub const DEFAULT_FETCH_TIMEOUT_MS: u64 = 2000;
/// Default of `controller.quorum.request.timeout.ms`, in ms
/// (`QuorumConfig.DEFAULT_QUORUM_REQUEST_TIMEOUT_MS`).
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 2000;
/// Default of `controller.quorum.retry.backoff.ms`, in ms
/// (`QuorumConfig.DEFAULT_QUORUM_RETRY_BACKOFF_MS`).
pub const DEFAULT_RETRY_BACKOFF_MS: u64 = 20;
/// Default of `controller.quorum.append.linger.ms`, in ms
/// (`QuorumConfig.DEFAULT_QUORUM_LINGER_MS`).
pub const DEFAULT_APPEND_LINGER_MS: u64 = 25;
/// Default of `controller.quorum.fetch.max.bytes` (KIP-1219, Kafka 4.4), in bytes
/// (`QuorumConfig.DEFAULT_QUORUM_FETCH_MAX_BYTES`).
pub const DEFAULT_FETCH_MAX_BYTES: i32 = 1024 * 1024;
/// Default of `controller.quorum.fetch.snapshot.max.bytes` (KIP-1219, Kafka 4.4), in bytes
/// (`QuorumConfig.DEFAULT_QUORUM_FETCH_SNAPSHOT_MAX_BYTES`).
pub const DEFAULT_FETCH_SNAPSHOT_MAX_BYTES: i32 = 1024 * 1024;

/// The highest epoch a peer's request or response may carry. Past it too few epochs would be
/// left for elections: an honest quorum spends one per election and cannot get anywhere near
/// 2^31 - 10^6 of them, so only a forged or corrupt message names such an epoch. Java accepts
/// any epoch and overflows its `int` at the next election after `Integer.MAX_VALUE`.
pub const MAX_REQUEST_EPOCH: i32 = i32::MAX - 1_000_000;

/// Most leader endpoints learned from peers that a node remembers (each names the leader of
/// some epoch; only the latest matter).
pub const MAX_LEARNED_ENDPOINTS: usize = 64;

/// The id a bootstrap server at `index` of `controller.quorum.bootstrap.servers` is tracked
/// by: `-2, -3, …` (Kafka's `RequestManager` gives bootstrap servers negative ids; -1 means
/// "no node").
pub fn bootstrap_server_id(index: usize) -> i32 {
    -2 - index as i32
}

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
    /// This node's controller listeners by name, as it advertises them (kraft.version 1: its
    /// `VotersRecord` entry and BeginQuorumEpoch `LeaderEndpoints`). Empty: use the entry the
    /// voter set has for this node.
    pub local_endpoints: BTreeMap<String, Endpoint>,
    /// `controller.quorum.bootstrap.servers`: where a node that does not know the leader
    /// sends its discovery Fetch (Kafka `QuorumConfig.bootstrapServers`); empty: the voters.
    pub bootstrap_servers: Vec<Endpoint>,
    /// `controller.quorum.election.timeout.ms` ([`DEFAULT_ELECTION_TIMEOUT_MS`]): timers are
    /// drawn from `[T, 2T)`.
    pub election_timeout_ms: u64,
    /// `controller.quorum.election.backoff.max.ms` ([`DEFAULT_ELECTION_BACKOFF_MAX_MS`]).
    pub election_backoff_max_ms: u64,
    /// `controller.quorum.fetch.timeout.ms` ([`DEFAULT_FETCH_TIMEOUT_MS`]); the leader's
    /// check-quorum timer derives from it ([`Self::check_quorum_timeout_ms`]).
    pub fetch_timeout_ms: u64,
    /// `controller.quorum.request.timeout.ms` ([`DEFAULT_REQUEST_TIMEOUT_MS`]).
    pub request_timeout_ms: u64,
    /// `controller.quorum.retry.backoff.ms` ([`DEFAULT_RETRY_BACKOFF_MS`]).
    pub retry_backoff_ms: u64,
    /// `controller.quorum.append.linger.ms` ([`DEFAULT_APPEND_LINGER_MS`]).
    pub append_linger_ms: u64,
    /// `controller.quorum.fetch.max.bytes` ([`DEFAULT_FETCH_MAX_BYTES`], ≥ 1; KIP-1219): the
    /// `MaxBytes` of the Fetch requests this node sends (a leader always returns at least one
    /// batch, however large).
    pub fetch_max_bytes: i32,
    /// `controller.quorum.fetch.snapshot.max.bytes` ([`DEFAULT_FETCH_SNAPSHOT_MAX_BYTES`], ≥ 1;
    /// KIP-1219): the `MaxBytes` of the FetchSnapshot requests this node sends.
    pub fetch_snapshot_max_bytes: i32,
    /// Ask for pre-votes before an election (KIP-996, Vote v2), as Kafka 4.x does.
    pub pre_vote: bool,
    /// `controller.quorum.auto.join.enable` (default false, Kafka 4.2+): an observer of a
    /// dynamic quorum adds itself to the voter set (AddRaftVoter), first removing its own id's
    /// old directory if the set still has it (`core::auto_join`).
    pub auto_join: bool,
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
            local_endpoints: BTreeMap::new(),
            bootstrap_servers: Vec::new(),
            election_timeout_ms: DEFAULT_ELECTION_TIMEOUT_MS,
            election_backoff_max_ms: DEFAULT_ELECTION_BACKOFF_MAX_MS,
            fetch_timeout_ms: DEFAULT_FETCH_TIMEOUT_MS,
            request_timeout_ms: DEFAULT_REQUEST_TIMEOUT_MS,
            retry_backoff_ms: DEFAULT_RETRY_BACKOFF_MS,
            append_linger_ms: DEFAULT_APPEND_LINGER_MS,
            fetch_max_bytes: DEFAULT_FETCH_MAX_BYTES,
            fetch_snapshot_max_bytes: DEFAULT_FETCH_SNAPSHOT_MAX_BYTES,
            pre_vote: true,
            auto_join: false,
            fast_failure_detection_ms: Some(200),
            fast_failure_jitter_ms: 300,
        }
    }

    /// The leader's check-quorum timer, in ms: 1.5 × `fetch_timeout_ms` (Kafka
    /// `LeaderState.CHECK_QUORUM_TIMEOUT_FACTOR`). A leader that has not been fetched from by a
    /// majority of the voters for this long resigns.
    pub fn check_quorum_timeout_ms(&self) -> u64 {
        self.fetch_timeout_ms * 3 / 2
    }

    /// True if this node is one of the static voters (kraft.version 0; the voter set in force
    /// is [`RaftCore::is_voter`](crate::RaftCore::is_voter)).
    pub fn is_voter(&self) -> bool {
        self.voters.contains_key(&self.node_id)
    }

    /// Size of a majority of the static voters (kraft.version 0).
    pub fn majority(&self) -> usize {
        self.voters.len() / 2 + 1
    }
}
