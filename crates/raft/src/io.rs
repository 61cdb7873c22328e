//! What goes in and out of the Raft core.
//!
//! The driver (the tokio server, or the simulation) feeds [`Input`]s with the current time and
//! drains [`Output`]s. Requests and responses are `kafka-protocol` message structs, so what the
//! core builds is exactly what goes on the wire; the driver only picks the version (negotiated
//! with the peer) and encodes.

use kafka_protocol::messages::{
    BeginQuorumEpochRequest, BeginQuorumEpochResponse, DescribeQuorumRequest,
    DescribeQuorumResponse, EndQuorumEpochRequest, EndQuorumEpochResponse, FetchRequest,
    FetchResponse, FetchSnapshotRequest, FetchSnapshotResponse, UpdateRaftVoterRequest,
    UpdateRaftVoterResponse, VoteRequest, VoteResponse,
};

/// Identifies a request received by this node; chosen by the driver, echoed in the response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InboundId(pub u64);

/// Identifies a request this node sends; chosen by the core, echoed by the driver with the
/// response or failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OutboundId(pub u64);

/// A Raft RPC request (KIP-595 / KIP-630 / KIP-853 APIs handled by the core).
#[derive(Clone, Debug, PartialEq)]
pub enum RaftRequest {
    /// Vote (api 52).
    Vote(VoteRequest),
    /// BeginQuorumEpoch (api 53).
    BeginQuorumEpoch(BeginQuorumEpochRequest),
    /// EndQuorumEpoch (api 54).
    EndQuorumEpoch(EndQuorumEpochRequest),
    /// Fetch (api 1) from a voter or an observer (broker).
    Fetch(FetchRequest),
    /// FetchSnapshot (api 59).
    FetchSnapshot(FetchSnapshotRequest),
    /// DescribeQuorum (api 55), from admin tools.
    DescribeQuorum(DescribeQuorumRequest),
    /// UpdateRaftVoter (api 82), from a Java 4.1+ follower reporting its supported
    /// kraft.version range (answered, never sent: see `core::update_voter`).
    UpdateRaftVoter(UpdateRaftVoterRequest),
}

/// A Raft RPC response, the counterpart of [`RaftRequest`].
#[derive(Clone, Debug, PartialEq)]
pub enum RaftResponse {
    /// Vote (api 52).
    Vote(VoteResponse),
    /// BeginQuorumEpoch (api 53).
    BeginQuorumEpoch(BeginQuorumEpochResponse),
    /// EndQuorumEpoch (api 54).
    EndQuorumEpoch(EndQuorumEpochResponse),
    /// Fetch (api 1).
    Fetch(FetchResponse),
    /// FetchSnapshot (api 59).
    FetchSnapshot(FetchSnapshotResponse),
    /// DescribeQuorum (api 55).
    DescribeQuorum(DescribeQuorumResponse),
    /// UpdateRaftVoter (api 82).
    UpdateRaftVoter(UpdateRaftVoterResponse),
}

impl RaftRequest {
    /// Kafka api key of the request.
    pub fn api_key(&self) -> i16 {
        match self {
            RaftRequest::Vote(_) => 52,
            RaftRequest::BeginQuorumEpoch(_) => 53,
            RaftRequest::EndQuorumEpoch(_) => 54,
            RaftRequest::Fetch(_) => 1,
            RaftRequest::FetchSnapshot(_) => 59,
            RaftRequest::DescribeQuorum(_) => 55,
            RaftRequest::UpdateRaftVoter(_) => 82,
        }
    }
}

impl RaftResponse {
    /// Kafka api key of the response.
    pub fn api_key(&self) -> i16 {
        match self {
            RaftResponse::Vote(_) => 52,
            RaftResponse::BeginQuorumEpoch(_) => 53,
            RaftResponse::EndQuorumEpoch(_) => 54,
            RaftResponse::Fetch(_) => 1,
            RaftResponse::FetchSnapshot(_) => 59,
            RaftResponse::DescribeQuorum(_) => 55,
            RaftResponse::UpdateRaftVoter(_) => 82,
        }
    }
}

/// Why an outbound request got no response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendFailure {
    /// The connection could not be made or was lost.
    Disconnected,
    /// No response within `controller.quorum.request.timeout.ms`.
    Timeout,
    /// The peer does not support any version of this API we can send.
    UnsupportedVersion,
}

/// An input to the core. Time is passed separately to every call.
#[derive(Clone, Debug)]
pub enum Input {
    /// A request from a peer, a broker or a tool. `api_version` is the version it was sent at;
    /// the response will be encoded at the same version.
    Request {
        /// Driver-chosen id, echoed in [`Output::Respond`].
        id: InboundId,
        /// Version of the request (decides e.g. whether NodeEndpoints can be returned).
        api_version: i16,
        /// The request.
        request: RaftRequest,
    },
    /// The response to a request the core sent.
    Response {
        /// The id from [`Output::Send`].
        id: OutboundId,
        /// The peer's response.
        response: RaftResponse,
    },
    /// A request the core sent failed without a response.
    SendFailed {
        /// The id from [`Output::Send`].
        id: OutboundId,
        /// What happened.
        failure: SendFailure,
    },
}

/// A message the driver must deliver.
#[derive(Clone, Debug)]
pub enum Output {
    /// Send a request to another node (by node id).
    Send {
        /// Echo this id with the response or failure.
        id: OutboundId,
        /// Destination node id.
        destination: i32,
        /// The request.
        request: RaftRequest,
    },
    /// Answer a request received as [`Input::Request`].
    Respond {
        /// The request's id.
        id: InboundId,
        /// The response.
        response: RaftResponse,
    },
}
