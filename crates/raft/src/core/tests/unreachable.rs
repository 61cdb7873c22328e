//! A leader with an unreachable voter stays idle between timers: every deadline it reports is
//! in the future, and a failed request to the voter is retried no sooner than the retry
//! backoff (`controller.quorum.retry.backoff.ms`) and no more often than the BeginQuorumEpoch
//! timer (Kafka `KafkaRaftClient.maybeSendBeginQuorumEpochRequests`).

use super::*;

/// How the unreachable voter 2 fails: its requests time out, or fail at once (the peer client
/// is backing off its reconnects).
#[derive(Clone, Copy, Debug)]
enum Failure {
    NeverAnswers,
    FailsAtOnce,
}

/// Runs leader 1 for 60 s with voter 3 fetching (long polls of 500 ms) and voter 2 down. Returns
/// the number of wake-ups and the times requests to 2 were sent and failed.
fn run_with_voter_2_down(failure: Failure) -> (usize, Vec<u64>, Vec<u64>) {
    let mut c = leader();
    let (start, end) = (2_002, 62_002);
    let mut now = start;
    let mut fetch_3_due = Some(now);
    let (mut wakeups, mut sent_to_2, mut failed_2) = (0, Vec::new(), Vec::new());
    let mut fetch_id = 100;
    while now < end {
        if fetch_3_due.is_some_and(|t| t <= now) {
            fetch_3_due = None;
            fetch_id += 1;
            let offset = c.log().end_offset().offset;
            let request = RaftRequest::Fetch(fetch_request(3, 1, offset, 1, 500));
            c.handle(
                now,
                Input::Request {
                    id: InboundId(fetch_id),
                    api_version: 17,
                    request,
                },
            )
            .unwrap();
        }
        c.poll(now).unwrap();
        for output in c.take_outputs() {
            match output {
                Output::Send {
                    id, destination, ..
                } if destination.node_id == 2 => {
                    sent_to_2.push(now);
                    if let Failure::FailsAtOnce = failure {
                        failed_2.push(now);
                        let failure = SendFailure::Disconnected;
                        c.handle(now, Input::SendFailed { id, failure }).unwrap();
                    }
                }
                Output::Send { .. } => {} // to 3: its BeginQuorumEpoch answers do not matter
                Output::Respond { .. } => fetch_3_due = Some(now), // 3 fetches again at once
            }
        }
        assert_eq!(
            c.role(),
            RoleKind::Leader,
            "3 keeps fetching: still leader at {now}"
        );
        let deadline = c.next_deadline_ms();
        assert!(
            deadline > now,
            "at {now} the next deadline {deadline} is not in the future"
        );
        now = fetch_3_due.map_or(deadline, |t| t.min(deadline));
        wakeups += 1;
    }
    (wakeups, sent_to_2, failed_2)
}

#[test]
fn a_leader_whose_voter_times_out_sleeps_until_its_next_timer() {
    let (wakeups, sent, _) = run_with_voter_2_down(Failure::NeverAnswers);
    // 3's long polls (2 a second), BeginQuorumEpoch (1 a second), request timeouts and backoff
    // ends: a handful a second, not a spin.
    assert!(wakeups < 60 * 8, "{wakeups} wake-ups in 60 s");
    let request_timeout = config(1).request_timeout_ms;
    assert!(
        sent.len() > 10,
        "BeginQuorumEpoch keeps going to 2: {sent:?}"
    );
    for pair in sent.windows(2) {
        assert!(
            pair[1] - pair[0] >= request_timeout,
            "2 was sent to at {pair:?}"
        );
    }
}

#[test]
fn a_leader_whose_voter_fails_at_once_retries_after_the_backoff() {
    let (wakeups, sent, failed) = run_with_voter_2_down(Failure::FailsAtOnce);
    assert!(wakeups < 60 * 8, "{wakeups} wake-ups in 60 s");
    let c = config(1);
    // Once a second (BeginQuorumEpoch timer), each retry after at least the retry backoff.
    assert!(sent.len() <= 61, "{} sends to 2 in 60 s", sent.len());
    for (failed_at, next) in failed.iter().zip(sent.iter().skip(1)) {
        assert!(
            next - failed_at >= c.retry_backoff_ms.max(c.fetch_timeout_ms / 2),
            "failed at {failed_at}, sent again at {next}"
        );
    }
}
