//! Which topics existed at a metadata offset: the scenario's topic creations and deletions, each
//! with the leader's high watermark before and after it.

use std::collections::BTreeSet;

/// One topic creation or deletion, with the leader's high watermark before and after it.
#[derive(Clone, Debug)]
pub struct Op {
    /// The topic.
    pub topic: String,
    /// Created (true) or deleted.
    pub create: bool,
    /// High watermark before the tool ran: the op's records are at or above it.
    pub hw_before: i64,
    /// High watermark after the tool returned (the change is committed): its records are below.
    pub hw_after: i64,
}

/// The metadata operations in order, to tell which topics a snapshot ending at an offset holds.
#[derive(Default)]
pub struct History {
    /// Operations, oldest first.
    pub ops: Vec<Op>,
}

impl History {
    /// Topics after the first `k` operations.
    pub fn after(&self, k: usize) -> BTreeSet<String> {
        let mut set = BTreeSet::new();
        for op in &self.ops[..k] {
            if op.create {
                set.insert(op.topic.clone());
            } else {
                set.remove(&op.topic);
            }
        }
        set
    }

    /// Topics now.
    pub fn current(&self) -> BTreeSet<String> {
        self.after(self.ops.len())
    }

    /// Every topic set a snapshot with exclusive end offset `end` can hold: operations whose
    /// records all lie below `end` (`hw_after ≤ end`) are in it, those starting at or after it
    /// (`hw_before ≥ end`) are not; one in between may be either.
    pub fn possible_at(&self, end: i64) -> Vec<BTreeSet<String>> {
        let surely = self.ops.iter().take_while(|o| o.hw_after <= end).count();
        let maybe = self.ops.iter().take_while(|o| o.hw_before < end).count();
        (surely..=maybe.max(surely))
            .map(|k| self.after(k))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(topic: &str, create: bool, hw_before: i64, hw_after: i64) -> Op {
        Op {
            topic: topic.into(),
            create,
            hw_before,
            hw_after,
        }
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_snapshot_offset_allows_only_the_states_around_it() {
        let h = History {
            ops: vec![
                op("a", true, 10, 20),
                op("b", true, 20, 30),
                op("a", false, 30, 35),
            ],
        };
        assert_eq!(h.possible_at(5), vec![set(&[])]);
        assert_eq!(h.possible_at(20), vec![set(&["a"])]);
        // Inside b's window: with or without b.
        assert_eq!(h.possible_at(25), vec![set(&["a"]), set(&["a", "b"])]);
        assert_eq!(h.possible_at(35), vec![set(&["b"])]);
        assert_eq!(h.current(), set(&["b"]));
    }
}
