//! The storage conformance suite: every [`ReplicatedLog`] implementation must pass it.
//!
//! Each case is a public function taking a factory of empty logs, so an implementation runs the
//! suite either in one test ([`log_suite`]) or as one `#[test]` per case with
//! [`log_conformance_tests!`](crate::log_conformance_tests). Expected values follow Kafka:
//! `UnifiedLog.appendAsLeader/appendAsFollower` for appends, `LogSegment.read` for reads
//! (whole batches here), `LeaderEpochFileCache.endOffsetFor` + `KafkaMetadataLog.endOffsetForEpoch`
//! for epochs and `MockLog.reopen` for crashes.
//!
//! Semantics the suite pins down beyond the trait docs:
//! - an append is atomic: a rejected append leaves the log unchanged;
//! - a follower append ignores an incomplete trailing batch (a Java leader cuts Fetch responses
//!   at the byte limit), a leader append rejects it;
//! - batch epochs never decrease;
//! - `truncate_to` is durable when it returns, and the epoch cache is truncated at the resulting
//!   end offset (so [`ReplicatedLog::end_offset`]'s epoch is always the last batch's);
//! - after a crash, whatever recovery kept counts as flushed.
//!
//! The snapshot cases ([`snapshots`]) follow `KafkaMetadataLog` (`truncateToLatestSnapshot`,
//! `deleteBeforeSnapshot`, `maybeClean`, `endOffsetForEpoch`, `recoverSnapshots`) and pin down:
//! - a snapshot is listed only once its sink finished and it was registered; a finished one
//!   survives a crash, registered or not; a partial one never does;
//! - after a restart the log start offset may be lower than before (the first segment's base
//!   offset: Kafka does not persist it), but never above a snapshot's end offset, and a log
//!   start above 0 always has a snapshot at or after it (case C06).

use bytes::{Bytes, BytesMut};
use kraftwerk_records::batch::BatchBuilder;

use crate::storage::{LogAppendInfo, LogError, OffsetAndEpoch, ReplicatedLog};

mod faults;
mod snapshots;

pub use faults::*;
pub use snapshots::*;

/// A log the suite can crash and reopen, to check durability.
pub trait CrashableLog: ReplicatedLog + Sized {
    /// Crash of the process and of the machine: every byte not made durable by
    /// [`ReplicatedLog::flush`] is lost. Reopens the log (running recovery) and returns it.
    fn crash_and_reopen(self) -> Self;

    /// Crash where the disk had already written the first `rng_value % (unflushed_bytes + 1)`
    /// bytes appended since the last flush, possibly ending mid-batch. Reopens the log
    /// (recovery must drop the torn batch) and returns it.
    fn crash_torn_and_reopen(self, rng_value: u64) -> Self;

    /// Flushes, shuts down cleanly and reopens the log with `metadata.max.retention.bytes =
    /// retention_bytes` and `metadata.max.retention.ms = retention_ms` (-1 = unbounded).
    fn restart_with_retention(self, retention_bytes: i64, retention_ms: i64) -> Self;

    /// Bytes of all segments, including those below the log start offset not deleted yet
    /// (Kafka `UnifiedLog.size`, what `metadata.max.retention.bytes` counts).
    fn log_size_bytes(&self) -> u64;
}

/// A data batch of `records` records starting at `base_offset`, written in `epoch`. Record
/// values embed `tag`, so batches covering the same offsets with different tags differ.
pub fn data_batch(base_offset: i64, epoch: i32, records: usize, tag: u8) -> Bytes {
    assert!(records > 0, "a batch holds at least one record");
    let mut builder = BatchBuilder::new(base_offset, epoch, 1_700_000_000_000 + base_offset);
    for i in 0..records {
        let value = [tag, i as u8, 0xAB, (base_offset & 0xFF) as u8, epoch as u8];
        builder.append(None, &value);
    }
    builder.build()
}

/// Concatenates batches into one append.
pub fn concat(batches: &[&Bytes]) -> Bytes {
    let mut out = BytesMut::new();
    for batch in batches {
        out.extend_from_slice(batch);
    }
    out.freeze()
}

/// Appends one batch of `records` records at the log end offset as leader of `epoch`, returns it.
fn append_leader<L: ReplicatedLog>(log: &mut L, epoch: i32, records: usize, tag: u8) -> Bytes {
    let batch = data_batch(log.end_offset().offset, epoch, records, tag);
    let info = log.append_as_leader(&batch, epoch).expect("leader append");
    assert_eq!(info.last_offset - info.first_offset + 1, records as i64);
    batch
}

fn read_all<L: ReplicatedLog>(log: &L) -> Bytes {
    log.read(log.start_offset(), usize::MAX)
        .expect("read from the log start offset")
}

/// Asserts a rejected append left the log exactly as it was.
fn assert_unchanged<L: ReplicatedLog>(log: &L, end: OffsetAndEpoch, bytes: &Bytes, what: &str) {
    assert_eq!(
        log.end_offset(),
        end,
        "{what}: end offset changed by a rejected append"
    );
    assert_eq!(
        &read_all(log),
        bytes,
        "{what}: contents changed by a rejected append"
    );
}

/// A new log is empty at offset 0, epoch 0, and reading at its end returns nothing.
pub fn empty_log<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let log = make();
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(0, 0));
    assert_eq!(log.start_offset(), 0);
    assert_eq!(log.flushed_end_offset(), 0);
    assert!(log.read(0, usize::MAX).unwrap().is_empty());
    assert!(matches!(
        log.read(1, 100),
        Err(LogError::OffsetOutOfRange {
            offset: 1,
            start: 0,
            end: 0
        })
    ));
    for epoch in [-1, 0, 1, 5] {
        assert_eq!(
            log.end_offset_for_epoch(epoch),
            OffsetAndEpoch::new(0, 0),
            "epoch {epoch}"
        );
    }
}

/// Leader appends take batches at the LEO in the leader's epoch and report their offsets.
pub fn append_as_leader<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let a = data_batch(0, 1, 3, 1);
    let b = data_batch(3, 1, 2, 2);
    let info = log.append_as_leader(&concat(&[&a, &b]), 1).unwrap();
    assert_eq!(
        info,
        LogAppendInfo {
            first_offset: 0,
            last_offset: 4
        }
    );
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(5, 1));
    let c = data_batch(5, 2, 1, 3);
    assert_eq!(
        log.append_as_leader(&c, 2).unwrap(),
        LogAppendInfo {
            first_offset: 5,
            last_offset: 5
        }
    );
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(6, 2));
    assert_eq!(read_all(&log), concat(&[&a, &b, &c]));
}

/// The leader path rejects batches not stamped with the leader's epoch, epochs below the log's
/// latest, and incomplete batches (Kafka: `InvalidRecordException` "did not set the batch epoch").
pub fn append_as_leader_rejects_bad_epochs<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let first = append_leader(&mut log, 3, 2, 1);
    let (end, bytes) = (log.end_offset(), read_all(&log));

    let stamped_4 = data_batch(2, 4, 1, 2);
    let err = log.append_as_leader(&stamped_4, 5).unwrap_err();
    assert!(
        matches!(err, LogError::CorruptBatch { offset: 2, .. }),
        "{err}"
    );
    assert_unchanged(
        &log,
        end,
        &bytes,
        "batch epoch differs from the leader epoch",
    );

    let old_epoch = data_batch(2, 2, 1, 2);
    let err = log.append_as_leader(&old_epoch, 2).unwrap_err();
    assert!(
        matches!(err, LogError::CorruptBatch { offset: 2, .. }),
        "{err}"
    );
    assert_unchanged(&log, end, &bytes, "epoch below the latest epoch");

    let next = data_batch(2, 3, 1, 2);
    let err = log
        .append_as_leader(&next[..next.len() - 1], 3)
        .unwrap_err();
    assert!(matches!(err, LogError::CorruptBatch { .. }), "{err}");
    let err = log
        .append_as_leader(
            &concat(&[&next, &data_batch(3, 3, 1, 3)])[..next.len() + 20],
            3,
        )
        .unwrap_err();
    assert!(matches!(err, LogError::CorruptBatch { .. }), "{err}");
    assert_unchanged(&log, end, &bytes, "incomplete leader batch");
    assert_eq!(bytes, first);
}

/// Both paths require the first base offset to be the LEO and batches to be contiguous; a
/// rejected append writes nothing, not even its valid first batches.
pub fn append_rejects_offset_errors<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    append_leader(&mut log, 1, 3, 1);
    let (end, bytes) = (log.end_offset(), read_all(&log));

    for base in [2, 4, 100] {
        let err = log
            .append_as_follower(&data_batch(base, 1, 1, 2))
            .unwrap_err();
        assert!(
            matches!(err, LogError::UnexpectedAppendOffset { first_offset, log_end_offset: 3 } if first_offset == base),
            "follower append at {base}: {err}"
        );
        let err = log
            .append_as_leader(&data_batch(base, 1, 1, 2), 1)
            .unwrap_err();
        assert!(
            matches!(err, LogError::UnexpectedAppendOffset { .. }),
            "leader append at {base}: {err}"
        );
    }
    assert_unchanged(&log, end, &bytes, "append off the log end");

    let gap = concat(&[&data_batch(3, 1, 2, 2), &data_batch(6, 1, 1, 3)]);
    let err = log.append_as_follower(&gap).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::OffsetsOutOfOrder {
                expected: 5,
                found: 6
            }
        ),
        "{err}"
    );
    let overlap = concat(&[&data_batch(3, 1, 2, 2), &data_batch(4, 1, 1, 3)]);
    let err = log.append_as_leader(&overlap, 1).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::OffsetsOutOfOrder {
                expected: 5,
                found: 4
            }
        ),
        "{err}"
    );
    assert_unchanged(&log, end, &bytes, "non-contiguous append");

    let err = log.append_as_follower(&[]).unwrap_err();
    assert!(matches!(err, LogError::CorruptBatch { .. }), "{err}");
    let err = log.append_as_leader(&[], 1).unwrap_err();
    assert!(matches!(err, LogError::CorruptBatch { .. }), "{err}");
    assert_unchanged(&log, end, &bytes, "empty append");
}

/// Follower appends keep the leader's epochs, reject CRC failures and decreasing epochs
/// atomically, and ignore an incomplete trailing batch.
pub fn append_as_follower<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let a = data_batch(0, 1, 2, 1);
    let b = data_batch(2, 1, 1, 2);
    let c = data_batch(3, 4, 3, 3);
    let info = log.append_as_follower(&concat(&[&a, &b, &c])).unwrap();
    assert_eq!(
        info,
        LogAppendInfo {
            first_offset: 0,
            last_offset: 5
        }
    );
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(6, 4));
    let (end, bytes) = (log.end_offset(), read_all(&log));

    // A flipped byte inside the records of the second batch fails its CRC.
    let d = data_batch(6, 4, 1, 4);
    let mut e = data_batch(7, 4, 2, 5).to_vec();
    let last = e.len() - 3;
    e[last] ^= 0x40;
    let err = log
        .append_as_follower(&concat(&[&d, &Bytes::from(e)]))
        .unwrap_err();
    assert!(
        matches!(err, LogError::CorruptBatch { offset: 7, .. }),
        "{err}"
    );
    assert_unchanged(&log, end, &bytes, "CRC failure");

    let lower = concat(&[&data_batch(6, 4, 1, 4), &data_batch(7, 3, 1, 5)]);
    let err = log.append_as_follower(&lower).unwrap_err();
    assert!(
        matches!(err, LogError::CorruptBatch { offset: 7, .. }),
        "{err}"
    );
    let err = log.append_as_follower(&data_batch(6, 2, 1, 4)).unwrap_err();
    assert!(
        matches!(err, LogError::CorruptBatch { offset: 6, .. }),
        "{err}"
    );
    assert_unchanged(&log, end, &bytes, "decreasing epoch");

    // Only an incomplete batch: nothing to append.
    let f = data_batch(7, 5, 2, 6);
    let err = log.append_as_follower(&f[..f.len() - 1]).unwrap_err();
    assert!(matches!(err, LogError::CorruptBatch { .. }), "{err}");
    assert_unchanged(&log, end, &bytes, "incomplete batch only");

    // A complete batch followed by part of the next: the complete one is appended.
    let both = concat(&[&d, &f]);
    let info = log.append_as_follower(&both[..d.len() + 30]).unwrap();
    assert_eq!(
        info,
        LogAppendInfo {
            first_offset: 6,
            last_offset: 6
        }
    );
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(7, 4));
    assert_eq!(read_all(&log), concat(&[&a, &b, &c, &d]));
}

/// Reads return whole batches from the one containing the requested offset, whether the
/// offset is a batch's base, its middle or its last offset.
pub fn read_at_batch_boundaries_and_mid_batch<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let batches = [
        append_leader(&mut log, 1, 3, 1), // 0..=2
        append_leader(&mut log, 1, 1, 2), // 3
        append_leader(&mut log, 2, 5, 3), // 4..=8
        append_leader(&mut log, 2, 2, 4), // 9..=10
    ];
    let ranges = [(0, 2), (3, 3), (4, 8), (9, 10)];
    for offset in 0..=10 {
        let containing = ranges
            .iter()
            .position(|&(lo, hi)| lo <= offset && offset <= hi)
            .unwrap();
        let expected = concat(&batches[containing..].iter().collect::<Vec<_>>());
        assert_eq!(
            log.read(offset, usize::MAX).unwrap(),
            expected,
            "read at offset {offset}"
        );
    }
    assert!(
        log.read(11, usize::MAX).unwrap().is_empty(),
        "read at the LEO"
    );
    for offset in [12, 1000, -1] {
        let err = log.read(offset, usize::MAX).unwrap_err();
        assert!(
            matches!(
                err,
                LogError::OffsetOutOfRange {
                    start: 0,
                    end: 11,
                    ..
                }
            ),
            "read at {offset}: {err}"
        );
    }
}

/// `max_bytes` bounds the whole batches returned, but at least one batch always comes back.
pub fn read_respects_max_bytes<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let a = append_leader(&mut log, 1, 4, 1);
    let b = append_leader(&mut log, 1, 2, 2);
    let c = append_leader(&mut log, 1, 6, 3);
    let (la, lb, lc) = (a.len(), b.len(), c.len());
    let cases: [(i64, usize, Vec<&Bytes>); 9] = [
        (0, 0, vec![&a]),
        (0, 1, vec![&a]),
        (0, la, vec![&a]),
        (0, la + lb - 1, vec![&a]),
        (0, la + lb, vec![&a, &b]),
        (0, la + lb + lc, vec![&a, &b, &c]),
        (2, la + lb + lc - 1, vec![&a, &b]),
        (5, lb, vec![&b]),
        (6, 0, vec![&c]),
    ];
    for (offset, max_bytes, expected) in cases {
        assert_eq!(
            log.read(offset, max_bytes).unwrap(),
            concat(&expected),
            "read({offset}, {max_bytes})"
        );
    }
}

/// Truncation inside a batch removes the whole batch; at a boundary it removes exactly the
/// batches from there; past the end it does nothing; below the start it fails.
pub fn truncate_to_mid_batch_and_boundary<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let a = append_leader(&mut log, 1, 3, 1); // 0..=2
    let b = append_leader(&mut log, 1, 3, 2); // 3..=5
    let c = append_leader(&mut log, 1, 3, 3); // 6..=8
    log.truncate_to(100).unwrap();
    log.truncate_to(9).unwrap();
    assert_eq!(
        log.end_offset(),
        OffsetAndEpoch::new(9, 1),
        "truncate at or past the LEO is a no-op"
    );
    assert_eq!(read_all(&log), concat(&[&a, &b, &c]));

    log.truncate_to(6).unwrap();
    assert_eq!(
        log.end_offset(),
        OffsetAndEpoch::new(6, 1),
        "truncate at a batch boundary"
    );
    assert_eq!(read_all(&log), concat(&[&a, &b]));

    log.truncate_to(4).unwrap();
    assert_eq!(
        log.end_offset(),
        OffsetAndEpoch::new(3, 1),
        "mid-batch truncation removes the batch"
    );
    assert_eq!(read_all(&log), a);
    assert!(matches!(
        log.read(4, 10),
        Err(LogError::OffsetOutOfRange { .. })
    ));

    let err = log.truncate_to(-1).unwrap_err();
    assert!(
        matches!(err, LogError::OffsetOutOfRange { offset: -1, .. }),
        "{err}"
    );

    // The log accepts new data at the new end, different from what was removed.
    let b2 = append_leader(&mut log, 2, 1, 9);
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(4, 2));
    assert_eq!(read_all(&log), concat(&[&a, &b2]));

    log.truncate_to(0).unwrap();
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(0, 0));
    assert!(read_all(&log).is_empty());
    append_leader(&mut log, 1, 1, 10);
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(1, 1));
}

/// Truncating across epochs removes their epoch-cache entries: the end offset's epoch is the
/// last remaining batch's, and `end_offset_for_epoch` forgets the removed epochs.
pub fn truncate_to_across_epochs<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    append_leader(&mut log, 1, 2, 1); // 0..=1
    append_leader(&mut log, 2, 2, 2); // 2..=3
    append_leader(&mut log, 2, 2, 3); // 4..=5
    append_leader(&mut log, 4, 2, 4); // 6..=7
    assert_eq!(log.end_offset_for_epoch(2), OffsetAndEpoch::new(6, 2));

    log.truncate_to(7).unwrap(); // inside the only epoch-4 batch
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(6, 2));
    assert_eq!(log.end_offset_for_epoch(2), OffsetAndEpoch::new(6, 2));
    assert_eq!(
        log.end_offset_for_epoch(4),
        OffsetAndEpoch::new(6, 2),
        "epoch 4 is gone"
    );

    log.truncate_to(3).unwrap(); // inside the first epoch-2 batch
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(2, 1));
    assert_eq!(log.end_offset_for_epoch(2), OffsetAndEpoch::new(2, 1));

    // A new leader of a lower epoch than the removed ones may write again.
    append_leader(&mut log, 3, 1, 5);
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(3, 3));
    assert_eq!(log.end_offset_for_epoch(1), OffsetAndEpoch::new(2, 1));
    assert_eq!(log.end_offset_for_epoch(2), OffsetAndEpoch::new(2, 1));
    assert_eq!(log.end_offset_for_epoch(3), OffsetAndEpoch::new(3, 3));
}

/// Every case of `LeaderEpochFileCache.endOffsetFor` as `KafkaMetadataLog.endOffsetForEpoch`
/// exposes it (no snapshots).
pub fn end_offset_for_epoch<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    append_leader(&mut log, 1, 3, 1); // epoch 1 starts at 0
    append_leader(&mut log, 1, 2, 2);
    append_leader(&mut log, 3, 4, 3); // epoch 3 starts at 5
    append_leader(&mut log, 4, 3, 4); // epoch 4 starts at 9, LEO 12
    let cases = [
        // UNDEFINED_EPOCH: the cache answers undefined, KafkaMetadataLog falls back to
        // (LEO, last fetched epoch).
        (-1, 12, 4),
        // Below the first epoch: the requested epoch with the first epoch's start offset.
        (0, 0, 0),
        (-2, 0, -2),
        // A known epoch: its end is the next epoch's start.
        (1, 5, 1),
        // Between known epochs: the floor epoch and the next epoch's start.
        (2, 5, 1),
        (3, 9, 3),
        // The latest epoch ends at the LEO.
        (4, 12, 4),
        // Above the latest: undefined, so (LEO, latest epoch).
        (5, 12, 4),
        (i32::MAX, 12, 4),
    ];
    for (epoch, offset, answer_epoch) in cases {
        assert_eq!(
            log.end_offset_for_epoch(epoch),
            OffsetAndEpoch::new(offset, answer_epoch),
            "end_offset_for_epoch({epoch})"
        );
    }

    // A log whose first batch has epoch 2: epoch 1 gets offset 0 with its own epoch.
    let mut log = make();
    append_leader(&mut log, 2, 2, 1);
    assert_eq!(log.end_offset_for_epoch(1), OffsetAndEpoch::new(0, 1));
    assert_eq!(log.end_offset_for_epoch(2), OffsetAndEpoch::new(2, 2));
    assert_eq!(log.end_offset_for_epoch(3), OffsetAndEpoch::new(2, 2));
}

/// `flushed_end_offset` moves to the LEO on flush and never stays above the LEO.
pub fn flush_and_flushed_end_offset<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    log.flush().unwrap();
    assert_eq!(log.flushed_end_offset(), 0);
    append_leader(&mut log, 1, 3, 1);
    assert_eq!(
        log.flushed_end_offset(),
        0,
        "appends are not durable before flush"
    );
    log.flush().unwrap();
    assert_eq!(log.flushed_end_offset(), 3);
    log.flush().unwrap();
    assert_eq!(log.flushed_end_offset(), 3, "flush is idempotent");
    append_leader(&mut log, 1, 2, 2);
    append_leader(&mut log, 2, 2, 3);
    assert_eq!(log.flushed_end_offset(), 3);
    log.truncate_to(5).unwrap();
    assert_eq!(
        log.flushed_end_offset(),
        3,
        "truncating unflushed data keeps the flushed end"
    );
    log.truncate_to(1).unwrap();
    assert_eq!(
        log.flushed_end_offset(),
        0,
        "the flushed end never exceeds the LEO"
    );
    append_leader(&mut log, 2, 1, 4);
    log.flush().unwrap();
    assert_eq!(log.flushed_end_offset(), 1);
}

/// A crash loses exactly the unflushed appends; the flushed prefix and its epochs survive and
/// the log takes new data at the recovered end.
pub fn crash_loses_only_unflushed<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let a = append_leader(&mut log, 1, 3, 1);
    let b = append_leader(&mut log, 2, 2, 2);
    log.flush().unwrap();
    append_leader(&mut log, 3, 2, 3);
    append_leader(&mut log, 3, 1, 4);
    let mut log = log.crash_and_reopen();
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(5, 2));
    assert_eq!(log.flushed_end_offset(), 5);
    assert_eq!(read_all(&log), concat(&[&a, &b]));
    assert_eq!(
        log.end_offset_for_epoch(3),
        OffsetAndEpoch::new(5, 2),
        "epoch 3 was never durable"
    );
    assert_eq!(log.end_offset_for_epoch(1), OffsetAndEpoch::new(3, 1));

    let c = append_leader(&mut log, 4, 2, 5);
    log.flush().unwrap();
    let log = log.crash_and_reopen();
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(7, 4));
    assert_eq!(read_all(&log), concat(&[&a, &b, &c]));
    assert_eq!(log.end_offset_for_epoch(2), OffsetAndEpoch::new(5, 2));
}

/// A fully flushed log reopens identical: contents, end offset, epochs, flushed end.
pub fn reopen_preserves_flushed_log<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    for (epoch, records) in [(1, 3), (1, 1), (2, 4), (5, 2), (5, 7)] {
        append_leader(&mut log, epoch, records, epoch as u8);
    }
    log.flush().unwrap();
    let bytes = read_all(&log);
    let epochs: Vec<_> = (-1..7).map(|e| log.end_offset_for_epoch(e)).collect();
    let log = log.crash_and_reopen();
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(17, 5));
    assert_eq!(log.flushed_end_offset(), 17);
    assert_eq!(read_all(&log), bytes);
    assert_eq!(
        (-1..7)
            .map(|e| log.end_offset_for_epoch(e))
            .collect::<Vec<_>>(),
        epochs
    );
    assert_eq!(
        log.read(12, 1).unwrap(),
        log.read(11, 1).unwrap(),
        "reads after reopen find batches"
    );
}

/// Truncation is durable: data removed by `truncate_to` never comes back after a crash, even
/// when the same offsets were rewritten and not yet flushed.
pub fn crash_after_truncate_keeps_truncation<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let a = append_leader(&mut log, 1, 2, 1);
    append_leader(&mut log, 2, 2, 2);
    log.flush().unwrap();
    log.truncate_to(2).unwrap();
    append_leader(&mut log, 3, 3, 3); // unflushed, covers the removed offsets
    let mut log = log.crash_and_reopen();
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(2, 1));
    assert_eq!(read_all(&log), a);

    append_leader(&mut log, 3, 1, 4);
    log.flush().unwrap();
    log.truncate_to(0).unwrap();
    let log = log.crash_and_reopen();
    assert_eq!(
        log.end_offset(),
        OffsetAndEpoch::new(0, 0),
        "truncation to 0 is durable too"
    );
    assert!(read_all(&log).is_empty());
}

/// A torn crash keeps the flushed prefix plus the whole batches the disk managed to write;
/// recovery drops the torn batch, and everything left is durable and appendable.
pub fn torn_crash_keeps_whole_batches<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let build = |make: &mut dyn FnMut() -> L| {
        let mut log = make();
        let flushed = append_leader(&mut log, 1, 2, 1); // 0..=1
        log.flush().unwrap();
        let unflushed = vec![
            append_leader(&mut log, 1, 3, 2), // 2..=4
            append_leader(&mut log, 2, 1, 3), // 5
            append_leader(&mut log, 2, 4, 4), // 6..=9
        ];
        (log, flushed, unflushed)
    };
    let (log, _, unflushed) = build(&mut make);
    drop(log);
    let sizes: Vec<u64> = unflushed.iter().map(|b| b.len() as u64).collect();
    let total: u64 = sizes.iter().sum();
    let boundaries = [0, sizes[0], sizes[0] + sizes[1], total];
    let keeps = [
        0,
        1,
        60,
        sizes[0] - 1,
        sizes[0],
        sizes[0] + 1,
        sizes[0] + sizes[1],
        total - 1,
        total,
        total + 1,
    ];
    for keep in keeps {
        let (log, flushed, unflushed) = build(&mut make);
        let mut log = log.crash_torn_and_reopen(keep);
        let kept_bytes = keep % (total + 1);
        let whole = boundaries.iter().rposition(|&b| b <= kept_bytes).unwrap();
        let ends = [2, 5, 6, 10];
        let epochs = [1, 1, 2, 2];
        assert_eq!(
            log.end_offset(),
            OffsetAndEpoch::new(ends[whole], epochs[whole]),
            "torn crash keeping {kept_bytes} of {total} unflushed bytes"
        );
        assert_eq!(
            log.flushed_end_offset(),
            ends[whole],
            "recovered data counts as flushed"
        );
        let mut expected = vec![&flushed];
        expected.extend(unflushed[..whole].iter());
        assert_eq!(
            read_all(&log),
            concat(&expected),
            "keeping {kept_bytes} bytes"
        );
        let next = append_leader(&mut log, 3, 1, 9);
        assert_eq!(log.read(ends[whole], usize::MAX).unwrap(), next);
    }
}

/// Runs every case of the suite, in order.
pub fn log_suite<L: CrashableLog>(mut make: impl FnMut() -> L) {
    empty_log(&mut make);
    append_as_leader(&mut make);
    append_as_leader_rejects_bad_epochs(&mut make);
    append_rejects_offset_errors(&mut make);
    append_as_follower(&mut make);
    read_at_batch_boundaries_and_mid_batch(&mut make);
    read_respects_max_bytes(&mut make);
    truncate_to_mid_batch_and_boundary(&mut make);
    truncate_to_across_epochs(&mut make);
    end_offset_for_epoch(&mut make);
    flush_and_flushed_end_offset(&mut make);
    crash_loses_only_unflushed(&mut make);
    reopen_preserves_flushed_log(&mut make);
    crash_after_truncate_keeps_truncation(&mut make);
    torn_crash_keeps_whole_batches(&mut make);
    snapshot_write_register_read(&mut make);
    snapshot_invalid_rejected_at_finish(&mut make);
    snapshot_partial_never_survives(&mut make);
    truncate_to_latest_snapshot_ahead_by_epoch(&mut make);
    truncate_to_latest_snapshot_ahead_by_offset(&mut make);
    truncate_to_latest_snapshot_not_ahead(&mut make);
    delete_before_snapshot_moves_the_log_start(&mut make);
    delete_before_snapshot_at_the_log_end(&mut make);
    maybe_clean_by_size(&mut make);
    maybe_clean_by_time(&mut make);
    end_offsets_of_a_log_starting_at_a_snapshot(&mut make);
}

/// Expands to one `#[test]` per conformance case, each calling the case with `$make`, an
/// expression of type `impl FnMut() -> L` (for example `|| MemLog::new()`), where
/// `L: CrashableLog`. Use it inside a `#[cfg(test)] mod`.
#[macro_export]
macro_rules! log_conformance_tests {
    ($make:expr) => {
        $crate::log_conformance_tests!(@cases $make;
            empty_log, append_as_leader, append_as_leader_rejects_bad_epochs,
            append_rejects_offset_errors, append_as_follower, read_at_batch_boundaries_and_mid_batch,
            read_respects_max_bytes, truncate_to_mid_batch_and_boundary, truncate_to_across_epochs,
            end_offset_for_epoch, flush_and_flushed_end_offset, crash_loses_only_unflushed,
            reopen_preserves_flushed_log, crash_after_truncate_keeps_truncation,
            torn_crash_keeps_whole_batches, snapshot_write_register_read,
            snapshot_invalid_rejected_at_finish, snapshot_partial_never_survives,
            truncate_to_latest_snapshot_ahead_by_epoch, truncate_to_latest_snapshot_ahead_by_offset,
            truncate_to_latest_snapshot_not_ahead, delete_before_snapshot_moves_the_log_start,
            delete_before_snapshot_at_the_log_end, maybe_clean_by_size, maybe_clean_by_time,
            end_offsets_of_a_log_starting_at_a_snapshot);
    };
    (@cases $make:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::testing::suite::$case($make);
            }
        )*
    };
}
