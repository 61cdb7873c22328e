//! Dynamic-quorum vectors for `compat/` (KIP-853): what `kraftwerk format --initial-controllers`
//! / `--no-initial-controllers` writes, for random voter sets, checked by compat's
//! `DynamicQuorumTest` against Kafka's own `Formatter`, `DynamicVoters` and `VoterSet` of the
//! release under test. `#[ignore]`d: `compat/run` runs it with `KRAFTWERK_JAVA_VECTORS`,
//! `KRAFTWERK_COMPAT_SEED`, `KRAFTWERK_COMPAT_SAMPLES` and `KRAFTWERK_COMPAT_KAFKA_VERSION`.
//!
//! `rust/dynamic-quorum.tsv`: `case, --initial-controllers (- for --no-initial-controllers),
//! metadata.version level, VotersRecord v0 hex (- when none), KRaftVersionRecord(1) v0 hex`;
//! `rust/dynamic-quorum/<case>/{m,d}`: the directories formatted for node 1 with listener
//! `CONTROLLER` (`m` the metadata directory).
use super::initial_controllers::{bootstrap_voters, parse_dynamic_voters};
use super::*;
use kraftwerk_log::bootstrap::quorum::voters_record;
use kraftwerk_records::control::ControlRecord;
use kraftwerk_records::metadata_version::latest_production_of_release;
use std::path::Path;

const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name}={v}")))
        .unwrap_or(default)
}

/// SplitMix64, seeded from `KRAFTWERK_COMPAT_SEED` (as crates/log/tests/java_vectors.rs).
struct Rng(u64);

impl Rng {
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
    /// Mostly small ids (hash collisions at 8 and 16 buckets), sometimes any non-negative.
    fn id(&mut self) -> i32 {
        match self.below(8) {
            0 => (self.next() >> 33) as i32,
            1 => 65536 * self.below(4) as i32 + self.below(40) as i32,
            _ => self.below(40) as i32,
        }
    }
    fn directory_id(&mut self) -> String {
        loop {
            let id = Uuid::from_u64_pair(self.next(), self.next());
            let text = kafka_uuid_to_string(id);
            if !is_reserved_directory_id(id) {
                return text;
            }
        }
    }
    /// A host as an operator might write it, including those Java rewrites.
    fn host(&mut self, id: i32) -> String {
        match self.below(10) {
            0 => String::new(),
            1 => "127.1".to_owned(),
            2 => format!("10.0.{}.{}", self.below(256), self.below(256)),
            3 => "[::1]".to_owned(),
            4 => format!("[fe80::{:x}:{:x}]", self.below(65536), self.below(65536)),
            5 => "[::ffff:10.1.2.3]".to_owned(),
            6 => "010.0.0.1".to_owned(),
            7 => "CTL.Example".to_owned(),
            _ => format!("c{id}.example.com"),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn write_config(root: &Path) -> PathBuf {
    let path = root.join("controller.properties");
    fs::write(
        &path,
        format!(
            "process.roles=controller\nnode.id=1\n\
             controller.quorum.bootstrap.servers=localhost:9093\n\
             listeners=CONTROLLER://localhost:9093\ncontroller.listener.names=CONTROLLER\n\
             log.dirs={}\nmetadata.log.dir={}\n",
            root.join("d").display(),
            root.join("m").display()
        ),
    )
    .unwrap();
    path
}

#[test]
#[ignore = "writes dynamic-quorum vectors for compat/ (Kafka's Java classes); needs KRAFTWERK_JAVA_VECTORS"]
fn write_rust_dynamic_vectors() {
    let root: PathBuf = std::env::var_os("KRAFTWERK_JAVA_VECTORS")
        .expect("set KRAFTWERK_JAVA_VECTORS to the vectors directory (compat/run does)")
        .into();
    let release = std::env::var("KRAFTWERK_COMPAT_KAFKA_VERSION").unwrap_or("4.1.2".into());
    // The release's own level: its kafka-storage writes that release's layout.
    let mv = latest_production_of_release(&release).expect("a Kafka 4.x release");
    let mut rng = Rng(env_number("KRAFTWERK_COMPAT_SEED", 20251129) ^ 0x853);
    let samples = env_number("KRAFTWERK_COMPAT_SAMPLES", 40) as usize;
    let mut lines = Vec::new();
    for case in 0..samples {
        // One in eight --no-initial-controllers; otherwise 1 to 9 voters, node 1 in half.
        let list = if case % 8 == 7 {
            None
        } else {
            let mut ids: Vec<i32> = Vec::new();
            if rng.below(2) == 0 {
                ids.push(1);
            }
            let most = if rng.below(4) == 0 { 9 } else { 5 };
            let n = 1 + rng.below(most);
            while ids.len() < n as usize {
                let id = rng.id();
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            let entries: Vec<String> = ids
                .iter()
                .map(|id| {
                    let host = rng.host(*id);
                    format!("{id}@{host}:{}:{}", rng.below(65536), rng.directory_id())
                })
                .collect();
            Some(entries.join(","))
        };
        let dir = root.join("rust/dynamic-quorum").join(case.to_string());
        fs::create_dir_all(&dir).unwrap();
        let config = write_config(&dir);
        let opts = FormatOptions {
            config: NodeConfig::load(&config).unwrap(),
            cluster_id: CLUSTER_ID.into(),
            release_version: Some(mv.release().to_owned()),
            features: vec![],
            ignore_formatted: false,
            quorum: match &list {
                Some(list) => QuorumOption::InitialControllers(list.clone()),
                None => QuorumOption::NoInitialControllers,
            },
            add_scram: vec![],
        };
        format(&opts).unwrap();
        let voters_hex = match &list {
            Some(list) => {
                let voters =
                    bootstrap_voters(&parse_dynamic_voters(list).unwrap(), "CONTROLLER").unwrap();
                hex(&ControlRecord::Voters(voters_record(&voters)).encode_value())
            }
            None => "-".to_owned(),
        };
        lines.push(format!(
            "{case}\t{}\t{}\t{voters_hex}\t{}",
            list.as_deref().unwrap_or("-"),
            mv.feature_level(),
            hex(&ControlRecord::kraft_version(1).encode_value())
        ));
    }
    fs::write(
        root.join("rust/dynamic-quorum.tsv"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    eprintln!(
        "compat: wrote {samples} dynamic-quorum format directories and VotersRecords ({mv}, Kafka {release}'s layout)"
    );
}
