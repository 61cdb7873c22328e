//! Deterministic simulation of a kraftwerk quorum.
//!
//! Everything (clock, network, disks, crashes, workload) comes from one seed, and one thread runs
//! it, so a failing seed replays exactly: the failure message ends with the command to run.
//! Modelled on Kafka's `RaftEventSimulationTest` and TigerBeetle's VOPR.
//!
//! [`harness`] runs any kind of node; [`raft_cluster`] (Raft cores alone) and [`node_cluster`]
//! (full controller nodes with simulated brokers and an admin client) are the two kinds. Every
//! message goes through [`wire`] (adapt, encode, decode at a version negotiated from the
//! parties' tables in [`versions`]), so a version bug fails a seed as it would fail a peer.

pub mod auto_join;
pub mod harness;
pub mod invariants;
pub mod membership;
pub mod network;
pub mod node_cluster;
pub mod options;
pub mod raft_cluster;
pub mod scheduler;
pub mod versions;
pub mod wire;
pub mod workload;

pub use options::SimOptions;

use harness::{Cluster, Workload};

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

/// Runs the seeds of [`seeds_from_env`] with workload `W` and panics if any fails, after
/// printing each failure with its reproduction command (stopping after `SIM_MAX_FAILURES`
/// failures, default 3). A single seed that passes prints its report and trace. The last line
/// on stderr is `sim-summary: seeds=<run> failed=<count> liveness-exempt=<count>`, which
/// `scripts/sim-soak` adds up (seeds and failures). A seed that passed only because its end
/// state cannot make progress under the protocol ([`harness::Workload::liveness_exempt`])
/// prints a `passed without liveness` line with the reason.
pub fn run_seeds<W: Workload>(default_count: u64) {
    run_seeds_with::<W>(default_count, |_| {})
}

/// [`run_seeds`] with every seed's options changed by `adjust` (e.g. a kraft.version 1 quorum).
pub fn run_seeds_with<W: Workload>(default_count: u64, adjust: impl Fn(&mut SimOptions)) {
    let seeds = seeds_from_env(default_count);
    let max_failures: usize = std::env::var("SIM_MAX_FAILURES")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(3);
    let mut failures = Vec::new();
    let mut exempt = 0;
    let mut run = 0;
    for &seed in &seeds {
        run += 1;
        let mut options = SimOptions::for_seed(seed);
        adjust(&mut options);
        let mut cluster = Cluster::<W>::new(seed, options.clone());
        match cluster.run() {
            Ok(report) => {
                if cluster.liveness_exempt() {
                    exempt += 1;
                    let why = cluster.trace().last().map_or("", String::as_str);
                    eprintln!("seed {seed} passed without liveness: {why}");
                }
                if seeds.len() == 1 {
                    println!("seed {seed} passed: {options:?}\n{report:?}");
                    for line in cluster.trace() {
                        println!("{line}");
                    }
                }
            }
            Err(v) => {
                eprintln!("seed {seed} FAILED ({options:?}):\n{}", v.0);
                failures.push(seed);
                if failures.len() >= max_failures {
                    break;
                }
            }
        }
    }
    eprintln!(
        "sim-summary: seeds={run} failed={} liveness-exempt={exempt}",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "simulation failed for seeds {failures:?}; see the reproduction commands above"
    );
}
