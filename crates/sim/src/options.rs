//! What one simulated run exercises, derived from its seed.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::versions::Release;

/// The workload never removes a voter from a set of this many (only a disk replacement takes
/// it one below for a while: the old key goes before the new one can be added).
pub const MIN_VOTERS: usize = 3;

/// What the simulation exercises in one run.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Number of voters (3 or 5 usually).
    pub voters: usize,
    /// Simulated duration of the fault phase, in ms.
    pub fault_phase_ms: u64,
    /// After the faults stop, the workload must make progress within this many ms.
    pub liveness_deadline_ms: u64,
    /// Mean time between crashes (0 = never).
    pub crash_interval_ms: u64,
    /// Mean time between partition changes (0 = never).
    pub partition_interval_ms: u64,
    /// Mean time between writes proposed to the leader.
    pub write_interval_ms: u64,
    /// Random network faults (else calm).
    pub network_faults: bool,
    /// Crashes may tear the last unflushed write.
    pub torn_writes: bool,
    /// The release whose Raft RPC versions each voter speaks (voter `i + 1` at index `i`).
    pub releases: Vec<Release>,
    /// Some partitions are one-way: one group's messages to the other are lost while the other
    /// direction is delivered.
    pub one_way_partitions: bool,
    /// How fast each voter's clock runs, in parts per million of simulated time (voter `i + 1`
    /// at index `i`; 1,000,000 is exact): the times it is given and its timers run at that rate.
    pub clock_rates_ppm: Vec<u32>,
    /// Mean time between stalls of a node's thread (0 = never): it stops processing for a
    /// while, then handles the messages and timers that queued up all at once.
    pub stall_interval_ms: u64,
    /// Mean time between Raft RPCs forged by a hostile peer (0 = none); see
    /// [`crate::harness::hostile`].
    pub hostile_interval_ms: u64,
    /// A dynamic quorum (KIP-853, kraft.version 1): no static voters; every node's log starts
    /// with the bootstrap checkpoint `format --initial-controllers` writes (KRaftVersion 1 and
    /// the VotersRecord of all voters, each with its directory id).
    pub kraft_version_1: bool,
    /// A static quorum (kraft.version 0) that the workload upgrades to kraft.version 1 during
    /// the faults (`kafka-features upgrade --feature kraft.version=1`, Kafka 4.1+): the leader
    /// is asked again and again until every voter has reported itself with UpdateRaftVoter.
    pub kraft_version_upgrade: bool,
    /// Nodes besides the voters (ids `voters + 1 ..`), formatted like
    /// `kafka-storage format --no-initial-controllers`: an empty log, their own directory id,
    /// `controller.quorum.bootstrap.servers` to find the leader. They start as observers and
    /// become voters only when the workload adds them (kraft.version 1 only).
    pub spares: usize,
    /// The workload changes the voter set during the faults (KIP-853): adds spare nodes,
    /// removes voters (the leader too, case C11; never below [`MIN_VOTERS`] voters) and
    /// replaces a voter's disk (a new directory id, removed by its old key, added by its new
    /// one). On top of [`Self::kraft_version_1`].
    pub membership_changes: bool,
    /// `controller.quorum.auto.join.enable` on every node (Kafka 4.2+): the spares join the
    /// voter set by themselves, and the workload replaces voters' disks during the faults (a
    /// replaced node removes its old key and adds its new one by itself); see
    /// [`crate::auto_join`]. On top of [`Self::kraft_version_1`].
    pub auto_join: bool,
    // TODO(issue 9 item 4): disk errors (short writes, ENOSPC, EIO on fsync, flipped bytes,
    // truncated files) once the fault-injecting storage layer exists; today a disk only crashes
    // (losing unflushed data) and tears its last write.
}

impl SimOptions {
    /// Makes the run a dynamic quorum (kraft.version 1); voters of releases before Kafka 3.9
    /// (no directory ids in their RPCs) become current ones, as Kafka needs 3.9+ for KIP-853.
    pub fn with_kraft_version_1(&mut self) {
        self.kraft_version_1 = true;
        for r in &mut self.releases {
            if !r.speaks_kip_853() {
                *r = crate::versions::CURRENT;
            }
        }
    }

    /// Makes the run a dynamic quorum whose voter set the workload changes while the faults go
    /// on ([`Self::membership_changes`]), with spare nodes to add: two beside 3 voters, one
    /// beside 5 (so the set ranges over 3–5 or 3–6 voters). Spares speak the current release;
    /// their clocks run at voter 1's rate.
    pub fn with_membership_changes(&mut self) {
        self.with_kraft_version_1();
        self.membership_changes = true;
        self.spares = if self.voters <= 3 { 2 } else { 1 };
        let rate = self.clock_rates_ppm.first().copied().unwrap_or(1_000_000);
        for _ in 0..self.spares {
            self.releases.push(crate::versions::CURRENT);
            self.clock_rates_ppm.push(rate);
        }
    }

    /// Makes the run a dynamic quorum whose spares (as many as [`Self::with_membership_changes`]
    /// gives) join by themselves ([`Self::auto_join`]), with voters' disks replaced during the
    /// faults. The liveness deadline becomes [`crate::auto_join::liveness_bound_ms`].
    pub fn with_auto_join(&mut self) {
        self.with_membership_changes();
        self.membership_changes = false;
        self.auto_join = true;
        self.liveness_deadline_ms = self
            .liveness_deadline_ms
            .max(crate::auto_join::liveness_bound_ms(self));
    }

    /// Number of node processes: the voters and the spares.
    pub fn nodes(&self) -> usize {
        self.voters + self.spares
    }

    /// Makes the run a static quorum upgraded to kraft.version 1 while it runs; voters of
    /// releases before Kafka 3.9 become current ones (KIP-853 needs directory ids).
    pub fn with_kraft_version_upgrade(&mut self) {
        self.kraft_version_upgrade = true;
        for r in &mut self.releases {
            if !r.speaks_kip_853() {
                *r = crate::versions::CURRENT;
            }
        }
    }

    /// Settings derived from the seed (so that many seeds cover many shapes).
    pub fn for_seed(seed: u64) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x5eed);
        let voters = if rng.gen_bool(0.7) { 3 } else { 5 };
        let mut options = Self {
            voters,
            fault_phase_ms: 30_000,
            liveness_deadline_ms: 20_000,
            crash_interval_ms: if rng.gen_bool(0.8) {
                rng.gen_range(2_000..10_000)
            } else {
                0
            },
            partition_interval_ms: if rng.gen_bool(0.7) {
                rng.gen_range(1_000..8_000)
            } else {
                0
            },
            write_interval_ms: rng.gen_range(5..200),
            network_faults: rng.gen_bool(0.8),
            torn_writes: rng.gen_bool(0.5),
            releases: Vec::new(),
            one_way_partitions: false,
            clock_rates_ppm: Vec::new(),
            stall_interval_ms: 0,
            hostile_interval_ms: 0,
            kraft_version_1: false,
            kraft_version_upgrade: false,
            spares: 0,
            membership_changes: false,
            auto_join: false,
        };
        // Drawn after the settings above, so they are the same as before these existed.
        options.releases = (0..voters).map(|_| Release::draw(&mut rng)).collect();
        options.one_way_partitions = options.partition_interval_ms > 0 && rng.gen_bool(0.5);
        let skewed = rng.gen_bool(0.5);
        options.clock_rates_ppm = (0..voters)
            .map(|_| {
                if skewed {
                    rng.gen_range(900_000..=1_100_000)
                } else {
                    1_000_000
                }
            })
            .collect();
        options.stall_interval_ms = if rng.gen_bool(0.4) {
            rng.gen_range(2_000..10_000)
        } else {
            0
        };
        // Sparse enough to leave the seed budget alone (the core's answer to each forgery is
        // pinned down in crates/raft/src/core/tests/hostile.rs); harness::tests runs a dense one.
        options.hostile_interval_ms = if rng.gen_bool(0.5) {
            rng.gen_range(200..2_000)
        } else {
            0
        };
        // kraft.version 1 is chosen by the caller (`run_seeds_with`), so every seed keeps the
        // run it had before dynamic quorums existed.
        options
    }
}
