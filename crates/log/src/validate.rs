//! Checks on batches before they are appended (Kafka `UnifiedLog.analyzeAndValidateRecords`,
//! plus the Java KRaft reader's record rules so that nothing a Java peer would reject is
//! stored or served).

use kraftwerk_raft::LogError;
use kraftwerk_records::batch::{self, BatchHeader};

/// The batches of `records` that an append takes, after checking them all (the append is
/// atomic: one bad batch rejects the whole call).
///
/// Rules, in the order they are checked for each batch:
/// 1. framing (length, magic); an incomplete trailing batch is ignored on the follower path
///    (`leader_epoch == None`), as Kafka's `appendAsFollower` does with a Fetch response cut at
///    the byte limit, and rejected on the leader path;
/// 2. the first base offset equals `log_end_offset` ([`LogError::UnexpectedAppendOffset`]),
///    later ones continue the previous batch ([`LogError::OffsetsOutOfOrder`]);
/// 3. leader path: the batch carries the leader's epoch (Kafka: "Append from Raft leader did
///    not set the batch epoch correctly"); both paths: the epoch is not below the previous
///    batch's or `latest_epoch`;
/// 4. CRC-32C and the record rules of [`batch::decode_batch`].
///
/// Everything else is [`LogError::CorruptBatch`], including an append with no complete batch.
pub(crate) fn validate_append(
    records: &[u8],
    leader_epoch: Option<i32>,
    log_end_offset: i64,
    latest_epoch: Option<i32>,
) -> Result<Vec<BatchHeader>, LogError> {
    let mut accepted: Vec<BatchHeader> = Vec::new();
    let mut iter = batch::batches(records);
    for item in iter.by_ref() {
        let expected = accepted
            .last()
            .map_or(log_end_offset, BatchHeader::next_offset);
        let (header, bytes) = item.map_err(|e| LogError::CorruptBatch {
            offset: expected,
            reason: e.to_string(),
        })?;
        if header.base_offset != expected {
            return Err(if accepted.is_empty() {
                LogError::UnexpectedAppendOffset {
                    first_offset: header.base_offset,
                    log_end_offset,
                }
            } else {
                LogError::OffsetsOutOfOrder {
                    expected,
                    found: header.base_offset,
                }
            });
        }
        let corrupt = |reason: String| LogError::CorruptBatch {
            offset: header.base_offset,
            reason,
        };
        let epoch = header.partition_leader_epoch;
        if leader_epoch.is_some_and(|leader| leader != epoch) {
            return Err(corrupt(format!(
                "batch has partition leader epoch {epoch}, the leader's epoch is {}",
                leader_epoch.unwrap_or_default()
            )));
        }
        let floor = accepted
            .last()
            .map(|h| h.partition_leader_epoch)
            .or(latest_epoch)
            .unwrap_or(0);
        if epoch < floor {
            return Err(corrupt(format!(
                "partition leader epoch {epoch} is below the latest epoch {floor}"
            )));
        }
        batch::decode_batch(bytes).map_err(|e| corrupt(e.to_string()))?;
        accepted.push(header);
    }
    let Some(last) = accepted.last() else {
        return Err(LogError::CorruptBatch {
            offset: log_end_offset,
            reason: format!("no complete record batch in {} bytes", records.len()),
        });
    };
    let trailing = records.len() - iter.position();
    if leader_epoch.is_some() && trailing > 0 {
        return Err(LogError::CorruptBatch {
            offset: last.next_offset(),
            reason: format!("{trailing} bytes of an incomplete batch after the last complete one"),
        });
    }
    Ok(accepted)
}
