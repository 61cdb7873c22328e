//! Interchange with Java controllers: open a directory written by Kafka 4.1.2's
//! `KafkaMetadataLog` (`testdata/java-4.1.2`). The other way round, the example
//! `export_log_for_java` writes one of ours for Java to open (see `testdata/README.md`).

use std::fs;
use std::path::Path;

use kraftwerk_raft::testing::suite::data_batch;
use kraftwerk_raft::{OffsetAndEpoch, ReplicatedLog};

use super::small_segments;
use crate::testing::describe_batches;
use crate::{IndexRecovery, SegmentLog, LEADER_EPOCH_CHECKPOINT, METADATA_PARTITION_DIR};

fn java_fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/java-4.1.2")
        .join(METADATA_PARTITION_DIR)
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for item in fs::read_dir(from).unwrap() {
        let item = item.unwrap();
        fs::copy(item.path(), to.join(item.file_name())).unwrap();
    }
}

fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// What Java 4.1.2's `KafkaMetadataLog` printed for the fixture right after writing it.
const JAVA_BATCHES: &str =
    "0-0@1c 1-1@1 2-3@1 4-6@1 7-7@1 8-9@1 10-12@1 13-13@3c 14-15@3 16-17@3 18-19@3 20-21@3 22-23@3 24-24@4c 25-27@4";

#[test]
fn opens_a_directory_written_by_kafka_metadata_log() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join(METADATA_PARTITION_DIR);
    copy_dir(&java_fixture(), &dir);
    let java_files = file_names(&dir);
    // Leftovers a Java controller may leave; opening deletes them (src/tests/snapshots.rs
    // covers the cases in detail).
    for name in [
        "00000000000000000024-0000000003-8623456712.checkpoint.part",
        "00000000000000000007-0000000001.checkpoint.deleted",
    ] {
        fs::write(dir.join(name), b"leftover").unwrap();
    }
    let java_epochs = fs::read(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap();

    let mut log = SegmentLog::open(root.path(), small_segments(600)).unwrap();
    let report = log.recovery_report().clone();
    assert!(
        matches!(report.index, IndexRecovery::Rebuilt { .. }),
        "{report:?}"
    );
    assert_eq!(
        (report.batches_scanned, report.truncation.clone()),
        (15, None)
    );
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(28, 4));
    assert_eq!(log.start_offset(), 0);
    assert_eq!(log.snapshot_recovery().leftovers_deleted.len(), 2);
    assert!(log.snapshot_ids().is_empty());
    assert_eq!(log.segment_base_offsets(), vec![0, 7, 14, 20, 25]);
    assert_eq!(log.epoch_entries(), vec![(1, 0), (3, 13), (4, 24)]);
    // endOffsetForEpoch(-1..=6) as Java printed it for the same directory.
    let java_end_offsets = [
        (28, 4),
        (0, 0),
        (13, 1),
        (13, 1),
        (24, 3),
        (28, 4),
        (28, 4),
        (28, 4),
    ];
    for (epoch, (offset, answer_epoch)) in (-1..=6).zip(java_end_offsets) {
        assert_eq!(
            log.end_offset_for_epoch(epoch),
            OffsetAndEpoch::new(offset, answer_epoch),
            "epoch {epoch}"
        );
    }
    assert_eq!(
        describe_batches(&log.read(0, usize::MAX).unwrap()),
        JAVA_BATCHES
    );
    assert_eq!(describe_batches(&log.read(21, 1).unwrap()), "20-21@3");

    // Java's files are untouched: same names plus our index directory, same epoch checkpoint.
    let mut expected = java_files.clone();
    expected.push(crate::INDEX_DIR_NAME.to_string());
    expected.sort();
    assert_eq!(file_names(&dir), expected);
    assert_eq!(
        fs::read(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap(),
        java_epochs
    );

    // We continue the log where Java left it, and the next open trusts the index.
    log.append_as_leader(&data_batch(28, 5, 2, 9), 5).unwrap();
    log.flush().unwrap();
    drop(log);
    let log = SegmentLog::open(root.path(), small_segments(600)).unwrap();
    assert_eq!(log.recovery_report().index, IndexRecovery::Verified);
    assert_eq!(log.recovery_report().batches_scanned, 0);
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(30, 5));
    assert_eq!(
        fs::read_to_string(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap(),
        "0\n4\n1 0\n3 13\n4 24\n5 28\n"
    );
}
