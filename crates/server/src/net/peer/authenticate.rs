//! The client side of SASL on a new peer connection, after ApiVersions: what Kafka's
//! `SaslClientAuthenticator` does for the Raft client's `SaslChannelBuilder` — SaslHandshake v1
//! naming `sasl.mechanism.controller.protocol`, then SaslAuthenticate (the highest version
//! both sides speak, v0–v2) until the exchange completes.

use rand::Rng;

use kafka_protocol::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
use kraftwerk_sasl::ClientExchange;

use super::actor::read_one_frame;
use super::*;

/// SaslHandshake v1: SaslAuthenticate requests carry the tokens (v0 would send raw tokens).
const HANDSHAKE_VERSION: i16 = 1;
/// The SaslAuthenticate versions we speak: v1 adds `session_lifetime_ms`, v2 flexible fields.
const AUTHENTICATE_VERSIONS: (i16, i16) = (0, 2);

/// When to replace a connection whose session lasts `lifetime_ms` (0: forever): at a random
/// 85–95 % of it, as `SaslClientAuthenticator` schedules re-authentication.
pub(super) fn reauthentication_point(lifetime_ms: i64) -> Option<Instant> {
    let lifetime_ms = u64::try_from(lifetime_ms).ok().filter(|&ms| ms > 0)?;
    let fraction = rand::thread_rng().gen_range(0.85..0.95);
    let after = Duration::from_millis((lifetime_ms as f64 * fraction) as u64);
    Instant::now().checked_add(after)
}

impl Actor {
    /// Authenticates the new connection; returns the session lifetime in ms (0: no limit).
    pub(super) async fn authenticate(
        &mut self,
        sasl: &ClientSasl,
        stream: &mut BoxStream,
        buf: &mut BytesMut,
        versions: &HashMap<i16, (i16, i16)>,
    ) -> Result<i64, PeerError> {
        let refused = |reason: String| PeerError::Authentication { reason };
        let mechanism = sasl.mechanism.name();
        let mut handshake = SaslHandshakeRequest::default();
        handshake.mechanism = StrBytes::from_static_str(mechanism);
        let ResponseKind::SaslHandshake(answer) = self
            .round_trip(
                stream,
                buf,
                HANDSHAKE_VERSION,
                RequestKind::SaslHandshake(handshake),
            )
            .await?
        else {
            unreachable!("decoded as SaslHandshake")
        };
        if answer.error_code != 0 {
            let enabled: Vec<&str> = answer.mechanisms.iter().map(|m| m.as_str()).collect();
            return Err(refused(format!(
                "the peer refused mechanism {mechanism} with error {} (it enables {})",
                answer.error_code,
                enabled.join(",")
            )));
        }
        let theirs = versions
            .get(&(ApiKey::SaslAuthenticate as i16))
            .copied()
            .unwrap_or((0, 0));
        let version = AUTHENTICATE_VERSIONS.1.min(theirs.1);
        if version < AUTHENTICATE_VERSIONS.0.max(theirs.0) {
            return Err(refused(format!(
                "no common SaslAuthenticate version (ours {AUTHENTICATE_VERSIONS:?}, theirs {theirs:?})"
            )));
        }
        let mut client = ClientExchange::new(sasl.mechanism, &sasl.username, &sasl.password);
        let mut message = client.first_message();
        // PLAIN takes one round, SCRAM two; a server that keeps challenging is broken.
        for _round in 0..4 {
            let mut request = SaslAuthenticateRequest::default();
            request.auth_bytes = Bytes::from(message);
            let ResponseKind::SaslAuthenticate(answer) = self
                .round_trip(stream, buf, version, RequestKind::SaslAuthenticate(request))
                .await?
            else {
                unreachable!("decoded as SaslAuthenticate")
            };
            if answer.error_code != 0 {
                return Err(refused(format!(
                    "error {}: {}",
                    answer.error_code,
                    answer.error_message.as_deref().unwrap_or("")
                )));
            }
            match client.step(&answer.auth_bytes) {
                Ok(Some(next)) => message = next,
                Ok(None) => return Ok(answer.session_lifetime_ms),
                Err(e) => return Err(refused(format!("the peer's answer does not verify: {e}"))),
            }
        }
        Err(refused("the exchange did not finish".into()))
    }

    /// Sends one request on the not yet split connection and reads its answer (the
    /// connection set-up: ApiVersions, then SASL).
    pub(super) async fn round_trip(
        &mut self,
        stream: &mut BoxStream,
        buf: &mut BytesMut,
        version: i16,
        request: RequestKind,
    ) -> Result<ResponseKind, PeerError> {
        let protocol = |reason: String| PeerError::Protocol { reason };
        let api = request_api_key(&request).expect("a request body");
        let correlation_id = self.correlation_id();
        let header = request_header(api, version, correlation_id, &self.config.client_id);
        let frame = encode_request_frame(&header, &request).map_err(|e| protocol(e.to_string()))?;
        stream
            .write_all(&frame)
            .await
            .map_err(|e| PeerError::Io(Arc::new(e)))?;
        stream
            .flush()
            .await
            .map_err(|e| PeerError::Io(Arc::new(e)))?;
        let decoder = FrameDecoder::new(self.config.max_frame_bytes);
        let payload = read_one_frame(stream, &decoder, buf).await?;
        let (header, _, body) =
            decode_response(api, version, payload).map_err(|e| protocol(e.to_string()))?;
        if header.correlation_id != correlation_id {
            return Err(protocol(format!(
                "{api:?} correlation id {} != {correlation_id}",
                header.correlation_id
            )));
        }
        Ok(body)
    }
}
