//! Mechanism names and SCRAM type ids.

/// Kafka's mechanism names (`sasl.enabled.mechanisms`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mechanism {
    /// `PLAIN` (RFC 4616).
    Plain,
    /// `SCRAM-SHA-256` (RFC 7677).
    ScramSha256,
    /// `SCRAM-SHA-512`.
    ScramSha512,
}

impl Mechanism {
    /// The name Kafka uses in `sasl.enabled.mechanisms` and SaslHandshake.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    /// The mechanism of an exact, case-sensitive name (as Kafka's `SaslHandshake` matches).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "PLAIN" => Some(Mechanism::Plain),
            "SCRAM-SHA-256" => Some(Mechanism::ScramSha256),
            "SCRAM-SHA-512" => Some(Mechanism::ScramSha512),
            _ => None,
        }
    }

    /// `ScramMechanism` type id (UserScramCredentialRecord.mechanism): 1 for SHA-256, 2 for
    /// SHA-512; `None` for PLAIN.
    pub fn scram_type(self) -> Option<i8> {
        match self {
            Mechanism::Plain => None,
            Mechanism::ScramSha256 => Some(1),
            Mechanism::ScramSha512 => Some(2),
        }
    }

    /// The SCRAM mechanism of a `ScramMechanism` type id.
    pub fn from_scram_type(id: i8) -> Option<Self> {
        match id {
            1 => Some(Mechanism::ScramSha256),
            2 => Some(Mechanism::ScramSha512),
            _ => None,
        }
    }
}

impl std::fmt::Display for Mechanism {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
