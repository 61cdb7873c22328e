//! Disk faults under the segment log (case C10), injected by [`FaultyFs`]: the conformance
//! suite's fault cases on this backend, and what only the segment log shows (which file and
//! position an error names, what a reopen repairs and what it refuses, descriptors kept open).

use std::path::{Path, PathBuf};

use kraftwerk_raft::testing::{DiskFault, FaultyLog};
use kraftwerk_raft::{LogError, OffsetAndEpoch, ReplicatedLog};
use kraftwerk_records::batch;

use super::{small_segments, TestLog};
use crate::fs::faulty::{cut_file, flip_byte, Fault, EIO, ENOSPC};
use crate::{IndexRecovery, LogConfig, StorageError, METADATA_PARTITION_DIR};

/// Bytes a short write puts in the file before the device reports `ENOSPC`: less than a batch
/// header (61 bytes), so the file ends with a torn batch.
const SHORT_WRITE_BYTES: usize = 20;

impl FaultyLog for TestLog {
    fn inject(&mut self, fault: DiskFault) {
        let fault = match fault {
            DiskFault::WriteFails => Fault::write(".log", ENOSPC)
                .after_short_write(SHORT_WRITE_BYTES)
                .times(1),
            DiskFault::SyncFails => Fault::sync(".log", EIO).times(1),
        };
        self.fs().inject(fault);
    }

    fn flip_byte_in_batch(&mut self, offset: i64) {
        let (path, position, size) = batch_on_disk(self.root(), offset);
        flip_byte(&path, position + size / 2);
    }

    fn flip_byte_in_snapshot(&mut self, id: OffsetAndEpoch, position: u64) {
        let path = self
            .root()
            .join(METADATA_PARTITION_DIR)
            .join(crate::snapshot::snapshot_file_name(id));
        // Snapshots are read-only (0444), as Java leaves them; damage does not ask.
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&path, perms).unwrap();
        flip_byte(&path, position);
    }
}

/// The segment file, position and size of the batch holding `offset`, found by scanning the
/// segment files (as a person with a hex editor would).
fn batch_on_disk(root: &Path, offset: i64) -> (PathBuf, u64, u64) {
    for path in segment_files(root) {
        let bytes = std::fs::read(&path).unwrap();
        let mut position = 0u64;
        for item in batch::batches(&bytes) {
            let (header, whole) = item.unwrap();
            if header.base_offset <= offset && offset <= header.last_offset() {
                return (path, position, whole.len() as u64);
            }
            position += whole.len() as u64;
        }
    }
    panic!("no segment holds offset {offset}");
}

fn segment_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(METADATA_PARTITION_DIR))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    files.sort();
    files
}

/// The fault cases of the conformance suite, one segment.
mod fault_suite_one_segment {
    use super::*;
    kraftwerk_raft::log_fault_tests!(|| TestLog::faulty(LogConfig::default()));
}

/// The fault cases of the conformance suite with 200-byte segments (faults across rolls).
mod fault_suite_tiny_segments {
    use super::*;
    kraftwerk_raft::log_fault_tests!(|| TestLog::faulty(small_segments(200)));
}

fn append(log: &mut TestLog, epoch: i32, records: usize, tag: u8) -> bytes::Bytes {
    let start = log.end_offset().offset;
    let bytes = kraftwerk_raft::testing::suite::data_batch(start, epoch, records, tag);
    log.append_as_leader(&bytes, epoch).unwrap();
    bytes
}

#[test]
fn eio_on_fsync_stops_the_log_naming_the_segment_and_the_offsets_not_on_disk() {
    let mut log = TestLog::faulty(LogConfig::default());
    let a = append(&mut log, 1, 2, 1);
    log.flush().unwrap();
    append(&mut log, 1, 3, 2);
    log.fs().inject(Fault::sync(".log", EIO).times(1));

    let err = log.flush().unwrap_err().to_string();
    assert!(
        err.contains("00000000000000000000.log (fsync at position")
            && err.contains("log offsets from 2 may not be on disk")
            && err.contains("os error 5"),
        "{err}"
    );
    assert_eq!(
        log.flushed_end_offset(),
        2,
        "nothing more counts as flushed"
    );
    // The fault was one-shot: a retried fsync would now succeed on the OS, and would lie (the
    // kernel may have dropped the dirty pages when it reported EIO). The log does not retry.
    let again = log.flush().unwrap_err().to_string();
    assert!(
        again.contains("failed earlier and must be reopened"),
        "{again}"
    );
    assert!(
        again.contains("log offsets from 2 may not be on disk"),
        "{again}"
    );
    assert_eq!(log.flushed_end_offset(), 2);

    let log = log.crash_faulty(true);
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(2, 1));
    assert_eq!(log.read(0, usize::MAX).unwrap(), a);
}

#[test]
fn enospc_mid_write_leaves_a_torn_batch_that_the_restart_cuts() {
    let mut log = TestLog::faulty(LogConfig::default());
    let a = append(&mut log, 1, 2, 1);
    log.flush().unwrap();
    log.fs()
        .inject(Fault::write(".log", ENOSPC).after_short_write(30).times(1));
    let b = kraftwerk_raft::testing::suite::data_batch(2, 1, 3, 2);
    let err = log.append_as_leader(&b, 1).unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "00000000000000000000.log (write at position {}",
            a.len()
        )) && err.contains("log offsets from 2")
            && err.contains("os error 28"),
        "{err}"
    );
    let segment = &segment_files(log.root())[0];
    assert_eq!(
        std::fs::metadata(segment).unwrap().len(),
        a.len() as u64 + 30,
        "the short write left 30 bytes of the batch"
    );
    assert!(
        log.read(0, usize::MAX).is_err(),
        "a failed log serves nothing"
    );

    // A process crash keeps the torn bytes; the restart cuts them (they were never flushed,
    // never acknowledged) and the node fetches the rest from the leader again.
    let mut log = log.crash_faulty(false);
    let truncation = log.log().recovery_report().truncation.clone().unwrap();
    assert_eq!(
        (truncation.first_dropped_offset, truncation.dropped_bytes),
        (2, 30)
    );
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(2, 1));
    log.append_as_follower(&b).unwrap();
    log.flush().unwrap();
    assert_eq!(log.flushed_end_offset(), 5);
}

#[test]
fn enospc_on_the_roll_to_a_new_segment_stops_the_log() {
    let mut log = TestLog::faulty(small_segments(200));
    append(&mut log, 1, 4, 1);
    log.flush().unwrap();
    // The next batch rolls a segment: its first write fails.
    log.fs()
        .inject(Fault::write("00000000000000000004.log", ENOSPC).times(1));
    let next = kraftwerk_raft::testing::suite::data_batch(4, 1, 4, 2);
    let err = log.append_as_leader(&next, 1).unwrap_err().to_string();
    assert!(
        err.contains("00000000000000000004.log (write at position 0, log offsets from 4"),
        "{err}"
    );
    let log = log.crash_faulty(true);
    assert_eq!(log.end_offset().offset, 4);
}

#[test]
fn a_flipped_byte_in_a_sealed_segment_is_refused_at_read_and_at_a_reopen_without_index() {
    let mut log = TestLog::faulty(small_segments(200));
    for tag in 1..=4 {
        append(&mut log, 1, 4, tag);
    }
    log.flush().unwrap();
    assert!(
        log.log().segment_base_offsets().len() >= 3,
        "sealed segments"
    );
    let (path, position, size) = batch_on_disk(log.root(), 4);
    flip_byte(&path, position + size / 2);

    // Running: the read that would serve it fails, naming the file and the position.
    let err = log.read(4, usize::MAX).unwrap_err();
    assert!(
        matches!(err, LogError::CorruptBatch { offset: 4, .. }),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&format!("{} at position {position}", path.display())),
        "{text}"
    );

    // Restarted on the same directory: the index was verified, so the damage is found by the
    // first read again (never served); without the index the open itself refuses, naming it.
    log.reopen_after(|_| {});
    assert_eq!(log.log().recovery_report().index, IndexRecovery::Verified);
    assert!(matches!(
        log.read(4, usize::MAX),
        Err(LogError::CorruptBatch { offset: 4, .. })
    ));
    let err = log
        .try_reopen_after(|dir| std::fs::remove_dir_all(dir.join("kraftwerk-index")).unwrap())
        .unwrap_err();
    assert!(
        matches!(&err, StorageError::CorruptBatch { position: p, offset: 4, .. } if *p == position),
        "{err}"
    );
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}

#[test]
fn a_sealed_segment_cut_short_is_refused_at_a_reopen_naming_the_file() {
    let mut log = TestLog::faulty(small_segments(200));
    for tag in 1..=4 {
        append(&mut log, 1, 4, tag);
    }
    log.flush().unwrap();
    let (path, position, size) = batch_on_disk(log.root(), 4);
    let err = log
        .try_reopen_after(|_| cut_file(&path, position + size / 2))
        .unwrap_err();
    assert!(
        matches!(&err, StorageError::CorruptBatch { position: p, offset: 4, .. } if *p == position),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(
        text.contains("empty it so that the node fetches the log"),
        "{text}"
    );
}

#[test]
fn the_hot_path_opens_no_file() {
    let mut log = TestLog::faulty(LogConfig::default());
    append(&mut log, 1, 2, 1);
    log.flush().unwrap();
    let opens = log.fs().opens();
    for tag in 2..20 {
        append(&mut log, 1, 3, tag);
        log.flush().unwrap();
        log.read(0, usize::MAX).unwrap();
    }
    log.truncate_to(10).unwrap();
    log.flush().unwrap();
    assert_eq!(
        log.fs().opens(),
        opens,
        "opened on the hot path: {:?}",
        &log.fs().opened_paths()[opens..]
    );
}
