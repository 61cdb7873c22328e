//! `replay`: the only way the metadata image changes. The active controller, standby
//! controllers and snapshot loading all apply records through [`replay`], so they all build the
//! same state from the same log (Kafka's `QuorumController.replay` switch and the
//! `*ControlManager.replay` / `image/*Delta` methods of 4.1.2).

use std::sync::Arc;

use kraftwerk_records::metadata::{
    ApiMessageAndVersion, BeginTransactionRecord, BrokerRegistrationChangeRecord, ClearElrRecord,
    ConfigRecord, MetadataRecord, PartitionChangeRecord, PartitionRecord, RegisterBrokerRecord,
    RegisterControllerRecord, RemoveTopicRecord,
};

use crate::error::ReplayError;
use crate::image::cluster::{BrokerRegistration, ControllerRegistration, Endpoint, FeatureRange};
use crate::image::configs::ConfigResource;
use crate::image::partition::{PartitionChange, PartitionRegistration};
use crate::image::{MetadataImage, OpenTransaction};

/// Applies one record at `offset` to `image`.
///
/// Records are applied in log order; snapshot records all carry the snapshot's offset. On error
/// the image may be partly changed; callers on the active controller treat any error as fatal
/// (the node must stop serving), as Kafka's `fatalFaultHandler` does.
///
/// # Errors
/// A [`ReplayError`] for a record that contradicts the image: a PartitionChangeRecord for an
/// unknown partition, a broker record with a wrong epoch, a duplicate topic, a non-increasing
/// producer id, a transaction marker out of order, and so on.
pub fn replay(
    image: &mut MetadataImage,
    message: &ApiMessageAndVersion,
    offset: i64,
) -> Result<(), ReplayError> {
    apply(image, &message.record, offset)?;
    image.last_offset = image.last_offset.max(offset);
    image.records_replayed += 1;
    Ok(())
}

/// Changes `image` as `record` says (`QuorumController.replay`'s switch): each record type goes
/// to the image module that owns its state, or to a `replay_*` function here when it spans
/// several.
fn apply(
    image: &mut MetadataImage,
    record: &MetadataRecord,
    offset: i64,
) -> Result<(), ReplayError> {
    match record {
        MetadataRecord::RegisterBroker(r) => replay_register_broker(image, r, offset)?,
        MetadataRecord::UnregisterBroker(r) => {
            image.cluster.remove_broker(r.broker_id, r.broker_epoch)?
        }
        MetadataRecord::Topic(r) => image.topics.add_topic(&r.name, r.topic_id)?,
        MetadataRecord::Partition(r) => replay_partition(image, r)?,
        MetadataRecord::Config(r) => replay_config(image, r),
        MetadataRecord::PartitionChange(r) => replay_partition_change(image, r)?,
        MetadataRecord::FenceBroker(r) => set_fenced(image, r.id, r.epoch, true)?,
        MetadataRecord::UnfenceBroker(r) => set_fenced(image, r.id, r.epoch, false)?,
        MetadataRecord::RemoveTopic(r) => replay_remove_topic(image, r)?,
        MetadataRecord::DelegationToken(r) => image.other.put_delegation_token(r),
        MetadataRecord::UserScramCredential(r) => image.other.put_scram_credential(r),
        MetadataRecord::FeatureLevel(r) => image.features.replay(&r.name, r.feature_level)?,
        MetadataRecord::ClientQuota(r) => image.other.replay_client_quota(r),
        MetadataRecord::ProducerIds(r) => image.producer_ids.replay(r)?,
        MetadataRecord::BrokerRegistrationChange(r) => replay_registration_change(image, r)?,
        MetadataRecord::AccessControlEntry(r) => image.other.put_acl(r),
        MetadataRecord::RemoveAccessControlEntry(r) => image.other.remove_acl(&r.id),
        MetadataRecord::NoOp(_) => {}
        MetadataRecord::ZkMigrationState(r) => {
            image.other.zk_migration_state = Some(r.zk_migration_state)
        }
        MetadataRecord::RemoveUserScramCredential(r) => {
            image.other.remove_scram_credential(&r.name, r.mechanism)
        }
        MetadataRecord::BeginTransaction(r) => begin_transaction(image, r, offset)?,
        MetadataRecord::EndTransaction(_) => end_transaction(image, offset)?,
        MetadataRecord::AbortTransaction(_) => abort_transaction(image, offset)?,
        MetadataRecord::RemoveDelegationToken(r) => {
            image.other.remove_delegation_token(&r.token_id)
        }
        MetadataRecord::RegisterController(r) => {
            image.cluster.put_controller(controller_registration(r))
        }
        MetadataRecord::ClearElr(r) => replay_clear_elr(image, r)?,
        MetadataRecord::UnregisterController(r) => image.cluster.remove_controller(r.controller_id),
    }
    Ok(())
}

fn replay_config(image: &mut MetadataImage, r: &ConfigRecord) {
    let resource = ConfigResource {
        resource_type: r.resource_type,
        name: r.resource_name.clone(),
    };
    image.configs.replay(resource, &r.name, r.value.as_deref());
}

/// FenceBrokerRecord / UnfenceBrokerRecord (before metadata.version 3.3-IV2).
fn set_fenced(
    image: &mut MetadataImage,
    broker_id: i32,
    epoch: i64,
    fenced: bool,
) -> Result<(), ReplayError> {
    image
        .cluster
        .change_broker(broker_id, epoch, Some(fenced), None, None)
}

/// A deleted topic takes its dynamic configs with it.
fn replay_remove_topic(
    image: &mut MetadataImage,
    r: &RemoveTopicRecord,
) -> Result<(), ReplayError> {
    let topic = image.topics.remove_topic(&r.topic_id)?;
    image.configs.remove_topic(&topic.name);
    Ok(())
}

/// Opens a transaction, remembering the image to restore on abort.
fn begin_transaction(
    image: &mut MetadataImage,
    r: &BeginTransactionRecord,
    offset: i64,
) -> Result<(), ReplayError> {
    if let Some(open) = &image.transaction {
        return Err(ReplayError::Transaction(format!(
            "Can't replay a BeginTransactionRecord at {offset} because the transaction at {} was never closed.",
            open.start_offset
        )));
    }
    let before = image.clone();
    image.transaction = Some(Arc::new(OpenTransaction {
        start_offset: offset,
        name: r.name.clone(),
        before,
    }));
    Ok(())
}

fn end_transaction(image: &mut MetadataImage, offset: i64) -> Result<(), ReplayError> {
    if image.transaction.take().is_none() {
        return Err(ReplayError::Transaction(format!(
            "Can't replay an EndTransactionRecord at {offset} because there is no open transaction."
        )));
    }
    Ok(())
}

fn abort_transaction(image: &mut MetadataImage, offset: i64) -> Result<(), ReplayError> {
    let Some(open) = image.transaction.take() else {
        return Err(ReplayError::Transaction(format!(
            "Can't replay an AbortTransactionRecord at {offset} because there is no open transaction."
        )));
    };
    // Revert everything the transaction did (`SnapshotRegistry.revertToSnapshot`), but keep
    // counting log positions.
    let records_replayed = image.records_replayed;
    *image = open.before.clone();
    image.records_replayed = records_replayed;
    Ok(())
}

fn replay_register_broker(
    image: &mut MetadataImage,
    r: &RegisterBrokerRecord,
    offset: i64,
) -> Result<(), ReplayError> {
    image.cluster.put_broker(BrokerRegistration {
        id: r.broker_id,
        epoch: r.broker_epoch,
        incarnation_id: r.incarnation_id,
        listeners: r
            .end_points
            .iter()
            .map(|e| Endpoint {
                name: e.name.clone(),
                host: e.host.clone(),
                port: e.port,
                security_protocol: e.security_protocol,
            })
            .collect(),
        features: r
            .features
            .iter()
            .map(|f| FeatureRange {
                name: f.name.clone(),
                min_supported: f.min_supported_version,
                max_supported: f.max_supported_version,
            })
            .collect(),
        rack: r.rack.clone(),
        fenced: r.fenced,
        in_controlled_shutdown: r.in_controlled_shutdown,
        is_migrating_zk_broker: r.is_migrating_zk_broker,
        directories: r.log_dirs.clone(),
        cordoned_directories: r.cordoned_log_dirs.clone(),
        registration_offset: offset,
    })
}

fn controller_registration(r: &RegisterControllerRecord) -> ControllerRegistration {
    ControllerRegistration {
        id: r.controller_id,
        incarnation_id: r.incarnation_id,
        zk_migration_ready: r.zk_migration_ready,
        listeners: r
            .end_points
            .iter()
            .map(|e| Endpoint {
                name: e.name.clone(),
                host: e.host.clone(),
                port: e.port,
                security_protocol: e.security_protocol,
            })
            .collect(),
        features: r
            .features
            .iter()
            .map(|f| FeatureRange {
                name: f.name.clone(),
                min_supported: f.min_supported_version,
                max_supported: f.max_supported_version,
            })
            .collect(),
    }
}

fn replay_registration_change(
    image: &mut MetadataImage,
    r: &BrokerRegistrationChangeRecord,
) -> Result<(), ReplayError> {
    let fenced = match r.fenced {
        -1 => Some(false),
        0 => None,
        1 => Some(true),
        value => {
            return Err(ReplayError::InvalidField {
                record: "BrokerRegistrationChangeRecord",
                field: "Fenced",
                value: i64::from(value),
            })
        }
    };
    let in_controlled_shutdown = match r.in_controlled_shutdown {
        0 => None,
        1 => Some(true),
        value => {
            return Err(ReplayError::InvalidField {
                record: "BrokerRegistrationChangeRecord",
                field: "InControlledShutdown",
                value: i64::from(value),
            })
        }
    };
    // An empty LogDirs list means "unchanged" (Java filters it out).
    let directories = (!r.log_dirs.is_empty()).then(|| r.log_dirs.clone());
    image.cluster.change_broker(
        r.broker_id,
        r.broker_epoch,
        fenced,
        in_controlled_shutdown,
        directories,
    )?;
    if let Some(cordoned) = &r.cordoned_log_dirs {
        image
            .cluster
            .set_cordoned_directories(r.broker_id, r.broker_epoch, cordoned.clone())?;
    }
    Ok(())
}

/// The registration a PartitionRecord describes.
///
/// # Errors
/// As [`PartitionRegistration::from_record_fields`].
pub fn partition_from_record(r: &PartitionRecord) -> Result<PartitionRegistration, ReplayError> {
    PartitionRegistration::from_record_fields(
        r.topic_id,
        r.partition_id,
        r.replicas.clone(),
        r.directories.clone(),
        r.isr.clone(),
        r.removing_replicas.clone(),
        r.adding_replicas.clone(),
        r.leader,
        r.leader_recovery_state,
        r.leader_epoch,
        r.partition_epoch,
        r.eligible_leader_replicas.clone().unwrap_or_default(),
        r.last_known_elr.clone().unwrap_or_default(),
    )
}

fn replay_partition(image: &mut MetadataImage, r: &PartitionRecord) -> Result<(), ReplayError> {
    if image.topics.get(&r.topic_id).is_none() {
        return Err(ReplayError::UnknownTopic(r.topic_id));
    }
    let registration = partition_from_record(r)?;
    image
        .topics
        .put_partition(r.topic_id, r.partition_id, registration)
}

/// The [`PartitionChange`] a PartitionChangeRecord carries.
pub fn change_from_record(r: &PartitionChangeRecord) -> PartitionChange {
    PartitionChange {
        topic_id: r.topic_id,
        partition_id: r.partition_id,
        isr: r.isr.clone(),
        leader: r.leader,
        replicas: r.replicas.clone(),
        removing_replicas: r.removing_replicas.clone(),
        adding_replicas: r.adding_replicas.clone(),
        leader_recovery_state: r.leader_recovery_state,
        directories: r.directories.clone(),
        eligible_leader_replicas: r.eligible_leader_replicas.clone(),
        last_known_elr: r.last_known_elr.clone(),
    }
}

fn replay_partition_change(
    image: &mut MetadataImage,
    r: &PartitionChangeRecord,
) -> Result<(), ReplayError> {
    let current = image
        .topics
        .partition(&r.topic_id, r.partition_id)
        .ok_or_else(|| match image.topics.get(&r.topic_id) {
            None => ReplayError::UnknownTopic(r.topic_id),
            Some(_) => ReplayError::UnknownPartition {
                topic_id: r.topic_id,
                partition_id: r.partition_id,
            },
        })?
        .clone();
    let next = current.merge(&change_from_record(r))?;
    image.topics.put_partition(r.topic_id, r.partition_id, next)
}

fn replay_clear_elr(image: &mut MetadataImage, r: &ClearElrRecord) -> Result<(), ReplayError> {
    let topic_ids: Vec<_> = if r.topic_name.is_empty() {
        image.topics.iter().map(|t| t.id).collect()
    } else {
        vec![image
            .topics
            .id_of(&r.topic_name)
            .ok_or_else(|| ReplayError::UnknownTopicName(r.topic_name.clone()))?]
    };
    for topic_id in topic_ids {
        let partitions: Vec<(i32, Arc<PartitionRegistration>)> = image
            .topics
            .get(&topic_id)
            .map(|t| {
                t.partitions
                    .iter()
                    .map(|(id, p)| (*id, p.clone()))
                    .collect()
            })
            .unwrap_or_default();
        for (partition_id, partition) in partitions {
            if partition.elr.is_empty() && partition.last_known_elr.is_empty() {
                continue;
            }
            // Java merges a PartitionChangeRecord clearing both lists, which also bumps the
            // partition epoch.
            let mut change = PartitionChange::new(topic_id, partition_id);
            change.eligible_leader_replicas = Some(Vec::new());
            change.last_known_elr = Some(Vec::new());
            let next = partition.merge(&change)?;
            image.topics.put_partition(topic_id, partition_id, next)?;
        }
    }
    Ok(())
}
