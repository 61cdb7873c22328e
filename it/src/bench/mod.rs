//! `bench-failover`: the controller failover benchmark behind `scripts/bench-failover` (issue 4,
//! item 6). A benchmark, not a test: it measures and records, and fails only when a system
//! could not be driven at all (no leader, creation refused, ...), never because a number is
//! "too slow".
//!
//! One run = one system at one metadata size (environment, set by the script):
//! `BENCH_SYSTEM` (one of [`SYSTEMS`]), `BENCH_PARTITIONS`, `BENCH_REPS`
//! (failovers of each kind), `BENCH_MODES` (`snapshot,replay` for the KRaft systems),
//! `BENCH_CSV` (rows are appended), `BENCH_RUN_ID`, `BENCH_ZK_KAFKA_VERSION` (3.9.1),
//! `BENCH_ZK_SERVERS` (3), `BENCH_SNAPSHOT_BYTES` (override of the snapshot threshold).
//! Quorum timeouts are Kafka's defaults, set explicitly for every system: election 1000 ms,
//! fetch 2000 ms; ZooKeeper sessions 2000 ms (tickTime 500).

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::PathBuf;

use crate::env::Env;

pub mod client;
mod kraft;
pub mod measure;
pub mod rpc;
pub(crate) mod simbroker;
mod zk;
mod zkclient;

/// Partitions per benchmark topic (the metadata is many 100-partition topics).
pub const PARTITIONS_PER_TOPIC: i32 = 100;
/// Topics per CreateTopics request while building the metadata.
pub const TOPICS_PER_REQUEST: usize = 20;
/// Partition-hosting brokers per system: at least 3, and at most 15 000 partitions per broker
/// (a real ZooKeeper-mode broker keeps one file descriptor per partition log and the hard
/// `nofile` limit here is 20 000; the same count is used for simulated brokers).
pub fn data_brokers(partitions: i64) -> usize {
    ((partitions + 14_999) / 15_000).max(3) as usize
}

/// The systems: kraftwerk's and Java's controllers plain, at kraft.version 1 (`-kv1`) and with
/// the controller listener on SSL with mutual TLS (`-tls`), and ZooKeeper mode.
pub const SYSTEMS: &[&str] = &[
    "kraftwerk",
    "kraftwerk-kv1",
    "kraftwerk-tls",
    "java",
    "java-kv1",
    "java-tls",
    "zookeeper",
];

/// The benchmark's settings for one run.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// One of [`SYSTEMS`].
    pub system: String,
    /// Partitions of metadata to build.
    pub partitions: i64,
    /// Failovers of each kind (controlled, uncontrolled) per mode.
    pub reps: usize,
    /// `snapshot` and/or `replay` (KRaft systems).
    pub modes: Vec<String>,
    /// CSV file rows are appended to.
    pub csv: PathBuf,
    /// Identifies the whole benchmark invocation in the CSV.
    pub run_id: String,
    /// Kafka version for ZooKeeper mode.
    pub zk_kafka_version: String,
    /// ZooKeeper servers in the ensemble.
    pub zk_servers: usize,
    /// Snapshot threshold override (`metadata.log.max.record.bytes.between.snapshots`).
    pub snapshot_bytes: Option<u64>,
}

fn var(name: &str, default: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_string())
}

impl BenchConfig {
    /// The `-kv1` systems: the quorum is upgraded to kraft.version 1 (voter set in the log,
    /// KIP-853) before the metadata is built, to compare failover with kraft.version 0.
    pub fn kraft_version_1(&self) -> bool {
        self.system.ends_with("-kv1")
    }

    /// The `-tls` systems: the same static quorum with the `CONTROLLER` listener on SSL and
    /// `ssl.client.auth=required`; controllers, simulated brokers and probes all present
    /// certificates signed by the run's CA ([`crate::certs`]).
    pub fn tls(&self) -> bool {
        self.system.ends_with("-tls")
    }

    /// Reads the `BENCH_*` environment.
    pub fn from_env(env: &Env) -> Result<BenchConfig> {
        let system = var("BENCH_SYSTEM", "kraftwerk");
        if !SYSTEMS.contains(&system.as_str()) {
            bail!(
                "BENCH_SYSTEM must be one of {}, not {system}",
                SYSTEMS.join(", ")
            );
        }
        Ok(BenchConfig {
            system,
            partitions: var("BENCH_PARTITIONS", "1000")
                .parse()
                .context("BENCH_PARTITIONS")?,
            reps: var("BENCH_REPS", "1").parse().context("BENCH_REPS")?,
            modes: var("BENCH_MODES", "snapshot,replay")
                .split(',')
                .map(|s| s.trim().to_string())
                .collect(),
            csv: PathBuf::from(var(
                "BENCH_CSV",
                &env.work.join("bench.csv").to_string_lossy(),
            )),
            run_id: var("BENCH_RUN_ID", &crate::util::timestamp()),
            zk_kafka_version: var("BENCH_ZK_KAFKA_VERSION", "3.9.1"),
            zk_servers: var("BENCH_ZK_SERVERS", "3")
                .parse()
                .context("BENCH_ZK_SERVERS")?,
            snapshot_bytes: std::env::var("BENCH_SNAPSHOT_BYTES")
                .ok()
                .and_then(|v| v.parse().ok()),
        })
    }
}

/// Appends result rows to the CSV (header written when the file is new) and echoes them.
pub struct Recorder<'a> {
    cfg: &'a BenchConfig,
    env: &'a Env,
    version: String,
}

/// The CSV header.
pub const CSV_HEADER: &str = "run_id,system,version,partitions,mode,rep,metric,value,unit";

impl<'a> Recorder<'a> {
    /// A recorder for `cfg`'s system at `version` (Kafka version or `kraftwerk`'s git rev).
    pub fn new(env: &'a Env, cfg: &'a BenchConfig, version: &str) -> Recorder<'a> {
        Recorder {
            cfg,
            env,
            version: version.to_string(),
        }
    }

    /// Records one value: `metric` in `unit` (`ms`, `bytes`, `offset`, `count`).
    pub fn record(
        &self,
        mode: &str,
        rep: usize,
        metric: &str,
        value: f64,
        unit: &str,
    ) -> Result<()> {
        let new = !self.cfg.csv.exists();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.cfg.csv)
            .with_context(|| format!("opening {}", self.cfg.csv.display()))?;
        if new {
            writeln!(f, "{CSV_HEADER}")?;
        }
        writeln!(
            f,
            "{},{},{},{},{mode},{rep},{metric},{value},{unit}",
            self.cfg.run_id, self.cfg.system, self.version, self.cfg.partitions
        )?;
        self.env.step(&format!(
            "RESULT {} {} {mode} rep {rep}: {metric} = {value} {unit}",
            self.cfg.system, self.cfg.partitions
        ));
        Ok(())
    }
}

/// The topics that make up `partitions` partitions: `bench-00000`, ... of
/// [`PARTITIONS_PER_TOPIC`] each (the last one smaller if needed).
pub fn metadata_topics(partitions: i64) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    let mut left = partitions;
    let mut i = 0;
    while left > 0 {
        let n = left.min(PARTITIONS_PER_TOPIC as i64) as i32;
        out.push((format!("bench-{i:05}"), n));
        left -= n as i64;
        i += 1;
    }
    out
}

/// Scenario entry point (`kraftwerk-it bench-failover`).
pub fn run(env: &Env) -> Result<()> {
    let cfg = BenchConfig::from_env(env)?;
    env.step(&format!(
        "bench-failover: system {}, {} partitions, {} rep(s), modes {:?}, csv {}",
        cfg.system,
        cfg.partitions,
        cfg.reps,
        cfg.modes,
        cfg.csv.display()
    ));
    // Others share this machine: the load when the run started goes into the CSV.
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| {
            l.split_whitespace()
                .next()
                .and_then(|v| v.parse::<f64>().ok())
        })
        .unwrap_or(-1.0);
    let version = match cfg.system.as_str() {
        "zookeeper" => cfg.zk_kafka_version.clone(),
        s if s.starts_with("java") => env.kafka().version.clone(),
        _ => format!(
            "kraftwerk-{}",
            std::env::var("BENCH_KRAFTWERK_REV").unwrap_or_else(|_| "dev".into())
        ),
    };
    Recorder::new(env, &cfg, &version).record("-", 0, "load_avg_1m_at_start", load, "load")?;
    match cfg.system.as_str() {
        "zookeeper" => zk::run(env, &cfg),
        _ => kraft::run(env, &cfg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_topics_add_up() {
        let t = metadata_topics(1050);
        assert_eq!(t.len(), 11);
        assert_eq!(t.iter().map(|(_, n)| *n as i64).sum::<i64>(), 1050);
        assert_eq!(t[10], ("bench-00010".to_string(), 50));
        assert!(metadata_topics(0).is_empty());
    }

    #[test]
    fn data_brokers_respect_the_descriptor_budget() {
        assert_eq!(data_brokers(1000), 3);
        assert_eq!(data_brokers(100_000), 7);
        assert!(100_000 / data_brokers(100_000) as i64 <= 15_000);
    }
}
