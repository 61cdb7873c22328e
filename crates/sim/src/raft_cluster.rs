//! A quorum of Raft cores alone, with writes proposed to whichever node leads.
//!
//! Liveness: once the faults stop, a leader must commit a new write within the deadline.

use std::convert::Infallible;

use bytes::Bytes;
use kraftwerk_raft::testing::{MemLog, MemQuorumStateStore};
use kraftwerk_raft::{
    Input, KraftUpgradeError, RaftConfig, RaftCore, RaftError, ReplicaKey, ReplicatedLog,
    VoterChangeAnswer,
};
use rand::rngs::SmallRng;
use rand::Rng;

use crate::auto_join::{AutoJoin, AutoJoinStats};
use crate::harness::voter_changes::VoterChange;
use crate::harness::{Cluster, Outgoing, Sim, SimRaft, SimulatedNode, Workload};
use crate::invariants::{Invariants, Violation};
use crate::membership::{Membership, MembershipStats};

/// A simulation of Raft cores alone.
pub type RaftCluster = Cluster<RaftWrites>;

/// The Raft core is a node of its own: it has no outputs besides Raft messages and no
/// invariants besides the Raft ones.
impl SimulatedNode for SimRaft {
    type Config = ();
    type Output = Infallible;
    type Event = RaftEvent;
    type Checks = ();
    type Error = RaftError;

    fn configure(_rng: &mut SmallRng) {}

    fn fresh_log(_config: &()) -> MemLog {
        MemLog::new()
    }

    fn start(
        raft: RaftConfig,
        log: MemLog,
        store: MemQuorumStateStore,
        _config: &(),
        rng: &mut SmallRng,
        now_ms: u64,
    ) -> Result<Self, RaftError> {
        RaftCore::new(raft, log, store, rng.gen(), now_ms)
    }

    fn handle(&mut self, now_ms: u64, input: Input) -> Result<(), RaftError> {
        RaftCore::handle(self, now_ms, input)
    }

    fn poll(&mut self, now_ms: u64) -> Result<(), RaftError> {
        RaftCore::poll(self, now_ms)
    }

    fn next_deadline_ms(&self) -> u64 {
        RaftCore::next_deadline_ms(self)
    }

    fn take_outputs(&mut self) -> Vec<Outgoing<Infallible>> {
        RaftCore::take_outputs(self)
            .into_iter()
            .map(Outgoing::Raft)
            .collect()
    }

    fn raft(&self) -> &SimRaft {
        self
    }

    fn into_log(self) -> MemLog {
        self.into_parts().0
    }

    fn describe(&self) -> String {
        let hw = self.high_watermark();
        format!("hw {hw:?}, leo {}", self.log().end_offset().offset)
    }

    fn on_output(_sim: &mut Sim<Self>, _from: i32, output: Infallible) {
        match output {}
    }

    fn check(&mut self, _id: i32, _checks: &mut (), _invariants: &mut Invariants) {}

    const SERVES_VOTER_CHANGES: bool = true;

    fn serve_voter_change(
        &mut self,
        now_ms: u64,
        request_id: u64,
        change: VoterChange,
    ) -> Result<Option<VoterChangeAnswer>, RaftError> {
        match change {
            VoterChange::Add {
                node,
                ack_when_committed,
                new_voter_kraft_versions,
            } => self.add_voter(
                now_ms,
                request_id,
                node,
                ack_when_committed,
                new_voter_kraft_versions,
            ),
            VoterChange::Remove(key) => self.remove_voter(now_ms, request_id, key),
        }
    }

    fn take_voter_change_answers(&mut self) -> Vec<VoterChangeAnswer> {
        RaftCore::take_voter_change_answers(self)
    }
}

/// Events of the Raft-only simulation.
#[derive(Debug)]
pub enum RaftEvent {
    /// Propose a write to the leader, if there is one.
    Write,
    /// Ask the leader to upgrade kraft.version to 1 (runs with
    /// [`crate::SimOptions::kraft_version_upgrade`]), again until it is done.
    UpgradeKraftVersion,
    /// Change the voter set (runs with [`crate::SimOptions::membership_changes`]): see
    /// [`Membership::step`].
    ChangeVoters,
    /// Maybe replace a voter's disk (runs with [`crate::SimOptions::auto_join`]): see
    /// [`AutoJoin::step`].
    ReplaceDisk,
}

/// Writes of 1–5 records proposed to the leader every `write_interval_ms` on average.
pub struct RaftWrites {
    writes_proposed: u64,
    /// Committed end offset when the faults stopped.
    committed_at_heal: Option<i64>,
    /// Times the leader accepted the kraft.version upgrade (appended its control batch).
    upgrades_appended: u64,
    /// Membership changes, in runs with [`crate::SimOptions::membership_changes`].
    membership: Option<Membership>,
    /// Auto-join, in runs with [`crate::SimOptions::auto_join`].
    auto_join: Option<AutoJoin>,
}

impl RaftWrites {
    fn propose_write(&mut self, sim: &mut Sim<SimRaft>) {
        // A stalled leader takes no writes until it resumes (its client would wait).
        let leader = sim
            .running()
            .find(|&(id, c)| c.is_leader() && !sim.is_stalled(id))
            .map(|(id, _)| id);
        let Some(id) = leader else { return };
        self.writes_proposed += 1;
        let n = sim.rng.gen_range(1..=5);
        let records: Vec<Bytes> = (0..n)
            .map(|i| Bytes::from(format!("write-{}-{}", self.writes_proposed, i)))
            .collect();
        sim.step_infallible(id, |core, now| {
            // A leader may refuse (stepping down, batch limits): the workload just goes on.
            let _ = core.append(now, records);
        });
    }

    /// Asks the leader to upgrade kraft.version; a refusal (not every voter reported yet, a
    /// stale epoch) is an answer, a storage failure fails the run.
    fn propose_upgrade(&mut self, sim: &mut Sim<SimRaft>) {
        let leader = sim
            .running()
            .find(|&(id, c)| c.is_leader() && !sim.is_stalled(id))
            .map(|(id, _)| id);
        let Some(id) = leader else { return };
        let mut appended = false;
        sim.step(id, |core, now| {
            let epoch = core.epoch();
            match core.upgrade_kraft_version(now, epoch, 1, false) {
                Ok(done) => {
                    appended = done;
                    Ok(())
                }
                Err(KraftUpgradeError::Fatal(e)) => Err(e),
                Err(_) => Ok(()),
            }
        });
        if appended {
            self.upgrades_appended += 1;
            sim.log(format!("node {id} appended the kraft.version upgrade"));
        }
    }

    /// True once a leader runs at kraft.version 1 with its voter set committed.
    fn upgrade_committed(sim: &Sim<SimRaft>) -> bool {
        sim.running().any(|(_, c)| {
            c.is_leader() && c.kraft_version() == 1 && !c.has_uncommitted_voter_change()
        })
    }

    /// At kraft.version 1 every node's voter set must be the static voters, each with its own
    /// directory id: the upgrade writes who the voters are, it does not change them.
    fn check_upgraded_voters(sim: &mut Sim<SimRaft>) {
        let voters = sim.options.voters as i32;
        let mut wrong = None;
        for (id, core) in sim.running() {
            if core.kraft_version() < 1 {
                continue;
            }
            let set = core.voter_set();
            let ok = set.ids().eq(1..=voters)
                && (1..=voters).all(|v| {
                    set.is_voter(ReplicaKey::new(v, crate::harness::directory_id(v)))
                        && set.node(v).is_some_and(|n| n.key.directory_id.is_some())
                });
            if !ok {
                wrong = Some(format!(
                    "node {id} at kraft.version 1 has voter set {set:?}, expected voters 1..={voters} with their directory ids"
                ));
                break;
            }
        }
        if let Some(text) = wrong {
            sim.invariants.violation(text);
        }
    }
}

impl Workload for RaftWrites {
    type Node = SimRaft;
    type Report = SimReport;
    const TEST: &'static str = "raft_sim";
    const MAX_DOWN_MS: u64 = 5_000;

    fn new(_sim: &mut Sim<SimRaft>) -> Self {
        Self {
            writes_proposed: 0,
            committed_at_heal: None,
            upgrades_appended: 0,
            membership: None,
            auto_join: None,
        }
    }

    fn start(&mut self, sim: &mut Sim<SimRaft>) {
        let w = sim.options.write_interval_ms;
        sim.schedule(w, RaftEvent::Write);
        if sim.options.kraft_version_upgrade {
            let at = sim.rng.gen_range(1_000..=sim.options.fault_phase_ms);
            sim.schedule(at, RaftEvent::UpgradeKraftVersion);
        }
        if sim.options.membership_changes {
            self.membership = Some(Membership::default());
            let at = Membership::next_at(sim, 500);
            sim.schedule(at, RaftEvent::ChangeVoters);
        }
        if sim.options.auto_join {
            // No operator requests: Membership only checks that a leader outside its
            // committed voter set resigns (case C11).
            self.membership = Some(Membership::default());
            self.auto_join = Some(AutoJoin::default());
            let at = AutoJoin::next_at(sim, 1_000);
            sim.schedule(at, RaftEvent::ReplaceDisk);
        }
    }

    fn on_event(&mut self, sim: &mut Sim<SimRaft>, event: RaftEvent) {
        match event {
            RaftEvent::Write => {
                let now = sim.now_ms();
                self.propose_write(sim);
                let at = now + sim.rng.gen_range(1..=2 * sim.options.write_interval_ms);
                sim.schedule(at, RaftEvent::Write);
            }
            RaftEvent::UpgradeKraftVersion => {
                let now = sim.now_ms();
                self.propose_upgrade(sim);
                let at = now + sim.rng.gen_range(500..=3_000);
                sim.schedule(at, RaftEvent::UpgradeKraftVersion);
            }
            RaftEvent::ChangeVoters => {
                let now = sim.now_ms();
                if let Some(m) = &mut self.membership {
                    m.step(sim);
                    if !sim.faults_over || m.busy() {
                        let at = Membership::next_at(sim, now);
                        sim.schedule(at, RaftEvent::ChangeVoters);
                    }
                }
            }
            RaftEvent::ReplaceDisk => {
                let now = sim.now_ms();
                if let Some(a) = &mut self.auto_join {
                    a.step(sim);
                    if !sim.faults_over {
                        let at = AutoJoin::next_at(sim, now);
                        sim.schedule(at, RaftEvent::ReplaceDisk);
                    }
                }
            }
        }
    }

    fn after_event(
        &mut self,
        sim: &mut Sim<SimRaft>,
        now_ms: u64,
    ) -> Result<Option<SimReport>, Violation> {
        if sim.options.kraft_version_upgrade {
            Self::check_upgraded_voters(sim);
        }
        if let Some(m) = &mut self.membership {
            m.after_event(sim, now_ms)?;
        }
        if let Some(a) = &mut self.auto_join {
            a.after_event(sim, now_ms)?;
        }
        if !sim.faults_over {
            return Ok(None);
        }
        if self.membership.as_ref().is_some_and(Membership::busy)
            || self.auto_join.as_ref().is_some_and(AutoJoin::busy)
        {
            return Ok(None);
        }
        if sim.options.kraft_version_upgrade && !Self::upgrade_committed(sim) {
            return Ok(None);
        }
        let committed = sim.invariants.committed_end_offset();
        match self.committed_at_heal {
            None => self.committed_at_heal = Some(committed),
            Some(at_heal) if committed > at_heal + 1 => {
                return Ok(Some(SimReport {
                    simulated_ms: now_ms,
                    committed_end_offset: committed,
                    leaders_elected: sim.invariants.leaders_elected(),
                    writes_proposed: self.writes_proposed,
                    upgrades_appended: self.upgrades_appended,
                    membership: self.membership.as_ref().map(|m| m.stats.clone()),
                    auto_join: self.auto_join.as_ref().map(|a| a.stats.clone()),
                }));
            }
            _ => {}
        }
        Ok(None)
    }

    fn liveness_exempt(&mut self, sim: &mut Sim<SimRaft>) -> Option<SimReport> {
        let m = self.membership.as_mut()?;
        if !m.liveness_exempt(sim) {
            return None;
        }
        Some(SimReport {
            simulated_ms: sim.now_ms(),
            committed_end_offset: sim.invariants.committed_end_offset(),
            leaders_elected: sim.invariants.leaders_elected(),
            writes_proposed: self.writes_proposed,
            upgrades_appended: self.upgrades_appended,
            membership: Some(m.stats.clone()),
            auto_join: self.auto_join.as_ref().map(|a| a.stats.clone()),
        })
    }

    fn liveness_failure(&mut self, sim: &mut Sim<SimRaft>) -> String {
        if let Some(text) = self
            .membership
            .as_ref()
            .and_then(|m| m.liveness_failure(sim))
        {
            return text;
        }
        if let Some(text) = self
            .auto_join
            .as_ref()
            .and_then(|a| a.liveness_failure(sim))
        {
            return text;
        }
        if sim.options.kraft_version_upgrade && !Self::upgrade_committed(sim) {
            return format!(
                "liveness: the kraft.version upgrade did not commit within {} ms after the faults stopped ({} upgrade batches appended)",
                sim.options.liveness_deadline_ms, self.upgrades_appended
            );
        }
        format!(
            "liveness: no new write committed within {} ms after the faults stopped (committed end offset {})",
            sim.options.liveness_deadline_ms,
            sim.invariants.committed_end_offset()
        )
    }
}

/// Summary of a passing run.
#[derive(Clone, Debug)]
pub struct SimReport {
    /// Simulated time when the run ended, ms.
    pub simulated_ms: u64,
    /// Committed end offset reached.
    pub committed_end_offset: i64,
    /// Distinct (epoch, leader) pairs seen.
    pub leaders_elected: usize,
    /// Writes offered to leaders.
    pub writes_proposed: u64,
    /// kraft.version upgrade batches appended (more than one: a leader's uncommitted upgrade
    /// was truncated and a later leader upgraded again).
    pub upgrades_appended: u64,
    /// What the membership workload did, in runs with it.
    pub membership: Option<MembershipStats>,
    /// What auto-join did, in runs with it.
    pub auto_join: Option<AutoJoinStats>,
}
