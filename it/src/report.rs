//! The end of every run: one reporter (main thread, watchdog or signal thread) prints the
//! result; on failure it first kills every child, prints the tail of every server log and the
//! kept work directory (and removes the network namespaces a scenario made, see `netns`). The
//! last line is always `scenario NAME: PASS` or
//! `scenario NAME: FAIL: <reason>`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::{procs, util};

struct RunInfo {
    scenario: String,
    work_dir: Option<PathBuf>,
    keep: bool,
}

static RUN: Mutex<RunInfo> = Mutex::new(RunInfo {
    scenario: String::new(),
    work_dir: None,
    keep: false,
});
static FINISHED: AtomicBool = AtomicBool::new(false);

/// Records the scenario name (for the result line).
pub fn set_scenario(name: &str) {
    RUN.lock().unwrap_or_else(|e| e.into_inner()).scenario = name.to_string();
}

/// Records the work directory (kept and printed on failure).
pub fn set_work_dir(dir: PathBuf) {
    RUN.lock().unwrap_or_else(|e| e.into_inner()).work_dir = Some(dir);
}

/// Keeps the work dir also on PASS (the demo: its logs are what the user looks at).
pub fn set_keep(keep: bool) {
    RUN.lock().unwrap_or_else(|e| e.into_inner()).keep = keep;
}

fn keep() -> bool {
    RUN.lock().unwrap_or_else(|e| e.into_inner()).keep
        || std::env::var("IT_KEEP").map(|v| v == "1").unwrap_or(false)
}

fn scenario() -> String {
    RUN.lock()
        .unwrap_or_else(|e| e.into_inner())
        .scenario
        .clone()
}

fn work_dir() -> Option<PathBuf> {
    RUN.lock()
        .unwrap_or_else(|e| e.into_inner())
        .work_dir
        .clone()
}

/// Claims the right to print the result; false if another thread already did.
fn claim() -> bool {
    !FINISHED.swap(true, Ordering::SeqCst)
}

fn print_tails() {
    let n: usize = std::env::var("IT_TAIL_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    for entry in procs::server_logs() {
        println!(
            "----- last {n} lines of {} ({}) -----",
            entry.name,
            entry.log.display()
        );
        for line in util::tail_lines(&entry.log, n) {
            println!("  {}", util::strip_ansi(&line));
        }
    }
    if let Some(dir) = work_dir() {
        let tools = dir.join("tools.log");
        if tools.exists() {
            println!("----- last 15 CLI tool runs ({}) -----", tools.display());
            for line in util::tail_lines(&tools, 15) {
                println!("  {}", util::strip_ansi(&line));
            }
        }
    }
}

/// Kills every child, prints the failure report and `scenario NAME: FAIL: <reason>`, exits
/// with `code`. If another thread is already reporting, waits for it to exit the process.
pub fn fail_and_exit(reason: &str, code: i32) -> ! {
    if !claim() {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    procs::signal_all(libc::SIGCONT);
    procs::signal_all(libc::SIGKILL);
    std::thread::sleep(Duration::from_millis(200));
    // After the kill: the namespaces' processes are gone, so nothing recreates traffic.
    crate::netns::remove_all();
    println!();
    println!("FAILURE: {reason}");
    print_tails();
    if let Some(dir) = work_dir() {
        println!("work dir kept: {}", dir.display());
    }
    println!(
        "scenario {}: FAIL: {}",
        scenario(),
        util::one_line(reason, 300)
    );
    std::process::exit(code)
}

/// Prints `scenario NAME: PASS` (removing the work dir unless `IT_KEEP=1`) and returns the exit
/// code 0, or reports the failure and exits.
pub fn finish(result: anyhow::Result<()>) -> i32 {
    match result {
        Ok(()) => {
            if !claim() {
                loop {
                    std::thread::sleep(Duration::from_secs(3600));
                }
            }
            crate::netns::remove_all();
            if let Some(dir) = work_dir() {
                if keep() {
                    println!("work dir kept: {}", dir.display());
                } else if std::fs::remove_dir_all(&dir).is_ok() {
                    println!("work dir removed: {} (IT_KEEP=1 keeps it)", dir.display());
                }
            }
            println!("scenario {}: PASS", scenario());
            0
        }
        Err(e) => fail_and_exit(&format!("{e:#}"), 1),
    }
}

/// Starts a thread that fails the run once `deadline` has passed.
pub fn start_watchdog(deadline: Duration) {
    std::thread::Builder::new()
        .name("watchdog".into())
        .spawn(move || {
            std::thread::sleep(deadline);
            fail_and_exit(
                &format!(
                    "overall scenario deadline of {}s exceeded",
                    deadline.as_secs()
                ),
                1,
            );
        })
        .expect("spawning watchdog thread");
}
