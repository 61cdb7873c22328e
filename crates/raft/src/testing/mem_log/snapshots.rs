//! Snapshots of the [`MemLog`]: an in-memory "disk" of complete snapshots shared with the
//! sinks, the catalog, full truncation, cleaning, and what a restart does with them.
//!
//! Written independently of the segment log's implementation (whole-buffer validation, plain
//! map scans) so that the conformance suite compares two versions of the same rules.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use kraftwerk_records::batch;
use kraftwerk_records::control::{decode_control_batch, ControlRecord};

use super::MemLog;
use crate::storage::{LogError, OffsetAndEpoch, SnapshotSink};

/// The bootstrap snapshot of a dynamic quorum, never listed (Kafka `BOOTSTRAP_SNAPSHOT_ID`).
const BOOTSTRAP: OffsetAndEpoch = OffsetAndEpoch {
    epoch: 0,
    offset: 0,
};

/// A complete snapshot.
#[derive(Clone, Debug)]
pub(super) struct MemSnapshot {
    pub(super) bytes: Bytes,
    /// `LastContainedLogTimestamp` of its SnapshotHeader.
    timestamp_ms: i64,
}

/// The complete snapshots a crash keeps, and the incarnation of the log (a sink of an earlier
/// incarnation lost its partial file in the crash and cannot finish).
#[derive(Debug, Default)]
struct Disk {
    incarnation: u64,
    snapshots: BTreeMap<OffsetAndEpoch, MemSnapshot>,
}

#[derive(Debug, Default)]
pub(super) struct SharedDisk(Arc<Mutex<Disk>>);

impl SharedDisk {
    fn lock(&self) -> MutexGuard<'_, Disk> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn deep_copy(&self) -> SharedDisk {
        let disk = self.lock();
        SharedDisk(Arc::new(Mutex::new(Disk {
            incarnation: disk.incarnation,
            snapshots: disk.snapshots.clone(),
        })))
    }
}

/// Checks a whole snapshot (the rules of the trait's `finish`) and returns its header's
/// `LastContainedLogTimestamp`.
fn check_snapshot(bytes: &[u8]) -> Result<i64, String> {
    let prefix = batch::valid_prefix(bytes);
    if let Some(problem) = prefix.stopped_because {
        return Err(format!("at byte {}: {problem}", prefix.bytes));
    }
    let (Some(first), Some(last)) = (prefix.headers.first(), prefix.headers.last()) else {
        return Err("no record batch".into());
    };
    if first.base_offset != 0 {
        return Err(format!("offsets start at {}, not 0", first.base_offset));
    }
    let first_size = first.size_bytes();
    let header = match decode_control_batch(&bytes[..first_size]) {
        Ok((_, records)) => match records.first() {
            Some((_, ControlRecord::SnapshotHeader(h))) => h.last_contained_log_timestamp,
            _ => return Err("the first record is not a SnapshotHeader".into()),
        },
        Err(e) => {
            return Err(format!(
                "the first batch is not a snapshot header batch: {e}"
            ))
        }
    };
    let last_start = bytes.len() - last.size_bytes();
    let footer = decode_control_batch(&bytes[last_start..]).is_ok_and(|(_, records)| {
        matches!(records.last(), Some((_, ControlRecord::SnapshotFooter(_))))
    });
    if !footer {
        return Err("the last batch does not end with a SnapshotFooter".into());
    }
    Ok(header)
}

/// A snapshot being written into memory; it becomes complete only in `finish`.
struct MemSnapshotSink {
    id: OffsetAndEpoch,
    bytes: Vec<u8>,
    disk: SharedDisk,
    incarnation: u64,
}

impl SnapshotSink for MemSnapshotSink {
    fn append(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }

    fn position(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn finish(self: Box<Self>) -> Result<u64, LogError> {
        let timestamp_ms =
            check_snapshot(&self.bytes).map_err(|reason| LogError::InvalidSnapshot {
                offset: self.id.offset,
                epoch: self.id.epoch,
                reason,
            })?;
        let mut disk = self.disk.lock();
        if disk.incarnation != self.incarnation {
            return Err(LogError::Io {
                path: format!("memory snapshot {}-{}", self.id.offset, self.id.epoch),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the log crashed while this snapshot was written; its partial file is gone",
                ),
            });
        }
        if disk.snapshots.contains_key(&self.id) {
            return Err(LogError::Inconsistent(format!(
                "snapshot {}-{} already exists",
                self.id.offset, self.id.epoch
            )));
        }
        let size = self.bytes.len() as u64;
        let snapshot = MemSnapshot {
            bytes: Bytes::from(self.bytes),
            timestamp_ms,
        };
        disk.snapshots.insert(self.id, snapshot);
        Ok(size)
    }
}

impl MemLog {
    pub(super) fn listed_snapshot_ids(
        &self,
    ) -> impl DoubleEndedIterator<Item = OffsetAndEpoch> + '_ {
        self.snapshots.keys().copied().filter(|&id| id != BOOTSTRAP)
    }

    pub(super) fn snapshot(&self, id: OffsetAndEpoch) -> Result<&MemSnapshot, LogError> {
        self.snapshots.get(&id).ok_or(LogError::SnapshotNotFound {
            offset: id.offset,
            epoch: id.epoch,
        })
    }

    pub(super) fn create_sink(
        &self,
        id: OffsetAndEpoch,
    ) -> Result<Box<dyn SnapshotSink>, LogError> {
        if id.offset < 0 || id.epoch < 0 {
            return Err(LogError::InvalidSnapshot {
                offset: id.offset,
                epoch: id.epoch,
                reason: "negative snapshot id".into(),
            });
        }
        let disk = self.disk.lock();
        if self.snapshots.contains_key(&id) || disk.snapshots.contains_key(&id) {
            return Err(LogError::Inconsistent(format!(
                "snapshot {}-{} already exists",
                id.offset, id.epoch
            )));
        }
        Ok(Box::new(MemSnapshotSink {
            id,
            bytes: Vec::new(),
            disk: SharedDisk(Arc::clone(&self.disk.0)),
            incarnation: disk.incarnation,
        }))
    }

    pub(super) fn register(&mut self, id: OffsetAndEpoch) -> Result<(), LogError> {
        if self.snapshots.contains_key(&id) {
            return Ok(());
        }
        let snapshot = self.disk.lock().snapshots.get(&id).cloned();
        match snapshot {
            Some(snapshot) => {
                self.snapshots.insert(id, snapshot);
                Ok(())
            }
            None => Err(LogError::SnapshotNotFound {
                offset: id.offset,
                epoch: id.epoch,
            }),
        }
    }

    /// Deletes every snapshot older than `id`, registered or only on "disk".
    fn forget_snapshots_before(&mut self, id: OffsetAndEpoch) -> usize {
        let before = self.snapshots.len();
        self.snapshots.retain(|&k, _| k >= id);
        self.disk.lock().snapshots.retain(|&k, _| k >= id);
        before - self.snapshots.len()
    }

    /// Kafka `lastFetchedEpoch`.
    pub(super) fn last_fetched_epoch(&self) -> i32 {
        if let Some(&(epoch, _)) = self.epochs.last() {
            return epoch;
        }
        let end = self.log_end_offset();
        match self.listed_snapshot_ids().next_back() {
            Some(id) if id.offset == self.start_offset && id.offset == end => id.epoch,
            _ => 0,
        }
    }

    /// Kafka `truncateToLatestSnapshot`.
    pub(super) fn truncate_to_latest_snapshot_inner(&mut self) -> bool {
        let Some(latest) = self.listed_snapshot_ids().next_back() else {
            return false;
        };
        let log_epoch = self.epochs.last().map_or(0, |&(e, _)| e);
        let ahead = latest.epoch > log_epoch
            || (latest.epoch == log_epoch && latest.offset > self.log_end_offset());
        if !ahead {
            return false;
        }
        self.data.clear();
        self.batches.clear();
        self.segments = vec![(latest.offset, 0)];
        self.epochs.clear();
        self.checkpoint.clear();
        self.start_offset = latest.offset;
        self.flushed_bytes = 0;
        self.forget_snapshots_before(latest);
        true
    }

    /// Kafka `deleteBeforeSnapshot`; see the segment log. Returns whether a segment or a
    /// snapshot went.
    pub(super) fn delete_before(
        &mut self,
        id: OffsetAndEpoch,
        high_watermark: Option<i64>,
    ) -> bool {
        let movable = self.snapshots.contains_key(&id)
            && self.start_offset < id.offset
            && self
                .listed_snapshot_ids()
                .next_back()
                .is_some_and(|l| id.offset <= l.offset)
            && id.offset <= self.log_end_offset()
            && high_watermark.is_none_or(|hw| id.offset <= hw);
        if !movable {
            return false;
        }
        // The segment log flushes before it moves the log start.
        self.flushed_bytes = self.data.len();
        self.start_offset = id.offset;
        // Kafka truncateFromStart.
        if let Some(last_covered) = self.epochs.iter().rposition(|&(_, s)| s <= id.offset) {
            let epoch = self.epochs[last_covered].0;
            self.epochs.drain(..=last_covered);
            self.epochs.insert(0, (epoch, id.offset));
        }
        self.checkpoint = self.epochs.clone();
        // Segments whose successor starts at or below the new start go.
        let deletable = self
            .segments
            .windows(2)
            .take_while(|pair| pair[1].0 <= id.offset)
            .count();
        if deletable > 0 {
            let cut = self.segments[deletable].1;
            self.data.drain(..cut);
            self.batches.retain(|b| b.position >= cut);
            for b in &mut self.batches {
                b.position -= cut;
            }
            self.segments.drain(..deletable);
            for segment in &mut self.segments {
                segment.1 -= cut;
            }
            self.flushed_bytes -= cut;
        }
        let forgotten = self.forget_snapshots_before(id);
        deletable > 0 || forgotten > 0
    }

    /// Kafka `maybeClean`: by size, then by time.
    pub(super) fn clean(&mut self, high_watermark: i64, now_ms: u64) -> bool {
        let mut cleaned = false;
        if self.retention_bytes >= 0 {
            let mut total: u64 = self
                .listed_snapshot_ids()
                .map(|id| self.snapshots[&id].bytes.len() as u64)
                .sum();
            let limit = self.retention_bytes as u64;
            cleaned |= self.clean_pairs(high_watermark, |log, oldest| {
                if log.size_bytes() + total > limit {
                    total -= log.snapshots[&oldest].bytes.len() as u64;
                    true
                } else {
                    false
                }
            });
        }
        if self.retention_ms >= 0 {
            let retention_ms = self.retention_ms as i128;
            cleaned |= self.clean_pairs(high_watermark, |log, oldest| {
                now_ms as i128 - log.snapshots[&oldest].timestamp_ms as i128 > retention_ms
            });
        }
        cleaned
    }

    fn clean_pairs(
        &mut self,
        high_watermark: i64,
        mut should_clean: impl FnMut(&MemLog, OffsetAndEpoch) -> bool,
    ) -> bool {
        let ids: Vec<OffsetAndEpoch> = self.listed_snapshot_ids().collect();
        let mut cleaned = false;
        let mut i = 0;
        while i + 1 < ids.len() && should_clean(self, ids[i]) {
            if !self.delete_before(ids[i + 1], Some(high_watermark)) {
                break;
            }
            cleaned = true;
            i += 1;
        }
        cleaned
    }

    /// What opening does after recovery (Kafka `KafkaMetadataLog.apply`): the log starts at the
    /// first segment, partial snapshots are gone, snapshots below the start are deleted, the
    /// start must be covered by a snapshot, and a snapshot ahead of the log truncates it
    /// (returns whether it did).
    pub(super) fn reopen(&mut self) -> bool {
        self.checkpoint = self.epochs.clone();
        let start = self.segments[0].0;
        self.start_offset = start;
        {
            let mut disk = self.disk.lock();
            disk.incarnation += 1;
            disk.snapshots.retain(|id, _| id.offset >= start);
            assert!(
                start == 0 || disk.snapshots.keys().any(|id| id.offset >= start),
                "inconsistent snapshot state: the log starts at {start} and no snapshot covers it"
            );
            self.snapshots = disk.snapshots.clone();
        }
        self.truncate_to_latest_snapshot_inner()
    }
}
