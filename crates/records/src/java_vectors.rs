//! Vectors for the cross-check against Kafka's own Java classes (`compat/`, driven by
//! `compat/run`). Both tests are `#[ignore]`d and need `KRAFTWERK_JAVA_VECTORS=<dir>`; optional
//! `KRAFTWERK_COMPAT_SAMPLES` (random values per type and version, default 40),
//! `KRAFTWERK_COMPAT_SEED` and `KRAFTWERK_COMPAT_KAFKA_VERSION` (the Kafka release under test,
//! default 4.1.2: record versions `compat/release-versions.txt` lists as newer are left out of
//! `rust.log` and not expected from Kafka).
//!
//! - `write_rust_vectors` writes into `<dir>/rust/`:
//!   - `metadata.tsv`: `api key, version, hex of the ApiMessageAndVersion frame, JSON` for random
//!     records of every type at every version this crate writes; the JSON is the record's fields
//!     in the format of Kafka's `*JsonConverter` ([`debug_json`]); Java decodes the bytes,
//!     re-encodes them identically and compares the fields;
//!   - `control.tsv`: `control type, hex of the value, JSON` for random control records;
//!   - `rust.log`: contiguous batches (a LeaderChange + KRaftVersion + Voters control batch,
//!     fixed metadata records, random records of every type at every version the Kafka under
//!     test reads (`KRAFTWERK_COMPAT_KAFKA_VERSION` and `compat/release-versions.txt`),
//!     random control batches, snapshot header/footer batches) for Java's `RecordsIterator`
//!     and `MetadataRecordSerde` to read and for Java's builders to rebuild byte for byte.
//! - `read_java_vectors` reads `<dir>/java/`, written by `compat/`'s JUnit tests:
//!   - `metadata.tsv` / `control.tsv`: `..., hex, canonical field lines` of random values Kafka
//!     encoded; we decode, re-encode identically, and must hold every field line Kafka listed;
//!   - `java.log`: batches from Java's `BatchBuilder` and `MemoryRecordsBuilder`; we decode
//!     them and rebuild identical bytes.

mod debug_json;

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use bytes::Bytes;
use kafka_protocol::messages::leader_change_message::Voter as LeaderChangeVoter;
use kafka_protocol::messages::voters_record::{Endpoint, KRaftVersionFeature, Voter};
use kafka_protocol::messages::{
    BrokerId, KRaftVersionRecord, LeaderChangeMessage, SnapshotFooterRecord, SnapshotHeaderRecord,
    VotersRecord,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use crate::batch::{decode_batch, valid_prefix, BatchBuilder};
use crate::control::{control_batch, decode_control_batch, ControlRecord};
use crate::metadata::testing::{RandomValue, Rng};
use crate::metadata::*;

fn vectors_root() -> PathBuf {
    std::env::var_os("KRAFTWERK_JAVA_VECTORS")
        .expect("set KRAFTWERK_JAVA_VECTORS to the vectors directory (compat/run does)")
        .into()
}

fn rust_file(name: &str) -> PathBuf {
    let dir = vectors_root().join("rust");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn java_file(name: &str) -> PathBuf {
    let path = vectors_root().join("java").join(name);
    assert!(
        path.exists(),
        "missing Java vectors {}: run compat/run",
        path.display()
    );
    path
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}={v} is not a number"))
        })
        .unwrap_or(default)
}

fn samples() -> usize {
    env_number("KRAFTWERK_COMPAT_SAMPLES", 40) as usize
}

fn seed() -> u64 {
    env_number("KRAFTWERK_COMPAT_SEED", 20251129)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// `None` when equal, else the first differing byte offset with context from both sides.
fn first_difference(expected: &[u8], actual: &[u8]) -> Option<String> {
    let at = expected
        .iter()
        .zip(actual)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(actual.len()));
    if at == expected.len() && at == actual.len() {
        return None;
    }
    let from = at.saturating_sub(4);
    let window = |b: &[u8]| hex(&b[from.min(b.len())..(from + 16).min(b.len())]);
    Some(format!(
        "first differing byte at offset {at} (lengths {} vs {}); from offset {from}: {} vs {}",
        expected.len(),
        actual.len(),
        window(expected),
        window(actual)
    ))
}

/// Collects mismatches so one run names every record type and version that differs.
struct Failures {
    what: String,
    messages: Vec<String>,
    checks: usize,
}

impl Failures {
    fn new(what: &str) -> Self {
        Failures {
            what: what.into(),
            messages: Vec::new(),
            checks: 0,
        }
    }

    fn check(&mut self, ok: bool, message: impl FnOnce() -> String) {
        self.checks += 1;
        if !ok {
            self.messages.push(message());
        }
    }

    fn finish(self) {
        if self.messages.is_empty() {
            eprintln!("compat: {}: {} checks passed", self.what, self.checks);
            return;
        }
        let shown: Vec<_> = self
            .messages
            .iter()
            .take(25)
            .map(|m| format!("  - {m}"))
            .collect();
        panic!(
            "{}: {} of {} checks failed\n{}",
            self.what,
            self.messages.len(),
            self.checks,
            shown.join("\n")
        );
    }
}

/// A value's fields as JSON text in Kafka's `*JsonConverter` format.
fn json_of(value: &impl std::fmt::Debug) -> String {
    debug_json::to_text(&debug_json::from_debug(&format!("{value:?}")))
}

/// The release line of the Kafka compat/run checks against (`KRAFTWERK_COMPAT_KAFKA_VERSION`,
/// e.g. `4.3.1` gives `(4, 3)`; default 4.1.2, the release kraftwerk targets).
fn kafka_line() -> (u32, u32) {
    let version =
        std::env::var("KRAFTWERK_COMPAT_KAFKA_VERSION").unwrap_or_else(|_| "4.1.2".to_owned());
    parse_line(&version).unwrap_or_else(|| panic!("KRAFTWERK_COMPAT_KAFKA_VERSION={version}"))
}

fn parse_line(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split(['.', '-']);
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The metadata record versions `compat/release-versions.txt` lists as arriving after release
/// line `release`: (api key, version).
fn newer_than(release: (u32, u32)) -> HashSet<(i16, i16)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../compat/release-versions.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut newer = HashSet::new();
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let since = f.get(3).and_then(|s| parse_line(s));
        let (Some(key), Some(version), Some(since)) = (
            f.get(1).and_then(|k| k.parse().ok()),
            f.get(2).and_then(|v| v.parse().ok()),
            since,
        ) else {
            panic!("{}: bad line {line:?}", path.display());
        };
        if f[0] == "metadata" && since > release {
            newer.insert((key, version));
        }
    }
    newer
}

/// The highest version of record `api_key` in `min..=max` that the Kafka release under test
/// reads (the versions `compat/release-versions.txt` lists as newer are left out of
/// `rust.log`); `None` when it has no version of the type.
fn release_max_version(api_key: i16, min: i16, max: i16) -> Option<i16> {
    max_version_before(&newer_than(kafka_line()), api_key, min, max)
}

fn max_version_before(
    newer: &HashSet<(i16, i16)>,
    api_key: i16,
    min: i16,
    max: i16,
) -> Option<i16> {
    (min..=max)
        .take_while(|&v| !newer.contains(&(api_key, v)))
        .last()
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

fn random_str(rng: &mut Rng) -> StrBytes {
    StrBytes::from_string(String::random(rng, 0))
}

fn random_unknown_tags(rng: &mut Rng) -> BTreeMap<i32, Bytes> {
    let mut tags = BTreeMap::new();
    if rng.below(4) == 0 {
        for _ in 0..1 + rng.below(2) {
            tags.insert(50 + rng.below(10) as i32, Bytes::random(rng, 0));
        }
    }
    tags
}

/// A random control record of `record_type`. `realistic` keeps the values Kafka's readers
/// interpret (message version 0, kraft.version 0/1) and leaves out unknown tags, for
/// batches that `RecordsIterator` replays; otherwise every field is arbitrary.
fn random_control(rng: &mut Rng, record_type: i16, realistic: bool) -> ControlRecord {
    let version = if realistic { 0 } else { i16::random(rng, 0) };
    let mut record = match record_type {
        crate::control::LEADER_CHANGE => {
            let voters = |rng: &mut Rng| -> Vec<LeaderChangeVoter> {
                (0..rng.below(4))
                    .map(|_| LeaderChangeVoter::default().with_voter_id(i32::random(rng, 0)))
                    .collect()
            };
            let voters_now = voters(rng);
            let granting = voters(rng);
            ControlRecord::LeaderChange(
                LeaderChangeMessage::default()
                    .with_leader_id(BrokerId(i32::random(rng, 0)))
                    .with_voters(voters_now)
                    .with_granting_voters(granting),
            )
        }
        crate::control::SNAPSHOT_HEADER => ControlRecord::SnapshotHeader(
            SnapshotHeaderRecord::default().with_last_contained_log_timestamp(i64::random(rng, 0)),
        ),
        crate::control::SNAPSHOT_FOOTER => {
            ControlRecord::SnapshotFooter(SnapshotFooterRecord::default())
        }
        crate::control::KRAFT_VERSION => {
            let level = if realistic {
                rng.below(2) as i16
            } else {
                i16::random(rng, 0)
            };
            ControlRecord::KRaftVersion(KRaftVersionRecord::default().with_k_raft_version(level))
        }
        crate::control::KRAFT_VOTERS => {
            let voters = (0..rng.below(4))
                .map(|_| {
                    let endpoints = (0..rng.below(3))
                        .map(|_| {
                            Endpoint::default()
                                .with_name(random_str(rng))
                                .with_host(random_str(rng))
                                .with_port(u16::random(rng, 0))
                        })
                        .collect();
                    Voter::default()
                        .with_voter_id(BrokerId(i32::random(rng, 0)))
                        .with_voter_directory_id(Uuid::random(rng, 0))
                        .with_endpoints(endpoints)
                        .with_k_raft_version_feature(
                            KRaftVersionFeature::default()
                                .with_min_supported_version(i16::random(rng, 0))
                                .with_max_supported_version(i16::random(rng, 0)),
                        )
                })
                .collect();
            ControlRecord::Voters(VotersRecord::default().with_voters(voters))
        }
        other => panic!("no control record type {other}"),
    };
    let tags = if realistic {
        BTreeMap::new()
    } else {
        random_unknown_tags(rng)
    };
    match &mut record {
        ControlRecord::LeaderChange(m) => (m.version, m.unknown_tagged_fields) = (version, tags),
        ControlRecord::SnapshotHeader(m) => (m.version, m.unknown_tagged_fields) = (version, tags),
        ControlRecord::SnapshotFooter(m) => (m.version, m.unknown_tagged_fields) = (version, tags),
        ControlRecord::KRaftVersion(m) => (m.version, m.unknown_tagged_fields) = (version, tags),
        ControlRecord::Voters(m) => (m.version, m.unknown_tagged_fields) = (version, tags),
    }
    record
}

const CONTROL_TYPES: std::ops::RangeInclusive<i16> = 2..=6;

fn data_batch(base_offset: i64, records: &[ApiMessageAndVersion]) -> Bytes {
    let mut b = BatchBuilder::new(base_offset, 5, 2000 + base_offset);
    for r in records {
        b.append(None, &r.encode().expect("encodable"));
    }
    b.build()
}

/// compat/release-versions.txt as the writer reads it: 4.3's and 4.4's record versions are left
/// out for Kafka 4.1 and kept for 4.4.
#[test]
fn release_table_leaves_out_newer_record_versions() {
    assert_eq!(parse_line("4.3.1"), Some((4, 3)));
    assert_eq!(parse_line("4.10-rc0"), Some((4, 10)));
    let for_4_1 = newer_than((4, 1));
    assert!(for_4_1.contains(&(0, 4)) && for_4_1.contains(&(17, 3)) && for_4_1.contains(&(29, 0)));
    assert_eq!(max_version_before(&for_4_1, 0, 0, 4), Some(3));
    assert_eq!(max_version_before(&for_4_1, 29, 0, 0), None);
    assert_eq!(max_version_before(&for_4_1, 2, 0, 1), Some(1));
    let for_4_3 = newer_than((4, 3));
    assert_eq!(max_version_before(&for_4_3, 0, 0, 4), Some(4));
    assert_eq!(max_version_before(&for_4_3, 29, 0, 0), None);
    assert!(!newer_than((4, 4)).contains(&(29, 0)));
}

#[test]
#[ignore = "writes vectors for compat/ (Kafka's Java classes); needs KRAFTWERK_JAVA_VECTORS"]
fn write_rust_vectors() {
    let mut rng = Rng::new(seed());

    // One record at a time: every type, every version we write.
    let mut lines = Vec::new();
    for &(key, name, min, max) in METADATA_RECORD_TYPES {
        for version in min..=max {
            for _ in 0..samples() {
                let record = ApiMessageAndVersion::new(
                    MetadataRecord::random(key, &mut rng, version),
                    version,
                );
                let bytes = record.encode().unwrap_or_else(|e| {
                    panic!("{name} v{version}: our random value does not encode: {e}")
                });
                lines.push(format!(
                    "{key}\t{version}\t{}\t{}",
                    hex(&bytes),
                    json_of(&record.record)
                ));
            }
        }
    }
    std::fs::write(rust_file("metadata.tsv"), lines.join("\n") + "\n").unwrap();
    let metadata_count = lines.len();

    let mut lines = Vec::new();
    for record_type in CONTROL_TYPES {
        for _ in 0..samples() {
            let record = random_control(&mut rng, record_type, false);
            lines.push(format!(
                "{record_type}\t{}\t{}",
                hex(&record.encode_value()),
                json_of(&record)
            ));
        }
    }
    std::fs::write(rust_file("control.tsv"), lines.join("\n") + "\n").unwrap();

    // Whole batches, as a segment holds them.
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
    let mut random = Vec::new();
    for _ in 0..samples().div_ceil(2) {
        for &(key, _, min, max) in METADATA_RECORD_TYPES {
            let Some(max) = release_max_version(key, min, max) else {
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
    for (i, chunk) in random
        .chunks(1 + i64::random(&mut rng, 0).rem_euclid(60) as usize)
        .enumerate()
    {
        next = push(&mut log, data_batch(next, chunk));
        if i % 7 == 0 {
            let kinds = [
                crate::control::LEADER_CHANGE,
                crate::control::KRAFT_VERSION,
                crate::control::KRAFT_VOTERS,
            ];
            let records: Vec<_> = kinds
                .iter()
                .map(|&t| random_control(&mut rng, t, true))
                .collect();
            next = push(
                &mut log,
                control_batch(next, 5 + i as i32, 3000 + i as i64, &records),
            );
        }
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
    std::fs::write(rust_file("rust.log"), &log).unwrap();
    eprintln!(
        "compat: wrote {metadata_count} metadata records, {} control records, rust.log ({} bytes, offsets 0..{next}, {} random records)",
        CONTROL_TYPES.count() * samples(),
        log.len(),
        random.len()
    );
}

/// Java's field lines (space-separated) that our rendering of `value` lacks, if any.
fn missing_field(java_lines: &str, value: &impl std::fmt::Debug) -> Option<String> {
    let ours = debug_json::canonical_lines(&debug_json::from_debug(&format!("{value:?}")));
    let have: HashSet<&str> = ours.iter().map(String::as_str).collect();
    java_lines
        .split(' ')
        .filter(|l| !l.is_empty())
        .find(|l| !have.contains(l))
        .map(|line| {
            let key = &line[..line.find('=').unwrap()];
            let theirs = ours
                .iter()
                .find(|l| l.starts_with(&format!("{key}=")))
                .map_or("<absent>", String::as_str);
            format!("Kafka has {line}, we have {theirs}")
        })
}

fn read_java_records(failures: &mut Failures) {
    let text = std::fs::read_to_string(java_file("metadata.tsv")).unwrap();
    let mut seen = HashSet::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (key, version): (i16, i16) = (cols[0].parse().unwrap(), cols[1].parse().unwrap());
        let bytes = unhex(cols[2]);
        let name = MetadataRecord::type_info(key as u32).map_or("unknown record", |t| t.0);
        let what = format!("{name} (api key {key}) v{version}");
        seen.insert((key, version));
        let record = match ApiMessageAndVersion::decode(&bytes) {
            Ok(r) => r,
            Err(e) => {
                failures.check(false, || {
                    format!("{what}: we cannot decode Kafka's bytes {}: {e}", cols[2])
                });
                continue;
            }
        };
        failures.check(
            record.version == version && record.record.api_key() == key,
            || {
                format!(
                    "{what}: decoded as api key {} v{}",
                    record.record.api_key(),
                    record.version
                )
            },
        );
        let ours = record
            .encode()
            .map(|b| b.to_vec())
            .map_err(|e| e.to_string());
        failures.check(
            ours.as_ref().ok().map(|b| b.as_slice()) == Some(bytes.as_slice()),
            || match &ours {
                Ok(b) => format!(
                    "{what}: re-encoded differently: {}; Kafka bytes {}",
                    first_difference(&bytes, b).unwrap(),
                    cols[2]
                ),
                Err(e) => format!("{what}: cannot re-encode: {e}"),
            },
        );
        let missing = missing_field(cols[3], &record.record);
        failures.check(missing.is_none(), || {
            format!(
                "{what}: fields differ: {}; {:?}",
                missing.unwrap(),
                record.record
            )
        });
    }
    for &(key, name, min, max) in METADATA_RECORD_TYPES {
        let Some(max) = release_max_version(key, min, max) else {
            continue;
        };
        for version in min..=max {
            failures.check(seen.contains(&(key, version)), || {
                format!("Kafka wrote no {name} v{version} vectors")
            });
        }
    }
}

fn read_java_control_records(failures: &mut Failures) {
    let text = std::fs::read_to_string(java_file("control.tsv")).unwrap();
    let mut seen = HashSet::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let record_type: i16 = cols[0].parse().unwrap();
        let value = unhex(cols[1]);
        let what = format!("control record type {record_type} v0");
        seen.insert(record_type);
        let key = [0, 0, (record_type >> 8) as u8, record_type as u8];
        let record = match ControlRecord::decode(&key, &value) {
            Ok(r) => r,
            Err(e) => {
                failures.check(false, || {
                    format!("{what}: we cannot decode Kafka's bytes {}: {e}", cols[1])
                });
                continue;
            }
        };
        let ours = record.encode_value();
        failures.check(ours.as_ref() == value.as_slice(), || {
            format!(
                "{what}: re-encoded differently: {}",
                first_difference(&value, &ours).unwrap()
            )
        });
        let missing = missing_field(cols[2], &record);
        failures.check(missing.is_none(), || {
            format!("{what}: fields differ: {}; {record:?}", missing.unwrap())
        });
    }
    for t in CONTROL_TYPES {
        failures.check(seen.contains(&t), || {
            format!("Kafka wrote no control records of type {t}")
        });
    }
}

fn read_java_log(failures: &mut Failures) {
    let log = std::fs::read(java_file("java.log")).unwrap();
    let prefix = valid_prefix(&log);
    failures.check(prefix.bytes == log.len(), || {
        format!(
            "java.log: only {} of {} bytes are valid batches: {:?}",
            prefix.bytes,
            log.len(),
            prefix.stopped_because
        )
    });
    let mut fixed_seen = Vec::new();
    for (header, batch) in crate::batch::batches(&log[..prefix.bytes]).map(Result::unwrap) {
        let at = header.base_offset;
        if header.is_control() {
            let records: Vec<_> = match decode_control_batch(batch) {
                Ok((_, records)) => records.into_iter().map(|(_, r)| r).collect(),
                Err(e) => {
                    failures.check(false, || {
                        format!("java.log control batch at offset {at}: {e}")
                    });
                    continue;
                }
            };
            if let Some(ControlRecord::Voters(_)) = records.get(2) {
                failures.check(records[2] == fixed_voters(), || {
                    format!("java.log voters at {at}: {:?}", records[2])
                });
            }
            let ours = control_batch(
                at,
                header.partition_leader_epoch,
                header.max_timestamp,
                &records,
            );
            failures.check(ours.as_ref() == batch, || {
                format!(
                    "java.log control batch at offset {at}: rebuilt differently: {}",
                    first_difference(batch, &ours).unwrap()
                )
            });
        } else {
            let (_, records) = match decode_batch(batch) {
                Ok(r) => r,
                Err(e) => {
                    failures.check(false, || format!("java.log data batch at offset {at}: {e}"));
                    continue;
                }
            };
            let mut rebuilt =
                BatchBuilder::new(at, header.partition_leader_epoch, header.max_timestamp);
            for r in records {
                let value = r.value.unwrap();
                match ApiMessageAndVersion::decode(&value) {
                    Ok(decoded) => fixed_seen.push(decoded),
                    Err(e) => failures.check(false, || {
                        format!("java.log record at offset {}: {e}", r.offset)
                    }),
                }
                rebuilt.append(None, &value);
            }
            let ours = rebuilt.build();
            failures.check(ours.as_ref() == batch, || {
                format!(
                    "java.log data batch at offset {at}: rebuilt differently: {}",
                    first_difference(batch, &ours).unwrap()
                )
            });
        }
    }
    // Java wrote the same fixed records first.
    let fixed = fixed_records();
    failures.check(
        fixed_seen.len() >= fixed.len() && fixed_seen[..fixed.len()] == fixed[..],
        || {
            format!(
                "java.log: the fixed records differ from ours: {:?}",
                &fixed_seen[..fixed.len().min(fixed_seen.len())]
            )
        },
    );
}

#[test]
#[ignore = "reads vectors written by compat/ (Kafka's Java classes); needs KRAFTWERK_JAVA_VECTORS"]
fn read_java_vectors() {
    let mut failures = Failures::new(
        "Kafka-encoded metadata records, control records and batches read by kraftwerk-records",
    );
    read_java_records(&mut failures);
    read_java_control_records(&mut failures);
    read_java_log(&mut failures);
    failures.finish();
}

#[test]
fn java_max_versions_follow_each_releases_schemas() {
    // validVersions in the kafka-metadata jars: RegisterBrokerRecord 0-3 (4.1.2, 4.2.2),
    // 0-4 (4.3.1, 4.4.0); BrokerRegistrationChangeRecord 0-2 / 0-3; UnregisterControllerRecord
    // only in 4.4.0.
    for (release, rbr, brcr, ucr) in [
        ((4, 1), Some(3), Some(2), None),
        ((4, 2), Some(3), Some(2), None),
        ((4, 3), Some(4), Some(3), None),
        ((4, 4), Some(4), Some(3), Some(0)),
    ] {
        let newer = newer_than(release);
        assert_eq!(max_version_before(&newer, 0, 0, 4), rbr, "{release:?}");
        assert_eq!(max_version_before(&newer, 17, 0, 3), brcr, "{release:?}");
        assert_eq!(max_version_before(&newer, 29, 0, 0), ucr, "{release:?}");
        assert_eq!(max_version_before(&newer, 3, 0, 2), Some(2), "{release:?}");
    }
}
