//! A small PromQL *selector* extractor: the metric names and label matchers an expression
//! reads, and nothing of what it computes. It is no PromQL parser: it skips what cannot name
//! a series (string and number literals, durations and subquery ranges in `[…]`, Grafana
//! variables, operators) and knows the names that are not metrics (functions, aggregation
//! operators, keywords, the label lists of `by`/`without`/`on`/`ignoring`/`group_left`/
//! `group_right`). An identifier left over is a metric name, with the matchers of the `{…}`
//! right after it; a `{…}` after no name is a selector without one.
//!
//! Label matchers follow Prometheus: `=`, `!=`, `=~`, `!~`; a regex is anchored
//! (`^(?:re)$`); a missing label has the value `""`. A matcher whose value holds a Grafana
//! variable (`$instance`, `${job}`) matches anything: the dashboard is checked for every
//! value the variable may take.

use regex::Regex;

/// An identifier followed by `(` that is not one of these is refused: a typo (`rat(`) would
/// make Grafana show an error instead of a panel. Prometheus 3.x functions.
const FUNCTIONS: &[&str] = &[
    "abs",
    "absent",
    "absent_over_time",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "avg_over_time",
    "ceil",
    "changes",
    "clamp",
    "clamp_max",
    "clamp_min",
    "cos",
    "cosh",
    "count_over_time",
    "day_of_month",
    "day_of_week",
    "day_of_year",
    "days_in_month",
    "deg",
    "delta",
    "deriv",
    "double_exponential_smoothing",
    "end",
    "exp",
    "floor",
    "histogram_avg",
    "histogram_count",
    "histogram_fraction",
    "histogram_quantile",
    "histogram_stddev",
    "histogram_stdvar",
    "histogram_sum",
    "holt_winters",
    "hour",
    "idelta",
    "increase",
    "info",
    "irate",
    "label_join",
    "label_replace",
    "last_over_time",
    "ln",
    "log10",
    "log2",
    "mad_over_time",
    "max_over_time",
    "min_over_time",
    "minute",
    "month",
    "pi",
    "predict_linear",
    "present_over_time",
    "quantile_over_time",
    "rad",
    "rate",
    "resets",
    "round",
    "scalar",
    "sgn",
    "sin",
    "sinh",
    "sort",
    "sort_by_label",
    "sort_by_label_desc",
    "sort_desc",
    "sqrt",
    "start",
    "stddev_over_time",
    "stdvar_over_time",
    "sum_over_time",
    "tan",
    "tanh",
    "time",
    "timestamp",
    "vector",
    "year",
];

/// Aggregation operators: `sum by (l) (x)` puts `by` between the name and its `(`.
const AGGREGATIONS: &[&str] = &[
    "avg",
    "bottomk",
    "count",
    "count_values",
    "group",
    "limit_ratio",
    "limitk",
    "max",
    "min",
    "quantile",
    "stddev",
    "stdvar",
    "sum",
    "topk",
];

/// Keywords and literals that are neither functions nor metrics.
const KEYWORDS: &[&str] = &[
    "and", "or", "unless", "bool", "offset", "atan2", "inf", "nan",
];

/// Keywords followed by a parenthesised list of label names (optional for the group ones).
const GROUPING: &[&str] = &[
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];

/// A label matcher's operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchOp {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `=~` (anchored regex)
    Re,
    /// `!~` (anchored regex)
    NotRe,
}

/// One `label op "value"` of a selector.
#[derive(Clone, Debug)]
pub struct Matcher {
    /// Label name (`__name__` for the metric name).
    pub label: String,
    /// Operator.
    pub op: MatchOp,
    /// The value as written, escapes resolved.
    pub value: String,
    /// The anchored regex of `=~`/`!~`; `None` for the others and for template variables.
    regex: Option<Regex>,
}

impl Matcher {
    /// The value holds a Grafana variable (`$name`, `${name}`, `[[name]]`): it matches
    /// anything, whatever the variable's value.
    pub fn is_templated(&self) -> bool {
        is_templated(&self.value)
    }

    /// Whether a sample whose label has `value` (`""` when it has no such label) passes.
    pub fn matches(&self, value: &str) -> bool {
        if self.is_templated() {
            return true;
        }
        match (self.op, &self.regex) {
            (MatchOp::Eq, _) => value == self.value,
            (MatchOp::Ne, _) => value != self.value,
            (MatchOp::Re, Some(re)) => re.is_match(value),
            (MatchOp::NotRe, Some(re)) => !re.is_match(value),
            (MatchOp::Re | MatchOp::NotRe, None) => unreachable!("regex matchers compile"),
        }
    }
}

/// One vector selector: `metric{matchers}`, `metric` or `{matchers}`.
#[derive(Clone, Debug)]
pub struct Selector {
    /// The metric name before the braces, if any.
    pub metric: Option<String>,
    /// The label matchers inside the braces.
    pub matchers: Vec<Matcher>,
}

impl Selector {
    /// Whether a series with `name` and `labels` is selected (`labels` gives a label's value,
    /// `None` if the series has no such label).
    pub fn matches<'a>(&self, name: &str, labels: impl Fn(&str) -> Option<&'a str>) -> bool {
        if self.metric.as_deref().is_some_and(|m| m != name) {
            return false;
        }
        self.matchers.iter().all(|m| {
            let value = if m.label == "__name__" {
                Some(name)
            } else {
                labels(&m.label)
            };
            m.matches(value.unwrap_or(""))
        })
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.metric.as_deref().unwrap_or(""))?;
        if !self.matchers.is_empty() || self.metric.is_none() {
            let parts: Vec<String> = self
                .matchers
                .iter()
                .map(|m| {
                    let op = match m.op {
                        MatchOp::Eq => "=",
                        MatchOp::Ne => "!=",
                        MatchOp::Re => "=~",
                        MatchOp::NotRe => "!~",
                    };
                    format!("{}{op}{:?}", m.label, m.value)
                })
                .collect();
            write!(f, "{{{}}}", parts.join(","))?;
        }
        Ok(())
    }
}

/// Why an expression's selectors could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PromqlError {
    /// A string literal without its closing quote.
    #[error("unterminated string starting at byte {0}")]
    UnterminatedString(usize),
    /// A `{`, `[` or `(` without its closing one.
    #[error("`{open}` at byte {at} is not closed")]
    Unclosed {
        /// The opening character.
        open: char,
        /// Its byte offset.
        at: usize,
    },
    /// A label matcher that is not `label op "value"`.
    #[error("bad label matcher at byte {at}: {why}")]
    BadMatcher {
        /// Byte offset.
        at: usize,
        /// What was expected.
        why: &'static str,
    },
    /// An `=~`/`!~` value that is no regex.
    #[error("bad regex {value:?}: {source}")]
    BadRegex {
        /// The value.
        value: String,
        /// The regex crate's reason.
        source: regex::Error,
    },
    /// An identifier called as a function that PromQL does not have.
    #[error("unknown function `{0}`")]
    UnknownFunction(String),
}

/// Whether `s` holds a Grafana variable reference.
pub fn is_templated(s: &str) -> bool {
    let b = s.as_bytes();
    s.contains("[[")
        || b.windows(2)
            .any(|w| w[0] == b'$' && (w[1] == b'{' || w[1] == b'_' || w[1].is_ascii_alphabetic()))
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b':'
}

fn is_ident(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The end (one past the closing quote) of the string literal at `i`, and its value.
fn string_at(s: &str, i: usize) -> Result<(usize, String), PromqlError> {
    let b = s.as_bytes();
    let quote = b[i];
    let mut value = String::new();
    let mut chars = s[i + 1..].char_indices();
    while let Some((k, c)) = chars.next() {
        if c as u32 == u32::from(quote) {
            return Ok((i + 1 + k + 1, value));
        }
        if c == '\\' && quote != b'`' {
            match chars.next() {
                Some((_, 'n')) => value.push('\n'),
                Some((_, 't')) => value.push('\t'),
                Some((_, e @ ('\\' | '"' | '\''))) => value.push(e),
                // Other escapes are kept as written (lenient: Prometheus refuses some).
                Some((_, e)) => {
                    value.push('\\');
                    value.push(e);
                }
                None => break,
            }
        } else {
            value.push(c);
        }
    }
    Err(PromqlError::UnterminatedString(i))
}

/// The index after the `close` that matches the `open` at `i` (strings inside skipped).
fn skip_balanced(s: &str, i: usize, open: u8, close: u8) -> Result<usize, PromqlError> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        match b[j] {
            b'"' | b'\'' | b'`' => {
                j = string_at(s, j)?.0;
                continue;
            }
            c if c == open => depth += 1,
            c if c == close => {
                depth -= 1;
                if depth == 0 {
                    return Ok(j + 1);
                }
            }
            _ => {}
        }
        j += 1;
    }
    Err(PromqlError::Unclosed {
        open: char::from(open),
        at: i,
    })
}

/// The matchers of the `{…}` at `i`, and the index after its `}`.
fn matchers_at(s: &str, i: usize) -> Result<(usize, Vec<Matcher>), PromqlError> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut j = i + 1;
    loop {
        j = skip_ws(b, j);
        match b.get(j) {
            None => return Err(PromqlError::Unclosed { open: '{', at: i }),
            Some(b'}') => return Ok((j + 1, out)),
            Some(_) => {}
        }
        let start = j;
        let label = if b[j] == b'"' {
            let (end, name) = string_at(s, j)?;
            j = end;
            name
        } else {
            while j < b.len() && is_ident(b[j]) {
                j += 1;
            }
            s[start..j].to_owned()
        };
        if label.is_empty() {
            return Err(PromqlError::BadMatcher {
                at: start,
                why: "a label name",
            });
        }
        j = skip_ws(b, j);
        let (op, len) = match (b.get(j), b.get(j + 1)) {
            (Some(b'='), Some(b'~')) => (MatchOp::Re, 2),
            (Some(b'!'), Some(b'~')) => (MatchOp::NotRe, 2),
            (Some(b'!'), Some(b'=')) => (MatchOp::Ne, 2),
            (Some(b'='), _) => (MatchOp::Eq, 1),
            _ => {
                return Err(PromqlError::BadMatcher {
                    at: j,
                    why: "=, !=, =~ or !~",
                })
            }
        };
        j = skip_ws(b, j + len);
        if !matches!(b.get(j), Some(b'"' | b'\'' | b'`')) {
            return Err(PromqlError::BadMatcher {
                at: j,
                why: "a quoted value",
            });
        }
        let (end, value) = string_at(s, j)?;
        j = skip_ws(b, end);
        let regex = match op {
            MatchOp::Re | MatchOp::NotRe if !is_templated(&value) => {
                Some(Regex::new(&format!("^(?:{value})$")).map_err(|source| {
                    PromqlError::BadRegex {
                        value: value.clone(),
                        source,
                    }
                })?)
            }
            _ => None,
        };
        out.push(Matcher {
            label,
            op,
            value,
            regex,
        });
        match b.get(j) {
            Some(b',') => j += 1,
            Some(b'}') => {}
            _ => {
                return Err(PromqlError::BadMatcher {
                    at: j,
                    why: "`,` or `}`",
                })
            }
        }
    }
}

/// Every selector of `expr`, in order.
pub fn selectors(expr: &str) -> Result<Vec<Selector>, PromqlError> {
    let b = expr.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' | b'\'' | b'`' => i = string_at(expr, i)?.0,
            // Ranges and subqueries: durations and Grafana's `$__rate_interval`.
            b'[' => i = skip_balanced(expr, i, b'[', b']')?,
            b'$' => {
                i += 1;
                if b.get(i) == Some(&b'{') {
                    i = skip_balanced(expr, i, b'{', b'}')?;
                } else {
                    while i < b.len() && is_ident(b[i]) {
                        i += 1;
                    }
                }
            }
            b'{' => {
                let (end, matchers) = matchers_at(expr, i)?;
                out.push(Selector {
                    metric: None,
                    matchers,
                });
                i = end;
            }
            // Numbers and durations (`1`, `0.5`, `1e3`, `5m`, `0x1f`).
            c if c.is_ascii_digit()
                || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) =>
            {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_')
                {
                    i += 1;
                }
            }
            c if is_ident_start(c) => {
                let start = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                let word = &expr[start..i];
                let next = skip_ws(b, i);
                let called = b.get(next) == Some(&b'(');
                if GROUPING.contains(&word) {
                    if called {
                        i = skip_balanced(expr, next, b'(', b')')?;
                    }
                } else if called {
                    if !FUNCTIONS.contains(&word) && !AGGREGATIONS.contains(&word) {
                        return Err(PromqlError::UnknownFunction(word.to_owned()));
                    }
                } else if AGGREGATIONS.contains(&word)
                    || KEYWORDS.contains(&word.to_ascii_lowercase().as_str())
                {
                } else if b.get(next) == Some(&b'{') {
                    let (end, matchers) = matchers_at(expr, next)?;
                    out.push(Selector {
                        metric: Some(word.to_owned()),
                        matchers,
                    });
                    i = end;
                } else {
                    out.push(Selector {
                        metric: Some(word.to_owned()),
                        matchers: Vec::new(),
                    });
                }
            }
            _ => i += 1,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(expr: &str) -> Vec<String> {
        selectors(expr)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn functions_aggregations_and_keywords_are_not_metrics() {
        assert_eq!(
            names(
                r#"sum by (instance, job) (rate(a_total{job=~"$job"}[$__rate_interval])) / on(instance) group_left max_over_time(b[5m:1m]) offset 1h"#
            ),
            [r#"a_total{job=~"$job"}"#, "b"]
        );
        assert_eq!(
            names("scalar(max(x)) - x and bool y or unless_z > 0.5e3 * time()"),
            ["x", "x", "y", "unless_z"]
        );
        assert_eq!(
            names(r#"label_replace(up, "a", "$1", "instance", "(.*):.*")"#),
            ["up"]
        );
        assert_eq!(names(r#"topk(3, m) without (quantile)"#), ["m"]);
    }

    #[test]
    fn matchers_are_read_with_their_operators() {
        let s = selectors(r#"m{a="x", b!="y",c=~"0.5|0.9", d !~ 'z.*', "e"="\"q\""}"#).unwrap();
        let [s] = &s[..] else { panic!("{s:?}") };
        let ops: Vec<(&str, MatchOp, &str)> = s
            .matchers
            .iter()
            .map(|m| (m.label.as_str(), m.op, m.value.as_str()))
            .collect();
        assert_eq!(
            ops,
            [
                ("a", MatchOp::Eq, "x"),
                ("b", MatchOp::Ne, "y"),
                ("c", MatchOp::Re, "0.5|0.9"),
                ("d", MatchOp::NotRe, "z.*"),
                ("e", MatchOp::Eq, "\"q\""),
            ]
        );
        let labels = |l: &str| match l {
            "a" => Some("x"),
            "c" => Some("0.9"),
            "e" => Some("\"q\""),
            _ => None,
        };
        assert!(s.matches("m", labels));
        assert!(!s.matches("n", labels));
        // Regexes are anchored: "0.95" is not "0.9".
        assert!(!s.matches("m", |l| match l {
            "a" => Some("x"),
            "c" => Some("0.95"),
            "e" => Some("\"q\""),
            _ => None,
        }));
    }

    #[test]
    fn template_variables_match_anything_and_a_missing_label_is_empty() {
        let s = &selectors(r#"m{instance=~"$instance", job="${job}", x=""}"#).unwrap()[0];
        assert!(s.matches("m", |_| None));
        assert!(!s.matches("m", |l| (l == "x").then_some("1")));
        let s = &selectors(r#"{__name__=~"m|n"}"#).unwrap()[0];
        assert!(s.metric.is_none() && s.matches("n", |_| None) && !s.matches("o", |_| None));
    }

    #[test]
    fn broken_expressions_are_refused() {
        for bad in [
            "rat(x[5m])",
            r#"m{a="x""#,
            r#"m{a=x}"#,
            r#"m{a=~"("}"#,
            "m[5m",
            r#"m{a="x}"#,
        ] {
            assert!(selectors(bad).is_err(), "{bad} accepted");
        }
    }
}
