//! The metadata log on disk, interchangeable with a Java controller's `metadata.log.dir`.
//!
//! ```text
//! <metadata.log.dir>/
//!   .lock                          fcntl lock, as Kafka's RaftManager.lockDataDir    (lock)
//!   meta.properties                                                        (meta_properties)
//!   bootstrap.checkpoint                                                   (bootstrap)
//!   __cluster_metadata-0/
//!     00000000000000000000.log     v2 record batches, Kafka's segment format (SegmentLog)
//!     partition.metadata           topic id AAAAAAAAAAAAAAAAAAAAAQ
//!     leader-epoch-checkpoint      Kafka's epoch cache file
//!     quorum-state                 election state JSON            (FileQuorumStateStore)
//!     kraftwerk-index/             RocksDB index, derived from the segments
//!     <end offset>-<epoch>.checkpoint   Raft snapshots, read-only                (snapshot)
//! ```
//!
//! [`SegmentLog`] implements [`kraftwerk_raft::ReplicatedLog`] and [`FileQuorumStateStore`]
//! implements [`kraftwerk_raft::QuorumStateStore`]. Segment files are the truth: the RocksDB
//! index is checked against them on open and rebuilt when it disagrees (see [`recovery`]).
//! Errors are [`StorageError`]s, converted to [`kraftwerk_raft::LogError`] at the trait boundary.
//!
//! Besides the tests, the crate has:
//! - benchmarks (`benches/log.rs`: append + flush, opening a 100 MiB log with and without its
//!   index, writing and copying a 100 MB snapshot), which print figures rather than assert them:
//!   `cargo bench -p kraftwerk-log --bench log [-- NAME...]`, on another file system with
//!   `KRAFTWERK_BENCH_DIR=<dir>`;
//! - exporters for the manual checks with Kafka's Java programs in `testdata/` (see its
//!   README): `cargo run -p kraftwerk-log --example export_log_for_java -- DIR` and
//!   `cargo run -p kraftwerk-log --example export_quorum_state_for_java -- DIR`;
//! - `kraftwerk_log::testing` (the `testing` feature): the helpers those and the tests share.

pub mod bootstrap;
pub mod formatted;
pub mod java_properties;
pub mod meta_properties;

mod clock;
mod epoch_cache;
mod error;
pub mod fs;
mod index;
mod lock;
mod partition_metadata;
mod quorum_state;
pub mod recovery;
mod segment;
mod segment_log;
pub mod snapshot;
mod validate;

pub use clock::{Clock, ManualClock, SystemClock};
pub use epoch_cache::LEADER_EPOCH_CHECKPOINT;
pub use error::StorageError;
pub use index::INDEX_DIR_NAME;
pub use lock::{DirLock, LOCK_FILE_NAME};
pub use partition_metadata::PARTITION_METADATA;
pub use quorum_state::{FileQuorumStateStore, QUORUM_STATE_FILE};
pub use recovery::{IndexRecovery, RecoveryReport, TailTruncation};
pub use segment::{parse_segment_file_name, segment_file_name};
pub use segment_log::{
    LogConfig, SegmentLog, SnapshotRecovery, DEFAULT_RETENTION_BYTES, DEFAULT_RETENTION_MS,
    DEFAULT_SEGMENT_BYTES, DEFAULT_SEGMENT_MIN_BYTES, DEFAULT_SEGMENT_MS, METADATA_PARTITION_DIR,
};

#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;
