//! The resets of [`super`]: every field the version lacks back to its default, for every api.
//! The per-struct work is implemented by the generated tables; the dispatch over the
//! `RequestKind` / `ResponseKind` variants is derived from the generated api list.

use kafka_protocol::messages::{RequestKind, ResponseKind};

/// Sets every field `version` lacks to its default, recursing into struct-typed fields.
pub(crate) trait ResetAbsent {
    /// Resets the fields absent at `version`.
    fn reset_absent(&mut self, version: i16);
}

macro_rules! reset_every_api {
    ($($name:ident: $stem:ident),* $(,)?) => {
        /// Resets what `version` lacks in a request body (variants newer than the list: nothing).
        pub(super) fn request(request: &mut RequestKind, version: i16) {
            match request {
                $(RequestKind::$name(r) => r.reset_absent(version),)*
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }

        /// Resets what `version` lacks in a response body (variants newer than the list: nothing).
        pub(super) fn response(response: &mut ResponseKind, version: i16) {
            match response {
                $(ResponseKind::$name(r) => r.reset_absent(version),)*
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
    };
}

super::generated::every_api!(reset_every_api);
