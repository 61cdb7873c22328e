//! A small blocking Kafka protocol client (one TCP connection, one request in flight) for the
//! benchmark's simulated brokers and probes: length-prefixed frames, request header v1/v2,
//! bodies encoded and decoded with the `kafka-protocol` crate.
//!
//! A connection is plaintext or TLS ([`Transport`]; the `-tls` benchmark systems, whose
//! controller listener is on SSL with `ssl.client.auth=required`): with TLS the handshake is
//! part of [`Conn::connect_via`], as a Kafka client's `SslTransportLayer` finishes it before
//! the first request.
//!
//! Every new connection starts with ApiVersions, as Kafka's `NetworkClient` does with
//! `discoverBrokerVersions=true`; [`Conn::version`] then picks the highest version both sides
//! speak, capped by what the benchmark was written against.

use anyhow::{anyhow, bail, Context, Result};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// Kafka error codes the benchmark reacts to (Kafka's `Errors` enum).
pub mod errors {
    use kafka_protocol::error::ResponseError;

    /// NONE.
    pub const NONE: i16 = 0;
    /// TOPIC_ALREADY_EXISTS.
    pub const TOPIC_ALREADY_EXISTS: i16 = ResponseError::TopicAlreadyExists.code();
    pub use kraftwerk_protocol::constants::NOT_CONTROLLER;
    /// STALE_BROKER_EPOCH.
    pub const STALE_BROKER_EPOCH: i16 = ResponseError::StaleBrokerEpoch.code();
}

/// How a [`Conn`] reaches its server: Kafka's `security.protocol` PLAINTEXT or SSL.
#[derive(Clone, Debug, Default)]
pub enum Transport {
    /// PLAINTEXT.
    #[default]
    Plaintext,
    /// SSL with this client configuration (trust store, and the client certificate a server
    /// with `ssl.client.auth=required` asks for): `crate::certs::rustls_client`.
    Tls(Arc<rustls::ClientConfig>),
}

impl Transport {
    /// `PLAINTEXT` or `SSL`, for log lines.
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Plaintext => "PLAINTEXT",
            Transport::Tls(_) => "SSL",
        }
    }
}

/// The byte stream under a [`Conn`].
enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => &s.sock,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// Completes the TLS handshake with the server at `sa` over `tcp` (its timeouts apply); the
/// server's certificate must name `sa`'s IP address.
fn tls_handshake(
    config: &Arc<rustls::ClientConfig>,
    sa: &SocketAddr,
    mut tcp: TcpStream,
) -> Result<Stream> {
    let name = rustls::pki_types::ServerName::IpAddress(sa.ip().into());
    let mut tls = rustls::ClientConnection::new(config.clone(), name)
        .with_context(|| format!("TLS client for {sa}"))?;
    while tls.is_handshaking() {
        tls.complete_io(&mut tcp)
            .with_context(|| format!("TLS handshake with {sa}"))?;
    }
    Ok(Stream::Tls(Box::new(rustls::StreamOwned::new(tls, tcp))))
}

/// One connection to a Kafka server (controller or broker listener).
pub struct Conn {
    stream: Stream,
    correlation_id: i32,
    client_id: StrBytes,
    /// Server's `(min, max)` version per api key, from ApiVersions.
    versions: HashMap<i16, (i16, i16)>,
    /// The address connected to.
    pub addr: String,
}

impl Conn {
    /// Connects to `addr` (`host:port`) in plaintext: [`Conn::connect_via`] with
    /// [`Transport::Plaintext`].
    pub fn connect(addr: &str, client_id: &str, timeout: Duration) -> Result<Conn> {
        Conn::connect_via(addr, client_id, timeout, &Transport::Plaintext)
    }

    /// Connects to `addr` (`host:port`) within `timeout` over `transport` (for TLS, the
    /// handshake too, each of its reads and writes within `timeout`), sets `timeout` as the
    /// read/write timeout of every later request, and exchanges ApiVersions (v3).
    ///
    /// Errors: connection refused/timed out, a failed TLS handshake, or an ApiVersions error
    /// code.
    pub fn connect_via(
        addr: &str,
        client_id: &str,
        timeout: Duration,
        transport: &Transport,
    ) -> Result<Conn> {
        let sa: SocketAddr = addr
            .parse()
            .with_context(|| format!("bad address {addr}"))?;
        let tcp = TcpStream::connect_timeout(&sa, timeout)
            .with_context(|| format!("connecting to {addr}"))?;
        tcp.set_nodelay(true)?;
        tcp.set_read_timeout(Some(timeout))?;
        tcp.set_write_timeout(Some(timeout))?;
        let stream = match transport {
            Transport::Plaintext => Stream::Plain(tcp),
            Transport::Tls(config) => tls_handshake(config, &sa, tcp)?,
        };
        let mut c = Conn {
            stream,
            correlation_id: 0,
            client_id: StrBytes::from_string(client_id.to_string()),
            versions: HashMap::new(),
            addr: addr.to_string(),
        };
        let mut req = ApiVersionsRequest::default();
        req.client_software_name = StrBytes::from_static_str("kraftwerk-bench");
        req.client_software_version = StrBytes::from_static_str("0.1");
        let resp = c.call(&req, 3)?;
        if resp.error_code != errors::NONE {
            bail!("ApiVersions to {addr}: error {}", resp.error_code);
        }
        for k in resp.api_keys {
            c.versions.insert(k.api_key, (k.min_version, k.max_version));
        }
        Ok(c)
    }

    /// Changes the read timeout for the following requests (e.g. a long CreateTopics).
    pub fn set_timeout(&self, timeout: Duration) -> Result<()> {
        self.stream.tcp().set_read_timeout(Some(timeout))?;
        Ok(())
    }

    /// The highest version of `key` that the server supports and is at most `max`.
    ///
    /// Errors if the server does not serve `key` or has no version ≤ `max`.
    pub fn version(&self, key: ApiKey, max: i16) -> Result<i16> {
        let (lo, hi) = self
            .versions
            .get(&(key as i16))
            .copied()
            .ok_or_else(|| anyhow!("{} does not serve {key:?}", self.addr))?;
        let v = hi.min(max);
        if v < lo {
            bail!(
                "{} serves {key:?} only from v{lo}, we speak up to v{max}",
                self.addr
            );
        }
        Ok(v)
    }

    /// Sends `req` at `version` and waits for its response.
    ///
    /// Errors: I/O (including the read timeout), a correlation id mismatch, or a body that does
    /// not decode. Kafka error codes inside the body are the caller's business.
    pub fn call<R: Request>(&mut self, req: &R, version: i16) -> Result<R::Response> {
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let mut header = RequestHeader::default();
        header.request_api_key = R::KEY;
        header.request_api_version = version;
        header.correlation_id = self.correlation_id;
        header.client_id = Some(self.client_id.clone());
        let mut buf = BytesMut::with_capacity(256);
        buf.put_i32(0);
        header.encode(&mut buf, R::header_version(version))?;
        req.encode(&mut buf, version)?;
        let len = (buf.len() - 4) as i32;
        buf[0..4].copy_from_slice(&len.to_be_bytes());
        // With TLS, flush sends what rustls still buffers.
        self.stream
            .write_all(&buf)
            .and_then(|()| self.stream.flush())
            .with_context(|| format!("sending api {} to {}", R::KEY, self.addr))?;
        let mut len = [0u8; 4];
        self.stream
            .read_exact(&mut len)
            .with_context(|| format!("reading api {} response from {}", R::KEY, self.addr))?;
        let len = i32::from_be_bytes(len);
        if !(0..=256 << 20).contains(&len) {
            bail!("response frame of {len} bytes from {}", self.addr);
        }
        let mut body = vec![0u8; len as usize];
        self.stream
            .read_exact(&mut body)
            .with_context(|| format!("reading api {} response from {}", R::KEY, self.addr))?;
        let mut body = Bytes::from(body);
        let rh = ResponseHeader::decode(&mut body, R::Response::header_version(version))?;
        if rh.correlation_id != self.correlation_id {
            bail!(
                "correlation id {} from {}, expected {}",
                rh.correlation_id,
                self.addr,
                self.correlation_id
            );
        }
        let resp = R::Response::decode(&mut body, version)?;
        if body.has_remaining() {
            bail!(
                "{} trailing bytes in api {} response",
                body.remaining(),
                R::KEY
            );
        }
        Ok(resp)
    }
}
