//! Measurements, not assertions: `cargo test -p kraftwerk-log bench_ -- --ignored --nocapture`.
//! Set `KRAFTWERK_BENCH_DIR` to measure on a particular file system (default: the temp dir).

use std::time::Instant;

use bytes::Bytes;
use kraftwerk_raft::ReplicatedLog;
use kraftwerk_records::batch::BatchBuilder;

use crate::{IndexRecovery, LogConfig, SegmentLog, INDEX_DIR_NAME, METADATA_PARTITION_DIR};

/// A batch of exactly 1024 bytes: one record whose value fills the rest.
fn batch_1k(base_offset: i64, epoch: i32) -> Bytes {
    let mut builder = BatchBuilder::new(base_offset, epoch, 1_700_000_000_000);
    // 61 header bytes + 9 bytes of record framing (two-byte length varints) + the value.
    let value = vec![0x5Au8; 1024 - 61 - 9];
    builder.append(None, &value);
    let batch = builder.build();
    assert_eq!(batch.len(), 1024);
    batch
}

fn bench_root() -> tempfile::TempDir {
    match std::env::var("KRAFTWERK_BENCH_DIR") {
        Ok(dir) => tempfile::tempdir_in(dir).unwrap(),
        Err(_) => tempfile::tempdir().unwrap(),
    }
}

#[test]
#[ignore]
fn bench_append_flush_1k_batches() {
    let root = bench_root();
    let mut log = SegmentLog::open(root.path(), LogConfig::default()).unwrap();
    for per_flush in [1usize, 10, 100] {
        let rounds = 3000 / per_flush;
        let started = Instant::now();
        for _ in 0..rounds {
            for _ in 0..per_flush {
                let base = log.end_offset().offset;
                log.append_as_leader(&batch_1k(base, 1), 1).unwrap();
            }
            log.flush().unwrap();
        }
        let secs = started.elapsed().as_secs_f64();
        let batches = (rounds * per_flush) as f64;
        println!(
            "append+flush, {per_flush} x 1 KiB batch per flush: {:.0} batches/s, {:.0} flushes/s, {:.2} MB/s, {:.3} ms/flush",
            batches / secs,
            rounds as f64 / secs,
            batches * 1024.0 / secs / 1e6,
            secs * 1000.0 / rounds as f64
        );
    }
}

#[test]
#[ignore]
fn bench_open_100mb_log() {
    for segment_bytes in [1u64 << 30, 8 << 20] {
        let root = bench_root();
        let batches = 100 * 1024; // 100 MiB of 1 KiB batches
        let started = Instant::now();
        {
            let mut log = SegmentLog::open(root.path(), LogConfig { segment_bytes }).unwrap();
            for i in 0..batches {
                let base = log.end_offset().offset;
                let epoch = 1 + (i / 10_000) as i32;
                log.append_as_leader(&batch_1k(base, epoch), epoch).unwrap();
                if i % 1000 == 999 {
                    log.flush().unwrap();
                }
            }
            log.close().unwrap();
        }
        println!(
            "segment_bytes {segment_bytes}: wrote 100 MiB in {:.2} s",
            started.elapsed().as_secs_f64()
        );

        let started = Instant::now();
        let log = SegmentLog::open(root.path(), LogConfig { segment_bytes }).unwrap();
        let verified_ms = started.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(log.recovery_report().index, IndexRecovery::Verified);
        let segments = log.segment_base_offsets().len();
        drop(log);

        let index = root
            .path()
            .join(METADATA_PARTITION_DIR)
            .join(INDEX_DIR_NAME);
        std::fs::remove_dir_all(index).unwrap();
        let started = Instant::now();
        let log = SegmentLog::open(root.path(), LogConfig { segment_bytes }).unwrap();
        let rebuilt_ms = started.elapsed().as_secs_f64() * 1000.0;
        assert!(matches!(
            log.recovery_report().index,
            IndexRecovery::Rebuilt { .. }
        ));
        assert_eq!(log.recovery_report().batches_scanned, batches as u64);

        // A read after the rebuild, through the fresh index.
        let started = Instant::now();
        let bytes = log.read(50_000, 1 << 20).unwrap();
        let read_ms = started.elapsed().as_secs_f64() * 1000.0;
        println!(
            "segment_bytes {segment_bytes} ({segments} segments): open with valid index {verified_ms:.1} ms, \
             rebuilding the index {rebuilt_ms:.1} ms; 1 MiB read at offset 50000 {read_ms:.2} ms ({} bytes)",
            bytes.len()
        );
    }
}
