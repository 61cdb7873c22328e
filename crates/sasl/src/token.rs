//! Delegation tokens (KIP-48) as SCRAM credentials: the token's HMAC (Kafka
//! `DelegationTokenControlManager.createHmac`) and the SCRAM credential a client authenticating
//! with `tokenauth=true` is checked against (Kafka `DelegationTokenCache`, filled by
//! `DelegationTokenManager.prepareScramCredentials`: username = token id, password = the base64
//! HMAC).

use crate::scram::{credential_from_password, ScramCredential, MIN_ITERATIONS};
use crate::Mechanism;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha512;

/// `HmacSHA512(key = UTF-8 of the secret, message = UTF-8 of the token id)`: the token's HMAC,
/// the secret half of a delegation token (`DelegationTokenControlManager.createHmac`).
pub fn token_hmac(secret: &str, token_id: &str) -> Vec<u8> {
    // HMAC takes keys of any length; an error here cannot happen.
    let Ok(mut mac) = <Hmac<Sha512> as KeyInit>::new_from_slice(secret.as_bytes()) else {
        return Vec::new();
    };
    mac.update(token_id.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// The HMAC as the password a token client sends and Java caches it by
/// (`DelegationToken.hmacAsBase64String`: standard base64 with padding).
pub fn token_password(hmac: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(hmac)
}

/// The SCRAM credential of a token for `mech`: the base64 HMAC as the password, `salt`, and
/// the mechanism's minimum iterations (4096), as `ScramFormatter.generateCredential(hmac,
/// minIterations)` does (with a random salt there).
pub fn token_credential(mech: Mechanism, hmac: &[u8], salt: Vec<u8>) -> ScramCredential {
    credential_from_password(mech, &token_password(hmac), salt, MIN_ITERATIONS)
}

/// What a credential store knows of a delegation token (`DelegationTokenCredentialCallback`).
#[derive(Clone, PartialEq, Eq)]
pub struct StoredToken {
    /// The token's HMAC ([`token_hmac`]); the SCRAM credential is derived from it
    /// ([`token_credential`]).
    pub hmac: Vec<u8>,
    /// The owner's principal name (`DelegationTokenCache.owner`: the name only, so the
    /// authenticated principal is `User:<name>`).
    pub owner: String,
    /// The token's expiry, ms since the Unix epoch.
    pub expiry_timestamp_ms: i64,
}

// The HMAC stays out of logs.
impl std::fmt::Debug for StoredToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredToken")
            .field("owner", &self.owner)
            .field("expiry_timestamp_ms", &self.expiry_timestamp_ms)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_is_hmac_sha512_of_the_token_id() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let mac = token_hmac("Jefe", "what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d\
             034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        );
        assert_eq!(token_password(&mac[..3]), "Fkt6");
    }
}
