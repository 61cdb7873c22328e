//! Builders of `prometheus` metric families in the shapes the Prometheus JMX exporter
//! (1.x, which Strimzi ships) gives Kafka's MBeans: gauges, counters whose exposed name
//! ends in `_total` (client_java 1.x appends it, and the TYPE line names it), and untyped
//! samples (`current-state`), which the crate's text encoder cannot write (it panics on
//! `MetricType::UNTYPED`), so [`Untyped`] writes them itself.

use std::fmt::Write as _;

use prometheus::proto::{Counter, Gauge, LabelPair, Metric, MetricFamily, MetricType};

/// A family with its name, help and type, and no samples yet.
fn family(name: &str, help: &str, kind: MetricType) -> MetricFamily {
    let mut f = MetricFamily::default();
    f.set_name(name.to_owned());
    f.set_help(help.to_owned());
    f.set_field_type(kind);
    f
}

/// Label pairs from `(name, value)`s.
fn labels(pairs: &[(&str, String)]) -> Vec<LabelPair> {
    pairs
        .iter()
        .map(|(n, v)| {
            let mut l = LabelPair::default();
            l.set_name((*n).to_owned());
            l.set_value(v.clone());
            l
        })
        .collect()
}

/// A gauge family without labels.
pub fn gauge(name: &str, help: &str, value: f64) -> MetricFamily {
    labelled_gauge(name, help, [(Vec::new(), value)])
}

/// A gauge family with one sample per `(labels, value)`.
pub fn labelled_gauge<'a>(
    name: &str,
    help: &str,
    samples: impl IntoIterator<Item = (Vec<(&'a str, String)>, f64)>,
) -> MetricFamily {
    let mut f = family(name, help, MetricType::GAUGE);
    for (pairs, value) in samples {
        let mut g = Gauge::default();
        g.set_value(value);
        let mut m = Metric::from_gauge(g);
        m.set_label(labels(&pairs));
        f.mut_metric().push(m);
    }
    f
}

/// A counter family without labels. `name` must be the exposed name, ending in `_total`.
pub fn counter(name: &str, help: &str, value: f64) -> MetricFamily {
    debug_assert!(name.ends_with("_total"), "counter {name} without _total");
    let mut f = family(name, help, MetricType::COUNTER);
    let mut c = Counter::default();
    c.set_value(value);
    let mut m = Metric::default();
    m.set_counter(c);
    f.mut_metric().push(m);
    f
}

/// An untyped family (the JMX exporter's `type: UNTYPED`) with its samples, written in the
/// text format by [`Untyped::encode`].
pub struct Untyped {
    /// Metric name.
    pub name: &'static str,
    /// HELP text.
    pub help: String,
    /// `(labels, value)` per sample.
    pub samples: Vec<(Vec<(&'static str, String)>, f64)>,
}

impl Untyped {
    /// Appends the family to `out` as the text format 0.0.4 has it: HELP (with `\` and
    /// newlines escaped), TYPE, then one line per sample (label values with `\`, `"` and
    /// newlines escaped).
    pub fn encode(&self, out: &mut String) {
        let help = self.help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(out, "# HELP {} {help}", self.name);
        let _ = writeln!(out, "# TYPE {} untyped", self.name);
        for (pairs, value) in &self.samples {
            out.push_str(self.name);
            if !pairs.is_empty() {
                let rendered: Vec<String> = pairs
                    .iter()
                    .map(|(n, v)| {
                        let v = v
                            .replace('\\', "\\\\")
                            .replace('"', "\\\"")
                            .replace('\n', "\\n");
                        format!("{n}=\"{v}\"")
                    })
                    .collect();
                let _ = write!(out, "{{{}}}", rendered.join(","));
            }
            let _ = writeln!(out, " {value}");
        }
    }
}

/// The percentile attributes of a Yammer histogram MBean and the `quantile` label value
/// Strimzi's rule `(\d+)thPercentile` → `quantile: "0.$N"` makes of each.
pub const PERCENTILES: [(f64, &str); 6] = [
    (0.50, "0.50"),
    (0.75, "0.75"),
    (0.95, "0.95"),
    (0.98, "0.98"),
    (0.99, "0.99"),
    (0.999, "0.999"),
];
