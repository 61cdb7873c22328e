//! Random structured requests of every controller API against an active controller (issue 9):
//! no handler panics, every result's records encode, an atomic result fits one batch and any
//! other record fits a batch alone, the records replay (`TestNode::append` replays them and
//! checks that each decodes to itself), and the image keeps its invariants. Values are drawn
//! around the edges: Kafka's string limit (ASCII and multi-byte), the record limit of a batch,
//! `i32`/`i16` extremes, unknown names, ids and enum codes.

use bytes::Bytes;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_protocol::constants::batch_fits_sizes;
use kraftwerk_records::metadata_version::MetadataVersion;
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Union};
use uuid::Uuid;

use crate::controller::ControllerRequest as Req;
use crate::testing::{config, registration, TestNode, CLUSTER_ID};
use crate::CONTROLLER_APIS;

fn text(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_owned())
}

/// A name: usually one the image knows or a plain unknown one, sometimes one just under or
/// over Kafka's 32,767-byte limit (in ASCII or in two-byte characters).
fn name() -> BoxedStrategy<String> {
    prop_oneof![
        12 => prop::sample::select(vec![
            "t0", "t1", "t2", "missing", "__cluster_metadata", "bad name", "a.b", "a_b", "",
            "é", "user", "client-id", "ip", "127.0.0.1", "1", "3000", "-1",
        ])
        .prop_map(str::to_owned),
        1 => (32_766usize..32_769).prop_map(|n| "n".repeat(n)),
        1 => (16_383usize..16_385).prop_map(|n| "é".repeat(n)),
    ]
    .boxed()
}

fn topic_name() -> BoxedStrategy<TopicName> {
    name().prop_map(|n| TopicName(text(&n))).boxed()
}

fn count() -> BoxedStrategy<i32> {
    prop_oneof![
        10 => -2..6i32,
        1 => Just(i32::MAX),
        1 => Just(i32::MIN),
        1 => 9_998..10_003i32,
    ]
    .boxed()
}

fn broker() -> BoxedStrategy<i32> {
    prop_oneof![6 => 1..=4i32, 1 => Just(-1), 1 => Just(3000), 1 => Just(i32::MAX)].boxed()
}

/// A broker epoch: usually a registered one (the epochs of the world's brokers).
fn epoch(epochs: Vec<i64>) -> BoxedStrategy<i64> {
    prop_oneof![4 => prop::sample::select(epochs), 1 => -2..3i64].boxed()
}

fn topic_id(ids: Vec<Uuid>) -> BoxedStrategy<Uuid> {
    prop_oneof![4 => prop::sample::select(ids), 1 => (0..3u128).prop_map(Uuid::from_u128)].boxed()
}

fn config_key() -> BoxedStrategy<String> {
    prop_oneof![
        8 => prop::sample::select(vec![
            "cleanup.policy", "retention.ms", "min.insync.replicas", "compression.type",
            "min.compaction.lag.ms", "max.compaction.lag.ms", "remote.storage.enable",
            "leader.replication.throttled.replicas", "segment.bytes", "min.cleanable.dirty.ratio",
            "log.retention.ms", "no.such.config", "unclean.leader.election.enable",
        ])
        .prop_map(str::to_owned),
        1 => name(),
    ]
    .boxed()
}

fn config_value() -> BoxedStrategy<Option<String>> {
    prop_oneof![
        10 => prop::sample::select(vec![
            "1", "-1", "0", "2", "compact", "delete", "compact,delete", "x", "", " 5 ", "1.5",
            "true", "false", "*", "0:1,1:2", "zstd", "9223372036854775807",
        ])
        .prop_map(|v| Some(v.to_owned())),
        1 => Just(None),
        1 => name().prop_map(Some),
    ]
    .boxed()
}

fn small_vec<T: std::fmt::Debug + 'static>(s: BoxedStrategy<T>) -> BoxedStrategy<Vec<T>> {
    prop::collection::vec(s, 0..4).boxed()
}

fn create_topics() -> BoxedStrategy<Req> {
    use create_topics_request::{CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig};
    let assignment = (0..3i32, small_vec(broker())).prop_map(|(i, brokers)| {
        CreatableReplicaAssignment::default()
            .with_partition_index(i)
            .with_broker_ids(brokers.into_iter().map(Into::into).collect())
    });
    let config = (config_key(), config_value()).prop_map(|(k, v)| {
        CreatableTopicConfig::default()
            .with_name(text(&k))
            .with_value(v.as_deref().map(text))
    });
    let rf = prop_oneof![-2..5i16, Just(i16::MAX)];
    let topic = (
        topic_name(),
        count(),
        rf,
        small_vec(config.boxed()),
        prop_oneof![3 => Just(Vec::new()), 1 => small_vec(assignment.boxed())],
    )
        .prop_map(|(name, partitions, rf, configs, assignments)| {
            CreatableTopic::default()
                .with_name(name)
                .with_num_partitions(partitions)
                .with_replication_factor(rf)
                .with_configs(configs)
                .with_assignments(assignments)
        });
    (small_vec(topic.boxed()), any::<bool>())
        .prop_map(|(topics, validate_only)| {
            Req::CreateTopics(
                CreateTopicsRequest::default()
                    .with_topics(topics)
                    .with_validate_only(validate_only),
            )
        })
        .boxed()
}

fn delete_topics(ids: Vec<Uuid>) -> BoxedStrategy<Req> {
    use delete_topics_request::DeleteTopicState;
    let state = (prop::option::of(topic_name()), topic_id(ids)).prop_map(|(name, id)| {
        DeleteTopicState::default()
            .with_name(name)
            .with_topic_id(id)
    });
    (small_vec(topic_name()), small_vec(state.boxed()))
        .prop_map(|(names, topics)| {
            Req::DeleteTopics(
                DeleteTopicsRequest::default()
                    .with_topic_names(names)
                    .with_topics(topics),
            )
        })
        .boxed()
}

fn create_partitions() -> BoxedStrategy<Req> {
    use create_partitions_request::{CreatePartitionsAssignment, CreatePartitionsTopic};
    let assignment = small_vec(broker()).prop_map(|b| {
        CreatePartitionsAssignment::default()
            .with_broker_ids(b.into_iter().map(Into::into).collect())
    });
    let topic = (
        topic_name(),
        count(),
        prop::option::of(small_vec(assignment.boxed())),
    )
        .prop_map(|(name, count, assignments)| {
            CreatePartitionsTopic::default()
                .with_name(name)
                .with_count(count)
                .with_assignments(assignments)
        });
    (small_vec(topic.boxed()), any::<bool>())
        .prop_map(|(topics, validate_only)| {
            Req::CreatePartitions(
                CreatePartitionsRequest::default()
                    .with_topics(topics)
                    .with_validate_only(validate_only),
            )
        })
        .boxed()
}

fn elect_leaders() -> BoxedStrategy<Req> {
    use elect_leaders_request::TopicPartitions;
    let topic = (topic_name(), small_vec((-1..4i32).boxed()))
        .prop_map(|(t, p)| TopicPartitions::default().with_topic(t).with_partitions(p));
    (0..3i8, prop::option::of(small_vec(topic.boxed())))
        .prop_map(|(kind, topics)| {
            Req::ElectLeaders(
                ElectLeadersRequest::default()
                    .with_election_type(kind)
                    .with_topic_partitions(topics),
            )
        })
        .boxed()
}

fn resource_type() -> BoxedStrategy<i8> {
    prop_oneof![6 => prop::sample::select(vec![2i8, 4]), 1 => prop::sample::select(vec![0i8, 8, 16, 32, 99])]
        .boxed()
}

fn incremental_alter_configs() -> BoxedStrategy<Req> {
    use incremental_alter_configs_request::{AlterConfigsResource, AlterableConfig};
    let config = (config_key(), 0..5i8, config_value()).prop_map(|(k, op, v)| {
        AlterableConfig::default()
            .with_name(text(&k))
            .with_config_operation(op)
            .with_value(v.as_deref().map(text))
    });
    let resource = (resource_type(), name(), small_vec(config.boxed())).prop_map(|(t, n, c)| {
        AlterConfigsResource::default()
            .with_resource_type(t)
            .with_resource_name(text(&n))
            .with_configs(c)
    });
    (small_vec(resource.boxed()), any::<bool>())
        .prop_map(|(resources, validate_only)| {
            Req::IncrementalAlterConfigs(
                IncrementalAlterConfigsRequest::default()
                    .with_resources(resources)
                    .with_validate_only(validate_only),
            )
        })
        .boxed()
}

fn alter_configs() -> BoxedStrategy<Req> {
    use alter_configs_request::{AlterConfigsResource, AlterableConfig};
    let config = (config_key(), config_value()).prop_map(|(k, v)| {
        AlterableConfig::default()
            .with_name(text(&k))
            .with_value(v.as_deref().map(text))
    });
    let resource = (resource_type(), name(), small_vec(config.boxed())).prop_map(|(t, n, c)| {
        AlterConfigsResource::default()
            .with_resource_type(t)
            .with_resource_name(text(&n))
            .with_configs(c)
    });
    (small_vec(resource.boxed()), any::<bool>())
        .prop_map(|(resources, validate_only)| {
            Req::AlterConfigs(
                AlterConfigsRequest::default()
                    .with_resources(resources)
                    .with_validate_only(validate_only),
            )
        })
        .boxed()
}

fn describe_configs() -> BoxedStrategy<Req> {
    use describe_configs_request::DescribeConfigsResource;
    let resource = (
        resource_type(),
        name(),
        prop::option::of(small_vec(config_key())),
    )
        .prop_map(|(t, n, keys)| {
            DescribeConfigsResource::default()
                .with_resource_type(t)
                .with_resource_name(text(&n))
                .with_configuration_keys(keys.map(|k| k.iter().map(|k| text(k)).collect()))
        });
    (small_vec(resource.boxed()), any::<bool>())
        .prop_map(|(resources, synonyms)| {
            Req::DescribeConfigs(
                DescribeConfigsRequest::default()
                    .with_resources(resources)
                    .with_include_synonyms(synonyms),
            )
        })
        .boxed()
}

fn reassignments() -> BoxedStrategy<Req> {
    use alter_partition_reassignments_request::{ReassignablePartition, ReassignableTopic};
    let partition = (-1..3i32, prop::option::of(small_vec(broker()))).prop_map(|(i, r)| {
        ReassignablePartition::default()
            .with_partition_index(i)
            .with_replicas(r.map(|r| r.into_iter().map(Into::into).collect()))
    });
    let topic = (topic_name(), small_vec(partition.boxed()))
        .prop_map(|(n, p)| ReassignableTopic::default().with_name(n).with_partitions(p));
    let alter = (small_vec(topic.boxed()), any::<bool>()).prop_map(|(topics, allow)| {
        Req::AlterPartitionReassignments(
            AlterPartitionReassignmentsRequest::default()
                .with_topics(topics)
                .with_allow_replication_factor_change(allow),
        )
    });
    let list_topic = (topic_name(), small_vec((-1..3i32).boxed())).prop_map(|(n, p)| {
        list_partition_reassignments_request::ListPartitionReassignmentsTopics::default()
            .with_name(n)
            .with_partition_indexes(p)
    });
    let list = prop::option::of(small_vec(list_topic.boxed())).prop_map(|topics| {
        Req::ListPartitionReassignments(
            ListPartitionReassignmentsRequest::default().with_topics(topics),
        )
    });
    prop_oneof![alter, list].boxed()
}

fn client_quotas() -> BoxedStrategy<Req> {
    use alter_client_quotas_request::{EntityData, EntryData, OpData};
    let entity = (name(), prop::option::of(name())).prop_map(|(t, n)| {
        EntityData::default()
            .with_entity_type(text(&t))
            .with_entity_name(n.as_deref().map(text))
    });
    let value = prop_oneof![
        Just(1024.0),
        Just(0.5),
        Just(-1.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(3e9)
    ];
    let key = prop_oneof![
        3 => prop::sample::select(vec!["producer_byte_rate", "request_percentage", "connection_creation_rate"])
            .prop_map(str::to_owned),
        1 => name(),
    ];
    let op = (key, value, any::<bool>()).prop_map(|(k, v, remove)| {
        OpData::default()
            .with_key(text(&k))
            .with_value(v)
            .with_remove(remove)
    });
    let entry = (small_vec(entity.boxed()), small_vec(op.boxed()))
        .prop_map(|(e, o)| EntryData::default().with_entity(e).with_ops(o));
    (small_vec(entry.boxed()), any::<bool>())
        .prop_map(|(entries, validate_only)| {
            Req::AlterClientQuotas(
                AlterClientQuotasRequest::default()
                    .with_entries(entries)
                    .with_validate_only(validate_only),
            )
        })
        .boxed()
}

fn scram() -> BoxedStrategy<Req> {
    use alter_user_scram_credentials_request::{ScramCredentialDeletion, ScramCredentialUpsertion};
    let deletion = (name(), 0..4i8).prop_map(|(n, m)| {
        ScramCredentialDeletion::default()
            .with_name(text(&n))
            .with_mechanism(m)
    });
    let iterations = prop_oneof![
        Just(4096),
        Just(8192),
        Just(16_385),
        Just(0),
        Just(i32::MAX)
    ];
    let upsertion = (
        name(),
        0..4i8,
        iterations,
        prop::collection::vec(any::<u8>(), 0..20),
        prop::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(|(n, m, i, salt, salted)| {
            ScramCredentialUpsertion::default()
                .with_name(text(&n))
                .with_mechanism(m)
                .with_iterations(i)
                .with_salt(Bytes::from(salt))
                .with_salted_password(Bytes::from(salted))
        });
    (small_vec(deletion.boxed()), small_vec(upsertion.boxed()))
        .prop_map(|(d, u)| {
            Req::AlterUserScramCredentials(
                AlterUserScramCredentialsRequest::default()
                    .with_deletions(d)
                    .with_upsertions(u),
            )
        })
        .boxed()
}

fn update_features() -> BoxedStrategy<Req> {
    use update_features_request::FeatureUpdateKey;
    let feature = prop_oneof![
        4 => prop::sample::select(vec![
            "metadata.version", "kraft.version", "group.version", "transaction.version",
            "eligible.leader.replicas.version", "share.version", "no.such.feature",
        ])
        .prop_map(str::to_owned),
        1 => name(),
    ];
    let update = (feature, -1..30i16, 0..5i8).prop_map(|(f, level, t)| {
        FeatureUpdateKey::default()
            .with_feature(text(&f))
            .with_max_version_level(level)
            .with_upgrade_type(t)
    });
    (small_vec(update.boxed()), any::<bool>())
        .prop_map(|(updates, validate_only)| {
            Req::UpdateFeatures(
                UpdateFeaturesRequest::default()
                    .with_feature_updates(updates)
                    .with_validate_only(validate_only),
            )
        })
        .boxed()
}

fn broker_registration() -> BoxedStrategy<Req> {
    use broker_registration_request::Listener;
    let listener = (name(), name(), any::<u16>()).prop_map(|(n, h, port)| {
        Listener::default()
            .with_name(text(&n))
            .with_host(text(&h))
            .with_port(port)
    });
    (
        1..6i32,
        0..3u64,
        small_vec(listener.boxed()),
        prop::option::of(name()),
        0..3u8,
        any::<bool>(),
        -2..5i64,
    )
        .prop_map(
            |(id, incarnation, listeners, rack, dirs, wrong_cluster, previous)| {
                let mut r = registration(id, Uuid::from_u64_pair(id as u64, incarnation));
                r.listeners.extend(listeners);
                r.rack = rack.as_deref().map(text);
                r.log_dirs = (0..dirs)
                    .map(|d| Uuid::from_u64_pair(0x1000 + d as u64, 7))
                    .collect();
                r.previous_broker_epoch = previous;
                if wrong_cluster {
                    r.cluster_id = text("other");
                }
                Req::BrokerRegistration(r)
            },
        )
        .boxed()
}

fn broker_lifecycle(epochs: Vec<i64>, ids: Vec<Uuid>) -> BoxedStrategy<Req> {
    let heartbeat = (
        broker(),
        epoch(epochs.clone()),
        any::<bool>(),
        any::<bool>(),
        0..60i64,
        small_vec(
            (0..3u64)
                .prop_map(|d| Uuid::from_u64_pair(0x1001 + d, 7))
                .boxed(),
        ),
    )
        .prop_map(|(id, epoch, fence, shut_down, offset, offline)| {
            Req::BrokerHeartbeat(
                BrokerHeartbeatRequest::default()
                    .with_broker_id(id.into())
                    .with_broker_epoch(epoch)
                    .with_want_fence(fence)
                    .with_want_shut_down(shut_down)
                    .with_current_metadata_offset(offset)
                    .with_offline_log_dirs(offline),
            )
        });
    let unregister = broker().prop_map(|id| {
        Req::UnregisterBroker(UnregisterBrokerRequest::default().with_broker_id(id.into()))
    });
    let allocate = (broker(), epoch(epochs.clone())).prop_map(|(id, epoch)| {
        Req::AllocateProducerIds(
            AllocateProducerIdsRequest::default()
                .with_broker_id(id.into())
                .with_broker_epoch(epoch),
        )
    });
    prop_oneof![
        6 => heartbeat,
        1 => unregister,
        2 => allocate,
        3 => alter_partition(epochs.clone(), ids.clone()),
        2 => assign_replicas_to_dirs(epochs, ids),
    ]
    .boxed()
}

fn alter_partition(epochs: Vec<i64>, ids: Vec<Uuid>) -> BoxedStrategy<Req> {
    use alter_partition_request::{BrokerState, PartitionData, TopicData};
    let state = (broker(), prop_oneof![Just(-1i64), epoch(epochs.clone())]).prop_map(|(b, e)| {
        BrokerState::default()
            .with_broker_id(b.into())
            .with_broker_epoch(e)
    });
    let partition = (-1..3i32, 0..3i32, 0..3i32, small_vec(state.boxed()), 0..3i8).prop_map(
        |(index, leader_epoch, partition_epoch, isr, recovery)| {
            PartitionData::default()
                .with_partition_index(index)
                .with_leader_epoch(leader_epoch)
                .with_partition_epoch(partition_epoch)
                .with_new_isr(isr.iter().map(|b| b.broker_id).collect())
                .with_new_isr_with_epochs(isr)
                .with_leader_recovery_state(recovery)
        },
    );
    let topic = (topic_id(ids), small_vec(partition.boxed()))
        .prop_map(|(id, p)| TopicData::default().with_topic_id(id).with_partitions(p));
    (broker(), epoch(epochs), small_vec(topic.boxed()))
        .prop_map(|(id, epoch, topics)| {
            Req::AlterPartition(
                AlterPartitionRequest::default()
                    .with_broker_id(id.into())
                    .with_broker_epoch(epoch)
                    .with_topics(topics),
            )
        })
        .boxed()
}

fn assign_replicas_to_dirs(epochs: Vec<i64>, ids: Vec<Uuid>) -> BoxedStrategy<Req> {
    use assign_replicas_to_dirs_request::{DirectoryData, PartitionData, TopicData};
    let topic = (topic_id(ids), small_vec((-1..3i32).boxed())).prop_map(|(id, p)| {
        TopicData::default().with_topic_id(id).with_partitions(
            p.into_iter()
                .map(|i| PartitionData::default().with_partition_index(i))
                .collect(),
        )
    });
    let dir = (
        (0..4u64).prop_map(|d| Uuid::from_u64_pair(0x1000 + d, 7)),
        small_vec(topic.boxed()),
    )
        .prop_map(|(id, topics)| DirectoryData::default().with_id(id).with_topics(topics));
    (broker(), epoch(epochs), small_vec(dir.boxed()))
        .prop_map(|(id, epoch, directories)| {
            Req::AssignReplicasToDirs(
                AssignReplicasToDirsRequest::default()
                    .with_broker_id(id.into())
                    .with_broker_epoch(epoch)
                    .with_directories(directories),
            )
        })
        .boxed()
}

fn controller_apis() -> BoxedStrategy<Req> {
    use controller_registration_request::{Feature, Listener};
    let listener = (name(), name())
        .prop_map(|(n, h)| Listener::default().with_name(text(&n)).with_host(text(&h)));
    let feature = (name(), 0..3i16).prop_map(|(n, max)| {
        Feature::default()
            .with_name(text(&n))
            .with_max_supported_version(max)
    });
    let register = (
        3000..3003i32,
        small_vec(listener.boxed()),
        small_vec(feature.boxed()),
    )
        .prop_map(|(id, listeners, features)| {
            Req::ControllerRegistration(
                ControllerRegistrationRequest::default()
                    .with_controller_id(id)
                    .with_incarnation_id(Uuid::from_u128(id as u128))
                    .with_listeners(listeners)
                    .with_features(features),
            )
        });
    let describe = (0..4i8).prop_map(|t| {
        Req::DescribeCluster(DescribeClusterRequest::default().with_endpoint_type(t))
    });
    let voters = (prop::option::of(name()), 3000..3003i32).prop_flat_map(|(cluster, id)| {
        let cluster = cluster.map(|c| if c == "1" { CLUSTER_ID.to_owned() } else { c });
        let listener = add_raft_voter_request::Listener::default().with_name(text("CONTROLLER"));
        prop_oneof![
            Just(Req::AddRaftVoter(
                AddRaftVoterRequest::default()
                    .with_cluster_id(cluster.as_deref().map(text))
                    .with_voter_id(id)
                    .with_listeners(vec![listener]),
            )),
            Just(Req::RemoveRaftVoter(
                RemoveRaftVoterRequest::default()
                    .with_cluster_id(cluster.as_deref().map(text))
                    .with_voter_id(id),
            )),
        ]
    });
    prop_oneof![3 => register, 1 => describe, 1 => voters].boxed()
}

fn disabled_apis() -> BoxedStrategy<Req> {
    use create_acls_request::AclCreation;
    use create_delegation_token_request::CreatableRenewers;
    use delete_acls_request::DeleteAclsFilter;
    let describe = prop::option::of(name()).prop_map(|n| {
        Req::DescribeAcls(
            DescribeAclsRequest::default().with_resource_name_filter(n.as_deref().map(text)),
        )
    });
    let create = small_vec(name()).prop_map(|names| {
        Req::CreateAcls(
            CreateAclsRequest::default().with_creations(
                names
                    .iter()
                    .map(|n| AclCreation::default().with_principal(text(n)))
                    .collect(),
            ),
        )
    });
    let delete = small_vec(name()).prop_map(|names| {
        Req::DeleteAcls(
            DeleteAclsRequest::default().with_filters(
                names
                    .iter()
                    .map(|n| DeleteAclsFilter::default().with_host_filter(Some(text(n))))
                    .collect(),
            ),
        )
    });
    let tokens = (small_vec(name()), any::<i64>()).prop_flat_map(|(renewers, period)| {
        prop_oneof![
            Just(Req::CreateDelegationToken(
                CreateDelegationTokenRequest::default()
                    .with_max_lifetime_ms(period)
                    .with_renewers(
                        renewers
                            .iter()
                            .map(|r| CreatableRenewers::default().with_principal_name(text(r)))
                            .collect(),
                    ),
            )),
            Just(Req::RenewDelegationToken(
                RenewDelegationTokenRequest::default().with_renew_period_ms(period)
            )),
            Just(Req::ExpireDelegationToken(
                ExpireDelegationTokenRequest::default().with_expiry_time_period_ms(period)
            )),
        ]
    });
    prop_oneof![describe, create, delete, tokens].boxed()
}

/// A request of any controller API, with a version byte mapped into its served range.
fn request(epochs: Vec<i64>, ids: Vec<Uuid>) -> BoxedStrategy<(Req, u8)> {
    let requests: Vec<BoxedStrategy<Req>> = vec![
        create_topics(),
        delete_topics(ids.clone()),
        create_partitions(),
        elect_leaders(),
        incremental_alter_configs(),
        alter_configs(),
        describe_configs(),
        reassignments(),
        client_quotas(),
        scram(),
        update_features(),
        broker_registration(),
        broker_lifecycle(epochs, ids),
        controller_apis(),
        disabled_apis(),
    ];
    (Union::new(requests), any::<u8>()).boxed()
}

/// The world every case starts from: brokers 1-3 registered and unfenced, topics t0 (3
/// partitions × 2) and t1 (1 × 3). Deterministic, so its epochs and ids are known up front.
fn world() -> (TestNode, Vec<i64>, Vec<Uuid>) {
    let mut config = config(MetadataVersion::V4_1_IV1);
    config.delegation_tokens =
        Some(crate::handlers::delegation_tokens::DelegationTokenSettings::new("proptest-secret"));
    let mut node = TestNode::new(config);
    node.become_leader();
    let epochs = node.add_brokers(&[1, 2, 3]);
    let ids = vec![node.create_topic("t0", 3, 2), node.create_topic("t1", 1, 3)];
    (node, epochs, ids)
}

/// The checks on one result, independent of the controller's own result check.
fn check_result(result: &crate::controller::ControllerResult<crate::ControllerResponse>) {
    let sizes: Vec<usize> = result
        .records
        .iter()
        .map(|r| {
            r.encode()
                .unwrap_or_else(|e| panic!("{r:?} does not encode: {e}"))
                .len()
        })
        .collect();
    if result.atomic {
        assert!(
            batch_fits_sizes(sizes.len(), sizes.iter().sum()),
            "atomic result of {} records, {} bytes",
            sizes.len(),
            sizes.iter().sum::<usize>()
        );
    } else {
        assert!(sizes.iter().all(|s| batch_fits_sizes(1, *s)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_requests_of_every_api_never_panic_and_always_write_valid_results(
        requests in {
            let (_, epochs, ids) = world();
            prop::collection::vec(request(epochs, ids), 1..25)
        },
        commits in prop::collection::vec(any::<bool>(), 25),
    ) {
        let (mut node, _, _) = world();
        for (i, (request, version)) in requests.iter().enumerate() {
            let (_, min, max) = CONTROLLER_APIS
                .iter()
                .find(|(key, _, _)| *key == request.api_key())
                .copied()
                .expect("a controller API");
            let version = min + (i16::from(*version) % (max - min + 1));
            let mut ctx = node.ctx(version);
            // Token requests count only from a broker (forwarded); half of them come so.
            ctx.forwarded = matches!(
                request,
                Req::CreateDelegationToken(_) | Req::RenewDelegationToken(_) | Req::ExpireDelegationToken(_)
            ) && i % 2 == 0;
            let result = node.controller.handle(&ctx, request);
            prop_assert_eq!(node.controller.handler_panics(), 0, "{} panicked", request.name());
            check_result(&result);
            node.append(&result);
            if commits[i] {
                node.commit();
            }
            node.latest().check_invariants().unwrap();
        }
    }
}
