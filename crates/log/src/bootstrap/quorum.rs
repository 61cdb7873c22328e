//! The quorum part of the bootstrap snapshot `0-0` (KIP-853): the KRaftVersionRecord and
//! VotersRecord control records `kafka-storage format` writes for a dynamic quorum, as typed
//! values ([`BootstrapQuorum`]) a node starts from.
//!
//! Follows `org.apache.kafka.snapshot.RecordsSnapshotWriter.Builder.build` (the control batch
//! at offset 0: SnapshotHeader, then KRaftVersionRecord when kraft.version ≥ 1, then
//! VotersRecord when a voter set is given), `org.apache.kafka.raft.VoterSet.toVotersRecord`
//! and `DynamicVoter.toVoterNode` (one endpoint on the controller listener, supported
//! kraft.version `[0, 1]`).
//!
//! The order of the voters in Java's VotersRecord is the iteration order of the `HashMap`
//! `VoterSet.fromMap` copies the voters into, not the id order: [`java_voter_set_order`]
//! reproduces it, so that the bytes are Java's.

use kafka_protocol::messages::voters_record::{Endpoint, KRaftVersionFeature, Voter};
use kafka_protocol::messages::{BrokerId, VotersRecord};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::control::{ControlRecord, CONTROL_VALUE_VERSION};
use uuid::Uuid;

/// One endpoint of a voter (`VotersRecord.Endpoint`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VoterEndpoint {
    /// Listener name as stored (Java writes `ListenerName.normalised`: upper case).
    pub listener_name: String,
    /// Host name or IP literal as Java's `InetSocketAddress.getHostString` gave it.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

/// The kraft.version levels a voter supports (`VotersRecord.KRaftVersionFeature`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KRaftVersionRange {
    /// Lowest supported level.
    pub min: i16,
    /// Highest supported level.
    pub max: i16,
}

impl KRaftVersionRange {
    /// What `DynamicVoter.toVoterNode` gives every initial controller: `[0, 1]`.
    pub const INITIAL_CONTROLLER: KRaftVersionRange = KRaftVersionRange { min: 0, max: 1 };
}

/// One voter of the bootstrap voter set (`VotersRecord.Voter`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootstrapVoter {
    /// `node.id`.
    pub id: i32,
    /// The voter's metadata log directory id (`ReplicaKey.directoryId`); nil means none
    /// (`Uuid.ZERO_UUID`, which `format` never writes).
    pub directory_id: Uuid,
    /// Its endpoints, in record order.
    pub endpoints: Vec<VoterEndpoint>,
    /// The kraft.version levels it supports.
    pub kraft_version: KRaftVersionRange,
}

/// The quorum records of a bootstrap snapshot `0-0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootstrapQuorum {
    /// The KRaftVersionRecord's level (1 for every dynamic quorum `format` writes).
    pub kraft_version: i16,
    /// The VotersRecord's voters in record order; `None` when the snapshot has no VotersRecord
    /// (Kafka 4.4 `format --no-initial-controllers`: kraft.version 1, voters learnt from the
    /// leader).
    pub voters: Option<Vec<BootstrapVoter>>,
}

/// Why quorum records cannot be written or were refused when read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuorumRecordsError {
    /// A voter set with kraft.version 0 (`RecordsSnapshotWriter.Builder.build` refuses it).
    #[error("Voter set not expected when the kraft.version is 0")]
    VotersWithoutReconfig,
    /// A KRaftVersionRecord level Kafka does not know (`KRaftVersion.fromFeatureLevel`).
    #[error("Unknown KRaft feature level: {0}")]
    UnknownKRaftVersion(i16),
    /// A voter id appears twice in one VotersRecord.
    #[error("voter {0} appears more than once in the VotersRecord")]
    DuplicateVoter(i32),
    /// A VotersRecord with a negative voter id.
    #[error("invalid voter id {0} in the VotersRecord")]
    NegativeVoterId(i32),
    /// More voters share a `HashMap` bucket than Java keeps as a list (it switches that bucket
    /// to a red-black tree, whose iteration order kraftwerk does not reproduce).
    #[error(
        "{0} or more voters whose ids fall into one Java HashMap bucket: Kafka's voter order \
         for such a set is not reproduced"
    )]
    TreeifiedBucket(usize),
}

impl BootstrapQuorum {
    /// The voter with `id`, if the snapshot has a voter set that includes it.
    pub fn voter(&self, id: i32) -> Option<&BootstrapVoter> {
        self.voters.as_ref()?.iter().find(|v| v.id == id)
    }

    /// The control records that follow the SnapshotHeader in the snapshot's first batch
    /// (`RecordsSnapshotWriter.Builder.build`): KRaftVersionRecord if kraft.version ≥ 1, then
    /// the VotersRecord if there is a voter set.
    ///
    /// Errors: [`QuorumRecordsError::VotersWithoutReconfig`],
    /// [`QuorumRecordsError::UnknownKRaftVersion`].
    pub fn control_records(&self) -> Result<Vec<ControlRecord>, QuorumRecordsError> {
        if !(0..=1).contains(&self.kraft_version) {
            return Err(QuorumRecordsError::UnknownKRaftVersion(self.kraft_version));
        }
        let mut out = Vec::new();
        if self.kraft_version >= 1 {
            out.push(ControlRecord::kraft_version(self.kraft_version));
        }
        match (&self.voters, self.kraft_version) {
            (Some(_), 0) => return Err(QuorumRecordsError::VotersWithoutReconfig),
            (Some(voters), _) => out.push(ControlRecord::Voters(voters_record(voters))),
            (None, _) => {}
        }
        Ok(out)
    }

    /// Builds the quorum from the KRaftVersion and Voters control records of a snapshot, in
    /// file order (the last of each kind wins, as `KRaftControlRecordStateMachine` applies
    /// them); `None` when there is neither.
    ///
    /// Errors, stricter than Java (a node must not start from an ambiguous set): a
    /// VotersRecord without a KRaftVersionRecord ≥ 1, an unknown kraft.version, a negative or
    /// repeated voter id.
    pub fn from_control_records<'a>(
        records: impl IntoIterator<Item = &'a ControlRecord>,
    ) -> Result<Option<BootstrapQuorum>, QuorumRecordsError> {
        let mut kraft_version = None;
        let mut voters = None;
        for record in records {
            match record {
                ControlRecord::KRaftVersion(r) => kraft_version = Some(r.k_raft_version),
                ControlRecord::Voters(r) => voters = Some(from_voters_record(r)?),
                _ => {}
            }
        }
        if kraft_version.is_none() && voters.is_none() {
            return Ok(None);
        }
        let quorum = BootstrapQuorum {
            kraft_version: kraft_version.unwrap_or(0),
            voters,
        };
        quorum.control_records()?;
        Ok(Some(quorum))
    }
}

/// `VoterSet.toVotersRecord(0)` for `voters`, in the order given.
pub fn voters_record(voters: &[BootstrapVoter]) -> VotersRecord {
    VotersRecord::default()
        .with_version(CONTROL_VALUE_VERSION)
        .with_voters(
            voters
                .iter()
                .map(|v| {
                    Voter::default()
                        .with_voter_id(BrokerId(v.id))
                        .with_voter_directory_id(v.directory_id)
                        .with_endpoints(
                            v.endpoints
                                .iter()
                                .map(|e| {
                                    Endpoint::default()
                                        .with_name(StrBytes::from_string(e.listener_name.clone()))
                                        .with_host(StrBytes::from_string(e.host.clone()))
                                        .with_port(e.port)
                                })
                                .collect(),
                        )
                        .with_k_raft_version_feature(
                            KRaftVersionFeature::default()
                                .with_min_supported_version(v.kraft_version.min)
                                .with_max_supported_version(v.kraft_version.max),
                        )
                })
                .collect(),
        )
}

fn from_voters_record(record: &VotersRecord) -> Result<Vec<BootstrapVoter>, QuorumRecordsError> {
    let mut out: Vec<BootstrapVoter> = Vec::with_capacity(record.voters.len());
    for v in &record.voters {
        let id = v.voter_id.0;
        if id < 0 {
            return Err(QuorumRecordsError::NegativeVoterId(id));
        }
        if out.iter().any(|o| o.id == id) {
            return Err(QuorumRecordsError::DuplicateVoter(id));
        }
        out.push(BootstrapVoter {
            id,
            directory_id: v.voter_directory_id,
            endpoints: v
                .endpoints
                .iter()
                .map(|e| VoterEndpoint {
                    listener_name: e.name.to_string(),
                    host: e.host.to_string(),
                    port: e.port,
                })
                .collect(),
            kraft_version: KRaftVersionRange {
                min: v.k_raft_version_feature.min_supported_version,
                max: v.k_raft_version_feature.max_supported_version,
            },
        });
    }
    Ok(out)
}

/// A simulation of Java 17's `java.util.HashMap<Integer, V>` insertion and iteration order
/// (`putVal`, `resize`, `treeifyBin`): entries iterate by bucket (`hash(id) & (capacity - 1)`,
/// `hash` spreading the high 16 bits), and within a bucket in insertion order, which resizes
/// keep. A bucket that would become a tree (a 9th entry while the table has ≥ 64 buckets) is
/// refused.
struct JavaIntHashMap {
    capacity: usize,
    entries: Vec<i32>,
}

impl JavaIntHashMap {
    /// `new HashMap<>()`: 16 buckets once the first entry arrives.
    fn new() -> Self {
        JavaIntHashMap {
            capacity: 16,
            entries: Vec::new(),
        }
    }

    /// `new HashMap<>(map)` of a map with `size` entries (Java 17's `putMapEntries` presizing:
    /// `tableSizeFor((int) (size / 0.75f + 1.0f))`).
    fn presized(size: usize) -> Self {
        let t = (size as f32 / 0.75f32 + 1.0f32) as usize;
        JavaIntHashMap {
            capacity: t.max(1).next_power_of_two(),
            entries: Vec::new(),
        }
    }

    fn bucket(&self, id: i32) -> usize {
        let h = id as u32;
        ((h ^ (h >> 16)) as usize) & (self.capacity - 1)
    }

    fn threshold(&self) -> usize {
        (self.capacity as f32 * 0.75f32) as usize
    }

    fn put(&mut self, id: i32) -> Result<(), QuorumRecordsError> {
        let bucket = self.bucket(id);
        let in_bin = self
            .entries
            .iter()
            .filter(|e| self.bucket(**e) == bucket)
            .count();
        self.entries.push(id);
        // putVal: appended at binCount = in_bin - 1; TREEIFY_THRESHOLD - 1 = 7.
        if in_bin >= 8 {
            if self.capacity < 64 {
                self.capacity *= 2; // treeifyBin resizes a small table instead
            } else {
                return Err(QuorumRecordsError::TreeifiedBucket(in_bin + 1));
            }
        }
        if self.entries.len() > self.threshold() {
            self.capacity *= 2;
        }
        Ok(())
    }

    fn iteration_order(&self) -> Vec<i32> {
        let mut out = self.entries.clone();
        out.sort_by_key(|id| self.bucket(*id)); // stable: insertion order within a bucket
        out
    }
}

/// The order of the voters in the VotersRecord Java's `format` writes for voter ids
/// `ascending_ids` (`DynamicVoters.toVoterSet`: the voters, in id order, put into a new
/// `HashMap`, which `VoterSet.fromMap` copies into another; `toVotersRecord` iterates that).
/// Reproduces Java 17's `HashMap`; a JDK from 19 on presizes the copy differently and may
/// order some sets otherwise.
///
/// Errors: [`QuorumRecordsError::TreeifiedBucket`] for sets of 9 or more ids that collide in
/// one bucket of a table of 64 or more.
pub fn java_voter_set_order(ascending_ids: &[i32]) -> Result<Vec<i32>, QuorumRecordsError> {
    let mut first = JavaIntHashMap::new();
    for id in ascending_ids {
        first.put(*id)?;
    }
    let mut copy = JavaIntHashMap::presized(ascending_ids.len());
    for id in first.iteration_order() {
        copy.put(id)?;
    }
    Ok(copy.iteration_order())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voter(id: i32) -> BootstrapVoter {
        BootstrapVoter {
            id,
            directory_id: Uuid::from_u64_pair(1, id as u64 + 100),
            endpoints: vec![VoterEndpoint {
                listener_name: "CONTROLLER".into(),
                host: format!("h{id}"),
                port: 9093,
            }],
            kraft_version: KRaftVersionRange::INITIAL_CONTROLLER,
        }
    }

    #[test]
    fn java_order_is_hash_bucket_order() {
        // Small ids iterate in id order.
        assert_eq!(java_voter_set_order(&[1, 2, 3]).unwrap(), [1, 2, 3]);
        // Three entries: the copy has 8 buckets, so 9 lands in bucket 1 after 1, before 2.
        assert_eq!(java_voter_set_order(&[1, 2, 9]).unwrap(), [1, 9, 2]);
        // The first map (16 buckets) put 17 after 1 in bucket 1; the copy keeps that order.
        assert_eq!(java_voter_set_order(&[1, 5, 17]).unwrap(), [1, 17, 5]);
        // Two entries: 4 buckets; 2 → bucket 2, 5 → bucket 1.
        assert_eq!(java_voter_set_order(&[2, 5]).unwrap(), [5, 2]);
        // hash() folds the high half in: 65536 → bucket 1 (65536 ^ 1).
        assert_eq!(java_voter_set_order(&[0, 65536]).unwrap(), [0, 65536]);
        assert_eq!(java_voter_set_order(&[]).unwrap(), Vec::<i32>::new());
        // Ids sharing one bucket: the 9th and 10th resize the small table (treeifyBin), the
        // 11th would make a tree bin of the 64-bucket table, which is refused.
        let colliding: Vec<i32> = (0..10).map(|i| i * 1024).collect();
        assert_eq!(java_voter_set_order(&colliding).unwrap(), colliding);
        let colliding: Vec<i32> = (0..11).map(|i| i * 1024).collect();
        assert_eq!(
            java_voter_set_order(&colliding).unwrap_err(),
            QuorumRecordsError::TreeifiedBucket(11)
        );
    }

    #[test]
    fn control_records_follow_records_snapshot_writer() {
        let dynamic = BootstrapQuorum {
            kraft_version: 1,
            voters: Some(vec![voter(1), voter(2)]),
        };
        let records = dynamic.control_records().unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0], ControlRecord::kraft_version(1));
        let back = BootstrapQuorum::from_control_records(&records).unwrap();
        assert_eq!(back.as_ref(), Some(&dynamic));
        assert_eq!(back.unwrap().voter(2), Some(&voter(2)));

        let no_voters = BootstrapQuorum {
            kraft_version: 1,
            voters: None,
        };
        assert_eq!(no_voters.control_records().unwrap().len(), 1);
        let static_quorum = BootstrapQuorum {
            kraft_version: 0,
            voters: None,
        };
        assert!(static_quorum.control_records().unwrap().is_empty());
        assert_eq!(BootstrapQuorum::from_control_records(&[]).unwrap(), None);

        let bad = BootstrapQuorum {
            kraft_version: 0,
            voters: Some(vec![voter(1)]),
        };
        assert_eq!(
            bad.control_records().unwrap_err(),
            QuorumRecordsError::VotersWithoutReconfig
        );
        let voters_only = [ControlRecord::Voters(voters_record(&[voter(1)]))];
        assert!(BootstrapQuorum::from_control_records(&voters_only).is_err());
        let twice = [
            ControlRecord::kraft_version(1),
            ControlRecord::Voters(voters_record(&[voter(1), voter(1)])),
        ];
        assert_eq!(
            BootstrapQuorum::from_control_records(&twice).unwrap_err(),
            QuorumRecordsError::DuplicateVoter(1)
        );
        let unknown = [ControlRecord::kraft_version(2)];
        assert_eq!(
            BootstrapQuorum::from_control_records(&unknown).unwrap_err(),
            QuorumRecordsError::UnknownKRaftVersion(2)
        );
    }
}
