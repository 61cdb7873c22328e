//! Why an exchange failed.

use crate::Mechanism;

/// Why authentication failed. `Display` never contains a password, salted password, proof or
/// key (nor a whole client message, which may hold a proof); it may name the user.
///
/// Kafka answers two kinds of failure differently (`SaslServerAuthenticator.handleSaslToken`):
/// a `SaslAuthenticationException` sends its own message, any other `SaslException` the generic
/// "... due to invalid credentials with SASL mechanism X"; [`AuthError::client_message`] does
/// the same.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// A message longer than [`crate::MAX_MESSAGE_SIZE`].
    #[error("{mechanism} message of {size} bytes is over the limit")]
    MessageTooLarge {
        /// The exchange's mechanism.
        mechanism: Mechanism,
        /// The message's size.
        size: usize,
    },
    /// PLAIN: not `[authzid] NUL authcid NUL passwd` (`PlainSaslServer.extractTokens`).
    #[error("Invalid SASL/PLAIN response: expected 3 tokens, got {tokens}")]
    PlainTokens {
        /// Tokens found (up to 4).
        tokens: usize,
    },
    /// PLAIN: empty user name.
    #[error("Authentication failed: username not specified")]
    PlainNoUsername,
    /// PLAIN: empty password.
    #[error("Authentication failed: password not specified")]
    PlainNoPassword,
    /// Unknown user or wrong password (PLAIN), or a client proof that does not verify (SCRAM).
    #[error("{mechanism}: invalid credentials for user {user:?}")]
    InvalidCredentials {
        /// The exchange's mechanism.
        mechanism: Mechanism,
        /// The user the client named.
        user: String,
    },
    /// The client asked for an authorization id other than its user name.
    #[error("Authentication failed: Client requested an authorization id that is different from username")]
    AuthorizationIdMismatch {
        /// The exchange's mechanism.
        mechanism: Mechanism,
    },
    /// A message that is not of the mechanism's grammar (or not UTF-8).
    #[error("{mechanism}: invalid {what}")]
    Malformed {
        /// The exchange's mechanism.
        mechanism: Mechanism,
        /// Which message or part of it.
        what: &'static str,
    },
    /// SCRAM: a credential (server) or server-first message (client) with iterations outside
    /// `MIN_ITERATIONS..=MAX_ITERATIONS`.
    #[error("{mechanism}: iterations {iterations} outside 4096..=16384")]
    Iterations {
        /// The exchange's mechanism.
        mechanism: Mechanism,
        /// The iterations asked for.
        iterations: i32,
    },
    /// SCRAM: the client-final nonce is not the server-first nonce, or (client side) the
    /// server's nonce does not extend the client's.
    #[error("{mechanism}: invalid nonce")]
    InvalidNonce {
        /// The exchange's mechanism.
        mechanism: Mechanism,
    },
    /// SCRAM: the client-final channel binding is not the client-first GS2 header.
    #[error("{mechanism}: channel binding does not match the client-first message")]
    ChannelBinding {
        /// The exchange's mechanism.
        mechanism: Mechanism,
    },
    /// Client side: the server-final signature does not verify.
    #[error("{mechanism}: invalid server signature in server final message")]
    ServerSignature {
        /// The exchange's mechanism.
        mechanism: Mechanism,
    },
    /// Client side: the server-final message was `e=...`.
    #[error("Sasl authentication using {mechanism} failed with error: {error}")]
    ServerError {
        /// The exchange's mechanism.
        mechanism: Mechanism,
        /// The server's error value.
        error: String,
    },
    /// A message after the exchange finished or failed.
    #[error("{mechanism}: unexpected message in state {state}")]
    UnexpectedMessage {
        /// The exchange's mechanism.
        mechanism: Mechanism,
        /// The exchange's state.
        state: &'static str,
    },
}

impl AuthError {
    /// The text Kafka puts in SaslAuthenticateResponse.error_message for this failure.
    pub fn client_message(&self) -> String {
        match self {
            AuthError::PlainTokens { .. }
            | AuthError::PlainNoUsername
            | AuthError::PlainNoPassword
            | AuthError::AuthorizationIdMismatch { .. } => self.to_string(),
            AuthError::InvalidCredentials {
                mechanism: Mechanism::Plain,
                ..
            } => "Authentication failed: Invalid username or password".to_owned(),
            AuthError::MessageTooLarge { .. } => {
                "Failing SASL authentication due to invalid receive size".to_owned()
            }
            other => format!(
                "Authentication failed during authentication due to invalid credentials with SASL mechanism {}",
                other.mechanism()
            ),
        }
    }

    /// The mechanism of the exchange that failed.
    pub fn mechanism(&self) -> Mechanism {
        match self {
            AuthError::PlainTokens { .. }
            | AuthError::PlainNoUsername
            | AuthError::PlainNoPassword => Mechanism::Plain,
            AuthError::MessageTooLarge { mechanism, .. }
            | AuthError::InvalidCredentials { mechanism, .. }
            | AuthError::AuthorizationIdMismatch { mechanism }
            | AuthError::Malformed { mechanism, .. }
            | AuthError::Iterations { mechanism, .. }
            | AuthError::InvalidNonce { mechanism }
            | AuthError::ChannelBinding { mechanism }
            | AuthError::ServerSignature { mechanism }
            | AuthError::ServerError { mechanism, .. }
            | AuthError::UnexpectedMessage { mechanism, .. } => *mechanism,
        }
    }
}
