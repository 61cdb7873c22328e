//! The one write path: a controller result's records are encoded, cut into batches (all in one
//! when the result is atomic), appended to the Raft log and replayed speculatively into the
//! controller's latest image, in that order, before anything else happens.
//!
//! Nothing is appended unless every record encodes and every batch fits (at most
//! [`MAX_RECORDS_PER_BATCH`] records and `RaftCore::batch_fits` bytes), so a result is written
//! whole or not at all.

use bytes::Bytes;
use kraftwerk_protocol::constants::MAX_RECORDS_PER_BATCH;
use kraftwerk_raft::{batch_fits, AppendError, QuorumStateStore, ReplicatedLog};
use kraftwerk_records::metadata::ApiMessageAndVersion;

use crate::error::NodeError;
use crate::node::Node;

/// What became of a write.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum WriteOutcome {
    /// Everything was appended; the records end before this offset.
    Appended {
        /// Exclusive end offset of the last record.
        end_offset: i64,
    },
    /// Leadership was lost before (or while) appending.
    NotLeader,
    /// The result cannot be written (a record does not encode, or an atomic result does not
    /// fit one batch); nothing was appended.
    Refused(String),
}

impl<L: ReplicatedLog, Q: QuorumStateStore> Node<L, Q> {
    /// Writes one controller result. `Err` only for fatal failures (replay of our own records).
    pub(crate) fn write(
        &mut self,
        now_ms: u64,
        records: &[ApiMessageAndVersion],
        atomic: bool,
    ) -> Result<WriteOutcome, NodeError> {
        let batches = match plan_batches(records, atomic) {
            Ok(batches) => batches,
            Err(reason) => return Ok(WriteOutcome::Refused(reason)),
        };
        let mut end_offset = self.raft.next_offset().unwrap_or(self.replayed_end_offset);
        let mut first_record = 0;
        for values in batches {
            let count = values.len();
            let first = match self.raft.append(now_ms, values) {
                Ok(first) => first,
                Err(AppendError::NotLeader) => return Ok(WriteOutcome::NotLeader),
                Err(e @ AppendError::TooLarge { .. }) => {
                    // plan_batches applies the core's own bound: reaching this is a bug here.
                    unreachable!("a planned batch was refused by the Raft core: {e}")
                }
            };
            let with_offsets: Vec<(i64, ApiMessageAndVersion)> = records
                [first_record..first_record + count]
                .iter()
                .cloned()
                .zip(first..)
                .map(|(r, offset)| (offset, r))
                .collect();
            self.controller
                .replay_uncommitted(&with_offsets)
                .map_err(|source| NodeError::Replay {
                    offset: first,
                    source,
                })?;
            first_record += count;
            end_offset = first + count as i64;
            self.tracking.on_append(end_offset, count, now_ms);
        }
        Ok(WriteOutcome::Appended { end_offset })
    }

    /// Writes an internal result (bootstrap, fencing, NoOp, elections). A refused internal
    /// write is a controller bug and stops the node; losing leadership is not an error.
    pub(crate) fn write_internal(
        &mut self,
        now_ms: u64,
        records: &[ApiMessageAndVersion],
        atomic: bool,
    ) -> Result<(), NodeError> {
        match self.write(now_ms, records, atomic)? {
            WriteOutcome::Appended { .. } | WriteOutcome::NotLeader => Ok(()),
            WriteOutcome::Refused(reason) => Err(NodeError::UnwritableResult { reason }),
        }
    }
}

/// Encodes `records` and cuts them into batches the Raft core accepts: one batch if `atomic`,
/// otherwise as few as fit. `Err` says why the result cannot be written at all.
fn plan_batches(records: &[ApiMessageAndVersion], atomic: bool) -> Result<Vec<Vec<Bytes>>, String> {
    let mut batches: Vec<Vec<Bytes>> = Vec::new();
    let mut current: Vec<Bytes> = Vec::new();
    for record in records {
        let value = record
            .encode()
            .map_err(|e| format!("{} cannot be encoded: {e}", record.record.name()))?;
        current.push(value);
        if current.len() > MAX_RECORDS_PER_BATCH || !batch_fits(&current) {
            if atomic {
                return Err(format!(
                    "an atomic result of {} records does not fit one batch",
                    records.len()
                ));
            }
            let last = current.pop().expect("just pushed");
            if current.is_empty() {
                return Err(format!(
                    "a {} record of {} bytes does not fit a batch",
                    record.record.name(),
                    last.len()
                ));
            }
            batches.push(std::mem::replace(&mut current, vec![last]));
        }
    }
    if !current.is_empty() {
        batches.push(current);
    }
    Ok(batches)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kraftwerk_records::metadata::{NoOpRecord, TopicRecord};

    fn topic(name_bytes: usize) -> ApiMessageAndVersion {
        ApiMessageAndVersion::new(
            TopicRecord {
                name: "t".repeat(name_bytes),
                topic_id: uuid::Uuid::from_u128(7),
                ..Default::default()
            },
            0,
        )
    }

    #[test]
    fn non_atomic_results_are_cut_by_count_and_by_bytes() {
        let noops = vec![ApiMessageAndVersion::new(NoOpRecord::default(), 0); 25_000];
        let sizes: Vec<usize> = plan_batches(&noops, false)
            .unwrap()
            .iter()
            .map(Vec::len)
            .collect();
        assert_eq!(sizes, vec![10_000, 10_000, 5_000]);
        // 300 records of ~30 KB: 8 MiB holds about 270 of them.
        let big = vec![topic(30_000); 300];
        let batches = plan_batches(&big, false).unwrap();
        assert_eq!(batches.len(), 2);
        assert!(batches.iter().all(|b| batch_fits(b)));
    }

    #[test]
    fn an_atomic_result_that_does_not_fit_is_refused_whole() {
        let noops = vec![ApiMessageAndVersion::new(NoOpRecord::default(), 0); 10_001];
        let refused = plan_batches(&noops, true).unwrap_err();
        assert!(refused.contains("10001 records"), "{refused}");
        assert_eq!(plan_batches(&noops[..10_000], true).unwrap().len(), 1);
    }

    #[test]
    fn an_unencodable_record_refuses_the_result() {
        // A string field longer than Kafka's 32,767-byte limit cannot be written.
        let refused = plan_batches(&[topic(40_000)], false).unwrap_err();
        assert!(refused.contains("cannot be encoded"), "{refused}");
    }
}
