//! Every request is checked before it produces records (issue 9): strings over Kafka's limit,
//! client-chosen counts, and the records one request may produce. Each case asserts Java's
//! error code (and message where Java's is fixed) and that no record was returned.

use kafka_protocol::messages::alter_client_quotas_request::{EntityData, EntryData, OpData};
use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::alter_user_scram_credentials_request::ScramCredentialUpsertion;
use kafka_protocol::messages::broker_registration_request::Listener;
use kafka_protocol::messages::controller_registration_request as controller_registration;
use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::update_features_request::FeatureUpdateKey;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{ApiMessageAndVersion, MetadataRecord, ProducerIdsRecord};
use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use crate::controller::{ControllerRequest as Req, ControllerResponse as Resp, ControllerResult};
use crate::testing::{create_topics, registration, TestNode};

const INVALID_REQUEST: i16 = 42;
const POLICY_VIOLATION: i16 = 44;
const UNKNOWN_SERVER_ERROR: i16 = -1;
const EXCESSIVE: &str = "Unable to perform excessively large batch operation.";

fn text(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_owned())
}

/// `n` bytes of UTF-8 made of two-byte characters (plus one ASCII byte if `n` is odd).
fn multibyte(n: usize) -> String {
    let mut s = "é".repeat(n / 2);
    if n % 2 == 1 {
        s.push('a');
    }
    assert_eq!(s.len(), n);
    s
}

fn node_with_brokers() -> TestNode {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1, 2, 3]);
    node
}

fn register(node: &mut TestNode, request: BrokerRegistrationRequest) -> (i16, usize) {
    let (response, records) = node.request(4, Req::BrokerRegistration(request));
    let Resp::BrokerRegistration(r) = response else {
        panic!()
    };
    (r.error_code, records.len())
}

fn with_host(id: i32, host: &str) -> BrokerRegistrationRequest {
    let mut request = registration(id, Uuid::from_u64_pair(id as u64, 9));
    request.listeners[0].host = text(host);
    request
}

#[test]
fn a_40000_byte_listener_host_is_invalid_request_and_writes_nothing() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    assert_eq!(
        register(&mut node, with_host(1, &"h".repeat(40_000))),
        (INVALID_REQUEST, 0)
    );
    assert!(node.latest().cluster.broker(1).is_none());
    // The next request is served as usual.
    assert_eq!(register(&mut node, with_host(1, "localhost")), (0, 1));
}

#[test]
fn the_string_limit_is_32767_bytes_of_utf8() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    // 16,384 two-byte characters: 16,384 UTF-16 units but 32,768 bytes.
    assert_eq!(
        register(&mut node, with_host(1, &multibyte(32_768))),
        (INVALID_REQUEST, 0)
    );
    // 32,767 bytes encode (TestNode::append checks that every record encodes and decodes).
    assert_eq!(
        register(&mut node, with_host(1, &multibyte(32_767))),
        (0, 1)
    );
    node.commit();
    let broker = node.controller.image().cluster.broker(1).unwrap();
    assert_eq!(broker.listeners[0].host.len(), 32_767);
    // Rack, listener name and feature names are checked the same way.
    let mut request = registration(2, Uuid::from_u64_pair(2, 1));
    request.rack = Some(text(&multibyte(32_768)));
    assert_eq!(register(&mut node, request), (INVALID_REQUEST, 0));
    let mut request = registration(2, Uuid::from_u64_pair(2, 1));
    request.listeners.push(
        Listener::default()
            .with_name(text(&"n".repeat(32_768)))
            .with_host(text("h")),
    );
    assert_eq!(register(&mut node, request), (INVALID_REQUEST, 0));
    let mut request = registration(2, Uuid::from_u64_pair(2, 1));
    request.features[1].name = text(&multibyte(40_000));
    assert_eq!(register(&mut node, request), (INVALID_REQUEST, 0));
}

#[test]
fn a_registration_record_over_one_batch_is_record_list_too_large() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let mut request = registration(1, Uuid::from_u64_pair(1, 1));
    // 900 listeners of 10,000-byte hosts: every string fits, the record (9 MB) does not.
    request.listeners = (0..900)
        .map(|i| {
            Listener::default()
                .with_name(text(&format!("L{i}")))
                .with_host(text(&"h".repeat(10_000)))
        })
        .collect();
    // Java's BatchAccumulator: RecordBatchTooLargeException (RECORD_LIST_TOO_LARGE).
    assert_eq!(register(&mut node, request), (18, 0));
    assert!(node.latest().cluster.broker(1).is_none());
}

#[test]
fn controller_registration_strings_are_checked() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let request = ControllerRegistrationRequest::default()
        .with_controller_id(3001)
        .with_listeners(vec![controller_registration::Listener::default()
            .with_name(text("CONTROLLER"))
            .with_host(text(&"h".repeat(40_000)))]);
    let (response, records) = node.request(0, Req::ControllerRegistration(request));
    let Resp::ControllerRegistration(r) = response else {
        panic!()
    };
    assert_eq!(
        (r.error_code, r.error_message.as_deref(), records.len()),
        (
            INVALID_REQUEST,
            Some("string field host had invalid length 40000"),
            0
        )
    );
}

fn create_partitions(node: &mut TestNode, count: i32) -> (CreatePartitionsResponse, usize) {
    let request =
        CreatePartitionsRequest::default().with_topics(vec![CreatePartitionsTopic::default()
            .with_name(TopicName(text("t")))
            .with_count(count)
            .with_assignments(None)]);
    let (response, records) = node.request(3, Req::CreatePartitions(request));
    let Resp::CreatePartitions(r) = response else {
        panic!()
    };
    (r, records.len())
}

#[test]
fn a_huge_create_partitions_count_is_refused_before_placing_anything() {
    let mut node = node_with_brokers();
    node.create_topic("t", 1, 3);
    let started = std::time::Instant::now();
    let (r, records) = create_partitions(&mut node, i32::MAX);
    assert!(started.elapsed().as_secs() < 5, "refused fast");
    assert_eq!(
        (
            r.results[0].error_code,
            r.results[0].error_message.as_deref(),
            records
        ),
        (POLICY_VIOLATION, Some(EXCESSIVE), 0)
    );
    // 10,001 partitions in all is one too many; 10,000 fit.
    assert_eq!(
        create_partitions(&mut node, 10_002).0.results[0].error_code,
        44
    );
    let (r, records) = create_partitions(&mut node, 10_001);
    assert_eq!((r.results[0].error_code, records), (0, 10_000));
}

#[test]
fn create_topics_bounds_partitions_and_replication_factor_first() {
    let mut node = node_with_brokers();
    let (response, records) = node.request(
        7,
        Req::CreateTopics(create_topics(&[("wide", 3, i16::MAX)])),
    );
    let Resp::CreateTopics(r) = response else {
        panic!()
    };
    assert_eq!(
        (r.topics[0].error_code, r.topics[0].error_message.as_deref(), records.len()),
        (
            38,
            Some(
                "Unable to replicate the partition 32767 time(s): The target replication factor of 32767 \
                 cannot be reached because only 3 broker(s) are registered."
            ),
            0
        )
    );
    let (response, records) = node.request(
        7,
        Req::CreateTopics(create_topics(&[("many", i32::MAX, 3)])),
    );
    let Resp::CreateTopics(r) = response else {
        panic!()
    };
    assert_eq!(
        (
            r.topics[0].error_code,
            r.topics[0].error_message.as_deref(),
            records.len()
        ),
        (
            POLICY_VIOLATION,
            Some("Excessively large number of partitions per request."),
            0
        )
    );
}

fn scram_upsert(name: &str, salted_password: &[u8]) -> ScramCredentialUpsertion {
    ScramCredentialUpsertion::default()
        .with_name(text(name))
        .with_mechanism(1)
        .with_iterations(8192)
        .with_salt(bytes::Bytes::from_static(b"salt"))
        .with_salted_password(bytes::Bytes::copy_from_slice(salted_password))
}

fn alter_scram(
    node: &mut TestNode,
    upsertions: Vec<ScramCredentialUpsertion>,
) -> (AlterUserScramCredentialsResponse, Vec<ApiMessageAndVersion>) {
    let request = AlterUserScramCredentialsRequest::default().with_upsertions(upsertions);
    let (response, records) = node.request(0, Req::AlterUserScramCredentials(request));
    let Resp::AlterUserScramCredentials(r) = response else {
        panic!()
    };
    (r, records)
}

#[test]
fn scram_user_names_salted_passwords_and_counts_are_checked() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let long = "u".repeat(40_000);
    let (r, records) = alter_scram(&mut node, vec![scram_upsert(&long, &[7; 32])]);
    assert!(records.is_empty());
    assert_eq!(
        (
            r.results[0].error_code,
            r.results[0].error_message.as_deref()
        ),
        (
            INVALID_REQUEST,
            Some("string field name had invalid length 40000")
        )
    );
    // 32,767 bytes of multi-byte characters are a valid name.
    let (r, records) = alter_scram(&mut node, vec![scram_upsert(&multibyte(32_767), &[7; 32])]);
    assert_eq!((r.results[0].error_code, records.len()), (0, 1));
    // Java's HMAC refuses an empty key: UNKNOWN_SERVER_ERROR for that user, no record.
    let (r, records) = alter_scram(
        &mut node,
        vec![scram_upsert("alice", &[]), scram_upsert("bob", &[1; 32])],
    );
    let codes: Vec<(String, i16)> = r
        .results
        .iter()
        .map(|x| (x.user.to_string(), x.error_code))
        .collect();
    assert_eq!(
        codes,
        [
            ("bob".to_owned(), 0),
            ("alice".to_owned(), UNKNOWN_SERVER_ERROR)
        ]
    );
    assert_eq!(records.len(), 1);
    // More than one atomic batch of users: refused whole, before any key is derived.
    let users = (0..10_001)
        .map(|i| scram_upsert(&format!("user{i}"), &[3; 32]))
        .collect();
    let (r, records) = alter_scram(&mut node, users);
    assert!(records.is_empty());
    assert!(r
        .results
        .iter()
        .all(|x| x.error_code == UNKNOWN_SERVER_ERROR));
    assert_eq!(
        r.results[0].error_message.as_deref(),
        Some("Attempted to atomically commit 10001 records, but maxRecordsPerBatch is 10000")
    );
}

fn quota_entry(user: &str, key: &str) -> EntryData {
    EntryData::default()
        .with_entity(vec![EntityData::default()
            .with_entity_type(text("user"))
            .with_entity_name(Some(text(user)))])
        .with_ops(vec![OpData::default()
            .with_key(text(key))
            .with_value(1024.0)])
}

fn alter_quotas(
    node: &mut TestNode,
    entries: Vec<EntryData>,
) -> (AlterClientQuotasResponse, Vec<ApiMessageAndVersion>) {
    let request = AlterClientQuotasRequest::default().with_entries(entries);
    let (response, records) = node.request(1, Req::AlterClientQuotas(request));
    let Resp::AlterClientQuotas(r) = response else {
        panic!()
    };
    (r, records)
}

#[test]
fn quota_entity_names_keys_and_record_counts_are_checked() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    for entry in [
        quota_entry(&"u".repeat(40_000), "producer_byte_rate"),
        quota_entry("alice", &"k".repeat(32_768)),
    ] {
        let (r, records) = alter_quotas(&mut node, vec![entry]);
        assert_eq!(
            (r.entries[0].error_code, records.len()),
            (INVALID_REQUEST, 0)
        );
    }
    let (r, records) = alter_quotas(
        &mut node,
        vec![quota_entry(&multibyte(32_767), "producer_byte_rate")],
    );
    assert_eq!((r.entries[0].error_code, records.len()), (0, 1));
    // 10,001 records in one request: Java's BoundedList fails the whole request.
    let entries = (0..10_001)
        .map(|i| quota_entry(&format!("user{i}"), "consumer_byte_rate"))
        .collect();
    let (r, records) = alter_quotas(&mut node, entries);
    assert!(records.is_empty());
    assert_eq!(r.entries.len(), 10_001);
    assert!(
        r.entries
            .iter()
            .all(|e| e.error_code == POLICY_VIOLATION
                && e.error_message.as_deref() == Some(EXCESSIVE))
    );
}

fn update_features(
    node: &mut TestNode,
    updates: Vec<FeatureUpdateKey>,
) -> (UpdateFeaturesResponse, Vec<ApiMessageAndVersion>) {
    let request = UpdateFeaturesRequest::default().with_feature_updates(updates);
    let (response, records) = node.request(1, Req::UpdateFeatures(request));
    let Resp::UpdateFeatures(r) = response else {
        panic!()
    };
    (r, records)
}

fn feature(name: &str, level: i16) -> FeatureUpdateKey {
    FeatureUpdateKey::default()
        .with_feature(text(name))
        .with_max_version_level(level)
        .with_upgrade_type(1)
}

#[test]
fn feature_names_are_checked_and_a_repeated_feature_is_one_update() {
    let mut node = TestNode::active(MetadataVersion::V4_0_IV3);
    node.add_brokers(&[1]);
    let (r, records) = update_features(&mut node, vec![feature(&"f".repeat(40_000), 1)]);
    assert_eq!(
        (r.error_code, r.error_message.as_deref(), records.len()),
        (
            INVALID_REQUEST,
            Some("string field feature had invalid length 40000"),
            0
        )
    );
    // Java collects the updates in a map: the last level of a feature wins, one record.
    let updates = (0..50_000)
        .map(|i| feature("group.version", i16::from(i % 2 == 1)))
        .collect();
    let (r, records) = update_features(&mut node, updates);
    assert_eq!((r.error_code, records.len()), (0, 1));
    let MetadataRecord::FeatureLevel(f) = &records[0].record else {
        panic!()
    };
    assert_eq!((f.name.as_str(), f.feature_level), ("group.version", 1));
}

#[test]
fn incremental_alter_configs_strings_are_checked_for_the_whole_request() {
    let mut node = node_with_brokers();
    node.create_topic("t", 1, 1);
    let resource = |name: &str, value: &str| {
        AlterConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name(text(name))
            .with_configs(vec![AlterableConfig::default()
                .with_name(text("retention.ms"))
                .with_config_operation(0)
                .with_value(Some(text(value)))])
    };
    let request = IncrementalAlterConfigsRequest::default().with_resources(vec![
        resource("t", "1000"),
        resource("t2", &multibyte(32_768)),
    ]);
    let (response, records) = node.request(1, Req::IncrementalAlterConfigs(request));
    let Resp::IncrementalAlterConfigs(r) = response else {
        panic!()
    };
    assert!(records.is_empty());
    assert_eq!(r.responses.len(), 2);
    assert!(r.responses.iter().all(|x| x.error_code == INVALID_REQUEST));
}

#[test]
fn producer_ids_at_the_end_of_the_id_space_are_unknown_server_error() {
    let mut node = node_with_brokers();
    let epoch = node.latest().cluster.broker(1).unwrap().epoch;
    // Move the next producer id to the last whole block.
    let last_block = i64::MAX - 1000;
    node.append(&ControllerResult::of(
        vec![ApiMessageAndVersion::new(
            ProducerIdsRecord {
                broker_id: 1,
                broker_epoch: epoch,
                next_producer_id: last_block,
                ..Default::default()
            },
            0,
        )],
        (),
    ));
    let allocate = |node: &mut TestNode| {
        let request = AllocateProducerIdsRequest::default()
            .with_broker_id(1.into())
            .with_broker_epoch(epoch);
        let (response, records) = node.request(0, Req::AllocateProducerIds(request));
        let Resp::AllocateProducerIds(r) = response else {
            panic!()
        };
        (r.error_code, *r.producer_id_start, records.len())
    };
    // The last block ends exactly at i64::MAX.
    assert_eq!(allocate(&mut node), (0, last_block, 1));
    // Java: "Exhausted all producerIds as the next block's end producerId has exceeded the
    // int64 type limit" (UnknownServerException).
    assert_eq!(allocate(&mut node), (UNKNOWN_SERVER_ERROR, 0, 0));
}

#[test]
fn a_huge_isr_in_alter_partition_is_invalid_request() {
    let mut node = node_with_brokers();
    let topic_id = node.create_topic("t", 1, 3);
    let p = node
        .latest()
        .topics
        .partition(&topic_id, 0)
        .unwrap()
        .clone();
    let epoch = node.latest().cluster.broker(p.leader).unwrap().epoch;
    let isr = (0..1_000_000)
        .map(|i| BrokerState::default().with_broker_id((i % 3 + 1).into()))
        .collect();
    let request = AlterPartitionRequest::default()
        .with_broker_id(p.leader.into())
        .with_broker_epoch(epoch)
        .with_topics(vec![TopicData::default()
            .with_topic_id(topic_id)
            .with_partitions(vec![PartitionData::default()
                .with_partition_index(0)
                .with_leader_epoch(p.leader_epoch)
                .with_partition_epoch(p.partition_epoch)
                .with_new_isr_with_epochs(isr)])]);
    let (response, records) = node.request(3, Req::AlterPartition(request));
    let Resp::AlterPartition(r) = response else {
        panic!()
    };
    assert_eq!(
        (r.topics[0].partitions[0].error_code, records.len()),
        (INVALID_REQUEST, 0)
    );
}

/// A topic "t" with replicas [1, 2, 3] whose leader is 2 while the preferred 1 is back in the
/// ISR: a preferred election has work to do.
fn topic_needing_a_preferred_election(node: &mut TestNode) -> Uuid {
    let mut request = create_topics(&[("t", -1, -1)]);
    request.topics[0].assignments = vec![
        kafka_protocol::messages::create_topics_request::CreatableReplicaAssignment::default()
            .with_partition_index(0)
            .with_broker_ids(vec![1.into(), 2.into(), 3.into()]),
    ];
    node.request(7, Req::CreateTopics(request));
    node.commit();
    let topic_id = node.latest().topics.id_of("t").unwrap();
    let epoch = |node: &TestNode, id: i32| node.latest().cluster.broker(id).unwrap().epoch;
    // Fence broker 1 (leadership moves to 2), then unfence it.
    node.heartbeat(1, epoch(node, 1), true, false, node.next_offset());
    node.commit();
    node.heartbeat(1, epoch(node, 1), false, false, node.next_offset());
    node.commit();
    // The leader adds 1 back to the ISR.
    let p = node
        .latest()
        .topics
        .partition(&topic_id, 0)
        .unwrap()
        .clone();
    assert_eq!(p.leader, 2);
    let isr = [2, 3, 1]
        .iter()
        .map(|b| {
            BrokerState::default()
                .with_broker_id((*b).into())
                .with_broker_epoch(-1)
        })
        .collect();
    let request = AlterPartitionRequest::default()
        .with_broker_id(2.into())
        .with_broker_epoch(epoch(node, 2))
        .with_topics(vec![TopicData::default()
            .with_topic_id(topic_id)
            .with_partitions(vec![PartitionData::default()
                .with_partition_index(0)
                .with_leader_epoch(p.leader_epoch)
                .with_partition_epoch(p.partition_epoch)
                .with_new_isr_with_epochs(isr)])]);
    node.request(3, Req::AlterPartition(request));
    node.commit();
    topic_id
}

fn elect_preferred(node: &mut TestNode, listings: usize) -> (ElectLeadersResponse, usize) {
    let request = ElectLeadersRequest::default()
        .with_election_type(0)
        .with_topic_partitions(Some(vec![
            kafka_protocol::messages::elect_leaders_request::TopicPartitions::default()
                .with_topic(TopicName(text("t")))
                .with_partitions(vec![0; listings]),
        ]));
    let (response, records) = node.request(2, Req::ElectLeaders(request));
    let Resp::ElectLeaders(r) = response else {
        panic!()
    };
    (r, records.len())
}

#[test]
fn elect_leaders_stops_at_one_batch_of_records() {
    let mut node = node_with_brokers();
    let topic_id = topic_needing_a_preferred_election(&mut node);
    // Each listing elects the partition again against the same image: 10,001 records would be
    // one too many for Java's BoundedList.
    let (r, records) = elect_preferred(&mut node, 10_001);
    assert_eq!((r.error_code, records), (POLICY_VIOLATION, 0));
    let partitions = &r.replica_election_results[0].partition_result;
    assert_eq!(partitions.len(), 10_001);
    assert!(
        partitions
            .iter()
            .all(|p| p.error_code == POLICY_VIOLATION
                && p.error_message.as_deref() == Some(EXCESSIVE))
    );
    assert_eq!(
        node.latest().topics.partition(&topic_id, 0).unwrap().leader,
        2
    );
    let (r, records) = elect_preferred(&mut node, 1);
    assert_eq!((r.error_code, records), (0, 1));
    node.commit();
    assert_eq!(
        node.latest().topics.partition(&topic_id, 0).unwrap().leader,
        1
    );
}

fn reassign(
    node: &mut TestNode,
    topic: &str,
    listings: usize,
) -> (AlterPartitionReassignmentsResponse, usize) {
    use kafka_protocol::messages::alter_partition_reassignments_request::{
        ReassignablePartition, ReassignableTopic,
    };
    let partition = ReassignablePartition::default()
        .with_partition_index(0)
        .with_replicas(Some(vec![1.into(), 2.into(), 3.into()]));
    let request = AlterPartitionReassignmentsRequest::default().with_topics(vec![
        ReassignableTopic::default()
            .with_name(TopicName(text(topic)))
            .with_partitions(vec![partition; listings]),
    ]);
    let (response, records) = node.request(0, Req::AlterPartitionReassignments(request));
    let Resp::AlterPartitionReassignments(r) = response else {
        panic!()
    };
    (r, records.len())
}

/// A topic name over Kafka's limit is INVALID_REQUEST for the whole request; a reassignment
/// that would be the 10,001st record is UNKNOWN_SERVER_ERROR for that partition alone
/// (`ReplicationControlManager.alterPartitionReassignments` catches the `BoundedList`'s
/// exception per partition), the others are written in one batch.
#[test]
fn reassignments_check_names_and_stop_at_one_batch_of_records() {
    let mut node = node_with_brokers();
    node.request(7, Req::CreateTopics(create_topics(&[("r", 1, 1)])));
    node.commit();
    let (r, records) = reassign(&mut node, &"r".repeat(40_000), 1);
    assert_eq!((r.error_code, records), (INVALID_REQUEST, 0));
    assert_eq!(
        r.error_message.as_deref(),
        Some("string field name had invalid length 40000")
    );
    // Each listing changes the same partition against the same image: one record each.
    let (r, records) = reassign(&mut node, "r", 10_001);
    assert_eq!((r.error_code, records), (0, 10_000));
    let codes: Vec<i16> = r.responses[0]
        .partitions
        .iter()
        .map(|p| p.error_code)
        .collect();
    assert!(codes[..10_000].iter().all(|c| *c == 0));
    assert_eq!(codes[10_000], UNKNOWN_SERVER_ERROR);
}
