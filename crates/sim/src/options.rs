//! What one simulated run exercises, derived from its seed.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::versions::Release;

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
}

impl SimOptions {
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
        };
        // Drawn last, so the settings above are the same as before releases existed.
        options.releases = (0..voters).map(|_| Release::draw(&mut rng)).collect();
        options
    }
}
