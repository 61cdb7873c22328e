//! Leadership as the controllers report it: one thread per controller sends DescribeQuorum
//! (the harness's own Kafka-protocol client, no JVM) every 100 ms. Only a node that believes
//! it leads answers; each answer is a claim "node N leads epoch E". Claims are kept when they
//! change, with the time they were first seen: they give failover times (first claim of a
//! higher epoch after a fault) and the at-most-one-leader-per-epoch check. One thread per node
//! so that a frozen or partitioned node (reads time out) does not delay the others.

use anyhow::{bail, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::bench::client::Conn;
use crate::bench::rpc::{self, QuorumView};

/// One change in what a node claims.
#[derive(Clone, Debug)]
pub struct Claim {
    /// When it was first seen.
    pub at: Instant,
    /// The node that answered as leader.
    pub node: i32,
    /// The leader id it put in its answer.
    pub leader: i32,
    /// Its epoch.
    pub epoch: i32,
}

#[derive(Default)]
struct Shared {
    claims: Vec<Claim>,
    /// Latest answer per node, with its time.
    latest: BTreeMap<i32, (Instant, QuorumView)>,
}

/// The running observer threads.
pub struct Observer {
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Observer {
    /// Starts one polling thread per `(node id, address)`.
    pub fn start(nodes: &[(i32, String)]) -> Observer {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let threads = nodes
            .iter()
            .map(|(id, addr)| {
                let (id, addr) = (*id, addr.clone());
                let (shared, stop) = (shared.clone(), stop.clone());
                std::thread::Builder::new()
                    .name(format!("observe-{id}"))
                    .spawn(move || poll_node(id, &addr, &shared, &stop))
                    .expect("spawning an observer thread")
            })
            .collect();
        Observer {
            shared,
            stop,
            threads,
        }
    }

    /// Stops and joins the threads.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every claim so far.
    pub fn claims(&self) -> Vec<Claim> {
        self.lock().claims.clone()
    }

    /// The freshest answer of the highest epoch seen in the last `max_age`: `(node, view)`.
    pub fn current(&self, max_age: Duration) -> Option<(i32, QuorumView)> {
        let s = self.lock();
        s.latest
            .iter()
            .filter(|(_, (at, _))| at.elapsed() <= max_age)
            .max_by_key(|(_, (at, v))| (v.leader_epoch, *at))
            .map(|(n, (_, v))| (*n, v.clone()))
    }

    /// The first claim of an epoch above `epoch` seen at or after `since`, if any yet.
    pub fn first_claim_above(&self, epoch: i32, since: Instant) -> Option<Claim> {
        self.lock()
            .claims
            .iter()
            .filter(|c| c.at >= since && c.epoch > epoch)
            .min_by_key(|c| c.at)
            .cloned()
    }

    /// Polls [`Observer::current`] until it answers (a leader reporting within 2 s).
    pub fn wait_leader(&self, timeout: Duration) -> Result<(i32, QuorumView)> {
        crate::util::wait_until(
            "a controller to answer DescribeQuorum as leader",
            timeout,
            Duration::from_millis(100),
            || Ok(self.current(Duration::from_secs(2))),
        )
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One node's loop: (re)connect, DescribeQuorum, record, sleep.
fn poll_node(id: i32, addr: &str, shared: &Mutex<Shared>, stop: &AtomicBool) {
    let mut conn: Option<Conn> = None;
    while !stop.load(Ordering::SeqCst) {
        if conn.is_none() {
            conn = Conn::connect(addr, "kraftwerk-it-chaos", Duration::from_millis(1000)).ok();
        }
        if let Some(c) = conn.as_mut() {
            match rpc::describe_quorum(c) {
                Ok(v) => record(shared, id, v),
                // A follower's refusal (an error code in the answer) keeps the connection; an
                // I/O error or timeout means a new one.
                Err(e) if e.to_string().starts_with("DescribeQuorum to") => {}
                Err(_) => conn = None,
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn record(shared: &Mutex<Shared>, node: i32, v: QuorumView) {
    let now = Instant::now();
    let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
    let changed = s
        .latest
        .get(&node)
        .is_none_or(|(_, old)| (old.leader_id, old.leader_epoch) != (v.leader_id, v.leader_epoch));
    if changed {
        s.claims.push(Claim {
            at: now,
            node,
            leader: v.leader_id,
            epoch: v.leader_epoch,
        });
    }
    s.latest.insert(node, (now, v));
}

/// Leaders per epoch by their own word: every epoch must have one leader, named the same by
/// every answer, and the answering node must be that leader. Returns `epoch → leader`.
pub fn leaders_per_epoch(claims: &[Claim]) -> Result<BTreeMap<i32, i32>> {
    let mut by_epoch: BTreeMap<i32, BTreeSet<i32>> = BTreeMap::new();
    for c in claims {
        if c.node != c.leader {
            bail!(
                "controller {} answered DescribeQuorum as leader but named {} the leader of epoch {}",
                c.node,
                c.leader,
                c.epoch
            );
        }
        by_epoch.entry(c.epoch).or_default().insert(c.node);
    }
    let mut out = BTreeMap::new();
    for (epoch, nodes) in by_epoch {
        if nodes.len() > 1 {
            bail!("two leaders in epoch {epoch}: controllers {nodes:?} each answered DescribeQuorum as its leader");
        }
        out.insert(epoch, *nodes.iter().next().expect("non-empty"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(node: i32, leader: i32, epoch: i32) -> Claim {
        Claim {
            at: Instant::now(),
            node,
            leader,
            epoch,
        }
    }

    #[test]
    fn one_leader_per_epoch() {
        let ok = [
            claim(1, 1, 3),
            claim(2, 2, 4),
            claim(1, 1, 3),
            claim(3, 3, 5),
        ];
        let m = leaders_per_epoch(&ok).unwrap();
        assert_eq!(m.get(&4), Some(&2));
        assert!(leaders_per_epoch(&[claim(1, 1, 3), claim(2, 2, 3)]).is_err());
        assert!(leaders_per_epoch(&[claim(1, 2, 3)]).is_err());
    }
}
