//! `demo`: a 3-controller quorum (kraftwerk by default) with one real broker, a topic and a
//! few messages; then it stays up, printing where everything is, until Ctrl-C stops every
//! process cleanly.

use anyhow::{bail, Result};
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::e2e::start_single_broker_cluster;
use super::{assert_same_messages, consume, create_topic, produce};
use crate::env::Env;
use crate::util;

/// The demo body (returns after Ctrl-C, once everything stopped).
pub fn run(env: &Env) -> Result<()> {
    let mut c = start_single_broker_cluster(env)?;
    let boot = c.broker_bootstrap();
    create_topic(env, &boot, "demo", 3, 1, &[])?;
    let msgs: Vec<String> = (1..=5)
        .map(|i| format!("hello from kraftwerk demo, message {i}"))
        .collect();
    produce(env, &boot, "demo", &msgs, &[])?;
    let got = consume(env, &boot, "demo", "demo-group", msgs.len())?;
    assert_same_messages("demo", &msgs, &got)?;
    env.show("consumed", &got.join("\n"));
    let (_, raw) = c.describe_status(&c.controller_bootstrap(), Duration::from_secs(30))?;
    env.show(
        &format!(
            "kafka-metadata-quorum --bootstrap-controller {} describe --status",
            c.controller_bootstrap()
        ),
        &raw,
    );

    println!();
    println!("The cluster is up. Where things are:");
    for n in c.controllers.iter().chain(c.brokers.iter()) {
        println!("  {:<28} {}   log {}", n.label(), n.addr(), n.log.display());
    }
    println!("  work dir                     {}", env.work.display());
    println!("Try (from the repository root):");
    println!(
        "  KAFKA_VERSION={} scripts/kafka-run kafka-topics --bootstrap-server {boot} --list",
        env.kafka().version
    );
    println!(
        "  KAFKA_VERSION={} scripts/kafka-run kafka-metadata-quorum --bootstrap-controller {} describe --replication",
        env.kafka().version,
        c.controller_bootstrap()
    );
    println!(
        "  KAFKA_VERSION={} scripts/kafka-run kafka-console-consumer --bootstrap-server {boot} --topic demo --from-beginning",
        env.kafka().version
    );
    println!("Press Ctrl-C to stop every process.");
    while !util::INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(200));
        if let Err(e) = c.check_alive() {
            bail!("{e:#}");
        }
    }
    println!();
    env.step("Ctrl-C: stopping");
    c.stop_all(Duration::from_secs(30), Duration::from_secs(20))?;
    env.step("every process stopped");
    Ok(())
}
