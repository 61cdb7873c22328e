//! Outbound client to one peer node (Raft RPCs to other controllers, ControllerRegistration to
//! the active controller), shaped after Kafka's `NetworkClient` as `RaftManager` configures it:
//!
//! - lazy connect on the first request; the first exchange on every new connection is
//!   ApiVersions (client software `kraftwerk` / crate version), retried at the peer's highest
//!   ApiVersions version if it answers `UNSUPPORTED_VERSION` (KIP-511);
//! - per api, the highest version both sides speak, capped by our own [`ApiTable`];
//! - one request timeout per request (`controller.quorum.request.timeout.ms`, default 2000 ms);
//!   a timed out request closes the connection, like `NetworkClient.handleTimedOutRequests`;
//! - reconnect backoff 50 ms doubling to 500 ms with ±20 % jitter (`reconnect.backoff.ms` /
//!   `reconnect.backoff.max.ms` in `RaftManager`), reset by a successful handshake; while backing
//!   off, requests fail at once with [`PeerError::Disconnected`] (Java's raft channel fails them
//!   as disconnected too and lets the raft layer retry);
//! - requests are pipelined up to `max_in_flight` and matched to responses by correlation id,
//!   which must come back in order (Kafka's check).
//!
//! A background task owns the connection; [`PeerClient`] handles are cheap to clone and the task
//! ends when the last one is dropped.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, RequestKind, ResponseKind};
use kafka_protocol::protocol::StrBytes;
use rand::Rng;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::io::{ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use kraftwerk_protocol::adapt::adapt_request_for_version;
use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_protocol::codec::{decode_response, encode_request_frame, request_header};
use kraftwerk_protocol::frame::{FrameDecoder, DEFAULT_MAX_FRAME_BYTES};
use kraftwerk_protocol::kinds::{request_api_key, response_api_key};
use kraftwerk_raft::config::DEFAULT_REQUEST_TIMEOUT_MS;

use super::sasl::ClientSasl;
use super::tls::{BoxStream, ClientTls};

/// The peer to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerNode {
    /// Its node id (for logs; Kafka's bootstrap servers use synthetic negative ids).
    pub node_id: i32,
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

/// Client settings.
#[derive(Debug, Clone)]
pub struct PeerClientConfig {
    /// Client id in every request header (`raft-client-<node.id>` for raft traffic).
    pub client_id: String,
    /// What we can send: per api, the versions we speak. Negotiation picks the highest version
    /// both this table and the peer's ApiVersions answer allow.
    pub api_table: Arc<ApiTable>,
    /// Per-request timeout in ms, from `send` until the response (raft: the
    /// `controller.quorum.request.timeout.ms` default, [`DEFAULT_REQUEST_TIMEOUT_MS`]).
    pub request_timeout_ms: u64,
    /// First reconnect backoff in ms (50).
    pub reconnect_backoff_ms: u64,
    /// Largest reconnect backoff in ms (500).
    pub reconnect_backoff_max_ms: u64,
    /// Requests in flight on the connection at once (pipelining bound, at least 1).
    pub max_in_flight: usize,
    /// Requests waiting to be sent; `send` waits for room when full.
    pub max_queued: usize,
    /// Largest accepted response frame in bytes.
    pub max_frame_bytes: usize,
    /// `Some` when the controller listener is SSL: every connection is TLS with the
    /// controller listener's `ssl.*` settings (Java's Raft client uses that listener's channel
    /// builder), the peer's certificate checked against the host dialled unless
    /// `ssl.endpoint.identification.algorithm` is empty.
    pub tls: Option<ClientTls>,
    /// `Some` when the controller listener is SASL: every connection authenticates after
    /// ApiVersions (SaslHandshake v1, then SaslAuthenticate at the highest common version),
    /// and one whose session has a lifetime is replaced before it ends (KIP-368).
    pub sasl: Option<ClientSasl>,
}

impl PeerClientConfig {
    /// Kafka's raft client settings (`RaftManager.buildNetworkClient`): client id
    /// `raft-client-<local_node_id>`, the default `controller.quorum.request.timeout.ms`
    /// ([`DEFAULT_REQUEST_TIMEOUT_MS`]), backoff 50 → 500 ms.
    pub fn raft(local_node_id: i32, api_table: Arc<ApiTable>) -> Self {
        Self {
            client_id: format!("raft-client-{local_node_id}"),
            api_table,
            request_timeout_ms: DEFAULT_REQUEST_TIMEOUT_MS,
            reconnect_backoff_ms: 50,
            reconnect_backoff_max_ms: 500,
            max_in_flight: 8,
            max_queued: 256,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            tls: None,
            sasl: None,
        }
    }
}

/// Why a request got no response.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PeerError {
    /// No response within the request timeout (the connection was closed).
    #[error("{api_key:?} request timed out after {timeout_ms} ms")]
    Timeout {
        /// The api.
        api_key: ApiKey,
        /// The timeout in ms.
        timeout_ms: u64,
    },
    /// The connection was lost or is backing off after a failure; retry later.
    #[error("disconnected: {reason}")]
    Disconnected {
        /// What happened.
        reason: String,
    },
    /// No version both sides speak (`None`: that side does not speak the api at all).
    #[error("no common version of {api:?}: ours {ours:?}, theirs {theirs:?}")]
    UnsupportedVersion {
        /// The api.
        api: ApiKey,
        /// Our `(min, max)`.
        ours: Option<(i16, i16)>,
        /// The peer's `(min, max)`.
        theirs: Option<(i16, i16)>,
    },
    /// Connecting failed.
    #[error("I/O error: {0}")]
    Io(Arc<std::io::Error>),
    /// The peer broke the protocol (malformed or mismatched response, failed handshake); the
    /// connection was closed.
    #[error("protocol error: {reason}")]
    Protocol {
        /// What was wrong.
        reason: String,
    },
    /// SASL authentication with the peer failed (a mechanism it does not enable, wrong
    /// credentials); the connection was closed and is retried after the backoff.
    #[error("SASL authentication failed: {reason}")]
    Authentication {
        /// The peer's error code and message (never our password).
        reason: String,
    },
    /// The request built for the negotiated version cannot be encoded at it (a caller bug, or a
    /// meaning the version cannot carry, e.g. a pre-vote below Vote v2).
    #[error("cannot encode request: {reason}")]
    Encode {
        /// The encoder's complaint.
        reason: String,
    },
}

/// Builds the request for the negotiated version.
type BuildFn = Box<dyn FnOnce(i16) -> RequestKind + Send>;

struct Call {
    api_key: ApiKey,
    build: BuildFn,
    deadline: Instant,
    reply: oneshot::Sender<Result<(i16, ResponseKind), PeerError>>,
}

/// Handle to the connection task of one peer. Clone freely.
#[derive(Clone)]
pub struct PeerClient {
    node: Arc<PeerNode>,
    calls: mpsc::Sender<Call>,
    request_timeout: Duration,
}

impl PeerClient {
    /// Starts the connection task (it connects on the first request). Must run inside a tokio
    /// runtime.
    pub fn new(node: PeerNode, config: PeerClientConfig) -> Self {
        assert!(
            config.max_in_flight > 0 && config.max_queued > 0,
            "peer client bounds must be positive"
        );
        assert!(
            config.api_table.range(ApiKey::ApiVersions).is_some(),
            "the client api table must list ApiVersions"
        );
        let (calls, rx) = mpsc::channel(config.max_queued);
        let node = Arc::new(node);
        let request_timeout = Duration::from_millis(config.request_timeout_ms);
        tokio::spawn(Actor::new(node.clone(), config, rx).run());
        Self {
            node,
            calls,
            request_timeout,
        }
    }

    /// The peer this client talks to.
    pub fn node(&self) -> &PeerNode {
        &self.node
    }

    /// Sends one request and waits for its response.
    ///
    /// `build` receives the negotiated version (highest common, capped by our table) and
    /// returns the request body; the body is adapted to that version before encoding (see
    /// [`kraftwerk_protocol::adapt`]). Returns the version used and the response body.
    ///
    /// Errors: see [`PeerError`]. The whole call, including connecting and queueing, is bounded
    /// by the request timeout.
    pub async fn send<F>(&self, api_key: ApiKey, build: F) -> Result<(i16, ResponseKind), PeerError>
    where
        F: FnOnce(i16) -> RequestKind + Send + 'static,
    {
        let deadline = Instant::now() + self.request_timeout;
        let (reply, response) = oneshot::channel();
        let call = Call {
            api_key,
            build: Box::new(build),
            deadline,
            reply,
        };
        let closed = || PeerError::Disconnected {
            reason: "peer client stopped".into(),
        };
        match tokio::time::timeout_at(deadline, self.calls.send(call)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(closed()),
            Err(_) => {
                return Err(PeerError::Timeout {
                    api_key,
                    timeout_ms: self.request_timeout.as_millis() as u64,
                })
            }
        }
        // The task enforces the deadline itself; the margin only guards against a stuck task.
        match tokio::time::timeout_at(deadline + Duration::from_millis(100), response).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(closed()),
            Err(_) => Err(PeerError::Timeout {
                api_key,
                timeout_ms: self.request_timeout.as_millis() as u64,
            }),
        }
    }
}

/// A sent request waiting for its response.
struct InFlight {
    correlation_id: i32,
    api_key: ApiKey,
    version: i16,
    deadline: Instant,
    reply: oneshot::Sender<Result<(i16, ResponseKind), PeerError>>,
}

/// An established, negotiated connection.
struct Live {
    writer: WriteHalf<BoxStream>,
    frames: mpsc::Receiver<Result<Bytes, String>>,
    reader: JoinHandle<()>,
    /// The peer's ApiVersions answer: api key → (min, max).
    versions: HashMap<i16, (i16, i16)>,
    in_flight: VecDeque<InFlight>,
    /// SASL with a session lifetime: when to replace this connection by a freshly
    /// authenticated one (85–95 % of the lifetime, as Kafka's clients re-authenticate).
    reauthenticate_at: Option<Instant>,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

struct Actor {
    node: Arc<PeerNode>,
    config: PeerClientConfig,
    calls: mpsc::Receiver<Call>,
    queue: VecDeque<Call>,
    live: Option<Live>,
    next_correlation_id: i32,
    /// Consecutive failures since the last successful handshake.
    failures: u32,
    /// No connection attempt before this instant.
    backoff_until: Option<Instant>,
    last_failure: String,
}

mod actor;
mod authenticate;
