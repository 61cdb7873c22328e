//! Iteration order of a `java.util.HashSet<Integer>`, so that lists Kafka builds by streaming
//! a hash set (the ELR and last-known-ELR lists of `PartitionChangeBuilder`) come out in the
//! same order here and records match Java's byte for byte.
//!
//! A Java `HashMap` keeps `capacity` buckets (a power of two); an `Integer` key `h` lands in
//! bucket `(h ^ (h >>> 16)) & (capacity - 1)`; iteration walks the buckets in index order and
//! each bucket in insertion order. Resizing doubles the capacity and splits every bucket while
//! keeping relative order, so the final order is "by bucket at the final capacity, then by
//! insertion". Buckets are turned into trees only past 8 colliding keys in a table of at least
//! 64 buckets, which a partition's replica set never reaches; [`JavaIntHashSet::iter`] asserts
//! that.

/// A model of `java.util.HashSet<Integer>` that only tracks membership and iteration order.
#[derive(Clone, Debug)]
pub struct JavaIntHashSet {
    capacity: usize,
    /// Members in insertion order.
    members: Vec<i32>,
}

const DEFAULT_CAPACITY: usize = 16;

impl JavaIntHashSet {
    /// `new HashSet<>()`: capacity 16 once the first element arrives.
    pub fn new() -> Self {
        JavaIntHashSet {
            capacity: DEFAULT_CAPACITY,
            members: Vec::new(),
        }
    }

    /// `new HashSet<>(collection)`: sized for the collection (`max(n / .75 + 1, 16)` rounded up
    /// to a power of two), then every element added in order.
    pub fn from_collection(items: &[i32]) -> Self {
        let wanted = ((items.len() as f32 / 0.75) as usize + 1).max(DEFAULT_CAPACITY);
        let mut set = JavaIntHashSet {
            capacity: wanted.next_power_of_two(),
            members: Vec::new(),
        };
        for &item in items {
            set.add(item);
        }
        set
    }

    /// `add`: appends `item` unless present; doubles the capacity once the size passes 3/4 of it.
    pub fn add(&mut self, item: i32) {
        if self.members.contains(&item) {
            return;
        }
        self.members.push(item);
        if self.members.len() > self.capacity / 4 * 3 {
            self.capacity *= 2;
        }
    }

    /// `contains`.
    pub fn contains(&self, item: i32) -> bool {
        self.members.contains(&item)
    }

    /// Members in Java's iteration order.
    pub fn iter(&self) -> impl Iterator<Item = i32> + '_ {
        let mut order: Vec<(usize, usize, i32)> = self
            .members
            .iter()
            .enumerate()
            .map(|(position, &member)| (self.bucket(member), position, member))
            .collect();
        order.sort_unstable();
        // A Java bin becomes a red-black tree (with a different order) only past 8 entries.
        assert!(
            order.windows(8).all(|w| w[0].0 != w[7].0) || self.capacity < 64,
            "too many colliding broker ids to model java.util.HashSet order"
        );
        order.into_iter().map(|(_, _, member)| member)
    }

    fn bucket(&self, key: i32) -> usize {
        let h = key as u32;
        ((h ^ (h >> 16)) as usize) & (self.capacity - 1)
    }
}

impl Default for JavaIntHashSet {
    fn default() -> Self {
        Self::new()
    }
}

/// `String.hashCode`: `s[0]*31^(n-1) + … + s[n-1]` over UTF-16 code units, wrapping.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The iteration order of a `new HashMap<String, _>()` after putting `keys` in order: the
/// distinct keys (first occurrence kept), ordered as Java iterates them.
pub fn java_string_map_order<'a>(keys: &[&'a str]) -> Vec<&'a str> {
    let mut distinct: Vec<&str> = Vec::new();
    let mut seen = std::collections::HashSet::with_capacity(keys.len());
    let mut capacity = DEFAULT_CAPACITY;
    for key in keys {
        if seen.insert(*key) {
            distinct.push(key);
            if distinct.len() > capacity / 4 * 3 {
                capacity *= 2;
            }
        }
    }
    let bucket = |key: &str| {
        let h = java_string_hash(key) as u32;
        ((h ^ (h >> 16)) as usize) & (capacity - 1)
    };
    let mut order: Vec<(usize, usize, &str)> = distinct
        .iter()
        .enumerate()
        .map(|(i, k)| (bucket(k), i, *k))
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, _, k)| k).collect()
}

/// The iteration order of a `new HashMap<>()` into which keys with the given `hashCode()`s
/// were put in order (keys distinct): the indices of the keys, in Java's order.
pub fn java_hash_map_order(hashes: &[i32]) -> Vec<usize> {
    let mut capacity = DEFAULT_CAPACITY;
    for size in 1..=hashes.len() {
        if size > capacity / 4 * 3 {
            capacity *= 2;
        }
    }
    let mut order: Vec<(usize, usize)> = hashes
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let h = *h as u32;
            (((h ^ (h >> 16)) as usize) & (capacity - 1), i)
        })
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Printed by Java 17: "retention.ms".hashCode(), "cleanup.policy".hashCode(), and the
    // keySet() order of a HashMap after putting STRING_KEYS in order.
    const RETENTION_MS_HASH: i32 = -1339220362;
    const CLEANUP_POLICY_HASH: i32 = -537988164;
    const STRING_KEYS: [&str; 15] = [
        "retention.ms",
        "cleanup.policy",
        "min.insync.replicas",
        "segment.bytes",
        "max.message.bytes",
        "compression.type",
        "unclean.leader.election.enable",
        "segment.ms",
        "retention.bytes",
        "flush.ms",
        "index.interval.bytes",
        "preallocate",
        "message.timestamp.type",
        "delete.retention.ms",
        "éx",
    ];
    const STRING_KEYS_JAVA_ORDER: [&str; 15] = [
        "compression.type",
        "max.message.bytes",
        "message.timestamp.type",
        "min.insync.replicas",
        "preallocate",
        "index.interval.bytes",
        "unclean.leader.election.enable",
        "retention.bytes",
        "delete.retention.ms",
        "éx",
        "cleanup.policy",
        "flush.ms",
        "retention.ms",
        "segment.bytes",
        "segment.ms",
    ];

    #[test]
    fn string_hash_matches_java() {
        // "retention.ms".hashCode() and "cleanup.policy".hashCode() printed by Java.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("retention.ms"), RETENTION_MS_HASH);
        assert_eq!(java_string_hash("cleanup.policy"), CLEANUP_POLICY_HASH);
        assert_eq!(java_string_hash("éx"), 7343);
    }

    #[test]
    fn string_map_order_matches_java() {
        assert_eq!(
            java_string_map_order(&STRING_KEYS),
            STRING_KEYS_JAVA_ORDER.to_vec()
        );
    }

    #[test]
    fn small_ids_iterate_in_ascending_order() {
        let set = JavaIntHashSet::from_collection(&[5, 1, 3]);
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![1, 3, 5]);
    }

    #[test]
    fn colliding_ids_keep_insertion_order_within_a_bucket() {
        // 17 and 1 share bucket 1 of 16 and 17 was inserted first; Java prints [17, 1, 2].
        let mut set = JavaIntHashSet::from_collection(&[17]);
        set.add(2);
        set.add(1);
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![17, 1, 2]);
    }

    #[test]
    fn large_ids_use_the_spread_hash() {
        // 65536 ^ (65536 >>> 16) = 65537 → bucket 1; 3 → bucket 3; 100 → bucket 4.
        let set = JavaIntHashSet::from_collection(&[100, 3, 65536]);
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![65536, 3, 100]);
    }

    #[test]
    fn resize_changes_buckets() {
        // 13 members in a 16-bucket table force a resize to 32: 16 then sorts after 15.
        let items: Vec<i32> = (4..=16).collect();
        let set = JavaIntHashSet::from_collection(&[]);
        let mut set = set;
        for i in &items {
            set.add(*i);
        }
        let order: Vec<i32> = set.iter().collect();
        assert_eq!(order, items);
        // With 12 members the table stays at 16 and 16 wraps to bucket 0.
        let mut small = JavaIntHashSet::new();
        for i in 5..=16 {
            small.add(i);
        }
        assert_eq!(small.iter().next(), Some(16));
    }
}
