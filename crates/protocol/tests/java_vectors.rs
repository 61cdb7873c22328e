//! RPC vectors for the cross-check against Kafka's own Java classes (`compat/`, driven by
//! `compat/run`). Both tests are `#[ignore]`d and need `KRAFTWERK_JAVA_VECTORS=<dir>`; optional
//! `KRAFTWERK_COMPAT_SAMPLES` (random values per api, version and kind; default 40) and
//! `KRAFTWERK_COMPAT_SEED`.
//!
//! The apis and versions are those of `compat/rpc-versions.txt`, cut to what kafka-protocol
//! knows. Frames are header + body without the size prefix, encoded and decoded by kraftwerk's
//! own codec (`kraftwerk_protocol::codec`), so header version choice is covered too.
//!
//! - `write_rust_rpc_vectors` writes `<dir>/rust/rpc.tsv` (`name, api key, version,
//!   request|response, hex, header JSON, body JSON`; the JSON in the format of Kafka's
//!   `*JsonConverter`, rendered from `Debug` as for metadata records): random requests and
//!   responses, made by filling every field with random values (`kraftwerk_protocol::adapt::fill`,
//!   the `testing` feature) and fitting them to the version with kraftwerk's own
//!   `adapt_request_for_version` / `adapt_response_for_version`, exactly as kraftwerk prepares
//!   what it sends. Java reads each with its `*Data` classes and must write identical bytes.
//! - `read_java_rpc_vectors` reads `<dir>/java/rpc.tsv`, frames Kafka's classes wrote for random
//!   values, decodes them with our codec and re-encodes them: the bytes must be identical, and
//!   our header and body must hold every field line Kafka listed.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;
use kraftwerk_protocol::adapt::fill::{
    random_request, random_response, request_unknown_tags, response_unknown_tags, Fill, Gen,
};
use kraftwerk_protocol::codec::{
    decode_request_body, decode_request_header, decode_response, encode_request_into,
    encode_response_into,
};
use kraftwerk_protocol::{adapt_request_for_version, adapt_response_for_version};

/// The `Debug` → Kafka-JSON rendering of the records crate's vector tests, shared so that RPC
/// field values are compared the same way.
#[path = "../../records/src/java_vectors/debug_json.rs"]
mod debug_json;

fn json_of(value: &impl std::fmt::Debug) -> String {
    debug_json::to_text(&debug_json::from_debug(&format!("{value:?}")))
}

/// Kafka's canonical field lines (space-separated) that our rendering of `value` lacks.
fn missing_field(java_lines: &str, value: &impl std::fmt::Debug) -> Option<String> {
    let ours = debug_json::canonical_lines(&debug_json::from_debug(&format!("{value:?}")));
    let have: HashSet<&str> = ours.iter().map(String::as_str).collect();
    java_lines
        .split(' ')
        .filter(|l| !l.is_empty())
        .find(|l| !have.contains(l))
        .map(|line| {
            let key = &line[..line.find('=').unwrap()];
            let theirs = ours
                .iter()
                .find(|l| l.starts_with(&format!("{key}=")))
                .map_or("<absent>", String::as_str);
            format!("Kafka has {line}, we have {theirs}")
        })
}

/// What Kafka's writers do beyond field versions, which `adapt` leaves to the caller: an
/// ApiVersions response with UNSUPPORTED_VERSION makes every reader parse the body at v0
/// (KIP-511), and Java's generator leaves that code out above v0 too.
fn fit_kafka_writer_rules(body: &mut Body, version: i16) {
    if let Body::Response(response) = body {
        if let ResponseKind::ApiVersions(r) = response.as_mut() {
            if version > 0 && r.error_code == 35 {
                r.error_code = 0;
            }
        }
    }
}

/// Values kafka-protocol encodes but Kafka cannot read, which kraftwerk must never send (and
/// which `adapt` does not prevent yet, so they are drawn again here and reported by name):
/// - DeleteTopics response v1-5 with a null topic name: `Name` is nullable only from v6, but
///   kafka-protocol's `Option<TopicName>` writes null at any version and Java fails with
///   "non-nullable field name was serialized as null".
fn unreadable_by_kafka(body: &Body, version: i16) -> Option<&'static str> {
    match body {
        Body::Response(response) => match response.as_ref() {
            ResponseKind::DeleteTopics(r)
                if version < 6 && r.responses.iter().any(|t| t.name.is_none()) =>
            {
                Some("DeleteTopics response below v6 with a null topic name")
            }
            _ => None,
        },
        Body::Request(_) => None,
    }
}

/// A request or response body, boxed: both kinds are enums of every message struct.
enum Body {
    Request(Box<RequestKind>),
    Response(Box<ResponseKind>),
}

/// A random body of any api, every field filled.
fn random_body(api: ApiKey, request: bool, g: &mut Gen) -> Option<Body> {
    if request {
        random_request(api, g).map(|r| Body::Request(Box::new(r)))
    } else {
        random_response(api, g).map(|r| Body::Response(Box::new(r)))
    }
}

/// The unknown tagged fields of a body of a flexible version.
fn unknown_tags(body: &mut Body) -> &mut BTreeMap<i32, Bytes> {
    match body {
        Body::Request(r) => request_unknown_tags(r),
        Body::Response(r) => response_unknown_tags(r),
    }
    .expect("flexible messages have unknown tagged fields")
}

fn vectors_root() -> PathBuf {
    std::env::var_os("KRAFTWERK_JAVA_VECTORS")
        .expect("set KRAFTWERK_JAVA_VECTORS to the vectors directory (compat/run does)")
        .into()
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}={v} is not a number"))
        })
        .unwrap_or(default)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn first_difference(expected: &[u8], actual: &[u8]) -> Option<String> {
    let at = expected
        .iter()
        .zip(actual)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(actual.len()));
    if at == expected.len() && at == actual.len() {
        return None;
    }
    let from = at.saturating_sub(4);
    let window = |b: &[u8]| hex(&b[from.min(b.len())..(from + 16).min(b.len())]);
    Some(format!(
        "first differing byte at offset {at} (lengths {} vs {}); from offset {from}: {} vs {}",
        expected.len(),
        actual.len(),
        window(expected),
        window(actual)
    ))
}

/// (name, api, min, max) from compat/rpc-versions.txt, cut to kafka-protocol's range.
fn listed_apis() -> Vec<(String, ApiKey, i16, i16)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../compat/rpc-versions.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let key: i16 = f[1].parse().unwrap();
            let api = ApiKey::try_from(key)
                .unwrap_or_else(|()| panic!("kafka-protocol has no api key {key}"));
            let range = api.valid_versions();
            let min = f[2].parse::<i16>().unwrap().max(range.min);
            let max = f[3].parse::<i16>().unwrap().min(range.max);
            (f[0].to_string(), api, min, max)
        })
        .collect()
}

/// A frame decoded by our codec: the header and body (as `Debug` values, for the field check)
/// and the bytes we encode for them.
struct Decoded {
    header: Box<dyn std::fmt::Debug>,
    body: Box<dyn std::fmt::Debug>,
    encoded: Bytes,
}

/// Decodes a frame with our codec and encodes it again; `Err` says what went wrong.
fn round_trip(api: ApiKey, version: i16, request: bool, frame: &[u8]) -> Result<Decoded, String> {
    let mut payload = Bytes::copy_from_slice(frame);
    let mut out = BytesMut::new();
    if request {
        let (key, header) = decode_request_header(&mut payload).map_err(|e| e.to_string())?;
        if key != api || header.request_api_version != version {
            return Err(format!(
                "header names {key:?} v{}",
                header.request_api_version
            ));
        }
        let decoded = decode_request_body(key, header, payload).map_err(|e| e.to_string())?;
        encode_request_into(&decoded.header, &decoded.body, &mut out).map_err(|e| e.to_string())?;
        Ok(Decoded {
            header: Box::new(decoded.header),
            body: Box::new(decoded.body),
            encoded: out.freeze(),
        })
    } else {
        let (header, body_version, body) =
            decode_response(api, version, payload).map_err(|e| e.to_string())?;
        encode_response_into(api, body_version, header.correlation_id, &body, &mut out)
            .map_err(|e| e.to_string())?;
        Ok(Decoded {
            header: Box::new(header),
            body: Box::new(body),
            encoded: out.freeze(),
        })
    }
}

fn random_unknown_tags(g: &mut Gen) -> BTreeMap<i32, Bytes> {
    let mut tags = BTreeMap::new();
    if i8::fill(g).rem_euclid(4) == 0 {
        for i in 0..1 + u16::fill(g) % 2 {
            tags.insert(100 + 3 * i as i32, Bytes::fill(g));
        }
    }
    tags
}

#[test]
#[ignore = "writes RPC vectors for compat/ (Kafka's Java classes); needs KRAFTWERK_JAVA_VECTORS"]
fn write_rust_rpc_vectors() {
    let samples = env_number("KRAFTWERK_COMPAT_SAMPLES", 40) as usize;
    let mut g = Gen::new(env_number("KRAFTWERK_COMPAT_SEED", 20251129));
    let mut lines = Vec::new();
    let mut failures = Vec::new();
    let mut unreadable: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, api, min, max) in listed_apis() {
        for version in min..=max {
            let flexible = api.request_header_version(version) >= 2;
            for request in [true, false] {
                let kind = if request { "request" } else { "response" };
                let (mut written, mut attempts) = (0, 0);
                while written < samples && attempts < samples * 50 {
                    attempts += 1;
                    let mut body = random_body(api, request, &mut g).unwrap_or_else(|| {
                        panic!("{name} is listed but kafka-protocol has no struct for it")
                    });
                    // kraftwerk's own fitting; values it refuses (a topic it cannot name) are
                    // not sendable, so another value is drawn.
                    let fitted = match &mut body {
                        Body::Request(r) => adapt_request_for_version(r, version).is_ok(),
                        Body::Response(r) => adapt_response_for_version(r, version).is_ok(),
                    };
                    if !fitted {
                        continue;
                    }
                    fit_kafka_writer_rules(&mut body, version);
                    if let Some(reason) = unreadable_by_kafka(&body, version) {
                        *unreadable.entry(reason).or_insert(0) += 1;
                        continue;
                    }
                    if flexible {
                        *unknown_tags(&mut body) = random_unknown_tags(&mut g);
                    }
                    let mut out = BytesMut::new();
                    let (encoded, header_json, body_json) = match &body {
                        Body::Request(r) => {
                            let mut header = RequestHeader::default()
                                .with_request_api_key(api as i16)
                                .with_request_api_version(version)
                                .with_correlation_id(Fill::fill(&mut g))
                                .with_client_id(Fill::fill(&mut g));
                            if flexible {
                                header.unknown_tagged_fields = random_unknown_tags(&mut g);
                            }
                            (
                                encode_request_into(&header, r, &mut out),
                                json_of(&header),
                                json_of(r),
                            )
                        }
                        Body::Response(r) => {
                            let header =
                                ResponseHeader::default().with_correlation_id(Fill::fill(&mut g));
                            let encoded = encode_response_into(
                                api,
                                version,
                                header.correlation_id,
                                r,
                                &mut out,
                            );
                            (encoded, json_of(&header), json_of(r))
                        }
                    };
                    if let Err(e) = encoded {
                        failures.push(format!(
                            "{name} v{version} {kind}: adapted value does not encode: {e}"
                        ));
                        continue;
                    }
                    let frame = out.freeze();
                    // Our own decoder must give back exactly what we encoded.
                    match round_trip(api, version, request, &frame) {
                        Ok(again) if again.encoded == frame => {}
                        Ok(again) => failures.push(format!(
                            "{name} v{version} {kind}: our decode+encode changes our own bytes: {}",
                            first_difference(&frame, &again.encoded).unwrap()
                        )),
                        Err(e) => failures.push(format!(
                            "{name} v{version} {kind}: we cannot decode our own bytes: {e}"
                        )),
                    }
                    lines.push(format!(
                        "{name}\t{}\t{version}\t{kind}\t{}\t{header_json}\t{body_json}",
                        api as i16,
                        hex(&frame)
                    ));
                    written += 1;
                }
                if written < samples {
                    failures.push(format!("{name} v{version} {kind}: only {written} of {samples} random values could be fitted"));
                }
            }
        }
    }
    let dir = vectors_root().join("rust");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("rpc.tsv"), lines.join("\n") + "\n").unwrap();
    assert!(
        failures.is_empty(),
        "{} problems:\n  - {}",
        failures.len(),
        failures
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n  - ")
    );
    eprintln!("compat: wrote {} RPC frames", lines.len());
    for (reason, count) in unreadable {
        eprintln!("compat: KNOWN GAP: {count} random values drawn again: {reason}");
    }
}

#[test]
#[ignore = "reads RPC vectors written by compat/ (Kafka's Java classes); needs KRAFTWERK_JAVA_VECTORS"]
fn read_java_rpc_vectors() {
    let java = vectors_root().join("java");
    let text = std::fs::read_to_string(java.join("rpc.tsv")).expect("java/rpc.tsv: run compat/run");
    let mut failures = Vec::new();
    let mut seen = HashSet::new();
    let mut checks = 0;
    for line in text.lines().filter(|l| !l.is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let key: i16 = cols[1].parse().unwrap();
        let version: i16 = cols[2].parse().unwrap();
        let request = cols[3] == "request";
        let what = format!("{} v{version} {}", cols[0], cols[3]);
        let Ok(api) = ApiKey::try_from(key) else {
            failures.push(format!("{what}: kafka-protocol has no api key {key}"));
            continue;
        };
        seen.insert((key, version, request));
        checks += 1;
        let frame = unhex(cols[4]);
        match round_trip(api, version, request, &frame) {
            Ok(ours) => {
                if ours.encoded.as_ref() != frame.as_slice() {
                    failures.push(format!(
                        "{what}: re-encoded differently: {}; Kafka bytes {}",
                        first_difference(&frame, &ours.encoded).unwrap(),
                        cols[4]
                    ));
                }
                checks += 2;
                if let Some(m) = missing_field(cols[5], &ours.header) {
                    failures.push(format!(
                        "{what} header: fields differ: {m}; {:?}",
                        ours.header
                    ));
                }
                if let Some(m) = missing_field(cols[6], &ours.body) {
                    failures.push(format!("{what}: fields differ: {m}; {:?}", ours.body));
                }
            }
            Err(e) => failures.push(format!(
                "{what}: we cannot decode Kafka's bytes {}: {e}",
                cols[4]
            )),
        }
    }
    // Coverage: every listed version both libraries know.
    let ranges = std::fs::read_to_string(java.join("rpc-ranges.tsv")).expect("java/rpc-ranges.tsv");
    let java_ranges: BTreeMap<i16, (i16, i16)> = ranges
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<i16> = l.split('\t').map(|x| x.parse().unwrap()).collect();
            (f[0], (f[1], f[2]))
        })
        .collect();
    for (name, api, min, max) in listed_apis() {
        let (jmin, jmax) = java_ranges.get(&(api as i16)).copied().unwrap_or((1, 0));
        for version in min.max(jmin)..=max.min(jmax) {
            for request in [true, false] {
                checks += 1;
                if !seen.contains(&(api as i16, version, request)) {
                    failures.push(format!(
                        "Kafka wrote no {name} v{version} {} vectors",
                        if request { "request" } else { "response" }
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "Kafka RPC frames read by kraftwerk's codec: {} of {checks} checks failed\n  - {}",
        failures.len(),
        failures
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n  - ")
    );
    eprintln!("compat: Kafka RPC frames read by kraftwerk's codec: {checks} checks passed");
}
