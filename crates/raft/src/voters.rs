//! The voter set (KIP-853): who votes, with which directory, reachable where.
//!
//! Follows Kafka's `VoterSet`, `ReplicaKey` and `Endpoints` (raft module). At kraft.version 0
//! the set is the static `controller.quorum.voters` ([`VoterSet::from_static`]): ids only, no
//! directory ids, every voter supporting kraft.version [0, 0]. At kraft.version 1 it comes from
//! `VotersRecord` control records in the log and in snapshots ([`VoterSet::from_record`]); the
//! history of those sets by offset lives in [`crate::control_state`].

use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::messages::voters_record::{
    Endpoint as RecordEndpoint, KRaftVersionFeature, Voter as RecordVoter,
};
use kafka_protocol::messages::VotersRecord;
use uuid::Uuid;

use crate::config::Endpoint;

/// `$endpoints` (a `BTreeMap<String, Endpoint>` by listener name) as a `Vec` of the generated
/// message struct `$ty`, which has `name`, `host` and `port` (VotersRecord endpoints, the
/// listeners of UpdateRaftVoter, AddRaftVoter and DescribeQuorum v2 nodes).
macro_rules! endpoint_list {
    ($ty:ty, $endpoints:expr) => {
        $endpoints
            .iter()
            .map(|(name, e)| {
                <$ty>::default()
                    .with_name(kafka_protocol::protocol::StrBytes::from_string(
                        name.clone(),
                    ))
                    .with_host(kafka_protocol::protocol::StrBytes::from_string(
                        e.host.clone(),
                    ))
                    .with_port(e.port)
            })
            .collect()
    };
}
pub(crate) use endpoint_list;

/// The endpoints in `$list` (generated message structs with `name`, `host`, `port`) by listener
/// name, upper-cased as Kafka's `ListenerName.normalised`.
macro_rules! endpoints_from {
    ($list:expr) => {
        $list
            .iter()
            .map(|l| {
                (
                    l.name.as_str().to_ascii_uppercase(),
                    $crate::config::Endpoint {
                        host: l.host.as_str().to_owned(),
                        port: l.port,
                    },
                )
            })
            .collect::<std::collections::BTreeMap<_, _>>()
    };
}
pub(crate) use endpoints_from;

/// Most voters a `VotersRecord` may list. Kafka has no bound; a quorum beyond a handful of
/// voters is not useful, and this keeps a hostile record from costing much.
pub const MAX_VOTERS: usize = 1024;

/// The kraft.version range this implementation supports (`Features.KRAFT_VERSION`: [0, 1]).
pub const SUPPORTED_KRAFT_VERSIONS: (i16, i16) = (0, 1);

/// A replica's identity (Kafka `ReplicaKey`): node id plus the directory id of its metadata
/// log directory. `directory_id` is `None` for voters of a static quorum and for peers that
/// sent the zero uuid (Kafka `ReplicaKey.NO_DIRECTORY_ID`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReplicaKey {
    /// Node id.
    pub id: i32,
    /// Directory id, `None` when unknown or zero on the wire.
    pub directory_id: Option<Uuid>,
}

impl ReplicaKey {
    /// A key from the wire form: the zero uuid means "no directory id".
    pub fn new(id: i32, directory_id: Uuid) -> Self {
        Self {
            id,
            directory_id: (!directory_id.is_nil()).then_some(directory_id),
        }
    }

    /// The directory id as the wire carries it (zero when absent).
    pub fn directory_id_or_zero(&self) -> Uuid {
        self.directory_id.unwrap_or(Uuid::nil())
    }
}

/// One voter (Kafka `VoterSet.VoterNode`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VoterNode {
    /// Id and directory id.
    pub key: ReplicaKey,
    /// Endpoints by listener name (upper case, as Kafka's `ListenerName.normalised`).
    pub endpoints: BTreeMap<String, Endpoint>,
    /// Supported kraft.version range, `(min, max)` inclusive.
    pub supported_kraft_versions: (i16, i16),
}

impl VoterNode {
    /// Kafka `VoterNode.isVoter(ReplicaKey)`: same id, and the same directory id unless this
    /// voter has none (a static voter matches any directory).
    pub fn matches(&self, key: ReplicaKey) -> bool {
        self.key.id == key.id
            && match self.key.directory_id {
                Some(dir) => key.directory_id == Some(dir),
                None => true,
            }
    }

    /// The endpoint on `listener`, if this voter has one.
    pub fn endpoint(&self, listener: &str) -> Option<&Endpoint> {
        self.endpoints.get(&listener.to_ascii_uppercase())
    }
}

/// Why a `VotersRecord` cannot be a voter set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VoterSetError {
    /// No voter listed (Kafka: "Voters cannot be empty").
    #[error("a voter set cannot be empty")]
    Empty,
    /// More than [`MAX_VOTERS`] voters.
    #[error("{0} voters is more than {MAX_VOTERS}")]
    TooMany(usize),
    /// A negative voter id.
    #[error("invalid voter id {0}")]
    InvalidId(i32),
    /// The same id twice.
    #[error("voter {0} is listed twice")]
    DuplicateId(i32),
    /// `min > max` in a supported kraft.version range.
    #[error("voter {id} supports kraft.version [{min}, {max}]")]
    InvalidRange {
        /// Voter id.
        id: i32,
        /// Minimum.
        min: i16,
        /// Maximum.
        max: i16,
    },
    /// A new set read from the log differs from the previous one by more than one voter added
    /// and one removed (Kafka `VoterSetHistory.addAt`: "Last voter set ... has an overlapping
    /// majority").
    #[error("voter set {new:?} at offset {offset} has no overlapping majority with {old:?}")]
    NoOverlappingMajority {
        /// Log offset of the new set.
        offset: i64,
        /// Previous voter ids.
        old: Vec<i32>,
        /// New voter ids.
        new: Vec<i32>,
    },
    /// A set at an offset not after the last one.
    #[error("voter set at offset {offset} is not after the last one at {last}")]
    OffsetNotIncreasing {
        /// Offset given.
        offset: i64,
        /// Offset of the last set.
        last: i64,
    },
}

/// A set of voters keyed by id (Kafka `VoterSet`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct VoterSet {
    voters: BTreeMap<i32, VoterNode>,
}

impl VoterSet {
    /// The static voter set of `controller.quorum.voters` (kraft.version 0): no directory ids,
    /// one endpoint on `listener`, kraft.version [0, 0] (Kafka `VoterSet.fromInetSocketAddresses`).
    pub fn from_static(voters: &BTreeMap<i32, Endpoint>, listener: &str) -> Self {
        Self {
            voters: voters
                .iter()
                .map(|(&id, e)| {
                    (
                        id,
                        VoterNode {
                            key: ReplicaKey {
                                id,
                                directory_id: None,
                            },
                            endpoints: BTreeMap::from([(listener.to_ascii_uppercase(), e.clone())]),
                            supported_kraft_versions: (0, 0),
                        },
                    )
                })
                .collect(),
        }
    }

    /// A set from its voters (at least one, distinct ids).
    pub fn from_nodes(nodes: impl IntoIterator<Item = VoterNode>) -> Result<Self, VoterSetError> {
        let mut voters = BTreeMap::new();
        for node in nodes {
            let id = node.key.id;
            if id < 0 {
                return Err(VoterSetError::InvalidId(id));
            }
            let (min, max) = node.supported_kraft_versions;
            if min > max || min < 0 {
                return Err(VoterSetError::InvalidRange { id, min, max });
            }
            if voters.insert(id, node).is_some() {
                return Err(VoterSetError::DuplicateId(id));
            }
            if voters.len() > MAX_VOTERS {
                return Err(VoterSetError::TooMany(voters.len()));
            }
        }
        if voters.is_empty() {
            return Err(VoterSetError::Empty);
        }
        Ok(Self { voters })
    }

    /// Kafka `VoterSet.fromVotersRecord`.
    pub fn from_record(record: &VotersRecord) -> Result<Self, VoterSetError> {
        if record.voters.len() > MAX_VOTERS {
            return Err(VoterSetError::TooMany(record.voters.len()));
        }
        Self::from_nodes(record.voters.iter().map(|v| VoterNode {
            key: ReplicaKey::new(v.voter_id.0, v.voter_directory_id),
            endpoints: endpoints_from!(v.endpoints),
            supported_kraft_versions: (
                v.k_raft_version_feature.min_supported_version,
                v.k_raft_version_feature.max_supported_version,
            ),
        }))
    }

    /// Kafka `VoterSet.toVotersRecord` (VotersRecord v0), voters by id, endpoints by name.
    pub fn to_record(&self) -> VotersRecord {
        VotersRecord::default().with_version(0).with_voters(
            self.voters
                .values()
                .map(|n| {
                    RecordVoter::default()
                        .with_voter_id(n.key.id.into())
                        .with_voter_directory_id(n.key.directory_id_or_zero())
                        .with_endpoints(endpoint_list!(RecordEndpoint, n.endpoints))
                        .with_k_raft_version_feature(
                            KRaftVersionFeature::default()
                                .with_min_supported_version(n.supported_kraft_versions.0)
                                .with_max_supported_version(n.supported_kraft_versions.1),
                        )
                })
                .collect(),
        )
    }

    /// Voter ids, ascending.
    pub fn ids(&self) -> impl Iterator<Item = i32> + '_ {
        self.voters.keys().copied()
    }

    /// The voters, by id.
    pub fn nodes(&self) -> impl Iterator<Item = &VoterNode> {
        self.voters.values()
    }

    /// Number of voters.
    pub fn len(&self) -> usize {
        self.voters.len()
    }

    /// True if there is no voter (only for an unconfigured observer).
    pub fn is_empty(&self) -> bool {
        self.voters.is_empty()
    }

    /// True if the set has [`MAX_VOTERS`] voters: AddRaftVoter is refused, since a larger
    /// `VotersRecord` would be refused when read back.
    pub fn is_full(&self) -> bool {
        self.voters.len() >= MAX_VOTERS
    }

    /// Size of a majority.
    pub fn majority(&self) -> usize {
        self.voters.len() / 2 + 1
    }

    /// True if `id` is a voter, whatever its directory.
    pub fn contains(&self, id: i32) -> bool {
        self.voters.contains_key(&id)
    }

    /// The voter with id `id`.
    pub fn node(&self, id: i32) -> Option<&VoterNode> {
        self.voters.get(&id)
    }

    /// Kafka `VoterSet.isVoter(ReplicaKey)`: `key` names a voter of this set, directory
    /// included (a replica with the voter's id but another directory is an observer).
    pub fn is_voter(&self, key: ReplicaKey) -> bool {
        self.voters.get(&key.id).is_some_and(|n| n.matches(key))
    }

    /// The endpoint of voter `id` on `listener`.
    pub fn endpoint(&self, id: i32, listener: &str) -> Option<&Endpoint> {
        self.voters.get(&id).and_then(|n| n.endpoint(listener))
    }

    /// Kafka `VoterSet.hasOverlappingMajority`: at most one voter key removed and at most one
    /// added, so any majority of one set overlaps any majority of the other.
    pub fn has_overlapping_majority(&self, other: &VoterSet) -> bool {
        let mine: BTreeSet<ReplicaKey> = self.voters.values().map(|n| n.key).collect();
        let theirs: BTreeSet<ReplicaKey> = other.voters.values().map(|n| n.key).collect();
        mine.difference(&theirs).count() <= 1 && theirs.difference(&mine).count() <= 1
    }

    /// True if every voter supports kraft.version `version`.
    pub fn supports_kraft_version(&self, version: i16) -> bool {
        self.voters.values().all(|n| {
            let (min, max) = n.supported_kraft_versions;
            (min..=max).contains(&version)
        })
    }

    /// Kafka `VoterSet.addVoter`: the set with `node` added, `None` if its id is a voter.
    pub fn add_voter(&self, node: VoterNode) -> Option<VoterSet> {
        if self.voters.contains_key(&node.key.id) {
            return None;
        }
        let mut voters = self.voters.clone();
        voters.insert(node.key.id, node);
        Some(Self { voters })
    }

    /// Kafka `VoterSet.removeVoter`: the set without voter `key` (directory included), `None`
    /// if it is not a voter or would leave the set empty.
    pub fn remove_voter(&self, key: ReplicaKey) -> Option<VoterSet> {
        let node = self.voters.get(&key.id)?;
        if node.key != key || self.voters.len() == 1 {
            return None;
        }
        let mut voters = self.voters.clone();
        voters.remove(&key.id);
        Some(Self { voters })
    }

    /// Kafka `VoterSet.updateVoter`: the set with the voter of `node`'s key replaced by `node`
    /// (endpoints and supported versions), `None` if `node`'s key is not a voter.
    pub fn update_voter(&self, node: VoterNode) -> Option<VoterSet> {
        let old = self.voters.get(&node.key.id)?;
        if !old.matches(node.key) {
            return None;
        }
        let mut voters = self.voters.clone();
        voters.insert(node.key.id, node);
        Some(Self { voters })
    }

    /// Kafka `VoterSet.updateVoterIgnoringDirectoryId` (kraft.version 0, static voters have no
    /// directory id): the voter with `node`'s id, whatever its directory, replaced by `node`
    /// (directory id, endpoints, supported range); `None` if the id is not a voter.
    pub fn update_voter_ignoring_directory_id(&self, node: VoterNode) -> Option<VoterSet> {
        if !self.voters.contains_key(&node.key.id) {
            return None;
        }
        let mut voters = self.voters.clone();
        voters.insert(node.key.id, node);
        Some(Self { voters })
    }

    /// True if every voter's directory id is known (needed to upgrade to kraft.version 1).
    pub fn all_directory_ids_known(&self) -> bool {
        self.voters.values().all(|n| n.key.directory_id.is_some())
    }

    /// Kafka `VoterSet.voterNodeNeedsUpdate`: `node` is a voter of this set whose endpoints
    /// or supported kraft.version range differ from what the set records.
    pub fn voter_node_needs_update(&self, node: &VoterNode) -> bool {
        self.voters.get(&node.key.id).is_some_and(|old| {
            old.matches(node.key)
                && (old.endpoints != node.endpoints
                    || old.supported_kraft_versions != node.supported_kraft_versions)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn node(id: i32, dir: u64) -> VoterNode {
        VoterNode {
            key: ReplicaKey::new(id, Uuid::from_u64_pair(0, dir)),
            endpoints: BTreeMap::from([(
                "CONTROLLER".to_owned(),
                Endpoint {
                    host: format!("c{id}"),
                    port: 9000 + id as u16,
                },
            )]),
            supported_kraft_versions: (0, 1),
        }
    }

    #[test]
    fn a_voter_with_another_directory_is_not_a_voter() {
        // Case C02 (b): a wiped voter comes back with a new directory id.
        let set = VoterSet::from_nodes([node(1, 101), node(2, 102), node(3, 103)]).unwrap();
        assert!(set.is_voter(ReplicaKey::new(1, Uuid::from_u64_pair(0, 101))));
        assert!(!set.is_voter(ReplicaKey::new(1, Uuid::from_u64_pair(0, 999))));
        assert!(!set.is_voter(ReplicaKey::new(1, Uuid::nil())));
        assert!(!set.is_voter(ReplicaKey::new(4, Uuid::from_u64_pair(0, 101))));
        // A static voter has no directory: any directory matches.
        let static_set = VoterSet::from_static(
            &BTreeMap::from([(
                1,
                Endpoint {
                    host: "h".into(),
                    port: 1,
                },
            )]),
            "controller",
        );
        assert!(static_set.is_voter(ReplicaKey::new(1, Uuid::from_u64_pair(0, 5))));
        assert_eq!(static_set.endpoint(1, "CONTROLLER").unwrap().host, "h");
    }

    #[test]
    fn record_round_trip_and_validation() {
        let set = VoterSet::from_nodes([node(1, 101), node(2, 102)]).unwrap();
        assert_eq!(VoterSet::from_record(&set.to_record()).unwrap(), set);
        let mut rec = set.to_record();
        rec.voters.push(rec.voters[0].clone());
        assert_eq!(
            VoterSet::from_record(&rec),
            Err(VoterSetError::DuplicateId(1))
        );
        assert_eq!(
            VoterSet::from_record(&VotersRecord::default()),
            Err(VoterSetError::Empty)
        );
        let mut rec = set.to_record();
        rec.voters[0].k_raft_version_feature.min_supported_version = 2;
        assert!(matches!(
            VoterSet::from_record(&rec),
            Err(VoterSetError::InvalidRange { id: 1, .. })
        ));
    }

    #[test]
    fn overlapping_majority_allows_one_added_and_one_removed() {
        let a = VoterSet::from_nodes([node(1, 1), node(2, 2), node(3, 3)]).unwrap();
        let add = a.add_voter(node(4, 4)).unwrap();
        assert!(a.has_overlapping_majority(&add));
        let remove = a
            .remove_voter(ReplicaKey::new(3, Uuid::from_u64_pair(0, 3)))
            .unwrap();
        assert!(a.has_overlapping_majority(&remove));
        let swap = remove.add_voter(node(4, 4)).unwrap();
        assert!(a.has_overlapping_majority(&swap));
        let two_new = swap
            .remove_voter(ReplicaKey::new(2, Uuid::from_u64_pair(0, 2)))
            .unwrap()
            .add_voter(node(5, 5))
            .unwrap();
        assert!(!a.has_overlapping_majority(&two_new));
        // A new directory for the same id is a removal plus an addition.
        let rewiped = VoterSet::from_nodes([node(1, 9), node(2, 2), node(3, 3)]).unwrap();
        assert!(a.has_overlapping_majority(&rewiped));
    }

    #[test]
    fn a_full_set_takes_no_voter_and_its_record_reads_back() {
        let full =
            VoterSet::from_nodes((0..MAX_VOTERS as i32).map(|id| node(id, id as u64))).unwrap();
        assert!(full.is_full());
        assert_eq!(VoterSet::from_record(&full.to_record()).unwrap(), full);
        let over = full.add_voter(node(MAX_VOTERS as i32, 1)).unwrap();
        assert_eq!(
            VoterSet::from_record(&over.to_record()),
            Err(VoterSetError::TooMany(MAX_VOTERS + 1))
        );
        let mut one_less = full.clone();
        one_less.voters.remove(&0);
        assert!(!one_less.is_full());
    }

    #[test]
    fn membership_changes() {
        let a = VoterSet::from_nodes([node(1, 1), node(2, 2)]).unwrap();
        assert!(a.add_voter(node(2, 7)).is_none(), "id already a voter");
        assert!(a
            .remove_voter(ReplicaKey::new(2, Uuid::from_u64_pair(0, 7)))
            .is_none());
        let one = a
            .remove_voter(ReplicaKey::new(2, Uuid::from_u64_pair(0, 2)))
            .unwrap();
        assert!(
            one.remove_voter(ReplicaKey::new(1, Uuid::from_u64_pair(0, 1)))
                .is_none(),
            "never empty"
        );
        let mut moved = node(1, 1);
        moved.endpoints.get_mut("CONTROLLER").unwrap().port = 1;
        assert!(a.voter_node_needs_update(&moved));
        assert!(!a.voter_node_needs_update(&node(1, 1)));
        let updated = a.update_voter(moved.clone()).unwrap();
        assert_eq!(updated.node(1), Some(&moved));
        assert!(!updated.supports_kraft_version(2));
        assert!(updated.supports_kraft_version(1));
    }
}
