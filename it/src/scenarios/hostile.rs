//! `hostile`: requests no well-behaved client sends, straight to the active controller of a
//! running quorum (3 controllers + 1 Kafka broker): the BrokerRegistration of issue 9 whose
//! listener host is 40,000 bytes (it made the active controller panic and exit, and the next
//! leader after it), a registration whose record would not fit one 8 MiB batch, a CreateTopics
//! asking for `i32::MAX` partitions, one with a 40,000-byte config value, and a CreatePartitions
//! with `count = i32::MAX` (the allocation bomb `fuzz/corpus/controller/found-create-partitions-*`).
//!
//! Each must be refused — an error code in the answer, or (as Java's controller does with a
//! string its generated reader cannot decode) the connection closed — and leave the quorum
//! serving: no controller exited, the same leader in the same epoch, and the next normal
//! `kafka-topics --create` through the broker succeeds and carries messages.

use anyhow::{bail, Context, Result};
use kafka_protocol::messages::broker_registration_request::Listener;
use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_protocol::messages::{ApiKey, CreatePartitionsRequest, CreateTopicsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use std::time::Duration;

use super::e2e::start_single_broker_cluster;
use super::{assert_same_messages, consume, create_topic, messages, produce};
use crate::bench::client::{errors, Conn};
use crate::bench::simbroker::registration;
use crate::cluster::{Cluster, FIRST_BROKER_ID};
use crate::env::Env;

/// Bytes of the listener host and the config value: more than a Kafka string holds (32,767).
const OVERSIZED_STRING_BYTES: usize = 40_000;

/// How one hostile request was answered.
enum Outcome {
    /// An answer with this (non-zero) error code and message.
    Refused(i16, Option<String>),
    /// The server closed the connection without an answer.
    Closed,
}

impl Outcome {
    fn describe(&self) -> String {
        match self {
            Outcome::Refused(code, message) => {
                format!("error {code} ({})", message.as_deref().unwrap_or(""))
            }
            Outcome::Closed => "connection closed".to_owned(),
        }
    }
}

/// The scenario body; prints `hostile_requests=<n> refused=<n> closed=<n>`.
pub fn run(env: &Env) -> Result<()> {
    let mut c = start_single_broker_cluster(env)?;
    let boot = c.broker_bootstrap();
    create_topic(env, &boot, "hostile-base", 3, 1, &[])?;
    let (before, _) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    let leader = leader_addr(&c, before.leader_id)?;
    env.step(&format!(
        "active controller {} (epoch {}) at {leader}",
        before.leader_id, before.leader_epoch
    ));
    let outcomes = [
        (
            "BrokerRegistration, 40,000-byte listener host",
            long_host_registration(&c, &leader)?,
        ),
        (
            "BrokerRegistration, record over 8 MiB",
            huge_registration(&c, &leader)?,
        ),
        (
            "CreateTopics, i32::MAX partitions",
            huge_partition_count(&leader)?,
        ),
        (
            "CreateTopics, 40,000-byte config value",
            long_config_value(&leader)?,
        ),
        (
            "CreatePartitions, count i32::MAX",
            huge_create_partitions(&leader)?,
        ),
    ];
    for (what, outcome) in &outcomes {
        env.step(&format!("{what}: {}", outcome.describe()));
    }
    c.check_alive()?;
    let (after, raw) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    env.show("after the hostile requests: describe --status", &raw);
    if (after.leader_id, after.leader_epoch) != (before.leader_id, before.leader_epoch) {
        bail!(
            "the hostile requests moved the leadership: {}@{} before, {}@{} after",
            before.leader_id,
            before.leader_epoch,
            after.leader_id,
            after.leader_epoch
        );
    }
    normal_traffic_works(env, &c)?;
    c.check_alive()?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(30))?;
    let closed = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::Closed))
        .count();
    println!(
        "hostile_requests={} refused={} closed={closed}",
        outcomes.len(),
        outcomes.len() - closed
    );
    Ok(())
}

/// The controller listener of node `id`.
fn leader_addr(c: &Cluster, id: i32) -> Result<String> {
    c.controllers
        .iter()
        .find(|n| n.id == id)
        .map(|n| n.addr())
        .with_context(|| format!("describe --status names leader {id}, not a controller"))
}

/// Sends one request on a fresh connection; an answer must carry an error (`code` extracts the
/// first one), a connection closed by the server counts as refused too.
fn send<R: kafka_protocol::protocol::Request>(
    addr: &str,
    key: ApiKey,
    request: &R,
    max_version: i16,
    code: impl Fn(&R::Response) -> (i16, Option<String>),
) -> Result<Outcome> {
    let mut conn = Conn::connect(addr, "kraftwerk-it-hostile", Duration::from_secs(30))?;
    let version = conn.version(key, max_version)?;
    let what = format!("{key:?}");
    match conn.call(request, version) {
        Ok(response) => {
            let (error, message) = code(&response);
            if error == errors::NONE {
                bail!("{what} to {addr} was accepted (error code 0); it must be refused");
            }
            Ok(Outcome::Refused(error, message))
        }
        Err(e) if is_closed(&e) => Ok(Outcome::Closed),
        Err(e) => Err(e.context(format!("{what} to {addr}: no answer"))),
    }
}

/// Whether `e` is the server closing the connection (EOF or reset), not a timeout.
fn is_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| {
            matches!(
                io.kind(),
                std::io::ErrorKind::UnexpectedEof
                    | std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::BrokenPipe
            )
        })
    })
}

/// Issue 9's reproduction: one listener whose host is 40,000 bytes, everything else valid.
fn long_host_registration(c: &Cluster, leader: &str) -> Result<Outcome> {
    let mut request = registration(901, &c.cluster_id)?;
    request.listeners[0].host = StrBytes::from_string("h".repeat(OVERSIZED_STRING_BYTES));
    send(
        leader,
        ApiKey::BrokerRegistration,
        &request,
        4,
        |r: &kafka_protocol::messages::BrokerRegistrationResponse| (r.error_code, None),
    )
}

/// Every string within Kafka's limit, but 300 listeners of 30,000-byte hosts: the
/// RegisterBrokerRecord (about 9 MB) would not fit one batch.
fn huge_registration(c: &Cluster, leader: &str) -> Result<Outcome> {
    let mut request = registration(902, &c.cluster_id)?;
    request.listeners = (0..300)
        .map(|i| {
            let mut l = Listener::default();
            l.name = StrBytes::from_string(format!("L{i}"));
            l.host = StrBytes::from_string("h".repeat(30_000));
            l.port = 19_000;
            l
        })
        .collect();
    send(
        leader,
        ApiKey::BrokerRegistration,
        &request,
        4,
        |r: &kafka_protocol::messages::BrokerRegistrationResponse| (r.error_code, None),
    )
}

/// A CreateTopics of one topic, v7 at most.
fn create_topics(leader: &str, topic: CreatableTopic) -> Result<Outcome> {
    let mut request = CreateTopicsRequest::default();
    request.timeout_ms = 30_000;
    request.topics = vec![topic];
    send(
        leader,
        ApiKey::CreateTopics,
        &request,
        7,
        |r: &kafka_protocol::messages::CreateTopicsResponse| {
            r.topics.first().map_or((errors::NONE, None), |t| {
                (
                    t.error_code,
                    t.error_message.as_ref().map(|m| m.to_string()),
                )
            })
        },
    )
}

fn topic(name: &str, partitions: i32) -> CreatableTopic {
    let mut t = CreatableTopic::default();
    t.name = TopicName(StrBytes::from_string(name.to_owned()));
    t.num_partitions = partitions;
    t.replication_factor = 1;
    t
}

fn huge_partition_count(leader: &str) -> Result<Outcome> {
    create_topics(leader, topic("hostile-partitions", i32::MAX))
}

fn long_config_value(leader: &str) -> Result<Outcome> {
    let mut t = topic("hostile-config", 1);
    let mut config = CreatableTopicConfig::default();
    config.name = StrBytes::from_static_str("compression.type");
    config.value = Some(StrBytes::from_string("x".repeat(OVERSIZED_STRING_BYTES)));
    t.configs = vec![config];
    create_topics(leader, t)
}

/// The fuzzer's allocation bomb: `count = i32::MAX` for an existing topic, no assignments.
fn huge_create_partitions(leader: &str) -> Result<Outcome> {
    let mut t = CreatePartitionsTopic::default();
    t.name = TopicName(StrBytes::from_static_str("hostile-base"));
    t.count = i32::MAX;
    t.assignments = None;
    let mut request = CreatePartitionsRequest::default();
    request.topics = vec![t];
    request.timeout_ms = 30_000;
    send(
        leader,
        ApiKey::CreatePartitions,
        &request,
        3,
        |r: &kafka_protocol::messages::CreatePartitionsResponse| {
            r.results.first().map_or((errors::NONE, None), |t| {
                (
                    t.error_code,
                    t.error_message.as_ref().map(|m| m.to_string()),
                )
            })
        },
    )
}

/// The next normal CreateTopics through the broker succeeds, and the new topic carries 100
/// messages each way, led by the broker (still registered and unfenced).
fn normal_traffic_works(env: &Env, c: &Cluster) -> Result<()> {
    let boot = c.broker_bootstrap();
    create_topic(env, &boot, "hostile-after", 3, 1, &[])?;
    let (parts, _) = c.describe_topic(&boot, "hostile-after", Duration::from_secs(60))?;
    if parts.len() != 3 || parts.iter().any(|p| p.leader != FIRST_BROKER_ID) {
        bail!("hostile-after should have 3 partitions led by broker {FIRST_BROKER_ID}: {parts:?}");
    }
    let sent = messages("hostile-after", 100);
    produce(env, &boot, "hostile-after", &sent, &[])?;
    let got = consume(env, &boot, "hostile-after", "g1", 100)?;
    assert_same_messages("hostile-after", &sent, &got)?;
    env.step(
        "after the hostile requests: a new topic created and 100 messages written and read back",
    );
    Ok(())
}
