//! The `.lock` file of a metadata log directory, held with a POSIX record lock so that Java
//! controllers and kraftwerk exclude each other.

// fcntl record locks (what Java's FileChannel.tryLock takes) have no safe std wrapper.
#![allow(unsafe_code)]

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{io_at, StorageError};

/// Name of the lock file in the root of `metadata.log.dir` (Kafka `LogManager.LockFileName`).
pub const LOCK_FILE_NAME: &str = ".lock";

/// Lock files this process holds. POSIX record locks belong to the process, so a second
/// `fcntl` from the same process would succeed, and closing *any* descriptor of the file drops
/// the lock; this set makes a second acquisition fail instead, as Java's
/// `OverlappingFileLockException` does.
static HELD: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// An exclusive lock on `<dir>/.lock`, released on drop.
///
/// Follows Kafka's `RaftManager.lockDataDir` / `FileLock.tryLock`: Java's
/// `FileChannel.tryLock()` is an `fcntl(F_SETLK, F_WRLCK)` over the whole file on Linux, so this
/// takes the same lock and a Java controller and kraftwerk cannot both use a directory.
#[derive(Debug)]
pub struct DirLock {
    /// Always `Some` until drop, which closes it before forgetting the path.
    file: Option<File>,
    path: PathBuf,
}

impl DirLock {
    /// Creates `<dir>/.lock` if needed and locks it without waiting.
    ///
    /// Errors: [`StorageError::Locked`] if another process (or this one) holds it,
    /// [`StorageError::Io`] if the file cannot be opened or locked for another reason.
    pub fn acquire(dir: &Path) -> Result<DirLock, StorageError> {
        let path = dir.join(LOCK_FILE_NAME);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_at(&path))?;
        let key = path.canonicalize().map_err(io_at(&path))?;
        let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
        if held.contains(&key) {
            return Err(StorageError::Locked {
                path,
                holder: "by this process",
            });
        }
        // SAFETY: plain fcntl on a descriptor we own, with a fully initialised flock struct.
        let mut lock: libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = libc::F_WRLCK as libc::c_short;
        lock.l_whence = libc::SEEK_SET as libc::c_short;
        lock.l_start = 0;
        lock.l_len = 0; // to the end of the file, however large: overlaps Java's [0, Long.MAX_VALUE)
        let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &lock) };
        if rc != 0 {
            let err = io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EACCES) => Err(StorageError::Locked {
                    path,
                    holder: "by another process",
                }),
                _ => Err(StorageError::io(&path, err)),
            };
        }
        held.insert(key);
        Ok(DirLock {
            file: Some(file),
            path,
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Close the descriptor (releasing the fcntl lock) before another thread of this process
        // may take the lock again: closing it afterwards would release *their* lock.
        drop(self.file.take());
        if let Ok(key) = self.path.canonicalize() {
            HELD.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_in_the_same_process_fails_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let lock = DirLock::acquire(dir.path()).unwrap();
        let err = DirLock::acquire(dir.path()).unwrap_err();
        assert!(
            matches!(
                err,
                StorageError::Locked {
                    holder: "by this process",
                    ..
                }
            ),
            "{err}"
        );
        drop(lock);
        DirLock::acquire(dir.path()).expect("lock is free again after drop");
    }

    /// Takes a write lock over the whole of `file` owned by its open file description (a Linux
    /// OFD lock), or returns the errno that refused it. The kernel checks OFD locks and the
    /// process-owned `fcntl` locks of Java and [`DirLock`] against each other even within one
    /// process, so this stands in for another process's lock without spawning one.
    #[cfg(target_os = "linux")]
    fn ofd_write_lock(file: &File) -> Result<(), i32> {
        // SAFETY: as in `DirLock::acquire`; OFD locks require `l_pid` = 0 (zeroed).
        let mut lock: libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = libc::F_WRLCK as libc::c_short;
        lock.l_whence = libc::SEEK_SET as libc::c_short;
        let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &lock) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error().raw_os_error().unwrap_or(0))
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn lock_held_by_another_owner_is_refused_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        // Kept open throughout: closing any descriptor of the file would drop `DirLock`'s
        // process-owned lock, which is what the first half checks.
        let other = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.path().join(LOCK_FILE_NAME))
            .unwrap();

        // We hold the directory: another owner (a Java controller) cannot lock it.
        let ours = DirLock::acquire(dir.path()).unwrap();
        let refused = ofd_write_lock(&other).unwrap_err();
        assert!(
            refused == libc::EAGAIN || refused == libc::EACCES,
            "errno {refused}"
        );
        drop(ours);

        // Another owner holds it: we are refused, with an error naming the lock file.
        ofd_write_lock(&other).expect("free once our lock is dropped");
        let err = DirLock::acquire(dir.path()).unwrap_err();
        assert!(
            matches!(
                err,
                StorageError::Locked {
                    holder: "by another process",
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string().contains(".lock"),
            "the error names the lock file: {err}"
        );
        drop(other); // releases the OFD lock
        DirLock::acquire(dir.path()).expect("free once the other owner is gone");
    }
}
