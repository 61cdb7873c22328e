//! Kafka's wire protocol without I/O: framing, request/response headers and bodies (through
//! `kafka-protocol` 0.18's generated codecs), ApiVersions, Envelope, the error codes a response
//! carries, version adaptation of message structs, and the [`constants`] every layer shares.
//!
//! - [`frame`]: 4-byte size prefix, bounded by `socket.request.max.bytes`.
//! - [`codec`]: request decode (header v1/v2, body, trailing-byte check, typed errors), response
//!   encode (header v0/v1; ApiVersions always v0), and the client-side counterparts.
//! - [`api_table`] / [`api_versions`]: what a listener advertises and the ApiVersions answers.
//! - [`envelope`]: unwrap forwarded requests, wrap their responses, the `NOT_CONTROLLER` rewrite.
//! - [`error_counts`]: the error codes Java's `errorCounts()` sees in a response.
//! - [`adapt`]: fit a request/response struct to a lower (or higher) version; with the
//!   `testing` feature, `adapt::fill` draws random messages of every api for other crates' tests.
//! - [`kinds`]: the api of a `RequestKind` / `ResponseKind`.
//! - [`constants`]: the metadata topic, batch limits, NOT_CONTROLLER.

/// The Kafka release whose message schemas (`clients/src/main/resources/common/message/*.json`
/// in `kafka-clients-<version>.jar`) generated `vendor/kafka-protocol` (see its
/// `KRAFTWERK-PATCH.md`): every api version this build can encode or decode is one of them.
pub const SCHEMA_KAFKA_VERSION: &str = "4.4.0";

pub mod adapt;
pub mod api_table;
pub mod api_versions;
pub mod codec;
pub mod constants;
pub mod envelope;
pub mod error_counts;
pub mod frame;
pub mod kafka_uuid;
pub mod kinds;

pub use adapt::{adapt_request_for_version, adapt_response_for_version, AdaptError};
pub use api_table::{ApiRange, ApiTable, ApiTableError};
pub use api_versions::{ApiVersionsFeatures, FinalizedFeatures, SupportedFeature};
pub use codec::{
    DecodedRequest, EncodeError, InboundRequest, RequestDecodeError, ResponseDecodeError,
};
pub use envelope::{EnvelopeError, ForwardedPrincipal, ForwardedRequest};
pub use frame::{FrameDecoder, FrameError, DEFAULT_MAX_FRAME_BYTES};
