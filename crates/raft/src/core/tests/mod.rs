//! Exact-outcome tests of the core, one behaviour each (Kafka `KafkaRaftClientTest` style).

use std::collections::BTreeMap;

use bytes::Bytes;
use kafka_protocol::messages::describe_quorum_request::{
    PartitionData as DqPartition, TopicData as DqTopic,
};
use kafka_protocol::messages::end_quorum_epoch_request::{
    PartitionData as EndPartition, TopicData as EndTopic,
};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic, ReplicaState};
use kafka_protocol::messages::fetch_response::{
    FetchableTopicResponse, LeaderIdAndEpoch, PartitionData,
};
use kafka_protocol::messages::vote_request::{
    PartitionData as VotePartition, TopicData as VoteTopic,
};
use kafka_protocol::messages::vote_response::{
    PartitionData as VoteRespPartition, TopicData as VoteRespTopic,
};
use kafka_protocol::messages::{
    DescribeQuorumRequest, EndQuorumEpochRequest, FetchRequest, FetchResponse, VoteRequest,
    VoteResponse,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::batch::BatchBuilder;
use uuid::Uuid;

use super::*;
use crate::config::{Endpoint, METADATA_TOPIC_ID, METADATA_TOPIC_NAME};
use crate::io::{InboundId, OutboundId};
use crate::storage::{ElectionState, OffsetAndEpoch};
use crate::testing::{MemLog, MemQuorumStateStore};

type Core = RaftCore<MemLog, MemQuorumStateStore>;

fn config(local: i32) -> RaftConfig {
    let voters: BTreeMap<i32, Endpoint> = (1..=3)
        .map(|id| {
            (
                id,
                Endpoint {
                    host: format!("c{id}"),
                    port: 9090 + id as u16,
                },
            )
        })
        .collect();
    RaftConfig::new(
        local,
        "cluster-A",
        Uuid::from_u64_pair(7, 7),
        voters,
        "CONTROLLER",
    )
}

fn core_with(local: i32, store: MemQuorumStateStore, log: MemLog) -> Core {
    RaftCore::new(config(local), log, store, 42, 0).expect("start")
}

fn core(local: i32) -> Core {
    core_with(local, MemQuorumStateStore::new(), MemLog::new())
}

fn topic_name() -> kafka_protocol::messages::TopicName {
    StrBytes::from_static_str(METADATA_TOPIC_NAME).into()
}

fn vote_request(candidate: i32, epoch: i32, last_epoch: i32, last_offset: i64) -> RaftRequest {
    RaftRequest::Vote(
        VoteRequest::default()
            .with_cluster_id(Some(StrBytes::from_static_str("cluster-A")))
            .with_topics(vec![VoteTopic::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![VotePartition::default()
                    .with_replica_id(candidate.into())
                    .with_replica_epoch(epoch)
                    .with_last_offset_epoch(last_epoch)
                    .with_last_offset(last_offset)])]),
    )
}

fn fetch_request(
    replica: i32,
    epoch: i32,
    offset: i64,
    last_epoch: i32,
    max_wait_ms: i32,
) -> FetchRequest {
    FetchRequest::default()
        .with_cluster_id(Some(StrBytes::from_static_str("cluster-A")))
        .with_replica_state(ReplicaState::default().with_replica_id(replica.into()))
        .with_max_wait_ms(max_wait_ms)
        .with_topics(vec![FetchTopic::default()
            .with_topic_id(METADATA_TOPIC_ID)
            .with_partitions(vec![FetchPartition::default()
                .with_current_leader_epoch(epoch)
                .with_fetch_offset(offset)
                .with_last_fetched_epoch(last_epoch)])])
}

fn pre_vote_request(candidate: i32, epoch: i32, last_epoch: i32, last_offset: i64) -> RaftRequest {
    let RaftRequest::Vote(mut v) = vote_request(candidate, epoch, last_epoch, last_offset) else {
        unreachable!()
    };
    v.topics[0].partitions[0].pre_vote = true;
    RaftRequest::Vote(v)
}

/// Sends a DescribeQuorum v2 for the metadata partition at `now_ms` and returns the answer.
fn describe_quorum_v2(
    c: &mut Core,
    now_ms: u64,
) -> kafka_protocol::messages::DescribeQuorumResponse {
    let dq = DescribeQuorumRequest::default().with_topics(vec![DqTopic::default()
        .with_topic_name(topic_name())
        .with_partitions(vec![DqPartition::default()])]);
    c.handle(
        now_ms,
        Input::Request {
            id: InboundId(2),
            api_version: 2,
            request: RaftRequest::DescribeQuorum(dq),
        },
    )
    .unwrap();
    let RaftResponse::DescribeQuorum(r) = responses(c).remove(0).1 else {
        panic!("not a DescribeQuorum response")
    };
    r
}

fn responses(core: &mut Core) -> Vec<(InboundId, RaftResponse)> {
    core.take_outputs()
        .into_iter()
        .filter_map(|o| match o {
            Output::Respond { id, response } => Some((id, response)),
            _ => None,
        })
        .collect()
}

fn sends(core: &mut Core) -> Vec<(OutboundId, i32, RaftRequest)> {
    core.take_outputs()
        .into_iter()
        .filter_map(|o| match o {
            Output::Send {
                id,
                destination,
                request,
            } => Some((id, destination.node_id, request)),
            _ => None,
        })
        .collect()
}

fn fetch_partition_of(r: &RaftResponse) -> PartitionData {
    match r {
        RaftResponse::Fetch(f) => f.responses[0].partitions[0].clone(),
        other => panic!("expected a fetch response, got {other:?}"),
    }
}

fn vote_granted(epoch: i32) -> RaftResponse {
    RaftResponse::Vote(
        VoteResponse::default().with_topics(vec![VoteRespTopic::default()
            .with_topic_name(topic_name())
            .with_partitions(vec![VoteRespPartition::default()
                .with_leader_id((-1).into())
                .with_leader_epoch(epoch)
                .with_vote_granted(true)])]),
    )
}

/// Node 1 becomes leader of epoch 1 with node 2's pre-vote and vote.
fn leader() -> Core {
    let mut c = core(1);
    c.poll(2_000).unwrap();
    assert_eq!(c.role(), RoleKind::Prospective);
    assert_eq!(c.epoch(), 0, "a pre-vote round does not bump the epoch");
    let pre_votes = sends(&mut c);
    let (id2, _, request) = pre_votes
        .iter()
        .find(|(_, d, _)| *d == 2)
        .cloned()
        .expect("pre-vote to 2");
    let RaftRequest::Vote(v) = request else {
        panic!()
    };
    assert!(v.topics[0].partitions[0].pre_vote);
    assert_eq!(v.topics[0].partitions[0].replica_epoch, 0);
    c.handle(
        2_001,
        Input::Response {
            id: id2,
            response: vote_granted(0),
        },
    )
    .unwrap();
    assert_eq!(c.role(), RoleKind::Candidate);
    assert_eq!(c.epoch(), 1);
    let votes = sends(&mut c);
    let (id2, _, request) = votes
        .iter()
        .find(|(_, d, _)| *d == 2)
        .cloned()
        .expect("vote to 2");
    let RaftRequest::Vote(v) = request else {
        panic!()
    };
    assert!(!v.topics[0].partitions[0].pre_vote);
    c.handle(
        2_002,
        Input::Response {
            id: id2,
            response: vote_granted(1),
        },
    )
    .unwrap();
    assert_eq!(c.role(), RoleKind::Leader);
    c.take_outputs();
    c
}

#[test]
fn a_leader_that_restarts_comes_back_resigned_and_never_leads_that_epoch_again() {
    let store = MemQuorumStateStore::new();
    store
        .clone()
        .write(&ElectionState {
            epoch: 5,
            leader_id: Some(1),
            voted_id: Some(1),
            ..Default::default()
        })
        .unwrap();
    let mut c = core_with(1, store.clone(), MemLog::new());
    assert_eq!(c.role(), RoleKind::Resigned);
    assert_eq!(c.epoch(), 5);
    c.poll(10_000).unwrap();
    assert_eq!(
        c.role(),
        RoleKind::Prospective,
        "it asks for pre-votes, in epoch 5"
    );
    assert_eq!(c.epoch(), 5);
    assert_eq!(
        store.current().unwrap().leader_id,
        Some(1),
        "a pre-vote persists nothing"
    );
}

#[test]
fn a_vote_is_durable_before_it_is_granted() {
    let store = MemQuorumStateStore::new();
    let mut c = core_with(2, store.clone(), MemLog::new());
    c.handle(
        10,
        Input::Request {
            id: InboundId(1),
            api_version: 1,
            request: vote_request(1, 1, 0, 0),
        },
    )
    .unwrap();
    let out = responses(&mut c);
    let RaftResponse::Vote(v) = &out[0].1 else {
        panic!()
    };
    assert!(v.topics[0].partitions[0].vote_granted);
    let stored = store.current().unwrap();
    assert_eq!((stored.epoch, stored.voted_id), (1, Some(1)));
    // Same epoch, another candidate: refused.
    c.handle(
        11,
        Input::Request {
            id: InboundId(2),
            api_version: 1,
            request: vote_request(3, 1, 0, 0),
        },
    )
    .unwrap();
    let RaftResponse::Vote(v) = &responses(&mut c)[0].1 else {
        panic!()
    };
    assert!(!v.topics[0].partitions[0].vote_granted);
}

#[test]
fn a_candidate_with_a_shorter_log_gets_no_vote() {
    let mut log = MemLog::new();
    log.append_as_leader(&BatchBuilder::new(0, 3, 0).tap_append(b"x").build(), 3)
        .unwrap();
    let mut c = core_with(2, MemQuorumStateStore::new(), log);
    c.handle(
        10,
        Input::Request {
            id: InboundId(1),
            api_version: 1,
            request: vote_request(1, 4, 2, 10),
        },
    )
    .unwrap();
    let RaftResponse::Vote(v) = &responses(&mut c)[0].1 else {
        panic!()
    };
    assert!(
        !v.topics[0].partitions[0].vote_granted,
        "epoch 2 < our last epoch 3"
    );
    assert_eq!(
        c.epoch(),
        4,
        "the higher epoch is adopted even when the vote is refused"
    );
}

trait TapAppend {
    fn tap_append(self, v: &[u8]) -> Self;
}
impl TapAppend for BatchBuilder {
    fn tap_append(mut self, v: &[u8]) -> Self {
        self.append(None, v);
        self
    }
}

#[test]
fn a_new_leader_writes_leader_change_and_commits_it_with_one_follower() {
    let mut c = leader();
    assert_eq!(c.log().end_offset(), OffsetAndEpoch::new(1, 1));
    assert_eq!(c.high_watermark(), None);
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(9),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(2, 1, 1, 1, 500)),
        },
    )
    .unwrap();
    assert!(
        responses(&mut c).is_empty(),
        "a v17 fetch with no new data waits even if it moved the HW (Kafka < 4.1)"
    );
    assert_eq!(c.high_watermark(), Some(1));
    c.poll(2_600).unwrap();
    let p = fetch_partition_of(&responses(&mut c)[0].1);
    assert_eq!(p.high_watermark, 1);
    assert_eq!(c.high_watermark(), Some(1));
}

#[test]
fn an_empty_fetch_is_parked_until_new_data_and_expires_at_max_wait() {
    let mut c = leader();
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(1),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(2, 1, 1, 1, 500)),
        },
    )
    .unwrap();
    assert!(responses(&mut c).is_empty(), "nothing to return: parked");
    let first = c.append(2_110, vec![Bytes::from_static(b"r1")]).unwrap();
    assert_eq!(first, 1);
    c.poll(2_110 + 25).unwrap();
    let out = responses(&mut c);
    assert_eq!(out.len(), 1, "new data completes the parked fetch");
    let p = fetch_partition_of(&out[0].1);
    assert!(!p.records.unwrap().is_empty());
    c.handle(
        2_200,
        Input::Request {
            id: InboundId(2),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(3, 1, 2, 1, 500)),
        },
    )
    .unwrap();
    assert!(responses(&mut c).is_empty());
    c.poll(2_699).unwrap();
    assert!(responses(&mut c).is_empty());
    c.poll(2_700).unwrap();
    assert_eq!(responses(&mut c).len(), 1, "answered at MaxWaitMs");
}

#[test]
fn case_c04_diverging_and_stale_epoch_fetches_are_answered_at_once() {
    let mut c = leader();
    // Claims an epoch-0 batch ending at 5 that the leader never had.
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(1),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(2, 1, 5, 0, 500)),
        },
    )
    .unwrap();
    let p = fetch_partition_of(&responses(&mut c)[0].1);
    assert_eq!(
        (p.diverging_epoch.epoch, p.diverging_epoch.end_offset),
        (0, 0)
    );
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(2),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(2, 0, 0, 0, 500)),
        },
    )
    .unwrap();
    let p = fetch_partition_of(&responses(&mut c)[0].1);
    assert_eq!(p.error_code, crate::errors::FENCED_LEADER_EPOCH);
    assert_eq!(
        (p.current_leader.leader_id.0, p.current_leader.leader_epoch),
        (1, 1)
    );
}

#[test]
fn kip_1166_a_fetcher_behind_on_the_high_watermark_is_answered_at_once() {
    let mut c = leader();
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(1),
            api_version: 18,
            request: RaftRequest::Fetch(fetch_request(2, 1, 1, 1, 0)),
        },
    )
    .unwrap();
    assert_eq!(
        fetch_partition_of(&responses(&mut c)[0].1).high_watermark,
        1
    );
    let mut req = fetch_request(100, 1, 1, 1, 500);
    req.topics[0].partitions[0].high_watermark = 0;
    c.handle(
        2_101,
        Input::Request {
            id: InboundId(2),
            api_version: 18,
            request: RaftRequest::Fetch(req.clone()),
        },
    )
    .unwrap();
    assert_eq!(
        responses(&mut c).len(),
        1,
        "v18 fetcher at HW 0 < 1 answered immediately"
    );
    c.handle(
        2_102,
        Input::Request {
            id: InboundId(3),
            api_version: 17,
            request: RaftRequest::Fetch(req),
        },
    )
    .unwrap();
    assert!(responses(&mut c).is_empty(), "v17 has no HW field: parked");
}

#[test]
fn node_endpoints_are_sent_from_fetch_v17_only() {
    let mut c = leader();
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(1),
            api_version: 16,
            request: RaftRequest::Fetch(fetch_request(2, 1, 0, 0, 0)),
        },
    )
    .unwrap();
    let RaftResponse::Fetch(f) = responses(&mut c).remove(0).1 else {
        panic!()
    };
    assert!(f.node_endpoints.is_empty());
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(2),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(2, 1, 0, 0, 0)),
        },
    )
    .unwrap();
    let RaftResponse::Fetch(f) = responses(&mut c).remove(0).1 else {
        panic!()
    };
    assert_eq!(f.node_endpoints.len(), 1);
    assert_eq!(
        (f.node_endpoints[0].node_id.0, f.node_endpoints[0].port),
        (1, 9091)
    );
}

#[test]
fn observers_show_in_describe_quorum_but_do_not_commit() {
    let mut c = leader();
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(1),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(100, 1, 1, 1, 0)),
        },
    )
    .unwrap();
    c.take_outputs();
    assert_eq!(
        c.high_watermark(),
        None,
        "a broker's fetch never moves the high watermark"
    );
    let r = describe_quorum_v2(&mut c, 2_200);
    let p = &r.topics[0].partitions[0];
    assert_eq!(
        (p.leader_id.0, p.leader_epoch, p.high_watermark),
        (1, 1, -1)
    );
    assert_eq!(p.current_voters.len(), 3);
    assert_eq!(p.observers.len(), 1);
    assert_eq!(
        (p.observers[0].replica_id.0, p.observers[0].log_end_offset),
        (100, 1)
    );
    assert_eq!(r.nodes.len(), 3);
}

fn follower_of_2_in_epoch_5() -> (Core, OutboundId) {
    let mut c = core(1);
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
    assert_eq!(c.role(), RoleKind::Follower);
    let fetch = sends(&mut c)
        .into_iter()
        .find(|(_, d, r)| *d == 2 && matches!(r, RaftRequest::Fetch(_)))
        .expect("fetch");
    (c, fetch.0)
}

fn fetch_response(epoch: i32, records: Bytes, hw: i64) -> FetchResponse {
    FetchResponse::default().with_responses(vec![FetchableTopicResponse::default()
        .with_topic_id(METADATA_TOPIC_ID)
        .with_partitions(vec![PartitionData::default()
            .with_current_leader(
                LeaderIdAndEpoch::default()
                    .with_leader_id(2.into())
                    .with_leader_epoch(epoch),
            )
            .with_high_watermark(hw)
            .with_records(Some(records))])])
}

mod auto_join;
mod disk_faults;
mod dynamic;
mod fetch_sizes;
mod follower;
mod hostile;
mod kraft_upgrade;
mod pre_vote;
mod unreachable;
mod update_voter;
mod voter_change;
