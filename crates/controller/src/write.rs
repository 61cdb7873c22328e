//! Writing an image back out as records ([`MetadataImage::write_records`]), the content of a
//! snapshot (Kafka's `MetadataImage.write` / `ImageWriter`). Replaying the output into an empty
//! image rebuilds an equal image; only offsets differ, because snapshot records all replay at
//! the snapshot's offset.
//!
//! Order follows Kafka: features (metadata.version first), cluster (brokers, then
//! controllers), topics (each TopicRecord followed by its PartitionRecords), configs, client
//! quotas, producer ids, ACLs, SCRAM credentials, delegation tokens. Record versions follow the
//! image's metadata.version.

use kraftwerk_records::metadata::{
    ApiMessageAndVersion, BrokerEndpoint, BrokerFeature, ClientQuotaRecord, ConfigRecord,
    ControllerEndpoint, ControllerFeature, EntityData, FeatureLevelRecord, PartitionRecord,
    ProducerIdsRecord, RegisterBrokerRecord, RegisterControllerRecord, TopicRecord,
    ZkMigrationStateRecord,
};
use kraftwerk_records::metadata_version::{MetadataVersion, METADATA_VERSION_FEATURE_NAME};
use uuid::Uuid;

use crate::image::cluster::BrokerRegistration;
use crate::image::partition::PartitionRegistration;
use crate::image::MetadataImage;

/// The PartitionRecord for a partition at `mv` (`PartitionRegistration.toRecord`): Directories
/// from 3.7-IV2 on; ELR lists only when non-empty (and the version has them).
pub fn partition_record(
    topic_id: Uuid,
    partition_id: i32,
    p: &PartitionRegistration,
    mv: MetadataVersion,
) -> ApiMessageAndVersion {
    let version = mv.partition_record_version();
    let elr_fields = version >= 2;
    let record = PartitionRecord {
        partition_id,
        topic_id,
        replicas: p.replicas.clone(),
        isr: p.isr.clone(),
        removing_replicas: p.removing_replicas.clone(),
        adding_replicas: p.adding_replicas.clone(),
        leader: p.leader,
        leader_recovery_state: p.leader_recovery_state.value(),
        leader_epoch: p.leader_epoch,
        partition_epoch: p.partition_epoch,
        directories: if mv.is_directory_assignment_supported() {
            p.directories.clone()
        } else {
            Vec::new()
        },
        eligible_leader_replicas: (elr_fields && !p.elr.is_empty()).then(|| p.elr.clone()),
        last_known_elr: (elr_fields && !p.last_known_elr.is_empty())
            .then(|| p.last_known_elr.clone()),
        ..Default::default()
    };
    ApiMessageAndVersion::new(record, version)
}

/// The RegisterBrokerRecord describing a registration at `mv`.
pub fn register_broker_record(b: &BrokerRegistration, mv: MetadataVersion) -> ApiMessageAndVersion {
    let mut version = mv.register_broker_record_version();
    if b.cordoned_directories.is_some() {
        version = version.max(4);
    }
    let record = RegisterBrokerRecord {
        broker_id: b.id,
        is_migrating_zk_broker: b.is_migrating_zk_broker && version >= 2,
        incarnation_id: b.incarnation_id,
        broker_epoch: b.epoch,
        end_points: b
            .listeners
            .iter()
            .map(|l| BrokerEndpoint {
                name: l.name.clone(),
                host: l.host.clone(),
                port: l.port,
                security_protocol: l.security_protocol,
                ..Default::default()
            })
            .collect(),
        features: b
            .features
            .iter()
            .map(|f| BrokerFeature {
                name: f.name.clone(),
                min_supported_version: f.min_supported,
                max_supported_version: f.max_supported,
                ..Default::default()
            })
            .collect(),
        rack: b.rack.clone(),
        fenced: b.fenced,
        in_controlled_shutdown: b.in_controlled_shutdown,
        log_dirs: if version >= 3 {
            b.directories.clone()
        } else {
            Vec::new()
        },
        cordoned_log_dirs: b.cordoned_directories.clone(),
        ..Default::default()
    };
    ApiMessageAndVersion::new(record, version)
}

impl MetadataImage {
    /// The records that rebuild this image from nothing (a snapshot's content).
    ///
    /// If a metadata transaction is open, the records describe the state before it began (the
    /// last stable state), since a snapshot never contains part of a transaction.
    pub fn write_records(&self) -> Vec<ApiMessageAndVersion> {
        if let Some(open) = &self.transaction {
            return open.before.write_records();
        }
        let mv = self.metadata_version();
        let mut out = Vec::new();
        if let Some(mv) = self.features.metadata_version() {
            out.push(ApiMessageAndVersion::new(
                FeatureLevelRecord {
                    name: METADATA_VERSION_FEATURE_NAME.to_owned(),
                    feature_level: mv.feature_level(),
                    ..Default::default()
                },
                0,
            ));
        }
        for (name, level) in self.features.finalized() {
            out.push(ApiMessageAndVersion::new(
                FeatureLevelRecord {
                    name: name.clone(),
                    feature_level: *level,
                    ..Default::default()
                },
                0,
            ));
        }
        if let Some(state) = self.other.zk_migration_state {
            out.push(ApiMessageAndVersion::new(
                ZkMigrationStateRecord {
                    zk_migration_state: state,
                    ..Default::default()
                },
                0,
            ));
        }
        for broker in self.cluster.brokers() {
            out.push(register_broker_record(broker, mv));
        }
        for c in self.cluster.controllers() {
            out.push(ApiMessageAndVersion::new(
                RegisterControllerRecord {
                    controller_id: c.id,
                    incarnation_id: c.incarnation_id,
                    zk_migration_ready: c.zk_migration_ready,
                    end_points: c
                        .listeners
                        .iter()
                        .map(|l| ControllerEndpoint {
                            name: l.name.clone(),
                            host: l.host.clone(),
                            port: l.port,
                            security_protocol: l.security_protocol,
                            ..Default::default()
                        })
                        .collect(),
                    features: c
                        .features
                        .iter()
                        .map(|f| ControllerFeature {
                            name: f.name.clone(),
                            min_supported_version: f.min_supported,
                            max_supported_version: f.max_supported,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                },
                0,
            ));
        }
        for topic in self.topics.iter() {
            out.push(ApiMessageAndVersion::new(
                TopicRecord {
                    name: topic.name.to_string(),
                    topic_id: topic.id,
                    ..Default::default()
                },
                0,
            ));
            for (partition_id, p) in topic.partitions.iter() {
                out.push(partition_record(topic.id, *partition_id, p, mv));
            }
        }
        for (resource, configs) in self.configs.iter() {
            for (key, value) in configs.iter() {
                out.push(ApiMessageAndVersion::new(
                    ConfigRecord {
                        resource_type: resource.resource_type,
                        resource_name: resource.name.clone(),
                        name: key.clone(),
                        value: Some(value.clone()),
                        ..Default::default()
                    },
                    0,
                ));
            }
        }
        for (entity, quotas) in self.other.client_quotas.iter() {
            for (key, value) in quotas.iter() {
                out.push(ApiMessageAndVersion::new(
                    ClientQuotaRecord {
                        entity: entity
                            .iter()
                            .map(|(t, n)| EntityData {
                                entity_type: t.clone(),
                                entity_name: n.clone(),
                                ..Default::default()
                            })
                            .collect(),
                        key: key.clone(),
                        value: *value,
                        remove: false,
                        ..Default::default()
                    },
                    0,
                ));
            }
        }
        if self.producer_ids.next_producer_id != -1 {
            out.push(ApiMessageAndVersion::new(
                ProducerIdsRecord {
                    broker_id: self.producer_ids.last_broker_id,
                    broker_epoch: self.producer_ids.last_broker_epoch,
                    next_producer_id: self.producer_ids.next_producer_id,
                    ..Default::default()
                },
                0,
            ));
        }
        for acl in self.other.acls.values() {
            out.push(ApiMessageAndVersion::new(acl.clone(), 0));
        }
        for credential in self.other.scram_credentials.values() {
            out.push(ApiMessageAndVersion::new(credential.clone(), 0));
        }
        for token in self.other.delegation_tokens.values() {
            out.push(ApiMessageAndVersion::new(token.clone(), 0));
        }
        out
    }
}
