//! Raft messages between simulated nodes, through [`crate::wire`]: a request is encoded at the
//! version its two ends negotiate and decoded by the receiver against the table it serves; its
//! response goes back along the request's route, encoded at the same version.
//!
//! Failures the server's peer client reports are reported the same way: a crashed destination
//! refuses the connection (`Disconnected`), and a request no shared version can carry fails with
//! `UnsupportedVersion` (`crates/server/src/peers.rs`).
//!
//! AddRaftVoter / RemoveRaftVoter, which a core sends but the controller serves, are served by
//! the receiving node as the driver does ([`super::voter_changes`]).

use bytes::Bytes;
use kraftwerk_protocol::codec::DecodedRequest;
use kraftwerk_raft::{
    InboundId, Input, OutboundId, Output, RaftRequest, RaftResponse, SendFailure,
};

use super::hostile::HOSTILE_ID;
use super::{Event, Message, Route, Sim, SimulatedNode};
use crate::wire::{self, Outbound};

impl<N: SimulatedNode> Sim<N> {
    /// Sends one Raft output of node `from` (incarnation `incarnation`).
    pub(super) fn send_raft(&mut self, from: i32, incarnation: u64, output: Output) {
        match output {
            Output::Send {
                id,
                destination,
                request,
            } => {
                // A bootstrap server has a negative id in the core; the endpoint names the node.
                let to = if destination.node_id < 0 {
                    super::sim::node_at(&destination.endpoint).unwrap_or(destination.node_id)
                } else {
                    destination.node_id
                };
                self.send_request(from, incarnation, id, to, request)
            }
            Output::Respond { id, response } => self.send_response(from, id, response),
        }
    }

    /// Delivers a message to incarnation `to_incarnation` of node `to`, if it still runs.
    pub(super) fn deliver(&mut self, to: i32, to_incarnation: u64, message: Message) {
        if !self.is_running(to, to_incarnation) {
            return;
        }
        let input = match message {
            Message::Request { frame, reply_to } => {
                let Some(decoded) = self.decode_frame(to, frame) else {
                    return;
                };
                // Sent by a core, served by the controller: the driver's part.
                if super::voter_changes::is_voter_change(decoded.api_key) {
                    return self.serve_voter_change(to, decoded, reply_to);
                }
                let Some((api_version, request)) = self.raft_request(to, decoded) else {
                    return;
                };
                self.next_inbound += 1;
                self.routes.insert(self.next_inbound, reply_to);
                Input::Request {
                    id: InboundId(self.next_inbound),
                    api_version,
                    request,
                }
            }
            Message::Response { frame, route } => {
                let Some(response) = self.decode_response(to, frame, &route) else {
                    return;
                };
                Input::Response {
                    id: route.out_id,
                    response,
                }
            }
            Message::SendFailed { id, failure } => Input::SendFailed { id, failure },
        };
        self.step(to, |n, now| n.handle(now, input));
    }

    fn send_request(
        &mut self,
        from: i32,
        incarnation: u64,
        out_id: OutboundId,
        destination: i32,
        request: RaftRequest,
    ) {
        let Some(to_incarnation) = self.incarnation(destination) else {
            return;
        };
        // A refused connection or a failed version negotiation is learnt over a connection,
        // which needs both directions.
        let partition = &self.network.partition;
        let connected =
            partition.connected(from, destination) && partition.connected(destination, from);
        if self.node(destination).is_none() && connected {
            // A crashed process refuses connections at once (the OS answers RST).
            return self.fail_send(from, incarnation, out_id, SendFailure::Disconnected);
        }
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);
        let correlation_id = self.next_correlation_id;
        let api_key = request.api_key();
        let encoded = wire::encode_request(
            api_key,
            |_version| request.into_kind(),
            &self.tables[&from],
            &self.tables[&destination],
            correlation_id,
            &format!("raft-client-{from}"),
        );
        let sent = match encoded {
            Ok(Outbound::Sent(sent)) => sent,
            Ok(Outbound::Unsupported(why)) => {
                // Learnt from the peer's ApiVersions, so only over a connection.
                if connected {
                    self.log(format!("node {from} → {destination}: {why}"));
                    self.fail_send(from, incarnation, out_id, SendFailure::UnsupportedVersion);
                }
                return;
            }
            Err(e) => {
                let text = format!("node {from} → {destination}: cannot send: {}", e.0);
                return self.invariants.violation(text);
            }
        };
        let reply_to = Route {
            to: from,
            to_incarnation: incarnation,
            out_id,
            api_key,
            version: sent.version,
            correlation_id,
        };
        let now = self.now_ms();
        for delay in self.network.delays(from, destination, &mut self.rng) {
            let message = Message::Request {
                frame: sent.frame.clone(),
                reply_to,
            };
            let event = Event::Deliver {
                to: destination,
                to_incarnation,
                message,
            };
            self.scheduler.schedule(now + delay, event);
        }
    }

    /// The sender's client fails the request on its own, right away.
    fn fail_send(&mut self, from: i32, incarnation: u64, id: OutboundId, failure: SendFailure) {
        let now = self.now_ms();
        let event = Event::Deliver {
            to: from,
            to_incarnation: incarnation,
            message: Message::SendFailed { id, failure },
        };
        self.scheduler.schedule(now + 1, event);
    }

    pub(super) fn send_response(&mut self, from: i32, in_id: InboundId, response: RaftResponse) {
        let Some(route) = self.routes.remove(&in_id.0) else {
            return;
        };
        if route.to == HOSTILE_ID {
            let kind = response.into_kind();
            return match wire::encode_response(
                kind,
                route.api_key,
                route.version,
                route.correlation_id,
            ) {
                Ok(frame) => self.hostile_answer(from, route, frame),
                Err(e) => {
                    let text = format!("node {from} cannot answer the hostile peer: {}", e.0);
                    self.invariants.violation(text)
                }
            };
        }
        let kind = response.into_kind();
        let frame =
            match wire::encode_response(kind, route.api_key, route.version, route.correlation_id) {
                Ok(frame) => frame,
                Err(e) => {
                    let text = format!("node {from} → {}: cannot answer: {}", route.to, e.0);
                    return self.invariants.violation(text);
                }
            };
        let now = self.now_ms();
        for delay in self.network.delays(from, route.to, &mut self.rng) {
            let message = Message::Response {
                frame: frame.clone(),
                route,
            };
            let event = Event::Deliver {
                to: route.to,
                to_incarnation: route.to_incarnation,
                message,
            };
            self.scheduler.schedule(now + delay, event);
        }
    }

    /// Node `to` decodes a request frame.
    fn decode_frame(&mut self, to: i32, frame: Bytes) -> Option<DecodedRequest> {
        match wire::decode_request(frame, &self.tables[&to]) {
            Ok(decoded) => Some(decoded),
            Err(e) => {
                let text = format!("node {to} cannot read a request: {}", e.0);
                self.invariants.violation(text);
                None
            }
        }
    }

    /// A decoded request as the Raft RPC the core handles: its version and the request.
    fn raft_request(&mut self, to: i32, decoded: DecodedRequest) -> Option<(i16, RaftRequest)> {
        let version = decoded.version();
        let Ok(request) = RaftRequest::from_kind(decoded.body) else {
            let api = decoded.api_key;
            let text = format!("node {to} got {api:?}, not a Raft RPC, from a peer");
            self.invariants.violation(text);
            return None;
        };
        Some((version, request))
    }

    /// Node `to` decodes the response to the request that took `route`.
    fn decode_response(&mut self, to: i32, frame: Bytes, route: &Route) -> Option<RaftResponse> {
        let decoded =
            wire::decode_response(frame, route.api_key, route.version, route.correlation_id);
        let kind = match decoded {
            Ok(kind) => kind,
            Err(e) => {
                let text = format!("node {to} cannot read a response: {}", e.0);
                self.invariants.violation(text);
                return None;
            }
        };
        match RaftResponse::from_kind(kind) {
            Ok(response) => Some(response),
            Err(other) => {
                let text = format!("node {to} got a non-Raft response {other:?}");
                self.invariants.violation(text);
                None
            }
        }
    }
}
