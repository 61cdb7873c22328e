//! The state every simulation shares: clock and events, network, the node slots (a running
//! process or its parked disk), the Raft invariants and the trace.

use std::collections::{BTreeMap, HashMap};

use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_raft::testing::{MemLog, MemQuorumStateStore};
use kraftwerk_raft::{Endpoint, RaftConfig};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use uuid::Uuid;

use super::hostile::Hostile;
use super::{Event, Outgoing, Route, SimulatedNode, CLUSTER_ID};
use crate::invariants::Invariants;
use crate::network::{Network, NetworkFaults, Partition};
use crate::options::SimOptions;
use crate::scheduler::Scheduler;
use crate::versions::Release;

/// One node: its running process, or its disk while it is down.
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
    /// How fast the machine's clock runs, in parts per million of simulated time.
    clock_ppm: u64,
    /// The metadata directory id of its current disk (`directory.id` in `meta.properties`): a
    /// replaced disk gets a new one ([`Sim::replace_disk`]).
    directory_id: Uuid,
    /// Disks this node had replaced so far (makes each new directory id unique).
    disks_replaced: u64,
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
    /// Stalled nodes, with the events that wait for their thread to resume.
    pub(super) stalls: BTreeMap<i32, Vec<Event<N::Event>>>,
    /// The hostile peer.
    pub(super) hostile: Hostile,
    /// Notable events, printed on failure.
    pub trace: Vec<String>,
    /// Voter changes peers' cores sent, served as the driver serves them.
    pub served: super::voter_changes::ServedVoterChanges,
}

impl<N: SimulatedNode> Sim<N> {
    /// Builds the network and starts every voter.
    pub(super) fn new(seed: u64, options: SimOptions) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed);
        let voters: BTreeMap<i32, Endpoint> = (1..=options.voters as i32)
            .map(|id| (id, endpoint(id)))
            .collect();
        let static_voters = if options.kraft_version_1 {
            BTreeMap::new()
        } else {
            voters.clone()
        };
        let mut raft_config =
            RaftConfig::new(1, CLUSTER_ID, Uuid::nil(), static_voters, "CONTROLLER");
        if options.spares > 0 {
            // Every node's `controller.quorum.bootstrap.servers` lists every controller, as
            // Kafka's quickstart does: a spare or a wiped disk knows no voter set and finds the
            // leader through them.
            raft_config.bootstrap_servers = (1..=options.nodes() as i32).map(endpoint).collect();
        }
        let bootstrap_voters = options.kraft_version_1.then(|| {
            kraftwerk_raft::VoterSet::from_nodes(voters.iter().map(|(&id, e)| {
                kraftwerk_raft::VoterNode {
                    key: kraftwerk_raft::ReplicaKey::new(id, directory_id(id)),
                    endpoints: BTreeMap::from([("CONTROLLER".to_owned(), e.clone())]),
                    supported_kraft_versions: (0, 1),
                }
            }))
            .expect("distinct voter ids")
        });
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
            stalls: BTreeMap::new(),
            hostile: Hostile::default(),
            trace: Vec::new(),
            served: Default::default(),
        };
        if let Some(line) = N::describe_config(&sim.config) {
            sim.log(line);
        }
        for id in 1..=sim.options.nodes() as i32 {
            let table = sim.release(id).table();
            sim.tables.insert(id, table);
            // A spare is formatted with `--no-initial-controllers`: no checkpoint at all.
            let bootstrap = if voters.contains_key(&id) {
                bootstrap_voters.as_ref()
            } else {
                None
            };
            let slot = Slot {
                node: None,
                parked_log: Some(with_bootstrap_checkpoint(
                    N::fresh_log(&sim.config),
                    bootstrap,
                )),
                store: MemQuorumStateStore::new(),
                incarnation: 0,
                scheduled_tick_ms: None,
                clock_ppm: u64::from(sim.options.clock_rates_ppm[(id - 1) as usize]),
                directory_id: directory_id(id),
                disks_replaced: 0,
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

    /// The time node `id`'s clock shows now: simulated time at the node's clock rate, so a
    /// fast clock makes its timers fire early and a slow one late. Every time a node is given
    /// comes from here ([`Sim::step`] passes it).
    pub fn node_now_ms(&self, id: i32) -> u64 {
        let ppm = self.nodes.get(&id).map_or(1_000_000, |s| s.clock_ppm);
        local_ms(self.now_ms(), ppm)
    }

    /// The simulated time at which node `id`'s clock first shows `local_ms`.
    fn global_ms(&self, id: i32, local_ms: u64) -> u64 {
        let ppm = self.nodes.get(&id).map_or(1_000_000, |s| s.clock_ppm);
        global_ms(local_ms, ppm)
    }

    /// True if node `id`'s thread is stalled.
    pub fn is_stalled(&self, id: i32) -> bool {
        self.stalls.contains_key(&id)
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

    /// Runs `f` on the running node `id` with the time its clock shows
    /// ([`Sim::node_now_ms`]), then delivers its outputs and checks it; an error stops the run
    /// (a node must never fail).
    pub fn step(&mut self, id: i32, f: impl FnOnce(&mut N, u64) -> Result<(), N::Error>) {
        let now = self.node_now_ms(id);
        let node = self
            .nodes
            .get_mut(&id)
            .and_then(|s| s.node.as_mut())
            .expect("running");
        if let Err(e) = f(node, now) {
            self.invariants.violation(format!("node {id} failed: {e}"));
            return;
        }
        self.after_step(id);
    }

    /// Like [`Sim::step`] for calls whose refusal is an answer, not a failure (an append to a
    /// leader that is stepping down, say).
    pub fn step_infallible(&mut self, id: i32, f: impl FnOnce(&mut N, u64)) {
        let now = self.node_now_ms(id);
        let node = self
            .nodes
            .get_mut(&id)
            .and_then(|s| s.node.as_mut())
            .expect("running");
        f(node, now);
        self.after_step(id);
    }

    pub(super) fn start_node(&mut self, id: i32) {
        let now = self.node_now_ms(id);
        let mut raft = self.raft_config.clone();
        raft.node_id = id;
        raft.directory_id = self.directory_id_of(id);
        raft.auto_join = self.options.auto_join;
        if self.options.spares > 0 {
            raft.local_endpoints = BTreeMap::from([("CONTROLLER".to_owned(), endpoint(id))]);
        }
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
        self.schedule_stall();
        self.schedule_forgery();
        let end = self.options.fault_phase_ms;
        self.scheduler.schedule(end, Event::EndFaults);
    }

    fn schedule_stall(&mut self) {
        let interval = self.options.stall_interval_ms;
        if interval > 0 {
            let at = self.now_ms() + self.rng.gen_range(0..2 * interval);
            let node = self.rng.gen_range(1..=self.options.nodes() as i32);
            self.scheduler.schedule(at, Event::Stall { node });
        }
    }

    /// Stalls node `id`'s thread for 50 ms to 3 s (if it runs and the faults are still on).
    pub(super) fn stall(&mut self, id: i32) {
        if self.faults_over {
            return;
        }
        self.schedule_stall();
        if self.node(id).is_none() || self.is_stalled(id) {
            return;
        }
        let stall_ms = self.rng.gen_range(50..3_000);
        self.stalls.insert(id, Vec::new());
        self.log(format!("node {id} stalls for {stall_ms} ms"));
        let at = self.now_ms() + stall_ms;
        self.scheduler.schedule(at, Event::Resume { node: id });
    }

    pub(super) fn schedule_crash(&mut self) {
        if self.options.crash_interval_ms > 0 {
            let at = self.now_ms() + self.rng.gen_range(0..2 * self.options.crash_interval_ms);
            let node = self.rng.gen_range(1..=self.options.nodes() as i32);
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
        self.forget_served_by(id);
        self.log(format!("node {id} crashed (torn bytes dropped: {dropped})"));
    }

    /// The directory id of node `id`'s current disk.
    pub fn directory_id_of(&self, id: i32) -> Uuid {
        self.nodes
            .get(&id)
            .map_or_else(|| directory_id(id), |s| s.directory_id)
    }

    /// Node `id`'s disk is replaced, as an operator does after a disk failure: the process
    /// stops (if it runs), its log and `quorum-state` are gone, the new disk is formatted with
    /// `--no-initial-controllers` (an empty log, a new directory id) and the node starts again
    /// after `down_ms`. It comes back as an observer until it is added by its new key.
    pub fn replace_disk(&mut self, id: i32, down_ms: u64) {
        if self.node(id).is_some() {
            self.crash(id);
        }
        self.stalls.remove(&id);
        let log = N::fresh_log(&self.config);
        let slot = self.nodes.get_mut(&id).expect("node");
        slot.parked_log = Some(log);
        slot.store = MemQuorumStateStore::new();
        slot.disks_replaced += 1;
        slot.directory_id = Uuid::from_u64_pair(slot.disks_replaced, 1000 + id as u64);
        let dir = slot.directory_id;
        self.invariants.on_disk_replaced(id);
        self.log(format!(
            "node {id} has a new empty disk, directory id {dir}"
        ));
        let at = self.now_ms() + down_ms;
        self.scheduler.schedule(at, Event::Restart { node: id });
    }

    pub(super) fn tick(&mut self, id: i32) {
        let now = self.now_ms();
        let slot = self.nodes.get_mut(&id).expect("node");
        // A tick superseded by a later one is stale (an earlier one was scheduled after it
        // and fired, and rescheduled): without this check every stale tick would live on as
        // one more timer, and a node polled every millisecond would collect thousands.
        if slot.scheduled_tick_ms.is_some_and(|t| t > now) {
            return;
        }
        slot.scheduled_tick_ms = None;
        if slot.node.is_some() {
            self.step(id, |n, now| n.poll(now));
        }
    }

    pub(super) fn repartition(&mut self) {
        if self.faults_over {
            return;
        }
        let ids: Vec<i32> = self.nodes.keys().copied().collect();
        self.network.partition = if self.rng.gen_bool(0.4) {
            Partition::default()
        } else if self.options.one_way_partitions && self.rng.gen_bool(0.5) {
            Partition::random_one_way(&ids, &mut self.rng)
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
        self.release_voter_changes(id);
        // The node's deadline is on its own clock.
        let local_now = self.node_now_ms(id);
        let at_local = deadline.max(local_now + 1).min(local_now + 60_000);
        let at = self.global_ms(id, at_local).max(now + 1);
        let slot = self.nodes.get_mut(&id).expect("node");
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

/// What a clock running at `ppm` parts per million shows at simulated time `global_ms`.
pub(super) fn local_ms(global_ms: u64, ppm: u64) -> u64 {
    (u128::from(global_ms) * u128::from(ppm) / 1_000_000) as u64
}

/// The first simulated time at which a clock running at `ppm` shows `local_ms`.
pub(super) fn global_ms(local_ms: u64, ppm: u64) -> u64 {
    (u128::from(local_ms) * 1_000_000).div_ceil(u128::from(ppm)) as u64
}

/// The controller endpoint of node `id` (its port names it).
pub fn endpoint(id: i32) -> Endpoint {
    Endpoint {
        host: "127.0.0.1".into(),
        port: 9000 + id as u16,
    }
}

/// The node whose controller endpoint is `endpoint` ([`endpoint`]).
pub(super) fn node_at(endpoint: &Endpoint) -> Option<i32> {
    i32::from(endpoint.port)
        .checked_sub(9000)
        .filter(|&id| id > 0)
}

/// The metadata directory id node `id` is formatted with first.
pub(crate) fn directory_id(id: i32) -> Uuid {
    Uuid::from_u64_pair(0, 1000 + id as u64)
}

/// `log` with the bootstrap checkpoint `0-0` of a dynamic quorum of `voters` (SnapshotHeader,
/// KRaftVersion 1, Voters, SnapshotFooter), as `format --initial-controllers` writes it; `log`
/// unchanged without voters (a static quorum).
fn with_bootstrap_checkpoint(mut log: MemLog, voters: Option<&kraftwerk_raft::VoterSet>) -> MemLog {
    use kraftwerk_raft::{OffsetAndEpoch, ReplicatedLog};
    use kraftwerk_records::control::{control_batch, ControlRecord};
    let Some(voters) = voters else {
        return log;
    };
    let id = OffsetAndEpoch::new(0, 0);
    let mut sink = log.create_snapshot(id).expect("bootstrap checkpoint");
    sink.append(&control_batch(
        0,
        0,
        0,
        &[
            ControlRecord::snapshot_header(0),
            ControlRecord::kraft_version(1),
            ControlRecord::Voters(voters.to_record()),
        ],
    ))
    .expect("in memory");
    sink.append(&control_batch(3, 0, 0, &[ControlRecord::snapshot_footer()]))
        .expect("in memory");
    sink.finish().expect("valid checkpoint");
    log.register_snapshot(id).expect("registered");
    log
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timer_on_a_skewed_clock_fires_at_the_first_moment_the_clock_shows_it() {
        for ppm in [900_000, 999_999, 1_000_000, 1_000_001, 1_100_000] {
            for local in [1, 7, 999, 1_000, 2_000, 30_001, 123_456_789] {
                let at = global_ms(local, ppm);
                assert!(local_ms(at, ppm) >= local, "ppm {ppm}, local {local}");
                assert!(
                    local_ms(at - 1, ppm) < local,
                    "ppm {ppm}, local {local}: late"
                );
            }
        }
        // A fast clock's 1,000 ms pass in less simulated time, a slow one's in more.
        assert_eq!(global_ms(1_000, 1_100_000), 910);
        assert_eq!(global_ms(1_000, 900_000), 1_112);
        assert_eq!(local_ms(10_000, 900_000), 9_000);
    }
}
