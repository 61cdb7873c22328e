//! Recovery: what survives a torn or corrupt tail, and what happens to a missing, corrupt or
//! stale index. Each case asserts the exact surviving log and what the recovery report says.

use std::fs;
use std::path::Path;

use bytes::Bytes;
use kraftwerk_raft::testing::suite::{concat, data_batch};
use kraftwerk_raft::{LogError, OffsetAndEpoch, ReplicatedLog};

use super::{small_segments, TestLog};
use crate::{
    segment_file_name, IndexRecovery, LogConfig, SegmentLog, StorageError, INDEX_DIR_NAME,
};

/// Appends one leader batch at the LEO and returns it.
fn append(log: &mut TestLog, epoch: i32, records: usize, tag: u8) -> Bytes {
    let batch = data_batch(log.end_offset().offset, epoch, records, tag);
    log.append_as_leader(&batch, epoch).unwrap();
    batch
}

/// Three flushed batches: A = 0..=1 (epoch 1), B = 2..=4 (epoch 1), C = 5..=6 (epoch 2).
fn three_flushed_batches() -> (TestLog, [Bytes; 3]) {
    let mut log = TestLog::new(LogConfig::default());
    let batches = [
        append(&mut log, 1, 2, 1),
        append(&mut log, 1, 3, 2),
        append(&mut log, 2, 2, 3),
    ];
    log.flush().unwrap();
    (log, batches)
}

fn first_segment(dir: &Path) -> std::path::PathBuf {
    dir.join(segment_file_name(0))
}

fn rebuilt_reason(log: &TestLog) -> String {
    match &log.log().recovery_report().index {
        IndexRecovery::Rebuilt { reason } => reason.clone(),
        IndexRecovery::Verified => panic!(
            "expected a rebuilt index: {:?}",
            log.log().recovery_report()
        ),
    }
}

fn read_all(log: &TestLog) -> Bytes {
    log.read(0, usize::MAX).unwrap()
}

fn assert_reopens_verified(log: &mut TestLog) {
    let before = (log.end_offset(), read_all(log), log.log().epoch_entries());
    log.reopen_after(|_| {});
    let report = log.log().recovery_report();
    assert_eq!(
        (&report.index, report.batches_scanned),
        (&IndexRecovery::Verified, 0),
        "{report:?}"
    );
    assert_eq!(
        (log.end_offset(), read_all(log), log.log().epoch_entries()),
        before
    );
}

#[test]
fn segment_cut_mid_batch_loses_that_batch() {
    let (mut log, [a, b, c]) = three_flushed_batches();
    let good = (a.len() + b.len()) as u64;
    let cut = good + c.len() as u64 / 2;
    log.reopen_after(|dir| {
        fs::OpenOptions::new()
            .write(true)
            .open(first_segment(dir))
            .unwrap()
            .set_len(cut)
            .unwrap()
    });

    assert!(
        rebuilt_reason(&log).contains("shorter"),
        "{}",
        rebuilt_reason(&log)
    );
    let truncation = log
        .log()
        .recovery_report()
        .truncation
        .clone()
        .expect("a torn tail was cut");
    assert_eq!(
        (
            truncation.segment_base,
            truncation.position,
            truncation.first_dropped_offset,
            truncation.dropped_bytes
        ),
        (0, good, 5, cut - good)
    );
    assert!(
        truncation.reason.contains("truncated"),
        "{}",
        truncation.reason
    );
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(5, 1));
    assert_eq!(log.flushed_end_offset(), 5);
    assert_eq!(read_all(&log), concat(&[&a, &b]));
    assert_eq!(log.log().epoch_entries(), vec![(1, 0)]);
    assert_eq!(
        fs::metadata(first_segment(log.log().partition_dir()))
            .unwrap()
            .len(),
        good
    );
    assert_reopens_verified(&mut log);
}

#[test]
fn unflushed_batch_torn_by_a_crash_is_cut_without_rebuilding_the_index() {
    let mut log = TestLog::new(LogConfig::default());
    let a = append(&mut log, 1, 2, 1);
    log.flush().unwrap();
    let b = append(&mut log, 2, 3, 2);
    let cut = (a.len() + b.len() - 1) as u64;
    log.reopen_after(|dir| {
        fs::OpenOptions::new()
            .write(true)
            .open(first_segment(dir))
            .unwrap()
            .set_len(cut)
            .unwrap()
    });

    let report = log.log().recovery_report().clone();
    assert_eq!(report.index, IndexRecovery::Verified);
    assert_eq!(report.batches_scanned, 0, "the torn batch is not a batch");
    let truncation = report.truncation.expect("torn tail cut");
    assert_eq!(
        (
            truncation.position,
            truncation.dropped_bytes,
            truncation.first_dropped_offset
        ),
        (a.len() as u64, b.len() as u64 - 1, 2)
    );
    assert_eq!(
        log.end_offset(),
        OffsetAndEpoch::new(2, 1),
        "epoch 2 never became durable"
    );
    assert_eq!(read_all(&log), a);
}

#[test]
fn flipped_byte_in_the_last_flushed_batch_cuts_it() {
    let (mut log, [a, b, c]) = three_flushed_batches();
    let flip_at = (a.len() + b.len() + c.len() - 4) as u64; // inside C's last record
    log.reopen_after(|dir| flip_byte(&first_segment(dir), flip_at));

    assert!(
        rebuilt_reason(&log).contains("fails its check"),
        "{}",
        rebuilt_reason(&log)
    );
    let truncation = log
        .log()
        .recovery_report()
        .truncation
        .clone()
        .expect("corrupt batch cut");
    assert!(truncation.reason.contains("CRC"), "{}", truncation.reason);
    assert_eq!(
        (truncation.first_dropped_offset, truncation.dropped_bytes),
        (5, c.len() as u64)
    );
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(5, 1));
    assert_eq!(read_all(&log), concat(&[&a, &b]));
    assert_eq!(log.log().recovery_report().batches_scanned, 2);
    assert_reopens_verified(&mut log);
}

#[test]
fn flipped_byte_in_an_unflushed_batch_cuts_it_and_everything_after() {
    let mut log = TestLog::new(LogConfig::default());
    let a = append(&mut log, 1, 2, 1);
    log.flush().unwrap();
    let b = append(&mut log, 1, 3, 2);
    let c = append(&mut log, 1, 1, 3);
    let flip_at = (a.len() + 70) as u64; // inside B's records (the header is 61 bytes)
    log.reopen_after(|dir| flip_byte(&first_segment(dir), flip_at));

    let report = log.log().recovery_report().clone();
    assert_eq!(report.index, IndexRecovery::Verified);
    let truncation = report.truncation.expect("corrupt batch cut");
    assert!(truncation.reason.contains("CRC"), "{}", truncation.reason);
    assert_eq!(
        (truncation.first_dropped_offset, truncation.dropped_bytes),
        (2, (b.len() + c.len()) as u64)
    );
    assert_eq!(read_all(&log), a);
}

#[test]
fn corruption_inside_indexed_data_is_refused_on_read() {
    // Open trusts fsynced, indexed batches (only the last one is re-checked); a byte flipped in
    // an earlier one is caught by the CRC check every read makes before data leaves the log.
    let (mut log, [a, _, _]) = three_flushed_batches();
    log.reopen_after(|dir| flip_byte(&first_segment(dir), a.len() as u64 + 70));
    assert_eq!(log.log().recovery_report().index, IndexRecovery::Verified);
    assert_eq!(
        log.read(0, 1).unwrap(),
        a,
        "batches before the damage still read"
    );
    for offset in [2, 4] {
        let err = log.read(offset, usize::MAX).unwrap_err();
        assert!(
            matches!(err, LogError::CorruptBatch { offset: 2, .. }),
            "{err}"
        );
    }
    assert!(
        log.read(5, usize::MAX).is_ok(),
        "batches after the damage still read"
    );
}

fn flip_byte(path: &Path, at: u64) {
    let mut bytes = fs::read(path).unwrap();
    bytes[at as usize] ^= 0x5A;
    fs::write(path, bytes).unwrap();
}

#[test]
fn missing_index_is_rebuilt_from_the_segments() {
    let mut log = TestLog::new(small_segments(250));
    let batches: Vec<Bytes> = (0..7)
        .map(|i| append(&mut log, 1 + i / 3, 1 + i as usize % 3, i as u8))
        .collect();
    log.flush().unwrap();
    let segments = log.log().segment_base_offsets();
    assert!(segments.len() > 2, "{segments:?}");
    log.reopen_after(|dir| fs::remove_dir_all(dir.join(INDEX_DIR_NAME)).unwrap());

    assert!(
        rebuilt_reason(&log).contains("no index"),
        "{}",
        rebuilt_reason(&log)
    );
    let report = log.log().recovery_report();
    assert_eq!(
        (report.batches_scanned, report.truncation.clone()),
        (7, None)
    );
    assert_eq!(read_all(&log), concat(&batches.iter().collect::<Vec<_>>()));
    assert_eq!(log.log().segment_base_offsets(), segments);
    assert_eq!(log.log().epoch_entries(), vec![(1, 0), (2, 6), (3, 12)]);
    assert_reopens_verified(&mut log);
}

#[test]
fn unreadable_index_is_rebuilt() {
    let (mut log, [a, b, c]) = three_flushed_batches();
    log.reopen_after(|dir| {
        let index = dir.join(INDEX_DIR_NAME);
        for item in fs::read_dir(&index).unwrap() {
            let path = item.unwrap().path();
            if path
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("MANIFEST")
            {
                fs::write(&path, b"garbage").unwrap();
            }
        }
        fs::write(index.join("CURRENT"), b"MANIFEST-999999\n").unwrap();
    });
    assert!(
        rebuilt_reason(&log).contains("cannot open"),
        "{}",
        rebuilt_reason(&log)
    );
    assert_eq!(read_all(&log), concat(&[&a, &b, &c]));
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(7, 2));
}

#[test]
fn stale_index_describing_replaced_data_is_rebuilt() {
    let (mut log, [a, _, _]) = three_flushed_batches();
    let saved = tempfile::tempdir().unwrap();
    log.reopen_after(|dir| copy_dir(&dir.join(INDEX_DIR_NAME), saved.path()));
    // Replace B and C with D (another epoch, other contents, longer than both, so the old
    // index's last batch position now falls inside D), then put the old index back.
    log.truncate_to(2).unwrap();
    let d = append(&mut log, 3, 12, 9);
    log.flush().unwrap();
    log.reopen_after(|dir| {
        fs::remove_dir_all(dir.join(INDEX_DIR_NAME)).unwrap();
        copy_dir(saved.path(), &dir.join(INDEX_DIR_NAME));
    });
    assert!(
        rebuilt_reason(&log).contains("differs"),
        "{}",
        rebuilt_reason(&log)
    );
    assert_eq!(read_all(&log), concat(&[&a, &d]));
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(14, 3));
    assert_eq!(log.log().epoch_entries(), vec![(1, 0), (3, 2)]);
    assert_eq!(
        log.end_offset_for_epoch(2),
        OffsetAndEpoch::new(2, 1),
        "epoch 2 of the stale index is gone"
    );
}

#[test]
fn index_ahead_of_a_shortened_segment_is_rebuilt() {
    let (mut log, [a, b, _]) = three_flushed_batches();
    let boundary = (a.len() + b.len()) as u64;
    log.reopen_after(|dir| {
        fs::OpenOptions::new()
            .write(true)
            .open(first_segment(dir))
            .unwrap()
            .set_len(boundary)
            .unwrap()
    });
    assert!(
        rebuilt_reason(&log).contains("shorter"),
        "{}",
        rebuilt_reason(&log)
    );
    assert_eq!(
        log.log().recovery_report().truncation,
        None,
        "a cut at a batch boundary is a clean end"
    );
    assert_eq!(read_all(&log), concat(&[&a, &b]));
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(5, 1));
}

#[test]
fn index_behind_the_segments_is_extended_by_scanning_the_tail() {
    // Also what a crash between the segment fsync and the index write leaves behind.
    let mut log = TestLog::new(small_segments(250));
    let mut batches = vec![append(&mut log, 1, 2, 1)];
    log.flush().unwrap();
    let saved = tempfile::tempdir().unwrap();
    log.reopen_after(|dir| copy_dir(&dir.join(INDEX_DIR_NAME), saved.path()));
    for i in 0..4 {
        batches.push(append(&mut log, 2 + i / 2, 3, 10 + i as u8));
    }
    log.flush().unwrap();
    assert!(
        log.log().segment_base_offsets().len() > 1,
        "the tail spans a roll"
    );
    log.reopen_after(|dir| {
        fs::remove_dir_all(dir.join(INDEX_DIR_NAME)).unwrap();
        copy_dir(saved.path(), &dir.join(INDEX_DIR_NAME));
    });
    let report = log.log().recovery_report().clone();
    assert_eq!(
        (report.index, report.batches_scanned, report.truncation),
        (IndexRecovery::Verified, 4, None)
    );
    assert_eq!(read_all(&log), concat(&batches.iter().collect::<Vec<_>>()));
    assert_eq!(log.log().epoch_entries(), vec![(1, 0), (2, 2), (3, 8)]);
    assert_reopens_verified(&mut log);
}

#[test]
fn process_crash_after_append_keeps_the_written_batches() {
    // The process dies after the segment write but before flush (no fsync, no index update);
    // the OS still has the pages, so the batches are found by the tail scan and made durable.
    let mut log = TestLog::new(LogConfig::default());
    let a = append(&mut log, 1, 2, 1);
    log.flush().unwrap();
    let b = append(&mut log, 1, 1, 2);
    let c = append(&mut log, 2, 2, 3);
    assert_eq!(log.flushed_end_offset(), 2);
    log.reopen_after(|_| {});
    let report = log.log().recovery_report().clone();
    assert_eq!(
        (report.index, report.batches_scanned, report.truncation),
        (IndexRecovery::Verified, 2, None)
    );
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(5, 2));
    assert_eq!(
        log.flushed_end_offset(),
        5,
        "recovered batches are fsynced before use"
    );
    assert_eq!(read_all(&log), concat(&[&a, &b, &c]));
    assert_reopens_verified(&mut log);
}

#[test]
fn a_segment_that_does_not_continue_the_log_is_dropped_with_everything_after() {
    let mut log = TestLog::new(small_segments(150));
    let batches: Vec<Bytes> = (0..6).map(|i| append(&mut log, 1, 2, i)).collect();
    log.flush().unwrap();
    let segments = log.log().segment_base_offsets();
    assert!(segments.len() >= 4, "{segments:?}");
    let (missing, after) = (segments[1], segments[2..].to_vec());
    log.reopen_after(|dir| fs::remove_file(dir.join(segment_file_name(missing))).unwrap());

    assert!(matches!(
        log.log().recovery_report().index,
        IndexRecovery::Rebuilt { .. }
    ));
    let truncation = log
        .log()
        .recovery_report()
        .truncation
        .clone()
        .expect("gap cut");
    assert_eq!(truncation.first_dropped_offset, missing);
    assert_eq!(truncation.deleted_segments, after);
    assert!(
        truncation.reason.contains("does not continue"),
        "{}",
        truncation.reason
    );
    assert_eq!(log.log().segment_base_offsets(), vec![0]);
    assert_eq!(log.end_offset().offset, missing);
    let kept: Vec<&Bytes> = batches
        .iter()
        .take_while(|b| read_base(b) < missing)
        .collect();
    assert_eq!(read_all(&log), concat(&kept));
}

fn read_base(batch: &Bytes) -> i64 {
    i64::from_be_bytes(batch[..8].try_into().unwrap())
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for item in fs::read_dir(from).unwrap() {
        let item = item.unwrap();
        fs::copy(item.path(), to.join(item.file_name())).unwrap();
    }
}

#[test]
fn open_refuses_what_it_must_not_repair() {
    for (name, needle) in [
        ("00000000000000000000.log.swap", ".swap"),
        ("123.log", "20-digit"),
    ] {
        let root = tempfile::tempdir().unwrap();
        drop(SegmentLog::open(root.path(), LogConfig::default()).unwrap());
        fs::write(
            root.path().join(crate::METADATA_PARTITION_DIR).join(name),
            b"",
        )
        .unwrap();
        let err = SegmentLog::open(root.path(), LogConfig::default()).unwrap_err();
        assert!(
            matches!(err, StorageError::Inconsistent { .. }) && err.to_string().contains(needle),
            "{name}: {err}"
        );
    }
    let root = tempfile::tempdir().unwrap();
    let err = SegmentLog::open(root.path(), small_segments(0)).unwrap_err();
    assert!(matches!(err, StorageError::Config(_)), "{err}");
}

#[test]
fn segments_below_metadata_log_segment_min_bytes_are_refused_unless_it_is_lowered() {
    // Kafka: "Cannot set metadata.log.segment.bytes below 8388608" unless
    // metadata.log.segment.min.bytes is overridden (tests only).
    let root = tempfile::tempdir().unwrap();
    let below = LogConfig {
        segment_bytes: (8 << 20) - 1,
        ..LogConfig::default()
    };
    let err = SegmentLog::open(root.path(), below).unwrap_err();
    assert!(
        matches!(&err, StorageError::Config(m) if m.contains("metadata.log.segment.bytes")),
        "{err}"
    );
    for bad in [
        LogConfig {
            segment_min_bytes: 0,
            ..small_segments(100)
        },
        LogConfig {
            segment_bytes: 1 << 31,
            ..LogConfig::default()
        },
    ] {
        assert!(
            matches!(
                SegmentLog::open(root.path(), bad),
                Err(StorageError::Config(_))
            ),
            "{bad:?}"
        );
    }
    let log = SegmentLog::open(
        root.path(),
        LogConfig {
            segment_min_bytes: 1 << 20,
            ..below
        },
    )
    .unwrap();
    assert_eq!(log.config().segment_bytes, (8 << 20) - 1);
    drop(log);
    SegmentLog::open(root.path(), LogConfig::default()).unwrap();
}

#[test]
fn a_second_open_of_the_same_directory_is_refused() {
    let log = TestLog::new(LogConfig::default());
    let err = SegmentLog::open(log.root(), LogConfig::default()).unwrap_err();
    assert!(matches!(err, StorageError::Locked { .. }), "{err}");
    let as_log_error: LogError = err.into();
    assert!(as_log_error.to_string().contains(".lock"), "{as_log_error}");
}

#[test]
fn kafka_bookkeeping_files_follow_the_log() {
    let mut log = TestLog::new(LogConfig::default());
    let dir = log.log().partition_dir().to_path_buf();
    assert_eq!(
        fs::read(dir.join(crate::PARTITION_METADATA)).unwrap(),
        b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    );
    let checkpoint = || fs::read_to_string(dir.join(crate::LEADER_EPOCH_CHECKPOINT)).unwrap();
    assert_eq!(checkpoint(), "0\n0\n");
    append(&mut log, 1, 2, 1);
    append(&mut log, 4, 2, 2);
    assert_eq!(
        checkpoint(),
        "0\n0\n",
        "written with the flush, like the data it describes"
    );
    log.flush().unwrap();
    assert_eq!(checkpoint(), "0\n2\n1 0\n4 2\n");
    log.truncate_to(3).unwrap();
    assert_eq!(
        checkpoint(),
        "0\n1\n1 0\n",
        "truncation rewrites it at once"
    );
}
