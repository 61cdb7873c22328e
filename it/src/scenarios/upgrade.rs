//! `upgrade` and `upgrade-java` (issue 12): a rolling upgrade of Apache Kafka's brokers under
//! kraftwerk controllers, the way Kafka's upgrade guide describes it. Three kraftwerk
//! controllers and three brokers of `KAFKA_VERSION` (default 4.1.2), formatted at that
//! release's level; a topic with replication factor 3 and `min.insync.replicas=2`; an
//! idempotent acks=all producer (`kafka-verifiable-producer`) writing throughout. The brokers
//! are restarted one at a time (SIGTERM, controlled shutdown) on `IT_UPGRADE_TO`'s jars (default
//! 4.4.0) with the same `node.id`, properties and log directories; once all run the new release,
//! `kafka-features --bootstrap-controller … upgrade --release-version <new>` (the new release's
//! tool) finalizes that release's metadata.version and feature levels, and the levels
//! `kafka-features describe` then reports are the ones `kafka-features version-mapping` of the
//! new release names (`IT_UPGRADE_WITHOUT_KRAFT_VERSION=1`: every level but kraft.version, with
//! `--feature`, for a static quorum until issue 10). `upgrade-java` also replaces the controllers one at a time by Java
//! controllers of the new release half-way (after the second broker), on the same directories.
//!
//! Checked at every step: the stopped broker exited cleanly, came back unfenced, the topic's
//! ISR is whole again, the producer kept getting acknowledgements; at the end every
//! acknowledged message is read back and the controllers' logs are byte-identical below the
//! high watermark.

use anyhow::{bail, Context, Result};
use std::sync::Arc;
use std::time::Duration;

use super::mixed;
use super::rolling::{self, AckProducer};
use super::{checks, messages, produce};
use crate::cluster::Cluster;
use crate::env::{ControllerKind, Env};
use crate::kafka::{args, Kafka, Tools};
use crate::procs::{self, StopOutcome};
use crate::util;

const TOPIC: &str = "upgraded";

/// The release the brokers move to (`IT_UPGRADE_TO`, default 4.4.0).
fn target_release() -> String {
    std::env::var("IT_UPGRADE_TO")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "4.4.0".to_string())
}

/// `upgrade`: kraftwerk controllers throughout.
pub fn run(env: &Env) -> Result<()> {
    run_upgrade(env, false)
}

/// `upgrade-java`: the controllers are replaced by Java controllers of the new release after
/// the second broker was upgraded.
pub fn run_java(env: &Env) -> Result<()> {
    run_upgrade(env, true)
}

fn run_upgrade(env: &Env, java_halfway: bool) -> Result<()> {
    let to_version = target_release();
    if to_version == env.kafka().version {
        bail!(
            "IT_UPGRADE_TO ({to_version}) is the release the cluster starts on (KAFKA_VERSION); \
             nothing to upgrade"
        );
    }
    let to = Arc::new(Kafka::locate(
        &to_version,
        &env.work.join(format!("conf-{to_version}")),
    )?);
    let to_tools = Tools::new(
        Kafka::locate(&to_version, &env.work.join(format!("conf-{to_version}")))?,
        &env.work.join(format!("tools-{to_version}")),
        env.start,
    )?;
    let mut c = mixed::start_cluster(env, &[ControllerKind::Kraftwerk; 3], 3)?;
    let boot = c.broker_bootstrap();
    env.tool_ok(
        "kafka-topics",
        &args(&[
            "--bootstrap-server",
            &boot,
            "--create",
            "--topic",
            TOPIC,
            "--partitions",
            "3",
            "--replication-factor",
            "3",
            "--config",
            "min.insync.replicas=2",
        ]),
        None,
        Duration::from_secs(90),
    )?;
    let before = finalized_metadata_version(env, &env.tools, &c)?;
    env.step(&format!(
        "start: brokers on Kafka {}, metadata.version {before}",
        env.kafka().version
    ));
    let mut producer = AckProducer::start(env, &boot, TOPIC)?;
    producer.wait_acks_beyond(env, 0, Duration::from_secs(60))?;

    let brokers: Vec<i32> = c.brokers.iter().map(|b| b.id).collect();
    let mut writers = checks::SnapshotWriters::new();
    for (i, &b) in brokers.iter().enumerate() {
        upgrade_broker(env, &mut c, b, &to)?;
        wait_isr_whole(env, &c, &boot, 3, Duration::from_secs(120))?;
        producer.check_alive()?;
        let acked = producer.acked()?.acked.len();
        producer.wait_acks_beyond(env, acked, Duration::from_secs(60))?;
        if java_halfway && i == 1 {
            for id in c.controllers.iter().map(|n| n.id).collect::<Vec<_>>() {
                c.set_kafka_release(id, Arc::clone(&to))?;
                rolling::replace(env, &mut c, id, ControllerKind::Java, &mut writers)?;
                producer.check_alive()?;
                let acked = producer.acked()?.acked.len();
                producer.wait_acks_beyond(env, acked, Duration::from_secs(60))?;
                checks::assert_healthy(&mut c)?;
            }
        }
    }
    env.step(&format!("every broker runs Kafka {to_version}"));

    let release = to.minor_version();
    let mapping = version_mapping(env, &to_tools, &release)?;
    let expected = mv_level(&mapping)
        .with_context(|| format!("no metadata.version in version-mapping {mapping:?}"))?;
    let mut upgrade = args(&[
        "--bootstrap-controller",
        &c.controller_bootstrap(),
        "upgrade",
    ]);
    let how = if without_kraft_version() {
        // Every feature level version-mapping names except kraft.version (a static quorum
        // moving to kraft.version 1 is issue 10), as `--feature name=level`.
        for (name, level) in &mapping {
            if name != "kraft.version" {
                upgrade.extend(args(&["--feature", &format!("{name}={level}")]));
            }
        }
        "its features but kraft.version, one by one".to_string()
    } else {
        upgrade.extend(args(&["--release-version", &release]));
        format!("--release-version {release}")
    };
    let r = to_tools.run("kafka-features", &upgrade, None, Duration::from_secs(60))?;
    env.show(
        &format!("kafka-features upgrade ({how})"),
        &format!("{}{}", r.stdout, r.stderr),
    );
    if !r.ok() {
        bail!(
            "kafka-features upgrade ({how}) failed: {}",
            util::one_line(&format!("{}{}", r.stdout, r.stderr), 600)
        );
    }
    // `describe` names the level (4.4-IV2), version-mapping the release (`33 (4.4)`): wait for
    // the finalized level to move, then compare its number and every other feature's level.
    let after = util::wait_until(
        &format!("metadata.version {before} to be upgraded"),
        Duration::from_secs(60),
        Duration::from_millis(500),
        || {
            let v = finalized_metadata_version(env, &to_tools, &c)?;
            Ok((v != before).then_some(v))
        },
    )?;
    let after_level = mv_level(&version_mapping(env, &to_tools, &after)?);
    if after_level.as_deref() != Some(expected.as_str()) {
        bail!("metadata.version {after} (level {after_level:?}) finalized; version-mapping of {release} names level {expected}");
    }
    let described = to_tools.run_ok(
        "kafka-features",
        &args(&[
            "--bootstrap-controller",
            &c.controller_bootstrap(),
            "describe",
        ]),
        None,
        Duration::from_secs(60),
    )?;
    for (name, level) in &mapping {
        if name == "metadata.version" || (name == "kraft.version" && without_kraft_version()) {
            continue;
        }
        let finalized = parse_finalized(&described.stdout, name);
        if finalized.as_deref() != Some(level.as_str()) {
            bail!("{name}: finalized {finalized:?} after the upgrade, version-mapping of {release} names {level}");
        }
    }
    env.step(&format!(
        "metadata.version {before} → {after} (level {expected}); every other feature at the level version-mapping names"
    ));
    // Admin writes and a fresh producer at the new level.
    let sent = messages("after-upgrade", 200);
    produce(
        env,
        &boot,
        TOPIC,
        &sent,
        &["--producer-property", "acks=all"],
    )?;
    let acked = producer.acked()?.acked.len();
    producer.wait_acks_beyond(env, acked, Duration::from_secs(60))?;
    let acks = producer.stop(env)?;
    let got = rolling::consume_all(env, &boot, TOPIC)?;
    rolling::assert_acked_read_back(env, &acks, &got, &sent)?;
    println!("metadata_version_before={before}");
    println!("metadata_version_after={after}");
    let hw = checks::wait_converged(env, &c, Duration::from_secs(90))?;
    checks::assert_logs_agree(env, &c, hw)?;
    checks::assert_healthy(&mut c)?;
    mixed::report_kraftwerk_errors(env, &c);
    c.stop_all(Duration::from_secs(60), Duration::from_secs(40))?;
    Ok(())
}

/// SIGTERM broker `id` (it must exit cleanly after its controlled shutdown), then start it on
/// `to`'s jars and wait until it is unfenced and serving.
fn upgrade_broker(env: &Env, c: &mut Cluster, id: i32, to: &Arc<Kafka>) -> Result<()> {
    let label = c.node(id)?.label();
    match c.stop(id, Duration::from_secs(60))? {
        StopOutcome::Terminated(s, d) => env.step(&format!(
            "{label} exited {} after SIGTERM ({})",
            util::secs(d),
            procs::describe_status(&s)
        )),
        other => bail!("{label} did not stop gracefully after SIGTERM: {other:?}"),
    }
    c.set_kafka_release(id, Arc::clone(to))?;
    c.start(id)?;
    c.wait_broker_ready(id, Duration::from_secs(150))?;
    env.step(&format!("{label} now runs Kafka {}", to.version));
    Ok(())
}

/// Waits until every partition of the topic has `rf` in-sync replicas again.
fn wait_isr_whole(env: &Env, c: &Cluster, boot: &str, rf: usize, timeout: Duration) -> Result<()> {
    let start = std::time::Instant::now();
    util::wait_until(
        &format!("every partition of {TOPIC} to have {rf} in-sync replicas"),
        timeout,
        Duration::from_millis(500),
        || {
            let (parts, _) = c.describe_topic(boot, TOPIC, Duration::from_secs(30))?;
            Ok((!parts.is_empty() && parts.iter().all(|p| p.isr.len() == rf)).then_some(()))
        },
    )?;
    env.step(&format!(
        "{TOPIC}: ISR whole again after {}",
        util::secs(start.elapsed())
    ));
    Ok(())
}

/// `metadata.version`'s `FinalizedVersionLevel` as `kafka-features describe` (of `tools`)
/// prints it through the controllers.
fn finalized_metadata_version(env: &Env, tools: &Tools, c: &Cluster) -> Result<String> {
    let r = tools.run_ok(
        "kafka-features",
        &args(&[
            "--bootstrap-controller",
            &c.controller_bootstrap(),
            "describe",
        ]),
        None,
        Duration::from_secs(60),
    )?;
    let level = parse_finalized(&r.stdout, "metadata.version")
        .with_context(|| format!("no finalized metadata.version in {:?}", r.stdout))?;
    if level.is_empty() {
        env.show("kafka-features describe", &r.stdout);
    }
    Ok(level)
}

/// `kafka-features version-mapping --release-version R` of the new release: every
/// `(feature, level)` it names (its own table, so nothing here hard-codes a level).
fn version_mapping(env: &Env, tools: &Tools, release: &str) -> Result<Vec<(String, String)>> {
    let r = tools.run_ok(
        "kafka-features",
        &args(&["version-mapping", "--release-version", release]),
        None,
        Duration::from_secs(60),
    )?;
    env.show(
        &format!("kafka-features version-mapping --release-version {release}"),
        &r.stdout,
    );
    Ok(feature_levels(&r.stdout))
}

/// The metadata.version level number of a version mapping.
fn mv_level(mapping: &[(String, String)]) -> Option<String> {
    mapping
        .iter()
        .find(|(name, _)| name == "metadata.version")
        .map(|(_, level)| level.clone())
}

/// From `kafka-features describe` output, the finalized level of `feature`. The fields are
/// `Feature: X  SupportedMinVersion: a  SupportedMaxVersion: b  FinalizedVersionLevel: c
/// Epoch: e`, separated by tabs up to 4.3 and padded into columns with spaces by 4.4, so the
/// value is the whitespace-delimited word after its label.
pub(super) fn parse_finalized(out: &str, feature: &str) -> Option<String> {
    out.lines().find_map(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        let value = |label: &str| {
            let i = words.iter().position(|w| *w == label)?;
            words.get(i + 1).copied()
        };
        (value("Feature:") == Some(feature))
            .then(|| value("FinalizedVersionLevel:").map(str::to_string))
            .flatten()
    })
}

/// `IT_UPGRADE_WITHOUT_KRAFT_VERSION=1`: finalize every level of the new release but
/// kraft.version (a static quorum cannot move to kraft.version 1 until issue 10).
fn without_kraft_version() -> bool {
    std::env::var("IT_UPGRADE_WITHOUT_KRAFT_VERSION").is_ok_and(|v| v == "1")
}

/// From `kafka-features version-mapping` output, every `name=level` (the level number; the
/// metadata.version line is `metadata.version=33 (4.4-IV2)`).
fn feature_levels(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| {
            let (name, rest) = l.trim().split_once('=')?;
            let level = rest.split_whitespace().next()?;
            level
                .parse::<i16>()
                .is_ok()
                .then(|| (name.to_string(), level.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finalized_level_is_read_from_describe_output() {
        let out = "Feature: eligible.leader.replicas.version\tSupportedMinVersion: 0\t\
                   SupportedMaxVersion: 1\tFinalizedVersionLevel: 0\tEpoch: 30\n\
                   Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\t\
                   SupportedMaxVersion: 4.1-IV1\tFinalizedVersionLevel: 4.1-IV1\tEpoch: 30\n";
        assert_eq!(
            parse_finalized(out, "metadata.version").as_deref(),
            Some("4.1-IV1")
        );
        assert_eq!(parse_finalized(out, "group.version"), None);
        assert_eq!(
            parse_finalized(out, "eligible.leader.replicas.version").as_deref(),
            Some("0")
        );
        let padded = "Feature: metadata.version          SupportedMinVersion: 3.3-IV3          \
                      SupportedMaxVersion: 4.4-IV2          FinalizedVersionLevel: 4.1-IV1          \
                      Epoch: 66\n";
        assert_eq!(
            parse_finalized(padded, "metadata.version").as_deref(),
            Some("4.1-IV1")
        );
    }

    #[test]
    fn version_mapping_names_the_levels() {
        let out = "metadata.version=33 (4.4)\ngroup.version=1\nkraft.version=1\n";
        assert_eq!(mv_level(&feature_levels(out)).as_deref(), Some("33"));
        assert_eq!(mv_level(&feature_levels("group.version=1\n")), None);
        assert_eq!(
            feature_levels(out),
            vec![
                ("metadata.version".to_string(), "33".to_string()),
                ("group.version".to_string(), "1".to_string()),
                ("kraft.version".to_string(), "1".to_string()),
            ]
        );
    }
}
