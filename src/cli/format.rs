//! `kraftwerk format`: prepare a controller's directories, as `kafka-storage format` does.
//!
//! Follows `org.apache.kafka.metadata.storage.Formatter` and `kafka.tools.StorageTool` of Kafka
//! 4.0 to 4.4 (their quorum logic is the same in every release): every directory of the node
//! (`log.dirs` plus `metadata.log.dir`) gets its bootstrap records and then a v1
//! `meta.properties` (`node.id`, `cluster.id`, a `directory.id`).
//!
//! The quorum (KIP-853):
//!
//! | configuration | option | kraft.version | what is written |
//! |---|---|---|---|
//! | `controller.quorum.voters` | none or `--no-initial-controllers` | 0 | the static layout |
//! | `controller.quorum.voters` | `--standalone`, `--initial-controllers` | — | refused |
//! | `controller.quorum.bootstrap.servers` only | none | — | refused: one option is needed |
//! | `controller.quorum.bootstrap.servers` only | `--standalone` | 1 | voter set {this node at its advertised controller endpoint, a fresh directory id} |
//! | `controller.quorum.bootstrap.servers` only | `--initial-controllers L` | 1 | voter set L; this node's directory id in L becomes the metadata directory's `directory.id` |
//! | `controller.quorum.bootstrap.servers` only | `--no-initial-controllers` | 1 | no voter set (the node joins as an observer) |
//!
//! `--feature kraft.version=N` must agree (1 with a dynamic quorum, 0 with a static one);
//! kraft.version 1 has no metadata.version dependency (`KRaftVersion.dependencies` is empty),
//! so Java formats a dynamic quorum even at `--release-version 3.3`, and so do we. The voter
//! set goes into the bootstrap snapshot `__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`
//! of the metadata directory, as the release of the chosen metadata.version writes it
//! ([`BootstrapLayout::for_release`]): up to 4.3 a snapshot holding only SnapshotHeader,
//! KRaftVersionRecord(1) and VotersRecord, next to `bootstrap.checkpoint` in every directory,
//! and only when there is a voter set (`--no-initial-controllers` then writes kraft.version
//! nowhere); from 4.4 (KIP-1170) the one snapshot with the bootstrap records too, the
//! KRaftVersionRecord whenever kraft.version is 1 and the VotersRecord when there is a voter
//! set. `--add-scram` appends UserScramCredentialRecords after the FeatureLevelRecords
//! (`Formatter.calculateBootstrapMetadata`; parsing in [`scram`]), from metadata.version
//! 3.5-IV2 on.
//!
//! The start-up side, which accepts directories formatted by Kafka's own tool as well as ours
//! and hands the snapshot's voter set to the node, is `kraftwerk_log::formatted`.

use std::fs;
use std::io;
use std::path::PathBuf;

use kraftwerk_log::bootstrap::quorum::{BootstrapQuorum, QuorumRecordsError};
use kraftwerk_log::bootstrap::{
    write_bootstrap_snapshot, BootstrapError, BootstrapLayout, BootstrapMetadata,
};
use kraftwerk_log::formatted::{verify_ensemble, LoadError};
use kraftwerk_log::meta_properties::{MetaProperties, MetaPropertiesError};
use kraftwerk_protocol::kafka_uuid::{
    is_reserved_directory_id, kafka_uuid_from_string, kafka_uuid_to_string, random_directory_id,
};
use kraftwerk_records::metadata_version::{
    Feature, FeatureError, MetadataVersion, MetadataVersionError, METADATA_VERSION_FEATURE_NAME,
};
use thiserror::Error;
use uuid::Uuid;

use crate::config::{ConfigError, NodeConfig};

pub mod initial_controllers;
pub mod scram;

use initial_controllers::{bootstrap_voters, parse_dynamic_voters, DynamicVoter};
use scram::{scram_records, ScramArgError};

/// `kraftwerk format` arguments, spelled like `kafka-storage format`'s.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct FormatArgs {
    /// The server.properties of this controller.
    #[arg(long = "config", short = 'c', value_name = "CONFIG")]
    pub config: PathBuf,
    /// The cluster id: a 22-character base64url UUID, as `kraftwerk random-uuid` prints.
    #[arg(long = "cluster-id", short = 't', value_name = "CLUSTER_ID")]
    pub cluster_id: String,
    /// The release version for the initial feature levels, e.g. `4.1` or `4.0-IV3`. The
    /// minimum is 3.3-IV3; the default is the latest production metadata.version (4.1-IV1).
    #[arg(long = "release-version", short = 'r', value_name = "RELEASE_VERSION")]
    pub release_version: Option<String>,
    /// A feature level to use instead of the release's default, as `feature=level`
    /// (repeatable), e.g. `group.version=0`.
    #[arg(long = "feature", short = 'f', value_name = "FEATURE")]
    pub features: Vec<String>,
    /// Skip directories that are already formatted instead of failing.
    #[arg(long = "ignore-formatted", short = 'g')]
    pub ignore_formatted: bool,
    /// Used to initialize a controller as a single-node dynamic quorum. When setting this
    /// flag, the controller.quorum.voters config must not be set, and
    /// controller.quorum.bootstrap.servers is set instead.
    #[arg(long = "standalone", short = 's', group = "reconfigurable_quorum")]
    pub standalone: bool,
    /// Used to initialize a server without specifying a dynamic quorum. When setting this
    /// flag, the controller.quorum.voters config should not be set, and
    /// controller.quorum.bootstrap.servers is set instead.
    #[arg(
        long = "no-initial-controllers",
        short = 'N',
        group = "reconfigurable_quorum"
    )]
    pub no_initial_controllers: bool,
    /// Used to initialize a server with the specified dynamic quorum: a comma-separated list
    /// of id@hostname:port:directory, the same on every node, e.g.
    /// `0@example.com:8082:JEXY6aqzQY-32P5TStzaFg,1@example.com:8083:MvDxzVmcRsaTz33bUuRU6A`.
    /// When setting this flag, the controller.quorum.voters config must not be set, and
    /// controller.quorum.bootstrap.servers is set instead.
    #[arg(
        long = "initial-controllers",
        short = 'I',
        value_name = "INITIAL_CONTROLLERS",
        group = "reconfigurable_quorum"
    )]
    pub initial_controllers: Option<String>,
    /// A SCRAM_CREDENTIAL to add to the __cluster_metadata log (repeatable), e.g.
    /// 'SCRAM-SHA-256=[name=alice,password=alice-secret]' or
    /// 'SCRAM-SHA-512=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="]'.
    #[arg(long = "add-scram", short = 'S', value_name = "ADD_SCRAM")]
    pub add_scram: Vec<String>,
}

/// The dynamic-quorum option of `kafka-storage format` given, if any (they exclude each other).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum QuorumOption {
    /// None of them.
    #[default]
    None,
    /// `--standalone`.
    Standalone,
    /// `--initial-controllers`, unparsed.
    InitialControllers(String),
    /// `--no-initial-controllers`.
    NoInitialControllers,
}

/// What to format: a validated configuration plus the command-line choices.
#[derive(Clone, Debug)]
pub struct FormatOptions {
    /// The node's configuration (node id, voters, directories, unstable-versions switch).
    pub config: NodeConfig,
    /// The cluster id to write (validated by [`format`]).
    pub cluster_id: String,
    /// `--release-version`, unparsed.
    pub release_version: Option<String>,
    /// `--feature name=level` arguments, unparsed.
    pub features: Vec<String>,
    /// `--ignore-formatted`.
    pub ignore_formatted: bool,
    /// `--standalone`, `--initial-controllers` or `--no-initial-controllers`.
    pub quorum: QuorumOption,
    /// `--add-scram` arguments, unparsed.
    pub add_scram: Vec<String>,
}

impl FormatArgs {
    /// Loads `--config` and pairs it with the other arguments.
    ///
    /// Errors: [`FormatError::Config`] when the file is missing or invalid.
    pub fn to_options(&self) -> Result<FormatOptions, FormatError> {
        let config = NodeConfig::load(&self.config)?;
        let quorum = match (
            self.standalone,
            &self.initial_controllers,
            self.no_initial_controllers,
        ) {
            (true, _, _) => QuorumOption::Standalone,
            (_, Some(list), _) => QuorumOption::InitialControllers(list.clone()),
            (_, _, true) => QuorumOption::NoInitialControllers,
            _ => QuorumOption::None,
        };
        Ok(FormatOptions {
            config,
            cluster_id: self.cluster_id.clone(),
            release_version: self.release_version.clone(),
            features: self.features.clone(),
            ignore_formatted: self.ignore_formatted,
            quorum,
            add_scram: self.add_scram.clone(),
        })
    }
}

/// Which role a formatted directory plays (`Formatter.DirectoryType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirectoryKind {
    /// `metadata.log.dir` without an initial voter set (`STATIC_METADATA_DIRECTORY`; also
    /// `--no-initial-controllers`).
    Metadata,
    /// `metadata.log.dir` of a node in the initial voter set
    /// (`DYNAMIC_METADATA_VOTER_DIRECTORY`).
    DynamicMetadataVoter,
    /// `metadata.log.dir` of a node outside the initial voter set
    /// (`DYNAMIC_METADATA_NON_VOTER_DIRECTORY`).
    DynamicMetadataNonVoter,
    /// Another `log.dirs` entry.
    Data,
}

impl DirectoryKind {
    /// What `kafka-storage format` prints for it (`DirectoryType.description`).
    pub fn description(self) -> &'static str {
        match self {
            DirectoryKind::Metadata => "metadata directory",
            DirectoryKind::DynamicMetadataVoter => "dynamic metadata voter directory",
            DirectoryKind::DynamicMetadataNonVoter => "dynamic metadata directory",
            DirectoryKind::Data => "data directory",
        }
    }
}

/// One directory `format` wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormattedDirectory {
    /// The directory.
    pub path: PathBuf,
    /// Its role.
    pub kind: DirectoryKind,
    /// The `directory.id` written.
    pub directory_id: Uuid,
}

/// What [`format`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct FormatReport {
    /// The metadata.version written into `bootstrap.checkpoint`.
    pub metadata_version: MetadataVersion,
    /// Every feature's effective level, `kraft.version` included, sorted by name.
    pub feature_levels: Vec<(Feature, i16)>,
    /// Directories formatted now, in path order.
    pub formatted: Vec<FormattedDirectory>,
    /// Directories skipped because `--ignore-formatted` was given and they were formatted.
    pub already_formatted: Vec<PathBuf>,
    /// The quorum records written into the bootstrap snapshot (`None`: static quorum, or
    /// `--no-initial-controllers` before 4.4, where they are written nowhere).
    pub quorum: Option<BootstrapQuorum>,
}

/// Why `format` refused or failed. Messages follow `kafka-storage`'s where one exists.
#[derive(Debug, Error)]
pub enum FormatError {
    /// `--config` could not be loaded.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `--cluster-id` is not a 22-character base64url UUID.
    #[error(
        "Invalid cluster id `{cluster_id}`: {reason}. Use a 22-character base64url UUID such as \
         `kraftwerk random-uuid` prints"
    )]
    InvalidClusterId {
        /// The argument.
        cluster_id: String,
        /// What is wrong.
        reason: String,
    },
    /// No static voter set and none of the dynamic-quorum options (`StorageTool`).
    #[error(
        "Because controller.quorum.voters is not set on this controller, you must specify one of \
         the following: --standalone, --initial-controllers, or --no-initial-controllers."
    )]
    DynamicQuorumOptionMissing,
    /// A static voter set with `--standalone` or `--initial-controllers` (`StorageTool`).
    #[error(
        "You cannot specify controller.quorum.voters and format the node with \
         --initial-controllers or --standalone. If you want to use dynamic quorum, please remove \
         controller.quorum.voters and specify controller.quorum.bootstrap.servers instead."
    )]
    StaticVotersWithDynamicOption,
    /// `--initial-controllers` (or the voter `--standalone` builds) does not parse
    /// (`DynamicVoters.parse`; Java throws an `IllegalArgumentException` with this message).
    #[error("{0}")]
    InitialControllers(String),
    /// An initial controller with a reserved directory id: its meta.properties could never be
    /// loaded (`DirectoryId.reserved`). Kafka's tool writes it; kraftwerk refuses.
    #[error(
        "Invalid directory id {directory_id} of node {node_id} in --initial-controllers: it is a \
         reserved directory id (use `kraftwerk random-uuid` or `kafka-storage random-uuid`)"
    )]
    ReservedDirectoryId {
        /// The voter.
        node_id: i32,
        /// Its directory id, as text.
        directory_id: String,
    },
    /// The voter set's Java order cannot be reproduced.
    #[error(transparent)]
    Quorum(#[from] QuorumRecordsError),
    /// `--release-version` does not name a supported metadata.version.
    #[error("Invalid --release-version: {0}")]
    ReleaseVersion(MetadataVersionError),
    /// Both `--release-version` and `--feature metadata.version=X` were given.
    #[error("Use --release-version instead of --feature metadata.version=X to avoid ambiguity.")]
    AmbiguousMetadataVersion,
    /// A non-production metadata.version without `unstable.feature.versions.enable=true`.
    #[error("metadata.version {0} is not yet stable.")]
    UnstableMetadataVersion(MetadataVersion),
    /// A `--feature` argument is not `name=level`.
    #[error("Can't parse feature=level string {arg}: {reason}")]
    InvalidFeatureArgument {
        /// The argument.
        arg: String,
        /// What is wrong.
        reason: String,
    },
    /// A feature name or level was refused.
    #[error(transparent)]
    Feature(#[from] FeatureError),
    /// `kraft.version` above 0 needs a dynamic quorum (`Formatter.effectiveKRaftFeatureLevel`).
    #[error(
        "Cannot set kraft.version to {0} unless controller.quorum.voters is empty and one of the \
         flags --standalone, --initial-controllers, or --no-initial-controllers is used. For \
         dynamic controllers support, try using one of --standalone, --initial-controllers, or \
         --no-initial-controllers and removing controller.quorum.voters."
    )]
    KRaftVersionNeedsDynamicQuorum(i16),
    /// `kraft.version` 0 with a dynamic quorum (`Formatter.effectiveKRaftFeatureLevel`).
    #[error(
        "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags \
         --standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic \
         controllers support, try removing the --feature flag for kraft.version."
    )]
    KRaftVersionZeroWithDynamicQuorum,
    /// A directory is formatted and `--ignore-formatted` was not given.
    #[error(
        "Log directory {dir} is already formatted. Use --ignore-formatted to ignore this \
         directory and format the others.",
        dir = dir.display()
    )]
    AlreadyFormatted {
        /// The first formatted directory.
        dir: PathBuf,
    },
    /// The existing directories disagree with this node or with each other.
    #[error(transparent)]
    Inconsistent(#[from] LoadError),
    /// An `--add-scram` argument was refused (`ScramParser`), or SCRAM is not supported at
    /// the metadata.version.
    #[error(transparent)]
    Scram(#[from] ScramArgError),
    /// Writing `bootstrap.checkpoint` failed.
    #[error(transparent)]
    Bootstrap(#[from] BootstrapError),
    /// Writing `meta.properties` failed.
    #[error(transparent)]
    MetaProperties(#[from] MetaPropertiesError),
    /// Creating a directory failed.
    #[error("Unable to create directory {path}: {source}", path = path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// A new cluster id (`kafka-storage random-uuid`, `Uuid.randomUuid`): a random v4 UUID in
/// Kafka's base64url text form, never one starting with `-`.
pub fn random_uuid() -> String {
    loop {
        let id = Uuid::new_v4();
        let text = kafka_uuid_to_string(id);
        if !text.starts_with('-') {
            return text;
        }
    }
}

/// Checks a cluster id: exactly the 22-character canonical base64url text of a Kafka Uuid.
/// (Kafka's own tool accepts any string; kraftwerk is stricter when formatting.)
pub fn validate_cluster_id(cluster_id: &str) -> Result<(), FormatError> {
    let err = |reason: String| FormatError::InvalidClusterId {
        cluster_id: cluster_id.to_owned(),
        reason,
    };
    if cluster_id.len() != 22 {
        return Err(err(format!(
            "{} characters instead of 22",
            cluster_id.chars().count()
        )));
    }
    let id = kafka_uuid_from_string(cluster_id).map_err(|e| err(e.to_string()))?;
    if kafka_uuid_to_string(id) != cluster_id {
        return Err(err("not the canonical base64url text of a UUID".to_owned()));
    }
    Ok(())
}

/// The metadata.version and feature levels `format` writes
/// (`Formatter.calculateEffectiveReleaseVersion`, `calculateEffectiveFeatureLevels`).
fn effective_levels(
    opts: &FormatOptions,
    dynamic_quorum: bool,
) -> Result<(MetadataVersion, Vec<(Feature, i16)>), FormatError> {
    let unstable = opts.config.unstable_feature_versions_enable;
    let mut requested: Vec<(String, i16)> = Vec::new();
    for arg in &opts.features {
        let bad = |reason: &str| FormatError::InvalidFeatureArgument {
            arg: arg.clone(),
            reason: reason.to_owned(),
        };
        let (name, level) = arg
            .split_once('=')
            .ok_or_else(|| bad("equals sign not found"))?;
        let level: i16 = level
            .trim()
            .parse()
            .map_err(|_| bad(&format!("unable to parse {} as a short", level.trim())))?;
        requested.retain(|(n, _)| n != name.trim());
        requested.push((name.trim().to_owned(), level));
    }
    let mv_feature = requested
        .iter()
        .find(|(n, _)| n == METADATA_VERSION_FEATURE_NAME);
    let metadata_version = match (mv_feature, &opts.release_version) {
        (Some(_), Some(_)) => return Err(FormatError::AmbiguousMetadataVersion),
        (Some((_, level)), None) => {
            MetadataVersion::from_feature_level(*level).map_err(FormatError::ReleaseVersion)?
        }
        (None, Some(text)) => MetadataVersion::from_version_string(text, unstable)
            .map_err(FormatError::ReleaseVersion)?,
        (None, None) if unstable => MetadataVersion::LATEST_TESTING,
        (None, None) => MetadataVersion::LATEST_PRODUCTION,
    };
    if !unstable && !metadata_version.is_production() {
        return Err(FormatError::UnstableMetadataVersion(metadata_version));
    }
    let mut levels = Vec::new();
    for (name, _) in requested
        .iter()
        .filter(|(n, _)| n != METADATA_VERSION_FEATURE_NAME)
    {
        if Feature::from_name(name).is_none() {
            return Err(FeatureError::UnknownFeature(name.clone()).into());
        }
    }
    for feature in Feature::ALL {
        let explicit = requested
            .iter()
            .find(|(n, _)| n == feature.name())
            .map(|(_, l)| *l);
        let level = match (feature, explicit) {
            // Formatter.effectiveKRaftFeatureLevel: 1 for a dynamic quorum, 0 for a static one;
            // an explicit level must agree. No metadata.version check: kraft.version 1 has no
            // dependency (KRaftVersion.dependencies is empty).
            (Feature::KraftVersion, Some(0)) if dynamic_quorum => {
                return Err(FormatError::KRaftVersionZeroWithDynamicQuorum)
            }
            (Feature::KraftVersion, Some(level)) if level != 0 && !dynamic_quorum => {
                return Err(FormatError::KRaftVersionNeedsDynamicQuorum(level))
            }
            (Feature::KraftVersion, Some(level)) => level,
            (Feature::KraftVersion, None) => i16::from(dynamic_quorum),
            (_, Some(level)) => level,
            (_, None) => feature.default_level(metadata_version),
        };
        feature.validate_level(level, unstable, metadata_version)?;
        levels.push((feature, level));
    }
    levels.sort_by_key(|(f, _)| f.name());
    Ok((metadata_version, levels))
}

/// The voter `--standalone` makes (`StorageTool.createStandaloneDynamicVoters`): this node at
/// its first advertised controller endpoint (`KafkaConfig.effectiveAdvertisedControllerListeners`:
/// the `advertised.listeners` entry of the first `controller.listener.names` listener, else its
/// `listeners` entry with `0.0.0.0` read as no host; no host is `localhost`), with a fresh
/// directory id, written as `id@host:port:directoryId` and parsed back as Java does: so an IPv6
/// controller listener fails there, as in Kafka (the host is not bracketed).
fn standalone_voter(opts: &FormatOptions) -> Result<Vec<DynamicVoter>, FormatError> {
    let listener = opts.config.advertised_controller_listener();
    let host = if listener.host == "0.0.0.0" {
        ""
    } else {
        listener.host.as_str()
    };
    let port = listener.port;
    let host = if host.is_empty() { "localhost" } else { host };
    let text = format!(
        "{}@{host}:{port}:{}",
        opts.config.node_id,
        kafka_uuid_to_string(random_directory_id(&[]))
    );
    parse_dynamic_voters(&text).map_err(FormatError::InitialControllers)
}

/// The initial voter set and whether the quorum is dynamic (`StorageTool.runFormatCommand`):
/// refuses `--standalone`/`--initial-controllers` beside `controller.quorum.voters`, and a
/// configuration without `controller.quorum.voters` that names none of the three options.
fn initial_voters(opts: &FormatOptions) -> Result<(Option<Vec<DynamicVoter>>, bool), FormatError> {
    let dynamic = opts.config.quorum_voters.is_empty();
    let voters = match (&opts.quorum, dynamic) {
        (QuorumOption::Standalone | QuorumOption::InitialControllers(_), false) => {
            return Err(FormatError::StaticVotersWithDynamicOption)
        }
        (QuorumOption::None, true) => return Err(FormatError::DynamicQuorumOptionMissing),
        (QuorumOption::InitialControllers(list), true) => {
            Some(parse_dynamic_voters(list).map_err(FormatError::InitialControllers)?)
        }
        (QuorumOption::Standalone, true) => Some(standalone_voter(opts)?),
        (QuorumOption::NoInitialControllers | QuorumOption::None, _) => None,
    };
    if let Some(reserved) = voters
        .iter()
        .flatten()
        .find(|v| is_reserved_directory_id(v.directory_id))
    {
        return Err(FormatError::ReservedDirectoryId {
            node_id: reserved.node_id,
            directory_id: kafka_uuid_to_string(reserved.directory_id),
        });
    }
    Ok((voters, dynamic))
}

/// Formats every directory of the node (`Formatter.run`/`doFormat`).
///
/// Steps: validate the cluster id; settle the quorum ([`initial_voters`]: static, or dynamic
/// with or without an initial voter set); compute the metadata.version (`--release-version`,
/// `--feature metadata.version=N`, else latest production, or latest testing with
/// `unstable.feature.versions.enable`) and the other feature levels (defaults of that version
/// unless overridden; `kraft.version` 1 for a dynamic quorum, else 0); add the `--add-scram`
/// credentials after the FeatureLevelRecords (refused before 3.5-IV2); read every directory's
/// `meta.properties` and check it against this cluster and node; refuse if one is formatted
/// unless `ignore_formatted`; then, per unformatted directory in path order, create it and
/// write the bootstrap records followed by `meta.properties` (meta.properties last, so a crash
/// leaves the directory unformatted). The metadata directory's `directory.id` is this node's
/// in the initial voter set, if it is in it; every other one is fresh. The bootstrap records
/// go where the `kafka-storage format` of the metadata.version's release puts them
/// ([`BootstrapLayout::for_release`]): up to 4.3, `bootstrap.checkpoint` in every directory
/// plus, with an initial voter set, the quorum-only bootstrap snapshot in the metadata
/// directory; from 4.4 (KIP-1170), only the metadata directory's bootstrap snapshot
/// `__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`, with the quorum records
/// of kraft.version 1.
///
/// Unlike Java, which skips directories whose meta.properties it cannot read, an unreadable or
/// invalid meta.properties is an error; an initial controller with a reserved directory id,
/// which Java writes, is refused.
pub fn format(opts: &FormatOptions) -> Result<FormatReport, FormatError> {
    validate_cluster_id(&opts.cluster_id)?;
    let (voters, dynamic_quorum) = initial_voters(opts)?;
    let (metadata_version, feature_levels) = effective_levels(opts, dynamic_quorum)?;
    let mut bootstrap =
        BootstrapMetadata::from_versions(metadata_version, &feature_levels, "format command");
    bootstrap
        .records
        .extend(scram_records(&opts.add_scram, metadata_version)?);
    let kraft_version = feature_levels
        .iter()
        .find(|(f, _)| *f == Feature::KraftVersion)
        .map_or(0, |(_, level)| *level);
    let listener = &opts.config.controller_listener_names[0];
    let voter_set = match &voters {
        Some(voters) => Some(bootstrap_voters(voters, listener)?),
        None => None,
    };
    let layout = BootstrapLayout::for_release(metadata_version);
    let quorum = match (layout, kraft_version, voter_set) {
        (_, 0, _) => None,
        (BootstrapLayout::LegacyFile, _, None) => None,
        (_, kraft_version, voters) => Some(BootstrapQuorum {
            kraft_version,
            voters,
        }),
    };
    let local_voter = voters
        .iter()
        .flatten()
        .find(|v| v.node_id == opts.config.node_id);

    let mut dirs = opts.config.all_log_dirs();
    dirs.sort_by(|a, b| a.to_string_lossy().cmp(&b.to_string_lossy()));
    let mut existing: Vec<(PathBuf, MetaProperties)> = Vec::new();
    for dir in &dirs {
        if let Some(meta) = MetaProperties::read(dir).map_err(LoadError::from)? {
            existing.push((dir.clone(), meta));
        }
    }
    verify_ensemble(&existing, Some(&opts.cluster_id), Some(opts.config.node_id))?;
    if let (Some((dir, _)), false) = (existing.first(), opts.ignore_formatted) {
        return Err(FormatError::AlreadyFormatted { dir: dir.clone() });
    }

    let mut taken: Vec<Uuid> = existing
        .iter()
        .filter_map(|(_, m)| m.directory_id)
        .collect();
    let metadata_dir_id = match local_voter {
        Some(voter)
            if !existing
                .iter()
                .any(|(d, _)| *d == opts.config.metadata_log_dir) =>
        {
            if let Some((other, _)) = existing
                .iter()
                .find(|(_, m)| m.directory_id == Some(voter.directory_id))
            {
                return Err(LoadError::DuplicateDirectoryId {
                    id: kafka_uuid_to_string(voter.directory_id),
                    first: other.clone(),
                    second: opts.config.metadata_log_dir.clone(),
                }
                .into());
            }
            taken.push(voter.directory_id);
            Some(voter.directory_id)
        }
        _ => None,
    };
    let mut formatted = Vec::new();
    for dir in dirs
        .iter()
        .filter(|d| !existing.iter().any(|(e, _)| e == *d))
    {
        let kind = match (*dir == opts.config.metadata_log_dir, &voters, local_voter) {
            (false, _, _) => DirectoryKind::Data,
            (true, None, _) => DirectoryKind::Metadata,
            (true, Some(_), Some(_)) => DirectoryKind::DynamicMetadataVoter,
            (true, Some(_), None) => DirectoryKind::DynamicMetadataNonVoter,
        };
        let directory_id = match (kind, metadata_dir_id) {
            (DirectoryKind::DynamicMetadataVoter, Some(id)) => id,
            _ => {
                let id = random_directory_id(&taken);
                taken.push(id);
                id
            }
        };
        fs::create_dir_all(dir).map_err(|source| FormatError::CreateDir {
            path: dir.clone(),
            source,
        })?;
        let metadata_dir = kind != DirectoryKind::Data;
        match (layout, metadata_dir) {
            (BootstrapLayout::LegacyFile, _) => {
                bootstrap.write_dir(dir)?;
                // Formatter.writeDynamicQuorumSnapshot: only with an initial voter set.
                if metadata_dir && voters.is_some() {
                    write_bootstrap_snapshot(dir, quorum.as_ref(), &[])?;
                }
            }
            (BootstrapLayout::ZeroCheckpoint, true) => {
                bootstrap.write_snapshot(dir, quorum.as_ref())?
            }
            (BootstrapLayout::ZeroCheckpoint, false) => {}
        }
        MetaProperties::v1(&opts.cluster_id, opts.config.node_id, directory_id).write(dir)?;
        formatted.push(FormattedDirectory {
            path: dir.clone(),
            kind,
            directory_id,
        });
    }
    Ok(FormatReport {
        metadata_version,
        feature_levels,
        formatted,
        already_formatted: existing.into_iter().map(|(dir, _)| dir).collect(),
        quorum,
    })
}

/// Runs `kraftwerk format` and prints what `kafka-storage format` prints.
pub fn run_format(args: &FormatArgs) -> anyhow::Result<()> {
    let options = args.to_options()?;
    // `format` has no log subscriber: the configuration's warnings go to stderr, so a typo in
    // the file shows before the node is ever started.
    for warning in options.config.warnings() {
        eprintln!("WARN {warning}");
    }
    let report = format(&options)?;
    if report.formatted.is_empty() {
        println!("All of the log directories are already formatted.");
    }
    for dir in &report.formatted {
        println!(
            "Formatting {} {} with metadata.version {}.",
            dir.kind.description(),
            dir.path.display(),
            report.metadata_version
        );
    }
    Ok(())
}

#[cfg(test)]
mod dynamic_tests;
#[cfg(test)]
mod java_vectors;
#[cfg(test)]
mod release_tests;

#[cfg(test)]
mod tests;
