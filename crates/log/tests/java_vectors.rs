//! On-disk file vectors for the cross-check against Kafka's own Java classes (`compat/`, driven
//! by `compat/run`): `quorum-state`, `meta.properties` and `bootstrap.checkpoint`. Both tests
//! are `#[ignore]`d and need `KRAFTWERK_JAVA_VECTORS=<dir>`; optional `KRAFTWERK_COMPAT_SAMPLES`
//! (files per kind, default 40) and `KRAFTWERK_COMPAT_SEED`.
//!
//! `write_rust_disk_vectors` writes random files with this crate's writers into
//! `<dir>/rust/<kind>/<case>/<file>` and one TSV line per case saying what each holds:
//! - `quorum-state.tsv`: `case, kraft.version, epoch, leader id, voted id, voted directory id,
//!   voters` (-1 = none, `-` = no directory id / no voters);
//! - `meta-properties.tsv`: `case, version, hex of cluster.id, node.id, directory.id` (`-` = absent)
//!   as read back from the file (both sides read ISO-8859-1 and write UTF-8, like Kafka), plus
//!   `rewritten/meta.properties`, what the writer writes for what it read;
//! - `bootstrap.tsv`: `case, metadata.version level, features (name=level,..), extra records`
//!   (hex frames appended after the `fromVersions` records; `-` = none).
//!
//! Java (`FileQuorumStateStore`, `PropertiesUtils` + `MetaProperties`, `BootstrapDirectory`)
//! reads them, compares the fields and writes them back. `read_java_disk_vectors` does the
//! reverse with `<dir>/java/...`, including byte-identical rewrites (timestamps and the date
//! comment taken from Java's file).

use std::fmt::Write as _;
use std::path::PathBuf;

use bytes::Bytes;
use kraftwerk_log::bootstrap::{BootstrapMetadata, BOOTSTRAP_FILE};
use kraftwerk_log::meta_properties::{MetaProperties, MetaPropertiesVersion};
use kraftwerk_log::{FileQuorumStateStore, QUORUM_STATE_FILE};
use kraftwerk_protocol::kafka_uuid::{
    is_reserved_directory_id, kafka_uuid_from_string, kafka_uuid_to_string,
};
use kraftwerk_raft::ElectionState;
use kraftwerk_records::batch::batches;
use kraftwerk_records::metadata::{ApiMessageAndVersion, UserScramCredentialRecord};
use kraftwerk_records::metadata_version::{Feature, MetadataVersion};
use uuid::Uuid;

fn vectors_root() -> PathBuf {
    std::env::var_os("KRAFTWERK_JAVA_VECTORS")
        .expect("set KRAFTWERK_JAVA_VECTORS to the vectors directory (compat/run does)")
        .into()
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

/// SplitMix64, seeded from `KRAFTWERK_COMPAT_SEED`.
struct Rng(u64);

impl Rng {
    fn new(stream: u64) -> Self {
        Rng(env_number("KRAFTWERK_COMPAT_SEED", 20251129)
            ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
    /// A node id: mostly small, sometimes anything non-negative.
    fn id(&mut self) -> i32 {
        if self.chance(4) {
            (self.next() >> 33) as i32
        } else {
            self.below(16) as i32
        }
    }
    fn uuid(&mut self) -> Uuid {
        loop {
            let id = Uuid::from_u64_pair(self.next(), self.next());
            if !is_reserved_directory_id(id) {
                return id;
            }
        }
    }
    /// Text that needs escaping in a properties file and in JSON.
    fn text(&mut self) -> String {
        const PIECES: &[&str] = &[
            "a", "Z", "0", "-", "_", " ", "=", ":", "#", "!", "\\", "é", "✓", "𝄞", "\t", "\u{1}",
        ];
        let n = 1 + self.below(12);
        (0..n)
            .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
            .collect()
    }
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

fn case_dir(side: &str, kind: &str, case: usize) -> PathBuf {
    vectors_root().join(side).join(kind).join(case.to_string())
}

fn dash<T: ToString>(value: Option<T>) -> String {
    value.map_or("-".into(), |v| v.to_string())
}

fn undash(text: &str) -> Option<&str> {
    (text != "-").then_some(text)
}

fn tsv(side: &str, name: &str) -> Vec<Vec<String>> {
    let path = vectors_root().join(side).join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run compat/run)", path.display()));
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

fn random_election_state(rng: &mut Rng, kraft_version: u8) -> ElectionState {
    let epoch = if rng.chance(4) {
        (rng.next() >> 33) as i32
    } else {
        rng.below(100) as i32
    };
    let leader_id = (!rng.chance(3)).then(|| rng.id());
    let voted_id = rng.chance(2).then(|| rng.id());
    let voted_directory_id =
        (kraft_version == 1 && voted_id.is_some() && !rng.chance(3)).then(|| rng.uuid());
    let mut voters: Vec<i32> = Vec::new();
    if kraft_version == 0 {
        for _ in 0..rng.below(6) {
            let id = rng.id();
            if !voters.contains(&id) {
                voters.push(id);
            }
        }
        voters.sort_unstable();
    }
    ElectionState {
        epoch,
        leader_id,
        voted_id,
        voted_directory_id,
        voters,
    }
}

fn random_meta_properties(rng: &mut Rng) -> MetaProperties {
    if rng.chance(4) {
        MetaProperties {
            version: MetaPropertiesVersion::V0,
            cluster_id: rng.chance(2).then(|| rng.text()),
            node_id: rng.chance(2).then(|| rng.id()),
            directory_id: rng.chance(2).then(|| rng.uuid()),
        }
    } else {
        let mut m = MetaProperties::v1(&rng.text(), rng.id(), rng.uuid());
        if rng.chance(5) {
            m.directory_id = None;
        }
        m
    }
}

fn scram_record(rng: &mut Rng) -> ApiMessageAndVersion {
    let bytes = |n: u64| Bytes::from((0..n).map(|i| (i as u8) ^ 0x5a).collect::<Vec<u8>>());
    let record = UserScramCredentialRecord {
        name: "user".into(),
        mechanism: 1 + rng.below(2) as i8,
        salt: bytes(8),
        stored_key: bytes(32),
        server_key: bytes(32),
        iterations: 4096 + rng.below(10000) as i32,
        ..Default::default()
    };
    ApiMessageAndVersion::new(record, 0)
}

fn features_text(features: &[(Feature, i16)]) -> String {
    if features.is_empty() {
        return "-".into();
    }
    features
        .iter()
        .map(|(f, l)| format!("{}={l}", f.name()))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
#[ignore = "writes disk-format vectors for compat/ (Kafka's Java classes); needs KRAFTWERK_JAVA_VECTORS"]
fn write_rust_disk_vectors() {
    let rust = vectors_root().join("rust");
    let mut rng = Rng::new(1);

    let mut lines = Vec::new();
    for case in 0..samples() {
        let kraft_version = (case % 2) as u8;
        let state = random_election_state(&mut rng, kraft_version);
        let dir = case_dir("rust", "quorum-state", case);
        std::fs::create_dir_all(&dir).unwrap();
        FileQuorumStateStore::with_kraft_version(dir.join(QUORUM_STATE_FILE), kraft_version)
            .store(&state)
            .unwrap();
        let voters: Vec<String> = state.voters.iter().map(i32::to_string).collect();
        lines.push(format!(
            "{case}\t{kraft_version}\t{}\t{}\t{}\t{}\t{}",
            state.epoch,
            state.leader_id.unwrap_or(-1),
            state.voted_id.unwrap_or(-1),
            dash(state.voted_directory_id.map(kafka_uuid_to_string)),
            if voters.is_empty() {
                "-".into()
            } else {
                voters.join(",")
            }
        ));
    }
    std::fs::write(rust.join("quorum-state.tsv"), lines.join("\n") + "\n").unwrap();

    let mut lines = Vec::new();
    for case in 0..samples() {
        let written = random_meta_properties(&mut rng);
        let dir = case_dir("rust", "meta-properties", case);
        std::fs::create_dir_all(&dir).unwrap();
        written.write(&dir).unwrap();
        // Like Kafka we write UTF-8 but read ISO-8859-1 (`Properties.load(InputStream)`), so
        // non-ASCII text does not survive a round trip: the file holds what we read back, and
        // `rewritten/` what we write for that.
        let meta = MetaProperties::read(&dir).unwrap().unwrap();
        std::fs::create_dir_all(dir.join("rewritten")).unwrap();
        meta.write(&dir.join("rewritten")).unwrap();
        lines.push(format!(
            "{case}\t{}\t{}\t{}\t{}",
            meta.version.number(),
            dash(meta.cluster_id.as_deref().map(|c| hex(c.as_bytes()))),
            dash(meta.node_id),
            dash(meta.directory_id.map(kafka_uuid_to_string))
        ));
    }
    std::fs::write(rust.join("meta-properties.tsv"), lines.join("\n") + "\n").unwrap();

    let mut lines = Vec::new();
    for case in 0..samples() {
        let mv = MetadataVersion::ALL[rng.below(MetadataVersion::ALL.len() as u64) as usize];
        let mut features: Vec<(Feature, i16)> = Vec::new();
        for f in Feature::ALL {
            if rng.chance(2) {
                features.push((f, rng.below(3) as i16));
            }
        }
        let mut metadata = BootstrapMetadata::from_versions(mv, &features, "compat");
        let mut extra = Vec::new();
        for _ in 0..if rng.chance(3) { 1 + rng.below(3) } else { 0 } {
            let record = scram_record(&mut rng);
            extra.push(hex(&record.encode().unwrap()));
            metadata.records.push(record);
        }
        let dir = case_dir("rust", "bootstrap", case);
        std::fs::create_dir_all(&dir).unwrap();
        metadata.write_dir(&dir).unwrap();
        lines.push(format!(
            "{case}\t{}\t{}\t{}",
            mv.feature_level(),
            features_text(&features),
            if extra.is_empty() {
                "-".into()
            } else {
                extra.join(" ")
            }
        ));
    }
    std::fs::write(rust.join("bootstrap.tsv"), lines.join("\n") + "\n").unwrap();
    eprintln!(
        "compat: wrote {} quorum-state, meta.properties and bootstrap.checkpoint files each",
        samples()
    );
}

struct Failures(Vec<String>, usize);

impl Failures {
    fn check(&mut self, ok: bool, message: impl FnOnce() -> String) {
        self.1 += 1;
        if !ok {
            self.0.push(message());
        }
    }
}

fn read_java_quorum_state(f: &mut Failures) {
    for row in tsv("java", "quorum-state.tsv") {
        let case: usize = row[0].parse().unwrap();
        let kraft_version: u8 = row[1].parse().unwrap();
        let path = case_dir("java", "quorum-state", case).join(QUORUM_STATE_FILE);
        let what = format!("quorum-state case {case} (kraft.version {kraft_version})");
        let state = match FileQuorumStateStore::new(&path).load() {
            Ok(Some(s)) => s,
            other => {
                f.check(false, || {
                    format!("{what}: we cannot read Kafka's file: {other:?}")
                });
                continue;
            }
        };
        let id = |t: &str| t.parse::<i32>().ok().filter(|&i| i >= 0);
        let expected = ElectionState {
            epoch: row[2].parse().unwrap(),
            leader_id: id(&row[3]),
            voted_id: id(&row[4]),
            voted_directory_id: undash(&row[5]).map(|t| kafka_uuid_from_string(t).unwrap()),
            voters: undash(&row[6]).map_or(Vec::new(), |v| {
                v.split(',').map(|x| x.parse().unwrap()).collect()
            }),
        };
        f.check(state == expected, || {
            format!("{what}: read {state:?}, Kafka wrote {expected:?}")
        });
        // Written back by us, the file must be byte-identical to Kafka's.
        let tmp = tempfile::tempdir().unwrap();
        let ours_path = tmp.path().join(QUORUM_STATE_FILE);
        FileQuorumStateStore::with_kraft_version(&ours_path, kraft_version)
            .store(&state)
            .unwrap();
        let (theirs, ours) = (
            std::fs::read(&path).unwrap(),
            std::fs::read(&ours_path).unwrap(),
        );
        f.check(theirs == ours, || {
            format!(
                "{what}: we write it differently: {}\n    Kafka: {}\n    ours:  {}",
                first_difference(&theirs, &ours).unwrap(),
                String::from_utf8_lossy(&theirs),
                String::from_utf8_lossy(&ours)
            )
        });
    }
}

/// The date comment line (`#Sat Nov 29 08:00:00 UTC 2025`) of a properties file, if any.
fn date_line(text: &str) -> Option<&str> {
    text.lines().nth(1).filter(|l| l.starts_with('#'))
}

fn read_java_meta_properties(f: &mut Failures) {
    for row in tsv("java", "meta-properties.tsv") {
        let case: usize = row[0].parse().unwrap();
        let dir = case_dir("java", "meta-properties", case);
        let what = format!("meta.properties case {case}");
        let meta = match MetaProperties::read(&dir) {
            Ok(Some(m)) => m,
            other => {
                f.check(false, || {
                    format!("{what}: we cannot read Kafka's file: {other:?}")
                });
                continue;
            }
        };
        let expected = MetaProperties {
            version: if row[1] == "1" {
                MetaPropertiesVersion::V1
            } else {
                MetaPropertiesVersion::V0
            },
            cluster_id: undash(&row[2]).map(|h| String::from_utf8(unhex(h)).unwrap()),
            node_id: undash(&row[3]).map(|n| n.parse().unwrap()),
            directory_id: undash(&row[4]).map(|t| kafka_uuid_from_string(t).unwrap()),
        };
        f.check(meta == expected, || {
            format!("{what}: read {meta:?}, Kafka wrote {expected:?}")
        });
        // What we write for what we read must be what Kafka writes for what it read, date line
        // aside (Java prints it in the JVM's time zone).
        let theirs = std::fs::read_to_string(dir.join("rewritten/meta.properties")).unwrap();
        let ours = meta.render(0);
        let strip = |t: &str| -> String {
            let date = date_line(t);
            t.lines()
                .filter(|l| Some(*l) != date)
                .map(|l| format!("{l}\n"))
                .collect()
        };
        f.check(strip(&theirs) == strip(&ours), || {
            format!("{what}: we write it differently:\n    Kafka: {theirs:?}\n    ours:  {ours:?}")
        });
    }
}

fn read_java_bootstrap(f: &mut Failures) {
    for row in tsv("java", "bootstrap.tsv") {
        let case: usize = row[0].parse().unwrap();
        let dir = case_dir("java", "bootstrap", case);
        let what = format!(
            "bootstrap.checkpoint case {case} (metadata.version level {})",
            row[1]
        );
        let read = match BootstrapMetadata::read_dir(&dir) {
            Ok(m) => m,
            Err(e) => {
                f.check(false, || {
                    format!("{what}: we cannot read Kafka's file: {e}")
                });
                continue;
            }
        };
        let mv = MetadataVersion::from_feature_level(row[1].parse().unwrap()).unwrap();
        let features: Vec<(Feature, i16)> = undash(&row[2]).map_or(Vec::new(), |t| {
            t.split(',')
                .map(|p| {
                    let (name, level) = p.split_once('=').unwrap();
                    (Feature::from_name(name).unwrap(), level.parse().unwrap())
                })
                .collect()
        });
        let mut expected = BootstrapMetadata::from_versions(mv, &features, "compat").records;
        for frame in undash(&row[3]).map_or(Vec::new(), |t| t.split(' ').collect()) {
            expected.push(ApiMessageAndVersion::decode(&unhex(frame)).unwrap());
        }
        f.check(
            read.records == expected && read.metadata_version == mv,
            || {
                format!(
                    "{what}: read {:?} at {:?}, expected {expected:?}",
                    read.records, read.metadata_version
                )
            },
        );
        // Our writer at Kafka's time stamps must give Kafka's bytes.
        let theirs = std::fs::read(dir.join(BOOTSTRAP_FILE)).unwrap();
        let stamps: Vec<i64> = batches(&theirs)
            .map(|b| b.unwrap().0.max_timestamp)
            .collect();
        let footer = *stamps.last().unwrap();
        let data = if stamps.len() > 2 { stamps[1] } else { footer };
        let ours = read.encode_checkpoint(stamps[0], data, footer).unwrap();
        f.check(theirs == ours, || {
            format!(
                "{what}: we write it differently: {}",
                first_difference(&theirs, &ours).unwrap()
            )
        });
    }
}

#[test]
#[ignore = "reads disk-format vectors written by compat/ (Kafka's Java classes); needs KRAFTWERK_JAVA_VECTORS"]
fn read_java_disk_vectors() {
    let mut f = Failures(Vec::new(), 0);
    read_java_quorum_state(&mut f);
    read_java_meta_properties(&mut f);
    read_java_bootstrap(&mut f);
    let Failures(failures, checks) = f;
    let mut report = String::new();
    for m in failures.iter().take(25) {
        let _ = write!(report, "\n  - {m}");
    }
    assert!(
        failures.is_empty(),
        "Kafka-written quorum-state, meta.properties and bootstrap.checkpoint read by kraftwerk-log: {} of {checks} checks failed{report}",
        failures.len()
    );
    eprintln!("compat: Kafka-written quorum-state, meta.properties and bootstrap.checkpoint read by kraftwerk-log: {checks} checks passed");
}
