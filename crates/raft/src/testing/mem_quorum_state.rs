//! [`MemQuorumStateStore`]: the in-memory election-state store (Kafka `MockQuorumStateStore`).

use std::sync::{Arc, Mutex, MutexGuard};

use crate::storage::{ElectionState, LogError, QuorumStateStore};

#[derive(Debug, Default)]
struct Stored {
    state: Option<ElectionState>,
    write_count: u64,
    /// kraft.version of the last write (the file store's data_version).
    kraft_version: i16,
    /// kraft.version the next write uses.
    next_kraft_version: i16,
}

/// An in-memory [`QuorumStateStore`] whose contents survive a simulated crash.
///
/// Every [`write`](QuorumStateStore::write) is durable when it returns, as with the file store
/// (which fsyncs before returning). Clones share the same storage: a simulation keeps one clone
/// per node as "the disk", hands another to the Raft core, and after a crash gives a fresh clone
/// to the restarted core, which then reads what the old one wrote.
#[derive(Clone, Debug, Default)]
pub struct MemQuorumStateStore {
    stored: Arc<Mutex<Stored>>,
}

impl MemQuorumStateStore {
    /// An empty store: [`read`](QuorumStateStore::read) returns `None` until the first write.
    pub fn new() -> Self {
        Self::default()
    }

    /// The stored state without going through the trait (for assertions).
    pub fn current(&self) -> Option<ElectionState> {
        self.lock().state.clone()
    }

    /// Number of writes so far, shared by all clones (tests assert that a transition persisted).
    pub fn write_count(&self) -> u64 {
        self.lock().write_count
    }

    /// The kraft.version (the file store's `data_version`) the last write was made at.
    pub fn written_kraft_version(&self) -> i16 {
        self.lock().kraft_version
    }

    fn lock(&self) -> MutexGuard<'_, Stored> {
        // A panic while holding the lock cannot leave `Stored` half-written: both fields are
        // replaced by plain assignments.
        self.stored
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl QuorumStateStore for MemQuorumStateStore {
    fn read(&self) -> Result<Option<ElectionState>, LogError> {
        Ok(self.lock().state.clone())
    }

    fn write(&mut self, state: &ElectionState) -> Result<(), LogError> {
        let mut stored = self.lock();
        stored.state = Some(state.clone());
        stored.write_count += 1;
        stored.kraft_version = stored.next_kraft_version;
        Ok(())
    }

    fn set_kraft_version(&mut self, kraft_version: i16) {
        self.lock().next_kraft_version = kraft_version;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_durable_state_across_a_crash() {
        let disk = MemQuorumStateStore::new();
        let mut node = disk.clone();
        assert_eq!(node.read().unwrap(), None);
        let state = ElectionState {
            epoch: 3,
            voted_id: Some(2),
            voters: vec![1, 2, 3],
            ..Default::default()
        };
        node.write(&state).unwrap();
        drop(node); // the node crashes
        let restarted = disk.clone();
        assert_eq!(restarted.read().unwrap(), Some(state));
        assert_eq!(disk.write_count(), 1);
    }
}
