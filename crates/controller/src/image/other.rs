//! Records the controller keeps faithfully but does not act on yet: ACLs, client quotas, SCRAM
//! credentials, delegation tokens and the ZK migration state. They are stored so that the image
//! can be written back out as the same records (snapshots), as Kafka's `AclsImage`,
//! `ClientQuotasImage`, `ScramImage` and `DelegationTokenImage` do.

use imbl::OrdMap;
use kraftwerk_records::metadata::{
    AccessControlEntryRecord, ClientQuotaRecord, DelegationTokenRecord, UserScramCredentialRecord,
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

impl OtherRecordsImage {
    /// AccessControlEntryRecord: adds (or replaces) the ACL with its id.
    pub fn put_acl(&mut self, record: &AccessControlEntryRecord) {
        self.acls.insert(record.id, record.clone());
    }

    /// RemoveAccessControlEntryRecord.
    pub fn remove_acl(&mut self, id: &Uuid) {
        self.acls.remove(id);
    }

    /// ClientQuotaRecord: sets or removes one key of the entity's quotas; an entity left with
    /// no quota is dropped, as `ClientQuotasDelta` does.
    pub fn replay_client_quota(&mut self, record: &ClientQuotaRecord) {
        let mut entity: QuotaEntity = record
            .entity
            .iter()
            .map(|e| (e.entity_type.clone(), e.entity_name.clone()))
            .collect();
        entity.sort();
        let quotas = self.client_quotas.entry(entity.clone()).or_default();
        if record.remove {
            quotas.remove(&record.key);
        } else {
            quotas.insert(record.key.clone(), record.value);
        }
        if quotas.is_empty() {
            self.client_quotas.remove(&entity);
        }
    }

    /// UserScramCredentialRecord: sets the credential of (user, mechanism).
    pub fn put_scram_credential(&mut self, record: &UserScramCredentialRecord) {
        self.scram_credentials
            .insert((record.name.clone(), record.mechanism), record.clone());
    }

    /// RemoveUserScramCredentialRecord.
    pub fn remove_scram_credential(&mut self, name: &str, mechanism: i8) {
        self.scram_credentials.remove(&(name.to_owned(), mechanism));
    }

    /// DelegationTokenRecord: creates or renews the token.
    pub fn put_delegation_token(&mut self, record: &DelegationTokenRecord) {
        self.delegation_tokens
            .insert(record.token_id.clone(), record.clone());
    }

    /// RemoveDelegationTokenRecord.
    pub fn remove_delegation_token(&mut self, token_id: &str) {
        self.delegation_tokens.remove(token_id);
    }
}
