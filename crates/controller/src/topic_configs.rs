//! The topic-level configs a Kafka 4.1.2 controller knows (`LogConfig`), with their defaults as
//! a controller with default settings resolves them (`KafkaConfigSchema.resolveEffectiveTopicConfigs`)
//! and their broker-level synonyms (`ServerTopicConfigSynonyms`). The table was printed from the
//! 4.1.2 jars; it is data, not code.
//!
//! Used to reject unknown or mistyped configs in CreateTopics and to report the effective
//! configs in CreateTopics responses (v5+).

use std::collections::BTreeMap;

use crate::image::configs::resource_type;
use crate::image::MetadataImage;

/// A topic config's value type (`ConfigDef.Type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigType {
    /// `BOOLEAN`.
    Boolean,
    /// `INT`.
    Int,
    /// `LONG`.
    Long,
    /// `DOUBLE`.
    Double,
    /// `STRING`.
    String,
    /// `LIST` (comma-separated).
    List,
}

/// How a broker-level synonym's value converts to the topic config's unit (`ConfigSynonym`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Same,
    MinutesToMs,
    HoursToMs,
}

/// One topic config.
#[derive(Clone, Copy, Debug)]
pub struct TopicConfigDef {
    /// Config name.
    pub name: &'static str,
    /// Default value as the effective config reports it.
    pub default: &'static str,
    /// Value type.
    pub config_type: ConfigType,
    synonyms: &'static [(&'static str, Unit)],
}

impl TopicConfigDef {
    /// The broker-level config this topic config defaults to
    /// (`ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS`), if any.
    pub fn broker_synonym(&self) -> Option<&'static str> {
        self.synonyms.first().map(|(name, _)| *name)
    }
}

const fn def(
    name: &'static str,
    default: &'static str,
    config_type: ConfigType,
    synonyms: &'static [(&'static str, Unit)],
) -> TopicConfigDef {
    TopicConfigDef {
        name,
        default,
        config_type,
        synonyms,
    }
}

use ConfigType as T;
use Unit::{HoursToMs, MinutesToMs, Same};

/// Every topic config of Kafka 4.1.2, sorted by name.
pub const TOPIC_CONFIGS: &[TopicConfigDef] = &[
    def(
        "cleanup.policy",
        "delete",
        T::List,
        &[("log.cleanup.policy", Same)],
    ),
    def(
        "compression.gzip.level",
        "-1",
        T::Int,
        &[("compression.gzip.level", Same)],
    ),
    def(
        "compression.lz4.level",
        "9",
        T::Int,
        &[("compression.lz4.level", Same)],
    ),
    def(
        "compression.type",
        "producer",
        T::String,
        &[("compression.type", Same)],
    ),
    def(
        "compression.zstd.level",
        "3",
        T::Int,
        &[("compression.zstd.level", Same)],
    ),
    def(
        "delete.retention.ms",
        "86400000",
        T::Long,
        &[("log.cleaner.delete.retention.ms", Same)],
    ),
    def(
        "file.delete.delay.ms",
        "60000",
        T::Long,
        &[("log.segment.delete.delay.ms", Same)],
    ),
    def(
        "flush.messages",
        "9223372036854775807",
        T::Long,
        &[("log.flush.interval.messages", Same)],
    ),
    def(
        "flush.ms",
        "9223372036854775807",
        T::Long,
        &[
            ("log.flush.interval.ms", Same),
            ("log.flush.scheduler.interval.ms", Same),
        ],
    ),
    def("follower.replication.throttled.replicas", "", T::List, &[]),
    def(
        "index.interval.bytes",
        "4096",
        T::Int,
        &[("log.index.interval.bytes", Same)],
    ),
    def("leader.replication.throttled.replicas", "", T::List, &[]),
    def(
        "local.retention.bytes",
        "-2",
        T::Long,
        &[("log.local.retention.bytes", Same)],
    ),
    def(
        "local.retention.ms",
        "-2",
        T::Long,
        &[("log.local.retention.ms", Same)],
    ),
    def(
        "max.compaction.lag.ms",
        "9223372036854775807",
        T::Long,
        &[("log.cleaner.max.compaction.lag.ms", Same)],
    ),
    def(
        "max.message.bytes",
        "1048588",
        T::Int,
        &[("message.max.bytes", Same)],
    ),
    def(
        "message.timestamp.after.max.ms",
        "3600000",
        T::Long,
        &[("log.message.timestamp.after.max.ms", Same)],
    ),
    def(
        "message.timestamp.before.max.ms",
        "9223372036854775807",
        T::Long,
        &[("log.message.timestamp.before.max.ms", Same)],
    ),
    def(
        "message.timestamp.type",
        "CreateTime",
        T::String,
        &[("log.message.timestamp.type", Same)],
    ),
    def(
        "min.cleanable.dirty.ratio",
        "0.5",
        T::Double,
        &[("log.cleaner.min.cleanable.ratio", Same)],
    ),
    def(
        "min.compaction.lag.ms",
        "0",
        T::Long,
        &[("log.cleaner.min.compaction.lag.ms", Same)],
    ),
    def(
        "min.insync.replicas",
        "1",
        T::Int,
        &[("min.insync.replicas", Same)],
    ),
    def(
        "preallocate",
        "false",
        T::Boolean,
        &[("log.preallocate", Same)],
    ),
    def("remote.log.copy.disable", "false", T::Boolean, &[]),
    def("remote.log.delete.on.disable", "false", T::Boolean, &[]),
    def("remote.storage.enable", "false", T::Boolean, &[]),
    def(
        "retention.bytes",
        "-1",
        T::Long,
        &[("log.retention.bytes", Same)],
    ),
    def(
        "retention.ms",
        "604800000",
        T::Long,
        &[
            ("log.retention.ms", Same),
            ("log.retention.minutes", MinutesToMs),
            ("log.retention.hours", HoursToMs),
        ],
    ),
    def(
        "segment.bytes",
        "1073741824",
        T::Int,
        &[("log.segment.bytes", Same)],
    ),
    def(
        "segment.index.bytes",
        "10485760",
        T::Int,
        &[("log.index.size.max.bytes", Same)],
    ),
    def(
        "segment.jitter.ms",
        "0",
        T::Long,
        &[
            ("log.roll.jitter.ms", Same),
            ("log.roll.jitter.hours", HoursToMs),
        ],
    ),
    def(
        "segment.ms",
        "604800000",
        T::Long,
        &[("log.roll.ms", Same), ("log.roll.hours", HoursToMs)],
    ),
    def(
        "unclean.leader.election.enable",
        "false",
        T::Boolean,
        &[("unclean.leader.election.enable", Same)],
    ),
];

/// `ConfigSource` ids of DescribeConfigs/CreateTopics responses.
pub mod config_source {
    /// `TOPIC_CONFIG`: set on the topic.
    pub const TOPIC_CONFIG: i8 = 1;
    /// `DYNAMIC_BROKER_CONFIG`: set dynamically for this node.
    pub const DYNAMIC_BROKER_CONFIG: i8 = 2;
    /// `DYNAMIC_DEFAULT_BROKER_CONFIG`: set dynamically as the cluster default.
    pub const DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
    /// `STATIC_BROKER_CONFIG`: from the controller's server.properties.
    pub const STATIC_BROKER_CONFIG: i8 = 4;
    /// `DEFAULT_CONFIG`: the built-in default.
    pub const DEFAULT_CONFIG: i8 = 5;
}

/// The definition of topic config `name`.
pub fn topic_config(name: &str) -> Option<&'static TopicConfigDef> {
    TOPIC_CONFIGS.iter().find(|d| d.name == name)
}

/// Checks one topic config as `ControllerConfigurationValidator` does for its name and value
/// type; `Err` carries Kafka's INVALID_CONFIG message. Range validators other than
/// `min.insync.replicas ≥ 1` and the `cleanup.policy` values are not checked.
pub fn validate_topic_config(name: &str, value: &str) -> Result<(), String> {
    let Some(def) = topic_config(name) else {
        return Err(format!("Unknown topic config name: {name}"));
    };
    let invalid = |reason: &str| {
        Err(format!(
            "Invalid value {value} for configuration {name}: {reason}"
        ))
    };
    let trimmed = value.trim();
    match def.config_type {
        T::Boolean => {
            if !trimmed.eq_ignore_ascii_case("true") && !trimmed.eq_ignore_ascii_case("false") {
                return invalid("Expected value to be either true or false");
            }
        }
        T::Int => match trimmed.parse::<i32>() {
            Ok(v) if name == "min.insync.replicas" && v < 1 => {
                return invalid("Value must be at least 1")
            }
            Ok(_) => {}
            Err(_) => return invalid("Not a number of type INT"),
        },
        T::Long => {
            if trimmed.parse::<i64>().is_err() {
                return invalid("Not a number of type LONG");
            }
        }
        T::Double => {
            if trimmed.parse::<f64>().is_err() {
                return invalid("Not a number of type DOUBLE");
            }
        }
        T::String => {}
        T::List => {
            if name == "cleanup.policy"
                && trimmed
                    .split(',')
                    .map(str::trim)
                    .any(|p| !p.is_empty() && p != "compact" && p != "delete")
            {
                return invalid("String must be one of: compact, delete");
            }
        }
    }
    Ok(())
}

/// One effective topic config: value and `ConfigSource` id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveConfig {
    /// The value.
    pub value: String,
    /// Where it comes from (see [`config_source`]).
    pub source: i8,
}

fn convert(value: &str, unit: Unit) -> String {
    let factor = match unit {
        Unit::Same => return value.to_owned(),
        Unit::MinutesToMs => 60_000,
        Unit::HoursToMs => 3_600_000,
    };
    value.trim().parse::<i64>().map_or_else(
        |_| value.to_owned(),
        |v| v.saturating_mul(factor).to_string(),
    )
}

/// The effective configs of a topic created with `creation_configs`
/// (`KafkaConfigSchema.resolveEffectiveTopicConfigs`): the topic's own value, else a synonym set
/// dynamically for this node, else for the cluster, else a static setting of this controller
/// (`static_overrides`, keyed by topic config name), else the default.
pub fn effective_topic_configs(
    image: &MetadataImage,
    node_id: i32,
    static_overrides: &BTreeMap<&str, String>,
    creation_configs: &BTreeMap<String, String>,
) -> BTreeMap<&'static str, EffectiveConfig> {
    let node = node_id.to_string();
    let mut out = BTreeMap::new();
    for def in TOPIC_CONFIGS {
        let from_synonyms = |resource_name: &str, source: i8| {
            def.synonyms.iter().find_map(|(synonym, unit)| {
                image
                    .configs
                    .value(resource_type::BROKER, resource_name, synonym)
                    .map(|v| EffectiveConfig {
                        value: convert(v, *unit),
                        source,
                    })
            })
        };
        let effective = creation_configs
            .get(def.name)
            .map(|v| EffectiveConfig {
                value: v.clone(),
                source: config_source::TOPIC_CONFIG,
            })
            .or_else(|| from_synonyms(&node, config_source::DYNAMIC_BROKER_CONFIG))
            .or_else(|| from_synonyms("", config_source::DYNAMIC_DEFAULT_BROKER_CONFIG))
            .or_else(|| {
                static_overrides.get(def.name).map(|v| EffectiveConfig {
                    value: v.clone(),
                    source: config_source::STATIC_BROKER_CONFIG,
                })
            })
            .unwrap_or_else(|| EffectiveConfig {
                value: def.default.to_owned(),
                source: config_source::DEFAULT_CONFIG,
            });
        out.insert(def.name, effective);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_messages_match_kafka() {
        assert_eq!(
            validate_topic_config("no.such", "1"),
            Err("Unknown topic config name: no.such".into())
        );
        assert_eq!(
            validate_topic_config("retention.ms", "abc"),
            Err(
                "Invalid value abc for configuration retention.ms: Not a number of type LONG"
                    .into()
            )
        );
        assert_eq!(
            validate_topic_config("min.insync.replicas", "0"),
            Err(
                "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"
                    .into()
            )
        );
        assert_eq!(
            validate_topic_config("cleanup.policy", "bogus"),
            Err("Invalid value bogus for configuration cleanup.policy: String must be one of: compact, delete".into())
        );
        assert_eq!(
            validate_topic_config("preallocate", "maybe"),
            Err("Invalid value maybe for configuration preallocate: Expected value to be either true or false".into())
        );
        assert_eq!(
            validate_topic_config("cleanup.policy", "compact,delete"),
            Ok(())
        );
        assert_eq!(validate_topic_config("segment.bytes", "1048576"), Ok(()));
    }

    #[test]
    fn effective_configs_prefer_topic_then_dynamic_then_static_then_default() {
        let mut image = MetadataImage::empty();
        image.configs.replay(
            crate::image::configs::ConfigResource {
                resource_type: resource_type::BROKER,
                name: String::new(),
            },
            "log.retention.hours",
            Some("1"),
        );
        let mut statics = BTreeMap::new();
        statics.insert("min.insync.replicas", "2".to_owned());
        let mut creation = BTreeMap::new();
        creation.insert("cleanup.policy".to_owned(), "compact".to_owned());
        let e = effective_topic_configs(&image, 1, &statics, &creation);
        assert_eq!(e.len(), TOPIC_CONFIGS.len());
        assert_eq!(
            e["cleanup.policy"],
            EffectiveConfig {
                value: "compact".into(),
                source: 1
            }
        );
        assert_eq!(
            e["retention.ms"],
            EffectiveConfig {
                value: "3600000".into(),
                source: 3
            }
        );
        assert_eq!(
            e["min.insync.replicas"],
            EffectiveConfig {
                value: "2".into(),
                source: 4
            }
        );
        assert_eq!(
            e["segment.bytes"],
            EffectiveConfig {
                value: "1073741824".into(),
                source: 5
            }
        );
    }
}
