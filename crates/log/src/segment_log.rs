//! [`SegmentLog`]: the `__cluster_metadata-0` log on disk, in Kafka's segment format, with a
//! RocksDB index.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use kraftwerk_raft::{LogAppendInfo, LogError, OffsetAndEpoch, ReplicatedLog, SnapshotSink};
use kraftwerk_records::batch::BatchHeader;

use crate::clock::{Clock, SystemClock};
use crate::epoch_cache::EpochCache;
use crate::error::{io_at, StorageError};
use crate::fs::{Dir, Fs, RealFs};
use crate::index::{BatchEntry, Index, IndexWrite, SealedSegment};
use crate::lock::DirLock;
use crate::partition_metadata::ensure_partition_metadata;
use crate::recovery::{self, RecoveryReport};
use crate::segment::Segment;
use crate::snapshot::SnapshotCatalog;
use crate::validate::validate_append;

mod read;
mod snapshots;

pub use snapshots::SnapshotRecovery;

pub use kraftwerk_protocol::constants::METADATA_PARTITION_DIR;

/// Kafka's default `metadata.log.segment.bytes`: 1 GiB.
pub const DEFAULT_SEGMENT_BYTES: u64 = 1 << 30;

/// Kafka's default `metadata.max.retention.bytes`: 100 MiB.
pub const DEFAULT_RETENTION_BYTES: i64 = 100 << 20;

/// Kafka's default `metadata.max.retention.ms`: 7 days.
pub const DEFAULT_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// Kafka's default `metadata.log.segment.ms` (`LogConfig.DEFAULT_SEGMENT_MS`): 7 days.
pub const DEFAULT_SEGMENT_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// Kafka's default `metadata.log.segment.min.bytes`: 8 MiB (`KafkaRaftClient.MAX_BATCH_SIZE_BYTES`).
pub const DEFAULT_SEGMENT_MIN_BYTES: u64 = 8 << 20;

/// Configuration of a [`SegmentLog`] (Kafka's `MetadataLogConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogConfig {
    /// `metadata.log.segment.bytes`: a new segment is rolled before an append that would take
    /// the active one past this size (Kafka `LogSegment.shouldRoll`). A batch larger than this
    /// gets a segment of its own. At least `segment_min_bytes`, at most `i32::MAX` (Kafka stores
    /// positions as `int`). Default 1 GiB.
    pub segment_bytes: u64,
    /// `metadata.log.segment.min.bytes`: Kafka's internal, testing-only floor of
    /// `segment_bytes`, 8 MiB by default (Kafka 4.1 replaced it with
    /// `internal.metadata.log.segment.bytes`, which bypasses the floor). Lowering it lets tests
    /// and scenarios roll tiny segments, so that cleaning deletes some; opening logs an error
    /// when it is overridden, as Kafka does.
    pub segment_min_bytes: u64,
    /// `metadata.log.segment.ms`, passed by Kafka's `KafkaMetadataLog` as the log's
    /// `segment.ms`: a new segment is rolled before a batch when the active segment is not
    /// empty and has waited longer than this (ms) to be rolled (Kafka `LogSegment.shouldRoll`,
    /// `timeWaitedForRoll`): the batch's max timestamp minus the segment's first batch's max
    /// timestamp, or, when that first batch has no timestamp, the wall-clock time since the
    /// segment was created or loaded. No jitter: Kafka's metadata log leaves `segment.jitter.ms`
    /// at 0. At least 1 (Kafka's `segment.ms` bound). Default 7 days.
    pub segment_ms: i64,
    /// `metadata.max.retention.bytes`: `maybe_clean` deletes old snapshots and the segments
    /// below them while the segments plus the snapshots exceed this (bytes; -1 = no limit).
    /// Default 100 MiB.
    pub retention_bytes: i64,
    /// `metadata.max.retention.ms`: `maybe_clean` deletes a snapshot (and the segments below
    /// the next one) once its `LastContainedLogTimestamp` is older than this (ms; -1 = no
    /// limit). Default 7 days.
    pub retention_ms: i64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            segment_min_bytes: DEFAULT_SEGMENT_MIN_BYTES,
            segment_ms: DEFAULT_SEGMENT_MS,
            retention_bytes: DEFAULT_RETENTION_BYTES,
            retention_ms: DEFAULT_RETENTION_MS,
        }
    }
}

/// The metadata log `<metadata.log.dir>/__cluster_metadata-0/`, laid out exactly as Kafka's
/// `KafkaMetadataLog`/`UnifiedLog` lays it out, so that a Java controller can open it and we
/// can open a Java controller's.
///
/// - Segments `<20-digit base offset>.log` hold raw v2 batches; appends are batch-aligned and go
///   to the last (active) segment; reads are positional.
/// - A RocksDB index in `kraftwerk-index/` maps offsets to batch positions, epochs to start
///   offsets, and records sealed segments. It is derived data, written after the segments are
///   fsynced, and rebuilt from the segments when it is missing or disagrees with them.
/// - The leader-epoch cache is kept in memory and mirrored to Kafka's `leader-epoch-checkpoint`;
///   `partition.metadata` is written on open.
/// - Snapshots `<end offset>-<epoch>.checkpoint` sit next to the segments ([`crate::snapshot`]):
///   written through a sink, validated, fsynced and renamed; every one found at open is
///   validated, and damaged ones are deleted (case C07). The log start offset moves only to a
///   snapshot (`delete_before_snapshot`, `maybe_clean`, `truncate_to_latest_snapshot`), which
///   deletes the segments wholly below it; it is not persisted, as in Kafka (see
///   [`ReplicatedLog`]'s snapshot section).
/// - The `.lock` file in `metadata.log.dir` is held (fcntl) while the log is open.
///
/// Durability: appends are durable after [`flush`](ReplicatedLog::flush); `truncate_to`, full
/// truncation and cleaning are durable when they return. Dropping the log without flushing is a crash: unflushed appends may
/// or may not survive, and recovery at the next open keeps a valid prefix of them.
///
/// Any I/O error from a write, truncate or flush leaves the log failed: every later call
/// returns an error and the node must restart (Kafka takes the log directory offline).
#[derive(Debug)]
pub struct SegmentLog {
    /// The partition directory, open for the log's lifetime: every directory fsync goes
    /// through this one handle.
    dir: Dir,
    config: LogConfig,
    /// Wall clock for `segment.ms` rolling (Kafka's `Time`).
    clock: Arc<dyn Clock>,
    /// Segment files by base offset; the last one is active.
    segments: BTreeMap<i64, Segment>,
    index: Index,
    /// Kafka's `LeaderEpochFileCache` as `UnifiedLog` keeps it: truncated from the start when the
    /// log start offset moves, cleared by a full truncation. Answers `end_offset` and
    /// `end_offset_for_epoch`, and is what `leader-epoch-checkpoint` holds.
    epochs: EpochCache,
    /// The epochs a scan of the segment files finds (what the index records). `epochs` differs
    /// from it at its start, where Kafka's cache does: after the log start offset moved, and after
    /// a restart by what `leader-epoch-checkpoint` held ([`EpochCache::recovered`]).
    segment_epochs: EpochCache,
    /// Offset of the first record the log serves (Kafka `logStartOffset`): the base offset of the
    /// first segment at open, raised by `delete_before_snapshot`, set by a full truncation. Not
    /// persisted, as in Kafka.
    log_start_offset: i64,
    /// The complete snapshots (`.checkpoint` files).
    catalog: SnapshotCatalog,
    /// Batches appended since the last flush, not yet in the index.
    pending: Vec<BatchEntry>,
    log_end_offset: i64,
    flushed_end_offset: i64,
    /// Segments written since the last flush (need fdatasync).
    dirty_segments: BTreeSet<i64>,
    /// Segments were created since the last directory fsync.
    dir_dirty: bool,
    /// Segments rolled away from since the index last recorded seals.
    unrecorded_seals: BTreeSet<i64>,
    /// The epoch cache changed since `leader-epoch-checkpoint` was written.
    checkpoint_dirty: bool,
    failure: Option<String>,
    report: RecoveryReport,
    snapshot_report: SnapshotRecovery,
    /// Declared last so it is released after everything else is closed.
    _lock: DirLock,
}

impl SegmentLog {
    /// Opens (creating if needed) the metadata log under `metadata_log_dir`: takes
    /// `<metadata_log_dir>/.lock`, creates `__cluster_metadata-0/` and its first segment if
    /// missing, writes `partition.metadata`, validates the snapshot files, recovers the segments
    /// (see [`RecoveryReport`]), then does what Kafka's `KafkaMetadataLog.apply` does with the
    /// snapshots (see [`SnapshotRecovery`]): the log start offset is the first segment's base
    /// offset; `.checkpoint.part`/`.checkpoint.deleted` files, invalid checkpoints and snapshots
    /// below the log start are deleted; a latest snapshot ahead of the log truncates it fully.
    /// The leader-epoch cache is rebuilt as Kafka's `LogLoader` rebuilds it from
    /// `leader-epoch-checkpoint` and the batches. Everything recovered is durable on return, so
    /// [`flushed_end_offset`](ReplicatedLog::flushed_end_offset) equals the log end offset.
    ///
    /// Errors: [`StorageError::Locked`] if another process uses the directory,
    /// [`StorageError::Config`] for a bad `segment_bytes`, [`StorageError::Inconsistent`] for a
    /// directory recovery will not repair (a Kafka `.swap` file, a foreign `partition.metadata`,
    /// a snapshot file name Java cannot parse, or a log start offset above 0 that no valid
    /// snapshot covers — case C06, refused before anything is deleted),
    /// [`StorageError::Io`] / [`StorageError::Index`] for I/O failures.
    pub fn open(metadata_log_dir: &Path, config: LogConfig) -> Result<SegmentLog, StorageError> {
        Self::open_with_fs(metadata_log_dir, config, Arc::new(RealFs))
    }

    /// [`open`](Self::open) on the file system `fs`: every file of the partition directory is
    /// opened, written, fsynced, renamed and removed through it (tests put
    /// [`crate::fs::faulty::FaultyFs`] there). The RocksDB index and the `.lock` file use the OS
    /// directly.
    pub fn open_with_fs(
        metadata_log_dir: &Path,
        config: LogConfig,
        fs: Arc<dyn Fs>,
    ) -> Result<SegmentLog, StorageError> {
        Self::open_with_clock(metadata_log_dir, config, fs, Arc::new(SystemClock))
    }

    /// [`open_with_fs`](Self::open_with_fs) reading wall-clock time from `clock` (Kafka's
    /// `Time`), for `segment.ms` rolling; tests put a [`crate::ManualClock`] there.
    pub fn open_with_clock(
        metadata_log_dir: &Path,
        config: LogConfig,
        fs: Arc<dyn Fs>,
        clock: Arc<dyn Clock>,
    ) -> Result<SegmentLog, StorageError> {
        check_config(&config)?;
        fs.create_dir_all(metadata_log_dir)
            .map_err(io_at(metadata_log_dir))?;
        let lock = DirLock::acquire(metadata_log_dir)?;
        let path = metadata_log_dir.join(METADATA_PARTITION_DIR);
        if !path.is_dir() {
            fs.create_dir_all(&path).map_err(io_at(&path))?;
            Dir::open(Arc::clone(&fs), metadata_log_dir)?.fsync()?;
        }
        let dir = Dir::open(fs, &path)?;
        ensure_partition_metadata(&dir)?;
        // Snapshots are validated before the segments are touched, so that a refusal below
        // leaves the directory as it was.
        let scan = crate::snapshot::scan(&dir)?;
        let recovered = recovery::recover(&dir, clock.now_ms())?;
        let report = recovered.report;
        let log_start_offset = *recovered
            .segments
            .keys()
            .next()
            .expect("recovery leaves a segment");
        let (catalog, snapshot_report) =
            snapshots::recover_snapshots(&dir, scan, log_start_offset)?;
        let epochs = EpochCache::recovered(
            EpochCache::read_checkpoint(&dir)?,
            &recovered.epochs,
            recovered.log_end_offset,
        );
        let mut log = SegmentLog {
            dir,
            config,
            clock,
            segments: recovered.segments,
            index: recovered.index,
            segment_epochs: recovered.epochs,
            epochs,
            log_start_offset,
            catalog,
            pending: Vec::new(),
            log_end_offset: recovered.log_end_offset,
            flushed_end_offset: recovered.log_end_offset,
            dirty_segments: BTreeSet::new(),
            dir_dirty: false,
            unrecorded_seals: BTreeSet::new(),
            checkpoint_dirty: false,
            failure: None,
            report,
            snapshot_report,
            _lock: lock,
        };
        // Kafka `KafkaMetadataLog.apply`: a follower that crashed after downloading a snapshot
        // but before truncating its log finishes the truncation now.
        log.snapshot_report.truncated_to_latest_snapshot =
            log.truncate_to_latest_snapshot_inner()?;
        if !log.snapshot_report.truncated_to_latest_snapshot {
            // What the next open recovers from the checkpoint written now, so that a restart
            // serves the same end epoch ([`EpochCache::settled`]).
            log.epochs =
                std::mem::take(&mut log.epochs).settled(&log.segment_epochs, log.log_end_offset);
            log.epochs.write_checkpoint_if_changed(&log.dir)?;
        }
        log.log_opened();
        Ok(log)
    }

    fn log_opened(&self) {
        let report = &self.report;
        tracing::info!(
            dir = %self.dir.display(),
            index = ?report.index,
            batches_scanned = report.batches_scanned,
            bytes_scanned = report.bytes_scanned,
            truncated = report.truncation.is_some(),
            log_start_offset = self.log_start_offset,
            log_end_offset = self.log_end_offset,
            snapshots = ?self.catalog.ids(),
            truncated_to_latest_snapshot = self.snapshot_report.truncated_to_latest_snapshot,
            duration_ms = report.duration_ms,
            "opened metadata log"
        );
    }
}

/// Checks `segment_bytes`, `segment_min_bytes` and `segment_ms` (Kafka's `MetadataLogConfig`
/// bounds, and `LogConfig.validate`'s for `segment.ms`).
fn check_config(config: &LogConfig) -> Result<(), StorageError> {
    if config.segment_ms < 1 {
        return Err(StorageError::Config(format!(
            "Invalid value {} for configuration metadata.log.segment.ms: Value must be at least 1",
            config.segment_ms
        )));
    }
    let max = i32::MAX as u64;
    if config.segment_min_bytes == 0 || config.segment_min_bytes > max {
        return Err(StorageError::Config(format!(
            "metadata.log.segment.min.bytes must be in [1, {max}], got {}",
            config.segment_min_bytes
        )));
    }
    if config.segment_bytes < config.segment_min_bytes || config.segment_bytes > max {
        return Err(StorageError::Config(format!(
                "metadata.log.segment.bytes must be in [metadata.log.segment.min.bytes = {}, {max}], got {}",
                config.segment_min_bytes, config.segment_bytes
            )));
    }
    if config.segment_min_bytes != DEFAULT_SEGMENT_MIN_BYTES {
        tracing::error!(
            segment_min_bytes = config.segment_min_bytes,
            "overriding metadata.log.segment.min.bytes is only supported for testing; segments \
                 too small may be unable to hold batches of metadata records"
        );
    }
    Ok(())
}

impl SegmentLog {
    /// Flushes and closes the log (a clean shutdown).
    /// Also writes RocksDB's memtable to disk, so that the next open need not replay the
    /// index's write-ahead log.
    pub fn close(mut self) -> Result<(), LogError> {
        self.flush()?;
        Ok(self.index.flush_memtable()?)
    }

    /// The partition directory, `<metadata.log.dir>/__cluster_metadata-0`.
    pub fn partition_dir(&self) -> &Path {
        &self.dir
    }

    /// What recovery found and did when the log was opened.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.report
    }

    /// What opening the log found and did with the snapshot files.
    pub fn snapshot_recovery(&self) -> &SnapshotRecovery {
        &self.snapshot_report
    }

    /// Base offsets of the segment files, oldest first; the last is the active segment.
    pub fn segment_base_offsets(&self) -> Vec<i64> {
        self.segments.keys().copied().collect()
    }

    /// The leader-epoch cache as `(epoch, start offset)`, oldest first (the contents of
    /// `leader-epoch-checkpoint` once flushed). Kafka's view: after the log start offset moves,
    /// the first entry starts at the log start offset.
    pub fn epoch_entries(&self) -> Vec<(i32, i64)> {
        self.epochs.entries()
    }

    /// Total size of the segment files in bytes (Kafka `UnifiedLog.size`), including segments
    /// below the log start offset that cleaning has not deleted yet.
    pub fn size_bytes(&self) -> u64 {
        self.segments.values().map(Segment::size_bytes).sum()
    }

    /// The configuration the log was opened with.
    pub fn config(&self) -> LogConfig {
        self.config
    }

    /// Test hook: drops the log the way a power failure would, keeping of each segment only
    /// what was fsynced plus the first `keep_unflushed_bytes` of the unflushed bytes (in log
    /// order), and returns `metadata.log.dir` for reopening.
    #[cfg(test)]
    pub(crate) fn simulate_power_loss(self, keep_unflushed_bytes: u64) -> std::path::PathBuf {
        let root = self
            .dir
            .parent()
            .expect("partition dir has a parent")
            .to_path_buf();
        let cuts: Vec<(std::path::PathBuf, u64, u64)> = self
            .segments
            .values()
            .map(|s| {
                (
                    s.path().to_path_buf(),
                    s.synced_size_bytes(),
                    s.size_bytes(),
                )
            })
            .collect();
        drop(self);
        let mut budget = keep_unflushed_bytes;
        for (path, synced, size) in cuts {
            let kept = synced + (size - synced).min(budget);
            budget -= kept - synced;
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .expect("segment exists");
            file.set_len(kept).expect("cut segment");
        }
        root
    }

    /// Test hook: bytes appended but not yet fsynced.
    #[cfg(test)]
    pub(crate) fn unflushed_bytes(&self) -> u64 {
        self.segments
            .values()
            .map(|s| s.size_bytes() - s.synced_size_bytes())
            .sum()
    }

    fn check_usable(&self) -> Result<(), LogError> {
        match &self.failure {
            None => Ok(()),
            Some(reason) => Err(StorageError::Failed {
                path: self.dir.to_path_buf(),
                reason: reason.clone(),
            }
            .into()),
        }
    }

    /// Records the first failure of a write path; the log refuses all further calls.
    fn fail<T>(&mut self, error: StorageError) -> Result<T, LogError> {
        if self.failure.is_none() {
            tracing::error!(dir = %self.dir.display(), error = %error, "metadata log failed; it must be reopened");
            self.failure = Some(error.to_string());
        }
        Err(error.into())
    }

    fn active(&self) -> &Segment {
        self.segments
            .values()
            .next_back()
            .expect("the log always has a segment")
    }

    /// Kafka `LogSegment.shouldRoll` for one batch: the active segment is not empty and the
    /// batch would take it past `segment_bytes`, or its last offset would not fit Kafka's
    /// 32-bit relative offsets, or the segment has waited more than `segment_ms` to be rolled
    /// ([`Segment::time_waited_for_roll`]; no jitter, as for Kafka's metadata log).
    /// `active_size` counts the batches already placed in the active segment but not written
    /// yet, the first of which has max timestamp `run_first_max_timestamp`.
    ///
    /// Kafka applies the rule once per append, with the append's max timestamp; here it is
    /// applied to each batch, as the size rule is, so that a follower append spanning the roll
    /// time splits where separate appends would have.
    fn should_roll(
        &mut self,
        header: &BatchHeader,
        active_size: u64,
        run_first_max_timestamp: Option<i64>,
        now_ms: i64,
    ) -> Result<Option<&'static str>, StorageError> {
        if active_size == 0 {
            return Ok(None);
        }
        let segment_ms = self.config.segment_ms;
        let active = self
            .segments
            .values_mut()
            .next_back()
            .expect("the log always has a segment");
        if active_size + header.size_bytes() as u64 > self.config.segment_bytes {
            return Ok(Some("segment.bytes"));
        }
        if header.last_offset() - active.base_offset() > i32::MAX as i64 {
            return Ok(Some("relative offset overflow"));
        }
        let waited =
            active.time_waited_for_roll(now_ms, header.max_timestamp, run_first_max_timestamp)?;
        Ok((waited > segment_ms).then_some("segment.ms"))
    }

    fn append(
        &mut self,
        records: &[u8],
        leader_epoch: Option<i32>,
    ) -> Result<LogAppendInfo, LogError> {
        self.check_usable()?;
        let headers = validate_append(
            records,
            leader_epoch,
            self.log_end_offset,
            self.append_epoch_floor(),
        )?;
        match self.write_batches(records, &headers) {
            Ok(()) => {}
            Err(e) => return self.fail(e),
        }
        let first = headers.first().expect("validated");
        let last = headers.last().expect("validated");
        Ok(LogAppendInfo {
            first_offset: first.base_offset,
            last_offset: last.last_offset(),
        })
    }

    /// Writes validated batches, rolling segments as needed: one positional write per run of
    /// batches that land in the same segment.
    fn write_batches(
        &mut self,
        records: &[u8],
        headers: &[BatchHeader],
    ) -> Result<(), StorageError> {
        let mut run_start = 0usize; // byte range of `records` not yet written
        let mut run_end = 0usize;
        let mut active_size = self.active().size_bytes();
        let mut run_offset = self.log_end_offset; // the first offset of the run
        let mut run_first_max_timestamp = None; // of the run's first batch
        let now_ms = self.clock.now_ms();
        for header in headers {
            let unwritten = (run_end - run_start) as u64;
            if let Some(reason) = self.should_roll(
                header,
                active_size + unwritten,
                run_first_max_timestamp,
                now_ms,
            )? {
                self.write_run(
                    &records[run_start..run_end],
                    run_offset,
                    run_first_max_timestamp,
                )?;
                run_start = run_end;
                run_offset = header.base_offset;
                run_first_max_timestamp = None;
                let sealed = self.active().base_offset();
                tracing::debug!(
                    dir = %self.dir.display(),
                    sealed_base_offset = sealed,
                    base_offset = header.base_offset,
                    reason,
                    "rolling new log segment"
                );
                let segment = Segment::create(&self.dir, header.base_offset, now_ms)?;
                self.segments.insert(header.base_offset, segment);
                self.unrecorded_seals.insert(sealed);
                self.dir_dirty = true;
                active_size = 0;
            }
            let active = self.active().base_offset();
            let position = active_size + (run_end - run_start) as u64;
            self.pending.push(BatchEntry::new(header, active, position));
            run_end += header.size_bytes();
            run_first_max_timestamp.get_or_insert(header.max_timestamp);
        }
        self.write_run(
            &records[run_start..run_end],
            run_offset,
            run_first_max_timestamp,
        )?;
        for header in headers {
            let epoch = header.partition_leader_epoch;
            if self
                .epochs
                .latest_epoch()
                .is_none_or(|latest| epoch > latest)
            {
                self.epochs.assign(epoch, header.base_offset);
                self.checkpoint_dirty = true;
            }
            if self
                .segment_epochs
                .latest_epoch()
                .is_none_or(|latest| epoch > latest)
            {
                self.segment_epochs.assign(epoch, header.base_offset);
            }
        }
        self.log_end_offset = headers.last().expect("validated").next_offset();
        Ok(())
    }

    /// Writes a run of batches to the active segment; `first_max_timestamp` is the first
    /// batch's max timestamp (`Some` for a non-empty run).
    fn write_run(
        &mut self,
        bytes: &[u8],
        first_offset: i64,
        first_max_timestamp: Option<i64>,
    ) -> Result<(), StorageError> {
        let Some(first_max_timestamp) = first_max_timestamp.filter(|_| !bytes.is_empty()) else {
            return Ok(());
        };
        let segment = self
            .segments
            .values_mut()
            .next_back()
            .expect("the log always has a segment");
        segment.append(bytes, first_offset, first_max_timestamp)?;
        self.dirty_segments.insert(segment.base_offset());
        Ok(())
    }

    /// The batch containing `offset` (which must be in `[start, LEO)`).
    fn batch_containing(&self, offset: i64) -> Result<BatchEntry, StorageError> {
        let entry = match self.pending.first() {
            Some(first) if offset >= first.base_offset => self
                .pending
                .get(self.pending.partition_point(|e| e.last_offset < offset))
                .copied(),
            _ => self.index.batch_containing(offset)?,
        };
        entry.ok_or_else(|| {
            StorageError::inconsistent(
                &self.dir,
                format!("no batch holds offset {offset} below the log end offset"),
            )
        })
    }

    fn truncate(&mut self, offset: i64) -> Result<(), StorageError> {
        let removed = self.batch_containing(offset)?;
        let new_end = removed.base_offset;
        let removed_epochs: Vec<(i32, i64)> = self
            .segment_epochs
            .entries()
            .into_iter()
            .filter(|&(_, s)| s >= new_end)
            .collect();
        let indexed = self
            .pending
            .first()
            .is_none_or(|first| removed.base_offset < first.base_offset);
        if indexed {
            // The index first: it must never describe data that is gone. Synced, because a
            // stale index entry past the end would cost a full rebuild at the next open.
            let mut write = IndexWrite::default();
            write.delete_batches_from(removed.last_offset);
            for (epoch, _) in &removed_epochs {
                write.delete_epoch(*epoch);
            }
            write.delete_sealed_from(removed.segment_base);
            self.index.write(write, true)?;
        }
        self.pending.retain(|e| e.base_offset < new_end);
        let later: Vec<i64> = self
            .segments
            .range(removed.segment_base + 1..)
            .map(|(&b, _)| b)
            .collect();
        for base in &later {
            let segment = self.segments.remove(base).expect("listed");
            segment.delete(&self.dir)?;
        }
        self.segments
            .get_mut(&removed.segment_base)
            .expect("segment of an indexed batch")
            .truncate(removed.position as u64, new_end, self.clock.now_ms())?;
        if !later.is_empty() || self.dir_dirty {
            self.dir.fsync()?;
            self.dir_dirty = false;
        }
        self.dirty_segments.retain(|&b| b < removed.segment_base);
        self.unrecorded_seals.retain(|&b| b < removed.segment_base);
        self.segment_epochs.truncate_from_end(new_end);
        let checkpoint_changed = !self.epochs.truncate_from_end(new_end).is_empty();
        self.log_end_offset = new_end;
        self.flushed_end_offset = self.flushed_end_offset.min(new_end);
        if checkpoint_changed || self.checkpoint_dirty {
            self.epochs.write_checkpoint_if_changed(&self.dir)?;
            self.checkpoint_dirty = false;
        }
        Ok(())
    }

    fn flush_inner(&mut self) -> Result<(), StorageError> {
        for base in &self.dirty_segments {
            // The first offset this fsync is to make durable in the segment, for the error.
            let first_offset = self
                .pending
                .iter()
                .find(|e| e.segment_base == *base)
                .map_or(self.flushed_end_offset, |e| e.base_offset);
            self.segments
                .get_mut(base)
                .expect("dirty segments exist")
                .sync(first_offset)?;
        }
        if self.dir_dirty {
            self.dir.fsync()?;
        }
        if self.checkpoint_dirty {
            self.epochs.write_checkpoint_if_changed(&self.dir)?;
        }
        let mut write = IndexWrite::default();
        for entry in &self.pending {
            write.put_batch(entry);
        }
        if let Some(first) = self.pending.first() {
            for (epoch, start) in self
                .segment_epochs
                .entries()
                .into_iter()
                .filter(|&(_, s)| s >= first.base_offset)
            {
                write.put_epoch(epoch, start);
            }
        }
        for &base in &self.unrecorded_seals {
            let segment = &self.segments[&base];
            let last_offset = match self.pending.iter().rev().find(|e| e.segment_base == base) {
                Some(entry) => entry.last_offset,
                None => self
                    .index
                    .last_batch()?
                    .filter(|e| e.segment_base == base)
                    .map_or(-1, |e| e.last_offset),
            };
            write.put_sealed(
                base,
                SealedSegment {
                    size_bytes: segment.size_bytes(),
                    last_offset,
                },
            );
        }
        if !write.is_empty() {
            // Not synced: after a crash the index may lag behind the fsynced segments, and
            // recovery scans what it lacks.
            self.index.write(write, false)?;
        }
        self.pending.clear();
        self.dirty_segments.clear();
        self.unrecorded_seals.clear();
        self.dir_dirty = false;
        self.checkpoint_dirty = false;
        self.flushed_end_offset = self.log_end_offset;
        Ok(())
    }
}

impl ReplicatedLog for SegmentLog {
    fn end_offset(&self) -> OffsetAndEpoch {
        OffsetAndEpoch::new(self.log_end_offset, self.last_fetched_epoch())
    }

    fn start_offset(&self) -> i64 {
        self.log_start_offset
    }

    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
        // KafkaMetadataLog.endOffsetForEpoch: the cache's answer, replaced by the earliest
        // snapshot id when the requested epoch precedes every epoch of the log; (LEO, last
        // fetched epoch) when the cache answers UNDEFINED.
        match self.epochs.end_offset_for(epoch, self.log_end_offset) {
            Some((found_epoch, end_offset)) => match self.catalog.earliest() {
                Some(snapshot) if snapshot.offset == end_offset && found_epoch == epoch => snapshot,
                _ => OffsetAndEpoch::new(end_offset, found_epoch),
            },
            None => self.end_offset(),
        }
    }

    fn append_as_leader(&mut self, batches: &[u8], epoch: i32) -> Result<LogAppendInfo, LogError> {
        self.append(batches, Some(epoch))
    }

    fn append_as_follower(&mut self, batches: &[u8]) -> Result<LogAppendInfo, LogError> {
        self.append(batches, None)
    }

    fn read(&self, start_offset: i64, max_bytes: usize) -> Result<Bytes, LogError> {
        self.check_usable()?;
        let start = self.log_start_offset;
        if start_offset < start || start_offset > self.log_end_offset {
            return Err(LogError::OffsetOutOfRange {
                offset: start_offset,
                start,
                end: self.log_end_offset,
            });
        }
        if start_offset == self.log_end_offset {
            return Ok(Bytes::new());
        }
        let entries = self.entries_for_read(start_offset, max_bytes)?;
        assert!(
            entries
                .first()
                .is_some_and(|e| e.base_offset <= start_offset && start_offset <= e.last_offset),
            "read at {start_offset} found {:?} in {}",
            entries.first(),
            self.dir.display()
        );
        self.read_entries(&entries)
    }

    fn truncate_to(&mut self, offset: i64) -> Result<(), LogError> {
        self.check_usable()?;
        let start = self.log_start_offset;
        if offset < start {
            return Err(LogError::OffsetOutOfRange {
                offset,
                start,
                end: self.log_end_offset,
            });
        }
        if offset >= self.log_end_offset {
            return Ok(());
        }
        match self.batch_containing(offset) {
            // The log start sits inside this batch: removing it would end the log before it
            // starts.
            Ok(batch) if batch.base_offset < start => {
                return Err(LogError::OffsetOutOfRange {
                    offset,
                    start,
                    end: self.log_end_offset,
                })
            }
            Ok(_) => {}
            Err(e) => return self.fail(e),
        }
        match self.truncate(offset) {
            Ok(()) => Ok(()),
            Err(e) => self.fail(e),
        }
    }

    fn flush(&mut self) -> Result<(), LogError> {
        self.check_usable()?;
        match self.flush_inner() {
            Ok(()) => Ok(()),
            Err(e) => self.fail(e),
        }
    }

    fn flushed_end_offset(&self) -> i64 {
        self.flushed_end_offset
    }

    fn snapshot_ids(&self) -> Vec<OffsetAndEpoch> {
        self.catalog.ids()
    }

    fn snapshot_size_bytes(&self, id: OffsetAndEpoch) -> Result<u64, LogError> {
        self.check_usable()?;
        Ok(self.catalog.summary(id)?.size_bytes)
    }

    fn read_snapshot(
        &self,
        id: OffsetAndEpoch,
        position: u64,
        max_bytes: usize,
    ) -> Result<Bytes, LogError> {
        self.check_usable()?;
        self.catalog.read(id, position, max_bytes)
    }

    fn create_snapshot(&self, id: OffsetAndEpoch) -> Result<Box<dyn SnapshotSink>, LogError> {
        self.check_usable()?;
        Ok(Box::new(self.catalog.create_sink(id)?))
    }

    fn register_snapshot(&mut self, id: OffsetAndEpoch) -> Result<(), LogError> {
        self.check_usable()?;
        if self.catalog.register(id)? {
            tracing::info!(dir = %self.dir.display(), offset = id.offset, epoch = id.epoch, "registered snapshot");
        }
        Ok(())
    }

    fn truncate_to_latest_snapshot(&mut self) -> Result<bool, LogError> {
        self.check_usable()?;
        match self.truncate_to_latest_snapshot_inner() {
            Ok(truncated) => Ok(truncated),
            Err(e) => self.fail(e),
        }
    }

    fn delete_before_snapshot(&mut self, id: OffsetAndEpoch) -> Result<(), LogError> {
        self.check_usable()?;
        self.catalog.summary(id)?;
        if id.offset > self.log_end_offset {
            return Err(LogError::OffsetOutOfRange {
                offset: id.offset,
                start: self.log_start_offset,
                end: self.log_end_offset,
            });
        }
        match self.delete_before_snapshot_inner(id, None) {
            Ok(_) => Ok(()),
            Err(e) => self.fail(e),
        }
    }

    fn maybe_clean(&mut self, high_watermark: i64, now_ms: u64) -> Result<bool, LogError> {
        self.check_usable()?;
        match self.maybe_clean_inner(high_watermark, now_ms) {
            Ok(cleaned) => Ok(cleaned),
            Err(e) => self.fail(e),
        }
    }
}

// The server moves the log into the task that owns the Raft core.
const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<SegmentLog>();
    assert_send::<crate::FileQuorumStateStore>();
};
