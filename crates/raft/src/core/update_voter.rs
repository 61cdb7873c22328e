//! UpdateRaftVoter (KIP-853, api 82) on the leader (`KafkaRaftClient.handleUpdateVoterRequest` +
//! `UpdateVoterHandler`): a voter reports its directory id, endpoints and supported
//! kraft.version range.
//!
//! At kraft.version 0 (a static quorum) the report goes into the leader's in-memory voter set,
//! which an upgrade to kraft.version 1 writes to the log (see `core::kraft_upgrade`); Kafka 4.1+
//! followers send it to every new leader until it answers `NONE` or `UNSUPPORTED_VERSION`. At
//! kraft.version 1 an updated `VotersRecord` is appended.

use kafka_protocol::messages::update_raft_voter_response::CurrentLeader;
use kafka_protocol::messages::{UpdateRaftVoterRequest, UpdateRaftVoterResponse};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::RaftCore;
use crate::errors;
use crate::role::Role;
use crate::storage::{QuorumStateStore, ReplicatedLog};
use crate::voters::{ReplicaKey, VoterNode};

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    /// The answer to UpdateRaftVoter, checked in Kafka's order: cluster id, leader-only epoch
    /// validation, a voter key with a directory id and an endpoint on our controller listener
    /// (`INVALID_REQUEST` otherwise: only a malformed request lacks them, and Java peers treat
    /// that error as fatal), a known high watermark (`REQUEST_TIMED_OUT`), then
    /// `UNSUPPORTED_VERSION` (kraft.version 0: the voter set is static).
    ///
    /// At kraft.version ≥ 1 (Kafka `UpdateVoterHandler`): the last voter change must be
    /// committed (`REQUEST_TIMED_OUT`), the key (id and directory id) a voter
    /// (`VOTER_NOT_FOUND`), its supported range must include the kraft.version in force
    /// (`INVALID_REQUEST`); then the updated `VotersRecord` (new endpoints, new range) is
    /// appended and the answer is `NONE` at once.
    pub(crate) fn handle_update_raft_voter_request(
        &mut self,
        now_ms: u64,
        request: &UpdateRaftVoterRequest,
    ) -> Result<UpdateRaftVoterResponse, crate::core::RaftError> {
        let error = self.update_voter_error(now_ms, request)?;
        Ok(self.update_voter_response(error))
    }

    fn update_voter_error(
        &mut self,
        now_ms: u64,
        request: &UpdateRaftVoterRequest,
    ) -> Result<i16, crate::core::RaftError> {
        let error = if !self.cluster_id_matches(&request.cluster_id) {
            errors::INCONSISTENT_CLUSTER_ID
        } else if let Some(e) = self.leader_only_error(request.current_leader_epoch) {
            e
        } else if request.voter_id < 0
            || request.voter_directory_id == Uuid::nil()
            || !request.listeners.iter().any(|l| {
                l.name
                    .as_str()
                    .eq_ignore_ascii_case(&self.config.listener_name)
            })
        {
            errors::INVALID_REQUEST
        } else if matches!(&self.role, Role::Leader(l) if l.high_watermark.is_none()) {
            errors::REQUEST_TIMED_OUT
        } else if self.kraft_version() < 1 {
            self.update_volatile_voter(request)
        } else {
            return self.update_voter_in_log(now_ms, request);
        };
        Ok(error)
    }

    fn update_voter_in_log(
        &mut self,
        now_ms: u64,
        request: &UpdateRaftVoterRequest,
    ) -> Result<i16, crate::core::RaftError> {
        let hw = self.high_watermark.unwrap_or(0);
        if self.control.voters_offset().is_none_or(|o| o >= hw)
            || self.pending_voter_change.is_some()
        {
            return Ok(errors::REQUEST_TIMED_OUT);
        }
        let key = ReplicaKey::new(request.voter_id, request.voter_directory_id);
        let range = (
            request.k_raft_version_feature.min_supported_version,
            request.k_raft_version_feature.max_supported_version,
        );
        let node = voter_node_of(request, range);
        if !self.voter_set().is_voter(key) {
            return Ok(errors::VOTER_NOT_FOUND);
        }
        if !(range.0..=range.1).contains(&self.kraft_version()) {
            return Ok(errors::INVALID_REQUEST);
        }
        let Some(updated) = self.voter_set().update_voter(node) else {
            return Ok(errors::VOTER_NOT_FOUND);
        };
        if &updated != self.voter_set() {
            self.append_voters_record(now_ms, &updated)?;
        }
        Ok(errors::NONE)
    }

    fn update_voter_response(&self, error: i16) -> UpdateRaftVoterResponse {
        let mut leader = CurrentLeader::default()
            .with_leader_id(self.leader_id().unwrap_or(-1).into())
            .with_leader_epoch(self.epoch)
            .with_host(StrBytes::from_static_str(""))
            .with_port(-1);
        if let Some((_, e)) = self.leader_endpoint() {
            leader = leader
                .with_host(StrBytes::from_string(e.host.clone()))
                .with_port(i32::from(e.port));
        }
        UpdateRaftVoterResponse::default()
            .with_error_code(error)
            .with_current_leader(leader)
    }
}

/// The voter an UpdateRaftVoter describes: its key, its listeners (names upper-cased, as
/// Kafka's `ListenerName.normalised`) and the supported kraft.version `range`.
pub(crate) fn voter_node_of(request: &UpdateRaftVoterRequest, range: (i16, i16)) -> VoterNode {
    VoterNode {
        key: ReplicaKey::new(request.voter_id, request.voter_directory_id),
        endpoints: crate::voters::endpoints_from!(request.listeners),
        supported_kraft_versions: range,
    }
}
