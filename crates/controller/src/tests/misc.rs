//! Producer ids across failover (C20), controller registration and DescribeCluster,
//! UnregisterBroker, NOT_CONTROLLER answers.

use kafka_protocol::messages::controller_registration_request::Listener as ControllerListener;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::MetadataRecord;
use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use crate::controller::{Controller, ControllerRequest, ControllerResponse};
use crate::testing::{config, create_topics, registration, TestNode};

fn allocate(node: &mut TestNode, broker: i32, epoch: i64) -> AllocateProducerIdsResponse {
    let request = AllocateProducerIdsRequest::default()
        .with_broker_id(broker.into())
        .with_broker_epoch(epoch);
    let (response, _) = node.request(0, ControllerRequest::AllocateProducerIds(request));
    let ControllerResponse::AllocateProducerIds(r) = response else {
        panic!()
    };
    r
}

/// Case C20: blocks of 1000 ids, strictly increasing and never overlapping, also when the
/// active controller changes with uncommitted allocations in flight.
#[test]
fn producer_id_blocks_never_overlap_across_failover() {
    let mut a = TestNode::active(MetadataVersion::V4_1_IV1);
    let epochs = a.add_brokers(&[1, 2]);
    // A standby that replays every committed batch.
    let mut b = Controller::new(config(MetadataVersion::V4_1_IV1));
    b.replay_committed(&a.log).unwrap();
    let mut handed_out: Vec<(i64, i32)> = Vec::new();

    let first = allocate(&mut a, 1, epochs[0]);
    assert_eq!(
        (
            first.error_code,
            *first.producer_id_start,
            first.producer_id_len
        ),
        (0, 0, 1000)
    );
    handed_out.push((*first.producer_id_start, first.producer_id_len));
    let second = allocate(&mut a, 2, epochs[1]);
    assert_eq!(
        *second.producer_id_start, 1000,
        "speculative state: the second block follows the first"
    );
    a.commit();
    b.replay_committed(&a.log[b.last_committed_offset() as usize + 1..])
        .unwrap();
    handed_out.push((*second.producer_id_start, second.producer_id_len));
    // A third allocation is appended but never committed: A loses leadership.
    let lost = allocate(&mut a, 1, epochs[0]);
    assert_eq!(*lost.producer_id_start, 2000);
    a.controller.deactivate();
    assert_eq!(
        a.controller.latest().producer_ids.next_producer_id,
        2000,
        "deactivation reverts to committed"
    );

    // B takes over. The uncommitted block was never answered (responses wait for commit), so
    // re-issuing 2000 is correct; everything committed stays allocated.
    b.activate(2, 50_000);
    let mut node_b = TestNode {
        controller: b,
        log: a.log[..a.committed].to_vec(),
        committed: a.committed,
        now_ms: 50_000,
        epoch: 2,
    };
    let next = allocate(&mut node_b, 1, epochs[0]);
    assert_eq!(*next.producer_id_start, 2000);
    node_b.commit();
    handed_out.push((*next.producer_id_start, next.producer_id_len));
    let next = allocate(&mut node_b, 2, epochs[1]);
    handed_out.push((*next.producer_id_start, next.producer_id_len));
    node_b.commit();
    for w in handed_out.windows(2) {
        assert!(
            w[0].0 + i64::from(w[0].1) <= w[1].0,
            "overlap: {handed_out:?}"
        );
    }
    // Replaying a non-increasing ProducerIdsRecord is a replay error.
    let MetadataRecord::ProducerIds(r) = &node_b.log[node_b.log.len() - 1].1.record else {
        panic!()
    };
    let mut stale = r.clone();
    stale.next_producer_id = 1000;
    let offset = node_b.next_offset();
    let error = node_b
        .controller
        .replay_committed(&[(
            offset,
            kraftwerk_records::metadata::ApiMessageAndVersion::new(stale, 0),
        )])
        .unwrap_err();
    assert!(matches!(
        error,
        crate::error::ReplayError::ProducerIdNotIncreasing { .. }
    ));
    // Wrong broker epoch.
    assert_eq!(allocate(&mut node_b, 1, epochs[0] + 1).error_code, 77);
}

fn controller_registration(id: i32) -> ControllerRegistrationRequest {
    ControllerRegistrationRequest::default()
        .with_controller_id(id)
        .with_incarnation_id(Uuid::from_u64_pair(id as u64, 2))
        .with_listeners(vec![ControllerListener::default()
            .with_name(StrBytes::from_static_str("CONTROLLER"))
            .with_host(StrBytes::from_static_str("ctl"))
            .with_port(9093)
            .with_security_protocol(0)])
}

#[test]
fn controller_registration_and_describe_cluster() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let (response, records) = node.request(
        0,
        ControllerRequest::ControllerRegistration(controller_registration(3000)),
    );
    assert!(
        matches!(response, ControllerResponse::ControllerRegistration(ref r) if r.error_code == 0)
    );
    assert!(
        matches!(&records[0].record, MetadataRecord::RegisterController(r) if r.controller_id == 3000 && r.end_points[0].port == 9093)
    );
    node.request(
        0,
        ControllerRequest::ControllerRegistration(controller_registration(3001)),
    );
    node.commit();
    let describe = DescribeClusterRequest::default().with_endpoint_type(2);
    let ctx1 = node.ctx(1);
    let response = describe_cluster(&mut node.controller, &ctx1, &describe);
    assert_eq!(response.error_code, 0);
    assert_eq!(
        response
            .brokers
            .iter()
            .map(|b| *b.broker_id)
            .collect::<Vec<_>>(),
        vec![3000, 3001]
    );
    assert_eq!(*response.controller_id, 3000);
    assert_eq!(response.cluster_id.as_str(), crate::testing::CLUSTER_ID);
    // The broker endpoint type is refused on a controller.
    let wrong = describe_cluster(
        &mut node.controller,
        &ctx1,
        &DescribeClusterRequest::default().with_endpoint_type(1),
    );
    assert_eq!(wrong.error_code, 114);
    // Another listener name: no controllers, controller id -1.
    let mut ctx = node.ctx(1);
    ctx.listener_name = "OTHER".into();
    let other = describe_cluster(&mut node.controller, &ctx, &describe);
    assert!(other.brokers.is_empty());
    assert_eq!(*other.controller_id, -1);

    // Before 3.7-IV0 controllers cannot register.
    let mut old = TestNode::active(MetadataVersion::V3_6_IV2);
    let (response, records) = old.request(
        0,
        ControllerRequest::ControllerRegistration(controller_registration(3000)),
    );
    assert!(
        matches!(response, ControllerResponse::ControllerRegistration(ref r) if r.error_code == 35)
    );
    assert!(records.is_empty());
}

#[test]
fn unregister_broker_removes_it_from_isrs_and_the_cluster() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1, 2]);
    let topic = node.create_topic("u", 4, 2);
    let (response, records) = node.request(
        0,
        ControllerRequest::UnregisterBroker(
            UnregisterBrokerRequest::default().with_broker_id(2.into()),
        ),
    );
    assert!(matches!(response, ControllerResponse::UnregisterBroker(ref r) if r.error_code == 0));
    assert!(matches!(
        records.last().unwrap().record,
        MetadataRecord::UnregisterBroker(_)
    ));
    node.commit();
    let image = node.controller.image();
    assert!(image.cluster.broker(2).is_none());
    for p in image.topics.get(&topic).unwrap().partitions.values() {
        assert!(!p.isr.contains(&2) && p.leader == 1, "{p:?}");
    }
    image.check_invariants().unwrap();
    let (response, _) = node.request(
        0,
        ControllerRequest::UnregisterBroker(
            UnregisterBrokerRequest::default().with_broker_id(2.into()),
        ),
    );
    assert!(matches!(response, ControllerResponse::UnregisterBroker(ref r) if r.error_code == 102));
}

#[test]
fn standby_answers_not_controller_where_the_broker_looks() {
    let mut node = TestNode::new(config(MetadataVersion::V4_1_IV1));
    let requests = vec![
        ControllerRequest::BrokerRegistration(registration(1, Uuid::from_u64_pair(1, 1))),
        ControllerRequest::BrokerHeartbeat(BrokerHeartbeatRequest::default()),
        ControllerRequest::CreateTopics(create_topics(&[("a", 1, 1), ("b", 1, 1)])),
        ControllerRequest::DeleteTopics(
            DeleteTopicsRequest::default()
                .with_topic_names(vec![TopicName(StrBytes::from_static_str("a"))]),
        ),
        ControllerRequest::AllocateProducerIds(AllocateProducerIdsRequest::default()),
        ControllerRequest::AlterPartition(AlterPartitionRequest::default()),
        ControllerRequest::AssignReplicasToDirs(AssignReplicasToDirsRequest::default()),
        ControllerRequest::ControllerRegistration(controller_registration(1)),
        ControllerRequest::UnregisterBroker(UnregisterBrokerRequest::default()),
        ControllerRequest::ElectLeaders(Default::default()),
        ControllerRequest::UpdateFeatures(Default::default()),
    ];
    for request in requests {
        let (response, records) = node.request(0, request);
        assert!(records.is_empty());
        let codes: Vec<i16> = match response {
            ControllerResponse::BrokerRegistration(r) => vec![r.error_code],
            ControllerResponse::BrokerHeartbeat(r) => vec![r.error_code],
            ControllerResponse::CreateTopics(r) => r.topics.iter().map(|t| t.error_code).collect(),
            ControllerResponse::DeleteTopics(r) => {
                r.responses.iter().map(|t| t.error_code).collect()
            }
            ControllerResponse::AllocateProducerIds(r) => vec![r.error_code],
            ControllerResponse::AlterPartition(r) => vec![r.error_code],
            ControllerResponse::AssignReplicasToDirs(r) => vec![r.error_code],
            ControllerResponse::ControllerRegistration(r) => vec![r.error_code],
            ControllerResponse::UnregisterBroker(r) => vec![r.error_code],
            ControllerResponse::DescribeCluster(r) => vec![r.error_code],
            ControllerResponse::ElectLeaders(r) => vec![r.error_code],
            ControllerResponse::UpdateFeatures(r) => vec![r.error_code],
            other => panic!("unexpected response {other:?}"),
        };
        assert!(
            !codes.is_empty() && codes.iter().all(|c| *c == 41),
            "{codes:?}"
        );
    }
    assert!(
        node.controller.poll(0, 0).is_none(),
        "a standby writes nothing"
    );
}

/// DescribeCluster through the controller's one entry point.
fn describe_cluster(
    controller: &mut crate::controller::Controller,
    ctx: &crate::controller::RequestContext,
    request: &DescribeClusterRequest,
) -> kafka_protocol::messages::DescribeClusterResponse {
    let result = controller.handle(ctx, &ControllerRequest::DescribeCluster(request.clone()));
    assert!(result.records.is_empty());
    match result.response {
        ControllerResponse::DescribeCluster(r) => r,
        other => panic!("unexpected {other:?}"),
    }
}
