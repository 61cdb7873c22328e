//! Leader and ISR updates for many partitions at once, and the broker state changes that need
//! them: fencing, unfencing, controlled shutdown, shutdown on re-registration, offline log
//! directories, unregistration (Kafka 4.1.2's `ReplicationControlManager.generateLeaderAndIsrUpdates`
//! and `handleBroker*`).
//!
//! Every function reads one image and appends records; none of them sees its own records, which
//! is why session-expiry fencing handles one broker per result (KAFKA-13173, case C15).

use std::collections::BTreeSet;

use kraftwerk_records::metadata::{
    ApiMessageAndVersion, BrokerRegistrationChangeRecord, PartitionChangeRecord,
    UnregisterBrokerRecord,
};
use kraftwerk_records::metadata_version::{BrokerRegistrationChange, MetadataVersion};
use uuid::Uuid;

use crate::controller::ControllerConfig;
use crate::image::partition::{PartitionChange, NO_LEADER};
use crate::image::topics::TopicIdPartition;
use crate::image::MetadataImage;
use crate::partition_change::{Election, PartitionChangeBuilder};

/// The PartitionChangeRecord for `change` at `mv`'s record version.
pub fn partition_change_record(
    change: &PartitionChange,
    mv: MetadataVersion,
) -> ApiMessageAndVersion {
    let version = mv.partition_change_record_version();
    assert!(
        version >= 2
            || (change.eligible_leader_replicas.is_none() && change.last_known_elr.is_none()),
        "ELR change at PartitionChangeRecord v{version}: {change:?}"
    );
    assert!(
        version >= 1 || change.directories.is_none(),
        "directories at PartitionChangeRecord v0: {change:?}"
    );
    ApiMessageAndVersion::new(
        PartitionChangeRecord {
            partition_id: change.partition_id,
            topic_id: change.topic_id,
            isr: change.isr.clone(),
            leader: change.leader,
            replicas: change.replicas.clone(),
            removing_replicas: change.removing_replicas.clone(),
            adding_replicas: change.adding_replicas.clone(),
            leader_recovery_state: change.leader_recovery_state,
            directories: change.directories.clone(),
            eligible_leader_replicas: change.eligible_leader_replicas.clone(),
            last_known_elr: change.last_known_elr.clone(),
            ..Default::default()
        },
        version,
    )
}

/// A BrokerRegistrationChangeRecord at the version `mv` uses for `kind`.
pub fn registration_change_record(
    mv: MetadataVersion,
    kind: BrokerRegistrationChange,
    record: BrokerRegistrationChangeRecord,
) -> ApiMessageAndVersion {
    ApiMessageAndVersion::new(record, mv.broker_registration_change_record_version(kind))
}

/// Builds the change of one partition with the leader acceptor Kafka uses when brokers come and
/// go: `broker_to_remove` and `unclean_broker` may never lead, `broker_to_add` may lead even
/// though the image still shows it fenced, every other broker must be active; all need their
/// replica's directory online.
pub struct LeaderIsrUpdater<'a> {
    /// The image the changes are computed from.
    pub image: &'a MetadataImage,
    /// Controller settings (node id, static min ISR, unclean election default).
    pub config: &'a ControllerConfig,
}

impl LeaderIsrUpdater<'_> {
    /// `generateLeaderAndIsrUpdates`: for each partition, removes `broker_to_remove` and
    /// `unclean_broker` from the ISR, re-elects a leader if needed, and appends the resulting
    /// PartitionChangeRecord (if any). `NO_LEADER` (-1) means "none" for each broker argument.
    pub fn generate(
        &self,
        broker_to_remove: i32,
        broker_to_add: i32,
        unclean_broker: i32,
        partitions: &[TopicIdPartition],
        records: &mut Vec<ApiMessageAndVersion>,
    ) {
        let image = self.image;
        let mv = image.metadata_version();
        let elr_enabled = image.features.is_elr_enabled();
        let default_dir = |broker: i32| image.default_dir(broker);
        for tp in partitions {
            let topic = image
                .topics
                .get(&tp.topic_id)
                .unwrap_or_else(|| panic!("index names unknown topic {tp:?}"));
            let partition = topic
                .partitions
                .get(&tp.partition_id)
                .unwrap_or_else(|| panic!("index names unknown partition {tp:?}"));
            let acceptable = |r: i32| {
                r != broker_to_remove
                    && r != unclean_broker
                    && (r == broker_to_add || image.cluster.is_active(r))
                    && partition
                        .directory(r)
                        .is_some_and(|dir| image.cluster.has_online_dir(r, &dir))
            };
            let min_isr = image.effective_min_isr(
                &tp.topic_id,
                self.config.node_id,
                self.config.min_insync_replicas,
            );
            let mut builder = PartitionChangeBuilder::new(
                partition,
                tp.topic_id,
                tp.partition_id,
                &acceptable,
                mv,
                min_isr,
                &default_dir,
            )
            .set_elr_enabled(elr_enabled);
            if image.unclean_election_enabled(
                &topic.name,
                self.config.node_id,
                self.config.unclean_leader_election_enable,
            ) {
                builder = builder.set_election(Election::Unclean);
            }
            if unclean_broker != NO_LEADER {
                builder = builder.set_unclean_shutdown_replicas(vec![unclean_broker]);
            }
            let target_isr: Vec<i32> = partition
                .isr
                .iter()
                .copied()
                .filter(|r| *r != broker_to_remove && *r != unclean_broker)
                .collect();
            if let Some(change) = builder.set_target_isr(target_isr).build() {
                records.push(partition_change_record(&change, mv));
            }
        }
    }

    /// `handleBrokerFenced`: moves leadership away and removes the broker from every ISR (the
    /// last ISR member stays when ELR is off), then BrokerRegistrationChangeRecord(Fenced=1).
    pub fn broker_fenced(&self, broker_id: i32, records: &mut Vec<ApiMessageAndVersion>) {
        let registration = self
            .image
            .cluster
            .broker(broker_id)
            .unwrap_or_else(|| panic!("broker {broker_id} not registered"));
        let partitions = self.image.topics.partitions_with_broker_in_isr(broker_id);
        self.generate(broker_id, NO_LEADER, NO_LEADER, &partitions, records);
        records.push(registration_change_record(
            self.image.metadata_version(),
            BrokerRegistrationChange::Fencing,
            BrokerRegistrationChangeRecord {
                broker_id,
                broker_epoch: registration.epoch,
                fenced: 1,
                ..Default::default()
            },
        ));
    }

    /// `handleBrokerUnfenced`: BrokerRegistrationChangeRecord(Fenced=-1), then leader elections
    /// for leaderless partitions this broker can now lead.
    pub fn broker_unfenced(
        &self,
        broker_id: i32,
        broker_epoch: i64,
        records: &mut Vec<ApiMessageAndVersion>,
    ) {
        records.push(registration_change_record(
            self.image.metadata_version(),
            BrokerRegistrationChange::Fencing,
            BrokerRegistrationChangeRecord {
                broker_id,
                broker_epoch,
                fenced: -1,
                ..Default::default()
            },
        ));
        let partitions = self.image.topics.partitions_without_leader();
        self.generate(NO_LEADER, broker_id, NO_LEADER, &partitions, records);
    }

    /// `handleBrokerInControlledShutdown`: BrokerRegistrationChangeRecord(InControlledShutdown=1)
    /// unless already set, then leader moves and ISR removals.
    pub fn broker_in_controlled_shutdown(
        &self,
        broker_id: i32,
        broker_epoch: i64,
        records: &mut Vec<ApiMessageAndVersion>,
    ) {
        let already = self
            .image
            .cluster
            .broker(broker_id)
            .is_some_and(|b| b.in_controlled_shutdown);
        if !already {
            records.push(registration_change_record(
                self.image.metadata_version(),
                BrokerRegistrationChange::ControlledShutdown,
                BrokerRegistrationChangeRecord {
                    broker_id,
                    broker_epoch,
                    in_controlled_shutdown: 1,
                    ..Default::default()
                },
            ));
        }
        let partitions = self.image.topics.partitions_with_broker_in_isr(broker_id);
        self.generate(broker_id, NO_LEADER, NO_LEADER, &partitions, records);
    }

    /// `handleBrokerShutdown` (4.1.2), run when a new incarnation registers: with ELR enabled and
    /// an unclean shutdown the broker leaves every ISR and ELR; otherwise it leaves every ISR.
    pub fn broker_shutdown(
        &self,
        broker_id: i32,
        clean: bool,
        records: &mut Vec<ApiMessageAndVersion>,
    ) {
        if self.image.features.is_elr_enabled() && !clean {
            let isr = self.image.topics.partitions_with_broker_in_isr(broker_id);
            self.generate(NO_LEADER, NO_LEADER, broker_id, &isr, records);
            let elr = self.image.topics.partitions_with_broker_in_elr(broker_id);
            self.generate(NO_LEADER, NO_LEADER, broker_id, &elr, records);
        } else {
            let isr = self.image.topics.partitions_with_broker_in_isr(broker_id);
            self.generate(broker_id, NO_LEADER, NO_LEADER, &isr, records);
        }
    }

    /// `handleDirectoriesOffline`: for directories newly reported offline, moves leadership off
    /// their partitions and writes BrokerRegistrationChangeRecord v2 with the remaining dirs.
    pub fn directories_offline(
        &self,
        broker_id: i32,
        broker_epoch: i64,
        offline_dirs: &[Uuid],
        records: &mut Vec<ApiMessageAndVersion>,
    ) {
        let Some(registration) = self.image.cluster.broker(broker_id) else {
            return;
        };
        let offline_dirs: BTreeSet<&Uuid> = offline_dirs.iter().collect();
        let newly_offline: Vec<Uuid> = registration
            .directories
            .iter()
            .copied()
            .filter(|d| offline_dirs.contains(d))
            .collect();
        if newly_offline.is_empty() {
            return;
        }
        for dir in &newly_offline {
            let partitions = self.image.topics.partitions_in_directory(dir);
            self.generate(broker_id, NO_LEADER, NO_LEADER, &partitions, records);
        }
        let online: Vec<Uuid> = registration
            .directories
            .iter()
            .copied()
            .filter(|d| !offline_dirs.contains(d))
            .collect();
        records.push(registration_change_record(
            self.image.metadata_version(),
            BrokerRegistrationChange::LogDirs,
            BrokerRegistrationChangeRecord {
                broker_id,
                broker_epoch,
                log_dirs: online,
                ..Default::default()
            },
        ));
    }

    /// `handleBrokerUnregistered`: removes the broker from every ISR and ELR, then
    /// UnregisterBrokerRecord.
    pub fn broker_unregistered(
        &self,
        broker_id: i32,
        broker_epoch: i64,
        records: &mut Vec<ApiMessageAndVersion>,
    ) {
        let isr = self.image.topics.partitions_with_broker_in_isr(broker_id);
        self.generate(broker_id, NO_LEADER, NO_LEADER, &isr, records);
        let elr = self.image.topics.partitions_with_broker_in_elr(broker_id);
        self.generate(broker_id, NO_LEADER, NO_LEADER, &elr, records);
        records.push(ApiMessageAndVersion::new(
            UnregisterBrokerRecord {
                broker_id,
                broker_epoch,
                ..Default::default()
            },
            0,
        ));
    }
}
