//! ApiVersions (api 18, v0–5) answers, built the way a Java controller builds them
//! (`ControllerApis.handleApiVersionsRequest`, `SimpleApiVersionManager.apiVersionResponse`,
//! `ApiVersionsResponse.Builder`).
//!
//! Rules that matter for interoperability:
//! - the response header is always v0, even for flexible v3/v4 bodies (handled by
//!   [`crate::codec::encode_response`]);
//! - a request at a version we do not support is answered with `UNSUPPORTED_VERSION` in a v0 body
//!   listing our ApiVersions range, so the client retries with a version we speak (KIP-511);
//! - v3+ requests whose `ClientSoftwareName`/`ClientSoftwareVersion` do not match Kafka's pattern
//!   get `INVALID_REQUEST` with an empty API list;
//! - `SupportedFeatures` (v3+) omits features whose minimum is 0 when the request version is
//!   below 4 (KAFKA-17492: older clients fail to parse them);
//! - `FinalizedFeatures` omits features finalized at level 0 (`createFinalizedFeatureKeys`);
//!   before the node has caught up with the high watermark once there are none and the epoch is
//!   -1 (KAFKA-19964, see [`ApiVersionsFeatures::finalized`]);
//! - a v5+ request naming a `ClusterId` that is not ours, or with it a `NodeId` that is not ours,
//!   gets `REBOOTSTRAP_REQUIRED` (KIP-1242, [`identity_mismatch`]).

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::api_versions_response::{
    ApiVersion, FinalizedFeatureKey, SupportedFeatureKey,
};
use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, ApiVersionsResponse};
use kafka_protocol::protocol::StrBytes;

use super::api_table::ApiTable;

/// A feature this node can run and its supported level range, e.g. `metadata.version` [7, 27]
/// or `kraft.version` [0, 1] (Kafka's `SupportedVersionRange`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupportedFeature {
    /// Feature name, e.g. `metadata.version`.
    pub name: String,
    /// Lowest supported level, inclusive.
    pub min_version: i16,
    /// Highest supported level, inclusive.
    pub max_version: i16,
}

/// The cluster's finalized feature levels and the metadata offset they were read at
/// (Kafka's `FinalizedFeatures`; a Java controller reports the offset of its last applied image).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalizedFeatures {
    /// `FinalizedFeaturesEpoch`: metadata log offset of the image the levels come from.
    pub epoch: i64,
    /// `(feature name, finalized level)`; level 0 entries are not reported.
    pub levels: Vec<(String, i16)>,
}

/// What a node reports about features in ApiVersions v3+. Entries are reported in the given order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApiVersionsFeatures {
    /// Features this node supports.
    pub supported: Vec<SupportedFeature>,
    /// Finalized levels, when this node knows them (`None` ⇒ epoch -1 and no finalized features).
    /// Kafka 4.4 (KAFKA-19964) reports `None` until its metadata loader first caught up with
    /// the high watermark (`FinalizedFeatures.unknown()` in `FeaturesPublisher`); before that
    /// 4.1 reported the minimum metadata.version.
    pub finalized: Option<FinalizedFeatures>,
}

/// Highest ApiVersions version this code can answer (Kafka 4.4's schema, KIP-1242).
pub const API_VERSIONS_MAX_VERSION: i16 = 5;

/// The cluster and node a listener belongs to, checked against the `ClusterId` / `NodeId` of
/// ApiVersions v5+ requests (KIP-1242).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    /// This node's `cluster.id` (from `meta.properties`).
    pub cluster_id: String,
    /// This node's `node.id`.
    pub node_id: i32,
}

/// Whether a request decoded at `version` names another cluster or node than `ours`
/// (KIP-1242; the test of Kafka 4.4's `KafkaApis.handleApiVersionsRequest`): only from v5 and
/// only when the request carries a `ClusterId`; then a different cluster id, or a `NodeId`
/// other than ours (the default -1 included), is a mismatch. Kafka 4.4's `ControllerApis`
/// does not make this test; kraftwerk makes it on the controller listener too.
pub fn identity_mismatch(
    request: &ApiVersionsRequest,
    version: i16,
    ours: &ServerIdentity,
) -> bool {
    match &request.cluster_id {
        Some(cluster_id) if version >= 5 => {
            cluster_id.as_str() != ours.cluster_id || request.node_id != ours.node_id
        }
        _ => false,
    }
}

/// Whether `s` matches Kafka's client software name/version pattern
/// `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?` (`ApiVersionsRequest.SOFTWARE_NAME_VERSION_PATTERN`).
pub fn is_valid_client_software_field(s: &str) -> bool {
    let bytes = s.as_bytes();
    let edge_ok = |b: u8| b.is_ascii_alphanumeric();
    let inner_ok = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'.';
    match bytes {
        [] => false,
        [only] => edge_ok(*only),
        [first, middle @ .., last] => {
            edge_ok(*first) && edge_ok(*last) && middle.iter().all(|b| inner_ok(*b))
        }
    }
}

/// Whether an ApiVersions request decoded at `version` is acceptable (`ApiVersionsRequest.isValid`):
/// before v3 always; from v3 the client software name and version must match the pattern.
pub fn is_valid_api_versions_request(request: &ApiVersionsRequest, version: i16) -> bool {
    version < 3
        || (is_valid_client_software_field(&request.client_software_name)
            && is_valid_client_software_field(&request.client_software_version))
}

fn api_version_entries(table: &ApiTable) -> Vec<ApiVersion> {
    table
        .ranges()
        .iter()
        .map(|r| {
            ApiVersion::default()
                .with_api_key(r.api_key as i16)
                .with_min_version(r.min_version)
                .with_max_version(r.max_version)
        })
        .collect()
}

/// The successful ApiVersions response body for a request at `request_version` (0..=5): every
/// API of `table`, plus features for v3+.
pub fn api_versions_response(
    table: &ApiTable,
    features: &ApiVersionsFeatures,
    request_version: i16,
) -> ApiVersionsResponse {
    let mut response = ApiVersionsResponse::default()
        .with_error_code(0)
        .with_api_keys(api_version_entries(table))
        .with_throttle_time_ms(0);
    if request_version >= 3 {
        // KAFKA-17492: clients older than v4 cannot parse a supported range starting at 0.
        let drop_min_zero = request_version < 4;
        response.supported_features = features
            .supported
            .iter()
            .filter(|f| !(drop_min_zero && f.min_version == 0))
            .map(|f| {
                SupportedFeatureKey::default()
                    .with_name(StrBytes::from_string(f.name.clone()))
                    .with_min_version(f.min_version)
                    .with_max_version(f.max_version)
            })
            .collect();
        if let Some(finalized) = &features.finalized {
            response.finalized_features_epoch = finalized.epoch;
            response.finalized_features = finalized
                .levels
                .iter()
                .filter(|(_, level)| *level != 0)
                .map(|(name, level)| {
                    FinalizedFeatureKey::default()
                        .with_name(StrBytes::from_string(name.clone()))
                        .with_min_version_level(*level)
                        .with_max_version_level(*level)
                })
                .collect();
        }
    }
    response
}

/// The KIP-511 answer to an ApiVersions request at a version we do not support: error
/// `UNSUPPORTED_VERSION` and our ApiVersions range, to be encoded as a **v0** body
/// (`ApiVersionsRequest.getErrorResponse` on a request treated as v0, so throttle time is 0).
pub fn unsupported_version_response(table: &ApiTable) -> ApiVersionsResponse {
    let range = table.range(ApiKey::ApiVersions);
    let (min_version, max_version) = range.map_or((0, API_VERSIONS_MAX_VERSION), |r| {
        (r.min_version, r.max_version)
    });
    ApiVersionsResponse::default()
        .with_error_code(ResponseError::UnsupportedVersion.code())
        .with_api_keys(vec![ApiVersion::default()
            .with_api_key(ApiKey::ApiVersions as i16)
            .with_min_version(min_version)
            .with_max_version(max_version)])
}

/// The answer to an invalid v3+ request (bad client software name/version): `INVALID_REQUEST`,
/// no APIs, encoded at the request's version.
pub fn invalid_request_response() -> ApiVersionsResponse {
    ApiVersionsResponse::default().with_error_code(ResponseError::InvalidRequest.code())
}

/// The answer to a v5+ request for another cluster or node: `REBOOTSTRAP_REQUIRED`, no APIs,
/// encoded at the request's version (`ApiVersionsRequest.getErrorResponse`).
pub fn rebootstrap_required_response() -> ApiVersionsResponse {
    ApiVersionsResponse::default().with_error_code(ResponseError::RebootstrapRequired.code())
}

/// The complete server-side answer to a decoded ApiVersions request at a supported version, in
/// Kafka's order: an invalid request, then (with `identity`) a request for another cluster or
/// node, then the full answer.
pub fn answer_api_versions(
    request: &ApiVersionsRequest,
    request_version: i16,
    table: &ApiTable,
    features: &ApiVersionsFeatures,
    identity: Option<&ServerIdentity>,
) -> ApiVersionsResponse {
    if !is_valid_api_versions_request(request, request_version) {
        invalid_request_response()
    } else if identity.is_some_and(|ours| identity_mismatch(request, request_version, ours)) {
        rebootstrap_required_response()
    } else {
        api_versions_response(table, features, request_version)
    }
}

#[cfg(test)]
mod tests;
