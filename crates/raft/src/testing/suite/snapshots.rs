//! Conformance cases for snapshots (KIP-630) and the log start offset.

use bytes::{Bytes, BytesMut};
use kraftwerk_records::batch::BatchBuilder;
use kraftwerk_records::control::{control_batch, ControlRecord};

use super::{append_leader, concat, data_batch, read_all, CrashableLog};
use crate::storage::{LogError, OffsetAndEpoch, ReplicatedLog};

/// A valid snapshot file as Kafka's `RecordsSnapshotWriter` lays it out: a control batch holding
/// `SnapshotHeader{LastContainedLogTimestamp: timestamp_ms}` at offset 0, `data_batches` data
/// batches of `records_per_batch` records (values embed `tag`), and a control batch holding
/// `SnapshotFooter`; offsets from 0, every batch stamped with `epoch`.
pub fn snapshot_bytes(
    epoch: i32,
    timestamp_ms: i64,
    data_batches: usize,
    records_per_batch: usize,
    tag: u8,
) -> Bytes {
    let mut out = BytesMut::new();
    out.extend_from_slice(&control_batch(
        0,
        epoch,
        timestamp_ms,
        &[ControlRecord::snapshot_header(timestamp_ms)],
    ));
    let mut offset = 1;
    for b in 0..data_batches {
        let mut builder = BatchBuilder::new(offset, epoch, timestamp_ms);
        for r in 0..records_per_batch {
            builder.append(None, &[tag, b as u8, r as u8, 0x5A, 0xC3, 0x0F]);
        }
        offset = builder.next_offset();
        out.extend_from_slice(&builder.build());
    }
    out.extend_from_slice(&control_batch(
        offset,
        epoch,
        timestamp_ms,
        &[ControlRecord::snapshot_footer()],
    ));
    out.freeze()
}

/// Writes `bytes` as snapshot `id` in uneven chunks that do not follow batch boundaries, as
/// FetchSnapshot delivers them, finishes and registers it. Returns the size.
pub fn write_snapshot<L: ReplicatedLog>(log: &mut L, id: OffsetAndEpoch, bytes: &[u8]) -> u64 {
    let mut sink = log.create_snapshot(id).expect("create snapshot");
    assert_eq!(sink.position(), 0);
    let mut at = 0;
    for chunk in [1usize, 6, 100, 13].into_iter().cycle() {
        if at == bytes.len() {
            break;
        }
        let end = (at + chunk).min(bytes.len());
        sink.append(&bytes[at..end]).expect("append to snapshot");
        at = end;
        assert_eq!(sink.position(), at as u64);
    }
    let size = sink.finish().expect("finish snapshot");
    assert_eq!(size, bytes.len() as u64);
    log.register_snapshot(id).expect("register snapshot");
    size
}

fn id(offset: i64, epoch: i32) -> OffsetAndEpoch {
    OffsetAndEpoch::new(offset, epoch)
}

/// Nine flushed batches of two records: epoch 1 at 0..=5, epoch 3 at 6..=11, epoch 4 at
/// 12..=17 (log end offset 18). Returns the batches.
fn nine_batches<L: CrashableLog>(log: &mut L) -> Vec<Bytes> {
    let batches = [1, 1, 1, 3, 3, 3, 4, 4, 4]
        .iter()
        .enumerate()
        .map(|(i, &epoch)| append_leader(log, epoch, 2, i as u8))
        .collect();
    log.flush().unwrap();
    assert_eq!(log.end_offset(), id(18, 4));
    batches
}

/// The bytes of snapshot `id`, read back in 37-byte chunks.
fn read_back<L: ReplicatedLog>(log: &L, id: OffsetAndEpoch) -> Bytes {
    let size = log.snapshot_size_bytes(id).unwrap();
    let mut out = BytesMut::new();
    while (out.len() as u64) < size {
        let chunk = log.read_snapshot(id, out.len() as u64, 37).unwrap();
        assert!(
            !chunk.is_empty() && chunk.len() <= 37,
            "chunk of {}",
            chunk.len()
        );
        out.extend_from_slice(&chunk);
    }
    out.freeze()
}

fn assert_not_found<T: std::fmt::Debug>(result: Result<T, LogError>, id: OffsetAndEpoch) {
    assert!(
        matches!(result, Err(LogError::SnapshotNotFound { offset, epoch }) if offset == id.offset && epoch == id.epoch),
        "{result:?}"
    );
}

/// The C06 invariant: a log start above 0 has a snapshot at or after it, and the log start
/// never passes the latest snapshot's end.
fn assert_log_start_covered<L: ReplicatedLog>(log: &L) {
    let start = log.start_offset();
    let ids = log.snapshot_ids();
    if start > 0 {
        assert!(
            ids.iter().any(|s| s.offset >= start),
            "log start {start} not covered by {ids:?}"
        );
    }
    assert!(
        ids.iter().all(|s| s.offset >= start),
        "snapshot below the log start {start}: {ids:?}"
    );
}

/// A snapshot is written in arbitrary chunks, listed only after `finish` and
/// `register_snapshot`, read back by position in chunks that ignore batch boundaries, and
/// survives a crash.
pub fn snapshot_write_register_read<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    nine_batches(&mut log);
    let a = id(6, 1);
    let a_bytes = snapshot_bytes(1, 1_700_000_000_005, 3, 4, 1);
    let mut sink = log.create_snapshot(a).unwrap();
    sink.append(&a_bytes[..1]).unwrap();
    sink.append(&a_bytes[1..70]).unwrap();
    sink.append(&a_bytes[70..]).unwrap();
    assert_eq!(sink.position(), a_bytes.len() as u64);
    assert!(log.snapshot_ids().is_empty(), "listed before finish");
    assert_not_found(log.register_snapshot(a), a);
    assert_eq!(sink.finish().unwrap(), a_bytes.len() as u64);
    assert!(
        log.snapshot_ids().is_empty(),
        "listed before register_snapshot"
    );
    assert!(
        log.create_snapshot(a).is_err(),
        "a finished snapshot exists already"
    );
    log.register_snapshot(a).unwrap();
    log.register_snapshot(a).unwrap();
    assert_eq!(log.snapshot_ids(), vec![a]);
    assert_eq!(
        (log.latest_snapshot_id(), log.earliest_snapshot_id()),
        (Some(a), Some(a))
    );
    assert_eq!(log.snapshot_size_bytes(a).unwrap(), a_bytes.len() as u64);
    assert_eq!(read_back(&log, a), a_bytes);
    let len = a_bytes.len() as u64;
    assert_eq!(
        log.read_snapshot(a, len - 3, 100).unwrap(),
        a_bytes.slice(a_bytes.len() - 3..)
    );
    assert!(
        log.read_snapshot(a, len, 100).unwrap().is_empty(),
        "read at the end"
    );
    assert!(
        log.read_snapshot(a, 5, 0).unwrap().is_empty(),
        "zero max_bytes"
    );
    assert_eq!(log.read_snapshot(a, 5, 10).unwrap(), a_bytes.slice(5..15));

    let unknown = id(8, 3);
    assert_not_found(log.snapshot_size_bytes(unknown), unknown);
    assert_not_found(log.read_snapshot(unknown, 0, 10), unknown);
    assert_not_found(log.register_snapshot(unknown), unknown);
    assert!(
        log.create_snapshot(a).is_err(),
        "a registered snapshot exists already"
    );

    let b = id(12, 3);
    let b_bytes = snapshot_bytes(3, 1_700_000_000_011, 5, 3, 2);
    write_snapshot(&mut log, b, &b_bytes);
    assert_eq!(log.snapshot_ids(), vec![a, b]);
    assert_eq!(
        (log.earliest_snapshot_id(), log.latest_snapshot_id()),
        (Some(a), Some(b))
    );
    // Snapshots do not change the log.
    assert_eq!(log.start_offset(), 0);
    assert_eq!(log.end_offset(), id(18, 4));

    let log = log.crash_and_reopen();
    assert_eq!(log.snapshot_ids(), vec![a, b]);
    assert_eq!(read_back(&log, a), a_bytes);
    assert_eq!(read_back(&log, b), b_bytes);
    assert_eq!(log.end_offset(), id(18, 4));
}

/// `finish` rejects anything that is not a whole snapshot; nothing is listed or registrable
/// afterwards, and the id can be written again correctly.
pub fn snapshot_invalid_rejected_at_finish<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    nine_batches(&mut log);
    let target = id(6, 1);
    let ts = 1_700_000_000_005;
    let good = snapshot_bytes(1, ts, 2, 3, 7);
    let header = control_batch(0, 1, ts, &[ControlRecord::snapshot_header(ts)]);
    let footer_at = |offset: i64| control_batch(offset, 1, ts, &[ControlRecord::snapshot_footer()]);
    let mut corrupt_middle = good.to_vec();
    let middle = header.len() + 70;
    corrupt_middle[middle] ^= 0x10;
    let shifted = {
        // The same layout with offsets starting at 5.
        let data = data_batch(6, 1, 3, 7);
        concat(&[
            &control_batch(5, 1, ts, &[ControlRecord::snapshot_header(ts)]),
            &data,
            &footer_at(9),
        ])
    };
    let cases: Vec<(&str, Bytes)> = vec![
        ("empty", Bytes::new()),
        (
            "no header batch",
            concat(&[&data_batch(0, 1, 3, 7), &footer_at(3)]),
        ),
        (
            "header batch not starting with SnapshotHeader",
            concat(&[
                &control_batch(
                    0,
                    1,
                    ts,
                    &[
                        ControlRecord::kraft_version(1),
                        ControlRecord::snapshot_header(ts),
                    ],
                ),
                &footer_at(2),
            ]),
        ),
        ("no footer", concat(&[&header, &data_batch(1, 1, 3, 7)])),
        (
            "footer followed by data",
            concat(&[&good, &data_batch(8, 1, 1, 7)]),
        ),
        ("torn last batch", good.slice(..good.len() - 1)),
        ("torn in the middle", good.slice(..header.len() + 30)),
        (
            "trailing bytes",
            concat(&[&good, &Bytes::from_static(&[0, 0, 0])]),
        ),
        ("bad CRC in a data batch", Bytes::from(corrupt_middle)),
        ("offsets not starting at 0", shifted),
        (
            "gap between batches",
            concat(&[&header, &data_batch(2, 1, 3, 7), &footer_at(5)]),
        ),
        ("garbage", Bytes::from(vec![0xFF; 200])),
    ];
    for (what, bytes) in cases {
        let mut sink = log.create_snapshot(target).unwrap();
        for chunk in bytes.chunks(50) {
            sink.append(chunk).unwrap();
        }
        assert_eq!(
            sink.position(),
            bytes.len() as u64,
            "{what}: position counts every byte"
        );
        let err = sink.finish().unwrap_err();
        assert!(
            matches!(
                err,
                LogError::InvalidSnapshot {
                    offset: 6,
                    epoch: 1,
                    ..
                }
            ),
            "{what}: {err}"
        );
        assert!(log.snapshot_ids().is_empty(), "{what}: listed");
        assert_not_found(log.register_snapshot(target), target);
    }
    write_snapshot(&mut log, target, &good);
    assert_eq!(log.snapshot_ids(), vec![target]);
    assert_eq!(read_back(&log, target), good);
}

/// A sink dropped unfinished, or interrupted by a crash, leaves no snapshot; a finished but
/// unregistered snapshot is complete and is found after a crash.
pub fn snapshot_partial_never_survives<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    nine_batches(&mut log);
    let a = id(6, 1);
    let a_bytes = snapshot_bytes(1, 1_700_000_000_005, 4, 2, 3);
    let half = a_bytes.len() / 2;

    let mut sink = log.create_snapshot(a).unwrap();
    sink.append(&a_bytes[..half]).unwrap();
    drop(sink);
    assert_not_found(log.register_snapshot(a), a);

    let mut sink = log.create_snapshot(a).unwrap();
    sink.append(&a_bytes[..half]).unwrap();
    let mut log = log.crash_and_reopen();
    assert!(
        log.snapshot_ids().is_empty(),
        "a partial snapshot survived a crash"
    );
    // The old sink's partial file is gone: it cannot complete after the restart.
    let _ = sink.append(&a_bytes[half..]);
    assert!(sink.finish().is_err(), "a sink finished across a crash");
    assert_not_found(log.register_snapshot(a), a);

    let b = id(12, 3);
    let b_bytes = snapshot_bytes(3, 1_700_000_000_011, 2, 2, 4);
    let mut sink = log.create_snapshot(b).unwrap();
    sink.append(&b_bytes).unwrap();
    sink.finish().unwrap();
    let log = log.crash_and_reopen();
    assert_eq!(
        log.snapshot_ids(),
        vec![b],
        "a finished snapshot survives unregistered"
    );
    assert_eq!(read_back(&log, b), b_bytes);
    let mut log = log;
    write_snapshot(&mut log, a, &a_bytes);
    assert_eq!(log.snapshot_ids(), vec![a, b]);
}

/// A snapshot of a newer epoch than the log's last, even at a lower offset than the log end
/// (our log diverged), replaces the whole log: it starts and ends at the snapshot.
pub fn truncate_to_latest_snapshot_ahead_by_epoch<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    nine_batches(&mut log);
    write_snapshot(&mut log, id(6, 1), &snapshot_bytes(1, 5, 1, 1, 1));
    let s = id(10, 5);
    write_snapshot(&mut log, s, &snapshot_bytes(5, 9, 2, 2, 2));
    assert!(log.truncate_to_latest_snapshot().unwrap());
    assert_eq!(log.start_offset(), 10);
    assert_eq!(
        log.end_offset(),
        s,
        "an empty log takes its epoch from the snapshot"
    );
    assert_eq!(log.flushed_end_offset(), 10);
    assert_eq!(log.snapshot_ids(), vec![s], "older snapshots are deleted");
    assert!(log.read(10, usize::MAX).unwrap().is_empty());
    assert!(matches!(
        log.read(9, usize::MAX),
        Err(LogError::OffsetOutOfRange {
            offset: 9,
            start: 10,
            end: 10
        })
    ));
    for epoch in [-1, 0, 3, 5, 6] {
        assert_eq!(
            log.end_offset_for_epoch(epoch),
            s,
            "end_offset_for_epoch({epoch})"
        );
    }
    // Kafka's latestEpoch is empty now, so it truncates (to the same place) again.
    assert!(log.truncate_to_latest_snapshot().unwrap());
    assert_eq!((log.start_offset(), log.end_offset()), (10, s));

    let err = log
        .append_as_follower(&data_batch(10, 4, 1, 3))
        .unwrap_err();
    assert!(
        matches!(err, LogError::CorruptBatch { offset: 10, .. }),
        "epoch below the snapshot's: {err}"
    );
    let next = append_leader(&mut log, 5, 2, 3);
    log.flush().unwrap();
    assert_eq!(log.end_offset(), id(12, 5));
    assert!(!log.truncate_to_latest_snapshot().unwrap());
    let log = log.crash_and_reopen();
    assert_eq!(log.start_offset(), 10);
    assert_eq!(log.end_offset(), id(12, 5));
    assert_eq!(log.read(10, usize::MAX).unwrap(), next);
    assert_eq!(log.snapshot_ids(), vec![s]);
}

/// A snapshot of the log's last epoch beyond the log end replaces the log; a crash between
/// downloading it and truncating is finished by the reopen (Kafka `KafkaMetadataLog.apply`).
pub fn truncate_to_latest_snapshot_ahead_by_offset<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    for tag in 0..3 {
        append_leader(&mut log, 1, 2, tag);
    }
    log.flush().unwrap();
    let s = id(9, 1);
    write_snapshot(&mut log, s, &snapshot_bytes(1, 9, 2, 4, 9));
    assert!(log.truncate_to_latest_snapshot().unwrap());
    assert_eq!((log.start_offset(), log.end_offset()), (9, s));
    assert!(read_all(&log).is_empty());

    let mut log = make();
    for tag in 0..3 {
        append_leader(&mut log, 1, 2, tag);
    }
    log.flush().unwrap();
    write_snapshot(&mut log, s, &snapshot_bytes(1, 9, 2, 4, 9));
    let log = log.crash_and_reopen();
    assert_eq!(
        (log.start_offset(), log.end_offset()),
        (9, s),
        "reopen truncates to the snapshot"
    );
    assert_eq!(log.snapshot_ids(), vec![s]);
    assert_log_start_covered(&log);
}

/// Snapshots at or behind the log leave it alone.
pub fn truncate_to_latest_snapshot_not_ahead<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    assert!(!log.truncate_to_latest_snapshot().unwrap(), "no snapshot");
    let batches = nine_batches(&mut log);
    assert!(!log.truncate_to_latest_snapshot().unwrap(), "no snapshot");
    write_snapshot(&mut log, id(12, 3), &snapshot_bytes(3, 11, 1, 1, 1));
    assert!(
        !log.truncate_to_latest_snapshot().unwrap(),
        "an older epoch"
    );
    write_snapshot(&mut log, id(18, 4), &snapshot_bytes(4, 17, 1, 1, 2));
    assert!(
        !log.truncate_to_latest_snapshot().unwrap(),
        "the same epoch at the log end"
    );
    assert_eq!(log.end_offset(), id(18, 4));
    assert_eq!(read_all(&log), concat(&batches.iter().collect::<Vec<_>>()));
    assert_eq!(log.snapshot_ids(), vec![id(12, 3), id(18, 4)]);
    let log = log.crash_and_reopen();
    assert_eq!(log.end_offset(), id(18, 4));
    assert_eq!(log.snapshot_ids(), vec![id(12, 3), id(18, 4)]);
}

/// `delete_before_snapshot` moves the log start offset to the snapshot's end, deletes older
/// snapshots, and makes everything below unreadable; `end_offset_for_epoch` answers epochs below
/// the new start with the earliest snapshot (Kafka `endOffsetForEpoch`). After a restart the
/// start may go back down to a segment boundary, never above the snapshot (case C06).
pub fn delete_before_snapshot_moves_the_log_start<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let batches = nine_batches(&mut log);
    let (a, b, c) = (id(6, 1), id(12, 3), id(16, 4));
    for (s, tag) in [(a, 1), (b, 2), (c, 3)] {
        write_snapshot(&mut log, s, &snapshot_bytes(s.epoch, s.offset, 1, 2, tag));
    }
    let unknown = id(8, 3);
    assert_not_found(log.delete_before_snapshot(unknown), unknown);

    log.delete_before_snapshot(b).unwrap();
    assert_eq!(log.start_offset(), 12);
    assert_eq!(log.snapshot_ids(), vec![b, c]);
    assert_eq!(log.end_offset(), id(18, 4));
    assert_eq!(
        log.read(12, usize::MAX).unwrap(),
        concat(&[&batches[6], &batches[7], &batches[8]])
    );
    assert_eq!(log.read(13, 1).unwrap(), batches[6]);
    for below in [0, 11] {
        assert!(
            matches!(
                log.read(below, usize::MAX),
                Err(LogError::OffsetOutOfRange {
                    start: 12,
                    end: 18,
                    ..
                })
            ),
            "read at {below}"
        );
    }
    assert!(matches!(
        log.truncate_to(11),
        Err(LogError::OffsetOutOfRange { .. })
    ));
    // Kafka's cache after truncateFromStart(12) is [(4, 12)].
    for (epoch, expected) in [
        (-1, id(18, 4)),
        (0, b),
        (1, b),
        (3, b),
        (4, id(18, 4)),
        (5, id(18, 4)),
    ] {
        assert_eq!(
            log.end_offset_for_epoch(epoch),
            expected,
            "end_offset_for_epoch({epoch})"
        );
    }
    assert_not_found(log.delete_before_snapshot(a), a);
    log.delete_before_snapshot(b).unwrap();
    assert_eq!(log.start_offset(), 12, "again: nothing to do");

    log.delete_before_snapshot(c).unwrap();
    assert_eq!(log.start_offset(), 16);
    assert_eq!(log.snapshot_ids(), vec![c]);
    assert_eq!(log.read(16, usize::MAX).unwrap(), batches[8]);
    assert_log_start_covered(&log);

    let log = log.crash_and_reopen();
    assert!(
        log.start_offset() <= 16,
        "restart start {}",
        log.start_offset()
    );
    assert_log_start_covered(&log);
    assert_eq!(log.snapshot_ids(), vec![c]);
    assert_eq!(log.end_offset(), id(18, 4));
    assert_eq!(log.read(16, usize::MAX).unwrap(), batches[8]);
    assert!(log.read(log.start_offset(), usize::MAX).is_ok());

    // A snapshot beyond the log end cannot become the log start.
    let mut log = make();
    for tag in 0..3 {
        append_leader(&mut log, 1, 2, tag);
    }
    let beyond = id(9, 1);
    write_snapshot(&mut log, beyond, &snapshot_bytes(1, 9, 1, 1, 1));
    assert!(matches!(
        log.delete_before_snapshot(beyond),
        Err(LogError::OffsetOutOfRange { offset: 9, .. })
    ));
    assert_eq!(log.start_offset(), 0);
}

/// Moving the log start to the log end leaves an empty log whose epoch is the snapshot's, that
/// takes appends and truncation like any other.
pub fn delete_before_snapshot_at_the_log_end<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    for tag in 0..3 {
        append_leader(&mut log, 1, 2, tag);
    }
    log.flush().unwrap();
    let (x, y) = (id(2, 1), id(6, 1));
    write_snapshot(&mut log, x, &snapshot_bytes(1, 1, 1, 1, 1));
    write_snapshot(&mut log, y, &snapshot_bytes(1, 5, 1, 1, 2));
    log.delete_before_snapshot(y).unwrap();
    assert_eq!((log.start_offset(), log.end_offset()), (6, y));
    assert_eq!(log.snapshot_ids(), vec![y]);
    assert!(log.read(6, usize::MAX).unwrap().is_empty());
    assert!(matches!(
        log.read(5, 1),
        Err(LogError::OffsetOutOfRange { start: 6, .. })
    ));
    assert_eq!(log.end_offset_for_epoch(1), y);
    assert_eq!(
        log.end_offset_for_epoch(0),
        y,
        "below the first epoch: the earliest snapshot"
    );
    assert!(!log.truncate_to_latest_snapshot().unwrap());

    let c = append_leader(&mut log, 2, 1, 3);
    assert_eq!(log.end_offset(), id(7, 2));
    assert_eq!(log.end_offset_for_epoch(1), y);
    assert_eq!(log.read(6, usize::MAX).unwrap(), c);
    log.truncate_to(6).unwrap();
    assert_eq!(log.end_offset(), y, "empty again: the snapshot's epoch");
    assert_eq!(log.end_offset_for_epoch(2), y);
    log.flush().unwrap();
    let log = log.crash_and_reopen();
    assert!(log.start_offset() <= 6);
    assert_eq!(log.end_offset(), y);
    assert_eq!(log.snapshot_ids(), vec![y]);
    assert_log_start_covered(&log);
}

/// Writes snapshots `(6, 1)`, `(12, 3)`, `(16, 4)` of the nine-batch log with header
/// timestamps 1000, 5000 and 9000.
fn three_snapshots<L: CrashableLog>(log: &mut L) -> [OffsetAndEpoch; 3] {
    let ids = [id(6, 1), id(12, 3), id(16, 4)];
    for (s, ts) in ids.iter().zip([1000, 5000, 9000]) {
        write_snapshot(log, *s, &snapshot_bytes(s.epoch, ts, 2, 2, ts as u8));
    }
    ids
}

/// `maybe_clean` by `metadata.max.retention.bytes`: never with fewer than two snapshots, never
/// past the high watermark or the latest snapshot, and only while the limit is exceeded.
pub fn maybe_clean_by_size<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let now = 1_000_000;
    let mut log = make().restart_with_retention(0, -1);
    nine_batches(&mut log);
    write_snapshot(&mut log, id(6, 1), &snapshot_bytes(1, 1000, 2, 2, 1));
    assert!(
        !log.maybe_clean(18, now).unwrap(),
        "one snapshot is never cleaned"
    );
    assert_eq!(log.start_offset(), 0);
    let mut log = make().restart_with_retention(0, -1);
    nine_batches(&mut log);
    let [a, b, c] = three_snapshots(&mut log);
    assert!(
        !log.maybe_clean(11, now).unwrap(),
        "the next snapshot is above the high watermark"
    );
    assert_eq!((log.start_offset(), log.snapshot_ids()), (0, vec![a, b, c]));
    assert!(log.maybe_clean(12, now).unwrap());
    assert_eq!((log.start_offset(), log.snapshot_ids()), (12, vec![b, c]));
    assert!(log.maybe_clean(18, now).unwrap());
    assert_eq!((log.start_offset(), log.snapshot_ids()), (16, vec![c]));
    assert!(
        !log.maybe_clean(18, now).unwrap(),
        "the latest snapshot is always kept"
    );
    assert_eq!(log.start_offset(), 16);
    assert_log_start_covered(&log);

    // Exactly at the limit nothing goes; one byte over, one snapshot goes.
    let mut log = make();
    nine_batches(&mut log);
    let [a, b, c] = three_snapshots(&mut log);
    let snapshots: u64 = [a, b, c]
        .iter()
        .map(|&s| log.snapshot_size_bytes(s).unwrap())
        .sum();
    let total = (log.log_size_bytes() + snapshots) as i64;
    let mut log = log.restart_with_retention(total, -1);
    assert!(!log.maybe_clean(18, now).unwrap());
    assert_eq!(log.snapshot_ids(), vec![a, b, c]);
    let mut log = log.restart_with_retention(total - 1, -1);
    assert!(log.maybe_clean(18, now).unwrap());
    assert_eq!((log.start_offset(), log.snapshot_ids()), (12, vec![b, c]));
    let mut log = log.restart_with_retention(-1, -1);
    assert!(!log.maybe_clean(18, now).unwrap(), "-1: unbounded");
}

/// `maybe_clean` by `metadata.max.retention.ms`, measured from each snapshot's
/// `LastContainedLogTimestamp`.
pub fn maybe_clean_by_time<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make().restart_with_retention(-1, 1000);
    nine_batches(&mut log);
    let [_, b, c] = three_snapshots(&mut log);
    assert!(
        !log.maybe_clean(18, 2000).unwrap(),
        "exactly the retention old is kept"
    );
    assert_eq!(log.start_offset(), 0);
    assert!(log.maybe_clean(18, 2001).unwrap());
    assert_eq!((log.start_offset(), log.snapshot_ids()), (12, vec![b, c]));
    assert!(
        !log.maybe_clean(11, 100_000).unwrap(),
        "nothing below the high watermark to clean"
    );
    assert!(log.maybe_clean(18, 100_000).unwrap());
    assert_eq!((log.start_offset(), log.snapshot_ids()), (16, vec![c]));
    assert!(
        !log.maybe_clean(18, u64::MAX).unwrap(),
        "the latest snapshot is always kept"
    );
    let mut log = log.restart_with_retention(-1, -1);
    assert!(!log.maybe_clean(18, u64::MAX).unwrap());
    assert_log_start_covered(&log);
}

/// A log that starts at a snapshot (a follower that loaded one): its end offsets before and
/// after the first appends, as `KafkaMetadataLog.lastFetchedEpoch`/`endOffsetForEpoch` answer.
pub fn end_offsets_of_a_log_starting_at_a_snapshot<L: CrashableLog>(mut make: impl FnMut() -> L) {
    let mut log = make();
    let s = id(5, 2);
    write_snapshot(&mut log, s, &snapshot_bytes(2, 4, 1, 3, 1));
    assert_eq!(
        log.end_offset(),
        id(0, 0),
        "not truncated yet: the snapshot is not at the log end"
    );
    assert!(log.truncate_to_latest_snapshot().unwrap());
    assert_eq!(log.end_offset(), s);
    for epoch in [-1, 0, 1, 2, 3] {
        assert_eq!(
            log.end_offset_for_epoch(epoch),
            s,
            "end_offset_for_epoch({epoch})"
        );
    }
    append_leader(&mut log, 3, 2, 1);
    assert_eq!(log.end_offset(), id(7, 3));
    for (epoch, expected) in [(-1, id(7, 3)), (1, s), (2, s), (3, id(7, 3)), (4, id(7, 3))] {
        assert_eq!(
            log.end_offset_for_epoch(epoch),
            expected,
            "end_offset_for_epoch({epoch})"
        );
    }
    log.flush().unwrap();
    let log = log.crash_and_reopen();
    assert_eq!((log.start_offset(), log.end_offset()), (5, id(7, 3)));
    assert_eq!(log.end_offset_for_epoch(2), s);
}
