//! BeginQuorumEpoch (a new leader announces itself, then repeats it every fetch timeout / 2) and
//! EndQuorumEpoch (a resigning leader names its preferred successors), plus the response
//! handling shared by every Raft API (Kafka `maybeHandleCommonResponse`).

use kafka_protocol::messages::begin_quorum_epoch_request::{
    LeaderEndpoint as BeginLeaderEndpoint, PartitionData as BeginReqPartition,
    TopicData as BeginReqTopic,
};
use kafka_protocol::messages::begin_quorum_epoch_response::{
    NodeEndpoint as BeginNodeEndpoint, PartitionData as BeginRespPartition,
    TopicData as BeginRespTopic,
};
use kafka_protocol::messages::end_quorum_epoch_request::{
    PartitionData as EndReqPartition, ReplicaInfo, TopicData as EndReqTopic,
};
use kafka_protocol::messages::end_quorum_epoch_response::{
    NodeEndpoint as EndNodeEndpoint, PartitionData as EndRespPartition, TopicData as EndRespTopic,
};
use kafka_protocol::messages::{
    BeginQuorumEpochRequest, BeginQuorumEpochResponse, EndQuorumEpochRequest,
    EndQuorumEpochResponse,
};
use kafka_protocol::protocol::StrBytes;
use tracing::info;
use uuid::Uuid;

use super::transitions::Transition;
use super::{RaftCore, RaftError};
use crate::config::{MAX_REQUEST_EPOCH, METADATA_PARTITION, METADATA_TOPIC_NAME};
use crate::errors;
use crate::io::RaftRequest;
use crate::role::Role;
use crate::storage::{QuorumStateStore, ReplicatedLog};

fn topic_name() -> kafka_protocol::messages::TopicName {
    StrBytes::from_static_str(METADATA_TOPIC_NAME).into()
}

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    /// Kafka `maybeHandleCommonResponse`: `Some(handled)` when the response's epoch/leader
    /// information decided the outcome, `None` when the caller should look at the body.
    pub(crate) fn handle_common_response(
        &mut self,
        now_ms: u64,
        error: i16,
        leader_id: Option<i32>,
        epoch: i32,
    ) -> Result<Option<bool>, RaftError> {
        // A leader outside the static voter set cannot be resolved: treat it as unknown. A peer
        // naming us is only reporting the epoch we led and resigned (we are Resigned, or a
        // Prospective that was): nothing to follow.
        let leader_id =
            leader_id.filter(|l| *l != self.config.node_id && self.resolve(*l).is_some());
        if epoch < self.epoch || error == errors::UNKNOWN_LEADER_EPOCH {
            return Ok(Some(true));
        }
        if epoch > MAX_REQUEST_EPOCH {
            tracing::warn!(
                epoch,
                "ignoring a response naming an epoch beyond {MAX_REQUEST_EPOCH}"
            );
            return Ok(Some(false));
        }
        if epoch > self.epoch
            || error == errors::FENCED_LEADER_EPOCH
            || error == errors::NOT_LEADER_OR_FOLLOWER
        {
            let before = (self.epoch, self.leader_id());
            if self.maybe_transition(leader_id, epoch, now_ms)? == Transition::Refused {
                return Ok(Some(false));
            }
            // Nothing learned (e.g. the leader resigned but no successor yet): back off instead
            // of spinning on immediate retries.
            return Ok(Some(before != (self.epoch, self.leader_id())));
        }
        if epoch == self.epoch && leader_id.is_some() && self.known_leader().is_none() {
            self.transition_to_follower(epoch, leader_id.unwrap_or(-1), now_ms)?;
            return Ok(if error == errors::NONE {
                None
            } else {
                Some(true)
            });
        }
        match error {
            errors::BROKER_NOT_AVAILABLE => Ok(Some(false)),
            errors::INVALID_VOTER_KEY => {
                info!("voter key in our request did not match the receiver");
                Ok(Some(true))
            }
            errors::INVALID_REQUEST => {
                // Kafka treats this as fatal; a peer's complaint should not kill us. Log loudly.
                tracing::error!("peer answered INVALID_REQUEST to our request");
                Ok(Some(false))
            }
            _ => Ok(None),
        }
    }

    fn begin_response(&self, error: i16) -> BeginQuorumEpochResponse {
        let partition = BeginRespPartition::default()
            .with_partition_index(METADATA_PARTITION)
            .with_error_code(error)
            .with_leader_id(self.leader_id().unwrap_or(-1).into())
            .with_leader_epoch(self.epoch);
        let mut r = BeginQuorumEpochResponse::default()
            .with_topics(vec![BeginRespTopic::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![partition])]);
        if let Some((id, e)) = self.leader_endpoint() {
            r.node_endpoints = vec![BeginNodeEndpoint::default()
                .with_node_id(id.into())
                .with_host(StrBytes::from_string(e.host.clone()))
                .with_port(e.port)];
        }
        r
    }

    fn end_response(&self, error: i16) -> EndQuorumEpochResponse {
        let partition = EndRespPartition::default()
            .with_partition_index(METADATA_PARTITION)
            .with_error_code(error)
            .with_leader_id(self.leader_id().unwrap_or(-1).into())
            .with_leader_epoch(self.epoch);
        let mut r = EndQuorumEpochResponse::default().with_topics(vec![EndRespTopic::default()
            .with_topic_name(topic_name())
            .with_partitions(vec![partition])]);
        if let Some((id, e)) = self.leader_endpoint() {
            r.node_endpoints = vec![EndNodeEndpoint::default()
                .with_node_id(id.into())
                .with_host(StrBytes::from_string(e.host.clone()))
                .with_port(e.port)];
        }
        r
    }

    pub(crate) fn handle_begin_quorum_epoch_request(
        &mut self,
        now_ms: u64,
        request: BeginQuorumEpochRequest,
    ) -> Result<BeginQuorumEpochResponse, RaftError> {
        if !self.cluster_id_matches(&request.cluster_id) {
            return Ok(BeginQuorumEpochResponse::default()
                .with_error_code(errors::INCONSISTENT_CLUSTER_ID));
        }
        let p = match request.topics.as_slice() {
            [t] if t.topic_name.0.as_str() == METADATA_TOPIC_NAME
                && t.partitions.len() == 1
                && t.partitions[0].partition_index == METADATA_PARTITION =>
            {
                t.partitions[0].clone()
            }
            _ => {
                return Ok(
                    BeginQuorumEpochResponse::default().with_error_code(errors::INVALID_REQUEST)
                )
            }
        };
        if let Some(error) = self.voter_only_request_error(p.leader_id.0, p.leader_epoch) {
            return Ok(self.begin_response(error));
        }
        // The leader's address on our listener (BeginQuorumEpoch v1 `LeaderEndpoints`).
        let listener = self.config.listener_name.clone();
        for e in &request.leader_endpoints {
            if e.name.as_str().eq_ignore_ascii_case(&listener) {
                self.learn_endpoint(p.leader_id.0, e.host.as_str(), i64::from(e.port));
            }
        }
        if self.maybe_transition(Some(p.leader_id.0), p.leader_epoch, now_ms)?
            == Transition::Refused
        {
            return Ok(self.begin_response(errors::INVALID_REQUEST));
        }
        let key_ok = (request.voter_id.0 < 0 || request.voter_id.0 == self.config.node_id)
            && (p.voter_directory_id == Uuid::nil()
                || p.voter_directory_id == self.config.directory_id);
        Ok(self.begin_response(if key_ok {
            errors::NONE
        } else {
            errors::INVALID_VOTER_KEY
        }))
    }

    pub(crate) fn handle_begin_quorum_epoch_response(
        &mut self,
        now_ms: u64,
        source: i32,
        response: BeginQuorumEpochResponse,
    ) -> Result<bool, RaftError> {
        if response.error_code != errors::NONE {
            tracing::debug!(
                source,
                error = response.error_code,
                "BeginQuorumEpoch error"
            );
            return Ok(false);
        }
        let Some(p) = response.topics.first().and_then(|t| t.partitions.first()) else {
            return Ok(false);
        };
        let leader = (p.leader_id.0 >= 0).then_some(p.leader_id.0);
        if let Some(handled) =
            self.handle_common_response(now_ms, p.error_code, leader, p.leader_epoch)?
        {
            return Ok(handled);
        }
        Ok(p.error_code == errors::NONE)
    }

    pub(crate) fn handle_end_quorum_epoch_request(
        &mut self,
        now_ms: u64,
        request: EndQuorumEpochRequest,
    ) -> Result<EndQuorumEpochResponse, RaftError> {
        if !self.cluster_id_matches(&request.cluster_id) {
            return Ok(
                EndQuorumEpochResponse::default().with_error_code(errors::INCONSISTENT_CLUSTER_ID)
            );
        }
        let p = match request.topics.as_slice() {
            [t] if t.topic_name.0.as_str() == METADATA_TOPIC_NAME
                && t.partitions.len() == 1
                && t.partitions[0].partition_index == METADATA_PARTITION =>
            {
                t.partitions[0].clone()
            }
            _ => {
                return Ok(
                    EndQuorumEpochResponse::default().with_error_code(errors::INVALID_REQUEST)
                )
            }
        };
        if let Some(error) = self.voter_only_request_error(p.leader_id.0, p.leader_epoch) {
            return Ok(self.end_response(error));
        }
        if self.maybe_transition(Some(p.leader_id.0), p.leader_epoch, now_ms)?
            == Transition::Refused
        {
            return Ok(self.end_response(errors::INVALID_REQUEST));
        }
        let successors: Vec<i32> = if !p.preferred_candidates.is_empty() {
            p.preferred_candidates
                .iter()
                .map(|c| c.candidate_id.0)
                .collect()
        } else {
            p.preferred_successors.clone()
        };
        let backoff = self.end_epoch_election_backoff_ms(&successors);
        if let Role::Follower(f) = &mut self.role {
            if f.leader_id == p.leader_id.0 {
                f.fetch_deadline_ms = now_ms + backoff;
                info!(
                    epoch = self.epoch,
                    backoff_ms = backoff,
                    "leader resigned; election in {backoff} ms"
                );
            }
        }
        Ok(self.end_response(errors::NONE))
    }

    /// Kafka `endEpochElectionBackoff` / `strictExponentialElectionBackoffMs`: the first
    /// preferred successor runs for election at once, the others back off exponentially.
    fn end_epoch_election_backoff_ms(&self, successors: &[i32]) -> u64 {
        let max = self.config.election_backoff_max_ms;
        match successors.iter().position(|&s| s == self.config.node_id) {
            Some(0) => 0,
            None => max,
            Some(position) => {
                let n = successors.len() as u32;
                max.min((max >> (n - 1).min(63)) << (position as u32 - 1).min(63))
            }
        }
    }

    pub(crate) fn handle_end_quorum_epoch_response(
        &mut self,
        now_ms: u64,
        source: i32,
        response: EndQuorumEpochResponse,
    ) -> Result<bool, RaftError> {
        if response.error_code != errors::NONE {
            return Ok(false);
        }
        let Some(p) = response.topics.first().and_then(|t| t.partitions.first()) else {
            return Ok(false);
        };
        let leader = (p.leader_id.0 >= 0).then_some(p.leader_id.0);
        if let Some(handled) =
            self.handle_common_response(now_ms, p.error_code, leader, p.leader_epoch)?
        {
            return Ok(handled);
        }
        if p.error_code == errors::NONE {
            if let Role::Resigned(r) = &mut self.role {
                r.unacked.remove(&source);
                if self.shutting_down {
                    // Asked again after the backoff until a successor is known (poll_resigned).
                    self.requests
                        .backoff(source, now_ms, self.config.retry_backoff_ms);
                }
            }
            return Ok(true);
        }
        Ok(false)
    }

    pub(crate) fn build_begin_quorum_epoch_request(&self, voter: i32) -> RaftRequest {
        let partition = BeginReqPartition::default()
            .with_partition_index(METADATA_PARTITION)
            .with_voter_directory_id(self.voter_directory_id(voter))
            .with_leader_id(self.config.node_id.into())
            .with_leader_epoch(self.epoch);
        // Every controller listener of the leader (Kafka `LeaderState.leaderEndpoints`).
        let endpoints = self
            .local_voter_node()
            .map(|n| {
                n.endpoints
                    .iter()
                    .map(|(name, e)| {
                        BeginLeaderEndpoint::default()
                            .with_name(StrBytes::from_string(name.clone()))
                            .with_host(StrBytes::from_string(e.host.clone()))
                            .with_port(e.port)
                    })
                    .collect()
            })
            .unwrap_or_default();
        RaftRequest::BeginQuorumEpoch(
            BeginQuorumEpochRequest::default()
                .with_cluster_id(self.cluster_id_field())
                .with_voter_id(voter.into())
                .with_topics(vec![BeginReqTopic::default()
                    .with_topic_name(topic_name())
                    .with_partitions(vec![partition])])
                .with_leader_endpoints(endpoints),
        )
    }

    pub(crate) fn build_end_quorum_epoch_request(&self) -> RaftRequest {
        let successors = match &self.role {
            Role::Resigned(r) => r.preferred_successors.clone(),
            _ => Vec::new(),
        };
        let partition = EndReqPartition::default()
            .with_partition_index(METADATA_PARTITION)
            .with_leader_id(self.config.node_id.into())
            .with_leader_epoch(self.epoch)
            .with_preferred_successors(successors.clone())
            .with_preferred_candidates(
                successors
                    .iter()
                    .map(|&id| {
                        ReplicaInfo::default()
                            .with_candidate_id(id.into())
                            .with_candidate_directory_id(self.voter_directory_id(id))
                    })
                    .collect(),
            );
        RaftRequest::EndQuorumEpoch(
            EndQuorumEpochRequest::default()
                .with_cluster_id(self.cluster_id_field())
                .with_topics(vec![EndReqTopic::default()
                    .with_topic_name(topic_name())
                    .with_partitions(vec![partition])]),
        )
    }
}
