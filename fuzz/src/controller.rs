//! The `controller` target: requests from the bytes, handled by an active controller whose
//! image has brokers and topics, written through the node's write checks and replayed.
//!
//! The input is a byte stream of request frames, as in [`crate::request`]. Each frame that
//! decodes to a controller api (directly, or inside an Envelope: then with the forwarded
//! principal) goes to `Controller::handle`; its result is written as the node writes it (every
//! record encoded, an atomic result in one batch, else refused whole and abandoned), replayed,
//! and its response adapted and encoded at the request's version. Frames that do not decode or
//! are not controller apis are skipped. The request's correlation id drives the clock: its low
//! 14 bits are milliseconds to advance before the next request (past the session timeout
//! brokers are fenced), and bit 30 set leaves the records uncommitted for one more request.
//! After every request the controller's internal writes (`poll`) run until it is idle.
//!
//! A panic anywhere is a finding; so are a replay error on our own records, an internal write
//! the node could not write (both stop a node) and a response that does not encode (the
//! connection would be closed instead of answered).

use std::sync::OnceLock;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{
    BrokerHeartbeatRequest, BrokerRegistrationRequest, CreateTopicsRequest, RequestKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_controller::request::Principal;
use kraftwerk_controller::{
    Controller, ControllerConfig, ControllerRequest, ControllerResult, RequestContext,
    MAX_RECORDS_PER_BATCH,
};
use kraftwerk_protocol::codec::encode_response;
use kraftwerk_protocol::envelope::unwrap_envelope;
use kraftwerk_protocol::{
    adapt_response_for_version, DecodedRequest, FrameDecoder, InboundRequest,
};
use kraftwerk_records::metadata::{ApiMessageAndVersion, FeatureLevelRecord};
use kraftwerk_records::metadata_version::{
    default_feature_levels, MetadataVersion, METADATA_VERSION_FEATURE_NAME,
};
use uuid::Uuid;

use crate::apis::served_table;

/// This controller's node id (and the only voter).
pub const NODE_ID: i32 = 3000;
/// The cluster id of the image.
pub const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";
/// Brokers registered and unfenced in the image.
pub const BROKERS: [i32; 3] = [1, 2, 3];
/// Topics of the image: (name, partitions, replication factor).
pub const TOPICS: [(&str, i32, i16); 3] = [("orders", 3, 3), ("payments", 2, 2), ("logs", 1, 1)];
/// Upper bound of internal writes after one request (a controller that never settles is a bug).
const MAX_POLLS: usize = 10_000;

/// Runs one input.
pub fn run(data: &[u8]) {
    let mut node = MiniNode::active();
    let decoder = FrameDecoder::default();
    let mut stream = BytesMut::from(data);
    while let Ok(Some(frame)) = decoder.decode(&mut stream) {
        node.frame(frame);
    }
}

/// The node's part of request handling, without Raft: a log with offsets, commit on demand.
pub struct MiniNode {
    controller: Controller,
    log: Vec<(i64, ApiMessageAndVersion)>,
    committed: usize,
    now_ms: u64,
    epoch: i32,
}

impl MiniNode {
    /// A controller that just became active over the image (brokers, topics) of [`setup_log`].
    pub fn active() -> MiniNode {
        let log = setup_log().to_vec();
        // Another seed than the setup's: a controller seeded alike would draw the topic ids
        // the setup already used (production seeds differ per process).
        let mut node = MiniNode::standby(43);
        node.controller
            .replay_committed(&log)
            .expect("replay of the setup log");
        node.committed = log.len();
        node.log = log;
        node.epoch = 2;
        node.controller.activate(node.epoch, node.now_ms);
        node.settle();
        node
    }

    fn standby(rng_seed: u64) -> MiniNode {
        MiniNode {
            controller: Controller::new(config(rng_seed)),
            log: Vec::new(),
            committed: 0,
            now_ms: 1_000_000,
            epoch: 0,
        }
    }

    fn frame(&mut self, frame: Bytes) {
        let table = served_table();
        let Ok(InboundRequest::Request(request)) =
            kraftwerk_protocol::codec::decode_request(frame, table)
        else {
            return;
        };
        let correlation_id = request.correlation_id();
        if let RequestKind::Envelope(envelope) = &request.body {
            let Ok(forwarded) = unwrap_envelope(envelope, table) else {
                return;
            };
            let principal = Principal {
                principal_type: forwarded.principal.principal_type.clone(),
                name: forwarded.principal.name.clone(),
                token_authenticated: forwarded.principal.token_authenticated,
            };
            self.request(forwarded.inner, Some(principal));
        } else {
            self.request(request, None);
        }
        self.now_ms += (correlation_id as u32 & 0x3fff) as u64;
        if correlation_id & (1 << 30) == 0 {
            self.commit();
        }
        self.settle();
    }

    fn request(&mut self, request: DecodedRequest, forwarded: Option<Principal>) {
        let version = request.version();
        let api_key = request.api_key;
        let Ok(body) = ControllerRequest::from_kind(request.body) else {
            return;
        };
        let ctx = RequestContext {
            api_version: version,
            now_ms: self.now_ms,
            received_ms: self.now_ms,
            next_offset: self.next_offset(),
            leader_id: NODE_ID,
            leader_epoch: self.epoch,
            client_id: request.header.client_id.as_ref().map(|c| c.to_string()),
            listener_name: "CONTROLLER".to_owned(),
            forwarded: forwarded.is_some(),
            principal: forwarded.unwrap_or_default(),
            client_address: None,
            internal: false,
            new_voter_kraft_versions: None,
            kraft_version_upgrade: None,
        };
        let result = self.controller.handle(&ctx, &body);
        let mut response = if self.write(&result) {
            result.response
        } else {
            self.controller.abandon_result();
            body.error_response(-1, Some("the result cannot be written"))
        }
        .into_kind();
        if let Err(e) = adapt_response_for_version(&mut response, version) {
            panic!("{api_key:?} v{version} response does not adapt: {e}");
        }
        if let Err(e) = encode_response(api_key, version, request.header.correlation_id, &response)
        {
            panic!("{api_key:?} v{version} response does not encode: {e}");
        }
    }

    /// Writes a result as the node's write path does; false if the node would refuse it.
    fn write<R>(&mut self, result: &ControllerResult<R>) -> bool {
        let mut values = Vec::with_capacity(result.records.len());
        for record in &result.records {
            match record.encode() {
                Ok(value) => values.push(value),
                Err(_) => return false,
            }
        }
        if result.atomic && !kraftwerk_raft::batch_fits(&values) {
            return false;
        }
        if values
            .iter()
            .any(|v| !kraftwerk_raft::batch_fits(std::slice::from_ref(v)))
        {
            return false;
        }
        let first = self.next_offset();
        let appended: Vec<(i64, ApiMessageAndVersion)> =
            (first..).zip(result.records.iter().cloned()).collect();
        for batch in appended.chunks(if result.atomic {
            appended.len().max(1)
        } else {
            MAX_RECORDS_PER_BATCH
        }) {
            if let Err(e) = self.controller.replay_uncommitted(batch) {
                panic!("replay of the controller's own records failed: {e}");
            }
        }
        self.log.extend(appended);
        true
    }

    fn next_offset(&self) -> i64 {
        self.log.len() as i64
    }

    fn commit(&mut self) {
        if self.committed < self.log.len() {
            let batch = self.log[self.committed..].to_vec();
            if let Err(e) = self.controller.replay_committed(&batch) {
                panic!("committed replay of the controller's own records failed: {e}");
            }
            self.committed = self.log.len();
        }
    }

    /// Runs the internal writes due now until there are none, committing each.
    fn settle(&mut self) {
        for _ in 0..MAX_POLLS {
            let Some(result) = self.controller.poll(self.now_ms, self.next_offset()) else {
                return;
            };
            assert!(self.write(&result), "an internal write cannot be written");
            self.commit();
        }
        panic!("the controller's internal writes do not settle");
    }
}

/// The controller configuration: node 3000 alone in the quorum, metadata.version 4.1-IV1
/// (pinned: the corpus inputs were found at that level).
fn config(rng_seed: u64) -> ControllerConfig {
    let mv = MetadataVersion::V4_1_IV1;
    let mut bootstrap = vec![ApiMessageAndVersion::new(
        FeatureLevelRecord {
            name: METADATA_VERSION_FEATURE_NAME.to_owned(),
            feature_level: mv.feature_level(),
            ..Default::default()
        },
        0,
    )];
    for (feature, level) in default_feature_levels(mv) {
        bootstrap.push(ApiMessageAndVersion::new(
            FeatureLevelRecord {
                name: feature.name().to_owned(),
                feature_level: level,
                ..Default::default()
            },
            0,
        ));
    }
    let mut config = ControllerConfig::new(NODE_ID, CLUSTER_ID, bootstrap);
    config.rng_seed = rng_seed;
    config
}

/// The log of a controller that bootstrapped, registered and unfenced [`BROKERS`] and created
/// [`TOPICS`], built once by handling those requests.
pub fn setup_log() -> &'static [(i64, ApiMessageAndVersion)] {
    static LOG: OnceLock<Vec<(i64, ApiMessageAndVersion)>> = OnceLock::new();
    LOG.get_or_init(|| {
        let mut node = MiniNode::standby(42);
        node.epoch = 1;
        node.controller.activate(node.epoch, node.now_ms);
        node.settle();
        let mut epochs = Vec::new();
        for id in BROKERS {
            let ctx = node.ctx(4);
            let result = node.controller.handle(
                &ctx,
                &ControllerRequest::BrokerRegistration(registration(id)),
            );
            assert!(node.write(&result));
            let kraftwerk_controller::ControllerResponse::BrokerRegistration(r) = result.response
            else {
                unreachable!("a registration answers a registration")
            };
            assert_eq!(r.error_code, 0, "registration of broker {id}");
            epochs.push(r.broker_epoch);
        }
        node.commit();
        for (id, epoch) in BROKERS.into_iter().zip(epochs) {
            let heartbeat = BrokerHeartbeatRequest::default()
                .with_broker_id(id.into())
                .with_broker_epoch(epoch)
                .with_current_metadata_offset(node.next_offset());
            let ctx = node.ctx(1);
            let result = node
                .controller
                .handle(&ctx, &ControllerRequest::BrokerHeartbeat(heartbeat));
            assert!(node.write(&result));
        }
        node.commit();
        let ctx = node.ctx(7);
        let result = node
            .controller
            .handle(&ctx, &ControllerRequest::CreateTopics(create_topics()));
        assert!(node.write(&result));
        node.commit();
        node.log
    })
}

impl MiniNode {
    fn ctx(&self, api_version: i16) -> RequestContext {
        RequestContext {
            api_version,
            now_ms: self.now_ms,
            next_offset: self.next_offset(),
            leader_id: NODE_ID,
            leader_epoch: self.epoch,
            listener_name: "CONTROLLER".to_owned(),
            ..Default::default()
        }
    }
}

/// A BrokerRegistration as a Kafka 4.1 broker sends it: one listener, one log directory.
pub fn registration(id: i32) -> BrokerRegistrationRequest {
    let feature = |name: &'static str, min: i16, max: i16| {
        Feature::default()
            .with_name(StrBytes::from_static_str(name))
            .with_min_supported_version(min)
            .with_max_supported_version(max)
    };
    BrokerRegistrationRequest::default()
        .with_broker_id(id.into())
        .with_cluster_id(StrBytes::from_static_str(CLUSTER_ID))
        .with_incarnation_id(Uuid::from_u64_pair(id as u64, 1))
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
        .with_rack(Some(StrBytes::from_string(format!("rack-{}", id % 2))))
        .with_log_dirs(vec![Uuid::from_u64_pair(0x1000 + id as u64, 7)])
        .with_previous_broker_epoch(-1)
}

/// CreateTopics for [`TOPICS`].
pub fn create_topics() -> CreateTopicsRequest {
    CreateTopicsRequest::default()
        .with_timeout_ms(30_000)
        .with_topics(
            TOPICS
                .iter()
                .map(|(name, partitions, rf)| {
                    CreatableTopic::default()
                        .with_name(TopicName(StrBytes::from_static_str(name)))
                        .with_num_partitions(*partitions)
                        .with_replication_factor(*rf)
                })
                .collect(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_has_the_brokers_and_topics() {
        let node = MiniNode::active();
        assert!(node.controller.is_active());
        let count = |name: &str| {
            setup_log()
                .iter()
                .filter(|(_, r)| r.record.name() == name)
                .count()
        };
        assert_eq!(count("RegisterBrokerRecord"), BROKERS.len());
        assert_eq!(count("TopicRecord"), TOPICS.len());
        assert_eq!(count("PartitionRecord"), 6);
    }
}
