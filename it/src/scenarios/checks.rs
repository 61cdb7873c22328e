//! Checks shared by the mixed-quorum and rolling-replacement scenarios:
//!
//! * no Java process (controller or broker) logged one of Kafka's fatal-fault messages, and no
//!   kraftwerk process panicked;
//! * the controllers' metadata logs agree: every batch below the committed offset is byte for
//!   byte the same on every controller (read straight from the segment files);
//! * the controllers' images agree as Kafka itself computes them: `kafka-metadata-shell` replays
//!   each controller's committed log prefix (and every Raft snapshot found in a controller's
//!   directory) and the printed `/image` trees must be equal.
//!
//! Why these catch a divergence: the logs are what every node replays, so two controllers whose
//! committed batches differ by one byte have (or will have) different images; comparing the raw
//! bytes catches that at the first differing batch and names it. A kraftwerk controller whose
//! own replay diverged from Java's shows up in two places: in the records it writes when it
//! leads (a Java follower replays them against its own image and stops with a fatal fault on
//! anything inconsistent, e.g. a partition change for an unknown partition or a producer-id
//! block that does not advance) and in the snapshots it writes (its image serialized;
//! `kafka-metadata-shell` must read the same tree from it as from the log prefix it covers).

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cluster::{Cluster, Node};
use crate::env::{ControllerKind, Env};
use crate::kafka::{args, Kafka};
use crate::util;

/// Log lines of a Java controller or broker that mean it stopped or its metadata went wrong:
/// the fatal fault handler (`ProcessTerminatingFaultHandler`), the Raft IO thread dying
/// (`KafkaRaftClientDriver`), the broker lifecycle giving up, and the exceptions the Raft client
/// throws on inconsistent peers or records (`KafkaRaftClient` and `MetadataLoader` stop on them).
pub const JAVA_FATAL_PATTERNS: &[&str] = &[
    "Encountered fatal fault",
    "Unexpected error in raft IO thread",
    "Shutting down because",
    "IllegalStateException",
    "CorruptRecordException",
    "UnexpectedAppendOffsetException",
    "OffsetsOutOfOrderException",
    "InvalidRecordException",
    // Not fatal, but a Java peer found that kraftwerk does not serve an API (or version) it
    // uses: KafkaNetworkChannel logs this at ERROR and the Raft client retries forever.
    "failed due to unsupported version error",
];

/// True if `line` of a Java process log reports a fatal or metadata fault. Besides the fixed
/// patterns this matches every `LoggingFaultHandler` line (`Encountered metadata loading fault:`,
/// `... metadata publishing fault:`, `... quorum controller fault:`): those are non-fatal on a
/// broker but mean its image no longer follows the log.
pub fn is_java_fault_line(line: &str) -> bool {
    JAVA_FATAL_PATTERNS.iter().any(|p| line.contains(p))
        || (line.contains("Encountered ") && line.contains(" fault: "))
}

/// Fault lines in `node`'s log (all starts), at most `max`.
pub fn fault_lines(node: &Node, max: usize) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(&node.log) else {
        return Vec::new();
    };
    text.lines()
        .map(util::strip_ansi)
        .filter(|l| is_java_fault_line(l) || l.contains("panicked at"))
        .take(max)
        .collect()
}

/// Fails if a node that was started has exited, or if any node's log holds a fault line.
pub fn assert_healthy(c: &mut Cluster) -> Result<()> {
    c.check_alive()?;
    let mut problems = Vec::new();
    for n in c.controllers.iter().chain(c.brokers.iter()) {
        let lines = fault_lines(n, 3);
        if !lines.is_empty() {
            problems.push(format!(
                "{} ({}) logged: {}",
                n.name(),
                n.log.display(),
                lines
                    .iter()
                    .map(|l| util::one_line(l, 400))
                    .collect::<Vec<_>>()
                    .join(" || ")
            ));
        }
    }
    if !problems.is_empty() {
        bail!("fatal/metadata faults: {}", problems.join("; "));
    }
    Ok(())
}

/// kraftwerk's ERROR lines in `node`'s log (informational: printed, not failed on).
pub fn kraftwerk_error_lines(node: &Node) -> Vec<String> {
    node.log_lines(" ERROR ")
}

/// One record batch of a metadata log segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogBatch {
    /// `BaseOffset`.
    pub base_offset: i64,
    /// `BaseOffset + LastOffsetDelta`.
    pub last_offset: i64,
    /// `PartitionLeaderEpoch`.
    pub epoch: i32,
    /// `CRC` (CRC-32C of attributes..end).
    pub crc: u32,
    /// Attribute bit 5: a control batch (LeaderChange, snapshot header/footer, ...).
    pub control: bool,
    /// `BaseTimestamp`: the leader's append time, ms since the Unix epoch.
    pub base_timestamp: i64,
    /// The whole batch, header included.
    pub bytes: Vec<u8>,
}

/// `<data dir>/__cluster_metadata-0`.
pub fn partition_dir(data_dir: &Path) -> PathBuf {
    data_dir.join(kraftwerk_protocol::constants::METADATA_PARTITION_DIR)
}

fn is_segment_name(name: &str) -> bool {
    name.len() == 24 && name.ends_with(".log") && name[..20].bytes().all(|b| b.is_ascii_digit())
}

/// Raft snapshots (`<20 digits>-<10 digits>.checkpoint`) in a partition directory, as
/// `(end offset, epoch, path)`, oldest first. The bootstrap snapshot `0-0` is left out.
pub fn snapshots(part_dir: &Path) -> Result<Vec<(i64, i32, PathBuf)>> {
    let mut out = Vec::new();
    if !part_dir.exists() {
        return Ok(out);
    }
    for e in std::fs::read_dir(part_dir)? {
        let p = e?.path();
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let Some(stem) = name.strip_suffix(".checkpoint") else {
            continue;
        };
        let Some((o, ep)) = stem.split_once('-') else {
            continue;
        };
        if let (Ok(o), Ok(ep)) = (o.parse::<i64>(), ep.parse::<i32>()) {
            if (o, ep) != (0, 0) {
                out.push((o, ep, p));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Every complete batch of the segments of `part_dir`, in offset order. Reading stops at the
/// first incomplete or non-v2 batch of a segment (a tail being written, or a torn one).
pub fn read_batches(part_dir: &Path) -> Result<Vec<LogBatch>> {
    let mut files: Vec<PathBuf> = Vec::new();
    for e in
        std::fs::read_dir(part_dir).with_context(|| format!("listing {}", part_dir.display()))?
    {
        let p = e?.path();
        if is_segment_name(&p.file_name().unwrap_or_default().to_string_lossy()) {
            files.push(p);
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let data = std::fs::read(&f).with_context(|| format!("reading {}", f.display()))?;
        out.extend(parse_batches(&data));
    }
    Ok(out)
}

/// Splits `data` into v2 batches (stops at the first incomplete or malformed one).
pub fn parse_batches(data: &[u8]) -> Vec<LogBatch> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos + 61 <= data.len() {
        let h = &data[pos..];
        let len = i32::from_be_bytes(h[8..12].try_into().unwrap());
        if len < 49 || h[16] != 2 {
            break;
        }
        let total = 12 + len as usize;
        if pos + total > data.len() {
            break;
        }
        let base = i64::from_be_bytes(h[0..8].try_into().unwrap());
        let delta = i32::from_be_bytes(h[23..27].try_into().unwrap());
        out.push(LogBatch {
            base_offset: base,
            last_offset: base + i64::from(delta),
            epoch: i32::from_be_bytes(h[12..16].try_into().unwrap()),
            crc: u32::from_be_bytes(h[17..21].try_into().unwrap()),
            control: i16::from_be_bytes(h[21..23].try_into().unwrap()) & 0x20 != 0,
            base_timestamp: i64::from_be_bytes(h[27..35].try_into().unwrap()),
            bytes: h[..total].to_vec(),
        });
        pos += total;
    }
    out
}

/// Offset just past the last complete batch (0 for an empty log).
pub fn end_offset(batches: &[LogBatch]) -> i64 {
    batches.last().map(|b| b.last_offset + 1).unwrap_or(0)
}

/// Compares the batches below `upto` of every controller: each must hold every offset from its
/// first batch up to `upto - 1`, and where two controllers hold the same offsets the batches
/// must be byte-identical. Returns a one-line summary.
pub fn compare_logs(logs: &[(String, Vec<LogBatch>)], upto: i64) -> Result<String> {
    let mut committed: Vec<(&str, BTreeMap<i64, &LogBatch>)> = Vec::new();
    for (name, batches) in logs {
        let below: Vec<&LogBatch> = batches.iter().filter(|b| b.last_offset < upto).collect();
        let end = below.last().map(|b| b.last_offset + 1).unwrap_or(0);
        if end != upto {
            bail!(
                "{name}'s metadata log ends at offset {end} below the committed offset {upto} \
                 (log end {})",
                end_offset(batches)
            );
        }
        let mut next = below.first().map(|b| b.base_offset).unwrap_or(0);
        for b in &below {
            if b.base_offset != next {
                bail!(
                    "{name}'s metadata log has a gap or overlap: batch at {} after offset {}",
                    b.base_offset,
                    next - 1
                );
            }
            next = b.last_offset + 1;
        }
        committed.push((
            name,
            below.into_iter().map(|b| (b.base_offset, b)).collect(),
        ));
    }
    let Some((ref_name, reference)) = committed
        .iter()
        .min_by_key(|(_, m)| m.keys().next().copied())
    else {
        bail!("no logs to compare");
    };
    let mut compared = 0usize;
    for (name, m) in &committed {
        if name == ref_name {
            continue;
        }
        for (off, b) in m {
            let Some(r) = reference.get(off) else {
                if *off >= reference.keys().next().copied().unwrap_or(0) {
                    bail!("batch boundaries differ at offset {off}: {name} has a batch there, {ref_name} does not");
                }
                continue;
            };
            if r.bytes != b.bytes {
                bail!(
                    "metadata logs diverge at offset {off}: {ref_name} has epoch {} crc {:08x} ({} bytes, offsets {}..={}), \
                     {name} has epoch {} crc {:08x} ({} bytes, offsets {}..={})",
                    r.epoch, r.crc, r.bytes.len(), r.base_offset, r.last_offset,
                    b.epoch, b.crc, b.bytes.len(), b.base_offset, b.last_offset
                );
            }
            compared += 1;
        }
    }
    let epochs: std::collections::BTreeSet<i32> = reference.values().map(|b| b.epoch).collect();
    Ok(format!(
        "{} controllers' metadata logs identical below offset {upto} ({} batches in {ref_name}, {compared} compared, \
         leader epochs {:?})",
        logs.len(),
        reference.len(),
        epochs
    ))
}

/// Waits until every running controller's log end offset (per `describe --replication` at the
/// leader) reaches the leader's high watermark, then returns that high watermark.
pub fn wait_converged(env: &Env, c: &Cluster, timeout: Duration) -> Result<i64> {
    let boot = c.controller_bootstrap();
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    let hw = util::wait_until(
        "every controller to reach the leader's high watermark",
        timeout,
        Duration::from_millis(500),
        || {
            let (st, _) = c.describe_status(&boot, Duration::from_secs(30))?;
            let (rows, _) = c.describe_replication(&boot, Duration::from_secs(30))?;
            for id in &ids {
                let row = rows.iter().find(|r| r.node_id == *id).with_context(|| {
                    format!("controller {id} missing from describe --replication")
                })?;
                if row.log_end_offset < st.high_watermark {
                    bail!(
                        "controller {id} at log end {} < high watermark {}",
                        row.log_end_offset,
                        st.high_watermark
                    );
                }
            }
            Ok(Some(st.high_watermark))
        },
    )?;
    env.step(&format!("all controllers reached the high watermark {hw}"));
    Ok(hw)
}

/// Reads every controller's metadata log and compares the batches below `upto`
/// ([`compare_logs`]). Prints and returns the summary.
pub fn assert_logs_agree(env: &Env, c: &Cluster, upto: i64) -> Result<String> {
    let mut logs = Vec::new();
    for n in &c.controllers {
        let batches = read_batches(&partition_dir(&n.data_dir()))
            .with_context(|| format!("reading {}'s metadata log", n.label()))?;
        logs.push((n.label(), batches));
    }
    let s = compare_logs(&logs, upto)?;
    if let Some((name, _)) = logs.first() {
        assert_wall_clock_timestamps(name, &logs[0].1, upto, util::unix_ms() as i64)?;
    }
    env.step(&s);
    Ok(s)
}

/// Every batch below `upto` must carry a wall-clock append time (ms since the Unix epoch, as a
/// Java leader writes it): not before 2020 and not more than an hour past `now_ms`. A leader
/// that stamps batches with another clock (e.g. time since its process started) confuses
/// Java's time-based segment rolling and snapshot retention (`metadata.max.retention.ms`
/// compares the snapshot's `LastContainedLogTimestamp`, taken from batch times, with the
/// wall clock) and `kafka-dump-log` readers.
pub fn assert_wall_clock_timestamps(
    name: &str,
    batches: &[LogBatch],
    upto: i64,
    now_ms: i64,
) -> Result<()> {
    const Y2020_MS: i64 = 1_577_836_800_000;
    if let Some(b) = batches
        .iter()
        .filter(|b| b.last_offset < upto)
        .find(|b| b.base_timestamp < Y2020_MS || b.base_timestamp > now_ms + 3_600_000)
    {
        bail!(
            "{name}'s batch at offset {} (leader epoch {}) has BaseTimestamp {} ms, not a wall-clock time (now {now_ms})",
            b.base_offset,
            b.epoch,
            b.base_timestamp
        );
    }
    Ok(())
}

/// What [`image_tree`] returns for a file that holds control records only.
pub const EMPTY_IMAGE: &str = "(no data records: the empty image)";

/// `kafka-metadata-shell --snapshot FILE tree /image`, without the `provenance` entry (it names
/// the last offset and time read, which differ between a log prefix and a snapshot).
///
/// In non-interactive mode the shell runs the command as soon as the first batch is applied
/// (`MetadataShell.waitUntilCaughtUp` waits for `lastAppliedOffset() > 0`, not for the end of
/// the file), so under load it can print a partial image. The printed provenance names the
/// last offset applied: the run is repeated until it is the file's last data batch.
///
/// A file with no data batch (a log prefix of control records only, e.g. LeaderChange records of
/// elections before the bootstrap records were committed, or a snapshot of that prefix) is the
/// empty image, [`EMPTY_IMAGE`]: the shell would wait for a first data batch that never comes.
pub fn image_tree(env: &Env, file: &Path) -> Result<String> {
    let data = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let Some(want) = parse_batches(&data)
        .iter()
        .rev()
        .find(|b| !b.control)
        .map(|b| b.last_offset)
    else {
        return Ok(EMPTY_IMAGE.to_string());
    };
    let fallback = shell_kafka(env)?;
    let mut last_seen = None;
    for _ in 0..8 {
        let a = args(&["--snapshot", &file.to_string_lossy(), "tree", "/image"]);
        let timeout = Duration::from_secs(30);
        let r = match fallback {
            Some(k) => env
                .tools
                .run_over(k, "kafka-metadata-shell", &a, None, timeout)?,
            None => env.tool("kafka-metadata-shell", &a, None, timeout)?,
        };
        if r.timed_out {
            // Seen with 4.0.2's shell: it can hang after printing nothing; a rerun works.
            last_seen = None;
            continue;
        }
        if !r.ok() {
            bail!(
                "kafka-metadata-shell --snapshot {} failed (exit {:?}): {}",
                file.display(),
                r.code,
                util::one_line(&r.stderr, 600)
            );
        }
        // The shell reads a snapshot like a log and says so for its header and footer
        // ("Ignoring control record with type SNAPSHOT_HEADER"); anything else is a problem.
        let problems: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.contains("ERROR") || l.contains("Exception"))
            .filter(|l| !l.contains("Ignoring control record with type SNAPSHOT_"))
            .collect();
        if !problems.is_empty() {
            bail!(
                "kafka-metadata-shell reported errors reading {}: {}",
                file.display(),
                util::one_line(&problems.join("\n"), 600)
            );
        }
        let applied = provenance_offset(&r.stdout);
        if applied == Some(want) {
            return Ok(strip_provenance(&r.stdout));
        }
        last_seen = applied;
    }
    bail!(
        "kafka-metadata-shell never printed the whole image of {} (provenance offset {last_seen:?}, last data batch ends at {want})",
        file.display()
    )
}

static SHELL_FALLBACK: std::sync::OnceLock<Option<Kafka>> = std::sync::OnceLock::new();

/// The Kafka whose `kafka-metadata-shell` reads metadata files when the Kafka under test does
/// not publish the shell (Maven Central has no `kafka-shell` for 4.4.0): the newest other
/// cached version that has it, run over the version under test's jars ([`crate::kafka::Tools::run_over`]) so
/// it reads that version's metadata levels. `None` means the version under test has its own
/// shell.
pub fn shell_kafka(env: &Env) -> Result<Option<&'static Kafka>> {
    if env.kafka().tool_class("kafka-metadata-shell").is_ok() {
        return Ok(None);
    }
    let found = SHELL_FALLBACK.get_or_init(|| {
        let root = crate::kafka::cache_dir().join("kafka");
        let mut versions: Vec<(Vec<u32>, String)> = std::fs::read_dir(&root)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().to_string())
                    .filter(|v| {
                        v != &env.kafka().version
                            && root.join(v).join(".complete").exists()
                            && root
                                .join(v)
                                .join("libs")
                                .join(format!("kafka-shell-{v}.jar"))
                                .exists()
                    })
                    .map(|v| (v.split('.').map(|x| x.parse().unwrap_or(0)).collect(), v))
                    .collect()
            })
            .unwrap_or_default();
        versions.sort();
        let (_, v) = versions.pop()?;
        let k = Kafka::locate(&v, &env.work.join(format!("conf-{v}"))).ok()?;
        env.step(&format!(
            "Kafka {} publishes no kafka-metadata-shell: images are read with Kafka {v}'s shell over Kafka {0}'s classes",
            env.kafka().version
        ));
        Some(k)
    });
    match found {
        Some(k) => Ok(Some(k)),
        None => bail!(
            "Kafka {} has no kafka-metadata-shell and no other cached Kafka version has one (run scripts/kafka-fetch 4.1.2)",
            env.kafka().version
        ),
    }
}

/// The offset in the `provenance` entry of a `tree /image` listing (`offset 492, epoch 13, ...`).
pub fn provenance_offset(tree: &str) -> Option<i64> {
    let mut lines = tree.lines().skip_while(|l| l.trim() != "provenance:");
    lines.next()?;
    let l = lines.next()?.trim();
    let n = l.strip_prefix("offset ")?.split(',').next()?;
    n.trim().parse().ok()
}

/// Drops the `provenance:` node and its indented children from a `tree` listing.
pub fn strip_provenance(tree: &str) -> String {
    let mut out = String::new();
    let mut skip_indent: Option<usize> = None;
    for l in tree.lines() {
        let indent = l.len() - l.trim_start().len();
        if let Some(i) = skip_indent {
            if indent > i {
                continue;
            }
            skip_indent = None;
        }
        if l.trim() == "provenance:" {
            skip_indent = Some(indent);
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Writes the batches of `batches` below `upto` to `path` (a file `kafka-metadata-shell` reads
/// like a segment).
fn write_prefix(batches: &[LogBatch], upto: i64, path: &Path) -> Result<()> {
    let mut bytes = Vec::new();
    for b in batches.iter().filter(|b| b.last_offset < upto) {
        bytes.extend_from_slice(&b.bytes);
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// The first line where two texts differ, for error messages.
pub fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!(
                "line {}: {:?} vs {:?}",
                i + 1,
                util::one_line(x, 250),
                util::one_line(y, 250)
            );
        }
    }
    format!("{} vs {} lines", a.lines().count(), b.lines().count())
}

/// Which implementation wrote each snapshot file, where a controller changed implementation
/// (files not listed were written by the implementation running the controller now).
pub type SnapshotWriters = BTreeMap<PathBuf, ControllerKind>;

/// Records `kind` as the writer of every snapshot in controller `id`'s directory not yet
/// attributed (call it right after `id` stopped running `kind`).
pub fn attribute_snapshots(
    c: &mut Cluster,
    id: i32,
    kind: ControllerKind,
    writers: &mut SnapshotWriters,
) -> Result<()> {
    let dir = partition_dir(&c.node(id)?.data_dir());
    for (_, _, p) in snapshots(&dir)? {
        writers.entry(p).or_insert(kind);
    }
    Ok(())
}

/// Kafka's own replay of each controller's committed log prefix (`upto`) must print the same
/// image; and every Raft snapshot in a controller's directory must print the same image as the
/// log prefix it stands for. Returns a summary.
pub fn assert_images_agree(
    env: &Env,
    c: &Cluster,
    upto: i64,
    writers: &SnapshotWriters,
) -> Result<String> {
    let dir = env.work.join("images");
    std::fs::create_dir_all(&dir)?;
    let mut logs = log_images(env, c, &dir, upto)?;
    let mut summary = assert_log_images_equal(&logs, upto)?;
    let compared = assert_snapshots_match_logs(env, c, &dir, writers, &mut logs.full_logs)?;
    summary.push_str(&format!(
        "; snapshots with the image of the log below them: {}",
        if compared.is_empty() {
            "none found".to_string()
        } else {
            compared.join(", ")
        }
    ));
    env.step(&summary);
    Ok(summary)
}

/// What [`log_images`] replayed.
struct LogImages {
    /// Controller label → kafka-metadata-shell's image of its log below `upto`.
    trees: Vec<(String, String)>,
    /// Controller label → its whole log, for the controllers whose log starts at offset 0.
    full_logs: Vec<(String, Vec<LogBatch>)>,
    /// How many distinct log prefixes the shell replayed.
    distinct_prefixes: usize,
}

/// Replays each controller's log prefix below `upto` with kafka-metadata-shell (writing the
/// prefixes into `dir`); a log cleaned below a snapshot (not starting at offset 0) is skipped.
fn log_images(env: &Env, c: &Cluster, dir: &Path, upto: i64) -> Result<LogImages> {
    let mut trees: Vec<(String, String)> = Vec::new();
    let mut full_logs: Vec<(String, Vec<LogBatch>)> = Vec::new();
    let mut prefixes: Vec<(Vec<u8>, String)> = Vec::new();
    for n in &c.controllers {
        let batches = read_batches(&partition_dir(&n.data_dir()))?;
        let starts_at_zero = batches.first().map(|b| b.base_offset == 0).unwrap_or(false);
        if starts_at_zero {
            let f = dir.join(format!("{}-upto-{upto}.log", n.name()));
            write_prefix(&batches, upto, &f)?;
            // Byte-identical prefixes replay to the same image: run the shell once per content.
            let bytes = std::fs::read(&f)?;
            let tree = match prefixes.iter().find(|(b, _)| *b == bytes) {
                Some((_, t)) => t.clone(),
                None => {
                    let t = image_tree(env, &f)?;
                    prefixes.push((bytes, t.clone()));
                    t
                }
            };
            trees.push((n.label(), tree));
            full_logs.push((n.label(), batches));
        } else {
            env.step(&format!(
                "{}'s log starts at offset {} (cleaned below a snapshot): no log image for it",
                n.label(),
                batches.first().map(|b| b.base_offset).unwrap_or(-1)
            ));
        }
    }
    Ok(LogImages {
        trees,
        full_logs,
        distinct_prefixes: prefixes.len(),
    })
}

/// The log images are all the same (and hold a metadataVersion); returns the summary's start.
fn assert_log_images_equal(logs: &LogImages, upto: i64) -> Result<String> {
    let trees = &logs.trees;
    let Some((ref_name, ref_tree)) = trees.first().cloned() else {
        bail!("no controller log starts at offset 0: nothing to replay with kafka-metadata-shell");
    };
    if !ref_tree.contains("metadataVersion") {
        bail!(
            "kafka-metadata-shell's image of {ref_name} has no metadataVersion: {}",
            util::one_line(&ref_tree, 300)
        );
    }
    for (name, t) in &trees[1..] {
        if *t != ref_tree {
            bail!(
                "kafka-metadata-shell images differ at offset {upto}: {ref_name} vs {name}: {}",
                first_difference(&ref_tree, t)
            );
        }
    }
    Ok(format!(
        "kafka-metadata-shell images of {} controllers' logs identical at offset {upto} ({} lines, {} distinct log prefix(es) replayed)",
        trees.len(),
        ref_tree.lines().count(),
        logs.distinct_prefixes
    ))
}

/// Snapshots, against the log prefix each one stands for: every controller's first, middle
/// and last snapshot written by kraftwerk, and its last one written by Java. `full_logs` are
/// re-read when a snapshot is newer than all of them. Returns the snapshots compared.
fn assert_snapshots_match_logs(
    env: &Env,
    c: &Cluster,
    dir: &Path,
    writers: &SnapshotWriters,
    full_logs: &mut [(String, Vec<LogBatch>)],
) -> Result<Vec<String>> {
    let mut from_log_cache: BTreeMap<i64, String> = BTreeMap::new();
    let mut compared: Vec<String> = Vec::new();
    for n in &c.controllers {
        let current = c.controller_kind(n.id).unwrap_or(ControllerKind::Java);
        let snaps = snapshots(&partition_dir(&n.data_dir()))?;
        let writer = |p: &PathBuf| writers.get(p).copied().unwrap_or(current);
        for (offset, epoch, path) in snapshots_to_compare(&snaps, writer) {
            let (offset, epoch) = (*offset, *epoch);
            let who = writer(path).label();
            // The logs were read at `upto`; a snapshot written since needs a fresh read.
            if !full_logs.iter().any(|(_, b)| end_offset(b) >= offset) {
                for (name, batches) in full_logs.iter_mut() {
                    if let Some(m) = c.controllers.iter().find(|m| m.label() == *name) {
                        *batches = read_batches(&partition_dir(&m.data_dir()))?;
                    }
                }
            }
            let Some((log_name, batches)) = full_logs.iter().find(|(_, b)| end_offset(b) >= offset)
            else {
                env.step(&format!(
                    "no log covers {}'s snapshot {offset}-{epoch}: not compared",
                    n.label()
                ));
                continue;
            };
            let from_log = match from_log_cache.get(&offset) {
                Some(t) => t.clone(),
                None => {
                    let f = dir.join(format!("prefix-{offset}.log"));
                    write_prefix(batches, offset, &f)?;
                    let t = image_tree(env, &f)?;
                    from_log_cache.insert(offset, t.clone());
                    t
                }
            };
            // A copy: the shell locks `<dir>/.lock` two levels up from the file it reads, which
            // the running controller holds.
            let copy = dir.join(format!("{}-snapshot-{offset}-{epoch}.checkpoint", n.name()));
            std::fs::copy(path, &copy).with_context(|| format!("copying {}", path.display()))?;
            let from_snapshot = image_tree(env, &copy)?;
            if from_log != from_snapshot {
                bail!(
                    "{}'s snapshot {offset}-{epoch} (written by {who}) does not hold the image of {log_name}'s log below {offset}: {}",
                    n.label(),
                    first_difference(&from_log, &from_snapshot)
                );
            }
            compared.push(format!("{}:{offset}-{epoch}({who})", n.name()));
        }
    }
    Ok(compared)
}

/// Of one controller's snapshots (oldest first), the first, middle and last written by
/// kraftwerk and the last written by Java, as `writer` attributes them.
fn snapshots_to_compare(
    snaps: &[(i64, i32, PathBuf)],
    writer: impl Fn(&PathBuf) -> ControllerKind,
) -> Vec<&(i64, i32, PathBuf)> {
    let by_kraftwerk: Vec<_> = snaps
        .iter()
        .filter(|s| writer(&s.2) == ControllerKind::Kraftwerk)
        .collect();
    let by_java: Vec<_> = snaps
        .iter()
        .filter(|s| writer(&s.2) == ControllerKind::Java)
        .collect();
    let mut chosen: Vec<&(i64, i32, PathBuf)> = Vec::new();
    if !by_kraftwerk.is_empty() {
        for i in [0, by_kraftwerk.len() / 2, by_kraftwerk.len() - 1] {
            if !chosen.contains(&by_kraftwerk[i]) {
                chosen.push(by_kraftwerk[i]);
            }
        }
    }
    chosen.extend(by_java.last().copied());
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(base: i64, records: i32, epoch: i32, fill: u8) -> Vec<u8> {
        let len = 49 + 10;
        let mut b = vec![0u8; 12 + len];
        b[0..8].copy_from_slice(&base.to_be_bytes());
        b[8..12].copy_from_slice(&(len as i32).to_be_bytes());
        b[12..16].copy_from_slice(&epoch.to_be_bytes());
        b[16] = 2;
        b[23..27].copy_from_slice(&(records - 1).to_be_bytes());
        b[27..35].copy_from_slice(&1_800_000_000_000i64.to_be_bytes());
        for x in &mut b[61..] {
            *x = fill;
        }
        b
    }

    fn log(parts: &[(i64, i32, i32, u8)]) -> Vec<LogBatch> {
        let mut bytes = Vec::new();
        for (base, n, e, f) in parts {
            bytes.extend(batch(*base, *n, *e, *f));
        }
        parse_batches(&bytes)
    }

    #[test]
    fn parses_batches_and_stops_at_a_torn_tail() {
        let mut bytes = batch(0, 3, 1, 0);
        bytes.extend(batch(3, 1, 1, 0));
        let torn = batch(4, 1, 2, 0);
        bytes.extend(&torn[..30]);
        let b = parse_batches(&bytes);
        assert_eq!(b.len(), 2);
        assert_eq!(
            (b[0].base_offset, b[0].last_offset, b[1].last_offset),
            (0, 2, 3)
        );
        assert_eq!(end_offset(&b), 4);
    }

    #[test]
    fn identical_logs_agree_and_a_differing_byte_is_named() {
        let a = log(&[(0, 3, 1, 0), (3, 2, 1, 0), (5, 1, 2, 0)]);
        let longer = log(&[(0, 3, 1, 0), (3, 2, 1, 0), (5, 1, 2, 0), (6, 1, 2, 9)]);
        let logs = vec![("a".to_string(), a.clone()), ("b".to_string(), longer)];
        assert!(compare_logs(&logs, 6).is_ok());
        // The extra batch at 6 is not committed yet, but 7 is more than `a` has.
        assert!(compare_logs(&logs, 7).is_err());
        let diverged = log(&[(0, 3, 1, 0), (3, 2, 2, 0), (5, 1, 2, 0)]);
        let e = compare_logs(&[("a".into(), a.clone()), ("c".into(), diverged)], 6).unwrap_err();
        assert!(e.to_string().contains("diverge at offset 3"), "{e}");
        let other_content = log(&[(0, 3, 1, 0), (3, 2, 1, 7), (5, 1, 2, 0)]);
        assert!(compare_logs(&[("a".into(), a), ("d".into(), other_content)], 6).is_err());
    }

    #[test]
    fn a_log_cleaned_below_a_snapshot_is_compared_where_it_overlaps() {
        let full = log(&[(0, 3, 1, 0), (3, 2, 1, 0), (5, 1, 2, 0)]);
        let cleaned = log(&[(3, 2, 1, 0), (5, 1, 2, 0)]);
        assert!(compare_logs(
            &[("full".into(), full.clone()), ("cleaned".into(), cleaned)],
            6
        )
        .is_ok());
        let gap = log(&[(0, 3, 1, 0), (5, 1, 2, 0)]);
        assert!(compare_logs(&[("full".into(), full), ("gap".into(), gap)], 6).is_err());
    }

    #[test]
    fn process_relative_timestamps_are_rejected() {
        let mut good = log(&[(0, 3, 1, 0), (3, 2, 1, 0)]);
        assert!(assert_wall_clock_timestamps("x", &good, 5, 1_800_000_100_000).is_ok());
        good[1].base_timestamp = 10_706; // ms since a process started
        let e = assert_wall_clock_timestamps("x", &good, 5, 1_800_000_100_000).unwrap_err();
        assert!(e.to_string().contains("offset 3"), "{e}");
        // Not committed yet: not checked.
        assert!(assert_wall_clock_timestamps("x", &good, 3, 1_800_000_100_000).is_ok());
    }

    #[test]
    fn fault_lines_are_recognised() {
        assert!(is_java_fault_line(
            "[..] ERROR Encountered fatal fault: Unexpected error in raft IO thread"
        ));
        assert!(is_java_fault_line(
            "ERROR Encountered metadata loading fault: Unable to replay"
        ));
        assert!(is_java_fault_line(
            "java.lang.IllegalStateException: Cannot transition"
        ));
        assert!(!is_java_fault_line(
            "INFO [RaftManager id=2] Completed transition to Leader"
        ));
        assert!(!is_java_fault_line(
            "Encountered an error while configuring the connection"
        ));
    }

    #[test]
    fn provenance_is_read_and_dropped_from_trees() {
        let t = "features:\n  metadataVersion:\n    4.1-IV1\nprovenance:\n  offset 29, epoch 2\ntopics:\n  byId:\n";
        assert_eq!(
            strip_provenance(t),
            "features:\n  metadataVersion:\n    4.1-IV1\ntopics:\n  byId:\n"
        );
        assert_eq!(provenance_offset(t), Some(29));
        assert_eq!(
            provenance_offset("provenance:\n  offset -1, epoch -1, time 1969\n"),
            Some(-1)
        );
        assert_eq!(provenance_offset("features:\n"), None);
    }
}
