//! The request and response types of the controller API and the context a request comes
//! with; the NOT_CONTROLLER answers of a standby.

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{
    AddRaftVoterRequest, AddRaftVoterResponse, AllocateProducerIdsRequest,
    AllocateProducerIdsResponse, AlterClientQuotasRequest, AlterClientQuotasResponse,
    AlterConfigsRequest, AlterConfigsResponse, AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse, AlterPartitionRequest, AlterPartitionResponse,
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
    AssignReplicasToDirsRequest, AssignReplicasToDirsResponse, BrokerHeartbeatRequest,
    BrokerHeartbeatResponse, BrokerRegistrationRequest, BrokerRegistrationResponse,
    ControllerRegistrationRequest, ControllerRegistrationResponse, CreateAclsRequest,
    CreateAclsResponse, CreateDelegationTokenRequest, CreateDelegationTokenResponse,
    CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse,
    DeleteAclsRequest, DeleteAclsResponse, DeleteTopicsRequest, DeleteTopicsResponse,
    DescribeAclsRequest, DescribeAclsResponse, DescribeClusterRequest, DescribeClusterResponse,
    DescribeConfigsRequest, DescribeConfigsResponse, ElectLeadersRequest, ElectLeadersResponse,
    ExpireDelegationTokenRequest, ExpireDelegationTokenResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse, ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse, RemoveRaftVoterRequest, RemoveRaftVoterResponse,
    RenewDelegationTokenRequest, RenewDelegationTokenResponse, UnregisterBrokerRequest,
    UnregisterBrokerResponse, UpdateFeaturesRequest, UpdateFeaturesResponse,
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
    /// Who the request runs as: the client's principal for a forwarded request, else the
    /// connection's (`User:ANONYMOUS` on a PLAINTEXT listener).
    pub principal: Principal,
    /// True if the request arrived inside an Envelope (`RequestChannel.Request.isForwarded`).
    pub forwarded: bool,
}

/// A Kafka principal (`KafkaPrincipal`): type, name, and whether it authenticated with a
/// delegation token. The default is `User:ANONYMOUS`, the principal of every PLAINTEXT
/// connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// Principal type, e.g. `User`.
    pub principal_type: String,
    /// Principal name, e.g. `ANONYMOUS`.
    pub name: String,
    /// Whether the client authenticated with a delegation token.
    pub token_authenticated: bool,
}

impl Default for Principal {
    fn default() -> Self {
        Principal {
            principal_type: "User".to_owned(),
            name: "ANONYMOUS".to_owned(),
            token_authenticated: false,
        }
    }
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

/// Admin requests the controller also serves: the admin APIs brokers forward and those a
/// `--bootstrap-controller` admin client sends directly. Kept apart from [`ControllerRequest`]
/// so that adding them did not break exhaustive matches elsewhere; route them with
/// [`Controller::handle_admin`](crate::controller::Controller::handle_admin). The same
/// contract applies (append, replay, answer after commit). Some are answered by any
/// controller, active or not, without records: see [`AdminRequest::is_answered_locally`].
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
    /// AlterPartitionReassignments (45).
    AlterPartitionReassignments(AlterPartitionReassignmentsRequest),
    /// ListPartitionReassignments (46).
    ListPartitionReassignments(ListPartitionReassignmentsRequest),
    /// DescribeConfigs (32).
    DescribeConfigs(DescribeConfigsRequest),
    /// AlterConfigs (33), the legacy whole-resource replacement.
    AlterConfigs(AlterConfigsRequest),
    /// AlterClientQuotas (49).
    AlterClientQuotas(AlterClientQuotasRequest),
    /// AlterUserScramCredentials (51).
    AlterUserScramCredentials(AlterUserScramCredentialsRequest),
    /// DescribeAcls (29).
    DescribeAcls(DescribeAclsRequest),
    /// CreateAcls (30).
    CreateAcls(CreateAclsRequest),
    /// DeleteAcls (31).
    DeleteAcls(DeleteAclsRequest),
    /// CreateDelegationToken (38).
    CreateDelegationToken(CreateDelegationTokenRequest),
    /// RenewDelegationToken (39).
    RenewDelegationToken(RenewDelegationTokenRequest),
    /// ExpireDelegationToken (40).
    ExpireDelegationToken(ExpireDelegationTokenRequest),
    /// AddRaftVoter (80).
    AddRaftVoter(AddRaftVoterRequest),
    /// RemoveRaftVoter (81).
    RemoveRaftVoter(RemoveRaftVoterRequest),
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
    /// AlterPartitionReassignments (45).
    AlterPartitionReassignments(AlterPartitionReassignmentsResponse),
    /// ListPartitionReassignments (46).
    ListPartitionReassignments(ListPartitionReassignmentsResponse),
    /// DescribeConfigs (32).
    DescribeConfigs(DescribeConfigsResponse),
    /// AlterConfigs (33).
    AlterConfigs(AlterConfigsResponse),
    /// AlterClientQuotas (49).
    AlterClientQuotas(AlterClientQuotasResponse),
    /// AlterUserScramCredentials (51).
    AlterUserScramCredentials(AlterUserScramCredentialsResponse),
    /// DescribeAcls (29).
    DescribeAcls(DescribeAclsResponse),
    /// CreateAcls (30).
    CreateAcls(CreateAclsResponse),
    /// DeleteAcls (31).
    DeleteAcls(DeleteAclsResponse),
    /// CreateDelegationToken (38).
    CreateDelegationToken(CreateDelegationTokenResponse),
    /// RenewDelegationToken (39).
    RenewDelegationToken(RenewDelegationTokenResponse),
    /// ExpireDelegationToken (40).
    ExpireDelegationToken(ExpireDelegationTokenResponse),
    /// AddRaftVoter (80).
    AddRaftVoter(AddRaftVoterResponse),
    /// RemoveRaftVoter (81).
    RemoveRaftVoter(RemoveRaftVoterResponse),
}

impl AdminRequest {
    /// The Kafka API key of the request.
    pub fn api_key(&self) -> i16 {
        match self {
            AdminRequest::CreatePartitions(_) => 37,
            AdminRequest::ElectLeaders(_) => 43,
            AdminRequest::UpdateFeatures(_) => 57,
            AdminRequest::IncrementalAlterConfigs(_) => 44,
            AdminRequest::AlterPartitionReassignments(_) => 45,
            AdminRequest::ListPartitionReassignments(_) => 46,
            AdminRequest::DescribeConfigs(_) => 32,
            AdminRequest::AlterConfigs(_) => 33,
            AdminRequest::AlterClientQuotas(_) => 49,
            AdminRequest::AlterUserScramCredentials(_) => 51,
            AdminRequest::DescribeAcls(_) => 29,
            AdminRequest::CreateAcls(_) => 30,
            AdminRequest::DeleteAcls(_) => 31,
            AdminRequest::CreateDelegationToken(_) => 38,
            AdminRequest::RenewDelegationToken(_) => 39,
            AdminRequest::ExpireDelegationToken(_) => 40,
            AdminRequest::AddRaftVoter(_) => 80,
            AdminRequest::RemoveRaftVoter(_) => 81,
        }
    }

    /// Whether any controller, active or standby, answers this request itself from its
    /// committed image and configuration, without writing records (Java answers these in
    /// `ControllerApis`, `ConfigHelper`, a `QuorumController` read event or the Raft client,
    /// never with NOT_CONTROLLER): DescribeConfigs, ListPartitionReassignments, the ACL APIs
    /// (no authorizer), AddRaftVoter/RemoveRaftVoter (the Raft leader check is part of the
    /// answer), and delegation-token requests refused before they reach the quorum controller
    /// (`ControllerApis.allowTokenRequests`).
    pub fn is_answered_locally(&self, ctx: &RequestContext) -> bool {
        match self {
            AdminRequest::DescribeConfigs(_)
            | AdminRequest::ListPartitionReassignments(_)
            | AdminRequest::DescribeAcls(_)
            | AdminRequest::CreateAcls(_)
            | AdminRequest::DeleteAcls(_)
            | AdminRequest::AddRaftVoter(_)
            | AdminRequest::RemoveRaftVoter(_) => true,
            AdminRequest::CreateDelegationToken(_)
            | AdminRequest::RenewDelegationToken(_)
            | AdminRequest::ExpireDelegationToken(_) => {
                !crate::handlers::disabled::allow_token_requests(ctx)
            }
            AdminRequest::CreatePartitions(_)
            | AdminRequest::ElectLeaders(_)
            | AdminRequest::UpdateFeatures(_)
            | AdminRequest::IncrementalAlterConfigs(_)
            | AdminRequest::AlterPartitionReassignments(_)
            | AdminRequest::AlterConfigs(_)
            | AdminRequest::AlterClientQuotas(_)
            | AdminRequest::AlterUserScramCredentials(_) => false,
        }
    }
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
            ControllerRequest::Admin(admin) => admin.api_key(),
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

/// NOT_CONTROLLER (41) for an admin request, where Java's `getErrorResponse` puts an error
/// (and so where brokers and `RequestChannel` look for it): per topic (CreatePartitions), top
/// level (ElectLeaders, UpdateFeatures, ListPartitionReassignments, DescribeAcls, the
/// delegation-token and Raft-voter APIs), top level and per partition
/// (AlterPartitionReassignments), per resource (IncrementalAlterConfigs, AlterConfigs,
/// DescribeConfigs), per entry (AlterClientQuotas, CreateAcls, DeleteAcls), per user, sorted
/// and distinct (AlterUserScramCredentials).
pub fn not_controller_admin_response(request: &AdminRequest) -> AdminResponse {
    use kafka_protocol::messages::{
        alter_client_quotas_response as quotas, alter_configs_response as alter_configs,
        alter_partition_reassignments_response as reassign,
        alter_user_scram_credentials_response as scram, create_acls_response as create_acls,
        delete_acls_response as delete_acls, describe_configs_response as describe_configs,
    };
    let code = ResponseError::NotController.code();
    let message = || {
        Some(StrBytes::from_static_str(
            "This is not the correct controller for this cluster.",
        ))
    };
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
        AdminRequest::AlterPartitionReassignments(r) => AdminResponse::AlterPartitionReassignments(
            AlterPartitionReassignmentsResponse::default()
                .with_error_code(code)
                .with_error_message(message())
                .with_responses(
                    r.topics
                        .iter()
                        .map(|t| {
                            reassign::ReassignableTopicResponse::default().with_name(t.name.clone()).with_partitions(
                                t.partitions
                                    .iter()
                                    .map(|p| {
                                        reassign::ReassignablePartitionResponse::default()
                                            .with_partition_index(p.partition_index)
                                            .with_error_code(code)
                                            .with_error_message(message())
                                    })
                                    .collect(),
                            )
                        })
                        .collect(),
                ),
        ),
        AdminRequest::ListPartitionReassignments(_) => AdminResponse::ListPartitionReassignments(
            ListPartitionReassignmentsResponse::default().with_error_code(code).with_error_message(message()),
        ),
        AdminRequest::DescribeConfigs(r) => AdminResponse::DescribeConfigs(
            DescribeConfigsResponse::default().with_results(
                r.resources
                    .iter()
                    .map(|x| {
                        describe_configs::DescribeConfigsResult::default()
                            .with_resource_type(x.resource_type)
                            .with_resource_name(x.resource_name.clone())
                            .with_error_code(code)
                            .with_error_message(message())
                    })
                    .collect(),
            ),
        ),
        AdminRequest::AlterConfigs(r) => AdminResponse::AlterConfigs(
            AlterConfigsResponse::default().with_responses(
                r.resources
                    .iter()
                    .map(|x| {
                        alter_configs::AlterConfigsResourceResponse::default()
                            .with_resource_type(x.resource_type)
                            .with_resource_name(x.resource_name.clone())
                            .with_error_code(code)
                            .with_error_message(message())
                    })
                    .collect(),
            ),
        ),
        AdminRequest::AlterClientQuotas(r) => AdminResponse::AlterClientQuotas(
            AlterClientQuotasResponse::default().with_entries(
                r.entries
                    .iter()
                    .map(|e| {
                        quotas::EntryData::default()
                            .with_error_code(code)
                            .with_error_message(message())
                            .with_entity(
                                e.entity
                                    .iter()
                                    .map(|d| {
                                        quotas::EntityData::default()
                                            .with_entity_type(d.entity_type.clone())
                                            .with_entity_name(d.entity_name.clone())
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            ),
        ),
        AdminRequest::AlterUserScramCredentials(r) => {
            let users: std::collections::BTreeSet<&StrBytes> =
                r.deletions.iter().map(|d| &d.name).chain(r.upsertions.iter().map(|u| &u.name)).collect();
            AdminResponse::AlterUserScramCredentials(
                AlterUserScramCredentialsResponse::default().with_results(
                    users
                        .into_iter()
                        .map(|u| {
                            scram::AlterUserScramCredentialsResult::default()
                                .with_user(u.clone())
                                .with_error_code(code)
                                .with_error_message(message())
                        })
                        .collect(),
                ),
            )
        }
        AdminRequest::DescribeAcls(_) => {
            AdminResponse::DescribeAcls(DescribeAclsResponse::default().with_error_code(code).with_error_message(message()))
        }
        AdminRequest::CreateAcls(r) => AdminResponse::CreateAcls(
            CreateAclsResponse::default().with_results(
                r.creations
                    .iter()
                    .map(|_| create_acls::AclCreationResult::default().with_error_code(code).with_error_message(message()))
                    .collect(),
            ),
        ),
        AdminRequest::DeleteAcls(r) => AdminResponse::DeleteAcls(
            DeleteAclsResponse::default().with_filter_results(
                r.filters
                    .iter()
                    .map(|_| delete_acls::DeleteAclsFilterResult::default().with_error_code(code).with_error_message(message()))
                    .collect(),
            ),
        ),
        AdminRequest::CreateDelegationToken(_) => {
            AdminResponse::CreateDelegationToken(CreateDelegationTokenResponse::default().with_error_code(code))
        }
        AdminRequest::RenewDelegationToken(_) => {
            AdminResponse::RenewDelegationToken(RenewDelegationTokenResponse::default().with_error_code(code))
        }
        AdminRequest::ExpireDelegationToken(_) => {
            AdminResponse::ExpireDelegationToken(ExpireDelegationTokenResponse::default().with_error_code(code))
        }
        AdminRequest::AddRaftVoter(_) => {
            AdminResponse::AddRaftVoter(AddRaftVoterResponse::default().with_error_code(code).with_error_message(message()))
        }
        AdminRequest::RemoveRaftVoter(_) => {
            AdminResponse::RemoveRaftVoter(RemoveRaftVoterResponse::default().with_error_code(code).with_error_message(message()))
        }
    }
}
