//! The APIs a controller node serves and the versions it advertises in ApiVersions: the Raft
//! RPCs (`kraftwerk_raft::RAFT_APIS`), the controller APIs (`kraftwerk_controller::CONTROLLER_APIS`),
//! and the ones the listener answers itself (ApiVersions, Envelope, SaslHandshake, SaslAuthenticate). The server's listener and
//! peer client use this table, and the simulation decodes every message against it.
//!
//! Only APIs with a handler, and only versions whose semantics are implemented, are listed
//! (Kafka `ApiVersionManager.enabledApis` lists what a controller listener has handlers for): e.g. Vote v2 is advertised because
//! pre-vote (KIP-996) is implemented; Java 4.x peers then pre-vote with us as with each other.

use kafka_protocol::messages::ApiKey;
use kraftwerk_controller::CONTROLLER_APIS;
use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_raft::RAFT_APIS;

/// The APIs the listener answers itself: ApiVersions (KIP-511; v5 with KIP-1242's cluster and
/// node check), Envelope (KIP-590), and SaslHandshake / SaslAuthenticate (KIP-43, KIP-152,
/// KIP-368; advertised on every listener as Java's controller does, answered
/// ILLEGAL_SASL_STATE where no authentication is under way).
pub const LISTENER_APIS: &[(ApiKey, i16, i16)] = &[
    (ApiKey::SaslHandshake, 0, 1),
    (ApiKey::ApiVersions, 0, 5),
    (ApiKey::SaslAuthenticate, 0, 2),
    (ApiKey::Envelope, 0, 0),
];

/// Every `(api, min version, max version)` served on the controller listener.
pub fn served_apis() -> impl Iterator<Item = (ApiKey, i16, i16)> {
    LISTENER_APIS
        .iter()
        .chain(RAFT_APIS)
        .chain(CONTROLLER_APIS)
        .copied()
}

/// The table advertised by the listener and used by the peer client.
pub fn served_api_table() -> ApiTable {
    ApiTable::new(served_apis()).expect("the served API table is valid")
}
