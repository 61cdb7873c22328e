//! The RocksDB index of the segment log: derived data, never the truth.
//!
//! It lives in `__cluster_metadata-0/kraftwerk-index/`, a sub-directory, because Kafka's log
//! loader only looks at regular files of the partition directory. Keys (big-endian, so that
//! RocksDB's byte order is numeric order; offsets and epochs are never negative):
//!
//! | key | value |
//! |---|---|
//! | `v` | format version (`u32`) |
//! | `b` + last offset (`i64`) | [`BatchEntry`] of the batch ending there |
//! | `e` + epoch (`i32`) | start offset (`i64`) of the epoch |
//! | `s` + segment base offset (`i64`) | [`SealedSegment`]: final size and last offset |
//!
//! Batches are keyed by their *last* offset so that one seek finds the batch containing any
//! offset (the first key `>=` it), as Kafka's `LogSegment.translateOffset` does with its
//! offset index. The index only ever describes flushed data: the log writes it after fsyncing
//! the segments.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kraftwerk_records::batch::BatchHeader;
use rocksdb::{DBCompressionType, Options, WriteBatch, WriteOptions, DB};

use crate::error::StorageError;

/// Name of the index directory inside the partition directory. Avoids every suffix Kafka's log
/// loader acts on (`.log`, `.index`, `.timeindex`, `.deleted`, `.checkpoint`, `.swap`, ...).
pub const INDEX_DIR_NAME: &str = "kraftwerk-index";

/// Bump when the key or value layout changes: an index of another version is rebuilt.
const FORMAT_VERSION: u32 = 1;

const KEY_VERSION: &[u8] = b"v";
const PREFIX_BATCH: u8 = b'b';
const PREFIX_EPOCH: u8 = b'e';
const PREFIX_SEALED: u8 = b's';

/// Where one batch is and what it looks like, enough to check it against the segment file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchEntry {
    /// First offset of the batch.
    pub base_offset: i64,
    /// Last offset of the batch (inclusive).
    pub last_offset: i64,
    /// Partition leader epoch stamped on the batch.
    pub epoch: i32,
    /// CRC-32C from the batch header.
    pub crc: u32,
    /// Base offset of the segment holding it.
    pub segment_base: i64,
    /// Byte position of the batch in that segment.
    pub position: u32,
    /// Total batch size in bytes.
    pub size_bytes: u32,
}

/// Encoded value: base offset, epoch, crc, segment base, position, size (the last offset is the key).
const BATCH_VALUE_BYTES: usize = 8 + 4 + 4 + 8 + 4 + 4;

impl BatchEntry {
    /// The entry for a batch with this header at `position` of segment `segment_base`.
    pub fn new(header: &BatchHeader, segment_base: i64, position: u64) -> BatchEntry {
        BatchEntry {
            base_offset: header.base_offset,
            last_offset: header.last_offset(),
            epoch: header.partition_leader_epoch,
            crc: header.crc,
            segment_base,
            position: u32::try_from(position).expect("segment positions fit in 32 bits"),
            size_bytes: header.size_bytes() as u32,
        }
    }

    /// Offset right after the batch.
    pub fn next_offset(&self) -> i64 {
        self.last_offset + 1
    }

    /// Byte position right after the batch in its segment.
    pub fn end_position(&self) -> u64 {
        self.position as u64 + self.size_bytes as u64
    }

    /// Whether a header read back from the segment is the batch this entry describes.
    pub fn matches(&self, header: &BatchHeader) -> bool {
        header.base_offset == self.base_offset
            && header.last_offset() == self.last_offset
            && header.partition_leader_epoch == self.epoch
            && header.crc == self.crc
            && header.size_bytes() == self.size_bytes as usize
    }

    fn encode(&self) -> [u8; BATCH_VALUE_BYTES] {
        let mut out = [0u8; BATCH_VALUE_BYTES];
        out[0..8].copy_from_slice(&self.base_offset.to_be_bytes());
        out[8..12].copy_from_slice(&self.epoch.to_be_bytes());
        out[12..16].copy_from_slice(&self.crc.to_be_bytes());
        out[16..24].copy_from_slice(&self.segment_base.to_be_bytes());
        out[24..28].copy_from_slice(&self.position.to_be_bytes());
        out[28..32].copy_from_slice(&self.size_bytes.to_be_bytes());
        out
    }

    fn decode(key: &[u8], value: &[u8]) -> Option<BatchEntry> {
        if key.len() != 9 || key[0] != PREFIX_BATCH || value.len() != BATCH_VALUE_BYTES {
            return None;
        }
        let i64_at =
            |b: &[u8], at: usize| i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let u32_at = |at: usize| u32::from_be_bytes(value[at..at + 4].try_into().expect("4 bytes"));
        let entry = BatchEntry {
            last_offset: i64_at(key, 1),
            base_offset: i64_at(value, 0),
            epoch: u32_at(8) as i32,
            crc: u32_at(12),
            segment_base: i64_at(value, 16),
            position: u32_at(24),
            size_bytes: u32_at(28),
        };
        let sane = entry.base_offset >= 0
            && entry.base_offset <= entry.last_offset
            && entry.segment_base <= entry.base_offset;
        sane.then_some(entry)
    }
}

/// A segment no longer written to: its final size and last offset (`-1` if empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealedSegment {
    /// File size in bytes when sealed.
    pub size_bytes: u64,
    /// Last offset it holds; `-1` for an empty segment.
    pub last_offset: i64,
}

fn batch_key(last_offset: i64) -> [u8; 9] {
    let mut key = [PREFIX_BATCH; 9];
    key[1..].copy_from_slice(&last_offset.to_be_bytes());
    key
}

fn epoch_key(epoch: i32) -> [u8; 5] {
    let mut key = [PREFIX_EPOCH; 5];
    key[1..].copy_from_slice(&epoch.to_be_bytes());
    key
}

fn sealed_key(segment_base: i64) -> [u8; 9] {
    let mut key = [PREFIX_SEALED; 9];
    key[1..].copy_from_slice(&segment_base.to_be_bytes());
    key
}

/// A set of index changes applied atomically (one RocksDB write batch).
#[derive(Default)]
pub struct IndexWrite {
    batch: WriteBatch,
}

impl IndexWrite {
    /// Adds or replaces a batch entry.
    pub fn put_batch(&mut self, entry: &BatchEntry) {
        self.batch.put(batch_key(entry.last_offset), entry.encode());
    }

    /// Removes every batch whose last offset is `>= last_offset`.
    pub fn delete_batches_from(&mut self, last_offset: i64) {
        self.batch
            .delete_range(&batch_key(last_offset)[..], &[PREFIX_BATCH + 1][..]);
    }

    /// Removes every batch whose last offset is `< offset` (segments deleted below a moved log
    /// start offset).
    pub fn delete_batches_below(&mut self, offset: i64) {
        self.batch
            .delete_range(&[PREFIX_BATCH][..], &batch_key(offset.max(0))[..]);
    }

    /// Removes every batch, epoch and sealed-segment entry, keeping only the format version
    /// (a full truncation, Kafka `truncateFullyAndStartAt`).
    pub fn delete_everything(&mut self) {
        for prefix in [PREFIX_BATCH, PREFIX_EPOCH, PREFIX_SEALED] {
            self.batch.delete_range(&[prefix][..], &[prefix + 1][..]);
        }
    }

    /// Records the start offset of an epoch.
    pub fn put_epoch(&mut self, epoch: i32, start_offset: i64) {
        self.batch.put(epoch_key(epoch), start_offset.to_be_bytes());
    }

    /// Removes an epoch entry.
    pub fn delete_epoch(&mut self, epoch: i32) {
        self.batch.delete(epoch_key(epoch));
    }

    /// Records a sealed segment.
    pub fn put_sealed(&mut self, segment_base: i64, sealed: SealedSegment) {
        let mut value = [0u8; 16];
        value[..8].copy_from_slice(&sealed.size_bytes.to_be_bytes());
        value[8..].copy_from_slice(&sealed.last_offset.to_be_bytes());
        self.batch.put(sealed_key(segment_base), value);
    }

    /// Forgets the sealed state of every segment with base offset `>= segment_base`.
    pub fn delete_sealed_from(&mut self, segment_base: i64) {
        self.batch
            .delete_range(&sealed_key(segment_base)[..], &[PREFIX_SEALED + 1][..]);
    }

    /// Forgets the sealed state of every segment with base offset `< segment_base`.
    pub fn delete_sealed_below(&mut self, segment_base: i64) {
        self.batch
            .delete_range(&[PREFIX_SEALED][..], &sealed_key(segment_base.max(0))[..]);
    }

    /// Number of changes.
    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }
}

/// The open RocksDB index.
pub struct Index {
    db: DB,
    path: PathBuf,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index").field("path", &self.path).finish()
    }
}

fn options() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_compression_type(DBCompressionType::Lz4);
    // The index is small; keep RocksDB's own files and threads few.
    opts.set_keep_log_file_num(2);
    opts.set_max_log_file_size(1 << 20);
    opts.set_max_open_files(64);
    opts.set_max_background_jobs(2);
    opts.set_max_total_wal_size(64 << 20);
    opts
}

impl Index {
    /// Opens (creating if missing) the index at `path`. A fresh index gets the current format
    /// version; [`Index::has_current_format`] tells whether an existing one can be used.
    pub fn open(path: &Path) -> Result<Index, StorageError> {
        let db = DB::open(&options(), path).map_err(|source| StorageError::Index {
            path: path.to_path_buf(),
            source,
        })?;
        let index = Index {
            db,
            path: path.to_path_buf(),
        };
        if index.is_empty()? {
            index
                .db
                .put(KEY_VERSION, FORMAT_VERSION.to_be_bytes())
                .map_err(|e| index.err(e))?;
        }
        Ok(index)
    }

    /// Deletes whatever is at `path` and creates an empty index.
    pub fn recreate(path: &Path) -> Result<Index, StorageError> {
        if path.exists() {
            std::fs::remove_dir_all(path).map_err(|e| StorageError::io(path, e))?;
        }
        Index::open(path)
    }

    fn err(&self, source: rocksdb::Error) -> StorageError {
        StorageError::Index {
            path: self.path.clone(),
            source,
        }
    }

    fn corrupt(&self, what: &str) -> StorageError {
        StorageError::inconsistent(&self.path, format!("corrupt index entry: {what}"))
    }

    fn is_empty(&self) -> Result<bool, StorageError> {
        let mut it = self.db.raw_iterator();
        it.seek_to_first();
        let valid = it.valid();
        it.status().map_err(|e| self.err(e))?;
        Ok(!valid)
    }

    /// Whether the stored format version is the one this code writes.
    pub fn has_current_format(&self) -> Result<bool, StorageError> {
        let version = self.db.get(KEY_VERSION).map_err(|e| self.err(e))?;
        Ok(version.as_deref() == Some(&FORMAT_VERSION.to_be_bytes()[..]))
    }

    /// Applies `write` atomically; `sync` also fsyncs RocksDB's write-ahead log.
    pub fn write(&self, write: IndexWrite, sync: bool) -> Result<(), StorageError> {
        let mut opts = WriteOptions::default();
        opts.set_sync(sync);
        self.db
            .write_opt(write.batch, &opts)
            .map_err(|e| self.err(e))
    }

    /// Writes the memtable to an SST file (RocksDB `Flush`), so a reopen does not replay it
    /// from the write-ahead log.
    pub fn flush_memtable(&self) -> Result<(), StorageError> {
        self.db.flush().map_err(|e| self.err(e))
    }

    /// The batch with the largest last offset.
    pub fn last_batch(&self) -> Result<Option<BatchEntry>, StorageError> {
        let mut it = self.db.raw_iterator();
        it.seek_for_prev(batch_key(i64::MAX));
        self.batch_at(&it)
    }

    /// The batch containing `offset`, or the first one after it: the first entry whose last
    /// offset is `>= offset`.
    pub fn batch_containing(&self, offset: i64) -> Result<Option<BatchEntry>, StorageError> {
        let mut it = self.db.raw_iterator();
        it.seek(batch_key(offset.max(0)));
        self.batch_at(&it)
    }

    /// The batch whose last offset is exactly `last_offset`.
    pub fn batch_ending_at(&self, last_offset: i64) -> Result<Option<BatchEntry>, StorageError> {
        Ok(self
            .batch_containing(last_offset)?
            .filter(|b| b.last_offset == last_offset))
    }

    /// Calls `visit` with the batch containing `offset` and each following batch, in order,
    /// until it returns `false` or the index ends.
    pub fn scan_from(
        &self,
        offset: i64,
        mut visit: impl FnMut(BatchEntry) -> bool,
    ) -> Result<(), StorageError> {
        let mut it = self.db.raw_iterator();
        it.seek(batch_key(offset.max(0)));
        while let Some(entry) = self.batch_at(&it)? {
            if !visit(entry) {
                break;
            }
            it.next();
        }
        Ok(())
    }

    fn batch_at(
        &self,
        it: &rocksdb::DBRawIterator<'_>,
    ) -> Result<Option<BatchEntry>, StorageError> {
        it.status().map_err(|e| self.err(e))?;
        match it.item() {
            Some((key, value)) if key.first() == Some(&PREFIX_BATCH) => {
                BatchEntry::decode(key, value)
                    .map(Some)
                    .ok_or_else(|| self.corrupt("batch"))
            }
            _ => Ok(None),
        }
    }

    /// Every `(epoch, start offset)` entry, oldest first.
    pub fn epochs(&self) -> Result<Vec<(i32, i64)>, StorageError> {
        let mut out = Vec::new();
        let mut it = self.db.raw_iterator();
        it.seek([PREFIX_EPOCH]);
        while let Some((key, value)) = it.item() {
            if key.first() != Some(&PREFIX_EPOCH) {
                break;
            }
            let (Ok(epoch), Ok(start)) =
                (<[u8; 4]>::try_from(&key[1..]), <[u8; 8]>::try_from(value))
            else {
                return Err(self.corrupt("epoch"));
            };
            out.push((i32::from_be_bytes(epoch), i64::from_be_bytes(start)));
            it.next();
        }
        it.status().map_err(|e| self.err(e))?;
        Ok(out)
    }

    /// Every sealed segment by base offset.
    pub fn sealed_segments(&self) -> Result<BTreeMap<i64, SealedSegment>, StorageError> {
        let mut out = BTreeMap::new();
        let mut it = self.db.raw_iterator();
        it.seek([PREFIX_SEALED]);
        while let Some((key, value)) = it.item() {
            if key.first() != Some(&PREFIX_SEALED) {
                break;
            }
            let (Ok(base), Ok(value)) =
                (<[u8; 8]>::try_from(&key[1..]), <[u8; 16]>::try_from(value))
            else {
                return Err(self.corrupt("sealed segment"));
            };
            let sealed = SealedSegment {
                size_bytes: u64::from_be_bytes(value[..8].try_into().expect("8 bytes")),
                last_offset: i64::from_be_bytes(value[8..].try_into().expect("8 bytes")),
            };
            out.insert(i64::from_be_bytes(base), sealed);
            it.next();
        }
        it.status().map_err(|e| self.err(e))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(base: i64, last: i64, segment_base: i64, position: u32) -> BatchEntry {
        BatchEntry {
            base_offset: base,
            last_offset: last,
            epoch: 3,
            crc: 0xDEAD_BEEF,
            segment_base,
            position,
            size_bytes: 100,
        }
    }

    #[test]
    fn batches_are_found_by_any_offset_they_contain() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(dir.path()).unwrap();
        assert!(index.has_current_format().unwrap());
        let mut w = IndexWrite::default();
        for e in [entry(0, 2, 0, 0), entry(3, 3, 0, 100), entry(4, 9, 4, 0)] {
            w.put_batch(&e);
        }
        w.put_epoch(3, 0);
        w.put_sealed(
            0,
            SealedSegment {
                size_bytes: 200,
                last_offset: 3,
            },
        );
        index.write(w, false).unwrap();
        assert_eq!(index.batch_containing(1).unwrap(), Some(entry(0, 2, 0, 0)));
        assert_eq!(
            index.batch_containing(3).unwrap(),
            Some(entry(3, 3, 0, 100))
        );
        assert_eq!(index.batch_containing(7).unwrap(), Some(entry(4, 9, 4, 0)));
        assert_eq!(index.batch_containing(10).unwrap(), None);
        assert_eq!(index.last_batch().unwrap(), Some(entry(4, 9, 4, 0)));
        assert_eq!(index.batch_ending_at(3).unwrap(), Some(entry(3, 3, 0, 100)));
        assert_eq!(index.batch_ending_at(4).unwrap(), None);
        let mut seen = vec![];
        index
            .scan_from(2, |e| {
                seen.push(e.base_offset);
                true
            })
            .unwrap();
        assert_eq!(seen, vec![0, 3, 4]);
        assert_eq!(index.epochs().unwrap(), vec![(3, 0)]);
        assert_eq!(index.sealed_segments().unwrap().len(), 1);

        let mut w = IndexWrite::default();
        w.delete_batches_from(3);
        w.delete_sealed_from(0);
        w.delete_epoch(3);
        index.write(w, true).unwrap();
        assert_eq!(index.last_batch().unwrap(), Some(entry(0, 2, 0, 0)));
        assert!(index.epochs().unwrap().is_empty());
        assert!(index.sealed_segments().unwrap().is_empty());

        let mut w = IndexWrite::default();
        for e in [entry(3, 3, 0, 100), entry(4, 9, 4, 0)] {
            w.put_batch(&e);
        }
        w.put_epoch(3, 0);
        w.put_sealed(
            0,
            SealedSegment {
                size_bytes: 200,
                last_offset: 3,
            },
        );
        w.put_sealed(
            4,
            SealedSegment {
                size_bytes: 100,
                last_offset: 9,
            },
        );
        index.write(w, false).unwrap();
        let mut w = IndexWrite::default();
        w.delete_batches_below(4);
        w.delete_sealed_below(4);
        index.write(w, false).unwrap();
        let mut seen = vec![];
        index
            .scan_from(0, |e| {
                seen.push(e.base_offset);
                true
            })
            .unwrap();
        assert_eq!(seen, vec![4], "batches ending below 4 are gone");
        assert_eq!(
            index
                .sealed_segments()
                .unwrap()
                .keys()
                .copied()
                .collect::<Vec<_>>(),
            vec![4]
        );
        let mut w = IndexWrite::default();
        w.delete_everything();
        index.write(w, false).unwrap();
        assert_eq!(index.last_batch().unwrap(), None);
        assert!(index.epochs().unwrap().is_empty() && index.sealed_segments().unwrap().is_empty());
        assert!(
            index.has_current_format().unwrap(),
            "the version key survives"
        );
        let mut w = IndexWrite::default();
        w.put_batch(&entry(0, 2, 0, 0));
        index.write(w, true).unwrap();
        drop(index);

        let reopened = Index::open(dir.path()).unwrap();
        assert_eq!(reopened.last_batch().unwrap(), Some(entry(0, 2, 0, 0)));
        drop(reopened);
        let fresh = Index::recreate(dir.path()).unwrap();
        assert_eq!(fresh.last_batch().unwrap(), None);
        assert!(fresh.has_current_format().unwrap());
    }
}
