//! Role transitions (Kafka `QuorumState`): each one persists `quorum-state` first (except to
//! Resigned and Prospective), then installs the new role and answers fetches parked by the old.

use std::collections::BTreeSet;

use kafka_protocol::messages::leader_change_message::Voter;
use kafka_protocol::messages::LeaderChangeMessage;
use kraftwerk_records::control::{control_batch, ControlRecord};
use rand::Rng;
use tracing::{info, warn};

use super::{RaftCore, RaftError};
use crate::leader::LeaderState;
use crate::role::{Candidate, Follower, Prospective, Resigned, Role, Unattached};
use crate::storage::{ElectionState, QuorumStateStore, ReplicatedLog};

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    // ----- transitions -----------------------------------------------------------------------

    pub(super) fn random_election_deadline(&mut self, now_ms: u64) -> u64 {
        let t = self.config.election_timeout_ms;
        now_ms
            + if t == 0 {
                0
            } else {
                t + self.rng.gen_range(0..t)
            }
    }

    pub(super) fn persist(
        &mut self,
        leader_id: Option<i32>,
        voted_id: Option<i32>,
    ) -> Result<(), RaftError> {
        // The voted key keeps its directory id (data_version 1 `votedDirectoryId`).
        let voted_directory_id = self
            .voted_directory
            .filter(|(id, _)| Some(*id) == voted_id)
            .map(|(_, dir)| dir);
        let state = ElectionState {
            epoch: self.epoch,
            leader_id,
            voted_id,
            voted_directory_id,
            voters: self.voter_set().ids().collect(),
        };
        self.store.write(&state)?;
        Ok(())
    }

    /// Leaves the current role; answers parked fetches so no request is left hanging.
    pub(super) fn leave_role(&mut self, now_ms: u64) -> Result<(), RaftError> {
        self.requests.reset();
        self.abort_voter_change();
        if let Role::Leader(l) = &mut self.role {
            let parked = std::mem::take(&mut l.parked);
            // Re-evaluated after the transition they get the new epoch/leader in an error.
            self.pending_reanswer = parked;
        }
        let _ = now_ms;
        Ok(())
    }

    pub(crate) fn transition_to_unattached(
        &mut self,
        epoch: i32,
        now_ms: u64,
    ) -> Result<(), RaftError> {
        assert!(
            epoch >= self.epoch,
            "epoch must not go backwards: {} -> {epoch}",
            self.epoch
        );
        // Keep the running election timer when coming from Candidate/Unattached (Kafka).
        let keep = match &self.role {
            Role::Candidate(c) => Some(c.election_deadline_ms),
            Role::Prospective(p) => Some(p.election_deadline_ms),
            Role::Unattached(u) => u.election_deadline_ms,
            _ => None,
        };
        self.leave_role(now_ms)?;
        if epoch != self.epoch {
            self.voted_directory = None;
        }
        self.epoch = epoch;
        self.persist(None, None)?;
        let deadline = if self.is_voter() {
            Some(keep.unwrap_or_else(|| self.random_election_deadline(now_ms)))
        } else {
            None
        };
        self.role = Role::Unattached(Unattached {
            voted: None,
            leader_hint: None,
            election_deadline_ms: deadline,
        });
        self.note_role_change(now_ms);
        info!(epoch, "transitioned to Unattached");
        self.reanswer_parked(now_ms)
    }

    pub(crate) fn transition_to_unattached_voted(
        &mut self,
        candidate: i32,
        now_ms: u64,
    ) -> Result<(), RaftError> {
        self.persist(None, Some(candidate))?;
        // A node outside the voter set in force may grant a vote (KIP-853: the candidate's log
        // may already add it) but runs no election of its own.
        let deadline = self
            .is_voter()
            .then(|| self.random_election_deadline(now_ms));
        self.role = Role::Unattached(Unattached {
            voted: Some(candidate),
            leader_hint: None,
            election_deadline_ms: deadline,
        });
        info!(epoch = self.epoch, candidate, "voted");
        Ok(())
    }

    /// Starts an election: a pre-vote round first (KIP-996) unless disabled or this node is the
    /// only voter.
    pub(crate) fn start_election(&mut self, now_ms: u64) -> Result<(), RaftError> {
        if self.config.pre_vote && self.majority() > 1 {
            self.transition_to_prospective(now_ms)
        } else {
            self.transition_to_candidate(now_ms)
        }
    }

    /// Prospective: ask the voters whether they would vote for us, without bumping the epoch or
    /// persisting anything.
    pub(crate) fn transition_to_prospective(&mut self, now_ms: u64) -> Result<(), RaftError> {
        assert!(self.is_voter(), "only voters run elections");
        let (prior_leader, voted) = match &self.role {
            Role::Follower(f) => (Some(f.leader_id), f.voted),
            Role::Unattached(u) => (u.leader_hint, u.voted),
            Role::Prospective(p) => (p.prior_leader, p.voted),
            Role::Resigned(_) | Role::Leader(_) => {
                (Some(self.config.node_id), Some(self.config.node_id))
            }
            Role::Candidate(_) => (None, None),
        };
        self.leave_role(now_ms)?;
        let deadline = self.random_election_deadline(now_ms);
        let id = self.config.node_id;
        self.role = Role::Prospective(Prospective {
            granted: BTreeSet::from([id]),
            rejected: BTreeSet::new(),
            election_deadline_ms: deadline,
            prior_leader,
            voted,
        });
        self.metrics.prospective_rounds += 1;
        self.note_role_change(now_ms);
        info!(epoch = self.epoch, "became prospective (pre-vote)");
        self.reanswer_parked(now_ms)?;
        self.send_vote_requests(now_ms);
        Ok(())
    }

    /// The pre-vote failed (rejected or timed out): back to the leader we had, or unattached.
    pub(crate) fn prospective_lost(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let Role::Prospective(p) = &self.role else {
            return Ok(());
        };
        match p.prior_leader {
            Some(leader) if self.voter_set().contains(leader) && leader != self.config.node_id => {
                self.transition_to_follower(self.epoch, leader, now_ms)
            }
            _ => {
                let voted = p.voted;
                self.leave_role(now_ms)?;
                let deadline = self.random_election_deadline(now_ms);
                self.role = Role::Unattached(Unattached {
                    voted,
                    leader_hint: None,
                    election_deadline_ms: Some(deadline),
                });
                self.note_role_change(now_ms);
                info!(epoch = self.epoch, "pre-vote lost; unattached");
                self.reanswer_parked(now_ms)
            }
        }
    }

    pub(crate) fn transition_to_candidate(&mut self, now_ms: u64) -> Result<(), RaftError> {
        assert!(self.is_voter(), "only voters run elections");
        let retries = match &self.role {
            Role::Candidate(c) => c.retries + 1,
            _ => 1,
        };
        let epoch = self.epoch.checked_add(1).ok_or(RaftError::EpochExhausted)?;
        self.leave_role(now_ms)?;
        self.epoch = epoch;
        let id = self.config.node_id;
        self.voted_directory = Some((id, self.config.directory_id)).filter(|(_, d)| !d.is_nil());
        self.persist(None, Some(id))?;
        let deadline = self.random_election_deadline(now_ms);
        self.role = Role::Candidate(Candidate {
            retries,
            granted: BTreeSet::from([id]),
            rejected: BTreeSet::new(),
            election_deadline_ms: deadline,
        });
        self.metrics.elections_started += 1;
        self.note_role_change(now_ms);
        info!(epoch = self.epoch, retries, "became candidate");
        self.reanswer_parked(now_ms)?;
        if self.majority() <= 1 {
            return self.transition_to_leader(now_ms);
        }
        self.send_vote_requests(now_ms);
        Ok(())
    }

    pub(crate) fn transition_to_leader(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let Role::Candidate(c) = &self.role else {
            unreachable!("only a candidate becomes leader")
        };
        let granting = c.granted.clone();
        self.leave_role(now_ms)?;
        let id = self.config.node_id;
        self.persist(Some(id), Some(id))?;
        let epoch_start_offset = self.log.end_offset().offset;
        let voters = self.voter_set().clone();
        let mut leader = LeaderState::new(
            id,
            voters.ids(),
            epoch_start_offset,
            now_ms,
            self.config.check_quorum_timeout_ms(),
        );
        leader.set_voters(&voters, now_ms);
        if self.kraft_version() < 1 {
            leader.volatile_voters = self
                .local_voter_node()
                .and_then(|node| voters.update_voter_ignoring_directory_id(node));
        }
        self.role = Role::Leader(Box::new(leader));
        // The high watermark can only move once a record of this epoch is committed: write the
        // LeaderChange control record right away (Kafka `appendStartOfEpochControlRecords`).
        let message = LeaderChangeMessage::default()
            .with_version(0)
            .with_leader_id(id.into())
            .with_voters(
                voters
                    .ids()
                    .map(|v| Voter::default().with_voter_id(v))
                    .collect(),
            )
            .with_granting_voters(
                granting
                    .iter()
                    .map(|&v| Voter::default().with_voter_id(v))
                    .collect(),
            );
        let mut records = vec![ControlRecord::LeaderChange(message)];
        records.extend(self.start_of_epoch_voter_records());
        let batch = control_batch(epoch_start_offset, self.epoch, now_ms as i64, &records);
        let control_records = records.len() as i64;
        self.log.append_as_leader(&batch, self.epoch)?;
        if let Role::Leader(l) = &mut self.role {
            l.accumulator.base_offset = epoch_start_offset + control_records;
        }
        self.became_leader = true;
        self.metrics.elections_won += 1;
        self.leader_since_ms = Some(now_ms);
        self.note_role_change(now_ms);
        info!(epoch = self.epoch, epoch_start_offset, "became leader");
        // Fetches held while nobody led learn that this node leads now.
        self.reanswer_parked(now_ms)?;
        self.after_leader_append(now_ms)?;
        self.poll_leader(now_ms)
    }

    /// Kafka `LeaderState.appendStartOfEpochControlRecords` at kraft.version ≥ 1: when the voter
    /// set in force came from the bootstrap checkpoint (offset -1, never replicated) or this
    /// leader's own entry is out of date (other endpoints or supported range), the LeaderChange
    /// batch also carries `KRaftVersion` and the updated `Voters` record, so the set is in the
    /// replicated log.
    fn start_of_epoch_voter_records(&self) -> Vec<ControlRecord> {
        let version = self.kraft_version();
        if version < 1 {
            return Vec::new();
        }
        let voters = self.voter_set();
        let local = self.local_voter_node();
        let updated = match &local {
            Some(node) if voters.voter_node_needs_update(node) => voters.update_voter(node.clone()),
            _ => None,
        };
        if self.control.voters_offset() != Some(-1) && updated.is_none() {
            return Vec::new();
        }
        let set = updated.unwrap_or_else(|| voters.clone());
        vec![
            ControlRecord::kraft_version(version),
            ControlRecord::Voters(set.to_record()),
        ]
    }

    /// This node as a voter: its key, the listeners it serves the Raft RPCs on
    /// (`RaftConfig::local_endpoints`, else what the voter set says), kraft.version [0, 1].
    pub(crate) fn local_voter_node(&self) -> Option<crate::voters::VoterNode> {
        let endpoints = if self.config.local_endpoints.is_empty() {
            self.voter_set()
                .node(self.config.node_id)?
                .endpoints
                .clone()
        } else {
            self.config
                .local_endpoints
                .iter()
                .map(|(k, v)| (k.to_ascii_uppercase(), v.clone()))
                .collect()
        };
        Some(crate::voters::VoterNode {
            key: self.local_key(),
            endpoints,
            supported_kraft_versions: crate::voters::SUPPORTED_KRAFT_VERSIONS,
        })
    }

    pub(crate) fn transition_to_follower(
        &mut self,
        epoch: i32,
        leader_id: i32,
        now_ms: u64,
    ) -> Result<(), RaftError> {
        assert!(epoch >= self.epoch, "epoch must not go backwards");
        assert!(leader_id != self.config.node_id, "cannot follow itself");
        let voted = match &self.role {
            Role::Unattached(u) if epoch == self.epoch => u.voted,
            Role::Prospective(p) if epoch == self.epoch => p.voted,
            Role::Follower(f) if epoch == self.epoch => f.voted,
            Role::Candidate(_) if epoch == self.epoch => Some(self.config.node_id),
            _ => None,
        };
        self.leave_role(now_ms)?;
        self.epoch = epoch;
        self.persist(Some(leader_id), voted)?;
        self.role = Role::Follower(Follower {
            leader_id,
            fetch_deadline_ms: now_ms + self.config.fetch_timeout_ms,
            voted,
            fetching_snapshot: None,
            has_fetched_from_leader: false,
            update_voter_deadline_ms: now_ms + 3 * self.config.fetch_timeout_ms,
            has_updated_leader: false,
            leader_unreachable_since_ms: None,
        });
        self.note_role_change(now_ms);
        info!(epoch, leader_id, "became follower");
        self.reanswer_parked(now_ms)?;
        self.poll_follower(now_ms)
    }

    pub(crate) fn transition_to_resigned(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let Role::Leader(l) = &self.role else {
            return Ok(());
        };
        let successors = l.non_leader_voters_by_descending_end_offset();
        // Records not yet written are dropped: their writers get NOT_CONTROLLER from the node.
        self.leave_role(now_ms)?;
        let deadline = self.random_election_deadline(now_ms);
        self.role = Role::Resigned(Resigned {
            election_deadline_ms: deadline,
            unacked: successors.iter().copied().collect(),
            preferred_successors: successors,
        });
        info!(epoch = self.epoch, "resigned");
        self.reanswer_parked(now_ms)
    }

    /// Follows what a peer said about `epoch` (Kafka `maybeTransition`): a newer epoch makes
    /// this node a follower of `leader_id` (or unattached when no leader is named), and a leader
    /// named for the current epoch is followed when none is known yet.
    ///
    /// A claim that contradicts what this node knows — another leader for an epoch whose leader
    /// it knows, or this node itself named as the leader of an epoch it did not win — is refused
    /// with [`Transition::Refused`] and changes nothing. (Java's `QuorumState` throws
    /// IllegalStateException there, which stops the Raft thread and the process: one forged
    /// BeginQuorumEpoch is enough. Only authentication stops the forgery itself.)
    pub(crate) fn maybe_transition(
        &mut self,
        leader_id: Option<i32>,
        epoch: i32,
        now_ms: u64,
    ) -> Result<Transition, RaftError> {
        if let Some(received) = leader_id {
            let known = self.known_leader();
            let contradicts = if epoch == self.epoch {
                match known {
                    Some(k) => k != received,
                    None => received == self.config.node_id,
                }
            } else {
                epoch > self.epoch && received == self.config.node_id
            };
            if contradicts {
                warn!(
                    epoch,
                    current_epoch = self.epoch,
                    ?known,
                    received,
                    "refusing a leader claim that contradicts this node's state"
                );
                return Ok(Transition::Refused);
            }
        }
        if epoch > self.epoch {
            match leader_id {
                Some(l) => self.transition_to_follower(epoch, l, now_ms)?,
                None => self.transition_to_unattached(epoch, now_ms)?,
            }
        } else if let Some(l) = leader_id {
            if epoch == self.epoch && self.known_leader().is_none() {
                self.transition_to_follower(epoch, l, now_ms)?;
            }
        }
        Ok(Transition::Followed)
    }
}

/// What [`RaftCore::maybe_transition`] did with a peer's claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transition {
    /// The claim was consistent and is followed (possibly without a change).
    Followed,
    /// The claim contradicts this node's state and was ignored.
    Refused,
}
