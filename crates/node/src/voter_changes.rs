//! RemoveRaftVoter at kraft.version ≥ 1 goes to the Raft layer (`RaftCore::remove_voter`,
//! Kafka `KafkaRaftClient.handleRemoveVoterRequest`), answered when the new voter set commits.
//! At kraft.version 0 the controller keeps answering it (UNSUPPORTED_VERSION, as Kafka).
//!
//! AddRaftVoter is not routed here yet: the leader must first ask the new voter's ApiVersions
//! (`RaftCore::add_voter` takes the `kraft.version` range it advertised), which needs the
//! server to open a connection to the new voter's endpoint.

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::RemoveRaftVoterResponse;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_controller::{ControllerRequest, ControllerResponse};
use kraftwerk_raft::{QuorumStateStore, ReplicaKey, ReplicatedLog, VoterChangeAnswer};

use crate::error::NodeError;
use crate::messages::{NodeOutput, RequestToken};
use crate::node::Node;

fn remove_response(answer: &VoterChangeAnswer) -> ControllerResponse {
    ControllerResponse::RemoveRaftVoter(
        RemoveRaftVoterResponse::default()
            .with_error_code(answer.error_code)
            .with_error_message(answer.error_message.clone().map(StrBytes::from_string)),
    )
}

impl<L: ReplicatedLog, Q: QuorumStateStore> Node<L, Q> {
    /// Takes RemoveRaftVoter at kraft.version ≥ 1 (true), else leaves the request to the
    /// controller (false). Checked as Kafka does: the cluster id first, then the Raft leader's
    /// checks.
    pub(crate) fn maybe_handle_voter_change(
        &mut self,
        now_ms: u64,
        token: RequestToken,
        request: &ControllerRequest,
    ) -> Result<bool, NodeError> {
        if self.raft.kraft_version() < 1 {
            return Ok(false);
        }
        let ControllerRequest::RemoveRaftVoter(r) = request else {
            return Ok(false);
        };
        let answer = if r
            .cluster_id
            .as_ref()
            .is_some_and(|c| c.as_str() != self.raft.config().cluster_id)
        {
            Some(VoterChangeAnswer {
                request_id: token.0,
                error_code: ResponseError::InconsistentClusterId.code(),
                error_message: None,
            })
        } else {
            self.raft.remove_voter(
                now_ms,
                token.0,
                ReplicaKey::new(r.voter_id, r.voter_directory_id),
            )?
        };
        if let Some(answer) = answer {
            self.outputs.push(NodeOutput::Controller {
                token,
                response: remove_response(&answer),
            });
        }
        Ok(true)
    }

    /// Answers voter changes the Raft layer completed (committed, timed out, leadership lost).
    pub(crate) fn release_voter_changes(&mut self) {
        for answer in self.raft.take_voter_change_answers() {
            self.outputs.push(NodeOutput::Controller {
                token: RequestToken(answer.request_id),
                response: remove_response(&answer),
            });
        }
    }
}
