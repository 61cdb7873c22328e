//! Request and response headers and bodies on top of `kafka-protocol`'s generated codecs.
//!
//! Header versions follow the api and its version (`ApiKey::request_header_version` /
//! `response_header_version`): request header v1 (non-flexible) or v2 (flexible, tagged fields),
//! response header v0 or v1. ApiVersions responses always use header v0 (the crate's
//! `ApiVersionsResponse::header_version` returns 0 for every version, matching Kafka's
//! `ApiMessageTypeGenerator`: "ApiVersionsResponse always includes a v0 header").
//!
//! Decoding a request checks, in Kafka's order (`RequestHeader.parse`, `SocketServer.parseRequestHeader`,
//! `RequestContext.parseRequest`): a known api key, a parseable header, an api we serve at that
//! version, a parseable body, and (our addition) no bytes left after the body. An ApiVersions
//! request at a version we do not support is not an error: its body is not parsed and it is
//! answered per KIP-511 (see [`crate::api_versions::unsupported_version_response`]).

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, RequestKind, ResponseHeader, ResponseKind};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

use super::api_table::ApiTable;
use super::frame::{begin_frame, finish_frame};

/// A request decoded at a version we serve.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedRequest {
    /// The api, as named by `header.request_api_key`.
    pub api_key: ApiKey,
    /// The request header as received (client id `None` means null on the wire; Kafka treats
    /// it as empty).
    pub header: RequestHeader,
    /// The body decoded at `header.request_api_version`.
    pub body: RequestKind,
}

impl DecodedRequest {
    /// The request's api version.
    pub fn version(&self) -> i16 {
        self.header.request_api_version
    }

    /// The request's correlation id.
    pub fn correlation_id(&self) -> i32 {
        self.header.correlation_id
    }

    /// The client id, empty when null (Kafka's `RequestHeader.parse` does the same).
    pub fn client_id(&self) -> &str {
        client_id_of(&self.header)
    }
}

/// The client id of a header, empty when null.
pub fn client_id_of(header: &RequestHeader) -> &str {
    header.client_id.as_deref().unwrap_or("")
}

/// A successfully framed and classified request.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // short-lived, one per request; boxing buys nothing
pub enum InboundRequest {
    /// A request at a version we serve.
    Request(DecodedRequest),
    /// An ApiVersions request at a version we do not serve; the body was not parsed. Answer it
    /// with [`crate::api_versions::unsupported_version_response`] encoded at v0.
    UnsupportedApiVersions(RequestHeader),
}

/// Why a request frame was refused. Every variant means "close the connection" on a listener
/// (what Kafka's `Processor` does with an `InvalidRequestException`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestDecodeError {
    /// The frame is too short for, or does not parse as, a request header.
    #[error("malformed request header (api key {api_key:?}): {reason}")]
    MalformedHeader {
        /// The api key if at least two bytes were present.
        api_key: Option<i16>,
        /// The parse error.
        reason: String,
    },
    /// The api key is not one Kafka defines (as known to `kafka-protocol` 0.18).
    #[error("unknown api key {api_key} (version {api_version})")]
    UnknownApiKey {
        /// The raw api key.
        api_key: i16,
        /// The raw api version.
        api_version: i16,
    },
    /// A known api that this listener does not serve (not in its [`ApiTable`]).
    #[error("api {:?} is not enabled on this listener", .header.request_api_key)]
    ApiNotEnabled {
        /// The parsed header.
        header: Box<RequestHeader>,
    },
    /// An api we serve, at a version outside our advertised range.
    #[error("unsupported version {} of {api_key:?} (we serve {min_version}..={max_version})", .header.request_api_version)]
    UnsupportedVersion {
        /// The api.
        api_key: ApiKey,
        /// The parsed header.
        header: Box<RequestHeader>,
        /// Our lowest version.
        min_version: i16,
        /// Our highest version.
        max_version: i16,
    },
    /// The body does not parse at the header's version.
    #[error("malformed {api_key:?} v{} body: {reason}", .header.request_api_version)]
    MalformedBody {
        /// The api.
        api_key: ApiKey,
        /// The parsed header.
        header: Box<RequestHeader>,
        /// The parse error.
        reason: String,
    },
    /// The body parsed but bytes were left over.
    #[error("{trailing_bytes} trailing bytes after {api_key:?} v{} body", .header.request_api_version)]
    TrailingBytes {
        /// The api.
        api_key: ApiKey,
        /// The parsed header.
        header: Box<RequestHeader>,
        /// How many bytes followed the body.
        trailing_bytes: usize,
    },
}

impl RequestDecodeError {
    /// The parsed header, for variants that got that far (for logging client id and api).
    pub fn header(&self) -> Option<&RequestHeader> {
        match self {
            Self::MalformedHeader { .. } | Self::UnknownApiKey { .. } => None,
            Self::ApiNotEnabled { header }
            | Self::UnsupportedVersion { header, .. }
            | Self::MalformedBody { header, .. }
            | Self::TrailingBytes { header, .. } => Some(header),
        }
    }
}

/// Why a message could not be encoded (a field set that the target version cannot carry, a
/// version outside the codec's range, an unknown api key in a header).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot encode {what}: {reason}")]
pub struct EncodeError {
    /// What was being encoded, e.g. `Fetch v17 response`.
    pub what: String,
    /// The codec's complaint.
    pub reason: String,
}

/// Why a response frame could not be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResponseDecodeError {
    /// The header does not parse.
    #[error("malformed response header for {api_key:?} v{version}: {reason}")]
    MalformedHeader {
        /// The api of the request this answers.
        api_key: ApiKey,
        /// The request version.
        version: i16,
        /// The parse error.
        reason: String,
    },
    /// The body does not parse.
    #[error("malformed {api_key:?} v{version} response body: {reason}")]
    MalformedBody {
        /// The api.
        api_key: ApiKey,
        /// The version.
        version: i16,
        /// The parse error.
        reason: String,
    },
    /// Bytes left after the body.
    #[error("{trailing_bytes} trailing bytes after {api_key:?} v{version} response body")]
    TrailingBytes {
        /// The api.
        api_key: ApiKey,
        /// The version.
        version: i16,
        /// How many bytes followed the body.
        trailing_bytes: usize,
    },
}

/// Decodes a request header from the front of `payload` (advancing it), choosing the header
/// version from the api key and version in its first four bytes.
pub fn decode_request_header(
    payload: &mut Bytes,
) -> Result<(ApiKey, RequestHeader), RequestDecodeError> {
    if payload.len() < 4 {
        let api_key = (payload.len() >= 2).then(|| i16::from_be_bytes([payload[0], payload[1]]));
        return Err(RequestDecodeError::MalformedHeader {
            api_key,
            reason: format!("{} bytes", payload.len()),
        });
    }
    let raw_key = i16::from_be_bytes([payload[0], payload[1]]);
    let raw_version = i16::from_be_bytes([payload[2], payload[3]]);
    let api_key = ApiKey::try_from(raw_key).map_err(|()| RequestDecodeError::UnknownApiKey {
        api_key: raw_key,
        api_version: raw_version,
    })?;
    let header_version = api_key.request_header_version(raw_version);
    let header = RequestHeader::decode(payload, header_version).map_err(|e| {
        RequestDecodeError::MalformedHeader {
            api_key: Some(raw_key),
            reason: format!("{e:#}"),
        }
    })?;
    Ok((api_key, header))
}

/// Decodes a request body of `api_key` at `version` that must span all of `payload`.
pub fn decode_request_body(
    api_key: ApiKey,
    header: RequestHeader,
    mut payload: Bytes,
) -> Result<DecodedRequest, RequestDecodeError> {
    let version = header.request_api_version;
    let body = match RequestKind::decode(api_key, &mut payload, version) {
        Ok(body) => body,
        Err(e) => {
            return Err(RequestDecodeError::MalformedBody {
                api_key,
                header: Box::new(header),
                reason: format!("{e:#}"),
            })
        }
    };
    if payload.has_remaining() {
        return Err(RequestDecodeError::TrailingBytes {
            api_key,
            header: Box::new(header),
            trailing_bytes: payload.remaining(),
        });
    }
    Ok(DecodedRequest {
        api_key,
        header,
        body,
    })
}

/// Decodes one request frame payload (without its size prefix) against the apis `table` serves.
pub fn decode_request(
    mut payload: Bytes,
    table: &ApiTable,
) -> Result<InboundRequest, RequestDecodeError> {
    let (api_key, header) = decode_request_header(&mut payload)?;
    let version = header.request_api_version;
    let api_versions_range = table.range(ApiKey::ApiVersions);
    if api_key == ApiKey::ApiVersions && api_versions_range.is_some_and(|r| !r.contains(version)) {
        // Kafka accepts ApiVersions at any version and answers unknown ones with v0 (KIP-511).
        return Ok(InboundRequest::UnsupportedApiVersions(header));
    }
    let Some(range) = table.range(api_key) else {
        return Err(RequestDecodeError::ApiNotEnabled {
            header: Box::new(header),
        });
    };
    if !range.contains(version) {
        return Err(RequestDecodeError::UnsupportedVersion {
            api_key,
            header: Box::new(header),
            min_version: range.min_version,
            max_version: range.max_version,
        });
    }
    decode_request_body(api_key, header, payload).map(InboundRequest::Request)
}

/// Encodes a request header and body (no size prefix) into `out`.
pub fn encode_request_into(
    header: &RequestHeader,
    body: &RequestKind,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let version = header.request_api_version;
    let api_key = ApiKey::try_from(header.request_api_key).map_err(|()| EncodeError {
        what: "request header".into(),
        reason: format!("unknown api key {}", header.request_api_key),
    })?;
    let what = || format!("{api_key:?} v{version} request");
    header
        .encode(out, api_key.request_header_version(version))
        .map_err(|e| EncodeError {
            what: what(),
            reason: format!("header: {e:#}"),
        })?;
    body.encode(out, version).map_err(|e| EncodeError {
        what: what(),
        reason: format!("{e:#}"),
    })
}

/// Encodes a request as one frame (size prefix included).
pub fn encode_request_frame(
    header: &RequestHeader,
    body: &RequestKind,
) -> Result<Bytes, EncodeError> {
    let mut out = BytesMut::new();
    let at = begin_frame(&mut out);
    encode_request_into(header, body, &mut out)?;
    finish_frame(&mut out, at);
    Ok(out.freeze())
}

/// Builds the header of a request we send.
pub fn request_header(
    api_key: ApiKey,
    version: i16,
    correlation_id: i32,
    client_id: &str,
) -> RequestHeader {
    RequestHeader::default()
        .with_request_api_key(api_key as i16)
        .with_request_api_version(version)
        .with_correlation_id(correlation_id)
        .with_client_id(Some(StrBytes::from_string(client_id.to_owned())))
}

/// Encodes a response header and body (no size prefix) into `out`, with the header version for
/// `api_key`/`version` (always v0 for ApiVersions).
pub fn encode_response_into(
    api_key: ApiKey,
    version: i16,
    correlation_id: i32,
    body: &ResponseKind,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let what = || format!("{api_key:?} v{version} response");
    ResponseHeader::default()
        .with_correlation_id(correlation_id)
        .encode(out, api_key.response_header_version(version))
        .map_err(|e| EncodeError {
            what: what(),
            reason: format!("header: {e:#}"),
        })?;
    body.encode(out, version).map_err(|e| EncodeError {
        what: what(),
        reason: format!("{e:#}"),
    })
}

/// Encodes a response (header + body, no size prefix) into fresh bytes: the form an Envelope's
/// `ResponseData` carries.
pub fn encode_response(
    api_key: ApiKey,
    version: i16,
    correlation_id: i32,
    body: &ResponseKind,
) -> Result<Bytes, EncodeError> {
    let mut out = BytesMut::new();
    encode_response_into(api_key, version, correlation_id, body, &mut out)?;
    Ok(out.freeze())
}

/// Encodes a response as one frame (size prefix included).
pub fn encode_response_frame(
    api_key: ApiKey,
    version: i16,
    correlation_id: i32,
    body: &ResponseKind,
) -> Result<Bytes, EncodeError> {
    let mut out = BytesMut::new();
    let at = begin_frame(&mut out);
    encode_response_into(api_key, version, correlation_id, body, &mut out)?;
    finish_frame(&mut out, at);
    Ok(out.freeze())
}

/// Decodes a response frame payload for a request of `api_key` at `version`: header (v0 or v1)
/// then a body spanning the rest.
///
/// ApiVersions is special (Kafka's `ApiVersionsResponse.parse`): a server that does not support
/// the request version answers `UNSUPPORTED_VERSION` with a v0 body, so when the error code (the
/// first body field in every version) is 35 the body is decoded at v0. The returned version is
/// the one the body was decoded at.
pub fn decode_response(
    api_key: ApiKey,
    version: i16,
    mut payload: Bytes,
) -> Result<(ResponseHeader, i16, ResponseKind), ResponseDecodeError> {
    let header = ResponseHeader::decode(&mut payload, api_key.response_header_version(version))
        .map_err(|e| ResponseDecodeError::MalformedHeader {
            api_key,
            version,
            reason: format!("{e:#}"),
        })?;
    let mut body_version = version;
    if api_key == ApiKey::ApiVersions && payload.len() >= 2 {
        let error_code = i16::from_be_bytes([payload[0], payload[1]]);
        if error_code == kafka_protocol::error::ResponseError::UnsupportedVersion.code() {
            body_version = 0;
        }
    }
    let body = ResponseKind::decode(api_key, &mut payload, body_version).map_err(|e| {
        ResponseDecodeError::MalformedBody {
            api_key,
            version: body_version,
            reason: format!("{e:#}"),
        }
    })?;
    if payload.has_remaining() {
        return Err(ResponseDecodeError::TrailingBytes {
            api_key,
            version: body_version,
            trailing_bytes: payload.remaining(),
        });
    }
    Ok((header, body_version, body))
}

#[cfg(test)]
mod tests;
