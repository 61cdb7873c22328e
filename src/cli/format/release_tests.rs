//! `kraftwerk format --release-version V` against the `kafka-storage format` of every Kafka 4.x
//! release, run from that release's jars: same files, same bytes (timestamps taken from
//! Kafka's files), and a directory Kafka formatted opens in kraftwerk.
//!
//! Needs Java 17 and the jars of 4.0.2, 4.1.2, 4.2.2, 4.3.1 and 4.4.0 as `scripts/kafka-fetch`
//! provides them (it prints the libs directory; cached under `~/.cache/kraftwerk/kafka`), so it
//! is `#[ignore]`d: run it with
//! `cargo test -p kraftwerk --lib every_release -- --ignored --nocapture`.
use super::*;
use kraftwerk_log::bootstrap::BOOTSTRAP_SNAPSHOT_FILE;
use kraftwerk_log::meta_properties::META_PROPERTIES_FILE;
use kraftwerk_records::batch::{batches, decode_batch};
use kraftwerk_records::control::ControlRecord;
use kraftwerk_records::metadata_version::latest_production_of_release;
use std::path::Path;
use std::process::Command;

const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";
const RELEASES: [&str; 5] = ["4.0.2", "4.1.2", "4.2.2", "4.3.1", "4.4.0"];

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
fn write_config(root: &Path) -> PathBuf {
    let path = root.join("controller.properties");
    fs::write(
        &path,
        format!(
            "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n\
             listeners=CONTROLLER://localhost:9093\ncontroller.listener.names=CONTROLLER\n\
             log.dirs={}\nmetadata.log.dir={}\n",
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
/// that release's newest production level; returns a description of the comparison.
fn compare_release(release: &str) -> String {
    let libs = kafka_libs(release);
    let mv = latest_production_of_release(release).unwrap();
    let java_root = tempfile::tempdir().unwrap();
    let java_config = write_config(java_root.path());
    let out = Command::new("java")
        .args([
            "-cp",
            &format!("{libs}/*"),
            "kafka.tools.StorageTool",
            "format",
        ])
        .args(["-t", CLUSTER_ID, "-c", java_config.to_str().unwrap()])
        .output()
        .expect("java on PATH");
    assert!(
        out.status.success(),
        "{release} kafka-storage format: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Kafka's directory opens in kraftwerk, at that release's default level.
    let loaded = NodeConfig::load(&java_config)
        .unwrap()
        .load_formatted()
        .unwrap();
    assert_eq!(
        (loaded.cluster_id.as_str(), loaded.node_id),
        (CLUSTER_ID, 1)
    );
    assert_eq!(loaded.bootstrap.metadata_version, mv, "{release}");
    let snapshot = java_root
        .path()
        .join("m/__cluster_metadata-0")
        .join(BOOTSTRAP_SNAPSHOT_FILE);
    assert_eq!(
        snapshot.exists(),
        mv >= MetadataVersion::V4_4_IV0,
        "{release}"
    );

    let ours_root = tempfile::tempdir().unwrap();
    let ours_config = write_config(ours_root.path());
    let opts = FormatOptions {
        config: NodeConfig::load(&ours_config).unwrap(),
        cluster_id: CLUSTER_ID.into(),
        release_version: Some(mv.release().to_owned()),
        features: vec![],
        ignore_formatted: false,
        quorum: QuorumOption::None,
        advertised_listeners: None,
    };
    let report = format(&opts).unwrap();
    assert_eq!(report.metadata_version, mv);
    let java_files = files(java_root.path());
    assert_eq!(
        files(ours_root.path()),
        java_files,
        "{release}: files written"
    );

    let mut compared = Vec::new();
    for file in java_files
        .iter()
        .filter(|f| !f.ends_with(META_PROPERTIES_FILE))
    {
        let kafka_bytes = fs::read(java_root.path().join(file)).unwrap();
        let (last_contained, batch_stamps) = stamps(&kafka_bytes);
        assert_eq!(batch_stamps.len(), 3, "{release} {file}");
        let bootstrap = BootstrapMetadata::read_dir(&ours_root.path().join("m")).unwrap();
        let ours = bootstrap
            .encode_snapshot(
                last_contained,
                [batch_stamps[0], batch_stamps[1], batch_stamps[2]],
            )
            .unwrap();
        assert_eq!(ours, kafka_bytes, "{release}: bytes of {file}");
        let (our_last_contained, _) = stamps(&fs::read(ours_root.path().join(file)).unwrap());
        // Kafka ≤ 4.3 writes 0 there (BatchFileWriter); 4.4 the format time.
        assert_eq!(
            our_last_contained == 0,
            last_contained == 0,
            "{release} {file}"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |root: &Path| fs::metadata(root.join(file)).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode(ours_root.path()),
            mode(java_root.path()),
            "{release}: mode of {file}"
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
            "{release}: {dir}/meta.properties"
        );
    }
    // Kafka's metadata log directory opens empty in kraftwerk, a 4.4 bootstrap snapshot kept
    // and never listed (last: opening creates files).
    {
        use kraftwerk_raft::storage::ReplicatedLog;
        let meta = java_root.path().join("m");
        let log = kraftwerk_log::SegmentLog::open(&meta, Default::default()).unwrap();
        assert_eq!(
            (log.start_offset(), log.end_offset().offset),
            (0, 0),
            "{release}"
        );
        assert_eq!(log.latest_snapshot_id(), None, "{release}");
    }
    assert!(snapshot.exists() || mv < MetadataVersion::V4_4_IV0);
    format!("{release} at {mv}: identical {}", compared.join(", "))
}

#[test]
#[ignore = "needs Java and the jars of every Kafka 4.x release (scripts/kafka-fetch)"]
fn every_release_formats_what_we_format() {
    for release in RELEASES {
        println!("{}", compare_release(release));
    }
}
