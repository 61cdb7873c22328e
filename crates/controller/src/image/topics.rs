//! Topics and partitions of the image (`TopicsImage` + the indexes of Kafka's
//! `ReplicationControlManager`: `BrokersToIsrs`, `BrokersToElrs`, `directoriesToPartitions`,
//! `topicsWithCollisionChars`).
//!
//! The indexes exist so that fencing, unfencing and controlled shutdown touch only the
//! partitions of one broker instead of scanning every partition. All collections are `imbl`
//! persistent maps: cloning the whole image is O(1) and an update copies O(log n) nodes.
//! Ordered maps are used everywhere so that iteration (and therefore record order) is
//! deterministic.

use std::sync::Arc;

use imbl::{OrdMap, OrdSet};
use uuid::Uuid;

use super::partition::{PartitionRegistration, NO_LEADER};
use crate::error::ReplayError;
use crate::ids::is_reserved_directory;
use crate::topic_name::{has_collision_chars, unify_collision_chars};

/// A partition address by topic id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicIdPartition {
    /// Topic id.
    pub topic_id: Uuid,
    /// Partition index.
    pub partition_id: i32,
}

/// One topic: its name and partitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicImage {
    /// Topic id.
    pub id: Uuid,
    /// Topic name.
    pub name: Arc<str>,
    /// Partitions by index.
    pub partitions: OrdMap<i32, Arc<PartitionRegistration>>,
}

/// All topics, with the per-broker and per-directory indexes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicsImage {
    by_id: OrdMap<Uuid, TopicImage>,
    by_name: OrdMap<Arc<str>, Uuid>,
    /// Normalized name ('.' → '_') → names with collision characters mapping to it.
    collisions: OrdMap<String, OrdSet<Arc<str>>>,
    /// Broker id → partitions whose ISR contains it.
    isr_index: OrdMap<i32, OrdSet<TopicIdPartition>>,
    /// Leader id (or `NO_LEADER`) → partitions it leads.
    leader_index: OrdMap<i32, OrdSet<TopicIdPartition>>,
    /// Broker id → partitions whose ELR contains it.
    elr_index: OrdMap<i32, OrdSet<TopicIdPartition>>,
    /// Non-reserved directory id → partitions with a replica in it.
    dir_index: OrdMap<Uuid, OrdSet<TopicIdPartition>>,
    /// Partitions whose leader is not their preferred (first) replica (`imbalancedPartitions`).
    imbalanced: OrdSet<TopicIdPartition>,
}

fn index_add<K: Ord + Clone>(
    index: &mut OrdMap<K, OrdSet<TopicIdPartition>>,
    key: K,
    tp: TopicIdPartition,
) {
    index.entry(key).or_default().insert(tp);
}

fn index_remove<K: Ord + Clone>(
    index: &mut OrdMap<K, OrdSet<TopicIdPartition>>,
    key: &K,
    tp: &TopicIdPartition,
) {
    let now_empty = match index.get_mut(key) {
        Some(set) => {
            set.remove(tp);
            set.is_empty()
        }
        None => false,
    };
    if now_empty {
        index.remove(key);
    }
}

fn index_iter<K: Ord>(
    index: &OrdMap<K, OrdSet<TopicIdPartition>>,
    key: &K,
) -> Vec<TopicIdPartition> {
    index
        .get(key)
        .map(|s| s.iter().copied().collect())
        .unwrap_or_default()
}

impl TopicsImage {
    /// The topic with this id.
    pub fn get(&self, id: &Uuid) -> Option<&TopicImage> {
        self.by_id.get(id)
    }

    /// The id of the topic with this name.
    pub fn id_of(&self, name: &str) -> Option<Uuid> {
        self.by_name.get(name).copied()
    }

    /// The topic with this name.
    pub fn get_by_name(&self, name: &str) -> Option<&TopicImage> {
        self.id_of(name).and_then(|id| self.by_id.get(&id))
    }

    /// One partition.
    pub fn partition(
        &self,
        topic_id: &Uuid,
        partition_id: i32,
    ) -> Option<&Arc<PartitionRegistration>> {
        self.by_id
            .get(topic_id)
            .and_then(|t| t.partitions.get(&partition_id))
    }

    /// All topics, ordered by id.
    pub fn iter(&self) -> impl Iterator<Item = &TopicImage> {
        self.by_id.values()
    }

    /// Number of topics.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True if there are no topics.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// An existing topic whose name collides with `name` after '.'/'_' unification, if any
    /// (the first such name in sorted order).
    pub fn colliding_name(&self, name: &str) -> Option<Arc<str>> {
        if !has_collision_chars(name) {
            return None;
        }
        self.collisions
            .get(&unify_collision_chars(name))
            .and_then(|names| names.iter().next().cloned())
    }

    /// Partitions whose ISR contains `broker_id`.
    pub fn partitions_with_broker_in_isr(&self, broker_id: i32) -> Vec<TopicIdPartition> {
        index_iter(&self.isr_index, &broker_id)
    }

    /// Partitions whose ELR contains `broker_id`.
    pub fn partitions_with_broker_in_elr(&self, broker_id: i32) -> Vec<TopicIdPartition> {
        index_iter(&self.elr_index, &broker_id)
    }

    /// Partitions led by `broker_id`.
    pub fn partitions_led_by(&self, broker_id: i32) -> Vec<TopicIdPartition> {
        index_iter(&self.leader_index, &broker_id)
    }

    /// True if `broker_id` leads at least one partition (`BrokersToIsrs.hasLeaderships`).
    pub fn has_leaderships(&self, broker_id: i32) -> bool {
        broker_id != NO_LEADER
            && self
                .leader_index
                .get(&broker_id)
                .is_some_and(|s| !s.is_empty())
    }

    /// Partitions without a leader (`BrokersToIsrs.partitionsWithNoLeader`).
    pub fn partitions_without_leader(&self) -> Vec<TopicIdPartition> {
        index_iter(&self.leader_index, &NO_LEADER)
    }

    /// Partitions whose leader is not the preferred replica, including leaderless ones.
    pub fn imbalanced_partitions(&self) -> impl Iterator<Item = &TopicIdPartition> {
        self.imbalanced.iter()
    }

    /// Partitions with a replica in directory `dir` (reserved directory ids are not indexed).
    pub fn partitions_in_directory(&self, dir: &Uuid) -> Vec<TopicIdPartition> {
        index_iter(&self.dir_index, dir)
    }

    /// Adds a topic without partitions (TopicRecord replay).
    ///
    /// # Errors
    /// [`ReplayError::DuplicateTopic`] if the name exists, [`ReplayError::DuplicateTopicId`] if
    /// the id does.
    pub fn add_topic(&mut self, name: &str, id: Uuid) -> Result<(), ReplayError> {
        if let Some(existing) = self.by_name.get(name) {
            return Err(ReplayError::DuplicateTopic {
                name: name.to_owned(),
                existing: *existing,
                new: id,
            });
        }
        if self.by_id.contains_key(&id) {
            return Err(ReplayError::DuplicateTopicId(id));
        }
        let name: Arc<str> = Arc::from(name);
        if has_collision_chars(&name) {
            self.collisions
                .entry(unify_collision_chars(&name))
                .or_default()
                .insert(name.clone());
        }
        self.by_name.insert(name.clone(), id);
        self.by_id.insert(
            id,
            TopicImage {
                id,
                name,
                partitions: OrdMap::new(),
            },
        );
        Ok(())
    }

    /// Sets one partition (PartitionRecord or PartitionChangeRecord replay) and updates the
    /// indexes from the previous registration to the new one.
    ///
    /// # Errors
    /// [`ReplayError::UnknownTopic`] if the topic does not exist.
    pub fn put_partition(
        &mut self,
        topic_id: Uuid,
        partition_id: i32,
        registration: PartitionRegistration,
    ) -> Result<(), ReplayError> {
        let topic = self
            .by_id
            .get_mut(&topic_id)
            .ok_or(ReplayError::UnknownTopic(topic_id))?;
        let registration = Arc::new(registration);
        let previous = topic.partitions.insert(partition_id, registration.clone());
        let tp = TopicIdPartition {
            topic_id,
            partition_id,
        };
        if let Some(previous) = &previous {
            self.unindex(tp, previous);
        }
        self.index(tp, &registration);
        Ok(())
    }

    /// Removes a topic and all its partitions (RemoveTopicRecord replay); returns it.
    ///
    /// # Errors
    /// [`ReplayError::UnknownTopic`] if the topic does not exist.
    pub fn remove_topic(&mut self, topic_id: &Uuid) -> Result<TopicImage, ReplayError> {
        let topic = self
            .by_id
            .remove(topic_id)
            .ok_or(ReplayError::UnknownTopic(*topic_id))?;
        self.by_name.remove(&topic.name);
        if has_collision_chars(&topic.name) {
            let key = unify_collision_chars(&topic.name);
            let now_empty = match self.collisions.get_mut(&key) {
                Some(names) => {
                    names.remove(&topic.name);
                    names.is_empty()
                }
                None => false,
            };
            if now_empty {
                self.collisions.remove(&key);
            }
        }
        for (partition_id, partition) in topic.partitions.iter() {
            self.unindex(
                TopicIdPartition {
                    topic_id: *topic_id,
                    partition_id: *partition_id,
                },
                partition,
            );
        }
        Ok(topic)
    }

    fn index(&mut self, tp: TopicIdPartition, p: &PartitionRegistration) {
        for broker in &p.isr {
            index_add(&mut self.isr_index, *broker, tp);
        }
        for broker in &p.elr {
            index_add(&mut self.elr_index, *broker, tp);
        }
        index_add(&mut self.leader_index, p.leader, tp);
        for dir in &p.directories {
            if !is_reserved_directory(dir) {
                index_add(&mut self.dir_index, *dir, tp);
            }
        }
        if !p.has_preferred_leader() {
            self.imbalanced.insert(tp);
        }
    }

    fn unindex(&mut self, tp: TopicIdPartition, p: &PartitionRegistration) {
        for broker in &p.isr {
            index_remove(&mut self.isr_index, broker, &tp);
        }
        for broker in &p.elr {
            index_remove(&mut self.elr_index, broker, &tp);
        }
        index_remove(&mut self.leader_index, &p.leader, &tp);
        for dir in &p.directories {
            if !is_reserved_directory(dir) {
                index_remove(&mut self.dir_index, dir, &tp);
            }
        }
        self.imbalanced.remove(&tp);
    }

    /// Checks that every index agrees with the partitions (test and debug helper; O(partitions)).
    pub fn check_indexes(&self) -> Result<(), String> {
        let mut rebuilt = TopicsImage {
            by_id: self.by_id.clone(),
            by_name: self.by_name.clone(),
            collisions: self.collisions.clone(),
            ..TopicsImage::default()
        };
        for topic in self.by_id.values() {
            for (partition_id, p) in topic.partitions.iter() {
                rebuilt.index(
                    TopicIdPartition {
                        topic_id: topic.id,
                        partition_id: *partition_id,
                    },
                    p,
                );
            }
        }
        if rebuilt != *self {
            return Err("topic indexes disagree with the partitions".to_owned());
        }
        Ok(())
    }
}
