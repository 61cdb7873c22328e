//! The Java controller's metrics under the names the Prometheus JMX exporter gives them with
//! Strimzi's example rules (`packaging/examples/metrics/kafka-metrics.yaml`,
//! `lowercaseOutputName: true`), so Strimzi's KRaft dashboard and alert rules work unchanged:
//!
//! - `kafka.controller:type=KafkaController,name=X` (Yammer gauges, `<>Value`) →
//!   `kafka_controller_kafkacontroller_x` gauge; with a `broker=N` key →
//!   `…{broker="N"}` (QuorumControllerMetrics, ControllerMetadataMetrics);
//! - `kafka.controller:type=ControllerStats,name=XPerSec` (meters, `<>Count`) →
//!   `kafka_controller_controllerstats_x_total` counter;
//! - `kafka.controller:type=ControllerEventManager,name=X` (histograms) →
//!   `kafka_controller_controllereventmanager_x_count_total` counter (`<>Count`) and
//!   `kafka_controller_controllereventmanager_x{quantile="0.50"…}` gauges (`<>NthPercentile`);
//!   the gauge `AvgIdleRatio` → `kafka_controller_controllereventmanager_avgidleratio`;
//! - `kafka.server:type=raft-metrics` attribute `a-b` (KafkaRaftMetrics) →
//!   `kafka_server_raftmetrics_a_b` gauge, `…-max`/`…-total` → counter `kafka_server_raftmetrics_a_b_max_total`,
//!   `current-state: S` → untyped `kafka_server_raftmetrics_current_state{current_state="S"} 1`
//!   ([`current_state_family`]);
//! - `kafka.server:type=raft-channel-metrics` `x-total` → counter
//!   `kafka_server_raftchannelmetrics_x_total`.
//!
//! JMX exporter 1.x (client_java 1.x) strips a `_total` from a counter's name and appends it
//! again on exposition, TYPE line included; a histogram's `_count` counter thus becomes
//! `…_count_total`.

use kraftwerk_node::sensors::Histogram;
use kraftwerk_node::{BrokerMetrics, NodeStatus};
use kraftwerk_raft::RoleKind;
use prometheus::proto::MetricFamily;

use super::families::{counter, gauge, labelled_gauge, Untyped, PERCENTILES};
use super::ChannelCounts;

/// `BrokerRegistrationState` values (`org.apache.kafka.controller.metrics.BrokerRegistrationState`).
const FENCED: f64 = 10.0;
const CONTROLLED_SHUTDOWN: f64 = 20.0;
const ACTIVE: f64 = 30.0;

/// Every Kafka-named family for `status` at wall-clock `now_ms`.
pub fn families(status: &NodeStatus, channel: ChannelCounts, now_ms: u64) -> Vec<MetricFamily> {
    let mut out = Vec::with_capacity(64);
    kafka_controller(&mut out, status, now_ms);
    per_broker(&mut out, status, now_ms);
    controller_stats(&mut out, status);
    event_manager(&mut out, status, now_ms);
    raft_metrics(&mut out, status, now_ms);
    raft_channel(&mut out, channel);
    out
}

/// `kafka_controller_kafkacontroller_<name>` with the MBean it mirrors in the help.
fn kc(name: &str, mbean: &str, help: &str, value: f64) -> MetricFamily {
    gauge(
        &format!("kafka_controller_kafkacontroller_{name}"),
        &format!("{help} (kafka.controller:type=KafkaController,name={mbean})"),
        value,
    )
}

/// `kafka.controller:type=KafkaController` gauges without labels.
fn kafka_controller(out: &mut Vec<MetricFamily>, s: &NodeStatus, now_ms: u64) {
    let image = &s.image;
    let committed = s.replayed_end_offset - 1;
    // The active controller applies its own records as it writes them (Kafka's active
    // QuorumController replays before commit); a standby applies committed ones only.
    let applied = if s.active {
        committed.max(s.last_written_offset)
    } else {
        committed
    };
    let lag = now_ms as f64 - s.last_applied_timestamp_ms as f64;
    out.extend([
        kc("activecontrollercount", "ActiveControllerCount", "1 if this node is the active controller", f64::from(u8::from(s.active))),
        kc("activebrokercount", "ActiveBrokerCount", "Registered brokers that are not fenced", image.active_brokers as f64),
        kc("fencedbrokercount", "FencedBrokerCount", "Registered brokers that are fenced", image.fenced_brokers as f64),
        kc("controlledshutdownbrokercount", "ControlledShutdownBrokerCount", "Registered brokers in controlled shutdown", image.controlled_shutdown_brokers as f64),
        kc("globaltopiccount", "GlobalTopicCount", "Topics in the committed metadata image", image.topics as f64),
        kc("globalpartitioncount", "GlobalPartitionCount", "Partitions in the committed metadata image", image.partitions as f64),
        kc("offlinepartitionscount", "OfflinePartitionsCount", "Partitions without a leader", image.offline_partitions as f64),
        kc("preferredreplicaimbalancecount", "PreferredReplicaImbalanceCount", "Partitions not led by their preferred (first) replica", image.imbalanced_partitions as f64),
        kc("metadataerrorcount", "MetadataErrorCount", "Controller faults caught without stopping the node", s.metadata_errors as f64),
        kc("lastcommittedrecordoffset", "LastCommittedRecordOffset", "Offset of the last committed metadata record replayed", committed as f64),
        kc("lastappliedrecordoffset", "LastAppliedRecordOffset", "Offset of the last metadata record applied to the controller (the active one applies its writes before they commit)", applied as f64),
        kc("lastappliedrecordtimestamp", "LastAppliedRecordTimestamp", "Append time (ms since the Unix epoch) of the last committed batch replayed", s.last_applied_timestamp_ms as f64),
        kc("lastappliedrecordlagms", "LastAppliedRecordLagMs", "Now minus LastAppliedRecordTimestamp, ms", lag),
        kc("timedoutbrokerheartbeatcount", "TimedOutBrokerHeartbeatCount", "Broker heartbeats that timed out in the event queue (kraftwerk's node queue has no per-event deadline: always 0)", 0.0),
        kc("eventqueueoperationsstartedcount", "EventQueueOperationsStartedCount", "Events the node thread started handling", s.events_started as f64),
        kc("eventqueueoperationstimedoutcount", "EventQueueOperationsTimedOutCount", "Events that timed out in the queue (kraftwerk's node queue has no per-event deadline: always 0)", 0.0),
        kc("newactivecontrollerscount", "NewActiveControllersCount", "Times this node saw a new active controller (a known leader in a new epoch)", s.new_active_controllers as f64),
    ]);
}

/// Per-broker `KafkaController` gauges (`broker=N` key → `broker` label).
fn per_broker(out: &mut Vec<MetricFamily>, s: &NodeStatus, now_ms: u64) {
    let label = |b: &BrokerMetrics| vec![("broker", b.id.to_string())];
    out.push(labelled_gauge(
        "kafka_controller_kafkacontroller_brokerregistrationstate",
        "Registration state of each registered broker: 10 fenced, 20 controlled shutdown, 30 active \
         (kafka.controller:type=KafkaController,name=BrokerRegistrationState,broker=N)",
        s.brokers.iter().map(|b| {
            let state = if b.fenced {
                FENCED
            } else if b.in_controlled_shutdown {
                CONTROLLED_SHUTDOWN
            } else {
                ACTIVE
            };
            (label(b), state)
        }),
    ));
    // Kafka registers these on the active controller only (ClusterControlManager.activate).
    let active_brokers = s.brokers.iter().filter(|_| s.active);
    out.push(labelled_gauge(
        "kafka_controller_kafkacontroller_timesincelastheartbeatreceivedms",
        "ms since the active controller last received a heartbeat from each broker, capped at \
         broker.session.timeout.ms (kafka.controller:type=KafkaController,name=TimeSinceLastHeartbeatReceivedMs,broker=N)",
        active_brokers.map(|b| {
            let since = b
                .last_contact_ms
                .map_or(s.session_timeout_ms, |t| now_ms.saturating_sub(t))
                .min(s.session_timeout_ms);
            (label(b), since as f64)
        }),
    ));
}

/// `kafka.controller:type=ControllerStats` meters.
fn controller_stats(out: &mut Vec<MetricFamily>, s: &NodeStatus) {
    out.push(counter(
        "kafka_controller_controllerstats_uncleanleaderelections_total",
        "Committed partition changes that elected a leader outside the ISR (LeaderRecoveryState \
         RECOVERING) (kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec)",
        s.unclean_leader_elections as f64,
    ));
    out.push(counter(
        "kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total",
        "Committed partition changes that elected a leader from the ELR (KIP-966) \
         (kafka.controller:type=ControllerStats,name=ElectionFromEligibleLeaderReplicasPerSec)",
        s.elr_elections as f64,
    ));
}

/// `kafka.controller:type=ControllerEventManager`: the two histograms and the idle ratio.
fn event_manager(out: &mut Vec<MetricFamily>, s: &NodeStatus, now_ms: u64) {
    let sensors = &s.sensors;
    histogram(
        out,
        "eventqueuetimems",
        "EventQueueTimeMs",
        "ms an event waited in the node thread's queue",
        &sensors.event_queue_time_ms,
    );
    histogram(
        out,
        "eventqueueprocessingtimems",
        "EventQueueProcessingTimeMs",
        "ms the node thread took to handle an event",
        &sensors.event_processing_time_ms,
    );
    out.push(gauge(
        "kafka_controller_controllereventmanager_avgidleratio",
        "Fraction of time the node thread (kraftwerk's controller event thread) waited for work \
         (kafka.controller:type=ControllerEventManager,name=AvgIdleRatio)",
        idle_ratio(s, now_ms),
    ));
}

/// A Yammer histogram as the JMX exporter shows it: `<>Count` and `<>NthPercentile`.
fn histogram(out: &mut Vec<MetricFamily>, name: &str, mbean: &str, help: &str, h: &Histogram) {
    let base = format!("kafka_controller_controllereventmanager_{name}");
    let mbean = format!("kafka.controller:type=ControllerEventManager,name={mbean}");
    out.push(counter(
        &format!("{base}_count_total"),
        &format!("{help}: events recorded ({mbean} Count)"),
        h.count() as f64,
    ));
    out.push(labelled_gauge(
        &base,
        &format!("{help}: quantiles of the last values ({mbean} NthPercentile)"),
        PERCENTILES
            .iter()
            .map(|(q, label)| (vec![("quantile", (*label).to_owned())], h.quantile(*q))),
    ));
}

/// Idle ms over all ms of the node thread's passes in the sensor windows; NaN before any.
fn idle_ratio(s: &NodeStatus, now_ms: u64) -> f64 {
    let total = s.sensors.poll_total_ms.sum(now_ms);
    if total > 0.0 {
        s.sensors.poll_idle_ms.sum(now_ms) / total
    } else {
        f64::NAN
    }
}

/// Kafka's `current-state` string for the role (KafkaRaftMetrics, Kafka 4.x): a resigned
/// leader is neither leader nor candidate nor voted, so `unattached`.
pub fn current_state(role: RoleKind, voted: bool, is_voter: bool) -> &'static str {
    match role {
        RoleKind::Leader => "leader",
        RoleKind::Prospective if voted => "prospective-voted",
        RoleKind::Prospective => "prospective",
        RoleKind::Candidate => "candidate",
        RoleKind::Unattached if voted => "unattached-voted",
        RoleKind::Follower if !is_voter => "observer",
        RoleKind::Follower => "follower",
        RoleKind::Unattached | RoleKind::Resigned => "unattached",
    }
}

/// `kafka_server_raftmetrics_current_state{current_state="…"} 1`, untyped as Strimzi's rule
/// (`type: UNTYPED`, `value: 1`, the attribute's string as the label) makes it.
pub fn current_state_family(s: &NodeStatus) -> Untyped {
    Untyped {
        name: "kafka_server_raftmetrics_current_state",
        help: "The current state of this member (kafka.server:type=raft-metrics,current-state)"
            .to_owned(),
        samples: vec![(
            vec![(
                "current_state",
                current_state(s.role, s.voted_id.is_some(), s.is_voter).to_owned(),
            )],
            1.0,
        )],
    }
}

/// `kafka_server_raftmetrics_<name>` gauge.
fn rm(name: &str, attribute: &str, help: &str, value: f64) -> MetricFamily {
    gauge(
        &format!("kafka_server_raftmetrics_{name}"),
        &format!("{help} (kafka.server:type=raft-metrics,{attribute})"),
        value,
    )
}

/// `kafka.server:type=raft-metrics` attributes.
fn raft_metrics(out: &mut Vec<MetricFamily>, s: &NodeStatus, now_ms: u64) {
    let sensors = &s.sensors;
    // A leader or candidate voted for itself (`voted_id` says so).
    let vote = s.voted_id;
    out.extend([
        rm(
            "current_leader",
            "current-leader",
            "The current quorum leader's id; -1 indicates unknown",
            s.leader.leader_id.map_or(-1.0, f64::from),
        ),
        rm(
            "current_vote",
            "current-vote",
            "The current voted id; -1 indicates not voted for anyone",
            vote.map_or(-1.0, f64::from),
        ),
        rm(
            "current_epoch",
            "current-epoch",
            "The current quorum epoch",
            f64::from(s.leader.epoch),
        ),
        rm(
            "high_watermark",
            "high-watermark",
            "The high watermark maintained on this member; -1 if it is unknown",
            s.high_watermark.map_or(-1.0, |h| h as f64),
        ),
        rm(
            "log_end_offset",
            "log-end-offset",
            "The current raft log end offset",
            s.log_end_offset as f64,
        ),
        rm(
            "log_end_epoch",
            "log-end-epoch",
            "The current raft log end epoch",
            f64::from(s.log_end_epoch),
        ),
        rm(
            "number_unknown_voter_connections",
            "number-unknown-voter-connections",
            "Voters whose connection information is not known",
            s.unknown_voter_connections as f64,
        ),
        rm(
            "number_of_voters",
            "number-of-voters",
            "Number of voters for the KRaft topic partition",
            s.voter_count as f64,
        ),
        rm(
            "commit_latency_avg",
            "commit-latency-avg",
            "The average time in milliseconds to commit an entry in the raft log",
            sensors.commit_latency_ms.avg(now_ms),
        ),
        rm(
            "election_latency_avg",
            "election-latency-avg",
            "The average time in milliseconds spent on electing a new leader",
            sensors.election_latency_ms.avg(now_ms),
        ),
        rm(
            "append_records_rate",
            "append-records-rate",
            "The average number of records appended per sec as the leader of the raft quorum",
            sensors.append_records.rate_per_sec(now_ms),
        ),
        rm(
            "fetch_records_rate",
            "fetch-records-rate",
            "The average number of records fetched from the leader of the raft quorum",
            sensors.fetch_records.rate_per_sec(now_ms),
        ),
        rm(
            "poll_idle_ratio_avg",
            "poll-idle-ratio-avg",
            "The ratio of time the Raft IO thread is idle as opposed to doing work",
            idle_ratio(s, now_ms),
        ),
    ]);
    // Kafka registers these two while leader only (KafkaRaftMetrics.addLeaderMetrics).
    if s.role == RoleKind::Leader {
        let observers = s.replicas.iter().filter(|r| !r.is_voter).count();
        out.extend([
            rm(
                "number_of_observers",
                "number-of-observers",
                "Number of observers being tracked by the KRaft topic partition leader",
                observers as f64,
            ),
            rm(
                "uncommitted_voter_change",
                "uncommitted-voter-change",
                "1 if there is a voter change that has not been committed, 0 otherwise",
                f64::from(u8::from(s.uncommitted_voter_change)),
            ),
        ]);
    }
    // Strimzi's rule types `-max` attributes as counters.
    out.push(counter(
        "kafka_server_raftmetrics_commit_latency_max_total",
        "The maximum time in milliseconds to commit an entry in the raft log (kafka.server:type=raft-metrics,commit-latency-max)",
        sensors.commit_latency_ms.max(now_ms),
    ));
    out.push(counter(
        "kafka_server_raftmetrics_election_latency_max_total",
        "The maximum time in milliseconds spent on electing a new leader (kafka.server:type=raft-metrics,election-latency-max)",
        sensors.election_latency_ms.max(now_ms),
    ));
}

/// `kafka.server:type=raft-channel-metrics`: the Raft client's requests and responses.
fn raft_channel(out: &mut Vec<MetricFamily>, channel: ChannelCounts) {
    out.push(counter(
        "kafka_server_raftchannelmetrics_request_total",
        "Raft requests this node sent to other controllers (kafka.server:type=raft-channel-metrics,request-total)",
        channel.requests as f64,
    ));
    out.push(counter(
        "kafka_server_raftchannelmetrics_response_total",
        "Responses this node received to its Raft requests (kafka.server:type=raft-channel-metrics,response-total)",
        channel.responses as f64,
    ));
}
