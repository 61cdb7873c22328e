//! `kraftwerk info`: what `kafka-storage info` prints about a node's directories.
//!
//! Follows `StorageTool.infoCommand` (Kafka `core/src/main/scala/kafka/tools/StorageTool.scala`):
//! every directory `format` writes to (`log.dirs` plus `metadata.log.dir`), sorted, is checked
//! for existence and a readable `meta.properties`; the first one found is printed as a sorted
//! `{key=value, ...}` map, and problems (missing or unformatted directories, mismatched cluster
//! or node ids, a ZooKeeper-era `version=0` file) are listed. Exit status 1 when any problem
//! was found, as Kafka's.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use kraftwerk_log::meta_properties::{MetaProperties, MetaPropertiesError, MetaPropertiesVersion};

use crate::config::{ConfigError, NodeConfig};

/// `kraftwerk info` arguments, spelled like `kafka-storage info`'s.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct InfoArgs {
    /// The server.properties of this controller.
    #[arg(long = "config", short = 'c', value_name = "CONFIG")]
    pub config: PathBuf,
}

/// The report and whether it found a problem (`kafka-storage info` exits 1 then).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InfoReport {
    /// The text `kafka-storage info` prints for the same directories.
    pub text: String,
    /// True if the report lists a problem.
    pub problems: bool,
}

/// Checks `directories` as `StorageTool.infoCommand` does for a KRaft node.
pub fn info(directories: &[PathBuf]) -> InfoReport {
    let mut dirs = directories.to_vec();
    dirs.sort();
    let mut problems = Vec::new();
    let mut found = Vec::new();
    let mut first: Option<MetaProperties> = None;
    for dir in &dirs {
        if !dir.is_dir() {
            problems.push(if dir.exists() {
                format!("{} is not a directory", dir.display())
            } else {
                format!("{} does not exist", dir.display())
            });
            continue;
        }
        found.push(dir.display().to_string());
        match MetaProperties::read(dir) {
            Ok(None) => problems.push(format!("{} is not formatted.", dir.display())),
            Ok(Some(meta)) => match &first {
                None => first = Some(meta),
                Some(prev) if prev.cluster_id != meta.cluster_id => {
                    problems.push("Mismatched cluster IDs between storage directories.".into())
                }
                Some(prev) if prev.node_id != meta.node_id => {
                    problems.push("Mismatched node IDs between storage directories.".into())
                }
                Some(_) => {}
            },
            Err(e) => problems.push(load_problem(dir, &e)),
        }
    }
    if first
        .as_ref()
        .is_some_and(|m| m.version == MetaPropertiesVersion::V0)
    {
        problems.push(
            "The kafka configuration file appears to be for a cluster in KRaft mode, but the \
             directories are formatted for legacy mode."
                .into(),
        );
    }
    let mut text = String::new();
    if dirs.is_empty() {
        text.push_str("No directories specified.\n");
        return InfoReport {
            text,
            problems: false,
        };
    }
    if !found.is_empty() {
        let heading = if found.len() == 1 {
            "Found log directory:"
        } else {
            "Found log directories:"
        };
        let _ = writeln!(text, "{heading}");
        for d in &found {
            let _ = writeln!(text, "  {d}");
        }
        text.push('\n');
    }
    if let Some(meta) = &first {
        let props = meta.to_properties();
        let sorted: BTreeMap<&str, &str> = props.iter().collect();
        let shown: Vec<String> = sorted.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(text, "Found metadata: {{{}}}\n", shown.join(", "));
    }
    if !problems.is_empty() {
        let heading = if problems.len() == 1 {
            "Found problem:"
        } else {
            "Found problems:"
        };
        let _ = writeln!(text, "{heading}");
        for p in &problems {
            let _ = writeln!(text, "  {p}");
        }
        text.push('\n');
    }
    InfoReport {
        problems: !problems.is_empty(),
        text,
    }
}

/// Kafka's `Error loading <path>: <message>` line for an unreadable meta.properties.
fn load_problem(dir: &Path, e: &MetaPropertiesError) -> String {
    let path = dir.join(kraftwerk_log::meta_properties::META_PROPERTIES_FILE);
    match e {
        MetaPropertiesError::Invalid { source, .. } => {
            format!("Error loading {}: {source}", path.display())
        }
        MetaPropertiesError::Io { source, .. } => {
            format!("Error loading {}: {source}", path.display())
        }
    }
}

/// Runs `kraftwerk info`: prints the report; `Ok(false)` (exit 1) when it lists a problem.
///
/// Errors: the configuration cannot be read or is invalid.
pub fn run_info(args: &InfoArgs) -> Result<bool, ConfigError> {
    let config = NodeConfig::load(&args.config)?;
    let report = info(&config.all_log_dirs());
    print!("{}", report.text);
    Ok(!report.problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn formatted(dir: &Path, cluster: &str, node: i32) {
        std::fs::create_dir_all(dir).unwrap();
        MetaProperties::v1(
            cluster,
            node,
            Uuid::from_u128(0x1234_5678_9abc_def0_1122_3344_5566_7788),
        )
        .write(dir)
        .unwrap();
    }

    #[test]
    fn a_formatted_directory_prints_its_sorted_metadata_and_exits_zero() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("meta");
        formatted(&d, "qXNs3XFoQ0-_Wkia5m3itA", 1);
        let r = info(std::slice::from_ref(&d));
        let id = kraftwerk_protocol::kafka_uuid::kafka_uuid_to_string(Uuid::from_u128(
            0x1234_5678_9abc_def0_1122_3344_5566_7788,
        ));
        assert_eq!(
            r.text,
            format!(
                "Found log directory:\n  {}\n\nFound metadata: {{cluster.id=qXNs3XFoQ0-_Wkia5m3itA, \
                 directory.id={id}, node.id=1, version=1}}\n\n",
                d.display()
            )
        );
        assert!(!r.problems);
    }

    #[test]
    fn missing_unformatted_and_mismatched_directories_are_problems() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("a-missing");
        let empty = tmp.path().join("b-empty");
        std::fs::create_dir_all(&empty).unwrap();
        let one = tmp.path().join("c-one");
        let other = tmp.path().join("d-other");
        formatted(&one, "AAAAAAAAAAAAAAAAAAAAAA", 1);
        formatted(&other, "BBBBBBBBBBBBBBBBBBBBBB", 1);
        let r = info(&[other.clone(), missing.clone(), one.clone(), empty.clone()]);
        assert!(r.problems);
        let problems = r.text.split("Found problems:\n").nth(1).unwrap();
        assert_eq!(
            problems,
            format!(
                "  {} does not exist\n  {} is not formatted.\n  Mismatched cluster IDs between storage directories.\n\n",
                missing.display(),
                empty.display()
            )
        );
        assert!(r.text.starts_with("Found log directories:\n"));
        assert!(r.text.contains("cluster.id=AAAAAAAAAAAAAAAAAAAAAA"));
    }

    #[test]
    fn no_directories() {
        let r = info(&[]);
        assert_eq!(r.text, "No directories specified.\n");
        assert!(!r.problems);
    }
}
