//! Keeping the kraft.version and voter set in force up to date with the log (Kafka
//! `KRaftControlRecordStateMachine.updateState`), and what a change of the set means for the
//! role this node is in.

use tracing::info;

use super::{RaftCore, RaftError};
use crate::control_state::STARTING_NEXT_OFFSET;
use crate::role::Role;
use crate::storage::{LogError, OffsetAndEpoch, QuorumStateStore, ReplicatedLog};

/// Bytes read from the log per step when catching up with its control records.
const READ_CHUNK_BYTES: usize = 8 * 1024 * 1024;
/// Bytes read from a snapshot per step looking for its leading control records.
const SNAPSHOT_CHUNK_BYTES: usize = 64 * 1024;
/// Kafka `BOOTSTRAP_SNAPSHOT_ID`: the checkpoint `format` writes for a dynamic quorum.
const BOOTSTRAP_SNAPSHOT: OffsetAndEpoch = OffsetAndEpoch {
    epoch: 0,
    offset: 0,
};

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    /// Reads what is new in the log (and the latest snapshot first, when the history is empty
    /// or the log start moved past it) into the kraft.version / voter set history, then reacts
    /// to a change of either. Call after every append, truncation and snapshot install.
    pub(crate) fn update_control_state(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let before_voters = self.control.voters().clone();
        let before_version = self.control.kraft_version();
        let start = self.log.start_offset();
        if self.control.next_offset == STARTING_NEXT_OFFSET || self.control.next_offset < start {
            self.load_snapshot_control_records()?;
            if self.control.next_offset < start {
                self.control.next_offset = start;
            }
        }
        let end = self.log.end_offset().offset;
        while self.control.next_offset < end {
            let bytes = self.log.read(self.control.next_offset, READ_CHUNK_BYTES)?;
            match self.control.apply_log_batches(&bytes)? {
                Some(next) if next > self.control.next_offset => self.control.next_offset = next,
                _ => {
                    return Err(RaftError::Storage(LogError::Inconsistent(format!(
                        "no whole batch at offset {} below the log end offset {end}",
                        self.control.next_offset
                    ))))
                }
            }
        }
        if self.control.kraft_version() != before_version {
            info!(
                from = before_version,
                to = self.control.kraft_version(),
                "kraft.version changed"
            );
            self.store.set_kraft_version(self.control.kraft_version());
        }
        if *self.control.voters() != before_voters {
            info!(
                voters = ?self.control.voters().ids().collect::<Vec<_>>(),
                offset = ?self.control.voters_offset(),
                "voter set changed"
            );
            self.on_voter_set_changed(now_ms);
        }
        Ok(())
    }

    /// Starts the history over from the latest snapshot (the bootstrap checkpoint `0-0` when
    /// there is no other): its control records count at `end offset - 1`, -1 for `0-0`.
    fn load_snapshot_control_records(&mut self) -> Result<(), RaftError> {
        self.control.clear();
        let (id, at) = match self.log.latest_snapshot_id() {
            Some(id) => (id, id.offset - 1),
            None => match self.log.snapshot_size_bytes(BOOTSTRAP_SNAPSHOT) {
                Ok(_) => (BOOTSTRAP_SNAPSHOT, -1),
                Err(LogError::SnapshotNotFound { .. }) => {
                    self.control.next_offset = self.log.start_offset();
                    return Ok(());
                }
                Err(e) => return Err(e.into()),
            },
        };
        let size = self.log.snapshot_size_bytes(id)?;
        let mut read = 0u64;
        let mut buf = Vec::new();
        while read < size {
            let chunk = self.log.read_snapshot(id, read, SNAPSHOT_CHUNK_BYTES)?;
            if chunk.is_empty() {
                break;
            }
            read += chunk.len() as u64;
            buf.extend_from_slice(&chunk);
            let mut probe = self.control.clone();
            if probe.apply_snapshot_batches(&buf, at)? {
                self.control = probe;
                break;
            }
            if read >= size {
                self.control = probe;
            }
        }
        self.control.next_offset = id.offset;
        info!(
            snapshot = ?id,
            kraft_version = self.control.kraft_version(),
            voters = ?self.control.voters().ids().collect::<Vec<_>>(),
            "voter set loaded from snapshot"
        );
        Ok(())
    }

    /// The voter set in force changed: the leader tracks the new voters; a node that became a
    /// voter or an observer starts or stops its election timer.
    fn on_voter_set_changed(&mut self, now_ms: u64) {
        let voters = self.control.voters().clone();
        let is_voter = self.is_voter();
        let moved = match &mut self.role {
            Role::Leader(l) => l.set_voters(&voters, now_ms),
            _ => false,
        };
        if moved {
            self.on_leader_high_watermark_moved(now_ms);
        }
        let needs_timer = matches!(&self.role,
            Role::Unattached(u) if is_voter && u.election_deadline_ms.is_none());
        let deadline = needs_timer.then(|| self.random_election_deadline(now_ms));
        if let Role::Unattached(u) = &mut self.role {
            if !is_voter {
                u.election_deadline_ms = None;
            } else if deadline.is_some() {
                u.election_deadline_ms = deadline;
            }
        }
    }
}
