//! `GET /metrics` in the Prometheus text format (version 0.0.4), on `kraftwerk.metrics.listener`.
//!
//! The Java controller's metrics come out under the names Strimzi's JMX exporter rules give
//! them ([`kafka`]), so an operator's dashboards and alerts keep working; kraftwerk-only
//! metrics keep the `kraftwerk_` prefix ([`kraftwerk`]); the process collector of the
//! `prometheus` crate adds the standard `process_*` metrics (as client_java's does for a JVM),
//! and `kraftwerk_build_info{version}` names the build. The `prometheus` crate holds the
//! registry and encodes the text.

mod families;
pub mod kafka;
pub mod kraftwerk;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use kraftwerk_node::NodeStatus;
use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{Encoder, IntGauge, Opts, Registry, TextEncoder};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::{info, warn};

/// Rendering the exposition failed (a family the registry or encoder refuses: a bug here).
#[derive(Debug, thiserror::Error)]
#[error("cannot render /metrics: {0}")]
pub struct MetricsError(#[from] prometheus::Error);

/// Counts of the Raft client channel (`kafka.server:type=raft-channel-metrics`), kept by the
/// peer dispatcher.
#[derive(Debug, Default)]
pub struct ChannelStats {
    requests: AtomicU64,
    responses: AtomicU64,
}

impl ChannelStats {
    /// A Raft request was handed to a peer client.
    pub fn request_sent(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// A peer answered a Raft request.
    pub fn response_received(&self) {
        self.responses.fetch_add(1, Ordering::Relaxed);
    }

    /// The counts now.
    pub fn counts(&self) -> ChannelCounts {
        ChannelCounts {
            requests: self.requests.load(Ordering::Relaxed),
            responses: self.responses.load(Ordering::Relaxed),
        }
    }
}

/// A reading of [`ChannelStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelCounts {
    /// Raft requests sent.
    pub requests: u64,
    /// Responses received.
    pub responses: u64,
}

/// Families computed for one scrape. Their labels vary between scrapes (one sample per
/// broker, per replica), so the collector declares no fixed descriptors.
struct Computed(Vec<MetricFamily>);

impl Collector for Computed {
    fn desc(&self) -> Vec<&Desc> {
        Vec::new()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        self.0.clone()
    }
}

/// `kraftwerk_build_info{version="…"} 1`.
fn build_info() -> Result<IntGauge, prometheus::Error> {
    let gauge = IntGauge::with_opts(
        Opts::new("kraftwerk_build_info", "kraftwerk's version; always 1.")
            .const_label("version", env!("CARGO_PKG_VERSION")),
    )?;
    gauge.set(1);
    Ok(gauge)
}

/// The whole exposition for `status` at wall-clock `now_ms`, process metrics included.
pub fn render(
    node_id: i32,
    status: &NodeStatus,
    channel: ChannelCounts,
    now_ms: u64,
) -> Result<String, MetricsError> {
    let registry = Registry::new();
    #[cfg(target_os = "linux")]
    registry.register(Box::new(
        prometheus::process_collector::ProcessCollector::for_self(),
    ))?;
    registry.register(Box::new(build_info()?))?;
    let mut computed = kafka::families(status, channel, now_ms);
    computed.extend(kraftwerk::families(node_id, status, now_ms));
    registry.register(Box::new(Computed(computed)))?;
    let mut out = TextEncoder::new().encode_to_string(&registry.gather())?;
    kafka::current_state_family(status).encode(&mut out);
    Ok(out)
}

fn wall_clock_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The HTTP answer to one request.
fn respond(
    path: &str,
    node_id: i32,
    status: &NodeStatus,
    channel: &ChannelStats,
) -> Response<Full<Bytes>> {
    let response = if path != "/metrics" {
        Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(Full::new(Bytes::from_static(b"not found\n")))
    } else {
        match render(node_id, status, channel.counts(), wall_clock_ms()) {
            Ok(text) => Response::builder()
                .header("content-type", TextEncoder::new().format_type())
                .body(Full::new(Bytes::from(text))),
            Err(e) => {
                warn!(error = %e, "metrics rendering failed");
                Response::builder()
                    .status(StatusCode::INTERNAL_SERVER_ERROR)
                    .body(Full::new(Bytes::from(format!("{e}\n"))))
            }
        }
    };
    response.expect("static response parts are valid")
}

/// Serves `/metrics` on `addr` until the process ends. Errors binding are returned; errors on
/// one connection are logged.
pub async fn serve(
    addr: SocketAddr,
    node_id: i32,
    status: watch::Receiver<NodeStatus>,
    channel: Arc<ChannelStats>,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    info!(%local, "metrics endpoint listening (GET /metrics)");
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let status = status.clone();
            let channel = channel.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    // Clone out of the watch: rendering must not hold its lock.
                    let current = status.borrow().clone();
                    let response = respond(request.uri().path(), node_id, &current, &channel);
                    async move { Ok::<_, Infallible>(response) }
                });
                if let Err(e) = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    warn!(error = %e, "metrics connection failed");
                }
            });
        }
    });
    Ok(local)
}

#[cfg(test)]
mod tests;
