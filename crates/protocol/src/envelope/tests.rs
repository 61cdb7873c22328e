use super::*;
use crate::codec::{decode_response, encode_request_into, request_header};
use bytes::{BufMut, BytesMut};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::describe_quorum_response::{PartitionData, TopicData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, StrBytes};
use uuid::Uuid;

fn table() -> ApiTable {
    ApiTable::new([
        (ApiKey::CreateTopics, 5, 7),
        (ApiKey::DescribeQuorum, 0, 2),
        (ApiKey::ApiVersions, 0, 4),
        (ApiKey::Envelope, 0, 0),
    ])
    .unwrap()
}

/// `DefaultKafkaPrincipalBuilder.serialize`: int16 version, then `DefaultPrincipalData` at it.
fn principal_bytes(name: &str) -> Bytes {
    let mut out = BytesMut::new();
    out.put_i16(0);
    DefaultPrincipalData::default()
        .with_type(StrBytes::from_static_str("User"))
        .with_name(StrBytes::from_string(name.into()))
        .encode(&mut out, 0)
        .unwrap();
    out.freeze()
}

fn create_topics_payload(version: i16) -> (RequestHeader, RequestKind, Bytes) {
    let header = request_header(ApiKey::CreateTopics, version, 77, "adminclient-1");
    let body = RequestKind::CreateTopics(
        CreateTopicsRequest::default()
            .with_timeout_ms(30_000)
            .with_topics(vec![CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_static_str("orders")))
                .with_num_partitions(3)
                .with_replication_factor(1)]),
    );
    let mut out = BytesMut::new();
    encode_request_into(&header, &body, &mut out).unwrap();
    (header, body, out.freeze())
}

fn envelope(request_data: Bytes) -> EnvelopeRequest {
    EnvelopeRequest::default()
        .with_request_data(request_data)
        .with_request_principal(Some(principal_bytes("alice")))
        .with_client_host_address(Bytes::from_static(&[10, 0, 0, 7]))
}

#[test]
fn unwraps_the_inner_request_principal_and_address() {
    let (header, body, data) = create_topics_payload(7);
    let forwarded = unwrap_envelope(&envelope(data), &table()).unwrap();
    assert_eq!(forwarded.inner.header, header);
    assert_eq!(forwarded.inner.body, body);
    assert_eq!(
        forwarded.principal,
        ForwardedPrincipal {
            principal_type: "User".into(),
            name: "alice".into(),
            token_authenticated: false
        }
    );
    assert_eq!(
        forwarded.client_address,
        "10.0.0.7".parse::<IpAddr>().unwrap()
    );

    let v6 = envelope(create_topics_payload(7).2)
        .with_client_host_address(Bytes::from(vec![0u8; 15]).into_iter().chain([1]).collect());
    assert_eq!(
        unwrap_envelope(&v6, &table()).unwrap().client_address,
        "::1".parse::<IpAddr>().unwrap()
    );
}

#[test]
fn failures_map_to_javas_error_codes() {
    let code = |e: EnvelopeRequest| unwrap_envelope(&e, &table()).unwrap_err().error_code();
    let (_, _, data) = create_topics_payload(7);

    assert_eq!(
        code(envelope(data.clone()).with_request_principal(None)),
        97,
        "null principal"
    );
    assert_eq!(
        code(envelope(data.clone()).with_request_principal(Some(Bytes::from_static(&[0, 0, 9])))),
        97,
        "garbage principal"
    );
    assert_eq!(
        code(envelope(data.clone()).with_client_host_address(Bytes::from_static(&[1, 2, 3]))),
        42,
        "3-byte address"
    );
    assert_eq!(
        code(envelope(Bytes::from_static(&[0, 19, 0]))),
        35,
        "inner header cut short"
    );
    assert_eq!(
        code(envelope(data.slice(..data.len() - 2))),
        35,
        "inner body cut short"
    );
    assert_eq!(
        code(envelope(create_topics_payload(4).2)),
        35,
        "inner version below our range"
    );

    // ApiVersions is served here but never forwardable.
    let mut api_versions = BytesMut::new();
    encode_request_into(
        &request_header(ApiKey::ApiVersions, 0, 1, "c"),
        &RequestKind::ApiVersions(ApiVersionsRequest::default()),
        &mut api_versions,
    )
    .unwrap();
    assert_eq!(code(envelope(api_versions.freeze())), 42);

    // DeleteTopics is forwardable but this table does not serve it.
    let mut delete = BytesMut::new();
    encode_request_into(
        &request_header(ApiKey::DeleteTopics, 6, 1, "c"),
        &RequestKind::DeleteTopics(DeleteTopicsRequest::default()),
        &mut delete,
    )
    .unwrap();
    assert_eq!(code(envelope(delete.freeze())), 42);
}

#[test]
fn wraps_the_inner_response_at_the_inner_version_and_correlation_id() {
    let (header, _, _) = create_topics_payload(7);
    let response = ResponseKind::CreateTopics(CreateTopicsResponse::default().with_topics(
        vec![CreatableTopicResult::default()
        .with_name(TopicName(StrBytes::from_static_str("orders")))
        .with_topic_id(Uuid::from_u128(5))
        .with_num_partitions(3)],
    ));
    let wrapped = wrap_response(&header, response.clone()).unwrap();
    assert_eq!(wrapped.error_code, 0);
    let (inner_header, version, decoded) =
        decode_response(ApiKey::CreateTopics, 7, wrapped.response_data.unwrap()).unwrap();
    assert_eq!((inner_header.correlation_id, version), (77, 7));
    assert_eq!(decoded, response);
}

#[test]
fn not_controller_anywhere_java_counts_becomes_a_bare_envelope_error() {
    let (header, _, _) = create_topics_payload(7);
    let response = ResponseKind::CreateTopics(CreateTopicsResponse::default().with_topics(vec![
        CreatableTopicResult::default(),
        CreatableTopicResult::default().with_error_code(41),
    ]));
    let wrapped = wrap_response(&header, response).unwrap();
    assert_eq!((wrapped.error_code, wrapped.response_data), (41, None));

    // DescribeQuorum: a non-leader answers NOT_LEADER_OR_FOLLOWER, which Java also rewrites.
    let dq_header = request_header(ApiKey::DescribeQuorum, 2, 3, "admin");
    let dq = ResponseKind::DescribeQuorum(DescribeQuorumResponse::default().with_topics(vec![
        TopicData::default().with_partitions(vec![PartitionData::default().with_error_code(6)]),
    ]));
    let wrapped = wrap_response(&dq_header, dq).unwrap();
    assert_eq!((wrapped.error_code, wrapped.response_data), (41, None));

    // NOT_CONTROLLER in DescribeQuorum is not what Java looks for there: passed through.
    let dq = ResponseKind::DescribeQuorum(DescribeQuorumResponse::default().with_error_code(41));
    assert_eq!(wrap_response(&dq_header, dq).unwrap().error_code, 0);
}

#[test]
fn forwardable_set_matches_kafka_4_1() {
    // Java 4.1.2 `ApiKeys.values()` with `forwardable == true`, by id.
    let ids: Vec<i16> = FORWARDABLE_APIS.iter().map(|k| *k as i16).collect();
    assert_eq!(
        ids,
        vec![19, 20, 30, 31, 33, 37, 38, 39, 40, 43, 44, 45, 46, 49, 51, 55, 57, 64, 67, 80, 81]
    );
}
