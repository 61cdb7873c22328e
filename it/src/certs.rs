//! The integration tests' TLS material (issue 11): a CA, PKCS12 key stores signed by it (or
//! self-signed), a trust store, made with `openssl` and the JDK's `keytool` as Kafka's security
//! guide makes them; the `ssl.*` property sets that point nodes and tools at them; and a rustls
//! client configuration over the same stores for the harness's own Kafka-protocol clients
//! ([`crate::bench::client`]). Shared by the `tls`, `acls` and `secure` scenarios and the TLS
//! systems of `bench-failover`.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use crate::cluster::{props, NODE_ID_TOKEN};
use crate::env::Env;
use crate::util;

/// The password of every store made here.
pub(crate) const PASSWORD: &str = "it-secret";

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
pub(crate) fn key_store(dir: &Path, name: &str, signed: bool) -> Result<PathBuf> {
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
pub(crate) fn make_certificates(env: &Env, ids: &[i32]) -> Result<PathBuf> {
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
pub(crate) fn client_config(dir: &Path, name: &str, keystore: Option<&str>) -> Result<PathBuf> {
    write_client_config(dir, name, &client_config_text(dir, "SSL", "", keystore))
}

/// A client configuration on `protocol` (SSL or SASL_SSL) with `extra` lines (e.g. the SASL
/// mechanism and JAAS line), the trust store of `dir` and, if given, the key store
/// `<keystore>.p12`; refused clients fail in seconds, not after the default minute.
pub(crate) fn client_config_text(
    dir: &Path,
    protocol: &str,
    extra: &str,
    keystore: Option<&str>,
) -> String {
    let mut text = format!(
        "security.protocol={protocol}\n{extra}ssl.truststore.type=PKCS12\n\
         ssl.truststore.location={}\nssl.truststore.password={PASSWORD}\n",
        dir.join("truststore.p12").display()
    );
    if let Some(ks) = keystore {
        text.push_str(&format!(
            "ssl.keystore.type=PKCS12\nssl.keystore.location={}\nssl.keystore.password={PASSWORD}\n\
             ssl.key.password={PASSWORD}\n",
            dir.join(format!("{ks}.p12")).display()
        ));
    }
    text.push_str("request.timeout.ms=5000\ndefault.api.timeout.ms=10000\n");
    text
}

/// Writes `text` to `<dir>/<name>.properties`; returns the path.
pub(crate) fn write_client_config(dir: &Path, name: &str, text: &str) -> Result<PathBuf> {
    let path = dir.join(format!("{name}.properties"));
    std::fs::write(&path, text)?;
    Ok(path)
}

/// Properties, `key = value`.
pub(crate) type Props = Vec<(String, String)>;

/// A node's key store (`node-<id>.p12` of `dir`, one file per node through [`NODE_ID_TOKEN`])
/// under `prefix` (e.g. `listener.name.controller.`).
pub(crate) fn keystore_props(dir: &Path, prefix: &str) -> Props {
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
pub(crate) fn truststore_props(dir: &Path, prefix: &str) -> Props {
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

/// A node's key store and the trust store under `prefix` (e.g. `listener.name.controller.`).
pub(crate) fn store_props(dir: &Path, prefix: &str) -> Props {
    let mut p = keystore_props(dir, prefix);
    p.extend(truststore_props(dir, prefix));
    p
}

/// The controllers' keys for a `CONTROLLER` listener on SSL with mutual TLS
/// (`ssl.client.auth=required`), all in the `listener.name.controller.` form (kraftwerk and Java
/// read them alike; the controllers dial each other with the same stores), principals named by
/// their certificate's CN.
pub(crate) fn controller_mtls_props(dir: &Path) -> Props {
    let mut controller = props(&[
        ("listener.security.protocol.map", "CONTROLLER:SSL"),
        ("listener.name.controller.ssl.client.auth", "required"),
        (
            "ssl.principal.mapping.rules",
            "RULE:^CN=([^,]+),.*$/$1/,DEFAULT",
        ),
    ]);
    controller.extend(store_props(dir, "listener.name.controller."));
    controller
}

/// A rustls client configuration for the harness's own clients: trusts the CA of `dir` (and
/// checks the server's name, Kafka's default `ssl.endpoint.identification.algorithm=https`;
/// the certificates name 127.0.0.1) and presents `<keystore>.p12` of `dir` when the server asks.
/// Built by `kraftwerk-tls` from the same settings a kraftwerk controller reads.
pub(crate) fn rustls_client(dir: &Path, keystore: &str) -> Result<Arc<rustls::ClientConfig>> {
    let mut settings = kraftwerk_tls::TlsSettings::new(kraftwerk_tls::TrustStoreSource::Pkcs12 {
        path: dir.join("truststore.p12"),
        password: PASSWORD.into(),
        named_jks: false,
    });
    settings.keystore = Some(kraftwerk_tls::KeyStoreSource::Pkcs12 {
        path: dir.join(format!("{keystore}.p12")),
        password: PASSWORD.into(),
        key_password: Some(PASSWORD.into()),
        named_jks: false,
    });
    kraftwerk_tls::client_config(&settings)
        .with_context(|| format!("a TLS client configuration from {}", dir.display()))
}
