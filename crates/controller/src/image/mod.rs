//! The metadata image.

pub mod cluster;
pub mod configs;
pub mod features;
pub mod partition;
pub mod topics;
