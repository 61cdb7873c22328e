//! Computing one partition's change: leader election, ISR/ELR updates, reassignment
//! completion and directory assignment (Kafka 4.1.2's `PartitionChangeBuilder` and
//! `PartitionReassignmentReplicas.maybeCompleteReassignment`).
//!
//! The builder is pure: it reads the current [`PartitionRegistration`] and returns the
//! [`PartitionChange`] (a PartitionChangeRecord) to append, or `None` if nothing changes.
//! Eligible leader replicas (KIP-966) follow Java exactly, including the order in which the ELR
//! and last-known-ELR lists come out of Java's `HashSet` (see [`crate::java_order`]).

use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use crate::image::partition::{
    LeaderRecoveryState, PartitionChange, PartitionRegistration, NO_LEADER, NO_LEADER_CHANGE,
};
use crate::java_order::JavaIntHashSet;

/// Which leaders an election may pick (`PartitionChangeBuilder.Election`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Election {
    /// Elect the preferred replica if it is in the ISR.
    Preferred,
    /// Elect any ISR member (the default).
    Online,
    /// Prefer the ISR, but pick a replica outside it rather than leave the partition offline.
    Unclean,
}

/// Builds the change of one partition. Set the targets, then call [`PartitionChangeBuilder::build`].
pub struct PartitionChangeBuilder<'a> {
    partition: &'a PartitionRegistration,
    topic_id: Uuid,
    partition_id: i32,
    is_acceptable_leader: &'a dyn Fn(i32) -> bool,
    metadata_version: MetadataVersion,
    min_isr: usize,
    target_isr: Vec<i32>,
    target_replicas: Vec<i32>,
    target_removing: Vec<i32>,
    target_adding: Vec<i32>,
    target_elr: Vec<i32>,
    target_last_known_elr: Vec<i32>,
    target_directories: Vec<(i32, Uuid)>,
    unclean_shutdown_replicas: Vec<i32>,
    election: Election,
    target_leader_recovery_state: LeaderRecoveryState,
    elr_enabled: bool,
    default_dir: &'a dyn Fn(i32) -> Uuid,
    /// Kafka's `useLastKnownLeaderInBalancedRecovery`; always true in a 4.1.2 controller.
    use_last_known_leader: bool,
}

impl<'a> PartitionChangeBuilder<'a> {
    /// A builder whose targets are the partition's current state.
    ///
    /// `is_acceptable_leader` is Kafka's `LeaderAcceptor` (active broker whose replica directory
    /// is online); `min_isr` is the topic's effective `min.insync.replicas` (capped at the
    /// replication factor); `default_dir` gives the directory of a replica that has none
    /// assigned (`ClusterControlManager.defaultDir`).
    pub fn new(
        partition: &'a PartitionRegistration,
        topic_id: Uuid,
        partition_id: i32,
        is_acceptable_leader: &'a dyn Fn(i32) -> bool,
        metadata_version: MetadataVersion,
        min_isr: usize,
        default_dir: &'a dyn Fn(i32) -> Uuid,
    ) -> Self {
        PartitionChangeBuilder {
            partition,
            topic_id,
            partition_id,
            is_acceptable_leader,
            metadata_version,
            min_isr,
            target_isr: partition.isr.clone(),
            target_replicas: partition.replicas.clone(),
            target_removing: partition.removing_replicas.clone(),
            target_adding: partition.adding_replicas.clone(),
            target_elr: partition.elr.clone(),
            target_last_known_elr: partition.last_known_elr.clone(),
            target_directories: partition
                .replicas
                .iter()
                .copied()
                .zip(partition.directories.iter().copied())
                .collect(),
            unclean_shutdown_replicas: Vec::new(),
            election: Election::Online,
            target_leader_recovery_state: partition.leader_recovery_state,
            elr_enabled: false,
            default_dir,
            use_last_known_leader: true,
        }
    }

    /// Sets the target ISR.
    pub fn set_target_isr(mut self, isr: Vec<i32>) -> Self {
        self.target_isr = isr;
        self
    }

    /// Sets the target replica list.
    pub fn set_target_replicas(mut self, replicas: Vec<i32>) -> Self {
        self.target_replicas = replicas;
        self
    }

    /// Sets the target removing-replicas list.
    pub fn set_target_removing(mut self, removing: Vec<i32>) -> Self {
        self.target_removing = removing;
        self
    }

    /// Sets the target adding-replicas list.
    pub fn set_target_adding(mut self, adding: Vec<i32>) -> Self {
        self.target_adding = adding;
        self
    }

    /// Replicas that shut down uncleanly: excluded from the new ELR.
    pub fn set_unclean_shutdown_replicas(mut self, replicas: Vec<i32>) -> Self {
        self.unclean_shutdown_replicas = replicas;
        self
    }

    /// Sets the election type.
    pub fn set_election(mut self, election: Election) -> Self {
        self.election = election;
        self
    }

    /// Sets the target leader recovery state.
    pub fn set_target_leader_recovery_state(mut self, state: LeaderRecoveryState) -> Self {
        self.target_leader_recovery_state = state;
        self
    }

    /// Enables the ELR rules (`eligible.leader.replicas.version` ≥ 1).
    pub fn set_elr_enabled(mut self, enabled: bool) -> Self {
        self.elr_enabled = enabled;
        self
    }

    /// Assigns `broker`'s replica to `dir` (AssignReplicasToDirs).
    pub fn set_directory(mut self, broker: i32, dir: Uuid) -> Self {
        match self
            .target_directories
            .iter_mut()
            .find(|(b, _)| *b == broker)
        {
            Some(entry) => entry.1 = dir,
            None => self.target_directories.push((broker, dir)),
        }
        self
    }

    fn is_valid_new_leader(&self, replica: i32) -> bool {
        (self.target_isr.contains(&replica)
            || (self.target_isr.is_empty() && self.target_elr.contains(&replica)))
            && (self.is_acceptable_leader)(replica)
    }

    fn can_elect_last_known_leader(&self) -> bool {
        if !self.elr_enabled || !self.use_last_known_leader {
            return false;
        }
        if !self.target_elr.is_empty() || !self.target_isr.is_empty() {
            return false;
        }
        if self.partition.last_known_elr.len() != 1 {
            return false;
        }
        (self.is_acceptable_leader)(self.partition.last_known_elr[0])
    }

    /// Returns (leader, unclean).
    fn elect_leader(&self) -> (i32, bool) {
        if self.election == Election::Preferred {
            let preferred = self.target_replicas.first().copied().unwrap_or(NO_LEADER);
            if self.is_valid_new_leader(preferred) {
                return (preferred, false);
            }
            if self.is_valid_new_leader(self.partition.leader) {
                return (self.partition.leader, false);
            }
            if let Some(r) = self
                .target_replicas
                .iter()
                .skip(1)
                .copied()
                .find(|r| self.is_valid_new_leader(*r))
            {
                return (r, false);
            }
            if self.can_elect_last_known_leader() {
                return (self.partition.last_known_elr[0], true);
            }
            return (NO_LEADER, false);
        }
        if self.is_valid_new_leader(self.partition.leader) {
            return (self.partition.leader, false);
        }
        if let Some(r) = self
            .target_replicas
            .iter()
            .copied()
            .find(|r| self.is_valid_new_leader(*r))
        {
            return (r, false);
        }
        if self.can_elect_last_known_leader() {
            return (self.partition.last_known_elr[0], true);
        }
        if self.election == Election::Unclean {
            if let Some(r) = self
                .target_replicas
                .iter()
                .copied()
                .find(|r| (self.is_acceptable_leader)(*r))
            {
                return (r, true);
            }
        }
        (NO_LEADER, false)
    }

    fn try_election(&mut self, change: &mut PartitionChange) {
        let (node, unclean) = self.elect_leader();
        if node == self.partition.leader {
            return;
        }
        if self.target_elr.contains(&node) {
            self.target_isr = vec![node];
            self.target_elr.retain(|r| *r != node);
        }
        change.leader = node;
        if unclean {
            // An unclean election forces ISR = [leader]; data may be lost.
            change.isr = Some(vec![node]);
            if self.partition.leader_recovery_state != LeaderRecoveryState::Recovering {
                change.leader_recovery_state = LeaderRecoveryState::Recovering.value();
            }
        }
    }

    fn complete_reassignment_if_needed(&mut self) {
        if self.target_removing.is_empty() && self.target_adding.is_empty() {
            return;
        }
        let mut new_isr = self.target_isr.clone();
        let mut new_replicas = self.target_replicas.clone();
        if !self.target_removing.is_empty() {
            new_isr.retain(|r| !self.target_removing.contains(r));
            if new_isr.is_empty() {
                return;
            }
            new_replicas.retain(|r| !self.target_removing.contains(r));
            if new_replicas.is_empty() {
                return;
            }
        }
        if !new_replicas.iter().all(|r| new_isr.contains(r)) {
            return;
        }
        self.target_isr = new_isr;
        self.target_replicas = new_replicas;
        self.target_removing.clear();
        self.target_adding.clear();
    }

    fn maybe_populate_target_elr(&mut self) {
        if !self.elr_enabled {
            return;
        }
        if self.target_isr.len() >= self.min_isr {
            self.target_elr.clear();
            self.target_last_known_elr.clear();
            return;
        }
        let target_isr = self.target_isr.clone();
        let mut candidates = JavaIntHashSet::from_collection(&self.target_elr);
        for r in &self.partition.isr {
            candidates.add(*r);
        }
        let new_elr: Vec<i32> = candidates
            .iter()
            .filter(|r| !target_isr.contains(r))
            .filter(|r| !self.unclean_shutdown_replicas.contains(r))
            .collect();
        for r in &self.target_last_known_elr {
            candidates.add(*r);
        }
        self.target_last_known_elr = candidates
            .iter()
            .filter(|r| !target_isr.contains(r))
            .filter(|r| !new_elr.contains(r))
            .collect();
        self.target_elr = new_elr;
    }

    fn maybe_update_record_elr(&mut self, change: &mut PartitionChange) {
        let clean_election = change.isr.is_none();
        if !clean_election || !self.elr_enabled {
            self.target_elr.clear();
            self.target_last_known_elr.clear();
        }
        if self.target_elr != self.partition.elr {
            change.eligible_leader_replicas = Some(self.target_elr.clone());
        }
        if self.use_last_known_leader
            && self.partition.last_known_elr.len() == 1
            && (change.leader == NO_LEADER
                || (change.leader == NO_LEADER_CHANGE && self.partition.leader == NO_LEADER))
        {
            self.target_last_known_elr = self.partition.last_known_elr.clone();
        }
        if !self.use_last_known_leader
            && self.target_last_known_elr != self.partition.last_known_elr
        {
            change.last_known_elr = Some(self.target_last_known_elr.clone());
        }
    }

    fn maybe_update_last_known_leader(&self, change: &mut PartitionChange) {
        if !self.use_last_known_leader || !self.elr_enabled {
            return;
        }
        if change.leader == NO_LEADER && self.partition.last_known_elr.is_empty() {
            change.last_known_elr = Some(vec![self.partition.leader]);
        } else if change.leader >= 0 && !self.partition.last_known_elr.is_empty() {
            change.last_known_elr = Some(Vec::new());
        }
    }

    fn set_assignment_changes(&self, change: &mut PartitionChange) {
        if !self.target_replicas.is_empty() {
            if self.metadata_version.is_directory_assignment_supported() {
                let directories: Vec<Uuid> = self
                    .target_replicas
                    .iter()
                    .map(|r| {
                        self.target_directories
                            .iter()
                            .find(|(b, _)| b == r)
                            .map(|(_, d)| *d)
                            .unwrap_or_else(|| (self.default_dir)(*r))
                    })
                    .collect();
                if directories != self.partition.directories {
                    change.directories = Some(directories);
                }
            }
            if self.target_replicas != self.partition.replicas {
                change.replicas = Some(self.target_replicas.clone());
            }
        }
        if self.target_removing != self.partition.removing_replicas {
            change.removing_replicas = Some(self.target_removing.clone());
        }
        if self.target_adding != self.partition.adding_replicas {
            change.adding_replicas = Some(self.target_adding.clone());
        }
    }

    /// The change to append, or `None` if it would change nothing (`PartitionChangeBuilder.build`).
    pub fn build(mut self) -> Option<PartitionChange> {
        let mut change = PartitionChange::new(self.topic_id, self.partition_id);
        self.complete_reassignment_if_needed();
        self.maybe_populate_target_elr();
        self.try_election(&mut change);
        // A reassignment that drops replicas bumps the leader epoch.
        if change.leader == NO_LEADER_CHANGE
            && !self
                .partition
                .replicas
                .iter()
                .all(|r| self.target_replicas.contains(r))
        {
            change.leader = self.partition.leader;
        }
        self.maybe_update_record_elr(&mut change);
        if change.isr.is_none()
            && (!self.target_isr.is_empty() || self.elr_enabled)
            && self.target_isr != self.partition.isr
        {
            change.isr = Some(self.target_isr.clone());
        }
        // Before 3.6-IV0 brokers needed a leader epoch bump on every ISR shrink (KAFKA-15021).
        if self
            .metadata_version
            .is_leader_epoch_bump_required_on_isr_shrink()
            && change.leader == NO_LEADER_CHANGE
        {
            if let Some(isr) = &change.isr {
                if !self.partition.isr.iter().all(|r| isr.contains(r)) {
                    change.leader = self.partition.leader;
                }
            }
        }
        self.maybe_update_last_known_leader(&mut change);
        self.set_assignment_changes(&mut change);
        if self.target_leader_recovery_state != self.partition.leader_recovery_state {
            change.leader_recovery_state = self.target_leader_recovery_state.value();
        }
        if change.is_no_op() {
            None
        } else {
            Some(change)
        }
    }
}

#[cfg(test)]
mod tests;
