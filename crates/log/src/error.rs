//! Errors of the storage layer, and their mapping to [`kraftwerk_raft::LogError`] at the trait
//! boundary.

use std::io;
use std::path::{Path, PathBuf};

use kraftwerk_raft::LogError;

/// Why opening, writing or recovering on-disk state failed.
///
/// Every error from a write, truncate or flush is fatal to the node (it must stop serving),
/// as in Kafka, where a `KafkaStorageException` takes the log directory offline.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// An operating-system call failed.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A write or fsync of a segment file failed. What it was to make durable may not be on
    /// disk (after a failed fsync the state of the page cache is unknown: the kernel may have
    /// dropped the dirty pages and a retry would report success), so the log stops accepting
    /// and serving until it is reopened (case C10).
    #[error(
        "{op} of {} failed at position {position} (log offsets from {offset} may not be on disk): {source}",
        path.display()
    )]
    SegmentIo {
        /// `"write"` or `"fsync"`.
        op: &'static str,
        /// The segment file.
        path: PathBuf,
        /// Where the write started, or up to where the file was durable before the fsync.
        position: u64,
        /// The first log offset the failed call was to write or make durable.
        offset: i64,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The `.lock` file of the metadata log directory is held by another process (or already by
    /// this one), as Kafka's `RaftManager.lockDataDir` reports.
    #[error(
        "{} is locked {holder}: another kraftwerk or Kafka controller is using this metadata.log.dir",
        path.display()
    )]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// "by another process" or "by this process".
        holder: &'static str,
    },
    /// The RocksDB index failed (the index is derived data; open rebuilds it on errors, so this
    /// surfaces only when rebuilding fails too, or on a write).
    #[error("RocksDB index at {}: {source}", path.display())]
    Index {
        /// The index directory.
        path: PathBuf,
        /// The RocksDB error.
        #[source]
        source: rocksdb::Error,
    },
    /// The directory holds something recovery must not repair by itself.
    #[error("inconsistent log directory {}: {reason}", path.display())]
    Inconsistent {
        /// The directory or file involved.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A record batch on disk fails its check (CRC, framing) where the log must not cut it: at
    /// read time (never served: a Fetch response or a replay gets this error instead), or at
    /// open when valid data follows it, so it is damage to data that was on disk rather than a
    /// torn write.
    #[error("corrupt record batch in {} at position {position} (offset {offset}): {reason}", path.display())]
    CorruptBatch {
        /// The segment file.
        path: PathBuf,
        /// Byte position of the batch in the file.
        position: u64,
        /// Base offset of the batch (the offset the log expected there, if unreadable).
        offset: i64,
        /// What is wrong.
        reason: String,
    },
    /// A file has a format we cannot read (`quorum-state`, `partition.metadata`).
    #[error("cannot parse {}: {reason}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A configuration value is out of range.
    #[error("invalid log configuration: {0}")]
    Config(String),
    /// An earlier write failed, so the in-memory state may not match the disk any more
    /// (Kafka marks the log directory offline; the node must restart and recover).
    #[error("the log at {} failed earlier and must be reopened: {reason}", path.display())]
    Failed {
        /// The partition directory.
        path: PathBuf,
        /// The first failure.
        reason: String,
    },
}

impl StorageError {
    /// Wraps an I/O error with the path it concerns.
    pub(crate) fn io(path: impl AsRef<Path>, source: io::Error) -> Self {
        StorageError::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    pub(crate) fn inconsistent(path: impl AsRef<Path>, reason: impl Into<String>) -> Self {
        StorageError::Inconsistent {
            path: path.as_ref().to_path_buf(),
            reason: reason.into(),
        }
    }
}

/// `map_err` helper: `file.sync_all().map_err(io_at(&path))`.
pub(crate) fn io_at(path: &Path) -> impl FnOnce(io::Error) -> StorageError + '_ {
    move |source| StorageError::io(path, source)
}

impl From<StorageError> for LogError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Io { path, source } => LogError::Io {
                path: path.display().to_string(),
                source,
            },
            StorageError::SegmentIo {
                op,
                path,
                position,
                offset,
                source,
            } => LogError::Io {
                path: format!(
                    "{} ({op} at position {position}, log offsets from {offset} may not be on disk)",
                    path.display()
                ),
                source,
            },
            StorageError::Locked { ref path, .. } => LogError::Io {
                path: path.display().to_string(),
                source: io::Error::new(io::ErrorKind::WouldBlock, e.to_string()),
            },
            StorageError::CorruptBatch {
                path,
                position,
                offset,
                reason,
            } => LogError::CorruptBatch {
                offset,
                reason: format!("in {} at position {position}: {reason}", path.display()),
            },
            other => LogError::Inconsistent(other.to_string()),
        }
    }
}
