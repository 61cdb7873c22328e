//! How the `recovery` target turns bytes into the files of a metadata log directory, and back
//! (so that real directories become seeds).
//!
//! The input is a sequence of entries, each `kind: u8, param: u64 (big-endian), length: u32
//! (big-endian), contents`. A length past the end of the input is cut to what is left, so every
//! input is a layout. With bit 7 of `kind` set, the CRC of every whole record batch in the
//! contents is recomputed first ([`crate::records::fix_crcs`]), so that mutations reach the
//! batch and record decoders behind the CRC check. By `(kind & 0x7f) % 6`:
//!
//! | kind | file in `__cluster_metadata-0/` | `param` |
//! |------|---------------------------------|---------|
//! | 0 | `<param, 20 digits>.log` segment | base offset |
//! | 1 | `<offset, 20 digits>-<epoch, 10 digits>.checkpoint` snapshot | offset = low 48 bits, epoch = high 16 |
//! | 2 | `quorum-state` | unused |
//! | 3 | `partition.metadata` | unused |
//! | 4 | `leader-epoch-checkpoint` | unused |
//! | 5 | any name: the contents are `name length: u8, name, data` | unused |
//!
//! A later entry for the same file replaces an earlier one. Names of kind 5 that are not one
//! plain path component (empty, `.`, `..`, containing `/` or NUL) are dropped; the names in
//! [`ROOT_FILES`] go to `metadata.log.dir` itself, where Kafka keeps them.

use std::fs;
use std::io;
use std::path::Path;

use kraftwerk_log::{LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA, QUORUM_STATE_FILE};

/// Bytes before an entry's contents: kind, param, length.
const ENTRY_HEADER_BYTES: usize = 1 + 8 + 4;

/// One file of the directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutFile {
    /// File name inside the partition directory.
    pub name: String,
    /// Contents.
    pub contents: Vec<u8>,
}

/// The files an input describes, in input order (later duplicates replace earlier ones when
/// written).
pub fn parse(mut data: &[u8]) -> Vec<LayoutFile> {
    let mut files = Vec::new();
    while data.len() >= ENTRY_HEADER_BYTES {
        let kind = data[0];
        let param = u64::from_be_bytes(data[1..9].try_into().expect("8 bytes"));
        let len = u32::from_be_bytes(data[9..13].try_into().expect("4 bytes")) as usize;
        let rest = &data[ENTRY_HEADER_BYTES..];
        let (contents, next) = rest.split_at(len.min(rest.len()));
        data = next;
        if let Some(file) = entry(kind, param, contents) {
            files.push(file);
        }
    }
    files
}

/// Bit of `kind` that asks for the batch CRCs to be fixed.
pub const FIX_CRCS: u8 = 0x80;

fn entry(kind: u8, param: u64, contents: &[u8]) -> Option<LayoutFile> {
    let (name, contents) = match (kind & !FIX_CRCS) % 6 {
        0 => (format!("{param:020}.log"), contents),
        1 => {
            let offset = param & 0xFFFF_FFFF_FFFF;
            let epoch = param >> 48;
            (format!("{offset:020}-{epoch:010}.checkpoint"), contents)
        }
        2 => (QUORUM_STATE_FILE.to_owned(), contents),
        3 => (PARTITION_METADATA.to_owned(), contents),
        4 => (LEADER_EPOCH_CHECKPOINT.to_owned(), contents),
        _ => {
            let (&name_len, rest) = contents.split_first()?;
            let (name, data) = rest.split_at((name_len as usize).min(rest.len()));
            let name = std::str::from_utf8(name).ok()?;
            if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
                return None;
            }
            (name.to_owned(), data)
        }
    };
    let mut contents = contents.to_vec();
    if kind & FIX_CRCS != 0 {
        crate::records::fix_crcs(&mut contents);
    }
    Some(LayoutFile { name, contents })
}

/// Files of `metadata.log.dir` itself rather than of the partition directory.
pub const ROOT_FILES: [&str; 2] = ["meta.properties", "bootstrap.checkpoint"];

/// Writes `files` into `metadata_log_dir` and its `partition_dir` (which must exist).
pub fn write(
    metadata_log_dir: &Path,
    partition_dir: &Path,
    files: &[LayoutFile],
) -> io::Result<()> {
    for file in files {
        let dir = if ROOT_FILES.contains(&file.name.as_str()) {
            metadata_log_dir
        } else {
            partition_dir
        };
        fs::write(dir.join(&file.name), &file.contents)?;
    }
    Ok(())
}

/// The input that lays out the regular files of `dir` (subdirectories such as the RocksDB
/// index are skipped: they are derived data). Files are in name order. Pass a partition
/// directory, or any directory holding its files and [`ROOT_FILES`].
pub fn encode_dir(dir: &Path) -> io::Result<Vec<u8>> {
    let mut names: Vec<String> = fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let contents = fs::read(dir.join(&name))?;
        encode_file(&name, &contents, &mut out);
    }
    Ok(out)
}

/// Appends the entry that writes `name` with `contents`: the dedicated kind when the name is
/// one (a segment or checkpoint name in canonical form, the fixed file names), else kind 5.
/// Segments and checkpoints ask for their CRCs to be fixed, so mutations of a seed keep them
/// valid (a no-op on the seed itself).
pub fn encode_file(name: &str, contents: &[u8], out: &mut Vec<u8>) {
    let (kind, param) = match classify(name) {
        Some(kp) => kp,
        None => {
            let mut named = vec![name.len() as u8];
            named.extend_from_slice(name.as_bytes());
            named.extend_from_slice(contents);
            push_entry(5, 0, &named, out);
            return;
        }
    };
    let kind = if kind <= 1 { kind | FIX_CRCS } else { kind };
    push_entry(kind, param, contents, out);
}

fn push_entry(kind: u8, param: u64, contents: &[u8], out: &mut Vec<u8>) {
    out.push(kind);
    out.extend_from_slice(&param.to_be_bytes());
    out.extend_from_slice(&(contents.len() as u32).to_be_bytes());
    out.extend_from_slice(contents);
}

/// `(kind, param)` for a name kinds 0–4 reproduce exactly.
fn classify(name: &str) -> Option<(u8, u64)> {
    match name {
        QUORUM_STATE_FILE => return Some((2, 0)),
        PARTITION_METADATA => return Some((3, 0)),
        LEADER_EPOCH_CHECKPOINT => return Some((4, 0)),
        _ => {}
    }
    let digits = |s: &str, n: usize| {
        (s.len() == n && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u64>().ok())
            .flatten()
    };
    if let Some(base) = name.strip_suffix(".log").and_then(|s| digits(s, 20)) {
        return Some((0, base));
    }
    let stem = name.strip_suffix(".checkpoint")?;
    let (offset, epoch) = stem.split_once('-')?;
    let (offset, epoch) = (digits(offset, 20)?, digits(epoch, 10)?);
    (offset < 1 << 48 && epoch < 1 << 16).then_some((1, offset | epoch << 48))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_files_parse_back() {
        let mut input = Vec::new();
        for (name, contents) in [
            ("00000000000000000000.log", &b"seg"[..]),
            ("00000000000000000150-0000000003.checkpoint", b"snap"),
            ("quorum-state", b"{}"),
            ("partition.metadata", b"version: 0"),
            ("leader-epoch-checkpoint", b"0\n0\n"),
            ("00000000000000000000.index", b"idx"),
        ] {
            encode_file(name, contents, &mut input);
        }
        let names: Vec<String> = parse(&input).into_iter().map(|f| f.name).collect();
        assert_eq!(
            names,
            [
                "00000000000000000000.log",
                "00000000000000000150-0000000003.checkpoint",
                "quorum-state",
                "partition.metadata",
                "leader-epoch-checkpoint",
                "00000000000000000000.index"
            ]
        );
        assert_eq!(parse(&input)[1].contents, b"snap");
    }

    #[test]
    fn any_bytes_are_a_layout_and_bad_names_are_dropped() {
        assert!(parse(&[]).is_empty());
        let mut input = vec![5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 2, b'.', b'.', 1];
        input.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff, 1]);
        let files = parse(&input);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].name, "00000000000000000007.log");
        assert_eq!(files[0].contents, vec![1]);
    }
}
