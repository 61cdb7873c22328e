//! The measurements behind Kafka's windowed controller metrics: `kafka.server:type=raft-metrics`
//! sensors (`KafkaRaftMetrics`: commit and election latency, append and fetch rates, poll idle
//! ratio) and the `ControllerEventManager` histograms (`QuorumControllerMetrics`). The node
//! records raw samples with its own clock; the metrics endpoint evaluates them at scrape time.

use std::collections::VecDeque;

/// `metrics.sample.window.ms` default: the length of one sample window of a Kafka sensor.
pub const SAMPLE_WINDOW_MS: u64 = 30_000;

/// `metrics.num.samples` default: windows a Kafka sensor keeps.
pub const NUM_SAMPLES: usize = 2;

/// Samples a [`Histogram`] keeps: the size of Yammer's `ExponentiallyDecayingReservoir` that
/// Kafka's `KafkaYammerMetrics` histograms use.
pub const HISTOGRAM_RESERVOIR: usize = 1028;

/// One window of a [`WindowedStat`].
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    start_ms: u64,
    count: u64,
    sum: f64,
    max: f64,
}

/// A Kafka `SampledStat`: values recorded into [`NUM_SAMPLES`] windows of
/// [`SAMPLE_WINDOW_MS`]; windows older than all of them together no longer count. Serves
/// `Avg`, `Max` and `Rate(SECONDS, WindowedSum)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WindowedStat {
    samples: VecDeque<Sample>,
}

impl WindowedStat {
    /// Records `value` at `now_ms`.
    pub fn record(&mut self, value: f64, now_ms: u64) {
        let current = self
            .samples
            .back()
            .is_some_and(|s| now_ms < s.start_ms + SAMPLE_WINDOW_MS);
        if !current {
            if self.samples.len() == NUM_SAMPLES {
                self.samples.pop_front();
            }
            self.samples.push_back(Sample {
                start_ms: now_ms,
                count: 0,
                sum: 0.0,
                max: f64::NEG_INFINITY,
            });
        }
        let s = self.samples.back_mut().expect("a sample was just ensured");
        s.count += 1;
        s.sum += value;
        s.max = s.max.max(value);
    }

    /// Windows still inside the sensor's time span at `now_ms` (Kafka's `purgeObsoleteSamples`).
    fn live(&self, now_ms: u64) -> impl Iterator<Item = &Sample> {
        let span = SAMPLE_WINDOW_MS * NUM_SAMPLES as u64;
        self.samples
            .iter()
            .filter(move |s| now_ms.saturating_sub(s.start_ms) < span)
    }

    /// `Avg`: mean of the values in the live windows, NaN if there are none (as Kafka's).
    pub fn avg(&self, now_ms: u64) -> f64 {
        let (count, sum) = self
            .live(now_ms)
            .fold((0u64, 0.0), |(c, s), w| (c + w.count, s + w.sum));
        if count == 0 {
            f64::NAN
        } else {
            sum / count as f64
        }
    }

    /// `Max`: largest value in the live windows, NaN if there are none (as Kafka's).
    pub fn max(&self, now_ms: u64) -> f64 {
        self.live(now_ms)
            .map(|w| w.max)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
            .unwrap_or(f64::NAN)
    }

    /// Sum of the values in the live windows.
    pub fn sum(&self, now_ms: u64) -> f64 {
        self.live(now_ms).map(|w| w.sum).sum()
    }

    /// `Rate(SECONDS)`: the live windows' sum per second of their span, where the span is at
    /// least all full windows but the current one (Kafka's `Rate.windowSize`), so a fresh
    /// sensor does not report a burst as a huge rate. 0 without samples.
    pub fn rate_per_sec(&self, now_ms: u64) -> f64 {
        let Some(oldest) = self.live(now_ms).map(|s| s.start_ms).min() else {
            return 0.0;
        };
        let elapsed = now_ms.saturating_sub(oldest);
        let min_span = SAMPLE_WINDOW_MS * (NUM_SAMPLES as u64 - 1);
        let span_ms = elapsed.max(min_span).max(1);
        self.sum(now_ms) / (span_ms as f64 / 1000.0)
    }
}

/// A Yammer-style histogram as Kafka's `ControllerEventManager` metrics use: a total count
/// and a reservoir of recent values for the quantiles. kraftwerk keeps the last
/// [`HISTOGRAM_RESERVOIR`] values (Yammer's biased reservoir favours recent values the same
/// way, by exponential decay rather than a hard window).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    count: u64,
    recent: VecDeque<u64>,
}

impl Histogram {
    /// Records one value.
    pub fn update(&mut self, value: u64) {
        self.count += 1;
        if self.recent.len() == HISTOGRAM_RESERVOIR {
            self.recent.pop_front();
        }
        self.recent.push_back(value);
    }

    /// Values recorded since the node started (the MBean's `Count`).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `q` quantile of the recent values (Yammer's `Snapshot.getValue`: linear
    /// interpolation between the ranks around `q * (n + 1)`); 0 when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        let mut values: Vec<u64> = self.recent.iter().copied().collect();
        if values.is_empty() {
            return 0.0;
        }
        values.sort_unstable();
        let pos = q * (values.len() + 1) as f64;
        if pos < 1.0 {
            return values[0] as f64;
        }
        if pos >= values.len() as f64 {
            return values[values.len() - 1] as f64;
        }
        let lower = values[pos as usize - 1] as f64;
        let upper = values[pos as usize] as f64;
        lower + (pos - pos.floor()) * (upper - lower)
    }
}

/// The raw measurements behind the windowed and histogram metrics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sensors {
    /// ms from appending a batch as leader to its commit (`commit-latency`).
    pub commit_latency_ms: WindowedStat,
    /// ms from the start of a leaderless period (election) to knowing a leader
    /// (`election-latency`).
    pub election_latency_ms: WindowedStat,
    /// Records appended as leader (`append-records`).
    pub append_records: WindowedStat,
    /// Records (offsets) fetched from the leader as a follower (`fetch-records`).
    pub fetch_records: WindowedStat,
    /// ms the node thread waited for work (`poll-idle-ratio`, numerator).
    pub poll_idle_ms: WindowedStat,
    /// ms the node thread waited plus worked (`poll-idle-ratio`, denominator).
    pub poll_total_ms: WindowedStat,
    /// ms an event waited in the node's queue (`EventQueueTimeMs`).
    pub event_queue_time_ms: Histogram,
    /// ms the node took to handle an event (`EventQueueProcessingTimeMs`).
    pub event_processing_time_ms: Histogram,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avg_and_max_cover_the_live_windows_only() {
        let mut s = WindowedStat::default();
        assert!(s.avg(0).is_nan() && s.max(0).is_nan());
        s.record(10.0, 1_000);
        s.record(30.0, 2_000);
        assert_eq!(s.avg(2_000), 20.0);
        assert_eq!(s.max(2_000), 30.0);
        s.record(2.0, 40_000); // second window
        assert_eq!(s.max(40_000), 30.0);
        // The first window (from 1 000) leaves the 60 s span at 61 000.
        assert_eq!(s.max(61_000), 2.0);
        assert_eq!(s.avg(61_000), 2.0);
        assert!(s.avg(100_001).is_nan());
    }

    #[test]
    fn rate_spreads_a_burst_over_at_least_one_window() {
        let mut s = WindowedStat::default();
        assert_eq!(s.rate_per_sec(0), 0.0);
        s.record(300.0, 1_000);
        // 300 records over (at least) 30 s.
        assert_eq!(s.rate_per_sec(2_000), 10.0);
        s.record(300.0, 41_000);
        // 600 over the 50 s since the first window started.
        assert_eq!(s.rate_per_sec(51_000), 12.0);
    }

    #[test]
    fn histogram_quantiles_interpolate_the_recent_values() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile(0.5), 0.0);
        for v in 1..=4 {
            h.update(v);
        }
        assert_eq!(h.count(), 4);
        assert_eq!(h.quantile(0.5), 2.5);
        assert_eq!(h.quantile(0.99), 4.0);
        for _ in 0..HISTOGRAM_RESERVOIR {
            h.update(7);
        }
        assert_eq!(h.count(), 4 + HISTOGRAM_RESERVOIR as u64);
        assert_eq!(h.quantile(0.5), 7.0);
    }
}
