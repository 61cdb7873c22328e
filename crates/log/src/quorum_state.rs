//! `quorum-state`: the persisted election state, byte-compatible with Kafka's
//! `FileQuorumStateStore` (`QuorumStateData` JSON plus `data_version`).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use kraftwerk_protocol::kafka_uuid::{kafka_uuid_from_string, kafka_uuid_to_string};
use kraftwerk_raft::{ElectionState, LogError, QuorumStateStore};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::error::StorageError;
use crate::fs::{tmp_path, Dir, Fs, RealFs};

/// File name in the partition directory (Kafka `FileQuorumStateStore.DEFAULT_FILE_NAME`).
pub const QUORUM_STATE_FILE: &str = "quorum-state";

/// The election-state file, as Kafka's `FileQuorumStateStore`.
///
/// Writes one line of JSON with no trailing newline, via `quorum-state.tmp` → fsync → rename →
/// fsync of the directory, in the `data_version` that matches the kraft.version in force
/// (Kafka `KRaftVersion.quorumStateVersion`):
///
/// - kraft.version 0 (static voters), data_version 0:
///   `{"clusterId":"","leaderId":L,"leaderEpoch":E,"votedId":V,"appliedOffset":0,"currentVoters":[{"voterId":N},...],"data_version":0}`
/// - kraft.version 1 (KIP-853), data_version 1:
///   `{"leaderId":L,"leaderEpoch":E,"votedId":V,"votedDirectoryId":"<base64url uuid>","data_version":1}`
///
/// `-1` stands for "no leader" / "no vote", the zero uuid for "no directory id". Reading accepts
/// both versions, keys in any order, unknown keys, and both `leaderId` and `votedId` set (Kafka
/// 4.x followers keep their vote); a missing mandatory key is an error naming it.
///
/// A failed write is an error naming the file (the `.tmp` file or the directory): the caller
/// (the Raft core) then sends nothing that depends on the state, so no vote is granted that is
/// not on disk. The directory is opened at the first write and kept open, so later writes open
/// only the `.tmp` file.
#[derive(Clone, Debug)]
pub struct FileQuorumStateStore {
    path: PathBuf,
    kraft_version: u8,
    fs: Arc<dyn Fs>,
    dir: OnceLock<Dir>,
}

impl FileQuorumStateStore {
    /// A store at `path` (normally `<partition dir>/quorum-state`) that writes data_version 0,
    /// as for kraft.version 0.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self::with_fs(path, Arc::new(RealFs))
    }

    /// A store on the file system `fs` (tests put a faulty layer there).
    pub fn with_fs(path: impl Into<PathBuf>, fs: Arc<dyn Fs>) -> Self {
        FileQuorumStateStore {
            path: path.into(),
            kraft_version: 0,
            fs,
            dir: OnceLock::new(),
        }
    }

    /// The directory of the file, opened once.
    fn dir(&self) -> Result<&Dir, StorageError> {
        if let Some(dir) = self.dir.get() {
            return Ok(dir);
        }
        let parent = self.path.parent().unwrap_or(Path::new("."));
        let dir = Dir::open(Arc::clone(&self.fs), parent)?;
        Ok(self.dir.get_or_init(|| dir))
    }

    /// A store that writes the data_version of `kraft_version` (0 or 1; panics otherwise).
    pub fn with_kraft_version(path: impl Into<PathBuf>, kraft_version: u8) -> Self {
        let mut store = Self::new(path);
        store.set_kraft_version(kraft_version);
        store
    }

    /// Switches the data_version of later writes, when the kraft.version feature changes.
    /// Panics for versions other than 0 and 1 (Kafka: "doesn't handle supported version").
    pub fn set_kraft_version(&mut self, kraft_version: u8) {
        assert!(
            kraft_version <= 1,
            "quorum-state has no data_version for kraft.version {kraft_version}"
        );
        self.kraft_version = kraft_version;
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Deletes the file and any leftover `.tmp` (Kafka `FileQuorumStateStore.clear`).
    pub fn clear(&self) -> Result<(), StorageError> {
        let dir = self.dir()?;
        dir.remove_if_exists(&tmp_path(&self.path))?;
        dir.remove_if_exists(&self.path)?;
        Ok(())
    }

    /// Reads the file, `None` if it does not exist.
    ///
    /// Errors: [`StorageError::Format`] for an empty file, JSON that is not an object,
    /// a missing or unsupported `data_version`, or a missing or mistyped mandatory key.
    pub fn load(&self) -> Result<Option<ElectionState>, StorageError> {
        let dir = match self.dir() {
            Ok(dir) => dir,
            // No directory, so no file: nothing was ever written.
            Err(StorageError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        let Some(bytes) = dir.read_if_exists(&self.path)? else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&bytes);
        parse(&text)
            .map(Some)
            .map_err(|reason| StorageError::Format {
                path: self.path.clone(),
                reason,
            })
    }

    /// Writes `state` durably in this store's data_version.
    pub fn store(&self, state: &ElectionState) -> Result<(), StorageError> {
        self.dir()?
            .write_atomic(&self.path, encode(state, self.kraft_version).as_bytes())
    }
}

impl QuorumStateStore for FileQuorumStateStore {
    fn read(&self) -> Result<Option<ElectionState>, LogError> {
        Ok(self.load()?)
    }

    fn write(&mut self, state: &ElectionState) -> Result<(), LogError> {
        Ok(self.store(state)?)
    }

    fn set_kraft_version(&mut self, kraft_version: i16) {
        // The Raft core only reports levels it accepted from the log (0 or 1).
        FileQuorumStateStore::set_kraft_version(self, kraft_version.clamp(0, 1) as u8);
    }
}

/// The file contents for `state` at the data_version of `kraft_version`, keys in the order
/// Kafka's generated `QuorumStateDataJsonConverter` writes them.
pub fn encode(state: &ElectionState, kraft_version: u8) -> String {
    let leader_id = state.leader_id.unwrap_or(-1);
    let voted_id = state.voted_id.unwrap_or(-1);
    match kraft_version {
        0 => {
            let voters: Vec<String> = state
                .voters
                .iter()
                .map(|v| format!("{{\"voterId\":{v}}}"))
                .collect();
            format!(
                "{{\"clusterId\":\"\",\"leaderId\":{leader_id},\"leaderEpoch\":{},\"votedId\":{voted_id},\"appliedOffset\":0,\"currentVoters\":[{}],\"data_version\":0}}",
                state.epoch,
                voters.join(",")
            )
        }
        1 => {
            let directory = state.voted_directory_id.unwrap_or(Uuid::nil());
            format!(
                "{{\"leaderId\":{leader_id},\"leaderEpoch\":{},\"votedId\":{voted_id},\"votedDirectoryId\":\"{}\",\"data_version\":1}}",
                state.epoch,
                kafka_uuid_to_string(directory)
            )
        }
        other => panic!("quorum-state has no data_version for kraft.version {other}"),
    }
}

/// Parses the first line of a `quorum-state` file (Kafka reads only that line).
pub fn parse(text: &str) -> Result<ElectionState, String> {
    let line = text.lines().next().ok_or("file ended prematurely")?;
    let value: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
    let Value::Object(object) = value else {
        return Err(format!("{line} is not a JSON object"));
    };
    let data_version = object.get("data_version").ok_or("missing data_version")?;
    let data_version = int(data_version, "data_version")?;
    if !(0..=1).contains(&data_version) {
        return Err(format!(
            "data_version ({data_version}) is not within the min (0) and max (1) supported version"
        ));
    }
    let field = |name: &str| mandatory(&object, name, data_version);
    let leader_id = int(field("leaderId")?, "leaderId")?;
    let epoch = int(field("leaderEpoch")?, "leaderEpoch")?;
    let voted_id = int(field("votedId")?, "votedId")?;
    let mut state = ElectionState {
        epoch,
        leader_id: (leader_id != -1).then_some(leader_id),
        voted_id: (voted_id != -1).then_some(voted_id),
        voted_directory_id: None,
        voters: Vec::new(),
    };
    if data_version == 0 {
        match field("clusterId")? {
            Value::String(_) => {}
            other => return Err(format!("clusterId must be a string, found {other}")),
        }
        int64(field("appliedOffset")?, "appliedOffset")?;
        match field("currentVoters")? {
            // Java's converter accepts null here, then fails on it (NullPointerException).
            Value::Array(voters) => {
                for voter in voters {
                    let id = voter
                        .get("voterId")
                        .ok_or("currentVoters entry: missing voterId")?;
                    state.voters.push(int(id, "voterId")?);
                }
            }
            other => return Err(format!("currentVoters must be an array, found {other}")),
        }
    } else {
        let Value::String(encoded) = field("votedDirectoryId")? else {
            return Err("votedDirectoryId must be a string".into());
        };
        let uuid = kafka_uuid_from_string(encoded)
            .map_err(|e| format!("votedDirectoryId {encoded:?}: {e}"))?;
        state.voted_directory_id = (!uuid.is_nil()).then_some(uuid);
    }
    Ok(state)
}

fn mandatory<'a>(
    object: &'a Map<String, Value>,
    name: &str,
    version: i32,
) -> Result<&'a Value, String> {
    object
        .get(name)
        .ok_or_else(|| format!("QuorumStateData: unable to locate field '{name}', which is mandatory in version {version}"))
}

/// A JSON integer that fits in 32 bits. Kafka's converter rejects strings, fractions and
/// anything else, and so do we.
fn int(value: &Value, name: &str) -> Result<i32, String> {
    let wide = int64(value, name)?;
    i32::try_from(wide).map_err(|_| format!("{name}: {wide} does not fit in 32 bits"))
}

fn int64(value: &Value, name: &str) -> Result<i64, String> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| format!("{name}: {n} is not an integer")),
        other => Err(format!("{name}: expected an integer, found {other}")),
    }
}

#[cfg(test)]
mod tests;
