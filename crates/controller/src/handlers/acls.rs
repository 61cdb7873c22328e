//! CreateAcls, DeleteAcls and DescribeAcls with `StandardAuthorizer` enabled: Kafka's
//! `AclApis` (request-level checks), `AclControlManager` (validation, records) and
//! `StandardAuthorizer.acls` (describe), over the image's ACLs. Without an authorizer these
//! APIs answer SECURITY_DISABLED ([`super::disabled`]).
//!
//! Records: one AccessControlEntryRecord per new ACL (an ACL that exists, or is asked for twice,
//! succeeds without a record), one RemoveAccessControlEntryRecord per deleted ACL; each result
//! in one atomic batch. At most 10,000 records per request (`MAX_RECORDS_PER_USER_OP`): a
//! CreateAcls past it fails whole with POLICY_VIOLATION ("Unable to perform excessively large
//! batch operation.", Java's `BoundedList` overflow); a DeleteAcls whose filters match more
//! fails whole with INVALID_REQUEST "Cannot remove more than 10000 acls in a single delete
//! operation." (KAFKA-19411, as Kafka 4.4's `AclControlManager.deleteAcls`).

use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::create_acls_response::AclCreationResult;
use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
use kafka_protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use kafka_protocol::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use kafka_protocol::messages::{
    CreateAclsRequest, CreateAclsResponse, DeleteAclsRequest, DeleteAclsResponse,
    DescribeAclsRequest, DescribeAclsResponse,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{ApiMessageAndVersion, RemoveAccessControlEntryRecord};
use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use crate::api::ControllerApi;
use crate::authorizer::cidr::Cidr;
use crate::authorizer::{
    AclFilter, AclOperation, AclPermissionType, PatternType, ResourceType, StandardAcl,
    CLUSTER_NAME, WILDCARD,
};
use crate::controller::{ControllerResult, ControllerRng, MAX_RECORDS_PER_BATCH};
use crate::error::ApiError;
use crate::ids::random_topic_id;
use crate::image::MetadataImage;
use crate::validate::limits;

/// The message of a DeleteAcls whose filters match more than 10,000 ACLs.
pub const TOO_MANY_DELETIONS: &str =
    "Cannot remove more than 10000 acls in a single delete operation.";

fn text(s: impl Into<String>) -> Option<StrBytes> {
    Some(StrBytes::from_string(s.into()))
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(ResponseError::InvalidRequest, message)
}

/// The ACL a creation asks for (`CreateAclsRequest.aclBinding`).
fn requested_acl(creation: &AclCreation) -> StandardAcl {
    StandardAcl {
        resource_type: ResourceType::from_code(creation.resource_type),
        resource_name: creation.resource_name.to_string(),
        pattern_type: PatternType::from_code(creation.resource_pattern_type),
        principal: creation.principal.to_string(),
        host: creation.host.to_string(),
        operation: AclOperation::from_code(creation.operation),
        permission: AclPermissionType::from_code(creation.permission_type),
    }
}

/// `AclApis.handleCreateAcls`'s checks, then `AclControlManager.validateNewAcl`, in their order.
fn validate_new_acl(acl: &StandardAcl, mv: MetadataVersion) -> Result<(), ApiError> {
    if acl.resource_type == ResourceType::Cluster && acl.resource_name != CLUSTER_NAME {
        return Err(invalid(format!(
            "The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
        )));
    }
    if acl.resource_name.is_empty() {
        return Err(invalid("Invalid empty resource name"));
    }
    if matches!(acl.resource_type, ResourceType::Unknown | ResourceType::Any) {
        return Err(invalid(format!(
            "Invalid resourceType {}",
            acl.resource_type
        )));
    }
    if !matches!(
        acl.pattern_type,
        PatternType::Literal | PatternType::Prefixed
    ) {
        return Err(invalid(format!("Invalid patternType {}", acl.pattern_type)));
    }
    if matches!(acl.operation, AclOperation::Unknown | AclOperation::Any) {
        return Err(invalid(format!("Invalid operation {}", acl.operation)));
    }
    if !matches!(
        acl.permission,
        AclPermissionType::Deny | AclPermissionType::Allow
    ) {
        return Err(invalid(format!(
            "Invalid permissionType {}",
            acl.permission
        )));
    }
    if !acl.principal.contains(':') {
        return Err(invalid(format!(
            "Could not parse principal from `{}` (no colon is present separating the principal type from the principal name)",
            acl.principal
        )));
    }
    if acl.host.is_empty() {
        return Err(invalid("Host pattern cannot be null or empty"));
    }
    // `AclControlManager.validateHostPattern`: CIDR blocks from 4.4-IV1 (KIP-1276), checked
    // as `CidrUtils.validate` checks them.
    if acl.host != WILDCARD && acl.host.contains('/') {
        if !mv.is_cidr_acl_supported() {
            return Err(ApiError::new(
                ResponseError::UnsupportedVersion,
                format!(
                    "CIDR-based ACL host patterns require metadata version {} or higher.",
                    MetadataVersion::V4_4_IV1
                ),
            ));
        }
        if let Err(reason) = Cidr::parse(&acl.host) {
            return Err(invalid(format!(
                "Invalid CIDR notation '{}': {reason}",
                acl.host
            )));
        }
    }
    Ok(())
}

/// CreateAcls (api 30) with an authorizer: one result per creation, in order; see the module
/// docs for records and the cap.
pub fn create_acls(
    image: &MetadataImage,
    rng: &mut ControllerRng,
    request: &CreateAclsRequest,
) -> ControllerResult<CreateAclsResponse> {
    let existing: BTreeSet<StandardAcl> = image
        .other
        .acls
        .values()
        .map(StandardAcl::from_record)
        .collect();
    let mut new_acls: BTreeSet<StandardAcl> = BTreeSet::new();
    let mut used_ids: BTreeSet<Uuid> = BTreeSet::new();
    let mut records = Vec::new();
    let mut results = Vec::with_capacity(request.creations.len());
    for creation in &request.creations {
        let acl = requested_acl(creation);
        if let Err(error) = validate_new_acl(&acl, image.metadata_version()) {
            results.push(
                AclCreationResult::default()
                    .with_error_code(error.code)
                    .with_error_message(error.message.map(StrBytes::from_string)),
            );
            continue;
        }
        if !existing.contains(&acl) && new_acls.insert(acl.clone()) {
            if !limits::records_fit(records.len(), 1) {
                let error = limits::excessively_large();
                return ControllerResult::of(
                    Vec::new(),
                    request.error_response(error.code, error.message.as_deref()),
                );
            }
            // `AclControlManager.newAclId`: a random id no ACL has.
            let id = loop {
                let id = random_topic_id(&mut rng.ids);
                if !image.other.acls.contains_key(&id) && used_ids.insert(id) {
                    break id;
                }
            };
            records.push(ApiMessageAndVersion::new(acl.to_record(id), 0));
        }
        results.push(AclCreationResult::default());
    }
    ControllerResult::atomic(records, CreateAclsResponse::default().with_results(results))
}

fn delete_filter(filter: &DeleteAclsFilter) -> AclFilter {
    AclFilter {
        resource_type: ResourceType::from_code(filter.resource_type_filter),
        resource_name: filter.resource_name_filter.as_ref().map(|s| s.to_string()),
        pattern_type: PatternType::from_code(filter.pattern_type_filter),
        principal: filter.principal_filter.as_ref().map(|s| s.to_string()),
        host: filter.host_filter.as_ref().map(|s| s.to_string()),
        operation: AclOperation::from_code(filter.operation),
        permission: AclPermissionType::from_code(filter.permission_type),
    }
}

fn describe_filter(request: &DescribeAclsRequest) -> AclFilter {
    AclFilter {
        resource_type: ResourceType::from_code(request.resource_type_filter),
        resource_name: request.resource_name_filter.as_ref().map(|s| s.to_string()),
        pattern_type: PatternType::from_code(request.pattern_type_filter),
        principal: request.principal_filter.as_ref().map(|s| s.to_string()),
        host: request.host_filter.as_ref().map(|s| s.to_string()),
        operation: AclOperation::from_code(request.operation),
        permission: AclPermissionType::from_code(request.permission_type),
    }
}

/// DeleteAcls (api 31) with an authorizer (`AclControlManager.deleteAcls`): per filter, its
/// error (an UNKNOWN part) or the ACLs it matched; an ACL matched by several filters is
/// reported by each and removed once.
pub fn delete_acls(
    image: &MetadataImage,
    request: &DeleteAclsRequest,
) -> ControllerResult<DeleteAclsResponse> {
    let mut removed: BTreeSet<Uuid> = BTreeSet::new();
    let mut records = Vec::new();
    let mut results = Vec::with_capacity(request.filters.len());
    for filter in &request.filters {
        let filter = delete_filter(filter);
        if let Some(message) = filter.unknown_part() {
            results.push(
                DeleteAclsFilterResult::default()
                    .with_error_code(ResponseError::InvalidRequest.code())
                    .with_error_message(text(message)),
            );
            continue;
        }
        let mut matching = Vec::new();
        for (id, record) in &image.other.acls {
            let acl = StandardAcl::from_record(record);
            if !filter.matches(&acl) {
                continue;
            }
            // Java checks the set's size before each match, duplicates included.
            if removed.len() >= MAX_RECORDS_PER_BATCH {
                return ControllerResult::of(
                    Vec::new(),
                    request.error_response(
                        ResponseError::InvalidRequest.code(),
                        Some(TOO_MANY_DELETIONS),
                    ),
                );
            }
            matching.push(
                // `ApiError.NONE`: a null message (not the generated default "").
                DeleteAclsMatchingAcl::default()
                    .with_error_message(None)
                    .with_resource_type(acl.resource_type.code())
                    .with_resource_name(StrBytes::from_string(acl.resource_name))
                    .with_pattern_type(acl.pattern_type.code())
                    .with_principal(StrBytes::from_string(acl.principal))
                    .with_host(StrBytes::from_string(acl.host))
                    .with_operation(acl.operation.code())
                    .with_permission_type(acl.permission.code()),
            );
            if removed.insert(*id) {
                records.push(ApiMessageAndVersion::new(
                    RemoveAccessControlEntryRecord {
                        id: *id,
                        ..Default::default()
                    },
                    0,
                ));
            }
        }
        results.push(
            DeleteAclsFilterResult::default()
                .with_error_message(None)
                .with_matching_acls(matching),
        );
    }
    ControllerResult::atomic(
        records,
        DeleteAclsResponse::default().with_filter_results(results),
    )
}

/// DescribeAcls (api 29) with an authorizer: the ACLs matching the filter, grouped by resource
/// pattern (`DescribeAclsResponse.aclsResources`), from the committed image.
pub fn describe_acls(image: &MetadataImage, request: &DescribeAclsRequest) -> DescribeAclsResponse {
    let filter = describe_filter(request);
    let mut resources: BTreeMap<(i8, String, i8), Vec<AclDescription>> = BTreeMap::new();
    for record in image.other.acls.values() {
        let acl = StandardAcl::from_record(record);
        if !filter.matches(&acl) {
            continue;
        }
        resources
            .entry((
                acl.resource_type.code(),
                acl.resource_name.clone(),
                acl.pattern_type.code(),
            ))
            .or_default()
            .push(
                AclDescription::default()
                    .with_principal(StrBytes::from_string(acl.principal))
                    .with_host(StrBytes::from_string(acl.host))
                    .with_operation(acl.operation.code())
                    .with_permission_type(acl.permission.code()),
            );
    }
    DescribeAclsResponse::default().with_resources(
        resources
            .into_iter()
            .map(|((resource_type, name, pattern_type), acls)| {
                DescribeAclsResource::default()
                    .with_resource_type(resource_type)
                    .with_resource_name(StrBytes::from_string(name))
                    .with_pattern_type(pattern_type)
                    .with_acls(acls)
            })
            .collect(),
    )
}
