//! [`FileSnapshotSink`]: writes one snapshot into `<id>-<unique>.checkpoint.part` and, once
//! validated and durable, renames it to `<id>.checkpoint` (Kafka `FileRawSnapshotWriter`).

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use kraftwerk_raft::{LogError, OffsetAndEpoch, SnapshotSink};

use super::file_name::{partial_file_name, snapshot_file_name};
use super::validate::{SnapshotSummary, SnapshotValidator};
use crate::error::{io_at, StorageError};
use crate::fs::{Dir, FsFile, OpenMode};

/// Writes are gathered up to this size before they reach the file (fetched chunks and
/// generated batches are usually larger and go straight through).
const WRITE_BUFFER_BYTES: usize = 1 << 20;

/// A finished snapshot: its summary, where its batches end, and the descriptor it was written
/// through (the renamed file), so that registering it opens nothing.
type Finished = (SnapshotSummary, Vec<u64>, Box<dyn FsFile>);

/// Snapshots a sink finished (validated, durable, renamed) that the log has not registered yet,
/// shared between the log and its sinks, which may run on other threads (Kafka
/// `NotifyingRawSnapshotWriter` → `onSnapshotFrozen`).
#[derive(Clone, Debug, Default)]
pub(crate) struct FinishedSnapshots(Arc<Mutex<BTreeMap<OffsetAndEpoch, Finished>>>);

impl FinishedSnapshots {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<OffsetAndEpoch, Finished>> {
        // A panic elsewhere while holding the lock leaves a valid map: keep using it.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn insert(&self, id: OffsetAndEpoch, finished: Finished) {
        self.lock().insert(id, finished);
    }

    pub(crate) fn take(&self, id: OffsetAndEpoch) -> Option<Finished> {
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
    dir: Dir,
    part_path: PathBuf,
    /// Opened (read and write) at create and kept until the catalog takes it over.
    file: Option<Box<dyn FsFile>>,
    /// Appends gathered before they reach the file, at most [`WRITE_BUFFER_BYTES`].
    buffer: Vec<u8>,
    /// Bytes in the file (the position of the next write).
    written_bytes: u64,
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
        dir: &Dir,
        id: OffsetAndEpoch,
        finished: FinishedSnapshots,
    ) -> Result<FileSnapshotSink, StorageError> {
        loop {
            let part_path = dir.join(partial_file_name(id, unique_number()));
            match dir.fs().open(&part_path, OpenMode::CreateNew) {
                Ok(file) => {
                    return Ok(FileSnapshotSink {
                        id,
                        dir: dir.clone(),
                        part_path,
                        file: Some(file),
                        buffer: Vec::new(),
                        written_bytes: 0,
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

    /// Writes `bytes` at the end of the file.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        let file = self
            .file
            .as_ref()
            .expect("writes happen before finish takes the file");
        file.write_all_at(bytes, self.written_bytes)?;
        self.written_bytes += bytes.len() as u64;
        Ok(())
    }

    /// Writes out the buffered appends.
    fn drain_buffer(&mut self) -> io::Result<()> {
        let buffer = std::mem::take(&mut self.buffer);
        let result = self.write(&buffer);
        self.buffer = buffer;
        self.buffer.clear();
        result
    }

    /// Buffers small appends, writes large ones through.
    fn buffered_write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.buffer.len() + bytes.len() > WRITE_BUFFER_BYTES {
            self.drain_buffer()?;
        }
        if bytes.len() >= WRITE_BUFFER_BYTES {
            return self.write(bytes);
        }
        self.buffer.extend_from_slice(bytes);
        Ok(())
    }

    fn finish_inner(&mut self) -> Result<Finished, LogError> {
        if self.write_failed {
            return Err(StorageError::io(
                &self.part_path,
                io::Error::other("an earlier append failed; the snapshot is incomplete"),
            )
            .into());
        }
        let (summary, batch_ends) = std::mem::take(&mut self.validator)
            .finish_with_batch_ends()
            .map_err(|reason| self.invalid(reason))?;
        self.drain_buffer().map_err(io_at(&self.part_path))?;
        let file = self.file.take().expect("a sink is finished once");
        // Java `FileRawSnapshotWriter.freeze`: force, close, read-only, atomic move. The
        // descriptor stays open (read-only mode binds new opens, not this one) and is handed
        // to the catalog.
        file.sync_all().map_err(io_at(&self.part_path))?;
        let fs = self.dir.fs();
        fs.set_read_only(&self.part_path)
            .map_err(io_at(&self.part_path))?;
        let target = self.dir.join(snapshot_file_name(self.id));
        if fs.exists(&target) {
            return Err(StorageError::inconsistent(
                &target,
                "a complete snapshot with this id already exists",
            )
            .into());
        }
        self.dir.rename(&self.part_path, &target)?;
        self.part_gone = true;
        self.dir.fsync()?;
        Ok((summary, batch_ends, file))
    }
}

impl SnapshotSink for FileSnapshotSink {
    fn append(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        if let Err(e) = self.buffered_write(bytes) {
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
        let (summary, batch_ends, file) = self.finish_inner()?;
        self.finished.insert(self.id, (summary, batch_ends, file));
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
        match self.dir.remove_if_exists(&self.part_path) {
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
