//! Reads the message structs of one kafka-protocol message source: every `pub struct` that
//! follows a `/// Valid versions:` doc comment, with the `/// Supported API versions:` range and
//! the type of each field. The sources are themselves generated, so their layout is regular;
//! any line this does not recognise is an error rather than a guess.

use std::str::Lines;

/// The versions that carry a field, as its `Supported API versions` doc comment writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Versions {
    /// `a-b`, or a single `a` (then `lo == hi`).
    Range(i16, i16),
    /// `a+`: from `a` on.
    From(i16),
    /// `none`: the schema declares the field but no version carries it.
    Never,
}

/// One field of a message struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The Rust field name.
    pub name: String,
    /// The Rust type, as written (`Vec<FetchTopic>`, `super::BrokerId`, ...).
    pub ty: String,
    /// The versions that carry it.
    pub versions: Versions,
}

/// One message struct: the top-level request/response or one of its nested structs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Struct {
    /// The struct name.
    pub name: String,
    /// Its fields in declaration order, `unknown_tagged_fields` excepted.
    pub fields: Vec<Field>,
    /// Whether it has an `unknown_tagged_fields` map (structs of never-flexible messages lack it).
    pub unknown_tags: bool,
}

const VALID_VERSIONS: &str = "/// Valid versions: ";
const SUPPORTED_VERSIONS: &str = "Supported API versions: ";
const UNKNOWN_TAGS: &str = "unknown_tagged_fields";

/// The structs of one message source file, in source order.
pub fn parse_message(source: &str) -> Result<Vec<Struct>, String> {
    let mut lines = source.lines();
    let mut structs = Vec::new();
    while let Some(line) = lines.next() {
        if !line.starts_with(VALID_VERSIONS) {
            continue;
        }
        let declaration = lines
            .by_ref()
            .find(|l| !l.starts_with("#["))
            .ok_or("`Valid versions` at the end of the file")?;
        let name = declaration
            .strip_prefix("pub struct ")
            .and_then(|rest| rest.strip_suffix(" {"))
            .ok_or_else(|| format!("`Valid versions` not followed by a struct: {declaration:?}"))?;
        structs.push(parse_body(name, &mut lines)?);
    }
    Ok(structs)
}

/// The fields of struct `name`, up to its closing brace.
fn parse_body(name: &str, lines: &mut Lines) -> Result<Struct, String> {
    let mut parsed = Struct {
        name: name.to_string(),
        fields: Vec::new(),
        unknown_tags: false,
    };
    // The range of the doc comment above the next field.
    let mut versions = None;
    for line in lines {
        let line = line.trim();
        if line == "}" {
            return Ok(parsed);
        }
        if let Some(doc) = line.strip_prefix("///") {
            if let Some(text) = doc.trim().strip_prefix(SUPPORTED_VERSIONS) {
                versions = Some(parse_versions(text.trim())?);
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let (field, ty) = line
            .strip_prefix("pub ")
            .and_then(|l| l.strip_suffix(','))
            .and_then(|l| l.split_once(": "))
            .ok_or_else(|| format!("{name}: unexpected line {line:?}"))?;
        if field == UNKNOWN_TAGS {
            parsed.unknown_tags = true;
            versions = None;
            continue;
        }
        let versions = versions
            .take()
            .ok_or_else(|| format!("{name}.{field} has no `{SUPPORTED_VERSIONS}` doc comment"))?;
        parsed.fields.push(Field {
            name: field.to_string(),
            ty: ty.to_string(),
            versions,
        });
    }
    Err(format!("struct {name} is not closed"))
}

/// `a-b`, `a+`, `none` or a single `a`.
fn parse_versions(text: &str) -> Result<Versions, String> {
    let number = |s: &str| {
        s.parse::<i16>()
            .map_err(|_| format!("bad version {s:?} in {text:?}"))
    };
    if text == "none" {
        Ok(Versions::Never)
    } else if let Some(lo) = text.strip_suffix('+') {
        Ok(Versions::From(number(lo)?))
    } else if let Some((lo, hi)) = text.split_once('-') {
        Ok(Versions::Range(number(lo)?, number(hi)?))
    } else {
        let only = number(text)?;
        Ok(Versions::Range(only, only))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_in_every_written_form() {
        assert_eq!(parse_versions("4-18"), Ok(Versions::Range(4, 18)));
        assert_eq!(parse_versions("3"), Ok(Versions::Range(3, 3)));
        assert_eq!(parse_versions("2+"), Ok(Versions::From(2)));
        assert_eq!(parse_versions("none"), Ok(Versions::Never));
        assert!(parse_versions("x-1").is_err());
    }

    #[test]
    fn struct_fields_with_their_versions() {
        let source = "\
/// Valid versions: 0-1
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct Thing {
    /// The id.
    ///
    /// Supported API versions: 0-1
    pub id: i32,

    /// The parts.
    ///
    /// Supported API versions: 1+
    pub parts: Vec<Part>,

    /// Other tagged fields
    pub unknown_tagged_fields: BTreeMap<i32, Bytes>,
}

impl Thing {
    /// Supported API versions: 0-1
    pub fn with_id(mut self, value: i32) -> Self {
";
        let structs = parse_message(source).unwrap();
        assert_eq!(
            structs,
            vec![Struct {
                name: "Thing".into(),
                fields: vec![
                    Field {
                        name: "id".into(),
                        ty: "i32".into(),
                        versions: Versions::Range(0, 1)
                    },
                    Field {
                        name: "parts".into(),
                        ty: "Vec<Part>".into(),
                        versions: Versions::From(1)
                    },
                ],
                unknown_tags: true,
            }]
        );
    }

    #[test]
    fn a_field_without_versions_is_an_error() {
        let source = "/// Valid versions: 0\npub struct Thing {\n    pub id: i32,\n}\n";
        assert!(parse_message(source).unwrap_err().contains("Thing.id"));
    }
}
