//! Followers: Fetch responses (valid prefix, truncation), resignation and successors, cluster ids, append limits.

use super::*;

#[test]
fn case_c03_a_follower_keeps_only_the_valid_prefix_of_a_fetch() {
    let (mut c, id) = follower_of_2_in_epoch_5();
    let mut bytes = Vec::new();
    for (base, epoch) in [(0i64, 5), (10, 6), (20, 5)] {
        let mut b = BatchBuilder::new(base, epoch, 0);
        for i in 0..10 {
            b.append(None, format!("v{i}").as_bytes());
        }
        bytes.extend_from_slice(&b.build());
    }
    c.handle(
        10,
        Input::Response {
            id,
            response: RaftResponse::Fetch(fetch_response(5, Bytes::from(bytes), 10)),
        },
    )
    .unwrap();
    assert_eq!(
        c.log().end_offset(),
        OffsetAndEpoch::new(10, 5),
        "stops before the epoch-6 batch"
    );
    assert_eq!(c.high_watermark(), Some(10));
    // A corrupt batch at the log end is dropped; nothing crashes.
    let next = sends(&mut c)
        .into_iter()
        .find(|(_, _, r)| matches!(r, RaftRequest::Fetch(_)))
        .unwrap()
        .0;
    let mut bad = BatchBuilder::new(10, 5, 0)
        .tap_append(b"x")
        .build()
        .to_vec();
    let last = bad.len() - 1;
    bad[last] ^= 0xff;
    c.handle(
        20,
        Input::Response {
            id: next,
            response: RaftResponse::Fetch(fetch_response(5, Bytes::from(bad), 10)),
        },
    )
    .unwrap();
    assert_eq!(c.log().end_offset().offset, 10);
}

#[test]
fn a_leader_asking_to_truncate_below_the_high_watermark_is_fatal() {
    let (mut c, id) = follower_of_2_in_epoch_5();
    let batch = BatchBuilder::new(0, 5, 0)
        .tap_append(b"a")
        .tap_append(b"b")
        .build();
    c.handle(
        10,
        Input::Response {
            id,
            response: RaftResponse::Fetch(fetch_response(5, batch, 2)),
        },
    )
    .unwrap();
    let next = sends(&mut c)
        .into_iter()
        .find(|(_, _, r)| matches!(r, RaftRequest::Fetch(_)))
        .unwrap()
        .0;
    let mut resp = fetch_response(5, Bytes::new(), 2);
    resp.responses[0].partitions[0].diverging_epoch.epoch = 4;
    resp.responses[0].partitions[0].diverging_epoch.end_offset = 1;
    let err = c
        .handle(
            20,
            Input::Response {
                id: next,
                response: RaftResponse::Fetch(resp),
            },
        )
        .unwrap_err();
    assert!(matches!(
        err,
        RaftError::TruncationBelowHighWatermark {
            offset: 1,
            high_watermark: 2
        }
    ));
}

#[test]
fn the_first_preferred_successor_runs_for_election_at_once() {
    let (mut c, _) = follower_of_2_in_epoch_5();
    let end = EndQuorumEpochRequest::default().with_topics(vec![EndTopic::default()
        .with_topic_name(topic_name())
        .with_partitions(vec![EndPartition::default()
            .with_leader_id(2.into())
            .with_leader_epoch(5)
            .with_preferred_successors(vec![1, 3])])]);
    c.handle(
        100,
        Input::Request {
            id: InboundId(5),
            api_version: 0,
            request: RaftRequest::EndQuorumEpoch(end),
        },
    )
    .unwrap();
    assert_eq!(c.role(), RoleKind::Prospective, "position 0 backs off 0 ms");
    assert_eq!(c.epoch(), 5);
}

/// Node 1 leads epoch 1, resigns to shut down, and both other voters acknowledge its
/// EndQuorumEpoch (neither has been elected yet).
fn resigned_for_shutdown_and_acknowledged() -> Core {
    let mut c = leader();
    c.resign(2_100, true).unwrap();
    assert_eq!(c.role(), RoleKind::Resigned);
    let ends: Vec<_> = sends(&mut c)
        .into_iter()
        .filter(|(_, _, r)| matches!(r, RaftRequest::EndQuorumEpoch(_)))
        .collect();
    assert_eq!(ends.len(), 2);
    assert!(!c.shutdown_may_complete());
    for (id, _, _) in ends {
        let ok = kafka_protocol::messages::EndQuorumEpochResponse::default().with_topics(vec![
            kafka_protocol::messages::end_quorum_epoch_response::TopicData::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![
                    kafka_protocol::messages::end_quorum_epoch_response::PartitionData::default()
                        .with_leader_id(1.into())
                        .with_leader_epoch(1),
                ]),
        ]);
        c.handle(
            2_101,
            Input::Response {
                id,
                response: RaftResponse::EndQuorumEpoch(ok),
            },
        )
        .unwrap();
    }
    c
}

fn begin_quorum_epoch(leader: i32, epoch: i32) -> RaftRequest {
    let mut begin = kafka_protocol::messages::BeginQuorumEpochRequest::default().with_topics(vec![
        kafka_protocol::messages::begin_quorum_epoch_request::TopicData::default()
            .with_topic_name(topic_name())
            .with_partitions(vec![
                kafka_protocol::messages::begin_quorum_epoch_request::PartitionData::default()
                    .with_leader_id(leader.into())
                    .with_leader_epoch(epoch),
            ]),
    ]);
    begin.cluster_id = Some(StrBytes::from_static_str("cluster-A"));
    RaftRequest::BeginQuorumEpoch(begin)
}

/// A broker's Fetch (v17, id 7, MaxWaitMs 500) of epoch 1 at `now_ms`.
fn broker_fetch_at(c: &mut Core, now_ms: u64) {
    c.handle(
        now_ms,
        Input::Request {
            id: InboundId(7),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(-1, 1, 1, 1, 500)),
        },
    )
    .unwrap();
}

#[test]
fn a_graceful_resign_names_successors_and_finishes_once_a_successor_leads() {
    let mut c = resigned_for_shutdown_and_acknowledged();
    // Acknowledged is not enough (Kafka `maybeCompleteShutdown`): nobody leads yet.
    assert!(!c.shutdown_may_complete());
    assert_eq!(
        c.append(2_102, vec![Bytes::from_static(b"x")]),
        Err(AppendError::NotLeader)
    );
    // Stopping, it asks the voters again after the backoff until one names a successor.
    c.poll(2_101 + 1_000).unwrap();
    let again = sends(&mut c)
        .into_iter()
        .filter(|(_, _, r)| matches!(r, RaftRequest::EndQuorumEpoch(_)))
        .count();
    assert_eq!(again, 2);
    c.handle(
        3_200,
        Input::Request {
            id: InboundId(9),
            api_version: 1,
            request: begin_quorum_epoch(2, 2),
        },
    )
    .unwrap();
    assert_eq!(c.role(), RoleKind::Follower);
    assert!(c.shutdown_may_complete());
}

#[test]
fn a_resigned_leader_holds_a_brokers_fetch_and_answers_it_with_the_successor() {
    let mut c = resigned_for_shutdown_and_acknowledged();
    broker_fetch_at(&mut c, 2_200);
    assert!(
        responses(&mut c).is_empty(),
        "held: answering now could only name this node"
    );
    c.handle(
        2_300,
        Input::Request {
            id: InboundId(9),
            api_version: 1,
            request: begin_quorum_epoch(3, 2),
        },
    )
    .unwrap();
    let answers = responses(&mut c);
    let (id, fetch) = answers
        .iter()
        .find(|(id, _)| *id == InboundId(7))
        .expect("the held fetch is answered at the transition");
    assert_eq!(*id, InboundId(7));
    let p = fetch_partition_of(fetch);
    assert_eq!(p.error_code, errors::FENCED_LEADER_EPOCH);
    assert_eq!(p.current_leader.leader_id.0, 3);
    assert_eq!(p.current_leader.leader_epoch, 2);
    let RaftResponse::Fetch(f) = fetch else {
        unreachable!()
    };
    assert!(
        f.node_endpoints.iter().any(|e| e.node_id.0 == 3),
        "the successor's endpoint goes with it (Fetch v17)"
    );
    assert!(c.shutdown_may_complete());
}

/// Dynamic-mixed round 10: the resigned leader votes for a candidate (Unattached in the next
/// epoch, still nobody to name) before the candidate wins; the broker's fetch stays held
/// through both transitions and is answered once the new leader is known.
#[test]
fn a_held_fetch_waits_through_the_election_for_the_leader_it_can_name() {
    let mut c = resigned_for_shutdown_and_acknowledged();
    broker_fetch_at(&mut c, 2_200);
    let end = c.log().end_offset();
    c.handle(
        2_210,
        Input::Request {
            id: InboundId(8),
            api_version: 1,
            request: vote_request(2, 2, end.epoch, end.offset),
        },
    )
    .unwrap();
    assert_eq!(c.role(), RoleKind::Unattached);
    assert!(
        !responses(&mut c).iter().any(|(id, _)| *id == InboundId(7)),
        "still held: the vote names no leader"
    );
    assert!(!c.shutdown_may_complete());
    c.handle(
        2_220,
        Input::Request {
            id: InboundId(9),
            api_version: 1,
            request: begin_quorum_epoch(2, 2),
        },
    )
    .unwrap();
    let answers = responses(&mut c);
    let (_, fetch) = answers
        .iter()
        .find(|(id, _)| *id == InboundId(7))
        .expect("answered once the leader is known");
    let p = fetch_partition_of(fetch);
    assert_eq!(p.current_leader.leader_id.0, 2);
    assert_eq!(p.current_leader.leader_epoch, 2);
    assert!(c.shutdown_may_complete());
}

#[test]
fn a_held_fetch_is_answered_at_its_max_wait_without_a_successor() {
    let mut c = resigned_for_shutdown_and_acknowledged();
    broker_fetch_at(&mut c, 2_200);
    assert!(c.next_deadline_ms() <= 2_700);
    c.poll(2_700).unwrap();
    let answers = responses(&mut c);
    let (_, fetch) = answers
        .iter()
        .find(|(id, _)| *id == InboundId(7))
        .expect("answered at MaxWaitMs");
    assert_eq!(
        fetch_partition_of(fetch).error_code,
        errors::NOT_LEADER_OR_FOLLOWER
    );
}

#[test]
fn a_resigned_leader_stops_once_every_other_voter_refuses_connections() {
    let mut c = resigned_for_shutdown_and_acknowledged();
    c.poll(3_200).unwrap();
    let probes: Vec<_> = sends(&mut c)
        .into_iter()
        .filter(|(_, _, r)| matches!(r, RaftRequest::EndQuorumEpoch(_)))
        .collect();
    assert_eq!(probes.len(), 2);
    for (n, (id, _, _)) in probes.into_iter().enumerate() {
        assert!(!c.shutdown_may_complete(), "one voter may still take over");
        c.handle(
            3_201 + n as u64,
            Input::SendFailed {
                id,
                failure: SendFailure::Disconnected,
            },
        )
        .unwrap();
    }
    assert!(c.shutdown_may_complete(), "the others are stopping too");
}

#[test]
fn a_wrong_cluster_id_is_refused() {
    let mut c = leader();
    let mut req = fetch_request(2, 1, 0, 0, 0);
    req.cluster_id = Some(StrBytes::from_static_str("other"));
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(1),
            api_version: 17,
            request: RaftRequest::Fetch(req),
        },
    )
    .unwrap();
    let RaftResponse::Fetch(f) = responses(&mut c).remove(0).1 else {
        panic!()
    };
    assert_eq!(f.error_code, crate::errors::INCONSISTENT_CLUSTER_ID);
}

#[test]
fn an_atomic_append_larger_than_a_batch_is_refused() {
    let mut c = leader();
    let records =
        vec![Bytes::from_static(b"r"); kraftwerk_records::batch::MAX_RECORDS_PER_BATCH + 1];
    assert!(matches!(
        c.append(2_100, records),
        Err(AppendError::TooLarge { .. })
    ));
    assert_eq!(c.next_offset(), Some(1), "nothing was taken");
}
