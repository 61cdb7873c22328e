//! The topic-level configs a Kafka 4.1.2 controller knows (`LogConfig`), with their defaults as
//! a controller with default settings resolves them (`KafkaConfigSchema.resolveEffectiveTopicConfigs`)
//! and their broker-level synonyms (`ServerTopicConfigSynonyms`). The table was printed from the
//! 4.1.2 jars; it is data, not code.
//!
//! Used to validate topic configs as `LogConfig` does ([`validate`]: names, types, ranges and
//! valid values, and the checks across configs) in CreateTopics and the config APIs, and to
//! report the effective configs in CreateTopics responses (v5+).

use std::collections::BTreeMap;

mod cross;
pub mod validate;

pub use validate::{validate_topic_config, validate_topic_configs, TopicConfigContext};

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

/// The validator `LogConfig` defines a topic config with (`ConfigDef.Validator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// None: any value of the type.
    Any,
    /// `Range.atLeast(min)`.
    AtLeast(i64),
    /// `Range.between(min, max)`.
    Between(i64, i64),
    /// `ValidString.in(...)` (STRING) or `ValidList.in(...)` (LIST: every element).
    OneOf(&'static [&'static str]),
    /// `GzipCompression.LEVEL_VALIDATOR`: 1..=9 or -1.
    GzipLevel,
    /// `ThrottledReplicaListValidator`: `*` or `partition:broker` pairs.
    ThrottledReplicas,
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
    /// The value's validator.
    pub check: Check,
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
    check: Check,
) -> TopicConfigDef {
    TopicConfigDef {
        name,
        default,
        config_type,
        synonyms,
        check,
    }
}

use Check::{Any, AtLeast, Between, GzipLevel, OneOf, ThrottledReplicas};
use ConfigType as T;
use Unit::{HoursToMs, MinutesToMs, Same};

/// Every topic config of Kafka 4.1.2 with `LogConfig`'s validator, sorted by name.
pub const TOPIC_CONFIGS: &[TopicConfigDef] = &[
    def(
        "cleanup.policy",
        "delete",
        T::List,
        &[("log.cleanup.policy", Same)],
        OneOf(&["compact", "delete"]),
    ),
    def(
        "compression.gzip.level",
        "-1",
        T::Int,
        &[("compression.gzip.level", Same)],
        GzipLevel,
    ),
    def(
        "compression.lz4.level",
        "9",
        T::Int,
        &[("compression.lz4.level", Same)],
        Between(1, 17),
    ),
    def(
        "compression.type",
        "producer",
        T::String,
        &[("compression.type", Same)],
        OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]),
    ),
    def(
        "compression.zstd.level",
        "3",
        T::Int,
        &[("compression.zstd.level", Same)],
        Between(-131_072, 22),
    ),
    def(
        "delete.retention.ms",
        "86400000",
        T::Long,
        &[("log.cleaner.delete.retention.ms", Same)],
        AtLeast(0),
    ),
    def(
        "file.delete.delay.ms",
        "60000",
        T::Long,
        &[("log.segment.delete.delay.ms", Same)],
        AtLeast(0),
    ),
    def(
        "flush.messages",
        "9223372036854775807",
        T::Long,
        &[("log.flush.interval.messages", Same)],
        AtLeast(1),
    ),
    def(
        "flush.ms",
        "9223372036854775807",
        T::Long,
        &[
            ("log.flush.interval.ms", Same),
            ("log.flush.scheduler.interval.ms", Same),
        ],
        AtLeast(0),
    ),
    def(
        "follower.replication.throttled.replicas",
        "",
        T::List,
        &[],
        ThrottledReplicas,
    ),
    def(
        "index.interval.bytes",
        "4096",
        T::Int,
        &[("log.index.interval.bytes", Same)],
        AtLeast(0),
    ),
    def(
        "leader.replication.throttled.replicas",
        "",
        T::List,
        &[],
        ThrottledReplicas,
    ),
    def(
        "local.retention.bytes",
        "-2",
        T::Long,
        &[("log.local.retention.bytes", Same)],
        AtLeast(-2),
    ),
    def(
        "local.retention.ms",
        "-2",
        T::Long,
        &[("log.local.retention.ms", Same)],
        AtLeast(-2),
    ),
    def(
        "max.compaction.lag.ms",
        "9223372036854775807",
        T::Long,
        &[("log.cleaner.max.compaction.lag.ms", Same)],
        AtLeast(1),
    ),
    def(
        "max.message.bytes",
        "1048588",
        T::Int,
        &[("message.max.bytes", Same)],
        AtLeast(0),
    ),
    def(
        "message.timestamp.after.max.ms",
        "3600000",
        T::Long,
        &[("log.message.timestamp.after.max.ms", Same)],
        AtLeast(0),
    ),
    def(
        "message.timestamp.before.max.ms",
        "9223372036854775807",
        T::Long,
        &[("log.message.timestamp.before.max.ms", Same)],
        AtLeast(0),
    ),
    def(
        "message.timestamp.type",
        "CreateTime",
        T::String,
        &[("log.message.timestamp.type", Same)],
        OneOf(&["CreateTime", "LogAppendTime"]),
    ),
    def(
        "min.cleanable.dirty.ratio",
        "0.5",
        T::Double,
        &[("log.cleaner.min.cleanable.ratio", Same)],
        Between(0, 1),
    ),
    def(
        "min.compaction.lag.ms",
        "0",
        T::Long,
        &[("log.cleaner.min.compaction.lag.ms", Same)],
        AtLeast(0),
    ),
    def(
        "min.insync.replicas",
        "1",
        T::Int,
        &[("min.insync.replicas", Same)],
        AtLeast(1),
    ),
    def(
        "preallocate",
        "false",
        T::Boolean,
        &[("log.preallocate", Same)],
        Any,
    ),
    def("remote.log.copy.disable", "false", T::Boolean, &[], Any),
    def(
        "remote.log.delete.on.disable",
        "false",
        T::Boolean,
        &[],
        Any,
    ),
    def("remote.storage.enable", "false", T::Boolean, &[], Any),
    def(
        "retention.bytes",
        "-1",
        T::Long,
        &[("log.retention.bytes", Same)],
        Any,
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
        AtLeast(-1),
    ),
    def(
        "segment.bytes",
        "1073741824",
        T::Int,
        &[("log.segment.bytes", Same)],
        AtLeast(1_048_576),
    ),
    def(
        "segment.index.bytes",
        "10485760",
        T::Int,
        &[("log.index.size.max.bytes", Same)],
        AtLeast(4),
    ),
    def(
        "segment.jitter.ms",
        "0",
        T::Long,
        &[
            ("log.roll.jitter.ms", Same),
            ("log.roll.jitter.hours", HoursToMs),
        ],
        AtLeast(0),
    ),
    def(
        "segment.ms",
        "604800000",
        T::Long,
        &[("log.roll.ms", Same), ("log.roll.hours", HoursToMs)],
        AtLeast(1),
    ),
    def(
        "unclean.leader.election.enable",
        "false",
        T::Boolean,
        &[("unclean.leader.election.enable", Same)],
        Any,
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
mod tests;
