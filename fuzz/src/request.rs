//! The `request` target: what the controller listener does with the bytes of one connection.
//!
//! The input is the byte stream a client sends: size-prefixed frames (bounded by
//! `socket.request.max.bytes`), each a request header and body. Every frame goes through
//! `decode_request` against the served table; a decoded request is then checked the way the
//! listener and its peers use it:
//! - it re-encodes at its version to bytes that decode to the same request;
//! - `adapt_request_for_version` to its own version and to the newest served one either fails
//!   with a typed error or yields a request that encodes and decodes back unchanged;
//! - the listener's answers encode at the request's version: ApiVersions, a controller api's
//!   NOT_CONTROLLER and error responses (what a standby sends), and for an Envelope the
//!   unwrapped inner request (checked the same way) and its wrapped error response.
//!
//! A framing error ends the stream, as it closes the connection.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, RequestKind, ResponseKind};
use kraftwerk_controller::ControllerRequest;
use kraftwerk_protocol::api_versions::{
    answer_api_versions, unsupported_version_response, ApiVersionsFeatures, ServerIdentity,
    SupportedFeature,
};
use kraftwerk_protocol::codec::{
    decode_request_body, decode_request_header, encode_request_into, encode_response,
};
use kraftwerk_protocol::envelope::{unwrap_envelope, wrap_response};
use kraftwerk_protocol::{
    adapt_request_for_version, adapt_response_for_version, ApiTable, DecodedRequest, FrameDecoder,
    InboundRequest, DEFAULT_MAX_FRAME_BYTES,
};
use kraftwerk_raft::RaftRequest;

use crate::apis::served_table;

/// Kafka's UNKNOWN_SERVER_ERROR, the code of a request the controller could not handle.
const UNKNOWN_SERVER_ERROR: i16 = -1;

/// Runs one input: a client's byte stream.
pub fn run(data: &[u8]) {
    let table = served_table();
    let decoder = FrameDecoder::new(DEFAULT_MAX_FRAME_BYTES);
    let mut stream = BytesMut::from(data);
    // A framing error closes the connection; an incomplete frame waits for bytes that never come.
    while let Ok(Some(frame)) = decoder.decode(&mut stream) {
        check_frame(frame, table);
    }
}

/// Decodes one frame payload and checks what the listener would do with it.
pub fn check_frame(frame: Bytes, table: &ApiTable) {
    match kraftwerk_protocol::codec::decode_request(frame, table) {
        Ok(InboundRequest::Request(request)) => check_request(&request, table, true),
        Ok(InboundRequest::UnsupportedApiVersions(header)) => {
            let body = ResponseKind::ApiVersions(unsupported_version_response(table));
            encode_or_panic(ApiKey::ApiVersions, 0, &header, &body);
        }
        // The error is logged and the connection closed: its text must be printable.
        Err(e) => drop(e.to_string()),
    }
}

/// Checks a decoded request; `outer` is false for the request inside an Envelope.
pub fn check_request(request: &DecodedRequest, table: &ApiTable, outer: bool) {
    let version = request.version();
    round_trip(&request.header, &request.body, "decoded");
    let mut same = request.body.clone();
    if adapt_request_for_version(&mut same, version).is_ok() {
        round_trip(&request.header, &same, "adapted to its own version");
    }
    if let Some(range) = table.range(request.api_key) {
        let mut newest = request.body.clone();
        if adapt_request_for_version(&mut newest, range.max_version).is_ok() {
            let header = request
                .header
                .clone()
                .with_request_api_version(range.max_version);
            round_trip(&header, &newest, "adapted to the newest version");
        }
    }
    match &request.body {
        RequestKind::ApiVersions(body) => {
            let ours = ServerIdentity {
                cluster_id: "MkU3OEVBNTcwNTJENDM2Qg".to_owned(),
                node_id: 1,
            };
            let response = answer_api_versions(body, version, table, &features(), Some(&ours));
            respond(request, ResponseKind::ApiVersions(response));
        }
        RequestKind::Envelope(envelope) if outer => match unwrap_envelope(envelope, table) {
            Ok(forwarded) => {
                check_request(&forwarded.inner, table, false);
                for response in error_responses(&forwarded.inner.body) {
                    let wrapped = wrap_response(&forwarded.inner.header, response)
                        .unwrap_or_else(|e| panic!("forwarded response does not wrap: {e}"));
                    respond(request, ResponseKind::Envelope(wrapped));
                }
            }
            Err(e) => drop((e.error_code(), e.to_string())),
        },
        body => {
            let routed = RaftRequest::from_kind(body.clone()).is_ok()
                || ControllerRequest::from_kind(body.clone()).is_ok();
            assert!(routed, "{:?} is served but has no route", request.api_key);
            for response in error_responses(body) {
                respond(request, response);
            }
        }
    }
}

/// The answers built from a controller request without running its handler: NOT_CONTROLLER
/// (a standby's answer, where the broker looks for it) and UNKNOWN_SERVER_ERROR (an active
/// controller's answer to a result it cannot write). None for the Raft RPCs and the listener's
/// own apis.
fn error_responses(body: &RequestKind) -> Vec<ResponseKind> {
    let Ok(request) = ControllerRequest::from_kind(body.clone()) else {
        return Vec::new();
    };
    vec![
        request.not_controller_response().into_kind(),
        request
            .error_response(UNKNOWN_SERVER_ERROR, Some("fuzz"))
            .into_kind(),
    ]
}

/// Adapts `response` to the request's version and encodes it, as `Connection::respond` does.
fn respond(request: &DecodedRequest, mut response: ResponseKind) {
    let version = request.version();
    adapt_response_for_version(&mut response, version).unwrap_or_else(|e| {
        panic!(
            "{:?} v{version} response does not adapt: {e}",
            request.api_key
        )
    });
    encode_or_panic(request.api_key, version, &request.header, &response);
}

fn encode_or_panic(api_key: ApiKey, version: i16, header: &RequestHeader, body: &ResponseKind) {
    if let Err(e) = encode_response(api_key, version, header.correlation_id, body) {
        panic!("{api_key:?} v{version} response does not encode: {e}");
    }
}

/// Encodes `body` at the header's version, decodes it and encodes it again: it must decode, to
/// the same bytes (what the peer sees is what we meant). Bytes, not values, are compared:
/// float fields may hold NaN.
fn round_trip(header: &RequestHeader, body: &RequestKind, what: &str) {
    let version = header.request_api_version;
    let api_key = ApiKey::try_from(header.request_api_key).expect("a decoded api key");
    let encode = |header: &RequestHeader, body: &RequestKind| {
        let mut out = BytesMut::new();
        encode_request_into(header, body, &mut out)
            .map(|()| out.freeze())
            .unwrap_or_else(|e| {
                panic!("{api_key:?} v{version} request {what} does not encode: {e}")
            })
    };
    let first = encode(header, body);
    let mut bytes = first.clone();
    let decoded = decode_request_header(&mut bytes)
        .and_then(|(key, header)| decode_request_body(key, header, bytes))
        .unwrap_or_else(|e| panic!("{api_key:?} v{version} request {what} does not decode: {e}"));
    let second = encode(&decoded.header, &decoded.body);
    assert!(
        first == second,
        "{api_key:?} v{version} request {what} changes in an encode/decode round trip:\n{body:?}\n{:?}",
        decoded.body
    );
}

/// Features as a controller reports them in ApiVersions v3+.
fn features() -> ApiVersionsFeatures {
    ApiVersionsFeatures {
        supported: vec![SupportedFeature {
            name: "metadata.version".into(),
            min_version: 7,
            max_version: 27,
        }],
        finalized: None,
    }
}
