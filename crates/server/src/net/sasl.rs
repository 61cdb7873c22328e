//! SASL settings of a controller listener and of the Raft client (issue 11), as Kafka's
//! `SaslChannelBuilder` takes them from `sasl.enabled.mechanisms`, `connections.max.reauth.ms`
//! and the listener's JAAS configuration, and the SCRAM credentials the listener checks
//! clients against (the metadata image's UserScramCredentialRecords, as Kafka's
//! `ScramPublisher` keeps a controller's credential cache).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use kraftwerk_records::metadata::DelegationTokenRecord;
use kraftwerk_sasl::{CredentialStore, Mechanism, ScramCredential, StoredToken};
use tokio::sync::watch;

use kraftwerk_node::NodeStatus;

/// The SASL side of a SASL_PLAINTEXT or SASL_SSL controller listener.
#[derive(Clone, PartialEq, Eq)]
pub struct ListenerSasl {
    /// `sasl.enabled.mechanisms` (its `listener.name.<l>.` form first), in the order written:
    /// what a SaslHandshake may choose and what its answer lists.
    pub enabled_mechanisms: Vec<Mechanism>,
    /// PLAIN's users → passwords: the `user_NAME="password"` options of
    /// `listener.name.<l>.plain.sasl.jaas.config` (`PlainServerCallbackHandler`); empty when
    /// PLAIN is not enabled.
    pub plain_users: BTreeMap<String, String>,
    /// `connections.max.reauth.ms` (KIP-368), ms: the session lifetime SaslAuthenticate v1+
    /// reports, after which a connection that has not re-authenticated is closed on its next
    /// request; 0 for sessions that never expire.
    pub reauth_ms: u64,
    /// `connection.failed.authentication.delay.ms`, ms: how long the answer to a failed
    /// authentication waits before the connection closes (slows down password guessing).
    pub failed_authentication_delay_ms: u64,
    /// `sasl.server.max.receive.size`, bytes: the largest frame accepted before the client has
    /// authenticated (`socket.request.max.bytes` applies after).
    pub max_receive_size: usize,
}

impl fmt::Debug for ListenerSasl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the passwords.
        f.debug_struct("ListenerSasl")
            .field("enabled_mechanisms", &self.enabled_mechanisms)
            .field("plain_users", &self.plain_users.keys().collect::<Vec<_>>())
            .field("reauth_ms", &self.reauth_ms)
            .field(
                "failed_authentication_delay_ms",
                &self.failed_authentication_delay_ms,
            )
            .field("max_receive_size", &self.max_receive_size)
            .finish()
    }
}

/// How the Raft client (and controller registration) authenticates to the other controllers
/// when the first controller listener is SASL: `sasl.mechanism.controller.protocol` with the
/// `username` and `password` options of that listener's JAAS entry for the mechanism
/// (`listener.name.<l>.<mechanism>.sasl.jaas.config`), as Java's `RaftManager` builds its
/// channel with `JaasContext.Type.SERVER`.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientSasl {
    /// `sasl.mechanism.controller.protocol`.
    pub mechanism: Mechanism,
    /// The JAAS `username` option.
    pub username: String,
    /// The JAAS `password` option.
    pub password: String,
}

impl fmt::Debug for ClientSasl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientSasl")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// SCRAM credentials from the node's committed image, read on every SCRAM exchange: a
/// credential added with `kafka-configs --alter --add-config SCRAM-SHA-512=[...]` (or
/// `kraftwerk format --add-scram`) works as soon as this node replayed it. So do delegation
/// tokens (KIP-48), when `delegation.token.secret.key` is set: their HMACs are recomputed with
/// it (Kafka's `DelegationTokenPublisher` fills the `DelegationTokenCache` the same way).
pub(crate) struct ImageCredentials {
    status: watch::Receiver<NodeStatus>,
    /// `delegation.token.secret.key`; `None`: no token authenticates.
    token_secret: Option<String>,
}

impl ImageCredentials {
    pub(crate) fn new(status: watch::Receiver<NodeStatus>, token_secret: Option<String>) -> Self {
        Self {
            status,
            token_secret,
        }
    }
}

impl CredentialStore for ImageCredentials {
    fn scram(&self, user: &str, mech: Mechanism) -> Option<ScramCredential> {
        let scram_type = mech.scram_type()?;
        let status = self.status.borrow();
        let record = status.scram_credentials.get(user, scram_type)?;
        Some(ScramCredential {
            salt: record.salt.to_vec(),
            stored_key: record.stored_key.to_vec(),
            server_key: record.server_key.to_vec(),
            iterations: record.iterations,
        })
    }

    fn token(&self, token_id: &str) -> Option<StoredToken> {
        let secret = self.token_secret.as_deref()?;
        let status = self.status.borrow();
        status
            .delegation_tokens
            .get(token_id)
            .map(|record| stored_token(secret, record))
    }
}

/// What a SCRAM login with token `record` is checked against: its HMAC under `secret`, the
/// owner's name (`DelegationTokenCache.owner`: `User:alice` → `alice`) and its expiry.
fn stored_token(secret: &str, record: &DelegationTokenRecord) -> StoredToken {
    let owner = record
        .owner
        .split_once(':')
        .map_or(record.owner.as_str(), |(_, name)| name);
    StoredToken {
        hmac: kraftwerk_sasl::token_hmac(secret, &record.token_id),
        owner: owner.to_owned(),
        expiry_timestamp_ms: record.expiration_timestamp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_logs_in_as_its_owners_name_with_the_hmac_of_its_id() {
        let record = DelegationTokenRecord {
            owner: "User:alice".into(),
            token_id: "tok-1".into(),
            expiration_timestamp: 42,
            ..Default::default()
        };
        let token = stored_token("secret", &record);
        assert_eq!(token.owner, "alice");
        assert_eq!(token.hmac, kraftwerk_sasl::token_hmac("secret", "tok-1"));
        assert_ne!(token.hmac, kraftwerk_sasl::token_hmac("other", "tok-1"));
        assert_eq!(token.expiry_timestamp_ms, 42);
    }
}

/// What a SASL listener's connections authenticate with: the listener's settings and the SCRAM
/// credentials (on a running node, the committed image's).
#[derive(Clone)]
pub struct ServerSasl {
    /// From the listener's keys.
    pub settings: ListenerSasl,
    /// [`ListenerSasl::plain_users`], shared by every exchange.
    pub plain_users: Arc<BTreeMap<String, String>>,
    /// Where SCRAM credentials are looked up.
    pub credentials: Arc<dyn CredentialStore>,
}

impl ServerSasl {
    /// `settings` checked against `credentials`.
    pub fn new(settings: ListenerSasl, credentials: Arc<dyn CredentialStore>) -> Self {
        Self {
            plain_users: Arc::new(settings.plain_users.clone()),
            settings,
            credentials,
        }
    }
}

impl fmt::Debug for ServerSasl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.settings.fmt(f)
    }
}

impl PartialEq for ServerSasl {
    fn eq(&self, other: &Self) -> bool {
        self.settings == other.settings && Arc::ptr_eq(&self.credentials, &other.credentials)
    }
}

impl Eq for ServerSasl {}
