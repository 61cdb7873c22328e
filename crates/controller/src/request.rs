//! The request and response types of the controller API and the context a request comes
//! with; the NOT_CONTROLLER answers of a standby.

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{
    AllocateProducerIdsRequest, AllocateProducerIdsResponse, AlterPartitionRequest,
    AlterPartitionResponse, AssignReplicasToDirsRequest, AssignReplicasToDirsResponse,
    BrokerHeartbeatRequest, BrokerHeartbeatResponse, BrokerRegistrationRequest,
    BrokerRegistrationResponse, ControllerRegistrationRequest, ControllerRegistrationResponse,
    CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse,
    DeleteTopicsRequest, DeleteTopicsResponse, DescribeClusterRequest, DescribeClusterResponse,
    ElectLeadersRequest, ElectLeadersResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse, UnregisterBrokerRequest, UnregisterBrokerResponse,
    UpdateFeaturesRequest, UpdateFeaturesResponse,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::ApiMessageAndVersion;

use crate::controller::MAX_RECORDS_PER_BATCH;

/// What the node knows about a request besides its body.
#[derive(Clone, Debug, Default)]
pub struct RequestContext {
    /// Request api version (after Envelope unwrapping: the inner request's version).
    pub api_version: i16,
    /// Current time in milliseconds (monotonic).
    pub now_ms: u64,
    /// Offset the first record of this request's result will get (the log end offset): the
    /// broker epoch of a new registration.
    pub next_offset: i64,
    /// Raft leader id (DescribeCluster's controller id).
    pub leader_id: i32,
    /// Raft leader epoch.
    pub leader_epoch: i32,
    /// Client id from the request header.
    pub client_id: Option<String>,
    /// Listener the request arrived on (DescribeCluster lists controller endpoints on it).
    pub listener_name: String,
}

/// A handler's output: records to append and the response to send once they commit
/// (`ControllerResult`).
#[derive(Clone, Debug)]
pub struct ControllerResult<R> {
    /// Records to append, in order.
    pub records: Vec<ApiMessageAndVersion>,
    /// If true, all records must land in one batch (at most [`MAX_RECORDS_PER_BATCH`]).
    pub atomic: bool,
    /// The response.
    pub response: R,
}

impl<R> ControllerResult<R> {
    /// A result whose records may be split over batches (`ControllerResult.of`).
    pub fn of(records: Vec<ApiMessageAndVersion>, response: R) -> Self {
        ControllerResult {
            records,
            atomic: false,
            response,
        }
    }

    /// A result whose records must be appended in one batch (`ControllerResult.atomicOf`).
    pub fn atomic(records: Vec<ApiMessageAndVersion>, response: R) -> Self {
        assert!(
            records.len() <= MAX_RECORDS_PER_BATCH,
            "atomic result of {} records",
            records.len()
        );
        ControllerResult {
            records,
            atomic: true,
            response,
        }
    }

    /// The same records with the response mapped.
    pub fn map<S>(self, f: impl FnOnce(R) -> S) -> ControllerResult<S> {
        ControllerResult {
            records: self.records,
            atomic: self.atomic,
            response: f(self.response),
        }
    }
}

/// A request the controller handles.
#[derive(Clone, Debug)]
pub enum ControllerRequest {
    /// BrokerRegistration (62).
    BrokerRegistration(BrokerRegistrationRequest),
    /// BrokerHeartbeat (63).
    BrokerHeartbeat(BrokerHeartbeatRequest),
    /// CreateTopics (19).
    CreateTopics(CreateTopicsRequest),
    /// DeleteTopics (20).
    DeleteTopics(DeleteTopicsRequest),
    /// AllocateProducerIds (67).
    AllocateProducerIds(AllocateProducerIdsRequest),
    /// AlterPartition (56).
    AlterPartition(AlterPartitionRequest),
    /// AssignReplicasToDirs (73).
    AssignReplicasToDirs(AssignReplicasToDirsRequest),
    /// ControllerRegistration (70).
    ControllerRegistration(ControllerRegistrationRequest),
    /// DescribeCluster (60) with EndpointType CONTROLLER.
    DescribeCluster(DescribeClusterRequest),
    /// UnregisterBroker (64).
    UnregisterBroker(UnregisterBrokerRequest),
    /// Admin APIs forwarded by brokers: CreatePartitions, ElectLeaders, UpdateFeatures,
    /// IncrementalAlterConfigs.
    Admin(AdminRequest),
}

/// The response to a [`ControllerRequest`], same variant.
#[derive(Clone, Debug, PartialEq)]
pub enum ControllerResponse {
    /// BrokerRegistration (62).
    BrokerRegistration(BrokerRegistrationResponse),
    /// BrokerHeartbeat (63).
    BrokerHeartbeat(BrokerHeartbeatResponse),
    /// CreateTopics (19).
    CreateTopics(CreateTopicsResponse),
    /// DeleteTopics (20).
    DeleteTopics(DeleteTopicsResponse),
    /// AllocateProducerIds (67).
    AllocateProducerIds(AllocateProducerIdsResponse),
    /// AlterPartition (56).
    AlterPartition(AlterPartitionResponse),
    /// AssignReplicasToDirs (73).
    AssignReplicasToDirs(AssignReplicasToDirsResponse),
    /// ControllerRegistration (70).
    ControllerRegistration(ControllerRegistrationResponse),
    /// DescribeCluster (60).
    DescribeCluster(DescribeClusterResponse),
    /// UnregisterBroker (64).
    UnregisterBroker(UnregisterBrokerResponse),
    /// The answer to an [`AdminRequest`].
    Admin(AdminResponse),
}

/// Admin requests the controller also serves (CreatePartitions, ElectLeaders, UpdateFeatures,
/// IncrementalAlterConfigs). Kept apart from [`ControllerRequest`] so that adding them did not
/// break exhaustive matches elsewhere; route them with
/// [`Controller::handle_admin`](crate::controller::Controller::handle_admin). The same
/// contract applies (append, replay, answer after commit).
#[derive(Clone, Debug)]
pub enum AdminRequest {
    /// CreatePartitions (37).
    CreatePartitions(CreatePartitionsRequest),
    /// ElectLeaders (43).
    ElectLeaders(ElectLeadersRequest),
    /// UpdateFeatures (57).
    UpdateFeatures(UpdateFeaturesRequest),
    /// IncrementalAlterConfigs (44).
    IncrementalAlterConfigs(IncrementalAlterConfigsRequest),
}

/// The response to an [`AdminRequest`], same variant.
#[derive(Clone, Debug, PartialEq)]
pub enum AdminResponse {
    /// CreatePartitions (37).
    CreatePartitions(CreatePartitionsResponse),
    /// ElectLeaders (43).
    ElectLeaders(ElectLeadersResponse),
    /// UpdateFeatures (57).
    UpdateFeatures(UpdateFeaturesResponse),
    /// IncrementalAlterConfigs (44).
    IncrementalAlterConfigs(IncrementalAlterConfigsResponse),
}

impl ControllerRequest {
    /// The Kafka API key of the request.
    pub fn api_key(&self) -> i16 {
        match self {
            ControllerRequest::BrokerRegistration(_) => 62,
            ControllerRequest::BrokerHeartbeat(_) => 63,
            ControllerRequest::CreateTopics(_) => 19,
            ControllerRequest::DeleteTopics(_) => 20,
            ControllerRequest::AllocateProducerIds(_) => 67,
            ControllerRequest::AlterPartition(_) => 56,
            ControllerRequest::AssignReplicasToDirs(_) => 73,
            ControllerRequest::ControllerRegistration(_) => 70,
            ControllerRequest::DescribeCluster(_) => 60,
            ControllerRequest::UnregisterBroker(_) => 64,
            ControllerRequest::Admin(AdminRequest::CreatePartitions(_)) => 37,
            ControllerRequest::Admin(AdminRequest::ElectLeaders(_)) => 43,
            ControllerRequest::Admin(AdminRequest::UpdateFeatures(_)) => 57,
            ControllerRequest::Admin(AdminRequest::IncrementalAlterConfigs(_)) => 44,
        }
    }
}

/// The response a non-active controller gives: NOT_CONTROLLER (41) where the broker's
/// `NodeToControllerRequestThread` looks for it (top level, or every topic of
/// CreateTopics/DeleteTopics), so it re-resolves the controller and retries.
pub fn not_controller_response(request: &ControllerRequest) -> ControllerResponse {
    let code = ResponseError::NotController.code();
    let message = || {
        Some(StrBytes::from_static_str(
            "This is not the correct controller for this cluster.",
        ))
    };
    match request {
        ControllerRequest::BrokerRegistration(_) => ControllerResponse::BrokerRegistration(
            BrokerRegistrationResponse::default().with_error_code(code),
        ),
        ControllerRequest::BrokerHeartbeat(_) => ControllerResponse::BrokerHeartbeat(
            BrokerHeartbeatResponse::default().with_error_code(code),
        ),
        ControllerRequest::CreateTopics(r) => ControllerResponse::CreateTopics(
            CreateTopicsResponse::default().with_topics(
                r.topics
                    .iter()
                    .map(|t| {
                        CreatableTopicResult::default()
                            .with_name(t.name.clone())
                            .with_error_code(code)
                            .with_error_message(message())
                    })
                    .collect(),
            ),
        ),
        ControllerRequest::DeleteTopics(r) => {
            let mut results: Vec<DeletableTopicResult> = r
                .topic_names
                .iter()
                .map(|n| {
                    DeletableTopicResult::default()
                        .with_name(Some(n.clone()))
                        .with_error_code(code)
                        .with_error_message(message())
                })
                .collect();
            results.extend(r.topics.iter().map(|t| {
                DeletableTopicResult::default()
                    .with_name(t.name.clone())
                    .with_topic_id(t.topic_id)
                    .with_error_code(code)
                    .with_error_message(message())
            }));
            ControllerResponse::DeleteTopics(
                DeleteTopicsResponse::default().with_responses(results),
            )
        }
        ControllerRequest::AllocateProducerIds(_) => ControllerResponse::AllocateProducerIds(
            AllocateProducerIdsResponse::default().with_error_code(code),
        ),
        ControllerRequest::AlterPartition(_) => ControllerResponse::AlterPartition(
            AlterPartitionResponse::default().with_error_code(code),
        ),
        ControllerRequest::AssignReplicasToDirs(_) => ControllerResponse::AssignReplicasToDirs(
            AssignReplicasToDirsResponse::default().with_error_code(code),
        ),
        ControllerRequest::ControllerRegistration(_) => ControllerResponse::ControllerRegistration(
            ControllerRegistrationResponse::default()
                .with_error_code(code)
                .with_error_message(message()),
        ),
        ControllerRequest::DescribeCluster(_) => ControllerResponse::DescribeCluster(
            DescribeClusterResponse::default()
                .with_error_code(code)
                .with_error_message(message()),
        ),
        ControllerRequest::UnregisterBroker(_) => ControllerResponse::UnregisterBroker(
            UnregisterBrokerResponse::default()
                .with_error_code(code)
                .with_error_message(message()),
        ),
        ControllerRequest::Admin(r) => ControllerResponse::Admin(not_controller_admin_response(r)),
    }
}

/// NOT_CONTROLLER (41) for an admin request: per topic (CreatePartitions), top level
/// (ElectLeaders, UpdateFeatures), per resource (IncrementalAlterConfigs).
pub fn not_controller_admin_response(request: &AdminRequest) -> AdminResponse {
    let code = ResponseError::NotController.code();
    match request {
        AdminRequest::CreatePartitions(r) => AdminResponse::CreatePartitions(CreatePartitionsResponse::default().with_results(
            r.topics
                .iter()
                .map(|t| {
                    kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult::default()
                        .with_name(t.name.clone())
                        .with_error_code(code)
                })
                .collect(),
        )),
        AdminRequest::ElectLeaders(_) => AdminResponse::ElectLeaders(ElectLeadersResponse::default().with_error_code(code)),
        AdminRequest::UpdateFeatures(_) => {
            AdminResponse::UpdateFeatures(UpdateFeaturesResponse::default().with_error_code(code).with_error_message(None))
        }
        AdminRequest::IncrementalAlterConfigs(r) => AdminResponse::IncrementalAlterConfigs(
            IncrementalAlterConfigsResponse::default().with_responses(
                r.resources
                    .iter()
                    .map(|x| {
                        kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse::default()
                            .with_resource_type(x.resource_type)
                            .with_resource_name(x.resource_name.clone())
                            .with_error_code(code)
                    })
                    .collect(),
            ),
        ),
    }
}
