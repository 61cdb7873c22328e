//! The connection task behind a [`super::PeerClient`]: queue, connect + handshake, dispatch,
//! match responses, enforce deadlines, back off.

use super::*;

/// How much buffer space each read asks for.
const READ_CHUNK_BYTES: usize = 64 * 1024;
/// Kafka's reconnect backoff jitter (`CommonClientConfigs.RECONNECT_BACKOFF_JITTER`).
const BACKOFF_JITTER: f64 = 0.2;
/// Whether closing a connection starts the reconnect backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backoff {
    Always,
    /// Only if requests were in flight (an idle connection the peer closed is no failure).
    IfBusy,
    Never,
}

/// ClientSoftwareName we report in ApiVersions v3+ (KIP-511).
pub(super) const CLIENT_SOFTWARE_NAME: &str = "kraftwerk";

impl Actor {
    pub(super) fn new(
        node: Arc<PeerNode>,
        config: PeerClientConfig,
        calls: mpsc::Receiver<Call>,
    ) -> Self {
        Self {
            node,
            config,
            calls,
            queue: VecDeque::new(),
            live: None,
            next_correlation_id: 0,
            failures: 0,
            backoff_until: None,
            last_failure: String::new(),
        }
    }

    pub(super) async fn run(mut self) {
        loop {
            self.expire(Instant::now());
            self.pump().await;
            let next_deadline = self.next_deadline();
            tokio::select! {
                call = self.calls.recv() => match call {
                    Some(call) => self.queue.push_back(call),
                    None => {
                        // Every handle is gone: close the connection and stop.
                        self.disconnect("peer client stopped", Backoff::Never);
                        return;
                    }
                },
                frame = next_frame(&mut self.live) => self.on_frame(frame),
                _ = sleep_until(next_deadline) => self.expire(Instant::now()),
            }
        }
    }

    pub(super) fn correlation_id(&mut self) -> i32 {
        let id = self.next_correlation_id;
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);
        id
    }

    fn timeout_error(&self, api_key: ApiKey) -> PeerError {
        PeerError::Timeout {
            api_key,
            timeout_ms: self.config.request_timeout_ms,
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        let queued = self.queue.iter().map(|c| c.deadline);
        let in_flight = self
            .live
            .iter()
            .flat_map(|l| l.in_flight.iter().map(|r| r.deadline));
        queued.chain(in_flight).min()
    }

    /// Fails queued calls past their deadline; a request in flight past its deadline closes the
    /// connection (Kafka's `handleTimedOutRequests`).
    fn expire(&mut self, now: Instant) {
        let (expired, kept): (Vec<Call>, Vec<Call>) =
            self.queue.drain(..).partition(|c| c.deadline <= now);
        self.queue = kept.into();
        for call in expired {
            let _ = call.reply.send(Err(self.timeout_error(call.api_key)));
        }
        let Some(live) = &mut self.live else { return };
        let Some(position) = live.in_flight.iter().position(|r| r.deadline <= now) else {
            return;
        };
        let timed_out = live
            .in_flight
            .remove(position)
            .expect("position is in range");
        let _ = timed_out
            .reply
            .send(Err(self.timeout_error(timed_out.api_key)));
        let reason = format!(
            "{:?} request {} timed out",
            timed_out.api_key, timed_out.correlation_id
        );
        self.disconnect(&reason, Backoff::Always);
    }

    /// Connects if requests are waiting, then sends as many as the in-flight bound allows.
    async fn pump(&mut self) {
        if self.queue.is_empty() {
            return;
        }
        if let Some(live) = &self.live {
            if live
                .reauthenticate_at
                .is_some_and(|at| at <= Instant::now())
            {
                if !live.in_flight.is_empty() {
                    // Sent on a fresh connection once these are answered.
                    return;
                }
                self.disconnect(
                    "SASL session ending: reconnecting to re-authenticate",
                    Backoff::Never,
                );
            }
        }
        if self.live.is_none() {
            if let Some(until) = self.backoff_until {
                let now = Instant::now();
                if now < until {
                    let reason = format!(
                        "reconnect backoff ({} ms left) after: {}",
                        (until - now).as_millis(),
                        self.last_failure
                    );
                    for call in self.queue.drain(..) {
                        let _ = call.reply.send(Err(PeerError::Disconnected {
                            reason: reason.clone(),
                        }));
                    }
                    return;
                }
            }
            match self.connect().await {
                Ok(live) => {
                    tracing::debug!(node = self.node.node_id, host = %self.node.host, port = self.node.port, "connected");
                    self.live = Some(live);
                    self.failures = 0;
                    self.backoff_until = None;
                }
                Err(e) => {
                    tracing::debug!(node = self.node.node_id, host = %self.node.host, port = self.node.port, error = %e, "connection failed");
                    self.note_failure(e.to_string());
                    for call in self.queue.drain(..) {
                        let _ = call.reply.send(Err(e.clone()));
                    }
                    return;
                }
            }
        }
        while self
            .live
            .as_ref()
            .is_some_and(|l| l.in_flight.len() < self.config.max_in_flight)
        {
            let Some(call) = self.queue.pop_front() else {
                break;
            };
            self.dispatch(call).await;
        }
    }

    /// Negotiates, builds, encodes and writes one request.
    async fn dispatch(&mut self, call: Call) {
        if call.deadline <= Instant::now() {
            let _ = call.reply.send(Err(self.timeout_error(call.api_key)));
            return;
        }
        let live = self.live.as_ref().expect("dispatch needs a connection");
        let api = call.api_key;
        let ours = self.config.api_table.range(api);
        let theirs = live.versions.get(&(api as i16)).copied();
        let version = match (ours, theirs) {
            (Some(ours), Some((min, max))) => ours.highest_common_version(min, max),
            _ => None,
        };
        let Some(version) = version else {
            let ours = ours.map(|r| (r.min_version, r.max_version));
            let _ = call
                .reply
                .send(Err(PeerError::UnsupportedVersion { api, ours, theirs }));
            return;
        };
        let mut request = (call.build)(version);
        if request_api_key(&request) != Some(api) {
            let reason = format!("built {:?} for a {api:?} call", request_api_key(&request));
            let _ = call.reply.send(Err(PeerError::Encode { reason }));
            return;
        }
        if let Err(e) = adapt_request_for_version(&mut request, version) {
            let _ = call.reply.send(Err(PeerError::Encode {
                reason: e.to_string(),
            }));
            return;
        }
        let correlation_id = self.correlation_id();
        let header = request_header(api, version, correlation_id, &self.config.client_id);
        let frame = match encode_request_frame(&header, &request) {
            Ok(frame) => frame,
            Err(e) => {
                let _ = call.reply.send(Err(PeerError::Encode {
                    reason: e.to_string(),
                }));
                return;
            }
        };
        let live = self.live.as_mut().expect("still connected");
        // The flush matters on TLS: rustls may still hold encrypted bytes after write_all.
        let writer = &mut live.writer;
        let write = async move {
            writer.write_all(&frame).await?;
            writer.flush().await
        };
        match tokio::time::timeout_at(call.deadline, write).await {
            Ok(Ok(())) => live.in_flight.push_back(InFlight {
                correlation_id,
                api_key: api,
                version,
                deadline: call.deadline,
                reply: call.reply,
            }),
            Ok(Err(e)) => {
                let reason = format!("write failed: {e}");
                let _ = call.reply.send(Err(PeerError::Disconnected {
                    reason: reason.clone(),
                }));
                self.disconnect(&reason, Backoff::Always);
            }
            Err(_) => {
                let _ = call.reply.send(Err(self.timeout_error(api)));
                self.disconnect("write timed out", Backoff::Always);
            }
        }
    }

    fn on_frame(&mut self, frame: Option<Result<Bytes, String>>) {
        let payload = match frame {
            Some(Ok(payload)) => payload,
            // The peer may close an idle connection (connections.max.idle.ms): not a failure.
            Some(Err(reason)) => return self.disconnect(&reason, Backoff::IfBusy),
            None => return self.disconnect("connection reader stopped", Backoff::IfBusy),
        };
        let live = self
            .live
            .as_mut()
            .expect("frames come from a live connection");
        let Some(request) = live.in_flight.pop_front() else {
            return self.protocol_error("response without a request in flight");
        };
        let correlation_id = (payload.len() >= 4)
            .then(|| i32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]));
        if correlation_id != Some(request.correlation_id) {
            let reason = format!(
                "correlation id {correlation_id:?} does not match request {}",
                request.correlation_id
            );
            let _ = request.reply.send(Err(PeerError::Protocol {
                reason: reason.clone(),
            }));
            return self.protocol_error(&reason);
        }
        match decode_response(request.api_key, request.version, payload) {
            Ok((_, body_version, body)) if response_api_key(&body) == Some(request.api_key) => {
                let _ = request.reply.send(Ok((body_version, body)));
            }
            Ok(_) => unreachable!("decode_response decodes the request's api"),
            Err(e) => {
                let reason = e.to_string();
                let _ = request.reply.send(Err(PeerError::Protocol {
                    reason: reason.clone(),
                }));
                self.protocol_error(&reason);
            }
        }
    }

    fn protocol_error(&mut self, reason: &str) {
        tracing::warn!(node = self.node.node_id, host = %self.node.host, port = self.node.port, "closing peer connection: {reason}");
        self.disconnect(reason, Backoff::Always);
    }

    fn note_failure(&mut self, reason: String) {
        let base_ms = self.config.reconnect_backoff_ms as f64;
        let max_ms = self.config.reconnect_backoff_max_ms as f64;
        let exponential_ms = (base_ms * 2f64.powi(self.failures.min(30) as i32)).min(max_ms);
        let jitter = rand::thread_rng().gen_range(1.0 - BACKOFF_JITTER..=1.0 + BACKOFF_JITTER);
        let backoff = Duration::from_millis((exponential_ms * jitter) as u64);
        self.failures = self.failures.saturating_add(1);
        self.backoff_until = Some(Instant::now() + backoff);
        self.last_failure = reason;
    }

    /// Drops the connection, failing what is in flight, and maybe starts the reconnect backoff.
    fn disconnect(&mut self, reason: &str, backoff: Backoff) {
        let Some(mut live) = self.live.take() else {
            return;
        };
        let busy = !live.in_flight.is_empty();
        for request in live.in_flight.drain(..) {
            let _ = request.reply.send(Err(PeerError::Disconnected {
                reason: reason.to_owned(),
            }));
        }
        if backoff == Backoff::Always || (backoff == Backoff::IfBusy && busy) {
            self.note_failure(reason.to_owned());
        }
        tracing::debug!(node = self.node.node_id, "peer connection closed: {reason}");
    }

    /// TCP connect + ApiVersions handshake, within one request timeout.
    async fn connect(&mut self) -> Result<Live, PeerError> {
        let deadline = Instant::now() + Duration::from_millis(self.config.request_timeout_ms);
        let timed_out = || PeerError::Disconnected {
            reason: "connection setup timed out".into(),
        };
        let address = (self.node.host.as_str(), self.node.port);
        let stream = tokio::time::timeout_at(deadline, TcpStream::connect(address))
            .await
            .map_err(|_| timed_out())?
            .map_err(|e| PeerError::Io(Arc::new(e)))?;
        let _ = stream.set_nodelay(true);
        let mut stream: BoxStream = match &self.config.tls {
            None => Box::new(stream),
            Some(tls) => {
                tokio::time::timeout_at(deadline, super::super::tls::connect(tls, &self.node.host, stream))
                    .await
                    .map_err(|_| PeerError::Disconnected {
                        reason: "TLS handshake timed out".into(),
                    })?
                    .map_err(|e| {
                        // A certificate the peer refuses, or one we refuse, is a configuration
                        // problem an operator must see, not a transient disconnect.
                        // Warned once per run of failures; the retries every backoff go to debug.
                        if self.failures == 0 {
                            tracing::warn!(node = self.node.node_id, host = %self.node.host, port = self.node.port, "TLS handshake with peer failed: {e}");
                        } else {
                            tracing::debug!(node = self.node.node_id, host = %self.node.host, port = self.node.port, "TLS handshake with peer failed: {e}");
                        }
                        PeerError::Io(Arc::new(e))
                    })?
            }
        };
        let mut buf = BytesMut::new();
        let versions = tokio::time::timeout_at(deadline, self.handshake(&mut stream, &mut buf))
            .await
            .map_err(|_| timed_out())??;
        let reauthenticate_at = match self.config.sasl.clone() {
            None => None,
            Some(sasl) => {
                let authenticated = tokio::time::timeout_at(
                    deadline,
                    self.authenticate(&sasl, &mut stream, &mut buf, &versions),
                )
                .await
                .map_err(|_| timed_out())?;
                match authenticated {
                    Ok(lifetime_ms) => super::authenticate::reauthentication_point(lifetime_ms),
                    Err(e) => {
                        // Wrong credentials are a configuration problem an operator must see;
                        // warned once per run of failures, the retries go to debug.
                        if self.failures == 0 {
                            tracing::warn!(node = self.node.node_id, host = %self.node.host, port = self.node.port, mechanism = %sasl.mechanism, user = %sasl.username, "SASL authentication with peer failed: {e}");
                        } else {
                            tracing::debug!(node = self.node.node_id, host = %self.node.host, port = self.node.port, "SASL authentication with peer failed: {e}");
                        }
                        return Err(e);
                    }
                }
            }
        };
        let (reader, writer) = tokio::io::split(stream);
        let (tx, frames) = mpsc::channel(self.config.max_in_flight + 1);
        let decoder = FrameDecoder::new(self.config.max_frame_bytes);
        let reader = tokio::spawn(read_frames(reader, decoder, buf, tx));
        Ok(Live {
            writer,
            frames,
            reader,
            versions,
            in_flight: VecDeque::new(),
            reauthenticate_at,
        })
    }

    /// ApiVersions at our highest version; on `UNSUPPORTED_VERSION`, once more at the highest
    /// version the peer listed (KIP-511). Returns the peer's api → (min, max) map.
    async fn handshake(
        &mut self,
        stream: &mut BoxStream,
        buf: &mut BytesMut,
    ) -> Result<HashMap<i16, (i16, i16)>, PeerError> {
        let protocol = |reason: String| PeerError::Protocol { reason };
        let ours = self
            .config
            .api_table
            .range(ApiKey::ApiVersions)
            .expect("checked in PeerClient::new");
        let mut version = ours.max_version;
        for _attempt in 0..2 {
            let mut request = ApiVersionsRequest::default();
            if version >= 3 {
                request.client_software_name = StrBytes::from_static_str(CLIENT_SOFTWARE_NAME);
                request.client_software_version =
                    StrBytes::from_static_str(env!("CARGO_PKG_VERSION"));
            }
            let body = self
                .round_trip(stream, buf, version, RequestKind::ApiVersions(request))
                .await?;
            let ResponseKind::ApiVersions(body) = body else {
                unreachable!("decoded as ApiVersions")
            };
            if body.error_code == 0 {
                return Ok(body
                    .api_keys
                    .iter()
                    .map(|k| (k.api_key, (k.min_version, k.max_version)))
                    .collect());
            }
            if body.error_code != ResponseError::UnsupportedVersion.code() {
                return Err(protocol(format!(
                    "ApiVersions v{version} failed with error {}",
                    body.error_code
                )));
            }
            let theirs = body
                .api_keys
                .iter()
                .find(|k| k.api_key == ApiKey::ApiVersions as i16);
            match theirs.and_then(|t| ours.highest_common_version(t.min_version, t.max_version)) {
                Some(lower) if lower < version => version = lower,
                _ => {
                    return Err(protocol(format!(
                        "no common ApiVersions version (ours {ours:?}, theirs {theirs:?})"
                    )))
                }
            }
        }
        Err(protocol("ApiVersions negotiation did not converge".into()))
    }
}

async fn next_frame(live: &mut Option<Live>) -> Option<Result<Bytes, String>> {
    match live {
        Some(live) => live.frames.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

pub(super) async fn read_one_frame(
    stream: &mut BoxStream,
    decoder: &FrameDecoder,
    buf: &mut BytesMut,
) -> Result<Bytes, PeerError> {
    loop {
        if let Some(frame) = decoder.decode(buf).map_err(|e| PeerError::Protocol {
            reason: e.to_string(),
        })? {
            return Ok(frame);
        }
        buf.reserve(READ_CHUNK_BYTES);
        match stream.read_buf(buf).await {
            Ok(0) => {
                return Err(PeerError::Disconnected {
                    reason: "peer closed the connection during the handshake".into(),
                })
            }
            Ok(_) => {}
            Err(e) => return Err(PeerError::Io(Arc::new(e))),
        }
    }
}

/// Reads frames off the connection into `tx` until an error or EOF, which it reports.
async fn read_frames(
    mut reader: ReadHalf<BoxStream>,
    decoder: FrameDecoder,
    mut buf: BytesMut,
    tx: mpsc::Sender<Result<Bytes, String>>,
) {
    loop {
        match decoder.decode(&mut buf) {
            Ok(Some(frame)) => {
                if buf.is_empty() && buf.capacity() > 4 * READ_CHUNK_BYTES {
                    buf = BytesMut::new(); // do not keep a large response's buffer
                }
                if tx.send(Ok(frame)).await.is_err() {
                    return;
                }
                continue;
            }
            Ok(None) => {}
            Err(e) => {
                let _ = tx.send(Err(e.to_string())).await;
                return;
            }
        }
        buf.reserve(READ_CHUNK_BYTES);
        let end = match reader.read_buf(&mut buf).await {
            Ok(0) => "peer closed the connection".to_owned(),
            Ok(_) => continue,
            Err(e) => format!("read failed: {e}"),
        };
        let _ = tx.send(Err(end)).await;
        return;
    }
}
