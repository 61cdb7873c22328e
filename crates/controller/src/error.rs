//! Error types of the controller: protocol outcomes ([`ApiError`]) and broken replay
//! invariants ([`ReplayError`]).
//!
//! Kafka's controller throws `ApiException`s from its `*ControlManager` methods and turns them
//! into response error codes (`ApiError.fromThrowable`); here a handler returns an [`ApiError`]
//! value instead. A record that cannot be replayed (`RuntimeException` thrown from a Java
//! `replay` method) is a [`ReplayError`]: on the active controller the node treats it as fatal
//! (Kafka's `fatalFaultHandler`), because the in-memory state no longer matches the log.

use kafka_protocol::error::ResponseError;
use thiserror::Error;
use uuid::Uuid;

/// A Kafka error code with its optional message, as carried in a response
/// (`org.apache.kafka.common.requests.ApiError`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The Kafka error code (0 = NONE).
    pub code: i16,
    /// The error message, or `None` to let the response carry null.
    pub message: Option<String>,
}

impl ApiError {
    /// No error (code 0, no message).
    pub const NONE: ApiError = ApiError {
        code: 0,
        message: None,
    };

    /// An error with Kafka's code for `error` and a message.
    pub fn new(error: ResponseError, message: impl Into<String>) -> Self {
        ApiError {
            code: error.code(),
            message: Some(message.into()),
        }
    }

    /// An error with Kafka's code for `error` and no message (Java's `new ApiError(error)`
    /// uses the error's default message; responses built from it carry that text, so callers
    /// that need the exact text use [`ApiError::new`]).
    pub fn code_only(error: ResponseError) -> Self {
        ApiError {
            code: error.code(),
            message: None,
        }
    }

    /// True for any code other than NONE.
    pub fn is_failure(&self) -> bool {
        self.code != 0
    }
}

impl From<ResponseError> for ApiError {
    fn from(error: ResponseError) -> Self {
        ApiError::code_only(error)
    }
}

/// A metadata record that cannot be applied to the image: the log and the in-memory state
/// disagree. Mirrors the `RuntimeException`s of Kafka's `*ControlManager.replay` methods.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ReplayError {
    /// A TopicRecord for a name that already exists (`ReplicationControlManager.replay`).
    #[error("duplicate TopicRecord for {name}: existing topic id {existing}, new topic id {new}")]
    DuplicateTopic {
        /// Topic name.
        name: String,
        /// Topic id already registered under that name.
        existing: Uuid,
        /// Topic id of the new record.
        new: Uuid,
    },
    /// A TopicRecord whose id is already used by another topic.
    #[error("duplicate topic id {0} in TopicRecord")]
    DuplicateTopicId(Uuid),
    /// A PartitionRecord, PartitionChangeRecord or RemoveTopicRecord for an unknown topic id.
    #[error("no topic with id {0}")]
    UnknownTopic(Uuid),
    /// A PartitionChangeRecord for a partition that does not exist.
    #[error("no partition {topic_id}:{partition_id}")]
    UnknownPartition {
        /// Topic id.
        topic_id: Uuid,
        /// Partition index.
        partition_id: i32,
    },
    /// A ClearElrRecord naming an unknown topic.
    #[error("no topic named {0}")]
    UnknownTopicName(String),
    /// Directories whose length differs from the replica list
    /// (`InvalidReplicaDirectoriesException`).
    #[error(
        "partition {topic_id}:{partition_id}: {directories} directories for {replicas} replicas"
    )]
    InvalidReplicaDirectories {
        /// Topic id.
        topic_id: Uuid,
        /// Partition index.
        partition_id: i32,
        /// Number of directories.
        directories: usize,
        /// Number of replicas.
        replicas: usize,
    },
    /// A broker record (fence, unfence, registration change, unregister) for a broker id that is
    /// not registered.
    #[error("no broker registration for broker {0}")]
    UnknownBroker(i32),
    /// A broker record whose epoch differs from the registered broker epoch.
    #[error(
        "broker {broker_id}: record epoch {record_epoch} but registered epoch {registered_epoch}"
    )]
    BrokerEpochMismatch {
        /// Broker id.
        broker_id: i32,
        /// Epoch in the record.
        record_epoch: i64,
        /// Epoch of the current registration.
        registered_epoch: i64,
    },
    /// A log directory registered by two brokers.
    #[error("directory {directory} already assigned to broker {owner}, not {broker_id}")]
    DirectoryConflict {
        /// The directory id.
        directory: Uuid,
        /// The broker that owns it.
        owner: i32,
        /// The broker the record names.
        broker_id: i32,
    },
    /// A field value outside its legal range (e.g. `Fenced` not in -1..=1).
    #[error("invalid value {value} for field {field} in {record}")]
    InvalidField {
        /// Record type name.
        record: &'static str,
        /// Field name.
        field: &'static str,
        /// The value found.
        value: i64,
    },
    /// A FeatureLevelRecord for a level this controller does not support.
    #[error("unsupported level {level} of feature {name}")]
    UnsupportedFeatureLevel {
        /// Feature name.
        name: String,
        /// Level in the record.
        level: i16,
    },
    /// A ProducerIdsRecord whose NextProducerId does not increase
    /// (`ProducerIdControlManager.replay`).
    #[error("next producer id {next} is not greater than the current next producer id {current}")]
    ProducerIdNotIncreasing {
        /// Value in the record.
        next: i64,
        /// Current next producer id.
        current: i64,
    },
    /// A transaction marker out of order (`OffsetControlManager.replay`).
    #[error("{0}")]
    Transaction(String),
    /// Records handed to `replay_committed`/`replay_uncommitted` out of offset order.
    #[error("record offset {offset} is not after the last replayed offset {last}")]
    OffsetNotIncreasing {
        /// Offset given.
        offset: i64,
        /// Last offset already replayed.
        last: i64,
    },
}
