//! Delivers the node's outbound Raft requests to the other voters and feeds the answers (or the
//! failures) back to the node thread.

use std::collections::BTreeMap;
use std::sync::Arc;

use kraftwerk_raft::{RaftResponse, SendFailure};
use tokio::sync::mpsc;
use tracing::debug;

use crate::net::peer::{PeerClient, PeerClientConfig, PeerError, PeerNode};
use crate::node_thread::{NodeEvent, NodeHandle, OutboundRaft};
use kraftwerk_protocol::api_table::ApiTable;

/// Clients per voter, keyed by node id: one connection for Raft traffic and a separate one for
/// controller RPCs (ControllerRegistration), as Java uses separate channels. Sharing one
/// connection would deadlock: a request waiting for a commit would sit in front of the Fetch
/// that lets the leader commit it (a listener answers a connection's requests in order).
pub struct Peers {
    clients: BTreeMap<i32, PeerClient>,
    control: BTreeMap<i32, PeerClient>,
}

impl Peers {
    /// Clients for `voters` (id → host, port), except `local_id`.
    pub fn new(
        local_id: i32,
        voters: impl IntoIterator<Item = (i32, String, u16)>,
        api_table: Arc<ApiTable>,
        request_timeout_ms: u64,
    ) -> Self {
        let mut config = PeerClientConfig::raft(local_id, api_table);
        config.request_timeout_ms = request_timeout_ms;
        let mut control_config = config.clone();
        control_config.client_id = format!("kraftwerk-controller-{local_id}");
        control_config.request_timeout_ms = request_timeout_ms.max(5_000);
        let voters: Vec<(i32, String, u16)> = voters
            .into_iter()
            .filter(|(id, _, _)| *id != local_id)
            .collect();
        let connect = |config: &PeerClientConfig| -> BTreeMap<i32, PeerClient> {
            voters
                .iter()
                .map(|(node_id, host, port)| {
                    (
                        *node_id,
                        PeerClient::new(
                            PeerNode {
                                node_id: *node_id,
                                host: host.clone(),
                                port: *port,
                            },
                            config.clone(),
                        ),
                    )
                })
                .collect()
        };
        Self {
            clients: connect(&config),
            control: connect(&control_config),
        }
    }

    /// The controller-RPC client for `node_id`, if it is a voter.
    pub fn control_client(&self, node_id: i32) -> Option<&PeerClient> {
        self.control.get(&node_id)
    }

    /// Sends every outbound request on its own task and reports the result to the node.
    pub async fn dispatch(
        self: Arc<Self>,
        mut outbound: mpsc::UnboundedReceiver<OutboundRaft>,
        node: NodeHandle,
    ) {
        while let Some(OutboundRaft {
            id,
            destination,
            request,
        }) = outbound.recv().await
        {
            let Some(client) = self.clients.get(&destination).cloned() else {
                let _ = node.submit(NodeEvent::RaftSendFailed {
                    id,
                    failure: SendFailure::Disconnected,
                });
                continue;
            };
            let node = node.clone();
            tokio::spawn(async move {
                let api = request.api_key();
                let kind = request.into_kind();
                let event = match client.send(api, move |_version| kind).await {
                    Ok((_, response)) => match RaftResponse::from_kind(response) {
                        Ok(response) => NodeEvent::RaftResponse { id, response },
                        Err(_) => NodeEvent::RaftSendFailed {
                            id,
                            failure: SendFailure::Disconnected,
                        },
                    },
                    Err(e) => {
                        debug!(destination, api = ?api, error = %e, "raft request failed");
                        let failure = match e {
                            PeerError::Timeout { .. } => SendFailure::Timeout,
                            PeerError::UnsupportedVersion { .. } | PeerError::Encode { .. } => {
                                SendFailure::UnsupportedVersion
                            }
                            _ => SendFailure::Disconnected,
                        };
                        NodeEvent::RaftSendFailed { id, failure }
                    }
                };
                let _ = node.submit(event);
            });
        }
    }
}
