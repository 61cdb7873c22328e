//! The roles a node can be in, and what each one remembers.
//!
//! Legal transitions (Kafka `QuorumState`; the epoch lives in the core, not in the role):
//!
//! | from        | to                    | trigger                                                   |
//! |-------------|-----------------------|-----------------------------------------------------------|
//! | Unattached  | Unattached            | higher epoch seen, or a vote granted in this epoch        |
//! | Unattached  | Prospective           | election timeout (voters only)                            |
//! | Unattached  | Follower              | leader of an epoch ≥ ours learned                         |
//! | Prospective | Candidate             | a majority granted the pre-vote, or a voter cannot pre-vote |
//! | Prospective | Follower / Unattached | pre-vote lost or timed out (back to the known leader), or a leader learned |
//! | Candidate   | Leader                | a majority granted (own vote counts)                      |
//! | Candidate   | Prospective           | election timeout (after a rejection: the remaining timeout) |
//! | Candidate   | Unattached / Follower | higher epoch, or the leader of our epoch learned          |
//! | Leader      | Resigned              | graceful shutdown, resign request, check-quorum expiry    |
//! | Leader      | Unattached / Follower | higher epoch                                              |
//! | Follower    | Prospective           | fetch timeout, or the leader unreachable (voters only)    |
//! | Follower    | Follower / Unattached | higher epoch                                              |
//! | Resigned    | Prospective           | election timeout (voters only)                            |
//! | Resigned    | Unattached / Follower | higher epoch                                              |
//!
//! Every transition except to Resigned and Prospective is persisted to `quorum-state` before it
//! takes effect. Prospective (KIP-996 pre-vote) asks the voters whether they would vote without
//! bumping the epoch, so a node that cannot reach the leader does not disrupt a healthy quorum.

use std::collections::BTreeSet;

use crate::leader::LeaderState;

/// The kind of role, for status reporting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoleKind {
    /// Epoch known, leader unknown.
    Unattached,
    /// Asking for pre-votes before running an election (KIP-996).
    Prospective,
    /// Running an election in the current epoch.
    Candidate,
    /// Leader of the current epoch (the active controller).
    Leader,
    /// Replicating from the known leader of the current epoch.
    Follower,
    /// Former leader of the current epoch that has given up leadership.
    Resigned,
}

impl std::fmt::Display for RoleKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match self {
            RoleKind::Unattached => "Unattached",
            RoleKind::Prospective => "Prospective",
            RoleKind::Candidate => "Candidate",
            RoleKind::Leader => "Leader",
            RoleKind::Follower => "Follower",
            RoleKind::Resigned => "Resigned",
        };
        f.write_str(s)
    }
}

#[derive(Debug)]
pub(crate) struct Unattached {
    /// Candidate voted for in this epoch.
    pub voted: Option<i32>,
    /// Leader id known from `quorum-state` whose endpoint we cannot resolve (observers).
    pub leader_hint: Option<i32>,
    /// When to start an election; `None` for observers.
    pub election_deadline_ms: Option<u64>,
}

#[derive(Debug)]
pub(crate) struct Prospective {
    pub granted: BTreeSet<i32>,
    pub rejected: BTreeSet<i32>,
    pub election_deadline_ms: u64,
    /// Leader of this epoch we were following, to go back to if the pre-vote fails.
    pub prior_leader: Option<i32>,
    /// Candidate voted for in this epoch.
    pub voted: Option<i32>,
}

#[derive(Debug)]
pub(crate) struct Candidate {
    /// Number of elections this node ran in a row (≥ 1).
    pub retries: u32,
    pub granted: BTreeSet<i32>,
    pub rejected: BTreeSet<i32>,
    /// When the election is given up (back to Prospective), won or not.
    pub election_deadline_ms: u64,
}

pub(crate) struct Follower {
    pub leader_id: i32,
    /// Voters become candidates, observers look for the leader elsewhere, at this time.
    pub fetch_deadline_ms: u64,
    /// Candidate voted for in this epoch, kept so `quorum-state` keeps recording it.
    pub voted: Option<i32>,
    /// A snapshot being downloaded with FetchSnapshot (the leader answered a Fetch with a
    /// SnapshotId); ordinary Fetches pause meanwhile.
    pub fetching_snapshot: Option<FetchingSnapshot>,
    /// A fetch from the leader succeeded since this node became its follower (a follower that
    /// has reached its leader refuses pre-votes, KIP-996).
    pub has_fetched_from_leader: bool,
    /// Since when every request to the leader failed at the connection (refused, reset): the
    /// leader process is probably gone (fast failure detection, kraftwerk-specific).
    pub leader_unreachable_since_ms: Option<u64>,
    /// When a voter next reports itself to the leader with UpdateRaftVoter instead of a Fetch
    /// (Kafka `FollowerState.updateVoterPeriodTimer`: every 3 × fetch timeout).
    pub update_voter_deadline_ms: u64,
    /// The leader of this epoch accepted our UpdateRaftVoter (or cannot take one): stop
    /// sending it (Kafka `FollowerState.hasUpdatedLeader`).
    pub has_updated_leader: bool,
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("leader_id", &self.leader_id)
            .field("fetch_deadline_ms", &self.fetch_deadline_ms)
            .field("voted", &self.voted)
            .field(
                "fetching_snapshot",
                &self
                    .fetching_snapshot
                    .as_ref()
                    .map(|s| (s.id, s.sink.position())),
            )
            .finish()
    }
}

/// A snapshot download in progress.
pub(crate) struct FetchingSnapshot {
    pub id: crate::storage::OffsetAndEpoch,
    pub sink: Box<dyn crate::storage::SnapshotSink>,
}

#[derive(Debug)]
pub(crate) struct Resigned {
    pub election_deadline_ms: u64,
    /// Voters that have not acknowledged our EndQuorumEpoch yet.
    pub unacked: BTreeSet<i32>,
    /// Other voters by descending fetch offset: the preferred successors.
    pub preferred_successors: Vec<i32>,
}

#[derive(Debug)]
pub(crate) enum Role {
    Unattached(Unattached),
    Prospective(Prospective),
    Candidate(Candidate),
    Leader(Box<LeaderState>),
    Follower(Follower),
    Resigned(Resigned),
}

impl Role {
    pub fn kind(&self) -> RoleKind {
        match self {
            Role::Unattached(_) => RoleKind::Unattached,
            Role::Prospective(_) => RoleKind::Prospective,
            Role::Candidate(_) => RoleKind::Candidate,
            Role::Leader(_) => RoleKind::Leader,
            Role::Follower(_) => RoleKind::Follower,
            Role::Resigned(_) => RoleKind::Resigned,
        }
    }
}
