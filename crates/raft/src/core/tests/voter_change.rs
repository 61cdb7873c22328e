//! AddRaftVoter / RemoveRaftVoter on the leader (KIP-853, KIP-1186; cases C11, C12).

use super::dynamic::{dir, dynamic_core, voter, voters};
use super::*;
use crate::errors;
use crate::voters::ReplicaKey;

/// The standalone leader 1 (kraft.version 1) with its LeaderChange batch committed.
fn standalone() -> Core {
    let (mut c, _) = dynamic_core(1, dir(1), &voters(&[1]));
    assert_eq!(c.role(), RoleKind::Leader);
    assert_eq!(c.high_watermark(), Some(3));
    c.take_outputs();
    c
}

fn fetch_from(c: &mut Core, now: u64, replica: i32, directory: Uuid) {
    let end = c.log().end_offset();
    let mut f = fetch_request(replica, c.epoch(), end.offset, end.epoch, 0);
    f.topics[0].partitions[0].replica_directory_id = directory;
    c.handle(
        now,
        Input::Request {
            id: InboundId(now),
            api_version: 17,
            request: RaftRequest::Fetch(f),
        },
    )
    .unwrap();
}

fn supported() -> Option<(i16, i16)> {
    Some((0, 1))
}

#[test]
fn a_static_quorum_refuses_voter_changes_with_unsupported_version() {
    let mut c = leader();
    fetch_from(&mut c, 2_100, 2, Uuid::nil());
    let a = c
        .remove_voter(2_200, 1, ReplicaKey::new(3, Uuid::nil()))
        .unwrap()
        .unwrap();
    assert_eq!(a.error_code, errors::UNSUPPORTED_VERSION);
    assert_eq!(
        a.error_message.as_deref(),
        Some("Cluster doesn't support removing voter because the kraft.version feature is 0")
    );
}

#[test]
fn a_follower_answers_not_leader() {
    let (mut c, _) = follower_of_2_in_epoch_5();
    let a = c
        .add_voter(10, 1, voter(4), true, supported())
        .unwrap()
        .unwrap();
    assert_eq!(a.error_code, errors::NOT_LEADER_OR_FOLLOWER);
}

#[test]
fn add_voter_checks_in_order() {
    let mut c = standalone();
    let mut no_dir = voter(2);
    no_dir.key.directory_id = None;
    let code = |c: &mut Core, node, versions| {
        c.add_voter(100, 1, node, true, versions)
            .unwrap()
            .unwrap()
            .error_code
    };
    assert_eq!(code(&mut c, no_dir, supported()), errors::INVALID_REQUEST);
    let mut no_endpoint = voter(2);
    no_endpoint.endpoints.clear();
    assert_eq!(
        code(&mut c, no_endpoint, supported()),
        errors::INVALID_REQUEST
    );
    assert_eq!(code(&mut c, voter(1), supported()), errors::DUPLICATE_VOTER);
    assert_eq!(
        code(&mut c, voter(2), Some((0, 0))),
        errors::INVALID_REQUEST,
        "its ApiVersions do not include kraft.version 1"
    );
    assert_eq!(code(&mut c, voter(2), None), errors::INVALID_REQUEST);
    assert_eq!(
        code(&mut c, voter(2), supported()),
        errors::REQUEST_TIMED_OUT,
        "never fetched: not caught up"
    );
    // A fetch with another directory does not make voter(2)'s key caught up.
    fetch_from(&mut c, 200, 2, Uuid::from_u64_pair(9, 9));
    assert_eq!(
        code(&mut c, voter(2), supported()),
        errors::REQUEST_TIMED_OUT
    );
    assert_eq!(
        c.log().end_offset().offset,
        3,
        "nothing appended by a refused change"
    );
}

#[test]
fn case_c11_add_then_remove_the_leader_commits_over_the_new_set_and_the_leader_resigns() {
    let mut c = standalone();
    fetch_from(&mut c, 100, 2, dir(2));
    // AddRaftVoter(2): appended, in force at once, answered when committed.
    assert_eq!(
        c.add_voter(200, 7, voter(2), true, supported()).unwrap(),
        None
    );
    assert_eq!(c.voter_set(), &voters(&[1, 2]));
    assert!(c.has_uncommitted_voter_change());
    // One uncommitted change at a time.
    let busy = c
        .remove_voter(201, 8, ReplicaKey::new(1, dir(1)))
        .unwrap()
        .unwrap();
    assert_eq!(busy.error_code, errors::REQUEST_TIMED_OUT);
    assert!(c.take_voter_change_answers().is_empty());
    // Voter 2 fetches past the VotersRecord: committed by the new set {1, 2}.
    fetch_from(&mut c, 300, 2, dir(2));
    assert_eq!(c.high_watermark(), Some(4));
    assert_eq!(
        c.take_voter_change_answers(),
        vec![VoterChangeAnswer {
            request_id: 7,
            error_code: errors::NONE,
            error_message: None
        }]
    );
    // DescribeQuorum shows both voters with the endpoints of both (C11 step 2).
    c.take_outputs();
    let dq = DescribeQuorumRequest::default().with_topics(vec![DqTopic::default()
        .with_topic_name(topic_name())
        .with_partitions(vec![DqPartition::default()])]);
    c.handle(
        310,
        Input::Request {
            id: InboundId(99),
            api_version: 2,
            request: RaftRequest::DescribeQuorum(dq),
        },
    )
    .unwrap();
    let RaftResponse::DescribeQuorum(r) = responses(&mut c).remove(0).1 else {
        panic!()
    };
    let nodes: Vec<(i32, u16)> = r
        .nodes
        .iter()
        .map(|n| (n.node_id.0, n.listeners[0].port))
        .collect();
    assert_eq!(nodes, vec![(1, 9091), (2, 9092)]);
    // RemoveRaftVoter(1) sent to leader 1 itself, by its key.
    assert_eq!(
        c.remove_voter(400, 9, ReplicaKey::new(1, dir(1))).unwrap(),
        None
    );
    assert_eq!(c.voter_set(), &voters(&[2]));
    assert!(!c.is_voter());
    assert_eq!(
        c.role(),
        RoleKind::Leader,
        "it leads until the removal commits"
    );
    c.take_outputs();
    // The high watermark keeps moving over the new set {2}, without the leader.
    fetch_from(&mut c, 500, 2, dir(2));
    assert_eq!(c.high_watermark(), Some(5));
    assert_eq!(c.take_voter_change_answers()[0].error_code, errors::NONE);
    assert_eq!(
        c.role(),
        RoleKind::Resigned,
        "resigns once the removal committed"
    );
    assert!(sends(&mut c)
        .iter()
        .any(|(_, d, r)| *d == 2 && matches!(r, RaftRequest::EndQuorumEpoch(_))));
    // It stays up as an observer: no election of its own.
    c.poll(100_000).unwrap();
    assert!(!matches!(
        c.role(),
        RoleKind::Prospective | RoleKind::Candidate
    ));
}

/// Found by the simulation (seed 217 of `raft_safety_and_liveness_through_membership_changes`):
/// the leader's removal of itself timed out (REQUEST_TIMED_OUT) before it committed; it
/// committed later, and the leader, no longer a voter, led on for good.
#[test]
fn case_c11_a_leader_whose_timed_out_removal_commits_later_still_resigns() {
    let mut c = standalone();
    fetch_from(&mut c, 100, 2, dir(2));
    assert_eq!(
        c.add_voter(200, 1, voter(2), true, supported()).unwrap(),
        None
    );
    fetch_from(&mut c, 300, 2, dir(2));
    c.take_voter_change_answers();
    assert_eq!(
        c.remove_voter(400, 2, ReplicaKey::new(1, dir(1))).unwrap(),
        None
    );
    // Voter 2 is slow: the request times out first.
    c.poll(400 + crate::config::DEFAULT_REQUEST_TIMEOUT_MS)
        .unwrap();
    let answers = c.take_voter_change_answers();
    assert_eq!(answers[0].error_code, errors::REQUEST_TIMED_OUT);
    assert_eq!(
        c.role(),
        RoleKind::Leader,
        "the removal is still uncommitted"
    );
    // Then 2 fetches past the VotersRecord: committed, so the leader resigns.
    fetch_from(&mut c, 2_500, 2, dir(2));
    assert!(!c.has_uncommitted_voter_change());
    c.poll(2_501).unwrap();
    assert_eq!(c.role(), RoleKind::Resigned);
}

#[test]
fn case_c12_ack_when_false_answers_at_append_and_the_leader_keeps_its_epoch() {
    let mut c = standalone();
    let epoch = c.epoch();
    fetch_from(&mut c, 100, 2, dir(2));
    // KIP-1186 AckWhenCommitted=false: answered at once, before voter 2 fetches again.
    let a = c
        .add_voter(200, 5, voter(2), false, supported())
        .unwrap()
        .unwrap();
    assert_eq!(a.error_code, errors::NONE);
    // Voter 2 keeps fetching: the change commits and the leader never resigns.
    for t in (300..6_000).step_by(500) {
        fetch_from(&mut c, t, 2, dir(2));
        c.take_outputs();
    }
    assert_eq!(c.role(), RoleKind::Leader);
    assert_eq!(c.epoch(), epoch);
    assert!(!c.has_uncommitted_voter_change());
    assert!(
        c.take_voter_change_answers().is_empty(),
        "answered once only"
    );
}

#[test]
fn remove_voter_needs_the_exact_key_and_times_out_uncommitted() {
    let mut c = standalone();
    fetch_from(&mut c, 100, 2, dir(2));
    assert_eq!(
        c.add_voter(200, 1, voter(2), true, supported()).unwrap(),
        None
    );
    fetch_from(&mut c, 300, 2, dir(2));
    c.take_voter_change_answers();
    let a = c
        .remove_voter(400, 2, ReplicaKey::new(2, Uuid::from_u64_pair(9, 9)))
        .unwrap()
        .unwrap();
    assert_eq!(a.error_code, errors::VOTER_NOT_FOUND);
    // The new set {1}: the leader commits the removal alone, at once.
    assert_eq!(
        c.remove_voter(500, 3, ReplicaKey::new(2, dir(2)))
            .unwrap()
            .map(|a| a.error_code),
        Some(errors::NONE)
    );
    assert_eq!(c.voter_set(), &voters(&[1]));
    // Now add 3, which never fetches again after its first fetch: the change times out.
    fetch_from(&mut c, 600, 3, dir(3));
    assert_eq!(
        c.add_voter(700, 4, voter(3), true, supported()).unwrap(),
        None
    );
    c.poll(700 + crate::config::DEFAULT_REQUEST_TIMEOUT_MS)
        .unwrap();
    let answers = c.take_voter_change_answers();
    assert_eq!(answers[0].request_id, 4);
    assert_eq!(answers[0].error_code, errors::REQUEST_TIMED_OUT);
}

#[test]
fn update_raft_voter_at_kraft_version_1_appends_the_new_endpoints() {
    use super::update_voter::{update_voter_answer, update_voter_request};
    let mut c = standalone();
    fetch_from(&mut c, 100, 2, dir(2));
    assert_eq!(
        c.add_voter(200, 1, voter(2), true, supported()).unwrap(),
        None
    );
    c.take_outputs();
    // Uncommitted: the update waits (REQUEST_TIMED_OUT, Java `UpdateVoterHandler`).
    let r = update_voter_answer(&mut c, 250, update_voter_request(2, 1, dir(2)));
    assert_eq!(r.error_code, errors::REQUEST_TIMED_OUT);
    fetch_from(&mut c, 300, 2, dir(2));
    c.take_outputs();
    // Another directory for id 2 is not a voter.
    let r = update_voter_answer(
        &mut c,
        350,
        update_voter_request(2, 1, Uuid::from_u64_pair(9, 9)),
    );
    assert_eq!(r.error_code, errors::VOTER_NOT_FOUND);
    // The voter reports port 9092 on host c2 (already so) and range [0, 1]: nothing new.
    let end = c.log().end_offset().offset;
    let r = update_voter_answer(&mut c, 400, update_voter_request(2, 1, dir(2)));
    assert_eq!(r.error_code, errors::NONE);
    assert_eq!(
        c.log().end_offset().offset,
        end,
        "unchanged set: nothing appended"
    );
    // A new port: appended and in force at once, answered NONE at append.
    let RaftRequest::UpdateRaftVoter(mut moved) = update_voter_request(2, 1, dir(2)) else {
        unreachable!()
    };
    moved.listeners[0].port = 19092;
    let r = update_voter_answer(&mut c, 500, RaftRequest::UpdateRaftVoter(moved));
    assert_eq!(r.error_code, errors::NONE);
    assert_eq!(c.log().end_offset().offset, end + 1);
    assert_eq!(
        c.voter_set().endpoint(2, "CONTROLLER").map(|e| e.port),
        Some(19092)
    );
}
