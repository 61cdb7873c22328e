//! At most one leader per epoch, from three independent sources that must also agree with
//! each other: the LeaderChange control records in every controller's log (a leader writes one
//! when its epoch starts), the DescribeQuorum answers the observer saw, and the controllers'
//! own log lines when they took over (kraftwerk: `activating the controller ... epoch=E`;
//! Java: `Completed transition to Leader(... epoch=E`).

use anyhow::{bail, Result};
use std::collections::{BTreeMap, BTreeSet};

use super::observe::Claim;
use crate::cluster::{Cluster, Role};
use crate::env::ControllerKind;

/// The line a controller logs when it becomes leader, per implementation.
fn takeover_marker(kind: ControllerKind) -> &'static str {
    match kind {
        ControllerKind::Kraftwerk => "activating the controller",
        ControllerKind::Java => "Completed transition to Leader(",
    }
}

/// The epoch of a takeover line: the first `epoch=<n>` after the marker.
pub fn takeover_epoch(line: &str, marker: &str) -> Option<i32> {
    let rest = &line[line.find(marker)? + marker.len()..];
    let at = rest.find("epoch=")? + "epoch=".len();
    let digits: String = rest[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// `(epoch, controller id)` of every takeover line in the controllers' logs.
pub fn takeovers(c: &Cluster) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    for n in &c.controllers {
        let Role::Controller(kind) = n.role else {
            continue;
        };
        let marker = takeover_marker(kind);
        for l in n.log_lines(marker) {
            if let Some(e) = takeover_epoch(&l, marker) {
                out.push((e, n.id));
            }
        }
    }
    out
}

/// What the sources say, per epoch.
#[derive(Debug, Default, serde::Serialize)]
pub struct EpochSummary {
    /// Epochs with a known leader.
    pub epochs: usize,
    /// Highest epoch seen.
    pub max_epoch: i32,
    /// Epochs named by LeaderChange records.
    pub from_log: usize,
    /// Epochs seen answering DescribeQuorum.
    pub from_describe_quorum: usize,
    /// Epochs seen in takeover log lines.
    pub from_log_lines: usize,
}

/// Merges `epoch → leader` maps from the three sources; errors if an epoch has two leaders
/// (within or across sources).
pub fn one_leader_per_epoch(
    from_log: &BTreeMap<i32, i32>,
    claims: &[Claim],
    takeovers: &[(i32, i32)],
) -> Result<EpochSummary> {
    let mut all: BTreeMap<i32, BTreeSet<(i32, &'static str)>> = BTreeMap::new();
    for (e, l) in from_log {
        all.entry(*e)
            .or_default()
            .insert((*l, "LeaderChange record"));
    }
    let from_dq = super::observe::leaders_per_epoch(claims)?;
    for (e, l) in &from_dq {
        all.entry(*e).or_default().insert((*l, "DescribeQuorum"));
    }
    let lines: BTreeSet<i32> = takeovers.iter().map(|(e, _)| *e).collect();
    for (e, l) in takeovers {
        all.entry(*e).or_default().insert((*l, "takeover log line"));
    }
    for (e, who) in &all {
        let leaders: BTreeSet<i32> = who.iter().map(|(l, _)| *l).collect();
        if leaders.len() > 1 {
            bail!("epoch {e} has more than one leader: {who:?}");
        }
    }
    Ok(EpochSummary {
        epochs: all.len(),
        max_epoch: all.keys().next_back().copied().unwrap_or(0),
        from_log: from_log.len(),
        from_describe_quorum: from_dq.len(),
        from_log_lines: lines.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn takeover_lines_parse() {
        let k = "2026-05-01T10:00:00Z  INFO kraftwerk_node::node: activating the controller epoch=7 epoch_start_offset=120 replayed=121";
        assert_eq!(takeover_epoch(k, "activating the controller"), Some(7));
        let j = "[2026-05-01 10:00:00,000] INFO [RaftManager id=2] Completed transition to Leader(localReplicaKey=ReplicaKey(id=2, directoryId=<undefined>), epoch=12, epochStartOffset=300) from CandidateState(localId=2, epoch=12) (org.apache.kafka.raft.QuorumState)";
        assert_eq!(
            takeover_epoch(j, "Completed transition to Leader("),
            Some(12)
        );
        assert_eq!(takeover_epoch("nothing", "activating the controller"), None);
    }

    #[test]
    fn sources_must_agree() {
        let log = BTreeMap::from([(3, 1), (4, 2)]);
        let claim = |node, epoch| Claim {
            at: Instant::now(),
            node,
            leader: node,
            epoch,
        };
        let s = one_leader_per_epoch(&log, &[claim(2, 4)], &[(3, 1), (5, 3)]).unwrap();
        assert_eq!((s.epochs, s.max_epoch), (3, 5));
        assert!(one_leader_per_epoch(&log, &[claim(3, 4)], &[]).is_err());
        assert!(one_leader_per_epoch(&log, &[], &[(3, 2)]).is_err());
    }
}
