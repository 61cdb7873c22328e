//! Helpers for tests, examples and benchmarks (the `testing` feature; this crate's own unit
//! tests always have it): log configurations, batch listings in the form the Java programs of
//! `testdata/` print, the `quorum-state` files Kafka 4.1.2 wrote, and the location of Kafka's
//! jars for the Java interop tests of this crate and the crates above it.

use std::path::PathBuf;

use kraftwerk_protocol::kafka_uuid::kafka_uuid_from_string;
use kraftwerk_raft::ElectionState;
use kraftwerk_records::batch::{batches, verify_crc};

use crate::LogConfig;

/// Kafka's defaults with `segment_bytes` segments, allowed below 8 MiB
/// (`metadata.log.segment.min.bytes` lowered, as Kafka's own tests do).
pub fn small_segments(segment_bytes: u64) -> LogConfig {
    LogConfig {
        segment_bytes,
        segment_min_bytes: 1,
        ..LogConfig::default()
    }
}

/// `base-last@epoch[c]` for every batch (`c`: control batch), space-separated: the listing
/// `testdata/JavaMetadataLog.java read` prints. Panics on a malformed batch or a bad CRC.
pub fn describe_batches(bytes: &[u8]) -> String {
    let mut out = Vec::new();
    for item in batches(bytes) {
        let (header, batch) = item.unwrap();
        verify_crc(batch).unwrap();
        let control = if header.is_control() { "c" } else { "" };
        out.push(format!(
            "{}-{}@{}{control}",
            header.base_offset,
            header.last_offset(),
            header.partition_leader_epoch
        ));
    }
    out.join(" ")
}

/// An election state; `dir` is a voted directory id in Kafka's base64url text form.
pub fn election_state(
    epoch: i32,
    leader_id: Option<i32>,
    voted_id: Option<i32>,
    dir: Option<&str>,
    voters: &[i32],
) -> ElectionState {
    ElectionState {
        epoch,
        leader_id,
        voted_id,
        voted_directory_id: dir.map(|d| kafka_uuid_from_string(d).unwrap()),
        voters: voters.to_vec(),
    }
}

/// `(kraft.version, state, exact bytes Java writes)`: produced by
/// `FileQuorumStateStore.writeElectionState` of `kafka-raft-4.1.2.jar`
/// (`testdata/QuorumStateCheck.java`).
pub fn java_quorum_state_cases() -> Vec<(u8, ElectionState, &'static str)> {
    let state = election_state;
    vec![
        (
            0,
            state(5, None, None, None, &[1, 2, 3]),
            r#"{"clusterId":"","leaderId":-1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}"#,
        ),
        (
            0,
            state(6, None, Some(2), None, &[1, 2, 3]),
            r#"{"clusterId":"","leaderId":-1,"leaderEpoch":6,"votedId":2,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}"#,
        ),
        (
            0,
            state(7, Some(3), None, None, &[1, 2, 3]),
            r#"{"clusterId":"","leaderId":3,"leaderEpoch":7,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}"#,
        ),
        (
            0,
            state(8, Some(3), Some(3), None, &[1, 2, 3]),
            r#"{"clusterId":"","leaderId":3,"leaderEpoch":8,"votedId":3,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}"#,
        ),
        (
            1,
            state(5, None, None, None, &[]),
            r#"{"leaderId":-1,"leaderEpoch":5,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#,
        ),
        (
            1,
            state(6, None, Some(2), Some("J8aAPcfLQt2bqs1JT_rMgQ"), &[]),
            r#"{"leaderId":-1,"leaderEpoch":6,"votedId":2,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}"#,
        ),
        (
            1,
            state(6, None, Some(2), None, &[]),
            r#"{"leaderId":-1,"leaderEpoch":6,"votedId":2,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#,
        ),
        (
            1,
            state(9, Some(2), Some(2), Some("J8aAPcfLQt2bqs1JT_rMgQ"), &[]),
            r#"{"leaderId":2,"leaderEpoch":9,"votedId":2,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}"#,
        ),
    ]
}

/// The variable naming the directory of Kafka's jars for the Java interop tests (compat/run
/// sets it to what `scripts/kafka-fetch <version>` prints).
pub const KAFKA_LIBS_ENV: &str = "KRAFTWERK_KAFKA_LIBS";

/// The `-cp` argument for Kafka's jars in `$KRAFTWERK_KAFKA_LIBS` (`<dir>/*`).
///
/// Panics, so that the test fails rather than passes, when the variable is unset or the
/// directory holds no Kafka jar: these tests are `#[ignore]`d for plain `cargo test` and run by
/// `compat/run`, which always provides the jars.
pub fn kafka_classpath() -> String {
    let Some(libs) = std::env::var_os(KAFKA_LIBS_ENV).map(PathBuf::from) else {
        panic!(
            "{KAFKA_LIBS_ENV} is not set: this test runs Kafka's Java classes; compat/run runs it \
             with {KAFKA_LIBS_ENV} set to the jars of scripts/kafka-fetch"
        );
    };
    let has_kafka_jar = std::fs::read_dir(&libs)
        .map(|entries| {
            entries.filter_map(Result::ok).any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with("kafka_") && name.ends_with(".jar")
            })
        })
        .unwrap_or(false);
    assert!(
        has_kafka_jar,
        "{KAFKA_LIBS_ENV}={}: no Kafka jar (kafka_*.jar) there; run scripts/kafka-fetch",
        libs.display()
    );
    format!("{}/*", libs.display())
}
