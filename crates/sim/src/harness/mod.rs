//! The one simulation harness: a quorum of simulated nodes of any kind on simulated time,
//! network and disks.
//!
//! One seed decides everything: fault settings, latencies, losses, partitions, crashes (which lose
//! unflushed log data, optionally tearing the last write), restarts and the workload. After every
//! event the Raft invariants in [`crate::invariants`] and the kind's own are checked; a failure
//! carries the seed, so `SIM_SEED=<seed>` replays the exact run.
//!
//! Every message crosses [`crate::wire`] as the server sends it: negotiated version, adapted,
//! encoded, decoded by the receiver against the table its release serves ([`crate::versions`]).
//!
//! Besides crashes and partitions (two-way and one-way), a run may give each node a clock that
//! runs fast or slow ([`Sim::node_now_ms`]), stall a node's thread for a while (its messages and
//! timers queue up and are handled at once when it resumes), and add a [`hostile`] peer forging
//! Raft RPCs; all drawn from the seed ([`SimOptions`]).
//!
//! A kind of node is two traits: [`SimulatedNode`] is one node process (the Raft core alone, or
//! the full controller node), [`Workload`] is what drives the quorum from outside (writes, or
//! simulated brokers and an admin client) and decides when a run has shown liveness.

mod delivery;
pub mod hostile;
mod sim;
pub(crate) use sim::directory_id;
pub use sim::endpoint;
#[cfg(test)]
mod tests;
pub mod voter_changes;

use std::fmt::{Debug, Display};

use bytes::Bytes;
use kafka_protocol::messages::ApiKey;
use kraftwerk_raft::testing::{MemLog, MemQuorumStateStore};
use kraftwerk_raft::{Input, OutboundId, Output, RaftConfig, RaftCore, SendFailure};
use rand::rngs::SmallRng;
use rand::Rng;

pub use sim::{Sim, Slot};

use crate::invariants::{Invariants, Violation};
use crate::options::SimOptions;

/// The cluster id of simulated clusters.
pub const CLUSTER_ID: &str = "c2ltLWNsdXN0ZXItaWQtQQ";

/// The Raft core every simulated node runs, on in-memory storage that loses unflushed data.
pub type SimRaft = RaftCore<MemLog, MemQuorumStateStore>;

/// Where the response to a delivered request goes and how to read it: the sender, the
/// incarnation that sent it (a restarted sender never gets its predecessor's answers), the
/// sender's request id, and the request's api, version and correlation id.
#[derive(Clone, Copy, Debug)]
pub struct Route {
    /// Sending node.
    pub to: i32,
    /// Its incarnation when it sent the request.
    pub to_incarnation: u64,
    /// The id the sender's core gave the request.
    pub out_id: OutboundId,
    /// The request's api.
    pub api_key: ApiKey,
    /// The version it was sent at (the response is encoded at it too).
    pub version: i16,
    /// The correlation id of its header.
    pub correlation_id: i32,
}

/// A Raft message in flight between two nodes.
#[derive(Clone, Debug)]
pub enum Message {
    /// A request frame; its response goes along `reply_to`.
    Request {
        /// The frame as encoded by the sender.
        frame: Bytes,
        /// Where the response goes.
        reply_to: Route,
    },
    /// A response frame to the request that took `route`.
    Response {
        /// The frame as encoded by the responder.
        frame: Bytes,
        /// The request's route.
        route: Route,
    },
    /// The sender's own client reports a request failed (refused connection, no version).
    SendFailed {
        /// The request.
        id: OutboundId,
        /// Why.
        failure: SendFailure,
    },
}

/// What the scheduler holds: the harness's own events and the kind's.
#[derive(Debug)]
pub enum Event<E> {
    /// A Raft message arrives at a node.
    Deliver {
        /// Receiving node.
        to: i32,
        /// The incarnation it was sent to (a restarted node never sees it).
        to_incarnation: u64,
        /// The message.
        message: Message,
    },
    /// A node's timers are due.
    Tick {
        /// The node.
        node: i32,
    },
    /// A node crashes (if the fault phase is still on).
    Crash {
        /// The node.
        node: i32,
    },
    /// A crashed node comes back.
    Restart {
        /// The node.
        node: i32,
    },
    /// The network is split anew (or healed).
    Repartition,
    /// The fault phase ends: the network heals and every node runs.
    EndFaults,
    /// A node's thread stops processing (if the fault phase is still on).
    Stall {
        /// The node.
        node: i32,
    },
    /// A stalled node's thread resumes and handles what queued up.
    Resume {
        /// The node.
        node: i32,
    },
    /// The hostile peer forges a Raft RPC.
    Forge,
    /// An event of the node kind, handled by its [`Workload`].
    Kind(E),
}

/// One output of a node: a Raft message the harness delivers, or something the kind handles.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // drained right away, one step's worth at a time
pub enum Outgoing<O> {
    /// A Raft request or response.
    Raft(Output),
    /// A kind-specific output ([`SimulatedNode::on_output`]).
    Other(O),
}

/// One simulated node process, started from its disk and crashed back into it.
pub trait SimulatedNode: Sized {
    /// Settings shared by every node of a run, drawn from the seed before the nodes start.
    type Config;
    /// Outputs besides Raft messages.
    type Output;
    /// Events of this kind (client traffic, snapshot completions, writes).
    type Event: Debug;
    /// Cluster-wide state of the kind's own invariants.
    type Checks: Default;
    /// Why a node stops.
    type Error: Display;

    /// The node an event of the kind is handled by, if one: it waits while that node's thread
    /// is stalled.
    fn event_node(_event: &Self::Event) -> Option<i32> {
        None
    }

    /// Draws the run's settings.
    fn configure(rng: &mut SmallRng) -> Self::Config;

    /// A trace line describing the settings, if there is anything to say.
    fn describe_config(_config: &Self::Config) -> Option<String> {
        None
    }

    /// The empty disk a node starts with.
    fn fresh_log(config: &Self::Config) -> MemLog;

    /// Starts (or restarts) a node from its disk; `raft` already names the node.
    fn start(
        raft: RaftConfig,
        log: MemLog,
        store: MemQuorumStateStore,
        config: &Self::Config,
        rng: &mut SmallRng,
        now_ms: u64,
    ) -> Result<Self, Self::Error>;

    /// Handles a Raft message or send failure.
    fn handle(&mut self, now_ms: u64, input: Input) -> Result<(), Self::Error>;

    /// Runs the node's timers.
    fn poll(&mut self, now_ms: u64) -> Result<(), Self::Error>;

    /// Earliest time `poll` has work to do, in ms.
    fn next_deadline_ms(&self) -> u64;

    /// Drains the node's outputs, in order.
    fn take_outputs(&mut self) -> Vec<Outgoing<Self::Output>>;

    /// The node's Raft core (for the Raft invariants).
    fn raft(&self) -> &SimRaft;

    /// Stops the process, keeping its log (the quorum-state store stays with the slot).
    fn into_log(self) -> MemLog;

    /// What to show after "node N is ROLE in epoch E" in the trace.
    fn describe(&self) -> String;

    /// Handles a kind-specific output of node `from`, in output order.
    fn on_output(sim: &mut Sim<Self>, from: i32, output: Self::Output);

    /// Checks the kind's invariants on this node after it handled an event.
    fn check(&mut self, id: i32, checks: &mut Self::Checks, invariants: &mut Invariants);

    /// True if the kind serves AddRaftVoter / RemoveRaftVoter sent by a peer's core
    /// ([`voter_changes`]).
    const SERVES_VOTER_CHANGES: bool = false;

    /// Serves a peer's voter change as the driver does; the answer now, or `None` when it
    /// comes from [`Self::take_voter_change_answers`].
    fn serve_voter_change(
        &mut self,
        _now_ms: u64,
        _request_id: u64,
        _change: voter_changes::VoterChange,
    ) -> Result<Option<kraftwerk_raft::VoterChangeAnswer>, Self::Error> {
        Ok(None)
    }

    /// Voter change answers the node completed since the last call (taken after every step).
    fn take_voter_change_answers(&mut self) -> Vec<kraftwerk_raft::VoterChangeAnswer> {
        Vec::new()
    }
}

/// What drives a quorum of [`SimulatedNode`]s from outside, and when a run has passed.
pub trait Workload: Sized {
    /// The kind of node.
    type Node: SimulatedNode;
    /// Summary of a passing run.
    type Report: Debug;
    /// The test target that replays a seed (`cargo test -p kraftwerk-sim --test <TEST>`).
    const TEST: &'static str;
    /// A crashed node stays down for 100 ms up to this many ms.
    const MAX_DOWN_MS: u64;

    /// Builds the workload once the nodes run.
    fn new(sim: &mut Sim<Self::Node>) -> Self;

    /// Schedules the workload's first events.
    fn start(&mut self, sim: &mut Sim<Self::Node>);

    /// Handles an event of the kind.
    fn on_event(&mut self, sim: &mut Sim<Self::Node>, event: <Self::Node as SimulatedNode>::Event);

    /// A running node is about to crash.
    fn on_crash(&mut self, _node: &Self::Node) {}

    /// After every event: `Ok(Some(_))` ends the run passing, `Err` fails it.
    fn after_event(
        &mut self,
        sim: &mut Sim<Self::Node>,
        now_ms: u64,
    ) -> Result<Option<Self::Report>, Violation>;

    /// At the liveness deadline, before [`Self::liveness_failure`]: `Some` ends the run passing
    /// when the protocol itself cannot make progress from the state the faults left (a limit
    /// the workload must name and justify, not a bug it hides).
    fn liveness_exempt(&mut self, _sim: &mut Sim<Self::Node>) -> Option<Self::Report> {
        None
    }

    /// Why the run failed when it ended without passing (may add lines to the trace).
    fn liveness_failure(&mut self, sim: &mut Sim<Self::Node>) -> String;
}

/// A running simulation of one kind of node.
pub struct Cluster<W: Workload> {
    sim: Sim<W::Node>,
    workload: W,
    /// The run passed by [`Workload::liveness_exempt`].
    liveness_exempt: bool,
}

impl<W: Workload> Cluster<W> {
    /// Builds the cluster for a seed.
    pub fn new(seed: u64, options: SimOptions) -> Self {
        let mut sim = Sim::new(seed, options);
        let mut workload = W::new(&mut sim);
        sim.schedule_faults();
        workload.start(&mut sim);
        Self {
            sim,
            workload,
            liveness_exempt: false,
        }
    }

    /// Notable events so far.
    pub fn trace(&self) -> &[String] {
        &self.sim.trace
    }

    /// True if the run passed only because the workload exempted its end state from liveness
    /// ([`Workload::liveness_exempt`]; the trace says why).
    pub fn liveness_exempt(&self) -> bool {
        self.liveness_exempt
    }

    /// Runs the fault phase and then the liveness phase. `Err` carries the violation, the last
    /// events and the one-line command that reproduces it.
    pub fn run(&mut self) -> Result<W::Report, Violation> {
        let options = &self.sim.options;
        let liveness_end = options.fault_phase_ms + options.liveness_deadline_ms;
        while let Some((now, event)) = self.sim.scheduler.pop_next() {
            if now > liveness_end {
                break;
            }
            self.dispatch(event);
            if let Some(v) = self.sim.invariants.take_violation() {
                return Err(self.fail(v));
            }
            match self.workload.after_event(&mut self.sim, now) {
                Ok(Some(report)) => return Ok(report),
                Ok(None) => {}
                Err(v) => return Err(self.fail(v)),
            }
        }
        if let Some(report) = self.workload.liveness_exempt(&mut self.sim) {
            self.liveness_exempt = true;
            return Ok(report);
        }
        let text = self.workload.liveness_failure(&mut self.sim);
        Err(self.fail(Violation(text)))
    }

    fn dispatch(&mut self, event: Event<<W::Node as SimulatedNode>::Event>) {
        let sim = &mut self.sim;
        let target = match &event {
            Event::Deliver { to, .. } => Some(*to),
            Event::Tick { node } => Some(*node),
            Event::Kind(e) => W::Node::event_node(e),
            _ => None,
        };
        if let Some(backlog) = target.and_then(|id| sim.stalls.get_mut(&id)) {
            backlog.push(event);
            return;
        }
        match event {
            Event::Deliver {
                to,
                to_incarnation,
                message,
            } => sim.deliver(to, to_incarnation, message),
            Event::Tick { node } => sim.tick(node),
            Event::Crash { node } => {
                if !sim.faults_over {
                    if let Some(running) = sim.node(node) {
                        self.workload.on_crash(running);
                    }
                    sim.crash(node);
                    let down_ms = sim.rng.gen_range(100..W::MAX_DOWN_MS);
                    let now = sim.now_ms();
                    sim.scheduler
                        .schedule(now + down_ms, Event::Restart { node });
                    sim.schedule_crash();
                    // What queued up for a stalled process dies with it (every queued event is
                    // for the incarnation that just ended).
                    sim.stalls.remove(&node);
                }
            }
            Event::Restart { node } => {
                if sim.node(node).is_none() {
                    sim.start_node(node);
                }
            }
            Event::Repartition => sim.repartition(),
            Event::EndFaults => {
                let stalled: Vec<i32> = sim.stalls.keys().copied().collect();
                for node in stalled {
                    self.resume(node);
                }
                self.sim.end_faults();
            }
            Event::Stall { node } => sim.stall(node),
            Event::Resume { node } => self.resume(node),
            Event::Forge => sim.forge(),
            Event::Kind(event) => self.workload.on_event(sim, event),
        }
    }

    /// Node `node`'s thread runs again: everything that queued up while it was stalled is
    /// handled now, in arrival order (so its timers all fire at once, late).
    fn resume(&mut self, node: i32) {
        let Some(backlog) = self.sim.stalls.remove(&node) else {
            return;
        };
        let n = backlog.len();
        self.sim
            .log(format!("node {node} resumes: {n} queued events"));
        for event in backlog {
            self.dispatch(event);
        }
    }

    fn fail(&self, v: Violation) -> Violation {
        let trace = &self.sim.trace;
        // The last 50 events besides the hostile peer's forgeries (which come every few ms),
        // with the forgeries among them.
        let start = if std::env::var("SIM_TRACE").is_ok() {
            0
        } else {
            let mut others = 0;
            let back = trace.iter().rev().position(|line| {
                others += usize::from(!line.contains(hostile::FORGERY_PREFIX));
                others > 50
            });
            back.map_or(0, |back| trace.len() - back)
        };
        let mut text = format!("{}\n--- last events ---\n", v.0);
        for line in &trace[start..] {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&format!(
            "--- reproduce with: SIM_SEED={} cargo test -p kraftwerk-sim --test {} -- --nocapture\n",
            self.sim.seed,
            W::TEST
        ));
        Violation(text)
    }
}
