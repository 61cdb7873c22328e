//! `metrics`: each kraftwerk controller's `/metrics` scraped while the cluster changes, checked
//! under the Kafka names Strimzi's dashboard and alerts read (issue 13's acceptance): one
//! active controller and it is the Raft leader, every voter on the same epoch, the broker
//! counts; then the active controller is SIGKILLed (the count moves to its successor and the
//! epoch rises on every survivor) and a broker is SIGKILLed (the fenced broker count follows
//! once its session expires). Before the failover, every selector of every query of the
//! Grafana dashboard (`packaging/grafana/kraftwerk-controllers.json`) must match a sample of
//! the controllers' scrapes and promtool must evaluate every query to data ([`check_dashboard`]).

use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::time::Duration;

use super::e2e::single_broker_props;
use super::snapshot::probes::{add_metrics_listeners, scrape, scrape_text};
use crate::cluster::{props, Cluster, ClusterSpec, FIRST_BROKER_ID};
use crate::env::{ControllerKind, Env};
use crate::util;

const ACTIVE: &str = "kafka_controller_kafkacontroller_activecontrollercount";
const EPOCH: &str = "kafka_server_raftmetrics_current_epoch";
const LEADER_STATE: &str = "kafka_server_raftmetrics_current_state{current_state=\"leader\"}";
const CURRENT_LEADER: &str = "kafka_server_raftmetrics_current_leader";
const ACTIVE_BROKERS: &str = "kafka_controller_kafkacontroller_activebrokercount";
const FENCED_BROKERS: &str = "kafka_controller_kafkacontroller_fencedbrokercount";

/// Broker session timeout the controllers use, in ms: a killed broker is fenced this long after
/// its last heartbeat.
const SESSION_TIMEOUT_MS: u64 = 6_000;

/// One scrape of every kraftwerk controller still running: node id → metric → value.
type Scrapes = BTreeMap<i32, BTreeMap<String, f64>>;

fn scrape_all(c: &mut Cluster, endpoints: &[(i32, String)]) -> Result<Scrapes> {
    let mut out = BTreeMap::new();
    for (id, addr) in endpoints {
        if !c.node(*id)?.is_running() {
            continue;
        }
        out.insert(*id, scrape(addr)?);
    }
    Ok(out)
}

fn value(s: &Scrapes, id: i32, name: &str) -> Result<f64> {
    match s.get(&id).and_then(|m| m.get(name)) {
        Some(v) => Ok(*v),
        None => bail!("controller {id}: no `{name}` in /metrics"),
    }
}

/// The controller whose `ActiveControllerCount` is 1, when exactly one has it and every other
/// one reports 0; its `current_state` is leader and the others name it as `current_leader`.
fn the_active_controller(s: &Scrapes) -> Result<Option<(i32, f64)>> {
    let mut active = Vec::new();
    for id in s.keys() {
        let v = value(s, *id, ACTIVE)?;
        if v == 1.0 {
            active.push(*id);
        } else if v != 0.0 {
            bail!("controller {id}: {ACTIVE} is {v}");
        }
    }
    let [leader] = active[..] else {
        return Ok(None);
    };
    let epoch = value(s, leader, EPOCH)?;
    for id in s.keys() {
        if value(s, *id, EPOCH)? != epoch || value(s, *id, CURRENT_LEADER)? != leader as f64 {
            return Ok(None);
        }
    }
    if value(s, leader, LEADER_STATE)? != 1.0 {
        bail!("controller {leader} is active but {LEADER_STATE} is not 1");
    }
    Ok(Some((leader, epoch)))
}

/// Scrapes until one active controller agrees with every other one (or `limit` passes).
fn wait_active(
    c: &mut Cluster,
    endpoints: &[(i32, String)],
    limit: Duration,
    what: &str,
) -> Result<(i32, f64, Scrapes)> {
    let mut last = None;
    let t0 = std::time::Instant::now();
    while t0.elapsed() < limit {
        let s = scrape_all(c, endpoints)?;
        if let Some((leader, epoch)) = the_active_controller(&s)? {
            return Ok((leader, epoch, s));
        }
        last = Some(s);
        std::thread::sleep(Duration::from_millis(200));
    }
    bail!("{what}: no single active controller in /metrics after {limit:?}; last scrape: {last:?}")
}

/// Every selector (metric name and label matchers) of every query of the Grafana dashboard
/// matches at least one sample in the union of one scrape of each running controller, with
/// the `instance` (host:port) and `job` labels a Prometheus scrape adds. Template variables
/// (`$instance`) match anything. Then promtool (`promtool test rules`, Prometheus's PromQL
/// engine) evaluates every query over those samples as constant series: each must return
/// data (that shows the queries are well formed and select something, not that values are
/// right; no Prometheus server scrapes anything). Retries for up to
/// `limit` (a leader-only family appears a moment after an election); returns `(queries,
/// selectors, samples)`.
fn check_dashboard(
    c: &mut Cluster,
    endpoints: &[(i32, String)],
    limit: Duration,
) -> Result<(usize, usize, usize)> {
    let queries = kraftwerk_dashboard::queries(kraftwerk_dashboard::DASHBOARD_JSON)?;
    let selectors = queries.iter().map(|q| q.selectors.len()).sum();
    let t0 = std::time::Instant::now();
    loop {
        let mut samples = Vec::new();
        for (id, addr) in endpoints {
            if !c.node(*id)?.is_running() {
                continue;
            }
            let text = scrape_text(addr)?;
            samples.extend(
                kraftwerk_dashboard::samples::parse(&text)?
                    .into_iter()
                    .map(|s| {
                        s.with_label("instance", addr)
                            .with_label("job", "kraftwerk")
                    }),
            );
        }
        let unmatched: Vec<String> = kraftwerk_dashboard::unmatched(&queries, &samples)
            .iter()
            .map(|(q, s)| format!("{}: {s}", q.place))
            .collect();
        let problem = if unmatched.is_empty() {
            // Then Prometheus's PromQL engine: every query returns data over these samples.
            let promtool = kraftwerk_dashboard::promtool::locate();
            match kraftwerk_dashboard::promtool::evaluate(&promtool, &queries, &samples) {
                Ok(_) => return Ok((queries.len(), selectors, samples.len())),
                Err(e @ kraftwerk_dashboard::promtool::PromtoolError::Missing(_)) => bail!(e),
                Err(e) => e.to_string(),
            }
        } else {
            format!("selectors without a sample: {unmatched:#?}")
        };
        if t0.elapsed() >= limit {
            bail!("Grafana dashboard against the controllers' /metrics after {limit:?}: {problem}");
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The scenario body.
pub fn run(env: &Env) -> Result<()> {
    if env
        .controllers
        .iter()
        .filter(|k| **k == ControllerKind::Kraftwerk)
        .count()
        < 3
    {
        bail!("metrics scrapes kraftwerk controllers: IT_CONTROLLERS must be kraftwerk ×3");
    }
    let session = SESSION_TIMEOUT_MS.to_string();
    let spec = ClusterSpec {
        controllers: env.controllers.clone(),
        brokers: 2,
        controller_props: props(&[
            ("broker.session.timeout.ms", &session),
            ("broker.heartbeat.interval.ms", "1000"),
        ]),
        broker_props: single_broker_props(),
    };
    let mut c = Cluster::new(env, &spec)?;
    c.format_all()?;
    let endpoints = add_metrics_listeners(&c)?;
    c.start_controllers()?;
    c.wait_quorum(Duration::from_secs(90))?;
    c.start_brokers()?;
    for b in 0..2 {
        c.wait_broker_ready(FIRST_BROKER_ID + b, Duration::from_secs(120))?;
    }

    let (leader, epoch, s) = wait_active(&mut c, &endpoints, Duration::from_secs(30), "start")?;
    util::wait_until(
        "2 active brokers in the active controller's /metrics",
        Duration::from_secs(30),
        Duration::from_millis(200),
        || {
            let s = scrape_all(&mut c, &endpoints)?;
            Ok((value(&s, leader, ACTIVE_BROKERS)? == 2.0
                && value(&s, leader, FENCED_BROKERS)? == 0.0)
                .then_some(()))
        },
    )?;
    env.step(&format!(
        "/metrics: controller {leader} active (ActiveControllerCount 1, the others 0), epoch \
         {epoch} on all {}, 2 active brokers, 0 fenced",
        s.len()
    ));

    let (queries, selectors, samples) =
        check_dashboard(&mut c, &endpoints, Duration::from_secs(20))?;
    env.step(&format!(
        "Grafana dashboard: all {selectors} selectors of its {queries} queries match samples of \
         the {} controllers' /metrics ({samples} samples), and promtool evaluates every query \
         to data over them",
        endpoints.len()
    ));

    env.step(&format!("SIGKILL the active controller {leader}"));
    c.kill(leader)?;
    let (next, next_epoch, s) =
        wait_active(&mut c, &endpoints, Duration::from_secs(30), "after SIGKILL")?;
    if next == leader || next_epoch <= epoch {
        bail!("after SIGKILL of {leader}: active {next} at epoch {next_epoch} (was {epoch})");
    }
    env.step(&format!(
        "/metrics: controller {next} active at epoch {next_epoch} on the {} survivors",
        s.len()
    ));

    let victim = FIRST_BROKER_ID + 1;
    env.step(&format!("SIGKILL broker {victim}"));
    c.kill(victim)?;
    let t0 = std::time::Instant::now();
    util::wait_until(
        "1 fenced and 1 active broker in the active controller's /metrics",
        Duration::from_millis(SESSION_TIMEOUT_MS + 20_000),
        Duration::from_millis(200),
        || {
            let s = scrape_all(&mut c, &endpoints)?;
            Ok(
                (value(&s, next, FENCED_BROKERS)? == 1.0
                    && value(&s, next, ACTIVE_BROKERS)? == 1.0)
                    .then_some(()),
            )
        },
    )?;
    env.step(&format!(
        "/metrics: broker {victim} fenced {} ms after SIGKILL (session timeout {SESSION_TIMEOUT_MS} ms)",
        t0.elapsed().as_millis()
    ));
    c.stop_all(Duration::from_secs(30), Duration::from_secs(30))?;
    Ok(())
}
