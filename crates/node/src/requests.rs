//! Controller requests on the node: the context the node fills in, the hand-off to the
//! controller, and the queue of answers that wait for their records to commit. A request that
//! cannot be answered any more (leadership lost first) gets its own NOT_CONTROLLER answer,
//! built from the request when it arrived.

use kraftwerk_controller::{ControllerRequest, ControllerResponse, RequestContext};
use kraftwerk_protocol::constants::UNKNOWN_SERVER_ERROR;
use kraftwerk_raft::{QuorumStateStore, ReplicatedLog};
use tracing::{info, warn};

use crate::error::NodeError;
use crate::messages::{NodeOutput, RequestToken};
use crate::node::Node;
use crate::write::WriteOutcome;

/// A request's answer waiting for the log to commit up to `wait_offset`.
#[derive(Debug)]
pub(crate) struct Pending {
    /// Exclusive offset that must be committed and replayed before answering.
    pub(crate) wait_offset: i64,
    pub(crate) token: RequestToken,
    pub(crate) response: ControllerResponse,
    /// The answer if leadership is lost before `wait_offset` commits.
    pub(crate) not_controller: ControllerResponse,
    /// The request had records of its own (else it only waited for earlier writes).
    pub(crate) wrote: bool,
    pub(crate) name: &'static str,
}

impl<L: ReplicatedLog, Q: QuorumStateStore> Node<L, Q> {
    fn fill_context(&self, now_ms: u64, mut ctx: RequestContext) -> RequestContext {
        let leader = self.raft.leader_and_epoch();
        ctx.now_ms = now_ms;
        ctx.next_offset = self.raft.next_offset().unwrap_or(-1);
        ctx.leader_id = leader.leader_id.unwrap_or(-1);
        ctx.leader_epoch = leader.epoch;
        ctx
    }

    /// Hands a request to the controller and writes its records, or answers at once when it has
    /// none and nothing it could depend on is pending.
    pub(crate) fn handle_controller_request(
        &mut self,
        now_ms: u64,
        token: RequestToken,
        ctx: RequestContext,
        request: ControllerRequest,
    ) -> Result<(), NodeError> {
        if self.maybe_handle_voter_change(now_ms, token, &ctx, &request)? {
            return Ok(());
        }
        let mut ctx = self.fill_context(now_ms, ctx);
        if self.controller.is_active() && !self.raft.is_leader() {
            // An append just failed because leadership was lost: stop before computing more.
            self.deactivate();
        }
        if !self.controller.is_active() {
            // Answered from the committed image, or NOT_CONTROLLER: nothing to wait for.
            let response = self.controller.handle(&ctx, &request).response;
            self.outputs
                .push(NodeOutput::Controller { token, response });
            return Ok(());
        }
        let name = request.name();
        let not_controller = request.not_controller_response();
        let summary = request.summary();
        let unknown_error =
            |reason: &str| request.error_response(UNKNOWN_SERVER_ERROR, Some(reason));
        self.check_kraft_version_upgrade(now_ms, &mut ctx, &request)?;
        let result = self.controller.handle(&ctx, &request);
        if let Some(refused) =
            self.apply_kraft_version_upgrade(now_ms, &request, &result.response)?
        {
            self.controller.abandon_result();
            let response = request.error_response(refused.code, refused.message.as_deref());
            self.outputs
                .push(NodeOutput::Controller { token, response });
            return Ok(());
        }
        if !result.records.is_empty() {
            info!(
                request = name,
                client_id = ctx.client_id.as_deref().unwrap_or(""),
                records = result.records.len(),
                "{summary}"
            );
        }
        let wait_offset = match self.write(now_ms, &result.records, result.atomic)? {
            WriteOutcome::Appended { end_offset } => end_offset,
            WriteOutcome::NotLeader => {
                self.outputs.push(NodeOutput::Controller {
                    token,
                    response: not_controller,
                });
                return Ok(());
            }
            WriteOutcome::Refused(reason) => {
                warn!(request = name, %reason, "the controller's result cannot be written; answering UNKNOWN_SERVER_ERROR");
                self.controller.abandon_result();
                let response = unknown_error(&reason);
                self.outputs
                    .push(NodeOutput::Controller { token, response });
                return Ok(());
            }
        };
        self.pending.push_back(Pending {
            wait_offset,
            token,
            response: result.response,
            not_controller,
            wrote: !result.records.is_empty(),
            name,
        });
        Ok(())
    }

    /// Answers the pending requests whose records are committed and replayed.
    pub(crate) fn release_pending(&mut self) {
        while let Some(p) = self.pending.front() {
            if p.wait_offset > self.replayed_end_offset {
                break;
            }
            let p = self.pending.pop_front().expect("front exists");
            self.outputs.push(NodeOutput::Controller {
                token: p.token,
                response: p.response,
            });
        }
    }

    /// Leaves the active role: answers what already committed, and gives everything else its
    /// NOT_CONTROLLER answer so brokers retry against the new leader.
    pub(crate) fn deactivate(&mut self) {
        info!(epoch = ?self.active_epoch, "deactivating the controller: no longer the raft leader");
        self.controller.deactivate();
        self.active_epoch = None;
        self.release_pending();
        while let Some(p) = self.pending.pop_front() {
            if p.wrote {
                warn!(
                    request = p.name,
                    wait_offset = p.wait_offset,
                    "request's records were not committed before leadership was lost"
                );
            }
            self.outputs.push(NodeOutput::Controller {
                token: p.token,
                response: p.not_controller,
            });
        }
    }
}
