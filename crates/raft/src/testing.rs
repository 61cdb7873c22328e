//! Test doubles for the storage traits: an in-memory log with crash semantics and the
//! conformance suite every [`crate::ReplicatedLog`] implementation must pass.
