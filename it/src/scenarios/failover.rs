//! `failover`: e2e's failover measurement alone, for `scripts/measure-failover`.

use anyhow::{bail, Result};
use std::time::Duration;

use super::e2e::start_single_broker_cluster;
use super::{
    assert_same_messages, consume, create_topic, kill_leader_and_measure, messages, produce,
};
use crate::env::Env;

/// The scenario body: prints `failover_ms=<n>` (SIGKILL of the active controller → first
/// successful `kafka-topics --create`), `new_leader_seen_ms=<n>` and `create_baseline_ms=<n>`
/// (the same command on the healthy cluster, mostly JVM start-up).
pub fn run(env: &Env) -> Result<()> {
    let mut c = start_single_broker_cluster(env)?;
    let boot = c.broker_bootstrap();
    let baseline = create_topic(env, &boot, "fo-one", 3, 1, &[])?;
    let sent = messages("fo-one", 100);
    produce(env, &boot, "fo-one", &sent, &[])?;
    let f = kill_leader_and_measure(env, &mut c, "fo-two", 3)?;
    if f.leader_ms > 15_000 {
        bail!(
            "no new controller leader within 15 s of SIGKILL ({} ms)",
            f.leader_ms
        );
    }
    let sent2 = messages("fo-two", 100);
    produce(env, &boot, "fo-two", &sent2, &[])?;
    let got = consume(env, &boot, "fo-two", "g1", 100)?;
    assert_same_messages("fo-two", &sent2, &got)?;
    c.check_alive()?;
    c.stop_all(Duration::from_secs(60), Duration::from_secs(30))?;
    println!("create_baseline_ms={}", baseline.as_millis());
    println!("new_leader_seen_ms={}", f.leader_ms);
    println!("create_attempts={}", f.create_attempts);
    println!("failover_ms={}", f.failover_ms);
    Ok(())
}
