use super::testing::Rng;
use super::*;
use proptest::prelude::*;
use uuid::Uuid;

fn frame(record: impl Into<MetadataRecord>, version: i16) -> Result<Bytes, RecordError> {
    ApiMessageAndVersion::new(record, version).encode()
}

#[test]
fn feature_level_record_frame_bytes() {
    let record = FeatureLevelRecord {
        name: "metadata.version".into(),
        feature_level: 27,
        ..Default::default()
    };
    let mut expected = vec![
        0x01, // frame version 1
        0x0c, // api key 12
        0x00, // version 0
        0x11, // compact string: 16 bytes + 1
    ];
    expected.extend_from_slice(b"metadata.version");
    expected.extend_from_slice(&[0x00, 0x1b]); // FeatureLevel 27
    expected.push(0x00); // no tagged fields
    let bytes = frame(record.clone(), 0).unwrap();
    assert_eq!(bytes.as_ref(), expected.as_slice());
    assert_eq!(
        ApiMessageAndVersion::decode(&bytes).unwrap(),
        ApiMessageAndVersion::new(record, 0)
    );
}

#[test]
fn json_defaults() {
    let b = RegisterBrokerRecord::default();
    assert!(b.fenced);
    assert_eq!(b.rack, None);
    let p = PartitionRecord::default();
    assert_eq!(
        (p.partition_id, p.leader, p.leader_epoch, p.partition_epoch),
        (-1, -1, -1, -1)
    );
    assert_eq!(p.leader_recovery_state, 0);
    let c = PartitionChangeRecord::default();
    assert_eq!(
        (c.partition_id, c.leader, c.leader_recovery_state),
        (-1, -2, -1)
    );
    assert_eq!((c.isr, c.replicas), (None, None));
    assert_eq!(ProducerIdsRecord::default().broker_epoch, -1);
}

#[test]
fn tagged_fields_are_written_only_when_not_default() {
    let topic_id = Uuid::from_u128(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10);
    let change = PartitionChangeRecord {
        partition_id: 3,
        topic_id,
        ..Default::default()
    };
    let mut body = vec![0x01, 0x05, 0x00, 0, 0, 0, 3];
    body.extend_from_slice(topic_id.as_bytes());
    body.push(0x00); // leader -2, isr null, ...: nothing tagged
    assert_eq!(frame(change.clone(), 0).unwrap().as_ref(), body.as_slice());

    // Leader 5 (tag 1) and ISR [5] (tag 0): written in tag order whatever the field order.
    let change = PartitionChangeRecord {
        leader: 5,
        isr: Some(vec![5]),
        ..change
    };
    body.pop();
    body.extend_from_slice(&[
        0x02, // two tagged fields
        0x00, 0x05, 0x02, 0, 0, 0, 5, // tag 0, size 5, compact array [5]
        0x01, 0x04, 0, 0, 0, 5, // tag 1, size 4, int32 5
    ]);
    assert_eq!(frame(change, 0).unwrap().as_ref(), body.as_slice());

    // Nullable tagged string with a null default: "" is not the default, so it is written.
    let begin = BeginTransactionRecord {
        name: Some(String::new()),
        ..Default::default()
    };
    assert_eq!(
        frame(begin, 0).unwrap().as_ref(),
        &[0x01, 0x17, 0x00, 0x01, 0x00, 0x01, 0x01]
    );
    assert_eq!(
        frame(BeginTransactionRecord::default(), 0)
            .unwrap()
            .as_ref(),
        &[0x01, 0x17, 0x00, 0x00]
    );
}

#[test]
fn fields_missing_from_the_version_must_hold_their_default() {
    let b = RegisterBrokerRecord {
        in_controlled_shutdown: true,
        ..Default::default()
    };
    assert_eq!(
        frame(b.clone(), 0),
        Err(RecordError::NonDefaultAtVersion {
            field: "in_controlled_shutdown",
            version: 0
        })
    );
    frame(b, 1).unwrap();
    let p = PartitionRecord {
        directories: vec![Uuid::nil()],
        ..Default::default()
    };
    assert!(matches!(
        frame(p.clone(), 0),
        Err(RecordError::NonDefaultAtVersion {
            field: "directories",
            ..
        })
    ));
    frame(p, 1).unwrap();
    let p = PartitionRecord {
        eligible_leader_replicas: Some(vec![]),
        ..Default::default()
    };
    assert!(frame(p.clone(), 1).is_err());
    frame(p, 2).unwrap();
    let c = BrokerRegistrationChangeRecord {
        log_dirs: vec![Uuid::from_u128(1)],
        ..Default::default()
    };
    assert!(frame(c.clone(), 1).is_err());
    frame(c, 2).unwrap();
    // Absent fields holding the default are fine, and decode back as the default.
    let b = RegisterBrokerRecord {
        broker_id: 1,
        fenced: false,
        ..Default::default()
    };
    let bytes = frame(b.clone(), 0).unwrap();
    assert_eq!(
        ApiMessageAndVersion::decode(&bytes).unwrap().record,
        b.into()
    );
}

#[test]
fn the_frame_is_checked_like_java() {
    let good = frame(NoOpRecord::default(), 0).unwrap();
    assert_eq!(good.as_ref(), &[0x01, 0x14, 0x00, 0x00]);
    let decode = ApiMessageAndVersion::decode;
    assert_eq!(
        decode(&[0x00, 0x14, 0x00, 0x00]),
        Err(RecordError::FrameVersionZero)
    );
    assert_eq!(
        decode(&[0x02, 0x14, 0x00, 0x00]),
        Err(RecordError::UnknownFrameVersion(2))
    );
    for key in [6u8, 13, 16, 30, 127] {
        assert_eq!(
            decode(&[0x01, key, 0x00, 0x00]),
            Err(RecordError::UnknownApiKey(key as u32))
        );
    }
    assert!(matches!(
        decode(&[0x01, 0x14, 0x01, 0x00]),
        Err(RecordError::UnsupportedVersion { version: 1, .. })
    ));
    assert!(matches!(
        decode(&[0x01, 0x03, 0x03]),
        Err(RecordError::UnsupportedVersion { version: 3, .. })
    ));
    assert_eq!(
        decode(&[0x01, 0x14, 0x00, 0x00, 0x00]),
        Err(RecordError::TrailingBytes {
            record: "NoOpRecord",
            count: 1
        })
    );
    assert!(matches!(
        decode(&[0x01, 0x14]),
        Err(RecordError::Malformed { field: "frame", .. })
    ));
    // Frame fields above i16::MAX: 0x80 0x80 0x02 = 32768.
    assert!(matches!(
        decode(&[0x01, 0x80, 0x80, 0x02, 0x00]),
        Err(RecordError::Malformed { .. })
    ));
    assert!(frame(NoOpRecord::default(), 1).is_err());
}

#[test]
fn body_rules_are_checked_like_java() {
    let decode = ApiMessageAndVersion::decode;
    // TopicRecord with a null name: non-nullable.
    let mut bytes = vec![0x01, 0x02, 0x00, 0x00];
    bytes.extend_from_slice(&[0u8; 16]);
    bytes.push(0);
    assert_eq!(
        decode(&bytes),
        Err(RecordError::NullNotAllowed {
            field: "name",
            version: 0
        })
    );
    // BrokerRegistrationChangeRecord v0 carrying tag 1 (InControlledShutdown is tagged from v1).
    let mut bytes = vec![0x01, 0x11, 0x00, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2];
    bytes.extend_from_slice(&[0x01, 0x01, 0x01, 0x01]);
    assert_eq!(
        decode(&bytes),
        Err(RecordError::TagNotValid { tag: 1, version: 0 })
    );
    // The same at v1 is InControlledShutdown = 1.
    bytes[2] = 0x01;
    let ApiMessageAndVersion { record, .. } = decode(&bytes).unwrap();
    assert_eq!(
        record,
        BrokerRegistrationChangeRecord {
            broker_id: 1,
            broker_epoch: 2,
            in_controlled_shutdown: 1,
            ..Default::default()
        }
        .into()
    );
    // A string longer than 0x7fff bytes is refused on write.
    let t = TopicRecord {
        name: "x".repeat(0x8000),
        ..Default::default()
    };
    assert!(matches!(
        frame(t, 0),
        Err(RecordError::Malformed { field: "name", .. })
    ));
    // An array count larger than the bytes left fails before allocating.
    let bytes = [0x01, 0x0a, 0x00, 0x01, 0x01, 0xff, 0xff, 0xff, 0xff, 0x07];
    assert!(matches!(
        decode(&bytes),
        Err(RecordError::Malformed {
            field: "renewers",
            ..
        })
    ));
}

#[test]
fn unknown_tags_round_trip_and_may_not_shadow_known_ones() {
    let mut p = PartitionRecord {
        leader_recovery_state: 1,
        ..Default::default()
    };
    p.unknown_tagged_fields.insert(9, Bytes::from_static(b"zz"));
    p.unknown_tagged_fields.insert(3, Bytes::new());
    let bytes = frame(p.clone(), 2).unwrap();
    // Tagged section: count 3, then tags 0 (known), 3, 9 (unknown) in ascending order.
    let tail = &bytes[bytes.len() - 10..];
    assert_eq!(
        tail,
        &[0x03, 0x00, 0x01, 0x01, 0x03, 0x00, 0x09, 0x02, b'z', b'z']
    );
    assert_eq!(
        ApiMessageAndVersion::decode(&bytes).unwrap().record,
        p.clone().into()
    );
    p.unknown_tagged_fields.insert(2, Bytes::from_static(&[0]));
    assert_eq!(
        frame(p, 2),
        Err(RecordError::UnknownTagCollision { tag: 2 })
    );
}

#[test]
fn every_record_type_is_listed_once() {
    let keys: Vec<i16> = METADATA_RECORD_TYPES.iter().map(|t| t.0).collect();
    let expected: Vec<i16> = (0..=29).filter(|k| ![6, 13, 16].contains(k)).collect();
    assert_eq!(keys, expected);
    for &(key, name, min, max) in METADATA_RECORD_TYPES {
        let record = MetadataRecord::random(key, &mut Rng::new(1), max);
        assert_eq!(
            (record.api_key(), record.name(), record.valid_versions()),
            (key, name, (min, max))
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_record_round_trips_at_every_version(seed: u64) {
        let mut rng = Rng::new(seed);
        for &(key, _, min, max) in METADATA_RECORD_TYPES {
            for version in min..=max {
                let original = ApiMessageAndVersion::new(MetadataRecord::random(key, &mut rng, version), version);
                let bytes = original.encode().unwrap();
                let decoded = ApiMessageAndVersion::decode(&bytes).unwrap();
                prop_assert_eq!(&decoded, &original);
                prop_assert_eq!(decoded.encode().unwrap(), bytes);
            }
        }
    }

    #[test]
    fn records_at_a_lower_version_fail_only_on_newer_fields(seed: u64) {
        // Writing a record built for version v at version v-1 either works (then it decodes
        // equal) or names a field, never panics or writes something undecodable.
        let mut rng = Rng::new(seed);
        for &(key, _, min, max) in METADATA_RECORD_TYPES {
            for version in min + 1..=max {
                let record = MetadataRecord::random(key, &mut rng, version);
                let older = ApiMessageAndVersion::new(record, version - 1);
                match older.encode() {
                    Ok(bytes) => prop_assert_eq!(ApiMessageAndVersion::decode(&bytes).unwrap(), older),
                    Err(e) => prop_assert!(
                        matches!(e, RecordError::NonDefaultAtVersion { .. } | RecordError::NullNotAllowed { .. }),
                        "{e}"
                    ),
                }
            }
        }
    }

    #[test]
    fn corrupted_frames_never_panic(seed: u64, at in any::<prop::sample::Index>(), byte: u8, cut in any::<prop::sample::Index>()) {
        let mut rng = Rng::new(seed);
        let (key, _, _, max) = METADATA_RECORD_TYPES[rng.below(METADATA_RECORD_TYPES.len() as u64) as usize];
        let mut bytes = ApiMessageAndVersion::new(MetadataRecord::random(key, &mut rng, max), max).encode().unwrap().to_vec();
        let _ = ApiMessageAndVersion::decode(&bytes[..cut.index(bytes.len())]);
        let i = at.index(bytes.len());
        bytes[i] = byte;
        if let Ok(decoded) = ApiMessageAndVersion::decode(&bytes) {
            // Whatever decodes must encode again (maybe differently: bool bytes, varints).
            prop_assert!(decoded.encode().is_ok());
        }
    }
}
