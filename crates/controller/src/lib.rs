//! kraftwerk's KRaft controller state machine (being written).

pub mod controller;
pub mod error;
pub mod handlers;
pub mod heartbeat;
pub mod ids;
pub mod image;
pub mod java_order;
pub mod node;
pub mod partition_change;
pub mod placement;
pub mod replay;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
pub mod topic_configs;
pub mod topic_name;
pub mod write;
