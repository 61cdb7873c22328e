//! Measurement primitives shared by every system: the failover probe (first successful
//! CreateTopics after a signal), restart catch-up (DescribeQuorum), peak RSS (`VmHWM`),
//! snapshot files and the log lines about them.

use anyhow::{bail, Result};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::client::{Conn, Transport};
use super::rpc::{self, QuorumView, TopicSpec};

/// The result of a failover probe.
#[derive(Clone, Debug)]
pub struct Probe {
    /// From the signal to the first CreateTopics answered with success.
    pub elapsed: Duration,
    /// The server that answered it.
    pub addr: String,
    /// CreateTopics requests sent by all probe threads together.
    pub attempts: u64,
}

/// Sends CreateTopics for `topic` to every address in `targets` (over `transport`) in parallel (one thread and
/// connection each, reconnecting on failure, a new request as soon as the previous one is
/// answered NOT_CONTROLLER or fails; 10 ms pause between attempts of one thread) until one
/// succeeds, and returns the time since `t0`. The request's `timeout_ms` (server side) is
/// `request_timeout_ms`. Errors after `deadline`.
///
/// "Success" is the server's answer with error NONE (or TOPIC_ALREADY_EXISTS, when an earlier
/// attempt of this probe created it and its answer was lost): for a KRaft controller the
/// TopicRecord and PartitionRecords are committed; for a ZooKeeper-mode broker that is the
/// controller, the znodes are written and the partition has a leader in that broker's
/// metadata cache (the broker waits for it up to `timeout_ms`).
pub fn probe_create(
    targets: &[String],
    transport: &Transport,
    topic: &TopicSpec,
    request_timeout_ms: i32,
    t0: Instant,
    deadline: Duration,
) -> Result<Probe> {
    let done = Arc::new(AtomicBool::new(false));
    let winner: Arc<Mutex<Option<(Duration, String)>>> = Arc::new(Mutex::new(None));
    let attempts = Arc::new(AtomicU64::new(0));
    let last_err: Arc<Mutex<String>> = Arc::new(Mutex::new(String::new()));
    for addr in targets {
        let (done, winner, attempts, last_err) = (
            done.clone(),
            winner.clone(),
            attempts.clone(),
            last_err.clone(),
        );
        let addr = addr.clone();
        let topic = topic.clone();
        let transport = transport.clone();
        // Detached: a thread blocked in a read ends when that read ends; it then sees `done`.
        let _ = std::thread::Builder::new()
            .name("probe".into())
            .spawn(move || {
                let mut conn: Option<Conn> = None;
                while !done.load(Ordering::SeqCst) && t0.elapsed() < deadline {
                    let c = match conn.as_mut() {
                        Some(c) => c,
                        None => {
                            match Conn::connect_via(
                                &addr,
                                "bench-probe",
                                Duration::from_millis(1000),
                                &transport,
                            ) {
                                Ok(c) => {
                                    let _ = c.set_timeout(Duration::from_millis(
                                        request_timeout_ms as u64 + 5000,
                                    ));
                                    conn.insert(c)
                                }
                                Err(e) => {
                                    *last_err.lock().unwrap() = format!("{e:#}");
                                    std::thread::sleep(Duration::from_millis(10));
                                    continue;
                                }
                            }
                        }
                    };
                    attempts.fetch_add(1, Ordering::SeqCst);
                    match rpc::create_topics(c, std::slice::from_ref(&topic), request_timeout_ms) {
                        Ok(o) if o.all_created() => {
                            let at = t0.elapsed();
                            let mut w = winner.lock().unwrap();
                            if w.is_none() {
                                *w = Some((at, addr.clone()));
                            }
                            done.store(true, Ordering::SeqCst);
                        }
                        Ok(o) => {
                            if !o.not_controller() {
                                *last_err.lock().unwrap() = format!("{addr}: {}", o.first_error());
                            }
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        Err(e) => {
                            *last_err.lock().unwrap() = format!("{e:#}");
                            conn = None;
                            std::thread::sleep(Duration::from_millis(10));
                        }
                    }
                }
            });
    }
    while !done.load(Ordering::SeqCst) {
        crate::util::check_interrupted()?;
        if t0.elapsed() > deadline {
            done.store(true, Ordering::SeqCst);
            bail!(
                "no CreateTopics of {} succeeded within {:?} of the signal (last error: {})",
                topic.name,
                deadline,
                last_err.lock().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let (elapsed, addr) = winner
        .lock()
        .unwrap()
        .clone()
        .expect("done implies a winner");
    Ok(Probe {
        elapsed,
        addr,
        attempts: attempts.load(Ordering::SeqCst),
    })
}

/// Finds the quorum leader among `addrs` by asking each for DescribeQuorum over `transport`
/// (followers refuse); returns its address index and view. Errors if none answers as leader.
pub fn find_leader(addrs: &[String], transport: &Transport) -> Result<(usize, QuorumView)> {
    let mut errs = Vec::new();
    for (i, a) in addrs.iter().enumerate() {
        match Conn::connect_via(a, "bench", Duration::from_millis(1000), transport)
            .and_then(|mut c| rpc::describe_quorum(&mut c))
        {
            Ok(v) => return Ok((i, v)),
            Err(e) => errs.push(format!("{e:#}")),
        }
    }
    bail!(
        "no controller answered DescribeQuorum as leader: {}",
        errs.join("; ")
    )
}

/// Polls [`find_leader`] until a leader that is one of `voters` answers.
pub fn wait_leader(
    addrs: &[String],
    transport: &Transport,
    timeout: Duration,
) -> Result<(usize, QuorumView)> {
    crate::util::wait_until(
        "a quorum leader (DescribeQuorum)",
        timeout,
        Duration::from_millis(100),
        || find_leader(addrs, transport).map(Some),
    )
}

/// Polls DescribeQuorum at the leader every 20 ms until the leader reports voter `id`'s log end
/// offset at or above `target` (the leader's high watermark when `id` was restarted); returns
/// the time since `t0` (the restart).
pub fn wait_caught_up(
    addrs: &[String],
    transport: &Transport,
    id: i32,
    target: i64,
    t0: Instant,
    timeout: Duration,
) -> Result<Duration> {
    let mut leader: Option<Conn> = None;
    loop {
        crate::util::check_interrupted()?;
        if t0.elapsed() > timeout {
            bail!(
                "controller {id} did not reach offset {target} within {timeout:?} of its restart"
            );
        }
        if leader.is_none() {
            for a in addrs {
                if let Ok(mut c) =
                    Conn::connect_via(a, "bench", Duration::from_millis(500), transport)
                {
                    if rpc::describe_quorum(&mut c).is_ok() {
                        leader = Some(c);
                        break;
                    }
                }
            }
        }
        if let Some(c) = leader.as_mut() {
            match rpc::describe_quorum(c) {
                Ok(v) if v.voter_leo(id) >= target => return Ok(t0.elapsed()),
                Ok(_) => {}
                Err(_) => leader = None,
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Peak resident set size of process `pid` in bytes (`VmHWM` in /proc/<pid>/status).
pub fn vm_hwm_bytes(pid: i32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// The newest `<20-digit offset>-<10-digit epoch>.checkpoint` in `dir` (by end offset):
/// `(end offset, size in bytes)`.
pub fn latest_checkpoint(dir: &Path) -> Option<(i64, u64)> {
    let mut best: Option<(i64, u64)> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".checkpoint") else {
            continue;
        };
        let Some((off, _epoch)) = stem.split_once('-') else {
            continue;
        };
        let Ok(off) = off.parse::<i64>() else {
            continue;
        };
        let size = e.metadata().map(|m| m.len()).unwrap_or(0);
        if best.map(|(o, _)| off > o).unwrap_or(true) {
            best = Some((off, size));
        }
    }
    best
}

/// The value of `key=<number>` in a log line (`tracing`'s key=value fields), e.g.
/// `field_u64("... write_ms=12 ...", "write_ms")`.
pub fn field_u64(line: &str, key: &str) -> Option<u64> {
    let pat = format!("{key}=");
    let i = line.find(&pat)? + pat.len();
    let digits: String = line[i..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

/// Milliseconds since midnight of a log4j `%d{ISO8601}` timestamp at the start of a Java log
/// line (`[2025-01-31T12:34:56,789] ...` or with a space instead of `T`).
pub fn java_log_ms(line: &str) -> Option<u64> {
    let l = line.strip_prefix('[')?;
    let t = l.get(11..23)?; // 12:34:56,789
    let h: u64 = t.get(0..2)?.parse().ok()?;
    let m: u64 = t.get(3..5)?.parse().ok()?;
    let s: u64 = t.get(6..8)?.parse().ok()?;
    let ms: u64 = t.get(9..12)?.parse().ok()?;
    Some(((h * 60 + m) * 60 + s) * 1000 + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_java_times_parse() {
        assert_eq!(
            field_u64(
                "INFO snapshot written offset=1234 size_bytes=99 write_ms=7",
                "write_ms"
            ),
            Some(7)
        );
        assert_eq!(field_u64("offset=1234", "size_bytes"), None);
        assert_eq!(
            java_log_ms("[2025-01-31T01:02:03,456] INFO x"),
            Some(3_723_456)
        );
        assert_eq!(
            java_log_ms("[2025-01-31 01:02:03,456] INFO x"),
            Some(3_723_456)
        );
        assert_eq!(java_log_ms("no time"), None);
    }

    #[test]
    fn latest_checkpoint_picks_highest_offset() {
        let d = std::env::temp_dir().join(format!("bench-ckpt-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("00000000000000000100-0000000001.checkpoint"),
            vec![0u8; 10],
        )
        .unwrap();
        std::fs::write(
            d.join("00000000000000002000-0000000002.checkpoint"),
            vec![0u8; 30],
        )
        .unwrap();
        std::fs::write(
            d.join("00000000000000009000-0000000002.checkpoint.part"),
            vec![0u8; 50],
        )
        .unwrap();
        assert_eq!(latest_checkpoint(&d), Some((2000, 30)));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
