//! Keys Kafka's `KafkaConfig` defines that kraftwerk's table ([`super::keys::CONFIG_DEF`]) does
//! not: broker-only and tuning keys a copied `server.properties` keeps. Java's controller
//! accepts them without a word, and so does kraftwerk; any other key is unknown and gets a
//! warning line of its own, with the nearest known key when it looks like a typo.
//!
//! The list is `kafka_keys.txt`, written by `scripts/kafka-config-keys` from the jars of every
//! Kafka 4.x release served (`KafkaConfig.configDef().names()`).

use super::keys::CONFIG_DEF;

/// `kafka_keys.txt`: a `#` comment line, then one key per line, sorted.
const KAFKA_KEYS: &str = include_str!("kafka_keys.txt");

fn kafka_keys() -> impl Iterator<Item = &'static str> {
    KAFKA_KEYS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// True when some Kafka 4.x release defines `name` in `KafkaConfig`.
pub(crate) fn is_kafka_key(name: &str) -> bool {
    kafka_keys().any(|k| k == name)
}

/// True for a `listener.name.<listener>.<key>` override of a Kafka key (e.g. a broker
/// listener's `sasl.jaas.config`), which Kafka accepts for any listener name.
pub(crate) fn is_listener_override_of_kafka_key(name: &str) -> bool {
    name.strip_prefix("listener.name.")
        .and_then(|rest| rest.split_once('.'))
        .is_some_and(|(_, key)| {
            is_kafka_key(key)
                || CONFIG_DEF.iter().any(|k| k.name == key)
                // Mechanism-scoped forms: listener.name.<l>.<mechanism>.sasl.jaas.config.
                || key.split_once('.').is_some_and(|(_, k)| is_kafka_key(k))
        })
}

/// The known key (kraftwerk's or Kafka's) `name` most likely misspells: the same key in
/// another case or with `_`/`-` for `.`, else the nearest by Damerau–Levenshtein distance, at
/// most 1 for keys under 10 characters and 2 for longer ones. `None` when nothing is that near.
pub(crate) fn did_you_mean(name: &str) -> Option<&'static str> {
    let normalised = name.to_ascii_lowercase().replace(['_', '-'], ".");
    let candidates = || CONFIG_DEF.iter().map(|k| k.name).chain(kafka_keys());
    if let Some(k) = candidates().find(|k| *k == normalised) {
        return Some(k);
    }
    let limit = if name.len() < 10 { 1 } else { 2 };
    candidates()
        .map(|k| (strsim::damerau_levenshtein(&normalised, k), k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_holds_kafkas_keys_and_is_sorted() {
        let keys: Vec<&str> = kafka_keys().collect();
        assert!(keys.len() > 300, "{} keys", keys.len());
        assert!(
            keys.windows(2).all(|w| w[0] < w[1]),
            "sorted, no duplicates"
        );
        for k in [
            "num.io.threads",
            "log.retention.hours",
            "controller.quorum.voters",
        ] {
            assert!(is_kafka_key(k), "{k}");
        }
        assert!(!is_kafka_key("controler.quorum.voters"));
    }

    #[test]
    fn near_misses_get_the_key_they_miss() {
        assert_eq!(
            did_you_mean("controler.quorum.voters"),
            Some("controller.quorum.voters")
        );
        assert_eq!(did_you_mean("node_id"), Some("node.id"));
        assert_eq!(did_you_mean("Process.Roles"), Some("process.roles"));
        assert_eq!(
            did_you_mean("listener.security.protocl.map"),
            Some("listener.security.protocol.map")
        );
        assert_eq!(did_you_mean("my.own.setting"), None);
        assert_eq!(did_you_mean("x"), None);
    }

    #[test]
    fn listener_overrides_of_kafka_keys_are_known() {
        assert!(is_listener_override_of_kafka_key(
            "listener.name.broker.sasl.enabled.mechanisms"
        ));
        assert!(is_listener_override_of_kafka_key(
            "listener.name.broker.scram-sha-512.sasl.jaas.config"
        ));
        assert!(!is_listener_override_of_kafka_key(
            "listener.name.broker.no.such.key"
        ));
    }
}
