//! Broker registration, heartbeats, unfencing, fencing (C15) and controlled shutdown (C16).

use kafka_protocol::messages::BrokerRegistrationResponse;
use kraftwerk_records::metadata::{ApiMessageAndVersion, MetadataRecord};
use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use crate::controller::{ControllerRequest, ControllerResponse};
use crate::image::partition::NO_LEADER;
use crate::testing::{dir_of, registration, TestNode};

fn register(
    node: &mut TestNode,
    request: kafka_protocol::messages::BrokerRegistrationRequest,
) -> (BrokerRegistrationResponse, Vec<ApiMessageAndVersion>) {
    let (response, records) = node.request(4, ControllerRequest::BrokerRegistration(request));
    let ControllerResponse::BrokerRegistration(r) = response else {
        panic!()
    };
    (r, records)
}

#[test]
fn registration_uses_the_next_offset_as_broker_epoch_and_writes_a_fenced_v3_record() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let offset = node.next_offset();
    let (response, records) = register(&mut node, registration(1, Uuid::from_u64_pair(1, 1)));
    assert_eq!(response.error_code, 0);
    assert_eq!(response.broker_epoch, offset);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].version, 3);
    let MetadataRecord::RegisterBroker(r) = &records[0].record else {
        panic!()
    };
    assert_eq!((r.broker_id, r.broker_epoch, r.fenced), (1, offset, true));
    assert_eq!(r.log_dirs, vec![dir_of(1)]);
    assert_eq!(r.end_points[0].port, 9093);
    node.commit();
    let b = node.controller.image().cluster.broker(1).unwrap().clone();
    assert_eq!(b.registration_offset, offset);
}

#[test]
fn registration_at_3_3_has_no_log_dirs_and_record_v1() {
    let mut node = TestNode::active(MetadataVersion::V3_3_IV3);
    let mut request = registration(1, Uuid::from_u64_pair(1, 1));
    request.log_dirs.clear();
    let (response, records) = register(&mut node, request);
    assert_eq!(response.error_code, 0);
    assert_eq!(records[0].version, 1);
}

#[test]
fn registration_validations() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let mut wrong_cluster = registration(1, Uuid::from_u64_pair(1, 1));
    wrong_cluster.cluster_id = "other".into();
    assert_eq!(register(&mut node, wrong_cluster).0.error_code, 104);

    let mut zk = registration(1, Uuid::from_u64_pair(1, 1));
    zk.is_migrating_zk_broker = true;
    assert_eq!(register(&mut node, zk).0.error_code, 102);

    let mut no_dirs = registration(1, Uuid::from_u64_pair(1, 1));
    no_dirs.log_dirs.clear();
    assert_eq!(register(&mut node, no_dirs).0.error_code, 119);
    let mut reserved = registration(1, Uuid::from_u64_pair(1, 1));
    reserved.log_dirs = vec![Uuid::from_u64_pair(0, 1)];
    assert_eq!(register(&mut node, reserved).0.error_code, 119);
    let mut dup = registration(1, Uuid::from_u64_pair(1, 1));
    dup.log_dirs = vec![dir_of(1), dir_of(1)];
    assert_eq!(register(&mut node, dup).0.error_code, 119);

    // A broker that does not support the finalized metadata.version.
    let mut old = registration(1, Uuid::from_u64_pair(1, 1));
    old.features[0].max_supported_version = 26;
    assert_eq!(register(&mut node, old).0.error_code, 35);
    // A v<4 broker drops features with min 0: the finalized ELR/group/transaction levels fail.
    let mut dropped = registration(1, Uuid::from_u64_pair(1, 1));
    dropped.features.retain(|f| f.min_supported_version > 0);
    assert_eq!(register(&mut node, dropped).0.error_code, 35);
    let mut no_mv = registration(1, Uuid::from_u64_pair(1, 1));
    no_mv.features.remove(0);
    assert_eq!(register(&mut node, no_mv).0.error_code, 119);

    // None of the failures wrote anything.
    assert!(node.latest().cluster.broker(1).is_none());

    // A directory owned by another broker.
    node.register(1);
    node.commit();
    let mut stolen = registration(2, Uuid::from_u64_pair(2, 1));
    stolen.log_dirs = vec![dir_of(1)];
    assert_eq!(register(&mut node, stolen).0.error_code, 119);
}

#[test]
fn duplicate_registration_needs_a_live_session_of_another_incarnation() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let epoch = node.add_brokers(&[1])[0];
    // Live session, other incarnation: refused.
    let (r, _) = register(&mut node, registration(1, Uuid::from_u64_pair(9, 9)));
    assert_eq!(r.error_code, 101);
    // Same incarnation: amended, epoch and state kept.
    let (r, records) = register(&mut node, registration(1, Uuid::from_u64_pair(1, 1)));
    assert_eq!((r.error_code, r.broker_epoch), (0, epoch));
    let MetadataRecord::RegisterBroker(rec) = &records.last().unwrap().record else {
        panic!()
    };
    assert!(
        !rec.fenced,
        "an amended registration keeps the unfenced state"
    );
    node.commit();
    // After the session expires, the new incarnation registers with a new epoch.
    node.now_ms += 9_001;
    node.poll_until_idle();
    node.commit();
    let offset = node.next_offset();
    let (r, _) = register(&mut node, registration(1, Uuid::from_u64_pair(9, 9)));
    assert_eq!((r.error_code, r.broker_epoch), (0, offset));
    assert!(r.broker_epoch > epoch, "broker epochs are never reused");
}

#[test]
fn heartbeat_state_machine_unfences_once_caught_up() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let epoch = node.register(1);
    node.commit();
    let registration_offset = node
        .controller
        .image()
        .cluster
        .broker(1)
        .unwrap()
        .registration_offset;

    // Stale epoch.
    assert_eq!(node.heartbeat(1, epoch + 1, true, false, -1).error_code, 77);
    assert_eq!(node.heartbeat(7, 0, true, false, -1).error_code, 77);
    // Starting: WantFence, not caught up.
    let r = node.heartbeat(1, epoch, true, false, -1);
    assert_eq!(
        (
            r.error_code,
            r.is_caught_up,
            r.is_fenced,
            r.should_shut_down
        ),
        (0, false, true, false)
    );
    // Caught up but still wants to be fenced.
    let r = node.heartbeat(1, epoch, true, false, registration_offset);
    assert_eq!((r.is_caught_up, r.is_fenced), (true, true));
    // Wants to unfence but not caught up.
    let r = node.heartbeat(1, epoch, false, false, registration_offset - 1);
    assert_eq!((r.is_caught_up, r.is_fenced), (false, true));
    // Unfenced: record BrokerRegistrationChangeRecord(Fenced=-1) v0.
    let before = node.next_offset();
    let r = node.heartbeat(1, epoch, false, false, registration_offset);
    assert!(!r.is_fenced);
    let (_, record) = &node.log[before as usize];
    assert_eq!(record.version, 0);
    let MetadataRecord::BrokerRegistrationChange(c) = &record.record else {
        panic!("{record:?}")
    };
    assert_eq!((c.broker_id, c.broker_epoch, c.fenced), (1, epoch, -1));
    node.commit();
    assert!(!node.controller.image().cluster.broker(1).unwrap().fenced);
    // Steady state writes nothing.
    let before = node.next_offset();
    let r = node.heartbeat(1, epoch, false, false, before);
    assert!(!r.is_fenced && !r.should_shut_down);
    assert_eq!(node.next_offset(), before);
    // WantFence on an unfenced broker fences it.
    let r = node.heartbeat(1, epoch, true, false, before);
    assert!(r.is_fenced);
    node.commit();
    assert!(node.controller.image().cluster.broker(1).unwrap().fenced);
    // A fenced broker asking to shut down may do so at once.
    let r = node.heartbeat(1, epoch, false, true, before);
    assert!(r.should_shut_down && r.is_fenced);
}

#[test]
fn unfencing_elects_leaders_for_leaderless_partitions_after_the_unfence_record() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let epochs = node.add_brokers(&[1]);
    let topic = node.create_topic("t", 2, 1);
    // Fence broker 1 by WantFence: the partitions lose their leader. ELR is on (4.1-IV1) and the
    // ISR drops below min ISR 1, so the ISR becomes empty and broker 1 moves to the ELR.
    node.heartbeat(1, epochs[0], true, false, node.next_offset());
    node.commit();
    let p = node
        .controller
        .image()
        .topics
        .partition(&topic, 0)
        .unwrap()
        .clone();
    assert_eq!(p.leader, NO_LEADER);
    p.check_invariants().unwrap();
    // Unfence: first the registration change, then one election per partition.
    let before = node.next_offset() as usize;
    node.heartbeat(1, epochs[0], false, false, node.next_offset());
    let written: Vec<&ApiMessageAndVersion> = node.log[before..].iter().map(|(_, r)| r).collect();
    assert!(matches!(
        written[0].record,
        MetadataRecord::BrokerRegistrationChange(_)
    ));
    assert_eq!(written.len(), 3, "{written:?}");
    node.commit();
    for partition in 0..2 {
        let p = node
            .controller
            .image()
            .topics
            .partition(&topic, partition)
            .unwrap();
        assert_eq!(p.leader, 1);
        assert_eq!(p.isr, vec![1]);
    }
    node.controller.image().check_invariants().unwrap();
}

#[test]
fn unfencing_without_elr_uses_the_kept_isr_member() {
    let mut node = TestNode::active(MetadataVersion::V3_9_IV0);
    let epochs = node.add_brokers(&[1]);
    let topic = node.create_topic("t", 1, 1);
    node.heartbeat(1, epochs[0], true, false, node.next_offset());
    node.commit();
    let p = node
        .controller
        .image()
        .topics
        .partition(&topic, 0)
        .unwrap()
        .clone();
    assert_eq!(
        (p.leader, p.isr.clone(), p.elr.clone()),
        (NO_LEADER, vec![1], vec![])
    );
    node.heartbeat(1, epochs[0], false, false, node.next_offset());
    node.commit();
    assert_eq!(
        node.controller
            .image()
            .topics
            .partition(&topic, 0)
            .unwrap()
            .leader,
        1
    );
}

/// Case C15 (KAFKA-13173): two brokers' sessions expire in the same check. Each fencing result
/// must see the previous one's effect.
#[test]
fn fencing_several_expired_brokers_one_at_a_time() {
    for mv in [MetadataVersion::V3_9_IV0, MetadataVersion::V4_1_IV1] {
        let mut node = TestNode::active(mv);
        let epochs = node.add_brokers(&[1, 2, 3, 4]);
        // 50 partitions with RF 3 over 4 brokers.
        let topic = node.create_topic("c15", 50, 3);
        // Brokers 3 and 4 keep heartbeating; 1 and 2 freeze.
        let start = node.now_ms;
        for t in (start..start + 10_000).step_by(1_000) {
            node.now_ms = t;
            for (id, epoch) in [(3, epochs[2]), (4, epochs[3])] {
                let offset = node.next_offset();
                node.heartbeat(id, epoch, false, false, offset);
            }
            node.poll_until_idle();
        }
        node.now_ms = start + 9_001 + 1_000;
        let fenced_results = {
            let mut count = 0;
            while let Some(result) = node.controller.poll(node.now_ms, node.next_offset()) {
                let fences = result
                    .records
                    .iter()
                    .filter(|r| matches!(&r.record, MetadataRecord::BrokerRegistrationChange(c) if c.fenced == 1))
                    .count();
                assert!(fences <= 1, "one broker per result");
                count += fences;
                node.append(&result);
                node.controller.latest().check_invariants().unwrap();
            }
            count
        };
        assert_eq!(fenced_results, 2);
        node.commit();
        let image = node.controller.image();
        assert!(image.cluster.broker(1).unwrap().fenced && image.cluster.broker(2).unwrap().fenced);
        assert!(!image.cluster.broker(3).unwrap().fenced);
        let topic = image.topics.get(&topic).unwrap();
        for (id, p) in topic.partitions.iter() {
            assert!(
                p.leader != 1 && p.leader != 2,
                "partition {id}: fenced leader {p:?}"
            );
            let survivors: Vec<i32> = p
                .replicas
                .iter()
                .copied()
                .filter(|r| *r == 3 || *r == 4)
                .collect();
            if survivors.is_empty() {
                // Whole ISR was {1, 2}: leader -1. Without ELR the ISR keeps the member fenced
                // second (broker 2); with ELR the ISR is empty and both are in the ELR.
                assert_eq!(p.leader, NO_LEADER);
                if mv.is_elr_supported() {
                    assert!(p.isr.is_empty(), "{p:?}");
                } else {
                    assert_eq!(p.isr, vec![2], "{p:?}");
                }
            } else {
                assert!(
                    p.isr.iter().all(|r| *r == 3 || *r == 4),
                    "partition {id}: fenced ISR member {p:?}"
                );
                assert!(p.leader == 3 || p.leader == 4);
            }
        }
        image.check_invariants().unwrap();
    }
}

#[test]
fn failover_restarts_sessions_and_fences_nobody() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    node.add_brokers(&[1, 2]);
    node.now_ms += 8_000;
    node.controller.deactivate();
    node.become_leader();
    node.now_ms += 8_000;
    let written = node.poll_until_idle();
    assert!(
        written
            .iter()
            .all(|r| matches!(r.record, MetadataRecord::NoOp(_))),
        "{written:?}"
    );
    node.now_ms += 1_002;
    let written = node.poll_until_idle();
    assert_eq!(
        written.iter().filter(|r| matches!(&r.record, MetadataRecord::BrokerRegistrationChange(c) if c.fenced == 1)).count(),
        2
    );
}

/// Case C16 (KAFKA-14292): the controlled-shutdown target offset is recorded once, and the broker
/// may shut down once it leads nothing and every active broker reached that offset.
#[test]
fn controlled_shutdown_target_is_set_once() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let epochs = node.add_brokers(&[1, 2, 3]);
    let topic = node.create_topic("c16", 30, 3);
    let led_by_1 = node.controller.image().topics.partitions_led_by(1).len();
    assert!(led_by_1 > 0);
    // Broker 1 asks to shut down.
    let before = node.next_offset();
    let r = node.heartbeat(1, epochs[0], false, true, before);
    assert!(!r.should_shut_down && !r.is_fenced);
    let target = node.next_offset() - 1;
    assert!(target >= before);
    let written: Vec<_> = node.log[before as usize..]
        .iter()
        .map(|(_, r)| r.clone())
        .collect();
    assert!(
        matches!(&written[0].record, MetadataRecord::BrokerRegistrationChange(c) if c.in_controlled_shutdown == 1)
    );
    assert_eq!(written[0].version, 1);
    node.commit();
    assert!(
        node.controller
            .image()
            .topics
            .partitions_led_by(1)
            .is_empty(),
        "leadership moved away"
    );
    for p in node
        .controller
        .image()
        .topics
        .get(&topic)
        .unwrap()
        .partitions
        .values()
    {
        assert!(!p.isr.contains(&1), "{p:?}");
    }
    // NoOps keep coming, brokers 2 and 3 lag behind the target: no shutdown yet, and the
    // target does not move with further heartbeats.
    for _ in 0..3 {
        node.now_ms += 500;
        node.poll_until_idle();
        node.commit();
        let offset = node.next_offset();
        node.heartbeat(2, epochs[1], false, false, target - 1);
        node.heartbeat(3, epochs[2], false, false, target - 1);
        let r = node.heartbeat(1, epochs[0], false, true, offset);
        assert!(!r.should_shut_down);
        assert!(node.controller.is_active());
    }
    // Once both active brokers reach the target, the next heartbeat says shut down.
    node.heartbeat(2, epochs[1], false, false, target);
    node.heartbeat(3, epochs[2], false, false, target + 50);
    let r = node.heartbeat(1, epochs[0], false, true, node.next_offset());
    assert!(r.should_shut_down && r.is_fenced);
    node.commit();
    assert!(node.controller.image().cluster.broker(1).unwrap().fenced);
    node.controller.image().check_invariants().unwrap();
}

#[test]
fn preferred_leaders_come_back_after_the_imbalance_check() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let epochs = node.add_brokers(&[1, 2]);
    let topic = node.create_topic("pref", 4, 2);
    let preferred_by_1: Vec<i32> = node
        .controller
        .image()
        .topics
        .get(&topic)
        .unwrap()
        .partitions
        .iter()
        .filter(|(_, p)| p.replicas[0] == 1)
        .map(|(id, _)| *id)
        .collect();
    assert!(!preferred_by_1.is_empty());
    // Broker 1 is fenced and comes back: its partitions stay with broker 2.
    node.heartbeat(1, epochs[0], true, false, node.next_offset());
    node.commit();
    let offset = node.next_offset();
    node.heartbeat(1, epochs[0], false, false, offset);
    node.commit();
    for id in &preferred_by_1 {
        assert_eq!(
            node.controller
                .image()
                .topics
                .partition(&topic, *id)
                .unwrap()
                .leader,
            2
        );
    }
    // ISR expansion (the broker caught up) through AlterPartition is the broker's job; do it.
    for id in &preferred_by_1 {
        let p = node
            .controller
            .latest()
            .topics
            .partition(&topic, *id)
            .unwrap()
            .clone();
        let mut isr = p.isr.clone();
        if !isr.contains(&1) {
            isr.push(1);
        }
        let data = kafka_protocol::messages::alter_partition_request::PartitionData::default()
            .with_partition_index(*id)
            .with_leader_epoch(p.leader_epoch)
            .with_partition_epoch(p.partition_epoch)
            .with_new_isr_with_epochs(
                isr.iter()
                    .map(|b| {
                        kafka_protocol::messages::alter_partition_request::BrokerState::default()
                            .with_broker_id((*b).into())
                            .with_broker_epoch(-1)
                    })
                    .collect(),
            );
        let request = kafka_protocol::messages::AlterPartitionRequest::default()
            .with_broker_id(2.into())
            .with_broker_epoch(epochs[1])
            .with_topics(vec![
                kafka_protocol::messages::alter_partition_request::TopicData::default()
                    .with_topic_id(topic)
                    .with_partitions(vec![data]),
            ]);
        node.request(3, ControllerRequest::AlterPartition(request));
    }
    node.commit();
    // Keep sessions alive until the five-minute check.
    let activation = 1_000;
    while node.now_ms < activation + 300_000 {
        node.now_ms += 2_000;
        for (id, epoch) in [(1, epochs[0]), (2, epochs[1])] {
            let offset = node.next_offset();
            node.heartbeat(id, epoch, false, false, offset);
        }
        node.poll_until_idle();
        node.commit();
    }
    for id in &preferred_by_1 {
        let p = node
            .controller
            .image()
            .topics
            .partition(&topic, *id)
            .unwrap();
        assert_eq!(
            p.leader, 1,
            "partition {id} back on its preferred leader: {p:?}"
        );
    }
    assert_eq!(
        node.controller
            .image()
            .topics
            .imbalanced_partitions()
            .count(),
        0
    );
}

#[test]
fn unclean_election_check_elects_out_of_sync_replicas_when_the_topic_allows_it() {
    use kraftwerk_records::metadata::ConfigRecord;
    let mut node = TestNode::active(MetadataVersion::V3_9_IV0);
    let epochs = node.add_brokers(&[1, 2]);
    let topic = node.create_topic("u", 1, 2);
    let p = node
        .controller
        .image()
        .topics
        .partition(&topic, 0)
        .unwrap()
        .clone();
    let (leader, other) = (p.leader, if p.leader == 1 { 2 } else { 1 });
    let epoch_of = |b: i32| epochs[(b - 1) as usize];
    // Shrink the ISR to the leader, then fence the leader: the partition goes offline.
    let data = kafka_protocol::messages::alter_partition_request::PartitionData::default()
        .with_partition_index(0)
        .with_leader_epoch(p.leader_epoch)
        .with_partition_epoch(p.partition_epoch)
        .with_new_isr_with_epochs(vec![
            kafka_protocol::messages::alter_partition_request::BrokerState::default()
                .with_broker_id(leader.into())
                .with_broker_epoch(-1),
        ]);
    let request = kafka_protocol::messages::AlterPartitionRequest::default()
        .with_broker_id(leader.into())
        .with_broker_epoch(epoch_of(leader))
        .with_topics(vec![
            kafka_protocol::messages::alter_partition_request::TopicData::default()
                .with_topic_id(topic)
                .with_partitions(vec![data]),
        ]);
    node.request(3, ControllerRequest::AlterPartition(request));
    node.heartbeat(leader, epoch_of(leader), true, false, node.next_offset());
    node.commit();
    assert_eq!(
        node.controller
            .image()
            .topics
            .partition(&topic, 0)
            .unwrap()
            .leader,
        NO_LEADER
    );
    // Allow unclean elections for the topic.
    let config = ConfigRecord {
        resource_type: 2,
        resource_name: "u".into(),
        name: "unclean.leader.election.enable".into(),
        value: Some("true".into()),
        ..Default::default()
    };
    node.append(&crate::controller::ControllerResult::of(
        vec![ApiMessageAndVersion::new(config, 0)],
        (),
    ));
    node.commit();
    while node.now_ms < 1_000 + 300_000 {
        node.now_ms += 2_000;
        let offset = node.next_offset();
        node.heartbeat(other, epoch_of(other), false, false, offset);
        node.poll_until_idle();
        node.commit();
    }
    let p = node
        .controller
        .image()
        .topics
        .partition(&topic, 0)
        .unwrap()
        .clone();
    assert_eq!((p.leader, p.isr.clone()), (other, vec![other]));
    assert_eq!(
        p.leader_recovery_state,
        crate::image::partition::LeaderRecoveryState::Recovering
    );
}

/// KIP-966 unclean-shutdown handling on registration (Kafka 4.1.2 `handleBrokerShutdown`): a
/// broker that restarts without a clean shutdown (PreviousBrokerEpoch ≠ its registered epoch)
/// leaves every ELR; a clean restart keeps its ELR membership.
#[test]
fn re_registration_after_unclean_shutdown_leaves_the_elr() {
    use kraftwerk_records::metadata::ConfigRecord;
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let epochs = node.add_brokers(&[1, 2, 3]);
    let mut request = crate::testing::create_topics(&[("elr", 1, 3)]);
    request.topics[0].configs = vec![
        kafka_protocol::messages::create_topics_request::CreatableTopicConfig::default()
            .with_name("min.insync.replicas".into())
            .with_value(Some("3".into())),
    ];
    let (_, records) = node.request(7, ControllerRequest::CreateTopics(request));
    assert!(records.iter().any(|r| matches!(&r.record, MetadataRecord::Config(ConfigRecord { name, .. }) if name == "min.insync.replicas")));
    node.commit();
    let topic = node
        .controller
        .image()
        .topics
        .get_by_name("elr")
        .unwrap()
        .id;
    let leader = node
        .controller
        .image()
        .topics
        .partition(&topic, 0)
        .unwrap()
        .leader;
    let others: Vec<i32> = [1, 2, 3].into_iter().filter(|b| *b != leader).collect();
    // Both followers are fenced: the ISR drops below min ISR 3, so they move to the ELR.
    for b in &others {
        let offset = node.next_offset();
        node.heartbeat(*b, epochs[(*b - 1) as usize], true, false, offset);
    }
    node.commit();
    let p = node
        .controller
        .image()
        .topics
        .partition(&topic, 0)
        .unwrap()
        .clone();
    assert_eq!(p.isr, vec![leader]);
    let mut elr = p.elr.clone();
    elr.sort_unstable();
    assert_eq!(elr, others);
    // Let the fenced brokers' sessions lapse while the leader keeps heartbeating.
    for _ in 0..6 {
        node.now_ms += 2_000;
        let offset = node.next_offset();
        node.heartbeat(leader, epochs[(leader - 1) as usize], false, false, offset);
        node.poll_until_idle();
        node.commit();
    }
    // Unclean restart of the first follower: it leaves the ELR before re-registering.
    let unclean = others[0];
    let mut request = registration(unclean, Uuid::from_u64_pair(50, 50));
    request.previous_broker_epoch = -1;
    let (response, records) = register(&mut node, request);
    assert_eq!(response.error_code, 0);
    assert!(
        matches!(&records[0].record, MetadataRecord::PartitionChange(c) if c.eligible_leader_replicas == Some(vec![others[1]])),
        "{records:?}"
    );
    assert!(matches!(
        records.last().unwrap().record,
        MetadataRecord::RegisterBroker(_)
    ));
    node.commit();
    // Clean restart of the second: PreviousBrokerEpoch matches, it stays in the ELR.
    let clean = others[1];
    let mut request = registration(clean, Uuid::from_u64_pair(60, 60));
    request.previous_broker_epoch = epochs[(clean - 1) as usize];
    let (response, records) = register(&mut node, request);
    assert_eq!(response.error_code, 0);
    assert_eq!(records.len(), 1, "{records:?}");
    node.commit();
    let p = node
        .controller
        .image()
        .topics
        .partition(&topic, 0)
        .unwrap()
        .clone();
    assert_eq!(p.elr, vec![clean]);
    node.controller.image().check_invariants().unwrap();
}

/// KAFKA-15019 class: a heartbeat that arrived inside the session but waited behind a slow
/// batch until after the session's end keeps the broker unfenced. The network layer reports
/// the arrival ([`crate::Controller::note_broker_contact`]) before the node gets to the
/// request; the request itself counts from the same arrival time (`RequestContext::received_ms`).
#[test]
fn a_heartbeat_that_arrived_in_time_but_is_handled_late_keeps_the_broker_unfenced() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let epochs = node.add_brokers(&[1, 2]);
    let session_ms = node.controller.config().session_timeout_ms;
    let last_contact = node.now_ms;
    // Broker 1's heartbeat arrives 1 s before its session ends; broker 2 sends nothing.
    let arrived = last_contact + session_ms - 1_000;
    node.controller.note_broker_contact(1, epochs[0], arrived);
    // The node was busy until 2 s after the session end; its timers run first.
    node.now_ms = last_contact + session_ms + 2_000;
    node.poll_until_idle();
    node.commit();
    let image = node.controller.image();
    assert!(
        !image.cluster.broker(1).unwrap().fenced,
        "1 heartbeat in time"
    );
    assert!(image.cluster.broker(2).unwrap().fenced, "2 went silent");
    // Then the heartbeat itself is handled, stamped with its arrival.
    let request = kafka_protocol::messages::BrokerHeartbeatRequest::default()
        .with_broker_id(1.into())
        .with_broker_epoch(epochs[0])
        .with_current_metadata_offset(node.next_offset());
    let mut ctx = node.ctx(1);
    ctx.received_ms = arrived;
    let result = node
        .controller
        .handle(&ctx, &ControllerRequest::BrokerHeartbeat(request));
    let ControllerResponse::BrokerHeartbeat(r) = &result.response else {
        panic!("wrong response")
    };
    assert_eq!((r.error_code, r.is_fenced), (0, false));
    // Its session runs from the arrival: still live 1 ms before arrival + timeout...
    node.append(&result);
    node.now_ms = arrived + session_ms;
    node.poll_until_idle();
    node.commit();
    assert!(!node.controller.image().cluster.broker(1).unwrap().fenced);
    // ...and over after it.
    node.now_ms = arrived + session_ms + 1;
    node.poll_until_idle();
    node.commit();
    assert!(node.controller.image().cluster.broker(1).unwrap().fenced);
}

/// UnregisterController (KIP-1312) is served: in the served list at v0, a controller request,
/// and its error answer is Java's (`getErrorResponse`: code and the exception's message). What
/// it does at each metadata.version is in `levels.rs`.
#[test]
fn unregister_controller_is_served() {
    use crate::api::ControllerApi;
    use kafka_protocol::messages::{ApiKey, RequestKind, UnregisterControllerRequest};
    assert!(crate::CONTROLLER_APIS
        .iter()
        .any(|(api, min, max)| *api == ApiKey::UnregisterController && (*min, *max) == (0, 0)));
    let request = UnregisterControllerRequest::default().with_controller_id(3001);
    assert!(
        crate::ControllerRequest::from_kind(RequestKind::UnregisterController(request.clone()))
            .is_ok()
    );
    let answer = request.error_response(41, Some("not the controller"));
    assert_eq!(answer.error_code, 41);
    assert_eq!(answer.error_message.as_deref(), Some("not the controller"));
}
