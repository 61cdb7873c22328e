//! `sasl.jaas.config` values, parsed like Kafka's `org.apache.kafka.common.security.JaasConfig`
//! (a `java.io.StreamTokenizer` with `//` and `/* */` comments and `-`, `_`, `$` as word
//! characters) and checked like `JaasContext` (exactly one login module).

use std::collections::BTreeMap;

/// Longest `sasl.jaas.config` value parsed.
pub const MAX_JAAS_CONFIG_LEN: usize = 1024 * 1024;

/// Why a `sasl.jaas.config` value was refused (Kafka's `IllegalArgumentException` texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JaasError {
    /// No login module.
    #[error("JAAS config property does not contain any login modules")]
    NoModule,
    /// More than one login module.
    #[error("JAAS config property contains {0} login modules, should be 1 module")]
    TooManyModules(usize),
    /// A class name without a control flag.
    #[error("Login module control flag not specified in JAAS config")]
    NoFlag,
    /// A flag other than required, requisite, sufficient, optional.
    #[error("Invalid login module control flag '{0}' in JAAS config")]
    BadFlag(String),
    /// A token that is not a word where a class name, flag or key must be.
    #[error("Login module control flag is not available in the JAAS config")]
    NoWord,
    /// `key` without `=value`.
    #[error("Value not specified for key '{0}' in JAAS config")]
    NoValue(String),
    /// A module not ended by `;`.
    #[error("JAAS config entry not terminated by semi-colon")]
    NoSemicolon,
    /// Longer than [`MAX_JAAS_CONFIG_LEN`].
    #[error("JAAS config of {0} bytes is too long")]
    TooLong(usize),
}

/// One login module of a `sasl.jaas.config` value.
#[derive(Clone, PartialEq, Eq)]
pub struct LoginModule {
    /// The login module class, e.g. `org.apache.kafka.common.security.plain.PlainLoginModule`.
    pub class: String,
    /// The control flag as written (`required`, `requisite`, `sufficient`, `optional`, any case).
    pub flag: String,
    /// `key=value` options.
    pub options: BTreeMap<String, String>,
}

// Options hold passwords: Debug shows their keys only.
impl std::fmt::Debug for LoginModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginModule")
            .field("class", &self.class)
            .field("flag", &self.flag)
            .field("options", &self.options.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl LoginModule {
    /// The `username` option (the client's user).
    pub fn username(&self) -> Option<&str> {
        self.options.get("username").map(String::as_str)
    }

    /// The `password` option.
    pub fn password(&self) -> Option<&str> {
        self.options.get("password").map(String::as_str)
    }

    /// `user_NAME="password"` options: the users PLAIN accepts on the server side (Kafka
    /// `PlainServerCallbackHandler`).
    pub fn plain_users(&self) -> BTreeMap<String, String> {
        self.options
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("user_")?.to_owned(), v.clone())))
            .collect()
    }
}

#[derive(Debug, PartialEq)]
enum Token {
    /// A word or a quoted string (`sval`).
    Word(String),
    /// A number (`TT_NUMBER`: no `sval`).
    Number,
    /// Any other character (`ttype` = the character).
    Char(char),
}

/// `StreamTokenizer`'s default syntax with JaasConfig's changes.
struct Tokenizer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

fn word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '_' | '$') || c as u32 >= 0xa0
}

impl Tokenizer<'_> {
    fn next_token(&mut self) -> Option<Token> {
        loop {
            let c = self.chars.next()?;
            if c as u32 <= 0x20 {
                continue;
            }
            if c == '/' {
                match self.chars.peek() {
                    Some('*') => {
                        self.chars.next();
                        let mut prev = '\0';
                        for c in self.chars.by_ref() {
                            if prev == '*' && c == '/' {
                                break;
                            }
                            prev = c;
                        }
                        continue;
                    }
                    // `//` and a lone `/` (the default comment character) end at the line end.
                    _ => {
                        for c in self.chars.by_ref() {
                            if c == '\n' || c == '\r' {
                                break;
                            }
                        }
                        continue;
                    }
                }
            }
            if c.is_ascii_digit() || c == '.' || c == '-' {
                // parseNumbers(): digits, '.', '-' start a number, which has no string value.
                while self
                    .chars
                    .peek()
                    .is_some_and(|c| c.is_ascii_digit() || *c == '.')
                {
                    self.chars.next();
                }
                return Some(Token::Number);
            }
            if word_start(c) {
                let mut word = String::from(c);
                while let Some(&c) = self.chars.peek() {
                    if word_start(c) || c.is_ascii_digit() || matches!(c, '.' | '-') {
                        word.push(c);
                        self.chars.next();
                    } else {
                        break;
                    }
                }
                return Some(Token::Word(word));
            }
            if c == '"' || c == '\'' {
                return Some(Token::Word(self.quoted(c)));
            }
            return Some(Token::Char(c));
        }
    }

    /// A quoted string, ended by its quote or a line end, with Java's escapes.
    fn quoted(&mut self, quote: char) -> String {
        let mut out = String::new();
        while let Some(c) = self.chars.next() {
            match c {
                _ if c == quote => break,
                '\n' | '\r' => break,
                '\\' => {
                    let Some(e) = self.chars.next() else { break };
                    let decoded = match e {
                        'a' => '\u{7}',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        'n' => '\n',
                        'r' => '\r',
                        't' => '\t',
                        'v' => '\u{b}',
                        '0'..='7' => {
                            // Up to three octal digits (the third only if the first is 0-3).
                            let mut v = e as u32 - '0' as u32;
                            let max = if e <= '3' { 2 } else { 1 };
                            for _ in 0..max {
                                match self.chars.peek() {
                                    Some(&d @ '0'..='7') => {
                                        v = v * 8 + (d as u32 - '0' as u32);
                                        self.chars.next();
                                    }
                                    _ => break,
                                }
                            }
                            char::from_u32(v).unwrap_or('\u{fffd}')
                        }
                        other => other,
                    };
                    out.push(decoded);
                }
                _ => out.push(c),
            }
        }
        out
    }
}

fn parse_module(first: Token, tokens: &mut Tokenizer) -> Result<LoginModule, JaasError> {
    let Token::Word(class) = first else {
        return Err(JaasError::NoWord);
    };
    let flag = match tokens.next_token() {
        None => return Err(JaasError::NoFlag),
        Some(Token::Word(flag)) => flag,
        Some(_) => return Err(JaasError::NoWord),
    };
    if !matches!(
        flag.to_ascii_uppercase().as_str(),
        "REQUIRED" | "REQUISITE" | "SUFFICIENT" | "OPTIONAL"
    ) {
        return Err(JaasError::BadFlag(flag));
    }
    let mut options = BTreeMap::new();
    loop {
        let key = match tokens.next_token() {
            None => return Err(JaasError::NoSemicolon),
            Some(Token::Char(';')) => break,
            Some(Token::Word(k)) => k,
            // Java's key is then null; it fails at the value check.
            Some(_) => "null".to_owned(),
        };
        if tokens.next_token() != Some(Token::Char('=')) {
            return Err(JaasError::NoValue(key));
        }
        match tokens.next_token() {
            Some(Token::Word(value)) => {
                options.insert(key, value);
            }
            _ => return Err(JaasError::NoValue(key)),
        }
    }
    Ok(LoginModule {
        class,
        flag,
        options,
    })
}

/// Parses a `sasl.jaas.config` value, which Kafka requires to hold exactly one module.
pub fn parse(text: &str) -> Result<LoginModule, JaasError> {
    if text.len() > MAX_JAAS_CONFIG_LEN {
        return Err(JaasError::TooLong(text.len()));
    }
    let mut tokens = Tokenizer {
        chars: text.chars().peekable(),
    };
    let mut modules = Vec::new();
    while let Some(first) = tokens.next_token() {
        modules.push(parse_module(first, &mut tokens)?);
    }
    match modules.len() {
        0 => Err(JaasError::NoModule),
        1 => Ok(modules.remove(0)),
        n => Err(JaasError::TooManyModules(n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kafkas_plain_example() {
        let m = parse(
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";"#,
        )
        .unwrap();
        assert_eq!(
            m.class,
            "org.apache.kafka.common.security.plain.PlainLoginModule"
        );
        assert_eq!(m.flag, "required");
        assert_eq!(m.username(), Some("admin"));
        assert_eq!(m.password(), Some("admin-secret"));
        let users = m.plain_users();
        assert_eq!(users.len(), 2);
        assert_eq!(users["admin"], "admin-secret");
        assert_eq!(users["alice"], "alice-secret");
        assert!(!format!("{m:?}").contains("secret"));
    }

    #[test]
    fn parses_scram_example_comments_escapes_and_bare_words() {
        let m = parse(
            "/* controller */ org.apache.kafka.common.security.scram.ScramLoginModule Required\n\
             // the user\n username=alice password='a\\\"b\\n\\101' tokenauth=true;  ",
        )
        .unwrap();
        assert_eq!(m.flag, "Required");
        assert_eq!(m.username(), Some("alice"));
        assert_eq!(m.password(), Some("a\"b\nA"));
        assert_eq!(m.options["tokenauth"], "true");
    }

    #[test]
    fn errors_like_kafka() {
        assert_eq!(parse(""), Err(JaasError::NoModule));
        assert_eq!(parse("  // nothing\n"), Err(JaasError::NoModule));
        let two = "a.B required; c.D optional x=\"y\";";
        assert_eq!(parse(two), Err(JaasError::TooManyModules(2)));
        assert_eq!(
            parse("a.B required x=\"y\"").unwrap_err().to_string(),
            "JAAS config entry not terminated by semi-colon"
        );
        assert_eq!(
            parse("a.B mandatory;").unwrap_err().to_string(),
            "Invalid login module control flag 'mandatory' in JAAS config"
        );
        assert_eq!(parse("a.B"), Err(JaasError::NoFlag));
        assert_eq!(
            parse("a.B required x;"),
            Err(JaasError::NoValue("x".into()))
        );
        // An unquoted number has no string value in StreamTokenizer.
        assert_eq!(
            parse("a.B required x=123;"),
            Err(JaasError::NoValue("x".into()))
        );
    }
}
