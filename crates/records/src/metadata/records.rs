//! Every metadata record type and its nested structs, declared from the JSON schemas of
//! Kafka 4.1.2 (`common/metadata/*.json`) plus the 4.4 additions. Each field line gives the
//! Rust type, the JSON default, the first version with the field, and where applicable the
//! first nullable version and the first tagged version with the tag.

use bytes::Bytes;
use uuid::Uuid;

use super::wire::message;

message! {
    /// `RegisterBrokerRecord` (api key 0, versions 0-4): a broker registration accepted by the
    /// controller. v1 adds `in_controlled_shutdown`, v2 `is_migrating_zk_broker`, v3 `log_dirs`
    /// (tag 0, metadata.version 3.7-IV2+), v4 `cordoned_log_dirs` (tag 1, Kafka 4.3+ only).
    #[derive(Eq)]
    pub struct RegisterBrokerRecord {
        /// `BrokerId` (int32, v0+).
        broker_id: i32 = 0, versions 0..;
        /// `IsMigratingZkBroker` (bool, v2+).
        is_migrating_zk_broker: bool = false, versions 2..;
        /// `IncarnationId` (uuid, v0+).
        incarnation_id: Uuid = Uuid::nil(), versions 0..;
        /// `BrokerEpoch` (int64, v0+).
        broker_epoch: i64 = 0, versions 0..;
        /// `EndPoints` ([]BrokerEndpoint, v0+).
        end_points: Vec<BrokerEndpoint> = Vec::new(), versions 0..;
        /// `Features` ([]BrokerFeature, v0+).
        features: Vec<BrokerFeature> = Vec::new(), versions 0..;
        /// `Rack` (string, v0+, nullable).
        rack: Option<String> = None, versions 0.., nullable 0..;
        /// `Fenced` (bool, v0+): a new registration starts fenced (the default) until the broker
        /// has caught up with the metadata log.
        fenced: bool = true, versions 0..;
        /// `InControlledShutdown` (bool, v1+).
        in_controlled_shutdown: bool = false, versions 1..;
        /// `LogDirs` ([]uuid, v3+, tag 0).
        log_dirs: Vec<Uuid> = Vec::new(), versions 3.., tagged 3.. tag 0;
        /// `CordonedLogDirs` ([]uuid, v4+, nullable, tag 1).
        cordoned_log_dirs: Option<Vec<Uuid>> = None, versions 4.., nullable 4.., tagged 4.. tag 1;
    }
}

message! {
    /// Element of `RegisterBrokerRecord`.
    #[derive(Eq)]
    pub struct BrokerEndpoint {
        /// `Name` (string, v0+).
        name: String = String::new(), versions 0..;
        /// `Host` (string, v0+).
        host: String = String::new(), versions 0..;
        /// `Port` (uint16, v0+).
        port: u16 = 0, versions 0..;
        /// `SecurityProtocol` (int16, v0+).
        security_protocol: i16 = 0, versions 0..;
    }
}

message! {
    /// Element of `RegisterBrokerRecord`.
    #[derive(Eq)]
    pub struct BrokerFeature {
        /// `Name` (string, v0+).
        name: String = String::new(), versions 0..;
        /// `MinSupportedVersion` (int16, v0+).
        min_supported_version: i16 = 0, versions 0..;
        /// `MaxSupportedVersion` (int16, v0+).
        max_supported_version: i16 = 0, versions 0..;
    }
}

message! {
    /// `UnregisterBrokerRecord` (api key 1, versions 0).
    #[derive(Eq)]
    pub struct UnregisterBrokerRecord {
        /// `BrokerId` (int32, v0+).
        broker_id: i32 = 0, versions 0..;
        /// `BrokerEpoch` (int64, v0+).
        broker_epoch: i64 = 0, versions 0..;
    }
}

message! {
    /// `TopicRecord` (api key 2, versions 0).
    #[derive(Eq)]
    pub struct TopicRecord {
        /// `Name` (string, v0+).
        name: String = String::new(), versions 0..;
        /// `TopicId` (uuid, v0+).
        topic_id: Uuid = Uuid::nil(), versions 0..;
    }
}

message! {
    /// `PartitionRecord` (api key 3, versions 0-2): the full state of a new partition. v1 adds
    /// `directories`, v2 the ELR fields (tags 1, 2).
    #[derive(Eq)]
    pub struct PartitionRecord {
        /// `PartitionId` (int32, v0+).
        partition_id: i32 = -1, versions 0..;
        /// `TopicId` (uuid, v0+).
        topic_id: Uuid = Uuid::nil(), versions 0..;
        /// `Replicas` ([]int32, v0+).
        replicas: Vec<i32> = Vec::new(), versions 0..;
        /// `Isr` ([]int32, v0+).
        isr: Vec<i32> = Vec::new(), versions 0..;
        /// `RemovingReplicas` ([]int32, v0+).
        removing_replicas: Vec<i32> = Vec::new(), versions 0..;
        /// `AddingReplicas` ([]int32, v0+).
        adding_replicas: Vec<i32> = Vec::new(), versions 0..;
        /// `Leader` (int32, v0+): broker id, -1 when there is no leader.
        leader: i32 = -1, versions 0..;
        /// `LeaderRecoveryState` (int8, v0+, tag 0): 0 recovered, 1 recovering after an unclean
        /// election.
        leader_recovery_state: i8 = 0, versions 0.., tagged 0.. tag 0;
        /// `LeaderEpoch` (int32, v0+).
        leader_epoch: i32 = -1, versions 0..;
        /// `PartitionEpoch` (int32, v0+).
        partition_epoch: i32 = -1, versions 0..;
        /// `Directories` ([]uuid, v1+): log directory of each replica, same length and order as
        /// `replicas`.
        directories: Vec<Uuid> = Vec::new(), versions 1..;
        /// `EligibleLeaderReplicas` ([]int32, v2+, nullable, tag 1).
        eligible_leader_replicas: Option<Vec<i32>> = None, versions 2.., nullable 2.., tagged 2.. tag 1;
        /// `LastKnownElr` ([]int32, v2+, nullable, tag 2).
        last_known_elr: Option<Vec<i32>> = None, versions 2.., nullable 2.., tagged 2.. tag 2;
    }
}

message! {
    /// `ConfigRecord` (api key 4, versions 0): a dynamic config set or deleted.
    #[derive(Eq)]
    pub struct ConfigRecord {
        /// `ResourceType` (int8, v0+): `ConfigResource.Type` id (2 topic, 4 broker, 8 broker
        /// logger, 16 client metrics, 32 group).
        resource_type: i8 = 0, versions 0..;
        /// `ResourceName` (string, v0+): "" for the cluster-wide broker default.
        resource_name: String = String::new(), versions 0..;
        /// `Name` (string, v0+).
        name: String = String::new(), versions 0..;
        /// `Value` (string, v0+, nullable): `None` deletes the config.
        value: Option<String> = None, versions 0.., nullable 0..;
    }
}

message! {
    /// `PartitionChangeRecord` (api key 5, versions 0-2): a change to a partition; every
    /// optional field is null/-2/-1 when unchanged. It has no epoch fields: replay bumps the
    /// partition epoch always and the leader epoch iff `leader` is not -2.
    #[derive(Eq)]
    pub struct PartitionChangeRecord {
        /// `PartitionId` (int32, v0+).
        partition_id: i32 = -1, versions 0..;
        /// `TopicId` (uuid, v0+).
        topic_id: Uuid = Uuid::nil(), versions 0..;
        /// `Isr` ([]int32, v0+, nullable, tag 0).
        isr: Option<Vec<i32>> = None, versions 0.., nullable 0.., tagged 0.. tag 0;
        /// `Leader` (int32, v0+, tag 1): -2 unchanged, -1 no leader, else the new leader.
        leader: i32 = -2, versions 0.., tagged 0.. tag 1;
        /// `Replicas` ([]int32, v0+, nullable, tag 2).
        replicas: Option<Vec<i32>> = None, versions 0.., nullable 0.., tagged 0.. tag 2;
        /// `RemovingReplicas` ([]int32, v0+, nullable, tag 3).
        removing_replicas: Option<Vec<i32>> = None, versions 0.., nullable 0.., tagged 0.. tag 3;
        /// `AddingReplicas` ([]int32, v0+, nullable, tag 4).
        adding_replicas: Option<Vec<i32>> = None, versions 0.., nullable 0.., tagged 0.. tag 4;
        /// `LeaderRecoveryState` (int8, v0+, tag 5): -1 unchanged, 0 recovered, 1 recovering.
        leader_recovery_state: i8 = -1, versions 0.., tagged 0.. tag 5;
        /// `Directories` ([]uuid, v1+, nullable, tag 8).
        directories: Option<Vec<Uuid>> = None, versions 1.., nullable 1.., tagged 1.. tag 8;
        /// `EligibleLeaderReplicas` ([]int32, v2+, nullable, tag 6).
        eligible_leader_replicas: Option<Vec<i32>> = None, versions 2.., nullable 2.., tagged 2.. tag 6;
        /// `LastKnownElr` ([]int32, v2+, nullable, tag 7).
        last_known_elr: Option<Vec<i32>> = None, versions 2.., nullable 2.., tagged 2.. tag 7;
    }
}

message! {
    /// `FenceBrokerRecord` (api key 7, versions 0).
    #[derive(Eq)]
    pub struct FenceBrokerRecord {
        /// `Id` (int32, v0+).
        id: i32 = 0, versions 0..;
        /// `Epoch` (int64, v0+).
        epoch: i64 = 0, versions 0..;
    }
}

message! {
    /// `UnfenceBrokerRecord` (api key 8, versions 0).
    #[derive(Eq)]
    pub struct UnfenceBrokerRecord {
        /// `Id` (int32, v0+).
        id: i32 = 0, versions 0..;
        /// `Epoch` (int64, v0+).
        epoch: i64 = 0, versions 0..;
    }
}

message! {
    /// `RemoveTopicRecord` (api key 9, versions 0).
    #[derive(Eq)]
    pub struct RemoveTopicRecord {
        /// `TopicId` (uuid, v0+).
        topic_id: Uuid = Uuid::nil(), versions 0..;
    }
}

message! {
    /// `DelegationTokenRecord` (api key 10, versions 0).
    #[derive(Eq)]
    pub struct DelegationTokenRecord {
        /// `Owner` (string, v0+).
        owner: String = String::new(), versions 0..;
        /// `Requester` (string, v0+).
        requester: String = String::new(), versions 0..;
        /// `Renewers` ([]string, v0+).
        renewers: Vec<String> = Vec::new(), versions 0..;
        /// `IssueTimestamp` (int64, v0+).
        issue_timestamp: i64 = 0, versions 0..;
        /// `MaxTimestamp` (int64, v0+).
        max_timestamp: i64 = 0, versions 0..;
        /// `ExpirationTimestamp` (int64, v0+).
        expiration_timestamp: i64 = 0, versions 0..;
        /// `TokenId` (string, v0+).
        token_id: String = String::new(), versions 0..;
    }
}

message! {
    /// `UserScramCredentialRecord` (api key 11, versions 0).
    #[derive(Eq)]
    pub struct UserScramCredentialRecord {
        /// `Name` (string, v0+).
        name: String = String::new(), versions 0..;
        /// `Mechanism` (int8, v0+).
        mechanism: i8 = 0, versions 0..;
        /// `Salt` (bytes, v0+).
        salt: Bytes = Bytes::new(), versions 0..;
        /// `StoredKey` (bytes, v0+).
        stored_key: Bytes = Bytes::new(), versions 0..;
        /// `ServerKey` (bytes, v0+).
        server_key: Bytes = Bytes::new(), versions 0..;
        /// `Iterations` (int32, v0+).
        iterations: i32 = 0, versions 0..;
    }
}

message! {
    /// `FeatureLevelRecord` (api key 12, versions 0).
    #[derive(Eq)]
    pub struct FeatureLevelRecord {
        /// `Name` (string, v0+).
        name: String = String::new(), versions 0..;
        /// `FeatureLevel` (int16, v0+): the finalized level; 0 means the feature is not enabled.
        feature_level: i16 = 0, versions 0..;
    }
}

message! {
    /// `ClientQuotaRecord` (api key 14, versions 0).
    pub struct ClientQuotaRecord {
        /// `Entity` ([]EntityData, v0+).
        entity: Vec<EntityData> = Vec::new(), versions 0..;
        /// `Key` (string, v0+).
        key: String = String::new(), versions 0..;
        /// `Value` (float64, v0+).
        value: f64 = 0.0, versions 0..;
        /// `Remove` (bool, v0+).
        remove: bool = false, versions 0..;
    }
}

message! {
    /// Element of `ClientQuotaRecord`.
    #[derive(Eq)]
    pub struct EntityData {
        /// `EntityType` (string, v0+).
        entity_type: String = String::new(), versions 0..;
        /// `EntityName` (string, v0+, nullable).
        entity_name: Option<String> = None, versions 0.., nullable 0..;
    }
}

message! {
    /// `ProducerIdsRecord` (api key 15, versions 0).
    #[derive(Eq)]
    pub struct ProducerIdsRecord {
        /// `BrokerId` (int32, v0+).
        broker_id: i32 = 0, versions 0..;
        /// `BrokerEpoch` (int64, v0+).
        broker_epoch: i64 = -1, versions 0..;
        /// `NextProducerId` (int64, v0+): first producer id of the next block to hand out.
        next_producer_id: i64 = 0, versions 0..;
    }
}

message! {
    /// `BrokerRegistrationChangeRecord` (api key 17, versions 0-3).
    #[derive(Eq)]
    pub struct BrokerRegistrationChangeRecord {
        /// `BrokerId` (int32, v0+).
        broker_id: i32 = 0, versions 0..;
        /// `BrokerEpoch` (int64, v0+).
        broker_epoch: i64 = 0, versions 0..;
        /// `Fenced` (int8, v0+, tag 0): -1 unfenced, 0 no change, 1 fenced.
        fenced: i8 = 0, versions 0.., tagged 0.. tag 0;
        /// `InControlledShutdown` (int8, v1+, tag 1): 0 no change, 1 in controlled shutdown.
        in_controlled_shutdown: i8 = 0, versions 1.., tagged 1.. tag 1;
        /// `LogDirs` ([]uuid, v2+, tag 2).
        log_dirs: Vec<Uuid> = Vec::new(), versions 2.., tagged 2.. tag 2;
        /// `CordonedLogDirs` ([]uuid, v3+, nullable, tag 3).
        cordoned_log_dirs: Option<Vec<Uuid>> = None, versions 3.., nullable 3.., tagged 3.. tag 3;
    }
}

message! {
    /// `AccessControlEntryRecord` (api key 18, versions 0).
    #[derive(Eq)]
    pub struct AccessControlEntryRecord {
        /// `Id` (uuid, v0+).
        id: Uuid = Uuid::nil(), versions 0..;
        /// `ResourceType` (int8, v0+).
        resource_type: i8 = 0, versions 0..;
        /// `ResourceName` (string, v0+).
        resource_name: String = String::new(), versions 0..;
        /// `PatternType` (int8, v0+).
        pattern_type: i8 = 0, versions 0..;
        /// `Principal` (string, v0+).
        principal: String = String::new(), versions 0..;
        /// `Host` (string, v0+).
        host: String = String::new(), versions 0..;
        /// `Operation` (int8, v0+).
        operation: i8 = 0, versions 0..;
        /// `PermissionType` (int8, v0+).
        permission_type: i8 = 0, versions 0..;
    }
}

message! {
    /// `RemoveAccessControlEntryRecord` (api key 19, versions 0).
    #[derive(Eq)]
    pub struct RemoveAccessControlEntryRecord {
        /// `Id` (uuid, v0+).
        id: Uuid = Uuid::nil(), versions 0..;
    }
}

message! {
    /// `NoOpRecord` (api key 20, versions 0).
    #[derive(Eq)]
    pub struct NoOpRecord {
    }
}

message! {
    /// `ZkMigrationStateRecord` (api key 21, versions 0).
    #[derive(Eq)]
    pub struct ZkMigrationStateRecord {
        /// `ZkMigrationState` (int8, v0+): 0 NONE (what a KRaft-only cluster writes).
        zk_migration_state: i8 = 0, versions 0..;
    }
}

message! {
    /// `RemoveUserScramCredentialRecord` (api key 22, versions 0).
    #[derive(Eq)]
    pub struct RemoveUserScramCredentialRecord {
        /// `Name` (string, v0+).
        name: String = String::new(), versions 0..;
        /// `Mechanism` (int8, v0+).
        mechanism: i8 = 0, versions 0..;
    }
}

message! {
    /// `BeginTransactionRecord` (api key 23, versions 0).
    #[derive(Eq)]
    pub struct BeginTransactionRecord {
        /// `Name` (string, v0+, nullable, tag 0).
        name: Option<String> = None, versions 0.., nullable 0.., tagged 0.. tag 0;
    }
}

message! {
    /// `EndTransactionRecord` (api key 24, versions 0).
    #[derive(Eq)]
    pub struct EndTransactionRecord {
    }
}

message! {
    /// `AbortTransactionRecord` (api key 25, versions 0).
    #[derive(Eq)]
    pub struct AbortTransactionRecord {
        /// `Reason` (string, v0+, nullable, tag 0).
        reason: Option<String> = None, versions 0.., nullable 0.., tagged 0.. tag 0;
    }
}

message! {
    /// `RemoveDelegationTokenRecord` (api key 26, versions 0).
    #[derive(Eq)]
    pub struct RemoveDelegationTokenRecord {
        /// `TokenId` (string, v0+).
        token_id: String = String::new(), versions 0..;
    }
}

message! {
    /// `RegisterControllerRecord` (api key 27, versions 0).
    #[derive(Eq)]
    pub struct RegisterControllerRecord {
        /// `ControllerId` (int32, v0+).
        controller_id: i32 = 0, versions 0..;
        /// `IncarnationId` (uuid, v0+).
        incarnation_id: Uuid = Uuid::nil(), versions 0..;
        /// `ZkMigrationReady` (bool, v0+).
        zk_migration_ready: bool = false, versions 0..;
        /// `EndPoints` ([]ControllerEndpoint, v0+).
        end_points: Vec<ControllerEndpoint> = Vec::new(), versions 0..;
        /// `Features` ([]ControllerFeature, v0+).
        features: Vec<ControllerFeature> = Vec::new(), versions 0..;
    }
}

message! {
    /// Element of `RegisterControllerRecord`.
    #[derive(Eq)]
    pub struct ControllerEndpoint {
        /// `Name` (string, v0+).
        name: String = String::new(), versions 0..;
        /// `Host` (string, v0+).
        host: String = String::new(), versions 0..;
        /// `Port` (uint16, v0+).
        port: u16 = 0, versions 0..;
        /// `SecurityProtocol` (int16, v0+).
        security_protocol: i16 = 0, versions 0..;
    }
}

message! {
    /// Element of `RegisterControllerRecord`.
    #[derive(Eq)]
    pub struct ControllerFeature {
        /// `Name` (string, v0+).
        name: String = String::new(), versions 0..;
        /// `MinSupportedVersion` (int16, v0+).
        min_supported_version: i16 = 0, versions 0..;
        /// `MaxSupportedVersion` (int16, v0+).
        max_supported_version: i16 = 0, versions 0..;
    }
}

message! {
    /// `ClearElrRecord` (api key 28, versions 0).
    #[derive(Eq)]
    pub struct ClearElrRecord {
        /// `TopicName` (string, v0+): "" clears the ELR of every topic.
        topic_name: String = String::new(), versions 0..;
    }
}

message! {
    /// `UnregisterControllerRecord` (api key 29, versions 0).
    #[derive(Eq)]
    pub struct UnregisterControllerRecord {
        /// `ControllerId` (int32, v0+).
        controller_id: i32 = 0, versions 0..;
    }
}
