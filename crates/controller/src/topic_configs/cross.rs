//! The checks across one topic's configs, after each value passed its own validator (Kafka
//! 4.1.2's `LogConfig.validateValues` and `validateTopicLogConfigValues`): compaction lags, and
//! the tiered-storage rules. Their messages are Kafka's; the caller answers INVALID_CONFIG.

use std::collections::BTreeMap;

use super::validate::{Parsed, TopicConfigContext};

fn long(values: &BTreeMap<&str, Parsed>, name: &str) -> i64 {
    match values.get(name) {
        Some(Parsed::Long(v)) => *v,
        _ => unreachable!("{name} is a LONG config with a default"),
    }
}

fn boolean(values: &BTreeMap<&str, Parsed>, name: &str) -> bool {
    matches!(values.get(name), Some(Parsed::Boolean(true)))
}

/// `ConfigException(name, value, message)`'s text.
fn invalid(name: &str, value: i64, reason: &str) -> String {
    format!("Invalid value {value} for configuration {name}: {reason}")
}

/// `validateValues`, then the tiered-storage checks of `validateTopicLogConfigValues`.
pub(super) fn check_across(
    values: &BTreeMap<&str, Parsed>,
    context: &TopicConfigContext,
) -> Result<(), String> {
    let (min_lag, max_lag) = (
        long(values, "min.compaction.lag.ms"),
        long(values, "max.compaction.lag.ms"),
    );
    if min_lag > max_lag {
        return Err(format!(
            "conflict topic config setting min.compaction.lag.ms ({min_lag}) > max.compaction.lag.ms ({max_lag})"
        ));
    }
    if boolean(values, "remote.storage.enable") {
        remote_storage_enabled(values, context.remote_storage_system_enable)
    } else if context.was_remote_storage_enabled && !boolean(values, "remote.log.delete.on.disable")
    {
        // `validateTurningOffRemoteStorageWithDelete`.
        Err("It is invalid to disable remote storage without deleting remote data. If you want to keep the \
             remote data and turn to read only, please set `remote.storage.enable=true,remote.log.copy.disable=true`. \
             If you want to disable remote storage and delete all remote data, please set \
             `remote.storage.enable=false,remote.log.delete.on.disable=true`."
            .to_owned())
    } else {
        Ok(())
    }
}

/// The rules for a topic with `remote.storage.enable=true`.
fn remote_storage_enabled(
    values: &BTreeMap<&str, Parsed>,
    system_enabled: bool,
) -> Result<(), String> {
    if !system_enabled {
        // `validateRemoteStorageOnlyIfSystemEnabled`.
        return Err("Tiered Storage functionality is disabled in the broker. Topic cannot be configured with \
                    remote log storage."
            .to_owned());
    }
    // `validateNoRemoteStorageForCompactedTopic`: `List.toString().contains("compact")`.
    let policy = values
        .get("cleanup.policy")
        .map(Parsed::java_text)
        .unwrap_or_default();
    if policy.to_lowercase().contains("compact") {
        return Err("Remote log storage is unsupported for the compacted topics".to_owned());
    }
    local_retention(
        "bytes",
        long(values, "retention.bytes"),
        long(values, "local.retention.bytes"),
        -1,
    )?;
    local_retention(
        "ms",
        long(values, "retention.ms"),
        long(values, "local.retention.ms"),
        -1,
    )?;
    // `validateRetentionConfigsWhenRemoteCopyDisabled`.
    if boolean(values, "remote.log.copy.disable") {
        for unit in ["bytes", "ms"] {
            let total = long(values, &format!("retention.{unit}"));
            let local = long(values, &format!("local.retention.{unit}"));
            if local != -2 && local != total {
                return Err(format!(
                    "When `remote.log.copy.disable` is set to true, the `local.retention.{unit}` and `retention.{unit}` \
                     must be set to the identical value because there will be no more logs copied to the remote storage."
                ));
            }
        }
    }
    Ok(())
}

/// `validateRemoteStorageRetentionSize` / `validateRemoteStorageRetentionTime`: with a bounded
/// `retention.<unit>`, a set `local.retention.<unit>` must be bounded and not larger.
fn local_retention(unit: &str, total: i64, local: i64, unbounded: i64) -> Result<(), String> {
    let bounded = if unit == "bytes" {
        total > unbounded
    } else {
        total != unbounded
    };
    if !bounded || local == -2 {
        return Ok(());
    }
    let name = format!("local.retention.{unit}");
    if local == -1 {
        return Err(invalid(
            &name,
            local,
            &format!("Value must not be -1 as retention.{unit} value is set as {total}."),
        ));
    }
    if local > total {
        return Err(invalid(
            &name,
            local,
            &format!("Value must not be more than retention.{unit} property value: {total}"),
        ));
    }
    Ok(())
}
