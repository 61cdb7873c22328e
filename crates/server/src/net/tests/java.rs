//! Interoperability with Apache Kafka's Java code (the release `compat/run --kafka-version` names,
//! `KRAFTWERK_COMPAT_KAFKA_VERSION`), run by `compat/run`: the `java_controller_*`
//! tests talk to a Java KRaft controller (a single voter, node id 1, that compat/run formats and
//! starts) at `KRAFTWERK_JAVA_CONTROLLER=host:port`; `java_admin_client_describes_our_quorum`
//! runs Kafka's admin tool from the jars in `KRAFTWERK_KAFKA_LIBS`. They fail without those
//! variables and are `#[ignore]`d so that plain `cargo test` (no Java) does not run them.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, StrBytes};

use super::init_logs;
use super::*;
use kraftwerk_protocol::adapt::metadata_topic_name;
use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_protocol::api_versions::{ApiVersionsFeatures, FinalizedFeatures, SupportedFeature};
use kraftwerk_protocol::codec::{decode_response, encode_request_into, request_header};

fn describe_quorum_request() -> RequestKind {
    let partition = describe_quorum_request::PartitionData::default().with_partition_index(0);
    let topic = describe_quorum_request::TopicData::default()
        .with_topic_name(metadata_topic_name())
        .with_partitions(vec![partition]);
    RequestKind::DescribeQuorum(DescribeQuorumRequest::default().with_topics(vec![topic]))
}

/// `$KRAFTWERK_JAVA_CONTROLLER`; panics (the test fails) when it is unset or not `host:port`.
fn java_controller_addr() -> SocketAddr {
    let value = std::env::var("KRAFTWERK_JAVA_CONTROLLER").unwrap_or_else(|_| {
        panic!(
            "KRAFTWERK_JAVA_CONTROLLER is not set: this test talks to a running Java controller; \
             compat/run starts one and runs it"
        )
    });
    value
        .parse()
        .unwrap_or_else(|e| panic!("KRAFTWERK_JAVA_CONTROLLER={value}: not host:port ({e})"))
}

fn java_controller_peer() -> PeerClient {
    let addr = java_controller_addr();
    let table = ApiTable::new([
        (ApiKey::ApiVersions, 0, 4),
        (ApiKey::DescribeQuorum, 0, 2),
        (ApiKey::Envelope, 0, 0),
    ])
    .unwrap();
    let node = PeerNode {
        node_id: 1,
        host: addr.ip().to_string(),
        port: addr.port(),
    };
    PeerClient::new(node, PeerClientConfig::raft(7, Arc::new(table)))
}

/// Our peer client (ApiVersions v4 handshake, negotiation) asks a Java controller DescribeQuorum.
#[tokio::test]
#[ignore = "run by compat/run: needs a running Java controller (KRAFTWERK_JAVA_CONTROLLER)"]
async fn java_controller_answers_describe_quorum() {
    init_logs();
    let peer = java_controller_peer();
    let (version, response) = peer
        .send(ApiKey::DescribeQuorum, |_| describe_quorum_request())
        .await
        .unwrap();
    let ResponseKind::DescribeQuorum(response) = response else {
        panic!()
    };
    eprintln!("DescribeQuorum v{version}: {response:#?}");
    assert_eq!(version, 2, "Java 4.0 to 4.4 speak DescribeQuorum 0..=2");
    assert_eq!(response.error_code, 0);
    let partition = &response.topics[0].partitions[0];
    assert!(partition.leader_id.0 >= 0, "a leader is known");
    assert!(partition
        .current_voters
        .iter()
        .any(|v| v.replica_id == partition.leader_id));
    assert!(!response.nodes.is_empty(), "v2 lists voter endpoints");
}

/// Our Envelope encoding (principal serialisation, client address, inner header + body) is
/// accepted by a Java controller, and its ResponseData decodes with our codec.
#[tokio::test]
#[ignore = "run by compat/run: needs a running Java controller (KRAFTWERK_JAVA_CONTROLLER)"]
async fn java_controller_accepts_our_envelope() {
    init_logs();
    let peer = java_controller_peer();
    let mut data = BytesMut::new();
    encode_request_into(
        &request_header(ApiKey::DescribeQuorum, 2, 4242, "admin-x"),
        &describe_quorum_request(),
        &mut data,
    )
    .unwrap();
    let envelope = EnvelopeRequest::default()
        .with_request_data(data.freeze())
        .with_request_principal(Some(principal_bytes()))
        .with_client_host_address(Bytes::from_static(&[127, 0, 0, 1]));
    let (_, response) = peer
        .send(ApiKey::Envelope, move |_| RequestKind::Envelope(envelope))
        .await
        .unwrap();
    let ResponseKind::Envelope(response) = response else {
        panic!()
    };
    assert_eq!(response.error_code, 0, "{response:?}");
    let (header, _, inner) =
        decode_response(ApiKey::DescribeQuorum, 2, response.response_data.unwrap()).unwrap();
    assert_eq!(header.correlation_id, 4242);
    let ResponseKind::DescribeQuorum(inner) = inner else {
        panic!()
    };
    assert!(inner.topics[0].partitions[0].leader_id.0 >= 0);
}

/// Fetches `__cluster_metadata` from a Java leader as observer 100 at the highest Fetch version
/// `fetch_max` allows: exercises the adaptation of a raft Fetch (replica id and topic id moves)
/// on a negotiated version and the decoding of a response with records.
async fn observer_fetch(fetch_max: i16) -> (i16, FetchResponse) {
    let addr = java_controller_addr();
    let table = ApiTable::new([
        (ApiKey::ApiVersions, 0, 4),
        (ApiKey::DescribeQuorum, 0, 2),
        (ApiKey::Fetch, 13, fetch_max),
    ])
    .unwrap();
    let node = PeerNode {
        node_id: 1,
        host: addr.ip().to_string(),
        port: addr.port(),
    };
    let peer = PeerClient::new(node, PeerClientConfig::raft(100, Arc::new(table)));
    let (_, quorum) = peer
        .send(ApiKey::DescribeQuorum, |_| describe_quorum_request())
        .await
        .unwrap();
    let ResponseKind::DescribeQuorum(quorum) = quorum else {
        panic!()
    };
    let leader_epoch = quorum.topics[0].partitions[0].leader_epoch;
    let fetch = move |_| {
        use fetch_request::*;
        let partition = FetchPartition::default()
            .with_current_leader_epoch(leader_epoch)
            .with_fetch_offset(0)
            .with_last_fetched_epoch(0);
        RequestKind::Fetch(
            FetchRequest::default()
                .with_replica_state(ReplicaState::default().with_replica_id(BrokerId(100)))
                .with_max_wait_ms(500)
                .with_max_bytes(8 * 1024 * 1024)
                .with_topics(vec![FetchTopic::default()
                    .with_topic_id(kraftwerk_protocol::adapt::METADATA_TOPIC_ID)
                    .with_partitions(vec![partition])]),
        )
    };
    let (version, response) = peer.send(ApiKey::Fetch, fetch).await.unwrap();
    let ResponseKind::Fetch(response) = response else {
        panic!()
    };
    (version, response)
}

/// The highest Fetch version of the Java controller under test: 18 (KIP-1166) from Kafka 4.1 on,
/// 17 on 4.0. The release is `KRAFTWERK_COMPAT_KAFKA_VERSION` (compat/run sets it to the Kafka it
/// started; 4.1.2 when unset).
fn java_fetch_max() -> i16 {
    let version =
        std::env::var("KRAFTWERK_COMPAT_KAFKA_VERSION").unwrap_or_else(|_| "4.1.2".into());
    let mut parts = version.split('.').map(|p| p.parse::<u32>());
    match (parts.next(), parts.next()) {
        (Some(Ok(major)), Some(Ok(minor))) if (major, minor) < (4, 1) => 17,
        (Some(Ok(_)), Some(Ok(_))) => 18,
        _ => panic!("KRAFTWERK_COMPAT_KAFKA_VERSION={version}: not a Kafka version"),
    }
}

/// A raft observer Fetch at the Java controller's highest version (v18, KIP-1166; v17 on Kafka
/// 4.0) and at v13 (legacy replica id) both get records from Java.
#[tokio::test]
#[ignore = "run by compat/run: needs a running Java controller (KRAFTWERK_JAVA_CONTROLLER)"]
async fn java_controller_serves_our_observer_fetch_at_v13_and_v18() {
    init_logs();
    for fetch_max in [java_fetch_max(), 13] {
        let (version, response) = observer_fetch(fetch_max).await;
        assert_eq!(version, fetch_max);
        assert_eq!(response.error_code, 0, "v{version}: {response:?}");
        let topic = &response.responses[0];
        assert_eq!(topic.topic_id, kraftwerk_protocol::adapt::METADATA_TOPIC_ID);
        let partition = &topic.partitions[0];
        assert_eq!(partition.error_code, 0, "v{version}: {partition:?}");
        assert!(partition.high_watermark > 0, "v{version}: {partition:?}");
        let records = partition.records.as_ref().expect("records");
        assert!(
            records.len() > 61,
            "v{version}: at least one record batch, got {} bytes",
            records.len()
        );
        eprintln!(
            "Fetch v{version}: hw {} , {} bytes of records",
            partition.high_watermark,
            records.len()
        );
    }
    // The leader tracked us by the replica id we sent (ReplicaState from v15, legacy field at v13).
    let (_, quorum) = java_controller_peer()
        .send(ApiKey::DescribeQuorum, |_| describe_quorum_request())
        .await
        .unwrap();
    let ResponseKind::DescribeQuorum(quorum) = quorum else {
        panic!()
    };
    let observers: Vec<i32> = quorum.topics[0].partitions[0]
        .observers
        .iter()
        .map(|o| o.replica_id.0)
        .collect();
    assert!(observers.contains(&100), "observers {observers:?}");
}

fn principal_bytes() -> Bytes {
    let mut principal = BytesMut::new();
    principal.put_i16(0);
    DefaultPrincipalData::default()
        .with_type(StrBytes::from_static_str("User"))
        .with_name(StrBytes::from_static_str("ANONYMOUS"))
        .encode(&mut principal, 0)
        .unwrap();
    principal.freeze()
}

/// Malformed Envelopes get the same error code from a Java controller as from
/// [`kraftwerk_protocol::envelope::unwrap_envelope`].
#[tokio::test]
#[ignore = "run by compat/run: needs a running Java controller (KRAFTWERK_JAVA_CONTROLLER)"]
async fn java_controller_envelope_errors_match_ours() {
    use kraftwerk_protocol::envelope::unwrap_envelope;
    init_logs();
    let peer = java_controller_peer();
    let ours = ApiTable::new([
        (ApiKey::ApiVersions, 0, 4),
        (ApiKey::DescribeQuorum, 0, 2),
        (ApiKey::Envelope, 0, 0),
    ])
    .unwrap();
    let inner = |api: ApiKey, version: i16, body: RequestKind| {
        let mut data = BytesMut::new();
        encode_request_into(&request_header(api, version, 1, "admin"), &body, &mut data).unwrap();
        data.freeze()
    };
    let describe_quorum = inner(ApiKey::DescribeQuorum, 2, describe_quorum_request());
    let good = EnvelopeRequest::default()
        .with_request_data(describe_quorum.clone())
        .with_request_principal(Some(principal_bytes()))
        .with_client_host_address(Bytes::from_static(&[127, 0, 0, 1]));
    let cases = [
        ("null principal", good.clone().with_request_principal(None)),
        (
            "garbage principal",
            good.clone()
                .with_request_principal(Some(Bytes::from_static(&[0, 0, 9]))),
        ),
        (
            "3-byte address",
            good.clone()
                .with_client_host_address(Bytes::from_static(&[1, 2, 3])),
        ),
        (
            "inner header cut short",
            good.clone()
                .with_request_data(Bytes::from_static(&[0, 55, 0])),
        ),
        (
            "inner body cut short",
            good.clone()
                .with_request_data(describe_quorum.slice(..describe_quorum.len() - 3)),
        ),
        (
            "inner ApiVersions",
            good.clone().with_request_data(inner(
                ApiKey::ApiVersions,
                3,
                RequestKind::ApiVersions(ApiVersionsRequest::default()),
            )),
        ),
        (
            "inner unknown api",
            good.clone()
                .with_request_data(Bytes::from_static(&[3, 231, 0, 0, 0, 0, 0, 1, 0, 0])),
        ),
    ];
    for (label, envelope) in cases {
        let ours_code = unwrap_envelope(&envelope, &ours)
            .err()
            .map_or(0, |e| e.error_code());
        let (_, response) = peer
            .send(ApiKey::Envelope, move |_| RequestKind::Envelope(envelope))
            .await
            .unwrap();
        let ResponseKind::Envelope(response) = response else {
            panic!()
        };
        eprintln!("{label}: java {} ours {ours_code}", response.error_code);
        assert_eq!(response.error_code, ours_code, "{label}");
        assert_eq!(response.response_data, None, "{label}");
    }
}

/// Answers what Kafka's admin client asks a controller for `kafka-metadata-quorum describe`.
struct QuorumHandler {
    port: Arc<OnceLock<u16>>,
}

impl RequestHandler for QuorumHandler {
    fn handle(
        &self,
        _ctx: RequestContext,
        request: RequestKind,
    ) -> BoxFuture<'static, HandlerResult> {
        let port = *self.port.get().expect("port known once bound");
        Box::pin(async move {
            match request {
                RequestKind::DescribeCluster(_) => Ok(ResponseKind::DescribeCluster(
                    DescribeClusterResponse::default()
                        .with_endpoint_type(2)
                        .with_cluster_id(StrBytes::from_static_str("kraftwerk-test-cluster"))
                        .with_controller_id(BrokerId(1))
                        .with_brokers(vec![
                            describe_cluster_response::DescribeClusterBroker::default()
                                .with_broker_id(BrokerId(1))
                                .with_host(StrBytes::from_static_str("127.0.0.1"))
                                .with_port(port as i32),
                        ]),
                )),
                RequestKind::DescribeQuorum(_) => {
                    use describe_quorum_response::*;
                    let voter = ReplicaState::default()
                        .with_replica_id(BrokerId(1))
                        .with_log_end_offset(100);
                    let partition = PartitionData::default()
                        .with_leader_id(BrokerId(1))
                        .with_leader_epoch(5)
                        .with_high_watermark(100)
                        .with_current_voters(vec![voter]);
                    let node = Node::default()
                        .with_node_id(BrokerId(1))
                        .with_listeners(vec![Listener::default()
                            .with_name(StrBytes::from_static_str("CONTROLLER"))
                            .with_host(StrBytes::from_static_str("127.0.0.1"))
                            .with_port(port)]);
                    Ok(ResponseKind::DescribeQuorum(
                        DescribeQuorumResponse::default()
                            .with_topics(vec![TopicData::default()
                                .with_topic_name(metadata_topic_name())
                                .with_partitions(vec![partition])])
                            .with_nodes(vec![node]),
                    ))
                }
                other => Err(HandlerError::new(format!(
                    "not expected from kafka-metadata-quorum: {other:?}"
                ))),
            }
        })
    }
}

/// Kafka's own admin client (`kafka-metadata-quorum --bootstrap-controller`) talks to our
/// listener: it parses our ApiVersions (header v0, features), DescribeCluster and DescribeQuorum.
#[tokio::test]
#[ignore = "run by compat/run: needs Java and Kafka's jars (KRAFTWERK_KAFKA_LIBS)"]
async fn java_admin_client_describes_our_quorum() {
    init_logs();
    let classpath = kraftwerk_log::testing::kafka_classpath();
    let port = Arc::new(OnceLock::new());
    let table = ApiTable::new([
        (ApiKey::ApiVersions, 0, 4),
        (ApiKey::DescribeCluster, 0, 2),
        (ApiKey::DescribeQuorum, 0, 2),
    ])
    .unwrap();
    let features: FeaturesFn = Arc::new(|| ApiVersionsFeatures {
        supported: vec![
            SupportedFeature {
                name: "kraft.version".into(),
                min_version: 0,
                max_version: 1,
            },
            SupportedFeature {
                name: "metadata.version".into(),
                min_version: 7,
                max_version: 27,
            },
        ],
        finalized: Some(FinalizedFeatures {
            epoch: 100,
            levels: vec![("metadata.version".into(), 27)],
        }),
    });
    let handler = Arc::new(QuorumHandler { port: port.clone() });
    let listener = Listener::bind(
        "127.0.0.1:0".parse().unwrap(),
        ListenerConfig::default(),
        Arc::new(table),
        features,
        handler,
    )
    .await
    .unwrap();
    port.set(listener.local_addr().port()).unwrap();
    let bootstrap = listener.local_addr().to_string();
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new("java")
            .arg("-cp")
            .arg(classpath)
            .arg("org.apache.kafka.tools.MetadataQuorumCommand")
            .args(["--bootstrap-controller", &bootstrap, "describe", "--status"])
            .output(),
    )
    .await
    .expect("kafka-metadata-quorum timed out")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success());
    let field = |name: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()))
    };
    assert_eq!(
        field("ClusterId:").as_deref(),
        Some("kraftwerk-test-cluster")
    );
    assert_eq!(field("LeaderId:").as_deref(), Some("1"));
    assert_eq!(field("LeaderEpoch:").as_deref(), Some("5"));
    assert_eq!(field("HighWatermark:").as_deref(), Some("100"));
    let voters = field("CurrentVoters:").unwrap();
    assert!(
        voters.contains(&format!(
            "CONTROLLER://127.0.0.1:{}",
            listener.local_addr().port()
        )),
        "{voters}"
    );
    listener.shutdown(Duration::from_secs(1)).await;
}
