//! `kraftwerk format`: prepare a controller's directories, as `kafka-storage format` does.
//!
//! Follows `org.apache.kafka.metadata.storage.Formatter` and `kafka.tools.StorageTool` of Kafka
//! 4.1 for a controller with a static quorum (`controller.quorum.voters`): every directory of
//! the node (`log.dirs` plus `metadata.log.dir`) gets a `bootstrap.checkpoint` and then a v1
//! `meta.properties` (`node.id`, `cluster.id`, a fresh `directory.id`). The dynamic-quorum
//! options of `kafka-storage` (`--standalone`, `--initial-controllers`,
//! `--no-initial-controllers`) and `--add-scram` are not supported yet.
//!
//! The start-up side, which accepts directories formatted by Kafka's own tool as well as ours,
//! is `kraftwerk_log::formatted`.

use std::fs;
use std::io;
use std::path::PathBuf;

use kraftwerk_log::bootstrap::{BootstrapError, BootstrapLayout, BootstrapMetadata};
use kraftwerk_log::formatted::{verify_ensemble, LoadError};
use kraftwerk_log::meta_properties::{MetaProperties, MetaPropertiesError};
use kraftwerk_protocol::kafka_uuid::{
    kafka_uuid_from_string, kafka_uuid_to_string, random_directory_id,
};
use kraftwerk_records::metadata_version::{
    Feature, FeatureError, MetadataVersion, MetadataVersionError, METADATA_VERSION_FEATURE_NAME,
};
use thiserror::Error;
use uuid::Uuid;

use crate::config::{ConfigError, NodeConfig};

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
}

impl FormatArgs {
    /// Loads `--config` and pairs it with the other arguments.
    ///
    /// Errors: [`FormatError::Config`] when the file is missing or invalid.
    pub fn to_options(&self) -> Result<FormatOptions, FormatError> {
        Ok(FormatOptions {
            config: NodeConfig::load(&self.config)?,
            cluster_id: self.cluster_id.clone(),
            release_version: self.release_version.clone(),
            features: self.features.clone(),
            ignore_formatted: self.ignore_formatted,
        })
    }
}

/// Which role a formatted directory plays (`Formatter.DirectoryType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirectoryKind {
    /// `metadata.log.dir`.
    Metadata,
    /// Another `log.dirs` entry.
    Data,
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
    /// The configuration has no static voter set.
    #[error(
        "controller.quorum.voters is not set: kraftwerk formats static quorums only (the dynamic \
         quorum options --standalone, --initial-controllers and --no-initial-controllers of \
         kafka-storage are not supported yet)"
    )]
    DynamicQuorumUnsupported,
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
    /// `kraft.version` above 0 needs a dynamic quorum.
    #[error(
        "Cannot set kraft.version to {0} unless KIP-853 configuration is present. Try removing \
         the --feature flag for kraft.version."
    )]
    KRaftVersionNeedsDynamicQuorum(i16),
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
            // Static quorum: kraft.version stays 0 (Formatter.effectiveKRaftFeatureLevel).
            (Feature::KraftVersion, Some(level)) if level != 0 => {
                return Err(FormatError::KRaftVersionNeedsDynamicQuorum(level))
            }
            (Feature::KraftVersion, _) => 0,
            (_, Some(level)) => level,
            (_, None) => feature.default_level(metadata_version),
        };
        feature.validate_level(level, unstable, metadata_version)?;
        levels.push((feature, level));
    }
    levels.sort_by_key(|(f, _)| f.name());
    Ok((metadata_version, levels))
}

/// Formats every directory of the node (`Formatter.run`/`doFormat`).
///
/// Steps: validate the cluster id and the static voter set; compute the metadata.version
/// (`--release-version`, `--feature metadata.version=N`, else latest production, or latest
/// testing with `unstable.feature.versions.enable`) and the other feature levels (defaults of
/// that version unless overridden; `kraft.version` 0); read every directory's
/// `meta.properties` and check it against this cluster and node; refuse if one is formatted
/// unless `ignore_formatted`; then, per unformatted directory in path order, create it and
/// write the bootstrap records followed by `meta.properties` with a fresh `directory.id`
/// (meta.properties last, so a crash leaves the directory unformatted). The bootstrap records
/// go where the `kafka-storage` of the metadata.version's release puts them
/// ([`BootstrapLayout::for_release`]): up to 4.3, `bootstrap.checkpoint` in every directory;
/// from 4.4 (KIP-1170), only the metadata log directory's bootstrap snapshot
/// `__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`.
///
/// Unlike Java, which skips directories whose meta.properties it cannot read, an unreadable or
/// invalid meta.properties is an error.
pub fn format(opts: &FormatOptions) -> Result<FormatReport, FormatError> {
    validate_cluster_id(&opts.cluster_id)?;
    if opts.config.quorum_voters.is_empty() {
        return Err(FormatError::DynamicQuorumUnsupported);
    }
    let (metadata_version, feature_levels) = effective_levels(opts)?;
    let bootstrap =
        BootstrapMetadata::from_versions(metadata_version, &feature_levels, "format command");

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
    let mut formatted = Vec::new();
    for dir in dirs
        .iter()
        .filter(|d| !existing.iter().any(|(e, _)| e == *d))
    {
        let kind = if *dir == opts.config.metadata_log_dir {
            DirectoryKind::Metadata
        } else {
            DirectoryKind::Data
        };
        let directory_id = random_directory_id(&taken);
        taken.push(directory_id);
        fs::create_dir_all(dir).map_err(|source| FormatError::CreateDir {
            path: dir.clone(),
            source,
        })?;
        match (BootstrapLayout::for_release(metadata_version), kind) {
            (BootstrapLayout::LegacyFile, _) => bootstrap.write_dir(dir)?,
            (BootstrapLayout::ZeroCheckpoint, DirectoryKind::Metadata) => {
                bootstrap.write_snapshot(dir)?
            }
            (BootstrapLayout::ZeroCheckpoint, DirectoryKind::Data) => {}
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
    })
}

/// Runs `kraftwerk format` and prints what `kafka-storage format` prints.
pub fn run_format(args: &FormatArgs) -> anyhow::Result<()> {
    let report = format(&args.to_options()?)?;
    if report.formatted.is_empty() {
        println!("All of the log directories are already formatted.");
    }
    for dir in &report.formatted {
        let kind = match dir.kind {
            DirectoryKind::Metadata => "metadata directory",
            DirectoryKind::Data => "data directory",
        };
        println!(
            "Formatting {kind} {} with metadata.version {}.",
            dir.path.display(),
            report.metadata_version
        );
    }
    Ok(())
}

#[cfg(test)]
mod release_tests;
#[cfg(test)]
mod tests;
