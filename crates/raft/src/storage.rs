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
        /// The file or directory involved.
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
}
