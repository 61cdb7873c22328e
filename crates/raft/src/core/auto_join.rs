//! Auto-join (`controller.quorum.auto.join.enable`, Kafka 4.2+; Kafka
//! `KafkaRaftClient.pollFollowerAsObserver` / `shouldSendAddOrRemoveVoterRequest`): a controller
//! that follows a dynamic quorum (kraft.version 1) as an observer asks the leader to make it a
//! voter, every 3 × fetch timeout until it is one. If the voter set still holds its id with
//! another directory (the disk was replaced), it first removes that old key; then it adds itself
//! with AddRaftVoter (`AckWhenCommitted=false`, KIP-1186: the leader answers at append, so the
//! joining observer can go on fetching and commit its own addition).

use kafka_protocol::messages::add_raft_voter_request::Listener as AddListener;
use kafka_protocol::messages::{
    AddRaftVoterRequest, AddRaftVoterResponse, RemoveRaftVoterRequest, RemoveRaftVoterResponse,
};
use tracing::info;

use super::RaftCore;
use crate::errors;
use crate::io::RaftRequest;
use crate::role::Role;
use crate::storage::{QuorumStateStore, ReplicatedLog};

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    /// The request that moves this observer toward the voter set, if auto-join applies: a
    /// RemoveRaftVoter for its id's old directory, else an AddRaftVoter for itself.
    pub(crate) fn auto_join_request(&self) -> Option<RaftRequest> {
        if !self.config.auto_join || self.kraft_version() < 1 || self.is_voter() {
            return None;
        }
        if !matches!(self.role, Role::Follower(_)) {
            return None;
        }
        let local = self.local_voter_node()?;
        local.key.directory_id?;
        let cluster_id = self.cluster_id_field();
        if let Some(old) = self.voter_set().node(self.config.node_id) {
            info!(
                old_directory_id = %old.key.directory_id_or_zero(),
                "auto-join: removing this node's old directory from the voter set"
            );
            return Some(RaftRequest::RemoveRaftVoter(
                RemoveRaftVoterRequest::default()
                    .with_cluster_id(cluster_id)
                    .with_voter_id(old.key.id)
                    .with_voter_directory_id(old.key.directory_id_or_zero()),
            ));
        }
        info!("auto-join: asking the leader to add this node to the voter set");
        Some(RaftRequest::AddRaftVoter(
            AddRaftVoterRequest::default()
                .with_cluster_id(cluster_id)
                .with_timeout_ms(i32::try_from(self.config.request_timeout_ms).unwrap_or(i32::MAX))
                .with_voter_id(self.config.node_id)
                .with_voter_directory_id(self.config.directory_id)
                .with_listeners(crate::voters::endpoint_list!(AddListener, local.endpoints))
                .with_ack_when_committed(false),
        ))
    }

    /// The leader's answer to our AddRaftVoter: done, not yet (REQUEST_TIMED_OUT: not caught up,
    /// another change pending) or already a voter (DUPLICATE_VOTER) all wait for the next period
    /// (Kafka `handleAddVoterResponse`); other errors back off. Returns false to back off.
    pub(crate) fn handle_add_voter_response(&mut self, response: &AddRaftVoterResponse) -> bool {
        let expected = matches!(
            response.error_code,
            errors::NONE | errors::REQUEST_TIMED_OUT | errors::DUPLICATE_VOTER
        );
        if !expected {
            info!(
                error_code = response.error_code,
                message = ?response.error_message,
                "auto-join: AddRaftVoter refused"
            );
        }
        expected
    }

    /// The leader's answer to our RemoveRaftVoter of our old directory (Kafka
    /// `handleRemoveVoterResponse`): done, not yet, or already gone wait for the next period.
    pub(crate) fn handle_remove_voter_response(
        &mut self,
        response: &RemoveRaftVoterResponse,
    ) -> bool {
        matches!(
            response.error_code,
            errors::NONE | errors::REQUEST_TIMED_OUT | errors::VOTER_NOT_FOUND
        )
    }
}
