//! `kraftwerk format`: prepare a controller's directories, as `kafka-storage format` does.
//!
//! Follows `org.apache.kafka.metadata.storage.Formatter` and `kafka.tools.StorageTool` of Kafka
//! 4.1 for a controller with a static quorum (`controller.quorum.voters`): every directory of
//! the node (`log.dirs` plus `metadata.log.dir`) gets a `bootstrap.checkpoint` and then a v1
//! `meta.properties` (`node.id`, `cluster.id`, a fresh `directory.id`). The dynamic-quorum
//! options of `kafka-storage` (`--standalone`, `--initial-controllers`,
//! `--no-initial-controllers`) and `--add-scram` are not supported yet.
//!
//! [`load_formatted_node`] and [`load_formatted_dir`] are the start-up side
//! (`KafkaRaftServer.initializeLogDirs`): they accept directories formatted by Kafka's own tool
//! as well as ours.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use kraftwerk_log::bootstrap::{BootstrapError, BootstrapMetadata};
use kraftwerk_log::meta_properties::{
    is_reserved_directory_id, kafka_uuid_from_string, kafka_uuid_to_string, random_directory_id,
    MetaProperties, MetaPropertiesError,
};
use kraftwerk_records::metadata_version::{
    Feature, FeatureError, MetadataVersion, MetadataVersionError, METADATA_VERSION_FEATURE_NAME,
};
use thiserror::Error;
use uuid::Uuid;

use crate::config::{ConfigError, NodeConfig};

/// Name of the metadata partition's directory (`__cluster_metadata-0`).
const METADATA_PARTITION_DIR: &str = "__cluster_metadata-0";

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

/// Why formatted directories cannot be used (`MetaPropertiesEnsemble.verify`,
/// `KafkaRaftServer.initializeLogDirs`).
#[derive(Debug, Error)]
pub enum LoadError {
    /// A directory has no `meta.properties`.
    #[error(
        "No `meta.properties` found in {dir} (have you run `kraftwerk format` or \
         `kafka-storage format` to format the directory?)",
        dir = dir.display()
    )]
    NotFormatted {
        /// The directory.
        dir: PathBuf,
    },
    /// A `meta.properties` cannot be read or is invalid.
    #[error(transparent)]
    MetaProperties(#[from] MetaPropertiesError),
    /// A `meta.properties` lacks `node.id` or `cluster.id` (a v0 file without them).
    #[error("Error: {key} not found in {path}", path = path.display())]
    MissingKey {
        /// The file.
        path: PathBuf,
        /// `node.id` or `cluster.id`.
        key: &'static str,
    },
    /// Directories carry different cluster ids, or not the one being formatted.
    #[error("Invalid cluster.id in: {path}. Expected {expected}, but read {found}", path = path.display())]
    ClusterIdMismatch {
        /// The file.
        path: PathBuf,
        /// The id of the first directory (or the one being formatted).
        expected: String,
        /// The id in this file.
        found: String,
    },
    /// A directory belongs to another node.
    #[error(
        "Stored node id {found} doesn't match previous node id {expected} in {path}. If you moved \
         your data, make sure your configured node id matches. If you intend to create a new \
         node, you should remove all data in your data directories.",
        path = path.display()
    )]
    NodeIdMismatch {
        /// The file.
        path: PathBuf,
        /// The configured `node.id`.
        expected: i32,
        /// The stored one.
        found: i32,
    },
    /// Two directories share a `directory.id`.
    #[error(
        "Duplicate directory ID {id} found. It was the ID of {first}, but also of {second}",
        first = first.display(),
        second = second.display()
    )]
    DuplicateDirectoryId {
        /// The id.
        id: String,
        /// One directory.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// `__cluster_metadata-0` exists outside `metadata.log.dir`.
    #[error(
        "Found unexpected metadata location in data directory `{found}` (the configured metadata \
         directory is {metadata_log_dir})",
        found = found.display(),
        metadata_log_dir = metadata_log_dir.display()
    )]
    MisplacedMetadataPartition {
        /// The stray directory.
        found: PathBuf,
        /// The configured metadata directory.
        metadata_log_dir: PathBuf,
    },
    /// `bootstrap.checkpoint` cannot be read.
    #[error(transparent)]
    Bootstrap(#[from] BootstrapError),
}

/// What a formatted node starts from.
#[derive(Clone, Debug, PartialEq)]
pub struct FormattedDir {
    /// `cluster.id`, as stored (Kafka's tool accepts any string, so it may not be a Uuid).
    pub cluster_id: String,
    /// `node.id`.
    pub node_id: i32,
    /// The metadata directory's `directory.id`: the node's Raft `ReplicaDirectoryId`.
    pub directory_id: Uuid,
    /// The bootstrap records of the metadata directory (`bootstrap.checkpoint`, or the latest
    /// production metadata.version when the file is absent).
    pub bootstrap: BootstrapMetadata,
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
        (None, Some(text)) => {
            MetadataVersion::from_version_string(text).map_err(FormatError::ReleaseVersion)?
        }
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
/// write `bootstrap.checkpoint` followed by `meta.properties` with a fresh `directory.id`
/// (meta.properties last, so a crash leaves the directory unformatted).
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
        bootstrap.write_dir(dir)?;
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

/// `MetaPropertiesEnsemble.verify`: one cluster id, the expected node id, v1 files complete,
/// directory ids unique (reserved ids are already refused when reading).
fn verify_ensemble(
    dirs: &[(PathBuf, MetaProperties)],
    cluster_id: Option<&str>,
    mut node_id: Option<i32>,
) -> Result<(), LoadError> {
    let mut cluster_id: Option<String> = cluster_id.map(str::to_owned);
    let mut seen: Vec<(Uuid, &Path)> = Vec::new();
    for (dir, meta) in dirs {
        let path = dir.join(kraftwerk_log::meta_properties::META_PROPERTIES_FILE);
        match (&meta.cluster_id, &cluster_id) {
            (Some(found), Some(expected)) if found != expected => {
                return Err(LoadError::ClusterIdMismatch {
                    path,
                    expected: expected.clone(),
                    found: found.clone(),
                })
            }
            (Some(found), None) => cluster_id = Some(found.clone()),
            _ => {}
        }
        match (meta.node_id, node_id) {
            (Some(found), Some(expected)) if found != expected => {
                return Err(LoadError::NodeIdMismatch {
                    path,
                    expected,
                    found,
                })
            }
            (Some(found), None) => node_id = Some(found),
            _ => {}
        }
        if let Some(id) = meta.directory_id {
            debug_assert!(!is_reserved_directory_id(id));
            if let Some((_, first)) = seen.iter().find(|(seen_id, _)| *seen_id == id) {
                return Err(LoadError::DuplicateDirectoryId {
                    id: kafka_uuid_to_string(id),
                    first: first.to_path_buf(),
                    second: dir.clone(),
                });
            }
            seen.push((id, dir));
        }
    }
    Ok(())
}

/// Loads and checks every directory of a configured node at start-up
/// (`KafkaRaftServer.initializeLogDirs`): all of `log.dirs` and `metadata.log.dir` must be
/// formatted, for one cluster and for `config.node_id`, with distinct directory ids;
/// `__cluster_metadata-0` may exist only in the metadata directory. A directory without
/// `directory.id` (formatted by an old Kafka) gets a fresh one written back, as Java does.
/// Returns the metadata directory's identity and its bootstrap records.
pub fn load_formatted_node(config: &NodeConfig) -> Result<FormattedDir, LoadError> {
    load_dirs(
        &config.metadata_log_dir,
        &config.all_log_dirs(),
        Some(config.node_id),
    )
}

/// Loads one formatted metadata log directory without a configuration: its `meta.properties`
/// (which must name a cluster and a node; a missing `directory.id` is generated and written
/// back) and its bootstrap records.
pub fn load_formatted_dir(metadata_log_dir: &Path) -> Result<FormattedDir, LoadError> {
    load_dirs(metadata_log_dir, &[metadata_log_dir.to_path_buf()], None)
}

fn load_dirs(
    metadata_log_dir: &Path,
    dirs: &[PathBuf],
    node_id: Option<i32>,
) -> Result<FormattedDir, LoadError> {
    let mut loaded: Vec<(PathBuf, MetaProperties)> = Vec::new();
    for dir in dirs {
        let meta = MetaProperties::read(dir)?
            .ok_or_else(|| LoadError::NotFormatted { dir: dir.clone() })?;
        let path = dir.join(kraftwerk_log::meta_properties::META_PROPERTIES_FILE);
        if meta.node_id.is_none() {
            return Err(LoadError::MissingKey {
                path,
                key: "node.id",
            });
        }
        if meta.cluster_id.is_none() {
            return Err(LoadError::MissingKey {
                path,
                key: "cluster.id",
            });
        }
        if dir.as_path() != metadata_log_dir && dir.join(METADATA_PARTITION_DIR).exists() {
            return Err(LoadError::MisplacedMetadataPartition {
                found: dir.join(METADATA_PARTITION_DIR),
                metadata_log_dir: metadata_log_dir.to_path_buf(),
            });
        }
        loaded.push((dir.clone(), meta));
    }
    verify_ensemble(&loaded, None, node_id)?;
    let mut taken: Vec<Uuid> = loaded.iter().filter_map(|(_, m)| m.directory_id).collect();
    for (dir, meta) in &mut loaded {
        if meta.directory_id.is_none() {
            let id = random_directory_id(&taken);
            taken.push(id);
            tracing::info!(
                "Rewriting {}/meta.properties with a new directory.id",
                dir.display()
            );
            meta.directory_id = Some(id);
            meta.write(dir)?;
        }
    }
    let (_, meta) = loaded
        .iter()
        .find(|(dir, _)| dir.as_path() == metadata_log_dir)
        .expect("the metadata log dir is among the loaded dirs");
    Ok(FormattedDir {
        cluster_id: meta.cluster_id.clone().expect("checked above"),
        node_id: meta.node_id.expect("checked above"),
        directory_id: meta.directory_id.expect("assigned above"),
        bootstrap: BootstrapMetadata::read_dir(metadata_log_dir)?,
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
mod tests {
    use super::*;
    use clap::Parser;
    use kraftwerk_log::bootstrap::BOOTSTRAP_FILE;
    use kraftwerk_log::meta_properties::{
        JavaProperties, MetaPropertiesVersion, META_PROPERTIES_FILE,
    };
    use kraftwerk_records::metadata::MetadataRecord;

    const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";

    struct Node {
        _root: tempfile::TempDir,
        meta: PathBuf,
        data: PathBuf,
        config_path: PathBuf,
    }

    /// A controller with a separate metadata dir and one data dir; `extra` is appended to
    /// the properties.
    fn node(extra: &str) -> Node {
        let root = tempfile::tempdir().unwrap();
        let meta = root.path().join("meta");
        let data = root.path().join("data");
        let config_path = root.path().join("controller.properties");
        fs::write(
            &config_path,
            format!(
                "process.roles=controller\nnode.id=1\n\
                 controller.quorum.voters=1@localhost:9093\n\
                 listeners=CONTROLLER://localhost:9093\ncontroller.listener.names=CONTROLLER\n\
                 log.dirs={}\nmetadata.log.dir={}\n{extra}",
                data.display(),
                meta.display()
            ),
        )
        .unwrap();
        Node {
            _root: root,
            meta,
            data,
            config_path,
        }
    }

    fn args(node: &Node, more: &[&str]) -> FormatArgs {
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            format: FormatArgs,
        }
        let config = node.config_path.to_str().unwrap();
        let mut argv = vec!["kraftwerk", "-c", config, "-t", CLUSTER_ID];
        argv.extend_from_slice(more);
        Cli::try_parse_from(argv).unwrap().format
    }

    fn run(node: &Node, more: &[&str]) -> Result<FormatReport, FormatError> {
        format(&args(node, more).to_options()?)
    }

    fn read_meta(dir: &Path) -> MetaProperties {
        MetaProperties::read(dir).unwrap().unwrap()
    }

    #[test]
    fn formats_metadata_and_data_dirs() {
        let node = node("");
        let report = run(&node, &[]).unwrap();
        assert_eq!(report.metadata_version, MetadataVersion::LATEST_PRODUCTION);
        let kinds: Vec<(&Path, DirectoryKind)> = report
            .formatted
            .iter()
            .map(|d| (d.path.as_path(), d.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (node.data.as_path(), DirectoryKind::Data),
                (node.meta.as_path(), DirectoryKind::Metadata)
            ]
        );
        for dir in &report.formatted {
            let meta = read_meta(&dir.path);
            assert_eq!(meta, MetaProperties::v1(CLUSTER_ID, 1, dir.directory_id));
            assert!(dir.path.join(BOOTSTRAP_FILE).exists());
        }
        assert_ne!(
            report.formatted[0].directory_id,
            report.formatted[1].directory_id
        );
        let loaded = load_formatted_node(&NodeConfig::load(&node.config_path).unwrap()).unwrap();
        assert_eq!(loaded.cluster_id, CLUSTER_ID);
        assert_eq!(loaded.node_id, 1);
        assert_eq!(loaded.directory_id, report.formatted[1].directory_id);
        assert_eq!(loaded.bootstrap.metadata_version, MetadataVersion::V4_1_IV1);
        assert_eq!(loaded.bootstrap.feature_level("group.version"), 1);
        assert!(
            !node.meta.join("__cluster_metadata-0").exists(),
            "static quorum: no bootstrap snapshot"
        );
    }

    #[test]
    fn refuses_formatted_dirs_unless_ignore_formatted() {
        let node = node("");
        let first = run(&node, &[]).unwrap();
        let err = run(&node, &[]).unwrap_err();
        assert!(
            matches!(&err, FormatError::AlreadyFormatted { dir } if *dir == node.data),
            "{err}"
        );
        assert!(err.to_string().contains("--ignore-formatted"), "{err}");
        let again = run(&node, &["--ignore-formatted"]).unwrap();
        assert!(again.formatted.is_empty());
        assert_eq!(
            again.already_formatted,
            vec![node.data.clone(), node.meta.clone()]
        );
        // Nothing was rewritten.
        assert_eq!(
            read_meta(&node.meta).directory_id,
            Some(first.formatted[1].directory_id)
        );
        // A new, empty directory is formatted alongside the existing ones.
        fs::remove_dir_all(&node.data).unwrap();
        let partial = run(&node, &["-g"]).unwrap();
        assert_eq!(partial.formatted.len(), 1);
        assert_eq!(partial.formatted[0].path, node.data);
        assert_ne!(
            partial.formatted[0].directory_id,
            first.formatted[1].directory_id
        );
    }

    #[test]
    fn existing_dirs_must_match_cluster_and_node() {
        let node = node("");
        fs::create_dir_all(&node.meta).unwrap();
        MetaProperties::v1("AAAAAAAAAAAAAAAAAAAAAA", 1, random_directory_id(&[]))
            .write(&node.meta)
            .unwrap();
        let err = run(&node, &["-g"]).unwrap_err();
        assert!(err.to_string().contains("Invalid cluster.id"), "{err}");
        MetaProperties::v1(CLUSTER_ID, 2, random_directory_id(&[]))
            .write(&node.meta)
            .unwrap();
        let err = run(&node, &["-g"]).unwrap_err();
        assert!(err.to_string().contains("Stored node id 2"), "{err}");
        fs::write(
            node.meta.join(META_PROPERTIES_FILE),
            "version=1\nnode.id=x\n",
        )
        .unwrap();
        let err = run(&node, &["-g"]).unwrap_err();
        assert!(err.to_string().contains("node.id"), "{err}");
        assert!(!node.data.exists(), "nothing is written when a check fails");
    }

    #[test]
    fn cluster_id_must_be_a_kafka_uuid() {
        let node = node("");
        for bad in [
            "not a uuid!",
            "MkU3OEVBNTcwNTJENDM2Q",
            "AAAAAAAAAAAAAAAAAAAAAR",
            "MkU3OEVBNTcwNTJENDM2Qg==",
        ] {
            let mut a = args(&node, &[]);
            a.cluster_id = bad.to_owned();
            let err = format(&a.to_options().unwrap()).unwrap_err();
            assert!(
                matches!(err, FormatError::InvalidClusterId { .. }),
                "{bad}: {err}"
            );
            assert!(err.to_string().contains(bad), "{err}");
        }
        assert!(!node.meta.exists());
    }

    #[test]
    fn release_version_and_features_follow_kafka_storage() {
        let levels = |report: &FormatReport| -> Vec<(String, i16)> {
            report
                .feature_levels
                .iter()
                .map(|(f, l)| (f.name().to_owned(), *l))
                .collect()
        };
        let node1 = node("");
        let report = run(&node1, &["--release-version", "3.9"]).unwrap();
        assert_eq!(report.metadata_version, MetadataVersion::V3_9_IV0);
        assert!(
            levels(&report).iter().all(|(_, l)| *l == 0),
            "{:?}",
            levels(&report)
        );
        let b = BootstrapMetadata::read_dir(&node1.meta).unwrap();
        assert_eq!(b.records.len(), 1);

        let node2 = node("");
        let report = run(
            &node2,
            &[
                "-r",
                "4.0",
                "-f",
                "group.version=0",
                "--feature",
                "transaction.version=1",
            ],
        )
        .unwrap();
        assert_eq!(report.metadata_version, MetadataVersion::V4_0_IV3);
        let b = BootstrapMetadata::read_dir(&node2.meta).unwrap();
        assert_eq!(b.feature_level("group.version"), 0);
        assert_eq!(b.feature_level("transaction.version"), 1);

        let node3 = node("");
        let report = run(&node3, &["-f", "metadata.version=23"]).unwrap();
        assert_eq!(report.metadata_version, MetadataVersion::V4_0_IV1);

        let cases: &[(&[&str], &str)] = &[
            (&["-r", "4.2"], "Version 4.2 is not a valid version"),
            (
                &["-r", "4.2-IV0"],
                "metadata.version 4.2-IV0 is not yet stable.",
            ),
            (&["-r", "3.2"], "minimum version is 3.3-IV3"),
            (&["-r", "4.4"], "newer than this controller supports"),
            (
                &["-r", "4.1", "-f", "metadata.version=27"],
                "avoid ambiguity",
            ),
            (&["-f", "kraft.version=1"], "KIP-853"),
            (
                &["-f", "bogus.version=1"],
                "Unsupported feature: bogus.version",
            ),
            (&["-f", "group.version"], "equals sign not found"),
            (&["-f", "group.version=x"], "unable to parse x as a short"),
            (&["-f", "group.version=2"], "group.version"),
            (&["-f", "streams.version=1"], "streams.version"),
            (
                &["-r", "4.0-IV0", "-f", "eligible.leader.replicas.version=1"],
                "depends on metadata.version",
            ),
        ];
        for (more, expected) in cases {
            let node = node("");
            let err = run(&node, more).unwrap_err();
            assert!(err.to_string().contains(expected), "{more:?}: {err}");
            assert!(!node.meta.exists(), "{more:?} wrote something");
        }
    }

    #[test]
    fn unstable_versions_need_the_config_switch() {
        let node = node("unstable.feature.versions.enable=true\n");
        let report = run(&node, &[]).unwrap();
        assert_eq!(report.metadata_version, MetadataVersion::LATEST_TESTING);
        let b = BootstrapMetadata::read_dir(&node.meta).unwrap();
        assert_eq!(b.feature_level("share.version"), 1);
        assert_eq!(b.feature_level("streams.version"), 1);
    }

    #[test]
    fn dynamic_quorum_configs_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("c.properties");
        fs::write(
            &path,
            format!(
                "process.roles=controller\nnode.id=1\ncontroller.quorum.bootstrap.servers=localhost:9093\n\
                 listeners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\nlog.dirs={}\n",
                root.path().join("d").display()
            ),
        )
        .unwrap();
        let a = FormatArgs {
            config: path,
            cluster_id: CLUSTER_ID.into(),
            release_version: None,
            features: vec![],
            ignore_formatted: false,
        };
        let err = format(&a.to_options().unwrap()).unwrap_err();
        assert!(
            matches!(err, FormatError::DynamicQuorumUnsupported),
            "{err}"
        );
    }

    #[test]
    fn load_reports_unformatted_and_inconsistent_dirs() {
        let node = node("");
        let config = NodeConfig::load(&node.config_path).unwrap();
        let err = load_formatted_node(&config).unwrap_err();
        assert!(matches!(&err, LoadError::NotFormatted { .. }), "{err}");
        assert!(err.to_string().contains("format"), "{err}");
        run(&node, &[]).unwrap();

        // A data dir of another cluster.
        let data_meta = read_meta(&node.data);
        let foreign = MetaProperties {
            cluster_id: Some("AAAAAAAAAAAAAAAAAAAAAA".into()),
            ..data_meta.clone()
        };
        foreign.write(&node.data).unwrap();
        let err = load_formatted_node(&config).unwrap_err();
        assert!(matches!(err, LoadError::ClusterIdMismatch { .. }), "{err}");

        // Both dirs of another node.
        for dir in [&node.data, &node.meta] {
            let m = read_meta(dir);
            MetaProperties {
                node_id: Some(7),
                cluster_id: Some(CLUSTER_ID.into()),
                ..m
            }
            .write(dir)
            .unwrap();
        }
        let err = load_formatted_node(&config).unwrap_err();
        assert!(
            err.to_string()
                .contains("Stored node id 7 doesn't match previous node id 1"),
            "{err}"
        );
        assert_eq!(load_formatted_dir(&node.meta).unwrap().node_id, 7);

        // Duplicate directory ids.
        let meta_id = read_meta(&node.meta).directory_id;
        for dir in [&node.data, &node.meta] {
            MetaProperties::v1(CLUSTER_ID, 1, meta_id.unwrap())
                .write(dir)
                .unwrap();
        }
        let err = load_formatted_node(&config).unwrap_err();
        assert!(
            matches!(err, LoadError::DuplicateDirectoryId { .. }),
            "{err}"
        );

        // The metadata partition outside metadata.log.dir.
        MetaProperties::v1(CLUSTER_ID, 1, random_directory_id(&[meta_id.unwrap()]))
            .write(&node.data)
            .unwrap();
        fs::create_dir(node.data.join("__cluster_metadata-0")).unwrap();
        let err = load_formatted_node(&config).unwrap_err();
        assert!(
            matches!(err, LoadError::MisplacedMetadataPartition { .. }),
            "{err}"
        );
        fs::remove_dir(node.data.join("__cluster_metadata-0")).unwrap();
        assert!(load_formatted_node(&config).is_ok());
    }

    #[test]
    fn load_assigns_missing_directory_ids_like_kafka() {
        let node = node("");
        run(&node, &[]).unwrap();
        // An old-style v1 file without directory.id, and a v0 file with broker.id.
        fs::write(
            node.meta.join(META_PROPERTIES_FILE),
            format!("version=1\nnode.id=1\ncluster.id={CLUSTER_ID}\n"),
        )
        .unwrap();
        fs::write(
            node.data.join(META_PROPERTIES_FILE),
            format!("broker.id=1\ncluster.id={CLUSTER_ID}\n"),
        )
        .unwrap();
        let config = NodeConfig::load(&node.config_path).unwrap();
        let loaded = load_formatted_node(&config).unwrap();
        assert_eq!(
            read_meta(&node.meta).directory_id,
            Some(loaded.directory_id)
        );
        let data = read_meta(&node.data);
        assert!(data.directory_id.is_some() && data.directory_id != Some(loaded.directory_id));
        assert_eq!(
            data.version,
            MetaPropertiesVersion::V0,
            "the version is kept on rewrite"
        );
        // A v0 file without node id is rejected.
        fs::write(
            node.data.join(META_PROPERTIES_FILE),
            format!("cluster.id={CLUSTER_ID}\n"),
        )
        .unwrap();
        let err = load_formatted_node(&config).unwrap_err();
        assert!(err.to_string().contains("node.id not found"), "{err}");
    }

    #[test]
    fn random_uuids_are_valid_cluster_ids() {
        let ids: Vec<String> = (0..500).map(|_| random_uuid()).collect();
        for id in &ids {
            validate_cluster_id(id).unwrap();
            assert!(!id.starts_with('-'));
        }
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len());
    }

    // ---- Cross-checks with Kafka's own Java classes. Run with
    // `cargo test -p kraftwerk cli::format -- --ignored` on a machine with Java 17 and the
    // Kafka 4.1.2 jars in $KAFKA_LIBS (default /tmp/kfetch/libs).

    fn kafka_classpath() -> String {
        let libs = std::env::var("KAFKA_LIBS").unwrap_or_else(|_| "/tmp/kfetch/libs".to_owned());
        assert!(
            Path::new(&libs).is_dir(),
            "Kafka jars not found in {libs}; set KAFKA_LIBS"
        );
        format!("{libs}/*")
    }

    /// Our own Java program: loads directories with Kafka's MetaPropertiesEnsemble (the checks
    /// a Kafka node runs at start-up) and BootstrapDirectory, and prints what it found.
    const JAVA_CHECK: &str = r#"
import java.util.*;
import org.apache.kafka.metadata.properties.*;
import org.apache.kafka.metadata.bootstrap.*;
import org.apache.kafka.server.common.ApiMessageAndVersion;
public class CheckFormatted {
    public static void main(String[] args) throws Exception {
        String metadataDir = args[0];
        int nodeId = Integer.parseInt(args[1]);
        MetaPropertiesEnsemble.Loader loader = new MetaPropertiesEnsemble.Loader().addMetadataLogDir(metadataDir);
        loader.addLogDirs(Arrays.asList(args).subList(2, args.length));
        MetaPropertiesEnsemble ensemble = loader.load();
        ensemble.verify(Optional.empty(), OptionalInt.of(nodeId), EnumSet.of(
            MetaPropertiesEnsemble.VerificationFlag.REQUIRE_AT_LEAST_ONE_VALID,
            MetaPropertiesEnsemble.VerificationFlag.REQUIRE_METADATA_LOG_DIR));
        if (!ensemble.errorLogDirs().isEmpty() || !ensemble.emptyLogDirs().isEmpty()) throw new RuntimeException(ensemble.toString());
        System.out.println("cluster.id=" + ensemble.clusterId().get());
        System.out.println("node.id=" + ensemble.nodeId().getAsInt());
        for (Map.Entry<String, MetaProperties> e : ensemble.logDirProps().entrySet())
            System.out.println("directory.id " + e.getKey() + "=" + e.getValue().directoryId().get());
        BootstrapMetadata bootstrap = new BootstrapDirectory(metadataDir).read();
        System.out.println("metadata.version=" + bootstrap.metadataVersion());
        for (ApiMessageAndVersion r : bootstrap.records()) System.out.println("record " + r);
    }
}
"#;

    fn java(args: &[&str]) -> String {
        let out = std::process::Command::new("java")
            .args(args)
            .output()
            .expect("java on PATH");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "java {args:?} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    #[test]
    #[ignore = "needs Java 17 and the Kafka 4.1.2 jars"]
    fn kafka_reads_our_formatted_dirs() {
        let cp = kafka_classpath();
        let node = node("");
        let report = run(&node, &[]).unwrap();
        let program = node._root.path().join("CheckFormatted.java");
        fs::write(&program, JAVA_CHECK).unwrap();
        let meta = node.meta.to_str().unwrap();
        let out = java(&[
            "-cp",
            &cp,
            program.to_str().unwrap(),
            meta,
            "1",
            node.data.to_str().unwrap(),
        ]);
        assert!(out.contains(&format!("cluster.id={CLUSTER_ID}\n")), "{out}");
        assert!(out.contains("node.id=1\n"), "{out}");
        for dir in &report.formatted {
            let line = format!(
                "directory.id {}={}\n",
                dir.path.display(),
                kafka_uuid_to_string(dir.directory_id)
            );
            assert!(out.contains(&line), "{line} not in {out}");
        }
        assert!(out.contains("metadata.version=4.1-IV1\n"), "{out}");
        let records: Vec<&str> = out.lines().filter(|l| l.starts_with("record ")).collect();
        assert_eq!(records.len(), 4, "{out}");
        assert!(
            records[0].contains("name='metadata.version', featureLevel=27"),
            "{out}"
        );
        assert!(
            records[1].contains("name='eligible.leader.replicas.version', featureLevel=1"),
            "{out}"
        );
        assert!(
            records[2].contains("name='group.version', featureLevel=1"),
            "{out}"
        );
        assert!(
            records[3].contains("name='transaction.version', featureLevel=2"),
            "{out}"
        );
    }

    #[test]
    #[ignore = "needs Java 17 and the Kafka 4.1.2 jars"]
    fn we_read_kafka_formatted_dirs_and_match_its_bytes() {
        let cp = kafka_classpath();
        let node = node("");
        let config = node.config_path.to_str().unwrap();
        for release in ["4.1", "3.3", "4.0-IV1"] {
            let _ = fs::remove_dir_all(&node.meta);
            let _ = fs::remove_dir_all(&node.data);
            java(&[
                "-cp",
                &cp,
                "kafka.tools.StorageTool",
                "format",
                "-t",
                CLUSTER_ID,
                "-c",
                config,
                "-r",
                release,
            ]);
            let config = NodeConfig::load(&node.config_path).unwrap();
            let loaded = load_formatted_node(&config).unwrap();
            assert_eq!(
                (loaded.cluster_id.as_str(), loaded.node_id),
                (CLUSTER_ID, 1)
            );
            let mv = MetadataVersion::from_version_string(release).unwrap();
            assert_eq!(loaded.bootstrap.metadata_version, mv);

            // bootstrap.checkpoint: our bytes for the same release equal Kafka's, timestamps aside.
            let kafka_bytes = fs::read(node.meta.join(BOOTSTRAP_FILE)).unwrap();
            let stamps: Vec<i64> = kraftwerk_records::batch::batches(&kafka_bytes)
                .map(|b| b.unwrap().0.base_timestamp)
                .collect();
            let opts = FormatOptions {
                config: config.clone(),
                cluster_id: CLUSTER_ID.into(),
                release_version: Some(release.into()),
                features: vec![],
                ignore_formatted: false,
            };
            let (mv, levels) = effective_levels(&opts).unwrap();
            let ours = BootstrapMetadata::from_versions(mv, &levels, "format command")
                .encode_checkpoint(stamps[0], stamps[1], stamps[2])
                .unwrap();
            assert_eq!(ours, kafka_bytes, "bootstrap.checkpoint for {release}");

            // meta.properties: same text apart from directory.id and the date line.
            let kafka_text = fs::read_to_string(node.meta.join(META_PROPERTIES_FILE)).unwrap();
            let kafka_props = JavaProperties::parse(kafka_text.as_bytes()).unwrap();
            let ours = MetaProperties::v1(CLUSTER_ID, 1, loaded.directory_id).to_properties();
            let kafka_keys: Vec<(&str, &str)> = kafka_props.iter().collect();
            let our_keys: Vec<(&str, &str)> = ours.iter().collect();
            assert_eq!(our_keys, kafka_keys);
            assert!(kafka_text.starts_with("#\n#"), "{kafka_text}");
            if let Some(MetadataRecord::FeatureLevel(f)) =
                loaded.bootstrap.records.first().map(|r| &r.record)
            {
                assert_eq!(f.name, "metadata.version");
            }
        }
    }
}
