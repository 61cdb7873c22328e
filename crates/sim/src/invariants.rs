//! Safety properties checked after every simulated event. Each cites its source: "Raft §N" is a
//! section of the Raft paper (Ongaro and Ousterhout, "In Search of an Understandable Consensus
//! Algorithm", 2014), the others are Kafka classes.
//!
//! - **Election safety** (Raft §5.2, KIP-595): at most one leader per epoch, ever.
//! - **Epoch monotonicity** (`QuorumState`): a node's epoch never decreases, across restarts too
//!   (it is persisted before use), and never passes `MAX_REQUEST_EPOCH`
//!   (`crates/raft/src/config.rs`; only a forged request could take it there, and an epoch that
//!   close to `i32::MAX` would overflow at the next election).
//! - **High-watermark monotonicity** (`LeaderState.maybeUpdateHighWatermark`): within one process
//!   lifetime a node's high watermark never decreases.
//! - **Committed data is never lost or changed** (Raft §5.4 State Machine Safety): every batch below
//!   any node's high watermark is byte-identical on every node that has it committed.
//! - **Leader completeness** (Raft §5.4.1): a new leader's log holds every batch committed in a
//!   lower epoch. Not every batch committed so far: a candidate whose thread stalled can win an
//!   old epoch's election after a later epoch committed more (its votes were granted in time),
//!   and that is safe, as it can commit nothing in its old epoch.
//! - **One uncommitted voter change at a time** (KIP-853, Kafka `LeaderState` and
//!   `AddVoterHandler`): no node's log ever holds two `VotersRecord`s past the committed
//!   offset (the larger of its own high watermark and the globally committed prefix: a
//!   follower's high watermark lags the leader's).
//! - **Only a voter leads** (KIP-853): a node that becomes leader is a voter, by node id *and*
//!   directory id, of the voter set in force in its own log; so a removed voter, or a node
//!   whose disk was replaced (a new directory id) and which was not added back, never leads.
//!   Committed data survives membership changes through the two checks above it: they cover
//!   every running node, observers (spares, removed voters, wiped disks) included.

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;
use kraftwerk_raft::config::MAX_REQUEST_EPOCH;
use kraftwerk_raft::{QuorumStateStore, RaftCore, ReplicatedLog, RoleKind};
use kraftwerk_records::batch::batches;

/// A broken invariant, with enough context to debug it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation(pub String);

#[derive(Debug, Default)]
struct NodeTrack {
    last_epoch: i32,
    last_high_watermark: Option<i64>,
    role: Option<(RoleKind, i32)>,
    /// Offset up to which this node's committed batches were compared.
    checked_until: i64,
}

#[derive(Debug)]
struct CommittedBatch {
    bytes: Bytes,
    next_offset: i64,
    epoch: i32,
}

/// The global record of what was committed, and per-node trackers.
#[derive(Debug, Default)]
pub struct Invariants {
    leaders: BTreeMap<i32, i32>,
    /// By base offset: the batch, its next offset, and the epoch of the node that first had it
    /// below its high watermark (at or after the epoch it was committed in: a high watermark is
    /// learnt from a leader of the node's own epoch).
    committed: BTreeMap<i64, CommittedBatch>,
    committed_end: i64,
    nodes: HashMap<i32, NodeTrack>,
    violation: Option<Violation>,
}

impl Invariants {
    /// Records a failure (the first one wins).
    pub fn violation(&mut self, text: String) {
        if self.violation.is_none() {
            self.violation = Some(Violation(text));
        }
    }

    /// The first violation since the last call.
    pub fn take_violation(&mut self) -> Option<Violation> {
        self.violation.take()
    }

    /// End offset of the globally committed prefix.
    pub fn committed_end_offset(&self) -> i64 {
        self.committed_end
    }

    /// Number of epochs that had a leader.
    pub fn leaders_elected(&self) -> usize {
        self.leaders.len()
    }

    /// The last role seen for a node.
    pub fn role_of(&self, id: i32) -> Option<(RoleKind, i32)> {
        self.nodes.get(&id).and_then(|t| t.role)
    }

    /// A node (re)started: its in-memory high watermark starts over.
    pub fn on_restart(&mut self, id: i32) {
        let t = self.nodes.entry(id).or_default();
        t.last_high_watermark = None;
        t.checked_until = 0;
        t.role = None;
    }

    /// A node's disk was replaced: its epoch and `quorum-state` start over with the new disk.
    pub fn on_disk_replaced(&mut self, id: i32) {
        self.nodes.insert(id, NodeTrack::default());
    }

    /// Checks one node after it handled an event.
    pub fn check_node<L: ReplicatedLog, Q: QuorumStateStore>(
        &mut self,
        id: i32,
        core: &RaftCore<L, Q>,
    ) {
        let epoch = core.epoch();
        let role = core.role();
        let hw = core.high_watermark();
        let track = self.nodes.entry(id).or_default();
        if epoch < track.last_epoch {
            let last = track.last_epoch;
            self.violation(format!("node {id}: epoch went back from {last} to {epoch}"));
            return;
        }
        track.last_epoch = epoch;
        if epoch > MAX_REQUEST_EPOCH {
            self.violation(format!(
                "node {id}: epoch {epoch} is past {MAX_REQUEST_EPOCH}"
            ));
            return;
        }
        if let (Some(prev), Some(now)) = (track.last_high_watermark, hw) {
            if now < prev {
                self.violation(format!(
                    "node {id}: high watermark went back from {prev} to {now}"
                ));
                return;
            }
        }
        if hw.is_some() {
            track.last_high_watermark = hw;
        }
        let became_leader =
            role == RoleKind::Leader && track.role != Some((RoleKind::Leader, epoch));
        track.role = Some((role, epoch));
        if role == RoleKind::Leader {
            match self.leaders.get(&epoch) {
                Some(&other) if other != id => {
                    self.violation(format!(
                        "two leaders in epoch {epoch}: nodes {other} and {id}"
                    ));
                    return;
                }
                _ => {
                    self.leaders.insert(epoch, id);
                }
            }
        }
        if let Some(hw) = hw {
            self.check_committed(id, core.log(), hw, epoch);
        }
        self.check_one_voter_change(id, core);
        if became_leader {
            if !core.is_voter() {
                let key = core.local_key();
                let set = core.voter_set();
                return self.violation(format!(
                    "node {id} ({key:?}) became leader of epoch {epoch} but is not a voter of the set in force in its log: {set:?}"
                ));
            }
            self.check_leader_completeness(id, core);
        }
    }

    /// KIP-853: at most one voter change past the committed offset in the node's log.
    fn check_one_voter_change<L: ReplicatedLog, Q: QuorumStateStore>(
        &mut self,
        id: i32,
        core: &RaftCore<L, Q>,
    ) {
        let committed = core.high_watermark().unwrap_or(0).max(self.committed_end);
        let uncommitted: Vec<i64> = core
            .control_state()
            .voter_set_history()
            .map(|(offset, _)| offset)
            .filter(|&offset| offset >= committed)
            .collect();
        if uncommitted.len() > 1 {
            self.violation(format!(
                "node {id}: {} uncommitted voter changes in its log (VotersRecords at offsets {uncommitted:?}, committed below {committed})",
                uncommitted.len()
            ));
        }
    }

    fn check_committed<L: ReplicatedLog>(&mut self, id: i32, log: &L, hw: i64, epoch: i32) {
        // Below the log start the data lives in a snapshot; the controller simulation compares
        // snapshot-loaded images separately.
        let mut offset = self.nodes[&id].checked_until.max(log.start_offset());
        while offset < hw {
            let bytes = match log.read(offset, 1 << 20) {
                Ok(b) => b,
                Err(e) => {
                    return self.violation(format!(
                        "node {id}: cannot read committed offset {offset}: {e}"
                    ))
                }
            };
            if bytes.is_empty() {
                return self.violation(format!(
                    "node {id}: high watermark {hw} beyond its log end at {offset}"
                ));
            }
            let mut progressed = false;
            for item in batches(&bytes) {
                let (header, batch) = match item {
                    Ok(x) => x,
                    Err(e) => {
                        return self.violation(format!(
                            "node {id}: corrupt committed batch near {offset}: {e}"
                        ))
                    }
                };
                if header.base_offset >= hw {
                    break;
                }
                let batch = Bytes::copy_from_slice(batch);
                match self.committed.get(&header.base_offset) {
                    Some(known) if known.bytes != batch => {
                        return self.violation(format!(
                            "node {id}: committed batch at offset {} differs from the one committed before",
                            header.base_offset
                        ));
                    }
                    Some(_) => {}
                    None if header.base_offset == self.committed_end => {
                        self.committed_end = header.next_offset();
                        let known = CommittedBatch {
                            bytes: batch,
                            next_offset: header.next_offset(),
                            epoch,
                        };
                        self.committed.insert(header.base_offset, known);
                    }
                    None => {
                        return self.violation(format!(
                            "node {id}: committed batch at {} does not line up with the committed prefix ending at {}",
                            header.base_offset, self.committed_end
                        ));
                    }
                }
                offset = header.next_offset();
                progressed = true;
                if offset >= hw {
                    break;
                }
            }
            if !progressed {
                break;
            }
        }
        if let Some(t) = self.nodes.get_mut(&id) {
            t.checked_until = offset.min(hw).max(t.checked_until);
        }
    }

    /// Raft §5.4.1: the leader's log holds every batch committed in a lower epoch.
    pub fn check_leader_completeness<L: ReplicatedLog, Q: QuorumStateStore>(
        &mut self,
        id: i32,
        core: &RaftCore<L, Q>,
    ) {
        let log = core.log();
        let epoch = core.epoch();
        let required_end = self
            .committed
            .values()
            .filter(|b| b.epoch < epoch)
            .map(|b| b.next_offset)
            .max()
            .unwrap_or(0);
        if log.end_offset().offset < required_end {
            let leo = log.end_offset().offset;
            return self.violation(format!(
                "leader {id} of epoch {epoch} lacks data committed before its epoch: LEO {leo} < {required_end}"
            ));
        }
        let start = log.start_offset();
        let required = self
            .committed
            .range(start..)
            .filter(|(_, b)| b.epoch < epoch);
        for (&base, known) in required {
            let known = &known.bytes;
            match log.read(base, known.len()) {
                Ok(bytes) if bytes.len() >= known.len() && bytes[..known.len()] == known[..] => {}
                _ => {
                    let text = format!(
                        "leader {id} of epoch {}: committed batch at {base} missing or different",
                        core.epoch()
                    );
                    self.violation(text);
                    return;
                }
            }
        }
    }
}
