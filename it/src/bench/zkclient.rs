//! A minimal ZooKeeper client (jute wire format: connect, getData, delete, closeSession), just
//! enough to read and delete `/controller` without starting a JVM.

use anyhow::{bail, Context, Result};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// ZooKeeper's NONODE error code.
pub const NO_NODE: i32 = -101;

/// One ZooKeeper session over one connection.
pub struct ZkSession {
    stream: TcpStream,
    xid: i32,
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(&(s.len() as i32).to_be_bytes());
    b.extend_from_slice(s.as_bytes());
}

impl ZkSession {
    /// Connects to `addr` and opens a session (timeout 10 s, so it lives through a short pause).
    pub fn connect(addr: &str) -> Result<ZkSession> {
        let sa = addr
            .parse()
            .with_context(|| format!("bad address {addr}"))?;
        let stream = TcpStream::connect_timeout(&sa, Duration::from_secs(2))
            .with_context(|| format!("connecting to ZooKeeper {addr}"))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.set_nodelay(true)?;
        let mut s = ZkSession { stream, xid: 0 };
        let mut b = Vec::new();
        b.extend_from_slice(&0i32.to_be_bytes()); // protocolVersion
        b.extend_from_slice(&0i64.to_be_bytes()); // lastZxidSeen
        b.extend_from_slice(&10_000i32.to_be_bytes()); // timeOut
        b.extend_from_slice(&0i64.to_be_bytes()); // sessionId
        b.extend_from_slice(&16i32.to_be_bytes()); // passwd
        b.extend_from_slice(&[0u8; 16]);
        b.push(0); // readOnly
        s.send(&b)?;
        let r = s.recv()?;
        if r.len() < 16 {
            bail!("short ZooKeeper connect response ({} bytes)", r.len());
        }
        Ok(s)
    }

    fn send(&mut self, body: &[u8]) -> Result<()> {
        let mut f = Vec::with_capacity(body.len() + 4);
        f.extend_from_slice(&(body.len() as i32).to_be_bytes());
        f.extend_from_slice(body);
        self.stream.write_all(&f)?;
        Ok(())
    }

    fn recv(&mut self) -> Result<Vec<u8>> {
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len)?;
        let len = i32::from_be_bytes(len);
        if !(0..=16 << 20).contains(&len) {
            bail!("ZooKeeper frame of {len} bytes");
        }
        let mut b = vec![0u8; len as usize];
        self.stream.read_exact(&mut b)?;
        Ok(b)
    }

    /// Sends request `op` with `body`; returns `(err, reply body)` of the matching reply.
    fn call(&mut self, op: i32, body: &[u8]) -> Result<(i32, Vec<u8>)> {
        self.xid += 1;
        let mut b = Vec::new();
        b.extend_from_slice(&self.xid.to_be_bytes());
        b.extend_from_slice(&op.to_be_bytes());
        b.extend_from_slice(body);
        self.send(&b)?;
        loop {
            let r = self.recv()?;
            if r.len() < 16 {
                bail!("short ZooKeeper reply");
            }
            let xid = i32::from_be_bytes(r[0..4].try_into()?);
            let err = i32::from_be_bytes(r[12..16].try_into()?);
            if xid == self.xid {
                return Ok((err, r[16..].to_vec()));
            }
            // Watch events (xid -1) and pings (-2) are not ours.
        }
    }

    /// The data of `path`, or None if it does not exist.
    pub fn get_data(&mut self, path: &str) -> Result<Option<Vec<u8>>> {
        let mut b = Vec::new();
        put_str(&mut b, path);
        b.push(0);
        let (err, r) = self.call(4, &b)?;
        if err == NO_NODE {
            return Ok(None);
        }
        if err != 0 {
            bail!("ZooKeeper getData {path}: error {err}");
        }
        let n = i32::from_be_bytes(r.get(0..4).context("short getData reply")?.try_into()?);
        if n < 0 {
            return Ok(Some(Vec::new()));
        }
        Ok(Some(
            r.get(4..4 + n as usize)
                .context("short getData reply")?
                .to_vec(),
        ))
    }

    /// Deletes `path` (any version); Ok(false) if it did not exist.
    pub fn delete(&mut self, path: &str) -> Result<bool> {
        let mut b = Vec::new();
        put_str(&mut b, path);
        b.extend_from_slice(&(-1i32).to_be_bytes());
        let (err, _) = self.call(2, &b)?;
        match err {
            0 => Ok(true),
            NO_NODE => Ok(false),
            e => bail!("ZooKeeper delete {path}: error {e}"),
        }
    }

    /// The broker id in `/controller` (`{"version":..,"brokerid":N,...}`), None if absent.
    pub fn controller_id(&mut self) -> Result<Option<i32>> {
        let Some(d) = self.get_data("/controller")? else {
            return Ok(None);
        };
        let v: serde_json::Value = serde_json::from_slice(&d).context("parsing /controller")?;
        Ok(v.get("brokerid").and_then(|b| b.as_i64()).map(|b| b as i32))
    }
}

impl Drop for ZkSession {
    fn drop(&mut self) {
        // closeSession, so the server forgets the session at once.
        let _ = self.call(-11, &[]);
    }
}
