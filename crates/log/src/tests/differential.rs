//! Differential test: random sequences of operations on the segment log and on `MemLog`
//! (an independent implementation of the same rules, with the same segment size and retention)
//! must give the same answers, step after step, across crashes.
//!
//! The segment log makes a truncation durable with an fdatasync that also covers unflushed
//! bytes before the cut, which `MemLog` does not model; the sequences flush before truncating,
//! so both lose exactly the same bytes in a crash.

use bytes::Bytes;
use kraftwerk_raft::testing::suite::data_batch;
use kraftwerk_raft::testing::{snapshot_bytes, CrashableLog, MemLog};
use kraftwerk_raft::{LogError, OffsetAndEpoch, ReplicatedLog};
use kraftwerk_records::batch::batches;
use proptest::prelude::*;

use super::{small_segments, TestLog};
use crate::LogConfig;

#[derive(Clone, Debug)]
enum Op {
    /// Append `records` records as leader, `bump` epochs above the log's.
    Append {
        bump: i32,
        records: usize,
    },
    Flush,
    /// Flush, then truncate `back` offsets below the log end.
    Truncate {
        back: i64,
    },
    /// A snapshot at the `pick`-th batch boundary above the log start.
    Snapshot {
        pick: usize,
    },
    /// A snapshot beyond the log end (a download from a leader that is further ahead).
    SnapshotAhead {
        offsets: i64,
        bump: i32,
    },
    /// Move the log start to the `pick`-th snapshot (an unknown id when there is none).
    DeleteBefore {
        pick: usize,
    },
    TruncateToLatest,
    Clean {
        hw_back: i64,
        now_ms: u64,
    },
    Crash,
    CrashTorn {
        keep: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0i32..2, 1usize..4).prop_map(|(bump, records)| Op::Append { bump, records }),
        2 => Just(Op::Flush),
        1 => (0i64..6).prop_map(|back| Op::Truncate { back }),
        3 => any::<usize>().prop_map(|pick| Op::Snapshot { pick }),
        1 => (1i64..6, 0i32..2).prop_map(|(offsets, bump)| Op::SnapshotAhead { offsets, bump }),
        2 => any::<usize>().prop_map(|pick| Op::DeleteBefore { pick }),
        1 => Just(Op::TruncateToLatest),
        2 => (0i64..4, prop_oneof![Just(0u64), Just(3_000), Just(u64::MAX)])
            .prop_map(|(hw_back, now_ms)| Op::Clean { hw_back, now_ms }),
        1 => Just(Op::Crash),
        1 => any::<u64>().prop_map(|keep| Op::CrashTorn { keep }),
    ]
}

/// The same error variant (messages may differ).
fn same_outcome<T: PartialEq + std::fmt::Debug>(
    a: &Result<T, LogError>,
    b: &Result<T, LogError>,
) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => x == y,
        (Err(x), Err(y)) => std::mem::discriminant(x) == std::mem::discriminant(y),
        _ => false,
    }
}

/// `(base offset, epoch)` of every batch from the log start.
fn batch_starts(log: &TestLog) -> Vec<(i64, i32, i64)> {
    let bytes = log.read(log.start_offset(), usize::MAX).unwrap();
    batches(&bytes)
        .map(|b| {
            let (h, _) = b.unwrap();
            (h.base_offset, h.partition_leader_epoch, h.next_offset())
        })
        .collect()
}

fn assert_same(seg: &TestLog, mem: &MemLog, step: usize, op: &Op) {
    let ctx = format!("step {step} ({op:?})");
    assert_eq!(
        seg.start_offset(),
        mem.start_offset(),
        "{ctx}: start offset"
    );
    assert_eq!(seg.end_offset(), mem.end_offset(), "{ctx}: end offset");
    assert_eq!(
        seg.flushed_end_offset(),
        mem.flushed_end_offset(),
        "{ctx}: flushed end"
    );
    assert_eq!(seg.snapshot_ids(), mem.snapshot_ids(), "{ctx}: snapshots");
    assert_eq!(
        seg.log().segment_base_offsets(),
        mem.segment_base_offsets(),
        "{ctx}: segments"
    );
    assert_eq!(seg.log_size_bytes(), mem.size_bytes(), "{ctx}: size");
    assert_eq!(
        seg.log().epoch_entries(),
        mem.epoch_entries(),
        "{ctx}: epoch cache"
    );
    let start = seg.start_offset();
    assert_eq!(
        seg.read(start, usize::MAX).unwrap(),
        mem.read(start, usize::MAX).unwrap(),
        "{ctx}: contents"
    );
    let top = seg.end_offset().epoch.max(mem.end_offset().epoch) + 2;
    for epoch in -1..=top {
        assert_eq!(
            seg.end_offset_for_epoch(epoch),
            mem.end_offset_for_epoch(epoch),
            "{ctx}: end_offset_for_epoch({epoch})"
        );
    }
}

/// Writes snapshot `id` into both logs and compares the outcomes.
fn snapshot_both(seg: &mut TestLog, mem: &mut MemLog, id: OffsetAndEpoch) {
    let bytes: Bytes = snapshot_bytes(id.epoch, id.offset * 1000, 1, 2, id.offset as u8);
    let write = |log: &mut dyn ReplicatedLog| -> Result<(), LogError> {
        let mut sink = log.create_snapshot(id)?;
        sink.append(&bytes)?;
        sink.finish()?;
        log.register_snapshot(id)
    };
    let a = write(seg);
    let b = write(mem);
    assert!(same_outcome(&a, &b), "snapshot {id:?}: {a:?} vs {b:?}");
}

fn run(ops: Vec<Op>, segment_bytes: u64, retention_bytes: i64) {
    let retention_ms = 2_000;
    let mut seg = Some(TestLog::new(LogConfig {
        retention_bytes,
        retention_ms,
        ..small_segments(segment_bytes)
    }));
    let mut mem = Some(
        MemLog::new()
            .with_segment_bytes(segment_bytes)
            .with_retention(retention_bytes, retention_ms),
    );
    let mut tag = 0u8;
    for (step, op) in ops.iter().enumerate() {
        let (s, m) = (seg.as_mut().unwrap(), mem.as_mut().unwrap());
        match op {
            Op::Append { bump, records } => {
                let end = s.end_offset();
                let epoch = end.epoch.max(1) + bump;
                tag = tag.wrapping_add(1);
                let batch = data_batch(end.offset, epoch, *records, tag);
                let a = s.append_as_leader(&batch, epoch);
                let b = m.append_as_leader(&batch, epoch);
                assert!(same_outcome(&a, &b), "step {step}: {a:?} vs {b:?}");
            }
            Op::Flush => {
                s.flush().unwrap();
                m.flush().unwrap();
            }
            Op::Truncate { back } => {
                s.flush().unwrap();
                m.flush().unwrap();
                let to = s.end_offset().offset - back;
                let a = s.truncate_to(to);
                let b = m.truncate_to(to);
                assert!(same_outcome(&a, &b), "step {step}: {a:?} vs {b:?}");
            }
            Op::Snapshot { pick } => {
                let starts = batch_starts(s);
                if !starts.is_empty() {
                    let (_, epoch, next) = starts[pick % starts.len()];
                    snapshot_both(s, m, OffsetAndEpoch::new(next, epoch));
                }
            }
            Op::SnapshotAhead { offsets, bump } => {
                let end = s.end_offset();
                snapshot_both(
                    s,
                    m,
                    OffsetAndEpoch::new(end.offset + offsets, end.epoch + bump),
                );
            }
            Op::DeleteBefore { pick } => {
                let ids = s.snapshot_ids();
                let id = if ids.is_empty() {
                    OffsetAndEpoch::new(1, 1)
                } else {
                    ids[pick % ids.len()]
                };
                let a = s.delete_before_snapshot(id);
                let b = m.delete_before_snapshot(id);
                assert!(same_outcome(&a, &b), "step {step}: {a:?} vs {b:?}");
            }
            Op::TruncateToLatest => {
                let a = s.truncate_to_latest_snapshot();
                let b = m.truncate_to_latest_snapshot();
                assert!(same_outcome(&a, &b), "step {step}: {a:?} vs {b:?}");
            }
            Op::Clean { hw_back, now_ms } => {
                let hw = (s.end_offset().offset - hw_back).max(0);
                let a = s.maybe_clean(hw, *now_ms);
                let b = m.maybe_clean(hw, *now_ms);
                assert!(same_outcome(&a, &b), "step {step}: {a:?} vs {b:?}");
            }
            Op::Crash => {
                seg = Some(seg.take().unwrap().crash_and_reopen());
                mem = Some(mem.take().unwrap().crash_and_reopen());
            }
            Op::CrashTorn { keep } => {
                seg = Some(seg.take().unwrap().crash_torn_and_reopen(*keep));
                mem = Some(mem.take().unwrap().crash_torn_and_reopen(*keep));
            }
        }
        assert_same(seg.as_ref().unwrap(), mem.as_ref().unwrap(), step, op);
    }
}

proptest! {
    // Each case opens RocksDB and fsyncs; 48 by default, PROPTEST_CASES for a longer search.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn segment_log_and_mem_log_agree(
        ops in prop::collection::vec(op(), 1..45),
        segment_bytes in prop_oneof![Just(150u64), Just(400), Just(1 << 30)],
        retention_bytes in prop_oneof![Just(-1i64), Just(0), Just(2_000)],
    ) {
        run(ops, segment_bytes, retention_bytes);
    }
}

/// Seed `cc 6c3172c8…` of `proptest-regressions/tests/differential.txt`: a snapshot (1, 0)
/// ahead of the empty log, an epoch-1 batch at 0, the log start moved to 1 (the one segment
/// stays: Kafka deletes only segments whose successor starts at or below the log start), then a
/// crash. The checkpoint holds 1@1, at the log end; Kafka's `LogLoader` lets it hide the
/// batch's epoch and then cuts it with everything at the end, so its first open has no epoch
/// at all and its next open (from the checkpoint rewritten empty) finds 1@0. The segment log
/// settles to what the next open recovers ([`crate::epoch_cache::EpochCache::settled`]), so the
/// reopened log serves epoch 1, as its batch says; `MemLog` did not settle, so it served epoch
/// 0 after one crash and epoch 1 after the next. Both must serve epoch 1 after every crash.
#[test]
fn reopen_after_delete_before_a_snapshot_ahead_serves_the_batch_epoch() {
    fn check<L: ReplicatedLog + CrashableLog>(mut log: L, name: &str) {
        let id = OffsetAndEpoch::new(1, 0);
        let bytes: Bytes = snapshot_bytes(id.epoch, id.offset * 1000, 1, 2, id.offset as u8);
        let mut sink = log.create_snapshot(id).unwrap();
        sink.append(&bytes).unwrap();
        sink.finish().unwrap();
        log.register_snapshot(id).unwrap();
        log.append_as_leader(&data_batch(0, 1, 1, 1), 1).unwrap();
        log.delete_before_snapshot(id).unwrap();
        assert_eq!(log.end_offset(), OffsetAndEpoch::new(1, 1), "{name}");
        for crash in 1..=2 {
            log = log.crash_and_reopen();
            let ctx = format!("{name}, crash {crash}");
            assert_eq!(
                log.start_offset(),
                0,
                "{ctx}: Kafka reopens at the first segment"
            );
            assert_eq!(log.end_offset(), OffsetAndEpoch::new(1, 1), "{ctx}");
        }
    }
    check(MemLog::new().with_segment_bytes(150), "MemLog");
    check(TestLog::new(small_segments(150)), "segment log");
    let ops = vec![
        Op::SnapshotAhead {
            offsets: 1,
            bump: 0,
        },
        Op::Append {
            bump: 0,
            records: 1,
        },
        Op::DeleteBefore { pick: 0 },
        Op::Crash,
        Op::Crash,
    ];
    run(ops, 150, -1);
}
