//! Kafka error codes used by the Raft APIs (`org.apache.kafka.common.protocol.Errors`).

/// No error.
pub const NONE: i16 = 0;
/// The partition is unknown (DescribeQuorum on the wrong topic).
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
/// This node is not the leader of the epoch the request names.
pub const NOT_LEADER_OR_FOLLOWER: i16 = 6;
/// The API version is not supported (Vote v2 pre-vote to an older peer).
pub const UNSUPPORTED_VERSION: i16 = 35;
/// Request timed out.
pub const REQUEST_TIMED_OUT: i16 = 7;
/// The leader is shutting down.
pub const BROKER_NOT_AVAILABLE: i16 = 8;
/// Unexpected server error.
pub const UNKNOWN_SERVER_ERROR: i16 = -1;
/// The request is malformed.
pub const INVALID_REQUEST: i16 = 42;
/// The requester's epoch is older than ours.
pub const FENCED_LEADER_EPOCH: i16 = 74;
/// The requester's epoch is newer than ours.
pub const UNKNOWN_LEADER_EPOCH: i16 = 75;
/// FetchSnapshot: no such snapshot.
pub const SNAPSHOT_NOT_FOUND: i16 = 98;
/// FetchSnapshot: position outside the snapshot.
pub const POSITION_OUT_OF_RANGE: i16 = 99;
/// The request's cluster id is not ours.
pub const INCONSISTENT_CLUSTER_ID: i16 = 104;
/// The voter key in the request does not match this replica.
pub const INVALID_VOTER_KEY: i16 = 125;
