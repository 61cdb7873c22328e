//! Sans-I/O KRaft consensus core (KIP-595).
//!
//! Inputs are Raft RPCs, their responses and the clock; outputs are messages to send and
//! notifications (high watermark, leader changes). Storage is reached through the traits in
//! [`storage`]; the core never opens a file or a socket, never reads a clock and never uses a
//! global RNG, so the simulation in `kraftwerk-sim` drives it deterministically.

pub mod storage;
pub mod testing;

pub use storage::{ElectionState, LogAppendInfo, LogError, OffsetAndEpoch, QuorumStateStore, ReplicatedLog};
