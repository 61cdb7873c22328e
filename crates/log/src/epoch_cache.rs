//! The leader-epoch cache (Kafka `LeaderEpochFileCache`) and its `leader-epoch-checkpoint` file.

use std::collections::BTreeMap;

use crate::error::StorageError;
use crate::fs::Dir;

/// Name of Kafka's epoch checkpoint file in the partition directory.
pub const LEADER_EPOCH_CHECKPOINT: &str = "leader-epoch-checkpoint";

/// `epoch → start offset` of every leader epoch present in the log, both strictly increasing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EpochCache {
    entries: BTreeMap<i32, i64>,
}

impl EpochCache {
    /// Kafka `LeaderEpochFileCache.assign`: records that `epoch` starts at `start_offset` unless
    /// the latest entry already is that epoch at an offset `<= start_offset`. Entries the new
    /// one contradicts (epoch `>=` or start `>=`, walking back from the latest) are removed
    /// first. Returns whether the cache changed. Panics on negative values, as Kafka throws.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) -> bool {
        assert!(
            epoch >= 0 && start_offset >= 0,
            "invalid epoch entry ({epoch}, {start_offset})"
        );
        if let Some((latest_epoch, latest_start)) = self.latest() {
            if latest_epoch == epoch && latest_start <= start_offset {
                return false;
            }
        }
        while let Some((&e, &s)) = self.entries.last_key_value() {
            if e >= epoch || s >= start_offset {
                self.entries.remove(&e);
            } else {
                break;
            }
        }
        self.entries.insert(epoch, start_offset);
        true
    }

    /// The latest `(epoch, start offset)`.
    pub fn latest(&self) -> Option<(i32, i64)> {
        self.entries.last_key_value().map(|(&e, &s)| (e, s))
    }

    /// The latest epoch, if any batch exists.
    pub fn latest_epoch(&self) -> Option<i32> {
        self.latest().map(|(e, _)| e)
    }

    /// Kafka `truncateFromEnd`: removes every entry starting at or after `end_offset`.
    /// Returns the removed entries.
    pub fn truncate_from_end(&mut self, end_offset: i64) -> Vec<(i32, i64)> {
        let mut removed = Vec::new();
        while let Some((&e, &s)) = self.entries.last_key_value() {
            if s < end_offset {
                break;
            }
            self.entries.remove(&e);
            removed.push((e, s));
        }
        removed.reverse();
        removed
    }

    /// Kafka `truncateFromStart`: the log start offset moved to `start_offset`, so every entry
    /// starting at or before it goes, and the latest of those comes back starting at
    /// `start_offset` (the epoch of the records now first in the log). Returns whether the
    /// cache changed.
    pub fn truncate_from_start(&mut self, start_offset: i64) -> bool {
        let removed: Vec<(i32, i64)> = self
            .entries
            .iter()
            .take_while(|&(_, &s)| s <= start_offset)
            .map(|(&e, &s)| (e, s))
            .collect();
        let Some(&(last_epoch, last_start)) = removed.last() else {
            return false;
        };
        for (epoch, _) in &removed {
            self.entries.remove(epoch);
        }
        self.entries.insert(last_epoch, start_offset);
        removed.len() > 1 || last_start != start_offset
    }

    /// Kafka `clearAndFlush` (the in-memory half): forgets every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Kafka `LeaderEpochFileCache.endOffsetFor(requestedEpoch, logEndOffset)`: the largest
    /// epoch `<= requested` and the start offset of the next epoch (or the LEO for the latest).
    /// `None` stands for Kafka's `(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)`: requested `-1`, or
    /// an epoch above every known one. A requested epoch below every known one answers itself
    /// with the first epoch's start offset.
    pub fn end_offset_for(&self, requested: i32, log_end_offset: i64) -> Option<(i32, i64)> {
        if requested == -1 {
            return None;
        }
        if self.latest_epoch() == Some(requested) {
            return Some((requested, log_end_offset));
        }
        let (_, &higher_start) = self.entries.range(requested.saturating_add(1)..).next()?;
        match self.entries.range(..=requested).next_back() {
            None => Some((requested, higher_start)),
            Some((&floor, _)) => Some((floor, higher_start)),
        }
    }

    /// All entries, oldest first.
    pub fn entries(&self) -> Vec<(i32, i64)> {
        self.entries.iter().map(|(&e, &s)| (e, s)).collect()
    }

    /// The `leader-epoch-checkpoint` text (Kafka `CheckpointFile` v0: version line, count line,
    /// then `<epoch> <start offset>` per entry, every line ending in `\n`).
    pub fn checkpoint_text(&self) -> String {
        let mut text = format!("0\n{}\n", self.entries.len());
        for (epoch, start) in &self.entries {
            text.push_str(&format!("{epoch} {start}\n"));
        }
        text
    }

    /// Parses `leader-epoch-checkpoint` text (Kafka `CheckpointFile` v0), `None` if malformed.
    /// Entries are assigned in order, as `LeaderEpochFileCache` loads them.
    pub fn parse_checkpoint(text: &str) -> Option<EpochCache> {
        let mut lines = text.lines();
        if lines.next()? != "0" {
            return None;
        }
        let count: usize = lines.next()?.parse().ok()?;
        let mut cache = EpochCache::default();
        for _ in 0..count {
            let (epoch, start) = lines.next()?.split_once(' ')?;
            let (epoch, start): (i32, i64) = (epoch.parse().ok()?, start.parse().ok()?);
            if epoch < 0 || start < 0 {
                return None;
            }
            cache.assign(epoch, start);
        }
        lines.next().is_none().then_some(cache)
    }

    /// The cache Kafka has after opening a log (`LogLoader`): the entries of
    /// `leader-epoch-checkpoint` (`checkpoint`), then, as `LogSegment.recover` reads the batches,
    /// every epoch above the latest one assigned at its first batch (`segment_epochs` holds exactly
    /// those first batches), then everything at or after the log end offset removed. After the
    /// log start offset moved, the checkpoint's first entry starts above the first segment's
    /// base offset, and this is how Java answers `endOffsetForEpoch` after a restart.
    ///
    /// One departure: checkpoint entries that start past the log end offset are removed
    /// *before* the segments' epochs are added (Java removes them after). Such entries name data
    /// the log does not have (Java cuts its cache whenever it truncates the log, so only a
    /// damaged or foreign checkpoint holds them); left in while adding, their epochs hid the
    /// epochs of the batches that remain, so the log ended with an epoch older than its last
    /// batch's, and the next open (which reads the rewritten checkpoint) served another one. An
    /// entry starting exactly at the end is Java's own (the log start moved to the end) and is
    /// kept, as are the results for every checkpoint without entries past the end.
    pub fn recovered(
        checkpoint: Option<EpochCache>,
        segment_epochs: &EpochCache,
        log_end_offset: i64,
    ) -> EpochCache {
        let mut cache = checkpoint.unwrap_or_default();
        cache.truncate_from_end(log_end_offset.saturating_add(1));
        for (epoch, start) in segment_epochs.entries() {
            if cache.latest_epoch().is_none_or(|latest| epoch > latest) {
                cache.assign(epoch, start);
            }
        }
        cache.truncate_from_end(log_end_offset);
        cache
    }

    /// The cache the next open would recover from this one once it is the checkpoint:
    /// [`recovered`](Self::recovered) with `self` as `leader-epoch-checkpoint`. One pass is a
    /// fixed point (`settled` of a settled cache is itself), because the segments' epochs and
    /// their starts both increase.
    ///
    /// Why: `recovered` follows Java in letting a checkpoint entry that starts exactly at the
    /// log end hide the segments' epochs up to its own and then removing it with everything at
    /// the end. When that hid an epoch, the rewritten checkpoint no longer hides it, so a second
    /// open served another end epoch than the first (found by `scripts/fuzz recovery`, input
    /// `fuzz/corpus/recovery/found-reopen-end-epoch-1`; Java does the same across its own
    /// restarts). In the case Java writes such an entry (the log start moved to the end after
    /// a snapshot), the snapshot is ahead of the recovered cache and the log is truncated to it
    /// before this is used, so Java's answer stands there.
    pub fn settled(self, segment_epochs: &EpochCache, log_end_offset: i64) -> EpochCache {
        EpochCache::recovered(Some(self), segment_epochs, log_end_offset)
    }

    /// Reads `<dir>/leader-epoch-checkpoint`; `None` if it is missing or malformed (logged).
    pub fn read_checkpoint(dir: &Dir) -> Result<Option<EpochCache>, StorageError> {
        let path = dir.join(LEADER_EPOCH_CHECKPOINT);
        let Some(bytes) = dir.read_if_exists(&path)? else {
            return Ok(None);
        };
        let parsed = std::str::from_utf8(&bytes)
            .ok()
            .and_then(EpochCache::parse_checkpoint);
        if parsed.is_none() {
            tracing::warn!(path = %path.display(), "ignoring a malformed leader-epoch-checkpoint; epochs come from the segments");
        }
        Ok(parsed)
    }

    /// Rewrites `<dir>/leader-epoch-checkpoint` unless it already holds exactly this cache, so
    /// that a Java controller reopening the directory starts from the right epochs (Java also
    /// rebuilds them from the batches). Returns whether the file was written.
    pub fn write_checkpoint_if_changed(&self, dir: &Dir) -> Result<bool, StorageError> {
        let path = dir.join(LEADER_EPOCH_CHECKPOINT);
        let text = self.checkpoint_text();
        if dir.read_if_exists(&path)?.as_deref() == Some(text.as_bytes()) {
            return Ok(false);
        }
        dir.write_atomic(&path, text.as_bytes())?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(entries: &[(i32, i64)]) -> EpochCache {
        let mut c = EpochCache::default();
        for &(e, s) in entries {
            c.assign(e, s);
        }
        c
    }

    #[test]
    fn assign_keeps_first_offset_of_each_epoch() {
        let mut c = cache(&[(1, 0), (1, 5), (3, 7)]);
        assert_eq!(c.entries(), vec![(1, 0), (3, 7)]);
        assert!(!c.assign(3, 9), "same epoch at a later offset is no change");
        // Same epoch at an earlier offset replaces it (Kafka: startOffset < latest.startOffset).
        assert!(c.assign(3, 6));
        assert_eq!(c.entries(), vec![(1, 0), (3, 6)]);
    }

    #[test]
    fn assign_truncates_non_monotonic_entries_like_kafka() {
        // LeaderEpochFileCacheTest "shouldTruncateIfMatchingEpochButEarlierStartingOffset" and
        // "shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned" style cases.
        let mut c = cache(&[(2, 6), (3, 8), (4, 11)]);
        assert!(c.assign(3, 9)); // epoch 3 again: removes 4@11 (epoch >=) and 3@8 (epoch >=)
        assert_eq!(c.entries(), vec![(2, 6), (3, 9)]);
        let mut c = cache(&[(2, 6), (3, 8)]);
        assert!(c.assign(5, 7)); // start below 3@8: 3@8 removed, 2@6 kept
        assert_eq!(c.entries(), vec![(2, 6), (5, 7)]);
    }

    #[test]
    fn end_offset_for_matches_kafka() {
        let c = cache(&[(1, 0), (3, 5), (4, 9)]);
        let leo = 12;
        assert_eq!(c.end_offset_for(-1, leo), None);
        assert_eq!(c.end_offset_for(0, leo), Some((0, 0)));
        assert_eq!(c.end_offset_for(1, leo), Some((1, 5)));
        assert_eq!(c.end_offset_for(2, leo), Some((1, 5)));
        assert_eq!(c.end_offset_for(3, leo), Some((3, 9)));
        assert_eq!(c.end_offset_for(4, leo), Some((4, 12)));
        assert_eq!(c.end_offset_for(5, leo), None);
        assert_eq!(c.end_offset_for(i32::MAX, leo), None);
        assert_eq!(EpochCache::default().end_offset_for(3, 0), None);
    }

    #[test]
    fn truncate_from_end_removes_entries_at_or_after() {
        let mut c = cache(&[(1, 0), (3, 5), (4, 9)]);
        assert_eq!(c.truncate_from_end(10), vec![]);
        assert_eq!(c.truncate_from_end(5), vec![(3, 5), (4, 9)]);
        assert_eq!(c.entries(), vec![(1, 0)]);
    }

    #[test]
    fn truncate_from_start_moves_the_covering_entry_like_kafka() {
        // LeaderEpochFileCacheTest "shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs"
        // style: the entry covering the new start survives with the start as its offset.
        let mut c = cache(&[(1, 0), (3, 5), (4, 9)]);
        assert!(
            !c.truncate_from_start(0),
            "the first entry already starts there"
        );
        assert_eq!(c.entries(), vec![(1, 0), (3, 5), (4, 9)]);
        assert!(c.truncate_from_start(7));
        assert_eq!(c.entries(), vec![(3, 7), (4, 9)]);
        assert!(c.truncate_from_start(9));
        assert_eq!(c.entries(), vec![(4, 9)]);
        assert!(!c.truncate_from_start(9), "same start again is no change");
        assert!(
            c.truncate_from_start(20),
            "past every entry keeps the latest"
        );
        assert_eq!(c.entries(), vec![(4, 20)]);
        let mut c = cache(&[(2, 5)]);
        assert!(
            !c.truncate_from_start(3),
            "before the first entry nothing moves"
        );
        assert_eq!(c.entries(), vec![(2, 5)]);
        c.clear();
        assert_eq!(c.latest(), None);
    }

    #[test]
    fn recovered_follows_kafkas_log_loader() {
        // Java moved the log start to 24 (checkpoint "3 24") while segment 20 still holds
        // epoch-3 batches from 20: Java keeps 3@24 and adds only newer epochs.
        let segments = cache(&[(3, 20), (4, 30)]);
        let checkpoint = EpochCache::parse_checkpoint("0\n1\n3 24\n");
        assert_eq!(checkpoint.clone().unwrap().entries(), vec![(3, 24)]);
        assert_eq!(
            EpochCache::recovered(checkpoint, &segments, 35).entries(),
            vec![(3, 24), (4, 30)]
        );
        // No checkpoint: the segments' epochs; entries at or past the end go.
        assert_eq!(
            EpochCache::recovered(None, &segments, 30).entries(),
            vec![(3, 20)]
        );
        for bad in [
            "",
            "1\n0\n",
            "0\n2\n1 0\n",
            "0\n1\n1 x\n",
            "0\n1\n-1 0\n",
            "0\n0\n1 0\n",
        ] {
            assert_eq!(EpochCache::parse_checkpoint(bad), None, "{bad:?}");
        }
        assert_eq!(
            EpochCache::parse_checkpoint("0\n0\n"),
            Some(EpochCache::default())
        );
    }

    /// Found by `scripts/fuzz recovery` (inputs `fuzz/corpus/recovery/found-epoch-checkpoint-*`):
    /// checkpoint entries past the log end hid the epochs of the batches that remain, and the
    /// reopened log (reading the rewritten checkpoint) ended with another epoch. (An entry at
    /// the end itself keeps Java's meaning: `cleaning_deletes_segment_files_...` in tests.)
    #[test]
    fn checkpoint_entries_past_the_end_do_not_hide_the_segments_epochs() {
        // Entry 4@94 beyond the end (28): the segments' 4@24 is the log's last epoch.
        let segments = cache(&[(1, 0), (3, 13), (4, 24)]);
        let checkpoint = EpochCache::parse_checkpoint("0\n3\n1 0\n3 13\n4 94\n");
        let first = EpochCache::recovered(checkpoint, &segments, 28);
        assert_eq!(first.entries(), vec![(1, 0), (3, 13), (4, 24)]);
        let reopened = EpochCache::parse_checkpoint(&first.checkpoint_text());
        assert_eq!(EpochCache::recovered(reopened, &segments, 28), first);
        // A tail truncated to 2 leaves epoch 1 only; the damaged checkpoint (9@0, then 3@13
        // and 4@24, all gone with the tail) must not leave the log without an epoch.
        let segments = cache(&[(1, 0)]);
        let checkpoint = EpochCache::parse_checkpoint("0\n3\n9 0\n3 13\n4 24\n");
        let first = EpochCache::recovered(checkpoint, &segments, 2);
        assert_eq!(first.entries(), vec![(1, 0)]);
        let reopened = EpochCache::parse_checkpoint(&first.checkpoint_text());
        assert_eq!(EpochCache::recovered(reopened, &segments, 2), first);
    }

    /// Found by `scripts/fuzz recovery` (`fuzz/corpus/recovery/found-reopen-end-epoch-1`): the
    /// entry 3@13 at the log end (13) hid the segments' 2@1 and was then cut, so the first open
    /// ended with epoch 1 and an open from the rewritten checkpoint with epoch 2.
    #[test]
    fn an_entry_at_the_log_end_settles_to_what_a_reopen_recovers() {
        let segments = cache(&[(1, 0), (2, 1)]);
        let checkpoint = EpochCache::parse_checkpoint("0\n3\n1 0\n3 13\n4 94\n");
        let first = EpochCache::recovered(checkpoint, &segments, 13);
        assert_eq!(
            first.entries(),
            vec![(1, 0)],
            "Java's answer on the first open"
        );
        let settled = first.settled(&segments, 13);
        assert_eq!(settled.entries(), vec![(1, 0), (2, 1)]);
        let reopened = EpochCache::parse_checkpoint(&settled.checkpoint_text());
        assert_eq!(EpochCache::recovered(reopened, &segments, 13), settled);
        assert_eq!(
            settled.clone().settled(&segments, 13),
            settled,
            "a fixed point"
        );
        // Nothing hidden: settling changes nothing.
        let plain = EpochCache::recovered(None, &segments, 13);
        assert_eq!(plain.clone().settled(&segments, 13), plain);
    }

    #[test]
    fn checkpoint_file_format_is_kafkas() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(std::sync::Arc::new(crate::fs::RealFs), tmp.path()).unwrap();
        let c = cache(&[(1, 0), (3, 5)]);
        assert_eq!(c.checkpoint_text(), "0\n2\n1 0\n3 5\n");
        assert_eq!(EpochCache::default().checkpoint_text(), "0\n0\n");
        assert!(c.write_checkpoint_if_changed(&dir).unwrap());
        assert!(!c.write_checkpoint_if_changed(&dir).unwrap());
        assert_eq!(
            std::fs::read_to_string(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap(),
            "0\n2\n1 0\n3 5\n"
        );
    }
}
