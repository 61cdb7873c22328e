//! Every metric name Strimzi's KRaft dashboard, the controller panels of its Kafka dashboard
//! and its Kafka alert rules query (files copied in `tests/strimzi/`, see its README) is in
//! kraftwerk's `/metrics` — or listed below as deliberately not served, with the reason.

mod common;

use std::collections::BTreeSet;

/// Names those files use that kraftwerk does not serve, and why.
const NOT_SERVED: &[(&str, &str)] = &[
    ("jvm_memory_used_bytes", "JVM heap and non-heap pools: kraftwerk is no JVM; process_resident_memory_bytes is served"),
    ("jvm_gc_collection_seconds_sum", "JVM garbage collector time: kraftwerk has no garbage collector"),
    ("jvm_gc_collection_seconds_count", "JVM garbage collections: kraftwerk has no garbage collector"),
    ("jvm_threads_current", "JVM threads: kraftwerk is no JVM; process_threads is served"),
    ("container_memory_usage_bytes", "cAdvisor's (the kubelet's) per-container metric, not the process's"),
    ("container_cpu_usage_seconds_total", "cAdvisor's (the kubelet's) per-container metric, not the process's"),
    ("container_last_seen", "cAdvisor's (the kubelet's) per-container metric, not the process's"),
    ("kubelet_volume_stats_available_bytes", "the kubelet's volume metric, not the process's"),
    ("kubelet_volume_stats_capacity_bytes", "the kubelet's volume metric, not the process's"),
    ("kafka_server_replicamanager_underreplicatedpartitions", "broker metric: a controller hosts no partition replicas"),
    ("kafka_server_replicamanager_underminisrpartitioncount", "broker metric: a controller hosts no partition replicas"),
    ("kafka_log_logmanager_offlinelogdirectorycount", "broker metric: a controller has no partition log directories"),
    ("kafka_server_raftchannelmetrics_incoming_byte_total", "not yet: bytes of the Raft client channel are counted inside the peer client (crates/server/src/net/peer), which does not count them; request_total and response_total are served"),
    ("kafka_server_raftchannelmetrics_outgoing_byte_total", "not yet: bytes of the Raft client channel are counted inside the peer client (crates/server/src/net/peer), which does not count them; request_total and response_total are served"),
];

/// Prefixes of the names these files query that come from the scraped process or from the
/// kubelet beside it (PromQL functions, labels and Grafana variables never start so).
const PREFIXES: &[&str] = &["kafka_", "process_", "jvm_", "container_", "kubelet_"];

fn read(name: &str) -> String {
    let path = format!("{}/tests/strimzi/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every maximal `[a-z0-9_]` word of `text` that starts with one of `prefixes` (the words of a
/// PromQL expression; metric names in these files are lower case, as the exporter's
/// `lowercaseOutputName` makes them).
fn metric_names(text: &str, prefixes: &[&str]) -> BTreeSet<String> {
    let is_word = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| is_word(c)) {
        let word_and_more = &rest[start..];
        let end = word_and_more
            .find(|c: char| !is_word(c))
            .unwrap_or(word_and_more.len());
        let word = &word_and_more[..end];
        // A word glued to an upper-case letter or digit before it is part of another token.
        let glued = rest[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric());
        if !glued && prefixes.iter().any(|p| word.starts_with(p)) {
            names.insert(word.to_owned());
        }
        rest = &word_and_more[end..];
    }
    names
}

/// The names the copied files use: all of the KRaft dashboard's and the alert rules', and
/// the controller ones of the Kafka dashboard (its other panels show broker metrics).
fn used_names() -> BTreeSet<String> {
    let mut names = metric_names(&read("strimzi-kraft.json"), PREFIXES);
    names.extend(metric_names(&read("prometheus-kafka-rules.yaml"), PREFIXES));
    names.extend(metric_names(
        &read("strimzi-kafka.json"),
        &["kafka_controller_", "kafka_server_raft"],
    ));
    names
}

#[test]
fn the_extraction_finds_the_known_names() {
    // Guards the extraction itself: names known to be in the copied files.
    let names = used_names();
    for name in [
        "kafka_controller_kafkacontroller_activecontrollercount",
        "kafka_controller_kafkacontroller_offlinepartitionscount",
        "kafka_server_raftmetrics_current_state",
        "kafka_server_raftmetrics_commit_latency_avg",
        "process_open_fds",
        "jvm_threads_current",
    ] {
        assert!(names.contains(name), "{name} not extracted from {names:?}");
    }
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("kafka_server_replicamanager_")
                && n != "kafka_server_replicamanager_underreplicatedpartitions"
                && n != "kafka_server_replicamanager_underminisrpartitioncount"),
        "the Kafka dashboard's broker panels leaked in: {names:?}"
    );
}

#[test]
fn every_name_strimzi_queries_is_served_or_listed() {
    let served = common::sample_names(&common::exposition());
    let not_served: BTreeSet<&str> = NOT_SERVED.iter().map(|(n, _)| *n).collect();
    let used = used_names();
    let missing: Vec<&String> = used
        .iter()
        .filter(|n| !served.contains(*n) && !not_served.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "used by Strimzi's files, neither served nor listed in NOT_SERVED: {missing:?}"
    );
    // The list stays honest: nothing on it is served, and everything on it is used.
    for (name, reason) in NOT_SERVED {
        assert!(
            !served.contains(*name),
            "{name} is served but listed as not ({reason})"
        );
        assert!(
            used.contains(*name),
            "{name} is listed but no copied file uses it"
        );
    }
}
