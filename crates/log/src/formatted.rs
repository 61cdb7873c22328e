//! Loading the directories `kraftwerk format` or `kafka-storage format` prepared
//! (`KafkaRaftServer.initializeLogDirs`, `MetaPropertiesEnsemble.verify`): what a node starts
//! from ([`FormattedDir`]) and why it cannot ([`LoadError`]).

use std::path::{Path, PathBuf};

use kraftwerk_protocol::constants::METADATA_PARTITION_DIR;
use kraftwerk_protocol::kafka_uuid::{
    is_reserved_directory_id, kafka_uuid_to_string, random_directory_id,
};
use thiserror::Error;
use uuid::Uuid;

use crate::bootstrap::{BootstrapError, BootstrapMetadata};
use crate::meta_properties::{MetaProperties, MetaPropertiesError, META_PROPERTIES_FILE};

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
    /// The bootstrap records of the metadata directory (the bootstrap snapshot `0-0` or
    /// `bootstrap.checkpoint`, or the latest production metadata.version when neither has
    /// them), and in `bootstrap.quorum` the dynamic quorum (KIP-853) that snapshot holds:
    /// kraft.version and the initial voter set (`None` for a static quorum, and for a Kafka
    /// 4.0 to 4.3 `--no-initial-controllers` directory, which has no snapshot).
    pub bootstrap: BootstrapMetadata,
}

/// `MetaPropertiesEnsemble.verify`: one cluster id, the expected node id, v1 files complete,
/// directory ids unique (reserved ids are already refused when reading).
pub fn verify_ensemble(
    dirs: &[(PathBuf, MetaProperties)],
    cluster_id: Option<&str>,
    mut node_id: Option<i32>,
) -> Result<(), LoadError> {
    let mut cluster_id: Option<String> = cluster_id.map(str::to_owned);
    let mut seen: Vec<(Uuid, &Path)> = Vec::new();
    for (dir, meta) in dirs {
        let path = dir.join(META_PROPERTIES_FILE);
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
/// formatted (`all_log_dirs` lists them, `metadata_log_dir` included), for one cluster and for
/// `node_id`, with distinct directory ids;
/// `__cluster_metadata-0` may exist only in the metadata directory. A directory without
/// `directory.id` (formatted by an old Kafka) gets a fresh one written back, as Java does.
/// Returns the metadata directory's identity and its bootstrap records.
pub fn load_formatted_node(
    metadata_log_dir: &Path,
    all_log_dirs: &[PathBuf],
    node_id: i32,
) -> Result<FormattedDir, LoadError> {
    load_dirs(metadata_log_dir, all_log_dirs, Some(node_id))
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
        let path = dir.join(META_PROPERTIES_FILE);
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
