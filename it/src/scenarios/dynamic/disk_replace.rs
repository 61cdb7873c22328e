//! `disk-replace`: a voter whose disk is replaced is removed by its old directory id and added
//! back by its new one; while it is gone, a wiped voter cannot take part in an election.

use super::*;
use crate::scenarios::e2e;

/// `disk-replace`.
pub fn run_disk_replace(env: &Env) -> Result<()> {
    let k = kinds(env, 3);
    let mut c = bootstrap_dynamic(env, &k, 1, Vec::new(), e2e::single_broker_props())?;
    let mut p = start_acked_producer(env, &mut c)?;
    let st = mixed::leader_status(&c)?;
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    let victim = *ids
        .iter()
        .rev()
        .find(|i| **i != st.leader_id)
        .context("no follower")?;
    let old_dir = c.directory_id(victim)?;
    let hw_before = st.high_watermark;
    env.step(&format!(
        "replacing the disk of {} (directory id {old_dir})",
        mixed::label(&c, victim)
    ));
    stop_clean(env, &mut c, victim)?;
    c.wipe(victim)?;
    c.format_node(victim, &Format::NoInitialControllers)?;
    let new_dir = c.directory_id(victim)?;
    if new_dir == old_dir {
        bail!("formatting the wiped disk again kept directory id {old_dir}");
    }
    c.start(victim)?;
    // The old (id, directory) stays a voter; the new disk fetches as an observer.
    let boot = c.controller_bootstrap();
    let st = util::wait_until(
        &format!("({victim}, {new_dir}) as an observer while ({victim}, {old_dir}) is a voter"),
        Duration::from_secs(60),
        Duration::from_millis(500),
        || {
            c.check_alive()?;
            let (st, _) = c.describe_status(&boot, Duration::from_secs(30))?;
            Ok((st.voter_keys.contains(&(victim, Some(old_dir.clone())))
                && st.observer_keys.contains(&(victim, Some(new_dir.clone()))))
            .then_some(st))
        },
    )?;
    env.step(&format!(
        "{victim} with the new disk is an observer; voters {:?}, observers {:?}",
        st.voter_keys, st.observer_keys
    ));
    more_acks(env, &mut p)?;
    remove_voter(env, &mut c, victim, &old_dir)?;
    add_voter(env, &mut c, victim)?;
    let st = assert_voter_set(env, &mut c, &ids)?;
    if st.high_watermark < hw_before {
        bail!(
            "high watermark went back from {hw_before} to {}",
            st.high_watermark
        );
    }
    let hw = checks::wait_converged(env, &c, Duration::from_secs(90))?;
    checks::assert_logs_agree(env, &c, hw)?;
    more_acks(env, &mut p)?;
    wiped_voter_cannot_elect(env, &mut c)?;
    more_acks(env, &mut p)?;
    finish(env, &mut c, p)
}

/// Case C02 (b) with the dynamic voter set: R (a new topic) is committed by the leader L and
/// follower A while follower B is frozen (lagging). L and A crash, A's disk is wiped and
/// formatted again (new directory id); A and B come back, L stays down. B must not become
/// leader: the only other live node is A, whose replica key (id, new directory id) is not the
/// voter (id, old directory id), so its vote cannot count. When L returns it leads (B's log
/// lacks R), R is still there, and A is replaced (removed by its old directory id, added with
/// the new one).
///
/// The wiped node is a follower, not the old leader, because of a Kafka 4.1 fault: a
/// controller that comes back with an empty disk while a peer still names it the leader of
/// the old epoch (B, thawed, answers its Fetch with "leader = you, epoch 1") dies in
/// `KafkaRaftClient.maybeTransition` with "IllegalStateException: Received request or
/// response with leader OptionalInt[1] and epoch 1 which is inconsistent with current leader
/// OptionalInt.empty and epoch 0" (fatal fault in the raft IO thread).
fn wiped_voter_cannot_elect(env: &Env, c: &mut Cluster) -> Result<()> {
    let st = mixed::leader_status(c)?;
    // v1: the follower A that gets wiped; v2: the leader L (stays down); v3: B, lagging.
    let v2 = st.leader_id;
    let ids: Vec<i32> = c.controllers.iter().map(|n| n.id).collect();
    let others: Vec<i32> = ids.iter().copied().filter(|i| *i != v2).collect();
    let (v1, v3) = (others[0], others[1]);
    env.step(&format!(
        "C02 (b): leader {v2} and follower {v1} commit R, follower {v3} lags (frozen)"
    ));
    c.freeze(v3)?;
    let boot = c.broker_bootstrap();
    let r = util::wait_until(
        "kafka-topics --create record-r while V3 is frozen",
        Duration::from_secs(60),
        Duration::from_secs(1),
        || {
            let r = env.tool(
                "kafka-topics",
                &args(&[
                    "--bootstrap-server",
                    &boot,
                    "--create",
                    "--topic",
                    "record-r",
                    "--partitions",
                    "1",
                    "--replication-factor",
                    "1",
                ]),
                None,
                Duration::from_secs(60),
            )?;
            if r.ok() {
                return Ok(Some(r));
            }
            bail!("{}", util::one_line(&r.stderr, 300))
        },
    );
    let r = r.inspect_err(|_| {
        let _ = c.thaw(v3);
    })?;
    env.step(&format!(
        "record R committed by {v1} and {v2} (topic record-r created in {})",
        util::secs(r.elapsed)
    ));
    let old_dir = c.directory_id(v1)?;
    c.kill(v2)?;
    c.kill(v1)?;
    env.step(&format!("SIGKILLed the leader {v2} and follower {v1}"));
    c.wipe(v1)?;
    c.format_node(v1, &Format::NoInitialControllers)?;
    let new_dir = c.directory_id(v1)?;
    c.start(v1)?;
    c.thaw(v3)?;
    env.step(&format!(
        "{v1} back with a new disk ({old_dir} -> {new_dir}), {v3} thawed, {v2} stays down"
    ));
    let live = format!("{},{}", c.node(v1)?.addr(), c.node(v3)?.addr());
    let watch = Instant::now();
    while watch.elapsed() < Duration::from_secs(20) {
        c.check_alive()?;
        if let Ok((st, _)) = c.describe_status_fast(&live) {
            if st.leader_id == v3 && st.leader_epoch > 0 {
                bail!(
                    "{v3}, whose log lacks R, became leader in epoch {} with the vote of {v1}'s wiped disk",
                    st.leader_epoch
                );
            }
        }
        util::sleep(Duration::from_millis(500))?;
    }
    env.step(&format!(
        "no leader for 20 s with {v1} (new disk) and {v3} (lagging) up: the wiped voter's vote does not count"
    ));
    let refusals =
        c.node(v3)?.log_count("INVALID_VOTER_KEY") + c.node(v1)?.log_count("INVALID_VOTER_KEY");
    env.step(&format!(
        "INVALID_VOTER_KEY in the logs of {v1} and {v3}: {refusals} line(s)"
    ));
    c.start(v2)?;
    let back = format!("{},{}", c.node(v2)?.addr(), c.node(v3)?.addr());
    let st = util::wait_until(
        &format!("a leader once {v2} is back"),
        Duration::from_secs(60),
        Duration::from_millis(500),
        || {
            let (st, _) = c.describe_status_fast(&back)?;
            Ok((st.leader_id >= 0).then_some(st))
        },
    )?;
    if st.leader_id != v2 {
        bail!(
            "{} leads epoch {} after {v2} came back; only {v2} holds R",
            st.leader_id,
            st.leader_epoch
        );
    }
    env.step(&format!("{v2} leads epoch {}", st.leader_epoch));
    let (parts, _) = c.describe_topic(&boot, "record-r", Duration::from_secs(60))?;
    env.step(&format!(
        "R survived: record-r has {} partition(s)",
        parts.len()
    ));
    remove_voter(env, c, v1, &old_dir)?;
    add_voter(env, c, v1)?;
    assert_voter_set(env, c, &ids)?;
    let hw = checks::wait_converged(env, c, Duration::from_secs(90))?;
    checks::assert_logs_agree(env, c, hw)?;
    Ok(())
}
