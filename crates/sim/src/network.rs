//! The simulated network: latency, loss, duplication and partitions, all from one seeded RNG.

use std::collections::BTreeSet;

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

/// Who can talk to whom: a message from `a` to `b` is lost if `(a, b)` is blocked. A two-way
/// partition blocks both directions between two groups; a one-way partition only one (A's
/// messages to B are lost, B's to A delivered: a request from B gets to A, A's answer does not).
#[derive(Clone, Debug, Default)]
pub struct Partition {
    blocked: BTreeSet<(i32, i32)>,
    description: String,
}

impl Partition {
    /// Splits `nodes` into two random non-empty groups (or heals if fewer than two nodes).
    pub fn random(nodes: &[i32], rng: &mut SmallRng) -> Self {
        let Some((a, b)) = split(nodes, rng) else {
            return Self::default();
        };
        let blocked = pairs(&a, &b).chain(pairs(&b, &a)).collect();
        let description = format!("{a:?} | {b:?}");
        Self {
            blocked,
            description,
        }
    }

    /// Splits `nodes` into two random non-empty groups A and B and loses only A's messages to B.
    pub fn random_one_way(nodes: &[i32], rng: &mut SmallRng) -> Self {
        let Some((a, b)) = split(nodes, rng) else {
            return Self::default();
        };
        let blocked = pairs(&a, &b).collect();
        let description = format!("{a:?} → {b:?} lost (one way)");
        Self {
            blocked,
            description,
        }
    }

    /// True if `from` can reach `to`.
    pub fn connected(&self, from: i32, to: i32) -> bool {
        !self.blocked.contains(&(from, to))
    }

    /// A short description for logs.
    pub fn describe(&self) -> String {
        if self.blocked.is_empty() {
            "healed".into()
        } else {
            self.description.clone()
        }
    }
}

/// Two random non-empty groups of `nodes`, or `None` if there are fewer than two.
fn split(nodes: &[i32], rng: &mut SmallRng) -> Option<(Vec<i32>, Vec<i32>)> {
    if nodes.len() < 2 {
        return None;
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
    Some((a, b))
}

fn pairs<'a>(from: &'a [i32], to: &'a [i32]) -> impl Iterator<Item = (i32, i32)> + 'a {
    from.iter()
        .flat_map(move |&f| to.iter().map(move |&t| (f, t)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_one_way_partition_blocks_one_direction_only() {
        let mut rng = SmallRng::seed_from_u64(7);
        let nodes = [1, 2, 3];
        for _ in 0..20 {
            let p = Partition::random_one_way(&nodes, &mut rng);
            let lost: Vec<(i32, i32)> = pairs(&nodes, &nodes)
                .filter(|&(f, t)| f != t && !p.connected(f, t))
                .collect();
            assert!(!lost.is_empty(), "{}", p.describe());
            for (f, t) in lost {
                assert!(
                    p.connected(t, f),
                    "{f}→{t} and back both lost: {}",
                    p.describe()
                );
            }
            let two_way = Partition::random(&nodes, &mut rng);
            for (f, t) in pairs(&nodes, &nodes) {
                assert_eq!(two_way.connected(f, t), two_way.connected(t, f));
            }
        }
    }
}
