//! Auto-join (`controller.quorum.auto.join.enable`, Kafka 4.2, KIP-853) under the faults: every
//! node runs with it, the spares (formatted with `--no-initial-controllers`) join the voter set
//! by themselves, and during the faults the workload replaces a voter's disk now and then (a new
//! empty disk with a new directory id, as in [`crate::membership`]) and leaves the rest to the
//! node: it removes its id's old key, then adds its new one. The AddRaftVoter /
//! RemoveRaftVoter its core sends are served by the leader as the driver serves them
//! ([`crate::harness::voter_changes`]).
//!
//! Checked here, after every event (the log-level invariants, one uncommitted voter change,
//! only voters lead, no committed write lost, are in [`crate::invariants`]; a leader outside
//! its committed set resigning is [`crate::membership::Membership::after_event`]'s check):
//! - every voter change a node served is answered within [`ANSWER_DEADLINE_MS`], unless the
//!   serving node crashed;
//! - liveness: once the faults stop, the committed voter set becomes every node with its
//!   current directory id (every spare joined, every replaced disk's old key gone and its new
//!   one in) within [`liveness_bound_ms`].

use std::fmt::Write as _;

use kraftwerk_raft::config::DEFAULT_FETCH_TIMEOUT_MS;
use kraftwerk_raft::ReplicaKey;
use rand::Rng;

use crate::harness::{Sim, SimRaft};
use crate::invariants::Violation;
use crate::membership::ANSWER_DEADLINE_MS;
use crate::options::SimOptions;

/// The slowest clock a node may have (`SimOptions::clock_rates_ppm`), in parts per million:
/// a node's own timers take up to 1/0.9 of their length in simulated time.
const SLOWEST_CLOCK_PPM: u64 = 900_000;

/// How long after the faults stop the committed voter set must hold every node, in simulated
/// ms. An observer asks the leader every period P = 3 × fetch timeout (`core::auto_join`,
/// Kafka `pollFollowerAsObserver`), the first time one period after it started following the
/// leader, on its own clock (up to 10 % slow: P ≤ 6.67 s). So:
/// - the leader settles within one period of the heal (noticing a lost leader takes at most a
///   fetch timeout, an election two election timeouts), and every follower's period restarts
///   then, so all of them ask at about the same moment;
/// - those requests race: the leader appends the first and refuses the rest while it is
///   uncommitted (REQUEST_TIMED_OUT, retried next period), so in the worst case one change
///   lands per period. At most `spares + 2` changes remain: every spare's addition, and a
///   replaced disk's removal of its old key and then addition of its new one;
/// - one period of slack (a leader change while it settles).
///
/// That is `spares + 4` periods (40 s beside 3 voters, 33 s beside 5); seeds 1–300 took up to
/// 29.6 s (3 voters) and 21.7 s (5 voters).
pub fn liveness_bound_ms(options: &SimOptions) -> u64 {
    let period = 3 * DEFAULT_FETCH_TIMEOUT_MS * 1_000_000 / SLOWEST_CLOCK_PPM;
    let changes = options.spares as u64 + 2;
    (1 + changes + 1) * period
}

/// A disk replacement in progress.
#[derive(Clone, Copy, Debug)]
struct Replacement {
    id: i32,
    old: ReplicaKey,
    new: ReplicaKey,
}

/// Counts for the report.
#[derive(Clone, Debug, Default)]
pub struct AutoJoinStats {
    /// Voters' disks replaced.
    pub disks_replaced: u64,
    /// Replacements completed (the new key in the committed set, the old one gone).
    pub replacements_completed: u64,
    /// AddRaftVoter requests cores sent that reached a node.
    pub adds_served: u64,
    /// RemoveRaftVoter requests cores sent that reached a node.
    pub removes_served: u64,
    /// Of those, answered NONE.
    pub answered_ok: u64,
    /// Of those, answered with an error.
    pub refused: u64,
    /// Simulated ms after the faults stopped when the committed set held every node.
    pub joined_after_heal_ms: Option<u64>,
}

/// The auto-join part of the Raft workload.
#[derive(Debug, Default)]
pub struct AutoJoin {
    replacing: Option<Replacement>,
    /// Counts for the report.
    pub stats: AutoJoinStats,
}

impl AutoJoin {
    /// The next time the workload may replace a disk, from `now_ms`.
    pub fn next_at(sim: &mut Sim<SimRaft>, now_ms: u64) -> u64 {
        now_ms + sim.rng.gen_range(2_000..=8_000)
    }

    /// A leader that runs, is not stalled, and has its voter set committed: that set.
    fn committed_set(sim: &Sim<SimRaft>) -> Option<(i32, kraftwerk_raft::VoterSet)> {
        sim.running()
            .find(|&(id, c)| {
                c.is_leader()
                    && !sim.is_stalled(id)
                    && c.high_watermark().is_some()
                    && !c.has_uncommitted_voter_change()
            })
            .map(|(id, c)| (id, c.voter_set().clone()))
    }

    /// During the faults, replaces a voter's disk unless a replacement is in progress (two at
    /// once could take a majority's data; an operator replaces one at a time).
    pub fn step(&mut self, sim: &mut Sim<SimRaft>) {
        if sim.faults_over || self.replacing.is_some() {
            return;
        }
        let Some((_, set)) = Self::committed_set(sim) else {
            return;
        };
        // As the membership workload: never from a set below the floor.
        let keys: Vec<ReplicaKey> = set.nodes().map(|n| n.key).collect();
        if keys.len() < crate::options::MIN_VOTERS {
            return;
        }
        let old = keys[sim.rng.gen_range(0..keys.len())];
        let down_ms = sim.rng.gen_range(100..2_000);
        sim.log(format!(
            "auto-join: replacing the disk of voter {old:?}; it rejoins by itself"
        ));
        sim.replace_disk(old.id, down_ms);
        let new = ReplicaKey::new(old.id, sim.directory_id_of(old.id));
        self.stats.disks_replaced += 1;
        self.replacing = Some(Replacement {
            id: old.id,
            old,
            new,
        });
    }

    /// True while the committed voter set does not hold every node with its current disk.
    pub fn busy(&self) -> bool {
        self.stats.joined_after_heal_ms.is_none()
    }

    /// True if `set` is every node with its current directory id.
    fn complete(sim: &Sim<SimRaft>, set: &kraftwerk_raft::VoterSet) -> bool {
        let nodes = sim.options.nodes() as i32;
        set.len() == nodes as usize
            && (1..=nodes).all(|id| set.is_voter(ReplicaKey::new(id, sim.directory_id_of(id))))
    }

    /// After every event: checks the served requests' answers and follows the replacement and
    /// the spares.
    pub fn after_event(&mut self, sim: &mut Sim<SimRaft>, now_ms: u64) -> Result<(), Violation> {
        let served = &sim.served;
        self.stats.adds_served = served.adds;
        self.stats.removes_served = served.removes;
        self.stats.answered_ok = served.answered_ok;
        self.stats.refused = served.refused;
        if let Some((r, s)) = served.outstanding.iter().find(|(_, s)| {
            now_ms > s.at_ms + ANSWER_DEADLINE_MS
                && sim.is_running(s.node, s.incarnation)
                && !sim.is_stalled(s.node)
        }) {
            return Err(Violation(format!(
                "node {}'s request {} ({}) served by node {} at {} ms is still unanswered at {now_ms} ms",
                s.from,
                r & !crate::harness::voter_changes::DRIVER_REQUEST_BIT,
                s.what,
                s.node,
                s.at_ms
            )));
        }
        let Some((leader, set)) = Self::committed_set(sim) else {
            return Ok(());
        };
        if let Some(r) = self.replacing {
            if set.is_voter(r.new) && !set.is_voter(r.old) {
                self.replacing = None;
                self.stats.replacements_completed += 1;
                sim.log(format!(
                    "auto-join: node {} rejoined with its new disk (committed at leader {leader})",
                    r.id
                ));
            }
        }
        if sim.faults_over && self.stats.joined_after_heal_ms.is_none() && Self::complete(sim, &set)
        {
            let after = now_ms.saturating_sub(sim.options.fault_phase_ms);
            self.stats.joined_after_heal_ms = Some(after);
            sim.log(format!(
                "auto-join: the committed voter set holds every node, {after} ms after the faults stopped"
            ));
        }
        Ok(())
    }

    /// Why the run did not pass, if auto-join is the reason.
    pub fn liveness_failure(&self, sim: &Sim<SimRaft>) -> Option<String> {
        if !self.busy() {
            return None;
        }
        let mut text = format!(
            "liveness: the committed voter set did not come to hold every node with its current directory id within {} ms after the faults stopped (replacement in progress: {:?});",
            sim.options.liveness_deadline_ms, self.replacing
        );
        for id in 1..=sim.options.nodes() as i32 {
            let _ = write!(text, " node {id} dir {}", sim.directory_id_of(id));
            match sim.node(id) {
                Some(core) => {
                    let _ = write!(
                        text,
                        ": {} epoch {}, voters {:?};",
                        core.role(),
                        core.epoch(),
                        core.voter_set().ids().collect::<Vec<_>>()
                    );
                }
                None => text.push_str(": down;"),
            }
        }
        Some(text)
    }
}
