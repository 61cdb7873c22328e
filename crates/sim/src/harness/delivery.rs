//! Raft messages between simulated nodes: requests to their destination (or a refused
//! connection when it is down), responses back along the request's route.

use kraftwerk_raft::{
    InboundId, Input, OutboundId, Output, RaftRequest, RaftResponse, SendFailure,
};

use super::{Event, Route, Sim, SimulatedNode};

impl<N: SimulatedNode> Sim<N> {
    /// Sends one Raft output of node `from` (incarnation `incarnation`).
    pub(super) fn send_raft(&mut self, from: i32, incarnation: u64, output: Output) {
        match output {
            Output::Send {
                id,
                destination,
                request,
            } => self.send_request(from, incarnation, id, destination, request),
            Output::Respond { id, response } => self.send_response(from, id, response),
        }
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
        let destination_down = self.node(destination).is_none();
        if destination_down && self.network.partition.connected(from, destination) {
            // A crashed process refuses connections at once (the OS answers RST).
            let input = Input::SendFailed {
                id: out_id,
                failure: SendFailure::Disconnected,
            };
            let now = self.now_ms();
            self.scheduler.schedule(
                now + 1,
                Event::Deliver {
                    to: from,
                    to_incarnation: incarnation,
                    input,
                    reply_to: None,
                },
            );
            return;
        }
        let api_version = crate::raft_cluster::api_version_for(&request, &mut self.rng);
        let now = self.now_ms();
        for delay in self.network.delays(from, destination, &mut self.rng) {
            self.next_inbound += 1;
            let input = Input::Request {
                id: InboundId(self.next_inbound),
                api_version,
                request: request.clone(),
            };
            let route = Route {
                to: from,
                to_incarnation: incarnation,
                out_id,
            };
            self.scheduler.schedule(
                now + delay,
                Event::Deliver {
                    to: destination,
                    to_incarnation,
                    input,
                    reply_to: Some(route),
                },
            );
        }
    }

    fn send_response(&mut self, from: i32, in_id: InboundId, response: RaftResponse) {
        let Some(route) = self.routes.remove(&in_id.0) else {
            return;
        };
        let now = self.now_ms();
        for delay in self.network.delays(from, route.to, &mut self.rng) {
            let input = Input::Response {
                id: route.out_id,
                response: response.clone(),
            };
            self.scheduler.schedule(
                now + delay,
                Event::Deliver {
                    to: route.to,
                    to_incarnation: route.to_incarnation,
                    input,
                    reply_to: None,
                },
            );
        }
    }
}
