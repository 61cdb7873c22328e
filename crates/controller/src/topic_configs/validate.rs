//! Topic config values checked as a Kafka 4.1.2 controller checks them
//! (`ControllerConfigurationValidator.validate` → `LogConfig.validate`): every value parsed as
//! its type (`ConfigDef.parseType`) and checked by its validator (`Range`, `ValidString`,
//! `ValidList`, the gzip level and throttled-replica validators), in `LogConfig`'s order of
//! definition, then the checks across configs (`LogConfig.validateValues` and the tiered-storage
//! rules of `validateTopicLogConfigValues`). Every message is `ConfigException`'s
//! ("Invalid value V for configuration N: reason"); the caller answers INVALID_CONFIG.
//!
//! Known gaps: Java's `Integer.parseInt` also takes non-ASCII digits and `Double.parseDouble`
//! hexadecimal floats; both are refused here.

use std::collections::BTreeMap;

use super::{topic_config, Check, ConfigType, TopicConfigDef};
use crate::handlers::describe_configs::java_double;

/// `LogConfig`'s `define` order (4.1.2): `ConfigDef.parse` walks its keys in this order, so the
/// first invalid value in it is the one reported.
const DEFINE_ORDER: [&str; 33] = [
    "segment.bytes",
    "segment.ms",
    "segment.jitter.ms",
    "segment.index.bytes",
    "flush.messages",
    "flush.ms",
    "retention.bytes",
    "retention.ms",
    "max.message.bytes",
    "index.interval.bytes",
    "delete.retention.ms",
    "min.compaction.lag.ms",
    "max.compaction.lag.ms",
    "file.delete.delay.ms",
    "min.cleanable.dirty.ratio",
    "cleanup.policy",
    "unclean.leader.election.enable",
    "min.insync.replicas",
    "compression.type",
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.zstd.level",
    "preallocate",
    "message.timestamp.type",
    "message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
    "remote.storage.enable",
    "local.retention.ms",
    "local.retention.bytes",
    "remote.log.copy.disable",
    "remote.log.delete.on.disable",
];

/// A value after `ConfigDef.parseType`.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Parsed {
    Boolean(bool),
    Int(i32),
    Long(i64),
    Double(f64),
    String(String),
    List(Vec<String>),
}

impl Parsed {
    /// The value as Java prints the parsed object in a `ConfigException`.
    pub(super) fn java_text(&self) -> String {
        match self {
            Parsed::Boolean(b) => b.to_string(),
            Parsed::Int(v) => v.to_string(),
            Parsed::Long(v) => v.to_string(),
            Parsed::Double(v) => java_double(*v),
            Parsed::String(s) => s.clone(),
            Parsed::List(items) => format!("[{}]", items.join(", ")),
        }
    }

    fn number(&self) -> Option<f64> {
        match self {
            Parsed::Int(v) => Some(f64::from(*v)),
            Parsed::Long(v) => Some(*v as f64),
            Parsed::Double(v) => Some(*v),
            _ => None,
        }
    }
}

/// `ConfigException(name, value, reason)`'s message.
fn invalid(name: &str, value: &str, reason: &str) -> String {
    format!("Invalid value {value} for configuration {name}: {reason}")
}

/// Java's `String.trim`: strips every char up to U+0020, not Unicode whitespace.
fn java_trim(value: &str) -> &str {
    value.trim_matches(|c: char| c <= ' ')
}

/// `Double.parseDouble` on a trimmed value: Rust's parser plus Java's float suffixes, without
/// the spellings only Rust accepts (`inf`, `nan`, …).
fn parse_java_double(value: &str) -> Option<f64> {
    let body = value.strip_prefix(['+', '-']).unwrap_or(value);
    let negative = value.starts_with('-');
    let special = match body {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }),
        _ => None,
    };
    if special.is_some() {
        return special;
    }
    let digits = value.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(value);
    if digits
        .chars()
        .any(|c| !(c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E')))
    {
        return None;
    }
    digits.parse().ok()
}

/// `ConfigDef.parseType` for a string value.
fn parse(def: &TopicConfigDef, value: &str) -> Result<Parsed, String> {
    let trimmed = java_trim(value);
    let not_a_number = |type_name: &str| {
        invalid(
            def.name,
            value,
            &format!("Not a number of type {type_name}"),
        )
    };
    Ok(match def.config_type {
        ConfigType::Boolean if trimmed.eq_ignore_ascii_case("true") => Parsed::Boolean(true),
        ConfigType::Boolean if trimmed.eq_ignore_ascii_case("false") => Parsed::Boolean(false),
        ConfigType::Boolean => {
            return Err(invalid(
                def.name,
                value,
                "Expected value to be either true or false",
            ))
        }
        ConfigType::Int => Parsed::Int(trimmed.parse().map_err(|_| not_a_number("INT"))?),
        ConfigType::Long => Parsed::Long(trimmed.parse().map_err(|_| not_a_number("LONG"))?),
        ConfigType::Double => {
            Parsed::Double(parse_java_double(trimmed).ok_or_else(|| not_a_number("DOUBLE"))?)
        }
        ConfigType::String => Parsed::String(trimmed.to_owned()),
        ConfigType::List => Parsed::List(parse_list(trimmed)),
    })
}

/// The LIST arm of `parseType`: empty for an empty value, else split on `\s*,\s*` keeping
/// empty elements (`split(trimmed, -1)`).
fn parse_list(trimmed: &str) -> Vec<String> {
    if trimmed.is_empty() {
        return Vec::new();
    }
    let regex_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r');
    let parts: Vec<&str> = trimmed.split(',').collect();
    let last = parts.len() - 1;
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            // `\s*` around a comma takes the whitespace next to it; the ends are trimmed.
            let part = if i > 0 {
                part.trim_start_matches(regex_space)
            } else {
                part
            };
            let part = if i < last {
                part.trim_end_matches(regex_space)
            } else {
                part
            };
            part.to_owned()
        })
        .collect()
}

/// `ThrottledReplicaListValidator`: every element `([0-9]+:[0-9]+)?`, or all of them joined
/// exactly `*`.
fn valid_throttled_replicas(items: &[String]) -> bool {
    let pair = |s: &str| {
        s.is_empty()
            || s.split_once(':').is_some_and(|(p, b)| {
                !p.is_empty()
                    && !b.is_empty()
                    && p.bytes().all(|c| c.is_ascii_digit())
                    && b.bytes().all(|c| c.is_ascii_digit())
            })
    };
    let trimmed: Vec<&str> = items.iter().map(|s| java_trim(s)).collect();
    trimmed.iter().all(|s| pair(s)) || trimmed.concat() == "*"
}

/// The validator of `def` on a parsed value (`ConfigDef.ConfigKey.validator.ensureValid`).
fn check(def: &TopicConfigDef, parsed: &Parsed) -> Result<(), String> {
    let fail = |value: &str, reason: &str| Err(invalid(def.name, value, reason));
    match (def.check, parsed) {
        (Check::Any, _) => Ok(()),
        (Check::AtLeast(min), p) if p.number().is_some_and(|n| n < min as f64) => {
            fail(&p.java_text(), &format!("Value must be at least {min}"))
        }
        (Check::Between(min, max), p) => match p.number() {
            Some(n) if n < min as f64 => {
                fail(&p.java_text(), &format!("Value must be at least {min}"))
            }
            Some(n) if n > max as f64 => {
                fail(&p.java_text(), &format!("Value must be no more than {max}"))
            }
            _ => Ok(()),
        },
        (Check::AtLeast(_), _) => Ok(()),
        (Check::OneOf(valid), Parsed::String(s)) => one_of(def, valid, s),
        (Check::OneOf(valid), Parsed::List(items)) => {
            items.iter().try_for_each(|s| one_of(def, valid, s))
        }
        (Check::OneOf(_), _) => Ok(()),
        (Check::GzipLevel, Parsed::Int(level)) if *level > 9 || (*level < 1 && *level != -1) => {
            fail(
                &level.to_string(),
                "Value must be between 1 and 9 or equal to -1",
            )
        }
        (Check::GzipLevel, _) => Ok(()),
        (Check::ThrottledReplicas, Parsed::List(items)) if !valid_throttled_replicas(items) => {
            fail(
                &parsed.java_text(),
                &format!(
                    "{} must be the literal '*' or a list of replicas in the following format: \
                     [partitionId]:[brokerId],[partitionId]:[brokerId],...",
                    def.name
                ),
            )
        }
        (Check::ThrottledReplicas, _) => Ok(()),
    }
}

/// `ValidString.ensureValid` (also per element of a `ValidList`).
fn one_of(def: &TopicConfigDef, valid: &[&str], value: &str) -> Result<(), String> {
    if valid.contains(&value) {
        return Ok(());
    }
    Err(invalid(
        def.name,
        value,
        &format!("String must be one of: {}", valid.join(", ")),
    ))
}

/// Checks one topic config: its name, then its value as `LogConfig` parses and validates it;
/// `Err` carries Kafka's INVALID_CONFIG message.
pub fn validate_topic_config(name: &str, value: &str) -> Result<(), String> {
    let Some(def) = topic_config(name) else {
        return Err(format!("Unknown topic config name: {name}"));
    };
    parse(def, value).and_then(|parsed| check(def, &parsed))
}

/// What the checks across configs need besides the topic's own configs.
#[derive(Clone, Debug, Default)]
pub struct TopicConfigContext {
    /// The values a config not set on the topic has (`KafkaConfig.extractLogConfigMap`: the
    /// effective topic-level defaults of this controller).
    pub defaults: BTreeMap<&'static str, String>,
    /// Whether the topic had `remote.storage.enable=true` before this change.
    pub was_remote_storage_enabled: bool,
    /// `remote.log.storage.system.enable` of this controller.
    pub remote_storage_system_enable: bool,
}

/// `LogConfig.validate(existing, props, extractLogConfigMap, remoteStorageSystemEnabled)` for the
/// complete configs of one topic (names are checked by the caller): every value in definition
/// order, then the checks across configs. `Err` carries Kafka's INVALID_CONFIG message.
pub fn validate_topic_configs(
    configs: &BTreeMap<String, String>,
    context: &TopicConfigContext,
) -> Result<(), String> {
    let mut values: BTreeMap<&str, Parsed> = BTreeMap::new();
    for name in DEFINE_ORDER {
        let def = topic_config(name).expect("DEFINE_ORDER lists known configs");
        if let Some(value) = configs.get(name) {
            let parsed = parse(def, value)?;
            check(def, &parsed)?;
            values.insert(name, parsed);
        } else {
            // A default that does not parse (an unchecked dynamic broker config) falls back to
            // Kafka's built-in default.
            let default = context
                .defaults
                .get(name)
                .map_or(def.default, String::as_str);
            if let Ok(parsed) = parse(def, default).or_else(|_| parse(def, def.default)) {
                values.insert(name, parsed);
            }
        }
    }
    super::cross::check_across(&values, context)
}
