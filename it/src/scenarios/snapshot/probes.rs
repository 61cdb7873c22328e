//! What the scenario reads from the running nodes: kraftwerk's `/metrics`, the quorum leader
//! (DescribeQuorum), the topics a broker serves (Metadata), metadata directories and log lines.

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::bench::client::{Conn, Transport};
use crate::bench::measure::find_leader;
use crate::cluster::{Cluster, Node};
use crate::env::ControllerKind;
use crate::scenarios::checks::{self, partition_dir};
use crate::util;

/// Appends `kraftwerk.metrics.listener=127.0.0.1:<port>` to each kraftwerk controller's
/// properties (before its first start); returns `(node id, host:port)`.
pub fn add_metrics_listeners(c: &Cluster) -> Result<Vec<(i32, String)>> {
    let mut out = Vec::new();
    for n in &c.controllers {
        if c.controller_kind(n.id) != Some(ControllerKind::Kraftwerk) {
            continue;
        }
        let addr = format!("127.0.0.1:{}", util::free_port()?);
        let mut f = std::fs::OpenOptions::new().append(true).open(&n.props)?;
        writeln!(f, "kraftwerk.metrics.listener={addr}")?;
        out.push((n.id, addr));
    }
    Ok(out)
}

/// `GET /metrics` over plain HTTP/1.1: `metric name (with labels) → value`.
pub fn scrape(addr: &str) -> Result<BTreeMap<String, f64>> {
    Ok(parse_metrics(&scrape_text(addr)?))
}

/// `GET /metrics` over plain HTTP/1.1: the exposition text.
pub fn scrape_text(addr: &str) -> Result<String> {
    let sa = addr
        .parse()
        .with_context(|| format!("bad address {addr}"))?;
    let mut s = TcpStream::connect_timeout(&sa, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .context("no end of the HTTP header")?;
    if !head.lines().next().unwrap_or("").contains(" 200") {
        bail!("HTTP answer: {}", util::one_line(head, 200));
    }
    Ok(body.to_owned())
}

/// Prometheus text lines `name value` (comments skipped).
pub fn parse_metrics(body: &str) -> BTreeMap<String, f64> {
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.trim().to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// A kraftwerk controller's `kraftwerk_raft_log_start_offset` (None for a slot without a
/// metrics endpoint, i.e. a Java controller).
pub fn log_start(id: i32, metrics: &[(i32, String)]) -> Result<Option<i64>> {
    let Some((_, addr)) = metrics.iter().find(|(i, _)| *i == id) else {
        return Ok(None);
    };
    let m = scrape(addr)?;
    let v = m
        .get("kraftwerk_raft_log_start_offset")
        .context("no kraftwerk_raft_log_start_offset in /metrics")?;
    Ok(Some(*v as i64))
}

/// The current leader and its high watermark (DescribeQuorum; retried for up to 30 s).
pub fn leader_of(c: &Cluster) -> Result<(i32, i64)> {
    let addrs: Vec<String> = c.controllers.iter().map(Node::addr).collect();
    let (_, q) = util::wait_until(
        "a controller answering DescribeQuorum as leader",
        Duration::from_secs(30),
        Duration::from_millis(200),
        || find_leader(&addrs, &Transport::Plaintext).map(Some),
    )?;
    Ok((q.leader_id, q.high_watermark))
}

/// Topic names (internal ones left out) a broker at `addr` serves: Metadata for all topics,
/// which a broker answers from its own metadata image.
pub fn served_topics(addr: &str) -> Result<BTreeSet<String>> {
    use kafka_protocol::messages::{ApiKey, MetadataRequest};
    let mut conn = Conn::connect(addr, "snapshot-catchup", Duration::from_secs(5))?;
    let v = conn.version(ApiKey::Metadata, 12)?;
    let mut req = MetadataRequest::default();
    req.topics = None;
    let resp = conn.call(&req, v)?;
    Ok(resp
        .topics
        .iter()
        .filter_map(|t| t.name.as_ref().map(|n| n.0.to_string()))
        .filter(|n| !n.starts_with("__"))
        .collect())
}

/// Base offsets of the segment files in `<data>/__cluster_metadata-0`, ascending.
pub fn segment_bases(data: &Path) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(partition_dir(data))? {
        let name = e?.file_name().to_string_lossy().to_string();
        if let Some(stem) = name.strip_suffix(".log") {
            if stem.len() == 20 {
                if let Ok(o) = stem.parse() {
                    out.push(o);
                }
            }
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// `["<offset>-<epoch>", ...]` for printing.
pub fn ids(snaps: &[(i64, i32, PathBuf)]) -> Vec<String> {
    snaps.iter().map(|(o, e, _)| format!("{o}-{e}")).collect()
}

/// The batches of a partition directory, none if it does not exist yet.
pub fn read_batches_or_empty(dir: &Path) -> Vec<checks::LogBatch> {
    if dir.exists() {
        checks::read_batches(dir).unwrap_or_default()
    } else {
        Vec::new()
    }
}

/// Lines of `node`'s log since its latest start containing `needle`.
pub fn lines_since_start(node: &Node, needle: &str) -> Vec<String> {
    let text = std::fs::read_to_string(&node.log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let from = lines
        .iter()
        .rposition(|l| l.contains("===== kraftwerk-it: start #"))
        .unwrap_or(0);
    lines[from..]
        .iter()
        .map(|l| util::strip_ansi(l))
        .filter(|l| l.contains(needle))
        .collect()
}

/// The number right after the first `key` that follows `after` in `line`.
pub fn field_after(line: &str, after: &str, key: &str) -> Option<i64> {
    let rest = &line[line.find(after)? + after.len()..];
    let i = rest.find(key)? + key.len();
    let digits: String = rest[i..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

/// The first `n` lines of `text`.
pub fn first_lines(text: &str, n: usize) -> String {
    text.lines().take(n).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_and_log_fields_parse() {
        let m = parse_metrics(
            "# HELP x y\n# TYPE x gauge\nkraftwerk_snapshot_count 2\nkraftwerk_raft_state{state=\"Leader\"} 1\n",
        );
        assert_eq!(m.get("kraftwerk_snapshot_count"), Some(&2.0));
        assert_eq!(m.get("kraftwerk_raft_state{state=\"Leader\"}"), Some(&1.0));
        let loaded = "loaded snapshot; replaying the log from offset";
        let l = "INFO loaded snapshot; replaying the log from offset 1234 offset=1234 epoch=2";
        assert_eq!(field_after(l, loaded, " "), Some(1234));
        let k = "Fully truncated the log at (LogOffsetMetadata(offset=70), 3) after downloading snapshot \
                 OffsetAndEpoch[offset=77, epoch=3] from leader 1";
        assert_eq!(
            field_after(k, "after downloading snapshot", "offset="),
            Some(77)
        );
        assert_eq!(field_after(k, "not there", "offset="), None);
    }
}
