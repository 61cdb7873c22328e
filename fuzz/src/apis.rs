//! The api table of the controller listener, built without the server crate: the listener's
//! own apis, the Raft RPCs and the controller apis (as `kraftwerk_server::api::served_apis`;
//! a test checks that the two agree).

use std::sync::OnceLock;

use kafka_protocol::messages::ApiKey;
use kraftwerk_controller::CONTROLLER_APIS;
use kraftwerk_protocol::ApiTable;
use kraftwerk_raft::RAFT_APIS;

/// ApiVersions (KIP-511) and Envelope (KIP-590), answered by the listener itself.
pub const LISTENER_APIS: &[(ApiKey, i16, i16)] =
    &[(ApiKey::ApiVersions, 0, 5), (ApiKey::Envelope, 0, 0)];

/// Every `(api, min version, max version)` the controller listener serves.
pub fn served_apis() -> impl Iterator<Item = (ApiKey, i16, i16)> {
    LISTENER_APIS
        .iter()
        .chain(RAFT_APIS)
        .chain(CONTROLLER_APIS)
        .copied()
}

/// The served table, built once per process (it never changes, so AFL's stability is kept).
pub fn served_table() -> &'static ApiTable {
    static TABLE: OnceLock<ApiTable> = OnceLock::new();
    TABLE.get_or_init(|| ApiTable::new(served_apis()).expect("the served api table is valid"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_table_as_the_server() {
        assert_eq!(served_table(), &kraftwerk_server::api::served_api_table());
    }
}
