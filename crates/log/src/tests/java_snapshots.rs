//! Snapshot interchange with Java controllers (Kafka 4.1.2's own classes, driven by
//! `testdata/JavaSnapshots.java`).
//!
//! [`describe`] prints a directory exactly as `JavaSnapshots.java` prints it through
//! `KafkaMetadataLog` (log start and end, snapshot ids, `endOffsetForEpoch`, batches) and
//! `FileRawSnapshotReader` + `RecordsSnapshotReader` (every snapshot, record by record), so the
//! two outputs are compared as text:
//! - the checked-in fixture `testdata/java-4.1.2-snapshots/` (Java wrote a log with snapshots and
//!   moved its log start with `deleteBeforeSnapshot`) must read here as Java read it;
//! - `java_reads_our_snapshots_and_we_read_javas` runs Java on a directory written here, and this
//!   crate on a directory Java writes. It needs `java` and Kafka's jars in
//!   `$KRAFTWERK_KAFKA_LIBS`, fails without them, and is `#[ignore]`d so that plain `cargo test`
//!   leaves it to `compat/run`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use bytes::{Bytes, BytesMut};
use kraftwerk_raft::testing::write_snapshot;
use kraftwerk_raft::{OffsetAndEpoch, ReplicatedLog};
use kraftwerk_records::batch::{batches, decode_records, BatchBuilder};
use kraftwerk_records::control::{control_batch, decode_control_batch, ControlRecord};
use kraftwerk_records::metadata::{
    ApiMessageAndVersion, MetadataRecord, PartitionRecord, TopicRecord,
};
use uuid::Uuid;

use super::small_segments;
use crate::snapshot::{parse_snapshot_file_name, SnapshotFileKind};
use crate::testing::kafka_classpath;
use crate::{SegmentLog, METADATA_PARTITION_DIR};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

fn id_text(id: OffsetAndEpoch) -> String {
    format!("{}-{}", id.offset, id.epoch)
}

fn control_type_name(record: &ControlRecord) -> &'static str {
    // Java's ControlRecordType names.
    match record {
        ControlRecord::LeaderChange(_) => "LEADER_CHANGE",
        ControlRecord::SnapshotHeader(_) => "SNAPSHOT_HEADER",
        ControlRecord::SnapshotFooter(_) => "SNAPSHOT_FOOTER",
        ControlRecord::KRaftVersion(_) => "KRAFT_VERSION",
        ControlRecord::Voters(_) => "KRAFT_VOTERS",
    }
}

/// One snapshot as `JavaSnapshots.describeSnapshot` prints it.
fn describe_snapshot(log: &SegmentLog, id: OffsetAndEpoch, out: &mut String) {
    let size = log.snapshot_size_bytes(id).unwrap();
    let bytes = log.read_snapshot(id, 0, size as usize).unwrap();
    let mut lines = String::new();
    let mut timestamp = None;
    for item in batches(&bytes) {
        let (header, batch) = item.unwrap();
        lines.push_str(&format!(
            "  batch {}-{}@{}",
            header.base_offset,
            header.last_offset(),
            header.partition_leader_epoch
        ));
        if header.is_control() {
            for (_, record) in decode_control_batch(batch).unwrap().1 {
                if let ControlRecord::SnapshotHeader(h) = &record {
                    timestamp.get_or_insert(h.last_contained_log_timestamp);
                }
                lines.push_str(&format!(" {}", control_type_name(&record)));
            }
        } else {
            for record in decode_records(batch).unwrap() {
                let r = ApiMessageAndVersion::decode(&record.value.unwrap()).unwrap();
                lines.push_str(&format!(" {}:{}", r.record.api_key(), r.version));
                match &r.record {
                    MetadataRecord::Topic(t) => lines.push_str(&format!(":{}", t.name)),
                    MetadataRecord::Partition(p) => {
                        lines.push_str(&format!(":{}/{}", p.partition_id, p.leader))
                    }
                    _ => {}
                }
            }
        }
        lines.push('\n');
    }
    out.push_str(&format!(
        "  size={size} lastContainedLogTimestamp={} lastContainedLogOffset={} lastContainedLogEpoch={}\n",
        timestamp.unwrap(),
        id.offset - 1,
        id.epoch
    ));
    out.push_str(&lines);
}

/// The directory as `JavaSnapshots.java describe` prints it.
fn describe(log: &SegmentLog) -> String {
    let end = log.end_offset();
    let mut out = format!(
        "startOffset={} endOffset={} lastFetchedEpoch={}\n",
        log.start_offset(),
        end.offset,
        end.epoch
    );
    let text = |id: Option<OffsetAndEpoch>| id.map_or("none".to_string(), id_text);
    out.push_str(&format!(
        "earliestSnapshot={} latestSnapshot={}\n",
        text(log.earliest_snapshot_id()),
        text(log.latest_snapshot_id())
    ));
    out.push_str("endOffsetForEpoch");
    for epoch in -1..=6 {
        out.push_str(&format!(
            " {epoch}:{}",
            id_text(log.end_offset_for_epoch(epoch))
        ));
    }
    out.push_str("\nbatches");
    for item in batches(&log.read(log.start_offset(), usize::MAX).unwrap()) {
        let (h, _) = item.unwrap();
        let control = if h.is_control() { "c" } else { "" };
        out.push_str(&format!(
            " {}-{}@{}{control}",
            h.base_offset,
            h.last_offset(),
            h.partition_leader_epoch
        ));
    }
    out.push('\n');
    let mut names: Vec<String> = fs::read_dir(log.partition_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| parse_snapshot_file_name(n).is_some())
        .collect();
    names.sort();
    for name in names {
        let (id, kind) = parse_snapshot_file_name(&name).unwrap().unwrap();
        out.push_str(&format!(
            "file {name} id={} partial={} deleted={}\n",
            id_text(id),
            kind == SnapshotFileKind::Partial,
            kind == SnapshotFileKind::Deleted
        ));
        if kind == SnapshotFileKind::Complete {
            if log.snapshot_size_bytes(id).is_ok() {
                describe_snapshot(log, id, &mut out);
            } else {
                out.push_str("  not in KafkaMetadataLog's catalog\n");
            }
        }
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for item in fs::read_dir(from).unwrap() {
        let item = item.unwrap();
        fs::copy(item.path(), to.join(item.file_name())).unwrap();
    }
}

/// What `JavaSnapshots.java write` left in `testdata/java-4.1.2-snapshots/`, and what its
/// `read` printed for it, are read here identically.
#[test]
fn reads_a_directory_where_java_moved_the_log_start() {
    let fixture = testdata().join("java-4.1.2-snapshots");
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join(METADATA_PARTITION_DIR);
    copy_dir(&fixture.join(METADATA_PARTITION_DIR), &dir);
    let log = SegmentLog::open(root.path(), small_segments(600)).unwrap();
    let java = fs::read_to_string(fixture.join("java-read.txt")).unwrap();
    assert_eq!(describe(&log), java);
    let report = log.snapshot_recovery();
    assert!(report.invalid_deleted.is_empty() && report.below_log_start_deleted.is_empty());
    assert!(!report.truncated_to_latest_snapshot);
    // Java's leftovers (segments and the older snapshot renamed to *.deleted) are gone, as
    // Java's own LogLoader and recoverSnapshots would delete them.
    assert_eq!(
        report.leftovers_deleted,
        vec![dir.join("00000000000000000013-0000000001.checkpoint.deleted")]
    );
    let names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".deleted")), "{names:?}");
    assert!(names.contains(&"00000000000000000020.log".to_string()));
}

/// Java's `Snapshots.createTempFile` names, and our `.part` names, read as Java reads them.
#[test]
fn partial_file_names_follow_javas_pattern() {
    let java_name = "00000000000000000024-0000000003-7465920114658113021.checkpoint.part";
    assert_eq!(
        parse_snapshot_file_name(java_name),
        Some(Ok((OffsetAndEpoch::new(24, 3), SnapshotFileKind::Partial)))
    );
}

fn uuid(i: u64) -> Uuid {
    Uuid::from_u64_pair(0x1000 + i, 0x2000 + i)
}

/// The records `JavaSnapshots.metadata(topics)` writes.
fn metadata(topics: u64) -> Vec<Bytes> {
    let mut out = Vec::new();
    for t in 0..topics {
        let topic = TopicRecord {
            name: format!("topic-{t}"),
            topic_id: uuid(t),
            ..Default::default()
        };
        out.push(ApiMessageAndVersion::new(topic, 0).encode().unwrap());
        for p in 0..2 {
            let partition = PartitionRecord {
                partition_id: p,
                topic_id: uuid(t),
                replicas: vec![1, 2, 3],
                isr: vec![1, 2, 3],
                leader: 1 + p,
                leader_epoch: t as i32,
                partition_epoch: t as i32,
                ..Default::default()
            };
            out.push(ApiMessageAndVersion::new(partition, 0).encode().unwrap());
        }
    }
    out
}

/// A snapshot as `RecordsSnapshotWriter` writes one at kraft.version 0.
fn metadata_snapshot(epoch: i32, timestamp_ms: i64, topics: u64) -> Bytes {
    let mut out = BytesMut::new();
    out.extend_from_slice(&control_batch(
        0,
        epoch,
        timestamp_ms,
        &[ControlRecord::snapshot_header(timestamp_ms)],
    ));
    let mut builder = BatchBuilder::new(1, epoch, timestamp_ms);
    for record in metadata(topics) {
        builder.append(None, &record);
    }
    let next = builder.next_offset();
    out.extend_from_slice(&builder.build());
    out.extend_from_slice(&control_batch(
        next,
        epoch,
        timestamp_ms,
        &[ControlRecord::snapshot_footer()],
    ));
    out.freeze()
}

/// The log `JavaSnapshots.java write` writes, written by `SegmentLog`: 600-byte segments, two
/// snapshots, the log start moved to the second one; then a third snapshot at the log end.
fn write_like_java(root: &Path) {
    let mut log = SegmentLog::open(root, small_segments(600)).unwrap();
    let ts = 1_700_000_000_000i64;
    let leader_change = |log: &mut SegmentLog, epoch: i32, ts: i64| {
        let offset = log.end_offset().offset;
        let batch = control_batch(
            offset,
            epoch,
            ts,
            &[ControlRecord::leader_change(1, &[1], &[1])],
        );
        log.append_as_leader(&batch, epoch).unwrap();
    };
    let data = |log: &mut SegmentLog, epoch: i32, records: usize, ts: i64| {
        let mut builder = BatchBuilder::new(log.end_offset().offset, epoch, ts);
        for i in 0..records {
            builder.append(None, &[(i as i32 + epoch) as u8; 40]);
        }
        log.append_as_leader(&builder.build(), epoch).unwrap();
    };
    let snapshot = |log: &mut SegmentLog, topics: u64, ts: i64| {
        let id = log.end_offset();
        write_snapshot(log, id, &metadata_snapshot(id.epoch, ts, topics));
        id
    };
    leader_change(&mut log, 1, ts);
    for i in 0..6 {
        data(&mut log, 1, 1 + i % 3, ts + i as i64);
    }
    snapshot(&mut log, 2, ts + 5);
    leader_change(&mut log, 3, ts + 100);
    for i in 0..5 {
        data(&mut log, 3, 2, ts + 100 + i);
    }
    let second = snapshot(&mut log, 3, ts + 104);
    data(&mut log, 3, 2, ts + 105);
    log.flush().unwrap();
    log.delete_before_snapshot(second).unwrap();
    // Unlike Java's run, a second snapshot stays, so that earliest and latest differ.
    snapshot(&mut log, 4, ts + 105);
    log.close().unwrap();
}

fn java(mode: &str, partition_dir: &Path) -> String {
    let output = Command::new("java")
        .arg("-cp")
        .arg(kafka_classpath())
        .arg(testdata().join("JavaSnapshots.java"))
        .arg(mode)
        .arg(partition_dir)
        .output()
        .expect("run java (Java 17+ on PATH)");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "JavaSnapshots {mode} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
#[ignore = "run by compat/run: needs Java and Kafka's jars (KRAFTWERK_KAFKA_LIBS)"]
fn java_reads_our_snapshots_and_we_read_javas() {
    // Ours, read by Java.
    let ours = tempfile::tempdir().unwrap();
    write_like_java(ours.path());
    let log = SegmentLog::open(ours.path(), small_segments(600)).unwrap();
    let expected = describe(&log);
    drop(log);
    let dir = ours.path().join(METADATA_PARTITION_DIR);
    let java_read = java("read", &dir);
    println!("kraftwerk directory, read by Java:\n{java_read}");
    assert_eq!(java_read, expected);
    // Java opened it (and rewrote its own bookkeeping files); we still read the same.
    let log = SegmentLog::open(ours.path(), small_segments(600)).unwrap();
    assert_eq!(describe(&log), expected);
    drop(log);

    // Java's, read by Java (in a copy) and by us.
    let theirs = tempfile::tempdir().unwrap();
    let dir = theirs.path().join(METADATA_PARTITION_DIR);
    fs::create_dir_all(&dir).unwrap();
    java("write", &dir);
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&dir, &copy.path().join(METADATA_PARTITION_DIR));
    let java_read = java("read", &copy.path().join(METADATA_PARTITION_DIR));
    let log = SegmentLog::open(theirs.path(), small_segments(600)).unwrap();
    assert_eq!(describe(&log), java_read);
}
