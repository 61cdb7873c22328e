//! Kafka error codes used by the Raft APIs (`org.apache.kafka.common.protocol.Errors`), named
//! from `kafka-protocol`'s table so that each number is written once.

use kafka_protocol::error::ResponseError;

/// No error.
pub const NONE: i16 = 0;
/// The partition is unknown (DescribeQuorum on the wrong topic).
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = ResponseError::UnknownTopicOrPartition.code();
/// This node is not the leader of the epoch the request names.
pub const NOT_LEADER_OR_FOLLOWER: i16 = ResponseError::NotLeaderOrFollower.code();
/// The API version is not supported (Vote v2 pre-vote to an older peer).
pub const UNSUPPORTED_VERSION: i16 = ResponseError::UnsupportedVersion.code();
/// Request timed out.
pub const REQUEST_TIMED_OUT: i16 = ResponseError::RequestTimedOut.code();
/// The leader is shutting down.
pub const BROKER_NOT_AVAILABLE: i16 = ResponseError::BrokerNotAvailable.code();
/// Unexpected server error.
pub const UNKNOWN_SERVER_ERROR: i16 = ResponseError::UnknownServerError.code();
/// The request is malformed.
pub const INVALID_REQUEST: i16 = ResponseError::InvalidRequest.code();
/// The requester's epoch is older than ours.
pub const FENCED_LEADER_EPOCH: i16 = ResponseError::FencedLeaderEpoch.code();
/// The requester's epoch is newer than ours.
pub const UNKNOWN_LEADER_EPOCH: i16 = ResponseError::UnknownLeaderEpoch.code();
/// FetchSnapshot: no such snapshot.
pub const SNAPSHOT_NOT_FOUND: i16 = ResponseError::SnapshotNotFound.code();
/// FetchSnapshot: position outside the snapshot.
pub const POSITION_OUT_OF_RANGE: i16 = ResponseError::PositionOutOfRange.code();
/// The request's cluster id is not ours.
pub const INCONSISTENT_CLUSTER_ID: i16 = ResponseError::InconsistentClusterId.code();
/// The request names a voter set this node does not have: a Vote, BeginQuorumEpoch or
/// EndQuorumEpoch from a node that is not a voter (Kafka `validateVoterOnlyRequest`).
pub const INCONSISTENT_VOTER_SET: i16 = ResponseError::InconsistentVoterSet.code();
/// The voter key in the request does not match this replica.
pub const INVALID_VOTER_KEY: i16 = ResponseError::InvalidVoterKey.code();
/// AddRaftVoter: the voter id is already a voter (KIP-853).
pub const DUPLICATE_VOTER: i16 = ResponseError::DuplicateVoter.code();
/// RemoveRaftVoter: no voter with this key (KIP-853).
pub const VOTER_NOT_FOUND: i16 = ResponseError::VoterNotFound.code();
