//! Small helpers: deadlines and polling, free ports, random ids, timestamps, log tails.

use anyhow::{bail, Context, Result};
use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Set by the signal thread on the first Ctrl-C/SIGTERM; every wait loop checks it so that the
/// main thread unwinds through its normal failure path (which stops every process).
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Returns an error if the run was interrupted (Ctrl-C / SIGTERM to the harness).
pub fn check_interrupted() -> Result<()> {
    if INTERRUPTED.load(Ordering::SeqCst) {
        bail!("interrupted by signal");
    }
    Ok(())
}

/// Sleeps `d`, waking early (with an error) if the run is interrupted.
pub fn sleep(d: Duration) -> Result<()> {
    let end = Instant::now() + d;
    loop {
        check_interrupted()?;
        let now = Instant::now();
        if now >= end {
            return Ok(());
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}

/// Polls `probe` every `interval` until it returns `Ok(Some(v))` or `timeout` passes.
///
/// `Ok(None)` and `Err(_)` both mean "not yet"; the last error is quoted in the timeout error,
/// which reads `timed out after <n>s waiting for <what> (last: <err>)`.
pub fn wait_until<T>(
    what: &str,
    timeout: Duration,
    interval: Duration,
    mut probe: impl FnMut() -> Result<Option<T>>,
) -> Result<T> {
    let start = Instant::now();
    let mut last: Option<String> = None;
    loop {
        check_interrupted()?;
        match probe() {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => {}
            Err(e) => last = Some(format!("{e:#}")),
        }
        if start.elapsed() >= timeout {
            match last {
                Some(l) => bail!(
                    "timed out after {:.0}s waiting for {what} (last: {})",
                    timeout.as_secs_f64(),
                    one_line(&l, 400)
                ),
                None => bail!(
                    "timed out after {:.0}s waiting for {what}",
                    timeout.as_secs_f64()
                ),
            }
        }
        sleep(interval)?;
    }
}

/// Collapses a multi-line message into one line of at most `max` characters.
pub fn one_line(s: &str, max: usize) -> String {
    let joined = s
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ");
    if joined.chars().count() > max {
        let cut: String = joined.chars().take(max).collect();
        format!("{cut}…")
    } else {
        joined
    }
}

static PORTS: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// A TCP port on 127.0.0.1 that was free a moment ago and that this run has not handed out
/// before. Ports come from below the kernel's ephemeral range
/// (`/proc/sys/net/ipv4/ip_local_port_range`), so the client sockets of the many tool JVMs
/// cannot take a node's port while it is down between a kill and a restart.
pub fn free_port() -> Result<u16> {
    let low = ephemeral_low();
    let (from, to) = if low > 12_000 {
        (10_000u16, low - 1)
    } else {
        (low.max(1024), low.max(1024) + 10_000)
    };
    let mut guard = PORTS.lock().unwrap();
    let used = guard.get_or_insert_with(HashSet::new);
    for _ in 0..1000 {
        let r = random_bytes(2)?;
        let port = from + (u16::from_le_bytes([r[0], r[1]]) % (to - from));
        if used.contains(&port) {
            continue;
        }
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            used.insert(port);
            return Ok(port);
        }
    }
    bail!("could not find a free port on 127.0.0.1 in {from}..{to}")
}

/// The first port of the kernel's ephemeral range (32768 when unreadable).
fn ephemeral_low() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|v| v.parse::<u16>().ok())
        })
        .unwrap_or(32768)
}

/// `n` bytes from the kernel's CSPRNG.
pub fn random_bytes(n: usize) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .context("reading /dev/urandom")?;
    Ok(buf)
}

/// Unpadded URL-safe base64, the text form of Kafka's `Uuid`.
pub fn base64url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// A random 22-character cluster id like `kafka-storage random-uuid` prints. Like Kafka's
/// `Uuid.randomUuid` it avoids ids starting with '-' (they read as command-line flags).
pub fn new_cluster_id() -> Result<String> {
    loop {
        let id = base64url(&random_bytes(16)?);
        if !id.starts_with('-') && !id.starts_with("AAAAAAAAAAAAAAAAAAAA") {
            return Ok(id);
        }
    }
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// UTC wall-clock time as `YYYYMMDD-HHMMSS` (for work directory names).
pub fn timestamp() -> String {
    let secs = (unix_ms() / 1000) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The last `n` lines of a file (reads at most the last 256 KiB); empty if unreadable.
pub fn tail_lines(path: &Path, n: usize) -> Vec<String> {
    let Ok(mut f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(256 * 1024);
    if f.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Kafka's default partitioner for keyed records: `toPositive(murmur2(key)) % partitions`
/// (KIP-480 BuiltInPartitioner.partitionForKey). Lets a scenario aim messages at chosen
/// partitions through the console producer's `parse.key`.
pub fn partition_for_key(key: &[u8], partitions: u32) -> u32 {
    (murmur2(key) as u32 & 0x7fff_ffff) % partitions
}

/// The 32-bit MurmurHash2 variant Kafka uses (seed 0x9747b28c).
pub fn murmur2(data: &[u8]) -> i32 {
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let mut h: u32 = 0x9747_b28c ^ data.len() as u32;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let rest = chunks.remainder();
    if rest.len() >= 3 {
        h ^= u32::from(rest[2]) << 16;
    }
    if rest.len() >= 2 {
        h ^= u32::from(rest[1]) << 8;
    }
    if !rest.is_empty() {
        h ^= u32::from(rest[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// Removes ANSI escape sequences (`ESC [ ... letter`), e.g. colours in a log line.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Formats a duration as seconds with one decimal, e.g. `12.3s`.
pub fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_matches_kafka_uuid_text() {
        // Uuid(0, 1) is Kafka's metadata topic id, printed as AAAAAAAAAAAAAAAAAAAAAQ.
        let mut b = [0u8; 16];
        b[15] = 1;
        assert_eq!(base64url(&b), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!(base64url(&[0xff; 16]), "_____________________w");
    }

    #[test]
    fn cluster_ids_are_22_chars_and_not_flags() {
        for _ in 0..50 {
            let id = new_cluster_id().unwrap();
            assert_eq!(id.len(), 22);
            assert!(!id.starts_with('-'));
        }
    }

    #[test]
    fn free_ports_are_distinct_bindable_and_not_ephemeral() {
        let ports: Vec<u16> = (0..20).map(|_| free_port().unwrap()).collect();
        let set: HashSet<u16> = ports.iter().copied().collect();
        assert_eq!(set.len(), ports.len());
        for p in ports {
            assert!(
                p >= 1024 && (p < ephemeral_low() || ephemeral_low() <= 12_000),
                "{p}"
            );
            TcpListener::bind(("127.0.0.1", p)).unwrap();
        }
    }

    #[test]
    fn one_line_joins_and_truncates() {
        assert_eq!(one_line("a\n\n  b  \nc", 100), "a | b | c");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }

    #[test]
    fn strip_ansi_removes_colours_only() {
        assert_eq!(
            strip_ansi("\u{1b}[2m2026\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m AlterPartition"),
            "2026  INFO AlterPartition"
        );
        assert_eq!(strip_ansi("plain [text]"), "plain [text]");
    }

    #[test]
    fn murmur2_matches_kafka() {
        // Values printed by org.apache.kafka.common.utils.Utils.murmur2 (kafka-clients 4.1.2).
        for (k, h) in [
            ("21", -973932308),
            ("foobar", -790332482),
            ("a-little-bit-long-string", -985981536),
            ("a-little-bit-longer-string", -1486304829),
            (
                "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58897971,
            ),
            ("abc", 479470107),
        ] {
            assert_eq!(murmur2(k.as_bytes()), h, "{k}");
        }
        assert_eq!(partition_for_key(b"k0", 3), 2);
        assert_eq!(partition_for_key(b"k2", 3), 0);
        assert_eq!(partition_for_key(b"k17", 3), 1);
    }

    #[test]
    fn timestamp_has_fixed_shape() {
        let t = timestamp();
        assert_eq!(t.len(), 15, "{t}");
        assert_eq!(&t[8..9], "-");
        assert!(t.starts_with("20"));
    }
}
