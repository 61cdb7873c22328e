//! What the node reports about itself: for metrics, ApiVersions' finalized features and tests.

use kraftwerk_controller::image::features::KRAFT_VERSION_FEATURE_NAME;
use kraftwerk_raft::{
    LeaderAndEpoch, OffsetAndEpoch, QuorumStateStore, RaftMetrics, ReplicatedLog, RoleKind,
};
use kraftwerk_records::metadata_version::METADATA_VERSION_FEATURE_NAME;

use crate::node::Node;

/// A snapshot of the node's state for metrics and ApiVersions.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeStatus {
    /// Raft role.
    pub role: RoleKind,
    /// Leader and epoch.
    pub leader: LeaderAndEpoch,
    /// High watermark, if known.
    pub high_watermark: Option<i64>,
    /// Log end offset.
    pub log_end_offset: i64,
    /// Next offset to replay (everything below is in the committed image).
    pub replayed_end_offset: i64,
    /// True if the controller is active.
    pub active: bool,
    /// Finalized feature levels: metadata.version first (if bootstrapped), then the others > 0.
    pub finalized_features: Vec<(String, i16)>,
    /// Whether replay has reached a known high watermark at least once since the node started;
    /// until then ApiVersions reports no finalized features (KAFKA-19964: Kafka 4.4's
    /// `FeaturesPublisher` holds `FinalizedFeatures.unknown()` until the loader caught up).
    pub caught_up: bool,
    /// Log start offset.
    pub log_start_offset: i64,
    /// Complete snapshots on disk.
    pub snapshot_count: usize,
    /// Latest snapshot on disk.
    pub latest_snapshot: Option<OffsetAndEpoch>,
    /// Raft counters and timings.
    pub raft: RaftMetrics,
    /// Node counters (snapshots, activations).
    pub stats: NodeStats,
    /// The leader's view of each replica (empty unless leader): lag in offsets and ms.
    pub replicas: Vec<ReplicaLag>,
}

/// One replica as the leader sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaLag {
    /// Node id (a voter or an observer such as a broker).
    pub id: i32,
    /// True for voters.
    pub is_voter: bool,
    /// Its log end offset (its last Fetch offset), if it fetched.
    pub log_end_offset: Option<i64>,
    /// Leader LEO minus its LEO (offsets), if known.
    pub lag_offsets: Option<i64>,
    /// Node time of its last Fetch, ms.
    pub last_fetch_ms: Option<u64>,
    /// Node time it was last caught up, ms.
    pub last_caught_up_ms: Option<u64>,
}

/// Counters for the metrics endpoint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeStats {
    /// Snapshots this node wrote.
    pub snapshots_written: u64,
    /// Size of the latest snapshot written, bytes.
    pub last_snapshot_bytes: u64,
    /// Time to write the latest snapshot, ms (measured by the driver).
    pub last_snapshot_write_ms: u64,
    /// Snapshots loaded (at start or fetched from the leader).
    pub snapshots_loaded: u64,
    /// Time to load the latest loaded snapshot, ms (measured by the driver).
    pub last_snapshot_load_ms: u64,
    /// Controller activations (elections won and served).
    pub activations: u64,
}

impl<L: ReplicatedLog, Q: QuorumStateStore> Node<L, Q> {
    /// Counters for metrics.
    pub fn stats(&self) -> &NodeStats {
        &self.stats
    }

    /// Current state for metrics, ApiVersions finalized features and tests.
    pub fn status(&self) -> NodeStatus {
        let log = self.raft.log();
        let leo = log.end_offset().offset;
        let snapshots = log.snapshot_ids();
        NodeStatus {
            role: self.raft.role(),
            leader: self.raft.leader_and_epoch(),
            high_watermark: self.raft.high_watermark(),
            log_end_offset: leo,
            replayed_end_offset: self.replayed_end_offset,
            active: self.controller.is_active(),
            finalized_features: self.finalized_features(),
            caught_up: self.caught_up,
            log_start_offset: log.start_offset(),
            snapshot_count: snapshots.len(),
            latest_snapshot: snapshots.last().copied(),
            raft: self.raft.metrics().clone(),
            stats: self.stats.clone(),
            replicas: self
                .raft
                .replica_states()
                .into_iter()
                .map(|(id, is_voter, p)| ReplicaLag {
                    id,
                    is_voter,
                    log_end_offset: p.end_offset,
                    lag_offsets: p.end_offset.map(|e| leo - e),
                    last_fetch_ms: p.last_fetch_ms,
                    last_caught_up_ms: p.last_caught_up_ms,
                })
                .collect(),
        }
    }

    /// metadata.version first (if bootstrapped), then the other finalized features by name,
    /// kraft.version among them once it is above 0. kraft.version is the Raft layer's (the
    /// latest `KRaftVersionRecord`, as Kafka's `FinalizedFeatures` takes it from
    /// `RaftClient.kraftVersion`), never a FeatureLevelRecord (KAFKA-18979).
    fn finalized_features(&self) -> Vec<(String, i16)> {
        let features = &self.controller.image().features;
        let metadata_version = features
            .metadata_version()
            .map(|mv| (METADATA_VERSION_FEATURE_NAME.to_owned(), mv.feature_level()));
        let kraft_version = self.raft.kraft_version();
        let mut others: Vec<(String, i16)> = features
            .finalized()
            .filter(|(n, _)| n.as_str() != KRAFT_VERSION_FEATURE_NAME)
            .map(|(n, l)| (n.clone(), *l))
            .chain(
                (kraft_version > 0).then(|| (KRAFT_VERSION_FEATURE_NAME.to_owned(), kraft_version)),
            )
            .collect();
        others.sort();
        metadata_version.into_iter().chain(others).collect()
    }
}
