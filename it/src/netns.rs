//! Network namespaces for scenarios that cut a node off the network: one namespace per node,
//! joined to the root namespace by a veth pair whose root end is a port of a Linux bridge. The
//! bridge holds `198.18.X.254/24` (RFC 2544's benchmarking range: never a real network, and
//! the traffic never leaves the bridge: the namespaces have no default route), the node in
//! namespace `i` holds `198.18.X.(i+1)`. Processes in the root namespace (brokers, tools, the
//! harness) reach the nodes through the bridge; setting a node's root-side veth down partitions
//! it from everyone, setting it up heals it.
//!
//! Every namespace and link is recorded in a global table *before* it is created, and
//! [`remove_all`] deletes what is recorded: [`Net`]'s `Drop` calls it on the normal path, the
//! failure reporter (`report::fail_and_exit`: errors, panics, the watchdog, signals) after it
//! killed every child. Leftovers of a harness that was SIGKILLed (no code runs then) are
//! removed by the next run ([`remove_stale`]): names carry the creating harness's pid.

use anyhow::{bail, Context, Result};
use std::process::Command;
use std::sync::Mutex;

/// Prefix of every namespace (`kwit-<pid>-<i>`) and link (`kwb<pid>`, `kwv<pid>h<i>`).
const NS_PREFIX: &str = "kwit-";

/// What this process created and has not removed yet.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Item {
    Netns(String),
    Link(String),
}

static CREATED: Mutex<Vec<Item>> = Mutex::new(Vec::new());

fn created() -> std::sync::MutexGuard<'static, Vec<Item>> {
    CREATED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `ip args...`; errors quote its stderr.
fn ip(args: &[&str]) -> Result<()> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .context("running `ip` (iproute2)")?;
    if !out.status.success() {
        bail!(
            "ip {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// `ip args...`'s stdout (empty on failure).
fn ip_output(args: &[&str]) -> String {
    Command::new("ip")
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default()
}

/// One node's place on the bridge.
#[derive(Clone, Debug)]
pub struct Host {
    /// Namespace name (`ip netns exec <ns> ...`).
    pub ns: String,
    /// The veth end in the root namespace (a bridge port): down = partitioned.
    pub veth: String,
    /// The node's address in its namespace.
    pub ip: String,
}

/// A bridge and one namespace per node. Dropping it removes everything it created.
pub struct Net {
    /// The bridge in the root namespace.
    pub bridge: String,
    /// One per node, in creation order.
    pub hosts: Vec<Host>,
}

impl Net {
    /// Creates the bridge and `n` namespaces (each with `lo` up and its veth addressed).
    pub fn create(n: usize) -> Result<Net> {
        if n == 0 || n > 200 {
            bail!("Net::create: {n} namespaces (1..=200)");
        }
        let pid = std::process::id();
        let third = free_subnet(pid)?;
        let bridge = format!("kwb{pid}");
        record(Item::Link(bridge.clone()));
        ip(&["link", "add", &bridge, "type", "bridge"])?;
        ip(&[
            "addr",
            "add",
            &format!("198.18.{third}.254/24"),
            "dev",
            &bridge,
        ])?;
        ip(&["link", "set", &bridge, "up"])?;
        let mut hosts = Vec::new();
        for i in 0..n {
            hosts.push(add_host(&bridge, pid, third, i)?);
        }
        Ok(Net { bridge, hosts })
    }

    /// Partitions node `i`: its root-side veth goes down (packets both ways are dropped; open
    /// TCP connections stall rather than reset, as with a cut cable).
    pub fn link_down(&self, i: usize) -> Result<()> {
        ip(&["link", "set", &self.host(i)?.veth, "down"])
    }

    /// Heals node `i` after [`Net::link_down`].
    pub fn link_up(&self, i: usize) -> Result<()> {
        ip(&["link", "set", &self.host(i)?.veth, "up"])
    }

    fn host(&self, i: usize) -> Result<&Host> {
        self.hosts
            .get(i)
            .with_context(|| format!("no namespace #{i} ({} hosts)", self.hosts.len()))
    }

    /// Removes every namespace and link of this process (see [`remove_all`]); returns what
    /// could not be removed.
    pub fn remove(&self) -> Vec<String> {
        remove_all()
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        remove_all();
    }
}

fn record(item: Item) {
    created().push(item);
}

/// Namespace `kwit-<pid>-<i>` with veth `kwv<pid>h<i>` (root side, on `bridge`) and
/// `kwv<pid>n<i>` (inside, `198.18.<third>.<i+1>/24`).
fn add_host(bridge: &str, pid: u32, third: u8, i: usize) -> Result<Host> {
    let ns = format!("{NS_PREFIX}{pid}-{i}");
    let veth = format!("kwv{pid}h{i}");
    let inner = format!("kwv{pid}n{i}");
    let addr = format!("198.18.{third}.{}", i + 1);
    record(Item::Netns(ns.clone()));
    ip(&["netns", "add", &ns])?;
    record(Item::Link(veth.clone()));
    ip(&["link", "add", &veth, "type", "veth", "peer", "name", &inner])?;
    ip(&["link", "set", &inner, "netns", &ns])?;
    ip(&["link", "set", &veth, "master", bridge])?;
    ip(&["link", "set", &veth, "up"])?;
    ip(&[
        "-n",
        &ns,
        "addr",
        "add",
        &format!("{addr}/24"),
        "dev",
        &inner,
    ])?;
    ip(&["-n", &ns, "link", "set", &inner, "up"])?;
    ip(&["-n", &ns, "link", "set", "lo", "up"])?;
    Ok(Host { ns, veth, ip: addr })
}

/// A third octet X such that no interface holds an address in 198.18.X.0/24, starting from
/// one derived from `pid` (two harnesses on one machine get different bridges).
fn free_subnet(pid: u32) -> Result<u8> {
    let used = ip_output(&["-o", "-4", "addr", "show"]);
    for k in 0..250u32 {
        let third = ((pid + k) % 250 + 1) as u8;
        if !used.contains(&format!("198.18.{third}.")) {
            return Ok(third);
        }
    }
    bail!("no free 198.18.X.0/24 subnet for the test bridge")
}

/// Deletes every recorded namespace and link, links first (deleting a root-side veth removes
/// its peer at once, even while a process still holds the namespace). Safe to call again and
/// from any thread. Returns what could not be removed (also printed).
pub fn remove_all() -> Vec<String> {
    let items: Vec<Item> = std::mem::take(&mut *created());
    let mut left = Vec::new();
    let links = items.iter().filter_map(|i| match i {
        Item::Link(l) => Some(l),
        Item::Netns(_) => None,
    });
    for l in links.rev() {
        if link_exists(l) && ip(&["link", "del", l]).is_err() && link_exists(l) {
            left.push(format!("link {l}"));
        }
    }
    for i in &items {
        if let Item::Netns(ns) = i {
            if netns_exists(ns) && ip(&["netns", "del", ns]).is_err() && netns_exists(ns) {
                left.push(format!("netns {ns}"));
            }
        }
    }
    if !left.is_empty() {
        eprintln!("kraftwerk-it: could not remove {}", left.join(", "));
    }
    left
}

fn link_exists(name: &str) -> bool {
    std::path::Path::new("/sys/class/net").join(name).exists()
}

fn netns_exists(name: &str) -> bool {
    std::path::Path::new("/run/netns").join(name).exists()
}

/// Removes namespaces and links left by a harness that died without cleaning up: names with
/// this module's prefixes whose pid is no longer running. Returns what was removed.
pub fn remove_stale() -> Vec<String> {
    let mut removed = Vec::new();
    let dead = |pid: &str| {
        !pid.is_empty()
            && pid.bytes().all(|b| b.is_ascii_digit())
            && !std::path::Path::new("/proc").join(pid).exists()
    };
    for name in dir_names("/sys/class/net") {
        let pid = link_pid(&name);
        if pid.is_some_and(dead) && ip(&["link", "del", &name]).is_ok() {
            removed.push(name);
        }
    }
    for name in dir_names("/run/netns") {
        let pid = name
            .strip_prefix(NS_PREFIX)
            .and_then(|r| r.split('-').next());
        if pid.is_some_and(dead) && ip(&["netns", "del", &name]).is_ok() {
            removed.push(name);
        }
    }
    removed
}

/// The pid in `kwb<pid>` or `kwv<pid>h<i>` (None for other names).
fn link_pid(name: &str) -> Option<&str> {
    if let Some(p) = name.strip_prefix("kwb") {
        return Some(p);
    }
    let rest = name.strip_prefix("kwv")?;
    rest.split(['h', 'n']).next()
}

fn dir_names(dir: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `cmd` run inside namespace `ns`: `ip netns exec <ns> <program> <args>`, with `cmd`'s
/// environment changes. `ip netns exec` execs the program, so the pid (and process group) the
/// harness signals is the program's.
pub fn exec_in(ns: &str, cmd: &Command) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns]).arg(cmd.get_program());
    c.args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    if let Some(d) = cmd.get_current_dir() {
        c.current_dir(d);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_link_names_give_their_pid() {
        assert_eq!(link_pid("kwb1234"), Some("1234"));
        assert_eq!(link_pid("kwv1234h0"), Some("1234"));
        assert_eq!(link_pid("kwv77n12"), Some("77"));
        assert_eq!(link_pid("eth0"), None);
    }

    #[test]
    fn exec_in_keeps_program_args_and_env() {
        let mut c = Command::new("java");
        c.args(["-cp", "x", "kafka.Kafka"])
            .env("A", "1")
            .env_remove("B");
        let w = exec_in("kwit-1-0", &c);
        assert_eq!(w.get_program(), "ip");
        let a: Vec<_> = w
            .get_args()
            .map(|s| s.to_string_lossy().to_string())
            .collect();
        assert_eq!(
            a,
            [
                "netns",
                "exec",
                "kwit-1-0",
                "java",
                "-cp",
                "x",
                "kafka.Kafka"
            ]
        );
        let envs: Vec<_> = w.get_envs().collect();
        assert!(envs.contains(&(std::ffi::OsStr::new("A"), Some(std::ffi::OsStr::new("1")))));
        assert!(envs.contains(&(std::ffi::OsStr::new("B"), None)));
    }
}
