//! The `/metrics` exposition of an active controller: the JMX exporter's names, TYPE lines,
//! labels and the values the node's state gives them.

mod common;

fn has_line(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "missing `{line}` in\n{text}"
    );
}

fn value_of(text: &str, sample: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.rsplit_once(' ').is_some_and(|(name, _)| name == sample))
        .unwrap_or_else(|| panic!("no sample {sample} in\n{text}"));
    line.rsplit_once(' ').unwrap().1.parse().unwrap()
}

#[test]
fn types_follow_the_jmx_exporter_rules() {
    let text = common::exposition();
    for line in [
        // `<>Value` of a Yammer gauge: GAUGE.
        "# TYPE kafka_controller_kafkacontroller_activecontrollercount gauge",
        "# TYPE kafka_controller_kafkacontroller_timesincelastheartbeatreceivedms gauge",
        // raft-metrics `-max`: COUNTER, `_total` appended by client_java 1.x.
        "# TYPE kafka_server_raftmetrics_commit_latency_max_total counter",
        "# TYPE kafka_server_raftmetrics_election_latency_max_total counter",
        "# TYPE kafka_server_raftmetrics_commit_latency_avg gauge",
        // `current-state: S`: UNTYPED with the state as a label.
        "# TYPE kafka_server_raftmetrics_current_state untyped",
        // A histogram's `<>Count` (COUNTER) and `<>NthPercentile` (GAUGE + quantile label).
        "# TYPE kafka_controller_controllereventmanager_eventqueuetimems_count_total counter",
        "# TYPE kafka_controller_controllereventmanager_eventqueuetimems gauge",
        // A meter's `<>Count` of `…PerSec`: COUNTER `…_total`.
        "# TYPE kafka_controller_controllerstats_uncleanleaderelections_total counter",
        "# TYPE kafka_server_raftchannelmetrics_request_total counter",
        "# TYPE process_cpu_seconds_total counter",
        "# TYPE process_resident_memory_bytes gauge",
        "# TYPE kraftwerk_build_info gauge",
    ] {
        has_line(&text, line);
    }
}

#[test]
fn values_follow_the_node_state() {
    let text = common::exposition();
    for line in [
        "kafka_controller_kafkacontroller_activecontrollercount 1",
        "kafka_controller_kafkacontroller_activebrokercount 1",
        "kafka_controller_kafkacontroller_fencedbrokercount 2",
        "kafka_controller_kafkacontroller_globaltopiccount 4",
        "kafka_controller_kafkacontroller_globalpartitioncount 12",
        "kafka_controller_kafkacontroller_offlinepartitionscount 3",
        "kafka_controller_kafkacontroller_preferredreplicaimbalancecount 5",
        "kafka_controller_kafkacontroller_metadataerrorcount 1",
        "kafka_controller_kafkacontroller_lastcommittedrecordoffset 119",
        "kafka_controller_kafkacontroller_lastappliedrecordoffset 120",
        "kafka_controller_kafkacontroller_lastappliedrecordlagms 2000",
        "kafka_controller_kafkacontroller_newactivecontrollerscount 3",
        "kafka_controller_kafkacontroller_eventqueueoperationsstartedcount 4",
        "kafka_controller_kafkacontroller_brokerregistrationstate{broker=\"10\"} 30",
        "kafka_controller_kafkacontroller_brokerregistrationstate{broker=\"11\"} 10",
        // Capped at the session timeout; no heartbeat seen counts as the whole timeout.
        "kafka_controller_kafkacontroller_timesincelastheartbeatreceivedms{broker=\"10\"} 1500",
        "kafka_controller_kafkacontroller_timesincelastheartbeatreceivedms{broker=\"11\"} 9000",
        "kafka_controller_kafkacontroller_timesincelastheartbeatreceivedms{broker=\"12\"} 9000",
        "kafka_server_raftmetrics_current_state{current_state=\"leader\"} 1",
        "kafka_server_raftmetrics_current_leader 1",
        "kafka_server_raftmetrics_current_vote 1",
        "kafka_server_raftmetrics_current_epoch 7",
        "kafka_server_raftmetrics_high_watermark 120",
        "kafka_server_raftmetrics_log_end_offset 121",
        "kafka_server_raftmetrics_log_end_epoch 7",
        "kafka_server_raftmetrics_number_of_voters 3",
        "kafka_server_raftmetrics_number_of_observers 1",
        "kafka_server_raftmetrics_uncommitted_voter_change 0",
        "kafka_server_raftmetrics_commit_latency_avg 8",
        "kafka_server_raftmetrics_commit_latency_max_total 12",
        "kafka_server_raftmetrics_election_latency_max_total 350",
        // 300 records within one 30 s window.
        "kafka_server_raftmetrics_append_records_rate 10",
        "kafka_server_raftmetrics_poll_idle_ratio_avg 0.9",
        "kafka_controller_controllereventmanager_eventqueuetimems_count_total 4",
        "kafka_controller_controllereventmanager_eventqueuetimems{quantile=\"0.999\"} 40",
        "kafka_server_raftchannelmetrics_request_total 50",
        "kafka_server_raftchannelmetrics_response_total 48",
        "kraftwerk_raft_replica_lag_offsets{replica=\"3\",kind=\"voter\"} 3",
        "kraftwerk_snapshot_latest_end_offset 100",
        concat!(
            "kraftwerk_build_info{version=\"",
            env!("CARGO_PKG_VERSION"),
            "\"} 1"
        ),
    ] {
        has_line(&text, line);
    }
    // No follower fetched as this node leads: no samples, a rate of 0 as Kafka's.
    assert_eq!(
        value_of(&text, "kafka_server_raftmetrics_fetch_records_rate"),
        0.0
    );
    assert!(value_of(&text, "process_start_time_seconds") > 1.0e9);
    assert!(value_of(&text, "process_resident_memory_bytes") > 0.0);
    assert!(value_of(&text, "process_open_fds") > 0.0);
}

#[test]
fn a_follower_has_no_leader_only_metrics() {
    let status = common::follower_status();
    let text =
        kraftwerk_server::metrics::render(3, &status, Default::default(), common::NOW_MS).unwrap();
    has_line(
        &text,
        "kafka_server_raftmetrics_current_state{current_state=\"follower\"} 1",
    );
    has_line(&text, "kafka_server_raftmetrics_current_vote -1");
    has_line(
        &text,
        "kafka_controller_kafkacontroller_activecontrollercount 0",
    );
    // A standby applies committed records only.
    has_line(
        &text,
        "kafka_controller_kafkacontroller_lastappliedrecordoffset 119",
    );
    let names = common::sample_names(&text);
    for leader_only in [
        "kafka_server_raftmetrics_number_of_observers",
        "kafka_server_raftmetrics_uncommitted_voter_change",
        "kafka_controller_kafkacontroller_timesincelastheartbeatreceivedms",
        "kraftwerk_raft_replica_lag_offsets",
    ] {
        assert!(!names.contains(leader_only), "{leader_only} on a follower");
    }
    // Registration states come from the image: every controller has them.
    assert!(names.contains("kafka_controller_kafkacontroller_brokerregistrationstate"));
}
