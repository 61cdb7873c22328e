//! Test doubles for the storage traits and the conformance suite every
//! [`ReplicatedLog`](crate::ReplicatedLog) implementation must pass.
//!
//! - [`MemLog`]: in-memory log that loses unflushed data on a simulated crash (Kafka `MockLog`),
//!   with torn-write injection for the simulation;
//! - [`MemQuorumStateStore`]: in-memory election state that survives a simulated crash;
//! - [`suite`]: the conformance cases, run against `MemLog` here and against the segment log in
//!   `kraftwerk-log` ([`log_conformance_tests!`](crate::log_conformance_tests)).
//!
//! This module is compiled into the normal library (no `cfg(test)`, no dev-only dependencies)
//! because `kraftwerk-sim` and `kraftwerk-log`'s tests use it.

mod mem_log;
mod mem_quorum_state;
pub mod suite;

pub use mem_log::MemLog;
pub use mem_quorum_state::MemQuorumStateStore;
pub use suite::{log_suite, snapshot_bytes, write_snapshot, CrashableLog, FaultyLog};

/// A disk fault the conformance suite's fault cases and the simulation inject into a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskFault {
    /// The next append's write fails (`ENOSPC`), possibly after writing part of it.
    WriteFails,
    /// The next flush's fsync fails (`EIO`): what it was to make durable may be lost.
    SyncFails,
}

impl FaultyLog for MemLog {
    fn inject(&mut self, fault: DiskFault) {
        self.inject_fault(fault);
    }

    fn flip_byte_in_batch(&mut self, offset: i64) {
        MemLog::flip_byte_in_batch(self, offset);
    }

    fn flip_byte_in_snapshot(&mut self, id: crate::storage::OffsetAndEpoch, position: u64) {
        MemLog::flip_byte_in_snapshot(self, id, position);
    }
}

impl CrashableLog for MemLog {
    fn crash_and_reopen(mut self) -> Self {
        self.crash();
        self
    }

    fn crash_torn_and_reopen(mut self, rng_value: u64) -> Self {
        self.crash_torn(rng_value);
        self
    }

    fn restart_with_retention(mut self, retention_bytes: i64, retention_ms: i64) -> Self {
        crate::ReplicatedLog::flush(&mut self).expect("MemLog flush cannot fail");
        self.crash();
        self.with_retention(retention_bytes, retention_ms)
    }

    fn log_size_bytes(&self) -> u64 {
        self.size_bytes()
    }
}

#[cfg(test)]
mod tests;

// Simulations and tests may move the doubles across threads.
const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<MemLog>();
    assert_send::<MemQuorumStateStore>();
};
