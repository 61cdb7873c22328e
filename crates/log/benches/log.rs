//! Measurements of the segment log, printed rather than asserted (the `assert`s only check
//! that each run measured what it says):
//!
//! ```text
//! cargo bench -p kraftwerk-log --bench log                    # all of them
//! cargo bench -p kraftwerk-log --bench log -- open snapshot   # those whose name contains a word
//! KRAFTWERK_BENCH_DIR=/mnt/disk cargo bench -p kraftwerk-log --bench log   # on that file system
//! ```
//!
//! Names: `append_flush_1k_batches`, `open_100mb_log`, `snapshot_100mb`. They need about 250 MB
//! of free disk.

use std::time::Instant;

use bytes::Bytes;
use kraftwerk_log::testing::small_segments;
use kraftwerk_log::{IndexRecovery, LogConfig, SegmentLog, INDEX_DIR_NAME, METADATA_PARTITION_DIR};
use kraftwerk_raft::ReplicatedLog;
use kraftwerk_records::batch::BatchBuilder;

/// The benchmarks, by name.
const BENCHES: &[(&str, fn())] = &[
    ("append_flush_1k_batches", append_flush_1k_batches),
    ("open_100mb_log", open_100mb_log),
    ("snapshot_100mb", snapshot_100mb),
];

/// Runs the benchmarks whose name contains one of the arguments (all without arguments).
/// Flags are ignored: `cargo bench` passes `--bench`.
fn main() {
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let selected: Vec<_> = BENCHES
        .iter()
        .filter(|(name, _)| words.is_empty() || words.iter().any(|w| name.contains(w.as_str())))
        .collect();
    if selected.is_empty() {
        let names: Vec<&str> = BENCHES.iter().map(|(name, _)| *name).collect();
        eprintln!("no benchmark matches {words:?}; they are {names:?}");
        std::process::exit(2);
    }
    for (name, bench) in selected {
        println!("== {name}");
        bench();
    }
}

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

/// A fresh directory in `$KRAFTWERK_BENCH_DIR`, else in the temp dir.
fn bench_root() -> tempfile::TempDir {
    match std::env::var("KRAFTWERK_BENCH_DIR") {
        Ok(dir) => tempfile::tempdir_in(dir).unwrap(),
        Err(_) => tempfile::tempdir().unwrap(),
    }
}

/// Appends 3000 1 KiB batches, flushing after every 1, 10 and 100 of them.
fn append_flush_1k_batches() {
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

/// Writes 100 MiB of 1 KiB batches (1 GiB and 8 MiB segments), then opens the log with its
/// index, rebuilds the index, and reads 1 MiB through it.
fn open_100mb_log() {
    for segment_bytes in [1u64 << 30, 8 << 20] {
        let root = bench_root();
        let batches = 100 * 1024; // 100 MiB of 1 KiB batches
        let started = Instant::now();
        {
            let mut log = SegmentLog::open(root.path(), small_segments(segment_bytes)).unwrap();
            for i in 0..batches {
                let base = log.end_offset().offset;
                let epoch = 1 + i / 10_000;
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
        let log = SegmentLog::open(root.path(), small_segments(segment_bytes)).unwrap();
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
        let log = SegmentLog::open(root.path(), small_segments(segment_bytes)).unwrap();
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

/// Peak resident set size of this process so far (`VmHWM`), in MiB.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Metadata-like snapshot batches: PartitionRecord-sized values (~120 bytes), as many per batch
/// as fit (at most 10 000 records or 8 MiB), generated one batch at a time so the generator
/// holds no more than a batch. Calls `emit` with each batch; returns the number of offsets.
fn metadata_like_snapshot(target_bytes: usize, epoch: i32, mut emit: impl FnMut(&[u8])) -> i64 {
    use kraftwerk_records::control::{control_batch, ControlRecord};
    let ts = 1_700_000_000_000;
    emit(&control_batch(
        0,
        epoch,
        ts,
        &[ControlRecord::snapshot_header(ts)],
    ));
    let mut offset = 1i64;
    let mut written = 0usize;
    let mut value = vec![0u8; 120];
    while written < target_bytes {
        let mut builder = BatchBuilder::new(offset, epoch, ts);
        loop {
            value[..8].copy_from_slice(&builder.next_offset().to_be_bytes());
            if !builder.has_room_for(None, &value) {
                break;
            }
            builder.append(None, &value);
        }
        offset = builder.next_offset();
        let batch = builder.build();
        written += batch.len();
        emit(&batch);
    }
    emit(&control_batch(
        offset,
        epoch,
        ts,
        &[ControlRecord::snapshot_footer()],
    ));
    offset + 1
}

/// Writes a 100 MB snapshot as the generator does, copies it in FetchSnapshot-sized chunks as
/// a follower does, and opens the log with both snapshots.
fn snapshot_100mb() {
    use kraftwerk_raft::OffsetAndEpoch;
    let root = bench_root();
    let mut log = SegmentLog::open(root.path(), LogConfig::default()).unwrap();
    // A short log before the snapshot: 2000 1 KiB batches.
    for _ in 0..2000 {
        let base = log.end_offset().offset;
        log.append_as_leader(&batch_1k(base, 3), 3).unwrap();
    }
    log.flush().unwrap();
    let id = OffsetAndEpoch::new(log.end_offset().offset, 3);
    let rss_before = peak_rss_mib();

    // As the snapshot generator writes it: one append per batch.
    let started = Instant::now();
    let mut sink = log.create_snapshot(id).unwrap();
    let mut batches = 0;
    let records = metadata_like_snapshot(100 << 20, 3, |b| {
        batches += 1;
        sink.append(b).unwrap()
    });
    let appended = started.elapsed();
    let size = sink.finish().unwrap();
    let total = started.elapsed();
    log.register_snapshot(id).unwrap();
    println!(
        "snapshot write (batch appends): {:.1} MB, {records} records in {batches} batches; appends {:.0} ms, \
         finish (fsync + rename + dir fsync) {:.0} ms, total {:.0} ms = {:.0} MB/s; peak RSS {:.0} -> {:.0} MiB",
        size as f64 / 1e6,
        appended.as_secs_f64() * 1000.0,
        (total - appended).as_secs_f64() * 1000.0,
        total.as_secs_f64() * 1000.0,
        size as f64 / 1e6 / total.as_secs_f64(),
        rss_before,
        peak_rss_mib()
    );

    // As a follower downloads it: FetchSnapshot chunks of 8 MiB that ignore batch boundaries.
    let started = Instant::now();
    let mut position = 0u64;
    let id2 = OffsetAndEpoch::new(id.offset, 4);
    let mut sink = log.create_snapshot(id2).unwrap();
    while position < size {
        let chunk = log.read_snapshot(id, position, 8 << 20).unwrap();
        sink.append(&chunk).unwrap();
        position += chunk.len() as u64;
    }
    sink.finish().unwrap();
    println!(
        "snapshot copy in 8 MiB FetchSnapshot chunks (read + append + finish): {:.0} ms; peak RSS {:.0} MiB",
        started.elapsed().as_secs_f64() * 1000.0,
        peak_rss_mib()
    );

    // A short tail after the snapshot, the log start moved to it.
    for _ in 0..500 {
        let base = log.end_offset().offset;
        log.append_as_leader(&batch_1k(base, 4), 4).unwrap();
    }
    log.flush().unwrap();
    log.delete_before_snapshot(id).unwrap();
    log.close().unwrap();
    let started = Instant::now();
    let log = SegmentLog::open(root.path(), LogConfig::default()).unwrap();
    let open_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(log.recovery_report().index, IndexRecovery::Verified);
    assert_eq!(log.snapshot_ids(), vec![id, id2]);
    println!(
        "open with two {:.0} MB snapshots and a 500-batch tail (page cache warm): {open_ms:.0} ms \
         (snapshot validation included; log start {}, end {})",
        size as f64 / 1e6,
        log.start_offset(),
        log.end_offset().offset
    );
}
