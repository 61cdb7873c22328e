//! Dynamic controller quorums (KIP-853, issue 10) with real Kafka: `dynamic-quickstart`,
//! `static-to-dynamic`, `disk-replace`, `auto-join` and `dynamic-mixed`.
//!
//! Every step is what an operator following Kafka's operations guide ("Provisioning Nodes",
//! "Controller membership changes") types: `kafka-storage format --standalone` for the first
//! controller, `--no-initial-controllers` for the others, `kafka-metadata-quorum
//! --bootstrap-controller … --command-config <the new controller's properties> add-controller`,
//! `remove-controller --controller-id N --controller-directory-id D`, `kafka-features
//! --bootstrap-controller … upgrade --feature kraft.version=1`. kraftwerk slots get `kraftwerk
//! format` with the same flags. Controllers and brokers know only
//! `controller.quorum.bootstrap.servers` (a controller added to a static quorum too).
//!
//! What is asserted is what the tools show a user: `describe --status` lists exactly the
//! expected voters with the directory id each one's `meta.properties` holds and its endpoint,
//! `describe --replication` the same directory ids, `kafka-features describe` the kraft.version
//! level; an acks=all producer runs throughout and every acknowledged message is read back; the
//! voters' metadata logs are byte-identical below the high watermark; no process died or logged
//! a fault.

use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::checks;
use super::mixed::{self, Stop, Traffic};
use super::rolling::{self, AckProducer};
use super::{assert_same_messages, consume, create_topic, messages, produce};
use crate::cluster::{props, Cluster, ClusterSpec, Format};
use crate::env::{ControllerKind, Env};
use crate::kafka::args;
use crate::parse::QuorumStatus;
use crate::util;

mod disk_replace;
pub use disk_replace::run_disk_replace;

/// The topic the acknowledged-writes producer writes to.
const TOPIC: &str = "acked";

/// The first `n` controller kinds of `IT_CONTROLLERS`, padded with its first kind (so
/// `IT_CONTROLLERS=java,java,java` also gives a Java fourth controller).
fn kinds(env: &Env, n: usize) -> Vec<ControllerKind> {
    (0..n)
        .map(|i| {
            env.controllers
                .get(i)
                .copied()
                .unwrap_or(env.controllers[0])
        })
        .collect()
}

/// Brings up a dynamic quorum the documented way: controller 1 formatted with
/// `--standalone` and started (it elects itself: one voter), the others formatted with
/// `--no-initial-controllers`, started (observers) and added one at a time with
/// `add-controller`; then `brokers` brokers that know only `controller.quorum.bootstrap.servers`.
/// Checks the voter set after every step; returns once every broker serves.
pub fn bootstrap_dynamic<'e>(
    env: &'e Env,
    kinds: &[ControllerKind],
    brokers: usize,
    controller_props: Vec<(String, String)>,
    broker_props: Vec<(String, String)>,
) -> Result<Cluster<'e>> {
    if kinds.contains(&ControllerKind::Kraftwerk) {
        mixed::require_kraftwerk(env)?;
    }
    let spec = ClusterSpec {
        controllers: kinds.to_vec(),
        brokers,
        controller_props,
        broker_props,
    };
    let mut c = Cluster::new_dynamic(env, &spec)?;
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    start_standalone(env, &mut c, ids[0])?;
    for id in &ids[1..] {
        c.format_node(*id, &Format::NoInitialControllers)?;
        c.start(*id)?;
    }
    for id in &ids[1..] {
        add_voter(env, &mut c, *id)?;
    }
    let st = assert_voter_set(env, &mut c, &ids)?;
    env.step(&format!(
        "dynamic quorum of {} voters, leader {} in epoch {}",
        ids.len(),
        mixed::label(&c, st.leader_id),
        st.leader_epoch
    ));
    for b in c.brokers.iter().map(|b| b.id).collect::<Vec<_>>() {
        c.format_node(b, &Format::Plain)?;
        c.start(b)?;
    }
    for b in c.brokers.iter().map(|b| b.id).collect::<Vec<_>>() {
        c.wait_broker_ready(b, Duration::from_secs(150))?;
    }
    Ok(c)
}

/// Formats controller `first` with `--standalone`, starts it, and waits until it is the only
/// voter and leads (it elects itself).
fn start_standalone(env: &Env, c: &mut Cluster, first: i32) -> Result<()> {
    c.format_node(first, &Format::Standalone)?;
    c.start(first)?;
    let addr = c.node(first)?.addr();
    let d1 = c.directory_id(first)?;
    let st = wait_voters(env, c, &addr, &[(first, d1)], Duration::from_secs(90))?;
    if st.leader_id != first {
        bail!(
            "the --standalone controller {first} is the only voter but describe --status shows LeaderId {}",
            st.leader_id
        );
    }
    Ok(())
}

/// `(id, directory id from meta.properties)` of each of `ids`.
fn voter_keys(c: &mut Cluster, ids: &[i32]) -> Result<Vec<(i32, String)>> {
    ids.iter()
        .map(|id| Ok((*id, c.directory_id(*id)?)))
        .collect()
}

/// Polls `describe --status` at `bootstrap` until its voters are exactly `want` (id and
/// directory id) and a leader among them is known.
fn wait_voters(
    env: &Env,
    c: &mut Cluster,
    bootstrap: &str,
    want: &[(i32, String)],
    timeout: Duration,
) -> Result<QuorumStatus> {
    let want_set: BTreeSet<(i32, Option<String>)> =
        want.iter().map(|(i, d)| (*i, Some(d.clone()))).collect();
    let (st, raw) = util::wait_until(
        &format!("describe --status to show exactly the voters {want:?}"),
        timeout,
        Duration::from_millis(500),
        || {
            c.check_alive()?;
            let (st, raw) = c.describe_status(bootstrap, Duration::from_secs(30))?;
            let have: BTreeSet<(i32, Option<String>)> = st.voter_keys.iter().cloned().collect();
            if have == want_set && want.iter().any(|(i, _)| *i == st.leader_id) {
                Ok(Some((st, raw)))
            } else {
                bail!(
                    "voters {:?}, leader {} (want {want:?})",
                    st.voter_keys,
                    st.leader_id
                )
            }
        },
    )?;
    env.show("kafka-metadata-quorum describe --status", &raw);
    Ok(st)
}

/// The voter set is exactly `ids`, each with its `meta.properties` directory id and its
/// endpoint (`describe --status`), and `describe --replication` shows the same directory ids
/// with the voters as Leader/Follower.
fn assert_voter_set(env: &Env, c: &mut Cluster, ids: &[i32]) -> Result<QuorumStatus> {
    let want = voter_keys(c, ids)?;
    let boot = c.controller_bootstrap();
    let st = wait_voters(env, c, &boot, &want, Duration::from_secs(60))?;
    let (_, raw) = c.describe_status(&boot, Duration::from_secs(30))?;
    for id in ids {
        let ep = format!("\"CONTROLLER://{}\"", c.node(*id)?.addr());
        if !raw.contains(&ep) {
            bail!(
                "describe --status does not show voter {id}'s endpoint {ep}: {}",
                util::one_line(&raw, 600)
            );
        }
    }
    let (rows, raw) = c.describe_replication(&boot, Duration::from_secs(30))?;
    for (id, dir) in &want {
        let row = rows
            .iter()
            .find(|r| r.node_id == *id && r.status != "Observer")
            .with_context(|| {
                format!(
                    "voter {id} not a Leader/Follower row of describe --replication: {}",
                    util::one_line(&raw, 600)
                )
            })?;
        if row.directory_id.as_deref() != Some(dir.as_str()) {
            bail!(
                "describe --replication shows voter {id} with DirectoryId {:?}, its meta.properties has {dir}",
                row.directory_id
            );
        }
    }
    env.show("kafka-metadata-quorum describe --replication", &raw);
    Ok(st)
}

/// `kafka-metadata-quorum --bootstrap-controller <controllers> --command-config <id's
/// properties> add-controller`, retried while Kafka answers that the new controller is not
/// caught up yet (the leader refuses an observer that has not fetched up to its log end:
/// REQUEST_TIMED_OUT); then the voter set must hold `(id, its directory id)`.
pub fn add_voter(env: &Env, c: &mut Cluster, id: i32) -> Result<()> {
    let dir = c.directory_id(id)?;
    let addr = c.node(id)?.addr();
    let props_file = c.node(id)?.props.to_string_lossy().to_string();
    let boot = c.controller_bootstrap();
    let t0 = Instant::now();
    let mut tries = 0;
    let out = util::wait_until(
        &format!("kafka-metadata-quorum add-controller of controller {id}"),
        Duration::from_secs(120),
        Duration::from_secs(1),
        || {
            tries += 1;
            c.check_alive()?;
            let r = env.tool(
                "kafka-metadata-quorum",
                &args(&[
                    "--bootstrap-controller",
                    &boot,
                    "--command-config",
                    &props_file,
                    "add-controller",
                ]),
                None,
                Duration::from_secs(60),
            )?;
            if r.ok() {
                return Ok(Some(r.stdout));
            }
            bail!(
                "add-controller exit {:?}: {}",
                r.code,
                util::one_line(&format!("{}\n{}", r.stdout, r.stderr), 400)
            )
        },
    )?;
    let want =
        format!("Added controller {id} with directory id {dir} and endpoints: CONTROLLER://{addr}");
    if !words(&out).contains(&words(&want)) {
        bail!("add-controller printed {:?}, expected {want:?}", out.trim());
    }
    env.step(&format!(
        "add-controller {} ({} tries, {}): {}",
        mixed::label(c, id),
        tries,
        util::secs(t0.elapsed()),
        out.trim()
    ));
    let st = util::wait_until(
        &format!("voter ({id}, {dir}) in describe --status"),
        Duration::from_secs(30),
        Duration::from_millis(500),
        || {
            let (st, _) = c.describe_status(&boot, Duration::from_secs(30))?;
            Ok(st
                .voter_keys
                .contains(&(id, Some(dir.clone())))
                .then_some(st))
        },
    )?;
    env.step(&format!(
        "voters now {:?}",
        st.voter_keys.iter().map(|(i, _)| *i).collect::<Vec<_>>()
    ));
    Ok(())
}

/// `kafka-metadata-quorum --bootstrap-controller <controllers> remove-controller
/// --controller-id id --controller-directory-id dir`; then the voter set must no longer hold
/// `(id, dir)` and a leader must be known.
pub fn remove_voter(env: &Env, c: &mut Cluster, id: i32, dir: &str) -> Result<()> {
    let boot = c.controller_bootstrap();
    let t0 = Instant::now();
    let out = util::wait_until(
        &format!("kafka-metadata-quorum remove-controller {id}"),
        Duration::from_secs(60),
        Duration::from_secs(1),
        || {
            let r = env.tool(
                "kafka-metadata-quorum",
                &args(&[
                    "--bootstrap-controller",
                    &boot,
                    "remove-controller",
                    "--controller-id",
                    &id.to_string(),
                    "--controller-directory-id",
                    dir,
                ]),
                None,
                Duration::from_secs(60),
            )?;
            if r.ok() {
                return Ok(Some(r.stdout));
            }
            bail!(
                "remove-controller exit {:?}: {}",
                r.code,
                util::one_line(&format!("{}\n{}", r.stdout, r.stderr), 400)
            )
        },
    )?;
    // Kafka 4.1–4.4 print "Removed  KRaft controller" (two spaces: MetadataQuorumCommand's
    // printf puts "%s KRaft" after "Removed "); compare word by word.
    let want = format!("Removed KRaft controller {id} with directory id {dir}");
    if !words(&out).contains(&words(&want)) {
        bail!(
            "remove-controller printed {:?}, expected {want:?}",
            out.trim()
        );
    }
    env.step(&format!(
        "remove-controller {} ({}): {}",
        mixed::label(c, id),
        util::secs(t0.elapsed()),
        out.trim()
    ));
    let st = util::wait_until(
        &format!("voter ({id}, {dir}) gone from describe --status, a leader known"),
        Duration::from_secs(45),
        Duration::from_millis(500),
        || {
            let (st, _) = c.describe_status_fast(&boot)?;
            Ok((!st.voter_keys.contains(&(id, Some(dir.to_string())))
                && st.voters.contains(&st.leader_id))
            .then_some(st))
        },
    )?;
    env.step(&format!(
        "voters now {:?}, leader {} (epoch {})",
        st.voter_keys.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        st.leader_id,
        st.leader_epoch
    ));
    Ok(())
}

/// What Kafka's operations guide asks once controllers were replaced ("All the controllers
/// should be enumerated in `controller.quorum.bootstrap.servers`"): a rolling restart of the
/// brokers with that property listing the current controllers. The brokers were started with
/// the original three; once those are removed the last of them is their only way in, and the
/// hand-offs that follow stop it. A Java leader that resigns answers fetches "no leader" and
/// exits, so a broker that knows no other controller never finds the next leader (a Java-only
/// quorum fails the same way). Before each broker stops, every partition's ISR is whole (the
/// other broker holds everything); after its restart it must be unfenced, fetch the metadata
/// log from the leader as an observer, and a traffic round must pass.
fn roll_brokers_to_current_controllers(
    env: &Env,
    c: &mut Cluster,
    traffic: &mut Traffic,
) -> Result<()> {
    for b in c.brokers.iter().map(|b| b.id).collect::<Vec<_>>() {
        wait_isr_whole(env, c, Duration::from_secs(120))?;
        let line = c.set_quorum_bootstrap(b)?;
        env.step(&format!("broker {b}: {line} (takes effect at its restart)"));
        let label = c.node(b)?.label();
        // A broker's controlled shutdown goes through the active controller: give it 60 s.
        match c.stop(b, Duration::from_secs(60))? {
            crate::procs::StopOutcome::Terminated(s, d) => env.step(&format!(
                "{label} exited {} after SIGTERM ({})",
                util::secs(d),
                crate::procs::describe_status(&s)
            )),
            other => bail!("{label} did not stop gracefully after SIGTERM: {other:?}"),
        }
        c.start(b)?;
        c.wait_broker_ready(b, Duration::from_secs(150))?;
        wait_broker_follows(env, c, b)?;
        traffic.round(
            env,
            c,
            &format!("broker {b} restarted with the current controllers"),
        )?;
    }
    wait_isr_whole(env, c, Duration::from_secs(120))
}

/// Waits until every partition of every topic (`kafka-topics --describe` through the brokers)
/// has all its replicas in sync.
fn wait_isr_whole(env: &Env, c: &Cluster, timeout: Duration) -> Result<()> {
    let boot = c.broker_bootstrap();
    let t0 = Instant::now();
    let n = util::wait_until(
        "every partition's ISR to hold all its replicas",
        timeout,
        Duration::from_millis(500),
        || {
            let r = env.tool(
                "kafka-topics",
                &args(&["--bootstrap-server", &boot, "--describe"]),
                None,
                Duration::from_secs(30),
            )?;
            if !r.ok() {
                bail!(
                    "kafka-topics --describe: {}",
                    util::one_line(&r.stderr, 300)
                );
            }
            let parts = crate::parse::parse_topic_describe(&r.stdout)?;
            let short: Vec<String> = parts
                .iter()
                .filter(|p| p.isr.len() < p.replicas.len())
                .map(|p| {
                    format!(
                        "{}-{} isr {:?} of {:?}",
                        p.topic, p.partition, p.isr, p.replicas
                    )
                })
                .collect();
            if short.is_empty() {
                Ok(Some(parts.len()))
            } else {
                bail!("{} partition(s) short: {}", short.len(), short.join(", "))
            }
        },
    )?;
    env.step(&format!(
        "ISR whole on all {n} partitions ({})",
        util::secs(t0.elapsed())
    ));
    Ok(())
}

/// `s` with every run of whitespace made one space.
fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Removes controller `id` by its current directory id, stops it (SIGTERM, must exit cleanly)
/// and retires it from the cluster's controller list.
fn remove_and_retire(env: &Env, c: &mut Cluster, id: i32) -> Result<()> {
    let dir = c.directory_id(id)?;
    remove_voter(env, c, id, &dir)?;
    stop_clean(env, c, id)?;
    c.retire_controller(id)?;
    Ok(())
}

/// SIGTERM node `id`; it must exit by itself within 40 s.
fn stop_clean(env: &Env, c: &mut Cluster, id: i32) -> Result<()> {
    let label = mixed::label(c, id);
    match c.stop(id, Duration::from_secs(40))? {
        crate::procs::StopOutcome::Terminated(s, d) => {
            env.step(&format!(
                "{label} exited {} after SIGTERM ({})",
                util::secs(d),
                crate::procs::describe_status(&s)
            ));
            Ok(())
        }
        other => bail!("{label} did not stop gracefully after SIGTERM: {other:?}"),
    }
}

/// A new controller of `kind`: formatted with `--no-initial-controllers`, started, added.
fn grow(env: &Env, c: &mut Cluster, kind: ControllerKind) -> Result<i32> {
    let id = c.add_controller_node(kind)?;
    c.format_node(id, &Format::NoInitialControllers)?;
    c.start(id)?;
    add_voter(env, c, id)?;
    Ok(id)
}

/// `kafka-features --bootstrap-controller <controllers> describe`: kraft.version's
/// FinalizedVersionLevel (and the raw output).
fn kraft_version(env: &Env, c: &Cluster) -> Result<(String, String)> {
    let r = env.tool_ok(
        "kafka-features",
        &args(&[
            "--bootstrap-controller",
            &c.controller_bootstrap(),
            "describe",
        ]),
        None,
        Duration::from_secs(60),
    )?;
    let level = super::upgrade::parse_finalized(&r.stdout, "kraft.version")
        .with_context(|| format!("no kraft.version in kafka-features describe: {}", r.stdout))?;
    Ok((level, r.stdout))
}

/// Waits until broker `b` fetches from the current leader: it is an Observer row of the
/// leader's `describe --replication` with a log end offset at the high watermark.
fn wait_broker_follows(env: &Env, c: &Cluster, b: i32) -> Result<()> {
    let boot = c.controller_bootstrap();
    let t0 = Instant::now();
    let (leader, leo) = util::wait_until(
        &format!("broker {b} to fetch the metadata log from the new leader"),
        Duration::from_secs(60),
        Duration::from_millis(500),
        || {
            let (st, _) = c.describe_status_fast(&boot)?;
            let (rows, _) = c.describe_replication(&boot, Duration::from_secs(20))?;
            let row = rows
                .iter()
                .find(|r| r.node_id == b)
                .with_context(|| format!("broker {b} not in describe --replication"))?;
            if row.status == "Observer" && row.log_end_offset >= st.high_watermark {
                Ok(Some((st.leader_id, row.log_end_offset)))
            } else {
                bail!(
                    "broker {b}: {} at {} < high watermark {}",
                    row.status,
                    row.log_end_offset,
                    st.high_watermark
                )
            }
        },
    )?;
    env.step(&format!(
        "broker {b} follows leader {leader}: observer at log end {leo} ({})",
        util::secs(t0.elapsed())
    ));
    Ok(())
}

/// A console round trip through the brokers: 100 messages on a new topic, read back.
fn round_trip(env: &Env, c: &Cluster, topic: &str) -> Result<()> {
    let boot = c.broker_bootstrap();
    create_topic(env, &boot, topic, 1, c.brokers.len().min(2) as u32, &[])?;
    let sent = messages(topic, 100);
    produce(
        env,
        &boot,
        topic,
        &sent,
        &["--producer-property", "acks=all"],
    )?;
    let got = consume(env, &boot, topic, &format!("g-{topic}"), sent.len())?;
    assert_same_messages(topic, &sent, &got)
}

/// The acks=all producer's topic (3 partitions) and the producer itself.
fn start_acked_producer(env: &Env, c: &mut Cluster) -> Result<AckProducer> {
    let boot = c.broker_bootstrap();
    create_topic(env, &boot, TOPIC, 3, c.brokers.len().min(2) as u32, &[])?;
    let mut p = AckProducer::start(env, &boot, TOPIC)?;
    p.wait_acks_beyond(env, 0, Duration::from_secs(60))?;
    Ok(p)
}

/// Waits for more acknowledgements than there were when called (the producer keeps going).
fn more_acks(env: &Env, p: &mut AckProducer) -> Result<()> {
    p.check_alive()?;
    let n = p.acked()?.acked.len();
    p.wait_acks_beyond(env, n, Duration::from_secs(90))
}

/// Stops the producer, reads the topic back (every ack must be there), compares the voters'
/// logs, checks every process is healthy and stops the cluster.
fn finish(env: &Env, c: &mut Cluster, mut p: AckProducer) -> Result<()> {
    let acks = p.stop(env)?;
    let got = rolling::consume_all(env, &c.broker_bootstrap(), TOPIC)?;
    rolling::assert_acked_read_back(env, &acks, &got, &[])?;
    let hw = checks::wait_converged(env, c, Duration::from_secs(90))?;
    checks::assert_logs_agree(env, c, hw)?;
    checks::assert_healthy(c)?;
    mixed::report_kraftwerk_errors(env, c);
    c.stop_all(Duration::from_secs(60), Duration::from_secs(40))?;
    for id in c.retired.iter().map(|n| n.id).collect::<Vec<_>>() {
        if c.node(id)?.is_running() {
            stop_clean(env, c, id)?;
        }
    }
    Ok(())
}

/// `dynamic-quickstart`.
pub fn run_quickstart(env: &Env) -> Result<()> {
    let k = kinds(env, 3);
    let mut c = bootstrap_dynamic(env, &k, 1, Vec::new(), super::e2e::single_broker_props())?;
    let b = c.brokers[0].id;
    let (st, _) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    if !st.observer_keys.iter().any(|(i, d)| *i == b && d.is_some()) {
        bail!(
            "describe --status does not list broker {b} (with a directory id) among the observers {:?}",
            st.observer_keys
        );
    }
    round_trip(env, &c, "quickstart")?;
    let mut p = start_acked_producer(env, &mut c)?;

    let f = super::kill_leader_and_measure(env, &mut c, "after-failover", 1)?;
    println!("failover_ms={}", f.failover_ms);
    println!("new_leader_seen_ms={}", f.leader_ms);
    wait_broker_follows(env, &c, b)?;
    more_acks(env, &mut p)?;
    mixed::restart_and_catch_up(env, &mut c, f.old_leader)?;
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    assert_voter_set(env, &mut c, &ids)?;

    // Remove a follower: the old leader, now back and caught up.
    remove_and_retire(env, &mut c, f.old_leader)?;
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    assert_voter_set(env, &mut c, &ids)?;
    more_acks(env, &mut p)?;
    round_trip(env, &c, "after-remove")?;
    finish(env, &mut c, p)
}

/// `kafka-features --bootstrap-controller boot upgrade --feature kraft.version=1`, retried for
/// up to 120 s while the leader refuses (not every voter has reported itself yet: Kafka's
/// INVALID_UPDATE_VERSION "not all of the voters support it"); the tool's output.
pub fn upgrade_kraft_version(env: &Env, boot: &str) -> Result<String> {
    let t0 = Instant::now();
    let mut tries = 0;
    let out = util::wait_until(
        "kafka-features upgrade --feature kraft.version=1",
        Duration::from_secs(120),
        Duration::from_secs(2),
        || {
            tries += 1;
            let r = env.tool(
                "kafka-features",
                &args(&[
                    "--bootstrap-controller",
                    boot,
                    "upgrade",
                    "--feature",
                    "kraft.version=1",
                ]),
                None,
                Duration::from_secs(60),
            )?;
            if r.ok() {
                return Ok(Some(r.stdout));
            }
            bail!(
                "exit {:?}: {}",
                r.code,
                util::one_line(&format!("{}\n{}", r.stdout, r.stderr), 400)
            )
        },
    )?;
    env.step(&format!(
        "kafka-features upgrade --feature kraft.version=1 ({tries} tries, {}): {}",
        util::secs(t0.elapsed()),
        out.trim()
    ));
    Ok(out)
}

/// `static-to-dynamic`.
pub fn run_static_to_dynamic(env: &Env) -> Result<()> {
    let k = kinds(env, 4);
    if k.contains(&ControllerKind::Kraftwerk) {
        mixed::require_kraftwerk(env)?;
    }
    let spec = ClusterSpec {
        controllers: k[..3].to_vec(),
        brokers: 1,
        controller_props: Vec::new(),
        broker_props: super::e2e::single_broker_props(),
    };
    let mut c = Cluster::new(env, &spec)?;
    c.format_all()?;
    c.start_controllers()?;
    c.wait_quorum(Duration::from_secs(90))?;
    c.start_brokers()?;
    let b = c.brokers[0].id;
    c.wait_broker_ready(b, Duration::from_secs(150))?;
    let mut p = start_acked_producer(env, &mut c)?;

    let (level, raw) = kraft_version(env, &c)?;
    env.show("kafka-features describe (static quorum)", &raw);
    if level != "0" {
        bail!("a static quorum (controller.quorum.voters) shows kraft.version {level}, expected 0");
    }
    let (st, raw) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    env.show("describe --status (static quorum)", &raw);
    if st.voter_keys.iter().any(|(_, d)| d.is_some()) {
        env.step("note: static voters already show directory ids at kraft.version 0");
    }

    let boot = c.controller_bootstrap();
    upgrade_kraft_version(env, &boot)?;
    let (level, raw) = util::wait_until(
        "kafka-features describe to show kraft.version 1",
        Duration::from_secs(30),
        Duration::from_millis(500),
        || {
            let (l, raw) = kraft_version(env, &c)?;
            Ok((l == "1").then_some((l, raw)))
        },
    )?;
    env.show(
        &format!("kafka-features describe (kraft.version {level})"),
        &raw,
    );
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    assert_voter_set(env, &mut c, &ids)?;
    more_acks(env, &mut p)?;

    let new = grow(env, &mut c, k[3])?;
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    assert_voter_set(env, &mut c, &ids)?;
    let leader = mixed::leader_status(&c)?.leader_id;
    let gone = ids
        .iter()
        .copied()
        .find(|i| *i != leader && *i != new)
        .context("no follower to remove")?;
    remove_and_retire(env, &mut c, gone)?;
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    assert_voter_set(env, &mut c, &ids)?;
    more_acks(env, &mut p)?;

    // The new voter set elects a leader without the removed voter, and the broker (still
    // configured with the old controller.quorum.voters) follows it.
    let f = super::kill_leader_and_measure(env, &mut c, "after-failover", 1)?;
    println!("failover_ms={}", f.failover_ms);
    wait_broker_follows(env, &c, b)?;
    more_acks(env, &mut p)?;
    mixed::restart_and_catch_up(env, &mut c, f.old_leader)?;
    assert_voter_set(env, &mut c, &ids)?;
    finish(env, &mut c, p)
}

/// `auto-join` (Kafka 4.2+ `controller.quorum.auto.join.enable`): controller 1 formatted
/// `--standalone`, the others `--no-initial-controllers`, all with auto-join on and nobody
/// running add-controller: the observers add themselves. Then a voter's disk is replaced (wiped,
/// formatted again: a new directory id) and it rejoins by itself, removing its old key first.
pub fn run_auto_join(env: &Env) -> Result<()> {
    let k = kinds(env, 3);
    if k.contains(&ControllerKind::Kraftwerk) {
        mixed::require_kraftwerk(env)?;
    }
    let spec = ClusterSpec {
        controllers: k.to_vec(),
        brokers: 1,
        controller_props: props(&[("controller.quorum.auto.join.enable", "true")]),
        broker_props: super::e2e::single_broker_props(),
    };
    let mut c = Cluster::new_dynamic(env, &spec)?;
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    start_standalone(env, &mut c, ids[0])?;
    let t0 = Instant::now();
    for id in &ids[1..] {
        c.format_node(*id, &Format::NoInitialControllers)?;
        c.start(*id)?;
    }
    let want = voter_keys(&mut c, &ids)?;
    let boot = c.controller_bootstrap();
    wait_voters(env, &mut c, &boot, &want, Duration::from_secs(120))?;
    env.step(&format!(
        "{} observers joined the voter set by themselves in {}",
        ids.len() - 1,
        util::secs(t0.elapsed())
    ));
    let st = assert_voter_set(env, &mut c, &ids)?;
    for b in c.brokers.iter().map(|b| b.id).collect::<Vec<_>>() {
        c.format_node(b, &Format::Plain)?;
        c.start(b)?;
        c.wait_broker_ready(b, Duration::from_secs(150))?;
    }
    let mut p = start_acked_producer(env, &mut c)?;

    // Replace a follower's disk: it comes back as an observer with a new directory id, removes
    // (id, old directory) and adds (id, new directory) on its own.
    let victim = *ids
        .iter()
        .rev()
        .find(|i| **i != st.leader_id)
        .context("no follower")?;
    let old_dir = c.directory_id(victim)?;
    stop_clean(env, &mut c, victim)?;
    c.wipe(victim)?;
    c.format_node(victim, &Format::NoInitialControllers)?;
    let new_dir = c.directory_id(victim)?;
    if new_dir == old_dir {
        bail!("formatting the wiped disk again kept directory id {old_dir}");
    }
    let t0 = Instant::now();
    c.start(victim)?;
    let want = voter_keys(&mut c, &ids)?;
    wait_voters(env, &mut c, &boot, &want, Duration::from_secs(120))?;
    env.step(&format!(
        "{} with a new disk ({new_dir}) replaced its old key ({old_dir}) by itself in {}",
        mixed::label(&c, victim),
        util::secs(t0.elapsed())
    ));
    assert_voter_set(env, &mut c, &ids)?;
    more_acks(env, &mut p)?;
    round_trip(env, &c, "after-rejoin")?;
    let b = c.brokers[0].id;
    let f = super::kill_leader_and_measure(env, &mut c, "after-failover", 1)?;
    println!("failover_ms={}", f.failover_ms);
    wait_broker_follows(env, &c, b)?;
    more_acks(env, &mut p)?;
    mixed::restart_and_catch_up(env, &mut c, f.old_leader)?;
    assert_voter_set(env, &mut c, &ids)?;
    finish(env, &mut c, p)
}

/// The mixes `dynamic-mixed` runs: `IT_DYNAMIC_MIXES` (`;`-separated controller lists), default
/// `kraftwerk,kraftwerk,java;kraftwerk,java,java`.
pub fn mixes() -> Result<Vec<Vec<ControllerKind>>> {
    super::mixes::from_env(
        "IT_DYNAMIC_MIXES",
        "kraftwerk,kraftwerk,java;kraftwerk,java,java",
    )
}

/// `dynamic-mixed`.
pub fn run_mixed(env: &Env) -> Result<()> {
    for (i, mix) in mixes()?.iter().enumerate() {
        if i > 0 {
            super::mixes::set_aside_nodes(env, i)?;
        }
        run_one_mix(env, mix)?;
    }
    Ok(())
}

/// One mix: a dynamic quorum of `mix`; leadership onto each voter (SIGTERM hand-offs); one
/// controller of each kind in the mix added, one original voter of each kind removed (the
/// active controller whenever it is an original of that kind), the brokers restarted one at a
/// time with the final three as their bootstrap servers, leadership onto each of the final
/// three; logs byte-identical after every change.
fn run_one_mix(env: &Env, mix: &[ControllerKind]) -> Result<()> {
    let names = mix.iter().map(|k| k.label()).collect::<Vec<_>>().join(",");
    env.step(&format!("mix [{names}]"));
    let mut c = bootstrap_dynamic(
        env,
        mix,
        2,
        props(&[(
            "metadata.log.max.snapshot.interval.ms",
            mixed::SNAPSHOT_INTERVAL_MS,
        )]),
        mixed::two_broker_props(),
    )?;
    let mut traffic = Traffic::default();
    traffic.round(env, &c, &format!("[{names}] bootstrapped"))?;
    let mut history = Vec::new();
    mixed::lead_everywhere(env, &mut c, Stop::Term, &mut traffic, &mut history)?;

    let mut seen: Vec<ControllerKind> = Vec::new();
    for k in mix {
        if !seen.contains(k) {
            seen.push(*k);
        }
    }
    let originals: Vec<(i32, ControllerKind)> = c
        .controllers
        .iter()
        .map(|n| {
            (
                n.id,
                c.controller_kind(n.id).unwrap_or(ControllerKind::Java),
            )
        })
        .collect();
    for k in &seen {
        grow(env, &mut c, *k)?;
        traffic.round(env, &c, &format!("added a {} controller", k.label()))?;
    }
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    assert_voter_set(env, &mut c, &ids)?;
    let hw = checks::wait_converged(env, &c, Duration::from_secs(90))?;
    checks::assert_logs_agree(env, &c, hw)?;
    for k in &seen {
        // The active controller when it is an original of this kind (it must resign once its
        // removal is committed, scenario C11), else the first original of this kind.
        let leader = mixed::leader_status(&c)?.leader_id;
        let (id, _) = *originals
            .iter()
            .find(|(id, kind)| kind == k && *id == leader)
            .or_else(|| originals.iter().find(|(_, kind)| kind == k))
            .expect("every kind in seen is in the mix");
        if id == leader {
            env.step(&format!("removing the active controller {id}"));
        }
        remove_and_retire(env, &mut c, id)?;
        traffic.round(env, &c, &format!("removed {} controller {id}", k.label()))?;
    }
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    assert_voter_set(env, &mut c, &ids)?;
    roll_brokers_to_current_controllers(env, &mut c, &mut traffic)?;
    mixed::lead_everywhere(env, &mut c, Stop::Term, &mut traffic, &mut history)?;
    let hw = checks::wait_converged(env, &c, Duration::from_secs(90))?;
    checks::assert_logs_agree(env, &c, hw)?;
    checks::assert_healthy(&mut c)?;
    mixed::print_history(env, &c, &history);
    mixed::report_kraftwerk_errors(env, &c);
    c.stop_all(Duration::from_secs(60), Duration::from_secs(40))?;
    env.step(&format!(
        "mix [{names}] done: final voters {:?}",
        c.controllers.iter().map(|n| n.label()).collect::<Vec<_>>()
    ));
    Ok(())
}
