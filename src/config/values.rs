//! Every key of the table parsed from one file, defaults applied (`AbstractConfig`'s parsed
//! values): the single place that turns property text into typed values.

use std::collections::BTreeMap;

use kraftwerk_log::java_properties::JavaProperties;

use super::def::{DefaultValue, Value};
use super::error::ConfigError;
use super::keys::CONFIG_DEF;

/// The parsed values of every [`CONFIG_DEF`] key, with the text of those the file sets.
#[derive(Debug)]
pub struct Values<'a> {
    parsed: BTreeMap<&'static str, Value<'a>>,
    written: BTreeMap<&'static str, &'a str>,
}

impl<'a> Values<'a> {
    /// Parses and validates every key of the table, in table order, and fills in defaults.
    ///
    /// Errors: the first key that is required and absent ([`ConfigError::Missing`]), or whose
    /// value does not parse or fails its validator ([`ConfigError::Invalid`]).
    pub fn parse(props: &'a JavaProperties) -> Result<Self, ConfigError> {
        let mut values = Values {
            parsed: BTreeMap::new(),
            written: BTreeMap::new(),
        };
        for key in CONFIG_DEF {
            let value = match props.get(key.name).map(str::trim) {
                Some(text) => {
                    values.written.insert(key.name, text);
                    key.parse(text)?
                }
                None => match key.default {
                    DefaultValue::Required => return Err(ConfigError::Missing { key: key.name }),
                    DefaultValue::Null => continue,
                    DefaultValue::Bool(b) => Value::Bool(b),
                    DefaultValue::Number(n) => Value::Number(n),
                    DefaultValue::Text(t) => Value::Text(t),
                },
            };
            values.parsed.insert(key.name, value);
        }
        Ok(values)
    }

    /// The text the file sets for `key` (trimmed), `None` when it relies on the default.
    pub fn written(&self, key: &str) -> Option<&'a str> {
        self.written.get(key).copied()
    }

    /// A SHORT, INT or LONG key's value; `None` when absent with a `Null` default.
    pub fn number(&self, key: &'static str) -> Option<i64> {
        match self.parsed.get(key) {
            Some(Value::Number(n)) => Some(*n),
            None => None,
            Some(other) => mistyped(key, other),
        }
    }

    /// An INT key that has a default or is required.
    pub fn int(&self, key: &'static str) -> i32 {
        self.number(key)
            .and_then(|n| i32::try_from(n).ok())
            .unwrap_or_else(|| panic!("`{key}` is not an INT with a value in CONFIG_DEF"))
    }

    /// A LONG key that has a default or is required.
    pub fn long(&self, key: &'static str) -> i64 {
        self.number(key)
            .unwrap_or_else(|| panic!("`{key}` is not a LONG with a value in CONFIG_DEF"))
    }

    /// A BOOLEAN key that has a default.
    pub fn boolean(&self, key: &'static str) -> bool {
        match self.parsed.get(key) {
            Some(Value::Bool(b)) => *b,
            other => mistyped(key, &other),
        }
    }

    /// The value as Kafka's `logAll` prints it: the parsed value, `null` when absent with no
    /// default.
    pub fn display(&self, key: &str) -> String {
        match self.parsed.get(key) {
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::Text(t)) => t.to_string(),
            None => "null".to_owned(),
        }
    }

    /// A STRING or LIST key's text; `None` when absent with a `Null` default.
    pub fn text(&self, key: &'static str) -> Option<&'a str> {
        match self.parsed.get(key) {
            Some(Value::Text(t)) => Some(*t),
            None => None,
            Some(other) => mistyped(key, other),
        }
    }
}

/// A key read as another type than the table gives it: a bug in this crate, caught by the
/// tests that parse every key.
fn mistyped(key: &str, value: &dyn std::fmt::Debug) -> ! {
    panic!("`{key}` read with the wrong type: CONFIG_DEF gives it {value:?}")
}
