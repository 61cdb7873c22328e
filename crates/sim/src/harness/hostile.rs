//! A hostile peer: a process on the controller listener (nothing authenticates a PLAINTEXT
//! listener) that forges the Raft RPCs of issue 9 item 2 and sends them to running nodes, through
//! the wire codec like any peer. What the core answers each is pinned down one by one in
//! `crates/raft/src/core/tests/hostile.rs` (with what Java 4.1's `KafkaRaftClient` does); here
//! the point is the quorum: it keeps electing and committing, no node fails, no epoch comes near
//! the overflow bound, and every Raft invariant of [`crate::invariants`] holds.
//!
//! A forgery is built from the target's state at the moment it handles it (the message goes
//! straight to the node, no latency), so "contradicts the known leader" is exact. Forged:
//! - BeginQuorumEpoch / EndQuorumEpoch naming the receiver as leader, naming another voter for
//!   an epoch whose leader the receiver knows, or at an epoch beyond `MAX_REQUEST_EPOCH`;
//! - Vote at an epoch beyond `MAX_REQUEST_EPOCH` (up to `i32::MAX`), in the receiver's own name,
//!   or from a candidate outside the voter set;
//! - each with the right, no, or another cluster id (no cluster id is accepted, as by Java, so
//!   the rest of the request must be what is refused);
//! - Fetch as an observer ([`HOSTILE_ID`]) at any offset, and Fetch claiming a voter's id, but
//!   only at offsets that cannot count: beyond the receiver's log end, or 0. A Fetch claiming a
//!   voter at an offset inside the log, above that voter's real position, moves the leader's
//!   high watermark past what a majority holds, in Java as here — the defence is authentication
//!   (a separate issue), so that forgery is not sent: it would break "committed entries are never
//!   lost" by design, not by a bug.
//!
//! Every answer is decoded as the sender would; a Vote, BeginQuorumEpoch or EndQuorumEpoch
//! forgery answered without an error (or a granted vote) is a violation.

use std::collections::HashMap;

use bytes::Bytes;
use kafka_protocol::messages::begin_quorum_epoch_request::{
    PartitionData as BeginPartition, TopicData as BeginTopic,
};
use kafka_protocol::messages::end_quorum_epoch_request::{
    PartitionData as EndPartition, TopicData as EndTopic,
};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic, ReplicaState};
use kafka_protocol::messages::vote_request::{
    PartitionData as VotePartition, TopicData as VoteTopic,
};
use kafka_protocol::messages::{
    BeginQuorumEpochRequest, EndQuorumEpochRequest, FetchRequest, ResponseKind, VoteRequest,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_protocol::constants::{
    MAX_FETCH_BYTES, METADATA_PARTITION, METADATA_TOPIC_ID, METADATA_TOPIC_NAME,
};
use kraftwerk_raft::config::MAX_REQUEST_EPOCH;
use kraftwerk_raft::{OutboundId, RaftRequest, ReplicatedLog, RoleKind};
use rand::Rng;

use super::{Event, Message, Route, Sim, SimulatedNode, CLUSTER_ID};
use crate::wire::{self, Outbound};

/// The hostile peer's own id: not a voter (an observer's id, as a broker's would be).
pub const HOSTILE_ID: i32 = 999;

/// How the trace lines of forgeries start.
pub const FORGERY_PREFIX: &str = "hostile peer →";

/// What a forged request must get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// An error (or a refused vote): a voter-only request the receiver must not act on.
    Refused,
    /// Anything the sender can read (a Fetch: served, diverging or an error).
    Anything,
}

/// One forged request on its way.
#[derive(Debug)]
struct Forged {
    target: i32,
    what: String,
    expect: Expect,
}

/// The hostile peer's state: its forged requests in flight and what it got.
#[derive(Debug, Default)]
pub struct Hostile {
    in_flight: HashMap<u64, Forged>,
    next_id: u64,
    /// Forged requests sent.
    pub sent: u64,
    /// Answers received.
    pub answered: u64,
}

impl<N: SimulatedNode> Sim<N> {
    /// Schedules the hostile peer's next forgery, if the run has one.
    pub(super) fn schedule_forgery(&mut self) {
        let interval = self.options.hostile_interval_ms;
        if interval > 0 {
            let at = self.now_ms() + self.rng.gen_range(1..2 * interval);
            self.scheduler.schedule(at, Event::Forge);
        }
    }

    /// Forges one request to a random running node that is not stalled, and delivers it now.
    /// The hostile peer keeps going after the fault phase: liveness must hold under it.
    pub(super) fn forge(&mut self) {
        self.schedule_forgery();
        let targets: Vec<i32> = self
            .running()
            .map(|(id, _)| id)
            .filter(|id| !self.is_stalled(*id))
            .collect();
        if targets.is_empty() {
            return;
        }
        let target = targets[self.rng.gen_range(0..targets.len())];
        let (request, what, expect) = self.forgery_for(target);
        let api_key = request.api_key();
        let table = &self.tables[&target];
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);
        let correlation_id = self.next_correlation_id;
        let encoded = wire::encode_request(
            api_key,
            |_| request.into_kind(),
            table,
            table,
            correlation_id,
            "hostile-peer",
        );
        let sent = match encoded {
            Ok(Outbound::Sent(sent)) => sent,
            // A pre-vote to a release without it: nothing to send.
            Ok(Outbound::Unsupported(_)) => return,
            Err(e) => {
                return self
                    .invariants
                    .violation(format!("forging {what}: {}", e.0))
            }
        };
        self.hostile.next_id += 1;
        self.hostile.sent += 1;
        let id = self.hostile.next_id;
        self.log(format!("{FORGERY_PREFIX} node {target}: {what}"));
        self.hostile.in_flight.insert(
            id,
            Forged {
                target,
                what,
                expect,
            },
        );
        let reply_to = Route {
            to: HOSTILE_ID,
            to_incarnation: 0,
            out_id: OutboundId(id),
            api_key,
            version: sent.version,
            correlation_id,
        };
        let incarnation = self.incarnation(target).expect("running");
        let message = Message::Request {
            frame: sent.frame,
            reply_to,
        };
        self.deliver(target, incarnation, message);
    }

    /// The hostile peer reads an answer to one of its forgeries.
    pub(super) fn hostile_answer(&mut self, from: i32, route: Route, frame: Bytes) {
        let Some(forged) = self.hostile.in_flight.remove(&route.out_id.0) else {
            return;
        };
        self.hostile.answered += 1;
        let decoded =
            wire::decode_response(frame, route.api_key, route.version, route.correlation_id);
        let response = match decoded {
            Ok(r) => r,
            Err(e) => {
                let text = format!("hostile peer cannot read node {from}'s answer: {}", e.0);
                return self.invariants.violation(text);
            }
        };
        if forged.expect == Expect::Refused && !refused(&response) {
            let text = format!(
                "node {} acted on a forged {}: answered {response:?}",
                forged.target, forged.what
            );
            self.invariants.violation(text);
        }
    }

    /// A forged request for `target`, built from its current state, with a description.
    fn forgery_for(&mut self, target: i32) -> (RaftRequest, String, Expect) {
        let core = self.node(target).expect("running").raft();
        let epoch = core.epoch();
        let known_leader = core.leader_and_epoch().leader_id;
        let end = core.log().end_offset();
        let is_leader = core.role() == RoleKind::Leader;
        let voters: Vec<i32> = self.nodes.keys().copied().collect();
        let rng = &mut self.rng;
        let other_voter = {
            let others: Vec<i32> = voters.iter().copied().filter(|&v| v != target).collect();
            others[rng.gen_range(0..others.len())]
        };
        let huge_epoch = if rng.gen_bool(0.5) {
            i32::MAX
        } else {
            rng.gen_range(MAX_REQUEST_EPOCH + 1..i32::MAX)
        };
        let (cluster_id, cluster_note) = match rng.gen_range(0..3) {
            0 => (Some(StrBytes::from_static_str(CLUSTER_ID)), ""),
            1 => (None, ", no cluster id"),
            _ => (
                Some(StrBytes::from_static_str("another-cluster")),
                ", another cluster",
            ),
        };
        let (request, what, expect) = match rng.gen_range(0..5) {
            kind @ (0 | 1) => {
                // Who the forgery names as leader, and for which epoch.
                let (leader, at, why) = match (rng.gen_range(0..3), known_leader) {
                    (0, Some(known)) => {
                        let others: Vec<i32> =
                            voters.iter().copied().filter(|&v| v != known).collect();
                        let contrary = others[rng.gen_range(0..others.len())];
                        (contrary, epoch, "contradicting the known leader")
                    }
                    (1, _) => (other_voter, huge_epoch, "at an epoch past the bound"),
                    _ => (target, epoch + rng.gen_range(0..=1), "naming the receiver"),
                };
                let request = if kind == 0 {
                    begin_quorum_epoch(leader, at)
                } else {
                    end_quorum_epoch(leader, at)
                };
                let api = if kind == 0 {
                    "BeginQuorumEpoch"
                } else {
                    "EndQuorumEpoch"
                };
                let what = format!("{api}(leader {leader}, epoch {at}) {why}");
                (request, what, Expect::Refused)
            }
            2 => {
                let pre_vote = rng.gen_bool(0.3);
                let (candidate, at, why) = match rng.gen_range(0..3) {
                    0 => (other_voter, huge_epoch, "at an epoch past the bound"),
                    1 => (target, epoch + 1, "in the receiver's own name"),
                    _ => (HOSTILE_ID, epoch + 1, "from a non-voter"),
                };
                // The best possible log, so only the checks above can refuse it.
                let request = vote(candidate, at, i32::MAX - 1, i64::MAX / 2, pre_vote);
                let what =
                    format!("Vote(candidate {candidate}, epoch {at}, pre-vote {pre_vote}) {why}");
                (request, what, Expect::Refused)
            }
            _ => {
                let (replica, offset, why) = if rng.gen_bool(0.5) {
                    let offset = rng.gen_range(0..=end.offset + 10);
                    (HOSTILE_ID, offset, "as an observer")
                } else {
                    let voter = voters[rng.gen_range(0..voters.len())];
                    let offset = if rng.gen_bool(0.7) {
                        end.offset + rng.gen_range(1..1_000)
                    } else {
                        0
                    };
                    (voter, offset, "claiming a voter's id")
                };
                let leader_epoch = if rng.gen_bool(0.8) { epoch } else { huge_epoch };
                let last_epoch = if offset > end.offset {
                    end.epoch
                } else {
                    rng.gen_range(0..=epoch)
                };
                let request = fetch(replica, leader_epoch, offset, last_epoch);
                let role = if is_leader { "leader" } else { "non-leader" };
                let what = format!(
                    "Fetch(replica {replica}, epoch {leader_epoch}, offset {offset}) {why} to a {role}"
                );
                (request, what, Expect::Anything)
            }
        };
        let mut request = request;
        set_cluster_id(&mut request, cluster_id);
        (request, format!("{what}{cluster_note}"), expect)
    }
}

/// True if a Vote, BeginQuorumEpoch or EndQuorumEpoch answer carries an error (top level or
/// partition) or, for a Vote, refuses the vote.
fn refused(response: &ResponseKind) -> bool {
    match response {
        ResponseKind::Vote(r) => {
            r.error_code != 0
                || r.topics
                    .iter()
                    .flat_map(|t| &t.partitions)
                    .all(|p| p.error_code != 0 || !p.vote_granted)
        }
        ResponseKind::BeginQuorumEpoch(r) => {
            r.error_code != 0
                || r.topics
                    .iter()
                    .flat_map(|t| &t.partitions)
                    .all(|p| p.error_code != 0)
        }
        ResponseKind::EndQuorumEpoch(r) => {
            r.error_code != 0
                || r.topics
                    .iter()
                    .flat_map(|t| &t.partitions)
                    .all(|p| p.error_code != 0)
        }
        _ => false,
    }
}

fn set_cluster_id(request: &mut RaftRequest, cluster_id: Option<StrBytes>) {
    match request {
        RaftRequest::Vote(r) => r.cluster_id = cluster_id,
        RaftRequest::BeginQuorumEpoch(r) => r.cluster_id = cluster_id,
        RaftRequest::EndQuorumEpoch(r) => r.cluster_id = cluster_id,
        RaftRequest::Fetch(r) => r.cluster_id = cluster_id,
        _ => {}
    }
}

fn topic_name() -> kafka_protocol::messages::TopicName {
    StrBytes::from_static_str(METADATA_TOPIC_NAME).into()
}

fn begin_quorum_epoch(leader: i32, epoch: i32) -> RaftRequest {
    let partition = BeginPartition::default()
        .with_partition_index(METADATA_PARTITION)
        .with_leader_id(leader.into())
        .with_leader_epoch(epoch);
    RaftRequest::BeginQuorumEpoch(BeginQuorumEpochRequest::default().with_topics(
        vec![BeginTopic::default()
            .with_topic_name(topic_name())
            .with_partitions(vec![partition])],
    ))
}

fn end_quorum_epoch(leader: i32, epoch: i32) -> RaftRequest {
    let partition = EndPartition::default()
        .with_partition_index(METADATA_PARTITION)
        .with_leader_id(leader.into())
        .with_leader_epoch(epoch);
    RaftRequest::EndQuorumEpoch(EndQuorumEpochRequest::default().with_topics(
        vec![EndTopic::default()
            .with_topic_name(topic_name())
            .with_partitions(vec![partition])],
    ))
}

fn vote(
    candidate: i32,
    epoch: i32,
    last_epoch: i32,
    last_offset: i64,
    pre_vote: bool,
) -> RaftRequest {
    let partition = VotePartition::default()
        .with_partition_index(METADATA_PARTITION)
        .with_replica_epoch(epoch)
        .with_replica_id(candidate.into())
        .with_last_offset_epoch(last_epoch)
        .with_last_offset(last_offset)
        .with_pre_vote(pre_vote);
    RaftRequest::Vote(VoteRequest::default().with_topics(vec![VoteTopic::default()
        .with_topic_name(topic_name())
        .with_partitions(vec![partition])]))
}

fn fetch(replica: i32, leader_epoch: i32, offset: i64, last_epoch: i32) -> RaftRequest {
    let partition = FetchPartition::default()
        .with_partition(METADATA_PARTITION)
        .with_current_leader_epoch(leader_epoch)
        .with_fetch_offset(offset)
        .with_last_fetched_epoch(last_epoch)
        .with_log_start_offset(-1)
        .with_partition_max_bytes(0);
    RaftRequest::Fetch(
        FetchRequest::default()
            .with_replica_id(replica.into())
            .with_replica_state(ReplicaState::default().with_replica_id(replica.into()))
            .with_max_wait_ms(500)
            .with_max_bytes(MAX_FETCH_BYTES as i32)
            .with_topics(vec![FetchTopic::default()
                .with_topic(topic_name())
                .with_topic_id(METADATA_TOPIC_ID)
                .with_partitions(vec![partition])]),
    )
}
