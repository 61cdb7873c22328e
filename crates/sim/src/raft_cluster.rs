//! A quorum of Raft cores on simulated time, network and disks.
//!
//! One seed decides everything: fault settings, latencies, losses, partitions, crashes (which lose
//! unflushed log data, optionally tearing the last write), restarts and the write workload. After
//! every event the invariants in [`crate::invariants`] are checked; a failure carries the seed, so
//! `SIM_SEED=<seed>` replays the exact run.

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;
use kraftwerk_raft::testing::{MemLog, MemQuorumStateStore};
use kraftwerk_raft::ReplicatedLog;
use kraftwerk_raft::{
    Endpoint, InboundId, Input, OutboundId, Output, RaftConfig, RaftCore, RaftRequest,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use uuid::Uuid;

use crate::invariants::{Invariants, Violation};
use crate::network::{Network, NetworkFaults, Partition};
use crate::scheduler::Scheduler;

/// The request versions a simulated node "negotiated"; the core must produce the right content
/// for each (e.g. NodeEndpoints only from Fetch v17).
pub fn api_version_for(request: &RaftRequest, rng: &mut SmallRng) -> i16 {
    match request {
        RaftRequest::Fetch(_) => [13, 15, 16, 17, 18][rng.gen_range(0..5)],
        RaftRequest::Vote(v)
            if v.topics
                .first()
                .and_then(|t| t.partitions.first())
                .is_some_and(|p| p.pre_vote) =>
        {
            2
        }
        RaftRequest::Vote(_) => rng.gen_range(0..=2),
        RaftRequest::BeginQuorumEpoch(_) | RaftRequest::EndQuorumEpoch(_) => rng.gen_range(0..=1),
        RaftRequest::FetchSnapshot(_) => 1,
        RaftRequest::DescribeQuorum(_) => 2,
        RaftRequest::UpdateRaftVoter(_) => 0,
    }
}

/// What the simulation exercises in one run.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Number of voters (3 or 5 usually).
    pub voters: usize,
    /// Simulated duration of the fault phase, in ms.
    pub fault_phase_ms: u64,
    /// After the faults stop, a leader must commit a new write within this many ms.
    pub liveness_deadline_ms: u64,
    /// Mean time between crashes (0 = never).
    pub crash_interval_ms: u64,
    /// Mean time between partition changes (0 = never).
    pub partition_interval_ms: u64,
    /// Mean time between writes proposed to the leader.
    pub write_interval_ms: u64,
    /// Random network faults (else calm).
    pub network_faults: bool,
    /// Crashes may tear the last unflushed write.
    pub torn_writes: bool,
}

impl SimOptions {
    /// Settings derived from the seed (so that many seeds cover many shapes).
    pub fn for_seed(seed: u64) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x5eed);
        Self {
            voters: if rng.gen_bool(0.7) { 3 } else { 5 },
            fault_phase_ms: 30_000,
            liveness_deadline_ms: 20_000,
            crash_interval_ms: if rng.gen_bool(0.8) {
                rng.gen_range(2_000..10_000)
            } else {
                0
            },
            partition_interval_ms: if rng.gen_bool(0.7) {
                rng.gen_range(1_000..8_000)
            } else {
                0
            },
            write_interval_ms: rng.gen_range(5..200),
            network_faults: rng.gen_bool(0.8),
            torn_writes: rng.gen_bool(0.5),
        }
    }
}

#[derive(Debug)]
enum Event {
    Deliver {
        to: i32,
        to_incarnation: u64,
        input: Input,
        reply_to: Option<(i32, u64, OutboundId)>,
    },
    Tick {
        node: i32,
    },
    Crash {
        node: i32,
    },
    Restart {
        node: i32,
    },
    Repartition,
    Write,
    EndFaults,
}

struct Slot {
    core: Option<RaftCore<MemLog, MemQuorumStateStore>>,
    /// The disk while the node is down.
    parked_log: Option<MemLog>,
    store: MemQuorumStateStore,
    incarnation: u64,
    scheduled_tick_ms: Option<u64>,
}

/// A running simulation.
pub struct RaftCluster {
    seed: u64,
    options: SimOptions,
    rng: SmallRng,
    scheduler: Scheduler<Event>,
    network: Network,
    nodes: BTreeMap<i32, Slot>,
    config: RaftConfig,
    /// Inbound request id → (sender, sender incarnation, sender's outbound id).
    routes: HashMap<u64, (i32, u64, OutboundId)>,
    next_inbound: u64,
    invariants: Invariants,
    faults_over: bool,
    writes_proposed: u64,
    /// Trace of notable events, printed on failure.
    pub trace: Vec<String>,
}

impl RaftCluster {
    /// Builds the cluster for a seed.
    pub fn new(seed: u64, options: SimOptions) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed);
        let voters: BTreeMap<i32, Endpoint> = (1..=options.voters as i32)
            .map(|id| {
                (
                    id,
                    Endpoint {
                        host: "127.0.0.1".into(),
                        port: 9000 + id as u16,
                    },
                )
            })
            .collect();
        let config = RaftConfig::new(
            1,
            "sim-cluster-id-AAAAAAA",
            Uuid::nil(),
            voters.clone(),
            "CONTROLLER",
        );
        let faults = if options.network_faults {
            NetworkFaults::random(&mut rng)
        } else {
            NetworkFaults::calm()
        };
        let mut cluster = Self {
            seed,
            options,
            rng,
            scheduler: Scheduler::default(),
            network: Network {
                faults,
                partition: Partition::default(),
            },
            nodes: BTreeMap::new(),
            config,
            routes: HashMap::new(),
            next_inbound: 0,
            invariants: Invariants::default(),
            faults_over: false,
            writes_proposed: 0,
            trace: Vec::new(),
        };
        for &id in voters.keys() {
            cluster.nodes.insert(
                id,
                Slot {
                    core: None,
                    parked_log: Some(MemLog::new()),
                    store: MemQuorumStateStore::new(),
                    incarnation: 0,
                    scheduled_tick_ms: None,
                },
            );
            cluster.start_node(id);
        }
        cluster.schedule_faults();
        let end = cluster.options.fault_phase_ms;
        cluster.scheduler.schedule(end, Event::EndFaults);
        let w = cluster.options.write_interval_ms;
        cluster.scheduler.schedule(w, Event::Write);
        cluster
    }

    fn node_config(&self, id: i32) -> RaftConfig {
        let mut c = self.config.clone();
        c.node_id = id;
        c.directory_id = Uuid::from_u64_pair(0, 1000 + id as u64);
        c
    }

    fn log(&mut self, line: String) {
        let now = self.scheduler.now_ms();
        self.trace.push(format!("[{now:>7} ms] {line}"));
    }

    fn start_node(&mut self, id: i32) {
        let now = self.scheduler.now_ms();
        let config = self.node_config(id);
        let node_seed = self.rng.gen();
        let slot = self.nodes.get_mut(&id).expect("node exists");
        let log = slot
            .parked_log
            .take()
            .expect("a stopped node has its disk parked");
        slot.incarnation += 1;
        let core = RaftCore::new(config, log, slot.store.clone(), node_seed, now).expect("start");
        slot.core = Some(core);
        slot.scheduled_tick_ms = None;
        self.invariants.on_restart(id);
        self.log(format!("node {id} started"));
        self.after_step(id);
    }

    fn schedule_faults(&mut self) {
        let now = self.scheduler.now_ms();
        if self.options.crash_interval_ms > 0 {
            let at = now + self.rng.gen_range(0..2 * self.options.crash_interval_ms);
            let node = self.rng.gen_range(1..=self.options.voters as i32);
            self.scheduler.schedule(at, Event::Crash { node });
        }
        if self.options.partition_interval_ms > 0 {
            let at = now
                + self
                    .rng
                    .gen_range(0..2 * self.options.partition_interval_ms);
            self.scheduler.schedule(at, Event::Repartition);
        }
    }

    /// Runs the fault phase and then the liveness phase. `Err` carries the violation and the
    /// one-line command that reproduces it.
    pub fn run(&mut self) -> Result<SimReport, Violation> {
        let liveness_end = self.options.fault_phase_ms + self.options.liveness_deadline_ms;
        let mut committed_at_heal: Option<i64> = None;
        while let Some((now, event)) = self.scheduler.next() {
            if now > liveness_end {
                break;
            }
            self.dispatch(event);
            if let Some(v) = self.invariants.take_violation() {
                return Err(self.fail(v));
            }
            if self.faults_over {
                let committed = self.invariants.committed_end_offset();
                match committed_at_heal {
                    None => committed_at_heal = Some(committed),
                    Some(at_heal) if committed > at_heal + 1 => {
                        return Ok(self.report(now));
                    }
                    _ => {}
                }
            }
        }
        let msg = format!(
            "liveness: no new write committed within {} ms after the faults stopped (committed end offset {})",
            self.options.liveness_deadline_ms,
            self.invariants.committed_end_offset()
        );
        Err(self.fail(Violation(msg)))
    }

    fn report(&self, now: u64) -> SimReport {
        SimReport {
            simulated_ms: now,
            committed_end_offset: self.invariants.committed_end_offset(),
            leaders_elected: self.invariants.leaders_elected(),
            writes_proposed: self.writes_proposed,
        }
    }

    fn fail(&self, v: Violation) -> Violation {
        let tail: Vec<&String> = self
            .trace
            .iter()
            .rev()
            .take(40)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let mut text = format!("{}\n--- last events ---\n", v.0);
        for line in tail {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&format!(
            "--- reproduce with: SIM_SEED={} cargo test -p kraftwerk-sim --test raft_sim -- --nocapture\n",
            self.seed
        ));
        Violation(text)
    }

    fn dispatch(&mut self, event: Event) {
        let now = self.scheduler.now_ms();
        match event {
            Event::Deliver {
                to,
                to_incarnation,
                input,
                reply_to,
            } => {
                let slot = self.nodes.get_mut(&to).expect("node");
                if slot.incarnation != to_incarnation || slot.core.is_none() {
                    return;
                }
                if let (Input::Request { id, .. }, Some(route)) = (&input, reply_to) {
                    self.routes.insert(id.0, route);
                }
                let core = slot.core.as_mut().expect("running");
                if let Err(e) = core.handle(now, input) {
                    self.invariants.violation(format!("node {to} failed: {e}"));
                    return;
                }
                self.after_step(to);
            }
            Event::Tick { node } => {
                let slot = self.nodes.get_mut(&node).expect("node");
                slot.scheduled_tick_ms = None;
                let Some(core) = slot.core.as_mut() else {
                    return;
                };
                if let Err(e) = core.poll(now) {
                    self.invariants
                        .violation(format!("node {node} failed: {e}"));
                    return;
                }
                self.after_step(node);
            }
            Event::Crash { node } => {
                if !self.faults_over {
                    self.crash(node);
                    let down_ms = self.rng.gen_range(100..5_000);
                    self.scheduler
                        .schedule(now + down_ms, Event::Restart { node });
                    self.schedule_faults_crash_only();
                }
            }
            Event::Restart { node } => {
                if self.nodes[&node].core.is_none() {
                    self.start_node(node);
                }
            }
            Event::Repartition => {
                if !self.faults_over {
                    let ids: Vec<i32> = self.nodes.keys().copied().collect();
                    self.network.partition = if self.rng.gen_bool(0.4) {
                        Partition::default()
                    } else {
                        Partition::random(&ids, &mut self.rng)
                    };
                    let d = self.network.partition.describe();
                    self.log(format!("network {d}"));
                    let at = now
                        + self
                            .rng
                            .gen_range(0..2 * self.options.partition_interval_ms.max(1));
                    self.scheduler.schedule(at, Event::Repartition);
                }
            }
            Event::Write => {
                self.propose_write(now);
                let at = now + self.rng.gen_range(1..=2 * self.options.write_interval_ms);
                self.scheduler.schedule(at, Event::Write);
            }
            Event::EndFaults => {
                self.faults_over = true;
                self.network.partition = Partition::default();
                self.network.faults = NetworkFaults::calm();
                self.log("faults stopped; network healed".into());
                let down: Vec<i32> = self
                    .nodes
                    .iter()
                    .filter(|(_, s)| s.core.is_none())
                    .map(|(&id, _)| id)
                    .collect();
                for id in down {
                    self.start_node(id);
                }
            }
        }
    }

    fn schedule_faults_crash_only(&mut self) {
        if self.options.crash_interval_ms > 0 {
            let now = self.scheduler.now_ms();
            let at = now + self.rng.gen_range(0..2 * self.options.crash_interval_ms);
            let node = self.rng.gen_range(1..=self.options.voters as i32);
            self.scheduler.schedule(at, Event::Crash { node });
        }
    }

    fn crash(&mut self, id: i32) {
        let torn = self.options.torn_writes;
        let value: u64 = self.rng.gen();
        let slot = self.nodes.get_mut(&id).expect("node");
        let Some(core) = slot.core.take() else { return };
        let (mut log, _store) = core.into_parts();
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

    fn propose_write(&mut self, now: u64) {
        let leader = self
            .nodes
            .iter()
            .find(|(_, s)| s.core.as_ref().is_some_and(|c| c.is_leader()))
            .map(|(&id, _)| id);
        let Some(id) = leader else { return };
        self.writes_proposed += 1;
        let n = self.rng.gen_range(1..=5);
        let records: Vec<Bytes> = (0..n)
            .map(|i| Bytes::from(format!("write-{}-{}", self.writes_proposed, i)))
            .collect();
        let core = self
            .nodes
            .get_mut(&id)
            .and_then(|s| s.core.as_mut())
            .expect("leader runs");
        let _ = core.append(now, records);
        self.after_step(id);
    }

    /// Delivers a node's outputs, reschedules its timer and checks invariants.
    fn after_step(&mut self, id: i32) {
        let now = self.scheduler.now_ms();
        let (outputs, deadline, incarnation) = {
            let slot = self.nodes.get_mut(&id).expect("node");
            let Some(core) = slot.core.as_mut() else {
                return;
            };
            (
                core.take_outputs(),
                core.next_deadline_ms(),
                slot.incarnation,
            )
        };
        for output in outputs {
            match output {
                Output::Send {
                    id: out_id,
                    destination,
                    request,
                } => {
                    let Some(to_incarnation) = self.nodes.get(&destination).map(|s| s.incarnation)
                    else {
                        continue;
                    };
                    let destination_down = self
                        .nodes
                        .get(&destination)
                        .is_some_and(|s| s.core.is_none());
                    if destination_down && self.network.partition.connected(id, destination) {
                        // A crashed process refuses connections at once (the OS answers RST).
                        let input = Input::SendFailed {
                            id: out_id,
                            failure: kraftwerk_raft::SendFailure::Disconnected,
                        };
                        self.scheduler.schedule(
                            now + 1,
                            Event::Deliver {
                                to: id,
                                to_incarnation: incarnation,
                                input,
                                reply_to: None,
                            },
                        );
                        continue;
                    }
                    let api_version = api_version_for(&request, &mut self.rng);
                    for delay in self.network.delays(id, destination, &mut self.rng) {
                        self.next_inbound += 1;
                        let input = Input::Request {
                            id: InboundId(self.next_inbound),
                            api_version,
                            request: request.clone(),
                        };
                        self.scheduler.schedule(
                            now + delay,
                            Event::Deliver {
                                to: destination,
                                to_incarnation,
                                input,
                                reply_to: Some((id, incarnation, out_id)),
                            },
                        );
                    }
                }
                Output::Respond {
                    id: in_id,
                    response,
                } => {
                    let Some((to, to_incarnation, out_id)) = self.routes.remove(&in_id.0) else {
                        continue;
                    };
                    for delay in self.network.delays(id, to, &mut self.rng) {
                        let input = Input::Response {
                            id: out_id,
                            response: response.clone(),
                        };
                        self.scheduler.schedule(
                            now + delay,
                            Event::Deliver {
                                to,
                                to_incarnation,
                                input,
                                reply_to: None,
                            },
                        );
                    }
                }
            }
        }
        let slot = self.nodes.get_mut(&id).expect("node");
        let at = deadline.max(now + 1).min(now + 60_000);
        if slot.scheduled_tick_ms.is_none_or(|t| at < t) {
            slot.scheduled_tick_ms = Some(at);
            self.scheduler.schedule(at, Event::Tick { node: id });
        }
        let core = slot.core.as_ref().expect("running");
        let role = core.role();
        let epoch = core.epoch();
        let hw = core.high_watermark();
        let prev_role = self.invariants.role_of(id);
        if prev_role != Some((role, epoch)) {
            let line = format!(
                "node {id} is {role} in epoch {epoch} (hw {hw:?}, leo {})",
                core.log().end_offset().offset
            );
            self.log(line);
        }
        let slot = &self.nodes[&id];
        let core = slot.core.as_ref().expect("running");
        self.invariants.check_node(id, core);
    }
}

/// Summary of a passing run.
#[derive(Clone, Debug)]
pub struct SimReport {
    /// Simulated time when the run ended, ms.
    pub simulated_ms: u64,
    /// Committed end offset reached.
    pub committed_end_offset: i64,
    /// Distinct (epoch, leader) pairs seen.
    pub leaders_elected: usize,
    /// Writes offered to leaders.
    pub writes_proposed: u64,
}
