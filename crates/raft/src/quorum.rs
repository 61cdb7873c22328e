//! High-watermark arithmetic (Kafka `LeaderState.maybeUpdateHighWatermark`).

/// The largest offset replicated on a majority of voters: sort the voters' end offsets in
/// descending order (unknown ones last) and take the one at index `voters / 2`. `None` if that
/// voter's end offset is unknown. The leader's own end offset must be among the inputs.
pub fn majority_end_offset(voter_end_offsets: &[Option<i64>]) -> Option<i64> {
    if voter_end_offsets.is_empty() {
        return None;
    }
    let mut sorted: Vec<Option<i64>> = voter_end_offsets.to_vec();
    // `None < Some(_)` for Option ordering, so a descending sort puts unknowns last.
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    sorted[voter_end_offsets.len() / 2]
}

/// Applies the leader's commit rules to a majority end offset: a record of the current epoch
/// must be committed first (`candidate > epoch_start_offset`), and the high watermark never
/// moves backwards. Returns the new high watermark if it changes.
pub fn next_high_watermark(
    current: Option<i64>,
    majority: Option<i64>,
    epoch_start_offset: i64,
) -> Option<i64> {
    let candidate = majority?;
    if candidate <= epoch_start_offset {
        return None;
    }
    match current {
        Some(hw) if candidate <= hw => None,
        _ => Some(candidate),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Naive definition: the largest offset `o` such that a majority of voters have
    /// end offset `>= o`.
    fn naive(offsets: &[Option<i64>]) -> Option<i64> {
        let majority = offsets.len() / 2 + 1;
        offsets
            .iter()
            .flatten()
            .copied()
            .filter(|&o| {
                offsets
                    .iter()
                    .filter(|x| matches!(x, Some(v) if *v >= o))
                    .count()
                    >= majority
            })
            .max()
    }

    #[test]
    fn three_voters() {
        assert_eq!(majority_end_offset(&[Some(10), Some(5), None]), Some(5));
        assert_eq!(majority_end_offset(&[Some(10), None, None]), None);
        assert_eq!(
            majority_end_offset(&[Some(10), Some(12), Some(11)]),
            Some(11)
        );
    }

    #[test]
    fn commit_rule_needs_a_record_of_the_current_epoch() {
        // Case C01: followers at the epoch start offset do not commit anything yet.
        assert_eq!(next_high_watermark(None, Some(15), 15), None);
        assert_eq!(next_high_watermark(None, Some(16), 15), Some(16));
        assert_eq!(next_high_watermark(Some(16), Some(14), 10), None);
        assert_eq!(next_high_watermark(Some(16), Some(16), 10), None);
        assert_eq!(next_high_watermark(Some(16), Some(20), 10), Some(20));
    }

    proptest! {
        #[test]
        fn matches_naive(offsets in proptest::collection::vec(proptest::option::of(0i64..50), 1..8)) {
            prop_assert_eq!(majority_end_offset(&offsets), naive(&offsets));
        }
    }
}
