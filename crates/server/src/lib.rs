//! The async part of a kraftwerk controller: the tokio listener and connections ([`net`]), the
//! thread that owns the node ([`node_thread`]), outbound peer clients, KIP-919 controller
//! registration, the `/metrics` endpoint, and [`Server`], which wires them together.
//!
//! Everything below this crate (`kraftwerk-node`, `-controller`, `-log`, `-raft`, `-records`,
//! `-protocol`) is synchronous and free of sockets; this crate is where I/O and time come in.

pub mod api;
mod authz;
mod handler;
pub mod metrics;
pub mod net;
pub mod node_thread;
mod peers;
pub mod registration;
pub mod resources;
mod server;

pub use net::sasl::{ClientSasl, ListenerSasl};
pub use server::{ListenerSettings, ListenerTls, Server, ServerConfig, ServerError};
