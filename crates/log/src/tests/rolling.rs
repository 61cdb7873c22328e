//! Segment rolling and truncation across segments, checked against the files on disk.

use std::fs;
use std::path::Path;

use bytes::Bytes;
use kraftwerk_raft::testing::suite::{concat, data_batch};
use kraftwerk_raft::{OffsetAndEpoch, ReplicatedLog};

use super::{small_segments, TestLog};
use crate::{segment_file_name, IndexRecovery};

/// Segment files in the partition directory as `(base offset, size)`.
fn segment_files(dir: &Path) -> Vec<(i64, u64)> {
    let mut out: Vec<(i64, u64)> = fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            let base = crate::parse_segment_file_name(e.file_name().to_str()?)?;
            Some((base, e.metadata().unwrap().len()))
        })
        .collect();
    out.sort();
    out
}

/// Kafka's roll rule (`LogSegment.shouldRoll` by size) applied to a sequence of batches:
/// the expected `(base offset, size)` of every segment.
fn expected_segments(batches: &[Bytes], segment_bytes: u64) -> Vec<(i64, u64)> {
    let mut segments: Vec<(i64, u64)> = vec![(0, 0)];
    for batch in batches {
        let base = i64::from_be_bytes(batch[..8].try_into().unwrap());
        let last = segments.last_mut().unwrap();
        if last.1 > 0 && last.1 + batch.len() as u64 > segment_bytes {
            segments.push((base, batch.len() as u64));
        } else {
            last.1 += batch.len() as u64;
        }
    }
    segments
}

fn read_all(log: &TestLog) -> Bytes {
    log.read(0, usize::MAX).unwrap()
}

#[test]
fn rolls_at_segment_bytes_with_kafka_file_names() {
    let segment_bytes = 300;
    let mut log = TestLog::new(small_segments(segment_bytes));
    let mut batches = Vec::new();
    for i in 0..12usize {
        let batch = data_batch(log.end_offset().offset, 1, 1 + i % 4, i as u8);
        log.append_as_leader(&batch, 1).unwrap();
        batches.push(batch);
    }
    log.flush().unwrap();
    let dir = log.log().partition_dir().to_path_buf();
    let expected = expected_segments(&batches, segment_bytes);
    assert!(expected.len() >= 4, "{expected:?}");
    assert_eq!(segment_files(&dir), expected);
    assert_eq!(
        log.log().segment_base_offsets(),
        expected.iter().map(|s| s.0).collect::<Vec<_>>()
    );
    assert!(expected.iter().all(|&(_, size)| size <= segment_bytes));
    assert_eq!(read_all(&log), concat(&batches.iter().collect::<Vec<_>>()));
    // Each segment file on its own is exactly the batches Kafka would have put there.
    for &(base, _) in &expected {
        let in_file: Vec<&Bytes> = batches
            .iter()
            .filter(|b| {
                let b_base = i64::from_be_bytes(b[..8].try_into().unwrap());
                let next_base = expected
                    .iter()
                    .map(|s| s.0)
                    .find(|&s| s > base)
                    .unwrap_or(i64::MAX);
                b_base >= base && b_base < next_base
            })
            .collect();
        assert_eq!(
            fs::read(dir.join(segment_file_name(base))).unwrap(),
            concat(&in_file).to_vec(),
            "segment {base}"
        );
    }
    log.reopen_after(|_| {});
    assert_eq!(log.log().recovery_report().index, IndexRecovery::Verified);
    assert_eq!(log.log().recovery_report().batches_scanned, 0);
}

#[test]
fn one_follower_append_spreads_over_segments_and_a_big_batch_gets_its_own() {
    let mut log = TestLog::new(small_segments(200));
    let small: Vec<Bytes> = (0..4).map(|i| data_batch(i * 2, 2, 2, i as u8)).collect();
    let big = data_batch(8, 2, 20, 9); // far over 200 bytes
    let tail = data_batch(28, 2, 1, 10);
    let mut all: Vec<&Bytes> = small.iter().collect();
    all.push(&big);
    all.push(&tail);
    let info = log.append_as_follower(&concat(&all)).unwrap();
    assert_eq!((info.first_offset, info.last_offset), (0, 28));
    let dir = log.log().partition_dir().to_path_buf();
    let files = segment_files(&dir);
    assert_eq!(
        files,
        expected_segments(&all.iter().map(|b| (*b).clone()).collect::<Vec<_>>(), 200)
    );
    assert!(
        files.contains(&(8, big.len() as u64)),
        "the oversized batch is alone in its segment: {files:?}"
    );
    assert_eq!(read_all(&log), concat(&all));
    assert_eq!(log.read(10, 1).unwrap(), big);
}

#[test]
fn truncation_into_an_earlier_segment_deletes_later_files() {
    let mut log = TestLog::new(small_segments(250));
    let mut batches = Vec::new();
    for i in 0..9usize {
        let batch = data_batch(log.end_offset().offset, 1 + (i / 3) as i32, 3, i as u8);
        log.append_as_leader(&batch, 1 + (i / 3) as i32).unwrap();
        batches.push(batch);
    }
    log.flush().unwrap();
    let dir = log.log().partition_dir().to_path_buf();
    let segments = log.log().segment_base_offsets();
    assert!(segments.len() >= 3, "{segments:?}");
    // Java's per-segment files of a later segment go with it.
    for suffix in ["index", "timeindex"] {
        fs::write(dir.join(format!("{:020}.{suffix}", segments[2])), b"").unwrap();
    }

    // Offset 4 lies in the second batch (3..=5) of the first segment.
    log.truncate_to(4).unwrap();
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(3, 1));
    assert_eq!(segment_files(&dir), vec![(0, batches[0].len() as u64)]);
    assert!(!dir.join(format!("{:020}.index", segments[2])).exists());
    assert_eq!(log.log().epoch_entries(), vec![(1, 0)]);
    assert_eq!(read_all(&log), batches[0]);

    // The log grows again from there, rolling into a segment named by the new offsets.
    let next = data_batch(3, 4, 30, 42);
    log.append_as_leader(&next, 4).unwrap();
    log.flush().unwrap();
    assert_eq!(log.log().segment_base_offsets(), vec![0, 3]);
    log.reopen_after(|_| {});
    assert_eq!(log.log().recovery_report().index, IndexRecovery::Verified);
    assert_eq!(log.log().recovery_report().batches_scanned, 0);
    assert_eq!(read_all(&log), concat(&[&batches[0], &next]));
}

#[test]
fn truncation_at_a_segment_base_keeps_that_segment_empty() {
    let mut log = TestLog::new(small_segments(200));
    for i in 0..6usize {
        let batch = data_batch(log.end_offset().offset, 1, 2, i as u8);
        log.append_as_leader(&batch, 1).unwrap();
    }
    log.flush().unwrap();
    let segments = log.log().segment_base_offsets();
    let cut = segments[1];
    log.truncate_to(cut).unwrap();
    let dir = log.log().partition_dir().to_path_buf();
    let files = segment_files(&dir);
    assert_eq!(
        files.last(),
        Some(&(cut, 0)),
        "like Kafka, the segment starting at the cut stays, empty: {files:?}"
    );
    assert_eq!(files.len(), 2);
    let before = read_all(&log);

    // Reopening with the index ending in the (now sealed) previous segment takes the fast path.
    log.reopen_after(|_| {});
    assert_eq!(
        log.log().recovery_report().index,
        IndexRecovery::Verified,
        "{:?}",
        log.log().recovery_report()
    );
    assert_eq!(read_all(&log), before);
    let batch = data_batch(cut, 2, 1, 99);
    log.append_as_leader(&batch, 2).unwrap();
    log.flush().unwrap();
    assert_eq!(
        segment_files(&dir).last(),
        Some(&(cut, batch.len() as u64)),
        "appends fill the empty segment"
    );
    log.reopen_after(|_| {});
    assert_eq!(log.log().recovery_report().index, IndexRecovery::Verified);
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(cut + 1, 2));
}
