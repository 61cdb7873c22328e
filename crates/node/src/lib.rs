//! One kraftwerk controller node without I/O: the Raft core (`kraftwerk-raft`) and the
//! controller state machine (`kraftwerk-controller`) glued together, as Kafka's
//! `QuorumController` and its `RaftClient.Listener` are.
//!
//! What the glue does after every input ([`Node::handle`], [`Node::poll`]):
//! 1. replays every newly committed batch into the controller (standbys and leader alike), so a
//!    standby's image is always warm ([`mod@replay`]);
//! 2. activates the controller once this node leads and has replayed everything up to and
//!    including its epoch's LeaderChange record (Kafka fires `handleLeaderChange` at the same
//!    point), and deactivates it as soon as leadership is lost;
//! 3. turns controller results into Raft appends, replayed speculatively right after the
//!    append, through one write path ([`mod@write`]), and lets the controller's timers run
//!    (bootstrap, session fencing, NoOpRecord);
//! 4. answers a request only once its records are committed and replayed — or with the
//!    request's NOT_CONTROLLER answer if leadership was lost first ([`mod@requests`]);
//! 5. writes snapshots of the committed image off its thread and loads the ones the leader
//!    sends ([`mod@snapshots`]).
//!
//! Everything is deterministic given the inputs and `now_ms`: the node reads no clock, so the
//! simulation drives it and the server's driver thread measures durations.

mod error;
mod kraft_upgrade;
mod messages;
mod node;
mod replay;
mod requests;
pub mod sensors;
pub mod served_apis;
pub mod snapshot_codec;
mod snapshot_job;
mod snapshots;
mod status;
#[cfg(test)]
mod tests;
mod tracking;
mod voter_changes;
mod write;

pub use error::NodeError;
pub use messages::{NodeInput, NodeOutput, RequestToken};
pub use node::Node;
pub use snapshot_codec::{decode_snapshot, encode_snapshot, SnapshotReadError};
pub use snapshot_job::{SnapshotDone, SnapshotJob};
pub use snapshots::SnapshotPolicy;
pub use status::{
    BrokerMetrics, DelegationTokens, ImageCounts, NodeStats, NodeStatus, ReplicaLag,
    ScramCredentials,
};
