//! CreateTopics and DeleteTopics (Kafka 4.1.2's `ReplicationControlManager.createTopics/
//! deleteTopics` plus the request-level checks of `ControllerApis.createTopics/deleteTopics`).
//! Authorization is not implemented: every principal may create, describe and delete.

use crate::api::{message_text, ControllerApi};
use crate::validate::StringCheck;
use std::collections::{BTreeMap, BTreeSet};

use crate::controller::ControllerRng;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult,
};
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{
    CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{
    ApiMessageAndVersion, ClearElrRecord, ConfigRecord, RemoveTopicRecord, TopicRecord,
};
use uuid::Uuid;

use super::default_message;
use crate::controller::{
    ControllerConfig, ControllerResult, RequestContext, MAX_RECORDS_PER_BATCH,
};
use crate::error::ApiError;
use crate::ids::{random_topic_id, ZERO_UUID};
use crate::image::configs::resource_type;
use crate::image::partition::{LeaderRecoveryState, PartitionRegistration};
use crate::image::{MetadataImage, MIN_INSYNC_REPLICAS_CONFIG};
use crate::java_order::java_string_map_order;
use crate::placement;
use crate::topic_configs::{
    effective_topic_configs, topic_config, validate_topic_configs, TopicConfigContext,
};
use crate::topic_name::{self, CLUSTER_METADATA_TOPIC_NAME};
use crate::write::partition_record;

/// Longest config value, in UTF-16 code units (`ConfigurationControlManager`).
pub const MAX_CONFIG_VALUE_LENGTH: usize = 32_767;

/// Most partitions one CreateTopics request may create (`validateTotalNumberOfPartitions`).
pub const MAX_PARTITIONS_PER_REQUEST: i64 = 10_000;

fn topic_result(name: &str, error: &ApiError) -> CreatableTopicResult {
    CreatableTopicResult::default()
        .with_name(TopicName(StrBytes::from_string(name.to_owned())))
        .with_error_code(error.code)
        .with_error_message(error.message.clone().map(StrBytes::from_string))
}

/// The response Kafka gives when the whole request fails (`CreateTopicsRequest.getErrorResponse`):
/// every topic of the request, in order, with the same error.
fn whole_request_error(request: &CreateTopicsRequest, error: ApiError) -> CreateTopicsResponse {
    CreateTopicsResponse::default().with_topics(
        request
            .topics
            .iter()
            .map(|t| topic_result(t.name.as_str(), &error))
            .collect(),
    )
}

fn validate_total_partitions(
    topics: &[&CreatableTopic],
    default_num_partitions: i32,
) -> Result<(), ApiError> {
    let total: i64 = topics
        .iter()
        .map(|t| {
            if !t.assignments.is_empty() {
                t.assignments.len() as i64
            } else if t.num_partitions == -1 {
                i64::from(default_num_partitions)
            } else {
                i64::from(t.num_partitions.max(0))
            }
        })
        .sum();
    if total > MAX_PARTITIONS_PER_REQUEST {
        return Err(ApiError::new(
            ResponseError::PolicyViolation,
            "Excessively large number of partitions per request.",
        ));
    }
    Ok(())
}

/// The static settings of this controller that shadow topic config defaults.
pub(crate) fn static_overrides(config: &ControllerConfig) -> BTreeMap<&'static str, String> {
    let mut overrides = BTreeMap::new();
    if config.min_insync_replicas != 1 {
        overrides.insert(
            "min.insync.replicas",
            config.min_insync_replicas.to_string(),
        );
    }
    if config.unclean_leader_election_enable {
        overrides.insert("unclean.leader.election.enable", "true".to_owned());
    }
    overrides
}

/// What validating the configs of `topic` (`None`: a topic being created) needs on this
/// controller: the effective topic-level defaults (`KafkaConfig.extractLogConfigMap`), the
/// topic's current `remote.storage.enable`, and `remote.log.storage.system.enable`.
pub(crate) fn topic_config_context(
    image: &MetadataImage,
    config: &ControllerConfig,
    topic: Option<&str>,
) -> TopicConfigContext {
    let defaults = effective_topic_configs(
        image,
        config.node_id,
        &static_overrides(config),
        &BTreeMap::new(),
    )
    .into_iter()
    .map(|(name, effective)| (name, effective.value))
    .collect();
    // `Boolean.parseBoolean` of the stored value.
    let was_remote_storage_enabled = topic
        .and_then(|t| {
            image
                .configs
                .value(resource_type::TOPIC, t, "remote.storage.enable")
        })
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    TopicConfigContext {
        defaults,
        was_remote_storage_enabled,
        remote_storage_system_enable: config.remote_log_storage_system_enable,
    }
}

/// CreateTopics (api 19, v2-7), direct or unwrapped from an Envelope.
///
/// Request-level: duplicate names and `__cluster_metadata` are answered with INVALID_REQUEST;
/// more than 10,000 partitions in total, or more than 10,000 records, fail every topic with
/// POLICY_VIOLATION (case C14). Per topic, in Kafka's order: name rules and '.'/'_' collisions
/// (INVALID_TOPIC_EXCEPTION), TOPIC_ALREADY_EXISTS, null config values and unknown or mistyped
/// configs (INVALID_CONFIG), manual assignments (INVALID_REQUEST / INVALID_REPLICA_ASSIGNMENT),
/// replication factor and partition count (INVALID_REPLICATION_FACTOR / INVALID_PARTITIONS),
/// placement over registered brokers not in controlled shutdown. Records, in one atomic batch
/// for the whole request: per topic TopicRecord, its ConfigRecords, its PartitionRecords.
/// `validate_only` returns the same response without records.
pub fn create_topics(
    image: &MetadataImage,
    config: &ControllerConfig,
    rng: &mut ControllerRng,
    _ctx: &RequestContext,
    request: &CreateTopicsRequest,
) -> ControllerResult<CreateTopicsResponse> {
    // ControllerApis: names given twice are answered once each with INVALID_REQUEST.
    let mut seen = BTreeSet::new();
    let mut duplicate_set = BTreeSet::new();
    let mut duplicates: Vec<&str> = Vec::new();
    for topic in &request.topics {
        let name = topic.name.as_str();
        if !seen.insert(name) && duplicate_set.insert(name) {
            duplicates.push(name);
        }
    }
    let effective: Vec<&CreatableTopic> = request
        .topics
        .iter()
        .filter(|t| {
            !duplicate_set.contains(t.name.as_str())
                && t.name.as_str() != CLUSTER_METADATA_TOPIC_NAME
        })
        .collect();

    let mut results: Vec<CreatableTopicResult> = Vec::new();
    let mut records: Vec<ApiMessageAndVersion> = Vec::new();
    if !effective.is_empty() {
        if let Err(error) = validate_total_partitions(&effective, config.default_num_partitions) {
            return ControllerResult::of(Vec::new(), whole_request_error(request, error));
        }
        for topic in &effective {
            match create_topic(image, config, rng, topic) {
                Ok((result, topic_records)) => {
                    results.push(result);
                    records.extend(topic_records);
                }
                Err(error) => results.push(topic_result(topic.name.as_str(), &error)),
            }
            if records.len() > MAX_RECORDS_PER_BATCH {
                let error = ApiError::new(
                    ResponseError::PolicyViolation,
                    "Unable to perform excessively large batch operation.",
                );
                return ControllerResult::of(Vec::new(), whole_request_error(request, error));
            }
        }
    }
    for name in &duplicates {
        results.push(topic_result(
            name,
            &ApiError::new(ResponseError::InvalidRequest, "Duplicate topic name."),
        ));
    }
    if request
        .topics
        .iter()
        .any(|t| t.name.as_str() == CLUSTER_METADATA_TOPIC_NAME)
    {
        results.push(topic_result(
            CLUSTER_METADATA_TOPIC_NAME,
            &ApiError::new(
                ResponseError::InvalidRequest,
                format!("Creation of internal topic {CLUSTER_METADATA_TOPIC_NAME} is prohibited."),
            ),
        ));
    }
    if request.validate_only {
        records.clear();
    }
    ControllerResult::atomic(
        records,
        CreateTopicsResponse::default().with_topics(results),
    )
}

/// Validates and creates one topic: its result and records, or its error
/// (`ReplicationControlManager.createTopic`).
fn create_topic(
    image: &MetadataImage,
    config: &ControllerConfig,
    rng: &mut ControllerRng,
    topic: &CreatableTopic,
) -> Result<(CreatableTopicResult, Vec<ApiMessageAndVersion>), ApiError> {
    check_new_topic_name(image, topic.name.as_str())?;
    let configs = CreationConfigs::validated(topic, &topic_config_context(image, config, None))?;
    let partitions = if !topic.assignments.is_empty() {
        manual_partitions(image, topic)?
    } else {
        placed_partitions(image, config, rng, topic)?
    };
    let topic_id = random_topic_id(&mut rng.ids);
    let records = new_topic_records(image, topic.name.as_str(), topic_id, &configs, &partitions);
    let result = created_topic_result(image, config, topic, topic_id, &configs, &partitions);
    Ok((result, records))
}

/// Name rules, then collisions (the later error wins, as Java's map put does), then existence.
fn check_new_topic_name(image: &MetadataImage, name: &str) -> Result<(), ApiError> {
    let mut error = None;
    if let Err(message) = topic_name::validate(name) {
        error = Some(ApiError::new(ResponseError::InvalidTopicException, message));
    }
    if let Some(colliding) = image.topics.colliding_name(name) {
        error = Some(ApiError::new(
            ResponseError::InvalidTopicException,
            format!("Topic '{name}' collides with existing topic: {colliding}"),
        ));
    }
    if image.topics.id_of(name).is_some() {
        error = Some(ApiError::new(
            ResponseError::TopicAlreadyExists,
            format!("Topic '{name}' already exists."),
        ));
    }
    error.map_or(Ok(()), Err)
}

/// The configs a CreateTopics entry sets.
struct CreationConfigs {
    /// Key → value, the last value winning (Java collects them in a HashMap).
    values: BTreeMap<String, String>,
    /// The keys in that HashMap's iteration order, the order of the ConfigRecords.
    keys: Vec<String>,
}

impl CreationConfigs {
    /// The topic's configs, checked in Kafka's order: no null values, no value over
    /// [`MAX_CONFIG_VALUE_LENGTH`], only known keys, then every value and the rules across them
    /// as `LogConfig.validate` checks them ([`validate_topic_configs`]).
    fn validated(topic: &CreatableTopic, context: &TopicConfigContext) -> Result<Self, ApiError> {
        check_no_null_configs(topic)?;
        let configs = Self::collect(topic);
        configs.check_value_lengths()?;
        configs.check_known_keys()?;
        validate_topic_configs(&configs.values, context)
            .map_err(|m| ApiError::new(ResponseError::InvalidConfig, m))?;
        Ok(configs)
    }

    fn collect(topic: &CreatableTopic) -> Self {
        let mut values = BTreeMap::new();
        for c in &topic.configs {
            values.insert(
                c.name.to_string(),
                c.value.as_ref().map(|v| v.to_string()).unwrap_or_default(),
            );
        }
        let request_keys: Vec<&str> = topic.configs.iter().map(|c| c.name.as_str()).collect();
        let keys = java_string_map_order(&request_keys)
            .into_iter()
            .map(str::to_owned)
            .collect();
        CreationConfigs { values, keys }
    }

    fn check_value_lengths(&self) -> Result<(), ApiError> {
        for key in &self.keys {
            if self.values[key].encode_utf16().count() > MAX_CONFIG_VALUE_LENGTH {
                return Err(ApiError::new(
                    ResponseError::InvalidConfig,
                    "The configuration value cannot be added because it exceeds the maximum value size of 32767 bytes.",
                ));
            }
        }
        Ok(())
    }

    fn check_known_keys(&self) -> Result<(), ApiError> {
        match self.keys.iter().find(|key| topic_config(key).is_none()) {
            Some(key) => Err(ApiError::new(
                ResponseError::InvalidConfig,
                format!("Unknown topic config name: {key}"),
            )),
            None => Ok(()),
        }
    }
}

fn check_no_null_configs(topic: &CreatableTopic) -> Result<(), ApiError> {
    let null_configs: Vec<&str> = topic
        .configs
        .iter()
        .filter(|c| c.value.is_none())
        .map(|c| c.name.as_str())
        .collect();
    if !null_configs.is_empty() {
        return Err(ApiError::new(
            ResponseError::InvalidConfig,
            format!(
                "Null value not supported for topic configs: {}",
                null_configs.join(",")
            ),
        ));
    }
    Ok(())
}

/// A new topic's records: its TopicRecord, its ConfigRecords, a ClearElrRecord if needed, and
/// its PartitionRecords.
fn new_topic_records(
    image: &MetadataImage,
    name: &str,
    topic_id: Uuid,
    configs: &CreationConfigs,
    partitions: &[PartitionRegistration],
) -> Vec<ApiMessageAndVersion> {
    let mv = image.metadata_version();
    let mut records = Vec::with_capacity(1 + configs.keys.len() + partitions.len());
    records.push(ApiMessageAndVersion::new(
        TopicRecord {
            name: name.to_owned(),
            topic_id,
            ..Default::default()
        },
        0,
    ));
    for key in &configs.keys {
        records.push(ApiMessageAndVersion::new(
            ConfigRecord {
                resource_type: resource_type::TOPIC,
                resource_name: name.to_owned(),
                name: key.clone(),
                value: Some(configs.values[key].clone()),
                ..Default::default()
            },
            0,
        ));
    }
    // Setting min.insync.replicas clears the topic's ELRs (`createClearElrRecordsAsNeeded`).
    if image.features.is_elr_enabled() && configs.values.contains_key(MIN_INSYNC_REPLICAS_CONFIG) {
        records.push(ApiMessageAndVersion::new(
            ClearElrRecord {
                topic_name: name.to_owned(),
                ..Default::default()
            },
            0,
        ));
    }
    for (partition_id, registration) in partitions.iter().enumerate() {
        records.push(partition_record(
            topic_id,
            partition_id as i32,
            registration,
            mv,
        ));
    }
    records
}

/// The result of a created topic, with every topic config and where its value comes from.
fn created_topic_result(
    image: &MetadataImage,
    config: &ControllerConfig,
    topic: &CreatableTopic,
    topic_id: Uuid,
    configs: &CreationConfigs,
    partitions: &[PartitionRegistration],
) -> CreatableTopicResult {
    let configs: Vec<CreatableTopicConfigs> = effective_topic_configs(
        image,
        config.node_id,
        &static_overrides(config),
        &configs.values,
    )
    .into_iter()
    .map(|(key, effective)| {
        CreatableTopicConfigs::default()
            .with_name(StrBytes::from_static_str(key))
            .with_value(Some(StrBytes::from_string(effective.value)))
            .with_read_only(false)
            .with_config_source(effective.source)
            .with_is_sensitive(false)
    })
    .collect();
    debug_assert!(configs
        .iter()
        .all(|c| topic_config(c.name.as_str()).is_some()));
    CreatableTopicResult::default()
        .with_name(topic.name.clone())
        .with_topic_id(topic_id)
        .with_error_code(0)
        .with_error_message(None)
        .with_topic_config_error_code(0)
        .with_num_partitions(partitions.len() as i32)
        .with_replication_factor(partitions[0].replicas.len() as i16)
        .with_configs(Some(configs))
}

/// A new partition's registration: leader = first ISR member, epochs 0, each replica on its
/// broker's default log directory (`PartitionRegistration` as `ReplicationControlManager`
/// builds it for CreateTopics and CreatePartitions).
pub(crate) fn new_partition(
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

/// `validateManualPartitionAssignment`.
pub(crate) fn validate_manual_assignment(
    image: &MetadataImage,
    replicas: &[i32],
    replication_factor: Option<usize>,
) -> Result<(), ApiError> {
    let invalid = |m: String| Err(ApiError::new(ResponseError::InvalidReplicaAssignment, m));
    if replicas.is_empty() {
        return invalid(
            "The manual partition assignment includes an empty replica list.".to_owned(),
        );
    }
    let mut sorted = replicas.to_vec();
    sorted.sort_unstable();
    let mut previous = None;
    for broker in &sorted {
        if image.cluster.broker(*broker).is_none() {
            return invalid(format!(
                "The manual partition assignment includes broker {broker}, but no such broker is registered."
            ));
        }
        if previous == Some(*broker) {
            return invalid(format!(
                "The manual partition assignment includes the broker {broker} more than once."
            ));
        }
        previous = Some(*broker);
    }
    if let Some(rf) = replication_factor {
        if sorted.len() != rf {
            return invalid(format!(
                "The manual partition assignment includes a partition with {} replica(s), but this is not \
                 consistent with previous partitions, which have {rf} replica(s).",
                sorted.len()
            ));
        }
    }
    Ok(())
}

fn manual_partitions(
    image: &MetadataImage,
    topic: &CreatableTopic,
) -> Result<Vec<PartitionRegistration>, ApiError> {
    if topic.replication_factor != -1 {
        return Err(ApiError::new(
            ResponseError::InvalidRequest,
            "A manual partition assignment was specified, but replication factor was not set to -1.",
        ));
    }
    if topic.num_partitions != -1 {
        return Err(ApiError::new(
            ResponseError::InvalidRequest,
            "A manual partition assignment was specified, but numPartitions was not set to -1.",
        ));
    }
    let mut by_index: BTreeMap<i32, PartitionRegistration> = BTreeMap::new();
    let mut replication_factor = None;
    for assignment in &topic.assignments {
        if by_index.contains_key(&assignment.partition_index) {
            return Err(ApiError::new(
                ResponseError::InvalidReplicaAssignment,
                format!(
                    "Found multiple manual partition assignments for partition {}",
                    assignment.partition_index
                ),
            ));
        }
        let replicas: Vec<i32> = assignment.broker_ids.iter().map(|b| **b).collect();
        validate_manual_assignment(image, &replicas, replication_factor)?;
        replication_factor = Some(replicas.len());
        let isr: Vec<i32> = replicas
            .iter()
            .copied()
            .filter(|r| image.cluster.is_active(*r))
            .collect();
        if isr.is_empty() {
            return Err(ApiError::new(
                ResponseError::InvalidReplicaAssignment,
                format!(
                    "All brokers specified in the manual partition assignment for partition {} are fenced or in \
                     controlled shutdown.",
                    assignment.partition_index
                ),
            ));
        }
        by_index.insert(
            assignment.partition_index,
            new_partition(image, replicas, isr),
        );
    }
    for i in 0..by_index.len() as i32 {
        if !by_index.contains_key(&i) {
            return Err(ApiError::new(
                ResponseError::InvalidReplicaAssignment,
                "partitions should be a consecutive 0-based integer sequence",
            ));
        }
    }
    Ok(by_index.into_values().collect())
}

fn placed_partitions(
    image: &MetadataImage,
    config: &ControllerConfig,
    rng: &mut ControllerRng,
    topic: &CreatableTopic,
) -> Result<Vec<PartitionRegistration>, ApiError> {
    if topic.replication_factor < -1 || topic.replication_factor == 0 {
        return Err(ApiError::new(
            ResponseError::InvalidReplicationFactor,
            "Replication factor must be larger than 0, or -1 to use the default value.",
        ));
    }
    if topic.num_partitions < -1 || topic.num_partitions == 0 {
        return Err(ApiError::new(
            ResponseError::InvalidPartitions,
            "Number of partitions was set to an invalid non-positive value.",
        ));
    }
    let num_partitions = if topic.num_partitions == -1 {
        config.default_num_partitions
    } else {
        topic.num_partitions
    };
    let replication_factor = if topic.replication_factor == -1 {
        config.default_replication_factor
    } else {
        topic.replication_factor
    };
    let placements = placement::place(
        &mut rng.placement,
        &image.usable_brokers(),
        num_partitions.max(0) as usize,
        i32::from(replication_factor),
    )
    .map_err(|e| {
        ApiError::new(
            ResponseError::InvalidReplicationFactor,
            format!("Unable to replicate the partition {replication_factor} time(s): {e}"),
        )
    })?;
    let mut partitions = Vec::with_capacity(placements.len());
    for replicas in placements {
        let isr: Vec<i32> = replicas
            .iter()
            .copied()
            .filter(|r| image.cluster.is_active(*r))
            .collect();
        if isr.is_empty() {
            return Err(ApiError::new(
                ResponseError::InvalidReplicationFactor,
                format!(
                    "Unable to replicate the partition {replication_factor} time(s): All brokers are currently fenced \
                     or in controlled shutdown."
                ),
            ));
        }
        partitions.push(new_partition(image, replicas, isr));
    }
    Ok(partitions)
}

fn deletable_result(name: Option<&str>, id: Uuid, error: &ApiError) -> DeletableTopicResult {
    DeletableTopicResult::default()
        .with_name(name.map(|n| TopicName(StrBytes::from_string(n.to_owned()))))
        .with_topic_id(id)
        .with_error_code(error.code)
        .with_error_message(error.message.clone().map(StrBytes::from_string))
}

fn default_error(error: ResponseError) -> ApiError {
    ApiError {
        code: error.code(),
        message: default_message(error).map(str::to_owned),
    }
}

/// DeleteTopics (api 20, v1-6), by name (v1-5 `TopicNames`, v6 `Topics` with a name) or by id
/// (v6). Request-level checks as `ControllerApis.deleteTopics`: deletion disabled, neither or
/// both of name and id, duplicate names or ids, unknown names (UNKNOWN_TOPIC_OR_PARTITION) or
/// ids (UNKNOWN_TOPIC_ID), a name that maps to an id also given. Records: one RemoveTopicRecord
/// per deleted topic, atomic (more than 10,000 fail the request with POLICY_VIOLATION).
/// Results are not shuffled (Java shuffles them to hide which topics exist).
pub fn delete_topics(
    image: &MetadataImage,
    config: &ControllerConfig,
    ctx: &RequestContext,
    request: &DeleteTopicsRequest,
) -> ControllerResult<DeleteTopicsResponse> {
    if !config.delete_topic_enable {
        return whole_delete_error(request, deletion_disabled(ctx.api_version));
    }
    let mut responses = Vec::new();
    let provided = ProvidedTopics::of(request, &mut responses);
    provided.report_duplicates(&mut responses);
    // Resolve ids, then names.
    let mut to_delete = resolve_ids(image, &provided.ids, &mut responses);
    resolve_names(image, &provided, &mut to_delete, &mut responses);
    if to_delete.len() > MAX_RECORDS_PER_BATCH {
        return whole_delete_error(
            request,
            ApiError::new(
                ResponseError::PolicyViolation,
                "Unable to perform excessively large batch operation.",
            ),
        );
    }
    let records = remove_topic_records(&to_delete, &mut responses);
    ControllerResult::atomic(
        records,
        DeleteTopicsResponse::default().with_responses(responses),
    )
}

/// Every topic of the request, by name and by id, failed with `error`.
fn whole_delete_error(
    request: &DeleteTopicsRequest,
    error: ApiError,
) -> ControllerResult<DeleteTopicsResponse> {
    let by_name = request
        .topic_names
        .iter()
        .map(|n| deletable_result(Some(n.as_str()), ZERO_UUID, &error));
    let by_id = request
        .topics
        .iter()
        .map(|t| deletable_result(t.name.as_ref().map(|n| n.as_str()), t.topic_id, &error));
    ControllerResult::of(
        Vec::new(),
        DeleteTopicsResponse::default().with_responses(by_name.chain(by_id).collect()),
    )
}

/// `delete.topic.enable=false`: v0-2 clients only know INVALID_REQUEST.
fn deletion_disabled(api_version: i16) -> ApiError {
    if api_version < 3 {
        ApiError::new(ResponseError::InvalidRequest, "Topic deletion is disabled.")
    } else {
        default_error(ResponseError::TopicDeletionDisabled)
    }
}

/// The names and ids a DeleteTopics request names exactly once each, and those it names more
/// than once (in first-repeat order). Sets alongside the lists keep it O(n log n).
#[derive(Default)]
struct ProvidedTopics {
    names: Vec<String>,
    duplicate_names: Vec<String>,
    ids: Vec<Uuid>,
    duplicate_ids: Vec<Uuid>,
    /// Every name and id seen.
    seen_names: BTreeSet<String>,
    seen_ids: BTreeSet<Uuid>,
}

impl ProvidedTopics {
    /// Sorts the request's topics; an entry with neither or both of name and id gets its
    /// INVALID_REQUEST response in `responses` instead.
    fn of(request: &DeleteTopicsRequest, responses: &mut Vec<DeletableTopicResult>) -> Self {
        let mut provided = ProvidedTopics::default();
        for name in &request.topic_names {
            provided.add_name(name.to_string());
        }
        for topic in &request.topics {
            match &topic.name {
                None if topic.topic_id == ZERO_UUID => responses.push(deletable_result(
                    None,
                    ZERO_UUID,
                    &ApiError::new(
                        ResponseError::InvalidRequest,
                        "Neither topic name nor id were specified.",
                    ),
                )),
                None => provided.add_id(topic.topic_id),
                Some(name) if topic.topic_id == ZERO_UUID => provided.add_name(name.to_string()),
                Some(name) => responses.push(deletable_result(
                    Some(name.as_str()),
                    topic.topic_id,
                    &ApiError::new(
                        ResponseError::InvalidRequest,
                        "You may not specify both topic name and topic id.",
                    ),
                )),
            }
        }
        provided.finish();
        provided
    }

    /// A second mention moves a name to the duplicates; later ones change nothing.
    fn add_name(&mut self, name: String) {
        if self.seen_names.insert(name.clone()) {
            self.names.push(name);
        } else {
            self.duplicate_names.push(name);
        }
    }

    /// As [`Self::add_name`], for ids.
    fn add_id(&mut self, id: Uuid) {
        if self.seen_ids.insert(id) {
            self.ids.push(id);
        } else {
            self.duplicate_ids.push(id);
        }
    }

    /// Drops the duplicates from the names and ids given once, and repeats from the duplicates.
    fn finish(&mut self) {
        let mut repeated = BTreeSet::new();
        self.duplicate_names.retain(|n| repeated.insert(n.clone()));
        self.names.retain(|n| !repeated.contains(n));
        let mut repeated = BTreeSet::new();
        self.duplicate_ids.retain(|i| repeated.insert(*i));
        self.ids.retain(|i| !repeated.contains(i));
    }

    /// One INVALID_REQUEST response per duplicate name, then per duplicate id.
    fn report_duplicates(&self, responses: &mut Vec<DeletableTopicResult>) {
        for name in &self.duplicate_names {
            responses.push(deletable_result(
                Some(name),
                ZERO_UUID,
                &ApiError::new(ResponseError::InvalidRequest, "Duplicate topic name."),
            ));
        }
        for id in &self.duplicate_ids {
            responses.push(deletable_result(
                None,
                *id,
                &ApiError::new(ResponseError::InvalidRequest, "Duplicate topic id."),
            ));
        }
    }
}

/// The (id, name) of each existing topic among `ids`; unknown ids get UNKNOWN_TOPIC_ID.
fn resolve_ids(
    image: &MetadataImage,
    ids: &[Uuid],
    responses: &mut Vec<DeletableTopicResult>,
) -> Vec<(Uuid, String)> {
    let mut to_delete = Vec::new();
    for id in ids {
        match image.topics.get(id) {
            Some(topic) => to_delete.push((*id, topic.name.to_string())),
            None => responses.push(deletable_result(
                None,
                *id,
                &default_error(ResponseError::UnknownTopicId),
            )),
        }
    }
    to_delete
}

/// Adds the topics named by `provided.names` to `to_delete`. Unknown names get
/// UNKNOWN_TOPIC_OR_PARTITION; a name whose id was also given (or is a duplicate) takes that
/// id out of `to_delete` and gets INVALID_REQUEST.
fn resolve_names(
    image: &MetadataImage,
    provided: &ProvidedTopics,
    to_delete: &mut Vec<(Uuid, String)>,
    responses: &mut Vec<DeletableTopicResult>,
) {
    let mut queued: BTreeSet<Uuid> = to_delete.iter().map(|(id, _)| *id).collect();
    let mut conflicting: BTreeSet<Uuid> = provided.duplicate_ids.iter().copied().collect();
    for name in &provided.names {
        let Some(id) = image.topics.id_of(name) else {
            responses.push(deletable_result(
                Some(name),
                ZERO_UUID,
                &default_error(ResponseError::UnknownTopicOrPartition),
            ));
            continue;
        };
        if conflicting.contains(&id) || queued.contains(&id) {
            // The id leaves `to_delete` (below), and every later name that maps to it fails too.
            conflicting.insert(id);
            responses.push(deletable_result(
                Some(name),
                id,
                &ApiError::new(
                    ResponseError::InvalidRequest,
                    "The provided topic name maps to an ID that was already supplied.",
                ),
            ));
        } else {
            queued.insert(id);
            to_delete.push((id, name.clone()));
        }
    }
    to_delete.retain(|(id, _)| !conflicting.contains(id));
}

/// One RemoveTopicRecord per topic, each with its success response.
fn remove_topic_records(
    to_delete: &[(Uuid, String)],
    responses: &mut Vec<DeletableTopicResult>,
) -> Vec<ApiMessageAndVersion> {
    let mut records = Vec::with_capacity(to_delete.len());
    for (id, name) in to_delete {
        records.push(ApiMessageAndVersion::new(
            RemoveTopicRecord {
                topic_id: *id,
                ..Default::default()
            },
            0,
        ));
        responses.push(deletable_result(Some(name), *id, &ApiError::NONE));
    }
    records
}

impl ControllerApi for CreateTopicsRequest {
    type Response = CreateTopicsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        for topic in &self.topics {
            check.field("name", &topic.name);
            for config in &topic.configs {
                check
                    .field("name", &config.name)
                    .optional("value", config.value.as_deref());
            }
        }
    }

    /// Every requested topic with the error (`CreateTopicsRequest.getErrorResponse`).
    fn error_response(&self, code: i16, message: Option<&str>) -> CreateTopicsResponse {
        CreateTopicsResponse::default().with_topics(
            self.topics
                .iter()
                .map(|t| {
                    CreatableTopicResult::default()
                        .with_name(t.name.clone())
                        .with_error_code(code)
                        .with_error_message(message_text(message))
                })
                .collect(),
        )
    }

    fn summary(&self) -> Option<String> {
        let names: Vec<&str> = self.topics.iter().map(|t| t.name.0.as_str()).collect();
        Some(format!("CreateTopics {names:?}"))
    }
}

impl ControllerApi for DeleteTopicsRequest {
    type Response = DeleteTopicsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        for topic in &self.topics {
            check.optional("name", topic.name.as_ref().map(|n| n.as_str()));
        }
        check.each("topicNames", self.topic_names.iter().map(|n| n.as_str()));
    }

    /// Every requested topic, by name (v0-5) and by id (v6+), with the error.
    fn error_response(&self, code: i16, message: Option<&str>) -> DeleteTopicsResponse {
        let by_name = self.topic_names.iter().map(|n| {
            DeletableTopicResult::default()
                .with_name(Some(n.clone()))
                .with_error_code(code)
                .with_error_message(message_text(message))
        });
        let by_id = self.topics.iter().map(|t| {
            DeletableTopicResult::default()
                .with_name(t.name.clone())
                .with_topic_id(t.topic_id)
                .with_error_code(code)
                .with_error_message(message_text(message))
        });
        DeleteTopicsResponse::default().with_responses(by_name.chain(by_id).collect())
    }

    fn summary(&self) -> Option<String> {
        let topics: Vec<String> = self
            .topic_names
            .iter()
            .map(|n| n.0.to_string())
            .chain(self.topics.iter().map(|t| t.topic_id.to_string()))
            .collect();
        Some(format!("DeleteTopics {topics:?}"))
    }
}
