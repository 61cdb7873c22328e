//! The snapshot side of [`SegmentLog`]: what opening does with the snapshot files, full
//! truncation to the latest snapshot, moving the log start offset, and cleaning
//! (Kafka `KafkaMetadataLog.recoverSnapshots`, `truncateToLatestSnapshot`,
//! `deleteBeforeSnapshot`, `maybeClean`).

use std::path::PathBuf;

use kraftwerk_raft::OffsetAndEpoch;

use super::SegmentLog;
use crate::error::StorageError;
use crate::fs::Dir;
use crate::index::IndexWrite;
use crate::segment::{segment_file_name, Segment};
use crate::snapshot::{
    snapshot_file_name, InvalidSnapshotFile, SnapshotCatalog, SnapshotScan, BOOTSTRAP_SNAPSHOT_ID,
};

/// What opening the log did with the snapshot files of the partition directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotRecovery {
    /// Valid snapshots kept, ascending (the bootstrap snapshot `0-0` included when present).
    pub snapshots: Vec<OffsetAndEpoch>,
    /// `.checkpoint` files that failed validation (empty, torn, bad CRC, no header or footer)
    /// and were deleted (case C07).
    pub invalid_deleted: Vec<InvalidSnapshotFile>,
    /// `.checkpoint.part` and `.checkpoint.deleted` files deleted.
    pub leftovers_deleted: Vec<PathBuf>,
    /// Valid snapshots below the log start offset, deleted as Kafka's `recoverSnapshots` does.
    pub below_log_start_deleted: Vec<OffsetAndEpoch>,
    /// The latest snapshot was ahead of the log, which was truncated fully to it.
    pub truncated_to_latest_snapshot: bool,
}

/// Kafka `recoverSnapshots` on the result of a scan: refuses a log whose start offset no
/// snapshot covers (case C06), then deletes leftovers, invalid checkpoints and snapshots below
/// the log start offset, and returns the catalog of the rest.
///
/// Errors: [`StorageError::Inconsistent`] when `log_start_offset > 0` and no valid snapshot
/// ends at or after it (nothing is deleted then); [`StorageError::Io`].
pub(super) fn recover_snapshots(
    dir: &Dir,
    scan: SnapshotScan,
    log_start_offset: i64,
) -> Result<(SnapshotCatalog, SnapshotRecovery), StorageError> {
    let SnapshotScan {
        mut valid,
        invalid,
        leftovers,
    } = scan;
    let latest = valid
        .keys()
        .copied()
        .rfind(|&id| id != BOOTSTRAP_SNAPSHOT_ID);
    if log_start_offset > 0 && latest.is_none_or(|id| id.offset < log_start_offset) {
        let invalid_note = if invalid.is_empty() {
            String::new()
        } else {
            format!(
                "; invalid snapshot files (left in place): {}",
                invalid
                    .iter()
                    .map(|f| format!("{} ({})", snapshot_file_name(f.id), f.reason))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(StorageError::inconsistent(
            dir,
            format!(
                "inconsistent snapshot state: the log starts at offset {log_start_offset} \
                 (first segment {}) but no snapshot ends at or after it (latest valid snapshot: \
                 {}){invalid_note}. Records before offset {log_start_offset} exist nowhere on \
                 this node: restore the missing snapshot, or empty this directory so the node \
                 fetches the metadata from the leader",
                segment_file_name(log_start_offset),
                latest.map_or("none".into(), |id| format!("{}-{}", id.offset, id.epoch)),
            ),
        ));
    }
    let mut report = SnapshotRecovery::default();
    let mut deleted_any = false;
    for path in leftovers {
        deleted_any |= dir.remove_if_exists(&path)?;
        tracing::info!(path = %path.display(), "deleted a leftover snapshot file");
        report.leftovers_deleted.push(path);
    }
    for bad in invalid {
        deleted_any |= dir.remove_if_exists(&bad.path)?;
        tracing::error!(
            path = %bad.path.display(),
            reason = %bad.reason,
            "deleted an invalid snapshot file; it was never loaded"
        );
        report.invalid_deleted.push(bad);
    }
    let below: Vec<OffsetAndEpoch> = valid
        .keys()
        .copied()
        .filter(|id| id.offset < log_start_offset)
        .collect();
    for id in below {
        valid.remove(&id);
        deleted_any |= dir.remove_if_exists(&dir.join(snapshot_file_name(id)))?;
        tracing::info!(
            offset = id.offset,
            epoch = id.epoch,
            log_start_offset,
            "deleted a snapshot below the log start offset"
        );
        report.below_log_start_deleted.push(id);
    }
    if deleted_any {
        dir.fsync()?;
    }
    report.snapshots = valid.keys().copied().collect();
    Ok((SnapshotCatalog::new(dir, valid), report))
}

impl SegmentLog {
    /// Kafka `lastFetchedEpoch`: the latest epoch of the leader-epoch cache; with no epoch, the
    /// latest snapshot's epoch if the log is empty and starts and ends at that snapshot; else 0.
    pub(super) fn last_fetched_epoch(&self) -> i32 {
        if let Some(epoch) = self.epochs.latest_epoch() {
            return epoch;
        }
        match self.catalog.latest() {
            Some(id) if id.offset == self.log_start_offset && id.offset == self.log_end_offset => {
                id.epoch
            }
            _ => 0,
        }
    }

    /// The lowest epoch an append may carry: that of the last batch still in the segments, or
    /// of Kafka's cache, or of the snapshot an empty log starts at.
    pub(super) fn append_epoch_floor(&self) -> Option<i32> {
        let cached = self
            .epochs
            .latest_epoch()
            .max(self.segment_epochs.latest_epoch());
        match cached {
            Some(epoch) => Some(epoch),
            None => self
                .catalog
                .latest()
                .filter(|id| id.offset == self.log_end_offset)
                .map(|id| id.epoch),
        }
    }

    /// Kafka `truncateToLatestSnapshot`: when the latest snapshot is ahead of the log (a newer
    /// epoch than the cache's latest, or the same epoch and an end offset beyond the log end
    /// offset), truncates the log fully to it and deletes every older snapshot. Durable on
    /// return.
    pub(super) fn truncate_to_latest_snapshot_inner(&mut self) -> Result<bool, StorageError> {
        let Some(latest) = self.catalog.latest() else {
            return Ok(false);
        };
        let log_epoch = self.epochs.latest_epoch().unwrap_or(0);
        let ahead = latest.epoch > log_epoch
            || (latest.epoch == log_epoch && latest.offset > self.log_end_offset);
        if !ahead {
            return Ok(false);
        }
        tracing::info!(
            dir = %self.dir.display(),
            snapshot_offset = latest.offset,
            snapshot_epoch = latest.epoch,
            log_end_offset = self.log_end_offset,
            log_epoch,
            "the latest snapshot is ahead of the log: truncating the log fully to it"
        );
        self.truncate_fully_and_start_at(latest.offset)?;
        self.catalog.remove_before(latest)?;
        self.dir.fsync()?;
        Ok(true)
    }

    /// Kafka `UnifiedLog.truncateFullyAndStartAt`: an empty log whose start and end are
    /// `offset`, with one empty segment there and no epochs.
    ///
    /// Crash safety: the index is emptied first (it must never describe data that is gone),
    /// then segments are deleted from the highest down, so an interrupted truncation leaves a
    /// prefix of the log, which the next open truncates again.
    fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<(), StorageError> {
        let mut write = IndexWrite::default();
        write.delete_everything();
        self.index.write(write, true)?;
        while let Some((_, segment)) = self.segments.pop_last() {
            segment.delete(&self.dir)?;
        }
        self.segments.insert(
            offset,
            Segment::create(&self.dir, offset, self.clock.now_ms())?,
        );
        self.dir.fsync()?;
        self.pending.clear();
        self.dirty_segments.clear();
        self.unrecorded_seals.clear();
        self.dir_dirty = false;
        self.epochs.clear();
        self.segment_epochs.clear();
        self.epochs.write_checkpoint_if_changed(&self.dir)?;
        self.checkpoint_dirty = false;
        self.log_start_offset = offset;
        self.log_end_offset = offset;
        self.flushed_end_offset = offset;
        Ok(())
    }

    /// Kafka `deleteBeforeSnapshot`: when snapshot `id` is registered, above the log start
    /// offset and (if given) at most `high_watermark`, moves the log start offset to its end
    /// offset, deletes the segments wholly below it and every older snapshot. Returns whether
    /// a segment or a snapshot was deleted (Kafka's answer, which stops the cleaning loop).
    /// The caller checks `id.offset <= log end offset`.
    pub(super) fn delete_before_snapshot_inner(
        &mut self,
        id: OffsetAndEpoch,
        high_watermark: Option<i64>,
    ) -> Result<bool, StorageError> {
        let movable = self.catalog.contains(id)
            && self.log_start_offset < id.offset
            && self
                .catalog
                .latest()
                .is_some_and(|latest| id.offset <= latest.offset)
            && id.offset <= self.log_end_offset
            && high_watermark.is_none_or(|hw| id.offset <= hw);
        if !movable {
            return Ok(false);
        }
        // Flushing first keeps the index simple: the segments below are durable and indexed,
        // and the epoch entries written below describe indexed batches only.
        self.flush_inner()?;
        self.log_start_offset = id.offset;
        if self.epochs.truncate_from_start(id.offset) {
            self.epochs.write_checkpoint_if_changed(&self.dir)?;
        }
        let deleted_segments = self.delete_segments_below_log_start()?;
        let forgotten = self.catalog.remove_before(id)?;
        if deleted_segments > 0 || !forgotten.is_empty() {
            self.dir.fsync()?;
        }
        tracing::info!(
            dir = %self.dir.display(),
            log_start_offset = id.offset,
            snapshot_epoch = id.epoch,
            deleted_segments,
            deleted_snapshots = ?forgotten,
            "moved the log start offset to a snapshot"
        );
        Ok(deleted_segments > 0 || !forgotten.is_empty())
    }

    /// Kafka `deleteLogStartOffsetBreachedSegments`: deletes, oldest first, every segment whose
    /// successor starts at or below the log start offset. Index first (synced), then files;
    /// the caller fsyncs the directory. Returns how many were deleted.
    fn delete_segments_below_log_start(&mut self) -> Result<usize, StorageError> {
        let bases: Vec<i64> = self.segments.keys().copied().collect();
        let deletable = bases
            .windows(2)
            .take_while(|pair| pair[1] <= self.log_start_offset)
            .count();
        if deletable == 0 {
            return Ok(0);
        }
        let new_first = bases[deletable];
        // What a scan from the new first segment finds: the epoch of its first batch starts
        // there; with no batch left, nothing.
        let mut remaining = self.segment_epochs.clone();
        if self.log_end_offset > new_first {
            remaining.truncate_from_start(new_first);
        } else {
            remaining.clear();
        }
        let mut write = IndexWrite::default();
        write.delete_batches_below(new_first);
        write.delete_sealed_below(new_first);
        for (epoch, _) in self.segment_epochs.entries() {
            write.delete_epoch(epoch);
        }
        for (epoch, start) in remaining.entries() {
            write.put_epoch(epoch, start);
        }
        self.index.write(write, true)?;
        for base in &bases[..deletable] {
            let segment = self.segments.remove(base).expect("listed");
            segment.delete(&self.dir)?;
            self.dirty_segments.remove(base);
            self.unrecorded_seals.remove(base);
        }
        self.segment_epochs = remaining;
        Ok(deletable)
    }

    /// Kafka `maybeClean`: cleaning by size, then by time.
    pub(super) fn maybe_clean_inner(
        &mut self,
        high_watermark: i64,
        now_ms: u64,
    ) -> Result<bool, StorageError> {
        let by_size = self.clean_by_size(high_watermark)?;
        let by_time = self.clean_by_time(high_watermark, now_ms)?;
        Ok(by_size || by_time)
    }

    /// Kafka `cleanSnapshotsRetentionSize`: while the segments and the snapshots together exceed
    /// `metadata.max.retention.bytes`, drops the oldest snapshot and everything before the next.
    fn clean_by_size(&mut self, high_watermark: i64) -> Result<bool, StorageError> {
        let retention_bytes = self.config.retention_bytes;
        if retention_bytes < 0 {
            return Ok(false);
        }
        let mut snapshots_bytes = self.catalog.listed_size_bytes();
        self.clean_snapshots(high_watermark, |log, oldest| {
            let log_bytes = log.size_bytes();
            if log_bytes + snapshots_bytes <= retention_bytes as u64 {
                return None;
            }
            let size = log.catalog.summary(oldest).map_or(0, |s| s.size_bytes);
            let reason = format!(
                "the log ({log_bytes} bytes) and the snapshots ({snapshots_bytes} bytes) exceed \
                 metadata.max.retention.bytes={retention_bytes}"
            );
            snapshots_bytes -= size;
            Some(reason)
        })
    }

    /// Kafka `cleanSnapshotsRetentionMs`: while the oldest snapshot's LastContainedLogTimestamp
    /// is more than `metadata.max.retention.ms` ago, drops it and everything before the next.
    fn clean_by_time(&mut self, high_watermark: i64, now_ms: u64) -> Result<bool, StorageError> {
        let retention_ms = self.config.retention_ms;
        if retention_ms < 0 {
            return Ok(false);
        }
        self.clean_snapshots(high_watermark, |log, oldest| {
            let timestamp_ms = log
                .catalog
                .summary(oldest)
                .ok()?
                .last_contained_log_timestamp_ms;
            (now_ms as i128 - timestamp_ms as i128 > retention_ms as i128).then(|| {
                format!(
                    "its LastContainedLogTimestamp {timestamp_ms} is more than \
                     metadata.max.retention.ms={retention_ms} before now ({now_ms})"
                )
            })
        })
    }

    /// Kafka `cleanSnapshots`: with at least two snapshots, walks them oldest first; while
    /// `should_clean(oldest)` gives a reason, deletes everything before the next snapshot. Stops
    /// at the first snapshot to keep, or when the next one is above the high watermark.
    fn clean_snapshots(
        &mut self,
        high_watermark: i64,
        mut should_clean: impl FnMut(&SegmentLog, OffsetAndEpoch) -> Option<String>,
    ) -> Result<bool, StorageError> {
        let ids = self.catalog.ids();
        if ids.len() < 2 {
            return Ok(false);
        }
        let mut cleaned = false;
        for pair in ids.windows(2) {
            let Some(reason) = should_clean(self, pair[0]) else {
                break;
            };
            tracing::info!(
                dir = %self.dir.display(),
                offset = pair[0].offset,
                epoch = pair[0].epoch,
                %reason,
                "deleting snapshot"
            );
            if !self.delete_before_snapshot_inner(pair[1], Some(high_watermark))? {
                break;
            }
            cleaned = true;
        }
        Ok(cleaned)
    }
}
