//! [`MemLog`]: the in-memory [`ReplicatedLog`] with crash semantics (Kafka's `MockLog`).

use std::collections::BTreeMap;

use bytes::Bytes;
use kraftwerk_records::batch::{self, BatchHeader};

use crate::storage::{LogAppendInfo, LogError, OffsetAndEpoch, ReplicatedLog, SnapshotSink};
use crate::testing::DiskFault;

mod disk_fault;
mod snapshots;

use disk_fault::FaultState;
use snapshots::{MemSnapshot, SharedDisk};

/// Kafka's default `metadata.log.segment.bytes` (1 GiB), `metadata.max.retention.bytes`
/// (100 MiB) and `metadata.max.retention.ms` (7 days).
const DEFAULT_SEGMENT_BYTES: u64 = 1 << 30;
const DEFAULT_RETENTION_BYTES: i64 = 100 << 20;
const DEFAULT_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// Where one batch sits in [`MemLog::data`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BatchEntry {
    base_offset: i64,
    last_offset: i64,
    epoch: i32,
    position: usize,
    size_bytes: usize,
}

/// An in-memory replicated log that behaves like the segment log, including what a crash does.
///
/// The batches are kept as one byte buffer laid out exactly as the segment files would hold
/// them, so a crash can tear it at any byte and recovery runs the same scan the segment log runs
/// ([`kraftwerk_records::batch::valid_prefix`]). Segment boundaries are modelled (rolled by
/// Kafka's `LogSegment.shouldRoll` at [`with_segment_bytes`](Self::with_segment_bytes), 1 GiB by
/// default) because they decide what cleaning can delete and where the log starts after a
/// restart.
///
/// Crash semantics follow Kafka's `MockLog` (`firstUnflushedOffset`, `reopen`) and
/// `KafkaMetadataLog.apply`:
/// - [`crash`](Self::crash) drops every byte appended after the last [`flush`](ReplicatedLog::flush);
/// - [`crash_torn`](Self::crash_torn) keeps an arbitrary prefix of the unflushed bytes, as a disk
///   may have written some of them, possibly ending mid-batch; recovery drops the torn batch;
/// - [`truncate_to`](ReplicatedLog::truncate_to), full truncation and cleaning are durable at
///   once (the segment log fsyncs them);
/// - after a crash the log starts at the first segment's base offset (Kafka does not persist the
///   log start offset), snapshots below it are deleted, complete snapshots survive (registered or
///   not), partial ones (open sinks) are lost, and a latest snapshot ahead of the log truncates
///   it fully.
///
/// After a crash everything that survived recovery counts as flushed (the segment log fsyncs the
/// recovered tail on open).
///
/// The leader-epoch cache follows Kafka's `LeaderEpochFileCache` and
/// `KafkaMetadataLog.endOffsetForEpoch`; it is written here as plain list scans so that it can
/// serve as an independent reference for the segment log's implementation in the conformance
/// suite.
#[derive(Debug)]
pub struct MemLog {
    /// Every batch of the segments still present, back to back (from the first segment's base
    /// offset, which may be below the log start offset).
    data: Vec<u8>,
    /// One entry per batch in `data`, in offset order.
    batches: Vec<BatchEntry>,
    /// `(base offset, byte position in data)` of each segment, oldest first; the last is active.
    segments: Vec<(i64, usize)>,
    /// `(epoch, start offset)` in increasing order of both (Kafka `EpochEntry`), as Kafka keeps
    /// them in memory: truncated from the start when the log start offset moves.
    epochs: Vec<(i32, i64)>,
    /// The epochs as last made durable (the segment log's `leader-epoch-checkpoint`): at a
    /// flush, a truncation, a move of the log start and an open. A restart starts from them.
    checkpoint: Vec<(i32, i64)>,
    /// The log start offset: the first segment's base offset, or higher after
    /// `delete_before_snapshot`.
    start_offset: i64,
    /// Bytes of `data` that are durable.
    flushed_bytes: usize,
    /// Calls to `flush` since creation (for tests asserting that a flush happened).
    flush_count: u64,
    segment_bytes: u64,
    retention_bytes: i64,
    retention_ms: i64,
    /// Registered snapshots.
    snapshots: BTreeMap<OffsetAndEpoch, MemSnapshot>,
    /// Complete snapshots, registered or not: what survives a crash, shared with the sinks.
    disk: SharedDisk,
    /// An injected disk fault ([`MemLog::inject_fault`]).
    fault: FaultState,
}

impl Default for MemLog {
    fn default() -> Self {
        MemLog {
            data: Vec::new(),
            batches: Vec::new(),
            segments: vec![(0, 0)],
            epochs: Vec::new(),
            checkpoint: Vec::new(),
            start_offset: 0,
            flushed_bytes: 0,
            flush_count: 0,
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            retention_bytes: DEFAULT_RETENTION_BYTES,
            retention_ms: DEFAULT_RETENTION_MS,
            snapshots: BTreeMap::new(),
            disk: SharedDisk::default(),
            fault: FaultState::default(),
        }
    }
}

impl Clone for MemLog {
    /// A copy with its own snapshot "disk": sinks of the original do not write into the copy.
    fn clone(&self) -> Self {
        MemLog {
            data: self.data.clone(),
            batches: self.batches.clone(),
            segments: self.segments.clone(),
            epochs: self.epochs.clone(),
            checkpoint: self.checkpoint.clone(),
            start_offset: self.start_offset,
            flushed_bytes: self.flushed_bytes,
            flush_count: self.flush_count,
            segment_bytes: self.segment_bytes,
            retention_bytes: self.retention_bytes,
            retention_ms: self.retention_ms,
            snapshots: self.snapshots.clone(),
            disk: self.disk.deep_copy(),
            fault: self.fault.clone(),
        }
    }
}

impl MemLog {
    /// An empty log starting at offset 0, with Kafka's default segment size and retention.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same log rolling segments at `segment_bytes` (`metadata.log.segment.bytes`; tests use
    /// tiny values, as Kafka's `metadata.log.segment.min.bytes` allows). Panics on 0.
    pub fn with_segment_bytes(mut self, segment_bytes: u64) -> Self {
        assert!(segment_bytes > 0, "segment_bytes must be positive");
        self.segment_bytes = segment_bytes;
        self
    }

    /// The same log with `metadata.max.retention.bytes` and `metadata.max.retention.ms`
    /// (-1 = unbounded) for [`maybe_clean`](ReplicatedLog::maybe_clean).
    pub fn with_retention(mut self, retention_bytes: i64, retention_ms: i64) -> Self {
        self.retention_bytes = retention_bytes;
        self.retention_ms = retention_ms;
        self
    }

    /// Simulated crash and restart: every byte after the last flush is lost (Kafka
    /// `MockLog.reopen`), then the log is reopened as described on [`MemLog`].
    pub fn crash(&mut self) {
        self.data.truncate(self.flushed_bytes);
        self.recover();
    }

    /// Arms a disk fault: the next append (for [`DiskFault::WriteFails`]) or flush (for
    /// [`DiskFault::SyncFails`]) fails with [`LogError::Io`], and from then on every call fails,
    /// as the segment log behaves after a failed write or fsync (case C10). A crash ends it: the
    /// node restarts on a repaired disk, with only what was flushed before.
    pub fn inject_fault(&mut self, fault: DiskFault) {
        self.fault.arm(fault);
    }

    /// Damage at rest: flips a byte in the middle of the batch holding `offset` (which must be
    /// in the log), flushed or not, as bit rot or a stray write would.
    pub fn flip_byte_in_batch(&mut self, offset: i64) {
        let index = self.batches.partition_point(|b| b.last_offset < offset);
        let batch = self.batches.get(index).expect("a batch holds the offset");
        assert!(
            batch.base_offset <= offset,
            "offset {offset} is not in the log"
        );
        self.data[batch.position + batch.size_bytes / 2] ^= 0xFF;
    }

    /// Damage at rest: flips the byte at `position` of registered snapshot `id` (the copy a
    /// crash reloads stays intact).
    pub fn flip_byte_in_snapshot(&mut self, id: OffsetAndEpoch, position: u64) {
        let snapshot = self.snapshots.get_mut(&id).expect("a registered snapshot");
        let mut bytes = snapshot.bytes.to_vec();
        bytes[position as usize] ^= 0xFF;
        snapshot.bytes = Bytes::from(bytes);
    }

    /// True once an injected fault struck (until the next crash).
    pub fn disk_failed(&self) -> bool {
        self.fault.has_failed()
    }

    /// Simulated crash with a torn write: of the unflushed bytes, the first
    /// `rng_value % (unflushed_bytes + 1)` survive (a disk writes some of an unflushed tail, in
    /// order, and may stop mid-batch). Recovery keeps the whole, CRC-valid batches of what
    /// survived and drops the rest, like the segment log's recovery. Returns the number of
    /// bytes recovery dropped (a torn batch), so a simulation can log it.
    pub fn crash_torn(&mut self, rng_value: u64) -> usize {
        let unflushed = self.data.len() - self.flushed_bytes;
        let keep = self.flushed_bytes + (rng_value % (unflushed as u64 + 1)) as usize;
        self.data.truncate(keep);
        self.recover()
    }

    /// Calls to [`flush`](ReplicatedLog::flush) so far.
    pub fn flush_count(&self) -> u64 {
        self.flush_count
    }

    /// The `(epoch, start offset)` entries of the leader-epoch cache, oldest first.
    pub fn epoch_entries(&self) -> Vec<(i32, i64)> {
        self.epochs.clone()
    }

    /// Base offsets of the segments, oldest first; the last is the active one.
    pub fn segment_base_offsets(&self) -> Vec<i64> {
        self.segments.iter().map(|&(base, _)| base).collect()
    }

    /// Bytes of all segments (Kafka `UnifiedLog.size`).
    pub fn size_bytes(&self) -> u64 {
        self.data.len() as u64
    }

    /// Rebuilds the batch list, the segments and the epoch cache from `data`, truncating it
    /// after the longest valid prefix of whole batches, then reopens the log. Returns the bytes
    /// dropped.
    fn recover(&mut self) -> usize {
        let prefix = batch::valid_prefix(&self.data);
        let dropped = self.data.len() - prefix.bytes;
        let first_base = self.segments[0].0;
        // The first batch must start at the first segment's base; anything else is not our data.
        let starts_right = prefix
            .headers
            .first()
            .is_none_or(|h| h.base_offset == first_base);
        assert!(
            starts_right,
            "MemLog data does not start at its first segment's base offset {first_base}"
        );
        self.data.truncate(prefix.bytes);
        self.batches.clear();
        self.epochs.clear();
        let mut position = 0;
        for header in &prefix.headers {
            self.push_entry(header, position);
            position += header.size_bytes();
        }
        let found = std::mem::take(&mut self.epochs);
        let end = self.log_end_offset_of_batches().unwrap_or(first_base);
        self.epochs = loaded_epochs(&self.checkpoint, &found, end);
        // Segment files survive a crash (cut to what reached the disk); recovery deletes those
        // that no longer continue the log. The one starting at the log end offset stays.
        self.segments
            .retain(|&(base, position)| base <= end && position <= prefix.bytes);
        self.flushed_bytes = self.data.len();
        self.fault.reset();
        if !self.reopen() {
            // The cache the next open would load from the checkpoint written now, so that two
            // restarts in a row serve the same end epoch (the segment log's
            // `EpochCache::settled`): a checkpoint entry at the end can hide the batches'
            // epochs on the first load only. A fixed point after one pass.
            self.epochs = loaded_epochs(&self.epochs, &found, end);
            self.checkpoint = self.epochs.clone();
        }
        dropped
    }

    fn push_entry(&mut self, header: &BatchHeader, position: usize) {
        let epoch = header.partition_leader_epoch;
        if self.epochs.last().is_none_or(|&(latest, _)| epoch > latest) {
            assign_epoch(&mut self.epochs, epoch, header.base_offset);
        }
        self.batches.push(BatchEntry {
            base_offset: header.base_offset,
            last_offset: header.last_offset(),
            epoch,
            position,
            size_bytes: header.size_bytes(),
        });
    }

    fn log_end_offset_of_batches(&self) -> Option<i64> {
        self.batches.last().map(|b| b.last_offset + 1)
    }

    fn log_end_offset(&self) -> i64 {
        self.log_end_offset_of_batches()
            .unwrap_or_else(|| self.segments.last().expect("a segment").0)
    }

    fn latest_epoch(&self) -> Option<i32> {
        self.epochs.last().map(|&(epoch, _)| epoch)
    }

    /// The lowest epoch an append may carry: the epoch of the last batch held (even below the
    /// log start offset), or the cache's, or that of the snapshot an empty log ends at.
    fn append_epoch_floor(&self) -> Option<i32> {
        let held = self.batches.last().map(|b| b.epoch);
        match held.max(self.latest_epoch()) {
            Some(epoch) => Some(epoch),
            None => self
                .latest_snapshot_id()
                .filter(|id| id.offset == self.log_end_offset())
                .map(|id| id.epoch),
        }
    }

    fn append(
        &mut self,
        records: &[u8],
        leader_epoch: Option<i32>,
    ) -> Result<LogAppendInfo, LogError> {
        self.fault.check()?;
        let headers = validate_append(
            records,
            leader_epoch,
            self.log_end_offset(),
            self.append_epoch_floor(),
        )?;
        self.fault.on_write()?;
        let mut at = 0;
        for header in &headers {
            let size = header.size_bytes();
            let &(active_base, active_position) = self.segments.last().expect("a segment");
            let active_size = (self.data.len() - active_position) as u64;
            // Kafka `LogSegment.shouldRoll`, as the segment log applies it per batch.
            if active_size > 0
                && (active_size + size as u64 > self.segment_bytes
                    || header.last_offset() - active_base > i32::MAX as i64)
            {
                self.segments.push((header.base_offset, self.data.len()));
            }
            let position = self.data.len();
            self.data.extend_from_slice(&records[at..at + size]);
            self.push_entry(header, position);
            at += size;
        }
        let first = headers.first().expect("validated append has a batch");
        let last = headers.last().expect("validated append has a batch");
        Ok(LogAppendInfo {
            first_offset: first.base_offset,
            last_offset: last.last_offset(),
        })
    }
}

/// Kafka `LeaderEpochFileCache.assign`: entries contradicting the new one (epoch `>=` or start
/// `>=`, from the latest back) go first.
/// The epoch cache Kafka's `LogLoader` builds on open: the checkpoint's entries, then each
/// epoch of the batches (`found`: first batch of each newer epoch) above the latest one, then
/// nothing at or past the end. Like the segment log, checkpoint entries starting past the end
/// go before the batches' epochs are added (they name data the log does not have and would
/// hide the epochs of the batches that remain); an entry exactly at the end stays until then.
fn loaded_epochs(checkpoint: &[(i32, i64)], found: &[(i32, i64)], end: i64) -> Vec<(i32, i64)> {
    let mut epochs: Vec<(i32, i64)> = checkpoint
        .iter()
        .copied()
        .filter(|&(_, start)| start <= end)
        .collect();
    for &(epoch, start) in found {
        if epochs.last().is_none_or(|&(latest, _)| epoch > latest) {
            assign_epoch(&mut epochs, epoch, start);
        }
    }
    epochs.retain(|&(_, start)| start < end);
    epochs
}

fn assign_epoch(epochs: &mut Vec<(i32, i64)>, epoch: i32, start_offset: i64) {
    if epochs
        .last()
        .is_some_and(|&(e, s)| e == epoch && s <= start_offset)
    {
        return;
    }
    while epochs
        .last()
        .is_some_and(|&(e, s)| e >= epoch || s >= start_offset)
    {
        epochs.pop();
    }
    epochs.push((epoch, start_offset));
}

/// Checks an append the way both log implementations must, and returns the headers of the
/// batches to append (all of `records`, except an incomplete trailing batch on the follower
/// path, which Kafka's `appendAsFollower` ignores).
///
/// Checks, in order: at least one complete batch; the first base offset equals the LEO
/// ([`LogError::UnexpectedAppendOffset`]); each later batch starts where the previous ended
/// ([`LogError::OffsetsOutOfOrder`]); per batch, the leader epoch (leader path: equal to
/// `leader_epoch`; both paths: `>= 0` and not below the previous batch's or the log's latest
/// epoch), then CRC and Java's KRaft record rules ([`batch::decode_batch`]). The append is
/// atomic: nothing is written unless every batch passes.
pub(crate) fn validate_append(
    records: &[u8],
    leader_epoch: Option<i32>,
    log_end_offset: i64,
    latest_epoch: Option<i32>,
) -> Result<Vec<BatchHeader>, LogError> {
    let corrupt = |offset: i64, reason: String| LogError::CorruptBatch { offset, reason };
    let mut headers: Vec<BatchHeader> = Vec::new();
    let mut iter = batch::batches(records);
    for item in iter.by_ref() {
        let (header, bytes) = item.map_err(|e| {
            let offset = headers.last().map_or(log_end_offset, |h| h.next_offset());
            corrupt(offset, e.to_string())
        })?;
        match headers.last() {
            None if header.base_offset != log_end_offset => {
                return Err(LogError::UnexpectedAppendOffset {
                    first_offset: header.base_offset,
                    log_end_offset,
                });
            }
            Some(prev) if header.base_offset != prev.next_offset() => {
                return Err(LogError::OffsetsOutOfOrder {
                    expected: prev.next_offset(),
                    found: header.base_offset,
                });
            }
            _ => {}
        }
        let epoch = header.partition_leader_epoch;
        if let Some(leader_epoch) = leader_epoch {
            if epoch != leader_epoch {
                return Err(corrupt(
                    header.base_offset,
                    format!("partition leader epoch {epoch} in an append by the leader of epoch {leader_epoch}"),
                ));
            }
        }
        let floor = headers
            .last()
            .map(|h| h.partition_leader_epoch)
            .or(latest_epoch)
            .unwrap_or(0);
        if epoch < floor {
            return Err(corrupt(
                header.base_offset,
                format!("partition leader epoch {epoch} is below the log's latest epoch {floor}"),
            ));
        }
        batch::decode_batch(bytes).map_err(|e| corrupt(header.base_offset, e.to_string()))?;
        headers.push(header);
    }
    let complete = iter.position();
    if headers.is_empty() {
        return Err(corrupt(
            log_end_offset,
            format!(
                "append of {} bytes holds no complete record batch",
                records.len()
            ),
        ));
    }
    // The leader builds its own batches: a partial one is a bug, not a short read.
    if leader_epoch.is_some() && complete != records.len() {
        return Err(corrupt(
            headers.last().expect("non-empty").next_offset(),
            format!(
                "{} trailing bytes after the last complete batch",
                records.len() - complete
            ),
        ));
    }
    Ok(headers)
}

impl ReplicatedLog for MemLog {
    fn end_offset(&self) -> OffsetAndEpoch {
        OffsetAndEpoch::new(self.log_end_offset(), self.last_fetched_epoch())
    }

    fn start_offset(&self) -> i64 {
        self.start_offset
    }

    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
        // LeaderEpochFileCache.endOffsetFor, with KafkaMetadataLog's fallback to (LEO, last
        // fetched epoch) when the cache answers UNDEFINED, and its substitution of the earliest
        // snapshot when the answer is the log start of an epoch below every known one.
        let leo = self.log_end_offset();
        let undefined = OffsetAndEpoch::new(leo, self.last_fetched_epoch());
        if epoch == -1 {
            return undefined;
        }
        let found = if self.latest_epoch() == Some(epoch) {
            OffsetAndEpoch::new(leo, epoch)
        } else {
            let Some(&(_, higher_start)) = self.epochs.iter().find(|&&(e, _)| e > epoch) else {
                return undefined;
            };
            match self.epochs.iter().rev().find(|&&(e, _)| e <= epoch) {
                // Below every known epoch: Kafka answers the requested epoch itself.
                None => OffsetAndEpoch::new(higher_start, epoch),
                Some(&(floor_epoch, _)) => OffsetAndEpoch::new(higher_start, floor_epoch),
            }
        };
        match self.earliest_snapshot_id() {
            Some(snapshot) if snapshot.offset == found.offset && found.epoch == epoch => snapshot,
            _ => found,
        }
    }

    fn append_as_leader(&mut self, batches: &[u8], epoch: i32) -> Result<LogAppendInfo, LogError> {
        self.append(batches, Some(epoch))
    }

    fn append_as_follower(&mut self, batches: &[u8]) -> Result<LogAppendInfo, LogError> {
        self.append(batches, None)
    }

    fn read(&self, start_offset: i64, max_bytes: usize) -> Result<Bytes, LogError> {
        self.fault.check()?;
        let end = self.log_end_offset();
        if start_offset < self.start_offset || start_offset > end {
            return Err(LogError::OffsetOutOfRange {
                offset: start_offset,
                start: self.start_offset,
                end,
            });
        }
        let first = self
            .batches
            .partition_point(|b| b.last_offset < start_offset);
        let Some(first_batch) = self.batches.get(first) else {
            return Ok(Bytes::new());
        };
        let mut taken = first_batch.size_bytes;
        for batch in &self.batches[first + 1..] {
            if taken + batch.size_bytes > max_bytes {
                break;
            }
            taken += batch.size_bytes;
        }
        let from = first_batch.position;
        // As the segment log: a batch whose CRC fails is never served (case C10).
        let mut at = from;
        for batch in &self.batches[first..] {
            if at >= from + taken {
                break;
            }
            if let Err(e) = batch::verify_crc(&self.data[at..at + batch.size_bytes]) {
                return Err(LogError::CorruptBatch {
                    offset: batch.base_offset,
                    reason: format!("in MemLog (simulated disk) at position {at}: {e}"),
                });
            }
            at += batch.size_bytes;
        }
        Ok(Bytes::copy_from_slice(&self.data[from..from + taken]))
    }

    fn truncate_to(&mut self, offset: i64) -> Result<(), LogError> {
        self.fault.check()?;
        let end = self.log_end_offset();
        let out_of_range = LogError::OffsetOutOfRange {
            offset,
            start: self.start_offset,
            end,
        };
        if offset < self.start_offset {
            return Err(out_of_range);
        }
        if offset >= end {
            return Ok(());
        }
        let first_removed = self.batches.partition_point(|b| b.last_offset < offset);
        let removed = self.batches[first_removed];
        if removed.base_offset < self.start_offset {
            // The log start sits inside this batch: removing it would end the log before it starts.
            return Err(out_of_range);
        }
        self.data.truncate(removed.position);
        self.batches.truncate(first_removed);
        // The segment holding the removed batch stays (maybe empty); later ones go.
        self.segments
            .retain(|&(base, _)| base <= removed.base_offset);
        // Kafka truncateFromEnd, applied at the resulting end offset (a batch boundary).
        self.epochs
            .retain(|&(_, start)| start < removed.base_offset);
        self.checkpoint = self.epochs.clone();
        self.flushed_bytes = self.flushed_bytes.min(self.data.len());
        Ok(())
    }

    fn flush(&mut self) -> Result<(), LogError> {
        self.fault.on_sync()?;
        self.flushed_bytes = self.data.len();
        self.checkpoint = self.epochs.clone();
        self.flush_count += 1;
        Ok(())
    }

    fn flushed_end_offset(&self) -> i64 {
        let durable = self
            .batches
            .partition_point(|b| b.position + b.size_bytes <= self.flushed_bytes);
        if durable == 0 {
            self.segments[0].0
        } else {
            self.batches[durable - 1].last_offset + 1
        }
    }

    fn snapshot_ids(&self) -> Vec<OffsetAndEpoch> {
        self.listed_snapshot_ids().collect()
    }

    fn snapshot_size_bytes(&self, id: OffsetAndEpoch) -> Result<u64, LogError> {
        Ok(self.snapshot(id)?.bytes.len() as u64)
    }

    fn read_snapshot(
        &self,
        id: OffsetAndEpoch,
        position: u64,
        max_bytes: usize,
    ) -> Result<Bytes, LogError> {
        let bytes = &self.snapshot(id)?.bytes;
        let from = (position.min(bytes.len() as u64)) as usize;
        let to = from + (bytes.len() - from).min(max_bytes);
        // As the segment log: the batches the chunk overlaps must pass their CRC check.
        let mut at = 0;
        for item in batch::batches(bytes) {
            if at >= to {
                break;
            }
            let corrupt = |offset, e: &dyn std::fmt::Display| LogError::CorruptBatch {
                offset,
                reason: format!(
                    "in MemLog snapshot {}-{} at position {at}: {e}",
                    id.offset, id.epoch
                ),
            };
            let (header, whole) = item.map_err(|e| corrupt(-1, &e))?;
            if at + whole.len() > from {
                batch::verify_crc(whole).map_err(|e| corrupt(header.base_offset, &e))?;
            }
            at += whole.len();
        }
        Ok(bytes.slice(from..to))
    }

    fn create_snapshot(&self, id: OffsetAndEpoch) -> Result<Box<dyn SnapshotSink>, LogError> {
        self.create_sink(id)
    }

    fn register_snapshot(&mut self, id: OffsetAndEpoch) -> Result<(), LogError> {
        self.register(id)
    }

    fn truncate_to_latest_snapshot(&mut self) -> Result<bool, LogError> {
        self.fault.check()?;
        Ok(self.truncate_to_latest_snapshot_inner())
    }

    fn delete_before_snapshot(&mut self, id: OffsetAndEpoch) -> Result<(), LogError> {
        self.fault.check()?;
        self.snapshot(id)?;
        let end = self.log_end_offset();
        if id.offset > end {
            return Err(LogError::OffsetOutOfRange {
                offset: id.offset,
                start: self.start_offset,
                end,
            });
        }
        self.delete_before(id, None);
        Ok(())
    }

    fn maybe_clean(&mut self, high_watermark: i64, now_ms: u64) -> Result<bool, LogError> {
        self.fault.check()?;
        Ok(self.clean(high_watermark, now_ms))
    }
}
