//! Elections: Vote requests and responses (KIP-595, Kafka `handleVoteRequest`/`handleVoteResponse`).

use kafka_protocol::messages::vote_request::{
    PartitionData as VoteReqPartition, TopicData as VoteReqTopic,
};
use kafka_protocol::messages::vote_response::{
    NodeEndpoint as VoteNodeEndpoint, PartitionData as VoteRespPartition,
    TopicData as VoteRespTopic,
};
use kafka_protocol::messages::{VoteRequest, VoteResponse};
use kafka_protocol::protocol::StrBytes;
use tracing::info;
use uuid::Uuid;

use super::{RaftCore, RaftError};
use crate::config::{MAX_REQUEST_EPOCH, METADATA_PARTITION, METADATA_TOPIC_NAME};
use crate::errors;
use crate::io::RaftRequest;
use crate::role::{Prospective, Role, Unattached};
use crate::storage::{OffsetAndEpoch, QuorumStateStore, ReplicatedLog};

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    pub(crate) fn cluster_id_matches(&self, cluster_id: &Option<StrBytes>) -> bool {
        cluster_id
            .as_ref()
            .is_none_or(|c| c.as_str() == self.config.cluster_id)
    }

    /// Kafka `validateVoterOnlyRequest` for Vote, BeginQuorumEpoch and EndQuorumEpoch: an
    /// epoch older than ours is FENCED_LEADER_EPOCH, a negative sender id INVALID_REQUEST; at
    /// kraft.version 0 a sender outside the static voter set (or a node that is not a voter
    /// itself) INCONSISTENT_VOTER_SET. At kraft.version 1 there is no membership check, as in
    /// Java 3.9+ (KAFKA-16526): a node added to the set may not have read the VotersRecord yet;
    /// the voter key (id and directory id) decides instead. Two checks Java lacks: a sender claiming to be this node, and an
    /// epoch that leaves no room for further elections ([`MAX_REQUEST_EPOCH`]), are
    /// INVALID_REQUEST — Java would crash on the first and overflow its epoch on the second.
    pub(crate) fn voter_only_request_error(&self, sender_id: i32, epoch: i32) -> Option<i16> {
        if epoch < self.epoch {
            Some(errors::FENCED_LEADER_EPOCH)
        } else if sender_id < 0 || sender_id == self.config.node_id || epoch > MAX_REQUEST_EPOCH {
            Some(errors::INVALID_REQUEST)
        } else if self.kraft_version() == 0
            && (!self.is_voter() || !self.voter_set().contains(sender_id))
        {
            Some(errors::INCONSISTENT_VOTER_SET)
        } else {
            None
        }
    }

    pub(crate) fn cluster_id_field(&self) -> Option<StrBytes> {
        Some(StrBytes::from_string(self.config.cluster_id.clone()))
    }

    /// The leader's endpoint on the controller listener, if the leader is known and resolvable.
    pub(crate) fn leader_endpoint(&self) -> Option<(i32, crate::config::Endpoint)> {
        let leader = self.leader_id()?;
        self.resolve(leader).map(|e| (leader, e))
    }

    fn vote_response(&self, error: i16, granted: bool) -> VoteResponse {
        let partition = VoteRespPartition::default()
            .with_partition_index(METADATA_PARTITION)
            .with_error_code(error)
            .with_leader_id(self.leader_id().unwrap_or(-1).into())
            .with_leader_epoch(self.epoch)
            .with_vote_granted(granted);
        let mut response = VoteResponse::default().with_topics(vec![VoteRespTopic::default()
            .with_topic_name(StrBytes::from_static_str(METADATA_TOPIC_NAME).into())
            .with_partitions(vec![partition])]);
        if let Some((id, e)) = self.leader_endpoint() {
            response.node_endpoints = vec![VoteNodeEndpoint::default()
                .with_node_id(id.into())
                .with_host(StrBytes::from_string(e.host.clone()))
                .with_port(e.port)];
        }
        response
    }

    /// Kafka 4.x `handleVoteRequest`, with KIP-996 pre-votes: a pre-vote changes no state (bar
    /// catching up to a newer epoch) and persists nothing.
    pub(crate) fn handle_vote_request(
        &mut self,
        now_ms: u64,
        request: VoteRequest,
    ) -> Result<VoteResponse, RaftError> {
        if !self.cluster_id_matches(&request.cluster_id) {
            return Ok(VoteResponse::default().with_error_code(errors::INCONSISTENT_CLUSTER_ID));
        }
        let Some(p) = single_partition(&request) else {
            return Ok(VoteResponse::default().with_error_code(errors::INVALID_REQUEST));
        };
        let candidate_id = p.replica_id.0;
        let candidate_directory =
            crate::voters::ReplicaKey::new(candidate_id, p.replica_directory_id).directory_id;
        let candidate_epoch = p.replica_epoch;
        let pre_vote = p.pre_vote;
        let last = OffsetAndEpoch::new(p.last_offset, p.last_offset_epoch);
        // A pre-vote carries the prospective's current epoch, a vote the bumped one.
        let illegal_epoch = if pre_vote {
            last.epoch > candidate_epoch
        } else {
            last.epoch >= candidate_epoch
        };
        if last.offset < 0 || last.epoch < 0 || illegal_epoch {
            return Ok(self.vote_response(errors::INVALID_REQUEST, false));
        }
        if let Some(error) = self.voter_only_request_error(candidate_id, candidate_epoch) {
            return Ok(self.vote_response(error, false));
        }
        if candidate_epoch > self.epoch {
            self.transition_to_unattached(candidate_epoch, now_ms)?;
        }
        let voter_key_ok = (request.voter_id.0 < 0 || request.voter_id.0 == self.config.node_id)
            && (p.voter_directory_id == Uuid::nil()
                || p.voter_directory_id == self.config.directory_id);
        if !voter_key_ok {
            return Ok(self.vote_response(errors::INVALID_VOTER_KEY, false));
        }
        let log_up_to_date = last >= self.log.end_offset();
        let granted = match &self.role {
            Role::Unattached(Unattached {
                voted, leader_hint, ..
            })
            | Role::Prospective(Prospective {
                voted,
                prior_leader: leader_hint,
                ..
            }) => {
                if pre_vote {
                    log_up_to_date
                } else {
                    match voted {
                        // Kafka `UnattachedState.canGrantVote`: the same candidate, and the
                        // same directory unless the stored vote has none.
                        Some(v) => {
                            *v == candidate_id
                                && self
                                    .voted_directory
                                    .filter(|(id, _)| id == v)
                                    .is_none_or(|(_, d)| candidate_directory == Some(d))
                        }
                        None => leader_hint.is_none() && log_up_to_date,
                    }
                }
            }
            // KIP-996: a follower refuses pre-votes while it hears from its leader. A voter
            // leaves Follower when its fetch timeout expires, but an observer (a voter whose
            // log does not add it yet, say) stays; past the timeout it must grant, or a quorum
            // whose leader is gone can wait on it forever.
            Role::Follower(f) => {
                pre_vote
                    && (!f.has_fetched_from_leader || now_ms >= f.fetch_deadline_ms)
                    && log_up_to_date
            }
            Role::Candidate(_) | Role::Resigned(_) => pre_vote && log_up_to_date,
            Role::Leader(_) => false,
        };
        if granted && !pre_vote {
            if let Some(dir) = candidate_directory {
                self.voted_directory = Some((candidate_id, dir));
            }
            match &self.role {
                Role::Unattached(u) if u.voted.is_none() => {
                    self.transition_to_unattached_voted(candidate_id, now_ms)?
                }
                Role::Prospective(pr) if pr.voted.is_none() => {
                    // Kafka `prospectiveAddVotedState`: the vote is durable, the pre-vote round goes on.
                    self.persist(None, Some(candidate_id))?;
                    if let Role::Prospective(pr) = &mut self.role {
                        pr.voted = Some(candidate_id);
                    }
                }
                _ => {}
            }
        }
        info!(
            candidate_id,
            candidate_epoch, pre_vote, granted, log_up_to_date, "vote request"
        );
        Ok(self.vote_response(errors::NONE, granted))
    }

    pub(crate) fn handle_vote_response(
        &mut self,
        now_ms: u64,
        source: i32,
        response: VoteResponse,
    ) -> Result<bool, RaftError> {
        if response.error_code == errors::UNSUPPORTED_VERSION
            && matches!(self.role, Role::Prospective(_))
        {
            info!(
                source,
                "a voter cannot pre-vote: running the election directly"
            );
            self.transition_to_candidate(now_ms)?;
            return Ok(true);
        }
        if response.error_code != errors::NONE {
            tracing::warn!(source, error = response.error_code, "vote response error");
            return Ok(false);
        }
        let Some(p) = response.topics.first().and_then(|t| t.partitions.first()) else {
            return Ok(false);
        };
        let leader = (p.leader_id.0 >= 0).then_some(p.leader_id.0);
        for e in &response.node_endpoints {
            if Some(e.node_id.0) == leader {
                self.learn_endpoint(e.node_id.0, e.host.as_str(), i64::from(e.port));
            }
        }
        if let Some(handled) =
            self.handle_common_response(now_ms, p.error_code, leader, p.leader_epoch)?
        {
            return Ok(handled);
        }
        if p.error_code != errors::NONE {
            tracing::warn!(source, error = p.error_code, "vote rejected with error");
            return Ok(false);
        }
        let voter_set = self.voter_set().clone();
        if !voter_set.contains(source) {
            return Ok(true); // no longer a voter: its answer does not count
        }
        let majority = voter_set.majority();
        let voters = voter_set.len();
        let in_set = |ids: &std::collections::BTreeSet<i32>| {
            ids.iter().filter(|id| voter_set.contains(**id)).count()
        };
        let lost = |granted: &std::collections::BTreeSet<i32>,
                    rejected: &std::collections::BTreeSet<i32>| {
            let (g, r) = (in_set(granted), in_set(rejected));
            g + voters.saturating_sub(g + r) < majority
        };
        match &mut self.role {
            Role::Prospective(pr) => {
                if p.vote_granted {
                    pr.granted.insert(source);
                    if in_set(&pr.granted) >= majority {
                        info!(epoch = self.epoch, granted = ?pr.granted, "pre-vote won");
                        self.transition_to_candidate(now_ms)?;
                    }
                } else {
                    pr.rejected.insert(source);
                    if lost(&pr.granted, &pr.rejected) {
                        info!(epoch = self.epoch, rejected = ?pr.rejected, "pre-vote lost");
                        self.prospective_lost(now_ms)?;
                    }
                }
            }
            Role::Candidate(c) => {
                if p.vote_granted {
                    c.granted.insert(source);
                    if in_set(&c.granted) >= majority {
                        self.transition_to_leader(now_ms)?;
                    }
                } else {
                    c.rejected.insert(source);
                    if lost(&c.granted, &c.rejected) {
                        // Kafka 4.x: wait out the election timeout, then go back to Prospective.
                        info!(
                            epoch = self.epoch,
                            "election lost; retrying after the election timeout"
                        );
                    }
                }
            }
            _ => {} // already leader, or no longer electing
        }
        Ok(true)
    }

    /// Sends a Vote (a pre-vote when Prospective) to every voter whose answer is not recorded,
    /// while the election can still be won.
    pub(crate) fn send_vote_requests(&mut self, now_ms: u64) {
        let voter_set = self.voter_set();
        let majority = voter_set.majority();
        let voters = voter_set.len();
        let (granted, rejected, pre_vote) = match &self.role {
            Role::Prospective(p) => (p.granted.clone(), p.rejected.clone(), true),
            Role::Candidate(c) => (c.granted.clone(), c.rejected.clone(), false),
            _ => return,
        };
        let g = granted.iter().filter(|id| voter_set.contains(**id)).count();
        let r = rejected
            .iter()
            .filter(|id| voter_set.contains(**id))
            .count();
        if g + voters.saturating_sub(g + r) < majority {
            return;
        }
        let pending: Vec<i32> = voter_set
            .ids()
            .filter(|v| !granted.contains(v) && !rejected.contains(v))
            .collect();
        for voter in pending {
            if self.requests.is_ready(voter, now_ms) {
                let request = self.build_vote_request(voter, pre_vote);
                self.send(voter, now_ms, request);
            }
        }
    }

    /// The directory id of voter `id` in the set in force, zero if none (static voters).
    pub(crate) fn voter_directory_id(&self, id: i32) -> Uuid {
        self.voter_set()
            .node(id)
            .and_then(|n| n.key.directory_id)
            .unwrap_or(Uuid::nil())
    }

    fn build_vote_request(&self, voter: i32, pre_vote: bool) -> RaftRequest {
        let end = self.log.end_offset();
        let partition = VoteReqPartition::default()
            .with_partition_index(METADATA_PARTITION)
            .with_replica_epoch(self.epoch)
            .with_replica_id(self.config.node_id.into())
            .with_replica_directory_id(self.config.directory_id)
            .with_voter_directory_id(self.voter_directory_id(voter))
            .with_last_offset_epoch(end.epoch)
            .with_last_offset(end.offset)
            .with_pre_vote(pre_vote);
        RaftRequest::Vote(
            VoteRequest::default()
                .with_cluster_id(self.cluster_id_field())
                .with_voter_id(voter.into())
                .with_topics(vec![VoteReqTopic::default()
                    .with_topic_name(StrBytes::from_static_str(METADATA_TOPIC_NAME).into())
                    .with_partitions(vec![partition])]),
        )
    }
}

fn single_partition(request: &VoteRequest) -> Option<&VoteReqPartition> {
    match request.topics.as_slice() {
        [t] if t.topic_name.0.as_str() == METADATA_TOPIC_NAME => match t.partitions.as_slice() {
            [p] if p.partition_index == METADATA_PARTITION => Some(p),
            _ => None,
        },
        _ => None,
    }
}
