//! UpdateRaftVoter on a static quorum, and shutdown with unreachable voters.

use super::*;

pub(super) fn update_voter_request(voter: i32, epoch: i32, directory_id: Uuid) -> RaftRequest {
    use kafka_protocol::messages::update_raft_voter_request::{KRaftVersionFeature, Listener};
    RaftRequest::UpdateRaftVoter(
        kafka_protocol::messages::UpdateRaftVoterRequest::default()
            .with_cluster_id(Some(StrBytes::from_static_str("cluster-A")))
            .with_current_leader_epoch(epoch)
            .with_voter_id(voter)
            .with_voter_directory_id(directory_id)
            .with_listeners(vec![Listener::default()
                .with_name(StrBytes::from_static_str("CONTROLLER"))
                .with_host(StrBytes::from_static_str("c2"))
                .with_port(9092)])
            .with_k_raft_version_feature(
                KRaftVersionFeature::default()
                    .with_min_supported_version(0)
                    .with_max_supported_version(1),
            ),
    )
}

pub(super) fn update_voter_answer(
    c: &mut Core,
    at_ms: u64,
    request: RaftRequest,
) -> kafka_protocol::messages::UpdateRaftVoterResponse {
    c.handle(
        at_ms,
        Input::Request {
            id: InboundId(77),
            api_version: 0,
            request,
        },
    )
    .unwrap();
    let out = responses(c);
    assert_eq!(out.len(), 1, "answered at once");
    let RaftResponse::UpdateRaftVoter(r) = out.into_iter().next().unwrap().1 else {
        panic!("not an UpdateRaftVoter answer")
    };
    r
}

/// A Java 4.1+ follower sends UpdateRaftVoter on kraft.version 0 until the leader answers NONE or
/// UNSUPPORTED_VERSION; a static-quorum leader takes the report into its in-memory voter set
/// (for a later kraft.version upgrade), names itself (with its endpoint) as the current leader,
/// and changes nothing in the log.
#[test]
fn update_raft_voter_on_a_static_quorum_is_taken_in_memory() {
    let mut c = leader();
    let dir = Uuid::from_u64_pair(2, 2);
    let r = update_voter_answer(&mut c, 2_100, update_voter_request(2, 1, dir));
    assert_eq!(
        r.error_code,
        crate::errors::REQUEST_TIMED_OUT,
        "no high watermark yet, as in Kafka"
    );
    c.handle(
        2_101,
        Input::Request {
            id: InboundId(9),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(2, 1, 1, 1, 0)),
        },
    )
    .unwrap();
    c.take_outputs();
    assert_eq!(c.high_watermark(), Some(1));
    let end = c.log().end_offset();
    let r = update_voter_answer(&mut c, 2_102, update_voter_request(2, 1, dir));
    assert_eq!(r.error_code, crate::errors::NONE);
    assert_eq!(
        c.log().end_offset(),
        end,
        "nothing written at kraft.version 0"
    );
    assert_eq!(c.kraft_version(), 0);
    assert_eq!(
        (r.current_leader.leader_id.0, r.current_leader.leader_epoch),
        (1, 1)
    );
    assert_eq!(
        (r.current_leader.host.as_str(), r.current_leader.port),
        ("c1", 9091)
    );
    assert_eq!((c.role(), c.epoch()), (RoleKind::Leader, 1));
    // Kafka's other checks, in its order.
    assert_eq!(
        update_voter_answer(&mut c, 2_103, update_voter_request(2, 0, dir)).error_code,
        crate::errors::FENCED_LEADER_EPOCH
    );
    assert_eq!(
        update_voter_answer(&mut c, 2_104, update_voter_request(2, 2, dir)).error_code,
        crate::errors::UNKNOWN_LEADER_EPOCH
    );
    assert_eq!(
        update_voter_answer(&mut c, 2_105, update_voter_request(2, 1, Uuid::nil())).error_code,
        crate::errors::INVALID_REQUEST
    );
    let RaftRequest::UpdateRaftVoter(mut other_cluster) = update_voter_request(2, 1, dir) else {
        unreachable!()
    };
    other_cluster.cluster_id = Some(StrBytes::from_static_str("cluster-B"));
    let r = update_voter_answer(&mut c, 2_106, RaftRequest::UpdateRaftVoter(other_cluster));
    assert_eq!(r.error_code, crate::errors::INCONSISTENT_CLUSTER_ID);
}

#[test]
fn update_raft_voter_sent_to_a_follower_names_the_leader() {
    let (mut c, _) = follower_of_2_in_epoch_5();
    let r = update_voter_answer(
        &mut c,
        10,
        update_voter_request(3, 5, Uuid::from_u64_pair(3, 3)),
    );
    assert_eq!(r.error_code, crate::errors::NOT_LEADER_OR_FOLLOWER);
    assert_eq!(
        (r.current_leader.leader_id.0, r.current_leader.leader_epoch),
        (2, 5)
    );
    assert_eq!(
        (r.current_leader.host.as_str(), r.current_leader.port),
        ("c2", 9092)
    );
}

#[test]
fn a_shutting_down_leader_does_not_wait_for_voters_that_refuse_connections() {
    let mut c = leader();
    c.resign(2_100, true).unwrap();
    let ends: Vec<_> = sends(&mut c)
        .into_iter()
        .filter(|(_, _, r)| matches!(r, RaftRequest::EndQuorumEpoch(_)))
        .collect();
    assert!(!c.shutdown_may_complete());
    for (id, _, _) in ends {
        c.handle(
            2_101,
            Input::SendFailed {
                id,
                failure: SendFailure::Disconnected,
            },
        )
        .unwrap();
    }
    assert!(c.shutdown_may_complete());
}
