//! kraftwerk's own metrics, for what the Java controller has no metric of: snapshots, the
//! log start, pre-vote and election counts, the time to first commit after an election, and
//! the leader's view of each replica's lag. Durations are in seconds, as Prometheus names
//! them.

use kraftwerk_node::{NodeStatus, ReplicaLag};
use prometheus::proto::MetricFamily;

use super::families::{counter, gauge, labelled_gauge};

/// Every kraftwerk-only family for `status` at wall-clock `now_ms`.
pub fn families(node_id: i32, s: &NodeStatus, now_ms: u64) -> Vec<MetricFamily> {
    let mut out = vec![
        gauge("kraftwerk_node_id", "This node's node.id.", f64::from(node_id)),
        gauge(
            "kraftwerk_raft_log_start_offset",
            "Log start offset.",
            s.log_start_offset as f64,
        ),
        gauge(
            "kraftwerk_snapshots_on_disk",
            "Complete snapshots on disk.",
            s.snapshot_count as f64,
        ),
        gauge(
            "kraftwerk_snapshot_latest_end_offset",
            "End offset (exclusive) of the latest snapshot, -1 if none.",
            s.latest_snapshot.map_or(-1.0, |v| v.offset as f64),
        ),
        gauge(
            "kraftwerk_snapshot_latest_epoch",
            "Epoch of the latest snapshot, -1 if none.",
            s.latest_snapshot.map_or(-1.0, |v| f64::from(v.epoch)),
        ),
        gauge(
            "kraftwerk_snapshot_last_size_bytes",
            "Size of the last snapshot this node wrote, bytes.",
            s.stats.last_snapshot_bytes as f64,
        ),
        gauge(
            "kraftwerk_snapshot_last_write_seconds",
            "Time to write the last snapshot, seconds.",
            seconds(s.stats.last_snapshot_write_ms),
        ),
        gauge(
            "kraftwerk_snapshot_last_load_seconds",
            "Time to load the last loaded snapshot, seconds.",
            seconds(s.stats.last_snapshot_load_ms),
        ),
        gauge(
            "kraftwerk_raft_last_time_to_first_commit_seconds",
            "Time from winning the last election to the first commit in that epoch, seconds; -1 if none yet.",
            s.raft.last_time_to_first_commit_ms.map_or(-1.0, seconds),
        ),
        counter(
            "kraftwerk_snapshots_written_total",
            "Snapshots this node wrote.",
            s.stats.snapshots_written as f64,
        ),
        counter(
            "kraftwerk_snapshots_loaded_total",
            "Snapshots loaded at start or fetched from the leader.",
            s.stats.snapshots_loaded as f64,
        ),
        counter(
            "kraftwerk_raft_prospective_rounds_total",
            "Pre-vote rounds started (KIP-996).",
            s.raft.prospective_rounds as f64,
        ),
        counter(
            "kraftwerk_raft_elections_started_total",
            "Elections started (Candidate).",
            s.raft.elections_started as f64,
        ),
        counter(
            "kraftwerk_raft_elections_won_total",
            "Epochs led.",
            s.raft.elections_won as f64,
        ),
        counter(
            "kraftwerk_controller_activations_total",
            "Times this node became the active controller.",
            s.stats.activations as f64,
        ),
    ];
    replica_gauges(&mut out, &s.replicas, now_ms);
    out
}

/// The leader's view of each replica: lag, and the ages of its last Fetch and last catch-up.
fn replica_gauges(out: &mut Vec<MetricFamily>, replicas: &[ReplicaLag], now_ms: u64) {
    let per_replica = |value: &dyn Fn(&ReplicaLag) -> Option<f64>| {
        replicas
            .iter()
            .filter_map(|r| {
                let kind = if r.is_voter { "voter" } else { "observer" };
                value(r).map(|v| {
                    (
                        vec![("replica", r.id.to_string()), ("kind", kind.to_owned())],
                        v,
                    )
                })
            })
            .collect::<Vec<_>>()
    };
    out.push(labelled_gauge(
        "kraftwerk_raft_replica_lag_offsets",
        "Leader log end offset minus the replica's (leader only).",
        per_replica(&|r| r.lag_offsets.map(|v| v as f64)),
    ));
    out.push(labelled_gauge(
        "kraftwerk_raft_replica_fetch_age_seconds",
        "Time since the replica's last Fetch, seconds (leader only).",
        per_replica(&|r| r.last_fetch_ms.map(|t| seconds(now_ms.saturating_sub(t)))),
    ));
    out.push(labelled_gauge(
        "kraftwerk_raft_replica_caught_up_age_seconds",
        "Time since the replica last had the whole log, seconds (leader only).",
        per_replica(&|r| {
            r.last_caught_up_ms
                .map(|t| seconds(now_ms.saturating_sub(t)))
        }),
    ));
}

/// ms → seconds: Prometheus names carry base units (promtool's lint refuses `_ms`); the
/// Kafka-named metrics keep Kafka's ms, as the JMX exporter passes them through.
fn seconds(ms: u64) -> f64 {
    ms as f64 / 1000.0
}
