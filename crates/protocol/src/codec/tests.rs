use super::*;
use crate::adapt::fill::{Fill, Gen};
use crate::adapt::{adapt_request_for_version, adapt_response_for_version};
use crate::frame::FrameDecoder;
use bytes::BufMut;
use kafka_protocol::messages::*;
use proptest::prelude::*;

/// A table serving the full codec range of a few apis with both header versions.
fn wide_table() -> ApiTable {
    let apis = [
        ApiKey::Fetch,
        ApiKey::Vote,
        ApiKey::BeginQuorumEpoch,
        ApiKey::CreateTopics,
        ApiKey::ApiVersions,
        ApiKey::BrokerHeartbeat,
    ];
    ApiTable::new(
        apis.iter()
            .map(|k| (*k, k.valid_versions().min, k.valid_versions().max)),
    )
    .unwrap()
}

fn random_body(api_key: ApiKey, version: i16, seed: u64) -> RequestKind {
    let g = &mut Gen::new(seed);
    let mut body = match api_key {
        ApiKey::Fetch => {
            // Raft Fetch: the metadata topic, so adaptation can translate it at every version.
            let mut r = FetchRequest::fill(g);
            for t in &mut r.topics {
                t.topic_id = crate::adapt::METADATA_TOPIC_ID;
            }
            r.forgotten_topics_data.clear();
            RequestKind::Fetch(r)
        }
        ApiKey::Vote => {
            let mut r = VoteRequest::fill(g);
            r.topics
                .iter_mut()
                .flat_map(|t| t.partitions.iter_mut())
                .for_each(|p| p.pre_vote &= version >= 2);
            RequestKind::Vote(r)
        }
        ApiKey::BeginQuorumEpoch => RequestKind::BeginQuorumEpoch(BeginQuorumEpochRequest::fill(g)),
        ApiKey::CreateTopics => RequestKind::CreateTopics(CreateTopicsRequest::fill(g)),
        ApiKey::BrokerHeartbeat => RequestKind::BrokerHeartbeat(BrokerHeartbeatRequest::fill(g)),
        other => panic!("no body generator for {other:?}"),
    };
    adapt_request_for_version(&mut body, version).unwrap();
    body
}

fn api_and_version() -> impl Strategy<Value = (ApiKey, i16)> {
    prop::sample::select(vec![
        ApiKey::Fetch,
        ApiKey::Vote,
        ApiKey::BeginQuorumEpoch,
        ApiKey::CreateTopics,
        ApiKey::BrokerHeartbeat,
    ])
    .prop_flat_map(|k| (Just(k), k.valid_versions().min..=k.valid_versions().max))
}

proptest! {
    /// Header v1 (non-flexible) and v2 (flexible) requests survive encode → frame → decode.
    #[test]
    fn requests_round_trip_through_frames(
        (api_key, version) in api_and_version(),
        correlation_id in any::<i32>(),
        client_id in prop::option::of("[a-z0-9-]{0,20}"),
        seed in any::<u64>(),
    ) {
        let mut header = request_header(api_key, version, correlation_id, "");
        header.client_id = client_id.map(StrBytes::from_string);
        let body = random_body(api_key, version, seed);
        let frame = encode_request_frame(&header, &body).unwrap();
        let mut buf = BytesMut::from(&frame[..]);
        let payload = FrameDecoder::default().decode(&mut buf).unwrap().unwrap();
        let InboundRequest::Request(decoded) = decode_request(payload, &wide_table()).unwrap() else { panic!() };
        prop_assert_eq!(decoded.api_key, api_key);
        prop_assert_eq!(decoded.header, header);
        prop_assert_eq!(decoded.body, body);
    }

    /// A request cut anywhere short of its end is refused, never mis-decoded.
    #[test]
    fn truncated_requests_are_refused((api_key, version) in api_and_version(), seed in any::<u64>(), cut in any::<prop::sample::Index>()) {
        let header = request_header(api_key, version, 1, "c");
        let mut payload = BytesMut::new();
        encode_request_into(&header, &random_body(api_key, version, seed), &mut payload).unwrap();
        let cut = cut.index(payload.len());
        prop_assert!(decode_request(payload.freeze().slice(..cut), &wide_table()).is_err());
    }
}

fn payload_of(header: &RequestHeader, body: &RequestKind) -> Bytes {
    let mut out = BytesMut::new();
    encode_request_into(header, body, &mut out).unwrap();
    out.freeze()
}

#[test]
fn errors_distinguish_unknown_api_disabled_api_version_header_body_and_trailing_bytes() {
    let table = ApiTable::new([(ApiKey::ApiVersions, 0, 4), (ApiKey::Vote, 0, 1)]).unwrap();
    let vote = RequestKind::Vote(VoteRequest::default());

    let mut unknown = BytesMut::new();
    unknown.put_i16(999);
    unknown.put_i16(0);
    unknown.put_i32(1);
    assert_eq!(
        decode_request(unknown.freeze(), &table),
        Err(RequestDecodeError::UnknownApiKey {
            api_key: 999,
            api_version: 0
        })
    );

    let fetch = payload_of(
        &request_header(ApiKey::Fetch, 17, 1, "c"),
        &RequestKind::Fetch(FetchRequest::default()),
    );
    assert!(matches!(
        decode_request(fetch, &table),
        Err(RequestDecodeError::ApiNotEnabled { .. })
    ));

    // Vote v2 is a valid Kafka version, but this table stops at v1.
    let vote_v2 = payload_of(&request_header(ApiKey::Vote, 2, 1, "c"), &vote);
    assert!(matches!(
        decode_request(vote_v2, &table),
        Err(RequestDecodeError::UnsupportedVersion {
            api_key: ApiKey::Vote,
            min_version: 0,
            max_version: 1,
            ..
        })
    ));

    assert!(matches!(
        decode_request(Bytes::from_static(&[0, 52, 0]), &table),
        Err(RequestDecodeError::MalformedHeader {
            api_key: Some(52),
            ..
        })
    ));
    // Header v2 declares a 40-byte client id that is not there.
    assert!(matches!(
        decode_request(
            Bytes::from_static(&[0, 52, 0, 1, 0, 0, 0, 1, 0, 40, b'x']),
            &table
        ),
        Err(RequestDecodeError::MalformedHeader {
            api_key: Some(52),
            ..
        })
    ));

    let good = payload_of(&request_header(ApiKey::Vote, 1, 1, "c"), &vote);
    let truncated = good.slice(..good.len() - 1);
    let err = decode_request(truncated, &table).unwrap_err();
    assert!(
        matches!(
            err,
            RequestDecodeError::MalformedBody {
                api_key: ApiKey::Vote,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.header().map(|h| h.correlation_id), Some(1));

    let mut trailing = BytesMut::from(&good[..]);
    trailing.put_u8(0);
    assert!(matches!(
        decode_request(trailing.freeze(), &table),
        Err(RequestDecodeError::TrailingBytes {
            api_key: ApiKey::Vote,
            trailing_bytes: 1,
            ..
        })
    ));
}

#[test]
fn null_client_id_reads_as_empty() {
    let table = ApiTable::new([(ApiKey::Vote, 0, 1)]).unwrap();
    let mut header = request_header(ApiKey::Vote, 1, 9, "");
    header.client_id = None;
    let InboundRequest::Request(decoded) = decode_request(
        payload_of(&header, &RequestKind::Vote(VoteRequest::default())),
        &table,
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(decoded.client_id(), "");
}

#[test]
fn unsupported_api_versions_request_is_not_an_error_and_its_body_is_ignored() {
    let table = ApiTable::new([(ApiKey::ApiVersions, 0, 3)]).unwrap();
    let mut payload = BytesMut::new();
    payload.put_i16(18);
    payload.put_i16(4); // above our max of 3
    payload.put_i32(5);
    payload.put_i16(-1); // null client id
    payload.put_u8(0); // header tagged fields
    payload.put_slice(b"garbage body a future version might have");
    let InboundRequest::UnsupportedApiVersions(header) =
        decode_request(payload.freeze(), &table).unwrap()
    else {
        panic!()
    };
    assert_eq!((header.request_api_version, header.correlation_id), (4, 5));
}

#[test]
fn response_header_version_follows_the_api_and_is_v0_for_api_versions() {
    // ApiVersions v3 is flexible but its header stays v0: correlation id then straight to the body.
    let av = encode_response(
        ApiKey::ApiVersions,
        3,
        0x01020304,
        &ResponseKind::ApiVersions(ApiVersionsResponse::default()),
    )
    .unwrap();
    assert_eq!(
        &av[..6],
        &[1, 2, 3, 4, 0, 0],
        "no tagged-field byte after the correlation id"
    );
    // CreateTopics v5 is flexible: header v1 has an (empty) tagged-field section.
    let ct = encode_response(
        ApiKey::CreateTopics,
        5,
        0x01020304,
        &ResponseKind::CreateTopics(CreateTopicsResponse::default()),
    )
    .unwrap();
    assert_eq!(&ct[..5], &[1, 2, 3, 4, 0]);
    // CreateTopics v4 is not flexible: header v0, the body's int32 throttle time follows at once.
    let ct4 = encode_response(
        ApiKey::CreateTopics,
        4,
        0x01020304,
        &ResponseKind::CreateTopics(CreateTopicsResponse::default()),
    )
    .unwrap();
    assert_eq!(&ct4[..], &[1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0]);
}

proptest! {
    /// Responses decode back to what was encoded, at every version of a few apis.
    #[test]
    fn responses_round_trip((api_key, version) in api_and_version(), correlation_id in any::<i32>(), seed in any::<u64>()) {
        let g = &mut Gen::new(seed);
        let mut body = match api_key {
            ApiKey::Fetch => {
                let mut r = FetchResponse::fill(g);
                r.responses.iter_mut().for_each(|t| t.topic_id = crate::adapt::METADATA_TOPIC_ID);
                ResponseKind::Fetch(r)
            }
            ApiKey::Vote => ResponseKind::Vote(VoteResponse::fill(g)),
            ApiKey::BeginQuorumEpoch => ResponseKind::BeginQuorumEpoch(BeginQuorumEpochResponse::fill(g)),
            ApiKey::CreateTopics => ResponseKind::CreateTopics(CreateTopicsResponse::fill(g)),
            _ => ResponseKind::BrokerHeartbeat(BrokerHeartbeatResponse::fill(g)),
        };
        adapt_response_for_version(&mut body, version).unwrap();
        let payload = encode_response(api_key, version, correlation_id, &body).unwrap();
        let (header, body_version, decoded) = decode_response(api_key, version, payload).unwrap();
        prop_assert_eq!(header.correlation_id, correlation_id);
        prop_assert_eq!(body_version, version);
        prop_assert_eq!(decoded, body);
    }
}

#[test]
fn client_decodes_the_kip_511_fallback_at_v0() {
    let table = ApiTable::new([(ApiKey::ApiVersions, 0, 3)]).unwrap();
    let fallback = crate::api_versions::unsupported_version_response(&table);
    let payload = encode_response(
        ApiKey::ApiVersions,
        0,
        3,
        &ResponseKind::ApiVersions(fallback.clone()),
    )
    .unwrap();
    // We asked at v4; the server answered a v0 body.
    let (_, body_version, decoded) = decode_response(ApiKey::ApiVersions, 4, payload).unwrap();
    assert_eq!(body_version, 0);
    assert_eq!(decoded, ResponseKind::ApiVersions(fallback));
}

/// kafka-protocol 0.18.0 sized `Vec::with_capacity` from the array length on the wire before
/// reading any element (upstream kafka-protocol-rs PRs #152, #161, #200): this 21-byte Vote
/// request claiming u32::MAX - 1 topics made the allocator abort the whole process ("memory
/// allocation of 343597383520 bytes failed"). The vendored, patched crate
/// (`vendor/kafka-protocol`) bounds the reservation by the bytes remaining, so it is an ordinary
/// decode error that closes one connection.
#[test]
fn huge_array_length_is_a_decode_error_not_an_abort() {
    let table = ApiTable::new([(ApiKey::Vote, 0, 2)]).unwrap();
    let mut payload = BytesMut::new();
    payload.put_i16(52);
    payload.put_i16(1);
    payload.put_i32(1);
    payload.put_i16(-1); // null client id
    payload.put_u8(0); // header tagged fields
    payload.put_u8(0); // null cluster id
    payload.put_i32(1); // voter id
    payload.put_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]); // compact array length varint u32::MAX
    assert!(matches!(
        decode_request(payload.freeze(), &table),
        Err(RequestDecodeError::MalformedBody { .. })
    ));
}

/// A tagged field's tag is an unsigned varint; kafka-protocol keeps tags of 2^31 and more as
/// negative keys of `unknown_tagged_fields`. The vendored writer counted and sized those but
/// skipped writing them, so re-encoding a request that carried one (here tag 0xffffffff, as
/// `scripts/fuzz request` found in CreatePartitions v2 and Fetch v13/v18) wrote bytes that no
/// longer decoded. Both are written now, the high tag last.
#[test]
fn unknown_tags_above_i32_max_re_encode_to_the_same_bytes() {
    let table = ApiTable::new([(ApiKey::DescribeCluster, 0, 1)]).unwrap();
    let mut body = DescribeClusterRequest::default().with_endpoint_type(2);
    body.unknown_tagged_fields
        .insert(-1, bytes::Bytes::from_static(b"\x07"));
    body.unknown_tagged_fields
        .insert(9, bytes::Bytes::from_static(b""));
    let header = request_header(ApiKey::DescribeCluster, 1, 5, "fuzz");
    let mut encoded = BytesMut::new();
    encode_request_into(
        &header,
        &RequestKind::DescribeCluster(body.clone()),
        &mut encoded,
    )
    .unwrap();
    // Tagged section: two fields, tag 9 (empty), then tag 0xffffffff (5-byte varint) = [7].
    assert!(encoded.ends_with(&[2, 9, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 7]));
    let InboundRequest::Request(decoded) =
        decode_request(encoded.clone().freeze(), &table).unwrap()
    else {
        panic!("not a request")
    };
    assert_eq!(decoded.body, RequestKind::DescribeCluster(body));
    let mut again = BytesMut::new();
    encode_request_into(&decoded.header, &decoded.body, &mut again).unwrap();
    assert_eq!(again, encoded);
}
