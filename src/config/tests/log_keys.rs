//! The metadata log keys as they reach [`kraftwerk_log::LogConfig`].

use kraftwerk_log::formatted::FormattedDir;
use kraftwerk_log::{LogConfig, DEFAULT_SEGMENT_MS};

use super::*;

fn log_config(text: &str) -> LogConfig {
    let formatted = FormattedDir {
        cluster_id: "MkU3OEVBNTcwNTJENDM2Qg".to_owned(),
        node_id: 1,
        directory_id: Uuid::nil(),
        bootstrap: BootstrapMetadata::from_version(MetadataVersion::LATEST_PRODUCTION, "test"),
    };
    parse(text).unwrap().server_config(&formatted).log
}

#[test]
fn metadata_log_segment_ms_reaches_the_log_config() {
    assert_eq!(log_config(MINIMAL).segment_ms, DEFAULT_SEGMENT_MS);
    assert_eq!(
        DEFAULT_SEGMENT_MS, 604_800_000,
        "Kafka's LogConfig.DEFAULT_SEGMENT_MS"
    );
    let c = parse(&format!("{MINIMAL}metadata.log.segment.ms=3600000\n")).unwrap();
    assert!(c.not_honoured_keys.is_empty(), "{:?}", c.not_honoured_keys);
    assert_eq!(
        log_config(&format!("{MINIMAL}metadata.log.segment.ms=3600000\n")).segment_ms,
        3_600_000
    );
    // A LONG: beyond i32, as Kafka accepts it.
    assert_eq!(
        log_config(&format!("{MINIMAL}metadata.log.segment.ms=9999999999\n")).segment_ms,
        9_999_999_999
    );
    // Kafka's KafkaConfig has no validator for it; its metadata log refuses a value below 1
    // when it opens (segment.ms is atLeast(1)), and so does kraftwerk's (see kraftwerk_log's
    // time_rolling tests). Not a number is refused here, naming the key.
    assert_eq!(
        log_config(&format!("{MINIMAL}metadata.log.segment.ms=0\n")).segment_ms,
        0
    );
    let err = parse(&format!("{MINIMAL}metadata.log.segment.ms=soon\n")).unwrap_err();
    assert!(err.to_string().contains("metadata.log.segment.ms"), "{err}");
}
