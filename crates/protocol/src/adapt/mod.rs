//! Adapting a request or response struct to the version it will be encoded at.
//!
//! `kafka-protocol` refuses to encode a non-default value in a non-ignorable field the target
//! version lacks, and silently drops ignorable ones. Callers build one struct with the newest
//! fields and let [`adapt_request_for_version`] / [`adapt_response_for_version`] make it fit:
//!
//! 1. **Moves** carry a meaning between fields that differ by version, as Kafka's request
//!    builders do:
//!    - Fetch: `ReplicaState.ReplicaId` (v15+) ⇄ the legacy top-level `ReplicaId` (v≤14)
//!      (`FetchRequest.Builder.build`); topic name (v≤12) ⇄ topic id (v13+) for
//!      `__cluster_metadata` ⇄ `AAAAAAAAAAAAAAAAAAAAAQ` in requests (topics and forgotten
//!      topics) and responses;
//!    - EndQuorumEpoch: `PreferredSuccessors` (v0) ⇄ `PreferredCandidates` (v1);
//!    - AlterPartition: `NewIsr` (v2) ⇄ `NewIsrWithEpochs` (v3, epochs -1 when unknown);
//!    - UpdateFeatures: `AllowDowngrade` (v0) ⇄ `UpgradeType` (v1+: 1 upgrade, 2 safe downgrade),
//!      as `UpdateFeaturesRequest.getFeature` reads them.
//! 2. **Resets**: every field the version lacks is set to its default, recursively, so the
//!    adapted value is exactly what the peer decodes (`decode(encode(x, v), v) == x`). The field
//!    version ranges come from the generated tables in `raft_fields.rs` / `controller_fields.rs`.
//!
//! The same call also normalises a decoded message to the newest layout: adapting a decoded
//! Fetch v14 to v17 moves its `ReplicaId` into `ReplicaState`.
//!
//! Covered apis: Fetch, FetchSnapshot, Vote, BeginQuorumEpoch, EndQuorumEpoch, DescribeQuorum,
//! BrokerRegistration, BrokerHeartbeat, CreateTopics, DeleteTopics, AllocateProducerIds,
//! AlterPartition, ControllerRegistration, DescribeCluster, AssignReplicasToDirs, UpdateFeatures,
//! CreatePartitions, IncrementalAlterConfigs, DescribeConfigs, AlterConfigs, ElectLeaders,
//! UnregisterBroker, AddRaftVoter, RemoveRaftVoter, UpdateRaftVoter, and the admin apis of
//! `admin_fields.rs`. Other apis only get their
//! version checked. `unknown_tagged_fields` are left alone (the codec drops them below the
//! flexible versions).

use kafka_protocol::messages::{ApiKey, BrokerId, RequestKind, ResponseKind, TopicName};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::kinds::{request_api_key, response_api_key};

/// Sets every field `version` lacks to its default, recursing into struct-typed fields.
pub(crate) trait ResetAbsent {
    /// Resets the fields absent at `version`.
    fn reset_absent(&mut self, version: i16);
}

/// Implements [`ResetAbsent`] (and, in tests, `fill::Fill`) for one message struct from its
/// field version table. See `raft_fields.rs` for the format.
macro_rules! versioned_fields {
    ($module:ident :: $name:ident { $( $field:ident : $lo:literal ..= $hi:literal $(=> $kind:ident)? ),* $(,)? }) => {
        impl $crate::adapt::ResetAbsent for $module::$name {
            #[allow(unused_variables)]
            fn reset_absent(&mut self, version: i16) {
                let defaults = <Self as Default>::default();
                $(
                    if !($lo..=$hi).contains(&version) {
                        self.$field = defaults.$field;
                    }
                    $( versioned_fields!(@recurse $kind, self.$field, version); )?
                )*
            }
        }

        #[cfg(test)]
        impl $crate::adapt::fill::Fill for $module::$name {
            fn fill(g: &mut $crate::adapt::fill::Gen) -> Self {
                let mut value = <Self as Default>::default();
                $( value.$field = $crate::adapt::fill::Fill::fill(g); )*
                value
            }
        }
    };
    (@recurse nested, $e:expr, $v:ident) => {
        $crate::adapt::ResetAbsent::reset_absent(&mut $e, $v)
    };
    (@recurse each, $e:expr, $v:ident) => {
        for item in $e.iter_mut() {
            $crate::adapt::ResetAbsent::reset_absent(item, $v)
        }
    };
    (@recurse each_opt, $e:expr, $v:ident) => {
        if let Some(items) = $e.as_mut() {
            for item in items.iter_mut() {
                $crate::adapt::ResetAbsent::reset_absent(item, $v)
            }
        }
    };
}

mod admin_fields;
mod controller_fields;
#[cfg(test)]
pub(crate) mod fill;
mod moves;
mod raft_fields;
#[cfg(test)]
mod tests;

pub use crate::constants::{METADATA_TOPIC_ID, METADATA_TOPIC_NAME};

/// Why a message cannot be adapted to a version without changing its meaning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdaptError {
    /// The version is outside what `kafka-protocol` can encode for this api.
    #[error("{api_key:?} has no version {version} in the codec ({min_version}..={max_version})")]
    UnsupportedVersion {
        /// The api.
        api_key: ApiKey,
        /// The requested version.
        version: i16,
        /// Codec minimum.
        min_version: i16,
        /// Codec maximum.
        max_version: i16,
    },
    /// A pre-vote (Vote v2, KIP-996) cannot be expressed at v0/v1: it would become a real vote.
    #[error("Vote v{version} cannot carry a pre-vote (needs v2)")]
    PreVoteNotSupported {
        /// The requested version.
        version: i16,
    },
    /// The version names topics but only a topic id other than the metadata topic's is known.
    #[error("topic id {topic_id} has no known name for a version that needs one")]
    TopicNameUnknown {
        /// The id without a name.
        topic_id: Uuid,
    },
    /// The version uses topic ids but only a name other than `__cluster_metadata` is known.
    #[error("topic {topic_name:?} has no known id for a version that needs one")]
    TopicIdUnknown {
        /// The name without an id.
        topic_name: String,
    },
}

fn check_version(api_key: Option<ApiKey>, version: i16) -> Result<(), AdaptError> {
    if let Some(api_key) = api_key {
        let range = api_key.valid_versions();
        if !(range.min..=range.max).contains(&version) {
            return Err(AdaptError::UnsupportedVersion {
                api_key,
                version,
                min_version: range.min,
                max_version: range.max,
            });
        }
    }
    Ok(())
}

/// Adapts a request body to `version` (moves, then resets; see the module docs). Idempotent.
///
/// Errors: `version` outside the codec's range for the api; a meaning the version cannot carry
/// (a pre-vote below Vote v2; a topic whose name or id the version needs but which is neither
/// known nor the metadata topic). On error the request may be partly adapted.
pub fn adapt_request_for_version(
    request: &mut RequestKind,
    version: i16,
) -> Result<(), AdaptError> {
    check_version(request_api_key(request), version)?;
    use RequestKind as K;
    match request {
        K::Fetch(r) => {
            moves::fetch_request(r, version)?;
            r.reset_absent(version);
        }
        K::FetchSnapshot(r) => r.reset_absent(version),
        K::Vote(r) => {
            moves::vote_request(r, version)?;
            r.reset_absent(version);
        }
        K::BeginQuorumEpoch(r) => r.reset_absent(version),
        K::EndQuorumEpoch(r) => {
            moves::end_quorum_epoch_request(r, version);
            r.reset_absent(version);
        }
        K::DescribeQuorum(r) => r.reset_absent(version),
        K::BrokerRegistration(r) => r.reset_absent(version),
        K::BrokerHeartbeat(r) => r.reset_absent(version),
        K::CreateTopics(r) => r.reset_absent(version),
        K::DeleteTopics(r) => r.reset_absent(version),
        K::AllocateProducerIds(r) => r.reset_absent(version),
        K::AlterPartition(r) => {
            moves::alter_partition_request(r, version);
            r.reset_absent(version);
        }
        K::ControllerRegistration(r) => r.reset_absent(version),
        K::DescribeCluster(r) => r.reset_absent(version),
        K::AssignReplicasToDirs(r) => r.reset_absent(version),
        K::UpdateFeatures(r) => {
            moves::update_features_request(r, version);
            r.reset_absent(version);
        }
        K::CreatePartitions(r) => r.reset_absent(version),
        K::IncrementalAlterConfigs(r) => r.reset_absent(version),
        K::DescribeConfigs(r) => r.reset_absent(version),
        K::AlterConfigs(r) => r.reset_absent(version),
        K::ElectLeaders(r) => r.reset_absent(version),
        K::UnregisterBroker(r) => r.reset_absent(version),
        K::AddRaftVoter(r) => r.reset_absent(version),
        K::RemoveRaftVoter(r) => r.reset_absent(version),
        K::UpdateRaftVoter(r) => r.reset_absent(version),
        K::DescribeAcls(r) => r.reset_absent(version),
        K::CreateAcls(r) => r.reset_absent(version),
        K::DeleteAcls(r) => r.reset_absent(version),
        K::CreateDelegationToken(r) => r.reset_absent(version),
        K::RenewDelegationToken(r) => r.reset_absent(version),
        K::ExpireDelegationToken(r) => r.reset_absent(version),
        K::AlterPartitionReassignments(r) => r.reset_absent(version),
        K::ListPartitionReassignments(r) => r.reset_absent(version),
        K::AlterClientQuotas(r) => r.reset_absent(version),
        K::AlterUserScramCredentials(r) => r.reset_absent(version),
        _ => {}
    }
    Ok(())
}

/// Adapts a response body to `version` (moves, then resets; see the module docs). Idempotent.
///
/// Errors: `version` outside the codec's range for the api; a Fetch response topic whose name
/// or id the version needs but which is neither known nor the metadata topic.
pub fn adapt_response_for_version(
    response: &mut ResponseKind,
    version: i16,
) -> Result<(), AdaptError> {
    check_version(response_api_key(response), version)?;
    use ResponseKind as K;
    match response {
        K::Fetch(r) => {
            moves::fetch_response(r, version)?;
            r.reset_absent(version);
        }
        K::FetchSnapshot(r) => r.reset_absent(version),
        K::Vote(r) => r.reset_absent(version),
        K::BeginQuorumEpoch(r) => r.reset_absent(version),
        K::EndQuorumEpoch(r) => r.reset_absent(version),
        K::DescribeQuorum(r) => r.reset_absent(version),
        K::BrokerRegistration(r) => r.reset_absent(version),
        K::BrokerHeartbeat(r) => r.reset_absent(version),
        K::CreateTopics(r) => r.reset_absent(version),
        K::DeleteTopics(r) => r.reset_absent(version),
        K::AllocateProducerIds(r) => r.reset_absent(version),
        K::AlterPartition(r) => r.reset_absent(version),
        K::ControllerRegistration(r) => r.reset_absent(version),
        K::DescribeCluster(r) => r.reset_absent(version),
        K::AssignReplicasToDirs(r) => r.reset_absent(version),
        K::UpdateFeatures(r) => r.reset_absent(version),
        K::CreatePartitions(r) => r.reset_absent(version),
        K::IncrementalAlterConfigs(r) => r.reset_absent(version),
        K::DescribeConfigs(r) => r.reset_absent(version),
        K::AlterConfigs(r) => r.reset_absent(version),
        K::ElectLeaders(r) => r.reset_absent(version),
        K::UnregisterBroker(r) => r.reset_absent(version),
        K::AddRaftVoter(r) => r.reset_absent(version),
        K::RemoveRaftVoter(r) => r.reset_absent(version),
        K::UpdateRaftVoter(r) => r.reset_absent(version),
        K::DescribeAcls(r) => r.reset_absent(version),
        K::CreateAcls(r) => r.reset_absent(version),
        K::DeleteAcls(r) => r.reset_absent(version),
        K::CreateDelegationToken(r) => r.reset_absent(version),
        K::RenewDelegationToken(r) => r.reset_absent(version),
        K::ExpireDelegationToken(r) => r.reset_absent(version),
        K::AlterPartitionReassignments(r) => r.reset_absent(version),
        K::ListPartitionReassignments(r) => r.reset_absent(version),
        K::AlterClientQuotas(r) => r.reset_absent(version),
        K::AlterUserScramCredentials(r) => r.reset_absent(version),
        _ => {}
    }
    Ok(())
}

/// The replica id a Fetch request carries whatever its version: `ReplicaState.ReplicaId` when
/// set (v15+), else the legacy top-level `ReplicaId` (v≤14). -1 for a consumer.
pub fn fetch_replica_id(request: &kafka_protocol::messages::FetchRequest) -> BrokerId {
    if request.replica_state.replica_id != BrokerId(-1) {
        request.replica_state.replica_id
    } else {
        request.replica_id
    }
}

/// The metadata topic's name as a `TopicName`.
pub fn metadata_topic_name() -> TopicName {
    TopicName(StrBytes::from_static_str(METADATA_TOPIC_NAME))
}
