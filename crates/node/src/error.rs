//! Why a node must stop.

use kraftwerk_controller::ReplayError;
use kraftwerk_raft::RaftError;

use crate::snapshot_codec::SnapshotReadError;

/// A fatal node failure: the process must stop.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// Raft or storage failure.
    #[error(transparent)]
    Raft(#[from] RaftError),
    /// A committed or appended record could not be applied.
    #[error("replay failed at offset {offset}: {source}")]
    Replay {
        /// Offset of the batch being replayed.
        offset: i64,
        /// Why.
        #[source]
        source: ReplayError,
    },
    /// A committed batch could not be decoded (Java nodes stop on this too).
    #[error("undecodable committed batch at offset {offset}: {reason}")]
    Decode {
        /// Base offset of the batch.
        offset: i64,
        /// Why.
        reason: String,
    },
    /// The log returned nothing where committed data must be.
    #[error("committed offset {offset} is missing from the log")]
    MissingCommittedData {
        /// The offset.
        offset: i64,
    },
    /// The controller produced an internal write that cannot be appended (a controller bug).
    #[error("the controller produced an unwritable internal result: {reason}")]
    UnwritableResult {
        /// Why it cannot be written.
        reason: String,
    },
    /// A snapshot could not be loaded.
    #[error(transparent)]
    Snapshot(#[from] SnapshotReadError),
}
