//! A quorum of full controller nodes (Raft core + controller) serving simulated brokers and an
//! admin client, on simulated time, network and disks.
//!
//! On top of the Raft invariants (checked on every node's core), it checks the controller's:
//! - **replicas agree** (deterministic replay): every node's committed image at a given offset is
//!   identical (compared as the records the image writes out);
//! - **acknowledged writes survive** failovers: every topic whose creation was acknowledged (and
//!   not deleted) exists, with the acknowledged id, in the final leader's image;
//! - **producer-id blocks never overlap** and **broker epochs are never reused** (`docs/scenarios.md` C20; a broker epoch is the offset of its registration record);
//! - **partition invariants** in every committed image: leader ∈ ISR or -1, ISR ⊆ replicas,
//!   broker indexes consistent.
//!
//! [`ControllerNode`] is the node process, [`clients::Clients`] the brokers and admin client that
//! drive it, [`checks`] the controller invariants.

mod checks;
mod clients;

use std::collections::HashMap;

use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, RequestHeader};
use kraftwerk_controller::{
    Controller, ControllerConfig, ControllerRequest, ControllerResponse, RequestContext,
};
use kraftwerk_node::{
    Node, NodeError, NodeInput, NodeOutput, RequestToken, SnapshotDone, SnapshotPolicy,
};
use kraftwerk_protocol::codec::client_id_of;
use kraftwerk_raft::testing::{MemLog, MemQuorumStateStore};
use kraftwerk_raft::{Input, RaftConfig, RaftCore};
use kraftwerk_records::metadata::{ApiMessageAndVersion, FeatureLevelRecord};
use kraftwerk_records::metadata_version::{
    default_feature_levels, MetadataVersion, METADATA_VERSION_FEATURE_NAME,
};
use rand::rngs::SmallRng;
use rand::Rng;

pub use clients::{Clients, NodeSimReport};

use crate::harness::{Cluster, Outgoing, Sim, SimRaft, SimulatedNode, CLUSTER_ID};
use crate::invariants::Invariants;
use crate::wire;

/// A simulation of controller nodes and their clients.
pub type NodeCluster = Cluster<Clients>;

type SimNode = Node<MemLog, MemQuorumStateStore>;

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

/// Settings every controller node of a run shares.
#[derive(Clone, Copy, Debug)]
pub struct ControllerSettings {
    /// The bootstrapped metadata.version.
    pub mv: MetadataVersion,
    /// Bytes between snapshots (small, so snapshots, log cleaning and FetchSnapshot happen;
    /// `u64::MAX` for none).
    pub snapshot_bytes: u64,
}

/// Events of the controller simulation.
#[derive(Debug)]
pub enum ControllerEvent {
    /// A client's controller request arrives at a node.
    ClientRequest {
        /// Receiving node.
        to: i32,
        /// The incarnation it was sent to.
        to_incarnation: u64,
        /// Client-chosen token, echoed in the response.
        token: u64,
        /// The request frame.
        frame: Bytes,
    },
    /// A node's answer arrives at the client.
    ClientResponse {
        /// Token of the request.
        token: u64,
        /// The response frame.
        frame: Bytes,
    },
    /// A snapshot a node wrote "elsewhere" is done.
    SnapshotDone {
        /// The node.
        node: i32,
        /// The incarnation that asked for it.
        incarnation: u64,
        /// The outcome.
        done: SnapshotDone,
    },
    /// Brokers and the admin client act.
    ClientTick,
}

/// A controller node process: [`kraftwerk_node::Node`], what its listener remembers of the
/// requests it answers, and what its checks remember of it.
pub struct ControllerNode {
    node: SimNode,
    /// By token: how to encode the answer (the request's api, version and correlation id).
    answers: HashMap<u64, (ApiKey, i16, i32)>,
    /// Replayed end offset at which this process's image was last checked.
    last_checked_replay: i64,
}

impl ControllerNode {
    /// The node.
    pub fn node(&self) -> &SimNode {
        &self.node
    }

    /// Handles a controller request of `api_key` that came with `header`, answered later under
    /// `token`.
    pub fn handle_request(
        &mut self,
        now_ms: u64,
        token: u64,
        api_key: ApiKey,
        header: &RequestHeader,
        request: ControllerRequest,
    ) -> Result<(), NodeError> {
        let version = header.request_api_version;
        self.answers
            .insert(token, (api_key, version, header.correlation_id));
        // What the server's handler passes on for a direct (not forwarded) request.
        let ctx = RequestContext {
            api_version: version,
            client_id: Some(client_id_of(header).to_owned()),
            listener_name: "CONTROLLER".into(),
            ..Default::default()
        };
        let token = RequestToken(token);
        let input = NodeInput::Controller {
            token,
            ctx,
            request,
        };
        self.node.handle(now_ms, input)
    }

    /// Handles a finished snapshot.
    pub fn snapshot_done(&mut self, now_ms: u64, done: SnapshotDone) -> Result<(), NodeError> {
        self.node.handle(now_ms, NodeInput::SnapshotDone(done))
    }

    /// Encodes the answer under `token` as the listener would.
    fn encode_answer(&mut self, token: u64, response: ControllerResponse) -> Result<Bytes, String> {
        let Some((api_key, version, correlation_id)) = self.answers.remove(&token) else {
            return Err(format!("answered request {token}, which it never got"));
        };
        wire::encode_response(response.into_kind(), api_key, version, correlation_id)
            .map_err(|e| e.0)
    }
}

impl SimulatedNode for ControllerNode {
    type Config = ControllerSettings;
    type Output = NodeOutput;
    type Event = ControllerEvent;
    type Checks = checks::ImageDigests;
    type Error = NodeError;

    fn event_node(event: &ControllerEvent) -> Option<i32> {
        match event {
            ControllerEvent::ClientRequest { to, .. } => Some(*to),
            ControllerEvent::SnapshotDone { node, .. } => Some(*node),
            ControllerEvent::ClientResponse { .. } | ControllerEvent::ClientTick => None,
        }
    }

    fn configure(rng: &mut SmallRng) -> ControllerSettings {
        // 4.1-IV1, what LATEST_PRODUCTION was when the pinned seeds were recorded: a seed keeps
        // meaning the run it meant.
        let mv = if rng.gen_bool(0.5) {
            MetadataVersion::V4_1_IV1
        } else {
            MetadataVersion::MINIMUM
        };
        let snapshot_bytes = if rng.gen_bool(0.6) {
            rng.gen_range(300..3_000)
        } else {
            u64::MAX
        };
        ControllerSettings { mv, snapshot_bytes }
    }

    fn describe_config(config: &ControllerSettings) -> Option<String> {
        Some(format!(
            "metadata.version {}, snapshot every {} bytes",
            config.mv.name(),
            config.snapshot_bytes
        ))
    }

    fn fresh_log(config: &ControllerSettings) -> MemLog {
        if config.snapshot_bytes < u64::MAX {
            // Small segments and retention so the log start moves and lagging or restarted
            // nodes must fetch snapshots.
            MemLog::new()
                .with_segment_bytes(2_048)
                .with_retention(4_096, 7 * 24 * 3_600_000)
        } else {
            MemLog::new()
        }
    }

    fn start(
        mut raft: RaftConfig,
        log: MemLog,
        store: MemQuorumStateStore,
        config: &ControllerSettings,
        rng: &mut SmallRng,
        now_ms: u64,
    ) -> Result<Self, NodeError> {
        raft.append_linger_ms = rng.gen_range(0..=25);
        let mut controller_config =
            ControllerConfig::new(raft.node_id, CLUSTER_ID, bootstrap(config.mv));
        controller_config.rng_seed = rng.gen();
        controller_config.session_timeout_ms = 3_000;
        let core = RaftCore::new(raft, log, store, rng.gen(), now_ms)?;
        let policy = SnapshotPolicy {
            max_bytes_between_snapshots: config.snapshot_bytes,
            max_interval_ms: 0,
            clean_interval_ms: 5_000,
        };
        let controller = Controller::new(controller_config);
        let node = Node::with_snapshot_policy(core, controller, policy, now_ms)?;
        Ok(Self {
            node,
            answers: HashMap::new(),
            last_checked_replay: -1,
        })
    }

    fn handle(&mut self, now_ms: u64, input: Input) -> Result<(), NodeError> {
        self.node.handle(now_ms, NodeInput::Raft(input))
    }

    fn poll(&mut self, now_ms: u64) -> Result<(), NodeError> {
        self.node.poll(now_ms)
    }

    fn next_deadline_ms(&self) -> u64 {
        self.node.next_deadline_ms()
    }

    fn take_outputs(&mut self) -> Vec<Outgoing<NodeOutput>> {
        let outputs = self.node.take_outputs().into_iter();
        outputs
            .map(|o| match o {
                NodeOutput::Raft(raft) => Outgoing::Raft(raft),
                other => Outgoing::Other(other),
            })
            .collect()
    }

    fn raft(&self) -> &SimRaft {
        self.node.raft()
    }

    fn into_log(self) -> MemLog {
        self.node.into_parts().0
    }

    fn describe(&self) -> String {
        let node = &self.node;
        format!(
            "hw {:?}, replayed {}, active {}",
            node.raft().high_watermark(),
            node.replayed_end_offset(),
            node.controller().is_active()
        )
    }

    fn on_output(sim: &mut Sim<Self>, from: i32, output: NodeOutput) {
        let now = sim.now_ms();
        let incarnation = sim.incarnation(from).expect("node");
        match output {
            NodeOutput::Raft(_) => unreachable!("take_outputs hands Raft messages to the harness"),
            NodeOutput::WriteSnapshot(job) => {
                // Run it "elsewhere" and report back a little later, like the worker thread.
                let done = job.run();
                let delay = sim.rng.gen_range(1..50);
                let event = ControllerEvent::SnapshotDone {
                    node: from,
                    incarnation,
                    done,
                };
                sim.schedule(now + delay, event);
            }
            NodeOutput::Controller { token, response } => {
                let node = sim.nodes.get_mut(&from).and_then(|s| s.node.as_mut());
                let frame = match node.expect("running").encode_answer(token.0, response) {
                    Ok(frame) => frame,
                    Err(e) => {
                        let text = format!("node {from} cannot answer a client: {e}");
                        return sim.invariants.violation(text);
                    }
                };
                // Clients are always reachable (they live next to every controller); only loss
                // and latency apply.
                let faults = &sim.network.faults;
                if sim.rng.gen_range(0..100) >= faults.drop_percent {
                    let (min, max) = (faults.min_delay_ms, faults.max_delay_ms);
                    let delay = sim.rng.gen_range(min..=max);
                    let token = token.0;
                    sim.schedule(
                        now + delay,
                        ControllerEvent::ClientResponse { token, frame },
                    );
                }
            }
        }
    }

    fn check(&mut self, id: i32, digests: &mut checks::ImageDigests, invariants: &mut Invariants) {
        let offset = self.node.replayed_end_offset();
        if offset == self.last_checked_replay {
            return;
        }
        self.last_checked_replay = offset;
        checks::check_image(id, &self.node, digests, invariants);
    }
}
