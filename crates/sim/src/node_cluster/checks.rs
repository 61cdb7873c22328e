//! The controller's invariants: every committed image is well formed and the same on every
//! node at the same offset; what clients were told survives failovers.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use kraftwerk_controller::Controller;
use kraftwerk_node::Node;
use kraftwerk_raft::testing::{MemLog, MemQuorumStateStore};

use crate::invariants::{Invariants, Violation};
use crate::workload::Acknowledged;

/// Digest of the committed image first seen at each replayed offset, and the node it was on.
#[derive(Debug, Default)]
pub struct ImageDigests(BTreeMap<i64, (i32, u64)>);

/// Replicas agree: the committed image of node `id` is well formed and the same as every other
/// node's at the same offset.
pub fn check_image(
    id: i32,
    node: &Node<MemLog, MemQuorumStateStore>,
    digests: &mut ImageDigests,
    invariants: &mut Invariants,
) {
    let offset = node.replayed_end_offset();
    let image = node.controller().image();
    if let Err(e) = image.topics.check_indexes() {
        return invariants.violation(format!(
            "node {id}: broker indexes broken at offset {offset}: {e}"
        ));
    }
    for topic in image.topics.iter() {
        for (pid, p) in topic.partitions.iter() {
            if let Err(e) = p.check_invariants() {
                return invariants.violation(format!(
                    "node {id}: partition {}-{pid} at offset {offset}: {e}",
                    topic.name
                ));
            }
        }
    }
    let mut hasher = DefaultHasher::new();
    for r in image.write_records() {
        r.encode().expect("image records encode").hash(&mut hasher);
    }
    let digest = hasher.finish();
    match digests.0.get(&offset) {
        Some(&(other, d)) if d != digest => {
            invariants.violation(format!(
                "images differ at offset {offset}: node {other} and node {id}"
            ));
        }
        Some(_) => {}
        None => {
            digests.0.insert(offset, (id, digest));
        }
    }
}

/// Acknowledged writes survive: every acknowledged topic (not maybe deleted since) is in the
/// active controller's image with its acknowledged id, and no acknowledged deletion was undone.
pub fn check_acknowledged<'a>(
    mut controllers: impl Iterator<Item = &'a Controller>,
    acked: &Acknowledged,
    maybe_deleted: &BTreeSet<String>,
) -> Result<(), Violation> {
    let leader = controllers
        .find(|c| c.is_active())
        .ok_or_else(|| Violation("no active controller at the end".into()))?;
    let image = leader.image();
    for (name, id) in &acked.topics {
        if maybe_deleted.contains(name) {
            continue;
        }
        match image.topics.id_of(name) {
            Some(found) if found == *id => {}
            other => {
                return Err(Violation(format!(
                "acknowledged topic {name} ({id}) is not in the leader's image (found {other:?})"
            )))
            }
        }
    }
    for id in &acked.deleted {
        if image.topics.get(id).is_some() {
            return Err(Violation(format!(
                "acknowledged deletion of topic {id} was lost"
            )));
        }
    }
    Ok(())
}
