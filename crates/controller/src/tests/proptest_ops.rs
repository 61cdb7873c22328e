//! Random operation sequences against the controller, checking the image invariants after every
//! step: leader ∈ ISR or -1, ISR ⊆ replicas, no fenced leader, indexes consistent, broker epochs
//! never reused, producer-id blocks increasing, and a standby replaying the committed log builds
//! the same image as the active controller.

use std::collections::BTreeSet;

use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::{
    AllocateProducerIdsRequest, AlterPartitionRequest, DeleteTopicsRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata_version::MetadataVersion;
use proptest::prelude::*;
use uuid::Uuid;

use crate::controller::{Controller, ControllerRequest, ControllerResponse};
use crate::testing::{config, create_topics, registration, TestNode};

#[derive(Clone, Debug)]
enum Op {
    Register(i32, u8),
    Heartbeat {
        broker: i32,
        want_fence: bool,
        want_shut_down: bool,
    },
    Advance(u64),
    CreateTopic {
        partitions: i32,
        rf: i16,
    },
    DeleteTopic(usize),
    Shrink(usize),
    Expand(usize),
    Allocate(i32),
    Commit,
    Failover,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (1..6i32, 0..3u8).prop_map(|(b, i)| Op::Register(b, i)),
        4 => (1..6i32, prop::bool::weighted(0.15), prop::bool::weighted(0.1))
            .prop_map(|(broker, want_fence, want_shut_down)| Op::Heartbeat { broker, want_fence, want_shut_down }),
        1 => (0..6_000u64).prop_map(Op::Advance),
        2 => (1..4i32, 1..4i16).prop_map(|(partitions, rf)| Op::CreateTopic { partitions, rf }),
        1 => (0..8usize).prop_map(Op::DeleteTopic),
        2 => (0..64usize).prop_map(Op::Shrink),
        2 => (0..64usize).prop_map(Op::Expand),
        1 => (1..6i32).prop_map(Op::Allocate),
        2 => Just(Op::Commit),
        1 => Just(Op::Failover),
    ]
}

struct World {
    node: TestNode,
    standby: Controller,
    epochs_seen: BTreeSet<i64>,
    topics_created: usize,
    last_block: i64,
}

impl World {
    fn broker_epoch(&self, id: i32) -> Option<i64> {
        self.node.latest().cluster.broker(id).map(|b| b.epoch)
    }

    fn check(&mut self) {
        let image = self.node.latest();
        image.check_invariants().unwrap();
        for topic in image.topics.iter() {
            for p in topic.partitions.values() {
                if p.leader != -1 {
                    let leader = image.cluster.broker(p.leader).expect("leader registered");
                    assert!(
                        !leader.fenced,
                        "fenced leader {} of {}: {p:?}",
                        p.leader, topic.name
                    );
                }
            }
        }
        for broker in image.cluster.brokers() {
            // Each epoch belongs to one registration: record new ones, and they must be fresh.
            if self.epochs_seen.insert(broker.epoch) {
                assert!(
                    self.epochs_seen.iter().all(|e| *e <= broker.epoch),
                    "broker epoch went backwards"
                );
            }
        }
        assert_eq!(
            self.standby.image(),
            self.node.controller.image(),
            "standby diverged"
        );
    }

    fn commit(&mut self) {
        let from = self.node.committed;
        self.node.commit();
        self.standby
            .replay_committed(&self.node.log[from..])
            .unwrap();
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Register(id, incarnation) => {
                let request = registration(
                    *id,
                    Uuid::from_u64_pair(*id as u64, u64::from(*incarnation) + 1),
                );
                self.node
                    .request(4, ControllerRequest::BrokerRegistration(request));
            }
            Op::Heartbeat {
                broker,
                want_fence,
                want_shut_down,
            } => {
                if let Some(epoch) = self.broker_epoch(*broker) {
                    let offset = self.node.committed as i64;
                    self.node
                        .heartbeat(*broker, epoch, *want_fence, *want_shut_down, offset);
                }
            }
            Op::Advance(ms) => {
                self.node.now_ms += ms;
                self.node.poll_until_idle();
            }
            Op::CreateTopic { partitions, rf } => {
                let name = format!("t{}", self.topics_created);
                self.topics_created += 1;
                self.node.request(
                    7,
                    ControllerRequest::CreateTopics(create_topics(&[(&name, *partitions, *rf)])),
                );
            }
            Op::DeleteTopic(i) => {
                let name = format!("t{i}");
                let request = DeleteTopicsRequest::default()
                    .with_topic_names(vec![TopicName(StrBytes::from_string(name))]);
                self.node
                    .request(5, ControllerRequest::DeleteTopics(request));
            }
            Op::Shrink(i) | Op::Expand(i) => self.alter(*i, matches!(op, Op::Expand(_))),
            Op::Allocate(id) => {
                if let Some(epoch) = self.broker_epoch(*id) {
                    let request = AllocateProducerIdsRequest::default()
                        .with_broker_id((*id).into())
                        .with_broker_epoch(epoch);
                    let (response, _) = self
                        .node
                        .request(0, ControllerRequest::AllocateProducerIds(request));
                    let ControllerResponse::AllocateProducerIds(r) = response else {
                        panic!()
                    };
                    if r.error_code == 0 {
                        assert!(
                            *r.producer_id_start >= self.last_block,
                            "blocks must increase"
                        );
                        self.last_block = *r.producer_id_start + 1000;
                    }
                }
            }
            Op::Commit => self.commit(),
            Op::Failover => {
                // The uncommitted tail is lost; the same node comes back as leader.
                self.node.controller.deactivate();
                self.node.log.truncate(self.node.committed);
                self.last_block = self
                    .node
                    .controller
                    .image()
                    .producer_ids
                    .next_producer_id
                    .max(0);
                self.node.now_ms += 100;
                self.node.become_leader();
                self.standby
                    .replay_committed(
                        &self.node.log[self.standby.last_committed_offset() as usize + 1..],
                    )
                    .unwrap();
            }
        }
    }

    /// The leader of the i-th partition shrinks its ISR by one follower, or adds one replica.
    fn alter(&mut self, i: usize, expand: bool) {
        let image = self.node.latest().clone();
        let all: Vec<(Uuid, i32, crate::image::partition::PartitionRegistration)> = image
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(move |(id, p)| (t.id, *id, (**p).clone()))
            })
            .collect();
        if all.is_empty() {
            return;
        }
        let (topic_id, partition_id, p) = &all[i % all.len()];
        if p.leader == -1 {
            return;
        }
        let mut isr = p.isr.clone();
        if expand {
            match p.replicas.iter().find(|r| !isr.contains(r)) {
                Some(r) => isr.push(*r),
                None => return,
            }
        } else {
            match isr.iter().position(|r| *r != p.leader) {
                Some(pos) => {
                    isr.remove(pos);
                }
                None => return,
            }
        }
        let Some(epoch) = self.broker_epoch(p.leader) else {
            return;
        };
        let data = PartitionData::default()
            .with_partition_index(*partition_id)
            .with_leader_epoch(p.leader_epoch)
            .with_partition_epoch(p.partition_epoch)
            .with_new_isr_with_epochs(
                isr.iter()
                    .map(|b| {
                        BrokerState::default()
                            .with_broker_id((*b).into())
                            .with_broker_epoch(-1)
                    })
                    .collect(),
            );
        let request = AlterPartitionRequest::default()
            .with_broker_id(p.leader.into())
            .with_broker_epoch(epoch)
            .with_topics(vec![TopicData::default()
                .with_topic_id(*topic_id)
                .with_partitions(vec![data])]);
        let (response, _) = self
            .node
            .request(3, ControllerRequest::AlterPartition(request));
        let ControllerResponse::AlterPartition(r) = response else {
            panic!()
        };
        let out = &r.topics[0].partitions[0];
        if out.error_code == 0 {
            let after = self
                .node
                .latest()
                .topics
                .partition(topic_id, *partition_id)
                .unwrap()
                .clone();
            assert_eq!(
                (after.leader_epoch, after.partition_epoch),
                (out.leader_epoch, out.partition_epoch)
            );
            assert_eq!(*out.leader_id, after.leader);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_operations_keep_the_invariants(ops in prop::collection::vec(op(), 1..200), elr in any::<bool>()) {
        let mv = if elr { MetadataVersion::V4_1_IV1 } else { MetadataVersion::V3_9_IV0 };
        let node = TestNode::active(mv);
        let mut standby = Controller::new(config(mv));
        standby.replay_committed(&node.log).unwrap();
        let mut world = World { node, standby, epochs_seen: BTreeSet::new(), topics_created: 0, last_block: 0 };
        for op in &ops {
            world.apply(op);
            world.commit();
            world.check();
        }
        if std::env::var("PROPTEST_STATS").is_ok() {
            let image = world.node.controller.image();
            let partitions: usize = image.topics.iter().map(|t| t.partitions.len()).sum();
            let leaderless = image.topics.partitions_without_leader().len();
            let unfenced = image.cluster.brokers().filter(|b| !b.fenced).count();
            eprintln!("ops {} log {} brokers {} unfenced {} topics {} partitions {} leaderless {}",
                ops.len(), world.node.log.len(), image.cluster.num_brokers(), unfenced, image.topics.len(), partitions, leaderless);
        }
    }
}
