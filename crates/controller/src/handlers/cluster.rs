//! Broker and controller lifecycle: BrokerRegistration, BrokerHeartbeat, ControllerRegistration,
//! UnregisterBroker and controller-endpoint DescribeCluster (Kafka 4.1.2's
//! `ClusterControlManager.registerBroker/registerController`,
//! `ReplicationControlManager.processBrokerHeartbeat/unregisterBroker`, `ControllerApis`).

use crate::api::{message_text, ControllerApi};
use crate::validate::StringCheck;
use std::collections::BTreeMap;

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::broker_registration_request::BrokerRegistrationRequest;
use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::{
    BrokerHeartbeatRequest, BrokerHeartbeatResponse, BrokerRegistrationResponse,
    ControllerRegistrationRequest, ControllerRegistrationResponse, DescribeClusterRequest,
    DescribeClusterResponse, UnregisterBrokerRequest, UnregisterBrokerResponse,
    UnregisterControllerRequest, UnregisterControllerResponse,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{
    ApiMessageAndVersion, BrokerEndpoint, BrokerFeature, ControllerEndpoint, ControllerFeature,
    RegisterBrokerRecord, RegisterControllerRecord,
};
use kraftwerk_records::metadata_version::{MetadataVersion, METADATA_VERSION_FEATURE_NAME};

use super::leader_isr::LeaderIsrUpdater;
use crate::controller::{
    ControllerConfig, ControllerResult, RequestContext, MAX_RECORDS_PER_BATCH,
};
use crate::error::ApiError;
use crate::heartbeat::{BrokerHeartbeatManager, HeartbeatInput};
use crate::ids::is_reserved_directory;
use crate::image::cluster::BrokerRegistration;
use crate::image::features::KRAFT_VERSION_FEATURE_NAME;
use crate::image::MetadataImage;
use kraftwerk_protocol::kafka_uuid::kafka_uuid_to_string;

/// `EndpointType.CONTROLLER` in DescribeCluster.
pub const ENDPOINT_TYPE_CONTROLLER: i8 = 2;
/// `EndpointType.BROKER` in DescribeCluster.
pub const ENDPOINT_TYPE_BROKER: i8 = 1;

fn registration_error(error: ApiError) -> ControllerResult<BrokerRegistrationResponse> {
    tracing::info!(code = error.code, message = ?error.message, "rejecting broker registration");
    ControllerResult::of(
        Vec::new(),
        BrokerRegistrationResponse::default().with_error_code(error.code),
    )
}

/// The finalized level the broker must support for `feature` (`processRegistrationFeature`).
fn check_feature_range(name: &str, finalized: i16, min: i16, max: i16) -> Result<(), String> {
    if finalized < min || finalized > max {
        return Err(format!(
            "Unable to register because the broker does not support finalized version {finalized} of {name}. The \
             broker wants a version between {min} and {max}, inclusive."
        ));
    }
    Ok(())
}

/// BrokerRegistration (api 62, v0-4).
///
/// Validations in Kafka's order: cluster id (INCONSISTENT_CLUSTER_ID), a live session of another
/// incarnation (DUPLICATE_BROKER_REGISTRATION), ZK brokers (BROKER_ID_NOT_REGISTERED), log
/// directories at MV ≥ 3.7-IV2 (INVALID_REGISTRATION), feature ranges against the finalized
/// levels including `kraft.version` (UNSUPPORTED_VERSION), metadata.version missing from the
/// request (INVALID_REGISTRATION). A new incarnation gets broker epoch `ctx.next_offset` and is
/// first removed from ISRs/ELRs it still holds (`handleBrokerShutdown`, with the clean-shutdown
/// check of v3+ `PreviousBrokerEpoch`); the same incarnation amends its registration and keeps
/// its epoch and state. Records: `[PartitionChangeRecord*, RegisterBrokerRecord]`, atomic
/// when they fit in one batch.
pub fn register_broker(
    image: &MetadataImage,
    config: &ControllerConfig,
    heartbeats: &mut BrokerHeartbeatManager,
    ctx: &RequestContext,
    request: &BrokerRegistrationRequest,
) -> ControllerResult<BrokerRegistrationResponse> {
    let features = match validate_registration(image, config, heartbeats, ctx, request) {
        Ok(features) => features,
        Err(error) => return registration_error(error),
    };
    let mv = image.metadata_version();
    let mut records = Vec::new();
    let mut record = register_broker_record(request, features, mv);
    match image.cluster.broker(record.broker_id) {
        Some(existing) if existing.incarnation_id == request.incarnation_id => {
            keep_registration_state(&mut record, existing)
        }
        existing => {
            // The old incarnation leaves ISRs/ELRs first (`handleBrokerShutdown`).
            let clean = is_clean_shutdown(ctx, request, existing.map(|e| e.epoch));
            LeaderIsrUpdater { image, config }.broker_shutdown(
                record.broker_id,
                clean,
                &mut records,
            );
            start_new_incarnation(&mut record, heartbeats, ctx.next_offset);
        }
    }
    let broker_epoch = record.broker_epoch;
    records.push(ApiMessageAndVersion::new(
        record,
        mv.register_broker_record_version(),
    ));
    let atomic = records.len() <= MAX_RECORDS_PER_BATCH;
    ControllerResult {
        records,
        atomic,
        response: BrokerRegistrationResponse::default().with_broker_epoch(broker_epoch),
    }
}

/// The request-level checks of `ClusterControlManager.registerBroker`, in Kafka's order; on
/// success, the feature ranges the RegisterBrokerRecord carries.
fn validate_registration(
    image: &MetadataImage,
    config: &ControllerConfig,
    heartbeats: &BrokerHeartbeatManager,
    ctx: &RequestContext,
    request: &BrokerRegistrationRequest,
) -> Result<Vec<BrokerFeature>, ApiError> {
    check_cluster_id(config, request)?;
    check_no_other_live_incarnation(image, heartbeats, ctx, request)?;
    if request.is_migrating_zk_broker {
        return Err(ApiError::new(
            ResponseError::BrokerIdNotRegistered,
            "Controller does not support registering ZK brokers.",
        ));
    }
    if image.metadata_version().is_directory_assignment_supported() {
        check_log_dirs(image, request)?;
    }
    registration_features(&finalized_levels(image, config), request)
}

fn check_cluster_id(
    config: &ControllerConfig,
    request: &BrokerRegistrationRequest,
) -> Result<(), ApiError> {
    if request.cluster_id.as_str() != config.cluster_id {
        return Err(ApiError::new(
            ResponseError::InconsistentClusterId,
            format!(
                "Expected cluster ID {}, but got cluster ID {}",
                config.cluster_id,
                request.cluster_id.as_str()
            ),
        ));
    }
    Ok(())
}

/// A registered broker with a live session may only be amended by its own incarnation.
fn check_no_other_live_incarnation(
    image: &MetadataImage,
    heartbeats: &BrokerHeartbeatManager,
    ctx: &RequestContext,
    request: &BrokerRegistrationRequest,
) -> Result<(), ApiError> {
    let broker_id = *request.broker_id;
    let Some(existing) = image.cluster.broker(broker_id) else {
        return Ok(());
    };
    if heartbeats.has_valid_session(broker_id, existing.epoch, ctx.now_ms)
        && existing.incarnation_id != request.incarnation_id
    {
        return Err(ApiError::new(
            ResponseError::DuplicateBrokerRegistration,
            "Another broker is registered with that broker id. If the broker was recently restarted this \
             should self-resolve once the heartbeat manager expires the broker's session.",
        ));
    }
    Ok(())
}

/// Log directories (MV ≥ 3.7-IV2): present, not reserved, distinct, and owned by no other
/// broker.
fn check_log_dirs(
    image: &MetadataImage,
    request: &BrokerRegistrationRequest,
) -> Result<(), ApiError> {
    let invalid = |message: String| Err(ApiError::new(ResponseError::InvalidRegistration, message));
    if request.log_dirs.is_empty() {
        return invalid("No directories specified in request".to_owned());
    }
    if request.log_dirs.iter().any(is_reserved_directory) {
        return invalid("Reserved directory ID in request".to_owned());
    }
    let mut sorted = request.log_dirs.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != request.log_dirs.len() {
        return invalid("Duplicate directory ID in request".to_owned());
    }
    for dir in &request.log_dirs {
        match image.cluster.directory_owner(dir) {
            Some(owner) if owner != *request.broker_id => {
                return invalid(format!(
                    "Broker {owner} is already registered with directory {}",
                    kafka_uuid_to_string(*dir)
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Finalized levels the broker must support; the controller adds its kraft.version.
fn finalized_levels(image: &MetadataImage, config: &ControllerConfig) -> BTreeMap<String, i16> {
    let mut finalized: BTreeMap<String, i16> = image
        .features
        .finalized()
        .map(|(name, level)| (name.clone(), *level))
        .collect();
    finalized.insert(
        METADATA_VERSION_FEATURE_NAME.to_owned(),
        image.metadata_version().feature_level(),
    );
    finalized.insert(KRAFT_VERSION_FEATURE_NAME.to_owned(), config.kraft_version);
    finalized
}

/// Checks every feature range of the request against `finalized`, requires metadata.version
/// among them, and checks that a finalized feature the broker does not name is at level 0.
fn registration_features(
    finalized: &BTreeMap<String, i16>,
    request: &BrokerRegistrationRequest,
) -> Result<Vec<BrokerFeature>, ApiError> {
    let unsupported = |message| ApiError::new(ResponseError::UnsupportedVersion, message);
    let mut features = Vec::with_capacity(request.features.len());
    for feature in &request.features {
        let name = feature.name.as_str();
        let level = finalized.get(name).copied().unwrap_or(0);
        let (min, max) = (feature.min_supported_version, feature.max_supported_version);
        check_feature_range(name, level, min, max).map_err(unsupported)?;
        features.push(BrokerFeature {
            name: name.to_owned(),
            min_supported_version: min,
            max_supported_version: max,
            ..Default::default()
        });
    }
    let requested = |name: &str| request.features.iter().any(|f| f.name.as_str() == name);
    if !requested(METADATA_VERSION_FEATURE_NAME) {
        return Err(ApiError::new(
            ResponseError::InvalidRegistration,
            format!("Request features do not contain '{METADATA_VERSION_FEATURE_NAME}'"),
        ));
    }
    for (name, level) in finalized {
        if *level != 0 && !requested(name) {
            check_feature_range(name, *level, 0, 0).map_err(unsupported)?;
        }
    }
    Ok(features)
}

/// The RegisterBrokerRecord of the request, before its epoch and state are decided.
fn register_broker_record(
    request: &BrokerRegistrationRequest,
    features: Vec<BrokerFeature>,
    mv: MetadataVersion,
) -> RegisterBrokerRecord {
    RegisterBrokerRecord {
        broker_id: *request.broker_id,
        is_migrating_zk_broker: false,
        incarnation_id: request.incarnation_id,
        rack: request.rack.as_ref().map(|r| r.to_string()),
        end_points: request
            .listeners
            .iter()
            .map(|l| BrokerEndpoint {
                name: l.name.to_string(),
                host: l.host.to_string(),
                port: l.port,
                security_protocol: l.security_protocol,
                ..Default::default()
            })
            .collect(),
        features,
        log_dirs: if mv.is_directory_assignment_supported() {
            request.log_dirs.clone()
        } else {
            Vec::new()
        },
        ..Default::default()
    }
}

/// The same incarnation amends its registration: epoch, fencing and controlled shutdown stay.
fn keep_registration_state(record: &mut RegisterBrokerRecord, existing: &BrokerRegistration) {
    record.fenced = existing.fenced;
    record.in_controlled_shutdown = existing.in_controlled_shutdown;
    record.broker_epoch = existing.epoch;
}

/// A new incarnation starts fenced, with the offset of its registration as broker epoch; the
/// sessions of older epochs end.
fn start_new_incarnation(
    record: &mut RegisterBrokerRecord,
    heartbeats: &mut BrokerHeartbeatManager,
    broker_epoch: i64,
) {
    record.broker_epoch = broker_epoch;
    record.fenced = true;
    heartbeats.forget_other_epochs(record.broker_id, broker_epoch);
}

/// v3+ `PreviousBrokerEpoch`: the broker says it shut down cleanly from the epoch we stored.
fn is_clean_shutdown(
    ctx: &RequestContext,
    request: &BrokerRegistrationRequest,
    stored_epoch: Option<i64>,
) -> bool {
    ctx.api_version >= 3 && stored_epoch.unwrap_or(-2) == request.previous_broker_epoch
}
/// BrokerHeartbeat (api 63, v0-1): the FENCED/UNFENCED/CONTROLLED_SHUTDOWN/SHUTDOWN_NOW state
/// machine (`BrokerHeartbeatManager.calculateNextBrokerState`), the records of each transition,
/// offline log directories (v1, MV ≥ 3.7-IV2), and the session refresh. `IsFenced` and
/// `ShouldShutDown` describe the next state; `IsCaughtUp` compares the reported metadata offset
/// with the offset of the broker's RegisterBrokerRecord. Not atomic.
pub fn broker_heartbeat(
    image: &MetadataImage,
    config: &ControllerConfig,
    heartbeats: &mut BrokerHeartbeatManager,
    ctx: &RequestContext,
    request: &BrokerHeartbeatRequest,
) -> ControllerResult<BrokerHeartbeatResponse> {
    let broker_id = *request.broker_id;
    let epoch = request.broker_epoch;
    heartbeats.track_contact(broker_id, epoch, ctx.arrived_ms());
    let stale = || {
        ControllerResult::of(
            Vec::new(),
            BrokerHeartbeatResponse::default()
                .with_error_code(ResponseError::StaleBrokerEpoch.code()),
        )
    };
    let Some(registration) = image.cluster.broker(broker_id) else {
        return stale();
    };
    if registration.epoch != epoch {
        return stale();
    }
    let has_leaderships = image.topics.has_leaderships(broker_id);
    let input = HeartbeatInput {
        want_fence: request.want_fence,
        want_shut_down: request.want_shut_down,
        current_metadata_offset: request.current_metadata_offset,
        registration_offset: registration.registration_offset,
        has_leaderships,
    };
    let (current, next) = heartbeats.next_state(broker_id, epoch, registration.fenced, &input);
    let updater = LeaderIsrUpdater { image, config };
    let mut records = Vec::new();
    if current != next {
        use crate::heartbeat::BrokerControlState as S;
        match next {
            S::Fenced | S::ShutdownNow => updater.broker_fenced(broker_id, &mut records),
            S::Unfenced => updater.broker_unfenced(broker_id, epoch, &mut records),
            S::ControlledShutdown => {
                updater.broker_in_controlled_shutdown(broker_id, epoch, &mut records)
            }
        }
    }
    heartbeats.touch(
        broker_id,
        epoch,
        next.fenced(),
        request.current_metadata_offset,
    );
    if image.metadata_version().is_directory_assignment_supported() {
        updater.directories_offline(broker_id, epoch, &request.offline_log_dirs, &mut records);
    }
    // KIP-1066 (BrokerHeartbeat v2, MV >= 4.3-IV0): the broker's cordoned directories.
    records.extend(super::unregistration::cordoned_directories_record(
        image,
        broker_id,
        epoch,
        request.cordoned_log_dirs.as_deref(),
    ));
    if next.in_controlled_shutdown() {
        // The target is the last offset of this result's records (or of the log if none):
        // `processBatchEndOffset`, set only once per shutdown (KAFKA-14292).
        heartbeats.maybe_set_controlled_shutdown_offset(
            broker_id,
            epoch,
            ctx.next_offset + records.len() as i64 - 1,
        );
    }
    let response = BrokerHeartbeatResponse::default()
        .with_is_caught_up(request.current_metadata_offset >= registration.registration_offset)
        .with_is_fenced(next.fenced())
        .with_should_shut_down(next.should_shut_down());
    ControllerResult::of(records, response)
}

/// ControllerRegistration (api 70, v0): one RegisterControllerRecord (atomic), MV ≥ 3.7-IV0
/// else UNSUPPORTED_VERSION.
pub fn register_controller(
    image: &MetadataImage,
    request: &ControllerRegistrationRequest,
) -> ControllerResult<ControllerRegistrationResponse> {
    let mv = image.metadata_version();
    let Some(version) = mv.register_controller_record_version() else {
        return ControllerResult::of(
            Vec::new(),
            ControllerRegistrationResponse::default()
                .with_error_code(ResponseError::UnsupportedVersion.code())
                .with_error_message(Some(StrBytes::from_static_str(
                    "The current MetadataVersion is too old to support controller registrations.",
                ))),
        );
    };
    let record = RegisterControllerRecord {
        controller_id: request.controller_id,
        incarnation_id: request.incarnation_id,
        zk_migration_ready: false,
        end_points: request
            .listeners
            .iter()
            .map(|l| ControllerEndpoint {
                name: l.name.to_string(),
                host: l.host.to_string(),
                port: l.port,
                security_protocol: l.security_protocol,
                ..Default::default()
            })
            .collect(),
        features: request
            .features
            .iter()
            .map(|f| ControllerFeature {
                name: f.name.to_string(),
                min_supported_version: f.min_supported_version,
                max_supported_version: f.max_supported_version,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    ControllerResult::atomic(
        vec![ApiMessageAndVersion::new(record, version)],
        ControllerRegistrationResponse::default(),
    )
}

/// UnregisterBroker (api 64, v0): removes the broker from ISRs and ELRs, then
/// UnregisterBrokerRecord; BROKER_ID_NOT_REGISTERED for an unknown id. Not atomic.
pub fn unregister_broker(
    image: &MetadataImage,
    config: &ControllerConfig,
    heartbeats: &mut BrokerHeartbeatManager,
    request: &UnregisterBrokerRequest,
) -> ControllerResult<UnregisterBrokerResponse> {
    let broker_id = *request.broker_id;
    let Some(registration) = image.cluster.broker(broker_id) else {
        return ControllerResult::of(
            Vec::new(),
            UnregisterBrokerResponse::default()
                .with_error_code(ResponseError::BrokerIdNotRegistered.code())
                .with_error_message(Some(StrBytes::from_string(format!(
                    "Broker ID {broker_id} is not currently registered"
                )))),
        );
    };
    let mut records = Vec::new();
    LeaderIsrUpdater { image, config }.broker_unregistered(
        broker_id,
        registration.epoch,
        &mut records,
    );
    heartbeats.remove(broker_id);
    ControllerResult::of(records, UnregisterBrokerResponse::default())
}

/// UnregisterController (api 94, v0, KIP-1312): the checks and record of
/// [`super::unregistration::unregister_controller`], answered with its error code and message.
pub fn unregister_controller(
    image: &MetadataImage,
    config: &ControllerConfig,
    request: &UnregisterControllerRequest,
) -> ControllerResult<UnregisterControllerResponse> {
    super::unregistration::unregister_controller(image, config, request.controller_id).map(
        |error| {
            UnregisterControllerResponse::default()
                .with_error_code(error.code)
                .with_error_message(error.message.map(StrBytes::from_string))
        },
    )
}

/// DescribeCluster (api 60) on the controller listener (`ControllerApis.handleDescribeCluster`):
/// the registered controllers that have an endpoint on `listener_name`, and the raft leader as
/// controller id (-1 if it is not among them). Requires MV ≥ 3.7-IV0 and EndpointType=CONTROLLER.
/// Served from any image (standbys answer it too); writes nothing.
pub fn describe_cluster(
    image: &MetadataImage,
    config: &ControllerConfig,
    ctx: &RequestContext,
    request: &DescribeClusterRequest,
) -> DescribeClusterResponse {
    let error = |code: ResponseError, message: String| {
        DescribeClusterResponse::default()
            .with_error_code(code.code())
            .with_error_message(Some(StrBytes::from_string(message)))
    };
    if !image
        .metadata_version()
        .is_controller_registration_supported()
    {
        return error(
            ResponseError::UnsupportedVersion,
            "Direct-to-controller communication is not supported with the current MetadataVersion."
                .to_owned(),
        );
    }
    let endpoint_name = |t: i8| match t {
        ENDPOINT_TYPE_BROKER => Some("BROKER"),
        ENDPOINT_TYPE_CONTROLLER => Some("CONTROLLER"),
        _ => None,
    };
    match endpoint_name(request.endpoint_type) {
        None => {
            let code = if ctx.api_version == 0 {
                ResponseError::InvalidRequest
            } else {
                ResponseError::UnsupportedEndpointType
            };
            return error(
                code,
                format!("Unsupported endpoint type {}", request.endpoint_type),
            );
        }
        Some(requested) if request.endpoint_type != ENDPOINT_TYPE_CONTROLLER => {
            let code = if ctx.api_version == 0 {
                ResponseError::InvalidRequest
            } else {
                ResponseError::MismatchedEndpointType
            };
            return error(
                code,
                format!("The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type {requested}"),
            );
        }
        Some(_) => {}
    }
    let brokers: Vec<DescribeClusterBroker> = image
        .cluster
        .controllers()
        .filter_map(|c| {
            let endpoint = c.listeners.iter().find(|l| l.name == ctx.listener_name)?;
            Some(
                DescribeClusterBroker::default()
                    .with_broker_id(c.id.into())
                    .with_host(StrBytes::from_string(endpoint.host.clone()))
                    .with_port(i32::from(endpoint.port))
                    .with_rack(None),
            )
        })
        .collect();
    let controller_id = if brokers.iter().any(|b| *b.broker_id == ctx.leader_id) {
        ctx.leader_id
    } else {
        -1
    };
    // Schema default (i32::MIN) unless asked for.
    let cluster_authorized_operations = if request.include_cluster_authorized_operations {
        crate::authorization::cluster_authorized_operations(config.authorizer.as_ref(), image, ctx)
    } else {
        i32::MIN
    };
    DescribeClusterResponse::default()
        .with_cluster_authorized_operations(cluster_authorized_operations)
        .with_endpoint_type(ENDPOINT_TYPE_CONTROLLER)
        .with_cluster_id(StrBytes::from_string(config.cluster_id.clone()))
        .with_controller_id(controller_id.into())
        .with_brokers(brokers)
}

impl ControllerApi for BrokerRegistrationRequest {
    type Response = BrokerRegistrationResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        check.field("clusterId", &self.cluster_id);
        for listener in &self.listeners {
            check
                .field("name", &listener.name)
                .field("host", &listener.host);
        }
        check
            .each("name", self.features.iter().map(|f| f.name.as_str()))
            .optional("rack", self.rack.as_deref());
    }

    fn error_response(&self, code: i16, _message: Option<&str>) -> BrokerRegistrationResponse {
        BrokerRegistrationResponse::default().with_error_code(code)
    }

    fn summary(&self) -> Option<String> {
        Some(format!(
            "BrokerRegistration of broker {} (incarnation {})",
            self.broker_id.0, self.incarnation_id
        ))
    }
}

impl ControllerApi for BrokerHeartbeatRequest {
    type Response = BrokerHeartbeatResponse;

    /// No string fields.
    fn check_strings(&self, _check: &mut StringCheck) {}

    fn error_response(&self, code: i16, _message: Option<&str>) -> BrokerHeartbeatResponse {
        BrokerHeartbeatResponse::default().with_error_code(code)
    }

    fn summary(&self) -> Option<String> {
        Some(format!(
            "BrokerHeartbeat of broker {} changes its state (want_fence={}, want_shut_down={}, metadata offset {})",
            self.broker_id.0, self.want_fence, self.want_shut_down, self.current_metadata_offset
        ))
    }
}

impl ControllerApi for UnregisterBrokerRequest {
    type Response = UnregisterBrokerResponse;

    /// No string fields.
    fn check_strings(&self, _check: &mut StringCheck) {}

    fn error_response(&self, code: i16, message: Option<&str>) -> UnregisterBrokerResponse {
        UnregisterBrokerResponse::default()
            .with_error_code(code)
            .with_error_message(message_text(message))
    }
}

/// UnregisterController (94, KIP-1312, Kafka 4.4): the error answer Java's
/// `UnregisterControllerRequest.getErrorResponse` builds (code and message).
impl ControllerApi for UnregisterControllerRequest {
    type Response = UnregisterControllerResponse;

    /// No string fields.
    fn check_strings(&self, _check: &mut StringCheck) {}

    fn error_response(&self, code: i16, message: Option<&str>) -> UnregisterControllerResponse {
        UnregisterControllerResponse::default()
            .with_error_code(code)
            .with_error_message(message_text(message))
    }
}

impl ControllerApi for ControllerRegistrationRequest {
    type Response = ControllerRegistrationResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        for listener in &self.listeners {
            check
                .field("name", &listener.name)
                .field("host", &listener.host);
        }
        check.each("name", self.features.iter().map(|f| f.name.as_str()));
    }

    fn error_response(&self, code: i16, message: Option<&str>) -> ControllerRegistrationResponse {
        ControllerRegistrationResponse::default()
            .with_error_code(code)
            .with_error_message(message_text(message))
    }
}

impl ControllerApi for DescribeClusterRequest {
    type Response = DescribeClusterResponse;

    /// No string fields.
    fn check_strings(&self, _check: &mut StringCheck) {}

    fn error_response(&self, code: i16, message: Option<&str>) -> DescribeClusterResponse {
        DescribeClusterResponse::default()
            .with_error_code(code)
            .with_error_message(message_text(message))
    }
}
