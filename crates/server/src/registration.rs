//! KIP-919 controller registration: once the cluster's metadata.version supports it (3.7-IV0+),
//! this controller registers itself with the active controller (`ControllerRegistrationManager`),
//! so `DescribeCluster` on the controller listener — what `kafka-metadata-quorum
//! --bootstrap-controller` and other `--bootstrap-controller` tools use — lists it.

use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::messages::controller_registration_request::{Feature, Listener};
use kafka_protocol::messages::{ApiKey, ControllerRegistrationRequest, RequestKind, ResponseKind};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_controller::{ControllerRequest, ControllerResponse, RequestContext};
use kraftwerk_node::NodeStatus;
use kraftwerk_records::metadata_version::{
    controller_supported_features, MetadataVersion, METADATA_VERSION_FEATURE_NAME,
};
use tokio::sync::{oneshot, watch};
use tracing::{info, warn};
use uuid::Uuid;

use crate::node_thread::{NodeEvent, NodeHandle};
use crate::peers::Peers;

/// What this controller registers.
#[derive(Clone, Debug)]
pub struct Registration {
    /// `node.id`.
    pub node_id: i32,
    /// Random per process start.
    pub incarnation_id: Uuid,
    /// Every controller listener as advertised (at least one), first the one Raft uses, as
    /// Java's `ControllerRegistrationManager` registers its whole `ListenerInfo`.
    pub listeners: Vec<RegisteredEndpoint>,
    /// Whether unstable feature levels are enabled.
    pub unstable_features: bool,
}

/// One listener of a controller registration: DescribeCluster answers a request that came in
/// on listener `L` with the controllers' `L` endpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisteredEndpoint {
    /// Controller listener name.
    pub listener_name: String,
    /// Advertised host.
    pub host: String,
    /// Advertised port.
    pub port: u16,
    /// The listener's `SecurityProtocol` id (0 PLAINTEXT, 1 SSL), as Java registers it.
    pub security_protocol: i16,
}

impl Registration {
    fn request(&self) -> ControllerRegistrationRequest {
        ControllerRegistrationRequest::default()
            .with_controller_id(self.node_id)
            .with_incarnation_id(self.incarnation_id)
            .with_zk_migration_ready(false)
            .with_listeners(
                self.listeners
                    .iter()
                    .map(|l| {
                        Listener::default()
                            .with_name(StrBytes::from_string(l.listener_name.clone()))
                            .with_host(StrBytes::from_string(l.host.clone()))
                            .with_port(l.port)
                            .with_security_protocol(l.security_protocol)
                    })
                    .collect(),
            )
            .with_features(
                controller_supported_features(self.unstable_features)
                    .into_iter()
                    .map(|f| {
                        Feature::default()
                            .with_name(StrBytes::from_static_str(f.name))
                            .with_min_supported_version(f.min_level)
                            .with_max_supported_version(f.max_level)
                    })
                    .collect(),
            )
    }
}

fn registration_supported(status: &NodeStatus) -> bool {
    status
        .finalized_features
        .iter()
        .find(|(name, _)| name == METADATA_VERSION_FEATURE_NAME)
        .and_then(|(_, level)| MetadataVersion::from_feature_level(*level).ok())
        .is_some_and(|mv| mv.is_controller_registration_supported())
}

/// Registers this controller, retrying every second until it succeeds; registers again after a
/// leader change if the new leader's image has not got it (cheap, and it keeps endpoints fresh).
pub async fn run(
    registration: Registration,
    node: NodeHandle,
    peers: Arc<Peers>,
    mut status: watch::Receiver<NodeStatus>,
) {
    let mut registered_with: Option<(i32, i32)> = None;
    loop {
        let current = status.borrow_and_update().clone();
        let leader = current.leader.leader_id.map(|l| (l, current.leader.epoch));
        let due = leader.filter(|_| leader != registered_with && registration_supported(&current));
        if let Some((leader_id, epoch)) = due {
            let ok = if leader_id == registration.node_id {
                if current.active {
                    register_locally(&registration, &node).await
                } else {
                    false
                }
            } else {
                register_remotely(&registration, &peers, leader_id).await
            };
            if ok {
                info!(leader_id, epoch, "controller registration acknowledged");
                registered_with = leader;
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(1_000)) => {}
            changed = status.changed() => if changed.is_err() { return },
        }
    }
}

async fn register_locally(registration: &Registration, node: &NodeHandle) -> bool {
    let (reply, answer) = oneshot::channel();
    let ctx = RequestContext {
        api_version: 0,
        listener_name: registration
            .listeners
            .first()
            .map(|l| l.listener_name.clone())
            .unwrap_or_default(),
        internal: true,
        ..Default::default()
    };
    let request = ControllerRequest::ControllerRegistration(registration.request());
    if node
        .submit(NodeEvent::ControllerRequest {
            ctx,
            request,
            reply,
        })
        .is_err()
    {
        return false;
    }
    match answer.await {
        Ok(ControllerResponse::ControllerRegistration(r)) if r.error_code == 0 => true,
        Ok(other) => {
            warn!(response = ?other, "controller registration refused");
            false
        }
        Err(_) => false,
    }
}

async fn register_remotely(registration: &Registration, peers: &Peers, leader_id: i32) -> bool {
    let Some(client) = peers.control_client(leader_id) else {
        return false;
    };
    let request = registration.request();
    match client
        .send(ApiKey::ControllerRegistration, move |_| {
            RequestKind::ControllerRegistration(request)
        })
        .await
    {
        Ok((_, ResponseKind::ControllerRegistration(r))) if r.error_code == 0 => true,
        Ok((_, other)) => {
            warn!(leader_id, response = ?other, "controller registration refused");
            false
        }
        Err(e) => {
            warn!(leader_id, error = %e, "controller registration failed");
            false
        }
    }
}
