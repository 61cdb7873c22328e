//! Topic config values validated as Kafka 4.1.2's `LogConfig` validates them, through
//! CreateTopics and IncrementalAlterConfigs: types, ranges, valid values, the first invalid
//! value in `LogConfig`'s definition order, and the checks across configs. Every refusal is
//! INVALID_CONFIG with Kafka's `ConfigException` message and writes nothing.

use kafka_protocol::messages::create_topics_request::CreatableTopicConfig;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::IncrementalAlterConfigsRequest;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata_version::MetadataVersion;

use crate::controller::{ControllerRequest as Req, ControllerResponse as Resp};
use crate::testing::{create_topics, TestNode};

const INVALID_CONFIG: i16 = 40;

fn node() -> TestNode {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1]);
    node
}

/// CreateTopics of one topic with `configs`: its (code, message), after checking that an error
/// wrote nothing.
fn create(node: &mut TestNode, name: &str, configs: &[(&str, &str)]) -> (i16, String) {
    let mut request = create_topics(&[(name, 1, 1)]);
    request.topics[0].configs = configs
        .iter()
        .map(|(k, v)| {
            CreatableTopicConfig::default()
                .with_name(StrBytes::from_string((*k).to_owned()))
                .with_value(Some(StrBytes::from_string((*v).to_owned())))
        })
        .collect();
    let (response, records) = node.request(7, Req::CreateTopics(request));
    let Resp::CreateTopics(r) = response else {
        panic!()
    };
    let topic = &r.topics[0];
    if topic.error_code != 0 {
        assert!(records.is_empty(), "{configs:?}");
    }
    (
        topic.error_code,
        topic
            .error_message
            .as_deref()
            .unwrap_or_default()
            .to_owned(),
    )
}

fn refused(configs: &[(&str, &str)], message: &str) {
    let mut node = node();
    assert_eq!(
        create(&mut node, "t", configs),
        (INVALID_CONFIG, message.to_owned()),
        "{configs:?}"
    );
}

#[test]
fn string_and_list_values_must_be_valid_values() {
    refused(
        &[("compression.type", "brotli")],
        "Invalid value brotli for configuration compression.type: String must be one of: \
         uncompressed, zstd, lz4, snappy, gzip, producer",
    );
    refused(
        &[("message.timestamp.type", "createtime")],
        "Invalid value createtime for configuration message.timestamp.type: String must be one \
         of: CreateTime, LogAppendTime",
    );
    // ValidList names the element, not the whole value; an empty element is an element.
    refused(
        &[("cleanup.policy", "compact, bogus")],
        "Invalid value bogus for configuration cleanup.policy: String must be one of: compact, delete",
    );
    refused(
        &[("cleanup.policy", "compact,")],
        "Invalid value  for configuration cleanup.policy: String must be one of: compact, delete",
    );
    refused(
        &[("leader.replication.throttled.replicas", "0:1, x")],
        "Invalid value [0:1, x] for configuration leader.replication.throttled.replicas: \
         leader.replication.throttled.replicas must be the literal '*' or a list of replicas in \
         the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
    );
    let mut node = node();
    for (i, (key, value)) in [
        ("compression.type", " zstd "),
        ("message.timestamp.type", "LogAppendTime"),
        ("cleanup.policy", " compact ,delete"),
        ("cleanup.policy", ""),
        ("follower.replication.throttled.replicas", "*"),
        ("follower.replication.throttled.replicas", "0:1,1:2"),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(
            create(&mut node, &format!("ok{i}"), &[(key, value)]),
            (0, String::new()),
            "{key}={value}"
        );
    }
}

#[test]
fn numbers_must_parse_and_be_in_range() {
    refused(
        &[("min.insync.replicas", "0")],
        "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1",
    );
    refused(
        &[("segment.bytes", " 1000 ")],
        "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576",
    );
    refused(
        &[("retention.ms", "-2")],
        "Invalid value -2 for configuration retention.ms: Value must be at least -1",
    );
    refused(
        &[("min.cleanable.dirty.ratio", "1.5")],
        "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
    );
    refused(
        &[("compression.gzip.level", "10")],
        "Invalid value 10 for configuration compression.gzip.level: Value must be between 1 and 9 or \
         equal to -1",
    );
    refused(
        &[("compression.zstd.level", "23")],
        "Invalid value 23 for configuration compression.zstd.level: Value must be no more than 22",
    );
    refused(
        &[("max.message.bytes", "2147483648")],
        "Invalid value 2147483648 for configuration max.message.bytes: Not a number of type INT",
    );
    refused(
        &[("min.cleanable.dirty.ratio", "inf")],
        "Invalid value inf for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE",
    );
    refused(
        &[("preallocate", "yes")],
        "Invalid value yes for configuration preallocate: Expected value to be either true or false",
    );
    let mut node = node();
    for (i, (key, value)) in [
        ("compression.gzip.level", "-1"),
        ("compression.zstd.level", "-131072"),
        ("min.cleanable.dirty.ratio", "0.25d"),
        ("retention.ms", "-1"),
        ("retention.bytes", "-5"),
        ("preallocate", " TRUE "),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(
            create(&mut node, &format!("ok{i}"), &[(key, value)]),
            (0, String::new()),
            "{key}={value}"
        );
    }
}

#[test]
fn the_first_invalid_value_in_definition_order_is_reported() {
    // `LogConfig` defines segment.bytes before min.insync.replicas.
    refused(
        &[("min.insync.replicas", "0"), ("segment.bytes", "1")],
        "Invalid value 1 for configuration segment.bytes: Value must be at least 1048576",
    );
}

#[test]
fn checks_across_configs_follow_log_config() {
    refused(
        &[
            ("min.compaction.lag.ms", "10"),
            ("max.compaction.lag.ms", "5"),
        ],
        "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)",
    );
    // remote.log.storage.system.enable is false on this controller (Kafka's default).
    refused(
        &[("remote.storage.enable", "true")],
        "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote \
         log storage.",
    );
    let mut config = crate::testing::config(MetadataVersion::V4_1_IV1);
    config.remote_log_storage_system_enable = true;
    let mut node = TestNode::new(config);
    node.become_leader();
    node.add_brokers(&[1]);
    assert_eq!(
        create(
            &mut node,
            "tiered",
            &[
                ("remote.storage.enable", "true"),
                ("cleanup.policy", "compact")
            ]
        ),
        (
            INVALID_CONFIG,
            "Remote log storage is unsupported for the compacted topics".to_owned()
        )
    );
    assert_eq!(
        create(
            &mut node,
            "tiered",
            &[
                ("remote.storage.enable", "true"),
                ("retention.bytes", "100"),
                ("local.retention.bytes", "200")
            ]
        ),
        (
            INVALID_CONFIG,
            "Invalid value 200 for configuration local.retention.bytes: Value must not be more than \
             retention.bytes property value: 100"
                .to_owned()
        )
    );
    assert_eq!(
        create(&mut node, "tiered", &[("remote.storage.enable", "true")]).0,
        0
    );
    node.commit();
    // Turning remote storage off must delete the remote data.
    let (code, message) = alter(&mut node, "tiered", "remote.storage.enable", "false");
    assert_eq!(code, INVALID_CONFIG);
    assert!(
        message
            .starts_with("It is invalid to disable remote storage without deleting remote data."),
        "{message}"
    );
}

/// IncrementalAlterConfigs SET of one topic config: (code, message); an error writes nothing.
fn alter(node: &mut TestNode, topic: &str, key: &str, value: &str) -> (i16, String) {
    let request = IncrementalAlterConfigsRequest::default().with_resources(vec![
        AlterConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name(StrBytes::from_string(topic.to_owned()))
            .with_configs(vec![AlterableConfig::default()
                .with_name(StrBytes::from_string(key.to_owned()))
                .with_config_operation(0)
                .with_value(Some(StrBytes::from_string(value.to_owned())))]),
    ]);
    let (response, records) = node.request(1, Req::IncrementalAlterConfigs(request));
    let Resp::IncrementalAlterConfigs(r) = response else {
        panic!()
    };
    let result = &r.responses[0];
    if result.error_code != 0 {
        assert!(records.is_empty());
    }
    (
        result.error_code,
        result
            .error_message
            .as_deref()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn alter_configs_validate_topic_values_and_names() {
    let mut node = node();
    node.create_topic("t", 1, 1);
    assert_eq!(
        alter(&mut node, "t", "compression.type", "brotli"),
        (
            INVALID_CONFIG,
            "Invalid value brotli for configuration compression.type: String must be one of: \
             uncompressed, zstd, lz4, snappy, gzip, producer"
                .to_owned()
        )
    );
    // The new value is checked with the topic's other configs.
    assert_eq!(alter(&mut node, "t", "max.compaction.lag.ms", "100").0, 0);
    node.commit();
    assert_eq!(
        alter(&mut node, "t", "min.compaction.lag.ms", "500"),
        (
            INVALID_CONFIG,
            "conflict topic config setting min.compaction.lag.ms (500) > max.compaction.lag.ms (100)"
                .to_owned()
        )
    );
    // `ControllerConfigurationValidator.validateTopicName` comes before the existence check.
    assert_eq!(
        alter(&mut node, "", "retention.ms", "1"),
        (42, "Default topic resources are not allowed.".to_owned())
    );
    assert_eq!(alter(&mut node, "bad name", "retention.ms", "1").0, 17);
}
