//! Fault cases of the conformance suite (case C10): what a log does when its disk fails.
//!
//! - After a failed write or fsync the log accepts nothing more (no holes: a later append
//!   cannot land after a batch that is not on disk) and serves nothing, until it is reopened.
//! - The failing call's error is [`LogError::Io`]; nothing it was asked to do counts as
//!   flushed.
//! - A batch whose CRC fails is never served: a read that would return it fails with
//!   [`LogError::CorruptBatch`] naming its offset, and reads of the batches around it work.
//! - The same holds for snapshots: a FetchSnapshot chunk overlapping a damaged batch is never
//!   served, whatever its position and size.
//! - Reopening after a crash (the node restarting on a repaired disk) recovers exactly what
//!   was flushed before the fault, and the log works again.

use crate::storage::{LogError, OffsetAndEpoch};
use crate::testing::DiskFault;

use super::{append_leader, data_batch, read_all, snapshot_bytes, write_snapshot, CrashableLog};

/// A log whose disk the suite can make fail.
pub trait FaultyLog: CrashableLog {
    /// Arms `fault`: the next append ([`DiskFault::WriteFails`]) or flush
    /// ([`DiskFault::SyncFails`]) fails, and the disk keeps failing until the next crash, after
    /// which the log reopens on a repaired disk.
    fn inject(&mut self, fault: DiskFault);

    /// Damage at rest: flips a byte in the middle of the batch that holds `offset`, in place
    /// (bit rot, a bad sector, a stray write); the log is not told.
    fn flip_byte_in_batch(&mut self, offset: i64);

    /// Damage at rest: flips the byte at `position` of registered snapshot `id`, in place.
    fn flip_byte_in_snapshot(&mut self, id: OffsetAndEpoch, position: u64);
}

/// Every call that writes, and every read, fails on a log that failed.
fn assert_fenced<L: FaultyLog>(log: &mut L, what: &str) {
    let end = log.end_offset();
    let next = data_batch(end.offset, end.epoch.max(1), 1, 0xEE);
    assert!(
        log.append_as_leader(&next, end.epoch.max(1)).is_err(),
        "{what}: append accepted after a failed write"
    );
    assert!(
        log.append_as_follower(&next).is_err(),
        "{what}: follower append accepted after a failed write"
    );
    assert!(
        log.flush().is_err(),
        "{what}: flush succeeded after a failure"
    );
    assert!(
        log.read(log.start_offset(), usize::MAX).is_err(),
        "{what}: a failed log still serves reads"
    );
}

/// A failed append is an I/O error and fences the log; a restart keeps what was flushed.
pub fn failed_append_fences_the_log<L: FaultyLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let a = append_leader(&mut log, 1, 2, 1);
    log.flush().unwrap();
    log.inject(DiskFault::WriteFails);
    let b = data_batch(2, 1, 3, 2);
    let err = log.append_as_leader(&b, 1).unwrap_err();
    assert!(matches!(err, LogError::Io { .. }), "{err}");
    assert_eq!(log.flushed_end_offset(), 2);
    assert_fenced(&mut log, "after a failed append");

    let mut log = log.crash_and_reopen();
    assert_eq!(
        log.end_offset().offset,
        2,
        "nothing of the failed append survives"
    );
    assert_eq!(read_all(&log), a);
    let c = append_leader(&mut log, 1, 1, 3);
    log.flush().unwrap();
    let log = log.crash_and_reopen();
    assert_eq!(log.end_offset().offset, 3);
    assert_eq!(log.read(2, usize::MAX).unwrap(), c);
}

/// A failed flush is an I/O error, fences the log and flushes nothing; after a crash the log
/// holds exactly what the last successful flush made durable.
pub fn failed_flush_fences_the_log<L: FaultyLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let a = append_leader(&mut log, 1, 2, 1);
    log.flush().unwrap();
    append_leader(&mut log, 2, 3, 2);
    log.inject(DiskFault::SyncFails);
    let err = log.flush().unwrap_err();
    assert!(matches!(err, LogError::Io { .. }), "{err}");
    assert_eq!(
        log.flushed_end_offset(),
        2,
        "a failed flush made nothing durable"
    );
    assert_fenced(&mut log, "after a failed flush");

    let mut log = log.crash_and_reopen();
    assert_eq!(log.end_offset().offset, 2);
    assert_eq!(log.end_offset().epoch, 1, "epoch 2 never became durable");
    assert_eq!(read_all(&log), a);
    append_leader(&mut log, 3, 1, 3);
    log.flush().unwrap();
    assert_eq!(log.flushed_end_offset(), 3);
}

/// A failed write followed by a torn crash: whatever part of the unflushed
/// data reached the disk, the log comes back as a valid prefix that includes the flushed data.
pub fn failed_append_then_torn_crash<L: FaultyLog>(mut make: impl FnMut() -> L) {
    for rng_value in [0, 7, 100, u64::MAX] {
        let mut log = make();
        let a = append_leader(&mut log, 1, 2, 1);
        log.flush().unwrap();
        let b = append_leader(&mut log, 1, 2, 2);
        log.inject(DiskFault::WriteFails);
        assert!(log.append_as_leader(&data_batch(4, 1, 3, 3), 1).is_err());
        let log = log.crash_torn_and_reopen(rng_value);
        let end = log.end_offset().offset;
        assert!(end == 2 || end == 4, "{rng_value}: end {end}");
        let expected = if end == 2 {
            a.clone()
        } else {
            super::concat(&[&a, &b])
        };
        assert_eq!(read_all(&log), expected, "{rng_value}");
        assert_eq!(log.flushed_end_offset(), end);
    }
}

/// A byte flipped in a flushed batch in the middle of the log: every read that would return
/// that batch fails naming it, the batches before and after it still read.
pub fn flipped_byte_is_never_served<L: FaultyLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let a = append_leader(&mut log, 1, 2, 1);
    append_leader(&mut log, 1, 3, 2);
    let c = append_leader(&mut log, 2, 1, 3);
    log.flush().unwrap();
    log.flip_byte_in_batch(3);
    assert_eq!(
        log.read(0, 1).unwrap(),
        a,
        "the batch before the damage reads"
    );
    assert_eq!(
        log.read(5, usize::MAX).unwrap(),
        c,
        "the batch after it reads"
    );
    for (offset, max_bytes) in [(0, usize::MAX), (2, 1), (4, usize::MAX)] {
        match log.read(offset, max_bytes) {
            Err(LogError::CorruptBatch { offset: 2, .. }) => {}
            Ok(bytes) => panic!(
                "read({offset}) served {} bytes of a corrupt batch",
                bytes.len()
            ),
            Err(e) => panic!("read({offset}): expected CorruptBatch at offset 2, got {e}"),
        }
    }
}

/// A byte flipped in the middle of a registered snapshot: every chunk that overlaps the
/// damaged batch fails; chunks of the batches before and after it still read.
pub fn flipped_byte_in_a_snapshot_is_never_served<L: FaultyLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    for tag in 1..=3 {
        append_leader(&mut log, 1, 3, tag);
    }
    log.flush().unwrap();
    let id = OffsetAndEpoch::new(6, 1);
    let bytes = snapshot_bytes(1, 1_700_000_000_000, 3, 4, 7);
    write_snapshot(&mut log, id, &bytes);
    let mut ends = Vec::new();
    for item in kraftwerk_records::batch::batches(&bytes) {
        let (_, whole) = item.unwrap();
        ends.push(ends.last().copied().unwrap_or(0) + whole.len());
    }
    let (damaged_start, damaged_end) = (ends[1], ends[2]); // the second data batch
    log.flip_byte_in_snapshot(id, ((damaged_start + damaged_end) / 2) as u64);

    let read = |log: &L, position: usize, max_bytes: usize| {
        log.read_snapshot(id, position as u64, max_bytes)
    };
    assert_eq!(
        read(&log, 0, damaged_start).unwrap(),
        bytes[..damaged_start]
    );
    assert_eq!(
        read(&log, damaged_end, usize::MAX).unwrap(),
        bytes[damaged_end..]
    );
    for (position, max_bytes) in [
        (0, usize::MAX),
        (0, damaged_start + 1),
        (damaged_start, 1),
        (damaged_end - 1, 5),
        (damaged_start - 3, 4),
    ] {
        match read(&log, position, max_bytes) {
            Err(LogError::CorruptBatch { .. }) => {}
            Ok(b) => panic!(
                "chunk ({position}, {max_bytes}) served {} bytes of a corrupt batch",
                b.len()
            ),
            Err(e) => panic!("chunk ({position}, {max_bytes}): expected CorruptBatch, got {e}"),
        }
    }
}

/// Runs every fault case.
pub fn fault_suite<L: FaultyLog>(mut make: impl FnMut() -> L) {
    failed_append_fences_the_log(&mut make);
    failed_flush_fences_the_log(&mut make);
    failed_append_then_torn_crash(&mut make);
    flipped_byte_is_never_served(&mut make);
    flipped_byte_in_a_snapshot_is_never_served(&mut make);
}

/// Expands to one `#[test]` per fault case ([`FaultyLog`] logs), like
/// [`log_conformance_tests!`](crate::log_conformance_tests).
#[macro_export]
macro_rules! log_fault_tests {
    ($make:expr) => {
        $crate::log_conformance_tests!(@cases $make;
            failed_append_fences_the_log, failed_flush_fences_the_log,
            failed_append_then_torn_crash, flipped_byte_is_never_served,
            flipped_byte_in_a_snapshot_is_never_served);
    };
}
