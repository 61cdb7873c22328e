//! Request handlers: pure functions from (latest image, request) to (records, response), as
//! Kafka's `*ControlManager` methods. They never change the image; the node appends the
//! records and replays them.

pub mod acls;
pub mod admin;
pub mod cluster;
pub mod configs;
pub mod delegation_tokens;
pub mod describe_configs;
pub mod disabled;
pub mod elections;
pub mod leader_isr;
pub mod partitions;
pub mod producer_ids;
pub mod quotas;
pub mod reassignment;
pub mod scram;
pub mod topics;
pub mod unregistration;

use kafka_protocol::error::ResponseError;

/// Kafka's default text for an error code (`Errors.message()` in 4.1.2), used where Java builds
/// `new ApiError(error)` without a message. Codes not listed here get no message.
pub fn default_message(error: ResponseError) -> Option<&'static str> {
    use ResponseError as E;
    Some(match error {
        E::UnknownTopicOrPartition => "This server does not host this topic-partition.",
        E::InvalidRequest => {
            "This most likely occurs because of a request being malformed by the client library or the message was \
             sent to an incompatible broker. See the broker logs for more details."
        }
        E::InvalidTopicException => {
            "The request attempted to perform an operation on an invalid topic."
        }
        E::NotController => "This is not the correct controller for this cluster.",
        E::TopicAuthorizationFailed => "Topic authorization failed.",
        E::GroupAuthorizationFailed => "Group authorization failed.",
        E::ClusterAuthorizationFailed => "Cluster authorization failed.",
        E::UnknownTopicId => "This server does not host this topic ID.",
        E::StaleBrokerEpoch => "Broker epoch has changed.",
        E::TopicDeletionDisabled => "Topic deletion is disabled.",
        E::ElectionNotNeeded => "Leader election not needed for topic partition.",
        E::PreferredLeaderNotAvailable => "The preferred leader was not available.",
        E::EligibleLeadersNotAvailable => "Eligible topic partition leaders are not available.",
        _ => return None,
    })
}

/// The response-level error of a failed request: code plus Kafka's default message.
pub fn error_with_default_message(error: ResponseError) -> crate::error::ApiError {
    crate::error::ApiError {
        code: error.code(),
        message: default_message(error).map(str::to_owned),
    }
}
