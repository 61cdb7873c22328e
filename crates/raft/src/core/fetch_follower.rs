//! The follower side of Fetch: building requests, appending what the leader returns, truncating
//! on divergence, and the follower's high watermark (Kafka `handleFetchResponse`).

use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic, ReplicaState};
use kafka_protocol::messages::{FetchRequest, FetchResponse};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::batch::valid_prefix;
use rand::seq::IteratorRandom;
use tracing::{info, warn};

use super::{RaftCore, RaftError};
use crate::config::{
    FETCH_MAX_WAIT_MS, METADATA_PARTITION, METADATA_TOPIC_ID, METADATA_TOPIC_NAME,
};
use crate::errors;

use crate::io::RaftRequest;
use crate::role::Role;
use crate::storage::{OffsetAndEpoch, QuorumStateStore, ReplicatedLog};

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    pub(crate) fn build_fetch_request(&self) -> RaftRequest {
        let end = self.log.end_offset();
        let partition = FetchPartition::default()
            .with_partition(METADATA_PARTITION)
            .with_current_leader_epoch(self.epoch)
            .with_fetch_offset(end.offset)
            .with_last_fetched_epoch(end.epoch)
            .with_log_start_offset(-1)
            .with_partition_max_bytes(0)
            .with_replica_directory_id(self.config.directory_id)
            .with_high_watermark(self.high_watermark.unwrap_or(i64::MAX));
        RaftRequest::Fetch(
            FetchRequest::default()
                .with_cluster_id(self.cluster_id_field())
                .with_replica_id(self.config.node_id.into())
                .with_replica_state(
                    ReplicaState::default()
                        .with_replica_id(self.config.node_id.into())
                        .with_replica_epoch(-1),
                )
                .with_max_wait_ms(FETCH_MAX_WAIT_MS)
                .with_min_bytes(0)
                .with_max_bytes(self.config.fetch_max_bytes)
                .with_isolation_level(0)
                .with_session_id(0)
                .with_session_epoch(-1)
                .with_topics(vec![FetchTopic::default()
                    .with_topic(StrBytes::from_static_str(METADATA_TOPIC_NAME).into())
                    .with_topic_id(METADATA_TOPIC_ID)
                    .with_partitions(vec![partition])]),
        )
    }

    /// True if [`Self::send_fetch_to_any_voter`] has somewhere to send: a bootstrap server, or
    /// a voter besides this node.
    pub(crate) fn has_discovery_target(&self) -> bool {
        let me = self.config.node_id;
        !self.config.bootstrap_servers.is_empty() || self.voter_set().ids().any(|v| v != me)
    }

    /// Observers (and voters that lost the leader) discover the leader by fetching from a
    /// random bootstrap server (`controller.quorum.bootstrap.servers`, Kafka
    /// `maybeSendFetchToAnyBootstrap`) or, without any, from a random voter; the answer names
    /// the current leader and its endpoint.
    pub(crate) fn send_fetch_to_any_voter(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let me = self.config.node_id;
        let targets: Vec<i32> = if self.config.bootstrap_servers.is_empty() {
            self.voter_set().ids().filter(|&v| v != me).collect()
        } else {
            (0..self.config.bootstrap_servers.len())
                .map(crate::config::bootstrap_server_id)
                .collect()
        };
        let ready: Vec<i32> = targets
            .iter()
            .copied()
            .filter(|&v| self.requests.is_ready(v, now_ms))
            .collect();
        if ready.len() < targets.len() {
            return Ok(()); // one discovery fetch at a time
        }
        if let Some(target) = ready.into_iter().choose(&mut self.rng) {
            let request = self.build_fetch_request();
            self.send(target, now_ms, request);
        }
        Ok(())
    }

    pub(crate) fn handle_fetch_response(
        &mut self,
        now_ms: u64,
        source: i32,
        response: FetchResponse,
    ) -> Result<bool, RaftError> {
        if response.error_code != errors::NONE {
            warn!(
                source,
                error = response.error_code,
                "fetch failed with a top-level error"
            );
            return Ok(false);
        }
        let partition = match response.responses.as_slice() {
            [t] if t.topic_id == METADATA_TOPIC_ID => match t.partitions.as_slice() {
                [p] if p.partition_index == METADATA_PARTITION => p.clone(),
                _ => return Ok(false),
            },
            _ => return Ok(false),
        };
        let leader = (partition.current_leader.leader_id.0 >= 0)
            .then_some(partition.current_leader.leader_id.0);
        // Fetch v17 `NodeEndpoints`: how an observer that knows only bootstrap servers finds
        // the leader, and follows it across failovers (issue 10 item 5).
        for e in &response.node_endpoints {
            if Some(e.node_id.0) == leader {
                self.learn_endpoint(e.node_id.0, e.host.as_str(), i64::from(e.port));
            }
        }
        let response_epoch = partition.current_leader.leader_epoch;
        if let Some(handled) =
            self.handle_common_response(now_ms, partition.error_code, leader, response_epoch)?
        {
            return Ok(handled);
        }
        if partition.error_code != errors::NONE {
            warn!(source, error = partition.error_code, "fetch failed");
            return Ok(false);
        }
        if !matches!(self.role, Role::Follower(_)) {
            return Ok(true);
        }
        let diverging = &partition.diverging_epoch;
        if diverging.epoch >= 0 {
            let target = OffsetAndEpoch::new(diverging.end_offset, diverging.epoch);
            if let Some(hw) = self.high_watermark {
                if target.offset < hw {
                    return Err(RaftError::TruncationBelowHighWatermark {
                        offset: target.offset,
                        high_watermark: hw,
                    });
                }
            }
            let offset = self.truncate_to_end_offset(now_ms, target)?;
            info!(
                offset,
                leader_epoch = target.epoch,
                "truncated the log after a diverging fetch"
            );
        } else if partition.snapshot_id.epoch >= 0 || partition.snapshot_id.end_offset >= 0 {
            if partition.snapshot_id.epoch < 0 || partition.snapshot_id.end_offset < 0 {
                warn!(
                    end_offset = partition.snapshot_id.end_offset,
                    epoch = partition.snapshot_id.epoch,
                    "leader sent an invalid snapshot id"
                );
                return Ok(false);
            }
            let id = OffsetAndEpoch::new(
                partition.snapshot_id.end_offset,
                partition.snapshot_id.epoch,
            );
            self.start_snapshot_fetch(now_ms, id)?;
        } else {
            if let Some(records) = partition.records.as_ref().filter(|r| !r.is_empty()) {
                self.append_fetched(now_ms, records, response_epoch)?;
            }
            if partition.high_watermark >= 0 {
                let hw = partition.high_watermark.min(self.log.end_offset().offset);
                self.advance_high_watermark(hw);
            }
        }
        if let Role::Follower(f) = &mut self.role {
            f.fetch_deadline_ms = now_ms + self.config.fetch_timeout_ms;
            f.has_fetched_from_leader = true;
        }
        Ok(true)
    }

    /// Appends the valid prefix of fetched batches: whole, CRC-valid, contiguous from our log
    /// end offset, and written in an epoch no newer than the response's (case C03: a replica
    /// that just lost leadership may send batches of a newer epoch or garbage). The rest is
    /// dropped and fetched again. Voters flush before the next Fetch acknowledges the data.
    fn append_fetched(
        &mut self,
        now_ms: u64,
        records: &[u8],
        response_epoch: i32,
    ) -> Result<(), RaftError> {
        let end = self.log.end_offset().offset;
        let prefix = valid_prefix(records);
        let mut keep = 0usize;
        for (i, h) in prefix.headers.iter().enumerate() {
            if i == 0 && h.base_offset != end {
                warn!(
                    expected = end,
                    found = h.base_offset,
                    "fetched records do not start at our log end offset"
                );
                return Ok(());
            }
            if h.partition_leader_epoch > response_epoch {
                warn!(
                    offset = h.base_offset,
                    batch_epoch = h.partition_leader_epoch,
                    response_epoch,
                    "dropping batches newer than the leader's epoch"
                );
                break;
            }
            keep += h.size_bytes();
        }
        if let Some(reason) = &prefix.stopped_because {
            if prefix.bytes < records.len() && keep == prefix.bytes {
                tracing::debug!(
                    ?reason,
                    valid_bytes = prefix.bytes,
                    total = records.len(),
                    "ignoring the fetched tail"
                );
            }
        }
        if keep == 0 {
            return Ok(());
        }
        self.log.append_as_follower(&records[..keep])?;
        // Voters flush before the next Fetch acknowledges the data; so do observers, which the
        // leader may promote at any moment (case C11 step 5, Kafka `followersAlwaysFlush`).
        self.log.flush()?;
        self.update_control_state(now_ms)
    }

    /// Begins downloading snapshot `id` (the leader's answer to a Fetch below its log start).
    fn start_snapshot_fetch(&mut self, now_ms: u64, id: OffsetAndEpoch) -> Result<(), RaftError> {
        if self.log.snapshot_ids().contains(&id) {
            // Already here (e.g. downloaded before a restart): just make the log start there.
            info!(
                offset = id.offset,
                epoch = id.epoch,
                "leader asked for snapshot we already have"
            );
            self.install_snapshot(now_ms, id)?;
            return Ok(());
        }
        let sink = self.log.create_snapshot(id)?;
        info!(
            offset = id.offset,
            epoch = id.epoch,
            "fetching snapshot from the leader"
        );
        if let Role::Follower(f) = &mut self.role {
            f.fetching_snapshot = Some(crate::role::FetchingSnapshot { id, sink });
        }
        Ok(())
    }

    /// After a complete snapshot is in place: truncate the log fully to it and move the high
    /// watermark to its end (Kafka `truncateToLatestSnapshot` + `updateFollowerHighWatermark`).
    fn install_snapshot(&mut self, now_ms: u64, id: OffsetAndEpoch) -> Result<(), RaftError> {
        let truncated = self.log.truncate_to_latest_snapshot()?;
        let end = self.log.end_offset();
        if !truncated && end.offset < id.offset {
            return Err(RaftError::Storage(crate::storage::LogError::Inconsistent(
                format!(
                    "snapshot {}-{} installed but the log end offset is {}",
                    id.offset, id.epoch, end.offset
                ),
            )));
        }
        info!(
            offset = id.offset,
            epoch = id.epoch,
            log_end_offset = end.offset,
            truncated,
            "snapshot installed"
        );
        self.advance_high_watermark(id.offset);
        if truncated {
            // The snapshot replaces the log: its voter set and kraft.version are in force.
            self.control.clear();
            self.update_control_state(now_ms)?;
            // The state machine reloads from what the log now starts at: the latest snapshot
            // (older ones, possibly `id` itself, were removed by the truncation).
            self.snapshot_installed = self.log.latest_snapshot_id();
        }
        Ok(())
    }

    pub(crate) fn build_fetch_snapshot_request(
        &self,
        id: OffsetAndEpoch,
        position: u64,
    ) -> RaftRequest {
        use kafka_protocol::messages::fetch_snapshot_request::{
            PartitionSnapshot, SnapshotId, TopicSnapshot,
        };
        let partition = PartitionSnapshot::default()
            .with_partition(METADATA_PARTITION)
            .with_current_leader_epoch(self.epoch)
            .with_snapshot_id(
                SnapshotId::default()
                    .with_end_offset(id.offset)
                    .with_epoch(id.epoch),
            )
            .with_position(position as i64)
            .with_replica_directory_id(self.config.directory_id);
        RaftRequest::FetchSnapshot(
            kafka_protocol::messages::FetchSnapshotRequest::default()
                .with_cluster_id(self.cluster_id_field())
                .with_replica_id(self.config.node_id.into())
                .with_max_bytes(self.config.fetch_snapshot_max_bytes)
                .with_topics(vec![TopicSnapshot::default()
                    .with_name(StrBytes::from_static_str(METADATA_TOPIC_NAME).into())
                    .with_partitions(vec![partition])]),
        )
    }

    /// Kafka `handleFetchSnapshotResponse`: append the chunk; when complete, finish, register,
    /// truncate the log to it. A response for another id or position, or SNAPSHOT_NOT_FOUND,
    /// drops the download and starts over with a Fetch (Java treats the mismatch as fatal; a
    /// restart gets us nothing more than starting over does).
    pub(crate) fn handle_fetch_snapshot_response(
        &mut self,
        now_ms: u64,
        source: i32,
        response: kafka_protocol::messages::FetchSnapshotResponse,
    ) -> Result<bool, RaftError> {
        if response.error_code != errors::NONE {
            warn!(
                source,
                error = response.error_code,
                "FetchSnapshot failed with a top-level error"
            );
            return Ok(false);
        }
        let Some(p) = response
            .topics
            .first()
            .and_then(|t| t.partitions.first())
            .cloned()
        else {
            return Ok(false);
        };
        let leader = (p.current_leader.leader_id.0 >= 0).then_some(p.current_leader.leader_id.0);
        for e in &response.node_endpoints {
            if Some(e.node_id.0) == leader {
                self.learn_endpoint(e.node_id.0, e.host.as_str(), i64::from(e.port));
            }
        }
        if let Some(handled) = self.handle_common_response(
            now_ms,
            p.error_code,
            leader,
            p.current_leader.leader_epoch,
        )? {
            return Ok(handled);
        }
        let fetch_timeout_ms = self.config.fetch_timeout_ms;
        let Role::Follower(f) = &mut self.role else {
            return Ok(true);
        };
        let Some(fetching) = f.fetching_snapshot.as_mut() else {
            return Ok(true);
        };
        let id = OffsetAndEpoch::new(p.snapshot_id.end_offset, p.snapshot_id.epoch);
        if p.error_code == errors::SNAPSHOT_NOT_FOUND || id.offset < 0 || id.epoch < 0 {
            info!(wanted = ?fetching.id, error = p.error_code, "leader no longer has the snapshot; starting over");
            f.fetching_snapshot = None;
            f.fetch_deadline_ms = now_ms + fetch_timeout_ms;
            return Ok(true);
        }
        if p.error_code != errors::NONE {
            warn!(error = p.error_code, "FetchSnapshot failed");
            return Ok(false);
        }
        if id != fetching.id || p.position as u64 != fetching.sink.position() {
            tracing::error!(expected = ?fetching.id, got = ?id, position = p.position, have = fetching.sink.position(), "FetchSnapshot answer does not match the download; starting over");
            f.fetching_snapshot = None;
            return Ok(false);
        }
        fetching.sink.append(&p.unaligned_records)?;
        f.fetch_deadline_ms = now_ms + fetch_timeout_ms;
        if fetching.sink.position() as i64 >= p.size {
            let done = f.fetching_snapshot.take().expect("download in progress");
            let size = match done.sink.finish() {
                Ok(size) => size,
                Err(crate::storage::LogError::InvalidSnapshot {
                    offset,
                    epoch,
                    reason,
                }) => {
                    // The leader's bytes, not our disk: drop it and fetch again.
                    warn!(offset, epoch, %reason, "downloaded snapshot is invalid; fetching again");
                    return Ok(false);
                }
                Err(e) => return Err(e.into()),
            };
            self.log.register_snapshot(done.id)?;
            info!(
                offset = done.id.offset,
                epoch = done.id.epoch,
                size_bytes = size,
                "snapshot downloaded"
            );
            self.install_snapshot(now_ms, done.id)?;
        }
        Ok(true)
    }

    /// Kafka `ReplicatedLog.truncateToEndOffset`.
    fn truncate_to_end_offset(
        &mut self,
        now_ms: u64,
        target: OffsetAndEpoch,
    ) -> Result<i64, RaftError> {
        let offset = if target.epoch == 0 {
            target.offset.min(self.log.end_offset().offset)
        } else {
            let local = self.log.end_offset_for_epoch(target.epoch);
            if local.epoch == target.epoch {
                local.offset.min(target.offset)
            } else {
                local.offset
            }
        };
        if let Some(hw) = self.high_watermark {
            if offset < hw {
                return Err(RaftError::TruncationBelowHighWatermark {
                    offset,
                    high_watermark: hw,
                });
            }
        }
        self.log.truncate_to(offset)?;
        self.log.flush()?;
        // A voter set read from the truncated tail is no longer in force (KIP-853).
        self.control
            .truncate_new_entries(self.log.end_offset().offset);
        self.update_control_state(now_ms)?;
        Ok(offset)
    }
}
