//! The kraft.version and voter set in force, by log offset (Kafka
//! `KRaftControlRecordStateMachine` with `VoterSetHistory` and `LogHistory<KRaftVersion>`).
//!
//! Fed from the latest snapshot (its records count at `snapshot end offset - 1`; the bootstrap
//! checkpoint `0-0` at offset -1) and from every control batch of the log, whether committed
//! or not: KIP-853 puts a new voter set in force as soon as it is in the log. Truncating the
//! log drops the entries at or after the new end, so the earlier set is back in force. With no
//! `VotersRecord` anywhere (kraft.version 0) the static set of `controller.quorum.voters` is in
//! force.

use kraftwerk_records::batch::{batches, BatchError};
use kraftwerk_records::control::{decode_control_batch, ControlRecord};

use crate::voters::{VoterSet, VoterSetError};

/// Kafka `KRaftControlRecordStateMachine.STARTING_NEXT_OFFSET`: nothing read yet.
pub const STARTING_NEXT_OFFSET: i64 = -1;

/// What went wrong applying control records.
#[derive(Debug, thiserror::Error)]
pub enum ControlStateError {
    /// A control batch could not be decoded.
    #[error("control batch at offset {offset}: {source}")]
    Batch {
        /// Base offset of the batch.
        offset: i64,
        /// The decoding error.
        #[source]
        source: BatchError,
    },
    /// A `VotersRecord` is not a valid voter set, or breaks the one-change-at-a-time rule.
    #[error("voter set: {0}")]
    VoterSet(#[from] VoterSetError),
    /// A `KRaftVersionRecord` names a level this node does not support, or goes down.
    #[error("kraft.version {level} at offset {offset} is not supported (current {current})")]
    KRaftVersion {
        /// Offset of the record.
        offset: i64,
        /// Level in the record.
        level: i16,
        /// Level before it.
        current: i16,
    },
}

/// kraft.version and voter set history (see the module docs).
#[derive(Clone, Debug)]
pub struct ControlState {
    static_voters: VoterSet,
    /// `(offset, set)`, ascending offsets.
    voters: Vec<(i64, VoterSet)>,
    /// `(offset, kraft.version)`, ascending offsets.
    kraft_versions: Vec<(i64, i16)>,
    /// Next log offset to read (a batch boundary), or [`STARTING_NEXT_OFFSET`].
    pub(crate) next_offset: i64,
}

impl ControlState {
    /// A history with nothing read yet, falling back to `static_voters`.
    pub fn new(static_voters: VoterSet) -> Self {
        Self {
            static_voters,
            voters: Vec::new(),
            kraft_versions: Vec::new(),
            next_offset: STARTING_NEXT_OFFSET,
        }
    }

    /// The voter set in force: the latest one read, or the static one.
    pub fn voters(&self) -> &VoterSet {
        self.voters
            .last()
            .map(|(_, s)| s)
            .unwrap_or(&self.static_voters)
    }

    /// Offset of the voter set in force (-1 for the bootstrap checkpoint), `None` for the
    /// static set.
    pub fn voters_offset(&self) -> Option<i64> {
        self.voters.last().map(|(o, _)| *o)
    }

    /// Every voter set read, `(offset, set)` in ascending offsets (the offset of its
    /// `VotersRecord`; -1 for the bootstrap checkpoint, a snapshot's end offset - 1 for one
    /// read from a snapshot). Read-only, for checkers: the simulation counts the entries past
    /// the committed offset to check that a log never holds two uncommitted voter changes
    /// (KIP-853).
    pub fn voter_set_history(&self) -> impl Iterator<Item = (i64, &VoterSet)> + '_ {
        self.voters.iter().map(|(o, s)| (*o, s))
    }

    /// The voter set in force at `offset` (the latest at or before it).
    pub fn voters_at(&self, offset: i64) -> &VoterSet {
        self.voters
            .iter()
            .rev()
            .find(|(o, _)| *o <= offset)
            .map(|(_, s)| s)
            .unwrap_or(&self.static_voters)
    }

    /// The kraft.version in force (0 when no `KRaftVersionRecord` was read).
    pub fn kraft_version(&self) -> i16 {
        self.kraft_versions.last().map_or(0, |(_, v)| *v)
    }

    /// The kraft.version in force at `offset`.
    pub fn kraft_version_at(&self, offset: i64) -> i16 {
        self.kraft_versions
            .iter()
            .rev()
            .find(|(o, _)| *o <= offset)
            .map_or(0, |(_, v)| *v)
    }

    /// The control records Kafka's `RecordsSnapshotWriter` puts right after the SnapshotHeader
    /// of a snapshot ending at `end_offset` (exclusive): at kraft.version ≥ 1 the
    /// `KRaftVersionRecord` in force at `end_offset - 1` and, when a voter set was read from
    /// the log or a snapshot, its `VotersRecord`; nothing at kraft.version 0.
    pub fn snapshot_control_records(&self, end_offset: i64) -> Vec<ControlRecord> {
        let at = end_offset - 1;
        let version = self.kraft_version_at(at);
        if version < 1 {
            return Vec::new();
        }
        let mut records = vec![ControlRecord::kraft_version(version)];
        if let Some((_, set)) = self.voters.iter().rev().find(|(o, _)| *o <= at) {
            records.push(ControlRecord::Voters(set.to_record()));
        }
        records
    }

    /// True if some entry is at an offset `>= offset`: an uncommitted voter change when
    /// `offset` is the high watermark.
    pub fn has_voters_at_or_after(&self, offset: i64) -> bool {
        self.voters.last().is_some_and(|(o, _)| *o >= offset)
    }

    /// Forgets everything read (before reloading a snapshot).
    pub fn clear(&mut self) {
        self.voters.clear();
        self.kraft_versions.clear();
        self.next_offset = STARTING_NEXT_OFFSET;
    }

    /// Kafka `truncateNewEntries`: drops entries at offsets `>= end_offset` (the log was
    /// truncated there).
    pub fn truncate_new_entries(&mut self, end_offset: i64) {
        self.voters.retain(|(o, _)| *o < end_offset);
        self.kraft_versions.retain(|(o, _)| *o < end_offset);
        if self.next_offset > end_offset {
            self.next_offset = end_offset;
        }
    }

    /// Kafka `truncateOldEntries`: drops entries older than the newest one at or before
    /// `start_offset` (they can no longer be truncated back to).
    pub fn truncate_old_entries(&mut self, start_offset: i64) {
        fn trim<T>(v: &mut Vec<(i64, T)>, start: i64) {
            if let Some(keep) = v.iter().rposition(|(o, _)| *o <= start) {
                v.drain(..keep);
            }
        }
        trim(&mut self.voters, start_offset);
        trim(&mut self.kraft_versions, start_offset);
    }

    /// Records one control record found at `offset`. Only `KRaftVersion` and `Voters` matter.
    pub fn apply(&mut self, offset: i64, record: &ControlRecord) -> Result<(), ControlStateError> {
        match record {
            ControlRecord::KRaftVersion(r) => {
                let current = self.kraft_version();
                let level = r.k_raft_version;
                if !(crate::voters::SUPPORTED_KRAFT_VERSIONS.0
                    ..=crate::voters::SUPPORTED_KRAFT_VERSIONS.1)
                    .contains(&level)
                    || level < current
                {
                    return Err(ControlStateError::KRaftVersion {
                        offset,
                        level,
                        current,
                    });
                }
                self.kraft_versions.retain(|(o, _)| *o < offset);
                self.kraft_versions.push((offset, level));
            }
            ControlRecord::Voters(r) => {
                let set = VoterSet::from_record(r)?;
                if let Some((last_offset, last)) = self.voters.last() {
                    if *last_offset >= offset {
                        return Err(VoterSetError::OffsetNotIncreasing {
                            offset,
                            last: *last_offset,
                        }
                        .into());
                    }
                    if !last.has_overlapping_majority(&set) {
                        return Err(VoterSetError::NoOverlappingMajority {
                            offset,
                            old: last.ids().collect(),
                            new: set.ids().collect(),
                        }
                        .into());
                    }
                }
                self.voters.push((offset, set));
            }
            _ => {}
        }
        Ok(())
    }

    /// Applies every control record of the whole batches in `bytes`; records count at
    /// `offset_base + their offset` (0 for the log; for a snapshot, whose offsets restart at 0,
    /// pass the snapshot's position via [`Self::apply_snapshot_batches`]). Returns the next
    /// offset after the last whole batch, or `None` if `bytes` held none.
    pub fn apply_log_batches(&mut self, bytes: &[u8]) -> Result<Option<i64>, ControlStateError> {
        let mut next = None;
        for item in batches(bytes) {
            let (header, batch) = item.map_err(|source| ControlStateError::Batch {
                offset: self.next_offset,
                source,
            })?;
            if header.is_control() {
                let (_, records) =
                    decode_control_batch(batch).map_err(|source| ControlStateError::Batch {
                        offset: header.base_offset,
                        source,
                    })?;
                for (offset, record) in &records {
                    self.apply(*offset, record)?;
                }
            }
            next = Some(header.next_offset());
        }
        Ok(next)
    }

    /// Applies the control records at the start of a snapshot (the batches before the first
    /// data batch), all at offset `at` (the snapshot's end offset - 1; -1 for the bootstrap
    /// checkpoint). Returns true once a data batch or the footer was reached (nothing more to
    /// read), false if `bytes` ended first.
    pub fn apply_snapshot_batches(
        &mut self,
        bytes: &[u8],
        at: i64,
    ) -> Result<bool, ControlStateError> {
        for item in batches(bytes) {
            let (header, batch) =
                item.map_err(|source| ControlStateError::Batch { offset: at, source })?;
            if !header.is_control() {
                return Ok(true);
            }
            let (_, records) = decode_control_batch(batch)
                .map_err(|source| ControlStateError::Batch { offset: at, source })?;
            for (_, record) in &records {
                if matches!(record, ControlRecord::SnapshotFooter(_)) {
                    return Ok(true);
                }
                self.apply(at, record)?;
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::voters::{ReplicaKey, VoterNode};
    use kraftwerk_records::control::control_batch;
    use std::collections::BTreeMap;
    use uuid::Uuid;

    fn set(ids: &[i32]) -> VoterSet {
        VoterSet::from_nodes(ids.iter().map(|&id| VoterNode {
            key: ReplicaKey::new(id, Uuid::from_u64_pair(0, id as u64)),
            endpoints: BTreeMap::new(),
            supported_kraft_versions: (0, 1),
        }))
        .unwrap()
    }

    fn state() -> ControlState {
        ControlState::new(VoterSet::default())
    }

    #[test]
    fn the_latest_set_is_in_force_and_truncation_reverts_it() {
        let mut s = state();
        let mut bytes = control_batch(
            0,
            1,
            0,
            &[
                ControlRecord::leader_change(1, &[1], &[1]),
                ControlRecord::kraft_version(1),
                ControlRecord::Voters(set(&[1]).to_record()),
            ],
        )
        .to_vec();
        bytes.extend_from_slice(&control_batch(
            3,
            1,
            0,
            &[ControlRecord::Voters(set(&[1, 2]).to_record())],
        ));
        assert_eq!(s.apply_log_batches(&bytes).unwrap(), Some(4));
        assert_eq!(s.kraft_version(), 1);
        assert_eq!(s.voters(), &set(&[1, 2]));
        assert_eq!(s.voters_offset(), Some(3));
        assert_eq!(s.voters_at(2), &set(&[1]));
        assert!(s.has_voters_at_or_after(3));
        s.next_offset = 4;
        s.truncate_new_entries(3);
        assert_eq!(s.voters(), &set(&[1]));
        assert_eq!(s.next_offset, 3);
        s.truncate_new_entries(0);
        assert!(s.voters().is_empty(), "back to the static set");
        assert_eq!(s.kraft_version(), 0);
    }

    #[test]
    fn snapshots_carry_the_records_in_force_at_their_end() {
        let mut s = state();
        assert!(s.snapshot_control_records(10).is_empty(), "kraft.version 0");
        s.apply(-1, &ControlRecord::kraft_version(1)).unwrap();
        s.apply(-1, &ControlRecord::Voters(set(&[1]).to_record()))
            .unwrap();
        s.apply(7, &ControlRecord::Voters(set(&[1, 2]).to_record()))
            .unwrap();
        let at = |end| match s.snapshot_control_records(end).as_slice() {
            [ControlRecord::KRaftVersion(k), ControlRecord::Voters(v)] => {
                assert_eq!(k.k_raft_version, 1);
                VoterSet::from_record(v).unwrap()
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(
            at(7),
            set(&[1]),
            "offset 7 is not in a snapshot ending at 7"
        );
        assert_eq!(at(8), set(&[1, 2]));
    }

    #[test]
    fn two_changes_at_once_are_refused() {
        let mut s = state();
        s.apply(0, &ControlRecord::Voters(set(&[1, 2, 3]).to_record()))
            .unwrap();
        let err = s
            .apply(5, &ControlRecord::Voters(set(&[1, 4, 5]).to_record()))
            .unwrap_err();
        assert!(matches!(
            err,
            ControlStateError::VoterSet(VoterSetError::NoOverlappingMajority { .. })
        ));
        assert!(s.apply(5, &ControlRecord::kraft_version(2)).is_err());
    }

    #[test]
    fn snapshot_records_count_at_one_offset_and_stop_at_data() {
        let mut s = state();
        let mut bytes = control_batch(
            0,
            0,
            0,
            &[
                ControlRecord::snapshot_header(0),
                ControlRecord::kraft_version(1),
                ControlRecord::Voters(set(&[1]).to_record()),
            ],
        )
        .to_vec();
        let mut b = kraftwerk_records::batch::BatchBuilder::new(3, 0, 0);
        b.append(None, b"x");
        bytes.extend_from_slice(&b.build());
        assert!(s.apply_snapshot_batches(&bytes, -1).unwrap());
        assert_eq!(s.voters_offset(), Some(-1));
        assert_eq!(s.kraft_version(), 1);
        // Old entries go once the log start passes them, the newest before it stays.
        s.apply(10, &ControlRecord::Voters(set(&[1, 2]).to_record()))
            .unwrap();
        s.truncate_old_entries(20);
        assert_eq!(s.voters.len(), 1);
        assert_eq!(s.voters_at(15), &set(&[1, 2]));
    }
}
