//! Measurements of the metadata image at scale (issue 14), printed rather than asserted (the
//! `assert`s only check that each run measured what it says):
//!
//! ```text
//! cargo bench -p kraftwerk-node --bench image                     # 100k, 1M and 2M partitions
//! KRAFTWERK_BENCH_PARTITIONS=200000 cargo bench -p kraftwerk-node --bench image
//! ```
//!
//! For each size: replaying the records into an empty image (records/s on this one thread),
//! writing the snapshot (the image's records, then the encoded batches: bytes and time),
//! loading it (decode + replay, records/s), and the growth of this process's resident memory
//! while the image was built (bytes per partition above the empty image; a coarse figure: it
//! includes allocator slack, not the records' encoded size). Topics have 100 partitions with 3
//! replicas each over 100 registered brokers, as `bench-failover` creates them.

use std::time::Instant;

use kraftwerk_controller::replay::replay;
use kraftwerk_controller::MetadataImage;
use kraftwerk_node::{decode_snapshot, encode_snapshot};
use kraftwerk_raft::OffsetAndEpoch;
use kraftwerk_records::metadata::{
    ApiMessageAndVersion, BrokerEndpoint, FeatureLevelRecord, PartitionRecord,
    RegisterBrokerRecord, TopicRecord,
};
use kraftwerk_records::metadata_version::{MetadataVersion, METADATA_VERSION_FEATURE_NAME};
use uuid::Uuid;

const PARTITIONS_PER_TOPIC: i32 = 100;
const BROKERS: i32 = 100;

fn main() {
    let sizes: Vec<usize> = match std::env::var("KRAFTWERK_BENCH_PARTITIONS") {
        Ok(v) => v
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .expect("KRAFTWERK_BENCH_PARTITIONS: numbers")
            })
            .collect(),
        Err(_) => vec![100_000, 1_000_000, 2_000_000],
    };
    println!(
        "{:>10} {:>12} {:>14} {:>12} {:>12} {:>14} {:>14} {:>12}",
        "partitions",
        "records",
        "replay rec/s",
        "write ms",
        "snapshot MB",
        "load rec/s",
        "load ms",
        "RSS B/part"
    );
    for n in sizes {
        measure(n);
    }
}

/// The records of a cluster with `partitions` partitions (rounded up to whole topics).
fn cluster_records(partitions: usize) -> Vec<ApiMessageAndVersion> {
    let mv = MetadataVersion::LATEST_PRODUCTION;
    let mut out = vec![ApiMessageAndVersion::new(
        FeatureLevelRecord {
            name: METADATA_VERSION_FEATURE_NAME.to_owned(),
            feature_level: mv.feature_level(),
            ..Default::default()
        },
        0,
    )];
    for b in 0..BROKERS {
        out.push(ApiMessageAndVersion::new(
            RegisterBrokerRecord {
                broker_id: b,
                incarnation_id: Uuid::from_u64_pair(7, b as u64),
                broker_epoch: 10 + i64::from(b),
                end_points: vec![BrokerEndpoint {
                    name: "PLAINTEXT".into(),
                    host: format!("broker-{b}"),
                    port: 9092,
                    security_protocol: 0,
                    ..Default::default()
                }],
                log_dirs: vec![Uuid::from_u64_pair(8, b as u64)],
                ..Default::default()
            },
            mv.register_broker_record_version(),
        ));
    }
    let topics = partitions.div_ceil(PARTITIONS_PER_TOPIC as usize);
    for t in 0..topics {
        let topic_id = Uuid::from_u64_pair(9, t as u64 + 1);
        out.push(ApiMessageAndVersion::new(
            TopicRecord {
                name: format!("topic-{t:07}"),
                topic_id,
                ..Default::default()
            },
            0,
        ));
        for p in 0..PARTITIONS_PER_TOPIC {
            let first = (t as i32 * 7 + p) % BROKERS;
            let replicas: Vec<i32> = (0..3).map(|i| (first + i) % BROKERS).collect();
            out.push(ApiMessageAndVersion::new(
                PartitionRecord {
                    partition_id: p,
                    topic_id,
                    isr: replicas.clone(),
                    leader: replicas[0],
                    directories: replicas
                        .iter()
                        .map(|b| Uuid::from_u64_pair(8, *b as u64))
                        .collect(),
                    replicas,
                    leader_epoch: 0,
                    partition_epoch: 0,
                    ..Default::default()
                },
                mv.partition_record_version(),
            ));
        }
    }
    out
}

/// Resident set size of this process, in bytes (`/proc/self/statm`).
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn replay_all(records: &[ApiMessageAndVersion]) -> MetadataImage {
    let mut image = MetadataImage::empty();
    for (offset, record) in records.iter().enumerate() {
        replay(&mut image, record, offset as i64).expect("replay");
    }
    image
}

fn measure(partitions: usize) {
    let records = cluster_records(partitions);
    let rss_before = rss_bytes();
    let t = Instant::now();
    let image = replay_all(&records);
    let replay_s = t.elapsed().as_secs_f64();
    let rss_after = rss_bytes();
    assert!(
        image.records_replayed as usize == records.len(),
        "every record replayed"
    );

    let t = Instant::now();
    let written = image.write_records();
    let mut snapshot = Vec::new();
    encode_snapshot(
        &written,
        &[],
        OffsetAndEpoch::new(records.len() as i64, 1),
        0,
        0,
        |batch| {
            snapshot.extend_from_slice(&batch);
            Ok(())
        },
    )
    .expect("encode");
    let write_s = t.elapsed().as_secs_f64();
    assert_eq!(
        written.len(),
        records.len(),
        "the snapshot holds every record"
    );

    let t = Instant::now();
    let loaded =
        decode_snapshot(OffsetAndEpoch::new(records.len() as i64, 1), &snapshot).expect("decode");
    let reloaded = replay_all(&loaded);
    let load_s = t.elapsed().as_secs_f64();
    assert_eq!(reloaded.records_replayed, image.records_replayed);

    let per_partition = rss_after.saturating_sub(rss_before) as f64 / partitions as f64;
    println!(
        "{:>10} {:>12} {:>14.0} {:>12.0} {:>12.1} {:>14.0} {:>14.0} {:>12.0}",
        partitions,
        records.len(),
        records.len() as f64 / replay_s,
        write_s * 1000.0,
        snapshot.len() as f64 / 1e6,
        loaded.len() as f64 / load_s,
        load_s * 1000.0,
        per_partition
    );
    drop((image, reloaded, loaded, written, snapshot));
}
