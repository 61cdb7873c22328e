//! `snapshot-catchup` (issue 4 acceptance, cases C05/C06): brokers and controllers catch up
//! through metadata snapshots (KIP-630) instead of replaying the log from offset 0.
//!
//! Three controllers with a tiny snapshot threshold (`metadata.log.max.record.bytes.between.snapshots`),
//! tiny segments (`internal.metadata.log.segment.bytes`) and `metadata.max.retention.bytes=1` (so
//! the cleaner keeps only the latest snapshot and deletes the segments below it: the log start
//! moves), NoOps only every 5 s (so snapshots come from the topics this scenario creates, not
//! from idle traffic), and three brokers:
//!
//! 1. **C05, an empty broker**: after the leader's first snapshot, while its log still starts at
//!    offset 0, broker 103 (formatted, never started: no metadata log) joins. Its Fetch from
//!    offset 0 must be answered with a SnapshotId: it downloads the snapshot with FetchSnapshot
//!    (Kafka's `Fully truncated the log ... after downloading snapshot` line, a `.checkpoint`
//!    in its `__cluster_metadata-0` byte-identical to the leader's) and serves the topics.
//! 2. **A broker down across two snapshots**: broker 102 stops at metadata offset B; a topic it
//!    knew is deleted and topics are created until the leader wrote two more snapshots; the
//!    cleaner moves the leader's log start past B (segments deleted). Restarted, 102 must
//!    download a snapshot (it cannot fetch from B) and serve exactly the current topics (the
//!    deleted one gone: the RemoveTopicRecord is no longer in any log it could fetch).
//! 3. **A restarted controller** loads its latest local snapshot (`loaded snapshot; replaying
//!    the log from offset N`, N = that snapshot's end offset > 0) and catches up (DescribeQuorum
//!    LogEndOffset reaches the leader's high watermark).
//! 4. **Kafka's own tools** read the snapshot files: `kafka-metadata-shell --snapshot` (`tree
//!    /image`) and `kafka-dump-log --cluster-metadata-decoder` decode them without errors, and
//!    both list exactly the topics that existed at the snapshot's end offset.
//! 5. **Metrics**: every kraftwerk controller's `GET /metrics` shows `kraftwerk_snapshot_count ≥ 1`.
//!
//! With Java controllers in some slots (`IT_CONTROLLERS=java,java,java` runs the reference), the
//! kraftwerk-only checks (metrics, kraftwerk's log lines) are skipped for those slots.

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::checks::{self, partition_dir};
use super::{create_topic, wait_caught_up};
use crate::bench::client::Conn;
use crate::bench::measure::find_leader;
use crate::cluster::{props, Cluster, ClusterSpec, Node};
use crate::env::{ControllerKind, Env};
use crate::kafka::args;
use crate::util;

/// `metadata.log.max.record.bytes.between.snapshots`: one topic of [`PARTITIONS`] partitions
/// (about 75 bytes per PartitionRecord) crosses it; the records written before the first topic
/// (bootstrap, two broker registrations, NoOps: about 1.5 KiB) do not.
const SNAPSHOT_BYTES: u64 = 4096;
/// `internal.metadata.log.segment.bytes`: many segments, so cleaning has whole segments to drop.
const SEGMENT_BYTES: u64 = 2048;
/// `metadata.max.idle.interval.ms`: NoOps (≈ 75 bytes each, every 500 ms by default) would
/// otherwise write a snapshot every 30 s on their own and the C05 window (one snapshot, log start 0) would be a race.
const IDLE_MS: u64 = 5000;
/// Partitions per generated topic (RF 1).
const PARTITIONS: u32 = 60;
/// Topics created at most while waiting for one new snapshot.
const MAX_TOPICS_PER_SNAPSHOT: usize = 6;
/// Kafka 4.1's follower log line once a FetchSnapshot download completed (KafkaRaftClient).
const DOWNLOADED: &str = "after downloading snapshot";
/// kraftwerk's log line when a node starts from its latest snapshot.
const LOADED: &str = "loaded snapshot; replaying the log from offset";

const OLD_BROKER: i32 = 101;
const DOWN_BROKER: i32 = 102;
const NEW_BROKER: i32 = 103;

/// The scenario body.
pub fn run(env: &Env) -> Result<()> {
    if env.controllers.len() < 3 {
        bail!("snapshot-catchup needs 3 controllers, IT_CONTROLLERS has {}", env.controllers.len());
    }
    let snapshot_bytes = SNAPSHOT_BYTES.to_string();
    let segment_bytes = SEGMENT_BYTES.to_string();
    let idle = IDLE_MS.to_string();
    let mut broker_props = super::e2e::single_broker_props();
    broker_props.extend(props(&[("broker.session.timeout.ms", "9000")]));
    let spec = ClusterSpec {
        controllers: env.controllers.clone(),
        brokers: 3,
        controller_props: props(&[
            ("metadata.log.max.record.bytes.between.snapshots", &snapshot_bytes),
            ("internal.metadata.log.segment.bytes", &segment_bytes),
            ("metadata.max.retention.bytes", "1"),
            ("metadata.max.idle.interval.ms", &idle),
            ("broker.session.timeout.ms", "9000"),
        ]),
        broker_props,
    };
    let mut c = Cluster::new(env, &spec)?;
    let metrics = add_metrics_listeners(&c)?;
    c.format_all()?;
    c.start_controllers()?;
    c.wait_quorum(Duration::from_secs(90))?;
    c.start(OLD_BROKER)?;
    c.start(DOWN_BROKER)?;
    c.wait_broker_ready(OLD_BROKER, Duration::from_secs(150))?;
    c.wait_broker_ready(DOWN_BROKER, Duration::from_secs(150))?;
    let boot = c.node(OLD_BROKER)?.addr();
    let mut s = State { history: History::default(), archive: BTreeMap::new(), next_topic: 0 };

    // 1. C05: the first snapshot, then a broker with an empty disk.
    let first = grow_until_snapshot(env, &mut c, &mut s, &boot, "before", 0)?;
    let (leader, _) = leader_of(&c)?;
    let leader_snaps = checks::snapshots(&partition_dir(&c.node(leader)?.data_dir()))?;
    let start0 = log_start(&c, leader, &metrics)?;
    let seg0 = segment_bases(&c.node(leader)?.data_dir())?;
    env.step(&format!(
        "controller {leader} (leader): snapshots {:?}, log start offset {}, segments from {:?}",
        ids(&leader_snaps),
        start0.map_or("(no metrics)".into(), |v| v.to_string()),
        seg0.first()
    ));
    if leader_snaps.len() != 1 || seg0.first() != Some(&0) || start0.is_some_and(|v| v != 0) {
        bail!(
            "setup: before the empty broker joins, the leader should have exactly one snapshot and its log should \
             still start at offset 0 (C05), but it has snapshots {:?}, log start {start0:?}, first segment {:?}",
            ids(&leader_snaps),
            seg0.first()
        );
    }
    let new_dir = partition_dir(&c.node(NEW_BROKER)?.data_dir());
    let (batches, snaps) = (read_batches_or_empty(&new_dir), checks::snapshots(&new_dir)?);
    if !batches.is_empty() || !snaps.is_empty() {
        bail!("broker {NEW_BROKER} should start with an empty metadata log, it has {} batches and snapshots {:?}", batches.len(), ids(&snaps));
    }
    env.step(&format!("broker {NEW_BROKER}: empty metadata log (no batches, no snapshots) before its first start"));
    c.start(NEW_BROKER)?;
    c.wait_broker_ready(NEW_BROKER, Duration::from_secs(150))?;
    let got = assert_downloaded(env, &mut c, NEW_BROKER, 0, &s)?;
    if got != first {
        bail!("broker {NEW_BROKER} downloaded snapshot {got:?}, but the leader's only snapshot was {first:?}");
    }
    let after = log_start(&c, leader, &metrics)?;
    env.step(&format!(
        "C05: broker {NEW_BROKER} fetched from offset 0 and was answered with SnapshotId {}-{} while the leader's log \
         still started at offset {} (segment 0 on disk): it loaded the snapshot instead of replaying the log",
        first.0,
        first.1,
        after.map_or("0 (first segment)".into(), |v| v.to_string())
    ));
    assert_serves(env, &c, NEW_BROKER, &s.history.current())?;

    // 2. A broker down across two snapshots, and the log start moving past its end.
    stop_ok(env, &mut c, DOWN_BROKER)?;
    let down_dir = partition_dir(&c.node(DOWN_BROKER)?.data_dir());
    let down_end = checks::end_offset(&checks::read_batches(&down_dir)?);
    let down_snaps_before = checks::snapshots(&down_dir)?;
    env.step(&format!(
        "broker {DOWN_BROKER} stopped; its metadata log ends at offset {down_end}, its snapshots: {:?}",
        ids(&down_snaps_before)
    ));
    let deleted = s
        .history
        .current()
        .into_iter()
        .next()
        .context("no topic to delete")?;
    delete_topic(env, &c, &mut s, &boot, &deleted)?;
    let s2 = grow_until_snapshot(env, &mut c, &mut s, &boot, "down", down_end.max(first.0))?;
    let s3 = grow_until_snapshot(env, &mut c, &mut s, &boot, "down", s2.0)?;
    env.step(&format!(
        "while broker {DOWN_BROKER} was down (its log ends at {down_end}) the leader wrote snapshots {}-{} and {}-{}",
        s2.0, s2.1, s3.0, s3.1
    ));
    print_kraftwerk_lines(env, &c, "snapshot written", 4);
    wait_log_start_past(env, &c, &metrics, down_end)?;
    c.start(DOWN_BROKER)?;
    c.wait_broker_ready(DOWN_BROKER, Duration::from_secs(150))?;
    let got = assert_downloaded(env, &mut c, DOWN_BROKER, down_end, &s)?;
    env.step(&format!(
        "broker {DOWN_BROKER} caught up through FetchSnapshot: snapshot {}-{} (its log had ended at {down_end}, below the \
         leader's log start)",
        got.0, got.1
    ));
    let current = s.history.current();
    if current.contains(&deleted) {
        bail!("internal: {deleted} should be deleted");
    }
    assert_serves(env, &c, DOWN_BROKER, &current)?;
    let down_topic = s.history.ops.last().map(|o| o.topic.clone()).unwrap_or_default();
    let down_addr = c.node(DOWN_BROKER)?.addr();
    let (_, raw) = c.describe_topic(&down_addr, &down_topic, Duration::from_secs(60))?;
    env.show(&format!("kafka-topics --bootstrap-server <broker {DOWN_BROKER}> --describe --topic {down_topic}"), &first_lines(&raw, 4));

    // 3. A controller restarted after snapshots loads its latest one and replays the tail.
    restart_controller(env, &mut c, &mut s, &boot)?;

    // 4. Kafka's tools read the snapshot files, and list the topics of their offset.
    let (leader, _) = leader_of(&c)?;
    let leader_latest = checks::snapshots(&partition_dir(&c.node(leader)?.data_dir()))?
        .pop()
        .context("the leader has no snapshot")?;
    let mut files: Vec<(String, PathBuf)> = vec![(format!("controller-{leader} (leader)"), leader_latest.2)];
    for b in [DOWN_BROKER, NEW_BROKER] {
        if let Some(sn) = checks::snapshots(&partition_dir(&c.node(b)?.data_dir()))?.pop() {
            files.push((format!("broker-{b}"), sn.2));
        }
    }
    for (who, f) in &files {
        check_with_kafka_tools(env, &s.history, who, f)?;
    }

    // 5. Metrics.
    for (id, addr) in &metrics {
        let m = scrape(addr).with_context(|| format!("GET http://{addr}/metrics of controller {id}"))?;
        let get = |k: &str| m.get(k).copied().unwrap_or(f64::NAN);
        env.step(&format!(
            "controller {id} GET /metrics: kraftwerk_snapshot_count {} kraftwerk_snapshot_latest_end_offset {} \
             kraftwerk_raft_log_start_offset {} kraftwerk_snapshots_written_total {} kraftwerk_snapshots_loaded_total {}",
            get("kraftwerk_snapshot_count"),
            get("kraftwerk_snapshot_latest_end_offset"),
            get("kraftwerk_raft_log_start_offset"),
            get("kraftwerk_snapshots_written_total"),
            get("kraftwerk_snapshots_loaded_total")
        ));
        if !(get("kraftwerk_snapshot_count") >= 1.0) {
            bail!("controller {id}'s /metrics shows kraftwerk_snapshot_count {} (expected ≥ 1)", get("kraftwerk_snapshot_count"));
        }
    }

    checks::assert_healthy(&mut c)?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(30))?;
    Ok(())
}

/// What the scenario did so far: the metadata operations and copies of the leader's snapshots.
struct State {
    history: History,
    /// `(end offset, epoch)` → a copy of that snapshot as the leader wrote it (taken when first
    /// seen; the cleaner deletes older ones).
    archive: BTreeMap<(i64, i32), PathBuf>,
    next_topic: usize,
}

/// One topic creation or deletion, with the leader's high watermark before and after it.
#[derive(Clone, Debug)]
struct Op {
    topic: String,
    create: bool,
    /// High watermark before the tool ran: the op's records are at or above it.
    hw_before: i64,
    /// High watermark after the tool returned: the op's records are below it.
    hw_after: i64,
}

/// The metadata operations in order, to tell which topics a snapshot ending at an offset holds.
#[derive(Default)]
struct History {
    ops: Vec<Op>,
}

impl History {
    /// Topics after the first `k` operations.
    fn after(&self, k: usize) -> BTreeSet<String> {
        let mut set = BTreeSet::new();
        for op in &self.ops[..k] {
            if op.create {
                set.insert(op.topic.clone());
            } else {
                set.remove(&op.topic);
            }
        }
        set
    }

    /// Topics now.
    fn current(&self) -> BTreeSet<String> {
        self.after(self.ops.len())
    }

    /// Every topic set a snapshot with exclusive end offset `end` can hold: operations whose
    /// records all lie below `end` (`hw_after ≤ end`) are in it, those starting at or after it
    /// (`hw_before ≥ end`) are not; one in between may be either.
    fn possible_at(&self, end: i64) -> Vec<BTreeSet<String>> {
        let surely = self.ops.iter().take_while(|o| o.hw_after <= end).count();
        let maybe = self.ops.iter().take_while(|o| o.hw_before < end).count();
        (surely..=maybe.max(surely)).map(|k| self.after(k)).collect()
    }
}

/// Appends `kraftwerk.metrics.listener=127.0.0.1:<port>` to each kraftwerk controller's
/// properties; returns `(node id, host:port)`.
fn add_metrics_listeners(c: &Cluster) -> Result<Vec<(i32, String)>> {
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
fn scrape(addr: &str) -> Result<BTreeMap<String, f64>> {
    let sa = addr.parse().with_context(|| format!("bad address {addr}"))?;
    let mut s = TcpStream::connect_timeout(&sa, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(s, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").context("no HTTP header end")?;
    if !head.lines().next().unwrap_or("").contains(" 200") {
        bail!("HTTP answer: {}", util::one_line(head, 200));
    }
    Ok(parse_metrics(body))
}

/// Prometheus text lines `name value` (comments skipped).
fn parse_metrics(body: &str) -> BTreeMap<String, f64> {
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.trim().to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// The current leader (DescribeQuorum) and its high watermark.
fn leader_of(c: &Cluster) -> Result<(i32, i64)> {
    let addrs: Vec<String> = c.controllers.iter().map(Node::addr).collect();
    let (_, q) = util::wait_until("a controller answering DescribeQuorum as leader", Duration::from_secs(30), Duration::from_millis(200), || {
        find_leader(&addrs).map(Some)
    })?;
    Ok((q.leader_id, q.high_watermark))
}

/// A kraftwerk controller's log start offset from its metrics (None for a Java controller).
fn log_start(c: &Cluster, id: i32, metrics: &[(i32, String)]) -> Result<Option<i64>> {
    let _ = c;
    let Some((_, addr)) = metrics.iter().find(|(i, _)| *i == id) else {
        return Ok(None);
    };
    let m = scrape(addr)?;
    let v = m.get("kraftwerk_raft_log_start_offset").context("no kraftwerk_raft_log_start_offset in /metrics")?;
    Ok(Some(*v as i64))
}

/// Base offsets of the segment files in `<data>/__cluster_metadata-0`, ascending.
fn segment_bases(data: &Path) -> Result<Vec<i64>> {
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

fn ids(snaps: &[(i64, i32, PathBuf)]) -> Vec<String> {
    snaps.iter().map(|(o, e, _)| format!("{o}-{e}")).collect()
}

fn read_batches_or_empty(dir: &Path) -> Vec<checks::LogBatch> {
    if dir.exists() {
        checks::read_batches(dir).unwrap_or_default()
    } else {
        Vec::new()
    }
}

/// Copies every snapshot now in the leader's directory into the archive (names kept, so Kafka's
/// tools parse them).
fn archive_leader_snapshots(env: &Env, c: &mut Cluster, s: &mut State) -> Result<Vec<(i64, i32)>> {
    let (leader, _) = leader_of(c)?;
    let dir = partition_dir(&c.node(leader)?.data_dir());
    let mut out = Vec::new();
    for (o, e, p) in checks::snapshots(&dir)? {
        out.push((o, e));
        if s.archive.contains_key(&(o, e)) {
            continue;
        }
        let to_dir = env.work.join("snapshots").join(format!("controller-{leader}"));
        std::fs::create_dir_all(&to_dir)?;
        let to = to_dir.join(p.file_name().unwrap_or_default());
        if std::fs::copy(&p, &to).is_ok() {
            s.archive.insert((o, e), to);
        }
    }
    Ok(out)
}

/// Runs a topic creation or deletion through `boot`, recording the high watermark around it.
fn record_op(c: &Cluster, s: &mut State, topic: &str, create: bool, run: impl FnOnce() -> Result<()>) -> Result<()> {
    let (_, hw_before) = leader_of(c)?;
    run()?;
    let (_, hw_after) = leader_of(c)?;
    s.history.ops.push(Op { topic: topic.to_string(), create, hw_before, hw_after });
    Ok(())
}

/// Creates topics of [`PARTITIONS`] partitions through `boot` until the leader has a snapshot
/// ending above `above`; returns its id.
fn grow_until_snapshot(env: &Env, c: &mut Cluster, s: &mut State, boot: &str, prefix: &str, above: i64) -> Result<(i64, i32)> {
    for _ in 0..MAX_TOPICS_PER_SNAPSHOT {
        s.next_topic += 1;
        let topic = format!("snap-{prefix}-{}", s.next_topic);
        record_op(c, s, &topic, true, || create_topic(env, boot, &topic, PARTITIONS, 1, &[]).map(|_| ()))?;
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(&id) = archive_leader_snapshots(env, c, s)?.iter().rev().find(|(o, _)| *o > above) {
                env.step(&format!("the leader wrote snapshot {}-{} (after {topic})", id.0, id.1));
                return Ok(id);
            }
            if Instant::now() >= deadline {
                break;
            }
            util::sleep(Duration::from_millis(250))?;
        }
    }
    bail!(
        "no leader snapshot above offset {above} after creating {MAX_TOPICS_PER_SNAPSHOT} topics of {PARTITIONS} partitions \
         (metadata.log.max.record.bytes.between.snapshots={SNAPSHOT_BYTES})"
    )
}

fn delete_topic(env: &Env, c: &Cluster, s: &mut State, boot: &str, topic: &str) -> Result<()> {
    record_op(c, s, topic, false, || {
        env.tool_ok("kafka-topics", &args(&["--bootstrap-server", boot, "--delete", "--topic", topic]), None, Duration::from_secs(90))?;
        Ok(())
    })?;
    env.step(&format!("deleted topic {topic}"));
    Ok(())
}

/// SIGTERM a node and require a clean exit.
fn stop_ok(env: &Env, c: &mut Cluster, id: i32) -> Result<()> {
    match c.stop(id, Duration::from_secs(60))? {
        crate::procs::StopOutcome::Terminated(_, d) => {
            env.step(&format!("node {id} stopped {} after SIGTERM", util::secs(d)));
            Ok(())
        }
        other => bail!("node {id} did not stop cleanly after SIGTERM: {other:?}"),
    }
}

/// Lines of `node`'s log since its latest start containing `needle`.
fn lines_since_start(node: &Node, needle: &str) -> Vec<String> {
    let text = std::fs::read_to_string(&node.log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.iter().rposition(|l| l.contains("===== kraftwerk-it: start #")).unwrap_or(0);
    lines[from..].iter().map(|l| util::strip_ansi(l)).filter(|l| l.contains(needle)).collect()
}

/// `offset=N` / `epoch=N` after `after` in `line`.
fn field_after(line: &str, after: &str, key: &str) -> Option<i64> {
    let rest = &line[line.find(after)? + after.len()..];
    let i = rest.find(key)? + key.len();
    let digits: String = rest[i..].chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// Asserts broker `id` downloaded a snapshot from the leader since its latest start: Kafka's
/// follower line, a new `.checkpoint` in its `__cluster_metadata-0` ending above `above`,
/// byte-identical to the copy of the leader's snapshot with that id (when archived). Returns the
/// id.
fn assert_downloaded(env: &Env, c: &mut Cluster, id: i32, above: i64, s: &State) -> Result<(i64, i32)> {
    let node = c.node(id)?;
    let lines = lines_since_start(node, DOWNLOADED);
    let Some(line) = lines.last() else {
        bail!(
            "broker {id} never logged `{DOWNLOADED}` (Kafka's line after a FetchSnapshot download) since its start; \
             see {}",
            node.log.display()
        );
    };
    env.show(&format!("broker {id} log"), &util::one_line(line, 400));
    let snaps = checks::snapshots(&partition_dir(&node.data_dir()))?;
    let Some((o, e, path)) = snaps.iter().rev().find(|(o, _, _)| *o > above).cloned() else {
        bail!("broker {id}'s __cluster_metadata-0 has no .checkpoint above offset {above}: {:?}", ids(&snaps));
    };
    if let Some(logged) = field_after(line, DOWNLOADED, "offset=") {
        if logged != o {
            bail!("broker {id} logged a download of snapshot offset {logged} but its latest .checkpoint is {o}-{e}");
        }
    }
    let size = std::fs::metadata(&path)?.len();
    let same = match s.archive.get(&(o, e)) {
        Some(copy) => {
            if std::fs::read(copy)? != std::fs::read(&path)? {
                bail!("broker {id}'s {} differs from the leader's snapshot {o}-{e}", path.display());
            }
            "byte-identical to the leader's"
        }
        None => "the leader's copy was not archived",
    };
    env.step(&format!("broker {id}: {} ({size} bytes, {same})", path.display()));
    Ok((o, e))
}

/// Topic names broker `id` serves (Metadata for all topics, answered from its own image).
fn served_topics(addr: &str) -> Result<BTreeSet<String>> {
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

/// Broker `id` serves exactly `want` (a broker answers Metadata from its own metadata image).
fn assert_serves(env: &Env, c: &Cluster, id: i32, want: &BTreeSet<String>) -> Result<()> {
    let addr = c.brokers.iter().find(|b| b.id == id).context("no such broker")?.addr();
    let got = util::wait_until(
        &format!("broker {id} to serve the topics {want:?}"),
        Duration::from_secs(30),
        Duration::from_millis(500),
        || {
            let got = served_topics(&addr)?;
            if got == *want {
                Ok(Some(got))
            } else {
                bail!("broker {id} serves {got:?}")
            }
        },
    )?;
    env.step(&format!("broker {id} answers Metadata with exactly the current topics: {got:?}"));
    Ok(())
}

/// Waits until the leader's log start offset is above `offset` (kraftwerk: its metric; Java:
/// its first segment's base offset) and shows its directory.
fn wait_log_start_past(env: &Env, c: &Cluster, metrics: &[(i32, String)], offset: i64) -> Result<()> {
    let start = Instant::now();
    let (leader, start_offset) = util::wait_until(
        &format!("the leader's log start offset to move above {offset} (cleaner runs every 60 s)"),
        Duration::from_secs(150),
        Duration::from_secs(1),
        || {
            let (leader, _) = leader_of(c)?;
            let node = c.controllers.iter().find(|n| n.id == leader).context("leader not a controller")?;
            let v = match log_start(c, leader, metrics)? {
                Some(v) => v,
                None => segment_bases(&node.data_dir())?.first().copied().unwrap_or(0),
            };
            if v > offset {
                Ok(Some((leader, v)))
            } else {
                bail!("controller {leader}'s log start offset is {v}")
            }
        },
    )?;
    let node = c.controllers.iter().find(|n| n.id == leader).context("leader")?;
    let segs = segment_bases(&node.data_dir())?;
    let snaps = checks::snapshots(&partition_dir(&node.data_dir()))?;
    if segs.first() == Some(&0) {
        bail!("controller {leader}'s log start is {start_offset} but segment 0 is still on disk");
    }
    env.step(&format!(
        "after {}: controller {leader} (leader) log start offset {start_offset} > {offset}; segments on disk start at {:?} \
         (segment 0 deleted), snapshots {:?}",
        util::secs(start.elapsed()),
        segs.first(),
        ids(&snaps)
    ));
    print_kraftwerk_lines(env, c, "deleting snapshot", 2);
    Ok(())
}

/// Prints the last `n` lines containing `needle` of each kraftwerk controller.
fn print_kraftwerk_lines(env: &Env, c: &Cluster, needle: &str, n: usize) {
    for node in &c.controllers {
        if c.controller_kind(node.id) != Some(ControllerKind::Kraftwerk) {
            continue;
        }
        let lines = node.log_lines(needle);
        let tail: Vec<String> = lines.iter().rev().take(n).rev().map(|l| util::one_line(l, 300)).collect();
        if !tail.is_empty() {
            env.show(&format!("{} `{needle}` (last {} of {})", node.label(), tail.len(), lines.len()), &tail.join("\n"));
        }
    }
}

/// Stops a follower controller, creates a small topic while it is down, restarts it: it must
/// load its latest snapshot and replay only the tail, then catch up.
fn restart_controller(env: &Env, c: &mut Cluster, s: &mut State, boot: &str) -> Result<()> {
    let (leader, _) = leader_of(c)?;
    let id = c
        .controllers
        .iter()
        .map(|n| n.id)
        .find(|i| *i != leader && c.controller_kind(*i) == Some(ControllerKind::Kraftwerk))
        .or_else(|| c.controllers.iter().map(|n| n.id).find(|i| *i != leader))
        .context("no follower controller")?;
    let kraftwerk = c.controller_kind(id) == Some(ControllerKind::Kraftwerk);
    stop_ok(env, c, id)?;
    let snaps = checks::snapshots(&partition_dir(&c.node(id)?.data_dir()))?;
    let Some((latest, epoch, _)) = snaps.last().cloned() else {
        bail!("controller {id} has no snapshot of its own after the snapshots above");
    };
    let end = checks::end_offset(&checks::read_batches(&partition_dir(&c.node(id)?.data_dir()))?);
    env.step(&format!("controller {id} stopped: latest snapshot {latest}-{epoch}, log end offset {end}"));
    s.next_topic += 1;
    let topic = format!("snap-while-controller-down-{}", s.next_topic);
    record_op(c, s, &topic, true, || create_topic(env, boot, &topic, 1, 1, &[]).map(|_| ()))?;
    let (_, hw) = leader_of(c)?;
    c.start(id)?;
    if kraftwerk {
        let node_log = c.node(id)?.log.clone();
        let line = util::wait_until(
            &format!("controller {id} to log `{LOADED}`"),
            Duration::from_secs(60),
            Duration::from_millis(250),
            || {
                let c = &mut *c;
                c.check_alive()?;
                Ok(lines_since_start(c.node(id)?, LOADED).pop())
            },
        )
        .with_context(|| format!("see {}", node_log.display()))?;
        env.show(&format!("controller {id} log"), &util::one_line(&line, 400));
        let n = field_after(&line, LOADED, " ").context("no offset in the line")?;
        if n <= 0 || n != latest {
            bail!("controller {id} replays the log from offset {n}, expected its latest snapshot's end offset {latest}");
        }
        let fetched = lines_since_start(c.node(id)?, "fetching snapshot from the leader");
        env.step(&format!(
            "controller {id} loaded its snapshot {latest}-{epoch} and replays the log from offset {n} (not 0){}",
            if fetched.is_empty() { "; it did not need a snapshot from the leader" } else { "" }
        ));
    }
    let raw = wait_caught_up(env, c, id, hw, Duration::from_secs(90))?;
    env.show("describe --replication", &raw);
    Ok(())
}

/// `kafka-metadata-shell` and `kafka-dump-log` on a copy of snapshot `file` (named as the
/// original): no decoding errors, and both list the same topics, one of the sets `history`
/// allows at the snapshot's end offset.
fn check_with_kafka_tools(env: &Env, history: &History, who: &str, file: &Path) -> Result<()> {
    let name = file.file_name().unwrap_or_default().to_string_lossy().to_string();
    let end: i64 = name.get(..20).and_then(|s| s.parse().ok()).context("snapshot name")?;
    let dir = env.work.join("tool-copies").join(who.split_whitespace().next().unwrap_or(who));
    std::fs::create_dir_all(&dir)?;
    let copy = dir.join(&name);
    // A copy: the shell locks `<dir>/../.lock`, which the running node holds.
    std::fs::copy(file, &copy).with_context(|| format!("copying {}", file.display()))?;
    let path = copy.to_string_lossy().to_string();

    let tree = checks::image_tree(env, &copy)?;
    let shell_topics: BTreeSet<String> = tree_children(&tree, &["topics", "byName"]).into_iter().collect();

    let r = env.tool_ok("kafka-dump-log", &args(&["--cluster-metadata-decoder", "--files", &path]), None, Duration::from_secs(120))?;
    let out = &r.stdout;
    if out.contains("isvalid: false") || out.contains("Error at offset") || r.stderr.contains("Exception") {
        bail!("kafka-dump-log found errors in {who}'s {name}: {}", util::one_line(&format!("{}\n{}", r.stderr, out), 600));
    }
    let first_record = out.lines().find(|l| l.starts_with("| offset:")).unwrap_or("");
    let last_record = out.lines().filter(|l| l.starts_with("| offset:")).last().unwrap_or("");
    if !first_record.contains("SnapshotHeader") || !last_record.contains("SnapshotFooter") {
        bail!("kafka-dump-log of {name}: first record {first_record:?}, last {last_record:?} (expected SnapshotHeader … SnapshotFooter)");
    }
    let dump_topics: BTreeSet<String> = out
        .lines()
        .filter(|l| l.contains("\"type\":\"TOPIC_RECORD\""))
        .filter_map(|l| {
            let i = l.find("\"name\":\"")? + 8;
            Some(l[i..].split('"').next()?.to_string())
        })
        .filter(|n| !n.starts_with("__"))
        .collect();
    let shell_topics: BTreeSet<String> = shell_topics.into_iter().filter(|n| !n.starts_with("__")).collect();
    if shell_topics != dump_topics {
        bail!("{who}'s {name}: kafka-metadata-shell lists topics {shell_topics:?}, kafka-dump-log {dump_topics:?}");
    }
    let possible = history.possible_at(end);
    if !possible.contains(&shell_topics) {
        bail!("{who}'s snapshot {name} holds topics {shell_topics:?}; at offset {end} the cluster had {possible:?}");
    }
    let records = out.lines().filter(|l| l.starts_with("| offset:")).count();
    env.show(
        &format!("kafka-dump-log --cluster-metadata-decoder --files {name} ({who})"),
        &format!(
            "{}\n{first_record}\n... {records} records, every batch isvalid: true ...\n{last_record}",
            out.lines().find(|l| l.starts_with("Snapshot end offset")).unwrap_or("")
        ),
    );
    env.step(&format!(
        "kafka-metadata-shell --snapshot {name} ({who}): /image/topics/byName = {shell_topics:?}, as kafka-dump-log's \
         TopicRecords and as created up to offset {end}"
    ));
    Ok(())
}

/// Names of the children of `path` in a `tree` listing (two spaces of indent per level).
fn tree_children(tree: &str, path: &[&str]) -> Vec<String> {
    let mut depth = 0usize;
    let mut out = Vec::new();
    for l in tree.lines() {
        let indent = (l.len() - l.trim_start().len()) / 2;
        let name = l.trim().strip_suffix(':');
        if depth < path.len() {
            if indent < depth {
                return out;
            }
            if indent == depth && name == Some(path[depth]) {
                depth += 1;
            }
            continue;
        }
        if indent < depth {
            break;
        }
        if indent == depth {
            if let Some(n) = name {
                out.push(n.to_string());
            }
        }
    }
    out
}

/// The first `n` lines of `text`.
fn first_lines(text: &str, n: usize) -> String {
    text.lines().take(n).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(topic: &str, create: bool, hw_before: i64, hw_after: i64) -> Op {
        Op { topic: topic.into(), create, hw_before, hw_after }
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_snapshot_offset_allows_only_the_states_around_it() {
        let h = History { ops: vec![op("a", true, 10, 20), op("b", true, 20, 30), op("a", false, 30, 35)] };
        assert_eq!(h.possible_at(5), vec![set(&[])]);
        assert_eq!(h.possible_at(20), vec![set(&["a"])]);
        // Inside b's window: with or without b.
        assert_eq!(h.possible_at(25), vec![set(&["a"]), set(&["a", "b"])]);
        assert_eq!(h.possible_at(35), vec![set(&["b"])]);
        assert_eq!(h.current(), set(&["b"]));
    }

    #[test]
    fn tree_children_reads_the_shells_indentation() {
        let t = "features:\n  metadataVersion:\n    4.1-IV1\ntopics:\n  byId:\n    XyZ:\n      name:\n        a\n  byName:\n    a:\n      0:\n        x\n      id:\n        XyZ\n    b:\n      name:\n        b\nzzz:\n  c:\n";
        assert_eq!(tree_children(t, &["topics", "byName"]), vec!["a", "b"]);
        assert_eq!(tree_children(t, &["topics"]), vec!["byId", "byName"]);
        assert!(tree_children(t, &["nothing"]).is_empty());
    }

    #[test]
    fn metrics_and_log_fields_parse() {
        let m = parse_metrics("# HELP x y\n# TYPE x gauge\nkraftwerk_snapshot_count 2\nkraftwerk_raft_state{state=\"Leader\"} 1\n");
        assert_eq!(m.get("kraftwerk_snapshot_count"), Some(&2.0));
        assert_eq!(m.get("kraftwerk_raft_state{state=\"Leader\"}"), Some(&1.0));
        let l = "INFO kraftwerk: loaded snapshot; replaying the log from offset 1234 offset=1234 epoch=2";
        assert_eq!(field_after(l, LOADED, " "), Some(1234));
        let k = "Fully truncated the log at (LogOffsetMetadata(offset=77), 3) after downloading snapshot OffsetAndEpoch(offset=77, epoch=3) from leader 1";
        assert_eq!(field_after(k, DOWNLOADED, "offset="), Some(77));
    }
}
