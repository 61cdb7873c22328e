//! AlterUserScramCredentials (Kafka 4.1.2's `ScramControlManager.alterCredentials`): SCRAM
//! credentials (KIP-554) written as UserScramCredentialRecord / RemoveUserScramCredentialRecord,
//! which brokers replay into the credentials their SASL/SCRAM authenticators check.
//!
//! The client sends the salted password (`Hi(password, salt, iterations)`); the controller
//! stores `StoredKey = H(HMAC(SaltedPassword, "Client Key"))` and
//! `ServerKey = HMAC(SaltedPassword, "Server Key")` (RFC 5802, `ScramFormatter`).

use crate::api::{message_text, ControllerApi};
use crate::validate::StringCheck;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::alter_user_scram_credentials_request::{
    ScramCredentialDeletion, ScramCredentialUpsertion,
};
use kafka_protocol::messages::alter_user_scram_credentials_response::AlterUserScramCredentialsResult;
use kafka_protocol::messages::{
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{
    ApiMessageAndVersion, RemoveUserScramCredentialRecord, UserScramCredentialRecord,
};

use std::collections::BTreeMap;

use crate::controller::ControllerResult;
use crate::error::ApiError;
use crate::image::MetadataImage;
use crate::java_order::java_string_hash;
use crate::validate::limits;

/// `ScramMechanism.SCRAM_SHA_256` type id.
pub const SCRAM_SHA_256: i8 = 1;
/// `ScramMechanism.SCRAM_SHA_512` type id.
pub const SCRAM_SHA_512: i8 = 2;
/// Fewest iterations either mechanism accepts (`ScramMechanism.minIterations`).
pub const MIN_ITERATIONS: i32 = 4096;
/// Most iterations accepted (`ScramControlManager.MAX_ITERATIONS`).
pub const MAX_ITERATIONS: i32 = 16384;

/// `(StoredKey, ServerKey)` for a salted password (`ScramFormatter.storedKey(clientKey(..))`,
/// `serverKey(..)`); `None` for an unknown mechanism. The derivation is `kraftwerk_sasl`'s, the
/// same the SASL/SCRAM authenticator checks proofs with.
pub fn scram_keys(mechanism: i8, salted_password: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    kraftwerk_sasl::scram_keys(mechanism, salted_password)
}

/// A `java.util.HashMap<String, V>` with default capacity, kept only to iterate in Java's order
/// (bucket at the grown capacity, then insertion; a key put again keeps its place, a removed and
/// re-added key moves to the end of its bucket). Indexed by key, so a request with many users
/// costs O(n log n).
struct JavaStringMap<V> {
    /// key → (insertion sequence, value).
    entries: BTreeMap<String, (u64, V)>,
    next_seq: u64,
    capacity: usize,
}

impl<V> JavaStringMap<V> {
    fn new() -> Self {
        JavaStringMap {
            entries: BTreeMap::new(),
            next_seq: 0,
            capacity: 16,
        }
    }

    fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn insert(&mut self, key: &str, value: V) {
        if let Some(entry) = self.entries.get_mut(key) {
            entry.1 = value;
            return;
        }
        self.entries.insert(key.to_owned(), (self.next_seq, value));
        self.next_seq += 1;
        while self.entries.len() > self.capacity * 3 / 4 {
            self.capacity *= 2;
        }
    }

    fn remove(&mut self, key: &str) -> Option<V> {
        self.entries.remove(key).map(|(_, v)| v)
    }

    fn into_ordered(self) -> Vec<(String, V)> {
        let capacity = self.capacity;
        let bucket = |k: &str| {
            let h = java_string_hash(k) as u32;
            ((h ^ (h >> 16)) as usize) & (capacity - 1)
        };
        let mut entries: Vec<(usize, u64, String, V)> = self
            .entries
            .into_iter()
            .map(|(k, (seq, v))| (bucket(&k), seq, k, v))
            .collect();
        entries.sort_by_key(|(bucket, seq, _, _)| (*bucket, *seq));
        entries.into_iter().map(|(_, _, k, v)| (k, v)).collect()
    }
}

/// `validateScramUsernameAndMechanism`.
fn validate_user_and_mechanism(name: &str, mechanism: i8) -> Result<(), ApiError> {
    if name.is_empty() {
        return Err(ApiError::new(
            ResponseError::UnacceptableCredential,
            "Username must not be empty",
        ));
    }
    if mechanism != SCRAM_SHA_256 && mechanism != SCRAM_SHA_512 {
        return Err(ApiError::new(
            ResponseError::UnsupportedSaslMechanism,
            "Unknown SCRAM mechanism",
        ));
    }
    Ok(())
}

fn validate_deletion(
    image: &MetadataImage,
    deletion: &ScramCredentialDeletion,
) -> Result<(), ApiError> {
    validate_user_and_mechanism(deletion.name.as_str(), deletion.mechanism)?;
    if !image
        .other
        .scram_credentials
        .contains_key(&(deletion.name.to_string(), deletion.mechanism))
    {
        return Err(ApiError::new(
            ResponseError::ResourceNotFound,
            "Attempt to delete a user credential that does not exist",
        ));
    }
    Ok(())
}

fn validate_upsertion(upsertion: &ScramCredentialUpsertion) -> Result<(), ApiError> {
    validate_user_and_mechanism(upsertion.name.as_str(), upsertion.mechanism)?;
    if upsertion.iterations < MIN_ITERATIONS {
        return Err(ApiError::new(
            ResponseError::UnacceptableCredential,
            "Too few iterations",
        ));
    }
    if upsertion.iterations > MAX_ITERATIONS {
        return Err(ApiError::new(
            ResponseError::UnacceptableCredential,
            "Too many iterations",
        ));
    }
    Ok(())
}

fn result(user: &str, error: &ApiError) -> AlterUserScramCredentialsResult {
    AlterUserScramCredentialsResult::default()
        .with_user(StrBytes::from_string(user.to_owned()))
        .with_error_code(error.code)
        .with_error_message(error.message.clone().map(StrBytes::from_string))
}

/// AlterUserScramCredentials (api 51, v0): deletes and upserts SCRAM credentials, at most one
/// change per user per request.
///
/// Per user: DUPLICATE_RESOURCE if the user appears twice (deletions and upsertions together),
/// UNSUPPORTED_VERSION before metadata.version 3.5-IV2, UNACCEPTABLE_CREDENTIAL (empty name,
/// iterations outside 4096..=16384), UNSUPPORTED_SASL_MECHANISM (not SCRAM-SHA-256/512),
/// RESOURCE_NOT_FOUND (deleting a credential that does not exist), UNKNOWN_SERVER_ERROR (an
/// empty salted password, which Java's HMAC refuses). More than 10,000 changes fail the whole
/// request with UNKNOWN_SERVER_ERROR before any key is derived (Java's atomic-result check).
/// The salt is stored as sent (Java checks neither its length nor the salted password's; a
/// record over 8 MiB is refused by the result check). Records: a
/// RemoveUserScramCredentialRecord per deletion, then a UserScramCredentialRecord (salt,
/// stored key, server key, iterations) per upsertion, each group in Java's `HashMap` order of
/// user names; one atomic batch. Results: deletions, upsertions, then errors, in the same
/// orders.
pub fn alter_user_scram_credentials(
    image: &MetadataImage,
    request: &AlterUserScramCredentialsRequest,
) -> ControllerResult<AlterUserScramCredentialsResponse> {
    let supported = image.metadata_version().is_scram_supported();
    let duplicate = || {
        ApiError::new(
            ResponseError::DuplicateResource,
            "A user credential cannot be altered twice in the same request",
        )
    };
    let unsupported = || {
        ApiError::new(
            ResponseError::UnsupportedVersion,
            "The current metadata.version does not support SCRAM",
        )
    };
    let mut deletions: JavaStringMap<&ScramCredentialDeletion> = JavaStringMap::new();
    let mut upserts: JavaStringMap<&ScramCredentialUpsertion> = JavaStringMap::new();
    let mut errors: JavaStringMap<ApiError> = JavaStringMap::new();
    for deletion in &request.deletions {
        let name = deletion.name.as_str();
        if errors.contains(name) {
            continue;
        }
        if deletions.remove(name).is_some() {
            errors.insert(name, duplicate());
        } else if !supported {
            errors.insert(name, unsupported());
        } else {
            match validate_deletion(image, deletion) {
                Ok(()) => deletions.insert(name, deletion),
                Err(e) => errors.insert(name, e),
            }
        }
    }
    for upsertion in &request.upsertions {
        let name = upsertion.name.as_str();
        if errors.contains(name) {
            continue;
        }
        let was_deleted = deletions.remove(name).is_some();
        if was_deleted || upserts.remove(name).is_some() {
            errors.insert(name, duplicate());
        } else if !supported {
            errors.insert(name, unsupported());
        } else {
            match validate_upsertion(upsertion) {
                Ok(()) => upserts.insert(name, upsertion),
                Err(e) => errors.insert(name, e),
            }
        }
    }
    if !limits::records_fit(deletions.len(), upserts.len()) {
        // Java keeps these records in a plain list; `QuorumController.appendRecords` then
        // refuses the atomic result (UNKNOWN_SERVER_ERROR). Refused before any key is computed.
        let error = limits::atomic_result_too_large(deletions.len() + upserts.len());
        return ControllerResult::of(
            Vec::new(),
            request.error_response(error.code, error.message.as_deref()),
        );
    }
    let mut results = Vec::new();
    let mut records = Vec::new();
    for (name, deletion) in deletions.into_ordered() {
        results.push(result(&name, &ApiError::NONE));
        records.push(ApiMessageAndVersion::new(
            RemoveUserScramCredentialRecord {
                name,
                mechanism: deletion.mechanism,
                ..Default::default()
            },
            0,
        ));
    }
    for (name, upsertion) in upserts.into_ordered() {
        // `finishUpsertion`: Java's HMAC (`SecretKeySpec`) refuses an empty key; the user gets
        // that exception's UNKNOWN_SERVER_ERROR (no message) and no record.
        if upsertion.salted_password.is_empty() {
            errors.insert(
                &name,
                ApiError::code_only(ResponseError::UnknownServerError),
            );
            continue;
        }
        let (stored_key, server_key) = scram_keys(upsertion.mechanism, &upsertion.salted_password)
            .expect("mechanism validated");
        results.push(result(&name, &ApiError::NONE));
        records.push(ApiMessageAndVersion::new(
            UserScramCredentialRecord {
                name,
                mechanism: upsertion.mechanism,
                salt: upsertion.salt.clone(),
                stored_key: stored_key.into(),
                server_key: server_key.into(),
                iterations: upsertion.iterations,
                ..Default::default()
            },
            0,
        ));
    }
    for (name, error) in errors.into_ordered() {
        results.push(result(&name, &error));
    }
    ControllerResult::atomic(
        records,
        AlterUserScramCredentialsResponse::default().with_results(results),
    )
}

impl ControllerApi for AlterUserScramCredentialsRequest {
    type Response = AlterUserScramCredentialsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        check
            .each("name", self.deletions.iter().map(|d| d.name.as_str()))
            .each("name", self.upsertions.iter().map(|u| u.name.as_str()));
    }

    /// One result per user named in deletions or upsertions, sorted and distinct.
    fn error_response(
        &self,
        code: i16,
        message: Option<&str>,
    ) -> AlterUserScramCredentialsResponse {
        let users: std::collections::BTreeSet<&StrBytes> = self
            .deletions
            .iter()
            .map(|d| &d.name)
            .chain(self.upsertions.iter().map(|u| &u.name))
            .collect();
        AlterUserScramCredentialsResponse::default().with_results(
            users
                .into_iter()
                .map(|u| {
                    AlterUserScramCredentialsResult::default()
                        .with_user(u.clone())
                        .with_error_code(code)
                        .with_error_message(message_text(message))
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn keys_match_kafkas_scram_formatter() {
        // Printed by Kafka 4.1.2's ScramFormatter for salted passwords 0,1,..,31 (SHA-256) and
        // 0,3,6,..,189 (SHA-512).
        let salted: Vec<u8> = (0..32).collect();
        let (stored, server) = scram_keys(SCRAM_SHA_256, &salted).unwrap();
        assert_eq!(
            hex(&stored),
            "e9cb7d524d0a37b9f58df5da526819cc1df9c66a3cffee4f4cf2502654f2a6c0"
        );
        assert_eq!(
            hex(&server),
            "d1905aa193a45c4f683bbbfa07d3bd2dcb180db624f2b2db739df1b3cd72e01a"
        );
        let salted: Vec<u8> = (0..64).map(|i| (i * 3) as u8).collect();
        let (stored, server) = scram_keys(SCRAM_SHA_512, &salted).unwrap();
        assert_eq!(
            hex(&stored),
            "1a31f0be10a19d56527aed6aa5c5db341c24102117e555abd6691c39420532fb965c9e97ce7fe3ee3ca7afe17e5b7e1341b9ff1835f66bb75ebb93dc570fc623"
        );
        assert_eq!(
            hex(&server),
            "fbd986e154efe6ba052bb3b239814a5366db1f3622cafbe772e7ee0e6885fc0fdcf1b9c1b380184fd3eee3e0b6c4d0dfcf1edcb4abdc924cf43dd2788514c1aa"
        );
        assert!(scram_keys(3, &[]).is_none());
    }

    #[test]
    fn java_map_order_follows_buckets_then_insertion() {
        let mut m = JavaStringMap::new();
        for name in ["bob", "alice", "carol"] {
            m.insert(name, ());
        }
        let order: Vec<String> = m.into_ordered().into_iter().map(|(k, _)| k).collect();
        // Java 17: `new HashMap<>()` after put("bob"), put("alice"), put("carol") iterates
        // [carol, bob, alice] (buckets 1, 4, 9 of 16), not in insertion order.
        assert_eq!(order, ["carol", "bob", "alice"]);
    }
}
