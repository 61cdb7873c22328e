//! The conformance suite against [`MemLog`], plus what only the in-memory double promises.

use super::suite::{concat, data_batch};
use super::MemLog;
use crate::storage::{OffsetAndEpoch, ReplicatedLog};

crate::log_conformance_tests!(MemLog::new);

/// The fault cases (case C10) against the in-memory log's simulated disk faults.
mod faults {
    use super::MemLog;
    crate::log_fault_tests!(MemLog::new);

    #[test]
    fn whole_fault_suite_runs_in_one_call() {
        crate::testing::suite::fault_suite(MemLog::new);
    }
}

#[test]
fn whole_suite_runs_in_one_call() {
    super::suite::log_suite(MemLog::new);
}

#[test]
fn crash_torn_reports_the_dropped_bytes_of_a_torn_batch() {
    let mut log = MemLog::new();
    let a = data_batch(0, 1, 2, 1);
    let b = data_batch(2, 1, 3, 2);
    log.append_as_leader(&a, 1).unwrap();
    log.flush().unwrap();
    log.append_as_leader(&b, 1).unwrap();
    // Keep all of b but its last byte: recovery drops the b.len() - 1 bytes that survived.
    let dropped = log.crash_torn(b.len() as u64 - 1);
    assert_eq!(dropped, b.len() - 1);
    assert_eq!(log.end_offset(), OffsetAndEpoch::new(2, 1));
    // Keeping nothing unflushed drops nothing.
    log.append_as_leader(&b, 1).unwrap();
    assert_eq!(log.crash_torn(0), 0);
    assert_eq!(log.read(0, usize::MAX).unwrap(), a);
}

#[test]
fn flush_count_and_epoch_entries_track_the_log() {
    let mut log = MemLog::new();
    let batches = concat(&[
        &data_batch(0, 1, 1, 1),
        &data_batch(1, 3, 2, 2),
        &data_batch(3, 3, 1, 3),
    ]);
    log.append_as_follower(&batches).unwrap();
    assert_eq!(log.epoch_entries(), vec![(1, 0), (3, 1)]);
    assert_eq!(log.flush_count(), 0);
    log.flush().unwrap();
    log.flush().unwrap();
    assert_eq!(log.flush_count(), 2);
    log.truncate_to(2).unwrap();
    assert_eq!(log.epoch_entries(), vec![(1, 0)]);
}
