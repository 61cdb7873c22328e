//! Metadata snapshots (KIP-630) as the controller writes and reads them: the image written out as
//! the same metadata records (`MetadataImage::write_records`), framed like Kafka's
//! `RecordsSnapshotWriter` — a control batch with SnapshotHeader, data batches of at most 8 MiB
//! (offsets restart at 0 inside the file, partition leader epoch = snapshot epoch, no
//! compression), and a control batch with SnapshotFooter.
//!
//! Loading a snapshot is replay: every record is applied at the snapshot's last contained offset
//! (`Controller::load_snapshot`), so there is no second format to keep in step.

use bytes::Bytes;
use kraftwerk_protocol::constants::MAX_RECORDS_PER_BATCH;
use kraftwerk_raft::{LogError, OffsetAndEpoch};
use kraftwerk_records::batch::{batches, decode_records, BatchBuilder};
use kraftwerk_records::control::{control_batch, decode_control_batch, ControlRecord};
use kraftwerk_records::metadata::ApiMessageAndVersion;

/// Why a snapshot could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotReadError {
    /// Reading the file failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The content is not a valid snapshot.
    #[error("snapshot {offset}-{epoch}: {reason}")]
    Invalid {
        /// End offset of the snapshot id.
        offset: i64,
        /// Epoch of the snapshot id.
        epoch: i32,
        /// What was wrong.
        reason: String,
    },
}

/// Frames `records` as a snapshot file: header batch, data batches, footer batch.
/// `last_contained_timestamp_ms` is the append time of the last contained batch (it goes into
/// SnapshotHeader and drives time-based retention); `now_ms` stamps the batches.
/// `kraft_control` (KRaftVersion and Voters at kraft.version ≥ 1, from
/// `ControlState::snapshot_control_records`) goes into the header batch right after the
/// SnapshotHeader, as Kafka's `RecordsSnapshotWriter` writes it.
pub fn encode_snapshot(
    records: &[ApiMessageAndVersion],
    kraft_control: &[ControlRecord],
    id: OffsetAndEpoch,
    last_contained_timestamp_ms: i64,
    now_ms: i64,
    mut out: impl FnMut(Bytes) -> Result<(), LogError>,
) -> Result<(), LogError> {
    let mut offset = 0i64;
    let mut header = vec![ControlRecord::snapshot_header(last_contained_timestamp_ms)];
    header.extend(kraft_control.iter().cloned());
    out(control_batch(offset, id.epoch, now_ms, &header))?;
    offset += header.len() as i64;
    let mut builder = BatchBuilder::new(offset, id.epoch, now_ms);
    for record in records {
        let value = record.encode().map_err(|e| {
            LogError::Inconsistent(format!("image record {record:?} cannot be encoded: {e}"))
        })?;
        if !builder.is_empty()
            && (builder.len() >= MAX_RECORDS_PER_BATCH || !builder.has_room_for(None, &value))
        {
            let next = builder.next_offset();
            out(
                std::mem::replace(&mut builder, BatchBuilder::new(next, id.epoch, now_ms)).build(),
            )?;
        }
        builder.append(None, &value);
    }
    if !builder.is_empty() {
        offset = builder.next_offset();
        out(builder.build())?;
    }
    out(control_batch(
        offset,
        id.epoch,
        now_ms,
        &[ControlRecord::snapshot_footer()],
    ))
}

/// Decodes a whole snapshot: checks the SnapshotHeader comes first and the SnapshotFooter last,
/// and returns the metadata records in order.
pub fn decode_snapshot(
    id: OffsetAndEpoch,
    bytes: &[u8],
) -> Result<Vec<ApiMessageAndVersion>, SnapshotReadError> {
    let invalid = |reason: String| SnapshotReadError::Invalid {
        offset: id.offset,
        epoch: id.epoch,
        reason,
    };
    let mut records = Vec::new();
    let mut seen_header = false;
    let mut seen_footer = false;
    let mut consumed = 0usize;
    for item in batches(bytes) {
        let (header, batch) = item.map_err(|e| invalid(e.to_string()))?;
        consumed += header.size_bytes();
        if seen_footer {
            return Err(invalid("batches after the SnapshotFooter".into()));
        }
        if header.is_control() {
            let (_, controls) = decode_control_batch(batch).map_err(|e| invalid(e.to_string()))?;
            for (_, c) in controls {
                match c {
                    ControlRecord::SnapshotHeader(_) if !seen_header => seen_header = true,
                    ControlRecord::SnapshotFooter(_) if seen_header => seen_footer = true,
                    ControlRecord::KRaftVersion(_) | ControlRecord::Voters(_) if seen_header => {}
                    other => {
                        return Err(invalid(format!(
                            "unexpected control record {:?}",
                            other.record_type()
                        )))
                    }
                }
            }
        } else {
            if !seen_header {
                return Err(invalid("data before the SnapshotHeader".into()));
            }
            for r in decode_records(batch).map_err(|e| invalid(e.to_string()))? {
                let value = r.value.unwrap_or_default();
                records.push(
                    ApiMessageAndVersion::decode(&value)
                        .map_err(|e| invalid(format!("offset {}: {e}", r.offset)))?,
                );
            }
        }
    }
    if consumed != bytes.len() {
        return Err(invalid(format!(
            "{} trailing bytes",
            bytes.len() - consumed
        )));
    }
    if !seen_footer {
        return Err(invalid("no SnapshotFooter".into()));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kraftwerk_records::metadata::{FeatureLevelRecord, NoOpRecord, TopicRecord};

    fn sample() -> Vec<ApiMessageAndVersion> {
        let mut records = vec![ApiMessageAndVersion::new(
            FeatureLevelRecord {
                name: "metadata.version".into(),
                feature_level: 27,
                ..Default::default()
            },
            0,
        )];
        for i in 0..25_000u64 {
            records.push(ApiMessageAndVersion::new(
                TopicRecord {
                    name: format!("topic-{i}"),
                    topic_id: uuid::Uuid::from_u64_pair(i + 1, 7),
                    ..Default::default()
                },
                0,
            ));
        }
        records
    }

    fn encode(records: &[ApiMessageAndVersion], id: OffsetAndEpoch) -> Vec<u8> {
        let mut bytes = Vec::new();
        encode_snapshot(records, &[], id, 1_000, 2_000, |b| {
            bytes.extend_from_slice(&b);
            Ok(())
        })
        .unwrap();
        bytes
    }

    #[test]
    fn round_trip_with_header_footer_and_bounded_batches() {
        let records = sample();
        let id = OffsetAndEpoch::new(123, 4);
        let bytes = encode(&records, id);
        let headers: Vec<_> = batches(&bytes).map(|b| b.unwrap().0).collect();
        assert!(headers.first().unwrap().is_control() && headers.last().unwrap().is_control());
        assert!(
            headers.len() >= 5,
            "25,001 records need three data batches of at most 10,000"
        );
        assert!(headers.iter().all(|h| h.partition_leader_epoch == 4));
        // Offsets restart at 0 and are contiguous inside the file.
        assert_eq!(headers[0].base_offset, 0);
        for w in headers.windows(2) {
            assert_eq!(w[0].next_offset(), w[1].base_offset);
        }
        assert_eq!(decode_snapshot(id, &bytes).unwrap(), records);
    }

    #[test]
    fn kraft_version_1_puts_kraft_version_and_voters_right_after_the_header() {
        // Kafka `RecordsSnapshotWriter`: SnapshotHeader, KRaftVersion, Voters in one batch.
        let id = OffsetAndEpoch::new(10, 2);
        let voters = kafka_protocol::messages::VotersRecord::default().with_voters(vec![
            kafka_protocol::messages::voters_record::Voter::default()
                .with_voter_id(1.into())
                .with_voter_directory_id(uuid::Uuid::from_u64_pair(1, 1)),
        ]);
        let control = vec![
            ControlRecord::kraft_version(1),
            ControlRecord::Voters(voters.clone()),
        ];
        let records = vec![ApiMessageAndVersion::new(NoOpRecord::default(), 0)];
        let mut bytes = Vec::new();
        encode_snapshot(&records, &control, id, 1_000, 2_000, |b| {
            bytes.extend_from_slice(&b);
            Ok(())
        })
        .unwrap();
        let (first, first_bytes) = batches(&bytes).next().unwrap().unwrap();
        assert!(first.is_control());
        let (_, header) = decode_control_batch(first_bytes).unwrap();
        let offsets: Vec<i64> = header.iter().map(|(o, _)| *o).collect();
        assert_eq!(offsets, vec![0, 1, 2]);
        assert!(matches!(header[0].1, ControlRecord::SnapshotHeader(_)));
        assert!(matches!(&header[1].1, ControlRecord::KRaftVersion(k) if k.k_raft_version == 1));
        assert!(matches!(&header[2].1, ControlRecord::Voters(v) if *v == voters));
        let second = batches(&bytes).nth(1).unwrap().unwrap().0;
        assert_eq!(second.base_offset, 3, "data follows at offset 3");
        assert_eq!(decode_snapshot(id, &bytes).unwrap(), records);
    }

    #[test]
    fn torn_or_footerless_snapshots_are_rejected() {
        let id = OffsetAndEpoch::new(5, 1);
        let records = vec![ApiMessageAndVersion::new(NoOpRecord::default(), 0)];
        let bytes = encode(&records, id);
        assert!(decode_snapshot(id, &bytes[..bytes.len() - 3]).is_err());
        let footer_len = batches(&bytes)
            .map(|b| b.unwrap().0)
            .last()
            .unwrap()
            .size_bytes();
        assert!(decode_snapshot(id, &bytes[..bytes.len() - footer_len]).is_err());
        let mut flipped = bytes.clone();
        flipped[70] ^= 1;
        assert!(decode_snapshot(id, &flipped).is_err());
    }
}
