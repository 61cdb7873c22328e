//! [`RealFs`]: the operating system's file system.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::Path;

use super::{DirEntry, Fs, FsFile, OpenMode};

/// The file system as the OS provides it; each call is the one system call it names.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealFs;

impl FsFile for File {
    fn read_at(&self, buf: &mut [u8], position: u64) -> io::Result<usize> {
        FileExt::read_at(self, buf, position)
    }
    fn write_at(&self, buf: &[u8], position: u64) -> io::Result<usize> {
        FileExt::write_at(self, buf, position)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }
    fn sync_data(&self) -> io::Result<()> {
        File::sync_data(self)
    }
    fn sync_all(&self) -> io::Result<()> {
        File::sync_all(self)
    }
    fn size_bytes(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
    // The std loops (which also retry EINTR) are the ones to use on a real file.
    fn read_exact_at(&self, buf: &mut [u8], position: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, position)
    }
    fn write_all_at(&self, buf: &[u8], position: u64) -> io::Result<()> {
        FileExt::write_all_at(self, buf, position)
    }
}

/// [`OpenOptions`] for a mode.
pub(super) fn open_options(mode: OpenMode) -> OpenOptions {
    let mut options = OpenOptions::new();
    match mode {
        OpenMode::Read => options.read(true),
        OpenMode::ReadWrite => options.read(true).write(true),
        OpenMode::CreateNew => options.read(true).write(true).create_new(true),
        OpenMode::CreateTruncate => options.write(true).create(true).truncate(true),
    };
    options
}

impl Fs for RealFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn FsFile>> {
        Ok(Box::new(open_options(mode).open(path)?))
    }
    fn open_dir(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        Ok(Box::new(File::open(path)?))
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
    fn list(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let mut entries = Vec::new();
        for item in fs::read_dir(path)? {
            let item = item?;
            entries.push(DirEntry {
                path: item.path(),
                is_file: item.file_type()?.is_file(),
            });
        }
        Ok(entries)
    }
    fn set_read_only(&self, path: &Path) -> io::Result<()> {
        fs::set_permissions(path, fs::Permissions::from_mode(0o444))
    }
    fn exists(&self, path: &Path) -> bool {
        fs::symlink_metadata(path).is_ok()
    }
}
