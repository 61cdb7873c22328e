//! `mixed-1rust-2java` and `mixed-2rust-1java`: three voters, some kraftwerk and some Apache
//! Kafka's own controllers, two Kafka brokers. Leadership is forced onto every node in turn,
//! first by SIGTERM (the leader resigns gracefully and sends EndQuorumEpoch), then by SIGKILL
//! (crash: the others notice by fetch timeout). After every hand-off the new leader serves
//! admin writes of every kind the brokers forward (CreateTopics with configs, CreatePartitions,
//! IncrementalAlterConfigs, DeleteTopics, AllocateProducerIds) and produce/consume work; the
//! stopped node comes back and catches up. Throughout: no process dies, no Java process logs a
//! fatal or metadata fault, and the controllers' metadata logs are byte-identical below the
//! high watermark. At the end Kafka's own replay (`kafka-metadata-shell`) of every
//! controller's log gives the same image (see `checks`).
//!
//! How leadership reaches a chosen node T: first a plain hand-off (stop the leader, see who
//! wins). If the other node O won, the next hand-off is steered: O... is now leader, so the
//! remaining follower F ≠ T is frozen (SIGSTOP) until T's log is ahead of F's, then the leader
//! is stopped and F thawed. Only T can win that election: F's log is shorter, so T refuses F
//! its vote while F grants T's (Raft's election restriction — the scenario fails if F wins).

use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::checks;
use super::{assert_same_messages, consume, messages, produce};
use crate::cluster::{props, Cluster, ClusterSpec};
use crate::env::{ControllerKind, Env};
use crate::kafka::args;
use crate::parse::QuorumStatus;
use crate::util;

/// How the leader is taken away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// SIGTERM: graceful resignation (EndQuorumEpoch to the other voters).
    Term,
    /// SIGKILL: crash.
    Kill,
}

impl Stop {
    /// `SIGTERM` / `SIGKILL`.
    pub fn label(self) -> &'static str {
        match self {
            Stop::Term => "SIGTERM",
            Stop::Kill => "SIGKILL",
        }
    }
}

/// One leadership change.
#[derive(Clone, Debug)]
pub struct HandOff {
    /// How the old leader was stopped.
    pub stop: Stop,
    /// Old leader.
    pub from: i32,
    /// New leader.
    pub to: i32,
    /// New epoch.
    pub epoch: i64,
    /// Signal → new leader seen, ms.
    pub elected_ms: u64,
    /// True if the election was steered by freezing the third node.
    pub steered: bool,
}

/// `mixed-1rust-2java`.
pub fn run_1rust_2java(env: &Env) -> Result<()> {
    run(
        env,
        &[
            ControllerKind::Kraftwerk,
            ControllerKind::Java,
            ControllerKind::Java,
        ],
    )
}

/// `mixed-2rust-1java`.
pub fn run_2rust_1java(env: &Env) -> Result<()> {
    run(
        env,
        &[
            ControllerKind::Kraftwerk,
            ControllerKind::Kraftwerk,
            ControllerKind::Java,
        ],
    )
}

/// Fails unless the kraftwerk binary exists (the environment checks it only when
/// `IT_CONTROLLERS` names kraftwerk; these scenarios choose their controllers themselves).
pub fn require_kraftwerk(env: &Env) -> Result<()> {
    if !env.kraftwerk_bin.is_file() {
        bail!(
            "kraftwerk binary {} not found (build it with `cargo build -p kraftwerk`)",
            env.kraftwerk_bin.display()
        );
    }
    Ok(())
}

/// Broker properties for two brokers (internal topics replicated twice).
pub fn two_broker_props() -> Vec<(String, String)> {
    props(&[
        ("offsets.topic.replication.factor", "2"),
        ("transaction.state.log.replication.factor", "2"),
        ("transaction.state.log.min.isr", "1"),
    ])
}

/// Controllers write a snapshot this often (if anything was committed since the last one), so
/// that snapshots written by both implementations are in the directories that change hands and
/// are compared with the log they stand for (`checks::assert_images_agree`).
pub const SNAPSHOT_INTERVAL_MS: &str = "15000";

/// Formats and starts `kinds` controllers and `brokers` brokers; returns once every broker
/// serves.
pub fn start_cluster<'e>(
    env: &'e Env,
    kinds: &[ControllerKind],
    brokers: usize,
) -> Result<Cluster<'e>> {
    require_kraftwerk(env)?;
    let spec = ClusterSpec {
        controllers: kinds.to_vec(),
        brokers,
        controller_props: props(&[(
            "metadata.log.max.snapshot.interval.ms",
            SNAPSHOT_INTERVAL_MS,
        )]),
        broker_props: two_broker_props(),
    };
    let mut c = Cluster::new(env, &spec)?;
    c.format_all()?;
    c.start_controllers()?;
    c.wait_quorum(Duration::from_secs(90))?;
    c.start_brokers()?;
    for b in c.brokers.iter().map(|b| b.id).collect::<Vec<_>>() {
        c.wait_broker_ready(b, Duration::from_secs(150))?;
    }
    Ok(c)
}

fn run(env: &Env, kinds: &[ControllerKind]) -> Result<()> {
    let mut c = start_cluster(env, kinds, 2)?;
    let st = leader_status(&c)?;
    env.step(&format!(
        "initial leader: {} (epoch {})",
        label(&c, st.leader_id),
        st.leader_epoch
    ));
    let mut traffic = Traffic::default();
    traffic.round(env, &c, "before any hand-off")?;

    let mut history: Vec<HandOff> = Vec::new();
    for stop in [Stop::Term, Stop::Kill] {
        lead_everywhere(env, &mut c, stop, &mut traffic, &mut history)?;
    }

    let hw = checks::wait_converged(env, &c, Duration::from_secs(90))?;
    checks::assert_logs_agree(env, &c, hw)?;
    checks::assert_images_agree(env, &c, hw, &checks::SnapshotWriters::new())?;
    checks::assert_healthy(&mut c)?;
    print_history(env, &c, &history);
    report_kraftwerk_errors(env, &c);
    c.stop_all(Duration::from_secs(60), Duration::from_secs(40))?;
    Ok(())
}

/// Hands leadership off by `stop` until every controller of `c` has led once (steering the
/// election where a plain hand-off missed a node, see the module docs), with a traffic round
/// after each hand-off and the stopped node restarted and caught up; the logs are compared
/// after each. Needs exactly three controllers (the steering freezes "the third"). Appends to
/// `history`; returns the controllers that led.
pub fn lead_everywhere(
    env: &Env,
    c: &mut Cluster,
    stop: Stop,
    traffic: &mut Traffic,
    history: &mut Vec<HandOff>,
) -> Result<BTreeSet<i32>> {
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    if ids.len() != 3 {
        bail!(
            "leadership is steered among exactly 3 controllers, this cluster has {:?}",
            ids
        );
    }
    let mut led: BTreeSet<i32> = BTreeSet::new();
    let mut tried: BTreeSet<i32> = BTreeSet::new();
    let mut rounds = 0;
    while led.len() < ids.len() {
        rounds += 1;
        if rounds > 3 * ids.len() {
            bail!(
                "{}: leadership did not reach every node in {} hand-offs (reached {led:?})",
                stop.label(),
                rounds - 1
            );
        }
        let leader = leader_status(c)?.leader_id;
        let target = ids
            .iter()
            .copied()
            .find(|id| !led.contains(id) && *id != leader);
        // A node that did not win a plain hand-off gets a steered one.
        let steer = target.filter(|t| tried.contains(t));
        if let Some(t) = target {
            tried.insert(t);
        }
        let h = hand_off(env, c, stop, steer)?;
        led.insert(h.to);
        history.push(h);
        traffic.round(env, c, &format!("after hand-off #{}", history.len()))?;
        let from = history.last().expect("just pushed").from;
        restart_and_catch_up(env, c, from)?;
        checks::assert_healthy(c)?;
        let hw = checks::wait_converged(env, c, Duration::from_secs(90))?;
        checks::assert_logs_agree(env, c, hw)?;
    }
    env.step(&format!(
        "{}: every controller led after a hand-off: {led:?}",
        stop.label()
    ));
    Ok(led)
}

/// `controller-2 (java)` for an id.
pub fn label(c: &Cluster, id: i32) -> String {
    c.controllers
        .iter()
        .find(|n| n.id == id)
        .map(|n| n.label())
        .unwrap_or_else(|| format!("node {id}"))
}

/// `describe --status` through every running controller.
pub fn leader_status(c: &Cluster) -> Result<QuorumStatus> {
    let (st, _) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    if st.leader_id < 0 {
        bail!(
            "no controller leader (describe --status shows LeaderId {})",
            st.leader_id
        );
    }
    Ok(st)
}

fn third(ids: &[i32], a: i32, b: i32) -> Result<i32> {
    ids.iter()
        .copied()
        .find(|i| *i != a && *i != b)
        .with_context(|| format!("no third controller besides {a} and {b}"))
}

/// Waits until controller `ahead`'s log end offset (as the leader at `leader_addr` reports it)
/// exceeds `behind`'s by at least 2.
fn wait_ahead(c: &Cluster, leader_addr: &str, ahead: i32, behind: i32) -> Result<(i64, i64)> {
    util::wait_until(
        &format!("controller {ahead}'s log to get ahead of frozen controller {behind}'s"),
        Duration::from_secs(20),
        Duration::from_millis(300),
        || {
            let (rows, _) = c.describe_replication(leader_addr, Duration::from_secs(15))?;
            let leo = |id: i32| {
                rows.iter()
                    .find(|r| r.node_id == id)
                    .map(|r| r.log_end_offset)
            };
            match (leo(ahead), leo(behind)) {
                (Some(a), Some(b)) if a >= b + 2 => Ok(Some((a, b))),
                (a, b) => bail!("log end offsets {ahead}: {a:?}, {behind}: {b:?}"),
            }
        },
    )
}

/// Takes leadership away from the current leader by `stop`. With `steer = Some(t)` the third
/// node is frozen first so that only `t` can win (see the module docs); the result must then be
/// `t`. Returns once another controller leads a higher epoch (the old leader stays down).
pub fn hand_off(env: &Env, c: &mut Cluster, stop: Stop, steer: Option<i32>) -> Result<HandOff> {
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    let before = leader_status(c)?;
    let from = before.leader_id;
    let from_addr = c.node(from)?.addr();
    let frozen = match steer {
        Some(t) => {
            let f = third(&ids, from, t)?;
            c.freeze(f)?;
            env.step(&format!(
                "steering the next election to {}: froze {} (SIGSTOP)",
                label(c, t),
                label(c, f)
            ));
            let (a, b) = wait_ahead(c, &from_addr, t, f).inspect_err(|_| {
                let _ = c.thaw(f);
            })?;
            env.step(&format!(
                "controller {t} log end {a} > frozen controller {f}'s {b}"
            ));
            Some(f)
        }
        None => None,
    };
    let polled: String = c
        .controllers
        .iter()
        .filter(|n| n.id != from && Some(n.id) != frozen)
        .map(|n| n.addr())
        .collect::<Vec<_>>()
        .join(",");
    env.step(&format!(
        "{} the leader {} (epoch {})",
        stop.label(),
        label(c, from),
        before.leader_epoch
    ));
    let t0 = Instant::now();
    match stop {
        Stop::Term => match c.stop(from, Duration::from_secs(40))? {
            crate::procs::StopOutcome::Terminated(s, d) => env.step(&format!(
                "{} exited {} after SIGTERM ({})",
                label(c, from),
                util::secs(d),
                crate::procs::describe_status(&s)
            )),
            other => bail!(
                "{} did not stop gracefully after SIGTERM: {other:?}",
                label(c, from)
            ),
        },
        Stop::Kill => c.kill(from)?,
    }
    if let Some(f) = frozen {
        c.thaw(f)?;
        env.step(&format!("thawed {} (SIGCONT)", label(c, f)));
    }
    let after =
        util::wait_until(
            "another controller to lead a higher epoch",
            Duration::from_secs(45),
            Duration::from_millis(200),
            || {
                let (st, _) = c.describe_status_fast(&polled)?;
                Ok((st.leader_id >= 0
                    && st.leader_id != from
                    && st.leader_epoch > before.leader_epoch)
                    .then_some(st))
            },
        )?;
    let elected_ms = t0.elapsed().as_millis() as u64;
    env.step(&format!(
        "{} leads epoch {} ({elected_ms} ms after {})",
        label(c, after.leader_id),
        after.leader_epoch,
        stop.label()
    ));
    if let Some(t) = steer {
        if after.leader_id != t {
            bail!(
                "controller {} won an election it should have lost: its log was behind controller {t}'s (Raft election restriction)",
                after.leader_id
            );
        }
    }
    Ok(HandOff {
        stop,
        from,
        to: after.leader_id,
        epoch: after.leader_epoch,
        elected_ms,
        steered: steer.is_some(),
    })
}

/// Starts controller `id` again and waits until it has replicated the leader's log.
pub fn restart_and_catch_up(env: &Env, c: &mut Cluster, id: i32) -> Result<()> {
    c.start(id)?;
    let boot = c.controller_bootstrap_except(id);
    let (rows, _) = c.describe_replication(&boot, Duration::from_secs(30))?;
    let target = rows
        .iter()
        .find(|r| r.status == "Leader")
        .map(|r| r.log_end_offset)
        .context("no Leader row in describe --replication")?;
    super::wait_caught_up(env, c, id, target, Duration::from_secs(120))?;
    Ok(())
}

/// Client traffic after each change: every admin write the brokers forward to the active
/// controller, then produce and consume.
#[derive(Default)]
pub struct Traffic {
    /// Topics created so far (oldest first); the one two rounds back is deleted.
    topics: Vec<String>,
}

impl Traffic {
    /// One round: create a topic with a config (TopicRecord, PartitionRecords, ConfigRecord),
    /// alter a config of it (IncrementalAlterConfigs), grow the previous topic
    /// (CreatePartitions), delete the one before (RemoveTopicRecord); if a Java controller
    /// leads, add a SCRAM credential and a client quota (UserScramCredentialRecord,
    /// ClientQuotaRecord); produce 200 messages with an idempotent producer
    /// (AllocateProducerIds) and consume them back.
    pub fn round(&mut self, env: &Env, c: &Cluster, why: &str) -> Result<()> {
        let n = self.topics.len();
        let topic = format!("t{n:02}");
        let boot = c.broker_bootstrap();
        env.step(&format!("traffic round {n} ({why})"));
        create_topic_with_config(env, c, &boot, &topic)?;
        self.alter_grow_delete(env, &boot, &topic)?;
        java_only_records(env, c, &boot, n)?;
        let sent = messages(&topic, 200);
        produce(
            env,
            &boot,
            &topic,
            &sent,
            &["--producer-property", "acks=all"],
        )?;
        let got = consume(env, &boot, &topic, &format!("g-{topic}"), sent.len())?;
        assert_same_messages(&topic, &sent, &got)?;
        self.topics.push(topic);
        Ok(())
    }

    /// Alters a config of `topic` (round `n` = topics so far), grows the previous topic to 3
    /// partitions and deletes the one before it.
    fn alter_grow_delete(&self, env: &Env, boot: &str, topic: &str) -> Result<()> {
        let n = self.topics.len();
        env.tool_ok(
            "kafka-configs",
            &args(&[
                "--bootstrap-server",
                boot,
                "--alter",
                "--entity-type",
                "topics",
                "--entity-name",
                topic,
                "--add-config",
                &format!("max.message.bytes={}", 1_048_588 + n),
            ]),
            None,
            Duration::from_secs(60),
        )?;
        if let Some(prev) = self.topics.last() {
            env.tool_ok(
                "kafka-topics",
                &args(&[
                    "--bootstrap-server",
                    boot,
                    "--alter",
                    "--topic",
                    prev,
                    "--partitions",
                    "3",
                ]),
                None,
                Duration::from_secs(60),
            )?;
        }
        if n >= 2 {
            let old = self.topics[n - 2].clone();
            env.tool_ok(
                "kafka-topics",
                &args(&["--bootstrap-server", boot, "--delete", "--topic", &old]),
                None,
                Duration::from_secs(60),
            )?;
        }
        env.step("altered a topic config, grew the previous topic to 3 partitions, deleted the one before");
        Ok(())
    }
}

/// Creates `topic` (2 partitions, RF up to 2, a retention config), retried for up to 90 s
/// while the controllers change hands; "already exists" counts as created.
fn create_topic_with_config(env: &Env, c: &Cluster, boot: &str, topic: &str) -> Result<()> {
    let rf = c.brokers.len().min(2).to_string();
    let created = util::wait_until(
        &format!("kafka-topics --create {topic}"),
        Duration::from_secs(90),
        Duration::from_millis(500),
        || {
            let r = env.tool(
                "kafka-topics",
                &args(&[
                    "--bootstrap-server",
                    boot,
                    "--create",
                    "--topic",
                    topic,
                    "--partitions",
                    "2",
                    "--replication-factor",
                    &rf,
                    "--config",
                    "retention.ms=86400000",
                ]),
                None,
                Duration::from_secs(60),
            )?;
            if r.ok() || r.stderr.contains("already exists") || r.stdout.contains("already exists")
            {
                return Ok(Some(r.elapsed));
            }
            bail!("{}", util::one_line(&r.stderr, 300))
        },
    )?;
    env.step(&format!("created topic {topic} in {}", util::secs(created)));
    Ok(())
}

/// Records only a Java controller writes (kraftwerk does not serve AlterUserScramCredentials
/// or AlterClientQuotas): kraftwerk replays them and must keep them in the snapshots it
/// writes. If a Java controller leads, round `n` adds a SCRAM credential and a client quota.
fn java_only_records(env: &Env, c: &Cluster, boot: &str, n: usize) -> Result<()> {
    let st = leader_status(c)?;
    if c.controller_kind(st.leader_id) != Some(ControllerKind::Java) {
        return Ok(());
    }
    env.tool_ok(
        "kafka-configs",
        &args(&[
            "--bootstrap-server",
            boot,
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            &format!("user{n}"),
            "--add-config",
            &format!("SCRAM-SHA-256=[iterations=4096,password=pw{n}]"),
        ]),
        None,
        Duration::from_secs(60),
    )?;
    env.tool_ok(
        "kafka-configs",
        &args(&[
            "--bootstrap-server",
            boot,
            "--alter",
            "--entity-type",
            "clients",
            "--entity-name",
            &format!("client{n}"),
            "--add-config",
            &format!("producer_byte_rate={}", 1_048_576 + n),
        ]),
        None,
        Duration::from_secs(60),
    )?;
    env.step(&format!(
        "Java leader {} wrote a SCRAM credential (user{n}) and a client quota (client{n})",
        label(c, st.leader_id)
    ));
    Ok(())
}

/// Prints the hand-offs as a table.
pub fn print_history(env: &Env, c: &Cluster, history: &[HandOff]) {
    let mut s = String::new();
    for (i, h) in history.iter().enumerate() {
        s.push_str(&format!(
            "#{:<2} {} {:<22} -> {:<22} epoch {:<3} elected after {:>5} ms{}\n",
            i + 1,
            h.stop.label(),
            label(c, h.from),
            label(c, h.to),
            h.epoch,
            h.elected_ms,
            if h.steered { " (steered)" } else { "" }
        ));
    }
    env.show("leadership hand-offs", &s);
    for h in history {
        println!(
            "handoff_ms={} {} {}->{}",
            h.elected_ms,
            h.stop.label(),
            h.from,
            h.to
        );
    }
}

/// Prints kraftwerk's ERROR lines (information for whoever reads the run; not a failure).
pub fn report_kraftwerk_errors(env: &Env, c: &Cluster) {
    for n in &c.controllers {
        let lines = checks::kraftwerk_error_lines(n);
        if !lines.is_empty() {
            env.show(
                &format!("{}: {} ERROR lines (first 5)", n.name(), lines.len()),
                &lines
                    .iter()
                    .take(5)
                    .map(|l| util::one_line(l, 300))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
    }
}
