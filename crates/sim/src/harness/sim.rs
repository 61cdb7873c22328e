//! The state every simulation shares: clock and events, network, the node slots (a running
//! process or its parked disk), the Raft invariants and the trace.

use std::collections::{BTreeMap, HashMap};

use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_raft::testing::{MemLog, MemQuorumStateStore};
use kraftwerk_raft::{Endpoint, RaftConfig};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use uuid::Uuid;

use super::{Event, Outgoing, Route, SimulatedNode, CLUSTER_ID};
use crate::invariants::Invariants;
use crate::network::{Network, NetworkFaults, Partition};
use crate::options::SimOptions;
use crate::scheduler::Scheduler;
use crate::versions::Release;

/// One voter: its running process, or its disk while it is down.
pub struct Slot<N> {
    /// The running process.
    pub node: Option<N>,
    /// The log while the node is down.
    parked_log: Option<MemLog>,
    /// The quorum-state store (survives crashes; writes to it are durable at once).
    store: MemQuorumStateStore,
    /// Bumped at every start and crash, so messages to an earlier process are dropped.
    pub incarnation: u64,
    /// When the node's next Tick is scheduled.
    scheduled_tick_ms: Option<u64>,
}

/// The shared state of a simulation of nodes of kind `N`.
pub struct Sim<N: SimulatedNode> {
    /// The run's seed.
    pub seed: u64,
    /// The run's settings.
    pub options: SimOptions,
    /// The one source of randomness.
    pub rng: SmallRng,
    /// Pending events.
    pub scheduler: Scheduler<Event<N::Event>>,
    /// Latency, loss and partitions.
    pub network: Network,
    /// The voters, by node id.
    pub nodes: BTreeMap<i32, Slot<N>>,
    /// What each voter serves (and can send), by node id: its release's table.
    pub tables: BTreeMap<i32, ApiTable>,
    /// Kind settings shared by every node.
    pub config: N::Config,
    raft_config: RaftConfig,
    /// Inbound request id → where its response goes.
    pub(super) routes: HashMap<u64, Route>,
    pub(super) next_inbound: u64,
    pub(super) next_correlation_id: i32,
    /// The Raft invariants.
    pub invariants: Invariants,
    checks: N::Checks,
    /// True once the fault phase ended.
    pub faults_over: bool,
    /// Notable events, printed on failure.
    pub trace: Vec<String>,
}

impl<N: SimulatedNode> Sim<N> {
    /// Builds the network and starts every voter.
    pub(super) fn new(seed: u64, options: SimOptions) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed);
        let voters: BTreeMap<i32, Endpoint> = (1..=options.voters as i32)
            .map(|id| {
                let endpoint = Endpoint {
                    host: "127.0.0.1".into(),
                    port: 9000 + id as u16,
                };
                (id, endpoint)
            })
            .collect();
        let raft_config = RaftConfig::new(1, CLUSTER_ID, Uuid::nil(), voters.clone(), "CONTROLLER");
        let faults = if options.network_faults {
            NetworkFaults::random(&mut rng)
        } else {
            NetworkFaults::calm()
        };
        let config = N::configure(&mut rng);
        let mut sim = Self {
            seed,
            options,
            rng,
            scheduler: Scheduler::default(),
            network: Network {
                faults,
                partition: Partition::default(),
            },
            nodes: BTreeMap::new(),
            tables: BTreeMap::new(),
            config,
            raft_config,
            routes: HashMap::new(),
            next_inbound: 0,
            next_correlation_id: 0,
            invariants: Invariants::default(),
            checks: N::Checks::default(),
            faults_over: false,
            trace: Vec::new(),
        };
        if let Some(line) = N::describe_config(&sim.config) {
            sim.log(line);
        }
        for &id in voters.keys() {
            let table = sim.release(id).table();
            sim.tables.insert(id, table);
            let slot = Slot {
                node: None,
                parked_log: Some(N::fresh_log(&sim.config)),
                store: MemQuorumStateStore::new(),
                incarnation: 0,
                scheduled_tick_ms: None,
            };
            sim.nodes.insert(id, slot);
            sim.start_node(id);
        }
        sim
    }

    /// Current simulated time in ms.
    pub fn now_ms(&self) -> u64 {
        self.scheduler.now_ms()
    }

    /// Adds a line to the trace.
    pub fn log(&mut self, line: String) {
        let now = self.now_ms();
        self.trace.push(format!("[{now:>7} ms] {line}"));
    }

    /// Schedules an event of the kind.
    pub fn schedule(&mut self, at_ms: u64, event: N::Event) {
        self.scheduler.schedule(at_ms, Event::Kind(event));
    }

    /// The running process of node `id`.
    pub fn node(&self, id: i32) -> Option<&N> {
        self.nodes.get(&id).and_then(|s| s.node.as_ref())
    }

    /// The running processes, by node id.
    pub fn running(&self) -> impl Iterator<Item = (i32, &N)> + '_ {
        self.nodes
            .iter()
            .filter_map(|(&id, s)| s.node.as_ref().map(|n| (id, n)))
    }

    /// The release node `id` speaks.
    pub fn release(&self, id: i32) -> Release {
        self.options.releases[(id - 1) as usize]
    }

    /// Node `id`'s current incarnation.
    pub fn incarnation(&self, id: i32) -> Option<u64> {
        self.nodes.get(&id).map(|s| s.incarnation)
    }

    /// True if incarnation `incarnation` of node `id` is the one running.
    pub fn is_running(&self, id: i32, incarnation: u64) -> bool {
        self.nodes
            .get(&id)
            .is_some_and(|s| s.incarnation == incarnation && s.node.is_some())
    }

    /// Runs `f` on the running node `id`, then delivers its outputs and checks it; an error
    /// stops the run (a node must never fail).
    pub fn step(&mut self, id: i32, f: impl FnOnce(&mut N) -> Result<(), N::Error>) {
        let node = self
            .nodes
            .get_mut(&id)
            .and_then(|s| s.node.as_mut())
            .expect("running");
        if let Err(e) = f(node) {
            self.invariants.violation(format!("node {id} failed: {e}"));
            return;
        }
        self.after_step(id);
    }

    /// Like [`Sim::step`] for calls whose refusal is an answer, not a failure (an append to a
    /// leader that is stepping down, say).
    pub fn step_infallible(&mut self, id: i32, f: impl FnOnce(&mut N)) {
        let node = self
            .nodes
            .get_mut(&id)
            .and_then(|s| s.node.as_mut())
            .expect("running");
        f(node);
        self.after_step(id);
    }

    pub(super) fn start_node(&mut self, id: i32) {
        let now = self.now_ms();
        let mut raft = self.raft_config.clone();
        raft.node_id = id;
        raft.directory_id = Uuid::from_u64_pair(0, 1000 + id as u64);
        self.release(id).configure(&mut raft);
        let slot = self.nodes.get_mut(&id).expect("node exists");
        let log = slot
            .parked_log
            .take()
            .expect("a stopped node has its disk parked");
        slot.incarnation += 1;
        let store = slot.store.clone();
        match N::start(raft, log, store, &self.config, &mut self.rng, now) {
            Ok(node) => slot.node = Some(node),
            Err(e) => {
                self.invariants
                    .violation(format!("node {id} failed to start: {e}"));
                return;
            }
        }
        slot.scheduled_tick_ms = None;
        self.invariants.on_restart(id);
        self.log(format!("node {id} started"));
        self.after_step(id);
    }

    /// Schedules the first crash, the first partition and the end of the fault phase.
    pub(super) fn schedule_faults(&mut self) {
        self.schedule_crash();
        if self.options.partition_interval_ms > 0 {
            let at = self.now_ms()
                + self
                    .rng
                    .gen_range(0..2 * self.options.partition_interval_ms);
            self.scheduler.schedule(at, Event::Repartition);
        }
        let end = self.options.fault_phase_ms;
        self.scheduler.schedule(end, Event::EndFaults);
    }

    pub(super) fn schedule_crash(&mut self) {
        if self.options.crash_interval_ms > 0 {
            let at = self.now_ms() + self.rng.gen_range(0..2 * self.options.crash_interval_ms);
            let node = self.rng.gen_range(1..=self.options.voters as i32);
            self.scheduler.schedule(at, Event::Crash { node });
        }
    }

    /// Stops node `id`, losing its unflushed log data (and maybe tearing the last write).
    pub(super) fn crash(&mut self, id: i32) {
        let torn = self.options.torn_writes;
        let value: u64 = self.rng.gen();
        let slot = self.nodes.get_mut(&id).expect("node");
        let Some(node) = slot.node.take() else { return };
        let mut log = node.into_log();
        let dropped = if torn {
            log.crash_torn(value)
        } else {
            log.crash();
            0
        };
        slot.parked_log = Some(log);
        slot.incarnation += 1;
        self.log(format!("node {id} crashed (torn bytes dropped: {dropped})"));
    }

    pub(super) fn tick(&mut self, id: i32) {
        let now = self.now_ms();
        let slot = self.nodes.get_mut(&id).expect("node");
        slot.scheduled_tick_ms = None;
        if slot.node.is_some() {
            self.step(id, |n| n.poll(now));
        }
    }

    pub(super) fn repartition(&mut self) {
        if self.faults_over {
            return;
        }
        let ids: Vec<i32> = self.nodes.keys().copied().collect();
        self.network.partition = if self.rng.gen_bool(0.4) {
            Partition::default()
        } else {
            Partition::random(&ids, &mut self.rng)
        };
        let d = self.network.partition.describe();
        self.log(format!("network {d}"));
        let interval = self.options.partition_interval_ms.max(1);
        let at = self.now_ms() + self.rng.gen_range(0..2 * interval);
        self.scheduler.schedule(at, Event::Repartition);
    }

    pub(super) fn end_faults(&mut self) {
        self.faults_over = true;
        self.network.partition = Partition::default();
        self.network.faults = NetworkFaults::calm();
        self.log("faults stopped; network healed".into());
        let down: Vec<i32> = self
            .nodes
            .iter()
            .filter(|(_, s)| s.node.is_none())
            .map(|(&id, _)| id)
            .collect();
        for id in down {
            self.start_node(id);
        }
    }

    /// Delivers a node's outputs, reschedules its timer and checks the invariants.
    pub fn after_step(&mut self, id: i32) {
        let now = self.now_ms();
        let (outputs, deadline, incarnation) = {
            let slot = self.nodes.get_mut(&id).expect("node");
            let Some(node) = slot.node.as_mut() else {
                return;
            };
            let outputs = node.take_outputs();
            (outputs, node.next_deadline_ms(), slot.incarnation)
        };
        for output in outputs {
            match output {
                Outgoing::Raft(output) => self.send_raft(id, incarnation, output),
                Outgoing::Other(output) => N::on_output(self, id, output),
            }
        }
        let slot = self.nodes.get_mut(&id).expect("node");
        let at = deadline.max(now + 1).min(now + 60_000);
        if slot.scheduled_tick_ms.is_none_or(|t| at < t) {
            slot.scheduled_tick_ms = Some(at);
            self.scheduler.schedule(at, Event::Tick { node: id });
        }
        let node = slot.node.as_ref().expect("running");
        let core = node.raft();
        let (role, epoch) = (core.role(), core.epoch());
        if self.invariants.role_of(id) != Some((role, epoch)) {
            let line = format!("node {id} is {role} in epoch {epoch} ({})", node.describe());
            self.log(line);
        }
        let node = self.nodes.get_mut(&id).and_then(|s| s.node.as_mut());
        let node = node.expect("running");
        self.invariants.check_node(id, node.raft());
        node.check(id, &mut self.checks, &mut self.invariants);
    }
}
