//! AddRaftVoter / RemoveRaftVoter that a node's core *sends* (auto-join, `core::auto_join`),
//! served at their destination the way the server's driver serves them
//! (`crates/server/src/handler.rs`, `crates/node/src/voter_changes.rs`): the cluster id is
//! checked, the new voter's ApiVersions is probed for its `kraft.version` range, the core's
//! `add_voter` / `remove_voter` decides, and its answer (now, or later from
//! `take_voter_change_answers`) goes back as the response to the sender's request. Request and
//! response cross the simulated network like every other message, so drops, partitions and
//! crashes of either end apply.
//!
//! The driver's request ids have [`DRIVER_REQUEST_BIT`] set, so they never collide with the
//! workload's own (an operator's) requests to the same core; answers to those are kept for the
//! workload ([`Sim::take_operator_answers`]).

use std::collections::BTreeMap;

use kafka_protocol::messages::{
    AddRaftVoterResponse, ApiKey, RemoveRaftVoterResponse, RequestKind,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_protocol::codec::DecodedRequest;
use kraftwerk_raft::{
    errors, Endpoint, InboundId, RaftResponse, ReplicaKey, VoterChangeAnswer, VoterNode,
};

use super::{Route, Sim, SimulatedNode, CLUSTER_ID};

/// Set in the request id of every voter change the harness's driver asks of a core.
pub const DRIVER_REQUEST_BIT: u64 = 1 << 63;

/// A voter change a peer asked for, as the driver passes it to the core.
#[derive(Clone, Debug)]
pub enum VoterChange {
    /// AddRaftVoter.
    Add {
        /// The new voter.
        node: VoterNode,
        /// Answer at commit (else at append, KIP-1186).
        ack_when_committed: bool,
        /// The `kraft.version` range the new voter's ApiVersions advertised (`None`: it could
        /// not be asked).
        new_voter_kraft_versions: Option<(i16, i16)>,
    },
    /// RemoveRaftVoter.
    Remove(ReplicaKey),
}

/// A peer's voter change request served and not answered yet.
#[derive(Clone, Debug)]
pub struct Served {
    /// The node serving it.
    pub node: i32,
    /// Its incarnation then.
    pub incarnation: u64,
    /// The node that sent it.
    pub from: i32,
    /// When it arrived, ms.
    pub at_ms: u64,
    /// What it asks, for the trace.
    pub what: String,
}

/// What the driver served, for the report and the checks.
#[derive(Clone, Debug, Default)]
pub struct ServedVoterChanges {
    /// AddRaftVoter requests that reached a node.
    pub adds: u64,
    /// RemoveRaftVoter requests that reached a node.
    pub removes: u64,
    /// Answered NONE.
    pub answered_ok: u64,
    /// Answered with an error.
    pub refused: u64,
    /// Not answered yet, by driver request id.
    pub outstanding: BTreeMap<u64, Served>,
    /// Answers to the workload's own requests, by node, until it takes them.
    pub(super) operator_answers: BTreeMap<i32, Vec<VoterChangeAnswer>>,
}

/// True for the APIs a core sends but the controller serves.
pub(super) fn is_voter_change(api_key: ApiKey) -> bool {
    matches!(api_key, ApiKey::AddRaftVoter | ApiKey::RemoveRaftVoter)
}

impl<N: SimulatedNode> Sim<N> {
    /// Node `to` serves a voter change request a peer sent along `reply_to`.
    pub(super) fn serve_voter_change(&mut self, to: i32, decoded: DecodedRequest, reply_to: Route) {
        let version = decoded.version();
        let (cluster_id, change) = match decoded.body {
            RequestKind::AddRaftVoter(r) => {
                let node = VoterNode {
                    key: ReplicaKey::new(r.voter_id, r.voter_directory_id),
                    endpoints: r
                        .listeners
                        .iter()
                        .map(|l| {
                            let endpoint = Endpoint {
                                host: l.host.to_string(),
                                port: l.port,
                            };
                            (l.name.as_str().to_ascii_uppercase(), endpoint)
                        })
                        .collect(),
                    supported_kraft_versions: (0, 0),
                };
                let new_voter_kraft_versions = self.probe_kraft_versions(to, &node);
                // v0 has no AckWhenCommitted: it is always acknowledged at commit.
                let ack_when_committed = version < 1 || r.ack_when_committed;
                let change = VoterChange::Add {
                    node,
                    ack_when_committed,
                    new_voter_kraft_versions,
                };
                (r.cluster_id, change)
            }
            RequestKind::RemoveRaftVoter(r) => (
                r.cluster_id,
                VoterChange::Remove(ReplicaKey::new(r.voter_id, r.voter_directory_id)),
            ),
            other => {
                let text = format!("node {to}: {other:?} is not a voter change");
                return self.invariants.violation(text);
            }
        };
        self.next_inbound += 1;
        let inbound = self.next_inbound;
        self.routes.insert(inbound, reply_to);
        let request_id = DRIVER_REQUEST_BIT | inbound;
        let what = match &change {
            VoterChange::Add { node, .. } => format!("add {:?}", node.key),
            VoterChange::Remove(key) => format!("remove {key:?}"),
        };
        match change {
            VoterChange::Add { .. } => self.served.adds += 1,
            VoterChange::Remove(_) => self.served.removes += 1,
        }
        self.log(format!(
            "node {to} serves node {}'s request to {what} (v{version}, request {inbound})",
            reply_to.to
        ));
        self.served.outstanding.insert(
            request_id,
            Served {
                node: to,
                incarnation: self.incarnation(to).expect("running"),
                from: reply_to.to,
                at_ms: self.now_ms(),
                what,
            },
        );
        // The driver checks the cluster id before the Raft layer does anything.
        if cluster_id
            .as_ref()
            .is_some_and(|c| c.as_str() != CLUSTER_ID)
        {
            let answer = VoterChangeAnswer {
                request_id,
                error_code: errors::INCONSISTENT_CLUSTER_ID,
                error_message: None,
            };
            return self.answer_voter_change(to, answer);
        }
        let mut answer = None;
        let served = self.step_served(to, |n, now| {
            answer = n.serve_voter_change(now, request_id, change)?;
            Ok(())
        });
        if let (true, Some(answer)) = (served, answer) {
            self.answer_voter_change(to, answer);
        }
    }

    /// [`Sim::step`], telling whether the node took the call (a kind that serves no voter
    /// changes, or a failing node, did not).
    fn step_served(
        &mut self,
        id: i32,
        f: impl FnOnce(&mut N, u64) -> Result<(), N::Error>,
    ) -> bool {
        if !N::SERVES_VOTER_CHANGES {
            let text = format!("node {id} got a voter change request its kind does not serve");
            self.invariants.violation(text);
            return false;
        }
        let mut ok = false;
        self.step(id, |n, now| {
            f(n, now)?;
            ok = true;
            Ok(())
        });
        ok
    }

    /// The server's ApiVersions probe of the node to add (`Peers::probe_kraft_versions`): its
    /// release's `kraft.version` range if it runs and both directions to it are open, else
    /// `None`.
    fn probe_kraft_versions(&self, from: i32, node: &VoterNode) -> Option<(i16, i16)> {
        let target = node
            .endpoints
            .get("CONTROLLER")
            .and_then(super::sim::node_at)?;
        let partition = &self.network.partition;
        let reachable = self.node(target).is_some()
            && partition.connected(from, target)
            && partition.connected(target, from);
        let release = self.options.releases.get((target - 1) as usize)?;
        (reachable && release.speaks_kip_853()).then_some((0, 1))
    }

    /// Node `from`'s core completed voter changes: the driver's go back to their senders, the
    /// workload's are kept for it.
    pub(super) fn release_voter_changes(&mut self, from: i32) {
        let answers = self
            .nodes
            .get_mut(&from)
            .and_then(|s| s.node.as_mut())
            .map(N::take_voter_change_answers)
            .unwrap_or_default();
        for answer in answers {
            if answer.request_id & DRIVER_REQUEST_BIT != 0 {
                self.answer_voter_change(from, answer);
            } else {
                let stash = self.served.operator_answers.entry(from).or_default();
                stash.push(answer);
            }
        }
    }

    /// The answers node `id`'s core gave to the workload's own voter change requests since the
    /// last call.
    pub fn take_operator_answers(&mut self, id: i32) -> Vec<VoterChangeAnswer> {
        self.served.operator_answers.remove(&id).unwrap_or_default()
    }

    /// Sends node `from`'s answer to a peer's voter change back along the request's route.
    fn answer_voter_change(&mut self, from: i32, answer: VoterChangeAnswer) {
        let Some(served) = self.served.outstanding.remove(&answer.request_id) else {
            let text = format!(
                "node {from} answered voter change request {} (error {}) twice, or one never asked",
                answer.request_id & !DRIVER_REQUEST_BIT,
                answer.error_code
            );
            return self.invariants.violation(text);
        };
        if served.node != from {
            let text = format!(
                "node {from} answered request {} ({}), which node {} was asked",
                answer.request_id & !DRIVER_REQUEST_BIT,
                served.what,
                served.node
            );
            return self.invariants.violation(text);
        }
        if answer.error_code == errors::NONE {
            self.served.answered_ok += 1;
        } else {
            self.served.refused += 1;
        }
        let inbound = answer.request_id & !DRIVER_REQUEST_BIT;
        let Some(route) = self.routes.get(&inbound).copied() else {
            return;
        };
        self.log(format!(
            "node {from} answers node {}'s request to {} (request {inbound}): error {} {}",
            route.to,
            served.what,
            answer.error_code,
            answer.error_message.as_deref().unwrap_or("")
        ));
        let message = answer.error_message.map(StrBytes::from_string);
        let response = match route.api_key {
            ApiKey::AddRaftVoter => RaftResponse::AddRaftVoter(
                AddRaftVoterResponse::default()
                    .with_error_code(answer.error_code)
                    .with_error_message(message),
            ),
            _ => RaftResponse::RemoveRaftVoter(
                RemoveRaftVoterResponse::default()
                    .with_error_code(answer.error_code)
                    .with_error_message(message),
            ),
        };
        self.send_response(from, InboundId(inbound), response);
    }

    /// Drops the driver's requests whose serving node crashed (the sender's connection is
    /// gone; its core times the request out).
    pub(super) fn forget_served_by(&mut self, id: i32) {
        let gone: Vec<u64> = self
            .served
            .outstanding
            .iter()
            .filter(|(_, s)| s.node == id)
            .map(|(&r, _)| r)
            .collect();
        for r in gone {
            self.served.outstanding.remove(&r);
            self.routes.remove(&(r & !DRIVER_REQUEST_BIT));
        }
    }
}
