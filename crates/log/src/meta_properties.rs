//! `meta.properties`: the per-directory identity file `kafka-storage format` writes, read and
//! written exactly as Kafka does.
//!
//! Follows `org.apache.kafka.metadata.properties.MetaProperties`, `MetaPropertiesVersion`,
//! `PropertiesUtils` and `MetaPropertiesEnsemble.Copier.generateValidDirectoryId`. The file is a
//! Java properties file ([`JavaProperties`], `java.util.Properties.load`/`store` syntax):
//!
//! ```text
//! #
//! #Sun Nov 29 08:11:11 UTC 2026
//! node.id=1
//! directory.id=MjvrO494hfnTQHWt9EWPdw
//! version=1
//! cluster.id=AAAAAAAAAAAAAAAAAAAAAA
//! ```
//!
//! Version 1 (KRaft) requires `cluster.id` and `node.id`; version 0 (ZooKeeper era, `version`
//! absent or `0`) may carry `broker.id` and `cluster.id`. `directory.id` is optional in both.
//! Writes go to `meta.properties.tmp`, are fsynced, then renamed over the file and the directory
//! is fsynced (`PropertiesUtils.writePropertiesFile(.., fsync = true)`).
//!
//! The Java properties codec lives here because this is the lowest crate that reads one; the
//! root crate's `config` module reuses [`JavaProperties::parse`] for `server.properties`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use thiserror::Error;
use uuid::Uuid;

/// Name of the file inside each log directory (`MetaPropertiesEnsemble.META_PROPERTIES_NAME`).
pub const META_PROPERTIES_FILE: &str = "meta.properties";

const VERSION_PROP: &str = "version";
const CLUSTER_ID_PROP: &str = "cluster.id";
const BROKER_ID_PROP: &str = "broker.id";
const NODE_ID_PROP: &str = "node.id";
const DIRECTORY_ID_PROP: &str = "directory.id";

// ---------------------------------------------------------------------------------------------
// Java properties syntax
// ---------------------------------------------------------------------------------------------

/// A syntax error in a Java properties file: only a malformed `\uXXXX` escape is one
/// (`Properties.loadConvert` throws "Malformed \uxxxx encoding."); everything else parses.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("line {line}: malformed \\uxxxx encoding")]
pub struct PropertiesSyntaxError {
    /// 1-based line on which the logical line containing the bad escape starts.
    pub line: usize,
}

/// An ordered list of Java properties (`java.util.Properties`), with `load`/`store` syntax.
///
/// Keys are unique: a later duplicate replaces the earlier value in place, like
/// `Hashtable.put`. Iteration follows first-insertion order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JavaProperties {
    entries: Vec<(String, String)>,
}

impl JavaProperties {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a file's bytes as `Properties.load(InputStream)` does: bytes are ISO-8859-1
    /// (each byte one char; non-Latin-1 text must use `\uXXXX`), lines end at `\n`, `\r` or
    /// `\r\n`, leading blanks (space, tab, form feed) are skipped, a line whose first non-blank
    /// char is `#` or `!` is a comment, a line ending in an odd number of backslashes continues
    /// on the next line (whose leading blanks are dropped), the key ends at the first unescaped
    /// `=`, `:` or blank, and the value starts after blanks and at most one `=`/`:`. Escapes:
    /// `\t \n \r \f \uXXXX`, any other `\c` is `c`.
    ///
    /// Errors: a malformed `\uXXXX` escape.
    pub fn parse(bytes: &[u8]) -> Result<JavaProperties, PropertiesSyntaxError> {
        let chars: Vec<char> = bytes.iter().map(|b| char::from(*b)).collect();
        let mut props = JavaProperties::new();
        let mut reader = LineReader {
            chars: &chars,
            pos: 0,
            line: 1,
        };
        while let Some((start_line, logical)) = reader.read_line() {
            let (key, value) = split_key_value(&logical);
            let key = unescape(key).ok_or(PropertiesSyntaxError { line: start_line })?;
            let value = unescape(value).ok_or(PropertiesSyntaxError { line: start_line })?;
            props.set(&key, &value);
        }
        Ok(props)
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key`, replacing an existing value in place.
    pub fn set(&mut self, key: &str, value: &str) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value.to_owned(),
            None => self.entries.push((key.to_owned(), value.to_owned())),
        }
    }

    /// `(key, value)` pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Renders the set as `Properties.store(Writer, comment)` does, in this set's order: `#`
    /// plus the comment, `#` plus `Date.toString()` of `now_ms` (in UTC, e.g.
    /// `Sun Nov 29 08:11:11 UTC 2026`), then one `key=value` line per entry, `\n` line ends.
    /// Escaping (`saveConvert`, no Unicode escaping since the Writer variant is used): `\` →
    /// `\\`, tab/newline/CR/form feed → `\t \n \r \f`, `= : # !` get a backslash, spaces are
    /// escaped everywhere in keys and only in the first position of values.
    pub fn store(&self, comment: &str, now_ms: i64) -> String {
        let mut out = String::new();
        for line in comment.split('\n') {
            out.push('#');
            for c in line.chars() {
                if u32::from(c) > 0xff {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{:04X}", unit));
                    }
                } else {
                    out.push(c);
                }
            }
            out.push('\n');
        }
        out.push('#');
        out.push_str(&java_date_string(now_ms));
        out.push('\n');
        for (key, value) in &self.entries {
            escape_into(&mut out, key, true);
            out.push('=');
            escape_into(&mut out, value, false);
            out.push('\n');
        }
        out
    }
}

/// Reads logical lines like `Properties.LineReader.readLine`.
struct LineReader<'a> {
    chars: &'a [char],
    pos: usize,
    line: usize,
}

impl LineReader<'_> {
    fn next_char(&mut self) -> Option<char> {
        let c = *self.chars.get(self.pos)?;
        self.pos += 1;
        if c == '\n' || (c == '\r' && self.chars.get(self.pos) != Some(&'\n')) {
            self.line += 1;
        }
        Some(c)
    }

    /// The next logical line (continuations joined, terminator and comments dropped) and the
    /// physical line it starts on; `None` at end of input.
    fn read_line(&mut self) -> Option<(usize, Vec<char>)> {
        let mut buf: Vec<char> = Vec::new();
        let mut skip_blanks = true;
        let mut appended_line_begin = false;
        let mut preceding_backslash = false;
        let mut start_line = self.line;
        loop {
            let Some(c) = self.next_char() else {
                if buf.is_empty() {
                    return None;
                }
                if preceding_backslash {
                    buf.pop();
                }
                return Some((start_line, buf));
            };
            if skip_blanks {
                if matches!(c, ' ' | '\t' | '\u{c}') {
                    continue;
                }
                if !appended_line_begin && matches!(c, '\r' | '\n') {
                    continue;
                }
                skip_blanks = false;
                appended_line_begin = false;
            }
            if buf.is_empty() {
                start_line = self.line;
                if c == '#' || c == '!' {
                    // A comment runs to the end of the physical line; continuation backslashes
                    // inside it mean nothing.
                    while let Some(&next) = self.chars.get(self.pos) {
                        if next == '\n' || next == '\r' {
                            break;
                        }
                        self.pos += 1;
                    }
                    skip_blanks = true;
                    continue;
                }
            }
            if c != '\n' && c != '\r' {
                buf.push(c);
                preceding_backslash = c == '\\' && !preceding_backslash;
                continue;
            }
            if buf.is_empty() {
                skip_blanks = true;
                continue;
            }
            if preceding_backslash {
                // The backslash joins the next physical line; it is not part of the value.
                buf.pop();
                skip_blanks = true;
                appended_line_begin = true;
                preceding_backslash = false;
                if c == '\r' && self.chars.get(self.pos) == Some(&'\n') {
                    self.next_char();
                }
            } else {
                return Some((start_line, buf));
            }
        }
    }
}

/// Splits a logical line into raw (still escaped) key and value (`Properties.load0`).
fn split_key_value(line: &[char]) -> (&[char], &[char]) {
    let mut key_len = 0;
    let mut value_start = line.len();
    let mut has_separator = false;
    let mut preceding_backslash = false;
    while key_len < line.len() {
        let c = line[key_len];
        if (c == '=' || c == ':') && !preceding_backslash {
            value_start = key_len + 1;
            has_separator = true;
            break;
        } else if matches!(c, ' ' | '\t' | '\u{c}') && !preceding_backslash {
            value_start = key_len + 1;
            break;
        }
        preceding_backslash = c == '\\' && !preceding_backslash;
        key_len += 1;
    }
    while value_start < line.len() {
        let c = line[value_start];
        if !matches!(c, ' ' | '\t' | '\u{c}') {
            if !has_separator && (c == '=' || c == ':') {
                has_separator = true;
            } else {
                break;
            }
        }
        value_start += 1;
    }
    (&line[..key_len], &line[value_start..])
}

/// Resolves escapes (`Properties.loadConvert`); `None` on a malformed `\uXXXX`.
fn unescape(raw: &[char]) -> Option<String> {
    let mut units: Vec<u16> = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        i += 1;
        if c != '\\' {
            push_char(&mut units, c);
            continue;
        }
        // A lone trailing backslash cannot reach here (the line reader drops it), but be safe.
        let Some(&escaped) = raw.get(i) else { break };
        i += 1;
        match escaped {
            'u' => {
                let hex: String = raw.get(i..i + 4)?.iter().collect();
                if !hex.chars().all(|h| h.is_ascii_hexdigit()) {
                    return None;
                }
                units.push(u16::from_str_radix(&hex, 16).ok()?);
                i += 4;
            }
            't' => units.push(u16::from(b'\t')),
            'r' => units.push(u16::from(b'\r')),
            'n' => units.push(u16::from(b'\n')),
            'f' => units.push(0x0c),
            other => push_char(&mut units, other),
        }
    }
    // Java strings are UTF-16; an unpaired surrogate from `\uD800` alone becomes U+FFFD here.
    Some(
        char::decode_utf16(units)
            .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect(),
    )
}

fn push_char(units: &mut Vec<u16>, c: char) {
    let mut buf = [0u16; 2];
    units.extend_from_slice(c.encode_utf16(&mut buf));
}

/// `Properties.saveConvert(s, escapeSpace, escUnicode = false)`.
fn escape_into(out: &mut String, s: &str, is_key: bool) {
    for (i, c) in s.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            ' ' => {
                if i == 0 || is_key {
                    out.push('\\');
                }
                out.push(' ');
            }
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
}

/// `java.util.Date.toString()` in UTC: `EEE MMM dd HH:mm:ss UTC yyyy`.
pub fn java_date_string(unix_ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = unix_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm), proleptic Gregorian.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        year
    )
}

/// Orders keys the way Java 17's `Properties.store` iterates them: by bucket of a 16-slot
/// `ConcurrentHashMap` (`(h ^ h >>> 16) & 15` of `String.hashCode`), then insertion order.
/// Java 18+ sorts keys instead (JDK-8231640); readers do not care, but matching the JDK that
/// Kafka's tests and ours run on lets a file be compared byte for byte.
fn java17_store_order(props: &JavaProperties) -> JavaProperties {
    // A Properties map starts with 16 buckets and resizes at 12 entries; meta.properties has
    // at most 5 keys.
    assert!(
        props.len() < 12,
        "java17_store_order models the initial 16-bucket table only"
    );
    let bucket = |key: &str| {
        let h = key
            .encode_utf16()
            .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)));
        ((h ^ ((h as u32) >> 16) as i32) & 0x7fff_ffff & 15) as usize
    };
    let mut entries: Vec<(usize, usize, &str, &str)> = props
        .iter()
        .enumerate()
        .map(|(i, (k, v))| (bucket(k), i, k, v))
        .collect();
    entries.sort_by_key(|(b, i, _, _)| (*b, *i));
    let mut ordered = JavaProperties::new();
    for (_, _, k, v) in entries {
        ordered.set(k, v);
    }
    ordered
}

// ---------------------------------------------------------------------------------------------
// Kafka Uuid text form and directory ids
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// meta.properties
// ---------------------------------------------------------------------------------------------

/// The version of a meta.properties file (`MetaPropertiesVersion`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MetaPropertiesVersion {
    /// ZooKeeper era (also what a file without `version` is): `broker.id`, optional fields.
    V0,
    /// KRaft: `node.id` and `cluster.id` required.
    V1,
}

impl MetaPropertiesVersion {
    /// The number written in the `version` key.
    pub fn number(self) -> u8 {
        match self {
            Self::V0 => 0,
            Self::V1 => 1,
        }
    }
}

/// What is wrong with the contents of a meta.properties file. Every message names the key.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum InvalidMetaProperties {
    /// The file is not valid Java properties syntax.
    #[error(transparent)]
    Syntax(#[from] PropertiesSyntaxError),
    /// `version` is not an integer.
    #[error("Invalid meta.properties version string '{0}' (key `version`)")]
    InvalidVersion(String),
    /// `version` is neither 0 nor 1.
    #[error("Unknown meta.properties version number {0} (key `version`)")]
    UnknownVersion(i32),
    /// A required key is absent (`node.id` in v1, `cluster.id` in v1).
    #[error("Failed to find {0}")]
    MissingKey(&'static str),
    /// `node.id` / `broker.id` is not a 32-bit base-10 integer.
    #[error("Unable to read {key} as a base-10 number: '{value}'")]
    NotAnInteger {
        /// The key.
        key: &'static str,
        /// The value found.
        value: String,
    },
    /// `directory.id` is not a Kafka Uuid.
    #[error("Unable to read directory.id as a Uuid: {0}")]
    InvalidDirectoryId(KafkaUuidError),
    /// `directory.id` is a reserved value (`MetaPropertiesEnsemble.verify`).
    #[error("Invalid reserved directory ID {0} (key `directory.id`)")]
    ReservedDirectoryId(String),
}

/// A failure reading or writing a meta.properties file; carries the path.
#[derive(Debug, Error)]
pub enum MetaPropertiesError {
    /// Reading, writing, syncing or renaming failed.
    #[error("I/O error on {path}: {source}", path = path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The file exists but its contents are invalid.
    #[error("Invalid {path}: {source}", path = path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: InvalidMetaProperties,
    },
}

/// The contents of one directory's meta.properties (`MetaProperties`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaProperties {
    /// File version.
    pub version: MetaPropertiesVersion,
    /// `cluster.id`: always present in v1; any string Kafka accepted (normally a 22-character
    /// base64 Uuid).
    pub cluster_id: Option<String>,
    /// `node.id` (v1) or `broker.id` (v0).
    pub node_id: Option<i32>,
    /// `directory.id`, unique per directory of a node; the metadata directory's id is the
    /// node's Raft `ReplicaDirectoryId`.
    pub directory_id: Option<Uuid>,
}

impl MetaProperties {
    /// A v1 file as `kafka-storage format` writes it.
    pub fn v1(cluster_id: &str, node_id: i32, directory_id: Uuid) -> Self {
        MetaProperties {
            version: MetaPropertiesVersion::V1,
            cluster_id: Some(cluster_id.to_owned()),
            node_id: Some(node_id),
            directory_id: Some(directory_id),
        }
    }

    /// Interprets parsed properties (`MetaProperties.Builder(Properties).build()` plus the
    /// reserved-id check of `MetaPropertiesEnsemble.verify`). Unknown keys are ignored.
    pub fn from_properties(props: &JavaProperties) -> Result<Self, InvalidMetaProperties> {
        let version = match props.get(VERSION_PROP) {
            None => MetaPropertiesVersion::V0,
            Some(text) => {
                let trimmed = text.trim_matches(|c: char| c <= ' ');
                match trimmed.parse::<i32>() {
                    Ok(0) => MetaPropertiesVersion::V0,
                    Ok(1) => MetaPropertiesVersion::V1,
                    Ok(n) => return Err(InvalidMetaProperties::UnknownVersion(n)),
                    Err(_) => return Err(InvalidMetaProperties::InvalidVersion(text.to_owned())),
                }
            }
        };
        let node_id = match version {
            MetaPropertiesVersion::V0 if props.contains_key(BROKER_ID_PROP) => {
                Some(required_int(props, BROKER_ID_PROP)?)
            }
            MetaPropertiesVersion::V0 => None,
            MetaPropertiesVersion::V1 => Some(required_int(props, NODE_ID_PROP)?),
        };
        let cluster_id = props.get(CLUSTER_ID_PROP).map(str::to_owned);
        if version == MetaPropertiesVersion::V1 && cluster_id.is_none() {
            return Err(InvalidMetaProperties::MissingKey(CLUSTER_ID_PROP));
        }
        let directory_id = match props.get(DIRECTORY_ID_PROP) {
            None => None,
            Some(text) => {
                let id = kafka_uuid_from_string(text)
                    .map_err(InvalidMetaProperties::InvalidDirectoryId)?;
                if is_reserved_directory_id(id) {
                    return Err(InvalidMetaProperties::ReservedDirectoryId(text.to_owned()));
                }
                Some(id)
            }
        };
        Ok(MetaProperties {
            version,
            cluster_id,
            node_id,
            directory_id,
        })
    }

    /// The properties Kafka writes (`MetaProperties.toProperties`), in the order Java 17's
    /// `Properties.store` emits them.
    pub fn to_properties(&self) -> JavaProperties {
        let mut props = JavaProperties::new();
        props.set(VERSION_PROP, &self.version.number().to_string());
        if let Some(cluster_id) = &self.cluster_id {
            props.set(CLUSTER_ID_PROP, cluster_id);
        }
        match (self.version, self.node_id) {
            (MetaPropertiesVersion::V0, Some(id)) => props.set(BROKER_ID_PROP, &id.to_string()),
            (MetaPropertiesVersion::V0, None) => {}
            (MetaPropertiesVersion::V1, id) => {
                let id = id.expect("a v1 meta.properties always has node.id");
                props.set(NODE_ID_PROP, &id.to_string());
            }
        }
        if let Some(id) = self.directory_id {
            props.set(DIRECTORY_ID_PROP, &kafka_uuid_to_string(id));
        }
        java17_store_order(&props)
    }

    /// The file text Kafka would write at `now_ms` (empty comment, then the date line).
    pub fn render(&self, now_ms: i64) -> String {
        self.to_properties().store("", now_ms)
    }

    /// Reads `<dir>/meta.properties`; `Ok(None)` when the file does not exist (an unformatted
    /// directory, `MetaPropertiesEnsemble.emptyLogDirs`).
    pub fn read(dir: &Path) -> Result<Option<MetaProperties>, MetaPropertiesError> {
        let path = dir.join(META_PROPERTIES_FILE);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(MetaPropertiesError::Io { path, source }),
        };
        let parsed = JavaProperties::parse(&bytes)
            .map_err(InvalidMetaProperties::from)
            .and_then(|props| MetaProperties::from_properties(&props));
        match parsed {
            Ok(meta) => Ok(Some(meta)),
            Err(source) => Err(MetaPropertiesError::Invalid { path, source }),
        }
    }

    /// Writes `<dir>/meta.properties` as `PropertiesUtils.writePropertiesFile(.., fsync=true)`:
    /// UTF-8 text to `meta.properties.tmp`, fsync, atomic rename over the file, fsync of `dir`.
    /// The directory must exist. A failed rename removes the `.tmp` file.
    pub fn write(&self, dir: &Path) -> Result<(), MetaPropertiesError> {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let path = dir.join(META_PROPERTIES_FILE);
        let tmp = dir.join(format!("{META_PROPERTIES_FILE}.tmp"));
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| MetaPropertiesError::Io { path, source }
        };
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(io_err(&tmp))?;
        file.write_all(self.render(now_ms).as_bytes())
            .map_err(io_err(&tmp))?;
        file.sync_all().map_err(io_err(&tmp))?;
        drop(file);
        if let Err(source) = fs::rename(&tmp, &path) {
            let _ = fs::remove_file(&tmp);
            return Err(MetaPropertiesError::Io { path, source });
        }
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_err(dir))
    }
}

fn required_int(props: &JavaProperties, key: &'static str) -> Result<i32, InvalidMetaProperties> {
    let value = props
        .get(key)
        .ok_or(InvalidMetaProperties::MissingKey(key))?;
    value
        .parse::<i32>()
        .map_err(|_| InvalidMetaProperties::NotAnInteger {
            key,
            value: value.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> JavaProperties {
        JavaProperties::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn parses_java_properties_syntax() {
        let props = parse(
            "# comment\n\
             ! also a comment \\\n\
             a=1\n\
             \x20 b : 2\n\
             c 3\n\
             d\t=\t 4 \n\
             e\n\
             f=\n\
             long = one \\\n\
             \x20     two\\\n\
             three\n\
             esc\\ key\\=x=\\t\\n\\u0041\\q\\\\\n\
             g=x=y:z\n\
             h:=lead\n\
             c=replaced\n",
        );
        let expected = [
            ("a", "1"),
            ("b", "2"),
            ("c", "replaced"),
            ("d", "4 "),
            ("e", ""),
            ("f", ""),
            ("long", "one twothree"),
            ("esc key=x", "\t\nAq\\"),
            ("g", "x=y:z"),
            ("h", "=lead"),
        ];
        let got: Vec<(&str, &str)> = props.iter().collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn handles_crlf_cr_and_continuations_across_them() {
        let props = parse("a=1\r\nb=2\rc=x\\\r\n  y\r\n");
        assert_eq!(props.get("a"), Some("1"));
        assert_eq!(props.get("b"), Some("2"));
        assert_eq!(props.get("c"), Some("xy"));
        // A continuation at end of input drops the backslash; an escaped backslash is kept.
        assert_eq!(parse("k=v\\").get("k"), Some("v"));
        assert_eq!(parse("k=v\\\\\nn=1").get("k"), Some("v\\"));
        // A continued line does not start a comment.
        assert_eq!(parse("k=a\\\n#b").get("k"), Some("a#b"));
    }

    #[test]
    fn bytes_are_latin1_and_unicode_escapes_utf16() {
        let props = JavaProperties::parse(b"k=\xe9\\u00e9\\uD83D\\uDE00").unwrap();
        assert_eq!(props.get("k"), Some("éé😀"));
    }

    #[test]
    fn malformed_unicode_escape_reports_line() {
        let err = JavaProperties::parse(b"a=1\n\nb=\\u12G4\n").unwrap_err();
        assert_eq!(err, PropertiesSyntaxError { line: 3 });
        assert!(JavaProperties::parse(b"b=\\u12").is_err());
    }

    #[test]
    fn store_escapes_like_save_convert_and_parses_back() {
        let mut props = JavaProperties::new();
        props.set("a key", " lead space, inner space");
        props.set("x=y:z", "#!=:\\\t\n\r\u{c}é");
        let text = props.store("", 0);
        assert_eq!(
            text,
            "#\n#Thu Jan 01 00:00:00 UTC 1970\n\
             a\\ key=\\ lead space, inner space\n\
             x\\=y\\:z=\\#\\!\\=\\:\\\\\\t\\n\\r\\fé\n"
        );
        // The writer emits UTF-8 but Java reads ISO-8859-1, so compare only ASCII round trips.
        let mut ascii = props.clone();
        ascii.set("x=y:z", "#!=:\\\t\n\r\u{c}e");
        assert_eq!(
            JavaProperties::parse(ascii.store("", 0).as_bytes()).unwrap(),
            ascii
        );
    }

    #[test]
    fn date_line_matches_java_date_to_string() {
        // Printed by java.util.Date.toString() with the UTC default time zone.
        let cases = [
            (0, "Thu Jan 01 00:00:00 UTC 1970"),
            (951_782_400_000, "Tue Feb 29 00:00:00 UTC 2000"),
            (1_795_939_871_000, "Sun Nov 29 08:11:11 UTC 2026"),
            (-1, "Wed Dec 31 23:59:59 UTC 1969"),
            (4_102_444_799_999, "Thu Dec 31 23:59:59 UTC 2099"),
        ];
        for (ms, text) in cases {
            assert_eq!(java_date_string(ms), text, "{ms}");
        }
    }

    #[test]
    fn renders_byte_identical_to_kafka_storage_format() {
        // meta.properties written by Kafka 4.1.2 `kafka-storage format` on Java 17.
        let kafka =
            "#\n#Sun Nov 29 08:11:11 UTC 2026\nnode.id=1\ndirectory.id=MjvrO494hfnTQHWt9EWPdw\n\
                     version=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\n";
        let meta = MetaProperties::from_properties(&parse(kafka)).unwrap();
        assert_eq!(meta.version, MetaPropertiesVersion::V1);
        assert_eq!(meta.node_id, Some(1));
        assert_eq!(meta.cluster_id.as_deref(), Some("AAAAAAAAAAAAAAAAAAAAAA"));
        assert_eq!(meta.render(1_795_939_871_000), kafka);
        // Kafka accepts any cluster id and escapes it when storing.
        let kafka_odd =
            "#\n#Sun Nov 29 08:11:11 UTC 2026\nnode.id=1\ndirectory.id=TT5kQsjZHDixhF0a4R_B8g\n\
                         version=1\ncluster.id=not a uuid\\!\n";
        let meta = MetaProperties::from_properties(&parse(kafka_odd)).unwrap();
        assert_eq!(meta.cluster_id.as_deref(), Some("not a uuid!"));
        assert_eq!(meta.render(1_795_939_871_000), kafka_odd);
    }

    #[test]
    fn reads_v0_files() {
        let meta =
            MetaProperties::from_properties(&parse("broker.id=3\ncluster.id=abc\n")).unwrap();
        assert_eq!(meta.version, MetaPropertiesVersion::V0);
        assert_eq!(meta.node_id, Some(3));
        let meta = MetaProperties::from_properties(&parse("version=0\n")).unwrap();
        assert_eq!((meta.node_id, meta.cluster_id.as_deref()), (None, None));
        let v0 = MetaProperties {
            version: MetaPropertiesVersion::V0,
            ..meta
        };
        let text = MetaProperties {
            node_id: Some(5),
            ..v0
        }
        .render(0);
        assert!(
            text.contains("broker.id=5\n") && text.contains("version=0\n"),
            "{text}"
        );
    }

    #[test]
    fn invalid_values_name_their_key() {
        let cases = [
            ("version=x\n", "version"),
            ("version=7\n", "version"),
            ("version=1\ncluster.id=c\n", "node.id"),
            ("version=1\nnode.id=1\n", "cluster.id"),
            ("version=1\ncluster.id=c\nnode.id=one\n", "node.id"),
            ("version=1\ncluster.id=c\nnode.id=3000000000\n", "node.id"),
            ("broker.id=x\n", "broker.id"),
            (
                "version=1\ncluster.id=c\nnode.id=1\ndirectory.id=not-a-uuid\n",
                "directory.id",
            ),
            (
                "version=1\ncluster.id=c\nnode.id=1\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAQ\n",
                "directory.id",
            ),
        ];
        for (text, key) in cases {
            let err = MetaProperties::from_properties(&parse(text)).unwrap_err();
            assert!(err.to_string().contains(key), "{text:?} gave {err}");
        }
        // Whitespace around the version number is tolerated, as `trim()` does in Java.
        assert!(
            MetaProperties::from_properties(&parse("version= 1 \ncluster.id=c\nnode.id=1")).is_ok()
        );
    }

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

    #[test]
    fn write_then_read_round_trips_atomically() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(MetaProperties::read(dir.path()).unwrap(), None);
        let meta = MetaProperties::v1("MkU3OEVBNTcwNTJENDM2Qg", 7, random_directory_id(&[]));
        meta.write(dir.path()).unwrap();
        assert_eq!(
            MetaProperties::read(dir.path()).unwrap(),
            Some(meta.clone())
        );
        assert!(!dir.path().join("meta.properties.tmp").exists());
        let text = fs::read_to_string(dir.path().join(META_PROPERTIES_FILE)).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("#"));
        let date = lines.next().unwrap();
        assert!(date.starts_with('#') && date.contains(" UTC "), "{date}");
        // Overwrite replaces the old contents.
        let newer = MetaProperties {
            node_id: Some(8),
            ..meta
        };
        newer.write(dir.path()).unwrap();
        assert_eq!(MetaProperties::read(dir.path()).unwrap(), Some(newer));
    }

    #[test]
    fn read_reports_path_of_invalid_file() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join(META_PROPERTIES_FILE),
            "version=1\ncluster.id=c\n",
        )
        .unwrap();
        let err = MetaProperties::read(dir.path()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("meta.properties") && text.contains("node.id"),
            "{text}"
        );
    }
}
