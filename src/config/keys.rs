//! Every `server.properties` key kraftwerk knows, as one table like Kafka's
//! `AbstractKafkaConfig.CONFIG_DEF` (`KRaftConfigs`, `QuorumConfig`, `SocketServerConfigs`,
//! `ServerLogConfigs`, `ServerConfigs` of Kafka 4.1): name, type, default, validator, whether
//! kraftwerk acts on it, and a doc line. Parsing, defaults, single-key range checks and their
//! error messages all come from here (`Values::parse`, [`ConfigKey::parse`]). Defaults that a
//! lower layer also needs are that layer's constants, so each number is written once.

use kraftwerk_controller::controller::DelegationTokenSettings;
use kraftwerk_controller::ControllerConfig;
use kraftwerk_log::{
    DEFAULT_RETENTION_BYTES, DEFAULT_RETENTION_MS, DEFAULT_SEGMENT_BYTES,
    DEFAULT_SEGMENT_MIN_BYTES, DEFAULT_SEGMENT_MS,
};
use kraftwerk_node::SnapshotPolicy;
use kraftwerk_protocol::frame::DEFAULT_MAX_FRAME_BYTES;
use kraftwerk_raft::config::{
    DEFAULT_APPEND_LINGER_MS, DEFAULT_ELECTION_BACKOFF_MAX_MS, DEFAULT_ELECTION_TIMEOUT_MS,
    DEFAULT_FETCH_MAX_BYTES, DEFAULT_FETCH_SNAPSHOT_MAX_BYTES, DEFAULT_FETCH_TIMEOUT_MS,
    DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_RETRY_BACKOFF_MS,
};

use super::def::ConfigType::{Boolean, Int, List, Long, Short, String as Str};
use super::def::DefaultValue::{Bool, Null, Number, Required, Text};
use super::def::Usage::{Checked, NotHonoured, Used};
use super::def::Validator::{Any, AtLeast, Syntax};
use super::def::{define, list_items, ConfigKey};
use super::quorum::{parse_bootstrap_servers, parse_metrics_listener, parse_voters};
use super::sasl;
use super::security_protocol::parse_protocol_map;
use super::tls;

pub(crate) const PROCESS_ROLES: &str = "process.roles";
pub(crate) const NODE_ID: &str = "node.id";
pub(crate) const BROKER_ID: &str = "broker.id";
pub(crate) const QUORUM_VOTERS: &str = "controller.quorum.voters";
pub(crate) const DELETE_TOPIC_ENABLE: &str = "delete.topic.enable";
pub(crate) const AUTO_LEADER_REBALANCE_ENABLE: &str = "auto.leader.rebalance.enable";
pub(crate) const LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS: &str =
    "leader.imbalance.check.interval.seconds";
pub(crate) const MIN_INSYNC_REPLICAS: &str = "min.insync.replicas";
pub(crate) const UNCLEAN_LEADER_ELECTION_ENABLE: &str = "unclean.leader.election.enable";
pub(crate) const UNCLEAN_LEADER_ELECTION_INTERVAL_MS: &str = "unclean.leader.election.interval.ms";
pub(crate) const REMOTE_LOG_STORAGE_SYSTEM_ENABLE: &str = "remote.log.storage.system.enable";
pub(crate) const CREATE_TOPIC_POLICY_CLASS_NAME: &str = "create.topic.policy.class.name";
pub(crate) const ALTER_CONFIG_POLICY_CLASS_NAME: &str = "alter.config.policy.class.name";
pub(crate) const CONFIG_PROVIDERS: &str = "config.providers";
pub(crate) const QUORUM_BOOTSTRAP_SERVERS: &str = "controller.quorum.bootstrap.servers";
pub(crate) const QUORUM_AUTO_JOIN_ENABLE: &str = "controller.quorum.auto.join.enable";
pub(crate) const CONTROLLER_LISTENER_NAMES: &str = "controller.listener.names";
pub(crate) const LISTENERS: &str = "listeners";
pub(crate) const LISTENER_SECURITY_PROTOCOL_MAP: &str = "listener.security.protocol.map";
pub(crate) const ADVERTISED_LISTENERS: &str = "advertised.listeners";
pub(crate) const LOG_DIRS: &str = "log.dirs";
pub(crate) const LOG_DIR: &str = "log.dir";
pub(crate) const METADATA_LOG_DIR: &str = "metadata.log.dir";
pub(crate) const KRAFTWERK_METRICS_LISTENER: &str = "kraftwerk.metrics.listener";
pub(crate) const METADATA_LOG_SEGMENT_MIN_BYTES: &str = "metadata.log.segment.min.bytes";
pub(crate) const INTERNAL_METADATA_LOG_SEGMENT_BYTES: &str = "internal.metadata.log.segment.bytes";
pub(crate) const QUORUM_ELECTION_TIMEOUT_MS: &str = "controller.quorum.election.timeout.ms";
pub(crate) const QUORUM_FETCH_TIMEOUT_MS: &str = "controller.quorum.fetch.timeout.ms";
pub(crate) const QUORUM_ELECTION_BACKOFF_MAX_MS: &str = "controller.quorum.election.backoff.max.ms";
pub(crate) const QUORUM_REQUEST_TIMEOUT_MS: &str = "controller.quorum.request.timeout.ms";
pub(crate) const QUORUM_RETRY_BACKOFF_MS: &str = "controller.quorum.retry.backoff.ms";
pub(crate) const QUORUM_APPEND_LINGER_MS: &str = "controller.quorum.append.linger.ms";
pub(crate) const QUORUM_FETCH_MAX_BYTES: &str = "controller.quorum.fetch.max.bytes";
pub(crate) const QUORUM_FETCH_SNAPSHOT_MAX_BYTES: &str =
    "controller.quorum.fetch.snapshot.max.bytes";
pub(crate) const METADATA_MAX_IDLE_INTERVAL_MS: &str = "metadata.max.idle.interval.ms";
pub(crate) const BROKER_SESSION_TIMEOUT_MS: &str = "broker.session.timeout.ms";
pub(crate) const BROKER_HEARTBEAT_INTERVAL_MS: &str = "broker.heartbeat.interval.ms";
pub(crate) const METADATA_LOG_SEGMENT_BYTES: &str = "metadata.log.segment.bytes";
pub(crate) const METADATA_LOG_SEGMENT_MS: &str = "metadata.log.segment.ms";
pub(crate) const METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES: &str =
    "metadata.log.max.record.bytes.between.snapshots";
pub(crate) const METADATA_SNAPSHOT_MAX_INTERVAL_MS: &str = "metadata.log.max.snapshot.interval.ms";
pub(crate) const METADATA_MAX_RETENTION_BYTES: &str = "metadata.max.retention.bytes";
pub(crate) const METADATA_MAX_RETENTION_MS: &str = "metadata.max.retention.ms";
pub(crate) const SOCKET_REQUEST_MAX_BYTES: &str = "socket.request.max.bytes";
pub(crate) const MAX_CONNECTIONS: &str = "max.connections";
pub(crate) const MAX_CONNECTIONS_PER_IP: &str = "max.connections.per.ip";
pub(crate) const MAX_CONNECTIONS_PER_IP_OVERRIDES: &str = "max.connections.per.ip.overrides";
pub(crate) const CONNECTIONS_MAX_IDLE_MS: &str = "connections.max.idle.ms";
pub(crate) const DEFAULT_REPLICATION_FACTOR: &str = "default.replication.factor";
pub(crate) const NUM_PARTITIONS: &str = "num.partitions";
pub(crate) const OFFSETS_TOPIC_REPLICATION_FACTOR: &str = "offsets.topic.replication.factor";
pub(crate) const OFFSETS_TOPIC_NUM_PARTITIONS: &str = "offsets.topic.num.partitions";
pub(crate) const INITIAL_BROKER_REGISTRATION_TIMEOUT_MS: &str =
    "initial.broker.registration.timeout.ms";
pub(crate) const UNSTABLE_FEATURE_VERSIONS_ENABLE: &str = "unstable.feature.versions.enable";
pub(crate) const SSL_PROTOCOL: &str = "ssl.protocol";
pub(crate) const SSL_PROVIDER: &str = "ssl.provider";
pub(crate) const SSL_CIPHER_SUITES: &str = "ssl.cipher.suites";
pub(crate) const SSL_ENABLED_PROTOCOLS: &str = "ssl.enabled.protocols";
pub(crate) const SSL_KEYSTORE_TYPE: &str = "ssl.keystore.type";
pub(crate) const SSL_KEYSTORE_LOCATION: &str = "ssl.keystore.location";
pub(crate) const SSL_KEYSTORE_PASSWORD: &str = "ssl.keystore.password";
pub(crate) const SSL_KEY_PASSWORD: &str = "ssl.key.password";
pub(crate) const SSL_KEYSTORE_KEY: &str = "ssl.keystore.key";
pub(crate) const SSL_KEYSTORE_CERTIFICATE_CHAIN: &str = "ssl.keystore.certificate.chain";
pub(crate) const SSL_TRUSTSTORE_TYPE: &str = "ssl.truststore.type";
pub(crate) const SSL_TRUSTSTORE_LOCATION: &str = "ssl.truststore.location";
pub(crate) const SSL_TRUSTSTORE_PASSWORD: &str = "ssl.truststore.password";
pub(crate) const SSL_TRUSTSTORE_CERTIFICATES: &str = "ssl.truststore.certificates";
pub(crate) const SSL_KEYMANAGER_ALGORITHM: &str = "ssl.keymanager.algorithm";
pub(crate) const SSL_TRUSTMANAGER_ALGORITHM: &str = "ssl.trustmanager.algorithm";
pub(crate) const SSL_ENDPOINT_IDENTIFICATION_ALGORITHM: &str =
    "ssl.endpoint.identification.algorithm";
pub(crate) const SSL_SECURE_RANDOM_IMPLEMENTATION: &str = "ssl.secure.random.implementation";
pub(crate) const SSL_ENGINE_FACTORY_CLASS: &str = "ssl.engine.factory.class";
pub(crate) const SSL_CLIENT_AUTH: &str = "ssl.client.auth";
pub(crate) const SSL_PRINCIPAL_MAPPING_RULES: &str = "ssl.principal.mapping.rules";
pub(crate) const SASL_ENABLED_MECHANISMS: &str = "sasl.enabled.mechanisms";
pub(crate) const SASL_MECHANISM_CONTROLLER_PROTOCOL: &str = "sasl.mechanism.controller.protocol";
pub(crate) const CONNECTIONS_MAX_REAUTH_MS: &str = "connections.max.reauth.ms";
pub(crate) const CONNECTION_FAILED_AUTHENTICATION_DELAY_MS: &str =
    "connection.failed.authentication.delay.ms";
pub(crate) const SASL_SERVER_MAX_RECEIVE_SIZE: &str = "sasl.server.max.receive.size";
pub(crate) const SASL_SERVER_CALLBACK_HANDLER_CLASS: &str = "sasl.server.callback.handler.class";
pub(crate) const SASL_CLIENT_CALLBACK_HANDLER_CLASS: &str = "sasl.client.callback.handler.class";
pub(crate) const SASL_LOGIN_CLASS: &str = "sasl.login.class";
pub(crate) const SASL_LOGIN_CALLBACK_HANDLER_CLASS: &str = "sasl.login.callback.handler.class";
pub(crate) const AUTHORIZER_CLASS_NAME: &str = "authorizer.class.name";
pub(crate) const SUPER_USERS: &str = "super.users";
pub(crate) const ALLOW_EVERYONE_IF_NO_ACL_FOUND: &str = "allow.everyone.if.no.acl.found";
pub(crate) const PRINCIPAL_BUILDER_CLASS: &str = "principal.builder.class";
pub(crate) const DELEGATION_TOKEN_SECRET_KEY: &str = "delegation.token.secret.key";
pub(crate) const DELEGATION_TOKEN_MASTER_KEY: &str = "delegation.token.master.key";
pub(crate) const DELEGATION_TOKEN_MAX_LIFETIME_MS: &str = "delegation.token.max.lifetime.ms";
pub(crate) const DELEGATION_TOKEN_EXPIRY_TIME_MS: &str = "delegation.token.expiry.time.ms";
pub(crate) const DELEGATION_TOKEN_EXPIRY_CHECK_INTERVAL_MS: &str =
    "delegation.token.expiry.check.interval.ms";
pub(crate) const UNSTABLE_API_VERSIONS_ENABLE: &str = "unstable.api.versions.enable";

/// `BrokerSecurityConfigs.DEFAULT_SSL_PRINCIPAL_BUILDER`'s class: the principals kraftwerk
/// builds (`User:` + the mapped certificate subject, `User:ANONYMOUS` on PLAINTEXT).
const DEFAULT_PRINCIPAL_BUILDER: &str =
    "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder";

/// Every key kraftwerk knows, in the order they are parsed (so a file with several bad values
/// is refused for the first of them). A key the file sets that is not here is ignored with a
/// warning.
#[rustfmt::skip]
pub static CONFIG_DEF: &[ConfigKey] = &[
    // Identity and role.
    define(PROCESS_ROLES, List, Required,
        Syntax(controller_role_only), Checked,
        "Roles of this node; kraftwerk runs exactly `controller` (brokers and combined nodes stay \
         on Apache Kafka)."),
    define(NODE_ID, Int, Required,
        AtLeast(0), Used,
        "This node's id; must be one of the voters when the quorum is static."),
    define(BROKER_ID, Int, Number(-1),
        Any, Checked,
        "Legacy alias of node.id: when set to anything but -1 it must equal node.id."),
    // Quorum (QuorumConfig).
    define(QUORUM_VOTERS, List, Text(""),
        Syntax(voters_syntax), Used,
        "Static voter set, `id@host:port,...`; ids unique, hosts routable."),
    define(QUORUM_BOOTSTRAP_SERVERS, List, Text(""),
        Syntax(bootstrap_servers_syntax), Used,
        "`host:port,...` of the controllers of a dynamic quorum (KIP-853); this or the voters must \
         be set. A node that does not know the leader fetches from one of them."),
    define(QUORUM_AUTO_JOIN_ENABLE, Boolean, Bool(false),
        Any, Used,
        "Kafka 4.2+: an observer controller of a dynamic quorum adds itself to the voter set \
         (removing its id's old directory first)."),
    // Listeners (SocketServerConfigs, KRaftConfigs).
    define(CONTROLLER_LISTENER_NAMES, List, Required,
        Any, Used,
        "Names of the controller listeners; the first is the one this node serves and peers use."),
    define(LISTENERS, Str, Text("PLAINTEXT://:9092"),
        Any, Used,
        "`NAME://host:port,...`; for a controller all are controller listeners (empty host: every \
         interface)."),
    define(LISTENER_SECURITY_PROTOCOL_MAP, Str,
        Text("SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"),
        Syntax(protocol_map_syntax), Used,
        "`NAME:PROTOCOL,...`; kraftwerk serves PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL (SASL \
         with PLAIN and SCRAM). Unset: controller listener names map to PLAINTEXT."),
    define(ADVERTISED_LISTENERS, Str, Null,
        Any, Used,
        "`NAME://host:port,...` advertised to others: a dynamic controller's voter entry and \
         ControllerRegistration use its controller listener's entry (so `listeners` may bind \
         0.0.0.0); a static voter is dialled at its controller.quorum.voters entry."),
    // Directories (ServerLogConfigs, KRaftConfigs).
    define(LOG_DIRS, List, Null,
        Any, Used,
        "Data directories (`format` writes meta.properties to each); overrides log.dir."),
    define(LOG_DIR, Str, Text("/tmp/kafka-logs"),
        Any, Used,
        "The data directory when log.dirs is unset."),
    define(METADATA_LOG_DIR, Str, Null,
        Any, Used,
        "Holds __cluster_metadata-0, meta.properties and bootstrap.checkpoint; default the first \
         data directory."),
    define(KRAFTWERK_METRICS_LISTENER, Str, Null,
        Syntax(metrics_listener_syntax), Used,
        "kraftwerk-only: `host:port` of the HTTP /metrics endpoint; empty or unset serves none."),
    // Metadata log segments.
    define(METADATA_LOG_SEGMENT_MIN_BYTES, Int, Number(DEFAULT_SEGMENT_MIN_BYTES as i64),
        AtLeast(1), Used,
        "Bytes; Kafka's internal, testing-only floor of metadata.log.segment.bytes."),
    define(INTERNAL_METADATA_LOG_SEGMENT_BYTES, Int, Null,
        AtLeast(1), Used,
        "Bytes; Kafka 4.1's internal segment size, which bypasses the floor and replaces \
         metadata.log.segment.bytes."),
    // Raft timeouts (QuorumConfig).
    define(QUORUM_ELECTION_TIMEOUT_MS, Int, Number(DEFAULT_ELECTION_TIMEOUT_MS as i64),
        AtLeast(0), Used,
        "ms without a leader before a voter runs for election; timers are drawn from [T, 2T)."),
    define(QUORUM_FETCH_TIMEOUT_MS, Int, Number(DEFAULT_FETCH_TIMEOUT_MS as i64),
        AtLeast(0), Used,
        "ms without a successful Fetch before a follower runs for election; the leader's \
         check-quorum timer is 1.5 times this."),
    define(QUORUM_ELECTION_BACKOFF_MAX_MS, Int, Number(DEFAULT_ELECTION_BACKOFF_MAX_MS as i64),
        AtLeast(0), Used,
        "ms; the largest backoff before a new election after a failed one."),
    define(QUORUM_REQUEST_TIMEOUT_MS, Int, Number(DEFAULT_REQUEST_TIMEOUT_MS as i64),
        AtLeast(0), Used,
        "ms a Raft request waits for its response."),
    define(QUORUM_RETRY_BACKOFF_MS, Int, Number(DEFAULT_RETRY_BACKOFF_MS as i64),
        AtLeast(0), Used,
        "ms before a failed Raft request is retried."),
    define(QUORUM_APPEND_LINGER_MS, Int, Number(DEFAULT_APPEND_LINGER_MS as i64),
        AtLeast(0), Used,
        "ms the leader waits to batch appended records."),
    // Raft fetch sizes (QuorumConfig, KIP-1219, Kafka 4.4).
    define(QUORUM_FETCH_MAX_BYTES, Int, Number(DEFAULT_FETCH_MAX_BYTES as i64),
        AtLeast(1), Used,
        "Bytes a follower asks for in one Raft Fetch; the leader returns at least one batch \
         even if it is larger (and at most 8 MiB)."),
    define(QUORUM_FETCH_SNAPSHOT_MAX_BYTES, Int, Number(DEFAULT_FETCH_SNAPSHOT_MAX_BYTES as i64),
        AtLeast(1), Used,
        "Bytes a follower asks for in one FetchSnapshot (at most 8 MiB are returned)."),
    // Controller (QuorumController).
    define(METADATA_MAX_IDLE_INTERVAL_MS, Int,
        Number(ControllerConfig::DEFAULT_NOOP_INTERVAL_MS as i64),
        AtLeast(0), Used,
        "ms between the NoOpRecords the active controller writes to an idle log; 0 disables them."),
    // Kafka has no range check on these two; a value below 1 is meaningless, so it is refused.
    define(BROKER_SESSION_TIMEOUT_MS, Int,
        Number(ControllerConfig::DEFAULT_SESSION_TIMEOUT_MS as i64),
        AtLeast(1), Used,
        "ms without a heartbeat after which a broker is fenced."),
    define(BROKER_HEARTBEAT_INTERVAL_MS, Int,
        Number(ControllerConfig::DEFAULT_HEARTBEAT_INTERVAL_MS as i64),
        AtLeast(1), Used,
        "ms between a broker's heartbeats."),
    // Metadata log: segments (the floor is the min.bytes key above), snapshots, retention.
    define(METADATA_LOG_SEGMENT_BYTES, Int, Number(DEFAULT_SEGMENT_BYTES as i64),
        Any, Used,
        "Bytes of a metadata log segment before a new one is rolled; at least \
         metadata.log.segment.min.bytes."),
    // Kafka defines it without a validator; its metadata log refuses a value below 1 when it
    // opens (segment.ms is atLeast(1)), and so does ours (kraftwerk_log::LogConfig).
    define(METADATA_LOG_SEGMENT_MS, Long, Number(DEFAULT_SEGMENT_MS),
        Any, Used,
        "ms after which a non-empty segment is rolled even if not full, measured between the \
         first and the newest batch's timestamps; at least 1."),
    define(METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES, Long,
        Number(SnapshotPolicy::DEFAULT_MAX_BYTES_BETWEEN_SNAPSHOTS as i64),
        AtLeast(1), Used,
        "Bytes of committed batches since the last snapshot that trigger a new one."),
    define(METADATA_SNAPSHOT_MAX_INTERVAL_MS, Long,
        Number(SnapshotPolicy::DEFAULT_MAX_INTERVAL_MS as i64),
        AtLeast(0), Used,
        "ms after the last snapshot at which a new one is written if anything was committed; 0 \
         disables."),
    define(METADATA_MAX_RETENTION_BYTES, Long, Number(DEFAULT_RETENTION_BYTES),
        Any, Used,
        "Bytes of segments plus snapshots kept before old ones are deleted; -1 unlimited."),
    define(METADATA_MAX_RETENTION_MS, Long, Number(DEFAULT_RETENTION_MS),
        Any, Used,
        "ms a snapshot (and the segments below the next one) is kept; -1 unlimited."),
    // Socket server.
    define(SOCKET_REQUEST_MAX_BYTES, Int, Number(DEFAULT_MAX_FRAME_BYTES as i64),
        AtLeast(1), Used,
        "Bytes; the largest request accepted: a larger size prefix closes the connection."),
    define(MAX_CONNECTIONS, Int, Number(i32::MAX as i64),
        AtLeast(0), Used,
        "Most connections at once; also capped by the open-files limit, and the other voters \
         get a few slots of their own on top. A connection over the cap is closed. \
         listener.name.<l>.max.connections caps one controller listener within it."),
    define(MAX_CONNECTIONS_PER_IP, Int, Number(i32::MAX as i64),
        AtLeast(0), Used,
        "Most connections from one address; 0 only with overrides. Over it, closed."),
    define(MAX_CONNECTIONS_PER_IP_OVERRIDES, Str, Text(""),
        Syntax(per_ip_overrides_syntax), Used,
        "`host:count,...` exceptions to max.connections.per.ip; hosts resolved at start."),
    define(CONNECTIONS_MAX_IDLE_MS, Long, Number(600_000),
        Any, Used,
        "ms a connection may go without completing a request (idle, or a request begun and not \
         finished) before it is closed; negative: never."),
    // Topic defaults.
    define(DEFAULT_REPLICATION_FACTOR, Int,
        Number(ControllerConfig::DEFAULT_REPLICATION_FACTOR as i64),
        Any, Used,
        "Replication factor of topics created without one."),
    define(NUM_PARTITIONS, Int, Number(ControllerConfig::DEFAULT_NUM_PARTITIONS as i64),
        AtLeast(1), Used,
        "Partition count of topics created without one."),
    define(OFFSETS_TOPIC_REPLICATION_FACTOR, Short, Number(3),
        AtLeast(1), NotHonoured,
        "Replication factor of __consumer_offsets; brokers create that topic with their own \
         setting."),
    define(OFFSETS_TOPIC_NUM_PARTITIONS, Int, Number(50),
        AtLeast(1), NotHonoured,
        "Partition count of __consumer_offsets; brokers create that topic with their own setting."),
    define(INITIAL_BROKER_REGISTRATION_TIMEOUT_MS, Int, Number(60_000),
        Any, NotHonoured,
        "ms a broker waits for its first registration; a broker-side setting."),
    // Features.
    define(UNSTABLE_FEATURE_VERSIONS_ENABLE, Boolean, Bool(false),
        Any, Used,
        "Allow non-production metadata.version and feature levels (format, advertised ranges, \
         UpdateFeatures)."),
    // TLS of an SSL controller listener and of the Raft client (SslConfigs,
    // BrokerSecurityConfigs); each also as listener.name.<listener>.ssl.*, which wins.
    define(SSL_PROTOCOL, Str, Text("TLSv1.3"),
        Syntax(tls::ssl_protocol_syntax), Checked,
        "The SSLContext protocol: TLS, TLSv1.2 or TLSv1.3 (ssl.enabled.protocols decides the \
         versions spoken)."),
    define(SSL_PROVIDER, Str, Null,
        Syntax(tls::refuse_provider), Checked,
        "A JCA provider; refused when set (kraftwerk uses rustls)."),
    define(SSL_CIPHER_SUITES, List, Text(""),
        Any, Used,
        "IANA names of the cipher suites allowed; empty: rustls's defaults."),
    define(SSL_ENABLED_PROTOCOLS, List, Text("TLSv1.2,TLSv1.3"),
        Any, Used,
        "TLS versions spoken (TLSv1.2, TLSv1.3; older ones dropped as Java 17 does)."),
    define(SSL_KEYSTORE_TYPE, Str, Text("JKS"),
        Syntax(tls::store_type_syntax), Used,
        "PKCS12, PEM, or JKS (read when the file is PKCS12, as keytool writes it; a true JKS \
         file is refused with the keytool command that converts it)."),
    define(SSL_KEYSTORE_LOCATION, Str, Null,
        Any, Used,
        "The key store file (PKCS12, or PEM with the key and chain)."),
    define(SSL_KEYSTORE_PASSWORD, Str, Null,
        Any, Used,
        "Password of a PKCS12 key store."),
    define(SSL_KEY_PASSWORD, Str, Null,
        Any, Used,
        "Password of the private key (PKCS12 entry or encrypted PEM key)."),
    define(SSL_KEYSTORE_KEY, Str, Null,
        Any, Used,
        "PEM PKCS#8 private key, inline (ssl.keystore.type=PEM)."),
    define(SSL_KEYSTORE_CERTIFICATE_CHAIN, Str, Null,
        Any, Used,
        "PEM certificate chain, leaf first, inline (ssl.keystore.type=PEM)."),
    define(SSL_TRUSTSTORE_TYPE, Str, Text("JKS"),
        Syntax(tls::store_type_syntax), Used,
        "PKCS12, PEM, or JKS as for ssl.keystore.type."),
    define(SSL_TRUSTSTORE_LOCATION, Str, Null,
        Any, Used,
        "The trust store file; unset: the system's CA certificates."),
    define(SSL_TRUSTSTORE_PASSWORD, Str, Null,
        Any, Used,
        "Password of a PKCS12 trust store (refused with PEM, as in Kafka)."),
    define(SSL_TRUSTSTORE_CERTIFICATES, Str, Null,
        Any, Used,
        "PEM trusted certificates, inline (ssl.truststore.type=PEM)."),
    define(SSL_KEYMANAGER_ALGORITHM, Str, Text("SunX509"),
        Syntax(tls::key_manager_syntax), Checked,
        "Only the default SunX509 (the store's one key is presented)."),
    define(SSL_TRUSTMANAGER_ALGORITHM, Str, Text("PKIX"),
        Syntax(tls::trust_manager_syntax), Checked,
        "Only the default PKIX (webpki verifies chains)."),
    define(SSL_ENDPOINT_IDENTIFICATION_ALGORITHM, Str, Text("https"),
        Syntax(tls::endpoint_identification_syntax), Used,
        "`https`: a peer's certificate must name the host dialled; empty: chain only."),
    define(SSL_SECURE_RANDOM_IMPLEMENTATION, Str, Null,
        Syntax(tls::refuse_secure_random), Checked,
        "A Java SecureRandom; refused when set."),
    define(SSL_ENGINE_FACTORY_CLASS, Str, Null,
        Syntax(tls::refuse_engine_factory), Checked,
        "A Java SslEngineFactory class; refused when set."),
    define(SSL_CLIENT_AUTH, Str, Text("none"),
        Syntax(tls::client_auth_syntax), Used,
        "Mutual TLS: required, requested or none."),
    define(SSL_PRINCIPAL_MAPPING_RULES, Str, Text("DEFAULT"),
        Syntax(tls::principal_rules_syntax), Used,
        "RULE:pattern/replacement/[LU],...,DEFAULT: the principal from the certificate \
         subject (RFC 2253)."),
    // SASL of a SASL_PLAINTEXT or SASL_SSL controller listener and of the Raft client
    // (BrokerSecurityConfigs, KRaftConfigs, SocketServerConfigs); see sasl.rs for the
    // listener.name.<listener>. forms and the JAAS entries.
    define(SASL_ENABLED_MECHANISMS, List, Text("GSSAPI"),
        Any, Used,
        "Mechanisms a SASL listener offers (also as listener.name.<l>.sasl.enabled.mechanisms, \
         which wins): PLAIN, SCRAM-SHA-256, SCRAM-SHA-512. Kafka's default GSSAPI, and \
         OAUTHBEARER, are refused on a SASL listener."),
    define(SASL_MECHANISM_CONTROLLER_PROTOCOL, Str, Text("GSSAPI"),
        Any, Used,
        "Mechanism the Raft client authenticates with when the first controller listener is \
         SASL, with the username and password of that listener's JAAS entry for it; the \
         default GSSAPI is refused there."),
    define(CONNECTIONS_MAX_REAUTH_MS, Long, Number(0),
        AtLeast(0), Used,
        "ms a SASL session lasts before the client must re-authenticate (KIP-368); 0: forever. \
         Also per listener; one value per listener (no mechanism-prefixed form). Kafka takes \
         a negative value as 0; kraftwerk refuses it."),
    define(CONNECTION_FAILED_AUTHENTICATION_DELAY_MS, Int, Number(100),
        AtLeast(0), Used,
        "ms the answer to a failed authentication waits before the connection is closed; below \
         connections.max.idle.ms."),
    // Kafka has no range check; below 1 no client could authenticate, so it is refused.
    define(SASL_SERVER_MAX_RECEIVE_SIZE, Int, Number(524_288),
        AtLeast(1), Used,
        "Bytes: the largest frame accepted before and during SASL authentication (also per \
         listener)."),
    define(SASL_SERVER_CALLBACK_HANDLER_CLASS, Str, Null,
        Syntax(sasl::refuse_sasl_plugin), Checked,
        "A Java AuthenticateCallbackHandler; refused when set, also in its listener.name.<l>.\
         <mechanism>. form (kraftwerk checks PLAIN and SCRAM itself)."),
    define(SASL_CLIENT_CALLBACK_HANDLER_CLASS, Str, Null,
        Syntax(sasl::refuse_sasl_plugin), Checked,
        "A Java client callback handler; refused when set, also per listener."),
    define(SASL_LOGIN_CLASS, Str, Null,
        Syntax(sasl::refuse_sasl_plugin), Checked,
        "A Java Login class; refused when set, also per listener."),
    define(SASL_LOGIN_CALLBACK_HANDLER_CLASS, Str, Null,
        Syntax(sasl::refuse_sasl_plugin), Checked,
        "A Java login callback handler; refused when set, also per listener."),
    // What the active controller decides for topics and partitions (ServerConfigs,
    // ReplicationConfigs, ServerLogConfigs, RemoteLogManagerConfig as QuorumController reads
    // them in ControllerServer).
    define(DELETE_TOPIC_ENABLE, Boolean, Bool(true),
        Any, Used,
        "false: DeleteTopics is refused with TOPIC_DELETION_DISABLED."),
    define(AUTO_LEADER_REBALANCE_ENABLE, Boolean, Bool(true),
        Any, Used,
        "Periodic preferred-leader elections for imbalanced partitions."),
    define(LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS, Long, Number(300),
        AtLeast(1), Used,
        "Seconds between preferred-leader election runs."),
    define(MIN_INSYNC_REPLICAS, Int, Number(1),
        AtLeast(1), Used,
        "Cluster default of the topic config min.insync.replicas (ISR shrink and leader \
         election decisions)."),
    define(UNCLEAN_LEADER_ELECTION_ENABLE, Boolean, Bool(false),
        Any, Used,
        "Cluster default of the topic config: a partition with no live ISR member may elect an \
         out-of-sync replica."),
    define(UNCLEAN_LEADER_ELECTION_INTERVAL_MS, Long, Number(300_000),
        AtLeast(1), Used,
        "Milliseconds between checks for partitions an unclean election could bring back."),
    define(REMOTE_LOG_STORAGE_SYSTEM_ENABLE, Boolean, Bool(false),
        Any, Used,
        "Tiered storage (KIP-405): topics may set remote.storage.enable=true only when true."),
    define(CREATE_TOPIC_POLICY_CLASS_NAME, Str, Null,
        Syntax(refuse_java_plugin), Checked,
        "A Java CreateTopicPolicy class: kraftwerk cannot load one, so a node that sets it \
         refuses to start rather than create topics the policy would refuse."),
    define(ALTER_CONFIG_POLICY_CLASS_NAME, Str, Null,
        Syntax(refuse_java_plugin), Checked,
        "A Java AlterConfigPolicy class: refused as create.topic.policy.class.name is."),
    define(CONFIG_PROVIDERS, List, Text(""),
        Syntax(refuse_config_providers), Checked,
        "Java ConfigProviders (`${file:...}` values): kraftwerk resolves none, so a non-empty \
         list is refused rather than a placeholder taken literally."),
    // Authorization (ServerConfigs.AUTHORIZER_CLASS_NAME_CONFIG, StandardAuthorizer's own keys).
    define(AUTHORIZER_CLASS_NAME, Str, Text(""),
        Syntax(authorizer_class_syntax), Used,
        "Empty: no authorization (the ACL APIs answer SECURITY_DISABLED); \
         org.apache.kafka.metadata.authorizer.StandardAuthorizer: ACLs from the metadata log. \
         Any other class is refused (the node does not start)."),
    define(SUPER_USERS, Str, Null,
        Syntax(super_users_syntax), Used,
        "Principals allowed everything, `TYPE:NAME` separated by `;` (e.g. \
         User:CN=broker,OU=it;User:admin)."),
    define(ALLOW_EVERYONE_IF_NO_ACL_FOUND, Boolean, Bool(false),
        Any, Used,
        "Allow an action on a resource that has no ACL at all (StandardAuthorizer's default \
         answer)."),
    define(PRINCIPAL_BUILDER_CLASS, Str, Text(DEFAULT_PRINCIPAL_BUILDER),
        Syntax(default_principal_builder_only), Checked,
        "Kafka's DefaultKafkaPrincipalBuilder, which kraftwerk implements; another class is \
         refused, since the authorizer would see other principals than the operator's."),
    // Delegation tokens (KIP-48, DelegationTokenManagerConfigs).
    define(DELEGATION_TOKEN_SECRET_KEY, Str, Null,
        Any, Used,
        "Secret (PASSWORD type, never logged) the HMACs of delegation tokens are keyed with; \
         the same on every controller and broker. Unset or empty: delegation tokens are \
         disabled (token requests answer DELEGATION_TOKEN_AUTH_DISABLED)."),
    define(DELEGATION_TOKEN_MASTER_KEY, Str, Null,
        Any, Used,
        "Deprecated name of delegation.token.secret.key (Kafka 3.x), used only when that is \
         not set."),
    define(DELEGATION_TOKEN_MAX_LIFETIME_MS, Long,
        Number(DelegationTokenSettings::DEFAULT_MAX_LIFETIME_MS),
        AtLeast(1), Used,
        "Milliseconds a delegation token lives at most, however often it is renewed (7 days)."),
    define(DELEGATION_TOKEN_EXPIRY_TIME_MS, Long,
        Number(DelegationTokenSettings::DEFAULT_EXPIRY_TIME_MS),
        AtLeast(1), Used,
        "Milliseconds a new or renewed delegation token is valid before it must be renewed \
         (1 day)."),
    define(DELEGATION_TOKEN_EXPIRY_CHECK_INTERVAL_MS, Long,
        Number(DelegationTokenSettings::DEFAULT_EXPIRY_CHECK_INTERVAL_MS),
        AtLeast(1), Used,
        "Milliseconds between the active controller's removals of expired delegation tokens \
         (1 hour)."),
    define(UNSTABLE_API_VERSIONS_ENABLE, Boolean, Bool(false),
        Syntax(stable_api_versions_only), Checked,
        "kraftwerk serves only the released versions of each API; true is refused."),
];

/// The table entry of `name`, if kraftwerk knows the key.
pub fn lookup(name: &str) -> Option<&'static ConfigKey> {
    CONFIG_DEF.iter().find(|k| k.name == name)
}

/// A Java plugin class kraftwerk cannot load: refused when set (fail closed), empty allowed.
fn refuse_java_plugin(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Ok(());
    }
    Err(format!(
        "kraftwerk cannot load Java classes: remove `{}` from the controller's configuration \
         (the policy cannot be enforced here)",
        text.trim()
    ))
}

fn refuse_config_providers(text: &str) -> Result<(), String> {
    if list_items(text).is_empty() {
        return Ok(());
    }
    Err("kraftwerk resolves no config providers: write the values into the file".to_owned())
}

fn default_principal_builder_only(text: &str) -> Result<(), String> {
    if text.trim() == DEFAULT_PRINCIPAL_BUILDER {
        return Ok(());
    }
    Err(format!(
        "kraftwerk builds principals only as {DEFAULT_PRINCIPAL_BUILDER} does and cannot load \
         Java classes"
    ))
}

fn stable_api_versions_only(text: &str) -> Result<(), String> {
    if text.eq_ignore_ascii_case("false") {
        return Ok(());
    }
    Err("kraftwerk has no unstable API versions to enable".to_owned())
}

/// `authorizer.class.name`: empty, or Kafka's KRaft `StandardAuthorizer`; anything else is
/// refused, so that a node never runs without the authorization its operator asked for.
fn authorizer_class_syntax(text: &str) -> Result<(), String> {
    let class = text.trim();
    if class.is_empty() || class == kraftwerk_controller::authorizer::STANDARD_AUTHORIZER_CLASS {
        Ok(())
    } else {
        Err(format!(
            "kraftwerk implements only {} (or no authorizer, empty); it does not run {class}",
            kraftwerk_controller::authorizer::STANDARD_AUTHORIZER_CLASS
        ))
    }
}

/// `super.users`: `TYPE:NAME` entries separated by `;` (`StandardAuthorizer.getConfiguredSuperUsers`).
fn super_users_syntax(text: &str) -> Result<(), String> {
    kraftwerk_controller::authorizer::AuthorizerConfig::parse_super_users(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn controller_role_only(text: &str) -> Result<(), String> {
    if list_items(text) == ["controller"] {
        Ok(())
    } else {
        Err(
            "kraftwerk only runs the KRaft controller role: set `process.roles=controller` \
             (brokers and combined nodes stay on Apache Kafka)"
                .to_owned(),
        )
    }
}

fn voters_syntax(text: &str) -> Result<(), String> {
    parse_voters(text).map(drop)
}

fn bootstrap_servers_syntax(text: &str) -> Result<(), String> {
    parse_bootstrap_servers(text).map(drop)
}

fn protocol_map_syntax(text: &str) -> Result<(), String> {
    parse_protocol_map(text).map(drop)
}

fn per_ip_overrides_syntax(text: &str) -> Result<(), String> {
    super::connections::parse_per_ip_overrides(text).map(drop)
}

fn metrics_listener_syntax(text: &str) -> Result<(), String> {
    parse_metrics_listener(text).map(drop)
}
