//! Replica placement for new partitions (Kafka 4.1.2's `StripedReplicaPlacer`, KIP-660).
//!
//! Brokers are grouped by rack. Each partition takes its first replica from the next rack that
//! has an unfenced broker, then one broker per rack in turn (unfenced before fenced), so
//! replicas spread over racks and leadership spreads over brokers. After as many partitions as
//! there are unfenced brokers, racks and brokers are shuffled so the same assignments do not
//! repeat. Brokers in controlled shutdown are never placed. Random draws come from a
//! [`JavaRandom`] and racks are visited in `java.util.HashMap` order, so for the same seed and
//! broker order the result equals Java's (checked against Kafka's own placer in the tests).

use crate::java_order::{java_hash_map_order, java_string_hash};
use crate::java_random::JavaRandom;

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
    fn initialize(&mut self, rng: &mut JavaRandom) {
        if !self.brokers.is_empty() {
            self.brokers.sort_unstable();
            self.offset = rng.next_int(self.brokers.len() as i32) as usize;
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
    name: Option<String>,
    fenced: BrokerList,
    unfenced: BrokerList,
}

impl Rack {
    fn next(&mut self, epoch: u64) -> Option<i32> {
        self.unfenced
            .next(epoch)
            .or_else(|| self.fenced.next(epoch))
    }
}

struct RackList<'r> {
    rng: &'r mut JavaRandom,
    /// Racks in first-appearance order.
    racks: Vec<Rack>,
    /// Indices into `racks` in `HashMap<Optional<String>, Rack>` iteration order.
    hash_order: Vec<usize>,
    /// Indices into `racks`, sorted by name (no rack first: `OptionalStringComparator`), then
    /// shuffled.
    rack_names: Vec<usize>,
    num_total: usize,
    num_unfenced: usize,
    epoch: u64,
    offset: usize,
}

impl<'r> RackList<'r> {
    fn new(rng: &'r mut JavaRandom, brokers: &[UsableBroker]) -> Self {
        let mut racks: Vec<Rack> = Vec::new();
        let mut num_unfenced = 0;
        for broker in brokers {
            let index = match racks.iter().position(|r| r.name == broker.rack) {
                Some(index) => index,
                None => {
                    racks.push(Rack {
                        name: broker.rack.clone(),
                        ..Rack::default()
                    });
                    racks.len() - 1
                }
            };
            if broker.fenced {
                racks[index].fenced.brokers.push(broker.id);
            } else {
                num_unfenced += 1;
                racks[index].unfenced.brokers.push(broker.id);
            }
        }
        // Optional.hashCode(): the value's hash, 0 when empty.
        let hashes: Vec<i32> = racks
            .iter()
            .map(|r| r.name.as_deref().map_or(0, java_string_hash))
            .collect();
        let hash_order = java_hash_map_order(&hashes);
        for &i in &hash_order {
            racks[i].fenced.initialize(rng);
            racks[i].unfenced.initialize(rng);
        }
        let mut rack_names: Vec<usize> = (0..racks.len()).collect();
        rack_names.sort_by(|a, b| racks[*a].name.cmp(&racks[*b].name));
        let offset = if rack_names.is_empty() {
            0
        } else {
            rng.next_int(rack_names.len() as i32) as usize
        };
        RackList {
            rng,
            racks,
            hash_order,
            rack_names,
            num_total: brokers.len(),
            num_unfenced,
            epoch: 0,
            offset,
        }
    }

    fn shuffle(&mut self) {
        self.rng.shuffle(&mut self.rack_names);
        for &i in &self.hash_order {
            self.rng.shuffle(&mut self.racks[i].fenced.brokers);
            self.rng.shuffle(&mut self.racks[i].unfenced.brokers);
        }
    }

    fn rack(&mut self, position: usize) -> &mut Rack {
        let index = self.rack_names[position];
        &mut self.racks[index]
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

/// Places `num_partitions` partitions of `replication_factor` replicas on `brokers` (in the
/// order the cluster lists them).
///
/// # Errors
/// Kafka's `InvalidReplicationFactorException` messages: "Invalid replication factor N: the
/// replication factor must be positive.", "All brokers are currently fenced.", "The target
/// replication factor of N cannot be reached because only M broker(s) are registered.".
pub fn place(
    rng: &mut JavaRandom,
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
    Ok((0..num_partitions)
        .map(|_| racks.place(replication_factor as usize))
        .collect())
}

#[cfg(test)]
mod tests;
