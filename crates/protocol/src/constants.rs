//! The numbers and names every layer shares: the metadata topic, batch and fetch limits, and
//! the error codes kraftwerk writes itself. Each is defined here once; the Kafka constant it
//! mirrors is named beside it.

use kafka_protocol::error::ResponseError;
use uuid::Uuid;

/// The metadata topic's name as a literal, so that [`METADATA_PARTITION_DIR`] can be built
/// from it at compile time.
macro_rules! metadata_topic_name {
    () => {
        "__cluster_metadata"
    };
}

/// Name of the KRaft metadata topic (`Topic.CLUSTER_METADATA_TOPIC_NAME`).
pub const METADATA_TOPIC_NAME: &str = metadata_topic_name!();

/// The metadata log's partition directory inside `metadata.log.dir`: `__cluster_metadata-0`.
pub const METADATA_PARTITION_DIR: &str = concat!(metadata_topic_name!(), "-0");

/// Topic id of the KRaft metadata topic, `AAAAAAAAAAAAAAAAAAAAAQ` in Kafka's base64
/// (`Uuid.METADATA_TOPIC_ID` = (0, 1)).
pub const METADATA_TOPIC_ID: Uuid = Uuid::from_u64_pair(0, 1);

/// Partition index of the metadata log (`__cluster_metadata-0`).
pub const METADATA_PARTITION: i32 = 0;

/// Largest total record batch KRaft writes or accepts, header included, in bytes
/// (`KafkaRaftClient.MAX_BATCH_SIZE_BYTES`; the metadata log's `max.message.bytes`).
pub const MAX_BATCH_BYTES: usize = 8 * 1024 * 1024;

/// Most bytes of records one Raft Fetch or FetchSnapshot response carries
/// (`KafkaRaftClient.MAX_FETCH_SIZE_BYTES`).
pub const MAX_FETCH_BYTES: usize = 8 * 1024 * 1024;

/// Most records in one batch, and so in one atomic controller result
/// (`QuorumController.MAX_RECORDS_PER_USER_OP` / `MAX_RECORDS_PER_BATCH`).
pub const MAX_RECORDS_PER_BATCH: usize = 10_000;

/// Bytes a record adds to a batch besides its value, at most: the varints of its length,
/// attributes, timestamp and offset deltas, key length, value length and header count.
pub const RECORD_FRAMING_BYTES: usize = 16;

/// Room a batch keeps for its header (61 bytes in record batch v2), rounded up generously.
pub const BATCH_HEADER_ROOM_BYTES: usize = 256;

/// Whether `count` records whose encoded values total `value_bytes` fit one batch: at most
/// [`MAX_RECORDS_PER_BATCH`] records and [`MAX_BATCH_BYTES`] with the framing and header room.
/// The one bound the Raft core applies to every append (`kraftwerk_raft::batch_fits`) and the
/// controller to every result before it leaves the controller.
pub const fn batch_fits_sizes(count: usize, value_bytes: usize) -> bool {
    count <= MAX_RECORDS_PER_BATCH
        && value_bytes.saturating_add(count.saturating_mul(RECORD_FRAMING_BYTES))
            <= MAX_BATCH_BYTES - BATCH_HEADER_ROOM_BYTES
}

/// NOT_CONTROLLER (41): the answer of a controller that is not the active one, which makes a
/// broker's `NodeToControllerRequestThread` look up the controller again and retry.
pub const NOT_CONTROLLER: i16 = ResponseError::NotController.code();

/// UNKNOWN_SERVER_ERROR (-1): the answer to a request whose handling failed unexpectedly.
pub const UNKNOWN_SERVER_ERROR: i16 = ResponseError::UnknownServerError.code();

/// The message Java's `NotControllerException` carries in responses.
pub const NOT_CONTROLLER_MESSAGE: &str = "This is not the correct controller for this cluster.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_topic_id_is_kafkas() {
        // Kafka prints Uuid.METADATA_TOPIC_ID as base64url of its 16 bytes.
        assert_eq!(METADATA_TOPIC_ID.as_u128(), 1);
        assert_eq!(NOT_CONTROLLER, 41);
        assert_eq!(
            METADATA_PARTITION_DIR,
            format!("{METADATA_TOPIC_NAME}-{METADATA_PARTITION}")
        );
    }

    #[test]
    fn batch_bound_counts_records_and_bytes() {
        assert!(batch_fits_sizes(MAX_RECORDS_PER_BATCH, 0));
        assert!(!batch_fits_sizes(MAX_RECORDS_PER_BATCH + 1, 0));
        let room = MAX_BATCH_BYTES - BATCH_HEADER_ROOM_BYTES - RECORD_FRAMING_BYTES;
        assert!(batch_fits_sizes(1, room));
        assert!(!batch_fits_sizes(1, room + 1));
        assert!(!batch_fits_sizes(usize::MAX, usize::MAX));
    }
}
