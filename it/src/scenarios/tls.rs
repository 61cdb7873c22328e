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
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::e2e::single_broker_props;
use super::{assert_quorum_status, assert_same_messages, consume, create_topic, messages, produce};
use crate::cluster::{props, Cluster, ClusterSpec, Role, FIRST_BROKER_ID, NODE_ID_TOKEN};
use crate::env::{ControllerKind, Env};
use crate::kafka::args;
use crate::util;

/// The password of every store made here.
pub(super) const PASSWORD: &str = "it-secret";

/// Runs a certificate tool; a missing tool or a failure is the scenario's failure.
fn run_tool(dir: &Path, program: &str, a: &[&str]) -> Result<()> {
    let out = Command::new(program)
        .args(a)
        .current_dir(dir)
        .output()
        .with_context(|| {
            format!("running {program} (the tls scenario needs openssl and keytool)")
        })?;
    if !out.status.success() {
        bail!(
            "{program} {} failed: {}",
            a.join(" "),
            util::one_line(&String::from_utf8_lossy(&out.stderr), 400)
        );
    }
    Ok(())
}

/// A key pair in `<dir>/<name>.p12` (PKCS12, alias `<name>`), subject `CN=<name>,OU=it,
/// O=kraftwerk`, signed by the CA in `dir` (or self-signed when `signed` is false), with SAN
/// 127.0.0.1 and localhost so that `ssl.endpoint.identification.algorithm=https` passes.
pub(super) fn key_store(dir: &Path, name: &str, signed: bool) -> Result<PathBuf> {
    let p12 = format!("{name}.p12");
    let dname = format!("CN={name},OU=it,O=kraftwerk");
    run_tool(
        dir,
        "keytool",
        &[
            "-genkeypair",
            "-alias",
            name,
            "-keyalg",
            "RSA",
            "-keysize",
            "2048",
            "-validity",
            "30",
            "-dname",
            &dname,
            "-ext",
            "SAN=IP:127.0.0.1,DNS:localhost",
            "-storetype",
            "PKCS12",
            "-keystore",
            &p12,
            "-storepass",
            PASSWORD,
            "-keypass",
            PASSWORD,
        ],
    )?;
    if signed {
        let csr = format!("{name}.csr");
        let crt = format!("{name}.crt");
        run_tool(
            dir,
            "keytool",
            &[
                "-certreq",
                "-alias",
                name,
                "-keystore",
                &p12,
                "-storepass",
                PASSWORD,
                "-file",
                &csr,
            ],
        )?;
        run_tool(
            dir,
            "openssl",
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &crt,
                "-days",
                "30",
                "-extfile",
                "san.cnf",
            ],
        )?;
        for (alias, file) in [("ca", "ca.crt"), (name, crt.as_str())] {
            run_tool(
                dir,
                "keytool",
                &[
                    "-importcert",
                    "-noprompt",
                    "-alias",
                    alias,
                    "-file",
                    file,
                    "-keystore",
                    &p12,
                    "-storepass",
                    PASSWORD,
                ],
            )?;
        }
    }
    Ok(dir.join(p12))
}

/// The CA, the trust store, a key store per node id, one for the admin tools and a rogue one
/// (self-signed). Returns the directory.
pub(super) fn make_certificates(env: &Env, ids: &[i32]) -> Result<PathBuf> {
    let dir = env.work.join("tls");
    std::fs::create_dir_all(&dir)?;
    run_tool(
        &dir,
        "openssl",
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "30",
            "-subj",
            "/CN=kraftwerk-it-ca",
        ],
    )?;
    std::fs::write(
        dir.join("san.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )?;
    run_tool(
        &dir,
        "keytool",
        &[
            "-importcert",
            "-noprompt",
            "-alias",
            "ca",
            "-file",
            "ca.crt",
            "-storetype",
            "PKCS12",
            "-keystore",
            "truststore.p12",
            "-storepass",
            PASSWORD,
        ],
    )?;
    for id in ids {
        key_store(&dir, &format!("node-{id}"), true)?;
    }
    key_store(&dir, "admin", true)?;
    key_store(&dir, "rogue", false)?;
    env.step(&format!(
        "made a CA, a trust store and PKCS12 key stores for nodes {ids:?}, the admin tools and a \
         rogue client (self-signed) in {}",
        dir.display()
    ));
    Ok(dir)
}

/// A client `--command-config`: SSL with the trust store and, if given, a key store.
pub(super) fn client_config(dir: &Path, name: &str, keystore: Option<&str>) -> Result<PathBuf> {
    let mut text = format!(
        "security.protocol=SSL\nssl.truststore.type=PKCS12\nssl.truststore.location={}\n\
         ssl.truststore.password={PASSWORD}\n",
        dir.join("truststore.p12").display()
    );
    if let Some(ks) = keystore {
        text.push_str(&format!(
            "ssl.keystore.type=PKCS12\nssl.keystore.location={}\nssl.keystore.password={PASSWORD}\n\
             ssl.key.password={PASSWORD}\n",
            dir.join(format!("{ks}.p12")).display()
        ));
    }
    // Refused clients should fail in seconds, not after the default minute.
    text.push_str("request.timeout.ms=5000\ndefault.api.timeout.ms=10000\n");
    let path = dir.join(format!("{name}.properties"));
    std::fs::write(&path, text)?;
    Ok(path)
}

/// Properties, `key = value`.
pub(super) type Props = Vec<(String, String)>;

/// A node's key store (`node-<id>.p12` of `dir`, one file per node through [`NODE_ID_TOKEN`])
/// under `prefix` (e.g. `listener.name.controller.`).
pub(super) fn keystore_props(dir: &Path, prefix: &str) -> Props {
    let keystore = dir.join(format!("node-{NODE_ID_TOKEN}.p12"));
    prefixed(
        prefix,
        &[
            ("ssl.keystore.type", "PKCS12"),
            ("ssl.keystore.location", &keystore.to_string_lossy()),
            ("ssl.keystore.password", PASSWORD),
            ("ssl.key.password", PASSWORD),
        ],
    )
}

/// The trust store of `dir` (the CA) under `prefix`.
pub(super) fn truststore_props(dir: &Path, prefix: &str) -> Props {
    let truststore = dir.join("truststore.p12");
    prefixed(
        prefix,
        &[
            ("ssl.truststore.type", "PKCS12"),
            ("ssl.truststore.location", &truststore.to_string_lossy()),
            ("ssl.truststore.password", PASSWORD),
        ],
    )
}

fn prefixed(prefix: &str, kv: &[(&str, &str)]) -> Props {
    kv.iter()
        .map(|(k, v)| (format!("{prefix}{k}"), v.to_string()))
        .collect()
}

/// The controllers' TLS keys, all in the `listener.name.controller.` form (kraftwerk and Java
/// read them alike), and the broker's for its controller channel.
pub(super) fn tls_props(dir: &Path) -> (Props, Props) {
    let stores = |prefix: &str| -> Props {
        let mut p = keystore_props(dir, prefix);
        p.extend(truststore_props(dir, prefix));
        p
    };
    let mut controller = props(&[
        ("listener.security.protocol.map", "CONTROLLER:SSL"),
        ("listener.name.controller.ssl.client.auth", "required"),
        (
            "ssl.principal.mapping.rules",
            "RULE:^CN=([^,]+),.*$/$1/,DEFAULT",
        ),
    ]);
    controller.extend(stores("listener.name.controller."));
    let mut broker = single_broker_props();
    broker.extend(props(&[(
        "listener.security.protocol.map",
        "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
    )]));
    broker.extend(stores("listener.name.controller."));
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
