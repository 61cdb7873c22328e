//! kraft.version 1 (KIP-853): the voter set from the bootstrap checkpoint and the log, replica
//! keys with directory ids, `quorum-state` data_version 1.

use std::collections::BTreeMap;

use kafka_protocol::messages::fetch_response::EpochEndOffset;
use kraftwerk_records::batch::batches;
use kraftwerk_records::control::{control_batch, decode_control_batch, ControlRecord};

use super::*;
use crate::errors;
use crate::voters::{ReplicaKey, VoterNode, VoterSet};

pub(super) fn dir(id: i32) -> Uuid {
    Uuid::from_u64_pair(0, 100 + id as u64)
}

pub(super) fn voter(id: i32) -> VoterNode {
    VoterNode {
        key: ReplicaKey::new(id, dir(id)),
        endpoints: BTreeMap::from([(
            "CONTROLLER".to_owned(),
            Endpoint {
                host: format!("c{id}"),
                port: 9090 + id as u16,
            },
        )]),
        supported_kraft_versions: (0, 1),
    }
}

pub(super) fn voters(ids: &[i32]) -> VoterSet {
    VoterSet::from_nodes(ids.iter().map(|&id| voter(id))).unwrap()
}

/// A node of a dynamic quorum: no `controller.quorum.voters`, its own directory id.
pub(super) fn dynamic_config(local: i32, directory_id: Uuid) -> RaftConfig {
    RaftConfig::new(
        local,
        "cluster-A",
        directory_id,
        BTreeMap::new(),
        "CONTROLLER",
    )
}

/// A log holding the bootstrap checkpoint `0-0` that `format --standalone` /
/// `--initial-controllers` writes: SnapshotHeader, KRaftVersion(1), Voters, SnapshotFooter.
pub(super) fn bootstrapped_log(set: &VoterSet) -> MemLog {
    let mut log = MemLog::new();
    let mut sink = log.create_snapshot(OffsetAndEpoch::new(0, 0)).unwrap();
    sink.append(&control_batch(
        0,
        0,
        0,
        &[
            ControlRecord::snapshot_header(0),
            ControlRecord::kraft_version(1),
            ControlRecord::Voters(set.to_record()),
        ],
    ))
    .unwrap();
    sink.append(&control_batch(3, 0, 0, &[ControlRecord::snapshot_footer()]))
        .unwrap();
    sink.finish().unwrap();
    log.register_snapshot(OffsetAndEpoch::new(0, 0)).unwrap();
    log
}

pub(super) fn dynamic_core(
    local: i32,
    directory_id: Uuid,
    set: &VoterSet,
) -> (Core, MemQuorumStateStore) {
    let store = MemQuorumStateStore::new();
    let c = RaftCore::new(
        dynamic_config(local, directory_id),
        bootstrapped_log(set),
        store.clone(),
        42,
        0,
    )
    .expect("start");
    (c, store)
}

/// The control records of every control batch in `bytes`.
pub(super) fn control_records(bytes: &[u8]) -> Vec<ControlRecord> {
    batches(bytes)
        .map(|b| b.unwrap())
        .filter(|(h, _)| h.is_control())
        .flat_map(|(_, b)| decode_control_batch(b).unwrap().1)
        .map(|(_, r)| r)
        .collect()
}

/// Node 1 of voters {1, 2, 3} (kraft.version 1) elected in epoch 1 with node 2's votes.
pub(super) fn dynamic_leader() -> (Core, MemQuorumStateStore) {
    let (mut c, store) = dynamic_core(1, dir(1), &voters(&[1, 2, 3]));
    c.poll(2_000).unwrap();
    for epoch in [0, 1] {
        let (id, _, _) = sends(&mut c)
            .into_iter()
            .find(|(_, d, _)| *d == 2)
            .expect("vote to 2");
        c.handle(
            2_001,
            Input::Response {
                id,
                response: vote_granted(epoch),
            },
        )
        .unwrap();
    }
    assert_eq!(c.role(), RoleKind::Leader);
    c.take_outputs();
    (c, store)
}

fn fetch_with_directory(replica: i32, directory: Uuid, offset: i64, epoch: i32) -> RaftRequest {
    let mut f = fetch_request(replica, 1, offset, epoch, 0);
    f.topics[0].partitions[0].replica_directory_id = directory;
    RaftRequest::Fetch(f)
}

#[test]
fn a_standalone_voter_leads_and_puts_the_bootstrap_voter_set_in_the_log() {
    let (c, store) = dynamic_core(1, dir(1), &voters(&[1]));
    assert_eq!(c.kraft_version(), 1);
    assert_eq!(c.role(), RoleKind::Leader, "a single voter elects itself");
    assert!(c.is_voter());
    // Kafka `appendStartOfEpochControlRecords`: the bootstrap set (offset -1) is never
    // replicated, so the first LeaderChange batch carries KRaftVersion and Voters.
    let records = control_records(&c.log().read(0, 1 << 20).unwrap());
    assert!(matches!(records[0], ControlRecord::LeaderChange(_)));
    assert!(matches!(&records[1], ControlRecord::KRaftVersion(k) if k.k_raft_version == 1));
    assert!(
        matches!(&records[2], ControlRecord::Voters(v) if VoterSet::from_record(v).unwrap() == voters(&[1]))
    );
    assert_eq!(
        c.control_state().voters_offset(),
        Some(2),
        "now in force from the log (LeaderChange 0, KRaftVersion 1, Voters 2)"
    );
    // quorum-state data_version 1 with the voted directory id.
    assert_eq!(store.written_kraft_version(), 1);
    let stored = store.current().unwrap();
    assert_eq!(
        (stored.leader_id, stored.voted_id, stored.voted_directory_id),
        (Some(1), Some(1), Some(dir(1)))
    );
}

#[test]
fn a_static_quorum_stays_at_kraft_version_0_and_data_version_0() {
    let store = MemQuorumStateStore::new();
    let mut c = core_with(2, store.clone(), MemLog::new());
    c.handle(
        10,
        Input::Request {
            id: InboundId(1),
            api_version: 1,
            request: vote_request(1, 1, 0, 0),
        },
    )
    .unwrap();
    assert_eq!(c.kraft_version(), 0);
    assert_eq!(store.written_kraft_version(), 0);
    assert_eq!(c.voter_set().ids().collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(c.voter_set().node(1).unwrap().key.directory_id, None);
}

#[test]
fn case_c02_b_a_wiped_voter_is_an_observer_and_refuses_votes_for_its_old_key() {
    // Node 1 was formatted again: its directory id is new, the voter set names the old one.
    let new_dir = Uuid::from_u64_pair(9, 9);
    let (mut c, store) = dynamic_core(1, new_dir, &voters(&[1, 2, 3]));
    assert!(
        !c.is_voter(),
        "a voter whose directory id differs is an observer"
    );
    c.poll(100_000).unwrap();
    assert!(
        !matches!(c.role(), RoleKind::Prospective | RoleKind::Candidate),
        "an observer never runs for election"
    );
    assert!(
        sends(&mut c)
            .iter()
            .all(|(_, _, r)| matches!(r, RaftRequest::Fetch(_))),
        "it looks for the leader with Fetch"
    );
    // V3 (lacking committed records) asks V1 for its vote, naming V1's old directory.
    let RaftRequest::Vote(mut v) = vote_request(3, 2, 0, 0) else {
        unreachable!()
    };
    v.voter_id = 1.into();
    v.topics[0].partitions[0].voter_directory_id = dir(1);
    c.handle(
        100_001,
        Input::Request {
            id: InboundId(1),
            api_version: 1,
            request: RaftRequest::Vote(v),
        },
    )
    .unwrap();
    let RaftResponse::Vote(r) = &responses(&mut c)[0].1 else {
        panic!()
    };
    let p = &r.topics[0].partitions[0];
    assert_eq!(p.error_code, errors::INVALID_VOTER_KEY);
    assert!(!p.vote_granted);
    assert_eq!(store.current().and_then(|s| s.voted_id), None);
}

#[test]
fn vote_requests_name_the_voter_directory_and_the_vote_keeps_the_candidate_directory() {
    let (mut c, _) = dynamic_core(1, dir(1), &voters(&[1, 2, 3]));
    c.poll(2_000).unwrap();
    let out = sends(&mut c);
    for (_, d, r) in &out {
        let RaftRequest::Vote(v) = r else { panic!() };
        let p = &v.topics[0].partitions[0];
        assert_eq!(v.voter_id.0, *d);
        assert_eq!(p.voter_directory_id, dir(*d));
        assert_eq!(p.replica_directory_id, dir(1));
    }
    assert_eq!(out.len(), 2);

    // Node 2 grants a (non-pre-)vote to 3 and keeps 3's directory id.
    let (mut c2, store) = dynamic_core(2, dir(2), &voters(&[1, 2, 3]));
    let RaftRequest::Vote(mut v) = vote_request(3, 1, 0, 0) else {
        unreachable!()
    };
    v.topics[0].partitions[0].replica_directory_id = dir(3);
    v.topics[0].partitions[0].voter_directory_id = dir(2);
    c2.handle(
        10,
        Input::Request {
            id: InboundId(1),
            api_version: 1,
            request: RaftRequest::Vote(v.clone()),
        },
    )
    .unwrap();
    let RaftResponse::Vote(r) = &responses(&mut c2)[0].1 else {
        panic!()
    };
    assert!(r.topics[0].partitions[0].vote_granted);
    let stored = store.current().unwrap();
    assert_eq!(
        (stored.voted_id, stored.voted_directory_id),
        (Some(3), Some(dir(3)))
    );
    assert_eq!(store.written_kraft_version(), 1);
    // The same id with another directory (3's disk was wiped meanwhile) gets no second vote.
    v.topics[0].partitions[0].replica_directory_id = Uuid::from_u64_pair(5, 5);
    c2.handle(
        11,
        Input::Request {
            id: InboundId(2),
            api_version: 1,
            request: RaftRequest::Vote(v),
        },
    )
    .unwrap();
    let RaftResponse::Vote(r) = &responses(&mut c2)[0].1 else {
        panic!()
    };
    assert!(!r.topics[0].partitions[0].vote_granted);
}

#[test]
fn a_vote_from_a_node_outside_the_set_is_answered_at_kraft_version_1() {
    // Java 3.9+ has no membership check (a new voter may not have read its VotersRecord).
    let (mut c, _) = dynamic_core(2, dir(2), &voters(&[1, 2, 3]));
    let RaftRequest::Vote(mut v) = vote_request(7, 1, 0, 0) else {
        unreachable!()
    };
    v.topics[0].partitions[0].voter_directory_id = dir(2);
    c.handle(
        10,
        Input::Request {
            id: InboundId(1),
            api_version: 1,
            request: RaftRequest::Vote(v),
        },
    )
    .unwrap();
    let RaftResponse::Vote(r) = &responses(&mut c)[0].1 else {
        panic!()
    };
    assert_eq!(r.topics[0].partitions[0].error_code, errors::NONE);
}

/// Found by the simulation (seed 1 of `raft_safety_and_liveness_through_membership_changes`,
/// once observers kept looking for the leader): a node outside its own voter set granted a
/// vote (allowed: the candidate's log may already add it), which armed an election timer, and
/// when it fired the core panicked in `transition_to_prospective` ("only voters run
/// elections"). Kafka's `pollUnattached` checks `isVoter` first. Now the vote arms no timer,
/// and an Unattached non-voter only ever looks for the leader.
#[test]
fn a_node_outside_the_voter_set_that_granted_a_vote_never_runs_for_election() {
    // Node 4 (a spare) knows the voter set {1, 2, 3} and is not in it.
    let (mut c, store) = dynamic_core(4, dir(4), &voters(&[1, 2, 3]));
    assert!(!c.is_voter());
    let RaftRequest::Vote(mut v) = vote_request(3, 1, 0, 0) else {
        unreachable!()
    };
    v.voter_id = 4.into();
    v.topics[0].partitions[0].replica_directory_id = dir(3);
    v.topics[0].partitions[0].voter_directory_id = dir(4);
    c.handle(
        10,
        Input::Request {
            id: InboundId(1),
            api_version: 1,
            request: RaftRequest::Vote(v),
        },
    )
    .unwrap();
    let RaftResponse::Vote(r) = &responses(&mut c)[0].1 else {
        panic!()
    };
    assert!(r.topics[0].partitions[0].vote_granted);
    assert_eq!(store.current().and_then(|s| s.voted_id), Some(3));
    // Far past any election timeout: still no election, only discovery fetches.
    for t in [2_000, 5_000, 100_000] {
        c.poll(t).unwrap();
        assert_eq!(c.role(), RoleKind::Unattached, "at {t} ms");
        assert!(
            sends(&mut c)
                .iter()
                .all(|(_, _, r)| matches!(r, RaftRequest::Fetch(_))),
            "it looks for the leader with Fetch"
        );
    }
}

/// Found by the simulation (seeds 6 and 10 of
/// `raft_safety_and_liveness_through_membership_changes`): leader 3 of {1, 2, 3} added 5, and
/// its disk was replaced before 5 (and 2) read that VotersRecord. Node 1 (set {1, 2, 3, 5})
/// needs 5's pre-vote, but 5 still thinks it is an observer and stays the Follower of 3, which
/// refused every pre-vote because it had once fetched from 3: no election, ever. A follower
/// past its fetch timeout now grants pre-votes (KIP-996 refuses them only while the leader is
/// heard from).
#[test]
fn an_observer_follower_past_its_fetch_timeout_grants_pre_votes() {
    let (mut c, _) = dynamic_core(5, dir(5), &voters(&[1, 2, 3]));
    c.poll(10).unwrap();
    let (id, _, _) = sends(&mut c).pop().expect("discovery fetch");
    c.handle(
        20,
        Input::Response {
            id,
            response: RaftResponse::Fetch(not_leader_response(2, 5, "c2", 9092)),
        },
    )
    .unwrap();
    assert_eq!(c.role(), RoleKind::Follower);
    let (id, _) = sent_fetches(&mut c).pop().expect("fetch to the leader");
    c.handle(
        30,
        Input::Response {
            id,
            response: RaftResponse::Fetch(fetch_response(5, Bytes::new(), 0)),
        },
    )
    .unwrap();
    let pre_vote = || {
        let RaftRequest::Vote(mut v) = vote_request(1, 5, 0, 0) else {
            unreachable!()
        };
        v.voter_id = 5.into();
        let p = &mut v.topics[0].partitions[0];
        p.pre_vote = true;
        p.replica_directory_id = dir(1);
        p.voter_directory_id = dir(5);
        RaftRequest::Vote(v)
    };
    let granted = |c: &mut Core, now: u64, n: u64| {
        c.handle(
            now,
            Input::Request {
                id: InboundId(n),
                api_version: 2,
                request: pre_vote(),
            },
        )
        .unwrap();
        let RaftResponse::Vote(r) = &responses(c)[0].1 else {
            panic!()
        };
        r.topics[0].partitions[0].vote_granted
    };
    assert!(
        !granted(&mut c, 100, 1),
        "the leader was heard from 70 ms ago"
    );
    let timeout = c.config().fetch_timeout_ms;
    assert!(granted(&mut c, 30 + timeout, 2), "past the fetch timeout");
    assert_eq!(c.role(), RoleKind::Follower, "a pre-vote changes no state");
    // Past its fetch timeout an observer looks for the leader, one fetch at a time, and waits
    // for it: its deadline is not the expired timer (a driver would spin on it).
    let now = 40 + timeout;
    c.poll(now).unwrap();
    let _ = sends(&mut c);
    assert!(
        c.next_deadline_ms() > now,
        "deadline {} is not after {now}",
        c.next_deadline_ms()
    );
}

#[test]
fn only_a_fetch_with_the_voter_directory_counts_toward_the_high_watermark() {
    let (mut c, _) = dynamic_leader();
    let end = c.log().end_offset();
    // Node 2 fetches with a wrong directory id (its disk was replaced): an observer.
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(1),
            api_version: 17,
            request: fetch_with_directory(2, Uuid::from_u64_pair(9, 9), end.offset, end.epoch),
        },
    )
    .unwrap();
    assert_eq!(c.high_watermark(), None);
    let voter_progress: Vec<_> = c
        .replica_states()
        .into_iter()
        .filter(|(id, is_voter, _)| *id == 2 && *is_voter)
        .collect();
    assert_eq!(voter_progress[0].2.end_offset, None);
    // With its directory id it is the voter and commits the LeaderChange batch.
    c.handle(
        2_200,
        Input::Request {
            id: InboundId(2),
            api_version: 17,
            request: fetch_with_directory(2, dir(2), end.offset, end.epoch),
        },
    )
    .unwrap();
    assert_eq!(c.high_watermark(), Some(end.offset));
}

#[test]
fn describe_quorum_v2_reports_directory_ids_and_every_voter_listener() {
    let (mut c, _) = dynamic_leader();
    let r = describe_quorum_v2(&mut c, 2_200);
    let p = &r.topics[0].partitions[0];
    let dirs: Vec<(i32, Uuid)> = p
        .current_voters
        .iter()
        .map(|v| (v.replica_id.0, v.replica_directory_id))
        .collect();
    assert_eq!(dirs, vec![(1, dir(1)), (2, dir(2)), (3, dir(3))]);
    let nodes: Vec<(i32, String, u16)> = r
        .nodes
        .iter()
        .map(|n| {
            (
                n.node_id.0,
                n.listeners[0].name.to_string(),
                n.listeners[0].port,
            )
        })
        .collect();
    assert_eq!(
        nodes,
        vec![
            (1, "CONTROLLER".to_owned(), 9091),
            (2, "CONTROLLER".to_owned(), 9092),
            (3, "CONTROLLER".to_owned(), 9093)
        ]
    );
}

/// Node 1 following leader 2 of epoch 5 in the dynamic quorum {1, 2, 3}.
fn dynamic_follower() -> (Core, OutboundId) {
    let (mut c, _) = dynamic_core(1, dir(1), &voters(&[1, 2, 3]));
    let mut begin = kafka_protocol::messages::BeginQuorumEpochRequest::default().with_topics(vec![
        kafka_protocol::messages::begin_quorum_epoch_request::TopicData::default()
            .with_topic_name(topic_name())
            .with_partitions(vec![
                kafka_protocol::messages::begin_quorum_epoch_request::PartitionData::default()
                    .with_leader_id(2.into())
                    .with_leader_epoch(5)
                    .with_voter_directory_id(dir(1)),
            ]),
    ]);
    begin.voter_id = 1.into();
    c.handle(
        0,
        Input::Request {
            id: InboundId(1),
            api_version: 1,
            request: RaftRequest::BeginQuorumEpoch(begin),
        },
    )
    .unwrap();
    assert_eq!(c.role(), RoleKind::Follower);
    let (id, _, r) = sends(&mut c)
        .into_iter()
        .find(|(_, d, r)| *d == 2 && matches!(r, RaftRequest::Fetch(_)))
        .expect("fetch");
    let RaftRequest::Fetch(f) = r else {
        unreachable!()
    };
    assert_eq!(
        f.topics[0].partitions[0].replica_directory_id,
        dir(1),
        "Fetch v17 ReplicaDirectoryId"
    );
    (c, id)
}

#[test]
fn an_appended_voter_set_is_in_force_uncommitted_and_truncation_reverts_it() {
    let (mut c, fetch) = dynamic_follower();
    // The leader's log: LeaderChange at 0 (epoch 5), then a VotersRecord adding node 4 at 1.
    let mut records = control_batch(
        0,
        5,
        0,
        &[ControlRecord::leader_change(2, &[1, 2, 3], &[2, 3])],
    )
    .to_vec();
    let added = voters(&[1, 2, 3]).add_voter(voter(4)).unwrap();
    records.extend_from_slice(&control_batch(
        1,
        5,
        0,
        &[ControlRecord::Voters(added.to_record())],
    ));
    c.handle(
        10,
        Input::Response {
            id: fetch,
            response: RaftResponse::Fetch(fetch_response(5, Bytes::from(records), 1)),
        },
    )
    .unwrap();
    assert_eq!(c.log().end_offset().offset, 2);
    assert_eq!(
        c.high_watermark(),
        Some(1),
        "the voter set is not committed"
    );
    assert_eq!(c.voter_set(), &added, "KIP-853: in force once in the log");
    // The leader's log diverges at offset 1 (it never kept that batch): truncate to 1.
    c.poll(11).unwrap();
    let (fetch, _, _) = sends(&mut c)
        .into_iter()
        .find(|(_, _, r)| matches!(r, RaftRequest::Fetch(_)))
        .expect("next fetch");
    let mut diverging = fetch_response(5, Bytes::new(), 1);
    let p = &mut diverging.responses[0].partitions[0];
    p.records = None;
    p.diverging_epoch = EpochEndOffset::default().with_epoch(5).with_end_offset(1);
    c.handle(
        20,
        Input::Response {
            id: fetch,
            response: RaftResponse::Fetch(diverging),
        },
    )
    .unwrap();
    assert_eq!(c.log().end_offset().offset, 1);
    assert_eq!(
        c.voter_set(),
        &voters(&[1, 2, 3]),
        "back to the earlier set"
    );
}

#[test]
fn a_voter_set_from_the_log_survives_a_restart() {
    let (c, store) = dynamic_core(1, dir(1), &voters(&[1]));
    let (log, _) = c.into_parts();
    let c = RaftCore::new(dynamic_config(1, dir(1)), log, store.clone(), 1, 0).unwrap();
    assert_eq!(c.control_state().voters_offset(), Some(2));
    assert_eq!(c.voter_set(), &voters(&[1]));
    assert_eq!(c.kraft_version(), 1);
}

#[test]
fn a_voters_record_with_two_changes_at_once_is_fatal() {
    let (mut c, fetch) = dynamic_follower();
    let bad = voters(&[1, 4, 5]);
    let records = control_batch(0, 5, 0, &[ControlRecord::Voters(bad.to_record())]);
    let err = c
        .handle(
            10,
            Input::Response {
                id: fetch,
                response: RaftResponse::Fetch(fetch_response(5, records, 0)),
            },
        )
        .unwrap_err();
    assert!(matches!(err, RaftError::ControlRecords(_)), "{err}");
}

fn not_leader_response(leader: i32, epoch: i32, host: &str, port: i32) -> FetchResponse {
    use kafka_protocol::messages::fetch_response::NodeEndpoint;
    let mut r = fetch_response(epoch, Bytes::new(), -1);
    let p = &mut r.responses[0].partitions[0];
    p.records = None;
    p.error_code = errors::NOT_LEADER_OR_FOLLOWER;
    p.current_leader = LeaderIdAndEpoch::default()
        .with_leader_id(leader.into())
        .with_leader_epoch(epoch);
    r.node_endpoints = vec![NodeEndpoint::default()
        .with_node_id(leader.into())
        .with_host(StrBytes::from_string(host.to_owned()))
        .with_port(port)];
    r
}

fn sent_fetches(c: &mut Core) -> Vec<(OutboundId, crate::io::Destination)> {
    c.take_outputs()
        .into_iter()
        .filter_map(|o| match o {
            Output::Send {
                id,
                destination,
                request: RaftRequest::Fetch(_),
            } => Some((id, destination)),
            _ => None,
        })
        .collect()
}

#[test]
fn item_5_an_observer_finds_the_leader_through_bootstrap_servers_and_follows_it_across_failovers() {
    let mut config = dynamic_config(7, Uuid::from_u64_pair(7, 7));
    config.bootstrap_servers = vec![
        Endpoint {
            host: "boot-a".into(),
            port: 9001,
        },
        Endpoint {
            host: "boot-b".into(),
            port: 9002,
        },
    ];
    let mut c = RaftCore::new(config, MemLog::new(), MemQuorumStateStore::new(), 3, 0).unwrap();
    c.poll(10).unwrap();
    let out = sent_fetches(&mut c);
    assert_eq!(out.len(), 1, "one discovery fetch at a time");
    let (id, dest) = out[0].clone();
    assert!(
        [(-2, "boot-a", 9001), (-3, "boot-b", 9002)].contains(&(
            dest.node_id,
            dest.endpoint.host.as_str(),
            dest.endpoint.port
        )),
        "bootstrap servers get negative ids: {dest:?}"
    );
    // The bootstrap server is not the leader; it names leader 1 of epoch 3 and its endpoint.
    c.handle(
        20,
        Input::Response {
            id,
            response: RaftResponse::Fetch(not_leader_response(1, 3, "c1", 9091)),
        },
    )
    .unwrap();
    assert_eq!(c.role(), RoleKind::Follower);
    assert_eq!(c.leader_and_epoch().leader_id, Some(1));
    let out = sent_fetches(&mut c);
    let (id, dest) = out.last().cloned().expect("fetch to the leader");
    assert_eq!(
        (
            dest.node_id,
            dest.endpoint.host.as_str(),
            dest.endpoint.port
        ),
        (1, "c1", 9091)
    );
    // Failover: the old leader answers that 2 leads epoch 4.
    c.handle(
        30,
        Input::Response {
            id,
            response: RaftResponse::Fetch(not_leader_response(2, 4, "c2", 9092)),
        },
    )
    .unwrap();
    assert_eq!(c.leader_and_epoch().leader_id, Some(2));
    assert_eq!(c.epoch(), 4);
    let (_, dest) = sent_fetches(&mut c).last().cloned().expect("fetch to 2");
    assert_eq!(
        (
            dest.node_id,
            dest.endpoint.host.as_str(),
            dest.endpoint.port
        ),
        (2, "c2", 9092)
    );
}

/// Found by the simulation (seed 22 of `raft_safety_and_liveness_through_membership_changes`):
/// a node formatted with `--no-initial-controllers` reported no deadline, so a driver that
/// sleeps until `next_deadline_ms` never sent its first discovery fetch, nor another after a
/// bootstrap server answered that it knows no leader. Kafka's `pollUnattachedAsObserver`
/// retries every `retry.backoff.ms`.
#[test]
fn an_observer_without_a_leader_keeps_looking_for_it_on_its_own_timer() {
    let mut config = dynamic_config(7, Uuid::from_u64_pair(7, 7));
    config.bootstrap_servers = vec![Endpoint {
        host: "boot-a".into(),
        port: 9001,
    }];
    let backoff = config.retry_backoff_ms;
    let mut c = RaftCore::new(config, MemLog::new(), MemQuorumStateStore::new(), 3, 0).unwrap();
    assert_eq!(c.role(), RoleKind::Unattached);
    assert!(
        c.next_deadline_ms() <= 10,
        "the first discovery fetch is due at once, not at {}",
        c.next_deadline_ms()
    );
    c.poll(10).unwrap();
    let out = sent_fetches(&mut c);
    assert_eq!(out.len(), 1);
    let (id, _) = out[0].clone();
    // The bootstrap server knows no leader either (it is Unattached too).
    let mut none = not_leader_response(-1, 0, "", 0);
    none.node_endpoints.clear();
    c.handle(
        20,
        Input::Response {
            id,
            response: RaftResponse::Fetch(none),
        },
    )
    .unwrap();
    assert!(sent_fetches(&mut c).is_empty(), "not again at once");
    assert_eq!(
        c.next_deadline_ms(),
        20 + backoff,
        "again after the backoff"
    );
    c.poll(20 + backoff).unwrap();
    assert_eq!(sent_fetches(&mut c).len(), 1, "the next discovery fetch");
}

/// Without anywhere to look (no bootstrap servers, no voter set yet), an observer has nothing
/// to do and no timer: it must not spin.
#[test]
fn an_observer_with_nowhere_to_look_has_no_deadline() {
    let config = dynamic_config(7, Uuid::from_u64_pair(7, 7));
    let c = RaftCore::new(config, MemLog::new(), MemQuorumStateStore::new(), 3, 0).unwrap();
    assert_eq!(c.next_deadline_ms(), u64::MAX);
}

#[test]
fn a_static_quorum_without_bootstrap_servers_follows_no_leader_outside_its_voters() {
    let (mut c, fetch) = follower_of_2_in_epoch_5();
    c.handle(
        10,
        Input::Response {
            id: fetch,
            response: RaftResponse::Fetch(not_leader_response(9, 6, "evil", 1)),
        },
    )
    .unwrap();
    assert_ne!(c.leader_and_epoch().leader_id, Some(9));
    assert!(sent_fetches(&mut c)
        .iter()
        .all(|(_, d)| d.endpoint.host != "evil"));
}

#[test]
fn records_appended_after_the_start_of_epoch_voter_records_follow_them() {
    // The LeaderChange batch holds three records (LeaderChange, KRaftVersion, Voters): the
    // next append starts at offset 3.
    let (mut c, _) = dynamic_core(1, dir(1), &voters(&[1]));
    assert_eq!(c.next_offset(), Some(3));
    let first = c.append(10, vec![Bytes::from_static(b"x")]).unwrap();
    assert_eq!(first, 3);
    c.poll(100).unwrap();
    assert_eq!(c.log().end_offset().offset, 4);
}
