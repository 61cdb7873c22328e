//! Partition reassignment (KIP-455): AlterPartitionReassignments and ListPartitionReassignments
//! (Kafka 4.1.2's `ReplicationControlManager.alterPartitionReassignments` /
//! `changePartitionReassignment` / `cancelPartitionReassignment` / `listPartitionReassignments`,
//! `PartitionReassignmentReplicas`, `PartitionReassignmentRevert`).
//!
//! A reassignment goes through up to three states, each a PartitionChangeRecord:
//!
//! 1. The request writes `Replicas = target ++ removing` (removing = current − target, adding =
//!    target − current, both ascending), `AddingReplicas`, `RemovingReplicas` and the new
//!    replicas' `Directories`. If the ISR already covers the target (e.g. a pure reordering),
//!    [`PartitionChangeBuilder`] completes it in this same record.
//! 2. Brokers replicate to the adding replicas; the partition leader adds them to the ISR with
//!    AlterPartition.
//! 3. The change that makes the ISR contain every target replica (an AlterPartition, or an ISR
//!    change when a broker is fenced, shuts down or is unregistered) also drops the removing
//!    replicas from `Replicas`/ISR, clears `AddingReplicas`/`RemovingReplicas`, and moves the
//!    leadership (leader epoch + 1) if the leader was removed — all done by
//!    [`PartitionChangeBuilder`]'s reassignment completion, which every ISR change goes through.
//!
//! Cancelling (`Replicas` null) reverts to the original replicas (current minus adding) and
//! ISR (minus adding); if nothing of the ISR would remain, the first original replica becomes
//! the ISR, which needs `unclean.leader.election.enable` on the topic.

use crate::api::{message_text, ControllerApi};
use crate::validate::StringCheck;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::alter_partition_reassignments_request::ReassignablePartition;
use kafka_protocol::messages::alter_partition_reassignments_response::{
    ReassignablePartitionResponse, ReassignableTopicResponse,
};
use kafka_protocol::messages::list_partition_reassignments_response::{
    OngoingPartitionReassignment, OngoingTopicReassignment,
};
use kafka_protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, BrokerId,
    ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::ApiMessageAndVersion;
use uuid::Uuid;

use super::leader_isr::partition_change_record;
use crate::controller::{ControllerConfig, ControllerResult, MAX_RECORDS_PER_BATCH};
use crate::error::ApiError;
use crate::image::partition::PartitionRegistration;
use crate::image::topics::TopicImage;
use crate::image::MetadataImage;
use crate::partition_change::{Election, PartitionChangeBuilder};

/// The replica lists of a reassignment (`PartitionReassignmentReplicas(current, target)`):
/// `removing` = current − target and `adding` = target − current, both ascending (Java's
/// `TreeSet`), and `replicas` = target followed by `removing`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReassignmentReplicas {
    /// Replicas being removed, ascending.
    pub removing: Vec<i32>,
    /// Replicas being added, ascending.
    pub adding: Vec<i32>,
    /// The replica list while the reassignment runs.
    pub replicas: Vec<i32>,
}

impl ReassignmentReplicas {
    /// The lists for moving `current` to `target`.
    pub fn new(current: &[i32], target: &[i32]) -> Self {
        let difference = |a: &[i32], b: &[i32]| {
            let mut d: Vec<i32> = a.iter().copied().filter(|r| !b.contains(r)).collect();
            d.sort_unstable();
            d.dedup();
            d
        };
        let removing = difference(current, target);
        let adding = difference(target, current);
        let mut replicas = target.to_vec();
        replicas.extend(&removing);
        ReassignmentReplicas {
            removing,
            adding,
            replicas,
        }
    }
}

/// What cancelling a reassignment reverts to (`PartitionReassignmentRevert`): the original
/// replicas (current minus adding, order kept) and ISR (minus adding); `unclean` when no ISR
/// member would remain and the first original replica is made the ISR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReassignmentRevert {
    /// Replica list after the revert.
    pub replicas: Vec<i32>,
    /// ISR after the revert.
    pub isr: Vec<i32>,
    /// True if the ISR had to be made up (needs unclean leader election).
    pub unclean: bool,
}

impl ReassignmentRevert {
    /// The revert of `partition`'s ongoing reassignment.
    ///
    /// # Errors
    /// INVALID_REPLICA_ASSIGNMENT if every replica is an adding replica (unreachable for a
    /// partition created with replicas).
    pub fn new(partition: &PartitionRegistration) -> Result<Self, ApiError> {
        let adding = &partition.adding_replicas;
        let replicas: Vec<i32> = partition
            .replicas
            .iter()
            .copied()
            .filter(|r| !adding.contains(r))
            .collect();
        let mut isr: Vec<i32> = partition
            .isr
            .iter()
            .copied()
            .filter(|r| !adding.contains(r))
            .collect();
        let mut unclean = false;
        if isr.is_empty() {
            let Some(first) = replicas.first() else {
                return Err(ApiError::new(
                    ResponseError::InvalidReplicaAssignment,
                    "Invalid replica assignment: addingReplicas contains all replicas.",
                ));
            };
            isr.push(*first);
            unclean = true;
        }
        Ok(ReassignmentRevert {
            replicas,
            isr,
            unclean,
        })
    }
}

fn builder<'a>(
    image: &'a MetadataImage,
    config: &ControllerConfig,
    topic: &TopicImage,
    partition_id: i32,
    partition: &'a PartitionRegistration,
    acceptable: &'a dyn Fn(i32) -> bool,
    default_dir: &'a dyn Fn(i32) -> Uuid,
) -> PartitionChangeBuilder<'a> {
    let min_isr = image.effective_min_isr(&topic.id, config.node_id, config.min_insync_replicas);
    PartitionChangeBuilder::new(
        partition,
        topic.id,
        partition_id,
        acceptable,
        image.metadata_version(),
        min_isr,
        default_dir,
    )
    .set_elr_enabled(image.features.is_elr_enabled())
}

/// `cancelPartitionReassignment`.
fn cancel(
    image: &MetadataImage,
    config: &ControllerConfig,
    topic: &TopicImage,
    partition_id: i32,
    partition: &PartitionRegistration,
) -> Result<Option<ApiMessageAndVersion>, ApiError> {
    if !partition.is_reassignment_in_progress() {
        return Err(ApiError::new(
            ResponseError::NoReassignmentInProgress,
            "No partition reassignment is in progress.",
        ));
    }
    let revert = ReassignmentRevert::new(partition)?;
    let unclean_enabled = image.unclean_election_enabled(
        &topic.name,
        config.node_id,
        config.unclean_leader_election_enable,
    );
    if revert.unclean && !unclean_enabled {
        return Err(ApiError::new(
            ResponseError::InvalidReplicaAssignment,
            format!(
                "Unable to revert partition assignment for {}:{partition_id} because it would require an unclean \
                 leader election.",
                topic.name
            ),
        ));
    }
    let acceptable = |r: i32| image.is_acceptable_leader(r, partition);
    let default_dir = |b: i32| image.default_dir(b);
    let mut b = builder(
        image,
        config,
        topic,
        partition_id,
        partition,
        &acceptable,
        &default_dir,
    );
    if unclean_enabled {
        b = b.set_election(Election::Unclean);
    }
    let change = b
        .set_target_isr(revert.isr)
        .set_target_replicas(revert.replicas)
        .set_target_removing(Vec::new())
        .set_target_adding(Vec::new())
        .build();
    Ok(change.map(|c| partition_change_record(&c, image.metadata_version())))
}

/// `validatePartitionReplicationFactorUnchanged` (KIP-860, request v1 with
/// `AllowReplicationFactorChange=false`): the replication factor is the size of replicas ∪
/// adding − removing while a reassignment runs, else the replica count.
fn check_replication_factor_unchanged(
    partition: &PartitionRegistration,
    target: &[i32],
) -> Result<(), ApiError> {
    let current = if partition.is_reassignment_in_progress() {
        let mut set: Vec<i32> = partition
            .replicas
            .iter()
            .chain(&partition.adding_replicas)
            .copied()
            .filter(|r| !partition.removing_replicas.contains(r))
            .collect();
        set.sort_unstable();
        set.dedup();
        set.len()
    } else {
        partition.replicas.len()
    };
    if current != target.len() {
        return Err(ApiError::new(
            ResponseError::InvalidReplicationFactor,
            format!(
                "The replication factor is changed from {current} to {}",
                target.len()
            ),
        ));
    }
    Ok(())
}

/// `changePartitionReassignment`.
fn change(
    image: &MetadataImage,
    config: &ControllerConfig,
    topic: &TopicImage,
    partition_id: i32,
    partition: &PartitionRegistration,
    target: &[i32],
    allow_replication_factor_change: bool,
) -> Result<Option<ApiMessageAndVersion>, ApiError> {
    super::topics::validate_manual_assignment(image, target, None)?;
    if !allow_replication_factor_change {
        check_replication_factor_unchanged(partition, target)?;
    }
    let reassignment = ReassignmentReplicas::new(&partition.replicas, target);
    let acceptable = |r: i32| image.is_acceptable_leader(r, partition);
    let default_dir = |b: i32| image.default_dir(b);
    let mut b = builder(
        image,
        config,
        topic,
        partition_id,
        partition,
        &acceptable,
        &default_dir,
    );
    // Like Java, only non-empty lists are set: an empty one keeps the partition's current list.
    if reassignment.replicas != partition.replicas {
        b = b.set_target_replicas(reassignment.replicas);
    }
    if !reassignment.removing.is_empty() {
        b = b.set_target_removing(reassignment.removing);
    }
    if !reassignment.adding.is_empty() {
        b = b.set_target_adding(reassignment.adding);
    }
    Ok(b.build()
        .map(|c| partition_change_record(&c, image.metadata_version())))
}

/// `alterPartitionReassignment`: the record (if any) for one partition.
fn alter_one(
    image: &MetadataImage,
    config: &ControllerConfig,
    topic_name: &str,
    target: &ReassignablePartition,
    allow_replication_factor_change: bool,
) -> Result<Option<ApiMessageAndVersion>, ApiError> {
    let Some(topic) = image.topics.get_by_name(topic_name) else {
        return Err(ApiError::new(
            ResponseError::UnknownTopicOrPartition,
            format!("Unable to find a topic named {topic_name}."),
        ));
    };
    let partition_id = target.partition_index;
    let Some(partition) = topic.partitions.get(&partition_id) else {
        return Err(ApiError::new(
            ResponseError::UnknownTopicOrPartition,
            format!("Unable to find partition {topic_name}:{partition_id}."),
        ));
    };
    match &target.replicas {
        None => cancel(image, config, topic, partition_id, partition),
        Some(replicas) => {
            let replicas: Vec<i32> = replicas.iter().map(|b| b.0).collect();
            change(
                image,
                config,
                topic,
                partition_id,
                partition,
                &replicas,
                allow_replication_factor_change,
            )
        }
    }
}

/// AlterPartitionReassignments (api 45, v0-1): starts, changes or cancels (null `Replicas`)
/// the reassignment of each listed partition.
///
/// Per partition, in Kafka's order: UNKNOWN_TOPIC_OR_PARTITION (topic, then partition);
/// cancelling: NO_REASSIGNMENT_IN_PROGRESS, INVALID_REPLICA_ASSIGNMENT (revert needs an unclean
/// election the topic does not allow); changing: INVALID_REPLICA_ASSIGNMENT (empty, duplicate or
/// unregistered brokers), INVALID_REPLICATION_FACTOR (v1 with `AllowReplicationFactorChange` =
/// false and a different count). A partition whose record would exceed 10,000 records gets
/// UNKNOWN_SERVER_ERROR (Java's `BoundedList`). The top-level error is always NONE; the
/// response echoes `AllowReplicationFactorChange`. Records: at most one PartitionChangeRecord
/// per partition (none if nothing changes), in one atomic batch.
pub fn alter_partition_reassignments(
    image: &MetadataImage,
    config: &ControllerConfig,
    request: &AlterPartitionReassignmentsRequest,
) -> ControllerResult<AlterPartitionReassignmentsResponse> {
    let allow = request.allow_replication_factor_change;
    let mut records = Vec::new();
    let mut responses = Vec::with_capacity(request.topics.len());
    for topic in &request.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for target in &topic.partitions {
            let error = match alter_one(image, config, topic.name.as_str(), target, allow) {
                Ok(Some(_)) if records.len() >= MAX_RECORDS_PER_BATCH => {
                    ApiError::code_only(ResponseError::UnknownServerError)
                }
                Ok(record) => {
                    records.extend(record);
                    ApiError::NONE
                }
                Err(e) => e,
            };
            if error.is_failure() {
                tracing::info!(
                    topic = topic.name.as_str(),
                    partition = target.partition_index,
                    code = error.code,
                    message = error.message.as_deref().unwrap_or(""),
                    "unable to alter partition reassignment"
                );
            }
            partitions.push(
                ReassignablePartitionResponse::default()
                    .with_partition_index(target.partition_index)
                    .with_error_code(error.code)
                    .with_error_message(error.message.map(StrBytes::from_string)),
            );
        }
        responses.push(
            ReassignableTopicResponse::default()
                .with_name(topic.name.clone())
                .with_partitions(partitions),
        );
    }
    ControllerResult::atomic(
        records,
        AlterPartitionReassignmentsResponse::default()
            .with_allow_replication_factor_change(allow)
            .with_error_code(0)
            .with_error_message(None)
            .with_responses(responses),
    )
}

fn ongoing(partition_id: i32, p: &PartitionRegistration) -> OngoingPartitionReassignment {
    let ids = |v: &[i32]| v.iter().map(|b| BrokerId(*b)).collect::<Vec<_>>();
    OngoingPartitionReassignment::default()
        .with_partition_index(partition_id)
        .with_replicas(ids(&p.replicas))
        .with_adding_replicas(ids(&p.adding_replicas))
        .with_removing_replicas(ids(&p.removing_replicas))
}

fn topic_reassignments(
    topic: &TopicImage,
    partition_ids: impl Iterator<Item = i32>,
) -> Option<OngoingTopicReassignment> {
    let partitions: Vec<OngoingPartitionReassignment> = partition_ids
        .filter_map(|id| {
            topic
                .partitions
                .get(&id)
                .filter(|p| p.is_reassignment_in_progress())
                .map(|p| ongoing(id, p))
        })
        .collect();
    (!partitions.is_empty()).then(|| {
        OngoingTopicReassignment::default()
            .with_name(TopicName(StrBytes::from_string(topic.name.to_string())))
            .with_partitions(partitions)
    })
}

/// ListPartitionReassignments (api 46, v0): the partitions with a reassignment in progress
/// (replicas, adding, removing), answered from `image` (the committed image, as Java reads at
/// the last stable offset) by any controller. `Topics` null lists every reassigning partition;
/// otherwise only the listed ones, skipping unknown topics and partitions; an empty list gets
/// an empty answer. Topics without a listed reassigning partition are left out. Never an
/// error. Java lists "all" in its hash map's order; here topics come by id and partitions by
/// index.
pub fn list_partition_reassignments(
    image: &MetadataImage,
    request: &ListPartitionReassignmentsRequest,
) -> ListPartitionReassignmentsResponse {
    let topics: Vec<OngoingTopicReassignment> = match &request.topics {
        None => image
            .topics
            .iter()
            .filter_map(|t| topic_reassignments(t, t.partitions.keys().copied()))
            .collect(),
        Some(requested) => requested
            .iter()
            .filter_map(|r| {
                let topic = image.topics.get_by_name(r.name.as_str())?;
                topic_reassignments(topic, r.partition_indexes.iter().copied())
            })
            .collect(),
    };
    ListPartitionReassignmentsResponse::default()
        .with_error_code(0)
        .with_error_message(None)
        .with_topics(topics)
}

impl ControllerApi for AlterPartitionReassignmentsRequest {
    type Response = AlterPartitionReassignmentsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        check.each("name", self.topics.iter().map(|t| t.name.as_str()));
    }

    /// The top-level code and every requested partition's.
    fn error_response(
        &self,
        code: i16,
        message: Option<&str>,
    ) -> AlterPartitionReassignmentsResponse {
        let topics = self.topics.iter().map(|t| {
            ReassignableTopicResponse::default()
                .with_name(t.name.clone())
                .with_partitions(
                    t.partitions
                        .iter()
                        .map(|p| {
                            ReassignablePartitionResponse::default()
                                .with_partition_index(p.partition_index)
                                .with_error_code(code)
                                .with_error_message(message_text(message))
                        })
                        .collect(),
                )
        });
        AlterPartitionReassignmentsResponse::default()
            .with_error_code(code)
            .with_error_message(message_text(message))
            .with_responses(topics.collect())
    }
}

impl ControllerApi for ListPartitionReassignmentsRequest {
    type Response = ListPartitionReassignmentsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        check.each(
            "name",
            self.topics.iter().flatten().map(|t| t.name.as_str()),
        );
    }

    fn error_response(
        &self,
        code: i16,
        message: Option<&str>,
    ) -> ListPartitionReassignmentsResponse {
        ListPartitionReassignmentsResponse::default()
            .with_error_code(code)
            .with_error_message(message_text(message))
    }
}
