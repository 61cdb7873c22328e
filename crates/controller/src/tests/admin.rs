//! CreatePartitions, ElectLeaders, UpdateFeatures, IncrementalAlterConfigs.

use kafka_protocol::messages::create_partitions_request::{
    CreatePartitionsAssignment, CreatePartitionsTopic,
};
use kafka_protocol::messages::elect_leaders_request::TopicPartitions;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::update_features_request::FeatureUpdateKey;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::MetadataRecord;
use kraftwerk_records::metadata_version::MetadataVersion;

use crate::controller::{ControllerRequest as AdminRequest, ControllerResponse as AdminResponse};
use crate::testing::TestNode;

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_owned()))
}

fn create_partitions(
    node: &mut TestNode,
    topics: Vec<CreatePartitionsTopic>,
) -> (CreatePartitionsResponse, usize) {
    let (response, records) = node.admin(
        3,
        AdminRequest::CreatePartitions(CreatePartitionsRequest::default().with_topics(topics)),
    );
    let AdminResponse::CreatePartitions(r) = response else {
        panic!()
    };
    (r, records.len())
}

#[test]
fn create_partitions_adds_partitions_with_the_topics_replication_factor() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1, 2, 3]);
    let topic = node.create_topic("grow", 2, 2);
    let (r, n) = create_partitions(
        &mut node,
        vec![CreatePartitionsTopic::default()
            .with_name(name("grow"))
            .with_count(5)
            .with_assignments(None)],
    );
    assert_eq!((r.results[0].error_code, n), (0, 3));
    node.commit();
    let t = node.controller.image().topics.get(&topic).unwrap();
    assert_eq!(t.partitions.len(), 5);
    assert!(t
        .partitions
        .values()
        .all(|p| p.replicas.len() == 2 && p.isr.len() == 2));
    node.controller.image().check_invariants().unwrap();
    let check =
        |node: &mut TestNode, t: CreatePartitionsTopic, code: i16, message: Option<&str>| {
            let (r, n) = create_partitions(node, vec![t]);
            assert_eq!(
                (
                    r.results[0].error_code,
                    r.results[0].error_message.as_deref(),
                    n
                ),
                (code, message, 0)
            );
        };
    check(
        &mut node,
        CreatePartitionsTopic::default()
            .with_name(name("grow"))
            .with_count(5)
            .with_assignments(None),
        37,
        Some("Topic already has 5 partition(s)."),
    );
    check(
        &mut node,
        CreatePartitionsTopic::default()
            .with_name(name("grow"))
            .with_count(4)
            .with_assignments(None),
        37,
        Some("The topic grow currently has 5 partition(s); 4 would not be an increase."),
    );
    check(
        &mut node,
        CreatePartitionsTopic::default()
            .with_name(name("nope"))
            .with_count(4)
            .with_assignments(None),
        3,
        None,
    );
    check(
        &mut node,
        CreatePartitionsTopic::default()
            .with_name(name("grow"))
            .with_count(7)
            .with_assignments(Some(vec![
                CreatePartitionsAssignment::default().with_broker_ids(vec![1.into(), 2.into()])
            ])),
        39,
        Some(
            "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.",
        ),
    );
    check(
        &mut node,
        CreatePartitionsTopic::default().with_name(name("grow")).with_count(6).with_assignments(Some(vec![CreatePartitionsAssignment::default().with_broker_ids(vec![1.into()])])),
        39,
        Some("The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s)."),
    );
    let (r, n) = create_partitions(
        &mut node,
        vec![CreatePartitionsTopic::default()
            .with_name(name("grow"))
            .with_count(6)
            .with_assignments(Some(vec![
                CreatePartitionsAssignment::default().with_broker_ids(vec![3.into(), 1.into()])
            ]))],
    );
    assert_eq!((r.results[0].error_code, n), (0, 1));
    node.commit();
    assert_eq!(
        node.controller
            .image()
            .topics
            .partition(&topic, 5)
            .unwrap()
            .replicas,
        vec![3, 1]
    );
    // Duplicates.
    let t = CreatePartitionsTopic::default()
        .with_name(name("grow"))
        .with_count(9)
        .with_assignments(None);
    let (r, n) = create_partitions(&mut node, vec![t.clone(), t]);
    assert_eq!((r.results.len(), r.results[0].error_code, n), (1, 42, 0));
}

#[test]
fn elect_leaders_preferred_and_unclean() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let epochs = node.add_brokers(&[1, 2]);
    let topic = node.create_topic("e", 2, 2);
    let p0 = node
        .controller
        .image()
        .topics
        .partition(&topic, 0)
        .unwrap()
        .clone();
    let preferred = p0.replicas[0];
    // Fence and unfence the preferred leader: leadership stays with the other broker.
    node.heartbeat(
        preferred,
        epochs[(preferred - 1) as usize],
        true,
        false,
        node.next_offset(),
    );
    node.commit();
    let offset = node.next_offset();
    node.heartbeat(
        preferred,
        epochs[(preferred - 1) as usize],
        false,
        false,
        offset,
    );
    node.commit();
    // The preferred replica is out of the ISR: not available.
    let request = ElectLeadersRequest::default()
        .with_election_type(0)
        .with_topic_partitions(Some(vec![TopicPartitions::default()
            .with_topic(name("e"))
            .with_partitions(vec![0, 9])]));
    let (response, records) = node.admin(2, AdminRequest::ElectLeaders(request.clone()));
    let AdminResponse::ElectLeaders(r) = response else {
        panic!()
    };
    let codes: Vec<i16> = r.replica_election_results[0]
        .partition_result
        .iter()
        .map(|p| p.error_code)
        .collect();
    assert_eq!(codes, vec![80, 3]);
    assert!(records.is_empty());
    // Once back in the ISR, the election moves leadership.
    let p = node
        .controller
        .latest()
        .topics
        .partition(&topic, 0)
        .unwrap()
        .clone();
    let leader = p.leader;
    let data = kafka_protocol::messages::alter_partition_request::PartitionData::default()
        .with_partition_index(0)
        .with_leader_epoch(p.leader_epoch)
        .with_partition_epoch(p.partition_epoch)
        .with_new_isr_with_epochs(
            [leader, preferred]
                .iter()
                .map(|b| {
                    kafka_protocol::messages::alter_partition_request::BrokerState::default()
                        .with_broker_id((*b).into())
                        .with_broker_epoch(-1)
                })
                .collect(),
        );
    node.request(
        3,
        crate::controller::ControllerRequest::AlterPartition(
            AlterPartitionRequest::default()
                .with_broker_id(leader.into())
                .with_broker_epoch(epochs[(leader - 1) as usize])
                .with_topics(vec![
                    kafka_protocol::messages::alter_partition_request::TopicData::default()
                        .with_topic_id(topic)
                        .with_partitions(vec![data]),
                ]),
        ),
    );
    node.commit();
    let (response, records) = node.admin(2, AdminRequest::ElectLeaders(request));
    let AdminResponse::ElectLeaders(r) = response else {
        panic!()
    };
    assert_eq!(
        r.replica_election_results[0].partition_result[0].error_code,
        0
    );
    assert_eq!(records.len(), 1);
    node.commit();
    assert_eq!(
        node.controller
            .image()
            .topics
            .partition(&topic, 0)
            .unwrap()
            .leader,
        preferred
    );
    // All partitions, unclean: none needed (every partition has a leader) → left out.
    let (response, _) = node.admin(
        2,
        AdminRequest::ElectLeaders(
            ElectLeadersRequest::default()
                .with_election_type(1)
                .with_topic_partitions(None),
        ),
    );
    let AdminResponse::ElectLeaders(r) = response else {
        panic!()
    };
    assert!(r
        .replica_election_results
        .iter()
        .all(|t| t.partition_result.is_empty()));
    let (response, _) = node.admin(
        2,
        AdminRequest::ElectLeaders(ElectLeadersRequest::default().with_election_type(7)),
    );
    let AdminResponse::ElectLeaders(r) = response else {
        panic!()
    };
    assert_eq!(r.error_code, 42);
}

fn update(
    node: &mut TestNode,
    updates: &[(&'static str, i16, i8)],
    validate_only: bool,
) -> (
    UpdateFeaturesResponse,
    Vec<kraftwerk_records::metadata::ApiMessageAndVersion>,
) {
    let request = UpdateFeaturesRequest::default()
        .with_validate_only(validate_only)
        .with_feature_updates(
            updates
                .iter()
                .map(|(f, level, t)| {
                    FeatureUpdateKey::default()
                        .with_feature(StrBytes::from_static_str(f))
                        .with_max_version_level(*level)
                        .with_upgrade_type(*t)
                })
                .collect(),
        );
    let (response, records) = node.admin(1, AdminRequest::UpdateFeatures(request));
    let AdminResponse::UpdateFeatures(r) = response else {
        panic!()
    };
    (r, records)
}

#[test]
fn update_features_upgrades_metadata_version_and_refuses_lossy_downgrades() {
    let mut node = TestNode::active(MetadataVersion::V4_0_IV3);
    node.add_brokers(&[1]);
    let (r, records) = update(&mut node, &[("metadata.version", 27, 1)], true);
    assert_eq!((r.error_code, records.len()), (0, 0), "validate only");
    let (r, records) = update(
        &mut node,
        &[
            ("metadata.version", 27, 1),
            ("eligible.leader.replicas.version", 1, 1),
        ],
        false,
    );
    assert_eq!(r.error_code, 0, "{:?}", r.error_message);
    assert_eq!(r.results.len(), 2, "v1 responses list every feature");
    assert_eq!(records.len(), 2);
    node.commit();
    assert_eq!(
        node.controller.image().metadata_version(),
        MetadataVersion::V4_1_IV1
    );
    assert!(node.controller.image().features.is_elr_enabled());
    // Downgrade without the downgrade type.
    let (r, records) = update(&mut node, &[("metadata.version", 26, 1)], false);
    assert_eq!(r.error_code, 95);
    assert!(r.error_message.as_deref().unwrap().starts_with("The update failed for all features since the following feature had an error: Invalid update version 26 for feature metadata.version. Can't downgrade"));
    assert!(records.is_empty());
    // 4.1-IV1 → 4.1-IV0 changes no metadata: allowed as a safe downgrade.
    let (r, _) = update(&mut node, &[("metadata.version", 26, 2)], false);
    assert_eq!(r.error_code, 0, "{:?}", r.error_message);
    node.commit();
    // 4.1-IV0 → 3.9-IV0 crosses 4.0-IV1 (ELR records): refused.
    let (r, _) = update(&mut node, &[("metadata.version", 21, 2)], false);
    assert_eq!(r.error_code, 95);
    assert!(r.error_message.as_deref().unwrap().contains(
        "Refusing to perform the requested downgrade because it might delete metadata information."
    ));
    // A level the broker does not support.
    let (r, _) = update(&mut node, &[("metadata.version", 28, 1)], false);
    assert_eq!(r.error_code, 95);
    assert!(
        r.error_message
            .as_deref()
            .unwrap()
            .contains("Broker 1 only supports versions 7-27"),
        "{:?}",
        r.error_message
    );
    // A level this controller does not support (4.5-IV0 is testing-only).
    let (r, _) = update(&mut node, &[("metadata.version", 34, 1)], false);
    assert_eq!(r.error_code, 95);
    assert!(
        r.error_message
            .as_deref()
            .unwrap()
            .contains("Local controller 3000 only supports versions 7-33"),
        "{:?}",
        r.error_message
    );
    // kraft.version cannot be changed here.
    let (r, _) = update(&mut node, &[("kraft.version", 1, 1)], false);
    assert_eq!(r.error_code, 95);
}

fn alter(
    node: &mut TestNode,
    resources: Vec<AlterConfigsResource>,
) -> (
    IncrementalAlterConfigsResponse,
    Vec<kraftwerk_records::metadata::ApiMessageAndVersion>,
) {
    let (response, records) = node.admin(
        1,
        AdminRequest::IncrementalAlterConfigs(
            IncrementalAlterConfigsRequest::default().with_resources(resources),
        ),
    );
    let AdminResponse::IncrementalAlterConfigs(r) = response else {
        panic!()
    };
    (r, records)
}

fn resource(
    t: i8,
    name: &str,
    configs: &[(&'static str, i8, Option<&'static str>)],
) -> AlterConfigsResource {
    AlterConfigsResource::default()
        .with_resource_type(t)
        .with_resource_name(StrBytes::from_string(name.to_owned()))
        .with_configs(
            configs
                .iter()
                .map(|(k, op, v)| {
                    AlterableConfig::default()
                        .with_name(StrBytes::from_static_str(k))
                        .with_config_operation(*op)
                        .with_value(v.map(StrBytes::from_static_str))
                })
                .collect(),
        )
}

#[test]
fn incremental_alter_configs_for_topics_and_the_cluster() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1]);
    node.create_topic("c", 1, 1);
    let (r, records) = alter(
        &mut node,
        vec![resource(
            2,
            "c",
            &[
                ("retention.ms", 0, Some("1000")),
                ("cleanup.policy", 2, Some("compact")),
            ],
        )],
    );
    assert_eq!(
        r.responses[0].error_code, 0,
        "{:?}",
        r.responses[0].error_message
    );
    assert_eq!(records.len(), 2);
    node.commit();
    let image = node.controller.image();
    assert_eq!(
        image
            .configs
            .value(2, "c", "retention.ms")
            .map(String::as_str),
        Some("1000")
    );
    assert_eq!(
        image
            .configs
            .value(2, "c", "cleanup.policy")
            .map(String::as_str),
        Some("delete,compact")
    );
    // DELETE and SUBTRACT.
    let (r, _) = alter(
        &mut node,
        vec![resource(
            2,
            "c",
            &[
                ("retention.ms", 1, None),
                ("cleanup.policy", 3, Some("delete")),
            ],
        )],
    );
    assert_eq!(r.responses[0].error_code, 0);
    node.commit();
    assert!(node
        .controller
        .image()
        .configs
        .value(2, "c", "retention.ms")
        .is_none());
    assert_eq!(
        node.controller
            .image()
            .configs
            .value(2, "c", "cleanup.policy")
            .map(String::as_str),
        Some("compact")
    );
    // Errors, one request each (a resource may appear once per request).
    let cases: Vec<(AlterConfigsResource, (i16, &str))> = vec![
        (
            resource(2, "missing", &[("retention.ms", 0, Some("1"))]),
            (3, "The topic 'missing' does not exist."),
        ),
        (
            resource(2, "c", &[("no.such", 0, Some("1"))]),
            (40, "Unknown topic config name: no.such"),
        ),
        (
            resource(2, "c", &[("retention.ms", 2, Some("1"))]),
            (
                40,
                "Can't APPEND to key retention.ms because its type is not LIST.",
            ),
        ),
        (
            resource(2, "c", &[("retention.ms", 0, Some("x"))]),
            (
                40,
                "Invalid value x for configuration retention.ms: Not a number of type LONG",
            ),
        ),
        (
            resource(4, "7", &[("log.retention.ms", 0, Some("1"))]),
            (102, "No node with id 7 found."),
        ),
        // `ControllerConfigurationValidator.validateBrokerName` runs before the existence check.
        (
            resource(4, "x", &[("log.retention.ms", 0, Some("1"))]),
            (42, "Unable to parse broker name x"),
        ),
        (
            resource(4, "-1", &[("log.retention.ms", 0, Some("1"))]),
            (42, "Invalid negative broker ID."),
        ),
        (
            resource(4, "1", &[("min.insync.replicas", 0, Some("2"))]),
            (
                40,
                "Broker-level min.insync.replicas cannot be altered while ELR is enabled.",
            ),
        ),
        (
            resource(4, "", &[("min.insync.replicas", 1, None)]),
            (
                40,
                "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.",
            ),
        ),
        (resource(99, "z", &[]), (35, "Unknown resource type 99.")),
    ];
    for (request, expected) in cases {
        let (r, records) = alter(&mut node, vec![request]);
        assert!(records.is_empty());
        assert_eq!(
            (
                r.responses[0].error_code,
                r.responses[0].error_message.as_deref().unwrap_or_default()
            ),
            expected
        );
    }
    // Cluster-level min.insync.replicas under ELR: the value plus a ClearElrRecord for all topics.
    let (r, records) = alter(
        &mut node,
        vec![resource(4, "", &[("min.insync.replicas", 0, Some("1"))])],
    );
    assert_eq!(r.responses[0].error_code, 0);
    assert!(
        matches!(&records[0].record, MetadataRecord::Config(c) if c.resource_type == 4 && c.resource_name.is_empty())
    );
    assert!(matches!(&records[1].record, MetadataRecord::ClearElr(c) if c.topic_name.is_empty()));
    // Duplicate resources.
    let (r, _) = alter(
        &mut node,
        vec![
            resource(2, "c", &[("retention.ms", 0, Some("5"))]),
            resource(2, "c", &[("retention.ms", 0, Some("6"))]),
        ],
    );
    assert_eq!((r.responses.len(), r.responses[0].error_code), (1, 42));
}
