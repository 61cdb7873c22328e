//! The api table of the controller listener, as the server advertises it
//! (`kraftwerk_node::served_apis`: the listener's own apis, the Raft RPCs and the controller
//! apis), built once per process.

use std::sync::OnceLock;

use kraftwerk_protocol::ApiTable;

/// The served table, built once per process (it never changes, so AFL's stability is kept).
pub fn served_table() -> &'static ApiTable {
    static TABLE: OnceLock<ApiTable> = OnceLock::new();
    TABLE.get_or_init(kraftwerk_node::served_apis::served_api_table)
}
