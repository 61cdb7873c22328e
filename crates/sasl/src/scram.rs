//! SCRAM key derivation (RFC 5802 section 3; Kafka `ScramFormatter`) and stored credentials.

use crate::Mechanism;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256, Sha512};

/// Fewest iterations either SCRAM mechanism accepts (`ScramMechanism.minIterations`).
pub const MIN_ITERATIONS: i32 = 4096;
/// Most iterations (`ScramMechanism.maxIterations`, `ScramControlManager.MAX_ITERATIONS`).
pub const MAX_ITERATIONS: i32 = 16384;

/// A stored SCRAM credential (UserScramCredentialRecord / Kafka `ScramCredential`).
#[derive(Clone, PartialEq, Eq)]
pub struct ScramCredential {
    /// The salt Hi() was computed with.
    pub salt: Vec<u8>,
    /// `H(HMAC(SaltedPassword, "Client Key"))`.
    pub stored_key: Vec<u8>,
    /// `HMAC(SaltedPassword, "Server Key")`.
    pub server_key: Vec<u8>,
    /// Hi() iterations.
    pub iterations: i32,
}

// Keys stay out of logs.
impl std::fmt::Debug for ScramCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramCredential")
            .field("salt_len", &self.salt.len())
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

/// Looks up a user's SCRAM credential (the controller answers from its metadata image).
pub trait CredentialStore: Send + Sync {
    /// The credential of `user` for a SCRAM `mech`, if one is stored.
    fn scram(&self, user: &str, mech: Mechanism) -> Option<ScramCredential>;

    /// The delegation token with id `token_id`, for a SCRAM client that sent `tokenauth=true`
    /// (Kafka's `DelegationTokenCache`); `None` when unknown or when tokens are disabled.
    fn token(&self, token_id: &str) -> Option<crate::StoredToken> {
        let _ = token_id;
        None
    }
}

/// `HMAC(key, message)` with the mechanism's hash (SHA-256 for PLAIN, which has none).
pub(crate) fn hmac(mech: Mechanism, key: &[u8], message: &[u8]) -> Vec<u8> {
    fn run<M: Mac + KeyInit>(key: &[u8], message: &[u8]) -> Vec<u8> {
        // HMAC takes keys of any length; an error here cannot happen.
        let Ok(mut mac) = <M as KeyInit>::new_from_slice(key) else {
            return Vec::new();
        };
        mac.update(message);
        mac.finalize().into_bytes().to_vec()
    }
    match mech {
        Mechanism::ScramSha512 => run::<Hmac<Sha512>>(key, message),
        _ => run::<Hmac<Sha256>>(key, message),
    }
}

/// `H(bytes)` with the mechanism's hash.
pub(crate) fn hash(mech: Mechanism, bytes: &[u8]) -> Vec<u8> {
    match mech {
        Mechanism::ScramSha512 => Sha512::digest(bytes).to_vec(),
        _ => Sha256::digest(bytes).to_vec(),
    }
}

/// `Hi(password, salt, i)` (RFC 5802: PBKDF2 with HMAC of the mechanism's hash, one block).
/// Iterations below 1 count as 1.
pub fn salted_password(mech: Mechanism, password: &[u8], salt: &[u8], iterations: i32) -> Vec<u8> {
    let rounds = u32::try_from(iterations.max(1)).unwrap_or(1);
    match mech {
        Mechanism::ScramSha512 => {
            let mut out = vec![0u8; 64];
            pbkdf2::pbkdf2_hmac::<Sha512>(password, salt, rounds, &mut out);
            out
        }
        _ => {
            let mut out = vec![0u8; 32];
            pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, rounds, &mut out);
            out
        }
    }
}

/// `(StoredKey, ServerKey)` of a salted password for a `ScramMechanism` type id
/// (`ScramFormatter.storedKey(clientKey(..))`, `serverKey(..)`); `None` for an unknown id.
pub fn scram_keys(mechanism: i8, salted_password: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let mech = Mechanism::from_scram_type(mechanism)?;
    let client_key = hmac(mech, salted_password, b"Client Key");
    Some((
        hash(mech, &client_key),
        hmac(mech, salted_password, b"Server Key"),
    ))
}

/// The credential a salted password gives (`ScramFormatter.generateCredential(salt, ..)`).
pub fn credential_from_salted(
    mech: Mechanism,
    salt: Vec<u8>,
    salted_password: &[u8],
    iterations: i32,
) -> ScramCredential {
    let client_key = hmac(mech, salted_password, b"Client Key");
    ScramCredential {
        salt,
        stored_key: hash(mech, &client_key),
        server_key: hmac(mech, salted_password, b"Server Key"),
        iterations,
    }
}

/// The credential of a password (`ScramFormatter.generateCredential(password, ..)` with a
/// given salt). Kafka does not normalise (SASLprep) the password; neither do we.
pub fn credential_from_password(
    mech: Mechanism,
    password: &str,
    salt: Vec<u8>,
    iterations: i32,
) -> ScramCredential {
    let salted = salted_password(mech, password.as_bytes(), &salt, iterations);
    credential_from_salted(mech, salt, &salted, iterations)
}

/// `saslname` of a user name (`ScramFormatter.saslName`): `=` and `,` escaped.
pub(crate) fn sasl_name(user: &str) -> String {
    user.replace('=', "=3D").replace(',', "=2C")
}

/// The user name of a `saslname`; `None` for a `=` not starting `=2C` or `=3D` (RFC 5802).
pub(crate) fn user_name(sasl_name: &str) -> Option<String> {
    let mut out = String::with_capacity(sasl_name.len());
    let mut rest = sasl_name;
    while let Some(i) = rest.find('=') {
        out.push_str(&rest[..i]);
        let esc = rest.get(i..i + 3)?;
        match esc {
            "=2C" => out.push(','),
            "=3D" => out.push('='),
            _ => return None,
        }
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn keys_match_kafkas_scram_formatter() {
        // The controller's vectors, printed by Kafka 4.1.2's ScramFormatter.
        let salted: Vec<u8> = (0..32).collect();
        let (stored, server) = scram_keys(1, &salted).unwrap();
        assert_eq!(
            hex(&stored),
            "e9cb7d524d0a37b9f58df5da526819cc1df9c66a3cffee4f4cf2502654f2a6c0"
        );
        assert_eq!(
            hex(&server),
            "d1905aa193a45c4f683bbbfa07d3bd2dcb180db624f2b2db739df1b3cd72e01a"
        );
        assert!(scram_keys(3, &salted).is_none());
    }

    #[test]
    fn sasl_names_escape_and_unescape() {
        assert_eq!(sasl_name("a=b,c"), "a=3Db=2Cc");
        assert_eq!(user_name("a=3Db=2Cc").as_deref(), Some("a=b,c"));
        assert_eq!(user_name("a=3"), None);
        assert_eq!(user_name("a=41"), None);
        assert_eq!(user_name("=").as_deref(), None);
    }
}
