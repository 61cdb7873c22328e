//! What goes in and out of the Raft core.
//!
//! The driver (the tokio server, or the simulation) feeds [`Input`]s with the current time and
//! drains [`Output`]s. Requests and responses are `kafka-protocol` message structs, so what the
//! core builds is exactly what goes on the wire; the driver only picks the version (negotiated
//! with the peer) and encodes.

use kafka_protocol::messages::{
    AddRaftVoterRequest, AddRaftVoterResponse, ApiKey, BeginQuorumEpochRequest,
    BeginQuorumEpochResponse, DescribeQuorumRequest, DescribeQuorumResponse, EndQuorumEpochRequest,
    EndQuorumEpochResponse, FetchRequest, FetchResponse, FetchSnapshotRequest,
    FetchSnapshotResponse, RemoveRaftVoterRequest, RemoveRaftVoterResponse, RequestKind,
    ResponseKind, UpdateRaftVoterRequest, UpdateRaftVoterResponse, VoteRequest, VoteResponse,
};

/// Identifies a request received by this node; chosen by the driver, echoed in the response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InboundId(pub u64);

/// Identifies a request this node sends; chosen by the core, echoed by the driver with the
/// response or failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OutboundId(pub u64);

/// The Raft RPCs the core handles, with the versions served: one list from which the request
/// and response enums, api keys and wire conversions come (as `kraftwerk-controller`'s list
/// does for the controller APIs). Versions are those whose semantics the core implements:
/// Vote v2 is pre-vote (KIP-996), Fetch v13+ names the topic by id, v17+ carries directory
/// ids, v18 the follower's high watermark (KIP-1166).
macro_rules! raft_apis {
    (
        served { $( $(#[doc = $doc:literal])* $name:ident($req:ident => $resp:ident) versions $min:literal ..= $max:literal; )* }
        sent { $( $(#[doc = $sdoc:literal])* $sname:ident($sreq:ident => $sresp:ident); )* }
    ) => {
        /// A Raft RPC request: the KIP-595 / KIP-630 / KIP-853 APIs the core handles, and the
        /// ones it only sends (to the leader's controller, which serves them).
        #[derive(Clone, Debug, PartialEq)]
        pub enum RaftRequest {
            $( $(#[doc = $doc])* $name($req), )*
            $( $(#[doc = $sdoc])* $sname($sreq), )*
        }

        /// A Raft RPC response, the counterpart of [`RaftRequest`].
        #[derive(Clone, Debug, PartialEq)]
        pub enum RaftResponse {
            $( $(#[doc = $doc])* $name($resp), )*
            $( $(#[doc = $sdoc])* $sname($sresp), )*
        }

        /// `(api, min version, max version)` of every Raft RPC the core serves, in list order.
        pub const RAFT_APIS: &[(ApiKey, i16, i16)] = &[ $( (ApiKey::$name, $min, $max), )* ];

        impl RaftRequest {
            /// The Kafka api of the request.
            pub fn api_key(&self) -> ApiKey {
                match self {
                    $( Self::$name(_) => ApiKey::$name, )*
                    $( Self::$sname(_) => ApiKey::$sname, )*
                }
            }

            /// The Raft request in `kind`, or `kind` back if it is not a Raft RPC the core
            /// serves (the sent-only ones go to the controller).
            // The input comes back unchanged on Err; boxing it would allocate on every route.
            #[allow(clippy::result_large_err)]
            pub fn from_kind(kind: RequestKind) -> Result<Self, RequestKind> {
                match kind {
                    $( RequestKind::$name(r) => Ok(Self::$name(r)), )*
                    other => Err(other),
                }
            }

            /// The wire form.
            pub fn into_kind(self) -> RequestKind {
                match self {
                    $( Self::$name(r) => RequestKind::$name(r), )*
                    $( Self::$sname(r) => RequestKind::$sname(r), )*
                }
            }
        }

        impl RaftResponse {
            /// The Kafka api of the response.
            pub fn api_key(&self) -> ApiKey {
                match self {
                    $( Self::$name(_) => ApiKey::$name, )*
                    $( Self::$sname(_) => ApiKey::$sname, )*
                }
            }

            /// The Raft response in `kind`, or `kind` back if it is not a Raft RPC's.
            #[allow(clippy::result_large_err)]
            pub fn from_kind(kind: ResponseKind) -> Result<Self, ResponseKind> {
                match kind {
                    $( ResponseKind::$name(r) => Ok(Self::$name(r)), )*
                    $( ResponseKind::$sname(r) => Ok(Self::$sname(r)), )*
                    other => Err(other),
                }
            }

            /// The wire form.
            pub fn into_kind(self) -> ResponseKind {
                match self {
                    $( Self::$name(r) => ResponseKind::$name(r), )*
                    $( Self::$sname(r) => ResponseKind::$sname(r), )*
                }
            }
        }
    };
}

raft_apis! {
    served {
        /// Fetch (api 1) from a voter or an observer (broker).
        Fetch(FetchRequest => FetchResponse) versions 4..=18;
        /// Vote (api 52).
        Vote(VoteRequest => VoteResponse) versions 0..=2;
        /// BeginQuorumEpoch (api 53).
        BeginQuorumEpoch(BeginQuorumEpochRequest => BeginQuorumEpochResponse) versions 0..=1;
        /// EndQuorumEpoch (api 54).
        EndQuorumEpoch(EndQuorumEpochRequest => EndQuorumEpochResponse) versions 0..=1;
        /// DescribeQuorum (api 55), from admin tools.
        DescribeQuorum(DescribeQuorumRequest => DescribeQuorumResponse) versions 0..=2;
        /// FetchSnapshot (api 59).
        FetchSnapshot(FetchSnapshotRequest => FetchSnapshotResponse) versions 0..=1;
        /// UpdateRaftVoter (api 82): a voter reports its directory id, endpoints and supported
        /// kraft.version range; our follower voters send it too (`core::kraft_upgrade`).
        UpdateRaftVoter(UpdateRaftVoterRequest => UpdateRaftVoterResponse) versions 0..=0;
    }
    sent {
        /// AddRaftVoter (api 80), sent by an observer controller joining the voter set
        /// (`controller.quorum.auto.join.enable`, `core::auto_join`); served by the controller.
        AddRaftVoter(AddRaftVoterRequest => AddRaftVoterResponse);
        /// RemoveRaftVoter (api 81), sent by a joining observer whose id is a voter with another
        /// directory (its old disk); served by the controller.
        RemoveRaftVoter(RemoveRaftVoterRequest => RemoveRaftVoterResponse);
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

/// Where an outbound request goes: the node id the core tracks it by and the endpoint to
/// connect to (on the controller listener). Endpoints are learned at run time — voters from the
/// voter set in force (a `VotersRecord`), the leader from `NodeEndpoints` / `LeaderEndpoints`
/// — so the driver connects by endpoint and replaces a connection whose endpoint changed.
/// Bootstrap servers (`controller.quorum.bootstrap.servers`, whose ids are unknown) get the
/// negative ids `-2, -3, …` in list order ([`crate::config::bootstrap_server_id`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Destination {
    /// Node id, or a negative id for a bootstrap server.
    pub node_id: i32,
    /// Host and port to connect to.
    pub endpoint: crate::config::Endpoint,
}

/// A message the driver must deliver.
#[derive(Clone, Debug)]
pub enum Output {
    /// Send a request to another node.
    Send {
        /// Echo this id with the response or failure.
        id: OutboundId,
        /// Destination node id and endpoint.
        destination: Destination,
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
