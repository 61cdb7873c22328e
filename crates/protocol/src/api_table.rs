//! The set of APIs and version ranges one side speaks: what a listener advertises in ApiVersions
//! (Kafka's `ApiVersionManager.enabledApis` + `ApiKeys.toApiVersion`) and what the outbound peer
//! client is willing to send.
//!
//! The server decides the contents: only APIs that have a handler and only versions whose
//! semantics are implemented (advertising Vote v2 makes Java peers send pre-votes, for example).

use kafka_protocol::messages::ApiKey;

/// One API and the inclusive range of versions spoken for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiRange {
    /// The API.
    pub api_key: ApiKey,
    /// Lowest version, inclusive.
    pub min_version: i16,
    /// Highest version, inclusive.
    pub max_version: i16,
}

impl ApiRange {
    /// Whether `version` lies in the range.
    pub fn contains(&self, version: i16) -> bool {
        (self.min_version..=self.max_version).contains(&version)
    }

    /// The highest version in both this range and `[their_min, their_max]`, as Kafka's
    /// `NodeApiVersions.latestUsableVersion` picks it; `None` when the ranges do not overlap.
    pub fn highest_common_version(&self, their_min: i16, their_max: i16) -> Option<i16> {
        let min = self.min_version.max(their_min);
        let max = self.max_version.min(their_max);
        (min <= max).then_some(max)
    }
}

/// Why an [`ApiTable`] cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiTableError {
    /// `min > max`.
    #[error("{api_key:?}: empty version range {min_version}..={max_version}")]
    EmptyRange {
        /// The API.
        api_key: ApiKey,
        /// Requested minimum.
        min_version: i16,
        /// Requested maximum.
        max_version: i16,
    },
    /// The range reaches outside what the `kafka-protocol` codec can encode and decode.
    #[error("{api_key:?}: versions {min_version}..={max_version} exceed the codec's {codec_min}..={codec_max}")]
    OutsideCodec {
        /// The API.
        api_key: ApiKey,
        /// Requested minimum.
        min_version: i16,
        /// Requested maximum.
        max_version: i16,
        /// Codec minimum.
        codec_min: i16,
        /// Codec maximum.
        codec_max: i16,
    },
    /// The same API listed twice.
    #[error("{0:?} listed twice")]
    Duplicate(ApiKey),
}

/// A validated list of [`ApiRange`]s, at most one per API, kept in api-key order (the order Java
/// lists them in an ApiVersions response).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApiTable {
    ranges: Vec<ApiRange>,
}

impl ApiTable {
    /// Builds a table from `(api, min_version, max_version)` triples.
    ///
    /// Errors: an empty range, a range outside `ApiKey::valid_versions()` of `kafka-protocol`
    /// (we could not decode such requests), or a duplicate API.
    pub fn new(
        ranges: impl IntoIterator<Item = (ApiKey, i16, i16)>,
    ) -> Result<Self, ApiTableError> {
        let mut out: Vec<ApiRange> = Vec::new();
        for (api_key, min_version, max_version) in ranges {
            if min_version > max_version {
                return Err(ApiTableError::EmptyRange {
                    api_key,
                    min_version,
                    max_version,
                });
            }
            let codec = api_key.valid_versions();
            if min_version < codec.min || max_version > codec.max {
                return Err(ApiTableError::OutsideCodec {
                    api_key,
                    min_version,
                    max_version,
                    codec_min: codec.min,
                    codec_max: codec.max,
                });
            }
            if out.iter().any(|r| r.api_key == api_key) {
                return Err(ApiTableError::Duplicate(api_key));
            }
            out.push(ApiRange {
                api_key,
                min_version,
                max_version,
            });
        }
        out.sort_by_key(|r| r.api_key as i16);
        Ok(Self { ranges: out })
    }

    /// The range for `api_key`, if listed.
    pub fn range(&self, api_key: ApiKey) -> Option<ApiRange> {
        self.ranges.iter().copied().find(|r| r.api_key == api_key)
    }

    /// Whether `api_key` is listed and `version` lies in its range.
    pub fn supports(&self, api_key: ApiKey, version: i16) -> bool {
        self.range(api_key).is_some_and(|r| r.contains(version))
    }

    /// All ranges in api-key order.
    pub fn ranges(&self) -> &[ApiRange] {
        &self.ranges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_ranges_the_codec_cannot_handle() {
        // kafka-protocol 0.18 speaks Fetch 4..=18 only.
        assert!(matches!(
            ApiTable::new([(ApiKey::Fetch, 0, 17)]),
            Err(ApiTableError::OutsideCodec {
                api_key: ApiKey::Fetch,
                codec_min: 4,
                ..
            })
        ));
        assert_eq!(
            ApiTable::new([(ApiKey::Vote, 2, 1)]),
            Err(ApiTableError::EmptyRange {
                api_key: ApiKey::Vote,
                min_version: 2,
                max_version: 1
            })
        );
        assert_eq!(
            ApiTable::new([(ApiKey::Vote, 0, 1), (ApiKey::Vote, 0, 1)]),
            Err(ApiTableError::Duplicate(ApiKey::Vote))
        );
    }

    #[test]
    fn keeps_api_key_order_and_answers_lookups() {
        let table = ApiTable::new([
            (ApiKey::Vote, 0, 1),
            (ApiKey::ApiVersions, 0, 4),
            (ApiKey::Fetch, 13, 17),
        ])
        .unwrap();
        let keys: Vec<i16> = table.ranges().iter().map(|r| r.api_key as i16).collect();
        assert_eq!(keys, vec![1, 18, 52]);
        assert!(table.supports(ApiKey::Fetch, 13));
        assert!(!table.supports(ApiKey::Fetch, 18));
        assert!(!table.supports(ApiKey::CreateTopics, 5));
    }

    #[test]
    fn highest_common_version_intersects() {
        let ours = ApiRange {
            api_key: ApiKey::Fetch,
            min_version: 13,
            max_version: 17,
        };
        assert_eq!(ours.highest_common_version(4, 18), Some(17));
        assert_eq!(ours.highest_common_version(4, 15), Some(15));
        assert_eq!(ours.highest_common_version(4, 12), None);
        assert_eq!(ours.highest_common_version(18, 18), None);
    }
}
