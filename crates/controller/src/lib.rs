//! kraftwerk's KRaft controller state machine: the metadata image, `replay`, and the
//! controller RPC handlers, without I/O (no sockets, files, clock or global RNG).
//!
//! Follows Apache Kafka 4.1.2's `QuorumController` and its `*ControlManager`s: every request
//! becomes `(records, response)` ([`controller::ControllerResult`]); records change state only
//! through [`replay::replay`], which the active controller, standbys and snapshot loading share.
//!
//! # Public API (used by `kraftwerk-node`)
//!
//! * [`controller::Controller`] — committed image plus speculative images:
//!   [`new`](controller::Controller::new), [`replay_committed`](controller::Controller::replay_committed),
//!   [`replay_uncommitted`](controller::Controller::replay_uncommitted),
//!   [`load_snapshot`](controller::Controller::load_snapshot),
//!   [`activate`](controller::Controller::activate) / [`deactivate`](controller::Controller::deactivate),
//!   [`handle`](controller::Controller::handle), [`poll`](controller::Controller::poll) (bootstrap,
//!   session-expiry fencing, NoOps), [`next_deadline_ms`](controller::Controller::next_deadline_ms),
//!   [`image`](controller::Controller::image), [`latest`](controller::Controller::latest).
//!   The module docs of [`controller`] state the contract (append at `next_offset`, replay before
//!   the next call, answer after commit) and how "empty log" is decided for bootstrap.
//! * [`api`] — the one list of controller APIs: [`ControllerRequest`] / [`ControllerResponse`]
//!   (one variant per API), [`CONTROLLER_APIS`] (served versions), who answers each
//!   ([`AnsweredBy`]), NOT_CONTROLLER and other error answers ([`ControllerApi`]).
//! * [`controller::ControllerConfig`], [`controller::RequestContext`],
//!   [`controller::MAX_RECORDS_PER_BATCH`].
//! * [`image::MetadataImage`] — features, cluster, topics (with broker → partition indexes),
//!   configs, producer ids, and the records kept for snapshots (ACLs, quotas, SCRAM, delegation
//!   tokens); [`image::MetadataImage::write_records`] writes it back as records.
//! * [`error::ReplayError`] — a record that contradicts the image (fatal on the active
//!   controller).
//!
//! # Modules
//!
//! * [`image`], [`replay`], [`mod@write`]: state, its only mutation, and its snapshot form.
//! * [`handlers`]: one module per concern (cluster lifecycle, leader/ISR updates, topics,
//!   partitions, producer ids); pure functions of (image, request).
//! * [`partition_change`] (`PartitionChangeBuilder` incl. ELR), [`placement`]
//!   (`StripedReplicaPlacer`), [`heartbeat`] (sessions and the broker state machine),
//!   [`topic_name`], [`topic_configs`], [`ids`], [`request`] (request context and results).
//! * [`validate`]: the checks every request passes before its handler builds records (Kafka's
//!   string limit, the records one request may produce, what one result may write).
//! * [`java_order`], [`java_random`]: `java.util.HashSet`/`HashMap` iteration order and
//!   `java.util.Random`, so records (ELR lists, config order) and replica placement come out as
//!   Kafka's would; `testdata/` holds vectors generated with Kafka 4.1.2's own classes.

pub mod api;
pub mod authorization;
pub mod authorizer;
pub mod broker_configs;
pub mod controller;
pub mod error;
pub mod handlers;
pub mod heartbeat;
pub mod ids;
pub mod image;
pub mod java_order;
pub mod java_random;
pub mod log_limit;
pub mod partition_change;
pub mod placement;
pub mod replay;
pub mod request;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
pub mod topic_configs;
pub mod topic_name;
pub mod validate;
pub mod write;

pub use api::{AnsweredBy, ControllerApi, ControllerRequest, ControllerResponse, CONTROLLER_APIS};
pub use controller::{
    Controller, ControllerConfig, ControllerResult, RequestContext, MAX_RECORDS_PER_BATCH,
};
pub use error::{ApiError, ReplayError};
pub use image::MetadataImage;
