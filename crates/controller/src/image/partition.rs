//! One partition's registration (`org.apache.kafka.metadata.PartitionRegistration`) and the
//! change a PartitionChangeRecord applies to it (`PartitionRegistration.merge`).

use uuid::Uuid;

use crate::error::ReplayError;
use crate::ids::DIRECTORY_MIGRATING;

/// "No leader" (`LeaderConstants.NO_LEADER`).
pub const NO_LEADER: i32 = -1;

/// "Leader unchanged" in a PartitionChangeRecord (`LeaderConstants.NO_LEADER_CHANGE`).
pub const NO_LEADER_CHANGE: i32 = -2;

/// `LeaderRecoveryState`: whether the leader was elected uncleanly and is still recovering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LeaderRecoveryState {
    /// 0: the leader is a clean leader (or has recovered).
    #[default]
    Recovered,
    /// 1: elected by an unclean election; the ISR must stay `[leader]` until the broker reports
    /// recovery through AlterPartition.
    Recovering,
}

impl LeaderRecoveryState {
    /// The record value (0 or 1).
    pub fn value(self) -> i8 {
        match self {
            LeaderRecoveryState::Recovered => 0,
            LeaderRecoveryState::Recovering => 1,
        }
    }

    /// `LeaderRecoveryState.of`; `None` for values other than 0 and 1.
    pub fn of(value: i8) -> Option<Self> {
        match value {
            0 => Some(LeaderRecoveryState::Recovered),
            1 => Some(LeaderRecoveryState::Recovering),
            _ => None,
        }
    }
}

/// The state of one partition, as replayed from PartitionRecord and PartitionChangeRecords.
///
/// Invariants checked by [`PartitionRegistration::check_invariants`]: `directories` has one
/// entry per replica; ISR ⊆ replicas; leader ∈ ISR or `NO_LEADER` (an unclean election may pick
/// a leader outside the old ISR, but the record then sets ISR = `[leader]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionRegistration {
    /// Replica broker ids, preferred leader first.
    pub replicas: Vec<i32>,
    /// Log directory of each replica (same order as `replicas`); `DIRECTORY_MIGRATING` when the
    /// record carried none.
    pub directories: Vec<Uuid>,
    /// In-sync replicas.
    pub isr: Vec<i32>,
    /// Replicas being removed by a reassignment.
    pub removing_replicas: Vec<i32>,
    /// Replicas being added by a reassignment.
    pub adding_replicas: Vec<i32>,
    /// Eligible leader replicas (KIP-966).
    pub elr: Vec<i32>,
    /// Last known ELR members (KIP-966); with the default settings the last leader only.
    pub last_known_elr: Vec<i32>,
    /// Leader broker id or [`NO_LEADER`].
    pub leader: i32,
    /// Whether the leader was elected uncleanly.
    pub leader_recovery_state: LeaderRecoveryState,
    /// Bumped on every leader change.
    pub leader_epoch: i32,
    /// Bumped on every change of the partition.
    pub partition_epoch: i32,
}

/// The changes of a PartitionChangeRecord; `None` (or `NO_LEADER_CHANGE`, or `-1` for the
/// recovery state) means "unchanged". Field meanings as in `PartitionChangeRecord.json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionChange {
    /// Topic id.
    pub topic_id: Uuid,
    /// Partition index.
    pub partition_id: i32,
    /// New ISR.
    pub isr: Option<Vec<i32>>,
    /// New leader, [`NO_LEADER`], or [`NO_LEADER_CHANGE`].
    pub leader: i32,
    /// New replica list.
    pub replicas: Option<Vec<i32>>,
    /// New removing-replicas list.
    pub removing_replicas: Option<Vec<i32>>,
    /// New adding-replicas list.
    pub adding_replicas: Option<Vec<i32>>,
    /// New leader recovery state, or -1 for unchanged.
    pub leader_recovery_state: i8,
    /// New directories (record v1+); `Some(empty)` means MIGRATING for every replica.
    pub directories: Option<Vec<Uuid>>,
    /// New ELR (record v2+).
    pub eligible_leader_replicas: Option<Vec<i32>>,
    /// New last known ELR (record v2+).
    pub last_known_elr: Option<Vec<i32>>,
}

impl PartitionChange {
    /// A change that changes nothing (yet).
    pub fn new(topic_id: Uuid, partition_id: i32) -> Self {
        PartitionChange {
            topic_id,
            partition_id,
            isr: None,
            leader: NO_LEADER_CHANGE,
            replicas: None,
            removing_replicas: None,
            adding_replicas: None,
            leader_recovery_state: -1,
            directories: None,
            eligible_leader_replicas: None,
            last_known_elr: None,
        }
    }

    /// `PartitionChangeBuilder.changeRecordIsNoOp`: true if no field is set.
    pub fn is_no_op(&self) -> bool {
        self.isr.is_none()
            && self.eligible_leader_replicas.is_none()
            && self.last_known_elr.is_none()
            && self.leader == NO_LEADER_CHANGE
            && self.replicas.is_none()
            && self.removing_replicas.is_none()
            && self.adding_replicas.is_none()
            && self.leader_recovery_state == -1
            && self.directories.is_none()
    }
}

/// `PartitionRegistration.defaultToMigrating`: an absent list, or one of only MIGRATING entries,
/// becomes MIGRATING for every replica.
fn default_to_migrating(directories: Vec<Uuid>, num_replicas: usize) -> Vec<Uuid> {
    if directories.iter().all(|d| *d == DIRECTORY_MIGRATING) {
        vec![DIRECTORY_MIGRATING; num_replicas]
    } else {
        directories
    }
}

impl PartitionRegistration {
    /// Builds a registration from PartitionRecord fields (`new PartitionRegistration(record)`).
    ///
    /// # Errors
    /// [`ReplayError::InvalidReplicaDirectories`] if a non-empty directory list does not match
    /// the replica list in length.
    #[allow(clippy::too_many_arguments)]
    pub fn from_record_fields(
        topic_id: Uuid,
        partition_id: i32,
        replicas: Vec<i32>,
        directories: Vec<Uuid>,
        isr: Vec<i32>,
        removing_replicas: Vec<i32>,
        adding_replicas: Vec<i32>,
        leader: i32,
        leader_recovery_state: i8,
        leader_epoch: i32,
        partition_epoch: i32,
        elr: Vec<i32>,
        last_known_elr: Vec<i32>,
    ) -> Result<Self, ReplayError> {
        if !directories.is_empty() && directories.len() != replicas.len() {
            return Err(ReplayError::InvalidReplicaDirectories {
                topic_id,
                partition_id,
                directories: directories.len(),
                replicas: replicas.len(),
            });
        }
        let leader_recovery_state =
            LeaderRecoveryState::of(leader_recovery_state).ok_or(ReplayError::InvalidField {
                record: "PartitionRecord",
                field: "LeaderRecoveryState",
                value: i64::from(leader_recovery_state),
            })?;
        let directories = default_to_migrating(directories, replicas.len());
        Ok(PartitionRegistration {
            replicas,
            directories,
            isr,
            removing_replicas,
            adding_replicas,
            elr,
            last_known_elr,
            leader,
            leader_recovery_state,
            leader_epoch,
            partition_epoch,
        })
    }

    /// `PartitionRegistration.merge`: the registration after `change`. The partition epoch
    /// always grows by one; the leader epoch grows by one iff the change sets `Leader`.
    ///
    /// # Errors
    /// [`ReplayError::InvalidReplicaDirectories`] for a directory list whose length differs
    /// from the (new) replica list; [`ReplayError::InvalidField`] for a bad recovery state.
    pub fn merge(&self, change: &PartitionChange) -> Result<Self, ReplayError> {
        let replicas = change
            .replicas
            .clone()
            .unwrap_or_else(|| self.replicas.clone());
        if let (Some(new_replicas), Some(dirs)) = (&change.replicas, &change.directories) {
            if !dirs.is_empty() && dirs.len() != new_replicas.len() {
                return Err(ReplayError::InvalidReplicaDirectories {
                    topic_id: change.topic_id,
                    partition_id: change.partition_id,
                    directories: dirs.len(),
                    replicas: new_replicas.len(),
                });
            }
        }
        let directories = default_to_migrating(
            change
                .directories
                .clone()
                .unwrap_or_else(|| self.directories.clone()),
            replicas.len(),
        );
        if directories.len() != replicas.len() {
            // Java's constructor rejects this too ("The lengths for replicas and directories do
            // not match"), e.g. a Replicas change without a Directories change.
            return Err(ReplayError::InvalidReplicaDirectories {
                topic_id: change.topic_id,
                partition_id: change.partition_id,
                directories: directories.len(),
                replicas: replicas.len(),
            });
        }
        let (leader, leader_epoch) = if change.leader == NO_LEADER_CHANGE {
            (self.leader, self.leader_epoch)
        } else {
            (change.leader, self.leader_epoch + 1)
        };
        let leader_recovery_state = match change.leader_recovery_state {
            -1 => self.leader_recovery_state,
            value => LeaderRecoveryState::of(value).ok_or(ReplayError::InvalidField {
                record: "PartitionChangeRecord",
                field: "LeaderRecoveryState",
                value: i64::from(value),
            })?,
        };
        Ok(PartitionRegistration {
            replicas,
            directories,
            isr: change.isr.clone().unwrap_or_else(|| self.isr.clone()),
            removing_replicas: change
                .removing_replicas
                .clone()
                .unwrap_or_else(|| self.removing_replicas.clone()),
            adding_replicas: change
                .adding_replicas
                .clone()
                .unwrap_or_else(|| self.adding_replicas.clone()),
            elr: change
                .eligible_leader_replicas
                .clone()
                .unwrap_or_else(|| self.elr.clone()),
            last_known_elr: change
                .last_known_elr
                .clone()
                .unwrap_or_else(|| self.last_known_elr.clone()),
            leader,
            leader_recovery_state,
            leader_epoch,
            partition_epoch: self.partition_epoch + 1,
        })
    }

    /// `hasLeader`.
    pub fn has_leader(&self) -> bool {
        self.leader != NO_LEADER
    }

    /// `preferredReplica`: the first replica, or -1.
    pub fn preferred_replica(&self) -> i32 {
        self.replicas.first().copied().unwrap_or(NO_LEADER)
    }

    /// `hasPreferredLeader`.
    pub fn has_preferred_leader(&self) -> bool {
        self.leader == self.preferred_replica()
    }

    /// `isReassignmentInProgress`: adding or removing replicas are set.
    pub fn is_reassignment_in_progress(&self) -> bool {
        !self.removing_replicas.is_empty() || !self.adding_replicas.is_empty()
    }

    /// The directory of `replica`, if it is a replica.
    pub fn directory(&self, replica: i32) -> Option<Uuid> {
        self.replicas
            .iter()
            .position(|r| *r == replica)
            .map(|i| self.directories[i])
    }

    /// The structural invariants every registration must keep; `Err` names the first broken one.
    /// Used as assertions by the controller (cheap: RF-sized vectors) and by tests.
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.directories.len() != self.replicas.len() {
            return Err(format!(
                "directories {:?} vs replicas {:?}",
                self.directories, self.replicas
            ));
        }
        if let Some(r) = self.isr.iter().find(|r| !self.replicas.contains(r)) {
            return Err(format!(
                "ISR member {r} not a replica: isr {:?} replicas {:?}",
                self.isr, self.replicas
            ));
        }
        if self.leader != NO_LEADER && !self.isr.contains(&self.leader) {
            return Err(format!("leader {} not in ISR {:?}", self.leader, self.isr));
        }
        let mut sorted = self.isr.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != self.isr.len() {
            return Err(format!("duplicate ISR members {:?}", self.isr));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg() -> PartitionRegistration {
        PartitionRegistration::from_record_fields(
            Uuid::from_u64_pair(1, 1),
            0,
            vec![1, 2, 3],
            vec![],
            vec![1, 2, 3],
            vec![],
            vec![],
            1,
            0,
            5,
            10,
            vec![],
            vec![],
        )
        .unwrap()
    }

    #[test]
    fn record_without_directories_defaults_to_migrating() {
        assert_eq!(reg().directories, vec![DIRECTORY_MIGRATING; 3]);
    }

    #[test]
    fn merge_bumps_partition_epoch_always_and_leader_epoch_only_with_leader() {
        let p = reg();
        let mut c = PartitionChange::new(Uuid::from_u64_pair(1, 1), 0);
        c.isr = Some(vec![1, 2]);
        let q = p.merge(&c).unwrap();
        assert_eq!((q.leader, q.leader_epoch, q.partition_epoch), (1, 5, 11));
        assert_eq!(q.isr, vec![1, 2]);
        c.leader = 2;
        let r = q.merge(&c).unwrap();
        assert_eq!((r.leader, r.leader_epoch, r.partition_epoch), (2, 6, 12));
        // Setting Leader to the current leader still bumps the leader epoch.
        let mut same = PartitionChange::new(Uuid::from_u64_pair(1, 1), 0);
        same.leader = 2;
        let s = r.merge(&same).unwrap();
        assert_eq!((s.leader, s.leader_epoch), (2, 7));
    }

    #[test]
    fn merge_rejects_mismatched_directories() {
        let mut c = PartitionChange::new(Uuid::from_u64_pair(1, 1), 0);
        c.replicas = Some(vec![1, 2]);
        c.directories = Some(vec![Uuid::from_u64_pair(9, 9)]);
        assert!(matches!(
            reg().merge(&c),
            Err(ReplayError::InvalidReplicaDirectories { .. })
        ));
        // A replica change without directories keeps the old (3-long) list: Java rejects it.
        let mut d = PartitionChange::new(Uuid::from_u64_pair(1, 1), 0);
        d.replicas = Some(vec![1, 2]);
        d.isr = Some(vec![1, 2]);
        let with_dirs = {
            let mut p = reg();
            p.directories = vec![
                Uuid::from_u64_pair(7, 1),
                Uuid::from_u64_pair(7, 2),
                Uuid::from_u64_pair(7, 3),
            ];
            p
        };
        assert!(with_dirs.merge(&d).is_err());
        // With MIGRATING directories the list is rebuilt for the new replica count.
        assert_eq!(reg().merge(&d).unwrap().directories.len(), 2);
    }

    #[test]
    fn invariants_detect_leader_outside_isr() {
        let mut p = reg();
        assert!(p.check_invariants().is_ok());
        p.isr = vec![2, 3];
        assert!(p
            .check_invariants()
            .unwrap_err()
            .contains("leader 1 not in ISR"));
        p.leader = NO_LEADER;
        assert!(p.check_invariants().is_ok());
        p.isr = vec![2, 4];
        assert!(p.check_invariants().is_err());
    }

    #[test]
    fn no_op_change() {
        let mut c = PartitionChange::new(Uuid::nil(), 0);
        assert!(c.is_no_op());
        c.leader_recovery_state = 0;
        assert!(!c.is_no_op());
    }
}
