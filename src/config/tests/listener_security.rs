//! Listener security keys (SSL, SASL, inline PEM), advertised listeners, delegation-token
//! secrets, the effective-values block and multiple controller listeners, as
//! `from_properties` reads them.

use super::*;

/// An SSL controller listener (Kafka's keys, the `listener.name.<l>.` form winning), a SASL
/// listener without its mechanisms refused with its own message, the keys Kafka has that
/// kraftwerk cannot honour refused in either form.
#[test]
fn ssl_listener_keys_and_listener_prefix() {
    let ssl = format!(
        "{MINIMAL}listener.security.protocol.map=CONTROLLER:SSL\n\
         ssl.keystore.type=PKCS12\nssl.keystore.location=/plain.p12\nssl.keystore.password=p\n\
         listener.name.controller.ssl.keystore.location=/prefixed.p12\n\
         ssl.truststore.type=PKCS12\nssl.truststore.location=/trust.p12\n\
         ssl.truststore.password=t\nlistener.name.controller.ssl.client.auth=required\n\
         ssl.endpoint.identification.algorithm=\n"
    );
    let c = parse(&ssl).unwrap();
    assert_eq!(
        c.controller_listener().security_protocol,
        SecurityProtocol::Ssl
    );
    let tls = c.controller_tls().unwrap();
    assert_eq!(
        tls.settings.keystore,
        Some(kraftwerk_tls::KeyStoreSource::Pkcs12 {
            path: PathBuf::from("/prefixed.p12"),
            password: "p".into(),
            key_password: None,
            named_jks: false,
        })
    );
    assert_eq!(
        tls.settings.client_auth,
        kraftwerk_tls::ClientAuth::Required
    );
    assert!(!tls.settings.endpoint_identification);
    assert_eq!(tls.principal_mapping_rules, "DEFAULT");
    assert!(c.ignored_keys.is_empty(), "{:?}", c.ignored_keys);
    // A prefix for a listener this node does not have changes nothing, as in Kafka (a
    // broker listener's override in a shared file).
    let c = parse(&format!("{ssl}listener.name.other.ssl.client.auth=none\n")).unwrap();
    assert!(c.ignored_keys.is_empty(), "{:?}", c.ignored_keys);
    // A prefixed value is checked like the plain key, and named as written.
    let err = parse(&format!(
        "{ssl}listener.name.controller.ssl.client.auth=always\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("listener.name.controller.ssl.client.auth"),
        "{err}"
    );
    let err = parse(&format!(
        "{ssl}listener.name.controller.ssl.provider=SunJSSE\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("listener.name.controller.ssl.provider") && err.contains("rustls"),
        "{err}"
    );
    // No key store: refused at parse time, naming the keys to set.
    let err = parse(&format!(
        "{MINIMAL}listener.security.protocol.map=CONTROLLER:SSL\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(err.contains("ssl.keystore.location"), "{err}");
    // A PKCS12 store without its password, as Kafka refuses it.
    let err = parse(&ssl.replace("ssl.keystore.password=p\n", ""))
        .unwrap_err()
        .to_string();
    assert!(err.contains("key store password is not specified"), "{err}");
    // SASL is served (sasl.rs), but not with Kafka's default mechanism, GSSAPI.
    let sasl_plaintext =
        format!("{MINIMAL}listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT\n");
    for file in [
        ssl.replace("CONTROLLER:SSL", "CONTROLLER:SASL_SSL"),
        sasl_plaintext,
    ] {
        let err = parse(&file).unwrap_err().to_string();
        assert!(
            err.contains("sasl.enabled.mechanisms") && err.contains("GSSAPI"),
            "{err}"
        );
    }
    // A PLAINTEXT listener has no TLS, and its ssl.* keys are accepted as Kafka accepts them.
    let c = parse(&format!("{MINIMAL}ssl.keystore.location=/x.p12\n")).unwrap();
    assert!(c.controller_tls().is_none());
    assert!(c.ignored_keys.is_empty() && c.not_honoured_keys.is_empty());
}

/// Inline PEM key stores and trust stores (`ssl.keystore.key`, `ssl.truststore.certificates`).
#[test]
fn ssl_inline_pem_stores() {
    let c = parse(&format!(
        "{MINIMAL}listener.security.protocol.map=CONTROLLER:SSL\nssl.keystore.type=PEM\n\
         ssl.keystore.key=KEY\nssl.keystore.certificate.chain=CHAIN\nssl.truststore.type=PEM\n\
         ssl.truststore.certificates=CERTS\n"
    ))
    .unwrap();
    let tls = c.controller_tls().unwrap();
    assert_eq!(
        tls.settings.keystore,
        Some(kraftwerk_tls::KeyStoreSource::PemInline {
            chain: "CHAIN".into(),
            key: "KEY".into(),
            key_password: None
        })
    );
    assert_eq!(
        tls.settings.truststore,
        kraftwerk_tls::TrustStoreSource::PemInline {
            certificates: "CERTS".into()
        }
    );
    let err = parse(&format!(
        "{MINIMAL}listener.security.protocol.map=CONTROLLER:SSL\nssl.keystore.location=/a.p12\n\
         ssl.keystore.password=p\nssl.keystore.key=KEY\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(err.contains("PEM"), "{err}");
}

/// A dynamic controller that binds every interface (`0.0.0.0`, as in containers) and
/// advertises a routable name: its voter entry and registration carry the advertised one;
/// without `advertised.listeners` the same `listeners` is refused, as Kafka refuses it.
#[test]
fn a_dynamic_controller_binds_0_0_0_0_and_advertises_its_advertised_listener() {
    let base = "process.roles=controller\nnode.id=4\n\
                controller.quorum.bootstrap.servers=ctrl-1.example.com:9093\n\
                listeners=CONTROLLER://0.0.0.0:9093\ncontroller.listener.names=CONTROLLER\n\
                log.dirs=/var/lib/kraftwerk\n";
    let err = parse(base).unwrap_err().to_string();
    assert!(err.contains("0.0.0.0"), "{err}");
    let config = parse(&format!(
        "{base}advertised.listeners=CONTROLLER://ctrl-4.example.com:19093\n"
    ))
    .unwrap();
    assert_eq!(
        config.controller_listener().host,
        "0.0.0.0",
        "binds every interface"
    );
    assert_eq!(
        config.registration_endpoint(),
        Some(("ctrl-4.example.com".to_owned(), 19093))
    );
    assert!(
        config.not_honoured_keys.is_empty(),
        "{:?}",
        config.not_honoured_keys
    );
}

#[test]
fn a_refused_secret_is_not_echoed() {
    // A secret with an invalid value of another key in the file: the error names only that.
    let file = format!(
        "{TWO_LISTENERS}delegation.token.secret.key=very-secret-token-key\n\
         delegation.token.master.key=other-secret-token-key\n\
         delegation.token.expiry.time.ms=0\n"
    );
    let err = parse(&file).unwrap_err().to_string();
    assert!(err.contains("delegation.token.expiry.time.ms"), "{err}");
    assert!(err.contains("Value must be at least 1"), "{err}");
    assert!(!err.contains("very-secret-token-key"), "{err}");
    let err = super::error::invalid("delegation.token.master.key", "other-secret-token-key", "x")
        .to_string();
    assert!(
        err.contains("[hidden]") && !err.contains("other-secret"),
        "{err}"
    );
}

#[test]
fn delegation_tokens_take_the_secret_then_the_deprecated_master_key() {
    let settings = |extra: &str| {
        parse(&format!("{TWO_LISTENERS}{extra}"))
            .unwrap()
            .delegation_tokens
    };
    assert_eq!(settings(""), None);
    assert_eq!(settings("delegation.token.secret.key=\n"), None);
    let both =
        settings("delegation.token.secret.key=new-key\ndelegation.token.master.key=old-key\n")
            .unwrap();
    assert_eq!(both.secret_key, "new-key");
    let old = settings("delegation.token.master.key=old-key\n").unwrap();
    assert_eq!(old.secret_key, "old-key");
    // Kafka's defaults: 7 days, 1 day, 1 hour.
    assert_eq!(
        (
            old.max_lifetime_ms,
            old.expiry_time_ms,
            old.expiry_check_interval_ms
        ),
        (604_800_000, 86_400_000, 3_600_000)
    );
    let set = settings(
        "delegation.token.secret.key=k\ndelegation.token.max.lifetime.ms=100\n\
         delegation.token.expiry.time.ms=50\ndelegation.token.expiry.check.interval.ms=10\n",
    )
    .unwrap();
    assert_eq!(
        (
            set.max_lifetime_ms,
            set.expiry_time_ms,
            set.expiry_check_interval_ms
        ),
        (100, 50, 10)
    );
    for key in [
        "delegation.token.max.lifetime.ms",
        "delegation.token.expiry.time.ms",
        "delegation.token.expiry.check.interval.ms",
    ] {
        let err = parse(&format!("{TWO_LISTENERS}{key}=0\n"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(key) && err.contains("at least 1"), "{err}");
    }
    // The secret never shows in the values block.
    let block = parse(&format!(
        "{TWO_LISTENERS}delegation.token.secret.key=top-secret-key\n"
    ))
    .unwrap()
    .values_block();
    assert!(
        block.contains("delegation.token.secret.key = [hidden]"),
        "{block}"
    );
    assert!(!block.contains("top-secret-key"), "{block}");
}

#[test]
fn the_values_block_lists_every_key_with_its_effective_value_and_hides_secrets() {
    let file = format!(
        "{TWO_LISTENERS}delete.topic.enable=false\n\
         listener.security.protocol.map=CONTROLLER:PLAINTEXT,OTHER:PLAINTEXT\n\
         ssl.keystore.password=do-not-print-me\n"
    );
    let block = parse(&file).unwrap().values_block();
    let mut lines = block.lines();
    assert_eq!(lines.next(), Some("KafkaConfig values: "));
    let rest: Vec<&str> = lines.collect();
    assert_eq!(rest.len(), CONFIG_DEF.len(), "{block}");
    let mut sorted = rest.clone();
    sorted.sort();
    assert_eq!(rest, sorted, "sorted by key");
    assert!(rest.contains(&"\tdelete.topic.enable = false"), "{block}");
    assert!(rest.contains(&"\tnode.id = 1"), "{block}");
    assert!(
        rest.contains(&"\tmetadata.log.segment.ms = 604800000"),
        "a default: {block}"
    );
    assert!(
        rest.contains(&"\tssl.keystore.password = [hidden]"),
        "{block}"
    );
    assert!(!block.contains("do-not-print-me"), "{block}");
}

/// `controller.listener.names=CONTROLLER,CONTROLLER2`: the server is handed both listeners,
/// in that order, each with its own protocol and `listener.name.<l>.ssl.*` settings; the Raft
/// client keeps the first's; the registration names both.
#[test]
fn every_controller_listener_is_served_with_its_own_protocol_and_tls() {
    let c = parse(
        "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@ctrl-1:9093\n\
         listeners=CONTROLLER2://:9094,CONTROLLER://:9093\n\
         controller.listener.names=CONTROLLER,CONTROLLER2\n\
         listener.security.protocol.map=CONTROLLER:SSL,CONTROLLER2:PLAINTEXT\n\
         listener.name.controller.ssl.keystore.type=PKCS12\n\
         listener.name.controller.ssl.keystore.location=/ctrl.p12\n\
         listener.name.controller.ssl.keystore.password=p\n\
         listener.name.controller.ssl.truststore.location=/trust.p12\n",
    )
    .unwrap();
    let formatted = FormattedDir {
        cluster_id: "MkU3OEVBNTcwNTJENDM2Qg".to_owned(),
        node_id: 1,
        directory_id: Uuid::nil(),
        bootstrap: BootstrapMetadata::from_version(MetadataVersion::LATEST_PRODUCTION, "test"),
    };
    let server = c.server_config(&formatted);
    let served: Vec<(&str, u16, bool)> = server
        .listeners
        .iter()
        .map(|l| (l.name.as_str(), l.port, l.tls.is_some()))
        .collect();
    assert_eq!(
        served,
        [("CONTROLLER", 9093, true), ("CONTROLLER2", 9094, false)]
    );
    let tls = server.listeners[0].tls.as_ref().unwrap();
    assert_eq!(
        tls.settings.keystore,
        Some(kraftwerk_tls::KeyStoreSource::Pkcs12 {
            path: PathBuf::from("/ctrl.p12"),
            password: "p".into(),
            key_password: None,
            named_jks: false,
        })
    );
    assert_eq!(c.controller_tls(), Some(tls));
    assert_eq!(server.raft.listener_name, "CONTROLLER");
    let registered: Vec<(&str, &str, u16, i16)> = server
        .registration_endpoints
        .iter()
        .map(|e| {
            (
                e.listener_name.as_str(),
                e.host.as_str(),
                e.port,
                e.security_protocol,
            )
        })
        .collect();
    assert_eq!(
        registered,
        [
            ("CONTROLLER", "ctrl-1", 9093, 1),
            ("CONTROLLER2", "ctrl-1", 9094, 0)
        ]
    );

    // Both SSL: each listener's prefixed keys apply to it alone.
    let c = parse(&format!(
        "{TLS_TWO_LISTENERS}listener.name.other.ssl.keystore.location=/other.p12\n"
    ))
    .unwrap();
    let server = c.server_config(&formatted);
    let stores: Vec<Option<PathBuf>> = server
        .listeners
        .iter()
        .map(|l| match &l.tls.as_ref().unwrap().settings.keystore {
            Some(kraftwerk_tls::KeyStoreSource::Pkcs12 { path, .. }) => Some(path.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        stores,
        [
            Some(PathBuf::from("/etc/kafka/node.p12")),
            Some(PathBuf::from("/other.p12"))
        ]
    );
    // An SSL second listener without a key store is refused, naming its listener.
    let err = parse(
        "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@ctrl-1:9093\n\
         listeners=CONTROLLER://:9093,CONTROLLER2://:9094\n\
         controller.listener.names=CONTROLLER,CONTROLLER2\n\
         listener.security.protocol.map=CONTROLLER:PLAINTEXT,CONTROLLER2:SSL\n",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("CONTROLLER2"), "{err}");
}
