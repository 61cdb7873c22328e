//! An operator's admin session against the quorum, with Kafka's own CLI tools (the last phase
//! of `e2e-rf3`, run while every broker is up). Each step exercises controller APIs that the
//! brokers forward (or that the tool sends to a controller directly) and checks what the tool
//! prints:
//!
//! 1. Partition reassignment (AlterPartitionReassignments, ListPartitionReassignments): a
//!    one-replica topic placed on one broker by `kafka-topics --replica-assignment` is moved to
//!    another with `kafka-reassign-partitions --execute`; `--list` asking the controllers
//!    answers (the move in progress, or none if it is done already); `--verify` reports it
//!    completed (and clears the throttles:
//!    IncrementalAlterConfigs), `kafka-topics --describe` shows only the new broker as replica,
//!    leader and ISR, every message is read back, and `--list` through the brokers is empty.
//! 2. Broker configs on a controller (`kafka-configs --bootstrap-controller`: DescribeConfigs
//!    and IncrementalAlterConfigs answered by the controller itself): a dynamic config set for
//!    the controller's node id is listed with its synonyms.
//! 3. A client quota (AlterClientQuotas) read back through a broker (DescribeClientQuotas is
//!    answered from the broker's replayed metadata image, so this proves the broker replayed
//!    the ClientQuotaRecord).
//! 4. A SCRAM credential (AlterUserScramCredentials) read back through a broker the same way
//!    (UserScramCredentialRecord).

use anyhow::{bail, Context, Result};
use std::time::Duration;

use super::{assert_same_messages, consume, messages, produce};
use crate::cluster::Cluster;
use crate::env::Env;
use crate::kafka::args;
use crate::parse::PartitionInfo;
use crate::util;

/// The topic the reassignment moves.
const MOVED: &str = "moved";
/// How long a tool may take (JVM start on a busy 2-core machine included).
const TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs the four admin steps; `c` must have at least two running brokers and a controller.
/// Errors quote the tool's output.
pub fn run(env: &Env, c: &mut Cluster) -> Result<()> {
    reassign(env, c).context("admin: partition reassignment")?;
    controller_configs(env, c).context("admin: broker configs on a controller")?;
    client_quota(env, c).context("admin: client quota")?;
    scram_credential(env, c).context("admin: SCRAM credential")?;
    Ok(())
}

/// Runs `tool args` (must exit 0) and returns its stdout; errors quote stdout and stderr
/// (ConfigCommand and ReassignPartitionsCommand print some failures on stdout).
fn tool_out(env: &Env, tool: &str, a: &[String]) -> Result<String> {
    let r = env.tool(tool, a, None, TOOL_TIMEOUT)?;
    if !r.ok() {
        bail!(
            "{tool} {} failed ({}): stdout: {} | stderr: {}",
            a.join(" "),
            if r.timed_out {
                "timed out".to_string()
            } else {
                format!("exit {:?}", r.code)
            },
            util::one_line(&r.stdout, 600),
            util::one_line(&r.stderr, 600)
        );
    }
    Ok(r.stdout)
}

/// Errors unless `out` has a line containing `needle`.
fn expect_line(what: &str, out: &str, needle: &str) -> Result<()> {
    if !out.lines().any(|l| l.contains(needle)) {
        bail!(
            "{what}: expected a line containing `{needle}`, the tool printed: {}",
            util::one_line(out, 800)
        );
    }
    Ok(())
}

/// Step 1: moves the one partition of [`MOVED`] from the first broker to the second and
/// reads its messages back.
fn reassign(env: &Env, c: &mut Cluster) -> Result<()> {
    let boot = c.broker_bootstrap();
    let [from, to] = match c.brokers.as_slice() {
        [a, b, ..] => [a.id, b.id],
        _ => bail!("reassignment needs two brokers"),
    };
    let sent = create_placed_topic(env, c, &boot, from)?;
    let plan_arg = write_plan(env, to)?;
    execute_move(env, c, &boot, &plan_arg, from, to)?;
    verify_moved(env, c, &boot, &plan_arg, to)?;
    let got = consume(env, &boot, MOVED, "moved-g", sent.len())?;
    assert_same_messages("the moved partition", &sent, &got)?;
    let out = tool_out(
        env,
        "kafka-reassign-partitions",
        &list_args("--bootstrap-server", &boot),
    )?;
    expect_line(
        "kafka-reassign-partitions --list after completion",
        &out,
        "No partition reassignments found.",
    )?;
    env.step("kafka-reassign-partitions --list: No partition reassignments found.");
    Ok(())
}

/// `kafka-reassign-partitions --list` asking `boot` through `flag` (`--bootstrap-server` or
/// `--bootstrap-controller`).
fn list_args(flag: &str, boot: &str) -> Vec<String> {
    args(&[flag, boot, "--list"])
}

/// Creates [`MOVED`] with its one replica on broker `from` and writes 200 messages to it
/// (acks=all); returns them.
fn create_placed_topic(env: &Env, c: &Cluster, boot: &str, from: i32) -> Result<Vec<String>> {
    let out = tool_out(
        env,
        "kafka-topics",
        &args(&[
            "--bootstrap-server",
            boot,
            "--create",
            "--topic",
            MOVED,
            "--replica-assignment",
            &from.to_string(),
        ]),
    )?;
    expect_line(
        "kafka-topics --create",
        &out,
        &format!("Created topic {MOVED}"),
    )?;
    let placed = wait_partition(c, boot, &format!("{MOVED}-0 on broker {from}"), from)?;
    env.step(&format!(
        "created topic {MOVED} with --replica-assignment {from}: {}",
        render(&placed)
    ));
    let sent = messages("moved", 200);
    produce(
        env,
        boot,
        MOVED,
        &sent,
        &["--producer-property", "acks=all"],
    )?;
    Ok(sent)
}

/// Writes the reassignment plan (`MOVED`-0 onto broker `to` only) into the work directory;
/// returns its path.
fn write_plan(env: &Env, to: i32) -> Result<String> {
    let plan = env
        .work
        .join(format!("reassign-{MOVED}-{}.json", util::unix_ms()));
    std::fs::write(
        &plan,
        format!(
            r#"{{"version":1,"partitions":[{{"topic":"{MOVED}","partition":0,"replicas":[{to}]}}]}}"#
        ),
    )
    .with_context(|| format!("writing {}", plan.display()))?;
    Ok(plan.to_string_lossy().to_string())
}

/// `--execute` the plan, then `--list` asking the controllers directly.
fn execute_move(
    env: &Env,
    c: &Cluster,
    boot: &str,
    plan_arg: &str,
    from: i32,
    to: i32,
) -> Result<()> {
    // The move itself takes milliseconds (a target broker that cannot fetch would keep it in
    // progress, but `--execute` refuses a stopped broker and a SIGSTOPped one stalls the admin
    // requests that land on it), so `--list` during the move may find it done already: it must
    // answer, from the controllers directly, with either outcome. What it lists while a move is
    // in progress is covered by the controller's unit tests.
    let controllers = c.controller_bootstrap();
    let out = tool_out(
        env,
        "kafka-reassign-partitions",
        &args(&[
            "--bootstrap-server",
            boot,
            "--reassignment-json-file",
            plan_arg,
            "--execute",
        ]),
    )?;
    expect_line(
        "kafka-reassign-partitions --execute",
        &out,
        &format!("Successfully started partition reassignment for {MOVED}-0"),
    )?;
    env.step(&format!(
        "kafka-reassign-partitions --execute: {MOVED}-0 from broker {from} to broker {to}"
    ));
    let out = tool_out(
        env,
        "kafka-reassign-partitions",
        &list_args("--bootstrap-controller", &controllers),
    )?;
    env.show(
        "kafka-reassign-partitions --bootstrap-controller --list (right after --execute)",
        out.trim(),
    );
    let ongoing = format!("{MOVED}-0: replicas: {to},{from}. adding: {to}. removing: {from}.");
    if !out.contains(&ongoing) && !out.contains("No partition reassignments found.") {
        bail!(
            "kafka-reassign-partitions --list right after --execute shows neither the move in progress \
             ({ongoing}) nor no reassignment: {}",
            util::one_line(&out, 400)
        );
    }
    Ok(())
}

/// Waits until `--verify` reports the move completed and `kafka-topics --describe` shows only
/// broker `to` as replica, leader and ISR.
fn verify_moved(env: &Env, c: &Cluster, boot: &str, plan_arg: &str, to: i32) -> Result<()> {
    let verify_args = args(&[
        "--bootstrap-server",
        boot,
        "--reassignment-json-file",
        plan_arg,
        "--verify",
    ]);
    let completed = format!("Reassignment of partition {MOVED}-0 is completed.");
    let verified = util::wait_until(
        &format!("kafka-reassign-partitions --verify to report {MOVED}-0 completed"),
        Duration::from_secs(90),
        Duration::from_millis(500),
        || {
            let out = tool_out(env, "kafka-reassign-partitions", &verify_args)?;
            if out.contains(&completed) {
                Ok(Some(out))
            } else {
                bail!("{}", util::one_line(&out, 300))
            }
        },
    )?;
    env.show("kafka-reassign-partitions --verify", verified.trim());
    let moved = wait_partition(c, boot, &format!("{MOVED}-0 on broker {to} only"), to)?;
    env.step(&format!("after the move: {}", render(&moved)));
    Ok(())
}

/// Waits until `MOVED`-0 has `broker` as its only replica, its leader and its only ISR member.
fn wait_partition(c: &Cluster, boot: &str, what: &str, broker: i32) -> Result<PartitionInfo> {
    util::wait_until(
        what,
        Duration::from_secs(90),
        Duration::from_millis(500),
        || {
            let (ps, _) = c.describe_topic(boot, MOVED, TOOL_TIMEOUT)?;
            match ps.as_slice() {
                [p] if p.replicas == [broker] && p.isr == [broker] && p.leader == broker => {
                    Ok(Some(p.clone()))
                }
                _ => bail!("{}", ps.iter().map(render).collect::<Vec<_>>().join("; ")),
            }
        },
    )
}

fn render(p: &PartitionInfo) -> String {
    format!(
        "{}-{}  leader {}  replicas {:?}  isr {:?}",
        p.topic, p.partition, p.leader, p.replicas, p.isr
    )
}

/// `log.cleaner.threads` is a per-broker dynamic config; a controller runs no log cleaner, so
/// setting it there changes nothing but the stored config.
const NODE_CONFIG: &str = "log.cleaner.threads";
const NODE_VALUE: &str = "2";

/// Broker configs on a controller: `kafka-configs --bootstrap-controller --describe` of the first
/// controller's node id prints its dynamic-config header; `--alter` sets [`NODE_CONFIG`], and the
/// next describe lists it with its DYNAMIC_BROKER_CONFIG synonym (DescribeConfigs and
/// IncrementalAlterConfigs answered by the controller, KIP-919).
pub fn controller_configs(env: &Env, c: &Cluster) -> Result<()> {
    let ctl = c.controllers.first().context("no controller")?;
    let addr = ctl.addr();
    let id = ctl.id.to_string();
    let describe = args(&[
        "--bootstrap-controller",
        &addr,
        "--describe",
        "--entity-type",
        "brokers",
        "--entity-name",
        &id,
    ]);
    let header = format!("Dynamic configs for broker {id} are:");
    let out = tool_out(env, "kafka-configs", &describe)?;
    expect_line(
        "kafka-configs --bootstrap-controller --describe",
        &out,
        &header,
    )?;
    env.show(
        &format!("kafka-configs --bootstrap-controller {addr} --describe broker {id}"),
        out.trim(),
    );

    let out = tool_out(
        env,
        "kafka-configs",
        &args(&[
            "--bootstrap-controller",
            &addr,
            "--alter",
            "--entity-type",
            "brokers",
            "--entity-name",
            &id,
            "--add-config",
            &format!("{NODE_CONFIG}={NODE_VALUE}"),
        ]),
    )?;
    expect_line(
        "kafka-configs --bootstrap-controller --alter",
        &out,
        &format!("Completed updating config for broker {id}."),
    )?;
    // The controller answers DescribeConfigs from its committed image: the record may need a
    // moment to commit after the alter returned on another controller's behalf.
    let entry = format!("  {NODE_CONFIG}={NODE_VALUE} sensitive=false synonyms={{");
    let synonym = format!("DYNAMIC_BROKER_CONFIG:{NODE_CONFIG}={NODE_VALUE}");
    let out = util::wait_until(
        &format!("kafka-configs --describe on controller {id} to list {NODE_CONFIG}={NODE_VALUE}"),
        Duration::from_secs(60),
        Duration::from_millis(500),
        || {
            let out = tool_out(env, "kafka-configs", &describe)?;
            let ok = out
                .lines()
                .any(|l| l.starts_with(&entry) && l.contains(&synonym));
            if ok {
                Ok(Some(out))
            } else {
                bail!("{}", util::one_line(&out, 400))
            }
        },
    )?;
    expect_line("kafka-configs --describe after --alter", &out, &header)?;
    env.show(
        &format!("after --alter {NODE_CONFIG}={NODE_VALUE}: kafka-configs --describe broker {id}"),
        out.trim(),
    );
    Ok(())
}

/// Sets `config` on `entity` through the brokers with `kafka-configs --alter`, then asks each
/// broker in turn to `--describe` it until the output has the line `want`. The admin client
/// sends the describe to the broker it bootstrapped from, which answers from its own replayed
/// metadata image: every broker must have replayed the record.
fn alter_then_describe_everywhere(
    env: &Env,
    c: &Cluster,
    entity: [&str; 4],
    config: &str,
    want: &str,
) -> Result<()> {
    let boot = c.broker_bootstrap();
    let mut alter = args(&[
        "--bootstrap-server",
        &boot,
        "--alter",
        "--add-config",
        config,
    ]);
    alter.extend(args(&entity));
    let out = tool_out(env, "kafka-configs", &alter)?;
    expect_line(
        &format!("kafka-configs --alter --add-config {config}"),
        &out,
        "Completed updating config for",
    )?;
    for b in &c.brokers {
        let mut describe = args(&["--bootstrap-server", &b.addr(), "--describe"]);
        describe.extend(args(&entity));
        let out = util::wait_until(
            &format!("broker {} to describe {}", b.id, entity.join(" ")),
            Duration::from_secs(60),
            Duration::from_millis(500),
            || {
                let out = tool_out(env, "kafka-configs", &describe)?;
                if out.lines().any(|l| l.trim() == want) {
                    Ok(Some(out))
                } else {
                    bail!("{}", util::one_line(&out, 400))
                }
            },
        )?;
        env.step(&format!(
            "broker {}: {}",
            b.id,
            util::one_line(out.trim(), 200)
        ));
    }
    Ok(())
}

fn client_quota(env: &Env, c: &Cluster) -> Result<()> {
    alter_then_describe_everywhere(
        env,
        c,
        ["--entity-type", "clients", "--entity-name", "it-client"],
        "producer_byte_rate=1048576",
        "Quota configs for client-id 'it-client' are producer_byte_rate=1048576.0",
    )
}

fn scram_credential(env: &Env, c: &Cluster) -> Result<()> {
    alter_then_describe_everywhere(
        env,
        c,
        ["--entity-type", "users", "--entity-name", "alice"],
        "SCRAM-SHA-256=[iterations=8192,password=alice-secret]",
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192",
    )
}
