//! Membership changes on the leader (KIP-853; Kafka `AddVoterHandler`, `RemoveVoterHandler`,
//! `LeaderState.appendVotersRecord`): one uncommitted voter change at a time, a new voter only
//! once it has caught up, answered when the `VotersRecord` commits (AddRaftVoter v1 with
//! `AckWhenCommitted=false`, KIP-1186: once it is appended), and a leader that removed itself
//! resigning after the removal committed (case C11).
//!
//! The driver decodes AddRaftVoter / RemoveRaftVoter, asks the new voter's ApiVersions itself
//! (the core does not send ApiVersions) and passes the `kraft.version` range it advertises, then
//! delivers the answers of [`RaftCore::take_voter_change_answers`].

use kraftwerk_records::control::ControlRecord;
use tracing::info;

use super::{RaftCore, RaftError};
use crate::errors;
use crate::role::Role;
use crate::storage::{QuorumStateStore, ReplicatedLog};
use crate::voters::{ReplicaKey, VoterNode, VoterSet};

/// Kafka `LeaderState.isReplicaCaughtUp`: a new voter must have fetched within this long.
pub const CAUGHT_UP_WINDOW_MS: u64 = 3_600_000;

/// The answer to one AddRaftVoter / RemoveRaftVoter, by the driver's request id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VoterChangeAnswer {
    /// The id the driver gave with the request.
    pub request_id: u64,
    /// Kafka error code (0: done).
    pub error_code: i16,
    /// Kafka's error message, if any.
    pub error_message: Option<String>,
}

/// A voter change appended and not yet answered.
#[derive(Clone, Debug)]
pub(crate) struct PendingVoterChange {
    pub request_id: u64,
    /// Offset of the `VotersRecord` batch's last record.
    pub last_offset: i64,
    /// Removal of this key (`None` for an addition).
    pub removed: Option<ReplicaKey>,
    /// Answer when committed (false: already answered at append, KIP-1186).
    pub answer_when_committed: bool,
    pub deadline_ms: u64,
}

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    fn answer(request_id: u64, error_code: i16, message: Option<String>) -> VoterChangeAnswer {
        VoterChangeAnswer {
            request_id,
            error_code,
            error_message: message,
        }
    }

    /// The checks every voter change starts with, in Java's order: leader; high watermark known
    /// (REQUEST_TIMED_OUT); kraft.version ≥ 1 (UNSUPPORTED_VERSION); the last voter change
    /// committed and none pending (REQUEST_TIMED_OUT).
    fn voter_change_precheck(&self, request_id: u64, verb: &str) -> Result<(), VoterChangeAnswer> {
        let Role::Leader(l) = &self.role else {
            return Err(Self::answer(
                request_id,
                errors::NOT_LEADER_OR_FOLLOWER,
                None,
            ));
        };
        let Some(hw) = l.high_watermark else {
            return Err(Self::answer(
                request_id,
                errors::REQUEST_TIMED_OUT,
                Some("Request timed out waiting for leader to establish HWM and fence previous voter changes".into()),
            ));
        };
        let version = self.kraft_version();
        if version < 1 {
            return Err(Self::answer(
                request_id,
                errors::UNSUPPORTED_VERSION,
                Some(format!(
                    "Cluster doesn't support {verb} voter because the kraft.version feature is {version}"
                )),
            ));
        }
        let uncommitted = self.control.voters_offset().is_none_or(|o| o >= hw);
        if uncommitted || self.pending_voter_change.is_some() {
            return Err(Self::answer(
                request_id,
                errors::REQUEST_TIMED_OUT,
                Some(
                    "Request timed out waiting for voters to commit the latest voter change".into(),
                ),
            ));
        }
        Ok(())
    }

    /// AddRaftVoter on the leader. `new_voter_kraft_versions` is the `kraft.version` range the
    /// new voter's ApiVersions advertised (`None`: it could not be asked). Returns the answer
    /// now, or `None` when it comes later from [`Self::take_voter_change_answers`].
    pub fn add_voter(
        &mut self,
        now_ms: u64,
        request_id: u64,
        node: VoterNode,
        ack_when_committed: bool,
        new_voter_kraft_versions: Option<(i16, i16)>,
    ) -> Result<Option<VoterChangeAnswer>, RaftError> {
        if let Err(a) = self.voter_change_precheck(request_id, "adding") {
            return Ok(Some(a));
        }
        if node.key.directory_id.is_none() {
            return Ok(Some(Self::answer(
                request_id,
                errors::INVALID_REQUEST,
                Some(format!(
                    "Add voter request didn't include a valid directory id {}",
                    uuid::Uuid::nil()
                )),
            )));
        }
        if node.endpoint(&self.config.listener_name).is_none() {
            return Ok(Some(Self::answer(
                request_id,
                errors::INVALID_REQUEST,
                Some(format!(
                    "Add voter request didn't include the endpoint for the default listener {}",
                    self.config.listener_name
                )),
            )));
        }
        let voters = self.voter_set().clone();
        if voters.contains(node.key.id) {
            return Ok(Some(Self::answer(
                request_id,
                errors::DUPLICATE_VOTER,
                Some(format!(
                    "The voter id for {:?} is already part of the set of voters",
                    node.key
                )),
            )));
        }
        if voters.is_full() {
            // Kafka has no bound; a VotersRecord past ours could not be read back.
            return Ok(Some(Self::answer(
                request_id,
                errors::INVALID_REQUEST,
                Some(format!(
                    "The voter set already has {} voters, the most this controller supports",
                    voters.len()
                )),
            )));
        }
        let version = self.kraft_version();
        match new_voter_kraft_versions {
            Some((min, max)) if (min..=max).contains(&version) => {}
            _ => {
                return Ok(Some(Self::answer(
                    request_id,
                    errors::INVALID_REQUEST,
                    Some(format!(
                        "Voter {:?} doesn't support kraft.version {version}",
                        node.key
                    )),
                )))
            }
        }
        let caught_up = match &self.role {
            Role::Leader(l) => l
                .observers
                .get(&(node.key.id, node.key.directory_id_or_zero()))
                .is_some_and(|p| {
                    p.last_caught_up_ms.is_some_and(|t| t > 0)
                        && p.last_fetch_ms
                            .is_some_and(|t| t > 0 && t + CAUGHT_UP_WINDOW_MS > now_ms)
                }),
            _ => false,
        };
        if !caught_up {
            return Ok(Some(Self::answer(
                request_id,
                errors::REQUEST_TIMED_OUT,
                Some(format!(
                    "Timed out waiting for leader to receive a fetch from voter {:?}",
                    node.key
                )),
            )));
        }
        let mut node = node;
        node.supported_kraft_versions = new_voter_kraft_versions.unwrap_or((0, 0));
        let new_set = voters.add_voter(node).expect("checked: not a voter");
        let last_offset = self.append_voters_record(now_ms, &new_set)?;
        self.pending_voter_change = Some(PendingVoterChange {
            request_id,
            last_offset,
            removed: None,
            answer_when_committed: ack_when_committed,
            deadline_ms: now_ms + self.config.request_timeout_ms,
        });
        if !ack_when_committed {
            // KIP-1186: the new voter may be the one that sent this request, on the connection
            // it fetches on; answering at append lets it fetch and commit the change (C12).
            return Ok(Some(Self::answer(request_id, errors::NONE, None)));
        }
        Ok(self.answer_now(now_ms, request_id))
    }

    /// RemoveRaftVoter on the leader: VOTER_NOT_FOUND unless `key` (directory included) is a
    /// voter and not the last one. Answered once the new set commits; if this leader removed
    /// itself it then resigns (case C11).
    pub fn remove_voter(
        &mut self,
        now_ms: u64,
        request_id: u64,
        key: ReplicaKey,
    ) -> Result<Option<VoterChangeAnswer>, RaftError> {
        if let Err(a) = self.voter_change_precheck(request_id, "removing") {
            return Ok(Some(a));
        }
        let voters = self.voter_set().clone();
        let Some(new_set) = voters.remove_voter(key) else {
            return Ok(Some(Self::answer(
                request_id,
                errors::VOTER_NOT_FOUND,
                Some(format!(
                    "Cannot remove voter {key:?} from the set of voters {:?}",
                    voters.ids().collect::<Vec<_>>()
                )),
            )));
        };
        let last_offset = self.append_voters_record(now_ms, &new_set)?;
        self.pending_voter_change = Some(PendingVoterChange {
            request_id,
            last_offset,
            removed: Some(key),
            answer_when_committed: true,
            deadline_ms: now_ms + self.config.request_timeout_ms,
        });
        Ok(self.answer_now(now_ms, request_id))
    }

    /// The answer to `request_id` if its change committed at once (a single-voter set).
    fn answer_now(&mut self, now_ms: u64, request_id: u64) -> Option<VoterChangeAnswer> {
        self.maybe_complete_voter_change(now_ms);
        let i = self
            .voter_change_answers
            .iter()
            .position(|a| a.request_id == request_id)?;
        Some(self.voter_change_answers.remove(i))
    }

    /// Answers of voter changes that completed (committed, timed out, or leadership lost).
    pub fn take_voter_change_answers(&mut self) -> Vec<VoterChangeAnswer> {
        std::mem::take(&mut self.voter_change_answers)
    }

    /// True while a voter change is appended and not committed (metric
    /// `uncommitted-voter-change`).
    pub fn has_uncommitted_voter_change(&self) -> bool {
        match (self.control.voters_offset(), self.high_watermark) {
            (Some(o), Some(hw)) => o >= hw,
            (Some(o), None) => o >= 0,
            _ => false,
        }
    }

    /// Writes the accumulator, then one control batch with the new `VotersRecord`; the set is
    /// in force from there (KIP-853). Returns the batch's last offset.
    pub(crate) fn append_voters_record(
        &mut self,
        now_ms: u64,
        set: &VoterSet,
    ) -> Result<i64, RaftError> {
        let base =
            self.append_control_records(now_ms, &[ControlRecord::Voters(set.to_record())])?;
        info!(offset = base, voters = ?set.ids().collect::<Vec<_>>(), "appended a voter change");
        Ok(base)
    }

    /// Completes the pending change once the high watermark passed it; a leader that removed
    /// itself then asks to resign (done by the next poll).
    pub(crate) fn maybe_complete_voter_change(&mut self, now_ms: u64) {
        self.complete_pending_voter_change(now_ms);
        // Case C11 also when the removal's request timed out before it committed (the
        // VotersRecord stays in the log and commits later): a leader outside its committed
        // voter set resigns. Found by the simulation (seed 217 of
        // `raft_safety_and_liveness_through_membership_changes`): such a leader led on, and
        // even appended further voter changes.
        if !self.resign_requested
            && matches!(self.role, Role::Leader(_))
            && self.high_watermark.is_some()
            && !self.is_voter()
            && !self.has_uncommitted_voter_change()
        {
            info!("this leader is not in its committed voter set: resigning");
            self.resign_requested = true;
        }
    }

    fn complete_pending_voter_change(&mut self, now_ms: u64) {
        let Some(pending) = &self.pending_voter_change else {
            return;
        };
        let committed = self
            .high_watermark
            .is_some_and(|hw| hw > pending.last_offset);
        if committed {
            let pending = self.pending_voter_change.take().expect("pending");
            info!(offset = pending.last_offset, "voter change committed");
            if pending.answer_when_committed {
                self.voter_change_answers.push(Self::answer(
                    pending.request_id,
                    errors::NONE,
                    None,
                ));
            }
            if pending.removed.is_some_and(|k| k.id == self.config.node_id) {
                info!("this leader was removed from the voter set: resigning");
                self.resign_requested = true;
            }
        } else if now_ms >= pending.deadline_ms {
            let pending = self.pending_voter_change.take().expect("pending");
            if pending.answer_when_committed {
                self.voter_change_answers.push(Self::answer(
                    pending.request_id,
                    errors::REQUEST_TIMED_OUT,
                    Some("Request timed out waiting for the voter change to commit".into()),
                ));
            }
        }
    }

    /// Leadership ended with a change pending: NOT_LEADER_OR_FOLLOWER (Kafka
    /// `LeaderState.close`).
    pub(crate) fn abort_voter_change(&mut self) {
        if let Some(p) = self.pending_voter_change.take() {
            if p.answer_when_committed {
                self.voter_change_answers.push(Self::answer(
                    p.request_id,
                    errors::NOT_LEADER_OR_FOLLOWER,
                    None,
                ));
            }
        }
        self.resign_requested = false;
    }
}
