//! Elections: Vote requests and responses (KIP-595, Kafka `handleVoteRequest`/`handleVoteResponse`).

use kafka_protocol::messages::vote_request::{PartitionData as VoteReqPartition, TopicData as VoteReqTopic};
use kafka_protocol::messages::vote_response::{
    NodeEndpoint as VoteNodeEndpoint, PartitionData as VoteRespPartition, TopicData as VoteRespTopic,
};
use kafka_protocol::messages::{VoteRequest, VoteResponse};
use kafka_protocol::protocol::StrBytes;
use tracing::info;
use uuid::Uuid;

use super::{RaftCore, RaftError};
use crate::config::{METADATA_PARTITION, METADATA_TOPIC_NAME};
use crate::errors;
use crate::io::RaftRequest;
use crate::role::Role;
use crate::storage::{OffsetAndEpoch, QuorumStateStore, ReplicatedLog};

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    pub(crate) fn cluster_id_matches(&self, cluster_id: &Option<StrBytes>) -> bool {
        cluster_id.as_ref().is_none_or(|c| c.as_str() == self.config.cluster_id)
    }

    pub(crate) fn cluster_id_field(&self) -> Option<StrBytes> {
        Some(StrBytes::from_string(self.config.cluster_id.clone()))
    }

    /// The leader's endpoint on the controller listener, if the leader is known and resolvable.
    pub(crate) fn leader_endpoint(&self) -> Option<(i32, &crate::config::Endpoint)> {
        let leader = self.leader_id()?;
        self.config.voters.get(&leader).map(|e| (leader, e))
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

    pub(crate) fn handle_vote_request(&mut self, now_ms: u64, request: VoteRequest) -> Result<VoteResponse, RaftError> {
        if !self.cluster_id_matches(&request.cluster_id) {
            return Ok(VoteResponse::default().with_error_code(errors::INCONSISTENT_CLUSTER_ID));
        }
        let Some(p) = single_partition(&request) else {
            return Ok(VoteResponse::default().with_error_code(errors::INVALID_REQUEST));
        };
        let candidate_id = p.replica_id.0;
        let candidate_epoch = p.replica_epoch;
        let last = OffsetAndEpoch::new(p.last_offset, p.last_offset_epoch);
        if last.offset < 0 || last.epoch < 0 || last.epoch >= candidate_epoch {
            return Ok(self.vote_response(errors::INVALID_REQUEST, false));
        }
        if candidate_epoch < self.epoch {
            return Ok(self.vote_response(errors::FENCED_LEADER_EPOCH, false));
        }
        if candidate_id < 0 {
            return Ok(self.vote_response(errors::INVALID_REQUEST, false));
        }
        if candidate_epoch > self.epoch {
            self.transition_to_unattached(candidate_epoch, now_ms)?;
        }
        let voter_key_ok = (request.voter_id.0 < 0 || request.voter_id.0 == self.config.node_id)
            && (p.voter_directory_id == Uuid::nil() || p.voter_directory_id == self.config.directory_id);
        if !voter_key_ok {
            return Ok(self.vote_response(errors::INVALID_VOTER_KEY, false));
        }
        let log_up_to_date = last >= self.log.end_offset();
        let granted = match &self.role {
            Role::Unattached(u) => match u.voted {
                Some(v) => v == candidate_id,
                None => u.leader_hint.is_none() && log_up_to_date,
            },
            _ => false,
        };
        if granted && matches!(&self.role, Role::Unattached(u) if u.voted.is_none()) {
            self.transition_to_unattached_voted(candidate_id, now_ms)?;
        }
        info!(candidate_id, candidate_epoch, granted, log_up_to_date, "vote request");
        Ok(self.vote_response(errors::NONE, granted))
    }

    pub(crate) fn handle_vote_response(&mut self, now_ms: u64, source: i32, response: VoteResponse) -> Result<bool, RaftError> {
        if response.error_code != errors::NONE {
            tracing::warn!(source, error = response.error_code, "vote response error");
            return Ok(false);
        }
        let Some(p) = response.topics.first().and_then(|t| t.partitions.first()) else {
            return Ok(false);
        };
        let leader = (p.leader_id.0 >= 0).then_some(p.leader_id.0);
        if let Some(handled) = self.handle_common_response(now_ms, p.error_code, leader, p.leader_epoch)? {
            return Ok(handled);
        }
        if p.error_code != errors::NONE {
            tracing::warn!(source, error = p.error_code, "vote rejected with error");
            return Ok(false);
        }
        let majority = self.config.majority();
        let voters = self.config.voters.len();
        let Role::Candidate(c) = &mut self.role else {
            return Ok(true); // already leader, or no longer a candidate
        };
        if p.vote_granted {
            c.granted.insert(source);
            if c.granted.len() >= majority {
                return self.transition_to_leader(now_ms).map(|_| true);
            }
        } else {
            c.rejected.insert(source);
            let unrecorded = voters - c.granted.len() - c.rejected.len();
            if c.granted.len() + unrecorded < majority && c.backoff_deadline_ms.is_none() {
                let retries = c.retries;
                let backoff = self.election_backoff_ms(retries);
                info!(epoch = self.epoch, backoff_ms = backoff, "election lost");
                if let Role::Candidate(c) = &mut self.role {
                    c.backoff_deadline_ms = Some(now_ms + backoff);
                }
            }
        }
        Ok(true)
    }

    /// Sends a Vote request to every voter whose vote is not recorded yet, while the election
    /// can still be won.
    pub(crate) fn send_vote_requests(&mut self, now_ms: u64) {
        let Role::Candidate(c) = &self.role else { return };
        if c.backoff_deadline_ms.is_some() {
            return;
        }
        let pending: Vec<i32> = self
            .config
            .voters
            .keys()
            .copied()
            .filter(|v| !c.granted.contains(v) && !c.rejected.contains(v))
            .collect();
        for voter in pending {
            if self.requests.is_ready(voter, now_ms) {
                let request = self.build_vote_request(voter);
                self.send(voter, now_ms, request);
            }
        }
    }

    fn build_vote_request(&self, voter: i32) -> RaftRequest {
        let end = self.log.end_offset();
        let partition = VoteReqPartition::default()
            .with_partition_index(METADATA_PARTITION)
            .with_replica_epoch(self.epoch)
            .with_replica_id(self.config.node_id.into())
            .with_replica_directory_id(self.config.directory_id)
            .with_voter_directory_id(Uuid::nil())
            .with_last_offset_epoch(end.epoch)
            .with_last_offset(end.offset);
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
