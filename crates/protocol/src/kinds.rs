//! Which api a `RequestKind` / `ResponseKind` value belongs to. `kafka-protocol` names the enum
//! variants after `ApiKey`'s variants, so one list maps all three.

use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};

macro_rules! api_kinds {
    ($($name:ident),* $(,)?) => {
        /// The api of a request body; `None` only for variants added after kafka-protocol 0.18.
        pub fn request_api_key(request: &RequestKind) -> Option<ApiKey> {
            match request {
                $(RequestKind::$name(_) => Some(ApiKey::$name),)*
                #[allow(unreachable_patterns)]
                _ => None,
            }
        }

        /// The api of a response body; `None` only for variants added after kafka-protocol 0.18.
        pub fn response_api_key(response: &ResponseKind) -> Option<ApiKey> {
            match response {
                $(ResponseKind::$name(_) => Some(ApiKey::$name),)*
                #[allow(unreachable_patterns)]
                _ => None,
            }
        }
    };
}

api_kinds! {
    Produce, Fetch, ListOffsets, Metadata, OffsetCommit, OffsetFetch, FindCoordinator,
    JoinGroup, Heartbeat, LeaveGroup, SyncGroup, DescribeGroups, ListGroups, SaslHandshake,
    ApiVersions, CreateTopics, DeleteTopics, DeleteRecords, InitProducerId,
    OffsetForLeaderEpoch, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, WriteTxnMarkers,
    TxnOffsetCommit, DescribeAcls, CreateAcls, DeleteAcls, DescribeConfigs, AlterConfigs,
    AlterReplicaLogDirs, DescribeLogDirs, SaslAuthenticate, CreatePartitions,
    CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken, DescribeDelegationToken,
    DeleteGroups, ElectLeaders, IncrementalAlterConfigs, AlterPartitionReassignments,
    ListPartitionReassignments, OffsetDelete, DescribeClientQuotas, AlterClientQuotas,
    DescribeUserScramCredentials, AlterUserScramCredentials, Vote, BeginQuorumEpoch,
    EndQuorumEpoch, DescribeQuorum, AlterPartition, UpdateFeatures, Envelope, FetchSnapshot,
    DescribeCluster, DescribeProducers, BrokerRegistration, BrokerHeartbeat, UnregisterBroker,
    DescribeTransactions, ListTransactions, AllocateProducerIds, ConsumerGroupHeartbeat,
    ConsumerGroupDescribe, ControllerRegistration, GetTelemetrySubscriptions, PushTelemetry,
    AssignReplicasToDirs, ListConfigResources, DescribeTopicPartitions, ShareGroupHeartbeat,
    ShareGroupDescribe, ShareFetch, ShareAcknowledge, AddRaftVoter, RemoveRaftVoter,
    UpdateRaftVoter, InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState,
    DeleteShareGroupState, ReadShareGroupStateSummary, DescribeShareGroupOffsets,
    AlterShareGroupOffsets, DeleteShareGroupOffsets,
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{FetchResponse, VoteRequest};

    #[test]
    fn maps_variants_to_their_api() {
        assert_eq!(
            request_api_key(&RequestKind::Vote(VoteRequest::default())),
            Some(ApiKey::Vote)
        );
        assert_eq!(
            response_api_key(&ResponseKind::Fetch(FetchResponse::default())),
            Some(ApiKey::Fetch)
        );
    }
}
