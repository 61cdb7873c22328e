//! CreateTopics / DeleteTopics, including the excessively-large request (C14).

use kafka_protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
};
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::{
    CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{ApiMessageAndVersion, MetadataRecord};
use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use crate::controller::{ControllerRequest, ControllerResponse};
use crate::ids::{DIRECTORY_MIGRATING, DIRECTORY_UNASSIGNED};
use crate::testing::{create_topics, dir_of, TestNode};
use kraftwerk_protocol::kafka_uuid::kafka_uuid_to_string;

fn create(
    node: &mut TestNode,
    request: kafka_protocol::messages::CreateTopicsRequest,
) -> (CreateTopicsResponse, Vec<ApiMessageAndVersion>) {
    let (response, records) = node.request(7, ControllerRequest::CreateTopics(request));
    let ControllerResponse::CreateTopics(r) = response else {
        panic!()
    };
    (r, records)
}

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_owned()))
}

#[test]
fn create_topic_writes_topic_configs_and_partitions_in_one_atomic_batch() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1, 2, 3]);
    let mut request = create_topics(&[("orders", 3, 2)]);
    request.topics[0].configs = vec![CreatableTopicConfig::default()
        .with_name(StrBytes::from_static_str("cleanup.policy"))
        .with_value(Some(StrBytes::from_static_str("compact")))];
    let ctx = node.ctx(7);
    let result = node
        .controller
        .handle(&ctx, &ControllerRequest::CreateTopics(request));
    assert!(result.atomic);
    let records = result.records.clone();
    let ControllerResponse::CreateTopics(response) = result.response.clone() else {
        panic!()
    };
    node.append(&result);
    assert_eq!(records.len(), 1 + 1 + 3);
    let MetadataRecord::Topic(t) = &records[0].record else {
        panic!()
    };
    assert_eq!(t.name, "orders");
    assert!(!kafka_uuid_to_string(t.topic_id).starts_with('-'));
    let MetadataRecord::Config(c) = &records[1].record else {
        panic!()
    };
    assert_eq!(
        (
            c.resource_type,
            c.resource_name.as_str(),
            c.name.as_str(),
            c.value.as_deref()
        ),
        (2, "orders", "cleanup.policy", Some("compact"))
    );
    for (i, record) in records[2..].iter().enumerate() {
        assert_eq!(record.version, 2, "PartitionRecord v2 at 4.1-IV1");
        let MetadataRecord::Partition(p) = &record.record else {
            panic!()
        };
        assert_eq!(p.partition_id, i as i32);
        assert_eq!(p.replicas.len(), 2);
        assert_eq!(p.isr, p.replicas, "all replicas are active");
        assert_eq!(p.leader, p.replicas[0]);
        assert_eq!((p.leader_epoch, p.partition_epoch), (0, 0));
        assert_eq!(
            p.directories,
            p.replicas.iter().map(|r| dir_of(*r)).collect::<Vec<_>>(),
            "single-dir brokers get their dir"
        );
        assert_eq!(p.eligible_leader_replicas, None);
    }
    let topic = &response.topics[0];
    assert_eq!(
        (
            topic.error_code,
            topic.error_message.clone(),
            topic.num_partitions,
            topic.replication_factor
        ),
        (0, None, 3, 2)
    );
    assert_eq!(topic.topic_id, t.topic_id);
    let configs = topic.configs.as_ref().unwrap();
    let cleanup = configs
        .iter()
        .find(|c| c.name.as_str() == "cleanup.policy")
        .unwrap();
    assert_eq!(
        (cleanup.value.as_deref(), cleanup.config_source),
        (Some("compact"), 1)
    );
    let retention = configs
        .iter()
        .find(|c| c.name.as_str() == "retention.ms")
        .unwrap();
    assert_eq!(
        (retention.value.as_deref(), retention.config_source),
        (Some("604800000"), 5)
    );
    node.commit();
    node.controller.image().check_invariants().unwrap();
    assert_eq!(
        node.controller
            .image()
            .topics
            .get_by_name("orders")
            .unwrap()
            .partitions
            .len(),
        3
    );
}

#[test]
fn create_topic_before_jbod_uses_record_v0_without_directories() {
    let mut node = TestNode::active(MetadataVersion::V3_6_IV2);
    let mut request = crate::testing::registration(1, Uuid::from_u64_pair(1, 1));
    request.log_dirs.clear();
    node.request(4, ControllerRequest::BrokerRegistration(request));
    node.commit();
    // While the only broker is fenced, placement fails.
    let (response, records) = create(&mut node, create_topics(&[("b", 1, 1)]));
    assert!(records.is_empty());
    assert_eq!(
        (
            response.topics[0].error_code,
            response.topics[0].error_message.as_deref()
        ),
        (
            38,
            Some("Unable to replicate the partition 1 time(s): All brokers are currently fenced.")
        )
    );
    let epoch = node.controller.image().cluster.broker(1).unwrap().epoch;
    node.heartbeat(1, epoch, false, false, node.next_offset());
    node.commit();
    let (_, records) = create(&mut node, create_topics(&[("a", 1, 1)]));
    assert_eq!(records[1].version, 0);
    let MetadataRecord::Partition(p) = &records[1].record else {
        panic!()
    };
    assert!(p.directories.is_empty());
    node.commit();
    let topic = node.controller.image().topics.get_by_name("a").unwrap();
    assert_eq!(topic.partitions[&0].directories, vec![DIRECTORY_MIGRATING]);
}

#[test]
fn multi_dir_brokers_get_unassigned_directories() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let mut request = crate::testing::registration(1, Uuid::from_u64_pair(1, 1));
    request.log_dirs = vec![dir_of(1), Uuid::from_u64_pair(77, 77)];
    node.request(4, ControllerRequest::BrokerRegistration(request));
    node.commit();
    let epoch = node.controller.image().cluster.broker(1).unwrap().epoch;
    node.heartbeat(1, epoch, false, false, node.next_offset());
    node.commit();
    let (_, records) = create(&mut node, create_topics(&[("a", 1, 1)]));
    let MetadataRecord::Partition(p) = &records[1].record else {
        panic!()
    };
    assert_eq!(p.directories, vec![DIRECTORY_UNASSIGNED]);
}

#[test]
fn create_topic_validation_errors_match_kafka() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1, 2]);
    node.create_topic("a.b", 1, 1);
    let mut request = create_topics(&[
        ("bad name", 1, 1),
        ("a_b", 1, 1),
        ("a.b", 1, 1),
        ("rf0", 1, 0),
        ("p0", 0, 1),
        ("rf3", 1, 3),
        ("dup", 1, 1),
        ("dup", 1, 1),
        ("__cluster_metadata", 1, 1),
        ("cfg", 1, 1),
        ("nullcfg", 1, 1),
        ("ok", -1, -1),
    ]);
    request.topics[9].configs = vec![CreatableTopicConfig::default()
        .with_name(StrBytes::from_static_str("no.such.config"))
        .with_value(Some(StrBytes::from_static_str("1")))];
    request.topics[10].configs = vec![CreatableTopicConfig::default()
        .with_name(StrBytes::from_static_str("retention.ms"))
        .with_value(None)];
    let (response, records) = create(&mut node, request);
    let by_name = |n: &str| {
        response
            .topics
            .iter()
            .find(|t| t.name.as_str() == n)
            .unwrap()
    };
    let check = |n: &str, code: i16, message: &str| {
        let t = by_name(n);
        assert_eq!(
            (t.error_code, t.error_message.as_deref()),
            (code, Some(message)),
            "{n}"
        );
    };
    check("bad name", 17, "Topic name is invalid: 'bad name' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'");
    check("a_b", 17, "Topic 'a_b' collides with existing topic: a.b");
    check("a.b", 36, "Topic 'a.b' already exists.");
    check(
        "rf0",
        38,
        "Replication factor must be larger than 0, or -1 to use the default value.",
    );
    check(
        "p0",
        37,
        "Number of partitions was set to an invalid non-positive value.",
    );
    check("rf3", 38, "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached because only 2 broker(s) are registered.");
    check("dup", 42, "Duplicate topic name.");
    check(
        "__cluster_metadata",
        42,
        "Creation of internal topic __cluster_metadata is prohibited.",
    );
    check("cfg", 40, "Unknown topic config name: no.such.config");
    check(
        "nullcfg",
        40,
        "Null value not supported for topic configs: retention.ms",
    );
    assert_eq!(by_name("ok").error_code, 0);
    assert_eq!(
        response
            .topics
            .iter()
            .filter(|t| t.name.as_str() == "dup")
            .count(),
        1
    );
    // Only "ok" was created (default partitions 1, default RF 1).
    assert_eq!(
        records
            .iter()
            .filter(|r| matches!(r.record, MetadataRecord::Topic(_)))
            .count(),
        1
    );
    assert_eq!(records.len(), 2);
}

#[test]
fn manual_assignments() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1, 2, 3]);
    let topic = |assignments: Vec<(i32, Vec<i32>)>, rf: i16, partitions: i32| {
        let mut t = CreatableTopic::default()
            .with_name(name("m"))
            .with_num_partitions(partitions)
            .with_replication_factor(rf);
        t.assignments = assignments
            .into_iter()
            .map(|(i, b)| {
                CreatableReplicaAssignment::default()
                    .with_partition_index(i)
                    .with_broker_ids(b.into_iter().map(Into::into).collect())
            })
            .collect();
        kafka_protocol::messages::CreateTopicsRequest::default().with_topics(vec![t])
    };
    let err = |node: &mut TestNode, r| {
        let (response, records) = create(node, r);
        assert!(records.is_empty());
        (
            response.topics[0].error_code,
            response.topics[0]
                .error_message
                .as_deref()
                .unwrap_or_default()
                .to_owned(),
        )
    };
    assert_eq!(err(&mut node, topic(vec![(0, vec![1])], 1, -1)).0, 42);
    assert_eq!(err(&mut node, topic(vec![(0, vec![1])], -1, 1)).0, 42);
    assert_eq!(
        err(&mut node, topic(vec![(0, vec![1, 9])], -1, -1)),
        (
            39,
            "The manual partition assignment includes broker 9, but no such broker is registered."
                .into()
        )
    );
    assert_eq!(
        err(&mut node, topic(vec![(0, vec![1, 1])], -1, -1)),
        (
            39,
            "The manual partition assignment includes the broker 1 more than once.".into()
        )
    );
    assert_eq!(
        err(
            &mut node,
            topic(vec![(0, vec![1, 2]), (1, vec![3])], -1, -1)
        )
        .0,
        39
    );
    assert_eq!(
        err(&mut node, topic(vec![(0, vec![1]), (2, vec![3])], -1, -1)),
        (
            39,
            "partitions should be a consecutive 0-based integer sequence".into()
        )
    );
    assert_eq!(
        err(&mut node, topic(vec![(0, vec![1]), (0, vec![2])], -1, -1)).0,
        39
    );
    let (response, records) = create(
        &mut node,
        topic(vec![(1, vec![3, 1]), (0, vec![2, 3])], -1, -1),
    );
    assert_eq!(response.topics[0].error_code, 0);
    let parts: Vec<(i32, Vec<i32>, i32)> = records
        .iter()
        .filter_map(|r| match &r.record {
            MetadataRecord::Partition(p) => Some((p.partition_id, p.replicas.clone(), p.leader)),
            _ => None,
        })
        .collect();
    assert_eq!(parts, vec![(0, vec![2, 3], 2), (1, vec![3, 1], 3)]);
}

#[test]
fn validate_only_writes_nothing() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1]);
    let (response, records) = create(
        &mut node,
        create_topics(&[("v", 2, 1)]).with_validate_only(true),
    );
    assert_eq!(response.topics[0].error_code, 0);
    assert_eq!(response.topics[0].num_partitions, 2);
    assert!(records.is_empty());
}

/// Case C14 (KAFKA-14204/14996): a request producing more than 10,000 records fails fast with
/// POLICY_VIOLATION; nothing is created and the controller stays active.
#[test]
fn excessively_large_create_topics_fails_with_policy_violation() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1]);
    // 10,001 topics × 100,000 partitions: rejected on the partition count.
    let names: Vec<String> = (0..10_001).map(|i| format!("t{i}")).collect();
    let huge: Vec<(&str, i32, i16)> = names.iter().map(|n| (n.as_str(), 100_000, 1)).collect();
    let (response, records) = create(&mut node, create_topics(&huge));
    assert!(records.is_empty());
    assert_eq!(response.topics.len(), 10_001);
    assert!(response.topics.iter().all(|t| t.error_code == 44
        && t.error_message.as_deref()
            == Some("Excessively large number of partitions per request.")));
    // 5,001 topics of one partition: 10,002 records although only 5,001 partitions.
    let many: Vec<(&str, i32, i16)> = names[..5_001].iter().map(|n| (n.as_str(), 1, 1)).collect();
    let (response, records) = create(&mut node, create_topics(&many));
    assert!(records.is_empty());
    assert!(response.topics.iter().all(|t| t.error_code == 44
        && t.error_message.as_deref()
            == Some("Unable to perform excessively large batch operation.")));
    assert!(node.controller.is_active());
    assert!(node.latest().topics.is_empty());
    // Control: about 5,000 records succeed in one atomic batch.
    let fine: Vec<(&str, i32, i16)> = names[..2_500].iter().map(|n| (n.as_str(), 1, 1)).collect();
    let ctx = node.ctx(7);
    let result = node
        .controller
        .handle(&ctx, &ControllerRequest::CreateTopics(create_topics(&fine)));
    assert!(result.atomic && result.records.len() == 5_000);
    node.append(&result);
    node.commit();
    assert_eq!(node.controller.image().topics.len(), 2_500);
}

fn delete(
    node: &mut TestNode,
    api_version: i16,
    request: DeleteTopicsRequest,
) -> (DeleteTopicsResponse, Vec<ApiMessageAndVersion>) {
    let (response, records) = node.request(api_version, ControllerRequest::DeleteTopics(request));
    let ControllerResponse::DeleteTopics(r) = response else {
        panic!()
    };
    (r, records)
}

#[test]
fn delete_topics_by_name_and_id() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1]);
    let a = node.create_topic("a", 2, 1);
    let b = node.create_topic("b", 1, 1);
    let config = CreatableTopicConfig::default()
        .with_name(StrBytes::from_static_str("retention.ms"))
        .with_value(Some(StrBytes::from_static_str("5")));
    let mut with_config = create_topics(&[("c", 1, 1)]);
    with_config.topics[0].configs = vec![config];
    create(&mut node, with_config);
    node.commit();

    let (response, records) = delete(
        &mut node,
        5,
        DeleteTopicsRequest::default().with_topic_names(vec![name("a"), name("zzz"), name("c")]),
    );
    assert_eq!(records.len(), 2);
    assert!(matches!(&records[0].record, MetadataRecord::RemoveTopic(r) if r.topic_id == a));
    let missing = response
        .responses
        .iter()
        .find(|r| r.name.as_deref().map(|n| n.as_str()) == Some("zzz"))
        .unwrap();
    assert_eq!(
        (missing.error_code, missing.error_message.as_deref()),
        (3, Some("This server does not host this topic-partition."))
    );
    node.commit();
    let image = node.controller.image();
    assert!(image.topics.get(&a).is_none());
    assert!(
        image.configs.value(2, "c", "retention.ms").is_none(),
        "a topic's configs go with it"
    );
    image.check_invariants().unwrap();

    let (response, records) = delete(
        &mut node,
        6,
        DeleteTopicsRequest::default().with_topics(vec![
            DeleteTopicState::default().with_topic_id(b),
            DeleteTopicState::default().with_topic_id(Uuid::from_u64_pair(5, 5)),
            DeleteTopicState::default(),
            DeleteTopicState::default()
                .with_name(Some(name("x")))
                .with_topic_id(b),
        ]),
    );
    assert_eq!(records.len(), 1);
    let codes: Vec<i16> = response.responses.iter().map(|r| r.error_code).collect();
    assert_eq!(
        codes.iter().filter(|c| **c == 42).count(),
        2,
        "{response:?}"
    );
    assert!(codes.contains(&100));
    assert!(response.responses.iter().any(|r| r.topic_id == b
        && r.error_code == 0
        && r.name.as_deref().map(|n| n.as_str()) == Some("b")));

    // Deleting twice by the same name is a duplicate.
    node.create_topic("d", 1, 1);
    let (response, records) = delete(
        &mut node,
        5,
        DeleteTopicsRequest::default().with_topic_names(vec![name("d"), name("d")]),
    );
    assert!(records.is_empty());
    assert_eq!(
        response.responses[0].error_message.as_deref(),
        Some("Duplicate topic name.")
    );
}

#[test]
fn min_isr_config_clears_elr_when_elr_is_enabled_and_configs_follow_java_map_order() {
    for (mv, expect_clear) in [
        (MetadataVersion::V4_1_IV1, true),
        (MetadataVersion::V3_9_IV0, false),
    ] {
        let mut node = TestNode::active(mv);
        node.add_brokers(&[1]);
        let mut request = create_topics(&[("m", 1, 1)]);
        request.topics[0].configs = ["retention.ms", "cleanup.policy", "min.insync.replicas"]
            .iter()
            .map(|k| {
                CreatableTopicConfig::default()
                    .with_name(StrBytes::from_static_str(k))
                    .with_value(Some(StrBytes::from_static_str(if *k == "cleanup.policy" {
                        "compact"
                    } else {
                        "1"
                    })))
            })
            .collect();
        let (response, records) = create(&mut node, request);
        assert_eq!(response.topics[0].error_code, 0);
        let kinds: Vec<String> = records
            .iter()
            .map(|r| match &r.record {
                MetadataRecord::Config(c) => c.name.clone(),
                other => other.name().to_owned(),
            })
            .collect();
        // java.util.HashMap order of the three keys, as Java 17 prints it.
        let mut expected = vec![
            "TopicRecord".to_owned(),
            "cleanup.policy".into(),
            "min.insync.replicas".into(),
            "retention.ms".into(),
        ];
        if expect_clear {
            expected.push("ClearElrRecord".into());
        }
        expected.push("PartitionRecord".into());
        assert_eq!(kinds, expected, "{mv}");
    }
    // Oversized values are refused: a string over 32,767 bytes cannot be decoded by Java, so the
    // request is INVALID_REQUEST (it was INVALID_CONFIG, the check Java makes on values it built).
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1]);
    let mut request = create_topics(&[("big", 1, 1)]);
    request.topics[0].configs = vec![CreatableTopicConfig::default()
        .with_name(StrBytes::from_static_str("cleanup.policy"))
        .with_value(Some(StrBytes::from_string("x".repeat(32_768))))];
    let (response, records) = create(&mut node, request);
    assert_eq!(response.topics[0].error_code, 42);
    assert_eq!(
        response.topics[0].error_message.as_deref(),
        Some("string field value had invalid length 32768")
    );
    assert!(records.is_empty());
}
