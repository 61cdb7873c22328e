//! Membership changes of a dynamic quorum (KIP-853) while the faults go on: what an operator
//! does with `kafka-metadata-quorum add-controller` / `remove-controller`, and the disk
//! replacement of Kafka's operations guide (a voter's disk is wiped and formatted again with
//! `--no-initial-controllers`, so it comes back with a new directory id; it is removed by its
//! old key and added by its new one; scenario `disk-replace` of issue 10).
//!
//! Asked straight of the leader's core ([`RaftCore::add_voter`], [`RaftCore::remove_voter`]),
//! as the driver does once it decoded AddRaftVoter / RemoveRaftVoter. Checked here, after
//! every event (the log-level invariants are in [`crate::invariants`]):
//! - every request gets exactly one answer (NONE, REQUEST_TIMED_OUT, NOT_LEADER_OR_FOLLOWER,
//!   …) within [`ANSWER_DEADLINE_MS`], unless the node that got it crashed (the client's
//!   connection is gone then);
//! - a leader whose own removal committed resigns (case C11) within [`RESIGN_DEADLINE_MS`];
//! - after the faults, a disk replacement in progress completes (liveness), unless the lost
//!   disk left a state no replica can be elected from ([`unelectable`], a KIP-853 limit).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use kraftwerk_raft::errors;
use kraftwerk_raft::{ReplicaKey, ReplicatedLog, VoterNode, VoterSet};
use rand::Rng;

use crate::harness::{endpoint, Sim, SimRaft};
use crate::invariants::Violation;
use crate::options::MIN_VOTERS;

/// A request must be answered this long after it was asked, in simulated ms: the leader's
/// `controller.quorum.request.timeout.ms` (2 s, on a clock up to 10 % slow) plus a stall of
/// its thread (up to 3 s) and slack.
pub const ANSWER_DEADLINE_MS: u64 = 8_000;

/// A leader whose removal committed must have resigned this long after, in simulated ms (the
/// next poll does it; a stalled thread delays it by up to 3 s).
pub const RESIGN_DEADLINE_MS: u64 = 4_000;

/// A request that was asked and not answered yet.
#[derive(Debug)]
struct Asked {
    node: i32,
    incarnation: u64,
    at_ms: u64,
    what: String,
}

/// A disk replacement in progress.
#[derive(Clone, Copy, Debug)]
struct Replacement {
    id: i32,
    old: ReplicaKey,
}

/// Counts for the report.
#[derive(Clone, Debug, Default)]
pub struct MembershipStats {
    /// AddRaftVoter requests asked.
    pub adds_asked: u64,
    /// RemoveRaftVoter requests asked (of which the leader's own removal: `leader_removals`).
    pub removes_asked: u64,
    /// Removals of the leader itself asked.
    pub leader_removals: u64,
    /// Answers NONE.
    pub answered_ok: u64,
    /// Other answers.
    pub refused: u64,
    /// Requests whose node crashed before answering.
    pub lost_to_crashes: u64,
    /// Disks replaced.
    pub disks_replaced: u64,
    /// Disk replacements completed (old key removed, new key added and committed).
    pub replacements_completed: u64,
    /// Leaders that resigned after their own removal committed.
    pub removed_leaders_resigned: u64,
    /// Runs whose disk replacement could not complete because no replica could be elected
    /// ([`unelectable`]); 0 or 1.
    pub unelectable_after_disk_loss: u64,
}

/// The membership part of the Raft workload.
#[derive(Debug, Default)]
pub struct Membership {
    next_request_id: u64,
    outstanding: BTreeMap<u64, Asked>,
    replacing: Option<Replacement>,
    /// Leaders not in their committed voter set, by node: (epoch, first seen at ms).
    removed_leaders: BTreeMap<i32, (i32, u64)>,
    /// Counts for the report.
    pub stats: MembershipStats,
}

impl Membership {
    /// The next time the workload changes the voter set, from `now_ms`.
    pub fn next_at(sim: &mut Sim<SimRaft>, now_ms: u64) -> u64 {
        now_ms + sim.rng.gen_range(300..=2_500)
    }

    /// True while the workload still has something to do after the faults stopped.
    pub fn busy(&self) -> bool {
        self.replacing.is_some()
    }

    /// One membership step: finish the disk replacement in progress, else (during the faults)
    /// add a spare, remove a voter (the leader too) or replace a voter's disk.
    pub fn step(&mut self, sim: &mut Sim<SimRaft>) {
        let leader = sim
            .running()
            .find(|&(id, c)| c.is_leader() && !sim.is_stalled(id))
            .map(|(id, _)| id);
        let Some(leader) = leader else { return };
        let set = sim.node(leader).expect("running").voter_set().clone();
        if let Some(r) = self.replacing {
            if set.is_voter(r.old) {
                return self.remove(sim, leader, r.old);
            }
            if !set.contains(r.id) {
                return self.add(sim, leader, r.id);
            }
            let committed = !sim
                .node(leader)
                .expect("running")
                .has_uncommitted_voter_change();
            if committed {
                self.replacing = None;
                self.stats.replacements_completed += 1;
                sim.log(format!(
                    "membership: disk replacement of node {} done",
                    r.id
                ));
            }
            return;
        }
        if sim.faults_over {
            return;
        }
        let roll: f64 = sim.rng.gen();
        let spares: Vec<i32> = (1..=sim.options.nodes() as i32)
            .filter(|&id| !set.contains(id))
            .collect();
        if roll < 0.15 {
            let voters: Vec<i32> = set.ids().collect();
            let id = voters[sim.rng.gen_range(0..voters.len())];
            let old = set.node(id).expect("a voter").key;
            let down_ms = sim.rng.gen_range(100..2_000);
            sim.log(format!("membership: replacing the disk of voter {old:?}"));
            self.stats.disks_replaced += 1;
            self.replacing = Some(Replacement { id, old });
            sim.replace_disk(id, down_ms);
        } else if (roll < 0.55 && !spares.is_empty()) || set.len() <= MIN_VOTERS {
            if let Some(&id) = spares.get(sim.rng.gen_range(0..spares.len().max(1))) {
                self.add(sim, leader, id);
            }
        } else {
            let keys: Vec<ReplicaKey> = set.nodes().map(|n| n.key).collect();
            let key = keys[sim.rng.gen_range(0..keys.len())];
            self.remove(sim, leader, key);
        }
    }

    fn ask(&mut self, sim: &Sim<SimRaft>, node: i32, what: String) -> u64 {
        self.next_request_id += 1;
        let asked = Asked {
            node,
            incarnation: sim.incarnation(node).expect("running"),
            at_ms: sim.now_ms(),
            what,
        };
        self.outstanding.insert(self.next_request_id, asked);
        self.next_request_id
    }

    /// Asks leader `leader` to add node `id` by its current directory id and endpoint, as
    /// `add-controller` run on that node does (it supports kraft.version 0–1).
    fn add(&mut self, sim: &mut Sim<SimRaft>, leader: i32, id: i32) {
        let key = ReplicaKey::new(id, sim.directory_id_of(id));
        let ack_when_committed = sim.rng.gen_bool(0.7);
        let request_id = self.ask(sim, leader, format!("add {key:?}"));
        self.stats.adds_asked += 1;
        let node = VoterNode {
            key,
            endpoints: BTreeMap::from([("CONTROLLER".to_owned(), endpoint(id))]),
            supported_kraft_versions: (0, 1),
        };
        let mut answer = None;
        sim.step(leader, |core, now| {
            answer = core.add_voter(now, request_id, node, ack_when_committed, Some((0, 1)))?;
            Ok(())
        });
        sim.log(format!(
            "membership: asked node {leader} to add {key:?} (request {request_id}, ack when committed: {ack_when_committed})"
        ));
        if let Some(a) = answer {
            self.on_answer(sim, leader, a.request_id, a.error_code, a.error_message);
        }
    }

    /// Asks leader `leader` to remove `key` (maybe itself, case C11).
    fn remove(&mut self, sim: &mut Sim<SimRaft>, leader: i32, key: ReplicaKey) {
        let request_id = self.ask(sim, leader, format!("remove {key:?}"));
        self.stats.removes_asked += 1;
        if key.id == leader {
            self.stats.leader_removals += 1;
        }
        let mut answer = None;
        sim.step(leader, |core, now| {
            answer = core.remove_voter(now, request_id, key)?;
            Ok(())
        });
        sim.log(format!(
            "membership: asked node {leader} to remove {key:?} (request {request_id})"
        ));
        if let Some(a) = answer {
            self.on_answer(sim, leader, a.request_id, a.error_code, a.error_message);
        }
    }

    fn on_answer(
        &mut self,
        sim: &mut Sim<SimRaft>,
        node: i32,
        request_id: u64,
        error_code: i16,
        message: Option<String>,
    ) {
        let Some(asked) = self.outstanding.remove(&request_id) else {
            return sim.invariants.violation(format!(
                "node {node} answered voter change request {request_id} (error {error_code}), which is not outstanding: answered twice, or never asked"
            ));
        };
        if asked.node != node {
            return sim.invariants.violation(format!(
                "node {node} answered request {request_id} ({}), which node {} was asked",
                asked.what, asked.node
            ));
        }
        if error_code == errors::NONE {
            self.stats.answered_ok += 1;
        } else {
            self.stats.refused += 1;
        }
        let message = message.unwrap_or_default();
        sim.log(format!(
            "membership: node {node} answered request {request_id} ({}): error {error_code} {message}",
            asked.what
        ));
    }

    /// After every event: collects the answers, and checks that none is overdue and that a
    /// removed leader resigned.
    pub fn after_event(&mut self, sim: &mut Sim<SimRaft>, now_ms: u64) -> Result<(), Violation> {
        let ids: Vec<i32> = sim.nodes.keys().copied().collect();
        for id in ids {
            // The harness takes every answer after each step and keeps ours for us.
            for a in sim.take_operator_answers(id) {
                self.on_answer(sim, id, a.request_id, a.error_code, a.error_message);
            }
        }
        let lost: Vec<u64> = self
            .outstanding
            .iter()
            .filter(|(_, a)| !sim.is_running(a.node, a.incarnation))
            .map(|(&r, _)| r)
            .collect();
        for r in lost {
            self.outstanding.remove(&r);
            self.stats.lost_to_crashes += 1;
        }
        if let Some((r, a)) = self
            .outstanding
            .iter()
            .find(|(_, a)| now_ms > a.at_ms + ANSWER_DEADLINE_MS && !sim.is_stalled(a.node))
        {
            return Err(Violation(format!(
                "voter change request {r} ({}) asked of node {} at {} ms is still unanswered at {now_ms} ms",
                a.what, a.node, a.at_ms
            )));
        }
        self.check_removed_leaders(sim, now_ms)
    }

    /// Case C11: a leader that is not a voter of its committed voter set resigns.
    fn check_removed_leaders(&mut self, sim: &Sim<SimRaft>, now_ms: u64) -> Result<(), Violation> {
        let mut seen = BTreeMap::new();
        for (id, core) in sim.running() {
            if core.is_leader() && !core.is_voter() && !core.has_uncommitted_voter_change() {
                let since = match self.removed_leaders.get(&id) {
                    Some(&(epoch, since)) if epoch == core.epoch() => since,
                    _ => now_ms,
                };
                seen.insert(id, (core.epoch(), since));
                if now_ms > since + RESIGN_DEADLINE_MS && !sim.is_stalled(id) {
                    return Err(Violation(format!(
                        "node {id} still leads epoch {} at {now_ms} ms, {} ms after its removal from the voter set committed (voters {:?})",
                        core.epoch(),
                        now_ms - since,
                        describe_set(core.voter_set())
                    )));
                }
            }
        }
        let resigned = self
            .removed_leaders
            .keys()
            .filter(|id| !seen.contains_key(id))
            .count();
        self.stats.removed_leaders_resigned += resigned as u64;
        self.removed_leaders = seen;
        Ok(())
    }

    /// At the liveness deadline: true (and counted, and traced) if the disk replacement in
    /// progress cannot complete because no replica can be elected ([`unelectable`]).
    pub fn liveness_exempt(&mut self, sim: &mut Sim<SimRaft>) -> bool {
        if self.replacing.is_none() {
            return false;
        }
        let Some(why) = unelectable(sim) else {
            return false;
        };
        self.stats.unelectable_after_disk_loss += 1;
        sim.log(format!(
            "membership: liveness not demanded, no replica can be elected (KIP-853): {why}"
        ));
        true
    }

    /// Why the run did not pass, if the membership part is the reason.
    pub fn liveness_failure(&self, sim: &Sim<SimRaft>) -> Option<String> {
        let r = self.replacing?;
        let mut text = format!(
            "liveness: the disk replacement of node {} (old key {:?}, new directory id {}) did not complete within {} ms after the faults stopped;",
            r.id,
            r.old,
            sim.directory_id_of(r.id),
            sim.options.liveness_deadline_ms
        );
        for (id, core) in sim.running() {
            let _ = write!(
                text,
                " node {id}: {} epoch {}, voters {:?};",
                core.role(),
                core.epoch(),
                describe_set(core.voter_set())
            );
        }
        Some(text)
    }
}

/// Why no replica can ever be elected again, if so: a KIP-853 limit, not a Raft-core bug.
///
/// KIP-853 defines a voter as a replica that may become candidate and leader, and every
/// replica takes the voter set from the latest VotersRecord in its log, committed or not (Java:
/// `QuorumState.isVoter` reads `lastVoterSet()`; `pollUnattached` / `pollFollower` campaign only
/// if it is true, and `transitionToCandidate` refuses an observer). A vote is granted only to a
/// candidate whose log is at least as long (`handleVoteRequest`: `canGrantVote` with
/// `lastEpochEndOffset >= endOffset`) and only by the replica the request names, directory id
/// included (INVALID_VOTER_KEY otherwise, so a voter whose disk was replaced never votes with
/// its old key). Seeds 208 and 547 of the membership test reach this: a leader appends its own
/// removal, reaches only itself and an observer, and resigns; then a voter's disk dies. The
/// replicas holding the removal have the longest log but are not voters of their own set, so
/// never campaign; the others keep the old set, whose majority needs either the lost voter or a
/// vote from a longer log. KafkaRaftClient stays leaderless there too; only an operator (or a
/// disk that comes back) can help, which is why the run must not demand liveness.
///
/// Decided from the nodes' own state with exactly those rules, so it holds for good once no
/// node leads: without a leader no log, voter set or directory changes. Narrowed to the case
/// the workload produces (a voter key of a replaced disk is still in some set): a quorum that
/// cannot elect anyone with every disk intact is still a failure.
pub fn unelectable(sim: &Sim<SimRaft>) -> Option<String> {
    let running: BTreeMap<i32, &SimRaft> = sim.running().collect();
    if running.len() < sim.options.nodes() || running.values().any(|c| c.is_leader()) {
        return None;
    }
    let lost = running
        .values()
        .flat_map(|c| c.voter_set().nodes().map(|n| n.key))
        .find(|k| {
            k.directory_id
                .is_some_and(|d| d != sim.directory_id_of(k.id))
        })?;
    let mut why = format!("voter key {lost:?} lost its disk;");
    for (&id, candidate) in &running {
        if !candidate.is_voter() {
            let _ = write!(why, " node {id} is not a voter of its own set,");
            continue;
        }
        let end = candidate.log().end_offset();
        let set = candidate.voter_set();
        let grants = set
            .nodes()
            .filter(|n| {
                running.get(&n.key.id).is_some_and(|v| {
                    n.matches(v.local_key()) && (n.key.id == id || end >= v.log().end_offset())
                })
            })
            .count();
        if grants >= set.majority() {
            return None;
        }
        let _ = write!(
            why,
            " node {id} (log end {end:?}) can get {grants} of the {} votes it needs,",
            set.majority()
        );
    }
    Some(why.trim_end_matches(',').to_owned())
}

/// A voter set as `id:directory-id-suffix` keys, short enough for a trace line.
fn describe_set(set: &VoterSet) -> Vec<String> {
    set.nodes()
        .map(|n| {
            let dir = n.key.directory_id_or_zero().as_u64_pair();
            format!("{}:{}.{}", n.key.id, dir.0, dir.1)
        })
        .collect()
}
