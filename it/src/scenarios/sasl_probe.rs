//! A client that speaks TLS but no SASL to a `SASL_SSL` listener, for the `secure` scenario:
//! `openssl s_client` carries two raw Kafka requests on one connection, ApiVersions v0 and then
//! a [`Second`] request (DescribeCluster v0, the admin client's metadata request in
//! `--bootstrap-controller` mode, or a phantom broker's BrokerRegistration v0), and the bytes
//! that come back are split into response frames by correlation id.
//!
//! Java's `SaslServerAuthenticator` answers an ApiVersions before the handshake (KIP-35: every
//! Kafka client sends it first, also over SASL) and closes the connection on any other request
//! before SaslHandshake ("Unexpected Kafka request of type DESCRIBE_CLUSTER during SASL
//! handshake").

use anyhow::{Context, Result};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::procs;

/// Correlation id of the ApiVersions request.
pub const API_VERSIONS_ID: i32 = 0x4b57_0011;
/// Correlation id of the DescribeCluster request.
pub const DESCRIBE_CLUSTER_ID: i32 = 0x4b57_0012;
/// Correlation id of the BrokerRegistration request.
pub const BROKER_REGISTRATION_ID: i32 = 0x4b57_0013;
/// The broker id the phantom BrokerRegistration claims (no real node has it).
pub const PHANTOM_BROKER_ID: i32 = 666;

/// The request sent after ApiVersions, before any SaslHandshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Second {
    /// DescribeCluster v0 (api 60).
    DescribeCluster,
    /// BrokerRegistration v0 (api 62) of broker [`PHANTOM_BROKER_ID`] with one PLAINTEXT
    /// listener: what a rogue client would send to register a broker.
    BrokerRegistration,
}

impl Second {
    /// The request's correlation id.
    pub fn correlation_id(self) -> i32 {
        match self {
            Second::DescribeCluster => DESCRIBE_CLUSTER_ID,
            Second::BrokerRegistration => BROKER_REGISTRATION_ID,
        }
    }
}

/// What one probe connection saw.
#[derive(Debug)]
pub struct Probe {
    /// Correlation ids of the response frames that came back, in order.
    pub answered: Vec<i32>,
    /// The server closed the connection (s_client exited before the timeout).
    pub closed: bool,
    /// Bytes received in all.
    pub bytes: usize,
    /// s_client's stderr, for the failure message.
    pub stderr: String,
}

/// Request header v1 (`api_key`, `api_version`, `correlation_id`, `client_id`) and, for a
/// flexible request (header v2), its empty tagged fields.
fn header(api_key: i16, version: i16, correlation: i32, flexible: bool) -> Vec<u8> {
    let client_id = b"sasl-probe";
    let mut h = Vec::new();
    h.extend_from_slice(&api_key.to_be_bytes());
    h.extend_from_slice(&version.to_be_bytes());
    h.extend_from_slice(&correlation.to_be_bytes());
    h.extend_from_slice(&(client_id.len() as i16).to_be_bytes());
    h.extend_from_slice(client_id);
    if flexible {
        h.push(0); // no tagged fields
    }
    h
}

fn frame(body: Vec<u8>) -> Vec<u8> {
    let mut f = (body.len() as i32).to_be_bytes().to_vec();
    f.extend(body);
    f
}

/// A compact string (KIP-482): unsigned varint length + 1 (every string here is under 127
/// bytes, one byte), then the bytes.
fn compact_string(out: &mut Vec<u8>, s: &str) {
    debug_assert!(s.len() < 127);
    out.push(s.len() as u8 + 1);
    out.extend_from_slice(s.as_bytes());
}

/// BrokerRegistration v0 body (`BrokerRegistrationRequest.json`): broker id, cluster id,
/// incarnation id, one listener (name, host, port, security protocol, no tags), no features,
/// a null rack, no tags.
fn broker_registration_body() -> Vec<u8> {
    let mut b = PHANTOM_BROKER_ID.to_be_bytes().to_vec();
    compact_string(&mut b, "phantom-cluster-id-000");
    b.extend_from_slice(&[0x4b; 16]);
    b.push(2); // one listener
    compact_string(&mut b, "PLAINTEXT");
    compact_string(&mut b, "127.0.0.1");
    b.extend_from_slice(&9u16.to_be_bytes());
    b.extend_from_slice(&0i16.to_be_bytes());
    b.push(0); // listener tags
    b.push(1); // no features
    b.push(0); // rack: null
    b.push(0); // tags
    b
}

/// ApiVersions v0 (empty body) and then `second` (DescribeCluster v0 with
/// `include_cluster_authorized_operations = false`, or [`broker_registration_body`]), back to
/// back.
pub fn requests(second: Second) -> Vec<u8> {
    let mut out = frame(header(18, 0, API_VERSIONS_ID, false));
    let mut req = match second {
        Second::DescribeCluster => header(60, 0, DESCRIBE_CLUSTER_ID, true),
        Second::BrokerRegistration => header(62, 0, BROKER_REGISTRATION_ID, true),
    };
    match second {
        Second::DescribeCluster => req.extend_from_slice(&[0, 0]),
        Second::BrokerRegistration => req.extend(broker_registration_body()),
    }
    out.extend(frame(req));
    out
}

/// The correlation ids of the complete response frames in `bytes` (every response header
/// starts with it).
pub fn correlation_ids(bytes: &[u8]) -> Vec<i32> {
    let mut ids = Vec::new();
    let mut rest = bytes;
    while rest.len() >= 8 {
        let len = i32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let Ok(len) = usize::try_from(len) else { break };
        if len < 4 || rest.len() < 4 + len {
            break;
        }
        ids.push(i32::from_be_bytes([rest[4], rest[5], rest[6], rest[7]]));
        rest = &rest[4 + len..];
    }
    ids
}

/// Connects to `addr` over TLS (verified against `ca`; presenting the key and certificate of
/// the PKCS12 store `client` protected by `password`, if given), sends [`requests`] with
/// `second` and reads until the server closes or `timeout` passes. Files go to `work`
/// (`<tag>.{bin,out,err,pem}`).
pub fn run(
    work: &Path,
    tag: &str,
    addr: &str,
    ca: &Path,
    client: Option<(&Path, &str)>,
    second: Second,
    timeout: Duration,
) -> Result<Probe> {
    let pem = work.join(format!("{tag}.pem"));
    if let Some((p12, password)) = client {
        let status = Command::new("openssl")
            .args(["pkcs12", "-nodes", "-passin"])
            .arg(format!("pass:{password}"))
            .arg("-in")
            .arg(p12)
            .arg("-out")
            .arg(&pem)
            .status()
            .context("running openssl pkcs12")?;
        anyhow::ensure!(
            status.success(),
            "openssl pkcs12 could not read {}",
            p12.display()
        );
    }
    let input = work.join(format!("{tag}.bin"));
    let out = work.join(format!("{tag}.out"));
    let err = work.join(format!("{tag}.err"));
    std::fs::write(&input, requests(second))?;
    let mut cmd = Command::new("openssl");
    // -quiet implies -ign_eof: s_client keeps reading after its stdin ends, until the server
    // closes the connection.
    cmd.args([
        "s_client",
        "-quiet",
        "-verify_return_error",
        "-connect",
        addr,
    ])
    .arg("-CAfile")
    .arg(ca);
    if client.is_some() {
        cmd.arg("-cert").arg(&pem).arg("-key").arg(&pem);
    }
    let r = procs::run_captured(
        &format!("openssl s_client {addr}"),
        cmd,
        &out,
        &err,
        Some(&input),
        timeout,
    )
    .context("running openssl s_client (the secure scenario needs openssl)")?;
    let bytes = std::fs::read(&out)?;
    Ok(Probe {
        answered: correlation_ids(&bytes),
        closed: !r.timed_out,
        bytes: bytes.len(),
        stderr: r.stderr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A response frame: correlation id, then `body`.
    fn response(correlation: i32, body: &[u8]) -> Vec<u8> {
        let mut b = correlation.to_be_bytes().to_vec();
        b.extend_from_slice(body);
        frame(b)
    }

    /// The frame after the first one in `r`.
    fn second_frame(r: &[u8]) -> &[u8] {
        let first = 4 + i32::from_be_bytes([r[0], r[1], r[2], r[3]]) as usize;
        &r[first..]
    }

    #[test]
    fn the_requests_are_api_versions_then_describe_cluster() {
        let r = requests(Second::DescribeCluster);
        // ApiVersions v0: key 18, version 0, then the correlation id.
        assert_eq!(&r[4..8], &[0, 18, 0, 0]);
        assert_eq!(&r[8..12], &API_VERSIONS_ID.to_be_bytes());
        let dc = second_frame(&r);
        assert_eq!(&dc[4..8], &[0, 60, 0, 0]);
        assert_eq!(&dc[8..12], &DESCRIBE_CLUSTER_ID.to_be_bytes());
        assert_eq!(
            dc.len(),
            4 + i32::from_be_bytes([dc[0], dc[1], dc[2], dc[3]]) as usize
        );
    }

    #[test]
    fn broker_registration_is_one_whole_v0_frame() {
        let r = requests(Second::BrokerRegistration);
        let br = second_frame(&r);
        assert_eq!(&br[4..8], &[0, 62, 0, 0]);
        assert_eq!(&br[8..12], &BROKER_REGISTRATION_ID.to_be_bytes());
        assert_eq!(
            br.len(),
            4 + i32::from_be_bytes([br[0], br[1], br[2], br[3]]) as usize
        );
        // Header v2: client id (2 + 10 bytes) and empty tags, then the broker id.
        let body = &br[12 + 2 + 10 + 1..];
        assert_eq!(&body[..4], &PHANTOM_BROKER_ID.to_be_bytes());
        // Cluster id: length 22 + 1.
        assert_eq!(body[4], 23);
        // Ends with: no features, a null rack, no tags.
        assert_eq!(&body[body.len() - 3..], &[1, 0, 0]);
    }

    #[test]
    fn responses_are_split_by_correlation_id() {
        let mut bytes = response(API_VERSIONS_ID, &[0, 0, 0, 0, 0, 0]);
        bytes.extend(response(DESCRIBE_CLUSTER_ID, &[0]));
        assert_eq!(
            correlation_ids(&bytes),
            vec![API_VERSIONS_ID, DESCRIBE_CLUSTER_ID]
        );
        // A truncated second frame does not count.
        assert_eq!(
            correlation_ids(&bytes[..bytes.len() - 1]),
            vec![API_VERSIONS_ID]
        );
    }

    #[test]
    fn garbage_has_no_frames() {
        assert!(correlation_ids(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4]).is_empty());
        assert!(correlation_ids(&[0, 0, 0, 2, 1, 2, 3, 4]).is_empty());
        assert!(correlation_ids(b"\x15\x03\x03").is_empty());
    }
}
