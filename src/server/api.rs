//! The APIs this controller serves and the versions it advertises in ApiVersions, plus the
//! conversions between the wire's `RequestKind`/`ResponseKind` and the node's request types.
//!
//! Only APIs with a handler, and only versions whose semantics are implemented, are listed
//! (broker-controller-contract.md §2): e.g. Vote v2 is advertised because pre-vote (KIP-996) is
//! implemented; Java 4.x peers then pre-vote with us as with each other.

use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use kraftwerk_controller::request::{AdminRequest, AdminResponse};
use kraftwerk_controller::{ControllerRequest, ControllerResponse};
use kraftwerk_raft::{RaftRequest, RaftResponse};

use crate::wire::api_table::ApiTable;

/// `(api, min version, max version)` served on the controller listener.
pub const SERVED_APIS: &[(ApiKey, i16, i16)] = &[
    (ApiKey::Fetch, 4, 18),
    (ApiKey::CreateTopics, 2, 7),
    (ApiKey::DeleteTopics, 1, 6),
    (ApiKey::ApiVersions, 0, 4),
    (ApiKey::Vote, 0, 2),
    (ApiKey::BeginQuorumEpoch, 0, 1),
    (ApiKey::EndQuorumEpoch, 0, 1),
    (ApiKey::DescribeQuorum, 0, 2),
    (ApiKey::AlterPartition, 2, 3),
    (ApiKey::Envelope, 0, 0),
    (ApiKey::FetchSnapshot, 0, 1),
    (ApiKey::DescribeCluster, 0, 1),
    (ApiKey::BrokerRegistration, 0, 4),
    (ApiKey::BrokerHeartbeat, 0, 1),
    (ApiKey::UnregisterBroker, 0, 0),
    (ApiKey::AllocateProducerIds, 0, 0),
    (ApiKey::ControllerRegistration, 0, 0),
    (ApiKey::AssignReplicasToDirs, 0, 0),
    (ApiKey::CreatePartitions, 0, 3),
    (ApiKey::ElectLeaders, 0, 2),
    (ApiKey::IncrementalAlterConfigs, 0, 1),
    (ApiKey::UpdateFeatures, 0, 1),
    (ApiKey::UpdateRaftVoter, 0, 0),
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
];

/// The table advertised by the listener and used by the peer client.
pub fn served_api_table() -> ApiTable {
    ApiTable::new(SERVED_APIS.iter().copied()).expect("the served API table is valid")
}

/// A request routed to the node.
pub enum Routed {
    /// A Raft RPC.
    Raft(RaftRequest),
    /// A controller RPC.
    Controller(ControllerRequest),
}

/// Routes a decoded request; `None` for APIs this node does not serve.
pub fn route(request: RequestKind) -> Option<Routed> {
    Some(match request {
        RequestKind::Vote(r) => Routed::Raft(RaftRequest::Vote(r)),
        RequestKind::BeginQuorumEpoch(r) => Routed::Raft(RaftRequest::BeginQuorumEpoch(r)),
        RequestKind::EndQuorumEpoch(r) => Routed::Raft(RaftRequest::EndQuorumEpoch(r)),
        RequestKind::Fetch(r) => Routed::Raft(RaftRequest::Fetch(r)),
        RequestKind::FetchSnapshot(r) => Routed::Raft(RaftRequest::FetchSnapshot(r)),
        RequestKind::DescribeQuorum(r) => Routed::Raft(RaftRequest::DescribeQuorum(r)),
        RequestKind::UpdateRaftVoter(r) => Routed::Raft(RaftRequest::UpdateRaftVoter(r)),
        RequestKind::BrokerRegistration(r) => {
            Routed::Controller(ControllerRequest::BrokerRegistration(r))
        }
        RequestKind::BrokerHeartbeat(r) => {
            Routed::Controller(ControllerRequest::BrokerHeartbeat(r))
        }
        RequestKind::CreateTopics(r) => Routed::Controller(ControllerRequest::CreateTopics(r)),
        RequestKind::DeleteTopics(r) => Routed::Controller(ControllerRequest::DeleteTopics(r)),
        RequestKind::AllocateProducerIds(r) => {
            Routed::Controller(ControllerRequest::AllocateProducerIds(r))
        }
        RequestKind::AlterPartition(r) => Routed::Controller(ControllerRequest::AlterPartition(r)),
        RequestKind::AssignReplicasToDirs(r) => {
            Routed::Controller(ControllerRequest::AssignReplicasToDirs(r))
        }
        RequestKind::ControllerRegistration(r) => {
            Routed::Controller(ControllerRequest::ControllerRegistration(r))
        }
        RequestKind::DescribeCluster(r) => {
            Routed::Controller(ControllerRequest::DescribeCluster(r))
        }
        RequestKind::UnregisterBroker(r) => {
            Routed::Controller(ControllerRequest::UnregisterBroker(r))
        }
        RequestKind::CreatePartitions(r) => {
            Routed::Controller(ControllerRequest::Admin(AdminRequest::CreatePartitions(r)))
        }
        RequestKind::ElectLeaders(r) => {
            Routed::Controller(ControllerRequest::Admin(AdminRequest::ElectLeaders(r)))
        }
        RequestKind::UpdateFeatures(r) => {
            Routed::Controller(ControllerRequest::Admin(AdminRequest::UpdateFeatures(r)))
        }
        RequestKind::IncrementalAlterConfigs(r) => Routed::Controller(ControllerRequest::Admin(
            AdminRequest::IncrementalAlterConfigs(r),
        )),
        RequestKind::DescribeAcls(r) => {
            Routed::Controller(ControllerRequest::Admin(AdminRequest::DescribeAcls(r)))
        }
        RequestKind::CreateAcls(r) => {
            Routed::Controller(ControllerRequest::Admin(AdminRequest::CreateAcls(r)))
        }
        RequestKind::DeleteAcls(r) => {
            Routed::Controller(ControllerRequest::Admin(AdminRequest::DeleteAcls(r)))
        }
        RequestKind::DescribeConfigs(r) => {
            Routed::Controller(ControllerRequest::Admin(AdminRequest::DescribeConfigs(r)))
        }
        RequestKind::AlterConfigs(r) => {
            Routed::Controller(ControllerRequest::Admin(AdminRequest::AlterConfigs(r)))
        }
        RequestKind::CreateDelegationToken(r) => Routed::Controller(ControllerRequest::Admin(
            AdminRequest::CreateDelegationToken(r),
        )),
        RequestKind::RenewDelegationToken(r) => Routed::Controller(ControllerRequest::Admin(
            AdminRequest::RenewDelegationToken(r),
        )),
        RequestKind::ExpireDelegationToken(r) => Routed::Controller(ControllerRequest::Admin(
            AdminRequest::ExpireDelegationToken(r),
        )),
        RequestKind::AlterPartitionReassignments(r) => Routed::Controller(
            ControllerRequest::Admin(AdminRequest::AlterPartitionReassignments(r)),
        ),
        RequestKind::ListPartitionReassignments(r) => Routed::Controller(ControllerRequest::Admin(
            AdminRequest::ListPartitionReassignments(r),
        )),
        RequestKind::AlterClientQuotas(r) => {
            Routed::Controller(ControllerRequest::Admin(AdminRequest::AlterClientQuotas(r)))
        }
        RequestKind::AlterUserScramCredentials(r) => Routed::Controller(ControllerRequest::Admin(
            AdminRequest::AlterUserScramCredentials(r),
        )),
        RequestKind::AddRaftVoter(r) => {
            Routed::Controller(ControllerRequest::Admin(AdminRequest::AddRaftVoter(r)))
        }
        RequestKind::RemoveRaftVoter(r) => {
            Routed::Controller(ControllerRequest::Admin(AdminRequest::RemoveRaftVoter(r)))
        }
        _ => return None,
    })
}

/// The wire form of a Raft request (for the peer client).
pub fn raft_request_kind(request: RaftRequest) -> (ApiKey, RequestKind) {
    match request {
        RaftRequest::Vote(r) => (ApiKey::Vote, RequestKind::Vote(r)),
        RaftRequest::BeginQuorumEpoch(r) => {
            (ApiKey::BeginQuorumEpoch, RequestKind::BeginQuorumEpoch(r))
        }
        RaftRequest::EndQuorumEpoch(r) => (ApiKey::EndQuorumEpoch, RequestKind::EndQuorumEpoch(r)),
        RaftRequest::Fetch(r) => (ApiKey::Fetch, RequestKind::Fetch(r)),
        RaftRequest::FetchSnapshot(r) => (ApiKey::FetchSnapshot, RequestKind::FetchSnapshot(r)),
        RaftRequest::DescribeQuorum(r) => (ApiKey::DescribeQuorum, RequestKind::DescribeQuorum(r)),
        RaftRequest::UpdateRaftVoter(r) => {
            (ApiKey::UpdateRaftVoter, RequestKind::UpdateRaftVoter(r))
        }
    }
}

/// A Raft response from the wire; `None` if the api does not match a Raft response.
pub fn raft_response(response: ResponseKind) -> Option<RaftResponse> {
    Some(match response {
        ResponseKind::Vote(r) => RaftResponse::Vote(r),
        ResponseKind::BeginQuorumEpoch(r) => RaftResponse::BeginQuorumEpoch(r),
        ResponseKind::EndQuorumEpoch(r) => RaftResponse::EndQuorumEpoch(r),
        ResponseKind::Fetch(r) => RaftResponse::Fetch(r),
        ResponseKind::FetchSnapshot(r) => RaftResponse::FetchSnapshot(r),
        ResponseKind::DescribeQuorum(r) => RaftResponse::DescribeQuorum(r),
        ResponseKind::UpdateRaftVoter(r) => RaftResponse::UpdateRaftVoter(r),
        _ => return None,
    })
}

/// The wire form of a Raft response.
pub fn raft_response_kind(response: RaftResponse) -> ResponseKind {
    match response {
        RaftResponse::Vote(r) => ResponseKind::Vote(r),
        RaftResponse::BeginQuorumEpoch(r) => ResponseKind::BeginQuorumEpoch(r),
        RaftResponse::EndQuorumEpoch(r) => ResponseKind::EndQuorumEpoch(r),
        RaftResponse::Fetch(r) => ResponseKind::Fetch(r),
        RaftResponse::FetchSnapshot(r) => ResponseKind::FetchSnapshot(r),
        RaftResponse::DescribeQuorum(r) => ResponseKind::DescribeQuorum(r),
        RaftResponse::UpdateRaftVoter(r) => ResponseKind::UpdateRaftVoter(r),
    }
}

/// The wire form of a controller response.
pub fn controller_response_kind(response: ControllerResponse) -> ResponseKind {
    match response {
        ControllerResponse::BrokerRegistration(r) => ResponseKind::BrokerRegistration(r),
        ControllerResponse::BrokerHeartbeat(r) => ResponseKind::BrokerHeartbeat(r),
        ControllerResponse::CreateTopics(r) => ResponseKind::CreateTopics(r),
        ControllerResponse::DeleteTopics(r) => ResponseKind::DeleteTopics(r),
        ControllerResponse::AllocateProducerIds(r) => ResponseKind::AllocateProducerIds(r),
        ControllerResponse::AlterPartition(r) => ResponseKind::AlterPartition(r),
        ControllerResponse::AssignReplicasToDirs(r) => ResponseKind::AssignReplicasToDirs(r),
        ControllerResponse::ControllerRegistration(r) => ResponseKind::ControllerRegistration(r),
        ControllerResponse::DescribeCluster(r) => ResponseKind::DescribeCluster(r),
        ControllerResponse::UnregisterBroker(r) => ResponseKind::UnregisterBroker(r),
        ControllerResponse::Admin(AdminResponse::CreatePartitions(r)) => {
            ResponseKind::CreatePartitions(r)
        }
        ControllerResponse::Admin(AdminResponse::ElectLeaders(r)) => ResponseKind::ElectLeaders(r),
        ControllerResponse::Admin(AdminResponse::UpdateFeatures(r)) => {
            ResponseKind::UpdateFeatures(r)
        }
        ControllerResponse::Admin(AdminResponse::IncrementalAlterConfigs(r)) => {
            ResponseKind::IncrementalAlterConfigs(r)
        }
        ControllerResponse::Admin(AdminResponse::AlterPartitionReassignments(r)) => {
            ResponseKind::AlterPartitionReassignments(r)
        }
        ControllerResponse::Admin(AdminResponse::ListPartitionReassignments(r)) => {
            ResponseKind::ListPartitionReassignments(r)
        }
        ControllerResponse::Admin(AdminResponse::DescribeConfigs(r)) => {
            ResponseKind::DescribeConfigs(r)
        }
        ControllerResponse::Admin(AdminResponse::AlterConfigs(r)) => ResponseKind::AlterConfigs(r),
        ControllerResponse::Admin(AdminResponse::AlterClientQuotas(r)) => {
            ResponseKind::AlterClientQuotas(r)
        }
        ControllerResponse::Admin(AdminResponse::AlterUserScramCredentials(r)) => {
            ResponseKind::AlterUserScramCredentials(r)
        }
        ControllerResponse::Admin(AdminResponse::DescribeAcls(r)) => ResponseKind::DescribeAcls(r),
        ControllerResponse::Admin(AdminResponse::CreateAcls(r)) => ResponseKind::CreateAcls(r),
        ControllerResponse::Admin(AdminResponse::DeleteAcls(r)) => ResponseKind::DeleteAcls(r),
        ControllerResponse::Admin(AdminResponse::CreateDelegationToken(r)) => {
            ResponseKind::CreateDelegationToken(r)
        }
        ControllerResponse::Admin(AdminResponse::RenewDelegationToken(r)) => {
            ResponseKind::RenewDelegationToken(r)
        }
        ControllerResponse::Admin(AdminResponse::ExpireDelegationToken(r)) => {
            ResponseKind::ExpireDelegationToken(r)
        }
        ControllerResponse::Admin(AdminResponse::AddRaftVoter(r)) => ResponseKind::AddRaftVoter(r),
        ControllerResponse::Admin(AdminResponse::RemoveRaftVoter(r)) => {
            ResponseKind::RemoveRaftVoter(r)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for &(api, _, _) in SERVED_APIS {
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
        for api in crate::wire::envelope::FORWARDABLE_APIS {
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
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/compat/rpc-versions.txt");
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
        for &(api, min, max) in SERVED_APIS {
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
