//! kraftwerk: a Kafka KRaft controller.
//!
//! Module map (dependencies point down): [`server`] wires a node together (the thread that owns
//! the Raft core and the controller, listeners, peer connections); [`net`] is the tokio plumbing
//! (listeners, connections, outbound peer client); [`wire`] is Kafka's framing, headers,
//! ApiVersions and Envelope; [`config`] reads `server.properties`; [`cli`] holds the offline
//! commands (`format`, `random-uuid`).

pub mod cli;
pub mod config;
pub mod net;
pub mod server;
pub mod wire;
