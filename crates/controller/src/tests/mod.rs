//! Scenario tests of the controller through its public API, driven by [`crate::testing::TestNode`].

mod admin;
mod bootstrap;
mod cluster;
mod misc;
mod partitions;
mod proptest_ops;
mod replay;
mod topics;
