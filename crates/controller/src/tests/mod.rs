//! Scenario tests of the controller through its public API, driven by [`crate::testing::TestNode`].

mod bootstrap;
mod cluster;
mod partitions;
mod topics;
