//! `partition.metadata`: the topic id file Kafka keeps in every partition directory.

use std::path::Path;

use kraftwerk_protocol::constants::METADATA_TOPIC_ID;

use crate::error::StorageError;
use crate::fsutil::{read_if_exists, write_atomic};
use kraftwerk_protocol::kafka_uuid::kafka_uuid_to_string;

/// File name (Kafka `PartitionMetadataFile.PARTITION_METADATA_FILE_NAME`).
pub const PARTITION_METADATA: &str = "partition.metadata";

/// Topic id of `__cluster_metadata` as Kafka prints it (base64url, `AAAAAAAAAAAAAAAAAAAAAQ`).
fn metadata_topic_id_text() -> String {
    kafka_uuid_to_string(METADATA_TOPIC_ID)
}

/// The file contents Kafka writes (`PartitionMetadata.encode`): two lines, no trailing newline.
pub fn partition_metadata_text() -> String {
    format!("version: 0\ntopic_id: {}", metadata_topic_id_text())
}

/// Writes `<dir>/partition.metadata` if it is missing (atomically, like Kafka's `maybeFlush`),
/// otherwise checks that it names the metadata topic.
///
/// Errors: [`StorageError::Format`] when the file is not `version: 0` + `topic_id: <id>`
/// (Kafka's `PartitionMetadataReadBuffer` rules), [`StorageError::Inconsistent`] when it names
/// another topic id (Kafka: `InconsistentTopicIdException`).
pub fn ensure_partition_metadata(dir: &Path) -> Result<(), StorageError> {
    let path = dir.join(PARTITION_METADATA);
    let Some(bytes) = read_if_exists(&path)? else {
        return write_atomic(&path, partition_metadata_text().as_bytes());
    };
    let format_error = |reason: &str| StorageError::Format {
        path: path.clone(),
        reason: reason.to_string(),
    };
    let text = String::from_utf8(bytes).map_err(|_| format_error("not UTF-8"))?;
    let mut lines = text.lines();
    let version = lines
        .next()
        .and_then(|l| l.strip_prefix("version: "))
        .ok_or_else(|| format_error("missing `version: ` line"))?;
    if version.trim() != "0" {
        return Err(format_error(&format!("unsupported version {version:?}")));
    }
    let topic_id = lines
        .next()
        .and_then(|l| l.strip_prefix("topic_id: "))
        .ok_or_else(|| format_error("missing `topic_id: ` line"))?;
    let expected = metadata_topic_id_text();
    if topic_id.trim() != expected {
        return Err(StorageError::inconsistent(
            &path,
            format!("topic id {topic_id} is not the metadata topic id {expected}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_exactly_as_kafka_and_checked_on_reopen() {
        let dir = tempfile::tempdir().unwrap();
        ensure_partition_metadata(dir.path()).unwrap();
        let path = dir.path().join(PARTITION_METADATA);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
        );
        ensure_partition_metadata(dir.path()).unwrap();

        std::fs::write(&path, "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAg").unwrap();
        assert!(matches!(
            ensure_partition_metadata(dir.path()),
            Err(StorageError::Inconsistent { .. })
        ));
        std::fs::write(&path, "version: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ").unwrap();
        assert!(matches!(
            ensure_partition_metadata(dir.path()),
            Err(StorageError::Format { .. })
        ));
        std::fs::write(&path, "garbage").unwrap();
        assert!(matches!(
            ensure_partition_metadata(dir.path()),
            Err(StorageError::Format { .. })
        ));
    }
}
