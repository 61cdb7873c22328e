//! The check every snapshot passes before it is trusted: when a sink finishes, and for every
//! `.checkpoint` file found when the log is opened (case C07: a zero-length or torn checkpoint
//! left by a crash must never be loaded).
//!
//! It runs on a stream of arbitrary chunks (FetchSnapshot chunks do not fall on batch
//! boundaries) and holds at most one incomplete batch, so memory stays below
//! [`MAX_BATCH_BYTES`] whatever the snapshot size (case C09).

use kraftwerk_records::batch::{self, BatchHeader, LOG_OVERHEAD, MAX_BATCH_BYTES};
use kraftwerk_records::control::{decode_control_batch, ControlRecord};

/// What a valid snapshot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotSummary {
    /// File size in bytes.
    pub size_bytes: u64,
    /// Record batches in the file.
    pub batches: u64,
    /// Offsets in the file (they run from 0), control records included.
    pub records: i64,
    /// `LastContainedLogTimestamp` of the SnapshotHeader record (ms), which
    /// `metadata.max.retention.ms` is measured against (`Snapshots.lastContainedLogTimestamp`).
    pub last_contained_log_timestamp_ms: i64,
}

/// Streaming validator of the snapshot file format (`RecordsSnapshotWriter`'s layout, checked
/// more strictly than `RecordsSnapshotReader` reads it):
/// - every batch is a whole v2 batch with a valid CRC-32C and a consistent offset range;
/// - offsets start at 0 and are contiguous;
/// - the first batch is a control batch whose first record is a SnapshotHeader (Java's reader
///   throws otherwise); control batches decode as KRaft control records;
/// - the last batch is a control batch whose last record is a SnapshotFooter (written by
///   `RecordsSnapshotWriter.freeze`; a file without it was cut short);
/// - nothing follows the last whole batch.
///
/// Data batches are not decoded: the controller reads them, and the check must not depend on
/// the metadata versions this build knows.
#[derive(Debug, Default)]
pub struct SnapshotValidator {
    /// Bytes fed so far.
    position: u64,
    /// Bytes of whole batches checked so far (where the next batch starts).
    checked_bytes: u64,
    /// The incomplete batch at the end of what was fed, at most one batch long.
    carry: Vec<u8>,
    next_offset: i64,
    batches: u64,
    last_contained_log_timestamp_ms: Option<i64>,
    last_batch_ends_with_footer: bool,
    error: Option<String>,
    /// Where each checked batch ends (byte positions, ascending): the catalog checks the CRCs
    /// of the batches a FetchSnapshot chunk overlaps before serving it.
    batch_ends: Vec<u64>,
}

/// Size of the batch starting at `buf` (at least [`LOG_OVERHEAD`] bytes), from its length field.
fn batch_size(buf: &[u8]) -> Result<usize, String> {
    let length = i32::from_be_bytes(buf[8..12].try_into().expect("4 bytes"));
    let size = length as i64 + LOG_OVERHEAD as i64;
    if size < batch::BATCH_HEADER_BYTES as i64 || size > MAX_BATCH_BYTES as i64 {
        return Err(format!("invalid batch length {length}"));
    }
    Ok(size as usize)
}

impl SnapshotValidator {
    /// A validator at the start of a file.
    pub fn new() -> SnapshotValidator {
        SnapshotValidator::default()
    }

    /// Bytes fed so far (including any fed after a problem was found).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Feeds the next bytes of the file. Returns the first problem found (and the same problem
    /// on every later call); a problem that needs more bytes to be seen waits for them.
    pub fn update(&mut self, bytes: &[u8]) -> Result<(), String> {
        // Counted even after an error: a sink's position is the bytes it was given.
        self.position += bytes.len() as u64;
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let result = self.update_inner(bytes);
        if let Err(e) = &result {
            self.error = Some(e.clone());
        }
        result
    }

    fn update_inner(&mut self, mut bytes: &[u8]) -> Result<(), String> {
        if !self.carry.is_empty() {
            if self.carry.len() < LOG_OVERHEAD {
                let take = (LOG_OVERHEAD - self.carry.len()).min(bytes.len());
                self.carry.extend_from_slice(&bytes[..take]);
                bytes = &bytes[take..];
                if self.carry.len() < LOG_OVERHEAD {
                    return Ok(());
                }
            }
            let size = batch_size(&self.carry).map_err(|e| self.at(e))?;
            let take = (size - self.carry.len()).min(bytes.len());
            self.carry.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.carry.len() < size {
                return Ok(());
            }
            let whole = std::mem::take(&mut self.carry);
            let header = BatchHeader::parse(&whole).map_err(|e| self.at(e.to_string()))?;
            self.check_batch(header, &whole)?;
        }
        let mut iter = batch::batches(bytes);
        for item in iter.by_ref() {
            let (header, whole) = item.map_err(|e| self.at(e.to_string()))?;
            self.check_batch(header, whole)?;
        }
        let rest = &bytes[iter.position()..];
        if rest.len() >= LOG_OVERHEAD {
            // A bad length is visible already; do not wait for bytes that will never make sense.
            batch_size(rest).map_err(|e| self.at(e))?;
        }
        self.carry.extend_from_slice(rest);
        Ok(())
    }

    /// `reason` located at the batch being checked.
    fn at(&self, reason: String) -> String {
        format!(
            "batch {} at byte {}: {reason}",
            self.batches, self.checked_bytes
        )
    }

    fn check_batch(&mut self, header: BatchHeader, whole: &[u8]) -> Result<(), String> {
        batch::verify_crc(whole)
            .and_then(|_| header.check_offset_range())
            .map_err(|e| self.at(e.to_string()))?;
        if header.base_offset != self.next_offset {
            return Err(self.at(format!(
                "starts at offset {}, expected {} (snapshot offsets run from 0 without gaps)",
                header.base_offset, self.next_offset
            )));
        }
        let control = if header.is_control() {
            let (_, records) = decode_control_batch(whole).map_err(|e| self.at(e.to_string()))?;
            Some(records)
        } else {
            None
        };
        if self.batches == 0 {
            let Some(records) = &control else {
                return Err(self.at(
                    "the first batch is not a control batch, so there is no SnapshotHeader".into(),
                ));
            };
            match records.first() {
                Some((_, ControlRecord::SnapshotHeader(h))) => {
                    self.last_contained_log_timestamp_ms = Some(h.last_contained_log_timestamp);
                }
                other => {
                    return Err(self.at(format!(
                        "the first control record is {:?}, not a SnapshotHeader",
                        other.map(|(_, r)| r.record_type())
                    )))
                }
            }
        }
        self.last_batch_ends_with_footer = control.is_some_and(|records| {
            matches!(records.last(), Some((_, ControlRecord::SnapshotFooter(_))))
        });
        self.next_offset = header.next_offset();
        self.batches += 1;
        self.checked_bytes += whole.len() as u64;
        self.batch_ends.push(self.checked_bytes);
        Ok(())
    }

    /// [`finish`](Self::finish), also returning where each batch ends (byte positions,
    /// ascending; the last is the file size).
    pub fn finish_with_batch_ends(mut self) -> Result<(SnapshotSummary, Vec<u64>), String> {
        let ends = std::mem::take(&mut self.batch_ends);
        self.finish().map(|summary| (summary, ends))
    }

    /// Ends the file: everything fed must be whole batches ending with the footer.
    pub fn finish(self) -> Result<SnapshotSummary, String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.position == 0 {
            return Err("the file is empty".into());
        }
        if !self.carry.is_empty() {
            return Err(format!(
                "truncated: the last {} bytes (from byte {}) are an incomplete batch",
                self.carry.len(),
                self.checked_bytes
            ));
        }
        if !self.last_batch_ends_with_footer {
            return Err(format!(
                "the last batch (batch {} at offset {}) is not a control batch ending with a \
                 SnapshotFooter: the snapshot was cut short",
                self.batches - 1,
                self.next_offset - 1
            ));
        }
        Ok(SnapshotSummary {
            size_bytes: self.position,
            batches: self.batches,
            records: self.next_offset,
            last_contained_log_timestamp_ms: self
                .last_contained_log_timestamp_ms
                .expect("a checked first batch has a header"),
        })
    }
}

/// Validates a whole snapshot held in memory.
pub fn validate_snapshot(bytes: &[u8]) -> Result<SnapshotSummary, String> {
    let mut validator = SnapshotValidator::new();
    validator.update(bytes)?;
    validator.finish()
}

#[cfg(test)]
mod tests;
