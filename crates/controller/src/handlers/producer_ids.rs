//! AllocateProducerIds (Kafka 4.1.2's `ProducerIdControlManager.generateNextProducerId`).

use crate::api::ControllerApi;
use crate::validate::StringCheck;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{AllocateProducerIdsRequest, AllocateProducerIdsResponse};
use kraftwerk_records::metadata::{ApiMessageAndVersion, ProducerIdsRecord};

use crate::controller::ControllerResult;
use crate::image::MetadataImage;

/// Producer ids per block (`ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE`).
pub const PRODUCER_ID_BLOCK_SIZE: i32 = 1000;

/// AllocateProducerIds (api 67, v0): the next block of 1000 ids starting at the image's next
/// producer id (0 for the first block), recorded as ProducerIdsRecord{NextProducerId = start +
/// 1000}. Because the next id lives in the image (committed or speculative), blocks never
/// overlap, also across controller failover (case C20). STALE_BROKER_EPOCH if the broker epoch
/// is not the registered one.
pub fn allocate_producer_ids(
    image: &MetadataImage,
    request: &AllocateProducerIdsRequest,
) -> ControllerResult<AllocateProducerIdsResponse> {
    let broker_id = *request.broker_id;
    let registered = image.cluster.broker(broker_id).map(|b| b.epoch);
    if registered != Some(request.broker_epoch) {
        return ControllerResult::of(
            Vec::new(),
            AllocateProducerIdsResponse::default()
                .with_error_code(ResponseError::StaleBrokerEpoch.code()),
        );
    }
    let first = image.producer_ids.next_producer_id.max(0);
    if first > i64::MAX - i64::from(PRODUCER_ID_BLOCK_SIZE) {
        return ControllerResult::of(
            Vec::new(),
            AllocateProducerIdsResponse::default()
                .with_error_code(ResponseError::UnknownServerError.code()),
        );
    }
    let record = ProducerIdsRecord {
        broker_id,
        broker_epoch: request.broker_epoch,
        next_producer_id: first + i64::from(PRODUCER_ID_BLOCK_SIZE),
        ..Default::default()
    };
    ControllerResult::of(
        vec![ApiMessageAndVersion::new(record, 0)],
        AllocateProducerIdsResponse::default()
            .with_producer_id_start(first.into())
            .with_producer_id_len(PRODUCER_ID_BLOCK_SIZE),
    )
}

impl ControllerApi for AllocateProducerIdsRequest {
    type Response = AllocateProducerIdsResponse;

    /// No string fields.
    fn check_strings(&self, _check: &mut StringCheck) {}

    fn error_response(&self, code: i16, _message: Option<&str>) -> AllocateProducerIdsResponse {
        AllocateProducerIdsResponse::default().with_error_code(code)
    }
}
