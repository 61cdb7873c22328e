//! What the node reports about itself: for metrics, ApiVersions' finalized features and tests.

use kraftwerk_controller::image::features::KRAFT_VERSION_FEATURE_NAME;
use kraftwerk_controller::image::MetadataImage;
use kraftwerk_raft::{
    LeaderAndEpoch, OffsetAndEpoch, QuorumStateStore, RaftMetrics, ReplicatedLog, RoleKind,
};
use kraftwerk_records::metadata::{DelegationTokenRecord, UserScramCredentialRecord};
use kraftwerk_records::metadata_version::METADATA_VERSION_FEATURE_NAME;

use crate::node::Node;
use crate::sensors::Sensors;

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
    /// The candidate voted for in this epoch (`current-vote`; this node as candidate or leader).
    pub voted_id: Option<i32>,
    /// Epoch of the last batch in the log (`log-end-epoch`).
    pub log_end_epoch: i32,
    /// Whether this node is a voter (else an observer).
    pub is_voter: bool,
    /// Voters in the voter set in force (`number-of-voters`).
    pub voter_count: usize,
    /// Other voters with no endpoint known on the controller listener
    /// (`number-unknown-voter-connections`).
    pub unknown_voter_connections: usize,
    /// Hosts of the other voters' controller-listener endpoints in the voter set in force,
    /// sorted and de-duplicated (the listener's connection reserve follows them).
    pub voter_hosts: Vec<String>,
    /// A voter change is appended but not committed (leader only; `uncommitted-voter-change`).
    pub uncommitted_voter_change: bool,
    /// Counts from the committed image (`ControllerMetadataMetrics`).
    pub image: ImageCounts,
    /// Registered brokers: registration state and last heartbeat seen.
    pub brokers: Vec<BrokerMetrics>,
    /// `broker.session.timeout.ms`: the cap of `TimeSinceLastHeartbeatReceivedMs`.
    pub session_timeout_ms: u64,
    /// Append time (ms since the Unix epoch) of the last committed batch replayed, 0 if none
    /// (`LastAppliedRecordTimestamp`).
    pub last_applied_timestamp_ms: i64,
    /// Controller handler failures caught without stopping the node (`MetadataErrorCount`).
    pub metadata_errors: u64,
    /// Times a new active controller was seen (`NewActiveControllersCount`).
    pub new_active_controllers: u64,
    /// Events the driver handed to the node (`EventQueueOperationsStartedCount`).
    pub events_started: u64,
    /// Offset of the last record the controller applied, committed or (active) not yet
    /// (`LastAppliedRecordOffset` of an active controller), -1 if none.
    pub last_written_offset: i64,
    /// Committed partition changes that elected a leader outside the ISR
    /// (`UncleanLeaderElectionsPerSec`).
    pub unclean_leader_elections: u64,
    /// Committed partition changes that elected a leader from the ELR
    /// (`ElectionFromEligibleLeaderReplicasPerSec`).
    pub elr_elections: u64,
    /// Raw samples of the windowed metrics and histograms.
    pub sensors: Sensors,
    /// The committed image's SCRAM credentials, for the SASL listeners (a persistent map:
    /// cloning it for every status costs one reference count).
    pub scram_credentials: ScramCredentials,
    /// The committed image's delegation tokens, for the SASL listeners' `tokenauth=true`
    /// logins (a persistent map, as [`Self::scram_credentials`]).
    pub delegation_tokens: DelegationTokens,
}

/// Delegation tokens by token id, as DelegationTokenRecords (no HMACs: those need the secret).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DelegationTokens(pub imbl::OrdMap<String, DelegationTokenRecord>);

impl DelegationTokens {
    /// The token with id `token_id`.
    pub fn get(&self, token_id: &str) -> Option<&DelegationTokenRecord> {
        self.0.get(token_id)
    }
}

/// SCRAM credentials by (user name, `ScramMechanism` type id), as UserScramCredentialRecords.
/// `Debug` prints only how many there are: salts and keys stay out of logs.
#[derive(Clone, Default, PartialEq)]
pub struct ScramCredentials(pub imbl::OrdMap<(String, i8), UserScramCredentialRecord>);

impl ScramCredentials {
    /// The credential of `user` for the mechanism with type id `mechanism`.
    pub fn get(&self, user: &str, mechanism: i8) -> Option<&UserScramCredentialRecord> {
        self.0.get(&(user.to_owned(), mechanism))
    }
}

impl std::fmt::Debug for ScramCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ScramCredentials({} credentials)", self.0.len())
    }
}

/// Counts over the committed image, as Kafka's `ControllerMetricsChanges` keeps them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageCounts {
    /// Unfenced brokers, in controlled shutdown or not (`ActiveBrokerCount`).
    pub active_brokers: usize,
    /// Fenced brokers (`FencedBrokerCount`).
    pub fenced_brokers: usize,
    /// Brokers in controlled shutdown (`ControlledShutdownBrokerCount`).
    pub controlled_shutdown_brokers: usize,
    /// Topics (`GlobalTopicCount`).
    pub topics: usize,
    /// Partitions (`GlobalPartitionCount`).
    pub partitions: usize,
    /// Partitions without a leader (`OfflinePartitionsCount`).
    pub offline_partitions: usize,
    /// Partitions not led by their first replica, leaderless ones included
    /// (`PreferredReplicaImbalanceCount`).
    pub imbalanced_partitions: usize,
}

/// One registered broker, for the per-broker `KafkaController` metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerMetrics {
    /// Broker id.
    pub id: i32,
    /// Fenced.
    pub fenced: bool,
    /// In controlled shutdown.
    pub in_controlled_shutdown: bool,
    /// Last heartbeat arrival this node saw, node time in ms (the active controller's).
    pub last_contact_ms: Option<u64>,
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
        let voters = self.raft.voter_set();
        let listener = &self.raft.config().listener_name;
        let local_id = self.raft.config().node_id;
        let image = self.controller.image();
        let replicas: Vec<ReplicaLag> = self
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
            .collect();
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
            replicas,
            voted_id: self.raft.voted_id(),
            log_end_epoch: log.end_offset().epoch,
            is_voter: self.raft.is_voter(),
            voter_count: voters.len(),
            unknown_voter_connections: voters
                .ids()
                .filter(|&id| id != local_id && voters.endpoint(id, listener).is_none())
                .count(),
            voter_hosts: voters
                .ids()
                .filter(|&id| id != local_id)
                .filter_map(|id| voters.endpoint(id, listener).map(|e| e.host.clone()))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            uncommitted_voter_change: self.raft.is_leader()
                && self.raft.has_uncommitted_voter_change(),
            image: self.tracking.image_counts.1.clone(),
            brokers: image
                .cluster
                .brokers()
                .map(|b| BrokerMetrics {
                    id: b.id,
                    fenced: b.fenced,
                    in_controlled_shutdown: b.in_controlled_shutdown,
                    last_contact_ms: self.tracking.broker_contacts.get(&b.id).copied(),
                })
                .collect(),
            session_timeout_ms: self.controller.config().session_timeout_ms,
            last_applied_timestamp_ms: self.last_replayed_batch.map_or(0, |(_, ts)| ts),
            metadata_errors: self.controller.handler_panics(),
            new_active_controllers: self.tracking.new_active_controllers,
            events_started: self.tracking.events_started,
            last_written_offset: self.controller.latest().last_offset,
            unclean_leader_elections: self.tracking.unclean_leader_elections,
            elr_elections: self.tracking.elr_elections,
            sensors: self.tracking.sensors.clone(),
            scram_credentials: ScramCredentials(image.other.scram_credentials.clone()),
            delegation_tokens: DelegationTokens(image.other.delegation_tokens.clone()),
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

/// Broker, topic and partition counts of `image`. O(brokers + topics + offline + imbalanced
/// partitions): the per-topic partition maps know their sizes. The node recounts only after
/// replay moved the image (`Node::track`).
pub(crate) fn image_counts(image: &MetadataImage) -> ImageCounts {
    let brokers = image.cluster.brokers();
    let (mut active, mut fenced, mut shutting_down) = (0, 0, 0);
    for b in brokers {
        if b.fenced {
            fenced += 1;
        } else {
            active += 1;
        }
        if b.in_controlled_shutdown {
            shutting_down += 1;
        }
    }
    let topics = &image.topics;
    ImageCounts {
        active_brokers: active,
        fenced_brokers: fenced,
        controlled_shutdown_brokers: shutting_down,
        topics: topics.len(),
        partitions: topics.iter().map(|t| t.partitions.len()).sum(),
        offline_partitions: topics.partitions_without_leader().len(),
        imbalanced_partitions: topics.imbalanced_partitions().count(),
    }
}
