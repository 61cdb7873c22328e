//! Opening a partition directory: list the segments, check the RocksDB index against them, scan
//! and index whatever the index does not cover, and cut a torn or corrupt tail.
//!
//! Kafka's `LogLoader`/`LogSegment.recover` re-read and re-validate every batch on every start
//! (`KafkaMetadataLog` passes recovery point 0). We keep its outcome but not its cost: the index
//! only ever describes data that was fsynced before it was written, so when its last batch is
//! still in the segment, byte for byte in its header, everything before it is trusted and only
//! the tail after it is read and CRC-checked. When the index is missing (a directory written by
//! a Java controller), unreadable, of another format, or disagrees with the files in any way, it
//! is thrown away and rebuilt from the segments, which are the truth.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use kraftwerk_records::batch::{self, BatchHeader, BATCH_HEADER_BYTES, MAX_BATCH_BYTES};

use crate::epoch_cache::EpochCache;
use crate::error::StorageError;
use crate::fs::Dir;
use crate::index::{BatchEntry, Index, IndexWrite, SealedSegment, INDEX_DIR_NAME};
use crate::segment::{parse_segment_file_name, Segment, SEGMENT_SUFFIX};

/// Bytes read per step while scanning a segment: twice the largest batch, so that any batch
/// cut by the end of one read starts inside it and is read whole by the next.
const SCAN_CHUNK_BYTES: usize = 2 * MAX_BATCH_BYTES;

/// Index entries buffered before a RocksDB write during a scan.
const INDEX_WRITE_ENTRIES: usize = 16 * 1024;

/// What opening the log found and did; logged at open and kept by the log for inspection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoveryReport {
    /// How the index was used.
    pub index: IndexRecovery,
    /// Batches read from the segments and CRC-checked (those the index did not cover).
    pub batches_scanned: u64,
    /// Bytes of those batches.
    pub bytes_scanned: u64,
    /// The torn or invalid tail that was cut, if any.
    pub truncation: Option<TailTruncation>,
    /// Log end offset after recovery.
    pub log_end_offset: i64,
    /// Wall-clock time the recovery took, in milliseconds.
    pub duration_ms: u64,
}

/// How the RocksDB index was used at open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexRecovery {
    /// The index agreed with the segments; only the data after its last batch was scanned.
    Verified,
    /// The index was missing, unreadable or disagreed with the segments; it was rebuilt by
    /// scanning every segment.
    Rebuilt {
        /// Why it could not be used.
        reason: String,
    },
}

/// A tail recovery removed, as Kafka's `LogLoader.recoverLog` does after a CRC or parse failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TailTruncation {
    /// Segment that was cut (or, if its base offset did not continue the log, deleted).
    pub segment_base: i64,
    /// Byte position of the cut in that segment.
    pub position: u64,
    /// First offset no longer in the log (the log end offset afterwards).
    pub first_dropped_offset: i64,
    /// Bytes removed, including deleted segments.
    pub dropped_bytes: u64,
    /// Later segments deleted whole, by base offset.
    pub deleted_segments: Vec<i64>,
    /// Why the scan stopped there.
    pub reason: String,
}

/// The recovered state handed to the log.
#[derive(Debug)]
pub(crate) struct Recovered {
    pub segments: BTreeMap<i64, Segment>,
    pub index: Index,
    pub epochs: EpochCache,
    pub log_end_offset: i64,
    pub report: RecoveryReport,
}

/// Where scanning starts: right after the last batch the index vouches for.
struct ScanStart {
    segment_base: i64,
    position: u64,
    next_offset: i64,
    /// Last offset held by the start segment before `position` (`-1` if none).
    last_offset_in_segment: i64,
    epochs: EpochCache,
}

/// Opens the segments and the index of partition directory `dir` and recovers them; `now_ms`
/// (wall clock) becomes the segments' `created` time, as in Kafka's `LogLoader`.
pub(crate) fn recover(dir: &Dir, now_ms: i64) -> Result<Recovered, StorageError> {
    let started = Instant::now();
    let mut segments = list_segments(dir, now_ms)?;
    if segments.is_empty() {
        // Kafka creates the first (empty) segment when it creates the log.
        segments.insert(0, Segment::create(dir, 0, now_ms)?);
        dir.fsync()?;
    }
    let index_dir = dir.join(INDEX_DIR_NAME);
    let (index, start, index_recovery) = match open_and_verify(&index_dir, &segments) {
        Ok((index, Ok(start))) => (index, start, IndexRecovery::Verified),
        Ok((stale, Err(reason))) => {
            drop(stale); // close it (and release RocksDB's lock) before deleting it
            (
                Index::recreate(&index_dir)?,
                scan_everything(&segments),
                IndexRecovery::Rebuilt { reason },
            )
        }
        Err(reason) => (
            Index::recreate(&index_dir)?,
            scan_everything(&segments),
            IndexRecovery::Rebuilt { reason },
        ),
    };
    let mut scan = Scan {
        dir,
        now_ms,
        segments,
        index,
        verified: index_recovery == IndexRecovery::Verified,
        report_batches: 0,
        report_bytes: 0,
    };
    let (epochs, log_end_offset, truncation) = scan.run(start)?;
    let Scan {
        segments,
        index,
        report_batches,
        report_bytes,
        ..
    } = scan;
    let report = RecoveryReport {
        index: index_recovery,
        batches_scanned: report_batches,
        bytes_scanned: report_bytes,
        truncation,
        log_end_offset,
        duration_ms: started.elapsed().as_millis() as u64,
    };
    Ok(Recovered {
        segments,
        index,
        epochs,
        log_end_offset,
        report,
    })
}

/// Opens every `<20 digits>.log` file of `dir` and deletes Kafka's `*.deleted` files (except
/// snapshot ones). Other files (Kafka's `.index`, `.timeindex`, producer `.snapshot`s,
/// `leader-epoch-checkpoint`, `*.checkpoint[.part|.deleted]` snapshots, `quorum-state`) and
/// sub-directories are left alone.
///
/// Errors: a `.swap` file (a Kafka segment replacement we cannot complete) or a `.log` file
/// whose name is not a 20-digit offset (Java would load it as a segment) is
/// [`StorageError::Inconsistent`].
fn list_segments(dir: &Dir, now_ms: i64) -> Result<BTreeMap<i64, Segment>, StorageError> {
    let mut segments = BTreeMap::new();
    for item in dir.list()? {
        let path = item.path;
        if !item.is_file {
            continue;
        }
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        if name.ends_with(".deleted") && !name.ends_with(crate::snapshot::DELETED_SNAPSHOT_SUFFIX) {
            // Kafka `LogLoader.removeTempFilesAndCollectSwapFiles`: segment, index and producer
            // files Java renamed for asynchronous deletion (snapshot ones are handled with the
            // snapshots).
            dir.remove_if_exists(&path)?;
            continue;
        }
        if name.ends_with(".swap") {
            return Err(StorageError::inconsistent(
                &path,
                "a Kafka .swap file is present: let a Java controller finish the segment swap first",
            ));
        }
        if !name.ends_with(SEGMENT_SUFFIX) {
            continue;
        }
        let Some(base) = parse_segment_file_name(&name) else {
            return Err(StorageError::inconsistent(
                &path,
                "a .log file whose name is not a 20-digit base offset",
            ));
        };
        segments.insert(base, Segment::open(dir, path, base, now_ms)?);
    }
    Ok(segments)
}

fn scan_everything(segments: &BTreeMap<i64, Segment>) -> ScanStart {
    let first = *segments.keys().next().expect("at least one segment");
    ScanStart {
        segment_base: first,
        position: 0,
        next_offset: first,
        last_offset_in_segment: -1,
        epochs: EpochCache::default(),
    }
}

/// Opens the index and checks it against the segments. The outer error means the index cannot
/// be opened or read; the inner one that it disagrees with the files. Both lead to a rebuild.
fn open_and_verify(
    index_dir: &Path,
    segments: &BTreeMap<i64, Segment>,
) -> Result<(Index, Result<ScanStart, String>), String> {
    if !index_dir.exists() {
        return Err("no index (first start, or a directory written by a Java controller)".into());
    }
    let index = Index::open(index_dir).map_err(|e| format!("cannot open: {e}"))?;
    if !index.has_current_format().map_err(|e| e.to_string())? {
        return Err("index has another format version".into());
    }
    let verdict = verify(&index, segments).map_err(|e| format!("cannot read: {e}"))?;
    Ok((index, verdict))
}

fn read_header(segment: &Segment, position: u64) -> Result<Option<BatchHeader>, StorageError> {
    if position + BATCH_HEADER_BYTES as u64 > segment.size_bytes() {
        return Ok(None);
    }
    let bytes = segment.read_at(position, BATCH_HEADER_BYTES)?;
    Ok(BatchHeader::parse(&bytes).ok())
}

/// Whether the batch at `position` of `segment` has a readable header and is followed by a
/// whole, CRC-valid batch that continues it: then the damage is not at the end of the data.
fn valid_batch_follows(segment: &Segment, position: u64) -> Result<bool, StorageError> {
    let Some(damaged) = read_header(segment, position)? else {
        return Ok(false);
    };
    let next = position + damaged.size_bytes() as u64;
    let Some(header) = read_header(segment, next)? else {
        return Ok(false);
    };
    let end = next + header.size_bytes() as u64;
    if header.base_offset != damaged.next_offset() || end > segment.size_bytes() {
        return Ok(false);
    }
    let bytes = segment.read_at(next, header.size_bytes())?;
    Ok(batch::verify_crc(&bytes).is_ok())
}

/// Why an index cannot be trusted: it cannot be read, or it disagrees with the segments.
enum Distrust {
    Storage(StorageError),
    Disagrees(String),
}

impl From<StorageError> for Distrust {
    fn from(e: StorageError) -> Self {
        Distrust::Storage(e)
    }
}

/// An index that disagrees with the segments, for `reason`.
fn disagrees<T>(reason: String) -> Result<T, Distrust> {
    Err(Distrust::Disagrees(reason))
}

/// Checks that the index describes a prefix of the segments: every segment before the index's
/// last one is sealed with the recorded size and last batch, segments are contiguous, and the
/// index's last batch is still where it says, with the same header.
fn verify(
    index: &Index,
    segments: &BTreeMap<i64, Segment>,
) -> Result<Result<ScanStart, String>, StorageError> {
    match check_index(index, segments) {
        Ok(start) => Ok(Ok(start)),
        Err(Distrust::Disagrees(reason)) => Ok(Err(reason)),
        Err(Distrust::Storage(e)) => Err(e),
    }
}

/// [`verify`], with both ways of failing in one error.
fn check_index(index: &Index, segments: &BTreeMap<i64, Segment>) -> Result<ScanStart, Distrust> {
    let sealed = index.sealed_segments()?;
    let mut epochs = EpochCache::default();
    for (epoch, start) in index.epochs()? {
        epochs.assign(epoch, start);
    }
    let Some(last) = index.last_batch()? else {
        if !sealed.is_empty() || epochs.latest().is_some() {
            return disagrees("index has segments or epochs but no batches".into());
        }
        return Ok(scan_everything(segments));
    };
    let Some(end_segment) = segments.get(&last.segment_base) else {
        return disagrees(format!(
            "segment {} of the last indexed batch is missing",
            last.segment_base
        ));
    };
    check_seals(&sealed, segments, &last, end_segment)?;
    check_sealed_prefix(index, &sealed, segments, &last)?;
    check_last_batch(end_segment, &last)?;
    if epochs.latest_epoch() != Some(last.epoch) {
        return disagrees(format!(
            "indexed epochs end at {:?}, the last batch has epoch {}",
            epochs.latest_epoch(),
            last.epoch
        ));
    }
    Ok(ScanStart {
        segment_base: last.segment_base,
        position: last.end_position(),
        next_offset: last.next_offset(),
        last_offset_in_segment: last.last_offset,
        epochs,
    })
}

/// No seal for a segment after the last indexed batch's, or for a missing one. The segment of
/// the last indexed batch is sealed only when a truncation emptied the next one; then it must
/// be exactly what the index holds.
fn check_seals(
    sealed: &BTreeMap<i64, SealedSegment>,
    segments: &BTreeMap<i64, Segment>,
    last: &BatchEntry,
    end_segment: &Segment,
) -> Result<(), Distrust> {
    if let Some(base) = sealed
        .keys()
        .find(|&&b| b > last.segment_base || !segments.contains_key(&b))
    {
        return disagrees(format!(
            "index records segment {base} as sealed, but it is missing or holds no indexed batch"
        ));
    }
    if let Some(seal) = sealed.get(&last.segment_base) {
        if seal.size_bytes != end_segment.size_bytes() || seal.last_offset != last.last_offset {
            return disagrees(format!(
                "sealed segment {} differs from the index",
                last.segment_base
            ));
        }
    }
    Ok(())
}

/// Every segment before the last indexed batch's is sealed as the index says, and each one
/// starts where the previous one ended.
fn check_sealed_prefix(
    index: &Index,
    sealed: &BTreeMap<i64, SealedSegment>,
    segments: &BTreeMap<i64, Segment>,
    last: &BatchEntry,
) -> Result<(), Distrust> {
    let mut expected_base: Option<i64> = None;
    for (&base, segment) in segments.range(..last.segment_base) {
        let Some(seal) = sealed.get(&base) else {
            return disagrees(format!("segment {base} is not in the index"));
        };
        if expected_base.is_some_and(|e| e != base) {
            return disagrees(format!("segment {base} does not continue the previous one"));
        }
        check_sealed_segment(index, base, segment, seal)?;
        expected_base = Some(if seal.last_offset >= 0 {
            seal.last_offset + 1
        } else {
            base
        });
    }
    if expected_base.is_some_and(|e| e != last.segment_base) {
        return disagrees(format!(
            "segment {} does not continue the previous one",
            last.segment_base
        ));
    }
    Ok(())
}

/// A sealed segment has the recorded size and ends with the recorded last batch.
fn check_sealed_segment(
    index: &Index,
    base: i64,
    segment: &Segment,
    seal: &SealedSegment,
) -> Result<(), Distrust> {
    if segment.size_bytes() != seal.size_bytes {
        return disagrees(format!(
            "segment {base} has {} bytes, the index recorded {}",
            segment.size_bytes(),
            seal.size_bytes
        ));
    }
    if seal.last_offset < 0 {
        return Ok(());
    }
    let Some(entry) = index.batch_ending_at(seal.last_offset)? else {
        return disagrees(format!("no indexed batch ends at {}", seal.last_offset));
    };
    let header = read_header(segment, entry.position as u64)?;
    if entry.segment_base != base
        || entry.end_position() != seal.size_bytes
        || !header.is_some_and(|h| entry.matches(&h))
    {
        return disagrees(format!(
            "last batch of segment {base} differs from the index"
        ));
    }
    Ok(())
}

/// The last indexed batch is whole in its segment, with the same header and a valid CRC.
fn check_last_batch(end_segment: &Segment, last: &BatchEntry) -> Result<(), Distrust> {
    if end_segment.size_bytes() < last.end_position() {
        return disagrees(format!(
            "segment {} has {} bytes, shorter than the indexed data ({} bytes)",
            last.segment_base,
            end_segment.size_bytes(),
            last.end_position()
        ));
    }
    if !read_header(end_segment, last.position as u64)?.is_some_and(|h| last.matches(&h)) {
        return disagrees(format!(
            "the last indexed batch (offsets {}..={}) differs from the segment",
            last.base_offset, last.last_offset
        ));
    }
    // The whole last batch is cheap to check (at most 8 MiB) and is where damage from a
    // misbehaving disk would most likely show; Java would cut the log there.
    let bytes = end_segment.read_at(last.position as u64, last.size_bytes as usize)?;
    if let Err(e) = batch::verify_crc(&bytes) {
        return disagrees(format!(
            "the last indexed batch (offsets {}..={}) fails its check: {e}",
            last.base_offset, last.last_offset
        ));
    }
    Ok(())
}

/// The forward scan from a [`ScanStart`] to the end of the last segment.
struct Scan<'a> {
    dir: &'a Dir,
    /// Wall-clock ms of the open: the `created` time of a segment made or emptied here.
    now_ms: i64,
    segments: BTreeMap<i64, Segment>,
    index: Index,
    /// The scan starts after the last batch of a verified index: everything it reads may be
    /// data that was never fsynced (so never acknowledged), which may be cut whatever its shape.
    verified: bool,
    report_batches: u64,
    report_bytes: u64,
}

/// Where and why the scan stopped before the end of the data.
struct Stop {
    segment_base: i64,
    position: u64,
    /// The segment itself does not belong to the log (wrong base offset): delete it whole.
    delete_segment: bool,
    /// The bytes there fail a check (CRC, framing, a cut batch), as opposed to a valid batch
    /// that does not continue the log.
    damaged: bool,
    reason: String,
}

/// Where the scan of a segment ends.
enum ChunkEnd {
    /// The chunk was read up to this position; go on from there.
    Next(u64),
    /// The data stops being a continuation of the log.
    Stop(Stop),
}

impl Stop {
    /// A segment whose base offset does not continue the log: it is deleted whole.
    fn misplaced_segment(base: i64, next_offset: i64) -> Stop {
        Stop {
            segment_base: base,
            position: 0,
            delete_segment: true,
            damaged: false,
            reason: format!(
                "segment base offset {base} does not continue the log end offset {next_offset}"
            ),
        }
    }

    /// The log is cut at `position` of segment `base`, where the bytes are `damaged` or hold a
    /// batch that does not continue the log.
    fn cut_at(base: i64, position: u64, damaged: bool, reason: String) -> Stop {
        Stop {
            segment_base: base,
            position,
            delete_segment: false,
            damaged,
            reason,
        }
    }
}

/// What the scan has read so far.
struct Progress {
    epochs: EpochCache,
    next_offset: i64,
    /// Index entries not yet written.
    write: IndexWrite,
    /// Last offset of the segment being scanned (`-1` if none yet).
    segment_last_offset: i64,
    /// Last offset of each scanned segment.
    last_offsets: BTreeMap<i64, i64>,
    batches: u64,
    bytes: u64,
}

impl Progress {
    /// Indexes the valid batch `header` found at `position` of segment `base`.
    fn index_batch(&mut self, dir: &Path, header: &BatchHeader, base: i64, position: u64) {
        self.write
            .put_batch(&BatchEntry::new(header, base, position));
        let epoch = header.partition_leader_epoch;
        // Kafka `LogSegment.recover`: only non-negative, increasing epochs are assigned.
        if epoch >= 0
            && self
                .epochs
                .latest_epoch()
                .is_none_or(|latest| epoch > latest)
        {
            self.epochs.assign(epoch, header.base_offset);
        } else if epoch < self.epochs.latest_epoch().unwrap_or(0) {
            tracing::warn!(dir = %dir.display(), offset = header.base_offset, epoch, "batch epoch below the latest epoch; keeping the latest");
        }
        self.next_offset = header.next_offset();
        self.segment_last_offset = header.last_offset();
        self.batches += 1;
        self.bytes += header.size_bytes() as u64;
    }
}

impl Scan<'_> {
    /// Scans from `start` to the end of the data, cuts whatever does not continue the log, and
    /// brings the index up to date (durably). Returns the epochs, the log end offset and the
    /// cut, if any.
    fn run(
        &mut self,
        start: ScanStart,
    ) -> Result<(EpochCache, i64, Option<TailTruncation>), StorageError> {
        let mut progress = Progress {
            epochs: start.epochs,
            next_offset: start.next_offset,
            write: IndexWrite::default(),
            segment_last_offset: -1,
            last_offsets: BTreeMap::new(),
            batches: 0,
            bytes: 0,
        };
        let stop = self.scan_segments(
            start.segment_base,
            start.position,
            start.last_offset_in_segment,
            &mut progress,
        )?;
        self.report_batches += progress.batches;
        self.report_bytes += progress.bytes;
        let truncation = match stop {
            Some(stop) => {
                if !self.verified && stop.damaged {
                    self.refuse_unless_tail(&stop, progress.next_offset)?;
                }
                Some(self.cut_tail(stop, progress.next_offset)?)
            }
            None => None,
        };
        self.seal_segments(
            start.segment_base,
            &progress.last_offsets,
            &mut progress.write,
        );
        self.rewrite_epochs(&progress.epochs, &mut progress.write)?;
        self.index.write(progress.write, true)?;
        Ok((progress.epochs, progress.next_offset, truncation))
    }

    /// Scans segment `first_base` from `position` (its last offset before that being
    /// `last_offset`), then every later segment from its start, until the data ends or stops
    /// continuing the log.
    fn scan_segments(
        &mut self,
        first_base: i64,
        position: u64,
        last_offset: i64,
        progress: &mut Progress,
    ) -> Result<Option<Stop>, StorageError> {
        let bases: Vec<i64> = self.segments.range(first_base..).map(|(&b, _)| b).collect();
        for &base in &bases {
            let resuming = base == first_base;
            if !resuming && base != progress.next_offset {
                return Ok(Some(Stop::misplaced_segment(base, progress.next_offset)));
            }
            let (position, last_offset) = if resuming {
                (position, last_offset)
            } else {
                (0, -1)
            };
            progress.segment_last_offset = last_offset;
            let stop = self.scan_segment(base, position, progress)?;
            progress
                .last_offsets
                .insert(base, progress.segment_last_offset);
            if stop.is_some() {
                return Ok(stop);
            }
        }
        Ok(None)
    }

    /// Scans segment `base` from `position` to its end, one chunk at a time.
    fn scan_segment(
        &mut self,
        base: i64,
        mut position: u64,
        progress: &mut Progress,
    ) -> Result<Option<Stop>, StorageError> {
        // Whatever we index must be durable first; fdatasync of clean pages is cheap.
        self.segments.get_mut(&base).expect("listed").sync(base)?;
        let segment = &self.segments[&base];
        while position < segment.size_bytes() {
            match self.scan_chunk(segment, base, position, progress)? {
                ChunkEnd::Next(next) => position = next,
                ChunkEnd::Stop(stop) => return Ok(Some(stop)),
            }
        }
        Ok(None)
    }

    /// Reads up to [`SCAN_CHUNK_BYTES`] of `segment` at `position` and indexes the valid batches
    /// that continue the log. A batch cut by the end of the chunk is read again by the next one;
    /// one cut by the end of the segment, or any other invalid batch, stops the scan.
    fn scan_chunk(
        &self,
        segment: &Segment,
        base: i64,
        position: u64,
        progress: &mut Progress,
    ) -> Result<ChunkEnd, StorageError> {
        let len = (segment.size_bytes() - position).min(SCAN_CHUNK_BYTES as u64) as usize;
        let reaches_end = position + len as u64 == segment.size_bytes();
        let buf = segment.read_at(position, len)?;
        let prefix = batch::valid_prefix(&buf);
        let mut at = position;
        for header in &prefix.headers {
            if header.base_offset != progress.next_offset {
                let reason = format!(
                    "batch at position {at} starts at offset {} instead of {}",
                    header.base_offset, progress.next_offset
                );
                return Ok(ChunkEnd::Stop(Stop::cut_at(base, at, false, reason)));
            }
            progress.index_batch(self.dir, header, base, at);
            at += header.size_bytes() as u64;
        }
        if progress.write.len() >= INDEX_WRITE_ENTRIES {
            self.index
                .write(std::mem::take(&mut progress.write), false)?;
        }
        match prefix.stopped_because {
            None => {}
            Some(batch::BatchError::Truncated { .. }) if !reaches_end => {}
            Some(e) => {
                let damaged = !matches!(e, batch::BatchError::NonContiguous { .. });
                let reason = format!("{e} at position {at}");
                return Ok(ChunkEnd::Stop(Stop::cut_at(base, at, damaged, reason)));
            }
        }
        Ok(ChunkEnd::Next(at))
    }

    /// Without a verified index there is no durable watermark, so damage is cut only where a
    /// torn write could have left it: at the tail of the log (no later segment holds data, and
    /// no valid batch follows the damaged one). Anything else is damage to data that was on
    /// disk, possibly committed by a majority: cutting it (and every later batch) would let
    /// this voter lose committed records and then vote with a log that lacks them, so the log
    /// is not opened (docs/DESIGN.md, "Disk faults").
    fn refuse_unless_tail(&self, stop: &Stop, expected_offset: i64) -> Result<(), StorageError> {
        let segment = &self.segments[&stop.segment_base];
        let later_data = self
            .segments
            .range(stop.segment_base + 1..)
            .any(|(_, s)| s.size_bytes() > 0);
        let follows = if later_data {
            "later segments hold data"
        } else if valid_batch_follows(segment, stop.position)? {
            "a valid batch follows it"
        } else {
            return Ok(());
        };
        let error = StorageError::CorruptBatch {
            path: segment.path().to_path_buf(),
            position: stop.position,
            offset: expected_offset,
            reason: format!(
                "{}; {follows}, so this is damage to data that was on disk, not a torn write. \
                 Cutting the log there could drop committed records; restore the directory, \
                 or empty it so that the node fetches the log from the leader",
                stop.reason
            ),
        };
        tracing::error!(error = %error, "refusing to open a damaged log");
        Err(error)
    }

    /// Seals every segment from `first_base` but the last; forgets any seal of the last.
    fn seal_segments(
        &self,
        first_base: i64,
        last_offsets: &BTreeMap<i64, i64>,
        write: &mut IndexWrite,
    ) {
        let last_base = *self
            .segments
            .keys()
            .next_back()
            .expect("at least one segment");
        for (&base, segment) in self.segments.range(first_base..last_base) {
            let last_offset = last_offsets.get(&base).copied().unwrap_or(-1);
            write.put_sealed(
                base,
                SealedSegment {
                    size_bytes: segment.size_bytes(),
                    last_offset,
                },
            );
        }
        write.delete_sealed_from(last_base);
    }

    /// The scan may have added epochs (or, on a cut tail, the batches of some never made it
    /// into the cache): rewrites the epoch entries to match the cache.
    fn rewrite_epochs(
        &self,
        epochs: &EpochCache,
        write: &mut IndexWrite,
    ) -> Result<(), StorageError> {
        let indexed: Vec<(i32, i64)> = self.index.epochs()?;
        for (epoch, _) in indexed
            .iter()
            .filter(|entry| !epochs.entries().contains(entry))
        {
            write.delete_epoch(*epoch);
        }
        for (epoch, start) in epochs.entries() {
            write.put_epoch(epoch, start);
        }
        Ok(())
    }

    /// Cuts the log at `stop`: truncates that segment (or deletes it when it does not belong)
    /// and deletes every later segment, durably. Logs what was dropped.
    fn cut_tail(
        &mut self,
        stop: Stop,
        log_end_offset: i64,
    ) -> Result<TailTruncation, StorageError> {
        let later: Vec<i64> = self
            .segments
            .range(stop.segment_base + 1..)
            .map(|(&b, _)| b)
            .collect();
        let mut dropped_bytes = 0;
        let mut deleted_segments = Vec::new();
        for base in later {
            let segment = self.segments.remove(&base).expect("listed");
            dropped_bytes += segment.size_bytes();
            segment.delete(self.dir)?;
            deleted_segments.push(base);
        }
        if stop.delete_segment {
            let segment = self.segments.remove(&stop.segment_base).expect("listed");
            dropped_bytes += segment.size_bytes();
            segment.delete(self.dir)?;
            deleted_segments.insert(0, stop.segment_base);
            if self.segments.is_empty() {
                // Never leave the log without a segment to append to.
                self.segments.insert(
                    log_end_offset,
                    Segment::create(self.dir, log_end_offset, self.now_ms)?,
                );
            }
        } else {
            let segment = self.segments.get_mut(&stop.segment_base).expect("listed");
            dropped_bytes += segment.size_bytes() - stop.position;
            segment.truncate(stop.position, log_end_offset, self.now_ms)?;
        }
        self.dir.fsync()?;
        let truncation = TailTruncation {
            segment_base: stop.segment_base,
            position: stop.position,
            first_dropped_offset: log_end_offset,
            dropped_bytes,
            deleted_segments,
            reason: stop.reason,
        };
        tracing::warn!(
            dir = %self.dir.display(),
            segment = truncation.segment_base,
            position = truncation.position,
            first_dropped_offset = truncation.first_dropped_offset,
            dropped_bytes = truncation.dropped_bytes,
            deleted_segments = ?truncation.deleted_segments,
            reason = %truncation.reason,
            "recovery truncated the log tail"
        );
        Ok(truncation)
    }
}
