//! The storage seams of the Raft core: the replicated log and the election-state store.
//!
//! The core never touches files. It calls these traits synchronously from its single thread, the
//! way Kafka's `KafkaRaftClient` calls `ReplicatedLog` and `QuorumStateStore`. Durability is
//! explicit: nothing appended is durable until [`ReplicatedLog::flush`] returns, and the core
//! flushes before it acknowledges anything that depends on the data (a Fetch offset sent to the
//! leader, the leader counting its own end offset toward the high watermark).
//!
//! Two implementations exist: `kraftwerk_log` (Kafka segment files + RocksDB index) and
//! [`crate::testing::MemLog`] (in memory, loses unflushed data on a simulated crash). Both pass
//! the same conformance suite, [`crate::testing::log_suite`].

use bytes::Bytes;
use uuid::Uuid;

/// A log position and the leader epoch that wrote it.
///
/// Ordered by epoch first, then offset, as Kafka's `OffsetAndEpoch.compareTo`: this is the
/// "more up-to-date log" order used by elections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct OffsetAndEpoch {
    /// Leader epoch.
    pub epoch: i32,
    /// Log offset (meaning depends on use: an exclusive end offset in most places).
    pub offset: i64,
}

impl OffsetAndEpoch {
    /// Builds a value from `(offset, epoch)`, the order Kafka's constructor uses.
    pub fn new(offset: i64, epoch: i32) -> Self {
        Self { epoch, offset }
    }
}

/// Offsets covered by one append.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogAppendInfo {
    /// Base offset of the first appended batch.
    pub first_offset: i64,
    /// Last offset of the last appended batch (inclusive).
    pub last_offset: i64,
}

/// Why a storage operation failed. Any error from a write, truncate or flush is fatal to the
/// node: it must stop serving (Kafka: `KAFKA-10778`, `KAFKA-14644`).
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// An I/O operation failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory involved; for a segment write or fsync also the position and
        /// the first log offset that may not be on disk.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A batch failed validation (CRC, framing, Java's KRaft record rules).
    #[error("corrupt record batch at offset {offset}: {reason}")]
    CorruptBatch {
        /// Base offset of the offending batch (or the expected offset when unknown).
        offset: i64,
        /// What was wrong.
        reason: String,
    },
    /// An append did not start at the log end offset (Kafka `UnexpectedAppendOffsetException`).
    #[error("append starts at offset {first_offset} but the log end offset is {log_end_offset}")]
    UnexpectedAppendOffset {
        /// Base offset of the first batch offered.
        first_offset: i64,
        /// Current log end offset.
        log_end_offset: i64,
    },
    /// Batches in one append were not contiguous (Kafka `OffsetsOutOfOrderException`).
    #[error("offsets out of order: expected {expected}, found {found}")]
    OffsetsOutOfOrder {
        /// The offset the next batch had to start at.
        expected: i64,
        /// The base offset it had.
        found: i64,
    },
    /// The requested offset is outside `[log_start_offset, log_end_offset]`.
    #[error("offset {offset} out of range [{start}, {end}]")]
    OffsetOutOfRange {
        /// Offset asked for.
        offset: i64,
        /// Log start offset.
        start: i64,
        /// Log end offset.
        end: i64,
    },
    /// The on-disk state is inconsistent in a way recovery cannot repair.
    #[error("inconsistent log state: {0}")]
    Inconsistent(String),
    /// No complete snapshot with this id (`SNAPSHOT_NOT_FOUND` on the wire).
    #[error("snapshot {offset}-{epoch} not found")]
    SnapshotNotFound {
        /// Exclusive end offset of the snapshot id.
        offset: i64,
        /// Epoch of the snapshot id.
        epoch: i32,
    },
    /// A snapshot failed validation (missing header or footer, bad CRC, torn).
    #[error("invalid snapshot {offset}-{epoch}: {reason}")]
    InvalidSnapshot {
        /// Exclusive end offset of the snapshot id.
        offset: i64,
        /// Epoch of the snapshot id.
        epoch: i32,
        /// What was wrong.
        reason: String,
    },
}

/// Writes one snapshot (`<20-digit end offset>-<10-digit epoch>.checkpoint`, KIP-630), fetched
/// from the leader or generated from this node's image. It may be moved to another thread so a
/// large snapshot never blocks the Raft loop, and holds at most one record batch in memory
/// (case C09). Dropping it without [`finish`](Self::finish), or a failed `finish`, discards the
/// partial snapshot; so does a crash of the log (the sink then fails in `finish`).
pub trait SnapshotSink: Send {
    /// Appends bytes (whole batches or arbitrary chunks, in order). Only I/O errors are
    /// reported here; content problems wait for `finish`.
    fn append(&mut self, bytes: &[u8]) -> Result<(), LogError>;
    /// Bytes appended so far (all of them, valid or not: FetchSnapshot's `Position`).
    fn position(&self) -> u64;
    /// Validates the content (first batch a control batch whose first record is a
    /// SnapshotHeader, every batch whole and CRC-valid with offsets from 0 and contiguous, last
    /// batch a control batch ending with a SnapshotFooter, nothing after it), makes it durable
    /// and puts it in place atomically (`.checkpoint.part` → fsync → read-only → rename →
    /// directory fsync). Afterwards the log must be told with
    /// [`ReplicatedLog::register_snapshot`]. Returns the size in bytes.
    ///
    /// Errors: [`LogError::InvalidSnapshot`] for bad content (the peer's bytes, not a local
    /// storage failure: drop the download and fetch again); [`LogError::Inconsistent`] if a
    /// complete snapshot with this id appeared meanwhile; [`LogError::Io`].
    fn finish(self: Box<Self>) -> Result<u64, LogError>;
}

/// The replicated metadata log (`__cluster_metadata-0`), as Kafka's `ReplicatedLog`.
///
/// Offsets are Kafka log offsets. Appends are whole record batches (v2) and reads return whole
/// batches, starting at the batch that contains the requested offset.
pub trait ReplicatedLog {
    /// Exclusive log end offset (LEO) and the epoch of the last batch. For a log with no batches
    /// the epoch is that of the latest snapshot, or 0 (Kafka `lastFetchedEpoch`).
    fn end_offset(&self) -> OffsetAndEpoch;

    /// Offset of the first record still held (0 until snapshots move it).
    fn start_offset(&self) -> i64;

    /// Kafka `endOffsetForEpoch`: the largest epoch `e <= epoch` present in the log and the end
    /// offset of `e` (the start offset of the next epoch, or the LEO if `e` is the latest).
    /// Follows `LeaderEpochFileCache.endOffsetFor` + `KafkaMetadataLog.endOffsetForEpoch`,
    /// including their handling of epochs below the first known one.
    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch;

    /// Appends batches written by this node as leader of `epoch`. Every batch's base offset must
    /// be the current LEO (contiguous) and its partition leader epoch must equal `epoch`.
    /// Not durable until [`flush`](Self::flush).
    fn append_as_leader(&mut self, batches: &[u8], epoch: i32) -> Result<LogAppendInfo, LogError>;

    /// Appends batches received from the leader. The first base offset must equal the LEO,
    /// batches must be contiguous and pass CRC and Kafka's KRaft record checks.
    /// Not durable until [`flush`](Self::flush).
    fn append_as_follower(&mut self, batches: &[u8]) -> Result<LogAppendInfo, LogError>;

    /// Reads whole batches starting at the batch containing `start_offset`, at most `max_bytes`
    /// but always at least one batch if any exists at or after `start_offset`. Returns empty
    /// bytes when `start_offset` equals the LEO.
    fn read(&self, start_offset: i64, max_bytes: usize) -> Result<Bytes, LogError>;

    /// Removes every record at offset `>= offset`. A batch that straddles `offset` is removed
    /// whole, so afterwards the LEO is `<= offset` and on a batch boundary.
    fn truncate_to(&mut self, offset: i64) -> Result<(), LogError>;

    /// Makes everything appended so far durable (fsync of data and of whatever the index needs).
    fn flush(&mut self) -> Result<(), LogError>;

    /// Exclusive end offset of the durable prefix of the log.
    fn flushed_end_offset(&self) -> i64;

    // ----- snapshots (KIP-630) ------------------------------------------------------------
    //
    // A snapshot id is an `OffsetAndEpoch` whose offset is the EXCLUSIVE end offset of the
    // records it replaces and whose epoch is the epoch of the batch holding its last record.
    // Ids fall on batch boundaries. Ids are ordered as `OffsetAndEpoch` is (epoch first). The
    // bootstrap snapshot `0-0` (dynamic quorums) is never listed, cleaned or counted here, but
    // `snapshot_size_bytes`/`read_snapshot` serve it while its file exists; it is deleted with
    // the other snapshots below a moved log start, as Kafka deletes it.
    //
    // Log start offset (Kafka `UnifiedLog.logStartOffset`), as both logs implement it:
    // - it moves only to a snapshot id: `delete_before_snapshot` (and `maybe_clean`) raise it to
    //   the snapshot's end offset, `truncate_to_latest_snapshot` sets it there;
    // - it is NOT persisted: after a restart it is the base offset of the first segment still on
    //   disk, which can be LOWER than before the restart (segments are deleted whole, so records
    //   between that base and the old start come back readable); it never goes above a snapshot
    //   end offset, and when it is above 0 a snapshot ending at or after it exists (opening
    //   refuses the directory otherwise, Kafka's "Inconsistent snapshot state", case C06);
    // - reads and `truncate_to` below it fail with `LogError::OffsetOutOfRange`, as does a
    //   `truncate_to` that would remove a batch straddling it;
    // - `end_offset` of a log with no epoch in its cache (empty after `truncate_to_latest_snapshot`,
    //   or truncated to its start) is `(LEO, epoch of the latest snapshot)` when the log starts
    //   and ends at that snapshot, else `(LEO, 0)` (Kafka `lastFetchedEpoch`);
    // - `end_offset_for_epoch` answers an epoch below every epoch of the log with the earliest
    //   snapshot's id when the cache's answer is that snapshot's end offset (Kafka
    //   `KafkaMetadataLog.endOffsetForEpoch`). After the log start moved, the cache's first
    //   entry starts at the log start (Kafka `truncateFromStart`); after a restart it is what
    //   Kafka's `LogLoader` rebuilds from `leader-epoch-checkpoint`.

    /// Complete, registered snapshots, ascending (the bootstrap snapshot `0-0` excluded).
    fn snapshot_ids(&self) -> Vec<OffsetAndEpoch>;

    /// Latest complete snapshot.
    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshot_ids().last().copied()
    }

    /// Earliest complete snapshot.
    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshot_ids().first().copied()
    }

    /// Size in bytes of a registered snapshot ([`LogError::SnapshotNotFound`] if absent).
    fn snapshot_size_bytes(&self, id: OffsetAndEpoch) -> Result<u64, LogError>;

    /// Reads `[position, position + max_bytes)` of a registered snapshot, clipped at its end:
    /// empty when `position >= size` (the caller answers `POSITION_OUT_OF_RANGE` itself).
    /// FetchSnapshot serves these raw bytes; chunks need not fall on batch boundaries.
    /// Errors: [`LogError::SnapshotNotFound`], [`LogError::Io`].
    fn read_snapshot(
        &self,
        id: OffsetAndEpoch,
        position: u64,
        max_bytes: usize,
    ) -> Result<Bytes, LogError>;

    /// Starts a new snapshot with this id (its `.checkpoint.part` file). Fails with
    /// [`LogError::Inconsistent`] if a complete snapshot with this id exists (registered, or
    /// finished and not yet registered), with [`LogError::InvalidSnapshot`] for a negative id.
    /// It does not check the id against the log (the caller does: at most the high watermark,
    /// on a batch boundary, case C08). Several sinks may be open at once, on other threads.
    fn create_snapshot(&self, id: OffsetAndEpoch) -> Result<Box<dyn SnapshotSink>, LogError>;

    /// Adds a snapshot finished by a [`SnapshotSink`] to the catalog; idempotent. A complete
    /// file this log did not write in this incarnation is validated first
    /// ([`LogError::InvalidSnapshot`]). [`LogError::SnapshotNotFound`] if there is none.
    /// A finished snapshot is durable even unregistered: after a crash it is listed.
    fn register_snapshot(&mut self, id: OffsetAndEpoch) -> Result<(), LogError>;

    /// Kafka `truncateToLatestSnapshot`: if the latest snapshot is ahead of the log (its epoch
    /// is newer than the latest epoch of the log's epoch cache, 0 when the cache is empty, or the
    /// same epoch with an end offset beyond the LEO), removes every batch and every older
    /// snapshot, so the log is empty and starts, and ends, at the snapshot's end offset
    /// (`end_offset()` = the snapshot id). Durable when it returns. Returns true if it truncated
    /// (as in Kafka, also when an empty log already sits at that snapshot). Opening a log runs
    /// it too, finishing a download interrupted by a crash.
    fn truncate_to_latest_snapshot(&mut self) -> Result<bool, LogError>;

    /// Kafka `deleteBeforeSnapshot`: moves the log start offset to the end offset of snapshot
    /// `id`, deletes segments wholly below it and every older snapshot. Durable when it returns.
    /// Nothing happens if `id.offset` is not above the log start offset. The caller keeps
    /// `id.offset` at most the high watermark (Kafka throws above it).
    /// Errors: [`LogError::SnapshotNotFound`] if `id` is not registered,
    /// [`LogError::OffsetOutOfRange`] if `id.offset` is beyond the log end offset.
    fn delete_before_snapshot(&mut self, id: OffsetAndEpoch) -> Result<(), LogError>;

    /// Kafka `KafkaMetadataLog.maybeClean` (run every 60 s by Kafka's `KafkaRaftClient`): while
    /// there are at least two snapshots and the log (every segment, including those below the
    /// log start offset) plus the snapshots exceed `metadata.max.retention.bytes`, or the oldest
    /// snapshot's `LastContainedLogTimestamp` is more than `metadata.max.retention.ms` before
    /// `now_ms`, deletes everything before the next snapshot, provided that snapshot's end
    /// offset is at most `high_watermark` (by size first, then by time; -1 disables a limit).
    /// The latest snapshot is always kept; the log start offset only ever moves to a snapshot
    /// id (case C06). Returns true if anything was deleted.
    fn maybe_clean(&mut self, high_watermark: i64, now_ms: u64) -> Result<bool, LogError>;
}

/// The persisted election state (`quorum-state`), as Kafka's `ElectionState`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ElectionState {
    /// Current quorum epoch.
    pub epoch: i32,
    /// Leader of `epoch`, if known.
    pub leader_id: Option<i32>,
    /// Candidate this node voted for in `epoch`, if any.
    pub voted_id: Option<i32>,
    /// Directory id of the candidate voted for (kraft.version 1); `None` if absent or zero.
    pub voted_directory_id: Option<Uuid>,
    /// Voter ids, written as `currentVoters` in `data_version` 0 files (kraft.version 0).
    pub voters: Vec<i32>,
}

/// Durable storage for [`ElectionState`]. `write` must be durable when it returns
/// (Kafka `FileQuorumStateStore`: write `.tmp`, fsync, rename, fsync directory).
pub trait QuorumStateStore {
    /// Reads the stored state, `None` if nothing was ever written.
    fn read(&self) -> Result<Option<ElectionState>, LogError>;
    /// Replaces the stored state durably.
    fn write(&mut self, state: &ElectionState) -> Result<(), LogError>;
    /// The kraft.version in force changed: later writes use its `data_version` (Kafka
    /// `QuorumState` writes the file at the current kraft.version: 0 → data_version 0 with
    /// `currentVoters`, 1 → data_version 1 with `votedDirectoryId`). The core calls it before
    /// its first write and whenever the level changes; stores without versions ignore it.
    fn set_kraft_version(&mut self, kraft_version: i16) {
        let _ = kraft_version;
    }
}
