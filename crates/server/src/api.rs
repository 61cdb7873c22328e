//! The APIs this controller serves (the table itself lives in [`kraftwerk_node::served_apis`],
//! shared with the simulation) and the routing of a decoded request to the Raft core or the
//! controller.

use kafka_protocol::messages::RequestKind;
use kraftwerk_controller::ControllerRequest;
use kraftwerk_raft::RaftRequest;

pub use kraftwerk_node::served_apis::{served_api_table, served_apis, LISTENER_APIS};

/// A request routed to the node.
pub enum Routed {
    /// A Raft RPC.
    Raft(RaftRequest),
    /// A controller RPC.
    Controller(ControllerRequest),
}

/// Routes a decoded request; `None` for APIs this node does not serve.
pub fn route(request: RequestKind) -> Option<Routed> {
    let request = match RaftRequest::from_kind(request) {
        Ok(raft) => return Some(Routed::Raft(raft)),
        Err(other) => other,
    };
    ControllerRequest::from_kind(request)
        .ok()
        .map(Routed::Controller)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::ApiKey;
    use kraftwerk_controller::CONTROLLER_APIS;

    /// A request body of `api` (random field values: routing must not depend on them).
    fn some_request(api: ApiKey) -> RequestKind {
        let mut g = kraftwerk_protocol::adapt::fill::Gen::new(7);
        kraftwerk_protocol::adapt::fill::random_request(api, &mut g)
            .unwrap_or_else(|| panic!("{api:?} is served but kafka-protocol has no body for it"))
    }

    #[test]
    fn every_served_api_except_the_listeners_own_has_a_route() {
        for (api, _, _) in served_apis() {
            if LISTENER_APIS.iter().any(|&(own, _, _)| own == api) {
                continue;
            }
            assert!(
                route(some_request(api)).is_some(),
                "{api:?} is advertised but has no handler"
            );
        }
    }

    /// A broker sees NOT_CONTROLLER, and the Envelope rewrite finds it, only where
    /// `error_counts` looks (Java's `errorCounts()`): every controller API must be covered.
    #[test]
    fn every_controller_response_has_its_error_counts() {
        let mut g = kraftwerk_protocol::adapt::fill::Gen::new(11);
        for &(api, _, _) in CONTROLLER_APIS {
            let response = kraftwerk_protocol::adapt::fill::random_response(api, &mut g).unwrap();
            assert!(
                kraftwerk_protocol::error_counts::counted_error_codes(&response).is_some(),
                "{api:?}: add its errorCounts() to kraftwerk_protocol::error_counts"
            );
        }
    }

    /// Every api a broker may forward in an Envelope is served: a broker that has not learnt our
    /// ApiVersions yet forwards any of them, and an unserved one would reach the client as an
    /// error Java's controllers never give.
    #[test]
    fn every_forwardable_api_is_served() {
        for api in kraftwerk_protocol::envelope::FORWARDABLE_APIS {
            assert!(
                served_api_table().range(api).is_some(),
                "forwardable {api:?} is not served"
            );
        }
    }

    /// The versions match what a Kafka 4.1.2 controller advertises for the admin apis
    /// (`validVersions` of the 4.1.2 message specs listing the controller listener).
    #[test]
    fn admin_api_versions_match_kafka_4_1() {
        let table = served_api_table();
        let range = |api| table.range(api).map(|r| (r.min_version, r.max_version));
        for (api, min, max) in [
            (ApiKey::DescribeAcls, 1, 3),
            (ApiKey::CreateAcls, 1, 3),
            (ApiKey::DeleteAcls, 1, 3),
            (ApiKey::DescribeConfigs, 1, 4),
            (ApiKey::AlterConfigs, 0, 2),
            (ApiKey::CreateDelegationToken, 1, 3),
            (ApiKey::RenewDelegationToken, 1, 2),
            (ApiKey::ExpireDelegationToken, 1, 2),
            (ApiKey::AlterPartitionReassignments, 0, 1),
            (ApiKey::ListPartitionReassignments, 0, 0),
            (ApiKey::AlterClientQuotas, 0, 1),
            (ApiKey::AlterUserScramCredentials, 0, 0),
            (ApiKey::AddRaftVoter, 0, 1),
            (ApiKey::RemoveRaftVoter, 0, 0),
        ] {
            assert_eq!(range(api), Some((min, max)), "{api:?}");
        }
        // Advertised by Java but without a handler in ControllerApis: not advertised here.
        for api in [
            ApiKey::DescribeUserScramCredentials,
            ApiKey::DescribeDelegationToken,
        ] {
            assert_eq!(range(api), None, "{api:?}");
        }
    }

    #[test]
    fn pre_vote_is_advertised() {
        assert_eq!(
            served_api_table()
                .range(ApiKey::Vote)
                .map(|r| r.max_version),
            Some(2)
        );
    }

    /// compat/ proves byte-identical encoding for the ranges in `compat/rpc-versions.txt`:
    /// every served api and version must be inside them, or a byte difference could slip by.
    #[test]
    fn every_served_version_is_checked_by_compat() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../compat/rpc-versions.txt");
        let text = std::fs::read_to_string(path).unwrap();
        let checked: Vec<(i16, i16, i16)> = text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| {
                let f: Vec<i16> = l
                    .split_whitespace()
                    .skip(1)
                    .map(|x| x.parse().unwrap())
                    .collect();
                (f[0], f[1], f[2])
            })
            .collect();
        for (api, min, max) in served_apis() {
            let key = api as i16;
            assert!(
                checked
                    .iter()
                    .any(|&(k, lo, hi)| k == key && lo <= min && max <= hi),
                "{api:?} v{min}-{max} is served but compat/rpc-versions.txt does not check it"
            );
        }
    }
}
