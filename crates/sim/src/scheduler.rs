//! A seeded, single-threaded event scheduler: a priority queue of `(time, sequence)` so that
//! events at the same millisecond run in the order they were scheduled (Kafka's
//! `RaftEventSimulationTest.EventScheduler`, TigerBeetle's VOPR).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Events ordered by time, ties broken by insertion order.
#[derive(Debug)]
pub struct Scheduler<E> {
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    slots: Vec<Option<E>>,
    free: Vec<usize>,
    seq: u64,
    now_ms: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            seq: 0,
            now_ms: 0,
        }
    }
}

impl<E> Scheduler<E> {
    /// Current simulated time in ms.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Schedules `event` at `at_ms` (clamped to now).
    pub fn schedule(&mut self, at_ms: u64, event: E) {
        let at = at_ms.max(self.now_ms);
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(event);
                i
            }
            None => {
                self.slots.push(Some(event));
                self.slots.len() - 1
            }
        };
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, slot)));
    }

    /// Pops the next event, advancing the clock to its time.
    pub fn pop_next(&mut self) -> Option<(u64, E)> {
        let Reverse((at, _, slot)) = self.heap.pop()?;
        self.now_ms = at;
        let event = self.slots[slot]
            .take()
            .expect("scheduled slot holds an event");
        self.free.push(slot);
        Some((at, event))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True if nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_keep_insertion_order() {
        let mut s = Scheduler::default();
        s.schedule(10, "b");
        s.schedule(5, "a");
        s.schedule(10, "c");
        assert_eq!(s.pop_next(), Some((5, "a")));
        assert_eq!(s.pop_next(), Some((10, "b")));
        assert_eq!(s.pop_next(), Some((10, "c")));
        assert_eq!(s.pop_next(), None);
        s.schedule(1, "late");
        assert_eq!(
            s.pop_next(),
            Some((10, "late")),
            "the clock never goes back"
        );
    }
}
