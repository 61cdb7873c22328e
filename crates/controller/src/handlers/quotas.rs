//! AlterClientQuotas (Kafka 4.1.2's `ClientQuotaControlManager.alterClientQuotas` and
//! `AlterClientQuotasRequest.entries`): client quotas for users, client ids, their combinations
//! and IP addresses, written as ClientQuotaRecords that brokers replay into their quota managers.

use crate::api::{message_text, ControllerApi};
use crate::validate::StringCheck;
use kafka_protocol::messages::alter_client_quotas_response as response;
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::alter_client_quotas_response::{EntityData, EntryData};
use kafka_protocol::messages::{AlterClientQuotasRequest, AlterClientQuotasResponse};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{self as records, ApiMessageAndVersion, ClientQuotaRecord};

use crate::controller::ControllerResult;
use crate::error::ApiError;
use crate::image::other::QuotaEntity;
use crate::image::MetadataImage;
use crate::java_order::java_string_hash;
use crate::validate::limits;

/// `ClientQuotaEntity.USER`.
pub const USER: &str = "user";
/// `ClientQuotaEntity.CLIENT_ID`.
pub const CLIENT_ID: &str = "client-id";
/// `ClientQuotaEntity.IP`.
pub const IP: &str = "ip";

/// The value type of a quota key (`ConfigDef.Type` of `QuotaConfig`'s keys).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum QuotaType {
    Long,
    Double,
    Int,
}

/// `QuotaConfig.userAndClientQuotaConfigs()` (4.1.2).
const USER_AND_CLIENT_KEYS: [(&str, QuotaType); 4] = [
    ("producer_byte_rate", QuotaType::Long),
    ("consumer_byte_rate", QuotaType::Long),
    ("request_percentage", QuotaType::Double),
    ("controller_mutation_rate", QuotaType::Double),
];

/// `QuotaConfig.ipConfigs()` (4.1.2).
const IP_KEYS: [(&str, QuotaType); 1] = [("connection_creation_rate", QuotaType::Int)];

/// The order in which a `java.util.HashMap` created with `new HashMap<>(expected)` iterates
/// `keys` (distinct, put in this order): by bucket at the capacity the map has grown to, then
/// by insertion.
fn java_sized_map_order<'a>(keys: &[&'a str], expected: usize) -> Vec<&'a str> {
    // HashMap(n): the first table has tableSizeFor(n) buckets; it doubles once more entries
    // than 3/4 of the buckets are in it.
    let mut capacity = expected.max(1).next_power_of_two();
    for size in 1..=keys.len() {
        while size > capacity * 3 / 4 {
            capacity *= 2;
        }
    }
    let mut order: Vec<(usize, usize, &str)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let h = java_string_hash(k) as u32;
            (((h ^ (h >> 16)) as usize) & (capacity - 1), i, *k)
        })
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, _, k)| k).collect()
}

/// A request entity: (type, name) pairs as Java's entity map holds them (a later duplicate
/// type replaces an earlier one), in that map's iteration order.
#[derive(Clone, Debug, PartialEq)]
struct Entity(Vec<(String, Option<String>)>);

impl Entity {
    fn from_request(
        data: &[kafka_protocol::messages::alter_client_quotas_request::EntityData],
    ) -> Self {
        // type → (first position, last name): a later duplicate type replaces the name.
        let mut pairs: BTreeMap<&str, (usize, Option<&str>)> = BTreeMap::new();
        for (i, d) in data.iter().enumerate() {
            let name = d.entity_name.as_deref();
            pairs
                .entry(d.entity_type.as_str())
                .and_modify(|(_, n)| *n = name)
                .or_insert((i, name));
        }
        let mut types: Vec<(usize, &str)> = pairs.iter().map(|(t, (i, _))| (*i, *t)).collect();
        types.sort_unstable();
        let types: Vec<&str> = types.into_iter().map(|(_, t)| t).collect();
        Entity(
            java_sized_map_order(&types, data.len())
                .into_iter()
                .map(|t| (t.to_owned(), pairs[t].1.map(str::to_owned)))
                .collect(),
        )
    }

    fn get(&self, entity_type: &str) -> Option<&Option<String>> {
        self.0
            .iter()
            .find(|(t, _)| t == entity_type)
            .map(|(_, n)| n)
    }

    /// A key equal for equal entities (the pairs in this entity's order).
    fn lookup_key(&self) -> QuotaEntity {
        self.0.clone()
    }

    /// The image's key: pairs sorted by type.
    fn image_key(&self) -> QuotaEntity {
        let mut key = self.0.clone();
        key.sort();
        key
    }

    /// `ClientQuotaEntity.toString`.
    fn describe(&self) -> String {
        let entries: Vec<String> = self
            .0
            .iter()
            .map(|(t, n)| format!("{t}={}", n.as_deref().unwrap_or("null")))
            .collect();
        format!("ClientQuotaEntity(entries={{{}}})", entries.join(", "))
    }
}

fn invalid(message: String) -> ApiError {
    ApiError::new(ResponseError::InvalidRequest, message)
}

/// An entity's `(entity type, name)` pairs; a `None` name is the default entity.
type EntityPairs = Vec<(String, Option<String>)>;
/// The quota keys an entity type may set, with their types.
type QuotaKeys = &'static [(&'static str, QuotaType)];

/// `validateEntity` + `configKeysForEntityType`: the entity's pairs for the records (in the
/// order of Java's `HashMap<>(3)`: client-id, user) and the quota keys it may set.
fn validate_entity(entity: &Entity) -> Result<(EntityPairs, QuotaKeys), ApiError> {
    if entity.0.is_empty() {
        return Err(invalid("Invalid empty client quota entity".to_owned()));
    }
    for (entity_type, name) in &entity.0 {
        if ![USER, CLIENT_ID, IP].contains(&entity_type.as_str()) {
            return Err(invalid(format!(
                "Unhandled client quota entity type: {entity_type}"
            )));
        }
        if name.as_deref() == Some("") {
            return Err(invalid(format!("Empty {entity_type} not supported")));
        }
    }
    let types: Vec<&str> = entity.0.iter().map(|(t, _)| t.as_str()).collect();
    let validated: Vec<(String, Option<String>)> = java_sized_map_order(&types, 3)
        .into_iter()
        .map(|t| (t.to_owned(), entity.get(t).cloned().flatten()))
        .collect();
    let has = |t: &str| entity.get(t).is_some();
    let keys: &'static [(&'static str, QuotaType)] = if has(IP) {
        if has(USER) || has(CLIENT_ID) {
            // Java's message lacks the space before "not".
            return Err(invalid(
                "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId".to_owned(),
            ));
        }
        let ip = entity.get(IP).cloned().flatten();
        // Java resolves host names (InetAddress.getByName); the controller is sans-I/O, so only
        // IP literals (and the default entity) are accepted.
        if ip
            .as_deref()
            .is_some_and(|ip| ip.parse::<IpAddr>().is_err())
        {
            return Err(invalid(format!(
                "{} is not a valid IP or resolvable host.",
                ip.unwrap_or_default()
            )));
        }
        &IP_KEYS
    } else {
        &USER_AND_CLIENT_KEYS
    };
    Ok((validated, keys))
}

/// `validateQuotaKeyValue`.
fn validate_value(keys: &[(&str, QuotaType)], key: &str, value: f64) -> Result<(), ApiError> {
    let Some((_, quota_type)) = keys.iter().find(|(k, _)| *k == key) else {
        return Err(invalid(format!("Invalid configuration key {key}")));
    };
    if value <= 0.0 {
        return Err(invalid(format!("Quota {key} must be greater than 0")));
    }
    let too_large = match quota_type {
        QuotaType::Double => return Ok(()),
        QuotaType::Int => (value > f64::from(i32::MAX)).then_some("an INT"),
        QuotaType::Long => (value > i64::MAX as f64).then_some("a LONG"),
    };
    if let Some(what) = too_large {
        return Err(invalid(format!(
            "Proposed value for {key} is too large for {what}."
        )));
    }
    if (value % 1.0).abs() > 1e-6 {
        return Err(invalid(format!("{key} cannot be a fractional value.")));
    }
    Ok(())
}

/// `alterClientQuotaEntity`: the records for one entity (a set for each changed value, a
/// removal for each removed key that exists), or its error.
fn alter_entity(
    image: &MetadataImage,
    entity: &Entity,
    ops: &[(String, Option<f64>)],
) -> Result<Vec<ClientQuotaRecord>, ApiError> {
    let (validated, keys) = validate_entity(entity)?;
    let current = image.other.client_quotas.get(&entity.image_key());
    let record_entity = || {
        validated
            .iter()
            .map(|(t, n)| records::EntityData {
                entity_type: t.clone(),
                entity_name: n.clone(),
                ..Default::default()
            })
            .collect::<Vec<_>>()
    };
    let op_keys: Vec<&str> = ops.iter().map(|(k, _)| k.as_str()).collect();
    let mut out = Vec::new();
    // Java walks its HashMap<>(ops.size()) of key → value.
    for key in java_sized_map_order(&op_keys, ops.len()) {
        let value = ops.iter().find(|(k, _)| k == key).and_then(|(_, v)| *v);
        let current_value = current.and_then(|q| q.get(key)).copied();
        match value {
            None => {
                if current_value.is_some() {
                    out.push(ClientQuotaRecord {
                        entity: record_entity(),
                        key: key.to_owned(),
                        remove: true,
                        ..Default::default()
                    });
                }
            }
            Some(value) => {
                validate_value(keys, key, value)?;
                if current_value != Some(value) {
                    out.push(ClientQuotaRecord {
                        entity: record_entity(),
                        key: key.to_owned(),
                        value,
                        ..Default::default()
                    });
                }
            }
        }
    }
    Ok(out)
}

/// AlterClientQuotas (api 49, v0-1): sets or removes quota values per entity (`user`,
/// `client-id`, both, or `ip`; a null name is the default entity).
///
/// Per entity, INVALID_REQUEST for: a key given twice ("Ignoring duplicate entity …", as Java
/// overwrites its own "Duplicate quota key" error), an entity that appeared earlier in the
/// request (that earlier entry's records are still written, as in Java), an empty entity, an
/// unknown entity type, an empty name, `ip` combined with another type, an `ip` that is not an
/// IP address (Java would also resolve host names), an unknown key for the entity, a value
/// ≤ 0, too large for an INT/LONG key or fractional for one. One response entry per distinct
/// entity. ClientQuotaRecords only for changed values (removals only of existing keys), one
/// atomic batch; none with `validate_only`. An entity whose records would take the request past
/// 10,000 fails the whole request with POLICY_VIOLATION ("Unable to perform excessively large
/// batch operation.": Java's `BoundedList.addAll` throws out of `alterClientQuotas`).
pub fn alter_client_quotas(
    image: &MetadataImage,
    request: &AlterClientQuotasRequest,
) -> ControllerResult<AlterClientQuotasResponse> {
    let mut results: Vec<(Entity, ApiError)> = Vec::new();
    let mut index: BTreeMap<QuotaEntity, usize> = BTreeMap::new();
    let mut records_out: Vec<ApiMessageAndVersion> = Vec::new();
    for entry in &request.entries {
        let entity = Entity::from_request(&entry.entity);
        let mut ops: Vec<(String, Option<f64>)> = Vec::new();
        let mut keys = BTreeSet::new();
        let mut duplicate_key = false;
        for op in &entry.ops {
            if keys.insert(op.key.as_str()) {
                ops.push((op.key.to_string(), (!op.remove).then_some(op.value)));
            } else {
                duplicate_key = true;
            }
        }
        let seen = index.get(&entity.lookup_key()).copied();
        let error = if duplicate_key || seen.is_some() {
            invalid(format!("Ignoring duplicate entity {}", entity.describe()))
        } else {
            match alter_entity(image, &entity, &ops) {
                // Java adds the records to a `BoundedList`, whose overflow fails the request.
                Ok(recs) if !limits::records_fit(records_out.len(), recs.len()) => {
                    let error = limits::excessively_large();
                    return ControllerResult::of(
                        Vec::new(),
                        request.error_response(error.code, error.message.as_deref()),
                    );
                }
                Ok(recs) => {
                    records_out.extend(recs.into_iter().map(|r| ApiMessageAndVersion::new(r, 0)));
                    ApiError::NONE
                }
                Err(e) => e,
            }
        };
        match seen {
            Some(i) => results[i].1 = error,
            None => {
                index.insert(entity.lookup_key(), results.len());
                results.push((entity, error));
            }
        }
    }
    if request.validate_only {
        records_out.clear();
    }
    let entries = results
        .into_iter()
        .map(|(entity, error)| {
            EntryData::default()
                .with_error_code(error.code)
                .with_error_message(error.message.map(StrBytes::from_string))
                .with_entity(
                    entity
                        .0
                        .into_iter()
                        .map(|(t, n)| {
                            EntityData::default()
                                .with_entity_type(StrBytes::from_string(t))
                                .with_entity_name(n.map(StrBytes::from_string))
                        })
                        .collect(),
                )
        })
        .collect();
    ControllerResult::atomic(
        records_out,
        AlterClientQuotasResponse::default().with_entries(entries),
    )
}

impl ControllerApi for AlterClientQuotasRequest {
    type Response = AlterClientQuotasResponse;

    fn check_strings(&self, check: &mut StringCheck) {
        for entry in &self.entries {
            for entity in &entry.entity {
                check
                    .field("entityType", &entity.entity_type)
                    .optional("entityName", entity.entity_name.as_deref());
            }
            check.each("key", entry.ops.iter().map(|o| o.key.as_str()));
        }
    }

    /// One entry per requested entity.
    fn error_response(&self, code: i16, message: Option<&str>) -> AlterClientQuotasResponse {
        AlterClientQuotasResponse::default().with_entries(
            self.entries
                .iter()
                .map(|e| {
                    let entity = e.entity.iter().map(|d| {
                        response::EntityData::default()
                            .with_entity_type(d.entity_type.clone())
                            .with_entity_name(d.entity_name.clone())
                    });
                    response::EntryData::default()
                        .with_error_code(code)
                        .with_error_message(message_text(message))
                        .with_entity(entity.collect())
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_map_orders_match_java() {
        // Java 17: new HashMap<>(3) with "user" then "client-id" iterates client-id first.
        assert_eq!(
            java_sized_map_order(&["user", "client-id"], 3),
            ["client-id", "user"]
        );
        assert_eq!(
            java_sized_map_order(&["user", "client-id"], 2),
            ["client-id", "user"]
        );
        // Printed by Kafka 4.1.2: ClientQuotaEntity(entries={client-id=c1, user=alice}).
        let entity = Entity::from_request(&[
            kafka_protocol::messages::alter_client_quotas_request::EntityData::default()
                .with_entity_type(StrBytes::from_static_str("user"))
                .with_entity_name(Some(StrBytes::from_static_str("alice"))),
            kafka_protocol::messages::alter_client_quotas_request::EntityData::default()
                .with_entity_type(StrBytes::from_static_str("client-id"))
                .with_entity_name(Some(StrBytes::from_static_str("c1"))),
        ]);
        assert_eq!(
            entity.describe(),
            "ClientQuotaEntity(entries={client-id=c1, user=alice})"
        );
    }

    #[test]
    fn values_are_checked_by_key_type() {
        let keys = &USER_AND_CLIENT_KEYS;
        assert!(validate_value(keys, "producer_byte_rate", 1024.0).is_ok());
        assert_eq!(
            validate_value(keys, "producer_byte_rate", 1.5)
                .unwrap_err()
                .message
                .as_deref(),
            Some("producer_byte_rate cannot be a fractional value.")
        );
        assert!(validate_value(keys, "request_percentage", 1.5).is_ok());
        assert_eq!(
            validate_value(keys, "request_percentage", 0.0)
                .unwrap_err()
                .message
                .as_deref(),
            Some("Quota request_percentage must be greater than 0")
        );
        assert_eq!(
            validate_value(keys, "connection_creation_rate", 5.0)
                .unwrap_err()
                .message
                .as_deref(),
            Some("Invalid configuration key connection_creation_rate")
        );
        assert_eq!(
            validate_value(&IP_KEYS, "connection_creation_rate", 3e9)
                .unwrap_err()
                .message
                .as_deref(),
            Some("Proposed value for connection_creation_rate is too large for an INT.")
        );
    }
}
