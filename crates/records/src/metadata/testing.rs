//! Random metadata records for property tests: every field gets a random value when the
//! version has it (sometimes null when the version allows null, sometimes the default when
//! tagged) and its default otherwise, so every generated record is encodable at that version.

use std::collections::BTreeMap;

use bytes::Bytes;
use uuid::Uuid;

use super::wire::FieldSpec;

/// SplitMix64: small, seedable, good enough to spread test inputs.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

/// A random non-null value valid at `version`.
pub(crate) trait RandomValue {
    fn random(rng: &mut Rng, version: i16) -> Self;
}

macro_rules! random_int {
    ($($ty:ty),*) => {$(
        impl RandomValue for $ty {
            fn random(rng: &mut Rng, _version: i16) -> Self {
                // Favour small values and the boundaries, where encodings differ.
                match rng.below(4) {
                    0 => rng.below(4) as $ty,
                    1 => <$ty>::MAX,
                    2 => <$ty>::MIN,
                    _ => rng.next_u64() as $ty,
                }
            }
        }
    )*};
}
random_int!(i8, i16, u16, i32, i64);

impl RandomValue for f64 {
    fn random(rng: &mut Rng, _version: i16) -> Self {
        let v = f64::from_bits(rng.next_u64());
        // NaN != NaN would break equality checks; its bytes round-trip anyway.
        if v.is_nan() {
            1.5
        } else {
            v
        }
    }
}

impl RandomValue for bool {
    fn random(rng: &mut Rng, _version: i16) -> Self {
        rng.one_in(2)
    }
}

impl RandomValue for Uuid {
    fn random(rng: &mut Rng, _version: i16) -> Self {
        if rng.one_in(4) {
            Uuid::nil()
        } else {
            Uuid::from_u64_pair(rng.next_u64(), rng.next_u64())
        }
    }
}

impl RandomValue for String {
    fn random(rng: &mut Rng, _version: i16) -> Self {
        const CHARS: &[char] = &['a', 'Z', '0', '.', '-', '_', 'é', '✓', '𝄞'];
        let len = rng.below(12);
        (0..len)
            .map(|_| CHARS[rng.below(CHARS.len() as u64) as usize])
            .collect()
    }
}

impl RandomValue for Bytes {
    fn random(rng: &mut Rng, _version: i16) -> Self {
        let len = rng.below(10);
        (0..len)
            .map(|_| rng.next_u64() as u8)
            .collect::<Vec<u8>>()
            .into()
    }
}

impl<T: RandomValue> RandomValue for Vec<T> {
    fn random(rng: &mut Rng, version: i16) -> Self {
        let len = rng.below(4);
        (0..len).map(|_| T::random(rng, version)).collect()
    }
}

/// A random value for a struct field, given whether null is allowed.
pub(crate) trait RandomField: Sized {
    fn random_field(rng: &mut Rng, version: i16, nullable: bool) -> Self;
}

macro_rules! random_plain_field {
    ($($ty:ty),*) => {$(
        impl RandomField for $ty {
            fn random_field(rng: &mut Rng, version: i16, _nullable: bool) -> Self {
                <$ty as RandomValue>::random(rng, version)
            }
        }
    )*};
}
random_plain_field!(i8, i16, u16, i32, i64, f64, bool, Uuid, String, Bytes);

impl<T: RandomValue> RandomField for Vec<T> {
    fn random_field(rng: &mut Rng, version: i16, _nullable: bool) -> Self {
        <Vec<T> as RandomValue>::random(rng, version)
    }
}

impl<T: RandomValue> RandomField for Option<T> {
    fn random_field(rng: &mut Rng, version: i16, nullable: bool) -> Self {
        if nullable && rng.one_in(3) {
            None
        } else {
            Some(T::random(rng, version))
        }
    }
}

/// A field value valid at `version`: the default when the field is absent, else random
/// (tagged fields keep their default a third of the time, to exercise "not written").
pub(crate) fn random_field<T: RandomField>(
    rng: &mut Rng,
    spec: &FieldSpec,
    version: i16,
    default: T,
) -> T {
    if version < spec.min_version {
        return default;
    }
    if spec.tagged.is_some_and(|(min, _)| version >= min) && rng.one_in(3) {
        return default;
    }
    let nullable = spec.nullable_min.is_some_and(|min| version >= min);
    T::random_field(rng, version, nullable)
}

/// Unknown tagged fields, using tags far above any known one.
pub(crate) fn random_unknown_tags(rng: &mut Rng) -> BTreeMap<i32, Bytes> {
    let mut tags = BTreeMap::new();
    if rng.one_in(4) {
        for _ in 0..1 + rng.below(2) {
            tags.insert(50 + rng.below(10) as i32, Bytes::random(rng, 0));
        }
    }
    tags
}
