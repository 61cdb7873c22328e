//! `server.properties` for a kraftwerk controller, with Kafka's own keys and defaults.
//!
//! A kraftwerk node reads the same file a Kafka controller (`process.roles=controller`) reads:
//! Java properties syntax ([`JavaProperties::parse`]), the keys and defaults of Kafka 4.1's
//! `KafkaConfig`/`AbstractKafkaConfig` (`server/.../KRaftConfigs.java`,
//! `raft/.../QuorumConfig.java`, `SocketServerConfigs`, `ServerLogConfigs`) and the
//! controller-only checks of `KafkaConfig.validateValues`. Values are trimmed before parsing, as
//! `ConfigDef.parseType` does. Keys kraftwerk does not use are logged once (one `warn` line
//! listing them) and ignored. Every error names the key and the offending value.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

use kraftwerk_controller::ControllerConfig;
use kraftwerk_log::formatted::{load_formatted_node, FormattedDir, LoadError};
use kraftwerk_log::java_properties::{JavaProperties, PropertiesSyntaxError};
use kraftwerk_log::LogConfig;
use kraftwerk_node::SnapshotPolicy;
use kraftwerk_raft::{Endpoint as RaftEndpoint, RaftConfig};
use kraftwerk_server::{ListenerSettings, ServerConfig};
use thiserror::Error;

/// Kafka configuration keys kraftwerk reads.
pub mod keys {
    #![allow(missing_docs)]
    pub const PROCESS_ROLES: &str = "process.roles";
    pub const NODE_ID: &str = "node.id";
    pub const BROKER_ID: &str = "broker.id";
    pub const QUORUM_VOTERS: &str = "controller.quorum.voters";
    pub const QUORUM_BOOTSTRAP_SERVERS: &str = "controller.quorum.bootstrap.servers";
    pub const LISTENERS: &str = "listeners";
    pub const CONTROLLER_LISTENER_NAMES: &str = "controller.listener.names";
    pub const ADVERTISED_LISTENERS: &str = "advertised.listeners";
    pub const LISTENER_SECURITY_PROTOCOL_MAP: &str = "listener.security.protocol.map";
    pub const METADATA_LOG_DIR: &str = "metadata.log.dir";
    pub const LOG_DIRS: &str = "log.dirs";
    pub const LOG_DIR: &str = "log.dir";
    pub const QUORUM_ELECTION_TIMEOUT_MS: &str = "controller.quorum.election.timeout.ms";
    pub const QUORUM_FETCH_TIMEOUT_MS: &str = "controller.quorum.fetch.timeout.ms";
    pub const QUORUM_ELECTION_BACKOFF_MAX_MS: &str = "controller.quorum.election.backoff.max.ms";
    pub const QUORUM_REQUEST_TIMEOUT_MS: &str = "controller.quorum.request.timeout.ms";
    pub const QUORUM_RETRY_BACKOFF_MS: &str = "controller.quorum.retry.backoff.ms";
    pub const QUORUM_APPEND_LINGER_MS: &str = "controller.quorum.append.linger.ms";
    pub const METADATA_MAX_IDLE_INTERVAL_MS: &str = "metadata.max.idle.interval.ms";
    pub const BROKER_SESSION_TIMEOUT_MS: &str = "broker.session.timeout.ms";
    pub const BROKER_HEARTBEAT_INTERVAL_MS: &str = "broker.heartbeat.interval.ms";
    pub const METADATA_LOG_SEGMENT_BYTES: &str = "metadata.log.segment.bytes";
    pub const METADATA_LOG_SEGMENT_MIN_BYTES: &str = "metadata.log.segment.min.bytes";
    pub const INTERNAL_METADATA_LOG_SEGMENT_BYTES: &str = "internal.metadata.log.segment.bytes";
    pub const METADATA_LOG_SEGMENT_MS: &str = "metadata.log.segment.ms";
    pub const METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES: &str =
        "metadata.log.max.record.bytes.between.snapshots";
    pub const METADATA_SNAPSHOT_MAX_INTERVAL_MS: &str = "metadata.log.max.snapshot.interval.ms";
    pub const METADATA_MAX_RETENTION_BYTES: &str = "metadata.max.retention.bytes";
    pub const METADATA_MAX_RETENTION_MS: &str = "metadata.max.retention.ms";
    pub const SOCKET_REQUEST_MAX_BYTES: &str = "socket.request.max.bytes";
    pub const DEFAULT_REPLICATION_FACTOR: &str = "default.replication.factor";
    pub const NUM_PARTITIONS: &str = "num.partitions";
    pub const OFFSETS_TOPIC_REPLICATION_FACTOR: &str = "offsets.topic.replication.factor";
    pub const OFFSETS_TOPIC_NUM_PARTITIONS: &str = "offsets.topic.num.partitions";
    pub const INITIAL_BROKER_REGISTRATION_TIMEOUT_MS: &str =
        "initial.broker.registration.timeout.ms";
    pub const UNSTABLE_FEATURE_VERSIONS_ENABLE: &str = "unstable.feature.versions.enable";
    /// kraftwerk-only: `host:port` of a future HTTP `/metrics` endpoint.
    pub const KRAFTWERK_METRICS_LISTENER: &str = "kraftwerk.metrics.listener";
}

/// Why `server.properties` was rejected. Messages name the key and the bad value.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}", path = path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid Java properties syntax.
    #[error("{path}: {source}", path = path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// Where.
        #[source]
        source: PropertiesSyntaxError,
    },
    /// A required key is absent.
    #[error("Missing required configuration `{key}` which has no default value.")]
    Missing {
        /// The key.
        key: &'static str,
    },
    /// A value does not parse or is out of range (Kafka's `ConfigException(name, value, msg)`).
    #[error("Invalid value `{value}` for configuration `{key}`: {reason}")]
    Invalid {
        /// The key.
        key: &'static str,
        /// The value as written (trimmed).
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// Values that are fine alone but inconsistent together; the message names the keys.
    #[error("{0}")]
    Inconsistent(String),
}

fn invalid(key: &'static str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key,
        value: value.to_owned(),
        reason: reason.into(),
    }
}

/// A listener security protocol (`SecurityProtocol`). kraftwerk serves PLAINTEXT only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SecurityProtocol {
    /// Un-authenticated, non-encrypted.
    Plaintext,
    /// TLS.
    Ssl,
    /// SASL over plaintext.
    SaslPlaintext,
    /// SASL over TLS.
    SaslSsl,
}

impl SecurityProtocol {
    /// Kafka's name (`PLAINTEXT`, `SSL`, `SASL_PLAINTEXT`, `SASL_SSL`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Plaintext => "PLAINTEXT",
            Self::Ssl => "SSL",
            Self::SaslPlaintext => "SASL_PLAINTEXT",
            Self::SaslSsl => "SASL_SSL",
        }
    }

    /// Parses a name case-insensitively (`SecurityProtocol.forName`).
    pub fn from_name(name: &str) -> Option<Self> {
        [
            Self::Plaintext,
            Self::Ssl,
            Self::SaslPlaintext,
            Self::SaslSsl,
        ]
        .into_iter()
        .find(|p| p.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for SecurityProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One entry of `listeners` / `advertised.listeners` (`NAME://host:port`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// Listener name, upper-cased (`ListenerName.normalised`).
    pub listener_name: String,
    /// Host name or IP literal without brackets; empty means all interfaces (bind) or the
    /// canonical host name (advertise), as in Kafka.
    pub host: String,
    /// TCP port; 0 means an ephemeral port (tests).
    pub port: u16,
    /// From `listener.security.protocol.map`.
    pub security_protocol: SecurityProtocol,
}

/// One entry of `controller.quorum.voters` (`id@host:port`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuorumVoter {
    /// The voter's `node.id`.
    pub id: i32,
    /// Host name or IP literal (never `0.0.0.0`).
    pub host: String,
    /// Port of its controller listener.
    pub port: u16,
}

/// A `host:port` pair (`controller.quorum.bootstrap.servers`, `kraftwerk.metrics.listener`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPort {
    /// Host name or IP literal without brackets.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

/// The validated configuration of one kraftwerk controller node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeConfig {
    /// `node.id` (required, ≥ 0): this node's id; must be one of the voters.
    pub node_id: i32,
    /// `controller.quorum.voters` (default empty): the static voter set, `id@host:port,...`.
    pub quorum_voters: Vec<QuorumVoter>,
    /// `controller.quorum.bootstrap.servers` (default empty): `host:port,...` for a dynamic
    /// quorum. At least one of the two lists is set.
    pub quorum_bootstrap_servers: Vec<HostPort>,
    /// `listeners` (default `PLAINTEXT://:9092`): every listener; for a controller all of them
    /// are controller listeners.
    pub listeners: Vec<Endpoint>,
    /// `controller.listener.names` (required): the first is the listener peers and brokers
    /// use.
    pub controller_listener_names: Vec<String>,
    /// The controller listeners as advertised to peers (`effectiveAdvertisedControllerListeners`):
    /// from `advertised.listeners` when it names them, else from `listeners`; in
    /// `controller_listener_names` order.
    pub advertised_controller_listeners: Vec<Endpoint>,
    /// `metadata.log.dir`, else the first of `log.dirs`, else `log.dir` (default
    /// `/tmp/kafka-logs`): holds `__cluster_metadata-0`, `meta.properties`,
    /// `bootstrap.checkpoint`.
    pub metadata_log_dir: PathBuf,
    /// `log.dirs`, else `log.dir`: the data directories (`format` writes meta.properties there
    /// too).
    pub log_dirs: Vec<PathBuf>,
    /// `controller.quorum.election.timeout.ms` (ms, default 1000, ≥ 0).
    pub quorum_election_timeout_ms: i32,
    /// `controller.quorum.fetch.timeout.ms` (ms, default 2000, ≥ 0).
    pub quorum_fetch_timeout_ms: i32,
    /// `controller.quorum.election.backoff.max.ms` (ms, default 1000, ≥ 0).
    pub quorum_election_backoff_max_ms: i32,
    /// `controller.quorum.request.timeout.ms` (ms, default 2000, ≥ 0).
    pub quorum_request_timeout_ms: i32,
    /// `controller.quorum.retry.backoff.ms` (ms, default 20, ≥ 0).
    pub quorum_retry_backoff_ms: i32,
    /// `controller.quorum.append.linger.ms` (ms, default 25, ≥ 0).
    pub quorum_append_linger_ms: i32,
    /// `metadata.max.idle.interval.ms` (ms, default 500, ≥ 0): NoOpRecord period; 0 disables.
    pub metadata_max_idle_interval_ms: i32,
    /// `broker.session.timeout.ms` (ms, default 9000): fence a broker silent this long.
    pub broker_session_timeout_ms: i32,
    /// `broker.heartbeat.interval.ms` (ms, default 2000).
    pub broker_heartbeat_interval_ms: i32,
    /// `metadata.log.segment.bytes` (bytes, default 1 GiB, ≥ 8 MiB).
    pub metadata_log_segment_bytes: i32,
    /// Floor of `metadata.log.segment.bytes`: Kafka's internal, testing-only
    /// `metadata.log.segment.min.bytes` (bytes, default 8 MiB), or 1 when Kafka 4.1's
    /// `internal.metadata.log.segment.bytes` (which bypasses the floor) sets the segment size.
    pub metadata_log_segment_min_bytes: i32,
    /// `metadata.log.segment.ms` (ms, default 7 days).
    pub metadata_log_segment_ms: i64,
    /// `metadata.log.max.record.bytes.between.snapshots` (bytes, default 20 MiB, ≥ 1).
    pub metadata_snapshot_max_new_record_bytes: i64,
    /// `metadata.log.max.snapshot.interval.ms` (ms, default 1 hour, ≥ 0; 0 disables).
    pub metadata_snapshot_max_interval_ms: i64,
    /// `metadata.max.retention.bytes` (bytes, default 100 MiB; -1 unlimited).
    pub metadata_max_retention_bytes: i64,
    /// `metadata.max.retention.ms` (ms, default 7 days; -1 unlimited).
    pub metadata_max_retention_ms: i64,
    /// `socket.request.max.bytes` (bytes, default 100 MiB, ≥ 1): largest request accepted.
    pub socket_request_max_bytes: i32,
    /// `default.replication.factor` (default 1): for auto-created topics.
    pub default_replication_factor: i32,
    /// `num.partitions` (default 1, ≥ 1): for auto-created topics.
    pub num_partitions: i32,
    /// `offsets.topic.replication.factor` (default 3, ≥ 1): `__consumer_offsets`.
    pub offsets_topic_replication_factor: i16,
    /// `offsets.topic.num.partitions` (default 50, ≥ 1): `__consumer_offsets`.
    pub offsets_topic_num_partitions: i32,
    /// `initial.broker.registration.timeout.ms` (ms, default 60000).
    pub initial_broker_registration_timeout_ms: i32,
    /// `unstable.feature.versions.enable` (default false): allow non-production
    /// metadata.version and feature levels (format, advertised ranges).
    pub unstable_feature_versions_enable: bool,
    /// `kraftwerk.metrics.listener` (kraftwerk-only, optional): `host:port` for HTTP metrics.
    pub metrics_listener: Option<HostPort>,
    /// Keys present in the file that kraftwerk does not use, sorted.
    pub ignored_keys: Vec<String>,
}

const DEFAULT_LISTENERS: &str = "PLAINTEXT://:9092";
const DEFAULT_LOG_DIR: &str = "/tmp/kafka-logs";
const DEFAULT_SECURITY_PROTOCOL_MAP: &str =
    "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT";

/// Typed access to the properties, remembering which keys were read.
struct Reader<'a> {
    props: &'a JavaProperties,
    used: BTreeSet<&'static str>,
}

impl<'a> Reader<'a> {
    /// The trimmed value, if the key is present.
    fn get(&mut self, key: &'static str) -> Option<&'a str> {
        self.used.insert(key);
        self.props.get(key).map(str::trim)
    }

    fn number<T: std::str::FromStr + PartialOrd + fmt::Display + Copy>(
        &mut self,
        key: &'static str,
        default: T,
        min: Option<T>,
        type_name: &str,
    ) -> Result<T, ConfigError> {
        let Some(text) = self.get(key) else {
            return Ok(default);
        };
        let value: T = text
            .parse()
            .map_err(|_| invalid(key, text, format!("Not a number of type {type_name}")))?;
        match min {
            Some(min) if value < min => {
                Err(invalid(key, text, format!("Value must be at least {min}")))
            }
            _ => Ok(value),
        }
    }

    fn int(
        &mut self,
        key: &'static str,
        default: i32,
        min: Option<i32>,
    ) -> Result<i32, ConfigError> {
        self.number(key, default, min, "INT")
    }

    fn long(
        &mut self,
        key: &'static str,
        default: i64,
        min: Option<i64>,
    ) -> Result<i64, ConfigError> {
        self.number(key, default, min, "LONG")
    }

    fn short(
        &mut self,
        key: &'static str,
        default: i16,
        min: Option<i16>,
    ) -> Result<i16, ConfigError> {
        self.number(key, default, min, "SHORT")
    }

    /// `ConfigDef` BOOLEAN: `true`/`false`, case-insensitive.
    fn boolean(&mut self, key: &'static str, default: bool) -> Result<bool, ConfigError> {
        match self.get(key) {
            None => Ok(default),
            Some(t) if t.eq_ignore_ascii_case("true") => Ok(true),
            Some(t) if t.eq_ignore_ascii_case("false") => Ok(false),
            Some(t) => Err(invalid(key, t, "Expected value to be either true or false")),
        }
    }

    /// `ConfigDef` LIST: empty → no items, else split on commas with surrounding blanks
    /// (empty items kept, so `a,,b` fails item validation as in Java).
    fn list(&mut self, key: &'static str) -> Option<(&'a str, Vec<&'a str>)> {
        let text = self.get(key)?;
        let items = if text.is_empty() {
            Vec::new()
        } else {
            text.split(',').map(str::trim).collect()
        };
        Some((text, items))
    }
}

/// `Utils.getHost`/`getPort` (`HOST_PORT_PATTERN`): optional `scheme://`, optional brackets,
/// host chars `[0-9a-zA-Z-%._:]`, then `:port`.
fn parse_host_port(text: &str) -> Option<(String, u16)> {
    let rest = match text.find("://") {
        Some(i)
            if text[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-%._".contains(c)) =>
        {
            &text[i + 3..]
        }
        _ => text,
    };
    let colon = rest.rfind(':')?;
    let (host, port) = (&rest[..colon], &rest[colon + 1..]);
    if port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let host = host.strip_prefix('[').unwrap_or(host);
    let host = host.strip_suffix(']').unwrap_or(host);
    if !host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-%._:".contains(c))
    {
        return None;
    }
    Some((host.to_owned(), port.parse().ok()?))
}

/// `QuorumConfig.parseVoterConnections`: `id@host:port`, ids unique, host routable.
fn parse_voters(text: &str, entries: &[&str]) -> Result<Vec<QuorumVoter>, ConfigError> {
    let key = keys::QUORUM_VOTERS;
    let mut voters: Vec<QuorumVoter> = Vec::new();
    for entry in entries {
        let form = "Each entry should be in the form `{id}@{host}:{port}`.";
        let (id, address) = entry
            .split_once('@')
            .filter(|(_, a)| !a.contains('@'))
            .ok_or_else(|| invalid(key, text, format!("entry `{entry}`: {form}")))?;
        let id: i32 = id.parse().map_err(|_| {
            invalid(
                key,
                text,
                format!("entry `{entry}`: voter id `{id}` is not an integer"),
            )
        })?;
        let (host, port) = parse_host_port(address)
            .filter(|(host, _)| !host.is_empty())
            .ok_or_else(|| invalid(key, text, format!("entry `{entry}`: {form}")))?;
        if host == "0.0.0.0" {
            return Err(invalid(
                key,
                text,
                format!("Host string ({host}) is not routeable"),
            ));
        }
        if voters.iter().any(|v| v.id == id) {
            return Err(invalid(
                key,
                text,
                format!("voter id {id} appears more than once"),
            ));
        }
        voters.push(QuorumVoter { id, host, port });
    }
    Ok(voters)
}

/// `listener.security.protocol.map` (`Csv.parseCsvMap`): `NAME:PROTOCOL,...`, names upper-cased.
fn parse_protocol_map(text: &str) -> Result<Vec<(String, SecurityProtocol)>, ConfigError> {
    let key = keys::LISTENER_SECURITY_PROTOCOL_MAP;
    let mut map: Vec<(String, SecurityProtocol)> = Vec::new();
    if text.is_empty() {
        return Ok(map);
    }
    for entry in text.split(',').map(str::trim) {
        let (name, protocol) = entry
            .rsplit_once(':')
            .ok_or_else(|| invalid(key, text, format!("entry `{entry}` is not NAME:PROTOCOL")))?;
        let protocol = SecurityProtocol::from_name(protocol.trim()).ok_or_else(|| {
            invalid(
                key,
                text,
                format!("Invalid security protocol `{}`", protocol.trim()),
            )
        })?;
        let name = name.trim().to_uppercase();
        map.retain(|(n, _)| *n != name);
        map.push((name, protocol));
    }
    Ok(map)
}

/// `SocketServerConfigs.listenerListToEndPoints` plus `CoreUtils` duplicate checks.
fn parse_endpoints(
    key: &'static str,
    text: &str,
    protocols: &[(String, SecurityProtocol)],
    require_distinct_ports: bool,
) -> Result<Vec<Endpoint>, ConfigError> {
    let mut endpoints: Vec<Endpoint> = Vec::new();
    let items: Vec<&str> = if text.is_empty() {
        Vec::new()
    } else {
        text.split(',').map(str::trim).collect()
    };
    for entry in items {
        let parsed = entry.split_once("://").and_then(|(name, address)| {
            let (host, port) = address.rsplit_once(':')?;
            let host = host.strip_prefix('[').unwrap_or(host);
            let host = host.strip_suffix(']').unwrap_or(host);
            let host_ok = host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-%._:".contains(c));
            let port: u16 = port.parse().ok()?;
            host_ok.then(|| (name.to_uppercase(), host.to_owned(), port))
        });
        let (listener_name, host, port) = parsed.ok_or_else(|| {
            invalid(
                key,
                text,
                format!("Unable to parse `{entry}` to a broker endpoint (NAME://host:port)"),
            )
        })?;
        let security_protocol = protocols
            .iter()
            .find(|(n, _)| *n == listener_name)
            .map(|(_, p)| *p)
            .ok_or_else(|| {
                invalid(
                    key,
                    text,
                    format!(
                        "No security protocol defined for listener {listener_name} (add it to {})",
                        keys::LISTENER_SECURITY_PROTOCOL_MAP
                    ),
                )
            })?;
        if endpoints.iter().any(|e| e.listener_name == listener_name) {
            return Err(invalid(
                key,
                text,
                "Each listener must have a different name",
            ));
        }
        endpoints.push(Endpoint {
            listener_name,
            host,
            port,
            security_protocol,
        });
    }
    if require_distinct_ports {
        for endpoint in endpoints.iter().filter(|e| e.port != 0) {
            let same: Vec<&Endpoint> = endpoints
                .iter()
                .filter(|e| e.port == endpoint.port)
                .collect();
            let ok = match same.as_slice() {
                [_] => true,
                // Two listeners may share a port only if one is an IPv4 and the other an IPv6 literal.
                [a, b] => {
                    let v4 = |h: &str| h.parse::<Ipv4Addr>().is_ok();
                    let v6 = |h: &str| h.parse::<Ipv6Addr>().is_ok();
                    (v4(&a.host) && v6(&b.host)) || (v6(&a.host) && v4(&b.host))
                }
                _ => false,
            };
            if !ok {
                return Err(invalid(
                    key,
                    text,
                    format!(
                        "Each listener must have a different port unless exactly one listener has an \
                         IPv4 address and the other IPv6 address (port {})",
                        endpoint.port
                    ),
                ));
            }
        }
    }
    Ok(endpoints)
}

fn parse_dirs(text: &str) -> Vec<PathBuf> {
    text.split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .collect()
}

impl NodeConfig {
    /// Reads and validates a `server.properties` file (ISO-8859-1, as Kafka's `Utils.loadProps`).
    ///
    /// Errors: the file cannot be read, has a syntax error, or any [`Self::from_properties`]
    /// error.
    pub fn load(path: &Path) -> Result<NodeConfig, ConfigError> {
        let bytes = fs::read(path).map_err(|source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let props = JavaProperties::parse(&bytes).map_err(|source| ConfigError::Syntax {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_properties(&props)
    }

    /// Builds the configuration from parsed properties, applying Kafka's defaults and the
    /// checks `KafkaConfig` makes for `process.roles=controller`, plus kraftwerk's own limits
    /// (controller role only, PLAINTEXT listeners only). Logs one `warn` line listing unused
    /// keys.
    pub fn from_properties(props: &JavaProperties) -> Result<NodeConfig, ConfigError> {
        let mut r = Reader {
            props,
            used: BTreeSet::new(),
        };

        // process.roles: required; kraftwerk is a controller and nothing else.
        let (roles_text, roles) = r.list(keys::PROCESS_ROLES).ok_or(ConfigError::Missing {
            key: keys::PROCESS_ROLES,
        })?;
        if roles != ["controller"] {
            return Err(invalid(
                keys::PROCESS_ROLES,
                roles_text,
                "kraftwerk only runs the KRaft controller role: set `process.roles=controller` \
                 (brokers and combined nodes stay on Apache Kafka)",
            ));
        }

        if r.get(keys::NODE_ID).is_none() {
            return Err(ConfigError::Missing { key: keys::NODE_ID });
        }
        let node_id = r.int(keys::NODE_ID, -1, Some(0))?;
        if r.get(keys::BROKER_ID).is_some() {
            // KafkaConfig: an explicit broker.id must equal node.id (-1 is the default).
            let broker_id = r.int(keys::BROKER_ID, -1, None)?;
            if broker_id != -1 && broker_id != node_id {
                return Err(ConfigError::Inconsistent(format!(
                    "You must set `{}` ({node_id}) to the same value as `{}` ({broker_id}).",
                    keys::NODE_ID,
                    keys::BROKER_ID
                )));
            }
        }

        let quorum_voters = match r.list(keys::QUORUM_VOTERS) {
            Some((text, entries)) => parse_voters(text, &entries)?,
            None => Vec::new(),
        };
        let quorum_bootstrap_servers = match r.list(keys::QUORUM_BOOTSTRAP_SERVERS) {
            Some((text, entries)) => entries
                .iter()
                .map(|e| {
                    parse_host_port(e)
                        .filter(|(h, _)| !h.is_empty())
                        .map(|(host, port)| HostPort { host, port })
                        .ok_or_else(|| {
                            invalid(
                                keys::QUORUM_BOOTSTRAP_SERVERS,
                                text,
                                format!("entry `{e}`: each entry should be in the form \"{{host}}:{{port}}\""),
                            )
                        })
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        if quorum_voters.is_empty() && quorum_bootstrap_servers.is_empty() {
            return Err(ConfigError::Inconsistent(format!(
                "If using {}, either {} must contain the set of bootstrap controllers or {} must \
                 contain a parseable set of controllers.",
                keys::PROCESS_ROLES,
                keys::QUORUM_BOOTSTRAP_SERVERS,
                keys::QUORUM_VOTERS
            )));
        }
        if !quorum_voters.is_empty() && !quorum_voters.iter().any(|v| v.id == node_id) {
            let ids: Vec<String> = quorum_voters.iter().map(|v| v.id.to_string()).collect();
            return Err(ConfigError::Inconsistent(format!(
                "If {} contains the 'controller' role, the node id {node_id} must be included in \
                 the set of voters {}={{{}}}",
                keys::PROCESS_ROLES,
                keys::QUORUM_VOTERS,
                ids.join(", ")
            )));
        }

        let controller_listener_names: Vec<String> = r
            .get(keys::CONTROLLER_LISTENER_NAMES)
            .filter(|t| !t.is_empty())
            .map(|t| t.split(',').map(|n| n.trim().to_owned()).collect())
            .ok_or(ConfigError::Missing {
                key: keys::CONTROLLER_LISTENER_NAMES,
            })?;

        // listener.security.protocol.map, with KafkaConfig.effectiveListenerSecurityProtocolMap's
        // KRaft default: if the key is absent and nothing uses SSL/SASL, controller listener
        // names map to PLAINTEXT.
        let listeners_text = r.get(keys::LISTENERS).unwrap_or(DEFAULT_LISTENERS);
        let explicit_map = r.get(keys::LISTENER_SECURITY_PROTOCOL_MAP);
        let mut protocols =
            parse_protocol_map(explicit_map.unwrap_or(DEFAULT_SECURITY_PROTOCOL_MAP))?;
        if explicit_map.is_none() {
            let secure = |name: &str| ["SSL", "SASL_SSL", "SASL_PLAINTEXT"].contains(&name);
            let listener_names = listeners_text
                .split(',')
                .filter_map(|l| l.split_once(':').map(|(n, _)| n.trim().to_uppercase()));
            let uses_secure = controller_listener_names.iter().any(|n| secure(n))
                || listener_names.clone().any(|n| secure(&n));
            if !uses_secure {
                for name in controller_listener_names
                    .iter()
                    .filter(|n| *n != "PLAINTEXT")
                {
                    protocols.retain(|(n, _)| n != name);
                    protocols.push((name.clone(), SecurityProtocol::Plaintext));
                }
            }
        }
        let listeners = parse_endpoints(keys::LISTENERS, listeners_text, &protocols, true)?;
        let advertised = match r.get(keys::ADVERTISED_LISTENERS) {
            Some(text) => Some(parse_endpoints(
                keys::ADVERTISED_LISTENERS,
                text,
                &protocols,
                false,
            )?),
            None => None,
        };
        let advertised_controller_listeners: Vec<Endpoint> = controller_listener_names
            .iter()
            .filter_map(|name| {
                advertised
                    .iter()
                    .flatten()
                    .find(|e| e.listener_name == *name)
                    .or_else(|| listeners.iter().find(|e| e.listener_name == *name))
                    .cloned()
            })
            .collect();
        let in_listeners = |name: &String| listeners.iter().any(|e| e.listener_name == *name);
        if listeners
            .iter()
            .any(|e| !controller_listener_names.contains(&e.listener_name))
        {
            return Err(ConfigError::Inconsistent(format!(
                "The {} config must only contain KRaft controller listeners from {} when {}=controller \
                 ({}={listeners_text}, {}={})",
                keys::LISTENERS,
                keys::CONTROLLER_LISTENER_NAMES,
                keys::PROCESS_ROLES,
                keys::LISTENERS,
                keys::CONTROLLER_LISTENER_NAMES,
                controller_listener_names.join(",")
            )));
        }
        if let Some(missing) = controller_listener_names.iter().find(|n| !in_listeners(n)) {
            return Err(ConfigError::Inconsistent(format!(
                "{} must only contain values appearing in the '{}' configuration when running the \
                 KRaft controller role: `{missing}` is not in {}={listeners_text}",
                keys::CONTROLLER_LISTENER_NAMES,
                keys::LISTENERS,
                keys::LISTENERS
            )));
        }
        for endpoint in listeners.iter().chain(&advertised_controller_listeners) {
            if endpoint.security_protocol != SecurityProtocol::Plaintext {
                return Err(invalid(
                    keys::LISTENER_SECURITY_PROTOCOL_MAP,
                    explicit_map.unwrap_or(DEFAULT_SECURITY_PROTOCOL_MAP),
                    format!(
                        "listener {} uses {}; kraftwerk supports only PLAINTEXT listeners for now",
                        endpoint.listener_name, endpoint.security_protocol
                    ),
                ));
            }
        }
        if let Some(e) = advertised_controller_listeners
            .iter()
            .find(|e| e.host == "0.0.0.0")
        {
            return Err(invalid(
                keys::ADVERTISED_LISTENERS,
                r.get(keys::ADVERTISED_LISTENERS).unwrap_or(listeners_text),
                format!(
                    "listener {} cannot advertise the nonroutable meta-address 0.0.0.0; use a \
                     routable IP address",
                    e.listener_name
                ),
            ));
        }

        // Directories: log.dirs, else log.dir (default /tmp/kafka-logs); metadata.log.dir, else
        // the first of those.
        let log_dirs = match r.get(keys::LOG_DIRS) {
            Some(text) => parse_dirs(text),
            None => parse_dirs(r.get(keys::LOG_DIR).unwrap_or(DEFAULT_LOG_DIR)),
        };
        r.used.insert(keys::LOG_DIR);
        if log_dirs.is_empty() {
            return Err(invalid(
                keys::LOG_DIRS,
                r.get(keys::LOG_DIRS).unwrap_or(""),
                "At least one log directory must be defined via log.dirs or log.dir.",
            ));
        }
        let metadata_log_dir = match r.get(keys::METADATA_LOG_DIR).filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => log_dirs[0].clone(),
        };

        let metrics_listener = match r.get(keys::KRAFTWERK_METRICS_LISTENER) {
            None | Some("") => None,
            Some(text) => {
                let (host, port) = parse_host_port(text).ok_or_else(|| {
                    invalid(keys::KRAFTWERK_METRICS_LISTENER, text, "expected host:port")
                })?;
                Some(HostPort { host, port })
            }
        };

        let segment_min_bytes = r.int(keys::METADATA_LOG_SEGMENT_MIN_BYTES, 8 << 20, Some(1))?;
        let internal_segment_bytes = match r.get(keys::INTERNAL_METADATA_LOG_SEGMENT_BYTES) {
            Some(_) => Some(r.int(keys::INTERNAL_METADATA_LOG_SEGMENT_BYTES, 1 << 30, Some(1))?),
            None => None,
        };
        let config = NodeConfig {
            node_id,
            quorum_voters,
            quorum_bootstrap_servers,
            listeners,
            controller_listener_names,
            advertised_controller_listeners,
            metadata_log_dir,
            log_dirs,
            quorum_election_timeout_ms: r.int(keys::QUORUM_ELECTION_TIMEOUT_MS, 1000, Some(0))?,
            quorum_fetch_timeout_ms: r.int(keys::QUORUM_FETCH_TIMEOUT_MS, 2000, Some(0))?,
            quorum_election_backoff_max_ms: r.int(
                keys::QUORUM_ELECTION_BACKOFF_MAX_MS,
                1000,
                Some(0),
            )?,
            quorum_request_timeout_ms: r.int(keys::QUORUM_REQUEST_TIMEOUT_MS, 2000, Some(0))?,
            quorum_retry_backoff_ms: r.int(keys::QUORUM_RETRY_BACKOFF_MS, 20, Some(0))?,
            quorum_append_linger_ms: r.int(keys::QUORUM_APPEND_LINGER_MS, 25, Some(0))?,
            metadata_max_idle_interval_ms: r.int(
                keys::METADATA_MAX_IDLE_INTERVAL_MS,
                500,
                Some(0),
            )?,
            // Kafka has no range check on these two; a negative value is meaningless, so reject it.
            broker_session_timeout_ms: r.int(keys::BROKER_SESSION_TIMEOUT_MS, 9000, Some(1))?,
            broker_heartbeat_interval_ms: r.int(
                keys::BROKER_HEARTBEAT_INTERVAL_MS,
                2000,
                Some(1),
            )?,
            metadata_log_segment_min_bytes: if internal_segment_bytes.is_some() {
                1
            } else {
                segment_min_bytes
            },
            metadata_log_segment_bytes: match internal_segment_bytes {
                Some(bytes) => bytes,
                None => r.int(
                    keys::METADATA_LOG_SEGMENT_BYTES,
                    1 << 30,
                    Some(segment_min_bytes),
                )?,
            },
            metadata_log_segment_ms: r.long(
                keys::METADATA_LOG_SEGMENT_MS,
                7 * 24 * 3_600_000,
                None,
            )?,
            metadata_snapshot_max_new_record_bytes: r.long(
                keys::METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES,
                20 << 20,
                Some(1),
            )?,
            metadata_snapshot_max_interval_ms: r.long(
                keys::METADATA_SNAPSHOT_MAX_INTERVAL_MS,
                3_600_000,
                Some(0),
            )?,
            metadata_max_retention_bytes: r.long(
                keys::METADATA_MAX_RETENTION_BYTES,
                100 << 20,
                None,
            )?,
            metadata_max_retention_ms: r.long(
                keys::METADATA_MAX_RETENTION_MS,
                7 * 24 * 3_600_000,
                None,
            )?,
            socket_request_max_bytes: r.int(keys::SOCKET_REQUEST_MAX_BYTES, 100 << 20, Some(1))?,
            default_replication_factor: r.int(keys::DEFAULT_REPLICATION_FACTOR, 1, None)?,
            num_partitions: r.int(keys::NUM_PARTITIONS, 1, Some(1))?,
            offsets_topic_replication_factor: r.short(
                keys::OFFSETS_TOPIC_REPLICATION_FACTOR,
                3,
                Some(1),
            )?,
            offsets_topic_num_partitions: r.int(keys::OFFSETS_TOPIC_NUM_PARTITIONS, 50, Some(1))?,
            initial_broker_registration_timeout_ms: r.int(
                keys::INITIAL_BROKER_REGISTRATION_TIMEOUT_MS,
                60_000,
                None,
            )?,
            unstable_feature_versions_enable: r
                .boolean(keys::UNSTABLE_FEATURE_VERSIONS_ENABLE, false)?,
            metrics_listener,
            ignored_keys: {
                let mut ignored: Vec<String> = props
                    .iter()
                    .map(|(k, _)| k)
                    .filter(|k| !r.used.contains(k))
                    .map(str::to_owned)
                    .collect();
                ignored.sort();
                ignored
            },
        };
        if !config.ignored_keys.is_empty() {
            tracing::warn!(
                "ignoring {} configuration keys kraftwerk does not use: {}",
                config.ignored_keys.len(),
                config.ignored_keys.join(", ")
            );
        }
        Ok(config)
    }

    /// The listener this node serves Raft and controller RPCs on: the first
    /// `controller.listener.names` entry (validation guarantees it is in `listeners`).
    pub fn controller_listener(&self) -> &Endpoint {
        let name = &self.controller_listener_names[0];
        self.listeners
            .iter()
            .find(|e| e.listener_name == *name)
            .expect("validated in from_properties")
    }

    /// The voter entry of this node, if the quorum is static.
    pub fn local_voter(&self) -> Option<&QuorumVoter> {
        self.quorum_voters.iter().find(|v| v.id == self.node_id)
    }

    /// Every directory `format` writes to, sorted and de-duplicated: `log.dirs` plus
    /// `metadata.log.dir` (`StorageTool.configToLogDirectories`).
    pub fn all_log_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: BTreeSet<PathBuf> = self.log_dirs.iter().cloned().collect();
        dirs.insert(self.metadata_log_dir.clone());
        dirs.into_iter().collect()
    }
}

impl NodeConfig {
    /// Everything the server needs to start this node, from this configuration and the
    /// formatted metadata directory (identity and bootstrap records).
    pub fn server_config(&self, formatted: &FormattedDir) -> ServerConfig {
        let listener = self.controller_listener();
        ServerConfig {
            metadata_log_dir: self.metadata_log_dir.clone(),
            log: LogConfig {
                segment_bytes: self.metadata_log_segment_bytes as u64,
                segment_min_bytes: self.metadata_log_segment_min_bytes as u64,
                retention_bytes: self.metadata_max_retention_bytes,
                retention_ms: self.metadata_max_retention_ms,
            },
            raft: self.raft_config(formatted),
            controller: self.controller_config(formatted),
            snapshot_policy: SnapshotPolicy {
                max_bytes_between_snapshots: self.metadata_snapshot_max_new_record_bytes.max(1)
                    as u64,
                max_interval_ms: self.metadata_snapshot_max_interval_ms.max(0) as u64,
                clean_interval_ms: 60_000,
            },
            listener: ListenerSettings {
                name: listener.listener_name.clone(),
                host: listener.host.clone(),
                port: listener.port,
                max_frame_bytes: self.socket_request_max_bytes as usize,
            },
            registration_endpoint: self.local_voter().map(|v| (v.host.clone(), v.port)),
            metrics_addr: self.metrics_listener.as_ref().map(|m| (m.host.clone(), m.port)),
            unstable_feature_versions_enable: self.unstable_feature_versions_enable,
        }
    }

    fn raft_config(&self, formatted: &FormattedDir) -> RaftConfig {
        let voters: BTreeMap<i32, RaftEndpoint> = self
            .quorum_voters
            .iter()
            .map(|v| {
                (
                    v.id,
                    RaftEndpoint {
                        host: v.host.clone(),
                        port: v.port,
                    },
                )
            })
            .collect();
        let mut raft = RaftConfig::new(
            self.node_id,
            formatted.cluster_id.clone(),
            formatted.directory_id,
            voters,
            self.controller_listener().listener_name.clone(),
        );
        raft.election_timeout_ms = self.quorum_election_timeout_ms as u64;
        raft.election_backoff_max_ms = self.quorum_election_backoff_max_ms as u64;
        raft.fetch_timeout_ms = self.quorum_fetch_timeout_ms as u64;
        raft.request_timeout_ms = self.quorum_request_timeout_ms as u64;
        raft.retry_backoff_ms = self.quorum_retry_backoff_ms as u64;
        raft.append_linger_ms = self.quorum_append_linger_ms as u64;
        raft
    }

    fn controller_config(&self, formatted: &FormattedDir) -> ControllerConfig {
        let mut c = ControllerConfig::new(
            self.node_id,
            formatted.cluster_id.clone(),
            formatted.bootstrap.records.clone(),
        );
        c.session_timeout_ms = self.broker_session_timeout_ms as u64;
        c.heartbeat_interval_ms = self.broker_heartbeat_interval_ms as u64;
        c.noop_interval_ms = self.metadata_max_idle_interval_ms as u64;
        c.default_replication_factor = self.default_replication_factor as i16;
        c.default_num_partitions = self.num_partitions;
        c.kraft_version = 0;
        c.quorum_node_ids = self.quorum_voters.iter().map(|v| v.id).collect();
        c.enable_unstable_feature_versions = self.unstable_feature_versions_enable;
        c
    }

    /// Loads and checks every formatted directory of this node (`kraftwerk_log::formatted`).
    pub fn load_formatted(&self) -> Result<FormattedDir, LoadError> {
        load_formatted_node(&self.metadata_log_dir, &self.all_log_dirs(), self.node_id)
    }
}


#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
