//! Log directory seeds written with the log crate: segments with control and metadata batches
//! over two epochs, a snapshot, `quorum-state`, and (with tiny segments) several segment files.

use std::path::Path;

use kraftwerk_log::{
    FileQuorumStateStore, LogConfig, SegmentLog, METADATA_PARTITION_DIR, QUORUM_STATE_FILE,
};
use kraftwerk_raft::testing::{snapshot_bytes, write_snapshot};
use kraftwerk_raft::{ElectionState, OffsetAndEpoch, ReplicatedLog};
use kraftwerk_records::batch::BatchBuilder;
use kraftwerk_records::control::{control_batch, ControlRecord};
use kraftwerk_records::metadata::{ApiMessageAndVersion, FeatureLevelRecord, NoOpRecord};

use crate::layout;

/// Appends a LeaderChange and `batches` batches of metadata records as leader of `epoch`.
fn append_epoch(log: &mut SegmentLog, epoch: i32, batches: usize) {
    let start = log.end_offset().offset;
    let leader_change = control_batch(
        start,
        epoch,
        1_000,
        &[ControlRecord::leader_change(1, &[1, 2, 3], &[1, 2])],
    );
    log.append_as_leader(&leader_change, epoch)
        .expect("append a LeaderChange");
    for b in 0..batches {
        let mut builder = BatchBuilder::new(log.end_offset().offset, epoch, 1_000 + b as i64);
        let feature = ApiMessageAndVersion::new(
            FeatureLevelRecord {
                name: "metadata.version".into(),
                feature_level: 27,
                ..Default::default()
            },
            0,
        );
        builder.append(None, &feature.encode().expect("encodes"));
        builder.append(
            None,
            &ApiMessageAndVersion::new(NoOpRecord::default(), 0)
                .encode()
                .expect("encodes"),
        );
        log.append_as_leader(&builder.build(), epoch)
            .expect("append metadata");
    }
    log.flush().expect("flush");
}

fn write_dir(root: &Path, config: LogConfig, snapshot: bool) {
    let mut log = SegmentLog::open(root, config).expect("open a new log");
    append_epoch(&mut log, 1, 3);
    if snapshot {
        let end = log.end_offset().offset;
        let bytes = snapshot_bytes(1, 2_000, 2, 3, 7);
        write_snapshot(&mut log, OffsetAndEpoch::new(end, 1), &bytes);
    }
    append_epoch(&mut log, 2, 2);
    log.close().expect("close");
    let store =
        FileQuorumStateStore::new(root.join(METADATA_PARTITION_DIR).join(QUORUM_STATE_FILE));
    store
        .store(&ElectionState {
            epoch: 2,
            leader_id: Some(1),
            voted_id: Some(1),
            voted_directory_id: None,
            voters: vec![1, 2, 3],
        })
        .expect("write quorum-state");
}

/// `(name, input)` pairs: directories made here, encoded as layouts.
pub fn log_dir_seeds(scratch: &Path) -> Vec<(String, Vec<u8>)> {
    let tiny = LogConfig {
        segment_bytes: 300,
        segment_min_bytes: 1,
        ..LogConfig::default()
    };
    let mut out = Vec::new();
    for (name, config, snapshot) in [
        ("made-one-segment", LogConfig::default(), false),
        ("made-snapshot", LogConfig::default(), true),
        ("made-small-segments", tiny, true),
    ] {
        let root = scratch.join(name);
        let _ = std::fs::remove_dir_all(&root);
        write_dir(&root, config, snapshot);
        let encoded =
            layout::encode_dir(&root.join(METADATA_PARTITION_DIR)).expect("encode the directory");
        out.push((name.to_owned(), encoded));
        let _ = std::fs::remove_dir_all(&root);
    }
    out
}
