//! Injecting one planned fault into the running cluster, and waiting until it recovered:
//! every controller running, a leader answering, and every voter's log caught up with the
//! leader's high watermark. Failover times come from the observer's leadership claims (the
//! first DescribeQuorum answer of a higher epoch after the fault).

use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::time::{Duration, Instant};

use super::observe::Observer;
use super::plan::{Fault, Kind, Target};
use crate::cluster::Cluster;
use crate::netns::Net;
use crate::procs::{self, StopOutcome};
use crate::util;

/// A SIGTERMed controller must exit within this (kraftwerk resigns and stops in well under a
/// second; a Java controller takes a few seconds).
const TERM_GRACE: Duration = Duration::from_secs(30);
/// After the active controller is killed or stopped, another must lead within this.
const ELECTION_LIMIT: Duration = Duration::from_secs(30);

/// What one fault did.
#[derive(Clone, Debug, Serialize)]
pub struct FaultResult {
    /// Position in the plan.
    pub n: usize,
    /// `sigkill`, `sigterm`, `sigstop`, `partition`.
    pub kind: &'static str,
    /// The controller it hit.
    pub node: i32,
    /// Whether that controller led when it was hit.
    pub was_active: bool,
    /// Planned as "the active controller" (else "a random controller").
    pub planned_active: bool,
    /// Seconds since the scenario started.
    pub at_s: f64,
    /// Stop/partition length or downtime.
    pub hold_ms: u64,
    /// Page cache dropped before the restart.
    pub drop_caches: bool,
    /// Leader and epoch before.
    pub old_leader: i32,
    /// Epoch before.
    pub old_epoch: i32,
    /// First leader of a higher epoch seen after the fault, with its epoch.
    pub new_leader: Option<(i32, i32)>,
    /// Fault → that leader answering DescribeQuorum (ms).
    pub failover_ms: Option<u64>,
    /// End of the fault (restart, SIGCONT, link up) → recovered (ms).
    pub recovered_ms: u64,
    /// SIGTERM only: how long the process took to exit.
    pub term_exit_ms: Option<u64>,
    /// Restarts only: signal → new process started (the planned downtime, plus the exit and,
    /// with the cache dropped, the `sync`).
    pub down_ms: Option<u64>,
}

/// Everything a fault acts on.
pub struct Rig<'a, 'e> {
    /// The cluster.
    pub c: &'a mut Cluster<'e>,
    /// The namespaces (controller `id` is host `id - 1`).
    pub net: &'a Net,
    /// Leadership claims.
    pub obs: &'a Observer,
}

impl Rig<'_, '_> {
    /// Waits until every controller runs, a leader answers and every voter caught up with
    /// the leader's high watermark at the start of the wait. Returns `(leader, epoch)`.
    pub fn settle(&mut self, timeout: Duration) -> Result<(i32, i32)> {
        let start = Instant::now();
        self.c.check_alive()?;
        let (_, first) = self.obs.wait_leader(timeout)?;
        let target = first.high_watermark;
        let voters: Vec<i32> = self.c.controllers.iter().map(|n| n.id).collect();
        let obs = self.obs;
        let left = timeout.saturating_sub(start.elapsed());
        util::wait_until(
            &format!("every controller to reach offset {target}"),
            left,
            Duration::from_millis(100),
            || {
                let Some((node, v)) = obs.current(Duration::from_secs(1)) else {
                    bail!("no leader answering DescribeQuorum");
                };
                let behind: Vec<String> = voters
                    .iter()
                    .filter(|id| v.voter_leo(**id) < target)
                    .map(|id| format!("{id} at {}", v.voter_leo(*id)))
                    .collect();
                if behind.is_empty() {
                    Ok(Some((node, v.leader_epoch)))
                } else {
                    bail!(
                        "leader {node} (epoch {}) reports {}",
                        v.leader_epoch,
                        behind.join(", ")
                    )
                }
            },
        )
    }

    /// Injects `f`, waits for recovery, returns what happened.
    pub fn inject(&mut self, env: &crate::env::Env, f: &Fault) -> Result<FaultResult> {
        let (leader, epoch) = self.settle(Duration::from_secs(120))?;
        let node = match f.target {
            Target::Active => leader,
            Target::Node(id) => id,
        };
        let mut r = FaultResult {
            n: f.n,
            kind: f.kind.label(),
            node,
            was_active: node == leader,
            planned_active: f.target == Target::Active,
            at_s: env.elapsed().as_secs_f64(),
            hold_ms: f.hold_ms,
            drop_caches: f.drop_caches,
            old_leader: leader,
            old_epoch: epoch,
            new_leader: None,
            failover_ms: None,
            recovered_ms: 0,
            term_exit_ms: None,
            down_ms: None,
        };
        env.step(&format!(
            "fault {f}: controller {node}{} (leader {leader}, epoch {epoch})",
            if r.was_active { ", the active one" } else { "" }
        ));
        let t0 = Instant::now();
        self.apply(env, f, node, &mut r)?;
        let ended = Instant::now();
        if f.kind.restarts() {
            r.down_ms = Some(ended.duration_since(t0).as_millis() as u64);
        }
        if r.was_active && f.kind.restarts() {
            self.wait_new_leader(epoch, t0, f)?;
        }
        self.settle(Duration::from_secs(150))
            .with_context(|| format!("recovering from fault #{}", f.n))?;
        r.recovered_ms = ended.elapsed().as_millis() as u64;
        if let Some(c) = self.obs.first_claim_above(epoch, t0) {
            r.new_leader = Some((c.leader, c.epoch));
            r.failover_ms = Some(c.at.saturating_duration_since(t0).as_millis() as u64);
        }
        Ok(r)
    }

    /// The fault itself, from the signal (or link down) to the restart (or SIGCONT, link up).
    fn apply(
        &mut self,
        env: &crate::env::Env,
        f: &Fault,
        node: i32,
        r: &mut FaultResult,
    ) -> Result<()> {
        let hold = Duration::from_millis(f.hold_ms);
        match f.kind {
            Kind::Kill => {
                self.c.kill(node)?;
                self.restart_after(env, node, hold, f.drop_caches)
            }
            Kind::Term => {
                let t = Instant::now();
                match self.c.stop(node, TERM_GRACE)? {
                    StopOutcome::Terminated(s, d) => {
                        r.term_exit_ms = Some(d.as_millis() as u64);
                        env.step(&format!(
                            "controller {node} exited {} after SIGTERM ({})",
                            util::secs(d),
                            procs::describe_status(&s)
                        ));
                    }
                    other => bail!(
                        "controller {node} did not exit within {}s of SIGTERM ({other:?}, {} elapsed)",
                        TERM_GRACE.as_secs(),
                        util::secs(t.elapsed())
                    ),
                }
                self.restart_after(env, node, hold, f.drop_caches)
            }
            Kind::Stop => {
                self.c.freeze(node)?;
                let slept = util::sleep(hold);
                self.c.thaw(node)?;
                slept
            }
            Kind::Partition => {
                let i = (node - 1) as usize;
                self.net.link_down(i)?;
                let slept = util::sleep(hold);
                self.net.link_up(i)?;
                slept
            }
        }
    }

    fn restart_after(
        &mut self,
        env: &crate::env::Env,
        node: i32,
        hold: Duration,
        drop: bool,
    ) -> Result<()> {
        util::sleep(hold)?;
        if drop {
            drop_page_cache()?;
            env.step("page cache dropped (sync; echo 3 > /proc/sys/vm/drop_caches)");
        }
        self.c.start(node)
    }

    /// After the active controller was killed or stopped: another leads a higher epoch.
    fn wait_new_leader(&self, epoch: i32, t0: Instant, f: &Fault) -> Result<()> {
        let left = ELECTION_LIMIT.saturating_sub(t0.elapsed());
        util::wait_until(
            &format!("a leader of an epoch above {epoch} after fault #{}", f.n),
            left,
            Duration::from_millis(50),
            || Ok(self.obs.first_claim_above(epoch, t0)),
        )
        .map(|_| ())
    }
}

/// `sync; echo 3 > /proc/sys/vm/drop_caches`: the restarted process reads its log from disk.
pub fn drop_page_cache() -> Result<()> {
    let status = std::process::Command::new("sync")
        .status()
        .context("running sync")?;
    anyhow::ensure!(status.success(), "sync failed: {status}");
    std::fs::write("/proc/sys/vm/drop_caches", "3")
        .context("writing /proc/sys/vm/drop_caches (needs root)")
}
