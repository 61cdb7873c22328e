//! Admin APIs the controller serves besides the broker lifecycle: CreatePartitions,
//! ElectLeaders, UpdateFeatures and IncrementalAlterConfigs (Kafka 4.1.2's
//! `ReplicationControlManager.createPartitions/electLeaders`,
//! `FeatureControlManager.updateFeatures`, `ConfigurationControlManager.incrementalAlterConfigs`
//! and the request-level checks of `ControllerApis`). Authorization is not implemented.

use std::collections::BTreeMap;

use crate::controller::ControllerRng;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::update_features_response::UpdatableFeatureResult;
use kafka_protocol::messages::{
    CreatePartitionsRequest, CreatePartitionsResponse, ElectLeadersRequest, ElectLeadersResponse,
    IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, TopicName,
    UpdateFeaturesRequest, UpdateFeaturesResponse,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{
    ApiMessageAndVersion, ClearElrRecord, ConfigRecord, FeatureLevelRecord,
};
use kraftwerk_records::metadata_version::{
    controller_supported_features, Feature, MetadataVersion, METADATA_VERSION_FEATURE_NAME,
};

use super::default_message;
use super::leader_isr::partition_change_record;
use crate::controller::{
    ControllerConfig, ControllerResult, RequestContext, MAX_RECORDS_PER_BATCH,
};
use crate::error::ApiError;
use crate::image::configs::resource_type;
use crate::image::features::KRAFT_VERSION_FEATURE_NAME;
use crate::image::partition::{LeaderRecoveryState, PartitionRegistration};
use crate::image::{MetadataImage, MIN_INSYNC_REPLICAS_CONFIG};
use crate::partition_change::{Election, PartitionChangeBuilder};
use crate::placement;
use crate::topic_configs::{topic_config, validate_topic_config, ConfigType};
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

fn new_partition(
    image: &MetadataImage,
    replicas: Vec<i32>,
    isr: Vec<i32>,
) -> PartitionRegistration {
    PartitionRegistration {
        directories: replicas.iter().map(|r| image.default_dir(*r)).collect(),
        leader: isr[0],
        replicas,
        isr,
        removing_replicas: Vec::new(),
        adding_replicas: Vec::new(),
        elr: Vec::new(),
        last_known_elr: Vec::new(),
        leader_recovery_state: LeaderRecoveryState::Recovered,
        leader_epoch: 0,
        partition_epoch: 0,
    }
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
        if assignments.len() as i32 != additional {
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
        records.push(partition_record(
            existing.id,
            current + i as i32,
            &new_partition(image, replicas, isr),
            mv,
        ));
    }
    Ok(())
}

/// CreatePartitions (api 37, v0-3): adds partitions to existing topics. Duplicate names get
/// INVALID_REQUEST; per topic UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS (no increase),
/// INVALID_REPLICA_ASSIGNMENT, INVALID_REPLICATION_FACTOR. One PartitionRecord per new partition,
/// all in one atomic batch (more than 10,000 records fail with POLICY_VIOLATION).
pub fn create_partitions(
    image: &MetadataImage,
    rng: &mut ControllerRng,
    request: &CreatePartitionsRequest,
) -> ControllerResult<CreatePartitionsResponse> {
    let mut results = Vec::new();
    let mut duplicates: Vec<&TopicName> = Vec::new();
    for (i, topic) in request.topics.iter().enumerate() {
        if request.topics[..i].iter().any(|t| t.name == topic.name)
            && !duplicates.contains(&&topic.name)
        {
            duplicates.push(&topic.name);
        }
    }
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
        .filter(|t| !duplicates.contains(&&t.name))
    {
        let error = match create_partitions_for(image, rng, topic, &mut records) {
            Ok(()) => ApiError::NONE,
            Err(e) => e,
        };
        results.push(partitions_result(&topic.name, &error));
        if records.len() > MAX_RECORDS_PER_BATCH {
            let error = ApiError::new(
                ResponseError::PolicyViolation,
                "Unable to perform excessively large batch operation.",
            );
            let all = request
                .topics
                .iter()
                .map(|t| partitions_result(&t.name, &error))
                .collect();
            return ControllerResult::of(
                Vec::new(),
                CreatePartitionsResponse::default().with_results(all),
            );
        }
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
/// INVALID_REQUEST. Not atomic.
pub fn elect_leaders(
    image: &MetadataImage,
    config: &ControllerConfig,
    request: &ElectLeadersRequest,
) -> ControllerResult<ElectLeadersResponse> {
    let unclean = match request.election_type {
        0 => false,
        1 => true,
        other => {
            let error = ApiError::new(
                ResponseError::InvalidRequest,
                format!("Unknown election type {other}"),
            );
            let results = request
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
            return ControllerResult::of(
                Vec::new(),
                ElectLeadersResponse::default()
                    .with_error_code(error.code)
                    .with_replica_election_results(results),
            );
        }
    };
    let mut records = Vec::new();
    let mut results = Vec::new();
    match &request.topic_partitions {
        None => {
            for topic in image.topics.iter() {
                let mut partitions = Vec::new();
                for partition_id in topic.partitions.keys() {
                    let error = elect_one(
                        image,
                        config,
                        &topic.name,
                        *partition_id,
                        unclean,
                        &mut records,
                    );
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
                let partitions = topic
                    .partitions
                    .iter()
                    .map(|p| {
                        partition_result(
                            *p,
                            &elect_one(
                                image,
                                config,
                                topic.topic.as_str(),
                                *p,
                                unclean,
                                &mut records,
                            ),
                        )
                    })
                    .collect();
                results.push(
                    ReplicaElectionResult::default()
                        .with_topic(topic.topic.clone())
                        .with_partition_result(partitions),
                );
            }
        }
    }
    if records.len() > MAX_RECORDS_PER_BATCH {
        return ControllerResult::of(
            Vec::new(),
            ElectLeadersResponse::default()
                .with_error_code(ResponseError::PolicyViolation.code())
                .with_replica_election_results(Vec::new()),
        );
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

fn update_one(
    image: &MetadataImage,
    config: &ControllerConfig,
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
        // Changing kraft.version needs the Raft layer (KRaftVersionRecord); not supported here.
        if level != current {
            return invalid_update(
                feature,
                level,
                "This controller cannot change kraft.version.",
            );
        }
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
/// since the following feature had an error: …"`). kraft.version cannot be changed. One
/// atomic batch of FeatureLevelRecords; none with `validate_only`.
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
    for update in &request.feature_updates {
        proposed.insert(update.feature.to_string(), update.max_version_level);
    }
    let mut records = Vec::new();
    let mut failure = None;
    for update in &request.feature_updates {
        let error = update_one(
            image,
            config,
            update.feature.as_str(),
            update.max_version_level,
            update.upgrade_type,
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

// ---------------------------------------------------------------------------------------------
// IncrementalAlterConfigs

/// `AlterConfigOp.OpType` codes.
mod op_type {
    pub const SET: i8 = 0;
    pub const DELETE: i8 = 1;
    pub const APPEND: i8 = 2;
    pub const SUBTRACT: i8 = 3;
}

fn alter_result(resource_type: i8, name: &str, error: &ApiError) -> AlterConfigsResourceResponse {
    AlterConfigsResourceResponse::default()
        .with_resource_type(resource_type)
        .with_resource_name(str_bytes(name))
        .with_error_code(error.code)
        .with_error_message(error.message.clone().map(str_bytes))
}

/// The records for one resource, or its error (`incrementalAlterConfigResource` +
/// `validateAlterConfig` + the existence check).
fn alter_resource(
    image: &MetadataImage,
    config: &ControllerConfig,
    resource_type_id: i8,
    name: &str,
    ops: &[(String, i8, Option<String>)],
) -> Result<Vec<ConfigRecord>, ApiError> {
    let resource = crate::image::configs::ConfigResource {
        resource_type: resource_type_id,
        name: name.to_owned(),
    };
    let current = image.configs.get(&resource);
    let elr = image.features.is_elr_enabled();
    let mut records = Vec::new();
    for (key, op, value) in ops {
        let current_value = current.and_then(|c| c.get(key)).cloned();
        let new_value = match *op {
            op_type::SET => value.clone(),
            op_type::DELETE => None,
            op_type::APPEND | op_type::SUBTRACT => {
                let splittable = resource_type_id == resource_type::TOPIC
                    && topic_config(key).is_some_and(|d| d.config_type == ConfigType::List);
                if !splittable {
                    let verb = if *op == op_type::APPEND {
                        "APPEND"
                    } else {
                        "SUBTRACT"
                    };
                    return Err(ApiError::new(
                        ResponseError::InvalidConfig,
                        format!("Can't {verb} to key {key} because its type is not LIST."),
                    ));
                }
                let base = current_value.clone().unwrap_or_else(|| {
                    topic_config(key)
                        .map(|d| d.default.to_owned())
                        .unwrap_or_default()
                });
                let mut parts: Vec<String> = base
                    .split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect();
                for v in value.as_deref().unwrap_or_default().split(',') {
                    if *op == op_type::APPEND {
                        if !parts.iter().any(|p| p == v) {
                            parts.push(v.to_owned());
                        }
                    } else if let Some(pos) = parts.iter().position(|p| p == v) {
                        parts.remove(pos);
                    }
                }
                Some(parts.join(","))
            }
            other => {
                return Err(ApiError::new(
                    ResponseError::InvalidRequest,
                    format!("Unknown config operation {other}"),
                ))
            }
        };
        if current_value != new_value || resource_type_id == resource_type::BROKER {
            records.push(ConfigRecord {
                resource_type: resource_type_id,
                resource_name: name.to_owned(),
                name: key.clone(),
                value: new_value,
                ..Default::default()
            });
        }
    }
    // validateAlterConfig.
    let mut all: BTreeMap<String, String> = current
        .map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    for r in &records {
        if r.name == MIN_INSYNC_REPLICAS_CONFIG && r.resource_type == resource_type::BROKER && elr {
            if !r.resource_name.is_empty() {
                return Err(ApiError::new(
                    ResponseError::InvalidConfig,
                    "Broker-level min.insync.replicas cannot be altered while ELR is enabled.",
                ));
            }
            if r.value.is_none() {
                return Err(ApiError::new(
                    ResponseError::InvalidConfig,
                    "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.",
                ));
            }
        }
        match &r.value {
            None => {
                all.remove(&r.name);
            }
            Some(v) => {
                if v.encode_utf16().count() > super::topics::MAX_CONFIG_VALUE_LENGTH {
                    return Err(ApiError::new(
                        ResponseError::InvalidConfig,
                        "The configuration value cannot be added because it exceeds the maximum value size of 32767 bytes.",
                    ));
                }
                all.insert(r.name.clone(), v.clone());
            }
        }
    }
    match resource_type_id {
        resource_type::TOPIC => {
            for key in all.keys() {
                if topic_config(key).is_none() {
                    return Err(ApiError::new(
                        ResponseError::InvalidConfig,
                        format!("Unknown topic config name: {key}"),
                    ));
                }
            }
            for (key, value) in &all {
                validate_topic_config(key, value)
                    .map_err(|m| ApiError::new(ResponseError::InvalidConfig, m))?;
            }
            if image.topics.id_of(name).is_none() {
                return Err(ApiError::new(
                    ResponseError::UnknownTopicOrPartition,
                    format!("The topic '{name}' does not exist."),
                ));
            }
        }
        resource_type::BROKER => {
            if !name.is_empty() {
                let Ok(id) = name.parse::<i32>() else {
                    return Err(ApiError::new(
                        ResponseError::InvalidRequest,
                        format!("Invalid broker name {name}"),
                    ));
                };
                if image.cluster.broker(id).is_none() && !config.quorum_node_ids.contains(&id) {
                    return Err(ApiError::new(
                        ResponseError::BrokerIdNotRegistered,
                        format!("No node with id {id} found."),
                    ));
                }
            }
        }
        other => return Err(ApiError::new(
            ResponseError::InvalidRequest,
            format!(
                "Altering configs of resource type {other} is not supported by this controller."
            ),
        )),
    }
    Ok(records)
}

/// IncrementalAlterConfigs (api 44, v0-1) for TOPIC and BROKER resources: SET, DELETE, and
/// APPEND/SUBTRACT on list-typed topic configs. Topic configs are checked against Kafka 4.1.2's
/// topic config names and value types; broker configs only for the broker name and the ELR
/// `min.insync.replicas` rules (their values are not validated). Unknown resource types answer
/// UNSUPPORTED_VERSION; BROKER_LOGGER, CLIENT_METRICS and GROUP resources INVALID_REQUEST.
/// Duplicate resources get INVALID_REQUEST. Setting `min.insync.replicas` with ELR enabled also
/// writes ClearElrRecords. One atomic batch.
pub fn incremental_alter_configs(
    image: &MetadataImage,
    config: &ControllerConfig,
    request: &IncrementalAlterConfigsRequest,
) -> ControllerResult<IncrementalAlterConfigsResponse> {
    const KNOWN_TYPES: [i8; 5] = [2, 4, 8, 16, 32];
    let mut responses = Vec::new();
    let key =
        |r: &kafka_protocol::messages::incremental_alter_configs_request::AlterConfigsResource| {
            (r.resource_type, r.resource_name.to_string())
        };
    let mut duplicates: Vec<(i8, String)> = Vec::new();
    for (i, r) in request.resources.iter().enumerate() {
        if KNOWN_TYPES.contains(&r.resource_type)
            && request.resources[..i].iter().any(|p| key(p) == key(r))
            && !duplicates.contains(&key(r))
        {
            duplicates.push(key(r));
        }
    }
    let mut records: Vec<ApiMessageAndVersion> = Vec::new();
    for r in &request.resources {
        let name = r.resource_name.as_str();
        if !KNOWN_TYPES.contains(&r.resource_type) {
            responses.push(alter_result(
                r.resource_type,
                name,
                &ApiError::new(
                    ResponseError::UnsupportedVersion,
                    format!("Unknown resource type {}.", r.resource_type),
                ),
            ));
            continue;
        }
        if duplicates.contains(&key(r)) {
            if !responses.iter().any(|x: &AlterConfigsResourceResponse| {
                x.resource_type == r.resource_type && x.resource_name.as_str() == name
            }) {
                responses.push(alter_result(
                    r.resource_type,
                    name,
                    &ApiError::new(ResponseError::InvalidRequest, "Duplicate resource."),
                ));
            }
            continue;
        }
        // Java builds a HashMap of key → op: the last op per key wins.
        let mut ops: Vec<(String, i8, Option<String>)> = Vec::new();
        for c in &r.configs {
            let entry = (
                c.name.to_string(),
                c.config_operation,
                c.value.as_ref().map(|v| v.to_string()),
            );
            match ops.iter_mut().find(|(k, _, _)| *k == entry.0) {
                Some(existing) => *existing = entry,
                None => ops.push(entry),
            }
        }
        match alter_resource(image, config, r.resource_type, name, &ops) {
            Ok(resource_records) => {
                records.extend(
                    resource_records
                        .into_iter()
                        .map(|c| ApiMessageAndVersion::new(c, 0)),
                );
                responses.push(alter_result(r.resource_type, name, &ApiError::NONE));
            }
            Err(error) => responses.push(alter_result(r.resource_type, name, &error)),
        }
    }
    if image.features.is_elr_enabled() {
        let clears: Vec<ApiMessageAndVersion> = records
            .iter()
            .filter_map(|r| match &r.record {
                kraftwerk_records::metadata::MetadataRecord::Config(c)
                    if c.name == MIN_INSYNC_REPLICAS_CONFIG =>
                {
                    let topic_name = if c.resource_type == resource_type::TOPIC {
                        c.resource_name.clone()
                    } else {
                        String::new()
                    };
                    Some(ApiMessageAndVersion::new(
                        ClearElrRecord {
                            topic_name,
                            ..Default::default()
                        },
                        0,
                    ))
                }
                _ => None,
            })
            .collect();
        records.extend(clears);
    }
    if records.len() > MAX_RECORDS_PER_BATCH {
        let error = ApiError::new(
            ResponseError::PolicyViolation,
            "Unable to perform excessively large batch operation.",
        );
        let all = request
            .resources
            .iter()
            .map(|r| alter_result(r.resource_type, r.resource_name.as_str(), &error))
            .collect();
        return ControllerResult::of(
            Vec::new(),
            IncrementalAlterConfigsResponse::default().with_responses(all),
        );
    }
    if request.validate_only {
        records.clear();
    }
    ControllerResult::atomic(
        records,
        IncrementalAlterConfigsResponse::default().with_responses(responses),
    )
}
