//! `rolling-replace`: three Apache Kafka controllers formatted by `kafka-storage format`, two
//! brokers, and a producer (`kafka-verifiable-producer`, acks=all, idempotent) writing all the
//! time and printing which messages were acknowledged. The controllers are replaced one at a
//! time by kraftwerk on the same `node.id`, properties file and `metadata.log.dir`, then one at
//! a time back by Java, then controller 1 once more to kraftwerk and back (its kraftwerk index
//! is stale by then: Java appended to the directory, and may have rolled segments). Nothing is
//! ever re-formatted. `interchange` is the mirror image: kraftwerk controllers formatted by
//! `kraftwerk format` replaced by Java and back.
//!
//! At each step: the stopped process exited cleanly after SIGTERM; the new process opened the
//! directory without losing or changing a batch (kraftwerk's "metadata log opened" report names
//! the log end offset the segment files hold; Java's LogLoader logs no truncation and the
//! segments are byte for byte the same once it has loaded them); it caught up; admin writes,
//! produce and consume work; the producer kept getting acknowledgements; no process died or
//! logged a fault; the controllers' logs are byte-identical below the high watermark. At the
//! end every acknowledged message is read back, and Kafka's replay of every controller's log
//! (`kafka-metadata-shell`) prints the same image.

use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::checks;
use super::mixed::{self, Traffic};
use crate::cluster::Cluster;
use crate::env::{ControllerKind, Env};
use crate::kafka::args;
use crate::procs::{self, Proc, StopOutcome};
use crate::util;

const TOPIC: &str = "acked";

/// `rolling-replace`: Java controllers formatted by `kafka-storage format`, replaced by
/// kraftwerk and back.
pub fn run(env: &Env) -> Result<()> {
    run_rolling(env, ControllerKind::Java, ControllerKind::Kraftwerk)
}

/// `interchange`: the mirror image. kraftwerk controllers formatted by `kraftwerk format` are
/// replaced by Java (which then opens kraftwerk's `meta.properties`, `bootstrap.checkpoint`,
/// `quorum-state`, segments and snapshots) and back (kraftwerk's index is then stale in every
/// directory), then controller 1 once more.
pub fn run_interchange(env: &Env) -> Result<()> {
    run_rolling(env, ControllerKind::Kraftwerk, ControllerKind::Java)
}

/// Starts three `first` controllers (formatted by `first`'s tool), replaces them one at a time
/// by `second`, then back by `first`, then controller 1 by `second` and back again.
fn run_rolling(env: &Env, first: ControllerKind, second: ControllerKind) -> Result<()> {
    let mut c = mixed::start_cluster(env, &[first, first, first], 2)?;
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
            "2",
        ]),
        None,
        Duration::from_secs(90),
    )?;
    let mut producer = AckProducer::start(env, &boot, TOPIC)?;
    producer.wait_acks_beyond(env, 0, Duration::from_secs(60))?;
    let mut traffic = Traffic::default();
    traffic.round(env, &c, &format!("three {} controllers", first.label()))?;

    let mut steps: Vec<(i32, ControllerKind)> = Vec::new();
    steps.extend((1..=3).map(|id| (id, second)));
    steps.extend((1..=3).map(|id| (id, first)));
    steps.push((1, second));
    steps.push((1, first));
    let mut leaders: BTreeSet<String> = BTreeSet::new();
    let mut writers = checks::SnapshotWriters::new();
    for (i, (id, kind)) in steps.iter().enumerate() {
        replace(env, &mut c, *id, *kind, &mut writers)?;
        producer.check_alive()?;
        let before = producer.acked()?.acked.len();
        traffic.round(
            env,
            &c,
            &format!(
                "after step {} ({} now runs {})",
                i + 1,
                mixed::label(&c, *id),
                kind.label()
            ),
        )?;
        producer.wait_acks_beyond(env, before, Duration::from_secs(60))?;
        checks::assert_healthy(&mut c)?;
        let hw = checks::wait_converged(env, &c, Duration::from_secs(90))?;
        checks::assert_logs_agree(env, &c, hw)?;
        let st = mixed::leader_status(&c)?;
        leaders.insert(mixed::label(&c, st.leader_id));
        env.step(&format!(
            "step {} done: controllers [{}], leader {} (epoch {})",
            i + 1,
            c.controllers
                .iter()
                .map(|n| n.label())
                .collect::<Vec<_>>()
                .join(", "),
            mixed::label(&c, st.leader_id),
            st.leader_epoch
        ));
    }
    env.step(&format!("controllers that led during the run: {leaders:?}"));

    let acks = producer.stop(env)?;
    let got = consume_all(env, &boot, TOPIC)?;
    assert_acked_read_back(env, &acks, &got, &[])?;

    let hw = checks::wait_converged(env, &c, Duration::from_secs(90))?;
    checks::assert_logs_agree(env, &c, hw)?;
    checks::assert_images_agree(env, &c, hw, &writers)?;
    checks::assert_healthy(&mut c)?;
    mixed::report_kraftwerk_errors(env, &c);
    c.stop_all(Duration::from_secs(60), Duration::from_secs(40))?;
    Ok(())
}

/// Stops controller `id` (SIGTERM, must exit cleanly), starts `kind` on the same directory and
/// checks it opened the log whole and caught up.
pub(super) fn replace(
    env: &Env,
    c: &mut Cluster,
    id: i32,
    kind: ControllerKind,
    writers: &mut checks::SnapshotWriters,
) -> Result<()> {
    let old = mixed::label(c, id);
    let old_kind = c.controller_kind(id).context("not a controller")?;
    match c.stop(id, Duration::from_secs(40))? {
        StopOutcome::Terminated(s, d) => env.step(&format!(
            "{old} exited {} after SIGTERM ({})",
            util::secs(d),
            procs::describe_status(&s)
        )),
        other => bail!("{old} did not stop gracefully after SIGTERM: {other:?}"),
    }
    checks::attribute_snapshots(c, id, old_kind, writers)?;
    let data = c.node(id)?.data_dir();
    let part = checks::partition_dir(&data);
    let before = checks::read_batches(&part)?;
    let on_disk = checks::end_offset(&before);
    let files = list_dir(&part);
    env.show(
        &format!(
            "{} after {old} stopped (log end offset {on_disk})",
            part.display()
        ),
        &files,
    );
    // kraftwerk ran here before and Java wrote to the directory since: its index is stale.
    let stale_index = kind == ControllerKind::Kraftwerk && part.join("kraftwerk-index").exists();
    c.set_controller_kind(id, kind)?;
    let log_lines_before = count_lines(&c.node(id)?.log);
    c.start(id)?;
    let log = c.node(id)?.log.clone();
    let label = mixed::label(c, id);
    // When the new process has loaded the log (before it fetches anything): kraftwerk's
    // "metadata log opened" report names the log end offset it recovered; Java logs no log end
    // offset at INFO, so its segments are read right after its LogLoader finished.
    let opened = match kind {
        ControllerKind::Kraftwerk => wait_log_line(
            &log,
            log_lines_before,
            "metadata log opened",
            Duration::from_secs(60),
        )?,
        ControllerKind::Java => wait_log_line(
            &log,
            log_lines_before,
            "Producer state recovery took",
            Duration::from_secs(90),
        )?,
    };
    let after = checks::read_batches(&part)?;
    env.step(&format!(
        "{label} opened the directory: {}",
        util::one_line(&opened, 400)
    ));
    if kind == ControllerKind::Kraftwerk {
        let opened_end = number_after(&opened, "log_end_offset: ")
            .with_context(|| format!("no log end offset in {opened:?}"))?;
        if opened_end != on_disk {
            bail!(
                "{label} opened {} with log end offset {opened_end}, but the segments hold batches up to {on_disk}",
                part.display()
            );
        }
    }
    let lost: Vec<String> = log_lines_since(&log, log_lines_before)
        .into_iter()
        .filter(|l| JAVA_RECOVERY_LOSS.iter().any(|p| l.contains(p)))
        .collect();
    if !lost.is_empty() {
        bail!(
            "{label} cut the log it was given while loading it: {}",
            util::one_line(&lost.join("\n"), 600)
        );
    }
    let kept = after
        .iter()
        .filter(|b| b.last_offset < on_disk)
        .map(|b| &b.bytes)
        .eq(before.iter().map(|b| &b.bytes));
    if !kept {
        bail!(
            "{label} changed the batches below offset {on_disk} of {} while opening it",
            part.display()
        );
    }
    if kind == ControllerKind::Kraftwerk && stale_index {
        // Java appended (and may have rolled a segment) since kraftwerk last indexed this
        // directory: the log end check above is what proves the index hid nothing; say which
        // way kraftwerk got there.
        env.step(&format!(
            "stale kraftwerk index: {}",
            if opened.contains("Rebuilt") {
                "rebuilt from the segments"
            } else {
                "verified up to its last batch, the rest scanned"
            }
        ));
    }
    c.wait_quorum(Duration::from_secs(90))?;
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

fn list_dir(dir: &std::path::Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| {
                    let n = e.file_name().to_string_lossy().to_string();
                    let len = e.metadata().map(|m| {
                        if m.is_dir() {
                            "dir".to_string()
                        } else {
                            m.len().to_string()
                        }
                    });
                    format!("{n} ({})", len.unwrap_or_default())
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names.join("\n")
}

/// What Java's `LogLoader` logs when recovery cuts a log (a CRC or offset problem in a segment).
const JAVA_RECOVERY_LOSS: &[&str] = &[
    "Corruption found in segment",
    "Found invalid offset during recovery",
    "Deleting segments as part of log recovery",
    "Deleting all segments because logEndOffset",
    "Found invalid messages in log segment",
];

/// The lines of `path` after line `skip`.
fn log_lines_since(path: &std::path::Path, skip: usize) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| t.lines().skip(skip).map(util::strip_ansi).collect())
        .unwrap_or_default()
}

fn count_lines(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// Waits for the first line containing `needle` after line `skip` of `path`.
fn wait_log_line(
    path: &std::path::Path,
    skip: usize,
    needle: &str,
    timeout: Duration,
) -> Result<String> {
    util::wait_until(
        &format!("`{needle}` in {}", path.display()),
        timeout,
        Duration::from_millis(200),
        || {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            Ok(text
                .lines()
                .skip(skip)
                .map(util::strip_ansi)
                .find(|l| l.contains(needle)))
        },
    )
}

/// The integer right after `prefix` in `line`.
fn number_after(line: &str, prefix: &str) -> Option<i64> {
    let rest = &line[line.find(prefix)? + prefix.len()..];
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

/// How many acknowledgements a run must collect before its producer is stopped: 20 s of the
/// producer's 50 messages/s, so a check made at the end covers a real stretch of traffic
/// however fast the scenario's own steps went.
pub const MIN_ACKS: usize = 1000;

/// Every value the producer had acknowledged, and every one of `also_sent`, is in `got`; at
/// least [`MIN_ACKS`] were acknowledged. Prints the tally (`acked_messages=`, `failed_sends=`).
pub(super) fn assert_acked_read_back(
    env: &Env,
    acks: &Acks,
    got: &BTreeSet<String>,
    also_sent: &[String],
) -> Result<()> {
    let missing: Vec<&String> = acks
        .acked
        .iter()
        .chain(also_sent)
        .filter(|v| !got.contains(*v))
        .collect();
    env.step(&format!(
        "producer: {} acknowledged, {} failed sends; consumer read {} distinct values",
        acks.acked.len(),
        acks.errors,
        got.len()
    ));
    if !missing.is_empty() {
        bail!(
            "{} acknowledged messages were lost (e.g. {:?})",
            missing.len(),
            missing.iter().take(5).collect::<Vec<_>>()
        );
    }
    if acks.acked.len() < MIN_ACKS {
        bail!(
            "only {} messages were acknowledged during the whole run",
            acks.acked.len()
        );
    }
    println!("acked_messages={}", acks.acked.len());
    println!("failed_sends={}", acks.errors);
    Ok(())
}

/// What the verifiable producer reported.
pub struct Acks {
    /// Values whose send was acknowledged (`producer_send_success`), in order.
    pub acked: Vec<String>,
    /// Number of `producer_send_error` events.
    pub errors: usize,
}

/// `kafka-verifiable-producer` in the background: one JSON line per acknowledged or failed
/// send on stdout.
pub struct AckProducer {
    proc: Option<Proc>,
    out: PathBuf,
}

impl AckProducer {
    /// Starts it on `topic` at 50 messages/s, acks=all, idempotent, retrying for 2 minutes.
    pub fn start(env: &Env, boot: &str, topic: &str) -> Result<AckProducer> {
        let conf = env.work.join("conf/acked-producer.properties");
        std::fs::write(
            &conf,
            "acks=all\nenable.idempotence=true\nretries=2147483647\ndelivery.timeout.ms=120000\n\
             request.timeout.ms=30000\nlinger.ms=5\n",
        )?;
        let a = args(&[
            "--bootstrap-server",
            boot,
            "--topic",
            topic,
            "--throughput",
            "50",
            "--max-messages",
            "-1",
            "--producer.config",
            &conf.to_string_lossy(),
        ]);
        let cmd = env.kafka().tool_command("kafka-verifiable-producer", &a)?;
        let out = env.work.join("acked-producer.log");
        let proc = Proc::spawn("acked-producer", cmd, &out, None, true)?;
        env.step(&format!(
            "started kafka-verifiable-producer on {topic} (pid {}), output {}",
            proc.pid(),
            out.display()
        ));
        Ok(AckProducer {
            proc: Some(proc),
            out,
        })
    }

    /// Errors if the producer process exited.
    pub fn check_alive(&mut self) -> Result<()> {
        if self.proc.as_mut().is_some_and(|p| p.is_running()) {
            Ok(())
        } else {
            bail!(
                "kafka-verifiable-producer exited; see {}",
                self.out.display()
            )
        }
    }

    /// Parses its output so far.
    pub fn acked(&self) -> Result<Acks> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        let mut acks = Acks {
            acked: Vec::new(),
            errors: 0,
        };
        for l in text.lines().filter(|l| l.starts_with('{')) {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(l) else {
                continue;
            };
            match v.get("name").and_then(|n| n.as_str()) {
                Some("producer_send_success") => {
                    if let Some(val) = v.get("value").and_then(|x| x.as_str()) {
                        acks.acked.push(val.to_string());
                    }
                }
                Some("producer_send_error") => acks.errors += 1,
                _ => {}
            }
        }
        Ok(acks)
    }

    /// Waits until more than `n` sends were acknowledged.
    pub fn wait_acks_beyond(&mut self, env: &Env, n: usize, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        let got = util::wait_until(
            &format!("the producer to get more than {n} acknowledgements"),
            timeout,
            Duration::from_millis(250),
            || {
                self.check_alive()?;
                let a = self.acked()?;
                Ok((a.acked.len() > n).then_some(a.acked.len()))
            },
        )?;
        env.step(&format!(
            "producer: {got} acknowledged (waited {})",
            util::secs(start.elapsed())
        ));
        Ok(())
    }

    /// Waits (up to 90 s) until at least [`MIN_ACKS`] sends were acknowledged — a producer
    /// that stalls fails here — then SIGTERM (it flushes and closes the producer), then the
    /// final tally.
    pub fn stop(&mut self, env: &Env) -> Result<Acks> {
        if self.proc.is_some() {
            self.wait_acks_beyond(env, MIN_ACKS - 1, Duration::from_secs(90))?;
        }
        if let Some(mut p) = self.proc.take() {
            match p.stop(Duration::from_secs(60)) {
                StopOutcome::Terminated(..) => {}
                other => env.step(&format!("kafka-verifiable-producer stop: {other:?}")),
            }
        }
        self.acked()
    }
}

/// Reads `topic` from the beginning until nothing arrives for 20 s; returns the distinct values.
pub(super) fn consume_all(env: &Env, boot: &str, topic: &str) -> Result<BTreeSet<String>> {
    let r = env.tool(
        "kafka-console-consumer",
        &args(&[
            "--bootstrap-server",
            boot,
            "--topic",
            topic,
            "--group",
            "g-final",
            "--from-beginning",
            "--timeout-ms",
            "20000",
        ]),
        None,
        Duration::from_secs(600),
    )?;
    let got: BTreeSet<String> = r.stdout.lines().map(str::to_string).collect();
    if got.is_empty() {
        bail!(
            "kafka-console-consumer read nothing from {topic}: {}",
            util::one_line(&r.stderr, 400)
        );
    }
    env.step(&format!(
        "read {} lines ({} distinct) from {topic} in {}",
        r.stdout.lines().count(),
        got.len(),
        util::secs(r.elapsed)
    ));
    Ok(got)
}
