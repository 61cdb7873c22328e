//! The SASL side of a SASL_PLAINTEXT or SASL_SSL controller listener and of the Raft client, from
//! Kafka's keys: `sasl.enabled.mechanisms`, `connections.max.reauth.ms` and
//! `sasl.server.max.receive.size` (each also as `listener.name.<listener>.<key>`, which wins, as
//! `KafkaConfig.valuesWithPrefixOverride` makes it win for `SaslChannelBuilder`),
//! `connection.failed.authentication.delay.ms` (node-wide, as Kafka's `SocketServer` reads it),
//! `sasl.mechanism.controller.protocol`, and the JAAS entries
//! `listener.name.<listener>.<mechanism>.sasl.jaas.config` (`JaasContext.loadServerContext`).
//! kraftwerk reads no static JAAS file (`java.security.auth.login.config`), so the entry of every
//! enabled mechanism must be in `server.properties`. The table entries are in [`super::keys`].

use std::collections::BTreeMap;

use kraftwerk_log::java_properties::JavaProperties;
use kraftwerk_sasl::jaas::{self, JaasError, LoginModule};
use kraftwerk_sasl::Mechanism;
use kraftwerk_server::{ClientSasl, ListenerSasl, ListenerTls};
use kraftwerk_tls::ClientAuth;

use super::def::{list_items, Value};
use super::error::{invalid, ConfigError};
use super::keys::{self, lookup};
use super::listeners::Endpoint;
use super::security_protocol::SecurityProtocol;
use super::tls::{listener_prefix, listener_tls};
use super::values::Values;

/// `PlainLoginModule`: the login module of a PLAIN JAAS entry, whose `user_NAME` options
/// Kafka's `PlainServerCallbackHandler` reads.
pub(super) const PLAIN_LOGIN_MODULE: &str =
    "org.apache.kafka.common.security.plain.PlainLoginModule";
/// `ScramLoginModule`: the login module of a SCRAM-SHA-256/512 JAAS entry.
pub(super) const SCRAM_LOGIN_MODULE: &str =
    "org.apache.kafka.common.security.scram.ScramLoginModule";
/// `SaslConfigs.SASL_JAAS_CONFIG`.
const JAAS_CONFIG: &str = "sasl.jaas.config";

/// What kraftwerk implements, for the messages.
const IMPLEMENTED: &str = "PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512";

/// Java plugin classes of `SaslConfigs`/`BrokerSecurityConfigs` kraftwerk cannot load: refused
/// when set, plain or with a `listener.name.<l>.` (and mechanism) prefix.
const PLUGIN_KEYS: [&str; 4] = [
    keys::SASL_SERVER_CALLBACK_HANDLER_CLASS,
    keys::SASL_CLIENT_CALLBACK_HANDLER_CLASS,
    keys::SASL_LOGIN_CLASS,
    keys::SASL_LOGIN_CALLBACK_HANDLER_CLASS,
];

/// The table keys a `listener.name.<listener>.` prefix may carry for SASL (the prefixed form
/// counts as the key itself for the start-up warnings).
pub(super) fn is_listener_sasl_key(name: &str) -> bool {
    [
        keys::SASL_ENABLED_MECHANISMS,
        keys::CONNECTIONS_MAX_REAUTH_MS,
        keys::SASL_SERVER_MAX_RECEIVE_SIZE,
    ]
    .contains(&name)
        || PLUGIN_KEYS.contains(&name)
}

/// The SASL settings of every SASL controller listener (by listener name) and, when the first
/// controller listener is SASL, the Raft client's.
pub(super) type SaslConfig = (BTreeMap<String, ListenerSasl>, Option<ClientSasl>);

/// Validator of the plugin class keys: empty is fine, a class is refused.
pub(super) fn refuse_sasl_plugin(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Ok(());
    }
    Err(format!(
        "kraftwerk cannot load Java classes: it authenticates {IMPLEMENTED} itself, with the \
         users of the JAAS configuration (PLAIN) and the SCRAM credentials of the metadata log; \
         remove the key"
    ))
}

/// The TLS settings of a SASL_SSL listener: its `ssl.*` keys as for SSL, except that client
/// certificates are asked for only when `listener.name.<l>.ssl.client.auth` is set
/// (`ChannelBuilders.create`: the broker-wide `ssl.client.auth` does not apply to SASL_SSL).
pub(super) fn sasl_ssl_tls(
    props: &JavaProperties,
    values: &Values,
    listener_name: &str,
) -> Result<ListenerTls, ConfigError> {
    let mut tls = listener_tls(props, values, listener_name)?;
    let prefixed = format!(
        "{}{}",
        listener_prefix(listener_name),
        keys::SSL_CLIENT_AUTH
    );
    if props.get(&prefixed).is_none() {
        if tls.settings.client_auth != ClientAuth::None {
            // Kafka's warning, so that an operator who meant mutual TLS learns the key.
            tracing::warn!(
                "Broker configuration '{}' is applied only to SSL listeners. Listener-prefixed \
                 configuration can be used to enable SSL client authentication for SASL_SSL \
                 listeners: set {prefixed} for listener {listener_name}",
                keys::SSL_CLIENT_AUTH
            );
        }
        tls.settings.client_auth = ClientAuth::None;
    }
    Ok(tls)
}

/// The SASL settings of this node's listeners (all controller listeners) and of its Raft
/// client, after the node-wide checks (plugin classes in their prefixed forms,
/// `connection.failed.authentication.delay.ms` below `connections.max.idle.ms`).
///
/// Errors name the key and say what to set; they never hold a JAAS value (passwords).
pub(super) fn sasl_config(
    props: &JavaProperties,
    values: &Values,
    listeners: &[Endpoint],
    controller_listener_names: &[String],
) -> Result<SaslConfig, ConfigError> {
    refuse_prefixed_plugins(props, listeners)?;
    check_failed_authentication_delay(values)?;
    let mut by_listener = BTreeMap::new();
    for e in listeners.iter().filter(|e| is_sasl(e.security_protocol)) {
        let sasl = listener_sasl(props, values, e)?;
        by_listener.insert(e.listener_name.clone(), sasl);
    }
    let first = controller_listener_names
        .first()
        .and_then(|name| listeners.iter().find(|e| e.listener_name == *name));
    let client = match first {
        Some(e) if is_sasl(e.security_protocol) => Some(raft_client_sasl(props, values, e)?),
        _ => None,
    };
    Ok((by_listener, client))
}

fn is_sasl(protocol: SecurityProtocol) -> bool {
    matches!(
        protocol,
        SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
    )
}

/// `listener.name.<l>.<key>` and `listener.name.<l>.<mechanism>.<key>` of the plugin keys, for
/// this node's listeners (a broker listener's override in a shared file is not this node's).
fn refuse_prefixed_plugins(
    props: &JavaProperties,
    listeners: &[Endpoint],
) -> Result<(), ConfigError> {
    for (name, value) in props.iter() {
        let Some(rest) = listeners
            .iter()
            .find_map(|e| name.strip_prefix(&listener_prefix(&e.listener_name)))
        else {
            continue;
        };
        let key = rest.split_once('.').map_or(rest, |(_, k)| k);
        let plugin = PLUGIN_KEYS.iter().find(|k| **k == rest || **k == key);
        if let (Some(_), Err(reason)) = (plugin, refuse_sasl_plugin(value)) {
            return Err(ConfigError::Inconsistent(format!(
                "Invalid value `{}` for configuration `{name}`: {reason}",
                value.trim()
            )));
        }
    }
    Ok(())
}

/// `KafkaConfig.validateValues`: the delay must be below `connections.max.idle.ms` (when that
/// is not negative), or failed authentication responses would time out.
fn check_failed_authentication_delay(values: &Values) -> Result<(), ConfigError> {
    let delay = values.int(keys::CONNECTION_FAILED_AUTHENTICATION_DELAY_MS);
    let idle = values.long(keys::CONNECTIONS_MAX_IDLE_MS);
    if idle >= 0 && i64::from(delay) >= idle {
        return Err(ConfigError::Inconsistent(format!(
            "{}={delay} should always be less than {}={idle} to prevent failed authentication \
             responses from timing out",
            keys::CONNECTION_FAILED_AUTHENTICATION_DELAY_MS,
            keys::CONNECTIONS_MAX_IDLE_MS
        )));
    }
    Ok(())
}

/// One listener's view of the keys: the `listener.name.<l>.` form when the file sets it
/// (validated like the plain key and named as written), else the plain key's value.
struct Prefixed<'a> {
    props: &'a JavaProperties,
    values: &'a Values<'a>,
    prefix: String,
}

impl<'a> Prefixed<'a> {
    /// (the key as the value came from, the parsed prefixed value if that is where).
    fn get(&self, key: &'static str) -> Result<(String, Option<Value<'a>>), ConfigError> {
        let prefixed = format!("{}{key}", self.prefix);
        match self.props.get(&prefixed).map(str::trim) {
            Some(text) => {
                let def = lookup(key).expect("a SASL key of the table");
                let value = def.parse(text).map_err(|e| {
                    ConfigError::Inconsistent(e.to_string().replacen(
                        &format!("`{key}`"),
                        &format!("`{prefixed}`"),
                        1,
                    ))
                })?;
                Ok((prefixed, Some(value)))
            }
            None => Ok((key.to_owned(), None)),
        }
    }

    fn text(&self, key: &'static str) -> Result<(String, &'a str), ConfigError> {
        match self.get(key)? {
            (name, Some(Value::Text(t))) => Ok((name, t)),
            (name, None) => Ok((name, self.values.text(key).unwrap_or(""))),
            (_, Some(other)) => unreachable!("`{key}` is a STRING or LIST key, got {other:?}"),
        }
    }

    fn number(&self, key: &'static str) -> Result<i64, ConfigError> {
        match self.get(key)? {
            (_, Some(Value::Number(n))) => Ok(n),
            (_, None) => Ok(self
                .values
                .number(key)
                .expect("a SASL number key has a default")),
            (_, Some(other)) => unreachable!("`{key}` is a number key, got {other:?}"),
        }
    }
}

fn listener_error(e: &Endpoint, reason: impl std::fmt::Display) -> ConfigError {
    ConfigError::Inconsistent(format!(
        "listener {} uses {}: {reason}",
        e.listener_name, e.security_protocol
    ))
}

/// The [`ListenerSasl`] of SASL listener `e`.
fn listener_sasl(
    props: &JavaProperties,
    values: &Values,
    e: &Endpoint,
) -> Result<ListenerSasl, ConfigError> {
    let v = Prefixed {
        props,
        values,
        prefix: listener_prefix(&e.listener_name),
    };
    // Validate every prefixed form, including those read below only on some paths.
    for key in keys::CONFIG_DEF
        .iter()
        .filter(|k| is_listener_sasl_key(k.name))
    {
        v.get(key.name)?;
    }
    let enabled_mechanisms = enabled_mechanisms(&v, e)?;
    let mut plain_users = BTreeMap::new();
    for mechanism in &enabled_mechanisms {
        let module = jaas_entry(props, e, *mechanism)?;
        if *mechanism == Mechanism::Plain {
            plain_users = module.plain_users();
        }
    }
    // KIP-368 lets each mechanism have its own lifetime; kraftwerk's listener has one.
    if let Some((name, _)) = props.iter().find(|(name, _)| {
        name.strip_prefix(&v.prefix)
            .and_then(|rest| rest.split_once('.'))
            .is_some_and(|(_, k)| k == keys::CONNECTIONS_MAX_REAUTH_MS)
    }) {
        return Err(listener_error(
            e,
            format!(
                "`{name}` sets a re-authentication lifetime for one mechanism; kraftwerk takes \
                 one value per listener: set {}{} or {} instead",
                v.prefix,
                keys::CONNECTIONS_MAX_REAUTH_MS,
                keys::CONNECTIONS_MAX_REAUTH_MS
            ),
        ));
    }
    // Both are range-checked by the table (≥ 0, ≥ 1), prefixed forms included.
    let reauth_ms = v.number(keys::CONNECTIONS_MAX_REAUTH_MS)?;
    let max_receive_size = v.number(keys::SASL_SERVER_MAX_RECEIVE_SIZE)?;
    let delay = values.int(keys::CONNECTION_FAILED_AUTHENTICATION_DELAY_MS);
    Ok(ListenerSasl {
        enabled_mechanisms,
        plain_users,
        reauth_ms: u64::try_from(reauth_ms).unwrap_or(0),
        failed_authentication_delay_ms: u64::try_from(delay).unwrap_or(0),
        max_receive_size: usize::try_from(max_receive_size).unwrap_or(1),
    })
}

/// `sasl.enabled.mechanisms` of listener `e`, in the order written, without repeats; each one
/// kraftwerk implements.
fn enabled_mechanisms(v: &Prefixed, e: &Endpoint) -> Result<Vec<Mechanism>, ConfigError> {
    let (key, text) = v.text(keys::SASL_ENABLED_MECHANISMS)?;
    let names = list_items(text);
    if names.is_empty() {
        return Err(listener_error(
            e,
            format!(
                "`{key}` is empty: a SASL listener needs at least one mechanism ({IMPLEMENTED})"
            ),
        ));
    }
    let mut mechanisms = Vec::new();
    for name in names {
        let mechanism = Mechanism::from_name(name).ok_or_else(|| {
            let why = match name {
                "GSSAPI" => " (GSSAPI, Kerberos, is Kafka's default: set the key)",
                "OAUTHBEARER" => " (OAUTHBEARER is not implemented)",
                _ => "",
            };
            ConfigError::Inconsistent(format!(
                "Invalid value `{text}` for configuration `{key}`: listener {} uses {}, and \
                 kraftwerk implements the SASL mechanisms {IMPLEMENTED}, not `{name}`{why}",
                e.listener_name, e.security_protocol
            ))
        })?;
        if !mechanisms.contains(&mechanism) {
            mechanisms.push(mechanism);
        }
    }
    Ok(mechanisms)
}

/// `listener.name.<l>.<mechanism lowercase>.sasl.jaas.config` of listener `e`, parsed and
/// checked: present (no static JAAS file is read), one module, Kafka's login module of the
/// mechanism.
fn jaas_entry(
    props: &JavaProperties,
    e: &Endpoint,
    mechanism: Mechanism,
) -> Result<LoginModule, ConfigError> {
    let prefix = listener_prefix(&e.listener_name);
    let key = format!(
        "{prefix}{}.{JAAS_CONFIG}",
        mechanism.name().to_ascii_lowercase()
    );
    let Some(text) = props.get(&key).map(str::trim).filter(|t| !t.is_empty()) else {
        // Kafka ignores these two with a warning; name them, as they are the usual mistake.
        let unprefixed = [format!("{prefix}{JAAS_CONFIG}"), JAAS_CONFIG.to_owned()]
            .into_iter()
            .filter(|k| props.get(k).is_some())
            .map(|k| format!(" (`{k}` is set, but a listener's entry must name the mechanism)"))
            .next()
            .unwrap_or_default();
        return Err(listener_error(
            e,
            format!(
                "no JAAS configuration for mechanism {mechanism}: set `{key}`{unprefixed}. Kafka \
                 would fall back to a `{}.KafkaServer` or `KafkaServer` entry of the static JAAS \
                 file (java.security.auth.login.config), which kraftwerk does not read",
                e.listener_name.to_ascii_lowercase()
            ),
        ));
    };
    let module = jaas::parse(text).map_err(|err| {
        // JaasError texts name option keys, never values; a bad flag is not repeated, as a
        // mistyped entry may have a password where the flag should be.
        let reason = match err {
            JaasError::BadFlag(_) => "Invalid login module control flag in JAAS config (required, \
                                      requisite, sufficient or optional)"
                .to_owned(),
            other => other.to_string(),
        };
        ConfigError::Inconsistent(format!(
            "Invalid value [hidden] for configuration `{key}`: {reason}"
        ))
    })?;
    let expected = match mechanism {
        Mechanism::Plain => PLAIN_LOGIN_MODULE,
        Mechanism::ScramSha256 | Mechanism::ScramSha512 => SCRAM_LOGIN_MODULE,
    };
    if module.class != expected {
        return Err(ConfigError::Inconsistent(format!(
            "Invalid value [hidden] for configuration `{key}`: the login module of {mechanism} \
             must be {expected} (kraftwerk runs Kafka's own modules only)"
        )));
    }
    Ok(module)
}

/// The Raft client's credentials: `sasl.mechanism.controller.protocol` with the `username` and
/// `password` of the first controller listener's JAAS entry for it (Java's `RaftManager`
/// builds its client channel with `JaasContext.Type.SERVER` for that listener).
fn raft_client_sasl(
    props: &JavaProperties,
    values: &Values,
    e: &Endpoint,
) -> Result<ClientSasl, ConfigError> {
    let key = keys::SASL_MECHANISM_CONTROLLER_PROTOCOL;
    let text = values.text(key).unwrap_or("");
    let mechanism = Mechanism::from_name(text).ok_or_else(|| {
        invalid(
            key,
            text,
            format!(
                "the first controller listener {} uses {}, so the Raft client authenticates with \
                 this mechanism to the other controllers; kraftwerk implements {IMPLEMENTED}: \
                 set {key} to one of them (Kafka's default is GSSAPI)",
                e.listener_name, e.security_protocol
            ),
        )
    })?;
    let module = jaas_entry(props, e, mechanism)?;
    let jaas_key = format!(
        "{}{}.{JAAS_CONFIG}",
        listener_prefix(&e.listener_name),
        mechanism.name().to_ascii_lowercase()
    );
    match (module.username(), module.password()) {
        (Some(username), Some(password)) => Ok(ClientSasl {
            mechanism,
            username: username.to_owned(),
            password: password.to_owned(),
        }),
        _ => Err(ConfigError::Inconsistent(format!(
            "`{jaas_key}` needs the `username` and `password` options: the Raft client \
             authenticates to the other controllers with them ({key}={mechanism}), as Java's \
             RaftManager reads that listener's JAAS entry"
        ))),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use kraftwerk_log::bootstrap::BootstrapMetadata;
    use kraftwerk_log::formatted::FormattedDir;
    use kraftwerk_records::metadata_version::MetadataVersion;
    use kraftwerk_sasl::Mechanism;
    use kraftwerk_server::{ClientSasl, ListenerSasl};
    use kraftwerk_tls::ClientAuth;
    use uuid::Uuid;

    use super::super::tests::{parse, MINIMAL};
    use super::super::NodeConfig;

    /// Every password of the files below: no error and no `{:?}` may show one.
    const SECRETS: [&str; 3] = ["pw-admin-0x1", "pw-broker-0x2", "pw-scram-0x3"];

    /// The JAAS entries of listener CONTROLLER: PLAIN with two users (and the Raft client's
    /// username/password), SCRAM-SHA-512 with the Raft client's credentials.
    const JAAS: &str = "listener.name.controller.plain.sasl.jaas.config=\
        org.apache.kafka.common.security.plain.PlainLoginModule required \
        username=\"admin\" password=\"pw-admin-0x1\" user_admin=\"pw-admin-0x1\" \
        user_broker=\"pw-broker-0x2\";\n\
        listener.name.controller.scram-sha-512.sasl.jaas.config=\
        org.apache.kafka.common.security.scram.ScramLoginModule required \
        username=\"controller\" password=\"pw-scram-0x3\";\n";

    /// `tests::TWO_LISTENERS` with CONTROLLER on SASL_PLAINTEXT (PLAIN, the Raft client on
    /// PLAIN) and OTHER on PLAINTEXT: the base of the SASL keys' samples in `tests::SAMPLES`.
    pub(in crate::config) const SASL_TWO_LISTENERS: &str = concat!(
        "process.roles=controller\nnode.id=1\n",
        "controller.quorum.voters=1@localhost:9093,2@localhost:9094\n",
        "listeners=CONTROLLER://localhost:9093,OTHER://localhost:9095\n",
        "controller.listener.names=CONTROLLER,OTHER\n",
        "listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT,OTHER:PLAINTEXT\n",
        "sasl.enabled.mechanisms=PLAIN\nsasl.mechanism.controller.protocol=PLAIN\n",
        "listener.name.controller.plain.sasl.jaas.config=",
        "org.apache.kafka.common.security.plain.PlainLoginModule required ",
        "username=\"admin\" password=\"pw-admin-0x1\" user_admin=\"pw-admin-0x1\";\n",
        "listener.name.controller.scram-sha-512.sasl.jaas.config=",
        "org.apache.kafka.common.security.scram.ScramLoginModule required ",
        "username=\"controller\" password=\"pw-scram-0x3\";\n",
    );

    fn sasl_plaintext() -> String {
        format!(
            "{MINIMAL}listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT\n\
             sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512\n\
             sasl.mechanism.controller.protocol=SCRAM-SHA-512\n{JAAS}"
        )
    }

    /// The refusal of `file`, checked to hold no password.
    fn refused(file: &str) -> String {
        let err = parse(file)
            .err()
            .unwrap_or_else(|| panic!("must be refused:\n{file}"))
            .to_string();
        for secret in SECRETS {
            assert!(!err.contains(secret), "a password in: {err}");
        }
        err
    }

    fn formatted() -> FormattedDir {
        FormattedDir {
            cluster_id: "MkU3OEVBNTcwNTJENDM2Qg".to_owned(),
            node_id: 1,
            directory_id: Uuid::nil(),
            bootstrap: BootstrapMetadata::from_version(MetadataVersion::LATEST_PRODUCTION, "test"),
        }
    }

    fn no_secret_in_debug(c: &NodeConfig) {
        let shown = format!("{c:?} {:?}", c.server_config(&formatted()));
        for secret in SECRETS {
            assert!(!shown.contains(secret), "a password in: {shown}");
        }
        let block = c.values_block();
        for secret in SECRETS {
            assert!(!block.contains(secret), "a password in: {block}");
        }
    }

    #[test]
    fn a_sasl_plaintext_listener_and_its_raft_client() {
        let c = parse(&sasl_plaintext()).unwrap();
        let expected = ListenerSasl {
            enabled_mechanisms: vec![Mechanism::Plain, Mechanism::ScramSha512],
            plain_users: BTreeMap::from([
                ("admin".to_owned(), "pw-admin-0x1".to_owned()),
                ("broker".to_owned(), "pw-broker-0x2".to_owned()),
            ]),
            reauth_ms: 0,
            failed_authentication_delay_ms: 100,
            max_receive_size: 524_288,
        };
        assert_eq!(c.listener_sasl("CONTROLLER"), Some(&expected));
        let client = ClientSasl {
            mechanism: Mechanism::ScramSha512,
            username: "controller".into(),
            password: "pw-scram-0x3".into(),
        };
        assert_eq!(c.raft_client_sasl, Some(client.clone()));
        assert!(c.controller_tls().is_none(), "SASL_PLAINTEXT has no TLS");
        let server = c.server_config(&formatted());
        assert_eq!(server.listeners[0].sasl, Some(expected));
        assert!(server.listeners[0].tls.is_none());
        assert_eq!(server.raft_client_sasl, Some(client));
        assert_eq!(server.registration_endpoints[0].security_protocol, 2);
        // The JAAS entries are Kafka keys of this listener: no warning.
        assert!(c.ignored_keys.is_empty(), "{:?}", c.ignored_keys);
        assert!(c.warnings().is_empty(), "{:?}", c.warnings());
        no_secret_in_debug(&c);
    }

    #[test]
    fn a_sasl_ssl_listener_has_tls_without_client_certificates_unless_its_own_key_asks() {
        let ssl = "ssl.keystore.type=PKCS12\nssl.keystore.location=/node.p12\n\
                   ssl.keystore.password=p\nssl.truststore.location=/trust.p12\n\
                   ssl.client.auth=required\n";
        let file = format!(
            "{MINIMAL}listener.security.protocol.map=CONTROLLER:SASL_SSL\n{ssl}\
             listener.name.controller.sasl.enabled.mechanisms=SCRAM-SHA-512\n\
             sasl.mechanism.controller.protocol=SCRAM-SHA-512\n\
             listener.name.controller.connections.max.reauth.ms=3600000\n\
             connection.failed.authentication.delay.ms=250\n\
             listener.name.controller.sasl.server.max.receive.size=65536\n{JAAS}"
        );
        let c = parse(&file).unwrap();
        let sasl = c.listener_sasl("CONTROLLER").unwrap();
        assert_eq!(sasl.enabled_mechanisms, [Mechanism::ScramSha512]);
        assert!(sasl.plain_users.is_empty(), "PLAIN is not enabled");
        assert_eq!(sasl.reauth_ms, 3_600_000);
        assert_eq!(sasl.failed_authentication_delay_ms, 250);
        assert_eq!(sasl.max_receive_size, 65_536);
        let tls = c.controller_tls().expect("SASL_SSL is TLS");
        assert_eq!(
            tls.settings.keystore,
            Some(kraftwerk_tls::KeyStoreSource::Pkcs12 {
                path: PathBuf::from("/node.p12"),
                password: "p".into(),
                key_password: None,
                named_jks: false,
            })
        );
        // ChannelBuilders: the broker-wide ssl.client.auth does not apply to SASL_SSL.
        assert_eq!(tls.settings.client_auth, ClientAuth::None);
        let server = c.server_config(&formatted());
        assert!(server.listeners[0].tls.is_some() && server.listeners[0].sasl.is_some());
        assert_eq!(server.registration_endpoints[0].security_protocol, 3);
        assert_eq!(
            c.raft_client_sasl.as_ref().map(|s| s.username.as_str()),
            Some("controller")
        );
        let c = parse(&format!(
            "{file}listener.name.controller.ssl.client.auth=requested\n"
        ))
        .unwrap();
        assert_eq!(
            c.controller_tls().unwrap().settings.client_auth,
            ClientAuth::Requested
        );
        assert!(c.ignored_keys.is_empty(), "{:?}", c.ignored_keys);
        no_secret_in_debug(&c);
    }

    #[test]
    fn the_listener_prefixed_forms_win() {
        let c = parse(&format!(
            "{}listener.name.controller.sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN,PLAIN\n\
             sasl.enabled.mechanisms=SCRAM-SHA-256\nconnections.max.reauth.ms=1000\n\
             listener.name.controller.connections.max.reauth.ms=2000\n\
             sasl.server.max.receive.size=1000\n\
             listener.name.controller.sasl.server.max.receive.size=2000\n",
            sasl_plaintext()
        ))
        .unwrap();
        let sasl = c.listener_sasl("CONTROLLER").unwrap();
        assert_eq!(
            sasl.enabled_mechanisms,
            [Mechanism::ScramSha512, Mechanism::Plain],
            "in the order written, once each"
        );
        assert_eq!((sasl.reauth_ms, sasl.max_receive_size), (2000, 2000));
        // The plain keys apply to a listener without its own.
        let c = parse(&format!(
            "{}connections.max.reauth.ms=1000\nsasl.server.max.receive.size=1000\n",
            sasl_plaintext()
        ))
        .unwrap();
        let sasl = c.listener_sasl("CONTROLLER").unwrap();
        assert_eq!((sasl.reauth_ms, sasl.max_receive_size), (1000, 1000));
    }

    /// Only SASL listeners get SASL settings; the Raft client authenticates only when the
    /// first controller listener is SASL.
    #[test]
    fn a_second_sasl_listener_has_its_settings_and_the_raft_client_none() {
        let c = parse(&format!(
            "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n\
             listeners=PLAIN://localhost:9093,CONTROLLER://localhost:9094\n\
             controller.listener.names=PLAIN,CONTROLLER\n\
             listener.security.protocol.map=PLAIN:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT\n\
             sasl.enabled.mechanisms=PLAIN\n{JAAS}"
        ))
        .unwrap();
        assert!(c.listener_sasl("PLAIN").is_none());
        assert!(c.listener_sasl("CONTROLLER").is_some());
        assert_eq!(c.raft_client_sasl, None, "GSSAPI default not needed");
        // A PLAINTEXT node has nothing SASL, whatever the SASL keys say.
        let c = parse(&format!("{MINIMAL}sasl.enabled.mechanisms=GSSAPI\n{JAAS}")).unwrap();
        assert!(c.controller_listener_sasl.is_empty() && c.raft_client_sasl.is_none());
    }

    #[test]
    fn mechanisms_kraftwerk_does_not_implement_are_refused() {
        let base =
            format!("{MINIMAL}listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT\n{JAAS}");
        // Kafka's default, GSSAPI.
        let err = refused(&base);
        assert!(
            err.contains("`sasl.enabled.mechanisms`")
                && err.contains("GSSAPI")
                && err.contains("PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512"),
            "{err}"
        );
        let err = refused(&format!(
            "{base}sasl.enabled.mechanisms=PLAIN\n\
             listener.name.controller.sasl.enabled.mechanisms=PLAIN,OAUTHBEARER\n"
        ));
        assert!(
            err.contains("`listener.name.controller.sasl.enabled.mechanisms`")
                && err.contains("OAUTHBEARER is not implemented"),
            "{err}"
        );
        // Names are case-sensitive, as in Kafka's SaslHandshake.
        let err = refused(&format!("{base}sasl.enabled.mechanisms=plain\n"));
        assert!(err.contains("`plain`"), "{err}");
        let err = refused(&format!("{base}sasl.enabled.mechanisms=\n"));
        assert!(
            err.contains("`sasl.enabled.mechanisms` is empty") && err.contains("CONTROLLER"),
            "{err}"
        );
    }

    #[test]
    fn every_enabled_mechanism_needs_its_jaas_entry_with_kafkas_login_module() {
        let base = format!(
            "{MINIMAL}listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT\n\
             sasl.enabled.mechanisms=SCRAM-SHA-256\nsasl.mechanism.controller.protocol=PLAIN\n"
        );
        let err = refused(&base);
        assert!(
            err.contains("`listener.name.controller.scram-sha-256.sasl.jaas.config`")
                && err.contains("java.security.auth.login.config")
                && err.contains("does not read"),
            "{err}"
        );
        // The forms Kafka ignores (with a warning) are named.
        let err = refused(&format!(
            "{base}listener.name.controller.sasl.jaas.config=\
             x required password=\"pw-admin-0x1\";\n"
        ));
        assert!(
            err.contains("`listener.name.controller.sasl.jaas.config` is set"),
            "{err}"
        );
        let key = "listener.name.controller.scram-sha-256.sasl.jaas.config";
        let err = refused(&format!(
            "{base}{key}=org.apache.kafka.common.security.scram.ScramLoginModule required \
             password=\"pw-admin-0x1\"\n"
        ));
        assert!(
            err.contains(key) && err.contains("[hidden]") && err.contains("semi-colon"),
            "{err}"
        );
        let err = refused(&format!(
            "{base}{key}=org.apache.kafka.common.security.scram.ScramLoginModule \
             \"pw-admin-0x1\" x=y;\n"
        ));
        assert!(err.contains("control flag"), "{err}");
        let err = refused(&format!(
            "{base}{key}=org.apache.kafka.common.security.plain.PlainLoginModule required \
             password=\"pw-admin-0x1\";\n"
        ));
        assert!(
            err.contains(key) && err.contains(super::SCRAM_LOGIN_MODULE),
            "{err}"
        );
        let err = refused(&format!(
            "{MINIMAL}listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT\n\
             sasl.enabled.mechanisms=PLAIN\nlistener.name.controller.plain.sasl.jaas.config=\
             com.example.LdapLoginModule required user_admin=\"pw-admin-0x1\";\n"
        ));
        assert!(err.contains(super::PLAIN_LOGIN_MODULE), "{err}");
    }

    #[test]
    fn the_raft_client_needs_a_mechanism_and_the_listeners_credentials_for_it() {
        let base = format!(
            "{MINIMAL}listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT\n\
             sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512\n{JAAS}"
        );
        // Kafka's default GSSAPI: say to set the key.
        let err = refused(&base);
        assert!(
            err.contains("`sasl.mechanism.controller.protocol`")
                && err.contains("GSSAPI")
                && err.contains("set sasl.mechanism.controller.protocol"),
            "{err}"
        );
        let err = refused(&format!(
            "{base}sasl.mechanism.controller.protocol=OAUTHBEARER\n"
        ));
        assert!(err.contains("OAUTHBEARER"), "{err}");
        // A mechanism without the listener's JAAS entry.
        let err = refused(&format!(
            "{base}sasl.mechanism.controller.protocol=SCRAM-SHA-256\n"
        ));
        assert!(
            err.contains("listener.name.controller.scram-sha-256.sasl.jaas.config"),
            "{err}"
        );
        // An entry without username and password (a server-only PLAIN entry).
        let err = refused(&format!(
            "{base}sasl.mechanism.controller.protocol=PLAIN\n\
             listener.name.controller.plain.sasl.jaas.config=\
             org.apache.kafka.common.security.plain.PlainLoginModule required \
             user_admin=\"pw-admin-0x1\";\n"
        ));
        assert!(
            err.contains("listener.name.controller.plain.sasl.jaas.config")
                && err.contains("`username` and `password`"),
            "{err}"
        );
        let c = parse(&format!("{base}sasl.mechanism.controller.protocol=PLAIN\n")).unwrap();
        assert_eq!(
            c.raft_client_sasl,
            Some(ClientSasl {
                mechanism: Mechanism::Plain,
                username: "admin".into(),
                password: "pw-admin-0x1".into()
            })
        );
        let shown = format!("{:?}", c.raft_client_sasl);
        assert!(
            shown.contains("admin") && !shown.contains("pw-admin-0x1"),
            "{shown}"
        );
    }

    #[test]
    fn reauth_delay_and_receive_size_are_range_checked() {
        let base = sasl_plaintext();
        for (key, value, expected) in [
            ("connections.max.reauth.ms", "-1", "at least 0"),
            (
                "listener.name.controller.connections.max.reauth.ms",
                "-5",
                "at least 0",
            ),
            (
                "listener.name.controller.connections.max.reauth.ms",
                "soon",
                "LONG",
            ),
            (
                "connection.failed.authentication.delay.ms",
                "-1",
                "at least 0",
            ),
            ("sasl.server.max.receive.size", "0", "at least 1"),
            (
                "listener.name.controller.sasl.server.max.receive.size",
                "0",
                "at least 1",
            ),
        ] {
            let err = refused(&format!("{base}{key}={value}\n"));
            assert!(
                err.contains(&format!("`{key}`")) && err.contains(value) && err.contains(expected),
                "{key}={value}: {err}"
            );
        }
        // KIP-368 per mechanism: kraftwerk has one lifetime per listener.
        let err = refused(&format!(
            "{base}listener.name.controller.plain.connections.max.reauth.ms=1000\n"
        ));
        assert!(
            err.contains("listener.name.controller.plain.connections.max.reauth.ms")
                && err.contains("one value per listener"),
            "{err}"
        );
        // KafkaConfig: the delay stays below connections.max.idle.ms.
        let err = refused(&format!(
            "{MINIMAL}connection.failed.authentication.delay.ms=600000\n"
        ));
        assert!(
            err.contains("connection.failed.authentication.delay.ms=600000")
                && err.contains("connections.max.idle.ms=600000"),
            "{err}"
        );
        parse(&format!(
            "{MINIMAL}connection.failed.authentication.delay.ms=600000\n\
             connections.max.idle.ms=-1\n"
        ))
        .unwrap();
    }

    #[test]
    fn java_plugin_classes_are_refused_in_every_form() {
        let base = sasl_plaintext();
        for key in [
            "sasl.server.callback.handler.class",
            "sasl.client.callback.handler.class",
            "sasl.login.class",
            "sasl.login.callback.handler.class",
            "listener.name.controller.sasl.login.class",
            "listener.name.controller.plain.sasl.server.callback.handler.class",
            "listener.name.controller.scram-sha-512.sasl.login.callback.handler.class",
        ] {
            let err = refused(&format!("{base}{key}=com.example.Handler\n"));
            assert!(
                err.contains(&format!("`{key}`")) && err.contains("cannot load Java classes"),
                "{key}: {err}"
            );
            // Empty is no class.
            parse(&format!("{base}{key}=\n")).unwrap();
        }
        // Another listener's (a broker's, in a shared file) is not this node's.
        let c = parse(&format!(
            "{base}listener.name.broker.plain.sasl.server.callback.handler.class=com.example.H\n"
        ))
        .unwrap();
        assert!(c.ignored_keys.is_empty(), "{:?}", c.ignored_keys);
    }

    /// The prefixed SASL keys of a listener of this node are its keys, not unknown ones; a
    /// misspelt one is warned about.
    #[test]
    fn prefixed_sasl_keys_are_known_and_typos_are_not() {
        let c = parse(&format!(
            "{}listener.name.controller.sasl.enabled.mechanisms=PLAIN\n\
             listener.name.controller.sasl.server.max.receive.size=1000\n\
             listener.name.controller.connections.max.reauth.ms=1000\n\
             listener.name.other.sasl.enabled.mechanisms=GSSAPI\n",
            sasl_plaintext()
        ))
        .unwrap();
        assert!(c.ignored_keys.is_empty(), "{:?}", c.ignored_keys);
        assert!(c.not_honoured_keys.is_empty(), "{:?}", c.not_honoured_keys);
        let c = parse(&format!(
            "{}listener.name.controller.sasl.enabled.mechanism=PLAIN\n",
            sasl_plaintext()
        ))
        .unwrap();
        assert_eq!(
            c.ignored_keys,
            ["listener.name.controller.sasl.enabled.mechanism"]
        );
    }

    #[test]
    fn the_sasl_keys_have_kafkas_types_and_defaults() {
        use super::super::def::{ConfigType, DefaultValue};
        use super::super::keys::lookup;
        for (key, ty, default) in [
            (
                "sasl.enabled.mechanisms",
                ConfigType::List,
                DefaultValue::Text("GSSAPI"),
            ),
            (
                "sasl.mechanism.controller.protocol",
                ConfigType::String,
                DefaultValue::Text("GSSAPI"),
            ),
            (
                "connections.max.reauth.ms",
                ConfigType::Long,
                DefaultValue::Number(0),
            ),
            (
                "connection.failed.authentication.delay.ms",
                ConfigType::Int,
                DefaultValue::Number(100),
            ),
            (
                "sasl.server.max.receive.size",
                ConfigType::Int,
                DefaultValue::Number(524_288),
            ),
        ] {
            let def = lookup(key).unwrap_or_else(|| panic!("{key}"));
            assert_eq!((def.ty, def.default), (ty, default), "{key}");
        }
    }
}
