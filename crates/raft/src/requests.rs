//! Outbound request bookkeeping per destination (Kafka `RequestManager`): at most one request in
//! flight per destination, a timeout per request, and a fixed retry backoff after a failure.

use std::collections::BTreeMap;

use crate::io::OutboundId;

#[derive(Clone, Copy, Debug)]
struct InFlight {
    id: OutboundId,
    deadline_ms: u64,
}

/// Tracks in-flight requests and backoffs, keyed by destination node id.
#[derive(Debug, Default)]
pub(crate) struct RequestManager {
    in_flight: BTreeMap<i32, InFlight>,
    backoff_until_ms: BTreeMap<i32, u64>,
    next_id: u64,
}

impl RequestManager {
    /// True if a new request may go to `destination` now.
    pub fn is_ready(&self, destination: i32, now_ms: u64) -> bool {
        !self.in_flight.contains_key(&destination)
            && self
                .backoff_until_ms
                .get(&destination)
                .is_none_or(|&t| now_ms >= t)
    }

    /// Records a request sent to `destination` and returns its id.
    pub fn on_send(&mut self, destination: i32, now_ms: u64, timeout_ms: u64) -> OutboundId {
        self.next_id += 1;
        let id = OutboundId(self.next_id);
        self.in_flight.insert(
            destination,
            InFlight {
                id,
                deadline_ms: now_ms + timeout_ms,
            },
        );
        self.backoff_until_ms.remove(&destination);
        id
    }

    /// Matches a response or failure to its destination; `None` if it is no longer expected
    /// (timed out, or the manager was reset by a state transition).
    pub fn complete(&mut self, id: OutboundId) -> Option<i32> {
        let destination = self
            .in_flight
            .iter()
            .find(|(_, f)| f.id == id)
            .map(|(&d, _)| d)?;
        self.in_flight.remove(&destination);
        Some(destination)
    }

    /// Starts the retry backoff for `destination`.
    pub fn backoff(&mut self, destination: i32, now_ms: u64, backoff_ms: u64) {
        self.backoff_until_ms
            .insert(destination, now_ms + backoff_ms);
    }

    /// Expires requests whose timeout passed; returns their destinations (now backing off).
    /// Also forgets backoffs that ended: an ended backoff is no deadline, and keeping it would
    /// put [`Self::next_deadline_ms`] in the past until the next send to that destination — for
    /// a leader, whose only sends to a down voter are BeginQuorumEpoch once per timer, a busy
    /// loop between the end of the backoff and the next timer.
    pub fn expire(&mut self, now_ms: u64, backoff_ms: u64) -> Vec<i32> {
        self.backoff_until_ms.retain(|_, &mut until| until > now_ms);
        let expired: Vec<i32> = self
            .in_flight
            .iter()
            .filter(|(_, f)| now_ms >= f.deadline_ms)
            .map(|(&d, _)| d)
            .collect();
        for d in &expired {
            self.in_flight.remove(d);
            self.backoff_until_ms.insert(*d, now_ms + backoff_ms);
        }
        expired
    }

    /// Forgets every in-flight request and backoff (Kafka `resetAll` on state transitions).
    pub fn reset(&mut self) {
        self.in_flight.clear();
        self.backoff_until_ms.clear();
    }

    /// Earliest time something here changes (a timeout or the end of a backoff).
    pub fn next_deadline_ms(&self) -> Option<u64> {
        self.in_flight
            .values()
            .map(|f| f.deadline_ms)
            .chain(self.backoff_until_ms.values().copied())
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_in_flight_per_destination_and_backoff_after_failure() {
        let mut m = RequestManager::default();
        assert!(m.is_ready(2, 0));
        let id = m.on_send(2, 0, 2000);
        assert!(!m.is_ready(2, 10));
        assert!(m.is_ready(3, 10));
        assert_eq!(m.complete(id), Some(2));
        assert_eq!(m.complete(id), None, "a second completion is not expected");
        m.backoff(2, 100, 20);
        assert!(!m.is_ready(2, 119));
        assert!(m.is_ready(2, 120));
    }

    #[test]
    fn expiry_and_reset_drop_requests() {
        let mut m = RequestManager::default();
        let a = m.on_send(1, 0, 100);
        let _b = m.on_send(2, 50, 100);
        assert_eq!(m.expire(100, 20), vec![1]);
        assert_eq!(m.complete(a), None);
        // a expired; b (sent at 50, 100 ms timeout) is due at 150, but a retry backoff of 20
        // after a's expiry at 100 comes first.
        assert_eq!(m.next_deadline_ms(), Some(120));
        m.reset();
        assert!(m.is_ready(1, 100) && m.is_ready(2, 100));
    }

    #[test]
    fn an_ended_backoff_is_no_deadline() {
        let mut m = RequestManager::default();
        let id = m.on_send(2, 0, 2_000);
        m.complete(id);
        m.backoff(2, 10, 20);
        assert_eq!(m.next_deadline_ms(), Some(30));
        m.expire(29, 20);
        assert_eq!(m.next_deadline_ms(), Some(30), "still backing off at 29");
        m.expire(30, 20);
        assert_eq!(m.next_deadline_ms(), None, "nothing left to wait for");
        assert!(m.is_ready(2, 30));
    }
}
