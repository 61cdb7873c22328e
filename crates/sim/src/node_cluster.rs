//! A quorum of full controller nodes (Raft core + controller) serving simulated brokers and an
//! admin client, on simulated time, network and disks.
//!
//! On top of the Raft invariants (checked on every node's core), it checks the controller's:
//! - **replicas agree** (deterministic replay): every node's committed image at a given offset is
//!   identical (compared as the records the image writes out);
//! - **acknowledged writes survive** failovers: every topic whose creation was acknowledged (and
//!   not deleted) exists, with the acknowledged id, in the final leader's image;
//! - **producer-id blocks never overlap** and **broker epochs are never reused** (cases C20, §5.11);
//! - **partition invariants** in every committed image: leader ∈ ISR or -1, ISR ⊆ replicas,
//!   broker indexes consistent.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

use kraftwerk_controller::{
    Controller, ControllerConfig, ControllerRequest, ControllerResponse, RequestContext,
};
use kraftwerk_node::{Node, NodeInput, NodeOutput, RequestToken, SnapshotDone, SnapshotPolicy};
use kraftwerk_raft::testing::{MemLog, MemQuorumStateStore};
use kraftwerk_raft::{Endpoint, InboundId, Input, OutboundId, Output, RaftConfig, RaftCore};
use kraftwerk_records::metadata::{ApiMessageAndVersion, FeatureLevelRecord};
use kraftwerk_records::metadata_version::{
    default_feature_levels, MetadataVersion, METADATA_VERSION_FEATURE_NAME,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use uuid::Uuid;

use crate::invariants::{Invariants, Violation};
use crate::network::{Network, NetworkFaults, Partition};
use crate::raft_cluster::SimOptions;
use crate::scheduler::Scheduler;
use crate::workload::{
    create_topic, delete_topic, is_not_controller, Acknowledged, SimBroker, CLUSTER_ID,
};

type SimNode = Node<MemLog, MemQuorumStateStore>;

/// Who sent a controller request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Client {
    Broker(i32),
    Admin,
}

#[derive(Debug)]
enum Event {
    Deliver {
        to: i32,
        to_incarnation: u64,
        input: Input,
        reply_to: Option<(i32, u64, OutboundId)>,
    },
    ClientRequest {
        to: i32,
        to_incarnation: u64,
        token: u64,
        request: ControllerRequest,
    },
    ClientResponse {
        token: u64,
        response: ControllerResponse,
    },
    SnapshotDone {
        node: i32,
        incarnation: u64,
        done: SnapshotDone,
    },
    Tick {
        node: i32,
    },
    ClientTick,
    Crash {
        node: i32,
    },
    Restart {
        node: i32,
    },
    Repartition,
    EndFaults,
}

struct Slot {
    node: Option<SimNode>,
    parked_log: Option<MemLog>,
    store: MemQuorumStateStore,
    incarnation: u64,
    scheduled_tick_ms: Option<u64>,
    last_checked_replay: i64,
}

struct InFlightClient {
    client: Client,
    deadline_ms: u64,
    deletes: Option<String>,
}

/// Bootstrap records `kraftwerk format` writes for `mv`.
pub fn bootstrap(mv: MetadataVersion) -> Vec<ApiMessageAndVersion> {
    let mut records = vec![ApiMessageAndVersion::new(
        FeatureLevelRecord {
            name: METADATA_VERSION_FEATURE_NAME.to_owned(),
            feature_level: mv.feature_level(),
            ..Default::default()
        },
        0,
    )];
    for (feature, level) in default_feature_levels(mv) {
        records.push(ApiMessageAndVersion::new(
            FeatureLevelRecord {
                name: feature.name().to_owned(),
                feature_level: level,
                ..Default::default()
            },
            0,
        ));
    }
    records
}

/// A running controller-quorum simulation.
pub struct NodeCluster {
    seed: u64,
    options: SimOptions,
    rng: SmallRng,
    scheduler: Scheduler<Event>,
    network: Network,
    nodes: BTreeMap<i32, Slot>,
    raft_config: RaftConfig,
    mv: MetadataVersion,
    routes: HashMap<u64, (i32, u64, OutboundId)>,
    next_inbound: u64,
    invariants: Invariants,
    brokers: BTreeMap<i32, SimBroker>,
    client_requests: HashMap<u64, InFlightClient>,
    next_token: u64,
    next_topic: u64,
    admin_busy: bool,
    admin_target: i32,
    acked: Acknowledged,
    maybe_deleted: BTreeSet<String>,
    image_digests: BTreeMap<i64, (i32, u64)>,
    faults_over: bool,
    /// Bytes between snapshots (small, so snapshots, log cleaning and FetchSnapshot happen).
    snapshot_bytes: u64,
    /// Snapshot counters of crashed incarnations (written, loaded).
    retired_stats: (u64, u64),
    /// Notable events, printed on failure.
    pub trace: Vec<String>,
}

impl NodeCluster {
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
        let raft_config = RaftConfig::new(1, CLUSTER_ID, Uuid::nil(), voters.clone(), "CONTROLLER");
        let faults = if options.network_faults {
            NetworkFaults::random(&mut rng)
        } else {
            NetworkFaults::calm()
        };
        let mv = if rng.gen_bool(0.5) {
            MetadataVersion::LATEST_PRODUCTION
        } else {
            MetadataVersion::MINIMUM
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
            raft_config,
            mv,
            routes: HashMap::new(),
            next_inbound: 0,
            invariants: Invariants::default(),
            brokers: BTreeMap::new(),
            client_requests: HashMap::new(),
            next_token: 0,
            next_topic: 0,
            admin_busy: false,
            admin_target: 1,
            acked: Acknowledged::default(),
            maybe_deleted: BTreeSet::new(),
            image_digests: BTreeMap::new(),
            faults_over: false,
            snapshot_bytes: 0,
            retired_stats: (0, 0),
            trace: Vec::new(),
        };
        cluster.snapshot_bytes = if cluster.rng.gen_bool(0.6) {
            cluster.rng.gen_range(300..3_000)
        } else {
            u64::MAX
        };
        cluster.log(format!(
            "metadata.version {}, snapshot every {} bytes",
            mv.name(),
            cluster.snapshot_bytes
        ));
        for &id in voters.keys() {
            cluster.nodes.insert(
                id,
                Slot {
                    node: None,
                    // Small segments and retention (when snapshots are on) so the log start moves and
                    // lagging or restarted nodes must fetch snapshots.
                    parked_log: Some(if cluster.snapshot_bytes < u64::MAX {
                        MemLog::new()
                            .with_segment_bytes(2_048)
                            .with_retention(4_096, 7 * 24 * 3_600_000)
                    } else {
                        MemLog::new()
                    }),
                    store: MemQuorumStateStore::new(),
                    incarnation: 0,
                    scheduled_tick_ms: None,
                    last_checked_replay: -1,
                },
            );
            cluster.start_node(id);
        }
        let broker_count = cluster.rng.gen_range(1..=4);
        for i in 0..broker_count {
            let b = SimBroker::new(100 + i, &mut cluster.rng, 1);
            cluster.brokers.insert(b.id, b);
        }
        cluster.schedule_crash();
        if cluster.options.partition_interval_ms > 0 {
            let at = cluster
                .rng
                .gen_range(0..2 * cluster.options.partition_interval_ms);
            cluster.scheduler.schedule(at, Event::Repartition);
        }
        let end = cluster.options.fault_phase_ms;
        cluster.scheduler.schedule(end, Event::EndFaults);
        cluster.scheduler.schedule(10, Event::ClientTick);
        cluster
    }

    fn log(&mut self, line: String) {
        let now = self.scheduler.now_ms();
        self.trace.push(format!("[{now:>7} ms] {line}"));
    }

    fn start_node(&mut self, id: i32) {
        let now = self.scheduler.now_ms();
        let mut raft_config = self.raft_config.clone();
        raft_config.node_id = id;
        raft_config.directory_id = Uuid::from_u64_pair(0, 1000 + id as u64);
        raft_config.append_linger_ms = self.rng.gen_range(0..=25);
        let mut controller_config = ControllerConfig::new(id, CLUSTER_ID, bootstrap(self.mv));
        controller_config.rng_seed = self.rng.gen();
        controller_config.session_timeout_ms = 3_000;
        let raft_seed = self.rng.gen();
        let slot = self.nodes.get_mut(&id).expect("node");
        let log = slot.parked_log.take().expect("stopped node has its disk");
        slot.incarnation += 1;
        slot.last_checked_replay = -1;
        let core =
            RaftCore::new(raft_config, log, slot.store.clone(), raft_seed, now).expect("start");
        let policy = SnapshotPolicy {
            max_bytes_between_snapshots: self.snapshot_bytes,
            max_interval_ms: 0,
            clean_interval_ms: 5_000,
        };
        match Node::with_snapshot_policy(core, Controller::new(controller_config), policy, now) {
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

    fn schedule_crash(&mut self) {
        if self.options.crash_interval_ms > 0 {
            let at =
                self.scheduler.now_ms() + self.rng.gen_range(0..2 * self.options.crash_interval_ms);
            let node = self.rng.gen_range(1..=self.options.voters as i32);
            self.scheduler.schedule(at, Event::Crash { node });
        }
    }

    /// Runs the fault phase and the liveness phase.
    pub fn run(&mut self) -> Result<NodeSimReport, Violation> {
        let liveness_end = self.options.fault_phase_ms + self.options.liveness_deadline_ms;
        let mut topics_at_heal = None;
        while let Some((now, event)) = self.scheduler.next() {
            if now > liveness_end {
                break;
            }
            self.dispatch(event);
            if let Some(v) = self.invariants.take_violation() {
                return Err(self.fail(v));
            }
            if let Some(v) = self.acked.violations.first().cloned() {
                return Err(self.fail(Violation(v)));
            }
            if self.faults_over {
                let created = self.acked.topics.len() + self.acked.deleted.len();
                match topics_at_heal {
                    None => topics_at_heal = Some(created),
                    Some(at) if created >= at + 2 && self.all_brokers_unfenced() => {
                        self.check_acknowledged()?;
                        return Ok(NodeSimReport {
                            simulated_ms: now,
                            topics_created: self.acked.topics.len() + self.acked.deleted.len(),
                            producer_id_blocks: self.acked.producer_id_blocks.len(),
                            registrations: self.acked.broker_epochs.len(),
                            leaders_elected: self.invariants.leaders_elected(),
                            snapshots_written: self
                                .nodes
                                .values()
                                .filter_map(|s| s.node.as_ref())
                                .map(|n| n.stats().snapshots_written)
                                .sum::<u64>()
                                + self.retired_stats.0,
                            snapshots_loaded: self
                                .nodes
                                .values()
                                .filter_map(|s| s.node.as_ref())
                                .map(|n| n.stats().snapshots_loaded)
                                .sum::<u64>()
                                + self.retired_stats.1,
                        });
                    }
                    _ => {}
                }
            }
        }
        let status: Vec<String> = self
            .nodes
            .iter()
            .filter_map(|(id, s)| {
                s.node
                    .as_ref()
                    .map(|n| format!("node {id}: {:?}", n.status()))
            })
            .collect();
        self.trace.push(format!("final status: {status:#?}"));
        self.trace.push(format!(
            "brokers: {:?}",
            self.brokers
                .values()
                .map(|b| (b.id, b.epoch, b.fenced, b.target, b.in_flight))
                .collect::<Vec<_>>()
        ));
        self.trace.push(format!(
            "acked topics {} deleted {}",
            self.acked.topics.len(),
            self.acked.deleted.len()
        ));
        let text = format!(
            "liveness: after the faults stopped the quorum did not create 2 more topics and unfence every broker within {} ms",
            self.options.liveness_deadline_ms
        );
        Err(self.fail(Violation(text)))
    }

    fn all_brokers_unfenced(&self) -> bool {
        self.brokers
            .values()
            .all(|b| b.epoch.is_some() && !b.fenced)
    }

    fn check_acknowledged(&self) -> Result<(), Violation> {
        let leader = self
            .nodes
            .values()
            .filter_map(|s| s.node.as_ref())
            .find(|n| n.controller().is_active())
            .ok_or_else(|| self.fail(Violation("no active controller at the end".into())))?;
        let image = leader.controller().image();
        for (name, id) in &self.acked.topics {
            if self.maybe_deleted.contains(name) {
                continue;
            }
            match image.topics.id_of(name) {
                Some(found) if found == *id => {}
                other => {
                    return Err(self.fail(Violation(format!(
                        "acknowledged topic {name} ({id}) is not in the leader's image (found {other:?})"
                    ))))
                }
            }
        }
        for id in &self.acked.deleted {
            if image.topics.get(id).is_some() {
                return Err(self.fail(Violation(format!(
                    "acknowledged deletion of topic {id} was lost"
                ))));
            }
        }
        Ok(())
    }

    fn fail(&self, v: Violation) -> Violation {
        let start = if std::env::var("SIM_TRACE").is_ok() {
            0
        } else {
            self.trace.len().saturating_sub(50)
        };
        let mut text = format!("{}\n--- last events ---\n", v.0);
        for line in &self.trace[start..] {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&format!(
            "--- reproduce with: SIM_SEED={} cargo test -p kraftwerk-sim --test controller_sim -- --nocapture\n",
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
                if !self.is_running(to, to_incarnation) {
                    return;
                }
                if let (Input::Request { id, .. }, Some(route)) = (&input, reply_to) {
                    self.routes.insert(id.0, route);
                }
                self.step(to, |n| n.handle(now, NodeInput::Raft(input)));
            }
            Event::ClientRequest {
                to,
                to_incarnation,
                token,
                request,
            } => {
                if !self.is_running(to, to_incarnation) {
                    return;
                }
                if matches!(request, ControllerRequest::CreateTopics(_)) {
                    self.log(format!("create topic request delivered to node {to}"));
                }
                let ctx = RequestContext {
                    api_version: api_version_of(&request),
                    listener_name: "CONTROLLER".into(),
                    ..Default::default()
                };
                self.step(to, |n| {
                    n.handle(
                        now,
                        NodeInput::Controller {
                            token: RequestToken(token),
                            ctx,
                            request,
                        },
                    )
                });
            }
            Event::ClientResponse { token, response } => self.on_client_response(token, response),
            Event::SnapshotDone {
                node,
                incarnation,
                done,
            } => {
                if self.is_running(node, incarnation) {
                    self.step(node, |n| n.handle(now, NodeInput::SnapshotDone(done)));
                }
            }
            Event::Tick { node } => {
                let slot = self.nodes.get_mut(&node).expect("node");
                slot.scheduled_tick_ms = None;
                if slot.node.is_some() {
                    self.step(node, |n| n.poll(now));
                }
            }
            Event::ClientTick => {
                self.client_tick(now);
                self.scheduler.schedule(now + 50, Event::ClientTick);
            }
            Event::Crash { node } => {
                if !self.faults_over {
                    self.crash(node);
                    let down_ms = self.rng.gen_range(100..4_000);
                    self.scheduler
                        .schedule(now + down_ms, Event::Restart { node });
                    self.schedule_crash();
                }
            }
            Event::Restart { node } => {
                if self.nodes[&node].node.is_none() {
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
            Event::EndFaults => {
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
        }
    }

    fn is_running(&self, id: i32, incarnation: u64) -> bool {
        self.nodes
            .get(&id)
            .is_some_and(|s| s.incarnation == incarnation && s.node.is_some())
    }

    fn step(
        &mut self,
        id: i32,
        f: impl FnOnce(&mut SimNode) -> Result<(), kraftwerk_node::NodeError>,
    ) {
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

    fn crash(&mut self, id: i32) {
        let torn = self.options.torn_writes;
        let value: u64 = self.rng.gen();
        let slot = self.nodes.get_mut(&id).expect("node");
        let Some(node) = slot.node.take() else { return };
        self.retired_stats.0 += node.stats().snapshots_written;
        self.retired_stats.1 += node.stats().snapshots_loaded;
        let (mut log, _store) = node.into_parts();
        if torn {
            log.crash_torn(value);
        } else {
            log.crash();
        }
        slot.parked_log = Some(log);
        slot.incarnation += 1;
        self.log(format!("node {id} crashed"));
    }

    fn send_client_request(
        &mut self,
        client: Client,
        target: i32,
        request: ControllerRequest,
        now: u64,
    ) -> u64 {
        self.next_token += 1;
        let token = self.next_token;
        let deletes = match &request {
            ControllerRequest::DeleteTopics(r) => r.topic_names.first().map(|n| n.0.to_string()),
            _ => None,
        };
        self.client_requests.insert(
            token,
            InFlightClient {
                client,
                deadline_ms: now + 3_000,
                deletes,
            },
        );
        let Some(to_incarnation) = self.nodes.get(&target).map(|s| s.incarnation) else {
            return token;
        };
        // Clients are always reachable (they live next to every controller); only loss applies.
        if self.rng.gen_range(0..100) >= self.network.faults.drop_percent {
            let delay = self
                .rng
                .gen_range(self.network.faults.min_delay_ms..=self.network.faults.max_delay_ms);
            self.scheduler.schedule(
                now + delay,
                Event::ClientRequest {
                    to: target,
                    to_incarnation,
                    token,
                    request,
                },
            );
        }
        token
    }

    fn client_tick(&mut self, now: u64) {
        let expired: Vec<u64> = self
            .client_requests
            .iter()
            .filter(|(_, r)| now >= r.deadline_ms)
            .map(|(&t, _)| t)
            .collect();
        for token in expired {
            if let Some(r) = self.client_requests.remove(&token) {
                self.on_client_gave_up(r.client);
            }
        }
        let voters = self.options.voters as i32;
        let max_offset = self
            .nodes
            .values()
            .filter_map(|s| s.node.as_ref())
            .map(|n| n.replayed_end_offset())
            .max()
            .unwrap_or(0);
        let ids: Vec<i32> = self.brokers.keys().copied().collect();
        for id in ids {
            let b = &self.brokers[&id];
            if b.in_flight.is_some() || now < b.next_action_ms || now < b.silent_until_ms {
                continue;
            }
            let (request, target) = if b.epoch.is_none() {
                (b.registration(), b.target)
            } else if self.rng.gen_bool(0.05) {
                (b.allocate_producer_ids(), b.target)
            } else {
                (b.heartbeat(max_offset - 1), b.target)
            };
            let token = self.send_client_request(Client::Broker(id), target, request, now);
            let silence = if !self.faults_over && self.rng.gen_bool(0.002) {
                now + 5_000
            } else {
                0
            };
            let restart = !self.faults_over && self.rng.gen_bool(0.001);
            let next = now + self.rng.gen_range(100..600);
            let rng_a: u64 = self.rng.gen();
            let rng_b: u64 = self.rng.gen();
            let b = self.brokers.get_mut(&id).expect("broker");
            b.in_flight = Some((token, now + 3_000));
            b.next_action_ms = next;
            if silence > 0 {
                b.silent_until_ms = silence;
            }
            if restart {
                b.incarnation = Uuid::from_u64_pair(rng_a, rng_b);
                b.epoch = None;
            }
        }
        let _ = voters;
        if !self.admin_busy && self.rng.gen_bool(0.1) {
            let request = if !self.acked.topics.is_empty() && self.rng.gen_bool(0.2) {
                let names: Vec<String> = self.acked.topics.keys().cloned().collect();
                let name = names[self.rng.gen_range(0..names.len())].clone();
                self.maybe_deleted.insert(name.clone());
                delete_topic(&name)
            } else {
                self.next_topic += 1;
                let rf = self.rng.gen_range(1..=self.brokers.len().min(3)) as i16;
                create_topic(
                    &format!("topic-{}", self.next_topic),
                    self.rng.gen_range(1..=4),
                    rf,
                )
            };
            let target = self.admin_target;
            self.log(format!("admin sends to node {target}"));
            self.send_client_request(Client::Admin, target, request, now);
            self.admin_busy = true;
        }
    }

    fn on_client_gave_up(&mut self, client: Client) {
        let voters = self.options.voters as i32;
        match client {
            Client::Admin => {
                self.admin_busy = false;
                self.admin_target = self.admin_target % voters + 1;
            }
            Client::Broker(id) => {
                let target = self.rng.gen_range(1..=voters);
                if let Some(b) = self.brokers.get_mut(&id) {
                    b.in_flight = None;
                    b.target = target;
                }
            }
        }
    }

    fn on_client_response(&mut self, token: u64, response: ControllerResponse) {
        let Some(req) = self.client_requests.remove(&token) else {
            return;
        };
        let not_controller = is_not_controller(&response);
        match req.client {
            Client::Admin => {
                self.admin_busy = false;
                let summary = match &response {
                    ControllerResponse::CreateTopics(r) => format!(
                        "create {:?}",
                        r.topics
                            .iter()
                            .map(|t| (
                                t.name.0.to_string(),
                                t.error_code,
                                t.error_message.as_ref().map(|m| m.to_string())
                            ))
                            .collect::<Vec<_>>()
                    ),
                    ControllerResponse::DeleteTopics(r) => format!(
                        "delete {:?}",
                        r.responses
                            .iter()
                            .map(|t| (t.name.as_ref().map(|n| n.0.to_string()), t.error_code))
                            .collect::<Vec<_>>()
                    ),
                    other => format!("{other:?}"),
                };
                self.log(format!("admin got {summary}"));
                if not_controller {
                    // Like a broker's forwarding channel: find the controller and go again (round
                    // robin, so it is found within one pass over the voters).
                    let voters = self.options.voters as i32;
                    self.admin_target = self.admin_target % voters + 1;
                }
                self.acked.record(None, &response);
                if let (Some(name), ControllerResponse::DeleteTopics(r)) = (&req.deletes, &response)
                {
                    if r.responses.iter().all(|t| t.error_code != 0) && !not_controller {
                        // Refused (e.g. unknown): it was not deleted by this request.
                        let _ = name;
                    }
                }
            }
            Client::Broker(id) => {
                let who = self.brokers.get(&id).map(|b| (b.id, b.incarnation));
                self.acked.record(who, &response);
                let voters = self.options.voters as i32;
                let retarget = self.rng.gen_range(1..=voters);
                let b = self.brokers.get_mut(&id).expect("broker");
                b.in_flight = None;
                if not_controller {
                    b.target = retarget;
                    b.next_action_ms = 0;
                    return;
                }
                match &response {
                    ControllerResponse::BrokerRegistration(r) if r.error_code == 0 => {
                        b.epoch = Some(r.broker_epoch);
                        b.next_action_ms = 0;
                    }
                    ControllerResponse::BrokerHeartbeat(r) if r.error_code == 0 => {
                        b.fenced = r.is_fenced
                    }
                    ControllerResponse::BrokerHeartbeat(r) if r.error_code == 77 => {
                        // STALE_BROKER_EPOCH: a real broker would be stuck; ours re-registers
                        // as if restarted, so the run can continue.
                        b.epoch = None;
                    }
                    _ => {}
                }
            }
        }
    }

    fn after_step(&mut self, id: i32) {
        let now = self.scheduler.now_ms();
        let (outputs, deadline, incarnation) = {
            let slot = self.nodes.get_mut(&id).expect("node");
            let Some(node) = slot.node.as_mut() else {
                return;
            };
            (
                node.take_outputs(),
                node.next_deadline_ms(),
                slot.incarnation,
            )
        };
        for output in outputs {
            match output {
                NodeOutput::Raft(Output::Send {
                    id: out_id,
                    destination,
                    request,
                }) => {
                    let Some(to_incarnation) = self.nodes.get(&destination).map(|s| s.incarnation)
                    else {
                        continue;
                    };
                    let destination_down = self
                        .nodes
                        .get(&destination)
                        .is_some_and(|s| s.node.is_none());
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
                    let api_version = crate::raft_cluster::api_version_for(&request, &mut self.rng);
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
                NodeOutput::Raft(Output::Respond {
                    id: in_id,
                    response,
                }) => {
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
                NodeOutput::WriteSnapshot(job) => {
                    // Run it "elsewhere" and report back a little later, like the worker thread.
                    let done = job.run();
                    let delay = self.rng.gen_range(1..50);
                    self.scheduler.schedule(
                        now + delay,
                        Event::SnapshotDone {
                            node: id,
                            incarnation,
                            done,
                        },
                    );
                }
                NodeOutput::Controller { token, response } => {
                    if self.rng.gen_range(0..100) >= self.network.faults.drop_percent {
                        let delay = self.rng.gen_range(
                            self.network.faults.min_delay_ms..=self.network.faults.max_delay_ms,
                        );
                        self.scheduler.schedule(
                            now + delay,
                            Event::ClientResponse {
                                token: token.0,
                                response,
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
        let node = slot.node.as_ref().expect("running");
        let (role, epoch) = (node.raft().role(), node.raft().epoch());
        if self.invariants.role_of(id) != Some((role, epoch)) {
            let line = format!(
                "node {id} is {role} in epoch {epoch} (hw {:?}, replayed {}, active {})",
                node.raft().high_watermark(),
                node.replayed_end_offset(),
                node.controller().is_active()
            );
            self.log(line);
        }
        let node = self.nodes[&id].node.as_ref().expect("running");
        self.invariants.check_node(id, node.raft());
        self.check_image(id);
    }

    /// Replicas agree: the committed image at each offset is the same on every node.
    fn check_image(&mut self, id: i32) {
        let slot = self.nodes.get_mut(&id).expect("node");
        let node = slot.node.as_ref().expect("running");
        let offset = node.replayed_end_offset();
        if offset == slot.last_checked_replay {
            return;
        }
        slot.last_checked_replay = offset;
        let image = node.controller().image();
        if let Err(e) = image.topics.check_indexes() {
            return self.invariants.violation(format!(
                "node {id}: broker indexes broken at offset {offset}: {e}"
            ));
        }
        for topic in image.topics.iter() {
            for (pid, p) in topic.partitions.iter() {
                if let Err(e) = p.check_invariants() {
                    return self.invariants.violation(format!(
                        "node {id}: partition {}-{pid} at offset {offset}: {e}",
                        topic.name
                    ));
                }
            }
        }
        let mut hasher = DefaultHasher::new();
        for r in image.write_records() {
            r.encode().expect("image records encode").hash(&mut hasher);
        }
        let digest = hasher.finish();
        match self.image_digests.get(&offset) {
            Some(&(other, d)) if d != digest => {
                self.invariants.violation(format!(
                    "images differ at offset {offset}: node {other} and node {id}"
                ));
            }
            Some(_) => {}
            None => {
                self.image_digests.insert(offset, (id, digest));
            }
        }
    }
}

fn api_version_of(request: &ControllerRequest) -> i16 {
    match request {
        ControllerRequest::BrokerRegistration(_) => 4,
        ControllerRequest::BrokerHeartbeat(_) => 1,
        ControllerRequest::CreateTopics(_) => 7,
        ControllerRequest::DeleteTopics(_) => 6,
        ControllerRequest::AlterPartition(_) => 3,
        ControllerRequest::DescribeCluster(_) => 1,
        _ => 0,
    }
}

/// Summary of a passing controller simulation.
#[derive(Clone, Debug)]
pub struct NodeSimReport {
    /// Simulated time at the end, ms.
    pub simulated_ms: u64,
    /// Topics whose creation was acknowledged.
    pub topics_created: usize,
    /// Producer-id blocks handed out.
    pub producer_id_blocks: usize,
    /// Broker registrations acknowledged.
    pub registrations: usize,
    /// Epochs that had a leader.
    pub leaders_elected: usize,
    /// Snapshots written by all nodes (including crashed incarnations).
    pub snapshots_written: u64,
    /// Snapshots loaded at start or after a FetchSnapshot download.
    pub snapshots_loaded: u64,
}
