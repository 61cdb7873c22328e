//! Test support: a minimal stand-in for the node (a log with offsets, commit, leader changes)
//! and request builders with realistic broker values.

use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{ApiMessageAndVersion, FeatureLevelRecord};
use kraftwerk_records::metadata_version::{
    default_feature_levels, MetadataVersion, METADATA_VERSION_FEATURE_NAME,
};
use uuid::Uuid;

use crate::controller::{
    Controller, ControllerConfig, ControllerRequest, ControllerResponse, ControllerResult,
    RequestContext, MAX_RECORDS_PER_BATCH,
};
use crate::image::MetadataImage;

/// The cluster id used by tests.
pub const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";

/// `bootstrap.checkpoint` content for `mv`: metadata.version, then the default features.
pub fn bootstrap_records(mv: MetadataVersion) -> Vec<ApiMessageAndVersion> {
    let mut records = vec![ApiMessageAndVersion::new(
        FeatureLevelRecord {
            name: METADATA_VERSION_FEATURE_NAME.to_owned(),
            feature_level: mv.feature_level(),
            ..Default::default()
        },
        0,
    )];
    for (feature, level) in default_feature_levels(mv) {
        records.push(ApiMessageAndVersion::new(
            FeatureLevelRecord {
                name: feature.name().to_owned(),
                feature_level: level,
                ..Default::default()
            },
            0,
        ));
    }
    records
}

/// A controller configuration for tests at `mv`.
pub fn config(mv: MetadataVersion) -> ControllerConfig {
    let mut config = ControllerConfig::new(3000, CLUSTER_ID, bootstrap_records(mv));
    config.rng_seed = 42;
    config
}

/// A node with a log: appends results, replays them, commits on demand.
pub struct TestNode {
    /// The controller under test.
    pub controller: Controller,
    /// Every record appended, with its offset (offset = index + 1 - 1: offsets start at 0).
    pub log: Vec<(i64, ApiMessageAndVersion)>,
    /// Number of log entries replayed as committed.
    pub committed: usize,
    /// Current time.
    pub now_ms: u64,
    /// Raft epoch.
    pub epoch: i32,
}

impl TestNode {
    /// A standby node.
    pub fn new(config: ControllerConfig) -> Self {
        TestNode {
            controller: Controller::new(config),
            log: Vec::new(),
            committed: 0,
            now_ms: 1_000,
            epoch: 0,
        }
    }

    /// An active node after bootstrap at `mv`, everything committed.
    pub fn active(mv: MetadataVersion) -> Self {
        let mut node = TestNode::new(config(mv));
        node.become_leader();
        node
    }

    /// Next offset to assign.
    pub fn next_offset(&self) -> i64 {
        self.log.len() as i64
    }

    /// Activates the controller at the next epoch, runs its internal writes, commits them.
    pub fn become_leader(&mut self) {
        self.epoch += 1;
        self.controller.activate(self.epoch, self.now_ms);
        self.poll_until_idle();
        self.commit();
    }

    /// Appends a result's records (respecting batch limits) and replays them as uncommitted.
    pub fn append<R>(&mut self, result: &ControllerResult<R>) -> Vec<(i64, ApiMessageAndVersion)> {
        if result.atomic {
            assert!(result.records.len() <= MAX_RECORDS_PER_BATCH);
        }
        let mut appended = Vec::new();
        for record in &result.records {
            // Every record the controller writes must serialize at the version it chose.
            let bytes = record
                .encode()
                .unwrap_or_else(|e| panic!("cannot encode {record:?}: {e}"));
            // … and read back to itself (compared as bytes: a NaN quota is not equal to itself).
            let decoded = ApiMessageAndVersion::decode(&bytes).expect("decode");
            assert_eq!(decoded.encode().expect("re-encode"), bytes, "{record:?}");
            let offset = self.next_offset();
            self.log.push((offset, record.clone()));
            appended.push((offset, record.clone()));
        }
        for batch in appended.chunks(MAX_RECORDS_PER_BATCH) {
            self.controller
                .replay_uncommitted(batch)
                .expect("replay of our own records");
        }
        appended
    }

    /// Replays everything appended so far as committed (one batch per call).
    pub fn commit(&mut self) {
        if self.committed < self.log.len() {
            let batch: Vec<_> = self.log[self.committed..].to_vec();
            self.controller
                .replay_committed(&batch)
                .expect("commit replay");
            self.committed = self.log.len();
        }
    }

    /// The context of a request arriving now.
    pub fn ctx(&self, api_version: i16) -> RequestContext {
        RequestContext {
            api_version,
            now_ms: self.now_ms,
            received_ms: self.now_ms,
            next_offset: self.next_offset(),
            leader_id: 3000,
            leader_epoch: self.epoch,
            client_id: None,
            listener_name: "CONTROLLER".to_owned(),
            ..Default::default()
        }
    }

    /// Handles a request, appends its records; returns the response and the records.
    pub fn request(
        &mut self,
        api_version: i16,
        request: ControllerRequest,
    ) -> (ControllerResponse, Vec<ApiMessageAndVersion>) {
        let ctx = self.ctx(api_version);
        let result = self.controller.handle(&ctx, &request);
        self.append(&result);
        (result.response, result.records)
    }

    /// [`TestNode::request`] under the name the admin-API tests use.
    pub fn admin(
        &mut self,
        api_version: i16,
        request: ControllerRequest,
    ) -> (ControllerResponse, Vec<ApiMessageAndVersion>) {
        self.request(api_version, request)
    }

    /// Runs `poll` until idle; returns the records written.
    pub fn poll_until_idle(&mut self) -> Vec<ApiMessageAndVersion> {
        let mut written = Vec::new();
        while let Some(result) = self.controller.poll(self.now_ms, self.next_offset()) {
            self.append(&result);
            written.extend(result.records);
            assert!(written.len() < 1_000_000, "poll does not settle");
        }
        written
    }

    /// The latest image.
    pub fn latest(&self) -> &MetadataImage {
        self.controller.latest()
    }

    /// Registers broker `id` (v4, one directory at MV ≥ 3.7-IV2); returns its epoch.
    pub fn register(&mut self, id: i32) -> i64 {
        let (response, _) = self.request(
            4,
            ControllerRequest::BrokerRegistration(registration(
                id,
                Uuid::from_u64_pair(id as u64, 1),
            )),
        );
        let ControllerResponse::BrokerRegistration(r) = response else {
            panic!("wrong response")
        };
        assert_eq!(r.error_code, 0, "registration of {id} failed");
        r.broker_epoch
    }

    /// Sends a heartbeat.
    pub fn heartbeat(
        &mut self,
        id: i32,
        epoch: i64,
        want_fence: bool,
        want_shut_down: bool,
        offset: i64,
    ) -> BrokerHeartbeatResponse {
        let request = BrokerHeartbeatRequest::default()
            .with_broker_id(id.into())
            .with_broker_epoch(epoch)
            .with_current_metadata_offset(offset)
            .with_want_fence(want_fence)
            .with_want_shut_down(want_shut_down);
        let (response, _) = self.request(1, ControllerRequest::BrokerHeartbeat(request));
        let ControllerResponse::BrokerHeartbeat(r) = response else {
            panic!("wrong response")
        };
        r
    }

    /// Registers and unfences brokers `ids` (all committed); returns their epochs.
    pub fn add_brokers(&mut self, ids: &[i32]) -> Vec<i64> {
        let epochs: Vec<i64> = ids.iter().map(|id| self.register(*id)).collect();
        self.commit();
        for (id, epoch) in ids.iter().zip(&epochs) {
            let offset = self.next_offset();
            let r = self.heartbeat(*id, *epoch, false, false, offset);
            assert!(!r.is_fenced, "broker {id} not unfenced");
        }
        self.commit();
        epochs
    }

    /// Creates one topic with `partitions` × `rf`; returns its id.
    pub fn create_topic(&mut self, name: &str, partitions: i32, rf: i16) -> Uuid {
        let (response, _) = self.request(
            7,
            ControllerRequest::CreateTopics(create_topics(&[(name, partitions, rf)])),
        );
        let ControllerResponse::CreateTopics(r) = response else {
            panic!("wrong response")
        };
        assert_eq!(r.topics[0].error_code, 0, "{:?}", r.topics[0].error_message);
        self.commit();
        r.topics[0].topic_id
    }
}

/// The directory id tests give broker `id`.
pub fn dir_of(id: i32) -> Uuid {
    Uuid::from_u64_pair(0x1000 + id as u64, 7)
}

/// A BrokerRegistration like a 4.1 broker sends: one listener, one log dir, its feature ranges.
pub fn registration(id: i32, incarnation: Uuid) -> BrokerRegistrationRequest {
    let feature = |name: &'static str, min: i16, max: i16| {
        Feature::default()
            .with_name(StrBytes::from_static_str(name))
            .with_min_supported_version(min)
            .with_max_supported_version(max)
    };
    BrokerRegistrationRequest::default()
        .with_broker_id(id.into())
        .with_cluster_id(StrBytes::from_static_str(CLUSTER_ID))
        .with_incarnation_id(incarnation)
        .with_listeners(vec![Listener::default()
            .with_name(StrBytes::from_static_str("PLAINTEXT"))
            .with_host(StrBytes::from_static_str("localhost"))
            .with_port(9092 + id as u16)
            .with_security_protocol(0)])
        .with_features(vec![
            feature("metadata.version", 7, 27),
            feature("kraft.version", 0, 1),
            feature("group.version", 0, 1),
            feature("transaction.version", 0, 2),
            feature("eligible.leader.replicas.version", 0, 1),
            feature("share.version", 0, 1),
        ])
        .with_rack(None)
        .with_log_dirs(vec![dir_of(id)])
        .with_previous_broker_epoch(-1)
}

/// A CreateTopics request for (name, partitions, replication factor) triples.
pub fn create_topics(topics: &[(&str, i32, i16)]) -> CreateTopicsRequest {
    CreateTopicsRequest::default()
        .with_timeout_ms(30_000)
        .with_topics(
            topics
                .iter()
                .map(|(name, partitions, rf)| {
                    CreatableTopic::default()
                        .with_name(TopicName(StrBytes::from_string(name.to_string())))
                        .with_num_partitions(*partitions)
                        .with_replication_factor(*rf)
                })
                .collect(),
        )
}
