//! Finalized feature levels (`FeaturesImage`, `FeatureControlManager` state).

use imbl::OrdMap;
use kraftwerk_records::metadata_version::{
    Feature, MetadataVersion, METADATA_VERSION_FEATURE_NAME,
};

use crate::error::ReplayError;

/// Name of the ELR feature (`EligibleLeaderReplicasVersion.FEATURE_NAME`).
pub const ELR_FEATURE_NAME: &str = "eligible.leader.replicas.version";

/// Name of the kraft.version feature; never stored here (it lives in KRaftVersionRecord).
pub const KRAFT_VERSION_FEATURE_NAME: &str = "kraft.version";

/// metadata.version plus every other finalized feature with a level above 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeaturesImage {
    metadata_version: Option<MetadataVersion>,
    /// Features other than metadata.version and kraft.version, level > 0.
    finalized: OrdMap<String, i16>,
}

impl FeaturesImage {
    /// The finalized metadata.version; `None` until a FeatureLevelRecord for it was replayed
    /// (an empty log: the controller writes the bootstrap records then).
    pub fn metadata_version(&self) -> Option<MetadataVersion> {
        self.metadata_version
    }

    /// The finalized metadata.version, or the minimum (3.3-IV3) if none was ever written.
    /// Handlers only run after bootstrap, so the fallback is a guard, not a policy.
    pub fn metadata_version_or_minimum(&self) -> MetadataVersion {
        self.metadata_version.unwrap_or(MetadataVersion::MINIMUM)
    }

    /// The finalized level of a feature other than metadata.version (0 if absent).
    pub fn level(&self, name: &str) -> i16 {
        self.finalized.get(name).copied().unwrap_or(0)
    }

    /// Finalized features other than metadata.version, by name.
    pub fn finalized(&self) -> impl Iterator<Item = (&String, &i16)> {
        self.finalized.iter()
    }

    /// `FeatureControlManager.isElrFeatureEnabled`: eligible.leader.replicas.version ≥ 1.
    pub fn is_elr_enabled(&self) -> bool {
        self.level(ELR_FEATURE_NAME) >= 1
    }

    /// Applies a FeatureLevelRecord (`FeatureControlManager.replay`): metadata.version is set;
    /// kraft.version is ignored (KAFKA-18979); level 0 removes a feature.
    ///
    /// # Errors
    /// [`ReplayError::UnsupportedFeatureLevel`] for an unknown feature or a level this
    /// controller does not support (Java: "this controller only supports versions …").
    pub fn replay(&mut self, name: &str, level: i16) -> Result<(), ReplayError> {
        let unsupported = || ReplayError::UnsupportedFeatureLevel {
            name: name.to_owned(),
            level,
        };
        if name == METADATA_VERSION_FEATURE_NAME {
            let mv = MetadataVersion::from_feature_level(level).map_err(|_| unsupported())?;
            self.metadata_version = Some(mv);
            return Ok(());
        }
        if name == KRAFT_VERSION_FEATURE_NAME {
            return Ok(());
        }
        let feature = Feature::from_name(name);
        let max = feature.map_or(0, |f| f.latest_testing());
        if level < 0 || level > max {
            return Err(unsupported());
        }
        if level == 0 {
            self.finalized.remove(name);
        } else {
            self.finalized.insert(name.to_owned(), level);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_sets_and_removes_features() {
        let mut f = FeaturesImage::default();
        assert_eq!(f.metadata_version(), None);
        f.replay("metadata.version", 27).unwrap();
        assert_eq!(f.metadata_version(), Some(MetadataVersion::V4_1_IV1));
        f.replay(ELR_FEATURE_NAME, 1).unwrap();
        assert!(f.is_elr_enabled());
        f.replay(ELR_FEATURE_NAME, 0).unwrap();
        assert!(!f.is_elr_enabled());
        assert_eq!(f.finalized().count(), 0);
        // kraft.version records are ignored, not stored.
        f.replay("kraft.version", 1).unwrap();
        assert_eq!(f.level("kraft.version"), 0);
    }

    #[test]
    fn replay_rejects_unknown_levels() {
        let mut f = FeaturesImage::default();
        assert!(f.replay("metadata.version", 3).is_err());
        assert!(f.replay("group.version", 9).is_err());
        assert!(f.replay("no.such.feature", 1).is_err());
        assert!(f.replay("no.such.feature", 0).is_ok());
    }
}
