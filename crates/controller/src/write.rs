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

use crate::image::cluster::{BrokerRegistration, ControllerRegistration};
use crate::image::other::QuotaEntity;
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

/// The RegisterControllerRecord describing a controller registration.
fn register_controller_record(c: &ControllerRegistration) -> ApiMessageAndVersion {
    let record = RegisterControllerRecord {
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
    };
    ApiMessageAndVersion::new(record, 0)
}

fn feature_level_record(name: &str, feature_level: i16) -> ApiMessageAndVersion {
    ApiMessageAndVersion::new(
        FeatureLevelRecord {
            name: name.to_owned(),
            feature_level,
            ..Default::default()
        },
        0,
    )
}

/// The ClientQuotaRecord setting one quota key of `entity`.
fn client_quota_record(entity: &QuotaEntity, key: &str, value: f64) -> ApiMessageAndVersion {
    let record = ClientQuotaRecord {
        entity: entity
            .iter()
            .map(|(t, n)| EntityData {
                entity_type: t.clone(),
                entity_name: n.clone(),
                ..Default::default()
            })
            .collect(),
        key: key.to_owned(),
        value,
        remove: false,
        ..Default::default()
    };
    ApiMessageAndVersion::new(record, 0)
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
        self.write_features(&mut out);
        self.write_cluster(mv, &mut out);
        self.write_topics(mv, &mut out);
        self.write_configs(&mut out);
        self.write_client_quotas(&mut out);
        self.write_producer_ids(&mut out);
        self.write_acls_scram_and_tokens(&mut out);
        out
    }

    /// metadata.version first, then the other finalized features, then the ZK migration state.
    fn write_features(&self, out: &mut Vec<ApiMessageAndVersion>) {
        if let Some(mv) = self.features.metadata_version() {
            out.push(feature_level_record(
                METADATA_VERSION_FEATURE_NAME,
                mv.feature_level(),
            ));
        }
        for (name, level) in self.features.finalized() {
            out.push(feature_level_record(name, *level));
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
    }

    /// Brokers, then controllers.
    fn write_cluster(&self, mv: MetadataVersion, out: &mut Vec<ApiMessageAndVersion>) {
        for broker in self.cluster.brokers() {
            out.push(register_broker_record(broker, mv));
        }
        for controller in self.cluster.controllers() {
            out.push(register_controller_record(controller));
        }
    }

    /// Each TopicRecord followed by its PartitionRecords.
    fn write_topics(&self, mv: MetadataVersion, out: &mut Vec<ApiMessageAndVersion>) {
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
    }

    fn write_configs(&self, out: &mut Vec<ApiMessageAndVersion>) {
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
    }

    fn write_client_quotas(&self, out: &mut Vec<ApiMessageAndVersion>) {
        for (entity, quotas) in self.other.client_quotas.iter() {
            for (key, value) in quotas.iter() {
                out.push(client_quota_record(entity, key, *value));
            }
        }
    }

    /// Nothing until the first block was allocated.
    fn write_producer_ids(&self, out: &mut Vec<ApiMessageAndVersion>) {
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
    }

    /// The records kept as they were replayed.
    fn write_acls_scram_and_tokens(&self, out: &mut Vec<ApiMessageAndVersion>) {
        for acl in self.other.acls.values() {
            out.push(ApiMessageAndVersion::new(acl.clone(), 0));
        }
        for credential in self.other.scram_credentials.values() {
            out.push(ApiMessageAndVersion::new(credential.clone(), 0));
        }
        for token in self.other.delegation_tokens.values() {
            out.push(ApiMessageAndVersion::new(token.clone(), 0));
        }
    }
}
