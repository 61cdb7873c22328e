//! What one controller result may write, checked on every handler's result before it leaves
//! `Controller::handle`, with the answers Java's write path gives: an atomic result of more than
//! 10,000 records is `QuorumController.appendRecords`' `IllegalStateException`
//! (UNKNOWN_SERVER_ERROR); a record that does not serialize is the generated serializer's
//! `RuntimeException` (UNKNOWN_SERVER_ERROR); records that do not fit one 8 MiB batch are
//! `BatchAccumulator`'s `RecordBatchTooLargeException` (RECORD_LIST_TOO_LARGE). Non-atomic
//! results are cut into batches by the node, so only each record on its own must fit.
//!
//! Handlers check their inputs first, so none of these should fire; this is the last check
//! before the node's write path, which applies the same bound
//! (`kraftwerk_protocol::constants::batch_fits_sizes`).

use kafka_protocol::error::ResponseError;
use kraftwerk_protocol::constants::{
    batch_fits_sizes, MAX_BATCH_BYTES, MAX_RECORDS_PER_BATCH, RECORD_FRAMING_BYTES,
};
use kraftwerk_records::metadata::ApiMessageAndVersion;

use super::limits::atomic_result_too_large;
use crate::error::ApiError;

/// Bytes of a record batch v2 header (`DefaultRecordBatch.RECORD_BATCH_OVERHEAD`).
const BATCH_HEADER_BYTES: usize = 61;

/// `Ok` if `records` can be written as a result that is `atomic` or not; otherwise the error
/// the request gets instead (nothing is written).
pub fn check_result(records: &[ApiMessageAndVersion], atomic: bool) -> Result<(), ApiError> {
    if atomic && records.len() > MAX_RECORDS_PER_BATCH {
        return Err(atomic_result_too_large(records.len()));
    }
    let mut value_bytes: usize = 0;
    for record in records {
        let len = record
            .encode()
            .map_err(|e| {
                ApiError::new(
                    ResponseError::UnknownServerError,
                    format!("{} cannot be serialized: {e}", record.record.name()),
                )
            })?
            .len();
        if !batch_fits_sizes(1, len) {
            return Err(too_large(1, len));
        }
        value_bytes += len;
    }
    if atomic && !batch_fits_sizes(records.len(), value_bytes) {
        return Err(too_large(records.len(), value_bytes));
    }
    Ok(())
}

/// RECORD_LIST_TOO_LARGE with `BatchAccumulator`'s message.
fn too_large(count: usize, value_bytes: usize) -> ApiError {
    let total = value_bytes + count * RECORD_FRAMING_BYTES + BATCH_HEADER_BYTES;
    ApiError::new(
        ResponseError::RecordListTooLarge,
        format!(
            "The total record(s) size of {total} exceeds the maximum allowed batch size of {MAX_BATCH_BYTES}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kraftwerk_records::metadata::{NoOpRecord, TopicRecord};

    fn topic(name_bytes: usize) -> ApiMessageAndVersion {
        ApiMessageAndVersion::new(
            TopicRecord {
                name: "t".repeat(name_bytes),
                topic_id: uuid::Uuid::from_u128(7),
                ..Default::default()
            },
            0,
        )
    }

    #[test]
    fn atomic_results_are_bounded_by_count_and_bytes() {
        let noops = vec![ApiMessageAndVersion::new(NoOpRecord::default(), 0); 10_001];
        assert_eq!(check_result(&noops[..10_000], true), Ok(()));
        assert_eq!(check_result(&noops, false), Ok(()));
        let error = check_result(&noops, true).unwrap_err();
        assert_eq!(error.code, ResponseError::UnknownServerError.code());
        // 300 records of ~30 KB do not fit one 8 MiB batch, but each fits alone.
        let big = vec![topic(30_000); 300];
        assert_eq!(check_result(&big, false), Ok(()));
        let error = check_result(&big, true).unwrap_err();
        assert_eq!(error.code, ResponseError::RecordListTooLarge.code());
    }

    #[test]
    fn a_record_that_does_not_serialize_refuses_the_result() {
        let error = check_result(&[topic(32_767), topic(32_768)], false).unwrap_err();
        assert_eq!(error.code, ResponseError::UnknownServerError.code());
        assert!(error
            .message
            .unwrap()
            .starts_with("TopicRecord cannot be serialized"));
    }
}
