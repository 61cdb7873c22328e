//! AlterPartition and AssignReplicasToDirs (Kafka 4.1.2's `ReplicationControlManager.alterPartition`
//! / `validateAlterPartitionData` / `handleAssignReplicasToDirs`).

use crate::validate::StringCheck;
use std::collections::BTreeSet;

use crate::api::ControllerApi;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::alter_partition_request::BrokerState;
use kafka_protocol::messages::alter_partition_response::{PartitionData, TopicData};
use kafka_protocol::messages::assign_replicas_to_dirs_response as dirs_response;
use kafka_protocol::messages::{
    AlterPartitionRequest, AlterPartitionResponse, AssignReplicasToDirsRequest,
    AssignReplicasToDirsResponse,
};
use kraftwerk_records::metadata::ApiMessageAndVersion;

use super::leader_isr::{partition_change_record, LeaderIsrUpdater};
use crate::controller::{ControllerConfig, ControllerResult, RequestContext};
use crate::image::partition::{
    LeaderRecoveryState, PartitionRegistration, NO_LEADER, NO_LEADER_CHANGE,
};
use crate::image::topics::TopicIdPartition;
use crate::image::MetadataImage;
use crate::partition_change::{Election, PartitionChangeBuilder};

/// `validateAlterPartitionData`: the error for one partition, in Kafka's order.
fn validate(
    image: &MetadataImage,
    broker_id: i32,
    partition: Option<&PartitionRegistration>,
    data: &kafka_protocol::messages::alter_partition_request::PartitionData,
    new_isr: &[BrokerState],
) -> Result<(), ResponseError> {
    let Some(partition) = partition else {
        return Err(ResponseError::UnknownTopicOrPartition);
    };
    // Epochs ahead of ours mean this controller is stale (KAFKA-14154).
    if data.leader_epoch > partition.leader_epoch
        || data.partition_epoch > partition.partition_epoch
    {
        return Err(ResponseError::NotController);
    }
    if data.leader_epoch < partition.leader_epoch {
        return Err(ResponseError::FencedLeaderEpoch);
    }
    if broker_id != partition.leader {
        return Err(ResponseError::InvalidRequest);
    }
    if data.partition_epoch < partition.partition_epoch {
        return Err(ResponseError::InvalidUpdateVersion);
    }
    // `Replicas.validateIsr`: no duplicates, every member a replica. A list longer than the
    // replicas cannot be one (checked first, so a huge list costs nothing).
    if new_isr.len() > partition.replicas.len() {
        return Err(ResponseError::InvalidRequest);
    }
    let isr: Vec<i32> = new_isr.iter().map(|b| *b.broker_id).collect();
    let mut sorted = isr.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != isr.len() || !isr.iter().all(|r| partition.replicas.contains(r)) {
        return Err(ResponseError::InvalidRequest);
    }
    if !isr.contains(&partition.leader) {
        return Err(ResponseError::InvalidRequest);
    }
    let recovery =
        LeaderRecoveryState::of(data.leader_recovery_state).ok_or(ResponseError::InvalidRequest)?;
    if recovery == LeaderRecoveryState::Recovering && isr.len() > 1 {
        return Err(ResponseError::InvalidRequest);
    }
    if partition.leader_recovery_state == LeaderRecoveryState::Recovered
        && recovery == LeaderRecoveryState::Recovering
    {
        return Err(ResponseError::InvalidRequest);
    }
    // KIP-841: only registered, unfenced brokers not shutting down, at their registered epoch
    // (-1 = unknown, not checked), may join the ISR.
    let ineligible = new_isr
        .iter()
        .any(|b| match image.cluster.broker(*b.broker_id) {
            None => true,
            Some(r) => {
                r.in_controlled_shutdown
                    || r.fenced
                    || (b.broker_epoch != -1 && r.epoch != b.broker_epoch)
            }
        });
    if ineligible {
        return Err(ResponseError::IneligibleReplica);
    }
    Ok(())
}

/// AlterPartition (api 56, v2-3), sent by a partition leader to change its ISR.
///
/// STALE_BROKER_EPOCH for the whole request if the sender's epoch is not registered; per
/// partition UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, NOT_CONTROLLER (request epochs ahead
/// of ours), FENCED_LEADER_EPOCH, INVALID_REQUEST, INVALID_UPDATE_VERSION, INELIGIBLE_REPLICA
/// (case C17). On success one PartitionChangeRecord per changed partition, and a response
/// echoing the state after that record: partition epoch + 1, leader epoch + 1 only if the
/// record sets the leader. NEW_LEADER_ELECTED if completing a reassignment moved leadership.
/// Not atomic.
pub fn alter_partition(
    image: &MetadataImage,
    config: &ControllerConfig,
    ctx: &RequestContext,
    request: &AlterPartitionRequest,
) -> ControllerResult<AlterPartitionResponse> {
    let broker_id = *request.broker_id;
    if image.cluster.broker(broker_id).map(|b| b.epoch) != Some(request.broker_epoch) {
        return ControllerResult::of(
            Vec::new(),
            AlterPartitionResponse::default()
                .with_error_code(ResponseError::StaleBrokerEpoch.code()),
        );
    }
    let mv = image.metadata_version();
    let elr_enabled = image.features.is_elr_enabled();
    let default_dir = |broker: i32| image.default_dir(broker);
    let mut records: Vec<ApiMessageAndVersion> = Vec::new();
    let mut topics = Vec::with_capacity(request.topics.len());
    for topic_data in &request.topics {
        let mut partitions = Vec::with_capacity(topic_data.partitions.len());
        let topic = image.topics.get(&topic_data.topic_id);
        for data in &topic_data.partitions {
            let error_result = |e: ResponseError| {
                PartitionData::default()
                    .with_partition_index(data.partition_index)
                    .with_error_code(e.code())
            };
            let Some(topic) = topic else {
                partitions.push(error_result(ResponseError::UnknownTopicId));
                continue;
            };
            // v2 carries plain broker ids: their epochs are unknown (-1).
            let new_isr: Vec<BrokerState> = if ctx.api_version < 3 {
                data.new_isr
                    .iter()
                    .map(|b| {
                        BrokerState::default()
                            .with_broker_id(*b)
                            .with_broker_epoch(-1)
                    })
                    .collect()
            } else {
                data.new_isr_with_epochs.clone()
            };
            let partition = topic.partitions.get(&data.partition_index);
            if let Err(e) = validate(image, broker_id, partition.map(|p| &**p), data, &new_isr) {
                partitions.push(error_result(e));
                continue;
            }
            let partition = partition.expect("validated");
            let acceptable = |r: i32| {
                image.cluster.is_active(r)
                    && partition
                        .directory(r)
                        .is_some_and(|d| image.cluster.has_online_dir(r, &d))
            };
            let min_isr =
                image.effective_min_isr(&topic.id, config.node_id, config.min_insync_replicas);
            let mut builder = PartitionChangeBuilder::new(
                partition,
                topic.id,
                data.partition_index,
                &acceptable,
                mv,
                min_isr,
                &default_dir,
            )
            .set_elr_enabled(elr_enabled);
            if image.unclean_election_enabled(
                &topic.name,
                config.node_id,
                config.unclean_leader_election_enable,
            ) {
                builder = builder.set_election(Election::Unclean);
            }
            let recovery = LeaderRecoveryState::of(data.leader_recovery_state).expect("validated");
            let change = builder
                .set_target_isr(new_isr.iter().map(|b| *b.broker_id).collect())
                .set_target_leader_recovery_state(recovery)
                .build();
            let mut after = (**partition).clone();
            if let Some(change) = change {
                after = partition
                    .merge(&change)
                    .expect("a built change applies to its own partition");
                records.push(partition_change_record(&change, mv));
                if change.leader != broker_id && change.leader != NO_LEADER_CHANGE {
                    partitions.push(error_result(ResponseError::NewLeaderElected));
                    continue;
                }
            }
            partitions.push(
                PartitionData::default()
                    .with_partition_index(data.partition_index)
                    .with_error_code(0)
                    .with_leader_id(after.leader.into())
                    .with_isr(after.isr.iter().map(|b| (*b).into()).collect())
                    .with_leader_recovery_state(after.leader_recovery_state.value())
                    .with_leader_epoch(after.leader_epoch)
                    .with_partition_epoch(after.partition_epoch),
            );
        }
        topics.push(
            TopicData::default()
                .with_topic_id(topic_data.topic_id)
                .with_partitions(partitions),
        );
    }
    ControllerResult::of(
        records,
        AlterPartitionResponse::default().with_topics(topics),
    )
}

/// AssignReplicasToDirs (api 73, v0, MV ≥ 3.7-IV2): records which directory holds each of the
/// broker's replicas. Per partition UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, or
/// NOT_LEADER_OR_FOLLOWER (not a replica); a replica assigned to an offline directory also
/// loses leadership and ISR membership. Top-level UNSUPPORTED_VERSION before 3.7-IV2,
/// STALE_BROKER_EPOCH for a wrong epoch. Not atomic.
pub fn assign_replicas_to_dirs(
    image: &MetadataImage,
    config: &ControllerConfig,
    request: &AssignReplicasToDirsRequest,
) -> ControllerResult<AssignReplicasToDirsResponse> {
    let top_level = |e: ResponseError| {
        ControllerResult::of(
            Vec::new(),
            AssignReplicasToDirsResponse::default().with_error_code(e.code()),
        )
    };
    let mv = image.metadata_version();
    if !mv.is_directory_assignment_supported() {
        return top_level(ResponseError::UnsupportedVersion);
    }
    let broker_id = *request.broker_id;
    let Some(registration) = image.cluster.broker(broker_id) else {
        return top_level(ResponseError::StaleBrokerEpoch);
    };
    if registration.epoch != request.broker_epoch {
        return top_level(ResponseError::StaleBrokerEpoch);
    }
    let default_dir = |broker: i32| image.default_dir(broker);
    let mut records = Vec::new();
    let mut offline: Vec<TopicIdPartition> = Vec::new();
    let mut offline_seen: BTreeSet<TopicIdPartition> = BTreeSet::new();
    let mut directories = Vec::with_capacity(request.directories.len());
    for dir_data in &request.directories {
        let dir = dir_data.id;
        let dir_offline = !registration.has_online_dir(&dir);
        let mut topics = Vec::with_capacity(dir_data.topics.len());
        for topic_data in &dir_data.topics {
            let topic = image.topics.get(&topic_data.topic_id);
            let mut partitions = Vec::with_capacity(topic_data.partitions.len());
            for p in &topic_data.partitions {
                let error = match topic {
                    None => ResponseError::UnknownTopicId.code(),
                    Some(topic) => match topic.partitions.get(&p.partition_index) {
                        None => ResponseError::UnknownTopicOrPartition.code(),
                        Some(partition) if !partition.replicas.contains(&broker_id) => {
                            ResponseError::NotLeaderOrFollower.code()
                        }
                        Some(partition) => {
                            let acceptable = |r: i32| {
                                image.cluster.is_active(r)
                                    && partition
                                        .directory(r)
                                        .is_some_and(|d| image.cluster.has_online_dir(r, &d))
                            };
                            let min_isr = image.effective_min_isr(
                                &topic.id,
                                config.node_id,
                                config.min_insync_replicas,
                            );
                            let change = PartitionChangeBuilder::new(
                                partition,
                                topic.id,
                                p.partition_index,
                                &acceptable,
                                mv,
                                min_isr,
                                &default_dir,
                            )
                            .set_directory(broker_id, dir)
                            .build();
                            if let Some(change) = change {
                                records.push(partition_change_record(&change, mv));
                            }
                            if dir_offline {
                                let tp = TopicIdPartition {
                                    topic_id: topic.id,
                                    partition_id: p.partition_index,
                                };
                                if offline_seen.insert(tp) {
                                    offline.push(tp);
                                }
                            }
                            0
                        }
                    },
                };
                partitions.push(
                    dirs_response::PartitionData::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(error),
                );
            }
            topics.push(
                dirs_response::TopicData::default()
                    .with_topic_id(topic_data.topic_id)
                    .with_partitions(partitions),
            );
        }
        directories.push(
            dirs_response::DirectoryData::default()
                .with_id(dir)
                .with_topics(topics),
        );
    }
    if !offline.is_empty() {
        // Java computes these from the pre-request state too (the records above are not yet
        // replayed), so the leadership moves are generated against the same image.
        LeaderIsrUpdater { image, config }.generate(
            broker_id,
            NO_LEADER,
            NO_LEADER,
            &offline,
            &mut records,
        );
    }
    ControllerResult::of(
        records,
        AssignReplicasToDirsResponse::default().with_directories(directories),
    )
}

impl ControllerApi for AlterPartitionRequest {
    type Response = AlterPartitionResponse;

    /// No string fields.
    fn check_strings(&self, _check: &mut StringCheck) {}

    fn error_response(&self, code: i16, _message: Option<&str>) -> AlterPartitionResponse {
        AlterPartitionResponse::default().with_error_code(code)
    }

    fn summary(&self) -> Option<String> {
        let parts: Vec<String> = self
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions.iter().map(move |p| {
                    let isr: Vec<i32> = if p.new_isr_with_epochs.is_empty() {
                        p.new_isr.iter().map(|b| b.0).collect()
                    } else {
                        p.new_isr_with_epochs
                            .iter()
                            .map(|b| b.broker_id.0)
                            .collect()
                    };
                    format!(
                        "{}-{} isr={isr:?} leader_epoch={}",
                        t.topic_id, p.partition_index, p.leader_epoch
                    )
                })
            })
            .collect();
        Some(format!(
            "AlterPartition from broker {}: {}",
            self.broker_id.0,
            parts.join(", ")
        ))
    }
}

impl ControllerApi for AssignReplicasToDirsRequest {
    type Response = AssignReplicasToDirsResponse;

    /// No string fields.
    fn check_strings(&self, _check: &mut StringCheck) {}

    fn error_response(&self, code: i16, _message: Option<&str>) -> AssignReplicasToDirsResponse {
        AssignReplicasToDirsResponse::default().with_error_code(code)
    }
}
