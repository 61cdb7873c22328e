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

fn run(options: SimOptions) -> Cluster<RaftWrites> {
    let mut cluster = Cluster::<RaftWrites>::new(11, options);
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
    let cluster = run(options);
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
    let cluster = run(options);
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
    let cluster = run(options);
    assert!(trace_count(&cluster, "(one way)") >= 3);
}

#[test]
fn nodes_with_fast_and_slow_clocks_elect_and_commit() {
    let mut options = quiet_options();
    options.clock_rates_ppm = (0..options.voters)
        .map(|i| if i % 2 == 0 { 900_000 } else { 1_100_000 })
        .collect();
    let cluster = run(options);
    let sim = &cluster.sim;
    let now = sim.now_ms();
    assert_eq!(sim.node_now_ms(1), now * 9 / 10);
    assert_eq!(sim.node_now_ms(2), now * 11 / 10);
    assert!(sim.invariants.committed_end_offset() > 0);
}
