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

#[test]
fn a_graceful_resign_names_successors_and_finishes_once_they_acknowledge() {
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
    assert!(c.shutdown_may_complete());
    assert_eq!(
        c.append(2_102, vec![Bytes::from_static(b"x")]),
        Err(AppendError::NotLeader)
    );
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
