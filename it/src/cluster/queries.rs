//! What the cluster's Kafka tools show: `kafka-metadata-quorum describe`, `kafka-topics
//! --describe`, and the waits built on them (quorum formed, broker unfenced and serving).

use anyhow::{bail, Result};
use std::time::Duration;

use super::Cluster;
use crate::kafka::args;
use crate::parse::{self, PartitionInfo, QuorumStatus, ReplicaRow};
use crate::util;

impl<'e> Cluster<'e> {
    /// `--bootstrap-controller <bootstrap>`, the [`Cluster::controller_client_config`] when
    /// set, then `rest`.
    pub fn controller_tool_args(&self, bootstrap: &str, rest: &[&str]) -> Vec<String> {
        let mut a = args(&["--bootstrap-controller", bootstrap]);
        if let Some(conf) = &self.controller_client_config {
            a.push("--command-config".into());
            a.push(conf.to_string_lossy().into_owned());
        }
        a.extend(rest.iter().map(|s| s.to_string()));
        a
    }

    /// `kafka-metadata-quorum --bootstrap-controller <bootstrap> describe --status`.
    pub fn describe_status(
        &self,
        bootstrap: &str,
        timeout: Duration,
    ) -> Result<(QuorumStatus, String)> {
        let r = self.env.tool_ok(
            "kafka-metadata-quorum",
            &self.controller_tool_args(bootstrap, &["describe", "--status"]),
            None,
            timeout,
        )?;
        Ok((parse::parse_status(&r.stdout)?, r.stdout))
    }

    /// Like [`Cluster::describe_status`] but with an admin client that gives up on an
    /// unresponsive node after 2 s (`request.timeout.ms`), for polling while a controller is
    /// down: the admin client sends DescribeQuorum to the controller it believes active, and
    /// with the defaults it keeps trying a dead one for 30 s.
    pub fn describe_status_fast(&self, bootstrap: &str) -> Result<(QuorumStatus, String)> {
        let conf = self.env.work.join("conf/admin-fast.properties");
        if !conf.exists() {
            let mut text = "request.timeout.ms=1500\ndefault.api.timeout.ms=3000\nretry.backoff.ms=50\nsocket.connection.setup.timeout.ms=1000\n".to_owned();
            // Over an SSL controller listener: the same client, plus its TLS settings.
            if let Some(tls) = &self.controller_client_config {
                text.push_str(&std::fs::read_to_string(tls)?);
            }
            std::fs::write(&conf, text)?;
        }
        let a = args(&[
            "--bootstrap-controller",
            bootstrap,
            "--command-config",
            &conf.to_string_lossy(),
            "describe",
            "--status",
        ]);
        let r = self
            .env
            .tool_ok("kafka-metadata-quorum", &a, None, Duration::from_secs(10))?;
        Ok((parse::parse_status(&r.stdout)?, r.stdout))
    }

    /// `kafka-metadata-quorum --bootstrap-controller <bootstrap> describe --replication`.
    pub fn describe_replication(
        &self,
        bootstrap: &str,
        timeout: Duration,
    ) -> Result<(Vec<ReplicaRow>, String)> {
        let r = self.env.tool_ok(
            "kafka-metadata-quorum",
            &self.controller_tool_args(bootstrap, &["describe", "--replication"]),
            None,
            timeout,
        )?;
        Ok((parse::parse_replication(&r.stdout)?, r.stdout))
    }

    /// Polls `describe --status` until a leader that is one of the voters is reported.
    pub fn wait_quorum(&mut self, timeout: Duration) -> Result<QuorumStatus> {
        let bootstrap = self.controller_bootstrap();
        let voters: Vec<i32> = self.controllers.iter().map(|c| c.id).collect();
        let env = self.env;
        util::wait_until(
            "the controller quorum to elect a leader",
            timeout,
            Duration::from_millis(500),
            || {
                let c = &mut *self;
                c.check_alive()?;
                let (s, _) = c.describe_status(&bootstrap, Duration::from_secs(30))?;
                Ok(if voters.contains(&s.leader_id) {
                    Some(s)
                } else {
                    None
                })
            },
        )
        .inspect(|s| {
            env.step(&format!(
                "quorum has leader {} in epoch {}",
                s.leader_id, s.leader_epoch
            ))
        })
    }

    /// `kafka-topics --describe --topic <topic>` through `bootstrap`, parsed.
    pub fn describe_topic(
        &self,
        bootstrap: &str,
        topic: &str,
        timeout: Duration,
    ) -> Result<(Vec<PartitionInfo>, String)> {
        let r = self.env.tool_ok(
            "kafka-topics",
            &args(&[
                "--bootstrap-server",
                bootstrap,
                "--describe",
                "--topic",
                topic,
            ]),
            None,
            timeout,
        )?;
        Ok((parse::parse_topic_describe(&r.stdout)?, r.stdout))
    }

    /// Waits until broker `id` has been unfenced and serves clients.
    ///
    /// Why this test: a Kafka broker enables request processing on its client listener only
    /// after its controller answered a heartbeat with `IsFenced=false` (BrokerServer.startup
    /// waits for the initial unfence first), so a successful `kafka-topics --list` against it
    /// proves it is unfenced. Its log line "Transitioning from RECOVERY to RUNNING"
    /// (BrokerLifecycleManager) tells us cheaply when to try; without it (other wording in
    /// another release) we still try every 10 s.
    pub fn wait_broker_ready(&mut self, id: i32, timeout: Duration) -> Result<()> {
        const RUNNING: &str = "Transitioning from RECOVERY to RUNNING";
        let env = self.env;
        let (addr, seen_before) = {
            let n = self.node(id)?;
            (n.addr(), n.starts.saturating_sub(1) as usize)
        };
        let label = self.node(id)?.label();
        let start = std::time::Instant::now();
        let mut last_try = start;
        util::wait_until(
            &format!("{label} to be unfenced and serve kafka-topics --list"),
            timeout,
            Duration::from_millis(250),
            || {
                let c = &mut *self;
                c.check_alive()?;
                let running = c.node(id)?.log_count(RUNNING) > seen_before;
                if running || last_try.elapsed() > Duration::from_secs(10) {
                    last_try = std::time::Instant::now();
                    let r = env.tool(
                        "kafka-topics",
                        &args(&["--bootstrap-server", &addr, "--list"]),
                        None,
                        Duration::from_secs(20),
                    )?;
                    if r.ok() {
                        return Ok(Some(()));
                    }
                    bail!(
                        "kafka-topics --list against {label}: {}",
                        util::one_line(&r.stderr, 300)
                    );
                }
                Ok(None)
            },
        )?;
        env.step(&format!(
            "{label} is unfenced and serving (after {})",
            util::secs(start.elapsed())
        ));
        Ok(())
    }
}
