//! Delivers the node's outbound Raft requests to the endpoints the Raft core names (voters,
//! bootstrap servers, the leader) and feeds the answers (or the failures) back to the node
//! thread.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kraftwerk_raft::{Destination, Endpoint, RaftResponse, SendFailure};
use tokio::sync::mpsc;
use tracing::debug;

use crate::net::peer::{PeerClient, PeerClientConfig, PeerError, PeerNode};
use crate::net::sasl::ClientSasl;
use crate::net::tls::ClientTls;
use crate::node_thread::{NodeEvent, NodeHandle, OutboundRaft};
use kraftwerk_protocol::api_table::ApiTable;

/// Clients per destination, keyed by node id: one connection for Raft traffic and a separate
/// one for controller RPCs (ControllerRegistration), as Java uses separate channels. Sharing
/// one connection would deadlock: a request waiting for a commit would sit in front of the
/// Fetch that lets the leader commit it (a listener answers a connection's requests in order).
///
/// The static voters get clients up front; every other destination — voters of a
/// `VotersRecord`, bootstrap servers (negative ids), a leader learned from `NodeEndpoints` —
/// gets one the first time the Raft core sends to it, at the endpoint the core names, and a
/// client whose endpoint changed is replaced. The controller-RPC client of a node follows the
/// endpoint its Raft client last used.
pub struct Peers {
    clients: Mutex<BTreeMap<i32, (Destination, PeerClient)>>,
    control: Mutex<BTreeMap<i32, (Destination, PeerClient)>>,
    config: PeerClientConfig,
    control_config: PeerClientConfig,
    local_id: i32,
    /// Raft requests sent and answered, for `kafka.server:type=raft-channel-metrics`.
    channel: Arc<crate::metrics::ChannelStats>,
}

/// Most destinations with a client at once; past it the client of a node the core no longer
/// sends to goes first (any but the static voters' are rebuilt on the next send).
const MAX_PEER_CLIENTS: usize = 256;

impl Peers {
    /// Clients for `voters` (id → host, port), except `local_id`; over TLS when `tls` is set
    /// (the controller listener is SSL or SASL_SSL), authenticating with `sasl` when set (it
    /// is SASL_PLAINTEXT or SASL_SSL).
    pub fn new(
        local_id: i32,
        voters: impl IntoIterator<Item = (i32, String, u16)>,
        api_table: Arc<ApiTable>,
        request_timeout_ms: u64,
        tls: Option<ClientTls>,
        sasl: Option<ClientSasl>,
    ) -> Self {
        let mut config = PeerClientConfig::raft(local_id, api_table);
        config.request_timeout_ms = request_timeout_ms;
        config.tls = tls;
        config.sasl = sasl;
        let mut control_config = config.clone();
        control_config.client_id = format!("kraftwerk-controller-{local_id}");
        control_config.request_timeout_ms = request_timeout_ms.max(5_000);
        let peers = Self {
            clients: Mutex::new(BTreeMap::new()),
            control: Mutex::new(BTreeMap::new()),
            config,
            control_config,
            local_id,
            channel: Arc::default(),
        };
        for (node_id, host, port) in voters {
            if node_id != local_id {
                let destination = Destination {
                    node_id,
                    endpoint: Endpoint { host, port },
                };
                peers.raft_client(&destination);
            }
        }
        peers
    }

    fn client_for(
        map: &Mutex<BTreeMap<i32, (Destination, PeerClient)>>,
        config: &PeerClientConfig,
        destination: &Destination,
    ) -> PeerClient {
        let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((known, client)) = map.get(&destination.node_id) {
            if known == destination {
                return client.clone();
            }
        }
        if map.len() >= MAX_PEER_CLIENTS && !map.contains_key(&destination.node_id) {
            // Bootstrap servers and learned leaders come and go: drop the lowest id (the
            // bootstrap servers' negative ids first); it is rebuilt if sent to again.
            if let Some(&id) = map.keys().next() {
                map.remove(&id);
            }
        }
        let client = PeerClient::new(
            PeerNode {
                node_id: destination.node_id,
                host: destination.endpoint.host.clone(),
                port: destination.endpoint.port,
            },
            config.clone(),
        );
        map.insert(destination.node_id, (destination.clone(), client.clone()));
        client
    }

    /// The Raft client for `destination`, made (or remade at a new endpoint) on demand; a
    /// node with a known id also gets its controller-RPC client at the same endpoint.
    fn raft_client(&self, destination: &Destination) -> PeerClient {
        if destination.node_id >= 0 && destination.node_id != self.local_id {
            Self::client_for(&self.control, &self.control_config, destination);
        }
        Self::client_for(&self.clients, &self.config, destination)
    }

    /// The controller-RPC client for `node_id`, if the Raft core has reached it (a static
    /// voter, or a node it sent to).
    pub fn control_client(&self, node_id: i32) -> Option<PeerClient> {
        self.control
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&node_id)
            .map(|(_, c)| c.clone())
    }

    /// Asks a node about to be added as a voter for its ApiVersions (v4, so `SupportedFeatures`
    /// lists `kraft.version` even with min 0, KAFKA-17492) and returns the `kraft.version`
    /// range it supports; `None` if it cannot be reached or does not list the feature (Kafka
    /// `AddVoterHandler` sends ApiVersions the same way before adding a voter).
    pub async fn probe_kraft_versions(
        &self,
        node_id: i32,
        endpoint: Endpoint,
    ) -> Option<(i16, i16)> {
        use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, RequestKind, ResponseKind};
        use kafka_protocol::protocol::StrBytes;
        let client = PeerClient::new(
            PeerNode {
                node_id,
                host: endpoint.host,
                port: endpoint.port,
            },
            self.config.clone(),
        );
        let answer = client
            .send(ApiKey::ApiVersions, |_| {
                RequestKind::ApiVersions(
                    ApiVersionsRequest::default()
                        .with_client_software_name(StrBytes::from_static_str("kraftwerk"))
                        .with_client_software_version(StrBytes::from_static_str(env!(
                            "CARGO_PKG_VERSION"
                        ))),
                )
            })
            .await;
        match answer {
            Ok((_, ResponseKind::ApiVersions(r))) => r
                .supported_features
                .iter()
                .find(|f| f.name.as_str() == "kraft.version")
                .map(|f| (f.min_version, f.max_version)),
            Ok(_) => None,
            Err(e) => {
                debug!(node_id, error = %e, "ApiVersions of a new voter failed");
                None
            }
        }
    }

    /// The Raft channel's request and response counts.
    pub fn channel_stats(&self) -> Arc<crate::metrics::ChannelStats> {
        self.channel.clone()
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
            if destination.node_id == self.local_id {
                let _ = node.submit(NodeEvent::RaftSendFailed {
                    id,
                    failure: SendFailure::Disconnected,
                });
                continue;
            }
            let client = self.raft_client(&destination);
            let destination = destination.node_id;
            let node = node.clone();
            let channel = self.channel.clone();
            tokio::spawn(async move {
                let api = request.api_key();
                let kind = request.into_kind();
                channel.request_sent();
                let sent = client.send(api, move |_version| kind).await;
                if sent.is_ok() {
                    channel.response_received();
                }
                let event = match sent {
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
