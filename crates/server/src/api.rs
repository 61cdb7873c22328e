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

    fn default_request(api: ApiKey) -> RequestKind {
        use kafka_protocol::messages::*;
        match api {
            ApiKey::Fetch => RequestKind::Fetch(FetchRequest::default()),
            ApiKey::CreateTopics => RequestKind::CreateTopics(CreateTopicsRequest::default()),
            ApiKey::DeleteTopics => RequestKind::DeleteTopics(DeleteTopicsRequest::default()),
            ApiKey::Vote => RequestKind::Vote(VoteRequest::default()),
            ApiKey::BeginQuorumEpoch => {
                RequestKind::BeginQuorumEpoch(BeginQuorumEpochRequest::default())
            }
            ApiKey::EndQuorumEpoch => RequestKind::EndQuorumEpoch(EndQuorumEpochRequest::default()),
            ApiKey::DescribeQuorum => RequestKind::DescribeQuorum(DescribeQuorumRequest::default()),
            ApiKey::AlterPartition => RequestKind::AlterPartition(AlterPartitionRequest::default()),
            ApiKey::FetchSnapshot => RequestKind::FetchSnapshot(FetchSnapshotRequest::default()),
            ApiKey::DescribeCluster => {
                RequestKind::DescribeCluster(DescribeClusterRequest::default())
            }
            ApiKey::BrokerRegistration => {
                RequestKind::BrokerRegistration(BrokerRegistrationRequest::default())
            }
            ApiKey::BrokerHeartbeat => {
                RequestKind::BrokerHeartbeat(BrokerHeartbeatRequest::default())
            }
            ApiKey::UnregisterBroker => {
                RequestKind::UnregisterBroker(UnregisterBrokerRequest::default())
            }
            ApiKey::AllocateProducerIds => {
                RequestKind::AllocateProducerIds(AllocateProducerIdsRequest::default())
            }
            ApiKey::ControllerRegistration => {
                RequestKind::ControllerRegistration(ControllerRegistrationRequest::default())
            }
            ApiKey::AssignReplicasToDirs => {
                RequestKind::AssignReplicasToDirs(AssignReplicasToDirsRequest::default())
            }
            ApiKey::CreatePartitions => {
                RequestKind::CreatePartitions(CreatePartitionsRequest::default())
            }
            ApiKey::ElectLeaders => RequestKind::ElectLeaders(ElectLeadersRequest::default()),
            ApiKey::IncrementalAlterConfigs => {
                RequestKind::IncrementalAlterConfigs(IncrementalAlterConfigsRequest::default())
            }
            ApiKey::UpdateFeatures => RequestKind::UpdateFeatures(UpdateFeaturesRequest::default()),
            ApiKey::UpdateRaftVoter => {
                RequestKind::UpdateRaftVoter(UpdateRaftVoterRequest::default())
            }
            ApiKey::DescribeAcls => RequestKind::DescribeAcls(DescribeAclsRequest::default()),
            ApiKey::CreateAcls => RequestKind::CreateAcls(CreateAclsRequest::default()),
            ApiKey::DeleteAcls => RequestKind::DeleteAcls(DeleteAclsRequest::default()),
            ApiKey::DescribeConfigs => {
                RequestKind::DescribeConfigs(DescribeConfigsRequest::default())
            }
            ApiKey::AlterConfigs => RequestKind::AlterConfigs(AlterConfigsRequest::default()),
            ApiKey::CreateDelegationToken => {
                RequestKind::CreateDelegationToken(CreateDelegationTokenRequest::default())
            }
            ApiKey::RenewDelegationToken => {
                RequestKind::RenewDelegationToken(RenewDelegationTokenRequest::default())
            }
            ApiKey::ExpireDelegationToken => {
                RequestKind::ExpireDelegationToken(ExpireDelegationTokenRequest::default())
            }
            ApiKey::AlterPartitionReassignments => RequestKind::AlterPartitionReassignments(
                AlterPartitionReassignmentsRequest::default(),
            ),
            ApiKey::ListPartitionReassignments => {
                RequestKind::ListPartitionReassignments(ListPartitionReassignmentsRequest::default())
            }
            ApiKey::AlterClientQuotas => {
                RequestKind::AlterClientQuotas(AlterClientQuotasRequest::default())
            }
            ApiKey::AlterUserScramCredentials => {
                RequestKind::AlterUserScramCredentials(AlterUserScramCredentialsRequest::default())
            }
            ApiKey::AddRaftVoter => RequestKind::AddRaftVoter(AddRaftVoterRequest::default()),
            ApiKey::RemoveRaftVoter => {
                RequestKind::RemoveRaftVoter(RemoveRaftVoterRequest::default())
            }
            other => panic!("{other:?} is advertised: add it here and give it a route"),
        }
    }

    #[test]
    fn every_served_api_except_apiversions_and_envelope_has_a_route() {
        for (api, _, _) in served_apis() {
            if matches!(api, ApiKey::ApiVersions | ApiKey::Envelope) {
                continue;
            }
            assert!(
                route(default_request(api)).is_some(),
                "{api:?} is advertised but has no handler"
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
            (ApiKey::AddRaftVoter, 0, 0),
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
