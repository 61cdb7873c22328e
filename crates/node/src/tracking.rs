//! What the node watches for Kafka's controller metrics between inputs: commits of its own
//! appends, elections, leader changes, records fetched, broker contacts, and the node thread's
//! event timings (which the driver measures, the node reading no clock).

use std::collections::{BTreeMap, VecDeque};

use kraftwerk_raft::{LeaderAndEpoch, QuorumStateStore, ReplicatedLog, RoleKind};
use kraftwerk_records::metadata::{ApiMessageAndVersion, MetadataRecord};

use crate::node::Node;
use crate::sensors::Sensors;

/// Bookkeeping for [`crate::NodeStatus`]'s Kafka-named metrics.
#[derive(Debug, Default)]
pub(crate) struct Tracking {
    pub(crate) sensors: Sensors,
    /// End offsets (exclusive) of batches this node appended as leader and their append
    /// times, until they commit.
    pending_commits: VecDeque<(i64, u64)>,
    /// The Raft core's count of completed elections at the last look.
    elections_seen: u64,
    /// The last leader and epoch seen.
    last_leader: Option<LeaderAndEpoch>,
    /// Times a new active controller was seen (`NewActiveControllersCount`).
    pub(crate) new_active_controllers: u64,
    /// Log start and end offsets at the last look, to count what a follower fetched.
    last_log_range: Option<(i64, i64)>,
    /// Broker id → last heartbeat arrival, node time (`QuorumControllerMetrics
    /// .brokerContactTimesMs`).
    pub(crate) broker_contacts: BTreeMap<i32, u64>,
    /// Events the driver handed to the node (`EventQueueOperationsStartedCount`).
    pub(crate) events_started: u64,
    /// Counts of the committed image, and the image's last offset they were taken at
    /// (recounted only when replay moved it: counting walks every topic).
    pub(crate) image_counts: (Option<i64>, crate::status::ImageCounts),
    /// Committed unclean leader elections (`UncleanLeaderElectionsPerSec`).
    pub(crate) unclean_leader_elections: u64,
    /// Committed elections from the ELR (`ElectionFromEligibleLeaderReplicasPerSec`).
    pub(crate) elr_elections: u64,
}

impl Tracking {
    /// A batch of `records` records ending at `end_offset` was appended as leader at `now_ms`.
    pub(crate) fn on_append(&mut self, end_offset: i64, records: usize, now_ms: u64) {
        self.pending_commits.push_back((end_offset, now_ms));
        self.sensors.append_records.record(records as f64, now_ms);
    }
}

impl<L: ReplicatedLog, Q: QuorumStateStore> Node<L, Q> {
    /// Updates the metrics bookkeeping after the node settled at `now_ms`.
    pub(crate) fn track(&mut self, now_ms: u64) {
        let role = self.raft.role();
        let leader = self.raft.leader_and_epoch();
        let hw = self.raft.high_watermark().unwrap_or(0);
        let log = self.raft.log();
        let range = (log.start_offset(), log.end_offset().offset);
        let image = self.controller.image();
        let t = &mut self.tracking;
        if t.image_counts.0 != Some(image.last_offset) {
            t.image_counts = (Some(image.last_offset), crate::status::image_counts(image));
        }

        // Commit latency: our appends that the high watermark passed.
        if role == RoleKind::Leader {
            while let Some(&(end, appended_ms)) = t.pending_commits.front() {
                if end > hw {
                    break;
                }
                t.pending_commits.pop_front();
                t.sensors
                    .commit_latency_ms
                    .record(now_ms.saturating_sub(appended_ms) as f64, now_ms);
            }
        } else {
            t.pending_commits.clear();
        }

        // Election latency: the Raft core times each leaderless period to a known leader; a
        // sample per period it completed since the last look (several in one input are rare
        // and share the last latency).
        let raft_metrics = self.raft.metrics();
        let completed = raft_metrics.elections_completed;
        if let Some(latency) = raft_metrics.last_election_latency_ms {
            for _ in t.elections_seen..completed {
                t.sensors.election_latency_ms.record(latency as f64, now_ms);
            }
        }
        t.elections_seen = completed;

        // A new active controller: a known leader in an epoch not seen led before.
        if leader.leader_id.is_some() && t.last_leader != Some(leader) {
            t.new_active_controllers += 1;
            t.last_leader = Some(leader);
        }

        // Records fetched as a follower: the log end moved with the start unchanged (a
        // snapshot install moves both, and is no fetch of records).
        if let Some((start, end)) = t.last_log_range {
            if role == RoleKind::Follower && range.0 == start && range.1 > end {
                t.sensors
                    .fetch_records
                    .record((range.1 - end) as f64, now_ms);
            }
        }
        t.last_log_range = Some(range);
    }

    /// Counts the elections in a committed batch about to be replayed, as Kafka's
    /// `TopicDelta.updateElectionStats`: a PartitionChangeRecord with LeaderRecoveryState
    /// RECOVERING elected a leader outside the ISR (unclean); one whose new leader is in the
    /// partition's ELR elected from the ELR. The ELR is the one before the batch.
    pub(crate) fn count_elections(&mut self, records: &[(i64, ApiMessageAndVersion)]) {
        const RECOVERING: i8 = 1;
        for (_, r) in records {
            let MetadataRecord::PartitionChange(change) = &r.record else {
                continue;
            };
            if change.leader_recovery_state == RECOVERING {
                self.tracking.unclean_leader_elections += 1;
            }
            let from_elr = self
                .controller
                .image()
                .topics
                .partition(&change.topic_id, change.partition_id)
                .is_some_and(|p| p.elr.contains(&change.leader));
            if from_elr {
                self.tracking.elr_elections += 1;
            }
        }
    }

    /// Records a broker heartbeat's arrival for `TimeSinceLastHeartbeatReceivedMs`.
    pub(crate) fn track_broker_contact(&mut self, broker_id: i32, arrived_ms: u64) {
        let last = self.tracking.broker_contacts.entry(broker_id).or_default();
        *last = (*last).max(arrived_ms);
    }

    /// Records one event the driver handed to the node: how long it waited in the queue and
    /// how long the node took over it, in ms (`ControllerEventManager` `EventQueueTimeMs`,
    /// `EventQueueProcessingTimeMs`; `EventQueueOperationsStartedCount`).
    pub fn record_event(&mut self, queue_ms: u64, processing_ms: u64) {
        let t = &mut self.tracking;
        t.events_started += 1;
        t.sensors.event_queue_time_ms.update(queue_ms);
        t.sensors.event_processing_time_ms.update(processing_ms);
    }

    /// Records one pass of the driver: `idle_ms` waiting for work, `busy_ms` working, ending
    /// at `now_ms` (`poll-idle-ratio-avg`).
    pub fn record_poll(&mut self, idle_ms: u64, busy_ms: u64, now_ms: u64) {
        let s = &mut self.tracking.sensors;
        s.poll_idle_ms.record(idle_ms as f64, now_ms);
        s.poll_total_ms.record((idle_ms + busy_ms) as f64, now_ms);
    }
}
