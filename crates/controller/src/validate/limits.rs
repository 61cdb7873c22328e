//! The bounds Java's controller puts on the records one request may produce, and the errors it
//! answers when a request would exceed them. Handlers check these before they do the work a
//! client-chosen number asks for (a partition count, a list of users), not after.

use kafka_protocol::error::ResponseError;

use crate::controller::MAX_RECORDS_PER_BATCH;
use crate::error::ApiError;

/// The message of `EventHandlerExceptionInfo` for a `BoundedListTooLongException` that escapes
/// a handler: the request tried to build more than `MAX_RECORDS_PER_USER_OP` records.
pub const EXCESSIVELY_LARGE_MESSAGE: &str = "Unable to perform excessively large batch operation.";

/// POLICY_VIOLATION "Unable to perform excessively large batch operation." for the whole
/// request (`QuorumController`'s answer to a `BoundedList` of records that overflowed).
pub fn excessively_large() -> ApiError {
    ApiError::new(ResponseError::PolicyViolation, EXCESSIVELY_LARGE_MESSAGE)
}

/// Whether an atomic result holding `current` records can take `additional` more
/// (`BoundedList.newArrayBacked(MAX_RECORDS_PER_USER_OP)`).
pub fn records_fit(current: usize, additional: usize) -> bool {
    current
        .checked_add(additional)
        .is_some_and(|n| n <= MAX_RECORDS_PER_BATCH)
}

/// UNKNOWN_SERVER_ERROR for an atomic result of `count` records where Java keeps its records
/// in a plain list: `QuorumController.appendRecords` throws `IllegalStateException` ("Attempted
/// to atomically commit N records, but maxRecordsPerBatch is 10000"), which the request answers
/// with UNKNOWN_SERVER_ERROR.
pub fn atomic_result_too_large(count: usize) -> ApiError {
    ApiError::new(
        ResponseError::UnknownServerError,
        format!(
            "Attempted to atomically commit {count} records, but maxRecordsPerBatch is {MAX_RECORDS_PER_BATCH}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_fit_up_to_the_batch_limit_without_overflow() {
        assert!(records_fit(0, MAX_RECORDS_PER_BATCH));
        assert!(records_fit(9_999, 1));
        assert!(!records_fit(9_999, 2));
        assert!(!records_fit(1, usize::MAX));
        assert_eq!(excessively_large().code, 44);
        assert_eq!(atomic_result_too_large(10_001).code, -1);
    }
}
