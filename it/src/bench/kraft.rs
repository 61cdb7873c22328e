//! The KRaft systems: three controllers (kraftwerk or Apache Kafka's Java controller, same
//! properties) with simulated brokers ([`super::simbroker`]); metadata built with CreateTopics
//! sent straight to the active controller (as brokers do for internal topics).
//!
//! Per mode (`snapshot`: a threshold low enough that every controller writes snapshots while
//! the metadata is built; `replay`: a threshold of 1 TiB, so a restart replays the log from
//! offset 0) and repetition: SIGKILL the leader → failover probe → restart it → catch-up; then
//! SIGTERM the (new) leader → failover probe → restart → catch-up.
//!
//! The `-tls` systems run the same rounds with the `CONTROLLER` listener on SSL and
//! `ssl.client.auth=required` (the `tls` scenario's keys, [`crate::certs`]): controllers dial
//! each other over mutual TLS, and the simulated brokers, the probes and the tools connect with
//! a certificate of the run's CA.

use anyhow::{bail, Result};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::client::Transport;
use super::measure::{self, Probe};
use super::rpc::{self, TopicSpec};
use super::simbroker::SimBrokers;
use super::{data_brokers, metadata_topics, BenchConfig, Recorder, TOPICS_PER_REQUEST};
use crate::certs::{self, Props};
use crate::cluster::{props, Cluster, ClusterSpec};
use crate::env::{ControllerKind, Env};

/// First simulated broker id (controllers are 1..=3).
const FIRST_SIM_BROKER: i32 = 1001;

/// `metadata.log.max.record.bytes.between.snapshots` for a mode: a few snapshots while `n`
/// partitions are created (about 30 bytes per partition, at least 16 KiB), or never.
fn snapshot_threshold(cfg: &BenchConfig, mode: &str) -> u64 {
    match (mode, cfg.snapshot_bytes) {
        ("replay", _) => 1 << 40,
        (_, Some(b)) => b,
        _ => (cfg.partitions as u64 * 30).max(16 * 1024),
    }
}

/// How the controllers are secured: nothing (PLAINTEXT), or mutual TLS for the `-tls` systems.
struct Security {
    /// How the benchmark's own clients (probes, simulated brokers) connect.
    transport: Transport,
    /// Extra controller properties.
    controller_props: Props,
    /// `--command-config` of the Kafka tools run against the controllers.
    tools_config: Option<PathBuf>,
}

impl Security {
    /// PLAINTEXT, or for a `-tls` system a new CA and certificates for controllers 1..=3 and
    /// one (`admin`) that the probes, the simulated brokers and the tools present.
    fn for_system(env: &Env, cfg: &BenchConfig) -> Result<Security> {
        if !cfg.tls() {
            return Ok(Security {
                transport: Transport::Plaintext,
                controller_props: Vec::new(),
                tools_config: None,
            });
        }
        let dir = certs::make_certificates(env, &[1, 2, 3])?;
        Ok(Security {
            transport: Transport::Tls(certs::rustls_client(&dir, "admin")?),
            controller_props: certs::controller_mtls_props(&dir),
            tools_config: Some(certs::client_config(&dir, "admin", Some("admin"))?),
        })
    }
}

/// The controllers as the benchmark reaches them: addresses and transport.
struct Quorum {
    addrs: Vec<String>,
    transport: Transport,
}

pub fn run(env: &Env, cfg: &BenchConfig) -> Result<()> {
    let kind = if cfg.system.starts_with("kraftwerk") {
        ControllerKind::Kraftwerk
    } else {
        ControllerKind::Java
    };
    let version = match kind {
        ControllerKind::Kraftwerk => format!(
            "kraftwerk-{}",
            std::env::var("BENCH_KRAFTWERK_REV").unwrap_or_else(|_| "dev".into())
        ),
        ControllerKind::Java => env.kafka().version.clone(),
    };
    let rec = Recorder::new(env, cfg, &version);
    let sec = Security::for_system(env, cfg)?;
    for mode in &cfg.modes {
        if mode != "snapshot" && mode != "replay" {
            bail!("unknown BENCH_MODES entry {mode} (snapshot, replay)");
        }
        run_mode(env, cfg, kind, &sec, mode, &rec)?;
    }
    Ok(())
}

/// One mode: a fresh cluster, the metadata, `cfg.reps` rounds of an uncontrolled and a
/// controlled failover each followed by a restart, then the cluster moved aside.
fn run_mode(
    env: &Env,
    cfg: &BenchConfig,
    kind: ControllerKind,
    sec: &Security,
    mode: &str,
    rec: &Recorder,
) -> Result<()> {
    let mut c = start_controllers(env, cfg, kind, sec, mode)?;
    let quorum = Quorum {
        addrs: c.controllers.iter().map(|n| n.addr()).collect(),
        transport: sec.transport.clone(),
    };
    let (_, q) = measure::wait_leader(&quorum.addrs, &quorum.transport, Duration::from_secs(120))?;
    env.step(&format!(
        "leader {} in epoch {} ({})",
        q.leader_id,
        q.leader_epoch,
        quorum.transport.name()
    ));
    if cfg.kraft_version_1() {
        // The `-kv1` systems: the voter set then lives in the log (KIP-853).
        crate::scenarios::dynamic::upgrade_kraft_version(env, &quorum.addrs.join(","))?;
    }
    let mut sims = start_sim_brokers(env, cfg, &c, &quorum)?;
    build_metadata(env, cfg, &quorum, mode, rec)?;
    if mode == "snapshot" {
        wait_snapshots(env, &c, cfg)?;
    }
    let (_, q) = measure::find_leader(&quorum.addrs, &quorum.transport)?;
    sims.set_known_offset(q.high_watermark);
    record_snapshot(env, &c, q.leader_id, mode, rec)?;
    let mut probe_no = 0;
    for rep in 0..cfg.reps {
        for (signal, name) in [
            (libc::SIGKILL, "uncontrolled"),
            (libc::SIGTERM, "controlled"),
        ] {
            probe_no += 1;
            let at = Round {
                mode,
                kind,
                rep,
                signal,
                name,
                probe_no,
            };
            let old = fail_over(env, &mut c, &quorum, &at, rec)?;
            restart_and_catch_up(env, &mut c, &sims, &quorum, &old, &at, rec)?;
        }
    }
    record_end_of_mode(env, cfg, &mut c, &sims, mode, rec)?;
    sims.stop();
    c.stop_all(Duration::from_secs(10), Duration::from_secs(30))?;
    // The next mode builds a new cluster with the same node names: move this one aside.
    for n in c.controllers.iter() {
        let to = env.work.join(format!("{mode}-{}", n.name()));
        std::fs::rename(&n.dir, &to)?;
    }
    Ok(())
}

/// Formats and starts three `kind` controllers with the mode's snapshot threshold and `sec`'s
/// listener security.
fn start_controllers<'e>(
    env: &'e Env,
    cfg: &BenchConfig,
    kind: ControllerKind,
    sec: &Security,
    mode: &str,
) -> Result<Cluster<'e>> {
    let threshold = snapshot_threshold(cfg, mode);
    let threshold_s = threshold.to_string();
    let mut controller_props = props(&[
        ("controller.quorum.election.timeout.ms", "1000"),
        ("controller.quorum.fetch.timeout.ms", "2000"),
        ("broker.session.timeout.ms", "9000"),
        ("broker.heartbeat.interval.ms", "2000"),
        (
            "metadata.log.max.record.bytes.between.snapshots",
            &threshold_s,
        ),
    ]);
    controller_props.extend(sec.controller_props.iter().cloned());
    let spec = ClusterSpec {
        controllers: vec![kind; 3],
        brokers: 0,
        controller_props,
        broker_props: vec![],
    };
    env.step(&format!(
        "mode {mode}: snapshot threshold {threshold} bytes, controller listener {}",
        sec.transport.name()
    ));
    let mut c = Cluster::new(env, &spec)?;
    c.controller_client_config = sec.tools_config.clone();
    c.format_all()?;
    c.start_controllers()?;
    Ok(c)
}

/// Starts the simulated brokers the partitions need and waits until they are unfenced.
fn start_sim_brokers(
    env: &Env,
    cfg: &BenchConfig,
    c: &Cluster,
    quorum: &Quorum,
) -> Result<SimBrokers> {
    let n_brokers = data_brokers(cfg.partitions);
    let sims = SimBrokers::start(
        &quorum.addrs,
        &quorum.transport,
        &c.cluster_id,
        FIRST_SIM_BROKER,
        n_brokers,
        Duration::from_millis(2000),
    );
    sims.wait_unfenced(Duration::from_secs(60))?;
    env.step(&format!(
        "{n_brokers} simulated brokers registered and unfenced"
    ));
    Ok(sims)
}

/// Creates `cfg.partitions` partitions (CreateTopics at the leader) and records how long it
/// took.
fn build_metadata(
    env: &Env,
    cfg: &BenchConfig,
    quorum: &Quorum,
    mode: &str,
    rec: &Recorder,
) -> Result<()> {
    let t = Instant::now();
    let topics = metadata_topics(cfg.partitions);
    for chunk in topics.chunks(TOPICS_PER_REQUEST) {
        let specs: Vec<TopicSpec> = chunk
            .iter()
            .map(|(name, n)| TopicSpec {
                name: name.clone(),
                partitions: *n,
                replication_factor: 1,
                assignment: None,
            })
            .collect();
        create_at_leader(quorum, &specs)?;
    }
    let create = t.elapsed();
    rec.record(mode, 0, "create_all_ms", create.as_millis() as f64, "ms")?;
    env.step(&format!(
        "created {} partitions in {} topics in {:.1}s",
        cfg.partitions,
        topics.len(),
        create.as_secs_f64()
    ));
    Ok(())
}

/// Which failover of the run: mode, controller kind, repetition, the signal and its name, the
/// probe's number.
struct Round<'a> {
    mode: &'a str,
    kind: ControllerKind,
    rep: usize,
    signal: i32,
    name: &'a str,
    probe_no: usize,
}

/// The signalled leader, stopped.
struct OldLeader {
    id: i32,
    /// The other controllers' addresses.
    others: Vec<String>,
}

/// Signals the leader and probes CreateTopics at the others until one accepts it; records
/// the failover time (and, for SIGTERM, the time to the process's exit).
fn fail_over(
    env: &Env,
    c: &mut Cluster,
    quorum: &Quorum,
    at: &Round,
    rec: &Recorder,
) -> Result<OldLeader> {
    let (mode, rep, signal, name) = (at.mode, at.rep, at.signal, at.name);
    let (_, q) = measure::wait_leader(&quorum.addrs, &quorum.transport, Duration::from_secs(60))?;
    let leader = q.leader_id;
    let rss = controllers_rss(c);
    rec.record(mode, rep, "controller_rss_bytes", rss as f64, "bytes")?;
    let topic = TopicSpec {
        name: format!("failover-{mode}-{}", at.probe_no),
        partitions: 1,
        replication_factor: 1,
        assignment: None,
    };
    let others: Vec<String> = c
        .controllers
        .iter()
        .filter(|n| n.id != leader)
        .map(|n| n.addr())
        .collect();
    let t0 = Instant::now();
    c.node(leader)?.proc()?.signal(signal)?;
    let p: Probe = measure::probe_create(
        &others,
        &quorum.transport,
        &topic,
        30_000,
        t0,
        Duration::from_secs(120),
    )?;
    rec.record(
        mode,
        rep,
        &format!("failover_{name}_ms"),
        p.elapsed.as_secs_f64() * 1000.0,
        "ms",
    )?;
    env.step(&format!(
        "{name} failover: controller {leader} signalled, CreateTopics succeeded at {} after {:.0} ms ({} attempts)",
        p.addr,
        p.elapsed.as_secs_f64() * 1000.0,
        p.attempts
    ));
    let exit = c.stop(leader, Duration::from_secs(30))?;
    if signal == libc::SIGTERM {
        // From SIGTERM to the process being reaped (polled every 20 ms).
        if let crate::procs::StopOutcome::Terminated(..) = exit {
            rec.record(
                mode,
                rep,
                "sigterm_exit_ms",
                t0.elapsed().as_millis() as f64,
                "ms",
            )?;
        }
    }
    Ok(OldLeader { id: leader, others })
}

/// Restarts the old leader and records how long it took to reach the high watermark (the
/// target once the others elected a leader), and from which offset it replayed its log.
fn restart_and_catch_up(
    env: &Env,
    c: &mut Cluster,
    sims: &SimBrokers,
    quorum: &Quorum,
    old: &OldLeader,
    at: &Round,
    rec: &Recorder,
) -> Result<()> {
    let (mode, rep, leader) = (at.mode, at.rep, old.id);
    let (_, q) = measure::wait_leader(&old.others, &quorum.transport, Duration::from_secs(60))?;
    sims.set_known_offset(q.high_watermark);
    let before = c.node(leader)?.log_lines("loaded snapshot").len();
    let t1 = Instant::now();
    c.start(leader)?;
    let d = measure::wait_caught_up(
        &quorum.addrs,
        &quorum.transport,
        leader,
        q.high_watermark,
        t1,
        Duration::from_secs(300),
    )?;
    let after_what = if at.signal == libc::SIGKILL {
        "kill"
    } else {
        "term"
    };
    rec.record(
        mode,
        rep,
        &format!("catchup_after_{after_what}_ms"),
        d.as_secs_f64() * 1000.0,
        "ms",
    )?;
    env.step(&format!(
        "controller {leader} restarted: log end offset reached the high watermark {} after {:.0} ms",
        q.high_watermark,
        d.as_secs_f64() * 1000.0
    ));
    let loaded = c.node(leader)?.log_lines("loaded snapshot");
    if let Some(l) = loaded.get(before) {
        if let Some(v) = measure::field_u64(l, "load_ms") {
            rec.record(mode, rep, "snapshot_load_ms", v as f64, "ms")?;
        }
        if let Some(v) = measure::field_u64(l, "offset") {
            rec.record(mode, rep, "restart_replay_from_offset", v as f64, "offset")?;
        }
    } else if at.kind == ControllerKind::Kraftwerk {
        rec.record(mode, rep, "restart_replay_from_offset", 0.0, "offset")?;
    }
    Ok(())
}

/// Records the simulated brokers' error answers and the controllers' peak RSS.
fn record_end_of_mode(
    env: &Env,
    cfg: &BenchConfig,
    c: &mut Cluster,
    sims: &SimBrokers,
    mode: &str,
    rec: &Recorder,
) -> Result<()> {
    let (stale, errs, last) = sims.anomalies();
    if stale + errs > 0 {
        env.step(&format!("simulated brokers saw {stale} STALE_BROKER_EPOCH and {errs} other error answers (last: {last})"));
    }
    rec.record(
        mode,
        0,
        "sim_broker_error_answers",
        (stale + errs) as f64,
        "count",
    )?;
    let rss = controllers_rss(c);
    rec.record(
        mode,
        cfg.reps.saturating_sub(1),
        "controller_rss_bytes",
        rss as f64,
        "bytes",
    )?;
    Ok(())
}

/// Sends one CreateTopics batch to whichever controller accepts it (retrying NOT_CONTROLLER
/// and transient failures for up to 5 minutes).
fn create_at_leader(quorum: &Quorum, specs: &[TopicSpec]) -> Result<()> {
    let retry = rpc::CreateRetry {
        total: Duration::from_secs(300),
        socket: Duration::from_secs(180),
        request_timeout_ms: 120_000,
        pause: Duration::from_millis(100),
    };
    rpc::create_topics_until_created(specs, &retry, &quorum.transport, || {
        Ok(quorum.addrs.clone())
    })
}

/// Max `VmHWM` over the running controllers.
fn controllers_rss(c: &mut Cluster) -> u64 {
    let mut max = 0;
    for n in c.controllers.iter_mut() {
        if let Ok(p) = n.proc() {
            max = max.max(measure::vm_hwm_bytes(p.pid()).unwrap_or(0));
        }
    }
    max
}

fn metadata_dir(c: &Cluster, id: i32) -> std::path::PathBuf {
    let n = c
        .controllers
        .iter()
        .find(|n| n.id == id)
        .expect("a controller id");
    n.data_dir()
        .join(kraftwerk_protocol::constants::METADATA_PARTITION_DIR)
}

/// Waits (up to 60 s + 1 s per 1000 partitions) until every controller has a `.checkpoint`.
fn wait_snapshots(env: &Env, c: &Cluster, cfg: &BenchConfig) -> Result<()> {
    let timeout = Duration::from_secs(60 + cfg.partitions as u64 / 1000);
    let start = Instant::now();
    loop {
        let have: Vec<bool> = c
            .controllers
            .iter()
            .map(|n| measure::latest_checkpoint(&metadata_dir(c, n.id)).is_some())
            .collect();
        if have.iter().all(|h| *h) {
            env.step(&format!(
                "every controller has a snapshot (after {:.1}s)",
                start.elapsed().as_secs_f64()
            ));
            return Ok(());
        }
        if start.elapsed() > timeout {
            env.step(&format!(
                "NOTE: not every controller wrote a snapshot within {timeout:?} ({have:?}); restarts in this mode replay what they have"
            ));
            return Ok(());
        }
        crate::util::sleep(Duration::from_millis(250))?;
    }
}

/// Records the leader's newest snapshot (offset, size) and how long writing it took, from the
/// log: kraftwerk's `snapshot written ... write_ms=N`; Java's time between `Creating new KRaft
/// snapshot file X` and `Successfully wrote X` (SnapshotGenerator / SnapshotEmitter).
fn record_snapshot(env: &Env, c: &Cluster, leader: i32, mode: &str, rec: &Recorder) -> Result<()> {
    let Some((offset, size)) = measure::latest_checkpoint(&metadata_dir(c, leader)) else {
        env.step(&format!(
            "controller {leader} has no snapshot file (mode {mode})"
        ));
        return Ok(());
    };
    rec.record(mode, 0, "snapshot_bytes", size as f64, "bytes")?;
    rec.record(mode, 0, "snapshot_offset", offset as f64, "offset")?;
    let node = c
        .controllers
        .iter()
        .find(|n| n.id == leader)
        .expect("leader is a controller");
    let mut write_ms: Option<u64> = None;
    for l in node.log_lines("snapshot written") {
        if let Some(v) = measure::field_u64(&l, "write_ms") {
            write_ms = Some(v);
        }
    }
    if write_ms.is_none() {
        let lines = node.log_lines("snapshot");
        let name = format!("{offset:020}-");
        let begin = lines
            .iter()
            .find(|l| l.contains("Creating new KRaft snapshot file") && l.contains(&name));
        let end = lines
            .iter()
            .find(|l| l.contains("Successfully wrote") && l.contains(&name));
        if let (Some(b), Some(e)) = (
            begin.and_then(|l| measure::java_log_ms(l)),
            end.and_then(|l| measure::java_log_ms(l)),
        ) {
            write_ms = Some(e.saturating_sub(b));
        }
    }
    if let Some(ms) = write_ms {
        rec.record(mode, 0, "snapshot_write_ms", ms as f64, "ms")?;
    }
    Ok(())
}
