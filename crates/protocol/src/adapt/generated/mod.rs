//! The files written by [`super::generator`] from kafka-protocol's message sources, and the
//! macro their field tables expand through.
//!
//! - `fields.rs`: one `versioned_fields!` table per struct of every request and response.
//! - `apis.rs`: [`every_api!`], the list of apis every per-api dispatch is derived from.
//!
//! A table reads
//! `versioned_fields!(module::Struct { field: versions [=> kind], .. } [+ unknown_tagged_fields]);`
//! for `kafka_protocol::messages::module::Struct`: every field (`unknown_tagged_fields` excepted)
//! with the inclusive range of versions that carry it, [`NEVER`] when none does. `kind` marks a
//! field holding structs of the same message, whose own fields are reset recursively: `nested`
//! (the struct), `each` (`Vec`), `each_opt` (`Option<Vec>`), `opt` (`Option`).
//! `+ unknown_tagged_fields` says the struct has that map.

use std::ops::RangeInclusive;

/// The versions of a field the schema declares for none (`"versions": "none"`): an empty range.
const NEVER: RangeInclusive<i16> = RangeInclusive::new(1, 0);

/// Implements [`super::reset::ResetAbsent`] and, in tests or with the `testing` feature,
/// `fill::Fill` and `fill::UnknownTags` for one message struct from its field version table.
macro_rules! versioned_fields {
    ($module:ident :: $name:ident {
        $( $field:ident : $versions:expr $(=> $kind:ident)? ),* $(,)?
    } $(+ $tags:ident)?) => {
        impl $crate::adapt::reset::ResetAbsent for $module::$name {
            #[allow(unused_variables)]
            fn reset_absent(&mut self, version: i16) {
                let defaults = <Self as Default>::default();
                $(
                    if !($versions).contains(&version) {
                        self.$field = defaults.$field;
                    }
                    $( versioned_fields!(@recurse $kind, self.$field, version); )?
                )*
            }
        }

        #[cfg(any(test, feature = "testing"))]
        impl $crate::adapt::fill::Fill for $module::$name {
            fn fill(g: &mut $crate::adapt::fill::Gen) -> Self {
                #[allow(unused_mut)]
                let mut value = <Self as Default>::default();
                $( value.$field = $crate::adapt::fill::Fill::fill(g); )*
                value
            }
        }

        #[cfg(any(test, feature = "testing"))]
        impl $crate::adapt::fill::UnknownTags for $module::$name {
            fn unknown_tags_mut(
                &mut self,
            ) -> Option<&mut ::std::collections::BTreeMap<i32, ::bytes::Bytes>> {
                versioned_fields!(@tags self $(, $tags)?)
            }
        }
    };
    (@recurse nested, $e:expr, $v:ident) => {
        $crate::adapt::reset::ResetAbsent::reset_absent(&mut $e, $v)
    };
    (@recurse each, $e:expr, $v:ident) => {
        for item in $e.iter_mut() {
            $crate::adapt::reset::ResetAbsent::reset_absent(item, $v)
        }
    };
    (@recurse each_opt, $e:expr, $v:ident) => {
        if let Some(items) = $e.as_mut() {
            for item in items.iter_mut() {
                $crate::adapt::reset::ResetAbsent::reset_absent(item, $v)
            }
        }
    };
    (@recurse opt, $e:expr, $v:ident) => {
        if let Some(item) = $e.as_mut() {
            $crate::adapt::reset::ResetAbsent::reset_absent(item, $v)
        }
    };
    (@tags $value:expr) => {
        None
    };
    (@tags $value:expr, $tags:ident) => {
        Some(&mut $value.$tags)
    };
}

// Generated text stays as the generator wrote it, so the staleness test compares like with like.
#[rustfmt::skip]
mod apis;
#[rustfmt::skip]
mod fields;

pub(crate) use apis::every_api;
