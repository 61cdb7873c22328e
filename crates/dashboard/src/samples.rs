//! Samples of a Prometheus text exposition (format 0.0.4), enough to match selectors against:
//! name, labels, value. Prometheus adds target labels (`job`, `instance`) when it scrapes;
//! [`Sample::with_label`] lets a caller add them as a scrape would.

use std::collections::BTreeMap;

use crate::promql::Selector;

/// One sample line.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Metric name.
    pub name: String,
    /// Label name → value.
    pub labels: BTreeMap<String, String>,
    /// The value (`NaN`, `+Inf`, `-Inf` included).
    pub value: f64,
}

impl Sample {
    /// The sample with `label` set to `value` (replacing one it had, as a scrape with
    /// `honor_labels: false` would rename it; none of kraftwerk's collide).
    pub fn with_label(mut self, label: &str, value: &str) -> Self {
        self.labels.insert(label.to_owned(), value.to_owned());
        self
    }

    /// Whether `selector` selects this sample.
    pub fn is_selected_by(&self, selector: &Selector) -> bool {
        selector.matches(&self.name, |l| self.labels.get(l).map(String::as_str))
    }
}

/// A line that is not a sample as the text format has it.
#[derive(Debug, thiserror::Error)]
#[error("exposition line {line}: {why}: {text:?}")]
pub struct ExpositionError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub why: &'static str,
    /// The line.
    pub text: String,
}

/// Every sample of `text` (comments and blank lines skipped).
pub fn parse(text: &str) -> Result<Vec<Sample>, ExpositionError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |why| ExpositionError {
            line: n + 1,
            why,
            text: line.to_owned(),
        };
        let name_end = line.find(['{', ' ']).ok_or_else(|| err("no value"))?;
        let name = &line[..name_end];
        let mut labels = BTreeMap::new();
        let mut rest = &line[name_end..];
        if let Some(inner) = rest.strip_prefix('{') {
            let mut chars = inner.char_indices().peekable();
            let mut end = None;
            loop {
                while chars.peek().is_some_and(|(_, c)| *c == ',' || *c == ' ') {
                    chars.next();
                }
                let Some(&(start, c)) = chars.peek() else {
                    break;
                };
                if c == '}' {
                    end = Some(start + 1);
                    break;
                }
                let eq = inner[start..]
                    .find('=')
                    .ok_or_else(|| err("label without ="))?
                    + start;
                let label = inner[start..eq].trim().to_owned();
                while chars.next_if(|(i, _)| *i <= eq).is_some() {}
                if chars.next().map(|(_, c)| c) != Some('"') {
                    return Err(err("label value without quotes"));
                }
                let mut value = String::new();
                let mut closed = false;
                while let Some((_, c)) = chars.next() {
                    match c {
                        '"' => {
                            closed = true;
                            break;
                        }
                        '\\' => match chars.next().map(|(_, c)| c) {
                            Some('n') => value.push('\n'),
                            Some(e) => value.push(e),
                            None => break,
                        },
                        c => value.push(c),
                    }
                }
                if !closed {
                    return Err(err("unterminated label value"));
                }
                labels.insert(label, value);
            }
            let end = end.ok_or_else(|| err("unterminated labels"))?;
            rest = &inner[end..];
        }
        let value = rest
            .split_whitespace()
            .next()
            .ok_or_else(|| err("no value"))?;
        let value = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            v => v.parse().map_err(|_| err("value is not a number"))?,
        };
        out.push(Sample {
            name: name.to_owned(),
            labels,
            value,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_read_with_escaped_labels() {
        let text =
            "# HELP m x\n# TYPE m gauge\nm 1\nn{a=\"x\\\"y\",b=\"\\\\\"} NaN 123\nq{} +Inf\n";
        let samples = parse(text).unwrap();
        assert_eq!(samples.len(), 3);
        assert_eq!(samples[0].name, "m");
        assert_eq!(samples[0].value, 1.0);
        assert_eq!(samples[1].labels["a"], "x\"y");
        assert_eq!(samples[1].labels["b"], "\\");
        assert!(samples[1].value.is_nan());
        assert_eq!(samples[2].value, f64::INFINITY);
        assert!(parse("m{a=\"x} 1\n").is_err());
        assert!(parse("m one\n").is_err());
    }
}
