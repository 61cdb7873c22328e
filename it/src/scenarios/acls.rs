//! `acls`: Kafka's `StandardAuthorizer` on the controllers and the broker (issue 11 item 4), over
//! the mutual-TLS set-up of [`super::tls`] so that every connection has a certificate principal
//! (`User:<CN>` by `ssl.principal.mapping.rules`). The controllers and the broker are super users;
//! `admin` is one; `alice` is not, and the broker's PLAINTEXT client listener is `User:ANONYMOUS`.
//! Checked, with any `IT_CONTROLLERS` mix: the quorum forms and the broker registers (the Raft
//! and broker RPCs pass CLUSTER_ACTION); alice cannot create ACLs and no `--bootstrap-controller`
//! tool works for her (a controller answers DescribeCluster only with ALTER on the cluster, as
//! Java's `ControllerApis.handleDescribeCluster`) until an ACL created with
//! `kafka-acls --bootstrap-controller` grants ALTER, and again once it is deleted; an anonymous client cannot create a topic through
//! the broker until a prefixed ACL allows it (the broker forwards CreateTopics to the
//! controller, which authorizes the client's principal from the Envelope), then produces and
//! consumes under it, and still cannot create a topic outside the prefix; `kafka-acls --list`
//! through a controller and through the broker (which replays the ACL records) agree.

use anyhow::{bail, Result};
use std::path::Path;
use std::time::{Duration, Instant};

use super::tls::tls_props;
use super::{assert_same_messages, consume, messages, produce};
use crate::certs::{client_config, key_store, make_certificates};
use crate::cluster::{props, Cluster, ClusterSpec, FIRST_BROKER_ID};
use crate::env::Env;
use crate::kafka::args;
use crate::procs::Captured;
use crate::util;
use kraftwerk_records::metadata_version::MetadataVersion;

/// Kafka's KRaft authorizer class.
const STANDARD_AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

/// How long an ACL change may take to reach the node that answers (every node replays it).
const ACL_PROPAGATION: Duration = Duration::from_secs(20);

/// `super.users`: the principals of the node certificates and of the admin tools.
fn super_users(ids: &[i32]) -> String {
    let mut users: Vec<String> = ids.iter().map(|id| format!("User:node-{id}")).collect();
    users.push("User:admin".to_owned());
    users.join(";")
}

/// The scenario body.
pub fn run(env: &Env) -> Result<()> {
    if env.controllers.len() < 3 {
        bail!(
            "acls needs 3 controllers, IT_CONTROLLERS has {}",
            env.controllers.len()
        );
    }
    let start = Instant::now();
    let mut ids: Vec<i32> = (1..=env.controllers.len() as i32).collect();
    ids.push(FIRST_BROKER_ID);
    let dir = make_certificates(env, &ids)?;
    key_store(&dir, "alice", true)?;
    let (mut controller_props, mut broker_props) = tls_props(&dir);
    let authorizer = props(&[
        ("authorizer.class.name", STANDARD_AUTHORIZER),
        ("super.users", &super_users(&ids)),
        ("allow.everyone.if.no.acl.found", "false"),
    ]);
    controller_props.extend(authorizer.clone());
    broker_props.extend(authorizer);
    let spec = ClusterSpec {
        controllers: env.controllers.clone(),
        brokers: 1,
        controller_props,
        broker_props,
    };
    let mut c = Cluster::new(env, &spec)?;
    let admin = client_config(&dir, "admin", Some("admin"))?;
    let alice = client_config(&dir, "alice", Some("alice"))?;
    c.controller_client_config = Some(admin.clone());
    c.format_all()?;
    c.start_controllers()?;
    let status = c.wait_quorum(Duration::from_secs(90))?;
    env.step(&format!(
        "quorum with StandardAuthorizer on every controller: leader {} epoch {} (the voters are \
         super users by certificate; kafka-metadata-quorum as admin)",
        status.leader_id, status.leader_epoch
    ));
    c.start_brokers()?;
    c.wait_broker_ready(FIRST_BROKER_ID, Duration::from_secs(120))?;
    env.step("broker 101 (User:node-101, a super user) registered and is unfenced");

    let controllers = c.controller_bootstrap();
    let broker = c.broker_bootstrap();

    // alice: no ACL. A controller answers DescribeCluster (the admin client's metadata request
    // in --bootstrap-controller mode) only with ALTER on the cluster, and CreateAcls needs ALTER.
    wait_for_describe_quorum(env, &controllers, &alice, false)?;
    env.step(
        "alice (no ACL) is refused by the controllers: CLUSTER_AUTHORIZATION_FAILED \
         (DescribeCluster needs ALTER)",
    );
    let r = acls(
        env,
        &controllers,
        &alice,
        &[
            "--add",
            "--allow-principal",
            "User:alice",
            "--operation",
            "All",
            "--cluster",
        ],
    )?;
    expect_refused(env, &r, "alice's kafka-acls --add")?;
    env.step("alice cannot create ACLs herself (no ALTER on the cluster)");

    // Anonymous clients of the broker: no topic may be created yet.
    expect_refused(
        env,
        &try_create_topic(env, &broker, "acl-orders", 1)?,
        "an anonymous kafka-topics --create acl-orders before any ACL",
    )?;
    env.step("an anonymous client cannot create topic acl-orders before any ACL");

    // The admin grants through the controllers: (principal, operation, resource arguments).
    let alice_alter: [&str; 5] = [
        "--allow-principal",
        "User:alice",
        "--operation",
        "Alter",
        "--cluster",
    ];
    let anonymous = |operation: &'static str, resource: &'static [&'static str]| {
        let mut a = vec![
            "--allow-principal",
            "User:ANONYMOUS",
            "--operation",
            operation,
        ];
        a.extend(resource);
        a
    };
    let prefixed_topic: &[&str] = &["--topic", "acl-", "--resource-pattern-type", "prefixed"];
    let prefixed_group: &[&str] = &["--group", "acl-", "--resource-pattern-type", "prefixed"];
    let grants: [Vec<&str>; 4] = [
        alice_alter.to_vec(),
        anonymous("All", prefixed_topic),
        anonymous("All", prefixed_group),
        anonymous("Describe", &["--cluster"]),
    ];
    for grant in &grants {
        let mut add = vec!["--add"];
        add.extend(grant);
        ok(
            acls(env, &controllers, &admin, &add)?,
            &format!("admin's kafka-acls {}", add.join(" ")),
        )?;
    }
    env.step(
        "admin created 4 ACLs through kafka-acls --bootstrap-controller: alice ALTER and \
         anonymous DESCRIBE on the cluster, anonymous ALL on topics and groups prefixed acl-",
    );

    wait_for_describe_quorum(env, &controllers, &alice, true)?;
    env.step("with ALTER on the cluster, alice's kafka-metadata-quorum describe works");

    create_topic_when_allowed(env, &broker, "acl-orders", 1)?;
    let sent = messages("acl", 100);
    produce(env, &broker, "acl-orders", &sent, &[])?;
    let got = consume(env, &broker, "acl-orders", "acl-group", sent.len())?;
    assert_same_messages("acl-orders", &sent, &got)?;
    expect_refused(
        env,
        &try_create_topic(env, &broker, "other-orders", 1)?,
        "an anonymous kafka-topics --create other-orders (outside the acl- prefix)",
    )?;
    env.step("outside the acl- prefix the anonymous client is still refused (other-orders)");

    let from_controller = list_acls(env, &controllers, &admin)?;
    let from_broker = list_acls_via_broker(env, &c)?;
    for (who, text) in [
        ("a controller", &from_controller),
        ("the broker", &from_broker),
    ] {
        for want in ["User:alice", "User:ANONYMOUS", "PREFIXED", "acl-"] {
            if !text.contains(want) {
                bail!(
                    "kafka-acls --list through {who} lacks `{want}`: {}",
                    util::one_line(text, 600)
                );
            }
        }
    }
    env.step("kafka-acls --list through a controller and through the broker show the 4 ACLs");

    let mut remove = vec!["--remove", "--force"];
    remove.extend(alice_alter);
    ok(
        acls(env, &controllers, &admin, &remove)?,
        "admin's kafka-acls --remove (alice)",
    )?;
    wait_for_describe_quorum(env, &controllers, &alice, false)?;
    env.step("after kafka-acls --remove, alice is refused by the controllers again");

    cidr_hosts(env, &controllers, &admin, &alice)?;

    c.check_alive()?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(30))?;
    println!("acls_scenario_ms={}", start.elapsed().as_millis());
    Ok(())
}

/// KIP-1276, at metadata.version 4.4-IV1 and later: alice's ALTER on the cluster granted for
/// a CIDR block holding her address (`--allow-host 127.0.0.0/8`) lets her describe the quorum;
/// granted for a block that does not (`10.0.0.0/8`), it does not. Skipped below 4.4-IV1.
fn cidr_hosts(env: &Env, controllers: &str, admin: &Path, alice: &Path) -> Result<()> {
    let supported = MetadataVersion::from_version_string(&env.release_version, true)
        .map(|mv| mv.is_cidr_acl_supported())
        .unwrap_or(false);
    let grant = |host: &'static str| {
        vec![
            "--allow-principal",
            "User:alice",
            "--allow-host",
            host,
            "--operation",
            "Alter",
            "--cluster",
        ]
    };
    let with = |verb: &'static [&'static str], host: &'static str| {
        let mut a: Vec<&str> = verb.to_vec();
        a.extend(grant(host));
        a
    };
    if !supported {
        // (Refusal below 4.4-IV1 is a unit test: a Java controller of an older release would
        // take the pattern as a literal host, so a mixed quorum could not check it here.)
        env.step(&format!(
            "CIDR host ACLs not checked: {} is below 4.4-IV1",
            env.release_version
        ));
        return Ok(());
    }
    ok(
        acls(env, controllers, admin, &with(&["--add"], "127.0.0.0/8"))?,
        "admin's kafka-acls --add --allow-host 127.0.0.0/8 (alice)",
    )?;
    wait_for_describe_quorum(env, controllers, alice, true)?;
    env.step("alice ALTER on the cluster from 127.0.0.0/8: her describe --status works");
    ok(
        acls(
            env,
            controllers,
            admin,
            &with(&["--remove", "--force"], "127.0.0.0/8"),
        )?,
        "admin's kafka-acls --remove --allow-host 127.0.0.0/8 (alice)",
    )?;
    ok(
        acls(env, controllers, admin, &with(&["--add"], "10.0.0.0/8"))?,
        "admin's kafka-acls --add --allow-host 10.0.0.0/8 (alice)",
    )?;
    wait_for_describe_quorum(env, controllers, alice, false)?;
    env.step("alice ALTER from 10.0.0.0/8 only: refused from 127.0.0.1");
    Ok(())
}

/// `kafka-acls --bootstrap-controller <controllers> --command-config <conf> <rest>`.
pub(super) fn acls(env: &Env, controllers: &str, conf: &Path, rest: &[&str]) -> Result<Captured> {
    kafka_acls(env, "--bootstrap-controller", controllers, conf, rest)
}

/// `kafka-acls <bootstrap_flag> <bootstrap> --command-config <conf> <rest>`:
/// `--bootstrap-controller` talks to the controllers, `--bootstrap-server` to brokers (which
/// forward CreateAcls and DeleteAcls in an Envelope).
pub(super) fn kafka_acls(
    env: &Env,
    bootstrap_flag: &str,
    bootstrap: &str,
    conf: &Path,
    rest: &[&str],
) -> Result<Captured> {
    let mut a = args(&[
        bootstrap_flag,
        bootstrap,
        "--command-config",
        &conf.to_string_lossy(),
    ]);
    a.extend(rest.iter().map(|s| s.to_string()));
    env.tool("kafka-acls", &a, None, Duration::from_secs(60))
}

/// The output of `kafka-acls --list` as admin through the controllers.
fn list_acls(env: &Env, controllers: &str, admin: &Path) -> Result<String> {
    let r = ok(
        acls(env, controllers, admin, &["--list"])?,
        "kafka-acls --list",
    )?;
    env.show(
        "kafka-acls --bootstrap-controller --list (admin)",
        &r.stdout,
    );
    Ok(r.stdout)
}

/// `kafka-acls --bootstrap-server <broker> --list` as the anonymous client (allowed DESCRIBE
/// on the cluster for this): the broker answers DescribeAcls from the ACL records it replayed
/// from the controllers' log. Waits for them to reach the broker.
fn list_acls_via_broker(env: &Env, c: &Cluster) -> Result<String> {
    let deadline = Instant::now() + ACL_PROPAGATION;
    loop {
        let a = args(&["--bootstrap-server", &c.broker_bootstrap(), "--list"]);
        let r = env.tool("kafka-acls", &a, None, Duration::from_secs(60))?;
        if r.ok() && r.stdout.contains("User:alice") {
            env.show("kafka-acls --bootstrap-server --list (broker)", &r.stdout);
            return Ok(r.stdout);
        }
        if Instant::now() > deadline {
            bail!(
                "kafka-acls --bootstrap-server --list never showed the ACLs (exit {:?}): {} {}",
                r.code,
                util::one_line(&r.stdout, 300),
                util::one_line(&r.stderr, 300)
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Java's tools name the refusal by its exception (`ClusterAuthorizationException`,
/// `TopicAuthorizationException`, …) or print Kafka's message for it. Kafka 4.0's admin client
/// in `--bootstrap-controller` mode does neither: it retries a DescribeCluster refused with
/// CLUSTER_AUTHORIZATION_FAILED until its timeout ("Timed out waiting for a node assignment"),
/// which counts as the refusal there (the same call as admin has just worked, so the
/// controllers are up). Later clients fail at once with the exception.
pub(super) fn is_authorization_failure(env: &Env, r: &Captured) -> bool {
    let text = format!("{}\n{}", r.stdout, r.stderr);
    text.contains("AuthorizationException")
        || text.contains("Authorization failed")
        || text.contains("not authorized")
        || (env.tools.kafka.version.starts_with("4.0.")
            && text.contains("Timed out waiting for a node assignment"))
}

/// The tool failed because of authorization (not a timeout or another error).
pub(super) fn expect_refused(env: &Env, r: &Captured, what: &str) -> Result<()> {
    if r.ok() {
        bail!(
            "{what} succeeded, but the principal has no ACL for it: {}",
            util::one_line(&r.stdout, 300)
        );
    }
    if !is_authorization_failure(env, r) {
        bail!(
            "{what} failed, but not with an authorization error (exit {:?}): {}",
            r.code,
            util::one_line(&r.stderr, 500)
        );
    }
    Ok(())
}

/// The tool exited 0.
pub(super) fn ok(r: Captured, what: &str) -> Result<Captured> {
    if !r.ok() {
        bail!(
            "{what} failed (exit {:?}): {} {}",
            r.code,
            util::one_line(&r.stdout, 300),
            util::one_line(&r.stderr, 500)
        );
    }
    Ok(r)
}

/// `kafka-topics --create` of a 1-partition topic of `replicas` replicas through the broker, as
/// the anonymous client.
pub(super) fn try_create_topic(
    env: &Env,
    broker: &str,
    topic: &str,
    replicas: u32,
) -> Result<Captured> {
    let replicas = replicas.to_string();
    let a = args(&[
        "--bootstrap-server",
        broker,
        "--create",
        "--topic",
        topic,
        "--partitions",
        "1",
        "--replication-factor",
        &replicas,
    ]);
    env.tool("kafka-topics", &a, None, Duration::from_secs(60))
}

/// Creates `topic` (`replicas` replicas) once the broker and the active controller have
/// replayed the ACL that allows it (an authorization refusal is retried until
/// [`ACL_PROPAGATION`]).
pub(super) fn create_topic_when_allowed(
    env: &Env,
    broker: &str,
    topic: &str,
    replicas: u32,
) -> Result<()> {
    let deadline = Instant::now() + ACL_PROPAGATION;
    loop {
        let r = try_create_topic(env, broker, topic, replicas)?;
        if r.ok() {
            break;
        }
        if !is_authorization_failure(env, &r) || Instant::now() > deadline {
            bail!(
                "kafka-topics --create {topic} under an ALLOW ACL failed (exit {:?}): {}",
                r.code,
                util::one_line(&r.stderr, 500)
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    env.step(&format!(
        "the anonymous client created topic {topic} through the broker (forwarded to the \
         active controller in an Envelope, which authorizes User:ANONYMOUS again)"
    ));
    Ok(())
}

/// `kafka-metadata-quorum describe --status` as `conf`'s principal until its outcome is
/// `allowed` (refused: an authorization error), for at most [`ACL_PROPAGATION`].
fn wait_for_describe_quorum(
    env: &Env,
    controllers: &str,
    conf: &Path,
    allowed: bool,
) -> Result<()> {
    let deadline = Instant::now() + ACL_PROPAGATION;
    loop {
        let a = args(&[
            "--bootstrap-controller",
            controllers,
            "--command-config",
            &conf.to_string_lossy(),
            "describe",
            "--status",
        ]);
        let r = env.tool("kafka-metadata-quorum", &a, None, Duration::from_secs(60))?;
        let refused = !r.ok() && is_authorization_failure(env, &r);
        if (allowed && r.ok()) || (!allowed && refused) {
            return Ok(());
        }
        if !r.ok() && !refused {
            bail!(
                "kafka-metadata-quorum describe --status failed with something other than an \
                 authorization error (exit {:?}): {}",
                r.code,
                util::one_line(&r.stderr, 500)
            );
        }
        if Instant::now() > deadline {
            bail!(
                "kafka-metadata-quorum describe --status was still {} after {:?}",
                if allowed { "refused" } else { "allowed" },
                ACL_PROPAGATION
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}
