//! What a controller request comes with ([`RequestContext`], [`Principal`]) and what a handler
//! returns ([`ControllerResult`]). The requests themselves are listed in [`crate::api`].

use kraftwerk_records::metadata::ApiMessageAndVersion;

/// What the node knows about a request besides its body.
#[derive(Clone, Debug, Default)]
pub struct RequestContext {
    /// Request api version (after Envelope unwrapping: the inner request's version).
    pub api_version: i16,
    /// Current time in milliseconds (monotonic).
    pub now_ms: u64,
    /// When the request arrived (its last byte was read), on the same clock as `now_ms`; 0 when
    /// the caller did not stamp it. Read it through [`RequestContext::arrived_ms`].
    pub received_ms: u64,
    /// Offset the first record of this request's result will get (the log end offset): the
    /// broker epoch of a new registration.
    pub next_offset: i64,
    /// Raft leader id (DescribeCluster's controller id).
    pub leader_id: i32,
    /// Raft leader epoch.
    pub leader_epoch: i32,
    /// Client id from the request header.
    pub client_id: Option<String>,
    /// Listener the request arrived on (DescribeCluster lists controller endpoints on it).
    pub listener_name: String,
    /// Who the request runs as: the client's principal for a forwarded request, else the
    /// connection's (`User:ANONYMOUS` on a PLAINTEXT listener).
    pub principal: Principal,
    /// True if the request arrived inside an Envelope (`RequestChannel.Request.isForwarded`).
    pub forwarded: bool,
    /// The client's address (`RequestContext.clientAddress`): the TCP peer, or for a forwarded
    /// request the client's address the broker put in the Envelope. ACL hosts are matched
    /// against it; `None` (tests, callers that do not know) matches only `*` hosts.
    pub client_address: Option<std::net::IpAddr>,
    /// Submitted by this node to itself (its own ControllerRegistration while it leads), not
    /// received: not authorized (Java sends it over its own channel as the node's principal).
    pub internal: bool,
    /// AddRaftVoter: the `kraft.version` range (min, max) the new voter's ApiVersions v4
    /// advertised in `SupportedFeatures` (the server asks it before handing the request on, as
    /// Kafka's `AddVoterHandler` does); `None` if it was not asked or did not answer.
    pub new_voter_kraft_versions: Option<(i16, i16)>,
    /// UpdateFeatures raising kraft.version: the Raft layer's verdict on the upgrade to the
    /// requested level (Kafka `KRaftVersionAccessor.upgradeKRaftVersion` with
    /// `validateOnly = true`), asked by the node before the request got here, which performs
    /// the upgrade itself once the request succeeded; `None` if it was not asked (an inactive
    /// controller, or no kraft.version upgrade in the request).
    pub kraft_version_upgrade: Option<Result<(), crate::error::ApiError>>,
}

impl RequestContext {
    /// When the request arrived: `received_ms`, or `now_ms` when that is unset (0) or later
    /// than now. A heartbeat counts from here, not from when it was handled (KAFKA-15019).
    pub fn arrived_ms(&self) -> u64 {
        if self.received_ms == 0 || self.received_ms > self.now_ms {
            self.now_ms
        } else {
            self.received_ms
        }
    }
}

/// A Kafka principal (`KafkaPrincipal`): type, name, and whether it authenticated with a
/// delegation token. The default is `User:ANONYMOUS`, the principal of every PLAINTEXT
/// connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// Principal type, e.g. `User`.
    pub principal_type: String,
    /// Principal name, e.g. `ANONYMOUS`.
    pub name: String,
    /// Whether the client authenticated with a delegation token.
    pub token_authenticated: bool,
}

impl Default for Principal {
    fn default() -> Self {
        Principal {
            principal_type: "User".to_owned(),
            name: "ANONYMOUS".to_owned(),
            token_authenticated: false,
        }
    }
}

/// A handler's output: records to append and the response to send once they commit
/// (`ControllerResult`).
#[derive(Clone, Debug)]
pub struct ControllerResult<R> {
    /// Records to append, in order.
    pub records: Vec<ApiMessageAndVersion>,
    /// If true, all records must land in one batch (at most
    /// [`MAX_RECORDS_PER_BATCH`](crate::controller::MAX_RECORDS_PER_BATCH) records and 8 MiB).
    /// `Controller::handle` checks that bound ([`crate::validate::batch::check_result`]) and
    /// answers a result that breaks it with the request's error instead.
    pub atomic: bool,
    /// The response.
    pub response: R,
}

impl<R> ControllerResult<R> {
    /// A result whose records may be split over batches (`ControllerResult.of`).
    pub fn of(records: Vec<ApiMessageAndVersion>, response: R) -> Self {
        ControllerResult {
            records,
            atomic: false,
            response,
        }
    }

    /// A result whose records must be appended in one batch (`ControllerResult.atomicOf`). Not
    /// checked here: a handler bounds its records before building them, and
    /// `Controller::handle` refuses a result that still does not fit (as Java's
    /// `QuorumController.appendRecords` does) instead of writing part of it.
    pub fn atomic(records: Vec<ApiMessageAndVersion>, response: R) -> Self {
        ControllerResult {
            records,
            atomic: true,
            response,
        }
    }

    /// The same records with the response mapped.
    pub fn map<S>(self, f: impl FnOnce(R) -> S) -> ControllerResult<S> {
        ControllerResult {
            records: self.records,
            atomic: self.atomic,
            response: f(self.response),
        }
    }
}
