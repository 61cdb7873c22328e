//! `tls`: the controller listener on SSL with mutual TLS (issue 11 items 1 and 2). A CA, a
//! PKCS12 key store per node and a trust store are made with `openssl` and the JDK's `keytool` at
//! scenario time, as Kafka's security guide makes them; the controllers (any mix of
//! `IT_CONTROLLERS`) serve `CONTROLLER` on SSL with `ssl.client.auth=required` through
//! `listener.name.controller.ssl.*` keys, and dial each other over TLS; a Java broker reaches
//! them over SSL with its own certificate. Checked: the quorum through `kafka-metadata-quorum`
//! over SSL, the broker registered and unfenced, records each way; refused: a plaintext
//! ApiVersions, a client without a certificate and one whose certificate no trusted CA signed.

use anyhow::{bail, Context, Result};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use super::e2e::single_broker_props;
use super::{assert_quorum_status, assert_same_messages, consume, create_topic, messages, produce};
use crate::certs::{self, client_config, make_certificates, Props};
use crate::cluster::{props, Cluster, ClusterSpec, Role, FIRST_BROKER_ID};
use crate::env::{ControllerKind, Env};
use crate::kafka::args;
use crate::util;

/// The controllers' TLS keys ([`certs::controller_mtls_props`]) and the broker's for its
/// controller channel.
pub(super) fn tls_props(dir: &Path) -> (Props, Props) {
    let controller = certs::controller_mtls_props(dir);
    let mut broker = single_broker_props();
    broker.extend(props(&[(
        "listener.security.protocol.map",
        "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
    )]));
    broker.extend(certs::store_props(dir, "listener.name.controller."));
    (controller, broker)
}

/// The scenario body.
pub fn run(env: &Env) -> Result<()> {
    if env.controllers.len() < 3 {
        bail!(
            "tls needs 3 controllers, IT_CONTROLLERS has {}",
            env.controllers.len()
        );
    }
    let start = std::time::Instant::now();
    let mut ids: Vec<i32> = (1..=env.controllers.len() as i32).collect();
    ids.push(FIRST_BROKER_ID);
    let dir = make_certificates(env, &ids)?;
    let (controller_props, broker_props) = tls_props(&dir);
    let spec = ClusterSpec {
        controllers: env.controllers.clone(),
        brokers: 1,
        controller_props,
        broker_props,
    };
    let mut c = Cluster::new(env, &spec)?;
    c.controller_client_config = Some(client_config(&dir, "admin", Some("admin"))?);
    c.format_all()?;
    c.start_controllers()?;
    let status = c.wait_quorum(Duration::from_secs(90))?;
    env.step(&format!(
        "quorum over mutual TLS: leader {} epoch {} (kafka-metadata-quorum over SSL with the \
         admin certificate)",
        status.leader_id, status.leader_epoch
    ));
    c.start_brokers()?;
    c.wait_broker_ready(FIRST_BROKER_ID, Duration::from_secs(120))?;
    let (s, raw) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    env.show("kafka-metadata-quorum describe --status (SSL)", &raw);
    assert_quorum_status(&s, &c, &[FIRST_BROKER_ID])?;
    env.step("broker 101 registered over its SSL controller channel and is unfenced");

    let boot = c.broker_bootstrap();
    create_topic(env, &boot, "tls-topic", 3, 1, &[])?;
    let sent = messages("tls", 200);
    produce(env, &boot, "tls-topic", &sent, &[])?;
    let got = consume(env, &boot, "tls-topic", "tls-group", sent.len())?;
    assert_same_messages("tls-topic", &sent, &got)?;

    refused_clients(env, &c, &dir)?;
    c.check_alive()?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(30))?;
    println!("tls_scenario_ms={}", start.elapsed().as_millis());
    Ok(())
}

/// What Kafka's `Selector` and kraftwerk's listener log for a refused client.
const FAILED_AUTHENTICATION: &str = "Failed authentication with /";

/// Clients the SSL listener must refuse: a plaintext ApiVersions gets no Kafka answer; a TLS
/// client without a certificate and one with a self-signed certificate fail their tool, and
/// each kraftwerk controller logs the failed authentication (Kafka's line, `Failed
/// authentication with /ADDRESS (...)`).
fn refused_clients(env: &Env, c: &Cluster, dir: &Path) -> Result<()> {
    for n in &c.controllers {
        if let Some(answer) = plaintext_api_versions(&n.addr())? {
            bail!(
                "{} answered a plaintext ApiVersions on its SSL listener with a Kafka frame \
                 ({answer})",
                n.label()
            );
        }
    }
    env.step("a plaintext ApiVersions gets no Kafka answer from any controller");
    let before: Vec<usize> = c
        .controllers
        .iter()
        .map(|n| n.log_count(FAILED_AUTHENTICATION))
        .collect();
    for (name, keystore) in [("no-certificate", None), ("rogue", Some("rogue"))] {
        let conf = client_config(dir, name, keystore)?;
        let a = args(&[
            "--bootstrap-controller",
            &c.controllers[0].addr(),
            "--command-config",
            &conf.to_string_lossy(),
            "describe",
            "--status",
        ]);
        let r = env.tool("kafka-metadata-quorum", &a, None, Duration::from_secs(60))?;
        if r.ok() {
            bail!(
                "kafka-metadata-quorum as the {name} client succeeded against an mTLS-required \
                 listener: {}",
                util::one_line(&r.stdout, 300)
            );
        }
        env.step(&format!(
            "the {name} client is refused: {}",
            util::one_line(
                r.stderr
                    .lines()
                    .find(|l| l.contains("SSL") || l.contains("Exception"))
                    .unwrap_or(&r.stderr),
                200
            )
        ));
    }
    let first = &c.controllers[0];
    if matches!(first.role, Role::Controller(ControllerKind::Kraftwerk))
        && first.log_count(FAILED_AUTHENTICATION) <= before[0]
    {
        bail!(
            "{} did not log the refused TLS clients (`{FAILED_AUTHENTICATION}`)",
            first.label()
        );
    }
    Ok(())
}

/// Sends ApiVersions v0 in plaintext and reads what comes back for 5 s: `Some(description)` if
/// it is a Kafka response frame carrying our correlation id, `None` for anything else (a TLS
/// alert, a close).
pub(super) fn plaintext_api_versions(addr: &str) -> Result<Option<String>> {
    const CORRELATION_ID: i32 = 0x4b57_0001;
    let mut s = TcpStream::connect(addr).with_context(|| format!("connecting to {addr}"))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let client_id = b"tls-probe";
    let mut body = Vec::new();
    body.extend_from_slice(&18i16.to_be_bytes()); // ApiVersions
    body.extend_from_slice(&0i16.to_be_bytes()); // v0
    body.extend_from_slice(&CORRELATION_ID.to_be_bytes());
    body.extend_from_slice(&(client_id.len() as i16).to_be_bytes());
    body.extend_from_slice(client_id);
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend(body);
    if s.write_all(&frame).is_err() {
        return Ok(None);
    }
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
        if got.len() >= 8 {
            break;
        }
    }
    if got.len() >= 8 && got[4..8] == CORRELATION_ID.to_be_bytes() {
        return Ok(Some(format!("{} bytes", got.len())));
    }
    Ok(None)
}
