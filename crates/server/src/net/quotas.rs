//! Connection counts of one listener, like Kafka's `ConnectionQuotas`
//! (`core/src/main/scala/kafka/network/SocketServer.scala` in apache/kafka): a cap on all
//! connections (`max.connections`), one per client address (`max.connections.per.ip`, with
//! `max.connections.per.ip.overrides`), and room kept for the quorum's own peers.
//!
//! What Kafka does and what we do:
//! - Per address, Kafka accepts the connection, sees the address is at its maximum
//!   (`ConnectionQuotas.inc` throws `TooManyConnectionsException`) and closes it with an info
//!   line. Same here.
//! - Over `max.connections`, Kafka's acceptor stops accepting until a connection closes
//!   (`waitForConnectionSlot`); only the inter-broker listener is "protected" (it may exceed the
//!   cap, and a least recently used connection of another listener is closed instead), and only
//!   when the node has more than one listener. A controller-only node has just its controller
//!   listener, so nothing is protected there: a flood of client connections that reaches the cap
//!   makes the other controllers' reconnects wait in the kernel backlog too, and the quorum stalls
//!   with it. Here the listener keeps accepting, so it sees who connects: connections from a
//!   voter's address (as `controller.quorum.voters` resolves) take `peer_reserve` slots of their
//!   own first and only then the `max.connections` ones; anyone else beyond the cap is closed at
//!   once with a log line. The address is all that is known at accept; on a host that runs
//!   several controllers and clients (one loopback address for all) the reserve is open to
//!   every local client.
//! - `listener.name.<l>.max.connections` caps one listener on top of the node-wide count
//!   (Kafka's `ConnectionQuotas.maxListenerConnections`); over it Kafka's acceptor waits, here
//!   the connection is closed with a log line, as above. Connections in the peers' reserve are
//!   not counted against it either, so a full client listener never shuts the quorum out.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The listener's connection limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// `max.connections`: most connections at once, the peers' reserve not included.
    pub max_connections: usize,
    /// `max.connections.per.ip`: most connections from one address.
    pub max_connections_per_ip: usize,
    /// `max.connections.per.ip.overrides`, resolved: per-address exceptions to the above.
    pub per_ip_overrides: HashMap<IpAddr, usize>,
    /// The addresses of the other voters (`controller.quorum.voters`, resolved at start).
    pub peer_addresses: HashSet<IpAddr>,
    /// Slots of their own for connections from peer addresses, used before the shared ones.
    pub peer_reserve: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: usize::MAX,
            max_connections_per_ip: usize::MAX,
            per_ip_overrides: HashMap::new(),
            peer_addresses: HashSet::new(),
            peer_reserve: 0,
        }
    }
}

/// Why a new connection was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The address already has its maximum (Kafka's `TooManyConnectionsException` message).
    #[error(
        "address already has the configured maximum of {max} connections (max.connections.per.ip)"
    )]
    PerIp {
        /// The address's maximum.
        max: usize,
    },
    /// The listener's `max.connections` slots are taken (and, for a peer's address, the
    /// peers' reserve too).
    #[error("{max} connections open, the maximum (max.connections)")]
    Total {
        /// `max.connections`.
        max: usize,
    },
    /// This listener's own cap is reached.
    #[error(
        "{max} connections open on listener {listener}, its maximum \
         (listener.name.{lower}.max.connections)",
        lower = listener.to_ascii_lowercase()
    )]
    Listener {
        /// The listener's name, e.g. `CONTROLLER`.
        listener: String,
        /// `listener.name.<l>.max.connections`.
        max: usize,
    },
}

/// One listener's own cap and count (`listener.name.<l>.max.connections`); the count changes
/// only under the node-wide counts' lock.
#[derive(Debug)]
struct ListenerCap {
    name: String,
    max: usize,
    open: AtomicUsize,
}

#[derive(Debug, Default)]
struct Counts {
    /// Connections in the `max.connections` slots.
    shared: usize,
    /// Connections in the peers' reserve.
    reserved: usize,
    per_ip: HashMap<IpAddr, usize>,
    /// Voters learned at run time (a dynamic quorum's VotersRecord): their addresses and the
    /// reserve they add to [`ConnectionLimits::peer_reserve`].
    learned_peers: HashSet<IpAddr>,
    learned_reserve: usize,
}

/// The counts of one listener; cheap to share between the accept loop and the slots it hands
/// to connection tasks.
#[derive(Debug, Clone)]
pub struct ConnectionQuotas {
    limits: Arc<ConnectionLimits>,
    counts: Arc<Mutex<Counts>>,
    /// `Some` for a listener with a cap of its own ([`ConnectionQuotas::for_listener`]).
    listener: Option<Arc<ListenerCap>>,
}

/// One counted connection; dropping it gives the slot back.
#[derive(Debug)]
pub struct ConnectionSlot {
    ip: IpAddr,
    reserved: bool,
    counts: Arc<Mutex<Counts>>,
    /// The listener cap this slot counts against (never for a reserved slot).
    listener: Option<Arc<ListenerCap>>,
}

impl ConnectionQuotas {
    /// Quotas with `limits` and nothing open.
    pub fn new(limits: ConnectionLimits) -> Self {
        Self {
            limits: Arc::new(limits),
            counts: Arc::default(),
            listener: None,
        }
    }

    /// The same node-wide counts, with a cap of `max` connections for the listener `name`
    /// (`listener.name.<name>.max.connections`) on top; every handle this returns counts its
    /// own listener.
    pub fn for_listener(&self, name: &str, max: usize) -> Self {
        Self {
            limits: self.limits.clone(),
            counts: self.counts.clone(),
            listener: Some(Arc::new(ListenerCap {
                name: name.to_owned(),
                max,
                open: AtomicUsize::new(0),
            })),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &ConnectionLimits {
        &self.limits
    }

    /// Counts a new connection from `ip`, or says why it must be closed.
    pub fn try_acquire(&self, ip: IpAddr) -> Result<ConnectionSlot, Refused> {
        let ip = canonical(ip);
        let limits = &self.limits;
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let per_ip_max = limits
            .per_ip_overrides
            .get(&ip)
            .copied()
            .unwrap_or(limits.max_connections_per_ip);
        let from_ip = counts.per_ip.get(&ip).copied().unwrap_or(0);
        if from_ip >= per_ip_max {
            return Err(Refused::PerIp { max: per_ip_max });
        }
        let is_peer = limits.peer_addresses.contains(&ip) || counts.learned_peers.contains(&ip);
        let reserve = limits.peer_reserve + counts.learned_reserve;
        let reserved = is_peer && counts.reserved < reserve;
        let listener = if reserved {
            None
        } else {
            self.listener.clone()
        };
        if let Some(cap) = &listener {
            if cap.open.load(Ordering::Relaxed) >= cap.max {
                return Err(Refused::Listener {
                    listener: cap.name.clone(),
                    max: cap.max,
                });
            }
        }
        if reserved {
            counts.reserved += 1;
        } else if counts.shared < limits.max_connections {
            counts.shared += 1;
        } else {
            return Err(Refused::Total {
                max: limits.max_connections,
            });
        }
        *counts.per_ip.entry(ip).or_default() += 1;
        if let Some(cap) = &listener {
            cap.open.fetch_add(1, Ordering::Relaxed);
        }
        Ok(ConnectionSlot {
            ip,
            reserved,
            counts: self.counts.clone(),
            listener,
        })
    }

    /// Voters found at run time (a dynamic quorum's voter set: added controllers at other
    /// hosts): connections from `addresses` get the peers' reserve too, enlarged by
    /// `extra_reserve` slots. Replaces what an earlier call set; the configured peers stay.
    pub fn set_learned_peers(&self, addresses: HashSet<IpAddr>, extra_reserve: usize) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.learned_peers = addresses
            .into_iter()
            .map(canonical)
            .filter(|ip| !self.limits.peer_addresses.contains(ip))
            .collect();
        counts.learned_reserve = extra_reserve;
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.shared + counts.reserved
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if self.reserved {
            counts.reserved -= 1;
        } else {
            counts.shared -= 1;
        }
        if let Some(cap) = &self.listener {
            cap.open.fetch_sub(1, Ordering::Relaxed);
        }
        if let Some(n) = counts.per_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                counts.per_ip.remove(&self.ip);
            }
        }
    }
}

/// An IPv4 address seen through an IPv6 socket (`::ffff:a.b.c.d`) counts as that IPv4 address.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn per_ip_maximum_and_overrides() {
        let quotas = ConnectionQuotas::new(ConnectionLimits {
            max_connections_per_ip: 2,
            per_ip_overrides: [(ip("10.0.0.9"), 0), (ip("10.0.0.8"), 3)].into(),
            ..ConnectionLimits::default()
        });
        let a = [
            quotas.try_acquire(ip("10.0.0.1")),
            quotas.try_acquire(ip("10.0.0.1")),
        ];
        assert!(a.iter().all(Result::is_ok));
        assert_eq!(
            quotas.try_acquire(ip("10.0.0.1")).unwrap_err(),
            Refused::PerIp { max: 2 }
        );
        assert!(
            quotas.try_acquire(ip("10.0.0.2")).is_ok(),
            "another address"
        );
        assert_eq!(
            quotas.try_acquire(ip("10.0.0.9")).unwrap_err(),
            Refused::PerIp { max: 0 }
        );
        let b: Vec<_> = (0..3).map(|_| quotas.try_acquire(ip("10.0.0.8"))).collect();
        assert!(b.iter().all(Result::is_ok), "override above the default");
        assert!(quotas.try_acquire(ip("10.0.0.8")).is_err());
        // A closed connection gives its slot back.
        drop(a);
        assert!(quotas.try_acquire(ip("10.0.0.1")).is_ok());
        // An IPv4-mapped IPv6 address is the same address.
        assert!(quotas.try_acquire(ip("::ffff:10.0.0.9")).is_err());
    }

    #[test]
    fn a_listener_cap_counts_its_own_listener_within_the_node_wide_count() {
        let node = ConnectionQuotas::new(ConnectionLimits {
            max_connections: 3,
            peer_addresses: [ip("10.0.0.2")].into(),
            peer_reserve: 1,
            ..ConnectionLimits::default()
        });
        let a = node.for_listener("CONTROLLER", 1);
        let b = node.for_listener("SECOND", 5);
        let on_a = a.try_acquire(ip("192.168.0.1")).unwrap();
        assert_eq!(
            a.try_acquire(ip("192.168.0.2")).unwrap_err(),
            Refused::Listener {
                listener: "CONTROLLER".into(),
                max: 1
            }
        );
        assert!(
            a.try_acquire(ip("192.168.0.2"))
                .unwrap_err()
                .to_string()
                .contains("listener.name.controller.max.connections"),
            "the message names the key"
        );
        // A peer in its reserve is not counted against the listener's cap.
        let peer = a.try_acquire(ip("10.0.0.2")).unwrap();
        // The other listener has room of its own, up to the node-wide count.
        let on_b: Vec<_> = (1..=2)
            .map(|i| b.try_acquire(ip(&format!("192.168.1.{i}"))).unwrap())
            .collect();
        assert_eq!(
            b.try_acquire(ip("192.168.1.3")).unwrap_err(),
            Refused::Total { max: 3 },
            "max.connections still counts every listener"
        );
        assert_eq!(node.open(), 4);
        // A closed connection gives its listener slot back.
        drop(on_a);
        assert!(a.try_acquire(ip("192.168.0.2")).is_ok());
        drop((peer, on_b));
    }

    #[test]
    fn the_cap_keeps_room_for_peers() {
        let quotas = ConnectionQuotas::new(ConnectionLimits {
            max_connections: 2,
            peer_addresses: [ip("10.0.0.2"), ip("10.0.0.3")].into(),
            peer_reserve: 2,
            ..ConnectionLimits::default()
        });
        let clients: Vec<_> = (1..=2)
            .map(|i| quotas.try_acquire(ip(&format!("192.168.0.{i}"))).unwrap())
            .collect();
        assert_eq!(
            quotas.try_acquire(ip("192.168.0.3")).unwrap_err(),
            Refused::Total { max: 2 }
        );
        let peers = [
            quotas.try_acquire(ip("10.0.0.2")).unwrap(),
            quotas.try_acquire(ip("10.0.0.3")).unwrap(),
        ];
        assert_eq!(
            quotas.try_acquire(ip("10.0.0.2")).unwrap_err(),
            Refused::Total { max: 2 },
            "the reserve is bounded too"
        );
        assert_eq!(quotas.open(), 4);
        // Peers in their reserve take no client's slot.
        drop(clients);
        let mut clients: Vec<_> = (1..=2)
            .map(|i| quotas.try_acquire(ip(&format!("192.168.0.{i}"))).unwrap())
            .collect();
        // A peer past its reserve takes a shared slot when one is free.
        drop(peers);
        clients.pop();
        let peers: Vec<_> = (0..3)
            .map(|_| quotas.try_acquire(ip("10.0.0.2")).unwrap())
            .collect();
        assert!(quotas.try_acquire(ip("10.0.0.2")).is_err());
        drop((peers, clients));
        assert_eq!(quotas.open(), 0);
    }

    #[test]
    fn voters_learned_at_run_time_get_the_reserve() {
        let quotas = ConnectionQuotas::new(ConnectionLimits {
            max_connections: 1,
            peer_addresses: [ip("10.0.0.2")].into(),
            peer_reserve: 1,
            ..ConnectionLimits::default()
        });
        let _client = quotas.try_acquire(ip("10.0.0.50")).unwrap();
        assert!(
            quotas.try_acquire(ip("10.0.0.7")).is_err(),
            "not a peer yet"
        );
        quotas.set_learned_peers([ip("10.0.0.7")].into(), 1);
        let _configured = quotas.try_acquire(ip("10.0.0.2")).unwrap();
        let _learned = quotas.try_acquire(ip("::ffff:10.0.0.7")).unwrap();
        assert!(
            quotas.try_acquire(ip("10.0.0.7")).is_err(),
            "the reserve is 1 + 1 slots"
        );
        quotas.set_learned_peers(HashSet::new(), 0);
        assert!(quotas.try_acquire(ip("10.0.0.60")).is_err());
    }
}
