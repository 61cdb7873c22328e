//! Sans-I/O KRaft consensus core (KIP-595).
//!
//! Inputs are Raft RPCs, their responses and the clock; outputs are messages to send. Storage is
//! reached through the traits in [`storage`]; the core never opens a file or a socket, never
//! reads a clock and never uses a global RNG, so the simulation in `kraftwerk-sim` drives it
//! deterministically. Start at [`RaftCore`].

pub mod config;
pub mod control_state;
mod core;
pub mod errors;
pub mod io;
mod leader;
pub mod quorum;
mod requests;
pub mod role;
pub mod storage;
pub mod testing;
pub mod voters;

pub use crate::core::{
    batch_fits, AppendError, KraftUpgradeError, LeaderAndEpoch, RaftCore, RaftError, RaftMetrics,
    VoterChangeAnswer, CAUGHT_UP_WINDOW_MS,
};
pub use config::{Endpoint, RaftConfig};
pub use io::{
    Destination, InboundId, Input, OutboundId, Output, RaftRequest, RaftResponse, SendFailure,
    RAFT_APIS,
};
pub use leader::ReplicaProgress;
pub use role::RoleKind;
pub use storage::{
    ElectionState, LogAppendInfo, LogError, OffsetAndEpoch, QuorumStateStore, ReplicatedLog,
    SnapshotSink,
};
pub use voters::{ReplicaKey, VoterNode, VoterSet};
