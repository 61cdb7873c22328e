//! The field moves of [`super`]: meanings that live in different fields at different versions,
//! the only per-api code of adaptation. Each move runs before the generic reset, reading
//! whichever field is populated and filling the one the target version carries.

use kafka_protocol::messages::alter_partition_request::BrokerState;
use kafka_protocol::messages::end_quorum_epoch_request::ReplicaInfo;
use kafka_protocol::messages::{
    AlterPartitionRequest, BrokerId, EndQuorumEpochRequest, FetchRequest, FetchResponse,
    RequestKind, ResponseKind, TopicName, UpdateFeaturesRequest, VoteRequest,
};
use uuid::Uuid;

use super::{metadata_topic_name, AdaptError, METADATA_TOPIC_ID, METADATA_TOPIC_NAME};

/// Last Fetch version that names topics; v13+ use topic ids (KIP-516).
const FETCH_LAST_TOPIC_NAME_VERSION: i16 = 12;
/// Last Fetch version with the top-level `ReplicaId`; v15+ use `ReplicaState` (KIP-903).
const FETCH_LAST_LEGACY_REPLICA_ID_VERSION: i16 = 14;
/// `UpgradeType` codes (`FeatureUpdate.UpgradeType`).
const UPGRADE_TYPE_UPGRADE: i8 = 1;
const UPGRADE_TYPE_SAFE_DOWNGRADE: i8 = 2;

/// The moves of a request body (Fetch, Vote, EndQuorumEpoch, AlterPartition, UpdateFeatures).
pub(super) fn request(request: &mut RequestKind, version: i16) -> Result<(), AdaptError> {
    match request {
        RequestKind::Fetch(r) => fetch_request(r, version)?,
        RequestKind::Vote(r) => vote_request(r, version)?,
        RequestKind::EndQuorumEpoch(r) => end_quorum_epoch_request(r, version),
        RequestKind::AlterPartition(r) => alter_partition_request(r, version),
        RequestKind::UpdateFeatures(r) => update_features_request(r, version),
        _ => {}
    }
    Ok(())
}

/// The moves of a response body (Fetch).
pub(super) fn response(response: &mut ResponseKind, version: i16) -> Result<(), AdaptError> {
    match response {
        ResponseKind::Fetch(r) => fetch_response(r, version),
        _ => Ok(()),
    }
}

/// Fills the topic reference the version uses: a name up to `last_name_version`, an id after.
/// Only the metadata topic can be translated; anything else must already carry what is needed.
fn topic_reference(
    name: &mut TopicName,
    id: &mut Uuid,
    version: i16,
    last_name_version: i16,
) -> Result<(), AdaptError> {
    if version <= last_name_version {
        if name.0.is_empty() {
            if *id != METADATA_TOPIC_ID {
                return Err(AdaptError::TopicNameUnknown { topic_id: *id });
            }
            *name = metadata_topic_name();
        }
    } else if id.is_nil() {
        if name.0.as_str() != METADATA_TOPIC_NAME {
            return Err(AdaptError::TopicIdUnknown {
                topic_name: name.0.to_string(),
            });
        }
        *id = METADATA_TOPIC_ID;
    }
    Ok(())
}

fn fetch_request(request: &mut FetchRequest, version: i16) -> Result<(), AdaptError> {
    let unset = BrokerId(-1);
    if version <= FETCH_LAST_LEGACY_REPLICA_ID_VERSION {
        if request.replica_state.replica_id != unset {
            request.replica_id = request.replica_state.replica_id;
        }
    } else if request.replica_state.replica_id == unset {
        request.replica_state.replica_id = request.replica_id;
    }
    for topic in &mut request.topics {
        topic_reference(
            &mut topic.topic,
            &mut topic.topic_id,
            version,
            FETCH_LAST_TOPIC_NAME_VERSION,
        )?;
    }
    for topic in &mut request.forgotten_topics_data {
        topic_reference(
            &mut topic.topic,
            &mut topic.topic_id,
            version,
            FETCH_LAST_TOPIC_NAME_VERSION,
        )?;
    }
    Ok(())
}

fn fetch_response(response: &mut FetchResponse, version: i16) -> Result<(), AdaptError> {
    for topic in &mut response.responses {
        topic_reference(
            &mut topic.topic,
            &mut topic.topic_id,
            version,
            FETCH_LAST_TOPIC_NAME_VERSION,
        )?;
    }
    Ok(())
}

fn vote_request(request: &mut VoteRequest, version: i16) -> Result<(), AdaptError> {
    let pre_vote = request
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter())
        .any(|p| p.pre_vote);
    if pre_vote && version < 2 {
        return Err(AdaptError::PreVoteNotSupported { version });
    }
    Ok(())
}

fn end_quorum_epoch_request(request: &mut EndQuorumEpochRequest, version: i16) {
    for partition in request
        .topics
        .iter_mut()
        .flat_map(|t| t.partitions.iter_mut())
    {
        if version == 0 {
            if partition.preferred_successors.is_empty() {
                partition.preferred_successors = partition
                    .preferred_candidates
                    .iter()
                    .map(|c| c.candidate_id.0)
                    .collect();
            }
        } else if partition.preferred_candidates.is_empty() {
            partition.preferred_candidates = partition
                .preferred_successors
                .iter()
                .map(|id| {
                    ReplicaInfo::default()
                        .with_candidate_id(BrokerId(*id))
                        .with_candidate_directory_id(Uuid::nil())
                })
                .collect();
        }
    }
}

fn alter_partition_request(request: &mut AlterPartitionRequest, version: i16) {
    for partition in request
        .topics
        .iter_mut()
        .flat_map(|t| t.partitions.iter_mut())
    {
        if version <= 2 {
            if partition.new_isr.is_empty() {
                partition.new_isr = partition
                    .new_isr_with_epochs
                    .iter()
                    .map(|b| b.broker_id)
                    .collect();
            }
        } else if partition.new_isr_with_epochs.is_empty() {
            partition.new_isr_with_epochs = partition
                .new_isr
                .iter()
                .map(|id| {
                    BrokerState::default()
                        .with_broker_id(*id)
                        .with_broker_epoch(-1)
                })
                .collect();
        }
    }
}

fn update_features_request(request: &mut UpdateFeaturesRequest, version: i16) {
    for update in &mut request.feature_updates {
        if version == 0 {
            update.allow_downgrade =
                update.allow_downgrade || update.upgrade_type != UPGRADE_TYPE_UPGRADE;
        } else if update.allow_downgrade && update.upgrade_type == UPGRADE_TYPE_UPGRADE {
            update.upgrade_type = UPGRADE_TYPE_SAFE_DOWNGRADE;
        }
    }
}
