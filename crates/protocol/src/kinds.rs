//! Which api a `RequestKind` / `ResponseKind` value belongs to. `kafka-protocol` names the enum
//! variants after `ApiKey`'s variants, so one list maps all three: the generated api list of
//! `adapt` (`every_api!`).

use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};

macro_rules! api_kinds {
    ($($name:ident: $stem:ident),* $(,)?) => {
        /// The api of a request body; `None` only for variants added after kafka-protocol 0.18.
        pub fn request_api_key(request: &RequestKind) -> Option<ApiKey> {
            match request {
                $(RequestKind::$name(_) => Some(ApiKey::$name),)*
                #[allow(unreachable_patterns)]
                _ => None,
            }
        }

        /// The api of a response body; `None` only for variants added after kafka-protocol 0.18.
        pub fn response_api_key(response: &ResponseKind) -> Option<ApiKey> {
            match response {
                $(ResponseKind::$name(_) => Some(ApiKey::$name),)*
                #[allow(unreachable_patterns)]
                _ => None,
            }
        }
    };
}

crate::adapt::generated::every_api!(api_kinds);

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{FetchResponse, VoteRequest};

    #[test]
    fn maps_variants_to_their_api() {
        assert_eq!(
            request_api_key(&RequestKind::Vote(VoteRequest::default())),
            Some(ApiKey::Vote)
        );
        assert_eq!(
            response_api_key(&ResponseKind::Fetch(FetchResponse::default())),
            Some(ApiKey::Fetch)
        );
    }
}
