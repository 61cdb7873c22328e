//! A Kafka-protocol TCP listener: binds, accepts, runs one task per connection (see
//! [`super::connection`]), and shuts down gracefully.
//!
//! Bounds, following Kafka's `SocketServer`: frame size (`socket.request.max.bytes`; a larger
//! size prefix closes the connection before anything is buffered), concurrent connections
//! (`max.connections`, `max.connections.per.ip` and its overrides, with room kept for the other
//! voters, see [`super::quotas`]; a connection over a cap is closed at once with a log line),
//! and idle time (`connections.max.idle.ms`, 600000 by default on every node type: a connection
//! that completes no request for that long is closed, including one that sent part of a frame and
//! stalled). Each connection buffers at most one request (the next is not read before the
//! previous response is written) and one response.

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_protocol::api_versions::{ApiVersionsFeatures, ServerIdentity};
use kraftwerk_protocol::envelope::ForwardedPrincipal;
use kraftwerk_protocol::frame::DEFAULT_MAX_FRAME_BYTES;

use super::quotas::{ConnectionLimits, ConnectionQuotas};
use super::sasl::ServerSasl;
use super::tls::ServerTls;

/// A boxed, sendable future (the shape [`RequestHandler::handle`] returns).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the handler learns about one request besides its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestContext {
    /// The api (of the inner request when forwarded).
    pub api_key: ApiKey,
    /// Its version; the response is encoded at this version.
    pub api_version: i16,
    /// The correlation id the response will carry.
    pub correlation_id: i32,
    /// The request header's client id (empty when null); for raft peers `raft-client-<id>`, for
    /// broker channels the broker id.
    pub client_id: String,
    /// The TCP peer (for a forwarded request: the broker that sent the Envelope).
    pub peer_addr: SocketAddr,
    /// The listener's name, e.g. `CONTROLLER`.
    pub listener_name: Arc<str>,
    /// `Some` when the request arrived inside an Envelope.
    pub forwarded: Option<ForwardedContext>,
    /// When the request's last byte was read (a heartbeat counts from here, KAFKA-15019).
    pub received_at: std::time::Instant,
    /// The connection's principal (`KafkaPrincipal` as `User:NAME`): on an SSL listener the
    /// mapped subject of the client's certificate, else `User:ANONYMOUS`. Kept for the
    /// authorizer; nothing is authorized on it yet.
    pub principal: Arc<str>,
    /// The connection's SASL client authenticated with a delegation token (KIP-48): its
    /// principal may not create, renew or expire tokens.
    pub token_authenticated: bool,
}

/// Where a forwarded request came from (KIP-590 Envelope).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardedContext {
    /// The client's principal, as authenticated by the broker.
    pub principal: ForwardedPrincipal,
    /// The client's address, as seen by the broker.
    pub client_address: IpAddr,
    /// The Envelope's own client id (the broker's).
    pub envelope_client_id: String,
    /// The Envelope's own correlation id.
    pub envelope_correlation_id: i32,
}

/// A handler failure. The listener logs it and closes that connection (the client reconnects
/// and retries; Kafka clients treat a disconnect as retriable).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct HandlerError {
    /// Why, for the log line.
    pub reason: String,
}

impl HandlerError {
    /// A handler error with `reason`.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }
}

/// The handler's answer: a response body of the request's api (any fields; it is adapted to the
/// request version before encoding), or an error that closes the connection.
pub type HandlerResult = Result<ResponseKind, HandlerError>;

/// Serves every request except ApiVersions (answered by the listener from its [`ApiTable`]) and
/// Envelope (unwrapped by the listener; the handler sees the inner request).
pub trait RequestHandler: Send + Sync + 'static {
    /// Handles one decoded request. `ctx.forwarded` is `Some` when it arrived inside an Envelope.
    /// Requests of one connection are handled one at a time, in order.
    fn handle(
        &self,
        ctx: RequestContext,
        request: RequestKind,
    ) -> BoxFuture<'static, HandlerResult>;

    /// Whether the connection's `principal` (at `peer`) may send Envelopes: CLUSTER_ACTION on
    /// the cluster (`ControllerApis.handleEnvelopeRequest`), asked before the Envelope is
    /// unwrapped; a refused one is answered CLUSTER_AUTHORIZATION_FAILED. Allowed by default
    /// (no authorizer).
    fn authorize_envelope(&self, principal: Arc<str>, peer: IpAddr) -> BoxFuture<'static, bool> {
        let _ = (principal, peer);
        Box::pin(std::future::ready(true))
    }
}

/// Supplies the features reported in ApiVersions v3+, called on every ApiVersions request from
/// the connection task: it must be cheap and must not block (read a snapshot, e.g. an
/// `ArcSwap`/`watch` value kept current by the controller).
pub type FeaturesFn = Arc<dyn Fn() -> ApiVersionsFeatures + Send + Sync>;

/// Listener limits and identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerConfig {
    /// Listener name, e.g. `CONTROLLER` (for logs and [`RequestContext::listener_name`]).
    pub listener_name: String,
    /// Largest accepted request frame in bytes (`socket.request.max.bytes`, default 100 MiB).
    pub max_frame_bytes: usize,
    /// Connection caps (`max.connections`, `max.connections.per.ip`, overrides, the peers'
    /// reserve); unbounded by default, as Kafka's.
    pub limits: ConnectionLimits,
    /// `listener.name.<l>.max.connections`: a cap on this listener's connections on top of
    /// the node-wide `max.connections` ([`ConnectionQuotas::for_listener`]); `None`: only
    /// the node-wide caps.
    pub listener_max_connections: Option<usize>,
    /// Close a connection with no complete request for this long (`connections.max.idle.ms`,
    /// default 600000).
    pub connections_max_idle_ms: u64,
    /// The cluster and node ApiVersions v5+ requests are checked against (KIP-1242:
    /// `REBOOTSTRAP_REQUIRED` on a mismatch); `None` checks nothing.
    pub identity: Option<ServerIdentity>,
    /// `Some` on an SSL listener: every connection starts with a TLS handshake.
    pub tls: Option<ServerTls>,
    /// `Some` on a SASL listener: every connection authenticates before any request other
    /// than ApiVersions, SaslHandshake and SaslAuthenticate.
    pub sasl: Option<ServerSasl>,
}

impl Default for ListenerConfig {
    fn default() -> Self {
        Self {
            listener_name: "CONTROLLER".into(),
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            limits: ConnectionLimits::default(),
            listener_max_connections: None,
            connections_max_idle_ms: 600_000,
            identity: None,
            tls: None,
            sasl: None,
        }
    }
}

/// What the connection tasks share.
pub(crate) struct Shared {
    pub(crate) config: ListenerConfig,
    pub(crate) listener_name: Arc<str>,
    pub(crate) api_table: Arc<ApiTable>,
    pub(crate) features: FeaturesFn,
    pub(crate) handler: Arc<dyn RequestHandler>,
}

/// Shutdown signal: `None` while serving, `Some(deadline)` once shutting down.
pub(crate) type ShutdownRx = watch::Receiver<Option<Instant>>;

/// How a graceful shutdown ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Connections that finished on their own (idle ones close at once, busy ones after
    /// sending the response they were working on).
    pub closed_connections: usize,
    /// Connections still busy at the deadline, aborted.
    pub aborted_connections: usize,
}

/// A bound, accepting listener. Dropping it without [`Listener::shutdown`] aborts the accept
/// loop and, with it, every connection task at once.
pub struct Listener {
    local_addr: SocketAddr,
    quotas: ConnectionQuotas,
    shutdown_tx: watch::Sender<Option<Instant>>,
    /// `None` only after `shutdown` took it.
    accept_task: Option<JoinHandle<ShutdownReport>>,
}

impl Listener {
    /// Binds `addr` (port 0 picks a free port) and starts accepting, with connection counts of
    /// its own (from `config.limits`).
    ///
    /// Errors: the bind fails, or `api_table` does not list ApiVersions (every Kafka client's
    /// first request; the listener answers it itself).
    pub async fn bind(
        addr: SocketAddr,
        config: ListenerConfig,
        api_table: Arc<ApiTable>,
        features: FeaturesFn,
        handler: Arc<dyn RequestHandler>,
    ) -> io::Result<Listener> {
        let quotas = ConnectionQuotas::new(config.limits.clone());
        Self::bind_with_quotas(addr, config, quotas, api_table, features, handler).await
    }

    /// As [`Self::bind`], but counting connections in `quotas`, which other listeners may
    /// share: Kafka's `max.connections` and `max.connections.per.ip` are node-wide, one
    /// `ConnectionQuotas` for every listener. `config.limits` is not read; `quotas` carries
    /// the limits. `config.listener_max_connections` caps this listener on top of them.
    pub async fn bind_with_quotas(
        addr: SocketAddr,
        config: ListenerConfig,
        quotas: ConnectionQuotas,
        api_table: Arc<ApiTable>,
        features: FeaturesFn,
        handler: Arc<dyn RequestHandler>,
    ) -> io::Result<Listener> {
        if api_table.range(ApiKey::ApiVersions).is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the api table must list ApiVersions",
            ));
        }
        let quotas = match config.listener_max_connections {
            Some(max) => quotas.for_listener(&config.listener_name, max),
            None => quotas,
        };
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let (shutdown_tx, shutdown_rx) = watch::channel(None);
        let shared = Arc::new(Shared {
            listener_name: Arc::from(config.listener_name.as_str()),
            config,
            api_table,
            features,
            handler,
        });
        let security = match (shared.config.tls.is_some(), shared.config.sasl.is_some()) {
            (false, false) => "PLAINTEXT",
            (true, false) => "SSL",
            (false, true) => "SASL_PLAINTEXT",
            (true, true) => "SASL_SSL",
        };
        tracing::info!(listener = %shared.listener_name, %local_addr, security, "listening");
        let accept_task = tokio::spawn(accept_loop(listener, shared, quotas.clone(), shutdown_rx));
        Ok(Listener {
            local_addr,
            quotas,
            shutdown_tx,
            accept_task: Some(accept_task),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The listener's connection counts (shared with its accept loop, and with the other
    /// listeners bound with the same [`ConnectionQuotas`]).
    pub fn quotas(&self) -> &ConnectionQuotas {
        &self.quotas
    }

    /// Stops accepting, lets in-flight requests finish and their responses go out for up to
    /// `grace`, then aborts what is left.
    pub async fn shutdown(mut self, grace: Duration) -> ShutdownReport {
        let _ = self.shutdown_tx.send(Some(Instant::now() + grace));
        let accept_task = self.accept_task.take().expect("shutdown runs once");
        match accept_task.await {
            Ok(report) => report,
            Err(e) => {
                tracing::error!(error = %e, "listener accept task failed");
                ShutdownReport {
                    closed_connections: 0,
                    aborted_connections: 0,
                }
            }
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(task) = &self.accept_task {
            task.abort();
        }
    }
}

/// Pause after a failed `accept` (e.g. out of file descriptors) so the loop does not spin.
const ACCEPT_ERROR_BACKOFF: Duration = Duration::from_millis(50);

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    quotas: ConnectionQuotas,
    mut shutdown: ShutdownRx,
) -> ShutdownReport {
    let mut connections = JoinSet::new();
    let mut closed_connections = 0;
    loop {
        while let Some(done) = connections.try_join_next() {
            closed_connections += 1;
            report_task_end(done);
        }
        if shutdown.borrow().is_some() {
            break;
        }
        let (stream, peer_addr) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(listener = %shared.listener_name, error = %e, "accept failed");
                    tokio::time::sleep(ACCEPT_ERROR_BACKOFF).await;
                    continue;
                }
            },
            changed = shutdown.changed() => {
                if changed.is_err() {
                    break; // the Listener handle is gone: stop now
                }
                continue;
            }
            Some(done) = connections.join_next() => {
                closed_connections += 1;
                report_task_end(done);
                continue;
            }
        };
        let slot = match quotas.try_acquire(peer_addr.ip()) {
            Ok(slot) => slot,
            Err(refused) => {
                // Kafka's acceptor: "Rejected connection from …" at info, then close.
                tracing::info!(listener = %shared.listener_name, peer = %peer_addr, "rejected connection: {refused}");
                drop(stream);
                continue;
            }
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(%peer_addr, error = %e, "set TCP_NODELAY failed");
        }
        connections.spawn(super::connection::serve(
            stream,
            peer_addr,
            shared.clone(),
            shutdown.clone(),
            slot,
        ));
    }
    drop(listener);
    let deadline = shutdown.borrow().unwrap_or_else(Instant::now);
    let drain = async {
        while let Some(done) = connections.join_next().await {
            closed_connections += 1;
            report_task_end(done);
        }
    };
    let aborted_connections = match tokio::time::timeout_at(deadline, drain).await {
        Ok(()) => 0,
        Err(_) => {
            let left = connections.len();
            connections.abort_all();
            while connections.join_next().await.is_some() {}
            left
        }
    };
    tracing::info!(listener = %shared.listener_name, closed_connections, aborted_connections, "listener stopped");
    ShutdownReport {
        closed_connections,
        aborted_connections,
    }
}

fn report_task_end(done: Result<(), tokio::task::JoinError>) {
    if let Err(e) = done {
        if e.is_panic() {
            tracing::error!(error = %e, "connection task panicked; connection closed");
        }
    }
}
