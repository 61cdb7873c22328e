//! Bootstrap on the first activation over an empty log, exactly once (case C18).

use kraftwerk_records::metadata::{ApiMessageAndVersion, MetadataRecord, NoOpRecord};
use kraftwerk_records::metadata_version::MetadataVersion;

use crate::controller::Controller;
use crate::testing::{bootstrap_records, config, TestNode};

fn count_feature_records(log: &[(i64, ApiMessageAndVersion)]) -> usize {
    log.iter()
        .filter(|(_, r)| matches!(r.record, MetadataRecord::FeatureLevel(_)))
        .count()
}

#[test]
fn first_activation_writes_bootstrap_in_one_atomic_result_then_nothing() {
    let mut node = TestNode::new(config(MetadataVersion::V4_1_IV1));
    node.controller.activate(1, node.now_ms);
    let first = node
        .controller
        .poll(node.now_ms, 0)
        .expect("bootstrap is due");
    assert!(first.atomic);
    let mut expected = bootstrap_records(MetadataVersion::V4_1_IV1);
    // ELR is enabled at 4.1-IV1 by default: Kafka adds the cluster-wide min.insync.replicas.
    assert!(
        matches!(&first.records.last().unwrap().record, MetadataRecord::Config(c) if c.name == "min.insync.replicas" && c.resource_name.is_empty() && c.value.as_deref() == Some("1"))
    );
    expected.push(first.records.last().unwrap().clone());
    assert_eq!(first.records, expected);
    node.append(&first);
    // Not again, even before commit, and no NoOp before its interval.
    assert!(node
        .controller
        .poll(node.now_ms, node.next_offset())
        .is_none());
    node.commit();
    assert_eq!(
        node.controller.image().metadata_version(),
        MetadataVersion::V4_1_IV1
    );
    assert!(node.controller.image().features.is_elr_enabled());
    // Re-activation over a non-empty log writes no bootstrap.
    node.controller.deactivate();
    node.controller.activate(2, node.now_ms);
    assert!(node
        .controller
        .poll(node.now_ms, node.next_offset())
        .is_none());
}

#[test]
fn bootstrap_without_elr_has_no_min_isr_config() {
    let node = TestNode::active(MetadataVersion::V3_9_IV0);
    assert!(node
        .log
        .iter()
        .all(|(_, r)| !matches!(r.record, MetadataRecord::Config(_))));
    assert_eq!(
        count_feature_records(&node.log),
        bootstrap_records(MetadataVersion::V3_9_IV0).len()
    );
}

#[test]
fn leader_dying_before_commit_bootstraps_exactly_once() {
    // Leader A appends the bootstrap batch, which reaches B's log, then dies before commit.
    let mut a = TestNode::new(config(MetadataVersion::V4_1_IV1));
    a.controller.activate(1, a.now_ms);
    let bootstrap = a.controller.poll(a.now_ms, 0).unwrap();
    let appended = a.append(&bootstrap);

    // B replicated it: when B activates, raft has committed everything before B's epoch start.
    let mut b = Controller::new(config(MetadataVersion::V4_1_IV1));
    b.replay_committed(&appended).unwrap();
    b.activate(2, 5_000);
    let next = b.poll(5_000, appended.len() as i64 + 1);
    assert!(
        next.as_ref().is_none_or(|r| r
            .records
            .iter()
            .all(|r| !matches!(r.record, MetadataRecord::FeatureLevel(_)))),
        "B must not bootstrap again: {next:?}"
    );

    // C did not get it: its log has no metadata record, so it bootstraps once.
    let mut c = Controller::new(config(MetadataVersion::V4_1_IV1));
    c.activate(2, 5_000);
    let result = c.poll(5_000, 0).unwrap();
    assert_eq!(result.records, bootstrap.records);
}

#[test]
fn a_log_with_records_but_no_metadata_version_is_not_bootstrapped() {
    let mut c = Controller::new(config(MetadataVersion::V4_1_IV1));
    c.replay_committed(&[(0, ApiMessageAndVersion::new(NoOpRecord::default(), 0))])
        .unwrap();
    c.activate(1, 0);
    assert!(c.image().features.metadata_version().is_none());
    // No bootstrap; the only internal write is the NoOp once its interval passes.
    assert!(c.poll(0, 1).is_none());
    let noop = c.poll(500, 1).unwrap();
    assert!(matches!(
        noop.records[..],
        [ApiMessageAndVersion {
            record: MetadataRecord::NoOp(_),
            ..
        }]
    ));
}

#[test]
fn noop_every_interval_and_not_when_disabled() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let start = node.now_ms;
    assert_eq!(node.controller.next_deadline_ms(), Some(start + 500));
    node.now_ms = start + 499;
    assert!(node.poll_until_idle().is_empty());
    node.now_ms = start + 500;
    let written = node.poll_until_idle();
    assert_eq!(written.len(), 1);
    assert!(matches!(written[0].record, MetadataRecord::NoOp(_)));
    assert_eq!(node.controller.next_deadline_ms(), Some(start + 1000));

    let mut cfg = config(MetadataVersion::V4_1_IV1);
    cfg.noop_interval_ms = 0;
    let mut quiet = TestNode::new(cfg);
    quiet.now_ms = start;
    quiet.become_leader();
    quiet.now_ms += 100_000;
    assert!(quiet.poll_until_idle().is_empty());
    // Only the periodic election checks remain, five minutes after activation.
    assert_eq!(quiet.controller.next_deadline_ms(), Some(start + 300_000));
    quiet.now_ms = start + 300_000;
    assert!(quiet.poll_until_idle().is_empty(), "nothing to elect");
    assert_eq!(quiet.controller.next_deadline_ms(), Some(start + 600_000));
}

#[test]
fn open_transaction_is_aborted_on_activation() {
    use kraftwerk_records::metadata::{BeginTransactionRecord, FeatureLevelRecord};
    let mut c = Controller::new(config(MetadataVersion::V4_1_IV1));
    let mut records: Vec<(i64, ApiMessageAndVersion)> =
        bootstrap_records(MetadataVersion::V4_1_IV1)
            .into_iter()
            .enumerate()
            .map(|(i, r)| (i as i64, r))
            .collect();
    let n = records.len() as i64;
    records.push((
        n,
        ApiMessageAndVersion::new(
            BeginTransactionRecord {
                name: Some("x".into()),
                ..Default::default()
            },
            0,
        ),
    ));
    records.push((
        n + 1,
        ApiMessageAndVersion::new(
            FeatureLevelRecord {
                name: "group.version".into(),
                feature_level: 0,
                ..Default::default()
            },
            0,
        ),
    ));
    c.replay_committed(&records).unwrap();
    assert_eq!(c.image().features.level("group.version"), 0);
    c.activate(1, 0);
    let abort = c.poll(0, n + 2).unwrap();
    assert!(matches!(
        abort.records[..],
        [ApiMessageAndVersion {
            record: MetadataRecord::AbortTransaction(_),
            ..
        }]
    ));
    c.replay_uncommitted(&[(n + 2, abort.records[0].clone())])
        .unwrap();
    assert_eq!(
        c.latest().features.level("group.version"),
        1,
        "the abort reverts the transaction"
    );
    assert!(c.latest().transaction.is_none());
}
