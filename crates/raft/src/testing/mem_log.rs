//! [`MemLog`]: the in-memory [`ReplicatedLog`] with crash semantics (Kafka's `MockLog`).

use bytes::Bytes;
use kraftwerk_records::batch::{self, BatchHeader};

use crate::storage::{LogAppendInfo, LogError, OffsetAndEpoch, ReplicatedLog};

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
/// The batches are kept as one byte buffer laid out exactly as in a segment file, so a crash can
/// tear it at any byte and recovery runs the same scan the segment log runs
/// ([`kraftwerk_records::batch::valid_prefix`]).
///
/// Crash semantics follow Kafka's `MockLog` (`firstUnflushedOffset`, `reopen`):
/// - [`crash`](Self::crash) drops every byte appended after the last [`flush`](ReplicatedLog::flush);
/// - [`crash_torn`](Self::crash_torn) keeps an arbitrary prefix of the unflushed bytes, as a disk
///   may have written some of them, possibly ending mid-batch; recovery drops the torn batch;
/// - [`truncate_to`](ReplicatedLog::truncate_to) is durable at once (the segment log fsyncs it).
///
/// After a crash everything that survived recovery counts as flushed (the segment log fsyncs the
/// recovered tail on open).
///
/// The leader-epoch cache follows Kafka's `LeaderEpochFileCache` and
/// `KafkaMetadataLog.endOffsetForEpoch`; it is written here as plain list scans so that it can
/// serve as an independent reference for the segment log's implementation in the conformance
/// suite.
#[derive(Clone, Debug, Default)]
pub struct MemLog {
    /// Every batch from the log start offset, back to back.
    data: Vec<u8>,
    /// One entry per batch in `data`, in offset order.
    batches: Vec<BatchEntry>,
    /// `(epoch, start offset)` in increasing order of both (Kafka `EpochEntry`).
    epochs: Vec<(i32, i64)>,
    /// Offset of the first batch; where the log starts when empty.
    start_offset: i64,
    /// Bytes of `data` that are durable.
    flushed_bytes: usize,
    /// Calls to `flush` since creation (for tests asserting that a flush happened).
    flush_count: u64,
}

impl MemLog {
    /// An empty log starting at offset 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Simulated crash and restart: every byte after the last flush is lost (Kafka
    /// `MockLog.reopen`). The epoch cache is rebuilt from the surviving batches.
    pub fn crash(&mut self) {
        self.data.truncate(self.flushed_bytes);
        self.recover();
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

    /// Rebuilds the batch list and the epoch cache from `data`, truncating it after the longest
    /// valid prefix of whole batches. Returns the bytes dropped.
    fn recover(&mut self) -> usize {
        let prefix = batch::valid_prefix(&self.data);
        let dropped = self.data.len() - prefix.bytes;
        // The first batch must start at the log start offset; anything else is not our data.
        let starts_right = prefix
            .headers
            .first()
            .is_none_or(|h| h.base_offset == self.start_offset);
        assert!(
            starts_right,
            "MemLog data does not start at the log start offset {}",
            self.start_offset
        );
        self.data.truncate(prefix.bytes);
        self.batches.clear();
        self.epochs.clear();
        let mut position = 0;
        for header in &prefix.headers {
            self.push_entry(header, position);
            position += header.size_bytes();
        }
        self.flushed_bytes = self.data.len();
        dropped
    }

    fn push_entry(&mut self, header: &BatchHeader, position: usize) {
        let epoch = header.partition_leader_epoch;
        // Kafka `LeaderEpochFileCache.assign`: a new entry only when the epoch changes; appends
        // reject decreasing epochs, so the non-monotonic truncation never triggers here.
        if self.epochs.last().is_none_or(|&(latest, _)| epoch > latest) {
            self.epochs.push((epoch, header.base_offset));
        }
        self.batches.push(BatchEntry {
            base_offset: header.base_offset,
            last_offset: header.last_offset(),
            epoch,
            position,
            size_bytes: header.size_bytes(),
        });
    }

    fn log_end_offset(&self) -> i64 {
        self.batches
            .last()
            .map_or(self.start_offset, |b| b.last_offset + 1)
    }

    fn latest_epoch(&self) -> Option<i32> {
        self.epochs.last().map(|&(epoch, _)| epoch)
    }

    fn append(
        &mut self,
        records: &[u8],
        leader_epoch: Option<i32>,
    ) -> Result<LogAppendInfo, LogError> {
        let headers = validate_append(
            records,
            leader_epoch,
            self.log_end_offset(),
            self.latest_epoch(),
        )?;
        let mut position = self.data.len();
        let total: usize = headers.iter().map(|h| h.size_bytes()).sum();
        self.data.extend_from_slice(&records[..total]);
        for header in &headers {
            self.push_entry(header, position);
            position += header.size_bytes();
        }
        let first = headers.first().expect("validated append has a batch");
        let last = headers.last().expect("validated append has a batch");
        Ok(LogAppendInfo {
            first_offset: first.base_offset,
            last_offset: last.last_offset(),
        })
    }
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
        OffsetAndEpoch::new(self.log_end_offset(), self.latest_epoch().unwrap_or(0))
    }

    fn start_offset(&self) -> i64 {
        self.start_offset
    }

    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
        // LeaderEpochFileCache.endOffsetFor, with UnifiedLog/KafkaMetadataLog's fallback to
        // (LEO, last fetched epoch) when the cache answers UNDEFINED.
        let leo = self.log_end_offset();
        let undefined = OffsetAndEpoch::new(leo, self.latest_epoch().unwrap_or(0));
        if epoch == -1 {
            return undefined;
        }
        if self.latest_epoch() == Some(epoch) {
            return OffsetAndEpoch::new(leo, epoch);
        }
        let Some(&(_, higher_start)) = self.epochs.iter().find(|&&(e, _)| e > epoch) else {
            return undefined;
        };
        match self.epochs.iter().rev().find(|&&(e, _)| e <= epoch) {
            // Below every known epoch: Kafka answers the requested epoch itself.
            None => OffsetAndEpoch::new(higher_start, epoch),
            Some(&(floor_epoch, _)) => OffsetAndEpoch::new(higher_start, floor_epoch),
        }
    }

    fn append_as_leader(&mut self, batches: &[u8], epoch: i32) -> Result<LogAppendInfo, LogError> {
        self.append(batches, Some(epoch))
    }

    fn append_as_follower(&mut self, batches: &[u8]) -> Result<LogAppendInfo, LogError> {
        self.append(batches, None)
    }

    fn read(&self, start_offset: i64, max_bytes: usize) -> Result<Bytes, LogError> {
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
        Ok(Bytes::copy_from_slice(&self.data[from..from + taken]))
    }

    fn truncate_to(&mut self, offset: i64) -> Result<(), LogError> {
        let end = self.log_end_offset();
        if offset < self.start_offset {
            return Err(LogError::OffsetOutOfRange {
                offset,
                start: self.start_offset,
                end,
            });
        }
        if offset >= end {
            return Ok(());
        }
        let first_removed = self.batches.partition_point(|b| b.last_offset < offset);
        let removed = self.batches[first_removed];
        self.data.truncate(removed.position);
        self.batches.truncate(first_removed);
        // Kafka truncateFromEnd, applied at the resulting end offset (a batch boundary) so the
        // cache never names an epoch without a batch.
        self.epochs
            .retain(|&(_, start)| start < removed.base_offset);
        self.flushed_bytes = self.flushed_bytes.min(self.data.len());
        debug_assert_eq!(self.batches.last().map(|b| b.epoch), self.latest_epoch());
        Ok(())
    }

    fn flush(&mut self) -> Result<(), LogError> {
        self.flushed_bytes = self.data.len();
        self.flush_count += 1;
        Ok(())
    }

    fn flushed_end_offset(&self) -> i64 {
        let durable = self
            .batches
            .partition_point(|b| b.position + b.size_bytes <= self.flushed_bytes);
        if durable == 0 {
            self.start_offset
        } else {
            self.batches[durable - 1].last_offset + 1
        }
    }
}
