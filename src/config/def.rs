//! The shape of one configuration key, like Kafka's `ConfigDef.ConfigKey`: name, type, default,
//! validator, doc line, plus whether kraftwerk acts on it. The table itself is
//! [`super::keys::CONFIG_DEF`]; [`ConfigKey::parse`] is `ConfigDef.parseValue` for one key.

use super::error::{invalid, ConfigError};

/// How a value is parsed (`ConfigDef.Type`). Values are trimmed first, as `ConfigDef.parseType`
/// does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigType {
    /// `true`/`false`, case-insensitive.
    Boolean,
    /// A 16-bit signed integer.
    Short,
    /// A 32-bit signed integer.
    Int,
    /// A 64-bit signed integer.
    Long,
    /// Any text.
    String,
    /// Comma-separated items, surrounding blanks dropped; empty text is the empty list
    /// (see [`list_items`]).
    List,
}

impl ConfigType {
    /// Kafka's name of the type, as its error messages print it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Boolean => "BOOLEAN",
            Self::Short => "SHORT",
            Self::Int => "INT",
            Self::Long => "LONG",
            Self::String => "STRING",
            Self::List => "LIST",
        }
    }
}

/// The value a key takes when the file does not set it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultValue {
    /// The key must be set (`ConfigDef.NO_DEFAULT_VALUE`).
    Required,
    /// No value (`null` in Kafka); the code using the key decides what absence means.
    Null,
    /// A boolean default.
    Bool(bool),
    /// A numeric default (SHORT, INT or LONG keys).
    Number(i64),
    /// A textual default (STRING or LIST keys), parsed like a value from the file.
    Text(&'static str),
}

/// A check of one key's value alone (`ConfigDef.Validator`). Checks that involve several keys
/// live with the code that combines them.
#[derive(Clone, Copy, Debug)]
pub enum Validator {
    /// Any value of the type.
    Any,
    /// A number at least this large (`ConfigDef.Range.atLeast`).
    AtLeast(i64),
    /// The syntax of a structured value, returning what is wrong. The code that uses the key
    /// parses it again with the same function, as Kafka's `KafkaConfig` getters do after its
    /// validators ran.
    Syntax(fn(&str) -> Result<(), String>),
}

/// Whether kraftwerk acts on a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Usage {
    /// The value reaches the running node (`NodeConfig::server_config`) or `kraftwerk format`.
    Used,
    /// The value is only checked: kraftwerk accepts exactly the values it can honour and
    /// refuses the others (`process.roles` must be `controller`, `broker.id` must equal
    /// `node.id`, Java plugin classes are refused).
    Checked,
    /// Accepted and validated as Kafka validates it, but kraftwerk does not act on it yet; a
    /// file that sets it gets the key named in the start-up warning.
    NotHonoured,
}

/// One key of the table (`ConfigDef.ConfigKey`).
#[derive(Clone, Copy, Debug)]
pub struct ConfigKey {
    /// The key, e.g. `controller.quorum.fetch.timeout.ms`.
    pub name: &'static str,
    /// How its value parses.
    pub ty: ConfigType,
    /// Its value when absent.
    pub default: DefaultValue,
    /// The check of its value alone.
    pub validator: Validator,
    /// Whether kraftwerk acts on it.
    pub usage: Usage,
    /// One line of documentation (units, meaning, Kafka's class when it helps).
    pub doc: &'static str,
}

/// Builds a table entry, in the argument order of Kafka's `ConfigDef.define`.
pub const fn define(
    name: &'static str,
    ty: ConfigType,
    default: DefaultValue,
    validator: Validator,
    usage: Usage,
    doc: &'static str,
) -> ConfigKey {
    ConfigKey {
        name,
        ty,
        default,
        validator,
        usage,
        doc,
    }
}

/// A parsed value. Numbers of every width are widened to `i64`; text borrows the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// A BOOLEAN.
    Bool(bool),
    /// A SHORT, INT or LONG.
    Number(i64),
    /// A STRING or LIST, as written (trimmed).
    Text(&'a str),
}

impl ConfigKey {
    /// Parses and validates `text` (already trimmed) as this key's value
    /// (`ConfigDef.parseType` then the validator). Errors name the key and the value.
    pub fn parse<'a>(&self, text: &'a str) -> Result<Value<'a>, ConfigError> {
        let value = match self.ty {
            ConfigType::Boolean if text.eq_ignore_ascii_case("true") => Value::Bool(true),
            ConfigType::Boolean if text.eq_ignore_ascii_case("false") => Value::Bool(false),
            ConfigType::Boolean => {
                return Err(invalid(
                    self.name,
                    text,
                    "Expected value to be either true or false",
                ))
            }
            ConfigType::Short => Value::Number(self.number::<i16>(text)?),
            ConfigType::Int => Value::Number(self.number::<i32>(text)?),
            ConfigType::Long => Value::Number(self.number::<i64>(text)?),
            ConfigType::String | ConfigType::List => Value::Text(text),
        };
        match (self.validator, value) {
            (Validator::AtLeast(min), Value::Number(n)) if n < min => Err(invalid(
                self.name,
                text,
                format!("Value must be at least {min}"),
            )),
            // Also for BOOLEAN and numbers: a key may accept only some values of its type.
            (Validator::Syntax(check), _) => {
                check(text).map_err(|reason| invalid(self.name, text, reason))?;
                Ok(value)
            }
            _ => Ok(value),
        }
    }

    fn number<T: std::str::FromStr + Into<i64>>(&self, text: &str) -> Result<i64, ConfigError> {
        text.parse::<T>().map(Into::into).map_err(|_| {
            invalid(
                self.name,
                text,
                format!("Not a number of type {}", self.ty.name()),
            )
        })
    }
}

/// `ConfigDef` LIST items: empty text → no items, else split on commas with surrounding blanks
/// dropped (empty items kept, so `a,,b` fails item validation as in Java).
pub fn list_items(text: &str) -> Vec<&str> {
    if text.is_empty() {
        Vec::new()
    } else {
        text.split(',').map(str::trim).collect()
    }
}
