//! What a [`crate::Node`] is told and what it asks its driver to do.

use kraftwerk_controller::{ControllerRequest, ControllerResponse, RequestContext};
use kraftwerk_raft::{Input, Output};

use crate::snapshot_job::{SnapshotDone, SnapshotJob};

/// Caller-chosen id of a controller request, echoed with its response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestToken(pub u64);

/// Everything a node can be told.
#[derive(Debug)]
pub enum NodeInput {
    /// A Raft RPC, a response to one, or a send failure.
    Raft(Input),
    /// A controller RPC (already unwrapped from an Envelope, if it came in one).
    Controller {
        /// Echoed in [`NodeOutput::Controller`].
        token: RequestToken,
        /// Request metadata; `now_ms`, `next_offset` and the leader fields are filled by the node.
        ctx: RequestContext,
        /// The request.
        request: ControllerRequest,
    },
    /// A [`SnapshotJob`] the driver ran finished.
    SnapshotDone(SnapshotDone),
}

/// Everything a node asks its driver to do.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // drained at once after every input; boxing buys nothing
pub enum NodeOutput {
    /// A Raft message to deliver.
    Raft(Output),
    /// The answer to a controller request.
    Controller {
        /// Token of the request.
        token: RequestToken,
        /// The response.
        response: ControllerResponse,
    },
    /// Write this snapshot off the node's thread ([`SnapshotJob::run`]) and report the result as
    /// [`NodeInput::SnapshotDone`]. At most one is outstanding.
    WriteSnapshot(SnapshotJob),
}
