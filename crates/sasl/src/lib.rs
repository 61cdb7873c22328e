//! Sans-I/O SASL for Kafka's listeners: the PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802,
//! RFC 7677) mechanisms, server side (`SaslServerAuthenticator` with `PlainSaslServer` /
//! `ScramSaslServer`) and client side (`PlainSaslClient`-like / `ScramSaslClient`), and the
//! `sasl.jaas.config` parser (`JaasConfig`). No I/O: callers feed SaslAuthenticate `auth_bytes`
//! and send what comes back.

mod client;
mod error;
pub mod jaas;
mod mechanism;
mod messages;
mod scram;
mod server;
mod token;

pub use client::ClientExchange;
pub use error::AuthError;
pub use mechanism::Mechanism;
pub use scram::{
    credential_from_password, credential_from_salted, salted_password, scram_keys, CredentialStore,
    ScramCredential, MAX_ITERATIONS, MIN_ITERATIONS,
};
pub use server::{ServerExchange, ServerStep, MAX_MESSAGE_SIZE};
pub use token::{token_credential, token_hmac, token_password, StoredToken};

#[cfg(test)]
mod tests {
    /// The connection code moves exchanges into tokio tasks and holds them across awaits
    /// behind `&self`.
    #[test]
    fn exchanges_are_send() {
        fn send<T: Send>() {}
        fn sync<T: Sync>() {}
        sync::<crate::ServerExchange>();
        send::<crate::ServerExchange>();
        send::<crate::ClientExchange>();
        send::<crate::AuthError>();
    }
}
