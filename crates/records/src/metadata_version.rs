//! `metadata.version` and the other finalized features, as data kraftwerk owns.
//!
//! Follows Kafka 4.4.0's `org.apache.kafka.server.common.MetadataVersion` and `Feature`
//! (`server-common`), checked entry by entry against those classes (see the tests, whose
//! expected tables were printed by running the 4.1.2, 4.2.2, 4.3.1 and 4.4.0 jars). A
//! metadata.version (MV) is one feature level; each level fixes which metadata record versions a
//! controller writes and which record types it may write at all. The supported range is 3.3-IV3
//! (level 7, Kafka 4.x's `MINIMUM_VERSION`, KAFKA-18601) to 4.5-IV0 (level 34, 4.4.0's
//! `latestTesting`); 4.4-IV2 (33) is the latest production level, as in Kafka 4.4.0. Which level
//! each Kafka release treats as its newest production one is [`KAFKA_RELEASES`].
//!
//! The other features (`transaction.version`, `group.version`, …) are [`Feature`]s; each has a
//! default level per MV ([`Feature::default_level`]), which `kafka-storage format` writes into
//! the bootstrap records. `kraft.version` is a feature too but lives in KRaftVersionRecord
//! control records, never in a FeatureLevelRecord.

use std::fmt;

use thiserror::Error;

/// The feature name of the metadata version (`MetadataVersion.FEATURE_NAME`).
pub const METADATA_VERSION_FEATURE_NAME: &str = "metadata.version";

/// Every supported metadata.version level (`MetadataVersion` in Kafka 4.4.0, the levels ≥ 7).
///
/// Ordered by feature level; `a < b` means `a` is older (`isLessThan`). The discriminant is the
/// feature level.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(i16)]
pub enum MetadataVersion {
    /// 3.3-IV3: RegisterBrokerRecord v1, the in-controlled-shutdown broker state. The oldest MV
    /// Kafka 4.x accepts.
    V3_3_IV3 = 7,
    /// 3.4-IV0: RegisterBrokerRecord v2 (ZK-migration field), API forwarding.
    V3_4_IV0 = 8,
    /// 3.5-IV0: broker-side only (Fetch v14).
    V3_5_IV0 = 9,
    /// 3.5-IV1: broker-side only (Fetch v15).
    V3_5_IV1 = 10,
    /// 3.5-IV2: SCRAM credential records.
    V3_5_IV2 = 11,
    /// 3.6-IV0: no leader-epoch bump when the ISR shrinks.
    V3_6_IV0 = 12,
    /// 3.6-IV1: metadata transactions (Begin/End/AbortTransactionRecord).
    V3_6_IV1 = 13,
    /// 3.6-IV2: delegation tokens.
    V3_6_IV2 = 14,
    /// 3.7-IV0: controller registration (RegisterControllerRecord, KIP-919).
    V3_7_IV0 = 15,
    /// 3.7-IV1: no metadata change.
    V3_7_IV1 = 16,
    /// 3.7-IV2: JBOD directory assignment (KIP-858): RegisterBrokerRecord v3,
    /// PartitionRecord/PartitionChangeRecord v1.
    V3_7_IV2 = 17,
    /// 3.7-IV3: no metadata change (was reserved for ELR).
    V3_7_IV3 = 18,
    /// 3.7-IV4: broker-side only (Fetch v16).
    V3_7_IV4 = 19,
    /// 3.8-IV0: no metadata change.
    V3_8_IV0 = 20,
    /// 3.9-IV0: kraft.version 1 possible (KIP-853); Fetch v17.
    V3_9_IV0 = 21,
    /// 4.0-IV0: group.version 1 by default.
    V4_0_IV0 = 22,
    /// 4.0-IV1: eligible leader replicas (KIP-966): PartitionRecord/PartitionChangeRecord v2.
    V4_0_IV1 = 23,
    /// 4.0-IV2: transaction.version 2 by default.
    V4_0_IV2 = 24,
    /// 4.0-IV3: broker-side only (ListOffsets v10).
    V4_0_IV3 = 25,
    /// 4.1-IV0: eligible.leader.replicas.version 1 by default.
    V4_1_IV0 = 26,
    /// 4.1-IV1: broker-side only (Fetch v18). Latest production level of Kafka 4.1.
    V4_1_IV1 = 27,
    /// 4.2-IV0: share.version 1 by default (KIP-932). Production from Kafka 4.2.
    V4_2_IV0 = 28,
    /// 4.2-IV1: streams.version 1 by default (KIP-1071). Latest production level of Kafka 4.2.
    V4_2_IV1 = 29,
    /// 4.3-IV0: cordoned log directories (KIP-1066): RegisterBrokerRecord v4,
    /// BrokerRegistrationChangeRecord v3 `CordonedLogDirs`. Latest production level of 4.3.
    V4_3_IV0 = 30,
    /// 4.4-IV0: share.version 2 by default; no metadata record change.
    V4_4_IV0 = 31,
    /// 4.4-IV1: CIDR host patterns in ACLs (KIP-1276; AccessControlEntryRecord unchanged, its
    /// `Host` may hold a CIDR block).
    V4_4_IV1 = 32,
    /// 4.4-IV2: controller unregistration (KIP-1312): UnregisterControllerRecord. Latest
    /// production level of Kafka 4.4.
    V4_4_IV2 = 33,
    /// 4.5-IV0: Kafka 4.4.0's testing-only level; no metadata change over 4.4-IV2 there.
    V4_5_IV0 = 34,
}

/// Why a metadata.version could not be resolved.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum MetadataVersionError {
    /// A release/version string that names no level available with the current unstable
    /// setting (`fromVersionString` of 4.4.0, message included).
    #[error(
        "Unknown metadata.version '{version}'. Supported metadata.version are: {list}",
        list = MetadataVersion::names_between(MetadataVersion::MINIMUM, *max)
    )]
    UnknownVersionString {
        /// The string as given.
        version: String,
        /// The newest level that was acceptable (latest production, or latest testing with
        /// unstable feature versions enabled).
        max: MetadataVersion,
    },
    /// A feature level that is not a supported metadata.version (`fromFeatureLevel`).
    #[error(
        "No MetadataVersion with feature level {0} (supported: {min_level} ({min}) to \
         {max_level} ({max}))",
        min_level = MetadataVersion::MINIMUM.feature_level(),
        min = MetadataVersion::MINIMUM,
        max_level = MetadataVersion::LATEST_TESTING.feature_level(),
        max = MetadataVersion::LATEST_TESTING
    )]
    UnknownFeatureLevel(i16),
}

/// The kinds of BrokerRegistrationChangeRecord a controller writes, whose record versions
/// differ (`ReplicationControlManager` in 4.4.0: fence/unfence v0, controlled shutdown v1,
/// offline log dirs v2, cordoned log dirs v3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BrokerRegistrationChange {
    /// `Fenced` set to FENCE (1) or UNFENCE (-1).
    Fencing,
    /// `InControlledShutdown` set to IN_CONTROLLED_SHUTDOWN (1).
    ControlledShutdown,
    /// `LogDirs` replaced (a broker reported offline directories; MV ≥ 3.7-IV2 only).
    LogDirs,
    /// `CordonedLogDirs` replaced (`handleDirectoriesCordoned`; MV ≥ 4.3-IV0 only, KIP-1066).
    CordonedLogDirs,
}

impl MetadataVersion {
    /// Every supported level, oldest first (`MetadataVersion.VERSIONS` from 3.3-IV3 on).
    pub const ALL: [MetadataVersion; 28] = [
        Self::V3_3_IV3,
        Self::V3_4_IV0,
        Self::V3_5_IV0,
        Self::V3_5_IV1,
        Self::V3_5_IV2,
        Self::V3_6_IV0,
        Self::V3_6_IV1,
        Self::V3_6_IV2,
        Self::V3_7_IV0,
        Self::V3_7_IV1,
        Self::V3_7_IV2,
        Self::V3_7_IV3,
        Self::V3_7_IV4,
        Self::V3_8_IV0,
        Self::V3_9_IV0,
        Self::V4_0_IV0,
        Self::V4_0_IV1,
        Self::V4_0_IV2,
        Self::V4_0_IV3,
        Self::V4_1_IV0,
        Self::V4_1_IV1,
        Self::V4_2_IV0,
        Self::V4_2_IV1,
        Self::V4_3_IV0,
        Self::V4_4_IV0,
        Self::V4_4_IV1,
        Self::V4_4_IV2,
        Self::V4_5_IV0,
    ];

    /// The oldest level a Kafka 4.x node (and kraftwerk) accepts (`MINIMUM_VERSION`).
    pub const MINIMUM: MetadataVersion = Self::V3_3_IV3;
    /// The newest production level (`LATEST_PRODUCTION` of Kafka 4.4.0): the default of
    /// `format` and the top of the range kraftwerk advertises.
    pub const LATEST_PRODUCTION: MetadataVersion = Self::V4_4_IV2;
    /// The newest level known at all (`latestTesting()` of Kafka 4.4.0); levels above
    /// [`Self::LATEST_PRODUCTION`] need `unstable.feature.versions.enable`.
    pub const LATEST_TESTING: MetadataVersion = Self::V4_5_IV0;

    /// The feature level stored in FeatureLevelRecord(`metadata.version`) and sent in
    /// ApiVersions/BrokerRegistration feature ranges.
    pub const fn feature_level(self) -> i16 {
        self as i16
    }

    /// The level with this feature level (`MetadataVersion.fromFeatureLevel`).
    ///
    /// Errors: [`MetadataVersionError::UnknownFeatureLevel`] for anything else (including the
    /// pre-3.3-IV3 levels 1..=6, which Kafka 4.x no longer supports either).
    pub fn from_feature_level(level: i16) -> Result<MetadataVersion, MetadataVersionError> {
        Self::ALL
            .iter()
            .copied()
            .find(|mv| mv.feature_level() == level)
            .ok_or(MetadataVersionError::UnknownFeatureLevel(level))
    }

    /// The names from `from` to `to`, comma-separated (`metadataVersionsToString`).
    pub fn names_between(from: MetadataVersion, to: MetadataVersion) -> String {
        Self::ALL
            .iter()
            .filter(|mv| **mv >= from && **mv <= to)
            .map(|mv| mv.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The Kafka name, `<release>-IV<n>` (`MetadataVersion.version()`), e.g. `4.1-IV1`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::V3_3_IV3 => "3.3-IV3",
            Self::V3_4_IV0 => "3.4-IV0",
            Self::V3_5_IV0 => "3.5-IV0",
            Self::V3_5_IV1 => "3.5-IV1",
            Self::V3_5_IV2 => "3.5-IV2",
            Self::V3_6_IV0 => "3.6-IV0",
            Self::V3_6_IV1 => "3.6-IV1",
            Self::V3_6_IV2 => "3.6-IV2",
            Self::V3_7_IV0 => "3.7-IV0",
            Self::V3_7_IV1 => "3.7-IV1",
            Self::V3_7_IV2 => "3.7-IV2",
            Self::V3_7_IV3 => "3.7-IV3",
            Self::V3_7_IV4 => "3.7-IV4",
            Self::V3_8_IV0 => "3.8-IV0",
            Self::V3_9_IV0 => "3.9-IV0",
            Self::V4_0_IV0 => "4.0-IV0",
            Self::V4_0_IV1 => "4.0-IV1",
            Self::V4_0_IV2 => "4.0-IV2",
            Self::V4_0_IV3 => "4.0-IV3",
            Self::V4_1_IV0 => "4.1-IV0",
            Self::V4_1_IV1 => "4.1-IV1",
            Self::V4_2_IV0 => "4.2-IV0",
            Self::V4_2_IV1 => "4.2-IV1",
            Self::V4_3_IV0 => "4.3-IV0",
            Self::V4_4_IV0 => "4.4-IV0",
            Self::V4_4_IV1 => "4.4-IV1",
            Self::V4_4_IV2 => "4.4-IV2",
            Self::V4_5_IV0 => "4.5-IV0",
        }
    }

    /// The release part of the name (`shortVersion()`), e.g. `4.1`.
    pub fn release(self) -> &'static str {
        let name = self.name();
        &name[..name.find('-').expect("every name is <release>-IV<n>")]
    }

    /// Whether the level is production-ready (`isProduction`): at most
    /// [`Self::LATEST_PRODUCTION`]. `format` refuses a non-production level unless unstable
    /// feature versions are enabled.
    pub fn is_production(self) -> bool {
        self <= Self::LATEST_PRODUCTION
    }

    /// Whether moving to this level from the previous one changed the metadata format
    /// (`didMetadataChange`); a downgrade across such a level loses information.
    pub const fn did_metadata_change(self) -> bool {
        matches!(
            self,
            Self::V3_3_IV3
                | Self::V3_4_IV0
                | Self::V3_5_IV2
                | Self::V3_6_IV1
                | Self::V3_6_IV2
                | Self::V3_7_IV0
                | Self::V3_7_IV2
                | Self::V4_0_IV1
                | Self::V4_3_IV0
                | Self::V4_4_IV1
                | Self::V4_4_IV2
        )
    }

    /// Parses a release version the way `kafka-storage format --release-version` does
    /// (`MetadataVersion.fromVersionString(version, unstableFeatureVersionsEnabled)` of 4.4.0):
    /// either an exact name (`4.0-IV1`) or a release (`4.1`, `3.9`), which maps to the newest
    /// *production* level of that release (`4.0` → 4.0-IV3, `4.4` → 4.4-IV2). Anything after
    /// the second dot-separated segment is ignored, as in Java (`4.4.0` → `4.4` → 4.4-IV2). A
    /// non-production level (`4.5-IV0`) is accepted only with `unstable_enabled`; a release
    /// without a production level (`4.5`) never.
    ///
    /// Errors: [`MetadataVersionError::UnknownVersionString`].
    pub fn from_version_string(
        version: &str,
        unstable_enabled: bool,
    ) -> Result<MetadataVersion, MetadataVersionError> {
        let segments: Vec<&str> = version.split('.').collect();
        let key = if segments.len() > 2 {
            segments[..2].join(".")
        } else {
            version.to_owned()
        };
        let found = Self::ALL
            .iter()
            .copied()
            .find(|mv| mv.name() == key)
            .or_else(|| {
                Self::ALL
                    .iter()
                    .rev()
                    .copied()
                    .find(|mv| mv.is_production() && mv.release() == key)
            });
        match found {
            Some(mv) if unstable_enabled || mv.is_production() => Ok(mv),
            _ => Err(MetadataVersionError::UnknownVersionString {
                version: version.to_owned(),
                max: if unstable_enabled {
                    Self::LATEST_TESTING
                } else {
                    Self::LATEST_PRODUCTION
                },
            }),
        }
    }

    // --- Record versions this MV requires the controller to write. ---

    /// RegisterBrokerRecord version (`registerBrokerRecordVersion`): 1 at 3.3-IV3, 2 from
    /// 3.4-IV0, 3 from 3.7-IV2 (LogDirs), 4 from 4.3-IV0 (CordonedLogDirs).
    pub fn register_broker_record_version(self) -> i16 {
        if self.is_cordoned_log_dirs_supported() {
            4
        } else if self >= Self::V3_7_IV2 {
            3
        } else if self >= Self::V3_4_IV0 {
            2
        } else {
            1
        }
    }

    /// RegisterControllerRecord version (`registerControllerRecordVersion`): 0 from 3.7-IV0,
    /// `None` before (Java throws; controllers must not register below 3.7-IV0).
    pub fn register_controller_record_version(self) -> Option<i16> {
        self.is_controller_registration_supported().then_some(0)
    }

    /// UnregisterControllerRecord version: 0 from 4.4-IV2 (KIP-1312), `None` before (Java
    /// refuses UnregisterController with "The current MetadataVersion is too old to support
    /// controller unregistration.").
    pub fn unregister_controller_record_version(self) -> Option<i16> {
        self.is_controller_unregistration_supported().then_some(0)
    }

    /// PartitionRecord version (`partitionRecordVersion`): 0, 1 from 3.7-IV2 (Directories),
    /// 2 from 4.0-IV1 (ELR fields).
    pub fn partition_record_version(self) -> i16 {
        if self.is_elr_supported() {
            2
        } else if self.is_directory_assignment_supported() {
            1
        } else {
            0
        }
    }

    /// PartitionChangeRecord version (`partitionChangeRecordVersion`): same steps as
    /// [`Self::partition_record_version`].
    pub fn partition_change_record_version(self) -> i16 {
        self.partition_record_version()
    }

    /// BrokerRegistrationChangeRecord version for one kind of change. Fencing and controlled
    /// shutdown go through this record at every supported MV (it exists from 3.3-IV2 and the
    /// in-controlled-shutdown field from 3.3-IV3), so FenceBrokerRecord/UnfenceBrokerRecord are
    /// never written.
    pub fn broker_registration_change_record_version(
        self,
        change: BrokerRegistrationChange,
    ) -> i16 {
        match change {
            BrokerRegistrationChange::Fencing => 0,
            BrokerRegistrationChange::ControlledShutdown => 1,
            BrokerRegistrationChange::LogDirs => 2,
            BrokerRegistrationChange::CordonedLogDirs => 3,
        }
    }

    // --- Feature gates (`is*Supported`). ---

    /// NoOpRecord may be written (`isNoOpRecordSupported`, from 3.3-IV1): always, in range.
    pub const fn is_no_op_record_supported(self) -> bool {
        true
    }

    /// Fence/unfence via BrokerRegistrationChangeRecord (`isBrokerRegistrationChangeRecordSupported`,
    /// from 3.3-IV2): always, in range.
    pub const fn is_broker_registration_change_record_supported(self) -> bool {
        true
    }

    /// The controlled-shutdown broker state exists (`isInControlledShutdownStateSupported`,
    /// from 3.3-IV3): always, in range.
    pub const fn is_in_controlled_shutdown_state_supported(self) -> bool {
        true
    }

    /// Bootstrap writes ZkMigrationStateRecord in Kafka 3.x (`isMigrationSupported`, from
    /// 3.4-IV0). Kafka 4.x removed ZK migration and no longer writes it; kept as a fact only.
    pub fn is_migration_supported(self) -> bool {
        self >= Self::V3_4_IV0
    }

    /// UserScramCredentialRecord allowed (`isScramSupported`, from 3.5-IV2).
    pub fn is_scram_supported(self) -> bool {
        self >= Self::V3_5_IV2
    }

    /// Shrinking an ISR must bump the leader epoch (`isLeaderEpochBumpRequiredOnIsrShrink`,
    /// before 3.6-IV0).
    pub fn is_leader_epoch_bump_required_on_isr_shrink(self) -> bool {
        self < Self::V3_6_IV0
    }

    /// Begin/End/AbortTransactionRecord allowed (`isMetadataTransactionSupported`, from 3.6-IV1).
    pub fn is_metadata_transaction_supported(self) -> bool {
        self >= Self::V3_6_IV1
    }

    /// DelegationTokenRecord allowed (`isDelegationTokenSupported`, from 3.6-IV2).
    pub fn is_delegation_token_supported(self) -> bool {
        self >= Self::V3_6_IV2
    }

    /// Controllers register (RegisterControllerRecord; `isControllerRegistrationSupported`,
    /// from 3.7-IV0).
    pub fn is_controller_registration_supported(self) -> bool {
        self >= Self::V3_7_IV0
    }

    /// JBOD directory assignment (`isDirectoryAssignmentSupported`, from 3.7-IV2).
    pub fn is_directory_assignment_supported(self) -> bool {
        self >= Self::V3_7_IV2
    }

    /// Eligible leader replicas fields exist (`isElrSupported`, from 4.0-IV1).
    pub fn is_elr_supported(self) -> bool {
        self >= Self::V4_0_IV1
    }

    /// Brokers report cordoned log directories, kept in their registration
    /// (`isCordonedLogDirsSupported`, from 4.3-IV0, KIP-1066).
    pub fn is_cordoned_log_dirs_supported(self) -> bool {
        self >= Self::V4_3_IV0
    }

    /// ACL hosts may be CIDR blocks (`isCidrAclSupported`, from 4.4-IV1, KIP-1276).
    pub fn is_cidr_acl_supported(self) -> bool {
        self >= Self::V4_4_IV1
    }

    /// Controllers may be unregistered (UnregisterControllerRecord;
    /// `isControllerUnregistrationSupported`, from 4.4-IV2, KIP-1312).
    pub fn is_controller_unregistration_supported(self) -> bool {
        self >= Self::V4_4_IV2
    }
}

/// The newest production metadata.version of each Kafka 4.x release
/// (`MetadataVersion.LATEST_PRODUCTION` printed from each release's jar), by release
/// (`major.minor`).
pub const KAFKA_RELEASES: [(&str, MetadataVersion); 5] = [
    ("4.0", MetadataVersion::V4_0_IV3),
    ("4.1", MetadataVersion::V4_1_IV1),
    ("4.2", MetadataVersion::V4_2_IV1),
    ("4.3", MetadataVersion::V4_3_IV0),
    ("4.4", MetadataVersion::V4_4_IV2),
];

/// The newest production metadata.version of the Kafka release `version` (`4.1.2`, `4.4`), if
/// it is one of [`KAFKA_RELEASES`]: the level a cluster of that release's brokers can run.
pub fn latest_production_of_release(version: &str) -> Option<MetadataVersion> {
    let mut parts = version.split('.');
    let release = format!("{}.{}", parts.next()?, parts.next()?);
    KAFKA_RELEASES
        .iter()
        .find(|(r, _)| *r == release)
        .map(|(_, mv)| *mv)
}

impl fmt::Display for MetadataVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A finalized feature other than metadata.version (`org.apache.kafka.server.common.Feature`,
/// its production features in Kafka 4.4.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    /// `kraft.version` (KIP-853): 1 = dynamic quorum (KRaftVersionRecord/VotersRecord). Never
    /// written as a FeatureLevelRecord.
    KraftVersion,
    /// `transaction.version` (KIP-890/KIP-1228 transactions v2).
    TransactionVersion,
    /// `group.version` (KIP-848 consumer groups).
    GroupVersion,
    /// `eligible.leader.replicas.version` (KIP-966).
    EligibleLeaderReplicasVersion,
    /// `share.version` (KIP-932 share groups).
    ShareVersion,
    /// `streams.version` (KIP-1071 streams groups).
    StreamsVersion,
}

/// One level of a [`Feature`]: the MV from which it becomes the default
/// (`FeatureVersion.bootstrapMetadataVersion`) and the MV it requires, if any
/// (`FeatureVersion.dependencies`; in 4.4.0 only metadata.version dependencies exist, and only
/// eligible.leader.replicas.version 1 has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FeatureLevelInfo {
    level: i16,
    bootstrap_metadata_version: MetadataVersion,
    requires_metadata_version: Option<MetadataVersion>,
}

const fn lvl(level: i16, bootstrap: MetadataVersion) -> FeatureLevelInfo {
    FeatureLevelInfo {
        level,
        bootstrap_metadata_version: bootstrap,
        requires_metadata_version: None,
    }
}

/// Why a feature level was refused (`Feature.fromFeatureLevel`, `Feature.validateVersion`,
/// `Formatter.calculateEffectiveFeatureLevels`).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum FeatureError {
    /// A feature name kraftwerk does not know.
    #[error("Unsupported feature: {0}. Supported features are: {names}", names = Feature::names_joined())]
    UnknownFeature(String),
    /// A level outside the feature's known levels, or above its production level while
    /// unstable feature versions are disabled.
    #[error("No feature:{feature} with feature level {level} (supported: 0 to {max})")]
    UnsupportedLevel {
        /// Feature name.
        feature: &'static str,
        /// Requested level.
        level: i16,
        /// Highest level accepted with the current unstable setting.
        max: i16,
    },
    /// The level needs a newer metadata.version.
    #[error("{feature} could not be set to {level} because it depends on metadata.version level {required}")]
    DependencyNotMet {
        /// Feature name.
        feature: &'static str,
        /// Requested level.
        level: i16,
        /// metadata.version feature level it needs.
        required: i16,
    },
}

impl Feature {
    /// All features, in Kafka's declaration order.
    pub const ALL: [Feature; 6] = [
        Self::KraftVersion,
        Self::TransactionVersion,
        Self::GroupVersion,
        Self::EligibleLeaderReplicasVersion,
        Self::ShareVersion,
        Self::StreamsVersion,
    ];

    /// The feature name used in FeatureLevelRecord, ApiVersions and `--feature name=level`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::KraftVersion => "kraft.version",
            Self::TransactionVersion => "transaction.version",
            Self::GroupVersion => "group.version",
            Self::EligibleLeaderReplicasVersion => "eligible.leader.replicas.version",
            Self::ShareVersion => "share.version",
            Self::StreamsVersion => "streams.version",
        }
    }

    /// The feature with this name, if known (`Feature.featureFromName`).
    pub fn from_name(name: &str) -> Option<Feature> {
        Self::ALL.iter().copied().find(|f| f.name() == name)
    }

    fn names_joined() -> String {
        let mut names: Vec<&str> = Self::ALL.iter().map(|f| f.name()).collect();
        names.sort_unstable();
        names.join(", ")
    }

    /// Known levels above 0, oldest first (`featureVersions()` of 4.4.0).
    fn levels(self) -> &'static [FeatureLevelInfo] {
        use MetadataVersion as M;
        const KRAFT: [FeatureLevelInfo; 1] = [lvl(1, M::V3_9_IV0)];
        const TRANSACTION: [FeatureLevelInfo; 2] = [lvl(1, M::V4_0_IV2), lvl(2, M::V4_0_IV2)];
        const GROUP: [FeatureLevelInfo; 1] = [lvl(1, M::V4_0_IV0)];
        const ELR: [FeatureLevelInfo; 1] = [FeatureLevelInfo {
            level: 1,
            bootstrap_metadata_version: M::V4_1_IV0,
            requires_metadata_version: Some(M::V4_0_IV1),
        }];
        const SHARE: [FeatureLevelInfo; 2] = [lvl(1, M::V4_2_IV0), lvl(2, M::V4_4_IV0)];
        const STREAMS: [FeatureLevelInfo; 1] = [lvl(1, M::V4_2_IV1)];
        match self {
            Self::KraftVersion => &KRAFT,
            Self::TransactionVersion => &TRANSACTION,
            Self::GroupVersion => &GROUP,
            Self::EligibleLeaderReplicasVersion => &ELR,
            Self::ShareVersion => &SHARE,
            Self::StreamsVersion => &STREAMS,
        }
    }

    /// Lowest level (`minimumProduction`): 0 for every feature (0 = disabled).
    pub const fn minimum_level(self) -> i16 {
        0
    }

    /// Highest production-ready level (`latestProduction` in 4.4.0: every known level; in
    /// 4.1.2 streams.version 1 was not yet production-ready).
    pub fn latest_production(self) -> i16 {
        self.latest_testing()
    }

    /// Highest known level (`latestTesting` in 4.4.0).
    pub fn latest_testing(self) -> i16 {
        self.levels().last().map_or(0, |l| l.level)
    }

    /// The level `format` (and a controller bootstrapping without a bootstrap file) uses at a
    /// metadata.version (`Feature.defaultLevel`): the highest level whose bootstrap MV is ≤ `mv`.
    /// For `kraft.version` this is Kafka's table value; `format` itself writes 0 unless a
    /// dynamic quorum is requested (`Formatter.effectiveKRaftFeatureLevel`).
    pub fn default_level(self, mv: MetadataVersion) -> i16 {
        self.levels()
            .iter()
            .filter(|l| l.bootstrap_metadata_version <= mv)
            .map(|l| l.level)
            .max()
            .unwrap_or(0)
    }

    /// The metadata.version a level needs (`FeatureVersion.dependencies`), if any.
    pub fn required_metadata_version(self, level: i16) -> Option<MetadataVersion> {
        self.levels()
            .iter()
            .find(|l| l.level == level)
            .and_then(|l| l.requires_metadata_version)
    }

    /// Checks `level` the way `format` and UpdateFeatures do: it must be a known level, at most
    /// [`Self::latest_production`] unless `allow_unstable`, and its metadata.version dependency
    /// must be met by `mv`.
    pub fn validate_level(
        self,
        level: i16,
        allow_unstable: bool,
        mv: MetadataVersion,
    ) -> Result<(), FeatureError> {
        let max = if allow_unstable {
            self.latest_testing()
        } else {
            self.latest_production()
        };
        if level < 0 || level > max {
            return Err(FeatureError::UnsupportedLevel {
                feature: self.name(),
                level,
                max,
            });
        }
        if let Some(required) = self.required_metadata_version(level) {
            if mv < required {
                return Err(FeatureError::DependencyNotMet {
                    feature: self.name(),
                    level,
                    required: required.feature_level(),
                });
            }
        }
        Ok(())
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `[min, max]` feature range a node supports, as sent in ApiVersions `SupportedFeatures`
/// and ControllerRegistration/BrokerRegistration `Features`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SupportedFeatureRange {
    /// Feature name (`metadata.version`, `kraft.version`, …).
    pub name: &'static str,
    /// Lowest supported level.
    pub min_level: i16,
    /// Highest supported level.
    pub max_level: i16,
}

/// The feature ranges a kraftwerk controller supports, sorted by name
/// (`QuorumFeatures.defaultSupportedFeatureMap` of 4.4.0): metadata.version
/// [3.3-IV3, latest production] (or latest testing with `enable_unstable`), then every feature
/// whose maximum is above 0 as `[0, latest production]` (or latest testing).
pub fn controller_supported_features(enable_unstable: bool) -> Vec<SupportedFeatureRange> {
    let max_mv = if enable_unstable {
        MetadataVersion::LATEST_TESTING
    } else {
        MetadataVersion::LATEST_PRODUCTION
    };
    let mut ranges = vec![SupportedFeatureRange {
        name: METADATA_VERSION_FEATURE_NAME,
        min_level: MetadataVersion::MINIMUM.feature_level(),
        max_level: max_mv.feature_level(),
    }];
    for feature in Feature::ALL {
        let max = if enable_unstable {
            feature.latest_testing()
        } else {
            feature.latest_production()
        };
        if max > 0 {
            ranges.push(SupportedFeatureRange {
                name: feature.name(),
                min_level: feature.minimum_level(),
                max_level: max,
            });
        }
    }
    ranges.sort_by_key(|r| r.name);
    ranges
}

/// The finalized levels `format` writes for `mv` with no `--feature` overrides: every feature
/// except `kraft.version` with its [`Feature::default_level`] when above 0, sorted by name
/// (`BootstrapMetadata.fromVersions` order). `metadata.version` itself is not included.
pub fn default_feature_levels(mv: MetadataVersion) -> Vec<(Feature, i16)> {
    let mut levels: Vec<(Feature, i16)> = Feature::ALL
        .iter()
        .copied()
        .filter(|f| *f != Feature::KraftVersion)
        .map(|f| (f, f.default_level(mv)))
        .filter(|(_, level)| *level > 0)
        .collect();
    levels.sort_by_key(|(f, _)| f.name());
    levels
}

#[cfg(test)]
mod tests;
