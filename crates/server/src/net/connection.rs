//! One accepted connection: read a frame, decode, dispatch, write the response, repeat. Like a
//! muted Kafka channel, the next request is not read before the previous response is written, so
//! responses go out in request order.
//!
//! ApiVersions is answered here from the listener's table and features; Envelope is unwrapped
//! here and its response wrapped here. A malformed frame, an unknown api, an unsupported version,
//! a handler error or a response that does not encode closes this connection with one log line
//! (peer, client id, api, reason); other connections are unaffected.
//!
//! On a SASL listener every request first passes the connection's [`authenticator`], which
//! answers ApiVersions, SaslHandshake and SaslAuthenticate until the client has authenticated
//! and then names the principal the rest is served as.

mod authenticator;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::tls::{self, BoxStream};
use authenticator::{illegal_sasl_state, Authenticator, RawStep, Step};

use super::listener::{ForwardedContext, HandlerError, RequestContext, Shared, ShutdownRx};
use super::quotas::ConnectionSlot;
use kraftwerk_protocol::adapt::{adapt_response_for_version, AdaptError};
use kraftwerk_protocol::api_versions::{answer_api_versions, unsupported_version_response};
use kraftwerk_protocol::codec::{
    client_id_of, decode_request, encode_response_frame, DecodedRequest, EncodeError,
    InboundRequest, RequestDecodeError,
};
use kraftwerk_protocol::envelope::{envelope_error_response, unwrap_envelope, wrap_response};
use kraftwerk_protocol::frame::{FrameDecoder, FrameError};
use kraftwerk_protocol::kinds::response_api_key;

/// How much buffer space each read asks for; the buffer grows with the data actually received.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Why a connection ended.
#[derive(Debug, thiserror::Error)]
enum Close {
    #[error("peer closed the connection")]
    PeerClosed,
    #[error("idle for {0} ms (connections.max.idle.ms)")]
    Idle(u64),
    #[error("listener shutting down")]
    Shutdown,
    /// A bad size prefix; the key is the one whose limit applied.
    #[error("{0} ({1})")]
    Frame(FrameError, &'static str),
    #[error(
        "peer closed the connection in the middle of a frame ({buffered_bytes} bytes buffered)"
    )]
    Truncated { buffered_bytes: usize },
    #[error("{0}")]
    Decode(RequestDecodeError),
    #[error("handler failed: {0}")]
    Handler(HandlerError),
    #[error("handler answered {got:?} to a {expected:?} request")]
    WrongResponse {
        expected: ApiKey,
        got: Option<ApiKey>,
    },
    #[error("response cannot be adapted: {0}")]
    Adapt(AdaptError),
    #[error("{0}")]
    Encode(EncodeError),
    #[error("write timed out after {0} ms")]
    WriteTimeout(u64),
    #[error("I/O error: {0}")]
    Io(std::io::Error),
    /// Kafka logs these at info as "Failed authentication with /ADDRESS (MESSAGE)".
    #[error("failed authentication: {0}")]
    Authentication(String),
    #[error("{0}")]
    SessionExpired(String),
}

impl Close {
    /// Normal ends are logged at debug; everything else is worth a warning.
    fn is_normal(&self) -> bool {
        use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
        match self {
            Close::PeerClosed | Close::Idle(_) | Close::Shutdown | Close::SessionExpired(_) => true,
            Close::Io(e) => matches!(
                e.kind(),
                BrokenPipe | ConnectionAborted | ConnectionReset | UnexpectedEof
            ),
            _ => false,
        }
    }
}

struct Connection {
    stream: BoxStream,
    /// `User:ANONYMOUS`, the mapped subject of the client's certificate, or (SASL) the
    /// authenticated user.
    principal: Arc<str>,
    /// The SASL client authenticated with a delegation token.
    token_authenticated: bool,
    /// `Some` on a SASL listener.
    authenticator: Option<Authenticator>,
    peer_addr: SocketAddr,
    shared: Arc<Shared>,
    decoder: FrameDecoder,
    buf: BytesMut,
    /// Client id and api of the latest request, for the closing log line.
    client_id: String,
    api_key: Option<i16>,
}

/// Serves one connection until it closes; holds its connection slot (`_slot`) until then. On
/// an SSL listener the TLS handshake comes first, bounded by `connections.max.idle.ms` like any
/// silence (Kafka's idle check covers a stalled handshake too); a failed one closes the
/// connection with one log line.
pub(crate) async fn serve(
    tcp: TcpStream,
    peer_addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: ShutdownRx,
    _slot: ConnectionSlot,
) {
    let (stream, principal): (BoxStream, Arc<str>) = match &shared.config.tls {
        None => (Box::new(tcp), Arc::from(kraftwerk_tls::ANONYMOUS)),
        Some(server_tls) => {
            let idle = Duration::from_millis(shared.config.connections_max_idle_ms);
            match tokio::time::timeout(idle, tls::accept(server_tls, tcp)).await {
                Ok(Ok((stream, principal))) => {
                    tracing::debug!(listener = %shared.listener_name, peer = %peer_addr, %principal, "TLS connection authenticated");
                    (stream, Arc::from(principal))
                }
                // Kafka logs failed SSL authentication at info: a scanner or a client with the
                // wrong certificate is not the node's problem.
                Ok(Err(e)) => {
                    let ip = peer_addr.ip();
                    tracing::info!(listener = %shared.listener_name, peer = %peer_addr, "Failed authentication with /{ip} ({e})");
                    return;
                }
                Err(_) => {
                    tracing::info!(listener = %shared.listener_name, peer = %peer_addr, "TLS handshake not finished within connections.max.idle.ms; closed");
                    return;
                }
            }
        }
    };
    let authenticator = shared.config.sasl.clone().map(Authenticator::new);
    let max_frame = authenticator
        .as_ref()
        .map_or(shared.config.max_frame_bytes, |a| {
            a.max_frame_bytes(shared.config.max_frame_bytes)
        });
    let decoder = FrameDecoder::new(max_frame);
    let mut conn = Connection {
        stream,
        principal,
        token_authenticated: false,
        authenticator,
        peer_addr,
        shared,
        decoder,
        buf: BytesMut::new(),
        client_id: String::new(),
        api_key: None,
    };
    let close = conn.run(shutdown).await;
    let listener = &conn.shared.listener_name;
    let api = conn
        .api_key
        .map(|k| ApiKey::try_from(k).map_or_else(|()| k.to_string(), |k| format!("{k:?}")));
    let api = api.as_deref().unwrap_or("-");
    if let Close::Authentication(reason) = &close {
        // Kafka's line (`Selector`), at info: a wrong password is the client's problem.
        let ip = conn.peer_addr.ip();
        tracing::info!(%listener, peer = %conn.peer_addr, client_id = %conn.client_id, api, "Failed authentication with /{ip} ({reason})");
    } else if close.is_normal() {
        tracing::debug!(%listener, peer = %conn.peer_addr, client_id = %conn.client_id, api, "connection closed: {close}");
    } else {
        tracing::warn!(%listener, peer = %conn.peer_addr, client_id = %conn.client_id, api, "closing connection: {close}");
    }
}

impl Connection {
    /// The key whose limit the frame decoder enforces now (see
    /// [`Authenticator::max_frame_key`]).
    fn frame_limit_key(&self) -> &'static str {
        self.authenticator
            .as_ref()
            .map_or(authenticator::SOCKET_REQUEST_MAX_BYTES, |a| {
                a.max_frame_key(self.shared.config.max_frame_bytes)
            })
    }

    async fn run(&mut self, mut shutdown: ShutdownRx) -> Close {
        loop {
            let frame = tokio::select! {
                frame = self.read_frame() => frame,
                _ = shutdown.wait_for(|s| s.is_some()) => return Close::Shutdown,
            };
            let frame = match frame {
                Ok(frame) => frame,
                Err(close) => return close,
            };
            let received_at = std::time::Instant::now();
            // The request is complete: it is answered even if shutdown starts meanwhile (the
            // listener aborts us at its deadline).
            if let Err(close) = self.process(frame, received_at).await {
                return close;
            }
            if shutdown.borrow().is_some() {
                return Close::Shutdown;
            }
        }
    }

    /// Reads one frame, waiting at most `connections.max.idle.ms` for it.
    async fn read_frame(&mut self) -> Result<Bytes, Close> {
        let idle_ms = self.shared.config.connections_max_idle_ms;
        match tokio::time::timeout(Duration::from_millis(idle_ms), self.read_frame_unbounded())
            .await
        {
            Ok(result) => result,
            Err(_) => Err(Close::Idle(idle_ms)),
        }
    }

    async fn read_frame_unbounded(&mut self) -> Result<Bytes, Close> {
        loop {
            let limit = self.frame_limit_key();
            let decoded = self.decoder.decode(&mut self.buf);
            if let Some(frame) = decoded.map_err(|e| Close::Frame(e, limit))? {
                if self.buf.is_empty() && self.buf.capacity() > 4 * READ_CHUNK_BYTES {
                    // Do not keep a large request's buffer for the life of the connection.
                    self.buf = BytesMut::new();
                }
                return Ok(frame);
            }
            self.buf.reserve(READ_CHUNK_BYTES);
            let read = self
                .stream
                .read_buf(&mut self.buf)
                .await
                .map_err(Close::Io)?;
            if read == 0 {
                return Err(if self.buf.is_empty() {
                    Close::PeerClosed
                } else {
                    Close::Truncated {
                        buffered_bytes: self.buf.len(),
                    }
                });
            }
        }
    }

    async fn write(&mut self, frame: &[u8]) -> Result<(), Close> {
        let idle_ms = self.shared.config.connections_max_idle_ms;
        // The flush matters on TLS: rustls may still hold encrypted bytes after write_all.
        let stream = &mut self.stream;
        let write = async move {
            stream.write_all(frame).await?;
            stream.flush().await
        };
        match tokio::time::timeout(Duration::from_millis(idle_ms), write).await {
            Ok(result) => result.map_err(Close::Io),
            Err(_) => Err(Close::WriteTimeout(idle_ms)),
        }
    }

    async fn process(
        &mut self,
        frame: Bytes,
        received_at: std::time::Instant,
    ) -> Result<(), Close> {
        if self
            .authenticator
            .as_ref()
            .is_some_and(Authenticator::expects_raw_token)
        {
            return self.raw_token(&frame, received_at).await;
        }
        let request = match decode_request(frame, &self.shared.api_table) {
            Ok(InboundRequest::Request(request)) => request,
            Ok(InboundRequest::UnsupportedApiVersions(header)) => {
                self.note(header.request_api_key, client_id_of(&header));
                let body =
                    ResponseKind::ApiVersions(unsupported_version_response(&self.shared.api_table));
                let frame =
                    encode_response_frame(ApiKey::ApiVersions, 0, header.correlation_id, &body)
                        .map_err(Close::Encode)?;
                return self.write(&frame).await;
            }
            Err(e) => {
                match (&e, e.header()) {
                    (_, Some(header)) => self.note(header.request_api_key, client_id_of(header)),
                    (RequestDecodeError::UnknownApiKey { api_key, .. }, None) => {
                        self.api_key = Some(*api_key)
                    }
                    (
                        RequestDecodeError::MalformedHeader {
                            api_key: Some(api_key),
                            ..
                        },
                        None,
                    ) => self.api_key = Some(*api_key),
                    _ => {}
                }
                return Err(Close::Decode(e));
            }
        };
        self.note(request.header.request_api_key, request.client_id());
        let (api_key, version, correlation_id) =
            (request.api_key, request.version(), request.correlation_id());
        if let Some(authenticator) = &mut self.authenticator {
            let step = authenticator.on_request(api_key, version, &request.body, received_at);
            let max_frame = authenticator.max_frame_bytes(self.shared.config.max_frame_bytes);
            match step {
                Step::Serve(principal) => {
                    self.principal = principal;
                    self.token_authenticated = authenticator.token_authenticated();
                }
                Step::Answer(response) => {
                    self.decoder = FrameDecoder::new(max_frame);
                    return self
                        .respond(api_key, version, correlation_id, response)
                        .await;
                }
                Step::Fail { response, reason } => {
                    tokio::time::sleep(authenticator.failure_delay()).await;
                    if let Some(response) = response {
                        self.respond(api_key, version, correlation_id, response)
                            .await?;
                    }
                    return Err(Close::Authentication(reason));
                }
                Step::Close(reason) => return Err(Close::SessionExpired(reason)),
            }
        }
        let response = match api_key {
            ApiKey::ApiVersions => {
                let RequestKind::ApiVersions(body) = &request.body else {
                    unreachable!("decoded by api key")
                };
                let features = (self.shared.features)();
                ResponseKind::ApiVersions(answer_api_versions(
                    body,
                    request.version(),
                    &self.shared.api_table,
                    &features,
                    self.shared.config.identity.as_ref(),
                ))
            }
            ApiKey::Envelope => self.envelope(request, received_at).await?,
            // No authentication under way here: ControllerApis' ILLEGAL_SASL_STATE answers.
            ApiKey::SaslHandshake | ApiKey::SaslAuthenticate => {
                illegal_sasl_state(api_key).expect("a SASL api")
            }
            _ => {
                let ctx = self.context(&request, None, received_at);
                self.call_handler(ctx, request.body).await?
            }
        };
        self.respond(api_key, version, correlation_id, response)
            .await
    }

    /// A raw SASL token after a SaslHandshake v0: the answer goes back size-prefixed, without
    /// a Kafka header (`SaslServerAuthenticator` with `enableKafkaSaslAuthenticateHeaders` off).
    async fn raw_token(
        &mut self,
        frame: &[u8],
        received_at: std::time::Instant,
    ) -> Result<(), Close> {
        let Some(authenticator) = &mut self.authenticator else {
            return Ok(());
        };
        match authenticator.on_raw_token(frame, received_at) {
            RawStep::Send(token) => {
                if let Some(principal) = authenticator.principal() {
                    self.principal = principal;
                    self.token_authenticated = authenticator.token_authenticated();
                }
                self.decoder = FrameDecoder::new(
                    authenticator.max_frame_bytes(self.shared.config.max_frame_bytes),
                );
                let len = u32::try_from(token.len())
                    .map_err(|_| Close::Authentication("SASL token too large to send".into()))?;
                let mut out = Vec::with_capacity(4 + token.len());
                out.extend_from_slice(&len.to_be_bytes());
                out.extend_from_slice(&token);
                self.write(&out).await
            }
            RawStep::Fail(reason) => {
                tokio::time::sleep(authenticator.failure_delay()).await;
                Err(Close::Authentication(reason))
            }
        }
    }

    fn note(&mut self, api_key: i16, client_id: &str) {
        self.api_key = Some(api_key);
        if self.client_id != client_id {
            self.client_id = client_id.to_owned();
        }
    }

    fn context(
        &self,
        request: &DecodedRequest,
        forwarded: Option<ForwardedContext>,
        received_at: std::time::Instant,
    ) -> RequestContext {
        RequestContext {
            api_key: request.api_key,
            api_version: request.version(),
            correlation_id: request.correlation_id(),
            client_id: request.client_id().to_owned(),
            peer_addr: self.peer_addr,
            listener_name: self.shared.listener_name.clone(),
            forwarded,
            received_at,
            principal: self.principal.clone(),
            token_authenticated: self.token_authenticated,
        }
    }

    /// Runs the handler and checks that it answered with the request's api.
    async fn call_handler(
        &self,
        ctx: RequestContext,
        body: RequestKind,
    ) -> Result<ResponseKind, Close> {
        let expected = ctx.api_key;
        let response = self
            .shared
            .handler
            .handle(ctx, body)
            .await
            .map_err(Close::Handler)?;
        let got = response_api_key(&response);
        if got != Some(expected) {
            return Err(Close::WrongResponse { expected, got });
        }
        Ok(response)
    }

    /// Unwraps an Envelope, runs the handler on the inner request, wraps its response.
    async fn envelope(
        &mut self,
        request: DecodedRequest,
        received_at: std::time::Instant,
    ) -> Result<ResponseKind, Close> {
        let RequestKind::Envelope(envelope) = &request.body else {
            unreachable!("decoded by api key")
        };
        let allowed = self
            .shared
            .handler
            .authorize_envelope(self.principal.clone(), self.peer_addr.ip())
            .await;
        if !allowed {
            tracing::info!(
                listener = %self.shared.listener_name, peer = %self.peer_addr, client_id = %self.client_id,
                principal = %self.principal,
                "Principal {} does not have required CLUSTER_ACTION for envelope", self.principal
            );
            return Ok(ResponseKind::Envelope(envelope_error_response(
                kafka_protocol::error::ResponseError::ClusterAuthorizationFailed.code(),
            )));
        }
        let forwarded = match unwrap_envelope(envelope, &self.shared.api_table) {
            Ok(forwarded) => forwarded,
            Err(e) => {
                tracing::info!(
                    listener = %self.shared.listener_name, peer = %self.peer_addr, client_id = %self.client_id,
                    "rejecting envelope with error {}: {e}", e.error_code()
                );
                return Ok(ResponseKind::Envelope(envelope_error_response(
                    e.error_code(),
                )));
            }
        };
        let ctx = self.context(
            &forwarded.inner,
            Some(ForwardedContext {
                principal: forwarded.principal,
                client_address: forwarded.client_address,
                envelope_client_id: request.client_id().to_owned(),
                envelope_correlation_id: request.correlation_id(),
            }),
            received_at,
        );
        let inner_header = forwarded.inner.header;
        let response = self.call_handler(ctx, forwarded.inner.body).await?;
        let wrapped = wrap_response(&inner_header, response).map_err(Close::Encode)?;
        Ok(ResponseKind::Envelope(wrapped))
    }

    async fn respond(
        &mut self,
        api_key: ApiKey,
        version: i16,
        correlation_id: i32,
        mut response: ResponseKind,
    ) -> Result<(), Close> {
        adapt_response_for_version(&mut response, version).map_err(Close::Adapt)?;
        let frame = encode_response_frame(api_key, version, correlation_id, &response)
            .map_err(Close::Encode)?;
        self.write(&frame).await
    }
}
