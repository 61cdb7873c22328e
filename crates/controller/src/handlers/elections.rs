//! Leader elections the active controller runs on its own: preferred-leader rebalancing
//! (`auto.leader.rebalance.enable`, every `leader.imbalance.check.interval.seconds`) and
//! unclean elections for leaderless partitions of topics with `unclean.leader.election.enable`
//! (every `unclean.leader.election.interval.ms`). Kafka 4.1.2's
//! `ReplicationControlManager.maybeBalancePartitionLeaders` / `maybeElectUncleanLeaders`.

use kraftwerk_records::metadata::ApiMessageAndVersion;

use super::leader_isr::partition_change_record;
use crate::controller::ControllerConfig;
use crate::image::topics::TopicIdPartition;
use crate::image::MetadataImage;
use crate::partition_change::{Election, PartitionChangeBuilder};

/// Most elections per run (`MAX_ELECTIONS_PER_IMBALANCE`); a run that hits it is repeated at once.
pub const MAX_ELECTIONS_PER_RUN: usize = 1_000;

fn elect(
    image: &MetadataImage,
    config: &ControllerConfig,
    tp: &TopicIdPartition,
    election: Election,
) -> Option<ApiMessageAndVersion> {
    let topic = image.topics.get(&tp.topic_id)?;
    let partition = topic.partitions.get(&tp.partition_id)?;
    let acceptable = |r: i32| {
        image.cluster.is_active(r)
            && partition
                .directory(r)
                .is_some_and(|d| image.cluster.has_online_dir(r, &d))
    };
    let default_dir = |b: i32| image.default_dir(b);
    let mv = image.metadata_version();
    let min_isr = image.effective_min_isr(&tp.topic_id, config.node_id, config.min_insync_replicas);
    PartitionChangeBuilder::new(
        partition,
        tp.topic_id,
        tp.partition_id,
        &acceptable,
        mv,
        min_isr,
        &default_dir,
    )
    .set_election(election)
    .set_elr_enabled(image.features.is_elr_enabled())
    .build()
    .map(|change| partition_change_record(&change, mv))
}

/// Preferred-leader elections for up to [`MAX_ELECTIONS_PER_RUN`] imbalanced partitions.
/// Returns the records and whether the run should be repeated immediately.
pub fn balance_partition_leaders(
    image: &MetadataImage,
    config: &ControllerConfig,
) -> (Vec<ApiMessageAndVersion>, bool) {
    let mut records = Vec::new();
    for tp in image.topics.imbalanced_partitions() {
        if records.len() >= MAX_ELECTIONS_PER_RUN {
            break;
        }
        if let Some(record) = elect(image, config, tp, Election::Preferred) {
            records.push(record);
        }
    }
    let more = records.len() >= MAX_ELECTIONS_PER_RUN;
    (records, more)
}

/// Unclean elections for leaderless partitions whose topic allows them.
pub fn elect_unclean_leaders(
    image: &MetadataImage,
    config: &ControllerConfig,
) -> (Vec<ApiMessageAndVersion>, bool) {
    let mut records = Vec::new();
    for tp in image.topics.partitions_without_leader() {
        if records.len() >= MAX_ELECTIONS_PER_RUN {
            break;
        }
        let Some(topic) = image.topics.get(&tp.topic_id) else {
            continue;
        };
        if !image.unclean_election_enabled(
            &topic.name,
            config.node_id,
            config.unclean_leader_election_enable,
        ) {
            continue;
        }
        if let Some(record) = elect(image, config, &tp, Election::Unclean) {
            tracing::warn!(topic = %topic.name, partition = tp.partition_id, "unclean leader election");
            records.push(record);
        }
    }
    let more = records.len() >= MAX_ELECTIONS_PER_RUN;
    (records, more)
}
