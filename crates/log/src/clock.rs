//! The wall clock the log reads for time-based segment rolling (Kafka's `Time` as `UnifiedLog`
//! and `LogSegment` use it), injectable so that tests can drive it.

use std::fmt::Debug;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in ms since the Unix epoch (Kafka `Time.milliseconds()`).
///
/// [`SegmentLog`](crate::SegmentLog) reads it only where Kafka's `LogSegment` does: when a
/// segment is created or loaded (its `created` time), when a truncation empties a segment, and
/// on append, for the `segment.ms` rule of a segment whose first batch has no timestamp.
pub trait Clock: Debug + Send + Sync {
    /// Current time in ms since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }
}

/// A clock that only moves when told to (Kafka's `MockTime`); clones share the time.
#[derive(Clone, Debug, Default)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock reading `now_ms`.
    pub fn new(now_ms: i64) -> ManualClock {
        ManualClock(Arc::new(AtomicI64::new(now_ms)))
    }

    /// Moves the clock forward by `ms`.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}
