//! Static → dynamic quorum: the kraft.version 0 → 1 upgrade (KIP-853 with Kafka 4.1's
//! KAFKA-16538; Kafka `LeaderState.maybeAppendUpgradedKRaftVersion`, `UpdateVoterHandler` at
//! kraft.version 0, `KafkaRaftClient.pollFollowerAsVoter`).
//!
//! A static voter set (`controller.quorum.voters`) knows no directory ids and no supported
//! kraft.version ranges, so the leader cannot write it as a `VotersRecord` on its own. At
//! kraft.version 0:
//! 1. a new leader starts an in-memory copy of the static set with its own entry filled in
//!    ([`crate::leader::LeaderState::volatile_voters`]);
//! 2. every follower voter reports itself to each new leader with UpdateRaftVoter (directory
//!    id, endpoints, kraft.version range), 3 × fetch timeout after it began following, until the
//!    leader accepts (`NONE`) or cannot take it (`UNSUPPORTED_VERSION`, a Kafka 4.0 leader);
//!    the leader updates the in-memory set, matching by id only;
//! 3. `kafka-features upgrade --feature kraft.version=1` reaches the controller, which calls
//!    [`RaftCore::upgrade_kraft_version`]: once every voter has reported and supports 1, the
//!    leader appends one control batch holding `KRaftVersionRecord(1)` and the `VotersRecord`
//!    of the in-memory set. From that batch on, the set in force comes from the log and voters
//!    can be added and removed.

use kafka_protocol::messages::update_raft_voter_request::{KRaftVersionFeature, Listener};
use kafka_protocol::messages::{UpdateRaftVoterRequest, UpdateRaftVoterResponse};
use kraftwerk_records::control::ControlRecord;
use tracing::info;

use super::{RaftCore, RaftError};
use crate::errors;
use crate::io::RaftRequest;
use crate::role::Role;
use crate::storage::{QuorumStateStore, ReplicatedLog};
use crate::voters::SUPPORTED_KRAFT_VERSIONS;

/// Why the leader did not upgrade kraft.version ([`RaftCore::upgrade_kraft_version`]).
#[derive(Debug, thiserror::Error)]
pub enum KraftUpgradeError {
    /// This node does not lead `epoch` (Kafka `NotLeaderException`; the controller answers
    /// NOT_CONTROLLER).
    #[error("Upgrade kraft version failed because this node is not the leader of epoch {0}")]
    NotLeader(i32),
    /// Kafka `InvalidUpdateVersionException`: `INVALID_UPDATE_VERSION` with this message.
    #[error("{0}")]
    InvalidUpdateVersion(String),
    /// What Kafka reports with an `IllegalStateException` (the client sees
    /// `UNKNOWN_SERVER_ERROR`): the in-memory set lost a voter or lacks a directory id.
    #[error("{0}")]
    IllegalState(String),
    /// Appending the control batch failed: the node must stop.
    #[error(transparent)]
    Fatal(#[from] RaftError),
}

/// Kafka's name of a kraft.version level in messages (`KRaftVersion` enum constants).
fn version_name(level: i16) -> String {
    format!("KRAFT_VERSION_{level}")
}

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    /// Upgrades the finalized kraft.version to `version` as the leader of `epoch` (Kafka
    /// `KafkaRaftClient.upgradeKRaftVersion`). `Ok(false)`: already at `version`, nothing to
    /// do; `Ok(true)`: the upgrade is possible and, unless `validate_only`, its control batch
    /// (`KRaftVersionRecord` + `VotersRecord`) was appended; the new version is in force at once,
    /// committed when the high watermark passes the batch.
    pub fn upgrade_kraft_version(
        &mut self,
        now_ms: u64,
        epoch: i32,
        version: i16,
        validate_only: bool,
    ) -> Result<bool, KraftUpgradeError> {
        let Role::Leader(leader) = &self.role else {
            return Err(KraftUpgradeError::NotLeader(epoch));
        };
        if epoch != self.epoch {
            return Err(KraftUpgradeError::NotLeader(epoch));
        }
        let current = self.kraft_version();
        if current == version {
            return Ok(false);
        }
        if current > version {
            return Err(KraftUpgradeError::InvalidUpdateVersion(format!(
                "Invalid upgrade of kraft.version from version {} to {} because the new version is a downgrade",
                version_name(current),
                version_name(version)
            )));
        }
        let Some(volatile) = leader.volatile_voters.clone().filter(|_| version == 1) else {
            return Err(KraftUpgradeError::InvalidUpdateVersion(format!(
                "Invalid upgrade of kraft.version from version {} to {}",
                version_name(current),
                version_name(version)
            )));
        };
        let persisted = self.voter_set();
        if !volatile.ids().eq(persisted.ids()) {
            return Err(KraftUpgradeError::IllegalState(format!(
                "Unable to update kraft.version to {} due to missing voters {:?} compared to {:?}",
                version_name(version),
                volatile.ids().collect::<Vec<_>>(),
                persisted.ids().collect::<Vec<_>>()
            )));
        }
        if !volatile.supports_kraft_version(version) {
            info!(version, voters = ?volatile, "not all voters support the kraft.version");
            return Err(KraftUpgradeError::InvalidUpdateVersion(format!(
                "Invalid upgrade of kraft.version to {} because not all of the voters support it",
                version_name(version)
            )));
        }
        if !volatile.all_directory_ids_known() {
            return Err(KraftUpgradeError::IllegalState(format!(
                "Directory id must be known for all of the voters: {:?}",
                volatile.ids().collect::<Vec<_>>()
            )));
        }
        if validate_only {
            return Ok(true);
        }
        let mut records = vec![ControlRecord::kraft_version(version)];
        if &volatile != persisted {
            records.push(ControlRecord::Voters(volatile.to_record()));
        }
        if let Role::Leader(l) = &mut self.role {
            l.volatile_voters = None;
        }
        let offset = self.append_control_records(now_ms, &records)?;
        info!(
            offset,
            version,
            voters = ?volatile.ids().collect::<Vec<_>>(),
            "appended the kraft.version upgrade"
        );
        Ok(true)
    }

    /// UpdateRaftVoter on the leader at kraft.version 0, after the common checks (Kafka
    /// `UpdateVoterHandler` with an in-memory voter set): no voter change pending
    /// (`REQUEST_TIMED_OUT`), a supported range that includes 0 (`INVALID_REQUEST`), a voter
    /// id of the static set (`VOTER_NOT_FOUND`); the in-memory set takes the voter's directory
    /// id, endpoints and range. Kafka also sends ApiVersions to the reported endpoint first;
    /// the voter that sent this request is reachable, so the answer is given at once.
    pub(crate) fn update_volatile_voter(&mut self, request: &UpdateRaftVoterRequest) -> i16 {
        if self.pending_voter_change.is_some() {
            return errors::REQUEST_TIMED_OUT;
        }
        let range = (
            request.k_raft_version_feature.min_supported_version,
            request.k_raft_version_feature.max_supported_version,
        );
        if !(range.0..=range.1).contains(&self.kraft_version()) {
            return errors::INVALID_REQUEST;
        }
        let node = super::update_voter::voter_node_of(request, range);
        let Role::Leader(leader) = &mut self.role else {
            return errors::NOT_LEADER_OR_FOLLOWER;
        };
        let Some(volatile) = &leader.volatile_voters else {
            // Upgraded in this epoch: the set is in the log now (Kafka answers the same while
            // the upgrade batch is not yet written).
            return errors::REQUEST_TIMED_OUT;
        };
        let Some(updated) = volatile.update_voter_ignoring_directory_id(node) else {
            return errors::VOTER_NOT_FOUND;
        };
        if &updated != volatile {
            info!(
                voter = request.voter_id,
                directory_id = %request.voter_directory_id,
                supported_kraft_versions = ?range,
                "a voter reported itself for the kraft.version upgrade"
            );
            leader.volatile_voters = Some(updated);
        }
        errors::NONE
    }

    /// True if this follower voter should report itself to its leader now (Kafka 4.1
    /// `shouldSendUpdateVoteRequest`): not yet accepted by this leader, and either the static
    /// quorum (kraft.version 0: the leader needs every voter's key for an upgrade) or the voter
    /// set in force records other endpoints or another range for us.
    pub(crate) fn should_send_update_voter(&self) -> bool {
        let Role::Follower(f) = &self.role else {
            return false;
        };
        if f.has_updated_leader || !self.is_voter() {
            return false;
        }
        let Some(local) = self.local_voter_node() else {
            return false;
        };
        self.kraft_version() == 0 || self.voter_set().voter_node_needs_update(&local)
    }

    /// The UpdateRaftVoter this voter sends its leader (Kafka `RaftUtil.updateVoterRequest`).
    pub(crate) fn build_update_voter_request(&self) -> Option<RaftRequest> {
        let local = self.local_voter_node()?;
        Some(RaftRequest::UpdateRaftVoter(
            UpdateRaftVoterRequest::default()
                .with_cluster_id(self.cluster_id_field())
                .with_current_leader_epoch(self.epoch)
                .with_voter_id(self.config.node_id)
                .with_voter_directory_id(self.config.directory_id)
                .with_listeners(crate::voters::endpoint_list!(Listener, local.endpoints))
                .with_k_raft_version_feature(
                    KRaftVersionFeature::default()
                        .with_min_supported_version(SUPPORTED_KRAFT_VERSIONS.0)
                        .with_max_supported_version(SUPPORTED_KRAFT_VERSIONS.1),
                ),
        ))
    }

    /// The leader's answer to our UpdateRaftVoter: `NONE`, or `UNSUPPORTED_VERSION` from a
    /// leader that cannot take it, ends the reports to this leader; anything else is retried
    /// after the next period. Returns false to back off.
    pub(crate) fn handle_update_voter_response(
        &mut self,
        source: i32,
        response: &UpdateRaftVoterResponse,
    ) -> bool {
        let accepted = matches!(
            response.error_code,
            errors::NONE | errors::UNSUPPORTED_VERSION
        );
        if let Role::Follower(f) = &mut self.role {
            if f.leader_id == source && accepted {
                f.has_updated_leader = true;
            }
        }
        accepted
    }

    /// Writes the accumulator, then one control batch of `records`; returns its base offset.
    pub(crate) fn append_control_records(
        &mut self,
        now_ms: u64,
        records: &[ControlRecord],
    ) -> Result<i64, RaftError> {
        self.flush_accumulator(now_ms)?;
        let base = self.log.end_offset().offset;
        let batch =
            kraftwerk_records::control::control_batch(base, self.epoch, now_ms as i64, records);
        self.log.append_as_leader(&batch, self.epoch)?;
        if let Role::Leader(l) = &mut self.role {
            l.accumulator.base_offset = base + records.len() as i64;
        }
        self.after_leader_append(now_ms)?;
        Ok(base)
    }
}
