//! The simulated network: latency, loss, duplication and partitions, all from one seeded RNG.

use rand::rngs::SmallRng;
use rand::Rng;

/// Fault settings of a run. Percentages are per message.
#[derive(Clone, Debug)]
pub struct NetworkFaults {
    /// Minimum one-way latency in ms.
    pub min_delay_ms: u64,
    /// Maximum one-way latency in ms (latency is uniform in `[min, max]`, which also reorders).
    pub max_delay_ms: u64,
    /// Chance that a message is lost, in percent.
    pub drop_percent: u32,
    /// Chance that a message is delivered twice, in percent.
    pub duplicate_percent: u32,
}

impl NetworkFaults {
    /// No faults, 1–5 ms latency.
    pub fn calm() -> Self {
        Self {
            min_delay_ms: 1,
            max_delay_ms: 5,
            drop_percent: 0,
            duplicate_percent: 0,
        }
    }

    /// Random faults for a seed: up to 20 % loss, up to 100 ms latency, some duplicates.
    pub fn random(rng: &mut SmallRng) -> Self {
        let max_delay_ms = rng.gen_range(2..=100);
        Self {
            min_delay_ms: rng.gen_range(0..=max_delay_ms.min(5)),
            max_delay_ms,
            drop_percent: rng.gen_range(0..=20),
            duplicate_percent: rng.gen_range(0..=5),
        }
    }
}

/// Who can talk to whom: nodes in different groups cannot exchange messages.
#[derive(Clone, Debug, Default)]
pub struct Partition {
    groups: Vec<Vec<i32>>,
}

impl Partition {
    /// Splits `nodes` into two random non-empty groups (or heals if fewer than two nodes).
    pub fn random(nodes: &[i32], rng: &mut SmallRng) -> Self {
        if nodes.len() < 2 {
            return Self::default();
        }
        let mut a = Vec::new();
        let mut b = Vec::new();
        for &n in nodes {
            if rng.gen_bool(0.5) {
                a.push(n)
            } else {
                b.push(n)
            }
        }
        if a.is_empty() || b.is_empty() {
            let moved = nodes[rng.gen_range(0..nodes.len())];
            a.retain(|&x| x != moved);
            b.retain(|&x| x != moved);
            if a.is_empty() {
                a.push(moved)
            } else {
                b.push(moved)
            }
        }
        Self { groups: vec![a, b] }
    }

    /// True if `from` can reach `to`.
    pub fn connected(&self, from: i32, to: i32) -> bool {
        self.groups.is_empty()
            || self
                .groups
                .iter()
                .any(|g| g.contains(&from) && g.contains(&to))
    }

    /// A short description for logs.
    pub fn describe(&self) -> String {
        if self.groups.is_empty() {
            "healed".into()
        } else {
            format!("{:?}", self.groups)
        }
    }
}

/// Decides the fate of each message.
#[derive(Debug)]
pub struct Network {
    /// Current fault settings.
    pub faults: NetworkFaults,
    /// Current partition.
    pub partition: Partition,
}

impl Network {
    /// Delivery times (ms after now) for a message from `from` to `to`: empty if lost,
    /// two entries if duplicated.
    pub fn delays(&self, from: i32, to: i32, rng: &mut SmallRng) -> Vec<u64> {
        if !self.partition.connected(from, to) || rng.gen_range(0..100) < self.faults.drop_percent {
            return Vec::new();
        }
        let mut out = vec![rng.gen_range(self.faults.min_delay_ms..=self.faults.max_delay_ms)];
        if rng.gen_range(0..100) < self.faults.duplicate_percent {
            out.push(rng.gen_range(self.faults.min_delay_ms..=self.faults.max_delay_ms));
        }
        out
    }
}
