//! DescribeQuorum (api 55): the leader's view of every voter and observer
//! (Kafka `handleDescribeQuorumRequest`, `RaftUtil.singletonDescribeQuorumResponse`).

use kafka_protocol::messages::describe_quorum_response::{
    Listener, Node, PartitionData, ReplicaState, TopicData,
};
use kafka_protocol::messages::{DescribeQuorumRequest, DescribeQuorumResponse};
use kafka_protocol::protocol::StrBytes;

use super::RaftCore;
use crate::config::{METADATA_PARTITION, METADATA_TOPIC_NAME};
use crate::errors;
use crate::leader::ReplicaProgress;
use crate::role::Role;
use crate::storage::{QuorumStateStore, ReplicatedLog};

fn replica_state(id: i32, p: &ReplicaProgress, leader_id: i32, now_ms: u64) -> ReplicaState {
    // The leader reports "now" for its own timestamps, as Kafka does.
    let (fetch, caught_up) = if id == leader_id {
        (now_ms as i64, now_ms as i64)
    } else {
        (
            p.last_fetch_ms.map_or(-1, |t| t as i64),
            p.last_caught_up_ms.map_or(-1, |t| t as i64),
        )
    };
    ReplicaState::default()
        .with_replica_id(id.into())
        .with_replica_directory_id(p.directory_id)
        .with_log_end_offset(p.end_offset.unwrap_or(-1))
        .with_last_fetch_timestamp(fetch)
        .with_last_caught_up_timestamp(caught_up)
}

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    pub(crate) fn handle_describe_quorum_request(
        &mut self,
        now_ms: u64,
        api_version: i16,
        request: DescribeQuorumRequest,
    ) -> DescribeQuorumResponse {
        let topic_ok = matches!(request.topics.as_slice(),
            [t] if t.topic_name.0.as_str() == METADATA_TOPIC_NAME
                && matches!(t.partitions.as_slice(), [p] if p.partition_index == METADATA_PARTITION));
        let partition = |error: i16| {
            PartitionData::default()
                .with_partition_index(METADATA_PARTITION)
                .with_error_code(error)
        };
        let topic = |p: PartitionData| {
            TopicData::default()
                .with_topic_name(StrBytes::from_static_str(METADATA_TOPIC_NAME).into())
                .with_partitions(vec![p])
        };
        if !topic_ok {
            return DescribeQuorumResponse::default()
                .with_topics(vec![topic(partition(errors::UNKNOWN_TOPIC_OR_PARTITION))]);
        }
        let node_id = self.config.node_id;
        let epoch = self.epoch;
        let Role::Leader(l) = &mut self.role else {
            return DescribeQuorumResponse::default()
                .with_topics(vec![topic(partition(errors::NOT_LEADER_OR_FOLLOWER))]);
        };
        let voters: Vec<ReplicaState> = l
            .voters
            .iter()
            .map(|(&id, p)| replica_state(id, p, node_id, now_ms))
            .collect();
        let observers: Vec<ReplicaState> = l
            .live_observers(now_ms)
            .iter()
            .map(|(id, p)| replica_state(*id, p, node_id, now_ms))
            .collect();
        let p = partition(errors::NONE)
            .with_leader_id(node_id.into())
            .with_leader_epoch(epoch)
            .with_high_watermark(l.high_watermark.unwrap_or(-1))
            .with_current_voters(voters)
            .with_observers(observers);
        let mut response = DescribeQuorumResponse::default().with_topics(vec![topic(p)]);
        if api_version >= 2 {
            // Every voter of the set in force with all its listeners (Kafka
            // `RaftUtil.singletonDescribeQuorumResponse`; case C11: voters added later too).
            response.nodes = self
                .voter_set()
                .nodes()
                .map(|n| {
                    Node::default()
                        .with_node_id(n.key.id.into())
                        .with_listeners(crate::voters::endpoint_list!(Listener, n.endpoints))
                })
                .collect();
        }
        response
    }
}
