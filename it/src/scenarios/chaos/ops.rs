//! The metadata operations of the workload, their outcomes, and what the cluster must show at
//! the end. Only an acknowledged operation is owed: an operation whose tool timed out or failed
//! may or may not have been applied (a request the broker forwarded can commit after the
//! client gave up), so its effect is allowed but not required, and it makes the entity's later
//! state uncertain only where it could be the last word.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The topic config the workload alters.
pub const ALTERED_CONFIG: &str = "retention.ms";

/// What was asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum OpKind {
    /// `kafka-topics --create`, 1 partition, RF 3, `min.insync.replicas=2`.
    CreateTopic { topic: String },
    /// `kafka-topics --create --replica-assignment a:b` (RF 2, so it can move).
    CreatePlaced { topic: String, replicas: Vec<i32> },
    /// `kafka-topics --delete`.
    DeleteTopic { topic: String },
    /// `kafka-configs --alter --entity-type topics --add-config retention.ms=<value>`.
    AlterConfig { topic: String, value: u64 },
    /// `kafka-reassign-partitions --execute`: partition 0 onto `replicas`.
    Reassign { topic: String, replicas: Vec<i32> },
    /// `kafka-configs --alter --entity-type users --add-config SCRAM-SHA-256=[...]`.
    AddScram { user: String },
}

impl OpKind {
    /// `create_topic`, ... (report keys).
    pub fn label(&self) -> &'static str {
        match self {
            OpKind::CreateTopic { .. } => "create_topic",
            OpKind::CreatePlaced { .. } => "create_placed_topic",
            OpKind::DeleteTopic { .. } => "delete_topic",
            OpKind::AlterConfig { .. } => "alter_config",
            OpKind::Reassign { .. } => "reassign",
            OpKind::AddScram { .. } => "add_scram",
        }
    }

    fn topic(&self) -> Option<&str> {
        match self {
            OpKind::CreateTopic { topic }
            | OpKind::CreatePlaced { topic, .. }
            | OpKind::DeleteTopic { topic }
            | OpKind::AlterConfig { topic, .. }
            | OpKind::Reassign { topic, .. } => Some(topic),
            OpKind::AddScram { .. } => None,
        }
    }
}

/// How it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The tool reported success.
    Acked,
    /// The harness killed the tool at its deadline: unknown.
    Timeout,
    /// The tool reported an error: unknown (quoted).
    Error(String),
}

/// One operation.
#[derive(Clone, Debug, Serialize)]
pub struct Op {
    /// Order of issue.
    pub seq: usize,
    /// Seconds since the scenario started, when issued.
    pub at_s: f64,
    /// How long the tool ran.
    pub took_ms: u64,
    /// What.
    #[serde(flatten)]
    pub kind: OpKind,
    /// How it ended.
    pub outcome: Outcome,
}

impl Op {
    /// True if acknowledged.
    pub fn acked(&self) -> bool {
        self.outcome == Outcome::Acked
    }
}

/// What the final state must show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    /// Topics that must exist.
    pub present: BTreeSet<String>,
    /// Topics that must not exist.
    pub absent: BTreeSet<String>,
    /// Topic → the values [`ALTERED_CONFIG`] may have.
    pub configs: BTreeMap<String, BTreeSet<String>>,
    /// Topics created with `min.insync.replicas=2` (must still show it).
    pub min_isr: BTreeSet<String>,
    /// Topic → the replica lists its partition 0 may have.
    pub replicas: BTreeMap<String, BTreeSet<Vec<i32>>>,
    /// SCRAM users that must be listed.
    pub users: BTreeSet<String>,
    /// Acknowledged operations whose effect the final state shows (checked).
    pub checked: usize,
    /// Acknowledged operations overridden by a later acknowledged one (a create then delete,
    /// an alter then another).
    pub superseded: usize,
    /// Acknowledged operations a later unknown one may have overridden (not checked).
    pub uncertain: usize,
}

/// The final state `ops` (in issue order) owe.
pub fn expected(ops: &[Op]) -> Expected {
    let mut e = Expected::default();
    let mut by_topic: BTreeMap<&str, Vec<&Op>> = BTreeMap::new();
    for op in ops {
        match (&op.kind, op.kind.topic()) {
            (OpKind::AddScram { user }, _) if op.acked() => {
                e.users.insert(user.clone());
                e.checked += 1;
            }
            (_, Some(t)) => by_topic.entry(t).or_default().push(op),
            _ => {}
        }
    }
    for (topic, ops) in by_topic {
        expect_topic(topic, &ops, &mut e);
    }
    e
}

/// One topic's operations: its existence, its altered config and its placement.
fn expect_topic(topic: &str, ops: &[&Op], e: &mut Expected) {
    let acked = |f: fn(&OpKind) -> bool| ops.iter().filter(move |o| f(&o.kind) && o.acked());
    let is_delete = |k: &OpKind| matches!(k, OpKind::DeleteTopic { .. });
    let is_create =
        |k: &OpKind| matches!(k, OpKind::CreateTopic { .. } | OpKind::CreatePlaced { .. });
    let deleted = acked(is_delete).count() > 0;
    let delete_tried = ops.iter().any(|o| is_delete(&o.kind));
    let created = acked(is_create).count() > 0;
    // Everything acknowledged before a delete is superseded by it; after an unknown delete
    // nothing about the topic is certain.
    let others_acked = ops
        .iter()
        .filter(|o| o.acked() && !is_delete(&o.kind))
        .count();
    if deleted {
        e.absent.insert(topic.to_string());
        e.checked += acked(is_delete).count();
        e.superseded += others_acked;
        return;
    }
    if delete_tried || !created {
        e.uncertain += others_acked;
        return;
    }
    e.present.insert(topic.to_string());
    e.checked += 1;
    if ops
        .iter()
        .any(|o| matches!(o.kind, OpKind::CreateTopic { .. }) && o.acked())
    {
        e.min_isr.insert(topic.to_string());
    }
    expect_last_word(ops, e, config_value, |allowed, e| {
        e.configs.insert(topic.to_string(), allowed);
    });
    expect_placement(topic, ops, e);
}

fn config_value(k: &OpKind) -> Option<String> {
    match k {
        OpKind::AlterConfig { value, .. } => Some(value.to_string()),
        _ => None,
    }
}

/// For an operation kind whose last acknowledged instance is the final word (`value_of`
/// gives its value): allowed = that value plus every unknown one's; counts the acknowledged
/// ones as checked (the last) and superseded (the rest). Nothing to check without an
/// acknowledged one.
fn expect_last_word<T: Ord + Clone>(
    ops: &[&Op],
    e: &mut Expected,
    value_of: fn(&OpKind) -> Option<T>,
    store: impl FnOnce(BTreeSet<T>, &mut Expected),
) {
    let acked: Vec<T> = ops
        .iter()
        .filter(|o| o.acked())
        .filter_map(|o| value_of(&o.kind))
        .collect();
    let Some(last) = acked.last().cloned() else {
        return;
    };
    e.checked += 1;
    e.superseded += acked.len() - 1;
    let mut allowed: BTreeSet<T> = ops
        .iter()
        .filter(|o| !o.acked())
        .filter_map(|o| value_of(&o.kind))
        .collect();
    allowed.insert(last);
    store(allowed, e);
}

/// A placed topic's partition 0: the last acknowledged reassignment's replicas (or the
/// creation's), or any unknown reassignment's.
fn expect_placement(topic: &str, ops: &[&Op], e: &mut Expected) {
    let Some(initial) = ops.iter().find_map(|o| match &o.kind {
        OpKind::CreatePlaced { replicas, .. } if o.acked() => Some(replicas.clone()),
        _ => None,
    }) else {
        return;
    };
    let reassign = |k: &OpKind| match k {
        OpKind::Reassign { replicas, .. } => Some(replicas.clone()),
        _ => None,
    };
    let mut allowed: BTreeSet<Vec<i32>> = BTreeSet::new();
    let before = e.checked;
    expect_last_word(ops, e, reassign, |a, _| allowed = a);
    if e.checked == before {
        // No acknowledged move: the creation's placement, or an unknown move's.
        allowed = ops
            .iter()
            .filter(|o| !o.acked())
            .filter_map(|o| reassign(&o.kind))
            .collect();
        allowed.insert(initial);
    }
    e.replicas.insert(topic.to_string(), allowed);
}

/// What Kafka's tools showed at the end.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    /// `kafka-topics --list`.
    pub topics: BTreeSet<String>,
    /// Topic → partition 0's replicas (`kafka-topics --describe`).
    pub replicas: BTreeMap<String, Vec<i32>>,
    /// Topic → its dynamic configs (`kafka-configs --describe --entity-type topics`).
    pub configs: BTreeMap<String, BTreeMap<String, String>>,
    /// Users with SCRAM credentials (`kafka-configs --describe --entity-type users`).
    pub users: BTreeSet<String>,
}

/// Where `o` does not show what `e` requires (empty: all good).
pub fn mismatches(e: &Expected, o: &Observed) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(
        e.present
            .difference(&o.topics)
            .map(|t| format!("acknowledged topic {t} is missing")),
    );
    out.extend(
        e.absent
            .intersection(&o.topics)
            .map(|t| format!("topic {t} still exists after an acknowledged delete")),
    );
    for (t, allowed) in &e.configs {
        let v = o.configs.get(t).and_then(|c| c.get(ALTERED_CONFIG));
        if !v.is_some_and(|v| allowed.contains(v)) {
            out.push(format!(
                "topic {t}: {ALTERED_CONFIG}={v:?}, acknowledged alters allow {allowed:?}"
            ));
        }
    }
    for t in &e.min_isr {
        let v = o.configs.get(t).and_then(|c| c.get("min.insync.replicas"));
        if v.map(String::as_str) != Some("2") {
            out.push(format!(
                "topic {t}: min.insync.replicas={v:?}, created with 2"
            ));
        }
    }
    for (t, allowed) in &e.replicas {
        let r = o.replicas.get(t);
        if !r.is_some_and(|r| allowed.contains(r)) {
            out.push(format!(
                "topic {t}-0: replicas {r:?}, acknowledged moves allow {allowed:?}"
            ));
        }
    }
    out.extend(
        e.users
            .difference(&o.users)
            .map(|u| format!("SCRAM user {u} is not listed")),
    );
    out
}

/// Counts by operation kind: `label → (issued, acked, timed out, failed)`.
pub fn counts(ops: &[Op]) -> BTreeMap<&'static str, (usize, usize, usize, usize)> {
    let mut m: BTreeMap<&'static str, (usize, usize, usize, usize)> = BTreeMap::new();
    for op in ops {
        let c = m.entry(op.kind.label()).or_default();
        c.0 += 1;
        match op.outcome {
            Outcome::Acked => c.1 += 1,
            Outcome::Timeout => c.2 += 1,
            Outcome::Error(_) => c.3 += 1,
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(seq: usize, kind: OpKind, ok: bool) -> Op {
        Op {
            seq,
            at_s: 0.0,
            took_ms: 0,
            kind,
            outcome: if ok { Outcome::Acked } else { Outcome::Timeout },
        }
    }
    fn create(t: &str) -> OpKind {
        OpKind::CreateTopic { topic: t.into() }
    }
    fn delete(t: &str) -> OpKind {
        OpKind::DeleteTopic { topic: t.into() }
    }
    fn alter(t: &str, value: u64) -> OpKind {
        OpKind::AlterConfig {
            topic: t.into(),
            value,
        }
    }
    fn set<T: Ord + Clone>(v: &[T]) -> BTreeSet<T> {
        v.iter().cloned().collect()
    }

    #[test]
    fn topics_present_absent_and_uncertain() {
        let ops = [
            op(0, create("a"), true),
            op(1, create("b"), true),
            op(2, delete("b"), true),
            op(3, create("c"), true),
            op(4, delete("c"), false),
            op(5, create("d"), false),
        ];
        let e = expected(&ops);
        assert_eq!(e.present, set(&["a".to_string()]));
        assert_eq!(e.absent, set(&["b".to_string()]));
        assert_eq!((e.checked, e.superseded, e.uncertain), (2, 1, 1));
    }

    #[test]
    fn config_allows_last_acked_and_unknown_values() {
        let ops = [
            op(0, create("a"), true),
            op(1, alter("a", 1), true),
            op(2, alter("a", 2), true),
            op(3, alter("a", 3), false),
        ];
        let e = expected(&ops);
        assert_eq!(e.configs["a"], set(&["2".to_string(), "3".to_string()]));
        assert_eq!((e.checked, e.superseded), (2, 1));
        let mut o = Observed::default();
        o.topics.insert("a".into());
        let cfg = |v: &str| {
            BTreeMap::from([
                (ALTERED_CONFIG.to_string(), v.to_string()),
                ("min.insync.replicas".to_string(), "2".to_string()),
            ])
        };
        o.configs.insert("a".into(), cfg("3"));
        assert!(mismatches(&e, &o).is_empty());
        o.configs.insert("a".into(), cfg("1"));
        assert_eq!(mismatches(&e, &o).len(), 1);
    }

    #[test]
    fn placement_follows_acknowledged_moves() {
        let placed = OpKind::CreatePlaced {
            topic: "m".into(),
            replicas: vec![101, 102],
        };
        let mv = |r: Vec<i32>| OpKind::Reassign {
            topic: "m".into(),
            replicas: r,
        };
        let e = expected(&[
            op(0, placed.clone(), true),
            op(1, mv(vec![102, 103]), false),
        ]);
        assert_eq!(e.replicas["m"], set(&[vec![101, 102], vec![102, 103]]));
        let e = expected(&[
            op(0, placed, true),
            op(1, mv(vec![102, 103]), true),
            op(2, mv(vec![103, 101]), true),
        ]);
        assert_eq!(e.replicas["m"], set(&[vec![103, 101]]));
        assert_eq!((e.checked, e.superseded), (2, 1));
    }

    #[test]
    fn missing_user_and_lingering_topic_are_reported() {
        let ops = [
            op(0, create("a"), true),
            op(1, delete("a"), true),
            op(2, OpKind::AddScram { user: "u1".into() }, true),
        ];
        let e = expected(&ops);
        let mut o = Observed::default();
        o.topics.insert("a".into());
        let m = mismatches(&e, &o);
        assert_eq!(m.len(), 2, "{m:?}");
    }
}
