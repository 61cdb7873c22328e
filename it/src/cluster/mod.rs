//! A cluster on loopback: N controllers (each kraftwerk or Java) and M Apache Kafka brokers,
//! each with its own directory, properties file, log file and process group.

use anyhow::{bail, Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::env::{ControllerKind, Env};
use crate::kafka::{args, Kafka};
use crate::procs::{self, Proc, StopOutcome};
use crate::util;

mod queries;

/// Broker ids start here so they never collide with controller ids 1..N.
pub const FIRST_BROKER_ID: i32 = 101;

/// What a node runs as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A controller (KRaft voter).
    Controller(ControllerKind),
    /// An Apache Kafka broker (`process.roles=broker`).
    Broker,
}

/// One node of the cluster.
pub struct Node {
    /// `node.id`.
    pub id: i32,
    /// Controller (which kind) or broker.
    pub role: Role,
    /// Listener port (CONTROLLER for controllers, PLAINTEXT for brokers).
    pub port: u16,
    /// Listener address: 127.0.0.1, or the node's address in its network namespace.
    pub host: String,
    /// Network namespace the process runs in (`ip netns exec`); None: the root namespace.
    pub netns: Option<String>,
    /// `<work>/<name>`: holds `server.properties`, `server.log`, `data/`.
    pub dir: PathBuf,
    /// Properties file passed to the process.
    pub props: PathBuf,
    /// stdout+stderr of every start of this node (appended; restarts are marked).
    pub log: PathBuf,
    proc: Option<Proc>,
    /// How many times the node was started.
    pub starts: u32,
    /// The Kafka release this node runs when it is a broker or a Java controller, if not the
    /// scenario's (`KAFKA_VERSION`); see [`Cluster::set_kafka_release`].
    pub kafka_release: Option<std::sync::Arc<Kafka>>,
}

impl Node {
    /// `controller-1` or `broker-101`.
    pub fn name(&self) -> String {
        match self.role {
            Role::Controller(_) => format!("controller-{}", self.id),
            Role::Broker => format!("broker-{}", self.id),
        }
    }

    /// `controller-1 (java)`, `broker-101`.
    pub fn label(&self) -> String {
        match self.role {
            Role::Controller(k) => format!("controller-{} ({})", self.id, k.label()),
            Role::Broker => self.name(),
        }
    }

    /// `<host>:<port>` (`127.0.0.1:<port>` unless placed in a namespace).
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// Metadata log directory (`metadata.log.dir`, and `log.dirs` for Kafka processes).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// True if started and not exited.
    pub fn is_running(&mut self) -> bool {
        self.proc.as_mut().map(|p| p.is_running()).unwrap_or(false)
    }

    /// The running process (error if not started or exited).
    pub fn proc(&mut self) -> Result<&mut Proc> {
        let name = self.label();
        if !self.is_running() {
            bail!("{name} is not running");
        }
        Ok(self.proc.as_mut().expect("running implies a process"))
    }

    /// Number of lines of this node's log containing `needle`.
    pub fn log_count(&self, needle: &str) -> usize {
        std::fs::read_to_string(&self.log)
            .map(|t| t.lines().filter(|l| l.contains(needle)).count())
            .unwrap_or(0)
    }

    /// Lines of this node's log containing `needle`, without terminal colour codes.
    pub fn log_lines(&self, needle: &str) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .map(|t| {
                t.lines()
                    .map(util::strip_ansi)
                    .filter(|l| l.contains(needle))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// What to build.
#[derive(Clone, Debug, Default)]
pub struct ClusterSpec {
    /// One entry per controller slot; ids are 1..=N in this order.
    pub controllers: Vec<ControllerKind>,
    /// Number of brokers; ids 101, 102, ...
    pub brokers: usize,
    /// Extra properties for every controller (e.g. `broker.session.timeout.ms`).
    pub controller_props: Vec<(String, String)>,
    /// Extra properties for every broker.
    pub broker_props: Vec<(String, String)>,
}

/// Where a controller runs: its listener address and network namespace (see `netns`).
#[derive(Clone, Debug)]
pub struct Place {
    /// Listener address.
    pub host: String,
    /// `ip netns exec` namespace.
    pub netns: String,
}

/// Builds a property list from `(key, value)` string pairs.
pub fn props(kv: &[(&str, &str)]) -> Vec<(String, String)> {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The running cluster. Dropping it SIGKILLs every node still running.
pub struct Cluster<'e> {
    env: &'e Env,
    /// The 22-character cluster id every node is formatted with.
    pub cluster_id: String,
    /// Controllers, ids 1..=N.
    pub controllers: Vec<Node>,
    /// Brokers, ids 101...
    pub brokers: Vec<Node>,
    /// Controllers taken out of the quorum (`remove-controller`) and out of
    /// [`Cluster::controllers`]; kept so that their logs stay reachable and dropping the
    /// cluster still kills them.
    pub retired: Vec<Node>,
    /// How the nodes find the controller quorum.
    pub quorum: QuorumConfig,
    /// `--command-config` for the tools that talk to the controllers (`kafka-metadata-quorum
    /// --bootstrap-controller`): the client's `security.protocol=SSL` and stores when the
    /// controller listener is SSL. `None`: PLAINTEXT.
    pub controller_client_config: Option<PathBuf>,
    /// Extra arguments for every controller's `kraftwerk format` / `kafka-storage format`
    /// (e.g. `--add-scram`).
    pub controller_format_args: Vec<String>,
    spec: ClusterSpec,
}

/// How the nodes' properties name the controller quorum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuorumConfig {
    /// `controller.quorum.voters=id@host:port,...` (a static quorum, kraft.version 0).
    Static,
    /// `controller.quorum.bootstrap.servers=host:port,...` only (KIP-853 dynamic quorum, as in
    /// Kafka 4.x's own `config/controller.properties` and `config/broker.properties`): the
    /// voter set comes from the log, which `kafka-storage format --standalone` /
    /// `--initial-controllers` seeds.
    Dynamic,
}

/// How one controller's storage is formatted (the flags are the same for `kafka-storage
/// format` and `kraftwerk format`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// No quorum flag: a static quorum from `controller.quorum.voters`, or a broker.
    Plain,
    /// `--standalone`: the bootstrap checkpoint names this controller as the only voter.
    Standalone,
    /// `--no-initial-controllers`: no voter set; the node joins as an observer and waits to
    /// be added with `kafka-metadata-quorum add-controller`.
    NoInitialControllers,
    /// `--initial-controllers id@host:port:directoryId,...`.
    InitialControllers(String),
}

impl Format {
    /// The extra `format` arguments.
    pub fn flags(&self) -> Vec<String> {
        match self {
            Format::Plain => Vec::new(),
            Format::Standalone => vec!["--standalone".into()],
            Format::NoInitialControllers => vec!["--no-initial-controllers".into()],
            Format::InitialControllers(v) => vec!["--initial-controllers".into(), v.clone()],
        }
    }
}

impl<'e> Cluster<'e> {
    /// Allocates ports and writes every node's properties file (nothing is started).
    pub fn new(env: &'e Env, spec: &ClusterSpec) -> Result<Cluster<'e>> {
        Cluster::new_placed(env, spec, &[])
    }

    /// Like [`Cluster::new`], with controller `i` (0-based) listening on `places[i]`'s address
    /// and running in its namespace (controllers beyond `places` stay on loopback).
    pub fn new_placed(env: &'e Env, spec: &ClusterSpec, places: &[Place]) -> Result<Cluster<'e>> {
        Cluster::build(env, spec, places, QuorumConfig::Static)
    }

    /// Like [`Cluster::new`], with every node configured by `controller.quorum.bootstrap.servers`
    /// (all of `spec`'s controllers) instead of `controller.quorum.voters`. Nothing is
    /// formatted: format each controller with [`Cluster::format_node`] (`--standalone` for the
    /// first, `--no-initial-controllers` for the others, as Kafka's operations guide does).
    pub fn new_dynamic(env: &'e Env, spec: &ClusterSpec) -> Result<Cluster<'e>> {
        Cluster::build(env, spec, &[], QuorumConfig::Dynamic)
    }

    fn build(
        env: &'e Env,
        spec: &ClusterSpec,
        places: &[Place],
        quorum: QuorumConfig,
    ) -> Result<Cluster<'e>> {
        let cluster_id = util::new_cluster_id()?;
        let mut controllers = Vec::new();
        for (i, kind) in spec.controllers.iter().enumerate() {
            let mut n = new_node(env, i as i32 + 1, Role::Controller(*kind))?;
            if let Some(p) = places.get(i) {
                n.host = p.host.clone();
                n.netns = Some(p.netns.clone());
            }
            controllers.push(n);
        }
        let mut brokers = Vec::new();
        for i in 0..spec.brokers {
            brokers.push(new_node(env, FIRST_BROKER_ID + i as i32, Role::Broker)?);
        }
        let quorum_line = match quorum {
            QuorumConfig::Static => format!(
                "controller.quorum.voters={}",
                controllers
                    .iter()
                    .map(|c| format!("{}@{}", c.id, c.addr()))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            QuorumConfig::Dynamic => format!(
                "controller.quorum.bootstrap.servers={}",
                controllers
                    .iter()
                    .map(Node::addr)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        };
        for n in controllers.iter().chain(brokers.iter()) {
            std::fs::write(&n.props, render_props(n, &quorum_line, spec))?;
        }
        Ok(Cluster {
            env,
            cluster_id,
            controllers,
            brokers,
            retired: Vec::new(),
            quorum,
            controller_client_config: None,
            controller_format_args: Vec::new(),
            spec: spec.clone(),
        })
    }

    /// A new controller of `kind` (id one above every controller id used so far), configured
    /// with `controller.quorum.bootstrap.servers` = the current controllers, whatever the
    /// others' configuration: a controller that joins later finds the quorum that way (Kafka's
    /// operations guide, "Add New Controller"). Its properties are written; it is neither
    /// formatted nor started.
    pub fn add_controller_node(&mut self, kind: ControllerKind) -> Result<i32> {
        let id = self
            .controllers
            .iter()
            .chain(self.retired.iter())
            .map(|n| n.id)
            .max()
            .unwrap_or(0)
            + 1;
        let n = new_node(self.env, id, Role::Controller(kind))?;
        let line = format!(
            "controller.quorum.bootstrap.servers={}",
            self.controller_bootstrap()
        );
        std::fs::write(&n.props, render_props(&n, &line, &self.spec))?;
        self.env.step(&format!(
            "new node {} on {} ({})",
            n.label(),
            n.addr(),
            n.props.display()
        ));
        self.controllers.push(n);
        Ok(id)
    }

    /// Rewrites node `id`'s properties with `controller.quorum.bootstrap.servers` = the current
    /// controllers (everything else as before); the node reads it at its next start. Returns
    /// the new line. Only for a dynamic quorum: a static one names its voters instead.
    pub fn set_quorum_bootstrap(&mut self, id: i32) -> Result<String> {
        if self.quorum != QuorumConfig::Dynamic {
            bail!("controller.quorum.bootstrap.servers is the configuration of a dynamic quorum");
        }
        let line = format!(
            "controller.quorum.bootstrap.servers={}",
            self.controller_bootstrap()
        );
        let n = self.serving_node(id)?;
        std::fs::write(&n.props, render_props(n, &line, &self.spec))
            .with_context(|| format!("writing {}", n.props.display()))?;
        Ok(line)
    }

    /// Moves stopped controller `id` from [`Cluster::controllers`] to [`Cluster::retired`]
    /// (after `remove-controller`): the checks that walk the controllers no longer expect it.
    pub fn retire_controller(&mut self, id: i32) -> Result<()> {
        let i = self
            .controllers
            .iter()
            .position(|n| n.id == id)
            .with_context(|| format!("no controller {id}"))?;
        if self.controllers[i].is_running() {
            bail!(
                "{} must be stopped before it is retired",
                self.controllers[i].label()
            );
        }
        let n = self.controllers.remove(i);
        self.retired.push(n);
        Ok(())
    }

    /// Deletes stopped node `id`'s data directory (a failed disk replaced by an empty one).
    pub fn wipe(&mut self, id: i32) -> Result<()> {
        let n = self.node(id)?;
        if n.is_running() {
            bail!("{} must be stopped before its disk is wiped", n.label());
        }
        let d = n.data_dir();
        if d.exists() {
            std::fs::remove_dir_all(&d).with_context(|| format!("removing {}", d.display()))?;
        }
        let label = n.label();
        self.env
            .step(&format!("wiped {label}'s disk ({} removed)", d.display()));
        Ok(())
    }

    /// `directory.id` of node `id`'s `meta.properties` (what `add-controller` sends as the
    /// voter's directory id).
    pub fn directory_id(&mut self, id: i32) -> Result<String> {
        let p = self.node(id)?.data_dir().join("meta.properties");
        let text =
            std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        text.lines()
            .find_map(|l| l.trim().strip_prefix("directory.id="))
            .map(|v| v.trim().to_string())
            .with_context(|| format!("no directory.id in {}", p.display()))
    }

    /// `host:port,...` of every controller (for `--bootstrap-controller`).
    pub fn controller_bootstrap(&self) -> String {
        self.controllers
            .iter()
            .map(Node::addr)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `host:port,...` of the given controllers only.
    pub fn controller_bootstrap_except(&self, skip: i32) -> String {
        self.controllers
            .iter()
            .filter(|c| c.id != skip)
            .map(Node::addr)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `host:port,...` of every broker (for `--bootstrap-server`).
    pub fn broker_bootstrap(&self) -> String {
        self.brokers
            .iter()
            .map(Node::addr)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `host:port,...` of every broker but `skip`.
    pub fn broker_bootstrap_except(&self, skip: i32) -> String {
        self.brokers
            .iter()
            .filter(|b| b.id != skip)
            .map(Node::addr)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The controller or broker with `id`, not a retired one.
    fn serving_node(&self, id: i32) -> Result<&Node> {
        self.controllers
            .iter()
            .chain(self.brokers.iter())
            .find(|n| n.id == id)
            .with_context(|| format!("no node {id}"))
    }

    /// The node with `id`.
    pub fn node(&mut self, id: i32) -> Result<&mut Node> {
        self.controllers
            .iter_mut()
            .chain(self.brokers.iter_mut())
            .chain(self.retired.iter_mut())
            .find(|n| n.id == id)
            .with_context(|| format!("no node {id}"))
    }

    /// Formats every node's storage: kraftwerk slots with `kraftwerk format`, Java controllers
    /// and brokers with `kafka-storage format`, all with the same cluster id and
    /// `--release-version`. Runs the formats in parallel.
    pub fn format_all(&self) -> Result<()> {
        self.env.step(&format!(
            "formatting {} controllers and {} brokers (cluster id {}, release-version {})",
            self.controllers.len(),
            self.brokers.len(),
            self.cluster_id,
            self.env.release_version
        ));
        let nodes: Vec<&Node> = self.controllers.iter().chain(self.brokers.iter()).collect();
        let results: Vec<Result<String>> = std::thread::scope(|s| {
            let handles: Vec<_> = nodes
                .iter()
                .map(|n| s.spawn(|| self.format(n, &Format::Plain)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| bail!("format thread panicked")))
                .collect()
        });
        for r in results {
            r?;
        }
        Ok(())
    }

    /// Formats node `id` with `how` (kraftwerk slots with `kraftwerk format`, the others with
    /// `kafka-storage format`; the cluster's id and `--release-version`). Returns what the tool
    /// printed.
    pub fn format_node(&mut self, id: i32, how: &Format) -> Result<String> {
        let n = self.serving_node(id)?;
        let out = self.format(n, how)?;
        self.env.step(&format!(
            "formatted {} ({}): {}",
            n.label(),
            if how.flags().is_empty() {
                "no quorum flag".to_string()
            } else {
                how.flags().join(" ")
            },
            util::one_line(&out, 300)
        ));
        Ok(out)
    }

    fn format(&self, n: &Node, how: &Format) -> Result<String> {
        let rv = &self.env.release_version;
        let extra: &[String] = match n.role {
            Role::Controller(_) => &self.controller_format_args,
            Role::Broker => &[],
        };
        let out = match n.role {
            Role::Controller(ControllerKind::Kraftwerk) => {
                let mut cmd = Command::new(&self.env.kraftwerk_bin);
                cmd.args(["format", "--cluster-id", &self.cluster_id, "--config"])
                    .arg(&n.props)
                    .args(["--release-version", rv])
                    .args(how.flags())
                    .args(extra);
                let r = procs::run_captured(
                    &format!("format {}", n.name()),
                    cmd,
                    &n.dir.join("format.out"),
                    &n.dir.join("format.err"),
                    None,
                    Duration::from_secs(60),
                )?;
                if !r.ok() {
                    bail!(
                        "`kraftwerk format {}` failed for {} ({:?}): {}",
                        [how.flags(), extra.to_vec()].concat().join(" "),
                        n.label(),
                        r.code,
                        util::one_line(&format!("{}\n{}", r.stderr, r.stdout), 600)
                    );
                }
                r.stdout
            }
            _ => {
                let mut a = args(&[
                    "format",
                    "--config",
                    &n.props.to_string_lossy(),
                    "--cluster-id",
                    &self.cluster_id,
                    "--release-version",
                    rv,
                ]);
                a.extend(how.flags());
                a.extend(extra.iter().cloned());
                self.env
                    .tool_ok("kafka-storage", &a, None, Duration::from_secs(90))
                    .with_context(|| format!("formatting {}", n.label()))?
                    .stdout
            }
        };
        if !n.data_dir().join("meta.properties").exists() {
            bail!(
                "formatting {} left no {}",
                n.label(),
                n.data_dir().join("meta.properties").display()
            );
        }
        Ok(out)
    }

    /// Starts node `id` (its log is appended to, with a marker line per start).
    pub fn start(&mut self, id: i32) -> Result<()> {
        let env = self.env;
        let n = self.node(id)?;
        if n.is_running() {
            bail!("{} is already running", n.label());
        }
        n.starts += 1;
        procs::append_marker(
            &n.log,
            &format!(
                "===== kraftwerk-it: start #{} of {} at +{:.1}s =====",
                n.starts,
                n.label(),
                env.elapsed().as_secs_f64()
            ),
        );
        let cmd = match n.role {
            Role::Controller(ControllerKind::Kraftwerk) => {
                let mut c = Command::new(&env.kraftwerk_bin);
                c.arg("run").arg("--config").arg(&n.props);
                if std::env::var_os("KRAFTWERK_LOG").is_none() {
                    c.env("KRAFTWERK_LOG", "info");
                }
                c.env("RUST_BACKTRACE", "1");
                // Plain text in log files (tracing-subscriber honours NO_COLOR).
                c.env("NO_COLOR", "1");
                c
            }
            _ => match &n.kafka_release {
                Some(kafka) => kafka.server_command(&n.props),
                None => env.kafka().server_command(&n.props),
            },
        };
        let cmd = match &n.netns {
            Some(ns) => crate::netns::exec_in(ns, &cmd),
            None => cmd,
        };
        n.proc = Some(Proc::spawn(&n.name(), cmd, &n.log, None, true)?);
        env.step(&format!(
            "started {} on {} (pid {})",
            n.label(),
            n.addr(),
            n.proc.as_ref().map(Proc::pid).unwrap_or(0)
        ));
        Ok(())
    }

    /// Starts every controller.
    pub fn start_controllers(&mut self) -> Result<()> {
        for id in self.controllers.iter().map(|c| c.id).collect::<Vec<_>>() {
            self.start(id)?;
        }
        Ok(())
    }

    /// Starts every broker.
    pub fn start_brokers(&mut self) -> Result<()> {
        for id in self.brokers.iter().map(|c| c.id).collect::<Vec<_>>() {
            self.start(id)?;
        }
        Ok(())
    }

    /// Errors if a node that was started has exited (names it, with its exit status).
    pub fn check_alive(&mut self) -> Result<()> {
        for n in self.controllers.iter_mut().chain(self.brokers.iter_mut()) {
            if let Some(p) = n.proc.as_mut() {
                if let Some(s) = p.try_exit() {
                    let name = n.label();
                    let status = procs::describe_status(&s);
                    n.proc = None;
                    bail!(
                        "{name} exited unexpectedly ({status}); see {}",
                        n.log.display()
                    );
                }
            }
        }
        Ok(())
    }

    /// Changes which implementation runs controller `id` from its next start on (the node
    /// keeps its `node.id`, properties file and `metadata.log.dir`). Errors if it is running or
    /// is a broker.
    pub fn set_controller_kind(&mut self, id: i32, kind: ControllerKind) -> Result<()> {
        let n = self.node(id)?;
        if n.is_running() {
            bail!(
                "{} must be stopped before it changes implementation",
                n.label()
            );
        }
        match n.role {
            Role::Controller(_) => n.role = Role::Controller(kind),
            Role::Broker => bail!("{} is a broker", n.label()),
        }
        Ok(())
    }

    /// Runs node `id` (a broker or a Java controller) on `kafka`'s jars from its next start on,
    /// with the same `node.id`, properties file and data directory: a rolling upgrade step. A
    /// running node keeps its process until it is stopped.
    pub fn set_kafka_release(&mut self, id: i32, kafka: std::sync::Arc<Kafka>) -> Result<()> {
        let n = self.node(id)?;
        n.kafka_release = Some(kafka);
        Ok(())
    }

    /// Which implementation runs controller `id` (None for a broker or an unknown id).
    pub fn controller_kind(&self, id: i32) -> Option<ControllerKind> {
        self.controllers
            .iter()
            .find(|c| c.id == id)
            .map(|c| match c.role {
                Role::Controller(k) => k,
                Role::Broker => unreachable!("controllers hold controller roles"),
            })
    }

    /// SIGSTOPs node `id` (it keeps its sockets but answers nothing until [`Cluster::thaw`]).
    pub fn freeze(&mut self, id: i32) -> Result<()> {
        self.node(id)?.proc()?.freeze()
    }

    /// SIGCONTs node `id` after [`Cluster::freeze`].
    pub fn thaw(&mut self, id: i32) -> Result<()> {
        self.node(id)?.proc()?.thaw()
    }

    /// SIGKILLs node `id` (crash) and reaps it.
    pub fn kill(&mut self, id: i32) -> Result<()> {
        let n = self.node(id)?;
        let mut p = n
            .proc
            .take()
            .with_context(|| format!("node {id} not started"))?;
        p.kill()?;
        p.wait_exit(Duration::from_secs(10));
        procs::append_marker(&n.log, "===== kraftwerk-it: SIGKILL =====");
        Ok(())
    }

    /// SIGTERM, wait up to `grace`, then SIGKILL node `id`. Returns how it ended.
    pub fn stop(&mut self, id: i32, grace: Duration) -> Result<StopOutcome> {
        let n = self.node(id)?;
        let mut p = n
            .proc
            .take()
            .with_context(|| format!("node {id} not started"))?;
        Ok(p.stop(grace))
    }

    /// Sends SIGTERM to all `ids` at once, then waits up to `grace` for each; SIGKILLs the rest.
    /// Returns `(label, outcome)` per node.
    pub fn stop_many(
        &mut self,
        ids: &[i32],
        grace: Duration,
    ) -> Result<Vec<(String, StopOutcome)>> {
        let start = std::time::Instant::now();
        let mut procs_to_wait = Vec::new();
        let mut out = Vec::new();
        for id in ids {
            let n = self.node(*id)?;
            let label = n.label();
            if let Some(mut p) = n.proc.take() {
                match p.try_exit() {
                    Some(s) => out.push((label, StopOutcome::AlreadyExited(s))),
                    None => {
                        let _ = p.thaw();
                        let _ = p.term();
                        procs_to_wait.push((label, p));
                    }
                }
            }
        }
        for (label, mut p) in procs_to_wait {
            let left = grace.saturating_sub(start.elapsed());
            match p.wait_exit(left) {
                Some(s) => out.push((label, StopOutcome::Terminated(s, start.elapsed()))),
                None => {
                    let _ = p.kill();
                    out.push((
                        label,
                        StopOutcome::Killed(p.wait_exit(Duration::from_secs(10))),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Stops brokers first (a broker whose controllers are gone waits forever in controlled
    /// shutdown), then controllers. Errors if a node needed SIGKILL or exited by itself.
    pub fn stop_all(&mut self, broker_grace: Duration, controller_grace: Duration) -> Result<()> {
        let brokers: Vec<i32> = self.brokers.iter().map(|b| b.id).collect();
        let controllers: Vec<i32> = self.controllers.iter().map(|c| c.id).collect();
        self.env
            .step("stopping brokers (SIGTERM, SIGKILL after the grace period)");
        let mut outcomes = self.stop_many(&brokers, broker_grace)?;
        self.env
            .step("stopping controllers (SIGTERM, SIGKILL after the grace period)");
        outcomes.extend(self.stop_many(&controllers, controller_grace)?);
        let mut problems = Vec::new();
        for (label, o) in &outcomes {
            match o {
                StopOutcome::Terminated(s, d) => self.env.step(&format!(
                    "{label} stopped {} after SIGTERM ({})",
                    util::secs(*d),
                    procs::describe_status(s)
                )),
                StopOutcome::Killed(_) => problems.push(format!(
                    "{label} did not exit within the grace period after SIGTERM"
                )),
                StopOutcome::AlreadyExited(s) => problems.push(format!(
                    "{label} had already exited ({})",
                    procs::describe_status(s)
                )),
            }
        }
        if !problems.is_empty() {
            bail!("{}", problems.join("; "));
        }
        Ok(())
    }
}

fn new_node(env: &Env, id: i32, role: Role) -> Result<Node> {
    let mut n = Node {
        id,
        role,
        port: util::free_port()?,
        host: "127.0.0.1".to_string(),
        netns: None,
        dir: PathBuf::new(),
        props: PathBuf::new(),
        log: PathBuf::new(),
        proc: None,
        starts: 0,
        kafka_release: None,
    };
    n.dir = env.work.join(n.name());
    std::fs::create_dir_all(&n.dir)?;
    n.props = n.dir.join("server.properties");
    n.log = n.dir.join("server.log");
    Ok(n)
}

/// In a value of [`ClusterSpec::controller_props`] or [`ClusterSpec::broker_props`], replaced
/// by the node's id (per-node files such as key stores).
pub const NODE_ID_TOKEN: &str = "{node.id}";

/// `quorum_line` is `controller.quorum.voters=...` or `controller.quorum.bootstrap.servers=...`.
fn render_props(n: &Node, quorum_line: &str, spec: &ClusterSpec) -> String {
    let mut s = String::new();
    let data = n.data_dir();
    let data = data.to_string_lossy();
    let _ = writeln!(s, "# written by kraftwerk-it for {}", n.label());
    let _ = writeln!(s, "node.id={}", n.id);
    let _ = writeln!(s, "{quorum_line}");
    let _ = writeln!(s, "controller.listener.names=CONTROLLER");
    match n.role {
        Role::Controller(_) => {
            // The same file for kraftwerk and Java: kraftwerk reads Kafka's keys (and ignores
            // the ones it has no use for), so either can run any slot.
            let _ = writeln!(s, "process.roles=controller");
            let _ = writeln!(s, "listeners=CONTROLLER://{}", n.addr());
            let _ = writeln!(s, "listener.security.protocol.map=CONTROLLER:PLAINTEXT");
            let _ = writeln!(s, "metadata.log.dir={data}");
            let _ = writeln!(s, "log.dirs={data}");
            for (k, v) in &spec.controller_props {
                let _ = writeln!(s, "{k}={}", v.replace(NODE_ID_TOKEN, &n.id.to_string()));
            }
        }
        Role::Broker => {
            let _ = writeln!(s, "process.roles=broker");
            let _ = writeln!(s, "listeners=PLAINTEXT://{}", n.addr());
            let _ = writeln!(s, "advertised.listeners=PLAINTEXT://{}", n.addr());
            let _ = writeln!(s, "inter.broker.listener.name=PLAINTEXT");
            let _ = writeln!(
                s,
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
            );
            let _ = writeln!(s, "log.dirs={data}");
            let _ = writeln!(s, "group.initial.rebalance.delay.ms=0");
            for (k, v) in &spec.broker_props {
                let _ = writeln!(s, "{k}={}", v.replace(NODE_ID_TOKEN, &n.id.to_string()));
            }
        }
    }
    s
}

/// Writes `lines` (one message per line) to `path` for a console producer's stdin.
pub fn write_messages(path: &Path, lines: &[String]) -> Result<()> {
    let mut s = String::with_capacity(lines.len() * 16);
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))
}
