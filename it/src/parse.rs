//! Parsers for the text that Kafka's CLI tools print: `kafka-metadata-quorum describe --status`
//! and `--replication`, and `kafka-topics --describe`.

use anyhow::{bail, Context, Result};

/// `kafka-metadata-quorum describe --status` (MetadataQuorumCommand), as the user reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct QuorumStatus {
    /// `ClusterId:`.
    pub cluster_id: String,
    /// `LeaderId:` (-1 while no leader is known).
    pub leader_id: i32,
    /// `LeaderEpoch:`.
    pub leader_epoch: i64,
    /// `HighWatermark:` (offset).
    pub high_watermark: i64,
    /// Node ids in `CurrentVoters:`.
    pub voters: Vec<i32>,
    /// Node ids in `CurrentObservers:` (brokers fetching the metadata log).
    pub observers: Vec<i32>,
    /// `CurrentVoters:` as `(id, directoryId)`; `None` where the tool prints `null` or nothing
    /// (a static quorum's voters have no directory id, `Uuid.ZERO_UUID`).
    pub voter_keys: Vec<(i32, Option<String>)>,
    /// `CurrentObservers:` as `(id, directoryId)`.
    pub observer_keys: Vec<(i32, Option<String>)>,
}

/// `(id, directoryId)` of every entry of a `CurrentVoters:` / `CurrentObservers:` JSON array
/// (`[{"id": 1, "directoryId": "...", "endpoints": [...]}]`; `directoryId` may be `null` or
/// absent).
fn node_keys(json: &str) -> Result<Vec<(i32, Option<String>)>> {
    let v: serde_json::Value =
        serde_json::from_str(json.trim()).with_context(|| format!("not JSON: {json}"))?;
    let arr = v
        .as_array()
        .with_context(|| format!("not a JSON array: {json}"))?;
    arr.iter()
        .map(|e| {
            let id = e
                .as_i64()
                .or_else(|| e.get("id").and_then(|i| i.as_i64()))
                .map(|i| i as i32)
                .with_context(|| format!("no node id in {e}"))?;
            let dir = e
                .get("directoryId")
                .and_then(|d| d.as_str())
                .map(str::to_string);
            Ok((id, dir))
        })
        .collect()
}

fn node_ids(json: &str) -> Result<Vec<i32>> {
    // 3.9+/4.x print JSON objects `[{"id": 1, "endpoints": [...]}, ...]`; older releases a
    // plain `[1,2,3]`. Accept both.
    let v: serde_json::Value =
        serde_json::from_str(json.trim()).with_context(|| format!("not JSON: {json}"))?;
    let arr = v
        .as_array()
        .with_context(|| format!("not a JSON array: {json}"))?;
    arr.iter()
        .map(|e| {
            e.as_i64()
                .or_else(|| e.get("id").and_then(|i| i.as_i64()))
                .map(|i| i as i32)
                .with_context(|| format!("no node id in {e}"))
        })
        .collect()
}

/// Parses `describe --status` output. Errors name the missing field.
pub fn parse_status(text: &str) -> Result<QuorumStatus> {
    let field = |name: &str| -> Result<String> {
        text.lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(&format!("{name}:"))
                    .map(|v| v.trim().to_string())
            })
            .with_context(|| {
                format!(
                    "no `{name}:` in describe --status output: {}",
                    crate::util::one_line(text, 300)
                )
            })
    };
    let num = |name: &str| -> Result<i64> {
        let v = field(name)?;
        v.parse::<i64>()
            .with_context(|| format!("`{name}: {v}` is not a number"))
    };
    Ok(QuorumStatus {
        cluster_id: field("ClusterId")?,
        leader_id: num("LeaderId")? as i32,
        leader_epoch: num("LeaderEpoch")?,
        high_watermark: num("HighWatermark")?,
        voters: node_ids(&field("CurrentVoters")?)?,
        observers: node_ids(&field("CurrentObservers")?)?,
        voter_keys: node_keys(&field("CurrentVoters")?)?,
        observer_keys: node_keys(&field("CurrentObservers")?)?,
    })
}

/// One row of `describe --replication`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaRow {
    /// `NodeId`.
    pub node_id: i32,
    /// `LogEndOffset` as last reported to the leader (the leader's own for its row).
    pub log_end_offset: i64,
    /// `Lag` (leader's log end offset minus this replica's).
    pub lag: i64,
    /// `Status`: `Leader`, `Follower` or `Observer`.
    pub status: String,
    /// `DirectoryId` (3.9+; `None` without the column, or for the all-zero id
    /// `AAAAAAAAAAAAAAAAAAAAAA` of a static voter).
    pub directory_id: Option<String>,
}

/// `Uuid.ZERO_UUID` as Kafka prints it.
pub const ZERO_UUID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// Parses `describe --replication` output (tab-separated table; columns found by header name,
/// so releases that add columns, e.g. `DirectoryId`, still parse).
pub fn parse_replication(text: &str) -> Result<Vec<ReplicaRow>> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines
        .find(|l| l.trim_start().starts_with("NodeId"))
        .with_context(|| {
            format!(
                "no NodeId header in describe --replication output: {}",
                crate::util::one_line(text, 300)
            )
        })?;
    let cols: Vec<&str> = header.split('\t').map(str::trim).collect();
    let idx = |name: &str| {
        cols.iter()
            .position(|c| *c == name)
            .with_context(|| format!("no {name} column in {header:?}"))
    };
    let i_dir = cols.iter().position(|c| *c == "DirectoryId");
    let (i_node, i_leo, i_lag, i_status) = (
        idx("NodeId")?,
        idx("LogEndOffset")?,
        idx("Lag")?,
        idx("Status")?,
    );
    let mut rows = Vec::new();
    for l in lines {
        let cells: Vec<&str> = l.split('\t').map(str::trim).collect();
        let get = |i: usize| {
            cells
                .get(i)
                .copied()
                .with_context(|| format!("short row {l:?}"))
        };
        rows.push(ReplicaRow {
            node_id: get(i_node)?
                .parse()
                .with_context(|| format!("bad NodeId in {l:?}"))?,
            log_end_offset: get(i_leo)?
                .parse()
                .with_context(|| format!("bad LogEndOffset in {l:?}"))?,
            lag: get(i_lag)?
                .parse()
                .with_context(|| format!("bad Lag in {l:?}"))?,
            status: get(i_status)?.to_string(),
            directory_id: i_dir
                .and_then(|i| cells.get(i))
                .map(|d| d.to_string())
                .filter(|d| !d.is_empty() && d != ZERO_UUID),
        });
    }
    if rows.is_empty() {
        bail!("describe --replication printed no rows");
    }
    Ok(rows)
}

/// One partition line of `kafka-topics --describe`.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionInfo {
    /// Topic name.
    pub topic: String,
    /// Partition index.
    pub partition: i32,
    /// Leader broker id, -1 for `none`.
    pub leader: i32,
    /// Replica broker ids.
    pub replicas: Vec<i32>,
    /// In-sync replica broker ids.
    pub isr: Vec<i32>,
}

fn id_list(s: &str) -> Result<Vec<i32>> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.parse().with_context(|| format!("bad id {x:?}")))
        .collect()
}

/// Parses the partition lines of `kafka-topics --describe` (`Topic: t  Partition: 0  Leader: 1
/// Replicas: 1,2  Isr: 1,2 ...`, tab-separated). The per-topic summary line is skipped.
pub fn parse_topic_describe(text: &str) -> Result<Vec<PartitionInfo>> {
    let mut out = Vec::new();
    for l in text.lines() {
        if !l.contains("Partition:") {
            continue;
        }
        let mut kv = std::collections::HashMap::new();
        for cell in l.split('\t') {
            if let Some((k, v)) = cell.split_once(':') {
                kv.insert(k.trim().to_string(), v.trim().to_string());
            }
        }
        let get = |k: &str| {
            kv.get(k)
                .cloned()
                .with_context(|| format!("no {k} in {l:?}"))
        };
        let leader = get("Leader")?;
        out.push(PartitionInfo {
            topic: get("Topic")?,
            partition: get("Partition")?.parse()?,
            leader: if leader == "none" {
                -1
            } else {
                leader
                    .parse()
                    .with_context(|| format!("bad Leader in {l:?}"))?
            },
            replicas: id_list(&get("Replicas")?)?,
            isr: id_list(&get("Isr")?)?,
        });
    }
    if out.is_empty() {
        bail!(
            "kafka-topics --describe printed no partitions: {}",
            crate::util::one_line(text, 300)
        );
    }
    out.sort_by_key(|p| (p.topic.clone(), p.partition));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Shapes as printed by Kafka 4.1.2's tools.
    const STATUS: &str = "ClusterId:              Mk3OEYBSD34fcwNTJENDM2\n\
LeaderId:               1\n\
LeaderEpoch:            3\n\
HighWatermark:          36\n\
MaxFollowerLag:         0\n\
MaxFollowerLagTimeMs:   0\n\
CurrentVoters:          [{\"id\": 1, \"endpoints\": [\"CONTROLLER://127.0.0.1:19091\"]}, {\"id\": 2, \"endpoints\": [\"CONTROLLER://127.0.0.1:19092\"]}, {\"id\": 3, \"endpoints\": [\"CONTROLLER://127.0.0.1:19093\"]}]\n\
CurrentObservers:       [{\"id\": 101, \"directoryId\": \"Tga-4TPcMQaZ6boQIBlH2w\"}]\n";

    #[test]
    fn status_fields() {
        let s = parse_status(STATUS).unwrap();
        assert_eq!(s.cluster_id, "Mk3OEYBSD34fcwNTJENDM2");
        assert_eq!((s.leader_id, s.leader_epoch, s.high_watermark), (1, 3, 36));
        assert_eq!(s.voters, vec![1, 2, 3]);
        assert_eq!(s.observers, vec![101]);
        assert_eq!(s.voter_keys[0], (1, None));
        assert_eq!(
            s.observer_keys,
            vec![(101, Some("Tga-4TPcMQaZ6boQIBlH2w".to_string()))]
        );
    }

    #[test]
    fn dynamic_voters_carry_directory_ids() {
        let dynamic = STATUS.replace(
            "[{\"id\": 1, \"endpoints\"",
            "[{\"id\": 1, \"directoryId\": \"3Db5QLSqSZieL3rJBUUegA\", \"endpoints\"",
        );
        let s = parse_status(&dynamic).unwrap();
        assert_eq!(
            s.voter_keys[0],
            (1, Some("3Db5QLSqSZieL3rJBUUegA".to_string()))
        );
        let nulls = STATUS.replace("\"id\": 2,", "\"id\": 2, \"directoryId\": null,");
        assert_eq!(parse_status(&nulls).unwrap().voter_keys[1], (2, None));
    }

    #[test]
    fn status_old_style_voters_and_missing_fields() {
        let old = STATUS
            .lines()
            .map(|l| {
                if l.starts_with("CurrentVoters") {
                    "CurrentVoters:          [1,2,3]"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(parse_status(&old).unwrap().voters, vec![1, 2, 3]);
        let err = parse_status("LeaderId: 1\n").unwrap_err().to_string();
        assert!(err.contains("ClusterId"), "{err}");
        assert!(
            parse_status(&STATUS.replace("LeaderEpoch:            3", "LeaderEpoch: x")).is_err()
        );
    }

    #[test]
    fn replication_rows() {
        let text = "NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t\n\
1     \tAAAAAAAAAAAAAAAAAAAAAA\t43          \t0  \t1795940026190     \t1795940026190        \tLeader  \t\n\
2     \tAAAAAAAAAAAAAAAAAAAAAA\t40          \t3  \t1795940026055     \t1795940026055        \tFollower\t\n\
101   \tTga-4TPcMQaZ6boQIBlH2w\t43          \t0  \t1795940026061     \t1795940026061        \tObserver\t\n";
        let rows = parse_replication(text).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[0],
            ReplicaRow {
                node_id: 1,
                log_end_offset: 43,
                lag: 0,
                status: "Leader".into(),
                directory_id: None,
            }
        );
        assert_eq!(rows[1].lag, 3);
        assert_eq!(rows[2].status, "Observer");
        assert_eq!(rows[1].directory_id, None);
        assert_eq!(
            rows[2].directory_id.as_deref(),
            Some("Tga-4TPcMQaZ6boQIBlH2w")
        );
        assert!(parse_replication("nothing").is_err());
    }

    #[test]
    fn topic_describe() {
        let text = "Topic: t1\tTopicId: Yi-w_bTpRFSMuxXFlxDgWA\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: min.insync.replicas=2\n\
\tTopic: t1\tPartition: 1\tLeader: none\tReplicas: 103,101,102\tIsr: 101\tElr: \tLastKnownElr: \n\
\tTopic: t1\tPartition: 0\tLeader: 102\tReplicas: 102,103,101\tIsr: 102,101\tElr: \tLastKnownElr: \n";
        let p = parse_topic_describe(text).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            p[0],
            PartitionInfo {
                topic: "t1".into(),
                partition: 0,
                leader: 102,
                replicas: vec![102, 103, 101],
                isr: vec![102, 101]
            }
        );
        assert_eq!(p[1].leader, -1);
        assert!(parse_topic_describe("Error while executing topic command").is_err());
    }
}
