//! Controller quorum (Raft + controller state machine) under seeded faults, serving simulated
//! brokers and an admin client.

use kraftwerk_sim::node_cluster::NodeCluster;
use kraftwerk_sim::raft_cluster::SimOptions;
use kraftwerk_sim::seeds_from_env;

#[test]
fn controller_quorum_safety_and_liveness() {
    let seeds = seeds_from_env(40);
    let mut failures = Vec::new();
    for &seed in &seeds {
        let options = SimOptions::for_seed(seed);
        let mut cluster = NodeCluster::new(seed, options.clone());
        match cluster.run() {
            Ok(report) => {
                if seeds.len() == 1 {
                    println!("seed {seed} passed: {options:?}\n{report:?}");
                    for line in &cluster.trace {
                        println!("{line}");
                    }
                }
            }
            Err(v) => {
                eprintln!("seed {seed} FAILED ({options:?}):\n{}", v.0);
                failures.push(seed);
                if failures.len() >= 3 {
                    break;
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "simulation failed for seeds {failures:?}; see the reproduction commands above"
    );
}
