//! `kraftwerk run`: the arguments of `kafka-server-start` and the configuration they name.
//!
//! `kafka-server-start server.properties [--override key=value]...` (Kafka
//! `kafka.Kafka.getPropsFromArgs`): the properties file, then each override replacing or adding
//! a key. kraftwerk also keeps its first spelling, `run --config FILE`.

use std::fs;
use std::path::PathBuf;

use kraftwerk_log::java_properties::JavaProperties;
use thiserror::Error;

use crate::config::{ConfigError, NodeConfig};

/// `kraftwerk run` arguments.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct RunArgs {
    /// The controller's server.properties (`process.roles=controller`), as for
    /// `kafka-server-start`.
    #[arg(
        value_name = "server.properties",
        required_unless_present = "config",
        conflicts_with = "config"
    )]
    pub file: Option<PathBuf>,
    /// The same file, by flag (kraftwerk's earlier spelling).
    #[arg(short, long, value_name = "CONFIG")]
    pub config: Option<PathBuf>,
    /// A property that overrides the file's value (`--override key=value`, repeatable), as
    /// `kafka-server-start --override`.
    #[arg(long = "override", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
}

/// Why the configuration of `run` could not be built.
#[derive(Debug, Error)]
pub enum RunConfigError {
    /// An `--override` without a value (`CommandLineUtils.parseKeyValueArgs`).
    #[error("Missing value for key {0}")]
    MissingValue(String),
    /// An `--override` with more than one `=` (Kafka splits on every `=` and refuses these).
    #[error("Invalid command line properties: {0}")]
    Invalid(String),
    /// The file could not be read or the configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl RunArgs {
    /// The properties file named by the arguments.
    pub fn path(&self) -> PathBuf {
        self.file
            .clone()
            .or_else(|| self.config.clone())
            .expect("clap requires the file or --config")
    }

    /// `(key, value)` of each `--override`, in order, checked as
    /// `CommandLineUtils.parseKeyValueArgs(args, acceptMissingValue = false)` does.
    pub fn override_pairs(&self) -> Result<Vec<(String, String)>, RunConfigError> {
        self.overrides
            .iter()
            .filter(|o| !o.is_empty())
            .map(|o| {
                let parts: Vec<&str> = o.split('=').collect();
                match parts.as_slice() {
                    [k] | [k, ""] => Err(RunConfigError::MissingValue((*k).to_string())),
                    [k, v] => Ok(((*k).to_string(), (*v).to_string())),
                    _ => Err(RunConfigError::Invalid(self.overrides.join(" "))),
                }
            })
            .collect()
    }

    /// Reads the file, applies the overrides and validates the result
    /// ([`NodeConfig::from_properties`]).
    pub fn load(&self) -> Result<NodeConfig, RunConfigError> {
        let path = self.path();
        let overrides = self.override_pairs()?;
        let bytes = fs::read(&path).map_err(|source| ConfigError::Io {
            path: path.clone(),
            source,
        })?;
        let mut props =
            JavaProperties::parse(&bytes).map_err(|source| ConfigError::Syntax { path, source })?;
        for (k, v) in &overrides {
            props.set(k, v);
        }
        Ok(NodeConfig::from_properties(&props)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    fn parse(args: &[&str]) -> Result<RunArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("run").chain(args.iter().copied())).map(|c| c.run)
    }

    #[test]
    fn file_positional_or_by_flag_but_not_both() {
        assert_eq!(
            parse(&["a.properties"]).unwrap().path(),
            PathBuf::from("a.properties")
        );
        assert_eq!(
            parse(&["--config", "b"]).unwrap().path(),
            PathBuf::from("b")
        );
        assert!(parse(&[]).is_err());
        assert!(parse(&["a", "--config", "b"]).is_err());
    }

    #[test]
    fn overrides_split_like_kafka() {
        let a = parse(&["f", "--override", "node.id=3", "--override", "x=y"]).unwrap();
        assert_eq!(
            a.override_pairs().unwrap(),
            [("node.id".into(), "3".into()), ("x".into(), "y".into())]
        );
        let missing = parse(&["f", "--override", "node.id="]).unwrap();
        assert_eq!(
            missing.override_pairs().unwrap_err().to_string(),
            "Missing value for key node.id"
        );
        let two = parse(&["f", "--override", "a=b=c"]).unwrap();
        assert!(matches!(
            two.override_pairs(),
            Err(RunConfigError::Invalid(_))
        ));
    }

    #[test]
    fn an_override_replaces_the_file_value() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("c.properties");
        fs::write(
            &file,
            "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093,2@localhost:9094\n\
             listeners=CONTROLLER://localhost:9093\ncontroller.listener.names=CONTROLLER\n\
             log.dirs=/tmp/x\n",
        )
        .unwrap();
        let f = file.to_string_lossy().to_string();
        let plain = parse(&[&f]).unwrap().load().unwrap();
        assert_eq!(plain.node_id, 1);
        let moved = parse(&[
            &f,
            "--override",
            "node.id=2",
            "--override",
            "listeners=CONTROLLER://localhost:9094",
        ])
        .unwrap()
        .load()
        .unwrap();
        assert_eq!(moved.node_id, 2);
        assert_eq!(moved.controller_listener().port, 9094);
    }
}
