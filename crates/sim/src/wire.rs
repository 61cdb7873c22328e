//! The simulated wire: every request and response between simulated parties takes the path the
//! server's takes, so a version bug fails the simulation with its seed.
//!
//! Sending a request (the server's peer client, `net/peer/actor.rs`): the version is the highest
//! both sides' tables share, the struct is adapted to it, and it is encoded as a size-prefixed
//! frame with a request header. Receiving it (the listener, `net/connection.rs`): the frame is
//! split off and decoded against the receiver's served table. A response is adapted to the
//! request's version, encoded with the request's correlation id, and decoded by the sender for
//! the api and version it asked with.
//!
//! Two outcomes are not errors because the server has them too and the core handles them
//! (`peers.rs` turns them into `SendFailure::UnsupportedVersion`): no common version, and a
//! pre-vote for a peer below Vote v2. Anything else failing is a bug: a [`WireError`].

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use kraftwerk_protocol::adapt::{adapt_request_for_version, adapt_response_for_version};
use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_protocol::codec::{self, DecodedRequest, InboundRequest};
use kraftwerk_protocol::frame::FrameDecoder;
use kraftwerk_protocol::kinds::{request_api_key, response_api_key};
use kraftwerk_protocol::AdaptError;

/// A message that could not cross the wire although the server would send it: a bug.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError(pub String);

/// A request ready to go.
#[derive(Clone, Debug)]
pub struct EncodedRequest {
    /// The api.
    pub api_key: ApiKey,
    /// The negotiated version.
    pub version: i16,
    /// The correlation id in its header.
    pub correlation_id: i32,
    /// The frame, size prefix included.
    pub frame: Bytes,
}

/// What became of a request to send.
#[derive(Clone, Debug)]
pub enum Outbound {
    /// Encoded; deliver the frame.
    Sent(EncodedRequest),
    /// The peer cannot take it at any version we share (why, for the trace).
    Unsupported(String),
}

/// The version `ours` sends `api_key` at to a peer serving `theirs`: the highest both list.
pub fn negotiate(api_key: ApiKey, ours: &ApiTable, theirs: &ApiTable) -> Option<i16> {
    let theirs = theirs.range(api_key)?;
    ours.range(api_key)?
        .highest_common_version(theirs.min_version, theirs.max_version)
}

/// Negotiates, builds (`build` gets the version, as the peer client's callers do), adapts and
/// encodes a request.
pub fn encode_request(
    api_key: ApiKey,
    build: impl FnOnce(i16) -> RequestKind,
    ours: &ApiTable,
    theirs: &ApiTable,
    correlation_id: i32,
    client_id: &str,
) -> Result<Outbound, WireError> {
    let Some(version) = negotiate(api_key, ours, theirs) else {
        let ranges = (ours.range(api_key), theirs.range(api_key));
        return Ok(Outbound::Unsupported(format!(
            "no common version of {api_key:?}: {ranges:?}"
        )));
    };
    let mut request = build(version);
    if request_api_key(&request) != Some(api_key) {
        let built = request_api_key(&request);
        return Err(WireError(format!(
            "built {built:?} for a {api_key:?} request"
        )));
    }
    match adapt_request_for_version(&mut request, version) {
        Ok(()) => {}
        Err(e @ AdaptError::PreVoteNotSupported { .. }) => {
            return Ok(Outbound::Unsupported(e.to_string()))
        }
        Err(e) => return Err(WireError(format!("{api_key:?} v{version} request: {e}"))),
    }
    let header = codec::request_header(api_key, version, correlation_id, client_id);
    let frame =
        codec::encode_request_frame(&header, &request).map_err(|e| WireError(e.to_string()))?;
    Ok(Outbound::Sent(EncodedRequest {
        api_key,
        version,
        correlation_id,
        frame,
    }))
}

/// Decodes a request frame against the table the receiver serves.
pub fn decode_request(frame: Bytes, served: &ApiTable) -> Result<DecodedRequest, WireError> {
    let payload = unframe(frame)?;
    match codec::decode_request(payload, served) {
        Ok(InboundRequest::Request(request)) => Ok(request),
        Ok(InboundRequest::UnsupportedApiVersions(header)) => Err(WireError(format!(
            "ApiVersions v{} is not served",
            header.request_api_version
        ))),
        Err(e) => Err(WireError(format!("request refused by the listener: {e}"))),
    }
}

/// Adapts and encodes the response to a request of `api_key` at `version`.
pub fn encode_response(
    mut response: ResponseKind,
    api_key: ApiKey,
    version: i16,
    correlation_id: i32,
) -> Result<Bytes, WireError> {
    if response_api_key(&response) != Some(api_key) {
        let got = response_api_key(&response);
        return Err(WireError(format!(
            "a {api_key:?} request was answered with {got:?}"
        )));
    }
    adapt_response_for_version(&mut response, version)
        .map_err(|e| WireError(format!("{api_key:?} v{version} response: {e}")))?;
    codec::encode_response_frame(api_key, version, correlation_id, &response)
        .map_err(|e| WireError(e.to_string()))
}

/// Decodes a response frame as the answer to `request`.
pub fn decode_response(
    frame: Bytes,
    api_key: ApiKey,
    version: i16,
    correlation_id: i32,
) -> Result<ResponseKind, WireError> {
    let payload = unframe(frame)?;
    let (header, _, body) =
        codec::decode_response(api_key, version, payload).map_err(|e| WireError(e.to_string()))?;
    if header.correlation_id != correlation_id {
        return Err(WireError(format!(
            "{api_key:?} response has correlation id {}, the request {correlation_id}",
            header.correlation_id
        )));
    }
    Ok(body)
}

/// The payload of a frame that must be exactly one frame.
fn unframe(frame: Bytes) -> Result<Bytes, WireError> {
    let mut buf = BytesMut::from(&frame[..]);
    match FrameDecoder::default().decode(&mut buf) {
        Ok(Some(payload)) if buf.is_empty() => Ok(payload),
        Ok(Some(_)) => Err(WireError(format!("{} bytes after the frame", buf.len()))),
        Ok(None) => Err(WireError("truncated frame".into())),
        Err(e) => Err(WireError(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::vote_request::{PartitionData, TopicData};
    use kafka_protocol::messages::{VoteRequest, VoteResponse};
    use kraftwerk_node::served_apis::served_api_table;

    fn vote(pre_vote: bool) -> RequestKind {
        let partition = PartitionData::default().with_pre_vote(pre_vote);
        let topic = TopicData::default().with_partitions(vec![partition]);
        RequestKind::Vote(VoteRequest::default().with_topics(vec![topic]))
    }

    fn table(max_vote: i16) -> ApiTable {
        ApiTable::new([(ApiKey::Vote, 0, max_vote)]).unwrap()
    }

    #[test]
    fn a_request_and_its_response_cross_at_the_negotiated_version() {
        let served = served_api_table();
        let sent = encode_request(ApiKey::Vote, |_| vote(false), &served, &table(1), 7, "c");
        let Outbound::Sent(sent) = sent.unwrap() else {
            panic!("Vote v1 is common")
        };
        assert_eq!(sent.version, 1);
        let decoded = decode_request(sent.frame, &table(1)).unwrap();
        assert_eq!((decoded.version(), decoded.correlation_id()), (1, 7));
        let response = ResponseKind::Vote(VoteResponse::default());
        let frame = encode_response(response.clone(), ApiKey::Vote, 1, 7).unwrap();
        assert_eq!(
            decode_response(frame.clone(), ApiKey::Vote, 1, 7),
            Ok(response)
        );
        assert!(decode_response(frame, ApiKey::Vote, 1, 8).is_err());
    }

    #[test]
    fn a_pre_vote_to_a_peer_below_vote_v2_is_unsupported_not_an_error() {
        let served = served_api_table();
        let sent = encode_request(ApiKey::Vote, |_| vote(true), &served, &table(1), 1, "c");
        assert!(matches!(sent, Ok(Outbound::Unsupported(_))));
        let sent = encode_request(ApiKey::Vote, |_| vote(true), &served, &table(2), 1, "c");
        assert!(matches!(sent, Ok(Outbound::Sent(r)) if r.version == 2));
    }

    #[test]
    fn a_request_the_receiver_does_not_serve_is_an_error() {
        let sent = encode_request(ApiKey::Vote, |_| vote(false), &table(2), &table(2), 1, "c");
        let Ok(Outbound::Sent(sent)) = sent else {
            panic!("common version")
        };
        assert!(decode_request(sent.frame, &table(1)).is_err());
    }
}
