//! A node on a failing disk (case C10): the product's node type ([`ServerNode`]: the segment
//! log and the `quorum-state` file) over [`FaultyFs`], driven as the node thread drives it.
//! A storage error stops the node with a message naming the file and the offsets; what was
//! not flushed is never answered; a restart on a repaired disk recovers what was flushed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::BrokerRegistrationRequest;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_controller::{Controller, ControllerConfig};
use kraftwerk_log::fs::faulty::{flip_byte, Fault, FaultyFs, EIO};
use kraftwerk_log::{LogConfig, METADATA_PARTITION_DIR};
use kraftwerk_raft::{Endpoint, RaftConfig, RaftCore, ReplicatedLog};
use kraftwerk_records::metadata::{ApiMessageAndVersion, FeatureLevelRecord};
use kraftwerk_records::metadata_version::{
    default_feature_levels, MetadataVersion, METADATA_VERSION_FEATURE_NAME,
};
use uuid::Uuid;

use super::*;

const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";

fn bootstrap(mv: MetadataVersion) -> Vec<ApiMessageAndVersion> {
    let level = |name: &str, feature_level: i16| {
        ApiMessageAndVersion::new(
            FeatureLevelRecord {
                name: name.to_owned(),
                feature_level,
                ..Default::default()
            },
            0,
        )
    };
    let mut records = vec![level(METADATA_VERSION_FEATURE_NAME, mv.feature_level())];
    for (feature, l) in default_feature_levels(mv) {
        records.push(level(feature.name(), l));
    }
    records
}

/// A single-voter controller (node 1) on `root` over `fs`.
fn open(root: &Path, fs: &FaultyFs) -> Result<ServerNode, NodeError> {
    let fs: Arc<dyn kraftwerk_log::fs::Fs> = Arc::new(fs.clone());
    let log = SegmentLog::open_with_fs(root, LogConfig::default(), Arc::clone(&fs))
        .unwrap_or_else(|e| panic!("open the log: {e}"));
    let store = FileQuorumStateStore::with_fs(log.partition_dir().join("quorum-state"), fs);
    let voters = BTreeMap::from([(
        1,
        Endpoint {
            host: "127.0.0.1".into(),
            port: 9093,
        },
    )]);
    let raft = RaftConfig::new(
        1,
        CLUSTER_ID,
        Uuid::from_u64_pair(1, 1),
        voters,
        "CONTROLLER",
    );
    let core = RaftCore::new(raft, log, store, 7, 0)?;
    let mut config = ControllerConfig::new(1, CLUSTER_ID, bootstrap(MetadataVersion::V4_1_IV1));
    config.rng_seed = 7;
    Node::new(core, Controller::new(config))
}

/// Polls until the controller is active and everything it wrote is committed (a single voter
/// elects itself and writes the bootstrap records).
fn run_until_active(node: &mut ServerNode, now: &mut u64) {
    for _ in 0..400 {
        node.poll(*now).unwrap();
        node.take_outputs();
        let status = node.status();
        if status.active && status.high_watermark == Some(status.log_end_offset) {
            return;
        }
        *now += 50;
    }
    panic!("never became active: {:?}", node.status());
}

fn registration(id: i32) -> ControllerRequest {
    let feature = |name: &'static str, min: i16, max: i16| {
        Feature::default()
            .with_name(StrBytes::from_static_str(name))
            .with_min_supported_version(min)
            .with_max_supported_version(max)
    };
    ControllerRequest::BrokerRegistration(
        BrokerRegistrationRequest::default()
            .with_broker_id(id.into())
            .with_cluster_id(StrBytes::from_static_str(CLUSTER_ID))
            .with_incarnation_id(Uuid::from_u64_pair(9, id as u64))
            .with_listeners(vec![Listener::default()
                .with_name(StrBytes::from_static_str("PLAINTEXT"))
                .with_host(StrBytes::from_static_str("localhost"))
                .with_port(9092)
                .with_security_protocol(0)])
            .with_features(vec![
                feature("metadata.version", 7, 27),
                feature("kraft.version", 0, 1),
                feature("group.version", 0, 1),
                feature("transaction.version", 0, 2),
                feature("eligible.leader.replicas.version", 0, 1),
                feature("share.version", 0, 1),
            ])
            .with_log_dirs(vec![Uuid::from_u64_pair(0x1000, id as u64)])
            .with_previous_broker_epoch(-1),
    )
}

/// Sends a BrokerRegistration and polls until it is answered (`Ok(Some)`), the node stops
/// (`Err`), or time runs out (`Ok(None)`).
fn register(
    node: &mut ServerNode,
    now: &mut u64,
    id: i32,
) -> Result<Option<ControllerResponse>, NodeError> {
    let token = RequestToken(id as u64);
    let ctx = RequestContext {
        api_version: 4,
        now_ms: *now,
        listener_name: "CONTROLLER".to_owned(),
        ..Default::default()
    };
    let input = NodeInput::Controller {
        token,
        ctx,
        request: registration(id),
    };
    let mut result = node.handle(*now, input);
    for _ in 0..100 {
        let answered = node.take_outputs().into_iter().find_map(|o| match o {
            NodeOutput::Controller { token: t, response } if t == token => Some(response),
            _ => None,
        });
        if let Some(response) = answered {
            return Ok(Some(response));
        }
        result?;
        *now += 10;
        result = node.poll(*now);
    }
    Ok(None)
}

fn broker_epoch(response: &ControllerResponse) -> i64 {
    let ControllerResponse::BrokerRegistration(r) = response else {
        panic!("{response:?}")
    };
    assert_eq!(r.error_code, 0, "{r:?}");
    r.broker_epoch
}

fn segment(root: &Path) -> PathBuf {
    root.join(METADATA_PARTITION_DIR)
        .join("00000000000000000000.log")
}

#[test]
fn a_node_whose_fsync_fails_stops_naming_the_segment_and_never_answers_the_write() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = FaultyFs::new();
    let mut now = 1_000;
    let mut node = open(tmp.path(), &fs).unwrap();
    run_until_active(&mut node, &mut now);
    let before = node.status();
    let flushed = before.log_end_offset;

    fs.inject(Fault::sync("00000000000000000000.log", EIO));
    let err = register(&mut node, &mut now, 1)
        .map(|answer| format!("answered: {answer:?}"))
        .expect_err("the node must stop");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "{} (fsync at position",
            segment(tmp.path()).display()
        )) && text.contains(&format!("log offsets from {flushed} may not be on disk"))
            && text.contains("os error 5"),
        "{text}"
    );
    let after = node.status();
    assert_eq!(
        after.high_watermark, before.high_watermark,
        "nothing unflushed was committed"
    );
    assert_eq!(node.raft().log().flushed_end_offset(), flushed);

    // The node restarts (power lost, disk repaired): the registration is gone, as it was never
    // acknowledged, and the broker registers again.
    drop(node);
    fs.crash();
    fs.clear_faults();
    let mut node = open(tmp.path(), &fs).unwrap();
    assert!(node.status().log_end_offset >= flushed);
    run_until_active(&mut node, &mut now);
    let response = register(&mut node, &mut now, 1).unwrap().expect("answered");
    assert!(broker_epoch(&response) > flushed);
}

#[test]
fn a_node_restarted_on_a_segment_with_a_flipped_byte_stops_naming_file_and_position() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = FaultyFs::new();
    let mut now = 1_000;
    let mut node = open(tmp.path(), &fs).unwrap();
    run_until_active(&mut node, &mut now);
    for id in 1..=3 {
        register(&mut node, &mut now, id)
            .unwrap()
            .expect("answered");
    }
    let (log, _) = node.into_parts();
    log.close().unwrap();

    // Damage the second batch (committed, replayed at every start) in the middle.
    let path = segment(tmp.path());
    let bytes = std::fs::read(&path).unwrap();
    let mut batches = kraftwerk_records::batch::batches(&bytes);
    let (first, _) = batches.next().unwrap().unwrap();
    let (second, whole) = batches.next().unwrap().unwrap();
    let position = first.size_bytes() as u64;
    flip_byte(&path, position + whole.len() as u64 / 2);

    let err = match open(tmp.path(), &fs) {
        Err(e) => e,
        Ok(mut node) => {
            let mut stopped = None;
            for _ in 0..100 {
                if let Err(e) = node.poll(now) {
                    stopped = Some(e);
                    break;
                }
                now += 50;
            }
            stopped.expect("a node replaying a corrupt batch must stop")
        }
    };
    let text = err.to_string();
    assert!(
        text.contains(&format!("in {} at position {position}", path.display()))
            && text.contains(&format!("offset {}", second.base_offset)),
        "{text}"
    );
}
