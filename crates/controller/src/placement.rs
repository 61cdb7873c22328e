//! Replica placement for new partitions (Kafka's `StripedReplicaPlacer`, KIP-660).
//!
//! Brokers are grouped by rack. Each partition takes its first replica from the next rack that
//! has an unfenced broker, then one broker per rack in turn (unfenced before fenced), so
//! replicas spread over racks and leadership spreads over brokers. After as many partitions as
//! there are unfenced brokers, racks and brokers are shuffled (with the controller's seeded
//! RNG) so the same assignments do not repeat. Brokers in controlled shutdown are never placed.
//! The random draws differ from Java's `java.util.Random`, so the exact assignment differs from a
//! Java controller's; the rules are the same.

use std::collections::BTreeMap;

use rand::seq::SliceRandom;
use rand::Rng;

/// A broker that may receive replicas (`UsableBroker`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsableBroker {
    /// Broker id.
    pub id: i32,
    /// Rack, if any.
    pub rack: Option<String>,
    /// Fenced brokers are used only when a rack has no unfenced broker left in this round.
    pub fenced: bool,
}

#[derive(Default)]
struct BrokerList {
    brokers: Vec<i32>,
    index: usize,
    offset: usize,
    epoch: u64,
}

impl BrokerList {
    fn initialize(&mut self, rng: &mut impl Rng) {
        if !self.brokers.is_empty() {
            self.brokers.sort_unstable();
            self.offset = rng.gen_range(0..self.brokers.len());
        }
    }

    fn next(&mut self, epoch: u64) -> Option<i32> {
        if self.brokers.is_empty() {
            return None;
        }
        if self.epoch != epoch {
            self.epoch = epoch;
            self.index = 0;
            self.offset = (self.offset + 1) % self.brokers.len();
        }
        if self.index >= self.brokers.len() {
            return None;
        }
        let broker = self.brokers[(self.index + self.offset) % self.brokers.len()];
        self.index += 1;
        Some(broker)
    }
}

#[derive(Default)]
struct Rack {
    fenced: BrokerList,
    unfenced: BrokerList,
}

impl Rack {
    fn next(&mut self, epoch: u64) -> Option<i32> {
        self.unfenced.next(epoch).or_else(|| self.fenced.next(epoch))
    }
}

struct RackList<'r, R: Rng> {
    rng: &'r mut R,
    /// Racks in name order (no rack sorts first, as `OptionalStringComparator`).
    rack_names: Vec<Option<String>>,
    racks: BTreeMap<Option<String>, Rack>,
    num_total: usize,
    num_unfenced: usize,
    epoch: u64,
    offset: usize,
}

impl<'r, R: Rng> RackList<'r, R> {
    fn new(rng: &'r mut R, brokers: &[UsableBroker]) -> Self {
        let mut racks: BTreeMap<Option<String>, Rack> = BTreeMap::new();
        let mut num_unfenced = 0;
        for broker in brokers {
            let rack = racks.entry(broker.rack.clone()).or_default();
            if broker.fenced {
                rack.fenced.brokers.push(broker.id);
            } else {
                num_unfenced += 1;
                rack.unfenced.brokers.push(broker.id);
            }
        }
        for rack in racks.values_mut() {
            rack.fenced.initialize(rng);
            rack.unfenced.initialize(rng);
        }
        let rack_names: Vec<Option<String>> = racks.keys().cloned().collect();
        let offset = if rack_names.is_empty() { 0 } else { rng.gen_range(0..rack_names.len()) };
        RackList { rng, rack_names, racks, num_total: brokers.len(), num_unfenced, epoch: 0, offset }
    }

    fn shuffle(&mut self) {
        self.rack_names.shuffle(self.rng);
        for rack in self.racks.values_mut() {
            rack.fenced.brokers.shuffle(self.rng);
            rack.unfenced.brokers.shuffle(self.rng);
        }
    }

    fn rack(&mut self, index: usize) -> &mut Rack {
        let name = &self.rack_names[index];
        self.racks.get_mut(name).expect("every rack name has a rack")
    }

    fn place(&mut self, replication_factor: usize) -> Vec<i32> {
        if self.epoch == self.num_unfenced as u64 && self.num_unfenced > 1 {
            self.shuffle();
            self.epoch = 0;
        }
        if self.offset == self.rack_names.len() {
            self.offset = 0;
        }
        let epoch = self.epoch;
        let mut brokers = Vec::with_capacity(replication_factor);
        let mut first_rack_index = self.offset;
        loop {
            if let Some(broker) = self.rack(first_rack_index).unfenced.next(epoch) {
                brokers.push(broker);
                break;
            }
            first_rack_index = (first_rack_index + 1) % self.rack_names.len();
        }
        let mut first_rack = Some(first_rack_index);
        let mut rack_index = self.offset;
        for _ in 1..replication_factor {
            let broker = loop {
                let result = if first_rack == Some(rack_index) {
                    // The first replica's rack is skipped once in this pass.
                    first_rack = None;
                    None
                } else {
                    self.rack(rack_index).next(epoch)
                };
                rack_index = (rack_index + 1) % self.rack_names.len();
                if let Some(broker) = result {
                    break broker;
                }
            };
            brokers.push(broker);
        }
        self.epoch += 1;
        self.offset += 1;
        brokers
    }
}

/// Places `num_partitions` partitions of `replication_factor` replicas on `brokers`.
///
/// # Errors
/// Kafka's `InvalidReplicationFactorException` messages: "Invalid replication factor N: the
/// replication factor must be positive.", "The target replication factor of N cannot be reached
/// because only M broker(s) are registered.", "All brokers are currently fenced.".
pub fn place(
    rng: &mut impl Rng,
    brokers: &[UsableBroker],
    num_partitions: usize,
    replication_factor: i32,
) -> Result<Vec<Vec<i32>>, String> {
    let mut racks = RackList::new(rng, brokers);
    if replication_factor <= 0 {
        return Err(format!(
            "Invalid replication factor {replication_factor}: the replication factor must be positive."
        ));
    }
    if racks.num_unfenced == 0 {
        return Err("All brokers are currently fenced.".to_owned());
    }
    if replication_factor as usize > racks.num_total {
        return Err(format!(
            "The target replication factor of {replication_factor} cannot be reached because only {} \
             broker(s) are registered.",
            racks.num_total
        ));
    }
    Ok((0..num_partitions).map(|_| racks.place(replication_factor as usize)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, SeedableRng};
    use std::collections::{BTreeSet, HashMap};

    fn brokers(specs: &[(i32, Option<&str>, bool)]) -> Vec<UsableBroker> {
        specs.iter().map(|(id, rack, fenced)| UsableBroker { id: *id, rack: rack.map(str::to_owned), fenced: *fenced }).collect()
    }

    #[test]
    fn errors_match_kafka() {
        let mut rng = StdRng::seed_from_u64(1);
        let b = brokers(&[(1, None, false)]);
        assert_eq!(
            place(&mut rng, &b, 1, 3).unwrap_err(),
            "The target replication factor of 3 cannot be reached because only 1 broker(s) are registered."
        );
        let fenced = brokers(&[(1, None, true), (2, None, true)]);
        assert_eq!(place(&mut rng, &fenced, 1, 1).unwrap_err(), "All brokers are currently fenced.");
        assert!(place(&mut rng, &b, 1, 0).unwrap_err().contains("must be positive"));
    }

    #[test]
    fn replicas_are_distinct_and_unfenced_brokers_lead() {
        for seed in 0..50 {
            let mut rng = StdRng::seed_from_u64(seed);
            let b = brokers(&[(1, None, false), (2, None, false), (3, None, true), (4, None, false)]);
            let placed = place(&mut rng, &b, 20, 3).unwrap();
            for replicas in &placed {
                let distinct: BTreeSet<i32> = replicas.iter().copied().collect();
                assert_eq!(distinct.len(), 3, "{replicas:?}");
                assert_ne!(replicas[0], 3, "a fenced broker must not be first: {replicas:?}");
            }
        }
    }

    #[test]
    fn leadership_is_spread_evenly() {
        let mut rng = StdRng::seed_from_u64(9);
        let b = brokers(&[(1, None, false), (2, None, false), (3, None, false)]);
        let placed = place(&mut rng, &b, 30, 2).unwrap();
        let mut leaders: HashMap<i32, usize> = HashMap::new();
        for replicas in &placed {
            *leaders.entry(replicas[0]).or_default() += 1;
        }
        assert_eq!(leaders.values().copied().collect::<BTreeSet<_>>(), BTreeSet::from([10]));
    }

    #[test]
    fn replicas_spread_over_racks() {
        let mut rng = StdRng::seed_from_u64(3);
        let b = brokers(&[
            (1, Some("a"), false),
            (2, Some("a"), false),
            (3, Some("b"), false),
            (4, Some("b"), false),
            (5, Some("c"), false),
            (6, Some("c"), false),
        ]);
        let rack_of = |id: i32| ((id - 1) / 2) as usize;
        for replicas in place(&mut rng, &b, 40, 3).unwrap() {
            let racks: BTreeSet<usize> = replicas.iter().map(|r| rack_of(*r)).collect();
            assert_eq!(racks.len(), 3, "{replicas:?}");
        }
    }

    #[test]
    fn same_seed_same_placement() {
        let b = brokers(&[(1, None, false), (2, None, false), (3, None, false), (4, None, false)]);
        let a = place(&mut StdRng::seed_from_u64(5), &b, 10, 2).unwrap();
        let c = place(&mut StdRng::seed_from_u64(5), &b, 10, 2).unwrap();
        assert_eq!(a, c);
    }
}
