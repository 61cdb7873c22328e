//! A snapshot of the committed image, written off the node's thread.

use kraftwerk_controller::MetadataImage;
use kraftwerk_raft::{LogError, OffsetAndEpoch, SnapshotSink};

use crate::snapshot_codec::encode_snapshot;

/// A snapshot to write off the node's thread: the (O(1)-cloned) committed image at `id`, and
/// the sink it goes into.
pub struct SnapshotJob {
    /// The snapshot id (exclusive end offset, epoch of the last contained batch).
    pub id: OffsetAndEpoch,
    /// The committed image at `id.offset`.
    pub image: MetadataImage,
    /// Where the bytes go.
    pub sink: Box<dyn SnapshotSink>,
    /// Append time of the last contained batch, in ms since the epoch.
    pub last_contained_timestamp_ms: i64,
    /// Wall-clock time to stamp batches with, in ms since the epoch.
    pub now_ms: i64,
    /// KRaftVersion and Voters records in force at `id` (kraft.version ≥ 1; empty at 0), for
    /// the header batch (Kafka `RecordsSnapshotWriter`).
    pub kraft_control: Vec<kraftwerk_records::control::ControlRecord>,
}

impl std::fmt::Debug for SnapshotJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotJob")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// The outcome of a [`SnapshotJob`].
#[derive(Debug)]
pub struct SnapshotDone {
    /// The snapshot id.
    pub id: OffsetAndEpoch,
    /// Size in bytes, or why it failed.
    pub result: Result<u64, LogError>,
    /// Time spent writing, in ms: measured by the driver that ran the job (0 until then).
    pub duration_ms: u64,
    /// Number of metadata records written.
    pub records: usize,
}

impl SnapshotJob {
    /// Writes the snapshot (image → records → batches → sink → durable file). Runs anywhere;
    /// the node only learns about the result through `NodeInput::SnapshotDone`. The driver
    /// times the call and sets [`SnapshotDone::duration_ms`].
    pub fn run(self) -> SnapshotDone {
        let SnapshotJob {
            id,
            image,
            mut sink,
            last_contained_timestamp_ms,
            now_ms,
            kraft_control,
        } = self;
        let records = image.write_records();
        let count = records.len();
        let written = encode_snapshot(
            &records,
            &kraft_control,
            id,
            last_contained_timestamp_ms,
            now_ms,
            |b| sink.append(&b),
        );
        let result = written.and_then(|()| sink.finish());
        SnapshotDone {
            id,
            result,
            duration_ms: 0,
            records: count,
        }
    }
}
