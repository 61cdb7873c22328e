//! Static → dynamic: UpdateRaftVoter reports at kraft.version 0 and the kraft.version upgrade
//! (Kafka `KafkaRaftClientTest` upgrade cases, `LeaderState.maybeAppendUpgradedKRaftVersion`).

use super::update_voter::{update_voter_answer, update_voter_request};
use super::*;
use crate::core::KraftUpgradeError;
use crate::voters::ReplicaKey;

fn dir(id: i32) -> Uuid {
    Uuid::from_u64_pair(id as u64, id as u64)
}

/// Node 1 leads epoch 1 of the static quorum {1, 2, 3}, with its LeaderChange committed.
fn committed_leader() -> Core {
    let mut c = leader();
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
    c
}

fn upgrade(c: &mut Core, at_ms: u64, validate_only: bool) -> Result<bool, KraftUpgradeError> {
    let epoch = c.epoch();
    c.upgrade_kraft_version(at_ms, epoch, 1, validate_only)
}

#[test]
fn a_static_quorum_upgrades_once_every_voter_reported_itself() {
    let mut c = committed_leader();
    assert_eq!(c.kraft_version(), 0);
    // Only the leader is known: voters 2 and 3 have not reported a kraft.version range.
    let err = upgrade(&mut c, 2_200, true).unwrap_err();
    assert!(
        matches!(&err, KraftUpgradeError::InvalidUpdateVersion(m)
            if m == "Invalid upgrade of kraft.version to KRAFT_VERSION_1 because not all of the voters support it"),
        "{err}"
    );
    let r = update_voter_answer(&mut c, 2_201, update_voter_request(2, 1, dir(2)));
    assert_eq!(r.error_code, crate::errors::NONE);
    assert!(
        upgrade(&mut c, 2_202, true).is_err(),
        "voter 3 is still missing"
    );
    // A voter id outside the static set, and a range without the version in force.
    assert_eq!(
        update_voter_answer(&mut c, 2_203, update_voter_request(4, 1, dir(4))).error_code,
        crate::errors::VOTER_NOT_FOUND
    );
    let RaftRequest::UpdateRaftVoter(mut only_1) = update_voter_request(3, 1, dir(3)) else {
        unreachable!()
    };
    only_1.k_raft_version_feature.min_supported_version = 1;
    assert_eq!(
        update_voter_answer(&mut c, 2_204, RaftRequest::UpdateRaftVoter(only_1)).error_code,
        crate::errors::INVALID_REQUEST
    );
    let r = update_voter_answer(&mut c, 2_205, update_voter_request(3, 1, dir(3)));
    assert_eq!(r.error_code, crate::errors::NONE);

    let end = c.log().end_offset().offset;
    assert!(upgrade(&mut c, 2_206, true).unwrap());
    assert_eq!(
        c.log().end_offset().offset,
        end,
        "validate_only appends nothing"
    );
    assert_eq!(c.kraft_version(), 0);
    // Stale epoch: not the leader of it.
    assert!(matches!(
        c.upgrade_kraft_version(2_207, 0, 1, false),
        Err(KraftUpgradeError::NotLeader(0))
    ));

    assert!(upgrade(&mut c, 2_208, false).unwrap());
    assert_eq!(
        c.log().end_offset().offset,
        end + 2,
        "one control batch: KRaftVersion and Voters"
    );
    assert_eq!(c.kraft_version(), 1);
    let voters = c.voter_set();
    assert!(voters.is_voter(ReplicaKey::new(2, dir(2))));
    assert!(voters.is_voter(ReplicaKey::new(3, dir(3))));
    assert!(voters.is_voter(ReplicaKey::new(1, Uuid::from_u64_pair(7, 7))));
    assert!(
        !voters.is_voter(ReplicaKey::new(2, dir(9))),
        "directory ids count from now on"
    );
    assert_eq!(voters.node(2).unwrap().supported_kraft_versions, (0, 1));
    assert_eq!(voters.endpoint(2, "CONTROLLER").unwrap().host, "c2");
    assert!(c.has_uncommitted_voter_change());
    // The static voters are the same voters with their directories named: their progress
    // stays, none of them is listed as an observer.
    let states = c.replica_states();
    assert!(
        states.iter().all(|(_, is_voter, _)| *is_voter),
        "{states:?}"
    );
    let (_, _, p2) = states.iter().find(|(id, _, _)| *id == 2).unwrap();
    assert_eq!(
        p2.end_offset,
        Some(1),
        "voter 2's fetch before the upgrade still counts"
    );
    assert!(!upgrade(&mut c, 2_209, false).unwrap(), "already at 1");
    let err = c.upgrade_kraft_version(2_210, 1, 0, false).unwrap_err();
    assert!(
        matches!(err, KraftUpgradeError::InvalidUpdateVersion(_)),
        "{err}"
    );

    // Voter 2 fetches the batch: the upgrade commits, and voter changes are possible. From now
    // on only a fetch with its directory id counts.
    let fetch_2 = |dir: Uuid| {
        let mut f = fetch_request(2, 1, end + 2, 1, 0);
        f.topics[0].partitions[0].replica_directory_id = dir;
        RaftRequest::Fetch(f)
    };
    c.handle(
        2_300,
        Input::Request {
            id: InboundId(10),
            api_version: 17,
            request: fetch_2(Uuid::nil()),
        },
    )
    .unwrap();
    c.take_outputs();
    assert_eq!(
        c.high_watermark(),
        Some(1),
        "a replica without directory is an observer"
    );
    c.handle(
        2_301,
        Input::Request {
            id: InboundId(11),
            api_version: 17,
            request: fetch_2(dir(2)),
        },
    )
    .unwrap();
    c.take_outputs();
    assert_eq!(c.high_watermark(), Some(end + 2));
    assert!(!c.has_uncommitted_voter_change());
    // At kraft.version 1 an UpdateRaftVoter is checked against the directory in the log.
    assert_eq!(
        update_voter_answer(&mut c, 2_301, update_voter_request(2, 1, dir(9))).error_code,
        crate::errors::VOTER_NOT_FOUND
    );
}

#[test]
fn the_leader_follows_its_own_report_and_a_follower_cannot_upgrade() {
    let mut c = committed_leader();
    // An upgrade on a node that does not lead is refused.
    let (mut f, _) = follower_of_2_in_epoch_5();
    assert!(matches!(
        f.upgrade_kraft_version(10, 5, 1, false),
        Err(KraftUpgradeError::NotLeader(5))
    ));
    // A leader that moved on to kraft.version 1 answers reports from its log.
    for v in [2, 3] {
        update_voter_answer(&mut c, 2_200, update_voter_request(v, 1, dir(v)));
    }
    upgrade(&mut c, 2_201, false).unwrap();
    assert_eq!(
        update_voter_answer(&mut c, 2_202, update_voter_request(3, 1, dir(3))).error_code,
        crate::errors::REQUEST_TIMED_OUT,
        "the upgrade batch is not committed yet"
    );
}

/// Sends an empty fetch answer from leader 2 at `at_ms` and returns what the follower sends next.
fn answer_fetch(
    c: &mut Core,
    fetch: OutboundId,
    at_ms: u64,
) -> Vec<(OutboundId, i32, RaftRequest)> {
    c.handle(
        at_ms,
        Input::Response {
            id: fetch,
            response: RaftResponse::Fetch(fetch_response(5, Bytes::new(), 0)),
        },
    )
    .unwrap();
    sends(c)
}

#[test]
fn a_follower_voter_reports_itself_to_each_leader_until_it_is_accepted() {
    let (mut c, mut fetch) = follower_of_2_in_epoch_5();
    let mut reports = Vec::new();
    let mut t = 0;
    // Fetch answers every second for 20 s; the first report comes 3 × fetch timeout (6 s) in.
    while t < 20_000 {
        t += 1_000;
        let out = answer_fetch(&mut c, fetch, t);
        assert_eq!(out.len(), 1, "one request in flight to the leader");
        let (id, to, request) = out.into_iter().next().unwrap();
        assert_eq!(to, 2);
        match request {
            RaftRequest::Fetch(_) => fetch = id,
            RaftRequest::UpdateRaftVoter(r) => {
                assert_eq!(
                    (r.voter_id, r.voter_directory_id),
                    (1, Uuid::from_u64_pair(7, 7))
                );
                assert_eq!(r.current_leader_epoch, 5);
                assert_eq!(
                    (
                        r.k_raft_version_feature.min_supported_version,
                        r.k_raft_version_feature.max_supported_version
                    ),
                    (0, 1)
                );
                assert_eq!(r.listeners[0].host.as_str(), "c1");
                reports.push(t);
                // The first report fails (the leader has no high watermark yet); the second is
                // accepted and ends them.
                let error = if reports.len() == 1 {
                    crate::errors::REQUEST_TIMED_OUT
                } else {
                    crate::errors::NONE
                };
                c.handle(
                    t,
                    Input::Response {
                        id,
                        response: RaftResponse::UpdateRaftVoter(
                            kafka_protocol::messages::UpdateRaftVoterResponse::default()
                                .with_error_code(error),
                        ),
                    },
                )
                .unwrap();
                t += 100; // after the retry backoff
                c.poll(t).unwrap();
                let next = sends(&mut c);
                let (id, _, r) = next.into_iter().next().expect("fetch resumes");
                assert!(matches!(r, RaftRequest::Fetch(_)));
                fetch = id;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(
        reports,
        vec![6_000, 12_100],
        "every 3 × fetch timeout until accepted, then never"
    );
}
