//! The server side of SASL on one connection, as Kafka's `SaslServerAuthenticator` and the
//! re-authentication rules of `SocketServer`/`KafkaChannel` (KIP-152, KIP-368) run it: the
//! states a connection goes through, deciding for each request whether it is answered here,
//! served as the authenticated principal, or ends the connection. No I/O: the connection feeds
//! it decoded requests (or, after a SaslHandshake v0, raw tokens) and does what it says.
//!
//! 1. Before authentication only ApiVersions (once) and SaslHandshake are accepted; anything
//!    else closes the connection ("Unexpected Kafka request of type X during SASL handshake").
//! 2. SaslHandshake names an enabled mechanism → NONE with the enabled list; any other →
//!    UNSUPPORTED_SASL_MECHANISM with the list, then the connection closes.
//! 3. SaslAuthenticate (v0–v2) feeds the exchange until it completes; a failure is answered
//!    SASL_AUTHENTICATION_FAILED with Kafka's message after
//!    `connection.failed.authentication.delay.ms`, then the connection closes. v0 of the
//!    handshake instead means raw size-prefixed tokens with no Kafka header (pre-1.0 clients).
//! 4. Authenticated: every request is served as `User:<authorization id>`. With
//!    `connections.max.reauth.ms` > 0 the session lasts that long; a client that spoke
//!    SaslAuthenticate v1+ re-authenticates with a new SaslHandshake (same mechanism, same
//!    principal), and any other request after the session expired closes the connection.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{
    ApiKey, RequestKind, ResponseKind, SaslAuthenticateResponse, SaslHandshakeResponse,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_sasl::{AuthError, Mechanism, ServerExchange, ServerStep};

use crate::net::sasl::ServerSasl;

/// What the connection does with a request.
#[derive(Debug)]
pub(super) enum Step {
    /// Answer with this response and keep reading.
    Answer(ResponseKind),
    /// Serve the request normally as `principal` (ApiVersions before the handshake included).
    Serve(Arc<str>),
    /// Authentication failed: wait the failed-authentication delay, send `response` if any,
    /// close. `reason` is for the log line (Kafka's message, never a secret).
    Fail {
        response: Option<ResponseKind>,
        reason: String,
    },
    /// Close at once without an answer (an expired session, as `SocketServer` does).
    Close(String),
}

/// What to do with a raw token (after a SaslHandshake v0).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum RawStep {
    /// Send these bytes size-prefixed and keep reading.
    Send(Vec<u8>),
    /// Close after the failed-authentication delay.
    Fail(String),
}

/// An authenticated session.
#[derive(Debug, Clone)]
struct Session {
    principal: Arc<str>,
    /// The client authenticated with a delegation token (SCRAM `tokenauth=true`).
    token_authenticated: bool,
    /// What SaslAuthenticate reports as `session_lifetime_ms` (0: no limit).
    lifetime_ms: i64,
    mechanism: Mechanism,
    /// `None`: the session never expires (`connections.max.reauth.ms` = 0).
    expires_at: Option<Instant>,
    /// The client sent SaslAuthenticate v1+ (`connectedClientSupportsReauthentication`).
    supports_reauth: bool,
}

enum State {
    /// Waiting for ApiVersions or SaslHandshake.
    Start {
        api_versions_answered: bool,
    },
    /// The handshake chose a mechanism; SaslAuthenticate requests (or raw tokens) follow.
    Exchange {
        exchange: ServerExchange,
        raw: bool,
        supports_reauth: bool,
    },
    Authenticated(Session),
    /// A new SaslHandshake on an authenticated connection (KIP-368).
    Reauth {
        exchange: ServerExchange,
        previous: Session,
    },
    /// Re-authentication asked for another mechanism: the next token fails
    /// (`REAUTH_BAD_MECHANISM`).
    ReauthBadMechanism(String),
    /// After a failure: nothing more is accepted.
    Failed,
}

/// One connection's authentication state.
pub(super) struct Authenticator {
    sasl: ServerSasl,
    state: State,
}

fn handshake_response(error: Option<ResponseError>, mechanisms: &[Mechanism]) -> ResponseKind {
    let mut response = SaslHandshakeResponse::default();
    response.error_code = error.map_or(0, |e| e.code());
    response.mechanisms = mechanisms
        .iter()
        .map(|m| StrBytes::from_static_str(m.name()))
        .collect();
    ResponseKind::SaslHandshake(response)
}

fn authenticate_response(auth_bytes: Vec<u8>, session_lifetime_ms: i64) -> ResponseKind {
    let mut response = SaslAuthenticateResponse::default();
    response.auth_bytes = Bytes::from(auth_bytes);
    response.session_lifetime_ms = session_lifetime_ms;
    ResponseKind::SaslAuthenticate(response)
}

fn authenticate_failure(message: String) -> ResponseKind {
    let mut response = SaslAuthenticateResponse::default();
    response.error_code = ResponseError::SaslAuthenticationFailed.code();
    response.error_message = Some(StrBytes::from_string(message));
    ResponseKind::SaslAuthenticate(response)
}

/// ControllerApis' answers to SASL requests that arrive where no authentication is under way
/// (a PLAINTEXT or SSL listener, or an authenticated connection that cannot re-authenticate).
pub(super) fn illegal_sasl_state(api_key: ApiKey) -> Option<ResponseKind> {
    match api_key {
        ApiKey::SaslHandshake => {
            let mut response = SaslHandshakeResponse::default();
            response.error_code = ResponseError::IllegalSaslState.code();
            Some(ResponseKind::SaslHandshake(response))
        }
        ApiKey::SaslAuthenticate => {
            let mut response = SaslAuthenticateResponse::default();
            response.error_code = ResponseError::IllegalSaslState.code();
            response.error_message = Some(StrBytes::from_static_str(
                "SaslAuthenticate request received after successful authentication",
            ));
            Some(ResponseKind::SaslAuthenticate(response))
        }
        _ => None,
    }
}

impl Authenticator {
    pub(super) fn new(sasl: ServerSasl) -> Self {
        Self {
            sasl,
            state: State::Start {
                api_versions_answered: false,
            },
        }
    }

    /// The delay before a failed authentication is answered and the connection closed.
    pub(super) fn failure_delay(&self) -> Duration {
        Duration::from_millis(self.sasl.settings.failed_authentication_delay_ms)
    }

    /// The largest frame to accept now: `sasl.server.max.receive.size` until the client has
    /// authenticated (and while it re-authenticates), then `authenticated_max`.
    pub(super) fn max_frame_bytes(&self, authenticated_max: usize) -> usize {
        match self.state {
            State::Authenticated(_) => authenticated_max,
            _ => authenticated_max.min(self.sasl.settings.max_receive_size),
        }
    }

    /// The key whose limit [`Self::max_frame_bytes`] returns now.
    pub(super) fn max_frame_key(&self, authenticated_max: usize) -> &'static str {
        match self.state {
            State::Authenticated(_) => SOCKET_REQUEST_MAX_BYTES,
            _ if self.sasl.settings.max_receive_size < authenticated_max => {
                "sasl.server.max.receive.size"
            }
            _ => SOCKET_REQUEST_MAX_BYTES,
        }
    }

    /// True when the next frame is a raw SASL token, not a Kafka request.
    pub(super) fn expects_raw_token(&self) -> bool {
        matches!(self.state, State::Exchange { raw: true, .. })
    }

    /// Decides what to do with one decoded request (`api_key`, `version`, `body`) at `now`.
    pub(super) fn on_request(
        &mut self,
        api_key: ApiKey,
        version: i16,
        body: &RequestKind,
        now: Instant,
    ) -> Step {
        let state = std::mem::replace(&mut self.state, State::Failed);
        let (state, step) = self.next(state, api_key, version, body, now);
        self.state = state;
        step
    }

    fn next(
        &self,
        state: State,
        api_key: ApiKey,
        version: i16,
        body: &RequestKind,
        now: Instant,
    ) -> (State, Step) {
        match (state, body) {
            (
                State::Start {
                    api_versions_answered: false,
                },
                RequestKind::ApiVersions(_),
            ) => (
                State::Start {
                    api_versions_answered: true,
                },
                Step::Serve(Arc::from(kraftwerk_tls::ANONYMOUS)),
            ),
            (State::Start { .. }, RequestKind::SaslHandshake(handshake)) => {
                match self.choose(handshake.mechanism.as_str()) {
                    Ok(mech) => (
                        State::Exchange {
                            exchange: self.exchange(mech),
                            raw: version == 0,
                            supports_reauth: false,
                        },
                        Step::Answer(handshake_response(
                            None,
                            &self.sasl.settings.enabled_mechanisms,
                        )),
                    ),
                    Err(step) => (State::Failed, *step),
                }
            }
            (State::Start { .. }, _) => (
                State::Failed,
                Step::Fail {
                    response: None,
                    reason: format!(
                        "Unexpected Kafka request of type {} during SASL handshake.",
                        api_name(api_key)
                    ),
                },
            ),
            (
                State::Exchange {
                    mut exchange,
                    raw: false,
                    supports_reauth,
                },
                RequestKind::SaslAuthenticate(request),
            ) => {
                let supports_reauth = supports_reauth || version > 0;
                match exchange.step(&request.auth_bytes) {
                    Ok(ServerStep::Challenge(bytes)) => (
                        State::Exchange {
                            exchange,
                            raw: false,
                            supports_reauth,
                        },
                        Step::Answer(authenticate_response(bytes, 0)),
                    ),
                    Ok(ServerStep::Done {
                        authorization_id,
                        final_message,
                        token_expiry_ms,
                    }) => {
                        let session = self.session(
                            &authorization_id,
                            token_expiry_ms,
                            exchange.mechanism(),
                            supports_reauth,
                            now,
                        );
                        let lifetime = session.lifetime_ms;
                        (
                            State::Authenticated(session),
                            Step::Answer(authenticate_response(final_message, lifetime)),
                        )
                    }
                    Err(e) => (State::Failed, failure(&e, "authentication")),
                }
            }
            (State::Exchange { .. }, _) => (
                State::Failed,
                Step::Fail {
                    response: None,
                    reason: format!(
                        "Unexpected Kafka request of type {} during SASL authentication.",
                        api_name(api_key)
                    ),
                },
            ),
            (State::Authenticated(session), RequestKind::SaslHandshake(handshake))
                if session.supports_reauth =>
            {
                match self.choose(handshake.mechanism.as_str()) {
                    Ok(mech) if mech == session.mechanism => (
                        State::Reauth {
                            exchange: self.exchange(mech),
                            previous: session,
                        },
                        Step::Answer(handshake_response(
                            None,
                            &self.sasl.settings.enabled_mechanisms,
                        )),
                    ),
                    Ok(mech) => (
                        State::ReauthBadMechanism(format!(
                            "SASL mechanism '{}' requested by client is not supported for \
                             re-authentication of mechanism '{}'",
                            mech.name(),
                            session.mechanism.name()
                        )),
                        Step::Answer(handshake_response(
                            None,
                            &self.sasl.settings.enabled_mechanisms,
                        )),
                    ),
                    Err(step) => (State::Failed, *step),
                }
            }
            (State::Authenticated(session), _) => {
                if session.expires_at.is_some_and(|at| now >= at) {
                    return (
                        State::Failed,
                        Step::Close(format!(
                            "authentication session of {} expired (connections.max.reauth.ms)",
                            session.principal
                        )),
                    );
                }
                let step = match illegal_sasl_state(api_key) {
                    Some(response) => Step::Answer(response),
                    None => Step::Serve(session.principal.clone()),
                };
                (State::Authenticated(session), step)
            }
            (
                State::Reauth {
                    mut exchange,
                    previous,
                },
                RequestKind::SaslAuthenticate(request),
            ) => match exchange.step(&request.auth_bytes) {
                Ok(ServerStep::Challenge(bytes)) => (
                    State::Reauth { exchange, previous },
                    Step::Answer(authenticate_response(bytes, 0)),
                ),
                Ok(ServerStep::Done {
                    authorization_id,
                    final_message,
                    token_expiry_ms,
                }) => {
                    let session = self.session(
                        &authorization_id,
                        token_expiry_ms,
                        previous.mechanism,
                        true,
                        now,
                    );
                    if session.principal != previous.principal {
                        let message = format!(
                            "Cannot change principals during re-authentication from {}: {}",
                            previous.principal.replacen(':', ".", 1),
                            session.principal.replacen(':', ".", 1)
                        );
                        return (
                            State::Failed,
                            Step::Fail {
                                response: Some(authenticate_failure(message.clone())),
                                reason: message,
                            },
                        );
                    }
                    let lifetime = session.lifetime_ms;
                    (
                        State::Authenticated(session),
                        Step::Answer(authenticate_response(final_message, lifetime)),
                    )
                }
                Err(e) => (State::Failed, failure(&e, "re-authentication")),
            },
            (State::Reauth { .. }, _) => (
                State::Failed,
                Step::Fail {
                    response: None,
                    reason: format!(
                        "Unexpected Kafka request of type {} during SASL re-authentication.",
                        api_name(api_key)
                    ),
                },
            ),
            (State::ReauthBadMechanism(message), _) => (
                State::Failed,
                Step::Fail {
                    response: None,
                    reason: message,
                },
            ),
            (State::Failed, _) => (
                State::Failed,
                Step::Close("request after a failed authentication".into()),
            ),
        }
    }

    /// Feeds a raw token (after SaslHandshake v0).
    pub(super) fn on_raw_token(&mut self, token: &[u8], now: Instant) -> RawStep {
        let State::Exchange {
            mut exchange,
            raw: true,
            ..
        } = std::mem::replace(&mut self.state, State::Failed)
        else {
            return RawStep::Fail("raw SASL token outside a v0 handshake".into());
        };
        match exchange.step(token) {
            Ok(ServerStep::Challenge(bytes)) => {
                self.state = State::Exchange {
                    exchange,
                    raw: true,
                    supports_reauth: false,
                };
                RawStep::Send(bytes)
            }
            Ok(ServerStep::Done {
                authorization_id,
                final_message,
                token_expiry_ms,
            }) => {
                self.state = State::Authenticated(self.session(
                    &authorization_id,
                    token_expiry_ms,
                    exchange.mechanism(),
                    false,
                    now,
                ));
                RawStep::Send(final_message)
            }
            Err(e) => RawStep::Fail(e.client_message()),
        }
    }

    /// The authenticated principal, once there is one.
    pub(super) fn principal(&self) -> Option<Arc<str>> {
        match &self.state {
            State::Authenticated(s) => Some(s.principal.clone()),
            State::Reauth { previous, .. } => Some(previous.principal.clone()),
            _ => None,
        }
    }

    /// The enabled mechanism a SaslHandshake names, or the step that refuses it.
    fn choose(&self, name: &str) -> Result<Mechanism, Box<Step>> {
        let enabled = &self.sasl.settings.enabled_mechanisms;
        match Mechanism::from_name(name).filter(|m| enabled.contains(m)) {
            Some(mech) => Ok(mech),
            None => Err(Box::new(Step::Fail {
                response: Some(handshake_response(
                    Some(ResponseError::UnsupportedSaslMechanism),
                    enabled,
                )),
                // The name as sent, bounded: it is the client's text.
                reason: format!(
                    "Unsupported SASL mechanism {}",
                    name.chars().take(64).collect::<String>()
                ),
            })),
        }
    }

    fn exchange(&self, mech: Mechanism) -> ServerExchange {
        ServerExchange::new(
            mech,
            self.sasl.plain_users.clone(),
            self.sasl.credentials.clone(),
        )
    }

    /// Whether the authenticated principal logged in with a delegation token (false before
    /// authentication).
    pub(super) fn token_authenticated(&self) -> bool {
        match &self.state {
            State::Authenticated(s) => s.token_authenticated,
            State::Reauth { previous, .. } => previous.token_authenticated,
            _ => false,
        }
    }

    /// A new session at `now`. Its lifetime is `connections.max.reauth.ms`, or for a
    /// delegation token at most the time left until the token's expiry
    /// (`SaslServerAuthenticator` with the credential lifetime `ScramSaslServer` negotiates),
    /// 0 for a token already expired.
    fn session(
        &self,
        authorization_id: &str,
        token_expiry_ms: Option<i64>,
        mechanism: Mechanism,
        supports_reauth: bool,
        now: Instant,
    ) -> Session {
        let reauth_ms = i64::try_from(self.sasl.settings.reauth_ms).unwrap_or(i64::MAX);
        let lifetime_ms = match token_expiry_ms {
            None => reauth_ms,
            Some(expiry) => {
                let left = expiry.saturating_sub(wall_clock_ms()).max(0);
                if reauth_ms > 0 {
                    left.min(reauth_ms)
                } else {
                    left
                }
            }
        };
        let limited = reauth_ms > 0 || token_expiry_ms.is_some();
        Session {
            principal: Arc::from(format!("User:{authorization_id}")),
            token_authenticated: token_expiry_ms.is_some(),
            lifetime_ms,
            mechanism,
            expires_at: limited
                .then(|| now.checked_add(Duration::from_millis(lifetime_ms as u64)))
                .flatten(),
            supports_reauth,
        }
    }
}

/// Milliseconds since the Unix epoch (token expiry timestamps are on this clock).
fn wall_clock_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// How much of an error's own text goes into the log line, in characters. It may name the
/// user, the client's text of up to `kraftwerk_sasl::MAX_MESSAGE_SIZE` bytes: bounded like the
/// mechanism name in [`Authenticator::choose`], so that one login cannot write 64 KiB of log.
const MAX_LOGGED_ERROR_CHARS: usize = 256;

/// The key of the frame limit once a client has authenticated (and of a listener without SASL).
pub(super) const SOCKET_REQUEST_MAX_BYTES: &str = "socket.request.max.bytes";

/// A failed SaslAuthenticate: Kafka's message to the client, the same in the log.
fn failure(e: &AuthError, during: &str) -> Step {
    let message =
        e.client_message()
            .replacen("during authentication", &format!("during {during}"), 1);
    let detail = e.to_string();
    let detail = match detail.char_indices().nth(MAX_LOGGED_ERROR_CHARS) {
        Some((cut, _)) => format!("{}…", &detail[..cut]),
        None => detail,
    };
    let reason = if detail == message {
        message.clone()
    } else {
        format!("{message} ({detail})")
    };
    Step::Fail {
        response: Some(authenticate_failure(message)),
        reason,
    }
}

fn api_name(api_key: ApiKey) -> String {
    // Kafka prints the ApiKeys enum name (e.g. METADATA).
    let camel = format!("{api_key:?}");
    let mut name = String::with_capacity(camel.len() + 4);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

#[cfg(test)]
mod tests;
