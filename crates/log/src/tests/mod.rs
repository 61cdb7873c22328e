//! Tests of the segment log: the storage conformance suite, recovery, rolling, Java interchange.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use kraftwerk_raft::testing::CrashableLog;
use kraftwerk_raft::{LogAppendInfo, LogError, OffsetAndEpoch, ReplicatedLog, SnapshotSink};
use tempfile::TempDir;

use crate::fs::faulty::FaultyFs;
use crate::{IndexRecovery, LogConfig, ManualClock, SegmentLog};

pub(crate) use crate::testing::small_segments;

mod differential;
mod faults;
mod java_dir;
mod java_snapshots;
mod recovery;
mod rolling;
mod snapshots;
mod time_rolling;

/// A segment log in its own temporary `metadata.log.dir`, reopened in place by the crash hooks.
pub(crate) struct TestLog {
    log: Option<SegmentLog>,
    config: LogConfig,
    /// The fault-injecting file system the log runs on, if any ([`TestLog::faulty`]).
    fs: Option<FaultyFs>,
    /// The wall clock the log reads, if not the system's ([`TestLog::with_clock`]).
    clock: Option<ManualClock>,
    /// Keeps the directory alive for the life of the test.
    dir: TempDir,
}

impl TestLog {
    pub(crate) fn new(config: LogConfig) -> TestLog {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = SegmentLog::open(dir.path(), config).expect("open a new log");
        TestLog {
            log: Some(log),
            config,
            fs: None,
            clock: None,
            dir,
        }
    }

    /// A log reading wall-clock time from `clock` (also when reopened).
    pub(crate) fn with_clock(config: LogConfig, clock: ManualClock) -> TestLog {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut log = TestLog {
            log: None,
            config,
            fs: None,
            clock: Some(clock),
            dir,
        };
        log.log = Some(log.open_again().expect("open a new log"));
        log
    }

    /// A log on a [`FaultyFs`], which the test reaches through [`TestLog::fs`]. Its crash hooks
    /// are [`FaultyFs::crash`] (everything not fsynced is lost), and a crash repairs the disk
    /// (clears the faults).
    pub(crate) fn faulty(config: LogConfig) -> TestLog {
        let dir = tempfile::tempdir().expect("temp dir");
        let fs = FaultyFs::new();
        let log = SegmentLog::open_with_fs(dir.path(), config, std::sync::Arc::new(fs.clone()))
            .expect("open a new log");
        TestLog {
            log: Some(log),
            config,
            fs: Some(fs),
            clock: None,
            dir,
        }
    }

    /// The fault-injecting file system of a [`TestLog::faulty`] log.
    pub(crate) fn fs(&self) -> &FaultyFs {
        self.fs.as_ref().expect("a TestLog::faulty log")
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn log(&self) -> &SegmentLog {
        self.log.as_ref().expect("open")
    }

    pub(crate) fn log_mut(&mut self) -> &mut SegmentLog {
        self.log.as_mut().expect("open")
    }

    /// Closes the log (without flushing), lets `tamper` edit the directory, reopens it.
    pub(crate) fn reopen_after(&mut self, tamper: impl FnOnce(&Path)) {
        drop(self.log.take());
        tamper(&self.dir.path().join(crate::METADATA_PARTITION_DIR));
        let log = self.open_again().expect("reopen");
        self.log = Some(log);
    }

    /// Closes the log, lets `tamper` edit the directory, and tries to open it again; on error the
    /// log stays closed.
    pub(crate) fn try_reopen_after(
        &mut self,
        tamper: impl FnOnce(&Path),
    ) -> Result<(), crate::StorageError> {
        drop(self.log.take());
        tamper(&self.dir.path().join(crate::METADATA_PARTITION_DIR));
        self.log = Some(self.open_again()?);
        Ok(())
    }

    fn open_again(&self) -> Result<SegmentLog, crate::StorageError> {
        match &self.fs {
            None => match &self.clock {
                None => SegmentLog::open(self.dir.path(), self.config),
                Some(clock) => SegmentLog::open_with_clock(
                    self.dir.path(),
                    self.config,
                    std::sync::Arc::new(crate::fs::RealFs),
                    std::sync::Arc::new(clock.clone()),
                ),
            },
            Some(fs) => SegmentLog::open_with_fs(
                self.dir.path(),
                self.config,
                std::sync::Arc::new(fs.clone()),
            ),
        }
    }

    /// A crash of a [`TestLog::faulty`] log: with `power_loss` every file loses what was not
    /// fsynced, otherwise (a process crash) the files keep everything written, torn writes
    /// included. The disk is repaired, then the log reopens.
    fn crash_faulty(mut self, power_loss: bool) -> TestLog {
        drop(self.log.take());
        let fs = self.fs();
        if power_loss {
            fs.crash();
        }
        fs.clear_faults();
        self.log = Some(self.open_again().expect("reopen after crash"));
        self
    }

    fn crash(mut self, keep_unflushed_bytes: u64) -> TestLog {
        let root: PathBuf = self
            .log
            .take()
            .expect("open")
            .simulate_power_loss(keep_unflushed_bytes);
        assert_eq!(root, self.dir.path());
        let log = self.open_again().expect("reopen after crash");
        // The index only describes fsynced data, so a power loss never invalidates it: the
        // suite's crash cases must take the fast path, or they would not test it.
        assert_eq!(
            log.recovery_report().index,
            IndexRecovery::Verified,
            "{:?}",
            log.recovery_report()
        );
        self.log = Some(log);
        self
    }
}

impl ReplicatedLog for TestLog {
    fn end_offset(&self) -> OffsetAndEpoch {
        self.log().end_offset()
    }
    fn start_offset(&self) -> i64 {
        self.log().start_offset()
    }
    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
        self.log().end_offset_for_epoch(epoch)
    }
    fn append_as_leader(&mut self, batches: &[u8], epoch: i32) -> Result<LogAppendInfo, LogError> {
        self.log_mut().append_as_leader(batches, epoch)
    }
    fn append_as_follower(&mut self, batches: &[u8]) -> Result<LogAppendInfo, LogError> {
        self.log_mut().append_as_follower(batches)
    }
    fn read(&self, start_offset: i64, max_bytes: usize) -> Result<Bytes, LogError> {
        self.log().read(start_offset, max_bytes)
    }
    fn truncate_to(&mut self, offset: i64) -> Result<(), LogError> {
        self.log_mut().truncate_to(offset)
    }
    fn flush(&mut self) -> Result<(), LogError> {
        self.log_mut().flush()
    }
    fn flushed_end_offset(&self) -> i64 {
        self.log().flushed_end_offset()
    }
    fn snapshot_ids(&self) -> Vec<OffsetAndEpoch> {
        self.log().snapshot_ids()
    }
    fn snapshot_size_bytes(&self, id: OffsetAndEpoch) -> Result<u64, LogError> {
        self.log().snapshot_size_bytes(id)
    }
    fn read_snapshot(
        &self,
        id: OffsetAndEpoch,
        position: u64,
        max_bytes: usize,
    ) -> Result<Bytes, LogError> {
        self.log().read_snapshot(id, position, max_bytes)
    }
    fn create_snapshot(&self, id: OffsetAndEpoch) -> Result<Box<dyn SnapshotSink>, LogError> {
        self.log().create_snapshot(id)
    }
    fn register_snapshot(&mut self, id: OffsetAndEpoch) -> Result<(), LogError> {
        self.log_mut().register_snapshot(id)
    }
    fn truncate_to_latest_snapshot(&mut self) -> Result<bool, LogError> {
        self.log_mut().truncate_to_latest_snapshot()
    }
    fn delete_before_snapshot(&mut self, id: OffsetAndEpoch) -> Result<(), LogError> {
        self.log_mut().delete_before_snapshot(id)
    }
    fn maybe_clean(&mut self, high_watermark: i64, now_ms: u64) -> Result<bool, LogError> {
        self.log_mut().maybe_clean(high_watermark, now_ms)
    }
}

impl CrashableLog for TestLog {
    fn crash_and_reopen(self) -> Self {
        if self.fs.is_some() {
            return self.crash_faulty(true);
        }
        self.crash(0)
    }

    fn crash_torn_and_reopen(self, rng_value: u64) -> Self {
        if self.fs.is_some() {
            return self.crash_faulty(rng_value.is_multiple_of(2));
        }
        let unflushed = self.log().unflushed_bytes();
        self.crash(rng_value % (unflushed + 1))
    }

    fn restart_with_retention(mut self, retention_bytes: i64, retention_ms: i64) -> Self {
        self.log
            .take()
            .expect("open")
            .close()
            .expect("clean shutdown");
        self.config.retention_bytes = retention_bytes;
        self.config.retention_ms = retention_ms;
        let log = self.open_again().expect("reopen");
        assert_eq!(
            log.recovery_report().index,
            IndexRecovery::Verified,
            "{:?}",
            log.recovery_report()
        );
        self.log = Some(log);
        self
    }

    fn log_size_bytes(&self) -> u64 {
        self.log().size_bytes()
    }
}

/// The conformance suite with Kafka's default 1 GiB segments (everything in one segment).
mod conformance_one_segment {
    use super::*;
    kraftwerk_raft::log_conformance_tests!(|| TestLog::new(LogConfig::default()));
}

/// The conformance suite with 200-byte segments: nearly every batch rolls a new segment, so
/// reads, truncation and crashes all cross segment boundaries.
mod conformance_tiny_segments {
    use super::*;
    kraftwerk_raft::log_conformance_tests!(|| TestLog::new(small_segments(200)));
}
