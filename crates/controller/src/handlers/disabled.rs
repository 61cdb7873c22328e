//! APIs of features a kraftwerk controller runs without, answered the way a Kafka 4.1.2
//! controller without them answers (the client sees the same exception and message):
//!
//! * ACLs (DescribeAcls, CreateAcls, DeleteAcls): no `authorizer.class.name`, so
//!   SECURITY_DISABLED (`AclApis` with no authorizer).
//! * Delegation tokens (Create/Renew/ExpireDelegationToken): the answers of
//!   `ControllerApis.allowTokenRequests` (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED for direct
//!   requests and token-authenticated principals, from any controller) and, without
//!   `delegation.token.secret.key`, DELEGATION_TOKEN_AUTH_DISABLED from the active controller
//!   (`DelegationTokenControlManager`); with a secret, `handlers::delegation_tokens` serves them.
//! * Quorum reconfiguration (AddRaftVoter, RemoveRaftVoter, KIP-853): a static quorum
//!   (`kraft.version` 0) answers UNSUPPORTED_VERSION from the Raft leader
//!   (`KafkaRaftClient.handleAdd/RemoveVoterRequest`, `AddVoterHandler`, `RemoveVoterHandler`).

use crate::api::{message_text, ControllerApi};
use crate::validate::StringCheck;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::create_acls_response::AclCreationResult;
use kafka_protocol::messages::delete_acls_response::DeleteAclsFilterResult;
use kafka_protocol::messages::{
    AddRaftVoterRequest, AddRaftVoterResponse, CreateAclsRequest, CreateAclsResponse,
    CreateDelegationTokenRequest, CreateDelegationTokenResponse, DeleteAclsRequest,
    DeleteAclsResponse, DescribeAclsRequest, DescribeAclsResponse, ExpireDelegationTokenRequest,
    ExpireDelegationTokenResponse, RemoveRaftVoterRequest, RemoveRaftVoterResponse,
    RenewDelegationTokenRequest, RenewDelegationTokenResponse,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use crate::controller::{ControllerConfig, RequestContext};
use crate::request::Principal;

const SECURITY_DISABLED: i16 = ResponseError::SecurityDisabled.code();
const NO_AUTHORIZER: &str = "No Authorizer is configured.";

fn text(s: &str) -> Option<StrBytes> {
    Some(StrBytes::from_string(s.to_owned()))
}

/// DescribeAcls (api 29, v1-3) without an authorizer: SECURITY_DISABLED, "No Authorizer is
/// configured on the broker", no resources.
pub fn describe_acls() -> DescribeAclsResponse {
    DescribeAclsResponse::default()
        .with_error_code(SECURITY_DISABLED)
        .with_error_message(text("No Authorizer is configured on the broker"))
}

/// CreateAcls (api 30, v1-3) without an authorizer: SECURITY_DISABLED, "No Authorizer is
/// configured.", for every creation.
pub fn create_acls(request: &CreateAclsRequest) -> CreateAclsResponse {
    CreateAclsResponse::default().with_results(
        request
            .creations
            .iter()
            .map(|_| {
                AclCreationResult::default()
                    .with_error_code(SECURITY_DISABLED)
                    .with_error_message(text(NO_AUTHORIZER))
            })
            .collect(),
    )
}

/// DeleteAcls (api 31, v1-3) without an authorizer: SECURITY_DISABLED, "No Authorizer is
/// configured.", for every filter, no matching ACLs.
pub fn delete_acls(request: &DeleteAclsRequest) -> DeleteAclsResponse {
    DeleteAclsResponse::default().with_filter_results(
        request
            .filters
            .iter()
            .map(|_| {
                DeleteAclsFilterResult::default()
                    .with_error_code(SECURITY_DISABLED)
                    .with_error_message(text(NO_AUTHORIZER))
            })
            .collect(),
    )
}

/// `ControllerApis.allowTokenRequests`: forwarded requests are allowed (brokers check the
/// client's channel) unless the principal authenticated with a token; direct requests never
/// are (Java refuses them on PLAINTEXT and anonymous SSL; kraftwerk on every listener, so
/// tokens are created, renewed and expired only through brokers).
pub fn allow_token_requests(_config: &ControllerConfig, ctx: &RequestContext) -> bool {
    token_requests_allowed(ctx)
}

fn token_requests_allowed(ctx: &RequestContext) -> bool {
    ctx.forwarded && !ctx.principal.token_authenticated
}

/// The owner a CreateDelegationToken request names (type and name), else the requester
/// (`ControllerApis.handleCreateDelegationTokenRequest`).
pub(crate) fn token_owner(
    request: &CreateDelegationTokenRequest,
    requester: &Principal,
) -> (String, String) {
    match &request.owner_principal_name {
        Some(name) if !name.is_empty() => (
            request
                .owner_principal_type
                .as_ref()
                .map(|t| t.to_string())
                .unwrap_or_default(),
            name.to_string(),
        ),
        _ => (requester.principal_type.clone(), requester.name.clone()),
    }
}

/// CreateDelegationToken (api 38, v1-3) without delegation tokens: the owner (the request's
/// owner, else the requester) and requester principals, DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
/// (timestamps -1) when [`allow_token_requests`] refuses, else DELEGATION_TOKEN_AUTH_DISABLED
/// (timestamps 0). No token id, no HMAC.
pub fn create_delegation_token(
    ctx: &RequestContext,
    request: &CreateDelegationTokenRequest,
) -> CreateDelegationTokenResponse {
    let requester = &ctx.principal;
    let (owner_type, owner_name) = token_owner(request, requester);
    let (code, timestamp) = if token_requests_allowed(ctx) {
        (ResponseError::DelegationTokenAuthDisabled.code(), 0)
    } else {
        (ResponseError::DelegationTokenRequestNotAllowed.code(), -1)
    };
    CreateDelegationTokenResponse::default()
        .with_error_code(code)
        .with_principal_type(StrBytes::from_string(owner_type))
        .with_principal_name(StrBytes::from_string(owner_name))
        .with_token_requester_principal_type(StrBytes::from_string(
            requester.principal_type.clone(),
        ))
        .with_token_requester_principal_name(StrBytes::from_string(requester.name.clone()))
        .with_issue_timestamp_ms(timestamp)
        .with_expiry_timestamp_ms(timestamp)
        .with_max_timestamp_ms(timestamp)
}

/// RenewDelegationToken (api 39, v1-2) without delegation tokens: as
/// [`create_delegation_token`], expiry timestamp -1 or 0.
pub fn renew_delegation_token(ctx: &RequestContext) -> RenewDelegationTokenResponse {
    let (code, expiry) = token_refusal(ctx);
    RenewDelegationTokenResponse::default()
        .with_error_code(code)
        .with_expiry_timestamp_ms(expiry)
}

/// ExpireDelegationToken (api 40, v1-2) without delegation tokens: as
/// [`renew_delegation_token`].
pub fn expire_delegation_token(ctx: &RequestContext) -> ExpireDelegationTokenResponse {
    let (code, expiry) = token_refusal(ctx);
    ExpireDelegationTokenResponse::default()
        .with_error_code(code)
        .with_expiry_timestamp_ms(expiry)
}

fn token_refusal(ctx: &RequestContext) -> (i16, i64) {
    if token_requests_allowed(ctx) {
        (ResponseError::DelegationTokenAuthDisabled.code(), 0)
    } else {
        (ResponseError::DelegationTokenRequestNotAllowed.code(), -1)
    }
}

/// Where this node stands in the quorum, for the voter-change checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuorumRole {
    /// Not the Raft leader.
    NotLeader,
    /// The Raft leader, but the controller is not active yet (its epoch is not committed:
    /// Java's "high watermark not established").
    LeaderCatchingUp,
    /// The Raft leader and active controller.
    Leader,
}

/// The checks both voter changes share, in `KafkaRaftClient`'s order; `Err` is the answer.
fn voter_change_checks(
    config: &ControllerConfig,
    role: QuorumRole,
    cluster_id: Option<&StrBytes>,
    voter_id: i32,
    voter_directory_id: Uuid,
    verb: &str,
) -> Result<(), (i16, Option<String>)> {
    if let Some(id) = cluster_id {
        if id.as_str() != config.cluster_id {
            return Err((
                ResponseError::InconsistentClusterId.code(),
                Some(format!(
                    "The given id \"{id}\" doesn't match the cluster id \"{}\"",
                    config.cluster_id
                )),
            ));
        }
    }
    if role == QuorumRole::NotLeader {
        return Err((ResponseError::NotLeaderOrFollower.code(), None));
    }
    if voter_id < 0 || voter_directory_id.is_nil() {
        let noun = if verb == "adding" { "Add" } else { "Remove" };
        return Err((
            ResponseError::InvalidRequest.code(),
            Some(format!("{noun} voter request didn't include a valid voter")),
        ));
    }
    Ok(())
}

fn leader_checks(config: &ControllerConfig, role: QuorumRole, verb: &str) -> (i16, Option<String>) {
    if role == QuorumRole::LeaderCatchingUp {
        return (
            ResponseError::RequestTimedOut.code(),
            Some("Request timed out waiting for leader to establish HWM and fence previous voter changes".to_owned()),
        );
    }
    let message = if config.kraft_version == 0 {
        format!("Cluster doesn't support {verb} voter because the kraft.version feature is 0")
    } else {
        // kraftwerk implements only static quorums.
        format!(
            "This controller doesn't support {verb} voter (kraft.version {}): kraftwerk runs static quorums only",
            config.kraft_version
        )
    };
    (ResponseError::UnsupportedVersion.code(), Some(message))
}

/// AddRaftVoter (api 80, v0) on a static quorum: INCONSISTENT_CLUSTER_ID (given cluster id
/// differs), NOT_LEADER_OR_FOLLOWER (no message) on a non-leader, INVALID_REQUEST (no voter
/// id or directory id; no endpoint for `ctx.listener_name`, the listener Raft uses), then
/// UNSUPPORTED_VERSION "Cluster doesn't support adding voter because the kraft.version feature
/// is 0" (REQUEST_TIMED_OUT while the new leader's epoch is not committed yet).
pub fn add_raft_voter(
    config: &ControllerConfig,
    ctx: &RequestContext,
    role: QuorumRole,
    request: &AddRaftVoterRequest,
) -> AddRaftVoterResponse {
    let check = voter_change_checks(
        config,
        role,
        request.cluster_id.as_ref(),
        request.voter_id,
        request.voter_directory_id,
        "adding",
    )
    .and_then(|()| {
        let listener = ctx.listener_name.to_ascii_uppercase();
        if request.listeners.iter().any(|l| l.name.as_str().to_ascii_uppercase() == listener) {
            return Ok(());
        }
        let endpoints: Vec<String> = request
            .listeners
            .iter()
            .map(|l| format!("ListenerName({})={}/<unresolved>:{}", l.name.as_str().to_ascii_uppercase(), l.host, l.port))
            .collect();
        Err((
            ResponseError::InvalidRequest.code(),
            Some(format!(
                "Add voter request didn't include the endpoint (Endpoints(endpoints={{{}}})) for the default listener ListenerName({})",
                endpoints.join(", "),
                ctx.listener_name
            )),
        ))
    });
    let (code, message) = match check {
        Err(answer) => answer,
        Ok(()) => leader_checks(config, role, "adding"),
    };
    AddRaftVoterResponse::default()
        .with_error_code(code)
        .with_error_message(message.map(StrBytes::from_string))
}

/// RemoveRaftVoter (api 81, v0) on a static quorum: as [`add_raft_voter`] without the
/// endpoint check; "Cluster doesn't support removing voter because the kraft.version feature
/// is 0".
pub fn remove_raft_voter(
    config: &ControllerConfig,
    role: QuorumRole,
    request: &RemoveRaftVoterRequest,
) -> RemoveRaftVoterResponse {
    let (code, message) = match voter_change_checks(
        config,
        role,
        request.cluster_id.as_ref(),
        request.voter_id,
        request.voter_directory_id,
        "removing",
    ) {
        Err(answer) => answer,
        Ok(()) => leader_checks(config, role, "removing"),
    };
    RemoveRaftVoterResponse::default()
        .with_error_code(code)
        .with_error_message(message.map(StrBytes::from_string))
}

impl ControllerApi for DescribeAclsRequest {
    type Response = DescribeAclsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        check
            .optional("resourceNameFilter", self.resource_name_filter.as_deref())
            .optional("principalFilter", self.principal_filter.as_deref())
            .optional("hostFilter", self.host_filter.as_deref());
    }

    fn error_response(&self, code: i16, message: Option<&str>) -> DescribeAclsResponse {
        DescribeAclsResponse::default()
            .with_error_code(code)
            .with_error_message(message_text(message))
    }
}

impl ControllerApi for CreateAclsRequest {
    type Response = CreateAclsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        for creation in &self.creations {
            check
                .field("resourceName", &creation.resource_name)
                .field("principal", &creation.principal)
                .field("host", &creation.host);
        }
    }

    /// One result per creation.
    fn error_response(&self, code: i16, message: Option<&str>) -> CreateAclsResponse {
        CreateAclsResponse::default().with_results(
            self.creations
                .iter()
                .map(|_| {
                    AclCreationResult::default()
                        .with_error_code(code)
                        .with_error_message(message_text(message))
                })
                .collect(),
        )
    }
}

impl ControllerApi for DeleteAclsRequest {
    type Response = DeleteAclsResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        for filter in &self.filters {
            check
                .optional("resourceNameFilter", filter.resource_name_filter.as_deref())
                .optional("principalFilter", filter.principal_filter.as_deref())
                .optional("hostFilter", filter.host_filter.as_deref());
        }
    }

    /// One result per filter.
    fn error_response(&self, code: i16, message: Option<&str>) -> DeleteAclsResponse {
        DeleteAclsResponse::default().with_filter_results(
            self.filters
                .iter()
                .map(|_| {
                    DeleteAclsFilterResult::default()
                        .with_error_code(code)
                        .with_error_message(message_text(message))
                })
                .collect(),
        )
    }
}

impl ControllerApi for CreateDelegationTokenRequest {
    type Response = CreateDelegationTokenResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        check
            .optional("ownerPrincipalType", self.owner_principal_type.as_deref())
            .optional("ownerPrincipalName", self.owner_principal_name.as_deref());
        for renewer in &self.renewers {
            check
                .field("principalType", &renewer.principal_type)
                .field("principalName", &renewer.principal_name);
        }
    }

    fn error_response(&self, code: i16, _message: Option<&str>) -> CreateDelegationTokenResponse {
        CreateDelegationTokenResponse::default().with_error_code(code)
    }
}

impl ControllerApi for RenewDelegationTokenRequest {
    type Response = RenewDelegationTokenResponse;

    /// No string fields.
    fn check_strings(&self, _check: &mut StringCheck) {}

    fn error_response(&self, code: i16, _message: Option<&str>) -> RenewDelegationTokenResponse {
        RenewDelegationTokenResponse::default().with_error_code(code)
    }
}

impl ControllerApi for ExpireDelegationTokenRequest {
    type Response = ExpireDelegationTokenResponse;

    /// No string fields.
    fn check_strings(&self, _check: &mut StringCheck) {}

    fn error_response(&self, code: i16, _message: Option<&str>) -> ExpireDelegationTokenResponse {
        ExpireDelegationTokenResponse::default().with_error_code(code)
    }
}

impl ControllerApi for AddRaftVoterRequest {
    type Response = AddRaftVoterResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        check.optional("clusterId", self.cluster_id.as_deref());
        for listener in &self.listeners {
            check
                .field("name", &listener.name)
                .field("host", &listener.host);
        }
    }

    fn error_response(&self, code: i16, message: Option<&str>) -> AddRaftVoterResponse {
        AddRaftVoterResponse::default()
            .with_error_code(code)
            .with_error_message(message_text(message))
    }
}

impl ControllerApi for RemoveRaftVoterRequest {
    type Response = RemoveRaftVoterResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        check.optional("clusterId", self.cluster_id.as_deref());
    }

    fn error_response(&self, code: i16, message: Option<&str>) -> RemoveRaftVoterResponse {
        RemoveRaftVoterResponse::default()
            .with_error_code(code)
            .with_error_message(message_text(message))
    }
}
