//! The config APIs: IncrementalAlterConfigs and the legacy AlterConfigs (Kafka 4.1.2's
//! `ConfigurationControlManager.incrementalAlterConfigs` / `legacyAlterConfigs` /
//! `validateAlterConfig` and the request-level checks of `ControllerApis`). DescribeConfigs is
//! in [`super::describe_configs`].

use crate::api::{message_text, ControllerApi};
use crate::validate::StringCheck;
use kafka_protocol::messages::{
    alter_configs_response as legacy, incremental_alter_configs_response as incremental,
};
use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{
    alter_configs_response, AlterConfigsRequest, AlterConfigsResponse,
    IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{
    ApiMessageAndVersion, ClearElrRecord, ConfigRecord, MetadataRecord,
};

use crate::controller::{ControllerConfig, ControllerResult, MAX_RECORDS_PER_BATCH};
use crate::error::ApiError;
use crate::image::configs::resource_type;
use crate::image::{MetadataImage, MIN_INSYNC_REPLICAS_CONFIG};
use crate::java_order::java_string_map_order;
use crate::topic_configs::{topic_config, validate_topic_configs, ConfigType};
use crate::topic_name;
use crate::validate::limits;

/// The `ConfigResource.Type` ids a request may name (TOPIC, BROKER, BROKER_LOGGER,
/// CLIENT_METRICS, GROUP); any other id is Java's `UNKNOWN` type.
const KNOWN_TYPES: [i8; 5] = [2, 4, 8, 16, 32];

fn str_bytes(s: impl Into<String>) -> StrBytes {
    StrBytes::from_string(s.into())
}

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

/// `String.split(",")`: a string without a comma is itself; otherwise the pieces without the
/// trailing empty ones.
fn java_split_comma(value: &str) -> Vec<&str> {
    if !value.contains(',') {
        return vec![value];
    }
    let mut parts: Vec<&str> = value.split(',').collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// APPEND (each value not yet in the list is added) or SUBTRACT (each value removes its first
/// occurrence) on a LIST value, as `incrementalAlterConfigResource` does with `getParts` (the
/// non-empty pieces of `base`), in time linear in the sizes (Java's `List.contains` is not).
fn list_op(base: &str, append: bool, values: &str) -> String {
    let mut parts: Vec<&str> = java_split_comma(base)
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
    if append {
        let mut present: BTreeSet<&str> = parts.iter().copied().collect();
        for v in java_split_comma(values) {
            if present.insert(v) {
                parts.push(v);
            }
        }
    } else {
        // Removing the first occurrence k times drops the first k occurrences.
        let mut to_remove: BTreeMap<&str, usize> = BTreeMap::new();
        for v in java_split_comma(values) {
            *to_remove.entry(v).or_default() += 1;
        }
        parts.retain(|p| match to_remove.get_mut(p) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        });
    }
    parts.join(",")
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
                let values = value.as_deref().unwrap_or_default();
                Some(list_op(&base, *op == op_type::APPEND, values))
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
    validate_alter_config(image, config, resource_type_id, name, &records, &[])?;
    Ok(records)
}

/// `validateAlterConfig` + the existence check: the ELR rules for `min.insync.replicas`, the
/// 32767-character value limit, the config names and types of TOPIC resources, and that the
/// topic or broker exists. `explicit` are the records the request asked for, `implicit` the
/// deletions a legacy AlterConfigs implies (checked for the ELR rules, then removed).
fn validate_alter_config(
    image: &MetadataImage,
    config: &ControllerConfig,
    resource_type_id: i8,
    name: &str,
    explicit: &[ConfigRecord],
    implicit: &[ConfigRecord],
) -> Result<(), ApiError> {
    let resource = crate::image::configs::ConfigResource {
        resource_type: resource_type_id,
        name: name.to_owned(),
    };
    let current = image.configs.get(&resource);
    let elr = image.features.is_elr_enabled();
    assert!(
        implicit.iter().all(|r| r.value.is_none()),
        "implicit changes are deletions"
    );
    let mut all: BTreeMap<String, String> = current
        .map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    for r in explicit.iter().chain(implicit) {
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
                // Java's check counts UTF-16 units (`String.length`). A value within it but over
                // 32,767 bytes of UTF-8 (only APPEND can build one: requests carry at most
                // 32,767 bytes per string) fails Java's serializer: `Controller::handle`'s
                // result check answers it UNKNOWN_SERVER_ERROR, as Java's error path does.
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
            validate_topic_resource(image, config, name, &all)?;
            if image.topics.id_of(name).is_none() {
                return Err(ApiError::new(
                    ResponseError::UnknownTopicOrPartition,
                    format!("The topic '{name}' does not exist."),
                ));
            }
        }
        resource_type::BROKER => {
            if !name.is_empty() {
                let id = validate_broker_name(name)?;
                if image.cluster.broker(id).is_none() && !config.quorum_node_ids.contains(&id) {
                    return Err(ApiError::new(
                        ResponseError::BrokerIdNotRegistered,
                        format!("No node with id {id} found."),
                    ));
                }
            }
        }
        other => {
            return Err(ApiError::new(
                ResponseError::InvalidRequest,
                format!(
                "Altering configs of resource type {other} is not supported by this controller."
            ),
            ))
        }
    }
    Ok(())
}

/// `ControllerConfigurationValidator.validate` for a TOPIC resource: the topic name
/// (`validateTopicName`: INVALID_REQUEST for the default resource, INVALID_TOPIC_EXCEPTION for
/// an illegal name), known config names, then `LogConfig.validate` (INVALID_CONFIG).
fn validate_topic_resource(
    image: &MetadataImage,
    config: &ControllerConfig,
    name: &str,
    all: &BTreeMap<String, String>,
) -> Result<(), ApiError> {
    if name.is_empty() {
        return Err(ApiError::new(
            ResponseError::InvalidRequest,
            "Default topic resources are not allowed.",
        ));
    }
    topic_name::validate(name)
        .map_err(|m| ApiError::new(ResponseError::InvalidTopicException, m))?;
    if let Some(key) = all.keys().find(|key| topic_config(key).is_none()) {
        return Err(ApiError::new(
            ResponseError::InvalidConfig,
            format!("Unknown topic config name: {key}"),
        ));
    }
    let context = super::topics::topic_config_context(image, config, Some(name));
    validate_topic_configs(all, &context)
        .map_err(|m| ApiError::new(ResponseError::InvalidConfig, m))
}

/// `ControllerConfigurationValidator.validateBrokerName` for a non-empty BROKER resource name:
/// a non-negative integer (`Integer.valueOf`), else INVALID_REQUEST.
fn validate_broker_name(name: &str) -> Result<i32, ApiError> {
    let Ok(id) = name.parse::<i32>() else {
        return Err(ApiError::new(
            ResponseError::InvalidRequest,
            format!("Unable to parse broker name {name}"),
        ));
    };
    if id < 0 {
        return Err(ApiError::new(
            ResponseError::InvalidRequest,
            "Invalid negative broker ID.",
        ));
    }
    Ok(id)
}

/// The ops of one resource, one per key: Java builds a `HashMap` of key → op, so the last op
/// of a key wins (kept at the key's first position).
fn last_op_per_key(
    resource: &kafka_protocol::messages::incremental_alter_configs_request::AlterConfigsResource,
) -> Vec<(String, i8, Option<String>)> {
    let mut position: BTreeMap<&str, usize> = BTreeMap::new();
    let mut ops: Vec<(String, i8, Option<String>)> = Vec::new();
    for c in &resource.configs {
        let entry = (
            c.name.to_string(),
            c.config_operation,
            c.value.as_ref().map(|v| v.to_string()),
        );
        match position.get(c.name.as_str()) {
            Some(&i) => ops[i] = entry,
            None => {
                position.insert(c.name.as_str(), ops.len());
                ops.push(entry);
            }
        }
    }
    ops
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
    let mut seen = BTreeSet::new();
    let mut duplicates = BTreeSet::new();
    for r in &request.resources {
        let key = (r.resource_type, r.resource_name.as_str());
        if KNOWN_TYPES.contains(&r.resource_type) && !seen.insert(key) {
            duplicates.insert(key);
        }
    }
    let mut reported = BTreeSet::new();
    let mut responses = Vec::new();
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
        if duplicates.contains(&(r.resource_type, name)) {
            if reported.insert((r.resource_type, name)) {
                responses.push(alter_result(
                    r.resource_type,
                    name,
                    &ApiError::new(ResponseError::InvalidRequest, "Duplicate resource."),
                ));
            }
            continue;
        }
        match alter_resource(image, config, r.resource_type, name, &last_op_per_key(r)) {
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
    if let Err(error) = finish_records(image, &mut records, request.validate_only) {
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
    ControllerResult::atomic(
        records,
        IncrementalAlterConfigsResponse::default().with_responses(responses),
    )
}

/// What both alter paths do once every resource is validated: append the ELR clears the
/// changed `min.insync.replicas` values need, refuse a batch over `MAX_RECORDS_PER_BATCH`
/// (POLICY_VIOLATION for every resource, as `ConfigurationControlManager` does), and drop the
/// records of a `validate_only` request.
fn finish_records(
    image: &MetadataImage,
    records: &mut Vec<ApiMessageAndVersion>,
    validate_only: bool,
) -> Result<(), ApiError> {
    let clears = clear_elr_records(image, records);
    records.extend(clears);
    if records.len() > MAX_RECORDS_PER_BATCH {
        return Err(limits::excessively_large());
    }
    if validate_only {
        records.clear();
    }
    Ok(())
}

/// `createClearElrRecordsAsNeeded`: with ELR enabled, a ClearElrRecord for every
/// `min.insync.replicas` ConfigRecord among `records` (named after the topic for a TOPIC
/// resource, empty = every topic otherwise).
fn clear_elr_records(
    image: &MetadataImage,
    records: &[ApiMessageAndVersion],
) -> Vec<ApiMessageAndVersion> {
    if !image.features.is_elr_enabled() {
        return Vec::new();
    }
    records
        .iter()
        .filter_map(|r| match &r.record {
            MetadataRecord::Config(c) if c.name == MIN_INSYNC_REPLICAS_CONFIG => {
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
        .collect()
}

fn legacy_result(
    resource_type: i8,
    name: &str,
    error: &ApiError,
) -> alter_configs_response::AlterConfigsResourceResponse {
    alter_configs_response::AlterConfigsResourceResponse::default()
        .with_resource_type(resource_type)
        .with_resource_name(str_bytes(name))
        .with_error_code(error.code)
        .with_error_message(error.message.clone().map(str_bytes))
}

/// `legacyAlterConfigResource`: the records that replace every config of one resource by
/// `new_configs` (in Java's `HashMap` order of their names), then the implied deletions of the
/// configs not named (in name order; Java walks its own timeline map), or the resource's error.
fn legacy_alter_resource(
    image: &MetadataImage,
    config: &ControllerConfig,
    resource_type_id: i8,
    name: &str,
    new_configs: &[(String, Option<String>)],
) -> Result<Vec<ConfigRecord>, ApiError> {
    let resource = crate::image::configs::ConfigResource {
        resource_type: resource_type_id,
        name: name.to_owned(),
    };
    let current = image.configs.get(&resource);
    let record = |key: &str, value: Option<String>| ConfigRecord {
        resource_type: resource_type_id,
        resource_name: name.to_owned(),
        name: key.to_owned(),
        value,
        ..Default::default()
    };
    let keys: Vec<&str> = new_configs.iter().map(|(k, _)| k.as_str()).collect();
    // Java's HashMap of the request's configs: the last value of a key wins.
    let last_value: BTreeMap<&str, Option<String>> = new_configs
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let mut explicit = Vec::new();
    for key in java_string_map_order(&keys) {
        let new_value = last_value[key].clone();
        let current_value = current.and_then(|c| c.get(key)).cloned();
        // KAFKA-14136: BROKER configs are written even when unchanged, so brokers reload them.
        if current_value != new_value || resource_type_id == resource_type::BROKER {
            explicit.push(record(key, new_value));
        }
    }
    let implicit: Vec<ConfigRecord> = current
        .map(|c| {
            c.keys()
                .filter(|k| !last_value.contains_key(k.as_str()))
                .map(|k| record(k, None))
                .collect()
        })
        .unwrap_or_default();
    validate_alter_config(image, config, resource_type_id, name, &explicit, &implicit)?;
    explicit.extend(implicit);
    Ok(explicit)
}

/// One resource's replacement: its type, name and the `(key, value)` pairs it ends with.
type ResourceChange = (i8, String, Vec<(String, Option<String>)>);

/// AlterConfigs (api 33, v0-2), the legacy API that replaces all dynamic configs of a resource:
/// named configs are set (a null value deletes), every other existing config of the resource is
/// deleted. Checks as IncrementalAlterConfigs ([`validate_alter_config`]); unknown resource
/// types answer UNSUPPORTED_VERSION ("Unknown resource type N."), duplicate resources
/// INVALID_REQUEST ("Duplicate resource."), both before the others, in request order, as
/// `ControllerApis.handleLegacyAlterConfigs` adds them. ClearElrRecords follow a changed
/// `min.insync.replicas` with ELR enabled. One atomic batch; none with `validate_only`; more
/// than 10,000 records fail every resource with POLICY_VIOLATION.
pub fn legacy_alter_configs(
    image: &MetadataImage,
    config: &ControllerConfig,
    request: &AlterConfigsRequest,
) -> ControllerResult<AlterConfigsResponse> {
    let mut responses = Vec::new();
    // Resources named once, in request order; a second mention removes the first.
    let mut changes: Vec<Option<ResourceChange>> = Vec::new();
    let mut position: BTreeMap<(i8, &str), usize> = BTreeMap::new();
    let mut duplicates: BTreeSet<(i8, &str)> = BTreeSet::new();
    for r in &request.resources {
        let name = r.resource_name.as_str();
        if !KNOWN_TYPES.contains(&r.resource_type) {
            responses.push(legacy_result(
                r.resource_type,
                name,
                &ApiError::new(
                    ResponseError::UnsupportedVersion,
                    format!("Unknown resource type {}.", r.resource_type),
                ),
            ));
            continue;
        }
        let key = (r.resource_type, name);
        if duplicates.contains(&key) {
            continue;
        }
        if let Some(i) = position.remove(&key) {
            changes[i] = None;
            duplicates.insert(key);
            responses.push(legacy_result(
                r.resource_type,
                name,
                &ApiError::new(ResponseError::InvalidRequest, "Duplicate resource."),
            ));
            continue;
        }
        let configs = r
            .configs
            .iter()
            .map(|c| (c.name.to_string(), c.value.as_ref().map(|v| v.to_string())))
            .collect();
        position.insert(key, changes.len());
        changes.push(Some((r.resource_type, name.to_owned(), configs)));
    }
    let changes: Vec<ResourceChange> = changes.into_iter().flatten().collect();
    let mut records: Vec<ApiMessageAndVersion> = Vec::new();
    for (resource_type_id, name, configs) in &changes {
        match legacy_alter_resource(image, config, *resource_type_id, name, configs) {
            Ok(resource_records) => {
                records.extend(
                    resource_records
                        .into_iter()
                        .map(|c| ApiMessageAndVersion::new(c, 0)),
                );
                responses.push(legacy_result(*resource_type_id, name, &ApiError::NONE));
            }
            Err(error) => responses.push(legacy_result(*resource_type_id, name, &error)),
        }
    }
    if let Err(error) = finish_records(image, &mut records, request.validate_only) {
        let all = request
            .resources
            .iter()
            .map(|r| legacy_result(r.resource_type, r.resource_name.as_str(), &error))
            .collect();
        return ControllerResult::of(
            Vec::new(),
            AlterConfigsResponse::default().with_responses(all),
        );
    }
    ControllerResult::atomic(
        records,
        AlterConfigsResponse::default().with_responses(responses),
    )
}

impl ControllerApi for IncrementalAlterConfigsRequest {
    type Response = IncrementalAlterConfigsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        for resource in &self.resources {
            check.field("resourceName", &resource.resource_name);
            for config in &resource.configs {
                check
                    .field("name", &config.name)
                    .optional("value", config.value.as_deref());
            }
        }
    }

    /// One response per resource.
    fn error_response(&self, code: i16, _message: Option<&str>) -> IncrementalAlterConfigsResponse {
        IncrementalAlterConfigsResponse::default().with_responses(
            self.resources
                .iter()
                .map(|x| {
                    incremental::AlterConfigsResourceResponse::default()
                        .with_resource_type(x.resource_type)
                        .with_resource_name(x.resource_name.clone())
                        .with_error_code(code)
                })
                .collect(),
        )
    }
}

impl ControllerApi for AlterConfigsRequest {
    type Response = AlterConfigsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        for resource in &self.resources {
            check.field("resourceName", &resource.resource_name);
            for config in &resource.configs {
                check
                    .field("name", &config.name)
                    .optional("value", config.value.as_deref());
            }
        }
    }

    /// One response per resource.
    fn error_response(&self, code: i16, message: Option<&str>) -> AlterConfigsResponse {
        AlterConfigsResponse::default().with_responses(
            self.resources
                .iter()
                .map(|x| {
                    legacy::AlterConfigsResourceResponse::default()
                        .with_resource_type(x.resource_type)
                        .with_resource_name(x.resource_name.clone())
                        .with_error_code(code)
                        .with_error_message(message_text(message))
                })
                .collect(),
        )
    }
}
