//! One segment file, `<20-digit base offset>.log`: raw v2 record batches back to back, no file
//! header, exactly as Kafka's `LogSegment`/`FileRecords` store them.

use std::io;
use std::path::{Path, PathBuf};

use kraftwerk_records::batch::{BatchHeader, BATCH_HEADER_BYTES};

use crate::error::{io_at, StorageError};
use crate::fs::{Dir, FsFile, OpenMode};

/// Suffix of segment files (Kafka `LogFileUtils.LOG_FILE_SUFFIX`).
pub const SEGMENT_SUFFIX: &str = ".log";

/// Kafka's per-segment sibling files, rebuilt by Java on every start; removed with their segment
/// so that no orphan outlives it (Java deletes orphans too, this just keeps the directory tidy).
const SIBLING_SUFFIXES: [&str; 3] = [".index", ".timeindex", ".txnindex"];

/// `00000000000000000042.log` for base offset 42 (Kafka `LogFileUtils.filenamePrefixFromOffset`).
pub fn segment_file_name(base_offset: i64) -> String {
    assert!(
        base_offset >= 0,
        "negative segment base offset {base_offset}"
    );
    format!("{base_offset:020}{SEGMENT_SUFFIX}")
}

/// The base offset of a segment file name, `None` for any other name (`x.log.deleted`,
/// `x.index`, `quorum-state`, ...). Like Kafka, any digits before `.log` are accepted, but only
/// names we would write (20 digits) are treated as segments, so stray files cannot shift offsets.
pub fn parse_segment_file_name(name: &str) -> Option<i64> {
    let digits = name.strip_suffix(SEGMENT_SUFFIX)?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// An open segment file. Positions are byte offsets in the file; sizes fit in `u32` because
/// Kafka stores segment positions as `int` (segment bytes are capped at `i32::MAX`). The file
/// is opened once, when the segment is created or found at open, and kept open: appends,
/// reads, fsyncs and truncations use that descriptor.
#[derive(Debug)]
pub struct Segment {
    base_offset: i64,
    path: PathBuf,
    file: Box<dyn FsFile>,
    size_bytes: u64,
    /// Bytes known durable: the size at the last fdatasync (or at open, where recovery makes
    /// the whole file durable before the log is used).
    synced_size_bytes: u64,
    /// Wall-clock ms when this segment object was created or loaded, reset when a truncation
    /// empties it (Kafka `LogSegment.created`): the age `segment.ms` is measured from when the
    /// first batch has no timestamp.
    created_ms: i64,
    /// The max timestamp of the first batch (Kafka `LogSegment.rollingBasedTimestamp`): set by
    /// the first append to an empty segment, read from the file on first use for a segment
    /// found at open, cleared when a truncation empties the segment. May be -1 (no timestamp).
    rolling_timestamp: Option<i64>,
}

impl Segment {
    /// Creates a new, empty segment file. Fails if the file already exists, which would mean
    /// our view of the directory is wrong. `now_ms` is the wall-clock time (its `created` time).
    pub fn create(dir: &Dir, base_offset: i64, now_ms: i64) -> Result<Segment, StorageError> {
        let path = dir.join(segment_file_name(base_offset));
        let file = dir.open_file(&path, OpenMode::CreateNew)?;
        Ok(Segment {
            base_offset,
            path,
            file,
            size_bytes: 0,
            synced_size_bytes: 0,
            created_ms: now_ms,
            rolling_timestamp: None,
        })
    }

    /// Opens an existing segment file for reading and appending. `now_ms` is the wall-clock
    /// time: like Kafka, which constructs a new `LogSegment` for every file it loads, the
    /// segment's `created` time is when the log was opened, not when the file was made.
    pub fn open(
        dir: &Dir,
        path: PathBuf,
        base_offset: i64,
        now_ms: i64,
    ) -> Result<Segment, StorageError> {
        let file = dir.open_file(&path, OpenMode::ReadWrite)?;
        let size_bytes = file.size_bytes().map_err(io_at(&path))?;
        Ok(Segment {
            base_offset,
            path,
            file,
            size_bytes,
            synced_size_bytes: size_bytes,
            created_ms: now_ms,
            rolling_timestamp: None,
        })
    }

    /// Offset of the first batch this segment holds (or will hold).
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// The segment file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes that were durable at the last fdatasync (a simulated power loss keeps only these).
    #[cfg(test)]
    pub fn synced_size_bytes(&self) -> u64 {
        self.synced_size_bytes
    }

    /// Bytes in the file.
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// Writes `bytes`, which start with log offset `first_offset` in a batch whose max
    /// timestamp is `first_max_timestamp`, at the end of the file (a positional write, no
    /// shared cursor). On an error ([`StorageError::SegmentIo`]) the file may hold a prefix of
    /// `bytes` past [`size_bytes`](Self::size_bytes); the log stops accepting writes then, and
    /// recovery cuts it at the next open.
    pub fn append(
        &mut self,
        bytes: &[u8],
        first_offset: i64,
        first_max_timestamp: i64,
    ) -> Result<(), StorageError> {
        let was_empty = self.size_bytes == 0;
        self.file
            .write_all_at(bytes, self.size_bytes)
            .map_err(|source| StorageError::SegmentIo {
                op: "write",
                path: self.path.clone(),
                position: self.size_bytes,
                offset: first_offset,
                source,
            })?;
        self.size_bytes += bytes.len() as u64;
        if was_empty {
            // Kafka `LogSegment.append`: the first append to an empty segment fixes the
            // timestamp time-based rolling measures from.
            self.rolling_timestamp = Some(first_max_timestamp);
        }
        Ok(())
    }

    /// Kafka `LogSegment.timeWaitedForRoll`: how long (ms) this segment has waited to be
    /// rolled when a batch with max timestamp `batch_max_timestamp` arrives at wall-clock
    /// `now_ms`. If the first batch has a timestamp (>= 0) it is the difference between the
    /// two batches' timestamps (negative when the new batch is older); otherwise it is the
    /// wall-clock time since the segment was created. Reads the first batch's header from the
    /// file the first time it is needed for a segment found at open.
    ///
    /// `unwritten_first_max_timestamp` is the max timestamp of the first batch the caller has
    /// already placed in this segment but not written yet (the log writes batches in runs):
    /// for an empty segment it stands for the first batch.
    pub fn time_waited_for_roll(
        &mut self,
        now_ms: i64,
        batch_max_timestamp: i64,
        unwritten_first_max_timestamp: Option<i64>,
    ) -> Result<i64, StorageError> {
        let rolling_timestamp = if self.size_bytes == 0 {
            unwritten_first_max_timestamp
        } else {
            self.load_rolling_timestamp()?
        };
        Ok(match rolling_timestamp {
            Some(ts) if ts >= 0 => batch_max_timestamp.saturating_sub(ts),
            _ => now_ms.saturating_sub(self.created_ms),
        })
    }

    /// The first batch's max timestamp of a non-empty segment, read from the file the first
    /// time (Kafka `LogSegment.loadFirstBatchTimestamp`).
    fn load_rolling_timestamp(&mut self) -> Result<Option<i64>, StorageError> {
        if self.rolling_timestamp.is_none() && self.size_bytes > 0 {
            // Kafka `loadFirstBatchTimestamp`. Recovery has validated every batch in the file.
            let len = BATCH_HEADER_BYTES.min(self.size_bytes as usize);
            let header = self.read_at(0, len)?;
            let header = BatchHeader::parse(&header).map_err(|e| {
                StorageError::inconsistent(&self.path, format!("first batch header: {e}"))
            })?;
            self.rolling_timestamp = Some(header.max_timestamp);
        }
        Ok(self.rolling_timestamp)
    }

    /// Reads exactly `len` bytes at `position`.
    pub fn read_at(&self, position: u64, len: usize) -> Result<Vec<u8>, StorageError> {
        let mut buf = vec![0u8; len];
        self.read_exact_at(&mut buf, position)?;
        Ok(buf)
    }

    /// Fills `buf` from `position`; an early end of file is an error naming the file.
    pub fn read_exact_at(&self, buf: &mut [u8], position: u64) -> Result<(), StorageError> {
        self.file.read_exact_at(buf, position).map_err(|e| {
            let e = if e.kind() == io::ErrorKind::UnexpectedEof {
                io::Error::new(
                    e.kind(),
                    format!(
                        "read of {} bytes at {position} past the end ({} bytes)",
                        buf.len(),
                        self.size_bytes
                    ),
                )
            } else {
                e
            };
            StorageError::io(&self.path, e)
        })
    }

    /// Cuts the file to `size_bytes`, where log offset `offset` started, and makes the cut
    /// durable (fdatasync). A cut to empty restarts the segment's age at `now_ms` (Kafka
    /// `LogSegment.truncateTo`).
    pub fn truncate(
        &mut self,
        size_bytes: u64,
        offset: i64,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        assert!(
            size_bytes <= self.size_bytes,
            "truncate of {} to {size_bytes} would grow it",
            self.path.display()
        );
        self.file.set_len(size_bytes).map_err(io_at(&self.path))?;
        self.size_bytes = size_bytes;
        self.synced_size_bytes = self.synced_size_bytes.min(size_bytes);
        if size_bytes == 0 {
            self.created_ms = now_ms;
            self.rolling_timestamp = None;
        }
        self.sync(offset)
    }

    /// fdatasync: data and the file size are durable when it returns. `first_offset` is the
    /// first log offset it is to make durable, named by the error
    /// ([`StorageError::SegmentIo`]) if it fails.
    pub fn sync(&mut self, first_offset: i64) -> Result<(), StorageError> {
        self.file
            .sync_data()
            .map_err(|source| StorageError::SegmentIo {
                op: "fsync",
                path: self.path.clone(),
                position: self.synced_size_bytes,
                offset: first_offset,
                source,
            })?;
        self.synced_size_bytes = self.size_bytes;
        Ok(())
    }

    /// Closes and deletes the segment file and Kafka's sibling index files for the same base
    /// offset. The caller fsyncs the directory.
    pub fn delete(self, dir: &Dir) -> Result<(), StorageError> {
        let Segment {
            base_offset,
            path,
            file,
            ..
        } = self;
        drop(file);
        dir.remove_if_exists(&path)?;
        for suffix in SIBLING_SUFFIXES {
            dir.remove_if_exists(&dir.join(format!("{base_offset:020}{suffix}")))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_match_kafka() {
        assert_eq!(segment_file_name(0), "00000000000000000000.log");
        assert_eq!(segment_file_name(1234), "00000000000000001234.log");
        assert_eq!(
            parse_segment_file_name("00000000000000001234.log"),
            Some(1234)
        );
        for other in [
            "00000000000000001234.log.deleted",
            "00000000000000001234.index",
            "1234.log",
            "0000000000000000123x.log",
            "00000000000000000100-0000000001.checkpoint",
            "quorum-state",
        ] {
            assert_eq!(parse_segment_file_name(other), None, "{other}");
        }
    }

    #[test]
    fn append_read_truncate_delete() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(std::sync::Arc::new(crate::fs::RealFs), tmp.path()).unwrap();
        let mut seg = Segment::create(&dir, 7, 0).unwrap();
        assert!(
            Segment::create(&dir, 7, 0).is_err(),
            "create refuses an existing file"
        );
        seg.append(b"hello", 7, -1).unwrap();
        seg.append(b" world", 8, -1).unwrap();
        assert_eq!(seg.read_at(6, 5).unwrap(), b"world");
        assert!(seg.read_at(8, 5).is_err());
        seg.truncate(5, 8, 0).unwrap();
        let reopened = Segment::open(&dir, seg.path().to_path_buf(), 7, 0).unwrap();
        assert_eq!(reopened.size_bytes(), 5);
        std::fs::write(dir.join("00000000000000000007.index"), b"").unwrap();
        seg.delete(&dir).unwrap();
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}
