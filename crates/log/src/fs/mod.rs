//! The file operations of the log, behind two small traits so that tests can put a faulty
//! layer under the segments, snapshots, `quorum-state` and the bookkeeping files.
//!
//! - [`Fs`]: what a directory offers (open, rename, remove, list, ...). One `Arc<dyn Fs>` per
//!   log, used on cold paths only (opening files, rolling, snapshots, recovery).
//! - [`FsFile`]: an open file or directory (positional reads and writes, `set_len`, fsync).
//!   One `Box<dyn FsFile>` is created per opened file and kept as long as the file is used,
//!   so the hot path (an append is one `pwrite`, a flush one `fdatasync`) pays one indirect
//!   call per system call: a nanosecond against microseconds of kernel time. A type parameter
//!   would avoid even that, but it would spread through `SegmentLog` into the node and server
//!   types for no measurable gain.
//! - [`RealFs`]: the operating system, what the product uses.
//! - [`faulty::FaultyFs`] (tests and the `testing` feature): the real file system with
//!   injected write and fsync errors, short writes, crashes that drop what was not fsynced,
//!   and a count of opened files.
//!
//! The RocksDB index does its own I/O and is not routed here: it is derived data, rebuilt from
//! the segments, and its failures surface as [`crate::StorageError::Index`]. The `.lock` file
//! (an fcntl lock) and the files `kraftwerk format` writes once (`meta.properties`,
//! `bootstrap.checkpoint`) use the standard library directly.

mod dir;
mod real;

#[cfg(any(test, feature = "testing"))]
pub mod faulty;

use std::fmt::Debug;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) use dir::{tmp_path, Dir};
pub use real::RealFs;

/// How [`Fs::open`] opens a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// An existing file, read-only.
    Read,
    /// An existing file, for reading and writing.
    ReadWrite,
    /// A new file for reading and writing; fails if it exists (`O_CREAT | O_EXCL`).
    CreateNew,
    /// A file for writing, created or emptied (`O_CREAT | O_TRUNC`).
    CreateTruncate,
}

/// One entry of [`Fs::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's path (the directory joined with its name).
    pub path: PathBuf,
    /// A regular file (not a directory, symlink or other).
    pub is_file: bool,
}

/// An open file (or directory, for [`FsFile::sync_all`]). Positional I/O only: no shared
/// cursor, so a file can be read from several threads.
pub trait FsFile: Send + Sync + Debug {
    /// `pread`: reads up to `buf.len()` bytes at `position`.
    fn read_at(&self, buf: &mut [u8], position: u64) -> io::Result<usize>;
    /// `pwrite`: writes up to `buf.len()` bytes at `position`, returns how many.
    fn write_at(&self, buf: &[u8], position: u64) -> io::Result<usize>;
    /// `ftruncate`.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// `fdatasync`: the data and the size are durable when it returns.
    fn sync_data(&self) -> io::Result<()>;
    /// `fsync`: data and metadata (for a directory: its entries).
    fn sync_all(&self) -> io::Result<()>;
    /// The file's size (`fstat`).
    fn size_bytes(&self) -> io::Result<u64>;

    /// Fills `buf` from `position`; an early end of file is `UnexpectedEof`.
    fn read_exact_at(&self, mut buf: &mut [u8], mut position: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, position) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "failed to fill whole buffer",
                    ))
                }
                Ok(n) => {
                    buf = &mut buf[n..];
                    position += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Writes all of `buf` at `position`, retrying short writes (a short write followed by an
    /// error leaves its prefix in the file, as the OS would).
    fn write_all_at(&self, mut buf: &[u8], mut position: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.write_at(buf, position) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "failed to write whole buffer",
                    ))
                }
                Ok(n) => {
                    buf = &buf[n..];
                    position += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// The directory operations of the log.
pub trait Fs: Send + Sync + Debug {
    /// Opens a file.
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn FsFile>>;
    /// Opens a directory, to fsync it ([`FsFile::sync_all`]) after creating, renaming or
    /// removing entries.
    fn open_dir(&self, path: &Path) -> io::Result<Box<dyn FsFile>>;
    /// Creates a directory and its missing parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Renames `from` to `to`, replacing `to` (`rename(2)`).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// The entries of a directory, in no particular order.
    fn list(&self, path: &Path) -> io::Result<Vec<DirEntry>>;
    /// Makes a file read-only (mode 0444), as Java's `FileRawSnapshotWriter.freeze` does.
    fn set_read_only(&self, path: &Path) -> io::Result<()>;
    /// Whether anything exists at `path` (`lstat`; opens nothing).
    fn exists(&self, path: &Path) -> bool;
}
