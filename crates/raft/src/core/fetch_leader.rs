//! The leader side of Fetch: validation, divergence detection, reads, long polling, replica
//! progress (Kafka `handleFetchRequest` / `tryCompleteFetchRequest`), and FetchSnapshot.

use bytes::Bytes;
use kafka_protocol::messages::fetch_request::FetchPartition;
use kafka_protocol::messages::fetch_response::{
    EpochEndOffset, FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint, PartitionData,
};
use kafka_protocol::messages::fetch_snapshot_response::{
    LeaderIdAndEpoch as SnapshotLeader, PartitionSnapshot, TopicSnapshot,
};
use kafka_protocol::messages::{
    FetchRequest, FetchResponse, FetchSnapshotRequest, FetchSnapshotResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::{RaftCore, RaftError};
use crate::config::{MAX_FETCH_BYTES, METADATA_PARTITION, METADATA_TOPIC_ID, METADATA_TOPIC_NAME};
use crate::errors;
use crate::io::{InboundId, Output, RaftResponse};
use crate::leader::ParkedFetch;
use crate::role::Role;
use crate::storage::{OffsetAndEpoch, QuorumStateStore, ReplicatedLog};

/// Outcome of validating a fetch position against the log (`ValidOffsetAndEpoch`).
enum Position {
    Valid,
    Diverging(OffsetAndEpoch),
    /// The fetcher must download this snapshot first.
    Snapshot(OffsetAndEpoch),
}

/// Extracts the single metadata partition of a Fetch request: by topic id from v13, by name
/// before (Kafka `RaftUtil.hasValidTopicPartition`).
pub(crate) fn fetch_partition(request: &FetchRequest, api_version: i16) -> Option<&FetchPartition> {
    match request.topics.as_slice() {
        [t] => {
            let topic_ok = if api_version >= 13 {
                t.topic_id == METADATA_TOPIC_ID
            } else {
                t.topic.0.as_str() == METADATA_TOPIC_NAME
            };
            match t.partitions.as_slice() {
                [p] if topic_ok && p.partition == METADATA_PARTITION => Some(p),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The id a fetcher identifies itself with: `ReplicaState.ReplicaId` from v15, the legacy
/// top-level `ReplicaId` before.
/// The bytes a Fetch or FetchSnapshot response carries at most: the request's `MaxBytes`
/// (Kafka 4.4 reads `FetchRequestData.maxBytes` / `FetchSnapshotRequestData.maxBytes`, which
/// its followers fill from `controller.quorum.fetch.max.bytes` /
/// `controller.quorum.fetch.snapshot.max.bytes`, KIP-1219), negative as 0, and never more
/// than [`MAX_FETCH_BYTES`] (kraftwerk's bound on one response; Java has none).
pub(crate) fn response_max_bytes(request_max_bytes: i32) -> usize {
    (request_max_bytes.max(0) as usize).min(MAX_FETCH_BYTES)
}

pub(crate) fn fetch_replica_id(request: &FetchRequest, api_version: i16) -> i32 {
    if api_version >= 15 {
        request.replica_state.replica_id.0
    } else {
        request.replica_id.0
    }
}

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    fn fetch_response(
        &self,
        top_error: i16,
        partition: PartitionData,
        api_version: i16,
    ) -> FetchResponse {
        let mut response = FetchResponse::default()
            .with_error_code(top_error)
            .with_responses(vec![FetchableTopicResponse::default()
                .with_topic(StrBytes::from_static_str(METADATA_TOPIC_NAME).into())
                .with_topic_id(METADATA_TOPIC_ID)
                .with_partitions(vec![partition])]);
        if api_version >= 17 {
            if let Some((id, e)) = self.leader_endpoint() {
                response.node_endpoints = vec![NodeEndpoint::default()
                    .with_node_id(id.into())
                    .with_host(StrBytes::from_string(e.host.clone()))
                    .with_port(e.port as i32)];
            }
        }
        response
    }

    fn partition_response(&self, error: i16) -> PartitionData {
        PartitionData::default()
            .with_partition_index(METADATA_PARTITION)
            .with_error_code(error)
            .with_high_watermark(-1)
            .with_log_start_offset(self.log.start_offset())
            .with_current_leader(
                LeaderIdAndEpoch::default()
                    .with_leader_id(self.leader_id().unwrap_or(-1).into())
                    .with_leader_epoch(self.epoch),
            )
            .with_records(Some(Bytes::new()))
    }

    /// Kafka `validateLeaderOnlyRequest`.
    pub(crate) fn leader_only_error(&self, request_epoch: i32) -> Option<i16> {
        if request_epoch < self.epoch {
            Some(errors::FENCED_LEADER_EPOCH)
        } else if request_epoch > self.epoch {
            Some(errors::UNKNOWN_LEADER_EPOCH)
        } else if !matches!(self.role, Role::Leader(_)) {
            Some(errors::NOT_LEADER_OR_FOLLOWER)
        } else {
            None
        }
    }

    pub(crate) fn handle_fetch_request(
        &mut self,
        now_ms: u64,
        id: InboundId,
        api_version: i16,
        request: FetchRequest,
    ) -> Result<(), RaftError> {
        if !self.cluster_id_matches(&request.cluster_id) {
            let r = FetchResponse::default().with_error_code(errors::INCONSISTENT_CLUSTER_ID);
            self.emit(Output::Respond {
                id,
                response: RaftResponse::Fetch(r),
            });
            return Ok(());
        }
        let Some(p) = fetch_partition(&request, api_version).cloned() else {
            let r = FetchResponse::default().with_error_code(errors::INVALID_REQUEST);
            self.emit(Output::Respond {
                id,
                response: RaftResponse::Fetch(r),
            });
            return Ok(());
        };
        if request.max_wait_ms < 0
            || p.fetch_offset < 0
            || p.last_fetched_epoch < 0
            || p.last_fetched_epoch > p.current_leader_epoch
        {
            let r = self.fetch_response(
                errors::NONE,
                self.partition_response(errors::INVALID_REQUEST),
                api_version,
            );
            self.emit(Output::Respond {
                id,
                response: RaftResponse::Fetch(r),
            });
            return Ok(());
        }
        let replica_id = fetch_replica_id(&request, api_version);
        let max_bytes = response_max_bytes(request.max_bytes);
        let response = self.try_complete_fetch(now_ms, api_version, replica_id, &p, max_bytes)?;
        let part = &response.responses[0].partitions[0];
        let answer_now = part.error_code != errors::NONE
            || part.records.as_ref().is_some_and(|r| !r.is_empty())
            || request.max_wait_ms == 0
            || part.diverging_epoch.epoch != -1
            || part.diverging_epoch.end_offset != -1
            || part.snapshot_id.epoch != -1
            || part.snapshot_id.end_offset != -1
            // KIP-1166 (Fetch v18): a fetcher whose high watermark is behind learns at once.
            || (api_version >= 18 && part.high_watermark >= 0 && p.high_watermark < part.high_watermark);
        // Answered now, an error from a node that knows no other leader could name nobody:
        // held until a leader is known (see `held_fetches`).
        let hold = part.error_code != errors::NONE
            && request.max_wait_ms > 0
            && !self.knows_a_serving_leader()
            && self.held_fetches.len() < MAX_HELD_FETCHES;
        if hold {
            self.held_fetches.push(ParkedFetch {
                id,
                api_version,
                fetch_offset: p.fetch_offset,
                fetcher_high_watermark: i64::MAX,
                deadline_ms: now_ms + request.max_wait_ms as u64,
                request,
            });
        } else if answer_now {
            self.emit(Output::Respond {
                id,
                response: RaftResponse::Fetch(response),
            });
        } else if let Role::Leader(l) = &mut self.role {
            l.parked.push(ParkedFetch {
                id,
                api_version,
                fetch_offset: p.fetch_offset,
                fetcher_high_watermark: if api_version >= 18 {
                    p.high_watermark
                } else {
                    i64::MAX
                },
                deadline_ms: now_ms + request.max_wait_ms as u64,
                request,
            });
        }
        Ok(())
    }

    /// Builds the answer to a fetch now (Kafka `tryCompleteFetchRequest`), updating the
    /// fetcher's progress when the position is valid; the records are whole batches within
    /// `max_bytes`, but at least one.
    fn try_complete_fetch(
        &mut self,
        now_ms: u64,
        api_version: i16,
        replica_id: i32,
        p: &FetchPartition,
        max_bytes: usize,
    ) -> Result<FetchResponse, RaftError> {
        if let Some(error) = self.leader_only_error(p.current_leader_epoch) {
            return Ok(self.fetch_response(
                errors::NONE,
                self.partition_response(error),
                api_version,
            ));
        }
        let position = self.validate_fetch_position(p.fetch_offset, p.last_fetched_epoch);
        let mut partition = self.partition_response(errors::NONE);
        match position {
            Position::Diverging(end) => {
                partition.diverging_epoch = EpochEndOffset::default()
                    .with_epoch(end.epoch)
                    .with_end_offset(end.offset);
            }
            Position::Snapshot(id) => {
                partition.snapshot_id =
                    kafka_protocol::messages::fetch_response::SnapshotId::default()
                        .with_end_offset(id.offset)
                        .with_epoch(id.epoch);
            }
            Position::Valid => {
                let records = self.log.read(p.fetch_offset, max_bytes)?;
                let leader_end = self.log.end_offset().offset;
                let check_quorum_ms = self.config.check_quorum_timeout_ms();
                let moved = match &mut self.role {
                    Role::Leader(l) => {
                        let moved = l.update_replica_on_fetch(
                            replica_id,
                            p.replica_directory_id,
                            p.fetch_offset,
                            leader_end,
                            now_ms,
                        );
                        l.update_check_quorum(now_ms, check_quorum_ms);
                        moved
                    }
                    _ => false,
                };
                if moved {
                    self.on_leader_high_watermark_moved(now_ms);
                    self.complete_parked_fetches(now_ms, true)?;
                }
                partition.records = Some(records);
            }
        }
        if let Role::Leader(l) = &self.role {
            partition.high_watermark = l.high_watermark.unwrap_or(-1);
        }
        Ok(self.fetch_response(errors::NONE, partition, api_version))
    }

    /// Kafka `tryCompleteFetchRequest` + `ReplicatedLog.validateOffsetAndEpoch`: an empty
    /// fetcher gets the latest snapshot when one exists (case C05: cheaper than replaying every
    /// segment); one below the log start, or whose last epoch predates the earliest snapshot,
    /// must load the latest snapshot too.
    fn validate_fetch_position(&self, fetch_offset: i64, last_fetched_epoch: i32) -> Position {
        let latest = self.log.latest_snapshot_id();
        if fetch_offset == 0 {
            if let Some(id) = latest {
                return Position::Snapshot(id);
            }
        }
        if self.log.start_offset() == 0 && fetch_offset == 0 {
            return Position::Valid;
        }
        if let Some(earliest) = self.log.earliest_snapshot_id() {
            let start = self.log.start_offset();
            if fetch_offset < start
                || (fetch_offset == start && last_fetched_epoch != earliest.epoch)
                || last_fetched_epoch < earliest.epoch
            {
                return Position::Snapshot(latest.unwrap_or(earliest));
            }
        }
        let end = self.log.end_offset_for_epoch(last_fetched_epoch);
        if end.epoch != last_fetched_epoch || end.offset < fetch_offset {
            Position::Diverging(end)
        } else {
            Position::Valid
        }
    }

    /// Answers parked fetches that can complete: new data past their offset, or (Fetch v18)
    /// a high watermark beyond theirs when `high_watermark_moved`.
    pub(crate) fn complete_parked_fetches(
        &mut self,
        now_ms: u64,
        high_watermark_moved: bool,
    ) -> Result<(), RaftError> {
        let end = self.log.end_offset().offset;
        let Role::Leader(l) = &mut self.role else {
            return Ok(());
        };
        let hw = l.high_watermark.unwrap_or(-1);
        let (ready, waiting): (Vec<ParkedFetch>, Vec<ParkedFetch>) =
            std::mem::take(&mut l.parked).into_iter().partition(|f| {
                f.fetch_offset < end || (high_watermark_moved && f.fetcher_high_watermark < hw)
            });
        l.parked = waiting;
        self.answer_parked(now_ms, ready)
    }

    /// True when this node leads, or follows a leader it knows: a fetch's answer can name
    /// the leader (a resigned node names only itself).
    fn knows_a_serving_leader(&self) -> bool {
        matches!(self.role, Role::Leader(_) | Role::Follower(_))
    }

    /// Answers the held fetches whose MaxWaitMs is over (still with no leader to name).
    pub(crate) fn expire_held_fetches(&mut self, now_ms: u64) -> Result<(), RaftError> {
        if self.held_fetches.iter().all(|f| now_ms < f.deadline_ms) {
            return Ok(());
        }
        let (due, waiting): (Vec<ParkedFetch>, Vec<ParkedFetch>) =
            std::mem::take(&mut self.held_fetches)
                .into_iter()
                .partition(|f| now_ms >= f.deadline_ms);
        self.held_fetches = waiting;
        self.answer_parked(now_ms, due)
    }

    pub(crate) fn expire_parked_fetches(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let Role::Leader(l) = &mut self.role else {
            return Ok(());
        };
        let (due, waiting): (Vec<ParkedFetch>, Vec<ParkedFetch>) = std::mem::take(&mut l.parked)
            .into_iter()
            .partition(|f| now_ms >= f.deadline_ms);
        l.parked = waiting;
        self.answer_parked(now_ms, due)
    }

    /// After a transition: answers fetches parked by a leadership that just ended (they get
    /// the new epoch/leader), and the held ones once there is a leader to name.
    pub(crate) fn reanswer_parked(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let mut fetches = std::mem::take(&mut self.pending_reanswer);
        if self.knows_a_serving_leader() {
            fetches.append(&mut self.held_fetches);
        }
        self.answer_parked(now_ms, fetches)
    }

    fn answer_parked(&mut self, now_ms: u64, fetches: Vec<ParkedFetch>) -> Result<(), RaftError> {
        for f in fetches {
            let Some(p) = fetch_partition(&f.request, f.api_version).cloned() else {
                continue;
            };
            let replica_id = fetch_replica_id(&f.request, f.api_version);
            let max_bytes = response_max_bytes(f.request.max_bytes);
            let response =
                self.try_complete_fetch(now_ms, f.api_version, replica_id, &p, max_bytes)?;
            self.emit(Output::Respond {
                id: f.id,
                response: RaftResponse::Fetch(response),
            });
        }
        Ok(())
    }

    /// FetchSnapshot (KIP-630, Kafka `handleFetchSnapshotRequest`): raw bytes of a snapshot
    /// from `Position`, at most `MaxBytes` (and 8 MiB) per response. Counts toward check-quorum
    /// but not toward replica progress.
    pub(crate) fn handle_fetch_snapshot_request(
        &mut self,
        now_ms: u64,
        _api_version: i16,
        request: FetchSnapshotRequest,
    ) -> Result<FetchSnapshotResponse, RaftError> {
        if !self.cluster_id_matches(&request.cluster_id) {
            return Ok(
                FetchSnapshotResponse::default().with_error_code(errors::INCONSISTENT_CLUSTER_ID)
            );
        }
        let p = match request.topics.as_slice() {
            [t] if t.name.0.as_str() == METADATA_TOPIC_NAME
                && t.partitions.len() == 1
                && t.partitions[0].partition == METADATA_PARTITION =>
            {
                t.partitions[0].clone()
            }
            [t] if t.partitions.len() == 1 => {
                let partition = PartitionSnapshot::default()
                    .with_index(t.partitions[0].partition)
                    .with_error_code(errors::UNKNOWN_TOPIC_OR_PARTITION);
                return Ok(FetchSnapshotResponse::default().with_topics(vec![
                    TopicSnapshot::default()
                        .with_name(t.name.clone())
                        .with_partitions(vec![partition]),
                ]));
            }
            _ => {
                return Ok(FetchSnapshotResponse::default().with_error_code(errors::INVALID_REQUEST))
            }
        };
        let id = OffsetAndEpoch::new(p.snapshot_id.end_offset, p.snapshot_id.epoch);
        let mut partition = PartitionSnapshot::default()
            .with_index(METADATA_PARTITION)
            .with_snapshot_id(
                kafka_protocol::messages::fetch_snapshot_response::SnapshotId::default()
                    .with_end_offset(id.offset)
                    .with_epoch(id.epoch),
            )
            .with_current_leader(
                SnapshotLeader::default()
                    .with_leader_id(self.leader_id().unwrap_or(-1).into())
                    .with_leader_epoch(self.epoch),
            );
        let error = match self.leader_only_error(p.current_leader_epoch) {
            Some(error) => error,
            None => match self.log.snapshot_size_bytes(id) {
                Err(_) => errors::SNAPSHOT_NOT_FOUND,
                Ok(_) if id == OffsetAndEpoch::new(0, 0) => errors::SNAPSHOT_NOT_FOUND,
                Ok(size) if p.position < 0 || p.position as u64 >= size => {
                    errors::POSITION_OUT_OF_RANGE
                }
                Ok(size) => {
                    let max_bytes = response_max_bytes(request.max_bytes);
                    match self.log.read_snapshot(id, p.position as u64, max_bytes) {
                        Ok(bytes) => {
                            partition.size = size as i64;
                            partition.position = p.position;
                            partition.unaligned_records = bytes;
                            errors::NONE
                        }
                        // A storage failure, or a batch that fails its CRC (never served):
                        // fatal, as a failed read of the log is (case C10).
                        Err(e) => return Err(e.into()),
                    }
                }
            },
        };
        partition.error_code = error;
        let check_quorum_ms = self.config.check_quorum_timeout_ms();
        if let Role::Leader(l) = &mut self.role {
            let directory_id = request
                .topics
                .first()
                .and_then(|t| t.partitions.first())
                .map_or(uuid::Uuid::nil(), |p| p.replica_directory_id);
            if l.is_voter_key(request.replica_id.0, directory_id)
                && request.replica_id.0 != l.local_id
            {
                l.fetched_voters.insert(request.replica_id.0);
                l.update_check_quorum(now_ms, check_quorum_ms);
            }
        }
        Ok(
            FetchSnapshotResponse::default().with_topics(vec![TopicSnapshot::default()
                .with_name(StrBytes::from_static_str(METADATA_TOPIC_NAME).into())
                .with_partitions(vec![partition])]),
        )
    }
}

/// Most fetches held at once (see `RaftCore::held_fetches`); beyond it a fetch is answered at
/// once, as Kafka answers every one, so a flood cannot grow the list.
pub(crate) const MAX_HELD_FETCHES: usize = 1_024;
