//! The read path of [`SegmentLog`]: which indexed (or pending) batches a read returns, and
//! reading them back from the segments with their headers and CRCs checked.

use bytes::{Bytes, BytesMut};
use kraftwerk_raft::LogError;
use kraftwerk_records::batch::{self, BatchHeader};

use super::SegmentLog;
use crate::error::StorageError;
use crate::index::BatchEntry;

impl SegmentLog {
    /// Entries from the batch containing `start_offset`, while they fit in `max_bytes` (at least
    /// one).
    pub(super) fn entries_for_read(
        &self,
        start_offset: i64,
        max_bytes: usize,
    ) -> Result<Vec<BatchEntry>, StorageError> {
        let mut plan = ReadPlan {
            entries: Vec::new(),
            total_bytes: 0,
            max_bytes,
            full: false,
        };
        let in_pending = self
            .pending
            .first()
            .is_some_and(|first| start_offset >= first.base_offset);
        if !in_pending {
            self.index
                .scan_from(start_offset, |entry| plan.take(entry))?;
        }
        if !plan.full {
            let from = self
                .pending
                .partition_point(|e| e.last_offset < start_offset);
            for entry in &self.pending[from..] {
                if !plan.take(*entry) {
                    break;
                }
            }
        }
        Ok(plan.entries)
    }

    pub(super) fn read_entries(&self, entries: &[BatchEntry]) -> Result<Bytes, LogError> {
        let total: usize = entries.iter().map(|e| e.size_bytes as usize).sum();
        let mut out = BytesMut::zeroed(total);
        let mut at = 0;
        for run in entries.chunk_by(|a, b| {
            a.segment_base == b.segment_base && a.end_position() == b.position as u64
        }) {
            let len: usize = run.iter().map(|e| e.size_bytes as usize).sum();
            let segment = self.segments.get(&run[0].segment_base).ok_or_else(|| {
                StorageError::inconsistent(
                    &self.dir,
                    format!(
                        "segment {} of offset {} is missing",
                        run[0].segment_base, run[0].base_offset
                    ),
                )
            })?;
            segment.read_exact_at(&mut out[at..at + len], run[0].position as u64)?;
            at += len;
        }
        // Pair assertion with the checks made before writing: what comes back from the disk is
        // the batch the index promised, with a valid CRC. A batch that fails is never served
        // (not to a follower, not to replay): the read fails naming the file and position.
        let mut at = 0;
        for entry in entries {
            let bytes = &out[at..at + entry.size_bytes as usize];
            let header_ok = BatchHeader::parse(bytes).is_ok_and(|h| entry.matches(&h));
            let problem = if header_ok {
                batch::verify_crc(bytes).err().map(|e| e.to_string())
            } else {
                Some("the file does not hold the indexed batch there".to_owned())
            };
            if let Some(reason) = problem {
                return Err(self.corrupt(entry, reason).into());
            }
            at += entry.size_bytes as usize;
        }
        Ok(out.freeze())
    }
}

impl SegmentLog {
    /// The error for indexed batch `entry` failing its check when read back.
    fn corrupt(&self, entry: &BatchEntry, reason: String) -> StorageError {
        let path = self
            .segments
            .get(&entry.segment_base)
            .map_or_else(|| self.dir.to_path_buf(), |s| s.path().to_path_buf());
        tracing::error!(
            path = %path.display(),
            position = entry.position,
            offset = entry.base_offset,
            reason = %reason,
            "a record batch on disk fails its check; it is not served"
        );
        StorageError::CorruptBatch {
            path,
            position: entry.position as u64,
            offset: entry.base_offset,
            reason,
        }
    }
}

/// The batches one read returns: whole batches within `max_bytes`, but at least one.
struct ReadPlan {
    entries: Vec<BatchEntry>,
    total_bytes: usize,
    max_bytes: usize,
    full: bool,
}

impl ReadPlan {
    /// Adds `entry` if it fits; returns whether the caller should offer the next one.
    fn take(&mut self, entry: BatchEntry) -> bool {
        let size = entry.size_bytes as usize;
        if !self.entries.is_empty() && self.total_bytes.saturating_add(size) > self.max_bytes {
            self.full = true;
            return false;
        }
        self.total_bytes += size;
        self.entries.push(entry);
        true
    }
}
