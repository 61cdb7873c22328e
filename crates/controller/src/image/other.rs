//! Records the controller keeps faithfully but does not act on yet: ACLs, client quotas, SCRAM
//! credentials, delegation tokens and the ZK migration state. They are stored so that the image
//! can be written back out as the same records (snapshots), as Kafka's `AclsImage`,
//! `ClientQuotasImage`, `ScramImage` and `DelegationTokenImage` do.

use imbl::OrdMap;
use kraftwerk_records::metadata::{
    AccessControlEntryRecord, DelegationTokenRecord, UserScramCredentialRecord,
};
use uuid::Uuid;

/// A client-quota entity: (entity type, entity name or `None` for the default entity) pairs,
/// sorted by type.
pub type QuotaEntity = Vec<(String, Option<String>)>;

/// ACLs, quotas, SCRAM credentials, delegation tokens and ZK migration state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OtherRecordsImage {
    /// ACL id → ACL (AccessControlEntryRecord; RemoveAccessControlEntryRecord deletes).
    pub acls: OrdMap<Uuid, AccessControlEntryRecord>,
    /// Quota entity → quota key → value (ClientQuotaRecord; `Remove` deletes the key).
    pub client_quotas: OrdMap<QuotaEntity, OrdMap<String, f64>>,
    /// (user name, mechanism) → credential.
    pub scram_credentials: OrdMap<(String, i8), UserScramCredentialRecord>,
    /// Token id → token.
    pub delegation_tokens: OrdMap<String, DelegationTokenRecord>,
    /// ZK migration state, if a ZkMigrationStateRecord was replayed (Kafka 3.x only).
    pub zk_migration_state: Option<i8>,
}
