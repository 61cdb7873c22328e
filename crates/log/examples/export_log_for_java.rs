//! Writes a metadata log with several segments, epochs and a truncation into
//! `DIR/__cluster_metadata-0`, for `testdata/JavaMetadataLog.java read` (Kafka's
//! `KafkaMetadataLog`) to open, and prints what Java is expected to report:
//!
//! ```text
//! cargo run -p kraftwerk-log --example export_log_for_java -- /tmp/rlog
//! java -cp "$KRAFTWERK_KAFKA_LIBS/*" crates/log/testdata/JavaMetadataLog.java read /tmp/rlog/__cluster_metadata-0
//! ```
//!
//! See `testdata/README.md`. Refuses to run without DIR, or when DIR already holds a log.

use std::error::Error;
use std::path::PathBuf;

use kraftwerk_log::testing::{describe_batches, small_segments};
use kraftwerk_log::{SegmentLog, METADATA_PARTITION_DIR};
use kraftwerk_raft::testing::suite::data_batch;
use kraftwerk_raft::ReplicatedLog;

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args_os().skip(1);
    let (Some(dir), None) = (args.next().map(PathBuf::from), args.next()) else {
        eprintln!("usage: cargo run -p kraftwerk-log --example export_log_for_java -- DIR");
        std::process::exit(2);
    };
    let partition = dir.join(METADATA_PARTITION_DIR);
    if partition.exists() {
        // The expectations printed below hold for a new log only.
        return Err(format!("{} already exists", partition.display()).into());
    }
    let mut log = SegmentLog::open(&dir, small_segments(400))?;
    for (epoch, records) in [
        (1, 1),
        (1, 3),
        (1, 2),
        (2, 4),
        (2, 1),
        (2, 2),
        (4, 3),
        (4, 1),
    ] {
        let base = log.end_offset().offset;
        log.append_as_leader(&data_batch(base, epoch, records, epoch as u8), epoch)?;
    }
    log.flush()?;
    log.truncate_to(15)?; // inside the epoch-4 batch 13..=15: epoch 4 is gone
    log.append_as_leader(&data_batch(13, 5, 2, 7), 5)?;
    log.flush()?;
    println!(
        "end_offset={:?} segments={:?} epochs={:?}",
        log.end_offset(),
        log.segment_base_offsets(),
        log.epoch_entries()
    );
    for epoch in -1..=6 {
        println!(
            "end_offset_for_epoch({epoch})={:?}",
            log.end_offset_for_epoch(epoch)
        );
    }
    println!("batches={}", describe_batches(&log.read(0, usize::MAX)?));
    log.close()?;
    println!("wrote {}", partition.display());
    Ok(())
}
