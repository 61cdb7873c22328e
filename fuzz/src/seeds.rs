//! Seed corpora: Java-written request frames from compat's `rpc.tsv`, scripts built against
//! the image and the core the targets start from, and log directories (Java's fixtures, and
//! ones written with the log crate).

mod controller;
mod logs;
mod raft;

pub use controller::controller_seeds;
pub use logs::log_dir_seeds;
pub use raft::raft_seeds;

use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, RequestKind};
use kraftwerk_protocol::codec::{encode_request_frame, request_header};

/// One request row of `rpc.tsv`: Kafka wrote `payload` (header + body, no size prefix).
#[derive(Debug, Clone)]
pub struct JavaFrame {
    /// Api name, e.g. `CreateTopics`.
    pub name: String,
    /// Api key.
    pub api_key: i16,
    /// Version.
    pub version: i16,
    /// Header and body as Kafka's classes wrote them.
    pub payload: Vec<u8>,
}

impl JavaFrame {
    /// The payload with its 4-byte size prefix: what a client puts on the wire.
    pub fn framed(&self) -> Vec<u8> {
        let mut out = (self.payload.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(&self.payload);
        out
    }
}

/// The request rows of an `rpc.tsv` (`name, api key, version, request|response, hex, …`), at
/// most `per_version` of each api and version.
pub fn java_requests(tsv: &str, per_version: usize) -> Vec<JavaFrame> {
    let mut out: Vec<JavaFrame> = Vec::new();
    for line in tsv.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 5 || cols[3] != "request" {
            continue;
        }
        let (Ok(api_key), Ok(version)) = (cols[1].parse(), cols[2].parse()) else {
            continue;
        };
        let seen = out
            .iter()
            .filter(|f| f.api_key == api_key && f.version == version)
            .count();
        if seen < per_version {
            out.push(JavaFrame {
                name: cols[0].to_owned(),
                api_key,
                version,
                payload: unhex(cols[4]),
            });
        }
    }
    out
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .filter_map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok())
        .collect()
}

/// A request frame (size prefix included) for `body` at `version`.
pub fn frame(api: ApiKey, version: i16, correlation_id: i32, body: RequestKind) -> Bytes {
    let header = request_header(api, version, correlation_id, "kraftwerk-fuzz-seed");
    encode_request_frame(&header, &body)
        .unwrap_or_else(|e| panic!("seed {api:?} v{version} does not encode: {e}"))
}
