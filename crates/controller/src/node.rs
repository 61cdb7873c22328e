//! [`Node`]: one controller node without I/O — the Raft core and the controller state machine
//! glued together (Kafka's `QuorumController` + its `RaftClient.Listener`).
//!
//! What the glue does after every input:
//! 1. replays every newly committed batch into the controller (standbys and leader alike), so a
//!    standby's image is always warm;
//! 2. activates the controller once this node leads and has replayed everything up to and
//!    including its epoch's LeaderChange record (Kafka fires `handleLeaderChange` at the same
//!    point), and deactivates it as soon as leadership is lost;
//! 3. turns controller results into Raft appends (records framed as `ApiMessageAndVersion`,
//!    replayed speculatively right after the append) and lets the controller's timers run
//!    (bootstrap, session fencing, NoOpRecord);
//! 4. answers a request only once its records are committed and replayed — or with
//!    NOT_CONTROLLER if leadership was lost first.
//!
//! Everything is deterministic given the inputs and `now_ms`, so the simulation drives it.

use std::collections::VecDeque;

use bytes::Bytes;
use kraftwerk_raft::{
    AppendError, Input, LeaderAndEpoch, OffsetAndEpoch, Output, QuorumStateStore, RaftCore,
    RaftError, RaftMetrics, ReplicatedLog, RoleKind,
};
use kraftwerk_records::batch::{batches, decode_records, MAX_BATCH_BYTES};
use kraftwerk_records::metadata::ApiMessageAndVersion;
use tracing::{info, warn};

use crate::controller::{
    Controller, ControllerRequest, ControllerResponse, ControllerResult, RequestContext,
    MAX_RECORDS_PER_BATCH,
};
use crate::error::ReplayError;
use crate::request::{AdminRequest, AdminResponse};
use crate::snapshot::{decode_snapshot, SnapshotDone, SnapshotJob, SnapshotReadError};

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
    /// Write this snapshot off the node's thread (`SnapshotJob::run`) and report the result as
    /// [`NodeInput::SnapshotDone`]. At most one is outstanding.
    WriteSnapshot(SnapshotJob),
}

/// When to write a snapshot of the committed image (Kafka `SnapshotGenerator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotPolicy {
    /// `metadata.log.max.record.bytes.between.snapshots` (20 MiB): bytes of committed batches
    /// since the last snapshot that trigger a new one.
    pub max_bytes_between_snapshots: u64,
    /// `metadata.log.max.snapshot.interval.ms` (1 h): a snapshot is written this long after the
    /// last one if anything was committed since; 0 disables the time trigger.
    pub max_interval_ms: u64,
    /// How often the log's retention runs (Kafka: every 60 s).
    pub clean_interval_ms: u64,
}

impl Default for SnapshotPolicy {
    fn default() -> Self {
        Self {
            max_bytes_between_snapshots: 20 * 1024 * 1024,
            max_interval_ms: 3_600_000,
            clean_interval_ms: 60_000,
        }
    }
}

/// A fatal node failure: the process must stop.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// Raft or storage failure.
    #[error(transparent)]
    Raft(#[from] RaftError),
    /// A committed or appended record could not be applied.
    #[error("replay failed at offset {offset}: {source}")]
    Replay {
        /// Offset of the batch being replayed.
        offset: i64,
        /// Why.
        #[source]
        source: ReplayError,
    },
    /// A committed batch could not be decoded (Java nodes stop on this too).
    #[error("undecodable committed batch at offset {offset}: {reason}")]
    Decode {
        /// Base offset of the batch.
        offset: i64,
        /// Why.
        reason: String,
    },
    /// The log returned nothing where committed data must be.
    #[error("committed offset {offset} is missing from the log")]
    MissingCommittedData {
        /// The offset.
        offset: i64,
    },
    /// A snapshot could not be loaded.
    #[error(transparent)]
    Snapshot(#[from] SnapshotReadError),
}

#[derive(Debug)]
struct Pending {
    /// Exclusive offset that must be committed and replayed before answering.
    wait_offset: i64,
    token: RequestToken,
    response: ControllerResponse,
    /// The request had records of its own (else it only waited for earlier writes).
    wrote: bool,
    request_kind: &'static str,
}

/// A snapshot of the node's state for metrics and ApiVersions.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeStatus {
    /// Raft role.
    pub role: RoleKind,
    /// Leader and epoch.
    pub leader: LeaderAndEpoch,
    /// High watermark, if known.
    pub high_watermark: Option<i64>,
    /// Log end offset.
    pub log_end_offset: i64,
    /// Next offset to replay (everything below is in the committed image).
    pub replayed_end_offset: i64,
    /// True if the controller is active.
    pub active: bool,
    /// Finalized feature levels: metadata.version first (if bootstrapped), then the others > 0.
    pub finalized_features: Vec<(String, i16)>,
    /// Log start offset.
    pub log_start_offset: i64,
    /// Complete snapshots on disk.
    pub snapshot_count: usize,
    /// Latest snapshot on disk.
    pub latest_snapshot: Option<OffsetAndEpoch>,
    /// Raft counters and timings.
    pub raft: RaftMetrics,
    /// Node counters (snapshots, activations).
    pub stats: NodeStats,
    /// The leader's view of each replica (empty unless leader): lag in offsets and ms.
    pub replicas: Vec<ReplicaLag>,
}

/// One replica as the leader sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaLag {
    /// Node id (a voter or an observer such as a broker).
    pub id: i32,
    /// True for voters.
    pub is_voter: bool,
    /// Its log end offset (its last Fetch offset), if it fetched.
    pub log_end_offset: Option<i64>,
    /// Leader LEO minus its LEO (offsets), if known.
    pub lag_offsets: Option<i64>,
    /// Node time of its last Fetch, ms.
    pub last_fetch_ms: Option<u64>,
    /// Node time it was last caught up, ms.
    pub last_caught_up_ms: Option<u64>,
}

/// One controller node: Raft core + controller. `L` is the metadata log, `Q` the quorum-state
/// store.
pub struct Node<L, Q> {
    raft: RaftCore<L, Q>,
    controller: Controller,
    /// Next offset whose batch is replayed into the committed image.
    replayed_end_offset: i64,
    pending: VecDeque<Pending>,
    outputs: Vec<NodeOutput>,
    /// Epoch the controller was activated in.
    active_epoch: Option<i32>,
    snapshot_policy: SnapshotPolicy,
    /// Bytes of committed batches replayed since the last snapshot (or load).
    bytes_since_snapshot: u64,
    /// When the last snapshot was written or loaded (node time, ms).
    last_snapshot_ms: u64,
    /// Epoch and append time (ms since the epoch) of the last replayed batch.
    last_replayed_batch: Option<(i32, i64)>,
    /// Id of the snapshot being written, if any.
    snapshot_in_progress: Option<OffsetAndEpoch>,
    next_clean_ms: u64,
    /// Latest snapshot written or loaded.
    latest_snapshot: Option<OffsetAndEpoch>,
    /// Counters for metrics.
    stats: NodeStats,
}

/// Counters for the metrics endpoint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeStats {
    /// Snapshots this node wrote.
    pub snapshots_written: u64,
    /// Size of the latest snapshot written, bytes.
    pub last_snapshot_bytes: u64,
    /// Time to write the latest snapshot, ms.
    pub last_snapshot_write_ms: u64,
    /// Snapshots loaded (at start or fetched from the leader).
    pub snapshots_loaded: u64,
    /// Time to load the latest loaded snapshot, ms (node time).
    pub last_snapshot_load_ms: u64,
    /// Controller activations (elections won and served).
    pub activations: u64,
}

impl<L: ReplicatedLog, Q: QuorumStateStore> Node<L, Q> {
    /// Wraps a started Raft core and a fresh (standby) controller, loading the latest snapshot
    /// (if any) so only the log tail after it needs replaying.
    pub fn new(raft: RaftCore<L, Q>, controller: Controller) -> Result<Self, NodeError> {
        Self::with_snapshot_policy(raft, controller, SnapshotPolicy::default(), 0)
    }

    /// [`Node::new`] with an explicit snapshot policy; `now_ms` is the node's clock at start.
    pub fn with_snapshot_policy(
        raft: RaftCore<L, Q>,
        controller: Controller,
        snapshot_policy: SnapshotPolicy,
        now_ms: u64,
    ) -> Result<Self, NodeError> {
        let replayed_end_offset = raft.log().start_offset();
        let mut node = Self {
            raft,
            controller,
            replayed_end_offset,
            pending: VecDeque::new(),
            outputs: Vec::new(),
            active_epoch: None,
            snapshot_policy,
            bytes_since_snapshot: 0,
            last_snapshot_ms: now_ms,
            last_replayed_batch: None,
            snapshot_in_progress: None,
            next_clean_ms: now_ms + snapshot_policy.clean_interval_ms,
            latest_snapshot: None,
            stats: NodeStats::default(),
        };
        if let Some(id) = node.raft.log().latest_snapshot_id() {
            node.load_snapshot(id, now_ms)?;
        } else if node.replayed_end_offset > 0 {
            return Err(NodeError::MissingCommittedData { offset: 0 });
        }
        Ok(node)
    }

    /// Loads snapshot `id` into the controller; replay continues at its end offset.
    fn load_snapshot(&mut self, id: OffsetAndEpoch, now_ms: u64) -> Result<(), NodeError> {
        let started = std::time::Instant::now();
        let log = self.raft.log();
        let size = log.snapshot_size_bytes(id).map_err(RaftError::from)?;
        let mut bytes = Vec::with_capacity(size as usize);
        while (bytes.len() as u64) < size {
            let chunk = log
                .read_snapshot(id, bytes.len() as u64, MAX_BATCH_BYTES)
                .map_err(RaftError::from)?;
            if chunk.is_empty() {
                break;
            }
            bytes.extend_from_slice(&chunk);
        }
        let records = decode_snapshot(id, &bytes)?;
        if self.controller.is_active() {
            self.deactivate();
        }
        self.controller
            .load_snapshot(&records, id.offset - 1)
            .map_err(|source| NodeError::Replay {
                offset: id.offset - 1,
                source,
            })?;
        self.replayed_end_offset = id.offset;
        self.bytes_since_snapshot = 0;
        self.last_snapshot_ms = now_ms;
        self.last_replayed_batch = Some((id.epoch, 0));
        self.latest_snapshot = Some(id);
        self.stats.snapshots_loaded += 1;
        self.stats.last_snapshot_load_ms = started.elapsed().as_millis() as u64;
        info!(
            offset = id.offset,
            epoch = id.epoch,
            size_bytes = size,
            records = records.len(),
            load_ms = self.stats.last_snapshot_load_ms,
            "loaded snapshot; replaying the log from offset {}",
            id.offset
        );
        Ok(())
    }

    /// Counters for metrics.
    pub fn stats(&self) -> &NodeStats {
        &self.stats
    }

    /// Latest snapshot written or loaded by this node.
    pub fn latest_snapshot(&self) -> Option<OffsetAndEpoch> {
        self.latest_snapshot
    }

    /// The Raft core.
    pub fn raft(&self) -> &RaftCore<L, Q> {
        &self.raft
    }

    /// The controller state machine.
    pub fn controller(&self) -> &Controller {
        &self.controller
    }

    /// Stops the node and returns its storage (used by the simulation to crash nodes).
    pub fn into_parts(self) -> (L, Q) {
        self.raft.into_parts()
    }

    /// Offset up to which committed records are in the controller's image (exclusive).
    pub fn replayed_end_offset(&self) -> i64 {
        self.replayed_end_offset
    }

    /// Current state for metrics, ApiVersions finalized features and tests.
    pub fn status(&self) -> NodeStatus {
        let leo = self.raft.log().end_offset().offset;
        let snapshots = self.raft.log().snapshot_ids();
        NodeStatus {
            log_start_offset: self.raft.log().start_offset(),
            snapshot_count: snapshots.len(),
            latest_snapshot: snapshots.last().copied(),
            raft: self.raft.metrics().clone(),
            stats: self.stats.clone(),
            replicas: self
                .raft
                .replica_states()
                .into_iter()
                .map(|(id, is_voter, p)| ReplicaLag {
                    id,
                    is_voter,
                    log_end_offset: p.end_offset,
                    lag_offsets: p.end_offset.map(|e| leo - e),
                    last_fetch_ms: p.last_fetch_ms,
                    last_caught_up_ms: p.last_caught_up_ms,
                })
                .collect(),
            role: self.raft.role(),
            leader: self.raft.leader_and_epoch(),
            high_watermark: self.raft.high_watermark(),
            log_end_offset: self.raft.log().end_offset().offset,
            replayed_end_offset: self.replayed_end_offset,
            active: self.controller.is_active(),
            finalized_features: {
                let features = &self.controller.image().features;
                features
                    .metadata_version()
                    .map(|mv| {
                        (
                            kraftwerk_records::metadata_version::METADATA_VERSION_FEATURE_NAME
                                .to_owned(),
                            mv.feature_level(),
                        )
                    })
                    .into_iter()
                    .chain(features.finalized().map(|(n, l)| (n.clone(), *l)))
                    .collect()
            },
        }
    }

    /// Messages and responses to deliver, in order.
    pub fn take_outputs(&mut self) -> Vec<NodeOutput> {
        let mut out: Vec<NodeOutput> = self
            .raft
            .take_outputs()
            .into_iter()
            .map(NodeOutput::Raft)
            .collect();
        out.append(&mut self.outputs);
        out
    }

    /// Earliest time [`poll`](Self::poll) has work to do, in ms.
    pub fn next_deadline_ms(&self) -> u64 {
        let c = if self.controller.is_active() {
            self.controller.next_deadline_ms()
        } else {
            None
        };
        let snapshot = (self.bytes_since_snapshot > 0 && self.snapshot_policy.max_interval_ms > 0)
            .then(|| self.last_snapshot_ms + self.snapshot_policy.max_interval_ms);
        self.raft
            .next_deadline_ms()
            .min(c.unwrap_or(u64::MAX))
            .min(snapshot.unwrap_or(u64::MAX))
            .min(self.next_clean_ms)
    }

    /// Handles one input at `now_ms`.
    pub fn handle(&mut self, now_ms: u64, input: NodeInput) -> Result<(), NodeError> {
        match input {
            NodeInput::Raft(input) => self.raft.handle(now_ms, input)?,
            NodeInput::Controller {
                token,
                ctx,
                request,
            } => self.handle_controller_request(now_ms, token, ctx, request)?,
            NodeInput::SnapshotDone(done) => self.on_snapshot_done(now_ms, done)?,
        }
        self.settle(now_ms)
    }

    /// Runs timers.
    pub fn poll(&mut self, now_ms: u64) -> Result<(), NodeError> {
        self.raft.poll(now_ms)?;
        self.settle(now_ms)
    }

    /// Graceful shutdown: the leader resigns (EndQuorumEpoch to the other voters); the node
    /// then stays out of elections. Pending requests get NOT_CONTROLLER.
    pub fn begin_shutdown(&mut self, now_ms: u64) -> Result<(), NodeError> {
        self.raft.resign(now_ms, true)?;
        self.settle(now_ms)
    }

    /// True when a graceful shutdown may stop the process (see `RaftCore::shutdown_may_complete`).
    pub fn shutdown_may_complete(&self) -> bool {
        self.raft.shutdown_may_complete()
    }

    fn fill_context(&self, now_ms: u64, mut ctx: RequestContext) -> RequestContext {
        let leader = self.raft.leader_and_epoch();
        ctx.now_ms = now_ms;
        ctx.next_offset = self.raft.next_offset().unwrap_or(-1);
        ctx.leader_id = leader.leader_id.unwrap_or(-1);
        ctx.leader_epoch = leader.epoch;
        ctx
    }

    fn handle_controller_request(
        &mut self,
        now_ms: u64,
        token: RequestToken,
        ctx: RequestContext,
        request: ControllerRequest,
    ) -> Result<(), NodeError> {
        let ctx = self.fill_context(now_ms, ctx);
        if self.controller.is_active() && !self.raft.is_leader() {
            // An append just failed because leadership was lost: stop before computing more.
            self.deactivate();
        }
        if !self.controller.is_active() {
            // DescribeCluster is answered by any controller from its committed image.
            let response = match &request {
                ControllerRequest::DescribeCluster(r) => {
                    ControllerResponse::DescribeCluster(self.controller.describe_cluster(&ctx, r))
                }
                // Reads and refusals any controller answers itself (DescribeConfigs,
                // ListPartitionReassignments, ACLs, Raft voter changes, ...).
                ControllerRequest::Admin(r) if r.is_answered_locally(&ctx) => {
                    ControllerResponse::Admin(self.controller.answer_locally(&ctx, r))
                }
                other => Controller::not_controller_response(other),
            };
            self.outputs
                .push(NodeOutput::Controller { token, response });
            return Ok(());
        }
        let kind = request_kind(&request);
        let summary = summarize(&request);
        let result = self.controller.handle(&ctx, request);
        if !result.records.is_empty() {
            info!(
                request = kind,
                client_id = ctx.client_id.as_deref().unwrap_or(""),
                records = result.records.len(),
                "{summary}"
            );
        }
        self.write(now_ms, result, Some((token, kind)))
    }

    /// Appends a controller result and replays it speculatively; queues the response until the
    /// records commit.
    fn write(
        &mut self,
        now_ms: u64,
        result: ControllerResult<ControllerResponse>,
        token: Option<(RequestToken, &'static str)>,
    ) -> Result<(), NodeError> {
        let _epoch = self.active_epoch.unwrap_or(-1);
        let ControllerResult {
            records,
            atomic,
            response,
        } = result;
        if records.is_empty() {
            if let Some((token, kind)) = token {
                let wait_offset = self.raft.next_offset().unwrap_or(self.replayed_end_offset);
                self.pending.push_back(Pending {
                    wait_offset,
                    token,
                    response,
                    wrote: false,
                    request_kind: kind,
                });
            }
            return Ok(());
        }
        let chunk = if atomic {
            records.len()
        } else {
            MAX_RECORDS_PER_BATCH
        };
        let mut last_offset = -1;
        for part in records.chunks(chunk.max(1)) {
            let values: Vec<Bytes> = part
                .iter()
                .map(|r| {
                    r.encode().unwrap_or_else(|e| {
                        panic!("controller produced an unencodable record {r:?}: {e}")
                    })
                })
                .collect();
            let first = match self.raft.append(now_ms, values) {
                Ok(first) => first,
                Err(AppendError::NotLeader) => {
                    if let Some((token, _)) = token {
                        let response = self.not_controller_for(&response);
                        self.outputs
                            .push(NodeOutput::Controller { token, response });
                    }
                    return Ok(());
                }
                Err(e @ AppendError::TooLarge { .. }) => {
                    // The controller bounds atomic results; reaching this is a bug in it.
                    panic!("controller result does not fit a batch: {e}");
                }
            };
            let with_offsets: Vec<(i64, ApiMessageAndVersion)> = part
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, r)| (first + i as i64, r))
                .collect();
            last_offset = first + part.len() as i64 - 1;
            self.controller
                .replay_uncommitted(&with_offsets)
                .map_err(|source| NodeError::Replay {
                    offset: first,
                    source,
                })?;
        }
        if let Some((token, kind)) = token {
            self.pending.push_back(Pending {
                wait_offset: last_offset + 1,
                token,
                response,
                wrote: true,
                request_kind: kind,
            });
        }
        Ok(())
    }

    fn on_snapshot_done(&mut self, now_ms: u64, done: SnapshotDone) -> Result<(), NodeError> {
        if self.snapshot_in_progress != Some(done.id) {
            warn!(id = ?done.id, "unexpected snapshot completion");
            return Ok(());
        }
        self.snapshot_in_progress = None;
        match done.result {
            Ok(_)
                if self
                    .latest_snapshot
                    .is_some_and(|l| l.offset >= done.id.offset) =>
            {
                // A newer snapshot arrived from the leader meanwhile (and truncating to it
                // removed older ones): this one is superseded.
                info!(id = ?done.id, latest = ?self.latest_snapshot, "snapshot superseded before it was registered");
            }
            Ok(size) => {
                match self.raft.register_snapshot(done.id) {
                    Ok(()) => {}
                    Err(RaftError::Storage(kraftwerk_raft::LogError::SnapshotNotFound {
                        ..
                    })) => {
                        warn!(id = ?done.id, "written snapshot vanished before registration (log truncated meanwhile)");
                        return Ok(());
                    }
                    Err(e) => return Err(e.into()),
                }
                self.latest_snapshot = Some(done.id);
                self.stats.snapshots_written += 1;
                self.stats.last_snapshot_bytes = size;
                self.stats.last_snapshot_write_ms = done.duration_ms;
                info!(
                    offset = done.id.offset,
                    epoch = done.id.epoch,
                    size_bytes = size,
                    records = done.records,
                    write_ms = done.duration_ms,
                    "snapshot written"
                );
                self.raft.maybe_clean_log(now_ms)?;
            }
            Err(e) => {
                // Writing a snapshot is an optimisation: the log still holds everything. Retry
                // at the next trigger.
                warn!(id = ?done.id, error = %e, "writing a snapshot failed");
            }
        }
        Ok(())
    }

    /// Starts a snapshot of the committed image when the policy says so (never while a metadata
    /// transaction is open: a snapshot must not split one, case C08).
    fn maybe_snapshot(&mut self, now_ms: u64) -> Result<(), NodeError> {
        if self.snapshot_in_progress.is_some() || self.bytes_since_snapshot == 0 {
            return Ok(());
        }
        let by_bytes =
            self.bytes_since_snapshot >= self.snapshot_policy.max_bytes_between_snapshots;
        let by_time = self.snapshot_policy.max_interval_ms > 0
            && now_ms.saturating_sub(self.last_snapshot_ms) >= self.snapshot_policy.max_interval_ms;
        if !(by_bytes || by_time) || self.controller.image().transaction.is_some() {
            return Ok(());
        }
        let Some((epoch, last_timestamp_ms)) = self.last_replayed_batch else {
            return Ok(());
        };
        let id = OffsetAndEpoch::new(self.replayed_end_offset, epoch);
        if self.latest_snapshot.is_some_and(|s| s.offset >= id.offset) {
            return Ok(());
        }
        let sink = self.raft.create_snapshot(id)?;
        info!(
            offset = id.offset,
            epoch,
            bytes_since_snapshot = self.bytes_since_snapshot,
            "starting a snapshot"
        );
        self.snapshot_in_progress = Some(id);
        self.bytes_since_snapshot = 0;
        self.last_snapshot_ms = now_ms;
        self.outputs.push(NodeOutput::WriteSnapshot(SnapshotJob {
            id,
            image: self.controller.image().clone(),
            sink,
            last_contained_timestamp_ms: last_timestamp_ms,
            now_ms: last_timestamp_ms,
        }));
        Ok(())
    }

    fn not_controller_for(&self, response: &ControllerResponse) -> ControllerResponse {
        not_controller_like(response)
    }

    /// Brings the controller in line with Raft after any change.
    fn settle(&mut self, now_ms: u64) -> Result<(), NodeError> {
        loop {
            if let Some(id) = self.raft.take_snapshot_installed() {
                self.load_snapshot(id, now_ms)?;
            }
            self.replay_committed()?;
            self.maybe_snapshot(now_ms)?;
            if now_ms >= self.next_clean_ms {
                self.next_clean_ms = now_ms + self.snapshot_policy.clean_interval_ms;
                self.raft.maybe_clean_log(now_ms)?;
            }
            let leader = self.raft.is_leader();
            if self.controller.is_active()
                && (!leader || self.active_epoch != Some(self.raft.epoch()))
            {
                self.deactivate();
            }
            if leader && !self.controller.is_active() {
                let start = self
                    .raft
                    .epoch_start_offset()
                    .expect("leader has an epoch start");
                if self.replayed_end_offset > start {
                    let epoch = self.raft.epoch();
                    info!(
                        epoch,
                        epoch_start_offset = start,
                        replayed = self.replayed_end_offset,
                        "activating the controller"
                    );
                    self.controller.activate(epoch, now_ms);
                    self.active_epoch = Some(epoch);
                    self.stats.activations += 1;
                }
            }
            let mut wrote = false;
            if self.controller.is_active() {
                while let Some(next) = self.raft.next_offset() {
                    let Some(result) = self.controller.poll(now_ms, next) else {
                        break;
                    };
                    let result = ControllerResult {
                        records: result.records,
                        atomic: result.atomic,
                        response: (),
                    };
                    self.write_internal(now_ms, result)?;
                    wrote = true;
                    if !self.raft.is_leader() {
                        break;
                    }
                }
            }
            self.release_pending();
            // A write with linger 0 may have committed at once (single voter): go around again.
            if !wrote || self.raft.high_watermark().unwrap_or(0) <= self.replayed_end_offset {
                return Ok(());
            }
        }
    }

    fn write_internal(
        &mut self,
        now_ms: u64,
        result: ControllerResult<()>,
    ) -> Result<(), NodeError> {
        let chunk = if result.atomic {
            result.records.len()
        } else {
            MAX_RECORDS_PER_BATCH
        };
        for part in result.records.chunks(chunk.max(1)) {
            let values: Vec<Bytes> = part
                .iter()
                .map(|r| {
                    r.encode().unwrap_or_else(|e| {
                        panic!("controller produced an unencodable record {r:?}: {e}")
                    })
                })
                .collect();
            let first = match self.raft.append(now_ms, values) {
                Ok(first) => first,
                Err(AppendError::NotLeader) => return Ok(()),
                Err(e) => panic!("internal controller write does not fit a batch: {e}"),
            };
            let with_offsets: Vec<(i64, ApiMessageAndVersion)> = part
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, r)| (first + i as i64, r))
                .collect();
            self.controller
                .replay_uncommitted(&with_offsets)
                .map_err(|source| NodeError::Replay {
                    offset: first,
                    source,
                })?;
        }
        Ok(())
    }

    fn deactivate(&mut self) {
        info!(epoch = ?self.active_epoch, "deactivating the controller: no longer the raft leader");
        self.controller.deactivate();
        self.active_epoch = None;
        // Answer what already committed; everything else gets NOT_CONTROLLER so brokers retry
        // against the new leader.
        self.release_pending();
        while let Some(p) = self.pending.pop_front() {
            let response = self.not_controller_for(&p.response);
            if p.wrote {
                warn!(
                    request = p.request_kind,
                    wait_offset = p.wait_offset,
                    "request's records were not committed before leadership was lost"
                );
            }
            self.outputs.push(NodeOutput::Controller {
                token: p.token,
                response,
            });
        }
    }

    fn release_pending(&mut self) {
        while let Some(p) = self.pending.front() {
            if p.wait_offset > self.replayed_end_offset {
                break;
            }
            let p = self.pending.pop_front().expect("front exists");
            self.outputs.push(NodeOutput::Controller {
                token: p.token,
                response: p.response,
            });
        }
    }

    /// Replays committed batches below the high watermark that were not replayed yet.
    fn replay_committed(&mut self) -> Result<(), NodeError> {
        let Some(hw) = self.raft.high_watermark() else {
            return Ok(());
        };
        while self.replayed_end_offset < hw {
            let offset = self.replayed_end_offset;
            let bytes = self
                .raft
                .log()
                .read(offset, MAX_BATCH_BYTES)
                .map_err(RaftError::from)?;
            if bytes.is_empty() {
                return Err(NodeError::MissingCommittedData { offset });
            }
            let mut progressed = false;
            for item in batches(&bytes) {
                let (header, batch) = item.map_err(|e| NodeError::Decode {
                    offset,
                    reason: e.to_string(),
                })?;
                if header.base_offset >= hw {
                    break;
                }
                if header.next_offset() > hw {
                    // The high watermark always sits on a batch boundary; a batch straddling it
                    // would mean a broken log.
                    return Err(NodeError::Decode {
                        offset: header.base_offset,
                        reason: format!(
                            "batch ends at {} beyond the high watermark {hw}",
                            header.next_offset()
                        ),
                    });
                }
                if header.next_offset() <= self.replayed_end_offset {
                    continue;
                }
                if !header.is_control() {
                    let records = decode_records(batch).map_err(|e| NodeError::Decode {
                        offset: header.base_offset,
                        reason: e.to_string(),
                    })?;
                    let mut decoded = Vec::with_capacity(records.len());
                    for r in records {
                        let value = r.value.unwrap_or_default();
                        let record = ApiMessageAndVersion::decode(&value).map_err(|e| {
                            NodeError::Decode {
                                offset: r.offset,
                                reason: e.to_string(),
                            }
                        })?;
                        decoded.push((r.offset, record));
                    }
                    self.controller
                        .replay_committed(&decoded)
                        .map_err(|source| NodeError::Replay {
                            offset: header.base_offset,
                            source,
                        })?;
                }
                self.replayed_end_offset = header.next_offset();
                self.bytes_since_snapshot += header.size_bytes() as u64;
                self.last_replayed_batch =
                    Some((header.partition_leader_epoch, header.max_timestamp));
                progressed = true;
            }
            if !progressed {
                return Err(NodeError::MissingCommittedData { offset });
            }
        }
        Ok(())
    }
}

/// A short operator-facing description of a request that changes metadata.
fn summarize(request: &ControllerRequest) -> String {
    match request {
        ControllerRequest::AlterPartition(r) => {
            let parts: Vec<String> = r
                .topics
                .iter()
                .flat_map(|t| {
                    t.partitions.iter().map(move |p| {
                        let isr: Vec<i32> = if p.new_isr_with_epochs.is_empty() {
                            p.new_isr.iter().map(|b| b.0).collect()
                        } else {
                            p.new_isr_with_epochs.iter().map(|b| b.broker_id.0).collect()
                        };
                        format!("{}-{} isr={isr:?} leader_epoch={}", t.topic_id, p.partition_index, p.leader_epoch)
                    })
                })
                .collect();
            format!("AlterPartition from broker {}: {}", r.broker_id.0, parts.join(", "))
        }
        ControllerRequest::BrokerRegistration(r) => format!("BrokerRegistration of broker {} (incarnation {})", r.broker_id.0, r.incarnation_id),
        ControllerRequest::BrokerHeartbeat(r) => format!(
            "BrokerHeartbeat of broker {} changes its state (want_fence={}, want_shut_down={}, metadata offset {})",
            r.broker_id.0, r.want_fence, r.want_shut_down, r.current_metadata_offset
        ),
        ControllerRequest::CreateTopics(r) => {
            format!("CreateTopics {:?}", r.topics.iter().map(|t| t.name.0.as_str()).collect::<Vec<_>>())
        }
        ControllerRequest::DeleteTopics(r) => format!(
            "DeleteTopics {:?}",
            r.topic_names.iter().map(|n| n.0.to_string()).chain(r.topics.iter().map(|t| t.topic_id.to_string())).collect::<Vec<_>>()
        ),
        other => request_kind(other).to_owned(),
    }
}

fn request_kind(request: &ControllerRequest) -> &'static str {
    match request {
        ControllerRequest::BrokerRegistration(_) => "BrokerRegistration",
        ControllerRequest::BrokerHeartbeat(_) => "BrokerHeartbeat",
        ControllerRequest::CreateTopics(_) => "CreateTopics",
        ControllerRequest::DeleteTopics(_) => "DeleteTopics",
        ControllerRequest::AllocateProducerIds(_) => "AllocateProducerIds",
        ControllerRequest::AlterPartition(_) => "AlterPartition",
        ControllerRequest::AssignReplicasToDirs(_) => "AssignReplicasToDirs",
        ControllerRequest::ControllerRegistration(_) => "ControllerRegistration",
        ControllerRequest::DescribeCluster(_) => "DescribeCluster",
        ControllerRequest::UnregisterBroker(_) => "UnregisterBroker",
        ControllerRequest::Admin(AdminRequest::CreatePartitions(_)) => "CreatePartitions",
        ControllerRequest::Admin(AdminRequest::ElectLeaders(_)) => "ElectLeaders",
        ControllerRequest::Admin(AdminRequest::UpdateFeatures(_)) => "UpdateFeatures",
        ControllerRequest::Admin(AdminRequest::IncrementalAlterConfigs(_)) => {
            "IncrementalAlterConfigs"
        }
        ControllerRequest::Admin(AdminRequest::AlterPartitionReassignments(_)) => {
            "AlterPartitionReassignments"
        }
        ControllerRequest::Admin(AdminRequest::ListPartitionReassignments(_)) => {
            "ListPartitionReassignments"
        }
        ControllerRequest::Admin(AdminRequest::DescribeConfigs(_)) => "DescribeConfigs",
        ControllerRequest::Admin(AdminRequest::AlterConfigs(_)) => "AlterConfigs",
        ControllerRequest::Admin(AdminRequest::AlterClientQuotas(_)) => "AlterClientQuotas",
        ControllerRequest::Admin(AdminRequest::AlterUserScramCredentials(_)) => {
            "AlterUserScramCredentials"
        }
        ControllerRequest::Admin(AdminRequest::DescribeAcls(_)) => "DescribeAcls",
        ControllerRequest::Admin(AdminRequest::CreateAcls(_)) => "CreateAcls",
        ControllerRequest::Admin(AdminRequest::DeleteAcls(_)) => "DeleteAcls",
        ControllerRequest::Admin(AdminRequest::CreateDelegationToken(_)) => "CreateDelegationToken",
        ControllerRequest::Admin(AdminRequest::RenewDelegationToken(_)) => "RenewDelegationToken",
        ControllerRequest::Admin(AdminRequest::ExpireDelegationToken(_)) => "ExpireDelegationToken",
        ControllerRequest::Admin(AdminRequest::AddRaftVoter(_)) => "AddRaftVoter",
        ControllerRequest::Admin(AdminRequest::RemoveRaftVoter(_)) => "RemoveRaftVoter",
    }
}

/// The NOT_CONTROLLER (41) answer for a request whose original answer is `response`: the same
/// shape (topic names of CreateTopics/DeleteTopics kept) with every error set to NOT_CONTROLLER,
/// so the broker's controller channel re-resolves the leader and retries.
fn not_controller_like(response: &ControllerResponse) -> ControllerResponse {
    const NOT_CONTROLLER: i16 = 41;
    let mut r = response.clone();
    match &mut r {
        ControllerResponse::BrokerRegistration(x) => x.error_code = NOT_CONTROLLER,
        ControllerResponse::BrokerHeartbeat(x) => x.error_code = NOT_CONTROLLER,
        ControllerResponse::CreateTopics(x) => x.topics.iter_mut().for_each(|t| {
            t.error_code = NOT_CONTROLLER;
            t.error_message = None;
        }),
        ControllerResponse::DeleteTopics(x) => x.responses.iter_mut().for_each(|t| {
            t.error_code = NOT_CONTROLLER;
            t.error_message = None;
        }),
        ControllerResponse::AllocateProducerIds(x) => x.error_code = NOT_CONTROLLER,
        ControllerResponse::AlterPartition(x) => x.error_code = NOT_CONTROLLER,
        ControllerResponse::AssignReplicasToDirs(x) => x.error_code = NOT_CONTROLLER,
        ControllerResponse::ControllerRegistration(x) => x.error_code = NOT_CONTROLLER,
        ControllerResponse::DescribeCluster(x) => x.error_code = NOT_CONTROLLER,
        ControllerResponse::UnregisterBroker(x) => x.error_code = NOT_CONTROLLER,
        ControllerResponse::Admin(AdminResponse::CreatePartitions(x)) => {
            x.results.iter_mut().for_each(|t| {
                t.error_code = NOT_CONTROLLER;
                t.error_message = None;
            })
        }
        ControllerResponse::Admin(AdminResponse::ElectLeaders(x)) => x.error_code = NOT_CONTROLLER,
        ControllerResponse::Admin(AdminResponse::UpdateFeatures(x)) => {
            x.error_code = NOT_CONTROLLER
        }
        ControllerResponse::Admin(AdminResponse::IncrementalAlterConfigs(x)) => {
            x.responses.iter_mut().for_each(|t| {
                t.error_code = NOT_CONTROLLER;
                t.error_message = None;
            })
        }
        ControllerResponse::Admin(AdminResponse::AlterPartitionReassignments(x)) => {
            x.error_code = NOT_CONTROLLER;
            x.error_message = None;
            x.responses
                .iter_mut()
                .flat_map(|t| t.partitions.iter_mut())
                .for_each(|p| {
                    p.error_code = NOT_CONTROLLER;
                    p.error_message = None;
                });
        }
        ControllerResponse::Admin(AdminResponse::ListPartitionReassignments(x)) => {
            x.error_code = NOT_CONTROLLER
        }
        ControllerResponse::Admin(AdminResponse::DescribeConfigs(x)) => {
            x.results.iter_mut().for_each(|t| {
                t.error_code = NOT_CONTROLLER;
                t.error_message = None;
                t.configs.clear();
            })
        }
        ControllerResponse::Admin(AdminResponse::AlterConfigs(x)) => {
            x.responses.iter_mut().for_each(|t| {
                t.error_code = NOT_CONTROLLER;
                t.error_message = None;
            })
        }
        ControllerResponse::Admin(AdminResponse::AlterClientQuotas(x)) => {
            x.entries.iter_mut().for_each(|t| {
                t.error_code = NOT_CONTROLLER;
                t.error_message = None;
            })
        }
        ControllerResponse::Admin(AdminResponse::AlterUserScramCredentials(x)) => {
            x.results.iter_mut().for_each(|t| {
                t.error_code = NOT_CONTROLLER;
                t.error_message = None;
            })
        }
        ControllerResponse::Admin(AdminResponse::DescribeAcls(x)) => x.error_code = NOT_CONTROLLER,
        ControllerResponse::Admin(AdminResponse::CreateAcls(x)) => {
            x.results.iter_mut().for_each(|t| {
                t.error_code = NOT_CONTROLLER;
                t.error_message = None;
            })
        }
        ControllerResponse::Admin(AdminResponse::DeleteAcls(x)) => {
            x.filter_results.iter_mut().for_each(|t| {
                t.error_code = NOT_CONTROLLER;
                t.error_message = None;
            })
        }
        ControllerResponse::Admin(AdminResponse::CreateDelegationToken(x)) => {
            x.error_code = NOT_CONTROLLER
        }
        ControllerResponse::Admin(AdminResponse::RenewDelegationToken(x)) => {
            x.error_code = NOT_CONTROLLER
        }
        ControllerResponse::Admin(AdminResponse::ExpireDelegationToken(x)) => {
            x.error_code = NOT_CONTROLLER
        }
        ControllerResponse::Admin(AdminResponse::AddRaftVoter(x)) => x.error_code = NOT_CONTROLLER,
        ControllerResponse::Admin(AdminResponse::RemoveRaftVoter(x)) => {
            x.error_code = NOT_CONTROLLER
        }
    }
    r
}
