//! DescribeConfigs (api 32) on a controller, as Kafka 4.1.2's `ConfigHelper` answers it for a
//! `--bootstrap-controller` admin client (brokers answer their clients themselves): from the
//! controller's committed image and its own configuration, on any controller.
//!
//! * TOPIC: every topic config with its effective value, source and synonyms (the topic's own
//!   value, then the broker-level synonyms set dynamically for this node, for the cluster,
//!   statically on this controller, and Kafka's defaults), as `createTopicConfigEntry` reports
//!   them.
//! * BROKER `""`: the cluster-wide dynamic configs; BROKER `<this node's id>`: the dynamic
//!   configs of this node and the cluster-wide ones it inherits. Java lists every `KafkaConfig`
//!   entry of the node there; kraftwerk has no such config object, so the static and default
//!   entries are missing (`kafka-configs --describe` shows only dynamic entries unless `--all`).
//!   Another broker id is INVALID_REQUEST, as on a Java controller.
//! * BROKER_LOGGER `<this node's id>`: the root logger at the current log level.
//! * CLIENT_METRICS: the subscription's stored configs. GROUP: every group config, the group's
//!   own value or Kafka's default.

use crate::api::{message_text, ControllerApi};
use crate::validate::StringCheck;
use std::collections::BTreeMap;

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
use kafka_protocol::protocol::StrBytes;

use crate::broker_configs::{
    broker_config_default, broker_config_synonyms, broker_config_type, is_dynamic_broker_config,
    is_sensitive_broker_config,
};
use crate::controller::ControllerConfig;
use crate::error::ApiError;
use crate::image::configs::resource_type;
use crate::image::MetadataImage;
use crate::topic_configs::{
    config_source, effective_topic_configs, topic_config, ConfigType, TOPIC_CONFIGS,
};

/// `DescribeConfigsResponse.ConfigSource` ids beyond those of [`config_source`].
mod source {
    pub const DYNAMIC_BROKER_LOGGER_CONFIG: i8 = 6;
    pub const CLIENT_METRICS_CONFIG: i8 = 7;
    pub const GROUP_CONFIG: i8 = 8;
}

/// The group configs of Kafka 4.1.2 (`GroupConfig`) with the defaults a controller with default
/// settings gives them (printed from the 4.1.2 jars), sorted by name. All are INT but the two
/// share STRING settings.
const GROUP_CONFIGS: &[(&str, &str, i8)] = &[
    ("consumer.heartbeat.interval.ms", "5000", 3),
    ("consumer.session.timeout.ms", "45000", 3),
    ("share.auto.offset.reset", "latest", 2),
    ("share.heartbeat.interval.ms", "5000", 3),
    ("share.isolation.level", "read_uncommitted", 2),
    ("share.record.lock.duration.ms", "30000", 3),
    ("share.session.timeout.ms", "45000", 3),
    ("streams.heartbeat.interval.ms", "5000", 3),
    ("streams.num.standby.replicas", "0", 3),
    ("streams.session.timeout.ms", "45000", 3),
];

fn str_bytes(s: impl Into<String>) -> StrBytes {
    StrBytes::from_string(s.into())
}

/// `Double.toString`: at least one fractional digit, scientific notation (`1.0E7`) outside
/// [10⁻³, 10⁷).
pub(crate) fn java_double(v: f64) -> String {
    let abs = v.abs();
    if v == 0.0 || (1e-3..1e7).contains(&abs) {
        let s = v.to_string();
        if s.contains('.') || s.contains("inf") || s.contains("NaN") {
            s
        } else {
            format!("{s}.0")
        }
    } else if v.is_finite() {
        let s = format!("{v:e}");
        let (mantissa, exponent) = s.split_once('e').expect("{:e} has an exponent");
        let mantissa = if mantissa.contains('.') {
            mantissa.to_owned()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exponent}")
    } else if v.is_nan() {
        "NaN".to_owned()
    } else if v > 0.0 {
        "Infinity".to_owned()
    } else {
        "-Infinity".to_owned()
    }
}

/// A topic config value as Kafka prints it after parsing (`ConfigDef.parseType` then
/// `convertToString`): trimmed; numbers and booleans re-rendered; lists split on commas with
/// the whitespace around them dropped. A value that does not parse is returned trimmed.
fn normalize_topic_value(value: &str, config_type: ConfigType) -> String {
    let trimmed = value.trim();
    match config_type {
        ConfigType::Boolean => trimmed.to_ascii_lowercase(),
        ConfigType::Int => trimmed
            .parse::<i32>()
            .map_or_else(|_| trimmed.to_owned(), |v| v.to_string()),
        ConfigType::Long => trimmed
            .parse::<i64>()
            .map_or_else(|_| trimmed.to_owned(), |v| v.to_string()),
        ConfigType::Double => trimmed
            .parse::<f64>()
            .map_or_else(|_| trimmed.to_owned(), java_double),
        ConfigType::String => trimmed.to_owned(),
        ConfigType::List => trimmed
            .split(',')
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(","),
    }
}

fn topic_type_id(config_type: ConfigType) -> i8 {
    match config_type {
        ConfigType::Boolean => 1,
        ConfigType::String => 2,
        ConfigType::Int => 3,
        ConfigType::Long => 5,
        ConfigType::Double => 6,
        ConfigType::List => 7,
    }
}

fn synonym(name: &str, value: Option<&str>, source: i8) -> DescribeConfigsSynonym {
    DescribeConfigsSynonym::default()
        .with_name(str_bytes(name))
        .with_value(value.map(str_bytes))
        .with_source(source)
}

/// `ConfigHelper.configSynonyms`: every name of `synonyms` set for this node, for the cluster,
/// statically (`statics`) and by Kafka's defaults, in that order, from the first entry for
/// `name` on (earlier entries, e.g. listener overrides, are dropped).
fn config_synonyms(
    image: &MetadataImage,
    node: &str,
    statics: &BTreeMap<&str, String>,
    name: &str,
    synonyms: &[String],
    sensitive: bool,
) -> Vec<DescribeConfigsSynonym> {
    let mut all: Vec<(String, Option<String>, i8)> = Vec::new();
    let dynamic = |resource: &str, source: i8, all: &mut Vec<(String, Option<String>, i8)>| {
        for s in synonyms {
            if let Some(v) = image.configs.value(resource_type::BROKER, resource, s) {
                all.push((s.clone(), Some(v.clone()), source));
            }
        }
    };
    dynamic(node, config_source::DYNAMIC_BROKER_CONFIG, &mut all);
    dynamic("", config_source::DYNAMIC_DEFAULT_BROKER_CONFIG, &mut all);
    for s in synonyms {
        if let Some(v) = statics.get(s.as_str()) {
            all.push((
                s.clone(),
                Some(v.clone()),
                config_source::STATIC_BROKER_CONFIG,
            ));
        }
    }
    for s in synonyms {
        if let Some(v) = broker_config_default(s) {
            all.push((s.clone(), Some(v.to_owned()), config_source::DEFAULT_CONFIG));
        }
    }
    all.into_iter()
        .skip_while(|(n, _, _)| n != name)
        .map(|(n, v, source)| synonym(&n, if sensitive { None } else { v.as_deref() }, source))
        .collect()
}

fn ok_result(
    configs: Vec<DescribeConfigsResourceResult>,
) -> Result<Vec<DescribeConfigsResourceResult>, ApiError> {
    Ok(configs)
}

fn invalid_request(message: String) -> ApiError {
    ApiError::new(ResponseError::InvalidRequest, message)
}

fn parse_broker_id(name: &str) -> Result<i32, ApiError> {
    name.parse::<i32>()
        .map_err(|_| invalid_request(format!("Broker id must be an integer, but it is: {name}")))
}

/// `createTopicConfigEntry` for every topic config.
fn topic_entries(
    image: &MetadataImage,
    config: &ControllerConfig,
    topic: &str,
    include_synonyms: bool,
) -> Result<Vec<DescribeConfigsResourceResult>, ApiError> {
    crate::topic_name::validate(topic)
        .map_err(|m| ApiError::new(ResponseError::InvalidTopicException, m))?;
    if image.topics.id_of(topic).is_none() {
        return Err(ApiError::code_only(ResponseError::UnknownTopicOrPartition));
    }
    let own: BTreeMap<String, String> = image
        .configs
        .get(&crate::image::configs::ConfigResource {
            resource_type: resource_type::TOPIC,
            name: topic.to_owned(),
        })
        .map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let statics_by_topic_name = super::topics::static_overrides(config);
    // The static settings are broker configs of the same name (min.insync.replicas,
    // unclean.leader.election.enable).
    let statics: BTreeMap<&str, String> = statics_by_topic_name
        .iter()
        .filter_map(|(k, v)| {
            topic_config(k)
                .and_then(|d| d.broker_synonym())
                .map(|s| (s, v.clone()))
        })
        .collect();
    let effective = effective_topic_configs(image, config.node_id, &statics_by_topic_name, &own);
    let node = config.node_id.to_string();
    ok_result(
        TOPIC_CONFIGS
            .iter()
            .map(|def| {
                let value = normalize_topic_value(&effective[def.name].value, def.config_type);
                let mut synonyms = match def.broker_synonym() {
                    Some(primary) => config_synonyms(
                        image,
                        &node,
                        &statics,
                        primary,
                        &broker_config_synonyms(primary),
                        false,
                    ),
                    None => Vec::new(),
                };
                if own.contains_key(def.name) {
                    synonyms.insert(
                        0,
                        synonym(def.name, Some(&value), config_source::TOPIC_CONFIG),
                    );
                }
                let source = synonyms
                    .first()
                    .map_or(config_source::DEFAULT_CONFIG, |s| s.source);
                DescribeConfigsResourceResult::default()
                    .with_name(str_bytes(def.name))
                    .with_value(Some(str_bytes(value)))
                    .with_config_source(source)
                    .with_is_sensitive(false)
                    .with_read_only(false)
                    .with_synonyms(if include_synonyms {
                        synonyms
                    } else {
                        Vec::new()
                    })
                    .with_config_type(topic_type_id(def.config_type))
                    .with_documentation(None)
            })
            .collect(),
    )
}

/// `createBrokerConfigEntry`.
fn broker_entry(
    image: &MetadataImage,
    node: &str,
    statics: &BTreeMap<&str, String>,
    name: &str,
    value: &str,
    per_broker: bool,
    include_synonyms: bool,
) -> DescribeConfigsResourceResult {
    let sensitive = is_sensitive_broker_config(name);
    let mut synonyms = config_synonyms(
        image,
        node,
        statics,
        name,
        &broker_config_synonyms(name),
        sensitive,
    );
    if !per_broker {
        synonyms.retain(|s| s.source == config_source::DYNAMIC_DEFAULT_BROKER_CONFIG);
    }
    let source = synonyms
        .first()
        .map_or(config_source::DEFAULT_CONFIG, |s| s.source);
    DescribeConfigsResourceResult::default()
        .with_name(str_bytes(name))
        .with_value((!sensitive).then(|| str_bytes(value)))
        .with_config_source(source)
        .with_is_sensitive(sensitive)
        .with_read_only(!is_dynamic_broker_config(name))
        .with_synonyms(if include_synonyms {
            synonyms
        } else {
            Vec::new()
        })
        .with_config_type(broker_config_type(name).map_or(0, |t| t.id()))
        .with_documentation(None)
}

fn broker_entries(
    image: &MetadataImage,
    config: &ControllerConfig,
    name: &str,
    include_synonyms: bool,
) -> Result<Vec<DescribeConfigsResourceResult>, ApiError> {
    let node = config.node_id.to_string();
    let statics: BTreeMap<&str, String> = super::topics::static_overrides(config)
        .into_iter()
        .collect();
    let configs_of = |resource: &str| -> BTreeMap<String, String> {
        image
            .configs
            .get(&crate::image::configs::ConfigResource {
                resource_type: resource_type::BROKER,
                name: resource.to_owned(),
            })
            .map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let defaults = configs_of("");
    if name.is_empty() {
        return ok_result(
            defaults
                .iter()
                .map(|(k, v)| broker_entry(image, &node, &statics, k, v, false, include_synonyms))
                .collect(),
        );
    }
    if parse_broker_id(name)? != config.node_id {
        return Err(invalid_request(format!(
            "Unexpected broker id, expected {} or empty string, but received {name}",
            config.node_id
        )));
    }
    // This node's dynamic configs, then the cluster-wide ones it does not override, then the
    // static settings kraftwerk knows (the rest of Java's KafkaConfig is not modelled).
    let mut values = configs_of(&node);
    for (k, v) in defaults {
        values.entry(k).or_insert(v);
    }
    for (k, v) in &statics {
        values.entry((*k).to_owned()).or_insert_with(|| v.clone());
    }
    ok_result(
        values
            .iter()
            .map(|(k, v)| broker_entry(image, &node, &statics, k, v, true, include_synonyms))
            .collect(),
    )
}

fn broker_logger_entries(
    config: &ControllerConfig,
    name: &str,
) -> Result<Vec<DescribeConfigsResourceResult>, ApiError> {
    if name.is_empty() {
        return Err(invalid_request("Broker id must not be empty".to_owned()));
    }
    if parse_broker_id(name)? != config.node_id {
        return Err(invalid_request(format!(
            "Unexpected broker id, expected {} but received {name}",
            config.node_id
        )));
    }
    let level = tracing::level_filters::LevelFilter::current()
        .to_string()
        .to_ascii_uppercase();
    ok_result(vec![DescribeConfigsResourceResult::default()
        .with_name(str_bytes("root"))
        .with_value(Some(str_bytes(level)))
        .with_config_source(source::DYNAMIC_BROKER_LOGGER_CONFIG)
        .with_is_sensitive(false)
        .with_read_only(false)])
}

fn client_metrics_entries(
    image: &MetadataImage,
    name: &str,
) -> Result<Vec<DescribeConfigsResourceResult>, ApiError> {
    if name.is_empty() {
        return Err(invalid_request(
            "Client metrics subscription name must not be empty".to_owned(),
        ));
    }
    let resource = crate::image::configs::ConfigResource {
        resource_type: resource_type::CLIENT_METRICS,
        name: name.to_owned(),
    };
    ok_result(
        image
            .configs
            .get(&resource)
            .into_iter()
            .flat_map(|c| c.iter())
            .map(|(k, v)| {
                DescribeConfigsResourceResult::default()
                    .with_name(str_bytes(k.clone()))
                    .with_value(Some(str_bytes(v.clone())))
                    .with_config_source(source::CLIENT_METRICS_CONFIG)
                    .with_is_sensitive(false)
                    .with_read_only(false)
            })
            .collect(),
    )
}

fn group_entries(
    image: &MetadataImage,
    name: &str,
    include_synonyms: bool,
) -> Result<Vec<DescribeConfigsResourceResult>, ApiError> {
    if name.is_empty() {
        return Err(invalid_request("Group name must not be empty".to_owned()));
    }
    ok_result(
        GROUP_CONFIGS
            .iter()
            .map(|(key, default, type_id)| {
                let own = image.configs.value(resource_type::GROUP, name, key);
                let (value, source) = match own {
                    Some(v) => (v.trim().to_owned(), source::GROUP_CONFIG),
                    None => ((*default).to_owned(), config_source::DEFAULT_CONFIG),
                };
                let synonyms = vec![synonym(key, Some(&value), source)];
                DescribeConfigsResourceResult::default()
                    .with_name(str_bytes(*key))
                    .with_value(Some(str_bytes(value)))
                    .with_config_source(source)
                    .with_is_sensitive(false)
                    .with_read_only(false)
                    .with_synonyms(if include_synonyms {
                        synonyms
                    } else {
                        Vec::new()
                    })
                    .with_config_type(*type_id)
            })
            .collect(),
    )
}

fn describe_one(
    image: &MetadataImage,
    config: &ControllerConfig,
    request: &DescribeConfigsRequest,
    resource: &DescribeConfigsResource,
) -> DescribeConfigsResult {
    let name = resource.resource_name.as_str();
    let entries = match resource.resource_type {
        resource_type::TOPIC => topic_entries(image, config, name, request.include_synonyms),
        resource_type::BROKER => broker_entries(image, config, name, request.include_synonyms),
        resource_type::BROKER_LOGGER => broker_logger_entries(config, name),
        resource_type::CLIENT_METRICS => client_metrics_entries(image, name),
        resource_type::GROUP => group_entries(image, name, request.include_synonyms),
        other => unreachable!("resource type {other} was checked"),
    };
    let result = DescribeConfigsResult::default()
        .with_resource_type(resource.resource_type)
        .with_resource_name(resource.resource_name.clone());
    match entries {
        Ok(mut entries) => {
            if let Some(keys) = resource
                .configuration_keys
                .as_ref()
                .filter(|k| !k.is_empty())
            {
                let keys: std::collections::BTreeSet<&str> =
                    keys.iter().map(|k| k.as_str()).collect();
                entries.retain(|e| keys.contains(e.name.as_str()));
            }
            result
                .with_error_code(0)
                .with_error_message(None)
                .with_configs(entries)
        }
        Err(e) => result
            .with_error_code(e.code)
            .with_error_message(e.message.map(str_bytes))
            .with_configs(Vec::new()),
    }
}

/// DescribeConfigs (api 32, v1-4), answered by any controller from `image` (its committed
/// image) and its configuration; see the module docs for what each resource type reports.
/// Entries come sorted by name (Java's order is its hash map's). `ConfigurationKeys` filters
/// the entries; `IncludeSynonyms` adds the synonyms; documentation is never included.
///
/// Errors per resource (empty config list): INVALID_TOPIC_EXCEPTION and (no message)
/// UNKNOWN_TOPIC_OR_PARTITION for topics, INVALID_REQUEST for a broker or logger id that is
/// not this node's or not a number, an empty logger, subscription or group name. A resource
/// type Java does not know fails the whole request: every resource gets INVALID_REQUEST with
/// Kafka's default message.
pub fn describe_configs(
    image: &MetadataImage,
    config: &ControllerConfig,
    request: &DescribeConfigsRequest,
) -> DescribeConfigsResponse {
    const KNOWN: [i8; 5] = [
        resource_type::TOPIC,
        resource_type::BROKER,
        resource_type::BROKER_LOGGER,
        resource_type::CLIENT_METRICS,
        resource_type::GROUP,
    ];
    if request
        .resources
        .iter()
        .any(|r| !KNOWN.contains(&r.resource_type))
    {
        let message = super::default_message(ResponseError::InvalidRequest);
        return DescribeConfigsResponse::default().with_results(
            request
                .resources
                .iter()
                .map(|r| {
                    DescribeConfigsResult::default()
                        .with_resource_type(r.resource_type)
                        .with_resource_name(r.resource_name.clone())
                        .with_error_code(ResponseError::InvalidRequest.code())
                        .with_error_message(message.map(StrBytes::from_static_str))
                })
                .collect(),
        );
    }
    DescribeConfigsResponse::default().with_results(
        request
            .resources
            .iter()
            .map(|r| describe_one(image, config, request, r))
            .collect(),
    )
}

impl ControllerApi for DescribeConfigsRequest {
    type Response = DescribeConfigsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        for resource in &self.resources {
            check.field("resourceName", &resource.resource_name).each(
                "configurationKeys",
                resource
                    .configuration_keys
                    .iter()
                    .flatten()
                    .map(|k| k.as_str()),
            );
        }
    }

    /// One result per resource, with no configs.
    fn error_response(&self, code: i16, message: Option<&str>) -> DescribeConfigsResponse {
        DescribeConfigsResponse::default().with_results(
            self.resources
                .iter()
                .map(|x| {
                    DescribeConfigsResult::default()
                        .with_resource_type(x.resource_type)
                        .with_resource_name(x.resource_name.clone())
                        .with_error_code(code)
                        .with_error_message(message_text(message))
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_rendered_like_java() {
        assert_eq!(
            normalize_topic_value(" compact , delete", ConfigType::List),
            "compact,delete"
        );
        assert_eq!(normalize_topic_value("TRUE", ConfigType::Boolean), "true");
        assert_eq!(normalize_topic_value(" 0100 ", ConfigType::Long), "100");
        assert_eq!(normalize_topic_value("1", ConfigType::Double), "1.0");
        assert_eq!(normalize_topic_value("0.25", ConfigType::Double), "0.25");
        // Java: Double.toString(1.0E7) and Double.toString(1.0E-4).
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(1e-4), "1.0E-4");
        assert_eq!(java_double(12345678.5), "1.23456785E7");
    }
}
