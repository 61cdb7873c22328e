//! The one list of controller APIs. Every request a controller serves (besides the Raft RPCs,
//! ApiVersions and Envelope) is one line of [`controller_apis!`] below; from it come the
//! [`ControllerRequest`] / [`ControllerResponse`] enums, api keys, names, the served version
//! ranges, the conversions from and to `kafka-protocol`'s `RequestKind` / `ResponseKind`, who
//! answers the request (any controller from its committed image, or only the active one), the
//! NOT_CONTROLLER answer, and the dispatch to the handler.
//!
//! Adding an API: one line here, its handler function, and `impl ControllerApi` for its
//! request type next to the handler (the error response Java's `AbstractRequest
//! .getErrorResponse` builds for it, and the request's string fields, which
//! `Controller::handle` checks against Kafka's limit before any handler runs).
//!
//! Line format: `Name(RequestType => ResponseType) versions min..=max, kind |c, r| body;`
//! - `write`: only the active controller answers (others NOT_CONTROLLER); `c` is a
//!   [`WriteContext`] over the latest image and `body` returns a `ControllerResult`.
//! - `read`: any controller answers from its committed image without writing; `c` is a
//!   [`ReadContext`] and `body` returns the response.
//! - `read_unless(f)`: `read`, except that when `f(config, ctx)` holds the request needs the
//!   active controller (still answered by the same body, without records).
//! - `write_if(f) |c, r| body, otherwise read_body`: `write` when `f(config, ctx)` holds, else `read`
//!   with `read_body` (e.g. the ACL APIs: written with an authorizer, SECURITY_DISABLED from any
//!   controller without one).

use kafka_protocol::messages::*;
use kraftwerk_protocol::constants::{NOT_CONTROLLER, NOT_CONTROLLER_MESSAGE};

use crate::controller::{ControllerConfig, ControllerRng};
use crate::handlers::disabled::QuorumRole;
use crate::handlers::{
    acls, admin, cluster, configs, delegation_tokens, describe_configs, disabled, partitions,
    producer_ids, quotas, reassignment, scram, topics,
};
use crate::heartbeat::BrokerHeartbeatManager;
use crate::image::MetadataImage;
use crate::request::{ControllerResult, RequestContext};
use crate::validate::StringCheck;

/// What every controller request type provides besides its handler.
pub trait ControllerApi {
    /// The response type.
    type Response;

    /// The response reporting `code` (and `message`) everywhere Java's
    /// `AbstractRequest.getErrorResponse` puts the error for this request (top level, per
    /// topic, per resource, …), shaped from the request (topic names, resources kept).
    fn error_response(&self, code: i16, message: Option<&str>) -> Self::Response;

    /// Passes every string field of the request to `check` (Kafka's JSON field names), so that a
    /// request Java's generated reader would refuse to decode — a string over 32,767 bytes of
    /// UTF-8 — is answered INVALID_REQUEST before its handler builds any record from it.
    fn check_strings(&self, check: &mut StringCheck);

    /// A one-line operator-facing description for the log line of a request that writes
    /// records; `None` logs the api name only.
    fn summary(&self) -> Option<String> {
        None
    }
}

/// Who may answer a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnsweredBy {
    /// Any controller, from its committed image and configuration, without records.
    AnyController,
    /// Only the active controller; the others answer NOT_CONTROLLER.
    ActiveController,
}

/// What a `read` handler sees: the committed image, the configuration, the request context
/// and where this node stands in the quorum.
pub struct ReadContext<'a> {
    /// The committed image (the latest one when the active controller answers).
    pub image: &'a MetadataImage,
    /// The controller configuration.
    pub config: &'a ControllerConfig,
    /// The request context.
    pub ctx: &'a RequestContext,
    /// Raft leader, leader catching up, or not the leader.
    pub role: QuorumRole,
}

/// What a `write` handler sees on the active controller.
pub struct WriteContext<'a> {
    /// The latest image (committed plus what this controller appended and replayed).
    pub image: &'a MetadataImage,
    /// The controller configuration.
    pub config: &'a ControllerConfig,
    /// The request context.
    pub ctx: &'a RequestContext,
    /// Topic ids and replica placement.
    pub rng: &'a mut ControllerRng,
    /// Broker sessions.
    pub heartbeats: &'a mut BrokerHeartbeatManager,
}

impl WriteContext<'_> {
    fn as_read(&self) -> ReadContext<'_> {
        ReadContext {
            image: self.image,
            config: self.config,
            ctx: self.ctx,
            role: QuorumRole::Leader,
        }
    }
}

/// Whether the ACL APIs are served (`authorizer.class.name` is StandardAuthorizer).
fn acls_enabled(config: &ControllerConfig, _ctx: &RequestContext) -> bool {
    config.authorizer.is_some()
}

fn no_records<R>(response: R) -> ControllerResult<R> {
    ControllerResult::of(Vec::new(), response)
}

/// An error message in the wire's string type.
pub(crate) fn message_text(message: Option<&str>) -> Option<kafka_protocol::protocol::StrBytes> {
    message.map(|m| kafka_protocol::protocol::StrBytes::from_string(m.to_owned()))
}

macro_rules! controller_apis {
    (@answered_by write, $cfg:ident, $ctx:ident) => { AnsweredBy::ActiveController };
    (@answered_by read, $cfg:ident, $ctx:ident) => { AnsweredBy::AnyController };
    (@answered_by read_unless($f:path), $cfg:ident, $ctx:ident) => {
        if $f($cfg, $ctx) { AnsweredBy::ActiveController } else { AnsweredBy::AnyController }
    };
    (@answered_by write_if($f:path), $cfg:ident, $ctx:ident) => {
        controller_apis!(@answered_by read_unless($f), $cfg, $ctx)
    };
    (@write write, $c:ident, $body:expr) => { $body };
    (@write read, $c:ident, $body:expr) => {{
        let $c = &$c.as_read();
        let _ = $c;
        no_records($body)
    }};
    (@write read_unless($f:path), $c:ident, $body:expr) => {
        controller_apis!(@write read, $c, $body)
    };
    (@write write_if($f:path), $c:ident, $body:expr, $rbody:expr) => {
        if $f($c.config, $c.ctx) { $body } else { controller_apis!(@write read, $c, $rbody) }
    };
    (@read write, $c:ident, $body:expr) => { None };
    (@read read, $c:ident, $body:expr) => { Some($body) };
    (@read read_unless($f:path), $c:ident, $body:expr) => { Some($body) };
    (@read write_if($f:path), $c:ident, $body:expr, $rbody:expr) => {
        if $f($c.config, $c.ctx) { None } else { Some($rbody) }
    };
    ($(
        $(#[doc = $doc:literal])*
        $name:ident($req:ty => $resp:ty) versions $min:literal ..= $max:literal,
            $kind:ident $(($f:path))? |$c:ident, $r:ident| $body:expr $(, otherwise $rbody:expr)?;
    )*) => {
        /// A request the controller handles: one variant per line of the API list.
        #[derive(Clone, Debug)]
        #[allow(clippy::large_enum_variant)] // one per request in flight; boxing buys nothing
        pub enum ControllerRequest {
            $( $(#[doc = $doc])* $name($req), )*
        }

        /// The response to a [`ControllerRequest`], same variant.
        #[derive(Clone, Debug, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum ControllerResponse {
            $( $(#[doc = $doc])* $name($resp), )*
        }

        /// `(api, min version, max version)` of every controller API, in list order.
        pub const CONTROLLER_APIS: &[(ApiKey, i16, i16)] = &[ $( (ApiKey::$name, $min, $max), )* ];

        impl ControllerRequest {
            /// The Kafka api of the request.
            pub fn api_key(&self) -> ApiKey {
                match self { $( Self::$name(_) => ApiKey::$name, )* }
            }

            /// The api's name, e.g. `CreateTopics`.
            pub fn name(&self) -> &'static str {
                match self { $( Self::$name(_) => stringify!($name), )* }
            }

            /// The controller request in `kind`, or `kind` back if it is not a controller API.
            // The input comes back unchanged on Err; boxing it would allocate on every route.
            #[allow(clippy::result_large_err)]
            pub fn from_kind(kind: RequestKind) -> Result<Self, RequestKind> {
                match kind {
                    $( RequestKind::$name(r) => Ok(Self::$name(r)), )*
                    other => Err(other),
                }
            }

            /// Who may answer this request, given the configuration and its context.
            pub fn answered_by(&self, config: &ControllerConfig, ctx: &RequestContext) -> AnsweredBy {
                let _ = (config, ctx);
                match self { $( Self::$name(_) => controller_apis!(@answered_by $kind $(($f))?, config, ctx), )* }
            }

            /// The answer reporting `code` with `message` wherever Java's `getErrorResponse`
            /// puts it (see [`ControllerApi::error_response`]).
            pub fn error_response(&self, code: i16, message: Option<&str>) -> ControllerResponse {
                match self { $( Self::$name(r) => ControllerResponse::$name(r.error_response(code, message)), )* }
            }

            /// `Err(INVALID_REQUEST)` if a string of the request is longer than Kafka allows
            /// (see [`ControllerApi::check_strings`]).
            pub fn check_strings(&self) -> Result<(), crate::error::ApiError> {
                let mut check = StringCheck::new();
                match self { $( Self::$name(r) => r.check_strings(&mut check), )* }
                check.into_result()
            }

            /// The answer of a controller that is not the active one: NOT_CONTROLLER (41)
            /// wherever the broker's `NodeToControllerRequestThread` looks for it.
            pub fn not_controller_response(&self) -> ControllerResponse {
                self.error_response(NOT_CONTROLLER, Some(NOT_CONTROLLER_MESSAGE))
            }

            /// The log line's description of the request.
            pub fn summary(&self) -> String {
                match self { $( Self::$name(r) => r.summary().unwrap_or_else(|| stringify!($name).to_owned()), )* }
            }

            /// Runs the handler of a request any controller answers; `None` for requests
            /// only the active controller handles.
            pub(crate) fn read(&self, c: &ReadContext<'_>) -> Option<ControllerResponse> {
                match self {
                    $( Self::$name($r) => {
                        let $c = c;
                        let _ = (&$c, &$r);
                        controller_apis!(@read $kind $(($f))?, $c, $body $(, $rbody)?).map(ControllerResponse::$name)
                    } )*
                }
            }

            /// Runs the handler on the active controller.
            pub(crate) fn write(&self, c: &mut WriteContext<'_>) -> ControllerResult<ControllerResponse> {
                match self {
                    $( Self::$name($r) => {
                        let $c = c;
                        let _ = &$r;
                        controller_apis!(@write $kind $(($f))?, $c, $body $(, $rbody)?).map(ControllerResponse::$name)
                    } )*
                }
            }
        }

        impl ControllerResponse {
            /// The Kafka api of the response.
            pub fn api_key(&self) -> ApiKey {
                match self { $( Self::$name(_) => ApiKey::$name, )* }
            }

            /// The wire form.
            pub fn into_kind(self) -> ResponseKind {
                match self { $( Self::$name(r) => ResponseKind::$name(r), )* }
            }
        }
    };
}

controller_apis! {
    /// CreateTopics (19).
    CreateTopics(CreateTopicsRequest => CreateTopicsResponse) versions 2..=7,
        write |c, r| topics::create_topics(c.image, c.config, c.rng, c.ctx, r);
    /// DeleteTopics (20).
    DeleteTopics(DeleteTopicsRequest => DeleteTopicsResponse) versions 1..=6,
        write |c, r| topics::delete_topics(c.image, c.config, c.ctx, r);
    /// DescribeAcls (29): from the committed image with an authorizer, else SECURITY_DISABLED.
    DescribeAcls(DescribeAclsRequest => DescribeAclsResponse) versions 1..=3,
        read |c, r| match c.config.authorizer {
            Some(_) => acls::describe_acls(c.image, r),
            None => disabled::describe_acls(),
        };
    /// CreateAcls (30): written with an authorizer, else SECURITY_DISABLED.
    CreateAcls(CreateAclsRequest => CreateAclsResponse) versions 1..=3,
        write_if(acls_enabled) |c, r| acls::create_acls(c.image, c.rng, r),
        otherwise disabled::create_acls(r);
    /// DeleteAcls (31): written with an authorizer, else SECURITY_DISABLED.
    DeleteAcls(DeleteAclsRequest => DeleteAclsResponse) versions 1..=3,
        write_if(acls_enabled) |c, r| acls::delete_acls(c.image, r),
        otherwise disabled::delete_acls(r);
    /// DescribeConfigs (32).
    DescribeConfigs(DescribeConfigsRequest => DescribeConfigsResponse) versions 1..=4,
        read |c, r| describe_configs::describe_configs(c.image, c.config, r);
    /// AlterConfigs (33), the legacy whole-resource replacement.
    AlterConfigs(AlterConfigsRequest => AlterConfigsResponse) versions 0..=2,
        write |c, r| configs::legacy_alter_configs(c.image, c.config, r);
    /// CreatePartitions (37).
    CreatePartitions(CreatePartitionsRequest => CreatePartitionsResponse) versions 0..=3,
        write |c, r| admin::create_partitions(c.image, c.rng, r);
    /// CreateDelegationToken (38): a new token from the active controller; refused by any
    /// controller when `ControllerApis.allowTokenRequests` refuses the request.
    CreateDelegationToken(CreateDelegationTokenRequest => CreateDelegationTokenResponse) versions 1..=3,
        write_if(disabled::allow_token_requests) |c, r| delegation_tokens::create_delegation_token(c, r),
        otherwise disabled::create_delegation_token(c.ctx, r);
    /// RenewDelegationToken (39): as CreateDelegationToken.
    RenewDelegationToken(RenewDelegationTokenRequest => RenewDelegationTokenResponse) versions 1..=2,
        write_if(disabled::allow_token_requests) |c, r| delegation_tokens::renew_delegation_token(c, r),
        otherwise disabled::renew_delegation_token(c.ctx);
    /// ExpireDelegationToken (40): as CreateDelegationToken.
    ExpireDelegationToken(ExpireDelegationTokenRequest => ExpireDelegationTokenResponse) versions 1..=2,
        write_if(disabled::allow_token_requests) |c, r| delegation_tokens::expire_delegation_token(c, r),
        otherwise disabled::expire_delegation_token(c.ctx);
    /// ElectLeaders (43).
    ElectLeaders(ElectLeadersRequest => ElectLeadersResponse) versions 0..=2,
        write |c, r| admin::elect_leaders(c.image, c.config, r);
    /// IncrementalAlterConfigs (44).
    IncrementalAlterConfigs(IncrementalAlterConfigsRequest => IncrementalAlterConfigsResponse) versions 0..=1,
        write |c, r| configs::incremental_alter_configs(c.image, c.config, r);
    /// AlterPartitionReassignments (45).
    AlterPartitionReassignments(AlterPartitionReassignmentsRequest => AlterPartitionReassignmentsResponse) versions 0..=1,
        write |c, r| reassignment::alter_partition_reassignments(c.image, c.config, r);
    /// ListPartitionReassignments (46).
    ListPartitionReassignments(ListPartitionReassignmentsRequest => ListPartitionReassignmentsResponse) versions 0..=0,
        read |c, r| reassignment::list_partition_reassignments(c.image, r);
    /// AlterClientQuotas (49).
    AlterClientQuotas(AlterClientQuotasRequest => AlterClientQuotasResponse) versions 0..=1,
        write |c, r| quotas::alter_client_quotas(c.image, r);
    /// AlterUserScramCredentials (51).
    AlterUserScramCredentials(AlterUserScramCredentialsRequest => AlterUserScramCredentialsResponse) versions 0..=0,
        write |c, r| scram::alter_user_scram_credentials(c.image, r);
    /// AlterPartition (56).
    AlterPartition(AlterPartitionRequest => AlterPartitionResponse) versions 2..=3,
        write |c, r| partitions::alter_partition(c.image, c.config, c.ctx, r);
    /// UpdateFeatures (57).
    UpdateFeatures(UpdateFeaturesRequest => UpdateFeaturesResponse) versions 0..=1,
        write |c, r| admin::update_features(c.image, c.config, c.ctx, r);
    /// DescribeCluster (60) with EndpointType CONTROLLER.
    DescribeCluster(DescribeClusterRequest => DescribeClusterResponse) versions 0..=1,
        read |c, r| cluster::describe_cluster(c.image, c.config, c.ctx, r);
    /// BrokerRegistration (62).
    BrokerRegistration(BrokerRegistrationRequest => BrokerRegistrationResponse) versions 0..=4,
        write |c, r| cluster::register_broker(c.image, c.config, c.heartbeats, c.ctx, r);
    /// BrokerHeartbeat (63).
    BrokerHeartbeat(BrokerHeartbeatRequest => BrokerHeartbeatResponse) versions 0..=2,
        write |c, r| cluster::broker_heartbeat(c.image, c.config, c.heartbeats, c.ctx, r);
    /// UnregisterBroker (64).
    UnregisterBroker(UnregisterBrokerRequest => UnregisterBrokerResponse) versions 0..=0,
        write |c, r| cluster::unregister_broker(c.image, c.config, c.heartbeats, r);
    /// AllocateProducerIds (67).
    AllocateProducerIds(AllocateProducerIdsRequest => AllocateProducerIdsResponse) versions 0..=0,
        write |c, r| producer_ids::allocate_producer_ids(c.image, r);
    /// ControllerRegistration (70).
    ControllerRegistration(ControllerRegistrationRequest => ControllerRegistrationResponse) versions 0..=0,
        write |c, r| cluster::register_controller(c.image, r);
    /// AssignReplicasToDirs (73).
    AssignReplicasToDirs(AssignReplicasToDirsRequest => AssignReplicasToDirsResponse) versions 0..=0,
        write |c, r| partitions::assign_replicas_to_dirs(c.image, c.config, r);
    /// UnregisterController (94, KIP-1312, Kafka 4.4).
    UnregisterController(UnregisterControllerRequest => UnregisterControllerResponse) versions 0..=0,
        write |c, r| cluster::unregister_controller(c.image, c.config, r);
    /// AddRaftVoter (80; v1 `AckWhenCommitted`, KIP-1186): a static quorum refuses it here; at
    /// kraft.version 1 the node hands it to the Raft layer.
    AddRaftVoter(AddRaftVoterRequest => AddRaftVoterResponse) versions 0..=1,
        read |c, r| disabled::add_raft_voter(c.config, c.ctx, c.role, r);
    /// RemoveRaftVoter (81): a static quorum refuses it.
    RemoveRaftVoter(RemoveRaftVoterRequest => RemoveRaftVoterResponse) versions 0..=0,
        read |c, r| disabled::remove_raft_voter(c.config, c.role, r);
}
