//! `chaos`: faults at random against a running cluster. Three controllers (five in the long
//! mode), each in its own network namespace on a bridge ([`crate::netns`]), and three Kafka
//! brokers on loopback. Throughout: an acks=all producer and a consumer group on a topic with
//! RF 3 and `min.insync.replicas=2` ([`data`]), and an operator's metadata workload through
//! the brokers with Kafka's CLI tools ([`workload`]). One fault at a time, drawn from a seed
//! ([`plan`]; `IT_CHAOS_SEED` replays it): SIGKILL, SIGTERM (then a restart, with or without
//! the page cache dropped), SIGSTOP/SIGCONT, or a network partition (the controller's veth
//! down, then up), of the active controller or of a random one; the cluster must recover
//! (every voter caught up) before a quiet pause and the next fault.
//!
//! At the end, the run fails unless: every acknowledged metadata operation is visible through
//! Kafka's tools; every acknowledged message was consumed (lost = 0); the controllers' logs are
//! byte-identical below the high watermark; no epoch had two leaders (LeaderChange records,
//! DescribeQuorum answers and the controllers' takeover log lines, [`epochs`]); and no broker
//! was ever fenced (brokers are never faulted: they kept heartbeating). The report
//! ([`summary`]) gives failover times per fault kind.
//!
//! Modes: short (default, 10 faults; `scripts/test` runs it), long (`--long`, or
//! `IT_CHAOS_FAULTS` ≥ 100: 5 controllers, 100 faults unless `IT_CHAOS_FAULTS` says more).
//! `IT_CHAOS_FAULTS=N` sets the number of faults in either mode.

use anyhow::{bail, Context, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::checks;
use crate::cluster::{props, Cluster, ClusterSpec, Place};
use crate::env::{ControllerKind, Env, Options};
use crate::netns::Net;
use crate::util;

pub mod data;
pub mod epochs;
pub mod faults;
pub mod observe;
pub mod ops;
pub mod plan;
pub mod records;
pub mod summary;
pub mod workload;

use faults::{FaultResult, Rig};
use observe::Observer;
use workload::Workload;

/// The data topic.
const TOPIC: &str = "chaos-data";
/// Faults in the short and the long mode.
const SHORT_FAULTS: usize = 10;
const LONG_FAULTS: usize = 100;
/// A count of faults from which `IT_CHAOS_FAULTS` means the long mode.
const LONG_FROM: usize = 100;

/// The run's parameters.
#[derive(Clone, Debug)]
pub struct Config {
    /// Plan seed.
    pub seed: u64,
    /// Number of faults.
    pub faults: usize,
    /// Long mode (5 controllers).
    pub long: bool,
    /// Controller implementations, by id.
    pub kinds: Vec<ControllerKind>,
}

impl Config {
    /// From `IT_CHAOS_SEED`, `IT_CHAOS_FAULTS`, `--long` and the controller slots (cycled to
    /// five in the long mode, so `IT_CONTROLLERS=java,java,java` gives five Java controllers).
    pub fn new(controllers: &[ControllerKind], long_flag: bool) -> Result<Config> {
        let faults_env = env_number("IT_CHAOS_FAULTS")?;
        let long = long_flag || faults_env.is_some_and(|n| n >= LONG_FROM as u64);
        let faults =
            faults_env
                .map(|n| n as usize)
                .unwrap_or(if long { LONG_FAULTS } else { SHORT_FAULTS });
        let seed = match env_number("IT_CHAOS_SEED")? {
            Some(s) => s,
            None => u64::from_le_bytes(util::random_bytes(8)?.try_into().expect("8 bytes")) >> 1,
        };
        let n = if long { 5 } else { 3 };
        if controllers.is_empty() {
            bail!("no controller kinds");
        }
        let kinds = (0..n).map(|i| controllers[i % controllers.len()]).collect();
        Ok(Config {
            seed,
            faults,
            long,
            kinds,
        })
    }
}

fn env_number(name: &str) -> Result<Option<u64>> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => Ok(Some(
            v.trim()
                .parse()
                .with_context(|| format!("{name}={v} is not a number"))?,
        )),
        _ => Ok(None),
    }
}

/// The watchdog deadline for this run: setup and checks, plus a generous minute per fault.
pub fn deadline(opts: &Options) -> Duration {
    let faults = Config::new(&opts.controllers, opts.long)
        .map(|c| c.faults)
        .unwrap_or(SHORT_FAULTS);
    Duration::from_secs(600 + 60 * faults as u64)
}

/// The scenario body.
pub fn run(env: &Env) -> Result<()> {
    let cfg = Config::new(&env.controllers, env.long)?;
    let plan = plan::make(cfg.seed, cfg.faults, cfg.kinds.len() as i32);
    announce(env, &cfg, &plan);
    let stale = crate::netns::remove_stale();
    if !stale.is_empty() {
        env.step(&format!("removed leftovers of an earlier run: {stale:?}"));
    }
    let net = Net::create(cfg.kinds.len())?;
    let mut c = start_cluster(env, &cfg, &net)?;
    let boot = c.broker_bootstrap();
    super::create_topic(env, &boot, TOPIC, 3, 3, &["min.insync.replicas=2"])?;
    let mut flow = data::DataFlow::start(env, &boot, TOPIC)?;
    flow.wait_flowing(0, Duration::from_secs(120))?;
    let nodes: Vec<(i32, String)> = c.controllers.iter().map(|n| (n.id, n.addr())).collect();
    let mut obs = Observer::start(&nodes);
    let brokers: Vec<i32> = c.brokers.iter().map(|b| b.id).collect();
    let w = Workload::new(env, &boot, brokers, cfg.seed);
    let results = {
        let mut rig = Rig {
            c: &mut c,
            net: &net,
            obs: &obs,
        };
        chaos_phase(env, &mut rig, &plan, &w, &mut flow)?
    };
    let tally = flow.finish(env, Duration::from_secs(120))?;
    let log = w.log.lock().unwrap_or_else(|e| e.into_inner()).clone();
    write_ops_log(env, &log)?;
    let report = final_checks(env, &mut c, &cfg, &obs, results, &log, tally)?;
    obs.stop();
    summary::publish(env, &report)?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(40))?;
    drop(net);
    Ok(())
}

fn announce(env: &Env, cfg: &Config, plan: &[plan::Fault]) {
    let kinds = cfg
        .kinds
        .iter()
        .map(|k| k.label())
        .collect::<Vec<_>>()
        .join(",");
    env.step(&format!(
        "chaos seed {} ({} mode, {} faults, controllers [{kinds}]); replay: IT_CHAOS_SEED={} IT_CHAOS_FAULTS={} IT_CONTROLLERS={kinds} scripts/it chaos{}",
        cfg.seed,
        if cfg.long { "long" } else { "short" },
        cfg.faults,
        cfg.seed,
        cfg.faults,
        if cfg.long { " --long" } else { "" }
    ));
    let shown: Vec<String> = plan.iter().take(12).map(|f| f.to_string()).collect();
    env.show(
        &format!("fault plan (first {} of {})", shown.len(), plan.len()),
        &shown.join("\n"),
    );
}

/// Formats and starts the controllers (one per namespace) and three brokers; returns once
/// every broker serves.
fn start_cluster<'e>(env: &'e Env, cfg: &Config, net: &Net) -> Result<Cluster<'e>> {
    let places: Vec<Place> = net
        .hosts
        .iter()
        .map(|h| Place {
            host: h.ip.clone(),
            netns: h.ns.clone(),
        })
        .collect();
    let spec = ClusterSpec {
        controllers: cfg.kinds.clone(),
        brokers: 3,
        // Snapshots now and then, so restarted controllers load one and replay the tail.
        controller_props: props(&[("metadata.log.max.snapshot.interval.ms", "30000")]),
        broker_props: props(&[
            ("offsets.topic.replication.factor", "3"),
            ("transaction.state.log.replication.factor", "3"),
            ("transaction.state.log.min.isr", "2"),
        ]),
    };
    let mut c = Cluster::new_placed(env, &spec, &places)?;
    env.step(&format!(
        "controllers in network namespaces on bridge {}: {}",
        net.bridge,
        c.controllers
            .iter()
            .zip(&net.hosts)
            .map(|(n, h)| format!("{} {} ({})", n.label(), n.addr(), h.ns))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    c.format_all()?;
    c.start_controllers()?;
    c.wait_quorum(Duration::from_secs(90))?;
    c.start_brokers()?;
    for b in c.brokers.iter().map(|b| b.id).collect::<Vec<_>>() {
        c.wait_broker_ready(b, Duration::from_secs(180))?;
    }
    Ok(c)
}

/// Runs the workload in a thread while the faults go on; stops it after the last one.
fn chaos_phase(
    env: &Env,
    rig: &mut Rig,
    plan: &[plan::Fault],
    w: &Workload,
    flow: &mut data::DataFlow,
) -> Result<Vec<FaultResult>> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let h = s.spawn(|| w.run(&stop));
        let r = run_plan(env, rig, plan, w, flow);
        stop.store(true, Ordering::SeqCst);
        env.step("stopping the metadata workload (after its current operation)");
        let _ = h.join();
        r
    })
}

fn run_plan(
    env: &Env,
    rig: &mut Rig,
    plan: &[plan::Fault],
    w: &Workload,
    flow: &mut data::DataFlow,
) -> Result<Vec<FaultResult>> {
    util::wait_until(
        "the metadata workload's first acknowledged operation",
        Duration::from_secs(120),
        Duration::from_millis(250),
        || Ok((w.progress().1 > 0).then_some(())),
    )?;
    let mut results = Vec::new();
    for f in plan {
        let r = rig.inject(env, f)?;
        rig.c.check_alive()?;
        flow.check_alive()?;
        let (issued, acked) = w.progress();
        let (sent, read) = flow.counts();
        env.step(&format!(
            "fault #{} done: {}; recovered {} ms after it ended; ops {acked}/{issued} acked, messages {sent} acked / {read} consumed",
            f.n,
            match (r.new_leader, r.failover_ms) {
                (Some((l, e)), Some(ms)) => format!("controller {l} leads epoch {e} {ms} ms after the fault"),
                _ => format!("leader unchanged ({} in epoch {})", r.old_leader, r.old_epoch),
            },
            r.recovered_ms
        ));
        results.push(r);
        util::sleep(Duration::from_millis(f.pause_ms))?;
    }
    rig.settle(Duration::from_secs(120))?;
    Ok(results)
}

fn write_ops_log(env: &Env, log: &[ops::Op]) -> Result<()> {
    let lines: Vec<String> = log
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<_, _>>()?;
    std::fs::write(env.work.join("metadata-ops.jsonl"), lines.join("\n") + "\n")?;
    Ok(())
}

/// Every end-of-run check; returns the report (printed and written by the caller).
fn final_checks(
    env: &Env,
    c: &mut Cluster,
    cfg: &Config,
    obs: &Observer,
    faults: Vec<FaultResult>,
    log: &[ops::Op],
    tally: data::DataTally,
) -> Result<summary::Report> {
    checks::assert_healthy(c)?;
    let boot = c.broker_bootstrap();
    let expected = workload::verify(env, &boot, log, Duration::from_secs(120))?;
    if tally.lost > 0 {
        bail!("{} acknowledged messages were never consumed", tally.lost);
    }
    let hw = checks::wait_converged(env, c, Duration::from_secs(120))?;
    checks::assert_logs_agree(env, c, hw)?;
    let logs = read_logs(c)?;
    let from_log = records::leader_per_epoch(&logs)?;
    let epochs = epochs::one_leader_per_epoch(&from_log, &obs.claims(), &epochs::takeovers(c))?;
    env.step(&format!("one leader per epoch: {epochs:?}"));
    let brokers = no_fencing(env, c, &logs, hw)?;
    super::mixed::report_kraftwerk_errors(env, c);
    Ok(summary::Report {
        mode: if cfg.long { "long" } else { "short" },
        seed: cfg.seed,
        controllers: cfg.kinds.iter().map(|k| k.label()).collect(),
        kafka_version: env.kafka().version.clone(),
        duration_s: env.elapsed().as_secs_f64(),
        faults_by_kind: summary::by_kind(&faults),
        faults,
        ops: summary::ops_report(log, &expected),
        data: tally,
        epochs,
        brokers,
        logs_identical_below: hw,
    })
}

/// Every controller's whole metadata log.
fn read_logs(c: &Cluster) -> Result<Vec<(String, Vec<checks::LogBatch>)>> {
    c.controllers
        .iter()
        .map(|n| {
            checks::read_batches(&checks::partition_dir(&n.data_dir()))
                .map(|b| (n.label(), b))
                .with_context(|| format!("reading {}'s metadata log", n.label()))
        })
        .collect()
}

/// No broker was fenced in the committed log (below `hw`), read from a log that starts at
/// offset 0; each broker's registrations are reported.
fn no_fencing(
    env: &Env,
    c: &Cluster,
    logs: &[(String, Vec<checks::LogBatch>)],
    hw: i64,
) -> Result<records::BrokerHistory> {
    let (name, batches) = logs
        .iter()
        .find(|(_, b)| b.first().is_some_and(|b| b.base_offset == 0))
        .context("no controller log starts at offset 0")?;
    let h = records::broker_history(batches, hw)?;
    let ids: Vec<i32> = c.brokers.iter().map(|b| b.id).collect();
    for id in &ids {
        if h.registrations.get(id).copied().unwrap_or(0) == 0 {
            bail!("broker {id} has no RegisterBrokerRecord in {name}'s log below {hw}");
        }
    }
    if !h.fencings.is_empty() {
        bail!(
            "brokers that were never stopped were fenced ({name}'s log below {hw}): {:?}",
            h.fencings
        );
    }
    env.step(&format!(
        "no broker fenced below offset {hw}; registrations per broker: {:?}",
        h.registrations
    ));
    Ok(h)
}
