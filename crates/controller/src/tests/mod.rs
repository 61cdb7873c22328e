//! Scenario tests of the controller through its public API, driven by [`crate::testing::TestNode`].

mod acls;
mod admin;
mod bootstrap;
mod cluster;
mod contained;
mod delegation_tokens;
mod levels;
mod log_config;
mod misc;
mod partitions;
mod proptest_ops;
mod proptest_requests;
mod replay;
mod topics;
mod validation;
