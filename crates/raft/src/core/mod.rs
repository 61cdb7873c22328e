//! [`RaftCore`]: the single-threaded KRaft state machine (Kafka `KafkaRaftClient` + `QuorumState`).
//!
//! Contract with the driver:
//! 1. Call [`RaftCore::handle`] for every input and [`RaftCore::poll`] when
//!    [`RaftCore::next_deadline_ms`] is reached (or any time; polling early is harmless).
//! 2. After each call, deliver [`RaftCore::take_outputs`]. Every write a message depends on
//!    (log append, `quorum-state`) was made durable before the message was queued.
//! 3. Read committed batches from [`RaftCore::log`] up to [`RaftCore::high_watermark`].
//!
//! Any `Err(RaftError)` is fatal: the node must stop (storage failures, or a peer claiming a
//! different leader for an epoch we already know, which Kafka also treats as fatal).

mod auto_join;
mod describe;
mod epoch_change;
mod fetch_follower;
mod fetch_leader;
mod kraft_upgrade;
mod membership;
#[cfg(test)]
mod tests;
mod timers;
mod transitions;
mod update_voter;
mod vote;
mod voter_change;

pub use kraft_upgrade::KraftUpgradeError;
pub use voter_change::{VoterChangeAnswer, CAUGHT_UP_WINDOW_MS};

use std::collections::BTreeSet;

use bytes::Bytes;
use kraftwerk_protocol::constants::{BATCH_HEADER_ROOM_BYTES, RECORD_FRAMING_BYTES};
use kraftwerk_records::batch::{BatchBuilder, MAX_BATCH_BYTES, MAX_RECORDS_PER_BATCH};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use tracing::info;

use crate::config::RaftConfig;
use crate::errors;
use crate::io::{Input, Output, RaftRequest, RaftResponse, SendFailure};
use crate::leader::ParkedFetch;
use crate::requests::RequestManager;
use crate::role::{Candidate, Follower, Resigned, Role, RoleKind, Unattached};
use crate::storage::{LogError, QuorumStateStore, ReplicatedLog};

/// A fatal error: the node must stop.
#[derive(Debug, thiserror::Error)]
pub enum RaftError {
    /// The log or the quorum-state store failed.
    #[error("storage failure: {0}")]
    Storage(#[from] LogError),
    /// No epoch is left for another election (only reachable after about a million elections
    /// above [`crate::config::MAX_REQUEST_EPOCH`]).
    #[error("the epoch cannot grow past {}", i32::MAX)]
    EpochExhausted,
    /// A control record in the log or a snapshot cannot be applied: an invalid `VotersRecord`,
    /// two voter changes at once, an unsupported kraft.version (Kafka throws in
    /// `KRaftControlRecordStateMachine` too; the log is not usable by this node).
    #[error("control records: {0}")]
    ControlRecords(#[from] crate::control_state::ControlStateError),
    /// The leader asked us to truncate below our high watermark (would lose committed data).
    #[error("leader requested truncation to {offset}, below the high watermark {high_watermark}")]
    TruncationBelowHighWatermark {
        /// Requested truncation offset.
        offset: i64,
        /// Our high watermark.
        high_watermark: i64,
    },
}

/// Why [`RaftCore::append`] refused records.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppendError {
    /// Only the leader appends (and not while resigning).
    #[error("not the leader")]
    NotLeader,
    /// An atomic append must fit one batch: at most 10,000 records and 8 MiB.
    #[error("batch too large: {records} records, {bytes} bytes")]
    TooLarge {
        /// Records offered.
        records: usize,
        /// Their total size.
        bytes: usize,
    },
}

/// Upper bound of the bytes `records` take in a batch: each value plus its framing
/// (`RECORD_FRAMING_BYTES`: length, attributes, deltas, key, header count).
fn batch_bytes_estimate(records: &[Bytes]) -> usize {
    records.iter().map(|r| r.len() + RECORD_FRAMING_BYTES).sum()
}

/// Whether `records` (encoded metadata record values) fit one batch the leader appends: at
/// most [`MAX_RECORDS_PER_BATCH`] records and [`MAX_BATCH_BYTES`] with room for the record
/// framing and the batch header (`kraftwerk_protocol::constants::batch_fits_sizes`, the bound
/// the controller also applies to its results). [`RaftCore::append`] refuses anything else;
/// writers check first so that a result is appended whole or not at all.
pub fn batch_fits(records: &[Bytes]) -> bool {
    let value_bytes = records.iter().map(Bytes::len).sum();
    kraftwerk_protocol::constants::batch_fits_sizes(records.len(), value_bytes)
}

/// Current leader and epoch as this node knows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaderAndEpoch {
    /// Leader id, if known.
    pub leader_id: Option<i32>,
    /// Quorum epoch.
    pub epoch: i32,
}

/// Counters and timings for metrics (Kafka `KafkaRaftMetrics`), in ms of node time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RaftMetrics {
    /// Pre-vote rounds this node started (transitions to Prospective).
    pub prospective_rounds: u64,
    /// Elections this node started (transitions to Candidate).
    pub elections_started: u64,
    /// Epochs this node led.
    pub elections_won: u64,
    /// Time from the start of the last election (first candidacy of a streak, or the loss of
    /// the previous leader) until a leader was known, in ms.
    pub last_election_latency_ms: Option<u64>,
    /// Leaderless periods that ended with a leader known: how many times
    /// `last_election_latency_ms` was set (so each one is counted once, `election-latency`).
    pub elections_completed: u64,
    /// Time from winning the last election until the first high-watermark advance in that
    /// epoch (the LeaderChange record committed: the new leader can serve), in ms.
    pub last_time_to_first_commit_ms: Option<u64>,
    /// When this node last saw the leader change, node time in ms.
    pub last_leader_change_ms: u64,
}

/// The Raft core. `L` is the metadata log, `Q` the `quorum-state` store.
pub struct RaftCore<L, Q> {
    pub(crate) config: RaftConfig,
    pub(crate) log: L,
    store: Q,
    rng: SmallRng,
    pub(crate) epoch: i32,
    pub(crate) role: Role,
    /// Committed offset known to this node (exclusive); never decreases.
    pub(crate) high_watermark: Option<i64>,
    pub(crate) requests: RequestManager,
    outputs: Vec<Output>,
    shutting_down: bool,
    /// Voters that refused a connection since the shutdown began (see
    /// [`Self::shutdown_may_complete`]).
    unreachable_while_stopping: BTreeSet<i32>,
    /// Set when leadership is gained; cleared by [`RaftCore::take_leadership_event`].
    became_leader: bool,
    /// Fetches parked by a leadership we just left, answered once the new role is in place.
    pending_reanswer: Vec<ParkedFetch>,
    /// Fetches that arrived while this node knew no other leader (it resigned, or an election
    /// is on), held until one is known or their MaxWaitMs ends, at most `MAX_HELD_FETCHES`:
    /// answered at once they could name nobody, and an observer whose bootstrap servers are
    /// gone but this node would never learn the new leader (Kafka answers at once).
    held_fetches: Vec<ParkedFetch>,
    /// Set when a snapshot from the leader replaced the log; cleared by
    /// [`RaftCore::take_snapshot_installed`] (the state machine must reload from it).
    pub(crate) snapshot_installed: Option<crate::storage::OffsetAndEpoch>,
    metrics: RaftMetrics,
    /// When the current leaderless period began (for election latency).
    leaderless_since_ms: Option<u64>,
    /// When this node became leader of the current epoch, until its first commit.
    leader_since_ms: Option<u64>,
    /// Random delay for the current fast failure detection.
    fast_failure_jitter_ms: u64,
    /// kraft.version and voter set history read from the snapshot and the log (KIP-853).
    pub(crate) control: crate::control_state::ControlState,
    /// Directory id of the candidate voted for in this epoch, `(candidate id, directory id)`
    /// (kept in `quorum-state` data_version 1 as `votedDirectoryId`).
    pub(crate) voted_directory: Option<(i32, uuid::Uuid)>,
    /// Leader endpoints on our listener learned from peers (`NodeEndpoints` in responses,
    /// `LeaderEndpoints` in BeginQuorumEpoch), for leaders outside the voter set in force (an
    /// observer that only knows bootstrap servers; a leader that removed itself). At most
    /// [`crate::config::MAX_LEARNED_ENDPOINTS`], the oldest learned going first.
    pub(crate) learned_endpoints: std::collections::VecDeque<(i32, crate::config::Endpoint)>,
    /// The leader's voter change appended and not yet answered (one at a time, KIP-853).
    pub(crate) pending_voter_change: Option<voter_change::PendingVoterChange>,
    /// Answers to voter changes, for [`RaftCore::take_voter_change_answers`].
    pub(crate) voter_change_answers: Vec<VoterChangeAnswer>,
    /// The leader removed itself and the removal committed: resign at the next poll (C11).
    pub(crate) resign_requested: bool,
}

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    /// Starts a node from its log and `quorum-state` (Kafka `QuorumState.initialize`): a node
    /// whose file says it led an epoch comes back Resigned in that epoch, a stored self-vote
    /// resumes the candidacy, a known leader makes it a follower.
    pub fn new(
        config: RaftConfig,
        log: L,
        store: Q,
        seed: u64,
        now_ms: u64,
    ) -> Result<Self, RaftError> {
        let stored = store.read()?.unwrap_or_default();
        let log_end = log.end_offset();
        let static_voters =
            crate::voters::VoterSet::from_static(&config.voters, &config.listener_name);
        let mut core = Self {
            config,
            log,
            store,
            rng: SmallRng::seed_from_u64(seed),
            epoch: stored.epoch,
            role: Role::Unattached(Unattached {
                voted: None,
                leader_hint: None,
                election_deadline_ms: None,
            }),
            high_watermark: None,
            requests: RequestManager::default(),
            outputs: Vec::new(),
            shutting_down: false,
            unreachable_while_stopping: BTreeSet::new(),
            became_leader: false,
            pending_reanswer: Vec::new(),
            held_fetches: Vec::new(),
            snapshot_installed: None,
            metrics: RaftMetrics::default(),
            leaderless_since_ms: Some(now_ms),
            leader_since_ms: None,
            fast_failure_jitter_ms: 0,
            control: crate::control_state::ControlState::new(static_voters),
            learned_endpoints: std::collections::VecDeque::new(),
            pending_voter_change: None,
            voter_change_answers: Vec::new(),
            resign_requested: false,
            voted_directory: stored
                .voted_id
                .zip(stored.voted_directory_id)
                .filter(|(_, d)| !d.is_nil()),
        };
        core.store.set_kraft_version(0);
        core.update_control_state(now_ms)?;
        let id = core.config.node_id;
        if stored.epoch < log_end.epoch {
            info!(
                stored_epoch = stored.epoch,
                log_epoch = log_end.epoch,
                "quorum-state is behind the log"
            );
            core.transition_to_unattached(log_end.epoch, now_ms)?;
        } else if stored.leader_id == Some(id) {
            // Never lead the same epoch twice: unflushed data may be lost, so offsets+epoch
            // would no longer identify one batch.
            let deadline = core.random_election_deadline(now_ms);
            core.role = Role::Resigned(Resigned {
                election_deadline_ms: deadline,
                unacked: BTreeSet::new(),
                preferred_successors: Vec::new(),
            });
        } else if stored.voted_id == Some(id) && core.is_voter() {
            let deadline = core.random_election_deadline(now_ms);
            core.role = Role::Candidate(Candidate {
                retries: 1,
                granted: BTreeSet::from([id]),
                rejected: BTreeSet::new(),
                election_deadline_ms: deadline,
            });
        } else if let Some(leader) = stored.leader_id.filter(|l| core.voter_set().contains(*l)) {
            core.role = Role::Follower(Follower {
                leader_id: leader,
                fetch_deadline_ms: now_ms + core.config.fetch_timeout_ms,
                voted: stored.voted_id,
                fetching_snapshot: None,
                has_fetched_from_leader: false,
                update_voter_deadline_ms: now_ms + 3 * core.config.fetch_timeout_ms,
                has_updated_leader: false,
                leader_unreachable_since_ms: None,
            });
        } else {
            let deadline = core
                .is_voter()
                .then(|| core.random_election_deadline(now_ms));
            core.role = Role::Unattached(Unattached {
                voted: stored.voted_id,
                leader_hint: stored.leader_id,
                election_deadline_ms: deadline,
            });
        }
        info!(node_id = id, epoch = core.epoch, role = %core.role.kind(), log_end_offset = log_end.offset, "raft initialized");
        if core.voter_set().len() == 1 && core.is_voter() && !matches!(core.role, Role::Leader(_)) {
            core.transition_to_candidate(now_ms)?;
        }
        Ok(core)
    }

    // ----- queries -------------------------------------------------------------------------

    /// The log (read access for the state machine: committed batches are those below
    /// [`high_watermark`](Self::high_watermark)).
    pub fn log(&self) -> &L {
        &self.log
    }

    /// The log, writable: the core's tests fail or damage it under a running core.
    #[cfg(test)]
    pub(crate) fn log_mut(&mut self) -> &mut L {
        &mut self.log
    }

    /// Stops the core and hands back its storage (the simulation crashes and restarts nodes).
    pub fn into_parts(self) -> (L, Q) {
        (self.log, self.store)
    }

    /// This node's configuration.
    pub fn config(&self) -> &RaftConfig {
        &self.config
    }

    /// The voter set in force (KIP-853: the latest in the log, committed or not; the static
    /// `controller.quorum.voters` at kraft.version 0).
    pub fn voter_set(&self) -> &crate::voters::VoterSet {
        self.control.voters()
    }

    /// The kraft.version in force (the latest `KRaftVersionRecord` in the snapshot or the log,
    /// committed or not; 0 without one). The controller reports it as the finalized
    /// `kraft.version` feature.
    pub fn kraft_version(&self) -> i16 {
        self.control.kraft_version()
    }

    /// The kraft.version and voter set history (for the snapshot writer: the records at an
    /// offset are [`ControlState::kraft_version_at`](crate::control_state::ControlState::kraft_version_at)
    /// and [`ControlState::voters_at`](crate::control_state::ControlState::voters_at)).
    pub fn control_state(&self) -> &crate::control_state::ControlState {
        &self.control
    }

    /// This node's replica key (node id, metadata directory id).
    pub fn local_key(&self) -> crate::voters::ReplicaKey {
        crate::voters::ReplicaKey::new(self.config.node_id, self.config.directory_id)
    }

    /// True if this node is a voter of the set in force, directory id included: a voter whose
    /// disk was wiped (new directory id) is an observer (KIP-853, case C02 (b)).
    pub fn is_voter(&self) -> bool {
        self.voter_set().is_voter(self.local_key())
    }

    /// Where node `id` is reached on our controller listener: a bootstrap server for a
    /// negative id, else the voter set in force, else an endpoint learned from a peer.
    pub(crate) fn resolve(&self, id: i32) -> Option<crate::config::Endpoint> {
        if id < 0 {
            let index = usize::try_from(-2 - i64::from(id)).ok()?;
            return self.config.bootstrap_servers.get(index).cloned();
        }
        if id == self.config.node_id {
            if let Some(e) = self
                .local_voter_node()
                .and_then(|n| n.endpoint(&self.config.listener_name).cloned())
            {
                return Some(e);
            }
        }
        self.voter_set()
            .endpoint(id, &self.config.listener_name)
            .cloned()
            .or_else(|| {
                self.learned_endpoints
                    .iter()
                    .rev()
                    .find(|(n, _)| *n == id)
                    .map(|(_, e)| e.clone())
            })
    }

    /// Remembers the endpoint a peer gave for leader `id` (ids < 0, empty hosts and port 0 are
    /// ignored: Kafka sends no endpoint when the leader is unknown).
    /// A static quorum without bootstrap servers only ever follows its configured voters, as
    /// before KIP-853.
    pub(crate) fn learn_endpoint(&mut self, id: i32, host: &str, port: i64) {
        if self.kraft_version() == 0 && self.config.bootstrap_servers.is_empty() {
            return;
        }
        let Ok(port) = u16::try_from(port) else {
            return;
        };
        if id < 0 || host.is_empty() || port == 0 {
            return;
        }
        let endpoint = crate::config::Endpoint {
            host: host.to_owned(),
            port,
        };
        if self
            .learned_endpoints
            .back()
            .is_some_and(|(n, e)| *n == id && *e == endpoint)
        {
            return;
        }
        self.learned_endpoints.retain(|(n, _)| *n != id);
        if self.learned_endpoints.len() >= crate::config::MAX_LEARNED_ENDPOINTS {
            self.learned_endpoints.pop_front();
        }
        self.learned_endpoints.push_back((id, endpoint));
    }

    /// Size of a majority of the voter set in force.
    pub(crate) fn majority(&self) -> usize {
        self.voter_set().majority()
    }

    /// Current role.
    pub fn role(&self) -> RoleKind {
        self.role.kind()
    }

    /// Current epoch.
    pub fn epoch(&self) -> i32 {
        self.epoch
    }

    /// Leader and epoch as known locally.
    pub fn leader_and_epoch(&self) -> LeaderAndEpoch {
        LeaderAndEpoch {
            leader_id: self.leader_id(),
            epoch: self.epoch,
        }
    }

    pub(crate) fn leader_id(&self) -> Option<i32> {
        match &self.role {
            Role::Leader(_) | Role::Resigned(_) => Some(self.config.node_id),
            Role::Follower(f) => Some(f.leader_id),
            Role::Unattached(_) | Role::Prospective(_) | Role::Candidate(_) => None,
        }
    }

    /// The leader of the current epoch as far as this node knows, including the one a
    /// Prospective left (Kafka keeps it in `ProspectiveState`): a peer naming it again is not
    /// news, and a peer naming another one for this epoch is inconsistent.
    pub(crate) fn known_leader(&self) -> Option<i32> {
        match &self.role {
            Role::Prospective(p) => p.prior_leader,
            _ => self.leader_id(),
        }
    }

    /// The candidate this node voted for in the current epoch, if any (`QuorumState.votedKey`,
    /// for `kafka.server:type=raft-metrics` `current-vote`). A candidate or leader voted for
    /// itself.
    pub fn voted_id(&self) -> Option<i32> {
        match &self.role {
            Role::Unattached(u) => u.voted,
            Role::Prospective(p) => p.voted,
            Role::Follower(f) => f.voted,
            Role::Candidate(_) | Role::Leader(_) | Role::Resigned(_) => Some(self.config.node_id),
        }
    }

    /// True if this node leads the current epoch and accepts appends.
    pub fn is_leader(&self) -> bool {
        matches!(self.role, Role::Leader(_))
    }

    /// Exclusive offset below which everything is committed, if known. Never decreases.
    pub fn high_watermark(&self) -> Option<i64> {
        self.high_watermark
    }

    /// Offset of the LeaderChange record that opened this node's leadership, if leader.
    pub fn epoch_start_offset(&self) -> Option<i64> {
        match &self.role {
            Role::Leader(l) => Some(l.epoch_start_offset),
            _ => None,
        }
    }

    /// True once since the last call if this node became leader (for controller activation).
    pub fn take_leadership_event(&mut self) -> bool {
        std::mem::take(&mut self.became_leader)
    }

    /// The snapshot that replaced the log since the last call, if any: the state machine must
    /// reload its state from it (everything it replayed before is superseded).
    pub fn take_snapshot_installed(&mut self) -> Option<crate::storage::OffsetAndEpoch> {
        self.snapshot_installed.take()
    }

    /// Starts a snapshot this node generates from its own state at `id` (which must be at or
    /// below the high watermark, on a batch boundary). The sink may be filled on another thread;
    /// afterwards call [`register_snapshot`](Self::register_snapshot).
    pub fn create_snapshot(
        &self,
        id: crate::storage::OffsetAndEpoch,
    ) -> Result<Box<dyn crate::storage::SnapshotSink>, RaftError> {
        assert!(
            self.high_watermark.is_some_and(|hw| id.offset <= hw),
            "snapshot {id:?} beyond the high watermark {:?}",
            self.high_watermark
        );
        Ok(self.log.create_snapshot(id)?)
    }

    /// Adds a finished snapshot to the log's catalog.
    pub fn register_snapshot(
        &mut self,
        id: crate::storage::OffsetAndEpoch,
    ) -> Result<(), RaftError> {
        Ok(self.log.register_snapshot(id)?)
    }

    /// Runs the log's retention (Kafka `maybeClean`, every 60 s in Kafka): segments below a
    /// snapshot go once the size or time limits are exceeded. Returns true if anything was
    /// deleted.
    pub fn maybe_clean_log(&mut self, now_ms: u64) -> Result<bool, RaftError> {
        let cleaned = match self.high_watermark {
            Some(hw) => self.log.maybe_clean(hw, now_ms)?,
            None => false,
        };
        if cleaned {
            self.control.truncate_old_entries(self.log.start_offset());
        }
        Ok(cleaned)
    }

    /// Counters and timings for metrics.
    pub fn metrics(&self) -> &RaftMetrics {
        &self.metrics
    }

    /// The leader's view of every replica (voters first, then observers that fetched within
    /// the observer session), with `is_voter`; empty unless leader.
    pub fn replica_states(&self) -> Vec<(i32, bool, crate::leader::ReplicaProgress)> {
        match &self.role {
            Role::Leader(l) => l
                .voters
                .iter()
                .map(|(&id, p)| (id, true, p.clone()))
                .chain(
                    l.observers
                        .iter()
                        .map(|(&(id, _), p)| (id, false, p.clone())),
                )
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Bookkeeping for election metrics after any role change.
    fn note_role_change(&mut self, now_ms: u64) {
        match &self.role {
            Role::Unattached(_) | Role::Prospective(_) | Role::Candidate(_) => {
                self.leaderless_since_ms.get_or_insert(now_ms);
            }
            Role::Leader(_) | Role::Follower(_) | Role::Resigned(_) => {
                if let Some(since) = self.leaderless_since_ms.take() {
                    self.metrics.last_election_latency_ms = Some(now_ms.saturating_sub(since));
                    self.metrics.elections_completed += 1;
                }
                self.metrics.last_leader_change_ms = now_ms;
            }
        }
    }

    /// Messages to deliver, in order.
    pub fn take_outputs(&mut self) -> Vec<Output> {
        std::mem::take(&mut self.outputs)
    }

    pub(crate) fn emit(&mut self, output: Output) {
        self.outputs.push(output);
    }

    /// Earliest time at which [`poll`](Self::poll) has work to do, in ms.
    pub fn next_deadline_ms(&self) -> u64 {
        let role_deadline = match &self.role {
            Role::Unattached(u) if self.is_voter() => u.election_deadline_ms.unwrap_or(u64::MAX),
            // An observer looks for the leader (Kafka `pollUnattachedAsObserver`): at once when
            // no discovery fetch is in flight or backing off, else when that ends (the
            // requests' deadline below). Without this a driver that sleeps until the deadline
            // would never send the first discovery fetch.
            Role::Unattached(_)
                if self.requests.next_deadline_ms().is_none() && self.has_discovery_target() =>
            {
                0
            }
            Role::Unattached(_) => u64::MAX,
            Role::Prospective(p) => p.election_deadline_ms,
            Role::Candidate(c) => c.election_deadline_ms,
            // An observer waits on its one fetch (to the leader, or a discovery fetch once
            // its fetch timeout expired) or on its backoff, as Kafka's
            // `pollFollowerAsObserver` does; the expired timer alone would make the driver
            // poll in a busy loop while the leader is unreachable.
            Role::Follower(_) if !self.is_voter() && self.requests.next_deadline_ms().is_some() => {
                u64::MAX
            }
            Role::Follower(f) => self.follower_deadline_ms(f),
            Role::Resigned(r) => r.election_deadline_ms,
            Role::Leader(l) => {
                let mut d = l.begin_quorum_epoch_deadline_ms;
                if !l.check_quorum_disabled() {
                    d = d.min(l.check_quorum_deadline_ms);
                }
                if let Some(opened) = l.accumulator.opened_ms {
                    d = d.min(opened + self.config.append_linger_ms);
                }
                if !l.accumulator.closed.is_empty() {
                    d = 0;
                }
                if let Some(p) = &self.pending_voter_change {
                    d = d.min(p.deadline_ms);
                }
                if self.resign_requested {
                    d = 0;
                }
                l.parked.iter().map(|p| p.deadline_ms).fold(d, u64::min)
            }
        };
        let held = self.held_fetches.iter().map(|f| f.deadline_ms).min();
        role_deadline
            .min(self.requests.next_deadline_ms().unwrap_or(u64::MAX))
            .min(held.unwrap_or(u64::MAX))
    }

    // ----- inputs ----------------------------------------------------------------------------

    /// Handles one input at time `now_ms`.
    pub fn handle(&mut self, now_ms: u64, input: Input) -> Result<(), RaftError> {
        match input {
            Input::Request {
                id,
                api_version,
                request,
            } => match request {
                RaftRequest::Vote(r) => {
                    let resp = self.handle_vote_request(now_ms, r)?;
                    self.emit(Output::Respond {
                        id,
                        response: RaftResponse::Vote(resp),
                    });
                }
                RaftRequest::BeginQuorumEpoch(r) => {
                    let resp = self.handle_begin_quorum_epoch_request(now_ms, r)?;
                    self.emit(Output::Respond {
                        id,
                        response: RaftResponse::BeginQuorumEpoch(resp),
                    });
                }
                RaftRequest::EndQuorumEpoch(r) => {
                    let resp = self.handle_end_quorum_epoch_request(now_ms, r)?;
                    self.emit(Output::Respond {
                        id,
                        response: RaftResponse::EndQuorumEpoch(resp),
                    });
                }
                RaftRequest::Fetch(r) => self.handle_fetch_request(now_ms, id, api_version, r)?,
                RaftRequest::FetchSnapshot(r) => {
                    let resp = self.handle_fetch_snapshot_request(now_ms, api_version, r)?;
                    self.emit(Output::Respond {
                        id,
                        response: RaftResponse::FetchSnapshot(resp),
                    });
                }
                RaftRequest::DescribeQuorum(r) => {
                    let resp = self.handle_describe_quorum_request(now_ms, api_version, r);
                    self.emit(Output::Respond {
                        id,
                        response: RaftResponse::DescribeQuorum(resp),
                    });
                }
                RaftRequest::UpdateRaftVoter(r) => {
                    let resp = self.handle_update_raft_voter_request(now_ms, &r)?;
                    self.emit(Output::Respond {
                        id,
                        response: RaftResponse::UpdateRaftVoter(resp),
                    });
                }
                // Served by the controller, never routed here (`RaftRequest::from_kind`); a
                // driver that does gets INVALID_REQUEST rather than silence.
                RaftRequest::AddRaftVoter(_) => self.emit(Output::Respond {
                    id,
                    response: RaftResponse::AddRaftVoter(
                        kafka_protocol::messages::AddRaftVoterResponse::default()
                            .with_error_code(errors::INVALID_REQUEST),
                    ),
                }),
                RaftRequest::RemoveRaftVoter(_) => self.emit(Output::Respond {
                    id,
                    response: RaftResponse::RemoveRaftVoter(
                        kafka_protocol::messages::RemoveRaftVoterResponse::default()
                            .with_error_code(errors::INVALID_REQUEST),
                    ),
                }),
            },
            Input::Response { id, response } => {
                let Some(source) = self.requests.complete(id) else {
                    return Ok(()); // stale: timed out or sent before a state transition
                };
                if let Role::Follower(f) = &mut self.role {
                    if f.leader_id == source {
                        f.leader_unreachable_since_ms = None; // it answered: it is alive
                    }
                }
                let handled = match response {
                    RaftResponse::Vote(r) => self.handle_vote_response(now_ms, source, r)?,
                    RaftResponse::BeginQuorumEpoch(r) => {
                        self.handle_begin_quorum_epoch_response(now_ms, source, r)?
                    }
                    RaftResponse::EndQuorumEpoch(r) => {
                        self.handle_end_quorum_epoch_response(now_ms, source, r)?
                    }
                    RaftResponse::Fetch(r) => self.handle_fetch_response(now_ms, source, r)?,
                    RaftResponse::FetchSnapshot(r) => {
                        self.handle_fetch_snapshot_response(now_ms, source, r)?
                    }
                    RaftResponse::UpdateRaftVoter(r) => {
                        self.handle_update_voter_response(source, &r)
                    }
                    RaftResponse::AddRaftVoter(r) => self.handle_add_voter_response(&r),
                    RaftResponse::RemoveRaftVoter(r) => self.handle_remove_voter_response(&r),
                    RaftResponse::DescribeQuorum(_) => true,
                };
                // An observer still looking for the leader also backs off after an answer that
                // named none, as Kafka's observers retry bootstrap servers only after
                // `retry.backoff.ms`; else it would ask again at once, or (with no deadline)
                // never.
                let discovering = matches!(&self.role, Role::Unattached(_)) && !self.is_voter();
                if !handled || discovering {
                    self.requests
                        .backoff(source, now_ms, self.config.retry_backoff_ms);
                }
            }
            Input::SendFailed { id, failure } => {
                if let Some(destination) = self.requests.complete(id) {
                    if failure != SendFailure::Timeout {
                        tracing::debug!(destination, ?failure, "request failed");
                    }
                    self.requests
                        .backoff(destination, now_ms, self.config.retry_backoff_ms);
                    self.on_send_failed(now_ms, destination, failure)?;
                }
            }
        }
        self.poll(now_ms)
    }

    /// Runs timers: elections, fetch timeouts, BeginQuorumEpoch heartbeats, check quorum,
    /// batch linger, parked fetch expiry, request timeouts, and sends what is due.
    pub fn poll(&mut self, now_ms: u64) -> Result<(), RaftError> {
        self.requests.expire(now_ms, self.config.retry_backoff_ms);
        self.expire_held_fetches(now_ms)?;
        match self.role.kind() {
            RoleKind::Leader => self.poll_leader(now_ms),
            RoleKind::Prospective => self.poll_prospective(now_ms),
            RoleKind::Candidate => self.poll_candidate(now_ms),
            RoleKind::Follower => self.poll_follower(now_ms),
            RoleKind::Unattached => self.poll_unattached(now_ms),
            RoleKind::Resigned => self.poll_resigned(now_ms),
        }
    }

    // ----- leader writes ---------------------------------------------------------------------

    /// Offset the next appended record will get (leader only).
    pub fn next_offset(&self) -> Option<i64> {
        match &self.role {
            Role::Leader(l) => {
                let a = &l.accumulator;
                let closed: usize = a.closed.iter().map(|(_, r)| r.len()).sum();
                let base = a.closed.first().map(|(b, _)| *b).unwrap_or(a.base_offset);
                Some(base + (closed + a.records.len()) as i64)
            }
            _ => None,
        }
    }

    /// Appends record values (already framed metadata records) as leader. All of them land in
    /// one batch, in order, so the call is atomic. Returns the offset of the first record; the
    /// rest follow contiguously. Written after `controller.quorum.append.linger.ms` or when
    /// the batch is full.
    pub fn append(&mut self, now_ms: u64, records: Vec<Bytes>) -> Result<i64, AppendError> {
        let linger_ms = self.config.append_linger_ms;
        let Role::Leader(leader) = &mut self.role else {
            return Err(AppendError::NotLeader);
        };
        let bytes = batch_bytes_estimate(&records);
        if records.is_empty() || !batch_fits(&records) {
            return Err(AppendError::TooLarge {
                records: records.len(),
                bytes,
            });
        }
        let acc = &mut leader.accumulator;
        if acc.records.len() + records.len() > MAX_RECORDS_PER_BATCH
            || acc.size_bytes + bytes > MAX_BATCH_BYTES - BATCH_HEADER_ROOM_BYTES
        {
            let base = acc.base_offset;
            let closed = std::mem::take(&mut acc.records);
            acc.base_offset = base + closed.len() as i64;
            acc.closed.push((base, closed));
            acc.size_bytes = 0;
            acc.opened_ms = None;
        }
        let first = acc.base_offset + acc.records.len() as i64;
        acc.records.extend(records);
        acc.size_bytes += bytes;
        acc.opened_ms.get_or_insert(now_ms);
        if linger_ms == 0 {
            if let Err(e) = self.flush_accumulator(now_ms) {
                // Storage failures surface from the next poll as well; keep the error visible.
                tracing::error!(error = %e, "append failed");
                return Err(AppendError::NotLeader);
            }
        }
        Ok(first)
    }

    /// Gives up leadership gracefully (Kafka `resign`): the node becomes Resigned and sends
    /// EndQuorumEpoch with the other voters as preferred successors, most caught up first.
    /// With `shutting_down`, it then stays out of elections until the driver stops it.
    pub fn resign(&mut self, now_ms: u64, shutting_down: bool) -> Result<(), RaftError> {
        self.shutting_down |= shutting_down;
        if matches!(self.role, Role::Leader(_)) {
            self.transition_to_resigned(now_ms)?;
        }
        self.poll(now_ms)
    }

    /// True when a graceful shutdown may finish (Kafka `KafkaRaftClient.maybeCompleteShutdown`):
    /// this node is an observer or the only voter, another node leads, or every other voter
    /// refused a connection since the shutdown began (they are stopping too). A resigned
    /// leader therefore stays until its successor is known and has told the fetchers it held
    /// (see [`crate::role::Resigned::parked`]); the driver bounds the wait (Java: 5 s).
    pub fn shutdown_may_complete(&self) -> bool {
        if !self.is_voter() || self.majority() == 1 {
            return !matches!(self.role, Role::Leader(_));
        }
        match &self.role {
            Role::Leader(_) => false,
            Role::Follower(_) => true,
            _ => {
                let me = self.config.node_id;
                self.voter_set()
                    .ids()
                    .all(|id| id == me || self.unreachable_while_stopping.contains(&id))
            }
        }
    }

    /// Writes the batches waiting in the accumulator to the log, flushes, and updates the
    /// leader's own progress (which may move the high watermark and complete parked fetches).
    pub(crate) fn flush_accumulator(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let epoch = self.epoch;
        let Role::Leader(leader) = &mut self.role else {
            return Ok(());
        };
        let acc = &mut leader.accumulator;
        let mut batches = std::mem::take(&mut acc.closed);
        if !acc.records.is_empty() {
            let base = acc.base_offset;
            let records = std::mem::take(&mut acc.records);
            acc.base_offset = base + records.len() as i64;
            batches.push((base, records));
        }
        acc.size_bytes = 0;
        acc.opened_ms = None;
        if batches.is_empty() {
            return Ok(());
        }
        for (base, records) in batches {
            let mut builder = BatchBuilder::new(base, epoch, now_ms as i64);
            for r in &records {
                builder.append(None, r);
            }
            let bytes = builder.build();
            self.log.append_as_leader(&bytes, epoch)?;
        }
        self.after_leader_append(now_ms)
    }

    pub(crate) fn after_leader_append(&mut self, now_ms: u64) -> Result<(), RaftError> {
        self.log.flush()?;
        self.update_control_state(now_ms)?;
        let end = self.log.end_offset().offset;
        let moved = match &mut self.role {
            Role::Leader(l) => l.update_local_end_offset(end, now_ms),
            _ => false,
        };
        if moved {
            self.on_leader_high_watermark_moved(now_ms);
        }
        self.complete_parked_fetches(now_ms, false)
    }

    pub(crate) fn on_leader_high_watermark_moved(&mut self, now_ms: u64) {
        if let Role::Leader(l) = &self.role {
            if let Some(hw) = l.high_watermark {
                self.advance_high_watermark(hw);
                self.maybe_complete_voter_change(now_ms);
                if let Some(since) = self.leader_since_ms.take() {
                    let ms = now_ms.saturating_sub(since);
                    self.metrics.last_time_to_first_commit_ms = Some(ms);
                    info!(
                        epoch = self.epoch,
                        high_watermark = hw,
                        time_to_first_commit_ms = ms,
                        "first commit as leader"
                    );
                }
            }
        }
    }

    pub(crate) fn advance_high_watermark(&mut self, hw: i64) {
        if self.high_watermark.is_none_or(|cur| hw > cur) {
            self.high_watermark = Some(hw);
        }
    }
}
