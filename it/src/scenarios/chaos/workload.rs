//! The metadata workload: one operation at a time through the brokers with Kafka's CLI tools
//! (as an operator would), for as long as the faults go on, each recorded with its outcome
//! ([`super::ops`]); and the end-of-run look at the cluster with the same tools.

use anyhow::{bail, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::ops::{self, Observed, Op, OpKind, Outcome, ALTERED_CONFIG};
use super::plan::Rng;
use crate::env::Env;
use crate::kafka::args;
use crate::util;

/// How long one tool may run before its outcome counts as unknown (the admin client's own
/// default.api.timeout.ms is 60 s).
const OP_TIMEOUT: Duration = Duration::from_secs(90);

/// The loop's state: live entities to operate on and the log of operations.
pub struct Workload<'a> {
    env: &'a Env,
    boot: String,
    brokers: Vec<i32>,
    rng: Mutex<Rng>,
    /// Every operation issued, in order.
    pub log: Mutex<Vec<Op>>,
}

/// Entities the next operation may pick.
#[derive(Default)]
struct Live {
    /// Plain topics created (acked) and not yet deleted.
    plain: Vec<String>,
    /// Placed topics created (acked) with the replicas last asked for.
    placed: Vec<(String, Vec<i32>)>,
    next_id: usize,
}

impl<'a> Workload<'a> {
    /// A workload through `boot` (brokers `brokers`), choices drawn from `seed`.
    pub fn new(env: &'a Env, boot: &str, brokers: Vec<i32>, seed: u64) -> Workload<'a> {
        Workload {
            env,
            boot: boot.to_string(),
            brokers,
            rng: Mutex::new(Rng::new(seed ^ 0x6b77_6f72_6b6c_6f61)),
            log: Mutex::new(Vec::new()),
        }
    }

    /// Issues operations until `stop` is set.
    pub fn run(&self, stop: &AtomicBool) {
        let mut live = Live::default();
        while !stop.load(Ordering::SeqCst) && util::check_interrupted().is_ok() {
            let kind = self.pick(&mut live);
            let op = self.issue(kind);
            self.remember(&op, &mut live);
            self.log.lock().unwrap_or_else(|e| e.into_inner()).push(op);
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// `(issued, acked)` so far.
    pub fn progress(&self) -> (usize, usize) {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        (log.len(), log.iter().filter(|o| o.acked()).count())
    }

    /// The next operation, by weighted draw among those that have something to act on.
    fn pick(&self, live: &mut Live) -> OpKind {
        let mut rng = self.rng.lock().unwrap_or_else(|e| e.into_inner());
        live.next_id += 1;
        let id = live.next_id;
        let plain = live.plain.len() as u64;
        let placed = live.placed.len() as u64;
        let weights = [
            3,
            if plain > 0 { 3 } else { 0 },
            if plain >= 3 { 2 } else { 0 },
            if placed > 0 { 3 } else { 0 },
            2,
            if placed < 4 { 1 } else { 0 },
        ];
        let mut r = rng.range(0, weights.iter().sum::<u64>() - 1);
        let choice = weights
            .iter()
            .position(|w| {
                let hit = r < *w;
                r = r.saturating_sub(*w);
                hit
            })
            .unwrap_or(0);
        match choice {
            1 => OpKind::AlterConfig {
                topic: live.plain[rng.range(0, plain - 1) as usize].clone(),
                value: 3_600_000 + id as u64,
            },
            2 => OpKind::DeleteTopic {
                topic: live.plain.remove(rng.range(0, plain - 1) as usize),
            },
            3 => {
                let i = rng.range(0, placed - 1) as usize;
                let to = self.other_pair(&live.placed[i].1, &mut rng);
                live.placed[i].1 = to.clone();
                OpKind::Reassign {
                    topic: live.placed[i].0.clone(),
                    replicas: to,
                }
            }
            4 => OpKind::AddScram {
                user: format!("chaos-u{id}"),
            },
            5 => OpKind::CreatePlaced {
                topic: format!("chaos-m{id}"),
                replicas: self.other_pair(&[], &mut rng),
            },
            _ => OpKind::CreateTopic {
                topic: format!("chaos-t{id}"),
            },
        }
    }

    /// Two distinct brokers, in a random order, not the same pair as `current`.
    fn other_pair(&self, current: &[i32], rng: &mut Rng) -> Vec<i32> {
        let same = |p: &[i32]| {
            let a: BTreeSet<_> = p.iter().collect();
            let b: BTreeSet<_> = current.iter().collect();
            a == b
        };
        let n = self.brokers.len() as u64;
        loop {
            let a = self.brokers[rng.range(0, n - 1) as usize];
            let b = self.brokers[rng.range(0, n - 1) as usize];
            if a != b && !same(&[a, b]) {
                return vec![a, b];
            }
        }
    }

    /// Adds what an acknowledged creation made to `live`.
    fn remember(&self, op: &Op, live: &mut Live) {
        if !op.acked() {
            return;
        }
        match &op.kind {
            OpKind::CreateTopic { topic } => live.plain.push(topic.clone()),
            OpKind::CreatePlaced { topic, replicas } => {
                live.placed.push((topic.clone(), replicas.clone()))
            }
            _ => {}
        }
    }

    /// Runs the tool for `kind` and classifies its outcome.
    fn issue(&self, kind: OpKind) -> Op {
        let seq = self.log.lock().unwrap_or_else(|e| e.into_inner()).len();
        let at_s = self.env.elapsed().as_secs_f64();
        let start = Instant::now();
        let outcome = match self.command(&kind) {
            Ok((tool, a, success)) => match self.env.tool(tool, &a, None, OP_TIMEOUT) {
                Ok(r) if r.timed_out => Outcome::Timeout,
                Ok(r) => classify(
                    &kind,
                    r.ok(),
                    &format!("{}\n{}", r.stdout, r.stderr),
                    &success,
                ),
                Err(e) => Outcome::Error(util::one_line(&format!("{e:#}"), 200)),
            },
            Err(e) => Outcome::Error(util::one_line(&format!("{e:#}"), 200)),
        };
        Op {
            seq,
            at_s,
            took_ms: start.elapsed().as_millis() as u64,
            kind,
            outcome,
        }
    }

    /// `(tool, args, what its output says on success)` for `kind`.
    fn command(&self, kind: &OpKind) -> Result<(&'static str, Vec<String>, String)> {
        let b = self.boot.as_str();
        Ok(match kind {
            OpKind::CreateTopic { topic } => (
                "kafka-topics",
                args(&[
                    "--bootstrap-server",
                    b,
                    "--create",
                    "--topic",
                    topic,
                    "--partitions",
                    "1",
                    "--replication-factor",
                    "3",
                    "--config",
                    "min.insync.replicas=2",
                ]),
                format!("Created topic {topic}"),
            ),
            OpKind::CreatePlaced { topic, replicas } => (
                "kafka-topics",
                args(&[
                    "--bootstrap-server",
                    b,
                    "--create",
                    "--topic",
                    topic,
                    "--replica-assignment",
                    &join(replicas, ":"),
                ]),
                format!("Created topic {topic}"),
            ),
            // Exit 0 is the success: the tool prints nothing.
            OpKind::DeleteTopic { topic } => (
                "kafka-topics",
                args(&["--bootstrap-server", b, "--delete", "--topic", topic]),
                String::new(),
            ),
            OpKind::AlterConfig { topic, value } => (
                "kafka-configs",
                args(&[
                    "--bootstrap-server",
                    b,
                    "--alter",
                    "--entity-type",
                    "topics",
                    "--entity-name",
                    topic,
                    "--add-config",
                    &format!("{ALTERED_CONFIG}={value}"),
                ]),
                format!("Completed updating config for topic {topic}."),
            ),
            OpKind::Reassign { topic, replicas } => {
                let plan = self
                    .env
                    .work
                    .join(format!("reassign-{topic}-{}.json", util::unix_ms()));
                std::fs::write(
                    &plan,
                    format!(
                        r#"{{"version":1,"partitions":[{{"topic":"{topic}","partition":0,"replicas":[{}]}}]}}"#,
                        join(replicas, ",")
                    ),
                )?;
                (
                    "kafka-reassign-partitions",
                    args(&[
                        "--bootstrap-server",
                        b,
                        "--reassignment-json-file",
                        &plan.to_string_lossy(),
                        "--execute",
                    ]),
                    format!("Successfully started partition reassignment for {topic}-0"),
                )
            }
            OpKind::AddScram { user } => (
                "kafka-configs",
                args(&[
                    "--bootstrap-server",
                    b,
                    "--alter",
                    "--entity-type",
                    "users",
                    "--entity-name",
                    user,
                    "--add-config",
                    &format!("SCRAM-SHA-256=[iterations=4096,password=pw-{user}]"),
                ]),
                format!("Completed updating config for user {user}."),
            ),
        })
    }
}

/// Acked when the tool exited 0 and printed `success`; a create answered "already exists"
/// also counts (names are unique to this run, so an earlier attempt of the same request,
/// retried by the admin client, created it).
fn classify(kind: &OpKind, exit_ok: bool, output: &str, success: &str) -> Outcome {
    let created_before = matches!(
        kind,
        OpKind::CreateTopic { .. } | OpKind::CreatePlaced { .. }
    ) && output.contains("already exists");
    if (exit_ok && output.contains(success)) || created_before {
        Outcome::Acked
    } else {
        Outcome::Error(util::one_line(output, 200))
    }
}

fn join(ids: &[i32], sep: &str) -> String {
    ids.iter().map(i32::to_string).collect::<Vec<_>>().join(sep)
}

/// Reads the final state with Kafka's tools until it shows what `ops` owe or `timeout`
/// passes (brokers apply metadata a moment after the controller commits it, and a move
/// finishes once the new replica caught up). Returns the expectation and the last reading.
pub fn verify(env: &Env, boot: &str, ops: &[Op], timeout: Duration) -> Result<ops::Expected> {
    let e = ops::expected(ops);
    let start = Instant::now();
    loop {
        let o = observe(env, boot)?;
        let m = ops::mismatches(&e, &o);
        if m.is_empty() {
            env.step(&format!(
                "metadata operations verified with Kafka's tools: {} topics present, {} deleted, {} configs, {} placements, {} SCRAM users ({})",
                e.present.len(),
                e.absent.len(),
                e.configs.len() + e.min_isr.len(),
                e.replicas.len(),
                e.users.len(),
                util::secs(start.elapsed())
            ));
            return Ok(e);
        }
        if start.elapsed() > timeout {
            bail!(
                "{} acknowledged metadata operation(s) not visible after {}: {}",
                m.len(),
                util::secs(timeout),
                m.iter().take(8).cloned().collect::<Vec<_>>().join("; ")
            );
        }
        env.step(&format!("not yet: {}", util::one_line(&m.join("; "), 300)));
        util::sleep(Duration::from_secs(3))?;
    }
}

fn tool_stdout(env: &Env, tool: &str, a: &[&str]) -> Result<String> {
    Ok(env
        .tool_ok(tool, &args(a), None, Duration::from_secs(120))?
        .stdout)
}

/// One look at topics, placements, topic configs and SCRAM users.
fn observe(env: &Env, boot: &str) -> Result<Observed> {
    let list = tool_stdout(env, "kafka-topics", &["--bootstrap-server", boot, "--list"])?;
    let describe = tool_stdout(
        env,
        "kafka-topics",
        &[
            "--bootstrap-server",
            boot,
            "--describe",
            "--exclude-internal",
        ],
    )?;
    let configs = tool_stdout(
        env,
        "kafka-configs",
        &[
            "--bootstrap-server",
            boot,
            "--describe",
            "--entity-type",
            "topics",
        ],
    )?;
    let users = tool_stdout(
        env,
        "kafka-configs",
        &[
            "--bootstrap-server",
            boot,
            "--describe",
            "--entity-type",
            "users",
        ],
    )?;
    let replicas = crate::parse::parse_topic_describe(&describe)?
        .into_iter()
        .filter(|p| p.partition == 0)
        .map(|p| (p.topic, p.replicas))
        .collect();
    Ok(Observed {
        topics: list
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect(),
        replicas,
        configs: parse_topic_configs(&configs),
        users: parse_scram_users(&users),
    })
}

/// `kafka-configs --describe --entity-type topics`: `Dynamic configs for topic T are:` then
/// `  key=value sensitive=false synonyms={...}` lines.
fn parse_topic_configs(out: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut m: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for l in out.lines() {
        if let Some(rest) = l.strip_prefix("Dynamic configs for topic ") {
            current = rest.strip_suffix(" are:").map(str::to_string);
            if let Some(t) = &current {
                m.entry(t.clone()).or_default();
            }
        } else if let (Some(t), Some(kv)) = (&current, l.strip_prefix("  ")) {
            let first = kv.split(' ').next().unwrap_or("");
            if let Some((k, v)) = first.split_once('=') {
                m.entry(t.clone())
                    .or_default()
                    .insert(k.to_string(), v.to_string());
            }
        }
    }
    m
}

/// `SCRAM credential configs for user-principal 'U' are ...` lines.
fn parse_scram_users(out: &str) -> BTreeSet<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("SCRAM credential configs for user-principal '"))
        .filter_map(|r| r.split_once('\'').map(|(u, _)| u.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_and_user_listings_parse() {
        let cfg = "Dynamic configs for topic chaos-t1 are:\n  min.insync.replicas=2 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:min.insync.replicas=2, DEFAULT_CONFIG:min.insync.replicas=1}\n  retention.ms=3600007 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=3600007}\nDynamic configs for topic chaos-m2 are:\n";
        let m = parse_topic_configs(cfg);
        assert_eq!(m["chaos-t1"]["retention.ms"], "3600007");
        assert_eq!(m["chaos-t1"]["min.insync.replicas"], "2");
        assert!(m["chaos-m2"].is_empty());
        let users = "SCRAM credential configs for user-principal 'chaos-u4' are SCRAM-SHA-256=iterations=4096\nQuota configs for user-principal 'x' are a=1\n";
        assert_eq!(
            parse_scram_users(users).into_iter().collect::<Vec<_>>(),
            ["chaos-u4"]
        );
    }

    #[test]
    fn outcomes() {
        let c = OpKind::CreateTopic { topic: "t".into() };
        assert_eq!(
            classify(&c, true, "Created topic t.", "Created topic t"),
            Outcome::Acked
        );
        assert_eq!(
            classify(
                &c,
                false,
                "Error: Topic 't' already exists.",
                "Created topic t"
            ),
            Outcome::Acked
        );
        let d = OpKind::DeleteTopic { topic: "t".into() };
        assert_eq!(classify(&d, true, "", ""), Outcome::Acked);
        assert!(matches!(classify(&d, false, "boom", ""), Outcome::Error(_)));
    }
}
