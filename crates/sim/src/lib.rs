//! Deterministic simulation of a kraftwerk quorum.
//!
//! Everything (clock, network, disks, crashes, workload) comes from one seed, and one thread runs
//! it, so a failing seed replays exactly: the failure message ends with the command to run.
//! Modelled on Kafka's `RaftEventSimulationTest` and TigerBeetle's VOPR.

pub mod invariants;
pub mod network;
pub mod node_cluster;
pub mod raft_cluster;
pub mod scheduler;
pub mod workload;

/// Seeds to run: `SIM_SEED=<n>` runs one seed, else `SIM_SEEDS=<count>` seeds starting at
/// `SIM_SEED_START` (default 1), else `default_count`.
pub fn seeds_from_env(default_count: u64) -> Vec<u64> {
    if let Ok(seed) = std::env::var("SIM_SEED") {
        return vec![seed.trim().parse().expect("SIM_SEED must be a number")];
    }
    let count = std::env::var("SIM_SEEDS")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default_count);
    let start = std::env::var("SIM_SEED_START")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1);
    (start..start + count).collect()
}
