//! The data path, running throughout: `kafka-verifiable-producer` (acks=all, idempotent, a
//! fixed rate) prints one JSON line per acknowledged send with its partition and offset;
//! `kafka-verifiable-consumer --verbose` (a consumer group, from the earliest offset) prints one
//! JSON line per record it read. Every acknowledged `(partition, offset)` must be read back
//! with the same value: lost = 0. Both outputs are read incrementally (the long mode writes
//! tens of MB).

use anyhow::{bail, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::env::Env;
use crate::kafka::args;
use crate::procs::{Proc, StopOutcome};
use crate::util;

/// Messages per second the producer aims at.
const RATE: &str = "50";

/// Reads the complete lines appended to a file since the last call.
struct Tail {
    path: PathBuf,
    pos: u64,
    partial: String,
}

impl Tail {
    fn new(path: &Path) -> Tail {
        Tail {
            path: path.to_path_buf(),
            pos: 0,
            partial: String::new(),
        }
    }

    fn new_lines(&mut self) -> Vec<String> {
        let Ok(mut f) = std::fs::File::open(&self.path) else {
            return Vec::new();
        };
        if f.seek(SeekFrom::Start(self.pos)).is_err() {
            return Vec::new();
        }
        let mut buf = Vec::new();
        let n = f.read_to_end(&mut buf).unwrap_or(0);
        self.pos += n as u64;
        self.partial.push_str(&String::from_utf8_lossy(&buf));
        let mut lines: Vec<String> = self.partial.split('\n').map(str::to_string).collect();
        self.partial = lines.pop().unwrap_or_default();
        lines
    }
}

/// The producer and the consumer, with what they reported so far.
pub struct DataFlow {
    topic: String,
    producer: Option<Proc>,
    consumer: Option<Proc>,
    prod_tail: Tail,
    cons_tail: Tail,
    /// `(partition, offset)` → value, acknowledged.
    acked: BTreeMap<(i32, i64), String>,
    /// `(partition, offset)` → value, read by the consumer.
    consumed: BTreeMap<(i32, i64), String>,
    send_errors: usize,
    /// Records read more than once (rebalances re-deliver what was not committed).
    redelivered: usize,
}

/// The final tally.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct DataTally {
    /// Sends the producer had acknowledged.
    pub acked: usize,
    /// Distinct `(partition, offset)` the consumer read.
    pub consumed: usize,
    /// Acknowledged and never read.
    pub lost: usize,
    /// Failed sends the producer reported (not acknowledged, so not counted as lost).
    pub send_errors: usize,
    /// Records the consumer read more than once.
    pub redelivered: usize,
}

impl DataFlow {
    /// Starts both on `topic` through `boot`.
    pub fn start(env: &Env, boot: &str, topic: &str) -> Result<DataFlow> {
        let prod_out = env.work.join("verifiable-producer.log");
        let cons_out = env.work.join("verifiable-consumer.log");
        let producer = start_producer(env, boot, topic, &prod_out)?;
        let consumer = start_consumer(env, boot, topic, &cons_out)?;
        env.step(&format!(
            "kafka-verifiable-producer (pid {}, {RATE} msg/s, acks=all) and kafka-verifiable-consumer (pid {}) on {topic}",
            producer.pid(),
            consumer.pid()
        ));
        Ok(DataFlow {
            topic: topic.to_string(),
            producer: Some(producer),
            consumer: Some(consumer),
            prod_tail: Tail::new(&prod_out),
            cons_tail: Tail::new(&cons_out),
            acked: BTreeMap::new(),
            consumed: BTreeMap::new(),
            send_errors: 0,
            redelivered: 0,
        })
    }

    /// Reads what both printed since the last call.
    pub fn refresh(&mut self) {
        for l in self.prod_tail.new_lines() {
            match event(&l) {
                Some(("producer_send_success", v)) => {
                    if let Some((k, val)) = record_key(&v) {
                        self.acked.insert(k, val);
                    }
                }
                Some(("producer_send_error", _)) => self.send_errors += 1,
                _ => {}
            }
        }
        for l in self.cons_tail.new_lines() {
            if let Some(("record_data", v)) = event(&l) {
                if let Some((k, val)) = record_key(&v) {
                    if self.consumed.insert(k, val).is_some() {
                        self.redelivered += 1;
                    }
                }
            }
        }
    }

    /// Acknowledged and consumed counts so far.
    pub fn counts(&mut self) -> (usize, usize) {
        self.refresh();
        (self.acked.len(), self.consumed.len())
    }

    /// Errors if either process exited.
    pub fn check_alive(&mut self) -> Result<()> {
        for (what, p) in [
            ("kafka-verifiable-producer", &mut self.producer),
            ("kafka-verifiable-consumer", &mut self.consumer),
        ] {
            if !p.as_mut().is_some_and(|p| p.is_running()) {
                bail!("{what} on {} exited", self.topic);
            }
        }
        Ok(())
    }

    /// Waits until more than `n` sends were acknowledged and read back.
    pub fn wait_flowing(&mut self, n: usize, timeout: Duration) -> Result<(usize, usize)> {
        util::wait_until(
            &format!("more than {n} messages acknowledged and consumed"),
            timeout,
            Duration::from_millis(250),
            || {
                self.check_alive()?;
                let (a, c) = self.counts();
                Ok((a > n && c > n).then_some((a, c)))
            },
        )
    }

    /// Stops the producer (SIGTERM: it flushes and closes), waits until the consumer read every
    /// acknowledged offset (or `timeout`), stops it, and counts.
    pub fn finish(&mut self, env: &Env, timeout: Duration) -> Result<DataTally> {
        if let Some(mut p) = self.producer.take() {
            if let StopOutcome::Killed(_) = p.stop(Duration::from_secs(60)) {
                env.step("kafka-verifiable-producer ignored SIGTERM for 60 s: killed");
            }
        }
        self.refresh();
        let start = std::time::Instant::now();
        let caught_up = util::wait_until(
            "the consumer to read every acknowledged offset",
            timeout,
            Duration::from_millis(500),
            || {
                self.refresh();
                Ok((self.missing() == 0).then_some(()))
            },
        );
        if let Some(mut c) = self.consumer.take() {
            c.stop(Duration::from_secs(30));
        }
        self.refresh();
        let t = self.tally();
        env.step(&format!(
            "data: {} acknowledged, {} consumed, {} lost, {} failed sends, {} redelivered (consumer caught up: {} after {})",
            t.acked,
            t.consumed,
            t.lost,
            t.send_errors,
            t.redelivered,
            if caught_up.is_ok() { "yes" } else { "NO" },
            util::secs(start.elapsed())
        ));
        Ok(t)
    }

    fn missing(&self) -> usize {
        self.acked
            .keys()
            .filter(|k| !self.consumed.contains_key(k))
            .count()
    }

    /// The counts so far (value mismatches: [`DataFlow::mismatches`]).
    pub fn tally(&self) -> DataTally {
        DataTally {
            acked: self.acked.len(),
            consumed: self.consumed.len(),
            lost: self.missing(),
            send_errors: self.send_errors,
            redelivered: self.redelivered,
        }
    }

    /// Acknowledged offsets read with a different value (must be none), at most `max`.
    pub fn mismatches(&self, max: usize) -> Vec<String> {
        self.acked
            .iter()
            .filter_map(|(k, v)| match self.consumed.get(k) {
                Some(c) if c != v => Some(format!(
                    "partition {} offset {}: acked {v:?}, read {c:?}",
                    k.0, k.1
                )),
                _ => None,
            })
            .take(max)
            .collect()
    }

    /// A few acknowledged offsets never read, for the failure message.
    pub fn lost_examples(&self, max: usize) -> Vec<String> {
        self.acked
            .iter()
            .filter(|(k, _)| !self.consumed.contains_key(k))
            .take(max)
            .map(|((p, o), v)| format!("partition {p} offset {o} value {v}"))
            .collect()
    }
}

fn start_producer(env: &Env, boot: &str, topic: &str, out: &Path) -> Result<Proc> {
    let conf = env.work.join("conf/verifiable-producer.properties");
    // Retries for as long as a send may take: a controller fault never fails a send, it may
    // only delay it (brokers are never faulted).
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
        RATE,
        "--max-messages",
        "-1",
        "--acks",
        "-1",
        "--producer.config",
        &conf.to_string_lossy(),
    ]);
    let cmd = env.kafka().tool_command("kafka-verifiable-producer", &a)?;
    Proc::spawn("verifiable-producer", cmd, out, None, false)
}

fn start_consumer(env: &Env, boot: &str, topic: &str, out: &Path) -> Result<Proc> {
    let a = args(&[
        "--bootstrap-server",
        boot,
        "--topic",
        topic,
        "--group-id",
        "chaos-verifier",
        "--reset-policy",
        "earliest",
        "--verbose",
    ]);
    let cmd = env.kafka().tool_command("kafka-verifiable-consumer", &a)?;
    Proc::spawn("verifiable-consumer", cmd, out, None, false)
}

/// `(name, object)` of a JSON event line.
fn event(line: &str) -> Option<(&'static str, Value)> {
    if !line.starts_with('{') {
        return None;
    }
    let v: Value = serde_json::from_str(line).ok()?;
    let name = match v.get("name")?.as_str()? {
        "producer_send_success" => "producer_send_success",
        "producer_send_error" => "producer_send_error",
        "record_data" => "record_data",
        _ => return None,
    };
    Some((name, v))
}

/// `((partition, offset), value)` of a send or record event.
fn record_key(v: &Value) -> Option<((i32, i64), String)> {
    let p = v.get("partition")?.as_i64()? as i32;
    let o = v.get("offset")?.as_i64()?;
    let val = v.get("value")?.as_str()?.to_string();
    Some(((p, o), val))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_parse() {
        let s = r#"{"timestamp":1,"name":"producer_send_success","key":null,"value":"7","offset":12,"topic":"t","partition":2}"#;
        let (n, v) = event(s).unwrap();
        assert_eq!(n, "producer_send_success");
        assert_eq!(record_key(&v), Some(((2, 12), "7".to_string())));
        let r = r#"{"timestamp":1,"name":"record_data","key":null,"value":"7","topic":"t","partition":2,"offset":12}"#;
        assert_eq!(event(r).unwrap().0, "record_data");
        assert!(event(r#"{"name":"offsets_committed"}"#).is_none());
        assert!(event("SLF4J: no").is_none());
    }

    #[test]
    fn tail_returns_only_complete_new_lines() {
        let dir = std::env::temp_dir().join(format!("kwit-tail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.log");
        std::fs::write(&f, "a\nb\npart").unwrap();
        let mut t = Tail::new(&f);
        assert_eq!(t.new_lines(), ["a", "b"]);
        std::fs::write(&f, "a\nb\npartial\nc\n").unwrap();
        assert_eq!(t.new_lines(), ["partial", "c"]);
        assert!(t.new_lines().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
