//! KIP-996 pre-vote and fast failure detection.

use super::*;

#[test]
fn kip_996_a_follower_that_reaches_its_leader_refuses_pre_votes_and_nothing_changes() {
    let (mut c, fetch_id) = follower_of_2_in_epoch_5();
    // Before any successful fetch, a pre-vote from an up-to-date prospective is granted...
    c.handle(
        1,
        Input::Request {
            id: InboundId(10),
            api_version: 2,
            request: pre_vote_request(3, 5, 0, 0),
        },
    )
    .unwrap();
    let RaftResponse::Vote(v) = responses(&mut c).remove(0).1 else {
        panic!()
    };
    assert!(v.topics[0].partitions[0].vote_granted);
    assert_eq!(
        (c.role(), c.epoch()),
        (RoleKind::Follower, 5),
        "granting a pre-vote changes nothing"
    );
    // ...after one, it is refused: the leader is alive.
    c.handle(
        2,
        Input::Response {
            id: fetch_id,
            response: RaftResponse::Fetch(fetch_response(5, Bytes::new(), 0)),
        },
    )
    .unwrap();
    c.handle(
        3,
        Input::Request {
            id: InboundId(11),
            api_version: 2,
            request: pre_vote_request(3, 5, 0, 0),
        },
    )
    .unwrap();
    let RaftResponse::Vote(v) = responses(&mut c)
        .into_iter()
        .find(|(id, _)| *id == InboundId(11))
        .unwrap()
        .1
    else {
        panic!()
    };
    assert!(!v.topics[0].partitions[0].vote_granted);
    assert_eq!((c.role(), c.epoch()), (RoleKind::Follower, 5));
}

#[test]
fn kip_996_a_lost_pre_vote_goes_back_to_the_leader_without_an_epoch_bump() {
    let (mut c, _) = follower_of_2_in_epoch_5();
    c.poll(2_000).unwrap();
    assert_eq!((c.role(), c.epoch()), (RoleKind::Prospective, 5));
    let pre = sends(&mut c);
    let refused = RaftResponse::Vote(VoteResponse::default().with_topics(
        vec![VoteRespTopic::default()
            .with_topic_name(topic_name())
            .with_partitions(vec![VoteRespPartition::default()
                .with_leader_id(2.into())
                .with_leader_epoch(5)
                .with_vote_granted(false)])],
    ));
    let (id3, _, _) = pre.iter().find(|(_, d, _)| *d == 3).cloned().unwrap();
    let (id2, _, _) = pre.iter().find(|(_, d, _)| *d == 2).cloned().unwrap();
    c.handle(
        2_001,
        Input::Response {
            id: id3,
            response: refused.clone(),
        },
    )
    .unwrap();
    assert_eq!(
        c.role(),
        RoleKind::Prospective,
        "one refusal of three: not lost yet"
    );
    c.handle(
        2_002,
        Input::Response {
            id: id2,
            response: refused,
        },
    )
    .unwrap();
    assert_eq!(
        (c.role(), c.epoch()),
        (RoleKind::Follower, 5),
        "back to following 2 in epoch 5"
    );
}

#[test]
fn a_voter_that_cannot_pre_vote_makes_the_prospective_run_the_election() {
    let mut c = core(1);
    c.poll(2_000).unwrap();
    let (id2, _, _) = sends(&mut c).into_iter().find(|(_, d, _)| *d == 2).unwrap();
    c.handle(
        2_001,
        Input::SendFailed {
            id: id2,
            failure: SendFailure::UnsupportedVersion,
        },
    )
    .unwrap();
    assert_eq!((c.role(), c.epoch()), (RoleKind::Candidate, 1));
}

#[test]
fn fast_failure_detection_starts_a_pre_vote_when_the_leader_refuses_connections() {
    let (mut c, fetch_id) = follower_of_2_in_epoch_5();
    c.handle(
        10,
        Input::Response {
            id: fetch_id,
            response: RaftResponse::Fetch(fetch_response(5, Bytes::new(), 0)),
        },
    )
    .unwrap();
    let next = sends(&mut c)
        .into_iter()
        .find(|(_, d, _)| *d == 2)
        .unwrap()
        .0;
    c.handle(
        20,
        Input::SendFailed {
            id: next,
            failure: SendFailure::Disconnected,
        },
    )
    .unwrap();
    assert_eq!(c.role(), RoleKind::Follower);
    let jitter_bound = 20 + 200 + 300;
    assert!(
        c.next_deadline_ms() < 10 + 2_000,
        "the fast path comes before the fetch timeout"
    );
    assert!(c.next_deadline_ms() <= jitter_bound);
    c.poll(jitter_bound).unwrap();
    assert_eq!((c.role(), c.epoch()), (RoleKind::Prospective, 5));
}

#[test]
fn a_prospective_is_not_pulled_back_to_the_leader_it_left_by_a_peer_naming_it() {
    // Both followers of a dead leader 2: a granted pre-vote from the other follower still names
    // leader 2 for epoch 5; following 2 again would livelock the election.
    let (mut c, _) = follower_of_2_in_epoch_5();
    c.poll(2_000).unwrap();
    assert_eq!(c.role(), RoleKind::Prospective);
    let pre = sends(&mut c);
    let granted_naming_2 = RaftResponse::Vote(VoteResponse::default().with_topics(
        vec![VoteRespTopic::default()
            .with_topic_name(topic_name())
            .with_partitions(vec![VoteRespPartition::default()
                .with_leader_id(2.into())
                .with_leader_epoch(5)
                .with_vote_granted(true)])],
    ));
    let (id3, _, _) = pre.iter().find(|(_, d, _)| *d == 3).cloned().unwrap();
    c.handle(
        2_001,
        Input::Response {
            id: id3,
            response: granted_naming_2,
        },
    )
    .unwrap();
    assert_eq!(
        (c.role(), c.epoch()),
        (RoleKind::Candidate, 6),
        "the pre-vote counts; no return to the dead leader"
    );
}
