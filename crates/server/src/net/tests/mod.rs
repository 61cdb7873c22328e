//! Listener tests on loopback with a fake handler: well-behaved and malformed clients,
//! ordering, idle and connection bounds, Envelope, graceful shutdown.

mod hostile_auth;
mod java;
mod limits;
mod multi;
mod peer;
mod sasl;
mod tls;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::*;
use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_protocol::api_versions::{ApiVersionsFeatures, SupportedFeature};
use kraftwerk_protocol::codec::{
    decode_response, encode_request_frame, encode_request_into, request_header,
};
use kraftwerk_protocol::frame::{write_frame, FrameDecoder};

/// The fake handler: echoes enough of each request to check routing and ordering.
#[derive(Default)]
pub(super) struct TestHandler {
    pub(super) seen: Mutex<Vec<RequestContext>>,
    /// Refuse every Envelope's connection principal (an authorizer without CLUSTER_ACTION).
    pub(super) refuse_envelopes: std::sync::atomic::AtomicBool,
    /// The principals and peers Envelope authorization was asked about.
    pub(super) envelope_checks: Mutex<Vec<(String, std::net::IpAddr)>>,
}

impl RequestHandler for TestHandler {
    fn authorize_envelope(
        &self,
        principal: Arc<str>,
        peer: std::net::IpAddr,
    ) -> BoxFuture<'static, bool> {
        self.envelope_checks
            .lock()
            .unwrap()
            .push((principal.to_string(), peer));
        let allowed = !self
            .refuse_envelopes
            .load(std::sync::atomic::Ordering::SeqCst);
        Box::pin(std::future::ready(allowed))
    }

    fn handle(
        &self,
        ctx: RequestContext,
        request: RequestKind,
    ) -> BoxFuture<'static, HandlerResult> {
        self.seen.lock().unwrap().push(ctx.clone());
        Box::pin(async move {
            match request {
                // Echo the candidate epoch as the leader epoch so callers can match answers.
                RequestKind::Vote(r) => {
                    let epoch = r
                        .topics
                        .first()
                        .and_then(|t| t.partitions.first())
                        .map_or(-1, |p| p.replica_epoch);
                    let partition =
                        vote_response::PartitionData::default().with_leader_epoch(epoch);
                    let topic =
                        vote_response::TopicData::default().with_partitions(vec![partition]);
                    Ok(ResponseKind::Vote(
                        VoteResponse::default().with_topics(vec![topic]),
                    ))
                }
                // Long poll: wait MaxWaitMs, echo it as the throttle time.
                RequestKind::Fetch(r) => {
                    tokio::time::sleep(Duration::from_millis(r.max_wait_ms.max(0) as u64)).await;
                    Ok(ResponseKind::Fetch(
                        FetchResponse::default().with_throttle_time_ms(r.max_wait_ms),
                    ))
                }
                RequestKind::DescribeQuorum(_) => Ok(ResponseKind::DescribeQuorum(
                    DescribeQuorumResponse::default(),
                )),
                // Name each result after the forwarded principal; "moved" answers NOT_CONTROLLER.
                RequestKind::CreateTopics(r) => {
                    let principal = ctx
                        .forwarded
                        .as_ref()
                        .map_or("direct".to_owned(), |f| f.principal.name.clone());
                    let topics = r
                        .topics
                        .iter()
                        .map(|t| {
                            let error_code = if t.name.0.as_str() == "moved" { 41 } else { 0 };
                            create_topics_response::CreatableTopicResult::default()
                                .with_name(TopicName(StrBytes::from_string(format!(
                                    "{}@{principal}",
                                    t.name.0
                                ))))
                                .with_error_code(error_code)
                        })
                        .collect();
                    Ok(ResponseKind::CreateTopics(
                        CreateTopicsResponse::default().with_topics(topics),
                    ))
                }
                RequestKind::BrokerHeartbeat(_) => {
                    Err(HandlerError::new("heartbeat refused by the test handler"))
                }
                // A handler bug: the wrong response type.
                RequestKind::UnregisterBroker(_) => Ok(ResponseKind::Vote(VoteResponse::default())),
                other => Err(HandlerError::new(format!("unexpected {other:?}"))),
            }
        })
    }
}

pub(super) fn server_table() -> Arc<ApiTable> {
    Arc::new(
        ApiTable::new([
            (ApiKey::ApiVersions, 0, 4),
            (ApiKey::Fetch, 13, 17),
            (ApiKey::Vote, 0, 1),
            (ApiKey::DescribeQuorum, 0, 2),
            (ApiKey::CreateTopics, 5, 7),
            (ApiKey::Envelope, 0, 0),
            (ApiKey::BrokerHeartbeat, 0, 1),
            (ApiKey::UnregisterBroker, 0, 0),
        ])
        .unwrap(),
    )
}

pub(super) fn features() -> FeaturesFn {
    Arc::new(|| ApiVersionsFeatures {
        supported: vec![SupportedFeature {
            name: "kraft.version".into(),
            min_version: 0,
            max_version: 1,
        }],
        finalized: None,
    })
}

pub(super) async fn start(
    config: ListenerConfig,
    addr: SocketAddr,
) -> (Listener, Arc<TestHandler>) {
    let handler = Arc::new(TestHandler::default());
    let listener = Listener::bind(addr, config, server_table(), features(), handler.clone())
        .await
        .unwrap();
    (listener, handler)
}

/// Routes `tracing` output to the test's captured output (shown for failing tests, or with
/// `--nocapture`).
pub(super) fn init_logs() {
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_max_level(tracing::Level::DEBUG)
        .try_init();
}

async fn start_default() -> (Listener, Arc<TestHandler>) {
    start(ListenerConfig::default(), "127.0.0.1:0".parse().unwrap()).await
}

/// A hand-driven client for exact control over bytes.
struct RawClient {
    stream: TcpStream,
    buf: BytesMut,
}

const WAIT: Duration = Duration::from_secs(5);

impl RawClient {
    async fn connect(addr: SocketAddr) -> Self {
        Self {
            stream: TcpStream::connect(addr).await.unwrap(),
            buf: BytesMut::new(),
        }
    }

    /// Connects from the loopback address `from` (any of 127.0.0.0/8 on Linux), so that tests
    /// can tell clients apart by address.
    async fn connect_from(from: &str, addr: SocketAddr) -> Self {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket
            .bind(SocketAddr::new(from.parse().unwrap(), 0))
            .unwrap();
        Self {
            stream: socket.connect(addr).await.unwrap(),
            buf: BytesMut::new(),
        }
    }

    async fn send(
        &mut self,
        api_key: ApiKey,
        version: i16,
        correlation_id: i32,
        body: RequestKind,
    ) {
        let frame = encode_request_frame(
            &request_header(api_key, version, correlation_id, "raw"),
            &body,
        )
        .unwrap();
        self.stream.write_all(&frame).await.unwrap();
    }

    async fn send_bytes(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.unwrap();
    }

    async fn recv_frame(&mut self) -> Option<Bytes> {
        let decoder = FrameDecoder::default();
        loop {
            if let Some(frame) = decoder.decode(&mut self.buf).unwrap() {
                return Some(frame);
            }
            match tokio::time::timeout(WAIT, self.stream.read_buf(&mut self.buf))
                .await
                .expect("no answer in time")
            {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    async fn recv(&mut self, api_key: ApiKey, version: i16) -> (i32, ResponseKind) {
        let frame = self
            .recv_frame()
            .await
            .expect("connection closed instead of answering");
        let (header, _, body) = decode_response(api_key, version, frame).unwrap();
        (header.correlation_id, body)
    }

    /// Asserts the server closes the connection without sending anything more.
    async fn expect_closed(&mut self) {
        assert_eq!(
            self.recv_frame().await,
            None,
            "expected the server to close the connection"
        );
    }
}

fn vote(epoch: i32) -> RequestKind {
    let partition = vote_request::PartitionData::default().with_replica_epoch(epoch);
    RequestKind::Vote(VoteRequest::default().with_topics(vec![
        vote_request::TopicData::default().with_partitions(vec![partition]),
    ]))
}

fn vote_epoch(response: &ResponseKind) -> i32 {
    let ResponseKind::Vote(r) = response else {
        panic!("not a Vote response: {response:?}")
    };
    r.topics[0].partitions[0].leader_epoch
}

fn fetch(max_wait_ms: i32) -> RequestKind {
    RequestKind::Fetch(FetchRequest::default().with_max_wait_ms(max_wait_ms))
}

#[tokio::test]
async fn answers_api_versions_from_the_table_and_features() {
    let (listener, handler) = start_default().await;
    let mut client = RawClient::connect(listener.local_addr()).await;
    client
        .send(
            ApiKey::ApiVersions,
            4,
            11,
            RequestKind::ApiVersions(
                ApiVersionsRequest::default()
                    .with_client_software_name(StrBytes::from_static_str("test"))
                    .with_client_software_version(StrBytes::from_static_str("1")),
            ),
        )
        .await;
    let (correlation_id, body) = client.recv(ApiKey::ApiVersions, 4).await;
    let ResponseKind::ApiVersions(body) = body else {
        panic!()
    };
    assert_eq!(correlation_id, 11);
    let keys: Vec<(i16, i16, i16)> = body
        .api_keys
        .iter()
        .map(|k| (k.api_key, k.min_version, k.max_version))
        .collect();
    let expected: Vec<(i16, i16, i16)> = server_table()
        .ranges()
        .iter()
        .map(|r| (r.api_key as i16, r.min_version, r.max_version))
        .collect();
    assert_eq!(keys, expected);
    assert_eq!(body.supported_features[0].name.as_str(), "kraft.version");

    // A version from the future gets the KIP-511 answer, and the connection stays usable.
    client
        .send_bytes(&{
            let mut payload = BytesMut::new();
            payload.put_i16(18);
            payload.put_i16(9);
            payload.put_i32(12);
            payload.put_i16(-1);
            payload.put_u8(0);
            let mut frame = BytesMut::new();
            write_frame(&payload, &mut frame);
            frame
        })
        .await;
    let (correlation_id, body) = client.recv(ApiKey::ApiVersions, 0).await;
    let ResponseKind::ApiVersions(body) = body else {
        panic!()
    };
    assert_eq!(
        (correlation_id, body.error_code, body.api_keys.len()),
        (12, 35, 1)
    );
    client.send(ApiKey::Vote, 1, 13, vote(5)).await;
    assert_eq!(vote_epoch(&client.recv(ApiKey::Vote, 1).await.1), 5);
    assert!(
        handler
            .seen
            .lock()
            .unwrap()
            .iter()
            .all(|c| c.api_key != ApiKey::ApiVersions),
        "ApiVersions never reaches the handler"
    );
    listener.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let (listener, _) = start_default().await;
    let mut client = RawClient::connect(listener.local_addr()).await;
    // A slow long poll first, then fast votes: the votes must still come back after it.
    client.send(ApiKey::Fetch, 17, 1, fetch(150)).await;
    for i in 2..=6 {
        client.send(ApiKey::Vote, 1, i, vote(i)).await;
    }
    let (correlation_id, body) = client.recv(ApiKey::Fetch, 17).await;
    let ResponseKind::Fetch(body) = body else {
        panic!()
    };
    assert_eq!((correlation_id, body.throttle_time_ms), (1, 150));
    for i in 2..=6 {
        let (correlation_id, body) = client.recv(ApiKey::Vote, 1).await;
        assert_eq!((correlation_id, vote_epoch(&body)), (i, i));
    }
    listener.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn many_clients_are_served_concurrently() {
    let (listener, handler) = start_default().await;
    let addr = listener.local_addr();
    let mut clients = tokio::task::JoinSet::new();
    for c in 0..8 {
        clients.spawn(async move {
            let mut client = RawClient::connect(addr).await;
            for i in 0..20 {
                let epoch = c * 1000 + i;
                client.send(ApiKey::Vote, 1, i, vote(epoch)).await;
                let (correlation_id, body) = client.recv(ApiKey::Vote, 1).await;
                assert_eq!((correlation_id, vote_epoch(&body)), (i, epoch));
            }
        });
    }
    while let Some(done) = clients.join_next().await {
        done.unwrap();
    }
    assert_eq!(handler.seen.lock().unwrap().len(), 160);
    let ctx = handler.seen.lock().unwrap()[0].clone();
    assert_eq!(
        (ctx.client_id.as_str(), &*ctx.listener_name, ctx.forwarded),
        ("raw", "CONTROLLER", None)
    );
    listener.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn misbehaving_clients_lose_only_their_own_connection() {
    init_logs();
    let config = ListenerConfig {
        max_frame_bytes: 1024,
        ..ListenerConfig::default()
    };
    let (listener, _) = start(config, "127.0.0.1:0".parse().unwrap()).await;
    let addr = listener.local_addr();

    // A well-behaved client keeps voting on its own connection throughout.
    let good = tokio::spawn(async move {
        let mut client = RawClient::connect(addr).await;
        for i in 0..40 {
            client.send(ApiKey::Vote, 1, i, vote(i)).await;
            assert_eq!(vote_epoch(&client.recv(ApiKey::Vote, 1).await.1), i);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });

    let mut garbage = RawClient::connect(addr).await;
    garbage
        .send_bytes(&[0, 0, 0, 6, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01])
        .await;
    garbage.expect_closed().await;

    let mut oversized = RawClient::connect(addr).await;
    oversized.send_bytes(&1025i32.to_be_bytes()).await;
    oversized.expect_closed().await;

    let mut negative = RawClient::connect(addr).await;
    negative.send_bytes(&(-5i32).to_be_bytes()).await;
    negative.expect_closed().await;

    let mut unsupported = RawClient::connect(addr).await;
    unsupported.send(ApiKey::Vote, 2, 1, vote(1)).await; // we serve Vote 0..=1
    unsupported.expect_closed().await;

    let mut not_enabled = RawClient::connect(addr).await;
    not_enabled
        .send(
            ApiKey::AllocateProducerIds,
            0,
            1,
            RequestKind::AllocateProducerIds(AllocateProducerIdsRequest::default()),
        )
        .await;
    not_enabled.expect_closed().await;

    let mut unknown_api = RawClient::connect(addr).await;
    unknown_api
        .send_bytes(&[0, 0, 0, 10, 0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0, 0])
        .await;
    unknown_api.expect_closed().await;

    let mut trailing = RawClient::connect(addr).await;
    let mut payload = BytesMut::new();
    encode_request_into(
        &request_header(ApiKey::Vote, 1, 1, "t"),
        &vote(1),
        &mut payload,
    )
    .unwrap();
    payload.put_u8(0);
    let mut frame = BytesMut::new();
    write_frame(&payload, &mut frame);
    trailing.send_bytes(&frame).await;
    trailing.expect_closed().await;

    let mut handler_error = RawClient::connect(addr).await;
    handler_error
        .send(
            ApiKey::BrokerHeartbeat,
            1,
            1,
            RequestKind::BrokerHeartbeat(BrokerHeartbeatRequest::default()),
        )
        .await;
    handler_error.expect_closed().await;

    let mut wrong_type = RawClient::connect(addr).await;
    wrong_type
        .send(
            ApiKey::UnregisterBroker,
            0,
            1,
            RequestKind::UnregisterBroker(UnregisterBrokerRequest::default()),
        )
        .await;
    wrong_type.expect_closed().await;

    // Half a frame, then the client goes away.
    let mut truncated = RawClient::connect(addr).await;
    truncated.send_bytes(&[0, 0, 0, 40, 0, 52, 0, 1]).await;
    drop(truncated);

    good.await.unwrap();
    // And the listener still accepts newcomers.
    let mut late = RawClient::connect(addr).await;
    late.send(ApiKey::Vote, 0, 7, vote(7)).await;
    assert_eq!(vote_epoch(&late.recv(ApiKey::Vote, 0).await.1), 7);
    listener.shutdown(Duration::from_secs(1)).await;
}

fn principal(name: &str) -> Bytes {
    let mut out = BytesMut::new();
    out.put_i16(0);
    DefaultPrincipalData::default()
        .with_type(StrBytes::from_static_str("User"))
        .with_name(StrBytes::from_string(name.into()))
        .encode(&mut out, 0)
        .unwrap();
    out.freeze()
}

fn envelope_of(topic: &str, inner_correlation_id: i32) -> RequestKind {
    let inner = RequestKind::CreateTopics(
        CreateTopicsRequest::default()
            .with_topics(vec![create_topics_request::CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.into())))]),
    );
    let mut data = BytesMut::new();
    encode_request_into(
        &request_header(ApiKey::CreateTopics, 7, inner_correlation_id, "admin-1"),
        &inner,
        &mut data,
    )
    .unwrap();
    RequestKind::Envelope(
        EnvelopeRequest::default()
            .with_request_data(data.freeze())
            .with_request_principal(Some(principal("alice")))
            .with_client_host_address(Bytes::from_static(&[192, 168, 1, 9])),
    )
}

/// ControllerApis.handleEnvelopeRequest: the broker's connection principal needs
/// CLUSTER_ACTION; without it the Envelope is answered CLUSTER_AUTHORIZATION_FAILED and the
/// inner request never reaches the handler. With it, the handler sees the client's principal.
#[tokio::test]
async fn an_envelope_is_authorized_for_the_connection_before_it_is_unwrapped() {
    let (listener, handler) = start_default().await;
    let mut broker = RawClient::connect(listener.local_addr()).await;
    handler
        .refuse_envelopes
        .store(true, std::sync::atomic::Ordering::SeqCst);
    broker
        .send(ApiKey::Envelope, 0, 600, envelope_of("orders", 60))
        .await;
    let ResponseKind::Envelope(envelope) = broker.recv(ApiKey::Envelope, 0).await.1 else {
        panic!()
    };
    assert_eq!((envelope.error_code, envelope.response_data), (31, None));
    assert!(handler.seen.lock().unwrap().is_empty());
    let checks = handler.envelope_checks.lock().unwrap().clone();
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].0, "User:ANONYMOUS");
    assert!(checks[0].1.is_loopback());

    handler
        .refuse_envelopes
        .store(false, std::sync::atomic::Ordering::SeqCst);
    broker
        .send(ApiKey::Envelope, 0, 601, envelope_of("orders", 61))
        .await;
    let ResponseKind::Envelope(envelope) = broker.recv(ApiKey::Envelope, 0).await.1 else {
        panic!()
    };
    assert_eq!(envelope.error_code, 0);
    let ctx = handler.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(ctx.forwarded.unwrap().principal.name, "alice");
    listener.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn envelopes_are_unwrapped_for_the_handler_and_wrapped_back() {
    let (listener, handler) = start_default().await;
    let mut broker = RawClient::connect(listener.local_addr()).await;
    broker
        .send(ApiKey::Envelope, 0, 500, envelope_of("orders", 42))
        .await;
    let (correlation_id, body) = broker.recv(ApiKey::Envelope, 0).await;
    let ResponseKind::Envelope(envelope) = body else {
        panic!()
    };
    assert_eq!((correlation_id, envelope.error_code), (500, 0));
    let (inner_header, _, inner) =
        decode_response(ApiKey::CreateTopics, 7, envelope.response_data.unwrap()).unwrap();
    assert_eq!(inner_header.correlation_id, 42);
    let ResponseKind::CreateTopics(inner) = inner else {
        panic!()
    };
    assert_eq!(inner.topics[0].name.0.as_str(), "orders@alice");

    let ctx = handler.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        (
            ctx.api_key,
            ctx.api_version,
            ctx.correlation_id,
            ctx.client_id.as_str()
        ),
        (ApiKey::CreateTopics, 7, 42, "admin-1")
    );
    let forwarded = ctx.forwarded.unwrap();
    assert_eq!(forwarded.client_address.to_string(), "192.168.1.9");
    assert_eq!(
        (
            forwarded.envelope_client_id.as_str(),
            forwarded.envelope_correlation_id
        ),
        ("raw", 500)
    );

    // NOT_CONTROLLER inside becomes a bare Envelope error so the broker re-routes.
    broker
        .send(ApiKey::Envelope, 0, 501, envelope_of("moved", 43))
        .await;
    let ResponseKind::Envelope(envelope) = broker.recv(ApiKey::Envelope, 0).await.1 else {
        panic!()
    };
    assert_eq!((envelope.error_code, envelope.response_data), (41, None));

    // An unparsable inner request is answered UNSUPPORTED_VERSION; the connection stays up.
    let broken = RequestKind::Envelope(
        EnvelopeRequest::default()
            .with_request_data(Bytes::from_static(&[0, 19, 0]))
            .with_request_principal(Some(principal("alice")))
            .with_client_host_address(Bytes::from_static(&[127, 0, 0, 1])),
    );
    broker.send(ApiKey::Envelope, 0, 502, broken).await;
    let ResponseKind::Envelope(envelope) = broker.recv(ApiKey::Envelope, 0).await.1 else {
        panic!()
    };
    assert_eq!(envelope.error_code, 35);
    broker.send(ApiKey::Vote, 1, 503, vote(9)).await;
    assert_eq!(vote_epoch(&broker.recv(ApiKey::Vote, 1).await.1), 9);
    listener.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn shutdown_lets_in_flight_requests_finish() {
    let (listener, _) = start_default().await;
    let addr = listener.local_addr();
    let mut busy = RawClient::connect(addr).await;
    let mut idle = RawClient::connect(addr).await;
    idle.send(ApiKey::Vote, 1, 1, vote(1)).await;
    idle.recv(ApiKey::Vote, 1).await;
    busy.send(ApiKey::Fetch, 17, 1, fetch(300)).await;
    tokio::time::sleep(Duration::from_millis(50)).await; // let the long poll start
    let report = tokio::spawn(listener.shutdown(Duration::from_secs(3)));
    let (_, body) = busy.recv(ApiKey::Fetch, 17).await;
    assert!(matches!(body, ResponseKind::Fetch(f) if f.throttle_time_ms == 300));
    busy.expect_closed().await;
    idle.expect_closed().await;
    assert_eq!(
        report.await.unwrap(),
        ShutdownReport {
            closed_connections: 2,
            aborted_connections: 0
        }
    );
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "no longer accepting"
    );
}

#[tokio::test]
async fn shutdown_aborts_what_outlives_the_grace_period() {
    let (listener, _) = start_default().await;
    let mut busy = RawClient::connect(listener.local_addr()).await;
    busy.send(ApiKey::Fetch, 17, 1, fetch(10_000)).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = tokio::time::Instant::now();
    let report = listener.shutdown(Duration::from_millis(100)).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        report,
        ShutdownReport {
            closed_connections: 0,
            aborted_connections: 1
        }
    );
    busy.expect_closed().await;
}
