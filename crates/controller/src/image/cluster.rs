//! Broker and controller registrations (`ClusterImage`, Kafka's `BrokerRegistration`,
//! `ControllerRegistration`, and `ClusterControlManager`'s `directoryToBroker` map).

use std::sync::Arc;

use imbl::OrdMap;
use uuid::Uuid;

use crate::error::ReplayError;
use crate::ids::is_directory_online;

/// A listener endpoint as registered (`RegisterBrokerRecord.BrokerEndpoint`,
/// `RegisterControllerRecord.ControllerEndpoint`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// Listener name.
    pub name: String,
    /// Host name.
    pub host: String,
    /// Port.
    pub port: u16,
    /// Security protocol id (0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL).
    pub security_protocol: i16,
}

/// A supported feature range a node registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureRange {
    /// Feature name.
    pub name: String,
    /// Lowest supported level.
    pub min_supported: i16,
    /// Highest supported level.
    pub max_supported: i16,
}

/// A registered broker (`org.apache.kafka.metadata.BrokerRegistration`), plus the offset of
/// the RegisterBrokerRecord that created it (`ClusterControlManager.registerBrokerRecordOffsets`:
/// a heartbeat is "caught up" once its metadata offset reaches it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerRegistration {
    /// Broker id.
    pub id: i32,
    /// Broker epoch: the offset of the registration batch of this incarnation.
    pub epoch: i64,
    /// Incarnation id (random per broker process start).
    pub incarnation_id: Uuid,
    /// Listeners in record order.
    pub listeners: Vec<Endpoint>,
    /// Supported feature ranges in record order.
    pub features: Vec<FeatureRange>,
    /// Rack, if configured.
    pub rack: Option<String>,
    /// Fenced (not allowed to lead or be in an ISR).
    pub fenced: bool,
    /// In controlled shutdown.
    pub in_controlled_shutdown: bool,
    /// ZK migration flag (always false for KRaft brokers).
    pub is_migrating_zk_broker: bool,
    /// Online log directories, sorted (as Java's `BrokerRegistration` sorts them).
    pub directories: Vec<Uuid>,
    /// Cordoned log directories (KIP-1066, metadata.version 4.3-IV0+: RegisterBrokerRecord v4,
    /// BrokerRegistrationChangeRecord v3): no new replica is placed on them; `None` until the
    /// broker first reports them.
    pub cordoned_directories: Option<Vec<Uuid>>,
    /// Offset of the RegisterBrokerRecord (a snapshot load uses the snapshot's offset, which is
    /// not smaller).
    pub registration_offset: i64,
}

impl BrokerRegistration {
    /// `isActive`: neither fenced nor in controlled shutdown.
    pub fn is_active(&self) -> bool {
        !self.fenced && !self.in_controlled_shutdown
    }

    /// `hasOnlineDir`.
    pub fn has_online_dir(&self, dir: &Uuid) -> bool {
        is_directory_online(dir, &self.directories)
    }

    /// `hasUncordonedDirs` (Kafka 4.4): true without directory information or cordoned list,
    /// else whether some directory is not cordoned. A broker all of whose directories are
    /// cordoned gets no new replicas (`ClusterControlManager.usableBrokers`).
    pub fn has_uncordoned_directories(&self) -> bool {
        match &self.cordoned_directories {
            None => true,
            Some(_) if self.directories.is_empty() => true,
            Some(cordoned) => self.directories.iter().any(|d| !cordoned.contains(d)),
        }
    }

    /// The supported range of `feature`, if registered.
    pub fn feature(&self, name: &str) -> Option<&FeatureRange> {
        self.features.iter().find(|f| f.name == name)
    }
}

/// A registered controller (`org.apache.kafka.metadata.ControllerRegistration`, KIP-919).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerRegistration {
    /// Controller node id.
    pub id: i32,
    /// Incarnation id.
    pub incarnation_id: Uuid,
    /// ZK migration readiness (always false in 4.x).
    pub zk_migration_ready: bool,
    /// Controller listeners in record order.
    pub listeners: Vec<Endpoint>,
    /// Supported feature ranges in record order.
    pub features: Vec<FeatureRange>,
}

/// All broker and controller registrations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterImage {
    brokers: OrdMap<i32, Arc<BrokerRegistration>>,
    controllers: OrdMap<i32, Arc<ControllerRegistration>>,
    /// Directory id → owning broker.
    directory_owners: OrdMap<Uuid, i32>,
}

impl ClusterImage {
    /// The registration of broker `id`.
    pub fn broker(&self, id: i32) -> Option<&Arc<BrokerRegistration>> {
        self.brokers.get(&id)
    }

    /// All brokers by id.
    pub fn brokers(&self) -> impl Iterator<Item = &Arc<BrokerRegistration>> {
        self.brokers.values()
    }

    /// Number of registered brokers.
    pub fn num_brokers(&self) -> usize {
        self.brokers.len()
    }

    /// The registration of controller `id`.
    pub fn controller(&self, id: i32) -> Option<&Arc<ControllerRegistration>> {
        self.controllers.get(&id)
    }

    /// All registered controllers by id.
    pub fn controllers(&self) -> impl Iterator<Item = &Arc<ControllerRegistration>> {
        self.controllers.values()
    }

    /// The broker owning directory `dir`.
    pub fn directory_owner(&self, dir: &Uuid) -> Option<i32> {
        self.directory_owners.get(dir).copied()
    }

    /// `isActive(id)`: registered, unfenced and not in controlled shutdown.
    pub fn is_active(&self, id: i32) -> bool {
        self.brokers.get(&id).is_some_and(|b| b.is_active())
    }

    /// `hasOnlineDir(id, dir)`: the broker is registered and `dir` counts as online for it.
    pub fn has_online_dir(&self, id: i32, dir: &Uuid) -> bool {
        self.brokers.get(&id).is_some_and(|b| b.has_online_dir(dir))
    }

    /// Puts a registration (RegisterBrokerRecord replay), replacing a previous incarnation.
    ///
    /// # Errors
    /// [`ReplayError::DirectoryConflict`] if another broker owns one of its directories.
    pub fn put_broker(&mut self, mut registration: BrokerRegistration) -> Result<(), ReplayError> {
        registration.directories.sort_unstable();
        let id = registration.id;
        let previous_dirs = self
            .brokers
            .get(&id)
            .map(|b| b.directories.clone())
            .unwrap_or_default();
        self.update_directories(id, &previous_dirs, &registration.directories)?;
        self.brokers.insert(id, Arc::new(registration));
        Ok(())
    }

    /// Applies a fence/unfence/controlled-shutdown/log-dirs change
    /// (`replayRegistrationChange`).
    ///
    /// # Errors
    /// [`ReplayError::UnknownBroker`] or [`ReplayError::BrokerEpochMismatch`] for a record that
    /// does not match the current registration.
    pub fn change_broker(
        &mut self,
        id: i32,
        epoch: i64,
        fenced: Option<bool>,
        in_controlled_shutdown: Option<bool>,
        directories: Option<Vec<Uuid>>,
    ) -> Result<(), ReplayError> {
        let current = self.check_broker_epoch(id, epoch)?.clone();
        let mut next = (*current).clone();
        if let Some(fenced) = fenced {
            next.fenced = fenced;
        }
        if let Some(in_controlled_shutdown) = in_controlled_shutdown {
            next.in_controlled_shutdown = in_controlled_shutdown;
        }
        if let Some(mut dirs) = directories {
            dirs.sort_unstable();
            next.directories = dirs;
        }
        self.update_directories(id, &current.directories, &next.directories)?;
        if next != *current {
            self.brokers.insert(id, Arc::new(next));
        }
        Ok(())
    }

    /// Removes a broker (UnregisterBrokerRecord replay).
    ///
    /// # Errors
    /// As [`ClusterImage::change_broker`].
    pub fn remove_broker(&mut self, id: i32, epoch: i64) -> Result<(), ReplayError> {
        let current = self.check_broker_epoch(id, epoch)?.clone();
        self.update_directories(id, &current.directories, &[])?;
        self.brokers.remove(&id);
        Ok(())
    }

    /// Puts a controller registration (RegisterControllerRecord replay).
    pub fn put_controller(&mut self, registration: ControllerRegistration) {
        self.controllers
            .insert(registration.id, Arc::new(registration));
    }

    /// Removes a controller registration (UnregisterControllerRecord, Kafka 4.4).
    pub fn remove_controller(&mut self, id: i32) {
        self.controllers.remove(&id);
    }

    /// Replaces a registration's cordoned directories (BrokerRegistrationChangeRecord v3).
    ///
    /// # Errors
    /// As [`ClusterImage::change_broker`].
    pub fn set_cordoned_directories(
        &mut self,
        id: i32,
        epoch: i64,
        dirs: Vec<Uuid>,
    ) -> Result<(), ReplayError> {
        let current = self.check_broker_epoch(id, epoch)?;
        let mut next = (**current).clone();
        next.cordoned_directories = Some(dirs);
        self.brokers.insert(id, Arc::new(next));
        Ok(())
    }

    /// Sets every registration's offset (test helper for snapshot round trips, where all
    /// records replay at the snapshot's offset).
    #[cfg(test)]
    pub(crate) fn set_registration_offsets(&mut self, offset: i64) {
        let ids: Vec<i32> = self.brokers.keys().copied().collect();
        for id in ids {
            let mut b = (**self.brokers.get(&id).unwrap()).clone();
            b.registration_offset = offset;
            self.brokers.insert(id, Arc::new(b));
        }
    }

    fn check_broker_epoch(
        &self,
        id: i32,
        epoch: i64,
    ) -> Result<&Arc<BrokerRegistration>, ReplayError> {
        let current = self
            .brokers
            .get(&id)
            .ok_or(ReplayError::UnknownBroker(id))?;
        if current.epoch != epoch {
            return Err(ReplayError::BrokerEpochMismatch {
                broker_id: id,
                record_epoch: epoch,
                registered_epoch: current.epoch,
            });
        }
        Ok(current)
    }

    fn update_directories(
        &mut self,
        id: i32,
        remove: &[Uuid],
        add: &[Uuid],
    ) -> Result<(), ReplayError> {
        for dir in add {
            if let Some(owner) = self.directory_owners.get(dir) {
                if *owner != id {
                    return Err(ReplayError::DirectoryConflict {
                        directory: *dir,
                        owner: *owner,
                        broker_id: id,
                    });
                }
            }
        }
        for dir in remove {
            if self.directory_owners.get(dir) == Some(&id) {
                self.directory_owners.remove(dir);
            }
        }
        for dir in add {
            self.directory_owners.insert(*dir, id);
        }
        Ok(())
    }
}
