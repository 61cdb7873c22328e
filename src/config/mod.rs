//! `server.properties` for a kraftwerk controller, with Kafka's own keys and defaults.
//!
//! A kraftwerk node reads the same file a Kafka controller (`process.roles=controller`) reads:
//! Java properties syntax ([`JavaProperties::parse`]), the keys and defaults of Kafka 4.1's
//! `KafkaConfig`/`AbstractKafkaConfig` and the controller-only checks of
//! `KafkaConfig.validateValues`. The keys are one table, [`keys::CONFIG_DEF`] (Kafka's
//! `ConfigDef`), from which parsing, defaults, single-key checks and their messages come
//! (`values.rs`); the checks that combine keys live by topic (`quorum.rs`, `listeners.rs`,
//! `security_protocol.rs`, `tls.rs`, `sasl.rs`), and `layers.rs` builds the configurations of
//! the layers below.
//! Every error names the key and the offending value.
//!
//! Keys neither kraftwerk nor Kafka knows get a `warn` line each, with a did-you-mean
//! (`known_keys.rs`); known keys kraftwerk accepts but does not act on ([`Usage::NotHonoured`])
//! are named in one more ([`NodeConfig::warnings`]); Kafka's broker-only keys pass silently.
//! [`NodeConfig::server_config`] hands the result to the server.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use kraftwerk_log::formatted::{load_formatted_node, FormattedDir, LoadError};
use kraftwerk_log::java_properties::JavaProperties;

mod connections;
mod def;
mod error;
pub mod keys;
mod known_keys;
mod layers;
mod listeners;
mod quorum;
mod sasl;
mod security_protocol;
mod tls;
mod values;

pub use connections::ConnectionSettings;
pub use def::{ConfigKey, ConfigType, DefaultValue, Usage, Validator, Value};
pub use error::ConfigError;
pub use listeners::Endpoint;
pub use quorum::{HostPort, QuorumVoter};
pub use security_protocol::SecurityProtocol;

use error::invalid;
use quorum::parse_metrics_listener;
use values::Values;

/// The validated configuration of one kraftwerk controller node. Every setting reaches the
/// running node ([`Self::server_config`]) or `kraftwerk format`; the last two fields list the
/// keys the start-up warning names. Defaults are those of [`keys::CONFIG_DEF`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeConfig {
    /// `node.id` (required, ≥ 0): this node's id; must be one of the voters.
    pub node_id: i32,
    /// `controller.quorum.voters` (default empty): the static voter set, `id@host:port,...`.
    /// Empty only when `controller.quorum.bootstrap.servers` is set instead.
    pub quorum_voters: Vec<QuorumVoter>,
    /// `controller.quorum.bootstrap.servers` (default empty): where the Raft layer looks for
    /// the leader when it knows none (Kafka `QuorumConfig.bootstrapServers`).
    pub quorum_bootstrap_servers: Vec<quorum::HostPort>,
    /// `listeners` (default `PLAINTEXT://:9092`): every listener; for a controller all of them
    /// are controller listeners.
    pub listeners: Vec<Endpoint>,
    /// The controller listeners as others dial them, in `controller.listener.names` order
    /// (`KafkaConfig.effectiveAdvertisedControllerListeners`): the `advertised.listeners`
    /// entry of each, else its `listeners` entry. Never `0.0.0.0`; an empty host means the
    /// listener binds every interface and names no host.
    pub advertised_controller_listeners: Vec<Endpoint>,
    /// `controller.listener.names` (required): the first is the listener peers and brokers
    /// use.
    pub controller_listener_names: Vec<String>,
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
    /// `controller.quorum.auto.join.enable` (default false, Kafka 4.2+): join the voter set as
    /// an observer of a dynamic quorum.
    pub quorum_auto_join_enable: bool,
    /// `delete.topic.enable` (true).
    pub delete_topic_enable: bool,
    /// `auto.leader.rebalance.enable` (true).
    pub auto_leader_rebalance_enable: bool,
    /// `leader.imbalance.check.interval.seconds` (300, ≥ 1).
    pub leader_imbalance_check_interval_seconds: i64,
    /// `min.insync.replicas` (1, ≥ 1): the cluster default of the topic config.
    pub min_insync_replicas: i32,
    /// `unclean.leader.election.enable` (false): the cluster default of the topic config.
    pub unclean_leader_election_enable: bool,
    /// `unclean.leader.election.interval.ms` (300,000, ≥ 1).
    pub unclean_leader_election_interval_ms: i64,
    /// `remote.log.storage.system.enable` (false).
    pub remote_log_storage_system_enable: bool,
    /// `controller.quorum.fetch.max.bytes` (bytes, default 1048576, ≥ 1; KIP-1219).
    pub quorum_fetch_max_bytes: i32,
    /// `controller.quorum.fetch.snapshot.max.bytes` (bytes, default 1048576, ≥ 1; KIP-1219).
    pub quorum_fetch_snapshot_max_bytes: i32,
    /// `metadata.max.idle.interval.ms` (ms, default 500, ≥ 0): NoOpRecord period; 0 disables.
    pub metadata_max_idle_interval_ms: i32,
    /// `broker.session.timeout.ms` (ms, default 9000, ≥ 1): fence a broker silent this long.
    pub broker_session_timeout_ms: i32,
    /// `broker.heartbeat.interval.ms` (ms, default 2000, ≥ 1).
    pub broker_heartbeat_interval_ms: i32,
    /// `metadata.log.segment.bytes` (bytes, default 1 GiB, ≥ the floor below), or Kafka 4.1's
    /// `internal.metadata.log.segment.bytes` when set.
    pub metadata_log_segment_bytes: i32,
    /// Floor of `metadata.log.segment.bytes`: Kafka's internal, testing-only
    /// `metadata.log.segment.min.bytes` (bytes, default 8 MiB), or 1 when Kafka 4.1's
    /// `internal.metadata.log.segment.bytes` (which bypasses the floor) sets the segment size.
    pub metadata_log_segment_min_bytes: i32,
    /// `metadata.log.segment.ms` (ms, default 7 days): roll a non-empty segment this old
    /// ([`kraftwerk_log::LogConfig::segment_ms`], which refuses a value below 1 at open).
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
    /// `max.connections`, `max.connections.per.ip` (and overrides), `connections.max.idle.ms`.
    pub connections: ConnectionSettings,
    /// `default.replication.factor` (default 1): for auto-created topics.
    pub default_replication_factor: i32,
    /// `num.partitions` (default 1, ≥ 1): for auto-created topics.
    pub num_partitions: i32,
    /// `unstable.feature.versions.enable` (default false): allow non-production
    /// metadata.version and feature levels (format, advertised ranges).
    pub unstable_feature_versions_enable: bool,
    /// `kraftwerk.metrics.listener` (kraftwerk-only, optional): `host:port` for HTTP metrics.
    pub metrics_listener: Option<HostPort>,
    /// The `ssl.*` settings (`listener.name.<l>.` forms first) of each SSL and SASL_SSL
    /// controller listener, by listener name; PLAINTEXT and SASL_PLAINTEXT listeners have none.
    /// The first listener's are the Raft client's too ([`Self::controller_tls`]).
    pub controller_listener_tls: BTreeMap<String, kraftwerk_server::ListenerTls>,
    /// The SASL settings (`sasl.enabled.mechanisms`, the JAAS entries,
    /// `connections.max.reauth.ms`, ...; `listener.name.<l>.` forms first) of each
    /// SASL_PLAINTEXT and SASL_SSL controller listener, by listener name.
    pub controller_listener_sasl: BTreeMap<String, kraftwerk_server::ListenerSasl>,
    /// `Some` when the first controller listener is SASL: `sasl.mechanism.controller.protocol`
    /// with the username and password of that listener's JAAS entry for it, which the Raft
    /// client authenticates with (Java's `RaftManager`).
    pub raft_client_sasl: Option<kraftwerk_server::ClientSasl>,
    /// `authorizer.class.name` = StandardAuthorizer, with `super.users` and
    /// `allow.everyone.if.no.acl.found`; `None` when empty (no authorization).
    pub authorizer: Option<kraftwerk_controller::authorizer::AuthorizerConfig>,
    /// `delegation.token.*` when `delegation.token.secret.key` (else the deprecated
    /// `delegation.token.master.key`) is set and not empty (`KafkaConfig.tokenAuthEnabled`);
    /// `None`: delegation tokens are disabled.
    pub delegation_tokens: Option<kraftwerk_controller::controller::DelegationTokenSettings>,
    /// Every key of [`keys::CONFIG_DEF`] with its effective value (the file's, else the
    /// default, `null` for none), secrets `[hidden]`, sorted by key: what
    /// [`Self::values_block`] logs.
    pub effective_values: Vec<(&'static str, String)>,
    /// Keys present in the file that neither kraftwerk nor Kafka defines, sorted.
    pub ignored_keys: Vec<String>,
    /// Keys present in the file that kraftwerk validates like Kafka but does not act on
    /// ([`Usage::NotHonoured`]), sorted.
    pub not_honoured_keys: Vec<String>,
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

    /// Builds the configuration from parsed properties: every key of [`keys::CONFIG_DEF`]
    /// parsed and checked alone, then the checks `KafkaConfig` makes across keys for
    /// `process.roles=controller`, plus kraftwerk's own limits (controller role only, SASL
    /// mechanisms PLAIN and SCRAM with their JAAS entries in the file). Logs each of
    /// [`Self::warnings`] as a `warn` line.
    pub fn from_properties(props: &JavaProperties) -> Result<NodeConfig, ConfigError> {
        let values = Values::parse(props)?;
        let node_id = values.int(keys::NODE_ID);
        let broker_id = values.int(keys::BROKER_ID);
        if broker_id != -1 && broker_id != node_id {
            return Err(ConfigError::Inconsistent(format!(
                "You must set `{}` ({node_id}) to the same value as `{}` ({broker_id}).",
                keys::NODE_ID,
                keys::BROKER_ID
            )));
        }
        let quorum_voters = quorum::static_voters(&values, node_id)?;
        let quorum_bootstrap_servers = match values.text(keys::QUORUM_BOOTSTRAP_SERVERS) {
            Some(text) if !text.trim().is_empty() => quorum::parse_bootstrap_servers(text)
                .map_err(|reason| invalid(keys::QUORUM_BOOTSTRAP_SERVERS, text, reason))?,
            _ => Vec::new(),
        };
        // An empty list is as good as none: a controller needs a listener name.
        let controller_listener_names: Vec<String> = values
            .text(keys::CONTROLLER_LISTENER_NAMES)
            .filter(|t| !t.is_empty())
            .map(|t| t.split(',').map(|n| n.trim().to_owned()).collect())
            .ok_or(ConfigError::Missing {
                key: keys::CONTROLLER_LISTENER_NAMES,
            })?;
        let (listeners, advertised_controller_listeners) =
            listeners::controller_listeners(&values, &controller_listener_names)?;
        // Every controller listener is served, each with its own `listener.name.<l>.ssl.*`.
        let mut controller_listener_tls = BTreeMap::new();
        for e in &listeners {
            let tls = match e.security_protocol {
                SecurityProtocol::Ssl => tls::listener_tls(props, &values, &e.listener_name)?,
                SecurityProtocol::SaslSsl => sasl::sasl_ssl_tls(props, &values, &e.listener_name)?,
                SecurityProtocol::Plaintext | SecurityProtocol::SaslPlaintext => continue,
            };
            controller_listener_tls.insert(e.listener_name.clone(), tls);
        }
        let (controller_listener_sasl, raft_client_sasl) =
            sasl::sasl_config(props, &values, &listeners, &controller_listener_names)?;
        let (log_dirs, metadata_log_dir) = directories(&values)?;
        let metrics_listener = match values.text(keys::KRAFTWERK_METRICS_LISTENER) {
            Some(text) => parse_metrics_listener(text)
                .map_err(|reason| invalid(keys::KRAFTWERK_METRICS_LISTENER, text, reason))?,
            None => None,
        };
        let (metadata_log_segment_bytes, metadata_log_segment_min_bytes) = segment_sizes(&values)?;
        let connections =
            connections::connection_settings(props, &values, &controller_listener_names)?;
        let (ignored_keys, not_honoured_keys) = unused_keys(props, &listeners);
        let authorizer = authorizer(&values)?;
        let delegation_tokens = delegation_tokens(&values);
        let effective_values = effective_values(&values);
        let config = NodeConfig {
            node_id,
            quorum_voters,
            quorum_bootstrap_servers,
            listeners,
            advertised_controller_listeners,
            controller_listener_names,
            metadata_log_dir,
            log_dirs,
            quorum_election_timeout_ms: values.int(keys::QUORUM_ELECTION_TIMEOUT_MS),
            quorum_fetch_timeout_ms: values.int(keys::QUORUM_FETCH_TIMEOUT_MS),
            quorum_election_backoff_max_ms: values.int(keys::QUORUM_ELECTION_BACKOFF_MAX_MS),
            quorum_request_timeout_ms: values.int(keys::QUORUM_REQUEST_TIMEOUT_MS),
            quorum_retry_backoff_ms: values.int(keys::QUORUM_RETRY_BACKOFF_MS),
            quorum_append_linger_ms: values.int(keys::QUORUM_APPEND_LINGER_MS),
            quorum_fetch_max_bytes: values.int(keys::QUORUM_FETCH_MAX_BYTES),
            quorum_fetch_snapshot_max_bytes: values.int(keys::QUORUM_FETCH_SNAPSHOT_MAX_BYTES),
            metadata_max_idle_interval_ms: values.int(keys::METADATA_MAX_IDLE_INTERVAL_MS),
            broker_session_timeout_ms: values.int(keys::BROKER_SESSION_TIMEOUT_MS),
            broker_heartbeat_interval_ms: values.int(keys::BROKER_HEARTBEAT_INTERVAL_MS),
            metadata_log_segment_bytes,
            metadata_log_segment_min_bytes,
            metadata_log_segment_ms: values.long(keys::METADATA_LOG_SEGMENT_MS),
            metadata_snapshot_max_new_record_bytes: values
                .long(keys::METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES),
            metadata_snapshot_max_interval_ms: values.long(keys::METADATA_SNAPSHOT_MAX_INTERVAL_MS),
            metadata_max_retention_bytes: values.long(keys::METADATA_MAX_RETENTION_BYTES),
            metadata_max_retention_ms: values.long(keys::METADATA_MAX_RETENTION_MS),
            socket_request_max_bytes: values.int(keys::SOCKET_REQUEST_MAX_BYTES),
            connections,
            default_replication_factor: values.int(keys::DEFAULT_REPLICATION_FACTOR),
            num_partitions: values.int(keys::NUM_PARTITIONS),
            unstable_feature_versions_enable: values
                .boolean(keys::UNSTABLE_FEATURE_VERSIONS_ENABLE),
            quorum_auto_join_enable: values.boolean(keys::QUORUM_AUTO_JOIN_ENABLE),
            delete_topic_enable: values.boolean(keys::DELETE_TOPIC_ENABLE),
            auto_leader_rebalance_enable: values.boolean(keys::AUTO_LEADER_REBALANCE_ENABLE),
            leader_imbalance_check_interval_seconds: values
                .long(keys::LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS),
            min_insync_replicas: values.int(keys::MIN_INSYNC_REPLICAS),
            unclean_leader_election_enable: values.boolean(keys::UNCLEAN_LEADER_ELECTION_ENABLE),
            unclean_leader_election_interval_ms: values
                .long(keys::UNCLEAN_LEADER_ELECTION_INTERVAL_MS),
            remote_log_storage_system_enable: values
                .boolean(keys::REMOTE_LOG_STORAGE_SYSTEM_ENABLE),
            metrics_listener,
            controller_listener_tls,
            controller_listener_sasl,
            raft_client_sasl,
            authorizer,
            delegation_tokens,
            effective_values,
            ignored_keys,
            not_honoured_keys,
        };
        for warning in config.warnings() {
            tracing::warn!("{warning}");
        }
        Ok(config)
    }

    /// The effective configuration as Kafka logs it at start (`AbstractConfig.logAll`):
    /// `KafkaConfig values: ` then one tab-indented `key = value` line per key, sorted.
    pub fn values_block(&self) -> String {
        let mut text = String::from("KafkaConfig values: ");
        for (key, value) in &self.effective_values {
            text.push_str(&format!("\n\t{key} = {value}"));
        }
        text
    }

    /// The start-up warnings about keys of the file kraftwerk does not act on: one line per
    /// unknown key (neither kraftwerk's nor Kafka's), with the key it probably misspells, then
    /// one line naming the known keys it validates but does not honour. Keys Kafka defines for
    /// brokers only are accepted without a word, as Java's controller accepts them.
    pub fn warnings(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .ignored_keys
            .iter()
            .map(|key| match known_keys::did_you_mean(key) {
                Some(near) => format!(
                    "unknown configuration key `{key}` ignored (neither Kafka nor kraftwerk \
                     defines it); did you mean `{near}`?"
                ),
                None => format!(
                    "unknown configuration key `{key}` ignored (neither Kafka nor kraftwerk \
                     defines it)"
                ),
            })
            .collect();
        if !self.not_honoured_keys.is_empty() {
            lines.push(format!(
                "accepting {} configuration keys kraftwerk validates but does not act on (no \
                 effect): {}",
                self.not_honoured_keys.len(),
                self.not_honoured_keys.join(", ")
            ));
        }
        lines
    }

    /// The controller listeners this node binds and serves, in `controller.listener.names`
    /// order (validation guarantees each is in `listeners`), as Java's `ControllerServer`
    /// accepts on every one; the first is [`Self::controller_listener`].
    pub fn served_controller_listeners(&self) -> Vec<&Endpoint> {
        self.controller_listener_names
            .iter()
            .filter_map(|name| self.listeners.iter().find(|e| e.listener_name == *name))
            .collect()
    }

    /// The TLS settings of the controller listener `listener_name`, `None` when it is
    /// PLAINTEXT (or not a controller listener).
    pub fn listener_tls(&self, listener_name: &str) -> Option<&kraftwerk_server::ListenerTls> {
        self.controller_listener_tls.get(listener_name)
    }

    /// The SASL settings of the controller listener `listener_name`, `None` when it is not
    /// SASL_PLAINTEXT or SASL_SSL (or not a controller listener).
    pub fn listener_sasl(&self, listener_name: &str) -> Option<&kraftwerk_server::ListenerSasl> {
        self.controller_listener_sasl.get(listener_name)
    }

    /// The TLS settings of [`Self::controller_listener`], which the Raft client dials with;
    /// `None` when it is PLAINTEXT or SASL_PLAINTEXT.
    pub fn controller_tls(&self) -> Option<&kraftwerk_server::ListenerTls> {
        self.listener_tls(&self.controller_listener().listener_name)
    }

    /// The listener peers and brokers use, and the Raft client dials: the first
    /// `controller.listener.names` entry (validation guarantees it is in `listeners`).
    pub fn controller_listener(&self) -> &Endpoint {
        let name = &self.controller_listener_names[0];
        self.listeners
            .iter()
            .find(|e| e.listener_name == *name)
            .expect("validated in from_properties")
    }

    /// The served controller listener as others dial it: its entry in
    /// [`Self::advertised_controller_listeners`].
    pub fn advertised_controller_listener(&self) -> &Endpoint {
        let name = &self.controller_listener_names[0];
        self.advertised_controller_listeners
            .iter()
            .find(|e| e.listener_name == *name)
            .unwrap_or_else(|| self.controller_listener())
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

    /// Loads and checks every formatted directory of this node (`kraftwerk_log::formatted`).
    pub fn load_formatted(&self) -> Result<FormattedDir, LoadError> {
        load_formatted_node(&self.metadata_log_dir, &self.all_log_dirs(), self.node_id)
    }
}

/// `log.dirs`, else `log.dir`; `metadata.log.dir`, else the first of those
/// (`KafkaConfig.logDirs`, `metadataLogDir`).
fn directories(values: &Values) -> Result<(Vec<PathBuf>, PathBuf), ConfigError> {
    let text = values
        .text(keys::LOG_DIRS)
        .or_else(|| values.text(keys::LOG_DIR))
        .unwrap_or("");
    let log_dirs: Vec<PathBuf> = text
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .collect();
    let Some(first) = log_dirs.first() else {
        return Err(invalid(
            keys::LOG_DIRS,
            values.written(keys::LOG_DIRS).unwrap_or(""),
            "At least one log directory must be defined via log.dirs or log.dir.",
        ));
    };
    let metadata_log_dir = match values
        .text(keys::METADATA_LOG_DIR)
        .filter(|d| !d.is_empty())
    {
        Some(dir) => PathBuf::from(dir),
        None => first.clone(),
    };
    Ok((log_dirs, metadata_log_dir))
}

/// (segment bytes, floor): `internal.metadata.log.segment.bytes` with no floor when set, else
/// `metadata.log.segment.bytes`, which must then be at least `metadata.log.segment.min.bytes`.
fn segment_sizes(values: &Values) -> Result<(i32, i32), ConfigError> {
    if values
        .number(keys::INTERNAL_METADATA_LOG_SEGMENT_BYTES)
        .is_some()
    {
        return Ok((values.int(keys::INTERNAL_METADATA_LOG_SEGMENT_BYTES), 1));
    }
    let min = values.int(keys::METADATA_LOG_SEGMENT_MIN_BYTES);
    let bytes = values.int(keys::METADATA_LOG_SEGMENT_BYTES);
    match values.written(keys::METADATA_LOG_SEGMENT_BYTES) {
        Some(text) if bytes < min => Err(invalid(
            keys::METADATA_LOG_SEGMENT_BYTES,
            text,
            format!("Value must be at least {min}"),
        )),
        _ => Ok((bytes, min)),
    }
}

/// [`NodeConfig::effective_values`]: each table key's value as parsed (defaults filled in).
fn effective_values(values: &Values) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = keys::CONFIG_DEF
        .iter()
        .map(|key| {
            let shown = if error::is_secret(key.name) && values.written(key.name).is_some() {
                "[hidden]".to_owned()
            } else {
                values.display(key.name)
            };
            (key.name, shown)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(b.0));
    out
}

/// The authorizer `authorizer.class.name` asks for (its value was checked by the table:
/// empty or StandardAuthorizer).
fn authorizer(
    values: &Values,
) -> Result<Option<kraftwerk_controller::authorizer::AuthorizerConfig>, ConfigError> {
    use kraftwerk_controller::authorizer::AuthorizerConfig;
    let class = values
        .text(keys::AUTHORIZER_CLASS_NAME)
        .unwrap_or("")
        .trim();
    if class.is_empty() {
        return Ok(None);
    }
    let super_users = match values.text(keys::SUPER_USERS) {
        Some(text) => AuthorizerConfig::parse_super_users(text)
            .map_err(|e| invalid(keys::SUPER_USERS, text, e.to_string()))?,
        None => Default::default(),
    };
    Ok(Some(AuthorizerConfig {
        super_users,
        allow_everyone_if_no_acl_found: values.boolean(keys::ALLOW_EVERYONE_IF_NO_ACL_FOUND),
    }))
}

/// The delegation-token settings (`KafkaConfig.delegationTokenSecretKey` and the three
/// periods): the secret is `delegation.token.secret.key`, else Kafka 3.x's deprecated
/// `delegation.token.master.key`; tokens are enabled when it is not empty.
fn delegation_tokens(
    values: &Values,
) -> Option<kraftwerk_controller::controller::DelegationTokenSettings> {
    let secret = values
        .text(keys::DELEGATION_TOKEN_SECRET_KEY)
        .or_else(|| values.text(keys::DELEGATION_TOKEN_MASTER_KEY))
        .filter(|s| !s.is_empty())?;
    Some(kraftwerk_controller::controller::DelegationTokenSettings {
        secret_key: secret.to_owned(),
        max_lifetime_ms: values.long(keys::DELEGATION_TOKEN_MAX_LIFETIME_MS),
        expiry_time_ms: values.long(keys::DELEGATION_TOKEN_EXPIRY_TIME_MS),
        expiry_check_interval_ms: u64::try_from(
            values.long(keys::DELEGATION_TOKEN_EXPIRY_CHECK_INTERVAL_MS),
        )
        .unwrap_or(u64::MAX),
    })
}

/// The keys of the file kraftwerk does not act on, each sorted: (unknown to the table and to
/// Kafka, known but [`Usage::NotHonoured`]). An `ssl.*` key set for a PLAINTEXT listener is
/// accepted silently, as Kafka does: it takes effect if the listener becomes SSL; so is a
/// `listener.name.<listener>.` override of a Kafka key for a listener this node lacks.
fn unused_keys(props: &JavaProperties, listeners: &[Endpoint]) -> (Vec<String>, Vec<String>) {
    let mut ignored = Vec::new();
    let mut not_honoured = Vec::new();
    for (name, _) in props.iter() {
        // `listener.name.<listener>.ssl.*` (and the SASL keys) of a listener this node has
        // counts as that key; a prefix naming no listener is unknown, as Kafka ignores it.
        let key = listeners
            .iter()
            .find_map(|e| name.strip_prefix(&tls::listener_prefix(&e.listener_name)))
            .filter(|k| tls::is_ssl_key(k) || sasl::is_listener_sasl_key(k))
            .unwrap_or(name);
        match keys::lookup(key).map(|k| k.usage) {
            // Kafka's own keys kraftwerk's table lacks are broker-side: accepted silently.
            None if known_keys::is_kafka_key(key)
                || known_keys::is_listener_override_of_kafka_key(name) => {}
            None => ignored.push(name.to_owned()),
            Some(Usage::NotHonoured) => not_honoured.push(name.to_owned()),
            Some(Usage::Used | Usage::Checked) => {}
        }
    }
    ignored.sort();
    not_honoured.sort();
    (ignored, not_honoured)
}

#[cfg(test)]
mod tests;
