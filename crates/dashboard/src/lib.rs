//! The Grafana dashboard of kraftwerk controllers, `packaging/grafana/kraftwerk-controllers.json`:
//!
//! - [`generate`] writes it (`cargo run -p kraftwerk-dashboard` regenerates the file; a test
//!   of this crate fails while the committed file differs);
//! - [`queries`] reads every PromQL expression of a dashboard and, through [`promql`], the
//!   selectors (metric name and label matchers) each one uses;
//! - [`unmatched`] lists the selectors no sample of a set of scrapes ([`samples`]) matches;
//! - [`promtool::evaluate`] has Prometheus's PromQL engine (`promtool test rules`) evaluate
//!   every query over those samples and fails unless each returns data.
//!
//! The checks built on this (crates/server/tests/dashboard.rs against the exposition the unit
//! tests render, `scripts/it metrics` against a running quorum) do both. Selector matching
//! alone would let a wrong aggregation or a binary operation whose sides share no labels pass;
//! the promtool evaluation catches those (over constant series: it shows that a query returns
//! data, not that its values are right).

pub mod generate;
pub mod promql;
pub mod promtool;
pub mod queries;
pub mod samples;

pub use queries::{queries, Place, Query};
pub use samples::Sample;

/// The committed dashboard.
pub const DASHBOARD_JSON: &str =
    include_str!("../../../packaging/grafana/kraftwerk-controllers.json");

/// The title of the collapsed row that holds the panels of kraftwerk-only (`kraftwerk_`)
/// metrics; every other panel reads Kafka-named metrics only.
pub const KRAFTWERK_ROW: &str = generate::KRAFTWERK_ROW;

/// Every `(query, selector)` of `queries` that no sample in `samples` matches.
pub fn unmatched<'a>(
    queries: &'a [Query],
    samples: &[Sample],
) -> Vec<(&'a Query, &'a promql::Selector)> {
    queries
        .iter()
        .flat_map(|q| q.selectors.iter().map(move |s| (q, s)))
        .filter(|(_, s)| !samples.iter().any(|sample| sample.is_selected_by(s)))
        .collect()
}

/// The metric names a query of a panel outside the kraftwerk row uses that start with
/// `kraftwerk_`, as `(place, name)`.
pub fn kraftwerk_names_outside_their_row(queries: &[Query]) -> Vec<(&Place, &str)> {
    queries
        .iter()
        .filter(|q| !matches!(&q.place, Place::Panel { row: Some(r), .. } if r == KRAFTWERK_ROW))
        .flat_map(|q| {
            q.selectors
                .iter()
                .filter_map(|s| s.metric.as_deref())
                .filter(|m| m.starts_with("kraftwerk_"))
                .map(move |m| (&q.place, m))
        })
        .collect()
}
