//! The end-of-run report: faults by kind with failover percentiles, metadata operations,
//! messages; printed as a table and written as JSON (`chaos-report.json` in the work dir, and
//! a copy next to it that survives the work dir's removal on PASS).

use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;

use super::data::DataTally;
use super::epochs::EpochSummary;
use super::faults::FaultResult;
use super::ops::{self, Expected, Op};
use super::plan::Kind;
use super::records::BrokerHistory;
use crate::env::Env;

/// p50/p99/max of a set of milliseconds (nearest rank).
#[derive(Clone, Debug, Serialize)]
pub struct Percentiles {
    /// How many values.
    pub n: usize,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
}

/// Nearest-rank percentiles of `v` (None when empty).
pub fn percentiles(v: &[u64]) -> Option<Percentiles> {
    let mut s = v.to_vec();
    s.sort_unstable();
    let rank = |p: f64| s[((p / 100.0 * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
    (!s.is_empty()).then(|| Percentiles {
        n: s.len(),
        p50: rank(50.0),
        p99: rank(99.0),
        max: *s.last().expect("non-empty"),
    })
}

/// One row of the fault table.
#[derive(Clone, Debug, Serialize)]
pub struct KindStats {
    /// Faults of this kind.
    pub count: usize,
    /// Of which hit the active controller.
    pub on_active: usize,
    /// Of which were followed by a leader of a higher epoch.
    pub leader_changes: usize,
    /// Fault → new leader answering, over those.
    pub failover_ms: Option<Percentiles>,
}

fn kind_stats<'a>(faults: impl Iterator<Item = &'a FaultResult>) -> KindStats {
    let fs: Vec<&FaultResult> = faults.collect();
    let ms: Vec<u64> = fs.iter().filter_map(|f| f.failover_ms).collect();
    KindStats {
        count: fs.len(),
        on_active: fs.iter().filter(|f| f.was_active).count(),
        leader_changes: ms.len(),
        failover_ms: percentiles(&ms),
    }
}

/// Metadata operations.
#[derive(Clone, Debug, Serialize)]
pub struct OpsReport {
    /// Issued.
    pub issued: usize,
    /// Acknowledged.
    pub acked: usize,
    /// Unknown: the tool timed out.
    pub timed_out: usize,
    /// Unknown: the tool reported an error.
    pub failed: usize,
    /// Acknowledged and visible at the end.
    pub verified: usize,
    /// Acknowledged, overridden by a later acknowledged one.
    pub superseded: usize,
    /// Acknowledged, possibly overridden by a later unknown one (not checked).
    pub uncertain: usize,
    /// `kind → [issued, acked, timed out, failed]`.
    pub by_kind: BTreeMap<&'static str, [usize; 4]>,
}

/// Builds the operations part from the log and the verified expectation.
pub fn ops_report(log: &[Op], e: &Expected) -> OpsReport {
    let by_kind: BTreeMap<&'static str, [usize; 4]> = ops::counts(log)
        .into_iter()
        .map(|(k, (a, b, c, d))| (k, [a, b, c, d]))
        .collect();
    let sum = |i: usize| by_kind.values().map(|v| v[i]).sum();
    OpsReport {
        issued: sum(0),
        acked: sum(1),
        timed_out: sum(2),
        failed: sum(3),
        verified: e.checked,
        superseded: e.superseded,
        uncertain: e.uncertain,
        by_kind,
    }
}

/// The whole report.
#[derive(Debug, Serialize)]
pub struct Report {
    /// `short` or `long`.
    pub mode: &'static str,
    /// Replays with `IT_CHAOS_SEED`.
    pub seed: u64,
    /// Controller implementations, by id.
    pub controllers: Vec<&'static str>,
    /// Kafka version of brokers and tools.
    pub kafka_version: String,
    /// Scenario duration so far.
    pub duration_s: f64,
    /// Per kind (and `all`).
    pub faults_by_kind: BTreeMap<&'static str, KindStats>,
    /// Every fault.
    pub faults: Vec<FaultResult>,
    /// Metadata operations.
    pub ops: OpsReport,
    /// Messages.
    pub data: DataTally,
    /// Leaders per epoch.
    pub epochs: EpochSummary,
    /// Broker registrations and fencing (none allowed).
    pub brokers: BrokerHistory,
    /// The controllers' logs are byte-identical below this offset.
    pub logs_identical_below: i64,
}

/// Fault statistics per kind plus `all`.
pub fn by_kind(faults: &[FaultResult]) -> BTreeMap<&'static str, KindStats> {
    let mut m: BTreeMap<&'static str, KindStats> = Kind::ALL
        .iter()
        .map(|k| {
            (
                k.label(),
                kind_stats(faults.iter().filter(|f| f.kind == k.label())),
            )
        })
        .collect();
    m.insert("all", kind_stats(faults.iter()));
    m
}

fn pct(p: &Option<Percentiles>) -> String {
    p.as_ref()
        .map(|p| format!("{} / {} / {}", p.p50, p.p99, p.max))
        .unwrap_or_else(|| "-".into())
}

/// The table, as printed.
pub fn table(r: &Report) -> String {
    let mut s = format!(
        "chaos report: {} mode, seed {}, controllers [{}], Kafka {}, {:.0} s\n",
        r.mode,
        r.seed,
        r.controllers.join(","),
        r.kafka_version,
        r.duration_s
    );
    s.push_str("  kind        faults  on active  leader changed  failover ms p50 / p99 / max\n");
    let order = ["sigkill", "sigterm", "sigstop", "partition", "all"];
    for k in order {
        if let Some(st) = r.faults_by_kind.get(k) {
            s.push_str(&format!(
                "  {k:<10} {:>7} {:>10} {:>15}  {}\n",
                st.count,
                st.on_active,
                st.leader_changes,
                pct(&st.failover_ms)
            ));
        }
    }
    s.push_str(&fault_rows(&r.faults));
    let o = &r.ops;
    s.push_str(&format!(
        "  metadata ops: {} issued, {} acknowledged, {} timed out, {} failed; acknowledged: {} verified, {} superseded, {} uncertain\n",
        o.issued, o.acked, o.timed_out, o.failed, o.verified, o.superseded, o.uncertain
    ));
    let d = &r.data;
    s.push_str(&format!(
        "  messages: {} acknowledged, {} consumed, lost {} ({} failed sends, {} redelivered)\n",
        d.acked, d.consumed, d.lost, d.send_errors, d.redelivered
    ));
    s.push_str(&format!(
        "  epochs: {} with one leader each (max {}); logs identical below offset {}; broker fencings: {}",
        r.epochs.epochs,
        r.epochs.max_epoch,
        r.logs_identical_below,
        r.brokers.fencings.len()
    ));
    s
}

/// One line per fault: what, whom, how long, and the failover it caused.
fn fault_rows(faults: &[FaultResult]) -> String {
    let mut s = String::from(
        "  faults:  #   kind       node        held ms  failover ms  recovered ms
",
    );
    for f in faults {
        let held = f.down_ms.unwrap_or(f.hold_ms);
        s.push_str(&format!(
            "          {:<3} {:<10} {:<11} {:>7}  {:>11}  {:>12}{}
",
            f.n,
            f.kind,
            format!("{}{}", f.node, if f.was_active { " (active)" } else { "" }),
            held,
            f.failover_ms
                .map(|m| m.to_string())
                .unwrap_or_else(|| "-".into()),
            f.recovered_ms,
            if f.drop_caches { "  cache dropped" } else { "" }
        ));
    }
    s
}

/// Prints the table and writes the JSON; returns the JSON path kept after the run.
pub fn publish(env: &Env, r: &Report) -> Result<std::path::PathBuf> {
    env.show("chaos report", &table(r));
    let json = serde_json::to_string_pretty(r)?;
    std::fs::write(env.work.join("chaos-report.json"), &json)?;
    let name = env
        .work
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "chaos".into());
    let kept = env.work_root.join(format!("{name}.chaos-report.json"));
    std::fs::write(&kept, &json)?;
    env.step(&format!(
        "report JSON: {} (copy kept as {})",
        env.work.join("chaos-report.json").display(),
        kept.display()
    ));
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        assert!(percentiles(&[]).is_none());
        let p = percentiles(&[5]).unwrap();
        assert_eq!((p.p50, p.p99, p.max), (5, 5, 5));
        let v: Vec<u64> = (1..=100).collect();
        let p = percentiles(&v).unwrap();
        assert_eq!((p.p50, p.p99, p.max), (50, 99, 100));
        let p = percentiles(&[300, 100, 200]).unwrap();
        assert_eq!((p.p50, p.p99, p.max), (200, 300, 300));
    }
}
