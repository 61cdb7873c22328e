//! [`Node`]: the state the glue keeps, its inputs, and the loop that brings the controller in
//! line with Raft after each of them ([`Node::settle`]).

use std::collections::VecDeque;

use kraftwerk_controller::Controller;
use kraftwerk_raft::{OffsetAndEpoch, QuorumStateStore, RaftCore, ReplicatedLog};
use tracing::info;

use crate::error::NodeError;
use crate::messages::{NodeInput, NodeOutput};
use crate::requests::Pending;
use crate::snapshots::SnapshotPolicy;
use crate::status::NodeStats;

/// One controller node: Raft core + controller. `L` is the metadata log, `Q` the quorum-state
/// store.
pub struct Node<L, Q> {
    pub(crate) raft: RaftCore<L, Q>,
    pub(crate) controller: Controller,
    /// Next offset whose batch is replayed into the committed image.
    pub(crate) replayed_end_offset: i64,
    /// Whether replay has reached a known high watermark at least once since start (Kafka's
    /// `MetadataLoader` leaving its initial catching-up state; KAFKA-19964).
    pub(crate) caught_up: bool,
    /// Requests waiting for their records (or earlier ones) to commit, in log order.
    pub(crate) pending: VecDeque<Pending>,
    pub(crate) outputs: Vec<NodeOutput>,
    /// Epoch the controller was activated in.
    pub(crate) active_epoch: Option<i32>,
    pub(crate) snapshot_policy: SnapshotPolicy,
    /// Bytes of committed batches replayed since the last snapshot (or load).
    pub(crate) bytes_since_snapshot: u64,
    /// When the last snapshot was written or loaded (node time, ms).
    pub(crate) last_snapshot_ms: u64,
    /// Epoch and append time (ms since the epoch) of the last replayed batch.
    pub(crate) last_replayed_batch: Option<(i32, i64)>,
    /// Id of the snapshot being written, if any.
    pub(crate) snapshot_in_progress: Option<OffsetAndEpoch>,
    /// When the log's retention runs next (node time, ms).
    pub(crate) next_clean_ms: u64,
    /// Latest snapshot written or loaded.
    pub(crate) latest_snapshot: Option<OffsetAndEpoch>,
    /// Counters for metrics.
    pub(crate) stats: NodeStats,
    /// AddRaftVoter / RemoveRaftVoter requests the Raft layer answers later, by token.
    pub(crate) voter_change_apis:
        std::collections::BTreeMap<u64, crate::voter_changes::VoterChangeApi>,
    /// Bookkeeping for the Kafka-named metrics.
    pub(crate) tracking: crate::tracking::Tracking,
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
            caught_up: false,
            pending: VecDeque::new(),
            voter_change_apis: std::collections::BTreeMap::new(),
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
            tracking: Default::default(),
        };
        if let Some(id) = node.raft.log().latest_snapshot_id() {
            node.load_snapshot(id, now_ms)?;
        } else if node.replayed_end_offset > 0 {
            return Err(NodeError::MissingCommittedData { offset: 0 });
        }
        Ok(node)
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
        let controller = if self.controller.is_active() {
            self.controller.next_deadline_ms()
        } else {
            None
        };
        [
            Some(self.raft.next_deadline_ms()),
            controller,
            self.next_snapshot_deadline_ms(),
            Some(self.next_clean_ms),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(u64::MAX)
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

    /// Records a broker heartbeat's arrival ahead of its request (see
    /// `Controller::note_broker_contact`); nothing to settle, it writes nothing.
    pub fn note_broker_contact(&mut self, broker_id: i32, broker_epoch: i64, arrived_ms: u64) {
        self.controller
            .note_broker_contact(broker_id, broker_epoch, arrived_ms);
        self.track_broker_contact(broker_id, arrived_ms);
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

    /// Brings the controller in line with Raft after any change: loads an installed snapshot,
    /// replays what committed, snapshots and cleans when due, (de)activates the controller, runs
    /// its internal writes, and answers the requests whose records committed.
    fn settle(&mut self, now_ms: u64) -> Result<(), NodeError> {
        let result = self.settle_loop(now_ms);
        self.track(now_ms);
        result
    }

    /// [`Node::settle`]'s work, until nothing changes any more.
    fn settle_loop(&mut self, now_ms: u64) -> Result<(), NodeError> {
        loop {
            if let Some(id) = self.raft.take_snapshot_installed() {
                self.load_snapshot(id, now_ms)?;
            }
            self.replay_committed()?;
            // The finalized kraft.version and the controller ids come from the Raft layer.
            let voter_ids: Vec<i32> = self.raft.voter_set().ids().collect();
            self.controller
                .set_quorum(self.raft.kraft_version(), voter_ids);
            self.maybe_snapshot(now_ms)?;
            if now_ms >= self.next_clean_ms {
                self.next_clean_ms = now_ms + self.snapshot_policy.clean_interval_ms;
                self.raft.maybe_clean_log(now_ms)?;
            }
            self.follow_leadership(now_ms);
            let wrote = self.run_internal_writes(now_ms)?;
            self.release_pending();
            self.release_voter_changes();
            // A write with linger 0 may have committed at once (single voter): go around again.
            if !wrote || self.raft.high_watermark().unwrap_or(0) <= self.replayed_end_offset {
                return Ok(());
            }
        }
    }

    /// Deactivates the controller when leadership (or its epoch) is gone, and activates it once
    /// this node leads and has replayed past its epoch's start offset.
    fn follow_leadership(&mut self, now_ms: u64) {
        let leader = self.raft.is_leader();
        if self.controller.is_active() && (!leader || self.active_epoch != Some(self.raft.epoch()))
        {
            self.deactivate();
        }
        if !leader || self.controller.is_active() {
            return;
        }
        let start = self
            .raft
            .epoch_start_offset()
            .expect("a leader has an epoch start offset");
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

    /// Appends the controller's internal writes (bootstrap, fencing, NoOps, elections) until it
    /// has none; returns whether anything was written.
    fn run_internal_writes(&mut self, now_ms: u64) -> Result<bool, NodeError> {
        let mut wrote = false;
        while self.controller.is_active() {
            let Some(next) = self.raft.next_offset() else {
                break;
            };
            let Some(result) = self.controller.poll(now_ms, next) else {
                break;
            };
            self.write_internal(now_ms, &result.records, result.atomic)?;
            wrote = true;
            if !self.raft.is_leader() {
                break;
            }
        }
        Ok(wrote)
    }
}
