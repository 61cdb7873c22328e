//! The API versions each simulated party speaks.
//!
//! A voter serves [`served_api_table`], the table the real listener advertises, unless the seed
//! makes it an older Kafka release: then its Raft RPCs stop at that release's versions (what a
//! mixed-version quorum negotiates), and it elects as Java did then: no pre-vote without Vote v2
//! (KIP-996), and no kraftwerk fast failure detection. Brokers and the admin client speak the
//! controller APIs up to their own maxima.

use kafka_protocol::messages::ApiKey;
use kraftwerk_controller::CONTROLLER_APIS;
use kraftwerk_node::served_apis::served_api_table;
use kraftwerk_protocol::api_table::ApiTable;
use kraftwerk_raft::RaftConfig;
use rand::rngs::SmallRng;
use rand::Rng;

/// A release whose Raft RPC versions a simulated voter may speak.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// Its name, for options and traces.
    pub name: &'static str,
    /// Highest Fetch version.
    fetch_max: i16,
    /// Highest Vote version (v2 is pre-vote).
    vote_max: i16,
    /// Speaks the KIP-853 versions (v1) of BeginQuorumEpoch, EndQuorumEpoch and FetchSnapshot,
    /// and DescribeQuorum v2.
    kip_853: bool,
}

/// kraftwerk itself: everything [`served_api_table`] lists.
pub const CURRENT: Release = release("current", 18, 2, true);

/// Older releases, newest first, as their message specs have it: Fetch v18 is KIP-1166; Vote v2
/// (pre-vote) arrived in 4.0; Vote v1, Fetch v17 and the other KIP-853 versions in 3.9; Fetch
/// v16 in 3.7, v15 in 3.5, v13 in 3.1.
pub const OLDER: &[Release] = &[
    release("kafka-4.0", 17, 2, true),
    release("kafka-3.9", 17, 1, true),
    release("kafka-3.7", 16, 0, false),
    release("kafka-3.5", 15, 0, false),
    release("kafka-3.3", 13, 0, false),
];

const fn release(name: &'static str, fetch_max: i16, vote_max: i16, kip_853: bool) -> Release {
    Release {
        name,
        fetch_max,
        vote_max,
        kip_853,
    }
}

impl std::fmt::Debug for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Release {
    /// True if it speaks the KIP-853 versions (Kafka 3.9+): a dynamic quorum needs them, since
    /// older versions carry no directory ids and such a voter only ever observes.
    pub fn speaks_kip_853(&self) -> bool {
        self.kip_853
    }

    /// The voter's release for a seed: mostly current, sometimes an older one.
    pub fn draw(rng: &mut SmallRng) -> Self {
        if rng.gen_bool(0.7) {
            CURRENT
        } else {
            OLDER[rng.gen_range(0..OLDER.len())]
        }
    }

    /// What a voter of this release serves (and can send).
    pub fn table(&self) -> ApiTable {
        let mut caps = vec![
            (ApiKey::Fetch, self.fetch_max),
            (ApiKey::Vote, self.vote_max),
        ];
        if !self.kip_853 {
            caps.extend([
                (ApiKey::BeginQuorumEpoch, 0),
                (ApiKey::EndQuorumEpoch, 0),
                (ApiKey::FetchSnapshot, 0),
                (ApiKey::DescribeQuorum, 1),
            ]);
        }
        capped(&served_api_table(), &caps)
    }

    /// Makes `raft` elect as this release does.
    pub fn configure(&self, raft: &mut RaftConfig) {
        if *self != CURRENT {
            raft.pre_vote = self.vote_max >= 2;
            raft.fast_failure_detection_ms = None;
        }
    }
}

/// What a simulated broker sends: the controller APIs, BrokerRegistration up to `registration_max`
/// (v2 is the first with log directories, which a directory-aware metadata.version requires).
pub fn broker_table(registration_max: i16) -> ApiTable {
    capped(
        &controller_table(),
        &[(ApiKey::BrokerRegistration, registration_max)],
    )
}

/// What the simulated admin client sends: the controller APIs, DeleteTopics up to
/// `delete_topics_max` (v6 names topics in structs that may carry ids). CreateTopics stays at
/// v7: the acknowledged-writes check needs the topic id only v7 returns.
pub fn admin_table(delete_topics_max: i16) -> ApiTable {
    capped(
        &controller_table(),
        &[(ApiKey::DeleteTopics, delete_topics_max)],
    )
}

fn controller_table() -> ApiTable {
    ApiTable::new(CONTROLLER_APIS.iter().copied()).expect("the controller API table is valid")
}

/// `table` with the maximum of each api in `caps` lowered (never raised) to the given version.
fn capped(table: &ApiTable, caps: &[(ApiKey, i16)]) -> ApiTable {
    let ranges = table.ranges().iter().map(|r| {
        let cap = caps.iter().find(|(api, _)| *api == r.api_key);
        let max = cap.map_or(r.max_version, |&(_, v)| v.min(r.max_version));
        (r.api_key, r.min_version, max.max(r.min_version))
    });
    ApiTable::new(ranges).expect("a capped table stays valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_releases_lower_only_their_caps() {
        let current = CURRENT.table();
        assert_eq!(current, served_api_table());
        let old = OLDER[2].table();
        let max = |t: &ApiTable, api| t.range(api).map(|r| r.max_version);
        assert_eq!(max(&current, ApiKey::Vote), Some(2));
        assert_eq!(max(&old, ApiKey::Vote), Some(0));
        assert_eq!(max(&old, ApiKey::Fetch), Some(16));
        assert_eq!(
            max(&old, ApiKey::UpdateRaftVoter),
            max(&current, ApiKey::UpdateRaftVoter)
        );
        assert_eq!(
            old.range(ApiKey::CreateTopics),
            current.range(ApiKey::CreateTopics)
        );
    }

    #[test]
    fn only_releases_with_vote_v2_pre_vote() {
        for (release, pre_vote) in OLDER.iter().map(|r| (*r, r.name == "kafka-4.0")) {
            let mut raft = RaftConfig::new(1, "c", uuid::Uuid::nil(), Default::default(), "C");
            release.configure(&mut raft);
            assert_eq!(raft.pre_vote, pre_vote, "{}", release.name);
            assert_eq!(raft.fast_failure_detection_ms, None);
        }
    }
}
