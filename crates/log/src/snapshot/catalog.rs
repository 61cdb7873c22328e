//! The complete snapshots of a partition directory: found and validated at open, added by
//! `register_snapshot`, served by `read_snapshot`, deleted by cleaning and full truncation
//! (Kafka `KafkaMetadataLog.snapshots` + `recoverSnapshots`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use kraftwerk_raft::{LogError, OffsetAndEpoch};
use kraftwerk_records::batch::{self, BatchHeader};

use super::file_name::{parse_snapshot_file_name, snapshot_file_name, SnapshotFileKind};
use super::sink::{FileSnapshotSink, FinishedSnapshots};
use super::validate::{SnapshotSummary, SnapshotValidator};
use crate::error::{io_at, StorageError};
use crate::fs::{Dir, FsFile, OpenMode};

/// The bootstrap snapshot `0-0` of a dynamic quorum (`Snapshots.BOOTSTRAP_SNAPSHOT_ID`): kept
/// and readable, but never listed, served or counted by cleaning.
pub const BOOTSTRAP_SNAPSHOT_ID: OffsetAndEpoch = OffsetAndEpoch {
    epoch: 0,
    offset: 0,
};

/// Bytes read per step when validating a snapshot file.
const VALIDATE_CHUNK_BYTES: usize = 4 << 20;

/// An open, validated snapshot file, kept open so that FetchSnapshot reads open nothing.
#[derive(Debug)]
pub(crate) struct SnapshotFile {
    file: Box<dyn FsFile>,
    path: PathBuf,
    summary: SnapshotSummary,
    /// Where each batch ends ([`SnapshotValidator::finish_with_batch_ends`]).
    batch_ends: Vec<u64>,
}

/// A `.checkpoint` file that failed validation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidSnapshotFile {
    /// The file.
    pub path: PathBuf,
    /// The id its name gives.
    pub id: OffsetAndEpoch,
    /// What is wrong with it.
    pub reason: String,
}

/// What a scan of the partition directory found. Nothing is deleted by the scan itself.
#[derive(Debug, Default)]
pub(crate) struct SnapshotScan {
    /// Complete, valid snapshots.
    pub valid: BTreeMap<OffsetAndEpoch, SnapshotFile>,
    /// `.checkpoint` files that are empty, torn, corrupt or lack their header or footer.
    pub invalid: Vec<InvalidSnapshotFile>,
    /// `.checkpoint.part` and `.checkpoint.deleted` files.
    pub leftovers: Vec<PathBuf>,
}

/// Opens `path` and runs the whole file through the [`SnapshotValidator`]. The outer error is
/// an I/O failure (which must not be mistaken for a bad snapshot); the inner one says why the
/// content is invalid.
fn open_and_validate(dir: &Dir, path: &Path) -> Result<Result<SnapshotFile, String>, StorageError> {
    let file = dir.open_file(path, OpenMode::Read)?;
    let size = file.size_bytes().map_err(io_at(path))?;
    let mut validator = SnapshotValidator::new();
    let mut buf = vec![0u8; VALIDATE_CHUNK_BYTES.min(size as usize)];
    let mut position = 0u64;
    while position < size {
        let len = (size - position).min(buf.len() as u64) as usize;
        file.read_exact_at(&mut buf[..len], position)
            .map_err(io_at(path))?;
        if validator.update(&buf[..len]).is_err() {
            break; // finish() reports it
        }
        position += len as u64;
    }
    Ok(validator
        .finish_with_batch_ends()
        .map(|(summary, batch_ends)| SnapshotFile {
            file,
            path: path.to_path_buf(),
            summary,
            batch_ends,
        }))
}

/// Lists and validates the snapshot files of partition directory `dir`.
///
/// Errors: [`StorageError::Inconsistent`] for a file with a snapshot suffix whose name Java's
/// `Snapshots.parse` would reject (Java refuses to start too), [`StorageError::Io`].
pub(crate) fn scan(dir: &Dir) -> Result<SnapshotScan, StorageError> {
    let mut scan = SnapshotScan::default();
    for item in dir.list()? {
        let path = item.path;
        if !item.is_file {
            continue;
        }
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(parsed) = parse_snapshot_file_name(name) else {
            continue;
        };
        let (id, kind) = parsed.map_err(|reason| StorageError::inconsistent(&path, reason))?;
        match kind {
            SnapshotFileKind::Partial | SnapshotFileKind::Deleted => scan.leftovers.push(path),
            SnapshotFileKind::Complete => match open_and_validate(dir, &path)? {
                Ok(file) => {
                    scan.valid.insert(id, file);
                }
                Err(reason) => scan.invalid.push(InvalidSnapshotFile { path, id, reason }),
            },
        }
    }
    scan.leftovers.sort();
    scan.invalid.sort_by_key(|f| f.id);
    Ok(scan)
}

/// The registered snapshots of a log.
#[derive(Debug)]
pub(crate) struct SnapshotCatalog {
    dir: Dir,
    snapshots: BTreeMap<OffsetAndEpoch, SnapshotFile>,
    finished: FinishedSnapshots,
}

impl SnapshotCatalog {
    /// A catalog of `snapshots`, all files of `dir`.
    pub(crate) fn new(dir: &Dir, snapshots: BTreeMap<OffsetAndEpoch, SnapshotFile>) -> Self {
        SnapshotCatalog {
            dir: dir.clone(),
            snapshots,
            finished: FinishedSnapshots::default(),
        }
    }

    /// Listed ids, ascending (the bootstrap snapshot excluded).
    pub(crate) fn ids(&self) -> Vec<OffsetAndEpoch> {
        self.listed().collect()
    }

    fn listed(&self) -> impl DoubleEndedIterator<Item = OffsetAndEpoch> + '_ {
        self.snapshots
            .keys()
            .copied()
            .filter(|&id| id != BOOTSTRAP_SNAPSHOT_ID)
    }

    pub(crate) fn latest(&self) -> Option<OffsetAndEpoch> {
        self.listed().next_back()
    }

    pub(crate) fn earliest(&self) -> Option<OffsetAndEpoch> {
        self.listed().next()
    }

    /// Whether `id` is registered (the bootstrap snapshot included).
    pub(crate) fn contains(&self, id: OffsetAndEpoch) -> bool {
        self.snapshots.contains_key(&id)
    }

    pub(crate) fn summary(&self, id: OffsetAndEpoch) -> Result<SnapshotSummary, LogError> {
        self.snapshots
            .get(&id)
            .map(|s| s.summary)
            .ok_or(LogError::SnapshotNotFound {
                offset: id.offset,
                epoch: id.epoch,
            })
    }

    /// Total size of the listed snapshots.
    pub(crate) fn listed_size_bytes(&self) -> u64 {
        self.snapshots
            .iter()
            .filter(|(&id, _)| id != BOOTSTRAP_SNAPSHOT_ID)
            .map(|(_, s)| s.summary.size_bytes)
            .sum()
    }

    /// `[position, position + max_bytes)` of snapshot `id`, clipped at its end (empty at or past
    /// the end). The whole batches the range overlaps are read and their CRCs checked first, so
    /// that a snapshot damaged on disk after it was validated is never served: the read fails
    /// with [`StorageError::CorruptBatch`] naming the file and the batch's position (case C10).
    pub(crate) fn read(
        &self,
        id: OffsetAndEpoch,
        position: u64,
        max_bytes: usize,
    ) -> Result<Bytes, LogError> {
        let snapshot = self.snapshots.get(&id).ok_or(LogError::SnapshotNotFound {
            offset: id.offset,
            epoch: id.epoch,
        })?;
        let size = snapshot.summary.size_bytes;
        let len = size.saturating_sub(position).min(max_bytes as u64);
        if len == 0 {
            return Ok(Bytes::new());
        }
        let end = position + len;
        let ends = &snapshot.batch_ends;
        let first = ends.partition_point(|&e| e <= position);
        let last = ends.partition_point(|&e| e < end);
        let from = if first == 0 { 0 } else { ends[first - 1] };
        let mut buf = BytesMut::zeroed((ends[last] - from) as usize);
        snapshot
            .file
            .read_exact_at(&mut buf, from)
            .map_err(io_at(&snapshot.path))?;
        let mut start = from;
        for &batch_end in &ends[first..=last] {
            let whole = &buf[(start - from) as usize..(batch_end - from) as usize];
            if let Err(e) = batch::verify_crc(whole) {
                tracing::error!(path = %snapshot.path.display(), position = start, error = %e,
                    "a snapshot batch on disk fails its check; it is not served");
                return Err(StorageError::CorruptBatch {
                    path: snapshot.path.clone(),
                    position: start,
                    offset: BatchHeader::parse(whole).map_or(-1, |h| h.base_offset),
                    reason: format!("snapshot {}-{}: {e}", id.offset, id.epoch),
                }
                .into());
            }
            start = batch_end;
        }
        Ok(buf
            .freeze()
            .slice((position - from) as usize..(end - from) as usize))
    }

    /// A sink for a new snapshot `id`. Errors if a snapshot with this id is registered or its
    /// file exists.
    pub(crate) fn create_sink(&self, id: OffsetAndEpoch) -> Result<FileSnapshotSink, LogError> {
        if id.offset < 0 || id.epoch < 0 {
            return Err(LogError::InvalidSnapshot {
                offset: id.offset,
                epoch: id.epoch,
                reason: "a snapshot id has a non-negative end offset and epoch".into(),
            });
        }
        let path = self.dir.join(snapshot_file_name(id));
        if self.contains(id) || self.dir.fs().exists(&path) {
            return Err(StorageError::inconsistent(
                &path,
                "a complete snapshot with this id already exists",
            )
            .into());
        }
        Ok(FileSnapshotSink::create(
            &self.dir,
            id,
            self.finished.clone(),
        )?)
    }

    /// Adds snapshot `id` to the catalog: one a sink of this log finished is taken as
    /// validated; any other `<id>.checkpoint` file (a sink of an earlier incarnation, a file put
    /// there by hand) is validated first. Returns whether it was new.
    pub(crate) fn register(&mut self, id: OffsetAndEpoch) -> Result<bool, LogError> {
        if self.contains(id) {
            return Ok(false);
        }
        let not_found = LogError::SnapshotNotFound {
            offset: id.offset,
            epoch: id.epoch,
        };
        if id.offset < 0 || id.epoch < 0 {
            return Err(not_found);
        }
        let path = self.dir.join(snapshot_file_name(id));
        let snapshot = match self.finished.take(id) {
            // The sink hands over the descriptor it wrote through: registering opens nothing.
            Some((summary, batch_ends, file)) => {
                if !self.dir.fs().exists(&path) {
                    return Err(not_found);
                }
                let size = file.size_bytes().map_err(io_at(&path))?;
                if size != summary.size_bytes {
                    return Err(LogError::InvalidSnapshot {
                        offset: id.offset,
                        epoch: id.epoch,
                        reason: format!(
                            "{} has {size} bytes, {} were written",
                            path.display(),
                            summary.size_bytes
                        ),
                    });
                }
                SnapshotFile {
                    file,
                    path,
                    summary,
                    batch_ends,
                }
            }
            None => {
                if !self.dir.fs().exists(&path) {
                    return Err(not_found);
                }
                open_and_validate(&self.dir, &path)?.map_err(|reason| {
                    LogError::InvalidSnapshot {
                        offset: id.offset,
                        epoch: id.epoch,
                        reason,
                    }
                })?
            }
        };
        self.snapshots.insert(id, snapshot);
        Ok(true)
    }

    /// Deletes every snapshot older than `id` (the bootstrap snapshot included), as Kafka's
    /// `forgetSnapshotsBefore` + `removeSnapshots` do, but at once: our reads copy out of the
    /// file, so no reader can still be using it. The caller fsyncs the directory. Returns the
    /// ids removed.
    pub(crate) fn remove_before(
        &mut self,
        id: OffsetAndEpoch,
    ) -> Result<Vec<OffsetAndEpoch>, StorageError> {
        let older: Vec<OffsetAndEpoch> = self.snapshots.range(..id).map(|(&k, _)| k).collect();
        for old in &older {
            let snapshot = self.snapshots.remove(old).expect("listed");
            drop(snapshot.file);
            self.dir.remove_if_exists(&snapshot.path)?;
            tracing::info!(
                dir = %self.dir.display(),
                offset = old.offset,
                epoch = old.epoch,
                "deleted snapshot {}",
                snapshot_file_name(*old)
            );
        }
        self.finished.forget_before(id);
        Ok(older)
    }
}
