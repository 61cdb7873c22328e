//! [`FaultyFs`]: the real file system with faults injected, for tests (the `testing` feature).
//!
//! - [`Fault`]s make matching writes or fsyncs fail with an OS error (`ENOSPC`, `EIO`), after
//!   an optional short write that leaves a prefix of the data in the file;
//! - [`FaultyFs::crash`] drops every write made through it after the file's last successful
//!   fsync, as a power loss would (files are modelled as append-only, which is how the log
//!   writes them: truncations are fsynced at once, other files are replaced by rename);
//! - [`FaultyFs::opens`] counts opened files and directories, so a test can check that a hot
//!   path opens none;
//! - [`flip_byte`] and [`cut_file`] damage a file at rest.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::real::{open_options, RealFs};
use super::{DirEntry, Fs, FsFile, OpenMode};

/// `ENOSPC`: no space left on the device.
pub const ENOSPC: i32 = libc::ENOSPC;
/// `EIO`: the device reported an I/O error.
pub const EIO: i32 = libc::EIO;

/// Which operation a [`Fault`] hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultOp {
    /// `pwrite` to a file.
    Write,
    /// `fsync`/`fdatasync` of a file or a directory.
    Sync,
}

/// One injected fault: operations `op` on paths ending with `path_suffix` (a file name, or a
/// directory's path) fail with `errno`.
#[derive(Clone, Debug)]
pub struct Fault {
    op: FaultOp,
    path_suffix: String,
    errno: i32,
    short_bytes: Option<usize>,
    times: Option<u32>,
}

impl Fault {
    /// Writes to matching paths fail with `errno`, every time from now on.
    pub fn write(path_suffix: &str, errno: i32) -> Fault {
        Fault {
            op: FaultOp::Write,
            path_suffix: path_suffix.to_owned(),
            errno,
            short_bytes: None,
            times: None,
        }
    }

    /// fsyncs of matching paths fail with `errno`, every time from now on.
    pub fn sync(path_suffix: &str, errno: i32) -> Fault {
        Fault {
            op: FaultOp::Sync,
            ..Fault::write(path_suffix, errno)
        }
    }

    /// The first matching write is short: it writes `bytes` bytes and reports them written;
    /// the retry of the rest gets the error. Models a device filling up mid-write.
    pub fn after_short_write(mut self, bytes: usize) -> Fault {
        self.short_bytes = Some(bytes);
        self
    }

    /// The error is returned `n` times, then the fault is gone.
    pub fn times(mut self, n: u32) -> Fault {
        self.times = Some(n);
        self
    }

    fn matches(&self, op: FaultOp, path: &Path) -> bool {
        self.op == op && path.to_string_lossy().ends_with(&self.path_suffix)
    }
}

/// What a file opened through the layer looks like to a crash.
#[derive(Debug)]
struct Tracked {
    path: PathBuf,
    /// Length at the last successful fsync (or at open, for a file that existed).
    synced_len: u64,
}

#[derive(Debug, Default)]
struct State {
    faults: Vec<Fault>,
    opens: Vec<PathBuf>,
    files: HashMap<u64, Tracked>,
    next_id: u64,
    injected: u64,
}

impl State {
    /// What a write or fsync of file `id` gets: `None` to go ahead, `Some(Ok(n))` for a short
    /// write of `n` bytes, `Some(Err(_))` for an error.
    fn fault(&mut self, op: FaultOp, path: &Path, len: usize) -> Option<io::Result<usize>> {
        let index = self.faults.iter().position(|f| f.matches(op, path))?;
        let fault = &mut self.faults[index];
        if let Some(bytes) = fault.short_bytes.take() {
            if bytes < len {
                return Some(Ok(bytes));
            }
        }
        let errno = fault.errno;
        if let Some(times) = &mut fault.times {
            *times -= 1;
            if *times == 0 {
                self.faults.remove(index);
            }
        }
        self.injected += 1;
        Some(Err(io::Error::from_raw_os_error(errno)))
    }

    fn track(&mut self, path: &Path, synced_len: u64) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.files.insert(
            id,
            Tracked {
                path: path.to_path_buf(),
                synced_len,
            },
        );
        id
    }
}

/// The real file system with injectable faults. Clones share their faults and bookkeeping, so
/// a test keeps one clone and hands another to the log.
#[derive(Clone, Debug, Default)]
pub struct FaultyFs {
    state: Arc<Mutex<State>>,
}

impl FaultyFs {
    /// A layer that injects nothing until told to.
    pub fn new() -> FaultyFs {
        FaultyFs::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panicking test thread leaves consistent bookkeeping behind.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a fault (the first matching fault applies).
    pub fn inject(&self, fault: Fault) {
        self.state().faults.push(fault);
    }

    /// Removes every fault (the disk is "repaired").
    pub fn clear_faults(&self) {
        self.state().faults.clear();
    }

    /// Errors injected so far.
    pub fn injected(&self) -> u64 {
        self.state().injected
    }

    /// Files and directories opened so far, in order.
    pub fn opened_paths(&self) -> Vec<PathBuf> {
        self.state().opens.clone()
    }

    /// How many files and directories were opened so far.
    pub fn opens(&self) -> usize {
        self.state().opens.len()
    }

    /// A power loss: every file written through the layer is cut back to its length at its
    /// last successful fsync. Call it after the log is dropped.
    pub fn crash(&self) {
        let mut state = self.state();
        for tracked in state.files.values() {
            let Ok(file) = std::fs::OpenOptions::new().write(true).open(&tracked.path) else {
                continue; // removed or renamed away since
            };
            let len = file.metadata().map_or(0, |m| m.len());
            if len > tracked.synced_len {
                file.set_len(tracked.synced_len)
                    .expect("cut an unsynced tail");
            }
        }
        state.files.clear();
    }

    fn wrap(&self, file: File, path: &Path, synced_len: u64) -> Box<dyn FsFile> {
        let mut state = self.state();
        state.opens.push(path.to_path_buf());
        let id = state.track(path, synced_len);
        Box::new(FaultyFile {
            file,
            id,
            state: Arc::clone(&self.state),
        })
    }
}

/// A file opened through [`FaultyFs`].
#[derive(Debug)]
struct FaultyFile {
    file: File,
    id: u64,
    state: Arc<Mutex<State>>,
}

impl FaultyFile {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Checks for a fault on this file (by its current path: it may have been renamed).
    fn fault(&self, op: FaultOp, len: usize) -> Option<io::Result<usize>> {
        let mut state = self.state();
        let path = state.files.get(&self.id).map(|t| t.path.clone())?;
        state.fault(op, &path, len)
    }

    fn synced(&self) {
        let len = FsFile::size_bytes(&self.file).unwrap_or(0);
        if let Some(tracked) = self.state().files.get_mut(&self.id) {
            tracked.synced_len = len;
        }
    }

    fn sync(&self, sync: impl FnOnce(&File) -> io::Result<()>) -> io::Result<()> {
        if let Some(Err(e)) = self.fault(FaultOp::Sync, 0) {
            return Err(e);
        }
        sync(&self.file)?;
        self.synced();
        Ok(())
    }
}

impl FsFile for FaultyFile {
    fn read_at(&self, buf: &mut [u8], position: u64) -> io::Result<usize> {
        FsFile::read_at(&self.file, buf, position)
    }
    fn write_at(&self, buf: &[u8], position: u64) -> io::Result<usize> {
        match self.fault(FaultOp::Write, buf.len()) {
            None => FsFile::write_at(&self.file, buf, position),
            Some(Ok(short)) => FsFile::write_at(&self.file, &buf[..short], position),
            Some(Err(e)) => Err(e),
        }
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        FsFile::set_len(&self.file, len)?;
        if let Some(tracked) = self.state().files.get_mut(&self.id) {
            tracked.synced_len = tracked.synced_len.min(len);
        }
        Ok(())
    }
    fn sync_data(&self) -> io::Result<()> {
        self.sync(File::sync_data)
    }
    fn sync_all(&self) -> io::Result<()> {
        self.sync(File::sync_all)
    }
    fn size_bytes(&self) -> io::Result<u64> {
        FsFile::size_bytes(&self.file)
    }
}

impl Fs for FaultyFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn FsFile>> {
        let file = open_options(mode).open(path)?;
        let synced_len = match mode {
            OpenMode::CreateNew | OpenMode::CreateTruncate => 0,
            OpenMode::Read | OpenMode::ReadWrite => file.metadata()?.len(),
        };
        Ok(self.wrap(file, path, synced_len))
    }
    fn open_dir(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let dir = File::open(path)?;
        Ok(self.wrap(dir, path, 0))
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        RealFs.create_dir_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        RealFs.rename(from, to)?;
        let mut state = self.state();
        state.files.retain(|_, t| t.path != to);
        for tracked in state.files.values_mut().filter(|t| t.path == from) {
            tracked.path = to.to_path_buf();
        }
        Ok(())
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        RealFs.remove_file(path)?;
        self.state().files.retain(|_, t| t.path != path);
        Ok(())
    }
    fn list(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        RealFs.list(path)
    }
    fn set_read_only(&self, path: &Path) -> io::Result<()> {
        RealFs.set_read_only(path)
    }
    fn exists(&self, path: &Path) -> bool {
        RealFs.exists(path)
    }
}

/// Flips every bit of the byte at `position` of `path` (damage at rest: bit rot, a bad
/// sector, a stray write).
pub fn flip_byte(path: &Path, position: u64) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .expect("open the file to damage");
    let mut byte = [0u8];
    FileExt::read_exact_at(&file, &mut byte, position).expect("read the byte");
    byte[0] ^= 0xFF;
    FileExt::write_all_at(&file, &byte, position).expect("write it back");
}

/// Cuts `path` to `len` bytes (a file truncated behind the log's back).
pub fn cut_file(path: &Path, len: u64) {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open the file to cut");
    file.set_len(len).expect("cut it");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_short_writes_crash_and_opens() {
        let tmp = tempfile::tempdir().unwrap();
        let fs = FaultyFs::new();
        let path = tmp.path().join("a.log");
        let file = fs.open(&path, OpenMode::CreateNew).unwrap();
        file.write_all_at(b"durable", 0).unwrap();
        file.sync_data().unwrap();
        fs.inject(Fault::write("a.log", ENOSPC).after_short_write(2).times(1));
        let err = file.write_all_at(b"lost", 7).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(ENOSPC));
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"durablelo",
            "the short prefix stays"
        );
        file.write_all_at(b"st", 9).unwrap();
        fs.inject(Fault::sync("a.log", EIO));
        assert_eq!(file.sync_data().unwrap_err().raw_os_error(), Some(EIO));
        drop(file);
        fs.crash();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"durable",
            "only what was fsynced"
        );
        assert_eq!(fs.opens(), 1);
        assert_eq!(fs.injected(), 2);
        flip_byte(&path, 0);
        cut_file(&path, 3);
        assert_eq!(std::fs::read(&path).unwrap(), [b'd' ^ 0xFF, b'u', b'r']);
    }
}
