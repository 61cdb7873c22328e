//! Replay of committed batches into the controller's committed image — on every node, active
//! or standby, so a standby's image is always warm.

use kraftwerk_protocol::constants::MAX_BATCH_BYTES;
use kraftwerk_raft::{QuorumStateStore, RaftError, ReplicatedLog};
use kraftwerk_records::batch::{batches, decode_records};
use kraftwerk_records::metadata::ApiMessageAndVersion;

use crate::error::NodeError;
use crate::node::Node;

impl<L: ReplicatedLog, Q: QuorumStateStore> Node<L, Q> {
    /// Replays committed batches below the high watermark that were not replayed yet.
    pub(crate) fn replay_committed(&mut self) -> Result<(), NodeError> {
        let Some(hw) = self.raft.high_watermark() else {
            return Ok(());
        };
        while self.replayed_end_offset < hw {
            let offset = self.replayed_end_offset;
            let bytes = self
                .raft
                .log()
                .read(offset, MAX_BATCH_BYTES)
                .map_err(RaftError::from)?;
            if bytes.is_empty() {
                return Err(NodeError::MissingCommittedData { offset });
            }
            if !self.replay_batches(&bytes, hw)? {
                return Err(NodeError::MissingCommittedData { offset });
            }
        }
        self.caught_up = true;
        Ok(())
    }

    /// Replays the batches of `bytes` that end at or below `hw` and were not replayed yet;
    /// returns whether any was.
    fn replay_batches(&mut self, bytes: &[u8], hw: i64) -> Result<bool, NodeError> {
        let mut progressed = false;
        for item in batches(bytes) {
            let (header, batch) = item.map_err(|e| NodeError::Decode {
                offset: self.replayed_end_offset,
                reason: e.to_string(),
            })?;
            if header.base_offset >= hw {
                break;
            }
            if header.next_offset() > hw {
                // The high watermark always sits on a batch boundary; a batch straddling it
                // would mean a broken log.
                return Err(NodeError::Decode {
                    offset: header.base_offset,
                    reason: format!(
                        "batch ends at {} beyond the high watermark {hw}",
                        header.next_offset()
                    ),
                });
            }
            if header.next_offset() <= self.replayed_end_offset {
                continue;
            }
            if !header.is_control() {
                let decoded = decode_metadata_batch(header.base_offset, batch)?;
                self.count_elections(&decoded);
                self.controller
                    .replay_committed(&decoded)
                    .map_err(|source| NodeError::Replay {
                        offset: header.base_offset,
                        source,
                    })?;
            }
            self.replayed_end_offset = header.next_offset();
            self.bytes_since_snapshot += header.size_bytes() as u64;
            self.last_replayed_batch = Some((header.partition_leader_epoch, header.max_timestamp));
            progressed = true;
        }
        Ok(progressed)
    }
}

/// The metadata records of one data batch, with their offsets.
fn decode_metadata_batch(
    base_offset: i64,
    batch: &[u8],
) -> Result<Vec<(i64, ApiMessageAndVersion)>, NodeError> {
    let records = decode_records(batch).map_err(|e| NodeError::Decode {
        offset: base_offset,
        reason: e.to_string(),
    })?;
    records
        .into_iter()
        .map(|r| {
            let value = r.value.unwrap_or_default();
            ApiMessageAndVersion::decode(&value)
                .map(|record| (r.offset, record))
                .map_err(|e| NodeError::Decode {
                    offset: r.offset,
                    reason: e.to_string(),
                })
        })
        .collect()
}
