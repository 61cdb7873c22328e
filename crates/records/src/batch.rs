//! Record batch v2 (magic 2) exactly as KRaft writes and reads it.
//!
//! Layout (`org.apache.kafka.common.record.DefaultRecordBatch`), big-endian, 61-byte header:
//!
//! ```text
//!  0 base_offset i64 | 8 length i32 | 12 partition_leader_epoch i32 | 16 magic i8 = 2
//! 17 crc u32 (CRC-32C over [21, end)) | 21 attributes i16 | 23 last_offset_delta i32
//! 27 base_timestamp i64 | 35 max_timestamp i64 | 43 producer_id i64 | 51 producer_epoch i16
//! 53 base_sequence i32 | 57 records_count i32 | 61 records...
//! ```
//!
//! Each record (`DefaultRecord`): varint length, then attributes i8, varlong timestampDelta,
//! varint offsetDelta, varint keyLen + key, varint valueLen + value, varint headerCount.
//!
//! Writing follows Java's `BatchBuilder`: no compression, CREATE_TIME, producer id/epoch/sequence
//! -1, every record with timestampDelta 0, no headers and offsetDelta = index. Reading
//! ([`decode_records`]) enforces the Java KRaft reader's rules (`RecordsIterator.readRecord`,
//! `decodeDataRecord`, `decodeControlRecord`), so what we accept a Java peer accepts too.

use bytes::Bytes;
use thiserror::Error;

use crate::codec::{put_varint, put_varlong, varint_size, ReadError, Reader};

/// Bytes before a batch's `PartitionLeaderEpoch`: base offset (8) + length (4). A batch's
/// total size is `length + LOG_OVERHEAD` (`Records.LOG_OVERHEAD`).
pub const LOG_OVERHEAD: usize = 12;
/// Size of the v2 batch header, records excluded (`DefaultRecordBatch.RECORD_BATCH_OVERHEAD`).
pub const BATCH_HEADER_BYTES: usize = 61;
pub use kraftwerk_protocol::constants::{MAX_BATCH_BYTES, MAX_RECORDS_PER_BATCH};

/// The only batch format KRaft uses (`RecordBatch.MAGIC_VALUE_V2`).
pub const MAGIC_V2: i8 = 2;
/// Attribute bits 0-2: compression codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
pub const ATTR_COMPRESSION_MASK: i16 = 0x07;
/// Attribute bit 3: timestamp type LOG_APPEND_TIME (KRaft always writes CREATE_TIME = 0).
pub const ATTR_TIMESTAMP_TYPE: i16 = 0x08;
/// Attribute bit 4: transactional (never set by KRaft).
pub const ATTR_TRANSACTIONAL: i16 = 0x10;
/// Attribute bit 5: control batch.
pub const ATTR_CONTROL: i16 = 0x20;
/// Attribute bit 6: delete horizon set (never set by KRaft).
pub const ATTR_DELETE_HORIZON: i16 = 0x40;

const LENGTH_OFFSET: usize = 8;
const EPOCH_OFFSET: usize = 12;
const MAGIC_OFFSET: usize = 16;
const CRC_OFFSET: usize = 17;
/// The CRC covers everything from the attributes to the end of the batch.
const CRC_START: usize = 21;
/// Smallest legal `length` field: a header with no records.
const MIN_LENGTH: i32 = (BATCH_HEADER_BYTES - LOG_OVERHEAD) as i32;

/// Why a batch (or a record inside it) was rejected.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BatchError {
    /// The buffer ends before the batch (or header) does.
    #[error("truncated batch: needed {needed} bytes, {available} available")]
    Truncated {
        /// Bytes the batch needs.
        needed: usize,
        /// Bytes present.
        available: usize,
    },
    /// Magic byte other than 2 (`CorruptRecordException: Invalid magic`).
    #[error("unsupported batch magic {0}, KRaft only uses record batch v2")]
    BadMagic(i8),
    /// `length` below the v2 header size or total size above [`MAX_BATCH_BYTES`].
    #[error("invalid batch length {0}")]
    BadLength(i32),
    /// Stored CRC differs from the CRC-32C of bytes [21, end) (`DefaultRecordBatch.ensureValid`).
    #[error("batch CRC mismatch: header says {expected:#010x}, computed {actual:#010x}")]
    CrcMismatch {
        /// CRC stored in the header.
        expected: u32,
        /// CRC computed over the batch.
        actual: u32,
    },
    /// The batch does not start where the previous one ended.
    #[error("non-contiguous batch: expected base offset {expected}, found {found}")]
    NonContiguous {
        /// The previous batch's next offset.
        expected: i64,
        /// This batch's base offset.
        found: i64,
    },
    /// Offsets and counts disagree (Java's `LogValidator`: "Inconsistent batch offset range").
    #[error("bad offset range: base offset {base_offset}, last offset delta {last_offset_delta}, records count {records_count}")]
    BadOffsetRange {
        /// Header base offset.
        base_offset: i64,
        /// Header last offset delta.
        last_offset_delta: i32,
        /// Header records count.
        records_count: i32,
    },
    /// A compressed batch; KRaft never compresses and this crate has no codecs built in.
    #[error("compressed batch (codec {0}) is not supported: KRaft writes uncompressed batches")]
    UnsupportedCompression(u8),
    /// A record breaks the record format or the Java KRaft reader's rules.
    #[error("invalid record: {0}")]
    InvalidRecord(String),
    /// A control record's key or value cannot be decoded as a KRaft control record.
    #[error("invalid control record: {0}")]
    InvalidControlRecord(String),
}

/// The 61-byte header of a v2 batch, all fields as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchHeader {
    /// Offset of the first record.
    pub base_offset: i64,
    /// Bytes after the length field (total size − [`LOG_OVERHEAD`]).
    pub length: i32,
    /// Raft epoch of the leader that appended the batch (outside the CRC).
    pub partition_leader_epoch: i32,
    /// Always 2.
    pub magic: i8,
    /// CRC-32C over bytes [21, end).
    pub crc: u32,
    /// Compression, timestamp type, transactional, control, delete-horizon bits.
    pub attributes: i16,
    /// Last record's offset − base offset (records − 1 in KRaft).
    pub last_offset_delta: i32,
    /// First record's timestamp in ms.
    pub base_timestamp: i64,
    /// Largest record timestamp in ms; Java KRaft uses it as the append time.
    pub max_timestamp: i64,
    /// −1 in KRaft.
    pub producer_id: i64,
    /// −1 in KRaft.
    pub producer_epoch: i16,
    /// −1 in KRaft.
    pub base_sequence: i32,
    /// Number of records.
    pub records_count: i32,
}

fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}
fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn be_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Checks a `length` field: at least a bare header, at most [`MAX_BATCH_BYTES`] in total.
fn check_length(length: i32) -> Result<usize, BatchError> {
    if length < MIN_LENGTH || length as usize + LOG_OVERHEAD > MAX_BATCH_BYTES {
        return Err(BatchError::BadLength(length));
    }
    Ok(length as usize + LOG_OVERHEAD)
}

impl BatchHeader {
    /// Parses the header at the start of `buf` (only the first 61 bytes are read; the records
    /// need not be present).
    ///
    /// Errors: [`BatchError::Truncated`] under 61 bytes, [`BatchError::BadLength`] when the
    /// length is below 49 or the total above [`MAX_BATCH_BYTES`], [`BatchError::BadMagic`] when
    /// magic ≠ 2. The CRC is not checked here (see [`verify_crc`]).
    pub fn parse(buf: &[u8]) -> Result<BatchHeader, BatchError> {
        if buf.len() < BATCH_HEADER_BYTES {
            return Err(BatchError::Truncated {
                needed: BATCH_HEADER_BYTES,
                available: buf.len(),
            });
        }
        let length = be_i32(buf, LENGTH_OFFSET);
        check_length(length)?;
        let magic = buf[MAGIC_OFFSET] as i8;
        if magic != MAGIC_V2 {
            return Err(BatchError::BadMagic(magic));
        }
        Ok(BatchHeader {
            base_offset: be_i64(buf, 0),
            length,
            partition_leader_epoch: be_i32(buf, EPOCH_OFFSET),
            magic,
            crc: be_i32(buf, CRC_OFFSET) as u32,
            attributes: be_i16(buf, 21),
            last_offset_delta: be_i32(buf, 23),
            base_timestamp: be_i64(buf, 27),
            max_timestamp: be_i64(buf, 35),
            producer_id: be_i64(buf, 43),
            producer_epoch: be_i16(buf, 51),
            base_sequence: be_i32(buf, 53),
            records_count: be_i32(buf, 57),
        })
    }

    /// Writes the header into the first 61 bytes of `out` (panics if shorter), as stored:
    /// the CRC field is copied, not computed.
    pub fn write_to(&self, out: &mut [u8]) {
        assert!(out.len() >= BATCH_HEADER_BYTES, "header needs 61 bytes");
        out[0..8].copy_from_slice(&self.base_offset.to_be_bytes());
        out[8..12].copy_from_slice(&self.length.to_be_bytes());
        out[12..16].copy_from_slice(&self.partition_leader_epoch.to_be_bytes());
        out[16] = self.magic as u8;
        out[17..21].copy_from_slice(&self.crc.to_be_bytes());
        out[21..23].copy_from_slice(&self.attributes.to_be_bytes());
        out[23..27].copy_from_slice(&self.last_offset_delta.to_be_bytes());
        out[27..35].copy_from_slice(&self.base_timestamp.to_be_bytes());
        out[35..43].copy_from_slice(&self.max_timestamp.to_be_bytes());
        out[43..51].copy_from_slice(&self.producer_id.to_be_bytes());
        out[51..53].copy_from_slice(&self.producer_epoch.to_be_bytes());
        out[53..57].copy_from_slice(&self.base_sequence.to_be_bytes());
        out[57..61].copy_from_slice(&self.records_count.to_be_bytes());
    }

    /// Total size of the batch in bytes: `length + 12`.
    pub fn size_bytes(&self) -> usize {
        self.length as usize + LOG_OVERHEAD
    }

    /// Offset of the last record: `base_offset + last_offset_delta`.
    pub fn last_offset(&self) -> i64 {
        self.base_offset + self.last_offset_delta as i64
    }

    /// Offset right after the batch: `last_offset() + 1`.
    pub fn next_offset(&self) -> i64 {
        self.last_offset() + 1
    }

    /// Whether the control attribute (bit 5) is set.
    pub fn is_control(&self) -> bool {
        self.attributes & ATTR_CONTROL != 0
    }

    /// Whether the transactional attribute (bit 4) is set (never in KRaft).
    pub fn is_transactional(&self) -> bool {
        self.attributes & ATTR_TRANSACTIONAL != 0
    }

    /// Compression codec id from attribute bits 0-2 (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
    pub fn compression(&self) -> u8 {
        (self.attributes & ATTR_COMPRESSION_MASK) as u8
    }

    /// Checks `records_count == last_offset_delta + 1 ≥ 1` and `base_offset ≥ 0`, which every
    /// KRaft batch satisfies (the metadata log is never compacted; Java's `LogValidator`
    /// rejects the rest as "Inconsistent batch offset range").
    pub fn check_offset_range(&self) -> Result<(), BatchError> {
        let ok = self.base_offset >= 0
            && self.last_offset_delta >= 0
            && self.records_count as i64 == self.last_offset_delta as i64 + 1
            && self
                .base_offset
                .checked_add(self.last_offset_delta as i64 + 1)
                .is_some();
        if ok {
            Ok(())
        } else {
            Err(BatchError::BadOffsetRange {
                base_offset: self.base_offset,
                last_offset_delta: self.last_offset_delta,
                records_count: self.records_count,
            })
        }
    }
}

/// Checks the CRC-32C of one batch (bytes [21, size) where size comes from its header;
/// `DefaultRecordBatch.isValid`). `batch` may extend past the batch.
///
/// Errors: header errors as in [`BatchHeader::parse`], [`BatchError::Truncated`] if `batch`
/// is shorter than the header's size, [`BatchError::CrcMismatch`].
pub fn verify_crc(batch: &[u8]) -> Result<(), BatchError> {
    let header = BatchHeader::parse(batch)?;
    let size = header.size_bytes();
    if batch.len() < size {
        return Err(BatchError::Truncated {
            needed: size,
            available: batch.len(),
        });
    }
    let actual = crc32c::crc32c(&batch[CRC_START..size]);
    if actual != header.crc {
        return Err(BatchError::CrcMismatch {
            expected: header.crc,
            actual,
        });
    }
    Ok(())
}

/// Iterator over the complete batches at the start of a buffer, following Java's
/// `ByteBufferLogInputStream.nextBatch`: it ends (`None`) at an incomplete tail and yields one
/// `Err` (then ends) on a bad length or magic. CRCs are not checked.
#[derive(Debug, Clone)]
pub struct BatchIter<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
}

/// Iterates the complete batches in `buf`; see [`BatchIter`].
pub fn batches(buf: &[u8]) -> BatchIter<'_> {
    BatchIter {
        buf,
        pos: 0,
        failed: false,
    }
}

impl<'a> BatchIter<'a> {
    /// Bytes of `buf` covered by the batches yielded so far.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<(BatchHeader, &'a [u8]), BatchError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let rest = &self.buf[self.pos..];
        if rest.len() < LOG_OVERHEAD {
            return None;
        }
        let length = be_i32(rest, LENGTH_OFFSET);
        let size = match check_length(length) {
            Ok(size) => size,
            Err(e) => {
                self.failed = true;
                return Some(Err(e));
            }
        };
        // Like Java, reject a bad magic as soon as it is visible, even in an incomplete tail.
        if rest.len() > MAGIC_OFFSET && rest[MAGIC_OFFSET] as i8 != MAGIC_V2 {
            self.failed = true;
            return Some(Err(BatchError::BadMagic(rest[MAGIC_OFFSET] as i8)));
        }
        if rest.len() < size {
            return None;
        }
        match BatchHeader::parse(rest) {
            Ok(header) => {
                self.pos += size;
                Some(Ok((header, &rest[..size])))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Result of [`valid_prefix`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidPrefix {
    /// Length of the valid prefix in bytes (a batch boundary).
    pub bytes: usize,
    /// Headers of the batches in the prefix, in order.
    pub headers: Vec<BatchHeader>,
    /// Why the scan stopped before the end of the buffer; `None` if the whole buffer is valid.
    /// An incomplete tail reports [`BatchError::Truncated`].
    pub stopped_because: Option<BatchError>,
}

/// The longest prefix of `buf` made of whole batches that each have a valid CRC, a consistent
/// offset range ([`BatchHeader::check_offset_range`]) and contiguous offsets (each base offset
/// equals the previous batch's next offset). Used by log recovery (Java: `LogSegment.recover`
/// truncates at the first invalid batch) and when validating follower appends.
pub fn valid_prefix(buf: &[u8]) -> ValidPrefix {
    let mut iter = batches(buf);
    let mut headers: Vec<BatchHeader> = Vec::new();
    let mut bytes = 0;
    let stopped_because = loop {
        let (header, batch) = match iter.next() {
            None => {
                if bytes == buf.len() {
                    break None;
                }
                let rest = &buf[bytes..];
                let needed = if rest.len() < LOG_OVERHEAD {
                    LOG_OVERHEAD
                } else {
                    be_i32(rest, LENGTH_OFFSET) as usize + LOG_OVERHEAD
                };
                break Some(BatchError::Truncated {
                    needed,
                    available: rest.len(),
                });
            }
            Some(Err(e)) => break Some(e),
            Some(Ok(item)) => item,
        };
        if let Err(e) = verify_crc(batch).and_then(|_| header.check_offset_range()) {
            break Some(e);
        }
        if let Some(prev) = headers.last() {
            if header.base_offset != prev.next_offset() {
                break Some(BatchError::NonContiguous {
                    expected: prev.next_offset(),
                    found: header.base_offset,
                });
            }
        }
        bytes += batch.len();
        headers.push(header);
    };
    ValidPrefix {
        bytes,
        headers,
        stopped_because,
    }
}

/// Rewrites the base offset of a batch in place. It lies outside the CRC, so the batch stays
/// valid (Java: `DefaultRecordBatch.setLastOffset` on leader append). Panics under 61 bytes.
pub fn set_base_offset(batch: &mut [u8], base_offset: i64) {
    assert!(
        batch.len() >= BATCH_HEADER_BYTES,
        "not a batch: {} bytes",
        batch.len()
    );
    batch[0..8].copy_from_slice(&base_offset.to_be_bytes());
}

/// Rewrites the partition leader epoch of a batch in place; outside the CRC
/// (`DefaultRecordBatch.setPartitionLeaderEpoch`). Panics under 61 bytes.
pub fn set_partition_leader_epoch(batch: &mut [u8], epoch: i32) {
    assert!(
        batch.len() >= BATCH_HEADER_BYTES,
        "not a batch: {} bytes",
        batch.len()
    );
    batch[EPOCH_OFFSET..EPOCH_OFFSET + 4].copy_from_slice(&epoch.to_be_bytes());
}

/// The builder's batch is full: the record would exceed [`MAX_RECORDS_PER_BATCH`] or
/// [`MAX_BATCH_BYTES`].
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
#[error("batch full: {records} records, {size_bytes} bytes; record of {record_bytes} bytes does not fit")]
pub struct BatchFull {
    /// Records already in the batch.
    pub records: usize,
    /// Current batch size in bytes.
    pub size_bytes: usize,
    /// Encoded size of the rejected record.
    pub record_bytes: usize,
}

/// Builds one uncompressed v2 batch the way Java's `raft.internals.BatchBuilder` does:
/// CREATE_TIME, producer id/epoch/sequence −1, base and max timestamp = the given time,
/// records with timestampDelta 0, offsetDelta = index and no headers.
#[derive(Debug, Clone)]
pub struct BatchBuilder {
    base_offset: i64,
    partition_leader_epoch: i32,
    timestamp_ms: i64,
    control: bool,
    records: Vec<u8>,
    count: usize,
}

/// Encoded size of a record body (everything after its length varint).
fn record_body_size(offset_delta: i32, key: Option<&[u8]>, value: &[u8]) -> usize {
    let key_size = key.map_or(1, |k| varint_size(k.len() as i32) + k.len());
    // attributes (1) + timestampDelta 0 (1) + offsetDelta + key + value + header count (1)
    1 + 1 + varint_size(offset_delta) + key_size + varint_size(value.len() as i32) + value.len() + 1
}

impl BatchBuilder {
    /// An empty data batch starting at `base_offset`, stamped with the leader epoch and
    /// `timestamp_ms` (both base and max timestamp).
    pub fn new(base_offset: i64, partition_leader_epoch: i32, timestamp_ms: i64) -> Self {
        BatchBuilder {
            base_offset,
            partition_leader_epoch,
            timestamp_ms,
            control: false,
            records: Vec::new(),
            count: 0,
        }
    }

    /// Marks the batch as a control batch (attribute bit 5). Panics if records were appended.
    pub fn control(mut self) -> Self {
        assert!(self.count == 0, "control() must be called before append()");
        self.control = true;
        self
    }

    /// Total encoded size in bytes of a record with this key and value if appended next.
    pub fn record_size_bytes(&self, key: Option<&[u8]>, value: &[u8]) -> usize {
        let body = record_body_size(self.count as i32, key, value);
        varint_size(body as i32) + body
    }

    /// Appends a record unless the batch would exceed [`MAX_RECORDS_PER_BATCH`] records or
    /// [`MAX_BATCH_BYTES`] bytes.
    ///
    /// Panics when the record breaks the Java KRaft reader's rules, which would make every
    /// Java peer fail: data records need `key == None`, control records a non-empty key, and
    /// every value must be non-empty.
    pub fn try_append(&mut self, key: Option<&[u8]>, value: &[u8]) -> Result<(), BatchFull> {
        if self.control {
            assert!(
                key.is_some_and(|k| !k.is_empty()),
                "control records need a non-empty key"
            );
        } else {
            assert!(key.is_none(), "KRaft data records have no key");
        }
        assert!(!value.is_empty(), "KRaft records need a non-empty value");
        let record_bytes = self.record_size_bytes(key, value);
        if self.count >= MAX_RECORDS_PER_BATCH
            || self.estimated_size_bytes() + record_bytes > MAX_BATCH_BYTES
        {
            return Err(BatchFull {
                records: self.count,
                size_bytes: self.estimated_size_bytes(),
                record_bytes,
            });
        }
        let offset_delta = self.count as i32;
        let out = &mut self.records;
        put_varint(out, record_body_size(offset_delta, key, value) as i32);
        out.push(0); // attributes, unused
        put_varlong(out, 0); // timestampDelta: every record carries the batch time
        put_varint(out, offset_delta);
        match key {
            Some(k) => {
                put_varint(out, k.len() as i32);
                out.extend_from_slice(k);
            }
            None => put_varint(out, -1),
        }
        put_varint(out, value.len() as i32);
        out.extend_from_slice(value);
        put_varint(out, 0); // header count
        self.count += 1;
        Ok(())
    }

    /// Appends a record; panics where [`try_append`](Self::try_append) would fail or panic.
    /// Callers that cannot bound their input check [`has_room_for`](Self::has_room_for) first.
    pub fn append(&mut self, key: Option<&[u8]>, value: &[u8]) {
        if let Err(full) = self.try_append(key, value) {
            panic!("{full}");
        }
    }

    /// Whether a record with this key and value still fits.
    pub fn has_room_for(&self, key: Option<&[u8]>, value: &[u8]) -> bool {
        self.count < MAX_RECORDS_PER_BATCH
            && self.estimated_size_bytes() + self.record_size_bytes(key, value) <= MAX_BATCH_BYTES
    }

    /// Records appended so far.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no record was appended.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Size in bytes the built batch will have (exact, since nothing is compressed).
    pub fn estimated_size_bytes(&self) -> usize {
        BATCH_HEADER_BYTES + self.records.len()
    }

    /// Offset the next appended record would get.
    pub fn next_offset(&self) -> i64 {
        self.base_offset + self.count as i64
    }

    /// Writes header and CRC. Panics if the batch is empty (Java never writes empty batches).
    pub fn build(self) -> Bytes {
        assert!(self.count > 0, "cannot build an empty batch");
        let size = self.estimated_size_bytes();
        let mut out = vec![0u8; size];
        let header = BatchHeader {
            base_offset: self.base_offset,
            length: (size - LOG_OVERHEAD) as i32,
            partition_leader_epoch: self.partition_leader_epoch,
            magic: MAGIC_V2,
            crc: 0,
            attributes: if self.control { ATTR_CONTROL } else { 0 },
            last_offset_delta: self.count as i32 - 1,
            base_timestamp: self.timestamp_ms,
            max_timestamp: self.timestamp_ms,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records_count: self.count as i32,
        };
        header.write_to(&mut out);
        out[BATCH_HEADER_BYTES..].copy_from_slice(&self.records);
        let crc = crc32c::crc32c(&out[CRC_START..]);
        out[CRC_OFFSET..CRC_START].copy_from_slice(&crc.to_be_bytes());
        Bytes::from(out)
    }
}

/// One record of a batch, with its absolute offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Absolute offset: base offset + offsetDelta.
    pub offset: i64,
    /// Key; `None` for metadata (data) records, the 4-byte control key for control records.
    pub key: Option<Bytes>,
    /// Value; always present in KRaft.
    pub value: Option<Bytes>,
}

fn invalid(msg: impl Into<String>) -> BatchError {
    BatchError::InvalidRecord(msg.into())
}

fn read_err(what: &str, e: ReadError) -> BatchError {
    invalid(format!("{what}: {e}"))
}

/// Control record types KRaft accepts (`ControlRecordType` LEADER_CHANGE..KRAFT_VOTERS).
pub const KRAFT_CONTROL_TYPES: std::ops::RangeInclusive<i16> = 2..=6;

/// Decodes the records of one batch (`batch` must start with it; bytes after it are ignored),
/// with the Java KRaft reader's strictness plus the record-framing checks of
/// `DefaultRecord.readFrom`:
/// - CRC valid, no compression ([`BatchError::UnsupportedCompression`] otherwise), records
///   count = last offset delta + 1;
/// - each record: length > 0 and inside the batch, timestampDelta 0, offsetDelta = index,
///   header count 0 as the record's last byte, no bytes left over;
/// - data records: no key, non-empty value; control records: key and value non-empty, key
///   version ≥ 0 and type in 2..=6;
/// - the records fill the batch exactly.
pub fn decode_records(batch: &[u8]) -> Result<Vec<Record>, BatchError> {
    decode_batch(batch).map(|(_, records)| records)
}

/// Like [`decode_records`], also returning the header.
pub fn decode_batch(batch: &[u8]) -> Result<(BatchHeader, Vec<Record>), BatchError> {
    verify_crc(batch)?;
    let header = BatchHeader::parse(batch)?;
    header.check_offset_range()?;
    if header.compression() != 0 {
        return Err(BatchError::UnsupportedCompression(header.compression()));
    }
    let body = &batch[BATCH_HEADER_BYTES..header.size_bytes()];
    let mut reader = Reader::new(body);
    let count = header.records_count as usize;
    // A record takes at least 7 bytes; never trust the count for the allocation.
    let mut records = Vec::with_capacity(count.min(body.len() / 7));
    for index in 0..count {
        let size = reader.varint().map_err(|e| read_err("record length", e))?;
        if size <= 0 {
            return Err(invalid(format!("non-positive record length {size}")));
        }
        let record = reader
            .bytes(size as usize)
            .map_err(|_| invalid(format!("record length {size} exceeds the batch")))?;
        records.push(decode_record(&header, index, record)?);
    }
    if reader.remaining() != 0 {
        return Err(invalid(format!(
            "{} bytes left after {count} records (declared batch size too large)",
            reader.remaining()
        )));
    }
    Ok((header, records))
}

/// Decodes one record body (without its length varint).
fn decode_record(header: &BatchHeader, index: usize, record: &[u8]) -> Result<Record, BatchError> {
    // Java reads the header count as the record's single last byte.
    let (fields, last) = record.split_at(record.len() - 1);
    if last[0] != 0 {
        return Err(invalid(format!(
            "header count byte {} at offset index {index}, expected 0",
            last[0]
        )));
    }
    let mut r = Reader::new(fields);
    r.i8().map_err(|e| read_err("attributes", e))?; // unused, as in Java
    let timestamp_delta = r.varlong().map_err(|e| read_err("timestamp delta", e))?;
    if timestamp_delta != 0 {
        return Err(invalid(format!(
            "timestamp delta {timestamp_delta}, expected 0"
        )));
    }
    let offset_delta = r.varint().map_err(|e| read_err("offset delta", e))?;
    if offset_delta as i64 != index as i64 {
        return Err(invalid(format!(
            "offset delta {offset_delta} at record index {index}"
        )));
    }
    let key = read_nullable_bytes(&mut r, "key")?;
    let value = read_nullable_bytes(&mut r, "value")?;
    if r.remaining() != 0 {
        return Err(invalid(format!(
            "{} unread bytes in record {index}",
            r.remaining()
        )));
    }
    match (&value, header.is_control()) {
        (None, _) => return Err(invalid("missing value")),
        (Some(v), _) if v.is_empty() => return Err(invalid("empty value")),
        _ => {}
    }
    if header.is_control() {
        let k = key
            .as_deref()
            .ok_or_else(|| invalid("control record without key"))?;
        check_control_key(k)?;
    } else if key.is_some() {
        return Err(invalid("data record with a key"));
    }
    Ok(Record {
        offset: header.base_offset + offset_delta as i64,
        key,
        value,
    })
}

/// Checks a control record key the way `ControlRecordType.parse` + `RecordsIterator` do and
/// returns the control type: ≥ 4 bytes, version ≥ 0 (versions > 0 are accepted), type 2..=6.
pub fn check_control_key(key: &[u8]) -> Result<i16, BatchError> {
    if key.len() < 4 {
        return Err(invalid(format!(
            "control key of {} bytes, expected at least 4",
            key.len()
        )));
    }
    let version = be_i16(key, 0);
    if version < 0 {
        return Err(invalid(format!("control key version {version}")));
    }
    let record_type = be_i16(key, 2);
    if !KRAFT_CONTROL_TYPES.contains(&record_type) {
        return Err(invalid(format!(
            "control record type {record_type} is not a KRaft type"
        )));
    }
    Ok(record_type)
}

fn read_nullable_bytes(r: &mut Reader<'_>, what: &str) -> Result<Option<Bytes>, BatchError> {
    let len = r.varint().map_err(|e| read_err(what, e))?;
    match len {
        -1 => Ok(None),
        n if n < -1 => Err(invalid(format!("{what} length {n}"))),
        n => {
            let b = r.bytes(n as usize).map_err(|e| read_err(what, e))?;
            Ok(Some(Bytes::copy_from_slice(b)))
        }
    }
}

#[cfg(test)]
mod tests;
