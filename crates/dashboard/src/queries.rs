//! Every PromQL expression of a Grafana dashboard (schema 39): panel targets (panels inside
//! rows included, collapsed or not) and query variables of the templating, each with the row
//! it sits in and its selectors.

use serde_json::Value;

use crate::promql::{selectors, PromqlError, Selector};

/// Where a query sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A panel's target.
    Panel {
        /// The title of the row holding the panel (a collapsed row's `panels`, or the last
        /// row above it at the top level); `None` above the first row.
        row: Option<String>,
        /// The panel's title.
        title: String,
    },
    /// A query variable of the templating.
    Variable(String),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Panel {
                row: Some(r),
                title,
            } => write!(f, "panel `{title}` (row `{r}`)"),
            Place::Panel { row: None, title } => write!(f, "panel `{title}`"),
            Place::Variable(v) => write!(f, "variable `${v}`"),
        }
    }
}

/// One query and the selectors it reads.
#[derive(Clone, Debug)]
pub struct Query {
    /// Where it is.
    pub place: Place,
    /// The expression as written (for a variable, its whole query, `label_values(…)` too).
    pub expr: String,
    /// The PromQL in it (for a variable, the selector inside `label_values(…)`; empty for a
    /// variable that reads no series).
    pub promql: String,
    /// Its selectors.
    pub selectors: Vec<Selector>,
}

/// A dashboard whose queries cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// Not JSON.
    #[error("dashboard is not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// An expression the extractor refuses.
    #[error("{place}: `{expr}`: {source}")]
    Promql {
        /// Where.
        place: Place,
        /// The expression.
        expr: String,
        /// Why.
        source: PromqlError,
    },
    /// A variable query in a form Grafana's Prometheus data source has, but this does not.
    #[error("{0}: unsupported variable query `{1}`")]
    Variable(Place, String),
}

/// Every query of the dashboard `json`.
pub fn queries(json: &str) -> Result<Vec<Query>, DashboardError> {
    let dashboard: Value = serde_json::from_str(json)?;
    let mut found: Vec<(Place, String, String)> = Vec::new();
    let mut row: Option<String> = None;
    for panel in array(&dashboard, "panels") {
        if panel["type"] == "row" {
            row = Some(title(panel));
        }
        collect_panel(panel, &row, &mut found);
    }
    for variable in array(&dashboard["templating"], "list") {
        if variable["type"] != "query" {
            continue;
        }
        let name = variable["name"].as_str().unwrap_or_default().to_owned();
        let query = match &variable["query"] {
            Value::String(s) => s.clone(),
            other => other["query"].as_str().unwrap_or_default().to_owned(),
        };
        let place = Place::Variable(name);
        let promql = variable_promql(&query)
            .ok_or_else(|| DashboardError::Variable(place.clone(), query.clone()))?;
        found.push((place, query.clone(), promql.to_owned()));
    }
    found
        .into_iter()
        .map(|(place, expr, promql)| {
            let selectors = selectors(&promql).map_err(|source| DashboardError::Promql {
                place: place.clone(),
                expr: expr.clone(),
                source,
            })?;
            Ok(Query {
                place,
                expr,
                promql,
                selectors,
            })
        })
        .collect()
}

fn array<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v[key].as_array().into_iter().flatten()
}

fn title(panel: &Value) -> String {
    panel["title"].as_str().unwrap_or_default().to_owned()
}

/// The targets of `panel` and of the panels inside it (a collapsed row's).
fn collect_panel(panel: &Value, row: &Option<String>, found: &mut Vec<(Place, String, String)>) {
    for target in array(panel, "targets") {
        if let Some(expr) = target["expr"].as_str() {
            let place = Place::Panel {
                row: row.clone(),
                title: title(panel),
            };
            found.push((place, expr.to_owned(), expr.to_owned()));
        }
    }
    for inner in array(panel, "panels") {
        collect_panel(inner, row, found);
    }
}

/// The PromQL inside a variable query of Grafana's Prometheus data source:
/// `label_values(selector, label)` → the selector, `label_values(label)` → none (empty),
/// `query_result(expr)` → expr; `metrics(regex)` and `label_names()` read no series (empty).
/// `None` for anything else that is not plain PromQL.
fn variable_promql(query: &str) -> Option<&str> {
    let q = query.trim();
    let inner = |prefix: &str| {
        q.strip_prefix(prefix)
            .and_then(|r| r.trim_start().strip_prefix('('))
            .and_then(|r| r.trim_end().strip_suffix(')'))
    };
    if let Some(args) = inner("label_values") {
        return Some(args.rsplit_once(',').map_or("", |(sel, _label)| sel));
    }
    if let Some(expr) = inner("query_result") {
        return Some(expr);
    }
    if inner("metrics").is_some() || inner("label_names").is_some() {
        return Some("");
    }
    Some(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_nested_panels_and_variables_are_all_read() {
        let json = r#"{
          "panels": [
            {"type": "stat", "title": "top", "targets": [{"expr": "a"}]},
            {"type": "row", "title": "open", "collapsed": false, "panels": []},
            {"type": "timeseries", "title": "below", "targets": [{"expr": "rate(b_total[5m])"}, {"refId": "no expr"}]},
            {"type": "row", "title": "closed", "collapsed": true, "panels": [
              {"type": "timeseries", "title": "inside", "targets": [{"expr": "c{x=\"1\"}"}]}
            ]}
          ],
          "templating": {"list": [
            {"type": "query", "name": "job", "query": {"query": "label_values(d, job)", "refId": "v"}},
            {"type": "query", "name": "instance", "query": "label_values(e{job=~\"$job\"}, instance)"},
            {"type": "query", "name": "lbl", "query": "label_values(job)"},
            {"type": "custom", "name": "c", "query": "1,2"}
          ]}
        }"#;
        let qs = queries(json).unwrap();
        let got: Vec<(String, Vec<String>)> = qs
            .iter()
            .map(|q| {
                (
                    q.place.to_string(),
                    q.selectors.iter().map(ToString::to_string).collect(),
                )
            })
            .collect();
        let want: Vec<(String, Vec<String>)> = [
            ("panel `top`", vec!["a"]),
            ("panel `below` (row `open`)", vec!["b_total"]),
            ("panel `inside` (row `closed`)", vec![r#"c{x="1"}"#]),
            ("variable `$job`", vec!["d"]),
            ("variable `$instance`", vec![r#"e{job=~"$job"}"#]),
            ("variable `$lbl`", vec![]),
        ]
        .into_iter()
        .map(|(p, s)| (p.to_owned(), s.into_iter().map(str::to_owned).collect()))
        .collect();
        assert_eq!(got, want);
    }
}
