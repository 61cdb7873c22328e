//! KRaft control records (`org.apache.kafka.common.record.ControlRecordType`, `ControlRecordUtils`).
//!
//! A control record lives in a control batch (attribute bit 5). Its key is 4 bytes, `int16`
//! key version 0 + `int16` type (`ControlRecordType`); its value is the message serialized in
//! flexible encoding at the fixed version 0 of `ControlRecordUtils` (no frame prefix). Java
//! readers deserialize at version 0 whatever the writer meant, so we never write another.
//!
//! Values are encoded with kafka-protocol's generated encoders. Decoding is our own: the
//! generated decoders preallocate arrays from the untrusted length prefix, and a corrupt
//! record must produce an error, not an abort.

use std::collections::BTreeMap;

use bytes::Bytes;
use kafka_protocol::messages::leader_change_message::Voter as LeaderChangeVoter;
use kafka_protocol::messages::voters_record::{Endpoint, KRaftVersionFeature, Voter};
use kafka_protocol::messages::{
    BrokerId, KRaftVersionRecord, LeaderChangeMessage, SnapshotFooterRecord, SnapshotHeaderRecord,
    VotersRecord,
};
use kafka_protocol::protocol::{Encodable, StrBytes};

use crate::batch::{check_control_key, decode_batch, BatchBuilder, BatchError, BatchHeader};
use crate::codec::{ReadError, Reader};

/// `ControlRecordType.LEADER_CHANGE`.
pub const LEADER_CHANGE: i16 = 2;
/// `ControlRecordType.SNAPSHOT_HEADER`.
pub const SNAPSHOT_HEADER: i16 = 3;
/// `ControlRecordType.SNAPSHOT_FOOTER`.
pub const SNAPSHOT_FOOTER: i16 = 4;
/// `ControlRecordType.KRAFT_VERSION`.
pub const KRAFT_VERSION: i16 = 5;
/// `ControlRecordType.KRAFT_VOTERS`.
pub const KRAFT_VOTERS: i16 = 6;

/// The message version every control value is written and read at (`ControlRecordUtils`
/// `*_CURRENT_VERSION`).
pub const CONTROL_VALUE_VERSION: i16 = 0;

/// One KRaft control record, holding kafka-protocol's message types.
#[derive(Clone, Debug, PartialEq)]
pub enum ControlRecord {
    /// First record of every epoch (type 2). At v0 voters carry only their id.
    LeaderChange(LeaderChangeMessage),
    /// First record of a snapshot (type 3).
    SnapshotHeader(SnapshotHeaderRecord),
    /// Last record of a snapshot (type 4).
    SnapshotFooter(SnapshotFooterRecord),
    /// The finalized kraft.version (type 5, KIP-853).
    KRaftVersion(KRaftVersionRecord),
    /// The voter set (type 6, KIP-853).
    Voters(VotersRecord),
}

fn corrupt(what: &str, e: ReadError) -> BatchError {
    BatchError::InvalidControlRecord(format!("{what}: {e}"))
}

impl ControlRecord {
    /// `LeaderChangeMessage` v0 as `LeaderState` writes it: `leader_id`, the voter ids and the
    /// ids of the voters that granted the vote.
    pub fn leader_change(leader_id: i32, voters: &[i32], granting_voters: &[i32]) -> Self {
        let to_voters = |ids: &[i32]| {
            ids.iter()
                .map(|&id| LeaderChangeVoter::default().with_voter_id(id))
                .collect()
        };
        ControlRecord::LeaderChange(
            LeaderChangeMessage::default()
                .with_version(CONTROL_VALUE_VERSION)
                .with_leader_id(BrokerId(leader_id))
                .with_voters(to_voters(voters))
                .with_granting_voters(to_voters(granting_voters)),
        )
    }

    /// `SnapshotHeaderRecord` v0 with the append time (ms) of the last record in the snapshot.
    pub fn snapshot_header(last_contained_log_timestamp_ms: i64) -> Self {
        ControlRecord::SnapshotHeader(
            SnapshotHeaderRecord::default()
                .with_version(CONTROL_VALUE_VERSION)
                .with_last_contained_log_timestamp(last_contained_log_timestamp_ms),
        )
    }

    /// `SnapshotFooterRecord` v0.
    pub fn snapshot_footer() -> Self {
        ControlRecord::SnapshotFooter(
            SnapshotFooterRecord::default().with_version(CONTROL_VALUE_VERSION),
        )
    }

    /// `KRaftVersionRecord` v0 carrying the kraft.version feature level.
    pub fn kraft_version(kraft_version: i16) -> Self {
        ControlRecord::KRaftVersion(
            KRaftVersionRecord::default()
                .with_version(CONTROL_VALUE_VERSION)
                .with_k_raft_version(kraft_version),
        )
    }

    /// The control type, 2..=6 (`ControlRecordType`).
    pub fn record_type(&self) -> i16 {
        match self {
            ControlRecord::LeaderChange(_) => LEADER_CHANGE,
            ControlRecord::SnapshotHeader(_) => SNAPSHOT_HEADER,
            ControlRecord::SnapshotFooter(_) => SNAPSHOT_FOOTER,
            ControlRecord::KRaftVersion(_) => KRAFT_VERSION,
            ControlRecord::Voters(_) => KRAFT_VOTERS,
        }
    }

    /// The record key: `int16` key version 0, then `int16` type (`ControlRecordType.recordKey`).
    pub fn encode_key(&self) -> [u8; 4] {
        let t = self.record_type().to_be_bytes();
        [0, 0, t[0], t[1]]
    }

    /// The record value: the message at version 0, flexible encoding, no frame prefix.
    ///
    /// Panics if the message cannot be written at v0 — a LeaderChange voter with a directory
    /// id (v1 only; Java readers would misread it) — which is a programming error.
    pub fn encode_value(&self) -> Bytes {
        let mut out: Vec<u8> = Vec::new();
        let result = match self {
            ControlRecord::LeaderChange(m) => m.encode(&mut out, CONTROL_VALUE_VERSION),
            ControlRecord::SnapshotHeader(m) => m.encode(&mut out, CONTROL_VALUE_VERSION),
            ControlRecord::SnapshotFooter(m) => m.encode(&mut out, CONTROL_VALUE_VERSION),
            ControlRecord::KRaftVersion(m) => m.encode(&mut out, CONTROL_VALUE_VERSION),
            ControlRecord::Voters(m) => m.encode(&mut out, CONTROL_VALUE_VERSION),
        };
        if let Err(e) = result {
            panic!(
                "control record {:?} cannot be written at v0: {e}",
                self.record_type()
            );
        }
        Bytes::from(out)
    }

    /// Decodes a control record from its key and value, as `RecordsIterator.decodeControlRecord`
    /// does: key ≥ 4 bytes with version ≥ 0 and type 2..=6, value non-empty and decoded at
    /// version 0. Unlike Java, bytes left after the message are rejected.
    ///
    /// Errors: [`BatchError::InvalidRecord`] for a bad key, [`BatchError::InvalidControlRecord`]
    /// for a value that does not decode.
    pub fn decode(key: &[u8], value: &[u8]) -> Result<ControlRecord, BatchError> {
        let record_type = check_control_key(key)?;
        if value.is_empty() {
            return Err(BatchError::InvalidControlRecord("empty value".into()));
        }
        let mut r = Reader::new(value);
        let record = match record_type {
            LEADER_CHANGE => read_leader_change(&mut r).map(ControlRecord::LeaderChange),
            SNAPSHOT_HEADER => read_snapshot_header(&mut r).map(ControlRecord::SnapshotHeader),
            SNAPSHOT_FOOTER => read_snapshot_footer(&mut r).map(ControlRecord::SnapshotFooter),
            KRAFT_VERSION => read_kraft_version(&mut r).map(ControlRecord::KRaftVersion),
            KRAFT_VOTERS => read_voters(&mut r).map(ControlRecord::Voters),
            other => unreachable!("check_control_key accepted type {other}"),
        }
        .map_err(|e| corrupt("value", e))?;
        if r.remaining() != 0 {
            return Err(BatchError::InvalidControlRecord(format!(
                "{} bytes after the type {record_type} message",
                r.remaining()
            )));
        }
        Ok(record)
    }
}

/// One control batch holding `records` in order (attribute bit 5, offsets from
/// `base_offset`, leader epoch `epoch`, append time `timestamp_ms`). Panics if `records` is
/// empty or a value cannot be written at v0 (see [`ControlRecord::encode_value`]).
pub fn control_batch(
    base_offset: i64,
    epoch: i32,
    timestamp_ms: i64,
    records: &[ControlRecord],
) -> Bytes {
    let mut builder = BatchBuilder::new(base_offset, epoch, timestamp_ms).control();
    for record in records {
        builder.append(Some(&record.encode_key()), &record.encode_value());
    }
    builder.build()
}

/// Decodes a whole control batch into `(offset, record)` pairs with all the checks of
/// [`decode_batch`] and [`ControlRecord::decode`].
///
/// Errors: anything `decode_batch` reports, or [`BatchError::InvalidControlRecord`] when the
/// batch is not a control batch.
pub fn decode_control_batch(
    batch: &[u8],
) -> Result<(BatchHeader, Vec<(i64, ControlRecord)>), BatchError> {
    let (header, records) = decode_batch(batch)?;
    if !header.is_control() {
        return Err(BatchError::InvalidControlRecord(
            "not a control batch".into(),
        ));
    }
    let decoded = records
        .into_iter()
        .map(|r| {
            // decode_batch guarantees a key and a value on every control record.
            let key = r.key.expect("control record key");
            let value = r.value.expect("control record value");
            ControlRecord::decode(&key, &value).map(|c| (r.offset, c))
        })
        .collect::<Result<_, _>>()?;
    Ok((header, decoded))
}

/// Reads a tagged-field section; at v0 no control message has known tags, so all are kept as
/// unknown (and re-encoded as such by kafka-protocol).
fn read_unknown_tags(r: &mut Reader<'_>) -> Result<BTreeMap<i32, Bytes>, ReadError> {
    Ok(r.tagged_fields()?
        .into_iter()
        .map(|(tag, data)| (tag as i32, Bytes::copy_from_slice(data)))
        .collect())
}

fn read_array<T>(
    r: &mut Reader<'_>,
    mut item: impl FnMut(&mut Reader<'_>) -> Result<T, ReadError>,
) -> Result<Vec<T>, ReadError> {
    let n = r
        .compact_array_len()?
        .ok_or(ReadError::Malformed("null array"))?;
    (0..n).map(|_| item(r)).collect()
}

fn read_string(r: &mut Reader<'_>) -> Result<StrBytes, ReadError> {
    let s = r
        .compact_string()?
        .ok_or(ReadError::Malformed("null string"))?;
    Ok(StrBytes::from_string(s))
}

fn read_leader_change(r: &mut Reader<'_>) -> Result<LeaderChangeMessage, ReadError> {
    let mut m = LeaderChangeMessage::default();
    m.version = r.i16()?;
    m.leader_id = BrokerId(r.i32()?);
    let voter = |r: &mut Reader<'_>| -> Result<LeaderChangeVoter, ReadError> {
        let mut v = LeaderChangeVoter::default();
        v.voter_id = r.i32()?;
        v.unknown_tagged_fields = read_unknown_tags(r)?;
        Ok(v)
    };
    m.voters = read_array(r, voter)?;
    m.granting_voters = read_array(r, voter)?;
    m.unknown_tagged_fields = read_unknown_tags(r)?;
    Ok(m)
}

fn read_snapshot_header(r: &mut Reader<'_>) -> Result<SnapshotHeaderRecord, ReadError> {
    let mut m = SnapshotHeaderRecord::default();
    m.version = r.i16()?;
    m.last_contained_log_timestamp = r.i64()?;
    m.unknown_tagged_fields = read_unknown_tags(r)?;
    Ok(m)
}

fn read_snapshot_footer(r: &mut Reader<'_>) -> Result<SnapshotFooterRecord, ReadError> {
    let mut m = SnapshotFooterRecord::default();
    m.version = r.i16()?;
    m.unknown_tagged_fields = read_unknown_tags(r)?;
    Ok(m)
}

fn read_kraft_version(r: &mut Reader<'_>) -> Result<KRaftVersionRecord, ReadError> {
    let mut m = KRaftVersionRecord::default();
    m.version = r.i16()?;
    m.k_raft_version = r.i16()?;
    m.unknown_tagged_fields = read_unknown_tags(r)?;
    Ok(m)
}

fn read_voters(r: &mut Reader<'_>) -> Result<VotersRecord, ReadError> {
    let mut m = VotersRecord::default();
    m.version = r.i16()?;
    m.voters = read_array(r, |r| {
        let mut v = Voter::default();
        v.voter_id = BrokerId(r.i32()?);
        v.voter_directory_id = r.uuid()?;
        v.endpoints = read_array(r, |r| {
            let mut e = Endpoint::default();
            e.name = read_string(r)?;
            e.host = read_string(r)?;
            e.port = r.u16()?;
            e.unknown_tagged_fields = read_unknown_tags(r)?;
            Ok(e)
        })?;
        let mut f = KRaftVersionFeature::default();
        f.min_supported_version = r.i16()?;
        f.max_supported_version = r.i16()?;
        f.unknown_tagged_fields = read_unknown_tags(r)?;
        v.k_raft_version_feature = f;
        v.unknown_tagged_fields = read_unknown_tags(r)?;
        Ok(v)
    })?;
    m.unknown_tagged_fields = read_unknown_tags(r)?;
    Ok(m)
}

#[cfg(test)]
mod tests;
