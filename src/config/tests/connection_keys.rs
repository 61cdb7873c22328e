//! The connection keys (`max.connections*`, `connections.max.idle.ms`) as Kafka reads them,
//! and what reaches the listeners.

use super::*;

/// `max.connections*` and `connections.max.idle.ms` as Kafka's `KafkaConfig` reads and checks
/// them, and what reaches the listener.
#[test]
fn connection_keys() {
    let c = parse(&format!(
        "{MINIMAL}max.connections=100\nmax.connections.per.ip=0\n\
         max.connections.per.ip.overrides=broker-1:10, 127.0.0.1:-1\nconnections.max.idle.ms=-1\n"
    ))
    .unwrap();
    assert_eq!(
        c.connections,
        ConnectionSettings {
            max_connections: 100,
            max_connections_per_ip: 0,
            max_connections_per_ip_overrides: vec![
                ("broker-1".to_owned(), 10),
                ("127.0.0.1".to_owned(), -1)
            ],
            connections_max_idle_ms: -1,
            listener_max_connections: Default::default(),
        }
    );
    let limits = c.limit_settings();
    assert_eq!(
        (limits.max_connections, limits.max_connections_per_ip),
        (100, 0)
    );
    assert_eq!(
        limits.per_ip_overrides,
        vec![("broker-1".to_owned(), 10), ("127.0.0.1".to_owned(), 0)]
    );
    let e = parse(&format!("{MINIMAL}max.connections.per.ip=0\n")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides \
         property is set."
    );
    let e = parse(&format!("{MINIMAL}max.connections.per.ip.overrides=host\n")).unwrap_err();
    assert!(
        matches!(&e, ConfigError::Invalid { key, .. } if *key == "max.connections.per.ip.overrides"),
        "{e}"
    );
    let e = parse(&format!("{MINIMAL}max.connections=-1\n")).unwrap_err();
    assert!(
        matches!(&e, ConfigError::Invalid { key, .. } if *key == "max.connections"),
        "{e}"
    );
}

/// `listener.name.<l>.max.connections` caps that listener (Kafka's per-listener
/// `ConnectionQuotas` limit): read for the controller listeners, handed to the listener that
/// carries the name, and refused when it is not an INT ≥ 0.
#[test]
fn listener_max_connections_reaches_its_listener() {
    let two = "process.roles=controller\nnode.id=1\n\
               controller.quorum.voters=1@localhost:9093\n\
               listeners=CONTROLLER://localhost:9093,SECOND://localhost:9094\n\
               controller.listener.names=CONTROLLER,SECOND\n\
               listener.security.protocol.map=CONTROLLER:PLAINTEXT,SECOND:PLAINTEXT\n";
    let c = parse(&format!(
        "{two}max.connections=100\nlistener.name.second.max.connections=7\n"
    ))
    .unwrap();
    assert_eq!(
        c.connections.listener_max_connections,
        [("SECOND".to_owned(), 7)].into()
    );
    let formatted = kraftwerk_log::formatted::FormattedDir {
        cluster_id: "MkU3OEVBNTcwNTJENDM2Qg".to_owned(),
        node_id: 1,
        directory_id: Uuid::nil(),
        bootstrap: BootstrapMetadata::from_version(MetadataVersion::LATEST_PRODUCTION, "test"),
    };
    let listeners = c.server_config(&formatted).listeners;
    let caps: Vec<(&str, Option<usize>)> = listeners
        .iter()
        .map(|l| (l.name.as_str(), l.max_connections))
        .collect();
    assert_eq!(caps, vec![("CONTROLLER", None), ("SECOND", Some(7))]);
    assert_eq!(
        c.limit_settings().max_connections,
        100,
        "the node-wide cap stays"
    );
    for bad in ["-1", "many"] {
        let e = parse(&format!(
            "{two}listener.name.controller.max.connections={bad}\n"
        ))
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("listener.name.controller.max.connections"),
            "{e}"
        );
    }
}
