//! kraftwerk's KRaft controller state machine (being written).

pub mod error;
pub mod ids;
pub mod image;
pub mod java_order;
pub mod partition_change;
pub mod topic_name;
