//! kraftwerk's KRaft controller state machine (being written).

pub mod controller;
pub mod error;
pub mod handlers;
pub mod heartbeat;
pub mod ids;
pub mod image;
pub mod java_order;
pub mod partition_change;
pub mod placement;
pub mod replay;
pub mod topic_configs;
pub mod topic_name;
pub mod write;
