//! Envelope (api 58, v0): how brokers forward client requests to the controller (KIP-590).
//!
//! Request: `RequestData` = the client's request header + body exactly as the broker received
//! them, `RequestPrincipal` = int16 version + `DefaultPrincipalData` (Kafka's
//! `DefaultKafkaPrincipalBuilder.serialize`), `ClientHostAddress` = raw 4 or 16 address bytes.
//! Response: `ResponseData` = the inner response header (inner correlation id, header version of
//! the inner api/version) + body at the inner version, or an error code and no data.
//!
//! Checks follow `EnvelopeUtils.handleEnvelopeRequest` in order: principal
//! (`PRINCIPAL_DESERIALIZATION_FAILURE`), client address (`INVALID_REQUEST`), inner header
//! (`UNSUPPORTED_VERSION`), forwardable api (`INVALID_REQUEST`), inner body
//! (`UNSUPPORTED_VERSION`). If the inner response carries `NOT_CONTROLLER` where `errorCounts()`
//! looks (for DescribeQuorum: `NOT_LEADER_OR_FOLLOWER`), the Envelope answers a bare top-level
//! `NOT_CONTROLLER` instead (`RequestChannel.buildResponseSend`) so the broker re-resolves the
//! active controller and retries.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use bytes::{Buf, Bytes};
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{
    ApiKey, DefaultPrincipalData, EnvelopeRequest, EnvelopeResponse, RequestHeader, ResponseKind,
};
use kafka_protocol::protocol::Decodable;

use super::adapt::adapt_response_for_version;
use super::api_table::ApiTable;
use super::codec::{
    decode_request_body, decode_request_header, encode_response, DecodedRequest, EncodeError,
    RequestDecodeError,
};
use super::error_counts::response_has_error;

/// Kafka's forwardable apis (`ApiKeys.forwardable`, checked against Kafka 4.1.2's jar).
pub const FORWARDABLE_APIS: [ApiKey; 21] = [
    ApiKey::CreateTopics,
    ApiKey::DeleteTopics,
    ApiKey::CreateAcls,
    ApiKey::DeleteAcls,
    ApiKey::AlterConfigs,
    ApiKey::CreatePartitions,
    ApiKey::CreateDelegationToken,
    ApiKey::RenewDelegationToken,
    ApiKey::ExpireDelegationToken,
    ApiKey::ElectLeaders,
    ApiKey::IncrementalAlterConfigs,
    ApiKey::AlterPartitionReassignments,
    ApiKey::ListPartitionReassignments,
    ApiKey::AlterClientQuotas,
    ApiKey::AlterUserScramCredentials,
    ApiKey::DescribeQuorum,
    ApiKey::UpdateFeatures,
    ApiKey::UnregisterBroker,
    ApiKey::AllocateProducerIds,
    ApiKey::AddRaftVoter,
    ApiKey::RemoveRaftVoter,
];

/// Whether Kafka lets brokers forward `api_key` in an Envelope.
pub fn is_forwardable(api_key: ApiKey) -> bool {
    FORWARDABLE_APIS.contains(&api_key)
}

/// The principal the broker authenticated the client as (`DefaultPrincipalData`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardedPrincipal {
    /// Principal type, e.g. `User`.
    pub principal_type: String,
    /// Principal name, e.g. `ANONYMOUS`.
    pub name: String,
    /// Whether the client authenticated with a delegation token.
    pub token_authenticated: bool,
}

/// An unwrapped Envelope: the inner request and who sent it to the broker.
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardedRequest {
    /// The client's request, header and body as the broker received them.
    pub inner: DecodedRequest,
    /// The client's principal.
    pub principal: ForwardedPrincipal,
    /// The client's address as seen by the broker.
    pub client_address: IpAddr,
}

/// Why an Envelope cannot be unwrapped; each maps to the error code Java answers with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EnvelopeError {
    /// `RequestPrincipal` is null or does not parse.
    #[error("cannot deserialize forwarded principal: {reason}")]
    PrincipalDeserialization {
        /// The parse error.
        reason: String,
    },
    /// `ClientHostAddress` is neither 4 nor 16 bytes.
    #[error("invalid forwarded client address of {len} bytes")]
    InvalidClientAddress {
        /// Its length.
        len: usize,
    },
    /// The inner header or body does not parse, the inner api is unknown, or its version is
    /// not one we serve.
    #[error("cannot parse forwarded request: {0}")]
    MalformedInner(RequestDecodeError),
    /// The inner api is not forwardable, or not served by this listener.
    #[error("api {0:?} is not enabled or not eligible for forwarding")]
    NotForwardable(ApiKey),
}

impl EnvelopeError {
    /// The Envelope `ErrorCode` Java sends for this failure.
    pub fn error_code(&self) -> i16 {
        match self {
            Self::PrincipalDeserialization { .. } => {
                ResponseError::PrincipalDeserializationFailure.code()
            }
            Self::InvalidClientAddress { .. } | Self::NotForwardable(_) => {
                ResponseError::InvalidRequest.code()
            }
            Self::MalformedInner(_) => ResponseError::UnsupportedVersion.code(),
        }
    }
}

fn decode_principal(bytes: Option<&Bytes>) -> Result<ForwardedPrincipal, EnvelopeError> {
    let err = |reason: String| EnvelopeError::PrincipalDeserialization { reason };
    let mut buf = bytes.cloned().ok_or_else(|| err("null principal".into()))?;
    if buf.remaining() < 2 {
        return Err(err(format!("{} bytes", buf.remaining())));
    }
    let version = buf.get_i16();
    let data = DefaultPrincipalData::decode(&mut buf, version)
        .map_err(|e| err(format!("v{version}: {e:#}")))?;
    Ok(ForwardedPrincipal {
        principal_type: data._type.to_string(),
        name: data.name.to_string(),
        token_authenticated: data.token_authenticated,
    })
}

fn decode_client_address(bytes: &[u8]) -> Result<IpAddr, EnvelopeError> {
    if let Ok(v4) = <[u8; 4]>::try_from(bytes) {
        Ok(IpAddr::V4(Ipv4Addr::from(v4)))
    } else if let Ok(v6) = <[u8; 16]>::try_from(bytes) {
        Ok(IpAddr::V6(Ipv6Addr::from(v6)))
    } else {
        Err(EnvelopeError::InvalidClientAddress { len: bytes.len() })
    }
}

/// Unwraps an Envelope request against the apis `table` serves.
pub fn unwrap_envelope(
    envelope: &EnvelopeRequest,
    table: &ApiTable,
) -> Result<ForwardedRequest, EnvelopeError> {
    let principal = decode_principal(envelope.request_principal.as_ref())?;
    let client_address = decode_client_address(&envelope.client_host_address)?;
    let mut payload = envelope.request_data.clone();
    let (api_key, header) =
        decode_request_header(&mut payload).map_err(EnvelopeError::MalformedInner)?;
    if !is_forwardable(api_key) {
        return Err(EnvelopeError::NotForwardable(api_key));
    }
    let Some(range) = table.range(api_key) else {
        return Err(EnvelopeError::NotForwardable(api_key));
    };
    if !range.contains(header.request_api_version) {
        return Err(EnvelopeError::MalformedInner(
            RequestDecodeError::UnsupportedVersion {
                api_key,
                header: Box::new(header),
                min_version: range.min_version,
                max_version: range.max_version,
            },
        ));
    }
    let inner =
        decode_request_body(api_key, header, payload).map_err(EnvelopeError::MalformedInner)?;
    Ok(ForwardedRequest {
        inner,
        principal,
        client_address,
    })
}

/// An Envelope response carrying only `error_code`.
pub fn envelope_error_response(error_code: i16) -> EnvelopeResponse {
    EnvelopeResponse::default()
        .with_error_code(error_code)
        .with_response_data(None)
}

/// Whether Java would replace the enveloped `response` by a bare `NOT_CONTROLLER` Envelope
/// (`RequestChannel.shouldReturnNotController`).
pub fn should_return_not_controller(api_key: ApiKey, response: &ResponseKind) -> bool {
    let code = if api_key == ApiKey::DescribeQuorum {
        ResponseError::NotLeaderOrFollower.code()
    } else {
        crate::constants::NOT_CONTROLLER
    };
    response_has_error(response, code)
}

/// Wraps the response to a forwarded request: adapted to and encoded at the inner version with
/// the inner correlation id, or a bare `NOT_CONTROLLER` Envelope (see module docs).
///
/// Errors: the inner response cannot be encoded at the inner version.
pub fn wrap_response(
    inner_header: &RequestHeader,
    mut response: ResponseKind,
) -> Result<EnvelopeResponse, EncodeError> {
    let version = inner_header.request_api_version;
    let api_key = ApiKey::try_from(inner_header.request_api_key).map_err(|()| EncodeError {
        what: "forwarded response".into(),
        reason: format!("unknown api key {}", inner_header.request_api_key),
    })?;
    if should_return_not_controller(api_key, &response) {
        return Ok(envelope_error_response(crate::constants::NOT_CONTROLLER));
    }
    adapt_response_for_version(&mut response, version).map_err(|e| EncodeError {
        what: format!("{api_key:?} v{version} response"),
        reason: e.to_string(),
    })?;
    let data = encode_response(api_key, version, inner_header.correlation_id, &response)?;
    Ok(EnvelopeResponse::default()
        .with_error_code(0)
        .with_response_data(Some(data)))
}

#[cfg(test)]
mod tests;
