//! Log output of `kraftwerk run`: `tracing` events to stderr, filtered by `KRAFTWERK_LOG`
//! (`tracing_subscriber::EnvFilter` syntax, default `info`), as text or JSON.
//!
//! Colour codes only when stderr is a terminal: under systemd/journald, `docker logs` or a
//! file they are noise that breaks `grep`. `KRAFTWERK_LOG_FORMAT=json` writes one JSON object
//! per line (`timestamp`, `level`, `fields.message`, the event's other fields) for log
//! shippers.

use std::io::IsTerminal;

/// Environment variable with the filter directives.
pub const LOG_FILTER_ENV: &str = "KRAFTWERK_LOG";
/// Environment variable choosing the output format: `text` (default) or `json`.
pub const LOG_FORMAT_ENV: &str = "KRAFTWERK_LOG_FORMAT";

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// `2026-12-01T19:00:00.000000Z  INFO message key=value`.
    Text,
    /// One JSON object per line.
    Json,
}

impl LogFormat {
    /// Parses the value of [`LOG_FORMAT_ENV`] (case-insensitive; unset or empty is text).
    ///
    /// Errors: any other value, with a message naming the accepted ones.
    pub fn parse(value: Option<&str>) -> Result<LogFormat, String> {
        match value.map(str::trim) {
            None | Some("") => Ok(LogFormat::Text),
            Some(v) if v.eq_ignore_ascii_case("text") => Ok(LogFormat::Text),
            Some(v) if v.eq_ignore_ascii_case("json") => Ok(LogFormat::Json),
            Some(v) => Err(format!(
                "{LOG_FORMAT_ENV}={v} is not a log format: use text or json"
            )),
        }
    }
}

/// Installs the global subscriber from the environment.
///
/// Errors: an invalid [`LOG_FORMAT_ENV`] (the filter falls back to `info` when
/// [`LOG_FILTER_ENV`] is unset; an unparsable filter is an error too, rather than silently
/// logging at another level).
pub fn init_from_env() -> Result<(), String> {
    let format = LogFormat::parse(std::env::var(LOG_FORMAT_ENV).ok().as_deref())?;
    let filter = match std::env::var(LOG_FILTER_ENV) {
        Ok(directives) => tracing_subscriber::EnvFilter::try_new(&directives)
            .map_err(|e| format!("{LOG_FILTER_ENV}={directives}: {e}"))?,
        Err(_) => tracing_subscriber::EnvFilter::new("info"),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder.json().with_ansi(false).init(),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(LogFormat::parse(None), Ok(LogFormat::Text));
        assert_eq!(LogFormat::parse(Some("")), Ok(LogFormat::Text));
        assert_eq!(LogFormat::parse(Some("JSON")), Ok(LogFormat::Json));
        assert_eq!(LogFormat::parse(Some("text")), Ok(LogFormat::Text));
        assert_eq!(
            LogFormat::parse(Some("logfmt")),
            Err("KRAFTWERK_LOG_FORMAT=logfmt is not a log format: use text or json".into())
        );
    }
}
