//! Snapshot file names, as Kafka's `Snapshots.filenameFromSnapshotId`, `Snapshots.createTempFile`
//! and `Snapshots.parse` write and read them.

use kraftwerk_raft::OffsetAndEpoch;

/// Suffix of a complete snapshot (`Snapshots.SUFFIX`).
pub const SNAPSHOT_SUFFIX: &str = ".checkpoint";
/// Suffix of a snapshot being written or fetched (`Snapshots.PARTIAL_SUFFIX`).
pub const PARTIAL_SNAPSHOT_SUFFIX: &str = ".checkpoint.part";
/// Suffix of a snapshot marked for deletion (`Snapshots.DELETE_SUFFIX`).
pub const DELETED_SNAPSHOT_SUFFIX: &str = ".checkpoint.deleted";

/// Digits of the end offset and of the epoch (`Snapshots.OFFSET_WIDTH`, `EPOCH_WIDTH`).
const OFFSET_WIDTH: usize = 20;
const EPOCH_WIDTH: usize = 10;
/// `<20 digits>-<10 digits>`.
const ID_WIDTH: usize = OFFSET_WIDTH + 1 + EPOCH_WIDTH;

/// What a snapshot file is, by its suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotFileKind {
    /// `<id>.checkpoint`: complete, read-only.
    Complete,
    /// `<id>-<unique>.checkpoint.part`: being written; a leftover after a crash.
    Partial,
    /// `<id>.checkpoint.deleted`: marked for deletion by a Java controller.
    Deleted,
}

fn id_prefix(id: OffsetAndEpoch) -> String {
    assert!(
        id.offset >= 0 && id.epoch >= 0,
        "a snapshot id has a non-negative end offset and epoch, got {}-{}",
        id.offset,
        id.epoch
    );
    format!("{:0OFFSET_WIDTH$}-{:0EPOCH_WIDTH$}", id.offset, id.epoch)
}

/// `00000000000000000042-0000000003.checkpoint` for end offset 42, epoch 3
/// (`Snapshots.snapshotPath`). Panics on a negative offset or epoch.
pub fn snapshot_file_name(id: OffsetAndEpoch) -> String {
    format!("{}{SNAPSHOT_SUFFIX}", id_prefix(id))
}

/// `<id>-<unique>.checkpoint.part`, the shape `Files.createTempFile(dir, "<id>-",
/// ".checkpoint.part")` gives Java's temporary snapshot files; `Snapshots.parse` reads only the
/// id prefix and the suffix.
pub(crate) fn partial_file_name(id: OffsetAndEpoch, unique: u64) -> String {
    format!("{}-{unique}{PARTIAL_SNAPSHOT_SUFFIX}", id_prefix(id))
}

/// Classifies a file of the partition directory.
///
/// Returns `None` for a name without a snapshot suffix (segments, indexes,
/// `leader-epoch-checkpoint`, ...). For a snapshot suffix, returns the id and kind, or why the
/// name is unusable. Java (`Snapshots.parse`) reads the end offset from the first 20 characters
/// and the epoch from characters 21..31 and throws at startup on anything else; we accept only
/// ASCII digits there, a `-` between them, and for a complete snapshot exactly the name
/// [`snapshot_file_name`] writes (Java would list a differently spelled file but could never
/// open it under its id).
pub fn parse_snapshot_file_name(
    name: &str,
) -> Option<Result<(OffsetAndEpoch, SnapshotFileKind), String>> {
    let kind = if name.ends_with(PARTIAL_SNAPSHOT_SUFFIX) {
        SnapshotFileKind::Partial
    } else if name.ends_with(DELETED_SNAPSHOT_SUFFIX) {
        SnapshotFileKind::Deleted
    } else if name.ends_with(SNAPSHOT_SUFFIX) {
        SnapshotFileKind::Complete
    } else {
        return None;
    };
    Some(parse_id(name).and_then(|id| {
        if kind == SnapshotFileKind::Complete && name != snapshot_file_name(id) {
            Err(format!(
                "a snapshot must be named {}, not {name}",
                snapshot_file_name(id)
            ))
        } else {
            Ok((id, kind))
        }
    }))
}

fn parse_id(name: &str) -> Result<OffsetAndEpoch, String> {
    let bytes = name.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range.clone())
            .filter(|d| d.iter().all(u8::is_ascii_digit))
            .map(|d| std::str::from_utf8(d).expect("ASCII digits"))
    };
    let (Some(offset), Some(b'-'), Some(epoch)) = (
        digits(0..OFFSET_WIDTH),
        bytes.get(OFFSET_WIDTH),
        digits(OFFSET_WIDTH + 1..ID_WIDTH),
    ) else {
        return Err(format!(
            "snapshot file name {name} does not start with <20-digit end offset>-<10-digit epoch>"
        ));
    };
    let offset: i64 = offset
        .parse()
        .map_err(|e| format!("end offset of {name}: {e}"))?;
    let epoch: i32 = epoch.parse().map_err(|e| format!("epoch of {name}: {e}"))?;
    Ok(OffsetAndEpoch::new(offset, epoch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_kafka() {
        let id = OffsetAndEpoch::new(42, 3);
        assert_eq!(
            snapshot_file_name(id),
            "00000000000000000042-0000000003.checkpoint"
        );
        assert_eq!(
            partial_file_name(id, 8623456712),
            "00000000000000000042-0000000003-8623456712.checkpoint.part"
        );
        assert_eq!(
            snapshot_file_name(OffsetAndEpoch::new(i64::MAX, i32::MAX)),
            "09223372036854775807-2147483647.checkpoint"
        );
    }

    #[test]
    fn parse_reads_ids_and_kinds() {
        let id = OffsetAndEpoch::new(42, 3);
        for (name, kind) in [
            (snapshot_file_name(id), SnapshotFileKind::Complete),
            (partial_file_name(id, 17), SnapshotFileKind::Partial),
            (
                "00000000000000000042-0000000003.checkpoint.deleted".to_string(),
                SnapshotFileKind::Deleted,
            ),
        ] {
            assert_eq!(
                parse_snapshot_file_name(&name),
                Some(Ok((id, kind))),
                "{name}"
            );
        }
        for other in [
            "00000000000000000042.log",
            "leader-epoch-checkpoint",
            "bootstrap.checkpoint.tmp",
            "quorum-state",
        ] {
            assert_eq!(parse_snapshot_file_name(other), None, "{other}");
        }
        for bad in [
            "bootstrap.checkpoint",
            "42-3.checkpoint",
            "0000000000000000004x-0000000003.checkpoint",
            "00000000000000000042_0000000003.checkpoint",
            "00000000000000000042-0000000003-extra.checkpoint",
            "99999999999999999999-0000000003.checkpoint",
            "00000000000000000042-9999999999.checkpoint.part",
            "é0000000000000000042-0000000003.checkpoint",
        ] {
            assert!(
                matches!(parse_snapshot_file_name(bad), Some(Err(_))),
                "{bad}: {:?}",
                parse_snapshot_file_name(bad)
            );
        }
    }

    #[test]
    #[should_panic(expected = "non-negative")]
    fn negative_ids_have_no_name() {
        snapshot_file_name(OffsetAndEpoch::new(-1, 0));
    }
}
