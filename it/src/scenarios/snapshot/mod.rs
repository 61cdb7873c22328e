//! `snapshot-catchup` (issue 4 acceptance; cases C05-C08): brokers and controllers catch up
//! through metadata snapshots (KIP-630) instead of replaying the log from offset 0.
//!
//! Three controllers with a tiny snapshot threshold
//! (`metadata.log.max.record.bytes.between.snapshots`), small segments
//! (`internal.metadata.log.segment.bytes`) and `metadata.max.retention.bytes=1` (the cleaner
//! keeps only the latest snapshot and deletes the segments below it: the log start moves), NoOps
//! only every 5 s (snapshots come from the topics this scenario creates, not from idle traffic),
//! and three brokers:
//!
//! 1. **C05, an empty broker**: after the leader's first snapshot, while its log still starts at
//!    offset 0, broker 103 (formatted, never started: no metadata log) joins. Its Fetch from
//!    offset 0 must be answered with a SnapshotId: it downloads the snapshot with FetchSnapshot
//!    (Kafka's `Fully truncated the log ... after downloading snapshot` line, a `.checkpoint`
//!    in its `__cluster_metadata-0` byte-identical to the leader's) and serves the topics.
//! 2. **A broker down across two snapshots**: broker 102 stops at metadata offset B; a topic it
//!    hosts is deleted and topics are created until the leader wrote two more snapshots; the
//!    cleaner moves the leader's log start past B (segments deleted). Restarted, 102 must
//!    download a snapshot (it cannot fetch from B), serve exactly the current topics and drop
//!    its partitions of the deleted topic (the RemoveTopicRecord is in no log it could fetch).
//! 3. **A restarted controller** loads its latest local snapshot (`loaded snapshot; replaying
//!    the log from offset N`, N = that snapshot's end offset > 0) and catches up (DescribeQuorum
//!    LogEndOffset reaches the leader's high watermark).
//! 4. **Kafka's own tools** read the snapshot files: `kafka-metadata-shell --snapshot` (`tree
//!    /image`) and `kafka-dump-log --cluster-metadata-decoder` decode them without errors, and
//!    both list exactly the topics that existed at the snapshot's end offset.
//! 5. **Metrics**: every kraftwerk controller's `GET /metrics` shows `kraftwerk_snapshots_on_disk`
//!    ≥ 1 (and the restarted one `kraftwerk_snapshots_loaded_total` ≥ 1).
//! 6. **On disk**, after a clean stop: the log start is covered by a snapshot (C06), every
//!    `.checkpoint` is whole with header and footer (C07) and ends on a batch boundary (C08).
//!
//! With Java controllers in some slots (`IT_CONTROLLERS=java,java,java` runs the reference), the
//! kraftwerk-only checks (metrics, kraftwerk's log lines) are skipped for those slots.

pub mod files;
pub mod history;
pub mod probes;

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use self::files::{assert_disk_invariants, check_with_kafka_tools};
use self::history::{History, Op};
use self::probes::{
    add_metrics_listeners, field_after, first_lines, ids, leader_of, lines_since_start, log_start,
    read_batches_or_empty, scrape, segment_bases, served_topics,
};
use super::checks::{self, partition_dir};
use super::{create_topic, wait_caught_up};
use crate::cluster::{props, Cluster, ClusterSpec};
use crate::env::{ControllerKind, Env};
use crate::kafka::args;
use crate::util;

/// `metadata.log.max.record.bytes.between.snapshots`: one topic of [`PARTITIONS`] partitions
/// (about 75 bytes per PartitionRecord) crosses it; the records written before the first topic
/// (bootstrap, two broker registrations, NoOps: about 1.5 KiB) do not.
const SNAPSHOT_BYTES: u64 = 4096;
/// `internal.metadata.log.segment.bytes`: many segments, so cleaning has whole segments to drop.
/// Not below the largest batch (one topic's records, ≈ 4.5 KiB): a Java controller refuses to
/// append a batch larger than a segment (RecordBatchTooLargeException, a fatal fault).
const SEGMENT_BYTES: u64 = 8192;
/// `metadata.max.idle.interval.ms`: NoOps (≈ 75 bytes each, every 500 ms by default) would
/// otherwise write a snapshot every 30 s on their own, and the C05 window (one snapshot, log
/// start 0) would be a race.
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
    let (mut c, metrics) = start_cluster(env)?;
    let boot = c.node(OLD_BROKER)?.addr();
    let mut s = State {
        history: History::default(),
        archive: BTreeMap::new(),
        next_topic: 0,
    };
    let first = empty_broker_joins(env, &mut c, &mut s, &boot, &metrics)?;
    broker_down_across_snapshots(env, &mut c, &mut s, &boot, &metrics, first)?;
    // Step 3: a controller restarted after snapshots loads its latest one and replays the tail.
    let restarted = restart_controller(env, &mut c, &mut s, &boot)?;
    kafka_tools_read_snapshots(env, &mut c, &s)?;
    check_metrics(env, &metrics, restarted)?;
    checks::assert_healthy(&mut c)?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(30))?;
    // Step 6: the stopped controllers' directories keep KIP-630's invariants.
    for n in &c.controllers {
        env.step(&assert_disk_invariants(&n.label(), &n.data_dir())?);
    }
    Ok(())
}

/// Formats every node and starts the controllers (tiny snapshot, segment and retention
/// settings, metrics listeners) and brokers [`OLD_BROKER`] and [`DOWN_BROKER`];
/// [`NEW_BROKER`] stays formatted but never started. Returns the cluster and the controllers'
/// metrics addresses.
fn start_cluster(env: &Env) -> Result<(Cluster<'_>, Vec<(i32, String)>)> {
    if env.controllers.len() < 3 {
        bail!(
            "snapshot-catchup needs 3 controllers, IT_CONTROLLERS has {}",
            env.controllers.len()
        );
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
            (
                "metadata.log.max.record.bytes.between.snapshots",
                &snapshot_bytes,
            ),
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
    Ok((c, metrics))
}

/// Step 1, C05: the first snapshot, then a broker with an empty disk: it must load that
/// snapshot (fetched from offset 0 while the leader's log still starts there) and serve the
/// topics. Returns the snapshot's id.
fn empty_broker_joins(
    env: &Env,
    c: &mut Cluster,
    s: &mut State,
    boot: &str,
    metrics: &[(i32, String)],
) -> Result<(i64, i32)> {
    let first = grow_until_snapshot(env, c, s, boot, "before", 0)?;
    let leader = assert_one_snapshot_log_from_zero(env, c, metrics)?;
    assert_empty_metadata_log(env, c, NEW_BROKER)?;
    c.start(NEW_BROKER)?;
    c.wait_broker_ready(NEW_BROKER, Duration::from_secs(150))?;
    let got = assert_downloaded(env, c, NEW_BROKER, 0, s)?;
    if got != first {
        bail!("broker {NEW_BROKER} downloaded snapshot {got:?}, but the leader's only snapshot was {first:?}");
    }
    let after = log_start(leader, metrics)?;
    if after.is_some_and(|v| v != 0) {
        bail!(
            "the leader's log start moved to {after:?} while broker {NEW_BROKER} joined (a second snapshot was written): \
             its Fetch(0) may have been below the log start, C05 not shown"
        );
    }
    env.step(&format!(
        "C05: broker {NEW_BROKER} fetched from offset 0 and was answered with SnapshotId {}-{} while the leader's log \
         still started at offset {} (segment 0 on disk): it loaded the snapshot instead of replaying the log",
        first.0,
        first.1,
        after.map_or("0 (first segment)".into(), |v| v.to_string())
    ));
    assert_serves(env, c, NEW_BROKER, &s.history.current())?;
    describe_through(env, c, NEW_BROKER, &format!("snap-before-{}", s.next_topic))?;
    Ok(first)
}

/// The setup C05 needs: the leader has exactly one snapshot and its log still starts at
/// offset 0. Returns the leader.
fn assert_one_snapshot_log_from_zero(
    env: &Env,
    c: &mut Cluster,
    metrics: &[(i32, String)],
) -> Result<i32> {
    let (leader, _) = leader_of(c)?;
    let leader_snaps = checks::snapshots(&partition_dir(&c.node(leader)?.data_dir()))?;
    let start0 = log_start(leader, metrics)?;
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
    Ok(leader)
}

/// Broker `id`, never started, has no metadata log batches and no snapshots.
fn assert_empty_metadata_log(env: &Env, c: &mut Cluster, id: i32) -> Result<()> {
    let new_dir = partition_dir(&c.node(id)?.data_dir());
    let (batches, snaps) = (
        read_batches_or_empty(&new_dir),
        checks::snapshots(&new_dir)?,
    );
    if !batches.is_empty() || !snaps.is_empty() {
        bail!("broker {id} should start with an empty metadata log, it has {} batches and snapshots {:?}", batches.len(), ids(&snaps));
    }
    env.step(&format!(
        "broker {id}: empty metadata log (no batches, no snapshots) before its first start"
    ));
    Ok(())
}

/// Step 2: a broker down across two snapshots, and the log start moving past its end. It
/// hosts partitions of the topic deleted while it is down: only the snapshot can tell it.
/// `first` is the leader's first snapshot.
fn broker_down_across_snapshots(
    env: &Env,
    c: &mut Cluster,
    s: &mut State,
    boot: &str,
    metrics: &[(i32, String)],
    first: (i64, i32),
) -> Result<()> {
    let deleted = s
        .history
        .current()
        .into_iter()
        .next()
        .context("no topic to delete")?;
    let down_data = c.node(DOWN_BROKER)?.data_dir();
    let hosted = partition_dirs(&down_data, &deleted)?;
    let down_end = stop_down_broker(env, c)?;
    delete_topic(env, c, s, boot, &deleted)?;
    let s2 = grow_until_snapshot(env, c, s, boot, "down", down_end.max(first.0))?;
    let s3 = grow_until_snapshot(env, c, s, boot, "down", s2.0)?;
    env.step(&format!(
        "while broker {DOWN_BROKER} was down (its log ends at {down_end}) the leader wrote snapshots {}-{} and {}-{}",
        s2.0, s2.1, s3.0, s3.1
    ));
    print_kraftwerk_lines(env, c, "snapshot written", 4);
    wait_log_start_past(env, c, metrics, down_end)?;
    c.start(DOWN_BROKER)?;
    c.wait_broker_ready(DOWN_BROKER, Duration::from_secs(150))?;
    let got = assert_downloaded(env, c, DOWN_BROKER, down_end, s)?;
    env.step(&format!(
        "broker {DOWN_BROKER} caught up through FetchSnapshot: snapshot {}-{} (its log had ended at {down_end}, below the \
         leader's log start)",
        got.0, got.1
    ));
    let current = s.history.current();
    if current.contains(&deleted) {
        bail!("internal: {deleted} should be deleted");
    }
    assert_serves(env, c, DOWN_BROKER, &current)?;
    assert_deleted_locally(env, &down_data, DOWN_BROKER, &deleted, hosted)?;
    let down_topic = s
        .history
        .ops
        .last()
        .map(|o| o.topic.clone())
        .unwrap_or_default();
    describe_through(env, c, DOWN_BROKER, &down_topic)?;
    Ok(())
}

/// Stops [`DOWN_BROKER`] cleanly; returns where its metadata log ends.
fn stop_down_broker(env: &Env, c: &mut Cluster) -> Result<i64> {
    stop_ok(env, c, DOWN_BROKER)?;
    let down_dir = partition_dir(&c.node(DOWN_BROKER)?.data_dir());
    let down_end = checks::end_offset(&checks::read_batches(&down_dir)?);
    let down_snaps_before = checks::snapshots(&down_dir)?;
    env.step(&format!(
        "broker {DOWN_BROKER} stopped; its metadata log ends at offset {down_end}, its snapshots: {:?}",
        ids(&down_snaps_before)
    ));
    Ok(down_end)
}

/// Step 4: Kafka's tools read the snapshot files (the leader's latest, and each broker's),
/// and list the topics of their offset.
fn kafka_tools_read_snapshots(env: &Env, c: &mut Cluster, s: &State) -> Result<()> {
    let (leader, _) = leader_of(c)?;
    let leader_latest = checks::snapshots(&partition_dir(&c.node(leader)?.data_dir()))?
        .pop()
        .context("the leader has no snapshot")?;
    let mut files: Vec<(String, PathBuf)> =
        vec![(format!("controller-{leader} (leader)"), leader_latest.2)];
    for b in [DOWN_BROKER, NEW_BROKER] {
        if let Some(sn) = checks::snapshots(&partition_dir(&c.node(b)?.data_dir()))?.pop() {
            files.push((format!("broker-{b}"), sn.2));
        }
    }
    for (who, f) in &files {
        check_with_kafka_tools(env, &s.history, who, f)?;
    }
    Ok(())
}

/// Step 5, metrics: every kraftwerk controller has a snapshot, and `restarted` loaded one.
fn check_metrics(env: &Env, metrics: &[(i32, String)], restarted: i32) -> Result<()> {
    for (id, addr) in metrics {
        let m = scrape(addr)
            .with_context(|| format!("GET http://{addr}/metrics of controller {id}"))?;
        let get = |k: &str| m.get(k).copied().unwrap_or(f64::NAN);
        env.step(&format!(
            "controller {id} GET /metrics: kraftwerk_snapshots_on_disk {} kraftwerk_snapshot_latest_end_offset {} \
             kraftwerk_raft_log_start_offset {} kraftwerk_snapshots_written_total {} kraftwerk_snapshots_loaded_total {}",
            get("kraftwerk_snapshots_on_disk"),
            get("kraftwerk_snapshot_latest_end_offset"),
            get("kraftwerk_raft_log_start_offset"),
            get("kraftwerk_snapshots_written_total"),
            get("kraftwerk_snapshots_loaded_total")
        ));
        let count = get("kraftwerk_snapshots_on_disk");
        if count.is_nan() || count < 1.0 {
            bail!(
                "controller {id}'s /metrics shows kraftwerk_snapshots_on_disk {} (expected ≥ 1)",
                get("kraftwerk_snapshots_on_disk")
            );
        }
        if *id == restarted && get("kraftwerk_snapshots_loaded_total") < 1.0 {
            bail!("controller {id} was restarted from its snapshot but /metrics shows kraftwerk_snapshots_loaded_total {}", get("kraftwerk_snapshots_loaded_total"));
        }
    }
    Ok(())
}

/// Live log directories `<topic>-<partition>` under a broker's `log.dirs`.
fn partition_dirs(data: &Path, topic: &str) -> Result<Vec<String>> {
    let prefix = format!("{topic}-");
    let mut out = Vec::new();
    for e in std::fs::read_dir(data)? {
        let name = e?.file_name().to_string_lossy().to_string();
        if name
            .strip_prefix(&prefix)
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

/// A broker that held partitions of `topic`, deleted while it was down, must drop them (Kafka
/// renames them `...-stray` once its image, here loaded from a snapshot, lacks the topic).
fn assert_deleted_locally(
    env: &Env,
    data: &Path,
    id: i32,
    topic: &str,
    hosted: Vec<String>,
) -> Result<()> {
    if hosted.is_empty() {
        env.step(&format!(
            "broker {id} held no partition of {topic}: nothing to drop"
        ));
        return Ok(());
    }
    util::wait_until(
        &format!(
            "broker {id} to drop its {} partition directories of the deleted topic {topic}",
            hosted.len()
        ),
        Duration::from_secs(30),
        Duration::from_millis(500),
        || {
            let left = partition_dirs(data, topic)?;
            if left.is_empty() {
                Ok(Some(()))
            } else {
                bail!("still there: {left:?}")
            }
        },
    )?;
    env.step(&format!(
        "broker {id} dropped its {} partition directories of {topic} (e.g. {}): it learned of the deletion from the \
         snapshot, the RemoveTopicRecord was no longer in any log it could fetch",
        hosted.len(),
        hosted[0]
    ));
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
        let to_dir = env
            .work
            .join("snapshots")
            .join(format!("controller-{leader}"));
        std::fs::create_dir_all(&to_dir)?;
        let to = to_dir.join(p.file_name().unwrap_or_default());
        if std::fs::copy(&p, &to).is_ok() {
            s.archive.insert((o, e), to);
        }
    }
    Ok(out)
}

/// Runs a topic creation or deletion through `boot`, recording the high watermark around it.
fn record_op(
    c: &Cluster,
    s: &mut State,
    topic: &str,
    create: bool,
    run: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let (_, hw_before) = leader_of(c)?;
    run()?;
    let (_, hw_after) = leader_of(c)?;
    s.history.ops.push(Op {
        topic: topic.to_string(),
        create,
        hw_before,
        hw_after,
    });
    Ok(())
}

/// Creates topics of [`PARTITIONS`] partitions through `boot` until the leader has a snapshot
/// ending above `above`; returns its id.
fn grow_until_snapshot(
    env: &Env,
    c: &mut Cluster,
    s: &mut State,
    boot: &str,
    prefix: &str,
    above: i64,
) -> Result<(i64, i32)> {
    for _ in 0..MAX_TOPICS_PER_SNAPSHOT {
        s.next_topic += 1;
        let topic = format!("snap-{prefix}-{}", s.next_topic);
        record_op(c, s, &topic, true, || {
            create_topic(env, boot, &topic, PARTITIONS, 1, &[]).map(|_| ())
        })?;
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(&id) = archive_leader_snapshots(env, c, s)?
                .iter()
                .rev()
                .find(|(o, _)| *o > above)
            {
                env.step(&format!(
                    "the leader wrote snapshot {}-{} (after {topic})",
                    id.0, id.1
                ));
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
        env.tool_ok(
            "kafka-topics",
            &args(&["--bootstrap-server", boot, "--delete", "--topic", topic]),
            None,
            Duration::from_secs(90),
        )?;
        Ok(())
    })?;
    env.step(&format!("deleted topic {topic}"));
    Ok(())
}

/// SIGTERM a node and require a clean exit.
fn stop_ok(env: &Env, c: &mut Cluster, id: i32) -> Result<()> {
    match c.stop(id, Duration::from_secs(60))? {
        crate::procs::StopOutcome::Terminated(_, d) => {
            env.step(&format!(
                "node {id} stopped {} after SIGTERM",
                util::secs(d)
            ));
            Ok(())
        }
        other => bail!("node {id} did not stop cleanly after SIGTERM: {other:?}"),
    }
}

/// Asserts broker `id` downloaded a snapshot from the leader since its latest start: Kafka's
/// follower line, a new `.checkpoint` in its `__cluster_metadata-0` ending above `above`,
/// byte-identical to the copy of the leader's snapshot with that id (when archived). Returns the
/// id.
fn assert_downloaded(
    env: &Env,
    c: &mut Cluster,
    id: i32,
    above: i64,
    s: &State,
) -> Result<(i64, i32)> {
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
        bail!(
            "broker {id}'s __cluster_metadata-0 has no .checkpoint above offset {above}: {:?}",
            ids(&snaps)
        );
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
                bail!(
                    "broker {id}'s {} differs from the leader's snapshot {o}-{e}",
                    path.display()
                );
            }
            "byte-identical to the leader's"
        }
        None => "the leader's copy was not archived",
    };
    env.step(&format!(
        "broker {id}: {} ({size} bytes, {same})",
        path.display()
    ));
    Ok((o, e))
}

/// Broker `id` serves exactly `want` (a broker answers Metadata from its own metadata image).
fn assert_serves(env: &Env, c: &Cluster, id: i32, want: &BTreeSet<String>) -> Result<()> {
    let addr = c
        .brokers
        .iter()
        .find(|b| b.id == id)
        .context("no such broker")?
        .addr();
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
    env.step(&format!(
        "broker {id} answers Metadata with exactly the current topics: {got:?}"
    ));
    Ok(())
}

/// Waits until the leader's log start offset is above `offset` (kraftwerk: its metric; Java:
/// its first segment's base offset) and shows its directory.
fn wait_log_start_past(
    env: &Env,
    c: &Cluster,
    metrics: &[(i32, String)],
    offset: i64,
) -> Result<()> {
    let start = Instant::now();
    let (leader, start_offset) = util::wait_until(
        &format!("the leader's log start offset to move above {offset} (kraftwerk cleans after each snapshot, Kafka every 60 s)"),
        Duration::from_secs(150),
        Duration::from_secs(1),
        || {
            let (leader, _) = leader_of(c)?;
            let node = c.controllers.iter().find(|n| n.id == leader).context("leader not a controller")?;
            let v = match log_start(leader, metrics)? {
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
    let node = c
        .controllers
        .iter()
        .find(|n| n.id == leader)
        .context("leader")?;
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
        let tail: Vec<String> = lines
            .iter()
            .rev()
            .take(n)
            .rev()
            .map(|l| util::one_line(l, 300))
            .collect();
        if !tail.is_empty() {
            env.show(
                &format!(
                    "{} `{needle}` (last {} of {})",
                    node.label(),
                    tail.len(),
                    lines.len()
                ),
                &tail.join("\n"),
            );
        }
    }
}

/// Stops a follower controller, creates a small topic while it is down, restarts it: it must
/// load its latest snapshot and replay only the tail, then catch up.
fn restart_controller(env: &Env, c: &mut Cluster, s: &mut State, boot: &str) -> Result<i32> {
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
    let end = checks::end_offset(&checks::read_batches(&partition_dir(
        &c.node(id)?.data_dir(),
    ))?);
    env.step(&format!(
        "controller {id} stopped: latest snapshot {latest}-{epoch}, log end offset {end}"
    ));
    s.next_topic += 1;
    let topic = format!("snap-while-controller-down-{}", s.next_topic);
    record_op(c, s, &topic, true, || {
        create_topic(env, boot, &topic, 1, 1, &[]).map(|_| ())
    })?;
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
    Ok(id)
}

/// `kafka-topics --describe` of `topic` through broker `id` only, shown. Retried for up to 30 s:
/// right after a broker starts, before its forwarding channel has the controller's ApiVersions,
/// it advertises (and forwards) ListPartitionReassignments, which kraftwerk does not serve; the
/// Envelope's INVALID_REQUEST reaches the tool as UnknownServerException (a kraftwerk gap
/// outside this scenario: printed, not failed on).
fn describe_through(env: &Env, c: &Cluster, id: i32, topic: &str) -> Result<()> {
    let addr = c
        .brokers
        .iter()
        .find(|b| b.id == id)
        .context("no such broker")?
        .addr();
    let mut failures = Vec::new();
    let raw = util::wait_until(
        &format!("kafka-topics --describe --topic {topic} through broker {id}"),
        Duration::from_secs(30),
        Duration::from_secs(1),
        || match c.describe_topic(&addr, topic, Duration::from_secs(60)) {
            Ok((parts, raw)) if parts.len() == PARTITIONS as usize => Ok(Some(raw)),
            Ok((parts, _)) => bail!("{} partitions listed", parts.len()),
            Err(e) => {
                failures.push(util::one_line(&format!("{e:#}"), 200));
                Err(e)
            }
        },
    )?;
    if let Some(f) = failures.first() {
        env.step(&format!(
            "note (not a snapshot problem): kafka-topics --describe through the freshly started broker {id} first failed \
             {} time(s): {f}",
            failures.len()
        ));
    }
    env.show(
        &format!("kafka-topics --bootstrap-server <broker {id}> --describe --topic {topic}"),
        &first_lines(&raw, 3),
    );
    Ok(())
}
