//! The commands: `kraftwerk run`'s arguments (as `kafka-server-start`'s), and the offline
//! `format`, `info`, `random-uuid` (as `kafka-storage`'s) and `version`.
//!
//! Each command is a clap `Args` struct the binary mounts as a subcommand, plus a `run_*`
//! function that does the work and prints what Kafka's tool prints. The library functions
//! behind them ([`format::format`], [`format::random_uuid`]) are what tests call.

pub mod format;
pub mod info;
pub mod run;

pub use format::{
    format, random_uuid, run_format, FormatArgs, FormatError, FormatOptions, FormatReport,
};
pub use info::{info, run_info, InfoArgs, InfoReport};
pub use run::{RunArgs, RunConfigError};

/// `kraftwerk random-uuid`: no arguments.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct RandomUuidArgs {}

/// Prints a new cluster id (`kafka-storage random-uuid`).
pub fn run_random_uuid(_args: &RandomUuidArgs) {
    println!("{}", random_uuid());
}

/// `kraftwerk version`: no arguments.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionArgs {}

/// What `kraftwerk version` prints: the version, then the Kafka protocol and metadata levels
/// this build speaks (the feature levels as `kafka-storage version` prints them for the
/// default release; kraft.version, which depends on the quorum — 0 static, 1 dynamic — is left
/// out).
pub fn version_text() -> String {
    use kraftwerk_records::metadata_version::{default_feature_levels, MetadataVersion};
    let latest = MetadataVersion::LATEST_PRODUCTION;
    let mut text = format!(
        "kraftwerk {}\nKafka message schemas: {}\nmetadata.version: {} to {} (default {})\n",
        env!("CARGO_PKG_VERSION"),
        kraftwerk_protocol::SCHEMA_KAFKA_VERSION,
        MetadataVersion::MINIMUM.name(),
        latest.name(),
        latest.name(),
    );
    text.push_str(&format!(
        "metadata.version={} ({})\n",
        latest.feature_level(),
        latest.name()
    ));
    for (feature, level) in default_feature_levels(latest) {
        text.push_str(&format!("{}={level}\n", feature.name()));
    }
    text
}

/// Prints [`version_text`].
pub fn run_version(_args: &VersionArgs) {
    print!("{}", version_text());
}
