//! Offline commands: `kraftwerk format` and `kraftwerk random-uuid`, mirroring
//! `kafka-storage format` and `kafka-storage random-uuid`.
//!
//! Each command is a clap `Args` struct the binary mounts as a subcommand, plus a `run_*`
//! function that does the work and prints what Kafka's tool prints. The library functions
//! behind them ([`format::format`], [`format::random_uuid`]) are what tests call.

pub mod format;

pub use format::{
    format, random_uuid, run_format, FormatArgs, FormatError, FormatOptions, FormatReport,
};

/// `kraftwerk random-uuid`: no arguments.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct RandomUuidArgs {}

/// Prints a new cluster id (`kafka-storage random-uuid`).
pub fn run_random_uuid(_args: &RandomUuidArgs) {
    println!("{}", random_uuid());
}
