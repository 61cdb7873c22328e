//! AddRaftVoter and RemoveRaftVoter at kraft.version ≥ 1 go to the Raft layer
//! (`RaftCore::add_voter` / `remove_voter`, Kafka `KafkaRaftClient.handleAdd/RemoveVoterRequest`),
//! answered when the new voter set commits (AddRaftVoter v1 with `AckWhenCommitted=false`: once
//! appended). At kraft.version 0 the controller keeps answering them (UNSUPPORTED_VERSION, as
//! Kafka). The new voter's ApiVersions was asked by the server before the request got here
//! (`RequestContext::new_voter_kraft_versions`).

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{AddRaftVoterResponse, RemoveRaftVoterResponse};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_controller::{ControllerRequest, ControllerResponse, RequestContext};
use kraftwerk_raft::{
    Endpoint, QuorumStateStore, ReplicaKey, ReplicatedLog, VoterChangeAnswer, VoterNode,
};

use crate::error::NodeError;
use crate::messages::{NodeOutput, RequestToken};
use crate::node::Node;

/// Which API a voter change answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VoterChangeApi {
    Add,
    Remove,
}

fn voter_change_response(api: VoterChangeApi, answer: &VoterChangeAnswer) -> ControllerResponse {
    let message = answer.error_message.clone().map(StrBytes::from_string);
    match api {
        VoterChangeApi::Add => ControllerResponse::AddRaftVoter(
            AddRaftVoterResponse::default()
                .with_error_code(answer.error_code)
                .with_error_message(message),
        ),
        VoterChangeApi::Remove => ControllerResponse::RemoveRaftVoter(
            RemoveRaftVoterResponse::default()
                .with_error_code(answer.error_code)
                .with_error_message(message),
        ),
    }
}

impl<L: ReplicatedLog, Q: QuorumStateStore> Node<L, Q> {
    /// Takes RemoveRaftVoter at kraft.version ≥ 1 (true), else leaves the request to the
    /// controller (false). Checked as Kafka does: the cluster id first, then the Raft leader's
    /// checks.
    pub(crate) fn maybe_handle_voter_change(
        &mut self,
        now_ms: u64,
        token: RequestToken,
        ctx: &RequestContext,
        request: &ControllerRequest,
    ) -> Result<bool, NodeError> {
        if self.raft.kraft_version() < 1 {
            return Ok(false);
        }
        let (api, cluster_id) = match request {
            ControllerRequest::AddRaftVoter(r) => (VoterChangeApi::Add, &r.cluster_id),
            ControllerRequest::RemoveRaftVoter(r) => (VoterChangeApi::Remove, &r.cluster_id),
            _ => return Ok(false),
        };
        let answer = if cluster_id
            .as_ref()
            .is_some_and(|c| c.as_str() != self.raft.config().cluster_id)
        {
            Some(VoterChangeAnswer {
                request_id: token.0,
                error_code: ResponseError::InconsistentClusterId.code(),
                error_message: None,
            })
        } else {
            match request {
                ControllerRequest::AddRaftVoter(r) => {
                    let node = VoterNode {
                        key: ReplicaKey::new(r.voter_id, r.voter_directory_id),
                        endpoints: r
                            .listeners
                            .iter()
                            .map(|l| {
                                (
                                    l.name.as_str().to_ascii_uppercase(),
                                    Endpoint {
                                        host: l.host.as_str().to_owned(),
                                        port: l.port,
                                    },
                                )
                            })
                            .collect(),
                        supported_kraft_versions: (0, 0),
                    };
                    // v0 has no AckWhenCommitted: it is always acknowledged at commit.
                    let ack_when_committed = ctx.api_version < 1 || r.ack_when_committed;
                    self.raft.add_voter(
                        now_ms,
                        token.0,
                        node,
                        ack_when_committed,
                        ctx.new_voter_kraft_versions,
                    )?
                }
                ControllerRequest::RemoveRaftVoter(r) => self.raft.remove_voter(
                    now_ms,
                    token.0,
                    ReplicaKey::new(r.voter_id, r.voter_directory_id),
                )?,
                _ => unreachable!("matched above"),
            }
        };
        match answer {
            Some(answer) => self.outputs.push(NodeOutput::Controller {
                token,
                response: voter_change_response(api, &answer),
            }),
            None => {
                self.voter_change_apis.insert(token.0, api);
            }
        }
        Ok(true)
    }

    /// Answers voter changes the Raft layer completed (committed, timed out, leadership lost).
    pub(crate) fn release_voter_changes(&mut self) {
        for answer in self.raft.take_voter_change_answers() {
            let Some(api) = self.voter_change_apis.remove(&answer.request_id) else {
                continue;
            };
            self.outputs.push(NodeOutput::Controller {
                token: RequestToken(answer.request_id),
                response: voter_change_response(api, &answer),
            });
        }
    }
}
