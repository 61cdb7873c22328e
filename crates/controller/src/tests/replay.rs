//! Replay of every record type, replay errors, and the image → records → image round trip at
//! every prefix of a log (snapshots).

use bytes::Bytes;
use kraftwerk_records::metadata::*;
use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use crate::error::ReplayError;
use crate::image::MetadataImage;
use crate::replay::replay;
use crate::testing::{bootstrap_records, TestNode};

fn rec(record: impl Into<MetadataRecord>, version: i16) -> ApiMessageAndVersion {
    ApiMessageAndVersion::new(record, version)
}

/// A log that uses every record type the image stores.
fn rich_log() -> Vec<(i64, ApiMessageAndVersion)> {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let epochs = node.add_brokers(&[1, 2, 3]);
    node.create_topic("alpha", 3, 3);
    node.create_topic("beta.gamma", 2, 2);
    // Shrink an ISR, fence a broker (ELR bookkeeping), allocate producer ids.
    node.heartbeat(3, epochs[2], true, false, node.next_offset());
    node.commit();
    node.request(
        0,
        crate::controller::ControllerRequest::AllocateProducerIds(
            kafka_protocol::messages::AllocateProducerIdsRequest::default()
                .with_broker_id(1.into())
                .with_broker_epoch(epochs[0]),
        ),
    );
    node.commit();
    let topic = node
        .controller
        .image()
        .topics
        .get_by_name("alpha")
        .unwrap()
        .id;
    let extra = vec![
        rec(
            ConfigRecord {
                resource_type: 2,
                resource_name: "alpha".into(),
                name: "retention.ms".into(),
                value: Some("1000".into()),
                ..Default::default()
            },
            0,
        ),
        rec(
            ConfigRecord {
                resource_type: 4,
                resource_name: "".into(),
                name: "log.retention.hours".into(),
                value: Some("2".into()),
                ..Default::default()
            },
            0,
        ),
        rec(
            AccessControlEntryRecord {
                id: Uuid::from_u64_pair(7, 7),
                resource_type: 2,
                resource_name: "alpha".into(),
                pattern_type: 3,
                principal: "User:bob".into(),
                host: "*".into(),
                operation: 3,
                permission_type: 3,
                ..Default::default()
            },
            0,
        ),
        rec(
            AccessControlEntryRecord {
                id: Uuid::from_u64_pair(7, 8),
                resource_type: 2,
                resource_name: "*".into(),
                pattern_type: 3,
                principal: "User:eve".into(),
                host: "*".into(),
                operation: 2,
                permission_type: 2,
                ..Default::default()
            },
            0,
        ),
        rec(
            RemoveAccessControlEntryRecord {
                id: Uuid::from_u64_pair(7, 8),
                ..Default::default()
            },
            0,
        ),
        rec(
            ClientQuotaRecord {
                entity: vec![EntityData {
                    entity_type: "user".into(),
                    entity_name: Some("bob".into()),
                    ..Default::default()
                }],
                key: "producer_byte_rate".into(),
                value: 1024.0,
                remove: false,
                ..Default::default()
            },
            0,
        ),
        rec(
            ClientQuotaRecord {
                entity: vec![EntityData {
                    entity_type: "client-id".into(),
                    entity_name: None,
                    ..Default::default()
                }],
                key: "consumer_byte_rate".into(),
                value: 5.5,
                remove: false,
                ..Default::default()
            },
            0,
        ),
        rec(
            UserScramCredentialRecord {
                name: "bob".into(),
                mechanism: 1,
                salt: Bytes::from_static(b"salt"),
                stored_key: Bytes::from_static(b"sk"),
                server_key: Bytes::from_static(b"svk"),
                iterations: 4096,
                ..Default::default()
            },
            0,
        ),
        rec(
            UserScramCredentialRecord {
                name: "eve".into(),
                mechanism: 2,
                iterations: 8192,
                ..Default::default()
            },
            0,
        ),
        rec(
            RemoveUserScramCredentialRecord {
                name: "eve".into(),
                mechanism: 2,
                ..Default::default()
            },
            0,
        ),
        rec(
            DelegationTokenRecord {
                owner: "User:bob".into(),
                requester: "User:bob".into(),
                renewers: vec!["User:amy".into()],
                issue_timestamp: 1,
                max_timestamp: 3,
                expiration_timestamp: 2,
                token_id: "tok".into(),
                ..Default::default()
            },
            0,
        ),
        rec(
            DelegationTokenRecord {
                token_id: "gone".into(),
                ..Default::default()
            },
            0,
        ),
        rec(
            RemoveDelegationTokenRecord {
                token_id: "gone".into(),
                ..Default::default()
            },
            0,
        ),
        rec(
            RegisterControllerRecord {
                controller_id: 3000,
                incarnation_id: Uuid::from_u64_pair(3, 3),
                end_points: vec![ControllerEndpoint {
                    name: "CONTROLLER".into(),
                    host: "c".into(),
                    port: 9093,
                    security_protocol: 0,
                    ..Default::default()
                }],
                features: vec![ControllerFeature {
                    name: "metadata.version".into(),
                    min_supported_version: 7,
                    max_supported_version: 27,
                    ..Default::default()
                }],
                ..Default::default()
            },
            0,
        ),
        rec(
            RegisterControllerRecord {
                controller_id: 3001,
                ..Default::default()
            },
            0,
        ),
        rec(
            UnregisterControllerRecord {
                controller_id: 3001,
                ..Default::default()
            },
            0,
        ),
        rec(
            PartitionChangeRecord {
                topic_id: topic,
                partition_id: 1,
                leader_recovery_state: 0,
                ..Default::default()
            },
            2,
        ),
        rec(NoOpRecord::default(), 0),
        rec(
            BeginTransactionRecord {
                name: Some("t".into()),
                ..Default::default()
            },
            0,
        ),
        rec(
            TopicRecord {
                name: "aborted".into(),
                topic_id: Uuid::from_u64_pair(8, 8),
                ..Default::default()
            },
            0,
        ),
        rec(AbortTransactionRecord::default(), 0),
        rec(BeginTransactionRecord::default(), 0),
        rec(
            TopicRecord {
                name: "kept".into(),
                topic_id: Uuid::from_u64_pair(8, 9),
                ..Default::default()
            },
            0,
        ),
        rec(EndTransactionRecord::default(), 0),
        rec(
            ClearElrRecord {
                topic_name: "alpha".into(),
                ..Default::default()
            },
            0,
        ),
        rec(
            FeatureLevelRecord {
                name: "group.version".into(),
                feature_level: 0,
                ..Default::default()
            },
            0,
        ),
    ];
    let mut log = node.log[..node.committed].to_vec();
    for r in extra {
        log.push((log.len() as i64, r));
    }
    log
}

fn replay_all(records: &[(i64, ApiMessageAndVersion)]) -> MetadataImage {
    let mut image = MetadataImage::empty();
    for (offset, r) in records {
        replay(&mut image, r, *offset)
            .unwrap_or_else(|e| panic!("replay of {r:?} at {offset}: {e}"));
    }
    image
}

#[test]
fn replay_applies_every_record_type() {
    let log = rich_log();
    let image = replay_all(&log);
    image.check_invariants().unwrap();
    assert_eq!(image.cluster.num_brokers(), 3);
    assert!(image.cluster.broker(3).unwrap().fenced);
    assert_eq!(
        image.topics.len(),
        3,
        "alpha, beta.gamma, kept; the aborted topic is gone"
    );
    assert!(image.topics.get_by_name("aborted").is_none());
    assert!(image.topics.get_by_name("kept").is_some());
    assert_eq!(
        image
            .configs
            .value(2, "alpha", "retention.ms")
            .map(String::as_str),
        Some("1000")
    );
    assert_eq!(image.other.acls.len(), 1);
    assert_eq!(image.other.client_quotas.len(), 2);
    assert_eq!(image.other.scram_credentials.len(), 1);
    assert_eq!(
        image
            .other
            .delegation_tokens
            .keys()
            .cloned()
            .collect::<Vec<_>>(),
        vec!["tok".to_owned()]
    );
    assert_eq!(
        image
            .cluster
            .controllers()
            .map(|c| c.id)
            .collect::<Vec<_>>(),
        vec![3000]
    );
    assert_eq!(image.producer_ids.next_producer_id, 1000);
    assert_eq!(image.features.level("group.version"), 0);
    let alpha = image.topics.get_by_name("alpha").unwrap();
    assert!(alpha
        .partitions
        .values()
        .all(|p| p.elr.is_empty() && p.last_known_elr.is_empty()));
    assert_eq!(image.last_offset, log.len() as i64 - 1);
}

fn normalized(mut image: MetadataImage, offset: i64) -> MetadataImage {
    image.cluster.set_registration_offsets(offset);
    image.last_offset = offset;
    image.records_replayed = 0;
    image
}

/// Image → records → replay gives the same image, at every prefix of the log (Kafka's
/// `TestThroughAllIntermediateImagesLeadingToFinalImageHelper`).
#[test]
fn image_round_trips_through_records_at_every_prefix() {
    let log = rich_log();
    let mut image = MetadataImage::empty();
    for (i, (offset, r)) in log.iter().enumerate() {
        replay(&mut image, r, *offset).unwrap();
        let written = image.write_records();
        for w in &written {
            let bytes = w
                .encode()
                .unwrap_or_else(|e| panic!("prefix {i}: cannot encode {w:?}: {e}"));
            assert_eq!(&ApiMessageAndVersion::decode(&bytes).unwrap(), w);
        }
        let mut rebuilt = MetadataImage::empty();
        for w in &written {
            replay(&mut rebuilt, w, *offset)
                .unwrap_or_else(|e| panic!("prefix {i}: replay of {w:?}: {e}"));
        }
        let expected = match &image.transaction {
            Some(open) => open.before.clone(),
            None => image.clone(),
        };
        assert_eq!(
            normalized(rebuilt, *offset),
            normalized(expected, *offset),
            "prefix {i} (record {r:?})"
        );
    }
}

#[test]
fn replay_errors_are_typed() {
    let base: Vec<(i64, ApiMessageAndVersion)> = bootstrap_records(MetadataVersion::V4_1_IV1)
        .into_iter()
        .enumerate()
        .map(|(i, r)| (i as i64, r))
        .collect();
    let check = |record: ApiMessageAndVersion, expected: fn(&ReplayError) -> bool| {
        let mut image = replay_all(&base);
        let error = replay(&mut image, &record, 100).unwrap_err();
        assert!(expected(&error), "{record:?}: {error:?}");
    };
    let topic = Uuid::from_u64_pair(1, 2);
    check(
        rec(
            PartitionChangeRecord {
                topic_id: topic,
                partition_id: 0,
                ..Default::default()
            },
            2,
        ),
        |e| matches!(e, ReplayError::UnknownTopic(_)),
    );
    check(
        rec(
            PartitionRecord {
                topic_id: topic,
                partition_id: 0,
                ..Default::default()
            },
            2,
        ),
        |e| matches!(e, ReplayError::UnknownTopic(_)),
    );
    check(
        rec(
            RemoveTopicRecord {
                topic_id: topic,
                ..Default::default()
            },
            0,
        ),
        |e| matches!(e, ReplayError::UnknownTopic(_)),
    );
    check(
        rec(
            BrokerRegistrationChangeRecord {
                broker_id: 1,
                broker_epoch: 5,
                fenced: 1,
                ..Default::default()
            },
            0,
        ),
        |e| matches!(e, ReplayError::UnknownBroker(1)),
    );
    check(
        rec(
            UnregisterBrokerRecord {
                broker_id: 1,
                broker_epoch: 5,
                ..Default::default()
            },
            0,
        ),
        |e| matches!(e, ReplayError::UnknownBroker(1)),
    );
    check(rec(EndTransactionRecord::default(), 0), |e| {
        matches!(e, ReplayError::Transaction(_))
    });
    check(rec(AbortTransactionRecord::default(), 0), |e| {
        matches!(e, ReplayError::Transaction(_))
    });
    check(
        rec(
            FeatureLevelRecord {
                name: "metadata.version".into(),
                feature_level: 99,
                ..Default::default()
            },
            0,
        ),
        |e| matches!(e, ReplayError::UnsupportedFeatureLevel { .. }),
    );
    check(
        rec(
            ClearElrRecord {
                topic_name: "nope".into(),
                ..Default::default()
            },
            0,
        ),
        |e| matches!(e, ReplayError::UnknownTopicName(_)),
    );

    // With a topic and a registered broker.
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let epoch = node.add_brokers(&[1])[0];
    let id = node.create_topic("t", 1, 1);
    let mut image = node.controller.image().clone();
    let wrong_epoch = rec(
        BrokerRegistrationChangeRecord {
            broker_id: 1,
            broker_epoch: epoch + 1,
            fenced: 1,
            ..Default::default()
        },
        0,
    );
    assert!(matches!(
        replay(&mut image, &wrong_epoch, 1000),
        Err(ReplayError::BrokerEpochMismatch { .. })
    ));
    let bad_fenced = rec(
        BrokerRegistrationChangeRecord {
            broker_id: 1,
            broker_epoch: epoch,
            fenced: 2,
            ..Default::default()
        },
        0,
    );
    assert!(matches!(
        replay(&mut image, &bad_fenced, 1000),
        Err(ReplayError::InvalidField { .. })
    ));
    let unknown_partition = rec(
        PartitionChangeRecord {
            topic_id: id,
            partition_id: 7,
            ..Default::default()
        },
        2,
    );
    assert!(matches!(
        replay(&mut image, &unknown_partition, 1000),
        Err(ReplayError::UnknownPartition { .. })
    ));
    let duplicate = rec(
        TopicRecord {
            name: "t".into(),
            topic_id: Uuid::from_u64_pair(5, 5),
            ..Default::default()
        },
        0,
    );
    assert!(matches!(
        replay(&mut image, &duplicate, 1000),
        Err(ReplayError::DuplicateTopic { .. })
    ));
    let bad_dirs = rec(
        PartitionRecord {
            topic_id: id,
            partition_id: 1,
            replicas: vec![1, 2],
            directories: vec![Uuid::from_u64_pair(1, 1)],
            ..Default::default()
        },
        1,
    );
    assert!(matches!(
        replay(&mut image, &bad_dirs, 1000),
        Err(ReplayError::InvalidReplicaDirectories { .. })
    ));
    // The controller refuses out-of-order offsets.
    let err = node
        .controller
        .replay_committed(&[(0, rec(NoOpRecord::default(), 0))])
        .unwrap_err();
    assert!(matches!(err, ReplayError::OffsetNotIncreasing { .. }));
}

#[test]
fn standby_and_active_build_the_same_committed_image() {
    let mut active = TestNode::active(MetadataVersion::V4_1_IV1);
    let epochs = active.add_brokers(&[1, 2]);
    active.create_topic("s", 4, 2);
    active.heartbeat(2, epochs[1], true, false, active.next_offset());
    active.commit();
    let mut standby =
        crate::controller::Controller::new(crate::testing::config(MetadataVersion::V4_1_IV1));
    // Committed batches arrive in other sizes than the results were appended in.
    for chunk in active.log.chunks(3) {
        standby.replay_committed(chunk).unwrap();
    }
    assert_eq!(standby.image(), active.controller.image());
}
