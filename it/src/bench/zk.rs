//! ZooKeeper-mode Apache Kafka 3.9 (the last release with ZooKeeper): a ZooKeeper ensemble run
//! from the `zookeeper` jar of Kafka's own dependency set (`QuorumPeerMain`), real Kafka
//! brokers with small heaps, and the controller role that one of them holds.
//!
//! There is no controller listener, so no simulated brokers: the partitions live on real
//! "data" brokers (RF 1, pinned by an explicit assignment), and two more brokers that host no
//! partition are the ones whose controller role is failed over. Killing a broker that leads
//! nothing keeps partition leader elections out of the measurement: what is timed is the new
//! controller's election in ZooKeeper plus its failover work (reading every topic and partition
//! state from ZooKeeper, sending LeaderAndIsr/UpdateMetadata to every broker) until it serves
//! CreateTopics. When a data broker wins the controller race, the benchmark moves the role on
//! by deleting `/controller` (ZooKeeper's CLI) before the next measurement.
//!
//! ZooKeeper session timeout 2000 ms (tickTime 500) stands in for KRaft's fetch timeout.

use anyhow::{bail, Context, Result};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::client::{Conn, Transport};
use super::measure::{self};
use super::rpc::{self, TopicSpec};
use super::{data_brokers, metadata_topics, BenchConfig, Recorder, TOPICS_PER_REQUEST};
use crate::procs::{self, Proc};
use crate::util;

/// A ZooKeeper server or a Kafka broker of this system.
struct ZkNode {
    name: String,
    id: i32,
    port: u16,
    dir: PathBuf,
    config: PathBuf,
    log: PathBuf,
    proc: Option<Proc>,
    starts: u32,
}

impl ZkNode {
    fn new(work: &Path, name: String, id: i32) -> Result<ZkNode> {
        let dir = work.join(&name);
        std::fs::create_dir_all(&dir)?;
        Ok(ZkNode {
            config: dir.join("server.properties"),
            log: dir.join("server.log"),
            name,
            id,
            port: util::free_port()?,
            dir,
            proc: None,
            starts: 0,
        })
    }
    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
    fn pid(&mut self) -> Option<i32> {
        let p = self.proc.as_mut()?;
        if p.is_running() {
            Some(p.pid())
        } else {
            None
        }
    }
}

/// The Kafka 3.9 jars minus the log4j2 artifacts `scripts/kafka-fetch` adds for 4.x: 3.9 logs
/// through reload4j (log4j 1 configuration).
fn classpath(libs: &Path) -> Result<String> {
    let mut jars = Vec::new();
    for e in std::fs::read_dir(libs).with_context(|| format!("reading {}", libs.display()))? {
        let p = e?.path();
        let n = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if !n.ends_with(".jar")
            || n.starts_with("log4j-api-2")
            || n.starts_with("log4j-core-2")
            || n.starts_with("log4j-slf4j-impl-2")
        {
            continue;
        }
        jars.push(p.to_string_lossy().to_string());
    }
    jars.sort();
    Ok(jars.join(":"))
}

struct System {
    cp: String,
    log4j: PathBuf,
    java_opts: String,
    zk: Vec<ZkNode>,
    brokers: Vec<ZkNode>,
    /// Broker ids that host partitions (never signalled).
    data_ids: Vec<i32>,
}

impl System {
    /// No nodes yet: the classpath from `libs`, a log4j 1 configuration written under the
    /// work directory, the brokers' JVM options (`IT_SERVER_JAVA_OPTS` overrides).
    fn new(env: &crate::env::Env, libs: &Path) -> Result<System> {
        let conf = env.work.join("conf");
        std::fs::create_dir_all(&conf)?;
        let log4j = conf.join("log4j-zk-mode.properties");
        std::fs::write(
            &log4j,
            "log4j.rootLogger=INFO, stdout\n\
             log4j.appender.stdout=org.apache.log4j.ConsoleAppender\n\
             log4j.appender.stdout.layout=org.apache.log4j.PatternLayout\n\
             log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n\n\
             log4j.logger.state.change.logger=WARN\n\
             log4j.logger.kafka.controller=INFO\n",
        )?;
        let java_opts = std::env::var("IT_SERVER_JAVA_OPTS").unwrap_or_else(|_| {
            "-Xmx1g -Xms1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:-UsePerfData".into()
        });
        Ok(System {
            cp: classpath(libs)?,
            log4j,
            java_opts,
            zk: Vec::new(),
            brokers: Vec::new(),
            data_ids: Vec::new(),
        })
    }

    fn java(&self, opts: &str, main: &str) -> Command {
        let mut c = Command::new("java");
        c.args(opts.split_whitespace());
        c.arg(format!(
            "-Dlog4j.configuration=file:{}",
            self.log4j.display()
        ));
        c.arg("-cp").arg(&self.cp).arg(main);
        c.env_remove("KAFKA_OPTS").env_remove("CLASSPATH");
        c
    }

    fn start_zk(&mut self, i: usize, env: &crate::env::Env) -> Result<()> {
        let cmd = {
            let mut c = self.java(
                "-Xmx512m -Xms64m -XX:+UseG1GC -XX:-UsePerfData",
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            );
            c.arg(&self.zk[i].config);
            c
        };
        let n = &mut self.zk[i];
        n.starts += 1;
        n.proc = Some(Proc::spawn(&n.name, cmd, &n.log, None, true)?);
        env.step(&format!("started {} on {}", n.name, n.addr()));
        Ok(())
    }

    fn start_broker(&mut self, id: i32, env: &crate::env::Env) -> Result<()> {
        let i = self.broker_index(id)?;
        let cmd = {
            let mut c = self.java(&self.java_opts, "kafka.Kafka");
            c.arg(&self.brokers[i].config);
            c
        };
        let n = &mut self.brokers[i];
        n.starts += 1;
        procs::append_marker(
            &n.log,
            &format!("===== kraftwerk-it: start #{} =====", n.starts),
        );
        n.proc = Some(Proc::spawn(&n.name, cmd, &n.log, None, true)?);
        env.step(&format!(
            "started {} on {} (pid {})",
            n.name,
            n.addr(),
            n.proc.as_ref().map(Proc::pid).unwrap_or(0)
        ));
        Ok(())
    }

    fn broker_index(&self, id: i32) -> Result<usize> {
        self.brokers
            .iter()
            .position(|b| b.id == id)
            .with_context(|| format!("no broker {id}"))
    }

    fn live_broker_addrs(&mut self, except: i32) -> Vec<String> {
        let mut out = Vec::new();
        for b in self.brokers.iter_mut() {
            if b.id != except && b.pid().is_some() {
                out.push(b.addr());
            }
        }
        out
    }

    /// The controller id and live broker ids as the first answering live broker sees them.
    fn controller(&mut self) -> Result<(i32, Vec<i32>)> {
        let mut last = String::new();
        for a in self.live_broker_addrs(-1) {
            match Conn::connect(&a, "bench", Duration::from_secs(2))
                .and_then(|mut c| rpc::controller_id(&mut c))
            {
                Ok(r) => return Ok(r),
                Err(e) => last = format!("{e:#}"),
            }
        }
        bail!("no broker answered Metadata: {last}")
    }

    /// One pass: the controller id if every broker answers Metadata, lists every broker and
    /// names the same controller (then that controller has finished its failover far enough to
    /// have sent UpdateMetadata to all of them); None otherwise.
    fn agreed_controller(&mut self) -> Result<Option<i32>> {
        self.check_alive()?;
        let want: Vec<i32> = self.brokers.iter().map(|b| b.id).collect();
        let mut seen = None;
        for b in self.brokers.iter() {
            let (ctl, live) = Conn::connect(&b.addr(), "bench", Duration::from_secs(2))
                .and_then(|mut c| rpc::controller_id(&mut c))?;
            if ctl < 0 || want.iter().any(|w| !live.contains(w)) || seen.is_some_and(|s| s != ctl) {
                return Ok(None);
            }
            seen = Some(ctl);
        }
        Ok(seen)
    }

    /// Waits until every broker is registered and all of them name the controller that
    /// `/controller` in ZooKeeper names. A broker process that exits ends the wait with an error.
    fn wait_brokers(&mut self, timeout: Duration) -> Result<i32> {
        let zk_addr = self.zk[0].addr();
        let start = Instant::now();
        let mut last = String::new();
        loop {
            util::check_interrupted()?;
            self.check_alive()?;
            let r = (|| -> Result<Option<i32>> {
                let Some(b) = self.agreed_controller()? else {
                    return Ok(None);
                };
                let z = super::zkclient::ZkSession::connect(&zk_addr)?.controller_id()?;
                Ok((z == Some(b)).then_some(b))
            })();
            match r {
                Ok(Some(c)) => return Ok(c),
                Ok(None) => {}
                Err(e) => last = format!("{e:#}"),
            }
            if start.elapsed() > timeout {
                bail!("timed out after {timeout:?} waiting for every broker to register and agree with /controller (last: {last})");
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Waits until broker `id` is listed as live by a broker that answers Metadata.
    fn wait_registered(&mut self, id: i32, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        loop {
            util::check_interrupted()?;
            self.check_alive()?;
            if let Ok((_, live)) = self.controller() {
                if live.contains(&id) {
                    return Ok(());
                }
            }
            if start.elapsed() > timeout {
                bail!("broker {id} did not register within {timeout:?}");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn check_alive(&mut self) -> Result<()> {
        for n in self.zk.iter_mut().chain(self.brokers.iter_mut()) {
            if let Some(p) = n.proc.as_mut() {
                if let Some(s) = p.try_exit() {
                    let st = procs::describe_status(&s);
                    n.proc = None;
                    bail!(
                        "{} exited unexpectedly ({st}); see {}",
                        n.name,
                        n.log.display()
                    );
                }
            }
        }
        Ok(())
    }

    /// Stops brokers first (data brokers last would wait for a controller), then ZooKeeper.
    fn stop_all(&mut self) {
        let mut all: Vec<Proc> = self
            .brokers
            .iter_mut()
            .filter_map(|b| b.proc.take())
            .collect();
        for p in all.iter() {
            let _ = p.term();
        }
        for p in all.iter_mut() {
            p.stop(Duration::from_secs(60));
        }
        for z in self.zk.iter_mut() {
            if let Some(mut p) = z.proc.take() {
                p.stop(Duration::from_secs(20));
            }
        }
    }
}

/// `mntr`/`srvr` four-letter word: the ZooKeeper server's mode (`leader`, `follower`,
/// `standalone`), if it serves.
fn zk_mode(addr: &str) -> Option<String> {
    let mut s = TcpStream::connect_timeout(&addr.parse().ok()?, Duration::from_millis(500)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(b"srvr").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    out.lines()
        .find_map(|l| l.strip_prefix("Mode: ").map(|m| m.trim().to_string()))
}

pub fn run(env: &crate::env::Env, cfg: &BenchConfig) -> Result<()> {
    let libs = kafka_libs(cfg)?;
    let rec = Recorder::new(env, cfg, &cfg.zk_kafka_version);
    let mut sys = System::new(env, &libs)?;
    let zk_connect = start_zookeeper(env, cfg, &mut sys)?;
    start_brokers(env, cfg, &mut sys, &zk_connect)?;
    build_metadata(env, cfg, &mut sys, &rec)?;
    let mut probe_no = 0;
    for rep in 0..cfg.reps {
        for (signal, name) in [
            (libc::SIGKILL, "uncontrolled"),
            (libc::SIGTERM, "controlled"),
        ] {
            probe_no += 1;
            let at = Round {
                rep,
                signal,
                name,
                probe_no,
            };
            fail_over_controller(env, &mut sys, &at, &rec)?;
        }
    }
    sys.stop_all();
    Ok(())
}

/// The `libs` directory of the ZooKeeper-mode Kafka version (fetched by `scripts/kafka-fetch`).
fn kafka_libs(cfg: &BenchConfig) -> Result<PathBuf> {
    let libs = super::super::kafka::cache_dir()
        .join("kafka")
        .join(&cfg.zk_kafka_version)
        .join("libs");
    if !libs
        .join(format!("kafka_2.13-{}.jar", cfg.zk_kafka_version))
        .exists()
    {
        bail!(
            "Kafka {} jars not in {} (run scripts/kafka-fetch {})",
            cfg.zk_kafka_version,
            libs.display(),
            cfg.zk_kafka_version
        );
    }
    Ok(libs)
}

/// Configures and starts the ZooKeeper ensemble (`cfg.zk_servers`, at least one) and waits
/// until every server serves; returns the `zookeeper.connect` string.
fn start_zookeeper(env: &crate::env::Env, cfg: &BenchConfig, sys: &mut System) -> Result<String> {
    let n_zk = cfg.zk_servers.max(1);
    add_zk_servers(env, sys, n_zk)?;
    for i in 0..n_zk {
        sys.start_zk(i, env)?;
    }
    let zk_addrs: Vec<String> = sys.zk.iter().map(|z| z.addr()).collect();
    util::wait_until(
        "the ZooKeeper ensemble to serve",
        Duration::from_secs(90),
        Duration::from_millis(250),
        || {
            sys.check_alive()?;
            let modes: Vec<Option<String>> = zk_addrs.iter().map(|a| zk_mode(a)).collect();
            Ok(if modes.iter().all(|m| m.is_some()) {
                Some(modes)
            } else {
                None
            })
        },
    )
    .inspect(|m| env.step(&format!("ZooKeeper ensemble of {n_zk} serving: {m:?}")))?;
    Ok(zk_addrs.join(","))
}

/// Adds `n_zk` ZooKeeper servers to `sys` with their `myid` and configuration (an ensemble
/// when more than one).
fn add_zk_servers(env: &crate::env::Env, sys: &mut System, n_zk: usize) -> Result<()> {
    let mut quorum_ports = Vec::new();
    for i in 0..n_zk {
        sys.zk.push(ZkNode::new(
            &env.work,
            format!("zookeeper-{}", i + 1),
            i as i32 + 1,
        )?);
        quorum_ports.push((util::free_port()?, util::free_port()?));
    }
    for z in sys.zk.iter() {
        let data = z.dir.join("data");
        std::fs::create_dir_all(&data)?;
        std::fs::write(data.join("myid"), format!("{}\n", z.id))?;
        let mut s = format!(
            "tickTime=500\ninitLimit=20\nsyncLimit=10\ndataDir={}\nclientPort={}\nclientPortAddress=127.0.0.1\n\
             maxClientCnxns=0\nadmin.enableServer=false\n4lw.commands.whitelist=*\n",
            data.display(),
            z.port
        );
        if n_zk > 1 {
            for (j, (p1, p2)) in quorum_ports.iter().enumerate() {
                s.push_str(&format!("server.{}=127.0.0.1:{p1}:{p2}\n", j + 1));
            }
        }
        std::fs::write(&z.config, s)?;
    }
    Ok(())
}

/// Configures and starts the brokers: broker 1 first (so that a broker without partitions
/// holds the controller role at the start), then the others one at a time; returns once all
/// of them agree on the controller.
fn start_brokers(
    env: &crate::env::Env,
    cfg: &BenchConfig,
    sys: &mut System,
    zk_connect: &str,
) -> Result<()> {
    let ids = add_brokers(env, cfg, sys, zk_connect)?;
    sys.start_broker(1, env)?;
    util::wait_until(
        "broker 1 to become the controller",
        Duration::from_secs(120),
        Duration::from_millis(250),
        || {
            sys.check_alive()?;
            Ok(match sys.controller() {
                Ok((1, _)) => Some(()),
                _ => None,
            })
        },
    )?;
    // One at a time: a JVM starved of CPU for the 2 s ZooKeeper session while it starts up
    // exits (its session expires during startup, which is fatal), and 2 cores start ~10 JVMs.
    for id in ids.iter().skip(1) {
        sys.start_broker(*id, env)?;
        sys.wait_registered(*id, Duration::from_secs(120))?;
    }
    let ctl = sys.wait_brokers(Duration::from_secs(180))?;
    env.step(&format!(
        "{} brokers registered ({} hosting partitions); controller is broker {ctl}",
        ids.len(),
        sys.data_ids.len()
    ));
    Ok(())
}

/// Adds the brokers to `sys` with their configuration: ids 1, 2 host nothing (their
/// controller role is failed over), 101.. host data. Returns every id, 1 first.
fn add_brokers(
    env: &crate::env::Env,
    cfg: &BenchConfig,
    sys: &mut System,
    zk_connect: &str,
) -> Result<Vec<i32>> {
    let n_data = data_brokers(cfg.partitions);
    let mut ids = vec![1, 2];
    for i in 0..n_data {
        ids.push(101 + i as i32);
        sys.data_ids.push(101 + i as i32);
    }
    for id in &ids {
        let n = ZkNode::new(&env.work, format!("broker-{id}"), *id)?;
        let props = format!(
            "broker.id={id}\nzookeeper.connect={zk_connect}\nzookeeper.session.timeout.ms=2000\n\
             zookeeper.connection.timeout.ms=10000\nlisteners=PLAINTEXT://{addr}\nadvertised.listeners=PLAINTEXT://{addr}\n\
             log.dirs={data}\noffsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n\
             transaction.state.log.min.isr=1\ngroup.initial.rebalance.delay.ms=0\nauto.create.topics.enable=false\n\
             num.recovery.threads.per.data.dir=1\n",
            addr = n.addr(),
            data = n.dir.join("data").display()
        );
        std::fs::write(&n.config, props)?;
        sys.brokers.push(n);
    }
    Ok(ids)
}

/// Builds the metadata through the Admin API (CreateTopics at the controller broker), every
/// partition pinned to a data broker in turn, and records how long it took.
fn build_metadata(
    env: &crate::env::Env,
    cfg: &BenchConfig,
    sys: &mut System,
    rec: &Recorder,
) -> Result<()> {
    let t = Instant::now();
    let topics = metadata_topics(cfg.partitions);
    let mut next = 0usize;
    for chunk in topics.chunks(TOPICS_PER_REQUEST) {
        let specs: Vec<TopicSpec> = chunk
            .iter()
            .map(|(name, n)| {
                let assignment = (0..*n)
                    .map(|_| {
                        next += 1;
                        vec![sys.data_ids[next % sys.data_ids.len()]]
                    })
                    .collect();
                TopicSpec {
                    name: name.clone(),
                    partitions: *n,
                    replication_factor: 1,
                    assignment: Some(assignment),
                }
            })
            .collect();
        create_at_controller(sys, &specs)?;
    }
    let create = t.elapsed();
    rec.record(
        "zookeeper",
        0,
        "create_all_ms",
        create.as_millis() as f64,
        "ms",
    )?;
    env.step(&format!(
        "created {} partitions in {} topics in {:.1}s",
        cfg.partitions,
        topics.len(),
        create.as_secs_f64()
    ));
    Ok(())
}

/// Which failover of the run: repetition, the signal and its name, the probe's number.
struct Round<'a> {
    rep: usize,
    signal: i32,
    name: &'a str,
    probe_no: usize,
}

/// Moves the controller role off the data brokers, signals the controller broker and probes
/// CreateTopics at the others until one succeeds (recording the failover time and, for
/// SIGTERM, the time to its exit), then restarts it and waits until every broker agrees on
/// the controller again.
fn fail_over_controller(
    env: &crate::env::Env,
    sys: &mut System,
    at: &Round,
    rec: &Recorder,
) -> Result<()> {
    let (rep, signal, name, probe_no) = (at.rep, at.signal, at.name, at.probe_no);
    let ctl = move_controller_off_data_brokers(env, sys)?;
    let i = sys.broker_index(ctl)?;
    record_rss(sys, i, rep, rec)?;
    let topic = TopicSpec {
        name: format!("failover-{probe_no}"),
        partitions: 1,
        replication_factor: 1,
        assignment: Some(vec![vec![sys.data_ids[probe_no % sys.data_ids.len()]]]),
    };
    let others = sys.live_broker_addrs(ctl);
    let t0 = Instant::now();
    sys.brokers[i]
        .proc
        .as_ref()
        .context("controller process")?
        .signal(signal)?;
    // The controller broker accepts the request as soon as it holds the role and then
    // waits for the partition's leader, i.e. for the end of its failover work: give it
    // the whole deadline, so that no retry answered TOPIC_ALREADY_EXISTS ends the probe
    // early.
    let p = measure::probe_create(
        &others,
        &Transport::Plaintext,
        &topic,
        290_000,
        t0,
        Duration::from_secs(300),
    )?;
    rec.record(
        "zookeeper",
        rep,
        &format!("failover_{name}_ms"),
        p.elapsed.as_secs_f64() * 1000.0,
        "ms",
    )?;
    env.step(&format!(
        "{name} failover: controller broker {ctl} signalled, CreateTopics succeeded at {} after {:.0} ms ({} attempts)",
        p.addr,
        p.elapsed.as_secs_f64() * 1000.0,
        p.attempts
    ));
    let mut proc = sys.brokers[i].proc.take().context("controller process")?;
    match proc.stop(Duration::from_secs(60)) {
        procs::StopOutcome::Terminated(..) if signal == libc::SIGTERM => {
            rec.record(
                "zookeeper",
                rep,
                "sigterm_exit_ms",
                t0.elapsed().as_millis() as f64,
                "ms",
            )?;
        }
        _ => {}
    }
    procs::append_marker(&sys.brokers[i].log, "===== kraftwerk-it: stopped =====");
    sys.start_broker(ctl, env)?;
    sys.wait_brokers(Duration::from_secs(180))?;
    Ok(())
}

/// Records the peak RSS of the controller broker (`brokers[i]`) and of the ZooKeeper servers.
fn record_rss(sys: &mut System, i: usize, rep: usize, rec: &Recorder) -> Result<()> {
    let pid = sys.brokers[i]
        .pid()
        .context("controller broker not running")?;
    rec.record(
        "zookeeper",
        rep,
        "controller_rss_bytes",
        measure::vm_hwm_bytes(pid).unwrap_or(0) as f64,
        "bytes",
    )?;
    let zk_rss = sys
        .zk
        .iter_mut()
        .filter_map(|z| z.pid())
        .filter_map(measure::vm_hwm_bytes)
        .max()
        .unwrap_or(0);
    rec.record(
        "zookeeper",
        rep,
        "zookeeper_rss_bytes",
        zk_rss as f64,
        "bytes",
    )?;
    Ok(())
}

/// Makes sure the controller is broker 1 or 2 (hosting nothing). While a data broker holds the
/// role: SIGSTOP every data broker, delete `/controller`, wait (at most 1.5 s, well inside the
/// data brokers' sessions) until broker 1 or 2 has written a new `/controller`, SIGCONT them.
/// The frozen data brokers cannot join the race; the moved role then goes through a normal
/// failover, which `wait_brokers` waits out. Returns the controller id.
fn move_controller_off_data_brokers(env: &crate::env::Env, sys: &mut System) -> Result<i32> {
    for attempt in 0..10 {
        let ctl = sys.wait_brokers(Duration::from_secs(600))?;
        if !sys.data_ids.contains(&ctl) {
            return Ok(ctl);
        }
        env.step(&format!(
            "data broker {ctl} is the controller: moving the role to broker 1 or 2 (attempt {})",
            attempt + 1
        ));
        let mut zk = super::zkclient::ZkSession::connect(&sys.zk[0].addr())?;
        let data: Vec<usize> = (0..sys.brokers.len())
            .filter(|i| sys.data_ids.contains(&sys.brokers[*i].id))
            .collect();
        for i in &data {
            if let Some(p) = sys.brokers[*i].proc.as_ref() {
                let _ = p.freeze();
            }
        }
        let moved = (|| -> Result<Option<i32>> {
            zk.delete("/controller")?;
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(1500) {
                if let Some(c) = zk.controller_id()? {
                    return Ok(Some(c));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(None)
        })();
        for i in &data {
            if let Some(p) = sys.brokers[*i].proc.as_ref() {
                let _ = p.thaw();
            }
        }
        env.step(&format!("/controller now names broker {:?}", moved?));
    }
    bail!("could not move the controller role off the data brokers")
}

fn create_at_controller(sys: &mut System, specs: &[TopicSpec]) -> Result<()> {
    let retry = rpc::CreateRetry {
        total: Duration::from_secs(900),
        socket: Duration::from_secs(200),
        request_timeout_ms: 180_000,
        pause: Duration::from_millis(200),
    };
    rpc::create_topics_until_created(specs, &retry, &Transport::Plaintext, || {
        sys.check_alive()?;
        Ok(sys.live_broker_addrs(-1))
    })
}
