//! `sasl`: the controller listener on SASL_SSL with PLAIN and SCRAM-SHA-512 (issue 11 item 3).
//! The certificates are [`super::tls`]'s (server-side TLS only: no client certificates). The
//! controllers authenticate to each other with PLAIN (`sasl.mechanism.controller.protocol=PLAIN`,
//! the user in the listener's PlainLoginModule JAAS config); the broker with SCRAM-SHA-512 as
//! `broker`, a credential every controller directory was formatted with (`kafka-storage format
//! --add-scram` / `kraftwerk format --add-scram`). StandardAuthorizer on the controllers,
//! `super.users=User:controller;User:broker`. The listener also requires client certificates
//! (`listener.name.controller.ssl.client.auth=required`: mutual TLS under SASL, the controllers'
//! and the broker's node certificates, the tools' admin one). Sessions last 8 s (`connections.max.reauth.ms`), so
//! every connection re-authenticates (or, kraftwerk's Raft client, reconnects) while it runs.
//!
//! Checked: the quorum forms and the broker registers and is unfenced; a topic through the broker
//! (the controller authorizes the forwarded CreateTopics as `User:ANONYMOUS`, allowed by a prefixed
//! ACL made with `kafka-acls --bootstrap-controller` over SASL), records each way; a wrong PLAIN
//! and a wrong SCRAM password are refused with an authentication error, logged by a controller
//! without the password; a plaintext client and a TLS client without SASL get no answer to a
//! DescribeCluster and are disconnected; alice, unknown at first, gets a SCRAM-SHA-512 credential
//! from `kafka-configs --alter --add-config` (through the broker: see [`alice`]) and then
//! authenticates (and is refused CLUSTER_AUTHORIZATION, not being a super user); SIGKILL of the active controller: a new
//! leader, the broker follows it, a second topic, the killed controller restarts and catches up.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::acls::{acls, create_topic_when_allowed, is_authorization_failure, ok};
use super::e2e::single_broker_props;
use super::tls::plaintext_api_versions;
use super::{
    assert_quorum_status, assert_same_messages, consume, kill_leader_and_measure, messages,
    produce, sasl_probe, wait_caught_up,
};
use crate::certs::{keystore_props, make_certificates, truststore_props, Props, PASSWORD};
use crate::cluster::{props, Cluster, ClusterSpec, FIRST_BROKER_ID};
use crate::env::Env;
use crate::kafka::args;
use crate::procs::Captured;
use crate::util;

/// Kafka's KRaft authorizer class.
const STANDARD_AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
const PLAIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";
const SCRAM_MODULE: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";
const SCRAM: &str = "SCRAM-SHA-512";
const CONTROLLER_SECRET: &str = "controller-secret";
const BROKER_SECRET: &str = "broker-secret";
const ALICE_SECRET: &str = "alice-secret";
/// The password of the refused clients: it must appear in no controller's log.
const WRONG_SECRET: &str = "wrong-secret-4b57";
/// `connections.max.reauth.ms` of the controllers.
const REAUTH_MS: &str = "8000";
/// How long a credential or an ACL may take to reach every controller.
const PROPAGATION: Duration = Duration::from_secs(20);

/// `<module> required username="<user>" password="<password>";`
fn jaas(module: &str, user: &str, password: &str) -> String {
    format!("{module} required username=\"{user}\" password=\"{password}\";")
}

/// The controllers' and the broker's properties (see the module docs).
fn sasl_props(dir: &Path) -> (Props, Props) {
    let plain_server = format!(
        "{PLAIN_MODULE} required username=\"controller\" password=\"{CONTROLLER_SECRET}\" \
         user_controller=\"{CONTROLLER_SECRET}\";"
    );
    let mut controller = props(&[
        ("listener.security.protocol.map", "CONTROLLER:SASL_SSL"),
        ("sasl.enabled.mechanisms", &format!("PLAIN,{SCRAM}")),
        ("sasl.mechanism.controller.protocol", "PLAIN"),
        (
            "listener.name.controller.plain.sasl.jaas.config",
            &plain_server,
        ),
        (
            "listener.name.controller.scram-sha-512.sasl.jaas.config",
            &format!("{SCRAM_MODULE} required;"),
        ),
        ("authorizer.class.name", STANDARD_AUTHORIZER),
        ("super.users", "User:controller;User:broker"),
        // Sessions of a few seconds: over the scenario the broker re-authenticates on its
        // connections (KIP-368) and the controllers' Raft clients renew theirs many times.
        ("connections.max.reauth.ms", REAUTH_MS),
    ]);
    controller.extend(keystore_props(dir, "listener.name.controller."));
    controller.extend(truststore_props(dir, "listener.name.controller."));
    // Mutual TLS under SASL: on SASL_SSL Kafka asks for client certificates only when the
    // listener-prefixed key says so. The principal stays the SASL user.
    controller.extend(props(&[(
        "listener.name.controller.ssl.client.auth",
        "required",
    )]));
    let mut broker = single_broker_props();
    broker.extend(props(&[
        (
            "listener.security.protocol.map",
            "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_SSL",
        ),
        ("sasl.mechanism.controller.protocol", SCRAM),
        (
            "listener.name.controller.scram-sha-512.sasl.jaas.config",
            &jaas(SCRAM_MODULE, "broker", BROKER_SECRET),
        ),
    ]));
    broker.extend(keystore_props(dir, "listener.name.controller."));
    broker.extend(truststore_props(dir, "listener.name.controller."));
    (controller, broker)
}

/// A client `--command-config`: SASL_SSL with `mechanism` as `user`/`password`, trusting the CA
/// and presenting the admin tools' certificate; refused clients fail in seconds.
fn client_config(
    dir: &Path,
    name: &str,
    mechanism: &str,
    user: &str,
    password: &str,
) -> Result<PathBuf> {
    client_config_with(dir, name, mechanism, user, password, Some("admin"))
}

/// [`client_config`] with the key store `keystore` (`<keystore>.p12` of `dir`), or none.
fn client_config_with(
    dir: &Path,
    name: &str,
    mechanism: &str,
    user: &str,
    password: &str,
    keystore: Option<&str>,
) -> Result<PathBuf> {
    let module = if mechanism == "PLAIN" {
        PLAIN_MODULE
    } else {
        SCRAM_MODULE
    };
    let mut text = format!(
        "security.protocol=SASL_SSL\nsasl.mechanism={mechanism}\nsasl.jaas.config={}\n\
         ssl.truststore.type=PKCS12\nssl.truststore.location={}\nssl.truststore.password={PASSWORD}\n\
         request.timeout.ms=5000\ndefault.api.timeout.ms=10000\n",
        jaas(module, user, password),
        dir.join("truststore.p12").display()
    );
    if let Some(ks) = keystore {
        text.push_str(&format!(
            "ssl.keystore.type=PKCS12\nssl.keystore.location={}\nssl.keystore.password={PASSWORD}\n\
             ssl.key.password={PASSWORD}\n",
            dir.join(format!("{ks}.p12")).display()
        ));
    }
    let path = dir.join(format!("{name}.properties"));
    std::fs::write(&path, text)?;
    Ok(path)
}

/// The scenario body.
pub fn run(env: &Env) -> Result<()> {
    if env.controllers.len() < 3 {
        bail!(
            "sasl needs 3 controllers, IT_CONTROLLERS has {}",
            env.controllers.len()
        );
    }
    let start = Instant::now();
    let mut ids: Vec<i32> = (1..=env.controllers.len() as i32).collect();
    ids.push(FIRST_BROKER_ID);
    let dir = make_certificates(env, &ids)?;
    let (controller_props, broker_props) = sasl_props(&dir);
    let spec = ClusterSpec {
        controllers: env.controllers.clone(),
        brokers: 1,
        controller_props,
        broker_props,
    };
    let mut c = Cluster::new(env, &spec)?;
    let admin = client_config(&dir, "controller", "PLAIN", "controller", CONTROLLER_SECRET)?;
    c.controller_client_config = Some(admin.clone());
    c.controller_format_args = args(&[
        "--add-scram",
        &format!("{SCRAM}=[name=broker,password={BROKER_SECRET}]"),
    ]);
    c.format_all()?;
    env.step(&format!(
        "every controller formatted with {}",
        c.controller_format_args.join(" ")
    ));
    c.start_controllers()?;
    let status = c.wait_quorum(Duration::from_secs(90))?;
    env.step(&format!(
        "quorum over SASL_SSL (PLAIN between the controllers): leader {} epoch {} \
         (kafka-metadata-quorum as controller over PLAIN)",
        status.leader_id, status.leader_epoch
    ));
    c.start_brokers()?;
    c.wait_broker_ready(FIRST_BROKER_ID, Duration::from_secs(120))?;
    let (s, raw) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    env.show(
        "kafka-metadata-quorum describe --status (SASL_SSL, PLAIN)",
        &raw,
    );
    assert_quorum_status(&s, &c, &[FIRST_BROKER_ID])?;
    env.step(&format!(
        "broker {FIRST_BROKER_ID} authenticated with {SCRAM} as broker (the credential from \
         format --add-scram), registered and is unfenced"
    ));

    let controllers = c.controller_bootstrap();
    let broker = c.broker_bootstrap();
    // The broker's PLAINTEXT clients are User:ANONYMOUS; the controllers authorize the
    // CreateTopics the broker forwards in an Envelope as that principal.
    ok(
        acls(
            env,
            &controllers,
            &admin,
            &[
                "--add",
                "--allow-principal",
                "User:ANONYMOUS",
                "--operation",
                "All",
                "--topic",
                "sasl-",
                "--resource-pattern-type",
                "prefixed",
            ],
        )?,
        "kafka-acls --add (User:ANONYMOUS on topics prefixed sasl-) as controller",
    )?;
    env.step(
        "kafka-acls --bootstrap-controller over SASL PLAIN: User:ANONYMOUS may use topics sasl-*",
    );
    create_topic_when_allowed(env, &broker, "sasl-topic")?;
    let sent = messages("sasl", 200);
    produce(env, &broker, "sasl-topic", &sent, &[])?;
    let got = consume(env, &broker, "sasl-topic", "sasl-group", sent.len())?;
    assert_same_messages("sasl-topic", &sent, &got)?;

    wrong_passwords(env, &c, &dir)?;
    unauthenticated_clients(env, &c, &dir)?;
    alice(env, &controllers, &broker, &admin, &dir)?;
    failover(env, &mut c)?;

    c.check_alive()?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(30))?;
    println!("sasl_scenario_ms={}", start.elapsed().as_millis());
    Ok(())
}

/// `kafka-metadata-quorum --bootstrap-controller <controllers> --command-config <conf>
/// describe --status`.
fn describe_as(env: &Env, controllers: &str, conf: &Path) -> Result<Captured> {
    let a = args(&[
        "--bootstrap-controller",
        controllers,
        "--command-config",
        &conf.to_string_lossy(),
        "describe",
        "--status",
    ]);
    env.tool("kafka-metadata-quorum", &a, None, Duration::from_secs(60))
}

/// The first line of the tool's output naming the exception, or its whole stderr.
fn error_line(r: &Captured) -> String {
    let text = format!("{}\n{}", r.stderr, r.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("Exception"))
        .unwrap_or(&text);
    util::one_line(line, 300)
}

/// The tool failed at once (no timeout) with a SASL authentication error.
fn is_authentication_failure(r: &Captured) -> bool {
    let text = format!("{}\n{}", r.stdout, r.stderr);
    !r.ok() && !r.timed_out && text.contains("SaslAuthenticationException")
}

/// `Failed authentication with …` lines in every controller's log (Java's Selector logs them at
/// INFO, and so does kraftwerk).
fn failed_authentication_lines(c: &Cluster) -> usize {
    c.controllers
        .iter()
        .map(|n| n.log_count("Failed authentication with /"))
        .sum()
}

/// A wrong PLAIN password (as controller) and a wrong SCRAM password (as broker) are refused
/// with SaslAuthenticationException; a controller logs the failure and no log holds the password.
fn wrong_passwords(env: &Env, c: &Cluster, dir: &Path) -> Result<()> {
    let before = failed_authentication_lines(c);
    let controllers = c.controller_bootstrap();
    // Java's messages, sent in SaslAuthenticate's error_message: PlainSaslServer's, and
    // SaslServerAuthenticator's for any SCRAM failure.
    let scram_refusal = format!(
        "Authentication failed during authentication due to invalid credentials with SASL \
         mechanism {SCRAM}"
    );
    for (mechanism, user, message) in [
        (
            "PLAIN",
            "controller",
            "Authentication failed: Invalid username or password",
        ),
        (SCRAM, "broker", scram_refusal.as_str()),
    ] {
        let conf = client_config(
            dir,
            &format!("wrong-{}", mechanism.to_lowercase()),
            mechanism,
            user,
            WRONG_SECRET,
        )?;
        let r = describe_as(env, &controllers, &conf)?;
        if r.ok() {
            bail!(
                "kafka-metadata-quorum as {user} with a wrong {mechanism} password succeeded: {}",
                util::one_line(&r.stdout, 300)
            );
        }
        if !is_authentication_failure(&r) {
            bail!(
                "kafka-metadata-quorum as {user} with a wrong {mechanism} password failed, but \
                 not with SaslAuthenticationException (exit {:?}, timed out {}): {}",
                r.code,
                r.timed_out,
                util::one_line(&r.stderr, 500)
            );
        }
        if !format!("{}\n{}", r.stderr, r.stdout).contains(message) {
            bail!(
                "kafka-metadata-quorum as {user} with a wrong {mechanism} password was refused \
                 without Kafka's message `{message}`: {}",
                error_line(&r)
            );
        }
        env.step(&format!(
            "a wrong {mechanism} password for {user} is refused: {}",
            error_line(&r)
        ));
    }
    let after = failed_authentication_lines(c);
    if after <= before {
        bail!("no controller logged the refused logins (`Failed authentication with …`)");
    }
    for n in &c.controllers {
        if n.log_count(WRONG_SECRET) > 0 {
            bail!("{} logged a refused client's password", n.label());
        }
    }
    env.step(&format!(
        "the controllers logged {} failed authentication(s), without the password",
        after - before
    ));
    Ok(())
}

/// A plaintext client gets no Kafka answer from any controller; a TLS client without SASL has
/// its ApiVersions answered (clients send it before SaslHandshake) and is disconnected on its
/// DescribeCluster, unanswered.
fn unauthenticated_clients(env: &Env, c: &Cluster, dir: &Path) -> Result<()> {
    for n in &c.controllers {
        if let Some(answer) = plaintext_api_versions(&n.addr())? {
            bail!(
                "{} answered a plaintext ApiVersions on its SASL_SSL listener ({answer})",
                n.label()
            );
        }
        let p = sasl_probe::run(
            dir,
            &format!("probe-{}", n.id),
            &n.addr(),
            &dir.join("ca.crt"),
            Some((&dir.join("admin.p12"), PASSWORD)),
            Duration::from_secs(15),
        )?;
        if p.answered.contains(&sasl_probe::DESCRIBE_CLUSTER_ID) {
            bail!(
                "{} answered a DescribeCluster from a client that never authenticated",
                n.label()
            );
        }
        if !p.answered.contains(&sasl_probe::API_VERSIONS_ID) {
            bail!(
                "{} did not answer the ApiVersions a SASL client sends before SaslHandshake \
                 ({} bytes back, closed {}): {}",
                n.label(),
                p.bytes,
                p.closed,
                util::one_line(&p.stderr, 300)
            );
        }
        if !p.closed {
            bail!(
                "{} kept the connection of an unauthenticated DescribeCluster open",
                n.label()
            );
        }
    }
    env.step(
        "no SASL: a plaintext ApiVersions gets no Kafka answer; over TLS, ApiVersions is answered \
         and DescribeCluster is not (the controller closes the connection), on every controller",
    );
    // The right password without a trusted certificate: refused at the TLS handshake.
    let controllers = c.controller_bootstrap();
    for (name, keystore) in [
        ("no-certificate", None),
        ("rogue-certificate", Some("rogue")),
    ] {
        let conf = client_config_with(
            dir,
            name,
            "PLAIN",
            "controller",
            CONTROLLER_SECRET,
            keystore,
        )?;
        let r = describe_as(env, &controllers, &conf)?;
        let text = format!("{}\n{}", r.stdout, r.stderr);
        if r.ok() || !text.contains("SslAuthenticationException") {
            bail!(
                "a client with the right password and {name} was not refused at the TLS \
                 handshake (exit {:?}, timed out {}): {}",
                r.code,
                r.timed_out,
                error_line(&r)
            );
        }
    }
    env.step(
        "mutual TLS under SASL: the right password without a certificate, or with a self-signed \
         one, is refused at the TLS handshake (SslAuthenticationException)",
    );
    Ok(())
}

/// alice cannot authenticate until `kafka-configs --alter --add-config SCRAM-SHA-512=[password=…]
/// --entity-type users --entity-name alice` gives her a credential; then she authenticates and,
/// not being a super user, is refused CLUSTER_AUTHORIZATION.
///
/// The credential goes through the broker: Kafka's admin client refuses AlterUserScramCredentials
/// in `--bootstrap-controller` mode before sending anything (`UnsupportedEndpointTypeException:
/// This Admin API is not yet supported when communicating directly with the controller quorum`,
/// 4.1.2 and 4.4.0: the call's ControllerNodeProvider does not support controllers), although
/// Java controllers serve the API. The broker forwards it in an Envelope; the controller
/// authorizes the client (`User:ANONYMOUS`) for ALTER on the cluster, which an ACL made by
/// controller over PLAIN grants first.
fn alice(env: &Env, controllers: &str, broker: &str, admin: &Path, dir: &Path) -> Result<()> {
    let conf = client_config(dir, "alice", SCRAM, "alice", ALICE_SECRET)?;
    let r = describe_as(env, controllers, &conf)?;
    if !is_authentication_failure(&r) {
        bail!(
            "alice (no credential yet) was not refused with SaslAuthenticationException (exit \
             {:?}): {}",
            r.code,
            util::one_line(&format!("{}\n{}", r.stderr, r.stdout), 500)
        );
    }
    env.step(&format!("alice has no credential yet: {}", error_line(&r)));
    ok(
        acls(
            env,
            controllers,
            admin,
            &[
                "--add",
                "--allow-principal",
                "User:ANONYMOUS",
                "--operation",
                "Alter",
                "--cluster",
            ],
        )?,
        "kafka-acls --add (User:ANONYMOUS ALTER on the cluster) as controller",
    )?;
    let deadline = Instant::now() + PROPAGATION;
    let r = loop {
        let a = args(&[
            "--bootstrap-server",
            broker,
            "--alter",
            "--add-config",
            &format!("{SCRAM}=[password={ALICE_SECRET}]"),
            "--entity-type",
            "users",
            "--entity-name",
            "alice",
        ]);
        let r = env.tool("kafka-configs", &a, None, Duration::from_secs(60))?;
        // The ALTER ACL may not have reached the active controller yet.
        if r.ok() || !is_authorization_failure(env, &r) || Instant::now() > deadline {
            break r;
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    let r = ok(
        r,
        "kafka-configs --alter (alice's SCRAM-SHA-512 credential)",
    )?;
    if !r
        .stdout
        .contains("Completed updating config for user alice")
    {
        bail!(
            "kafka-configs --alter (alice's credential) did not print `Completed updating config \
             for user alice.`: {}",
            util::one_line(&r.stdout, 300)
        );
    }
    env.step(&format!(
        "kafka-configs through the broker (forwarded to the active controller): {}",
        util::one_line(&r.stdout, 200)
    ));
    let deadline = Instant::now() + PROPAGATION;
    loop {
        let r = describe_as(env, controllers, &conf)?;
        if r.ok() {
            bail!(
                "alice (not a super user, no ACL) was allowed kafka-metadata-quorum describe: {}",
                util::one_line(&r.stdout, 300)
            );
        }
        let text = format!("{}\n{}", r.stdout, r.stderr);
        if text.contains("ClusterAuthorizationException") && !is_authentication_failure(&r) {
            env.step(&format!(
                "alice authenticated with {SCRAM} and is refused as not authorized: {}",
                error_line(&r)
            ));
            return Ok(());
        }
        if !is_authentication_failure(&r) || Instant::now() > deadline {
            bail!(
                "alice's kafka-metadata-quorum describe after her credential was added failed \
                 with neither ClusterAuthorizationException nor (for {PROPAGATION:?}) an \
                 authentication error (exit {:?}): {}",
                r.code,
                util::one_line(&r.stderr, 500)
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// SIGKILL of the active controller: a new leader over SASL, the broker follows it (observer of
/// the new leader, a second topic through it, records each way), the killed controller restarts,
/// authenticates to the others again and catches up.
fn failover(env: &Env, c: &mut Cluster) -> Result<()> {
    let f = kill_leader_and_measure(env, c, "sasl-after-failover", 1)?;
    println!("failover_ms={}", f.failover_ms);
    let survivors = c.controller_bootstrap_except(f.old_leader);
    let status = util::wait_until(
        &format!("broker {FIRST_BROKER_ID} among the new leader's observers"),
        Duration::from_secs(30),
        Duration::from_millis(500),
        || {
            let (s, _) = c.describe_status_fast(&survivors)?;
            Ok(s.observers.contains(&FIRST_BROKER_ID).then_some(s))
        },
    )?;
    env.step(&format!(
        "broker {FIRST_BROKER_ID} fetches from the new leader {} (epoch {})",
        status.leader_id, status.leader_epoch
    ));
    let boot = c.broker_bootstrap();
    let sent = messages("sasl-failover", 100);
    produce(env, &boot, "sasl-after-failover", &sent, &[])?;
    let got = consume(
        env,
        &boot,
        "sasl-after-failover",
        "sasl-failover-group",
        sent.len(),
    )?;
    assert_same_messages("sasl-after-failover", &sent, &got)?;
    c.start(f.old_leader)?;
    wait_caught_up(
        env,
        c,
        f.old_leader,
        status.high_watermark,
        Duration::from_secs(90),
    )?;
    env.step(&format!(
        "controller {} restarted, authenticated over PLAIN and caught up to offset {}",
        f.old_leader, status.high_watermark
    ));
    Ok(())
}
