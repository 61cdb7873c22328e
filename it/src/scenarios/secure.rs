//! `secure` and `secure-mixed` (issue 11): the controller listener on SASL_SSL with mutual TLS
//! under it, StandardAuthorizer on the controllers and the brokers. The certificates are
//! [`super::tls`]'s. The controllers authenticate to each other with PLAIN
//! (`sasl.mechanism.controller.protocol=PLAIN`, the user in the listener's PlainLoginModule JAAS
//! config) over TLS with their node certificates (`listener.name.controller.ssl.client.auth=
//! required`: on SASL_SSL Kafka asks for client certificates only when the listener-prefixed key
//! says so; the principal stays the SASL user). Two brokers authenticate with SCRAM-SHA-512 as
//! `broker`, a credential every controller directory was formatted with (`kafka-storage format
//! --add-scram` / `kraftwerk format --add-scram`), as is `admin`'s. Each broker has a PLAINTEXT
//! client listener (`User:ANONYMOUS`) and an `INTERNAL` SASL_PLAINTEXT listener (SCRAM-SHA-512)
//! for replication and the admin's tools. `super.users` are the controller, the brokers and
//! admin. Sessions last 8 s (`connections.max.reauth.ms`), so every connection re-authenticates
//! (or, kraftwerk's Raft client, reconnects) while it runs.
//!
//! Checked: the quorum forms and both brokers register and are unfenced; admin's `kafka-acls`
//! through a broker (forwarded to the active controller, authorized as admin from the Envelope)
//! lets anonymous clients use topics and groups prefixed `secure-` and create topics prefixed
//! `extra-`; a replicated topic, records each way; a topic outside the prefixes is refused
//! TOPIC_AUTHORIZATION_FAILED; after `kafka-acls --remove` through the broker the `extra-` prefix is
//! refused too; `kafka-acls --bootstrap-controller --list` over SASL shows the ACLs; a wrong PLAIN
//! and a wrong SCRAM password are refused with an authentication error, logged by a controller
//! without the password; a plaintext client and a TLS client without SASL (DescribeCluster, a
//! phantom BrokerRegistration) get no answer and are disconnected; a client without a trusted
//! certificate is refused at the TLS handshake; alice, unknown at first, gets a SCRAM-SHA-512
//! credential from admin's `kafka-configs` through a broker and then authenticates (and is
//! refused CLUSTER_AUTHORIZATION, not being a super user); SIGKILL of the active controller: a
//! new leader, both brokers follow it, a topic through them, the killed controller restarts and
//! catches up. Delegation tokens: [`super::tokens`]. `secure` runs with `IT_CONTROLLERS`; `secure-mixed` runs the same once per mix of
//! `IT_SECURE_MIXES` (default: 1 Java + 2 kraftwerk, then 2 Java + 1 kraftwerk).

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::acls::{
    acls, create_topic_when_allowed, expect_refused, is_authorization_failure, kafka_acls, ok,
    try_create_topic,
};
use super::e2e::single_broker_props;
use super::sasl_probe::{self, Second};
use super::tls::plaintext_api_versions;
use super::{
    assert_quorum_status, assert_same_messages, consume, kill_leader_and_measure, messages,
    produce, wait_caught_up,
};
use crate::certs::{
    client_config_text, keystore_props, make_certificates, truststore_props, write_client_config,
    Props, PASSWORD,
};
use crate::cluster::{props, Cluster, ClusterSpec, FIRST_BROKER_ID};
use crate::env::{ControllerKind, Env};
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
const ADMIN_SECRET: &str = "admin-secret";
const ALICE_SECRET: &str = "alice-secret";
/// The password of the refused clients: it must appear in no controller's log.
const WRONG_SECRET: &str = "wrong-secret-4b57";
/// `connections.max.reauth.ms` of the controllers.
const REAUTH_MS: &str = "8000";
/// How long a credential or an ACL may take to reach every controller.
const PROPAGATION: Duration = Duration::from_secs(20);
/// The brokers' ids.
const BROKERS: [i32; 2] = [FIRST_BROKER_ID, FIRST_BROKER_ID + 1];
/// `super.users` of the controllers and the brokers.
const SUPER_USERS: &str = "User:controller;User:broker;User:admin";

/// `<module> required username="<user>" password="<password>";`
fn jaas(module: &str, user: &str, password: &str) -> String {
    format!("{module} required username=\"{user}\" password=\"{password}\";")
}

/// The controllers' and the brokers' properties (see the module docs; each broker's
/// `listeners` are [`add_internal_listeners`]').
fn secure_props(dir: &Path) -> (Props, Props) {
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
        ("super.users", SUPER_USERS),
        // Sessions of a few seconds: over the scenario the broker re-authenticates on its
        // connections (KIP-368) and the controllers' Raft clients renew theirs many times.
        ("connections.max.reauth.ms", REAUTH_MS),
        ("delegation.token.secret.key", super::tokens::TOKEN_SECRET),
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
            "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,CONTROLLER:SASL_SSL",
        ),
        ("sasl.enabled.mechanisms", SCRAM),
        ("sasl.mechanism.inter.broker.protocol", SCRAM),
        ("sasl.mechanism.controller.protocol", SCRAM),
        (
            "listener.name.controller.scram-sha-512.sasl.jaas.config",
            &jaas(SCRAM_MODULE, "broker", BROKER_SECRET),
        ),
        (
            "listener.name.internal.scram-sha-512.sasl.jaas.config",
            &jaas(SCRAM_MODULE, "broker", BROKER_SECRET),
        ),
        ("authorizer.class.name", STANDARD_AUTHORIZER),
        ("super.users", SUPER_USERS),
        ("allow.everyone.if.no.acl.found", "false"),
        ("connections.max.reauth.ms", REAUTH_MS),
        ("delegation.token.secret.key", super::tokens::TOKEN_SECRET),
    ]));
    broker.extend(keystore_props(dir, "listener.name.controller."));
    broker.extend(truststore_props(dir, "listener.name.controller."));
    (controller, broker)
}

/// A `--command-config` for a broker's INTERNAL listener: SASL_PLAINTEXT with SCRAM-SHA-512 as
/// `user`/`password`.
fn internal_client_config(dir: &Path, name: &str, user: &str, password: &str) -> Result<PathBuf> {
    let text = format!(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism={SCRAM}\nsasl.jaas.config={}\n\
         request.timeout.ms=10000\ndefault.api.timeout.ms=30000\n",
        jaas(SCRAM_MODULE, user, password)
    );
    write_client_config(dir, name, &text)
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
    let sasl = format!(
        "sasl.mechanism={mechanism}\nsasl.jaas.config={}\n",
        jaas(module, user, password)
    );
    write_client_config(
        dir,
        name,
        &client_config_text(dir, "SASL_SSL", &sasl, keystore),
    )
}

/// The default mixes of `secure-mixed` (`IT_SECURE_MIXES`).
pub const DEFAULT_MIXES: &str = "java,kraftwerk,kraftwerk;java,java,kraftwerk";

/// `secure-mixed`'s controller mixes: `IT_SECURE_MIXES`, or [`DEFAULT_MIXES`].
pub fn mixes() -> Result<Vec<Vec<ControllerKind>>> {
    super::mixes::from_env("IT_SECURE_MIXES", DEFAULT_MIXES)
}

/// `secure`: one cluster of `IT_CONTROLLERS`.
pub fn run(env: &Env) -> Result<()> {
    let dir = certificates(env)?;
    run_one(env, &env.controllers, &dir)
}

/// `secure-mixed`: [`run_one`] for each of [`mixes`], one after another.
pub fn run_mixed(env: &Env) -> Result<()> {
    let dir = certificates(env)?;
    for (i, mix) in mixes()?.iter().enumerate() {
        if i > 0 {
            super::mixes::set_aside_nodes(env, i)?;
        }
        env.step(&format!(
            "mix {}: controllers {}",
            i + 1,
            mix.iter().map(|k| k.label()).collect::<Vec<_>>().join(",")
        ));
        run_one(env, mix, &dir)?;
    }
    Ok(())
}

/// The CA and the key stores of controllers 1..=3, both brokers and the admin tools.
fn certificates(env: &Env) -> Result<PathBuf> {
    let mut ids: Vec<i32> = (1..=3).collect();
    ids.extend(BROKERS);
    make_certificates(env, &ids)
}

/// One cluster of `kinds` (see the module docs).
fn run_one(env: &Env, kinds: &[ControllerKind], dir: &Path) -> Result<()> {
    if kinds.len() != 3 {
        bail!("secure needs 3 controllers, {} given", kinds.len());
    }
    let start = Instant::now();
    let (controller_props, broker_props) = secure_props(dir);
    let spec = ClusterSpec {
        controllers: kinds.to_vec(),
        brokers: BROKERS.len(),
        controller_props,
        broker_props,
    };
    let mut c = Cluster::new(env, &spec)?;
    let internal = add_internal_listeners(&c)?;
    let controller_conf =
        client_config(dir, "controller", "PLAIN", "controller", CONTROLLER_SECRET)?;
    let admin = internal_client_config(dir, "admin-internal", "admin", ADMIN_SECRET)?;
    c.controller_client_config = Some(controller_conf.clone());
    c.controller_format_args = args(&[
        "--add-scram",
        &format!("{SCRAM}=[name=broker,password={BROKER_SECRET}]"),
        "--add-scram",
        &format!("{SCRAM}=[name=admin,password={ADMIN_SECRET}]"),
    ]);
    c.format_all()?;
    env.step(&format!(
        "every controller formatted with {}",
        c.controller_format_args.join(" ")
    ));
    c.start_controllers()?;
    let status = c.wait_quorum(Duration::from_secs(90))?;
    env.step(&format!(
        "quorum over SASL_SSL (PLAIN between the controllers, mutual TLS under it): leader {}          epoch {} (kafka-metadata-quorum --command-config as controller over PLAIN)",
        status.leader_id, status.leader_epoch
    ));
    c.start_brokers()?;
    for id in BROKERS {
        c.wait_broker_ready(id, Duration::from_secs(120))?;
    }
    let (s, raw) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    env.show(
        "kafka-metadata-quorum describe --status (SASL_SSL, PLAIN)",
        &raw,
    );
    assert_quorum_status(&s, &c, &BROKERS)?;
    env.step(&format!(
        "brokers {BROKERS:?} authenticated with {SCRAM} as broker (the credential from format          --add-scram), registered and are unfenced"
    ));

    acls_through_broker(env, &c, &internal, &admin, &controller_conf)?;
    super::tokens::delegation_tokens(env, &internal, &admin, dir, "secure-topic")?;
    wrong_passwords(env, &c, dir)?;
    unauthenticated_clients(env, &c, dir)?;
    alice(env, &c.controller_bootstrap(), &internal, &admin, dir)?;
    failover(env, &mut c)?;

    c.check_alive()?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(30))?;
    println!("secure_scenario_ms={}", start.elapsed().as_millis());
    Ok(())
}

/// Gives every broker an `INTERNAL` SASL_PLAINTEXT listener on a port of its own (appended to
/// its properties: the later keys win) and makes it the inter-broker listener; returns the
/// brokers' INTERNAL addresses, comma-separated, for the admin's tools.
fn add_internal_listeners(c: &Cluster) -> Result<String> {
    let mut addrs = Vec::new();
    for n in &c.brokers {
        let internal = format!("127.0.0.1:{}", util::free_port()?);
        let listeners = format!("PLAINTEXT://{},INTERNAL://{internal}", n.addr());
        let mut text = std::fs::read_to_string(&n.props)?;
        text.push_str(&format!(
            "listeners={listeners}\nadvertised.listeners={listeners}\n\
             inter.broker.listener.name=INTERNAL\n"
        ));
        std::fs::write(&n.props, text)?;
        addrs.push(internal);
    }
    Ok(addrs.join(","))
}

/// `kafka-acls --bootstrap-server <brokers' INTERNAL> --command-config <admin> <rest>`.
fn acls_via_broker(env: &Env, internal: &str, admin: &Path, rest: &[&str]) -> Result<Captured> {
    kafka_acls(env, "--bootstrap-server", internal, admin, rest)
}

/// admin's ACLs through a broker (CreateAcls and DeleteAcls forwarded to the active controller
/// in an Envelope): anonymous clients may use `secure-` topics and groups and create `extra-`
/// topics; a replicated topic carries records each way; `forbidden-topic` is refused
/// TOPIC_AUTHORIZATION_FAILED; once the `extra-` ACL is removed, so is `extra-two`; the
/// controllers list what the broker wrote.
fn acls_through_broker(
    env: &Env,
    c: &Cluster,
    internal: &str,
    admin: &Path,
    controller_conf: &Path,
) -> Result<()> {
    let broker = c.broker_bootstrap();
    let extra: [&str; 8] = [
        "--allow-principal",
        "User:ANONYMOUS",
        "--operation",
        "Create",
        "--topic",
        "extra-",
        "--resource-pattern-type",
        "prefixed",
    ];
    let grants: [Vec<&str>; 3] = [
        vec![
            "--allow-principal",
            "User:ANONYMOUS",
            "--operation",
            "All",
            "--topic",
            "secure-",
            "--group",
            "secure-",
            "--resource-pattern-type",
            "prefixed",
        ],
        extra.to_vec(),
        // DESCRIBE on the cluster: the console clients' metadata needs no more.
        vec![
            "--allow-principal",
            "User:ANONYMOUS",
            "--operation",
            "Describe",
            "--cluster",
        ],
    ];
    for grant in &grants {
        let mut add = vec!["--add"];
        add.extend(grant);
        ok(
            acls_via_broker(env, internal, admin, &add)?,
            &format!(
                "admin's kafka-acls --bootstrap-server (a broker) {}",
                add.join(" ")
            ),
        )?;
    }
    env.step(
        "admin (SCRAM-SHA-512 on a broker's INTERNAL listener) created ACLs through kafka-acls          --bootstrap-server: anonymous ALL on topics and groups prefixed secure-, CREATE on          topics prefixed extra-, DESCRIBE on the cluster",
    );
    create_topic_when_allowed(env, &broker, "secure-topic", 2)?;
    let sent = messages("secure", 200);
    produce(env, &broker, "secure-topic", &sent, &[])?;
    let got = consume(env, &broker, "secure-topic", "secure-group", sent.len())?;
    assert_same_messages("secure-topic", &sent, &got)?;
    env.step("secure-topic (2 replicas: the brokers replicate over SASL_PLAINTEXT as broker): records each way");

    expect_refused(
        env,
        &try_create_topic(env, &broker, "forbidden-topic", 1)?,
        "an anonymous kafka-topics --create forbidden-topic (no ACL)",
    )?;
    env.step("an anonymous kafka-topics --create forbidden-topic is refused (TOPIC_AUTHORIZATION_FAILED)");
    create_topic_when_allowed(env, &broker, "extra-one", 1)?;
    let mut remove = vec!["--remove", "--force"];
    remove.extend(extra);
    ok(
        acls_via_broker(env, internal, admin, &remove)?,
        "admin's kafka-acls --remove (anonymous CREATE on extra-) through a broker",
    )?;
    wait_create_refused(env, &broker, "extra-")?;
    env.step(
        "after kafka-acls --remove through the broker, kafka-topics --create of an extra- topic \
         is refused",
    );

    let deadline = Instant::now() + PROPAGATION;
    loop {
        let r = ok(
            acls(env, &c.controller_bootstrap(), controller_conf, &["--list"])?,
            "kafka-acls --bootstrap-controller --list (controller over PLAIN)",
        )?;
        let listed = ["User:ANONYMOUS", "PREFIXED", "secure-"]
            .iter()
            .all(|w| r.stdout.contains(w))
            && !r.stdout.contains("extra-");
        if listed {
            env.show("kafka-acls --bootstrap-controller --list", &r.stdout);
            break;
        }
        if Instant::now() > deadline {
            bail!(
                "kafka-acls --bootstrap-controller --list does not show the ACLs made through the                  broker (and not the removed one): {}",
                util::one_line(&r.stdout, 600)
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    env.step(
        "kafka-acls --bootstrap-controller --list over SASL shows the ACLs made through the broker",
    );
    Ok(())
}

/// `kafka-topics --create <prefix><n>` through the broker is refused with an authorization
/// error within [`PROPAGATION`] (the removal of the prefix's ACL reaches the active
/// controller's authorizer, which Java's updates just after the commit): a topic created in
/// the meantime takes the next `n`.
fn wait_create_refused(env: &Env, broker: &str, prefix: &str) -> Result<()> {
    let deadline = Instant::now() + PROPAGATION;
    let mut n = 2;
    loop {
        let topic = format!("{prefix}{n}");
        n += 1;
        let r = try_create_topic(env, broker, &topic, 1)?;
        if !r.ok() && is_authorization_failure(env, &r) {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "kafka-topics --create {topic} failed with something other than an                  authorization error (exit {:?}): {}",
                r.code,
                util::one_line(&r.stderr, 500)
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
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
/// next request, unanswered: a DescribeCluster, or a phantom broker's BrokerRegistration.
fn unauthenticated_clients(env: &Env, c: &Cluster, dir: &Path) -> Result<()> {
    for n in &c.controllers {
        if let Some(answer) = plaintext_api_versions(&n.addr())? {
            bail!(
                "{} answered a plaintext ApiVersions on its SASL_SSL listener ({answer})",
                n.label()
            );
        }
        for second in [Second::DescribeCluster, Second::BrokerRegistration] {
            let p = sasl_probe::run(
                dir,
                &format!("probe-{}-{second:?}", n.id),
                &n.addr(),
                &dir.join("ca.crt"),
                Some((&dir.join("admin.p12"), PASSWORD)),
                second,
                Duration::from_secs(15),
            )?;
            if p.answered.contains(&second.correlation_id()) {
                bail!(
                    "{} answered a {second:?} from a client that never authenticated",
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
                    "{} kept the connection of an unauthenticated {second:?} open",
                    n.label()
                );
            }
        }
    }
    env.step(
        "no SASL: a plaintext ApiVersions gets no Kafka answer; over TLS, ApiVersions is answered \
         and a DescribeCluster or a phantom BrokerRegistration is not (the controller closes the \
         connection), on every controller",
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
/// The credential goes through a broker, as admin on its INTERNAL listener: Kafka's admin client
/// refuses AlterUserScramCredentials in `--bootstrap-controller` mode before sending anything
/// (`UnsupportedEndpointTypeException: This Admin API is not yet supported when communicating
/// directly with the controller quorum`, 4.1.2 and 4.4.0: the call's ControllerNodeProvider does
/// not support controllers), although Java controllers serve the API. The broker forwards it in
/// an Envelope; the controller authorizes admin, a super user, from it.
fn alice(env: &Env, controllers: &str, internal: &str, admin: &Path, dir: &Path) -> Result<()> {
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
    let a = args(&[
        "--bootstrap-server",
        internal,
        "--command-config",
        &admin.to_string_lossy(),
        "--alter",
        "--add-config",
        &format!("{SCRAM}=[password={ALICE_SECRET}]"),
        "--entity-type",
        "users",
        "--entity-name",
        "alice",
    ]);
    let r = env.tool("kafka-configs", &a, None, Duration::from_secs(60))?;
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
        "admin's kafka-configs through a broker (forwarded to the active controller): {}",
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
    let topic = "secure-after-failover";
    let f = kill_leader_and_measure(env, c, topic, 1)?;
    println!("failover_ms={}", f.failover_ms);
    let survivors = c.controller_bootstrap_except(f.old_leader);
    let status = util::wait_until(
        &format!("brokers {BROKERS:?} among the new leader's observers"),
        Duration::from_secs(30),
        Duration::from_millis(500),
        || {
            let (s, _) = c.describe_status_fast(&survivors)?;
            Ok(BROKERS.iter().all(|b| s.observers.contains(b)).then_some(s))
        },
    )?;
    env.step(&format!(
        "brokers {BROKERS:?} fetch from the new leader {} (epoch {})",
        status.leader_id, status.leader_epoch
    ));
    let boot = c.broker_bootstrap();
    let sent = messages("secure-failover", 100);
    produce(env, &boot, topic, &sent, &[])?;
    let got = consume(env, &boot, topic, "secure-failover-group", sent.len())?;
    assert_same_messages(topic, &sent, &got)?;
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
