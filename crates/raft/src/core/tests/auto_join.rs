//! Auto-join (`controller.quorum.auto.join.enable`, Kafka 4.2+): an observer controller of a
//! dynamic quorum asks the leader to add it, removing its id's old directory first.

use super::dynamic::{bootstrapped_log, dir, dynamic_config, voters};
use super::*;

/// Observer `local` (directory `directory`) of voters {1, 2, 3} with auto-join on.
fn observer(local: i32, directory: Uuid, auto_join: bool) -> Core {
    let mut config = dynamic_config(local, directory);
    config.auto_join = auto_join;
    config.local_endpoints = BTreeMap::from([(
        "CONTROLLER".to_owned(),
        Endpoint {
            host: format!("c{local}"),
            port: 9090 + local as u16,
        },
    )]);
    RaftCore::new(
        config,
        bootstrapped_log(&voters(&[1, 2, 3])),
        MemQuorumStateStore::new(),
        42,
        0,
    )
    .unwrap()
}

/// Runs the observer for `until_ms`, answering every Fetch at once (leader 2, epoch 5, nothing
/// new) and every other request with `answer`; returns the other requests with their times.
fn run(
    c: &mut Core,
    until_ms: u64,
    mut answer: impl FnMut(&RaftRequest) -> RaftResponse,
) -> Vec<(u64, i32, RaftRequest)> {
    let mut seen = Vec::new();
    let mut t = 0;
    c.poll(t).unwrap();
    while t < until_ms {
        t += 250;
        c.poll(t).unwrap();
        for (id, to, request) in sends(c) {
            let response = match &request {
                RaftRequest::Fetch(_) => RaftResponse::Fetch(fetch_response(5, Bytes::new(), 0)),
                other => {
                    seen.push((t, to, other.clone()));
                    answer(other)
                }
            };
            c.handle(t, Input::Response { id, response }).unwrap();
        }
    }
    seen
}

fn added() -> RaftResponse {
    RaftResponse::AddRaftVoter(kafka_protocol::messages::AddRaftVoterResponse::default())
}

#[test]
fn an_observer_with_auto_join_asks_the_leader_to_add_it_every_period() {
    let mut c = observer(4, dir(4), true);
    let seen = run(&mut c, 14_000, |_| added());
    assert!(!seen.is_empty(), "no AddRaftVoter sent");
    for (_, to, request) in &seen {
        assert_eq!(*to, 2, "to the leader");
        let RaftRequest::AddRaftVoter(r) = request else {
            panic!("unexpected {request:?}")
        };
        assert_eq!((r.voter_id, r.voter_directory_id), (4, dir(4)));
        assert!(!r.ack_when_committed, "KIP-1186: answered at append");
        assert_eq!(r.listeners.len(), 1);
        assert_eq!(
            (
                r.listeners[0].name.as_str(),
                r.listeners[0].host.as_str(),
                r.listeners[0].port
            ),
            ("CONTROLLER", "c4", 9094)
        );
        assert_eq!(r.cluster_id.as_deref(), Some("cluster-A"));
    }
    // 3 × fetch timeout (6 s) after it began following, then again each period until the
    // VotersRecord with it arrives.
    let times: Vec<u64> = seen.iter().map(|(t, _, _)| *t).collect();
    assert_eq!(times.len(), 2, "{times:?}");
    assert!(times[1] - times[0] >= 6_000, "{times:?}");

    // Without the setting it stays an observer and asks for nothing.
    let mut c = observer(4, dir(4), false);
    assert!(run(&mut c, 14_000, |_| added()).is_empty());
}

#[test]
fn a_replaced_disk_removes_its_old_directory_before_joining() {
    // Node 3 came back with a new directory: the set still has (3, old directory).
    let new_dir = Uuid::from_u64_pair(9, 9);
    let mut c = observer(3, new_dir, true);
    assert!(!c.is_voter());
    let seen = run(&mut c, 8_000, |_| {
        RaftResponse::RemoveRaftVoter(kafka_protocol::messages::RemoveRaftVoterResponse::default())
    });
    let [(_, 2, RaftRequest::RemoveRaftVoter(r))] = seen.as_slice() else {
        panic!("expected one RemoveRaftVoter to the leader, got {seen:?}")
    };
    assert_eq!((r.voter_id, r.voter_directory_id), (3, dir(3)));
}

#[test]
fn a_voter_never_auto_joins() {
    let mut config = dynamic_config(1, dir(1));
    config.auto_join = true;
    let mut c = RaftCore::new(
        config,
        bootstrapped_log(&voters(&[1, 2, 3])),
        MemQuorumStateStore::new(),
        42,
        0,
    )
    .unwrap();
    assert!(c.auto_join_request().is_none());
    c.poll(10).unwrap();
    assert!(
        c.auto_join_request().is_none(),
        "a voter reports with UpdateRaftVoter instead"
    );
}
