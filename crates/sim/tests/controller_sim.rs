//! Controller quorum (Raft + controller state machine) under seeded faults, serving simulated
//! brokers and an admin client.

use kraftwerk_sim::node_cluster::Clients;

#[test]
fn controller_quorum_safety_and_liveness() {
    kraftwerk_sim::run_seeds::<Clients>(40);
}
