//! Each new fault of the harness on its own, on a Raft-only cluster: the run must pass, and the
//! fault must have happened (so a fault that silently stopped being injected fails here).

use super::hostile::FORGERY_PREFIX;
use super::Cluster;
use crate::options::SimOptions;
use crate::raft_cluster::RaftWrites;

/// Seed 11's shape with every fault off; each test turns one on.
fn quiet_options() -> SimOptions {
    let mut options = SimOptions::for_seed(11);
    options.crash_interval_ms = 0;
    options.partition_interval_ms = 0;
    options.one_way_partitions = false;
    options.stall_interval_ms = 0;
    options.hostile_interval_ms = 0;
    options.clock_rates_ppm = vec![1_000_000; options.voters];
    options
}

fn run(seed: u64, options: SimOptions) -> Cluster<RaftWrites> {
    let mut cluster = Cluster::<RaftWrites>::new(seed, options);
    if let Err(v) = cluster.run() {
        panic!("{}", v.0);
    }
    cluster
}

fn trace_count(cluster: &Cluster<RaftWrites>, needle: &str) -> usize {
    cluster
        .trace()
        .iter()
        .filter(|l| l.contains(needle))
        .count()
}

#[test]
fn under_a_hostile_peer_every_forgery_is_answered_and_the_quorum_commits() {
    let mut options = quiet_options();
    options.hostile_interval_ms = 20;
    let cluster = run(11, options);
    let hostile = &cluster.sim.hostile;
    // ~2,500 over the 50 s; parked Fetches may still be waiting when the run ends.
    assert!(hostile.sent > 1_000, "{hostile:?}");
    assert!(hostile.answered * 10 >= hostile.sent * 9, "{hostile:?}");
    assert_eq!(trace_count(&cluster, FORGERY_PREFIX) as u64, hostile.sent);
}

#[test]
fn a_stalled_node_handles_its_backlog_when_it_resumes() {
    let mut options = quiet_options();
    options.stall_interval_ms = 1_000;
    let cluster = run(11, options);
    let backlogs: Vec<&String> = cluster
        .trace()
        .iter()
        .filter(|l| l.contains("resumes:") && !l.contains("resumes: 0 queued"))
        .collect();
    assert!(backlogs.len() >= 5, "{backlogs:?}");
}

#[test]
fn one_way_partitions_come_and_go() {
    let mut options = quiet_options();
    options.partition_interval_ms = 1_000;
    options.one_way_partitions = true;
    let cluster = run(11, options);
    assert!(trace_count(&cluster, "(one way)") >= 3);
}

#[test]
fn nodes_with_fast_and_slow_clocks_elect_and_commit() {
    let mut options = quiet_options();
    options.clock_rates_ppm = (0..options.voters)
        .map(|i| if i % 2 == 0 { 900_000 } else { 1_100_000 })
        .collect();
    let cluster = run(11, options);
    let sim = &cluster.sim;
    let now = sim.now_ms();
    assert_eq!(sim.node_now_ms(1), now * 9 / 10);
    assert_eq!(sim.node_now_ms(2), now * 11 / 10);
    assert!(sim.invariants.committed_end_offset() > 0);
}

/// Seed 2077 (found by `scripts/sim-soak`): candidate 5 of epoch 3 stalls with its votes on the
/// way, the others elect node 3 in epoch 5 and commit, and node 5 resumes, counts its votes and
/// leads epoch 3 for a moment without the batches epoch 5 committed. That is Raft (§5.4.1 only
/// asks leaders of later epochs for them, and the old leader can commit nothing), so the
/// leader-completeness check must only ask for batches committed in earlier epochs. The second
/// assertion keeps the seed honest: if the simulation changes and this seed no longer elects
/// a leader of an older epoch after a newer one, pick another seed.
#[test]
fn a_stalled_candidate_may_win_an_older_epoch_after_a_newer_one_committed() {
    // The settings seed 2077 had when it failed (hostile peers were denser then).
    let mut options = SimOptions::for_seed(2077);
    options.hostile_interval_ms = 212;
    let cluster = run(2077, options);
    let mut newest_leader_epoch = 0;
    let mut older_after_newer = false;
    for line in cluster.trace() {
        let Some(rest) = line.split(" is Leader in epoch ").nth(1) else {
            continue;
        };
        let epoch: i32 = rest.split(' ').next().unwrap().parse().unwrap();
        older_after_newer |= epoch < newest_leader_epoch;
        newest_leader_epoch = newest_leader_epoch.max(epoch);
    }
    assert!(older_after_newer, "seed 2077 no longer shows the case");
}
