//! AlterPartition (C17) and AssignReplicasToDirs.

use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::assign_replicas_to_dirs_request as dirs;
use kafka_protocol::messages::{
    AlterPartitionRequest, AlterPartitionResponse, AssignReplicasToDirsRequest,
    AssignReplicasToDirsResponse,
};
use kraftwerk_records::metadata::MetadataRecord;
use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use crate::controller::{ControllerRequest, ControllerResponse};
use crate::image::partition::PartitionRegistration;
use crate::testing::{dir_of, TestNode};

struct Setup {
    node: TestNode,
    epochs: Vec<i64>,
    topic: Uuid,
}

/// RF 3 on brokers 1..3, one partition led by broker 1, ISR {1, 2, 3}.
fn setup(mv: MetadataVersion) -> Setup {
    let mut node = TestNode::active(mv);
    let epochs = node.add_brokers(&[1, 2, 3]);
    let topic = node.create_topic("c17", 1, 3);
    // Make broker 1 the leader regardless of placement.
    let p = node
        .controller
        .image()
        .topics
        .partition(&topic, 0)
        .unwrap()
        .clone();
    assert_eq!(p.isr.len(), 3);
    Setup {
        node,
        epochs,
        topic,
    }
}

fn partition(node: &TestNode, topic: &Uuid) -> PartitionRegistration {
    (**node.controller.latest().topics.partition(topic, 0).unwrap()).clone()
}

fn alter(
    s: &mut Setup,
    version: i16,
    sender: i32,
    leader_epoch: i32,
    partition_epoch: i32,
    isr: &[(i32, i64)],
) -> (AlterPartitionResponse, usize) {
    let sender_epoch = s.epochs[(sender - 1) as usize];
    let data = PartitionData::default()
        .with_partition_index(0)
        .with_leader_epoch(leader_epoch)
        .with_partition_epoch(partition_epoch)
        .with_new_isr(isr.iter().map(|(b, _)| (*b).into()).collect())
        .with_new_isr_with_epochs(
            isr.iter()
                .map(|(b, e)| {
                    BrokerState::default()
                        .with_broker_id((*b).into())
                        .with_broker_epoch(*e)
                })
                .collect(),
        );
    let request = AlterPartitionRequest::default()
        .with_broker_id(sender.into())
        .with_broker_epoch(sender_epoch)
        .with_topics(vec![TopicData::default()
            .with_topic_id(s.topic)
            .with_partitions(vec![data])]);
    let (response, records) = s
        .node
        .request(version, ControllerRequest::AlterPartition(request));
    let ControllerResponse::AlterPartition(r) = response else {
        panic!()
    };
    (r, records.len())
}

fn code(r: &AlterPartitionResponse) -> i16 {
    r.topics[0].partitions[0].error_code
}

#[test]
fn shrink_then_expand_echoes_the_state_after_the_record() {
    let mut s = setup(MetadataVersion::V4_1_IV1);
    let p = partition(&s.node, &s.topic);
    let leader = p.leader;
    let others: Vec<i32> = p
        .replicas
        .iter()
        .copied()
        .filter(|r| *r != leader)
        .collect();
    let epochs = s.epochs.clone();
    let e = |b: i32| epochs[(b - 1) as usize];
    let (r, n) = alter(
        &mut s,
        3,
        leader,
        p.leader_epoch,
        p.partition_epoch,
        &[(leader, e(leader)), (others[0], e(others[0]))],
    );
    assert_eq!((code(&r), n), (0, 1));
    let out = &r.topics[0].partitions[0];
    let after = partition(&s.node, &s.topic);
    assert_eq!(*out.leader_id, after.leader);
    assert_eq!(out.isr.iter().map(|b| **b).collect::<Vec<_>>(), after.isr);
    assert_eq!(out.partition_epoch, p.partition_epoch + 1);
    assert_eq!(
        out.leader_epoch, p.leader_epoch,
        "ISR shrink keeps the leader epoch from 3.6 on"
    );
    assert_eq!(
        (after.partition_epoch, after.leader_epoch),
        (out.partition_epoch, out.leader_epoch)
    );
    // Expand back with v2 (no broker epochs).
    let (r, n) = alter(
        &mut s,
        2,
        leader,
        after.leader_epoch,
        after.partition_epoch,
        &[(leader, -1), (others[0], -1), (others[1], -1)],
    );
    assert_eq!((code(&r), n), (0, 1));
    assert_eq!(partition(&s.node, &s.topic).isr.len(), 3);
    // An unchanged ISR writes nothing and echoes the current state.
    let now = partition(&s.node, &s.topic);
    let isr: Vec<(i32, i64)> = now.isr.iter().map(|b| (*b, -1)).collect();
    let (r, n) = alter(
        &mut s,
        3,
        leader,
        now.leader_epoch,
        now.partition_epoch,
        &isr,
    );
    assert_eq!((code(&r), n), (0, 0));
    assert_eq!(
        r.topics[0].partitions[0].partition_epoch,
        now.partition_epoch
    );
}

/// Case C17 (KAFKA-13916 / KIP-841, KAFKA-14154).
#[test]
fn alter_partition_errors() {
    let mut s = setup(MetadataVersion::V4_1_IV1);
    let p = partition(&s.node, &s.topic);
    let leader = p.leader;
    let follower = p.replicas.iter().copied().find(|r| *r != leader).unwrap();
    let third = p
        .replicas
        .iter()
        .copied()
        .find(|r| *r != leader && *r != follower)
        .unwrap();
    let (le, pe) = (p.leader_epoch, p.partition_epoch);
    let ep = |s: &Setup, b: i32| s.epochs[(b - 1) as usize];

    // Fence `third` by stopping its heartbeats: ISR shrinks to the other two.
    let start = s.node.now_ms;
    for t in (start..=start + 10_000).step_by(1_000) {
        s.node.now_ms = t;
        for b in [leader, follower] {
            let e = ep(&s, b);
            let offset = s.node.next_offset();
            s.node.heartbeat(b, e, false, false, offset);
        }
        s.node.poll_until_idle();
    }
    s.node.commit();
    let p = partition(&s.node, &s.topic);
    assert!(!p.isr.contains(&third));
    let (le, pe) = (p.leader_epoch.max(le), p.partition_epoch.max(pe));

    // Adding the fenced broker back: INELIGIBLE_REPLICA, nothing written.
    let full = [
        (leader, ep(&s, leader)),
        (follower, ep(&s, follower)),
        (third, ep(&s, third)),
    ];
    let (r, n) = alter(&mut s, 3, leader, le, pe, &full);
    assert_eq!((code(&r), n), (107, 0));
    assert_eq!(partition(&s.node, &s.topic).isr, p.isr);

    // Unfence `third`: it may rejoin.
    let offset = s.node.next_offset();
    let e3 = ep(&s, third);
    s.node.heartbeat(third, e3, false, false, offset);
    s.node.commit();
    let (r, _) = alter(&mut s, 3, leader, le, pe, &full);
    assert_eq!(code(&r), 0, "an unfenced broker may rejoin");
    let p = partition(&s.node, &s.topic);
    let (le, pe) = (p.leader_epoch, p.partition_epoch);
    // Shrink again for the checks below.
    let two = [(leader, ep(&s, leader)), (follower, ep(&s, follower))];
    let (r, _) = alter(&mut s, 3, leader, le, pe, &two);
    assert_eq!(code(&r), 0);
    let p = partition(&s.node, &s.topic);
    let (le, pe) = (p.leader_epoch, p.partition_epoch);

    // A wrong broker epoch for a new ISR member: INELIGIBLE_REPLICA (v3 only).
    let wrong = [
        (leader, ep(&s, leader)),
        (follower, ep(&s, follower)),
        (third, ep(&s, third) + 1),
    ];
    assert_eq!(code(&alter(&mut s, 3, leader, le, pe, &wrong).0), 107);
    // Epochs ahead of the controller's: NOT_CONTROLLER.
    assert_eq!(code(&alter(&mut s, 3, leader, le + 1, pe, &two).0), 41);
    assert_eq!(code(&alter(&mut s, 3, leader, le, pe + 1, &two).0), 41);
    // Older leader epoch: FENCED_LEADER_EPOCH; older partition epoch: INVALID_UPDATE_VERSION.
    if le > 0 {
        assert_eq!(code(&alter(&mut s, 3, leader, le - 1, pe, &two).0), 74);
    }
    assert_eq!(code(&alter(&mut s, 3, leader, le, pe - 1, &two).0), 95);
    // Sender is not the leader: INVALID_REQUEST.
    assert_eq!(code(&alter(&mut s, 3, follower, le, pe, &two).0), 42);
    // ISR without the leader, or with a non-replica: INVALID_REQUEST.
    assert_eq!(
        code(&alter(&mut s, 3, leader, le, pe, &[(follower, -1)]).0),
        42
    );
    assert_eq!(
        code(&alter(&mut s, 3, leader, le, pe, &[(leader, -1), (99, -1)]).0),
        42
    );
    // Unknown topic id.
    let mut request = AlterPartitionRequest::default()
        .with_broker_id(leader.into())
        .with_broker_epoch(ep(&s, leader));
    request.topics = vec![TopicData::default()
        .with_topic_id(Uuid::from_u64_pair(9, 9))
        .with_partitions(vec![PartitionData::default().with_partition_index(0)])];
    let (response, _) = s
        .node
        .request(3, ControllerRequest::AlterPartition(request));
    let ControllerResponse::AlterPartition(r) = response else {
        panic!()
    };
    assert_eq!(code(&r), 100);
    // Stale sender epoch: top-level STALE_BROKER_EPOCH.
    let request = AlterPartitionRequest::default()
        .with_broker_id(leader.into())
        .with_broker_epoch(-5);
    let (response, _) = s
        .node
        .request(3, ControllerRequest::AlterPartition(request));
    let ControllerResponse::AlterPartition(r) = response else {
        panic!()
    };
    assert_eq!(r.error_code, 77);
    // Nothing above changed the partition.
    assert_eq!(partition(&s.node, &s.topic).partition_epoch, pe);
}

#[test]
fn in_controlled_shutdown_replicas_are_ineligible() {
    let mut s = setup(MetadataVersion::V4_1_IV1);
    let p = partition(&s.node, &s.topic);
    let leader = p.leader;
    let follower = p.replicas.iter().copied().find(|r| *r != leader).unwrap();
    let other = p
        .replicas
        .iter()
        .copied()
        .find(|r| *r != leader && *r != follower)
        .unwrap();
    let ep = |s: &Setup, b: i32| s.epochs[(b - 1) as usize];
    // Shrink to {leader, follower}.
    let (r, _) = alter(
        &mut s,
        3,
        leader,
        p.leader_epoch,
        p.partition_epoch,
        &[(leader, -1), (follower, -1)],
    );
    assert_eq!(code(&r), 0);
    // Give `other` a leadership so WantShutDown puts it in controlled shutdown.
    s.node.create_topic("led", 3, 1);
    let offset = s.node.next_offset();
    let e = ep(&s, other);
    let hb = s.node.heartbeat(other, e, false, true, offset);
    // Three single-replica partitions over three brokers: striped placement gives each one.
    assert!(
        s.node
            .controller
            .latest()
            .cluster
            .broker(other)
            .unwrap()
            .in_controlled_shutdown
    );
    assert!(!hb.should_shut_down);
    let p = partition(&s.node, &s.topic);
    let (r, n) = alter(
        &mut s,
        3,
        leader,
        p.leader_epoch,
        p.partition_epoch,
        &[(leader, -1), (follower, -1), (other, -1)],
    );
    assert_eq!((code(&r), n), (107, 0));
}

#[test]
fn assign_replicas_to_dirs() {
    let mut s = setup(MetadataVersion::V4_1_IV1);
    let broker = 1;
    let epoch = s.epochs[0];
    let request = AssignReplicasToDirsRequest::default()
        .with_broker_id(broker.into())
        .with_broker_epoch(epoch)
        .with_directories(vec![dirs::DirectoryData::default()
            .with_id(dir_of(broker))
            .with_topics(vec![
                dirs::TopicData::default()
                    .with_topic_id(s.topic)
                    .with_partitions(vec![
                        dirs::PartitionData::default().with_partition_index(0),
                        dirs::PartitionData::default().with_partition_index(5),
                    ]),
                dirs::TopicData::default()
                    .with_topic_id(Uuid::from_u64_pair(4, 4))
                    .with_partitions(vec![dirs::PartitionData::default().with_partition_index(0)]),
            ])]);
    let (response, records) = s
        .node
        .request(0, ControllerRequest::AssignReplicasToDirs(request.clone()));
    let ControllerResponse::AssignReplicasToDirs(r): ControllerResponse = response else {
        panic!()
    };
    let r: AssignReplicasToDirsResponse = r;
    let codes: Vec<i16> = r.directories[0]
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| p.error_code))
        .collect();
    assert_eq!(codes, vec![0, 3, 100]);
    // The directory is already the default one: nothing to write.
    assert!(records.is_empty());
    // A new directory for broker 1's replica is recorded.
    let mut moved = request;
    moved.directories[0].id = Uuid::from_u64_pair(0xabc, 1);
    moved.directories[0].topics.truncate(1);
    moved.directories[0].topics[0].partitions.truncate(1);
    let (_, records) = s
        .node
        .request(0, ControllerRequest::AssignReplicasToDirs(moved));
    // The new directory is not registered (offline for broker 1): the record moves the replica
    // and leadership/ISR updates follow.
    let MetadataRecord::PartitionChange(c) = &records[0].record else {
        panic!("{records:?}")
    };
    let p = partition(&s.node, &s.topic);
    let index = p.replicas.iter().position(|r| *r == 1).unwrap();
    assert_eq!(
        c.directories.as_ref().unwrap()[index],
        Uuid::from_u64_pair(0xabc, 1)
    );
    assert!(!p.isr.contains(&1) || p.isr.len() == 1, "{p:?}");
    s.node.commit();
    s.node.controller.image().check_invariants().unwrap();
    // Wrong epoch.
    let stale = AssignReplicasToDirsRequest::default()
        .with_broker_id(1.into())
        .with_broker_epoch(epoch + 100);
    let (response, _) = s
        .node
        .request(0, ControllerRequest::AssignReplicasToDirs(stale));
    let ControllerResponse::AssignReplicasToDirs(r) = response else {
        panic!()
    };
    assert_eq!(r.error_code, 77);
}

/// JBOD: a heartbeat reporting a failed directory moves leadership off the replicas in it and
/// records the remaining online directories (BrokerRegistrationChangeRecord v2).
#[test]
fn offline_log_dir_in_heartbeat_moves_leadership() {
    let mut node = TestNode::active(MetadataVersion::V4_1_IV1);
    let dir_a = Uuid::from_u64_pair(0xA, 1);
    let dir_b = Uuid::from_u64_pair(0xB, 1);
    let mut request = crate::testing::registration(1, Uuid::from_u64_pair(1, 1));
    request.log_dirs = vec![dir_a, dir_b];
    node.request(4, ControllerRequest::BrokerRegistration(request));
    node.register(2);
    node.commit();
    let e1 = node.controller.image().cluster.broker(1).unwrap().epoch;
    let e2 = node.controller.image().cluster.broker(2).unwrap().epoch;
    for (b, e) in [(1, e1), (2, e2)] {
        let offset = node.next_offset();
        node.heartbeat(b, e, false, false, offset);
    }
    node.commit();
    // Broker 1 leads a partition replicated on 1 and 2 (manual assignment), replica in dir A.
    let mut create = crate::testing::create_topics(&[("jbod", -1, -1)]);
    create.topics[0].assignments = vec![
        kafka_protocol::messages::create_topics_request::CreatableReplicaAssignment::default()
            .with_partition_index(0)
            .with_broker_ids(vec![1.into(), 2.into()]),
    ];
    node.request(7, ControllerRequest::CreateTopics(create));
    node.commit();
    let topic = node
        .controller
        .image()
        .topics
        .get_by_name("jbod")
        .unwrap()
        .id;
    assert_eq!(
        node.controller
            .image()
            .topics
            .partition(&topic, 0)
            .unwrap()
            .directories[0],
        crate::ids::DIRECTORY_UNASSIGNED
    );
    let assign = AssignReplicasToDirsRequest::default()
        .with_broker_id(1.into())
        .with_broker_epoch(e1)
        .with_directories(vec![dirs::DirectoryData::default()
            .with_id(dir_a)
            .with_topics(vec![dirs::TopicData::default()
                .with_topic_id(topic)
                .with_partitions(vec![
                    dirs::PartitionData::default().with_partition_index(0)
                ])])]);
    node.request(0, ControllerRequest::AssignReplicasToDirs(assign));
    node.commit();
    assert_eq!(
        node.controller
            .image()
            .topics
            .partitions_in_directory(&dir_a)
            .len(),
        1
    );
    assert_eq!(
        node.controller
            .image()
            .topics
            .partition(&topic, 0)
            .unwrap()
            .leader,
        1
    );
    // Heartbeat v1 with dir A offline.
    let before = node.next_offset() as usize;
    let heartbeat = kafka_protocol::messages::BrokerHeartbeatRequest::default()
        .with_broker_id(1.into())
        .with_broker_epoch(e1)
        .with_current_metadata_offset(node.next_offset())
        .with_offline_log_dirs(vec![dir_a]);
    node.request(1, ControllerRequest::BrokerHeartbeat(heartbeat));
    let written: Vec<_> = node.log[before..].iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(written.len(), 2, "{written:?}");
    assert!(
        matches!(&written[0].record, MetadataRecord::PartitionChange(c) if c.leader == 2 && c.isr == Some(vec![2]))
    );
    assert_eq!(written[1].version, 2);
    assert!(
        matches!(&written[1].record, MetadataRecord::BrokerRegistrationChange(c) if c.log_dirs == vec![dir_b])
    );
    node.commit();
    assert_eq!(
        node.controller
            .image()
            .cluster
            .broker(1)
            .unwrap()
            .directories,
        vec![dir_b]
    );
    // Reporting it again changes nothing.
    let before = node.next_offset();
    let heartbeat = kafka_protocol::messages::BrokerHeartbeatRequest::default()
        .with_broker_id(1.into())
        .with_broker_epoch(e1)
        .with_current_metadata_offset(before)
        .with_offline_log_dirs(vec![dir_a]);
    node.request(1, ControllerRequest::BrokerHeartbeat(heartbeat));
    assert_eq!(node.next_offset(), before);
    node.controller.image().check_invariants().unwrap();
}
