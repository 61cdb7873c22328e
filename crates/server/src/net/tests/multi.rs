//! A node with several controller listeners (`controller.listener.names=A,B`), bound as
//! [`crate::server::Server::start`] binds them: each is served and names itself in the requests
//! it takes, and they count connections against one node-wide cap.

use super::*;
use crate::net::{ConnectionLimits, ConnectionQuotas};
use crate::server::bind_listeners;

pub(super) fn named(name: &str) -> ListenerConfig {
    ListenerConfig {
        listener_name: name.into(),
        ..ListenerConfig::default()
    }
}

/// Binds `configs` on loopback port 0 sharing `quotas`, with one test handler for all.
pub(super) async fn start_several(
    configs: Vec<ListenerConfig>,
    quotas: ConnectionQuotas,
) -> (Vec<Listener>, Arc<TestHandler>) {
    let handler = Arc::new(TestHandler::default());
    let to_bind = configs
        .into_iter()
        .map(|c| ("127.0.0.1:0".parse().unwrap(), c))
        .collect();
    let listeners = bind_listeners(to_bind, quotas, server_table(), features(), handler.clone())
        .await
        .unwrap();
    (listeners, handler)
}

async fn api_versions_answered(client: &mut RawClient, correlation_id: i32) {
    let request = ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("test"))
        .with_client_software_version(StrBytes::from_static_str("1"));
    client
        .send(
            ApiKey::ApiVersions,
            3,
            correlation_id,
            RequestKind::ApiVersions(request),
        )
        .await;
    let (id, body) = client.recv(ApiKey::ApiVersions, 3).await;
    let ResponseKind::ApiVersions(body) = body else {
        panic!("not an ApiVersions response: {body:?}")
    };
    assert_eq!((id, body.error_code), (correlation_id, 0));
    assert!(!body.api_keys.is_empty());
}

#[tokio::test]
async fn every_listener_is_served_under_its_own_name() {
    init_logs();
    let quotas = ConnectionQuotas::new(ConnectionLimits::default());
    let (listeners, handler) =
        start_several(vec![named("CONTROLLER"), named("CONTROLLER2")], quotas).await;
    assert_eq!(listeners.len(), 2);
    assert_ne!(listeners[0].local_addr(), listeners[1].local_addr());
    let mut first = RawClient::connect(listeners[0].local_addr()).await;
    let mut second = RawClient::connect(listeners[1].local_addr()).await;
    api_versions_answered(&mut first, 1).await;
    api_versions_answered(&mut second, 2).await;
    first.send(ApiKey::Vote, 1, 3, vote(3)).await;
    assert_eq!(vote_epoch(&first.recv(ApiKey::Vote, 1).await.1), 3);
    second.send(ApiKey::Vote, 1, 4, vote(4)).await;
    assert_eq!(vote_epoch(&second.recv(ApiKey::Vote, 1).await.1), 4);
    let names: Vec<(i32, String)> = handler
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|ctx| (ctx.correlation_id, ctx.listener_name.to_string()))
        .collect();
    assert_eq!(
        names,
        [(3, "CONTROLLER".to_owned()), (4, "CONTROLLER2".to_owned())]
    );
    for listener in listeners {
        listener.shutdown(Duration::from_secs(1)).await;
    }
}

#[tokio::test]
async fn max_connections_counts_the_connections_of_every_listener() {
    init_logs();
    let quotas = ConnectionQuotas::new(ConnectionLimits {
        max_connections: 1,
        ..ConnectionLimits::default()
    });
    let (listeners, _) = start_several(
        vec![named("CONTROLLER"), named("CONTROLLER2")],
        quotas.clone(),
    )
    .await;
    let (a, b) = (listeners[0].local_addr(), listeners[1].local_addr());
    let mut on_a = RawClient::connect(a).await;
    api_versions_answered(&mut on_a, 1).await;
    // The only slot is taken on A: B refuses, as one node-wide `max.connections` does.
    let mut on_b = RawClient::connect(b).await;
    on_b.expect_closed().await;
    assert_eq!(quotas.open(), 1);
    // Once A's connection is gone, B takes the slot.
    drop(on_a);
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let mut again = RawClient::connect(b).await;
        again.send(ApiKey::Vote, 1, 2, vote(2)).await;
        if let Some(frame) = again.recv_frame().await {
            let (_, _, body) = decode_response(ApiKey::Vote, 1, frame).unwrap();
            assert_eq!(vote_epoch(&body), 2);
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "slot never freed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for listener in listeners {
        listener.shutdown(Duration::from_secs(1)).await;
    }
}

#[tokio::test]
async fn a_listener_cap_refuses_on_its_listener_only() {
    init_logs();
    let quotas = ConnectionQuotas::new(ConnectionLimits::default());
    let capped = ListenerConfig {
        listener_max_connections: Some(1),
        ..named("CONTROLLER")
    };
    let (listeners, _) = start_several(vec![capped, named("CONTROLLER2")], quotas.clone()).await;
    let (a, b) = (listeners[0].local_addr(), listeners[1].local_addr());
    let mut first_on_a = RawClient::connect(a).await;
    api_versions_answered(&mut first_on_a, 1).await;
    // `listener.name.controller.max.connections=1`: a second client on A is closed ...
    let mut second_on_a = RawClient::connect(a).await;
    second_on_a.expect_closed().await;
    // ... while B, with no cap of its own, still serves.
    let mut on_b = RawClient::connect(b).await;
    api_versions_answered(&mut on_b, 2).await;
    assert_eq!(quotas.open(), 2);
    for listener in listeners {
        listener.shutdown(Duration::from_secs(1)).await;
    }
}
