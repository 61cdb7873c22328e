//! `e2e`: the acceptance scenario. Three controllers and one broker on loopback; every step
//! checks what a user of the Kafka tools would see.

use anyhow::{bail, Result};
use std::time::Duration;

use super::{
    assert_quorum_status, assert_same_messages, consume, create_topic, kill_leader_and_measure,
    messages, produce, wait_caught_up, Failover,
};
use crate::cluster::{props, Cluster, ClusterSpec, FIRST_BROKER_ID};
use crate::env::Env;
use crate::parse::{QuorumStatus, ReplicaRow};

/// Longest acceptable time from SIGKILL of the active controller to another leader.
const NEW_LEADER_WITHIN_MS: u64 = 15_000;

/// Properties every single-broker scenario uses (internal topics must fit one broker).
pub fn single_broker_props() -> Vec<(String, String)> {
    props(&[
        ("offsets.topic.replication.factor", "1"),
        ("transaction.state.log.replication.factor", "1"),
        ("transaction.state.log.min.isr", "1"),
    ])
}

/// Formats and starts `env.controllers` plus one broker; returns once the broker serves.
pub fn start_single_broker_cluster(env: &Env) -> Result<Cluster<'_>> {
    if env.controllers.len() < 3 {
        bail!(
            "this scenario needs at least 3 controllers, IT_CONTROLLERS has {}",
            env.controllers.len()
        );
    }
    let spec = ClusterSpec {
        controllers: env.controllers.clone(),
        brokers: 1,
        controller_props: Vec::new(),
        broker_props: single_broker_props(),
    };
    let mut c = Cluster::new(env, &spec)?;
    c.format_all()?;
    c.start_controllers()?;
    c.wait_quorum(Duration::from_secs(90))?;
    c.start_brokers()?;
    c.wait_broker_ready(FIRST_BROKER_ID, Duration::from_secs(120))?;
    Ok(c)
}

/// The scenario body.
pub fn run(env: &Env) -> Result<()> {
    let mut c = start_single_broker_cluster(env)?;
    check_healthy_quorum(env, &c)?;
    topic_round_trip(env, &c)?;
    let f = fail_over(env, &mut c)?;
    check_broker_unfenced(env, &c)?;
    let rows = check_new_leader(env, &c, &f)?;
    restart_old_leader(env, &mut c, &f, &rows)?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(30))?;
    println!("failover_ms={}", f.failover_ms);
    Ok(())
}

/// What `kafka-metadata-quorum` shows on a healthy cluster: every voter and the broker in
/// `describe --replication` with its role, and a leader that keeps its epoch while its high
/// watermark moves (NoOpRecords).
fn check_healthy_quorum(env: &Env, c: &Cluster) -> Result<()> {
    let broker = FIRST_BROKER_ID;
    let one_controller = c.controllers[0].addr();
    let (s1, raw) = c.describe_status(&one_controller, Duration::from_secs(30))?;
    env.show(
        &format!("kafka-metadata-quorum --bootstrap-controller {one_controller} describe --status"),
        &raw,
    );
    assert_quorum_status(&s1, c, &[broker])?;
    check_replication_roles(env, c, &one_controller, s1.leader_id)?;
    let (s2, _) = c.describe_status(&one_controller, Duration::from_secs(30))?;
    check_idle_leader(&s1, &s2)?;
    env.step(&format!(
        "quorum OK: leader {} epoch {}, high watermark moved {} -> {}, voters {:?}, observers {:?}",
        s2.leader_id,
        s2.leader_epoch,
        s1.high_watermark,
        s2.high_watermark,
        s2.voters,
        s2.observers
    ));
    Ok(())
}

/// `describe --replication` through `one_controller` lists `leader` as Leader, the other
/// voters as Followers and the broker as an Observer.
pub fn check_replication_roles(
    env: &Env,
    c: &Cluster,
    one_controller: &str,
    leader: i32,
) -> Result<()> {
    let broker = FIRST_BROKER_ID;
    let (rows, raw) = c.describe_replication(one_controller, Duration::from_secs(30))?;
    env.show(
        &format!(
            "kafka-metadata-quorum --bootstrap-controller {one_controller} describe --replication"
        ),
        &raw,
    );
    for ctl in &c.controllers {
        let Some(r) = rows.iter().find(|r| r.node_id == ctl.id) else {
            bail!("describe --replication does not list voter {}", ctl.id);
        };
        let want = if ctl.id == leader {
            "Leader"
        } else {
            "Follower"
        };
        if r.status != want {
            bail!(
                "describe --replication shows node {} as {}, expected {want}",
                ctl.id,
                r.status
            );
        }
    }
    if !rows
        .iter()
        .any(|r| r.node_id == broker && r.status == "Observer")
    {
        bail!("describe --replication does not list broker {broker} as an Observer");
    }
    Ok(())
}

/// Between two `describe --status` calls on an idle healthy quorum the high watermark moves
/// and the leadership stays.
fn check_idle_leader(s1: &QuorumStatus, s2: &QuorumStatus) -> Result<()> {
    if s2.high_watermark <= s1.high_watermark {
        bail!(
            "the high watermark did not move between two describe --status calls ({} then {}); the leader should append NoOpRecords",
            s1.high_watermark,
            s2.high_watermark
        );
    }
    if s2.leader_id != s1.leader_id || s2.leader_epoch != s1.leader_epoch {
        bail!(
            "leadership changed on an idle healthy quorum: {}@{} then {}@{}",
            s1.leader_id,
            s1.leader_epoch,
            s2.leader_id,
            s2.leader_epoch
        );
    }
    Ok(())
}

/// A topic, 1000 messages in, the same 1000 out.
fn topic_round_trip(env: &Env, c: &Cluster) -> Result<()> {
    let broker = FIRST_BROKER_ID;
    let boot = c.broker_bootstrap();
    let baseline = create_topic(env, &boot, "e2e-one", 3, 1, &[])?;
    println!("create_baseline_ms={}", baseline.as_millis());
    let (parts, raw) = c.describe_topic(&boot, "e2e-one", Duration::from_secs(60))?;
    env.show("kafka-topics --describe --topic e2e-one", &raw);
    if parts.len() != 3 || parts.iter().any(|p| p.leader != broker) {
        bail!("e2e-one should have 3 partitions led by broker {broker}: {parts:?}");
    }
    let sent1 = messages("e2e-one", 1000);
    produce(env, &boot, "e2e-one", &sent1, &[])?;
    let got1 = consume(env, &boot, "e2e-one", "g1", 1000)?;
    assert_same_messages("e2e-one", &sent1, &got1)?;
    env.step("all 1000 messages of e2e-one read back");
    Ok(())
}

/// SIGKILLs the active controller; another must lead within [`NEW_LEADER_WITHIN_MS`].
fn fail_over(env: &Env, c: &mut Cluster) -> Result<Failover> {
    let (_, raw) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    env.show("before failover: describe --status", &raw);
    let (_, raw) = c.describe_replication(&c.controller_bootstrap(), Duration::from_secs(30))?;
    env.show("before failover: describe --replication", &raw);
    let f = kill_leader_and_measure(env, c, "e2e-two", 3)?;
    println!("failover_ms={}", f.failover_ms);
    println!("new_leader_seen_ms={}", f.leader_ms);
    if f.leader_ms > NEW_LEADER_WITHIN_MS {
        bail!("no new controller leader within {NEW_LEADER_WITHIN_MS} ms of SIGKILL (first seen after {} ms)", f.leader_ms);
    }
    c.check_alive()?;
    Ok(f)
}

/// The broker stayed registered and unfenced: its partitions keep their leader, it still
/// produces and consumes (a fenced broker has no leaderships and would refuse both).
fn check_broker_unfenced(env: &Env, c: &Cluster) -> Result<()> {
    let broker = FIRST_BROKER_ID;
    let boot = c.broker_bootstrap();
    let (parts, _) = c.describe_topic(&boot, "e2e-one", Duration::from_secs(60))?;
    if parts.iter().any(|p| p.leader != broker) {
        bail!(
            "after the failover e2e-one partitions lost their leader (broker fenced?): {parts:?}"
        );
    }
    let sent2 = messages("e2e-two", 1000);
    produce(env, &boot, "e2e-two", &sent2, &[])?;
    let got2 = consume(env, &boot, "e2e-two", "g1", 1000)?;
    assert_same_messages("e2e-two", &sent2, &got2)?;
    env.step(
        "broker still unfenced after the failover: 1000 messages of e2e-two written and read back",
    );
    Ok(())
}

/// The survivors report a new leader in a higher epoch; returns their `describe --replication`.
fn check_new_leader(env: &Env, c: &Cluster, f: &Failover) -> Result<Vec<ReplicaRow>> {
    let survivors = c.controller_bootstrap_except(f.old_leader);
    let (after, raw) = c.describe_status(&survivors, Duration::from_secs(30))?;
    env.show("after failover: describe --status", &raw);
    if after.leader_id == f.old_leader || after.leader_epoch <= f.old_epoch {
        bail!(
            "after failover describe --status shows leader {} epoch {} (old leader {} epoch {})",
            after.leader_id,
            after.leader_epoch,
            f.old_leader,
            f.old_epoch
        );
    }
    let (rows, raw) = c.describe_replication(&survivors, Duration::from_secs(30))?;
    env.show("after failover: describe --replication", &raw);
    Ok(rows)
}

/// The killed controller comes back and replicates everything it missed (up to the leader's
/// log end offset in `rows`).
fn restart_old_leader(env: &Env, c: &mut Cluster, f: &Failover, rows: &[ReplicaRow]) -> Result<()> {
    let leader_leo = rows
        .iter()
        .find(|r| r.status == "Leader")
        .map(|r| r.log_end_offset)
        .unwrap_or(0);
    c.start(f.old_leader)?;
    let raw = wait_caught_up(env, c, f.old_leader, leader_leo, Duration::from_secs(90))?;
    env.show("after restart: describe --replication", &raw);
    let (st, raw) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    env.show("after restart: describe --status", &raw);
    assert_quorum_status(&st, c, &[FIRST_BROKER_ID])?;
    c.check_alive()?;
    Ok(())
}
