//! Apache Kafka from the jar cache filled by `scripts/kafka-fetch`: where the jars are, which
//! main class each CLI tool has in this version, the JVM command lines for servers and tools,
//! and the log4j2 configuration files the harness writes (Kafka 4.x logs through log4j2).

use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::procs::{self, Captured};
use crate::util;

/// Tool name (as the distribution's script is called, without `.sh`) → candidate main classes,
/// newest location first (classes move between Kafka versions, e.g. DumpLogSegments moved from
/// `kafka.tools` to `org.apache.kafka.tools` in 4.4).
pub const TOOLS: &[(&str, &[&str])] = &[
    ("kafka-server-start", &["kafka.Kafka"]),
    ("kafka-topics", &["org.apache.kafka.tools.TopicCommand"]),
    (
        "kafka-console-producer",
        &[
            "org.apache.kafka.tools.ConsoleProducer",
            "kafka.tools.ConsoleProducer",
        ],
    ),
    (
        "kafka-console-consumer",
        &[
            "org.apache.kafka.tools.consumer.ConsoleConsumer",
            "kafka.tools.ConsoleConsumer",
        ],
    ),
    (
        "kafka-consumer-groups",
        &["org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"],
    ),
    (
        "kafka-metadata-quorum",
        &["org.apache.kafka.tools.MetadataQuorumCommand"],
    ),
    (
        "kafka-storage",
        &[
            "org.apache.kafka.tools.StorageTool",
            "kafka.tools.StorageTool",
        ],
    ),
    ("kafka-features", &["org.apache.kafka.tools.FeatureCommand"]),
    ("kafka-acls", &["org.apache.kafka.tools.AclCommand"]),
    (
        "kafka-delegation-tokens",
        &["org.apache.kafka.tools.DelegationTokenCommand"],
    ),
    (
        "kafka-reassign-partitions",
        &["org.apache.kafka.tools.reassign.ReassignPartitionsCommand"],
    ),
    ("kafka-cluster", &["org.apache.kafka.tools.ClusterTool"]),
    (
        "kafka-configs",
        &[
            "org.apache.kafka.tools.ConfigCommand",
            "kafka.admin.ConfigCommand",
        ],
    ),
    (
        "kafka-dump-log",
        &[
            "org.apache.kafka.tools.DumpLogSegments",
            "kafka.tools.DumpLogSegments",
        ],
    ),
    (
        "kafka-metadata-shell",
        &["org.apache.kafka.shell.MetadataShell"],
    ),
    (
        "kafka-verifiable-producer",
        &["org.apache.kafka.tools.VerifiableProducer"],
    ),
    (
        "kafka-verifiable-consumer",
        &["org.apache.kafka.tools.VerifiableConsumer"],
    ),
];

/// One fetched Kafka version.
pub struct Kafka {
    /// e.g. `4.1.2`.
    pub version: String,
    /// Directory of jars (`<cache>/kafka/<version>/libs`).
    pub libs: PathBuf,
    /// Directory for the harness's log4j2 files (inside the run's work dir).
    conf_dir: PathBuf,
    class_cache: Mutex<HashMap<String, String>>,
}

/// `${KRAFTWERK_CACHE:-$HOME/.cache/kraftwerk}`.
pub fn cache_dir() -> PathBuf {
    if let Ok(c) = std::env::var("KRAFTWERK_CACHE") {
        return PathBuf::from(c);
    }
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    PathBuf::from(home).join(".cache/kraftwerk")
}

fn command_works(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

impl Kafka {
    /// Finds Kafka `version` in the cache and checks that `java` and `mvn` exist.
    ///
    /// Errors (never skips): java or mvn missing, or the cache lacks a complete fetch (the
    /// message says to run `scripts/kafka-fetch VERSION`).
    pub fn locate(version: &str, conf_dir: &Path) -> Result<Kafka> {
        if !command_works("java", "-version") {
            bail!("`java` not found or not working (Kafka needs Java 17+)");
        }
        if !command_works("mvn", "-v") {
            bail!("`mvn` not found (scripts/kafka-fetch needs Maven to fetch the Kafka jars)");
        }
        let root = cache_dir().join("kafka").join(version);
        let libs = root.join("libs");
        if !root.join(".complete").exists()
            || !libs.join(format!("kafka_2.13-{version}.jar")).exists()
        {
            bail!(
                "Kafka {version} jars not in {} (run scripts/kafka-fetch {version})",
                libs.display()
            );
        }
        std::fs::create_dir_all(conf_dir)?;
        let k = Kafka {
            version: version.to_string(),
            libs,
            conf_dir: conf_dir.to_path_buf(),
            class_cache: Mutex::new(HashMap::new()),
        };
        k.write_log4j_files()?;
        Ok(k)
    }

    /// `major.minor` of this Kafka, e.g. `4.1`.
    pub fn minor_version(&self) -> String {
        self.version
            .split('.')
            .take(2)
            .collect::<Vec<_>>()
            .join(".")
    }

    /// The main class of `tool` in this version: the first candidate in [`TOOLS`] present in
    /// one of the Kafka jars (a zip's central directory stores names uncompressed, so a byte
    /// search finds `a/b/C.class`).
    pub fn tool_class(&self, tool: &str) -> Result<String> {
        if let Some(c) = self.class_cache.lock().unwrap().get(tool) {
            return Ok(c.clone());
        }
        let Some((_, candidates)) = TOOLS.iter().find(|(t, _)| *t == tool) else {
            bail!("unknown Kafka tool '{tool}'");
        };
        let mut jars = Vec::new();
        for e in std::fs::read_dir(&self.libs)? {
            let p = e?.path();
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            if name.starts_with("kafka") && name.ends_with(".jar") {
                jars.push(std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?);
            }
        }
        for class in candidates.iter() {
            let needle = format!("{}.class", class.replace('.', "/"));
            if jars
                .iter()
                .any(|j| j.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                self.class_cache
                    .lock()
                    .unwrap()
                    .insert(tool.to_string(), class.to_string());
                return Ok(class.to_string());
            }
        }
        bail!(
            "no main class for {tool} in Kafka {} (tried {})",
            self.version,
            candidates.join(", ")
        )
    }

    fn write_log4j_files(&self) -> Result<()> {
        // Servers: everything at INFO to stdout (the node's log file), and a Java controller's
        // ReplicationControlManager at DEBUG so ISR changes show as "Replayed partition change"
        // lines (at INFO a Java controller logs nothing for AlterPartition). Tools: WARN to stderr so
        // stdout carries only the tool's answer, plus the producer's "ProducerId set to" line
        // (proof that an idempotent producer got an id, i.e. AllocateProducerIds worked).
        let server = "status = warn\n\
            appender.out.type = Console\n\
            appender.out.name = OUT\n\
            appender.out.target = SYSTEM_OUT\n\
            appender.out.layout.type = PatternLayout\n\
            appender.out.layout.pattern = [%d{ISO8601}] %p %m (%c)%n\n\
            rootLogger.level = INFO\n\
            rootLogger.appenderRef.out.ref = OUT\n\
            logger.rcm.name = org.apache.kafka.controller.ReplicationControlManager\n\
            logger.rcm.level = DEBUG\n";
        let tools = "status = warn\n\
            appender.err.type = Console\n\
            appender.err.name = ERR\n\
            appender.err.target = SYSTEM_ERR\n\
            appender.err.layout.type = PatternLayout\n\
            appender.err.layout.pattern = [%d{ISO8601}] %p %m (%c)%n\n\
            rootLogger.level = WARN\n\
            rootLogger.appenderRef.err.ref = ERR\n\
            logger.txn.name = org.apache.kafka.clients.producer.internals.TransactionManager\n\
            logger.txn.level = INFO\n";
        std::fs::write(self.conf_dir.join("log4j2-server.properties"), server)?;
        std::fs::write(self.conf_dir.join("log4j2-tools.properties"), tools)?;
        Ok(())
    }

    fn java(&self, opts_env: &str, default_opts: &str, log4j: &str) -> Command {
        self.java_over(None, opts_env, default_opts, log4j)
    }

    /// `java` with this version's jars on the class path, after `first`'s when given (so
    /// `first`'s classes win where both have one).
    fn java_over(
        &self,
        first: Option<&Kafka>,
        opts_env: &str,
        default_opts: &str,
        log4j: &str,
    ) -> Command {
        let mut c = Command::new("java");
        let opts = std::env::var(opts_env).unwrap_or_else(|_| default_opts.to_string());
        c.args(opts.split_whitespace());
        c.arg(format!(
            "-Dlog4j2.configurationFile={}",
            self.conf_dir.join(log4j).display()
        ));
        let classpath = match first {
            Some(f) => format!("{}/*:{}/*", f.libs.display(), self.libs.display()),
            None => format!("{}/*", self.libs.display()),
        };
        c.arg("-cp").arg(classpath);
        // Kafka's scripts read these; make sure a user's environment does not leak in.
        c.env_remove("KAFKA_OPTS")
            .env_remove("KAFKA_HEAP_OPTS")
            .env_remove("CLASSPATH");
        c
    }

    /// `java <server opts> -cp <libs>/* kafka.Kafka <props>` (heap 512 MiB; override the JVM
    /// options with `IT_SERVER_JAVA_OPTS`).
    pub fn server_command(&self, props: &Path) -> Command {
        let mut c = self.java(
            "IT_SERVER_JAVA_OPTS",
            "-Xmx512m -Xms128m -XX:+UseSerialGC -XX:-UsePerfData -Djava.awt.headless=true",
            "log4j2-server.properties",
        );
        c.arg("kafka.Kafka").arg(props);
        c
    }

    /// `java <tool opts> -cp <libs>/* <main class of tool> args...` (small heap, C1 only and
    /// serial GC so the JVM starts fast; override with `IT_TOOL_JAVA_OPTS`).
    pub fn tool_command(&self, tool: &str, args: &[String]) -> Result<Command> {
        self.tool_command_over(None, tool, args)
    }

    /// Like [`Kafka::tool_command`], with `first`'s jars ahead of this version's on the class
    /// path: this version's tool reading with `first`'s classes. Used for
    /// `kafka-metadata-shell` on a release that publishes none (4.4.0): the newest shell runs
    /// over the release's own `MetadataVersion`, records and image classes, so it knows the
    /// release's levels (4.3.1's shell alone refuses 4.4-IV2, level 33).
    pub fn tool_command_over(
        &self,
        first: Option<&Kafka>,
        tool: &str,
        args: &[String],
    ) -> Result<Command> {
        let class = self.tool_class(tool)?;
        let mut c = self.java_over(
            first,
            "IT_TOOL_JAVA_OPTS",
            "-Xmx256m -Xms32m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Xshare:auto",
            "log4j2-tools.properties",
        );
        c.arg(class).args(args);
        Ok(c)
    }
}

/// Runs CLI tools and records every invocation in `<work>/tools.log` (outputs kept under
/// `<work>/tools/`).
pub struct Tools {
    /// The Kafka whose tools run.
    pub kafka: Kafka,
    work: PathBuf,
    seq: AtomicUsize,
    start: Instant,
}

impl Tools {
    /// Tools writing their outputs under `work`.
    pub fn new(kafka: Kafka, work: &Path, start: Instant) -> Result<Self> {
        std::fs::create_dir_all(work.join("tools"))?;
        Ok(Tools {
            kafka,
            work: work.to_path_buf(),
            seq: AtomicUsize::new(0),
            start,
        })
    }

    /// Runs `tool args...` to completion (killed after `timeout`), stdin from `stdin`.
    /// Never fails on a non-zero exit: callers decide (see [`Captured::ok`]).
    pub fn run(
        &self,
        tool: &str,
        args: &[String],
        stdin: Option<&Path>,
        timeout: Duration,
    ) -> Result<Captured> {
        self.run_in(&self.kafka, tool, args, stdin, timeout)
    }

    /// Like [`Tools::run`], with the tool taken from `kafka` (another cached version, for a
    /// tool this version does not publish).
    pub fn run_in(
        &self,
        kafka: &Kafka,
        tool: &str,
        args: &[String],
        stdin: Option<&Path>,
        timeout: Duration,
    ) -> Result<Captured> {
        self.run_with(kafka, None, tool, args, stdin, timeout)
    }

    /// Like [`Tools::run_in`], with the Kafka under test's jars ahead of `kafka`'s on the class
    /// path ([`Kafka::tool_command_over`]): `kafka`'s tool over this version's classes.
    pub fn run_over(
        &self,
        kafka: &Kafka,
        tool: &str,
        args: &[String],
        stdin: Option<&Path>,
        timeout: Duration,
    ) -> Result<Captured> {
        self.run_with(kafka, Some(&self.kafka), tool, args, stdin, timeout)
    }

    fn run_with(
        &self,
        kafka: &Kafka,
        first: Option<&Kafka>,
        tool: &str,
        args: &[String],
        stdin: Option<&Path>,
        timeout: Duration,
    ) -> Result<Captured> {
        let n = self.seq.fetch_add(1, Ordering::SeqCst);
        let cmd = kafka.tool_command_over(first, tool, args)?;
        let base = self.work.join("tools").join(format!("{n:04}-{tool}"));
        let out = base.with_extension("out");
        let err = base.with_extension("err");
        let at = self.start.elapsed();
        let r = procs::run_captured(tool, cmd, &out, &err, stdin, timeout)?;
        let status = if r.timed_out {
            format!("TIMED OUT after {}", util::secs(timeout))
        } else {
            format!(
                "exit {}",
                r.code
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "signal".into())
            )
        };
        let other = if let Some(f) = first.filter(|_| kafka.version != self.kafka.version) {
            format!(" (Kafka {} over {})", kafka.version, f.version)
        } else if kafka.version != self.kafka.version {
            format!(" (Kafka {})", kafka.version)
        } else {
            String::new()
        };
        let line = format!(
            "[+{:>7.1}s] #{n:04} {tool}{other} {} -> {status} in {:.2}s{}\n",
            at.as_secs_f64(),
            args.join(" "),
            r.elapsed.as_secs_f64(),
            if r.ok() {
                String::new()
            } else {
                format!(" | stderr: {}", util::one_line(&r.stderr, 300))
            }
        );
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.work.join("tools.log"))
        {
            let _ = f.write_all(line.as_bytes());
        }
        Ok(r)
    }

    /// Like [`Tools::run`] but an error unless the tool exits 0; the error quotes stderr.
    pub fn run_ok(
        &self,
        tool: &str,
        args: &[String],
        stdin: Option<&Path>,
        timeout: Duration,
    ) -> Result<Captured> {
        let r = self.run(tool, args, stdin, timeout)?;
        if !r.ok() {
            bail!(
                "{tool} {} failed ({}): {}",
                args.join(" "),
                if r.timed_out {
                    "timed out".to_string()
                } else {
                    format!("exit {:?}", r.code)
                },
                util::one_line(&format!("{}\n{}", r.stderr, r.stdout), 600)
            );
        }
        Ok(r)
    }
}

/// Builds an argument vector from string slices.
pub fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_candidates_and_unique_name() {
        let mut names: Vec<_> = TOOLS.iter().map(|(n, _)| *n).collect();
        let before = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), before);
        assert!(TOOLS.iter().all(|(_, c)| !c.is_empty()));
    }
}
