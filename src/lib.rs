//! kraftwerk: a Kafka KRaft controller. This crate is the `kraftwerk` binary's: [`config`]
//! reads `server.properties` (Kafka's own keys) and builds the configurations of the layers
//! below; [`cli`] holds the commands (`run`'s arguments, `format`, `info`, `random-uuid`,
//! `version`); [`logging`] sets up the log output. The node itself lives in
//! `kraftwerk-server` (async: listeners, peers, node thread) over `kraftwerk-node` (Raft core +
//! controller, no I/O).

pub mod cli;
pub mod config;
pub mod logging;
