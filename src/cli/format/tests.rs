//! Tests of `format.rs`.
use super::*;
use clap::Parser;
use kraftwerk_log::bootstrap::{BOOTSTRAP_FILE, BOOTSTRAP_SNAPSHOT_FILE};
use kraftwerk_log::java_properties::JavaProperties;
use kraftwerk_log::meta_properties::{MetaPropertiesVersion, META_PROPERTIES_FILE};
use kraftwerk_records::metadata::MetadataRecord;
use std::path::Path;

const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";

struct Node {
    _root: tempfile::TempDir,
    meta: PathBuf,
    data: PathBuf,
    config_path: PathBuf,
}

/// A controller with a separate metadata dir and one data dir; `extra` is appended to
/// the properties.
fn node(extra: &str) -> Node {
    let root = tempfile::tempdir().unwrap();
    let meta = root.path().join("meta");
    let data = root.path().join("data");
    let config_path = root.path().join("controller.properties");
    fs::write(
        &config_path,
        format!(
            "process.roles=controller\nnode.id=1\n\
             controller.quorum.voters=1@localhost:9093\n\
             listeners=CONTROLLER://localhost:9093\ncontroller.listener.names=CONTROLLER\n\
             log.dirs={}\nmetadata.log.dir={}\n{extra}",
            data.display(),
            meta.display()
        ),
    )
    .unwrap();
    Node {
        _root: root,
        meta,
        data,
        config_path,
    }
}

fn args(node: &Node, more: &[&str]) -> FormatArgs {
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        format: FormatArgs,
    }
    let config = node.config_path.to_str().unwrap();
    let mut argv = vec!["kraftwerk", "-c", config, "-t", CLUSTER_ID];
    argv.extend_from_slice(more);
    Cli::try_parse_from(argv).unwrap().format
}

fn run(node: &Node, more: &[&str]) -> Result<FormatReport, FormatError> {
    format(&args(node, more).to_options()?)
}

fn read_meta(dir: &Path) -> MetaProperties {
    MetaProperties::read(dir).unwrap().unwrap()
}

#[test]
fn formats_metadata_and_data_dirs() {
    let node = node("");
    let report = run(&node, &[]).unwrap();
    assert_eq!(report.metadata_version, MetadataVersion::LATEST_PRODUCTION);
    let kinds: Vec<(&Path, DirectoryKind)> = report
        .formatted
        .iter()
        .map(|d| (d.path.as_path(), d.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (node.data.as_path(), DirectoryKind::Data),
            (node.meta.as_path(), DirectoryKind::Metadata)
        ]
    );
    for dir in &report.formatted {
        let meta = read_meta(&dir.path);
        assert_eq!(meta, MetaProperties::v1(CLUSTER_ID, 1, dir.directory_id));
        // 4.4-IV2, Kafka 4.4's layout (KIP-1170): no bootstrap.checkpoint anywhere.
        assert!(!dir.path.join(BOOTSTRAP_FILE).exists());
    }
    assert_ne!(
        report.formatted[0].directory_id,
        report.formatted[1].directory_id
    );
    let snapshot = node
        .meta
        .join("__cluster_metadata-0")
        .join(BOOTSTRAP_SNAPSHOT_FILE);
    assert!(snapshot.exists());
    assert!(!node.data.join("__cluster_metadata-0").exists());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs::metadata(&snapshot).unwrap().permissions().mode() & 0o777,
        0o400
    );
    let loaded = NodeConfig::load(&node.config_path)
        .unwrap()
        .load_formatted()
        .unwrap();
    assert_eq!(loaded.cluster_id, CLUSTER_ID);
    assert_eq!(loaded.node_id, 1);
    assert_eq!(loaded.directory_id, report.formatted[1].directory_id);
    assert_eq!(loaded.bootstrap.metadata_version, MetadataVersion::V4_4_IV2);
    assert_eq!(loaded.bootstrap.feature_level("group.version"), 1);
    assert_eq!(loaded.bootstrap.feature_level("share.version"), 2);
    assert!(loaded.bootstrap.source.contains("bootstrap snapshot"));
}

#[test]
fn releases_before_4_4_get_bootstrap_checkpoint_in_every_dir() {
    for (release, level) in [("4.3", 30), ("4.1", 27), ("3.3", 7)] {
        let node = node("");
        let report = run(&node, &["--release-version", release]).unwrap();
        assert_eq!(report.metadata_version.feature_level(), level);
        for dir in &report.formatted {
            assert!(dir.path.join(BOOTSTRAP_FILE).exists(), "{release}");
            assert!(!dir.path.join("__cluster_metadata-0").exists(), "{release}");
        }
        let loaded = NodeConfig::load(&node.config_path)
            .unwrap()
            .load_formatted()
            .unwrap();
        assert_eq!(loaded.bootstrap.metadata_version.feature_level(), level);
        assert!(loaded.bootstrap.source.contains(BOOTSTRAP_FILE));
    }
    // 4.4-IV0 is a 4.4 level: Kafka 4.4's layout.
    let node = node("");
    run(&node, &["--release-version", "4.4-IV0"]).unwrap();
    assert!(!node.meta.join(BOOTSTRAP_FILE).exists());
    assert!(node
        .meta
        .join("__cluster_metadata-0")
        .join(BOOTSTRAP_SNAPSHOT_FILE)
        .exists());
}

#[test]
fn refuses_formatted_dirs_unless_ignore_formatted() {
    let node = node("");
    let first = run(&node, &[]).unwrap();
    let err = run(&node, &[]).unwrap_err();
    assert!(
        matches!(&err, FormatError::AlreadyFormatted { dir } if *dir == node.data),
        "{err}"
    );
    assert!(err.to_string().contains("--ignore-formatted"), "{err}");
    let again = run(&node, &["--ignore-formatted"]).unwrap();
    assert!(again.formatted.is_empty());
    assert_eq!(
        again.already_formatted,
        vec![node.data.clone(), node.meta.clone()]
    );
    // Nothing was rewritten.
    assert_eq!(
        read_meta(&node.meta).directory_id,
        Some(first.formatted[1].directory_id)
    );
    // A new, empty directory is formatted alongside the existing ones.
    fs::remove_dir_all(&node.data).unwrap();
    let partial = run(&node, &["-g"]).unwrap();
    assert_eq!(partial.formatted.len(), 1);
    assert_eq!(partial.formatted[0].path, node.data);
    assert_ne!(
        partial.formatted[0].directory_id,
        first.formatted[1].directory_id
    );
}

#[test]
fn existing_dirs_must_match_cluster_and_node() {
    let node = node("");
    fs::create_dir_all(&node.meta).unwrap();
    MetaProperties::v1("AAAAAAAAAAAAAAAAAAAAAA", 1, random_directory_id(&[]))
        .write(&node.meta)
        .unwrap();
    let err = run(&node, &["-g"]).unwrap_err();
    assert!(err.to_string().contains("Invalid cluster.id"), "{err}");
    MetaProperties::v1(CLUSTER_ID, 2, random_directory_id(&[]))
        .write(&node.meta)
        .unwrap();
    let err = run(&node, &["-g"]).unwrap_err();
    assert!(err.to_string().contains("Stored node id 2"), "{err}");
    fs::write(
        node.meta.join(META_PROPERTIES_FILE),
        "version=1\nnode.id=x\n",
    )
    .unwrap();
    let err = run(&node, &["-g"]).unwrap_err();
    assert!(err.to_string().contains("node.id"), "{err}");
    assert!(!node.data.exists(), "nothing is written when a check fails");
}

#[test]
fn cluster_id_must_be_a_kafka_uuid() {
    let node = node("");
    for bad in [
        "not a uuid!",
        "MkU3OEVBNTcwNTJENDM2Q",
        "AAAAAAAAAAAAAAAAAAAAAR",
        "MkU3OEVBNTcwNTJENDM2Qg==",
    ] {
        let mut a = args(&node, &[]);
        a.cluster_id = bad.to_owned();
        let err = format(&a.to_options().unwrap()).unwrap_err();
        assert!(
            matches!(err, FormatError::InvalidClusterId { .. }),
            "{bad}: {err}"
        );
        assert!(err.to_string().contains(bad), "{err}");
    }
    assert!(!node.meta.exists());
}

#[test]
fn release_version_and_features_follow_kafka_storage() {
    let levels = |report: &FormatReport| -> Vec<(String, i16)> {
        report
            .feature_levels
            .iter()
            .map(|(f, l)| (f.name().to_owned(), *l))
            .collect()
    };
    let node1 = node("");
    let report = run(&node1, &["--release-version", "3.9"]).unwrap();
    assert_eq!(report.metadata_version, MetadataVersion::V3_9_IV0);
    assert!(
        levels(&report).iter().all(|(_, l)| *l == 0),
        "{:?}",
        levels(&report)
    );
    let b = BootstrapMetadata::read_dir(&node1.meta).unwrap();
    assert_eq!(b.records.len(), 1);

    let node2 = node("");
    let report = run(
        &node2,
        &[
            "-r",
            "4.0",
            "-f",
            "group.version=0",
            "--feature",
            "transaction.version=1",
        ],
    )
    .unwrap();
    assert_eq!(report.metadata_version, MetadataVersion::V4_0_IV3);
    let b = BootstrapMetadata::read_dir(&node2.meta).unwrap();
    assert_eq!(b.feature_level("group.version"), 0);
    assert_eq!(b.feature_level("transaction.version"), 1);

    let node3 = node("");
    let report = run(&node3, &["-f", "metadata.version=23"]).unwrap();
    assert_eq!(report.metadata_version, MetadataVersion::V4_0_IV1);

    let cases: &[(&[&str], &str)] = &[
        // Messages of Kafka 4.4.0's fromVersionString / Formatter.
        (&["-r", "4.5"], "Unknown metadata.version '4.5'"),
        (&["-r", "4.5-IV0"], "Unknown metadata.version '4.5-IV0'"),
        (
            &["-f", "metadata.version=34"],
            "metadata.version 4.5-IV0 is not yet stable.",
        ),
        (
            &["-r", "3.2"],
            "Supported metadata.version are: 3.3-IV3, 3.4-IV0",
        ),
        (
            &["-r", "4.1", "-f", "metadata.version=27"],
            "avoid ambiguity",
        ),
        (
            &["-f", "kraft.version=1"],
            "Cannot set kraft.version to 1 unless controller.quorum.voters is empty",
        ),
        (
            &["-f", "bogus.version=1"],
            "Unsupported feature: bogus.version",
        ),
        (&["-f", "group.version"], "equals sign not found"),
        (&["-f", "group.version=x"], "unable to parse x as a short"),
        (&["-f", "group.version=2"], "group.version"),
        (&["-f", "streams.version=2"], "streams.version"),
        (&["-f", "share.version=3"], "share.version"),
        (
            &["-r", "4.0-IV0", "-f", "eligible.leader.replicas.version=1"],
            "depends on metadata.version",
        ),
    ];
    for (more, expected) in cases {
        let node = node("");
        let err = run(&node, more).unwrap_err();
        assert!(err.to_string().contains(expected), "{more:?}: {err}");
        assert!(!node.meta.exists(), "{more:?} wrote something");
    }
}

#[test]
fn unstable_versions_need_the_config_switch() {
    let node = node("unstable.feature.versions.enable=true\n");
    let report = run(&node, &[]).unwrap();
    assert_eq!(report.metadata_version, MetadataVersion::LATEST_TESTING);
    let b = BootstrapMetadata::read_dir(&node.meta).unwrap();
    assert_eq!(b.metadata_version, MetadataVersion::V4_5_IV0);
    assert_eq!(b.feature_level("share.version"), 2);
    assert_eq!(b.feature_level("streams.version"), 1);
}

#[test]
fn load_reports_unformatted_and_inconsistent_dirs() {
    let node = node("");
    let config = NodeConfig::load(&node.config_path).unwrap();
    let err = config.load_formatted().unwrap_err();
    assert!(matches!(&err, LoadError::NotFormatted { .. }), "{err}");
    assert!(err.to_string().contains("format"), "{err}");
    run(&node, &[]).unwrap();

    // A data dir of another cluster.
    let data_meta = read_meta(&node.data);
    let foreign = MetaProperties {
        cluster_id: Some("AAAAAAAAAAAAAAAAAAAAAA".into()),
        ..data_meta.clone()
    };
    foreign.write(&node.data).unwrap();
    let err = config.load_formatted().unwrap_err();
    assert!(matches!(err, LoadError::ClusterIdMismatch { .. }), "{err}");

    // Both dirs of another node.
    for dir in [&node.data, &node.meta] {
        let m = read_meta(dir);
        MetaProperties {
            node_id: Some(7),
            cluster_id: Some(CLUSTER_ID.into()),
            ..m
        }
        .write(dir)
        .unwrap();
    }
    let err = config.load_formatted().unwrap_err();
    assert!(
        err.to_string()
            .contains("Stored node id 7 doesn't match previous node id 1"),
        "{err}"
    );
    assert_eq!(
        kraftwerk_log::formatted::load_formatted_dir(&node.meta)
            .unwrap()
            .node_id,
        7
    );

    // Duplicate directory ids.
    let meta_id = read_meta(&node.meta).directory_id;
    for dir in [&node.data, &node.meta] {
        MetaProperties::v1(CLUSTER_ID, 1, meta_id.unwrap())
            .write(dir)
            .unwrap();
    }
    let err = config.load_formatted().unwrap_err();
    assert!(
        matches!(err, LoadError::DuplicateDirectoryId { .. }),
        "{err}"
    );

    // The metadata partition outside metadata.log.dir.
    MetaProperties::v1(CLUSTER_ID, 1, random_directory_id(&[meta_id.unwrap()]))
        .write(&node.data)
        .unwrap();
    fs::create_dir(node.data.join("__cluster_metadata-0")).unwrap();
    let err = config.load_formatted().unwrap_err();
    assert!(
        matches!(err, LoadError::MisplacedMetadataPartition { .. }),
        "{err}"
    );
    fs::remove_dir(node.data.join("__cluster_metadata-0")).unwrap();
    assert!(config.load_formatted().is_ok());
}

#[test]
fn load_assigns_missing_directory_ids_like_kafka() {
    let node = node("");
    run(&node, &[]).unwrap();
    // An old-style v1 file without directory.id, and a v0 file with broker.id.
    fs::write(
        node.meta.join(META_PROPERTIES_FILE),
        format!("version=1\nnode.id=1\ncluster.id={CLUSTER_ID}\n"),
    )
    .unwrap();
    fs::write(
        node.data.join(META_PROPERTIES_FILE),
        format!("broker.id=1\ncluster.id={CLUSTER_ID}\n"),
    )
    .unwrap();
    let config = NodeConfig::load(&node.config_path).unwrap();
    let loaded = config.load_formatted().unwrap();
    assert_eq!(
        read_meta(&node.meta).directory_id,
        Some(loaded.directory_id)
    );
    let data = read_meta(&node.data);
    assert!(data.directory_id.is_some() && data.directory_id != Some(loaded.directory_id));
    assert_eq!(
        data.version,
        MetaPropertiesVersion::V0,
        "the version is kept on rewrite"
    );
    // A v0 file without node id is rejected.
    fs::write(
        node.data.join(META_PROPERTIES_FILE),
        format!("cluster.id={CLUSTER_ID}\n"),
    )
    .unwrap();
    let err = config.load_formatted().unwrap_err();
    assert!(err.to_string().contains("node.id not found"), "{err}");
}

#[test]
fn random_uuids_are_valid_cluster_ids() {
    let ids: Vec<String> = (0..500).map(|_| random_uuid()).collect();
    for id in &ids {
        validate_cluster_id(id).unwrap();
        assert!(!id.starts_with('-'));
    }
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len());
}

// ---- Cross-checks with Kafka's own Java classes: they need Java 17 and Kafka's jars in
// $KRAFTWERK_KAFKA_LIBS and fail without them; `#[ignore]`d so that plain `cargo test` leaves
// them to compat/run, which provides both.

/// Our own Java program: loads directories with Kafka's MetaPropertiesEnsemble (the checks
/// a Kafka node runs at start-up) and BootstrapDirectory, and prints what it found.
const JAVA_CHECK: &str = r#"
import java.util.*;
import org.apache.kafka.metadata.properties.*;
import org.apache.kafka.metadata.bootstrap.*;
import org.apache.kafka.server.common.ApiMessageAndVersion;
public class CheckFormatted {
public static void main(String[] args) throws Exception {
    String metadataDir = args[0];
    int nodeId = Integer.parseInt(args[1]);
    MetaPropertiesEnsemble.Loader loader = new MetaPropertiesEnsemble.Loader().addMetadataLogDir(metadataDir);
    loader.addLogDirs(Arrays.asList(args).subList(2, args.length));
    MetaPropertiesEnsemble ensemble = loader.load();
    ensemble.verify(Optional.empty(), OptionalInt.of(nodeId), EnumSet.of(
        MetaPropertiesEnsemble.VerificationFlag.REQUIRE_AT_LEAST_ONE_VALID,
        MetaPropertiesEnsemble.VerificationFlag.REQUIRE_METADATA_LOG_DIR));
    if (!ensemble.errorLogDirs().isEmpty() || !ensemble.emptyLogDirs().isEmpty()) throw new RuntimeException(ensemble.toString());
    System.out.println("cluster.id=" + ensemble.clusterId().get());
    System.out.println("node.id=" + ensemble.nodeId().getAsInt());
    for (Map.Entry<String, MetaProperties> e : ensemble.logDirProps().entrySet())
        System.out.println("directory.id " + e.getKey() + "=" + e.getValue().directoryId().get());
    BootstrapMetadata bootstrap = new BootstrapDirectory(metadataDir).read();
    System.out.println("metadata.version=" + bootstrap.metadataVersion());
    for (ApiMessageAndVersion r : bootstrap.records()) System.out.println("record " + r);
}
}
"#;

fn java(args: &[&str]) -> String {
    let out = std::process::Command::new("java")
        .args(args)
        .output()
        .expect("java on PATH");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "java {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
#[ignore = "run by compat/run: needs Java and Kafka's jars (KRAFTWERK_KAFKA_LIBS)"]
fn kafka_reads_our_formatted_dirs() {
    let cp = kraftwerk_log::testing::kafka_classpath();
    let node = node("");
    // 4.1: what the default compat jars (Kafka 4.1.2) understand; 4.4's layout is checked
    // against each release's own jars in `every_release_formats_what_we_format`.
    let report = run(&node, &["--release-version", "4.1"]).unwrap();
    let program = node._root.path().join("CheckFormatted.java");
    fs::write(&program, JAVA_CHECK).unwrap();
    let meta = node.meta.to_str().unwrap();
    let out = java(&[
        "-cp",
        &cp,
        program.to_str().unwrap(),
        meta,
        "1",
        node.data.to_str().unwrap(),
    ]);
    assert!(out.contains(&format!("cluster.id={CLUSTER_ID}\n")), "{out}");
    assert!(out.contains("node.id=1\n"), "{out}");
    for dir in &report.formatted {
        let line = format!(
            "directory.id {}={}\n",
            dir.path.display(),
            kafka_uuid_to_string(dir.directory_id)
        );
        assert!(out.contains(&line), "{line} not in {out}");
    }
    assert!(out.contains("metadata.version=4.1-IV1\n"), "{out}");
    let records: Vec<&str> = out.lines().filter(|l| l.starts_with("record ")).collect();
    assert_eq!(records.len(), 4, "{out}");
    assert!(
        records[0].contains("name='metadata.version', featureLevel=27"),
        "{out}"
    );
    assert!(
        records[1].contains("name='eligible.leader.replicas.version', featureLevel=1"),
        "{out}"
    );
    assert!(
        records[2].contains("name='group.version', featureLevel=1"),
        "{out}"
    );
    assert!(
        records[3].contains("name='transaction.version', featureLevel=2"),
        "{out}"
    );
}

#[test]
#[ignore = "run by compat/run: needs Java and Kafka's jars (KRAFTWERK_KAFKA_LIBS)"]
fn we_read_kafka_formatted_dirs_and_match_its_bytes() {
    let cp = kraftwerk_log::testing::kafka_classpath();
    let node = node("");
    let config = node.config_path.to_str().unwrap();
    for release in ["4.1", "3.3", "4.0-IV1"] {
        let _ = fs::remove_dir_all(&node.meta);
        let _ = fs::remove_dir_all(&node.data);
        java(&[
            "-cp",
            &cp,
            "kafka.tools.StorageTool",
            "format",
            "-t",
            CLUSTER_ID,
            "-c",
            config,
            "-r",
            release,
        ]);
        let config = NodeConfig::load(&node.config_path).unwrap();
        let loaded = config.load_formatted().unwrap();
        assert_eq!(
            (loaded.cluster_id.as_str(), loaded.node_id),
            (CLUSTER_ID, 1)
        );
        let mv = MetadataVersion::from_version_string(release, false).unwrap();
        assert_eq!(loaded.bootstrap.metadata_version, mv);

        // bootstrap.checkpoint: our bytes for the same release equal Kafka's, timestamps aside.
        let kafka_bytes = fs::read(node.meta.join(BOOTSTRAP_FILE)).unwrap();
        let stamps: Vec<i64> = kraftwerk_records::batch::batches(&kafka_bytes)
            .map(|b| b.unwrap().0.base_timestamp)
            .collect();
        let opts = FormatOptions {
            config: config.clone(),
            cluster_id: CLUSTER_ID.into(),
            release_version: Some(release.into()),
            features: vec![],
            ignore_formatted: false,
            quorum: QuorumOption::None,
            add_scram: vec![],
        };
        let (mv, levels) = effective_levels(&opts, false).unwrap();
        let ours = BootstrapMetadata::from_versions(mv, &levels, "format command")
            .encode_checkpoint(stamps[0], stamps[1], stamps[2])
            .unwrap();
        assert_eq!(ours, kafka_bytes, "bootstrap.checkpoint for {release}");

        // meta.properties: same text apart from directory.id and the date line.
        let kafka_text = fs::read_to_string(node.meta.join(META_PROPERTIES_FILE)).unwrap();
        let kafka_props = JavaProperties::parse(kafka_text.as_bytes()).unwrap();
        let ours = MetaProperties::v1(CLUSTER_ID, 1, loaded.directory_id).to_properties();
        let kafka_keys: Vec<(&str, &str)> = kafka_props.iter().collect();
        let our_keys: Vec<(&str, &str)> = ours.iter().collect();
        assert_eq!(our_keys, kafka_keys);
        assert!(kafka_text.starts_with("#\n#"), "{kafka_text}");
        if let Some(MetadataRecord::FeatureLevel(f)) =
            loaded.bootstrap.records.first().map(|r| &r.record)
        {
            assert_eq!(f.name, "metadata.version");
        }
    }
}

#[test]
fn add_scram_appends_credentials_after_the_feature_levels() {
    let node = node("");
    let alice = "SCRAM-SHA-512=[name=alice,password=alice-secret]";
    let bob = "SCRAM-SHA-256=[name=bob,password=bob-secret,iterations=8192,salt=\"c2FsdA==\"]";
    run(
        &node,
        &["--release-version", "4.1", "-S", alice, "--add-scram", bob],
    )
    .unwrap();
    for dir in [&node.meta, &node.data] {
        let read = BootstrapMetadata::read_file(&dir.join(BOOTSTRAP_FILE)).unwrap();
        let kinds: Vec<&str> = read
            .records
            .iter()
            .map(|r| match &r.record {
                MetadataRecord::FeatureLevel(_) => "feature",
                MetadataRecord::UserScramCredential(_) => "scram",
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        let features = kinds.iter().filter(|k| **k == "feature").count();
        assert_eq!(&kinds[features..], ["scram", "scram"]);
        let scram: Vec<_> = read
            .records
            .iter()
            .filter_map(|r| match &r.record {
                MetadataRecord::UserScramCredential(s) => Some((r.version, s)),
                _ => None,
            })
            .collect();
        assert_eq!((scram[0].0, scram[0].1.name.as_str()), (0, "alice"));
        assert_eq!((scram[0].1.mechanism, scram[0].1.iterations), (2, 4096));
        assert!(!scram[0].1.salt.is_empty());
        assert_eq!(scram[0].1.stored_key.len(), 64);
        assert_eq!((scram[1].1.name.as_str(), scram[1].1.mechanism), ("bob", 1));
        assert_eq!(
            (&scram[1].1.salt[..], scram[1].1.iterations),
            (&b"salt"[..], 8192)
        );
    }
}

#[test]
fn add_scram_needs_3_5_iv2_and_a_valid_argument() {
    let node = node("");
    let arg = "SCRAM-SHA-256=[name=a,password=p]";
    let err = run(&node, &["-r", "3.5-IV1", "-S", arg]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "SCRAM is only supported in metadata.version 3.5-IV2 or later."
    );
    let err = run(&node, &["-S", "SCRAM-SHA-1=[name=a,password=p]"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "The add-scram mechanism SCRAM-SHA-1 is not supported."
    );
    // Nothing was written.
    assert!(!node.meta.join(META_PROPERTIES_FILE).exists());
    run(&node, &["-r", "3.5-IV2", "-S", arg]).unwrap();
}

#[test]
fn help_shows_add_scram() {
    use clap::CommandFactory;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        format: FormatArgs,
    }
    let help = Cli::command().render_long_help().to_string();
    assert!(help.contains("-S, --add-scram <ADD_SCRAM>"), "{help}");
    assert!(
        help.contains("SCRAM-SHA-256=[name=alice,password=alice-secret]"),
        "{help}"
    );
}
