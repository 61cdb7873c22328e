//! The node keeps serving after a request it refuses or whose handler fails (issue 9): a
//! single-voter node, driven without I/O, answers each such request with its error and the
//! next request as usual.

use std::collections::BTreeMap;

use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::BrokerRegistrationRequest;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_controller::{
    Controller, ControllerConfig, ControllerRequest, ControllerResponse, RequestContext,
};
use kraftwerk_raft::config::{Endpoint, RaftConfig};
use kraftwerk_raft::testing::{MemLog, MemQuorumStateStore};
use kraftwerk_raft::{RaftCore, ReplicatedLog};
use kraftwerk_records::metadata::{ApiMessageAndVersion, FeatureLevelRecord};
use kraftwerk_records::metadata_version::{MetadataVersion, METADATA_VERSION_FEATURE_NAME};
use uuid::Uuid;

use crate::{Node, NodeInput, NodeOutput, RequestToken};

const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";

struct Harness {
    node: Node<MemLog, MemQuorumStateStore>,
    now_ms: u64,
    next_token: u64,
}

impl Harness {
    /// A single voter that has won its election and activated its controller.
    fn leader() -> Self {
        Self::leader_with_directory(Uuid::nil())
    }

    /// A single static voter whose metadata directory has id `dir`, activated.
    fn leader_with_directory(dir: Uuid) -> Self {
        let mut harness = Self::started_with_directory(dir);
        assert!(
            !harness.node.status().caught_up,
            "nothing replayed before the first poll"
        );
        while !harness.node.controller().is_active() {
            harness.advance(100);
            assert!(
                harness.now_ms < 60_000,
                "the single voter never became active"
            );
        }
        harness
    }

    /// The single voter of a dynamic quorum (kraft.version 1, `format --standalone`'s bootstrap
    /// checkpoint) that has activated its controller.
    fn dynamic_leader() -> Self {
        use kraftwerk_raft::{OffsetAndEpoch, VoterNode, VoterSet};
        use kraftwerk_records::control::{control_batch, ControlRecord};
        let dir = Uuid::from_u64_pair(1, 1);
        let set = VoterSet::from_nodes([VoterNode {
            key: kraftwerk_raft::ReplicaKey::new(1, dir),
            endpoints: BTreeMap::from([(
                "CONTROLLER".to_owned(),
                Endpoint {
                    host: "127.0.0.1".into(),
                    port: 9093,
                },
            )]),
            supported_kraft_versions: (0, 1),
        }])
        .unwrap();
        let mut log = MemLog::new();
        let mut sink = log.create_snapshot(OffsetAndEpoch::new(0, 0)).unwrap();
        sink.append(&control_batch(
            0,
            0,
            0,
            &[
                ControlRecord::snapshot_header(0),
                ControlRecord::kraft_version(1),
                ControlRecord::Voters(set.to_record()),
            ],
        ))
        .unwrap();
        sink.append(&control_batch(3, 0, 0, &[ControlRecord::snapshot_footer()]))
            .unwrap();
        sink.finish().unwrap();
        log.register_snapshot(OffsetAndEpoch::new(0, 0)).unwrap();
        let mut raft = RaftConfig::new(1, CLUSTER_ID, dir, BTreeMap::new(), "CONTROLLER");
        raft.append_linger_ms = 0;
        let core = RaftCore::new(raft, log, MemQuorumStateStore::new(), 7, 0).unwrap();
        let mut harness = Self::with_core(core);
        while !harness.node.controller().is_active() {
            harness.advance(100);
            assert!(harness.now_ms < 60_000, "never active");
        }
        harness
    }

    /// The single voter, started but not polled yet (no high watermark known).
    fn started() -> Self {
        Self::started_with_directory(Uuid::nil())
    }

    fn started_with_directory(dir: Uuid) -> Self {
        let voters = BTreeMap::from([(
            1,
            Endpoint {
                host: "127.0.0.1".into(),
                port: 9093,
            },
        )]);
        let mut raft = RaftConfig::new(1, CLUSTER_ID, dir, voters, "CONTROLLER");
        raft.append_linger_ms = 0;
        let core = RaftCore::new(raft, MemLog::new(), MemQuorumStateStore::new(), 7, 0).unwrap();
        Self::with_core(core)
    }

    fn with_core(core: RaftCore<MemLog, MemQuorumStateStore>) -> Self {
        let mv = MetadataVersion::V4_1_IV1;
        let bootstrap = vec![ApiMessageAndVersion::new(
            FeatureLevelRecord {
                name: METADATA_VERSION_FEATURE_NAME.to_owned(),
                feature_level: mv.feature_level(),
                ..Default::default()
            },
            0,
        )];
        let controller = Controller::new(ControllerConfig::new(1, CLUSTER_ID, bootstrap));
        Harness {
            node: Node::new(core, controller).unwrap(),
            now_ms: 0,
            next_token: 0,
        }
    }

    fn advance(&mut self, ms: u64) {
        self.now_ms += ms;
        self.node.poll(self.now_ms).unwrap();
        self.node.take_outputs();
    }

    /// Sends a request and runs the node until its answer comes out.
    fn request(&mut self, request: ControllerRequest) -> ControllerResponse {
        let ctx = RequestContext {
            api_version: 4,
            listener_name: "CONTROLLER".to_owned(),
            ..Default::default()
        };
        self.request_with(ctx, request)
    }

    fn request_with(
        &mut self,
        ctx: RequestContext,
        request: ControllerRequest,
    ) -> ControllerResponse {
        let token = RequestToken(self.next_token);
        self.next_token += 1;
        let input = NodeInput::Controller {
            token,
            ctx,
            request,
        };
        self.node.handle(self.now_ms, input).unwrap();
        for _ in 0..100 {
            for output in self.node.take_outputs() {
                if let NodeOutput::Controller { token: t, response } = output {
                    assert_eq!(t, token);
                    return response;
                }
            }
            self.now_ms += 10;
            self.node.poll(self.now_ms).unwrap();
        }
        panic!("no answer to request {token:?}");
    }

    fn register(&mut self, id: i32, host: &str) -> i16 {
        self.register_listeners(id, &[("PLAINTEXT".to_owned(), host.to_owned())])
    }

    /// Registers broker `id` with `(name, host)` listeners; returns the error code.
    fn register_listeners(&mut self, id: i32, listeners: &[(String, String)]) -> i16 {
        let listeners = listeners
            .iter()
            .map(|(name, host)| {
                Listener::default()
                    .with_name(StrBytes::from_string(name.clone()))
                    .with_host(StrBytes::from_string(host.clone()))
                    .with_port(9092)
            })
            .collect();
        let request = BrokerRegistrationRequest::default()
            .with_broker_id(id.into())
            .with_cluster_id(StrBytes::from_static_str(CLUSTER_ID))
            .with_incarnation_id(Uuid::from_u64_pair(id as u64, 1))
            .with_listeners(listeners)
            .with_features(vec![Feature::default()
                .with_name(StrBytes::from_static_str("metadata.version"))
                .with_min_supported_version(7)
                .with_max_supported_version(27)])
            .with_log_dirs(vec![Uuid::from_u64_pair(0x1000 + id as u64, 7)]);
        let ControllerResponse::BrokerRegistration(r) =
            self.request(ControllerRequest::BrokerRegistration(request))
        else {
            panic!("wrong response")
        };
        r.error_code
    }
}

#[test]
fn caught_up_only_once_replay_reached_a_known_high_watermark() {
    // KAFKA-19964: ApiVersions reports finalized features only from this point on.
    let mut harness = Harness::started();
    assert!(
        !harness.node.status().caught_up,
        "no replay before the first poll"
    );
    while harness.node.raft().high_watermark().is_none() {
        harness.advance(100);
        assert!(harness.now_ms < 60_000, "no high watermark");
    }
    harness.advance(1);
    let status = harness.node.status();
    assert!(status.caught_up);
    assert!(status.replayed_end_offset >= status.high_watermark.unwrap());
}

#[test]
fn a_refused_request_leaves_the_node_serving() {
    let mut h = Harness::leader();
    let end = h.node.raft().log().end_offset();
    // A 40,000-byte host: INVALID_REQUEST, nothing appended.
    assert_eq!(h.register(1, &"h".repeat(40_000)), 42);
    assert_eq!(h.node.raft().log().end_offset(), end);
    assert_eq!(h.register(1, "localhost"), 0);
    assert!(h.node.controller().image().cluster.broker(1).is_some());
}

#[test]
fn an_oversized_result_is_refused_and_the_node_keeps_serving() {
    let mut h = Harness::leader();
    let end = h.node.raft().log().end_offset();
    // Every string within Kafka's limit, but the RegisterBrokerRecord (300 listeners of 30,000
    // bytes, about 9 MB) does not fit one 8 MiB batch: RECORD_LIST_TOO_LARGE, nothing appended.
    let listeners: Vec<(String, String)> = (0..300)
        .map(|i| (format!("L{i}"), "h".repeat(30_000)))
        .collect();
    assert_eq!(h.register_listeners(1, &listeners), 18);
    assert_eq!(h.node.raft().log().end_offset(), end);
    assert!(h.node.controller().image().cluster.broker(1).is_none());
    assert_eq!(h.register(1, "localhost"), 0);
    assert!(h.node.controller().image().cluster.broker(1).is_some());
}

#[test]
fn a_panicking_handler_leaves_the_node_serving() {
    let mut h = Harness::leader();
    let end = h.node.raft().log().end_offset();
    h.node.controller.panic_in_next_handler();
    assert_eq!(h.register(1, "localhost"), -1);
    assert_eq!(h.node.raft().log().end_offset(), end);
    assert_eq!(h.node.controller().handler_panics(), 1);
    assert!(h.node.controller().image().cluster.broker(1).is_none());
    assert_eq!(h.register(1, "localhost"), 0);
    assert!(h.node.controller().image().cluster.broker(1).is_some());
    assert!(h.node.controller().is_active());
}

fn remove_voter(h: &mut Harness, cluster_id: &str, id: i32, dir: Uuid) -> (i16, Option<String>) {
    let request = kafka_protocol::messages::RemoveRaftVoterRequest::default()
        .with_cluster_id(Some(StrBytes::from_string(cluster_id.to_owned())))
        .with_voter_id(id)
        .with_voter_directory_id(dir);
    let ControllerResponse::RemoveRaftVoter(r) =
        h.request(ControllerRequest::RemoveRaftVoter(request))
    else {
        panic!("wrong response")
    };
    (r.error_code, r.error_message.map(|m| m.to_string()))
}

#[test]
fn the_finalized_kraft_version_and_remove_raft_voter_follow_the_raft_layer() {
    // Static quorum: kraft.version 0, the controller answers UNSUPPORTED_VERSION as Kafka.
    let mut h = Harness::leader();
    assert_eq!(h.node.controller().config().kraft_version, 0);
    let (code, _) = remove_voter(&mut h, CLUSTER_ID, 1, Uuid::from_u64_pair(1, 1));
    assert_eq!(code, 35, "UNSUPPORTED_VERSION");
    // Dynamic quorum: kraft.version 1 from the bootstrap checkpoint reaches the controller, and
    // RemoveRaftVoter is the Raft layer's: the last voter cannot be removed.
    let mut h = Harness::dynamic_leader();
    assert_eq!(h.node.controller().config().kraft_version, 1);
    assert_eq!(h.node.controller().config().quorum_node_ids, vec![1]);
    let (code, _) = remove_voter(&mut h, "other-cluster", 1, Uuid::from_u64_pair(1, 1));
    assert_eq!(code, 104, "INCONSISTENT_CLUSTER_ID");
    let (code, message) = remove_voter(&mut h, CLUSTER_ID, 1, Uuid::from_u64_pair(1, 1));
    assert_eq!(code, 127, "VOTER_NOT_FOUND: {message:?}");
    assert!(h.node.controller().is_active(), "still serving");
}

#[test]
fn add_raft_voter_at_kraft_version_1_is_checked_by_the_raft_layer() {
    use kafka_protocol::messages::add_raft_voter_request::Listener as VoterListener;
    let mut h = Harness::dynamic_leader();
    let add = |kraft_versions| {
        (
            RequestContext {
                api_version: 1,
                listener_name: "CONTROLLER".to_owned(),
                new_voter_kraft_versions: kraft_versions,
                ..Default::default()
            },
            ControllerRequest::AddRaftVoter(
                kafka_protocol::messages::AddRaftVoterRequest::default()
                    .with_cluster_id(Some(StrBytes::from_static_str(CLUSTER_ID)))
                    .with_voter_id(2)
                    .with_voter_directory_id(Uuid::from_u64_pair(2, 2))
                    .with_listeners(vec![VoterListener::default()
                        .with_name(StrBytes::from_static_str("CONTROLLER"))
                        .with_host(StrBytes::from_static_str("127.0.0.2"))
                        .with_port(9093)])
                    .with_ack_when_committed(true),
            ),
        )
    };
    let code = |h: &mut Harness, versions| {
        let (ctx, request) = add(versions);
        let ControllerResponse::AddRaftVoter(r) = h.request_with(ctx, request) else {
            panic!("wrong response")
        };
        r.error_code
    };
    // Its ApiVersions could not be read (or lacked kraft.version 1): INVALID_REQUEST.
    assert_eq!(code(&mut h, None), 42);
    assert_eq!(code(&mut h, Some((0, 0))), 42);
    // It never fetched from the leader: not caught up, REQUEST_TIMED_OUT.
    assert_eq!(code(&mut h, Some((0, 1))), 7);
    assert_eq!(h.node.raft().voter_set().len(), 1, "nothing added");
}

/// UpdateFeatures kraft.version=1 on a static quorum (Kafka 4.1+): checked by the Raft layer,
/// then written as one control batch before the answer's NoOpRecord; validate_only writes
/// nothing; without a directory id the upgrade is refused as Java refuses it.
#[test]
fn update_features_upgrades_a_static_quorum_to_kraft_version_1() {
    use kafka_protocol::messages::update_features_request::FeatureUpdateKey;
    use kafka_protocol::messages::UpdateFeaturesRequest;
    let upgrade = |validate_only| {
        ControllerRequest::UpdateFeatures(
            UpdateFeaturesRequest::default()
                .with_validate_only(validate_only)
                .with_feature_updates(vec![FeatureUpdateKey::default()
                    .with_feature(StrBytes::from_static_str("kraft.version"))
                    .with_max_version_level(1)
                    .with_upgrade_type(1)]),
        )
    };
    let answer = |h: &mut Harness, validate_only| {
        let ctx = RequestContext {
            api_version: 1,
            listener_name: "CONTROLLER".to_owned(),
            ..Default::default()
        };
        let ControllerResponse::UpdateFeatures(r) = h.request_with(ctx, upgrade(validate_only))
        else {
            panic!("wrong response")
        };
        (r.error_code, r.error_message.map(|m| m.to_string()))
    };
    let dir = Uuid::from_u64_pair(1, 1);
    let mut h = Harness::leader_with_directory(dir);
    assert!(
        !h.node
            .status()
            .finalized_features
            .iter()
            .any(|(name, _)| name == "kraft.version"),
        "kraft.version 0 is not listed, as in Kafka"
    );
    assert_eq!(answer(&mut h, true), (0, None));
    assert_eq!(
        h.node.raft().kraft_version(),
        0,
        "validate_only writes nothing"
    );
    assert_eq!(answer(&mut h, false), (0, None));
    assert_eq!(h.node.raft().kraft_version(), 1);
    assert_eq!(
        h.node.controller().config().kraft_version,
        1,
        "finalized for ApiVersions"
    );
    assert!(h
        .node
        .raft()
        .voter_set()
        .is_voter(kraftwerk_raft::ReplicaKey::new(1, dir)));
    assert!(
        !h.node.raft().has_uncommitted_voter_change(),
        "answered once committed"
    );
    assert_eq!(
        answer(&mut h, false),
        (0, None),
        "already at 1: nothing to do"
    );

    // Kafka needs every voter's directory id.
    let mut h = Harness::leader();
    let (code, message) = answer(&mut h, false);
    assert_eq!(code, -1, "UNKNOWN_SERVER_ERROR: {message:?}");
    assert!(
        message
            .as_deref()
            .unwrap_or("")
            .contains("Directory id must be known"),
        "{message:?}"
    );
    assert_eq!(h.node.raft().kraft_version(), 0);
    assert!(h.node.controller().is_active(), "still serving");
}

#[test]
fn the_status_carries_what_kafkas_controller_metrics_need() {
    let mut h = Harness::leader();
    assert_eq!(h.register(1, "localhost"), 0);
    let epoch = h.node.controller().image().cluster.broker(1).unwrap().epoch;
    h.node.note_broker_contact(1, epoch, h.now_ms);
    let now = h.now_ms;
    let s = h.node.status();
    assert_eq!(s.role, kraftwerk_raft::RoleKind::Leader);
    assert_eq!(s.voted_id, Some(1), "a leader voted for itself");
    assert_eq!((s.voter_count, s.is_voter), (1, true));
    assert_eq!(s.unknown_voter_connections, 0);
    assert_eq!(s.new_active_controllers, 1, "one leader, one epoch");
    // The leader's own appends (bootstrap, registration) committed: commit latency sampled.
    assert!(!s.sensors.commit_latency_ms.avg(now).is_nan());
    assert!(s.sensors.append_records.sum(now) >= 2.0);
    // The leaderless start ended in this node's election.
    assert!(!s.sensors.election_latency_ms.max(now).is_nan());
    assert_eq!(
        s.sensors.fetch_records.sum(now),
        0.0,
        "a leader fetches nothing"
    );
    // A registered broker is fenced until its first heartbeat asks to be unfenced.
    assert_eq!((s.image.fenced_brokers, s.image.active_brokers), (1, 0));
    assert_eq!(s.brokers.len(), 1);
    assert!(s.brokers[0].fenced);
    assert_eq!(s.brokers[0].last_contact_ms, Some(now));
    assert_eq!(s.image.topics, 0);
    assert!(s.last_written_offset >= s.replayed_end_offset - 1);
    assert!(s.last_applied_timestamp_ms as u64 <= now);
    assert_eq!(s.metadata_errors, 0);
}
