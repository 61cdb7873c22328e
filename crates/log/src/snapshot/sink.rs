//! [`FileSnapshotSink`]: writes one snapshot into `<id>-<unique>.checkpoint.part` and, once
//! validated and durable, renames it to `<id>.checkpoint` (Kafka `FileRawSnapshotWriter`).

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use kraftwerk_raft::{LogError, OffsetAndEpoch, SnapshotSink};

use super::file_name::{partial_file_name, snapshot_file_name};
use super::validate::{SnapshotSummary, SnapshotValidator};
use crate::error::{io_at, StorageError};
use crate::fsutil::{fsync_dir, remove_file_if_exists};

/// Writes are gathered up to this size before they reach the file (fetched chunks and
/// generated batches are usually larger and go straight through).
const WRITE_BUFFER_BYTES: usize = 1 << 20;

/// Snapshots a sink finished (validated, durable, renamed) that the log has not registered yet,
/// shared between the log and its sinks, which may run on other threads (Kafka
/// `NotifyingRawSnapshotWriter` → `onSnapshotFrozen`).
#[derive(Clone, Debug, Default)]
pub(crate) struct FinishedSnapshots(Arc<Mutex<BTreeMap<OffsetAndEpoch, SnapshotSummary>>>);

impl FinishedSnapshots {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<OffsetAndEpoch, SnapshotSummary>> {
        // A panic elsewhere while holding the lock leaves a valid map: keep using it.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn insert(&self, id: OffsetAndEpoch, summary: SnapshotSummary) {
        self.lock().insert(id, summary);
    }

    pub(crate) fn take(&self, id: OffsetAndEpoch) -> Option<SnapshotSummary> {
        self.lock().remove(&id)
    }

    pub(crate) fn forget_before(&self, id: OffsetAndEpoch) {
        self.lock().retain(|&k, _| k >= id);
    }
}

/// A number for the `.part` name that no other sink of this process uses, and that another
/// process (a previous incarnation) is unlikely to have used; collisions are retried anyway.
fn unique_number() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mixed = nanos
        ^ (u64::from(std::process::id()) << 40)
        ^ COUNTER
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // Java prints an unsigned long; keep ours positive-looking and bounded.
    mixed % 10_000_000_000_000_000_000
}

/// A snapshot being written. Created by [`SegmentLog`](crate::SegmentLog)'s
/// `create_snapshot`; `Send`, so a large snapshot can be written off the Raft thread.
///
/// - `append` writes to `<id>-<unique>.checkpoint.part` and feeds the
///   [`SnapshotValidator`]; content problems are reported by `finish`, I/O errors at once.
/// - `finish` checks the content, fsyncs the file, makes it read-only, renames it to
///   `<id>.checkpoint` (refusing to replace an existing one) and fsyncs the directory — the
///   order that makes a crash leave either no snapshot or a complete one (case C07) — then
///   hands the summary to the log for `register_snapshot`.
/// - Dropping it unfinished, or a failed `finish`, deletes the `.part` file.
#[derive(Debug)]
pub(crate) struct FileSnapshotSink {
    id: OffsetAndEpoch,
    dir: PathBuf,
    part_path: PathBuf,
    file: Option<BufWriter<File>>,
    validator: SnapshotValidator,
    finished: FinishedSnapshots,
    /// The `.part` file is gone (renamed or deleted): nothing to clean up on drop.
    part_gone: bool,
    /// A write failed part way: the file holds an unknown prefix of that append.
    write_failed: bool,
}

impl FileSnapshotSink {
    /// Creates `<dir>/<id>-<unique>.checkpoint.part`.
    pub(crate) fn create(
        dir: &Path,
        id: OffsetAndEpoch,
        finished: FinishedSnapshots,
    ) -> Result<FileSnapshotSink, StorageError> {
        loop {
            let part_path = dir.join(partial_file_name(id, unique_number()));
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&part_path)
            {
                Ok(file) => {
                    return Ok(FileSnapshotSink {
                        id,
                        dir: dir.to_path_buf(),
                        part_path,
                        file: Some(BufWriter::with_capacity(WRITE_BUFFER_BYTES, file)),
                        validator: SnapshotValidator::new(),
                        finished,
                        part_gone: false,
                        write_failed: false,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(StorageError::io(&part_path, e)),
            }
        }
    }

    fn invalid(&self, reason: String) -> LogError {
        LogError::InvalidSnapshot {
            offset: self.id.offset,
            epoch: self.id.epoch,
            reason,
        }
    }

    fn finish_inner(&mut self) -> Result<SnapshotSummary, LogError> {
        if self.write_failed {
            return Err(StorageError::io(
                &self.part_path,
                io::Error::other("an earlier append failed; the snapshot is incomplete"),
            )
            .into());
        }
        let summary = std::mem::take(&mut self.validator)
            .finish()
            .map_err(|reason| self.invalid(reason))?;
        let file = self
            .file
            .take()
            .expect("a sink is finished once")
            .into_inner()
            .map_err(|e| StorageError::io(&self.part_path, e.into_error()))?;
        // Java `FileRawSnapshotWriter.freeze`: force, close, read-only, atomic move.
        file.sync_all().map_err(io_at(&self.part_path))?;
        drop(file);
        fs::set_permissions(&self.part_path, fs::Permissions::from_mode(0o444))
            .map_err(io_at(&self.part_path))?;
        let target = self.dir.join(snapshot_file_name(self.id));
        if fs::symlink_metadata(&target).is_ok() {
            return Err(StorageError::inconsistent(
                &target,
                "a complete snapshot with this id already exists",
            )
            .into());
        }
        fs::rename(&self.part_path, &target).map_err(io_at(&target))?;
        self.part_gone = true;
        fsync_dir(&self.dir)?;
        Ok(summary)
    }
}

impl SnapshotSink for FileSnapshotSink {
    fn append(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        let file = self
            .file
            .as_mut()
            .expect("append after finish is impossible: finish consumes the sink");
        if let Err(e) = file.write_all(bytes) {
            self.write_failed = true;
            return Err(StorageError::io(&self.part_path, e).into());
        }
        // Content problems surface in `finish`, as the trait promises; the validator keeps the
        // first one.
        let _ = self.validator.update(bytes);
        Ok(())
    }

    fn position(&self) -> u64 {
        self.validator.position()
    }

    fn finish(mut self: Box<Self>) -> Result<u64, LogError> {
        let summary = self.finish_inner()?;
        self.finished.insert(self.id, summary);
        tracing::info!(
            dir = %self.dir.display(),
            offset = self.id.offset,
            epoch = self.id.epoch,
            size_bytes = summary.size_bytes,
            batches = summary.batches,
            "snapshot written"
        );
        Ok(summary.size_bytes)
    }
}

impl Drop for FileSnapshotSink {
    fn drop(&mut self) {
        if self.part_gone {
            return;
        }
        drop(self.file.take());
        match remove_file_if_exists(&self.part_path) {
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not delete an unfinished snapshot"),
        }
    }
}

// The Raft core may hand a sink to another thread.
const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<FileSnapshotSink>();
};
