//! Raft safety and liveness under seeded network, clock and disk faults.

use kraftwerk_sim::harness::Cluster;
use kraftwerk_sim::raft_cluster::RaftWrites;
use kraftwerk_sim::SimOptions;

#[test]
fn raft_safety_and_liveness() {
    kraftwerk_sim::run_seeds::<RaftWrites>(100);
}

/// The same faults on a dynamic quorum (KIP-853): the voter set comes from the bootstrap
/// checkpoint and the log, voters are keyed by (id, directory id), `quorum-state` is
/// data_version 1.
#[test]
fn raft_safety_and_liveness_at_kraft_version_1() {
    kraftwerk_sim::run_seeds_with::<RaftWrites>(60, SimOptions::with_kraft_version_1);
}

/// A static quorum upgraded to kraft.version 1 (static → dynamic, Kafka 4.1+) while crashes,
/// partitions, stalls and forged RPCs go on: the upgrade commits once the faults stop, no
/// committed write is lost across it, and every node ends with the static voters keyed by
/// their own directory ids.
#[test]
fn raft_safety_and_liveness_through_a_kraft_version_upgrade() {
    kraftwerk_sim::run_seeds_with::<RaftWrites>(40, SimOptions::with_kraft_version_upgrade);
}

/// Membership changes of a dynamic quorum (KIP-853) under the same faults: spare nodes
/// formatted with `--no-initial-controllers` are added, voters are removed (the leader too,
/// case C11), and a voter's disk is replaced (removed by its old directory id, added back by its
/// new one). At most one uncommitted voter change is ever in a log, only a voter of its own
/// voter set leads, no committed write is lost, every request is answered, and a replacement in
/// progress completes once the faults stop.
#[test]
fn raft_safety_and_liveness_through_membership_changes() {
    kraftwerk_sim::run_seeds_with::<RaftWrites>(40, SimOptions::with_membership_changes);
}

/// Seeds 208 and 547 of the test above (329 and 487 until held fetches changed the runs): a
/// leader's own removal reached only it and an observer, then a voter's disk died, and no replica can be elected any more under the
/// KIP-853 rules (`kraftwerk_sim::membership::unelectable`). They must pass, and by that
/// exemption alone, not by a run that happened to recover. (If the simulation's use of the
/// seed changes they no longer reach that state: find new ones with `SIM_SEEDS`.)
#[test]
fn membership_changes_do_not_demand_liveness_of_an_unelectable_quorum() {
    for seed in [208, 547] {
        let mut options = SimOptions::for_seed(seed);
        SimOptions::with_membership_changes(&mut options);
        let mut cluster = Cluster::<RaftWrites>::new(seed, options);
        let report = cluster
            .run()
            .unwrap_or_else(|v| panic!("seed {seed} failed:\n{}", v.0));
        let stats = report.membership.expect("membership changes ran");
        assert_eq!(
            stats.unelectable_after_disk_loss, 1,
            "seed {seed} passed without reaching the unelectable state: {stats:?}"
        );
    }
}

/// Auto-join (`controller.quorum.auto.join.enable`, Kafka 4.2) under the same faults: every
/// node runs with it, spares formatted with `--no-initial-controllers` join by themselves
/// (AddRaftVoter sent by their cores, served by the leader as the driver serves it), and a
/// voter whose disk is replaced removes its old directory id and adds its new one by itself.
/// The membership invariants hold throughout, every request a node served is answered, and
/// once the faults stop the committed voter set comes to hold every node with its current
/// directory id within the bound of `auto_join::liveness_bound_ms`.
#[test]
fn raft_safety_and_liveness_with_auto_join() {
    kraftwerk_sim::run_seeds_with::<RaftWrites>(40, SimOptions::with_auto_join);
}
