//! Controller seeds: requests aimed at the image the target starts from (its brokers, epochs,
//! topics and partitions), one per file and all in one stream.

use kafka_protocol::messages::alter_partition_reassignments_request::{
    ReassignablePartition, ReassignableTopic,
};
use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::elect_leaders_request::TopicPartitions;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::MetadataRecord;

use super::frame;
use crate::controller::{registration, setup_log};

fn topic(name: &str) -> TopicName {
    TopicName(StrBytes::from_string(name.to_owned()))
}

/// Broker epoch of `id` in the setup log.
fn broker_epoch(id: i32) -> i64 {
    setup_log()
        .iter()
        .find_map(|(_, r)| match &r.record {
            MetadataRecord::RegisterBroker(b) if b.broker_id == id => Some(b.broker_epoch),
            _ => None,
        })
        .expect("a registered broker")
}

/// `(topic id, partition 0's record)` of `name` in the setup log.
fn partition_zero(name: &str) -> (uuid::Uuid, i32, i32, Vec<i32>) {
    let id = setup_log()
        .iter()
        .find_map(|(_, r)| match &r.record {
            MetadataRecord::Topic(t) if t.name == name => Some(t.topic_id),
            _ => None,
        })
        .expect("a topic of the image");
    setup_log()
        .iter()
        .find_map(|(_, r)| match &r.record {
            MetadataRecord::Partition(p) if p.topic_id == id && p.partition_id == 0 => {
                Some((id, p.leader_epoch, p.partition_epoch, p.isr.clone()))
            }
            _ => None,
        })
        .expect("partition 0")
}

/// `(name, input)` pairs: one request per seed, then all of them as one stream.
pub fn controller_seeds() -> Vec<(String, Vec<u8>)> {
    let requests = requests();
    let mut all = Vec::new();
    let mut seeds: Vec<(String, Vec<u8>)> = requests
        .into_iter()
        .map(|(name, bytes)| {
            all.extend_from_slice(&bytes);
            (format!("image-{name}"), bytes.to_vec())
        })
        .collect();
    seeds.push(("image-all".into(), all));
    seeds
}

fn requests() -> Vec<(&'static str, bytes::Bytes)> {
    let mut create = CreateTopicsRequest::default();
    create.timeout_ms = 30_000;
    let mut t = CreatableTopic::default();
    t.name = topic("fresh");
    t.num_partitions = 4;
    t.replication_factor = 2;
    create.topics = vec![t];

    let mut partitions = CreatePartitionsRequest::default();
    let mut p = CreatePartitionsTopic::default();
    p.name = topic("orders");
    p.count = 5;
    partitions.topics = vec![p];
    partitions.timeout_ms = 30_000;

    let mut delete = DeleteTopicsRequest::default();
    let mut d = DeleteTopicState::default();
    d.name = Some(topic("logs"));
    delete.topics = vec![d];
    delete.timeout_ms = 30_000;

    let mut configs = IncrementalAlterConfigsRequest::default();
    let mut resource = AlterConfigsResource::default();
    resource.resource_type = 2; // TOPIC
    resource.resource_name = StrBytes::from_static_str("orders");
    let mut config = AlterableConfig::default();
    config.name = StrBytes::from_static_str("retention.ms");
    config.config_operation = 0; // SET
    config.value = Some(StrBytes::from_static_str("3600000"));
    resource.configs = vec![config];
    configs.resources = vec![resource];

    let mut reassign = AlterPartitionReassignmentsRequest::default();
    reassign.timeout_ms = 30_000;
    let mut rp = ReassignablePartition::default();
    rp.partition_index = 0;
    rp.replicas = Some(vec![3.into(), 1.into(), 2.into()]);
    let mut rt = ReassignableTopic::default();
    rt.name = topic("orders");
    rt.partitions = vec![rp];
    reassign.topics = vec![rt];

    let mut elect = ElectLeadersRequest::default();
    elect.election_type = 0; // PREFERRED
    let mut tp = TopicPartitions::default();
    tp.topic = topic("orders");
    tp.partitions = vec![0, 1, 2];
    elect.topic_partitions = Some(vec![tp]);
    elect.timeout_ms = 30_000;

    let (topic_id, leader_epoch, partition_epoch, isr) = partition_zero("orders");
    let mut alter = AlterPartitionRequest::default();
    let leader = isr[0];
    alter.broker_id = leader.into();
    alter.broker_epoch = broker_epoch(leader);
    let mut pd = PartitionData::default();
    pd.partition_index = 0;
    pd.leader_epoch = leader_epoch;
    pd.partition_epoch = partition_epoch;
    pd.new_isr_with_epochs = isr
        .iter()
        .take(2)
        .map(|&b| {
            let mut s = BrokerState::default();
            s.broker_id = b.into();
            s.broker_epoch = broker_epoch(b);
            s
        })
        .collect();
    let mut td = TopicData::default();
    td.topic_id = topic_id;
    td.partitions = vec![pd];
    alter.topics = vec![td];

    let mut heartbeat = BrokerHeartbeatRequest::default();
    heartbeat.broker_id = 1.into();
    heartbeat.broker_epoch = broker_epoch(1);
    heartbeat.current_metadata_offset = setup_log().len() as i64;
    let mut shutdown = heartbeat.clone();
    shutdown.broker_id = 2.into();
    shutdown.broker_epoch = broker_epoch(2);
    shutdown.want_shut_down = true;

    let mut producer_ids = AllocateProducerIdsRequest::default();
    producer_ids.broker_id = 1.into();
    producer_ids.broker_epoch = broker_epoch(1);

    let mut unregister = UnregisterBrokerRequest::default();
    unregister.broker_id = 3.into();

    let mut describe = DescribeConfigsRequest::default();
    let mut dr =
        kafka_protocol::messages::describe_configs_request::DescribeConfigsResource::default();
    dr.resource_type = 2;
    dr.resource_name = StrBytes::from_static_str("orders");
    describe.resources = vec![dr];

    let mut list = ListPartitionReassignmentsRequest::default();
    list.topics = None;
    list.timeout_ms = 30_000;

    // Correlation id 0: no time passes and every result commits before the next request.
    use RequestKind as K;
    vec![
        (
            "create-topics",
            frame(ApiKey::CreateTopics, 7, 0, K::CreateTopics(create)),
        ),
        (
            "create-partitions",
            frame(
                ApiKey::CreatePartitions,
                3,
                0,
                K::CreatePartitions(partitions),
            ),
        ),
        (
            "incremental-alter-configs",
            frame(
                ApiKey::IncrementalAlterConfigs,
                1,
                0,
                K::IncrementalAlterConfigs(configs),
            ),
        ),
        (
            "describe-configs",
            frame(ApiKey::DescribeConfigs, 4, 0, K::DescribeConfigs(describe)),
        ),
        (
            "alter-partition",
            frame(ApiKey::AlterPartition, 3, 0, K::AlterPartition(alter)),
        ),
        (
            "reassign",
            frame(
                ApiKey::AlterPartitionReassignments,
                0,
                0,
                K::AlterPartitionReassignments(reassign),
            ),
        ),
        (
            "list-reassignments",
            frame(
                ApiKey::ListPartitionReassignments,
                0,
                0,
                K::ListPartitionReassignments(list),
            ),
        ),
        (
            "elect-leaders",
            frame(ApiKey::ElectLeaders, 2, 0, K::ElectLeaders(elect)),
        ),
        (
            "heartbeat",
            frame(ApiKey::BrokerHeartbeat, 1, 0, K::BrokerHeartbeat(heartbeat)),
        ),
        (
            "allocate-producer-ids",
            frame(
                ApiKey::AllocateProducerIds,
                0,
                0,
                K::AllocateProducerIds(producer_ids),
            ),
        ),
        (
            "controlled-shutdown",
            frame(
                ApiKey::BrokerHeartbeat,
                1,
                0x2000,
                K::BrokerHeartbeat(shutdown),
            ),
        ),
        (
            "register-broker",
            frame(
                ApiKey::BrokerRegistration,
                4,
                0,
                K::BrokerRegistration(registration(4)),
            ),
        ),
        (
            "unregister-broker",
            frame(
                ApiKey::UnregisterBroker,
                0,
                0,
                K::UnregisterBroker(unregister),
            ),
        ),
        (
            "delete-topics",
            frame(ApiKey::DeleteTopics, 6, 0, K::DeleteTopics(delete)),
        ),
    ]
}
