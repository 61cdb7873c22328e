//! Admin APIs the controller serves besides the broker lifecycle: CreatePartitions,
//! ElectLeaders and UpdateFeatures (Kafka 4.1.2's
//! `ReplicationControlManager.createPartitions/electLeaders`,
//! `FeatureControlManager.updateFeatures` and the request-level checks of `ControllerApis`).
//! Authorization is not implemented. The config APIs are in [`super::configs`].

use crate::api::ControllerApi;
use crate::validate::StringCheck;
use std::collections::{BTreeMap, BTreeSet};

use crate::controller::ControllerRng;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use kafka_protocol::messages::update_features_response::UpdatableFeatureResult;
use kafka_protocol::messages::{
    CreatePartitionsRequest, CreatePartitionsResponse, ElectLeadersRequest, ElectLeadersResponse,
    TopicName, UpdateFeaturesRequest, UpdateFeaturesResponse,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{ApiMessageAndVersion, FeatureLevelRecord, NoOpRecord};
use kraftwerk_records::metadata_version::{
    controller_supported_features, Feature, MetadataVersion, METADATA_VERSION_FEATURE_NAME,
};

use super::default_message;
use super::leader_isr::partition_change_record;
use super::topics::new_partition;
use crate::controller::{
    ControllerConfig, ControllerResult, RequestContext, MAX_RECORDS_PER_BATCH,
};
use crate::error::ApiError;
use crate::image::features::KRAFT_VERSION_FEATURE_NAME;
use crate::image::MetadataImage;
use crate::partition_change::{Election, PartitionChangeBuilder};
use crate::placement;
use crate::validate::limits;
use crate::write::partition_record;

fn str_bytes(s: impl Into<String>) -> StrBytes {
    StrBytes::from_string(s.into())
}

// ---------------------------------------------------------------------------------------------
// CreatePartitions

fn partitions_result(name: &TopicName, error: &ApiError) -> CreatePartitionsTopicResult {
    CreatePartitionsTopicResult::default()
        .with_name(name.clone())
        .with_error_code(error.code)
        .with_error_message(error.message.clone().map(str_bytes))
}

fn create_partitions_for(
    image: &MetadataImage,
    rng: &mut ControllerRng,
    topic: &CreatePartitionsTopic,
    records: &mut Vec<ApiMessageAndVersion>,
) -> Result<(), ApiError> {
    let name = topic.name.as_str();
    let Some(existing) = image.topics.get_by_name(name) else {
        return Err(ApiError::code_only(ResponseError::UnknownTopicOrPartition));
    };
    let current = existing.partitions.len() as i32;
    if topic.count == current {
        return Err(ApiError::new(
            ResponseError::InvalidPartitions,
            format!("Topic already has {current} partition(s)."),
        ));
    }
    if topic.count < current {
        return Err(ApiError::new(
            ResponseError::InvalidPartitions,
            format!("The topic {name} currently has {current} partition(s); {} would not be an increase.", topic.count),
        ));
    }
    let additional = topic.count - current;
    if let Some(assignments) = &topic.assignments {
        if assignments.len() as i64 != i64::from(additional) {
            return Err(ApiError::new(
                ResponseError::InvalidReplicaAssignment,
                format!(
                    "Attempted to add {additional} additional partition(s), but only {} assignment(s) were specified.",
                    assignments.len()
                ),
            ));
        }
    }
    let Some(first) = existing.partitions.values().next() else {
        return Err(ApiError::new(
            ResponseError::UnknownServerError,
            format!("Invalid state: topic {name} appears to have no partitions."),
        ));
    };
    // Each new partition is one record of the atomic result: refuse a count that cannot fit
    // before placing anything. Java's `ReplicationControlManager.createPartitions` places them
    // all first (`StripedReplicaPlacer.place` for `count - current` partitions: with `count`
    // near `i32::MAX` an allocation bomb, fuzz/corpus/controller/found-create-partitions-*),
    // then overflows its `BoundedList` of MAX_RECORDS_PER_USER_OP records; we answer what
    // `QuorumController` answers that overflow elsewhere (POLICY_VIOLATION, case C14).
    if !limits::records_fit(records.len(), additional as usize) {
        return Err(limits::excessively_large());
    }
    let replication_factor = first.replicas.len();
    let placements: Vec<Vec<i32>> = match &topic.assignments {
        Some(assignments) => {
            let mut out = Vec::with_capacity(assignments.len());
            for (i, assignment) in assignments.iter().enumerate() {
                let replicas: Vec<i32> = assignment.broker_ids.iter().map(|b| **b).collect();
                super::topics::validate_manual_assignment(
                    image,
                    &replicas,
                    Some(replication_factor),
                )?;
                if !replicas.iter().any(|r| image.cluster.is_active(*r)) {
                    return Err(ApiError::new(
                        ResponseError::InvalidReplicaAssignment,
                        format!(
                            "All brokers specified in the manual partition assignment for partition {} are fenced or in \
                             controlled shutdown.",
                            current + i as i32
                        ),
                    ));
                }
                out.push(replicas);
            }
            out
        }
        None => placement::place(
            &mut rng.placement,
            &image.usable_brokers(),
            additional as usize,
            replication_factor as i32,
        )
        .map_err(|e| ApiError::new(ResponseError::InvalidReplicationFactor, e))?,
    };
    let mv = image.metadata_version();
    let mut topic_records = Vec::with_capacity(placements.len());
    for (i, replicas) in placements.into_iter().enumerate() {
        let isr: Vec<i32> = replicas
            .iter()
            .copied()
            .filter(|r| image.cluster.is_active(*r))
            .collect();
        if isr.is_empty() {
            return Err(ApiError::new(
                ResponseError::InvalidReplicationFactor,
                format!(
                    "Unable to replicate the partition {replication_factor} time(s): All brokers are currently fenced or \
                     in controlled shutdown."
                ),
            ));
        }
        topic_records.push(partition_record(
            existing.id,
            current + i as i32,
            &new_partition(image, replicas, isr),
            mv,
        ));
    }
    records.extend(topic_records);
    Ok(())
}

/// CreatePartitions (api 37, v0-3): adds partitions to existing topics. Duplicate names get
/// INVALID_REQUEST; per topic UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS (no increase),
/// INVALID_REPLICA_ASSIGNMENT, INVALID_REPLICATION_FACTOR. One PartitionRecord per new partition,
/// all in one atomic batch. A count that would take the request past 10,000 records fails every
/// topic with POLICY_VIOLATION ("Unable to perform excessively large batch operation.") before
/// any placement, so `count = i32::MAX` costs nothing (Java places every partition first, then
/// fails that topic with UNKNOWN_SERVER_ERROR and keeps the records that fitted).
pub fn create_partitions(
    image: &MetadataImage,
    rng: &mut ControllerRng,
    request: &CreatePartitionsRequest,
) -> ControllerResult<CreatePartitionsResponse> {
    let mut seen = BTreeSet::new();
    let mut duplicate_set = BTreeSet::new();
    let mut duplicates: Vec<&TopicName> = Vec::new();
    for topic in &request.topics {
        let name = topic.name.as_str();
        if !seen.insert(name) && duplicate_set.insert(name) {
            duplicates.push(&topic.name);
        }
    }
    let mut results = Vec::new();
    for name in &duplicates {
        results.push(partitions_result(
            name,
            &ApiError::new(ResponseError::InvalidRequest, "Duplicate topic name."),
        ));
    }
    let mut records = Vec::new();
    for topic in request
        .topics
        .iter()
        .filter(|t| !duplicate_set.contains(t.name.as_str()))
    {
        let error = match create_partitions_for(image, rng, topic, &mut records) {
            Ok(()) => ApiError::NONE,
            // More records than one atomic result holds fail the whole request (case C14).
            Err(e) if e == limits::excessively_large() => {
                let all = request
                    .topics
                    .iter()
                    .map(|t| partitions_result(&t.name, &e))
                    .collect();
                return ControllerResult::of(
                    Vec::new(),
                    CreatePartitionsResponse::default().with_results(all),
                );
            }
            Err(e) => e,
        };
        results.push(partitions_result(&topic.name, &error));
    }
    if request.validate_only {
        records.clear();
    }
    ControllerResult::atomic(
        records,
        CreatePartitionsResponse::default().with_results(results),
    )
}

// ---------------------------------------------------------------------------------------------
// ElectLeaders

/// `ElectionType`: 0 = PREFERRED, 1 = UNCLEAN.
fn elect_one(
    image: &MetadataImage,
    config: &ControllerConfig,
    topic: &str,
    partition_id: i32,
    unclean: bool,
    records: &mut Vec<ApiMessageAndVersion>,
) -> ApiError {
    let Some(topic_image) = image.topics.get_by_name(topic) else {
        return ApiError::new(
            ResponseError::UnknownTopicOrPartition,
            format!("No such topic as {topic}"),
        );
    };
    let Some(partition) = topic_image.partitions.get(&partition_id) else {
        return ApiError::new(
            ResponseError::UnknownTopicOrPartition,
            format!("No such partition as {topic}-{partition_id}"),
        );
    };
    if (!unclean && partition.has_preferred_leader()) || (unclean && partition.has_leader()) {
        return ApiError {
            code: ResponseError::ElectionNotNeeded.code(),
            message: default_message(ResponseError::ElectionNotNeeded).map(str::to_owned),
        };
    }
    let acceptable = |r: i32| {
        image.cluster.is_active(r)
            && partition
                .directory(r)
                .is_some_and(|d| image.cluster.has_online_dir(r, &d))
    };
    let default_dir = |b: i32| image.default_dir(b);
    let mv = image.metadata_version();
    let min_isr =
        image.effective_min_isr(&topic_image.id, config.node_id, config.min_insync_replicas);
    let change = PartitionChangeBuilder::new(
        partition,
        topic_image.id,
        partition_id,
        &acceptable,
        mv,
        min_isr,
        &default_dir,
    )
    .set_election(if unclean {
        Election::Unclean
    } else {
        Election::Preferred
    })
    .set_elr_enabled(image.features.is_elr_enabled())
    .build();
    match change {
        Some(change) => {
            records.push(partition_change_record(&change, mv));
            ApiError::NONE
        }
        None if unclean => ApiError {
            code: ResponseError::EligibleLeadersNotAvailable.code(),
            message: default_message(ResponseError::EligibleLeadersNotAvailable).map(str::to_owned),
        },
        None => ApiError {
            code: ResponseError::PreferredLeaderNotAvailable.code(),
            message: default_message(ResponseError::PreferredLeaderNotAvailable).map(str::to_owned),
        },
    }
}

fn partition_result(partition_id: i32, error: &ApiError) -> PartitionResult {
    PartitionResult::default()
        .with_partition_id(partition_id)
        .with_error_code(error.code)
        .with_error_message(error.message.clone().map(str_bytes))
}

/// ElectLeaders (api 43, v0-2): preferred (0) or unclean (1) elections for the listed
/// partitions, or for every partition when the list is null (then partitions that need no
/// election are left out of the response). Unknown election types fail the request with
/// INVALID_REQUEST. Not atomic, but at most 10,000 records: the election that would make the
/// 10,001st fails the whole request with POLICY_VIOLATION and stops the work (Java's
/// `BoundedList`).
pub fn elect_leaders(
    image: &MetadataImage,
    config: &ControllerConfig,
    request: &ElectLeadersRequest,
) -> ControllerResult<ElectLeadersResponse> {
    let unclean = match request.election_type {
        0 => false,
        1 => true,
        other => {
            let message = format!("Unknown election type {other}");
            return ControllerResult::of(
                Vec::new(),
                request.error_response(ResponseError::InvalidRequest.code(), Some(&message)),
            );
        }
    };
    // Java collects the records in a `BoundedList`: the 10,001st fails the whole request. Stop
    // electing there rather than after the whole list.
    let too_many = || {
        let error = limits::excessively_large();
        ControllerResult::of(
            Vec::new(),
            request.error_response(error.code, error.message.as_deref()),
        )
    };
    let mut records = Vec::new();
    let mut results = Vec::new();
    let elect = |topic: &str, partition_id: i32, records: &mut Vec<ApiMessageAndVersion>| {
        let error = elect_one(image, config, topic, partition_id, unclean, records);
        (records.len() <= MAX_RECORDS_PER_BATCH).then_some(error)
    };
    match &request.topic_partitions {
        None => {
            for topic in image.topics.iter() {
                let mut partitions = Vec::new();
                for partition_id in topic.partitions.keys() {
                    let Some(error) = elect(&topic.name, *partition_id, &mut records) else {
                        return too_many();
                    };
                    if error.code != ResponseError::ElectionNotNeeded.code() {
                        partitions.push(partition_result(*partition_id, &error));
                    }
                }
                results.push(
                    ReplicaElectionResult::default()
                        .with_topic(TopicName(str_bytes(topic.name.to_string())))
                        .with_partition_result(partitions),
                );
            }
        }
        Some(topics) => {
            for topic in topics {
                let mut partitions = Vec::with_capacity(topic.partitions.len());
                for p in &topic.partitions {
                    let Some(error) = elect(topic.topic.as_str(), *p, &mut records) else {
                        return too_many();
                    };
                    partitions.push(partition_result(*p, &error));
                }
                results.push(
                    ReplicaElectionResult::default()
                        .with_topic(topic.topic.clone())
                        .with_partition_result(partitions),
                );
            }
        }
    }
    ControllerResult::of(
        records,
        ElectLeadersResponse::default()
            .with_error_code(0)
            .with_replica_election_results(results),
    )
}

// ---------------------------------------------------------------------------------------------
// UpdateFeatures

/// `UpgradeType` codes.
#[allow(dead_code)]
mod upgrade_type {
    pub const UPGRADE: i8 = 1;
    pub const SAFE_DOWNGRADE: i8 = 2;
    pub const UNSAFE_DOWNGRADE: i8 = 3;
}

fn version_range_text(min: i16, max: i16) -> String {
    if min == max {
        min.to_string()
    } else if max == i16::MAX {
        format!("{min}+")
    } else {
        format!("{min}-{max}")
    }
}

fn reason_not_supported(level: i16, what: &str, range: Option<(i16, i16)>) -> Option<String> {
    let (min, max) = range.unwrap_or((0, 0));
    if level >= min && level <= max {
        return None;
    }
    Some(if max == 0 {
        format!("{what} does not support this feature.")
    } else {
        format!(
            "{what} only supports versions {}",
            version_range_text(min, max)
        )
    })
}

fn invalid_update(feature: &str, level: i16, message: &str) -> ApiError {
    ApiError::new(
        ResponseError::InvalidUpdateVersion,
        format!("Invalid update version {level} for feature {feature}. {message}"),
    )
}

/// Why `feature` cannot move to `level` in this cluster (`FeatureControlManager.reasonNotSupported`):
/// this controller, every registered broker and every registered controller must support it,
/// and (from 3.7-IV0) every quorum member must have registered.
fn reason_not_supported_in_cluster(
    image: &MetadataImage,
    config: &ControllerConfig,
    feature: &str,
    level: i16,
) -> Option<String> {
    let local = controller_supported_features(config.enable_unstable_feature_versions)
        .into_iter()
        .find(|r| r.name == feature)
        .map(|r| (r.min_level, r.max_level));
    if let Some(reason) = reason_not_supported(
        level,
        &format!("Local controller {}", config.node_id),
        local,
    ) {
        return Some(reason);
    }
    for broker in image.cluster.brokers() {
        let range = broker
            .feature(feature)
            .map(|f| (f.min_supported, f.max_supported));
        if let Some(reason) = reason_not_supported(level, &format!("Broker {}", broker.id), range) {
            return Some(reason);
        }
    }
    if image
        .metadata_version()
        .is_controller_registration_supported()
    {
        for controller in image
            .cluster
            .controllers()
            .filter(|c| c.id != config.node_id)
        {
            let range = controller
                .features
                .iter()
                .find(|f| f.name == feature)
                .map(|f| (f.min_supported, f.max_supported));
            if let Some(reason) =
                reason_not_supported(level, &format!("Controller {}", controller.id), range)
            {
                return Some(reason);
            }
        }
        for id in &config.quorum_node_ids {
            if *id != config.node_id && image.cluster.controller(*id).is_none() {
                return Some(format!(
                    "controller {id} has not registered, and may not support this feature"
                ));
            }
        }
    }
    None
}

#[allow(clippy::too_many_arguments)]
fn update_one(
    image: &MetadataImage,
    config: &ControllerConfig,
    kraft_upgrade: Option<&Result<(), ApiError>>,
    feature: &str,
    level: i16,
    upgrade: i8,
    proposed: &BTreeMap<String, i16>,
    records: &mut Vec<ApiMessageAndVersion>,
) -> ApiError {
    if !(upgrade_type::UPGRADE..=upgrade_type::UNSAFE_DOWNGRADE).contains(&upgrade) {
        return invalid_update(
            feature,
            level,
            "The controller does not support the given upgrade type.",
        );
    }
    let mv = image.metadata_version();
    let current = if feature == METADATA_VERSION_FEATURE_NAME {
        mv.feature_level()
    } else if feature == KRAFT_VERSION_FEATURE_NAME {
        config.kraft_version
    } else {
        image.features.level(feature)
    };
    if level < 0 {
        return invalid_update(feature, level, "A feature version cannot be less than 0.");
    }
    if let Some(reason) = reason_not_supported_in_cluster(image, config, feature, level) {
        return invalid_update(feature, level, &reason);
    }
    if level < current && upgrade == upgrade_type::UPGRADE {
        return invalid_update(
            feature,
            level,
            "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.",
        );
    }
    if level > current && upgrade != upgrade_type::UPGRADE {
        return invalid_update(feature, level, "Can't downgrade to a newer version.");
    }
    if feature == METADATA_VERSION_FEATURE_NAME {
        let Ok(target) = MetadataVersion::from_feature_level(level) else {
            return ApiError::new(
                ResponseError::InvalidUpdateVersion,
                format!(
                    "Invalid metadata.version {level}. Valid versions are from {} to {}.",
                    MetadataVersion::MINIMUM.feature_level(),
                    MetadataVersion::LATEST_TESTING.feature_level()
                ),
            );
        };
        if target < mv {
            // `checkIfMetadataChanged`: a level in (target, mv] that changed the metadata format.
            let changed = MetadataVersion::ALL
                .iter()
                .any(|v| *v > target && *v <= mv && v.did_metadata_change());
            if changed {
                let message = if upgrade == upgrade_type::UNSAFE_DOWNGRADE {
                    "Unsafe metadata downgrade is not supported in this version."
                } else {
                    "Refusing to perform the requested downgrade because it might delete metadata information."
                };
                return ApiError::new(
                    ResponseError::InvalidUpdateVersion,
                    format!("Invalid metadata.version {level}. {message}"),
                );
            }
        }
        records.push(ApiMessageAndVersion::new(
            FeatureLevelRecord {
                name: METADATA_VERSION_FEATURE_NAME.to_owned(),
                feature_level: level,
                ..Default::default()
            },
            0,
        ));
        return ApiError::NONE;
    }
    if feature == KRAFT_VERSION_FEATURE_NAME {
        // Kafka `FeatureControlManager.updateFeature`: an upgrade is the Raft layer's (it writes
        // KRaftVersionRecord and VotersRecord); a NoOpRecord gives the request an offset to
        // wait on, so it is answered once the upgrade batch before it has committed.
        if upgrade != upgrade_type::UPGRADE {
            if level != current {
                return invalid_update(
                    feature,
                    level,
                    "Can't downgrade the version of this feature.",
                );
            }
            return ApiError::NONE;
        }
        match kraft_upgrade {
            Some(Err(e)) => return e.clone(),
            Some(Ok(())) => {}
            None if level == current => {}
            None => {
                return invalid_update(
                    feature,
                    level,
                    "This controller cannot change kraft.version.",
                )
            }
        }
        records.push(ApiMessageAndVersion::new(NoOpRecord::default(), 0));
        return ApiError::NONE;
    }
    let Some(known) = Feature::from_name(feature) else {
        return invalid_update(feature, level, &format!("Feature {feature} not found."));
    };
    let proposed_mv = proposed
        .get(METADATA_VERSION_FEATURE_NAME)
        .and_then(|l| MetadataVersion::from_feature_level(*l).ok())
        .unwrap_or(mv);
    if let Err(e) = known.validate_level(level, true, proposed_mv) {
        return invalid_update(feature, level, &e.to_string());
    }
    records.push(ApiMessageAndVersion::new(
        FeatureLevelRecord {
            name: feature.to_owned(),
            feature_level: level,
            ..Default::default()
        },
        0,
    ));
    ApiError::NONE
}

/// UpdateFeatures (api 57, v0-2): finalizes new feature levels (metadata.version upgrades and
/// safe downgrades, group.version, transaction.version, eligible.leader.replicas.version, …)
/// after checking that this controller, every registered broker and controller support them.
/// The first failing feature fails the whole request (`"The update failed for all features
/// since the following feature had an error: …"`). A kraft.version upgrade is checked and done
/// by the Raft layer (`RequestContext::kraft_version_upgrade`). A feature
/// named twice is one update with its last level and upgrade type (Java's maps), so there is
/// at most one record per known feature. One atomic batch of FeatureLevelRecords; none with
/// `validate_only`.
pub fn update_features(
    image: &MetadataImage,
    config: &ControllerConfig,
    ctx: &RequestContext,
    request: &UpdateFeaturesRequest,
) -> ControllerResult<UpdateFeaturesResponse> {
    let mut proposed: BTreeMap<String, i16> = image
        .features
        .finalized()
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    proposed.insert(
        METADATA_VERSION_FEATURE_NAME.to_owned(),
        image.metadata_version().feature_level(),
    );
    // Java puts the updates in `HashMap`s (feature → level, feature → upgrade type): a feature
    // named twice is one update, with the last level and type.
    let mut updates: Vec<(&str, i16, i8)> = Vec::new();
    let mut position: BTreeMap<&str, usize> = BTreeMap::new();
    for update in &request.feature_updates {
        let entry = (
            update.feature.as_str(),
            update.max_version_level,
            update.upgrade_type,
        );
        match position.get(entry.0) {
            Some(&i) => updates[i] = entry,
            None => {
                position.insert(entry.0, updates.len());
                updates.push(entry);
            }
        }
        proposed.insert(update.feature.to_string(), update.max_version_level);
    }
    let mut records = Vec::new();
    let mut failure = None;
    for (feature, level, upgrade_type) in updates {
        let error = update_one(
            image,
            config,
            ctx.kraft_version_upgrade.as_ref(),
            feature,
            level,
            upgrade_type,
            &proposed,
            &mut records,
        );
        if error.is_failure() {
            failure = Some(error);
            break;
        }
    }
    let response = match &failure {
        Some(error) => {
            records.clear();
            UpdateFeaturesResponse::default()
                .with_error_code(error.code)
                .with_error_message(Some(str_bytes(format!(
                "The update failed for all features since the following feature had an error: {}",
                error.message.clone().unwrap_or_default()
            ))))
        }
        None => UpdateFeaturesResponse::default()
            .with_error_code(0)
            .with_error_message(None),
    };
    let response = if ctx.api_version <= 1 && failure.is_none() {
        response.with_results(
            request
                .feature_updates
                .iter()
                .map(|u| {
                    UpdatableFeatureResult::default()
                        .with_feature(u.feature.clone())
                        .with_error_code(0)
                        .with_error_message(None)
                })
                .collect(),
        )
    } else {
        response
    };
    if request.validate_only {
        records.clear();
    }
    ControllerResult::atomic(records, response)
}

// IncrementalAlterConfigs lives in `configs.rs` with the other config APIs.
pub use super::configs::incremental_alter_configs;

impl ControllerApi for CreatePartitionsRequest {
    type Response = CreatePartitionsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        check.each("name", self.topics.iter().map(|t| t.name.as_str()));
    }

    /// One result per topic.
    fn error_response(&self, code: i16, _message: Option<&str>) -> CreatePartitionsResponse {
        CreatePartitionsResponse::default().with_results(
            self.topics
                .iter()
                .map(|t| {
                    CreatePartitionsTopicResult::default()
                        .with_name(t.name.clone())
                        .with_error_code(code)
                })
                .collect(),
        )
    }
}

impl ControllerApi for ElectLeadersRequest {
    type Response = ElectLeadersResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        for topic in self.topic_partitions.iter().flatten() {
            check.field("topic", &topic.topic);
        }
    }

    /// The top-level code, and every listed partition with the code and message
    /// (`ElectLeadersRequest.getErrorResponse`).
    fn error_response(&self, code: i16, message: Option<&str>) -> ElectLeadersResponse {
        let error = ApiError {
            code,
            message: message.map(str::to_owned),
        };
        let results = self
            .topic_partitions
            .iter()
            .flatten()
            .map(|t| {
                ReplicaElectionResult::default()
                    .with_topic(t.topic.clone())
                    .with_partition_result(
                        t.partitions
                            .iter()
                            .map(|p| partition_result(*p, &error))
                            .collect(),
                    )
            })
            .collect();
        ElectLeadersResponse::default()
            .with_error_code(code)
            .with_replica_election_results(results)
    }
}

impl ControllerApi for UpdateFeaturesRequest {
    type Response = UpdateFeaturesResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        check.each(
            "feature",
            self.feature_updates.iter().map(|u| u.feature.as_str()),
        );
    }

    /// The top-level code and message (`UpdateFeaturesResponse.createWithErrors`).
    fn error_response(&self, code: i16, message: Option<&str>) -> UpdateFeaturesResponse {
        UpdateFeaturesResponse::default()
            .with_error_code(code)
            .with_error_message(message.map(str_bytes))
    }
}
