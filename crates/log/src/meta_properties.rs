//! `meta.properties`: the per-directory identity file `kafka-storage format` writes, read and
//! written exactly as Kafka does.
//!
//! Follows `org.apache.kafka.metadata.properties.MetaProperties`, `MetaPropertiesVersion`,
//! `PropertiesUtils` and `MetaPropertiesEnsemble.Copier.generateValidDirectoryId`. The file is a
//! Java properties file ([`crate::java_properties::JavaProperties`]):
//!
//! ```text
//! #
//! #Sun Nov 29 08:11:11 UTC 2026
//! node.id=1
//! directory.id=MjvrO494hfnTQHWt9EWPdw
//! version=1
//! cluster.id=AAAAAAAAAAAAAAAAAAAAAA
//! ```
//!
//! Version 1 (KRaft) requires `cluster.id` and `node.id`; version 0 (ZooKeeper era, `version`
//! absent or `0`) may carry `broker.id` and `cluster.id`. `directory.id` is optional in both.
//! Writes go to `meta.properties.tmp`, are fsynced, then renamed over the file and the directory
//! is fsynced (`PropertiesUtils.writePropertiesFile(.., fsync = true)`).
//!

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use kraftwerk_protocol::kafka_uuid::{
    is_reserved_directory_id, kafka_uuid_from_string, kafka_uuid_to_string, KafkaUuidError,
};
use thiserror::Error;
use uuid::Uuid;

use crate::java_properties::{java17_store_order, JavaProperties, PropertiesSyntaxError};

/// Name of the file inside each log directory (`MetaPropertiesEnsemble.META_PROPERTIES_NAME`).
pub const META_PROPERTIES_FILE: &str = "meta.properties";

const VERSION_PROP: &str = "version";
const CLUSTER_ID_PROP: &str = "cluster.id";
const BROKER_ID_PROP: &str = "broker.id";
const NODE_ID_PROP: &str = "node.id";
const DIRECTORY_ID_PROP: &str = "directory.id";

/// The version of a meta.properties file (`MetaPropertiesVersion`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MetaPropertiesVersion {
    /// ZooKeeper era (also what a file without `version` is): `broker.id`, optional fields.
    V0,
    /// KRaft: `node.id` and `cluster.id` required.
    V1,
}

impl MetaPropertiesVersion {
    /// The number written in the `version` key.
    pub fn number(self) -> u8 {
        match self {
            Self::V0 => 0,
            Self::V1 => 1,
        }
    }
}

/// What is wrong with the contents of a meta.properties file. Every message names the key.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum InvalidMetaProperties {
    /// The file is not valid Java properties syntax.
    #[error(transparent)]
    Syntax(#[from] PropertiesSyntaxError),
    /// `version` is not an integer.
    #[error("Invalid meta.properties version string '{0}' (key `version`)")]
    InvalidVersion(String),
    /// `version` is neither 0 nor 1.
    #[error("Unknown meta.properties version number {0} (key `version`)")]
    UnknownVersion(i32),
    /// A required key is absent (`node.id` in v1, `cluster.id` in v1).
    #[error("Failed to find {0}")]
    MissingKey(&'static str),
    /// `node.id` / `broker.id` is not a 32-bit base-10 integer.
    #[error("Unable to read {key} as a base-10 number: '{value}'")]
    NotAnInteger {
        /// The key.
        key: &'static str,
        /// The value found.
        value: String,
    },
    /// `directory.id` is not a Kafka Uuid.
    #[error("Unable to read directory.id as a Uuid: {0}")]
    InvalidDirectoryId(KafkaUuidError),
    /// `directory.id` is a reserved value (`MetaPropertiesEnsemble.verify`).
    #[error("Invalid reserved directory ID {0} (key `directory.id`)")]
    ReservedDirectoryId(String),
}

/// A failure reading or writing a meta.properties file; carries the path.
#[derive(Debug, Error)]
pub enum MetaPropertiesError {
    /// Reading, writing, syncing or renaming failed.
    #[error("I/O error on {path}: {source}", path = path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The file exists but its contents are invalid.
    #[error("Invalid {path}: {source}", path = path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: InvalidMetaProperties,
    },
}

/// The contents of one directory's meta.properties (`MetaProperties`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaProperties {
    /// File version.
    pub version: MetaPropertiesVersion,
    /// `cluster.id`: always present in v1; any string Kafka accepted (normally a 22-character
    /// base64 Uuid).
    pub cluster_id: Option<String>,
    /// `node.id` (v1) or `broker.id` (v0).
    pub node_id: Option<i32>,
    /// `directory.id`, unique per directory of a node; the metadata directory's id is the
    /// node's Raft `ReplicaDirectoryId`.
    pub directory_id: Option<Uuid>,
}

impl MetaProperties {
    /// A v1 file as `kafka-storage format` writes it.
    pub fn v1(cluster_id: &str, node_id: i32, directory_id: Uuid) -> Self {
        MetaProperties {
            version: MetaPropertiesVersion::V1,
            cluster_id: Some(cluster_id.to_owned()),
            node_id: Some(node_id),
            directory_id: Some(directory_id),
        }
    }

    /// Interprets parsed properties (`MetaProperties.Builder(Properties).build()` plus the
    /// reserved-id check of `MetaPropertiesEnsemble.verify`). Unknown keys are ignored.
    pub fn from_properties(props: &JavaProperties) -> Result<Self, InvalidMetaProperties> {
        let version = match props.get(VERSION_PROP) {
            None => MetaPropertiesVersion::V0,
            Some(text) => {
                let trimmed = text.trim_matches(|c: char| c <= ' ');
                match trimmed.parse::<i32>() {
                    Ok(0) => MetaPropertiesVersion::V0,
                    Ok(1) => MetaPropertiesVersion::V1,
                    Ok(n) => return Err(InvalidMetaProperties::UnknownVersion(n)),
                    Err(_) => return Err(InvalidMetaProperties::InvalidVersion(text.to_owned())),
                }
            }
        };
        let node_id = match version {
            MetaPropertiesVersion::V0 if props.contains_key(BROKER_ID_PROP) => {
                Some(required_int(props, BROKER_ID_PROP)?)
            }
            MetaPropertiesVersion::V0 => None,
            MetaPropertiesVersion::V1 => Some(required_int(props, NODE_ID_PROP)?),
        };
        let cluster_id = props.get(CLUSTER_ID_PROP).map(str::to_owned);
        if version == MetaPropertiesVersion::V1 && cluster_id.is_none() {
            return Err(InvalidMetaProperties::MissingKey(CLUSTER_ID_PROP));
        }
        let directory_id = match props.get(DIRECTORY_ID_PROP) {
            None => None,
            Some(text) => {
                let id = kafka_uuid_from_string(text)
                    .map_err(InvalidMetaProperties::InvalidDirectoryId)?;
                if is_reserved_directory_id(id) {
                    return Err(InvalidMetaProperties::ReservedDirectoryId(text.to_owned()));
                }
                Some(id)
            }
        };
        Ok(MetaProperties {
            version,
            cluster_id,
            node_id,
            directory_id,
        })
    }

    /// The properties Kafka writes (`MetaProperties.toProperties`), in the order Java 17's
    /// `Properties.store` emits them.
    pub fn to_properties(&self) -> JavaProperties {
        let mut props = JavaProperties::new();
        props.set(VERSION_PROP, &self.version.number().to_string());
        if let Some(cluster_id) = &self.cluster_id {
            props.set(CLUSTER_ID_PROP, cluster_id);
        }
        match (self.version, self.node_id) {
            (MetaPropertiesVersion::V0, Some(id)) => props.set(BROKER_ID_PROP, &id.to_string()),
            (MetaPropertiesVersion::V0, None) => {}
            (MetaPropertiesVersion::V1, id) => {
                let id = id.expect("a v1 meta.properties always has node.id");
                props.set(NODE_ID_PROP, &id.to_string());
            }
        }
        if let Some(id) = self.directory_id {
            props.set(DIRECTORY_ID_PROP, &kafka_uuid_to_string(id));
        }
        java17_store_order(&props)
    }

    /// The file text Kafka would write at `now_ms` (empty comment, then the date line).
    pub fn render(&self, now_ms: i64) -> String {
        self.to_properties().store("", now_ms)
    }

    /// Reads `<dir>/meta.properties`; `Ok(None)` when the file does not exist (an unformatted
    /// directory, `MetaPropertiesEnsemble.emptyLogDirs`).
    pub fn read(dir: &Path) -> Result<Option<MetaProperties>, MetaPropertiesError> {
        let path = dir.join(META_PROPERTIES_FILE);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(MetaPropertiesError::Io { path, source }),
        };
        let parsed = JavaProperties::parse(&bytes)
            .map_err(InvalidMetaProperties::from)
            .and_then(|props| MetaProperties::from_properties(&props));
        match parsed {
            Ok(meta) => Ok(Some(meta)),
            Err(source) => Err(MetaPropertiesError::Invalid { path, source }),
        }
    }

    /// Writes `<dir>/meta.properties` as `PropertiesUtils.writePropertiesFile(.., fsync=true)`:
    /// UTF-8 text to `meta.properties.tmp`, fsync, atomic rename over the file, fsync of `dir`.
    /// The directory must exist. A failed rename removes the `.tmp` file.
    pub fn write(&self, dir: &Path) -> Result<(), MetaPropertiesError> {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let path = dir.join(META_PROPERTIES_FILE);
        let tmp = dir.join(format!("{META_PROPERTIES_FILE}.tmp"));
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| MetaPropertiesError::Io { path, source }
        };
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(io_err(&tmp))?;
        file.write_all(self.render(now_ms).as_bytes())
            .map_err(io_err(&tmp))?;
        file.sync_all().map_err(io_err(&tmp))?;
        drop(file);
        if let Err(source) = fs::rename(&tmp, &path) {
            let _ = fs::remove_file(&tmp);
            return Err(MetaPropertiesError::Io { path, source });
        }
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_err(dir))
    }
}

fn required_int(props: &JavaProperties, key: &'static str) -> Result<i32, InvalidMetaProperties> {
    let value = props
        .get(key)
        .ok_or(InvalidMetaProperties::MissingKey(key))?;
    value
        .parse::<i32>()
        .map_err(|_| InvalidMetaProperties::NotAnInteger {
            key,
            value: value.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kraftwerk_protocol::kafka_uuid::random_directory_id;

    fn parse(text: &str) -> JavaProperties {
        JavaProperties::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn renders_byte_identical_to_kafka_storage_format() {
        // meta.properties written by Kafka 4.1.2 `kafka-storage format` on Java 17.
        let kafka =
            "#\n#Sun Nov 29 08:11:11 UTC 2026\nnode.id=1\ndirectory.id=MjvrO494hfnTQHWt9EWPdw\n\
                     version=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\n";
        let meta = MetaProperties::from_properties(&parse(kafka)).unwrap();
        assert_eq!(meta.version, MetaPropertiesVersion::V1);
        assert_eq!(meta.node_id, Some(1));
        assert_eq!(meta.cluster_id.as_deref(), Some("AAAAAAAAAAAAAAAAAAAAAA"));
        assert_eq!(meta.render(1_795_939_871_000), kafka);
        // Kafka accepts any cluster id and escapes it when storing.
        let kafka_odd =
            "#\n#Sun Nov 29 08:11:11 UTC 2026\nnode.id=1\ndirectory.id=TT5kQsjZHDixhF0a4R_B8g\n\
                         version=1\ncluster.id=not a uuid\\!\n";
        let meta = MetaProperties::from_properties(&parse(kafka_odd)).unwrap();
        assert_eq!(meta.cluster_id.as_deref(), Some("not a uuid!"));
        assert_eq!(meta.render(1_795_939_871_000), kafka_odd);
    }

    #[test]
    fn reads_v0_files() {
        let meta =
            MetaProperties::from_properties(&parse("broker.id=3\ncluster.id=abc\n")).unwrap();
        assert_eq!(meta.version, MetaPropertiesVersion::V0);
        assert_eq!(meta.node_id, Some(3));
        let meta = MetaProperties::from_properties(&parse("version=0\n")).unwrap();
        assert_eq!((meta.node_id, meta.cluster_id.as_deref()), (None, None));
        let v0 = MetaProperties {
            version: MetaPropertiesVersion::V0,
            ..meta
        };
        let text = MetaProperties {
            node_id: Some(5),
            ..v0
        }
        .render(0);
        assert!(
            text.contains("broker.id=5\n") && text.contains("version=0\n"),
            "{text}"
        );
    }

    #[test]
    fn invalid_values_name_their_key() {
        let cases = [
            ("version=x\n", "version"),
            ("version=7\n", "version"),
            ("version=1\ncluster.id=c\n", "node.id"),
            ("version=1\nnode.id=1\n", "cluster.id"),
            ("version=1\ncluster.id=c\nnode.id=one\n", "node.id"),
            ("version=1\ncluster.id=c\nnode.id=3000000000\n", "node.id"),
            ("broker.id=x\n", "broker.id"),
            (
                "version=1\ncluster.id=c\nnode.id=1\ndirectory.id=not-a-uuid\n",
                "directory.id",
            ),
            (
                "version=1\ncluster.id=c\nnode.id=1\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAQ\n",
                "directory.id",
            ),
        ];
        for (text, key) in cases {
            let err = MetaProperties::from_properties(&parse(text)).unwrap_err();
            assert!(err.to_string().contains(key), "{text:?} gave {err}");
        }
        // Whitespace around the version number is tolerated, as `trim()` does in Java.
        assert!(
            MetaProperties::from_properties(&parse("version= 1 \ncluster.id=c\nnode.id=1")).is_ok()
        );
    }

    #[test]
    fn write_then_read_round_trips_atomically() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(MetaProperties::read(dir.path()).unwrap(), None);
        let meta = MetaProperties::v1("MkU3OEVBNTcwNTJENDM2Qg", 7, random_directory_id(&[]));
        meta.write(dir.path()).unwrap();
        assert_eq!(
            MetaProperties::read(dir.path()).unwrap(),
            Some(meta.clone())
        );
        assert!(!dir.path().join("meta.properties.tmp").exists());
        let text = fs::read_to_string(dir.path().join(META_PROPERTIES_FILE)).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("#"));
        let date = lines.next().unwrap();
        assert!(date.starts_with('#') && date.contains(" UTC "), "{date}");
        // Overwrite replaces the old contents.
        let newer = MetaProperties {
            node_id: Some(8),
            ..meta
        };
        newer.write(dir.path()).unwrap();
        assert_eq!(MetaProperties::read(dir.path()).unwrap(), Some(newer));
    }

    #[test]
    fn read_reports_path_of_invalid_file() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join(META_PROPERTIES_FILE),
            "version=1\ncluster.id=c\n",
        )
        .unwrap();
        let err = MetaProperties::read(dir.path()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("meta.properties") && text.contains("node.id"),
            "{text}"
        );
    }
}
