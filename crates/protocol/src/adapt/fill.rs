//! Test-only random values for every field of the covered message structs (the `Fill` impls of
//! structs come from `versioned_fields!`). Values mix defaults (-1, 0, empty, nil, `i64::MAX`)
//! with arbitrary ones so that both "absent" and "present" paths of the codec run.

use bytes::Bytes;
use kafka_protocol::messages::{BrokerId, ProducerId, TopicName};
use kafka_protocol::protocol::StrBytes;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use uuid::Uuid;

/// Seeded generator handed through `Fill::fill`.
pub(crate) struct Gen {
    rng: StdRng,
}

impl Gen {
    pub(crate) fn new(seed: u64) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
        }
    }

    fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[self.rng.gen_range(0..choices.len())]
    }

    fn one_in(&mut self, n: u32) -> bool {
        self.rng.gen_range(0..n) == 0
    }
}

/// A random value of `Self`.
pub(crate) trait Fill: Sized {
    fn fill(g: &mut Gen) -> Self;
}

impl Fill for bool {
    fn fill(g: &mut Gen) -> Self {
        g.rng.gen()
    }
}

/// Quarters in [-1000, 1000): exact in binary and printed alike by Java's `Double.toString` and
/// Rust's `Debug` (both plain decimals in that range), so field comparisons stay textual.
impl Fill for f64 {
    fn fill(g: &mut Gen) -> Self {
        f64::from(g.rng.gen_range(-4000i32..4000)) / 4.0
    }
}

impl Fill for i8 {
    fn fill(g: &mut Gen) -> Self {
        if g.one_in(2) {
            g.pick(&[-1, 0, 1, 2, 3])
        } else {
            g.rng.gen()
        }
    }
}

impl Fill for i16 {
    fn fill(g: &mut Gen) -> Self {
        if g.one_in(2) {
            g.pick(&[-1, 0, 1, 41])
        } else {
            g.rng.gen()
        }
    }
}

impl Fill for u16 {
    fn fill(g: &mut Gen) -> Self {
        if g.one_in(3) {
            0
        } else {
            g.rng.gen()
        }
    }
}

impl Fill for i32 {
    fn fill(g: &mut Gen) -> Self {
        if g.one_in(2) {
            g.pick(&[-1, 0, 1, i32::MAX])
        } else {
            g.rng.gen()
        }
    }
}

impl Fill for i64 {
    fn fill(g: &mut Gen) -> Self {
        if g.one_in(2) {
            g.pick(&[-1, 0, 1, i64::MAX])
        } else {
            g.rng.gen()
        }
    }
}

impl Fill for BrokerId {
    fn fill(g: &mut Gen) -> Self {
        BrokerId(i32::fill(g))
    }
}

impl Fill for ProducerId {
    fn fill(g: &mut Gen) -> Self {
        ProducerId(i64::fill(g))
    }
}

impl Fill for Uuid {
    fn fill(g: &mut Gen) -> Self {
        match g.rng.gen_range(0..4) {
            0 => Uuid::nil(),
            1 => super::METADATA_TOPIC_ID,
            _ => Uuid::from_u128(g.rng.gen()),
        }
    }
}

impl Fill for StrBytes {
    fn fill(g: &mut Gen) -> Self {
        match g.rng.gen_range(0..4) {
            0 => StrBytes::from_static_str(""),
            1 => StrBytes::from_static_str(super::METADATA_TOPIC_NAME),
            _ => {
                let len = g.rng.gen_range(1..12);
                StrBytes::from_string(
                    (0..len)
                        .map(|_| g.rng.gen_range(b'a'..=b'z') as char)
                        .collect(),
                )
            }
        }
    }
}

impl Fill for TopicName {
    fn fill(g: &mut Gen) -> Self {
        TopicName(StrBytes::fill(g))
    }
}

impl Fill for Bytes {
    fn fill(g: &mut Gen) -> Self {
        let len = g.rng.gen_range(0..16);
        Bytes::from((0..len).map(|_| g.rng.gen()).collect::<Vec<u8>>())
    }
}

impl<T: Fill> Fill for Option<T> {
    fn fill(g: &mut Gen) -> Self {
        if g.one_in(4) {
            None
        } else {
            Some(T::fill(g))
        }
    }
}

impl<T: Fill> Fill for Vec<T> {
    fn fill(g: &mut Gen) -> Self {
        let len = g.rng.gen_range(0..3);
        (0..len).map(|_| T::fill(g)).collect()
    }
}
