//! Peer client against our own listener: negotiation, pipelining, timeouts, backoff,
//! reconnecting after the server restarts. Java interoperability is in `java.rs`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::messages::*;

use super::*;
use super::{init_logs, start};
use kraftwerk_protocol::api_table::ApiTable;

pub(super) fn client_table() -> Arc<ApiTable> {
    Arc::new(
        ApiTable::new([
            (ApiKey::ApiVersions, 0, 4),
            (ApiKey::Fetch, 13, 18),
            (ApiKey::Vote, 0, 2),
            (ApiKey::DescribeQuorum, 0, 2),
            (ApiKey::AllocateProducerIds, 0, 0),
            (ApiKey::BeginQuorumEpoch, 0, 1),
        ])
        .unwrap(),
    )
}

pub(super) fn client(addr: SocketAddr, config: impl FnOnce(&mut PeerClientConfig)) -> PeerClient {
    let mut cfg = PeerClientConfig::raft(7, client_table());
    config(&mut cfg);
    PeerClient::new(
        PeerNode {
            node_id: 1,
            host: addr.ip().to_string(),
            port: addr.port(),
        },
        cfg,
    )
}

fn vote(epoch: i32) -> RequestKind {
    let partition = vote_request::PartitionData::default().with_replica_epoch(epoch);
    RequestKind::Vote(VoteRequest::default().with_topics(vec![
        vote_request::TopicData::default().with_partitions(vec![partition]),
    ]))
}

fn vote_epoch(response: &ResponseKind) -> i32 {
    let ResponseKind::Vote(r) = response else {
        panic!("not a Vote response: {response:?}")
    };
    r.topics[0].partitions[0].leader_epoch
}

#[tokio::test]
async fn negotiates_the_highest_common_version_per_api() {
    let (listener, handler) =
        start(ListenerConfig::default(), "127.0.0.1:0".parse().unwrap()).await;
    let peer = client(listener.local_addr(), |_| {});

    // Vote: we speak 0..=2, the server 0..=1.
    let (version, response) = peer
        .send(ApiKey::Vote, |v| {
            assert_eq!(v, 1);
            vote(3)
        })
        .await
        .unwrap();
    assert_eq!((version, vote_epoch(&response)), (1, 3));
    // Fetch: we speak 13..=18, the server 13..=17.
    let (version, _) = peer
        .send(ApiKey::Fetch, |_| {
            RequestKind::Fetch(FetchRequest::default())
        })
        .await
        .unwrap();
    assert_eq!(version, 17);
    // The server does not serve AllocateProducerIds; we do not speak CreateTopics.
    assert!(matches!(
        peer.send(ApiKey::AllocateProducerIds, |_| unreachable!())
            .await,
        Err(PeerError::UnsupportedVersion {
            api: ApiKey::AllocateProducerIds,
            ours: Some((0, 0)),
            theirs: None
        })
    ));
    assert!(matches!(
        peer.send(ApiKey::CreateTopics, |_| unreachable!()).await,
        Err(PeerError::UnsupportedVersion {
            api: ApiKey::CreateTopics,
            ours: None,
            theirs: Some((5, 7))
        })
    ));
    // A body of the wrong api is refused before anything is sent.
    assert!(matches!(
        peer.send(
            ApiKey::Vote,
            |_| RequestKind::Fetch(FetchRequest::default())
        )
        .await,
        Err(PeerError::Encode { .. })
    ));
    // And all of that happened on one connection, identified as the raft client.
    let seen = handler.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert!(seen
        .iter()
        .all(|c| c.client_id == "raft-client-7" && c.peer_addr == seen[0].peer_addr));
    listener.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn pipelined_requests_are_matched_to_their_callers() {
    let (listener, _) = start(ListenerConfig::default(), "127.0.0.1:0".parse().unwrap()).await;
    let peer = client(listener.local_addr(), |c| c.max_in_flight = 4);
    let mut calls = tokio::task::JoinSet::new();
    for epoch in 0..32 {
        let peer = peer.clone();
        calls.spawn(async move { (epoch, peer.send(ApiKey::Vote, move |_| vote(epoch)).await) });
    }
    while let Some(done) = calls.join_next().await {
        let (epoch, result) = done.unwrap();
        assert_eq!(vote_epoch(&result.unwrap().1), epoch);
    }
    listener.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_timed_out_request_closes_the_connection_and_the_next_one_reconnects() {
    let (listener, handler) =
        start(ListenerConfig::default(), "127.0.0.1:0".parse().unwrap()).await;
    let peer = client(listener.local_addr(), |c| {
        c.request_timeout_ms = 200;
        c.reconnect_backoff_ms = 300;
    });
    let started = tokio::time::Instant::now();
    let slow = peer
        .send(ApiKey::Fetch, |_| {
            RequestKind::Fetch(FetchRequest::default().with_max_wait_ms(1000))
        })
        .await;
    assert!(
        matches!(
            slow,
            Err(PeerError::Timeout {
                api_key: ApiKey::Fetch,
                timeout_ms: 200
            })
        ),
        "{slow:?}"
    );
    assert!(started.elapsed() < Duration::from_millis(1000));
    // Within the reconnect backoff (300 ms ± 20 %) requests fail fast, as Java's do.
    assert!(matches!(
        peer.send(ApiKey::Vote, |_| vote(1)).await,
        Err(PeerError::Disconnected { .. })
    ));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        vote_epoch(&peer.send(ApiKey::Vote, |_| vote(2)).await.unwrap().1),
        2
    );
    let seen = handler.seen.lock().unwrap().clone();
    assert_ne!(
        seen[0].peer_addr,
        seen.last().unwrap().peer_addr,
        "a new connection after the timeout"
    );
    listener.shutdown(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn reconnects_after_the_server_restarts() {
    init_logs();
    let (listener, _) = start(ListenerConfig::default(), "127.0.0.1:0".parse().unwrap()).await;
    let addr = listener.local_addr();
    let peer = client(addr, |_| {});
    assert_eq!(
        vote_epoch(&peer.send(ApiKey::Vote, |_| vote(1)).await.unwrap().1),
        1
    );

    listener.shutdown(Duration::from_secs(1)).await;
    let down = peer.send(ApiKey::Vote, |_| vote(2)).await;
    assert!(
        matches!(down, Err(PeerError::Disconnected { .. } | PeerError::Io(_))),
        "{down:?}"
    );

    let (listener, _) = start(ListenerConfig::default(), addr).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    let epoch = loop {
        match peer.send(ApiKey::Vote, |_| vote(3)).await {
            Ok((_, response)) => break vote_epoch(&response),
            Err(e) if tokio::time::Instant::now() < deadline => {
                tracing::debug!("not yet: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("never reconnected: {e}"),
        }
    };
    assert_eq!(epoch, 3);
    listener.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn backoff_grows_while_the_peer_stays_down() {
    // Bind then drop a listener to get a port nobody listens on.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let peer = client(addr, |c| {
        c.reconnect_backoff_ms = 200;
        c.reconnect_backoff_max_ms = 2000;
    });
    assert!(matches!(
        peer.send(ApiKey::Vote, |_| vote(1)).await,
        Err(PeerError::Io(_))
    ));
    // Backing off: failures are immediate and say so.
    let Err(PeerError::Disconnected { reason }) = peer.send(ApiKey::Vote, |_| vote(1)).await else {
        panic!()
    };
    assert!(reason.contains("backoff"), "{reason}");
    // After the first backoff (≤ 240 ms) a new attempt is made and fails again…
    tokio::time::sleep(Duration::from_millis(260)).await;
    assert!(matches!(
        peer.send(ApiKey::Vote, |_| vote(1)).await,
        Err(PeerError::Io(_))
    ));
    // …and the second backoff is longer (≥ 320 ms): still backing off after the 260 ms that
    // outlasted the first one.
    tokio::time::sleep(Duration::from_millis(260)).await;
    assert!(matches!(
        peer.send(ApiKey::Vote, |_| vote(1)).await,
        Err(PeerError::Disconnected { .. })
    ));
}

#[tokio::test]
async fn falls_back_when_the_server_speaks_an_older_api_versions() {
    // A server whose ApiVersions stops at v2 answers our v4 handshake with UNSUPPORTED_VERSION.
    let handler = Arc::new(super::TestHandler::default());
    let table =
        Arc::new(ApiTable::new([(ApiKey::ApiVersions, 0, 2), (ApiKey::Vote, 0, 1)]).unwrap());
    let listener = Listener::bind(
        "127.0.0.1:0".parse().unwrap(),
        ListenerConfig::default(),
        table,
        super::features(),
        handler,
    )
    .await
    .unwrap();
    let peer = client(listener.local_addr(), |_| {});
    assert_eq!(
        vote_epoch(&peer.send(ApiKey::Vote, |_| vote(4)).await.unwrap().1),
        4
    );
    listener.shutdown(Duration::from_secs(1)).await;
}
