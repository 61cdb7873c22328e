//! Vectors for a cross-check against Kafka's own Java classes, run by hand until the `compat/`
//! project takes it over. Both tests are `#[ignore]`d and need `KRAFTWERK_JAVA_VECTORS=<dir>`:
//! - `write_rust_vectors` writes `<dir>/rust.log`: contiguous batches (a LeaderChange +
//!   KRaftVersion + Voters control batch, fixed metadata records, random records of every
//!   type at every version Kafka 4.1.2 knows, snapshot header/footer batches), for Java to
//!   read with `RecordsIterator` + `MetadataRecordSerde` and rebuild byte for byte;
//! - `read_java_vectors` reads `<dir>/java.log`, written by Java's `BatchBuilder` and
//!   `MemoryRecordsBuilder`, and checks we decode it and re-encode identical bytes.

use bytes::Bytes;
use kafka_protocol::messages::voters_record::{Endpoint, KRaftVersionFeature, Voter};
use kafka_protocol::messages::{BrokerId, VotersRecord};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use crate::batch::{decode_batch, valid_prefix, BatchBuilder};
use crate::control::{control_batch, decode_control_batch, ControlRecord};
use crate::metadata::testing::Rng;
use crate::metadata::*;

fn vectors_dir() -> std::path::PathBuf {
    std::env::var_os("KRAFTWERK_JAVA_VECTORS")
        .expect("set KRAFTWERK_JAVA_VECTORS to a directory")
        .into()
}

/// Record versions Kafka 4.1.2 reads (the 4.4 additions are left out).
fn java_4_1_max_version(api_key: i16, max: i16) -> Option<i16> {
    match api_key {
        0 => Some(3),
        17 => Some(2),
        29 => None,
        _ => Some(max),
    }
}

pub(crate) fn fixed_voters() -> ControlRecord {
    let voter = |id: i32, dir: u128, port: u16| {
        Voter::default()
            .with_voter_id(BrokerId(id))
            .with_voter_directory_id(Uuid::from_u128(dir))
            .with_endpoints(vec![Endpoint::default()
                .with_name(StrBytes::from_static_str("CONTROLLER"))
                .with_host(StrBytes::from_string(format!("controller-{id}")))
                .with_port(port)])
            .with_k_raft_version_feature(
                KRaftVersionFeature::default()
                    .with_min_supported_version(0)
                    .with_max_supported_version(1),
            )
    };
    ControlRecord::Voters(
        VotersRecord::default().with_voters(vec![voter(1, 0x11, 9093), voter(2, 0x22, 9094)]),
    )
}

/// The fixed data records; the Java side asserts their field values one by one.
pub(crate) fn fixed_records() -> Vec<ApiMessageAndVersion> {
    let broker = RegisterBrokerRecord {
        broker_id: 1,
        incarnation_id: Uuid::from_u128(0xabcd),
        broker_epoch: 100,
        end_points: vec![BrokerEndpoint {
            name: "PLAINTEXT".into(),
            host: "localhost".into(),
            port: 9092,
            security_protocol: 0,
            ..Default::default()
        }],
        features: vec![BrokerFeature {
            name: "metadata.version".into(),
            min_supported_version: 7,
            max_supported_version: 27,
            ..Default::default()
        }],
        rack: Some("rack-a".into()),
        fenced: false,
        log_dirs: vec![Uuid::from_u128(0x1d)],
        ..Default::default()
    };
    let partition = PartitionRecord {
        partition_id: 0,
        topic_id: Uuid::from_u128(0x7091c),
        replicas: vec![1, 2],
        isr: vec![1],
        leader: 1,
        leader_epoch: 3,
        partition_epoch: 4,
        directories: vec![Uuid::from_u128(0x1d), Uuid::from_u128(0x2d)],
        eligible_leader_replicas: Some(vec![2]),
        ..Default::default()
    };
    vec![
        ApiMessageAndVersion::new(
            FeatureLevelRecord {
                name: "metadata.version".into(),
                feature_level: 27,
                ..Default::default()
            },
            0,
        ),
        ApiMessageAndVersion::new(broker, 3),
        ApiMessageAndVersion::new(
            TopicRecord {
                name: "foo".into(),
                topic_id: Uuid::from_u128(0x7091c),
                ..Default::default()
            },
            0,
        ),
        ApiMessageAndVersion::new(partition, 2),
        ApiMessageAndVersion::new(
            PartitionChangeRecord {
                partition_id: 0,
                topic_id: Uuid::from_u128(0x7091c),
                leader: 2,
                isr: Some(vec![1, 2]),
                ..Default::default()
            },
            2,
        ),
        ApiMessageAndVersion::new(
            ConfigRecord {
                resource_type: 2,
                resource_name: "foo".into(),
                name: "retention.ms".into(),
                value: None,
                ..Default::default()
            },
            0,
        ),
        ApiMessageAndVersion::new(
            ClientQuotaRecord {
                entity: vec![EntityData {
                    entity_type: "user".into(),
                    entity_name: None,
                    ..Default::default()
                }],
                key: "producer_byte_rate".into(),
                value: 1.5,
                remove: false,
                ..Default::default()
            },
            0,
        ),
        ApiMessageAndVersion::new(
            BrokerRegistrationChangeRecord {
                broker_id: 1,
                broker_epoch: 100,
                fenced: -1,
                ..Default::default()
            },
            2,
        ),
        ApiMessageAndVersion::new(NoOpRecord::default(), 0),
    ]
}

fn data_batch(base_offset: i64, records: &[ApiMessageAndVersion]) -> Bytes {
    let mut b = BatchBuilder::new(base_offset, 5, 2000 + base_offset);
    for r in records {
        b.append(None, &r.encode().expect("encodable"));
    }
    b.build()
}

#[test]
#[ignore = "writes vectors for the Java cross-check; needs KRAFTWERK_JAVA_VECTORS"]
fn write_rust_vectors() {
    let mut log = Vec::new();
    let push = |log: &mut Vec<u8>, batch: Bytes| {
        log.extend_from_slice(&batch);
        crate::batch::BatchHeader::parse(&batch)
            .unwrap()
            .next_offset()
    };
    let start = [
        ControlRecord::leader_change(1, &[1, 2, 3], &[1, 3]),
        ControlRecord::kraft_version(1),
        fixed_voters(),
    ];
    push(&mut log, control_batch(0, 5, 1000, &start));
    let mut next = push(&mut log, data_batch(3, &fixed_records()));

    let mut rng = Rng::new(0x5eed);
    let mut random = Vec::new();
    for _ in 0..30 {
        for &(key, _, min, max) in METADATA_RECORD_TYPES {
            let Some(max) = java_4_1_max_version(key, max) else {
                continue;
            };
            for version in min..=max {
                random.push(ApiMessageAndVersion::new(
                    MetadataRecord::random(key, &mut rng, version),
                    version,
                ));
            }
        }
    }
    for chunk in random.chunks(50) {
        next = push(&mut log, data_batch(next, chunk));
    }
    next = push(
        &mut log,
        control_batch(next, 6, 3000, &[ControlRecord::snapshot_header(2999)]),
    );
    next = push(
        &mut log,
        control_batch(next, 6, 3000, &[ControlRecord::snapshot_footer()]),
    );

    assert_eq!(valid_prefix(&log).bytes, log.len());
    let path = vectors_dir().join("rust.log");
    std::fs::write(&path, &log).unwrap();
    eprintln!(
        "wrote {} bytes, offsets 0..{next}, {} random records to {}",
        log.len(),
        random.len(),
        path.display()
    );
}

#[test]
#[ignore = "reads vectors written by the Java cross-check; needs KRAFTWERK_JAVA_VECTORS"]
fn read_java_vectors() {
    let log = std::fs::read(vectors_dir().join("java.log")).unwrap();
    let prefix = valid_prefix(&log);
    assert_eq!(
        (prefix.bytes, prefix.stopped_because.clone()),
        (log.len(), None)
    );
    let (mut data, mut control) = (0, 0);
    let mut fixed_seen = Vec::new();
    for (header, batch) in crate::batch::batches(&log).map(Result::unwrap) {
        if header.is_control() {
            for (_, record) in decode_control_batch(batch).unwrap().1 {
                control += 1;
                let value = record.encode_value();
                assert_eq!(
                    ControlRecord::decode(&record.encode_key(), &value).unwrap(),
                    record
                );
                if let ControlRecord::LeaderChange(m) = &record {
                    assert_eq!(m.leader_id, BrokerId(1));
                }
                if let ControlRecord::Voters(_) = &record {
                    assert_eq!(record, fixed_voters());
                }
            }
            // Our control batch from the same records must equal Java's, byte for byte.
            let records: Vec<_> = decode_control_batch(batch)
                .unwrap()
                .1
                .into_iter()
                .map(|(_, r)| r)
                .collect();
            let ours = control_batch(
                header.base_offset,
                header.partition_leader_epoch,
                header.max_timestamp,
                &records,
            );
            assert_eq!(
                ours.as_ref(),
                batch,
                "control batch at {}",
                header.base_offset
            );
        } else {
            let (_, records) = decode_batch(batch).unwrap();
            let mut rebuilt = BatchBuilder::new(
                header.base_offset,
                header.partition_leader_epoch,
                header.max_timestamp,
            );
            for r in records {
                data += 1;
                let value = r.value.unwrap();
                let decoded = ApiMessageAndVersion::decode(&value).unwrap();
                assert_eq!(decoded.encode().unwrap(), value, "re-encoding {decoded:?}");
                rebuilt.append(None, &value);
                fixed_seen.push(decoded);
            }
            assert_eq!(
                rebuilt.build().as_ref(),
                batch,
                "data batch at {}",
                header.base_offset
            );
        }
    }
    // Java wrote the same fixed records first.
    let fixed = fixed_records();
    assert_eq!(&fixed_seen[..fixed.len()], fixed.as_slice());
    eprintln!("java.log: {} bytes, {data} data records, {control} control records: all decoded and re-encoded identically", log.len());
}
