//! The run context every scenario gets: work directory, Kafka and its tools, the kraftwerk
//! binary, which implementation runs each controller slot, and step printing.

use anyhow::{bail, Context, Result};
use kraftwerk_records::metadata_version::latest_production_of_release;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::kafka::{Kafka, Tools};
use crate::procs::Captured;
use crate::util;

/// Which implementation runs a controller slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControllerKind {
    /// `kraftwerk run --config ...`.
    Kraftwerk,
    /// Apache Kafka's `kafka.Kafka` with `process.roles=controller`.
    Java,
}

impl FromStr for ControllerKind {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "kraftwerk" | "k" => Ok(ControllerKind::Kraftwerk),
            "java" | "j" | "kafka" => Ok(ControllerKind::Java),
            other => bail!("unknown controller kind '{other}' (expected kraftwerk or java)"),
        }
    }
}

impl ControllerKind {
    /// `kraftwerk` or `java`.
    pub fn label(self) -> &'static str {
        match self {
            ControllerKind::Kraftwerk => "kraftwerk",
            ControllerKind::Java => "java",
        }
    }
}

/// Parses `IT_CONTROLLERS` syntax: comma-separated kinds, e.g. `java,kraftwerk,kraftwerk`.
pub fn parse_controllers(s: &str) -> Result<Vec<ControllerKind>> {
    let kinds = s
        .split(',')
        .filter(|x| !x.trim().is_empty())
        .map(str::parse)
        .collect::<Result<Vec<_>>>()?;
    if kinds.is_empty() {
        bail!("no controllers in '{s}'");
    }
    Ok(kinds)
}

/// Options common to every scenario (command line, else environment, else defaults).
#[derive(Clone, Debug)]
pub struct Options {
    /// Kafka version of brokers, Java controllers and tools (`KAFKA_VERSION`, default 4.1.2).
    pub kafka_version: String,
    /// Controller slots (`IT_CONTROLLERS`, default `kraftwerk,kraftwerk,kraftwerk`).
    pub controllers: Vec<ControllerKind>,
    /// The kraftwerk binary (`KRAFTWERK_BIN`, default `$CARGO_TARGET_DIR/debug/kraftwerk`).
    pub kraftwerk_bin: PathBuf,
    /// `--release-version` for formatting (`IT_RELEASE_VERSION`; default
    /// [`default_release_version`] of the Kafka version: the brokers' own newest production
    /// level, since kraftwerk formats 4.4-IV2 by default and e.g. a 4.1 broker cannot run it).
    pub release_version: Option<String>,
    /// Parent of the per-run work dirs (`IT_WORK_DIR`, default /tmp/kraftwerk-it).
    pub work_root: PathBuf,
    /// Run the scenario's long mode, where it has one (`--long`; `chaos`: 5 controllers, 100
    /// faults).
    pub long: bool,
}

impl Options {
    /// Defaults from the environment.
    pub fn from_env() -> Result<Options> {
        let target = std::env::var("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| crate::kafka::cache_dir().join("target"));
        Ok(Options {
            kafka_version: std::env::var("KAFKA_VERSION").unwrap_or_else(|_| "4.1.2".into()),
            controllers: parse_controllers(
                &std::env::var("IT_CONTROLLERS")
                    .unwrap_or_else(|_| "kraftwerk,kraftwerk,kraftwerk".into()),
            )?,
            kraftwerk_bin: std::env::var("KRAFTWERK_BIN")
                .map(PathBuf::from)
                .unwrap_or_else(|_| target.join("debug/kraftwerk")),
            release_version: std::env::var("IT_RELEASE_VERSION")
                .ok()
                .filter(|v| !v.is_empty()),
            work_root: std::env::var("IT_WORK_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|_| PathBuf::from("/tmp/kraftwerk-it")),
            long: false,
        })
    }
}

/// Everything a running scenario needs.
pub struct Env {
    /// Scenario name.
    pub scenario: String,
    /// `<work_root>/<scenario>-<timestamp>`.
    pub work: PathBuf,
    /// When the scenario started.
    pub start: Instant,
    /// Kafka and its CLI tools.
    pub tools: Tools,
    /// The kraftwerk binary (checked to exist when a slot uses it).
    pub kraftwerk_bin: PathBuf,
    /// metadata.version to format with (e.g. `4.1`).
    pub release_version: String,
    /// Controller slots.
    pub controllers: Vec<ControllerKind>,
    /// `--long`: the scenario's long mode.
    pub long: bool,
    /// Parent of the per-run work dirs.
    pub work_root: PathBuf,
}

impl Env {
    /// Creates the work dir and locates Kafka (and kraftwerk, if any slot uses it).
    pub fn new(scenario: &str, opts: &Options) -> Result<Env> {
        let start = Instant::now();
        let work = opts
            .work_root
            .join(format!("{scenario}-{}", util::timestamp()));
        let work = if work.exists() {
            opts.work_root.join(format!(
                "{scenario}-{}-{}",
                util::timestamp(),
                std::process::id()
            ))
        } else {
            work
        };
        std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
        crate::report::set_work_dir(work.clone());
        let kafka = Kafka::locate(&opts.kafka_version, &work.join("conf"))?;
        if opts.controllers.contains(&ControllerKind::Kraftwerk) && !opts.kraftwerk_bin.is_file() {
            bail!(
                "kraftwerk binary {} not found (build it with `cargo build -p kraftwerk`, or set IT_CONTROLLERS=java,java,java)",
                opts.kraftwerk_bin.display()
            );
        }
        let release_version = opts
            .release_version
            .clone()
            .unwrap_or_else(|| default_release_version(&kafka.minor_version()));
        let tools = Tools::new(kafka, &work, start)?;
        let env = Env {
            scenario: scenario.to_string(),
            work,
            start,
            tools,
            kraftwerk_bin: opts.kraftwerk_bin.clone(),
            release_version,
            controllers: opts.controllers.clone(),
            long: opts.long,
            work_root: opts.work_root.clone(),
        };
        env.step(&format!(
            "scenario {scenario}: Kafka {} (libs {}), controllers [{}], release-version {}, work dir {}",
            env.kafka().version,
            env.kafka().libs.display(),
            env.controllers.iter().map(|k| k.label()).collect::<Vec<_>>().join(","),
            env.release_version,
            env.work.display()
        ));
        Ok(env)
    }

    /// The Kafka in use.
    pub fn kafka(&self) -> &Kafka {
        &self.tools.kafka
    }

    /// Time since the scenario started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Prints `[+  12.3s] msg`.
    pub fn step(&self, msg: &str) {
        println!("[+{:>6.1}s] {msg}", self.elapsed().as_secs_f64());
    }

    /// Prints a titled block of tool output, indented.
    pub fn show(&self, title: &str, text: &str) {
        println!("[+{:>6.1}s] {title}:", self.elapsed().as_secs_f64());
        for l in text.lines() {
            println!("    {l}");
        }
    }

    /// Runs a Kafka CLI tool (see [`Tools::run`]).
    pub fn tool(
        &self,
        tool: &str,
        args: &[String],
        stdin: Option<&std::path::Path>,
        timeout: Duration,
    ) -> Result<Captured> {
        self.tools.run(tool, args, stdin, timeout)
    }

    /// Runs a Kafka CLI tool that must exit 0 (see [`Tools::run_ok`]).
    pub fn tool_ok(
        &self,
        tool: &str,
        args: &[String],
        stdin: Option<&std::path::Path>,
        timeout: Duration,
    ) -> Result<Captured> {
        self.tools.run_ok(tool, args, stdin, timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controller_lists() {
        assert_eq!(
            parse_controllers("java,kraftwerk, java").unwrap(),
            vec![
                ControllerKind::Java,
                ControllerKind::Kraftwerk,
                ControllerKind::Java
            ]
        );
        assert!(parse_controllers("java,zookeeper").is_err());
        assert!(parse_controllers("").is_err());
    }
}

/// The release version a cluster of Kafka `kafka_version` brokers is formatted at by default:
/// the newest production metadata.version of that release (`LATEST_PRODUCTION` of its jar,
/// [`latest_production_of_release`]) as its release name (`4.1.2` → `4.1`, i.e. 4.1-IV1), or
/// the version's own major.minor for a release kraftwerk's table does not list.
pub fn default_release_version(kafka_version: &str) -> String {
    match latest_production_of_release(kafka_version) {
        Some(mv) => mv.release().to_owned(),
        None => kafka_version
            .split('.')
            .take(2)
            .collect::<Vec<_>>()
            .join("."),
    }
}

#[cfg(test)]
mod release_tests {
    use super::default_release_version;

    #[test]
    fn default_release_follows_the_brokers_release() {
        let cases = [
            ("4.0.2", "4.0"),
            ("4.1.2", "4.1"),
            ("4.2.2", "4.2"),
            ("4.3.1", "4.3"),
            ("4.4.0", "4.4"),
            ("4.1", "4.1"),
            ("3.9.1", "3.9"),
        ];
        for (kafka, release) in cases {
            assert_eq!(default_release_version(kafka), release, "{kafka}");
        }
    }
}
