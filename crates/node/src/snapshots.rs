//! When the node writes a snapshot of its committed image (Kafka `SnapshotGenerator`), what it
//! does with a finished one, and how it loads one (at start, or after the leader sent it).

use kraftwerk_protocol::constants::MAX_BATCH_BYTES;
use kraftwerk_raft::{LogError, OffsetAndEpoch, QuorumStateStore, RaftError, ReplicatedLog};
use tracing::{info, warn};

use crate::error::NodeError;
use crate::messages::NodeOutput;
use crate::node::Node;
use crate::snapshot_codec::decode_snapshot;
use crate::snapshot_job::{SnapshotDone, SnapshotJob};

/// When to write a snapshot of the committed image (Kafka `SnapshotGenerator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotPolicy {
    /// `metadata.log.max.record.bytes.between.snapshots` (20 MiB): bytes of committed batches
    /// since the last snapshot that trigger a new one.
    pub max_bytes_between_snapshots: u64,
    /// `metadata.log.max.snapshot.interval.ms` (1 h): a snapshot is written this long after the
    /// last one if anything was committed since; 0 disables the time trigger.
    pub max_interval_ms: u64,
    /// How often the log's retention runs, in ms (Kafka: every 60 s).
    pub clean_interval_ms: u64,
}

impl SnapshotPolicy {
    /// Default of `metadata.log.max.record.bytes.between.snapshots`, in bytes (20 MiB).
    pub const DEFAULT_MAX_BYTES_BETWEEN_SNAPSHOTS: u64 = 20 * 1024 * 1024;
    /// Default of `metadata.log.max.snapshot.interval.ms`, in ms (1 hour).
    pub const DEFAULT_MAX_INTERVAL_MS: u64 = 3_600_000;
}

impl Default for SnapshotPolicy {
    fn default() -> Self {
        Self {
            max_bytes_between_snapshots: Self::DEFAULT_MAX_BYTES_BETWEEN_SNAPSHOTS,
            max_interval_ms: Self::DEFAULT_MAX_INTERVAL_MS,
            clean_interval_ms: 60_000,
        }
    }
}

impl<L: ReplicatedLog, Q: QuorumStateStore> Node<L, Q> {
    /// Latest snapshot written or loaded by this node.
    pub fn latest_snapshot(&self) -> Option<OffsetAndEpoch> {
        self.latest_snapshot
    }

    /// Records how long the driver measured the latest snapshot load to take, in ms (the node
    /// reads no clock; the driver times the call during which `snapshots_loaded` grew).
    pub fn record_snapshot_load_ms(&mut self, load_ms: u64) {
        self.stats.last_snapshot_load_ms = load_ms;
    }

    /// When the time trigger of the snapshot policy next fires, if anything was committed since
    /// the last snapshot.
    pub(crate) fn next_snapshot_deadline_ms(&self) -> Option<u64> {
        (self.bytes_since_snapshot > 0 && self.snapshot_policy.max_interval_ms > 0)
            .then(|| self.last_snapshot_ms + self.snapshot_policy.max_interval_ms)
    }

    /// Loads snapshot `id` into the controller; replay continues at its end offset.
    pub(crate) fn load_snapshot(
        &mut self,
        id: OffsetAndEpoch,
        now_ms: u64,
    ) -> Result<(), NodeError> {
        let bytes = self.read_snapshot(id)?;
        let records = decode_snapshot(id, &bytes)?;
        if self.controller.is_active() {
            self.deactivate();
        }
        self.controller
            .load_snapshot(&records, id.offset - 1)
            .map_err(|source| NodeError::Replay {
                offset: id.offset - 1,
                source,
            })?;
        self.replayed_end_offset = id.offset;
        self.bytes_since_snapshot = 0;
        self.last_snapshot_ms = now_ms;
        self.last_replayed_batch = Some((id.epoch, 0));
        self.latest_snapshot = Some(id);
        self.stats.snapshots_loaded += 1;
        info!(
            offset = id.offset,
            epoch = id.epoch,
            size_bytes = bytes.len(),
            records = records.len(),
            "loaded snapshot; replaying the log from offset {}",
            id.offset
        );
        Ok(())
    }

    fn read_snapshot(&self, id: OffsetAndEpoch) -> Result<Vec<u8>, NodeError> {
        let log = self.raft.log();
        let size = log.snapshot_size_bytes(id).map_err(RaftError::from)?;
        let mut bytes = Vec::with_capacity(size as usize);
        while (bytes.len() as u64) < size {
            let chunk = log
                .read_snapshot(id, bytes.len() as u64, MAX_BATCH_BYTES)
                .map_err(RaftError::from)?;
            if chunk.is_empty() {
                break;
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    /// Starts a snapshot of the committed image when the policy says so (never while a metadata
    /// transaction is open: a snapshot must not split one — `docs/scenarios.md`, C08).
    pub(crate) fn maybe_snapshot(&mut self, now_ms: u64) -> Result<(), NodeError> {
        if self.snapshot_in_progress.is_some() || self.bytes_since_snapshot == 0 {
            return Ok(());
        }
        let by_bytes =
            self.bytes_since_snapshot >= self.snapshot_policy.max_bytes_between_snapshots;
        let by_time = self.snapshot_policy.max_interval_ms > 0
            && now_ms.saturating_sub(self.last_snapshot_ms) >= self.snapshot_policy.max_interval_ms;
        if !(by_bytes || by_time) || self.controller.image().transaction.is_some() {
            return Ok(());
        }
        let Some((epoch, last_timestamp_ms)) = self.last_replayed_batch else {
            return Ok(());
        };
        let id = OffsetAndEpoch::new(self.replayed_end_offset, epoch);
        if self.latest_snapshot.is_some_and(|s| s.offset >= id.offset) {
            return Ok(());
        }
        let sink = self.raft.create_snapshot(id)?;
        info!(
            offset = id.offset,
            epoch,
            bytes_since_snapshot = self.bytes_since_snapshot,
            "starting a snapshot"
        );
        self.snapshot_in_progress = Some(id);
        self.bytes_since_snapshot = 0;
        self.last_snapshot_ms = now_ms;
        self.outputs.push(NodeOutput::WriteSnapshot(SnapshotJob {
            id,
            image: self.controller.image().clone(),
            sink,
            last_contained_timestamp_ms: last_timestamp_ms,
            now_ms: last_timestamp_ms,
            kraft_control: self
                .raft
                .control_state()
                .snapshot_control_records(id.offset),
        }));
        Ok(())
    }

    /// Registers a finished snapshot with the log (which may then clean below it), or notes why
    /// it was not.
    pub(crate) fn on_snapshot_done(
        &mut self,
        now_ms: u64,
        done: SnapshotDone,
    ) -> Result<(), NodeError> {
        if self.snapshot_in_progress != Some(done.id) {
            warn!(id = ?done.id, "unexpected snapshot completion");
            return Ok(());
        }
        self.snapshot_in_progress = None;
        let size = match done.result {
            Ok(_)
                if self
                    .latest_snapshot
                    .is_some_and(|l| l.offset >= done.id.offset) =>
            {
                // A newer snapshot arrived from the leader meanwhile (and truncating to it
                // removed older ones): this one is superseded.
                info!(id = ?done.id, latest = ?self.latest_snapshot, "snapshot superseded before it was registered");
                return Ok(());
            }
            Ok(size) => size,
            Err(e) => {
                // Writing a snapshot is an optimisation: the log still holds everything. Retry
                // at the next trigger.
                warn!(id = ?done.id, error = %e, "writing a snapshot failed");
                return Ok(());
            }
        };
        match self.raft.register_snapshot(done.id) {
            Ok(()) => {}
            Err(RaftError::Storage(LogError::SnapshotNotFound { .. })) => {
                warn!(id = ?done.id, "written snapshot vanished before registration (log truncated meanwhile)");
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        }
        self.latest_snapshot = Some(done.id);
        self.stats.snapshots_written += 1;
        self.stats.last_snapshot_bytes = size;
        self.stats.last_snapshot_write_ms = done.duration_ms;
        info!(
            offset = done.id.offset,
            epoch = done.id.epoch,
            size_bytes = size,
            records = done.records,
            write_ms = done.duration_ms,
            "snapshot written"
        );
        self.raft.maybe_clean_log(now_ms)?;
        Ok(())
    }
}
