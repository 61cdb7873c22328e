//! The controller simulation's workload: simulated brokers (register, heartbeat, allocate
//! producer ids) and an admin client (create and delete topics), each sending to the node it
//! believes is the active controller and moving on when told NOT_CONTROLLER or timing out.
//!
//! Liveness: once the faults stop, the quorum must create (or delete) two more topics and
//! unfence every broker within the deadline.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use kraftwerk_controller::ControllerRequest;
use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_protocol::codec::DecodedRequest;
use rand::Rng;
use uuid::Uuid;

use super::checks::check_acknowledged;
use super::{ControllerEvent, ControllerNode};
use crate::harness::{Sim, Workload};
use crate::invariants::Violation;
use crate::versions::{admin_table, broker_table};
use crate::wire::{self, Outbound};
use crate::workload::{create_topic, delete_topic, is_not_controller, Acknowledged, SimBroker};

type NodeSim = Sim<ControllerNode>;

/// Who sent a controller request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Client {
    Broker(i32),
    Admin,
}

/// A request a client waits for, and how to read its answer.
struct InFlightClient {
    client: Client,
    deadline_ms: u64,
    api_key: ApiKey,
    version: i16,
    correlation_id: i32,
}

/// The simulated brokers and admin client, and what they were told.
pub struct Clients {
    brokers: BTreeMap<i32, SimBroker>,
    /// The controller API versions the admin client sends.
    admin_table: ApiTable,
    /// By token; ordered, so that requests expiring together are given up in a fixed order.
    client_requests: BTreeMap<u64, InFlightClient>,
    next_token: u64,
    next_topic: u64,
    admin_busy: bool,
    admin_target: i32,
    acked: Acknowledged,
    /// Topics a delete was sent for (whatever its outcome, it may have happened).
    maybe_deleted: BTreeSet<String>,
    /// Snapshot counters of crashed incarnations (written, loaded).
    retired_stats: (u64, u64),
    /// Topics created or deleted when the faults stopped.
    topics_at_heal: Option<usize>,
}

impl Workload for Clients {
    type Node = ControllerNode;
    type Report = NodeSimReport;
    const TEST: &'static str = "controller_sim";
    const MAX_DOWN_MS: u64 = 4_000;

    fn new(sim: &mut NodeSim) -> Self {
        let broker_count = sim.rng.gen_range(1..=4);
        let mut registration_maxima = Vec::new();
        let brokers = (0..broker_count)
            .map(|i| {
                // Mostly a 4.x broker; sometimes one that registers at v2 or v3.
                let max = if sim.rng.gen_bool(0.7) {
                    4
                } else {
                    sim.rng.gen_range(2..=3)
                };
                registration_maxima.push(max);
                let b = SimBroker::new(100 + i, &mut sim.rng, 1, broker_table(max));
                (b.id, b)
            })
            .collect();
        let delete_topics_max = if sim.rng.gen_bool(0.7) { 6 } else { 5 };
        sim.log(format!(
            "brokers send BrokerRegistration up to v{registration_maxima:?}, the admin DeleteTopics up to v{delete_topics_max}"
        ));
        Self {
            brokers,
            admin_table: admin_table(delete_topics_max),
            client_requests: BTreeMap::new(),
            next_token: 0,
            next_topic: 0,
            admin_busy: false,
            admin_target: 1,
            acked: Acknowledged::default(),
            maybe_deleted: BTreeSet::new(),
            retired_stats: (0, 0),
            topics_at_heal: None,
        }
    }

    fn start(&mut self, sim: &mut NodeSim) {
        sim.schedule(10, ControllerEvent::ClientTick);
    }

    fn on_event(&mut self, sim: &mut NodeSim, event: ControllerEvent) {
        let now = sim.now_ms();
        match event {
            ControllerEvent::ClientRequest {
                to,
                to_incarnation,
                token,
                frame,
            } => {
                if sim.is_running(to, to_incarnation) {
                    deliver_client_request(sim, to, token, frame);
                }
            }
            ControllerEvent::ClientResponse { token, frame } => {
                self.on_client_response(sim, token, frame)
            }
            ControllerEvent::SnapshotDone {
                node,
                incarnation,
                done,
            } => {
                if sim.is_running(node, incarnation) {
                    sim.step(node, |n, now| n.snapshot_done(now, done));
                }
            }
            ControllerEvent::ClientTick => {
                self.client_tick(sim, now);
                sim.schedule(now + 50, ControllerEvent::ClientTick);
            }
        }
    }

    fn on_crash(&mut self, node: &ControllerNode) {
        let stats = node.node().stats();
        self.retired_stats.0 += stats.snapshots_written;
        self.retired_stats.1 += stats.snapshots_loaded;
    }

    fn after_event(
        &mut self,
        sim: &mut NodeSim,
        now_ms: u64,
    ) -> Result<Option<NodeSimReport>, Violation> {
        if let Some(v) = self.acked.violations.first().cloned() {
            return Err(Violation(v));
        }
        if !sim.faults_over {
            return Ok(None);
        }
        let created = self.acked.topics.len() + self.acked.deleted.len();
        match self.topics_at_heal {
            None => self.topics_at_heal = Some(created),
            Some(at) if created >= at + 2 && self.all_brokers_unfenced() => {
                // Only the active controller of the newest epoch is the leader: a deposed leader
                // that has not heard of its successor yet (cut off with a minority, its
                // check-quorum timer reset by an old fetch) still reports itself active, and
                // mid-election nobody is. Until one is active in the newest epoch, wait; the
                // liveness deadline catches a quorum that never settles.
                let newest = sim.running().map(|(_, n)| n.node().raft().epoch()).max();
                let active_in_newest = sim.running().any(|(_, n)| {
                    Some(n.node().raft().epoch()) == newest && n.node().controller().is_active()
                });
                if !active_in_newest {
                    return Ok(None);
                }
                let controllers = sim
                    .running()
                    .filter(|(_, n)| Some(n.node().raft().epoch()) == newest)
                    .map(|(_, n)| n.node().controller());
                check_acknowledged(controllers, &self.acked, &self.maybe_deleted)?;
                return Ok(Some(self.report(sim, now_ms)));
            }
            _ => {}
        }
        Ok(None)
    }

    fn liveness_failure(&mut self, sim: &mut NodeSim) -> String {
        let status: Vec<String> = sim
            .running()
            .map(|(id, n)| format!("node {id}: {:?}", n.node().status()))
            .collect();
        sim.trace.push(format!("final status: {status:#?}"));
        sim.trace.push(format!(
            "brokers: {:?}",
            self.brokers
                .values()
                .map(|b| (b.id, b.epoch, b.fenced, b.target, b.in_flight))
                .collect::<Vec<_>>()
        ));
        sim.trace.push(format!(
            "acked topics {} deleted {}",
            self.acked.topics.len(),
            self.acked.deleted.len()
        ));
        format!(
            "liveness: after the faults stopped the quorum did not create 2 more topics and unfence every broker within {} ms",
            sim.options.liveness_deadline_ms
        )
    }
}

impl Clients {
    fn all_brokers_unfenced(&self) -> bool {
        self.brokers
            .values()
            .all(|b| b.epoch.is_some() && !b.fenced)
    }

    fn report(&self, sim: &NodeSim, now_ms: u64) -> NodeSimReport {
        let stats = || sim.running().map(|(_, n)| n.node().stats());
        NodeSimReport {
            simulated_ms: now_ms,
            topics_created: self.acked.topics.len() + self.acked.deleted.len(),
            producer_id_blocks: self.acked.producer_id_blocks.len(),
            registrations: self.acked.broker_epochs.len(),
            leaders_elected: sim.invariants.leaders_elected(),
            snapshots_written: stats().map(|s| s.snapshots_written).sum::<u64>()
                + self.retired_stats.0,
            snapshots_loaded: stats().map(|s| s.snapshots_loaded).sum::<u64>()
                + self.retired_stats.1,
        }
    }

    /// Sends a request of `api_key`, built for the version `client` and node `target`
    /// negotiate; returns its token.
    fn send_client_request(
        &mut self,
        sim: &mut NodeSim,
        client: Client,
        target: i32,
        api_key: ApiKey,
        build: impl FnOnce(i16) -> RequestKind,
    ) -> u64 {
        let now = sim.now_ms();
        self.next_token += 1;
        let token = self.next_token;
        let (table, client_id) = match client {
            Client::Broker(id) => (&self.brokers[&id].api_table, format!("broker-{id}")),
            Client::Admin => (&self.admin_table, "adminclient-1".to_owned()),
        };
        let correlation_id = token as i32;
        let served = &sim.tables[&target];
        let sent =
            match wire::encode_request(api_key, build, table, served, correlation_id, &client_id) {
                Ok(Outbound::Sent(sent)) => sent,
                Ok(Outbound::Unsupported(why)) => {
                    let text = format!("{client:?} cannot send to node {target}: {why}");
                    sim.invariants.violation(text);
                    return token;
                }
                Err(e) => {
                    let text = format!("{client:?} cannot send to node {target}: {}", e.0);
                    sim.invariants.violation(text);
                    return token;
                }
            };
        let in_flight = InFlightClient {
            client,
            deadline_ms: now + 3_000,
            api_key,
            version: sent.version,
            correlation_id,
        };
        self.client_requests.insert(token, in_flight);
        let Some(to_incarnation) = sim.incarnation(target) else {
            return token;
        };
        // Clients are always reachable (they live next to every controller); only loss applies.
        let faults = &sim.network.faults;
        if sim.rng.gen_range(0..100) >= faults.drop_percent {
            let (min, max) = (faults.min_delay_ms, faults.max_delay_ms);
            let delay = sim.rng.gen_range(min..=max);
            let event = ControllerEvent::ClientRequest {
                to: target,
                to_incarnation,
                token,
                frame: sent.frame,
            };
            sim.schedule(now + delay, event);
        }
        token
    }

    fn client_tick(&mut self, sim: &mut NodeSim, now: u64) {
        let expired: Vec<u64> = self
            .client_requests
            .iter()
            .filter(|(_, r)| now >= r.deadline_ms)
            .map(|(&t, _)| t)
            .collect();
        for token in expired {
            if let Some(r) = self.client_requests.remove(&token) {
                self.on_client_gave_up(sim, r.client);
            }
        }
        self.brokers_act(sim, now);
        if !self.admin_busy && sim.rng.gen_bool(0.1) {
            self.admin_acts(sim);
        }
    }

    /// Every broker not waiting for an answer registers, heartbeats or allocates producer ids.
    fn brokers_act(&mut self, sim: &mut NodeSim, now: u64) {
        let max_offset = sim
            .running()
            .map(|(_, n)| n.node().replayed_end_offset())
            .max()
            .unwrap_or(0);
        let ids: Vec<i32> = self.brokers.keys().copied().collect();
        for id in ids {
            let b = &self.brokers[&id];
            if b.in_flight.is_some() || now < b.next_action_ms || now < b.silent_until_ms {
                continue;
            }
            let (api_key, request) = if b.epoch.is_none() {
                (ApiKey::BrokerRegistration, b.registration())
            } else if sim.rng.gen_bool(0.05) {
                (ApiKey::AllocateProducerIds, b.allocate_producer_ids())
            } else {
                (ApiKey::BrokerHeartbeat, b.heartbeat(max_offset - 1))
            };
            let (client, target) = (Client::Broker(id), b.target);
            let token = self.send_client_request(sim, client, target, api_key, |_| request);
            let faults_on = !sim.faults_over;
            let silence = faults_on && sim.rng.gen_bool(0.002);
            let restart = faults_on && sim.rng.gen_bool(0.001);
            let next = now + sim.rng.gen_range(100..600);
            let incarnation = Uuid::from_u64_pair(sim.rng.gen(), sim.rng.gen());
            let b = self.brokers.get_mut(&id).expect("broker");
            b.in_flight = Some((token, now + 3_000));
            b.next_action_ms = next;
            if silence {
                // Stop heartbeating for a while, to get fenced.
                b.silent_until_ms = now + 5_000;
            }
            if restart {
                b.incarnation = incarnation;
                b.epoch = None;
            }
        }
    }

    /// The admin creates a topic or (sometimes) deletes an acknowledged one.
    fn admin_acts(&mut self, sim: &mut NodeSim) {
        let target = self.admin_target;
        if !self.acked.topics.is_empty() && sim.rng.gen_bool(0.2) {
            let names: Vec<String> = self.acked.topics.keys().cloned().collect();
            let name = names[sim.rng.gen_range(0..names.len())].clone();
            self.maybe_deleted.insert(name.clone());
            sim.log(format!("admin sends to node {target}"));
            let build = |version| delete_topic(&name, version);
            self.send_client_request(sim, Client::Admin, target, ApiKey::DeleteTopics, build);
        } else {
            self.next_topic += 1;
            let rf = sim.rng.gen_range(1..=self.brokers.len().min(3)) as i16;
            let partitions = sim.rng.gen_range(1..=4);
            let request = create_topic(&format!("topic-{}", self.next_topic), partitions, rf);
            sim.log(format!("admin sends to node {target}"));
            let build = |_| request;
            self.send_client_request(sim, Client::Admin, target, ApiKey::CreateTopics, build);
        }
        self.admin_busy = true;
    }

    fn on_client_gave_up(&mut self, sim: &mut NodeSim, client: Client) {
        let voters = sim.options.voters as i32;
        match client {
            Client::Admin => {
                self.admin_busy = false;
                self.admin_target = self.admin_target % voters + 1;
            }
            Client::Broker(id) => {
                let target = sim.rng.gen_range(1..=voters);
                if let Some(b) = self.brokers.get_mut(&id) {
                    b.in_flight = None;
                    b.target = target;
                }
            }
        }
    }

    fn on_client_response(&mut self, sim: &mut NodeSim, token: u64, frame: Bytes) {
        let Some(req) = self.client_requests.remove(&token) else {
            return;
        };
        let decoded = wire::decode_response(frame, req.api_key, req.version, req.correlation_id);
        let response = match decoded {
            Ok(response) => response,
            Err(e) => {
                let text = format!("{:?} cannot read its response: {}", req.client, e.0);
                return sim.invariants.violation(text);
            }
        };
        match req.client {
            Client::Admin => self.on_admin_response(sim, response),
            Client::Broker(id) => self.on_broker_response(sim, id, response),
        }
    }

    fn on_admin_response(&mut self, sim: &mut NodeSim, response: ResponseKind) {
        self.admin_busy = false;
        sim.log(format!("admin got {}", summary(&response)));
        if is_not_controller(&response) {
            // Like a broker's forwarding channel: find the controller and go again (round
            // robin, so it is found within one pass over the voters).
            let voters = sim.options.voters as i32;
            self.admin_target = self.admin_target % voters + 1;
        }
        self.acked.record(None, &response);
    }

    fn on_broker_response(&mut self, sim: &mut NodeSim, id: i32, response: ResponseKind) {
        let who = self.brokers.get(&id).map(|b| (b.id, b.incarnation));
        self.acked.record(who, &response);
        let voters = sim.options.voters as i32;
        let retarget = sim.rng.gen_range(1..=voters);
        let b = self.brokers.get_mut(&id).expect("broker");
        b.in_flight = None;
        if is_not_controller(&response) {
            b.target = retarget;
            b.next_action_ms = 0;
            return;
        }
        match &response {
            ResponseKind::BrokerRegistration(r) if r.error_code == 0 => {
                b.epoch = Some(r.broker_epoch);
                b.next_action_ms = 0;
            }
            ResponseKind::BrokerHeartbeat(r) if r.error_code == 0 => b.fenced = r.is_fenced,
            ResponseKind::BrokerHeartbeat(r) if r.error_code == 77 => {
                // STALE_BROKER_EPOCH: a real broker would be stuck; ours re-registers as if
                // restarted, so the run can continue.
                b.epoch = None;
            }
            _ => {}
        }
    }
}

/// One line for the trace: the per-topic outcome of a create or delete.
fn summary(response: &ResponseKind) -> String {
    match response {
        ResponseKind::CreateTopics(r) => format!(
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
        ResponseKind::DeleteTopics(r) => format!(
            "delete {:?}",
            r.responses
                .iter()
                .map(|t| (t.name.as_ref().map(|n| n.0.to_string()), t.error_code))
                .collect::<Vec<_>>()
        ),
        other => format!("{other:?}"),
    }
}

/// Node `to` decodes a client's request frame, as its listener would, and handles it.
fn deliver_client_request(sim: &mut NodeSim, to: i32, token: u64, frame: Bytes) {
    let decoded = match wire::decode_request(frame, &sim.tables[&to]) {
        Ok(decoded) => decoded,
        Err(e) => {
            let text = format!("node {to} cannot read a client request: {}", e.0);
            return sim.invariants.violation(text);
        }
    };
    let DecodedRequest {
        api_key,
        header,
        body,
    } = decoded;
    let Ok(request) = ControllerRequest::from_kind(body) else {
        let text = format!("node {to} got {api_key:?}, not a controller API");
        return sim.invariants.violation(text);
    };
    if matches!(request, ControllerRequest::CreateTopics(_)) {
        sim.log(format!("create topic request delivered to node {to}"));
    }
    sim.step(to, |n, now| {
        n.handle_request(now, token, api_key, &header, request)
    });
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
