//! Coverage-guided fuzz targets for every decoder kraftwerk exposes to the outside: request
//! frames from the controller listener, controller requests against an active controller, the
//! files of a metadata log directory at recovery, and Raft RPCs into the consensus core.
//!
//! Each target is a plain function of the input bytes (`run`), so the same code runs under AFL++
//! (`src/bin/fuzz_*.rs`, built with `cargo afl build --features afl`), replays the checked-in
//! corpus in `cargo test` (`tests/corpus.rs`), and classifies crash inputs by panic message
//! (`fuzz-tool replay`). A target never catches a panic: whatever panics is a finding.
//!
//! - [`request`]: frame → header → body for every served api and version → adaptation to that
//!   version and to the newest → re-encode; Envelope unwrapping; the listener's own answers.
//! - [`controller`]: requests → `Controller::handle` on an active controller with brokers and
//!   topics → the node's write checks → replay.
//! - [`recovery`]: a log directory laid out from the bytes ([`layout`]) → `SegmentLog::open` →
//!   everything read back and checked.
//! - [`raft`]: a script of Raft requests, responses, failures and clock ticks into a `RaftCore`
//!   on in-memory storage.
//! - [`sasl`]: SaslAuthenticate messages into a PLAIN or SCRAM server exchange (and a client).
//! - [`seeds`]: the seed corpora (Java-written RPC frames, log directories).

pub mod apis;
pub mod controller;
pub mod layout;
pub mod raft;
pub mod records;
pub mod recovery;
pub mod request;
pub mod sasl;
pub mod seeds;
pub mod triage;

/// One target's entry point: takes the fuzzer's input bytes, panics on a finding.
pub type Target = fn(&[u8]);

/// The targets, by the name `scripts/fuzz` and the corpus directories use.
pub const TARGETS: &[(&str, Target)] = &[
    ("request", request::run),
    ("controller", controller::run),
    ("recovery", recovery::run),
    ("raft", raft::run),
    ("sasl", sasl::run),
];

/// The target called `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}
