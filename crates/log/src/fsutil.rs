//! Durable file operations shared by the log, the index bookkeeping files and `quorum-state`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{io_at, StorageError};

/// fsyncs a directory, making file creations, renames and removals in it durable.
pub(crate) fn fsync_dir(dir: &Path) -> Result<(), StorageError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_at(dir))
}

/// `<path>.tmp`, the temporary name Kafka uses for atomic replacements (`CheckpointFile`,
/// `FileQuorumStateStore`, `PartitionMetadataFile`).
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".tmp");
    PathBuf::from(name)
}

/// Replaces `path` with `contents` atomically and durably: write `<path>.tmp`, fsync it,
/// rename it over `path`, fsync the directory (Kafka `Utils.atomicMoveWithFallback` with
/// `needFlushParentDir`).
pub(crate) fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), StorageError> {
    let tmp = tmp_path(path);
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .map_err(io_at(&tmp))?;
    file.write_all(contents)
        .and_then(|_| file.sync_all())
        .map_err(io_at(&tmp))?;
    drop(file);
    fs::rename(&tmp, path).map_err(io_at(path))?;
    fsync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// Removes a file; a file that is already gone is not an error.
pub(crate) fn remove_file_if_exists(path: &Path) -> Result<bool, StorageError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StorageError::io(path, e)),
    }
}

/// Reads a whole file, `None` if it does not exist.
pub(crate) fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>, StorageError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StorageError::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_and_leaves_no_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quorum-state");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(!tmp_path(&path).exists());
        assert_eq!(read_if_exists(&dir.path().join("missing")).unwrap(), None);
        assert!(remove_file_if_exists(&path).unwrap());
        assert!(!remove_file_if_exists(&path).unwrap());
    }
}
