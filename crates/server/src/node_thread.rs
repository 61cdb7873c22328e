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

use kraftwerk_controller::{ControllerRequest, ControllerResponse, RequestContext};
use kraftwerk_log::{FileQuorumStateStore, SegmentLog};
use kraftwerk_node::{
    Node, NodeError, NodeInput, NodeOutput, NodeStatus, RequestToken, SnapshotDone, SnapshotJob,
};
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
        /// Who sent it, from where: authorized before the Raft layer sees it.
        principal: kraftwerk_controller::request::Principal,
        /// The sender's address.
        client_address: std::net::IpAddr,
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
    /// Asks the authorizer (the committed image's ACLs) whether `principal` at
    /// `client_address` may do `operation` on the cluster: the Envelope check.
    AuthorizeCluster {
        /// The connection's principal.
        principal: kraftwerk_controller::request::Principal,
        /// The connection's peer.
        client_address: std::net::IpAddr,
        /// The operation.
        operation: kraftwerk_controller::authorizer::AclOperation,
        /// The verdict.
        reply: oneshot::Sender<bool>,
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
    /// Destination node id (negative: a bootstrap server) and the endpoint to connect to.
    pub destination: kraftwerk_raft::Destination,
    /// The request.
    pub request: RaftRequest,
}

/// Handle for submitting events to the node thread.
#[derive(Clone)]
pub struct NodeHandle {
    /// Events with the instant they were queued (for `EventQueueTimeMs`).
    tx: SyncSender<(Instant, NodeEvent)>,
    contacts: SyncSender<BrokerContact>,
    clock: NodeClock,
}

/// A broker heartbeat's arrival, reported apart from the request so that the node thread
/// records it before it runs any timer, whatever is queued ahead of the request (Kafka 4.0
/// updates its `BrokerHeartbeatTracker` outside the controller's event queue, KAFKA-17793).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BrokerContact {
    /// The heartbeat's broker id.
    pub broker_id: i32,
    /// The heartbeat's broker epoch.
    pub broker_epoch: i64,
    /// When it arrived, on the node clock ([`NodeClock::ms_at`]).
    pub arrived_ms: u64,
}

/// What the node thread reads: its events, and the heartbeat arrivals it applies first.
pub struct NodeInbox {
    events: Receiver<(Instant, NodeEvent)>,
    contacts: Receiver<BrokerContact>,
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
    /// Reports a heartbeat's arrival without blocking. When the contacts queue is full the
    /// report is dropped: the request itself, queued next, still counts from its arrival.
    pub fn note_contact(&self, contact: BrokerContact) {
        let _ = self.contacts.try_send(contact);
    }

    /// The node's clock (to stamp arrivals on it).
    pub fn clock(&self) -> NodeClock {
        self.clock
    }

    /// Queues an event without blocking.
    pub fn submit(&self, event: NodeEvent) -> Result<(), SubmitError> {
        self.tx
            .try_send((Instant::now(), event))
            .map_err(|e| match e {
                TrySendError::Full(_) => SubmitError::Overloaded,
                TrySendError::Disconnected(_) => SubmitError::Stopped,
            })
    }
}

/// Creates the channels the node thread reads from; arrivals are stamped on `clock`.
pub fn channel(clock: NodeClock) -> (NodeHandle, NodeInbox) {
    let (tx, events) = std::sync::mpsc::sync_channel(NODE_QUEUE_CAPACITY);
    let (contacts_tx, contacts) = std::sync::mpsc::sync_channel(NODE_QUEUE_CAPACITY);
    let handle = NodeHandle {
        tx,
        contacts: contacts_tx,
        clock,
    };
    (handle, NodeInbox { events, contacts })
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

    /// The clock's reading at `instant` (the start for an instant before it).
    pub fn ms_at(&self, instant: Instant) -> u64 {
        self.wall_start_ms + instant.saturating_duration_since(self.start).as_millis() as u64
    }
}

/// Most events handled in one pass of the node thread.
const MAX_EVENTS_PER_PASS: usize = 512;

/// Longest the node thread sleeps waiting for an event, in ms.
const MAX_WAIT_MS: u64 = 1_000;

/// Runs the node until shutdown or a fatal error, on `clock` (the clock the node was created
/// with).
pub fn run(
    node: ServerNode,
    self_handle: NodeHandle,
    inbox: NodeInbox,
    outbound: mpsc::UnboundedSender<OutboundRaft>,
    status: watch::Sender<NodeStatus>,
    clock: NodeClock,
) -> NodeExit {
    NodeThread {
        node,
        self_handle,
        events: inbox.events,
        contacts: inbox.contacts,
        outbound,
        status,
        clock,
        raft_replies: HashMap::new(),
        controller_replies: HashMap::new(),
        next_id: 0,
        shutdown_deadline: None,
        pass_started: None,
    }
    .run()
}

/// The node thread's state: the node, its channels, and the callers waiting for answers.
struct NodeThread {
    node: ServerNode,
    self_handle: NodeHandle,
    events: Receiver<(Instant, NodeEvent)>,
    contacts: Receiver<BrokerContact>,
    outbound: mpsc::UnboundedSender<OutboundRaft>,
    status: watch::Sender<NodeStatus>,
    clock: NodeClock,
    raft_replies: HashMap<InboundId, oneshot::Sender<RaftResponse>>,
    controller_replies: HashMap<RequestToken, oneshot::Sender<ControllerResponse>>,
    /// Last id given to an inbound Raft request or controller request.
    next_id: u64,
    /// When a graceful shutdown stops waiting for a successor, once one began.
    shutdown_deadline: Option<u64>,
    /// When the current pass began (the last wait for events ended).
    pass_started: Option<Instant>,
}

impl NodeThread {
    /// One pass per batch of events: feed them to the node, deliver its outputs, publish its
    /// status, and stop on a fatal error or a finished shutdown.
    fn run(mut self) -> NodeExit {
        loop {
            let Some(batch) = self.collect_batch() else {
                info!("every node handle dropped; stopping");
                return NodeExit::Clean;
            };
            let result = self.handle_batch(batch);
            for output in self.node.take_outputs() {
                self.deliver(output);
            }
            if let Err(e) = result {
                error!(error = %e, "fatal node error; stopping");
                return NodeExit::Fatal(e.to_string());
            }
            self.publish_status();
            if self.shutdown_due() {
                return self.stop();
            }
        }
    }

    /// Waits for an event until the node's next deadline (or the shutdown deadline), then takes
    /// what else is queued (bounded), so a burst is handled in one pass. Empty when the wait
    /// timed out; `None` when every handle is gone.
    fn collect_batch(&mut self) -> Option<Vec<(Instant, NodeEvent)>> {
        let deadline = self
            .node
            .next_deadline_ms()
            .min(self.shutdown_deadline.unwrap_or(u64::MAX));
        let wait_ms = deadline
            .saturating_sub(self.clock.now_ms())
            .min(MAX_WAIT_MS);
        let waiting = Instant::now();
        let received = self.events.recv_timeout(Duration::from_millis(wait_ms));
        // The pass before this one ended where the wait began: one poll of the thread for
        // `poll-idle-ratio-avg`.
        let idle_ms = waiting.elapsed().as_millis() as u64;
        let busy_ms = self.pass_started.map_or(0, |s| {
            waiting.saturating_duration_since(s).as_millis() as u64
        });
        self.pass_started = Some(Instant::now());
        self.node.record_poll(idle_ms, busy_ms, self.clock.now_ms());
        let mut batch = match received {
            Ok(event) => vec![event],
            Err(RecvTimeoutError::Timeout) => Vec::new(),
            Err(RecvTimeoutError::Disconnected) => return None,
        };
        while batch.len() < MAX_EVENTS_PER_PASS {
            match self.events.try_recv() {
                Ok(e) => batch.push(e),
                Err(_) => break,
            }
        }
        Some(batch)
    }

    /// Feeds `batch` to the node, stopping at the first error, then polls it.
    fn handle_batch(&mut self, batch: Vec<(Instant, NodeEvent)>) -> Result<(), NodeError> {
        let now = self.clock.now_ms();
        // Every heartbeat that arrived by `now` is reported by now: record them before any
        // event or timer runs, so a session never expires for time the heartbeat spent queued
        // behind a slow pass. Bounded by the contacts queue's capacity.
        while let Ok(c) = self.contacts.try_recv() {
            self.node
                .note_broker_contact(c.broker_id, c.broker_epoch, c.arrived_ms);
        }
        // The node reads no clock: time its work here, so that a snapshot load (at most one per
        // pass, after a FetchSnapshot download) gets a duration.
        let started = Instant::now();
        let loaded_before = self.node.stats().snapshots_loaded;
        let mut result = batch.into_iter().try_for_each(|(queued, event)| {
            let event_started = Instant::now();
            let queue_ms = event_started.saturating_duration_since(queued).as_millis() as u64;
            let result = self.feed(now, event);
            let processing_ms = event_started.elapsed().as_millis() as u64;
            self.node.record_event(queue_ms, processing_ms);
            result
        });
        if result.is_ok() {
            result = self.node.poll(now);
        }
        if self.node.stats().snapshots_loaded != loaded_before {
            self.node
                .record_snapshot_load_ms(started.elapsed().as_millis() as u64);
        }
        result
    }

    /// Hands one event to the node, keeping the reply channel of a request under its id.
    fn feed(&mut self, now: u64, event: NodeEvent) -> Result<(), NodeError> {
        self.next_id += 1;
        match event {
            NodeEvent::RaftRequest {
                api_version,
                request,
                principal,
                client_address,
                reply,
            } => {
                let operation = crate::authz::raft_operation(&request);
                if !self.authorize_cluster(&principal, client_address, operation) {
                    let _ = reply.send(crate::authz::raft_refusal(&request, operation));
                    return Ok(());
                }
                let id = InboundId(self.next_id);
                self.raft_replies.insert(id, reply);
                let input = Input::Request {
                    id,
                    api_version,
                    request,
                };
                self.node.handle(now, NodeInput::Raft(input))
            }
            NodeEvent::RaftResponse { id, response } => self
                .node
                .handle(now, NodeInput::Raft(Input::Response { id, response })),
            NodeEvent::RaftSendFailed { id, failure } => self
                .node
                .handle(now, NodeInput::Raft(Input::SendFailed { id, failure })),
            NodeEvent::ControllerRequest {
                ctx,
                request,
                reply,
            } => {
                let token = RequestToken(self.next_id);
                self.controller_replies.insert(token, reply);
                let input = NodeInput::Controller {
                    token,
                    ctx,
                    request,
                };
                self.node.handle(now, input)
            }
            NodeEvent::AuthorizeCluster {
                principal,
                client_address,
                operation,
                reply,
            } => {
                let _ = reply.send(self.authorize_cluster(&principal, client_address, operation));
                Ok(())
            }
            NodeEvent::SnapshotDone(done) => self.node.handle(now, NodeInput::SnapshotDone(done)),
            NodeEvent::Shutdown => self.begin_shutdown(now),
        }
    }

    /// Whether the controller's authorizer allows `operation` on the cluster (always, without
    /// an authorizer).
    fn authorize_cluster(
        &self,
        principal: &kraftwerk_controller::request::Principal,
        client_address: std::net::IpAddr,
        operation: kraftwerk_controller::authorizer::AclOperation,
    ) -> bool {
        self.node.controller().authorize(
            principal,
            Some(client_address),
            operation,
            kraftwerk_controller::authorizer::ResourceType::Cluster,
            kraftwerk_controller::authorizer::CLUSTER_NAME,
        )
    }

    /// The first Shutdown event starts the grace period and resigns leadership; later ones
    /// change nothing.
    fn begin_shutdown(&mut self, now: u64) -> Result<(), NodeError> {
        if self.shutdown_deadline.is_some() {
            return Ok(());
        }
        info!("graceful shutdown: resigning leadership if held");
        self.shutdown_deadline = Some(now + SHUTDOWN_GRACE_MS);
        self.node.begin_shutdown(now)
    }

    /// Sends one output where it goes: a peer, a waiting caller, or a snapshot writer thread.
    fn deliver(&mut self, output: NodeOutput) {
        match output {
            NodeOutput::Raft(Output::Send {
                id,
                destination,
                request,
            }) => {
                let request = OutboundRaft {
                    id,
                    destination,
                    request,
                };
                if self.outbound.send(request).is_err() {
                    warn!("peer dispatcher stopped");
                }
            }
            NodeOutput::Raft(Output::Respond { id, response }) => {
                if let Some(reply) = self.raft_replies.remove(&id) {
                    let _ = reply.send(response);
                }
            }
            NodeOutput::Controller { token, response } => {
                if let Some(reply) = self.controller_replies.remove(&token) {
                    let _ = reply.send(response);
                }
            }
            NodeOutput::WriteSnapshot(job) => self.spawn_snapshot_writer(job),
        }
    }

    /// Writes the snapshot off this thread: a large snapshot must never stall Raft or the
    /// controller. The result comes back as a [`NodeEvent::SnapshotDone`].
    fn spawn_snapshot_writer(&self, job: SnapshotJob) {
        let handle = self.self_handle.clone();
        let spawned = std::thread::Builder::new()
            .name("kraftwerk-snapshot".into())
            .spawn(move || {
                let started = Instant::now();
                let mut done = job.run();
                done.duration_ms = started.elapsed().as_millis() as u64;
                submit_until_accepted(&handle, NodeEvent::SnapshotDone(done));
            });
        if let Err(e) = spawned {
            error!(error = %e, "cannot start the snapshot writer thread");
        }
    }

    /// Publishes the node's status if it changed.
    fn publish_status(&self) {
        let current = self.node.status();
        self.status.send_if_modified(|s| {
            if *s != current {
                *s = current;
                true
            } else {
                false
            }
        });
    }

    /// A graceful shutdown may end: a successor took over, or the grace period is over.
    fn shutdown_due(&self) -> bool {
        self.shutdown_deadline.is_some_and(|deadline| {
            self.node.shutdown_may_complete() || self.clock.now_ms() >= deadline
        })
    }

    /// Ends a graceful shutdown: closes the log.
    fn stop(self) -> NodeExit {
        if !self.node.shutdown_may_complete() {
            warn!("shutdown grace period over before a successor acknowledged");
        }
        let (log, _) = self.node.into_parts();
        if let Err(e) = log.close() {
            error!(error = %e, "closing the log failed");
            return NodeExit::Fatal(e.to_string());
        }
        info!("node stopped");
        NodeExit::Clean
    }
}

/// Queues `event`, retrying while the queue is full (the result of a snapshot must not be
/// lost); gives up only when the node thread is gone.
fn submit_until_accepted(handle: &NodeHandle, event: NodeEvent) {
    let mut queued = (Instant::now(), event);
    loop {
        match handle.tx.try_send(queued) {
            Ok(()) => return,
            Err(TrySendError::Full(e)) => {
                queued = e;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(TrySendError::Disconnected(_)) => return,
        }
    }
}

#[cfg(test)]
mod tests;
