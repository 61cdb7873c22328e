//! State kept only while this node leads an epoch (Kafka `LeaderState`): replica progress, the
//! high watermark, check-quorum and BeginQuorumEpoch timers, parked Fetch requests and the
//! batch accumulator.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use kafka_protocol::messages::FetchRequest;
use uuid::Uuid;

use crate::config::{MAX_OBSERVERS, OBSERVER_SESSION_TIMEOUT_MS};
use crate::io::InboundId;
use crate::quorum;

/// Replication progress of one replica as the leader sees it (`LeaderState.ReplicaState`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicaProgress {
    /// Directory id the replica sent (zero for static voters).
    pub directory_id: Uuid,
    /// Its log end offset, from its last Fetch offset (or our own LEO for the leader).
    pub end_offset: Option<i64>,
    /// Time of its last Fetch, in ms.
    pub last_fetch_ms: Option<u64>,
    /// Last time it was known to have all of the leader's log, in ms.
    pub last_caught_up_ms: Option<u64>,
    /// The leader's LEO when it last fetched.
    last_fetch_leader_end_offset: Option<i64>,
}

impl ReplicaProgress {
    /// Kafka `ReplicaState.updateFollowerState`.
    fn update_on_fetch(&mut self, now_ms: u64, fetch_offset: i64, leader_end_offset: i64) {
        if fetch_offset >= leader_end_offset {
            self.last_caught_up_ms = Some(self.last_caught_up_ms.unwrap_or(0).max(now_ms));
        } else if let (Some(prev_leader_leo), Some(prev_fetch)) =
            (self.last_fetch_leader_end_offset, self.last_fetch_ms)
        {
            if prev_leader_leo > 0 && fetch_offset >= prev_leader_leo {
                self.last_caught_up_ms = Some(self.last_caught_up_ms.unwrap_or(0).max(prev_fetch));
            }
        }
        self.last_fetch_leader_end_offset = Some(leader_end_offset);
        self.last_fetch_ms = Some(self.last_fetch_ms.unwrap_or(0).max(now_ms));
        self.end_offset = Some(fetch_offset);
    }
}

/// A Fetch waiting for new data (long poll), answered at `deadline_ms` at the latest.
#[derive(Clone, Debug)]
pub(crate) struct ParkedFetch {
    pub id: InboundId,
    pub api_version: i16,
    pub request: FetchRequest,
    pub fetch_offset: i64,
    /// The fetcher's high watermark (Fetch v18); `i64::MAX` when it did not say.
    pub fetcher_high_watermark: i64,
    pub deadline_ms: u64,
}

/// Records given to the leader but not yet written to the log (`BatchAccumulator`).
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    /// Base offset of the open batch.
    pub base_offset: i64,
    pub records: Vec<Bytes>,
    pub size_bytes: usize,
    /// When the open batch was started; it is written at `opened_ms + linger`.
    pub opened_ms: Option<u64>,
    /// Closed batches waiting to be written, in order.
    pub closed: Vec<(i64, Vec<Bytes>)>,
}

#[derive(Debug)]
pub(crate) struct LeaderState {
    /// LEO when this node became leader; the LeaderChange record sits here.
    pub epoch_start_offset: i64,
    pub high_watermark: Option<i64>,
    pub voters: BTreeMap<i32, ReplicaProgress>,
    pub observers: BTreeMap<(i32, Uuid), ReplicaProgress>,
    pub begin_quorum_epoch_deadline_ms: u64,
    pub check_quorum_deadline_ms: u64,
    /// Voters that fetched since the check-quorum timer was last reset.
    pub fetched_voters: BTreeSet<i32>,
    pub parked: Vec<ParkedFetch>,
    pub accumulator: Accumulator,
    pub local_id: i32,
    /// Directory id of each voter in the set in force (`None`: a static voter, any directory
    /// matches). A replica with a voter's id and another directory is an observer (KIP-853).
    pub voter_directories: BTreeMap<i32, Option<Uuid>>,
    /// At kraft.version 0 only: the static voter set as the voters reported themselves with
    /// UpdateRaftVoter (directory ids, endpoints, supported kraft.version ranges), this leader
    /// included; kept in memory, since the static set is not in the log (Kafka
    /// `LeaderState.kraftVersionUpgradeState`, `KRaftVersionUpgrade.Voters`). An upgrade to
    /// kraft.version 1 writes it as the first `VotersRecord`.
    pub volatile_voters: Option<crate::voters::VoterSet>,
}

impl LeaderState {
    pub fn new(
        local_id: i32,
        voters: impl Iterator<Item = i32>,
        epoch_start_offset: i64,
        now_ms: u64,
        check_quorum_timeout_ms: u64,
    ) -> Self {
        Self {
            epoch_start_offset,
            high_watermark: None,
            voters: voters.map(|id| (id, ReplicaProgress::default())).collect(),
            voter_directories: BTreeMap::new(),
            observers: BTreeMap::new(),
            begin_quorum_epoch_deadline_ms: now_ms,
            check_quorum_deadline_ms: now_ms + check_quorum_timeout_ms,
            fetched_voters: BTreeSet::new(),
            parked: Vec::new(),
            accumulator: Accumulator {
                base_offset: epoch_start_offset,
                ..Default::default()
            },
            local_id,
            volatile_voters: None,
        }
        .with_static_directories()
    }

    fn with_static_directories(mut self) -> Self {
        self.voter_directories = self.voters.keys().map(|&id| (id, None)).collect();
        self
    }

    /// True if `(id, directory_id)` is a voter key of the set in force (Kafka
    /// `VoterSet.isVoter`).
    pub fn is_voter_key(&self, id: i32, directory_id: Uuid) -> bool {
        match self.voter_directories.get(&id) {
            Some(None) => true,
            Some(Some(dir)) => *dir == directory_id,
            None => false,
        }
    }

    /// Kafka `LeaderState.updateLocalState` / `updateVoterAndObserverStates`: the voter set in
    /// force changed. Progress carries over for replicas whose key stays (a new voter that was
    /// an observer keeps what it fetched); removed voters become observers; the high watermark
    /// is recomputed over the new voters (case C11: it keeps moving when the leader is not a
    /// voter any more).
    pub fn set_voters(&mut self, set: &crate::voters::VoterSet, now_ms: u64) -> bool {
        let mut old_voters = std::mem::take(&mut self.voters);
        let old_dirs = std::mem::take(&mut self.voter_directories);
        for node in set.nodes() {
            let id = node.key.id;
            let dir = node.key.directory_id;
            // A static voter (no directory) matched any directory (Kafka
            // `ReplicaState.matchesKey`): after the kraft.version upgrade names its directory,
            // it is the same voter and keeps its progress.
            let same_key = old_dirs.get(&id).is_some_and(|d| d.is_none() || *d == dir);
            let progress = match old_voters.remove(&id) {
                Some(p) if same_key => p,
                other => {
                    if let Some(p) = other {
                        // The id stays but with another directory: the old replica observes.
                        let old_dir = old_dirs.get(&id).copied().flatten().unwrap_or(Uuid::nil());
                        self.observers.insert((id, old_dir), p);
                    }
                    self.observers
                        .remove(&(id, dir.unwrap_or(Uuid::nil())))
                        .unwrap_or_default()
                }
            };
            let mut progress = progress;
            progress.directory_id = dir.unwrap_or(Uuid::nil());
            self.voters.insert(id, progress);
            self.voter_directories.insert(id, dir);
        }
        for (id, p) in old_voters {
            if id != self.local_id {
                self.observers.insert((id, p.directory_id), p);
            }
        }
        self.fetched_voters
            .retain(|id| self.voters.contains_key(id));
        if let Some(p) = self.voters.get_mut(&self.local_id) {
            p.last_fetch_ms = Some(now_ms);
            p.last_caught_up_ms = Some(now_ms);
        }
        self.maybe_update_high_watermark()
    }

    /// Updates the leader's own end offset (after a flush). Returns true if the HW moved.
    pub fn update_local_end_offset(&mut self, end_offset: i64, now_ms: u64) -> bool {
        if let Some(p) = self.voters.get_mut(&self.local_id) {
            p.end_offset = Some(end_offset);
            p.last_fetch_ms = Some(now_ms);
            p.last_caught_up_ms = Some(now_ms);
        }
        self.maybe_update_high_watermark()
    }

    /// Records a Fetch from `replica_id` at `fetch_offset`. Returns true if the HW moved.
    /// Only voters (matched by id) count toward the high watermark; ids < 0 are not tracked.
    pub fn update_replica_on_fetch(
        &mut self,
        replica_id: i32,
        directory_id: Uuid,
        fetch_offset: i64,
        leader_end_offset: i64,
        now_ms: u64,
    ) -> bool {
        if replica_id < 0 || replica_id == self.local_id {
            return false;
        }
        if self.is_voter_key(replica_id, directory_id) {
            // Static voters (kraft.version 0) are keyed by id alone; like Java, DescribeQuorum
            // reports no directory id for them.
            let p = self.voters.get_mut(&replica_id).expect("voter progress");
            p.update_on_fetch(now_ms, fetch_offset, leader_end_offset);
            self.fetched_voters.insert(replica_id);
            self.maybe_update_high_watermark()
        } else {
            let key = (replica_id, directory_id);
            if !self.observers.contains_key(&key) && self.observers.len() >= MAX_OBSERVERS {
                self.make_room_for_an_observer(now_ms);
            }
            self.observers
                .entry(key)
                .or_insert_with(|| ReplicaProgress {
                    directory_id,
                    ..Default::default()
                })
                .update_on_fetch(now_ms, fetch_offset, leader_end_offset);
            false
        }
    }

    /// Check quorum: once a majority of voters (counting ourselves) fetched, restart the timer.
    pub fn update_check_quorum(&mut self, now_ms: u64, timeout_ms: u64) {
        let majority = self.voters.len() / 2 + 1;
        let self_counts = usize::from(self.voters.contains_key(&self.local_id));
        if self.fetched_voters.len() + self_counts >= majority {
            self.fetched_voters.clear();
            self.check_quorum_deadline_ms = now_ms + timeout_ms;
        }
    }

    /// True when the quorum can no longer expire: a single-voter quorum.
    pub fn check_quorum_disabled(&self) -> bool {
        self.voters.len() == 1 && self.voters.contains_key(&self.local_id)
    }

    fn maybe_update_high_watermark(&mut self) -> bool {
        let offsets: Vec<Option<i64>> = self.voters.values().map(|p| p.end_offset).collect();
        let majority = quorum::majority_end_offset(&offsets);
        match quorum::next_high_watermark(self.high_watermark, majority, self.epoch_start_offset) {
            Some(hw) => {
                self.high_watermark = Some(hw);
                true
            }
            None => false,
        }
    }

    /// Voters other than the leader, by descending fetch offset (preferred successors).
    pub fn non_leader_voters_by_descending_end_offset(&self) -> Vec<i32> {
        let mut v: Vec<(i32, Option<i64>)> = self
            .voters
            .iter()
            .filter(|(&id, _)| id != self.local_id)
            .map(|(&id, p)| (id, p.end_offset))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.into_iter().map(|(id, _)| id).collect()
    }

    /// Forgets observers with no fetch within the observer session timeout.
    fn drop_expired_observers(&mut self, now_ms: u64) {
        self.observers.retain(|_, p| {
            p.last_fetch_ms
                .is_some_and(|t| now_ms.saturating_sub(t) < OBSERVER_SESSION_TIMEOUT_MS)
        });
    }

    /// Drops expired observers, then, if the table is still full, the one whose last fetch is
    /// the oldest.
    fn make_room_for_an_observer(&mut self, now_ms: u64) {
        self.drop_expired_observers(now_ms);
        if self.observers.len() >= MAX_OBSERVERS {
            let oldest = self
                .observers
                .iter()
                .min_by_key(|(_, p)| p.last_fetch_ms)
                .map(|(k, _)| *k);
            if let Some(key) = oldest {
                self.observers.remove(&key);
            }
        }
    }

    /// Observers that fetched within the observer session timeout.
    pub fn live_observers(&mut self, now_ms: u64) -> Vec<(i32, ReplicaProgress)> {
        self.drop_expired_observers(now_ms);
        self.observers
            .iter()
            .map(|(&(id, _), p)| (id, p.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leader() -> LeaderState {
        LeaderState::new(1, [1, 2, 3].into_iter(), 15, 0, 3000)
    }

    #[test]
    fn case_c01_high_watermark_waits_for_a_record_of_the_new_epoch() {
        // V2 (here node 1) leads epoch 2 with epoch start offset 15, LeaderChange at 15.
        let mut l = leader();
        assert!(
            !l.update_local_end_offset(16, 0),
            "leader alone is not a majority"
        );
        // V3 fetches at 15: it has 10..14 but not the LeaderChange record.
        assert!(!l.update_replica_on_fetch(3, Uuid::nil(), 15, 16, 1));
        assert_eq!(
            l.high_watermark, None,
            "HW must not be exposed at the epoch start offset"
        );
        assert!(l.update_replica_on_fetch(3, Uuid::nil(), 16, 16, 2));
        assert_eq!(l.high_watermark, Some(16));
    }

    #[test]
    fn the_observer_table_is_bounded_and_evicts_the_oldest() {
        let mut l = LeaderState::new(1, [1, 2, 3].into_iter(), 0, 0, 3_000);
        for id in 0..MAX_OBSERVERS as i32 + 5 {
            l.update_replica_on_fetch(100 + id, Uuid::nil(), 0, 10, id as u64);
        }
        assert_eq!(l.observers.len(), MAX_OBSERVERS);
        // The first five (the oldest fetches) made room for the last five.
        assert!((100..105).all(|id| !l.observers.contains_key(&(id, Uuid::nil()))));
        assert!(l
            .observers
            .contains_key(&(100 + MAX_OBSERVERS as i32 + 4, Uuid::nil())));
        // A known observer fetching again takes no room.
        l.update_replica_on_fetch(200, Uuid::nil(), 0, 10, 1_000_000);
        assert_eq!(l.observers.len(), MAX_OBSERVERS);
        // Once the others' sessions expired, a newcomer finds only 200 (which fetched later).
        let later = MAX_OBSERVERS as u64 + OBSERVER_SESSION_TIMEOUT_MS + 10;
        l.update_replica_on_fetch(99, Uuid::nil(), 0, 10, later);
        assert_eq!(l.observers.len(), 2);
        assert!(l.observers.contains_key(&(200, Uuid::nil())));
    }

    #[test]
    fn observers_never_move_the_high_watermark() {
        let mut l = leader();
        l.update_local_end_offset(20, 0);
        assert!(!l.update_replica_on_fetch(100, Uuid::nil(), 20, 20, 1));
        assert_eq!(l.high_watermark, None);
        assert_eq!(l.live_observers(2).len(), 1);
        assert!(l.live_observers(OBSERVER_SESSION_TIMEOUT_MS + 5).is_empty());
    }

    #[test]
    fn high_watermark_never_moves_backwards() {
        let mut l = leader();
        l.update_local_end_offset(20, 0);
        l.update_replica_on_fetch(2, Uuid::nil(), 20, 20, 1);
        assert_eq!(l.high_watermark, Some(20));
        // A voter that lost its disk fetches from 0 (case C02): ignored, not applied.
        assert!(!l.update_replica_on_fetch(2, Uuid::nil(), 0, 20, 2));
        assert_eq!(l.high_watermark, Some(20));
    }

    #[test]
    fn check_quorum_needs_a_majority_of_fetches() {
        let mut l = leader();
        l.update_check_quorum(100, 3000);
        assert_eq!(
            l.check_quorum_deadline_ms, 3000,
            "leader alone is not a majority of 3"
        );
        l.update_replica_on_fetch(2, Uuid::nil(), 0, 16, 100);
        l.update_check_quorum(100, 3000);
        assert_eq!(l.check_quorum_deadline_ms, 3100);
        assert!(l.fetched_voters.is_empty());
    }

    #[test]
    fn caught_up_time_follows_kafka() {
        let mut p = ReplicaProgress::default();
        p.update_on_fetch(10, 5, 8);
        assert_eq!(p.last_caught_up_ms, None);
        // Next fetch reaches the leader LEO seen at the previous fetch: caught up as of then.
        p.update_on_fetch(20, 8, 12);
        assert_eq!(p.last_caught_up_ms, Some(10));
        p.update_on_fetch(30, 12, 12);
        assert_eq!(p.last_caught_up_ms, Some(30));
    }
}
