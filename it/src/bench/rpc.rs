//! The requests the benchmark sends, built and checked: DescribeQuorum (who leads, high
//! watermark, each voter's log end offset), CreateTopics (building the metadata and probing a
//! failover), Metadata (ZooKeeper mode: which broker is the controller).

use anyhow::{bail, Result};
use kafka_protocol::messages::create_topics_request::{CreatableReplicaAssignment, CreatableTopic};
use kafka_protocol::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_protocol::messages::{
    ApiKey, BrokerId, CreateTopicsRequest, DescribeQuorumRequest, MetadataRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use std::time::{Duration, Instant};

use super::client::{errors, Conn, Transport};

/// The quorum as the leader reports it (DescribeQuorum, KIP-595/KIP-853).
#[derive(Clone, Debug)]
pub struct QuorumView {
    /// Leader's node id.
    pub leader_id: i32,
    /// Leader epoch.
    pub leader_epoch: i32,
    /// Leader's high watermark (exclusive offset).
    pub high_watermark: i64,
    /// `(voter id, log end offset as the leader last saw it from that voter's Fetch)`.
    pub voters: Vec<(i32, i64)>,
}

impl QuorumView {
    /// The log end offset the leader has recorded for voter `id` (-1 if unknown).
    pub fn voter_leo(&self, id: i32) -> i64 {
        self.voters
            .iter()
            .find(|(v, _)| *v == id)
            .map(|(_, o)| *o)
            .unwrap_or(-1)
    }
}

/// DescribeQuorum for `__cluster_metadata-0`. Errors unless `conn` is the leader (a follower
/// answers NOT_LEADER_OR_FOLLOWER) or on I/O failure.
pub fn describe_quorum(conn: &mut Conn) -> Result<QuorumView> {
    let v = conn.version(ApiKey::DescribeQuorum, 2)?;
    let mut p = PartitionData::default();
    p.partition_index = 0;
    let mut t = TopicData::default();
    t.topic_name = TopicName(StrBytes::from_static_str(
        kraftwerk_protocol::constants::METADATA_TOPIC_NAME,
    ));
    t.partitions = vec![p];
    let mut req = DescribeQuorumRequest::default();
    req.topics = vec![t];
    let resp = conn.call(&req, v)?;
    if resp.error_code != errors::NONE {
        bail!("DescribeQuorum to {}: error {}", conn.addr, resp.error_code);
    }
    let Some(p) = resp.topics.first().and_then(|t| t.partitions.first()) else {
        bail!(
            "DescribeQuorum to {}: no partition in the answer",
            conn.addr
        );
    };
    if p.error_code != errors::NONE {
        bail!(
            "DescribeQuorum to {}: partition error {}",
            conn.addr,
            p.error_code
        );
    }
    Ok(QuorumView {
        leader_id: p.leader_id.0,
        leader_epoch: p.leader_epoch,
        high_watermark: p.high_watermark,
        voters: p
            .current_voters
            .iter()
            .map(|r| (r.replica_id.0, r.log_end_offset))
            .collect(),
    })
}

/// One topic to create: name, partition count, replication factor, and optionally an explicit
/// assignment (one broker list per partition; then count and factor are sent as -1).
#[derive(Clone, Debug)]
pub struct TopicSpec {
    /// Topic name.
    pub name: String,
    /// Number of partitions.
    pub partitions: i32,
    /// Replication factor.
    pub replication_factor: i16,
    /// Explicit replica lists per partition (ZooKeeper mode pins partitions to data brokers).
    pub assignment: Option<Vec<Vec<i32>>>,
}

/// The outcome of one CreateTopics: per-topic error codes.
#[derive(Clone, Debug)]
pub struct CreateOutcome {
    /// `(topic, error code, error message)` for every topic in the answer.
    pub results: Vec<(String, i16, Option<String>)>,
}

impl CreateOutcome {
    /// True if every topic was created now or already existed.
    pub fn all_created(&self) -> bool {
        !self.results.is_empty()
            && self
                .results
                .iter()
                .all(|(_, e, _)| *e == errors::NONE || *e == errors::TOPIC_ALREADY_EXISTS)
    }

    /// True if any topic was answered NOT_CONTROLLER.
    pub fn not_controller(&self) -> bool {
        self.results
            .iter()
            .any(|(_, e, _)| *e == errors::NOT_CONTROLLER)
    }

    /// The first error, as `topic: code (message)`.
    pub fn first_error(&self) -> String {
        self.results
            .iter()
            .find(|(_, e, _)| *e != errors::NONE && *e != errors::TOPIC_ALREADY_EXISTS)
            .map(|(t, e, m)| format!("{t}: error {e} ({})", m.clone().unwrap_or_default()))
            .unwrap_or_else(|| "no error".into())
    }
}

/// CreateTopics (up to v7) with `timeout_ms` as the server-side deadline.
pub fn create_topics(
    conn: &mut Conn,
    topics: &[TopicSpec],
    timeout_ms: i32,
) -> Result<CreateOutcome> {
    let v = conn.version(ApiKey::CreateTopics, 7)?;
    let mut req = CreateTopicsRequest::default();
    req.timeout_ms = timeout_ms;
    for s in topics {
        let mut t = CreatableTopic::default();
        t.name = TopicName(StrBytes::from_string(s.name.clone()));
        match &s.assignment {
            Some(a) => {
                t.num_partitions = -1;
                t.replication_factor = -1;
                t.assignments = a
                    .iter()
                    .enumerate()
                    .map(|(i, brokers)| {
                        let mut r = CreatableReplicaAssignment::default();
                        r.partition_index = i as i32;
                        r.broker_ids = brokers.iter().map(|b| BrokerId(*b)).collect();
                        r
                    })
                    .collect();
            }
            None => {
                t.num_partitions = s.partitions;
                t.replication_factor = s.replication_factor;
            }
        }
        req.topics.push(t);
    }
    let resp = conn.call(&req, v)?;
    Ok(CreateOutcome {
        results: resp
            .topics
            .into_iter()
            .map(|t| {
                (
                    t.name.0.to_string(),
                    t.error_code,
                    t.error_message.map(|m| m.to_string()),
                )
            })
            .collect(),
    })
}

/// Metadata without topics: the broker's view of the controller id (ZooKeeper mode) and the
/// live broker ids.
pub fn controller_id(conn: &mut Conn) -> Result<(i32, Vec<i32>)> {
    let v = conn.version(ApiKey::Metadata, 12)?;
    let mut req = MetadataRequest::default();
    req.topics = Some(Vec::new());
    let resp = conn.call(&req, v)?;
    Ok((
        resp.controller_id.0,
        resp.brokers.iter().map(|b| b.node_id.0).collect(),
    ))
}

/// How long [`create_topics_until_created`] keeps trying and how patiently.
pub struct CreateRetry {
    /// Give up after this long.
    pub total: Duration,
    /// Socket timeout of one CreateTopics round trip.
    pub socket: Duration,
    /// CreateTopics `timeout_ms`.
    pub request_timeout_ms: i32,
    /// Pause after a round over every address failed.
    pub pause: Duration,
}

/// Sends one CreateTopics batch (over `transport`) to each address `addrs` gives (asked again every round, after
/// `check` passes) until one answers with every topic created; NOT_CONTROLLER and transient
/// failures are retried. Errors: `check`'s, an interrupt, or no success within `retry.total`
/// (quoting the last failure).
pub fn create_topics_until_created(
    specs: &[TopicSpec],
    retry: &CreateRetry,
    transport: &Transport,
    mut addrs: impl FnMut() -> Result<Vec<String>>,
) -> Result<()> {
    let start = Instant::now();
    let mut last = String::new();
    while start.elapsed() < retry.total {
        crate::util::check_interrupted()?;
        for a in addrs()? {
            let r = Conn::connect_via(&a, "bench-create", Duration::from_secs(2), transport)
                .and_then(|mut c| {
                    c.set_timeout(retry.socket)?;
                    create_topics(&mut c, specs, retry.request_timeout_ms)
                });
            match r {
                Ok(o) if o.all_created() => return Ok(()),
                Ok(o) if o.not_controller() => {}
                Ok(o) => last = o.first_error(),
                Err(e) => last = format!("{e:#}"),
            }
        }
        std::thread::sleep(retry.pause);
    }
    bail!(
        "CreateTopics of {} topics did not succeed within {} s (last: {last})",
        specs.len(),
        retry.total.as_secs()
    )
}
