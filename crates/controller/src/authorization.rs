//! The authorization Kafka's `ControllerApis` does before a request reaches the controller
//! (`AuthHelper.authorizeClusterOperation`, `filterByAuthorized`), with the
//! [`crate::authorizer`] over the committed image's ACLs.
//!
//! Most APIs need one operation on the CLUSTER resource and are refused whole with
//! CLUSTER_AUTHORIZATION_FAILED ("Request API needs OPERATION permission.", the message of Kafka
//! 4.4's `AuthHelper`) wherever the request's error response puts its error. The rest are
//! authorized per item, the denied items are taken out of the request before its handler runs
//! and answered next to the handler's results, as `ControllerApis` does:
//!
//! * CreateTopics: CREATE on CLUSTER, else CREATE per topic (TOPIC_AUTHORIZATION_FAILED,
//!   "Authorization failed."); a created topic without DESCRIBE_CONFIGS gets no configs and
//!   `topic_config_error_code` TOPIC_AUTHORIZATION_FAILED.
//! * DeleteTopics: DELETE on CLUSTER, else DESCRIBE and DELETE per topic.
//! * CreatePartitions: ALTER per topic.
//! * AlterConfigs, IncrementalAlterConfigs: ALTER_CONFIGS on CLUSTER (BROKER, CLIENT_METRICS),
//!   on the TOPIC or on the GROUP (`authorizeAlterResource`); BROKER_LOGGER needs CLUSTER_ACTION.
//! * DescribeConfigs: DESCRIBE_CONFIGS likewise (`ConfigHelper.handleDescribeConfigsRequest`).
//!
//! Items named twice are left to the handler (its "Duplicate ..." answer comes first in Java
//! too), as are resource types Java refuses before authorizing.

use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::describe_configs_response::DescribeConfigsResult;
use kafka_protocol::messages::TopicName;
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use crate::api::{ControllerRequest, ControllerResponse};
use crate::authorizer::{
    authorize, java_host_address, AclOperation, Action, AuthorizerConfig, ResourceType,
    CLUSTER_NAME,
};
use crate::handlers::default_message;
use crate::ids::ZERO_UUID;
use crate::image::configs::resource_type as config_type;
use crate::image::MetadataImage;
use crate::log_limit::SharedLogLimiter;
use crate::request::{Principal, RequestContext};
use crate::topic_name::CLUSTER_METADATA_TOPIC_NAME;

/// Denial lines written, by (principal, host, operation, resource).
static DENIAL_LOG: SharedLogLimiter = SharedLogLimiter::new();

/// Asks the authorizer about one principal and client address.
#[derive(Clone, Copy)]
pub struct Authz<'a> {
    config: &'a AuthorizerConfig,
    image: &'a MetadataImage,
    principal: &'a Principal,
    host: &'a str,
}

impl<'a> Authz<'a> {
    /// The checker for `principal` connecting from `host` (see [`client_host`]).
    pub fn new(
        config: &'a AuthorizerConfig,
        image: &'a MetadataImage,
        principal: &'a Principal,
        host: &'a str,
    ) -> Self {
        Authz {
            config,
            image,
            principal,
            host,
        }
    }

    /// Whether `operation` on the resource is allowed, without logging a denial (Java's
    /// `Action` with `logIfDenied` false, as `AuthHelper.authorizedOperations` asks).
    pub fn permits(
        &self,
        operation: AclOperation,
        resource_type: ResourceType,
        name: &str,
    ) -> bool {
        authorize(
            self.config,
            self.image,
            &Action {
                principal: self.principal,
                host: self.host,
                operation,
                resource_type,
                resource_name: name,
            },
        )
    }

    /// Whether `operation` on the resource is allowed; a denial is logged.
    pub fn allows(&self, operation: AclOperation, resource_type: ResourceType, name: &str) -> bool {
        let allowed = self.permits(operation, resource_type, name);
        if !allowed {
            let principal = format!("{}:{}", self.principal.principal_type, self.principal.name);
            let resource = format!("{resource_type}:LITERAL:{name}");
            let key = format!("{principal} {} {operation} {resource}", self.host);
            // At most one line per (principal, host, operation, resource) per LOG_PERIOD.
            if let Some(suppressed) = DENIAL_LOG.admit(&key) {
                tracing::info!(
                    %principal,
                    host = self.host,
                    %operation,
                    %resource,
                    suppressed,
                    "authorization denied"
                );
            }
        }
        allowed
    }

    /// Whether `operation` on the cluster is allowed.
    pub fn allows_cluster(&self, operation: AclOperation) -> bool {
        self.allows(operation, ResourceType::Cluster, CLUSTER_NAME)
    }
}

/// `AclEntry.supportedOperations(CLUSTER)`: the operations a cluster ACL can grant.
pub const CLUSTER_OPERATIONS: [AclOperation; 7] = [
    AclOperation::Create,
    AclOperation::ClusterAction,
    AclOperation::DescribeConfigs,
    AclOperation::AlterConfigs,
    AclOperation::IdempotentWrite,
    AclOperation::Alter,
    AclOperation::Describe,
];

/// DescribeCluster's `cluster_authorized_operations` when the request includes them
/// (`AuthHelper.computeDescribeClusterResponse`): bit `code` set for each of
/// [`CLUSTER_OPERATIONS`] the principal may do (all of them without an authorizer), 0 when it
/// may not DESCRIBE the cluster.
pub fn cluster_authorized_operations(
    authorizer: Option<&AuthorizerConfig>,
    image: &MetadataImage,
    ctx: &RequestContext,
) -> i32 {
    let bits = |ops: &mut dyn Iterator<Item = AclOperation>| {
        ops.fold(0i32, |acc, op| acc | (1i32 << op.code()))
    };
    let Some(config) = authorizer else {
        return bits(&mut CLUSTER_OPERATIONS.into_iter());
    };
    let host = client_host(ctx);
    let authz = Authz::new(config, image, &ctx.principal, &host);
    if !authz.allows_cluster(AclOperation::Describe) {
        return 0;
    }
    bits(
        &mut CLUSTER_OPERATIONS
            .into_iter()
            .filter(|op| authz.permits(*op, ResourceType::Cluster, CLUSTER_NAME)),
    )
}

/// The client's address as ACL hosts name it; empty when the caller did not say (only `*` ACLs
/// match then).
pub fn client_host(ctx: &RequestContext) -> String {
    ctx.client_address
        .map(java_host_address)
        .unwrap_or_default()
}

/// The CLUSTER operation `ControllerApis` requires for a request authorized whole, or `None`
/// when it is authorized per item (or not at all: the delegation token APIs, whose handlers
/// check CREATE_TOKENS themselves, `handlers::delegation_tokens`).
pub fn cluster_operation(request: &ControllerRequest) -> Option<AclOperation> {
    use AclOperation::*;
    use ControllerRequest as R;
    Some(match request {
        R::CreateTopics(_)
        | R::DeleteTopics(_)
        | R::CreatePartitions(_)
        | R::DescribeConfigs(_)
        | R::AlterConfigs(_)
        | R::IncrementalAlterConfigs(_)
        | R::CreateDelegationToken(_)
        | R::RenewDelegationToken(_)
        | R::ExpireDelegationToken(_) => return None,
        R::DescribeAcls(_) => Describe,
        R::CreateAcls(_) | R::DeleteAcls(_) => Alter,
        R::ElectLeaders(_) => Alter,
        R::AlterPartitionReassignments(_) => Alter,
        R::ListPartitionReassignments(_) => Describe,
        R::AlterClientQuotas(_) => AlterConfigs,
        R::AlterUserScramCredentials(_) => Alter,
        R::AlterPartition(_) => ClusterAction,
        R::UpdateFeatures(_) => Alter,
        // Kafka 4.x's ControllerApis.handleDescribeCluster asks ALTER (not DESCRIBE).
        R::DescribeCluster(_) => Alter,
        R::BrokerRegistration(_) | R::BrokerHeartbeat(_) => ClusterAction,
        R::UnregisterBroker(_) => Alter,
        R::AllocateProducerIds(_) => ClusterAction,
        R::ControllerRegistration(_) => ClusterAction,
        R::AssignReplicasToDirs(_) => ClusterAction,
        R::UnregisterController(_) => Alter,
        R::AddRaftVoter(_) | R::RemoveRaftVoter(_) => Alter,
    })
}

/// The message of a request refused for lacking a CLUSTER operation (Kafka 4.4's
/// `AuthHelper.authorizeClusterOperation`; Java prints the whole request where this names its
/// api).
pub fn cluster_denied_message(api: &str, operation: AclOperation) -> String {
    format!("Request {api} needs {operation} permission.")
}

/// What per-item authorization took out of a request, to be answered next to the handler's
/// results.
#[derive(Debug, Default)]
pub struct Denied {
    create_topics: Vec<String>,
    /// Topics created but not describable: no configs in their result.
    undescribable: BTreeSet<String>,
    delete_topics: Vec<DeletableTopicResult>,
    create_partitions: Vec<String>,
    /// (error, resource type, resource name) of config resources.
    configs: Vec<(ResponseError, i8, StrBytes)>,
}

/// The outcome of [`authorize_request`].
pub enum Authorized {
    /// Allowed as it is.
    Whole,
    /// Allowed in part: run the handler on this request and [`Denied::merge`] into its answer.
    Part(ControllerRequest, Denied),
    /// Refused whole, with this answer.
    Refused(ControllerResponse),
}

/// Authorizes `request` as `ControllerApis` does (see the module docs).
pub fn authorize_request(
    authz: &Authz<'_>,
    delete_topic_enable: bool,
    request: &ControllerRequest,
) -> Authorized {
    if let Some(operation) = cluster_operation(request) {
        if authz.allows_cluster(operation) {
            return Authorized::Whole;
        }
        let message = cluster_denied_message(request.name(), operation);
        return Authorized::Refused(request.error_response(
            ResponseError::ClusterAuthorizationFailed.code(),
            Some(&message),
        ));
    }
    let mut denied = Denied::default();
    let mut request = request.clone();
    match &mut request {
        ControllerRequest::CreateTopics(r) => create_topics(authz, r, &mut denied),
        ControllerRequest::DeleteTopics(r) if delete_topic_enable => {
            delete_topics(authz, r, &mut denied)
        }
        ControllerRequest::CreatePartitions(r) => {
            let names = singles(r.topics.iter().map(|t| t.name.to_string()));
            r.topics.retain(|t| {
                let name = t.name.as_str();
                let keep = !names.contains(name)
                    || authz.allows(AclOperation::Alter, ResourceType::Topic, name);
                if !keep {
                    denied.create_partitions.push(name.to_owned());
                }
                keep
            });
        }
        ControllerRequest::DescribeConfigs(r) => {
            r.resources.retain(|res| {
                match config_denial(
                    authz,
                    AclOperation::DescribeConfigs,
                    res.resource_type,
                    &res.resource_name,
                ) {
                    Some(error) => {
                        denied
                            .configs
                            .push((error, res.resource_type, res.resource_name.clone()));
                        false
                    }
                    None => true,
                }
            });
        }
        ControllerRequest::AlterConfigs(r) => {
            let once = singles(
                r.resources
                    .iter()
                    .map(|res| (res.resource_type, res.resource_name.to_string())),
            );
            r.resources.retain(|res| {
                if res.resource_type == config_type::BROKER_LOGGER
                    || !once.contains(&(res.resource_type, res.resource_name.to_string()))
                {
                    return true;
                }
                match config_denial(
                    authz,
                    AclOperation::AlterConfigs,
                    res.resource_type,
                    &res.resource_name,
                ) {
                    Some(error) => {
                        denied
                            .configs
                            .push((error, res.resource_type, res.resource_name.clone()));
                        false
                    }
                    None => true,
                }
            });
        }
        ControllerRequest::IncrementalAlterConfigs(r) => {
            let once = singles(
                r.resources
                    .iter()
                    .map(|res| (res.resource_type, res.resource_name.to_string())),
            );
            r.resources.retain(|res| {
                let error = if res.resource_type == config_type::BROKER_LOGGER {
                    // RuntimeLoggerManager: changing a broker's loggers needs CLUSTER_ACTION.
                    (!authz.allows_cluster(AclOperation::ClusterAction))
                        .then_some(ResponseError::ClusterAuthorizationFailed)
                } else if once.contains(&(res.resource_type, res.resource_name.to_string())) {
                    config_denial(
                        authz,
                        AclOperation::AlterConfigs,
                        res.resource_type,
                        &res.resource_name,
                    )
                } else {
                    None
                };
                match error {
                    Some(error) => {
                        denied
                            .configs
                            .push((error, res.resource_type, res.resource_name.clone()));
                        false
                    }
                    None => true,
                }
            });
        }
        _ => return Authorized::Whole,
    }
    if denied.is_empty() {
        Authorized::Whole
    } else {
        Authorized::Part(request, denied)
    }
}

/// The values that occur exactly once.
fn singles<T: Ord>(items: impl Iterator<Item = T>) -> BTreeSet<T> {
    let mut counts: BTreeMap<T, usize> = BTreeMap::new();
    for item in items {
        *counts.entry(item).or_default() += 1;
    }
    counts
        .into_iter()
        .filter_map(|(item, n)| (n == 1).then_some(item))
        .collect()
}

/// `authorizeAlterResource` / `ConfigHelper`: the error for a config resource `operation` is
/// not allowed on; `None` if allowed or of a type Java does not authorize here.
fn config_denial(
    authz: &Authz<'_>,
    operation: AclOperation,
    resource_type: i8,
    name: &str,
) -> Option<ResponseError> {
    let (allowed, error) = match resource_type {
        config_type::BROKER | config_type::CLIENT_METRICS => (
            authz.allows_cluster(operation),
            ResponseError::ClusterAuthorizationFailed,
        ),
        config_type::BROKER_LOGGER if operation == AclOperation::DescribeConfigs => (
            authz.allows_cluster(operation),
            ResponseError::ClusterAuthorizationFailed,
        ),
        config_type::TOPIC => (
            authz.allows(operation, ResourceType::Topic, name),
            ResponseError::TopicAuthorizationFailed,
        ),
        config_type::GROUP => (
            authz.allows(operation, ResourceType::Group, name),
            ResponseError::GroupAuthorizationFailed,
        ),
        _ => return None,
    };
    (!allowed).then_some(error)
}

/// `ControllerApis.createTopics`: without CREATE on the cluster, each topic (not named twice,
/// not `__cluster_metadata`) needs CREATE on itself.
fn create_topics(
    authz: &Authz<'_>,
    request: &mut kafka_protocol::messages::CreateTopicsRequest,
    denied: &mut Denied,
) {
    let once = singles(request.topics.iter().map(|t| t.name.to_string()));
    let cluster = authz.allows_cluster(AclOperation::Create);
    request.topics.retain(|t| {
        let name = t.name.as_str();
        if !once.contains(name) || name == CLUSTER_METADATA_TOPIC_NAME {
            return true;
        }
        if !cluster && !authz.allows(AclOperation::Create, ResourceType::Topic, name) {
            denied.create_topics.push(name.to_owned());
            return false;
        }
        if !authz.allows(AclOperation::DescribeConfigs, ResourceType::Topic, name) {
            denied.undescribable.insert(name.to_owned());
        }
        true
    });
}

/// `ControllerApis.deleteTopics`: without DELETE on the cluster, a named topic must be
/// describable (else TOPIC_AUTHORIZATION_FAILED before its existence is looked at) and
/// deletable; a topic given by id must be deletable (its name is reported only if it is
/// describable).
fn delete_topics(
    authz: &Authz<'_>,
    request: &mut kafka_protocol::messages::DeleteTopicsRequest,
    denied: &mut Denied,
) {
    if authz.allows_cluster(AclOperation::Delete) {
        return;
    }
    let names = singles(
        request.topic_names.iter().map(|n| n.to_string()).chain(
            request
                .topics
                .iter()
                .filter(|t| t.topic_id == ZERO_UUID)
                .filter_map(|t| t.name.as_ref().map(|n| n.to_string())),
        ),
    );
    let ids = singles(
        request
            .topics
            .iter()
            .filter(|t| t.name.is_none() && t.topic_id != ZERO_UUID)
            .map(|t| t.topic_id),
    );
    let describable = |name: &str| authz.allows(AclOperation::Describe, ResourceType::Topic, name);
    let deletable = |name: &str| authz.allows(AclOperation::Delete, ResourceType::Topic, name);
    let image = authz.image;
    let mut results = Vec::new();
    // A name: refused unless describable; then unknown names are left to the handler.
    let refuse_name = |name: &str, results: &mut Vec<DeletableTopicResult>| -> bool {
        if !names.contains(name) {
            return false;
        }
        let refused =
            !describable(name) || (image.topics.id_of(name).is_some() && !deletable(name));
        if refused {
            results.push(name_result(Some(name), ZERO_UUID));
        }
        refused
    };
    request
        .topic_names
        .retain(|n| !refuse_name(n.as_str(), &mut results));
    request.topics.retain(|t| match (&t.name, t.topic_id) {
        (Some(name), id) if id == ZERO_UUID => !refuse_name(name.as_str(), &mut results),
        (None, id) if ids.contains(&id) => match image.topics.get(&id) {
            Some(topic) if !deletable(&topic.name) => {
                let shown = describable(&topic.name).then(|| topic.name.to_string());
                results.push(name_result(shown.as_deref(), id));
                false
            }
            _ => true,
        },
        _ => true,
    });
    denied.delete_topics = results;
}

fn name_result(name: Option<&str>, id: Uuid) -> DeletableTopicResult {
    DeletableTopicResult::default()
        .with_name(name.map(|n| TopicName(StrBytes::from_string(n.to_owned()))))
        .with_topic_id(id)
        .with_error_code(ResponseError::TopicAuthorizationFailed.code())
        .with_error_message(
            default_message(ResponseError::TopicAuthorizationFailed).map(StrBytes::from_static_str),
        )
}

impl Denied {
    fn is_empty(&self) -> bool {
        self.create_topics.is_empty()
            && self.undescribable.is_empty()
            && self.delete_topics.is_empty()
            && self.create_partitions.is_empty()
            && self.configs.is_empty()
    }

    /// The handler's answer with the denied items added (and undescribable topics' configs
    /// removed).
    pub fn merge(self, response: ControllerResponse) -> ControllerResponse {
        let error_message = |e: ResponseError| default_message(e).map(StrBytes::from_static_str);
        match response {
            ControllerResponse::CreateTopics(mut r) => {
                for result in &mut r.topics {
                    if result.error_code == 0 && self.undescribable.contains(result.name.as_str()) {
                        let name = result.name.clone();
                        let topic_id = result.topic_id;
                        *result = CreatableTopicResult::default()
                            .with_name(name)
                            .with_topic_id(topic_id)
                            .with_topic_config_error_code(
                                ResponseError::TopicAuthorizationFailed.code(),
                            );
                    }
                }
                for name in self.create_topics {
                    r.topics.push(
                        CreatableTopicResult::default()
                            .with_name(TopicName(StrBytes::from_string(name)))
                            .with_error_code(ResponseError::TopicAuthorizationFailed.code())
                            .with_error_message(Some(StrBytes::from_static_str(
                                "Authorization failed.",
                            ))),
                    );
                }
                ControllerResponse::CreateTopics(r)
            }
            ControllerResponse::DeleteTopics(mut r) => {
                r.responses.extend(self.delete_topics);
                ControllerResponse::DeleteTopics(r)
            }
            ControllerResponse::CreatePartitions(mut r) => {
                for name in self.create_partitions {
                    r.results.push(
                        CreatePartitionsTopicResult::default()
                            .with_name(TopicName(StrBytes::from_string(name)))
                            .with_error_code(ResponseError::TopicAuthorizationFailed.code()),
                    );
                }
                ControllerResponse::CreatePartitions(r)
            }
            ControllerResponse::DescribeConfigs(mut r) => {
                for (error, resource_type, resource_name) in self.configs {
                    r.results.push(
                        DescribeConfigsResult::default()
                            .with_error_code(error.code())
                            .with_error_message(error_message(error))
                            .with_resource_type(resource_type)
                            .with_resource_name(resource_name),
                    );
                }
                ControllerResponse::DescribeConfigs(r)
            }
            ControllerResponse::AlterConfigs(mut r) => {
                use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse;
                for (error, resource_type, resource_name) in self.configs {
                    // `new ApiError(error)`: the error's default message.
                    r.responses.push(
                        AlterConfigsResourceResponse::default()
                            .with_error_code(error.code())
                            .with_error_message(error_message(error))
                            .with_resource_type(resource_type)
                            .with_resource_name(resource_name),
                    );
                }
                ControllerResponse::AlterConfigs(r)
            }
            ControllerResponse::IncrementalAlterConfigs(mut r) => {
                use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
                for (error, resource_type, resource_name) in self.configs {
                    r.responses.push(
                        AlterConfigsResourceResponse::default()
                            .with_error_code(error.code())
                            .with_error_message(error_message(error))
                            .with_resource_type(resource_type)
                            .with_resource_name(resource_name),
                    );
                }
                ControllerResponse::IncrementalAlterConfigs(r)
            }
            other => other,
        }
    }
}
