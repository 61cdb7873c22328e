//! The principal of a TLS client, as Kafka derives it: the subject of the client's leaf
//! certificate as Java's `X500Principal.getName()` prints it (RFC 2253), mapped by
//! `ssl.principal.mapping.rules` (`org.apache.kafka.common.security.ssl.SslPrincipalMapper`),
//! prefixed `User:` (`DefaultKafkaPrincipalBuilder`); `User:ANONYMOUS` without a certificate.

use regex::{Captures, Regex};
use x509_parser::prelude::{FromDer, X509Certificate};

/// `KafkaPrincipal.ANONYMOUS` as `User:ANONYMOUS`.
pub const ANONYMOUS: &str = "User:ANONYMOUS";

/// Why `ssl.principal.mapping.rules` or a certificate could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrincipalError {
    /// A rule does not parse (Kafka: `IllegalArgumentException("Invalid rule: ...")`).
    #[error("Invalid rule: `{rule}`{detail}")]
    InvalidRule {
        /// The rule as split from the list.
        rule: String,
        /// What was wrong, with a leading separator, or empty.
        detail: String,
    },
    /// No rule matched the name (Kafka: `NoMatchingRule`); the connection is refused.
    #[error("No rules apply to {0}")]
    NoMatchingRule(String),
    /// The peer's certificate is not a parsable X.509 certificate.
    #[error("cannot parse the client certificate: {0}")]
    Certificate(String),
}

/// The rule syntax of `SslPrincipalMapper`: `DEFAULT`, `RULE:pattern/replacement/[LU]`, or
/// anything else (which only an empty string satisfies in full).
const RULE_PATTERN: &str = r"(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?).*?|(.*?)";

#[derive(Debug, Clone)]
enum Rule {
    Default,
    Pattern {
        /// The pattern as written, matched anywhere (replacement like `String.replaceAll`).
        pattern: Regex,
        /// The same pattern anchored at both ends (`Matcher.matches`).
        whole: Regex,
        replacement: String,
        case: Case,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Keep,
    Lower,
    Upper,
}

/// `ssl.principal.mapping.rules` (default `DEFAULT`): the first rule whose pattern matches the
/// whole distinguished name gives the name; `DEFAULT` gives the name unchanged.
#[derive(Debug, Clone)]
pub struct SslPrincipalMapper {
    rules: Vec<Rule>,
}

impl SslPrincipalMapper {
    /// Parses the rule list as Kafka splits it (comma-separated, blanks around rules dropped,
    /// empty rules ignored). Patterns are Rust `regex` syntax, which shares Java's for the
    /// classes, groups and lazy quantifiers such rules use; a look-around or back reference
    /// is refused.
    pub fn from_rules(rules: &str) -> Result<Self, PrincipalError> {
        let splitter = Regex::new(&format!(r"\s*({RULE_PATTERN})\s*(,\s*|$)")).expect("valid");
        let parser = Regex::new(&format!("^(?:{RULE_PATTERN})")).expect("valid");
        let mut parsed = Vec::new();
        for split in splitter.captures_iter(rules.trim()) {
            let rule = split.get(1).map_or("", |m| m.as_str());
            let caps = parser
                .captures(rule)
                .expect("the last alternative matches anything");
            let end = caps.get(0).map_or(0, |m| m.end());
            if end != rule.len() {
                return Err(PrincipalError::InvalidRule {
                    rule: rule.to_owned(),
                    detail: format!(", unmatched substring: `{}`", &rule[end..]),
                });
            }
            if caps.get(1).is_some() {
                parsed.push(Rule::Default);
            } else if let Some(pattern) = caps.get(2) {
                let bad = |e: regex::Error| PrincipalError::InvalidRule {
                    rule: rule.to_owned(),
                    detail: format!(": {e}"),
                };
                let case = match caps.get(4).map_or("", |m| m.as_str()) {
                    "L" => Case::Lower,
                    "U" => Case::Upper,
                    _ => Case::Keep,
                };
                parsed.push(Rule::Pattern {
                    pattern: Regex::new(pattern.as_str()).map_err(bad)?,
                    whole: Regex::new(&format!("^(?:{})$", pattern.as_str())).map_err(bad)?,
                    replacement: caps.get(3).map_or("", |m| m.as_str()).to_owned(),
                    case,
                });
            }
            // Otherwise an empty rule (`,,`): ignored, as in Kafka.
        }
        Ok(Self { rules: parsed })
    }

    /// The short name of `distinguished_name`.
    ///
    /// Errors: no rule applies ([`PrincipalError::NoMatchingRule`]).
    pub fn name(&self, distinguished_name: &str) -> Result<String, PrincipalError> {
        for rule in &self.rules {
            match rule {
                Rule::Default => return Ok(distinguished_name.to_owned()),
                Rule::Pattern {
                    pattern,
                    whole,
                    replacement,
                    case,
                } => {
                    if !whole.is_match(distinguished_name) {
                        continue;
                    }
                    let groups = pattern.captures_len() - 1;
                    let replaced = pattern
                        .replace_all(distinguished_name, |caps: &Captures<'_>| {
                            java_replacement(replacement, caps, groups)
                        })
                        .into_owned();
                    return Ok(match case {
                        Case::Keep => replaced,
                        Case::Lower => replaced.to_lowercase(),
                        Case::Upper => replaced.to_uppercase(),
                    });
                }
            }
        }
        Err(PrincipalError::NoMatchingRule(
            distinguished_name.to_owned(),
        ))
    }

    /// `User:` + the mapped subject of a client's leaf certificate (DER).
    pub fn principal(&self, leaf_der: &[u8]) -> Result<String, PrincipalError> {
        Ok(format!("User:{}", self.name(&subject_rfc2253(leaf_der)?)?))
    }
}

/// Expands a `Matcher.replaceAll` replacement: `\x` is `x`; `$n` is group n, with further
/// digits taken while the number stays a group (Java's rule); Kafka first turns a `$n` past the
/// last group into literal text (`escapeLiteralBackReferences`), so such a reference is copied
/// as written; `${name}` is a named group.
fn java_replacement(replacement: &str, caps: &Captures<'_>, groups: usize) -> String {
    let mut out = String::new();
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '$' if chars.peek() == Some(&'{') => {
                chars.next();
                let name: String = chars.by_ref().take_while(|c| *c != '}').collect();
                out.push_str(caps.name(&name).map_or("", |m| m.as_str()));
            }
            '$' if chars.peek().is_some_and(char::is_ascii_digit) => {
                let first = chars.next().and_then(|d| d.to_digit(10)).unwrap_or(0) as usize;
                if groups == 0 || first > groups {
                    // Kafka escapes references past the last group: literal text.
                    out.push('$');
                    out.push(char::from_digit(first as u32, 10).unwrap_or('0'));
                    continue;
                }
                let mut group = first;
                while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                    let longer = group * 10 + d as usize;
                    if longer > groups {
                        break;
                    }
                    group = longer;
                    chars.next();
                }
                out.push_str(caps.get(group).map_or("", |m| m.as_str()));
            }
            c => out.push(c),
        }
    }
    out
}

/// The subject of a DER certificate as `X500Principal.getName()` (RFC 2253) prints it: RDNs
/// last to first, `CN`, `C`, `L`, `ST`, `O`, `OU`, `STREET`, `DC`, `UID` by keyword and any
/// other attribute as its dotted OID with `#` and the hex of its DER value (so an e-mail
/// address prints as `1.2.840.113549.1.9.1=#16...`), values escaped as Java escapes them.
pub fn subject_rfc2253(leaf_der: &[u8]) -> Result<String, PrincipalError> {
    let (_, cert) = X509Certificate::from_der(leaf_der)
        .map_err(|e| PrincipalError::Certificate(e.to_string()))?;
    let rdns: Vec<String> = cert
        .subject()
        .iter()
        .map(|rdn| {
            rdn.iter()
                .map(|atv| {
                    let value = atv.attr_value();
                    attribute(
                        &atv.attr_type().to_id_string(),
                        value.header.tag().0,
                        value.header.is_constructed(),
                        value.header.class() as u8,
                        value.data,
                    )
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    Ok(rdns.into_iter().rev().collect::<Vec<_>>().join(","))
}

/// The RFC 2253 keywords Java prints (`AVAKeyword` entries that are RFC 2253 compliant).
fn keyword(oid: &str) -> Option<&'static str> {
    Some(match oid {
        "2.5.4.3" => "CN",
        "2.5.4.6" => "C",
        "2.5.4.7" => "L",
        "2.5.4.8" => "ST",
        "2.5.4.10" => "O",
        "2.5.4.11" => "OU",
        "2.5.4.9" => "STREET",
        "0.9.2342.19200300.100.1.25" => "DC",
        "0.9.2342.19200300.100.1.1" => "UID",
        _ => return None,
    })
}

// Universal tags of the string types Java prints as text (`AVA.isDerString`, non-canonical).
const TAG_UTF8: u32 = 12;
const TAG_PRINTABLE: u32 = 19;
const TAG_T61: u32 = 20;
const TAG_IA5: u32 = 22;
const TAG_GENERAL: u32 = 27;
const TAG_BMP: u32 = 30;

fn attribute(oid: &str, tag: u32, constructed: bool, class: u8, data: &[u8]) -> String {
    let text_tag = class == 0
        && !constructed
        && [
            TAG_UTF8,
            TAG_PRINTABLE,
            TAG_T61,
            TAG_IA5,
            TAG_GENERAL,
            TAG_BMP,
        ]
        .contains(&tag);
    match keyword(oid) {
        Some(keyword) if text_tag => format!("{keyword}={}", escape(&decode(tag, data))),
        Some(keyword) => format!("{keyword}=#{}", hex_der(tag, constructed, class, data)),
        None => format!("{oid}=#{}", hex_der(tag, constructed, class, data)),
    }
}

/// The value's characters: UTF-8, BMP (UTF-16BE), else one byte per character (Java reads
/// Printable, IA5 and T61 strings as ISO-8859-1).
fn decode(tag: u32, data: &[u8]) -> String {
    match tag {
        TAG_UTF8 => String::from_utf8_lossy(data).into_owned(),
        TAG_BMP => {
            let units: Vec<u16> = data
                .chunks(2)
                .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                .collect();
            String::from_utf16_lossy(&units)
        }
        _ => data.iter().map(|b| char::from(*b)).collect(),
    }
}

/// Java's RFC 2253 escaping: a backslash before `,=+<>#;"\`, `\00` for NUL, and a backslash
/// before each leading and trailing space or carriage return.
fn escape(value: &str) -> String {
    let mut escaped: Vec<char> = Vec::new();
    for c in value.chars() {
        if ",=+<>#;\"\\".contains(c) {
            escaped.push('\\');
            escaped.push(c);
        } else if c == '\0' {
            escaped.extend(['\\', '0', '0']);
        } else {
            escaped.push(c);
        }
    }
    let blank = |c: &char| *c == ' ' || *c == '\r';
    let lead = escaped.iter().take_while(|c| blank(c)).count();
    let trail_start = escaped.len() - escaped.iter().rev().take_while(|c| blank(c)).count();
    let mut out = String::new();
    for (i, c) in escaped.into_iter().enumerate() {
        if i < lead || i >= trail_start.max(lead) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Lower-case hex of the value's DER encoding (identifier, length, contents), as Java's
/// `HexFormat` prints `DerValue.toByteArray()`.
fn hex_der(tag: u32, constructed: bool, class: u8, data: &[u8]) -> String {
    let mut der = Vec::with_capacity(data.len() + 6);
    let identifier = (class << 6) | if constructed { 0x20 } else { 0 };
    if tag < 31 {
        der.push(identifier | tag as u8);
    } else {
        der.push(identifier | 0x1f);
        let mut septets = Vec::new();
        let mut t = tag;
        loop {
            septets.push((t & 0x7f) as u8);
            t >>= 7;
            if t == 0 {
                break;
            }
        }
        for (i, s) in septets.iter().rev().enumerate() {
            der.push(if i + 1 < septets.len() { s | 0x80 } else { *s });
        }
    }
    let len = data.len();
    if len < 128 {
        der.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        der.push(0x80 | bytes.len() as u8);
        der.extend(bytes);
    }
    der.extend_from_slice(data);
    der.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapper(rules: &str) -> SslPrincipalMapper {
        SslPrincipalMapper::from_rules(rules).unwrap()
    }

    // Kafka's documented examples (SslPrincipalMapperTest, security docs).
    #[test]
    fn kafka_examples_map_as_documented() {
        let m = mapper(
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, \
             RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, \
             RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U, \
             RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, DEFAULT",
        );
        assert_eq!(
            m.name("CN=Duke,OU=ServiceUsers,O=Org,C=US").unwrap(),
            "duke"
        );
        assert_eq!(
            m.name("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US").unwrap(),
            "duke@sme"
        );
        assert_eq!(m.name("cn=duke,ou=sme,dc=mycp,dc=com").unwrap(), "DUKE@SME");
        assert_eq!(
            m.name("cN=duke,OU=JavaSoft,O=Sun Microsystems").unwrap(),
            "DUKE"
        );
        assert_eq!(
            m.name("OU=JavaSoft,O=Sun Microsystems,C=US").unwrap(),
            "OU=JavaSoft,O=Sun Microsystems,C=US"
        );
    }

    #[test]
    fn escaped_comma_in_a_name() {
        let m = mapper(r"RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT");
        assert_eq!(
            m.name(r"CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz").unwrap(),
            r"Tkac\, Adam"
        );
    }

    #[test]
    fn valid_and_invalid_rules_like_kafka() {
        for ok in [
            "DEFAULT",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
            "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
            "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
            "RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
            "",
            ",   , , ,",
        ] {
            assert!(SslPrincipalMapper::from_rules(ok).is_ok(), "{ok}");
        }
        for bad in [
            "default",
            "DEFAUL",
            "DEFAULT/L",
            "DEFAULT/U",
            "RULE:CN=(.*?),OU=ServiceUsers.*/$1",
            "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
        ] {
            assert!(SslPrincipalMapper::from_rules(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn no_rule_no_name_and_literal_back_references() {
        let m = mapper("RULE:^CN=([a-z]+)$/$1-$2/");
        assert_eq!(m.name("CN=abc").unwrap(), "abc-$2");
        assert!(matches!(
            m.name("CN=ABC"),
            Err(PrincipalError::NoMatchingRule(_))
        ));
        assert!(mapper("").name("CN=x").is_err());
    }

    #[test]
    fn values_escape_like_java() {
        assert_eq!(escape("a,b+c"), r"a\,b\+c");
        assert_eq!(escape(" #x "), r"\ \#x\ ");
        assert_eq!(escape("q\"<>;=\\"), r#"q\"\<\>\;\=\\"#);
        assert_eq!(escape("  "), r"\ \ ");
    }

    #[test]
    fn oids_print_as_hex_der() {
        assert_eq!(
            attribute("1.2.840.113549.1.9.1", TAG_IA5, false, 0, b"a@b"),
            "1.2.840.113549.1.9.1=#1603614062"
        );
        assert_eq!(attribute("2.5.4.3", TAG_UTF8, false, 0, b"x"), "CN=x");
    }
}
