//! Simulated Kafka brokers and an admin client: what the controller quorum serves.
//!
//! Brokers follow `BrokerLifecycleManager` in spirit: register (with a fresh incarnation after a
//! "restart"), then heartbeat with their metadata offset; an admin creates and deletes topics and
//! brokers allocate producer-id blocks. Every acknowledged outcome is recorded so the checker can
//! verify it survived failovers (acknowledged writes are never lost, producer-id blocks never
//! overlap, broker epochs are never reused).

use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::{
    AllocateProducerIdsRequest, BrokerHeartbeatRequest, BrokerRegistrationRequest,
    CreateTopicsRequest, DeleteTopicsRequest, RequestKind, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_protocol::constants::NOT_CONTROLLER;
use kraftwerk_protocol::error_counts::response_has_error;
use rand::rngs::SmallRng;
use rand::Rng;
use uuid::Uuid;

pub use crate::harness::CLUSTER_ID;

/// One simulated broker.
#[derive(Debug)]
pub struct SimBroker {
    /// Broker id.
    pub id: i32,
    /// Incarnation (changes when the broker "restarts").
    pub incarnation: Uuid,
    /// Broker epoch after a successful registration.
    pub epoch: Option<i64>,
    /// The broker stops heartbeating until this time (to get fenced).
    pub silent_until_ms: u64,
    /// Next heartbeat / registration attempt.
    pub next_action_ms: u64,
    /// Node it sends controller requests to (its guess of the active controller).
    pub target: i32,
    /// Token of the outstanding request, if any, and when it is given up.
    pub in_flight: Option<(u64, u64)>,
    /// Whether the last heartbeat said "fenced".
    pub fenced: bool,
    /// The controller API versions it sends.
    pub api_table: ApiTable,
}

impl SimBroker {
    /// A new, unregistered broker speaking `api_table`.
    pub fn new(id: i32, rng: &mut SmallRng, target: i32, api_table: ApiTable) -> Self {
        Self {
            id,
            incarnation: Uuid::from_u64_pair(rng.gen(), rng.gen()),
            epoch: None,
            silent_until_ms: 0,
            next_action_ms: 0,
            target,
            in_flight: None,
            fenced: true,
            api_table,
        }
    }

    /// The directory id of its single log dir.
    pub fn dir(&self) -> Uuid {
        Uuid::from_u64_pair(0x1000 + self.id as u64, 7)
    }

    /// The registration a 4.1 broker would send (adapting it to an older version drops what
    /// that version lacks, as Java's builder does).
    pub fn registration(&self) -> RequestKind {
        let feature = |name: &'static str, min: i16, max: i16| {
            Feature::default()
                .with_name(StrBytes::from_static_str(name))
                .with_min_supported_version(min)
                .with_max_supported_version(max)
        };
        RequestKind::BrokerRegistration(
            BrokerRegistrationRequest::default()
                .with_broker_id(self.id.into())
                .with_cluster_id(StrBytes::from_static_str(CLUSTER_ID))
                .with_incarnation_id(self.incarnation)
                .with_listeners(vec![Listener::default()
                    .with_name(StrBytes::from_static_str("PLAINTEXT"))
                    .with_host(StrBytes::from_static_str("localhost"))
                    .with_port(9000 + self.id as u16)
                    .with_security_protocol(0)])
                .with_features(vec![
                    feature("metadata.version", 7, 27),
                    feature("kraft.version", 0, 1),
                    feature("group.version", 0, 1),
                    feature("transaction.version", 0, 2),
                    feature("eligible.leader.replicas.version", 0, 1),
                ])
                .with_log_dirs(vec![self.dir()])
                .with_previous_broker_epoch(-1),
        )
    }

    /// A heartbeat reporting `metadata_offset` as applied.
    pub fn heartbeat(&self, metadata_offset: i64) -> RequestKind {
        RequestKind::BrokerHeartbeat(
            BrokerHeartbeatRequest::default()
                .with_broker_id(self.id.into())
                .with_broker_epoch(self.epoch.unwrap_or(-1))
                .with_current_metadata_offset(metadata_offset)
                .with_want_fence(false)
                .with_want_shut_down(false),
        )
    }

    /// An AllocateProducerIds request.
    pub fn allocate_producer_ids(&self) -> RequestKind {
        RequestKind::AllocateProducerIds(
            AllocateProducerIdsRequest::default()
                .with_broker_id(self.id.into())
                .with_broker_epoch(self.epoch.unwrap_or(-1)),
        )
    }
}

/// A CreateTopics request for one topic.
pub fn create_topic(name: &str, partitions: i32, replication_factor: i16) -> RequestKind {
    RequestKind::CreateTopics(
        CreateTopicsRequest::default()
            .with_timeout_ms(30_000)
            .with_topics(vec![CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_string(name.to_owned())))
                .with_num_partitions(partitions)
                .with_replication_factor(replication_factor)]),
    )
}

/// A DeleteTopics request for one topic, by name, for `version`: `TopicNames` up to v5, a
/// `Topics` entry with the name from v6 (Java's `DeleteTopicsRequest.Builder` does the same).
pub fn delete_topic(name: &str, version: i16) -> RequestKind {
    let name = TopicName(StrBytes::from_string(name.to_owned()));
    let request = DeleteTopicsRequest::default().with_timeout_ms(30_000);
    RequestKind::DeleteTopics(if version >= 6 {
        request.with_topics(vec![DeleteTopicState::default().with_name(Some(name))])
    } else {
        request.with_topic_names(vec![name])
    })
}

/// What clients were told; checked against the images.
#[derive(Debug, Default)]
pub struct Acknowledged {
    /// Topics whose creation succeeded, by name → id, minus acknowledged deletions.
    pub topics: BTreeMap<String, Uuid>,
    /// Topics whose deletion succeeded.
    pub deleted: BTreeSet<Uuid>,
    /// Producer-id blocks handed out: (start, length).
    pub producer_id_blocks: Vec<(i64, i32)>,
    /// Broker epochs handed out, with (broker id, incarnation).
    pub broker_epochs: BTreeMap<i64, (i32, Uuid)>,
    /// Problems seen in responses.
    pub violations: Vec<String>,
}

impl Acknowledged {
    /// Records a successful outcome of a response.
    pub fn record(&mut self, broker: Option<(i32, Uuid)>, response: &ResponseKind) {
        match response {
            ResponseKind::BrokerRegistration(r) if r.error_code == 0 => {
                let who = broker.expect("registrations come from brokers");
                if let Some(prev) = self.broker_epochs.insert(r.broker_epoch, who) {
                    if prev != who {
                        self.violations.push(format!(
                            "broker epoch {} given to {prev:?} and to {who:?}",
                            r.broker_epoch
                        ));
                    }
                }
            }
            ResponseKind::CreateTopics(r) => {
                for t in r.topics.iter().filter(|t| t.error_code == 0) {
                    self.topics.insert(t.name.0.to_string(), t.topic_id);
                }
            }
            ResponseKind::DeleteTopics(r) => {
                for t in r.responses.iter().filter(|t| t.error_code == 0) {
                    if let Some(name) = &t.name {
                        if let Some(id) = self.topics.remove(name.0.as_str()) {
                            self.deleted.insert(id);
                        }
                    }
                }
            }
            ResponseKind::AllocateProducerIds(r) if r.error_code == 0 => {
                let (start, len) = (r.producer_id_start.0, r.producer_id_len);
                for &(s, l) in &self.producer_id_blocks {
                    if start < s + l as i64 && s < start + len as i64 {
                        self.violations.push(format!(
                            "producer id block [{start}, +{len}) overlaps [{s}, +{l})"
                        ));
                    }
                }
                self.producer_id_blocks.push((start, len));
            }
            _ => {}
        }
    }
}

/// True if the response tells the client to find another controller: NOT_CONTROLLER where
/// Java's `errorCounts()` (and so a broker) looks for it.
pub fn is_not_controller(response: &ResponseKind) -> bool {
    response_has_error(response, NOT_CONTROLLER)
}
