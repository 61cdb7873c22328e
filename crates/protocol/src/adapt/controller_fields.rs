//! Field version tables of the controller apis (BrokerRegistration, BrokerHeartbeat, CreateTopics,
//! DeleteTopics, AllocateProducerIds, AlterPartition, ControllerRegistration, DescribeCluster,
//! AssignReplicasToDirs, UpdateFeatures, CreatePartitions, IncrementalAlterConfigs, DescribeConfigs,
//! AlterConfigs, ElectLeaders, UnregisterBroker, Add/Remove/UpdateRaftVoter), requests and
//! responses. Same format as `raft_fields.rs`.
//!
//! Generated from the `Supported API versions` doc comments of kafka-protocol 0.18.0's
//! message structs (one entry per field, `unknown_tagged_fields` excepted); regenerate when
//! the crate is upgraded. `=> nested` / `=> each` / `=> each_opt` mark struct-typed fields
//! (single, `Vec`, `Option<Vec>`) whose own fields are adapted recursively.

use kafka_protocol::messages::*;

versioned_fields!(broker_registration_request::BrokerRegistrationRequest {
    broker_id: 0..=4,
    cluster_id: 0..=4,
    incarnation_id: 0..=4,
    listeners: 0..=4 => each,
    features: 0..=4 => each,
    rack: 0..=4,
    is_migrating_zk_broker: 1..=4,
    log_dirs: 2..=4,
    previous_broker_epoch: 3..=4,
});

versioned_fields!(broker_registration_request::Feature {
    name: 0..=4,
    min_supported_version: 0..=4,
    max_supported_version: 0..=4,
});

versioned_fields!(broker_registration_request::Listener {
    name: 0..=4,
    host: 0..=4,
    port: 0..=4,
    security_protocol: 0..=4,
});

versioned_fields!(broker_registration_response::BrokerRegistrationResponse {
    throttle_time_ms: 0..=4,
    error_code: 0..=4,
    broker_epoch: 0..=4,
});

versioned_fields!(broker_heartbeat_request::BrokerHeartbeatRequest {
    broker_id: 0..=1,
    broker_epoch: 0..=1,
    current_metadata_offset: 0..=1,
    want_fence: 0..=1,
    want_shut_down: 0..=1,
    offline_log_dirs: 1..=1,
});

versioned_fields!(broker_heartbeat_response::BrokerHeartbeatResponse {
    throttle_time_ms: 0..=1,
    error_code: 0..=1,
    is_caught_up: 0..=1,
    is_fenced: 0..=1,
    should_shut_down: 0..=1,
});

versioned_fields!(create_topics_request::CreatableReplicaAssignment {
    partition_index: 2..=7,
    broker_ids: 2..=7,
});

versioned_fields!(create_topics_request::CreatableTopic {
    name: 2..=7,
    num_partitions: 2..=7,
    replication_factor: 2..=7,
    assignments: 2..=7 => each,
    configs: 2..=7 => each,
});

versioned_fields!(create_topics_request::CreatableTopicConfig {
    name: 2..=7,
    value: 2..=7,
});

versioned_fields!(create_topics_request::CreateTopicsRequest {
    topics: 2..=7 => each,
    timeout_ms: 2..=7,
    validate_only: 2..=7,
});

versioned_fields!(create_topics_response::CreatableTopicConfigs {
    name: 5..=7,
    value: 5..=7,
    read_only: 5..=7,
    config_source: 5..=7,
    is_sensitive: 5..=7,
});

versioned_fields!(create_topics_response::CreatableTopicResult {
    name: 2..=7,
    topic_id: 7..=7,
    error_code: 2..=7,
    error_message: 2..=7,
    topic_config_error_code: 5..=7,
    num_partitions: 5..=7,
    replication_factor: 5..=7,
    configs: 5..=7 => each_opt,
});

versioned_fields!(create_topics_response::CreateTopicsResponse {
    throttle_time_ms: 2..=7,
    topics: 2..=7 => each,
});

versioned_fields!(delete_topics_request::DeleteTopicState {
    name: 6..=6,
    topic_id: 6..=6,
});

versioned_fields!(delete_topics_request::DeleteTopicsRequest {
    topics: 6..=6 => each,
    topic_names: 1..=5,
    timeout_ms: 1..=6,
});

versioned_fields!(delete_topics_response::DeletableTopicResult {
    name: 1..=6,
    topic_id: 6..=6,
    error_code: 1..=6,
    error_message: 5..=6,
});

versioned_fields!(delete_topics_response::DeleteTopicsResponse {
    throttle_time_ms: 1..=6,
    responses: 1..=6 => each,
});

versioned_fields!(allocate_producer_ids_request::AllocateProducerIdsRequest {
    broker_id: 0..=0,
    broker_epoch: 0..=0,
});

versioned_fields!(
    allocate_producer_ids_response::AllocateProducerIdsResponse {
        throttle_time_ms: 0..=0,
        error_code: 0..=0,
        producer_id_start: 0..=0,
        producer_id_len: 0..=0,
    }
);

versioned_fields!(alter_partition_request::AlterPartitionRequest {
    broker_id: 2..=3,
    broker_epoch: 2..=3,
    topics: 2..=3 => each,
});

versioned_fields!(alter_partition_request::BrokerState {
    broker_id: 3..=3,
    broker_epoch: 3..=3,
});

versioned_fields!(alter_partition_request::PartitionData {
    partition_index: 2..=3,
    leader_epoch: 2..=3,
    new_isr: 2..=2,
    new_isr_with_epochs: 3..=3 => each,
    leader_recovery_state: 2..=3,
    partition_epoch: 2..=3,
});

versioned_fields!(alter_partition_request::TopicData {
    topic_id: 2..=3,
    partitions: 2..=3 => each,
});

versioned_fields!(alter_partition_response::AlterPartitionResponse {
    throttle_time_ms: 2..=3,
    error_code: 2..=3,
    topics: 2..=3 => each,
});

versioned_fields!(alter_partition_response::PartitionData {
    partition_index: 2..=3,
    error_code: 2..=3,
    leader_id: 2..=3,
    leader_epoch: 2..=3,
    isr: 2..=3,
    leader_recovery_state: 2..=3,
    partition_epoch: 2..=3,
});

versioned_fields!(alter_partition_response::TopicData {
    topic_id: 2..=3,
    partitions: 2..=3 => each,
});

versioned_fields!(controller_registration_request::ControllerRegistrationRequest {
    controller_id: 0..=0,
    incarnation_id: 0..=0,
    zk_migration_ready: 0..=0,
    listeners: 0..=0 => each,
    features: 0..=0 => each,
});

versioned_fields!(controller_registration_request::Feature {
    name: 0..=0,
    min_supported_version: 0..=0,
    max_supported_version: 0..=0,
});

versioned_fields!(controller_registration_request::Listener {
    name: 0..=0,
    host: 0..=0,
    port: 0..=0,
    security_protocol: 0..=0,
});

versioned_fields!(
    controller_registration_response::ControllerRegistrationResponse {
        throttle_time_ms: 0..=0,
        error_code: 0..=0,
        error_message: 0..=0,
    }
);

versioned_fields!(describe_cluster_request::DescribeClusterRequest {
    include_cluster_authorized_operations: 0..=2,
    endpoint_type: 1..=2,
    include_fenced_brokers: 2..=2,
});

versioned_fields!(describe_cluster_response::DescribeClusterBroker {
    broker_id: 0..=2,
    host: 0..=2,
    port: 0..=2,
    rack: 0..=2,
    is_fenced: 2..=2,
});

versioned_fields!(describe_cluster_response::DescribeClusterResponse {
    throttle_time_ms: 0..=2,
    error_code: 0..=2,
    error_message: 0..=2,
    endpoint_type: 1..=2,
    cluster_id: 0..=2,
    controller_id: 0..=2,
    brokers: 0..=2 => each,
    cluster_authorized_operations: 0..=2,
});

versioned_fields!(assign_replicas_to_dirs_request::AssignReplicasToDirsRequest {
    broker_id: 0..=0,
    broker_epoch: 0..=0,
    directories: 0..=0 => each,
});

versioned_fields!(assign_replicas_to_dirs_request::DirectoryData {
    id: 0..=0,
    topics: 0..=0 => each,
});

versioned_fields!(assign_replicas_to_dirs_request::PartitionData {
    partition_index: 0..=0,
});

versioned_fields!(assign_replicas_to_dirs_request::TopicData {
    topic_id: 0..=0,
    partitions: 0..=0 => each,
});

versioned_fields!(assign_replicas_to_dirs_response::AssignReplicasToDirsResponse {
    throttle_time_ms: 0..=0,
    error_code: 0..=0,
    directories: 0..=0 => each,
});

versioned_fields!(assign_replicas_to_dirs_response::DirectoryData {
    id: 0..=0,
    topics: 0..=0 => each,
});

versioned_fields!(assign_replicas_to_dirs_response::PartitionData {
    partition_index: 0..=0,
    error_code: 0..=0,
});

versioned_fields!(assign_replicas_to_dirs_response::TopicData {
    topic_id: 0..=0,
    partitions: 0..=0 => each,
});

versioned_fields!(update_features_request::FeatureUpdateKey {
    feature: 0..=2,
    max_version_level: 0..=2,
    allow_downgrade: 0..=0,
    upgrade_type: 1..=2,
});

versioned_fields!(update_features_request::UpdateFeaturesRequest {
    timeout_ms: 0..=2,
    feature_updates: 0..=2 => each,
    validate_only: 1..=2,
});

versioned_fields!(update_features_response::UpdatableFeatureResult {
    feature: 0..=2,
    error_code: 0..=2,
    error_message: 0..=2,
});

versioned_fields!(update_features_response::UpdateFeaturesResponse {
    throttle_time_ms: 0..=2,
    error_code: 0..=2,
    error_message: 0..=2,
    results: 0..=1 => each,
});

versioned_fields!(create_partitions_request::CreatePartitionsAssignment { broker_ids: 0..=3 });

versioned_fields!(create_partitions_request::CreatePartitionsRequest {
    topics: 0..=3 => each,
    timeout_ms: 0..=3,
    validate_only: 0..=3,
});

versioned_fields!(create_partitions_request::CreatePartitionsTopic {
    name: 0..=3,
    count: 0..=3,
    assignments: 0..=3 => each_opt,
});

versioned_fields!(create_partitions_response::CreatePartitionsResponse {
    throttle_time_ms: 0..=3,
    results: 0..=3 => each,
});

versioned_fields!(create_partitions_response::CreatePartitionsTopicResult {
    name: 0..=3,
    error_code: 0..=3,
    error_message: 0..=3,
});

versioned_fields!(incremental_alter_configs_request::AlterConfigsResource {
    resource_type: 0..=1,
    resource_name: 0..=1,
    configs: 0..=1 => each,
});

versioned_fields!(incremental_alter_configs_request::AlterableConfig {
    name: 0..=1,
    config_operation: 0..=1,
    value: 0..=1,
});

versioned_fields!(incremental_alter_configs_request::IncrementalAlterConfigsRequest {
    resources: 0..=1 => each,
    validate_only: 0..=1,
});

versioned_fields!(
    incremental_alter_configs_response::AlterConfigsResourceResponse {
        error_code: 0..=1,
        error_message: 0..=1,
        resource_type: 0..=1,
        resource_name: 0..=1,
    }
);

versioned_fields!(incremental_alter_configs_response::IncrementalAlterConfigsResponse {
    throttle_time_ms: 0..=1,
    responses: 0..=1 => each,
});

versioned_fields!(describe_configs_request::DescribeConfigsRequest {
    resources: 1..=4 => each,
    include_synonyms: 1..=4,
    include_documentation: 3..=4,
});

versioned_fields!(describe_configs_request::DescribeConfigsResource {
    resource_type: 1..=4,
    resource_name: 1..=4,
    configuration_keys: 1..=4,
});

versioned_fields!(describe_configs_response::DescribeConfigsResourceResult {
    name: 1..=4,
    value: 1..=4,
    read_only: 1..=4,
    config_source: 1..=4,
    is_sensitive: 1..=4,
    synonyms: 1..=4 => each,
    config_type: 3..=4,
    documentation: 3..=4,
});

versioned_fields!(describe_configs_response::DescribeConfigsResponse {
    throttle_time_ms: 1..=4,
    results: 1..=4 => each,
});

versioned_fields!(describe_configs_response::DescribeConfigsResult {
    error_code: 1..=4,
    error_message: 1..=4,
    resource_type: 1..=4,
    resource_name: 1..=4,
    configs: 1..=4 => each,
});

versioned_fields!(describe_configs_response::DescribeConfigsSynonym {
    name: 1..=4,
    value: 1..=4,
    source: 1..=4,
});

versioned_fields!(alter_configs_request::AlterConfigsRequest {
    resources: 0..=2 => each,
    validate_only: 0..=2,
});

versioned_fields!(alter_configs_request::AlterConfigsResource {
    resource_type: 0..=2,
    resource_name: 0..=2,
    configs: 0..=2 => each,
});

versioned_fields!(alter_configs_request::AlterableConfig {
    name: 0..=2,
    value: 0..=2,
});

versioned_fields!(alter_configs_response::AlterConfigsResourceResponse {
    error_code: 0..=2,
    error_message: 0..=2,
    resource_type: 0..=2,
    resource_name: 0..=2,
});

versioned_fields!(alter_configs_response::AlterConfigsResponse {
    throttle_time_ms: 0..=2,
    responses: 0..=2 => each,
});

versioned_fields!(elect_leaders_request::ElectLeadersRequest {
    election_type: 1..=2,
    topic_partitions: 0..=2 => each_opt,
    timeout_ms: 0..=2,
});

versioned_fields!(elect_leaders_request::TopicPartitions {
    topic: 0..=2,
    partitions: 0..=2,
});

versioned_fields!(elect_leaders_response::ElectLeadersResponse {
    throttle_time_ms: 0..=2,
    error_code: 1..=2,
    replica_election_results: 0..=2 => each,
});

versioned_fields!(elect_leaders_response::PartitionResult {
    partition_id: 0..=2,
    error_code: 0..=2,
    error_message: 0..=2,
});

versioned_fields!(elect_leaders_response::ReplicaElectionResult {
    topic: 0..=2,
    partition_result: 0..=2 => each,
});

versioned_fields!(unregister_broker_request::UnregisterBrokerRequest { broker_id: 0..=0 });

versioned_fields!(unregister_broker_response::UnregisterBrokerResponse {
    throttle_time_ms: 0..=0,
    error_code: 0..=0,
    error_message: 0..=0,
});

versioned_fields!(add_raft_voter_request::AddRaftVoterRequest {
    cluster_id: 0..=0,
    timeout_ms: 0..=0,
    voter_id: 0..=0,
    voter_directory_id: 0..=0,
    listeners: 0..=0 => each,
});

versioned_fields!(add_raft_voter_request::Listener {
    name: 0..=0,
    host: 0..=0,
    port: 0..=0,
});

versioned_fields!(add_raft_voter_response::AddRaftVoterResponse {
    throttle_time_ms: 0..=0,
    error_code: 0..=0,
    error_message: 0..=0,
});

versioned_fields!(remove_raft_voter_request::RemoveRaftVoterRequest {
    cluster_id: 0..=0,
    voter_id: 0..=0,
    voter_directory_id: 0..=0,
});

versioned_fields!(remove_raft_voter_response::RemoveRaftVoterResponse {
    throttle_time_ms: 0..=0,
    error_code: 0..=0,
    error_message: 0..=0,
});

versioned_fields!(update_raft_voter_request::KRaftVersionFeature {
    min_supported_version: 0..=0,
    max_supported_version: 0..=0,
});

versioned_fields!(update_raft_voter_request::Listener {
    name: 0..=0,
    host: 0..=0,
    port: 0..=0,
});

versioned_fields!(update_raft_voter_request::UpdateRaftVoterRequest {
    cluster_id: 0..=0,
    current_leader_epoch: 0..=0,
    voter_id: 0..=0,
    voter_directory_id: 0..=0,
    listeners: 0..=0 => each,
    k_raft_version_feature: 0..=0 => nested,
});

versioned_fields!(update_raft_voter_response::CurrentLeader {
    leader_id: 0..=0,
    leader_epoch: 0..=0,
    host: 0..=0,
    port: 0..=0,
});

versioned_fields!(update_raft_voter_response::UpdateRaftVoterResponse {
    throttle_time_ms: 0..=0,
    error_code: 0..=0,
    current_leader: 0..=0 => nested,
});
