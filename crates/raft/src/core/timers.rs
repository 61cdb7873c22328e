//! Timers per role: elections, fetch timeouts (and fast failure detection), BeginQuorumEpoch
//! heartbeats, check quorum, batch linger, parked-fetch expiry.

use rand::Rng;
use tracing::info;

use super::{RaftCore, RaftError};
use crate::io::{Output, RaftRequest, SendFailure};
use crate::role::{Follower, Role};
use crate::storage::{QuorumStateStore, ReplicatedLog};

impl<L: ReplicatedLog, Q: QuorumStateStore> RaftCore<L, Q> {
    // ----- timers per role -------------------------------------------------------------------

    pub(super) fn poll_leader(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let check_quorum_ms = self.config.check_quorum_timeout_ms();
        self.maybe_complete_voter_change(now_ms);
        let Role::Leader(l) = &self.role else {
            unreachable!()
        };
        if self.shutting_down
            || self.resign_requested
            || (!l.check_quorum_disabled() && now_ms >= l.check_quorum_deadline_ms)
        {
            if !self.shutting_down && !self.resign_requested {
                info!(
                    epoch = self.epoch,
                    timeout_ms = check_quorum_ms,
                    "no fetch from a majority of voters: resigning"
                );
            }
            self.transition_to_resigned(now_ms)?;
            return self.poll_resigned(now_ms);
        }
        let linger_due = l
            .accumulator
            .opened_ms
            .is_some_and(|t| now_ms >= t + self.config.append_linger_ms)
            || !l.accumulator.closed.is_empty();
        if linger_due {
            self.flush_accumulator(now_ms)?;
        }
        self.expire_parked_fetches(now_ms)?;
        let Role::Leader(l) = &self.role else {
            return Ok(());
        };
        if now_ms >= l.begin_quorum_epoch_deadline_ms {
            let targets: Vec<i32> = self
                .voter_set()
                .ids()
                .filter(|&v| v != self.config.node_id)
                .collect();
            for voter in targets {
                if self.requests.is_ready(voter, now_ms) {
                    let request = self.build_begin_quorum_epoch_request(voter);
                    self.send(voter, now_ms, request);
                }
            }
            let half_fetch_timeout = self.config.fetch_timeout_ms / 2;
            if let Role::Leader(l) = &mut self.role {
                l.begin_quorum_epoch_deadline_ms = now_ms + half_fetch_timeout;
            }
        }
        Ok(())
    }

    pub(super) fn poll_candidate(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let Role::Candidate(c) = &self.role else {
            unreachable!()
        };
        if now_ms >= c.election_deadline_ms && !self.shutting_down {
            info!(epoch = self.epoch, "election not won in time");
            return self.start_election(now_ms);
        }
        self.send_vote_requests(now_ms);
        Ok(())
    }

    pub(super) fn poll_prospective(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let Role::Prospective(p) = &self.role else {
            unreachable!()
        };
        if now_ms >= p.election_deadline_ms {
            info!(epoch = self.epoch, "pre-vote timed out");
            return self.prospective_lost(now_ms);
        }
        self.send_vote_requests(now_ms);
        Ok(())
    }

    /// When a follower gives up on its leader: the fetch timeout, or (fast failure detection)
    /// the leader's connection refused or reset for a while, plus a random delay.
    pub(super) fn follower_deadline_ms(&self, f: &Follower) -> u64 {
        let fast = match (
            self.config.fast_failure_detection_ms,
            f.leader_unreachable_since_ms,
        ) {
            (Some(after), Some(since)) if self.is_voter() => {
                since + after + self.fast_failure_jitter_ms
            }
            _ => u64::MAX,
        };
        f.fetch_deadline_ms.min(fast)
    }

    /// Tracks connection failures to the leader (fast failure detection), and lets a
    /// Prospective whose peer cannot pre-vote run a real election (Kafka does the same).
    pub(super) fn on_send_failed(
        &mut self,
        now_ms: u64,
        destination: i32,
        failure: SendFailure,
    ) -> Result<(), RaftError> {
        match &mut self.role {
            Role::Follower(f)
                if f.leader_id == destination && failure == SendFailure::Disconnected =>
            {
                if f.leader_unreachable_since_ms.is_none() {
                    f.leader_unreachable_since_ms = Some(now_ms);
                    let jitter = self.config.fast_failure_jitter_ms;
                    self.fast_failure_jitter_ms = if jitter == 0 {
                        0
                    } else {
                        self.rng.gen_range(0..jitter)
                    };
                }
                Ok(())
            }
            Role::Resigned(r) if self.shutting_down && failure == SendFailure::Disconnected => {
                // A voter that refuses connections is gone (stopping with us, say): waiting for
                // its acknowledgement or its leadership would only hold up our shutdown.
                r.unacked.remove(&destination);
                self.unreachable_while_stopping.insert(destination);
                Ok(())
            }
            Role::Prospective(_) if failure == SendFailure::UnsupportedVersion => {
                info!(
                    epoch = self.epoch,
                    destination,
                    "a voter cannot pre-vote (Vote < v2): running the election directly"
                );
                self.transition_to_candidate(now_ms)
            }
            _ => Ok(()),
        }
    }

    pub(super) fn poll_follower(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let Role::Follower(f) = &self.role else {
            unreachable!()
        };
        let leader = f.leader_id;
        if now_ms >= self.follower_deadline_ms(f) {
            if self.shutting_down {
                return Ok(());
            }
            if self.is_voter() {
                if now_ms >= f.fetch_deadline_ms {
                    info!(
                        epoch = self.epoch,
                        leader, "fetch timeout: starting an election"
                    );
                } else {
                    info!(
                        epoch = self.epoch,
                        leader,
                        "leader unreachable (connection refused or reset): starting an election"
                    );
                }
                return self.start_election(now_ms);
            }
            // Observer: look for the leader through any voter.
            return self.send_fetch_to_any_voter(now_ms);
        }
        if self.requests.is_ready(leader, now_ms) {
            if now_ms >= f.update_voter_deadline_ms && f.fetching_snapshot.is_none() {
                // A voter reports itself (UpdateRaftVoter); an observer may join (auto-join).
                let report = if self.is_voter() {
                    self.should_send_update_voter()
                        .then(|| self.build_update_voter_request())
                        .flatten()
                } else {
                    self.auto_join_request()
                };
                if let Role::Follower(f) = &mut self.role {
                    f.update_voter_deadline_ms = now_ms + 3 * self.config.fetch_timeout_ms;
                }
                if let Some(request) = report {
                    self.send(leader, now_ms, request);
                    return Ok(());
                }
            }
            let Role::Follower(f) = &self.role else {
                unreachable!()
            };
            let request = match &f.fetching_snapshot {
                Some(s) => self.build_fetch_snapshot_request(s.id, s.sink.position()),
                None => self.build_fetch_request(),
            };
            self.send(leader, now_ms, request);
        }
        Ok(())
    }

    pub(super) fn poll_unattached(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let Role::Unattached(u) = &self.role else {
            unreachable!()
        };
        // Kafka `pollUnattached`: only a voter runs for election. A node that is not one (a
        // spare, a removed voter, a wiped disk) may still hold an election timer, e.g. from
        // a vote it granted before the VotersRecord adding it reached it.
        if !self.is_voter() {
            return self.send_fetch_to_any_voter(now_ms);
        }
        match u.election_deadline_ms {
            Some(deadline) if now_ms >= deadline && !self.shutting_down => {
                self.start_election(now_ms)
            }
            Some(_) => Ok(()),
            None => self.send_fetch_to_any_voter(now_ms),
        }
    }

    pub(super) fn poll_resigned(&mut self, now_ms: u64) -> Result<(), RaftError> {
        let Role::Resigned(r) = &self.role else {
            unreachable!()
        };
        if !self.shutting_down && now_ms >= r.election_deadline_ms {
            return if self.is_voter() {
                self.start_election(now_ms)
            } else {
                let epoch = self.epoch.checked_add(1).ok_or(RaftError::EpochExhausted)?;
                self.transition_to_unattached(epoch, now_ms)
            };
        }
        // Stopping, every voter is asked again (each retry backoff) until a successor is
        // known: a voter that already leads the next epoch names itself in its answer, and
        // one that refuses the connection is gone.
        let targets: Vec<i32> = if self.shutting_down {
            let me = self.config.node_id;
            self.voter_set()
                .ids()
                .filter(|id| *id != me && !self.unreachable_while_stopping.contains(id))
                .collect()
        } else {
            r.unacked.iter().copied().collect()
        };
        for voter in targets {
            if self.requests.is_ready(voter, now_ms) {
                let request = self.build_end_quorum_epoch_request();
                self.send(voter, now_ms, request);
            }
        }
        Ok(())
    }

    /// Sends `request` to node `destination` (negative: a bootstrap server) at the endpoint
    /// [`Self::resolve`] gives; nothing is sent to a node whose endpoint is unknown.
    pub(crate) fn send(&mut self, destination: i32, now_ms: u64, request: RaftRequest) {
        let Some(endpoint) = self.resolve(destination) else {
            tracing::debug!(
                destination,
                "no endpoint known for the destination; not sent"
            );
            // Retried after the backoff, not at once (no timer would spin on it).
            self.requests
                .backoff(destination, now_ms, self.config.retry_backoff_ms);
            return;
        };
        let id = self
            .requests
            .on_send(destination, now_ms, self.config.request_timeout_ms);
        self.emit(Output::Send {
            id,
            destination: crate::io::Destination {
                node_id: destination,
                endpoint,
            },
            request,
        });
    }
}
