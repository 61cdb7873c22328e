//! Server side of one exchange (Kafka `SaslServerAuthenticator` with `PlainSaslServer` and
//! `ScramSaslServer`).

use crate::messages::{encode, ClientFinal, ClientFirst};
use crate::scram::{hash, hmac, CredentialStore, ScramCredential, MAX_ITERATIONS, MIN_ITERATIONS};
use crate::token::token_credential;
use crate::{AuthError, Mechanism};
use rand::distributions::{Alphanumeric, DistString};
use rand::RngCore;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use subtle::ConstantTimeEq;

/// Longest client message accepted (Kafka's `sasl.server.max.receive.size` bounds the frame;
/// real PLAIN and SCRAM messages are a few hundred bytes).
pub const MAX_MESSAGE_SIZE: usize = 64 * 1024;

/// What to send the client after a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStep {
    /// Send these `auth_bytes` and wait for the next client message.
    Challenge(Vec<u8>),
    /// Authenticated as `authorization_id`; send `final_message` (empty for PLAIN).
    Done {
        /// The authenticated user (the principal's name): the user name, or for a delegation
        /// token the token owner's name.
        authorization_id: String,
        /// The last `auth_bytes` to send.
        final_message: Vec<u8>,
        /// `Some(expiry, ms since the Unix epoch)` when the client authenticated with a
        /// delegation token (`tokenauth=true`, KIP-48): its principal is token-authenticated
        /// and its session ends at the token's expiry (`tokenExpiryTimestamp`).
        token_expiry_ms: Option<i64>,
    },
}

/// SCRAM state between the first and final client messages.
struct ScramFirst {
    user: String,
    /// Who the client authenticates as: `user`, or a token's owner.
    authorization_id: String,
    /// The token's expiry when `tokenauth=true`.
    token_expiry_ms: Option<i64>,
    credential: ScramCredential,
    /// The user is unknown: `credential` is made up and the proof must fail.
    unknown: bool,
    gs2_header: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
}

enum State {
    Start,
    ScramFinal(Box<ScramFirst>),
    Done,
    Failed,
}

/// Server side of one authentication exchange.
pub struct ServerExchange {
    mech: Mechanism,
    plain_users: Arc<BTreeMap<String, String>>,
    store: Arc<dyn CredentialStore>,
    nonce: Box<dyn FnMut() -> String + Send + Sync>,
    state: State,
}

/// A server nonce like Kafka's (`ScramFormatter.secureRandomString`: 130 random bits), from the
/// OS's generator.
fn random_nonce() -> String {
    Alphanumeric.sample_string(&mut rand::rngs::OsRng, 32)
}

/// A process-wide secret that makes up stable salts for unknown users, so that asking twice
/// does not tell a made-up credential from a stored one.
fn fake_salt(mech: Mechanism, user: &str) -> Vec<u8> {
    static SECRET: OnceLock<[u8; 32]> = OnceLock::new();
    let secret = SECRET.get_or_init(|| {
        let mut s = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut s);
        s
    });
    let mut salt = hmac(mech, secret, user.as_bytes());
    salt.truncate(20);
    salt
}

/// SHA-512 of a PLAIN password: compared instead of the password so that the comparison takes
/// the same time whatever the lengths.
fn plain_digest(password: &[u8]) -> Vec<u8> {
    hash(Mechanism::ScramSha512, password)
}

impl ServerExchange {
    /// `plain_users`: from the listener's JAAS config (PLAIN only); `store`: SCRAM credentials.
    pub fn new(
        mech: Mechanism,
        plain_users: Arc<BTreeMap<String, String>>,
        store: Arc<dyn CredentialStore>,
    ) -> Self {
        Self::with_nonce_source(mech, plain_users, store, Box::new(random_nonce))
    }

    /// Like [`ServerExchange::new`] with the server nonces from `nonce` (tests: RFC vectors).
    /// A nonce must be printable ASCII without `,`.
    pub fn with_nonce_source(
        mech: Mechanism,
        plain_users: Arc<BTreeMap<String, String>>,
        store: Arc<dyn CredentialStore>,
        nonce: Box<dyn FnMut() -> String + Send + Sync>,
    ) -> Self {
        ServerExchange {
            mech,
            plain_users,
            store,
            nonce,
            state: State::Start,
        }
    }

    /// The exchange's mechanism.
    pub fn mechanism(&self) -> Mechanism {
        self.mech
    }

    /// Feeds one SaslAuthenticate `auth_bytes`; PLAIN finishes on the first, SCRAM on the
    /// second. After an error or `Done` every further message fails.
    pub fn step(&mut self, client_message: &[u8]) -> Result<ServerStep, AuthError> {
        let result = self.step_inner(client_message);
        if result.is_err() {
            self.state = State::Failed;
        }
        result
    }

    fn step_inner(&mut self, message: &[u8]) -> Result<ServerStep, AuthError> {
        let mech = self.mech;
        if message.len() > MAX_MESSAGE_SIZE {
            return Err(AuthError::MessageTooLarge {
                mechanism: mech,
                size: message.len(),
            });
        }
        match std::mem::replace(&mut self.state, State::Failed) {
            State::Start if mech == Mechanism::Plain => self.plain(message),
            State::Start => self.scram_first(message),
            State::ScramFinal(first) => self.scram_final(*first, message),
            State::Done => Err(AuthError::UnexpectedMessage {
                mechanism: mech,
                state: "COMPLETE",
            }),
            State::Failed => Err(AuthError::UnexpectedMessage {
                mechanism: mech,
                state: "FAILED",
            }),
        }
    }

    /// `PlainSaslServer.evaluateResponse` with `PlainServerCallbackHandler`.
    fn plain(&mut self, message: &[u8]) -> Result<ServerStep, AuthError> {
        // Java decodes leniently (malformed UTF-8 becomes U+FFFD); so do we.
        let text = String::from_utf8_lossy(message);
        let tokens: Vec<&str> = text.splitn(4, '\0').collect();
        let [authzid, user, password] = tokens[..] else {
            return Err(AuthError::PlainTokens {
                tokens: tokens.len(),
            });
        };
        if user.is_empty() {
            return Err(AuthError::PlainNoUsername);
        }
        if password.is_empty() {
            return Err(AuthError::PlainNoPassword);
        }
        let given = plain_digest(password.as_bytes());
        // An unknown user is compared against a dummy, so timing does not tell users apart.
        let (expected, known) = match self.plain_users.get(user) {
            Some(p) => (plain_digest(p.as_bytes()), true),
            None => (plain_digest(b"\0kraftwerk-no-such-user\0"), false),
        };
        let equal: bool = given.ct_eq(&expected).into();
        if !(equal && known) {
            return Err(AuthError::InvalidCredentials {
                mechanism: Mechanism::Plain,
                user: user.to_owned(),
            });
        }
        if !authzid.is_empty() && authzid != user {
            return Err(AuthError::AuthorizationIdMismatch {
                mechanism: Mechanism::Plain,
            });
        }
        self.state = State::Done;
        Ok(ServerStep::Done {
            authorization_id: user.to_owned(),
            final_message: Vec::new(),
            token_expiry_ms: None,
        })
    }

    /// `ScramSaslServer`, state RECEIVE_CLIENT_FIRST_MESSAGE.
    fn scram_first(&mut self, message: &[u8]) -> Result<ServerStep, AuthError> {
        let mech = self.mech;
        let malformed = |what| AuthError::Malformed {
            mechanism: mech,
            what,
        };
        let text = std::str::from_utf8(message).map_err(|_| malformed("client first message"))?;
        let first = ClientFirst::parse(text).ok_or(malformed("client first message"))?;
        // Other extensions are ignored, as Kafka does (it logs them).
        let token_auth = first
            .extensions
            .iter()
            .any(|(k, v)| *k == "tokenauth" && v.eq_ignore_ascii_case("true"));
        let made_up = || ScramCredential {
            salt: fake_salt(mech, &first.user),
            stored_key: Vec::new(),
            server_key: Vec::new(),
            iterations: MIN_ITERATIONS,
        };
        let (credential, unknown, authorization_id, token_expiry_ms) = if token_auth {
            // `ScramServerCallbackHandler` with a `DelegationTokenCredentialCallback`: the user
            // name is the token id, the password the base64 HMAC, the principal the owner.
            // The salt is the one an unknown user would get, so that a token id's existence
            // does not show in the server-first message.
            match self.store.token(&first.user) {
                Some(token) => (
                    token_credential(mech, &token.hmac, fake_salt(mech, &first.user)),
                    false,
                    token.owner,
                    Some(token.expiry_timestamp_ms),
                ),
                None => (made_up(), true, first.user.clone(), Some(0)),
            }
        } else {
            match self.store.scram(&first.user, mech) {
                Some(c) => (c, false, first.user.clone(), None),
                // Kafka 4.0 fails here ("Invalid user credentials", the generic message to
                // the client); going on with a made-up credential also hides that the user is
                // unknown from timing and from the server-first message.
                None => (made_up(), true, first.user.clone(), None),
            }
        };
        if !first.authzid.is_empty() && first.authzid != first.user {
            return Err(AuthError::AuthorizationIdMismatch { mechanism: mech });
        }
        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&credential.iterations) {
            return Err(AuthError::Iterations {
                mechanism: mech,
                iterations: credential.iterations,
            });
        }
        let server_nonce = (self.nonce)();
        if server_nonce.is_empty()
            || !server_nonce
                .bytes()
                .all(|b| (0x21..=0x7e).contains(&b) && b != b',')
        {
            return Err(malformed("server nonce"));
        }
        let nonce = format!("{}{}", first.nonce, server_nonce);
        let server_first = format!(
            "r={nonce},s={},i={}",
            encode(&credential.salt),
            credential.iterations
        );
        let reply = server_first.clone().into_bytes();
        self.state = State::ScramFinal(Box::new(ScramFirst {
            user: first.user,
            authorization_id,
            token_expiry_ms,
            credential,
            unknown,
            gs2_header: first.gs2_header.to_owned(),
            client_first_bare: first.bare.to_owned(),
            server_first,
            nonce,
        }));
        Ok(ServerStep::Challenge(reply))
    }

    /// `ScramSaslServer`, state RECEIVE_CLIENT_FINAL_MESSAGE.
    fn scram_final(&mut self, first: ScramFirst, message: &[u8]) -> Result<ServerStep, AuthError> {
        let mech = self.mech;
        let malformed = AuthError::Malformed {
            mechanism: mech,
            what: "client final message",
        };
        let text = std::str::from_utf8(message).map_err(|_| malformed.clone())?;
        let last = ClientFinal::parse(text).ok_or(malformed)?;
        if last.channel_binding != first.gs2_header.as_bytes() {
            return Err(AuthError::ChannelBinding { mechanism: mech });
        }
        if last.nonce != first.nonce {
            return Err(AuthError::InvalidNonce { mechanism: mech });
        }
        let auth_message = format!(
            "{},{},{}",
            first.client_first_bare, first.server_first, last.without_proof
        );
        // ClientKey = ClientProof XOR HMAC(StoredKey, AuthMessage); H(ClientKey) == StoredKey.
        let signature = hmac(mech, &first.credential.stored_key, auth_message.as_bytes());
        let invalid = AuthError::InvalidCredentials {
            mechanism: mech,
            user: first.user.clone(),
        };
        if last.proof.len() != signature.len() {
            return Err(invalid);
        }
        let client_key: Vec<u8> = last
            .proof
            .iter()
            .zip(&signature)
            .map(|(p, s)| p ^ s)
            .collect();
        let computed = hash(mech, &client_key);
        let equal: bool = computed.ct_eq(&first.credential.stored_key).into();
        if !equal || first.unknown {
            return Err(invalid);
        }
        let server_signature = hmac(mech, &first.credential.server_key, auth_message.as_bytes());
        self.state = State::Done;
        Ok(ServerStep::Done {
            authorization_id: first.authorization_id,
            final_message: format!("v={}", encode(&server_signature)).into_bytes(),
            token_expiry_ms: first.token_expiry_ms,
        })
    }
}
