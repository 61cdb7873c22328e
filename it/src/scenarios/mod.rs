//! The scenarios and the client-side steps they share (produce, consume, compare, create
//! topics, measure a controller failover).

use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::cluster::{write_messages, Cluster};
use crate::env::Env;
use crate::kafka::args;
use crate::parse::QuorumStatus;
use crate::util;

pub mod acls;
pub mod admin;
pub mod chaos;
pub mod checks;
pub mod demo;
pub mod dynamic;
pub mod e2e;
pub mod failover;
pub mod hostile;
pub mod metrics;
pub mod mixed;
pub mod mixes;
pub mod rf3;
pub mod rolling;
pub mod sasl_probe;
pub mod secure;
pub mod snapshot;
pub mod tls;
pub mod tokens;
pub mod tools;
pub mod upgrade;

/// A runnable scenario.
pub struct Scenario {
    /// Name used on the command line and in the result line.
    pub name: &'static str,
    /// One-line description for `--list`.
    pub about: &'static str,
    /// Overall deadline (the watchdog fails the run after it; `IT_DEADLINE_S` overrides).
    pub deadline: Duration,
    /// The body.
    pub run: fn(&Env) -> Result<()>,
}

/// Every scenario, in `--list` order.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "e2e",
        about: "3 controllers + 1 broker: quorum status, topic, 1000 messages each way, kill the active controller \
                (failover_ms), broker keeps serving, restarted controller catches up",
        deadline: Duration::from_secs(480),
        run: e2e::run,
    },
    Scenario {
        name: "metrics",
        about: "/metrics of 3 kraftwerk controllers under the Kafka (JMX exporter) names Strimzi reads: one active \
                controller that is the Raft leader, one epoch, broker counts; SIGKILL the active controller (the \
                count moves, the epoch rises), SIGKILL a broker (fenced broker count 1 after its session)",
        deadline: Duration::from_secs(300),
        run: metrics::run,
    },
    Scenario {
        name: "tls",
        about: "the controller listener on SSL with mutual TLS (CA, PKCS12 key stores and trust store made by \
                openssl/keytool at run time): 3 controllers dialling each other over TLS, a broker on an SSL \
                controller channel registers, records each way, kafka-metadata-quorum over SSL; a plaintext \
                ApiVersions, a client without a certificate and a self-signed one are refused",
        deadline: Duration::from_secs(480),
        run: tls::run,
    },
    Scenario {
        name: "acls",
        about: "StandardAuthorizer on the controllers and the broker over mutual TLS: the quorum and the broker \
                work as super users; alice cannot create ACLs and is refused by the controllers until kafka-acls \
                --bootstrap-controller grants ALTER on the cluster, and again after --remove; an anonymous client creates a \
                topic through the broker only under a prefixed ACL, then produces and consumes; kafka-acls \
                --list through a controller and through the broker agree",
        deadline: Duration::from_secs(480),
        run: acls::run,
    },
    Scenario {
        name: "secure",
        about: "3 controllers on SASL_SSL with mutual TLS (PLAIN between them), 2 brokers on SCRAM-SHA-512 from \
                format --add-scram, StandardAuthorizer on controllers and brokers: admin's kafka-acls through a \
                broker allows anonymous topics by prefix, records each way on a replicated topic, other topics \
                refused (TOPIC_AUTHORIZATION_FAILED) and again after --remove; wrong PLAIN/SCRAM passwords and \
                untrusted certificates refused, no-SASL DescribeCluster and BrokerRegistration disconnected \
                unanswered; alice's credential from kafka-configs, then CLUSTER_AUTHORIZATION_FAILED; SIGKILL \
                failover, the killed controller rejoins",
        deadline: Duration::from_secs(600),
        run: secure::run,
    },
    Scenario {
        name: "secure-mixed",
        about: "secure once per mix of IT_SECURE_MIXES (default 1 Java + 2 kraftwerk, then 2 Java + 1 kraftwerk \
                controllers)",
        deadline: Duration::from_secs(1200),
        run: secure::run_mixed,
    },
    Scenario {
        name: "hostile",
        about: "3 controllers + 1 broker: hostile requests to the active controller (BrokerRegistration with a \
                40,000-byte listener host or a record over 8 MiB, CreateTopics with i32::MAX partitions or a 40 KB \
                config value, CreatePartitions count i32::MAX) are refused; no controller exits, the leadership \
                stays, the next kafka-topics --create and 100 messages each way work",
        deadline: Duration::from_secs(300),
        run: hostile::run,
    },
    Scenario {
        name: "e2e-rf3",
        about: "3 controllers + 3 brokers, RF 3 / min.insync.replicas 2: kill a partition leader broker, ISR shrinks by \
                AlterPartition, leaders move, acks=all keeps working, restarted broker rejoins the ISR; then an \
                operator's admin session: partition reassignment, broker configs on a controller, client quota, \
                SCRAM credential",
        deadline: Duration::from_secs(900),
        run: rf3::run,
    },
    Scenario {
        name: "snapshot-catchup",
        about: "3 controllers with tiny snapshot/segment/retention settings, 3 brokers: an empty broker and one down \
                across two snapshots catch up through FetchSnapshot, a restarted controller loads its snapshot and \
                replays the tail, kafka-metadata-shell and kafka-dump-log read the .checkpoint files",
        deadline: Duration::from_secs(600),
        run: snapshot::run,
    },
    Scenario {
        name: "mixed-1rust-2java",
        about: "1 kraftwerk + 2 Java controllers, 2 brokers: leadership forced onto every controller by SIGTERM \
                (EndQuorumEpoch) and by SIGKILL; admin writes, produce and consume after each hand-off; no Java \
                fault, logs byte-identical, kafka-metadata-shell images equal",
        deadline: Duration::from_secs(1500),
        run: mixed::run_1rust_2java,
    },
    Scenario {
        name: "mixed-2rust-1java",
        about: "2 kraftwerk + 1 Java controllers, 2 brokers: as mixed-1rust-2java",
        deadline: Duration::from_secs(1500),
        run: mixed::run_2rust_1java,
    },
    Scenario {
        name: "rolling-replace",
        about: "3 Java controllers (kafka-storage format) replaced one at a time by kraftwerk on the same node.id and \
                metadata.log.dir, then back to Java (and once more kraftwerk -> Java on a directory Java wrote to); \
                an acks=all producer runs throughout and every acknowledged message is read back",
        deadline: Duration::from_secs(1500),
        run: rolling::run,
    },
    Scenario {
        name: "interchange",
        about: "directory interchange, the mirror of rolling-replace: 3 kraftwerk controllers formatted by `kraftwerk \
                format` replaced one at a time by Java (meta.properties, bootstrap.checkpoint, quorum-state, segments, \
                snapshots written by kraftwerk), then back (stale kraftwerk indexes); acked writes all read back",
        deadline: Duration::from_secs(1500),
        run: rolling::run_interchange,
    },
    Scenario {
        name: "tools",
        about: "3 kraftwerk controllers + 1 broker, asserted through the release's own CLI tools: \
                kafka-metadata-quorum describe --status/--replication (leader, voters, lag 0), kafka-cluster \
                cluster-id, kafka-features describe = version-mapping at the formatted level (controller and \
                broker), kafka-topics, kafka-configs --bootstrap-controller, kafka-metadata-shell and kafka-dump-log \
                on kraftwerk's snapshot and log",
        deadline: Duration::from_secs(420),
        run: tools::run,
    },
    Scenario {
        name: "upgrade",
        about: "rolling upgrade under 3 kraftwerk controllers: 3 brokers of KAFKA_VERSION (default 4.1.2) restarted \
                one at a time on IT_UPGRADE_TO (default 4.4.0), then kafka-features upgrade --release-version <new> \
                finalizes the level version-mapping names; an acks=all producer throughout, every ack read back",
        deadline: Duration::from_secs(1500),
        run: upgrade::run,
    },
    Scenario {
        name: "upgrade-java",
        about: "as upgrade, with the controllers replaced one at a time by Java controllers of the new release after \
                the second broker (same node.id and directories)",
        deadline: Duration::from_secs(1800),
        run: upgrade::run_java,
    },
    Scenario {
        name: "dynamic-quickstart",
        about: "Kafka's documented dynamic quorum (KIP-853): controller 1 formatted --standalone, 2 and 3 \
                --no-initial-controllers and added with kafka-metadata-quorum add-controller; describe --status / \
                --replication show 3 voters with their directory ids; a broker with only \
                controller.quorum.bootstrap.servers; SIGKILL the active controller, the broker follows the new \
                leader; remove-controller; every ack read back (IT_CONTROLLERS: the three kinds)",
        deadline: Duration::from_secs(900),
        run: dynamic::run_quickstart,
    },
    Scenario {
        name: "static-to-dynamic",
        about: "a static quorum (controller.quorum.voters, kraft.version 0) upgraded with kafka-features \
                --bootstrap-controller upgrade --feature kraft.version=1, a fourth controller added and one removed, \
                then the active controller SIGKILLed; every ack read back (IT_CONTROLLERS: up to four kinds)",
        deadline: Duration::from_secs(900),
        run: dynamic::run_static_to_dynamic,
    },
    Scenario {
        name: "disk-replace",
        about: "a dynamic quorum voter's disk wiped and formatted again with --no-initial-controllers (new \
                directory id): it fetches as an observer, is removed by its old directory id and added with the \
                new one; the high watermark never goes back, every ack read back, logs identical",
        deadline: Duration::from_secs(900),
        run: dynamic::run_disk_replace,
    },
    Scenario {
        name: "auto-join",
        about: "Kafka 4.2+ controller.quorum.auto.join.enable: controller 1 formatted --standalone, 2 and 3 \
                --no-initial-controllers join the voter set by themselves (no add-controller); a voter's disk \
                replaced (new directory id) rejoins by itself, removing its old key first; SIGKILL the active \
                controller; every ack read back (IT_CONTROLLERS: the three kinds; Java controllers need 4.2+)",
        deadline: Duration::from_secs(900),
        run: dynamic::run_auto_join,
    },
    Scenario {
        name: "dynamic-mixed",
        about: "dynamic quorums of each IT_DYNAMIC_MIXES mix (default kraftwerk,kraftwerk,java;kraftwerk,java,java): \
                leadership onto every voter, one controller of each kind added and one original of each kind \
                removed, brokers restarted one at a time with the final voters as controller.quorum.bootstrap.servers, \
                leadership onto every final voter; traffic after each change, logs byte-identical",
        deadline: Duration::from_secs(3000),
        run: dynamic::run_mixed,
    },
    Scenario {
        name: "chaos",
        about: "faults at random (seeded: IT_CHAOS_SEED) against 3 controllers in network namespaces + 3 brokers under \
                an acks=all producer, a consumer and a metadata workload: SIGKILL/SIGTERM (restart, page cache \
                dropped or not), SIGSTOP/SIGCONT and network partitions of the active or a random controller; acked \
                metadata visible, lost = 0, logs identical, one leader per epoch, no broker fenced; --long: 5 \
                controllers, 100 faults",
        deadline: Duration::from_secs(1200),
        run: chaos::run,
    },
    Scenario {
        name: "failover",
        about: "e2e's failover part alone (3 controllers + 1 broker, SIGKILL the active controller, time to the next \
                successful topic creation); used by scripts/measure-failover",
        deadline: Duration::from_secs(300),
        run: failover::run,
    },
    Scenario {
        name: "bench-failover",
        about: "benchmark, not a test (scripts/bench-failover): one system (BENCH_SYSTEM) at one metadata size \
                (BENCH_PARTITIONS): controlled/uncontrolled failover, restart catch-up, snapshot size, peak RSS",
        deadline: Duration::from_secs(4 * 3600),
        run: crate::bench::run,
    },
    Scenario {
        name: "demo",
        about: "interactive: 3 controllers + 1 broker, a topic and a few messages, then stays up until Ctrl-C",
        deadline: Duration::MAX,
        run: demo::run,
    },
];

/// `n` distinct messages `<prefix>-<i>-<run tag>` (the tag keeps runs apart in shared dirs).
pub fn messages(prefix: &str, n: usize) -> Vec<String> {
    let tag = util::base64url(&util::random_bytes(6).unwrap_or_default());
    (0..n).map(|i| format!("{prefix}-{i:05}-{tag}")).collect()
}

/// `kafka-topics --create`; returns how long the tool took.
pub fn create_topic(
    env: &Env,
    bootstrap: &str,
    topic: &str,
    partitions: u32,
    rf: u32,
    configs: &[&str],
) -> Result<Duration> {
    let mut a = args(&[
        "--bootstrap-server",
        bootstrap,
        "--create",
        "--topic",
        topic,
        "--partitions",
        &partitions.to_string(),
        "--replication-factor",
        &rf.to_string(),
    ]);
    for c in configs {
        a.push("--config".into());
        a.push(c.to_string());
    }
    let r = env.tool_ok("kafka-topics", &a, None, Duration::from_secs(90))?;
    if !r.stdout.contains(&format!("Created topic {topic}")) {
        bail!(
            "kafka-topics --create {topic} exited 0 but did not print `Created topic {topic}.`: {}",
            util::one_line(&r.stdout, 300)
        );
    }
    env.step(&format!(
        "created topic {topic} ({partitions} partitions, RF {rf}) in {}",
        util::secs(r.elapsed)
    ));
    Ok(r.elapsed)
}

/// Produces `msgs` with `kafka-console-producer` (defaults: acks=all, idempotence on), plus
/// `extra` arguments. Asserts exit 0 and that the producer was given a producer id (its
/// TransactionManager logs `ProducerId set to`), which needs AllocateProducerIds at the
/// controller.
pub fn produce(
    env: &Env,
    bootstrap: &str,
    topic: &str,
    msgs: &[String],
    extra: &[&str],
) -> Result<()> {
    let file = env
        .work
        .join(format!("produce-{topic}-{}.txt", util::unix_ms()));
    write_messages(&file, msgs)?;
    let mut a = args(&["--bootstrap-server", bootstrap, "--topic", topic]);
    a.extend(extra.iter().map(|s| s.to_string()));
    let r = env.tool_ok(
        "kafka-console-producer",
        &a,
        Some(&file),
        Duration::from_secs(180),
    )?;
    if r.stderr.contains("ERROR") {
        bail!(
            "kafka-console-producer reported errors: {}",
            util::one_line(&r.stderr, 600)
        );
    }
    if !r.stderr.contains("ProducerId set to") {
        bail!(
            "the idempotent producer never logged `ProducerId set to` (no producer id from the broker/controller): {}",
            util::one_line(&r.stderr, 400)
        );
    }
    env.step(&format!(
        "produced {} messages to {topic} in {} (idempotent producer got a producer id)",
        msgs.len(),
        util::secs(r.elapsed)
    ));
    Ok(())
}

/// Consumes exactly `n` messages from the beginning of `topic` with consumer group `group`.
pub fn consume(
    env: &Env,
    bootstrap: &str,
    topic: &str,
    group: &str,
    n: usize,
) -> Result<Vec<String>> {
    let a = args(&[
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--group",
        group,
        "--from-beginning",
        "--max-messages",
        &n.to_string(),
        "--timeout-ms",
        "60000",
    ]);
    let r = env.tool("kafka-console-consumer", &a, None, Duration::from_secs(150))?;
    let got: Vec<String> = r.stdout.lines().map(str::to_string).collect();
    if !r.ok() && got.len() < n {
        bail!(
            "kafka-console-consumer got {} of {n} messages from {topic} (exit {:?}): {}",
            got.len(),
            r.code,
            util::one_line(&r.stderr, 400)
        );
    }
    env.step(&format!(
        "consumed {} messages from {topic} as group {group} in {}",
        got.len(),
        util::secs(r.elapsed)
    ));
    Ok(got)
}

/// Asserts that `got` holds exactly the messages `sent`: same count, no duplicates, nothing
/// missing, nothing foreign. The error gives counts and a few examples.
pub fn assert_same_messages(what: &str, sent: &[String], got: &[String]) -> Result<()> {
    let s: BTreeSet<&String> = sent.iter().collect();
    let g: BTreeSet<&String> = got.iter().collect();
    let missing: Vec<_> = s.difference(&g).take(3).collect();
    let extra: Vec<_> = g.difference(&s).take(3).collect();
    if got.len() != sent.len() || !missing.is_empty() || !extra.is_empty() {
        bail!(
            "{what}: sent {} distinct messages, read back {} ({} distinct); missing e.g. {:?}, unexpected e.g. {:?}",
            s.len(),
            got.len(),
            g.len(),
            missing,
            extra
        );
    }
    Ok(())
}

/// Checks what a user expects from `describe --status` of a healthy quorum: the cluster id
/// we formatted with, every controller as a voter, a leader among them, epoch ≥ 1, and the
/// given brokers as observers.
pub fn assert_quorum_status(s: &QuorumStatus, cluster: &Cluster, brokers: &[i32]) -> Result<()> {
    if s.cluster_id != cluster.cluster_id {
        bail!(
            "describe --status shows ClusterId {} but the nodes were formatted with {}",
            s.cluster_id,
            cluster.cluster_id
        );
    }
    let mut want: Vec<i32> = cluster.controllers.iter().map(|c| c.id).collect();
    let mut have = s.voters.clone();
    want.sort_unstable();
    have.sort_unstable();
    if want != have {
        bail!("describe --status shows voters {have:?}, expected {want:?}");
    }
    if !want.contains(&s.leader_id) {
        bail!(
            "describe --status shows LeaderId {} which is not a voter",
            s.leader_id
        );
    }
    if s.leader_epoch < 1 {
        bail!(
            "describe --status shows LeaderEpoch {} (expected ≥ 1)",
            s.leader_epoch
        );
    }
    if s.high_watermark < 1 {
        bail!(
            "describe --status shows HighWatermark {} (expected > 0 after bootstrap records)",
            s.high_watermark
        );
    }
    for b in brokers {
        if !s.observers.contains(b) {
            bail!(
                "describe --status does not list broker {b} among observers {:?}",
                s.observers
            );
        }
    }
    Ok(())
}

/// What [`kill_leader_and_measure`] saw.
pub struct Failover {
    /// The controller that was SIGKILLed.
    pub old_leader: i32,
    /// Its epoch.
    pub old_epoch: i64,
    /// SIGKILL → first successful `kafka-topics --create` exit (ms).
    pub failover_ms: u64,
    /// SIGKILL → first `describe --status` (at the survivors) showing a new leader (ms); this is
    /// an upper bound, sampled with JVM-startup granularity.
    pub leader_ms: u64,
    /// The new leader status.
    pub new_status: QuorumStatus,
    /// How many `kafka-topics --create` runs it took.
    pub create_attempts: u32,
}

/// SIGKILLs the active controller and measures: time to the first successful
/// `kafka-topics --create` of `topic` (the tool is started right after the kill and rerun
/// until it succeeds; a run that times out although the topic got created counts when the
/// next one says "already exists"), and, in parallel, time until the surviving controllers
/// report another leader with a higher epoch. Errors if either takes longer than 60 s.
pub fn kill_leader_and_measure(
    env: &Env,
    c: &mut Cluster,
    topic: &str,
    partitions: u32,
) -> Result<Failover> {
    let (before, _) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    let old_leader = before.leader_id;
    let old_epoch = before.leader_epoch;
    let survivors = c.controller_bootstrap_except(old_leader);
    let boot = c.broker_bootstrap();
    env.step(&format!(
        "SIGKILL active controller {old_leader} (epoch {old_epoch})"
    ));
    c.kill(old_leader)?;
    let t0 = Instant::now();
    let limit = Duration::from_secs(60);
    let cref: &Cluster = c;
    let (created, leader) = std::thread::scope(|s| {
        let leader_thread = s.spawn(|| -> Result<(u64, QuorumStatus)> {
            util::wait_until(
                "a new controller leader",
                limit,
                Duration::from_millis(100),
                || {
                    let (st, _) = cref.describe_status_fast(&survivors)?;
                    Ok((st.leader_id != old_leader
                        && st.leader_id >= 0
                        && st.leader_epoch > old_epoch)
                        .then(|| (t0.elapsed().as_millis() as u64, st)))
                },
            )
        });
        let mut attempts = 0u32;
        let created = loop {
            attempts += 1;
            let a = args(&[
                "--bootstrap-server",
                &boot,
                "--create",
                "--topic",
                topic,
                "--partitions",
                &partitions.to_string(),
                "--replication-factor",
                "1",
            ]);
            let r = env.tool("kafka-topics", &a, None, Duration::from_secs(90));
            match r {
                Ok(r)
                    if r.ok()
                        || r.stderr.contains("already exists")
                        || r.stdout.contains("already exists") =>
                {
                    break Ok((t0.elapsed().as_millis() as u64, attempts));
                }
                Ok(_) if t0.elapsed() < limit => continue,
                Ok(r) => {
                    break Err(anyhow::anyhow!(
                        "no successful topic creation within {}s: {}",
                        limit.as_secs(),
                        util::one_line(&r.stderr, 300)
                    ))
                }
                Err(e) => break Err(e),
            }
        };
        (
            created,
            leader_thread
                .join()
                .unwrap_or_else(|_| bail!("leader poll thread panicked")),
        )
    });
    let (failover_ms, create_attempts) =
        created.context("creating a topic after the controller failover")?;
    let (leader_ms, new_status) = leader.context("waiting for a new controller leader")?;
    env.step(&format!(
        "failover: topic {topic} created {failover_ms} ms after SIGKILL ({create_attempts} attempt(s)); \
         controller {} leads epoch {} (seen {leader_ms} ms after SIGKILL)",
        new_status.leader_id, new_status.leader_epoch
    ));
    Ok(Failover {
        old_leader,
        old_epoch,
        failover_ms,
        leader_ms,
        new_status,
        create_attempts,
    })
}

/// Polls `describe --replication` at the leader until `node`'s LogEndOffset reaches `target`.
/// Returns the final table.
pub fn wait_caught_up(
    env: &Env,
    c: &Cluster,
    node: i32,
    target: i64,
    timeout: Duration,
) -> Result<String> {
    let boot = c.controller_bootstrap();
    let start = Instant::now();
    let raw = util::wait_until(
        &format!("controller {node} to reach LogEndOffset {target}"),
        timeout,
        Duration::from_millis(500),
        || {
            let (rows, raw) = c.describe_replication(&boot, Duration::from_secs(30))?;
            let row = rows
                .iter()
                .find(|r| r.node_id == node)
                .with_context(|| format!("node {node} not in describe --replication"))?;
            if row.log_end_offset >= target {
                Ok(Some(raw))
            } else {
                bail!(
                    "node {node} at LogEndOffset {} (lag {}), target {target}",
                    row.log_end_offset,
                    row.lag
                )
            }
        },
    )?;
    env.step(&format!(
        "controller {node} caught up to LogEndOffset ≥ {target} in {}",
        util::secs(start.elapsed())
    ));
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_distinct() {
        let m = messages("t", 1000);
        let s: BTreeSet<_> = m.iter().collect();
        assert_eq!(s.len(), 1000);
    }

    #[test]
    fn same_messages_detects_loss_duplicates_and_strangers() {
        let sent: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        assert!(assert_same_messages("x", &sent, &["c".into(), "a".into(), "b".into()]).is_ok());
        assert!(assert_same_messages("x", &sent, &["a".into(), "b".into()]).is_err());
        assert!(assert_same_messages("x", &sent, &["a".into(), "b".into(), "b".into()]).is_err());
        assert!(assert_same_messages("x", &sent, &["a".into(), "b".into(), "z".into()]).is_err());
    }

    #[test]
    fn scenario_names_unique() {
        let mut n: Vec<_> = SCENARIOS.iter().map(|s| s.name).collect();
        n.sort();
        n.dedup();
        assert_eq!(n.len(), SCENARIOS.len());
    }
}
