//! `java.util.Random` (the 48-bit linear congruential generator of the JDK) and
//! `Collections.shuffle`, so that replica placement draws the same numbers as Kafka's
//! `StripedReplicaPlacer` for the same seed. Deterministic: seeded from the controller config.

/// A `java.util.Random`.
#[derive(Clone, Debug)]
pub struct JavaRandom {
    seed: u64,
}

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const ADDEND: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;

impl JavaRandom {
    /// `new Random(seed)`.
    pub fn new(seed: i64) -> Self {
        JavaRandom {
            seed: (seed as u64 ^ MULTIPLIER) & MASK,
        }
    }

    /// `next(bits)`.
    fn next(&mut self, bits: u32) -> i32 {
        self.seed = self.seed.wrapping_mul(MULTIPLIER).wrapping_add(ADDEND) & MASK;
        (self.seed >> (48 - bits)) as i64 as i32
    }

    /// `nextInt(bound)` for `bound > 0`.
    pub fn next_int(&mut self, bound: i32) -> i32 {
        assert!(bound > 0, "bound must be positive");
        let mut r = self.next(31);
        let m = bound - 1;
        if bound & m == 0 {
            return ((i64::from(bound) * i64::from(r)) >> 31) as i32;
        }
        let mut u = r;
        loop {
            r = u % bound;
            if u.wrapping_sub(r).wrapping_add(m) >= 0 {
                return r;
            }
            u = self.next(31);
        }
    }

    /// `Collections.shuffle(list, random)`: from the last position down, swap with a random
    /// earlier (or the same) position.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (2..=items.len()).rev() {
            let j = self.next_int(i as i32) as usize;
            items.swap(i - 1, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_java_util_random() {
        // Printed by Java 17: r = new Random(42); r.nextInt(10) x5, r.nextInt(16), r.nextInt(1000);
        // then Collections.shuffle([0..9], new Random(7)).
        let mut r = JavaRandom::new(42);
        let ints: Vec<i32> = (0..5).map(|_| r.next_int(10)).collect();
        assert_eq!(ints, JAVA_INTS_10);
        assert_eq!(r.next_int(16), JAVA_INT_16);
        assert_eq!(r.next_int(1000), JAVA_INT_1000);
        let mut list: Vec<i32> = (0..10).collect();
        JavaRandom::new(7).shuffle(&mut list);
        assert_eq!(list, JAVA_SHUFFLE);
    }

    const JAVA_INTS_10: [i32; 5] = [0, 3, 8, 4, 0];
    const JAVA_INT_16: i32 = 15;
    const JAVA_INT_1000: i32 = 505;
    const JAVA_SHUFFLE: [i32; 10] = [0, 1, 9, 3, 7, 4, 8, 5, 2, 6];
}
