//! Replaying inputs without AFL: every file through a target, each panic caught and classified
//! by its message and location. This is for measuring and for the corpus test only; the AFL
//! binaries never catch a panic.

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
