//! Kafka 4.3/4.4 controller logic: UnregisterController (api 94, KIP-1312) and the cordoned log
//! directories of BrokerHeartbeat v2 (KIP-1066). Each is a pure function of the image; the
//! handlers in `cluster.rs` call them.

use kafka_protocol::error::ResponseError;
use kraftwerk_records::metadata::{
    ApiMessageAndVersion, BrokerRegistrationChangeRecord, UnregisterControllerRecord,
};
use kraftwerk_records::metadata_version::BrokerRegistrationChange;
use uuid::Uuid;

use crate::controller::ControllerConfig;
use crate::error::ApiError;
use crate::image::MetadataImage;
use crate::request::ControllerResult;

/// `CONTROLLER_ID_NOT_REGISTERED` (Kafka 4.4 `Errors`, code 137, KIP-1312): not in the vendored
/// 4.1 error table.
pub const CONTROLLER_ID_NOT_REGISTERED: i16 = 137;

/// UnregisterController as Kafka 4.4 answers it (`QuorumController.unregisterController`, then
/// `ClusterControlManager.unregisterController`): the active controller cannot unregister
/// itself (INVALID_REQUEST), metadata.version must be at least 4.4-IV2 (UNSUPPORTED_VERSION),
/// the id must be registered (CONTROLLER_ID_NOT_REGISTERED); then one UnregisterControllerRecord
/// v0, atomically. Java 4.4 does not check the voter set here: a voter that is unregistered
/// simply re-registers when it next (re)starts.
pub fn unregister_controller(
    image: &MetadataImage,
    config: &ControllerConfig,
    controller_id: i32,
) -> ControllerResult<ApiError> {
    let refuse = |error: ApiError| ControllerResult::of(Vec::new(), error);
    if controller_id == config.node_id {
        return refuse(ApiError::new(
            ResponseError::InvalidRequest,
            "Controller cannot unregister itself while it is active.",
        ));
    }
    let Some(version) = image
        .metadata_version()
        .unregister_controller_record_version()
    else {
        return refuse(ApiError::new(
            ResponseError::UnsupportedVersion,
            "The current MetadataVersion is too old to support controller unregistration.",
        ));
    };
    if image.cluster.controller(controller_id).is_none() {
        return refuse(ApiError {
            code: CONTROLLER_ID_NOT_REGISTERED,
            message: Some(format!(
                "Controller ID {controller_id} is not currently registered."
            )),
        });
    }
    let record = UnregisterControllerRecord {
        controller_id,
        ..Default::default()
    };
    ControllerResult::atomic(
        vec![ApiMessageAndVersion::new(record, version)],
        ApiError::NONE,
    )
}

/// The record a BrokerHeartbeat's `CordonedLogDirs` leads to (Kafka 4.4
/// `ReplicationControlManager.handleDirectoriesCordoned`, called only at metadata.version
/// 4.3-IV0+): none when the heartbeat carries no list (null before the broker's RECOVERY
/// state), when the broker is not registered, or when the set equals the registered one
/// (`BrokerRegistration.cordonedDirChanged`, set comparison; a registration without a list
/// always changes); else a BrokerRegistrationChangeRecord v3 replacing the list.
pub fn cordoned_directories_record(
    image: &MetadataImage,
    broker_id: i32,
    broker_epoch: i64,
    cordoned: Option<&[Uuid]>,
) -> Option<ApiMessageAndVersion> {
    let mv = image.metadata_version();
    let cordoned = cordoned?;
    if !mv.is_cordoned_log_dirs_supported() {
        return None;
    }
    let registration = image.cluster.broker(broker_id)?;
    let changed = match &registration.cordoned_directories {
        None => true,
        Some(current) => {
            let as_set = |dirs: &[Uuid]| {
                dirs.iter()
                    .copied()
                    .collect::<std::collections::BTreeSet<_>>()
            };
            as_set(current) != as_set(cordoned)
        }
    };
    changed.then(|| {
        ApiMessageAndVersion::new(
            BrokerRegistrationChangeRecord {
                broker_id,
                broker_epoch,
                cordoned_log_dirs: Some(cordoned.to_vec()),
                ..Default::default()
            },
            mv.broker_registration_change_record_version(BrokerRegistrationChange::CordonedLogDirs),
        )
    })
}
