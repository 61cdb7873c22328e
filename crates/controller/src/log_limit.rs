//! Rate limiting for log lines a client can trigger at will: authorization denials and failed
//! logins. A client looping on a denied request, or a scanner trying passwords, would otherwise
//! write one line per attempt. Java writes every one (`kafka.authorizer.logger` at INFO,
//! `Selector`'s "Failed authentication with"). kraftwerk writes the first line for a key, then
//! at most one per [`LOG_PERIOD`] for that key. The next line written says how many were
//! suppressed in between.
//!
//! The limiter is used only to decide whether a line is written. It never decides a request, so
//! it can read the wall clock even inside the deterministic controller.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The shortest time between two lines of the same key.
pub const LOG_PERIOD: Duration = Duration::from_secs(10);

/// How many keys are remembered. A flood of distinct keys (e.g. many client addresses) cannot
/// grow the table without bound. When it is full, keys older than the period are dropped, and
/// if none is, the whole table is.
pub const MAX_KEYS: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct Entry {
    last_logged: Instant,
    suppressed: u64,
}

/// Which repeated log lines to write, by key.
#[derive(Debug)]
pub struct LogLimiter {
    period: Duration,
    max_keys: usize,
    entries: HashMap<String, Entry>,
}

impl LogLimiter {
    /// A limiter allowing one line per `period` per key, remembering at most `max_keys` keys.
    pub fn new(period: Duration, max_keys: usize) -> Self {
        LogLimiter {
            period,
            max_keys: max_keys.max(1),
            entries: HashMap::new(),
        }
    }

    /// Whether a line for `key` should be written at `now`. Returns the number of lines
    /// suppressed for this key since the last one written (0 for the first), or `None` to
    /// suppress this one.
    pub fn admit(&mut self, key: &str, now: Instant) -> Option<u64> {
        if let Some(e) = self.entries.get_mut(key) {
            if now.saturating_duration_since(e.last_logged) < self.period {
                e.suppressed = e.suppressed.saturating_add(1);
                return None;
            }
            let suppressed = e.suppressed;
            *e = Entry {
                last_logged: now,
                suppressed: 0,
            };
            return Some(suppressed);
        }
        if self.entries.len() >= self.max_keys {
            let period = self.period;
            self.entries
                .retain(|_, e| now.saturating_duration_since(e.last_logged) < period);
            if self.entries.len() >= self.max_keys {
                self.entries.clear();
            }
        }
        self.entries.insert(
            key.to_owned(),
            Entry {
                last_logged: now,
                suppressed: 0,
            },
        );
        Some(0)
    }

    /// How many keys are remembered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A process-wide limiter with [`LOG_PERIOD`] and [`MAX_KEYS`], for one kind of line.
#[derive(Debug)]
pub struct SharedLogLimiter(Mutex<Option<LogLimiter>>);

impl SharedLogLimiter {
    /// An empty limiter (usable in a `static`).
    pub const fn new() -> Self {
        SharedLogLimiter(Mutex::new(None))
    }

    /// [`LogLimiter::admit`] at the current time.
    pub fn admit(&self, key: &str) -> Option<u64> {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        guard
            .get_or_insert_with(|| LogLimiter::new(LOG_PERIOD, MAX_KEYS))
            .admit(key, Instant::now())
    }
}

impl Default for SharedLogLimiter {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_is_written_then_one_per_period_with_the_count_suppressed() {
        let mut l = LogLimiter::new(Duration::from_secs(10), 16);
        let t0 = Instant::now();
        assert_eq!(l.admit("alice DENY", t0), Some(0));
        for i in 1..=5 {
            assert_eq!(l.admit("alice DENY", t0 + Duration::from_secs(i)), None);
        }
        // Another key is not held back by the first.
        assert_eq!(l.admit("bob DENY", t0 + Duration::from_secs(1)), Some(0));
        assert_eq!(
            l.admit("alice DENY", t0 + Duration::from_secs(10)),
            Some(5),
            "the next line says how many were suppressed"
        );
        assert_eq!(l.admit("alice DENY", t0 + Duration::from_secs(11)), None);
        assert_eq!(l.admit("alice DENY", t0 + Duration::from_secs(25)), Some(1));
    }

    #[test]
    fn distinct_keys_cannot_grow_the_table_past_its_bound() {
        let mut l = LogLimiter::new(Duration::from_secs(10), 8);
        let t0 = Instant::now();
        for i in 0..1000 {
            assert_eq!(l.admit(&format!("host-{i}"), t0), Some(0));
            assert!(l.len() <= 8);
        }
        // Expired keys are dropped first, keeping the recent ones.
        let mut l = LogLimiter::new(Duration::from_secs(10), 3);
        l.admit("old", t0);
        l.admit("recent-1", t0 + Duration::from_secs(9));
        l.admit("recent-2", t0 + Duration::from_secs(9));
        assert_eq!(l.admit("new", t0 + Duration::from_secs(12)), Some(0));
        assert_eq!(l.len(), 3);
        assert_eq!(l.admit("recent-1", t0 + Duration::from_secs(13)), None);
    }

    #[test]
    fn the_shared_limiter_holds_back_a_repeat() {
        static L: SharedLogLimiter = SharedLogLimiter::new();
        assert_eq!(L.admit("k"), Some(0));
        assert_eq!(L.admit("k"), None);
    }
}
