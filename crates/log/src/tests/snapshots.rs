//! Snapshot files on disk: what opening does with damaged, partial, leftover and foreign files
//! (cases C06, C07), the refusal of a log start no snapshot covers, and the index staying
//! consistent while segments are deleted below a moved log start.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use bytes::Bytes;
use kraftwerk_raft::testing::suite::data_batch;
use kraftwerk_raft::testing::{snapshot_bytes, write_snapshot};
use kraftwerk_raft::{LogError, OffsetAndEpoch, ReplicatedLog};

use super::{small_segments, TestLog};
use crate::snapshot::{parse_snapshot_file_name, snapshot_file_name, SnapshotFileKind};
use crate::{segment_file_name, IndexRecovery, LogConfig, StorageError, LEADER_EPOCH_CHECKPOINT};

fn id(offset: i64, epoch: i32) -> OffsetAndEpoch {
    OffsetAndEpoch::new(offset, epoch)
}

/// Segments of about two batches each.
fn tiny() -> LogConfig {
    small_segments(200)
}

/// Nine flushed two-record batches: epoch 1 at 0..=5, epoch 3 at 6..=11, epoch 4 at 12..=17.
fn nine_batches(log: &mut TestLog) -> Vec<Bytes> {
    let mut out = Vec::new();
    for (i, epoch) in [1, 1, 1, 3, 3, 3, 4, 4, 4].into_iter().enumerate() {
        let batch = data_batch(log.end_offset().offset, epoch, 2, i as u8);
        log.append_as_leader(&batch, epoch).unwrap();
        out.push(batch);
    }
    log.flush().unwrap();
    out
}

fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn snapshot_files(dir: &Path) -> Vec<String> {
    file_names(dir)
        .into_iter()
        .filter(|n| parse_snapshot_file_name(n).is_some())
        .collect()
}

fn partition_dir(log: &TestLog) -> std::path::PathBuf {
    log.log().partition_dir().to_path_buf()
}

#[test]
fn damaged_checkpoints_are_deleted_at_open_and_never_loaded() {
    let mut log = TestLog::new(LogConfig::default());
    let batches = nine_batches(&mut log);
    let good = id(6, 1);
    write_snapshot(&mut log, good, &snapshot_bytes(1, 5, 2, 2, 1));
    let valid = snapshot_bytes(4, 17, 3, 3, 2);
    let sizes: Vec<usize> = kraftwerk_records::batch::batches(&valid)
        .map(|b| b.unwrap().0.size_bytes())
        .collect();
    let (header_len, footer_len) = (sizes[0], *sizes.last().unwrap());
    let mut bad_crc = valid.to_vec();
    bad_crc[header_len + 70] ^= 0x04;
    let damaged: Vec<(OffsetAndEpoch, Vec<u8>, &str)> = vec![
        (id(12, 3), Vec::new(), "the file is empty"),
        (id(14, 4), valid[..valid.len() - 7].to_vec(), "truncated"),
        (id(16, 4), bad_crc, "CRC mismatch"),
        (
            id(17, 4),
            valid[..valid.len() - footer_len].to_vec(),
            "SnapshotFooter",
        ),
        // Ahead of the log: loading it would truncate everything.
        (id(40, 9), Vec::new(), "the file is empty"),
    ];
    log.reopen_after(|dir| {
        for (sid, bytes, _) in &damaged {
            fs::write(dir.join(snapshot_file_name(*sid)), bytes).unwrap();
        }
    });
    let report = log.log().snapshot_recovery().clone();
    assert_eq!(report.snapshots, vec![good]);
    assert_eq!(report.invalid_deleted.len(), damaged.len());
    for ((sid, _, reason), deleted) in damaged.iter().zip(&report.invalid_deleted) {
        assert_eq!(deleted.id, *sid);
        assert!(
            deleted.reason.contains(reason),
            "{sid:?}: {}",
            deleted.reason
        );
    }
    assert!(!report.truncated_to_latest_snapshot);
    assert_eq!(log.snapshot_ids(), vec![good]);
    assert_eq!(
        snapshot_files(&partition_dir(&log)),
        vec![snapshot_file_name(good)]
    );
    assert_eq!(log.end_offset(), id(18, 4));
    assert_eq!(
        log.read(0, usize::MAX).unwrap().len(),
        batches.iter().map(Bytes::len).sum::<usize>()
    );
}

#[test]
fn leftover_part_and_deleted_files_are_removed_without_touching_the_rest() {
    let mut log = TestLog::new(LogConfig::default());
    nine_batches(&mut log);
    let keep = id(12, 3);
    write_snapshot(&mut log, keep, &snapshot_bytes(3, 11, 1, 1, 1));
    let leftovers = [
        // A sink of ours and Java's createTempFile, interrupted.
        "00000000000000000016-0000000004-123456789.checkpoint.part".to_string(),
        "00000000000000000016-0000000004-8623456712345.checkpoint.part".to_string(),
        // Marked for deletion by Java (KafkaMetadataLog.removeSnapshots), also for the id kept.
        "00000000000000000006-0000000001.checkpoint.deleted".to_string(),
        format!("{}.deleted", snapshot_file_name(keep)),
    ];
    let before = file_names(&partition_dir(&log));
    log.reopen_after(|dir| {
        for name in &leftovers {
            fs::write(dir.join(name), b"partial").unwrap();
        }
    });
    let report = log.log().snapshot_recovery();
    assert_eq!(report.leftovers_deleted.len(), 4);
    assert!(report.invalid_deleted.is_empty());
    assert_eq!(file_names(&partition_dir(&log)), before);
    assert_eq!(log.snapshot_ids(), vec![keep]);
}

/// Moves the log start to 12 with tiny segments, so the first segment starts above 0.
fn log_starting_above_zero() -> TestLog {
    let mut log = TestLog::new(tiny());
    nine_batches(&mut log);
    write_snapshot(&mut log, id(6, 1), &snapshot_bytes(1, 5, 1, 1, 1));
    write_snapshot(&mut log, id(12, 3), &snapshot_bytes(3, 11, 1, 1, 2));
    log.delete_before_snapshot(id(12, 3)).unwrap();
    assert_eq!(log.log().segment_base_offsets()[0], 12);
    log
}

#[test]
fn a_log_start_no_snapshot_covers_is_refused_and_the_directory_left_alone() {
    // Case C06: every checkpoint deleted while segments starting at 12 remain.
    let mut log = log_starting_above_zero();
    let dir = partition_dir(&log);
    let mut expected_files = Vec::new();
    let err = log
        .try_reopen_after(|dir| {
            fs::remove_file(dir.join(snapshot_file_name(id(12, 3)))).unwrap();
            fs::write(
                dir.join("00000000000000000012-0000000003-1.checkpoint.part"),
                b"x",
            )
            .unwrap();
            expected_files = file_names(dir);
        })
        .unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, StorageError::Inconsistent { .. }), "{err}");
    assert!(message.contains("the log starts at offset 12"), "{message}");
    assert!(message.contains(&segment_file_name(12)), "{message}");
    assert!(message.contains("latest valid snapshot: none"), "{message}");
    assert_eq!(
        file_names(&dir),
        expected_files,
        "a refused open deletes nothing"
    );

    // The covering snapshot exists but is damaged: still refused, and the file is kept.
    let err = log
        .try_reopen_after(|dir| {
            fs::write(dir.join(snapshot_file_name(id(12, 3))), b"").unwrap();
            fs::write(
                dir.join(snapshot_file_name(id(3, 1))),
                snapshot_bytes(1, 2, 1, 1, 3),
            )
            .unwrap();
        })
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("latest valid snapshot: 3-1"), "{message}");
    assert!(
        message.contains("00000000000000000012-0000000003.checkpoint (the file is empty)"),
        "{message}"
    );
    assert!(dir.join(snapshot_file_name(id(12, 3))).exists());

    // A valid covering snapshot makes the directory usable again.
    log.reopen_after(|dir| {
        fs::write(
            dir.join(snapshot_file_name(id(12, 3))),
            snapshot_bytes(3, 11, 1, 1, 2),
        )
        .unwrap();
    });
    assert_eq!(log.start_offset(), 12);
    assert_eq!(log.snapshot_ids(), vec![id(12, 3)]);
    assert_eq!(
        log.log().snapshot_recovery().below_log_start_deleted,
        vec![id(3, 1)]
    );
    assert_eq!(log.log().snapshot_recovery().leftovers_deleted.len(), 1);
}

#[test]
fn a_snapshot_ahead_of_the_log_truncates_it_fully_at_open() {
    let mut log = TestLog::new(tiny());
    nine_batches(&mut log);
    write_snapshot(&mut log, id(6, 1), &snapshot_bytes(1, 5, 1, 1, 1));
    // Downloaded from a leader of epoch 6, then the node stopped before truncating.
    let ahead = id(30, 6);
    log.reopen_after(|dir| {
        fs::write(
            dir.join(snapshot_file_name(ahead)),
            snapshot_bytes(6, 29, 4, 4, 2),
        )
        .unwrap();
    });
    assert!(log.log().snapshot_recovery().truncated_to_latest_snapshot);
    assert_eq!((log.start_offset(), log.end_offset()), (30, ahead));
    assert_eq!(log.log().segment_base_offsets(), vec![30]);
    assert_eq!(log.snapshot_ids(), vec![ahead]);
    let dir = partition_dir(&log);
    assert_eq!(snapshot_files(&dir), vec![snapshot_file_name(ahead)]);
    assert_eq!(
        fs::read_to_string(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap(),
        "0\n0\n"
    );
    log.append_as_leader(&data_batch(30, 6, 3, 9), 6).unwrap();
    log.flush().unwrap();
    log.reopen_after(|_| {});
    assert_eq!(log.log().recovery_report().index, IndexRecovery::Verified);
    assert!(!log.log().snapshot_recovery().truncated_to_latest_snapshot);
    assert_eq!((log.start_offset(), log.end_offset()), (30, id(33, 6)));
}

#[test]
fn a_directory_with_snapshots_and_no_segments_starts_at_the_latest_snapshot() {
    let mut log = TestLog::new(LogConfig::default());
    nine_batches(&mut log);
    let s = id(12, 3);
    write_snapshot(&mut log, s, &snapshot_bytes(3, 11, 1, 1, 1));
    log.reopen_after(|dir| {
        for name in file_names(dir) {
            if name.ends_with(".log") {
                fs::remove_file(dir.join(name)).unwrap();
            }
        }
        fs::remove_dir_all(dir.join(crate::INDEX_DIR_NAME)).unwrap();
    });
    assert_eq!((log.start_offset(), log.end_offset()), (12, s));
    assert_eq!(log.log().segment_base_offsets(), vec![12]);
    assert_eq!(log.snapshot_ids(), vec![s]);
}

#[test]
fn cleaning_deletes_segment_files_and_keeps_the_index_verified() {
    let mut log = log_starting_above_zero();
    let dir = partition_dir(&log);
    let segments: Vec<i64> = log.log().segment_base_offsets();
    assert!(segments.iter().all(|&b| b >= 12), "{segments:?}");
    for base in [0, 4, 8] {
        assert!(
            !dir.join(segment_file_name(base)).exists(),
            "segment {base} deleted"
        );
    }
    // Kafka's in-memory cache after truncateFromStart(12), as leader-epoch-checkpoint holds it.
    assert_eq!(log.log().epoch_entries(), vec![(4, 12)]);
    assert_eq!(
        fs::read_to_string(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap(),
        "0\n1\n4 12\n"
    );
    let end = log.end_offset();
    let bytes = log.read(12, usize::MAX).unwrap();
    log.reopen_after(|_| {});
    let report = log.log().recovery_report();
    assert_eq!(
        (&report.index, report.batches_scanned),
        (&IndexRecovery::Verified, 0),
        "{report:?}"
    );
    assert_eq!((log.start_offset(), log.end_offset()), (12, end));
    assert_eq!(log.read(12, usize::MAX).unwrap(), bytes);

    // The log start at the log end: the active segment (16) stays. After a restart the log
    // would start at 16 again (Kafka does not persist the log start offset), but the epoch
    // cache, loaded from leader-epoch-checkpoint ("4 18") and cut at the log end (18), is empty,
    // so the snapshot 18-4 counts as ahead and the log is truncated fully to it — exactly what
    // Java's KafkaMetadataLog.apply does with this directory.
    write_snapshot(&mut log, id(18, 4), &snapshot_bytes(4, 17, 1, 1, 3));
    log.delete_before_snapshot(id(18, 4)).unwrap();
    assert_eq!(log.log().segment_base_offsets(), vec![16]);
    assert_eq!((log.start_offset(), log.end_offset()), (18, id(18, 4)));
    assert!(matches!(
        log.read(16, 1),
        Err(LogError::OffsetOutOfRange { start: 18, .. })
    ));
    log.reopen_after(|_| {});
    assert_eq!(log.log().recovery_report().index, IndexRecovery::Verified);
    assert!(log.log().snapshot_recovery().truncated_to_latest_snapshot);
    assert_eq!((log.start_offset(), log.end_offset()), (18, id(18, 4)));
    assert_eq!(log.log().segment_base_offsets(), vec![18]);
    assert_eq!(log.snapshot_ids(), vec![id(18, 4)]);
}

#[test]
fn snapshot_files_are_named_and_protected_like_kafkas() {
    let mut log = TestLog::new(LogConfig::default());
    nine_batches(&mut log);
    let dir = partition_dir(&log);
    let s = id(12, 3);
    let bytes = snapshot_bytes(3, 11, 2, 2, 1);
    let mut sink = log.create_snapshot(s).unwrap();
    sink.append(&bytes[..10]).unwrap();
    let parts = snapshot_files(&dir);
    assert_eq!(parts.len(), 1);
    assert_eq!(
        parse_snapshot_file_name(&parts[0]),
        Some(Ok((s, SnapshotFileKind::Partial)))
    );
    sink.append(&bytes[10..]).unwrap();
    sink.finish().unwrap();
    let name = snapshot_file_name(s);
    assert_eq!(
        snapshot_files(&dir),
        vec![name.clone()],
        "the .part file was renamed"
    );
    let mode = fs::metadata(dir.join(&name)).unwrap().permissions().mode();
    assert_eq!(
        mode & 0o777,
        0o444,
        "read-only like FileRawSnapshotWriter.freeze"
    );
    assert_eq!(fs::read(dir.join(&name)).unwrap(), bytes);

    // An unfinished sink and a rejected one leave nothing behind.
    let other = id(16, 4);
    let mut sink = log.create_snapshot(other).unwrap();
    sink.append(&bytes[..20]).unwrap();
    drop(sink);
    let mut sink = log.create_snapshot(other).unwrap();
    sink.append(&bytes[..20]).unwrap();
    assert!(sink.finish().is_err());
    assert_eq!(snapshot_files(&dir), vec![name]);
}

#[test]
fn the_bootstrap_snapshot_is_kept_unlisted_until_the_log_start_moves() {
    let mut log = TestLog::new(LogConfig::default());
    let bootstrap = id(0, 0);
    let bootstrap_bytes = snapshot_bytes(0, 0, 1, 2, 1);
    log.reopen_after(|dir| {
        fs::write(dir.join(snapshot_file_name(bootstrap)), &bootstrap_bytes).unwrap();
    });
    assert!(log.snapshot_ids().is_empty(), "0-0 is never listed");
    assert_eq!(
        log.snapshot_size_bytes(bootstrap).unwrap(),
        bootstrap_bytes.len() as u64
    );
    assert_eq!(
        log.read_snapshot(bootstrap, 0, usize::MAX).unwrap(),
        bootstrap_bytes
    );
    assert!(!log.truncate_to_latest_snapshot().unwrap());
    nine_batches(&mut log);
    write_snapshot(&mut log, id(6, 1), &snapshot_bytes(1, 5, 1, 1, 2));
    write_snapshot(&mut log, id(12, 3), &snapshot_bytes(3, 11, 1, 1, 3));
    log.delete_before_snapshot(id(12, 3)).unwrap();
    assert!(!partition_dir(&log)
        .join(snapshot_file_name(bootstrap))
        .exists());
    assert!(matches!(
        log.snapshot_size_bytes(bootstrap),
        Err(LogError::SnapshotNotFound { .. })
    ));
}

#[test]
fn a_snapshot_name_java_cannot_parse_is_refused() {
    let mut log = TestLog::new(LogConfig::default());
    let err = log
        .try_reopen_after(|dir| fs::write(dir.join("latest.checkpoint"), b"").unwrap())
        .unwrap_err();
    assert!(matches!(err, StorageError::Inconsistent { .. }), "{err}");
    assert!(err.to_string().contains("latest.checkpoint"), "{err}");
}

#[test]
fn register_validates_a_file_no_sink_of_this_log_wrote() {
    let mut log = TestLog::new(LogConfig::default());
    nine_batches(&mut log);
    let dir = partition_dir(&log);
    let s = id(12, 3);
    fs::write(
        dir.join(snapshot_file_name(s)),
        snapshot_bytes(3, 11, 1, 1, 1),
    )
    .unwrap();
    log.register_snapshot(s).unwrap();
    assert_eq!(log.snapshot_ids(), vec![s]);
    let bad = id(16, 4);
    fs::write(dir.join(snapshot_file_name(bad)), b"not a snapshot").unwrap();
    let err = log.register_snapshot(bad).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::InvalidSnapshot {
                offset: 16,
                epoch: 4,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(log.snapshot_ids(), vec![s]);
}

#[test]
fn time_and_size_retention_never_move_the_log_start_without_two_snapshots() {
    // Case C06: with one snapshot, nothing may go however old or large the log is.
    let mut log = TestLog::new(LogConfig {
        retention_bytes: 0,
        retention_ms: 0,
        ..tiny()
    });
    nine_batches(&mut log);
    write_snapshot(&mut log, id(12, 3), &snapshot_bytes(3, 0, 1, 1, 1));
    assert!(!log.maybe_clean(18, u64::MAX).unwrap());
    assert_eq!(log.start_offset(), 0);
    assert_eq!(log.log().segment_base_offsets()[0], 0);
}
