//! Tests of `metadata_version.rs`.
use super::*;

/// Printed by running Kafka 4.4.0's `MetadataVersion`/`Feature` (a Java 17 single-file
/// program over the 4.4.0 jars in `~/.cache/kraftwerk/kafka/4.4.0/libs`, one line per level of
/// `MetadataVersion.VERSIONS` from 7). Columns: level, name, release, isProduction,
/// didMetadataChange, registerBrokerRecordVersion, registerControllerRecordVersion (-1 =
/// throws), partitionRecordVersion, partitionChangeRecordVersion, isScramSupported,
/// isLeaderEpochBumpRequiredOnIsrShrink, isMetadataTransactionSupported,
/// isDelegationTokenSupported, isControllerRegistrationSupported,
/// isDirectoryAssignmentSupported, isElrSupported, isMigrationSupported, then defaultLevel of
/// transaction.version, group.version, eligible.leader.replicas.version, share.version,
/// streams.version, kraft.version, then isCordonedLogDirsSupported, isCidrAclSupported,
/// isControllerUnregistrationSupported. The same program over 4.1.2, 4.2.2 and 4.3.1 printed
/// identical columns for every level those releases have, except isProduction (see
/// [`KAFKA_RELEASES`] and `production_levels_per_release_match_each_jar`) and share.version's
/// default at 4.4-IV0, which was 1 in 4.3.1 (where 4.4-IV0 was an unstable level).
const KAFKA_4_4_0: &str = "\
7 3.3-IV3 3.3 1 1 1 -1 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
8 3.4-IV0 3.4 1 1 2 -1 0 0 0 1 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0
9 3.5-IV0 3.5 1 0 2 -1 0 0 0 1 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0
10 3.5-IV1 3.5 1 0 2 -1 0 0 0 1 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0
11 3.5-IV2 3.5 1 1 2 -1 0 0 1 1 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0
12 3.6-IV0 3.6 1 0 2 -1 0 0 1 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0
13 3.6-IV1 3.6 1 1 2 -1 0 0 1 0 1 0 0 0 0 1 0 0 0 0 0 0 0 0 0
14 3.6-IV2 3.6 1 1 2 -1 0 0 1 0 1 1 0 0 0 1 0 0 0 0 0 0 0 0 0
15 3.7-IV0 3.7 1 1 2 0 0 0 1 0 1 1 1 0 0 1 0 0 0 0 0 0 0 0 0
16 3.7-IV1 3.7 1 0 2 0 0 0 1 0 1 1 1 0 0 1 0 0 0 0 0 0 0 0 0
17 3.7-IV2 3.7 1 1 3 0 1 1 1 0 1 1 1 1 0 1 0 0 0 0 0 0 0 0 0
18 3.7-IV3 3.7 1 0 3 0 1 1 1 0 1 1 1 1 0 1 0 0 0 0 0 0 0 0 0
19 3.7-IV4 3.7 1 0 3 0 1 1 1 0 1 1 1 1 0 1 0 0 0 0 0 0 0 0 0
20 3.8-IV0 3.8 1 0 3 0 1 1 1 0 1 1 1 1 0 1 0 0 0 0 0 0 0 0 0
21 3.9-IV0 3.9 1 0 3 0 1 1 1 0 1 1 1 1 0 1 0 0 0 0 0 1 0 0 0
22 4.0-IV0 4.0 1 0 3 0 1 1 1 0 1 1 1 1 0 1 0 1 0 0 0 1 0 0 0
23 4.0-IV1 4.0 1 1 3 0 2 2 1 0 1 1 1 1 1 1 0 1 0 0 0 1 0 0 0
24 4.0-IV2 4.0 1 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 0 0 0 1 0 0 0
25 4.0-IV3 4.0 1 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 0 0 0 1 0 0 0
26 4.1-IV0 4.1 1 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 1 0 0 1 0 0 0
27 4.1-IV1 4.1 1 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 1 0 0 1 0 0 0
28 4.2-IV0 4.2 1 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 1 1 0 1 0 0 0
29 4.2-IV1 4.2 1 0 3 0 2 2 1 0 1 1 1 1 1 1 2 1 1 1 1 1 0 0 0
30 4.3-IV0 4.3 1 1 4 0 2 2 1 0 1 1 1 1 1 1 2 1 1 1 1 1 1 0 0
31 4.4-IV0 4.4 1 0 4 0 2 2 1 0 1 1 1 1 1 1 2 1 1 2 1 1 1 0 0
32 4.4-IV1 4.4 1 1 4 0 2 2 1 0 1 1 1 1 1 1 2 1 1 2 1 1 1 1 0
33 4.4-IV2 4.4 1 1 4 0 2 2 1 0 1 1 1 1 1 1 2 1 1 2 1 1 1 1 1
34 4.5-IV0 4.5 0 0 4 0 2 2 1 0 1 1 1 1 1 1 2 1 1 2 1 1 1 1 1";

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
    KAFKA_4_4_0
        .lines()
        .map(|line| {
            let cols: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            assert_eq!(cols.len(), 26, "{line}");
            let level: i16 = cols[0].parse().unwrap();
            (
                MetadataVersion::from_feature_level(level).unwrap(),
                Row { cols },
            )
        })
        .collect()
}

#[test]
fn table_covers_exactly_kafka_4_4_0_levels_in_order() {
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
    assert_eq!(MetadataVersion::LATEST_PRODUCTION.feature_level(), 33);
    assert_eq!(MetadataVersion::LATEST_TESTING.feature_level(), 34);
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
        assert_eq!(
            mv.is_cordoned_log_dirs_supported(),
            row.flag(23),
            "cordoned at {mv}"
        );
        assert_eq!(mv.is_cidr_acl_supported(), row.flag(24), "cidr at {mv}");
        assert_eq!(
            mv.is_controller_unregistration_supported(),
            row.flag(25),
            "cunreg at {mv}"
        );
        assert_eq!(
            mv.unregister_controller_record_version().is_some(),
            row.flag(25),
            "UnregisterControllerRecord at {mv}"
        );
        // Gates whose threshold lies below the 4.x minimum hold everywhere.
        assert!(mv.is_no_op_record_supported());
        assert!(mv.is_broker_registration_change_record_supported());
        assert!(mv.is_in_controlled_shutdown_state_supported());
    }
}

#[test]
fn broker_registration_change_versions_match_replication_control_manager() {
    // 4.4.0 bytecode of ReplicationControlManager: iconst_0 for setFenced, iconst_1 for
    // setInControlledShutdown, iconst_2 for setLogDirs, iconst_3 for setCordonedLogDirs
    // (handleDirectoriesCordoned).
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
        assert_eq!(
            mv.broker_registration_change_record_version(BrokerRegistrationChange::CordonedLogDirs),
            3
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
    // Results printed by Kafka 4.4.0's MetadataVersion.fromVersionString(s, false) and
    // fromVersionString(s, true): identical for these.
    let ok = [
        ("3.3", "3.3-IV3"),
        ("3.4", "3.4-IV0"),
        ("3.5", "3.5-IV2"),
        ("3.6", "3.6-IV2"),
        ("3.7", "3.7-IV4"),
        ("3.8", "3.8-IV0"),
        ("3.9", "3.9-IV0"),
        ("4.0", "4.0-IV3"),
        ("4.1", "4.1-IV1"),
        ("4.2", "4.2-IV1"),
        ("4.3", "4.3-IV0"),
        ("4.4", "4.4-IV2"),
        ("4.4-IV2", "4.4-IV2"),
        ("4.4.0", "4.4-IV2"),
        ("4.3.1", "4.3-IV0"),
        ("4.1-IV0", "4.1-IV0"),
        ("3.3-IV3", "3.3-IV3"),
        ("4.2-IV0", "4.2-IV0"),
    ];
    for (input, expected) in ok {
        for unstable in [false, true] {
            assert_eq!(
                MetadataVersion::from_version_string(input, unstable)
                    .unwrap()
                    .name(),
                expected,
                "{input}"
            );
        }
    }
    // Every name parses to itself (with unstable versions enabled, else only production).
    for mv in MetadataVersion::ALL {
        assert_eq!(
            MetadataVersion::from_version_string(mv.name(), true),
            Ok(mv)
        );
        assert_eq!(
            MetadataVersion::from_version_string(mv.name(), false).is_ok(),
            mv.is_production()
        );
    }
    // 4.4.0: "4.5-IV0" only with unstable; "4.5", "4", "3.2", "3.3-IV0" never.
    assert_eq!(
        MetadataVersion::from_version_string("4.5-IV0", true),
        Ok(MetadataVersion::V4_5_IV0)
    );
    for (bad, unstable) in [
        ("4.5-IV0", false),
        ("4.5", false),
        ("4.5", true),
        ("4", false),
        ("3.2", true),
        ("3.3-IV0", false),
        ("", false),
        ("banana", true),
    ] {
        let err = MetadataVersion::from_version_string(bad, unstable).unwrap_err();
        let max = if unstable {
            MetadataVersion::V4_5_IV0
        } else {
            MetadataVersion::V4_4_IV2
        };
        assert_eq!(
            err,
            MetadataVersionError::UnknownVersionString {
                version: bad.to_owned(),
                max
            },
            "{bad}"
        );
        // Java's message, e.g. for "4.5" without unstable versions.
        let list_end = if unstable {
            "4.4-IV2, 4.5-IV0"
        } else {
            "4.4-IV1, 4.4-IV2"
        };
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "Unknown metadata.version '{bad}'. Supported metadata.version are: 3.3-IV3, \
                 3.4-IV0, 3.5-IV0,"
            )) && text.ends_with(list_end),
            "{text}"
        );
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
    for level in [6, 35, 99, -1] {
        assert_eq!(
            MetadataVersion::from_feature_level(level),
            Err(MetadataVersionError::UnknownFeatureLevel(level))
        );
    }
}

#[test]
fn production_levels_per_release_match_each_jar() {
    // MetadataVersion.LATEST_PRODUCTION / latestTesting() printed from each release's jar:
    // 4.0.2 4.0-IV3 (25) / 4.1-IV0, 4.1.2 4.1-IV1 (27) / 4.2-IV1, 4.2.2 4.2-IV1 (29) / 4.3-IV0,
    // 4.3.1 4.3-IV0 (30) / 4.4-IV0, 4.4.0 4.4-IV2 (33) / 4.5-IV0.
    let expected = [
        ("4.0.2", 25),
        ("4.1.2", 27),
        ("4.2.2", 29),
        ("4.3.1", 30),
        ("4.4.0", 33),
        ("4.4", 33),
    ];
    for (release, level) in expected {
        assert_eq!(
            latest_production_of_release(release).map(MetadataVersion::feature_level),
            Some(level),
            "{release}"
        );
    }
    assert_eq!(latest_production_of_release("3.9.1"), None);
    assert_eq!(latest_production_of_release("4.5.0"), None);
    assert_eq!(latest_production_of_release("4"), None);
    assert_eq!(latest_production_of_release(""), None);
    // Each release's newest production level is the newest production level of its own name.
    for (release, mv) in KAFKA_RELEASES {
        assert_eq!(MetadataVersion::from_version_string(release, false), Ok(mv));
    }
}

#[test]
fn feature_latest_levels_match_java() {
    // 4.4.0 Feature: latestProduction / latestTesting.
    let expected = [
        (Feature::KraftVersion, 1, 1),
        (Feature::TransactionVersion, 2, 2),
        (Feature::GroupVersion, 1, 1),
        (Feature::EligibleLeaderReplicasVersion, 1, 1),
        (Feature::ShareVersion, 2, 2),
        (Feature::StreamsVersion, 1, 1),
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
    // QuorumFeatures.defaultSupportedFeatureMap(false/true) of 4.4.0, as a sorted map.
    assert_eq!(
        render(&controller_supported_features(false)),
        "eligible.leader.replicas.version=0-1, group.version=0-1, kraft.version=0-1, \
         metadata.version=7-33, share.version=0-2, streams.version=0-1, transaction.version=0-2"
    );
    assert_eq!(
        render(&controller_supported_features(true)),
        "eligible.leader.replicas.version=0-1, group.version=0-1, kraft.version=0-1, \
         metadata.version=7-34, share.version=0-2, streams.version=0-1, transaction.version=0-2"
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
    // Kafka 4.2.2 (4.2-IV1), 4.3.1 (4.3-IV0) and 4.4.0 (4.4-IV2) `kafka-storage format`
    // printed their bootstrap records in this order after metadata.version.
    let render = |mv| {
        default_feature_levels(mv)
            .iter()
            .map(|(f, l)| format!("{}={l}", f.name()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let before_share_2 = "eligible.leader.replicas.version=1 group.version=1 share.version=1 \
                          streams.version=1 transaction.version=2";
    assert_eq!(render(MetadataVersion::V4_2_IV1), before_share_2);
    assert_eq!(render(MetadataVersion::V4_3_IV0), before_share_2);
    assert_eq!(
        render(MetadataVersion::V4_4_IV2),
        "eligible.leader.replicas.version=1 group.version=1 share.version=2 \
         streams.version=1 transaction.version=2"
    );
}

#[test]
fn validate_level_applies_production_limit_and_dependencies() {
    // 4.4.0: every known level is production, and only ELR 1 has a dependency.
    let f = Feature::StreamsVersion;
    assert!(f
        .validate_level(1, false, MetadataVersion::V4_1_IV1)
        .is_ok());
    assert!(f
        .validate_level(2, true, MetadataVersion::LATEST_TESTING)
        .is_err());
    assert!(Feature::ShareVersion
        .validate_level(2, false, MetadataVersion::V3_3_IV3)
        .is_ok());
    assert_eq!(
        Feature::ShareVersion.validate_level(3, false, MetadataVersion::LATEST_TESTING),
        Err(FeatureError::UnsupportedLevel {
            feature: "share.version",
            level: 3,
            max: 2
        })
    );
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
