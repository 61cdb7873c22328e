//! Adapting a request or response struct to the version it will be encoded at.
//!
//! `kafka-protocol` refuses to encode a non-default value in a non-ignorable field the target
//! version lacks, and silently drops ignorable ones. Callers build one struct with the newest
//! fields and let [`adapt_request_for_version`] / [`adapt_response_for_version`] make it fit,
//! whatever the api:
//!
//! 1. **Moves** (`moves.rs`, the only per-api code) carry a meaning between fields that differ
//!    by version, as Kafka's request builders do:
//!    - Fetch: `ReplicaState.ReplicaId` (v15+) ⇄ the legacy top-level `ReplicaId` (v≤14)
//!      (`FetchRequest.Builder.build`); topic name (v≤12) ⇄ topic id (v13+) for
//!      `__cluster_metadata` ⇄ `AAAAAAAAAAAAAAAAAAAAAQ` in requests (topics and forgotten
//!      topics) and responses;
//!    - Vote: not a move but a refusal: a pre-vote cannot be expressed below v2;
//!    - EndQuorumEpoch: `PreferredSuccessors` (v0) ⇄ `PreferredCandidates` (v1);
//!    - AlterPartition: `NewIsr` (v2) ⇄ `NewIsrWithEpochs` (v3, epochs -1 when unknown);
//!    - UpdateFeatures: `AllowDowngrade` (v0) ⇄ `UpgradeType` (v1+: 1 upgrade, 2 safe downgrade),
//!      as `UpdateFeaturesRequest.getFeature` reads them.
//! 2. **Resets** (`reset.rs`): every field the version lacks is set to its default, recursively,
//!    so the adapted value is exactly what the peer decodes (`decode(encode(x, v), v) == x`).
//!
//! The resets cover every request and response of kafka-protocol, from generated code:
//! `generator/` reads the `Supported API versions` doc comments of the vendored crate's message
//! sources and writes `generated/fields.rs`, one field version table per struct (expanded by
//! `versioned_fields!` into `ResetAbsent` and, for tests, `fill::Fill`), and `generated/apis.rs`,
//! the list of apis (`every_api!`) from which every `RequestKind` / `ResponseKind` dispatch is
//! derived (`reset.rs`, `fill.rs`, `crate::kinds`). A unit test fails while a checked-in file
//! differs from what the generator gives; regenerate with
//! `cargo run -p kraftwerk-protocol --example gen_field_tables` after upgrading the crate.
//!
//! The version is checked against `ApiKey::valid_versions`. For OffsetCommit v10, OffsetFetch
//! v10 and InitProducerId v6 that range is one wider than what the crate's request codecs encode
//! (Kafka's unstable newest versions); such requests adapt but fail to encode.
//!
//! The same call also normalises a decoded message to the newest layout: adapting a decoded
//! Fetch v14 to v17 moves its `ReplicaId` into `ReplicaState`. `unknown_tagged_fields` are left
//! alone (the codec drops them below the flexible versions).
//!
//! `fill` (in tests, and for other crates' tests with the `testing` feature) draws random values
//! of every message struct.

use kafka_protocol::messages::{ApiKey, BrokerId, RequestKind, ResponseKind, TopicName};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::kinds::{request_api_key, response_api_key};

#[cfg(any(test, feature = "testing"))]
pub mod fill;
pub(crate) mod generated;
#[cfg(test)]
mod generator;
mod moves;
mod reset;
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
    moves::request(request, version)?;
    reset::request(request, version);
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
    moves::response(response, version)?;
    reset::response(response, version);
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
