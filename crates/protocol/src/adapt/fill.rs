//! Random values for every field of every message struct, for tests (this crate's, and other
//! crates' through the `testing` feature). The `Fill` impls of message structs come from their
//! generated field tables (`versioned_fields!`); this module has those of the field types and
//! [`random_request`] / [`random_response`] for any api. Values mix defaults (-1, 0, empty, nil,
//! `i64::MAX`) with arbitrary ones so that both "absent" and "present" paths of the codec run.
//! Unknown tagged fields stay empty (the codec drops them below the flexible versions); set them
//! through [`request_unknown_tags`] / [`response_unknown_tags`].

use std::collections::BTreeMap;

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiKey, BrokerId, GroupId, ProducerId, RequestKind, ResponseKind, TopicName, TransactionalId,
};
use kafka_protocol::protocol::StrBytes;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use uuid::Uuid;

/// Seeded generator handed through `Fill::fill`.
pub struct Gen {
    rng: StdRng,
}

impl Gen {
    /// A generator whose values depend only on `seed`.
    pub fn new(seed: u64) -> Self {
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
pub trait Fill: Sized {
    /// The next random value drawn from `g`.
    fn fill(g: &mut Gen) -> Self;
}

/// The unknown tagged fields of a message struct, if it has them (structs of never-flexible
/// messages do not). Implemented by the generated tables.
pub trait UnknownTags {
    /// The `unknown_tagged_fields` map.
    fn unknown_tags_mut(&mut self) -> Option<&mut BTreeMap<i32, Bytes>>;
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

impl Fill for GroupId {
    fn fill(g: &mut Gen) -> Self {
        GroupId(StrBytes::fill(g))
    }
}

impl Fill for TransactionalId {
    fn fill(g: &mut Gen) -> Self {
        TransactionalId(StrBytes::fill(g))
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

macro_rules! every_body {
    ($($name:ident: $stem:ident),* $(,)?) => {
        /// A random request body of `api`; `None` for an api newer than kafka-protocol 0.18.
        pub fn random_request(api: ApiKey, g: &mut Gen) -> Option<RequestKind> {
            match api {
                $(ApiKey::$name => Some(RequestKind::$name(Fill::fill(g))),)*
                #[allow(unreachable_patterns)]
                _ => None,
            }
        }

        /// A random response body of `api`; `None` for an api newer than kafka-protocol 0.18.
        pub fn random_response(api: ApiKey, g: &mut Gen) -> Option<ResponseKind> {
            match api {
                $(ApiKey::$name => Some(ResponseKind::$name(Fill::fill(g))),)*
                #[allow(unreachable_patterns)]
                _ => None,
            }
        }

        /// The unknown tagged fields of a request body; `None` for never-flexible apis.
        pub fn request_unknown_tags(
            request: &mut RequestKind,
        ) -> Option<&mut BTreeMap<i32, Bytes>> {
            match request {
                $(RequestKind::$name(r) => r.unknown_tags_mut(),)*
                #[allow(unreachable_patterns)]
                _ => None,
            }
        }

        /// The unknown tagged fields of a response body; `None` for never-flexible apis.
        pub fn response_unknown_tags(
            response: &mut ResponseKind,
        ) -> Option<&mut BTreeMap<i32, Bytes>> {
            match response {
                $(ResponseKind::$name(r) => r.unknown_tags_mut(),)*
                #[allow(unreachable_patterns)]
                _ => None,
            }
        }
    };
}

super::generated::every_api!(every_body);
