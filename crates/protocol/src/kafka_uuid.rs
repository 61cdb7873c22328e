//! Kafka's text form of a Uuid (`org.apache.kafka.common.Uuid.toString`/`fromString`: URL-safe
//! base64 of the 16 bytes, no padding) and the rules of directory ids
//! (`org.apache.kafka.common.DirectoryId`). Cluster ids, topic ids and directory ids are all
//! written this way in `meta.properties`, `quorum-state`, `partition.metadata` and the tools'
//! output.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use thiserror::Error;
use uuid::Uuid;

/// Why a string is not a Kafka Uuid (`Uuid.fromString`).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum KafkaUuidError {
    /// More than 24 characters.
    #[error("input string `{0}` is too long to be decoded as a base64 UUID")]
    TooLong(String),
    /// Not URL-safe base64.
    #[error("input string `{0}` is not URL-safe base64")]
    NotBase64(String),
    /// Decodes to other than 16 bytes.
    #[error(
        "input string `{input}` decoded as {len} bytes, which is not equal to the expected 16 \
         bytes of a base64-encoded UUID"
    )]
    WrongLength {
        /// The input.
        input: String,
        /// Decoded length in bytes.
        len: usize,
    },
}

/// Java's `Base64.getUrlDecoder()`: padding optional, unused trailing bits ignored.
const JAVA_URL_DECODER: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Kafka's text form of a Uuid (`Uuid.toString`): URL-safe base64 of the 16 big-endian bytes
/// (most significant long first), no padding, 22 characters.
pub fn kafka_uuid_to_string(id: Uuid) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id.as_bytes())
}

/// Parses Kafka's text form of a Uuid as `Uuid.fromString` does: at most 24 characters of
/// URL-safe base64 (padding optional) decoding to exactly 16 bytes.
pub fn kafka_uuid_from_string(text: &str) -> Result<Uuid, KafkaUuidError> {
    if text.chars().count() > 24 {
        return Err(KafkaUuidError::TooLong(text.to_owned()));
    }
    let bytes = JAVA_URL_DECODER
        .decode(text)
        .map_err(|_| KafkaUuidError::NotBase64(text.to_owned()))?;
    let bytes: [u8; 16] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| KafkaUuidError::WrongLength {
            input: text.to_owned(),
            len: bytes.len(),
        })?;
    Ok(Uuid::from_bytes(bytes))
}

/// `DirectoryId.MIGRATING` (Uuid(0,0)): replica directory unknown because the record predates
/// directory assignment (also `Uuid.ZERO_UUID`).
pub const DIRECTORY_MIGRATING: Uuid = Uuid::from_u64_pair(0, 0);

/// `DirectoryId.UNASSIGNED` (Uuid(0,1)): the broker has several directories and has not yet
/// said which one holds the replica (it sends AssignReplicasToDirs).
pub const DIRECTORY_UNASSIGNED: Uuid = Uuid::from_u64_pair(0, 1);

/// `DirectoryId.LOST` (Uuid(0,2)): the replica's directory went offline.
pub const DIRECTORY_LOST: Uuid = Uuid::from_u64_pair(0, 2);

/// Whether a directory id is one of the reserved values (`DirectoryId.reserved`): most
/// significant 64 bits zero and least significant below 100 (UNASSIGNED = 0, LOST = 1,
/// MIGRATING = 2, the rest kept for future use).
pub fn is_reserved_directory_id(id: Uuid) -> bool {
    let (msb, lsb) = id.as_u64_pair();
    msb == 0 && lsb < 100
}

/// A fresh random directory id (`Copier.generateValidDirectoryId`): never reserved, never one
/// whose text form starts with `-` (awkward on command lines, as Java avoids for topic ids),
/// never one in `taken`.
pub fn random_directory_id(taken: &[Uuid]) -> Uuid {
    loop {
        let id = Uuid::new_v4();
        let text = kafka_uuid_to_string(id);
        if !text.starts_with('-') && !is_reserved_directory_id(id) && !taken.contains(&id) {
            return id;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_text_form_matches_kafka() {
        assert_eq!(
            kafka_uuid_to_string(Uuid::from_u64_pair(0, 1)),
            "AAAAAAAAAAAAAAAAAAAAAQ"
        );
        assert_eq!(
            kafka_uuid_from_string("AAAAAAAAAAAAAAAAAAAAAQ"),
            Ok(Uuid::from_u64_pair(0, 1))
        );
        // Java's URL decoder accepts padding and ignores unused trailing bits.
        assert_eq!(
            kafka_uuid_from_string("AAAAAAAAAAAAAAAAAAAAAQ=="),
            Ok(Uuid::from_u64_pair(0, 1))
        );
        assert_eq!(
            kafka_uuid_from_string("AAAAAAAAAAAAAAAAAAAAAR"),
            Ok(Uuid::from_u64_pair(0, 1))
        );
        assert!(matches!(
            kafka_uuid_from_string("AAAA"),
            Err(KafkaUuidError::WrongLength { len: 3, .. })
        ));
        assert!(matches!(
            kafka_uuid_from_string("AAAAAAAAAAAAAAAAAAAAAAAAA"),
            Err(KafkaUuidError::TooLong(_))
        ));
        assert!(matches!(
            kafka_uuid_from_string("AAAAAAAAAAAAAAAAAAAA+/"),
            Err(KafkaUuidError::NotBase64(_))
        ));
    }

    #[test]
    fn random_directory_ids_are_valid_and_fresh() {
        let taken: Vec<Uuid> = (0..200).map(|_| random_directory_id(&[])).collect();
        for id in &taken {
            assert!(!is_reserved_directory_id(*id));
            assert!(!kafka_uuid_to_string(*id).starts_with('-'));
        }
        let fresh = random_directory_id(&taken);
        assert!(!taken.contains(&fresh));
        assert!(is_reserved_directory_id(Uuid::from_u64_pair(0, 99)));
        assert!(!is_reserved_directory_id(Uuid::from_u64_pair(0, 100)));
        assert!(!is_reserved_directory_id(Uuid::from_u64_pair(1, 0)));
    }
}
