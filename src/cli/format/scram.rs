//! `kraftwerk format --add-scram`: SCRAM credentials in the bootstrap records, as
//! `kafka-storage format --add-scram` writes them (`org.apache.kafka.metadata.storage.ScramParser`
//! of Kafka 4.0 to 4.4, which have the same parser and messages).
//!
//! Each argument is `MECHANISM=[key=value,...]`, e.g.
//! `SCRAM-SHA-512=[name=alice,password=alice-secret]` or
//! `SCRAM-SHA-256=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="]`:
//!
//! - `MECHANISM` is `SCRAM-SHA-256` or `SCRAM-SHA-512`, exactly;
//! - the components are split at every `,` the way Java's `String.split(",")` does (trailing
//!   empty components dropped), each at its first `=`; a value in double quotes loses them; a
//!   key given twice keeps its last value; keys are not trimmed;
//! - `name` is required; `salt` and `saltedpassword` are base64 (Java's basic decoder: padding
//!   optional); `iterations` defaults to 4096 and must be within the mechanism's bounds
//!   (4096 to 16384); one of `password` and `saltedpassword` is required, `saltedpassword`
//!   needs `salt`, and when both are given `password` wins (Java ignores `saltedpassword`);
//! - without `salt`, the salt is `ScramFormatter.secureRandomBytes`: the UTF-8 text of a
//!   130-bit random number in base 36 (up to 26 bytes).
//!
//! Each argument becomes one `UserScramCredentialRecord` v0, appended after the
//! FeatureLevelRecords in argument order (`Formatter.calculateBootstrapMetadata`).

use std::collections::BTreeMap;

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use bytes::Bytes;
use kraftwerk_controller::handlers::scram::{
    scram_keys, MAX_ITERATIONS, MIN_ITERATIONS, SCRAM_SHA_256, SCRAM_SHA_512,
};
use kraftwerk_records::metadata::{ApiMessageAndVersion, UserScramCredentialRecord};
use kraftwerk_records::metadata_version::MetadataVersion;
use rand::RngCore;
use thiserror::Error;

/// The first metadata.version whose bootstrap may hold SCRAM credentials
/// (`MetadataVersion.isScramSupported`).
pub const SCRAM_MINIMUM_VERSION: MetadataVersion = MetadataVersion::V3_5_IV2;

/// Iterations when the argument gives none (`ScramParser.PerMechanismData.iterations`).
pub const DEFAULT_ITERATIONS: i32 = 4096;

/// A SCRAM mechanism `--add-scram` accepts (`ScramMechanism`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScramMechanism {
    /// `SCRAM-SHA-256`, type 1.
    Sha256,
    /// `SCRAM-SHA-512`, type 2.
    Sha512,
}

impl ScramMechanism {
    /// By its SASL name, exactly (`ScramMechanism.forMechanismName`).
    pub fn from_mechanism_name(name: &str) -> Option<ScramMechanism> {
        match name {
            "SCRAM-SHA-256" => Some(ScramMechanism::Sha256),
            "SCRAM-SHA-512" => Some(ScramMechanism::Sha512),
            _ => None,
        }
    }

    /// The type id of `UserScramCredentialRecord.Mechanism` (`ScramMechanism.type`).
    pub fn type_id(self) -> i8 {
        match self {
            ScramMechanism::Sha256 => SCRAM_SHA_256,
            ScramMechanism::Sha512 => SCRAM_SHA_512,
        }
    }

    /// The Java enum constant's name, as Kafka's messages print it.
    pub fn java_name(self) -> &'static str {
        match self {
            ScramMechanism::Sha256 => "SCRAM_SHA_256",
            ScramMechanism::Sha512 => "SCRAM_SHA_512",
        }
    }
}

/// Why an `--add-scram` argument was refused; the messages are `ScramParser`'s and
/// `Formatter`'s.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ScramArgError {
    /// The metadata.version is older than [`SCRAM_MINIMUM_VERSION`].
    #[error("SCRAM is only supported in metadata.version {SCRAM_MINIMUM_VERSION} or later.")]
    Unsupported,
    /// No `=` after the mechanism.
    #[error("Failed to find equals sign in SCRAM argument '{0}'")]
    NoEqualsSign(String),
    /// Not `SCRAM-SHA-256` or `SCRAM-SHA-512`.
    #[error("The add-scram mechanism {0} is not supported.")]
    UnknownMechanism(String),
    /// The configuration does not start with `[`.
    #[error("Expected configuration string to start with [")]
    NoOpeningBracket,
    /// The configuration does not end with `]`.
    #[error("Expected configuration string to end with ]")]
    NoClosingBracket,
    /// A component without `=`.
    #[error("No equals sign found in SCRAM component: {0}")]
    ComponentWithoutEquals(String),
    /// No `name`.
    #[error("You must supply 'name' to add-scram")]
    NoName,
    /// `salt` is not base64.
    #[error("Failed to decode given salt: {0}")]
    BadSalt(String),
    /// `iterations` is not an int.
    #[error("Failed to parse iterations count: {0}")]
    BadIterations(String),
    /// Neither `password` nor `saltedpassword`.
    #[error("You must supply one of 'password' or 'saltedpassword' to add-scram")]
    NoPassword,
    /// `saltedpassword` without `salt`.
    #[error("You must supply 'salt' with 'saltedpassword' to add-scram")]
    SaltedPasswordWithoutSalt,
    /// `saltedpassword` is not base64.
    #[error("Failed to decode given saltedPassword: {0}")]
    BadSaltedPassword(String),
    /// Keys other than the six known ones, in Java's TreeMap (sorted) order.
    #[error("Unknown SCRAM configurations: {}", .0.join(", "))]
    UnknownConfigurations(Vec<String>),
    /// Fewer iterations than the mechanism allows.
    #[error("The 'iterations' value must be >= {MIN_ITERATIONS} for add-scram using {}", .0.java_name())]
    TooFewIterations(ScramMechanism),
    /// More iterations than the mechanism allows.
    #[error("The 'iterations' value must be <= {MAX_ITERATIONS} for add-scram using {}", .0.java_name())]
    TooManyIterations(ScramMechanism),
}

/// One parsed argument (`ScramParser.PerMechanismData`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScramCredentialArg {
    /// The mechanism.
    pub mechanism: ScramMechanism,
    /// `name`.
    pub name: String,
    /// `salt`, decoded.
    pub salt: Option<Vec<u8>>,
    /// `iterations`.
    pub iterations: Option<i32>,
    /// `password`.
    pub password: Option<String>,
    /// `saltedpassword`, decoded (only kept when there is no `password`).
    pub salted_password: Option<Vec<u8>>,
}

/// Java's `Base64.getDecoder()`: the standard alphabet, padding accepted but not required,
/// non-zero trailing bits ignored.
const JAVA_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Java's `String.trim`: strips every char up to U+0020 at both ends.
fn java_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// Java's `String.split(",")`: an empty string is one empty component; otherwise trailing
/// empty components are dropped.
fn java_split_commas(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return vec![""];
    }
    let mut parts: Vec<&str> = s.split(',').collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// `key=value` at the first `=`, a double-quoted value unquoted
/// (`ScramParser.splitTrimmedConfigStringComponent`, which trims nothing despite its name).
fn split_component(component: &str) -> Result<(&str, &str), ScramArgError> {
    let (key, value) = component
        .split_once('=')
        .ok_or_else(|| ScramArgError::ComponentWithoutEquals(component.to_owned()))?;
    let value = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) if value.len() >= 2 => inner,
        _ => value,
    };
    Ok((key, value))
}

impl ScramCredentialArg {
    /// Parses one `--add-scram` value (`ScramParser.parsePerMechanismArgument` and the
    /// `PerMechanismData(mechanism, configString)` constructor; the same checks in the same
    /// order, so the same first error).
    pub fn parse(argument: &str) -> Result<ScramCredentialArg, ScramArgError> {
        let input = java_trim(argument);
        let (mechanism_name, config) = input
            .split_once('=')
            .ok_or_else(|| ScramArgError::NoEqualsSign(input.to_owned()))?;
        let mechanism = ScramMechanism::from_mechanism_name(mechanism_name)
            .ok_or_else(|| ScramArgError::UnknownMechanism(mechanism_name.to_owned()))?;
        let config = config
            .strip_prefix('[')
            .ok_or(ScramArgError::NoOpeningBracket)?;
        let config = config
            .strip_suffix(']')
            .ok_or(ScramArgError::NoClosingBracket)?;

        let mut components: BTreeMap<&str, &str> = BTreeMap::new();
        for component in java_split_commas(config) {
            let (key, value) = split_component(component)?;
            components.insert(key, value);
        }
        let name = components
            .remove("name")
            .ok_or(ScramArgError::NoName)?
            .to_owned();
        let salt = match components.remove("salt") {
            None => None,
            Some(text) => Some(
                JAVA_BASE64
                    .decode(text)
                    .map_err(|_| ScramArgError::BadSalt(text.to_owned()))?,
            ),
        };
        let iterations = match components.remove("iterations") {
            None => None,
            Some(text) => Some(
                text.parse::<i32>()
                    .map_err(|_| ScramArgError::BadIterations(text.to_owned()))?,
            ),
        };
        let password = components.remove("password");
        let salted = components.remove("saltedpassword");
        let salted_password = match (password, salted) {
            (Some(_), _) => None,
            (None, None) => return Err(ScramArgError::NoPassword),
            (None, Some(_)) if salt.is_none() => {
                return Err(ScramArgError::SaltedPasswordWithoutSalt)
            }
            (None, Some(text)) => Some(
                JAVA_BASE64
                    .decode(text)
                    .map_err(|_| ScramArgError::BadSaltedPassword(text.to_owned()))?,
            ),
        };
        if !components.is_empty() {
            return Err(ScramArgError::UnknownConfigurations(
                components.keys().map(|k| (*k).to_owned()).collect(),
            ));
        }
        Ok(ScramCredentialArg {
            mechanism,
            name,
            salt,
            iterations,
            password: password.map(str::to_owned),
            salted_password,
        })
    }

    /// The record (`PerMechanismData.toRecord`): the given salt or a random one, the
    /// iterations checked against the mechanism's bounds, the salted password given or
    /// derived, and the StoredKey and ServerKey from it.
    pub fn to_record(&self) -> Result<UserScramCredentialRecord, ScramArgError> {
        let salt = self.salt.clone().unwrap_or_else(random_salt);
        let iterations = self.iterations.unwrap_or(DEFAULT_ITERATIONS);
        if iterations < MIN_ITERATIONS {
            return Err(ScramArgError::TooFewIterations(self.mechanism));
        }
        if iterations > MAX_ITERATIONS {
            return Err(ScramArgError::TooManyIterations(self.mechanism));
        }
        let salted = match (&self.salted_password, &self.password) {
            (Some(salted), _) => salted.clone(),
            (None, password) => salted_password(
                self.mechanism,
                password.as_deref().unwrap_or_default(),
                &salt,
                iterations.unsigned_abs(),
            ),
        };
        let (stored_key, server_key) =
            scram_keys(self.mechanism.type_id(), &salted).expect("both mechanisms have keys");
        Ok(UserScramCredentialRecord {
            name: self.name.clone(),
            mechanism: self.mechanism.type_id(),
            salt: Bytes::from(salt),
            stored_key: Bytes::from(stored_key),
            server_key: Bytes::from(server_key),
            iterations,
            ..Default::default()
        })
    }
}

/// The records of every `--add-scram` argument, in order (`ScramParser.parse`), refused below
/// [`SCRAM_MINIMUM_VERSION`] (`Formatter.calculateBootstrapMetadata`).
pub fn scram_records(
    arguments: &[String],
    metadata_version: MetadataVersion,
) -> Result<Vec<ApiMessageAndVersion>, ScramArgError> {
    if arguments.is_empty() {
        return Ok(Vec::new());
    }
    if metadata_version < SCRAM_MINIMUM_VERSION {
        return Err(ScramArgError::Unsupported);
    }
    arguments
        .iter()
        .map(|argument| {
            let record = ScramCredentialArg::parse(argument)?.to_record()?;
            Ok(ApiMessageAndVersion::new(record, 0))
        })
        .collect()
}

/// SCRAM's `Hi(password, salt, iterations)` (RFC 5802; `ScramFormatter.saltedPassword`), from
/// [`kraftwerk_sasl::salted_password`]; `iterations` is bounded by the caller (≤ 16384).
fn salted_password(
    mechanism: ScramMechanism,
    password: &str,
    salt: &[u8],
    iterations: u32,
) -> Vec<u8> {
    let mechanism = match mechanism {
        ScramMechanism::Sha256 => kraftwerk_sasl::Mechanism::ScramSha256,
        ScramMechanism::Sha512 => kraftwerk_sasl::Mechanism::ScramSha512,
    };
    let iterations = i32::try_from(iterations).unwrap_or(i32::MAX);
    kraftwerk_sasl::salted_password(mechanism, password.as_bytes(), salt, iterations)
}

/// `ScramFormatter.secureRandomBytes`: `new BigInteger(130, secureRandom).toString(36)` as
/// UTF-8, from the OS's random source.
fn random_salt() -> Vec<u8> {
    let mut bytes = [0u8; 17];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes[0] &= 0b11; // 136 bits drawn, 130 kept
    base36(bytes)
}

/// The lowercase base-36 text of a big-endian unsigned number, without leading zeros ("0" for
/// zero), as `BigInteger.toString(36)`.
fn base36(mut number: [u8; 17]) -> Vec<u8> {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut digits = Vec::new();
    loop {
        let mut remainder = 0u32;
        for byte in number.iter_mut() {
            let value = (remainder << 8) | u32::from(*byte);
            *byte = (value / 36) as u8;
            remainder = value % 36;
        }
        digits.push(DIGITS[remainder as usize]);
        if number.iter().all(|b| *b == 0) {
            break;
        }
    }
    digits.reverse();
    digits
}

#[cfg(test)]
mod tests;
