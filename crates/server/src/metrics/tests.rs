//! Unit tests of the pieces the exposition tests (crates/server/tests/) do not reach.

use kraftwerk_raft::RoleKind;

use super::families::Untyped;
use super::kafka::current_state;

#[test]
fn current_state_uses_kafkas_strings() {
    // KafkaRaftMetrics (Kafka 4.x) `current-state` for each role.
    for (role, voted, voter, expected) in [
        (RoleKind::Leader, true, true, "leader"),
        (RoleKind::Prospective, false, true, "prospective"),
        (RoleKind::Prospective, true, true, "prospective-voted"),
        (RoleKind::Candidate, true, true, "candidate"),
        (RoleKind::Unattached, true, true, "unattached-voted"),
        (RoleKind::Unattached, false, true, "unattached"),
        (RoleKind::Unattached, false, false, "unattached"),
        (RoleKind::Follower, false, true, "follower"),
        (RoleKind::Follower, true, true, "follower"),
        (RoleKind::Follower, false, false, "observer"),
        (RoleKind::Resigned, true, true, "unattached"),
    ] {
        assert_eq!(current_state(role, voted, voter), expected, "{role:?}");
    }
}

#[test]
fn untyped_families_are_escaped_as_the_text_format_requires() {
    let family = Untyped {
        name: "x_state",
        help: "a \\ b\nc".to_owned(),
        samples: vec![(vec![("s", "a\"b\\c\nd".to_owned())], 1.0), (vec![], 0.5)],
    };
    let mut out = String::new();
    family.encode(&mut out);
    assert_eq!(
        out,
        "# HELP x_state a \\\\ b\\nc\n# TYPE x_state untyped\nx_state{s=\"a\\\"b\\\\c\\nd\"} 1\nx_state 0.5\n"
    );
}
