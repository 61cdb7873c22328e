//! Authorization of the requests the node answers without the controller's request path: the
//! Raft RPCs (Kafka's `ControllerApis.handleVote` etc. call
//! `authHelper.authorizeClusterOperation(request, CLUSTER_ACTION)` before handing them to the
//! Raft layer; DescribeQuorum asks DESCRIBE) and the Envelope (CLUSTER_ACTION for the broker's
//! connection principal before it is unwrapped, `ControllerApis.handleEnvelopeRequest`).

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_controller::authorization::cluster_denied_message;
use kraftwerk_controller::authorizer::AclOperation;
use kraftwerk_raft::{RaftRequest, RaftResponse};

/// The CLUSTER operation a Raft RPC needs.
pub(crate) fn raft_operation(request: &RaftRequest) -> AclOperation {
    match request {
        RaftRequest::DescribeQuorum(_) => AclOperation::Describe,
        _ => AclOperation::ClusterAction,
    }
}

/// The answer to a Raft RPC refused for lacking `operation` on the cluster: its top-level
/// error CLUSTER_AUTHORIZATION_FAILED (`getErrorResponse`; Fetch: `FetchResponse.of(error)`
/// with no partitions).
pub(crate) fn raft_refusal(request: &RaftRequest, operation: AclOperation) -> RaftResponse {
    let code = ResponseError::ClusterAuthorizationFailed.code();
    match request {
        RaftRequest::Fetch(_) => {
            RaftResponse::Fetch(FetchResponse::default().with_error_code(code))
        }
        RaftRequest::Vote(_) => RaftResponse::Vote(VoteResponse::default().with_error_code(code)),
        RaftRequest::BeginQuorumEpoch(_) => RaftResponse::BeginQuorumEpoch(
            BeginQuorumEpochResponse::default().with_error_code(code),
        ),
        RaftRequest::EndQuorumEpoch(_) => {
            RaftResponse::EndQuorumEpoch(EndQuorumEpochResponse::default().with_error_code(code))
        }
        RaftRequest::DescribeQuorum(_) => RaftResponse::DescribeQuorum(
            DescribeQuorumResponse::default()
                .with_error_code(code)
                .with_error_message(Some(StrBytes::from_string(cluster_denied_message(
                    "DescribeQuorum",
                    operation,
                )))),
        ),
        RaftRequest::FetchSnapshot(_) => {
            RaftResponse::FetchSnapshot(FetchSnapshotResponse::default().with_error_code(code))
        }
        RaftRequest::UpdateRaftVoter(_) => {
            RaftResponse::UpdateRaftVoter(UpdateRaftVoterResponse::default().with_error_code(code))
        }
        RaftRequest::AddRaftVoter(_) => {
            RaftResponse::AddRaftVoter(AddRaftVoterResponse::default().with_error_code(code))
        }
        RaftRequest::RemoveRaftVoter(_) => {
            RaftResponse::RemoveRaftVoter(RemoveRaftVoterResponse::default().with_error_code(code))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::ApiKey;

    #[test]
    fn every_raft_refusal_answers_its_own_api_with_cluster_authorization_failed() {
        let requests = [
            RaftRequest::Fetch(FetchRequest::default()),
            RaftRequest::Vote(VoteRequest::default()),
            RaftRequest::BeginQuorumEpoch(BeginQuorumEpochRequest::default()),
            RaftRequest::EndQuorumEpoch(EndQuorumEpochRequest::default()),
            RaftRequest::DescribeQuorum(DescribeQuorumRequest::default()),
            RaftRequest::FetchSnapshot(FetchSnapshotRequest::default()),
            RaftRequest::UpdateRaftVoter(UpdateRaftVoterRequest::default()),
        ];
        for request in requests {
            let op = raft_operation(&request);
            let response = raft_refusal(&request, op);
            assert_eq!(response.api_key(), request.api_key());
            let code = match &response {
                RaftResponse::Fetch(r) => r.error_code,
                RaftResponse::Vote(r) => r.error_code,
                RaftResponse::BeginQuorumEpoch(r) => r.error_code,
                RaftResponse::EndQuorumEpoch(r) => r.error_code,
                RaftResponse::DescribeQuorum(r) => r.error_code,
                RaftResponse::FetchSnapshot(r) => r.error_code,
                RaftResponse::UpdateRaftVoter(r) => r.error_code,
                RaftResponse::AddRaftVoter(r) => r.error_code,
                RaftResponse::RemoveRaftVoter(r) => r.error_code,
            };
            assert_eq!(code, 31, "{:?}", request.api_key());
            assert_eq!(
                op == AclOperation::Describe,
                request.api_key() == ApiKey::DescribeQuorum
            );
        }
    }
}
