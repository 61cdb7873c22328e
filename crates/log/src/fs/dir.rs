//! [`Dir`]: a directory the log keeps open for its whole life, with the durable file
//! operations it needs (atomic replacement, removal, whole-file reads).

use std::fmt;
use std::io;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{DirEntry, Fs, FsFile, OpenMode};
use crate::error::{io_at, StorageError};

/// `<path>.tmp`, the temporary name Kafka uses for atomic replacements (`CheckpointFile`,
/// `FileQuorumStateStore`, `PartitionMetadataFile`).
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".tmp");
    PathBuf::from(name)
}

/// A directory opened once, with the file system it lives on. Creations, renames and removals
/// in it are made durable by [`Dir::fsync`] through the handle opened at [`Dir::open`], so no
/// later operation needs a descriptor for the directory. Cheap to clone (the handle is shared),
/// so snapshot sinks on other threads use it too.
///
/// Dereferences to its path, so `dir.join(name)` and `dir.display()` read as on a `Path`.
#[derive(Clone)]
pub(crate) struct Dir {
    fs: Arc<dyn Fs>,
    path: PathBuf,
    handle: Arc<dyn FsFile>,
}

impl fmt::Debug for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dir").field("path", &self.path).finish()
    }
}

impl Deref for Dir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Dir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Dir {
    /// Opens the existing directory `path` on `fs`.
    pub(crate) fn open(fs: Arc<dyn Fs>, path: &Path) -> Result<Dir, StorageError> {
        let handle = fs.open_dir(path).map_err(io_at(path))?;
        Ok(Dir {
            fs,
            path: path.to_path_buf(),
            handle: Arc::from(handle),
        })
    }

    /// The file system the directory is on.
    pub(crate) fn fs(&self) -> &Arc<dyn Fs> {
        &self.fs
    }

    /// fsyncs the directory, making file creations, renames and removals in it durable.
    pub(crate) fn fsync(&self) -> Result<(), StorageError> {
        self.handle.sync_all().map_err(io_at(&self.path))
    }

    /// Opens `path` (normally a file of this directory), errors naming it.
    pub(crate) fn open_file(
        &self,
        path: &Path,
        mode: OpenMode,
    ) -> Result<Box<dyn FsFile>, StorageError> {
        self.fs.open(path, mode).map_err(io_at(path))
    }

    /// The entries of the directory.
    pub(crate) fn list(&self) -> Result<Vec<DirEntry>, StorageError> {
        self.fs.list(&self.path).map_err(io_at(&self.path))
    }

    /// Renames `from` to `to`; the caller fsyncs the directory.
    pub(crate) fn rename(&self, from: &Path, to: &Path) -> Result<(), StorageError> {
        self.fs.rename(from, to).map_err(io_at(to))
    }

    /// Removes a file; one that is already gone is not an error. The caller fsyncs.
    pub(crate) fn remove_if_exists(&self, path: &Path) -> Result<bool, StorageError> {
        match self.fs.remove_file(path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(StorageError::io(path, e)),
        }
    }

    /// Reads a whole file, `None` if it does not exist.
    pub(crate) fn read_if_exists(&self, path: &Path) -> Result<Option<Vec<u8>>, StorageError> {
        let file = match self.fs.open(path, OpenMode::Read) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StorageError::io(path, e)),
        };
        let len = file.size_bytes().map_err(io_at(path))?;
        let mut bytes = vec![0u8; len as usize];
        file.read_exact_at(&mut bytes, 0).map_err(io_at(path))?;
        Ok(Some(bytes))
    }

    /// Replaces `path` (a file of this directory) with `contents` atomically and durably:
    /// write `<path>.tmp`, fsync it, rename it over `path`, fsync the directory (Kafka
    /// `Utils.atomicMoveWithFallback` with `needFlushParentDir`). The `.tmp` file is the one
    /// descriptor this opens: a new inode cannot be written without one.
    pub(crate) fn write_atomic(&self, path: &Path, contents: &[u8]) -> Result<(), StorageError> {
        let tmp = tmp_path(path);
        let file = self.open_file(&tmp, OpenMode::CreateTruncate)?;
        file.write_all_at(contents, 0)
            .and_then(|()| file.sync_all())
            .map_err(io_at(&tmp))?;
        drop(file);
        self.rename(&tmp, path)?;
        self.fsync()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::RealFs;

    #[test]
    fn write_atomic_replaces_and_leaves_no_tmp() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(Arc::new(RealFs), tmp.path()).unwrap();
        let path = dir.join("quorum-state");
        dir.write_atomic(&path, b"one").unwrap();
        dir.write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert!(!tmp_path(&path).exists());
        assert_eq!(
            dir.read_if_exists(&path).unwrap().as_deref(),
            Some(&b"two"[..])
        );
        assert_eq!(dir.read_if_exists(&dir.join("missing")).unwrap(), None);
        assert!(dir.remove_if_exists(&path).unwrap());
        assert!(!dir.remove_if_exists(&path).unwrap());
    }
}
