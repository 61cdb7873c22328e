//! A quorum of Raft cores alone, with writes proposed to whichever node leads.
//!
//! Liveness: once the faults stop, a leader must commit a new write within the deadline.

use std::convert::Infallible;

use bytes::Bytes;
use kraftwerk_raft::testing::{MemLog, MemQuorumStateStore};
use kraftwerk_raft::{Input, RaftConfig, RaftCore, RaftError, ReplicatedLog};
use rand::rngs::SmallRng;
use rand::Rng;

use crate::harness::{Cluster, Outgoing, Sim, SimRaft, SimulatedNode, Workload};
use crate::invariants::{Invariants, Violation};

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
}

/// Events of the Raft-only simulation.
#[derive(Debug)]
pub enum RaftEvent {
    /// Propose a write to the leader, if there is one.
    Write,
}

/// Writes of 1–5 records proposed to the leader every `write_interval_ms` on average.
pub struct RaftWrites {
    writes_proposed: u64,
    /// Committed end offset when the faults stopped.
    committed_at_heal: Option<i64>,
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
        }
    }

    fn start(&mut self, sim: &mut Sim<SimRaft>) {
        let w = sim.options.write_interval_ms;
        sim.schedule(w, RaftEvent::Write);
    }

    fn on_event(&mut self, sim: &mut Sim<SimRaft>, event: RaftEvent) {
        match event {
            RaftEvent::Write => {
                let now = sim.now_ms();
                self.propose_write(sim);
                let at = now + sim.rng.gen_range(1..=2 * sim.options.write_interval_ms);
                sim.schedule(at, RaftEvent::Write);
            }
        }
    }

    fn after_event(
        &mut self,
        sim: &mut Sim<SimRaft>,
        now_ms: u64,
    ) -> Result<Option<SimReport>, Violation> {
        if !sim.faults_over {
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
                }));
            }
            _ => {}
        }
        Ok(None)
    }

    fn liveness_failure(&mut self, sim: &mut Sim<SimRaft>) -> String {
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
}
