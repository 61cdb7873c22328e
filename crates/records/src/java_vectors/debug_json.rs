//! A value's fields as JSON in the format of Kafka's generated `*JsonConverter` classes, read
//! from the value's derived `Debug` text, so that every record type (ours and kafka-protocol's
//! control messages) gets a rendering without per-type code.
//!
//! - struct fields become camelCase keys (`k_raft_version` → `kRaftVersion`), in declaration
//!   order; newtypes (`BrokerId(1)`) and enum wrappers (`Topic(TopicRecord {..})`) unwrap;
//! - `None` → `null`, `Some(x)` → `x`; integers and floats as JSON numbers;
//! - `Uuid` (hyphenated in `Debug`) → Kafka's base64url text (`Uuid.toString`);
//! - `Bytes` (`b"..."`) → standard base64 text with padding (Jackson's binary encoding);
//! - the outermost struct's `unknown_tagged_fields` → `"_unknownTaggedFields": [{"tag", "data"}]`;
//!   nested structs' unknown tags are left out (the byte comparison covers them).
//!
//! All fields are rendered, including those the record's version lacks (they hold defaults);
//! the Java side compares only the fields Kafka's converter emits for the version. The
//! [`canonical_lines`] form is the one `compat/.../Canonical.java` produces.

use std::fmt::Write as _;

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Int(i128),
    /// A float as Rust's `Debug` printed it (shortest round-trip form, valid JSON if finite).
    Float(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

/// Parses `Debug` text (`format!("{:?}", value)`). Panics on syntax it does not know, naming
/// the position: a new field type needs a rule here.
pub(crate) fn from_debug(text: &str) -> Json {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    let value = p.value();
    p.ws();
    assert!(p.i == p.s.len(), "trailing text at {} in {text}", p.i);
    value
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    /// Struct nesting depth; 1 is the outermost struct.
    depth: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i] == b' ' {
            self.i += 1;
        }
    }

    fn peek(&self) -> u8 {
        *self.s.get(self.i).unwrap_or(&0)
    }

    fn expect(&mut self, c: u8) {
        self.ws();
        assert_eq!(
            self.peek() as char,
            c as char,
            "at {} in {}",
            self.i,
            String::from_utf8_lossy(self.s)
        );
        self.i += 1;
    }

    /// Parses `open item (, item)* close` with `item` run after whitespace.
    fn list<T>(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> T) -> Vec<T> {
        let mut out = Vec::new();
        loop {
            self.ws();
            if self.peek() == close {
                self.i += 1;
                return out;
            }
            out.push(item(self));
            self.ws();
            if self.peek() == b',' {
                self.i += 1;
            }
        }
    }

    fn value(&mut self) -> Json {
        self.ws();
        match self.peek() {
            b'"' => Json::Str(String::from_utf8(self.quoted()).expect("Debug strings are UTF-8")),
            b'b' if self.s.get(self.i + 1) == Some(&b'"') => {
                self.i += 1;
                Json::Str(base64(&self.quoted(), STANDARD, true))
            }
            b'[' => {
                self.i += 1;
                Json::Arr(self.list(b']', |p| p.value()))
            }
            _ => self.token_value(),
        }
    }

    fn token(&mut self) -> String {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"_.-+#".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        assert!(
            self.i > start,
            "unexpected {:?} at {} in {}",
            self.peek() as char,
            self.i,
            String::from_utf8_lossy(self.s)
        );
        String::from_utf8(self.s[start..self.i].to_vec()).unwrap()
    }

    fn token_value(&mut self) -> Json {
        let token = self.token();
        self.ws();
        match self.peek() {
            b'(' => {
                self.i += 1;
                let mut items = self.list(b')', |p| p.value());
                assert_eq!(items.len(), 1, "tuple {token} with {} fields", items.len());
                items.pop().unwrap()
            }
            b'{' => {
                self.i += 1;
                self.depth += 1;
                let outermost = self.depth == 1;
                let fields = self.list(b'}', |p| {
                    let name = p.token();
                    p.expect(b':');
                    if name == "unknown_tagged_fields" {
                        p.ws();
                        p.expect(b'{');
                        let tags = p.list(b'}', |p| {
                            let tag = p.value();
                            p.expect(b':');
                            let data = p.value();
                            Json::Obj(vec![("tag".into(), tag), ("data".into(), data)])
                        });
                        (name, Json::Arr(tags))
                    } else {
                        (name, p.value())
                    }
                });
                self.depth -= 1;
                let mut out = Vec::new();
                let mut unknown = None;
                for (name, value) in fields {
                    if name == "unknown_tagged_fields" {
                        unknown = Some(value);
                    } else {
                        out.push((camel_case(name.trim_start_matches("r#")), value));
                    }
                }
                if outermost {
                    out.push((
                        "_unknownTaggedFields".into(),
                        unknown.unwrap_or(Json::Arr(Vec::new())),
                    ));
                }
                Json::Obj(out)
            }
            _ => scalar(&token),
        }
    }

    /// A `"..."` literal with Rust's `Debug` escapes, as raw bytes.
    fn quoted(&mut self) -> Vec<u8> {
        self.expect(b'"');
        let mut out = Vec::new();
        loop {
            let c = self.peek();
            self.i += 1;
            match c {
                b'"' => return out,
                b'\\' => {
                    let e = self.peek();
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'0' => out.push(0),
                        b'\\' | b'"' | b'\'' => out.push(e),
                        b'x' => {
                            let h = std::str::from_utf8(&self.s[self.i..self.i + 2]).unwrap();
                            out.push(u8::from_str_radix(h, 16).unwrap());
                            self.i += 2;
                        }
                        b'u' => {
                            self.expect(b'{');
                            let start = self.i;
                            while self.peek() != b'}' {
                                self.i += 1;
                            }
                            let h = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                            let ch = char::from_u32(u32::from_str_radix(h, 16).unwrap()).unwrap();
                            self.i += 1;
                            out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                        }
                        other => panic!("unknown escape \\{}", other as char),
                    }
                }
                0 if self.i > self.s.len() => panic!("unterminated string"),
                c => out.push(c),
            }
        }
    }
}

fn scalar(token: &str) -> Json {
    match token {
        "None" => return Json::Null,
        "true" => return Json::Bool(true),
        "false" => return Json::Bool(false),
        _ => {}
    }
    if let Some(uuid) = parse_uuid(token) {
        return Json::Str(base64(&uuid, URL_SAFE, false));
    }
    if let Ok(i) = token.parse::<i128>() {
        return Json::Int(i);
    }
    if token.parse::<f64>().is_ok() {
        return Json::Float(token.to_owned());
    }
    panic!("unknown Debug token {token:?}")
}

/// A hyphenated uuid (`8-4-4-4-12` hex digits), as `uuid::Uuid`'s `Debug` prints it.
fn parse_uuid(token: &str) -> Option<[u8; 16]> {
    let b = token.as_bytes();
    if b.len() != 36 || [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
        return None;
    }
    let hex: String = token.chars().filter(|&c| c != '-').collect();
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// `broker_id` → `brokerId`, `k_raft_version` → `kRaftVersion` (Kafka's camelCase field names
/// with the first letter lowered).
fn camel_case(snake: &str) -> String {
    let mut out = String::new();
    for (i, part) in snake.split('_').enumerate() {
        if i == 0 {
            out.push_str(part);
        } else {
            let mut chars = part.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        }
    }
    out
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64(data: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk.len();
        let v = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= n {
                out.push(alphabet[(v >> (18 - 6 * i) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// Compact JSON text.
pub(crate) fn to_text(json: &Json) -> String {
    let mut out = String::new();
    write_json(json, &mut out);
    out
}

fn write_json(json: &Json, out: &mut String) {
    match json {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(i) => write!(out, "{i}").unwrap(),
        Json::Float(f) => out.push_str(f),
        Json::Str(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        Json::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Json::Obj(fields) => {
            out.push('{');
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(&Json::Str(k.clone()), out);
                out.push(':');
                write_json(v, out);
            }
            out.push('}');
        }
    }
}

/// The `path=value` lines of `Canonical.java`: `a.b`, `a#=len`, `a[i]`; integers in decimal,
/// floats as `d:` + hex of the IEEE bits, text as `s:` + hex of its UTF-8.
pub(crate) fn canonical_lines(json: &Json) -> Vec<String> {
    let mut out = Vec::new();
    flatten("", json, &mut out);
    out
}

fn flatten(path: &str, json: &Json, out: &mut Vec<String>) {
    match json {
        Json::Obj(fields) => {
            for (k, v) in fields {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                flatten(&p, v, out);
            }
        }
        Json::Arr(items) => {
            out.push(format!("{path}#={}", items.len()));
            for (i, item) in items.iter().enumerate() {
                flatten(&format!("{path}[{i}]"), item, out);
            }
        }
        Json::Null => out.push(format!("{path}=null")),
        Json::Bool(b) => out.push(format!("{path}={b}")),
        Json::Int(i) => out.push(format!("{path}={i}")),
        Json::Float(f) => {
            let bits = f.parse::<f64>().expect("float token").to_bits();
            out.push(format!("{path}=d:{bits:x}"));
        }
        Json::Str(s) => {
            let hex: String = s.bytes().map(|b| format!("{b:02x}")).collect();
            out.push(format!("{path}=s:{hex}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_record_like_kafkas_json_converter() {
        let text = r#"Topic(TopicRecord { name: "a\"\u{301}é", topic_id: 00000000-0000-0000-0000-000000000001, ratio: -1.5e-7, data: b"\x00\xff\n", opt: None, list: [Some(BrokerId(3))], unknown_tagged_fields: {50: b"a"} })"#;
        let json = from_debug(text);
        assert_eq!(
            to_text(&json),
            r#"{"name":"a\"́é","topicId":"AAAAAAAAAAAAAAAAAAAAAQ","ratio":-1.5e-7,"data":"AP8K","opt":null,"list":[3],"_unknownTaggedFields":[{"tag":50,"data":"YQ=="}]}"#
        );
        let lines = canonical_lines(&json);
        assert_eq!(lines[0], "name=s:6122cc81c3a9");
        assert_eq!(lines[2], format!("ratio=d:{:x}", (-1.5e-7f64).to_bits()));
        assert_eq!(lines[5], "list#=1");
    }
}
