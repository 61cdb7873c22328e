//! Child-process management: every child runs in its own process group, is registered in a
//! global table, and is killed when its handle drops, when the harness panics, when the overall
//! deadline passes, or on Ctrl-C. Children also get `PR_SET_PDEATHSIG(SIGKILL)` so a harness
//! killed with SIGKILL does not leave JVMs behind.

// Signals, process groups, PR_SET_PDEATHSIG and a pipe need libc calls; each is commented.
#![allow(unsafe_code)]

use anyhow::{anyhow, Context, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::util;

/// One process the harness started (live or not): its name and the file its output goes to.
#[derive(Clone, Debug)]
pub struct LogEntry {
    /// Human name, e.g. `controller-1`, `broker-101`, `tool-0007-kafka-topics`.
    pub name: String,
    /// The file holding the process's stdout and stderr.
    pub log: PathBuf,
    /// Whether this is a long-running server (its tail is printed on failure).
    pub server: bool,
}

struct Registry {
    /// Process-group ids of children not yet reaped (the group leader's pid).
    live: Vec<i32>,
    /// Every server log of this run, for the failure report.
    logs: Vec<LogEntry>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    live: Vec::new(),
    logs: Vec::new(),
});

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sends `sig` to every live process group this harness started.
pub fn signal_all(sig: i32) {
    for pgid in registry().live.clone() {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
        unsafe { libc::kill(-pgid, sig) };
    }
}

/// Number of children started and not yet reaped.
pub fn live_count() -> usize {
    registry().live.len()
}

/// Every server log registered so far.
pub fn server_logs() -> Vec<LogEntry> {
    registry()
        .logs
        .iter()
        .filter(|l| l.server)
        .cloned()
        .collect()
}

/// A running child process in its own process group. Dropping it kills the group (SIGKILL) and
/// reaps it.
pub struct Proc {
    /// Human name (see [`LogEntry::name`]).
    pub name: String,
    /// File receiving stdout+stderr.
    pub log: PathBuf,
    child: Child,
    exit: Option<ExitStatus>,
}

/// Appends a line to a log file (used for markers like "=== restart ===").
pub fn append_marker(path: &Path, line: &str) {
    if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(path) {
        let _ = writeln!(f, "{line}");
    }
}

impl Proc {
    /// Spawns `cmd` with stdout and stderr appended to `log` and stdin from `stdin` (or
    /// /dev/null), in a new process group, with SIGKILL as parent-death signal.
    ///
    /// `server` marks long-running nodes whose log tail goes into failure reports.
    pub fn spawn(
        name: &str,
        mut cmd: Command,
        log: &Path,
        stdin: Option<&Path>,
        server: bool,
    ) -> Result<Proc> {
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("opening {}", log.display()))?;
        let err = out.try_clone()?;
        cmd.stdout(Stdio::from(out)).stderr(Stdio::from(err));
        match stdin {
            Some(p) => cmd.stdin(Stdio::from(
                File::open(p).with_context(|| format!("opening {}", p.display()))?,
            )),
            None => cmd.stdin(Stdio::null()),
        };
        cmd.process_group(0);
        // SAFETY: the closure runs between fork and exec and only calls the async-signal-safe
        // prctl(2).
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                );
                Ok(())
            });
        }
        // Hold the registry lock across spawn so a concurrent kill-all cannot miss this child.
        let mut reg = registry();
        let child = cmd
            .spawn()
            .with_context(|| format!("starting {name}: {:?}", cmd))?;
        reg.live.push(child.id() as i32);
        if !reg.logs.iter().any(|l| l.log == log) {
            reg.logs.push(LogEntry {
                name: name.to_string(),
                log: log.to_path_buf(),
                server,
            });
        }
        drop(reg);
        Ok(Proc {
            name: name.to_string(),
            log: log.to_path_buf(),
            child,
            exit: None,
        })
    }

    /// The child's pid (= its process-group id).
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Sends `sig` to the child's whole process group.
    pub fn signal(&self, sig: i32) -> Result<()> {
        if self.exit.is_some() {
            return Err(anyhow!("{} already exited", self.name));
        }
        // SAFETY: see `signal_all`.
        let rc = unsafe { libc::kill(-self.pid(), sig) };
        if rc != 0 {
            return Err(anyhow!(
                "kill(-{}, {sig}) failed: {}",
                self.pid(),
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }

    /// SIGKILL the group (crash).
    pub fn kill(&self) -> Result<()> {
        self.signal(libc::SIGKILL)
    }
    /// SIGTERM the group (graceful stop request).
    pub fn term(&self) -> Result<()> {
        self.signal(libc::SIGTERM)
    }
    /// SIGSTOP the group (freeze: sockets stay open, nothing answers).
    pub fn freeze(&self) -> Result<()> {
        self.signal(libc::SIGSTOP)
    }
    /// SIGCONT the group (thaw after [`Proc::freeze`]).
    pub fn thaw(&self) -> Result<()> {
        self.signal(libc::SIGCONT)
    }

    fn reaped(&mut self, status: ExitStatus) -> ExitStatus {
        self.exit = Some(status);
        let pid = self.pid();
        registry().live.retain(|p| *p != pid);
        status
    }

    /// Non-blocking: the exit status if the child has exited.
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        if let Some(s) = self.exit {
            return Some(s);
        }
        match self.child.try_wait() {
            Ok(Some(s)) => Some(self.reaped(s)),
            _ => None,
        }
    }

    /// True while the child has not exited.
    pub fn is_running(&mut self) -> bool {
        self.try_exit().is_none()
    }

    /// Waits up to `timeout` for the child to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(s) = self.try_exit() {
                return Some(s);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, wait up to `grace`, then SIGKILL. Returns how it ended.
    pub fn stop(&mut self, grace: Duration) -> StopOutcome {
        if let Some(s) = self.try_exit() {
            return StopOutcome::AlreadyExited(s);
        }
        let start = Instant::now();
        // A frozen (SIGSTOPped) process would not act on SIGTERM until continued.
        let _ = self.thaw();
        let _ = self.term();
        if let Some(s) = self.wait_exit(grace) {
            return StopOutcome::Terminated(s, start.elapsed());
        }
        let _ = self.kill();
        let s = self.wait_exit(Duration::from_secs(10));
        StopOutcome::Killed(s)
    }
}

/// How [`Proc::stop`] ended a process.
#[derive(Debug)]
pub enum StopOutcome {
    /// It had exited before we asked.
    AlreadyExited(ExitStatus),
    /// It exited after SIGTERM, in this long.
    Terminated(ExitStatus, Duration),
    /// It ignored SIGTERM for the grace period and was SIGKILLed.
    Killed(Option<ExitStatus>),
}

/// Describes an exit status like a shell would: `exit 1`, `signal 9 (SIGKILL)`.
pub fn describe_status(s: &ExitStatus) -> String {
    if let Some(c) = s.code() {
        return format!("exit {c}");
    }
    match s.signal() {
        Some(9) => "signal 9 (SIGKILL)".into(),
        Some(15) => "signal 15 (SIGTERM)".into(),
        Some(n) => format!("signal {n}"),
        None => "unknown status".into(),
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.try_exit().is_none() {
            let _ = self.kill();
            let _ = self.wait_exit(Duration::from_secs(10));
        }
    }
}

/// The result of running a short-lived command to completion.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Exit code (None if killed by a signal, e.g. on timeout).
    pub code: Option<i32>,
    /// Whole stdout.
    pub stdout: String,
    /// Whole stderr.
    pub stderr: String,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
    /// True if the harness killed it at its deadline.
    pub timed_out: bool,
}

impl Captured {
    /// Exit code 0 and not timed out.
    pub fn ok(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }
}

/// Runs `cmd` to completion (at most `timeout`), capturing stdout/stderr into `out`/`err`
/// files (kept for post-mortems) and returning their contents.
pub fn run_captured(
    name: &str,
    mut cmd: Command,
    out: &Path,
    err: &Path,
    stdin: Option<&Path>,
    timeout: Duration,
) -> Result<Captured> {
    let fo = File::create(out).with_context(|| format!("creating {}", out.display()))?;
    let fe = File::create(err).with_context(|| format!("creating {}", err.display()))?;
    cmd.stdout(Stdio::from(fo)).stderr(Stdio::from(fe));
    match stdin {
        Some(p) => cmd.stdin(Stdio::from(
            File::open(p).with_context(|| format!("opening {}", p.display()))?,
        )),
        None => cmd.stdin(Stdio::null()),
    };
    cmd.process_group(0);
    // SAFETY: as in `Proc::spawn`.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            Ok(())
        });
    }
    let start = Instant::now();
    let mut reg = registry();
    let child = cmd.spawn().with_context(|| format!("starting {name}"))?;
    reg.live.push(child.id() as i32);
    drop(reg);
    let mut p = Proc {
        name: name.to_string(),
        log: out.to_path_buf(),
        child,
        exit: None,
    };
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = p.try_exit() {
            break Some(s);
        }
        if start.elapsed() >= timeout || util::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
        {
            timed_out = true;
            let _ = p.kill();
            break p.wait_exit(Duration::from_secs(10));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    util::check_interrupted()?;
    Ok(Captured {
        code: status.and_then(|s| s.code()),
        stdout: std::fs::read_to_string(out).unwrap_or_default(),
        stderr: std::fs::read_to_string(err).unwrap_or_default(),
        elapsed,
        timed_out,
    })
}

/// Installs handlers for SIGINT, SIGTERM and SIGHUP. The first signal sets
/// [`util::INTERRUPTED`] (wait loops then fail and the main thread stops everything through its
/// normal path); if the main thread has not finished `force_after` later, or on a second
/// signal, every child is SIGKILLed and the harness exits with status 130.
pub fn install_signal_handlers(force_after: Duration) -> Result<()> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe(2) fills the two-element array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(anyhow!("pipe: {}", std::io::Error::last_os_error()));
    }
    SIGNAL_PIPE_WRITE.store(fds[1], std::sync::atomic::Ordering::SeqCst);
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installing a handler that only calls write(2), which is async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    let read_fd = fds[0];
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        let mut count = 0;
        loop {
            let mut b = [0u8; 1];
            // SAFETY: reading one byte into a local buffer.
            let n = unsafe { libc::read(read_fd, b.as_mut_ptr().cast(), 1) };
            if n <= 0 {
                continue;
            }
            count += 1;
            util::INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
            if count == 1 {
                eprintln!("\nkraftwerk-it: signal {} received; stopping every process (again to force)", b[0]);
                std::thread::spawn(move || {
                    std::thread::sleep(force_after);
                    force_exit("main thread did not stop in time after a signal");
                });
            } else {
                force_exit("second signal");
            }
        }
    })?;
    Ok(())
}

static SIGNAL_PIPE_WRITE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = SIGNAL_PIPE_WRITE.load(std::sync::atomic::Ordering::SeqCst);
    let b = [sig as u8];
    // SAFETY: write(2) is async-signal-safe.
    unsafe { libc::write(fd, b.as_ptr().cast(), 1) };
}

/// Kills every child and exits 130 (used when a graceful stop did not happen).
pub fn force_exit(why: &str) -> ! {
    signal_all(libc::SIGCONT);
    signal_all(libc::SIGKILL);
    crate::report::fail_and_exit(&format!("interrupted ({why})"), 130)
}
