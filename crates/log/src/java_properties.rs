//! Java properties files (`java.util.Properties.load`/`store` syntax): what `meta.properties`
//! is written in, and what `server.properties` is read with (the root crate's config reuses
//! [`JavaProperties::parse`]). Kept in `kraftwerk-log`, the lowest crate that reads one.

use thiserror::Error;

/// A syntax error in a Java properties file: only a malformed `\uXXXX` escape is one
/// (`Properties.loadConvert` throws "Malformed \uxxxx encoding."); everything else parses.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("line {line}: malformed \\uxxxx encoding")]
pub struct PropertiesSyntaxError {
    /// 1-based line on which the logical line containing the bad escape starts.
    pub line: usize,
}

/// An ordered list of Java properties (`java.util.Properties`), with `load`/`store` syntax.
///
/// Keys are unique: a later duplicate replaces the earlier value in place, like
/// `Hashtable.put`. Iteration follows first-insertion order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JavaProperties {
    entries: Vec<(String, String)>,
}

impl JavaProperties {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a file's bytes as `Properties.load(InputStream)` does: bytes are ISO-8859-1
    /// (each byte one char; non-Latin-1 text must use `\uXXXX`), lines end at `\n`, `\r` or
    /// `\r\n`, leading blanks (space, tab, form feed) are skipped, a line whose first non-blank
    /// char is `#` or `!` is a comment, a line ending in an odd number of backslashes continues
    /// on the next line (whose leading blanks are dropped), the key ends at the first unescaped
    /// `=`, `:` or blank, and the value starts after blanks and at most one `=`/`:`. Escapes:
    /// `\t \n \r \f \uXXXX`, any other `\c` is `c`.
    ///
    /// Errors: a malformed `\uXXXX` escape.
    pub fn parse(bytes: &[u8]) -> Result<JavaProperties, PropertiesSyntaxError> {
        let chars: Vec<char> = bytes.iter().map(|b| char::from(*b)).collect();
        let mut props = JavaProperties::new();
        let mut reader = LineReader {
            chars: &chars,
            pos: 0,
            line: 1,
        };
        while let Some((start_line, logical)) = reader.read_line() {
            let (key, value) = split_key_value(&logical);
            let key = unescape(key).ok_or(PropertiesSyntaxError { line: start_line })?;
            let value = unescape(value).ok_or(PropertiesSyntaxError { line: start_line })?;
            props.set(&key, &value);
        }
        Ok(props)
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key`, replacing an existing value in place.
    pub fn set(&mut self, key: &str, value: &str) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value.to_owned(),
            None => self.entries.push((key.to_owned(), value.to_owned())),
        }
    }

    /// `(key, value)` pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Renders the set as `Properties.store(Writer, comment)` does, in this set's order: `#`
    /// plus the comment, `#` plus `Date.toString()` of `now_ms` (in UTC, e.g.
    /// `Sun Nov 29 08:11:11 UTC 2026`), then one `key=value` line per entry, `\n` line ends.
    /// Escaping (`saveConvert`, no Unicode escaping since the Writer variant is used): `\` →
    /// `\\`, tab/newline/CR/form feed → `\t \n \r \f`, `= : # !` get a backslash, spaces are
    /// escaped everywhere in keys and only in the first position of values.
    pub fn store(&self, comment: &str, now_ms: i64) -> String {
        let mut out = String::new();
        for line in comment.split('\n') {
            out.push('#');
            for c in line.chars() {
                if u32::from(c) > 0xff {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{:04X}", unit));
                    }
                } else {
                    out.push(c);
                }
            }
            out.push('\n');
        }
        out.push('#');
        out.push_str(&java_date_string(now_ms));
        out.push('\n');
        for (key, value) in &self.entries {
            escape_into(&mut out, key, true);
            out.push('=');
            escape_into(&mut out, value, false);
            out.push('\n');
        }
        out
    }
}

/// Reads logical lines like `Properties.LineReader.readLine`.
struct LineReader<'a> {
    chars: &'a [char],
    pos: usize,
    line: usize,
}

impl LineReader<'_> {
    fn next_char(&mut self) -> Option<char> {
        let c = *self.chars.get(self.pos)?;
        self.pos += 1;
        if c == '\n' || (c == '\r' && self.chars.get(self.pos) != Some(&'\n')) {
            self.line += 1;
        }
        Some(c)
    }

    /// The next logical line (continuations joined, terminator and comments dropped) and the
    /// physical line it starts on; `None` at end of input.
    fn read_line(&mut self) -> Option<(usize, Vec<char>)> {
        let mut buf: Vec<char> = Vec::new();
        let mut skip_blanks = true;
        let mut appended_line_begin = false;
        let mut preceding_backslash = false;
        let mut start_line = self.line;
        loop {
            let Some(c) = self.next_char() else {
                if buf.is_empty() {
                    return None;
                }
                if preceding_backslash {
                    buf.pop();
                }
                return Some((start_line, buf));
            };
            if skip_blanks {
                if matches!(c, ' ' | '\t' | '\u{c}') {
                    continue;
                }
                if !appended_line_begin && matches!(c, '\r' | '\n') {
                    continue;
                }
                skip_blanks = false;
                appended_line_begin = false;
            }
            if buf.is_empty() {
                start_line = self.line;
                if c == '#' || c == '!' {
                    // A comment runs to the end of the physical line; continuation backslashes
                    // inside it mean nothing.
                    while let Some(&next) = self.chars.get(self.pos) {
                        if next == '\n' || next == '\r' {
                            break;
                        }
                        self.pos += 1;
                    }
                    skip_blanks = true;
                    continue;
                }
            }
            if c != '\n' && c != '\r' {
                buf.push(c);
                preceding_backslash = c == '\\' && !preceding_backslash;
                continue;
            }
            if buf.is_empty() {
                skip_blanks = true;
                continue;
            }
            if preceding_backslash {
                // The backslash joins the next physical line; it is not part of the value.
                buf.pop();
                skip_blanks = true;
                appended_line_begin = true;
                preceding_backslash = false;
                if c == '\r' && self.chars.get(self.pos) == Some(&'\n') {
                    self.next_char();
                }
            } else {
                return Some((start_line, buf));
            }
        }
    }
}

/// Splits a logical line into raw (still escaped) key and value (`Properties.load0`).
fn split_key_value(line: &[char]) -> (&[char], &[char]) {
    let mut key_len = 0;
    let mut value_start = line.len();
    let mut has_separator = false;
    let mut preceding_backslash = false;
    while key_len < line.len() {
        let c = line[key_len];
        if (c == '=' || c == ':') && !preceding_backslash {
            value_start = key_len + 1;
            has_separator = true;
            break;
        } else if matches!(c, ' ' | '\t' | '\u{c}') && !preceding_backslash {
            value_start = key_len + 1;
            break;
        }
        preceding_backslash = c == '\\' && !preceding_backslash;
        key_len += 1;
    }
    while value_start < line.len() {
        let c = line[value_start];
        if !matches!(c, ' ' | '\t' | '\u{c}') {
            if !has_separator && (c == '=' || c == ':') {
                has_separator = true;
            } else {
                break;
            }
        }
        value_start += 1;
    }
    (&line[..key_len], &line[value_start..])
}

/// Resolves escapes (`Properties.loadConvert`); `None` on a malformed `\uXXXX`.
fn unescape(raw: &[char]) -> Option<String> {
    let mut units: Vec<u16> = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        i += 1;
        if c != '\\' {
            push_char(&mut units, c);
            continue;
        }
        // A lone trailing backslash cannot reach here (the line reader drops it), but be safe.
        let Some(&escaped) = raw.get(i) else { break };
        i += 1;
        match escaped {
            'u' => {
                let hex: String = raw.get(i..i + 4)?.iter().collect();
                if !hex.chars().all(|h| h.is_ascii_hexdigit()) {
                    return None;
                }
                units.push(u16::from_str_radix(&hex, 16).ok()?);
                i += 4;
            }
            't' => units.push(u16::from(b'\t')),
            'r' => units.push(u16::from(b'\r')),
            'n' => units.push(u16::from(b'\n')),
            'f' => units.push(0x0c),
            other => push_char(&mut units, other),
        }
    }
    // Java strings are UTF-16; an unpaired surrogate from `\uD800` alone becomes U+FFFD here.
    Some(
        char::decode_utf16(units)
            .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect(),
    )
}

fn push_char(units: &mut Vec<u16>, c: char) {
    let mut buf = [0u16; 2];
    units.extend_from_slice(c.encode_utf16(&mut buf));
}

/// `Properties.saveConvert(s, escapeSpace, escUnicode = false)`.
fn escape_into(out: &mut String, s: &str, is_key: bool) {
    for (i, c) in s.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            ' ' => {
                if i == 0 || is_key {
                    out.push('\\');
                }
                out.push(' ');
            }
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
}

/// `java.util.Date.toString()` in UTC: `EEE MMM dd HH:mm:ss UTC yyyy`.
pub fn java_date_string(unix_ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = unix_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm), proleptic Gregorian.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        year
    )
}

/// Orders keys the way Java 17's `Properties.store` iterates them: by bucket of a 16-slot
/// `ConcurrentHashMap` (`(h ^ h >>> 16) & 15` of `String.hashCode`), then insertion order.
/// Java 18+ sorts keys instead (JDK-8231640); readers do not care, but matching the JDK that
/// Kafka's tests and ours run on lets a file be compared byte for byte.
pub fn java17_store_order(props: &JavaProperties) -> JavaProperties {
    // A Properties map starts with 16 buckets and resizes at 12 entries; meta.properties has
    // at most 5 keys.
    assert!(
        props.len() < 12,
        "java17_store_order models the initial 16-bucket table only"
    );
    let bucket = |key: &str| {
        let h = key
            .encode_utf16()
            .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)));
        ((h ^ ((h as u32) >> 16) as i32) & 0x7fff_ffff & 15) as usize
    };
    let mut entries: Vec<(usize, usize, &str, &str)> = props
        .iter()
        .enumerate()
        .map(|(i, (k, v))| (bucket(k), i, k, v))
        .collect();
    entries.sort_by_key(|(b, i, _, _)| (*b, *i));
    let mut ordered = JavaProperties::new();
    for (_, _, k, v) in entries {
        ordered.set(k, v);
    }
    ordered
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> JavaProperties {
        JavaProperties::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn parses_java_properties_syntax() {
        let props = parse(
            "# comment\n\
             ! also a comment \\\n\
             a=1\n\
             \x20 b : 2\n\
             c 3\n\
             d\t=\t 4 \n\
             e\n\
             f=\n\
             long = one \\\n\
             \x20     two\\\n\
             three\n\
             esc\\ key\\=x=\\t\\n\\u0041\\q\\\\\n\
             g=x=y:z\n\
             h:=lead\n\
             c=replaced\n",
        );
        let expected = [
            ("a", "1"),
            ("b", "2"),
            ("c", "replaced"),
            ("d", "4 "),
            ("e", ""),
            ("f", ""),
            ("long", "one twothree"),
            ("esc key=x", "\t\nAq\\"),
            ("g", "x=y:z"),
            ("h", "=lead"),
        ];
        let got: Vec<(&str, &str)> = props.iter().collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn handles_crlf_cr_and_continuations_across_them() {
        let props = parse("a=1\r\nb=2\rc=x\\\r\n  y\r\n");
        assert_eq!(props.get("a"), Some("1"));
        assert_eq!(props.get("b"), Some("2"));
        assert_eq!(props.get("c"), Some("xy"));
        // A continuation at end of input drops the backslash; an escaped backslash is kept.
        assert_eq!(parse("k=v\\").get("k"), Some("v"));
        assert_eq!(parse("k=v\\\\\nn=1").get("k"), Some("v\\"));
        // A continued line does not start a comment.
        assert_eq!(parse("k=a\\\n#b").get("k"), Some("a#b"));
    }

    #[test]
    fn bytes_are_latin1_and_unicode_escapes_utf16() {
        let props = JavaProperties::parse(b"k=\xe9\\u00e9\\uD83D\\uDE00").unwrap();
        assert_eq!(props.get("k"), Some("éé😀"));
    }

    #[test]
    fn malformed_unicode_escape_reports_line() {
        let err = JavaProperties::parse(b"a=1\n\nb=\\u12G4\n").unwrap_err();
        assert_eq!(err, PropertiesSyntaxError { line: 3 });
        assert!(JavaProperties::parse(b"b=\\u12").is_err());
    }

    #[test]
    fn store_escapes_like_save_convert_and_parses_back() {
        let mut props = JavaProperties::new();
        props.set("a key", " lead space, inner space");
        props.set("x=y:z", "#!=:\\\t\n\r\u{c}é");
        let text = props.store("", 0);
        assert_eq!(
            text,
            "#\n#Thu Jan 01 00:00:00 UTC 1970\n\
             a\\ key=\\ lead space, inner space\n\
             x\\=y\\:z=\\#\\!\\=\\:\\\\\\t\\n\\r\\fé\n"
        );
        // The writer emits UTF-8 but Java reads ISO-8859-1, so compare only ASCII round trips.
        let mut ascii = props.clone();
        ascii.set("x=y:z", "#!=:\\\t\n\r\u{c}e");
        assert_eq!(
            JavaProperties::parse(ascii.store("", 0).as_bytes()).unwrap(),
            ascii
        );
    }

    #[test]
    fn date_line_matches_java_date_to_string() {
        // Printed by java.util.Date.toString() with the UTC default time zone.
        let cases = [
            (0, "Thu Jan 01 00:00:00 UTC 1970"),
            (951_782_400_000, "Tue Feb 29 00:00:00 UTC 2000"),
            (1_795_939_871_000, "Sun Nov 29 08:11:11 UTC 2026"),
            (-1, "Wed Dec 31 23:59:59 UTC 1969"),
            (4_102_444_799_999, "Thu Dec 31 23:59:59 UTC 2099"),
        ];
        for (ms, text) in cases {
            assert_eq!(java_date_string(ms), text, "{ms}");
        }
    }
}
