//! The dashboard, as code: rows of panels, each a title, a description, a unit and its
//! queries. Every panel outside [`KRAFTWERK_ROW`] reads the names the Prometheus JMX exporter
//! gives the Java controller's metrics with Strimzi's rules (and client_java's `process_*`),
//! so the dashboard shows Java controllers too; the `kraftwerk_` panels sit in that one
//! collapsed row.
//!
//! Grafana schema 39 (Grafana 10.4/11): a `${DS_PROMETHEUS}` input chosen at import, and the
//! variables `$job` and `$instance` (plain Prometheus target labels, no Kubernetes labels).

use serde_json::{json, Value};

/// The title of the collapsed row of kraftwerk-only panels.
pub const KRAFTWERK_ROW: &str = "kraftwerk only (kraftwerk_* metrics; empty for Java controllers)";

/// Grafana's grid is 24 columns wide.
const GRID_WIDTH: u64 = 24;

fn ds() -> Value {
    json!({"type": "prometheus", "uid": "${DS_PROMETHEUS}"})
}

/// `name` restricted to the selected controllers.
fn m(name: &str) -> String {
    format!(r#"{name}{{job=~"$job",instance=~"$instance"}}"#)
}

/// `name` restricted to the selected controllers and by `extra` matchers.
fn ml(name: &str, extra: &str) -> String {
    format!(r#"{name}{{job=~"$job",instance=~"$instance",{extra}}}"#)
}

/// A query and its legend.
type Target = (String, &'static str);

fn targets(list: Vec<Target>, instant: bool) -> Value {
    let refs = ["A", "B", "C", "D", "E", "F"];
    list.into_iter()
        .zip(refs)
        .map(|((expr, legend), r)| {
            json!({
                "datasource": ds(),
                "expr": expr,
                "legendFormat": legend,
                "refId": r,
                "instant": instant,
                "range": !instant,
            })
        })
        .collect()
}

/// Thresholds as `(colour, from)` steps; the first starts at -∞.
fn steps(list: &[(&str, f64)]) -> Value {
    let steps: Vec<Value> = list
        .iter()
        .enumerate()
        .map(
            |(i, (c, v))| json!({"color": c, "value": if i == 0 { Value::Null } else { json!(v) }}),
        )
        .collect();
    json!({"mode": "absolute", "steps": steps})
}

/// Green, red from 1 on: a count that should be 0.
fn zero_is_good() -> Value {
    steps(&[("green", 0.0), ("red", 1.0)])
}

/// Value mappings `value → (text, colour)`.
fn mappings(list: &[(&str, &str, &str)]) -> Value {
    let mut options = serde_json::Map::new();
    for (i, (v, text, color)) in list.iter().enumerate() {
        options.insert(
            (*v).to_owned(),
            json!({"text": text, "color": color, "index": i}),
        );
    }
    json!([{"type": "value", "options": options}])
}

/// A stat panel of instant queries (last value).
fn stat(title: &str, description: &str, unit: &str, list: Vec<Target>) -> Value {
    json!({
        "type": "stat",
        "title": title,
        "description": description,
        "datasource": ds(),
        "fieldConfig": {
            "defaults": {
                "unit": unit,
                "color": {"mode": "thresholds"},
                "thresholds": steps(&[("green", 0.0)]),
                "mappings": [],
            },
            "overrides": [],
        },
        "options": {
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": false},
            "colorMode": "value",
            "graphMode": "none",
            "justifyMode": "auto",
            "orientation": "auto",
            "textMode": "auto",
            "wideLayout": true,
            "showPercentChange": false,
        },
        "targets": targets(list, true),
    })
}

/// A stat panel showing the series' legends (which instance, which state), not values.
fn names(title: &str, description: &str, list: Vec<Target>) -> Value {
    let mut p = stat(title, description, "none", list);
    p["options"]["textMode"] = json!("name");
    p["options"]["colorMode"] = json!("background");
    p
}

/// A time series panel.
fn series(title: &str, description: &str, unit: &str, list: Vec<Target>) -> Value {
    json!({
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": ds(),
        "fieldConfig": {
            "defaults": {
                "unit": unit,
                "color": {"mode": "palette-classic"},
                "custom": {
                    "drawStyle": "line",
                    "lineWidth": 1,
                    "fillOpacity": 10,
                    "showPoints": "never",
                    "spanNulls": false,
                },
                "thresholds": steps(&[("green", 0.0)]),
                "mappings": [],
            },
            "overrides": [],
        },
        "options": {
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": true},
            "tooltip": {"mode": "multi", "sort": "none"},
        },
        "targets": targets(list, false),
    })
}

fn with(mut panel: Value, key: &str, value: Value) -> Value {
    panel["fieldConfig"]["defaults"][key] = value;
    panel
}

/// Places panels left to right, wrapping at the grid width; rows start a new line.
#[derive(Default)]
struct Layout {
    panels: Vec<Value>,
    /// The collapsed row receiving panels, by index in `panels`.
    collapsed: Option<usize>,
    x: u64,
    y: u64,
    line_height: u64,
    id: u64,
}

impl Layout {
    fn next_id(&mut self) -> u64 {
        self.id += 1;
        self.id
    }

    fn newline(&mut self) {
        self.y += self.line_height;
        self.x = 0;
        self.line_height = 0;
    }

    fn row(&mut self, title: &str, collapsed: bool) {
        self.newline();
        let id = self.next_id();
        self.panels.push(json!({
            "type": "row",
            "id": id,
            "title": title,
            "collapsed": collapsed,
            "gridPos": {"x": 0, "y": self.y, "w": GRID_WIDTH, "h": 1},
            "panels": [],
        }));
        self.collapsed = collapsed.then(|| self.panels.len() - 1);
        self.y += 1;
    }

    fn add(&mut self, w: u64, h: u64, mut panel: Value) {
        if self.x + w > GRID_WIDTH {
            self.newline();
        }
        panel["id"] = json!(self.next_id());
        panel["gridPos"] = json!({"x": self.x, "y": self.y, "w": w, "h": h});
        self.x += w;
        self.line_height = self.line_height.max(h);
        match self.collapsed {
            Some(row) => self.panels[row]["panels"]
                .as_array_mut()
                .expect("a row's panels are an array")
                .push(panel),
            None => self.panels.push(panel),
        }
    }
}

fn quorum(l: &mut Layout) {
    l.row("Quorum", false);
    l.add(4, 4, with(
        stat(
            "Active controllers",
            "Sum of ActiveControllerCount over the selected controllers. Must be 1: 0 is no leader, 2 is a split brain (or a selection of two clusters).",
            "none",
            vec![(format!("sum({})", m("kafka_controller_kafkacontroller_activecontrollercount")), "active")],
        ),
        "thresholds",
        steps(&[("red", 0.0), ("green", 1.0), ("red", 2.0)]),
    ));
    l.add(
        5,
        4,
        names(
            "Active controller",
            "The instance whose ActiveControllerCount is 1.",
            vec![(
                format!(
                    "{} == 1",
                    m("kafka_controller_kafkacontroller_activecontrollercount")
                ),
                "{{instance}}",
            )],
        ),
    );
    l.add(
        3,
        4,
        stat(
            "Current epoch",
            "Highest Raft epoch among the selected controllers (raft-metrics current-epoch).",
            "none",
            vec![(
                format!("max({})", m("kafka_server_raftmetrics_current_epoch")),
                "epoch",
            )],
        ),
    );
    l.add(
        3,
        4,
        stat(
            "Voters",
            "Voters of the KRaft topic partition (raft-metrics number-of-voters).",
            "none",
            vec![(
                format!("max({})", m("kafka_server_raftmetrics_number_of_voters")),
                "voters",
            )],
        ),
    );
    l.add(3, 4, stat(
        "Observers",
        "Observers (brokers) the leader tracks (raft-metrics number-of-observers; the leader only has it).",
        "none",
        vec![(format!("max({})", m("kafka_server_raftmetrics_number_of_observers")), "observers")],
    ));
    l.add(6, 4, with(
        with(
            stat(
                "Uncommitted voter change",
                "1 while an AddVoter/RemoveVoter (KIP-853) is not committed (raft-metrics uncommitted-voter-change; the leader only has it).",
                "none",
                vec![(format!("max({})", m("kafka_server_raftmetrics_uncommitted_voter_change")), "uncommitted")],
            ),
            "mappings",
            mappings(&[("0", "no", "green"), ("1", "yes", "orange")]),
        ),
        "thresholds",
        steps(&[("green", 0.0), ("orange", 1.0)]),
    ));
    l.add(12, 5, names(
        "Raft state per node",
        "raft-metrics current-state of each controller: leader, follower, candidate, prospective, unattached, observer (a controller that is not a voter).",
        vec![(m("kafka_server_raftmetrics_current_state"), "{{instance}}: {{current_state}}")],
    ));
    l.add(12, 5, stat(
        "Leader id per node",
        "The leader each controller knows (raft-metrics current-leader; -1 unknown). All should agree.",
        "none",
        vec![(m("kafka_server_raftmetrics_current_leader"), "{{instance}}")],
    ));
    l.add(
        8,
        7,
        series(
            "Leader over time",
            "1 on the controller that is the Raft leader (current-state leader).",
            "none",
            vec![(
                ml(
                    "kafka_server_raftmetrics_current_state",
                    r#"current_state="leader""#,
                ),
                "{{instance}}",
            )],
        ),
    );
    l.add(
        8,
        7,
        series(
            "Epoch per node",
            "raft-metrics current-epoch; every voter should show the same.",
            "none",
            vec![(m("kafka_server_raftmetrics_current_epoch"), "{{instance}}")],
        ),
    );
    l.add(8, 7, series(
        "New active controllers, unknown voter connections",
        "KafkaController NewActiveControllersCount (times this node saw a new active controller) and raft-metrics number-unknown-voter-connections.",
        "none",
        vec![
            (m("kafka_controller_kafkacontroller_newactivecontrollerscount"), "{{instance}} new active controllers"),
            (m("kafka_server_raftmetrics_number_unknown_voter_connections"), "{{instance}} unknown voter connections"),
        ],
    ));
}

fn raft_log(l: &mut Layout) {
    l.row("Raft log", false);
    l.add(
        8,
        7,
        series(
            "High watermark",
            "raft-metrics high-watermark: the end (exclusive) of the committed log; -1 unknown.",
            "none",
            vec![(m("kafka_server_raftmetrics_high_watermark"), "{{instance}}")],
        ),
    );
    l.add(
        8,
        7,
        series(
            "Log end offset",
            "raft-metrics log-end-offset.",
            "none",
            vec![(m("kafka_server_raftmetrics_log_end_offset"), "{{instance}}")],
        ),
    );
    l.add(8, 7, series(
        "Last committed / applied record offset",
        "KafkaController LastCommittedRecordOffset (last committed record the controller replayed) and LastAppliedRecordOffset (the active controller applies its own records before they commit).",
        "none",
        vec![
            (m("kafka_controller_kafkacontroller_lastcommittedrecordoffset"), "{{instance}} committed"),
            (m("kafka_controller_kafkacontroller_lastappliedrecordoffset"), "{{instance}} applied"),
        ],
    ));
    l.add(
        6,
        7,
        series(
            "Uncommitted: log end offset − high watermark",
            "Records in this node's log that the quorum has not committed yet.",
            "none",
            vec![(
                format!(
                    "{} - {}",
                    m("kafka_server_raftmetrics_log_end_offset"),
                    m("kafka_server_raftmetrics_high_watermark")
                ),
                "{{instance}}",
            )],
        ),
    );
    l.add(
        6,
        7,
        series(
            "Behind: highest log end offset − log end offset",
            "How far each controller's log is behind the longest one among the selected.",
            "none",
            vec![(
                format!(
                    "scalar(max({})) - {}",
                    m("kafka_server_raftmetrics_log_end_offset"),
                    m("kafka_server_raftmetrics_log_end_offset")
                ),
                "{{instance}}",
            )],
        ),
    );
    l.add(6, 7, series(
        "Committed, not yet replayed",
        "high watermark − 1 − LastCommittedRecordOffset: committed records the controller has not replayed. Control records (leader change, voters) at the end of the log count too, so a small constant is normal.",
        "none",
        vec![(format!("{} - 1 - {}", m("kafka_server_raftmetrics_high_watermark"), m("kafka_controller_kafkacontroller_lastcommittedrecordoffset")), "{{instance}}")],
    ));
    l.add(6, 7, series(
        "Last applied record lag",
        "KafkaController LastAppliedRecordLagMs: now minus the append time of the last committed batch replayed. Grows while nothing is written (brokers heartbeat without records).",
        "ms",
        vec![(m("kafka_controller_kafkacontroller_lastappliedrecordlagms"), "{{instance}}")],
    ));
}

fn latency(l: &mut Layout) {
    l.row("Latency and throughput", false);
    l.add(8, 7, series(
        "Commit latency",
        "raft-metrics commit-latency-avg and commit-latency-max (Strimzi's rule types -max as a counter, hence _total; it is a windowed maximum).",
        "ms",
        vec![
            (m("kafka_server_raftmetrics_commit_latency_avg"), "{{instance}} avg"),
            (m("kafka_server_raftmetrics_commit_latency_max_total"), "{{instance}} max"),
        ],
    ));
    l.add(
        8,
        7,
        series(
            "Election latency",
            "raft-metrics election-latency-avg and election-latency-max.",
            "ms",
            vec![
                (
                    m("kafka_server_raftmetrics_election_latency_avg"),
                    "{{instance}} avg",
                ),
                (
                    m("kafka_server_raftmetrics_election_latency_max_total"),
                    "{{instance}} max",
                ),
            ],
        ),
    );
    l.add(
        8,
        7,
        series(
            "Append / fetch records rate",
            "raft-metrics append-records-rate (as leader) and fetch-records-rate (as follower).",
            "rps",
            vec![
                (
                    m("kafka_server_raftmetrics_append_records_rate"),
                    "{{instance}} append",
                ),
                (
                    m("kafka_server_raftmetrics_fetch_records_rate"),
                    "{{instance}} fetch",
                ),
            ],
        ),
    );
    l.add(8, 7, series(
        "Event queue time",
        "ControllerEventManager EventQueueTimeMs percentiles: how long events waited in the controller's queue.",
        "ms",
        vec![(ml("kafka_controller_controllereventmanager_eventqueuetimems", r#"quantile=~"0.50|0.99""#), "{{instance}} p{{quantile}}")],
    ));
    l.add(
        8,
        7,
        series(
            "Event processing time",
            "ControllerEventManager EventQueueProcessingTimeMs percentiles.",
            "ms",
            vec![(
                ml(
                    "kafka_controller_controllereventmanager_eventqueueprocessingtimems",
                    r#"quantile=~"0.50|0.99""#,
                ),
                "{{instance}} p{{quantile}}",
            )],
        ),
    );
    l.add(
        8,
        7,
        series(
            "Events handled",
            "Rate of EventQueueTimeMs Count: events the controller took off its queue.",
            "ops",
            vec![(
                format!(
                    "rate({}[$__rate_interval])",
                    m("kafka_controller_controllereventmanager_eventqueuetimems_count_total")
                ),
                "{{instance}}",
            )],
        ),
    );
    l.add(12, 7, series(
        "Idle ratios",
        "ControllerEventManager AvgIdleRatio (controller thread) and raft-metrics poll-idle-ratio-avg (Raft IO thread).",
        "percentunit",
        vec![
            (m("kafka_controller_controllereventmanager_avgidleratio"), "{{instance}} controller"),
            (m("kafka_server_raftmetrics_poll_idle_ratio_avg"), "{{instance}} raft"),
        ],
    ));
    l.add(12, 7, series(
        "Raft channel",
        "raft-channel-metrics request-total and response-total rates: Raft requests to other controllers and their answers.",
        "reqps",
        vec![
            (format!("rate({}[$__rate_interval])", m("kafka_server_raftchannelmetrics_request_total")), "{{instance}} requests"),
            (format!("rate({}[$__rate_interval])", m("kafka_server_raftchannelmetrics_response_total")), "{{instance}} responses"),
        ],
    ));
}

fn brokers(l: &mut Layout) {
    l.row("Brokers and metadata", false);
    let count = |title: &str, description: &str, expr: String, bad_from_one: bool| {
        let p = stat(title, description, "none", vec![(expr, "")]);
        if bad_from_one {
            with(p, "thresholds", zero_is_good())
        } else {
            p
        }
    };
    l.add(3, 4, count(
        "Registered brokers",
        "ActiveBrokerCount + FencedBrokerCount + ControlledShutdownBrokerCount (the highest among the selected controllers).",
        format!(
            "max({} + {} + {})",
            m("kafka_controller_kafkacontroller_activebrokercount"),
            m("kafka_controller_kafkacontroller_fencedbrokercount"),
            m("kafka_controller_kafkacontroller_controlledshutdownbrokercount")
        ),
        false,
    ));
    l.add(
        3,
        4,
        count(
            "Active brokers",
            "KafkaController ActiveBrokerCount.",
            format!(
                "max({})",
                m("kafka_controller_kafkacontroller_activebrokercount")
            ),
            false,
        ),
    );
    l.add(
        3,
        4,
        count(
            "Fenced brokers",
            "KafkaController FencedBrokerCount.",
            format!(
                "max({})",
                m("kafka_controller_kafkacontroller_fencedbrokercount")
            ),
            true,
        ),
    );
    l.add(
        3,
        4,
        count(
            "Topics",
            "KafkaController GlobalTopicCount.",
            format!(
                "max({})",
                m("kafka_controller_kafkacontroller_globaltopiccount")
            ),
            false,
        ),
    );
    l.add(
        3,
        4,
        count(
            "Partitions",
            "KafkaController GlobalPartitionCount.",
            format!(
                "max({})",
                m("kafka_controller_kafkacontroller_globalpartitioncount")
            ),
            false,
        ),
    );
    l.add(
        3,
        4,
        count(
            "Offline partitions",
            "KafkaController OfflinePartitionsCount: partitions without a leader.",
            format!(
                "max({})",
                m("kafka_controller_kafkacontroller_offlinepartitionscount")
            ),
            true,
        ),
    );
    l.add(3, 4, count("Preferred replica imbalance", "KafkaController PreferredReplicaImbalanceCount: partitions not led by their first replica.", format!("max({})", m("kafka_controller_kafkacontroller_preferredreplicaimbalancecount")), true));
    l.add(3, 4, count("Metadata errors", "KafkaController MetadataErrorCount: faults the controller caught without stopping (highest among the selected).", format!("max({})", m("kafka_controller_kafkacontroller_metadataerrorcount")), true));
    l.add(8, 7, with(
        series(
            "Broker registration state",
            "KafkaController BrokerRegistrationState per broker: 10 fenced, 20 controlled shutdown, 30 active.",
            "none",
            vec![(format!("max by (broker) ({})", m("kafka_controller_kafkacontroller_brokerregistrationstate")), "broker {{broker}}")],
        ),
        "mappings",
        mappings(&[("10", "fenced", "red"), ("20", "controlled shutdown", "orange"), ("30", "active", "green")]),
    ));
    l.add(8, 7, series(
        "Time since last heartbeat",
        "KafkaController TimeSinceLastHeartbeatReceivedMs per broker, capped at broker.session.timeout.ms (the active controller only has it).",
        "ms",
        vec![(format!("max by (broker) ({})", m("kafka_controller_kafkacontroller_timesincelastheartbeatreceivedms")), "broker {{broker}}")],
    ));
    l.add(8, 7, series(
        "Leader elections, timeouts",
        "ControllerStats UncleanLeaderElectionsPerSec and ElectionFromEligibleLeaderReplicasPerSec (increase per interval), and KafkaController TimedOutBrokerHeartbeatCount and EventQueueOperationsTimedOutCount.",
        "none",
        vec![
            (format!("sum(increase({}[$__rate_interval]))", m("kafka_controller_controllerstats_uncleanleaderelections_total")), "unclean elections"),
            (format!("sum(increase({}[$__rate_interval]))", m("kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total")), "ELR elections"),
            (m("kafka_controller_kafkacontroller_timedoutbrokerheartbeatcount"), "{{instance}} timed out heartbeats"),
            (m("kafka_controller_kafkacontroller_eventqueueoperationstimedoutcount"), "{{instance}} timed out events"),
        ],
    ));
}

fn process(l: &mut Layout) {
    l.row("Process", false);
    l.add(
        6,
        7,
        series(
            "CPU",
            "rate(process_cpu_seconds_total): cores in use.",
            "percentunit",
            vec![(
                format!("rate({}[$__rate_interval])", m("process_cpu_seconds_total")),
                "{{instance}}",
            )],
        ),
    );
    l.add(
        6,
        7,
        series(
            "Resident memory",
            "process_resident_memory_bytes.",
            "bytes",
            vec![(m("process_resident_memory_bytes"), "{{instance}}")],
        ),
    );
    l.add(
        6,
        7,
        series(
            "Open file descriptors",
            "process_open_fds and the limit process_max_fds.",
            "none",
            vec![
                (m("process_open_fds"), "{{instance}} open"),
                (m("process_max_fds"), "{{instance}} max"),
            ],
        ),
    );
    l.add(
        6,
        7,
        stat(
            "Uptime",
            "time() − process_start_time_seconds.",
            "s",
            vec![(
                format!("time() - {}", m("process_start_time_seconds")),
                "{{instance}}",
            )],
        ),
    );
}

fn kraftwerk(l: &mut Layout) {
    l.row(KRAFTWERK_ROW, true);
    l.add(
        8,
        6,
        names(
            "kraftwerk build",
            "kraftwerk_build_info{version}: the version each controller runs.",
            vec![(m("kraftwerk_build_info"), "{{instance}} {{version}}")],
        ),
    );
    l.add(8, 6, series(
        "Replica lag (leader's view)",
        "kraftwerk_raft_replica_lag_offsets: the leader's log end offset minus each replica's (voters and observers).",
        "none",
        vec![(m("kraftwerk_raft_replica_lag_offsets"), "{{replica}} ({{kind}})")],
    ));
    l.add(8, 6, series(
        "Time since each replica's last fetch",
        "kraftwerk_raft_replica_fetch_age_seconds and kraftwerk_raft_replica_caught_up_age_seconds (leader only).",
        "s",
        vec![
            (m("kraftwerk_raft_replica_fetch_age_seconds"), "{{replica}} fetch"),
            (m("kraftwerk_raft_replica_caught_up_age_seconds"), "{{replica}} caught up"),
        ],
    ));
    l.add(
        8,
        7,
        series(
            "Log start and latest snapshot",
            "kraftwerk_raft_log_start_offset and kraftwerk_snapshot_latest_end_offset.",
            "none",
            vec![
                (
                    m("kraftwerk_raft_log_start_offset"),
                    "{{instance}} log start",
                ),
                (
                    m("kraftwerk_snapshot_latest_end_offset"),
                    "{{instance}} snapshot end",
                ),
            ],
        ),
    );
    l.add(
        8,
        7,
        series(
            "Snapshots",
            "kraftwerk_snapshots_on_disk, and snapshots written and loaded per interval.",
            "none",
            vec![
                (m("kraftwerk_snapshots_on_disk"), "{{instance}} on disk"),
                (
                    format!(
                        "increase({}[$__rate_interval])",
                        m("kraftwerk_snapshots_written_total")
                    ),
                    "{{instance}} written",
                ),
                (
                    format!(
                        "increase({}[$__rate_interval])",
                        m("kraftwerk_snapshots_loaded_total")
                    ),
                    "{{instance}} loaded",
                ),
            ],
        ),
    );
    l.add(
        8,
        7,
        series(
            "Snapshot write / load time",
            "kraftwerk_snapshot_last_write_seconds and kraftwerk_snapshot_last_load_seconds.",
            "s",
            vec![
                (
                    m("kraftwerk_snapshot_last_write_seconds"),
                    "{{instance}} write",
                ),
                (
                    m("kraftwerk_snapshot_last_load_seconds"),
                    "{{instance}} load",
                ),
            ],
        ),
    );
    l.add(12, 7, series(
        "Elections",
        "Per interval: pre-vote rounds (KIP-996), elections started and won, activations as the active controller.",
        "none",
        vec![
            (format!("increase({}[$__rate_interval])", m("kraftwerk_raft_prospective_rounds_total")), "{{instance}} pre-vote rounds"),
            (format!("increase({}[$__rate_interval])", m("kraftwerk_raft_elections_started_total")), "{{instance}} elections started"),
            (format!("increase({}[$__rate_interval])", m("kraftwerk_raft_elections_won_total")), "{{instance}} elections won"),
            (format!("increase({}[$__rate_interval])", m("kraftwerk_controller_activations_total")), "{{instance}} activations"),
        ],
    ));
    l.add(12, 7, series(
        "Time to first commit after an election",
        "kraftwerk_raft_last_time_to_first_commit_seconds: from winning the last election to the first commit of that epoch; -1 if none yet.",
        "s",
        vec![(m("kraftwerk_raft_last_time_to_first_commit_seconds"), "{{instance}}")],
    ));
}

/// A query variable over `query`'s label values.
fn variable(name: &str, query: &str) -> Value {
    json!({
        "type": "query",
        "name": name,
        "label": name,
        "datasource": ds(),
        "definition": query,
        "query": {"query": query, "refId": format!("{name}-variable")},
        "refresh": 2,
        "includeAll": true,
        "multi": true,
        "current": {},
        "options": [],
        "regex": "",
        "sort": 1,
        "hide": 0,
    })
}

/// The dashboard.
pub fn dashboard() -> Value {
    let mut l = Layout::default();
    quorum(&mut l);
    raft_log(&mut l);
    latency(&mut l);
    brokers(&mut l);
    process(&mut l);
    kraftwerk(&mut l);
    // Controllers only: brokers have raft-metrics too, but no ActiveControllerCount.
    let controllers = "kafka_controller_kafkacontroller_activecontrollercount";
    json!({
        "__inputs": [{
            "name": "DS_PROMETHEUS",
            "label": "Prometheus",
            "description": "The Prometheus that scrapes the controllers' /metrics (kraftwerk) or JMX exporter (Java)",
            "type": "datasource",
            "pluginId": "prometheus",
            "pluginName": "Prometheus",
        }],
        "__requires": [
            {"type": "grafana", "id": "grafana", "name": "Grafana", "version": "10.4.0"},
            {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
            {"type": "panel", "id": "stat", "name": "Stat", "version": ""},
            {"type": "panel", "id": "timeseries", "name": "Time series", "version": ""},
        ],
        "annotations": {"list": [{
            "builtIn": 1,
            "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": true,
            "hide": true,
            "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts",
            "type": "dashboard",
        }]},
        "description": "KRaft controllers (kraftwerk or Java) under the metric names of the Prometheus JMX exporter with Strimzi's rules. Generated by crates/dashboard (cargo run -p kraftwerk-dashboard).",
        "editable": true,
        "fiscalYearStartMonth": 0,
        "graphTooltip": 1,
        "id": null,
        "links": [],
        "panels": l.panels,
        "refresh": "30s",
        "schemaVersion": 39,
        "tags": ["kafka", "kraft", "controller", "kraftwerk"],
        "templating": {"list": [
            variable("job", &format!("label_values({controllers}, job)")),
            variable("instance", &format!(r#"label_values({controllers}{{job=~"$job"}}, instance)"#)),
        ]},
        "time": {"from": "now-1h", "to": "now"},
        "timepicker": {},
        "timezone": "",
        "title": "KRaft controllers (kraftwerk)",
        "uid": "kraftwerk-controllers",
        "version": 1,
        "weekStart": "",
    })
}

/// The dashboard as the committed file has it: pretty JSON and a final newline.
pub fn dashboard_json() -> String {
    let mut s = serde_json::to_string_pretty(&dashboard()).expect("a JSON value serialises");
    s.push('\n');
    s
}
