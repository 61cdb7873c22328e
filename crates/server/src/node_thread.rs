//! The thread that owns the node (Raft core + controller + log): one owner, no locks around
//! state (Kafka runs its raft IO thread and controller event thread the same way).
//!
//! Network tasks hand it events over a bounded channel and get answers on oneshot channels; it
//! hands outbound Raft requests to the peer dispatcher and publishes a status snapshot after
//! every change. Disk writes (appends, fsync, `quorum-state`) happen on this thread, in the
//! order the core demands, before any message that depends on them is released.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kraftwerk_node::{Node, NodeInput, NodeOutput, NodeStatus, RequestToken};
use kraftwerk_node::SnapshotDone;
use kraftwerk_controller::{ControllerRequest, ControllerResponse, RequestContext};
use kraftwerk_log::{FileQuorumStateStore, SegmentLog};
use kraftwerk_raft::{
    InboundId, Input, OutboundId, Output, RaftRequest, RaftResponse, SendFailure,
};
use tokio::sync::{mpsc, oneshot, watch};
use tracing::{error, info, warn};

/// The node type the server runs.
pub type ServerNode = Node<SegmentLog, FileQuorumStateStore>;

/// Most events queued for the node thread before callers see "overloaded".
pub const NODE_QUEUE_CAPACITY: usize = 16_384;

/// Something for the node thread to do.
pub enum NodeEvent {
    /// A Raft request from a peer, broker or tool.
    RaftRequest {
        /// Version it came at.
        api_version: i16,
        /// The request.
        request: RaftRequest,
        /// Where the answer goes.
        reply: oneshot::Sender<RaftResponse>,
    },
    /// The answer to a Raft request this node sent.
    RaftResponse {
        /// Id of the request.
        id: OutboundId,
        /// The answer.
        response: RaftResponse,
    },
    /// A Raft request this node sent failed.
    RaftSendFailed {
        /// Id of the request.
        id: OutboundId,
        /// Why.
        failure: SendFailure,
    },
    /// A controller request.
    ControllerRequest {
        /// Request metadata (version, client id, listener).
        ctx: RequestContext,
        /// The request.
        request: ControllerRequest,
        /// Where the answer goes.
        reply: oneshot::Sender<ControllerResponse>,
    },
    /// A snapshot written by a worker thread finished.
    SnapshotDone(SnapshotDone),
    /// Graceful shutdown: resign if leader, then stop.
    Shutdown,
}

/// An outbound Raft request for the peer dispatcher.
#[derive(Debug)]
pub struct OutboundRaft {
    /// Core's id for the request.
    pub id: OutboundId,
    /// Destination node id.
    pub destination: i32,
    /// The request.
    pub request: RaftRequest,
}

/// Handle for submitting events to the node thread.
#[derive(Clone)]
pub struct NodeHandle {
    tx: SyncSender<NodeEvent>,
}

/// The node thread is gone or its queue is full.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The queue is full: the node is overloaded.
    #[error("node queue full")]
    Overloaded,
    /// The node stopped.
    #[error("node stopped")]
    Stopped,
}

impl NodeHandle {
    /// Queues an event without blocking.
    pub fn submit(&self, event: NodeEvent) -> Result<(), SubmitError> {
        self.tx.try_send(event).map_err(|e| match e {
            TrySendError::Full(_) => SubmitError::Overloaded,
            TrySendError::Disconnected(_) => SubmitError::Stopped,
        })
    }
}

/// Creates the channel the node thread reads from.
pub fn channel() -> (NodeHandle, Receiver<NodeEvent>) {
    let (tx, rx) = std::sync::mpsc::sync_channel(NODE_QUEUE_CAPACITY);
    (NodeHandle { tx }, rx)
}

/// How the node thread ended.
#[derive(Debug)]
pub enum NodeExit {
    /// Graceful shutdown completed.
    Clean,
    /// A fatal error (storage failure, broken invariant): the process must exit non-zero.
    Fatal(String),
}

/// Longest a graceful shutdown waits for a successor to take over, in ms.
const SHUTDOWN_GRACE_MS: u64 = 5_000;

/// The node's clock, in ms: the wall-clock time (ms since the Unix epoch) when the clock was
/// started, advanced by a monotonic clock.
///
/// Why both: Kafka stamps record batches (`BaseTimestamp`, `MaxTimestamp`) and DescribeQuorum's
/// `LastFetchTimestamp`/`LastCaughtUpTimestamp` with wall-clock ms (Java's
/// `Time.milliseconds()`), and Java peers read the batch times back: segment rolling by
/// `segment.ms`, snapshot retention by `metadata.max.retention.ms` against the snapshot's
/// `LastContainedLogTimestamp`. The Raft core's timers, on the other hand, need a clock that
/// never goes back, whatever happens to the system clock while the node runs.
#[derive(Clone, Copy, Debug)]
pub struct NodeClock {
    start: Instant,
    wall_start_ms: u64,
}

impl NodeClock {
    /// A clock reading the current wall-clock time now.
    pub fn start() -> NodeClock {
        let wall_start_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_millis() as u64);
        NodeClock {
            start: Instant::now(),
            wall_start_ms,
        }
    }

    /// Current time in ms since the Unix epoch (as of the start), never decreasing.
    pub fn now_ms(&self) -> u64 {
        self.wall_start_ms + self.start.elapsed().as_millis() as u64
    }
}

/// Runs the node until shutdown or a fatal error, on `clock` (the clock the node was created
/// with).
pub fn run(
    mut node: ServerNode,
    self_handle: NodeHandle,
    events: Receiver<NodeEvent>,
    outbound: mpsc::UnboundedSender<OutboundRaft>,
    status: watch::Sender<NodeStatus>,
    clock: NodeClock,
) -> NodeExit {
    let now_ms = || clock.now_ms();
    let mut raft_replies: HashMap<InboundId, oneshot::Sender<RaftResponse>> = HashMap::new();
    let mut controller_replies: HashMap<RequestToken, oneshot::Sender<ControllerResponse>> =
        HashMap::new();
    let mut next_id: u64 = 0;
    let mut shutdown_deadline: Option<u64> = None;
    loop {
        let now = now_ms();
        let deadline = node
            .next_deadline_ms()
            .min(shutdown_deadline.unwrap_or(u64::MAX));
        let wait = Duration::from_millis(deadline.saturating_sub(now).min(1_000));
        let first = match events.recv_timeout(wait) {
            Ok(event) => Some(event),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                info!("every node handle dropped; stopping");
                return NodeExit::Clean;
            }
        };
        // Take what else is queued (bounded), so a burst is handled in one pass.
        let mut batch: Vec<NodeEvent> = first.into_iter().collect();
        while batch.len() < 512 {
            match events.try_recv() {
                Ok(e) => batch.push(e),
                Err(_) => break,
            }
        }
        let now = now_ms();
        let mut result = Ok(());
        // The node reads no clock: time its work here, so that a snapshot load (at most one per
        // pass, after a FetchSnapshot download) gets a duration.
        let started = Instant::now();
        let loaded_before = node.stats().snapshots_loaded;
        for event in batch {
            next_id += 1;
            result = match event {
                NodeEvent::RaftRequest {
                    api_version,
                    request,
                    reply,
                } => {
                    let id = InboundId(next_id);
                    raft_replies.insert(id, reply);
                    node.handle(
                        now,
                        NodeInput::Raft(Input::Request {
                            id,
                            api_version,
                            request,
                        }),
                    )
                }
                NodeEvent::RaftResponse { id, response } => {
                    node.handle(now, NodeInput::Raft(Input::Response { id, response }))
                }
                NodeEvent::RaftSendFailed { id, failure } => {
                    node.handle(now, NodeInput::Raft(Input::SendFailed { id, failure }))
                }
                NodeEvent::ControllerRequest {
                    ctx,
                    request,
                    reply,
                } => {
                    let token = RequestToken(next_id);
                    controller_replies.insert(token, reply);
                    node.handle(
                        now,
                        NodeInput::Controller {
                            token,
                            ctx,
                            request,
                        },
                    )
                }
                NodeEvent::SnapshotDone(done) => node.handle(now, NodeInput::SnapshotDone(done)),
                NodeEvent::Shutdown => {
                    if shutdown_deadline.is_none() {
                        info!("graceful shutdown: resigning leadership if held");
                        shutdown_deadline = Some(now + SHUTDOWN_GRACE_MS);
                        node.begin_shutdown(now)
                    } else {
                        Ok(())
                    }
                }
            };
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            result = node.poll(now);
        }
        if node.stats().snapshots_loaded != loaded_before {
            node.record_snapshot_load_ms(started.elapsed().as_millis() as u64);
        }
        for output in node.take_outputs() {
            match output {
                NodeOutput::Raft(Output::Send {
                    id,
                    destination,
                    request,
                }) => {
                    if outbound
                        .send(OutboundRaft {
                            id,
                            destination,
                            request,
                        })
                        .is_err()
                    {
                        warn!("peer dispatcher stopped");
                    }
                }
                NodeOutput::Raft(Output::Respond { id, response }) => {
                    if let Some(reply) = raft_replies.remove(&id) {
                        let _ = reply.send(response);
                    }
                }
                NodeOutput::Controller { token, response } => {
                    if let Some(reply) = controller_replies.remove(&token) {
                        let _ = reply.send(response);
                    }
                }
                NodeOutput::WriteSnapshot(job) => {
                    // Off this thread: a large snapshot must never stall Raft or the controller.
                    let handle = self_handle.clone();
                    let spawned = std::thread::Builder::new()
                        .name("kraftwerk-snapshot".into())
                        .spawn(move || {
                            let started = Instant::now();
                            let mut done = job.run();
                            done.duration_ms = started.elapsed().as_millis() as u64;
                            // The queue may be full for a moment; the result must not be lost.
                            let mut event = NodeEvent::SnapshotDone(done);
                            loop {
                                match handle.tx.try_send(event) {
                                    Ok(()) => break,
                                    Err(TrySendError::Full(e)) => {
                                        event = e;
                                        std::thread::sleep(Duration::from_millis(10));
                                    }
                                    Err(TrySendError::Disconnected(_)) => break,
                                }
                            }
                        });
                    if let Err(e) = spawned {
                        error!(error = %e, "cannot start the snapshot writer thread");
                    }
                }
            }
        }
        if let Err(e) = result {
            error!(error = %e, "fatal node error; stopping");
            return NodeExit::Fatal(e.to_string());
        }
        let current = node.status();
        status.send_if_modified(|s| {
            if *s != current {
                *s = current;
                true
            } else {
                false
            }
        });
        if let Some(deadline) = shutdown_deadline {
            if node.shutdown_may_complete() || now_ms() >= deadline {
                if !node.shutdown_may_complete() {
                    warn!("shutdown grace period over before a successor acknowledged");
                }
                let (log, _) = node.into_parts();
                if let Err(e) = log.close() {
                    error!(error = %e, "closing the log failed");
                    return NodeExit::Fatal(e.to_string());
                }
                info!("node stopped");
                return NodeExit::Clean;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_clock_reads_wall_clock_ms_and_never_goes_back() {
        let clock = NodeClock::start();
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let a = clock.now_ms();
        assert!(
            a.abs_diff(wall) < 5_000,
            "node clock {a} vs wall clock {wall}"
        );
        std::thread::sleep(Duration::from_millis(5));
        let b = clock.now_ms();
        assert!(b >= a + 5, "{a} then {b}");
    }
}
