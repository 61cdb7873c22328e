//! A handler that fails is contained (issue 9): the request is answered UNKNOWN_SERVER_ERROR,
//! nothing is written, the image, the RNG and the broker sessions are as before, and the
//! controller serves the next request.

use kafka_protocol::messages::BrokerHeartbeatRequest;
use kraftwerk_records::metadata_version::MetadataVersion;

use crate::controller::{ControllerRequest as Req, ControllerResponse as Resp};
use crate::testing::{config, create_topics, TestNode};

fn active_with_brokers() -> TestNode {
    let mut node = TestNode::new(config(MetadataVersion::V4_1_IV1));
    node.become_leader();
    node.add_brokers(&[1, 2, 3]);
    node
}

#[test]
fn a_panicking_handler_answers_unknown_server_error_and_changes_nothing() {
    let mut node = active_with_brokers();
    let mut twin = active_with_brokers();
    let before = node.latest().clone();
    node.controller.panic_in_next_handler();
    // CreateTopics draws a topic id and a placement from the RNG before the panic.
    let (response, records) = node.request(7, Req::CreateTopics(create_topics(&[("lost", 3, 2)])));
    let Resp::CreateTopics(r) = response else {
        panic!()
    };
    assert_eq!(r.topics[0].error_code, -1);
    assert!(r.topics[0]
        .error_message
        .as_deref()
        .unwrap()
        .contains("panic injected by a test"));
    assert!(records.is_empty());
    assert_eq!(node.controller.handler_panics(), 1);
    assert_eq!(node.latest(), &before);
    // The next request gets what it gets on a controller that never saw the failed one: the
    // RNG did not move.
    let request = || Req::CreateTopics(create_topics(&[("kept", 3, 2)]));
    let (_, records) = node.request(7, request());
    let (_, twin_records) = twin.request(7, request());
    assert_eq!(records, twin_records);
    assert!(!records.is_empty());
}

#[test]
fn a_panicking_heartbeat_does_not_refresh_the_session() {
    let mut node = active_with_brokers();
    let epoch = node.latest().cluster.broker(1).unwrap().epoch;
    let session_ms = node.controller.config().session_timeout_ms;
    // Every broker heartbeats now; broker 1's next heartbeat fails in its handler.
    for id in [1, 2, 3] {
        let epoch = node.latest().cluster.broker(id).unwrap().epoch;
        node.heartbeat(id, epoch, false, false, node.next_offset());
    }
    node.now_ms += session_ms - 1_000;
    node.controller.panic_in_next_handler();
    let request = BrokerHeartbeatRequest::default()
        .with_broker_id(1.into())
        .with_broker_epoch(epoch)
        .with_current_metadata_offset(node.next_offset());
    let (response, records) = node.request(1, Req::BrokerHeartbeat(request));
    let Resp::BrokerHeartbeat(r) = response else {
        panic!()
    };
    assert_eq!((r.error_code, records.len()), (-1, 0));
    for id in [2, 3] {
        let epoch = node.latest().cluster.broker(id).unwrap().epoch;
        node.heartbeat(id, epoch, false, false, node.next_offset());
    }
    // Past the session of the last heartbeat that counted: broker 1 alone is fenced.
    node.now_ms += 2_000;
    node.poll_until_idle();
    node.commit();
    let fenced: Vec<i32> = node
        .latest()
        .cluster
        .brokers()
        .filter(|b| b.fenced)
        .map(|b| b.id)
        .collect();
    assert_eq!(fenced, [1]);
}
