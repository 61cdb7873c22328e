//! A running kraftwerk controller node: the node thread (Raft core + controller + log), the
//! controller listeners, the peer clients and controller registration, wired together.
//!
//! `kraftwerk run` builds a [`ServerConfig`], then calls [`Server::start`] and
//! [`Server::run_until_signal`]. SIGTERM/SIGINT start a graceful shutdown: a leader resigns with
//! EndQuorumEpoch naming its successors and the process exits once another voter acknowledged
//! or after a short grace period.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kraftwerk_controller::{Controller, ControllerConfig};
use kraftwerk_log::{FileQuorumStateStore, LogConfig, SegmentLog};
use kraftwerk_node::{Node, NodeStatus, SnapshotPolicy};
use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_protocol::api_versions::{
    ApiVersionsFeatures, FinalizedFeatures, ServerIdentity, SupportedFeature,
};
use kraftwerk_raft::{RaftConfig, RaftCore};
use kraftwerk_records::metadata_version::controller_supported_features;
use tokio::sync::{mpsc, watch};
use tracing::{error, info};
use uuid::Uuid;

use crate::net::listener::{FeaturesFn, Listener, ListenerConfig, RequestHandler};
use crate::net::quotas::ConnectionQuotas;
use crate::net::sasl::{ClientSasl, ImageCredentials, ListenerSasl, ServerSasl};
use crate::net::tls::{ClientTls, ServerTls};
use crate::node_thread::{self, NodeExit, NodeHandle};
use crate::resources::{self, LimitSettings};
use crate::{api, handler, metrics, peers, registration};

/// Everything a node needs to start, built by the binary from `server.properties` and the
/// formatted metadata directory.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// `metadata.log.dir`: where `__cluster_metadata-0` lives.
    pub metadata_log_dir: PathBuf,
    /// Segment and retention settings of the metadata log.
    pub log: LogConfig,
    /// The Raft core's configuration (identity, voters, timeouts).
    pub raft: RaftConfig,
    /// The controller's configuration (identity, defaults, bootstrap records).
    pub controller: ControllerConfig,
    /// When snapshots are written.
    pub snapshot_policy: SnapshotPolicy,
    /// The controller listeners, in `controller.listener.names` order (at least one): every one
    /// is bound and served, as Java's `ControllerServer` accepts on each; the first is the one
    /// the Raft client dials with (its TLS settings) and controller registration names.
    pub listeners: Vec<ListenerSettings>,
    /// `socket.request.max.bytes`: largest request frame, in bytes, on every listener.
    pub max_frame_bytes: usize,
    /// `max.connections`, `max.connections.per.ip` and its overrides: node-wide, one count
    /// shared by every listener as Kafka's `ConnectionQuotas` (the open-files limit and the
    /// other voters' reserve are applied at start, [`crate::resources`]).
    pub limits: LimitSettings,
    /// `connections.max.idle.ms`: close a connection that completes no request for this long
    /// (`u64::MAX` for Kafka's negative value: never).
    pub connections_max_idle_ms: u64,
    /// The endpoints this controller registers (KIP-919), one per controller listener, the
    /// first listener's first; empty for a node that does not register (no host to name).
    pub registration_endpoints: Vec<registration::RegisteredEndpoint>,
    /// `kraftwerk.metrics.listener`: where `/metrics` is served, if anywhere.
    pub metrics_addr: Option<(String, u16)>,
    /// `unstable.feature.versions.enable`.
    pub unstable_feature_versions_enable: bool,
    /// `Some` when the first controller listener is SASL: how the Raft client and controller
    /// registration authenticate to the other controllers.
    pub raft_client_sasl: Option<ClientSasl>,
}

/// One controller listener's settings.
#[derive(Clone, Debug)]
pub struct ListenerSettings {
    /// Listener name, e.g. `CONTROLLER`.
    pub name: String,
    /// Host to bind (empty: every interface).
    pub host: String,
    /// Port to bind.
    pub port: u16,
    /// `Some` when the listener's security protocol is SSL: its `ssl.*` settings (the first
    /// listener's are the Raft client's too).
    pub tls: Option<ListenerTls>,
    /// `Some` when the listener's security protocol is SASL_PLAINTEXT or SASL_SSL: every
    /// connection authenticates (SaslHandshake, SaslAuthenticate) before its other requests.
    pub sasl: Option<ListenerSasl>,
    /// `listener.name.<l>.max.connections`: this listener's own cap, on top of the node-wide
    /// [`ServerConfig::limits`]; `None` when unset.
    pub max_connections: Option<usize>,
}

/// The `ssl.*` settings of an SSL controller listener (`listener.name.<l>.` forms resolved).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenerTls {
    /// Key store, trust store, `ssl.client.auth`, protocols, suites, endpoint identification.
    pub settings: kraftwerk_tls::TlsSettings,
    /// `ssl.principal.mapping.rules` (default `DEFAULT`).
    pub principal_mapping_rules: String,
}

impl ListenerTls {
    /// The listener's and the Raft client's TLS configurations, with the key and trust
    /// material read now.
    ///
    /// Errors: unreadable or unusable material, settings rustls cannot honour, bad mapping
    /// rules; the message names the setting.
    pub fn build(&self) -> Result<(ServerTls, ClientTls), String> {
        Ok((self.server()?, self.client()?))
    }

    /// The listener's TLS configuration alone (a listener other than the first: the Raft
    /// client does not use its settings, so they need not make a client configuration).
    ///
    /// Errors: as [`Self::build`].
    pub fn server(&self) -> Result<ServerTls, String> {
        let config = kraftwerk_tls::server_config(&self.settings)
            .map_err(|e| format!("controller listener TLS: {e}"))?;
        let mapper = kraftwerk_tls::SslPrincipalMapper::from_rules(&self.principal_mapping_rules)
            .map_err(|e| format!("ssl.principal.mapping.rules: {e}"))?;
        Ok(ServerTls {
            config,
            mapper: Arc::new(mapper),
        })
    }

    /// The Raft client's TLS configuration from these settings.
    ///
    /// Errors: as [`Self::build`].
    pub fn client(&self) -> Result<ClientTls, String> {
        let client = kraftwerk_tls::client_config(&self.settings)
            .map_err(|e| format!("Raft client TLS (the controller listener's ssl.* keys): {e}"))?;
        Ok(ClientTls { config: client })
    }
}

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The log could not be opened (locked, corrupt beyond recovery, I/O).
    #[error("opening the metadata log in {dir}: {reason}")]
    Log {
        /// The directory.
        dir: String,
        /// Why.
        reason: String,
    },
    /// The Raft core could not start (reading `quorum-state`).
    #[error("starting raft: {0}")]
    Raft(String),
    /// A listener could not be bound.
    #[error("binding {addr}: {source}")]
    Bind {
        /// Address.
        addr: String,
        /// OS error.
        #[source]
        source: std::io::Error,
    },
    /// `max.connections.per.ip.overrides` names a host that does not resolve.
    #[error(transparent)]
    Resolve(#[from] resources::ResolveError),
    /// The node thread could not be started.
    #[error("starting the node thread: {0}")]
    Thread(std::io::Error),
    /// The TLS material or settings of an SSL controller listener cannot be used.
    #[error("{0}")]
    Tls(String),
    /// [`ServerConfig::listeners`] is empty.
    #[error("no controller listener to serve")]
    NoListener,
}

/// A started node.
pub struct Server {
    /// In [`ServerConfig::listeners`] order.
    listeners: Vec<Listener>,
    node: NodeHandle,
    node_thread: std::thread::JoinHandle<NodeExit>,
    status: watch::Receiver<NodeStatus>,
}

fn features_fn(status: watch::Receiver<NodeStatus>, unstable: bool) -> FeaturesFn {
    let supported: Vec<SupportedFeature> = controller_supported_features(unstable)
        .into_iter()
        .map(|f| SupportedFeature {
            name: f.name.to_owned(),
            min_version: f.min_level,
            max_version: f.max_level,
        })
        .collect();
    Arc::new(move || {
        let s = status.borrow();
        let finalized = finalized_features(&s);
        ApiVersionsFeatures {
            supported: supported.clone(),
            finalized,
        }
    })
}

/// The finalized features ApiVersions reports: none (epoch -1) until replay first reached the
/// high watermark (KAFKA-19964, as Kafka 4.4's controller), then the image's levels at the
/// offset of its last replayed record.
fn finalized_features(s: &NodeStatus) -> Option<FinalizedFeatures> {
    (s.caught_up && !s.finalized_features.is_empty()).then(|| FinalizedFeatures {
        epoch: s.replayed_end_offset - 1,
        levels: s.finalized_features.clone(),
    })
}

/// The first address `host:port` resolves to (an empty host binds every interface).
fn resolve(host: &str, port: u16) -> Result<SocketAddr, ServerError> {
    let host = if host.is_empty() { "0.0.0.0" } else { host };
    let text = format!("{host}:{port}");
    let not_found = || std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    text.to_socket_addrs()
        .map_err(|source| ServerError::Bind {
            addr: text.clone(),
            source,
        })?
        .next()
        .ok_or_else(|| ServerError::Bind {
            addr: text.clone(),
            source: not_found(),
        })
}

impl Server {
    /// Opens the metadata log, starts the node thread, the listener, the peer clients,
    /// controller registration and the metrics endpoint.
    pub async fn start(config: ServerConfig) -> Result<Server, ServerError> {
        let first = config.listeners.first().ok_or(ServerError::NoListener)?;
        let open_files = resources::raise_open_files_limit();
        let other_voters = resources::reserve_hosts(&config.raft);
        let configured_peers: Vec<String> = other_voters.iter().map(|h| h.to_string()).collect();
        let limits = resources::connection_limits(&config.limits, open_files, other_voters)?;
        // TLS material and addresses are read before anything starts, so a bad key store or
        // host stops the node here. The Raft client dials with the first listener's settings.
        let client_tls = match &first.tls {
            Some(tls) => Some(tls.client().map_err(ServerError::Tls)?),
            None => None,
        };
        let mut to_bind = Vec::with_capacity(config.listeners.len());
        for settings in &config.listeners {
            let tls =
                match &settings.tls {
                    Some(tls) => Some(tls.server().map_err(|e| {
                        ServerError::Tls(format!("listener {}: {e}", settings.name))
                    })?),
                    None => None,
                };
            let listener_config = ListenerConfig {
                listener_name: settings.name.clone(),
                max_frame_bytes: config.max_frame_bytes,
                limits: limits.clone(),
                listener_max_connections: settings.max_connections,
                connections_max_idle_ms: config.connections_max_idle_ms,
                identity: Some(ServerIdentity {
                    cluster_id: config.raft.cluster_id.clone(),
                    node_id: config.raft.node_id,
                }),
                tls,
                // Set below, once the node's status (its SCRAM credentials) exists.
                sasl: None,
            };
            to_bind.push((resolve(&settings.host, settings.port)?, listener_config));
        }
        let clock = node_thread::NodeClock::start();
        let node = open_node(&config, clock)?;
        let (status_tx, status_rx) = watch::channel(node.status());
        let credentials: Arc<dyn kraftwerk_sasl::CredentialStore> =
            Arc::new(ImageCredentials::new(
                status_rx.clone(),
                config
                    .controller
                    .delegation_tokens
                    .as_ref()
                    .map(|t| t.secret_key.clone()),
            ));
        for ((_, listener_config), settings) in to_bind.iter_mut().zip(&config.listeners) {
            listener_config.sasl = settings
                .sasl
                .clone()
                .map(|sasl| ServerSasl::new(sasl, credentials.clone()));
        }
        let (handle, inbox) = node_thread::channel(clock);
        let (outbound_tx, outbound_rx) = mpsc::unbounded_channel();
        let node_thread = std::thread::Builder::new()
            .name("kraftwerk-node".into())
            .spawn({
                let handle = handle.clone();
                move || node_thread::run(node, handle, inbox, outbound_tx, status_tx, clock)
            })
            .map_err(ServerError::Thread)?;

        let api_table = Arc::new(api::served_api_table());
        let node_id = config.raft.node_id;
        let peers = Arc::new(peers::Peers::new(
            node_id,
            config
                .raft
                .voters
                .iter()
                .map(|(id, e)| (*id, e.host.clone(), e.port)),
            api_table.clone(),
            config.raft.request_timeout_ms,
            client_tls,
            config.raft_client_sasl.clone(),
        ));
        tokio::spawn(peers.clone().dispatch(outbound_rx, handle.clone()));
        let channel_stats = peers.channel_stats();

        info!(
            max_connections = limits.max_connections,
            max_connections_per_ip = limits.max_connections_per_ip,
            peer_reserve = limits.peer_reserve,
            listeners = to_bind.len(),
            "connection limits (node-wide, shared by every listener)"
        );
        let quotas = ConnectionQuotas::new(limits);
        let listeners = bind_listeners(
            to_bind,
            quotas.clone(),
            api_table,
            features_fn(status_rx.clone(), config.unstable_feature_versions_enable),
            handler::NodeRequestHandler::new(
                handle.clone(),
                Some(peers.clone()),
                &config.raft.listener_name,
            ),
        )
        .await?;
        tokio::spawn(resources::follow_voter_hosts(
            status_rx.clone(),
            quotas,
            configured_peers,
        ));

        if !config.registration_endpoints.is_empty() {
            let registration = registration::Registration {
                node_id,
                incarnation_id: Uuid::new_v4(),
                listeners: config.registration_endpoints.clone(),
                unstable_features: config.unstable_feature_versions_enable,
            };
            tokio::spawn(registration::run(
                registration,
                handle.clone(),
                peers,
                status_rx.clone(),
            ));
        }
        if let Some((host, port)) = &config.metrics_addr {
            let addr = resolve(host, *port)?;
            metrics::serve(addr, node_id, status_rx.clone(), channel_stats.clone())
                .await
                .map_err(|source| ServerError::Bind {
                    addr: addr.to_string(),
                    source,
                })?;
        }
        let bound: Vec<String> = listeners
            .iter()
            .map(|l| l.local_addr().to_string())
            .collect();
        info!(node_id, listeners = %bound.join(","), "kraftwerk controller started");
        Ok(Server {
            listeners,
            node: handle,
            node_thread,
            status: status_rx,
        })
    }

    /// The bound address of the first controller listener.
    pub fn local_addr(&self) -> SocketAddr {
        self.listeners[0].local_addr()
    }

    /// The bound addresses of every controller listener, in [`ServerConfig::listeners`] order.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.listeners.iter().map(Listener::local_addr).collect()
    }

    /// Serves until SIGTERM/SIGINT (graceful shutdown) or a fatal node error. Returns whether
    /// the node stopped cleanly.
    pub async fn run_until_signal(self) -> bool {
        let Server {
            listeners,
            node,
            node_thread,
            status: _status,
        } = self;
        let node_thread = tokio::task::spawn_blocking(move || node_thread.join());
        tokio::pin!(node_thread);
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        let exit = tokio::select! {
            _ = term.recv() => None,
            _ = tokio::signal::ctrl_c() => None,
            exit = &mut node_thread => Some(exit),
        };
        let exit = match exit {
            Some(exit) => exit,
            None => {
                info!("shutdown requested");
                let _ = node.submit(node_thread::NodeEvent::Shutdown);
                node_thread.await
            }
        };
        // Every listener drains at once, within the same grace period.
        let mut stopping = tokio::task::JoinSet::new();
        for listener in listeners {
            stopping.spawn(async move {
                let addr = listener.local_addr();
                (addr, listener.shutdown(Duration::from_millis(1_000)).await)
            });
        }
        while let Some(stopped) = stopping.join_next().await {
            match stopped {
                Ok((addr, report)) => info!(listener = %addr, ?report, "listener stopped"),
                Err(e) => error!(error = %e, "listener shutdown task failed"),
            }
        }
        match exit {
            Ok(Ok(NodeExit::Clean)) => true,
            Ok(Ok(NodeExit::Fatal(reason))) => {
                error!(%reason, "node stopped on a fatal error");
                false
            }
            _ => {
                error!("node thread panicked");
                false
            }
        }
    }
}

/// Binds every listener of `to_bind` (address and configuration, in order), all counting
/// their connections in `quotas`, and starts them accepting. On an error the ones already bound
/// are dropped, which stops them.
pub(crate) async fn bind_listeners(
    to_bind: Vec<(SocketAddr, ListenerConfig)>,
    quotas: ConnectionQuotas,
    api_table: Arc<ApiTable>,
    features: FeaturesFn,
    handler: Arc<dyn RequestHandler>,
) -> Result<Vec<Listener>, ServerError> {
    let mut listeners = Vec::with_capacity(to_bind.len());
    for (addr, listener_config) in to_bind {
        let listener = Listener::bind_with_quotas(
            addr,
            listener_config,
            quotas.clone(),
            api_table.clone(),
            features.clone(),
            handler.clone(),
        )
        .await
        .map_err(|source| ServerError::Bind {
            addr: addr.to_string(),
            source,
        })?;
        listeners.push(listener);
    }
    Ok(listeners)
}

/// Opens the log and the Raft core, and wraps them with a standby controller (loading the
/// latest snapshot, timed here: the node reads no clock).
fn open_node(
    config: &ServerConfig,
    clock: node_thread::NodeClock,
) -> Result<node_thread::ServerNode, ServerError> {
    let log =
        SegmentLog::open(&config.metadata_log_dir, config.log).map_err(|e| ServerError::Log {
            dir: config.metadata_log_dir.display().to_string(),
            reason: e.to_string(),
        })?;
    let report = log.recovery_report().clone();
    info!(?report, "metadata log opened");
    let store = FileQuorumStateStore::new(log.partition_dir().join("quorum-state"));
    let raft = RaftCore::new(
        config.raft.clone(),
        log,
        store,
        rand::random(),
        clock.now_ms(),
    )
    .map_err(|e| ServerError::Raft(e.to_string()))?;
    let mut controller_config = config.controller.clone();
    controller_config.rng_seed = rand::random();
    let load_started = std::time::Instant::now();
    let mut node = Node::with_snapshot_policy(
        raft,
        Controller::new(controller_config),
        config.snapshot_policy,
        clock.now_ms(),
    )
    .map_err(|e| ServerError::Raft(e.to_string()))?;
    if node.stats().snapshots_loaded > 0 {
        node.record_snapshot_load_ms(load_started.elapsed().as_millis() as u64);
    }
    Ok(node)
}
