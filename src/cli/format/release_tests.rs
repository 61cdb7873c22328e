//! `kraftwerk format --release-version V` against the `kafka-storage format` of every Kafka 4.x
//! release, run from that release's jars, for a static quorum and for the three dynamic-quorum
//! options (KIP-853): same files, same bytes (timestamps, and the directory ids Java draws at
//! random, taken from Kafka's files), and a directory Kafka formatted opens in kraftwerk with
//! the same voter set.
//!
//! Needs Java 17 and the jars of 4.0.2, 4.1.2, 4.2.2, 4.3.1 and 4.4.0 as `scripts/kafka-fetch`
//! provides them (it prints the libs directory; cached under `~/.cache/kraftwerk/kafka`), so it
//! is `#[ignore]`d: run it with
//! `cargo test -p kraftwerk --lib every_release -- --ignored --nocapture`.
use super::*;
use kraftwerk_log::bootstrap::encode_bootstrap_snapshot;
use kraftwerk_log::bootstrap::quorum::BootstrapQuorum;
use kraftwerk_log::meta_properties::META_PROPERTIES_FILE;
use kraftwerk_records::batch::{batches, decode_batch};
use kraftwerk_records::control::ControlRecord;
use kraftwerk_records::metadata_version::latest_production_of_release;
use std::path::Path;
use std::process::Command;

const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";
const RELEASES: [&str; 5] = ["4.0.2", "4.1.2", "4.2.2", "4.3.1", "4.4.0"];
/// `--initial-controllers` with node 1 (this node): hosts Java rewrites (`::1`, an empty host),
/// and ids whose Java HashMap order is not their id order (9 before 2).
const WITH_ME: &str = "1@[::1]:9093:xkFWfagsSa2W4IuY_DK9zQ,2@:9094:a6QGf_OEQcCBdH8kVSHIFg,\
                       9@c9.example:9095:MvDxzVmcRsaTz33bUuRU6A";
/// `--initial-controllers` without node 1.
const WITHOUT_ME: &str = "2@127.1:9094:a6QGf_OEQcCBdH8kVSHIFg,17@c17:9095:MvDxzVmcRsaTz33bUuRU6A,\
                          5@c5:9096:xkFWfagsSa2W4IuY_DK9zQ";

/// The quorum options compared.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// `controller.quorum.voters`, no option.
    Static,
    /// `--standalone`.
    Standalone,
    /// `--initial-controllers` [`WITH_ME`].
    InitialControllers,
    /// `--initial-controllers` [`WITHOUT_ME`].
    InitialControllersWithoutMe,
    /// `--no-initial-controllers`.
    NoInitialControllers,
}

impl Mode {
    const ALL: [Mode; 5] = [
        Mode::Static,
        Mode::Standalone,
        Mode::InitialControllers,
        Mode::InitialControllersWithoutMe,
        Mode::NoInitialControllers,
    ];

    fn args(self) -> Vec<&'static str> {
        match self {
            Mode::Static => vec![],
            Mode::Standalone => vec!["--standalone"],
            Mode::InitialControllers => vec!["--initial-controllers", WITH_ME],
            Mode::InitialControllersWithoutMe => vec!["--initial-controllers", WITHOUT_ME],
            Mode::NoInitialControllers => vec!["--no-initial-controllers"],
        }
    }

    fn quorum_config(self) -> &'static str {
        match self {
            Mode::Static => "controller.quorum.voters=1@localhost:9093",
            _ => "controller.quorum.bootstrap.servers=localhost:9093",
        }
    }
}

/// The libs directory of `release` (`scripts/kafka-fetch`, last line of its output).
fn kafka_libs(release: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/kafka-fetch");
    let out = Command::new(script)
        .arg(release)
        .output()
        .expect("scripts/kafka-fetch");
    assert!(
        out.status.success(),
        "kafka-fetch {release}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    stdout
        .lines()
        .last()
        .expect("libs directory")
        .trim()
        .to_owned()
}

/// A controller config with metadata dir `m` and data dir `d` under `root`.
fn write_config(root: &Path, mode: Mode) -> PathBuf {
    let path = root.join("controller.properties");
    fs::write(
        &path,
        format!(
            "process.roles=controller\nnode.id=1\n{}\n\
             listeners=CONTROLLER://localhost:9093\ncontroller.listener.names=CONTROLLER\n\
             log.dirs={}\nmetadata.log.dir={}\n",
            mode.quorum_config(),
            root.join("d").display(),
            root.join("m").display()
        ),
    )
    .unwrap();
    path
}

/// Every file under `root`'s `m` and `d`, relative, sorted (the config file excluded).
fn files(root: &Path) -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, base, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    for sub in ["m", "d"] {
        walk(&root.join(sub), root, &mut out);
    }
    out.sort();
    out
}

/// The SnapshotHeader's LastContainedLogTimestamp and the base timestamp of every batch.
fn stamps(bytes: &[u8]) -> (i64, Vec<i64>) {
    let mut header_stamp = None;
    let mut batch_stamps = Vec::new();
    for batch in batches(bytes) {
        let (_, raw) = batch.unwrap();
        let (header, records) = decode_batch(raw).unwrap();
        batch_stamps.push(header.base_timestamp);
        if header_stamp.is_none() {
            let r = &records[0];
            let decoded = ControlRecord::decode(
                r.key.as_deref().unwrap_or_default(),
                r.value.as_deref().unwrap_or_default(),
            )
            .unwrap();
            let ControlRecord::SnapshotHeader(h) = decoded else {
                panic!("first batch is not a SnapshotHeader: {decoded:?}");
            };
            header_stamp = Some(h.last_contained_log_timestamp);
        }
    }
    (header_stamp.unwrap(), batch_stamps)
}

/// Formats with `release`'s own kafka-storage (its default release version) and with ours at
/// that release's newest production level, both in `mode`; returns a description of the
/// comparison.
fn compare_release(release: &str, mode: Mode) -> String {
    let libs = kafka_libs(release);
    let mv = latest_production_of_release(release).unwrap();
    let java_root = tempfile::tempdir().unwrap();
    let java_config = write_config(java_root.path(), mode);
    let out = Command::new("java")
        .args([
            "-cp",
            &format!("{libs}/*"),
            "kafka.tools.StorageTool",
            "format",
        ])
        .args(["-t", CLUSTER_ID, "-c", java_config.to_str().unwrap()])
        .args(mode.args())
        .output()
        .expect("java on PATH");
    assert!(
        out.status.success(),
        "{release} {mode:?} kafka-storage format: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let what = format!("{release} {mode:?}");
    // Kafka's directory opens in kraftwerk, at that release's default level.
    let loaded = NodeConfig::load(&java_config)
        .unwrap()
        .load_formatted()
        .unwrap();
    assert_eq!(
        (loaded.cluster_id.as_str(), loaded.node_id),
        (CLUSTER_ID, 1)
    );
    assert_eq!(loaded.bootstrap.metadata_version, mv, "{what}");

    let ours_root = tempfile::tempdir().unwrap();
    let ours_config = write_config(ours_root.path(), mode);
    let quorum = match mode {
        Mode::Static => QuorumOption::None,
        Mode::Standalone => QuorumOption::Standalone,
        Mode::InitialControllers => QuorumOption::InitialControllers(WITH_ME.into()),
        Mode::InitialControllersWithoutMe => QuorumOption::InitialControllers(WITHOUT_ME.into()),
        Mode::NoInitialControllers => QuorumOption::NoInitialControllers,
    };
    let opts = FormatOptions {
        config: NodeConfig::load(&ours_config).unwrap(),
        cluster_id: CLUSTER_ID.into(),
        release_version: Some(mv.release().to_owned()),
        features: vec![],
        ignore_formatted: false,
        quorum,
        add_scram: vec![],
    };
    let report = format(&opts).unwrap();
    assert_eq!(report.metadata_version, mv);
    let java_files = files(java_root.path());
    assert_eq!(files(ours_root.path()), java_files, "{what}: files written");
    let java_meta_id = loaded.directory_id;
    // The quorum kraftwerk reads from Kafka's directory is the one we wrote, once the
    // directory id Java drew for --standalone is put in.
    let mut expected_quorum: Option<BootstrapQuorum> = report.quorum.clone();
    if let (Mode::Standalone, Some(q)) = (mode, expected_quorum.as_mut()) {
        q.voters.as_mut().unwrap()[0].directory_id = java_meta_id;
    }
    assert_eq!(loaded.bootstrap.quorum, expected_quorum, "{what}: quorum");
    let ours_meta_id = report
        .formatted
        .iter()
        .find(|d| d.kind != DirectoryKind::Data)
        .unwrap()
        .directory_id;
    if let Mode::InitialControllers = mode {
        assert_eq!(
            java_meta_id, ours_meta_id,
            "{what}: directory.id from the list"
        );
    }

    let mut compared = Vec::new();
    for file in java_files
        .iter()
        .filter(|f| !f.ends_with(META_PROPERTIES_FILE))
    {
        let kafka_bytes = fs::read(java_root.path().join(file)).unwrap();
        let (last_contained, batch_stamps) = stamps(&kafka_bytes);
        let bootstrap = BootstrapMetadata::read_dir(&ours_root.path().join("m")).unwrap();
        let ours = if file.ends_with("bootstrap.checkpoint") {
            assert_eq!(batch_stamps.len(), 3, "{what} {file}");
            bootstrap
                .encode_snapshot(
                    last_contained,
                    [batch_stamps[0], batch_stamps[1], batch_stamps[2]],
                )
                .unwrap()
        } else {
            // The bootstrap snapshot: quorum-only up to 4.3, with the records from 4.4.
            let records = if mv >= MetadataVersion::V4_4_IV0 {
                bootstrap.records.clone()
            } else {
                vec![]
            };
            let data_stamp = if batch_stamps.len() == 3 {
                batch_stamps[1]
            } else {
                batch_stamps[0]
            };
            encode_bootstrap_snapshot(
                expected_quorum.as_ref(),
                &records,
                last_contained,
                [batch_stamps[0], data_stamp, *batch_stamps.last().unwrap()],
            )
            .unwrap()
        };
        assert_eq!(ours, kafka_bytes, "{what}: bytes of {file}");
        let (our_last_contained, _) = stamps(&fs::read(ours_root.path().join(file)).unwrap());
        // Kafka ≤ 4.3 writes 0 into bootstrap.checkpoint (BatchFileWriter); snapshots the
        // format time.
        assert_eq!(
            our_last_contained == 0,
            last_contained == 0,
            "{what} {file}"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode_bits =
            |root: &Path| fs::metadata(root.join(file)).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode_bits(ours_root.path()),
            mode_bits(java_root.path()),
            "{what}: mode of {file}"
        );
        compared.push(format!("{file} ({} bytes)", kafka_bytes.len()));
    }
    // meta.properties: same keys and values apart from directory.id.
    for dir in ["m", "d"] {
        let read = |root: &Path| {
            let text = fs::read_to_string(root.join(dir).join(META_PROPERTIES_FILE)).unwrap();
            let props =
                kraftwerk_log::java_properties::JavaProperties::parse(text.as_bytes()).unwrap();
            props
                .iter()
                .filter(|(k, _)| *k != "directory.id")
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            read(ours_root.path()),
            read(java_root.path()),
            "{what}: {dir}/meta.properties"
        );
    }
    // Kafka's metadata log directory opens empty in kraftwerk, a bootstrap snapshot kept and
    // never listed (last: opening creates files).
    {
        use kraftwerk_raft::storage::ReplicatedLog;
        let meta = java_root.path().join("m");
        let log = kraftwerk_log::SegmentLog::open(&meta, Default::default()).unwrap();
        assert_eq!(
            (log.start_offset(), log.end_offset().offset),
            (0, 0),
            "{what}"
        );
        assert_eq!(log.latest_snapshot_id(), None, "{what}");
    }
    format!("{what} at {mv}: identical {}", compared.join(", "))
}

#[test]
#[ignore = "needs Java and the jars of every Kafka 4.x release (scripts/kafka-fetch)"]
fn every_release_formats_what_we_format() {
    for release in RELEASES {
        for mode in Mode::ALL {
            println!("{}", compare_release(release, mode));
        }
    }
}

/// `--add-scram` values with every input fixed (salt, iterations; a password and a salted
/// password), so Kafka's records are reproducible.
const SCRAM_ARGS: [&str; 2] = [
    "SCRAM-SHA-512=[name=alice,password=alice-secret,iterations=8192,salt=\"MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E=\"]",
    "SCRAM-SHA-256=[name=\"bob\",salt=MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E,saltedpassword=\"mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE=\"]",
];

/// `kafka-storage format --add-scram` of `release` and ours write the same records and the
/// same bytes (clock fields aside) into every file holding the bootstrap records.
fn compare_scram(release: &str) -> String {
    let libs = kafka_libs(release);
    let mv = latest_production_of_release(release).unwrap();
    let java_root = tempfile::tempdir().unwrap();
    let java_config = write_config(java_root.path(), Mode::Static);
    let mut command = Command::new("java");
    command
        .args([
            "-cp",
            &format!("{libs}/*"),
            "kafka.tools.StorageTool",
            "format",
        ])
        .args(["-t", CLUSTER_ID, "-c", java_config.to_str().unwrap()]);
    for arg in SCRAM_ARGS {
        command.args(["--add-scram", arg]);
    }
    let out = command.output().expect("java on PATH");
    assert!(
        out.status.success(),
        "{release} kafka-storage format --add-scram: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let ours_root = tempfile::tempdir().unwrap();
    let ours_config = write_config(ours_root.path(), Mode::Static);
    let opts = FormatOptions {
        config: NodeConfig::load(&ours_config).unwrap(),
        cluster_id: CLUSTER_ID.into(),
        release_version: Some(mv.release().to_owned()),
        features: vec![],
        ignore_formatted: false,
        quorum: QuorumOption::None,
        add_scram: SCRAM_ARGS.iter().map(|a| (*a).to_owned()).collect(),
    };
    format(&opts).unwrap();
    let java_files = files(java_root.path());
    assert_eq!(
        files(ours_root.path()),
        java_files,
        "{release}: files written"
    );
    let ours = BootstrapMetadata::read_dir(&ours_root.path().join("m")).unwrap();
    let kafkas = BootstrapMetadata::read_dir(&java_root.path().join("m")).unwrap();
    assert_eq!(ours.records, kafkas.records, "{release}: bootstrap records");
    assert_eq!(ours.records.len(), kafkas.records.len());
    let mut compared = Vec::new();
    for file in java_files
        .iter()
        .filter(|f| !f.ends_with(META_PROPERTIES_FILE))
    {
        let kafka_bytes = fs::read(java_root.path().join(file)).unwrap();
        let (last_contained, batch_stamps) = stamps(&kafka_bytes);
        assert_eq!(batch_stamps.len(), 3, "{release} {file}");
        let stamps3 = [batch_stamps[0], batch_stamps[1], batch_stamps[2]];
        let rewritten = if file.ends_with("bootstrap.checkpoint") {
            ours.encode_snapshot(last_contained, stamps3).unwrap()
        } else {
            encode_bootstrap_snapshot(None, &ours.records, last_contained, stamps3).unwrap()
        };
        assert_eq!(rewritten, kafka_bytes, "{release}: bytes of {file}");
        compared.push(format!("{file} ({} bytes)", kafka_bytes.len()));
    }
    format!(
        "{release} --add-scram at {mv}: {} records, identical {}",
        ours.records.len(),
        compared.join(", ")
    )
}

#[test]
#[ignore = "needs Java and the jars of every Kafka 4.x release (scripts/kafka-fetch)"]
fn every_release_adds_scram_as_we_do() {
    for release in RELEASES {
        println!("{}", compare_scram(release));
    }
}
