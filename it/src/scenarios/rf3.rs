//! `e2e-rf3`: three controllers, three brokers, a topic with replication factor 3 and
//! `min.insync.replicas=2`. A broker that leads some partitions is SIGKILLed:
//!
//! 1. Before the controller's broker session expires, the leaders of the partitions the dead
//!    broker followed shrink their ISR themselves: they send AlterPartition to the controller
//!    (brokers run with a short `replica.lag.time.max.ms`, controllers with a long
//!    `broker.session.timeout.ms`, so this comes first). Observed in `kafka-topics --describe`
//!    while the dead broker is still shown as leader of its own partitions (not yet fenced),
//!    and in the leaders' logs ("Shrinking ISR from", "ISR updated to").
//! 2. When the session expires the controller fences the broker and moves its leaderships.
//! 3. acks=all produce and consume keep working with two in-sync replicas.
//! 4. The restarted broker catches up and rejoins every ISR (AlterPartition again).
//! 5. An operator's admin session with Kafka's CLI tools ([`super::admin`]): a partition moved
//!    to another broker by `kafka-reassign-partitions` (and its messages read back), a dynamic
//!    broker config set and described on a controller (`kafka-configs --bootstrap-controller`),
//!    a client quota and a SCRAM credential set and described through the brokers.

use anyhow::{bail, Context, Result};
use std::time::{Duration, Instant};

use super::{assert_same_messages, consume, create_topic, messages, produce};
use crate::cluster::{props, Cluster, ClusterSpec};
use crate::env::{ControllerKind, Env};
use crate::parse::PartitionInfo;
use crate::util;

/// Controllers fence a broker this long after its last heartbeat.
const SESSION_MS: u64 = 24_000;
/// Brokers drop a follower from the ISR after it has not caught up for this long.
const REPLICA_LAG_MS: u64 = 4_000;
const TOPIC: &str = "rf3";

/// The scenario body.
pub fn run(env: &Env) -> Result<()> {
    let mut c = start_cluster(env)?;
    let boot = c.broker_bootstrap();
    let (parts, sent1) = fill_topic(env, &c, &boot)?;
    let v = Victim::pick(env, &parts)?;
    let survivors_boot = c.broker_bootstrap_except(v.id);
    let t0 = kill(env, &mut c, v.id)?;
    let sent_k = leaders_shrink_isr(env, &c, &survivors_boot, &v, t0)?;
    controller_moves_leaders(env, &c, &survivors_boot, v.id, t0)?;
    let all = produce_with_one_broker_down(env, &mut c, &survivors_boot, [sent1, sent_k].concat())?;
    victim_rejoins(env, &mut c, &boot, v.id, t0, &all)?;
    // Step 5: admin tools against the quorum.
    super::admin::run(env, &mut c)?;
    c.check_alive()?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(30))?;
    Ok(())
}

/// Formats and starts the controllers (long broker session) and three brokers (short replica
/// lag); returns once every broker serves.
fn start_cluster(env: &Env) -> Result<Cluster<'_>> {
    if env.controllers.len() < 3 {
        bail!(
            "e2e-rf3 needs at least 3 controllers, IT_CONTROLLERS has {}",
            env.controllers.len()
        );
    }
    let session = SESSION_MS.to_string();
    let lag = REPLICA_LAG_MS.to_string();
    let spec = ClusterSpec {
        controllers: env.controllers.clone(),
        brokers: 3,
        controller_props: props(&[("broker.session.timeout.ms", &session)]),
        broker_props: props(&[
            ("broker.session.timeout.ms", &session),
            ("replica.lag.time.max.ms", &lag),
            ("offsets.topic.replication.factor", "3"),
            ("transaction.state.log.replication.factor", "3"),
            ("transaction.state.log.min.isr", "2"),
        ]),
    };
    let mut c = Cluster::new(env, &spec)?;
    c.format_all()?;
    c.start_controllers()?;
    c.wait_quorum(Duration::from_secs(90))?;
    c.start_brokers()?;
    let broker_ids: Vec<i32> = c.brokers.iter().map(|b| b.id).collect();
    for b in &broker_ids {
        c.wait_broker_ready(*b, Duration::from_secs(150))?;
    }
    Ok(c)
}

/// Creates [`TOPIC`] (RF 3, min ISR 2), waits for full ISRs, writes 1000 messages with
/// acks=all and reads them back; returns the partitions and the messages.
fn fill_topic(env: &Env, c: &Cluster, boot: &str) -> Result<(Vec<PartitionInfo>, Vec<String>)> {
    create_topic(env, boot, TOPIC, 3, 3, &["min.insync.replicas=2"])?;
    let parts = wait_partitions(
        c,
        boot,
        "all partitions to have a leader and a full ISR",
        Duration::from_secs(60),
        |ps| ps.len() == 3 && ps.iter().all(|p| p.leader >= 0 && p.isr.len() == 3),
    )?;
    let sent1 = messages("rf3-a", 1000);
    produce(
        env,
        boot,
        TOPIC,
        &sent1,
        &["--producer-property", "acks=all"],
    )?;
    // Consuming once creates __consumer_offsets (RF 3) while all brokers are up.
    let got = consume(env, boot, TOPIC, "g1", 1000)?;
    assert_same_messages("rf3 before the kill", &sent1, &got)?;
    Ok((parts, sent1))
}

/// The broker to kill: it leads some partitions and follows others.
struct Victim {
    id: i32,
    /// Partitions it leads.
    led: Vec<i32>,
    /// Partitions it follows (in their ISR, not their leader).
    followed: Vec<i32>,
}

impl Victim {
    fn pick(env: &Env, parts: &[PartitionInfo]) -> Result<Victim> {
        let id = pick_victim(parts)?;
        let led: Vec<i32> = parts
            .iter()
            .filter(|p| p.leader == id)
            .map(|p| p.partition)
            .collect();
        let followed: Vec<i32> = parts
            .iter()
            .filter(|p| p.leader != id && p.isr.contains(&id))
            .map(|p| p.partition)
            .collect();
        env.step(&format!(
            "victim broker {id}: leads partitions {led:?}, follows {followed:?}"
        ));
        Ok(Victim { id, led, followed })
    }
}

/// SIGKILLs broker `victim`; returns the instant the timings that follow count from.
fn kill(env: &Env, c: &mut Cluster, victim: i32) -> Result<Instant> {
    c.kill(victim)?;
    let t0 = Instant::now();
    env.step(&format!("SIGKILL broker {victim}"));
    Ok(t0)
}

/// Step 1: ISR shrink by the partition leaders, before the controller fences the victim. A
/// follower that had fetched up to the leader's log end counts as caught up for as long as
/// nothing new is written (Kafka's isCaughtUp), so write to the partitions the victim follows:
/// keyed messages aimed at them with Kafka's key partitioner, acks=all. They can only be
/// acknowledged once the leaders have shrunk the ISR to the two live replicas
/// (min.insync.replicas=2), so the producer returning means the shrink happened. Returns the
/// messages written.
fn leaders_shrink_isr(
    env: &Env,
    c: &Cluster,
    survivors_boot: &str,
    v: &Victim,
    t0: Instant,
) -> Result<Vec<String>> {
    let (victim, followed_ids) = (v.id, &v.followed);
    let (lines, sent_k) = keyed_to(followed_ids, messages("rf3-k", 300));
    produce(
        env,
        survivors_boot,
        TOPIC,
        &lines,
        &[
            "--producer-property",
            "acks=all",
            "--property",
            "parse.key=true",
            "--property",
            "key.separator=:",
        ],
    )
    .context("acks=all produce to the partitions the dead broker followed")?;
    let shrunk = wait_partitions(
        c,
        survivors_boot,
        &format!("the leaders of {followed_ids:?} to drop broker {victim} from their ISR"),
        Duration::from_millis(SESSION_MS),
        |ps| {
            ps.iter()
                .filter(|p| followed_ids.contains(&p.partition))
                .all(|p| !p.isr.contains(&victim))
        },
    )?;
    let shrink_ms = t0.elapsed().as_millis();
    env.show(
        &format!("{shrink_ms} ms after SIGKILL: kafka-topics --describe"),
        &render(&shrunk),
    );
    if shrunk
        .iter()
        .filter(|p| v.led.contains(&p.partition))
        .any(|p| p.leader != victim)
    {
        bail!(
            "broker {victim} lost its leaderships before (or while) the ISRs shrank: the shrink came from the controller \
             fencing the broker, not from the leaders' AlterPartition (controller broker.session.timeout.ms={SESSION_MS})"
        );
    }
    println!("isr_shrink_ms={shrink_ms}");
    check_shrink_evidence(env, c, &shrunk, followed_ids, victim)?;
    Ok(sent_k)
}

/// Keys `values` so that Kafka's key partitioner puts each on one of `partitions` (of 3):
/// returns the `key:value` lines for the console producer and the values.
fn keyed_to(partitions: &[i32], values: Vec<String>) -> (Vec<String>, Vec<String>) {
    let keyed: Vec<(String, String)> = values
        .into_iter()
        .scan(0u32, |i, m| {
            // Next key that lands on a followed partition.
            loop {
                *i += 1;
                let key = format!("k{i}");
                if partitions.contains(&(util::partition_for_key(key.as_bytes(), 3) as i32)) {
                    return Some((key, m));
                }
            }
        })
        .collect();
    let lines: Vec<String> = keyed.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    let values: Vec<String> = keyed.into_iter().map(|(_, v)| v).collect();
    (lines, values)
}

/// Step 2, session expiry: the controller fences the victim and moves its leaderships.
fn controller_moves_leaders(
    env: &Env,
    c: &Cluster,
    survivors_boot: &str,
    victim: i32,
    t0: Instant,
) -> Result<()> {
    let moved = wait_partitions(
        c,
        survivors_boot,
        &format!("broker {victim}'s partitions to get a new leader"),
        Duration::from_millis(SESSION_MS + 30_000),
        |ps| {
            ps.iter()
                .all(|p| p.leader >= 0 && p.leader != victim && !p.isr.contains(&victim))
        },
    )?;
    let moved_ms = t0.elapsed().as_millis();
    env.show(
        &format!("{moved_ms} ms after SIGKILL: kafka-topics --describe"),
        &render(&moved),
    );
    println!("leader_moved_ms={moved_ms}");
    Ok(())
}

/// Step 3: acks=all with 2 in-sync replicas still works: 1000 more messages, then every
/// message written so far (`earlier`, then these) is read back. Returns them all.
fn produce_with_one_broker_down(
    env: &Env,
    c: &mut Cluster,
    survivors_boot: &str,
    earlier: Vec<String>,
) -> Result<Vec<String>> {
    let sent2 = messages("rf3-b", 1000);
    produce(
        env,
        survivors_boot,
        TOPIC,
        &sent2,
        &["--producer-property", "acks=all"],
    )?;
    let all = [earlier, sent2].concat();
    let got = consume(env, survivors_boot, TOPIC, "g2", all.len())?;
    assert_same_messages("rf3 with one broker down", &all, &got)?;
    c.check_alive()?;
    Ok(all)
}

/// Step 4: the victim comes back, rejoins every ISR, and every message reads back.
fn victim_rejoins(
    env: &Env,
    c: &mut Cluster,
    boot: &str,
    victim: i32,
    t0: Instant,
    all: &[String],
) -> Result<()> {
    c.start(victim)?;
    c.wait_broker_ready(victim, Duration::from_secs(120))?;
    let back = wait_partitions(
        c,
        boot,
        &format!("broker {victim} to rejoin every ISR"),
        Duration::from_secs(120),
        |ps| {
            ps.iter()
                .all(|p| p.isr.contains(&victim) && p.isr.len() == 3)
        },
    )?;
    env.show("after restart: kafka-topics --describe", &render(&back));
    let rejoin_ms = t0.elapsed().as_millis();
    println!("isr_rejoined_ms={rejoin_ms}");
    let got = consume(env, boot, TOPIC, "g3", all.len())?;
    assert_same_messages("rf3 after the restart", all, &got)?;
    c.check_alive()?;
    Ok(())
}

/// The leader of the lowest partition whose leader does not lead every partition.
fn pick_victim(parts: &[PartitionInfo]) -> Result<i32> {
    for p in parts {
        let leads_all = parts.iter().all(|q| q.leader == p.leader);
        if !leads_all && p.leader >= 0 {
            return Ok(p.leader);
        }
    }
    bail!("no broker leads some but not all partitions: {parts:?}")
}

fn render(parts: &[PartitionInfo]) -> String {
    parts
        .iter()
        .map(|p| {
            format!(
                "{}-{}  leader {}  replicas {:?}  isr {:?}",
                p.topic, p.partition, p.leader, p.replicas, p.isr
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn wait_partitions(
    c: &Cluster,
    boot: &str,
    what: &str,
    timeout: Duration,
    ok: impl Fn(&[PartitionInfo]) -> bool,
) -> Result<Vec<PartitionInfo>> {
    util::wait_until(what, timeout, Duration::from_millis(200), || {
        let (ps, _) = c.describe_topic(boot, TOPIC, Duration::from_secs(30))?;
        if ok(&ps) {
            Ok(Some(ps))
        } else {
            bail!("{}", render(&ps).replace('\n', "; "))
        }
    })
}

/// The partition leaders' logs must show the ISR shrink they requested ("Shrinking ISR from",
/// logged by kafka.cluster.Partition right before it sends AlterPartition); for kraftwerk
/// controllers, a controller log line must mention AlterPartition. Java controllers' "Replayed
/// partition change" DEBUG lines are printed for comparison.
fn check_shrink_evidence(
    env: &Env,
    c: &Cluster,
    parts: &[PartitionInfo],
    followed: &[i32],
    victim: i32,
) -> Result<()> {
    for p in parts.iter().filter(|p| followed.contains(&p.partition)) {
        let leader = c
            .brokers
            .iter()
            .find(|b| b.id == p.leader)
            .context("leader is not a broker")?;
        let tp = format!("{TOPIC}-{}", p.partition);
        let shrinking: Vec<String> = leader
            .log_lines("Shrinking ISR from")
            .into_iter()
            .filter(|l| l.contains(&tp))
            .collect();
        let Some(line) = shrinking.last() else {
            bail!("leader {} of {tp} logged no `Shrinking ISR from` line: the ISR change was not its own AlterPartition", p.leader);
        };
        env.step(&format!(
            "broker {} (leader of {tp}): {}",
            p.leader,
            util::one_line(line, 220)
        ));
    }
    let mut kraftwerk_lines = 0;
    let mut java_lines = 0;
    for ctl in &c.controllers {
        match ctl.role {
            crate::cluster::Role::Controller(ControllerKind::Kraftwerk) => {
                let lines = ctl.log_lines("AlterPartition");
                kraftwerk_lines += lines.len();
                if let Some(l) = lines.last() {
                    env.step(&format!("{}: {}", ctl.label(), util::one_line(l, 220)));
                }
            }
            _ => {
                // Java controllers log the replayed PartitionChangeRecord at DEBUG (enabled by
                // the harness's log4j2 file); every controller replays it, active or not.
                let lines: Vec<String> = ctl
                    .log_lines("Replayed partition change")
                    .into_iter()
                    .filter(|l| l.contains(&format!("for topic {TOPIC}")))
                    .collect();
                java_lines += lines.len();
                if let Some(l) = lines.last() {
                    env.step(&format!("{}: {}", ctl.label(), util::one_line(l, 260)));
                }
            }
        }
    }
    let any_kraftwerk = c.controllers.iter().any(|n| {
        matches!(
            n.role,
            crate::cluster::Role::Controller(ControllerKind::Kraftwerk)
        )
    });
    let any_java = c.controllers.iter().any(|n| {
        matches!(
            n.role,
            crate::cluster::Role::Controller(ControllerKind::Java)
        )
    });
    if any_java && java_lines == 0 {
        bail!("no Java controller logged `Replayed partition change ... for topic {TOPIC}` for the ISR shrink");
    }
    if any_kraftwerk && kraftwerk_lines == 0 {
        bail!("no kraftwerk controller logged a line containing `AlterPartition` after broker {victim} was dropped from the ISR");
    }
    Ok(())
}
