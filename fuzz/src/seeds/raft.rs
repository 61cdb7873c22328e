//! Raft seeds: scripts that take the core through an election to leadership, and through
//! following a leader that sends it records, built by running the harness op by op and
//! answering what the core actually sent.

use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_protocol::codec::encode_response;
use kraftwerk_protocol::constants::{METADATA_TOPIC_ID, METADATA_TOPIC_NAME};
use kraftwerk_raft::{RaftRequest, ReplicatedLog};
use kraftwerk_records::batch::BatchBuilder;
use kraftwerk_records::control::{control_batch, ControlRecord};
use kraftwerk_records::metadata::{ApiMessageAndVersion, FeatureLevelRecord};

use super::frame;
use crate::raft::{op, Harness, CLUSTER_ID};

/// A script and the harness it was run on so far.
struct Script {
    harness: Harness,
    bytes: Vec<u8>,
}

impl Script {
    fn new() -> Script {
        Script {
            harness: Harness::new(),
            bytes: Vec::new(),
        }
    }

    fn push(&mut self, op: &[u8]) {
        let mut input = &op[1..];
        let _ = self.harness.step(op[0], &mut input);
        self.bytes.extend_from_slice(op);
    }

    fn tick(&mut self, ms: u16) {
        let [hi, lo] = ms.to_be_bytes();
        self.push(&[op::TICK, hi, lo]);
    }

    fn request(&mut self, framed: &[u8]) {
        let mut op_bytes = vec![op::REQUEST];
        op_bytes.extend_from_slice(framed);
        self.push(&op_bytes);
    }

    /// Answers every outstanding send, oldest first, as a cooperative peer would.
    fn answer_all(&mut self, leader: i32) {
        let sent: Vec<RaftRequest> = self.harness.outstanding().cloned().collect();
        for request in sent {
            let payload = answer(&request, leader);
            let mut op_bytes = vec![op::RESPONSE | crate::raft::FIX_CRCS, 0];
            op_bytes.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            op_bytes.extend_from_slice(&payload);
            self.push(&op_bytes);
        }
    }
}

fn metadata_topic() -> TopicName {
    TopicName(StrBytes::from_static_str(METADATA_TOPIC_NAME))
}

/// The response (header + body, newest version) a peer gives `request`; for a Fetch, the
/// leader `leader` sends a LeaderChange and a metadata record when the follower is at 0.
fn answer(request: &RaftRequest, leader: i32) -> Vec<u8> {
    use kafka_protocol::messages::{begin_quorum_epoch_response as bqe, vote_response as vote};
    let (api, version, body) = match request {
        RaftRequest::Vote(r) => {
            let epoch = r.topics[0].partitions[0].replica_epoch;
            let mut p = vote::PartitionData::default();
            p.leader_id = (-1).into();
            p.leader_epoch = epoch;
            p.vote_granted = true;
            let mut t = vote::TopicData::default();
            t.topic_name = metadata_topic();
            t.partitions = vec![p];
            let mut body = VoteResponse::default();
            body.topics = vec![t];
            (ApiKey::Vote, 2, ResponseKind::Vote(body))
        }
        RaftRequest::BeginQuorumEpoch(r) => {
            let mut p = bqe::PartitionData::default();
            p.leader_id = r.topics[0].partitions[0].leader_id;
            p.leader_epoch = r.topics[0].partitions[0].leader_epoch;
            let mut t = bqe::TopicData::default();
            t.topic_name = metadata_topic();
            t.partitions = vec![p];
            let mut body = BeginQuorumEpochResponse::default();
            body.topics = vec![t];
            (
                ApiKey::BeginQuorumEpoch,
                1,
                ResponseKind::BeginQuorumEpoch(body),
            )
        }
        RaftRequest::Fetch(r) => {
            let fetch_offset = r.topics[0].partitions[0].fetch_offset;
            let epoch = r.topics[0].partitions[0].current_leader_epoch;
            (
                ApiKey::Fetch,
                18,
                ResponseKind::Fetch(fetch_response(leader, epoch, fetch_offset)),
            )
        }
        other => unreachable!("the seed scripts do not make the core send {other:?}"),
    };
    encode_response(api, version, 7, &body)
        .expect("a seed response encodes")
        .to_vec()
}

fn fetch_response(leader: i32, epoch: i32, fetch_offset: i64) -> FetchResponse {
    use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
    let mut p = PartitionData::default();
    p.current_leader.leader_id = leader.into();
    p.current_leader.leader_epoch = epoch;
    p.log_start_offset = 0;
    if fetch_offset == 0 {
        let mut records = control_batch(
            0,
            epoch,
            1_000,
            &[ControlRecord::leader_change(leader, &[1, 2, 3], &[2, 3])],
        )
        .to_vec();
        let mut data = BatchBuilder::new(1, epoch, 1_000);
        let feature = ApiMessageAndVersion::new(
            FeatureLevelRecord {
                name: "metadata.version".into(),
                feature_level: 27,
                ..Default::default()
            },
            0,
        );
        data.append(
            None,
            &feature.encode().expect("a FeatureLevelRecord encodes"),
        );
        records.extend_from_slice(&data.build());
        p.records = Some(records.into());
        p.high_watermark = 1;
    } else {
        p.records = Some(bytes::Bytes::new());
        p.high_watermark = fetch_offset;
    }
    let mut t = FetchableTopicResponse::default();
    t.topic_id = METADATA_TOPIC_ID;
    t.partitions = vec![p];
    let mut body = FetchResponse::default();
    body.responses = vec![t];
    body
}

/// A Fetch request from `replica` at `offset`/`epoch` (v18, as Kafka 4.1 sends it).
fn fetch_request(replica: i32, offset: i64, last_epoch: i32, leader_epoch: i32) -> bytes::Bytes {
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    let mut p = FetchPartition::default();
    p.fetch_offset = offset;
    p.last_fetched_epoch = last_epoch;
    p.current_leader_epoch = leader_epoch;
    p.partition_max_bytes = 8 << 20;
    let mut t = FetchTopic::default();
    t.topic_id = METADATA_TOPIC_ID;
    t.partitions = vec![p];
    let mut body = FetchRequest::default();
    body.cluster_id = Some(StrBytes::from_static_str(CLUSTER_ID));
    body.replica_state.replica_id = replica.into();
    body.replica_state.replica_epoch = -1;
    body.max_wait_ms = 500;
    body.max_bytes = 8 << 20;
    body.topics = vec![t];
    frame(ApiKey::Fetch, 18, 11, RequestKind::Fetch(body))
}

/// Node 1 wins an election (pre-vote, vote, BeginQuorumEpoch), then serves Fetch from voter 2
/// and a DescribeQuorum.
fn leader_script() -> Vec<u8> {
    let mut s = Script::new();
    s.tick(3_000);
    s.answer_all(1); // pre-votes
    s.tick(10);
    s.answer_all(1); // votes
    s.tick(10);
    s.answer_all(1); // BeginQuorumEpoch
    let epoch = s.harness.core().epoch();
    s.request(&fetch_request(2, 0, 0, epoch));
    s.tick(100);
    let end = s.harness.core().log().end_offset().offset;
    s.request(&fetch_request(2, end, epoch, epoch));
    s.tick(600);
    let mut describe = DescribeQuorumRequest::default();
    let mut t = kafka_protocol::messages::describe_quorum_request::TopicData::default();
    t.topic_name = metadata_topic();
    t.partitions = vec![Default::default()];
    describe.topics = vec![t];
    s.request(&frame(
        ApiKey::DescribeQuorum,
        2,
        12,
        RequestKind::DescribeQuorum(describe),
    ));
    s.bytes
}

/// Node 1 follows leader 2 of epoch 5: BeginQuorumEpoch, then Fetch answers with records.
fn follower_script() -> Vec<u8> {
    use kafka_protocol::messages::begin_quorum_epoch_request::{PartitionData, TopicData};
    let mut s = Script::new();
    let mut p = PartitionData::default();
    p.leader_id = 2.into();
    p.leader_epoch = 5;
    let mut t = TopicData::default();
    t.topic_name = metadata_topic();
    t.partitions = vec![p];
    let mut begin = BeginQuorumEpochRequest::default();
    begin.cluster_id = Some(StrBytes::from_static_str(CLUSTER_ID));
    begin.voter_id = 1.into();
    begin.topics = vec![t];
    s.request(&frame(
        ApiKey::BeginQuorumEpoch,
        1,
        3,
        RequestKind::BeginQuorumEpoch(begin),
    ));
    s.tick(10);
    s.answer_all(2); // Fetch from 0: records
    s.tick(10);
    s.answer_all(2); // Fetch at the end
    s.tick(2_500);
    s.bytes
}

/// `(name, input)` pairs of the Raft corpus built here (Java frames are added by the caller).
pub fn raft_seeds() -> Vec<(String, Vec<u8>)> {
    vec![
        ("script-leader".into(), leader_script()),
        ("script-follower".into(), follower_script()),
    ]
}
