//! `kraftwerk format` for dynamic quorums (KIP-853): `--standalone`, `--initial-controllers`,
//! `--no-initial-controllers`, against the behaviour and bytes of Kafka 4.1.2's and 4.4.0's
//! `kafka-storage format` (the vectors below are their files; the refusal messages are theirs).
use super::*;
use clap::Parser;
use kraftwerk_log::bootstrap::quorum::{BootstrapVoter, KRaftVersionRange, VoterEndpoint};
use kraftwerk_log::bootstrap::{
    encode_bootstrap_snapshot, BOOTSTRAP_FILE, BOOTSTRAP_SNAPSHOT_FILE,
};
use kraftwerk_records::batch::{batches, decode_batch};
use kraftwerk_records::control::ControlRecord;
use std::path::Path;

const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";
const D1: &str = "xkFWfagsSa2W4IuY_DK9zQ";
const D2: &str = "a6QGf_OEQcCBdH8kVSHIFg";
const D3: &str = "MvDxzVmcRsaTz33bUuRU6A";
/// The `--initial-controllers` of the vectors (node 9 sorts before 2 in Java's HashMap).
const INITIAL: &str = "1@h1:9093:xkFWfagsSa2W4IuY_DK9zQ,2@h2:9093:a6QGf_OEQcCBdH8kVSHIFg,9@[::1]:9093:MvDxzVmcRsaTz33bUuRU6A";

/// Kafka 4.1.2 `kafka-storage format -I` [`INITIAL`] (default 4.1-IV1): the quorum-only snapshot.
const KAFKA_4_1_2_INITIAL_CONTROLLERS: &str = "\
        0000000000000000000000f90000000002264da021002000000002000001a23340517d000001a23340517dffffffffff\
        ffffffffffffffffff000000032a0000000800000003160000000001a23340515500001e00000208000000050a000000\
        010000c0020000040800000006aa0200000400000001c641567da82c49ad96e08b98fc32bdcd020b434f4e54524f4c4c\
        45520368312385000000000100000000000932f0f1cd599c46c693cf7ddb52e454e8020b434f4e54524f4c4c45521030\
        3a303a303a303a303a303a303a31238500000000010000000000026ba4067ff38441c081747f245521c816020b434f4e\
        54524f4c4c4552036832238500000000010000000000000000000000030000003f0000000002dd89c273002000000000\
        000001a23340518d000001a23340518dffffffffffffffffffffffffffff000000011a00000008000000040600000000";

/// Kafka 4.4.0 `kafka-storage format -I` [`INITIAL`] (default 4.4-IV2): quorum and bootstrap records.
const KAFKA_4_4_0_INITIAL_CONTROLLERS: &str = "\
        0000000000000000000000f9000000000272bd17b0002000000002000001a233405d44000001a233405d44ffffffffff\
        ffffffffffffffffff000000032a0000000800000003160000000001a233405d2100001e00000208000000050a000000\
        010000c0020000040800000006aa0200000400000001c641567da82c49ad96e08b98fc32bdcd020b434f4e54524f4c4c\
        45520368312385000000000100000000000932f0f1cd599c46c693cf7ddb52e454e8020b434f4e54524f4c4c45521030\
        3a303a303a303a303a303a303a31238500000000010000000000026ba4067ff38441c081747f245521c816020b434f4e\
        54524f4c4c455203683223850000000001000000000000000000000003000000f10000000002ef105b01000000000005\
        000001a233405d71000001a233405d71ffffffffffffffffffffffffffff000000063a000000012e010c00116d657461\
        646174612e76657273696f6e002100005a000002014e010c0021656c696769626c652e6c65616465722e7265706c6963\
        61732e76657273696f6e00010000340000040128010c000e67726f75702e76657273696f6e0001000034000006012801\
        0c000e73686172652e76657273696f6e0002000038000008012c010c001073747265616d732e76657273696f6e000100\
        004000000a0134010c00147472616e73616374696f6e2e76657273696f6e0002000000000000000000090000003f0000\
        000002228734c3002000000000000001a233405d74000001a233405d74ffffffffffffffffffffffffffff000000011a\
        00000008000000040600000000";

/// Kafka 4.4.0 `kafka-storage format -N`: KRaftVersionRecord(1), no VotersRecord, the records.
const KAFKA_4_4_0_NO_INITIAL_CONTROLLERS: &str = "\
        0000000000000000000000570000000002389ab9ef002000000001000001a233406817000001a233406817ffffffffff\
        ffffffffffffffffff000000022a0000000800000003160000000001a2334067e700001e00000208000000050a000000\
        0100000000000000000002000000f10000000002cd047efa000000000005000001a233406868000001a233406868ffff\
        ffffffffffffffffffffffff000000063a000000012e010c00116d657461646174612e76657273696f6e002100005a00\
        0002014e010c0021656c696769626c652e6c65616465722e7265706c696361732e76657273696f6e0001000034000004\
        0128010c000e67726f75702e76657273696f6e00010000340000060128010c000e73686172652e76657273696f6e0002\
        000038000008012c010c001073747265616d732e76657273696f6e000100004000000a0134010c00147472616e736163\
        74696f6e2e76657273696f6e0002000000000000000000080000003f00000000023b06ecb3002000000000000001a233\
        40686b000001a23340686bffffffffffffffffffffffffffff000000011a00000008000000040600000000";

struct Node {
    root: tempfile::TempDir,
    meta: PathBuf,
    data: PathBuf,
    config_path: PathBuf,
}

/// Node 1, a controller with metadata dir `m` and data dir `d`; `quorum` is its
/// `controller.quorum.*` line(s), `extra` more properties.
fn node_with(quorum: &str, extra: &str) -> Node {
    let root = tempfile::tempdir().unwrap();
    let meta = root.path().join("m");
    let data = root.path().join("d");
    let config_path = root.path().join("controller.properties");
    let listeners = if extra.contains("listeners=") {
        String::new()
    } else {
        "listeners=CONTROLLER://localhost:9093\n".to_owned()
    };
    fs::write(
        &config_path,
        format!(
            "process.roles=controller\nnode.id=1\n{quorum}\n{listeners}\
             controller.listener.names=CONTROLLER\nlog.dirs={}\nmetadata.log.dir={}\n{extra}\n",
            data.display(),
            meta.display()
        ),
    )
    .unwrap();
    Node {
        root,
        meta,
        data,
        config_path,
    }
}

fn dynamic_node(extra: &str) -> Node {
    node_with("controller.quorum.bootstrap.servers=localhost:9093", extra)
}

fn static_node() -> Node {
    node_with("controller.quorum.voters=1@localhost:9093", "")
}

fn parse(node: &Node, more: &[&str]) -> Result<FormatArgs, clap::Error> {
    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        format: FormatArgs,
    }
    let config = node.config_path.to_str().unwrap();
    let mut argv = vec!["kraftwerk", "-c", config, "-t", CLUSTER_ID];
    argv.extend_from_slice(more);
    Cli::try_parse_from(argv).map(|c| c.format)
}

fn run(node: &Node, more: &[&str]) -> Result<FormatReport, FormatError> {
    format(&parse(node, more).unwrap().to_options()?)
}

fn snapshot_path(node: &Node) -> PathBuf {
    node.meta
        .join("__cluster_metadata-0")
        .join(BOOTSTRAP_SNAPSHOT_FILE)
}

fn directory_id(dir: &Path) -> Uuid {
    MetaProperties::read(dir)
        .unwrap()
        .unwrap()
        .directory_id
        .unwrap()
}

fn uuid(text: &str) -> Uuid {
    kafka_uuid_from_string(text).unwrap()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// The SnapshotHeader's LastContainedLogTimestamp and the base timestamps of the header, data
/// (the header's when there is no data batch) and footer batches.
fn stamps(bytes: &[u8]) -> (i64, [i64; 3]) {
    let mut out = Vec::new();
    let mut last_contained = 0;
    for (i, batch) in batches(bytes).enumerate() {
        let (_, raw) = batch.unwrap();
        let (header, records) = decode_batch(raw).unwrap();
        out.push(header.base_timestamp);
        if i == 0 {
            let r = &records[0];
            let ControlRecord::SnapshotHeader(h) =
                ControlRecord::decode(r.key.as_deref().unwrap(), r.value.as_deref().unwrap())
                    .unwrap()
            else {
                panic!("no SnapshotHeader first")
            };
            last_contained = h.last_contained_log_timestamp;
        }
    }
    if out.len() == 2 {
        out.insert(1, out[0]);
    }
    (last_contained, [out[0], out[1], out[2]])
}

fn voter(id: i32, host: &str, dir: &str) -> BootstrapVoter {
    BootstrapVoter {
        id,
        directory_id: uuid(dir),
        endpoints: vec![VoterEndpoint {
            listener_name: "CONTROLLER".into(),
            host: host.into(),
            port: 9093,
        }],
        kraft_version: KRaftVersionRange { min: 0, max: 1 },
    }
}

#[test]
fn initial_controllers_write_kafkas_bytes_for_each_layout() {
    let expected_voters = vec![
        voter(1, "h1", D1),
        voter(9, "0:0:0:0:0:0:0:1", D3),
        voter(2, "h2", D2),
    ];
    for (release, kafka, legacy) in [
        ("4.1", KAFKA_4_1_2_INITIAL_CONTROLLERS, true),
        ("4.4", KAFKA_4_4_0_INITIAL_CONTROLLERS, false),
    ] {
        let node = dynamic_node("");
        let report = run(&node, &["-r", release, "--initial-controllers", INITIAL]).unwrap();
        let quorum = report.quorum.clone().unwrap();
        assert_eq!(quorum.kraft_version, 1);
        assert_eq!(quorum.voters.as_ref(), Some(&expected_voters), "{release}");
        let kinds: Vec<DirectoryKind> = report.formatted.iter().map(|d| d.kind).collect();
        assert_eq!(
            kinds,
            [DirectoryKind::Data, DirectoryKind::DynamicMetadataVoter]
        );
        // This node's directory id in the list is the metadata directory's directory.id.
        assert_eq!(directory_id(&node.meta), uuid(D1));
        assert_ne!(directory_id(&node.data), uuid(D1));
        // Kafka's bytes, with Kafka's timestamps.
        let kafka = unhex(kafka);
        let (last_contained, batch_stamps) = stamps(&kafka);
        let records = if legacy {
            vec![]
        } else {
            BootstrapMetadata::read_dir(&node.meta).unwrap().records
        };
        let ours = encode_bootstrap_snapshot(Some(&quorum), &records, last_contained, batch_stamps)
            .unwrap();
        assert_eq!(ours, kafka, "{release}");
        // What we wrote has the same layout (our timestamps).
        let written = fs::read(snapshot_path(&node)).unwrap();
        let (ours_last, ours_stamps) = stamps(&written);
        let again =
            encode_bootstrap_snapshot(Some(&quorum), &records, ours_last, ours_stamps).unwrap();
        assert_eq!(written, again, "{release}");
        assert_eq!(node.data.join(BOOTSTRAP_FILE).exists(), legacy, "{release}");
        assert_eq!(node.meta.join(BOOTSTRAP_FILE).exists(), legacy, "{release}");
        assert!(!node.data.join("__cluster_metadata-0").exists());
        // The start-up side hands the voter set on.
        let loaded = NodeConfig::load(&node.config_path)
            .unwrap()
            .load_formatted()
            .unwrap();
        assert_eq!(loaded.directory_id, uuid(D1));
        assert_eq!(loaded.bootstrap.quorum.as_ref(), Some(&quorum), "{release}");
        assert_eq!(
            loaded.bootstrap.quorum.as_ref().unwrap().voter(1),
            Some(&expected_voters[0])
        );
        assert_eq!(
            loaded.bootstrap.metadata_version,
            MetadataVersion::from_version_string(release, false).unwrap()
        );
    }
}

#[test]
fn a_node_outside_the_initial_controllers_gets_the_snapshot_and_a_fresh_id() {
    for release in ["4.1", "4.4"] {
        let node = dynamic_node("");
        let list = format!("2@h2:9093:{D2},3@h3:9093:{D3}");
        let report = run(&node, &["-r", release, "-I", &list]).unwrap();
        assert_eq!(
            report.formatted[1].kind,
            DirectoryKind::DynamicMetadataNonVoter
        );
        assert_eq!(
            report.formatted[1].kind.description(),
            "dynamic metadata directory"
        );
        let id = directory_id(&node.meta);
        assert!(id != uuid(D2) && id != uuid(D3));
        let quorum = BootstrapMetadata::read_dir(&node.meta)
            .unwrap()
            .quorum
            .unwrap();
        assert_eq!(
            quorum
                .voters
                .unwrap()
                .iter()
                .map(|v| v.id)
                .collect::<Vec<_>>(),
            [2, 3]
        );
    }
}

#[test]
fn standalone_advertises_this_nodes_controller_endpoint() {
    let cases = [
        (
            "listeners=CONTROLLER://ctl.example:9093",
            "ctl.example",
            9093,
        ),
        ("listeners=CONTROLLER://:9093", "localhost", 9093),
        ("listeners=CONTROLLER://127.0.0.1:9095", "127.0.0.1", 9095),
        (
            "listeners=CONTROLLER://:9093\nadvertised.listeners=CONTROLLER://adv.example:19093",
            "adv.example",
            19093,
        ),
    ];
    for (extra, host, port) in cases {
        let node = dynamic_node(extra);
        let report = run(&node, &["--standalone"]).unwrap();
        let voters = report.quorum.unwrap().voters.unwrap();
        assert_eq!(voters.len(), 1, "{extra}");
        let v = &voters[0];
        assert_eq!(v.id, 1);
        assert_eq!(
            v.endpoints,
            [VoterEndpoint {
                listener_name: "CONTROLLER".into(),
                host: host.into(),
                port
            }],
            "{extra}"
        );
        assert_eq!(v.directory_id, directory_id(&node.meta), "{extra}");
        assert!(!is_reserved_directory_id(v.directory_id));
        assert_eq!(
            report.formatted[1].kind,
            DirectoryKind::DynamicMetadataVoter
        );
        assert_eq!(
            report.formatted[1].kind.description(),
            "dynamic metadata voter directory"
        );
    }
    // Kafka builds `1@::1:9093:<id>` for an IPv6 listener and cannot parse it back.
    let node = dynamic_node("listeners=CONTROLLER://[::1]:9093");
    let err = run(&node, &["-s"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Failed to parse port in dynamic voter string."
    );
    assert!(!node.meta.exists());
    // -s is --standalone.
    let node = dynamic_node("");
    assert!(run(&node, &["-s"]).unwrap().quorum.is_some());
}

#[test]
fn no_initial_controllers_writes_kraft_version_1_without_voters() {
    // 4.4: the bootstrap snapshot carries KRaftVersionRecord(1) and no VotersRecord.
    let node = dynamic_node("");
    let report = run(&node, &["--no-initial-controllers"]).unwrap();
    let quorum = report.quorum.clone().unwrap();
    assert_eq!((quorum.kraft_version, quorum.voters.as_ref()), (1, None));
    assert_eq!(report.formatted[1].kind, DirectoryKind::Metadata);
    assert!(report.feature_levels.contains(&(Feature::KraftVersion, 1)));
    let kafka = unhex(KAFKA_4_4_0_NO_INITIAL_CONTROLLERS);
    let (last_contained, batch_stamps) = stamps(&kafka);
    let bootstrap = BootstrapMetadata::read_dir(&node.meta).unwrap();
    assert_eq!(bootstrap.quorum.as_ref(), Some(&quorum));
    let ours = encode_bootstrap_snapshot(
        Some(&quorum),
        &bootstrap.records,
        last_contained,
        batch_stamps,
    )
    .unwrap();
    assert_eq!(ours, kafka);

    // 4.1 (and 4.0 to 4.3): no snapshot; kraft.version 1 is written nowhere.
    let node = dynamic_node("");
    let report = run(&node, &["-N", "-r", "4.1"]).unwrap();
    assert_eq!(report.quorum, None);
    assert!(!node.meta.join("__cluster_metadata-0").exists());
    assert!(node.meta.join(BOOTSTRAP_FILE).exists());
    let loaded = NodeConfig::load(&node.config_path)
        .unwrap()
        .load_formatted()
        .unwrap();
    assert_eq!(loaded.bootstrap.quorum, None);
}

#[test]
fn static_voters_allow_only_no_initial_controllers() {
    let message = "You cannot specify controller.quorum.voters and format the node with \
                   --initial-controllers or --standalone. If you want to use dynamic quorum, \
                   please remove controller.quorum.voters and specify \
                   controller.quorum.bootstrap.servers instead.";
    for more in [&["--standalone"][..], &["-I", INITIAL][..]] {
        let node = static_node();
        let err = run(&node, more).unwrap_err();
        assert!(
            matches!(err, FormatError::StaticVotersWithDynamicOption),
            "{err}"
        );
        assert_eq!(err.to_string(), message);
        assert!(!node.meta.exists());
    }
    // --no-initial-controllers beside static voters formats the static quorum.
    let node = static_node();
    let report = run(&node, &["-N"]).unwrap();
    assert_eq!(report.quorum, None);
    assert!(report.feature_levels.contains(&(Feature::KraftVersion, 0)));
    assert_eq!(
        BootstrapMetadata::read_dir(&node.meta).unwrap().quorum,
        None
    );
}

#[test]
fn bootstrap_servers_alone_need_one_of_the_options() {
    let node = dynamic_node("");
    let err = run(&node, &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Because controller.quorum.voters is not set on this controller, you must specify one of \
         the following: --standalone, --initial-controllers, or --no-initial-controllers."
    );
    assert!(!node.meta.exists());
    // The three options exclude each other, as in kafka-storage (argparse4j's group).
    for more in [
        &["-s", "-N"][..],
        &["-s", "-I", INITIAL][..],
        &["-N", "-I", INITIAL][..],
    ] {
        let e = parse(&node, more).unwrap_err();
        assert_eq!(
            e.kind(),
            clap::error::ErrorKind::ArgumentConflict,
            "{more:?}"
        );
    }
}

#[test]
fn kraft_version_feature_must_agree_with_the_quorum() {
    let node = dynamic_node("");
    for more in [
        &["-s", "-f", "kraft.version=0"][..],
        &["-N", "--feature", "kraft.version=0"][..],
    ] {
        let err = run(&node, more).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the \
             flags --standalone, --initial-controllers, or --no-initial-controllers is used. For \
             dynamic controllers support, try removing the --feature flag for kraft.version.",
            "{more:?}"
        );
    }
    let err = run(&static_node(), &["-f", "kraft.version=1"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the \
         flags --standalone, --initial-controllers, or --no-initial-controllers is used. For \
         dynamic controllers support, try using one of --standalone, --initial-controllers, or \
         --no-initial-controllers and removing controller.quorum.voters."
    );
    // kraft.version=1 explicitly is the default of a dynamic quorum; 2 is unknown.
    assert!(run(&node, &["-s", "-f", "kraft.version=1"]).is_ok());
    let node = dynamic_node("");
    let err = run(&node, &["-s", "-f", "kraft.version=2"]).unwrap_err();
    assert!(err.to_string().contains("kraft.version"), "{err}");
    assert!(!node.meta.exists());
}

#[test]
fn kraft_version_1_has_no_metadata_version_dependency() {
    // Kafka 4.1.2 and 4.4.0 both format `--standalone -r 3.3` (kraft.version 1 at 3.3-IV3).
    let node = dynamic_node("");
    let report = run(&node, &["-s", "-r", "3.3"]).unwrap();
    assert_eq!(report.metadata_version, MetadataVersion::V3_3_IV3);
    assert_eq!(report.quorum.unwrap().kraft_version, 1);
    assert!(snapshot_path(&node).exists());
    assert!(node.meta.join(BOOTSTRAP_FILE).exists());
}

#[test]
fn initial_controller_errors_are_javas_and_write_nothing() {
    for (list, message) in [
        ("", "No voters given."),
        (
            "1@h:1:bad",
            "Failed to parse directory ID in dynamic voter string.",
        ),
        (
            "1@h:70000:xkFWfagsSa2W4IuY_DK9zQ",
            "Invalid port 70000 in dynamic voter string.",
        ),
    ] {
        let node = dynamic_node("");
        let err = run(&node, &["-I", list]).unwrap_err();
        assert_eq!(err.to_string(), message);
        assert!(!node.meta.exists());
    }
    // A reserved directory id: Kafka writes it (and then cannot load the directory); we refuse.
    let node = dynamic_node("");
    let err = run(&node, &["-I", "1@h:1:AAAAAAAAAAAAAAAAAAAAAA"]).unwrap_err();
    assert!(
        matches!(err, FormatError::ReservedDirectoryId { node_id: 1, .. }),
        "{err}"
    );
    assert!(!node.meta.exists());
}

#[test]
fn ignore_formatted_keeps_the_formatted_metadata_dir_and_refuses_a_duplicate_id() {
    let node = dynamic_node("");
    run(&node, &["-I", INITIAL]).unwrap();
    // The metadata directory is formatted: it is skipped, its id kept, the data dir formatted.
    fs::remove_dir_all(&node.data).unwrap();
    let report = run(&node, &["-g", "-I", INITIAL]).unwrap();
    assert_eq!(report.formatted.len(), 1);
    assert_eq!(report.formatted[0].kind, DirectoryKind::Data);
    assert_eq!(directory_id(&node.meta), uuid(D1));
    // A data directory that already carries the voter's directory id.
    fs::remove_dir_all(&node.meta).unwrap();
    MetaProperties::v1(CLUSTER_ID, 1, uuid(D1))
        .write(&node.data)
        .unwrap();
    let err = run(&node, &["-g", "-I", INITIAL]).unwrap_err();
    assert!(err.to_string().contains("Duplicate directory ID"), "{err}");
    assert!(!node.meta.exists());
    drop(node.root);
}
