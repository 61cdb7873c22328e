//! A node status as an active controller of a three-voter quorum with brokers sees it, and
//! its `/metrics` exposition, for the exposition tests.

use kraftwerk_node::sensors::Sensors;
use kraftwerk_node::{BrokerMetrics, ImageCounts, NodeStats, NodeStatus, ReplicaLag};
use kraftwerk_raft::{LeaderAndEpoch, OffsetAndEpoch, RaftMetrics, RoleKind};
use kraftwerk_server::metrics::{render, ChannelCounts};

/// Wall-clock time of the scrape, ms.
pub const NOW_MS: u64 = 1_800_000_100_000;

/// A standby of the same quorum as [`leader_status`] (rendered as node 3): following leader 2,
/// no vote, no replica states (those are the leader's).
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn follower_status() -> NodeStatus {
    let mut status = leader_status();
    status.role = RoleKind::Follower;
    status.active = false;
    status.leader.leader_id = Some(2);
    status.voted_id = None;
    status.replicas.clear();
    status
}

/// Node 1 leading epoch 7 with two fenced and one active broker, one observer fetching.
pub fn leader_status() -> NodeStatus {
    let mut sensors = Sensors::default();
    for (i, v) in [4.0, 8.0, 12.0].into_iter().enumerate() {
        sensors
            .commit_latency_ms
            .record(v, NOW_MS - 10_000 + i as u64);
    }
    sensors.election_latency_ms.record(350.0, NOW_MS - 20_000);
    sensors.append_records.record(300.0, NOW_MS - 5_000);
    sensors.poll_idle_ms.record(900.0, NOW_MS - 1_000);
    sensors.poll_total_ms.record(1_000.0, NOW_MS - 1_000);
    for v in [1, 2, 3, 40] {
        sensors.event_queue_time_ms.update(v);
        sensors.event_processing_time_ms.update(v / 2);
    }
    NodeStatus {
        role: RoleKind::Leader,
        leader: LeaderAndEpoch {
            leader_id: Some(1),
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
            last_election_latency_ms: Some(350),
            last_time_to_first_commit_ms: Some(9),
            ..Default::default()
        },
        stats: NodeStats {
            snapshots_written: 2,
            last_snapshot_bytes: 4096,
            ..Default::default()
        },
        replicas: vec![
            ReplicaLag {
                id: 2,
                is_voter: true,
                log_end_offset: Some(121),
                lag_offsets: Some(0),
                last_fetch_ms: Some(NOW_MS - 10),
                last_caught_up_ms: Some(NOW_MS - 10),
            },
            ReplicaLag {
                id: 3,
                is_voter: true,
                log_end_offset: Some(118),
                lag_offsets: Some(3),
                last_fetch_ms: Some(NOW_MS - 250),
                last_caught_up_ms: Some(NOW_MS - 900),
            },
            ReplicaLag {
                id: 10,
                is_voter: false,
                log_end_offset: Some(120),
                lag_offsets: Some(1),
                last_fetch_ms: Some(NOW_MS - 100),
                last_caught_up_ms: Some(NOW_MS - 100),
            },
        ],
        voted_id: Some(1),
        log_end_epoch: 7,
        is_voter: true,
        voter_count: 3,
        unknown_voter_connections: 0,
        voter_hosts: vec!["127.0.0.1".into()],
        uncommitted_voter_change: false,
        image: ImageCounts {
            active_brokers: 1,
            fenced_brokers: 2,
            controlled_shutdown_brokers: 0,
            topics: 4,
            partitions: 12,
            offline_partitions: 3,
            imbalanced_partitions: 5,
        },
        brokers: vec![
            BrokerMetrics {
                id: 10,
                fenced: false,
                in_controlled_shutdown: false,
                last_contact_ms: Some(NOW_MS - 1_500),
            },
            BrokerMetrics {
                id: 11,
                fenced: true,
                in_controlled_shutdown: false,
                last_contact_ms: Some(NOW_MS - 60_000),
            },
            BrokerMetrics {
                id: 12,
                fenced: true,
                in_controlled_shutdown: false,
                last_contact_ms: None,
            },
        ],
        session_timeout_ms: 9_000,
        last_applied_timestamp_ms: (NOW_MS - 2_000) as i64,
        metadata_errors: 1,
        new_active_controllers: 3,
        events_started: 4,
        last_written_offset: 120,
        unclean_leader_elections: 0,
        elr_elections: 0,
        sensors,
        scram_credentials: Default::default(),
        delegation_tokens: Default::default(),
    }
}

/// The exposition of [`leader_status`] for node 1.
pub fn exposition() -> String {
    render(
        1,
        &leader_status(),
        ChannelCounts {
            requests: 50,
            responses: 48,
        },
        NOW_MS,
    )
    .expect("the exposition renders")
}

/// The names of the samples in `text`.
#[allow(dead_code)] // used by some of the test binaries that include this module
pub fn sample_names(text: &str) -> std::collections::BTreeSet<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            l.split(['{', ' '])
                .next()
                .expect("a sample line has a name")
                .to_owned()
        })
        .collect()
}
