//! The disk faults [`MemLog`](super::MemLog) can simulate: what it does once a write or an
//! fsync fails, as the segment log does it (case C10).

use std::io;

use crate::storage::LogError;
use crate::testing::DiskFault;

/// The fault armed on a log, and whether it has struck. Once it has, every call fails until
/// the log "restarts" (a crash, which also stands for the node coming back on a repaired disk).
#[derive(Clone, Debug, Default)]
pub(super) struct FaultState {
    armed: Option<DiskFault>,
    failed: Option<DiskFault>,
}

impl FaultState {
    pub(super) fn arm(&mut self, fault: DiskFault) {
        self.armed = Some(fault);
    }

    pub(super) fn has_failed(&self) -> bool {
        self.failed.is_some()
    }

    /// A restart: the fault is gone (the disk was repaired or replaced).
    pub(super) fn reset(&mut self) {
        *self = FaultState::default();
    }

    /// Err once a fault struck: the log refuses every call, as the segment log does.
    pub(super) fn check(&self) -> Result<(), LogError> {
        match self.failed {
            None => Ok(()),
            Some(fault) => Err(error(fault, "the log failed earlier and must be reopened")),
        }
    }

    /// Before an append writes: strikes an armed write fault.
    pub(super) fn on_write(&mut self) -> Result<(), LogError> {
        self.check()?;
        self.strike(DiskFault::WriteFails)
    }

    /// Before a flush fsyncs: strikes an armed fsync fault.
    pub(super) fn on_sync(&mut self) -> Result<(), LogError> {
        self.check()?;
        self.strike(DiskFault::SyncFails)
    }

    fn strike(&mut self, kind: DiskFault) -> Result<(), LogError> {
        if self.armed != Some(kind) {
            return Ok(());
        }
        self.armed = None;
        self.failed = Some(kind);
        Err(error(kind, "injected"))
    }
}

fn error(fault: DiskFault, what: &str) -> LogError {
    let errno = match fault {
        DiskFault::WriteFails => "ENOSPC on write",
        DiskFault::SyncFails => "EIO on fsync",
    };
    LogError::Io {
        path: "MemLog (simulated disk)".into(),
        source: io::Error::other(format!("{errno}: {what}")),
    }
}
