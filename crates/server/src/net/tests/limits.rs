//! The listener's resource bounds on real sockets: connection caps (`max.connections`,
//! `max.connections.per.ip` and overrides, the peers' reserve), idle and half-open connections
//! (`connections.max.idle.ms`). Oversized size prefixes are in
//! `misbehaving_clients_lose_only_their_own_connection`.

use super::*;
use crate::net::ConnectionLimits;

/// Sends a Vote and expects its answer: the connection is being served.
async fn served(client: &mut RawClient, epoch: i32) {
    client.send(ApiKey::Vote, 1, epoch, vote(epoch)).await;
    assert_eq!(vote_epoch(&client.recv(ApiKey::Vote, 1).await.1), epoch);
}

fn ip(text: &str) -> std::net::IpAddr {
    text.parse().unwrap()
}

#[tokio::test]
async fn connections_over_the_cap_are_closed_and_the_peers_keep_their_room() {
    init_logs();
    let config = ListenerConfig {
        limits: ConnectionLimits {
            max_connections: 2,
            peer_addresses: [ip("127.0.0.2")].into(),
            peer_reserve: 1,
            ..ConnectionLimits::default()
        },
        ..ListenerConfig::default()
    };
    let (listener, _) = start(config, "127.0.0.1:0".parse().unwrap()).await;
    let addr = listener.local_addr();
    let mut first = RawClient::connect_from("127.0.0.1", addr).await;
    let mut second = RawClient::connect_from("127.0.0.3", addr).await;
    served(&mut first, 1).await;
    served(&mut second, 2).await;
    // A third client is closed at once, not left waiting.
    let mut third = RawClient::connect_from("127.0.0.1", addr).await;
    third.expect_closed().await;
    // A voter's address still gets in, up to the reserve.
    let mut peer = RawClient::connect_from("127.0.0.2", addr).await;
    served(&mut peer, 3).await;
    let mut second_peer = RawClient::connect_from("127.0.0.2", addr).await;
    second_peer.expect_closed().await;
    // A closed connection frees its slot (once its task has seen the close).
    drop(first);
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let mut again = RawClient::connect_from("127.0.0.1", addr).await;
        again.send(ApiKey::Vote, 1, 4, vote(4)).await;
        if let Some(frame) = again.recv_frame().await {
            let (_, _, body) = decode_response(ApiKey::Vote, 1, frame).unwrap();
            assert_eq!(vote_epoch(&body), 4);
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "slot never freed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    served(&mut second, 5).await;
    served(&mut peer, 6).await;
    listener.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn connections_over_the_per_ip_maximum_are_closed() {
    init_logs();
    let config = ListenerConfig {
        limits: ConnectionLimits {
            max_connections_per_ip: 1,
            per_ip_overrides: [(ip("127.0.0.2"), 2)].into(),
            ..ConnectionLimits::default()
        },
        ..ListenerConfig::default()
    };
    let (listener, _) = start(config, "127.0.0.1:0".parse().unwrap()).await;
    let addr = listener.local_addr();
    let mut one = RawClient::connect_from("127.0.0.1", addr).await;
    served(&mut one, 1).await;
    RawClient::connect_from("127.0.0.1", addr)
        .await
        .expect_closed()
        .await;
    // The override lets 127.0.0.2 have two.
    let mut a = RawClient::connect_from("127.0.0.2", addr).await;
    let mut b = RawClient::connect_from("127.0.0.2", addr).await;
    served(&mut a, 2).await;
    served(&mut b, 3).await;
    RawClient::connect_from("127.0.0.2", addr)
        .await
        .expect_closed()
        .await;
    served(&mut one, 4).await;
    listener.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn idle_connections_are_closed() {
    let config = ListenerConfig {
        connections_max_idle_ms: 150,
        ..ListenerConfig::default()
    };
    let (listener, _) = start(config, "127.0.0.1:0".parse().unwrap()).await;
    let mut client = RawClient::connect(listener.local_addr()).await;
    served(&mut client, 1).await;
    let started = tokio::time::Instant::now();
    client.expect_closed().await;
    assert!(
        started.elapsed() >= Duration::from_millis(140),
        "closed after {:?}",
        started.elapsed()
    );
    listener.shutdown(Duration::from_secs(1)).await;
}

/// A half-open connection, accepted but never completing a request, is closed after
/// `connections.max.idle.ms` even while it trickles bytes: the bound is on the whole request,
/// not on the gap between reads (Kafka's selector counts any read as activity, so a client
/// sending a byte now and then keeps a Java listener's connection and buffer for good).
#[tokio::test]
async fn half_open_connections_are_closed_even_when_they_trickle() {
    let config = ListenerConfig {
        connections_max_idle_ms: 300,
        ..ListenerConfig::default()
    };
    let (listener, _) = start(config, "127.0.0.1:0".parse().unwrap()).await;
    let addr = listener.local_addr();
    // Accepted, never a byte.
    let mut silent = RawClient::connect(addr).await;
    // A size prefix of 1000 bytes, then one byte every 50 ms.
    let mut trickle = RawClient::connect(addr).await;
    let started = tokio::time::Instant::now();
    trickle.send_bytes(&1000i32.to_be_bytes()).await;
    let mut closed_after = None;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if trickle.stream.write_all(&[0]).await.is_err() {
            closed_after = Some(started.elapsed());
            break;
        }
        let mut probe = [0u8; 1];
        match tokio::time::timeout(Duration::from_millis(1), trickle.stream.peek(&mut probe)).await
        {
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed_after = Some(started.elapsed());
                break;
            }
            _ => {}
        }
    }
    let closed_after = closed_after.expect("the trickling connection was never closed");
    assert!(
        closed_after >= Duration::from_millis(290) && closed_after < Duration::from_millis(1_500),
        "closed after {closed_after:?}"
    );
    silent.expect_closed().await;
    listener.shutdown(Duration::from_secs(1)).await;
}
