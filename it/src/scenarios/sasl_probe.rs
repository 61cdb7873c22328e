//! A client that speaks TLS but no SASL to a `SASL_SSL` listener, for the `sasl` scenario:
//! `openssl s_client` carries two raw Kafka requests on one connection, ApiVersions v0 and then
//! DescribeCluster v0 (the admin client's metadata request in `--bootstrap-controller` mode),
//! and the bytes that come back are split into response frames by correlation id.
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

/// ApiVersions v0 (empty body) and DescribeCluster v0 (`include_cluster_authorized_operations
/// = false`, no tagged fields), back to back.
pub fn requests() -> Vec<u8> {
    let mut out = frame(header(18, 0, API_VERSIONS_ID, false));
    let mut dc = header(60, 0, DESCRIBE_CLUSTER_ID, true);
    dc.extend_from_slice(&[0, 0]);
    out.extend(frame(dc));
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
/// the PKCS12 store `client` protected by `password`, if given), sends [`requests`] and reads
/// until the server closes or `timeout` passes. Files go to `work` (`<tag>.{bin,out,err,pem}`).
pub fn run(
    work: &Path,
    tag: &str,
    addr: &str,
    ca: &Path,
    client: Option<(&Path, &str)>,
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
    std::fs::write(&input, requests())?;
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
    .context("running openssl s_client (the sasl scenario needs openssl)")?;
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

    #[test]
    fn the_requests_are_api_versions_then_describe_cluster() {
        let r = requests();
        // ApiVersions v0: key 18, version 0, then the correlation id.
        assert_eq!(&r[4..8], &[0, 18, 0, 0]);
        assert_eq!(&r[8..12], &API_VERSIONS_ID.to_be_bytes());
        let first = 4 + i32::from_be_bytes([r[0], r[1], r[2], r[3]]) as usize;
        let dc = &r[first..];
        assert_eq!(&dc[4..8], &[0, 60, 0, 0]);
        assert_eq!(&dc[8..12], &DESCRIBE_CLUSTER_ID.to_be_bytes());
        assert_eq!(
            dc.len(),
            4 + i32::from_be_bytes([dc[0], dc[1], dc[2], dc[3]]) as usize
        );
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
