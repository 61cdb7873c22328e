//! Raft snapshots on disk (KIP-630), laid out as Kafka's `Snapshots`, `FileRawSnapshotWriter`
//! and `FileRawSnapshotReader` lay them out, in the partition directory next to the segments:
//!
//! ```text
//! 00000000000000001000-0000000003.checkpoint               complete, read-only
//! 00000000000000002000-0000000004-7465920114.checkpoint.part   being written (deleted at open)
//! 00000000000000000500-0000000002.checkpoint.deleted       marked by Java (deleted at open)
//! ```
//!
//! A snapshot `<end offset>-<epoch>` replaces log offsets `[0, end offset)`. Its file is a
//! sequence of v2 record batches with offsets from 0: a control batch starting with a
//! SnapshotHeader, data batches, and a control batch ending with a SnapshotFooter
//! ([`SnapshotValidator`]).
//!
//! - [`file_name`](parse_snapshot_file_name): names;
//! - [`SnapshotValidator`]: the check every snapshot passes before it is trusted;
//! - `sink`: the `.checkpoint.part` writer handed out by `create_snapshot`;
//! - `catalog`: the registered snapshots of a log, found and validated at open.

mod catalog;
mod file_name;
mod sink;
mod validate;

pub(crate) use catalog::{scan, SnapshotCatalog, SnapshotScan};
pub use catalog::{InvalidSnapshotFile, BOOTSTRAP_SNAPSHOT_ID};
pub use file_name::{
    parse_snapshot_file_name, snapshot_file_name, SnapshotFileKind, DELETED_SNAPSHOT_SUFFIX,
    PARTIAL_SNAPSHOT_SUFFIX, SNAPSHOT_SUFFIX,
};
pub use validate::{validate_snapshot, SnapshotSummary, SnapshotValidator};
