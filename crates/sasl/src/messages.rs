//! SCRAM message grammar (RFC 5802 section 7; Kafka `ScramMessages`' patterns).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// `printable` without `,` (nonces).
fn printable(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b',')
}

/// `value`: ASCII without NUL or `,`.
fn value(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| (0x01..=0x7f).contains(&b) && b != b',')
}

/// `saslname`, decoded (`=2C`, `=3D`; any other `=` refused).
fn sasl_name(s: &str) -> Option<String> {
    if !value(s) {
        return None;
    }
    crate::scram::user_name(s)
}

/// `base64`, strictly padded (may be empty).
pub(crate) fn base64(s: &str) -> Option<Vec<u8>> {
    STANDARD.decode(s).ok()
}

pub(crate) fn encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// `attr=value` with a one-letter attribute, else `None`.
fn attr<'a>(part: &'a str, name: &str) -> Option<&'a str> {
    part.strip_prefix(name)?.strip_prefix('=')
}

/// An extension `ALPHA=value`.
fn extension(part: &str) -> Option<(&str, &str)> {
    let (k, v) = part.split_once('=')?;
    (!k.is_empty() && k.bytes().all(|b| b.is_ascii_alphabetic()) && value(v)).then_some((k, v))
}

/// `client-first-message` (`ClientFirstMessage`).
pub(crate) struct ClientFirst<'a> {
    /// `gs2-header`, e.g. `n,,` (what `c=` must carry back).
    pub gs2_header: &'a str,
    /// Decoded authzid, empty if absent.
    pub authzid: String,
    /// `client-first-message-bare`, as sent (part of AuthMessage).
    pub bare: &'a str,
    /// Decoded user name.
    pub user: String,
    pub nonce: &'a str,
    pub extensions: Vec<(&'a str, &'a str)>,
}

impl<'a> ClientFirst<'a> {
    pub(crate) fn parse(text: &'a str) -> Option<Self> {
        // Only `n` (no channel binding): Kafka's pattern is `n,(a=authzid)?,(m=value,)?`.
        let rest = text.strip_prefix("n,")?;
        let (authzid, rest) = match rest.strip_prefix("a=") {
            Some(r) => {
                let (a, r) = r.split_once(',')?;
                (sasl_name(a)?, r)
            }
            None => (String::new(), rest.strip_prefix(',')?),
        };
        let rest = match rest.strip_prefix("m=") {
            Some(r) => {
                let (m, r) = r.split_once(',')?;
                if !value(m) {
                    return None;
                }
                r
            }
            None => rest,
        };
        let gs2_header = &text[..text.len() - rest.len()];
        let bare = rest;
        let mut parts = bare.split(',');
        let user = sasl_name(attr(parts.next()?, "n")?)?;
        let nonce = attr(parts.next()?, "r")?;
        if !printable(nonce) {
            return None;
        }
        let extensions = parts.map(extension).collect::<Option<Vec<_>>>()?;
        Some(ClientFirst {
            gs2_header,
            authzid,
            bare,
            user,
            nonce,
            extensions,
        })
    }
}

/// `client-final-message` (`ClientFinalMessage`).
pub(crate) struct ClientFinal<'a> {
    pub channel_binding: Vec<u8>,
    pub nonce: &'a str,
    /// `client-final-message-without-proof`, as sent (part of AuthMessage).
    pub without_proof: &'a str,
    pub proof: Vec<u8>,
}

impl<'a> ClientFinal<'a> {
    pub(crate) fn parse(text: &'a str) -> Option<Self> {
        let (without_proof, proof) = text.rsplit_once(",p=")?;
        let proof = base64(proof)?;
        let mut parts = without_proof.split(',');
        let channel_binding = base64(attr(parts.next()?, "c")?)?;
        let nonce = attr(parts.next()?, "r")?;
        if !printable(nonce) || !parts.all(|p| extension(p).is_some()) {
            return None;
        }
        Some(ClientFinal {
            channel_binding,
            nonce,
            without_proof,
            proof,
        })
    }
}

/// `server-first-message` (`ServerFirstMessage`).
pub(crate) struct ServerFirst<'a> {
    pub nonce: &'a str,
    pub salt: Vec<u8>,
    pub iterations: i32,
}

impl<'a> ServerFirst<'a> {
    pub(crate) fn parse(text: &'a str) -> Option<Self> {
        let mut parts = text.split(',').peekable();
        if parts.peek().is_some_and(|p| p.starts_with("m=")) {
            parts.next();
        }
        let nonce = attr(parts.next()?, "r")?;
        let salt = base64(attr(parts.next()?, "s")?)?;
        let iterations = attr(parts.next()?, "i")?;
        if !printable(nonce)
            || iterations.is_empty()
            || !iterations.bytes().all(|b| b.is_ascii_digit())
            || !parts.all(|p| extension(p).is_some())
        {
            return None;
        }
        Some(ServerFirst {
            nonce,
            salt,
            iterations: iterations.parse().ok()?,
        })
    }
}

/// `server-final-message` (`ServerFinalMessage`): the signature, or the server's error.
pub(crate) enum ServerFinal {
    Verifier(Vec<u8>),
    Error(String),
}

impl ServerFinal {
    pub(crate) fn parse(text: &str) -> Option<Self> {
        if let Some(e) = text.strip_prefix("e=") {
            return (value(e) && !e.contains('=')).then(|| ServerFinal::Error(e.to_owned()));
        }
        let mut parts = text.split(',');
        let v = base64(attr(parts.next()?, "v")?)?;
        parts
            .all(|p| extension(p).is_some())
            .then_some(ServerFinal::Verifier(v))
    }
}
