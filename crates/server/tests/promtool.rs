//! Prometheus's own `promtool check metrics` over the `/metrics` exposition: it must parse,
//! and its lint may report only the problems listed here, each inherent to a shape the
//! Prometheus JMX exporter gives the Java controller (dashboards query those names).
//!
//! promtool comes from `scripts/lib/setup.sh` (`kraftwerk_ensure_deps`, which scripts/test
//! and .ci/run call before `cargo test`): `$KRAFTWERK_TOOLS/promtool`, default
//! `~/.cache/kraftwerk/bin/promtool`, or `$KRAFTWERK_PROMTOOL`. This test fails, never skips,
//! when it is missing.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Lint problems allowed, as `metric problem` lines, and why.
const ALLOWED: &[(&str, &str)] = &[
    (
        "kafka_controller_controllereventmanager_eventqueuetimems non-summary metrics should not have \"quantile\" label",
        "Strimzi's rule `(\\d+)thPercentile` makes a Yammer histogram's percentiles a gauge with a quantile label",
    ),
    (
        "kafka_controller_controllereventmanager_eventqueueprocessingtimems non-summary metrics should not have \"quantile\" label",
        "Strimzi's rule `(\\d+)thPercentile` makes a Yammer histogram's percentiles a gauge with a quantile label",
    ),
];

fn promtool() -> PathBuf {
    if let Some(path) = std::env::var_os("KRAFTWERK_PROMTOOL") {
        return path.into();
    }
    let bin = std::env::var_os("KRAFTWERK_TOOLS").map_or_else(
        || {
            let home = std::env::var_os("HOME").expect("HOME is set");
            PathBuf::from(home).join(".cache/kraftwerk/bin")
        },
        PathBuf::from,
    );
    bin.join("promtool")
}

#[test]
fn promtool_check_metrics_accepts_the_exposition() {
    let promtool = promtool();
    assert!(
        promtool.is_file(),
        "{} is missing: run scripts/lib/setup.sh's kraftwerk_ensure_deps (scripts/test does), or \
         GOBIN=~/.cache/kraftwerk/bin go install github.com/prometheus/prometheus/cmd/promtool@v0.316.0",
        promtool.display()
    );
    let text = common::exposition();
    let mut child = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(text.as_bytes())
        .expect("promtool reads the exposition");
    let output = child.wait_with_output().expect("promtool ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let problems: Vec<&str> = stderr.lines().filter(|l| !l.is_empty()).collect();
    let unexpected: Vec<&&str> = problems
        .iter()
        .filter(|p| !ALLOWED.iter().any(|(a, _)| a == *p))
        .collect();
    assert!(
        unexpected.is_empty(),
        "promtool check metrics: {unexpected:#?}\n(exit {:?}) over\n{text}",
        output.status.code()
    );
    // 0: clean; 3: lint problems only (all allowed above). 1 would be a parse failure.
    let expected = if problems.is_empty() { 0 } else { 3 };
    assert_eq!(output.status.code(), Some(expected), "{stderr}");
    // Every allowed problem still occurs: the list cannot outlive its reason.
    for (allowed, reason) in ALLOWED {
        assert!(
            problems.contains(allowed),
            "`{allowed}` ({reason}) no longer reported"
        );
    }
}

#[test]
fn promtool_rejects_a_broken_exposition() {
    // The check above can fail: promtool refuses a sample that is not a number.
    let promtool = promtool();
    assert!(promtool.is_file(), "{} is missing", promtool.display());
    let mut child = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("promtool starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(b"# HELP x_total a\n# TYPE x_total counter\nx_total one\n")
        .expect("promtool reads");
    let status = child.wait().expect("promtool ends");
    assert_eq!(status.code(), Some(1));
}
