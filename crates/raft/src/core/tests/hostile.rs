//! Raft RPCs a client could forge (nothing authenticates a PLAINTEXT controller listener): none
//! may stop the node, overflow its epoch, or move its high watermark. Each test says what Java
//! 4.1's `KafkaRaftClient` does with the same message; where Java is fooled too, the defence is
//! authentication (the security work), not the Raft layer.

use kafka_protocol::messages::begin_quorum_epoch_request::{
    PartitionData as BeginPartition, TopicData as BeginTopic,
};
use kafka_protocol::messages::end_quorum_epoch_request::{
    PartitionData as EndPartition, TopicData as EndTopic,
};
use kafka_protocol::messages::{BeginQuorumEpochRequest, EndQuorumEpochRequest};

use super::*;
use crate::config::MAX_REQUEST_EPOCH;
use crate::errors;

fn begin_quorum_epoch(leader: i32, epoch: i32) -> RaftRequest {
    RaftRequest::BeginQuorumEpoch(BeginQuorumEpochRequest::default().with_topics(vec![
        BeginTopic::default()
            .with_topic_name(topic_name())
            .with_partitions(vec![BeginPartition::default()
                .with_leader_id(leader.into())
                .with_leader_epoch(epoch)]),
    ]))
}

fn end_quorum_epoch(leader: i32, epoch: i32) -> RaftRequest {
    RaftRequest::EndQuorumEpoch(EndQuorumEpochRequest::default().with_topics(vec![
        EndTopic::default()
            .with_topic_name(topic_name())
            .with_partitions(vec![EndPartition::default()
                .with_leader_id(leader.into())
                .with_leader_epoch(epoch)]),
    ]))
}

/// Sends `request` at `now_ms` and returns the partition-level error code of the answer.
fn partition_error(core: &mut Core, now_ms: u64, request: RaftRequest) -> i16 {
    core.handle(
        now_ms,
        Input::Request {
            id: InboundId(77),
            api_version: 1,
            request,
        },
    )
    .expect("a forged request is answered, never fatal");
    match responses(core).remove(0).1 {
        RaftResponse::BeginQuorumEpoch(r) => r.topics[0].partitions[0].error_code,
        RaftResponse::EndQuorumEpoch(r) => r.topics[0].partitions[0].error_code,
        RaftResponse::Vote(r) => r.topics[0].partitions[0].error_code,
        other => panic!("unexpected {other:?}"),
    }
}

/// Java: `QuorumState.transitionToFollower` throws IllegalStateException ("matches the local
/// broker.id"), the Raft IO thread dies and the process exits. Here: INVALID_REQUEST, and the
/// leader stays leader of its epoch.
#[test]
fn begin_quorum_epoch_naming_the_receiver_as_leader_is_refused() {
    let mut c = leader();
    for epoch in [1, 2] {
        let error = partition_error(&mut c, 2_100, begin_quorum_epoch(1, epoch));
        assert_eq!(error, errors::INVALID_REQUEST, "epoch {epoch}");
        assert_eq!((c.role(), c.epoch()), (RoleKind::Leader, 1));
    }
}

/// Java: `maybeTransition` for the current epoch with another leader throws
/// IllegalStateException and the process exits. Here: INVALID_REQUEST, nothing changes.
#[test]
fn a_second_leader_claimed_for_a_known_epoch_is_refused() {
    let (mut c, _) = follower_of_2_in_epoch_5();
    assert_eq!(
        partition_error(&mut c, 10, begin_quorum_epoch(3, 5)),
        errors::INVALID_REQUEST
    );
    assert_eq!(
        partition_error(&mut c, 11, end_quorum_epoch(3, 5)),
        errors::INVALID_REQUEST
    );
    assert_eq!(c.leader_and_epoch().leader_id, Some(2));
    assert_eq!((c.role(), c.epoch()), (RoleKind::Follower, 5));
    // The real leader's EndQuorumEpoch is still honoured.
    assert_eq!(
        partition_error(&mut c, 12, end_quorum_epoch(2, 5)),
        errors::NONE
    );
}

/// Java accepts any epoch and its next election computes `epoch + 1` in an `int`, which wraps
/// negative. Here an epoch with no room left for elections is INVALID_REQUEST and the node's
/// epoch does not move.
#[test]
fn epochs_with_no_room_for_elections_are_refused() {
    let mut c = leader();
    for epoch in [MAX_REQUEST_EPOCH + 1, i32::MAX] {
        assert_eq!(
            partition_error(&mut c, 2_100, begin_quorum_epoch(2, epoch)),
            errors::INVALID_REQUEST
        );
        assert_eq!(
            partition_error(&mut c, 2_101, vote_request(2, epoch, 0, 10)),
            errors::INVALID_REQUEST
        );
        assert_eq!(
            partition_error(&mut c, 2_102, end_quorum_epoch(2, epoch)),
            errors::INVALID_REQUEST
        );
        assert_eq!((c.role(), c.epoch()), (RoleKind::Leader, 1));
    }
    // The bound itself is still an epoch a peer may name.
    assert_eq!(
        partition_error(&mut c, 2_200, begin_quorum_epoch(2, MAX_REQUEST_EPOCH)),
        errors::NONE
    );
    assert_eq!(c.epoch(), MAX_REQUEST_EPOCH);
}

/// Java (`validateVoterOnlyRequest`) answers INCONSISTENT_VOTER_SET to a Vote,
/// BeginQuorumEpoch or EndQuorumEpoch from a node outside the voter set; so do we. Without it
/// a client could make every voter follow a phantom leader, or spend their votes on a
/// candidate that can never lead, again and again.
#[test]
fn voter_only_requests_from_non_voters_are_refused() {
    let mut c = leader();
    assert_eq!(
        partition_error(&mut c, 2_100, vote_request(99, 2, 0, 10)),
        errors::INCONSISTENT_VOTER_SET
    );
    assert_eq!(
        partition_error(&mut c, 2_101, begin_quorum_epoch(99, 2)),
        errors::INCONSISTENT_VOTER_SET
    );
    assert_eq!(
        partition_error(&mut c, 2_102, end_quorum_epoch(99, 1)),
        errors::INCONSISTENT_VOTER_SET
    );
    // A Vote in this node's own name is refused as well (Java would count it as a candidate).
    assert_eq!(
        partition_error(&mut c, 2_103, vote_request(1, 2, 0, 10)),
        errors::INVALID_REQUEST
    );
    assert_eq!((c.role(), c.epoch()), (RoleKind::Leader, 1));
}

/// Java answers INCONSISTENT_CLUSTER_ID to every Raft request naming another cluster; a
/// request without a cluster id is accepted (`hasValidClusterId`), by Java and by us.
#[test]
fn requests_naming_another_cluster_change_nothing() {
    let mut c = leader();
    let mut vote = vote_request(2, 5, 0, 10);
    let mut begin = begin_quorum_epoch(2, 5);
    let mut end = end_quorum_epoch(2, 5);
    let other = Some(StrBytes::from_static_str("another-cluster"));
    for request in [&mut vote, &mut begin, &mut end] {
        match request {
            RaftRequest::Vote(r) => r.cluster_id = other.clone(),
            RaftRequest::BeginQuorumEpoch(r) => r.cluster_id = other.clone(),
            RaftRequest::EndQuorumEpoch(r) => r.cluster_id = other.clone(),
            _ => unreachable!(),
        }
    }
    for request in [vote, begin, end] {
        c.handle(
            2_100,
            Input::Request {
                id: InboundId(5),
                api_version: 1,
                request,
            },
        )
        .unwrap();
        let top_error = match responses(&mut c).remove(0).1 {
            RaftResponse::Vote(r) => r.error_code,
            RaftResponse::BeginQuorumEpoch(r) => r.error_code,
            RaftResponse::EndQuorumEpoch(r) => r.error_code,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(top_error, errors::INCONSISTENT_CLUSTER_ID);
    }
    assert_eq!((c.role(), c.epoch()), (RoleKind::Leader, 1));
}

/// A Fetch that names a voter's replica id cannot be told apart from that voter's on a
/// listener without authentication — Java is fooled the same way. What the leader does check:
/// a fetch offset beyond its log end never counts (the position is answered as diverging), so
/// the high watermark can never pass what the leader itself has written.
#[test]
fn a_forged_voter_fetch_beyond_the_log_end_does_not_move_the_high_watermark() {
    let mut c = leader();
    let end = c.log().end_offset().offset;
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(9),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(2, 1, end + 1_000, 1, 0)),
        },
    )
    .unwrap();
    let _ = responses(&mut c);
    assert!(c.high_watermark().unwrap_or(0) <= end);
}
