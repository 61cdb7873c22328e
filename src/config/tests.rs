//! Tests of `config/`: the behaviour of `from_properties` and the key table it follows.

use std::fs;
use std::path::{Path, PathBuf};

use kraftwerk_log::bootstrap::BootstrapMetadata;
use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use super::def::{ConfigType, DefaultValue, Usage, Value};
use super::keys::{lookup, CONFIG_DEF};
use super::listeners::advertised_controller_listeners;
use super::quorum::parse_bootstrap_servers;
use super::security_protocol::effective_protocol_map;
use super::*;

mod connection_keys;
mod listener_security;
mod log_keys;

pub(super) fn props(text: &str) -> JavaProperties {
    JavaProperties::parse(text.as_bytes()).unwrap()
}

pub(super) fn parse(text: &str) -> Result<NodeConfig, ConfigError> {
    NodeConfig::from_properties(&props(text))
}

pub(super) const MINIMAL: &str = "process.roles=controller\nnode.id=1\n\
                       controller.quorum.voters=1@localhost:9093\n\
                       listeners=CONTROLLER://localhost:9093\ncontroller.listener.names=CONTROLLER\n";

/// Shaped like the controller.properties Kafka ships (static voters instead of bootstrap
/// servers), with the broker-side keys a copied file typically keeps.
const KAFKA_STYLE_CONTROLLER: &str = r#"
############################# Server Basics #############################
# This node is a KRaft controller only.
process.roles=controller
node.id=2
controller.quorum.voters=1@ctrl-1.example.com:9093,2@ctrl-2.example.com:9093,3@[::1]:9093

############################# Socket Server Settings #############################
listeners=CONTROLLER://:9093
advertised.listeners=CONTROLLER://ctrl-2.example.com:9093
controller.listener.names=CONTROLLER
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600

############################# Log Basics #############################
log.dirs=/var/lib/kafka/controller-data
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1

############################# Log Retention Policy #############################
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
"#;

#[test]
fn reads_a_kafka_controller_config() {
    let config = parse(KAFKA_STYLE_CONTROLLER).unwrap();
    assert_eq!(config.node_id, 2);
    let voters: Vec<(i32, &str, u16)> = config
        .quorum_voters
        .iter()
        .map(|v| (v.id, v.host.as_str(), v.port))
        .collect();
    assert_eq!(
        voters,
        vec![
            (1, "ctrl-1.example.com", 9093),
            (2, "ctrl-2.example.com", 9093),
            (3, "::1", 9093)
        ]
    );
    assert_eq!(config.controller_listener().host, "");
    assert_eq!(config.controller_listener().port, 9093);
    assert_eq!(
        config.controller_listener().security_protocol,
        SecurityProtocol::Plaintext
    );
    // advertised.listeners names what others dial (a static voter is still dialled at its
    // controller.quorum.voters entry).
    let props = props(KAFKA_STYLE_CONTROLLER);
    let values = Values::parse(&props).unwrap();
    let names = &config.controller_listener_names;
    let protocols = effective_protocol_map(&values, names).unwrap();
    let advertised =
        advertised_controller_listeners(&values, names, &protocols, &config.listeners).unwrap();
    assert_eq!(advertised[0].host, "ctrl-2.example.com");
    assert_eq!(config.advertised_controller_listener(), &advertised[0]);
    assert_eq!(
        config.metadata_log_dir,
        PathBuf::from("/var/lib/kafka/controller-data")
    );
    assert_eq!(
        values.number(keys::OFFSETS_TOPIC_REPLICATION_FACTOR),
        Some(1)
    );
    assert_eq!(config.local_voter().unwrap().host, "ctrl-2.example.com");
    // The broker keys a copied file keeps are Kafka's: accepted without a warning.
    assert!(config.ignored_keys.is_empty(), "{:?}", config.ignored_keys);
    assert_eq!(
        config.not_honoured_keys,
        ["offsets.topic.replication.factor"]
    );
}

#[test]
fn defaults_are_kafkas() {
    // Defaults printed from Kafka 4.1.2's AbstractKafkaConfig.CONFIG_DEF.
    let c = parse(MINIMAL).unwrap();
    assert_eq!(c.quorum_election_timeout_ms, 1000);
    assert_eq!(c.quorum_fetch_timeout_ms, 2000);
    assert_eq!(c.quorum_election_backoff_max_ms, 1000);
    assert_eq!(c.quorum_request_timeout_ms, 2000);
    assert_eq!(c.quorum_retry_backoff_ms, 20);
    assert_eq!(c.quorum_append_linger_ms, 25);
    // KIP-1219 (Kafka 4.4's QuorumConfig): INT, default 1048576, atLeast(1).
    assert_eq!(c.quorum_fetch_max_bytes, 1_048_576);
    assert_eq!(c.quorum_fetch_snapshot_max_bytes, 1_048_576);
    assert_eq!(c.metadata_max_idle_interval_ms, 500);
    assert_eq!(c.broker_session_timeout_ms, 9000);
    assert_eq!(c.broker_heartbeat_interval_ms, 2000);
    assert_eq!(c.metadata_log_segment_bytes, 1_073_741_824);
    assert_eq!(
        default_of("metadata.log.segment.ms"),
        DefaultValue::Number(604_800_000)
    );
    assert_eq!(c.metadata_snapshot_max_new_record_bytes, 20_971_520);
    assert_eq!(c.metadata_snapshot_max_interval_ms, 3_600_000);
    assert_eq!(c.metadata_max_retention_bytes, 104_857_600);
    assert_eq!(c.metadata_max_retention_ms, 604_800_000);
    assert_eq!(c.socket_request_max_bytes, 104_857_600);
    assert_eq!(
        c.connections,
        ConnectionSettings {
            max_connections: i32::MAX,
            max_connections_per_ip: i32::MAX,
            max_connections_per_ip_overrides: vec![],
            connections_max_idle_ms: 600_000,
            listener_max_connections: Default::default(),
        }
    );
    assert_eq!(c.default_replication_factor, 1);
    assert_eq!(c.num_partitions, 1);
    assert_eq!(
        default_of("offsets.topic.replication.factor"),
        DefaultValue::Number(3)
    );
    assert_eq!(
        default_of("offsets.topic.num.partitions"),
        DefaultValue::Number(50)
    );
    assert_eq!(
        default_of("initial.broker.registration.timeout.ms"),
        DefaultValue::Number(60_000)
    );
    assert!(!c.unstable_feature_versions_enable);
    assert_eq!(c.metrics_listener, None);
    assert_eq!(c.log_dirs, vec![PathBuf::from("/tmp/kafka-logs")]);
    assert_eq!(c.metadata_log_dir, PathBuf::from("/tmp/kafka-logs"));
    assert!(c.ignored_keys.is_empty());
    assert!(c.not_honoured_keys.is_empty());
    assert!(c.warnings().is_empty());
}

fn default_of(key: &str) -> DefaultValue {
    lookup(key)
        .unwrap_or_else(|| panic!("{key} is in CONFIG_DEF"))
        .default
}

#[test]
fn directories_fall_back_like_kafka() {
    let c = parse(&format!("{MINIMAL}log.dir=/a\n")).unwrap();
    assert_eq!(
        (c.metadata_log_dir.as_path(), c.log_dirs.len()),
        (Path::new("/a"), 1)
    );
    let c = parse(&format!("{MINIMAL}log.dir=/a\nlog.dirs=/b , /c\n")).unwrap();
    assert_eq!(c.metadata_log_dir, PathBuf::from("/b"));
    assert_eq!(c.log_dirs, vec![PathBuf::from("/b"), PathBuf::from("/c")]);
    let c = parse(&format!("{MINIMAL}log.dirs=/c,/b\nmetadata.log.dir=/m\n")).unwrap();
    assert_eq!(c.metadata_log_dir, PathBuf::from("/m"));
    assert_eq!(
        c.all_log_dirs(),
        vec![
            PathBuf::from("/b"),
            PathBuf::from("/c"),
            PathBuf::from("/m")
        ]
    );
}

#[test]
fn tiny_segments_need_kafkas_internal_keys() {
    let err = parse(&format!("{MINIMAL}metadata.log.segment.bytes=4096\n")).unwrap_err();
    assert!(
        err.to_string().contains("metadata.log.segment.bytes"),
        "{err}"
    );
    let c = parse(&format!(
        "{MINIMAL}metadata.log.segment.min.bytes=1024\nmetadata.log.segment.bytes=4096\n"
    ))
    .unwrap();
    assert_eq!(
        (
            c.metadata_log_segment_bytes,
            c.metadata_log_segment_min_bytes
        ),
        (4096, 1024)
    );
    let c = parse(&format!(
        "{MINIMAL}internal.metadata.log.segment.bytes=2048\n"
    ))
    .unwrap();
    assert_eq!(
        (
            c.metadata_log_segment_bytes,
            c.metadata_log_segment_min_bytes
        ),
        (2048, 1)
    );
}

#[test]
fn overrides_and_kraftwerk_keys_are_read() {
    let c = parse(&format!(
        "{MINIMAL}controller.quorum.election.timeout.ms = 1500\nbroker.session.timeout.ms: 18000\n\
         metadata.log.segment.bytes 8388608\nkraftwerk.metrics.listener=0.0.0.0:9100\n\
         unstable.feature.versions.enable=TRUE\nnum.partitions=\\\n  3\n"
    ))
    .unwrap();
    assert_eq!(c.quorum_election_timeout_ms, 1500);
    assert_eq!(c.broker_session_timeout_ms, 18000);
    assert_eq!(c.metadata_log_segment_bytes, 8 << 20);
    assert_eq!(
        c.metrics_listener,
        Some(HostPort {
            host: "0.0.0.0".into(),
            port: 9100
        })
    );
    assert!(c.unstable_feature_versions_enable);
    assert_eq!(c.num_partitions, 3);
}

#[test]
fn every_malformed_value_names_its_key_and_value() {
    let cases: &[(&str, &str)] = &[
        ("node.id", "x"),
        ("node.id", "-1"),
        ("controller.quorum.voters", "1@localhost"),
        ("controller.quorum.voters", "one@localhost:9093"),
        ("controller.quorum.voters", "1@0.0.0.0:9093"),
        ("controller.quorum.voters", "1@localhost:9093,1@other:9093"),
        ("controller.quorum.bootstrap.servers", "localhost"),
        ("listeners", "CONTROLLER:/localhost:9093"),
        ("listeners", "CONTROLLER://localhost:port"),
        (
            "listeners",
            "CONTROLLER://localhost:9093,CONTROLLER://localhost:9094",
        ),
        ("listener.security.protocol.map", "CONTROLLER"),
        ("listener.security.protocol.map", "CONTROLLER:TLS"),
        ("ssl.client.auth", "always"),
        ("ssl.keystore.type", "JCEKS"),
        ("ssl.truststore.type", "BKS"),
        ("ssl.endpoint.identification.algorithm", "ldaps"),
        ("ssl.principal.mapping.rules", "RULE:x"),
        ("ssl.protocol", "TLSv1.1"),
        ("ssl.provider", "SunJSSE"),
        ("advertised.listeners", "CONTROLLER://0.0.0.0:9093"),
        ("controller.quorum.election.timeout.ms", "-5"),
        ("controller.quorum.fetch.timeout.ms", "2s"),
        ("controller.quorum.election.backoff.max.ms", "1.5"),
        ("controller.quorum.request.timeout.ms", "99999999999"),
        ("controller.quorum.retry.backoff.ms", "-1"),
        ("controller.quorum.append.linger.ms", "x"),
        ("controller.quorum.fetch.max.bytes", "0"),
        ("controller.quorum.fetch.max.bytes", "2147483648"),
        ("controller.quorum.fetch.snapshot.max.bytes", "-1"),
        ("controller.quorum.fetch.snapshot.max.bytes", "1MB"),
        ("metadata.max.idle.interval.ms", "-1"),
        ("broker.session.timeout.ms", "0"),
        ("broker.heartbeat.interval.ms", "soon"),
        ("metadata.log.segment.bytes", "1024"),
        ("metadata.log.segment.ms", "x"),
        ("metadata.log.max.record.bytes.between.snapshots", "0"),
        ("metadata.log.max.snapshot.interval.ms", "-1"),
        ("metadata.max.retention.bytes", "lots"),
        ("metadata.max.retention.ms", "1e9"),
        ("socket.request.max.bytes", "0"),
        ("default.replication.factor", "x"),
        ("num.partitions", "0"),
        ("offsets.topic.replication.factor", "40000"),
        ("offsets.topic.num.partitions", "0"),
        ("initial.broker.registration.timeout.ms", "x"),
        ("unstable.feature.versions.enable", "yes"),
        ("kraftwerk.metrics.listener", "localhost"),
        ("process.roles", "broker,controller"),
        ("process.roles", "broker"),
        // Fail closed: an authorizer kraftwerk does not implement stops the node.
        (
            "authorizer.class.name",
            "kafka.security.authorizer.AclAuthorizer",
        ),
        ("authorizer.class.name", "com.example.OpaAuthorizer"),
        ("super.users", "admin"),
        ("allow.everyone.if.no.acl.found", "maybe"),
    ];
    for (key, value) in cases {
        let text = format!("{MINIMAL}{key}={value}\n");
        let err = parse(&text).expect_err(&format!("{key}={value} must be rejected"));
        let message = err.to_string();
        assert!(message.contains(key), "{key}={value}: {message}");
        assert!(message.contains(value), "{key}={value}: {message}");
    }
}

#[test]
fn the_authorizer_is_off_by_default_and_standard_authorizer_reads_its_keys() {
    assert_eq!(parse(MINIMAL).unwrap().authorizer, None);
    let c = parse(&format!(
        "{MINIMAL}{STANDARD_AUTHORIZER}super.users= User:CN=broker,OU=it ; User:admin\n"
    ))
    .unwrap();
    let a = c.authorizer.expect("enabled");
    assert_eq!(
        a.super_users.iter().map(String::as_str).collect::<Vec<_>>(),
        ["User:CN=broker,OU=it", "User:admin"]
    );
    assert!(!a.allow_everyone_if_no_acl_found);
    let err = parse(&format!(
        "{MINIMAL}authorizer.class.name=com.example.Other\n"
    ))
    .unwrap_err();
    assert!(
        err.to_string().contains("StandardAuthorizer"),
        "the refusal names what kraftwerk runs: {err}"
    );
}

#[test]
fn missing_required_keys_are_named() {
    for key in ["process.roles", "node.id", "controller.listener.names"] {
        let text: String = MINIMAL
            .lines()
            .filter(|l| !l.starts_with(key))
            .map(|l| format!("{l}\n"))
            .collect();
        let err = parse(&text).unwrap_err();
        assert!(
            matches!(err, ConfigError::Missing { key: k } if k == key),
            "{key}: {err}"
        );
    }
    let err = parse("process.roles=controller\nnode.id=1\nlisteners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\n")
        .unwrap_err();
    assert!(
        err.to_string().contains("controller.quorum.voters"),
        "{err}"
    );
}

#[test]
fn cross_key_validation_follows_kafka_config() {
    // node.id must be a voter.
    let err = parse(&MINIMAL.replace("node.id=1", "node.id=4")).unwrap_err();
    assert!(
        err.to_string().contains("node id 4 must be included"),
        "{err}"
    );
    // Controller listener must be in listeners.
    let err = parse(&format!(
        "{MINIMAL}controller.listener.names=CONTROLLER,OTHER\n\
         listener.security.protocol.map=CONTROLLER:PLAINTEXT,OTHER:PLAINTEXT\n"
    ))
    .unwrap_err();
    assert!(
        err.to_string().contains("`OTHER` is not in listeners"),
        "{err}"
    );
    // Kafka fails the same way when the only controller name is not a listener: the
    // listener then has no security protocol.
    let err = parse(&MINIMAL.replace("names=CONTROLLER", "names=CTRL")).unwrap_err();
    assert!(
        err.to_string()
            .contains("No security protocol defined for listener CONTROLLER"),
        "{err}"
    );
    // A controller has only controller listeners.
    let err = parse(&format!(
        "{MINIMAL}listeners=CONTROLLER://:9093,PLAINTEXT://:9092\n"
    ))
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("must only contain KRaft controller listeners"),
        "{err}"
    );
    // broker.id must agree with node.id.
    assert!(parse(&format!("{MINIMAL}broker.id=2\n")).is_err());
    assert!(parse(&format!("{MINIMAL}broker.id=1\n")).is_ok());
    // Bootstrap servers alone are accepted (dynamic quorum), voters are then empty.
    let c = parse(
        "process.roles=controller\nnode.id=9\ncontroller.quorum.bootstrap.servers=a:1,b:2\n\
         listeners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\n",
    )
    .unwrap();
    assert!(c.quorum_voters.is_empty());
    assert_eq!(
        parse(
            "process.roles=controller\nnode.id=9\ncontroller.quorum.bootstrap.servers=a:1\n\
             listeners=CONTROLLER://ctrl-9:9093\ncontroller.listener.names=CONTROLLER\n",
        )
        .unwrap()
        .registration_endpoint(),
        Some(("ctrl-9".to_owned(), 9093)),
        "a dynamic controller registers its listener, else DescribeCluster lists no controller"
    );
    assert_eq!(parse_bootstrap_servers("a:1,b:2").map(|s| s.len()), Ok(2));
    assert!(
        c.not_honoured_keys.is_empty(),
        "bootstrap servers are honoured"
    );
    assert_eq!(
        c.quorum_bootstrap_servers
            .iter()
            .map(|b| (b.host.as_str(), b.port))
            .collect::<Vec<_>>(),
        vec![("a", 1), ("b", 2)]
    );
}

#[test]
fn security_protocol_map_defaults_like_kraft() {
    // Absent map: controller listener names become PLAINTEXT (KafkaConfig's KRaft default).
    let c = parse(MINIMAL).unwrap();
    assert_eq!(
        c.controller_listener().security_protocol,
        SecurityProtocol::Plaintext
    );
    // An explicit map must name the controller listener.
    let err = parse(&format!(
        "{MINIMAL}listener.security.protocol.map=PLAINTEXT:PLAINTEXT\n"
    ))
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("No security protocol defined for listener CONTROLLER"),
        "{err}"
    );
    let c = parse(&format!(
        "{MINIMAL}listener.security.protocol.map=controller:plaintext\n"
    ))
    .unwrap();
    assert_eq!(
        c.controller_listener().security_protocol,
        SecurityProtocol::Plaintext
    );
    // Names are upper-cased, so a lower-case listener matches an upper-case controller name.
    let c = parse(&MINIMAL.replace("listeners=CONTROLLER", "listeners=controller")).unwrap();
    assert_eq!(c.controller_listener().listener_name, "CONTROLLER");
}

#[test]
fn listeners_may_share_a_port_only_across_ip_families() {
    let two = "controller.listener.names=A,B\nlisteners=A://127.0.0.1:9093,B://[::1]:9093\n";
    let map = "listener.security.protocol.map=A:PLAINTEXT,B:PLAINTEXT\n";
    let base = "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n";
    let c = parse(&format!("{base}{two}{map}")).unwrap();
    assert_eq!(c.listeners.len(), 2);
    let same_family = two.replace("[::1]", "127.0.0.2");
    assert!(parse(&format!("{base}{same_family}{map}")).is_err());
}

#[test]
fn load_reports_missing_file_and_syntax_errors_with_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.properties");
    let err = NodeConfig::load(&path).unwrap_err();
    assert!(err.to_string().contains("server.properties"), "{err}");
    fs::write(&path, format!("{MINIMAL}bad=\\uZZZZ\n")).unwrap();
    let err = NodeConfig::load(&path).unwrap_err();
    assert!(
        matches!(err, ConfigError::Syntax { .. }) && err.to_string().contains("line 6"),
        "{err}"
    );
    fs::write(&path, MINIMAL).unwrap();
    assert_eq!(NodeConfig::load(&path).unwrap().node_id, 1);
}

#[test]
fn table_names_are_unique_and_defaults_fit_their_type() {
    for (i, key) in CONFIG_DEF.iter().enumerate() {
        assert!(
            !CONFIG_DEF[..i].iter().any(|k| k.name == key.name),
            "{} is defined twice",
            key.name
        );
        assert!(!key.doc.is_empty(), "{} has no doc line", key.name);
        // A default goes through the same type parse and validator as a written value.
        match (key.ty, key.default) {
            (_, DefaultValue::Required | DefaultValue::Null) => {}
            (ConfigType::Boolean, DefaultValue::Bool(b)) => {
                assert_eq!(key.parse(&b.to_string()).unwrap(), Value::Bool(b))
            }
            (ConfigType::Short | ConfigType::Int | ConfigType::Long, DefaultValue::Number(n)) => {
                let text = n.to_string();
                assert_eq!(key.parse(&text).unwrap(), Value::Number(n), "{}", key.name)
            }
            (ConfigType::String | ConfigType::List, DefaultValue::Text(t)) => {
                assert_eq!(key.parse(t).unwrap(), Value::Text(t), "{}", key.name)
            }
            (ty, default) => panic!("{}: default {default:?} is not a {ty:?}", key.name),
        }
    }
}

/// Two voters and two controller listeners, so every key has a valid value other than this
/// file's or its default.
const TWO_LISTENERS: &str = "process.roles=controller\nnode.id=1\n\
                             controller.quorum.voters=1@localhost:9093,2@localhost:9094\n\
                             listeners=CONTROLLER://localhost:9093,OTHER://localhost:9095\n\
                             controller.listener.names=CONTROLLER,OTHER\n";

/// One value per key of the table, set on top of [`TWO_LISTENERS`]: for `Used` and
/// `NotHonoured` keys a valid value that differs from it, for `Checked` keys a value kraftwerk
/// refuses.
const SAMPLES: &[(&str, &str)] = &[
    ("process.roles", "broker"),
    ("delete.topic.enable", "false"),
    ("auto.leader.rebalance.enable", "false"),
    ("leader.imbalance.check.interval.seconds", "30"),
    ("min.insync.replicas", "2"),
    ("unclean.leader.election.enable", "true"),
    ("unclean.leader.election.interval.ms", "1000"),
    ("remote.log.storage.system.enable", "true"),
    ("create.topic.policy.class.name", "com.example.Policy"),
    ("alter.config.policy.class.name", "com.example.Policy"),
    ("config.providers", "file"),
    ("principal.builder.class", "com.example.PrincipalBuilder"),
    ("delegation.token.secret.key", "s3cr3t"),
    ("delegation.token.master.key", "s3cr3t"),
    ("delegation.token.max.lifetime.ms", "3600000"),
    ("delegation.token.expiry.time.ms", "60000"),
    ("delegation.token.expiry.check.interval.ms", "1000"),
    ("unstable.api.versions.enable", "true"),
    ("node.id", "2"),
    ("broker.id", "2"),
    (
        "controller.quorum.voters",
        "1@localhost:9093,2@otherhost:9094",
    ),
    ("controller.quorum.bootstrap.servers", "localhost:9093"),
    ("controller.listener.names", "OTHER,CONTROLLER"),
    (
        "listeners",
        "CONTROLLER://localhost:9099,OTHER://localhost:9095",
    ),
    (
        "listener.security.protocol.map",
        "CONTROLLER:PLAINTEXT,OTHER:SSL",
    ),
    ("advertised.listeners", "CONTROLLER://ctrl.example.com:9093"),
    ("log.dirs", "/b,/c"),
    ("log.dir", "/a"),
    ("metadata.log.dir", "/m"),
    ("kraftwerk.metrics.listener", "localhost:9100"),
    ("metadata.log.segment.min.bytes", "1024"),
    ("internal.metadata.log.segment.bytes", "2048"),
    ("controller.quorum.election.timeout.ms", "1500"),
    ("controller.quorum.fetch.timeout.ms", "3000"),
    ("controller.quorum.election.backoff.max.ms", "1500"),
    ("controller.quorum.request.timeout.ms", "3000"),
    ("controller.quorum.retry.backoff.ms", "30"),
    ("controller.quorum.append.linger.ms", "5"),
    ("controller.quorum.auto.join.enable", "true"),
    ("controller.quorum.fetch.max.bytes", "65536"),
    ("controller.quorum.fetch.snapshot.max.bytes", "65536"),
    ("metadata.max.idle.interval.ms", "1000"),
    ("broker.session.timeout.ms", "18000"),
    ("broker.heartbeat.interval.ms", "3000"),
    ("metadata.log.segment.bytes", "16777216"),
    ("metadata.log.segment.ms", "3600000"),
    ("metadata.log.max.record.bytes.between.snapshots", "1048576"),
    ("metadata.log.max.snapshot.interval.ms", "60000"),
    ("metadata.max.retention.bytes", "-1"),
    ("metadata.max.retention.ms", "-1"),
    ("socket.request.max.bytes", "1048576"),
    ("max.connections", "1000"),
    ("max.connections.per.ip", "100"),
    ("max.connections.per.ip.overrides", "127.0.0.1:200"),
    ("connections.max.idle.ms", "60000"),
    ("default.replication.factor", "3"),
    ("num.partitions", "3"),
    ("offsets.topic.replication.factor", "1"),
    ("offsets.topic.num.partitions", "10"),
    ("initial.broker.registration.timeout.ms", "30000"),
    ("unstable.feature.versions.enable", "true"),
    // ssl.* keys: set on top of TLS_TWO_LISTENERS (see base_for).
    ("ssl.protocol", "SSLv3"),
    ("ssl.provider", "SunJSSE"),
    ("ssl.cipher.suites", "TLS_AES_128_GCM_SHA256"),
    ("ssl.enabled.protocols", "TLSv1.3"),
    ("ssl.keystore.type", "JKS"),
    ("ssl.keystore.location", "/etc/kafka/other.p12"),
    ("ssl.keystore.password", "other-password"),
    ("ssl.key.password", "key-password"),
    ("ssl.keystore.key", "ignored"),
    ("ssl.keystore.certificate.chain", "ignored"),
    ("ssl.truststore.type", "PEM"),
    ("ssl.truststore.location", "/etc/kafka/other-trust.p12"),
    ("ssl.truststore.password", "trust-password"),
    ("ssl.truststore.certificates", "ignored"),
    ("ssl.keymanager.algorithm", "PKIX"),
    ("ssl.trustmanager.algorithm", "SunX509"),
    ("ssl.endpoint.identification.algorithm", ""),
    ("ssl.secure.random.implementation", "SHA1PRNG"),
    ("ssl.engine.factory.class", "com.example.Factory"),
    ("ssl.client.auth", "required"),
    (
        "ssl.principal.mapping.rules",
        "RULE:^CN=([^,]+),.*$/$1/L,DEFAULT",
    ),
    // Authorization: super.users and allow.everyone.if.no.acl.found on top of the authorizer.
    (
        "authorizer.class.name",
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    ),
    ("super.users", "User:CN=broker,OU=it;User:admin"),
    ("allow.everyone.if.no.acl.found", "true"),
    // SASL keys: set on top of sasl::tests::SASL_TWO_LISTENERS (see base_for).
    ("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512"),
    ("sasl.mechanism.controller.protocol", "SCRAM-SHA-512"),
    ("connections.max.reauth.ms", "3600000"),
    ("connection.failed.authentication.delay.ms", "500"),
    ("sasl.server.max.receive.size", "65536"),
    ("sasl.server.callback.handler.class", "com.example.Handler"),
    ("sasl.client.callback.handler.class", "com.example.Handler"),
    ("sasl.login.class", "com.example.Login"),
    ("sasl.login.callback.handler.class", "com.example.Handler"),
];

const STANDARD_AUTHORIZER: &str =
    "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n";

/// [`TWO_LISTENERS`] with the controller listener on SSL and a PKCS12 key store.
const TLS_TWO_LISTENERS: &str = "process.roles=controller\nnode.id=1\n\
    controller.quorum.voters=1@localhost:9093,2@localhost:9094\n\
    listeners=CONTROLLER://localhost:9093,OTHER://localhost:9095\n\
    controller.listener.names=CONTROLLER,OTHER\n\
    listener.security.protocol.map=CONTROLLER:SSL,OTHER:SSL\n\
    ssl.keystore.type=PKCS12\nssl.keystore.location=/etc/kafka/node.p12\n\
    ssl.keystore.password=secret\nssl.truststore.location=/etc/kafka/trust.p12\n";

/// The file a sample is set on: `ssl.*` keys act only on an SSL listener. Samples that need a
/// companion key get it here too (inline PEM keys need the PEM type and the other half; the
/// sample replaces the base's value, the last one in a file winning).
fn base_for(key: &str) -> String {
    match key {
        "listener.security.protocol.map" => TLS_TWO_LISTENERS.to_owned(),
        "ssl.keystore.key" | "ssl.keystore.certificate.chain" => TLS_TWO_LISTENERS
            .replace("ssl.keystore.type=PKCS12", "ssl.keystore.type=PEM")
            .replace(
                "ssl.keystore.location=/etc/kafka/node.p12\n",
                "ssl.keystore.key=key\n",
            )
            .replace(
                "ssl.keystore.password=secret\n",
                "ssl.keystore.certificate.chain=chain\n",
            ),
        "ssl.truststore.certificates" => TLS_TWO_LISTENERS.replace(
            "ssl.truststore.location=/etc/kafka/trust.p12\n",
            "ssl.truststore.type=PEM\n",
        ),
        k if k.starts_with("ssl.") => TLS_TWO_LISTENERS.to_owned(),
        k if k.starts_with("sasl.")
            || k == "connections.max.reauth.ms"
            || k == "connection.failed.authentication.delay.ms" =>
        {
            super::sasl::tests::SASL_TWO_LISTENERS.to_owned()
        }
        "super.users" | "allow.everyone.if.no.acl.found" => {
            format!("{TWO_LISTENERS}{STANDARD_AUTHORIZER}")
        }
        // The periods matter only with a secret.
        k if k.starts_with("delegation.token.") && !k.ends_with(".key") => {
            format!("{TWO_LISTENERS}delegation.token.secret.key=base-secret\n")
        }
        _ => TWO_LISTENERS.to_owned(),
    }
}

/// Everything a configuration hands on: what `run` gives the server, and what
/// `kraftwerk format` reads (cli/format.rs: node id, voters, directories, unstable versions).
fn reached(c: &NodeConfig) -> String {
    let formatted = FormattedDir {
        cluster_id: "MkU3OEVBNTcwNTJENDM2Qg".to_owned(),
        node_id: 1,
        directory_id: Uuid::nil(),
        bootstrap: BootstrapMetadata::from_version(MetadataVersion::LATEST_PRODUCTION, "test"),
    };
    format!(
        "{:?}",
        (
            c.server_config(&formatted),
            c.node_id,
            &c.quorum_voters,
            c.all_log_dirs(),
            &c.metadata_log_dir,
            c.unstable_feature_versions_enable,
            c.controller_listener_tls
                .values()
                .map(tls_secrets)
                .collect::<Vec<_>>()
        )
    )
}

/// What the stores' `Debug` hides (passwords, inline PEM, the JKS name), so that setting one
/// of those keys shows in [`reached`].
fn tls_secrets(t: &kraftwerk_server::ListenerTls) -> String {
    use kraftwerk_tls::{KeyStoreSource as K, TrustStoreSource as T};
    let k = match &t.settings.keystore {
        Some(K::Pkcs12 {
            password,
            key_password,
            named_jks,
            ..
        }) => {
            format!("{password}/{key_password:?}/{named_jks}")
        }
        Some(K::PemFile { key_password, .. }) => format!("{key_password:?}"),
        Some(K::PemInline {
            chain,
            key,
            key_password,
        }) => format!("{chain}/{key}/{key_password:?}"),
        None => String::new(),
    };
    let t = match &t.settings.truststore {
        T::Pkcs12 {
            password,
            named_jks,
            ..
        } => format!("{password}/{named_jks}"),
        T::PemInline { certificates } => certificates.clone(),
        _ => String::new(),
    };
    format!("{k};{t}")
}

#[test]
fn every_key_reaches_the_node_or_is_refused_or_reported_as_not_honoured() {
    for key in CONFIG_DEF {
        let samples = SAMPLES.iter().filter(|(k, _)| *k == key.name).count();
        assert_eq!(samples, 1, "{}: give it one entry in SAMPLES", key.name);
    }
    for (key, sample) in SAMPLES {
        let base_file = base_for(key);
        let base = reached(&parse(&base_file).unwrap());
        let def = lookup(key).unwrap_or_else(|| panic!("{key} is not in CONFIG_DEF"));
        let result = parse(&format!("{base_file}{key}={sample}\n"));
        match def.usage {
            Usage::Used => {
                let c = result.unwrap_or_else(|e| panic!("{key}={sample}: {e}"));
                assert!(
                    reached(&c) != base,
                    "{key}={sample} reaches neither server_config nor format: mark it NotHonoured"
                );
                assert!(c.not_honoured_keys.is_empty(), "{key}");
                assert!(c.ignored_keys.is_empty(), "{key}");
            }
            Usage::Checked => {
                let err = result.expect_err(&format!("{key}={sample} must be refused"));
                assert!(err.to_string().contains(key), "{key}={sample}: {err}");
            }
            Usage::NotHonoured => {
                let c = result.unwrap_or_else(|e| panic!("{key}={sample}: {e}"));
                assert!(
                    reached(&c) == base,
                    "{key}={sample} changes the node: mark it Used"
                );
                assert_eq!(c.not_honoured_keys, [*key]);
                let warning = c.warnings().join("\n");
                assert!(
                    warning.contains(key) && warning.contains("does not act on"),
                    "{warning}"
                );
            }
        }
    }
}

#[test]
fn the_warnings_name_unknown_keys_one_by_one_and_pass_kafkas_broker_keys() {
    let c = parse(&format!(
        "{MINIMAL}num.io.threads=8\noffsets.topic.num.partitions=50\n\
         initial.broker.registration.timeout.ms=1000\ncontroler.quorum.election.timeout.ms=1\n\
         my.own.setting=1\n"
    ))
    .unwrap();
    assert_eq!(
        c.ignored_keys,
        ["controler.quorum.election.timeout.ms", "my.own.setting"],
        "num.io.threads is a Kafka broker key: accepted silently"
    );
    assert_eq!(
        c.not_honoured_keys,
        [
            "initial.broker.registration.timeout.ms",
            "offsets.topic.num.partitions"
        ]
    );
    assert_eq!(
        c.warnings(),
        [
            "unknown configuration key `controler.quorum.election.timeout.ms` ignored (neither \
             Kafka nor kraftwerk defines it); did you mean `controller.quorum.election.timeout.ms`?",
            "unknown configuration key `my.own.setting` ignored (neither Kafka nor kraftwerk \
             defines it)",
            "accepting 2 configuration keys kraftwerk validates but does not act on (no effect): \
             initial.broker.registration.timeout.ms, offsets.topic.num.partitions",
        ]
    );
}
