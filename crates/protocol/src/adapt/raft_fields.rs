//! Field version tables of the Raft apis (Fetch, FetchSnapshot, Vote, BeginQuorumEpoch,
//! EndQuorumEpoch, DescribeQuorum), requests and responses. Format: `field: lo..=hi` is the
//! inclusive version range that carries the field.
//!
//! Generated from the `Supported API versions` doc comments of kafka-protocol 0.18.0's
//! message structs (one entry per field, `unknown_tagged_fields` excepted); regenerate when
//! the crate is upgraded. `=> nested` / `=> each` / `=> each_opt` mark struct-typed fields
//! (single, `Vec`, `Option<Vec>`) whose own fields are adapted recursively.

use kafka_protocol::messages::*;

versioned_fields!(fetch_request::FetchPartition {
    partition: 4..=18,
    current_leader_epoch: 9..=18,
    fetch_offset: 4..=18,
    last_fetched_epoch: 12..=18,
    log_start_offset: 5..=18,
    partition_max_bytes: 4..=18,
    replica_directory_id: 17..=18,
    high_watermark: 18..=18,
});

versioned_fields!(fetch_request::FetchRequest {
    cluster_id: 12..=18,
    replica_id: 4..=14,
    replica_state: 15..=18 => nested,
    max_wait_ms: 4..=18,
    min_bytes: 4..=18,
    max_bytes: 4..=18,
    isolation_level: 4..=18,
    session_id: 7..=18,
    session_epoch: 7..=18,
    topics: 4..=18 => each,
    forgotten_topics_data: 7..=18 => each,
    rack_id: 11..=18,
});

versioned_fields!(fetch_request::FetchTopic {
    topic: 4..=12,
    topic_id: 13..=18,
    partitions: 4..=18 => each,
});

versioned_fields!(fetch_request::ForgottenTopic {
    topic: 7..=12,
    topic_id: 13..=18,
    partitions: 7..=18,
});

versioned_fields!(fetch_request::ReplicaState {
    replica_id: 15..=18,
    replica_epoch: 15..=18,
});

versioned_fields!(fetch_response::AbortedTransaction {
    producer_id: 4..=18,
    first_offset: 4..=18,
});

versioned_fields!(fetch_response::EpochEndOffset {
    epoch: 12..=18,
    end_offset: 12..=18,
});

versioned_fields!(fetch_response::FetchResponse {
    throttle_time_ms: 4..=18,
    error_code: 7..=18,
    session_id: 7..=18,
    responses: 4..=18 => each,
    node_endpoints: 16..=18 => each,
});

versioned_fields!(fetch_response::FetchableTopicResponse {
    topic: 4..=12,
    topic_id: 13..=18,
    partitions: 4..=18 => each,
});

versioned_fields!(fetch_response::LeaderIdAndEpoch {
    leader_id: 12..=18,
    leader_epoch: 12..=18,
});

versioned_fields!(fetch_response::NodeEndpoint {
    node_id: 16..=18,
    host: 16..=18,
    port: 16..=18,
    rack: 16..=18,
});

versioned_fields!(fetch_response::PartitionData {
    partition_index: 4..=18,
    error_code: 4..=18,
    high_watermark: 4..=18,
    last_stable_offset: 4..=18,
    log_start_offset: 5..=18,
    diverging_epoch: 12..=18 => nested,
    current_leader: 12..=18 => nested,
    snapshot_id: 12..=18 => nested,
    aborted_transactions: 4..=18 => each_opt,
    preferred_read_replica: 11..=18,
    records: 4..=18,
});

versioned_fields!(fetch_response::SnapshotId {
    end_offset: 4..=18,
    epoch: 4..=18,
});

versioned_fields!(fetch_snapshot_request::FetchSnapshotRequest {
    cluster_id: 0..=1,
    replica_id: 0..=1,
    max_bytes: 0..=1,
    topics: 0..=1 => each,
});

versioned_fields!(fetch_snapshot_request::PartitionSnapshot {
    partition: 0..=1,
    current_leader_epoch: 0..=1,
    snapshot_id: 0..=1 => nested,
    position: 0..=1,
    replica_directory_id: 1..=1,
});

versioned_fields!(fetch_snapshot_request::SnapshotId {
    end_offset: 0..=1,
    epoch: 0..=1,
});

versioned_fields!(fetch_snapshot_request::TopicSnapshot {
    name: 0..=1,
    partitions: 0..=1 => each,
});

versioned_fields!(fetch_snapshot_response::FetchSnapshotResponse {
    throttle_time_ms: 0..=1,
    error_code: 0..=1,
    topics: 0..=1 => each,
    node_endpoints: 1..=1 => each,
});

versioned_fields!(fetch_snapshot_response::LeaderIdAndEpoch {
    leader_id: 0..=1,
    leader_epoch: 0..=1,
});

versioned_fields!(fetch_snapshot_response::NodeEndpoint {
    node_id: 1..=1,
    host: 1..=1,
    port: 1..=1,
});

versioned_fields!(fetch_snapshot_response::PartitionSnapshot {
    index: 0..=1,
    error_code: 0..=1,
    snapshot_id: 0..=1 => nested,
    current_leader: 0..=1 => nested,
    size: 0..=1,
    position: 0..=1,
    unaligned_records: 0..=1,
});

versioned_fields!(fetch_snapshot_response::SnapshotId {
    end_offset: 0..=1,
    epoch: 0..=1,
});

versioned_fields!(fetch_snapshot_response::TopicSnapshot {
    name: 0..=1,
    partitions: 0..=1 => each,
});

versioned_fields!(vote_request::PartitionData {
    partition_index: 0..=2,
    replica_epoch: 0..=2,
    replica_id: 0..=2,
    replica_directory_id: 1..=2,
    voter_directory_id: 1..=2,
    last_offset_epoch: 0..=2,
    last_offset: 0..=2,
    pre_vote: 2..=2,
});

versioned_fields!(vote_request::TopicData {
    topic_name: 0..=2,
    partitions: 0..=2 => each,
});

versioned_fields!(vote_request::VoteRequest {
    cluster_id: 0..=2,
    voter_id: 1..=2,
    topics: 0..=2 => each,
});

versioned_fields!(vote_response::NodeEndpoint {
    node_id: 1..=2,
    host: 1..=2,
    port: 1..=2,
});

versioned_fields!(vote_response::PartitionData {
    partition_index: 0..=2,
    error_code: 0..=2,
    leader_id: 0..=2,
    leader_epoch: 0..=2,
    vote_granted: 0..=2,
});

versioned_fields!(vote_response::TopicData {
    topic_name: 0..=2,
    partitions: 0..=2 => each,
});

versioned_fields!(vote_response::VoteResponse {
    error_code: 0..=2,
    topics: 0..=2 => each,
    node_endpoints: 1..=2 => each,
});

versioned_fields!(begin_quorum_epoch_request::BeginQuorumEpochRequest {
    cluster_id: 0..=1,
    voter_id: 1..=1,
    topics: 0..=1 => each,
    leader_endpoints: 1..=1 => each,
});

versioned_fields!(begin_quorum_epoch_request::LeaderEndpoint {
    name: 1..=1,
    host: 1..=1,
    port: 1..=1,
});

versioned_fields!(begin_quorum_epoch_request::PartitionData {
    partition_index: 0..=1,
    voter_directory_id: 1..=1,
    leader_id: 0..=1,
    leader_epoch: 0..=1,
});

versioned_fields!(begin_quorum_epoch_request::TopicData {
    topic_name: 0..=1,
    partitions: 0..=1 => each,
});

versioned_fields!(begin_quorum_epoch_response::BeginQuorumEpochResponse {
    error_code: 0..=1,
    topics: 0..=1 => each,
    node_endpoints: 1..=1 => each,
});

versioned_fields!(begin_quorum_epoch_response::NodeEndpoint {
    node_id: 1..=1,
    host: 1..=1,
    port: 1..=1,
});

versioned_fields!(begin_quorum_epoch_response::PartitionData {
    partition_index: 0..=1,
    error_code: 0..=1,
    leader_id: 0..=1,
    leader_epoch: 0..=1,
});

versioned_fields!(begin_quorum_epoch_response::TopicData {
    topic_name: 0..=1,
    partitions: 0..=1 => each,
});

versioned_fields!(end_quorum_epoch_request::EndQuorumEpochRequest {
    cluster_id: 0..=1,
    topics: 0..=1 => each,
    leader_endpoints: 1..=1 => each,
});

versioned_fields!(end_quorum_epoch_request::LeaderEndpoint {
    name: 1..=1,
    host: 1..=1,
    port: 1..=1,
});

versioned_fields!(end_quorum_epoch_request::PartitionData {
    partition_index: 0..=1,
    leader_id: 0..=1,
    leader_epoch: 0..=1,
    preferred_successors: 0..=0,
    preferred_candidates: 1..=1 => each,
});

versioned_fields!(end_quorum_epoch_request::ReplicaInfo {
    candidate_id: 1..=1,
    candidate_directory_id: 1..=1,
});

versioned_fields!(end_quorum_epoch_request::TopicData {
    topic_name: 0..=1,
    partitions: 0..=1 => each,
});

versioned_fields!(end_quorum_epoch_response::EndQuorumEpochResponse {
    error_code: 0..=1,
    topics: 0..=1 => each,
    node_endpoints: 1..=1 => each,
});

versioned_fields!(end_quorum_epoch_response::NodeEndpoint {
    node_id: 1..=1,
    host: 1..=1,
    port: 1..=1,
});

versioned_fields!(end_quorum_epoch_response::PartitionData {
    partition_index: 0..=1,
    error_code: 0..=1,
    leader_id: 0..=1,
    leader_epoch: 0..=1,
});

versioned_fields!(end_quorum_epoch_response::TopicData {
    topic_name: 0..=1,
    partitions: 0..=1 => each,
});

versioned_fields!(describe_quorum_request::DescribeQuorumRequest {
    topics: 0..=2 => each,
});

versioned_fields!(describe_quorum_request::PartitionData {
    partition_index: 0..=2,
});

versioned_fields!(describe_quorum_request::TopicData {
    topic_name: 0..=2,
    partitions: 0..=2 => each,
});

versioned_fields!(describe_quorum_response::DescribeQuorumResponse {
    error_code: 0..=2,
    error_message: 2..=2,
    topics: 0..=2 => each,
    nodes: 2..=2 => each,
});

versioned_fields!(describe_quorum_response::Listener {
    name: 2..=2,
    host: 2..=2,
    port: 2..=2,
});

versioned_fields!(describe_quorum_response::Node {
    node_id: 2..=2,
    listeners: 2..=2 => each,
});

versioned_fields!(describe_quorum_response::PartitionData {
    partition_index: 0..=2,
    error_code: 0..=2,
    error_message: 2..=2,
    leader_id: 0..=2,
    leader_epoch: 0..=2,
    high_watermark: 0..=2,
    current_voters: 0..=2 => each,
    observers: 0..=2 => each,
});

versioned_fields!(describe_quorum_response::ReplicaState {
    replica_id: 0..=2,
    replica_directory_id: 2..=2,
    log_end_offset: 0..=2,
    last_fetch_timestamp: 1..=2,
    last_caught_up_timestamp: 1..=2,
});

versioned_fields!(describe_quorum_response::TopicData {
    topic_name: 0..=2,
    partitions: 0..=2 => each,
});
