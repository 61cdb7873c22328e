//! Field version tables of the admin apis a broker forwards and kraftwerk answers without
//! the feature behind them or with it (DescribeAcls, CreateAcls, DeleteAcls, Create/Renew/
//! ExpireDelegationToken, Alter/ListPartitionReassignments, AlterClientQuotas,
//! AlterUserScramCredentials), requests and responses. Same format as `raft_fields.rs`.
//!
//! Generated from the `Supported API versions` doc comments of kafka-protocol 0.18.0's
//! message structs (one entry per field, `unknown_tagged_fields` excepted); regenerate when
//! the crate is upgraded. `=> nested` / `=> each` / `=> each_opt` mark struct-typed fields
//! (single, `Vec`, `Option<Vec>`) whose own fields are adapted recursively.

use kafka_protocol::messages::*;

versioned_fields!(describe_acls_request::DescribeAclsRequest {
    resource_type_filter: 1..=3,
    resource_name_filter: 1..=3,
    pattern_type_filter: 1..=3,
    principal_filter: 1..=3,
    host_filter: 1..=3,
    operation: 1..=3,
    permission_type: 1..=3,
});

versioned_fields!(describe_acls_response::AclDescription {
    principal: 1..=3,
    host: 1..=3,
    operation: 1..=3,
    permission_type: 1..=3,
});

versioned_fields!(describe_acls_response::DescribeAclsResource {
    resource_type: 1..=3,
    resource_name: 1..=3,
    pattern_type: 1..=3,
    acls: 1..=3 => each,
});

versioned_fields!(describe_acls_response::DescribeAclsResponse {
    throttle_time_ms: 1..=3,
    error_code: 1..=3,
    error_message: 1..=3,
    resources: 1..=3 => each,
});

versioned_fields!(create_acls_request::AclCreation {
    resource_type: 1..=3,
    resource_name: 1..=3,
    resource_pattern_type: 1..=3,
    principal: 1..=3,
    host: 1..=3,
    operation: 1..=3,
    permission_type: 1..=3,
});

versioned_fields!(create_acls_request::CreateAclsRequest {
    creations: 1..=3 => each,
});

versioned_fields!(create_acls_response::AclCreationResult {
    error_code: 1..=3,
    error_message: 1..=3,
});

versioned_fields!(create_acls_response::CreateAclsResponse {
    throttle_time_ms: 1..=3,
    results: 1..=3 => each,
});

versioned_fields!(delete_acls_request::DeleteAclsFilter {
    resource_type_filter: 1..=3,
    resource_name_filter: 1..=3,
    pattern_type_filter: 1..=3,
    principal_filter: 1..=3,
    host_filter: 1..=3,
    operation: 1..=3,
    permission_type: 1..=3,
});

versioned_fields!(delete_acls_request::DeleteAclsRequest {
    filters: 1..=3 => each,
});

versioned_fields!(delete_acls_response::DeleteAclsFilterResult {
    error_code: 1..=3,
    error_message: 1..=3,
    matching_acls: 1..=3 => each,
});

versioned_fields!(delete_acls_response::DeleteAclsMatchingAcl {
    error_code: 1..=3,
    error_message: 1..=3,
    resource_type: 1..=3,
    resource_name: 1..=3,
    pattern_type: 1..=3,
    principal: 1..=3,
    host: 1..=3,
    operation: 1..=3,
    permission_type: 1..=3,
});

versioned_fields!(delete_acls_response::DeleteAclsResponse {
    throttle_time_ms: 1..=3,
    filter_results: 1..=3 => each,
});

versioned_fields!(create_delegation_token_request::CreatableRenewers {
    principal_type: 1..=3,
    principal_name: 1..=3,
});

versioned_fields!(create_delegation_token_request::CreateDelegationTokenRequest {
    owner_principal_type: 3..=3,
    owner_principal_name: 3..=3,
    renewers: 1..=3 => each,
    max_lifetime_ms: 1..=3,
});

versioned_fields!(
    create_delegation_token_response::CreateDelegationTokenResponse {
        error_code: 1..=3,
        principal_type: 1..=3,
        principal_name: 1..=3,
        token_requester_principal_type: 3..=3,
        token_requester_principal_name: 3..=3,
        issue_timestamp_ms: 1..=3,
        expiry_timestamp_ms: 1..=3,
        max_timestamp_ms: 1..=3,
        token_id: 1..=3,
        hmac: 1..=3,
        throttle_time_ms: 1..=3,
    }
);

versioned_fields!(
    renew_delegation_token_request::RenewDelegationTokenRequest {
        hmac: 1..=2,
        renew_period_ms: 1..=2,
    }
);

versioned_fields!(
    renew_delegation_token_response::RenewDelegationTokenResponse {
        error_code: 1..=2,
        expiry_timestamp_ms: 1..=2,
        throttle_time_ms: 1..=2,
    }
);

versioned_fields!(
    expire_delegation_token_request::ExpireDelegationTokenRequest {
        hmac: 1..=2,
        expiry_time_period_ms: 1..=2,
    }
);

versioned_fields!(
    expire_delegation_token_response::ExpireDelegationTokenResponse {
        error_code: 1..=2,
        expiry_timestamp_ms: 1..=2,
        throttle_time_ms: 1..=2,
    }
);

versioned_fields!(alter_partition_reassignments_request::AlterPartitionReassignmentsRequest {
    timeout_ms: 0..=1,
    allow_replication_factor_change: 1..=1,
    topics: 0..=1 => each,
});

versioned_fields!(
    alter_partition_reassignments_request::ReassignablePartition {
        partition_index: 0..=1,
        replicas: 0..=1,
    }
);

versioned_fields!(alter_partition_reassignments_request::ReassignableTopic {
    name: 0..=1,
    partitions: 0..=1 => each,
});

versioned_fields!(alter_partition_reassignments_response::AlterPartitionReassignmentsResponse {
    throttle_time_ms: 0..=1,
    allow_replication_factor_change: 1..=1,
    error_code: 0..=1,
    error_message: 0..=1,
    responses: 0..=1 => each,
});

versioned_fields!(
    alter_partition_reassignments_response::ReassignablePartitionResponse {
        partition_index: 0..=1,
        error_code: 0..=1,
        error_message: 0..=1,
    }
);

versioned_fields!(alter_partition_reassignments_response::ReassignableTopicResponse {
    name: 0..=1,
    partitions: 0..=1 => each,
});

versioned_fields!(list_partition_reassignments_request::ListPartitionReassignmentsRequest {
    timeout_ms: 0..=0,
    topics: 0..=0 => each_opt,
});

versioned_fields!(
    list_partition_reassignments_request::ListPartitionReassignmentsTopics {
        name: 0..=0,
        partition_indexes: 0..=0,
    }
);

versioned_fields!(list_partition_reassignments_response::ListPartitionReassignmentsResponse {
    throttle_time_ms: 0..=0,
    error_code: 0..=0,
    error_message: 0..=0,
    topics: 0..=0 => each,
});

versioned_fields!(
    list_partition_reassignments_response::OngoingPartitionReassignment {
        partition_index: 0..=0,
        replicas: 0..=0,
        adding_replicas: 0..=0,
        removing_replicas: 0..=0,
    }
);

versioned_fields!(list_partition_reassignments_response::OngoingTopicReassignment {
    name: 0..=0,
    partitions: 0..=0 => each,
});

versioned_fields!(alter_client_quotas_request::AlterClientQuotasRequest {
    entries: 0..=1 => each,
    validate_only: 0..=1,
});

versioned_fields!(alter_client_quotas_request::EntityData {
    entity_type: 0..=1,
    entity_name: 0..=1,
});

versioned_fields!(alter_client_quotas_request::EntryData {
    entity: 0..=1 => each,
    ops: 0..=1 => each,
});

versioned_fields!(alter_client_quotas_request::OpData {
    key: 0..=1,
    value: 0..=1,
    remove: 0..=1,
});

versioned_fields!(alter_client_quotas_response::AlterClientQuotasResponse {
    throttle_time_ms: 0..=1,
    entries: 0..=1 => each,
});

versioned_fields!(alter_client_quotas_response::EntityData {
    entity_type: 0..=1,
    entity_name: 0..=1,
});

versioned_fields!(alter_client_quotas_response::EntryData {
    error_code: 0..=1,
    error_message: 0..=1,
    entity: 0..=1 => each,
});

versioned_fields!(alter_user_scram_credentials_request::AlterUserScramCredentialsRequest {
    deletions: 0..=0 => each,
    upsertions: 0..=0 => each,
});

versioned_fields!(
    alter_user_scram_credentials_request::ScramCredentialDeletion {
        name: 0..=0,
        mechanism: 0..=0,
    }
);

versioned_fields!(
    alter_user_scram_credentials_request::ScramCredentialUpsertion {
        name: 0..=0,
        mechanism: 0..=0,
        iterations: 0..=0,
        salt: 0..=0,
        salted_password: 0..=0,
    }
);

versioned_fields!(alter_user_scram_credentials_response::AlterUserScramCredentialsResponse {
    throttle_time_ms: 0..=0,
    results: 0..=0 => each,
});

versioned_fields!(
    alter_user_scram_credentials_response::AlterUserScramCredentialsResult {
        user: 0..=0,
        error_code: 0..=0,
        error_message: 0..=0,
    }
);
