//! `GET /metrics` in the Prometheus text format (version 0.0.4), on `kraftwerk.metrics.listener`:
//! the node's Raft state, offsets, snapshots, elections and the leader's view of each replica's
//! lag — what an operator watches during a failover.

use std::convert::Infallible;
use std::fmt::{Display, Write as _};
use std::net::SocketAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use kraftwerk_node::{NodeStatus, ReplicaLag};
use kraftwerk_raft::RoleKind;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::{info, warn};

/// Renders the status as Prometheus text. `now_ms` is wall-clock ms (the node clock).
pub fn render(node_id: i32, status: &NodeStatus, now_ms: u64) -> String {
    let mut out = String::with_capacity(4096);
    write_offset_gauges(&mut out, node_id, status);
    write_snapshot_gauges(&mut out, status);
    write_election_gauges(&mut out, status);
    write_counters(&mut out, status);
    write_raft_state(&mut out, status.role);
    if !status.replicas.is_empty() {
        write_replica_gauges(&mut out, &status.replicas, now_ms);
    }
    out
}

/// A gauge without labels, with its HELP and TYPE lines.
fn gauge(out: &mut String, name: &str, help: &str, value: i64) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
    );
}

/// A counter without labels, with its HELP and TYPE lines.
fn counter(out: &mut String, name: &str, help: &str, value: u64) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
    );
}

/// Node id, leader, epoch, offsets, and whether this node is the active controller.
fn write_offset_gauges(out: &mut String, node_id: i32, status: &NodeStatus) {
    gauge(
        out,
        "kraftwerk_node_id",
        "This node's node.id.",
        node_id as i64,
    );
    gauge(
        out,
        "kraftwerk_raft_leader_id",
        "Current leader id, -1 if unknown.",
        status.leader.leader_id.map_or(-1, i64::from),
    );
    gauge(
        out,
        "kraftwerk_raft_epoch",
        "Current quorum epoch.",
        status.leader.epoch as i64,
    );
    gauge(
        out,
        "kraftwerk_raft_high_watermark",
        "High watermark (exclusive offset), -1 if unknown.",
        status.high_watermark.unwrap_or(-1),
    );
    gauge(
        out,
        "kraftwerk_raft_log_end_offset",
        "Log end offset.",
        status.log_end_offset,
    );
    gauge(
        out,
        "kraftwerk_raft_log_start_offset",
        "Log start offset.",
        status.log_start_offset,
    );
    gauge(
        out,
        "kraftwerk_controller_last_applied_offset",
        "Offset of the last committed record replayed into the controller's image.",
        status.replayed_end_offset - 1,
    );
    gauge(
        out,
        "kraftwerk_controller_active",
        "1 if this node is the active controller.",
        i64::from(status.active),
    );
}

/// Snapshots on disk and the cost of the last one written and loaded.
fn write_snapshot_gauges(out: &mut String, status: &NodeStatus) {
    gauge(
        out,
        "kraftwerk_snapshot_count",
        "Complete snapshots on disk.",
        status.snapshot_count as i64,
    );
    gauge(
        out,
        "kraftwerk_snapshot_latest_end_offset",
        "End offset (exclusive) of the latest snapshot, -1 if none.",
        status.latest_snapshot.map_or(-1, |s| s.offset),
    );
    gauge(
        out,
        "kraftwerk_snapshot_latest_epoch",
        "Epoch of the latest snapshot, -1 if none.",
        status.latest_snapshot.map_or(-1, |s| s.epoch as i64),
    );
    gauge(
        out,
        "kraftwerk_snapshot_last_size_bytes",
        "Size of the last snapshot this node wrote, bytes.",
        status.stats.last_snapshot_bytes as i64,
    );
    gauge(
        out,
        "kraftwerk_snapshot_last_write_ms",
        "Time to write the last snapshot, ms.",
        status.stats.last_snapshot_write_ms as i64,
    );
    gauge(
        out,
        "kraftwerk_snapshot_last_load_ms",
        "Time to load the last loaded snapshot, ms.",
        status.stats.last_snapshot_load_ms as i64,
    );
}

/// How long the last election took, and the first commit after it.
fn write_election_gauges(out: &mut String, status: &NodeStatus) {
    gauge(
        out,
        "kraftwerk_raft_last_election_latency_ms",
        "Time from losing the leader (or starting an election) to knowing the next one, ms; -1 if none yet.",
        status.raft.last_election_latency_ms.map_or(-1, |v| v as i64),
    );
    gauge(
        out,
        "kraftwerk_raft_last_time_to_first_commit_ms",
        "Time from winning the last election to the first commit in that epoch, ms; -1 if none yet.",
        status.raft.last_time_to_first_commit_ms.map_or(-1, |v| v as i64),
    );
}

/// Snapshots, elections and activations since the node started.
fn write_counters(out: &mut String, status: &NodeStatus) {
    counter(
        out,
        "kraftwerk_snapshots_written_total",
        "Snapshots this node wrote.",
        status.stats.snapshots_written,
    );
    counter(
        out,
        "kraftwerk_snapshots_loaded_total",
        "Snapshots loaded at start or fetched from the leader.",
        status.stats.snapshots_loaded,
    );
    counter(
        out,
        "kraftwerk_raft_prospective_rounds_total",
        "Pre-vote rounds started (KIP-996).",
        status.raft.prospective_rounds,
    );
    counter(
        out,
        "kraftwerk_raft_elections_started_total",
        "Elections started (Candidate).",
        status.raft.elections_started,
    );
    counter(
        out,
        "kraftwerk_raft_elections_won_total",
        "Epochs led.",
        status.raft.elections_won,
    );
    counter(
        out,
        "kraftwerk_controller_activations_total",
        "Times this node became the active controller.",
        status.stats.activations,
    );
}

/// `kraftwerk_raft_state`: 1 for the current role, 0 for the others.
fn write_raft_state(out: &mut String, current: RoleKind) {
    let _ = writeln!(out, "# HELP kraftwerk_raft_state 1 for the current Raft role.\n# TYPE kraftwerk_raft_state gauge");
    for role in [
        RoleKind::Unattached,
        RoleKind::Prospective,
        RoleKind::Candidate,
        RoleKind::Leader,
        RoleKind::Follower,
        RoleKind::Resigned,
    ] {
        let _ = writeln!(
            out,
            "kraftwerk_raft_state{{state=\"{role}\"}} {}",
            i64::from(current == role)
        );
    }
}

/// The leader's view of each replica: lag, and the ages of its last Fetch and last catch-up.
fn write_replica_gauges(out: &mut String, replicas: &[ReplicaLag], now_ms: u64) {
    write_replica_gauge(
        out,
        "kraftwerk_raft_replica_lag_offsets",
        "Leader log end offset minus the replica's (leader only).",
        replicas,
        |r| r.lag_offsets,
    );
    write_replica_gauge(
        out,
        "kraftwerk_raft_replica_fetch_age_ms",
        "Time since the replica's last Fetch (leader only).",
        replicas,
        |r| r.last_fetch_ms.map(|t| now_ms.saturating_sub(t)),
    );
    write_replica_gauge(
        out,
        "kraftwerk_raft_replica_caught_up_age_ms",
        "Time since the replica last had the whole log (leader only).",
        replicas,
        |r| r.last_caught_up_ms.map(|t| now_ms.saturating_sub(t)),
    );
}

/// A gauge labelled by replica and kind, with a sample for each replica that has a value.
fn write_replica_gauge<T: Display>(
    out: &mut String,
    name: &str,
    help: &str,
    replicas: &[ReplicaLag],
    value: impl Fn(&ReplicaLag) -> Option<T>,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
    for r in replicas {
        if let Some(value) = value(r) {
            let _ = writeln!(
                out,
                "{name}{{replica=\"{}\",kind=\"{}\"}} {value}",
                r.id,
                kind(r.is_voter)
            );
        }
    }
}

fn kind(is_voter: bool) -> &'static str {
    if is_voter {
        "voter"
    } else {
        "observer"
    }
}

fn wall_clock_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Serves `/metrics` on `addr` until the process ends. Errors binding are returned; errors on
/// one connection are logged.
pub async fn serve(
    addr: SocketAddr,
    node_id: i32,
    status: watch::Receiver<NodeStatus>,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    info!(%local, "metrics endpoint listening (GET /metrics)");
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let status = status.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let status = status.clone();
                    async move {
                        let response = if request.uri().path() == "/metrics" {
                            let text = render(node_id, &status.borrow(), wall_clock_ms());
                            Response::builder()
                                .header("content-type", "text/plain; version=0.0.4")
                                .body(Full::new(Bytes::from(text)))
                        } else {
                            Response::builder()
                                .status(StatusCode::NOT_FOUND)
                                .body(Full::new(Bytes::from_static(b"not found\n")))
                        };
                        Ok::<_, Infallible>(response.expect("static response parts are valid"))
                    }
                });
                if let Err(e) = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    warn!(error = %e, "metrics connection failed");
                }
            });
        }
    });
    Ok(local)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kraftwerk_node::{NodeStats, ReplicaLag};
    use kraftwerk_raft::{LeaderAndEpoch, OffsetAndEpoch, RaftMetrics};

    fn status() -> NodeStatus {
        NodeStatus {
            role: RoleKind::Leader,
            leader: LeaderAndEpoch {
                leader_id: Some(2),
                epoch: 7,
            },
            high_watermark: Some(120),
            log_end_offset: 121,
            replayed_end_offset: 120,
            active: true,
            finalized_features: vec![("metadata.version".into(), 27)],
            caught_up: true,
            log_start_offset: 100,
            snapshot_count: 2,
            latest_snapshot: Some(OffsetAndEpoch::new(100, 6)),
            raft: RaftMetrics {
                elections_won: 3,
                last_election_latency_ms: Some(412),
                last_time_to_first_commit_ms: Some(9),
                ..Default::default()
            },
            stats: NodeStats {
                snapshots_written: 2,
                last_snapshot_bytes: 4096,
                ..Default::default()
            },
            replicas: vec![ReplicaLag {
                id: 3,
                is_voter: true,
                log_end_offset: Some(118),
                lag_offsets: Some(3),
                last_fetch_ms: Some(9_990),
                last_caught_up_ms: Some(9_000),
            }],
        }
    }

    #[test]
    fn renders_the_failover_metrics() {
        let text = render(2, &status(), 10_000);
        for line in [
            "kraftwerk_raft_leader_id 2",
            "kraftwerk_raft_epoch 7",
            "kraftwerk_raft_high_watermark 120",
            "kraftwerk_controller_last_applied_offset 119",
            "kraftwerk_snapshot_latest_end_offset 100",
            "kraftwerk_raft_last_election_latency_ms 412",
            "kraftwerk_raft_state{state=\"Leader\"} 1",
            "kraftwerk_raft_state{state=\"Follower\"} 0",
            "kraftwerk_raft_replica_lag_offsets{replica=\"3\",kind=\"voter\"} 3",
            "kraftwerk_raft_replica_fetch_age_ms{replica=\"3\",kind=\"voter\"} 10",
            "kraftwerk_raft_elections_won_total 3",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing `{line}` in\n{text}"
            );
        }
        // Every sample line is `name{labels} value` with a numeric value.
        for l in text.lines().filter(|l| !l.starts_with('#')) {
            let value = l.rsplit(' ').next().unwrap();
            assert!(value.parse::<i64>().is_ok(), "bad sample {l}");
        }
    }
}
