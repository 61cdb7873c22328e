//! `bootstrap.checkpoint`: the records a fresh cluster starts from, written by `format`.
//!
//! Follows `org.apache.kafka.metadata.bootstrap.BootstrapDirectory`, `BootstrapMetadata` and
//! `metadata.util.BatchFileWriter`/`BatchFileReader` of Kafka 4.1. The file has the snapshot
//! file format, all batches with leader epoch 0 and offsets from 0, uncompressed:
//!
//! ```text
//! offset 0      control batch  SnapshotHeaderRecord{version 0, LastContainedLogTimestamp 0}
//! offset 1..n   data batch(es) FeatureLevelRecord(metadata.version), then one
//!                              FeatureLevelRecord per other feature with level > 0 in name
//!                              order (never kraft.version), then any other records (SCRAM)
//! offset n+1    control batch  SnapshotFooterRecord{version 0}
//! ```
//!
//! `format` writes the file into every directory it formats; a controller reads only the copy
//! in `metadata.log.dir` and, when the metadata log is empty, commits these records as the first
//! entries of the log (controller logic, not ours). Without the file, the bootstrap is the
//! latest production metadata.version alone (`BootstrapDirectory.readFromConfiguration`).
//!
//! Kafka 4.4 (KIP-1170) moved the records: its `kafka-storage format` writes them, with the
//! same batch layout, into the metadata log's bootstrap snapshot
//! `__cluster_metadata-0/00000000000000000000-0000000000.checkpoint` of the metadata log
//! directory only (`Formatter.writeBoostrapSnapshot`; the SnapshotHeader then carries the
//! format time as `LastContainedLogTimestamp`), and no `bootstrap.checkpoint` anywhere. A 4.4
//! controller takes the bootstrap from that snapshot when it holds data records
//! (`QuorumMetaLogListener.handleLoadBootstrap`), else from `bootstrap.checkpoint`, the legacy
//! source ([`BootstrapMetadata::read_dir`] does the same). Which layout `format` writes
//! follows the release of the chosen metadata.version ([`BootstrapLayout::for_release`]).
//!
//! A dynamic quorum (KIP-853, `format --standalone` / `--initial-controllers`) adds its quorum
//! to the snapshot `0-0`'s first batch: after the SnapshotHeader, a KRaftVersionRecord(1) and
//! the VotersRecord of the initial controllers ([`quorum`]). Kafka 4.0 to 4.3 write that
//! snapshot with no data records (`Formatter.writeDynamicQuorumSnapshot`; the bootstrap
//! records stay in `bootstrap.checkpoint`), and only for a dynamic voter set; Kafka 4.4 writes
//! it for every controller, with the KRaftVersionRecord whenever kraft.version is 1 (also for
//! `--no-initial-controllers`, then without a VotersRecord). [`BootstrapMetadata::quorum`]
//! holds what a directory's snapshot says about the quorum:
//!
//! ```text
//! offset 0      control batch  SnapshotHeader, [KRaftVersionRecord(1)], [VotersRecord]
//! offset k..n   data batch(es) the bootstrap records (Kafka 4.4 only)
//! offset n+1    control batch  SnapshotFooterRecord
//! ```

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use kraftwerk_protocol::constants::METADATA_PARTITION_DIR;
use kraftwerk_records::batch::{batches, decode_batch, BatchBuilder};
use kraftwerk_records::control::{control_batch, ControlRecord};
use kraftwerk_records::metadata::{
    ApiMessageAndVersion, FeatureLevelRecord, MetadataRecord, RecordError,
};
use kraftwerk_records::metadata_version::{
    Feature, MetadataVersion, MetadataVersionError, METADATA_VERSION_FEATURE_NAME,
};
use thiserror::Error;

pub mod quorum;

use quorum::{BootstrapQuorum, QuorumRecordsError};

/// Name of the file (`BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME`).
pub const BOOTSTRAP_FILE: &str = "bootstrap.checkpoint";

/// Name of the metadata log's bootstrap snapshot `0-0` (`Snapshots.BOOTSTRAP_SNAPSHOT_ID`),
/// inside [`METADATA_PARTITION_DIR`], where Kafka 4.4 puts the bootstrap records (KIP-1170).
pub const BOOTSTRAP_SNAPSHOT_FILE: &str = "00000000000000000000-0000000000.checkpoint";

/// Where `format` puts the bootstrap records: what the `kafka-storage format` of the Kafka
/// release a metadata.version belongs to writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootstrapLayout {
    /// `bootstrap.checkpoint` in every formatted directory (Kafka ≤ 4.3,
    /// `BootstrapDirectory.writeBinaryFile`).
    LegacyFile,
    /// The bootstrap snapshot `__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`
    /// of the metadata log directory only (Kafka 4.4, KIP-1170).
    ZeroCheckpoint,
}

impl BootstrapLayout {
    /// The layout of the release `mv` belongs to: [`Self::ZeroCheckpoint`] from 4.4-IV0 (Kafka
    /// 4.4's formatter writes it at every level, but a directory for an older release's nodes
    /// must carry `bootstrap.checkpoint`, which they read), [`Self::LegacyFile`] before.
    pub fn for_release(mv: MetadataVersion) -> BootstrapLayout {
        if mv >= MetadataVersion::V4_4_IV0 {
            Self::ZeroCheckpoint
        } else {
            Self::LegacyFile
        }
    }
}

/// FeatureLevelRecord version written by `BootstrapMetadata.fromVersions`.
const FEATURE_LEVEL_RECORD_VERSION: i16 = 0;

/// Why bootstrap metadata could not be read, built or written.
#[derive(Debug, Error)]
pub enum BootstrapError {
    /// The directory to read from or write into does not exist or is not a directory.
    #[error("{path} is not a directory", path = path.display())]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },
    /// Reading, writing, syncing or renaming failed.
    #[error("I/O error on {path}: {source}", path = path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A batch or record of the file cannot be decoded.
    #[error("{path} is corrupt at byte {position}: {reason}", path = path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Byte position of the batch.
        position: usize,
        /// What is wrong.
        reason: String,
    },
    /// No FeatureLevelRecord for metadata.version among the records.
    #[error("No FeatureLevelRecord for metadata.version was found in the bootstrap metadata from {source_name}")]
    NoMetadataVersion {
        /// Where the records came from.
        source_name: String,
    },
    /// The metadata.version level is not one this controller supports.
    #[error("Unsupported metadata.version in the bootstrap metadata from {source_name}: {error}")]
    UnsupportedMetadataVersion {
        /// Where the records came from.
        source_name: String,
        /// Why the level was refused.
        error: MetadataVersionError,
    },
    /// A record cannot be encoded at its version.
    #[error("cannot encode bootstrap record: {0}")]
    Encode(#[from] RecordError),
    /// The quorum records cannot be written (kraft.version 0 with voters).
    #[error("cannot write the bootstrap snapshot's quorum records: {0}")]
    Quorum(#[from] QuorumRecordsError),
}

/// The bootstrap records and the metadata.version they set (`BootstrapMetadata`).
#[derive(Clone, Debug, PartialEq)]
pub struct BootstrapMetadata {
    /// The records, in file order; the controller appends them verbatim.
    pub records: Vec<ApiMessageAndVersion>,
    /// The level of the last FeatureLevelRecord(`metadata.version`) among `records`.
    pub metadata_version: MetadataVersion,
    /// Human-readable origin, for error messages ("the binary bootstrap metadata file: …").
    pub source: String,
    /// The KRaftVersion/Voters control records of the metadata directory's bootstrap snapshot
    /// `0-0` (set by [`Self::read_dir`]; `None` when there is no such snapshot or it holds
    /// neither, i.e. a static quorum). A dynamic quorum's Raft layer starts from it.
    pub quorum: Option<BootstrapQuorum>,
}

fn feature_level_record(name: &str, level: i16) -> ApiMessageAndVersion {
    let record = FeatureLevelRecord {
        name: name.to_owned(),
        feature_level: level,
        ..Default::default()
    };
    ApiMessageAndVersion::new(record, FEATURE_LEVEL_RECORD_VERSION)
}

impl BootstrapMetadata {
    /// The records `format` writes (`BootstrapMetadata.fromVersions`):
    /// FeatureLevelRecord(metadata.version) first, then each other feature whose level is above
    /// 0, sorted by name. `kraft.version` is skipped: it lives in KRaftVersionRecord control
    /// records. Duplicated features keep their last level.
    pub fn from_versions(
        metadata_version: MetadataVersion,
        feature_levels: &[(Feature, i16)],
        source: &str,
    ) -> BootstrapMetadata {
        let mut others: Vec<(&'static str, i16)> = Vec::new();
        for (feature, level) in feature_levels {
            if *feature == Feature::KraftVersion {
                continue;
            }
            others.retain(|(name, _)| *name != feature.name());
            others.push((feature.name(), *level));
        }
        others.sort_by_key(|(name, _)| *name);
        let mut records = vec![feature_level_record(
            METADATA_VERSION_FEATURE_NAME,
            metadata_version.feature_level(),
        )];
        records.extend(
            others
                .iter()
                .filter(|(_, level)| *level > 0)
                .map(|(name, level)| feature_level_record(name, *level)),
        );
        BootstrapMetadata {
            records,
            metadata_version,
            source: source.to_owned(),
            quorum: None,
        }
    }

    /// Only FeatureLevelRecord(metadata.version) (`BootstrapMetadata.fromVersion`): what a
    /// controller uses when `bootstrap.checkpoint` is absent.
    pub fn from_version(metadata_version: MetadataVersion, source: &str) -> BootstrapMetadata {
        Self::from_versions(metadata_version, &[], source)
    }

    /// Wraps records read from somewhere (`BootstrapMetadata.fromRecords`): the metadata.version
    /// is that of the last FeatureLevelRecord named `metadata.version`.
    ///
    /// Errors: [`BootstrapError::NoMetadataVersion`] if there is none,
    /// [`BootstrapError::UnsupportedMetadataVersion`] if its level is not a supported one.
    pub fn from_records(
        records: Vec<ApiMessageAndVersion>,
        source: &str,
    ) -> Result<BootstrapMetadata, BootstrapError> {
        let level = records
            .iter()
            .rev()
            .find_map(|r| match &r.record {
                MetadataRecord::FeatureLevel(f) if f.name == METADATA_VERSION_FEATURE_NAME => {
                    Some(f.feature_level)
                }
                _ => None,
            })
            .ok_or_else(|| BootstrapError::NoMetadataVersion {
                source_name: source.to_owned(),
            })?;
        let metadata_version = MetadataVersion::from_feature_level(level).map_err(|error| {
            BootstrapError::UnsupportedMetadataVersion {
                source_name: source.to_owned(),
                error,
            }
        })?;
        Ok(BootstrapMetadata {
            records,
            metadata_version,
            source: source.to_owned(),
            quorum: None,
        })
    }

    /// The level of a feature among the records (`BootstrapMetadata.featureLevel`): the last
    /// FeatureLevelRecord with that name, 0 if none.
    pub fn feature_level(&self, name: &str) -> i16 {
        self.records
            .iter()
            .rev()
            .find_map(|r| match &r.record {
                MetadataRecord::FeatureLevel(f) if f.name == name => Some(f.feature_level),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// Reads the bootstrap of a metadata log directory: the data records of
    /// `<dir>/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint` if that file
    /// exists and holds any (Kafka 4.4, `handleLoadBootstrap`), else
    /// `<dir>/bootstrap.checkpoint` if present (`BootstrapMetadata.fromDirectory`), else
    /// [`MetadataVersion::LATEST_PRODUCTION`] alone ("the default bootstrap"). The
    /// snapshot's quorum records, if any, become [`Self::quorum`] whichever file gave the
    /// records (Kafka 4.0 to 4.3 put a dynamic quorum there and the records in
    /// `bootstrap.checkpoint`).
    ///
    /// Errors: `dir` is missing or not a directory; any [`Self::read_file`] error of the file
    /// used (a corrupt bootstrap snapshot is an error even if `bootstrap.checkpoint` exists);
    /// quorum records [`BootstrapQuorum::from_control_records`] refuses.
    pub fn read_dir(dir: &Path) -> Result<BootstrapMetadata, BootstrapError> {
        if !dir.is_dir() {
            return Err(BootstrapError::NotADirectory {
                path: dir.to_path_buf(),
            });
        }
        let snapshot = dir
            .join(METADATA_PARTITION_DIR)
            .join(BOOTSTRAP_SNAPSHOT_FILE);
        let mut quorum = None;
        if snapshot.exists() {
            let (records, controls) = read_records(&snapshot, true)?;
            quorum = BootstrapQuorum::from_control_records(&controls).map_err(|e| {
                BootstrapError::Corrupt {
                    path: snapshot.clone(),
                    position: 0,
                    reason: e.to_string(),
                }
            })?;
            if !records.is_empty() {
                let mut read = Self::from_records(
                    records,
                    &format!("the bootstrap snapshot {}", snapshot.display()),
                )?;
                read.quorum = quorum;
                return Ok(read);
            }
        }
        let path = dir.join(BOOTSTRAP_FILE);
        let mut read = if path.exists() {
            Self::read_file(&path)?
        } else {
            Self::from_version(MetadataVersion::LATEST_PRODUCTION, "the default bootstrap")
        };
        read.quorum = quorum;
        Ok(read)
    }

    /// Reads a bootstrap file (`BootstrapDirectory.readFromBinaryFile`): the records of every
    /// data batch, in order. Control batches may hold only SnapshotHeader, SnapshotFooter or
    /// LeaderChange records and are skipped, as `BatchFileReader` does. Stricter than Java,
    /// which stops silently at a torn tail and does not check CRCs: any byte that is not part
    /// of a valid batch is an error, since a torn bootstrap file could start a cluster with
    /// half its features.
    pub fn read_file(path: &Path) -> Result<BootstrapMetadata, BootstrapError> {
        let (records, _) = read_records(path, false)?;
        Self::from_records(
            records,
            &format!("the binary bootstrap metadata file: {}", path.display()),
        )
    }

    /// The file bytes, as `BatchFileWriter` lays them out: a SnapshotHeader control batch at
    /// offset 0 stamped `header_timestamp_ms` (Java: when the file was opened), the records in
    /// data batches stamped `data_timestamp_ms` (as many batches as the 8 MiB limit needs) and
    /// a SnapshotFooter control batch stamped `footer_timestamp_ms` (when it was closed); epoch
    /// 0, consecutive offsets from 0.
    ///
    /// Errors: a record cannot be encoded at its version.
    pub fn encode_checkpoint(
        &self,
        header_timestamp_ms: i64,
        data_timestamp_ms: i64,
        footer_timestamp_ms: i64,
    ) -> Result<Vec<u8>, BootstrapError> {
        self.encode_snapshot(
            0,
            [header_timestamp_ms, data_timestamp_ms, footer_timestamp_ms],
        )
    }

    /// The bytes of the bootstrap snapshot `0-0` Kafka 4.4 writes for a static quorum
    /// (`Formatter.writeBoostrapSnapshot` through `RecordsSnapshotWriter`, kraft.version 0, so
    /// no KRaftVersion/Voters control records): the layout of [`Self::encode_checkpoint`] with
    /// the SnapshotHeader's `LastContainedLogTimestamp` set to `last_contained_timestamp_ms`
    /// (Java: the time the writer was built), `batch_timestamps_ms` the header, data and footer
    /// batch timestamps. [`encode_bootstrap_snapshot`] adds a dynamic quorum.
    ///
    /// Errors: a record cannot be encoded at its version.
    pub fn encode_snapshot(
        &self,
        last_contained_timestamp_ms: i64,
        batch_timestamps_ms: [i64; 3],
    ) -> Result<Vec<u8>, BootstrapError> {
        encode_bootstrap_snapshot(
            None,
            &self.records,
            last_contained_timestamp_ms,
            batch_timestamps_ms,
        )
    }

    /// Writes `<dir>/bootstrap.checkpoint` (`BootstrapDirectory.writeBinaryFile`): to
    /// `bootstrap.checkpoint.tmp` (removed first if left over), then an atomic rename over
    /// the file. Unlike Java we also fsync the file and `dir`, so a formatted directory
    /// survives a crash. `dir` must exist.
    pub fn write_dir(&self, dir: &Path) -> Result<(), BootstrapError> {
        if !dir.is_dir() {
            return Err(BootstrapError::NotADirectory {
                path: dir.to_path_buf(),
            });
        }
        let now = now_ms();
        let bytes = self.encode_checkpoint(now, now, now)?;
        write_atomically(dir, BOOTSTRAP_FILE, &bytes, false)
    }

    /// Writes the bootstrap snapshot
    /// `<metadata_dir>/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint` with
    /// these records and `quorum`'s control records (Kafka 4.4 `Formatter.writeBoostrapSnapshot`,
    /// KIP-1170); see [`write_bootstrap_snapshot`].
    pub fn write_snapshot(
        &self,
        metadata_dir: &Path,
        quorum: Option<&BootstrapQuorum>,
    ) -> Result<(), BootstrapError> {
        write_bootstrap_snapshot(metadata_dir, quorum, &self.records)
    }
}

/// Writes the bootstrap snapshot
/// `<metadata_dir>/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`
/// ([`encode_bootstrap_snapshot`], every timestamp the current time), creating the partition
/// directory: through a `.tmp` file, fsynced, renamed, then made read-only as Java's frozen
/// snapshots are (mode 0400). With no `records` it is what Kafka 4.0 to 4.3 write for a
/// dynamic quorum (`Formatter.writeDynamicQuorumSnapshot`). `metadata_dir` must exist.
///
/// Errors: `metadata_dir` is not a directory, I/O, or [`encode_bootstrap_snapshot`]'s.
pub fn write_bootstrap_snapshot(
    metadata_dir: &Path,
    quorum: Option<&BootstrapQuorum>,
    records: &[ApiMessageAndVersion],
) -> Result<(), BootstrapError> {
    if !metadata_dir.is_dir() {
        return Err(BootstrapError::NotADirectory {
            path: metadata_dir.to_path_buf(),
        });
    }
    let partition = metadata_dir.join(METADATA_PARTITION_DIR);
    fs::create_dir_all(&partition).map_err(|source| BootstrapError::Io {
        path: partition.clone(),
        source,
    })?;
    let now = now_ms();
    let bytes = encode_bootstrap_snapshot(quorum, records, now, [now, now, now])?;
    write_atomically(&partition, BOOTSTRAP_SNAPSHOT_FILE, &bytes, true)?;
    File::open(metadata_dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| BootstrapError::Io {
            path: metadata_dir.to_path_buf(),
            source,
        })
}

/// The bytes of a bootstrap snapshot `0-0` as `RecordsSnapshotWriter` writes it for
/// `Formatter`: one control batch at offset 0 stamped `batch_timestamps_ms[0]` holding the
/// SnapshotHeader (`LastContainedLogTimestamp` = `last_contained_timestamp_ms`) and, for a
/// dynamic quorum, its KRaftVersion and Voters records ([`BootstrapQuorum::control_records`]);
/// the `records` in data batches stamped `batch_timestamps_ms[1]` (none when empty, as Kafka
/// 4.0 to 4.3 write it); a SnapshotFooter control batch stamped `batch_timestamps_ms[2]`.
/// Epoch 0, consecutive offsets from 0, uncompressed.
///
/// Errors: a record cannot be encoded; the quorum is kraft.version 0 with voters.
pub fn encode_bootstrap_snapshot(
    quorum: Option<&BootstrapQuorum>,
    records: &[ApiMessageAndVersion],
    last_contained_timestamp_ms: i64,
    batch_timestamps_ms: [i64; 3],
) -> Result<Vec<u8>, BootstrapError> {
    let [header_timestamp_ms, data_timestamp_ms, footer_timestamp_ms] = batch_timestamps_ms;
    let mut controls = vec![ControlRecord::snapshot_header(last_contained_timestamp_ms)];
    if let Some(quorum) = quorum {
        controls.extend(quorum.control_records()?);
    }
    let mut out = Vec::new();
    out.extend_from_slice(&control_batch(0, 0, header_timestamp_ms, &controls));
    // Java's BatchAccumulator packs appends into one batch until it reaches 8 MiB.
    let mut base_offset = controls.len() as i64;
    let mut builder = BatchBuilder::new(base_offset, 0, data_timestamp_ms);
    for record in records {
        let value: Bytes = record.encode()?;
        if builder.try_append(None, &value).is_err() {
            let next_base = base_offset + builder.len() as i64;
            let full = std::mem::replace(
                &mut builder,
                BatchBuilder::new(next_base, 0, data_timestamp_ms),
            );
            out.extend_from_slice(&full.build());
            base_offset = next_base;
            builder.append(None, &value);
        }
    }
    let next_offset = base_offset + builder.len() as i64;
    if !builder.is_empty() {
        out.extend_from_slice(&builder.build());
    }
    out.extend_from_slice(&control_batch(
        next_offset,
        0,
        footer_timestamp_ms,
        &[ControlRecord::snapshot_footer()],
    ));
    Ok(out)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The data records of a checkpoint-format file and its KRaftVersion/Voters control records.
type DecodedCheckpoint = (Vec<ApiMessageAndVersion>, Vec<ControlRecord>);

/// Reads and decodes one checkpoint-format file into its data records and quorum control
/// records. `quorum_records`: KRaftVersion/Voters control records are allowed (the bootstrap
/// snapshot).
fn read_records(path: &Path, quorum_records: bool) -> Result<DecodedCheckpoint, BootstrapError> {
    let bytes = fs::read(path).map_err(|source| BootstrapError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    decode_checkpoint(&bytes, quorum_records).map_err(|(position, reason)| {
        BootstrapError::Corrupt {
            path: path.to_path_buf(),
            position,
            reason,
        }
    })
}

/// Writes `dir/name` through `dir/name.tmp` (removed first if left over), fsync and rename,
/// then fsyncs `dir`; `read_only` sets mode 0400 on the result.
fn write_atomically(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    read_only: bool,
) -> Result<(), BootstrapError> {
    let path = dir.join(name);
    let tmp = dir.join(format!("{name}.tmp"));
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BootstrapError::Io { path, source }
    };
    match fs::remove_file(&tmp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_err(&tmp)(e)),
        _ => {}
    }
    let result = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            if read_only {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(fs::Permissions::from_mode(0o400))?;
            }
            file.sync_all()
        })
        .map_err(io_err(&tmp))
        .and_then(|()| fs::rename(&tmp, &path).map_err(io_err(&path)));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir))
}

/// Decodes a checkpoint file into its data records and quorum control records;
/// `Err((byte position, reason))`.
fn decode_checkpoint(
    bytes: &[u8],
    quorum_records: bool,
) -> Result<DecodedCheckpoint, (usize, String)> {
    let mut records = Vec::new();
    let mut controls = Vec::new();
    let mut iter = batches(bytes);
    let mut position = 0;
    while let Some(batch) = iter.next() {
        let (_, batch) = batch.map_err(|e| (position, e.to_string()))?;
        let (header, decoded) = decode_batch(batch).map_err(|e| (position, e.to_string()))?;
        for record in decoded {
            let value = record.value.as_deref().unwrap_or_default();
            if header.is_control() {
                let key = record.key.as_deref().unwrap_or_default();
                match ControlRecord::decode(key, value).map_err(|e| (position, e.to_string()))? {
                    ControlRecord::SnapshotHeader(_)
                    | ControlRecord::SnapshotFooter(_)
                    | ControlRecord::LeaderChange(_) => {}
                    // A dynamic quorum's bootstrap snapshot (0-0) also holds the quorum's
                    // KRaftVersion and Voters records; `bootstrap.checkpoint` never does.
                    quorum @ (ControlRecord::KRaftVersion(_) | ControlRecord::Voters(_))
                        if quorum_records =>
                    {
                        controls.push(quorum)
                    }
                    other => {
                        return Err((
                            position,
                            format!(
                                "Unsupported control record type {} at offset {}",
                                other.record_type(),
                                record.offset
                            ),
                        ))
                    }
                }
            } else {
                let decoded = ApiMessageAndVersion::decode(value).map_err(|e| {
                    (
                        position,
                        format!(
                            "unable to deserialize record at offset {}: {e}",
                            record.offset
                        ),
                    )
                })?;
                records.push(decoded);
            }
        }
        position = iter.position();
    }
    if position != bytes.len() {
        return Err((
            position,
            format!(
                "{} trailing bytes are not a whole record batch",
                bytes.len() - position
            ),
        ));
    }
    Ok((records, controls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kraftwerk_records::batch::BatchHeader;
    use kraftwerk_records::metadata::UserScramCredentialRecord;
    use kraftwerk_records::metadata_version::default_feature_levels;

    /// `bootstrap.checkpoint` written by Kafka 4.1.2 `kafka-storage format` (static quorum,
    /// default release version 4.1-IV1).
    const KAFKA_4_1_IV1: &str = "\
        000000000000000000000047000000000252c31f54002000000000000001a226686ea9000001a226686ea9ffffffffff\
        ffffffffffffffffff000000012a0000000800000003160000000000000000000000000000000000000001000000b900\
        0000000288cde762000000000003000001a226686eba000001a226686ebaffffffffffffffffffffffffffff00000004\
        3a000000012e010c00116d657461646174612e76657273696f6e001b00005a000002014e010c0021656c696769626c65\
        2e6c65616465722e7265706c696361732e76657273696f6e00010000340000040128010c000e67726f75702e76657273\
        696f6e00010000400000060134010c00147472616e73616374696f6e2e76657273696f6e000200000000000000000005\
        0000003f0000000002322e4487002000000000000001a226686eba000001a226686ebaffffffffffffffffffffffffff\
        ff000000011a00000008000000040600000000";

    /// The same with `--release-version 3.3` (3.3-IV3: no other feature is enabled).
    const KAFKA_3_3_IV3: &str = "\
        00000000000000000000004700000000025c77490f002000000000000001a22668742e000001a22668742effffffffff\
        ffffffffffffffffff000000012a00000008000000031600000000000000000000000000000000000000010000004f00\
        00000002b4b2eff1000000000000000001a226687438000001a226687438ffffffffffffffffffffffffffff00000001\
        3a000000012e010c00116d657461646174612e76657273696f6e0007000000000000000000020000003f00000000021c\
        00731f002000000000000001a226687438000001a226687438ffffffffffffffffffffffffffff000000011a00000008\
        000000040600000000";

    /// The bootstrap snapshot Kafka 4.1.2 `kafka-storage format --initial-controllers
    /// 1@h1:9093:xkFWfagsSa2W4IuY_DK9zQ,2@h2:9093:a6QGf_OEQcCBdH8kVSHIFg,9@[::1]:9093:MvDxzVmcRsaTz33bUuRU6A`
    /// writes next to `bootstrap.checkpoint`: SnapshotHeader, KRaftVersion(1), Voters, footer.
    const KAFKA_4_1_DYNAMIC_SNAPSHOT: &str = "\
        0000000000000000000000f90000000002264da021002000000002000001a23340517d000001a23340517dffffffffff\
        ffffffffffffffffff000000032a0000000800000003160000000001a23340515500001e00000208000000050a000000\
        010000c0020000040800000006aa0200000400000001c641567da82c49ad96e08b98fc32bdcd020b434f4e54524f4c4c\
        45520368312385000000000100000000000932f0f1cd599c46c693cf7ddb52e454e8020b434f4e54524f4c4c45521030\
        3a303a303a303a303a303a303a31238500000000010000000000026ba4067ff38441c081747f245521c816020b434f4e\
        54524f4c4c4552036832238500000000010000000000000000000000030000003f0000000002dd89c273002000000000\
        000001a23340518d000001a23340518dffffffffffffffffffffffffffff000000011a00000008000000040600000000";

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    fn headers(bytes: &[u8]) -> Vec<BatchHeader> {
        batches(bytes).map(|b| b.unwrap().0).collect()
    }

    fn write_file(dir: &Path, bytes: &[u8]) -> PathBuf {
        let path = dir.join(BOOTSTRAP_FILE);
        fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn encodes_byte_identical_to_kafka_format() {
        for (hex, mv) in [
            (KAFKA_4_1_IV1, MetadataVersion::V4_1_IV1),
            (KAFKA_3_3_IV3, MetadataVersion::V3_3_IV3),
        ] {
            let kafka = unhex(hex);
            let h = headers(&kafka);
            let ours = BootstrapMetadata::from_versions(mv, &default_feature_levels(mv), "test")
                .encode_checkpoint(
                    h[0].base_timestamp,
                    h[1].base_timestamp,
                    h[2].base_timestamp,
                )
                .unwrap();
            assert_eq!(ours, kafka, "{mv}");
        }
    }

    #[test]
    fn reads_kafka_written_file() {
        let dir = tempfile::tempdir().unwrap();
        write_file(dir.path(), &unhex(KAFKA_4_1_IV1));
        let bootstrap = BootstrapMetadata::read_dir(dir.path()).unwrap();
        assert_eq!(bootstrap.metadata_version, MetadataVersion::V4_1_IV1);
        let names: Vec<(String, i16)> = bootstrap
            .records
            .iter()
            .map(|r| match &r.record {
                MetadataRecord::FeatureLevel(f) => (f.name.clone(), f.feature_level),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(
            names,
            vec![
                ("metadata.version".to_owned(), 27),
                ("eligible.leader.replicas.version".to_owned(), 1),
                ("group.version".to_owned(), 1),
                ("transaction.version".to_owned(), 2),
            ]
        );
        assert_eq!(bootstrap.feature_level("group.version"), 1);
        assert_eq!(bootstrap.feature_level("share.version"), 0);
        assert!(bootstrap.source.contains("bootstrap.checkpoint"));
    }

    #[test]
    fn reads_the_quorum_of_a_kafka_dynamic_bootstrap_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        write_file(dir.path(), &unhex(KAFKA_4_1_IV1));
        let partition = dir.path().join(METADATA_PARTITION_DIR);
        fs::create_dir(&partition).unwrap();
        let snapshot = partition.join(BOOTSTRAP_SNAPSHOT_FILE);
        fs::write(&snapshot, unhex(KAFKA_4_1_DYNAMIC_SNAPSHOT)).unwrap();
        // Kafka 4.1's layout: the records from bootstrap.checkpoint, the quorum from 0-0.
        let read = BootstrapMetadata::read_dir(dir.path()).unwrap();
        assert_eq!(read.metadata_version, MetadataVersion::V4_1_IV1);
        assert!(read.source.contains(BOOTSTRAP_FILE));
        let quorum = read.quorum.unwrap();
        assert_eq!(quorum.kraft_version, 1);
        let voters = quorum.voters.as_ref().unwrap();
        // Java's HashMap order, not id order.
        assert_eq!(voters.iter().map(|v| v.id).collect::<Vec<_>>(), [1, 9, 2]);
        let nine = quorum.voter(9).unwrap();
        assert_eq!(
            kraftwerk_protocol::kafka_uuid::kafka_uuid_to_string(nine.directory_id),
            "MvDxzVmcRsaTz33bUuRU6A"
        );
        assert_eq!(
            nine.endpoints,
            [quorum::VoterEndpoint {
                listener_name: "CONTROLLER".into(),
                host: "0:0:0:0:0:0:0:1".into(),
                port: 9093
            }]
        );
        assert_eq!(
            nine.kraft_version,
            quorum::KRaftVersionRange { min: 0, max: 1 }
        );
        // Re-encoded with Kafka's timestamps: Kafka's bytes.
        let kafka = unhex(KAFKA_4_1_DYNAMIC_SNAPSHOT);
        let h = headers(&kafka);
        let (_, first) = decode_batch(batches(&kafka).next().unwrap().unwrap().1).unwrap();
        let ControlRecord::SnapshotHeader(header) = ControlRecord::decode(
            first[0].key.as_deref().unwrap(),
            first[0].value.as_deref().unwrap(),
        )
        .unwrap() else {
            panic!("no SnapshotHeader first");
        };
        assert_eq!(h.len(), 2, "no data batch before 4.4");
        let ours = encode_bootstrap_snapshot(
            Some(&quorum),
            &[],
            header.last_contained_log_timestamp,
            [
                h[0].base_timestamp,
                h[0].base_timestamp,
                h[1].base_timestamp,
            ],
        )
        .unwrap();
        assert_eq!(ours, kafka);
        // A static directory has no quorum; a torn snapshot is an error.
        let static_dir = tempfile::tempdir().unwrap();
        write_file(static_dir.path(), &unhex(KAFKA_4_1_IV1));
        assert_eq!(
            BootstrapMetadata::read_dir(static_dir.path())
                .unwrap()
                .quorum,
            None
        );
        fs::write(&snapshot, &kafka[..kafka.len() - 3]).unwrap();
        let err = BootstrapMetadata::read_dir(dir.path()).unwrap_err();
        assert!(matches!(err, BootstrapError::Corrupt { .. }), "{err}");
    }

    #[test]
    fn missing_file_means_latest_production_only() {
        let dir = tempfile::tempdir().unwrap();
        let bootstrap = BootstrapMetadata::read_dir(dir.path()).unwrap();
        assert_eq!(
            bootstrap.metadata_version,
            MetadataVersion::LATEST_PRODUCTION
        );
        assert_eq!(bootstrap.records.len(), 1);
        assert_eq!(bootstrap.source, "the default bootstrap");
        let err = BootstrapMetadata::read_dir(&dir.path().join("nope")).unwrap_err();
        assert!(matches!(err, BootstrapError::NotADirectory { .. }), "{err}");
    }

    #[test]
    fn write_then_read_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mv = MetadataVersion::V4_0_IV3;
        let written = BootstrapMetadata::from_versions(mv, &default_feature_levels(mv), "format");
        written.write_dir(dir.path()).unwrap();
        fs::write(dir.path().join("bootstrap.checkpoint.tmp"), b"stale").unwrap();
        written.write_dir(dir.path()).unwrap();
        assert!(!dir.path().join("bootstrap.checkpoint.tmp").exists());
        let read = BootstrapMetadata::read_dir(dir.path()).unwrap();
        assert_eq!(read.records, written.records);
        assert_eq!(read.metadata_version, mv);
        assert!(BootstrapMetadata::from_version(mv, "x")
            .write_dir(&dir.path().join("missing"))
            .is_err());
    }

    #[test]
    fn from_versions_orders_filters_and_skips_kraft_version() {
        let bootstrap = BootstrapMetadata::from_versions(
            MetadataVersion::V4_2_IV1,
            &[
                (Feature::TransactionVersion, 2),
                (Feature::KraftVersion, 1),
                (Feature::ShareVersion, 0),
                (Feature::GroupVersion, 1),
                (Feature::EligibleLeaderReplicasVersion, 1),
            ],
            "test",
        );
        let names: Vec<&str> = bootstrap
            .records
            .iter()
            .map(|r| match &r.record {
                MetadataRecord::FeatureLevel(f) => f.name.as_str(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            names,
            [
                "metadata.version",
                "eligible.leader.replicas.version",
                "group.version",
                "transaction.version"
            ]
        );
        assert_eq!(bootstrap.feature_level("kraft.version"), 0);
    }

    #[test]
    fn rejects_records_without_supported_metadata_version() {
        let err =
            BootstrapMetadata::from_records(vec![feature_level_record("group.version", 1)], "here")
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "No FeatureLevelRecord for metadata.version was found in the bootstrap metadata from here"
        );
        let err = BootstrapMetadata::from_records(
            vec![feature_level_record("metadata.version", 35)],
            "here",
        )
        .unwrap_err();
        assert!(err.to_string().contains("feature level 35"), "{err}");
        // The last metadata.version record wins.
        let ok = BootstrapMetadata::from_records(
            vec![
                feature_level_record("metadata.version", 35),
                feature_level_record("metadata.version", 21),
            ],
            "here",
        )
        .unwrap();
        assert_eq!(ok.metadata_version, MetadataVersion::V3_9_IV0);
    }

    #[test]
    fn corrupt_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let good = unhex(KAFKA_4_1_IV1);
        let mut flipped = good.clone();
        flipped[150] ^= 0x01; // inside the data batch: CRC mismatch
        let torn = &good[..good.len() - 5];
        let mut kraft_version = good[..good.len() - 75].to_vec();
        kraft_version.extend_from_slice(&control_batch(
            5,
            0,
            0,
            &[ControlRecord::kraft_version(1)],
        ));
        for bytes in [
            &flipped[..],
            torn,
            &good[..good.len() - 1],
            &kraft_version[..],
        ] {
            let path = write_file(dir.path(), bytes);
            let err = BootstrapMetadata::read_file(&path).unwrap_err();
            assert!(matches!(err, BootstrapError::Corrupt { .. }), "{err}");
        }
        // Sanity: the footer batch is exactly the last 75 bytes, so the splice above is valid.
        assert_eq!(headers(&good).last().unwrap().size_bytes(), 75);
    }

    #[test]
    fn large_bootstraps_split_into_batches_under_8_mib() {
        let mut records =
            BootstrapMetadata::from_version(MetadataVersion::V4_1_IV1, "test").records;
        for i in 0..100 {
            let record = UserScramCredentialRecord {
                name: format!("user-{i}"),
                mechanism: 1,
                salt: Bytes::from(vec![i as u8; 100 * 1024]),
                stored_key: Bytes::from_static(b"k"),
                server_key: Bytes::from_static(b"s"),
                iterations: 4096,
                ..Default::default()
            };
            records.push(ApiMessageAndVersion::new(record, 0));
        }
        let bootstrap = BootstrapMetadata::from_records(records, "test").unwrap();
        let bytes = bootstrap.encode_checkpoint(1, 2, 3).unwrap();
        let h = headers(&bytes);
        assert!(h.len() >= 4, "header, at least two data batches, footer");
        let mut next = 0;
        for header in &h {
            assert_eq!(header.base_offset, next);
            assert_eq!(header.partition_leader_epoch, 0);
            assert!(header.size_bytes() <= 8 * 1024 * 1024);
            next = header.next_offset();
        }
        assert_eq!(next, 1 + 101 + 1);
        let dir = tempfile::tempdir().unwrap();
        let read = BootstrapMetadata::read_file(&write_file(dir.path(), &bytes)).unwrap();
        assert_eq!(read.records, bootstrap.records);
    }
}
