//! `tools`: Kafka's own CLI tools, of the release under test, against a kraftwerk quorum and one
//! broker of that release, giving the answers an operator relies on (asserted, not just exit
//! codes):
//!
//! 1. `kafka-metadata-quorum --bootstrap-controller` `describe --status` (cluster id, leader
//!    among the voters, epoch, high watermark, the broker as observer) and `describe
//!    --replication` (Leader/Follower/Observer roles, every voter's and the broker's `Lag`
//!    reaching 0, the leader's LogEndOffset at or above the high watermark).
//! 2. `kafka-cluster cluster-id` through `--bootstrap-controller` and `--bootstrap-server`: the
//!    id the nodes were formatted with.
//! 3. `kafka-features describe` through `--bootstrap-controller` and `--bootstrap-server`: every
//!    finalized level equals what this release's own `kafka-features version-mapping
//!    --release-version V` says `kafka-storage format` writes at V (kraft.version 0: the voters
//!    are static), and the controller's SupportedMaxVersion of metadata.version is at least V.
//! 4. `kafka-topics` (through `--bootstrap-controller` where the release's tool has it, else the
//!    broker): create, `--list`, `--describe`; `kafka-configs --bootstrap-controller` describe
//!    and alter a controller's own dynamic config.
//! 5. Once the leader wrote a snapshot covering the first topic and a second topic exists, the
//!    cluster is stopped cleanly and Kafka reads kraftwerk's files: the leader's latest
//!    `.checkpoint` with `kafka-metadata-shell` and `kafka-dump-log --cluster-metadata-decoder`
//!    (the topics of its offset, SnapshotHeader first, SnapshotFooter last), and controller 1's
//!    log segment with both (every batch valid; the FeatureLevelRecord of metadata.version at V's
//!    feature level; TopicRecords of both topics; the broker's RegisterBrokerRecord; the shell's
//!    `/image/topics/byName` lists exactly the two topics).

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use super::snapshot::files::{check_with_kafka_tools, tree_children};
use super::snapshot::history::{History, Op};
use super::snapshot::probes::leader_of;
use super::{admin, assert_quorum_status, checks, e2e};
use crate::cluster::{props, Cluster, ClusterSpec, FIRST_BROKER_ID};
use crate::env::Env;
use crate::kafka::args;
use crate::util;

/// A small snapshot threshold, so the leader snapshots right after the first topic.
const SNAPSHOT_BYTES: &str = "4096";
/// Partitions of the first topic (its records alone exceed [`SNAPSHOT_BYTES`]).
const PARTITIONS_A: u32 = 40;
const TOPIC_A: &str = "tools-a";
const TOPIC_B: &str = "tools-b";
/// How long one tool run may take (a JVM start on a busy 2-core machine included).
const TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// The scenario body.
pub fn run(env: &Env) -> Result<()> {
    let spec = ClusterSpec {
        controllers: env.controllers.clone(),
        brokers: 1,
        controller_props: props(&[(
            "metadata.log.max.record.bytes.between.snapshots",
            SNAPSHOT_BYTES,
        )]),
        broker_props: e2e::single_broker_props(),
    };
    if spec.controllers.len() < 3 {
        bail!(
            "tools needs 3 controllers, IT_CONTROLLERS has {}",
            spec.controllers.len()
        );
    }
    let mut c = Cluster::new(env, &spec)?;
    c.format_all()?;
    c.start_controllers()?;
    c.wait_quorum(Duration::from_secs(90))?;
    c.start_brokers()?;
    c.wait_broker_ready(FIRST_BROKER_ID, Duration::from_secs(120))?;

    check_quorum(env, &c)?;
    check_cluster_id(env, &c)?;
    let mv = check_features(env, &c)?;
    let mut history = History::default();
    topics(env, &c, &mut history, TOPIC_A, PARTITIONS_A)?;
    admin::controller_configs(env, &c)?;
    let (leader, snapshot_end) = wait_snapshot(env, &c, &history)?;
    topics(env, &c, &mut history, TOPIC_B, 1)?;
    checks::assert_healthy(&mut c)?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(30))?;
    env.step(&format!(
        "cluster stopped cleanly; reading kraftwerk's files (leader {leader} snapshot ≥ {snapshot_end})"
    ));
    let snap = checks::snapshots(&checks::partition_dir(&c.node(leader)?.data_dir()))?
        .pop()
        .context("the leader's snapshot is gone")?;
    check_with_kafka_tools(env, &history, &format!("controller-{leader}"), &snap.2)?;
    check_log(env, &c, &mv)?;
    Ok(())
}

/// Step 1: `describe --status` and `describe --replication` through one controller.
fn check_quorum(env: &Env, c: &Cluster) -> Result<()> {
    let one = c.controllers[0].addr();
    let (st, raw) = c.describe_status(&one, TOOL_TIMEOUT)?;
    env.show(
        &format!("kafka-metadata-quorum --bootstrap-controller {one} describe --status"),
        &raw,
    );
    assert_quorum_status(&st, c, &[FIRST_BROKER_ID])?;
    e2e::check_replication_roles(env, c, &one, st.leader_id)?;
    let raw = util::wait_until(
        "every voter and the broker at Lag 0 in describe --replication",
        Duration::from_secs(60),
        Duration::from_millis(500),
        || {
            let (rows, raw) = c.describe_replication(&one, TOOL_TIMEOUT)?;
            let leader = rows
                .iter()
                .find(|r| r.status == "Leader")
                .context("no Leader row")?;
            if leader.log_end_offset < st.high_watermark {
                bail!(
                    "the leader's LogEndOffset {} is below the high watermark {} seen before",
                    leader.log_end_offset,
                    st.high_watermark
                );
            }
            let lagging: Vec<String> = rows
                .iter()
                .filter(|r| r.lag != 0)
                .map(|r| format!("{} lag {}", r.node_id, r.lag))
                .collect();
            if lagging.is_empty() {
                Ok(Some(raw))
            } else {
                bail!("lagging: {}", lagging.join(", "))
            }
        },
    )?;
    env.show("describe --replication with every Lag 0", &raw);
    env.step(&format!(
        "quorum: leader {} epoch {}, voters {:?}, observers {:?}; all caught up",
        st.leader_id, st.leader_epoch, st.voters, st.observers
    ));
    Ok(())
}

/// Step 2: `kafka-cluster cluster-id` through a controller and through the broker.
fn check_cluster_id(env: &Env, c: &Cluster) -> Result<()> {
    for (flag, boot) in [
        ("--bootstrap-controller", c.controller_bootstrap()),
        ("--bootstrap-server", c.broker_bootstrap()),
    ] {
        let r = env.tool_ok(
            "kafka-cluster",
            &args(&["cluster-id", flag, &boot]),
            None,
            TOOL_TIMEOUT,
        )?;
        let want = format!("Cluster ID: {}", c.cluster_id);
        if !r.stdout.lines().any(|l| l.trim() == want) {
            bail!(
                "kafka-cluster cluster-id {flag} printed {:?}, expected `{want}`",
                util::one_line(&r.stdout, 300)
            );
        }
        env.step(&format!("kafka-cluster cluster-id {flag}: {want}"));
    }
    Ok(())
}

/// The metadata.version the cluster runs: its name and feature level.
struct Mv {
    name: String,
    level: i64,
}

/// Step 3: finalized features against this release's `version-mapping`; returns the MV.
fn check_features(env: &Env, c: &Cluster) -> Result<Mv> {
    let rv = &env.release_version;
    let r = env.tool_ok(
        "kafka-features",
        &args(&[
            "--bootstrap-controller",
            &c.controller_bootstrap(),
            "version-mapping",
            "--release-version",
            rv,
        ]),
        None,
        TOOL_TIMEOUT,
    )?;
    env.show(
        &format!("kafka-features version-mapping --release-version {rv}"),
        &r.stdout,
    );
    let mut expected = parse_version_mapping(&r.stdout)?;
    let (mv_level, mv_name) = expected
        .get("metadata.version")
        .cloned()
        .context("version-mapping printed no metadata.version")?;
    let mv_name = mv_name.context("version-mapping printed metadata.version without its name")?;
    // Kafka 4.4's version-mapping names the release (`metadata.version=33 (4.4)`), earlier
    // ones the level (`(4.1-IV1)`); describe prints the level's name, found from Kafka's number.
    let mv_name = if mv_name.contains("-IV") {
        mv_name
    } else {
        let level: i16 = mv_level
            .parse()
            .with_context(|| format!("metadata.version level {mv_level}"))?;
        kraftwerk_records::metadata_version::MetadataVersion::from_feature_level(level)
            .with_context(|| {
                format!("version-mapping printed metadata.version={mv_level} ({mv_name})")
            })?
            .name()
            .to_string()
    };
    expected.insert(
        "metadata.version".into(),
        (mv_level.clone(), Some(mv_name.clone())),
    );
    // Static voters (controller.quorum.voters): format writes kraft.version 0.
    expected.insert("kraft.version".into(), ("0".into(), None));
    let want: BTreeMap<String, String> = expected
        .into_iter()
        .map(|(k, (level, name))| (k, name.unwrap_or(level)))
        .collect();
    for (flag, boot) in [
        ("--bootstrap-controller", c.controller_bootstrap()),
        ("--bootstrap-server", c.broker_bootstrap()),
    ] {
        let r = env.tool_ok(
            "kafka-features",
            &args(&[flag, &boot, "describe"]),
            None,
            TOOL_TIMEOUT,
        )?;
        env.show(&format!("kafka-features {flag} {boot} describe"), &r.stdout);
        let got = parse_features_describe(&r.stdout)?;
        let wrong = feature_mismatches(&want, &got);
        if !wrong.is_empty() {
            bail!(
                "kafka-features {flag} describe does not show what kafka-storage format of Kafka {} writes at {rv}: {}",
                env.kafka().version,
                wrong.join("; ")
            );
        }
        if flag == "--bootstrap-controller" {
            let max = &got["metadata.version"].max;
            if !supports(max, &mv_name, &mv_level) {
                bail!("the controller's SupportedMaxVersion of metadata.version is {max}, below the finalized {mv_name}");
            }
        }
    }
    env.step(&format!(
        "finalized features through a controller and through the broker = Kafka {}'s defaults at {mv_name} (level {mv_level})",
        env.kafka().version
    ));
    let level = mv_level
        .parse()
        .with_context(|| format!("metadata.version level {mv_level}"))?;
    Ok(Mv {
        name: mv_name,
        level,
    })
}

/// Whether a SupportedMaxVersion `max` as the tool printed it covers the finalized `name` (feature
/// level `level`): a name at or above it, or `UNKNOWN <n>` (a level the tool's release does not
/// know, e.g. a 4.0 tool asking a controller that supports 4.1-IV1) with `n` above it.
fn supports(max: &str, name: &str, level: &str) -> bool {
    match max.strip_prefix("UNKNOWN ") {
        Some(n) => matches!((n.parse::<i64>(), level.parse::<i64>()), (Ok(n), Ok(l)) if n > l),
        None => mv_order(max) >= mv_order(name),
    }
}

/// `4.1-IV1` → `(4, 1, 1)`, for ordering metadata.version names (unparsable: `(0, 0, 0)`).
fn mv_order(name: &str) -> (u32, u32, u32) {
    let parse = || -> Option<(u32, u32, u32)> {
        let (rel, iv) = name.split_once("-IV")?;
        let (a, b) = rel.split_once('.')?;
        Some((a.parse().ok()?, b.parse().ok()?, iv.parse().ok()?))
    };
    parse().unwrap_or((0, 0, 0))
}

/// `version-mapping` lines `metadata.version=27 (4.1-IV1)`, `kraft.version=1`: feature →
/// (level, name in parentheses).
fn parse_version_mapping(text: &str) -> Result<BTreeMap<String, (String, Option<String>)>> {
    let mut out = BTreeMap::new();
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let (level, name) = match v.split_once(' ') {
            Some((lv, rest)) => (
                lv.to_string(),
                Some(
                    rest.trim()
                        .trim_start_matches('(')
                        .trim_end_matches(')')
                        .to_string(),
                ),
            ),
            None => (v.to_string(), None),
        };
        out.insert(k.trim().to_string(), (level, name));
    }
    if out.is_empty() {
        bail!(
            "no `feature=level` lines in version-mapping output: {}",
            util::one_line(text, 300)
        );
    }
    Ok(out)
}

/// One `kafka-features describe` line.
#[derive(Debug, PartialEq)]
struct Described {
    max: String,
    finalized: String,
}

/// `Feature: X\tSupportedMinVersion: a\tSupportedMaxVersion: b\tFinalizedVersionLevel: c\tEpoch: e`
/// lines (FeatureCommand.handleDescribe; 4.4 pads with spaces instead of tabs): feature → its
/// supported max and finalized level.
fn parse_features_describe(text: &str) -> Result<BTreeMap<String, Described>> {
    let mut out = BTreeMap::new();
    for l in text.lines().filter(|l| l.starts_with("Feature:")) {
        // 4.0–4.3 separate the fields by tabs, 4.4 pads them into columns with spaces: take
        // the whitespace-delimited token after `Name:`.
        let field = |name: &str| -> Result<String> {
            let key = format!("{name}:");
            let words: Vec<&str> = l.split_whitespace().collect();
            words
                .iter()
                .position(|w| *w == key)
                .and_then(|i| {
                    // A level the tool's release does not know prints as `UNKNOWN <level>`.
                    match (words.get(i + 1), words.get(i + 2)) {
                        (Some(&"UNKNOWN"), Some(n)) => Some(format!("UNKNOWN {n}")),
                        (v, _) => v.map(|v| v.to_string()),
                    }
                })
                .with_context(|| format!("no {name} in {l:?}"))
        };
        out.insert(
            field("Feature")?,
            Described {
                max: field("SupportedMaxVersion")?,
                finalized: field("FinalizedVersionLevel")?,
            },
        );
    }
    if !out.contains_key("metadata.version") {
        bail!(
            "kafka-features describe lists no metadata.version: {}",
            util::one_line(text, 300)
        );
    }
    Ok(out)
}

/// Differences between the expected finalized levels and a describe: a feature the describe
/// lacks counts as level 0 (FeatureCommand prints only the features the node supports), a
/// feature only the describe has must be at 0.
fn feature_mismatches(
    want: &BTreeMap<String, String>,
    got: &BTreeMap<String, Described>,
) -> Vec<String> {
    let mut out = Vec::new();
    let names: BTreeSet<&String> = want.keys().chain(got.keys()).collect();
    for n in names {
        let w = want.get(n).map_or("0", String::as_str);
        match got.get(n) {
            Some(d) if d.finalized == w => {}
            Some(d) => out.push(format!("{n} finalized {} (expected {w})", d.finalized)),
            None if w == "0" => {}
            None => out.push(format!("{n} not listed (expected finalized {w})")),
        }
    }
    out
}

/// Step 4: `kafka-topics --create`, `--list` and `--describe` of `topic` (through a controller
/// if the release's kafka-topics has `--bootstrap-controller`), recorded in `history` with the
/// leader's high watermark around it.
fn topics(
    env: &Env,
    c: &Cluster,
    history: &mut History,
    topic: &str,
    partitions: u32,
) -> Result<()> {
    let help = env.tool("kafka-topics", &args(&["--help"]), None, TOOL_TIMEOUT)?;
    let via_controller =
        format!("{}{}", help.stdout, help.stderr).contains("--bootstrap-controller");
    let (flag, boot) = if via_controller {
        ("--bootstrap-controller", c.controller_bootstrap())
    } else {
        ("--bootstrap-server", c.broker_bootstrap())
    };
    let (_, hw_before) = leader_of(c)?;
    let a = args(&[
        flag,
        &boot,
        "--create",
        "--topic",
        topic,
        "--partitions",
        &partitions.to_string(),
        "--replication-factor",
        "1",
    ]);
    let r = env.tool_ok("kafka-topics", &a, None, TOOL_TIMEOUT)?;
    if !r.stdout.contains(&format!("Created topic {topic}")) {
        bail!(
            "kafka-topics --create {topic}: {}",
            util::one_line(&r.stdout, 300)
        );
    }
    let (_, hw_after) = leader_of(c)?;
    history.ops.push(Op {
        topic: topic.to_string(),
        create: true,
        hw_before,
        hw_after,
    });
    let r = env.tool_ok(
        "kafka-topics",
        &args(&[flag, &boot, "--list"]),
        None,
        TOOL_TIMEOUT,
    )?;
    let listed: BTreeSet<String> = r
        .stdout
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("__"))
        .map(str::to_string)
        .collect();
    if listed != history.current() {
        bail!(
            "kafka-topics {flag} --list shows {listed:?}, expected {:?}",
            history.current()
        );
    }
    let (parts, raw) = c.describe_topic(&c.broker_bootstrap(), topic, TOOL_TIMEOUT)?;
    if parts.len() != partitions as usize || parts.iter().any(|p| p.leader != FIRST_BROKER_ID) {
        bail!(
            "{topic} should have {partitions} partitions led by broker {FIRST_BROKER_ID}: {}",
            util::one_line(&raw, 400)
        );
    }
    env.step(&format!(
        "kafka-topics {flag}: created {topic} ({partitions} partitions, offsets {hw_before}..{hw_after}), --list {listed:?}, \
         --describe: every partition led by broker {FIRST_BROKER_ID}{}",
        if via_controller { "" } else { " (this release's kafka-topics has no --bootstrap-controller)" }
    ));
    Ok(())
}

/// Waits until the leader has a snapshot whose end offset covers every operation so far;
/// returns the leader and that end offset.
fn wait_snapshot(env: &Env, c: &Cluster, history: &History) -> Result<(i32, i64)> {
    let need = history.ops.last().map_or(0, |o| o.hw_after);
    let t0 = Instant::now();
    let (leader, end) = util::wait_until(
        &format!("a snapshot at or above offset {need} on the leader"),
        Duration::from_secs(120),
        Duration::from_millis(500),
        || {
            let (leader, _) = leader_of(c)?;
            let dir = checks::partition_dir(&c.controllers[(leader - 1) as usize].data_dir());
            let snaps = checks::snapshots(&dir)?;
            Ok(snaps.last().filter(|s| s.0 >= need).map(|s| (leader, s.0)))
        },
    )?;
    env.step(&format!(
        "leader {leader} wrote snapshot ending at {end} ({} after the topic)",
        util::secs(t0.elapsed())
    ));
    Ok((leader, end))
}

/// Step 5, the log: controller 1's first segment read by `kafka-dump-log` and
/// `kafka-metadata-shell` (a copy, named as the original).
fn check_log(env: &Env, c: &Cluster, mv: &Mv) -> Result<()> {
    let node = &c.controllers[0];
    let seg = checks::partition_dir(&node.data_dir()).join("00000000000000000000.log");
    let dir = env.work.join("tool-copies").join("log-controller-1");
    std::fs::create_dir_all(&dir)?;
    let copy = dir.join("00000000000000000000.log");
    std::fs::copy(&seg, &copy).with_context(|| format!("copying {}", seg.display()))?;
    let path = copy.to_string_lossy().to_string();
    let r = env.tool_ok(
        "kafka-dump-log",
        &args(&["--cluster-metadata-decoder", "--files", &path]),
        None,
        TOOL_TIMEOUT,
    )?;
    let found = dump_log_findings(&r.stdout, &r.stderr)?;
    if found.mv_levels.is_empty() || found.mv_levels.iter().any(|l| *l != mv.level) {
        bail!(
            "kafka-dump-log of controller 1's log: metadata.version FeatureLevelRecords {:?}, expected [{}] ({})",
            found.mv_levels,
            mv.level,
            mv.name
        );
    }
    let want: BTreeSet<String> = [TOPIC_A, TOPIC_B].iter().map(|s| s.to_string()).collect();
    if found.topics != want {
        bail!(
            "kafka-dump-log of controller 1's log: TopicRecords {:?}, expected {want:?}",
            found.topics
        );
    }
    if !found.brokers.contains(&FIRST_BROKER_ID) {
        bail!("kafka-dump-log of controller 1's log: no RegisterBrokerRecord of broker {FIRST_BROKER_ID} ({:?})", found.brokers);
    }
    env.step(&format!(
        "kafka-dump-log --cluster-metadata-decoder of controller 1's log: {} batches all valid, metadata.version \
         level {} ({}), TopicRecords {:?}, RegisterBrokerRecord of {:?}",
        found.batches, mv.level, mv.name, found.topics, found.brokers
    ));
    let tree = checks::image_tree(env, Path::new(&copy))?;
    let shell: BTreeSet<String> = tree_children(&tree, &["topics", "byName"])
        .into_iter()
        .filter(|n| !n.starts_with("__"))
        .collect();
    if shell != want {
        bail!("kafka-metadata-shell of controller 1's log: /image/topics/byName {shell:?}, expected {want:?}");
    }
    env.step(&format!(
        "kafka-metadata-shell --snapshot <controller 1's log> tree /image: topics {shell:?}"
    ));
    Ok(())
}

/// What `kafka-dump-log --cluster-metadata-decoder` showed of a log segment.
#[derive(Debug, Default, PartialEq)]
struct DumpFindings {
    batches: usize,
    mv_levels: Vec<i64>,
    topics: BTreeSet<String>,
    brokers: BTreeSet<i32>,
}

/// Reads DumpLogSegments' output: errors on an invalid batch, a decode error or an exception;
/// collects the metadata.version FeatureLevelRecords, TopicRecord names and registered brokers.
fn dump_log_findings(out: &str, err: &str) -> Result<DumpFindings> {
    if out.contains("isvalid: false")
        || out.contains("Error at offset")
        || err.contains("Exception")
    {
        bail!(
            "kafka-dump-log found errors: {}",
            util::one_line(&format!("{err}\n{out}"), 600)
        );
    }
    let mut f = DumpFindings {
        batches: out.lines().filter(|l| l.starts_with("baseOffset:")).count(),
        ..Default::default()
    };
    let number_after = |l: &str, key: &str| -> Option<i64> {
        let i = l.find(key)? + key.len();
        let digits: String = l[i..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '-')
            .collect();
        digits.parse().ok()
    };
    for l in out.lines().filter(|l| l.starts_with("| offset:")) {
        if l.contains("\"type\":\"FEATURE_LEVEL_RECORD\"")
            && l.contains("\"name\":\"metadata.version\"")
        {
            f.mv_levels.extend(number_after(l, "\"featureLevel\":"));
        } else if l.contains("\"type\":\"TOPIC_RECORD\"") {
            if let Some(i) = l.find("\"name\":\"") {
                let name = l[i + 8..].split('"').next().unwrap_or_default();
                if !name.starts_with("__") {
                    f.topics.insert(name.to_string());
                }
            }
        } else if l.contains("\"type\":\"REGISTER_BROKER_RECORD\"") {
            f.brokers
                .extend(number_after(l, "\"brokerId\":").map(|b| b as i32));
        }
    }
    if f.batches == 0 {
        bail!(
            "kafka-dump-log printed no batch: {}",
            util::one_line(out, 300)
        );
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_mapping_and_describe_parse() {
        let vm = parse_version_mapping(
            "metadata.version=27 (4.1-IV1)\nkraft.version=1\nshare.version=0\n",
        )
        .unwrap();
        assert_eq!(
            vm["metadata.version"],
            ("27".into(), Some("4.1-IV1".into()))
        );
        assert_eq!(vm["kraft.version"], ("1".into(), None));
        let d = parse_features_describe(
            "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1\tEpoch: 9\n\
             Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.2-IV1\tFinalizedVersionLevel: 4.1-IV1\tEpoch: 9\n",
        )
        .unwrap();
        assert_eq!(
            d["metadata.version"],
            Described {
                max: "4.2-IV1".into(),
                finalized: "4.1-IV1".into()
            }
        );
        assert!(parse_features_describe(
            "Feature: group.version\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1\n"
        )
        .is_err());
        let padded = parse_features_describe(
            "Feature: metadata.version          SupportedMinVersion: 3.3-IV3          SupportedMaxVersion: 4.4-IV2          FinalizedVersionLevel: 4.1-IV1          Epoch: 66\n",
        )
        .unwrap();
        assert_eq!(padded["metadata.version"].max, "4.4-IV2");
        assert_eq!(padded["metadata.version"].finalized, "4.1-IV1");
        let unknown = parse_features_describe(
            "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: UNKNOWN 27\tFinalizedVersionLevel: 4.0-IV3\tEpoch: 70\n",
        )
        .unwrap();
        assert_eq!(unknown["metadata.version"].max, "UNKNOWN 27");
        assert!(supports("UNKNOWN 27", "4.0-IV3", "25"));
        assert!(!supports("UNKNOWN 5", "4.0-IV3", "25"));
        assert!(supports("4.1-IV1", "4.1-IV1", "27"));
        assert!(!supports("4.0-IV3", "4.1-IV1", "27"));
        assert!(mv_order("4.2-IV1") > mv_order("4.1-IV3"));
        assert!(mv_order("4.10-IV0") > mv_order("4.9-IV9"));
    }

    #[test]
    fn feature_mismatches_treat_unlisted_as_zero() {
        let want: BTreeMap<String, String> = [
            ("metadata.version", "4.1-IV1"),
            ("share.version", "0"),
            ("group.version", "1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let d = |f: &str| Described {
            max: "9".into(),
            finalized: f.into(),
        };
        let mut got = BTreeMap::new();
        got.insert("metadata.version".to_string(), d("4.1-IV1"));
        got.insert("group.version".to_string(), d("1"));
        assert!(feature_mismatches(&want, &got).is_empty());
        got.insert("streams.version".to_string(), d("1"));
        assert_eq!(
            feature_mismatches(&want, &got),
            vec!["streams.version finalized 1 (expected 0)"]
        );
        got.remove("streams.version");
        got.remove("group.version");
        assert_eq!(
            feature_mismatches(&want, &got),
            vec!["group.version not listed (expected finalized 1)"]
        );
    }

    #[test]
    fn dump_log_findings_collect_and_reject() {
        let out = "Dumping 00000000000000000000.log\n\
            baseOffset: 0 lastOffset: 2 count: 3 isvalid: true\n\
            | offset: 1 CreateTime: 1 payload: {\"type\":\"FEATURE_LEVEL_RECORD\",\"version\":0,\"data\":{\"name\":\"metadata.version\",\"featureLevel\":27}}\n\
            | offset: 2 CreateTime: 1 payload: {\"type\":\"FEATURE_LEVEL_RECORD\",\"version\":0,\"data\":{\"name\":\"group.version\",\"featureLevel\":1}}\n\
            baseOffset: 3 lastOffset: 4 count: 2 isvalid: true\n\
            | offset: 3 payload: {\"type\":\"REGISTER_BROKER_RECORD\",\"version\":3,\"data\":{\"brokerId\":101,\"isMigratingZkBroker\":false}}\n\
            | offset: 4 payload: {\"type\":\"TOPIC_RECORD\",\"version\":0,\"data\":{\"name\":\"tools-a\",\"topicId\":\"x\"}}\n";
        let f = dump_log_findings(out, "").unwrap();
        assert_eq!(f.batches, 2);
        assert_eq!(f.mv_levels, vec![27]);
        assert_eq!(
            f.topics.into_iter().collect::<Vec<_>>(),
            vec!["tools-a".to_string()]
        );
        assert!(f.brokers.contains(&101));
        assert!(dump_log_findings(&out.replace("isvalid: true", "isvalid: false"), "").is_err());
        assert!(dump_log_findings(out, "org.apache.kafka.common.KafkaException: boom").is_err());
        assert!(dump_log_findings("nothing\n", "").is_err());
    }
}
