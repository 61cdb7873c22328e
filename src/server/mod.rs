//! A running kraftwerk controller node: the node thread (Raft core + controller + log), the
//! controller listener, the peer clients and controller registration, wired together.
//!
//! `kraftwerk run` calls [`Server::start`] then [`Server::run_until_signal`]. SIGTERM/SIGINT start a
//! graceful shutdown: a leader resigns with EndQuorumEpoch naming its successors and the process
//! exits once another voter acknowledged or after a short grace period.

pub mod api;
mod handler;
pub mod metrics;
pub mod node_thread;
mod peers;
mod registration;

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use kraftwerk_controller::node::{Node, SnapshotPolicy};
use kraftwerk_controller::{Controller, ControllerConfig};
use kraftwerk_log::{FileQuorumStateStore, LogConfig, SegmentLog};
use kraftwerk_raft::{Endpoint, RaftConfig, RaftCore};
use kraftwerk_records::metadata_version::controller_supported_features;
use tokio::sync::{mpsc, watch};
use tracing::{error, info};
use uuid::Uuid;

use crate::cli::{load_formatted_node, FormattedDir};
use crate::config::NodeConfig;
use crate::net::listener::{FeaturesFn, Listener, ListenerConfig};
use crate::wire::api_versions::{ApiVersionsFeatures, FinalizedFeatures, SupportedFeature};
use node_thread::{NodeExit, NodeHandle};

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The metadata directory is not formatted or does not match the configuration.
    #[error("metadata directory: {0}")]
    Format(String),
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
    /// The controller listener could not be bound.
    #[error("binding the controller listener {addr}: {source}")]
    Bind {
        /// Address.
        addr: String,
        /// OS error.
        #[source]
        source: std::io::Error,
    },
    /// The node thread could not be started.
    #[error("starting the node thread: {0}")]
    Thread(std::io::Error),
}

/// A started node.
pub struct Server {
    listener: Listener,
    node: NodeHandle,
    node_thread: std::thread::JoinHandle<NodeExit>,
    status: watch::Receiver<kraftwerk_controller::node::NodeStatus>,
}

fn raft_config(config: &NodeConfig, formatted: &FormattedDir) -> RaftConfig {
    let voters: BTreeMap<i32, Endpoint> = config
        .quorum_voters
        .iter()
        .map(|v| {
            (
                v.id,
                Endpoint {
                    host: v.host.clone(),
                    port: v.port,
                },
            )
        })
        .collect();
    let mut raft = RaftConfig::new(
        config.node_id,
        formatted.cluster_id.clone(),
        formatted.directory_id,
        voters,
        config.controller_listener().listener_name.clone(),
    );
    raft.election_timeout_ms = config.quorum_election_timeout_ms as u64;
    raft.election_backoff_max_ms = config.quorum_election_backoff_max_ms as u64;
    raft.fetch_timeout_ms = config.quorum_fetch_timeout_ms as u64;
    raft.request_timeout_ms = config.quorum_request_timeout_ms as u64;
    raft.retry_backoff_ms = config.quorum_retry_backoff_ms as u64;
    raft.append_linger_ms = config.quorum_append_linger_ms as u64;
    raft
}

fn controller_config(config: &NodeConfig, formatted: &FormattedDir) -> ControllerConfig {
    let mut c = ControllerConfig::new(
        config.node_id,
        formatted.cluster_id.clone(),
        formatted.bootstrap.records.clone(),
    );
    c.session_timeout_ms = config.broker_session_timeout_ms as u64;
    c.heartbeat_interval_ms = config.broker_heartbeat_interval_ms as u64;
    c.noop_interval_ms = config.metadata_max_idle_interval_ms as u64;
    c.default_replication_factor = config.default_replication_factor as i16;
    c.default_num_partitions = config.num_partitions;
    c.rng_seed = rand::random();
    c.kraft_version = 0;
    c.quorum_node_ids = config.quorum_voters.iter().map(|v| v.id).collect();
    c.enable_unstable_feature_versions = config.unstable_feature_versions_enable;
    c
}

fn features_fn(
    status: watch::Receiver<kraftwerk_controller::node::NodeStatus>,
    unstable: bool,
) -> FeaturesFn {
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
        let finalized = (!s.finalized_features.is_empty()).then(|| FinalizedFeatures {
            epoch: s.replayed_end_offset - 1,
            levels: s.finalized_features.clone(),
        });
        ApiVersionsFeatures {
            supported: supported.clone(),
            finalized,
        }
    })
}

impl Server {
    /// Opens the metadata directory, starts the node thread and the listener.
    pub async fn start(config: NodeConfig) -> Result<Server, ServerError> {
        let clock = node_thread::NodeClock::start();
        let formatted =
            load_formatted_node(&config).map_err(|e| ServerError::Format(e.to_string()))?;
        let log_config = LogConfig {
            segment_bytes: config.metadata_log_segment_bytes as u64,
            segment_min_bytes: config.metadata_log_segment_min_bytes as u64,
            retention_bytes: config.metadata_max_retention_bytes,
            retention_ms: config.metadata_max_retention_ms,
        };
        let log = SegmentLog::open(&config.metadata_log_dir, log_config).map_err(|e| {
            ServerError::Log {
                dir: config.metadata_log_dir.display().to_string(),
                reason: e.to_string(),
            }
        })?;
        let report = log.recovery_report().clone();
        info!(?report, "metadata log opened");
        let store = FileQuorumStateStore::new(log.partition_dir().join("quorum-state"));
        let raft_config = raft_config(&config, &formatted);
        let raft = RaftCore::new(raft_config, log, store, rand::random(), clock.now_ms())
            .map_err(|e| ServerError::Raft(e.to_string()))?;
        let policy = SnapshotPolicy {
            max_bytes_between_snapshots: config.metadata_snapshot_max_new_record_bytes.max(1)
                as u64,
            max_interval_ms: config.metadata_snapshot_max_interval_ms.max(0) as u64,
            clean_interval_ms: 60_000,
        };
        let node = Node::with_snapshot_policy(
            raft,
            Controller::new(controller_config(&config, &formatted)),
            policy,
            clock.now_ms(),
        )
        .map_err(|e| ServerError::Raft(e.to_string()))?;
        let (status_tx, status_rx) = watch::channel(node.status());
        let (handle, events) = node_thread::channel();
        let (outbound_tx, outbound_rx) = mpsc::unbounded_channel();
        let node_thread = std::thread::Builder::new()
            .name("kraftwerk-node".into())
            .spawn({
                let handle = handle.clone();
                move || node_thread::run(node, handle, events, outbound_tx, status_tx, clock)
            })
            .map_err(ServerError::Thread)?;

        let api_table = Arc::new(api::served_api_table());
        let peers = Arc::new(peers::Peers::new(
            config.node_id,
            config
                .quorum_voters
                .iter()
                .map(|v| (v.id, v.host.clone(), v.port)),
            api_table.clone(),
            config.quorum_request_timeout_ms as u64,
        ));
        tokio::spawn(peers.clone().dispatch(outbound_rx, handle.clone()));

        let listener_endpoint = config.controller_listener().clone();
        let host = if listener_endpoint.host.is_empty() {
            "0.0.0.0".to_owned()
        } else {
            listener_endpoint.host.clone()
        };
        let addr_text = format!("{host}:{}", listener_endpoint.port);
        let addr: SocketAddr = addr_text
            .to_socket_addrs()
            .map_err(|source| ServerError::Bind {
                addr: addr_text.clone(),
                source,
            })?
            .next()
            .ok_or_else(|| ServerError::Bind {
                addr: addr_text.clone(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no address"),
            })?;
        let listener_config = ListenerConfig {
            listener_name: listener_endpoint.listener_name.clone(),
            max_frame_bytes: config.socket_request_max_bytes as usize,
            ..ListenerConfig::default()
        };
        let listener = Listener::bind(
            addr,
            listener_config,
            api_table,
            features_fn(status_rx.clone(), config.unstable_feature_versions_enable),
            handler::NodeRequestHandler::new(handle.clone()),
        )
        .await
        .map_err(|source| ServerError::Bind {
            addr: addr_text,
            source,
        })?;

        let local_voter = config.local_voter().cloned();
        if let Some(voter) = local_voter {
            let registration = registration::Registration {
                node_id: config.node_id,
                incarnation_id: Uuid::new_v4(),
                listener_name: listener_endpoint.listener_name.clone(),
                host: voter.host.clone(),
                port: voter.port,
                unstable_features: config.unstable_feature_versions_enable,
            };
            tokio::spawn(registration::run(
                registration,
                handle.clone(),
                peers,
                status_rx.clone(),
            ));
        }
        if let Some(m) = &config.metrics_listener {
            let text = format!("{}:{}", m.host, m.port);
            let addr = text
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .ok_or_else(|| ServerError::Bind {
                    addr: text.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "no address"),
                })?;
            metrics::serve(addr, config.node_id, status_rx.clone())
                .await
                .map_err(|source| ServerError::Bind { addr: text, source })?;
        }
        info!(node_id = config.node_id, listener = %listener.local_addr(), "kraftwerk controller started");
        Ok(Server {
            listener,
            node: handle,
            node_thread,
            status: status_rx,
        })
    }

    /// The bound controller listener address.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr()
    }

    /// Serves until SIGTERM/SIGINT (graceful shutdown) or a fatal node error. Returns whether
    /// the node stopped cleanly.
    pub async fn run_until_signal(self) -> bool {
        let Server {
            listener,
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
        let report = listener.shutdown(Duration::from_millis(1_000)).await;
        info!(?report, "listener stopped");
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
