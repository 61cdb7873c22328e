//! Time-based rolling (`metadata.log.segment.ms`, Kafka `LogSegment.shouldRoll` and
//! `timeWaitedForRoll`), driven by batch timestamps and a [`ManualClock`].

use bytes::Bytes;
use kraftwerk_raft::testing::suite::concat;
use kraftwerk_raft::testing::{snapshot_bytes, write_snapshot};
use kraftwerk_raft::{OffsetAndEpoch, ReplicatedLog};
use kraftwerk_records::batch::BatchBuilder;

use super::TestLog;
use crate::{segment_file_name, IndexRecovery, LogConfig, ManualClock, SegmentLog, StorageError};

const T0: i64 = 1_700_000_000_000;

/// Kafka's defaults with `segment.ms` = 1 s (segments never fill up by size here).
fn one_second() -> LogConfig {
    LogConfig {
        segment_ms: 1000,
        ..LogConfig::default()
    }
}

/// A batch of `records` records at `base_offset`, epoch 1, with max timestamp `timestamp_ms`
/// (-1: no timestamp, Kafka's `RecordBatch.NO_TIMESTAMP`).
fn batch_at(base_offset: i64, records: usize, timestamp_ms: i64) -> Bytes {
    let mut builder = BatchBuilder::new(base_offset, 1, timestamp_ms);
    for i in 0..records {
        builder.append(None, &[i as u8, 0xCD]);
    }
    builder.build()
}

/// Appends a one-record batch stamped `timestamp_ms` as leader; returns its offset.
fn append_at(log: &mut TestLog, timestamp_ms: i64) -> i64 {
    let offset = log.end_offset().offset;
    log.append_as_leader(&batch_at(offset, 1, timestamp_ms), 1)
        .unwrap();
    offset
}

fn bases(log: &TestLog) -> Vec<i64> {
    log.log().segment_base_offsets()
}

#[test]
fn a_segment_rolls_once_its_first_batch_is_older_than_segment_ms_and_not_before() {
    let clock = ManualClock::new(T0);
    let mut log = TestLog::with_clock(one_second(), clock.clone());
    append_at(&mut log, T0);
    append_at(&mut log, T0 + 1000); // waited exactly segment.ms: Kafka rolls only past it
    assert_eq!(bases(&log), [0]);
    assert_eq!(append_at(&mut log, T0 + 1001), 2);
    assert_eq!(bases(&log), [0, 2]);
    // The new segment's age counts from its own first batch.
    append_at(&mut log, T0 + 2001);
    assert_eq!(bases(&log), [0, 2]);
    assert_eq!(append_at(&mut log, T0 + 2002), 4);
    assert_eq!(bases(&log), [0, 2, 4]);
    // With timestamps in the batches, the wall clock plays no part...
    clock.advance(3_600_000);
    append_at(&mut log, T0 + 2003);
    // ...and a batch older than the first one (a leader whose clock went back) never rolls.
    append_at(&mut log, T0);
    assert_eq!(bases(&log), [0, 2, 4]);

    // After a restart the first batch's timestamp is read back from the segment file (Kafka
    // `loadFirstBatchTimestamp`).
    log.flush().unwrap();
    log.reopen_after(|_| {});
    assert_eq!(log.log().recovery_report().index, IndexRecovery::Verified);
    append_at(&mut log, T0 + 3002);
    assert_eq!(bases(&log), [0, 2, 4]);
    assert_eq!(append_at(&mut log, T0 + 3003), 8);
    assert_eq!(bases(&log), [0, 2, 4, 8]);
    let dir = log.log().partition_dir().to_path_buf();
    for base in [0, 2, 4, 8] {
        assert!(dir.join(segment_file_name(base)).is_file(), "{base}");
    }
    log.flush().unwrap();
    log.reopen_after(|_| {});
    assert_eq!(log.log().recovery_report().index, IndexRecovery::Verified);
    assert_eq!(
        log.read(0, usize::MAX).unwrap().len() as u64,
        log.log().size_bytes()
    );
}

#[test]
fn an_empty_segment_is_never_rolled_by_time() {
    let clock = ManualClock::new(T0);
    let config = LogConfig {
        segment_ms: 1,
        ..LogConfig::default()
    };
    let mut log = TestLog::with_clock(config, clock.clone());
    clock.advance(86_400_000);
    append_at(&mut log, T0 + 86_400_000);
    assert_eq!(
        bases(&log),
        [0],
        "the first batch goes into the empty segment"
    );
    // Emptied by a truncation: the next batch again goes into it, whatever its timestamp.
    log.truncate_to(0).unwrap();
    clock.advance(86_400_000);
    append_at(&mut log, T0 + 10 * 86_400_000);
    assert_eq!(bases(&log), [0]);
    append_at(&mut log, T0 + 10 * 86_400_000 + 2);
    assert_eq!(bases(&log), [0, 1]);
}

#[test]
fn without_timestamps_the_age_is_wall_clock_time_since_the_segment_was_created() {
    let clock = ManualClock::new(T0);
    let mut log = TestLog::with_clock(one_second(), clock.clone());
    append_at(&mut log, -1);
    clock.advance(1000);
    append_at(&mut log, -1);
    assert_eq!(bases(&log), [0]);
    clock.advance(1);
    assert_eq!(append_at(&mut log, -1), 2);
    assert_eq!(bases(&log), [0, 2]);

    // Kafka's `LogSegment.created` is when the segment object was made: a reopened log measures
    // from the open.
    log.flush().unwrap();
    clock.advance(5000);
    log.reopen_after(|_| {});
    clock.advance(1000);
    append_at(&mut log, -1);
    assert_eq!(bases(&log), [0, 2]);
    clock.advance(1);
    assert_eq!(append_at(&mut log, -1), 4);
    assert_eq!(bases(&log), [0, 2, 4]);

    // A truncation that empties a segment restarts its age (Kafka `LogSegment.truncateTo`).
    clock.advance(5000);
    log.truncate_to(4).unwrap();
    assert_eq!(bases(&log), [0, 2, 4]);
    append_at(&mut log, -1);
    clock.advance(1000);
    append_at(&mut log, -1);
    assert_eq!(bases(&log), [0, 2, 4]);
    clock.advance(1);
    assert_eq!(append_at(&mut log, -1), 6);
    assert_eq!(bases(&log), [0, 2, 4, 6]);
}

#[test]
fn a_follower_append_spanning_the_roll_time_splits_where_separate_appends_would() {
    let mut log = TestLog::with_clock(one_second(), ManualClock::new(T0));
    let batches: Vec<Bytes> = [T0, T0 + 500, T0 + 1001, T0 + 1500, T0 + 2002]
        .into_iter()
        .enumerate()
        .map(|(i, ts)| batch_at(i as i64, 1, ts))
        .collect();
    let all: Vec<&Bytes> = batches.iter().collect();
    let info = log.append_as_follower(&concat(&all)).unwrap();
    assert_eq!((info.first_offset, info.last_offset), (0, 4));
    assert_eq!(bases(&log), [0, 2, 4]);
    assert_eq!(log.read(0, usize::MAX).unwrap(), concat(&all));
    let dir = log.log().partition_dir().to_path_buf();
    assert_eq!(
        std::fs::read(dir.join(segment_file_name(2))).unwrap(),
        concat(&all[2..4]).to_vec()
    );
}

#[test]
fn segments_rolled_by_time_are_deleted_whole_below_a_snapshot() {
    let mut log = TestLog::with_clock(one_second(), ManualClock::new(T0));
    // Two-record batches 600 ms apart: segments 0 (0..=3), 4 (4..=7), 8 (8..=11).
    for i in 0..6i64 {
        let offset = log.end_offset().offset;
        log.append_as_leader(&batch_at(offset, 2, T0 + 600 * i), 1)
            .unwrap();
    }
    log.flush().unwrap();
    assert_eq!(bases(&log), [0, 4, 8]);
    let dir = log.log().partition_dir().to_path_buf();
    let size_of = |base: i64| {
        std::fs::metadata(dir.join(segment_file_name(base)))
            .map(|m| m.len())
            .ok()
    };
    let sizes: Vec<Option<u64>> = [0, 4, 8].into_iter().map(size_of).collect();
    let id = OffsetAndEpoch::new(6, 1);
    write_snapshot(&mut log, id, &snapshot_bytes(1, T0 + 1800, 1, 1, 3));
    log.delete_before_snapshot(id).unwrap();
    assert_eq!(log.start_offset(), 6);
    // Segment 0 ends below the snapshot and goes; segment 4 holds offset 6 and stays whole.
    assert_eq!(bases(&log), [4, 8]);
    assert_eq!(size_of(0), None);
    assert_eq!((size_of(4), size_of(8)), (sizes[1], sizes[2]));
    // The read starts at the batch holding offset 6, half of segment 4.
    let expected = sizes[1].unwrap() / 2 + sizes[2].unwrap();
    assert_eq!(log.read(6, usize::MAX).unwrap().len() as u64, expected);
    log.reopen_after(|_| {});
    assert_eq!(log.log().recovery_report().index, IndexRecovery::Verified);
    assert_eq!(bases(&log), [4, 8]);
}

#[test]
fn segment_ms_below_one_is_refused_at_open() {
    for segment_ms in [0, -1] {
        let dir = tempfile::tempdir().unwrap();
        let config = LogConfig {
            segment_ms,
            ..LogConfig::default()
        };
        match SegmentLog::open(dir.path(), config) {
            Err(StorageError::Config(message)) => assert_eq!(
                message,
                format!(
                    "Invalid value {segment_ms} for configuration metadata.log.segment.ms: \
                     Value must be at least 1"
                )
            ),
            other => panic!("segment_ms {segment_ms}: {other:?}"),
        }
    }
}
