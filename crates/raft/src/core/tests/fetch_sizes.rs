//! KIP-1219 (Kafka 4.4): a follower asks for `controller.quorum.fetch.max.bytes` /
//! `controller.quorum.fetch.snapshot.max.bytes` per request, and a leader answers within the
//! request's `MaxBytes` (at least one batch), as `KafkaRaftClient` 4.4 does.

use super::*;
use crate::config::MAX_FETCH_BYTES;
use crate::core::fetch_leader::response_max_bytes;

/// The leader of epoch 1 with two more batches after its LeaderChange: `r1` at offset 1 and
/// `r2` at offset 2, each its own batch.
fn leader_with_two_batches() -> Core {
    let mut c = leader();
    c.append(2_110, vec![Bytes::from_static(b"r1")]).unwrap();
    c.poll(2_110 + 25).unwrap();
    c.append(2_200, vec![Bytes::from_static(b"r2")]).unwrap();
    c.poll(2_200 + 25).unwrap();
    c.take_outputs();
    c
}

fn fetched_bytes(c: &mut Core, id: u64, max_bytes: i32) -> usize {
    let request = fetch_request(2, 1, 1, 1, 0).with_max_bytes(max_bytes);
    c.handle(
        2_300,
        Input::Request {
            id: InboundId(id),
            api_version: 17,
            request: RaftRequest::Fetch(request),
        },
    )
    .unwrap();
    let out = responses(c);
    assert_eq!(out.len(), 1);
    fetch_partition_of(&out[0].1).records.unwrap().len()
}

#[test]
fn the_leader_answers_within_the_requests_max_bytes_but_with_one_batch_at_least() {
    let mut c = leader_with_two_batches();
    let both = fetched_bytes(&mut c, 1, i32::MAX);
    let one = fetched_bytes(&mut c, 2, 1);
    assert!(one > 0, "at least one batch, however small MaxBytes is");
    assert!(
        one < both,
        "MaxBytes 1 returns one batch of the two ({one} of {both})"
    );
    assert_eq!(fetched_bytes(&mut c, 3, one as i32), one);
    assert_eq!(fetched_bytes(&mut c, 4, both as i32), both);
    assert_eq!(
        fetched_bytes(&mut c, 5, -7),
        one,
        "a negative MaxBytes reads as 0"
    );
}

#[test]
fn response_bytes_are_the_request_max_within_kraftwerks_bound() {
    assert_eq!(response_max_bytes(-1), 0);
    assert_eq!(response_max_bytes(4096), 4096);
    assert_eq!(response_max_bytes(i32::MAX), MAX_FETCH_BYTES);
}

#[test]
fn a_follower_asks_for_its_configured_fetch_sizes() {
    let mut cfg = config(1);
    cfg.fetch_max_bytes = 12_345;
    cfg.fetch_snapshot_max_bytes = 54_321;
    let mut c = RaftCore::new(cfg, MemLog::new(), MemQuorumStateStore::new(), 42, 0).unwrap();
    c.handle(0, Input::Request {
        id: InboundId(1),
        api_version: 1,
        request: RaftRequest::BeginQuorumEpoch(
            kafka_protocol::messages::BeginQuorumEpochRequest::default().with_topics(vec![
                kafka_protocol::messages::begin_quorum_epoch_request::TopicData::default()
                    .with_topic_name(topic_name())
                    .with_partitions(vec![kafka_protocol::messages::begin_quorum_epoch_request::PartitionData::default()
                        .with_leader_id(2.into())
                        .with_leader_epoch(5)]),
            ]),
        ),
    })
    .unwrap();
    let (fetch_id, _, request) = sends(&mut c)
        .into_iter()
        .find(|(_, d, r)| *d == 2 && matches!(r, RaftRequest::Fetch(_)))
        .expect("fetch");
    let RaftRequest::Fetch(fetch) = request else {
        unreachable!()
    };
    assert_eq!(fetch.max_bytes, 12_345);
    // The leader answers with a snapshot id: the follower then fetches the snapshot.
    let mut response = fetch_response(5, Bytes::new(), 10);
    let p = &mut response.responses[0].partitions[0];
    p.snapshot_id = kafka_protocol::messages::fetch_response::SnapshotId::default()
        .with_end_offset(10)
        .with_epoch(5);
    c.handle(
        10,
        Input::Response {
            id: fetch_id,
            response: RaftResponse::Fetch(response),
        },
    )
    .unwrap();
    let snapshot_fetch = sends(&mut c)
        .into_iter()
        .find_map(|(_, d, r)| match r {
            RaftRequest::FetchSnapshot(f) if d == 2 => Some(f),
            _ => None,
        })
        .expect("a FetchSnapshot to the leader");
    assert_eq!(snapshot_fetch.max_bytes, 54_321);
}

#[test]
fn defaults_are_kafka_4_4s() {
    let cfg = config(1);
    assert_eq!(cfg.fetch_max_bytes, 1_048_576);
    assert_eq!(cfg.fetch_snapshot_max_bytes, 1_048_576);
}
