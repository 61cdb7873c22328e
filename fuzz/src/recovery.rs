//! The `recovery` target: a metadata log directory laid out from the bytes ([`crate::layout`])
//! is opened with `SegmentLog::open` and everything it serves is read back.
//!
//! Opening must return `Ok` or a typed error. After a successful open:
//! - every offset in `[log start, log end)` reads (reads return whole batches with valid CRCs,
//!   starting with the batch that holds the offset and contiguous from there);
//! - every snapshot it lists reads back whole and passes the snapshot validator;
//! - `quorum-state`, `meta.properties` and `bootstrap.checkpoint` parse or fail typed;
//! - after closing, the directory opens again at the same log end offset with the same
//!   snapshots (the second open checks the RocksDB index the first one built).
//!
//! Everything read is also fed to the batch and record decoders ([`crate::records::decode_all`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use kraftwerk_log::bootstrap::BootstrapMetadata;
use kraftwerk_log::meta_properties::MetaProperties;
use kraftwerk_log::snapshot::SnapshotValidator;
use kraftwerk_log::{
    FileQuorumStateStore, LogConfig, SegmentLog, METADATA_PARTITION_DIR, QUORUM_STATE_FILE,
};
use kraftwerk_raft::{OffsetAndEpoch, ReplicatedLog};
use kraftwerk_records::batch::{self, BatchHeader};

use crate::layout;

/// Bytes asked for per read, as a Fetch would (small, so that reads of several batches and
/// their boundaries are exercised).
const READ_BYTES: usize = 64 * 1024;

/// Runs one input.
pub fn run(data: &[u8]) {
    let files = layout::parse(data);
    let root = scratch_dir();
    let partition = root.join(METADATA_PARTITION_DIR);
    fs::create_dir_all(&partition).expect("scratch directory");
    layout::write(&root, &partition, &files).expect("write the layout");
    check_dir(&root, &partition);
    fs::remove_dir_all(&root).expect("remove the scratch directory");
}

fn check_dir(root: &Path, partition: &Path) {
    check_side_files(root, partition);
    let log = match SegmentLog::open(root, LogConfig::default()) {
        Ok(log) => log,
        Err(e) => {
            let text = e.to_string();
            if debug() {
                eprintln!("recovery: open refused: {text}");
            }
            return;
        }
    };
    let first = read_everything(&log);
    log.close()
        .unwrap_or_else(|e| panic!("closing a recovered log failed: {e}"));
    let again = SegmentLog::open(root, LogConfig::default())
        .unwrap_or_else(|e| panic!("a log that opened and closed does not open again: {e}"));
    let second = read_everything(&again);
    assert_eq!(first, second, "the reopened log serves something else");
    if debug() {
        eprintln!("recovery: opened twice: {first:?}");
    }
}

/// `KRAFTWERK_FUZZ_DEBUG=1` prints what each input did (for looking at seeds, not for fuzzing).
fn debug() -> bool {
    static DEBUG: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DEBUG.get_or_init(|| std::env::var_os("KRAFTWERK_FUZZ_DEBUG").is_some())
}

/// What a log serves: start, end, snapshots.
#[derive(Debug, PartialEq, Eq)]
struct Served {
    start_offset: i64,
    end: OffsetAndEpoch,
    snapshots: Vec<OffsetAndEpoch>,
}

fn read_everything(log: &SegmentLog) -> Served {
    let start_offset = log.start_offset();
    let end = log.end_offset();
    let mut offset = start_offset;
    while offset < end.offset {
        let bytes = log.read(offset, READ_BYTES).unwrap_or_else(|e| {
            panic!(
                "offset {offset} of [{start_offset}, {}) does not read: {e}",
                end.offset
            )
        });
        offset = check_read(&bytes, offset);
    }
    for (epoch, _) in log.epoch_entries() {
        let answer = log.end_offset_for_epoch(epoch);
        assert!(
            answer.offset <= end.offset,
            "end offset of epoch {epoch} beyond the log end"
        );
    }
    let snapshots = log.snapshot_ids();
    for &id in &snapshots {
        read_snapshot(log, id);
    }
    Served {
        start_offset,
        end,
        snapshots,
    }
}

/// Checks the batches of one read from `offset`; returns where the next read starts.
fn check_read(bytes: &[u8], offset: i64) -> i64 {
    let mut next: Option<i64> = None;
    let mut walked = 0;
    for item in batch::batches(bytes) {
        let (header, batch) =
            item.unwrap_or_else(|e| panic!("a read from {offset} returned a bad batch: {e}"));
        batch::verify_crc(batch).unwrap_or_else(|e| {
            panic!("a read from {offset} returned a batch with a bad CRC: {e}")
        });
        check_batch_position(&header, offset, next);
        next = Some(header.next_offset());
        walked += batch.len();
    }
    assert_eq!(
        walked,
        bytes.len(),
        "a read from {offset} returned a partial batch"
    );
    crate::records::decode_all(bytes);
    let next =
        next.unwrap_or_else(|| panic!("a read from {offset} inside the log returned nothing"));
    assert!(next > offset, "a read from {offset} made no progress");
    next
}

fn check_batch_position(header: &BatchHeader, offset: i64, previous_end: Option<i64>) {
    match previous_end {
        None => assert!(
            header.base_offset <= offset && offset <= header.last_offset(),
            "a read from {offset} starts with batch {}..={}",
            header.base_offset,
            header.last_offset()
        ),
        Some(end) => assert_eq!(
            header.base_offset, end,
            "a read from {offset} skips offsets"
        ),
    }
}

fn read_snapshot(log: &SegmentLog, id: OffsetAndEpoch) {
    let size = log
        .snapshot_size_bytes(id)
        .unwrap_or_else(|e| panic!("listed snapshot {id:?} has no size: {e}"));
    let mut validator = SnapshotValidator::new();
    let mut whole = Vec::new();
    while (whole.len() as u64) < size {
        let chunk = log
            .read_snapshot(id, whole.len() as u64, READ_BYTES)
            .unwrap_or_else(|e| panic!("listed snapshot {id:?} does not read: {e}"));
        assert!(
            !chunk.is_empty(),
            "snapshot {id:?} ends before its size {size}"
        );
        let _ = validator.update(&chunk);
        whole.extend_from_slice(&chunk);
    }
    if let Err(e) = validator.finish() {
        panic!("listed snapshot {id:?} does not validate: {e}");
    }
    crate::records::decode_all(&whole);
}

/// The other files a node reads at start: they parse or fail with a typed error.
fn check_side_files(root: &Path, partition: &Path) {
    if let Err(e) = FileQuorumStateStore::new(partition.join(QUORUM_STATE_FILE)).load() {
        drop(e.to_string());
    }
    if let Err(e) = MetaProperties::read(root) {
        drop(e.to_string());
    }
    let bootstrap = root.join("bootstrap.checkpoint");
    if bootstrap.exists() {
        if let Err(e) = BootstrapMetadata::read_file(&bootstrap) {
            drop(e.to_string());
        }
    }
}

/// A fresh directory for one input, in memory when `/dev/shm` exists (the target writes and
/// fsyncs a RocksDB index per input). `KRAFTWERK_FUZZ_TMP` overrides the location.
fn scratch_dir() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = std::env::var_os("KRAFTWERK_FUZZ_TMP")
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from("/dev/shm")).filter(|p| p.is_dir()))
        .unwrap_or_else(std::env::temp_dir);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = base.join(format!("kraftwerk-fuzz-{}-{n}", std::process::id()));
    if dir.exists() {
        fs::remove_dir_all(&dir).expect("stale scratch directory");
    }
    dir
}
