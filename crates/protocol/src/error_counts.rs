//! Which error codes a response carries in the places Kafka's `AbstractResponse.errorCounts()`
//! looks. Brokers decide from `errorCounts` whether a controller answered `NOT_CONTROLLER`
//! (`NodeToControllerRequestThread.handleResponse`), and a Java controller rewrites an enveloped
//! response into a bare `NOT_CONTROLLER` Envelope on the same basis
//! (`RequestChannel.buildResponseSend`). Each arm below follows the `errorCounts()` of the
//! matching `*Response.java` (Kafka 4.x): some count only the top-level code, some only
//! per-item codes, some both.

use kafka_protocol::messages::ResponseKind;

/// The error codes `errorCounts()` would count for `response` (with repetitions, including 0
/// where Java counts NONE), or `None` for apis this module does not cover.
///
/// Covered: DescribeAcls, every forwardable api (CreateTopics, DeleteTopics, CreateAcls, DeleteAcls,
/// AlterConfigs, CreatePartitions, Create/Renew/ExpireDelegationToken, ElectLeaders,
/// IncrementalAlterConfigs, Alter/ListPartitionReassignments, AlterClientQuotas,
/// AlterUserScramCredentials, DescribeQuorum, UpdateFeatures, UnregisterBroker,
/// AllocateProducerIds, AddRaftVoter, RemoveRaftVoter) and the direct broker/controller apis
/// (BrokerRegistration, BrokerHeartbeat, AlterPartition, AssignReplicasToDirs,
/// ControllerRegistration, DescribeCluster, DescribeConfigs, UpdateRaftVoter).
pub fn counted_error_codes(response: &ResponseKind) -> Option<Vec<i16>> {
    use ResponseKind as R;
    let codes: Vec<i16> = match response {
        R::CreateTopics(r) => r.topics.iter().map(|t| t.error_code).collect(),
        R::DeleteTopics(r) => r.responses.iter().map(|t| t.error_code).collect(),
        R::CreatePartitions(r) => r.results.iter().map(|t| t.error_code).collect(),
        R::IncrementalAlterConfigs(r) => r.responses.iter().map(|t| t.error_code).collect(),
        R::AlterConfigs(r) => r.responses.iter().map(|t| t.error_code).collect(),
        R::UpdateFeatures(r) => std::iter::once(r.error_code)
            .chain(r.results.iter().map(|t| t.error_code))
            .collect(),
        R::DescribeQuorum(r) => std::iter::once(r.error_code)
            .chain(
                r.topics
                    .iter()
                    .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
            )
            .collect(),
        R::ElectLeaders(r) => std::iter::once(r.error_code)
            .chain(
                r.replica_election_results
                    .iter()
                    .flat_map(|t| t.partition_result.iter().map(|p| p.error_code)),
            )
            .collect(),
        // UnregisterBroker, UnregisterController, AddRaftVoter, RemoveRaftVoter and
        // UpdateRaftVoter count only a non-zero code.
        R::UnregisterBroker(r) => nonzero(r.error_code),
        R::UnregisterController(r) => nonzero(r.error_code),
        R::AddRaftVoter(r) => nonzero(r.error_code),
        R::RemoveRaftVoter(r) => nonzero(r.error_code),
        R::UpdateRaftVoter(r) => nonzero(r.error_code),
        R::AllocateProducerIds(r) => vec![r.error_code],
        R::DescribeAcls(r) => vec![r.error_code],
        R::CreateAcls(r) => r.results.iter().map(|t| t.error_code).collect(),
        // Only the per-filter codes, not those of the matching ACLs.
        R::DeleteAcls(r) => r.filter_results.iter().map(|t| t.error_code).collect(),
        R::AlterPartitionReassignments(r) => std::iter::once(r.error_code)
            .chain(
                r.responses
                    .iter()
                    .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
            )
            .collect(),
        R::ListPartitionReassignments(r) => vec![r.error_code],
        R::AlterClientQuotas(r) => r.entries.iter().map(|t| t.error_code).collect(),
        R::AlterUserScramCredentials(r) => r.results.iter().map(|t| t.error_code).collect(),
        R::CreateDelegationToken(r) => vec![r.error_code],
        R::RenewDelegationToken(r) => vec![r.error_code],
        R::ExpireDelegationToken(r) => vec![r.error_code],
        R::BrokerRegistration(r) => vec![r.error_code],
        R::BrokerHeartbeat(r) => vec![r.error_code],
        R::AlterPartition(r) => std::iter::once(r.error_code)
            .chain(
                r.topics
                    .iter()
                    .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
            )
            .collect(),
        // Only the top-level code, not the per-partition ones.
        R::AssignReplicasToDirs(r) => vec![r.error_code],
        R::ControllerRegistration(r) => vec![r.error_code],
        R::DescribeCluster(r) => vec![r.error_code],
        R::DescribeConfigs(r) => r.results.iter().map(|t| t.error_code).collect(),
        _ => return None,
    };
    Some(codes)
}

fn nonzero(code: i16) -> Vec<i16> {
    if code == 0 {
        Vec::new()
    } else {
        vec![code]
    }
}

/// Whether `response` carries `error_code` anywhere Java's `errorCounts()` looks. `false` for
/// apis [`counted_error_codes`] does not cover.
pub fn response_has_error(response: &ResponseKind, error_code: i16) -> bool {
    counted_error_codes(response).is_some_and(|codes| codes.contains(&error_code))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
    use kafka_protocol::messages::delete_acls_response::{
        DeleteAclsFilterResult, DeleteAclsMatchingAcl,
    };
    use kafka_protocol::messages::*;

    use crate::constants::NOT_CONTROLLER;

    #[test]
    fn per_item_codes_are_counted_where_java_counts_them() {
        let create = CreateTopicsResponse::default().with_topics(vec![
            CreatableTopicResult::default(),
            CreatableTopicResult::default().with_error_code(NOT_CONTROLLER),
        ]);
        assert!(response_has_error(
            &ResponseKind::CreateTopics(create),
            NOT_CONTROLLER
        ));

        // A top-level NOT_CONTROLLER in UpdateFeatures counts too.
        let update = UpdateFeaturesResponse::default().with_error_code(NOT_CONTROLLER);
        assert!(response_has_error(
            &ResponseKind::UpdateFeatures(update),
            NOT_CONTROLLER
        ));
    }

    #[test]
    fn codes_java_ignores_are_not_counted() {
        // DeleteAcls counts filter results only, not the matching ACLs inside them.
        let delete = DeleteAclsResponse::default().with_filter_results(vec![
            DeleteAclsFilterResult::default().with_matching_acls(vec![
                DeleteAclsMatchingAcl::default().with_error_code(NOT_CONTROLLER),
            ]),
        ]);
        assert!(!response_has_error(
            &ResponseKind::DeleteAcls(delete),
            NOT_CONTROLLER
        ));
        // Apis outside the covered set report nothing.
        assert_eq!(
            counted_error_codes(&ResponseKind::Fetch(FetchResponse::default())),
            None
        );
        // UnregisterBroker does not count NONE.
        assert_eq!(
            counted_error_codes(&ResponseKind::UnregisterBroker(
                UnregisterBrokerResponse::default()
            )),
            Some(vec![])
        );
    }
}
