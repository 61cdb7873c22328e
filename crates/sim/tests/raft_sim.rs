//! Raft safety and liveness under seeded network, clock and disk faults.

use kraftwerk_sim::raft_cluster::RaftWrites;

#[test]
fn raft_safety_and_liveness() {
    kraftwerk_sim::run_seeds::<RaftWrites>(100);
}
