//! Client side of one exchange (controller-to-controller Raft connections; Kafka
//! `PlainSaslClient`-like and `ScramSaslClient`).

use crate::messages::{encode, ServerFinal, ServerFirst};
use crate::scram::{hash, hmac, salted_password, sasl_name, MAX_ITERATIONS, MIN_ITERATIONS};
use crate::server::MAX_MESSAGE_SIZE;
use crate::{AuthError, Mechanism};
use rand::distributions::{Alphanumeric, DistString};
use subtle::ConstantTimeEq;

enum State {
    Start,
    /// SCRAM: client-first sent.
    First {
        client_first_bare: String,
    },
    /// PLAIN: sent; SCRAM: client-final sent, the expected server signature kept.
    Final {
        server_signature: Option<Vec<u8>>,
    },
    Done,
    Failed,
}

/// Client side of one authentication exchange.
pub struct ClientExchange {
    mech: Mechanism,
    username: String,
    password: String,
    nonce: String,
    /// Send the `tokenauth=true` extension (a delegation token: username = token id,
    /// password = base64 HMAC).
    token_auth: bool,
    state: State,
}

impl ClientExchange {
    /// An exchange authenticating `username` with `password`.
    pub fn new(mech: Mechanism, username: &str, password: &str) -> Self {
        let nonce = Alphanumeric.sample_string(&mut rand::rngs::OsRng, 32);
        Self::with_nonce(mech, username, password, &nonce)
    }

    /// Like [`ClientExchange::new`] with a given client nonce (tests: RFC vectors).
    pub fn with_nonce(mech: Mechanism, username: &str, password: &str, nonce: &str) -> Self {
        ClientExchange {
            mech,
            username: username.to_owned(),
            password: password.to_owned(),
            nonce: nonce.to_owned(),
            token_auth: false,
            state: State::Start,
        }
    }

    /// The same exchange authenticating with a delegation token (SCRAM's `tokenauth=true`
    /// extension, as `ScramLoginModule` sends it with `tokenauth="true"`): `username` is the
    /// token id, `password` the base64 HMAC.
    pub fn with_token_auth(mut self) -> Self {
        self.token_auth = true;
        self
    }

    /// The first `auth_bytes`: PLAIN `NUL user NUL password`, SCRAM `n,,n=user,r=nonce`.
    pub fn first_message(&mut self) -> Vec<u8> {
        if self.mech == Mechanism::Plain {
            self.state = State::Final {
                server_signature: None,
            };
            return format!("\0{}\0{}", self.username, self.password).into_bytes();
        }
        let extensions = if self.token_auth {
            ",tokenauth=true"
        } else {
            ""
        };
        let bare = format!(
            "n={},r={}{extensions}",
            sasl_name(&self.username),
            self.nonce
        );
        let message = format!("n,,{bare}").into_bytes();
        self.state = State::First {
            client_first_bare: bare,
        };
        message
    }

    /// Feeds a server message; `Ok(Some(bytes))` to send next, `Ok(None)` when done (SCRAM:
    /// server signature verified).
    pub fn step(&mut self, server_message: &[u8]) -> Result<Option<Vec<u8>>, AuthError> {
        let result = self.step_inner(server_message);
        if result.is_err() {
            self.state = State::Failed;
        }
        result
    }

    fn step_inner(&mut self, message: &[u8]) -> Result<Option<Vec<u8>>, AuthError> {
        let mech = self.mech;
        if message.len() > MAX_MESSAGE_SIZE {
            return Err(AuthError::MessageTooLarge {
                mechanism: mech,
                size: message.len(),
            });
        }
        let unexpected = |state| AuthError::UnexpectedMessage {
            mechanism: mech,
            state,
        };
        let malformed = |what| AuthError::Malformed {
            mechanism: mech,
            what,
        };
        match std::mem::replace(&mut self.state, State::Failed) {
            State::Start => Err(unexpected("INITIAL")),
            State::Done => Err(unexpected("COMPLETE")),
            State::Failed => Err(unexpected("FAILED")),
            State::First { client_first_bare } => {
                let text =
                    std::str::from_utf8(message).map_err(|_| malformed("server first message"))?;
                let first = ServerFirst::parse(text).ok_or(malformed("server first message"))?;
                if first.nonce.len() <= self.nonce.len() || !first.nonce.starts_with(&self.nonce) {
                    return Err(AuthError::InvalidNonce { mechanism: mech });
                }
                // The upper bound keeps a hostile server from making us spin.
                if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&first.iterations) {
                    return Err(AuthError::Iterations {
                        mechanism: mech,
                        iterations: first.iterations,
                    });
                }
                let salted = salted_password(
                    mech,
                    self.password.as_bytes(),
                    &first.salt,
                    first.iterations,
                );
                let without_proof = format!("c=biws,r={}", first.nonce);
                let auth_message = format!("{client_first_bare},{text},{without_proof}");
                let client_key = hmac(mech, &salted, b"Client Key");
                let stored_key = hash(mech, &client_key);
                let signature = hmac(mech, &stored_key, auth_message.as_bytes());
                let proof: Vec<u8> = client_key
                    .iter()
                    .zip(&signature)
                    .map(|(k, s)| k ^ s)
                    .collect();
                let server_key = hmac(mech, &salted, b"Server Key");
                self.state = State::Final {
                    server_signature: Some(hmac(mech, &server_key, auth_message.as_bytes())),
                };
                Ok(Some(
                    format!("{without_proof},p={}", encode(&proof)).into_bytes(),
                ))
            }
            State::Final {
                server_signature: None,
            } => {
                // PLAIN: the server answers success with empty auth_bytes.
                if !message.is_empty() {
                    return Err(malformed("server message"));
                }
                self.state = State::Done;
                Ok(None)
            }
            State::Final {
                server_signature: Some(expected),
            } => {
                let text =
                    std::str::from_utf8(message).map_err(|_| malformed("server final message"))?;
                match ServerFinal::parse(text).ok_or(malformed("server final message"))? {
                    ServerFinal::Error(error) => Err(AuthError::ServerError {
                        mechanism: mech,
                        error,
                    }),
                    ServerFinal::Verifier(v) => {
                        if !bool::from(v.ct_eq(&expected)) {
                            return Err(AuthError::ServerSignature { mechanism: mech });
                        }
                        self.state = State::Done;
                        Ok(None)
                    }
                }
            }
        }
    }
}
