//! `quorum-state` against files written and read by Kafka 4.1.2's own `FileQuorumStateStore`.
//!
//! The expected strings ([`crate::testing::java_quorum_state_cases`]) were produced by
//! `FileQuorumStateStore.writeElectionState` from `kafka-raft-4.1.2.jar`
//! (`testdata/QuorumStateCheck.java write`, run against the release jars); the same program read
//! back the files this module writes (`cargo run -p kraftwerk-log --example
//! export_quorum_state_for_java -- DIR`, then `QuorumStateCheck.java read DIR/*`) and printed the
//! same states. `compat/run` checks random states both ways.

use proptest::prelude::*;

use super::*;
use crate::testing::{election_state as state, java_quorum_state_cases as java_cases};

#[test]
fn writes_byte_for_byte_what_kafka_writes() {
    let dir = tempfile::tempdir().unwrap();
    for (kraft_version, state, java) in java_cases() {
        let mut store = FileQuorumStateStore::with_kraft_version(
            dir.path().join(QUORUM_STATE_FILE),
            kraft_version,
        );
        store.write(&state).unwrap();
        assert_eq!(
            std::fs::read_to_string(store.path()).unwrap(),
            java,
            "{state:?}"
        );
        assert!(!tmp_path(store.path()).exists(), "no .tmp left behind");
    }
}

#[test]
fn reads_what_kafka_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(QUORUM_STATE_FILE);
    for (_, state, java) in java_cases() {
        std::fs::write(&path, java).unwrap();
        assert_eq!(
            FileQuorumStateStore::new(&path).read().unwrap(),
            Some(state),
            "{java}"
        );
    }
}

#[test]
fn missing_file_reads_as_none_and_clear_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = FileQuorumStateStore::new(dir.path().join(QUORUM_STATE_FILE));
    assert_eq!(store.read().unwrap(), None);
    store.write(&state(1, None, Some(1), None, &[1])).unwrap();
    assert!(store.read().unwrap().is_some());
    store.clear().unwrap();
    assert_eq!(store.read().unwrap(), None);
}

#[test]
fn tolerates_what_kafka_tolerates() {
    // Unknown keys, keys in another order, a second line (Kafka reads the first line only), a
    // non-empty clusterId and appliedOffset in version 0.
    let cases = [
        (
            r#"{"futureKey":[1,2],"data_version":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","votedId":2,"leaderEpoch":5,"leaderId":-1}"#,
            state(5, None, Some(2), None, &[]),
        ),
        (
            "{\"leaderId\":-1,\"leaderEpoch\":5,\"votedId\":2,\"votedDirectoryId\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"data_version\":1}\ngarbage",
            state(5, None, Some(2), None, &[]),
        ),
        (
            r#"{"clusterId":"abc","leaderId":1,"leaderEpoch":5,"votedId":2,"appliedOffset":17,"currentVoters":[{"voterId":1}],"data_version":0}"#,
            state(5, Some(1), Some(2), None, &[1]),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(parse(text), Ok(expected), "{text}");
    }
}

#[test]
fn rejects_what_kafka_rejects_naming_the_problem() {
    // Each of these makes Kafka 4.1.2's reader throw; the message part we expect names the cause.
    let cases = [
        ("", "prematurely"),
        ("[1]", "not a JSON object"),
        (
            r#"{"leaderId":-1,"leaderEpoch":5,"votedId":2,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}"#,
            "data_version",
        ),
        (
            r#"{"leaderId":-1,"leaderEpoch":5,"votedId":2,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":2}"#,
            "data_version (2)",
        ),
        (
            r#"{"leaderId":-1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,"currentVoters":[],"data_version":0}"#,
            "'clusterId'",
        ),
        (
            r#"{"clusterId":"","leaderId":-1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,"data_version":0}"#,
            "'currentVoters'",
        ),
        (
            r#"{"clusterId":"","leaderId":-1,"leaderEpoch":5,"votedId":-1,"currentVoters":[],"data_version":0}"#,
            "'appliedOffset'",
        ),
        (
            r#"{"clusterId":"","leaderId":-1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,"currentVoters":null,"data_version":0}"#,
            "currentVoters",
        ),
        (
            r#"{"leaderId":-1,"leaderEpoch":5,"votedId":2,"data_version":1}"#,
            "'votedDirectoryId'",
        ),
        (
            r#"{"leaderEpoch":5,"votedId":2,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#,
            "'leaderId'",
        ),
        (
            r#"{"leaderId":"4","leaderEpoch":5,"votedId":2,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#,
            "leaderId",
        ),
        (
            r#"{"leaderId":1.5,"leaderEpoch":5,"votedId":2,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#,
            "leaderId",
        ),
        (
            r#"{"leaderId":1,"leaderEpoch":5,"votedId":2,"votedDirectoryId":"short","data_version":1}"#,
            "votedDirectoryId",
        ),
    ];
    for (text, needle) in cases {
        let err = parse(text).expect_err(text);
        assert!(
            err.contains(needle),
            "{text}: error {err:?} does not mention {needle:?}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(QUORUM_STATE_FILE);
    std::fs::write(&path, "{").unwrap();
    let err = FileQuorumStateStore::new(&path).read().unwrap_err();
    assert!(
        err.to_string().contains(QUORUM_STATE_FILE),
        "the error names the file: {err}"
    );
}

proptest! {
    #[test]
    fn every_state_round_trips(
        epoch in 0..i32::MAX,
        leader_id in proptest::option::of(0..1000i32),
        voted_id in proptest::option::of(0..1000i32),
        dir in proptest::option::of(any::<u128>().prop_filter("non-zero", |v| *v != 0)),
        voters in proptest::collection::vec(0..1000i32, 0..5),
        kraft_version in 0..=1u8,
    ) {
        let mut state = ElectionState { epoch, leader_id, voted_id, voted_directory_id: None, voters: vec![] };
        // Each data_version carries only its own fields.
        if kraft_version == 0 {
            state.voters = voters;
        } else {
            state.voted_directory_id = dir.map(Uuid::from_u128);
        }
        prop_assert_eq!(parse(&encode(&state, kraft_version)), Ok(state));
    }
}

#[test]
fn a_failed_quorum_state_write_names_the_file_and_keeps_the_last_durable_state() {
    use crate::fs::faulty::{Fault, FaultyFs, EIO, ENOSPC};
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultyFs::new();
    let path = dir.path().join(QUORUM_STATE_FILE);
    let mut store = FileQuorumStateStore::with_fs(&path, std::sync::Arc::new(fs.clone()));
    let voted = state(3, None, Some(2), None, &[1, 2, 3]);
    store.write(&voted).unwrap();

    let leader = state(4, Some(1), None, None, &[1, 2, 3]);
    for fault in [
        Fault::write("quorum-state.tmp", ENOSPC).times(1),
        Fault::sync("quorum-state.tmp", EIO).times(1),
    ] {
        fs.inject(fault);
        let err = store.write(&leader).unwrap_err().to_string();
        assert!(err.contains("quorum-state.tmp"), "{err}");
        assert_eq!(
            store.read().unwrap(),
            Some(voted.clone()),
            "the vote of epoch 3 is what is on disk"
        );
    }
}
