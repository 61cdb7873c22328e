//! Checks on snapshot files: Kafka's own tools decode them and list the topics of their offset,
//! and the controllers' directories keep KIP-630's invariants (cases C06, C07, C08).

use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use super::history::History;
use super::probes::segment_bases;
use crate::env::Env;
use crate::kafka::args;
use crate::scenarios::checks::{self, partition_dir};
use crate::util;

/// `kafka-metadata-shell --snapshot` (`tree /image`, read whole, no errors) and `kafka-dump-log
/// --cluster-metadata-decoder` (every batch valid, SnapshotHeader first, SnapshotFooter last,
/// no "Error at offset") on a copy of snapshot `file` named as the original (DumpLogSegments
/// parses the name); both must list the same topics, one of the sets `history` allows at the
/// snapshot's end offset. Prints what they showed.
pub fn check_with_kafka_tools(env: &Env, history: &History, who: &str, file: &Path) -> Result<()> {
    let name = file
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let end: i64 = name
        .get(..20)
        .and_then(|s| s.parse().ok())
        .with_context(|| format!("{name} is not a snapshot name"))?;
    let dir = env
        .work
        .join("tool-copies")
        .join(who.split_whitespace().next().unwrap_or(who));
    std::fs::create_dir_all(&dir)?;
    let copy = dir.join(&name);
    // A copy: the shell locks `<dir>/../.lock`, which the running node holds.
    std::fs::copy(file, &copy).with_context(|| format!("copying {}", file.display()))?;
    let path = copy.to_string_lossy().to_string();

    let tree = checks::image_tree(env, &copy)?;
    let shell_topics: BTreeSet<String> = tree_children(&tree, &["topics", "byName"])
        .into_iter()
        .filter(|n| !n.starts_with("__"))
        .collect();

    let r = env.tool_ok(
        "kafka-dump-log",
        &args(&["--cluster-metadata-decoder", "--files", &path]),
        None,
        Duration::from_secs(120),
    )?;
    let out = &r.stdout;
    if out.contains("isvalid: false")
        || out.contains("Error at offset")
        || r.stderr.contains("Exception")
    {
        bail!(
            "kafka-dump-log found errors in {who}'s {name}: {}",
            util::one_line(&format!("{}\n{out}", r.stderr), 600)
        );
    }
    let records: Vec<&str> = out.lines().filter(|l| l.starts_with("| offset:")).collect();
    let first = records.first().copied().unwrap_or("");
    let last = records.last().copied().unwrap_or("");
    if !first.contains("SnapshotHeader") || !last.contains("SnapshotFooter") {
        bail!("kafka-dump-log of {name}: first record {first:?}, last {last:?} (expected SnapshotHeader … SnapshotFooter)");
    }
    let dump_topics: BTreeSet<String> = out
        .lines()
        .filter(|l| l.contains("\"type\":\"TOPIC_RECORD\""))
        .filter_map(|l| {
            let i = l.find("\"name\":\"")? + 8;
            Some(l[i..].split('"').next()?.to_string())
        })
        .filter(|n| !n.starts_with("__"))
        .collect();
    if shell_topics != dump_topics {
        bail!(
            "{who}'s {name}: kafka-metadata-shell lists topics {shell_topics:?}, kafka-dump-log {dump_topics:?}"
        );
    }
    let possible = history.possible_at(end);
    if !possible.contains(&shell_topics) {
        bail!(
            "{who}'s snapshot {name} holds topics {shell_topics:?}; at offset {end} the cluster had {possible:?}"
        );
    }
    env.show(
        &format!("kafka-dump-log --cluster-metadata-decoder --files {name} ({who})"),
        &format!(
            "{}\n{first}\n... {} records, every batch isvalid: true ...\n{last}",
            out.lines()
                .find(|l| l.starts_with("Snapshot end offset"))
                .unwrap_or(""),
            records.len()
        ),
    );
    env.step(&format!(
        "kafka-metadata-shell --snapshot {name} ({who}): /image/topics/byName = {shell_topics:?}, the same as \
         kafka-dump-log's TopicRecords and as the topics at offset {end}"
    ));
    Ok(())
}

/// Names of the children of `path` in a `tree` listing (two spaces of indent per level).
pub fn tree_children(tree: &str, path: &[&str]) -> Vec<String> {
    let mut depth = 0usize;
    let mut out = Vec::new();
    for l in tree.lines() {
        let indent = (l.len() - l.trim_start().len()) / 2;
        let name = l.trim().strip_suffix(':');
        if depth < path.len() {
            if indent < depth {
                return out;
            }
            if indent == depth && name == Some(path[depth]) {
                depth += 1;
            }
            continue;
        }
        if indent < depth {
            break;
        }
        if indent == depth {
            if let Some(n) = name {
                out.push(n.to_string());
            }
        }
    }
    out
}

/// KIP-630's on-disk invariants in a (stopped) controller's metadata directory:
///
/// * C06: a log that no longer starts at offset 0 is covered by a snapshot at or above its
///   first segment's base offset (otherwise the node could not rebuild its state);
/// * C07: every `.checkpoint` is complete: its bytes are whole batches, the first and last of
///   them control batches (SnapshotHeader, SnapshotFooter);
/// * C08: every snapshot the log still covers ends on a batch boundary (or at the log end).
///
/// Returns a one-line summary.
pub fn assert_disk_invariants(label: &str, data: &Path) -> Result<String> {
    let part = partition_dir(data);
    let batches = checks::read_batches(&part)?;
    let segments = segment_bases(data)?;
    let snaps = checks::snapshots(&part)?;
    let first_base = segments.first().copied().unwrap_or(0);
    let log_end = checks::end_offset(&batches);
    if first_base > 0 && !snaps.iter().any(|(o, _, _)| *o >= first_base) {
        bail!(
            "C06: {label}'s log starts at offset {first_base} but no snapshot covers it (snapshots {:?})",
            super::probes::ids(&snaps)
        );
    }
    for (o, e, p) in &snaps {
        let data = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
        let parsed = checks::parse_batches(&data);
        let whole: usize = parsed.iter().map(|b| b.bytes.len()).sum();
        let framed = parsed.first().is_some_and(|b| b.control)
            && parsed.last().is_some_and(|b| b.control)
            && parsed.len() >= 2;
        if whole != data.len() || !framed {
            bail!(
                "C07: {label}'s snapshot {o}-{e} is not complete: {} of {} bytes in whole batches, {} batches, \
                 header/footer control batches: {framed}",
                whole,
                data.len(),
                parsed.len()
            );
        }
        let covered = batches.first().is_some_and(|b| b.base_offset <= *o) && *o <= log_end;
        if covered && *o != log_end && !batches.iter().any(|b| b.base_offset == *o) {
            bail!("C08: {label}'s snapshot {o}-{e} ends inside a batch of its log");
        }
    }
    Ok(format!(
        "{label}: log [{first_base}, {log_end}) in {} segment(s), snapshots {:?}: covered (C06), complete (C07), on \
         batch boundaries (C08)",
        segments.len(),
        super::probes::ids(&snaps)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_children_reads_the_shells_indentation() {
        let t = "features:\n  metadataVersion:\n    4.1-IV1\ntopics:\n  byId:\n    XyZ:\n      name:\n        a\n  \
                 byName:\n    a:\n      0:\n        x\n      id:\n        XyZ\n    b:\n      name:\n        b\nzzz:\n  c:\n";
        assert_eq!(tree_children(t, &["topics", "byName"]), vec!["a", "b"]);
        assert_eq!(tree_children(t, &["topics"]), vec!["byId", "byName"]);
        assert!(tree_children(t, &["nothing"]).is_empty());
    }
}
