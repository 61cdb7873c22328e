//! Replaying inputs without AFL: every file through a target, each panic caught and classified
//! by its message and location. This is for measuring and for the corpus test only; the AFL
//! binaries never catch a panic.
//!
//! [`replay`] runs in this process (the corpus test: nothing in it aborts). [`replay_isolated`]
//! runs every input in a child process (`fuzz-tool replay-one`) under AFL's memory limit, so
//! that an abort (an allocation that fails, a stack overflow) is classified too.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// What replaying a set of inputs found.
#[derive(Debug, Default)]
pub struct Replay {
    /// Inputs run.
    pub inputs: usize,
    /// Panics by `location: first line of the message`, with the inputs that caused them.
    pub panics: BTreeMap<String, Vec<PathBuf>>,
}

impl Replay {
    /// Inputs that panicked.
    pub fn panicked(&self) -> usize {
        self.panics.values().map(Vec::len).sum()
    }
}

/// Runs `target` on every file in `paths` (directories are expanded, one level, in name order),
/// catching and classifying panics. The panic hook is replaced while it runs, so nothing is
/// printed per panic.
pub fn replay(target: fn(&[u8]), paths: &[PathBuf]) -> std::io::Result<Replay> {
    let files = expand(paths)?;
    let previous = panic::take_hook();
    panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("(non-string panic)");
        let first_line = message.lines().next().unwrap_or("");
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{location}: {first_line}")));
    }));
    let mut result = Replay::default();
    for file in files {
        let data = std::fs::read(&file)?;
        result.inputs += 1;
        if panic::catch_unwind(AssertUnwindSafe(|| target(&data))).is_err() {
            let key = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| "(no message)".into());
            result.panics.entry(key).or_default().push(file);
        }
    }
    panic::set_hook(previous);
    Ok(result)
}

/// Address-space limit of an isolated replay, as `scripts/fuzz` gives AFL (`-m 2048`): an
/// allocation bomb fails here as it does under AFL instead of swapping.
pub const MEMORY_LIMIT_BYTES: u64 = 2048 << 20;

/// Runs every input in a child `exe replay-one TARGET FILE` and classifies how it ended: by
/// the panic's location and first message line, or for an abort by the first line it printed
/// (numbers replaced by `N`, so one allocation bomb is one class).
pub fn replay_isolated(exe: &Path, target: &str, paths: &[PathBuf]) -> std::io::Result<Replay> {
    let mut result = Replay::default();
    for file in expand(paths)? {
        result.inputs += 1;
        let output = std::process::Command::new(exe)
            .args(["replay-one", target])
            .arg(&file)
            .env("RUST_BACKTRACE", "1")
            .output()?;
        if output.status.success() {
            continue;
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        result
            .panics
            .entry(classify(&stderr))
            .or_default()
            .push(file);
    }
    Ok(result)
}

/// The class of a child's stderr: `location: message` of a panic, else its first line and the
/// first frame of the backtrace in `crates/` (where the abort came from).
fn classify(stderr: &str) -> String {
    let mut lines = stderr.lines();
    while let Some(line) = lines.next() {
        if let Some((_, at)) = line.split_once(" panicked at ") {
            let location = at.trim_end_matches(':');
            let message = lines.next().unwrap_or("");
            return format!("{location}: {message}");
        }
    }
    let first = stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("(killed, no output)");
    let normalized: String = first
        .split(|c: char| c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("N");
    let frame = stderr
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("at ./crates/") || l.starts_with("at ./vendor/"))
        .map(|l| format!(" at {}", &l[3..]))
        .unwrap_or_default();
    format!("abort: {normalized}{frame}")
}

/// Runs `target` on one file in this process under [`MEMORY_LIMIT_BYTES`], uncaught (the
/// child side of [`replay_isolated`]).
pub fn replay_one(target: fn(&[u8]), file: &Path) -> std::io::Result<()> {
    let data = std::fs::read(file)?;
    let limit = libc::rlimit {
        rlim_cur: MEMORY_LIMIT_BYTES,
        rlim_max: MEMORY_LIMIT_BYTES,
    };
    // SAFETY: setrlimit only reads the struct it is given.
    unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) };
    target(&data);
    Ok(())
}

fn expand(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && !is_afl_metadata(p))
                .collect();
            entries.sort();
            files.extend(entries);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// AFL's README.txt in a crashes directory is not an input.
fn is_afl_metadata(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "README.txt")
}
