//! Tests of `metadata_version.rs`.
use super::*;

/// Printed by running Kafka 4.1.2's `MetadataVersion`/`Feature` (a Java 17 single-file
/// program over the Kafka 4.1.2 jars (`scripts/kafka-fetch 4.1.2`), one line per level). Columns: level, name, release,
/// isProduction, didMetadataChange, registerBrokerRecordVersion,
/// registerControllerRecordVersion (-1 = throws), partitionRecordVersion,
/// partitionChangeRecordVersion, isScramSupported, isLeaderEpochBumpRequiredOnIsrShrink,
/// isMetadataTransactionSupported, isDelegationTokenSupported,
/// isControllerRegistrationSupported, isDirectoryAssignmentSupported, isElrSupported,
/// isMigrationSupported, then defaultLevel of transaction.version, group.version,
/// eligible.leader.replicas.version, share.version, streams.version, kraft.version.
const KAFKA_4_1_2: &str = "\
7 3.3-IV3 3.3 1 1 1 -1 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0
8 3.4-IV0 3.4 1 1 2 -1 0 0 0 1 0 0 0 0 0 1 0 0 0 0 0 0
9 3.5-IV0 3.5 1 0 2 -1 0 0 0 1 0 0 0 0 0 1 0 0 0 0 0 0
10 3.5-IV1 3.5 1 0 2 -1 0 0 0 1 0 0 0 0 0 1 0 0 0 0 0 0
11 3.5-IV2 3.5 1 1 2 -1 0 0 1 1 0 0 0 0 0 1 0 0 0 0 0 0
12 3.6-IV0 3.6 1 0 2 -1 0 0 1 0 0 0 0 0 0 1 0 0 0 0 0 0
13 3.6-IV1 3.6 1 1 2 -1 0 0 1 0 1 0 0 0 0 1 0 0 0 0 0 0
14 3.6-IV2 3.6 1 1 2 -1 0 0 1 0 1 1 0 0 0 1 0 0 0 0 0 0
15 3.7-IV0 3.7 1 1 2 0 0 0 1 0 1 1 1 0 0 1 0 0 0 0 0 0
16 3.7-IV1 3.7 1 0 2 0 0 0 1 0 1 1 1 0 0 1 0 0 0 0 0 0
17 3.7-IV2 3.7 1 1 3 0 1 1 1 0 1 1 1 1 0 1 0 0 0 0 0 0
18 3.7-IV3 3.7 1 0 3 0 1 1 1 0 1 1 1 1 0 1 0 0 0 0 0 0
19 3.7-IV4 3.7 1 0 3 0 1 1 1 0 1 1 1 1 0 1 0 0 0 0 0 0
20 3.8-IV0 3.8 1 0 3 0 1 1 1 0 1 1 1 1 0 1 0 0 0 0 0 0
21 3.9-IV0 3.9 1 0 3 0 1 1 1 0 1 1 1 1 0 1 0 0 0 0 0 1
22 4.0-IV0 4.0 1 0 3 0 1 1 1 0 1 1 1 1 0 1 0 1 0 0 0 1
23 4.0-IV1 4.0 1 1 3 0 2 2 1 0 1 1 1 1 1 1 0 1 0 0 0 1
24 4.0-IV2 4.0 1 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 0 0 0 1
25 4.0-IV3 4.0 1 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 0 0 0 1
26 4.1-IV0 4.1 1 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 1 0 0 1
27 4.1-IV1 4.1 1 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 1 0 0 1
28 4.2-IV0 4.2 0 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 1 1 0 1
29 4.2-IV1 4.2 0 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 1 1 1 1";

struct Row {
    cols: Vec<String>,
}

impl Row {
    fn int(&self, i: usize) -> i16 {
        self.cols[i].parse().unwrap()
    }
    fn flag(&self, i: usize) -> bool {
        self.int(i) == 1
    }
}

fn rows() -> Vec<(MetadataVersion, Row)> {
    KAFKA_4_1_2
        .lines()
        .map(|line| {
            let cols: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            assert_eq!(cols.len(), 23, "{line}");
            let level: i16 = cols[0].parse().unwrap();
            (
                MetadataVersion::from_feature_level(level).unwrap(),
                Row { cols },
            )
        })
        .collect()
}

#[test]
fn table_covers_exactly_kafka_4_1_2_levels_in_order() {
    let levels: Vec<i16> = rows().iter().map(|(mv, _)| mv.feature_level()).collect();
    let ours: Vec<i16> = MetadataVersion::ALL
        .iter()
        .map(|mv| mv.feature_level())
        .collect();
    assert_eq!(levels, ours);
    assert!(MetadataVersion::ALL.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn names_releases_and_production_match_java() {
    for (mv, row) in rows() {
        assert_eq!(
            mv.name(),
            row.cols[1],
            "name of level {}",
            mv.feature_level()
        );
        assert_eq!(mv.to_string(), row.cols[1]);
        assert_eq!(mv.release(), row.cols[2], "release of {mv}");
        assert_eq!(mv.is_production(), row.flag(3), "isProduction of {mv}");
        assert_eq!(
            mv.did_metadata_change(),
            row.flag(4),
            "didMetadataChange of {mv}"
        );
    }
    assert_eq!(MetadataVersion::LATEST_PRODUCTION.feature_level(), 27);
    assert_eq!(MetadataVersion::MINIMUM.feature_level(), 7);
}

#[test]
fn record_versions_match_java() {
    for (mv, row) in rows() {
        assert_eq!(
            mv.register_broker_record_version(),
            row.int(5),
            "RegisterBrokerRecord at {mv}"
        );
        let rcr = mv.register_controller_record_version().unwrap_or(-1);
        assert_eq!(rcr, row.int(6), "RegisterControllerRecord at {mv}");
        assert_eq!(
            mv.partition_record_version(),
            row.int(7),
            "PartitionRecord at {mv}"
        );
        assert_eq!(
            mv.partition_change_record_version(),
            row.int(8),
            "PartitionChangeRecord at {mv}"
        );
    }
}

#[test]
fn gates_match_java() {
    for (mv, row) in rows() {
        assert_eq!(mv.is_scram_supported(), row.flag(9), "scram at {mv}");
        assert_eq!(
            mv.is_leader_epoch_bump_required_on_isr_shrink(),
            row.flag(10),
            "bump at {mv}"
        );
        assert_eq!(
            mv.is_metadata_transaction_supported(),
            row.flag(11),
            "txn at {mv}"
        );
        assert_eq!(
            mv.is_delegation_token_supported(),
            row.flag(12),
            "dt at {mv}"
        );
        assert_eq!(
            mv.is_controller_registration_supported(),
            row.flag(13),
            "creg at {mv}"
        );
        assert_eq!(
            mv.is_directory_assignment_supported(),
            row.flag(14),
            "dirs at {mv}"
        );
        assert_eq!(mv.is_elr_supported(), row.flag(15), "elr at {mv}");
        assert_eq!(
            mv.is_migration_supported(),
            row.flag(16),
            "migration at {mv}"
        );
        // Gates whose threshold lies below the 4.x minimum hold everywhere.
        assert!(mv.is_no_op_record_supported());
        assert!(mv.is_broker_registration_change_record_supported());
        assert!(mv.is_in_controlled_shutdown_state_supported());
    }
}

#[test]
fn broker_registration_change_versions_match_replication_control_manager() {
    // 4.1.2 bytecode of ReplicationControlManager: iconst_0 for setFenced, iconst_1 for
    // setInControlledShutdown, iconst_2 for setLogDirs.
    for mv in MetadataVersion::ALL {
        assert_eq!(
            mv.broker_registration_change_record_version(BrokerRegistrationChange::Fencing),
            0
        );
        assert_eq!(
            mv.broker_registration_change_record_version(
                BrokerRegistrationChange::ControlledShutdown
            ),
            1
        );
        assert_eq!(
            mv.broker_registration_change_record_version(BrokerRegistrationChange::LogDirs),
            2
        );
    }
}

#[test]
fn feature_defaults_match_java() {
    let order = [
        Feature::TransactionVersion,
        Feature::GroupVersion,
        Feature::EligibleLeaderReplicasVersion,
        Feature::ShareVersion,
        Feature::StreamsVersion,
        Feature::KraftVersion,
    ];
    for (mv, row) in rows() {
        for (i, feature) in order.iter().enumerate() {
            assert_eq!(
                feature.default_level(mv),
                row.int(17 + i),
                "default {feature} at {mv}"
            );
        }
    }
}

#[test]
fn version_strings_parse_like_format_release_version() {
    // Results printed by Kafka 4.1.2's MetadataVersion.fromVersionString.
    let ok = [
        ("3.3", "3.3-IV3"),
        ("3.5", "3.5-IV2"),
        ("3.7", "3.7-IV4"),
        ("3.8", "3.8-IV0"),
        ("3.9", "3.9-IV0"),
        ("4.0", "4.0-IV3"),
        ("4.1", "4.1-IV1"),
        ("4.1-IV0", "4.1-IV0"),
        ("4.1-IV1", "4.1-IV1"),
        ("3.3-IV3", "3.3-IV3"),
        ("4.2-IV1", "4.2-IV1"),
        ("4.1.2", "4.1-IV1"),
    ];
    for (input, expected) in ok {
        assert_eq!(
            MetadataVersion::from_version_string(input).unwrap().name(),
            expected,
            "{input}"
        );
    }
    for bad in ["3.2", "3.3-IV0", "4.2", "", "banana", "4"] {
        let err = MetadataVersion::from_version_string(bad).unwrap_err();
        assert_eq!(
            err,
            MetadataVersionError::UnknownVersionString(bad.to_owned()),
            "{bad}"
        );
        assert!(
            err.to_string().contains("minimum version is 3.3-IV3"),
            "{err}"
        );
    }
    for (later, level) in [("4.3-IV0", 30), ("4.4", 33), ("4.4-IV1", 32)] {
        match MetadataVersion::from_version_string(later) {
            Err(MetadataVersionError::NewerThanSupported { level: l, .. }) => {
                assert_eq!(l, level)
            }
            other => panic!("{later}: {other:?}"),
        }
    }
}

#[test]
fn feature_levels_resolve_or_explain() {
    for mv in MetadataVersion::ALL {
        assert_eq!(
            MetadataVersion::from_feature_level(mv.feature_level()),
            Ok(mv)
        );
    }
    assert_eq!(
        MetadataVersion::from_feature_level(6),
        Err(MetadataVersionError::UnknownFeatureLevel(6))
    );
    assert_eq!(
        MetadataVersion::from_feature_level(31),
        Err(MetadataVersionError::NewerThanSupported {
            name: "4.4-IV0",
            level: 31
        })
    );
    assert_eq!(
        MetadataVersion::from_feature_level(99),
        Err(MetadataVersionError::UnknownFeatureLevel(99))
    );
}

#[test]
fn later_versions_follow_on_from_latest_testing() {
    // From the Kafka 4.4.0 jar: 4.3-IV0 = 30 … 4.4-IV2 = 33, contiguous after 29.
    let levels: Vec<i16> = LATER_METADATA_VERSIONS
        .iter()
        .map(|l| l.feature_level)
        .collect();
    assert_eq!(levels, vec![30, 31, 32, 33]);
    assert!(LATER_METADATA_VERSIONS
        .iter()
        .all(|l| l.register_broker_record_version == 4));
    assert_eq!(
        MetadataVersion::LATEST_TESTING.feature_level() + 1,
        levels[0]
    );
}

#[test]
fn feature_latest_levels_match_java() {
    // 4.1.2 Feature: latestProduction / latestTesting.
    let expected = [
        (Feature::KraftVersion, 1, 1),
        (Feature::TransactionVersion, 2, 2),
        (Feature::GroupVersion, 1, 1),
        (Feature::EligibleLeaderReplicasVersion, 1, 1),
        (Feature::ShareVersion, 1, 1),
        (Feature::StreamsVersion, 0, 1),
    ];
    for (feature, prod, testing) in expected {
        assert_eq!(feature.latest_production(), prod, "{feature}");
        assert_eq!(feature.latest_testing(), testing, "{feature}");
        assert_eq!(Feature::from_name(feature.name()), Some(feature));
    }
    assert_eq!(Feature::from_name("metadata.version"), None);
}

fn render(ranges: &[SupportedFeatureRange]) -> String {
    ranges
        .iter()
        .map(|r| format!("{}={}-{}", r.name, r.min_level, r.max_level))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn supported_features_match_quorum_features() {
    // QuorumFeatures.defaultSupportedFeatureMap(false/true) of 4.1.2, as a sorted map.
    assert_eq!(
        render(&controller_supported_features(false)),
        "eligible.leader.replicas.version=0-1, group.version=0-1, kraft.version=0-1, \
         metadata.version=7-27, share.version=0-1, transaction.version=0-2"
    );
    assert_eq!(
        render(&controller_supported_features(true)),
        "eligible.leader.replicas.version=0-1, group.version=0-1, kraft.version=0-1, \
         metadata.version=7-29, share.version=0-1, streams.version=0-1, transaction.version=0-2"
    );
}

#[test]
fn default_feature_levels_are_what_format_writes() {
    // `kafka-storage format` at 4.1-IV1 wrote eligible.leader.replicas.version=1,
    // group.version=1, transaction.version=2 (in this order) after metadata.version.
    let levels: Vec<(&str, i16)> = default_feature_levels(MetadataVersion::V4_1_IV1)
        .iter()
        .map(|(f, l)| (f.name(), *l))
        .collect();
    assert_eq!(
        levels,
        vec![
            ("eligible.leader.replicas.version", 1),
            ("group.version", 1),
            ("transaction.version", 2)
        ]
    );
    assert!(default_feature_levels(MetadataVersion::V3_3_IV3).is_empty());
}

#[test]
fn validate_level_applies_production_limit_and_dependencies() {
    let f = Feature::StreamsVersion;
    assert!(f
        .validate_level(1, false, MetadataVersion::V4_1_IV1)
        .is_err());
    assert!(f.validate_level(1, true, MetadataVersion::V4_1_IV1).is_ok());
    let elr = Feature::EligibleLeaderReplicasVersion;
    assert_eq!(
        elr.validate_level(1, false, MetadataVersion::V4_0_IV0),
        Err(FeatureError::DependencyNotMet {
            feature: "eligible.leader.replicas.version",
            level: 1,
            required: 23
        })
    );
    assert!(elr
        .validate_level(1, false, MetadataVersion::V4_0_IV1)
        .is_ok());
    assert!(Feature::TransactionVersion
        .validate_level(3, true, MetadataVersion::LATEST_TESTING)
        .is_err());
    assert!(Feature::GroupVersion
        .validate_level(-1, true, MetadataVersion::LATEST_TESTING)
        .is_err());
}
