//! Simulated brokers: threads that speak to the controller quorum exactly as a Kafka 4.1
//! broker's heartbeat channel does (Kafka `BrokerLifecycleManager`), but host no data
//! and do not replicate the metadata log.
//!
//! Per broker: ApiVersions on every new connection → BrokerRegistration v4 (listener, features
//! as `BrokerFeatures.createDefault` in Kafka 4.1.2, one log dir) → BrokerHeartbeat with
//! WantFence=true until the controller answers IsCaughtUp, then WantFence=false, every 100 ms
//! while fenced and every `interval` once unfenced. A NOT_CONTROLLER answer or a broken
//! connection moves the broker on to the next controller (a real broker asks its raft client
//! for the leader instead; the effect, re-sending to the active controller, is the same).
//!
//! `CurrentMetadataOffset` honesty: a simulated broker does not fetch `__cluster_metadata`.
//! It reports the larger of its broker epoch (= the offset of its own RegisterBrokerRecord, so
//! it has "seen" its registration) and the last high watermark the benchmark read from
//! DescribeQuorum ([`SimBrokers::set_known_offset`]). The controller therefore sees brokers
//! that are always caught up; the Fetch load of real observer brokers is absent.

use anyhow::{bail, Result};
use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::{
    ApiKey, BrokerHeartbeatRequest, BrokerId, BrokerRegistrationRequest,
};
use kafka_protocol::protocol::StrBytes;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::client::{errors, Conn, Transport};

/// Features a Kafka 4.1.2 broker advertises (`BrokerFeatures.createDefault(false)`).
const FEATURES: &[(&str, i16, i16)] = &[
    ("metadata.version", 7, 27),
    ("kraft.version", 0, 1),
    ("group.version", 0, 1),
    ("transaction.version", 0, 2),
    ("eligible.leader.replicas.version", 0, 1),
    ("share.version", 0, 1),
];

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    known_offset: AtomicI64,
    unfenced: AtomicUsize,
    stale_epoch: AtomicU64,
    other_errors: AtomicU64,
    last_error: Mutex<String>,
}

/// A set of simulated brokers, each on its own thread. Dropping it stops them.
pub struct SimBrokers {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    /// Ids of the brokers.
    pub ids: Vec<i32>,
}

impl SimBrokers {
    /// Starts `count` brokers with ids `first_id..` registering with `cluster_id` at the
    /// controllers `controllers` (`host:port`, reached over `transport`), heartbeating every
    /// `interval` once unfenced.
    pub fn start(
        controllers: &[String],
        transport: &Transport,
        cluster_id: &str,
        first_id: i32,
        count: usize,
        interval: Duration,
    ) -> SimBrokers {
        let shared = Arc::new(Shared::default());
        let ids: Vec<i32> = (0..count as i32).map(|i| first_id + i).collect();
        let threads = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let s = shared.clone();
                let ctl = controllers.to_vec();
                let cid = cluster_id.to_string();
                let transport = transport.clone();
                let id = *id;
                std::thread::Builder::new()
                    .name(format!("sim-broker-{id}"))
                    .spawn(move || broker_loop(id, i, &ctl, &transport, &cid, interval, &s))
                    .expect("spawning a simulated broker thread")
            })
            .collect();
        SimBrokers {
            shared,
            threads,
            ids,
        }
    }

    /// Lets brokers report `offset` as their CurrentMetadataOffset (see module docs).
    pub fn set_known_offset(&self, offset: i64) {
        self.shared.known_offset.fetch_max(offset, Ordering::SeqCst);
    }

    /// Number of brokers whose last heartbeat answer said IsFenced=false.
    pub fn unfenced(&self) -> usize {
        self.shared.unfenced.load(Ordering::SeqCst)
    }

    /// `(STALE_BROKER_EPOCH answers, other error answers, last error text)` so far.
    pub fn anomalies(&self) -> (u64, u64, String) {
        (
            self.shared.stale_epoch.load(Ordering::SeqCst),
            self.shared.other_errors.load(Ordering::SeqCst),
            self.shared
                .last_error
                .lock()
                .map(|s| s.clone())
                .unwrap_or_default(),
        )
    }

    /// Waits until every broker is unfenced.
    pub fn wait_unfenced(&self, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        while self.unfenced() < self.ids.len() {
            crate::util::check_interrupted()?;
            if start.elapsed() > timeout {
                let (s, o, e) = self.anomalies();
                bail!(
                    "only {}/{} simulated brokers unfenced after {:?} (stale epochs {s}, errors {o}, last: {e})",
                    self.unfenced(),
                    self.ids.len(),
                    timeout
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Stops every broker thread (no controlled shutdown: they just stop heartbeating).
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for SimBrokers {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A valid BrokerRegistration of broker `id` as a Kafka 4.1.2 broker sends it: one PLAINTEXT
/// listener on 127.0.0.1, Kafka 4.1.2's features, one fresh log directory. Also the base of the
/// hostile registrations of `scenarios::hostile`.
pub(crate) fn registration(id: i32, cluster_id: &str) -> Result<BrokerRegistrationRequest> {
    let r = crate::util::random_bytes(32)?;
    let mut a = [0u8; 16];
    a.copy_from_slice(&r[..16]);
    let mut b = [0u8; 16];
    b.copy_from_slice(&r[16..]);
    // Directory ids with most-significant bits 0 are reserved (DirectoryId.reserved).
    b[0] |= 0x40;
    let mut req = BrokerRegistrationRequest::default();
    req.broker_id = BrokerId(id);
    req.cluster_id = StrBytes::from_string(cluster_id.to_string());
    req.incarnation_id = uuid::Uuid::from_bytes(a);
    let mut l = Listener::default();
    l.name = StrBytes::from_static_str("PLAINTEXT");
    l.host = StrBytes::from_static_str("127.0.0.1");
    // Nothing listens there: controllers never connect to brokers.
    l.port = 19_000 + (id % 1000) as u16;
    l.security_protocol = 0;
    req.listeners = vec![l];
    req.features = FEATURES
        .iter()
        .map(|(n, lo, hi)| {
            let mut f = Feature::default();
            f.name = StrBytes::from_static_str(n);
            f.min_supported_version = *lo;
            f.max_supported_version = *hi;
            f
        })
        .collect();
    req.rack = None;
    req.is_migrating_zk_broker = false;
    req.log_dirs = vec![uuid::Uuid::from_bytes(b)];
    req.previous_broker_epoch = -1;
    Ok(req)
}

fn note_error(s: &Shared, what: String) {
    s.other_errors.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut l) = s.last_error.lock() {
        *l = what;
    }
}

fn broker_loop(
    id: i32,
    index: usize,
    controllers: &[String],
    transport: &Transport,
    cluster_id: &str,
    interval: Duration,
    s: &Shared,
) {
    let reg = match registration(id, cluster_id) {
        Ok(r) => r,
        Err(e) => return note_error(s, format!("broker {id}: {e:#}")),
    };
    let mut target = index % controllers.len();
    let mut conn: Option<Conn> = None;
    let mut epoch: Option<i64> = None;
    let mut caught_up = false;
    let mut unfenced = false;
    let set_unfenced = |now: bool, was: &mut bool| {
        if now != *was {
            if now {
                s.unfenced.fetch_add(1, Ordering::SeqCst);
            } else {
                s.unfenced.fetch_sub(1, Ordering::SeqCst);
            }
            *was = now;
        }
    };
    while !s.stop.load(Ordering::SeqCst) {
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match Conn::connect_via(
                &controllers[target],
                &id.to_string(),
                Duration::from_millis(4500),
                transport,
            ) {
                Ok(c) => conn.insert(c),
                Err(_) => {
                    target = (target + 1) % controllers.len();
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            },
        };
        let next = |conn: &mut Option<Conn>, target: &mut usize| {
            *conn = None;
            *target = (*target + 1) % controllers.len();
            std::thread::sleep(Duration::from_millis(50));
        };
        let Some(e) = epoch else {
            let r = c
                .version(ApiKey::BrokerRegistration, 4)
                .and_then(|v| c.call(&reg, v));
            match r {
                Ok(r) if r.error_code == errors::NONE => epoch = Some(r.broker_epoch),
                Ok(r) if r.error_code == errors::NOT_CONTROLLER => next(&mut conn, &mut target),
                Ok(r) => {
                    note_error(
                        s,
                        format!("broker {id}: BrokerRegistration error {}", r.error_code),
                    );
                    std::thread::sleep(Duration::from_millis(500));
                }
                Err(_) => next(&mut conn, &mut target),
            }
            continue;
        };
        let mut hb = BrokerHeartbeatRequest::default();
        hb.broker_id = BrokerId(id);
        hb.broker_epoch = e;
        hb.current_metadata_offset = e.max(s.known_offset.load(Ordering::SeqCst));
        hb.want_fence = !caught_up;
        hb.want_shut_down = false;
        let r = c
            .version(ApiKey::BrokerHeartbeat, 1)
            .and_then(|v| c.call(&hb, v));
        match r {
            Ok(r) if r.error_code == errors::NONE => {
                caught_up |= r.is_caught_up;
                set_unfenced(!r.is_fenced, &mut unfenced);
                let wait = if r.is_fenced {
                    Duration::from_millis(100)
                } else {
                    interval
                };
                sleep_unless_stopped(s, wait);
            }
            Ok(r) if r.error_code == errors::NOT_CONTROLLER => next(&mut conn, &mut target),
            Ok(r) => {
                if r.error_code == errors::STALE_BROKER_EPOCH {
                    s.stale_epoch.fetch_add(1, Ordering::SeqCst);
                }
                note_error(
                    s,
                    format!("broker {id}: BrokerHeartbeat error {}", r.error_code),
                );
                sleep_unless_stopped(s, Duration::from_millis(500));
            }
            Err(_) => next(&mut conn, &mut target),
        }
    }
    set_unfenced(false, &mut unfenced);
}

fn sleep_unless_stopped(s: &Shared, d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end && !s.stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(20).min(end - Instant::now()));
    }
}
