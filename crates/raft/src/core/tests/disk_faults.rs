//! What the core does when its disk fails (case C10): a failed write or fsync is fatal, and
//! nothing that was not flushed is acknowledged. The core learns what is on disk only from a
//! `flush()` that returned `Ok` (`after_leader_append` in `core/mod.rs`, the follower's append
//! in `core/fetch_follower.rs`): the leader counts its own end offset toward the high watermark
//! after it, a follower's next Fetch (its acknowledgement) is sent after it.

use super::*;
use crate::testing::{CrashableLog, DiskFault};

fn batch(base: i64, epoch: i32, values: &[&[u8]]) -> Bytes {
    let mut b = BatchBuilder::new(base, epoch, 0);
    for v in values {
        b.append(None, v);
    }
    b.build()
}

fn fetch_offsets(sent: &[(OutboundId, i32, RaftRequest)]) -> Vec<i64> {
    sent.iter()
        .filter_map(|(_, _, r)| match r {
            RaftRequest::Fetch(f) => Some(f.topics[0].partitions[0].fetch_offset),
            _ => None,
        })
        .collect()
}

#[test]
fn a_follower_whose_fsync_fails_stops_without_acknowledging_and_refetches_after_a_restart() {
    let (mut c, id) = follower_of_2_in_epoch_5();
    let first = batch(0, 5, &[b"a", b"b"]);
    c.handle(
        10,
        Input::Response {
            id,
            response: RaftResponse::Fetch(fetch_response(5, first, 0)),
        },
    )
    .unwrap();
    let sent = sends(&mut c);
    assert_eq!(fetch_offsets(&sent), [2], "the first batch is acknowledged");
    let id = sent[0].0;

    c.log_mut().inject_fault(DiskFault::SyncFails);
    let second = batch(2, 5, &[b"c", b"d", b"e"]);
    let err = c
        .handle(
            20,
            Input::Response {
                id,
                response: RaftResponse::Fetch(fetch_response(5, second.clone(), 2)),
            },
        )
        .unwrap_err();
    assert!(
        matches!(err, RaftError::Storage(LogError::Io { .. })),
        "{err}"
    );
    assert!(
        fetch_offsets(&sends(&mut c)).is_empty(),
        "no Fetch (an acknowledgement of offset 5) after the failed fsync"
    );
    assert_eq!(c.log().flushed_end_offset(), 2);

    // The node restarts on a repaired disk with what was flushed; it fetches the lost batch
    // from the leader again.
    let (log, store) = c.into_parts();
    let log = log.crash_and_reopen();
    assert_eq!(log.end_offset().offset, 2);
    let mut c = core_with(1, store, log);
    c.poll(30).unwrap();
    let sent = sends(&mut c);
    assert_eq!(c.role(), RoleKind::Follower, "{sent:?}");
    assert_eq!(fetch_offsets(&sent), [2], "re-fetches from its flushed end");
}

#[test]
fn a_leader_whose_fsync_fails_stops_and_commits_nothing_it_did_not_flush() {
    let mut c = leader();
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(9),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(2, 1, 1, 1, 0)),
        },
    )
    .unwrap();
    assert_eq!(c.high_watermark(), Some(1));
    c.take_outputs();

    c.log_mut().inject_fault(DiskFault::SyncFails);
    c.append(
        2_200,
        vec![Bytes::from_static(b"x"), Bytes::from_static(b"y")],
    )
    .unwrap();
    let mut now = 2_200;
    let err = loop {
        assert!(now < 10_000, "the failed fsync never surfaced");
        match c.poll(now) {
            Ok(()) => now += 10,
            Err(e) => break e,
        }
    };
    assert!(
        matches!(err, RaftError::Storage(LogError::Io { .. })),
        "{err}"
    );
    assert_eq!(c.log().flushed_end_offset(), 1);
    assert_eq!(c.high_watermark(), Some(1));
    // Even a follower claiming the unflushed records cannot commit them: the leader's own
    // end offset counts only after a successful flush (and the failed log refuses the read).
    let _ = c.handle(
        now + 1,
        Input::Request {
            id: InboundId(10),
            api_version: 17,
            request: RaftRequest::Fetch(fetch_request(2, 1, 3, 1, 0)),
        },
    );
    assert_eq!(c.high_watermark(), Some(1));
}

fn fetch_snapshot_request(id: OffsetAndEpoch, position: i64) -> RaftRequest {
    use kafka_protocol::messages::fetch_snapshot_request::{
        PartitionSnapshot, SnapshotId, TopicSnapshot,
    };
    RaftRequest::FetchSnapshot(
        kafka_protocol::messages::FetchSnapshotRequest::default()
            .with_cluster_id(Some(StrBytes::from_static_str("cluster-A")))
            .with_replica_id(2.into())
            .with_max_bytes(1 << 20)
            .with_topics(vec![TopicSnapshot::default()
                .with_name(topic_name())
                .with_partitions(vec![PartitionSnapshot::default()
                    .with_current_leader_epoch(1)
                    .with_snapshot_id(
                        SnapshotId::default()
                            .with_end_offset(id.offset)
                            .with_epoch(id.epoch),
                    )
                    .with_position(position)])]),
    )
}

#[test]
fn a_leader_asked_for_a_damaged_snapshot_stops_instead_of_serving_it() {
    let mut c = leader();
    let id = OffsetAndEpoch::new(1, 1);
    let bytes = crate::testing::snapshot_bytes(1, 1_700_000_000_000, 2, 3, 9);
    crate::testing::write_snapshot(c.log_mut(), id, &bytes);
    c.handle(
        2_100,
        Input::Request {
            id: InboundId(1),
            api_version: 1,
            request: fetch_snapshot_request(id, 0),
        },
    )
    .unwrap();
    let served = responses(&mut c);
    let [(_, RaftResponse::FetchSnapshot(r))] = served.as_slice() else {
        panic!("{served:?}")
    };
    let p = &r.topics[0].partitions[0];
    assert_eq!(
        (p.error_code, &p.unaligned_records),
        (crate::errors::NONE, &bytes),
        "the intact snapshot is served"
    );

    c.log_mut()
        .flip_byte_in_snapshot(id, bytes.len() as u64 / 2);
    let err = c
        .handle(
            2_200,
            Input::Request {
                id: InboundId(2),
                api_version: 1,
                request: fetch_snapshot_request(id, 0),
            },
        )
        .unwrap_err();
    assert!(
        matches!(err, RaftError::Storage(LogError::CorruptBatch { .. })),
        "{err}"
    );
    assert!(responses(&mut c).is_empty(), "nothing of it was sent");
}
