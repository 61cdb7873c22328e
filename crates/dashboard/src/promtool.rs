//! The dashboard's queries evaluated by Prometheus's own PromQL engine, without a Prometheus
//! server: `promtool test rules` over a test file whose input series are the scraped samples
//! (each a constant series) and whose tests are `absent(<query>)` expecting no sample, i.e.
//! each query returns at least one sample. Grafana's variables become match-anything
//! (`$instance` → `.+`) and `$__rate_interval` one minute of samples 15 s apart.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use regex::{Captures, Regex};

use crate::queries::Query;
use crate::samples::Sample;

/// Scrape interval of the input series, and their length in intervals.
const INTERVAL: &str = "15s";
const POINTS: u32 = 40;
/// When the queries are evaluated: inside the series, more than a rate window after their start.
const EVAL_TIME: &str = "5m";

/// The promtool `scripts/lib/setup.sh` provides: `$KRAFTWERK_PROMTOOL`, else
/// `$KRAFTWERK_TOOLS/promtool`, else `~/.cache/kraftwerk/bin/promtool`.
pub fn locate() -> PathBuf {
    if let Some(path) = std::env::var_os("KRAFTWERK_PROMTOOL") {
        return path.into();
    }
    let bin = std::env::var_os("KRAFTWERK_TOOLS").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/kraftwerk/bin"),
        PathBuf::from,
    );
    bin.join("promtool")
}

/// `expr` with Grafana's variables replaced for one evaluation: `$__rate_interval`,
/// `$__interval` → `1m`, `$__range` → `5m`, any other `$name` or `${name}` → `.+` (they sit in
/// `=~` matchers).
pub fn substitute(expr: &str) -> String {
    let var = Regex::new(r"\$\{(\w+)\}|\$(\w+)").expect("a valid regex");
    var.replace_all(expr, |c: &Captures| {
        let name = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
        match name {
            "__rate_interval" | "__interval" => "1m",
            "__range" => "5m",
            _ => ".+",
        }
        .to_owned()
    })
    .into_owned()
}

/// A JSON string, which is also a YAML double-quoted scalar.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

fn series_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "Inf" } else { "-Inf" }.to_owned()
    } else {
        format!("{v}")
    }
}

/// The `promtool test rules` file: `samples` as constant series, one test per query with
/// PromQL.
pub fn rule_test(queries: &[Query], samples: &[Sample]) -> String {
    let mut out = format!(
        "rule_files: []\nevaluation_interval: {INTERVAL}\ntests:\n  - interval: {INTERVAL}\n    input_series:\n"
    );
    for s in samples {
        let labels: Vec<String> = s
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={}", quoted(v)))
            .collect();
        let series = format!("{}{{{}}}", s.name, labels.join(","));
        out.push_str(&format!(
            "      - series: {}\n        values: \"{}+0x{POINTS}\"\n",
            quoted(&series),
            series_value(s.value)
        ));
    }
    out.push_str("    promql_expr_test:\n");
    for q in queries.iter().filter(|q| !q.promql.trim().is_empty()) {
        out.push_str(&format!(
            "      - expr: {}\n        eval_time: {EVAL_TIME}\n        exp_samples: []\n",
            quoted(&format!("absent({})", substitute(&q.promql)))
        ));
    }
    out
}

/// promtool refused a query, or could not run.
#[derive(Debug, thiserror::Error)]
pub enum PromtoolError {
    /// No promtool where [`locate`] looks.
    #[error("{0} is missing: scripts/lib/setup.sh's kraftwerk_ensure_deps builds it")]
    Missing(PathBuf),
    /// Writing the test file or starting promtool failed.
    #[error("promtool: {0}")]
    Io(#[from] std::io::Error),
    /// Some query returned no data (or did not parse); promtool's report.
    #[error("promtool test rules failed (a query returned no data or did not parse):\n{0}")]
    Failed(String),
}

/// Runs `promtool test rules` over [`rule_test`] of `queries` and `samples`.
pub fn evaluate(
    promtool: &Path,
    queries: &[Query],
    samples: &[Sample],
) -> Result<usize, PromtoolError> {
    static N: AtomicU64 = AtomicU64::new(0);
    if !promtool.is_file() {
        return Err(PromtoolError::Missing(promtool.to_owned()));
    }
    let path = std::env::temp_dir().join(format!(
        "kraftwerk-dashboard-{}-{}.yaml",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, rule_test(queries, samples))?;
    let output = Command::new(promtool)
        .arg("test")
        .arg("rules")
        .arg(&path)
        .output();
    let _ = std::fs::remove_file(&path);
    let output = output?;
    if !output.status.success() {
        return Err(PromtoolError::Failed(format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    Ok(queries
        .iter()
        .filter(|q| !q.promql.trim().is_empty())
        .count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grafana_variables_are_substituted() {
        assert_eq!(
            substitute(r#"rate(m{job=~"$job",instance=~"${instance}"}[$__rate_interval])"#),
            r#"rate(m{job=~".+",instance=~".+"}[1m])"#
        );
    }
}
