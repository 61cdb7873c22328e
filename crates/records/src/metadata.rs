//! Metadata records of `__cluster_metadata`, framed as `ApiMessageAndVersion`
//! (Kafka `AbstractApiMessageSerde` frames them; the types are `metadata/src/main/resources/common/metadata/*.json`).
//!
//! A data record's value is `unsigned varint frame version (1)`, `unsigned varint api key`,
//! `unsigned varint record version`, then the record body in flexible encoding
//! (`AbstractApiMessageSerde`, `MetadataRecordSerde`). Each record type is a plain Rust struct
//! named after its JSON schema (`RegisterBrokerRecord`, ...) with snake_case fields, JSON
//! defaults in `Default`, and `unknown_tagged_fields` so unknown tags survive a round trip.
//! The codecs are our own (modules `wire` and `records`); kafka-protocol has no metadata records.
//!
//! Versions cover Kafka 4.1.2 plus the 4.4 additions (RegisterBrokerRecord v4,
//! BrokerRegistrationChangeRecord v3, UnregisterControllerRecord). A Kafka 4.1 peer rejects
//! those: which version to write is the controller's call, from metadata.version.

use bytes::Bytes;
use thiserror::Error;

use crate::codec::{put_uvarint, ReadError, Reader};

mod records;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
pub(crate) mod wire;

pub use records::*;
use wire::{ValueError, Wire};

/// Why a metadata record could not be encoded or decoded. The messages follow Java's
/// (`MetadataParseException`, `UnsupportedVersionException`) where one exists.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// Frame version 0: "upgrades from the preview release of KRaft in 2.8 are not supported".
    #[error("could not deserialize metadata record with frame version 0 (KRaft 2.8 preview format is not supported)")]
    FrameVersionZero,
    /// A frame version other than 0 or 1.
    #[error("unknown frame version {0} (only frame version 1 is supported)")]
    UnknownFrameVersion(u32),
    /// An api key with no metadata record type (6, 13, 16 and anything past the last type).
    #[error("unknown metadata record api key {0}")]
    UnknownApiKey(u32),
    /// A version outside the record's valid versions.
    #[error("can't read or write version {version} of {record}")]
    UnsupportedVersion {
        /// Record name, e.g. "PartitionRecord".
        record: &'static str,
        /// The requested version.
        version: u32,
    },
    /// A field absent in the version holds a non-default value (Java: "Attempted to write a
    /// non-default X at version Y").
    #[error("attempted to write a non-default {field} at version {version}")]
    NonDefaultAtVersion {
        /// Field name.
        field: &'static str,
        /// The version being written.
        version: i16,
    },
    /// Null in a field that is not nullable at this version (Java: "non-nullable field X was
    /// serialized as null" on read, NullPointerException on write).
    #[error("non-nullable field {field} is null at version {version}")]
    NullNotAllowed {
        /// Field name.
        field: &'static str,
        /// The version.
        version: i16,
    },
    /// A known tag read at a version where its field is not tagged ("Tag N is not valid for
    /// version V").
    #[error("tag {tag} is not valid for version {version}")]
    TagNotValid {
        /// The tag.
        tag: u32,
        /// The version.
        version: i16,
    },
    /// `unknown_tagged_fields` holds a tag that belongs to a known field.
    #[error("unknown tagged field {tag} collides with a known field's tag")]
    UnknownTagCollision {
        /// The tag.
        tag: u32,
    },
    /// The same unknown tag twice in one tagged-field section.
    #[error("duplicate tagged field {tag}")]
    DuplicateTag {
        /// The tag.
        tag: u32,
    },
    /// A field's bytes are truncated or invalid.
    #[error("malformed {field}: {reason}")]
    Malformed {
        /// Field name ("frame" for the frame header).
        field: &'static str,
        /// What went wrong.
        reason: ReadError,
    },
    /// Bytes left after the record body (Java: "Found N byte(s) of garbage after K").
    #[error("found {count} byte(s) of garbage after {record}")]
    TrailingBytes {
        /// Record name.
        record: &'static str,
        /// Leftover bytes.
        count: usize,
    },
}

/// Turns a struct-level codec failure into a [`RecordError`].
fn value_error(e: ValueError) -> RecordError {
    match e {
        ValueError::Nested(inner) => *inner,
        ValueError::Read(reason) => RecordError::Malformed {
            field: "body",
            reason,
        },
        ValueError::Null => RecordError::NullNotAllowed {
            field: "body",
            version: -1,
        },
    }
}

/// The frame version `AbstractApiMessageSerde` writes and the only one it reads.
pub const FRAME_VERSION: u32 = 1;

/// Declares [`MetadataRecord`] from (variant, struct, api key, min version, max version).
macro_rules! metadata_records {
    ($( $(#[$doc:meta])* $variant:ident($ty:ident) = $key:literal, $min:literal ..= $max:literal; )*) => {
        /// Any metadata record, by type (`MetadataRecordType`).
        #[derive(Clone, Debug, PartialEq)]
        pub enum MetadataRecord {
            $( $(#[$doc])* $variant($ty), )*
        }

        $(
            impl From<$ty> for MetadataRecord {
                fn from(record: $ty) -> Self {
                    MetadataRecord::$variant(record)
                }
            }
        )*

        impl MetadataRecord {
            /// The record's api key (`MetadataRecordType.id`).
            pub fn api_key(&self) -> i16 {
                match self { $( MetadataRecord::$variant(_) => $key, )* }
            }

            /// The JSON schema name, e.g. "RegisterBrokerRecord".
            pub fn name(&self) -> &'static str {
                match self { $( MetadataRecord::$variant(_) => stringify!($ty), )* }
            }

            /// Lowest and highest version this crate reads and writes (inclusive).
            pub fn valid_versions(&self) -> (i16, i16) {
                match self { $( MetadataRecord::$variant(_) => ($min, $max), )* }
            }

            /// Name and version range of the record type with this api key, if any.
            pub fn type_info(api_key: u32) -> Option<(&'static str, i16, i16)> {
                match api_key {
                    $( $key => Some((stringify!($ty), $min, $max)), )*
                    _ => None,
                }
            }

            /// Writes the body (no frame) at `version`, which must be valid for the type.
            pub fn encode_body(&self, version: i16, out: &mut Vec<u8>) -> Result<(), RecordError> {
                let (min, max) = self.valid_versions();
                if version < min || version > max {
                    return Err(RecordError::UnsupportedVersion { record: self.name(), version: version as u32 });
                }
                match self { $( MetadataRecord::$variant(r) => r.write(out, version), )* }
                    .map_err(value_error)
            }

            /// Reads the body of record type `api_key` at `version` from `r`, leaving any
            /// trailing bytes unread.
            pub fn decode_body(api_key: u32, version: u32, r: &mut Reader<'_>) -> Result<Self, RecordError> {
                let (name, min, max) = Self::type_info(api_key).ok_or(RecordError::UnknownApiKey(api_key))?;
                if version < min as u32 || version > max as u32 {
                    return Err(RecordError::UnsupportedVersion { record: name, version });
                }
                let version = version as i16;
                match api_key {
                    $( $key => $ty::read(r, version).map(MetadataRecord::$variant), )*
                    _ => unreachable!("type_info knows api key {api_key}"),
                }
                .map_err(value_error)
            }

            /// A random record of type `api_key` valid at `version`, for property tests.
            #[cfg(test)]
            pub(crate) fn random(api_key: i16, rng: &mut testing::Rng, version: i16) -> Self {
                use testing::RandomValue;
                match api_key {
                    $( $key => MetadataRecord::$variant($ty::random(rng, version)), )*
                    _ => panic!("no metadata record with api key {api_key}"),
                }
            }
        }

        /// Every (api key, min version, max version), in api key order.
        pub const METADATA_RECORD_TYPES: &[(i16, &str, i16, i16)] = &[
            $( ($key, stringify!($ty), $min, $max), )*
        ];
    };
}

metadata_records! {
    /// Api key 0: a broker registered (new incarnation or re-registration).
    RegisterBroker(RegisterBrokerRecord) = 0, 0..=4;
    /// Api key 1: a broker was unregistered.
    UnregisterBroker(UnregisterBrokerRecord) = 1, 0..=0;
    /// Api key 2: a topic was created.
    Topic(TopicRecord) = 2, 0..=0;
    /// Api key 3: a partition was created (full state).
    Partition(PartitionRecord) = 3, 0..=2;
    /// Api key 4: a dynamic config was set (value `Some`) or deleted (`None`).
    Config(ConfigRecord) = 4, 0..=0;
    /// Api key 5: a partition changed (only the changed fields are set).
    PartitionChange(PartitionChangeRecord) = 5, 0..=2;
    /// Api key 7: a broker was fenced (before metadata.version 3.3-IV2).
    FenceBroker(FenceBrokerRecord) = 7, 0..=0;
    /// Api key 8: a broker was unfenced (before metadata.version 3.3-IV2).
    UnfenceBroker(UnfenceBrokerRecord) = 8, 0..=0;
    /// Api key 9: a topic was deleted.
    RemoveTopic(RemoveTopicRecord) = 9, 0..=0;
    /// Api key 10: a delegation token was created or renewed.
    DelegationToken(DelegationTokenRecord) = 10, 0..=0;
    /// Api key 11: a SCRAM credential was set.
    UserScramCredential(UserScramCredentialRecord) = 11, 0..=0;
    /// Api key 12: a feature level (metadata.version, kraft.version, ...) was finalized.
    FeatureLevel(FeatureLevelRecord) = 12, 0..=0;
    /// Api key 14: a client quota was set or removed.
    ClientQuota(ClientQuotaRecord) = 14, 0..=0;
    /// Api key 15: a block of producer ids was allocated.
    ProducerIds(ProducerIdsRecord) = 15, 0..=0;
    /// Api key 17: a broker's registration changed (fencing, controlled shutdown, log dirs).
    BrokerRegistrationChange(BrokerRegistrationChangeRecord) = 17, 0..=3;
    /// Api key 18: an ACL was created.
    AccessControlEntry(AccessControlEntryRecord) = 18, 0..=0;
    /// Api key 19: an ACL was deleted.
    RemoveAccessControlEntry(RemoveAccessControlEntryRecord) = 19, 0..=0;
    /// Api key 20: no-op, written periodically so the log (and high watermark) advances.
    NoOp(NoOpRecord) = 20, 0..=0;
    /// Api key 21: ZooKeeper migration state (JSON file ZkMigrationRecord.json).
    ZkMigrationState(ZkMigrationStateRecord) = 21, 0..=0;
    /// Api key 22: a SCRAM credential was deleted.
    RemoveUserScramCredential(RemoveUserScramCredentialRecord) = 22, 0..=0;
    /// Api key 23: start of a metadata transaction.
    BeginTransaction(BeginTransactionRecord) = 23, 0..=0;
    /// Api key 24: end of a metadata transaction.
    EndTransaction(EndTransactionRecord) = 24, 0..=0;
    /// Api key 25: abort of a metadata transaction.
    AbortTransaction(AbortTransactionRecord) = 25, 0..=0;
    /// Api key 26: a delegation token was deleted.
    RemoveDelegationToken(RemoveDelegationTokenRecord) = 26, 0..=0;
    /// Api key 27: a controller registered (KIP-919).
    RegisterController(RegisterControllerRecord) = 27, 0..=0;
    /// Api key 28: clear the ELR of a topic's partitions (all topics if the name is empty).
    ClearElr(ClearElrRecord) = 28, 0..=0;
    /// Api key 29 (Kafka 4.4): a controller was unregistered.
    UnregisterController(UnregisterControllerRecord) = 29, 0..=0;
}

/// A metadata record with the version it is (to be) serialized at (`ApiMessageAndVersion`).
#[derive(Clone, Debug, PartialEq)]
pub struct ApiMessageAndVersion {
    /// The record.
    pub record: MetadataRecord,
    /// Record version, within `record.valid_versions()`.
    pub version: i16,
}

impl ApiMessageAndVersion {
    /// Pairs a record with a version (checked on [`encode`](Self::encode)).
    pub fn new(record: impl Into<MetadataRecord>, version: i16) -> Self {
        ApiMessageAndVersion {
            record: record.into(),
            version,
        }
    }

    /// Serializes as `AbstractApiMessageSerde.write` does: frame version 1, api key, version
    /// (unsigned varints), then the body. This is the value of a metadata data record.
    ///
    /// Errors: [`RecordError::UnsupportedVersion`], [`RecordError::NonDefaultAtVersion`],
    /// [`RecordError::NullNotAllowed`], [`RecordError::UnknownTagCollision`], or
    /// [`RecordError::Malformed`] for a string over 0x7fff bytes.
    pub fn encode(&self) -> Result<Bytes, RecordError> {
        let mut out = Vec::new();
        put_uvarint(&mut out, FRAME_VERSION);
        put_uvarint(&mut out, self.record.api_key() as u32);
        put_uvarint(&mut out, self.version as u32);
        self.record.encode_body(self.version, &mut out)?;
        Ok(Bytes::from(out))
    }

    /// Parses a record value as `AbstractApiMessageSerde.read` does: rejects frame version 0
    /// or ≠ 1, frame fields above 32767, unknown api keys, unsupported versions, malformed
    /// bodies and trailing bytes.
    pub fn decode(buf: &[u8]) -> Result<Self, RecordError> {
        let mut r = Reader::new(buf);
        let frame = |r: &mut Reader<'_>| -> Result<u32, RecordError> {
            let v = r.uvarint().map_err(|reason| RecordError::Malformed {
                field: "frame",
                reason,
            })?;
            if v > i16::MAX as u32 {
                return Err(RecordError::Malformed {
                    field: "frame",
                    reason: ReadError::Malformed("value too large"),
                });
            }
            Ok(v)
        };
        match frame(&mut r)? {
            0 => return Err(RecordError::FrameVersionZero),
            FRAME_VERSION => {}
            other => return Err(RecordError::UnknownFrameVersion(other)),
        }
        let api_key = frame(&mut r)?;
        let version = frame(&mut r)?;
        let record = MetadataRecord::decode_body(api_key, version, &mut r)?;
        if r.remaining() != 0 {
            return Err(RecordError::TrailingBytes {
                record: record.name(),
                count: r.remaining(),
            });
        }
        Ok(ApiMessageAndVersion {
            record,
            version: version as i16,
        })
    }
}
