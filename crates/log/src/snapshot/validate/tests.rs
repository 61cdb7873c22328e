use bytes::Bytes;
use kraftwerk_raft::testing::snapshot_bytes;
use kraftwerk_records::control::{control_batch, ControlRecord};
use proptest::prelude::*;

use super::*;

/// Feeds `bytes` cut at `cuts` (sorted positions) and finishes.
fn validate_in_chunks(bytes: &[u8], cuts: &[usize]) -> Result<SnapshotSummary, String> {
    let mut v = SnapshotValidator::new();
    let mut at = 0;
    for &cut in cuts.iter().chain([bytes.len()].iter()) {
        let cut = cut.clamp(at, bytes.len());
        let _ = v.update(&bytes[at..cut]);
        at = cut;
    }
    assert_eq!(v.position(), bytes.len() as u64);
    v.finish()
}

#[test]
fn summary_of_a_valid_snapshot() {
    let bytes = snapshot_bytes(4, 1_700_000_123_456, 3, 5, 1);
    let summary = validate_snapshot(&bytes).unwrap();
    assert_eq!(
        summary,
        SnapshotSummary {
            size_bytes: bytes.len() as u64,
            batches: 5,
            records: 1 + 15 + 1,
            last_contained_log_timestamp_ms: 1_700_000_123_456,
        }
    );
}

#[test]
fn a_header_batch_with_kraft_version_and_a_header_only_snapshot_are_valid() {
    // RecordsSnapshotWriter puts KRaftVersion (and Voters) after the header in the first batch.
    let ts = 77;
    let first = control_batch(
        0,
        1,
        ts,
        &[
            ControlRecord::snapshot_header(ts),
            ControlRecord::kraft_version(1),
        ],
    );
    let footer = control_batch(2, 1, ts, &[ControlRecord::snapshot_footer()]);
    let bytes = [first.as_ref(), footer.as_ref()].concat();
    let summary = validate_snapshot(&bytes).unwrap();
    assert_eq!((summary.batches, summary.records), (2, 3));
    assert_eq!(summary.last_contained_log_timestamp_ms, 77);
}

#[test]
fn errors_name_the_batch_and_byte() {
    let bytes = snapshot_bytes(1, 5, 2, 2, 1).to_vec();
    let header_len = control_batch(0, 1, 5, &[ControlRecord::snapshot_header(5)]).len();
    let mut corrupt = bytes.clone();
    corrupt[header_len + 65] ^= 1;
    let err = validate_snapshot(&corrupt).unwrap_err();
    assert!(
        err.starts_with(&format!("batch 1 at byte {header_len}: batch CRC mismatch")),
        "{err}"
    );
    let err = validate_snapshot(&bytes[..bytes.len() - 5]).unwrap_err();
    assert!(err.starts_with("truncated"), "{err}");
    assert_eq!(validate_snapshot(&[]).unwrap_err(), "the file is empty");
}

#[test]
fn a_bad_length_fails_before_the_batch_is_complete() {
    let mut v = SnapshotValidator::new();
    let mut bad = vec![0u8; 12];
    bad[8..12].copy_from_slice(&(9i32 << 20).to_be_bytes()); // 9 MiB > the 8 MiB batch limit
    assert!(v.update(&bad).unwrap_err().contains("invalid batch length"));
    assert!(v.update(b"more").is_err(), "the first error sticks");
}

fn any_snapshot() -> impl Strategy<Value = Bytes> {
    (0i32..5, 0i64..1 << 40, 0usize..6, 1usize..20, any::<u8>()).prop_map(
        |(epoch, ts, batches, records, tag)| snapshot_bytes(epoch, ts, batches, records, tag),
    )
}

proptest! {
    /// However a snapshot is cut into chunks (FetchSnapshot chunks ignore batch boundaries), the
    /// verdict and the summary are those of the whole file.
    #[test]
    fn chunking_does_not_change_the_verdict(
        bytes in any_snapshot(),
        mut cuts in prop::collection::vec(0usize..4000, 0..12),
    ) {
        cuts.sort();
        let whole = validate_snapshot(&bytes);
        prop_assert!(whole.is_ok());
        prop_assert_eq!(validate_in_chunks(&bytes, &cuts), whole);
    }

    /// Any single flipped byte (outside the base offset and leader epoch, which the CRC does not
    /// cover and which we check separately) or any cut makes the file invalid, in any chunking.
    #[test]
    fn damage_is_always_detected(
        bytes in any_snapshot(),
        position in any::<prop::sample::Index>(),
        flip in 1u8..=255,
        cut in any::<bool>(),
        mut cuts in prop::collection::vec(0usize..4000, 0..6),
    ) {
        cuts.sort();
        let mut damaged = bytes.to_vec();
        let at = position.index(damaged.len());
        if cut {
            damaged.truncate(at);
        } else {
            // Bytes 12..16 of a batch hold the partition leader epoch, outside the CRC and not
            // part of the format's promises.
            let mut batch_start = 0;
            for item in kraftwerk_records::batch::batches(&bytes) {
                let (header, _) = item.unwrap();
                if batch_start + header.size_bytes() > at {
                    break;
                }
                batch_start += header.size_bytes();
            }
            prop_assume!(!(12..16).contains(&(at - batch_start)));
            damaged[at] ^= flip;
        }
        prop_assert!(validate_in_chunks(&damaged, &cuts).is_err());
    }
}
