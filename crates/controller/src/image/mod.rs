//! The metadata image: everything the metadata log says, as immutable-by-convention values
//! built only by [`crate::replay::replay`] (Kafka's `MetadataImage` plus the indexes its
//! `*ControlManager`s keep).
//!
//! Every collection is an `imbl` persistent map, so `clone()` is O(1): the active controller
//! keeps one image per appended-but-uncommitted result and drops them on failover. An image can
//! be written back out as records ([`MetadataImage::write_records`]); replaying those records
//! into an empty image gives an equal image (except for offsets), which is how snapshots work.

pub mod cluster;
pub mod configs;
pub mod features;
pub mod other;
pub mod partition;
pub mod topics;

use std::sync::Arc;

use kraftwerk_records::metadata::ProducerIdsRecord;
use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use self::cluster::ClusterImage;
use self::configs::{resource_type, ConfigsImage};
use self::features::FeaturesImage;
use self::other::OtherRecordsImage;
use self::partition::PartitionRegistration;
use self::topics::TopicsImage;
use crate::error::ReplayError;
use crate::ids::{DIRECTORY_MIGRATING, DIRECTORY_UNASSIGNED};
use crate::placement::UsableBroker;

/// Topic config key of the minimum ISR size (and its broker-level synonym).
pub const MIN_INSYNC_REPLICAS_CONFIG: &str = "min.insync.replicas";

/// Topic config key enabling unclean leader election (and its broker-level synonym).
pub const UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG: &str = "unclean.leader.election.enable";

/// The producer-id allocation state (`ProducerIdsImage`): the next block starts at
/// `next_producer_id`; -1 before the first ProducerIdsRecord.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProducerIdsImage {
    /// First id of the next block, or -1 if no block was ever allocated.
    pub next_producer_id: i64,
    /// Broker that received the last block (kept so the image writes the same record back).
    pub last_broker_id: i32,
    /// Epoch of that broker when it received the block.
    pub last_broker_epoch: i64,
}

impl ProducerIdsImage {
    /// ProducerIdsRecord: the next block must start after the current one
    /// (`ProducerIdControlManager.replay`).
    ///
    /// # Errors
    /// [`ReplayError::ProducerIdNotIncreasing`] if it does not.
    pub fn replay(&mut self, record: &ProducerIdsRecord) -> Result<(), ReplayError> {
        let current = self.next_producer_id;
        if current != -1 && record.next_producer_id <= current {
            return Err(ReplayError::ProducerIdNotIncreasing {
                next: record.next_producer_id,
                current,
            });
        }
        self.next_producer_id = record.next_producer_id;
        self.last_broker_id = record.broker_id;
        self.last_broker_epoch = record.broker_epoch;
        Ok(())
    }
}

impl Default for ProducerIdsImage {
    fn default() -> Self {
        ProducerIdsImage {
            next_producer_id: -1,
            last_broker_id: -1,
            last_broker_epoch: -1,
        }
    }
}

/// A metadata transaction that began but has not ended (`OffsetControlManager`): an abort
/// restores `before`.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenTransaction {
    /// Offset of the BeginTransactionRecord.
    pub start_offset: i64,
    /// Transaction name from the BeginTransactionRecord.
    pub name: Option<String>,
    /// The image just before the BeginTransactionRecord.
    pub before: MetadataImage,
}

/// The whole metadata state at one log offset.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetadataImage {
    /// Finalized features (metadata.version first of all).
    pub features: FeaturesImage,
    /// Broker and controller registrations.
    pub cluster: ClusterImage,
    /// Topics and partitions with their broker indexes.
    pub topics: TopicsImage,
    /// Dynamic configs.
    pub configs: ConfigsImage,
    /// Producer-id allocation.
    pub producer_ids: ProducerIdsImage,
    /// Records kept faithfully but not acted on: ACLs, client quotas, SCRAM credentials,
    /// delegation tokens, ZK migration state.
    pub other: OtherRecordsImage,
    /// An open metadata transaction, if any.
    pub transaction: Option<Arc<OpenTransaction>>,
    /// Offset of the last record replayed, -1 for an empty image.
    pub last_offset: i64,
    /// Number of data records replayed (0 ⇔ the log holds no metadata records: bootstrap needed).
    pub records_replayed: u64,
}

impl MetadataImage {
    /// An image with nothing replayed.
    pub fn empty() -> Self {
        MetadataImage {
            last_offset: -1,
            ..MetadataImage::default()
        }
    }

    /// The finalized metadata.version, falling back to the minimum this controller supports.
    pub fn metadata_version(&self) -> MetadataVersion {
        self.features.metadata_version_or_minimum()
    }

    /// Brokers the replica placer may use (`BrokerHeartbeatManager.usableBrokers`): every
    /// registered broker not in controlled shutdown and with a directory that is not cordoned
    /// (Kafka 4.4, KIP-1066), with its rack and fenced state.
    ///
    /// Listed in the order Java's heartbeat manager (a `HashMap<Integer, _>`) iterates them,
    /// assuming registration in id order.
    pub fn usable_brokers(&self) -> Vec<UsableBroker> {
        let brokers: Vec<UsableBroker> = self
            .cluster
            .brokers()
            .filter(|b| !b.in_controlled_shutdown && b.has_uncordoned_directories())
            .map(|b| UsableBroker {
                id: b.id,
                rack: b.rack.clone(),
                fenced: b.fenced,
            })
            .collect();
        let hashes: Vec<i32> = brokers.iter().map(|b| b.id).collect();
        crate::java_order::java_hash_map_order(&hashes)
            .into_iter()
            .map(|i| brokers[i].clone())
            .collect()
    }

    /// The directory a new replica on `broker_id` gets (`KRaftClusterDescriber.defaultDir` +
    /// `ClusterControlManager.defaultDir`): MIGRATING before MV 3.7-IV2; otherwise the broker's
    /// only directory, UNASSIGNED if it has several (or is not registered), MIGRATING if none.
    pub fn default_dir(&self, broker_id: i32) -> Uuid {
        if !self.metadata_version().is_directory_assignment_supported() {
            return DIRECTORY_MIGRATING;
        }
        match self.cluster.broker(broker_id) {
            None => DIRECTORY_UNASSIGNED,
            Some(b) => match b.directories.as_slice() {
                [] => DIRECTORY_MIGRATING,
                [only] => *only,
                _ => DIRECTORY_UNASSIGNED,
            },
        }
    }

    /// `LeaderAcceptor`: `broker_id` is active and its replica's directory is online.
    pub fn is_acceptable_leader(&self, broker_id: i32, partition: &PartitionRegistration) -> bool {
        self.cluster.is_active(broker_id)
            && partition
                .directory(broker_id)
                .is_some_and(|dir| self.cluster.has_online_dir(broker_id, &dir))
    }

    /// The effective value of a topic config whose broker-level synonym has the same name
    /// (`KafkaConfigSchema.resolveEffectiveTopicConfig`): topic config, then this controller's
    /// node config, then the cluster default, then `static_value`.
    pub fn topic_config(
        &self,
        topic_name: &str,
        key: &str,
        node_id: i32,
        static_value: &str,
    ) -> String {
        self.configs
            .value(resource_type::TOPIC, topic_name, key)
            .or_else(|| {
                self.configs
                    .value(resource_type::BROKER, &node_id.to_string(), key)
            })
            .or_else(|| self.configs.value(resource_type::BROKER, "", key))
            .cloned()
            .unwrap_or_else(|| static_value.to_owned())
    }

    /// `getTopicEffectiveMinIsr`: `min.insync.replicas` capped at the replication factor
    /// (partition 0's replica count).
    pub fn effective_min_isr(&self, topic_id: &Uuid, node_id: i32, static_min_isr: i32) -> usize {
        let Some(topic) = self.topics.get(topic_id) else {
            return 1;
        };
        let configured = self
            .topic_config(
                &topic.name,
                MIN_INSYNC_REPLICAS_CONFIG,
                node_id,
                &static_min_isr.to_string(),
            )
            .parse::<i64>()
            .unwrap_or(i64::from(static_min_isr))
            .max(0) as usize;
        let replication_factor = topic
            .partitions
            .get(&0)
            .map_or(usize::MAX, |p| p.replicas.len());
        configured.min(replication_factor)
    }

    /// `uncleanLeaderElectionEnabledForTopic`.
    pub fn unclean_election_enabled(
        &self,
        topic_name: &str,
        node_id: i32,
        static_enabled: bool,
    ) -> bool {
        self.topic_config(
            topic_name,
            UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG,
            node_id,
            &static_enabled.to_string(),
        )
        .eq_ignore_ascii_case("true")
    }

    /// Checks the invariants every image must keep, returning the first violation: every
    /// partition's leader is in its ISR or -1, ISR ⊆ replicas, one directory per replica, and
    /// the broker indexes agree with the partitions. O(partitions): for tests and assertions
    /// on small images.
    pub fn check_invariants(&self) -> Result<(), String> {
        for topic in self.topics.iter() {
            for (partition_id, p) in topic.partitions.iter() {
                p.check_invariants()
                    .map_err(|e| format!("{}-{partition_id}: {e}", topic.name))?;
            }
        }
        self.topics.check_indexes()
    }
}
