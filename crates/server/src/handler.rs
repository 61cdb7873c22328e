//! The listener's request handler: routes every decoded request to the node thread and waits for
//! its answer.

use std::sync::Arc;

use kafka_protocol::messages::RequestKind;
use kraftwerk_controller::request::Principal;
use kraftwerk_controller::{ControllerRequest, RequestContext as ControllerContext};
use tokio::sync::oneshot;

use crate::api::{route, Routed};
use crate::net::listener::{
    BoxFuture, HandlerError, HandlerResult, RequestContext, RequestHandler,
};
use crate::node_thread::{BrokerContact, NodeEvent, NodeHandle};
use crate::peers::Peers;

/// Forwards requests to the node thread.
pub struct NodeRequestHandler {
    node: NodeHandle,
    /// Asks a node about to be added as a voter for its ApiVersions (AddRaftVoter).
    peers: Option<Arc<Peers>>,
    /// The listener Raft uses (the first controller listener): AddRaftVoter needs the new
    /// voter's endpoint on it whichever listener the request came in on, as Java's
    /// `KafkaRaftClient` checks its default listener.
    raft_listener: Arc<str>,
}

impl NodeRequestHandler {
    /// A handler submitting to `node`; `peers` probes new voters' ApiVersions on their
    /// `raft_listener` endpoint.
    pub fn new(node: NodeHandle, peers: Option<Arc<Peers>>, raft_listener: &str) -> Arc<Self> {
        Arc::new(Self {
            node,
            peers,
            raft_listener: Arc::from(raft_listener),
        })
    }
}

impl RequestHandler for NodeRequestHandler {
    /// CLUSTER_ACTION for the connection's principal, asked of the node thread.
    fn authorize_envelope(
        &self,
        principal: Arc<str>,
        peer: std::net::IpAddr,
    ) -> BoxFuture<'static, bool> {
        let node = self.node.clone();
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let event = NodeEvent::AuthorizeCluster {
                principal: connection_principal(&principal),
                client_address: peer,
                operation: kraftwerk_controller::authorizer::AclOperation::ClusterAction,
                reply,
            };
            // A node that is gone or overloaded cannot vouch for the broker: refuse.
            node.submit(event).is_ok() && answer.await.unwrap_or(false)
        })
    }

    fn handle(
        &self,
        ctx: RequestContext,
        request: RequestKind,
    ) -> BoxFuture<'static, HandlerResult> {
        let node = self.node.clone();
        let peers = self.peers.clone();
        let raft_listener = self.raft_listener.clone();
        Box::pin(async move {
            let api = ctx.api_key;
            let Some(routed) = route(request) else {
                return Err(HandlerError::new(format!(
                    "{api:?} is not served by this controller"
                )));
            };
            match routed {
                Routed::Raft(request) => {
                    let (reply, answer) = oneshot::channel();
                    node.submit(NodeEvent::RaftRequest {
                        api_version: ctx.api_version,
                        request,
                        principal: connection_principal(&ctx.principal),
                        client_address: ctx.peer_addr.ip(),
                        reply,
                    })
                    .map_err(|e| HandlerError::new(format!("cannot handle {api:?}: {e}")))?;
                    let response = answer
                        .await
                        .map_err(|_| HandlerError::new("node stopped before answering"))?;
                    Ok(response.into_kind())
                }
                Routed::Controller(request) => {
                    let (reply, answer) = oneshot::channel();
                    let received_ms = node.clock().ms_at(ctx.received_at);
                    if let ControllerRequest::BrokerHeartbeat(heartbeat) = &request {
                        // Reported before the request is queued: the node thread records it
                        // ahead of whatever is queued in front of the request.
                        node.note_contact(BrokerContact {
                            broker_id: *heartbeat.broker_id,
                            broker_epoch: heartbeat.broker_epoch,
                            arrived_ms: received_ms,
                        });
                    }
                    // A forwarded request runs as the client's principal; a direct one as the
                    // connection's (User:ANONYMOUS on PLAINTEXT, the mapped certificate
                    // subject on SSL).
                    let principal = ctx.forwarded.as_ref().map_or_else(
                        || Principal {
                            token_authenticated: ctx.token_authenticated,
                            ..connection_principal(&ctx.principal)
                        },
                        |f| Principal {
                            principal_type: f.principal.principal_type.clone(),
                            name: f.principal.name.clone(),
                            token_authenticated: f.principal.token_authenticated,
                        },
                    );
                    let mut cctx = ControllerContext {
                        api_version: ctx.api_version,
                        client_id: Some(ctx.client_id.clone()),
                        listener_name: ctx.listener_name.to_string(),
                        principal,
                        forwarded: ctx.forwarded.is_some(),
                        client_address: Some(
                            ctx.forwarded
                                .as_ref()
                                .map_or(ctx.peer_addr.ip(), |f| f.client_address),
                        ),
                        received_ms,
                        ..Default::default()
                    };
                    if let ControllerRequest::AddRaftVoter(_) = &request {
                        // The new voter needs an endpoint on the listener Raft uses, whichever
                        // listener the request came in on (Java's leader checks its default
                        // listener).
                        cctx.listener_name = raft_listener.to_string();
                    }
                    if let (ControllerRequest::AddRaftVoter(add), Some(peers)) = (&request, &peers)
                    {
                        // Probed on the endpoint of the listener Raft uses.
                        let endpoint = add
                            .listeners
                            .iter()
                            .find(|l| l.name.as_str().eq_ignore_ascii_case(&raft_listener))
                            .map(|l| kraftwerk_raft::Endpoint {
                                host: l.host.to_string(),
                                port: l.port,
                            });
                        if let Some(endpoint) = endpoint {
                            cctx.new_voter_kraft_versions =
                                peers.probe_kraft_versions(add.voter_id, endpoint).await;
                        }
                    }
                    node.submit(NodeEvent::ControllerRequest {
                        ctx: cctx,
                        request,
                        reply,
                    })
                    .map_err(|e| HandlerError::new(format!("cannot handle {api:?}: {e}")))?;
                    let response = answer
                        .await
                        .map_err(|_| HandlerError::new("node stopped before answering"))?;
                    Ok(response.into_kind())
                }
            }
        })
    }
}

/// `TYPE:NAME` of a connection (`KafkaPrincipal.toString`) as the controller's principal.
fn connection_principal(text: &str) -> Principal {
    match text.split_once(':') {
        Some((principal_type, name)) => Principal {
            principal_type: principal_type.to_owned(),
            name: name.to_owned(),
            token_authenticated: false,
        },
        None => Principal::default(),
    }
}
