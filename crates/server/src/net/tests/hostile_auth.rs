//! Hostile input on secure listeners (issue 11: "bad input over TLS and SASL … connection
//! closed with a logged reason, the node keeps serving everyone else"), on an SSL listener
//! (mutual TLS), a SASL_PLAINTEXT one and a SASL_SSL one: garbage instead of a ClientHello, a
//! ClientHello then garbage records, stalled handshakes, a flood of connections that never
//! finish their handshake (with and without `max.connections`), and every way of getting the
//! SASL exchange wrong. Each closes only its own connection with a log line, while a
//! well-behaved client keeps being served on one connection that is never closed.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kraftwerk_sasl::Mechanism;
use kraftwerk_tls::ClientAuth;
use rustls::pki_types::ServerName;

use super::sasl::{sasl_table, server_sasl};
use super::tls::{server_tls, settings};
use super::*;
use crate::net::tls::BoxStream;
use crate::net::{ClientSasl, ClientTls, ConnectionLimits};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Security {
    /// Mutual TLS, as Strimzi runs the controller listener.
    Ssl,
    SaslPlaintext,
    /// TLS without client certificates, SASL on top.
    SaslSsl,
}

use Security::{SaslPlaintext, SaslSsl, Ssl};

const ALL: [Security; 3] = [Ssl, SaslPlaintext, SaslSsl];

impl Security {
    fn tls(self) -> bool {
        matches!(self, Ssl | SaslSsl)
    }

    fn sasl(self) -> bool {
        matches!(self, SaslPlaintext | SaslSsl)
    }

    /// Kafka's `SecurityProtocol` name.
    fn protocol(self) -> &'static str {
        match self {
            Ssl => "SSL",
            SaslPlaintext => "SASL_PLAINTEXT",
            SaslSsl => "SASL_SSL",
        }
    }
}

/// A listener of `security` (PLAIN `controller`/`controller-secret` and SCRAM-SHA-512
/// `alice`/`alice-secret`, `sasl.server.max.receive.size` 524288), changed by `tweak`.
async fn secure_listener(
    security: Security,
    tweak: impl FnOnce(&mut ListenerConfig),
) -> (Listener, Arc<TestHandler>) {
    let client_auth = if security == Ssl {
        ClientAuth::Required
    } else {
        ClientAuth::None
    };
    let mut config = ListenerConfig {
        tls: security.tls().then(|| server_tls(client_auth)),
        sasl: security.sasl().then(|| server_sasl(0)),
        ..ListenerConfig::default()
    };
    tweak(&mut config);
    let handler = Arc::new(TestHandler::default());
    let listener = Listener::bind(
        "127.0.0.1:0".parse().unwrap(),
        config,
        sasl_table(),
        features(),
        handler.clone(),
    )
    .await
    .unwrap();
    (listener, handler)
}

fn client_tls(security: Security) -> ClientTls {
    let keystore = (security == Ssl).then_some("client");
    ClientTls {
        config: kraftwerk_tls::client_config(&settings(keystore, ClientAuth::None)).unwrap(),
    }
}

/// A Raft client that authenticates properly on a `security` listener, as `client_id`.
fn good_client(security: Security, addr: SocketAddr, client_id: &str) -> PeerClient {
    super::peer::client(addr, |cfg| {
        cfg.client_id = client_id.into();
        cfg.request_timeout_ms = 2_000;
        cfg.tls = security.tls().then(|| client_tls(security));
        cfg.sasl = security.sasl().then(|| ClientSasl {
            mechanism: Mechanism::Plain,
            username: "controller".into(),
            password: "controller-secret".into(),
        });
    })
}

/// A well-behaved client voting every 10 ms until stopped; every vote must be answered.
struct Good {
    answered: Arc<AtomicI32>,
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Good {
    fn start(peer: PeerClient) -> Good {
        let answered = Arc::new(AtomicI32::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, done) = (answered.clone(), stop.clone());
        let task = tokio::spawn(async move {
            let mut epoch = 0;
            while !done.load(Ordering::SeqCst) {
                let (_, response) = peer
                    .send(ApiKey::Vote, move |_| vote(epoch))
                    .await
                    .unwrap_or_else(|e| panic!("the good client was not served: {e:?}"));
                assert_eq!(vote_epoch(&response), epoch);
                epoch += 1;
                count.store(epoch, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        Good {
            answered,
            stop,
            task,
        }
    }

    fn answered(&self) -> i32 {
        self.answered.load(Ordering::SeqCst)
    }

    /// Waits until `more` further votes have been answered.
    async fn served(&self, more: i32) {
        let target = self.answered() + more;
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.answered() < target {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the good client stalled at {} votes",
                self.answered()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Stops it and checks that all its requests came over one connection: nothing the
    /// hostile clients did closed it.
    async fn finish(self, handler: &TestHandler, client_id: &str) {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.unwrap();
        let peers: std::collections::BTreeSet<SocketAddr> = handler
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.client_id == client_id)
            .map(|c| c.peer_addr)
            .collect();
        assert_eq!(peers.len(), 1, "the good client reconnected: {peers:?}");
    }
}

/// What the node logged on this test's thread (a current-thread runtime runs the listener
/// there too), at DEBUG and up, without colours.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::DEBUG)
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// Waits for a line containing every one of `needles` (the close is logged as the
    /// connection task ends, which may be just after the client saw the close).
    async fn line(&self, needles: &[&str]) -> String {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let found = self
                .text()
                .lines()
                .find(|l| needles.iter().all(|n| l.contains(n)))
                .map(str::to_owned);
            if let Some(line) = found {
                return line;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no log line with {needles:?} in:\n{}",
                self.text()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Deterministic junk (an LCG), so a failure replays.
fn junk(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) as u8
        })
        .collect()
}

/// A real TLS ClientHello for the fixtures' server (what a TLS client sends first).
fn client_hello() -> Vec<u8> {
    let config = client_tls(SaslSsl).config;
    let mut conn =
        rustls::ClientConnection::new(config, ServerName::try_from("127.0.0.1").unwrap()).unwrap();
    let mut out = Vec::new();
    while conn.wants_write() {
        conn.write_tls(&mut out).unwrap();
    }
    out
}

/// A hand-driven client over plain TCP or TLS (with the client certificate on an SSL
/// listener), for exact control over frames.
struct Wire {
    stream: BoxStream,
    buf: BytesMut,
}

impl Wire {
    async fn open(security: Security, addr: SocketAddr) -> Wire {
        let tcp = TcpStream::connect(addr).await.unwrap();
        let stream: BoxStream = if security.tls() {
            crate::net::tls::connect(&client_tls(security), "127.0.0.1", tcp)
                .await
                .unwrap()
        } else {
            Box::new(tcp)
        };
        Wire {
            stream,
            buf: BytesMut::new(),
        }
    }

    /// Writes `bytes`; the server may already have closed (that is what most cases expect).
    async fn send_bytes(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes).await;
        let _ = self.stream.flush().await;
    }

    async fn send(
        &mut self,
        api_key: ApiKey,
        version: i16,
        correlation_id: i32,
        body: RequestKind,
    ) {
        let frame = encode_request_frame(
            &request_header(api_key, version, correlation_id, "hostile"),
            &body,
        )
        .unwrap();
        self.send_bytes(&frame).await;
    }

    /// The next frame, or `None` once the server closed (a reset or a TLS error included).
    async fn recv_frame(&mut self) -> Option<Bytes> {
        let decoder = FrameDecoder::default();
        loop {
            if let Some(frame) = decoder.decode(&mut self.buf).unwrap() {
                return Some(frame);
            }
            match tokio::time::timeout(WAIT, self.stream.read_buf(&mut self.buf))
                .await
                .expect("the server neither answered nor closed in time")
            {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    async fn recv(&mut self, api_key: ApiKey, version: i16) -> ResponseKind {
        let frame = self
            .recv_frame()
            .await
            .expect("connection closed instead of answering");
        decode_response(api_key, version, frame).unwrap().2
    }

    async fn expect_closed(&mut self) {
        assert_eq!(
            self.recv_frame().await,
            None,
            "expected the server to close"
        );
    }

    async fn handshake(&mut self, mechanism: &str) -> SaslHandshakeResponse {
        let mut request = SaslHandshakeRequest::default();
        request.mechanism = StrBytes::from_string(mechanism.into());
        self.send(
            ApiKey::SaslHandshake,
            1,
            1,
            RequestKind::SaslHandshake(request),
        )
        .await;
        let ResponseKind::SaslHandshake(response) = self.recv(ApiKey::SaslHandshake, 1).await
        else {
            panic!("not a SaslHandshake response")
        };
        response
    }

    async fn send_authenticate(&mut self, auth_bytes: &[u8]) {
        let mut request = SaslAuthenticateRequest::default();
        request.auth_bytes = Bytes::copy_from_slice(auth_bytes);
        self.send(
            ApiKey::SaslAuthenticate,
            2,
            2,
            RequestKind::SaslAuthenticate(request),
        )
        .await;
    }

    async fn authenticate(&mut self, auth_bytes: &[u8]) -> SaslAuthenticateResponse {
        self.send_authenticate(auth_bytes).await;
        let ResponseKind::SaslAuthenticate(response) = self.recv(ApiKey::SaslAuthenticate, 2).await
        else {
            panic!("not a SaslAuthenticate response")
        };
        response
    }

    /// Expects SASL_AUTHENTICATION_FAILED (58), then the close.
    async fn authentication_fails(&mut self, auth_bytes: &[u8]) {
        let response = self.authenticate(auth_bytes).await;
        assert_eq!(response.error_code, 58, "{response:?}");
        self.expect_closed().await;
    }
}

/// Reads a raw TCP connection to its end: the server must close it in time (any TLS alert it
/// sends first is fine, a Kafka answer is not possible without a handshake).
async fn closed_raw(tcp: &mut TcpStream) {
    let mut sink = Vec::new();
    let read = tokio::time::timeout(WAIT, tcp.read_to_end(&mut sink)).await;
    assert!(read.is_ok(), "the server kept the connection open");
}

/// Nothing hostile reached the handler: every request it saw is a good client's.
fn only_the_good_were_served(handler: &TestHandler) {
    let seen = handler.seen.lock().unwrap();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|c| c.client_id.starts_with("good")),
        "a hostile client was served"
    );
}

/// Garbage instead of a ClientHello, a ClientHello then garbage records, garbage records
/// after a finished handshake, and a handshake that stalls: each is closed with a log line;
/// the stalled one after `connections.max.idle.ms`. On SASL_PLAINTEXT a ClientHello is itself
/// garbage (its first bytes read as a frame size far over `sasl.server.max.receive.size`).
#[tokio::test]
async fn bad_tls_closes_only_its_own_connection() {
    let (logs, _guard) = Logs::capture();
    for security in ALL {
        let (listener, handler) =
            secure_listener(security, |c| c.connections_max_idle_ms = 400).await;
        let addr = listener.local_addr();
        let listening = format!("local_addr={addr} security=\"{}\"", security.protocol());
        logs.line(&["listening", &listening]).await;
        let good = Good::start(good_client(security, addr, "good"));
        good.served(3).await;
        let hello = client_hello();

        if !security.tls() {
            let mut tcp = TcpStream::connect(addr).await.unwrap();
            tcp.write_all(&hello).await.unwrap();
            closed_raw(&mut tcp).await;
            logs.line(&[
                "closing connection",
                "larger than 524288 (sasl.server.max.receive.size)",
            ])
            .await;
            good.served(3).await;
            good.finish(&handler, "good").await;
            listener.shutdown(Duration::from_secs(1)).await;
            continue;
        }

        // Garbage, and a TLS record header announcing 16 KiB of garbage.
        for (seed, prefix) in [(1, &[][..]), (2, &[0x16, 0x03, 0x01, 0x40, 0x00][..])] {
            let mut tcp = TcpStream::connect(addr).await.unwrap();
            let mut bytes = prefix.to_vec();
            bytes.extend(junk(2048, seed));
            let _ = tcp.write_all(&bytes).await;
            closed_raw(&mut tcp).await;
            good.served(2).await;
        }
        logs.line(&[
            "INFO",
            "Failed authentication with /127.0.0.1 (TLS handshake failed",
        ])
        .await;

        // A real ClientHello, the server's answer, then garbage records: application data
        // before the handshake finished, an unknown record type, an oversized record.
        for garbage in [
            [&[0x17, 0x03, 0x03, 0x00, 0x20][..], &junk(32, 3)[..]].concat(),
            [&[0x63, 0x03, 0x03, 0x00, 0x10][..], &junk(16, 4)[..]].concat(),
            [&[0x16, 0x03, 0x03, 0xff, 0xff][..], &junk(1024, 5)[..]].concat(),
        ] {
            let mut tcp = TcpStream::connect(addr).await.unwrap();
            tcp.write_all(&hello).await.unwrap();
            let mut server_hello = [0u8; 64];
            let n = tokio::time::timeout(WAIT, tcp.read(&mut server_hello))
                .await
                .unwrap()
                .unwrap();
            assert!(n > 0 && server_hello[0] == 0x16, "no ServerHello");
            let _ = tcp.write_all(&garbage).await;
            closed_raw(&mut tcp).await;
            good.served(2).await;
        }

        // A finished handshake, then garbage where encrypted records should be (written under
        // the TLS layer, on the socket).
        let junk_record = [&[0x17, 0x03, 0x03, 0x00, 0x40][..], &junk(64, 6)[..]].concat();
        let tcp = TcpStream::connect(addr).await.unwrap();
        let mut tls = tokio_rustls::TlsConnector::from(client_tls(security).config)
            .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
            .await
            .unwrap();
        // Let the server finish its side (it reads the client's Finished and certificate).
        tokio::time::sleep(Duration::from_millis(50)).await;
        let tcp = tls.get_mut().0;
        tcp.write_all(&junk_record).await.unwrap();
        closed_raw(tcp).await;
        logs.line(&["closing connection", "I/O error"]).await;
        good.served(2).await;

        // A ClientHello, then silence: closed after connections.max.idle.ms, not before.
        let mut stalled = TcpStream::connect(addr).await.unwrap();
        let started = tokio::time::Instant::now();
        stalled.write_all(&hello).await.unwrap();
        closed_raw(&mut stalled).await;
        let after = started.elapsed();
        assert!(
            after >= Duration::from_millis(380) && after < Duration::from_secs(3),
            "{security:?}: a stalled handshake closed after {after:?}"
        );
        logs.line(&["TLS handshake not finished within connections.max.idle.ms"])
            .await;
        if security.sasl() {
            // TLS finished, SASL never starts: closed as idle.
            let mut wire = Wire::open(security, addr).await;
            let started = tokio::time::Instant::now();
            wire.expect_closed().await;
            assert!(started.elapsed() >= Duration::from_millis(380));
        }
        good.served(3).await;
        only_the_good_were_served(&handler);
        good.finish(&handler, "good").await;
        listener.shutdown(Duration::from_secs(1)).await;
    }
}

/// A request frame, encoded as a client would send it.
fn frame_of(api_key: ApiKey, version: i16, body: RequestKind) -> Vec<u8> {
    encode_request_frame(&request_header(api_key, version, 1, "hostile"), &body)
        .unwrap()
        .to_vec()
}

fn handshake_frame(mechanism: &'static str) -> Vec<u8> {
    let mut request = SaslHandshakeRequest::default();
    request.mechanism = StrBytes::from_static_str(mechanism);
    frame_of(
        ApiKey::SaslHandshake,
        1,
        RequestKind::SaslHandshake(request),
    )
}

/// `n` connections that start a handshake and never finish it: silent ones, half a
/// ClientHello, a whole one; on SASL listeners also a SaslHandshake then half a
/// SaslAuthenticate (over a finished TLS handshake on SASL_SSL). Those the server refuses
/// are kept too (they are closed on the server's side).
async fn flood(security: Security, addr: SocketAddr, n: usize) -> Vec<BoxStream> {
    let hello = client_hello();
    let mut sasl_start = handshake_frame("PLAIN");
    sasl_start.extend_from_slice(&[0, 0, 0, 100, 0, 36, 0, 2]);
    let mut streams: Vec<BoxStream> = Vec::with_capacity(n);
    for i in 0..n {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        let first: &[u8] = match (security, i % 4) {
            (_, 0) => &[],
            (SaslPlaintext, _) => &sasl_start,
            (_, 1) => &hello[..hello.len() / 2],
            (_, 2) | (Ssl, _) => &hello,
            (SaslSsl, _) => {
                // An Err is a connection refused over the cap.
                let config = client_tls(security);
                if let Ok(mut tls) = crate::net::tls::connect(&config, "127.0.0.1", tcp).await {
                    let _ = tls.write_all(&sasl_start).await;
                    let _ = tls.flush().await;
                    streams.push(tls);
                }
                continue;
            }
        };
        let _ = tcp.write_all(first).await;
        streams.push(Box::new(tcp));
    }
    streams
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Without connection caps, 200 connections that never finish their TLS or SASL handshake
/// are all held, and a good client is served before, during and after, and a newcomer gets
/// in and is served while they are there.
#[tokio::test]
async fn a_handshake_flood_does_not_starve_good_clients() {
    let (_logs, _guard) = Logs::capture();
    for security in ALL {
        let (listener, handler) = secure_listener(security, |_| {}).await;
        let addr = listener.local_addr();
        let good = Good::start(good_client(security, addr, "good"));
        good.served(3).await;
        let flood = flood(security, addr, 200).await;
        assert_eq!(flood.len(), 200);
        wait_until("the flood is accepted", || listener.quotas().open() == 201).await;
        good.served(10).await;
        let late = good_client(security, addr, "good-late");
        let (_, response) = late.send(ApiKey::Vote, |_| vote(77)).await.unwrap();
        assert_eq!(vote_epoch(&response), 77, "{security:?}");
        drop(flood);
        wait_until("the flood is gone", || listener.quotas().open() == 2).await;
        good.served(5).await;
        late.send(ApiKey::Vote, |_| vote(78)).await.unwrap();
        only_the_good_were_served(&handler);
        good.finish(&handler, "good").await;
        listener.shutdown(Duration::from_secs(1)).await;
    }
}

/// With `max.connections=4` a flood takes the three free slots and the rest is refused at
/// once; so is a good client while the cap is full. Once `connections.max.idle.ms` closed
/// the stalled handshakes, a good client gets in and is served; the one that was in before
/// the flood is served throughout.
#[tokio::test]
async fn a_handshake_flood_over_the_cap_is_refused_and_its_slots_come_back() {
    let (logs, _guard) = Logs::capture();
    for security in ALL {
        let (listener, handler) = secure_listener(security, |c| {
            c.connections_max_idle_ms = 1_500;
            c.limits = ConnectionLimits {
                max_connections: 4,
                ..ConnectionLimits::default()
            };
        })
        .await;
        let addr = listener.local_addr();
        let good = Good::start(good_client(security, addr, "good"));
        good.served(3).await;
        let flood = flood(security, addr, 200).await;
        wait_until("the cap is full", || listener.quotas().open() == 4).await;
        logs.line(&["INFO", "rejected connection"]).await;
        // Over the cap: closed at once, whoever it is — well before connections.max.idle.ms
        // (1.5 s) would have closed a connection that was let in.
        let mut refused = TcpStream::connect(addr).await.unwrap();
        let started = tokio::time::Instant::now();
        closed_raw(&mut refused).await;
        assert!(
            started.elapsed() < Duration::from_millis(1_400),
            "{security:?}: closed after {:?}, as if by the idle timeout",
            started.elapsed()
        );
        good.served(10).await;
        wait_until("the stalled handshakes are closed", || {
            listener.quotas().open() == 1
        })
        .await;
        let late = good_client(security, addr, "good-late");
        let (_, response) = late.send(ApiKey::Vote, |_| vote(88)).await.unwrap();
        assert_eq!(vote_epoch(&response), 88, "{security:?}");
        drop(flood);
        good.served(3).await;
        only_the_good_were_served(&handler);
        good.finish(&handler, "good").await;
        listener.shutdown(Duration::from_secs(1)).await;
    }
}

/// The nonce of a SCRAM server-first message (`r=<nonce>,s=…,i=…`).
fn server_nonce(server_first: &[u8]) -> String {
    let text = std::str::from_utf8(server_first).unwrap();
    text.strip_prefix("r=")
        .and_then(|r| r.split(',').next())
        .unwrap()
        .to_owned()
}

/// A 64-byte proof of zeros, base64 (SCRAM-SHA-512's length).
fn zero_proof() -> String {
    format!("{}==", "A".repeat(86))
}

/// Every way of getting SASL wrong closes that connection, after Kafka's answer when there is
/// one, with a log line; the good client is served throughout.
#[tokio::test]
async fn bad_sasl_closes_only_its_own_connection() {
    let (logs, _guard) = Logs::capture();
    for security in [SaslPlaintext, SaslSsl] {
        let (listener, handler) = secure_listener(security, |_| {}).await;
        let addr = listener.local_addr();
        let good = Good::start(good_client(security, addr, "good"));
        good.served(3).await;
        let failed = "Failed authentication with /127.0.0.1";

        // SaslAuthenticate before any SaslHandshake: no answer, closed.
        let mut w = Wire::open(security, addr).await;
        w.send_authenticate(b"\0controller\0controller-secret")
            .await;
        w.expect_closed().await;
        logs.line(&["INFO", failed, "SASL_AUTHENTICATE during SASL handshake"])
            .await;

        // A truncated SaslAuthenticate: the size prefix promises more than is sent.
        let mut w = Wire::open(security, addr).await;
        assert_eq!(w.handshake("PLAIN").await.error_code, 0);
        w.send_bytes(&[0, 0, 0, 100, 0, 36, 0, 2, 0, 0, 0, 2]).await;
        let _ = w.stream.shutdown().await;
        w.expect_closed().await;
        logs.line(&["closing connection", "in the middle of a frame"])
            .await;

        // 1 MiB of auth_bytes, over sasl.server.max.receive.size: refused on the size prefix,
        // closed before a tenth of it was sent.
        let mut w = Wire::open(security, addr).await;
        assert_eq!(w.handshake("PLAIN").await.error_code, 0);
        let mut big = SaslAuthenticateRequest::default();
        big.auth_bytes = Bytes::from(vec![b'x'; 1 << 20]);
        let big = frame_of(
            ApiKey::SaslAuthenticate,
            2,
            RequestKind::SaslAuthenticate(big),
        );
        w.send_bytes(&big[..64 * 1024]).await;
        w.expect_closed().await;
        logs.line(&[
            "closing connection",
            "larger than 524288 (sasl.server.max.receive.size)",
        ])
        .await;
        good.served(2).await;

        // Mechanisms that are not enabled: UNSUPPORTED_SASL_MECHANISM with the enabled list.
        let long = "X".repeat(10_000);
        for name in ["GSSAPI", "SCRAM-SHA-256", "", long.as_str()] {
            let mut w = Wire::open(security, addr).await;
            let answer = w.handshake(name).await;
            assert_eq!(answer.error_code, 33, "{name:.20}");
            let listed: Vec<&str> = answer.mechanisms.iter().map(|m| m.as_str()).collect();
            assert_eq!(listed, ["PLAIN", "SCRAM-SHA-512"]);
            w.expect_closed().await;
        }
        logs.line(&["INFO", failed, "Unsupported SASL mechanism GSSAPI"])
            .await;
        assert!(!logs.text().contains(&long[..100]), "a bounded log line");

        // Random auth_bytes for PLAIN and for SCRAM's first message; malformed first messages.
        for (mechanism, auth_bytes) in [
            ("PLAIN", junk(300, 7)),
            ("PLAIN", Vec::new()),
            ("SCRAM-SHA-512", junk(300, 8)),
            ("SCRAM-SHA-512", b"n,,n=al\xffice,r=abc".to_vec()),
            ("SCRAM-SHA-512", b"n,,n=alice".to_vec()),
            // (`tokenauth=true` with an unknown token id goes on with a made-up credential, as
            // an unknown user does, and fails at the client's proof.)
        ] {
            let mut w = Wire::open(security, addr).await;
            assert_eq!(w.handshake(mechanism).await.error_code, 0);
            w.authentication_fails(&auth_bytes).await;
        }
        logs.line(&[failed, "invalid client first message"]).await;

        // A good SCRAM first message, then a bad final one: random, a nonce that is not the
        // server's, no proof, a proof of the wrong length, not UTF-8.
        let finals: [fn(&str) -> Vec<u8>; 5] = [
            |_| junk(300, 9),
            |_| format!("c=biws,r=hostile-nonce-elsewhere,p={}", zero_proof()).into_bytes(),
            |nonce| format!("c=biws,r={nonce}").into_bytes(),
            |nonce| format!("c=biws,r={nonce},p=AAAA").into_bytes(),
            |_| b"c=biws,r=\xff\xfe,p=AAAA".to_vec(),
        ];
        for last in finals {
            let mut w = Wire::open(security, addr).await;
            assert_eq!(w.handshake("SCRAM-SHA-512").await.error_code, 0);
            let first = w.authenticate(b"n,,n=alice,r=hostile-nonce").await;
            assert_eq!(first.error_code, 0);
            w.authentication_fails(&last(&server_nonce(&first.auth_bytes)))
                .await;
        }
        logs.line(&[failed, "invalid nonce"]).await;

        // A second SaslHandshake in the middle of the exchange, and a request: closed.
        let mut w = Wire::open(security, addr).await;
        assert_eq!(w.handshake("SCRAM-SHA-512").await.error_code, 0);
        assert_eq!(w.authenticate(b"n,,n=alice,r=abc").await.error_code, 0);
        w.send_bytes(&handshake_frame("SCRAM-SHA-512")).await;
        w.expect_closed().await;
        logs.line(&[failed, "SASL_HANDSHAKE during SASL authentication"])
            .await;
        let mut w = Wire::open(security, addr).await;
        assert_eq!(w.handshake("PLAIN").await.error_code, 0);
        w.send(ApiKey::Vote, 1, 3, vote(1)).await;
        w.expect_closed().await;
        logs.line(&[failed, "VOTE during SASL authentication"])
            .await;

        // A v0 handshake (raw tokens follow), then a junk token.
        let mut w = Wire::open(security, addr).await;
        let mut v0 = SaslHandshakeRequest::default();
        v0.mechanism = StrBytes::from_static_str("PLAIN");
        w.send(ApiKey::SaslHandshake, 0, 1, RequestKind::SaslHandshake(v0))
            .await;
        w.recv(ApiKey::SaslHandshake, 0).await;
        let mut token = BytesMut::new();
        write_frame(&junk(50, 10), &mut token);
        w.send_bytes(&token).await;
        w.expect_closed().await;

        good.served(3).await;
        only_the_good_were_served(&handler);
        good.finish(&handler, "good").await;
        listener.shutdown(Duration::from_secs(1)).await;
    }
}

/// A failed login is logged at INFO as Kafka's `Selector` does ("Failed authentication with
/// /ADDRESS (…)"), and the password sent is in no log line at any level, whichever way it
/// was sent.
#[tokio::test]
async fn failed_logins_are_logged_at_info_without_the_password() {
    const SECRET: &str = "hunter2-never-logged";
    let (logs, _guard) = Logs::capture();
    for security in [SaslPlaintext, SaslSsl] {
        let (listener, handler) = secure_listener(security, |_| {}).await;
        let addr = listener.local_addr();
        for (mechanism, user) in [
            (Mechanism::Plain, "controller"),
            (Mechanism::ScramSha512, "alice"),
        ] {
            let peer = super::peer::client(addr, |cfg| {
                cfg.tls = security.tls().then(|| client_tls(security));
                cfg.sasl = Some(ClientSasl {
                    mechanism,
                    username: user.into(),
                    password: SECRET.into(),
                });
            });
            let err = peer.send(ApiKey::Vote, |_| vote(1)).await.unwrap_err();
            assert!(
                matches!(err, PeerError::Authentication { .. }),
                "{security:?} {mechanism:?}: {err:?}"
            );
        }
        // PLAIN messages that carry the secret but do not parse.
        for auth_bytes in [
            format!("\0controller\0{SECRET}\0extra"),
            format!("controller\0{SECRET}"),
            SECRET.to_owned(),
        ] {
            let mut w = Wire::open(security, addr).await;
            assert_eq!(w.handshake("PLAIN").await.error_code, 0);
            w.authentication_fails(auth_bytes.as_bytes()).await;
        }
        // A 60 KB user name (the client's text): the log line stays short.
        let mut w = Wire::open(security, addr).await;
        assert_eq!(w.handshake("PLAIN").await.error_code, 0);
        let long_user = "u".repeat(60_000);
        w.authentication_fails(format!("\0{long_user}\0{SECRET}").as_bytes())
            .await;
        let line = logs.line(&["INFO", "uuuuuuuu…"]).await;
        assert!(line.len() < 1_000, "a log line of {} bytes", line.len());
        let line = logs
            .line(&[
                "INFO",
                "Failed authentication with /127.0.0.1",
                "Invalid username or password",
                "\"controller\"",
            ])
            .await;
        assert!(!line.contains(SECRET), "{line}");
        logs.line(&[
            "INFO",
            "Failed authentication with /127.0.0.1",
            "invalid credentials with SASL mechanism SCRAM-SHA-512",
        ])
        .await;
        logs.line(&[
            "INFO",
            "Failed authentication with /127.0.0.1",
            "expected 3 tokens",
        ])
        .await;
        assert!(handler.seen.lock().unwrap().is_empty());
        listener.shutdown(Duration::from_secs(1)).await;
    }
    let text = logs.text();
    assert!(text.contains("Failed authentication"));
    assert!(!text.contains(SECRET), "a password in the log:\n{text}");
}
