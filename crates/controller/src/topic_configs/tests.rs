//! Tests of the topic config table, its validation and the effective configs.

use super::*;

#[test]
fn validation_messages_match_kafka() {
    assert_eq!(
        validate_topic_config("no.such", "1"),
        Err("Unknown topic config name: no.such".into())
    );
    assert_eq!(
        validate_topic_config("retention.ms", "abc"),
        Err("Invalid value abc for configuration retention.ms: Not a number of type LONG".into())
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
