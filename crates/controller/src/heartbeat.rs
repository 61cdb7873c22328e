//! Broker sessions and the heartbeat state machine of the active controller (Kafka 4.1.2's
//! `BrokerHeartbeatManager` and `BrokerHeartbeatTracker`).
//!
//! Sessions are soft state: only the active controller has them, they are never written to the
//! log, and a new active controller starts every unfenced broker's session at its activation
//! time (`ClusterControlManager.activate`), so a failover alone never fences a broker. A session
//! belongs to a (broker id, broker epoch) pair; it expires when no heartbeat arrived for longer
//! than `broker.session.timeout.ms`.

use imbl::OrdMap;

use crate::image::cluster::ClusterImage;

/// The controller-side state of a broker (`BrokerControlState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokerControlState {
    /// Registered but fenced: may not lead or be in an ISR.
    Fenced,
    /// Unfenced: serving.
    Unfenced,
    /// Moving its leaderships away before shutting down.
    ControlledShutdown,
    /// Allowed to shut down now (fenced).
    ShutdownNow,
}

impl BrokerControlState {
    /// Whether a broker in this state is fenced (`BrokerControlState.fenced`).
    pub fn fenced(self) -> bool {
        matches!(
            self,
            BrokerControlState::Fenced | BrokerControlState::ShutdownNow
        )
    }

    /// `inControlledShutdown`.
    pub fn in_controlled_shutdown(self) -> bool {
        self == BrokerControlState::ControlledShutdown
    }

    /// `shouldShutDown`.
    pub fn should_shut_down(self) -> bool {
        self == BrokerControlState::ShutdownNow
    }
}

/// What a heartbeat says, plus the facts the state machine needs about the broker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeartbeatInput {
    /// `WantFence`.
    pub want_fence: bool,
    /// `WantShutDown`.
    pub want_shut_down: bool,
    /// `CurrentMetadataOffset`.
    pub current_metadata_offset: i64,
    /// Offset of the broker's RegisterBrokerRecord.
    pub registration_offset: i64,
    /// Whether the broker leads any partition.
    pub has_leaderships: bool,
}

/// What the active controller remembers about one broker between heartbeats.
#[derive(Clone, Debug, PartialEq, Eq)]
struct BrokerHeartbeatState {
    /// Broker epoch this state belongs to; a new incarnation starts a fresh state.
    epoch: i64,
    /// Whether the broker was fenced when last touched.
    fenced: bool,
    /// `CurrentMetadataOffset` of the last heartbeat, -1 before the first one.
    metadata_offset: i64,
    /// The offset the broker must reach before it may shut down, set once when it enters
    /// controlled shutdown (KAFKA-14292: recomputing it on every heartbeat delays shutdown).
    controlled_shutdown_offset: Option<i64>,
}

/// Sessions and heartbeat states of all brokers (active controller only). Persistent maps, so
/// that `Controller::handle` can give a handler a copy in O(1) and keep it only if the handler
/// finishes (a panic mid-handler leaves the sessions as they were).
#[derive(Clone, Debug)]
pub struct BrokerHeartbeatManager {
    session_timeout_ms: u64,
    /// (broker id, broker epoch) → last contact time.
    contact_ms: OrdMap<(i32, i64), u64>,
    states: OrdMap<i32, BrokerHeartbeatState>,
}

impl BrokerHeartbeatManager {
    /// A manager for an activating controller: every registered broker gets a state, and every
    /// unfenced one a session starting at `now_ms`.
    pub fn activate(session_timeout_ms: u64, cluster: &ClusterImage, now_ms: u64) -> Self {
        let mut manager = BrokerHeartbeatManager {
            session_timeout_ms,
            contact_ms: OrdMap::new(),
            states: OrdMap::new(),
        };
        for broker in cluster.brokers() {
            manager.states.insert(
                broker.id,
                BrokerHeartbeatState {
                    epoch: broker.epoch,
                    fenced: broker.fenced,
                    metadata_offset: -1,
                    controlled_shutdown_offset: None,
                },
            );
            if !broker.fenced {
                manager.contact_ms.insert((broker.id, broker.epoch), now_ms);
            }
        }
        manager
    }

    fn is_expired(&self, contact_ms: u64, now_ms: u64) -> bool {
        now_ms > contact_ms && contact_ms + self.session_timeout_ms < now_ms
    }

    /// Records a heartbeat's arrival (`trackBrokerHeartbeat`), before any validation. A contact
    /// never moves back in time: the arrival of a heartbeat processed late may be older than
    /// the session start of an activation in between.
    pub fn track_contact(&mut self, broker_id: i32, broker_epoch: i64, arrived_ms: u64) {
        let contact = self
            .contact_ms
            .entry((broker_id, broker_epoch))
            .or_default();
        *contact = (*contact).max(arrived_ms);
    }

    /// `hasValidSession(id, epoch)`: a heartbeat from this incarnation arrived within the
    /// session timeout.
    pub fn has_valid_session(&self, broker_id: i32, broker_epoch: i64, now_ms: u64) -> bool {
        self.contact_ms
            .get(&(broker_id, broker_epoch))
            .is_some_and(|t| !self.is_expired(*t, now_ms))
    }

    /// Removes and returns one expired session (`maybeRemoveExpired`), lowest broker id first.
    pub fn remove_one_expired(&mut self, now_ms: u64) -> Option<(i32, i64)> {
        let key = self
            .contact_ms
            .iter()
            .find(|(_, t)| self.is_expired(**t, now_ms))
            .map(|(k, _)| *k)?;
        self.contact_ms.remove(&key);
        Some(key)
    }

    /// When the next session expires (the first millisecond at which it counts as expired).
    pub fn next_expiry_ms(&self) -> Option<u64> {
        self.contact_ms
            .values()
            .map(|t| t + self.session_timeout_ms + 1)
            .min()
    }

    /// Drops the sessions of `broker_id`'s other incarnations: a new incarnation registered, so
    /// the old one can no longer be fenced or block registrations.
    pub fn forget_other_epochs(&mut self, broker_id: i32, epoch: i64) {
        for key in self.sessions_of(broker_id) {
            if key.1 != epoch {
                self.contact_ms.remove(&key);
            }
        }
    }

    /// Forgets a broker entirely (unregistration).
    pub fn remove(&mut self, broker_id: i32) {
        self.states.remove(&broker_id);
        for key in self.sessions_of(broker_id) {
            self.contact_ms.remove(&key);
        }
    }

    /// The session keys of every incarnation of `broker_id`.
    fn sessions_of(&self, broker_id: i32) -> Vec<(i32, i64)> {
        self.contact_ms
            .range((broker_id, i64::MIN)..=(broker_id, i64::MAX))
            .map(|(key, _)| *key)
            .collect()
    }

    /// The state of broker `broker_id` at epoch `epoch` (a fresh state for a new incarnation).
    fn state_mut(&mut self, broker_id: i32, epoch: i64, fenced: bool) -> &mut BrokerHeartbeatState {
        let state = self
            .states
            .entry(broker_id)
            .or_insert(BrokerHeartbeatState {
                epoch,
                fenced,
                metadata_offset: -1,
                controlled_shutdown_offset: None,
            });
        if state.epoch != epoch {
            *state = BrokerHeartbeatState {
                epoch,
                fenced,
                metadata_offset: -1,
                controlled_shutdown_offset: None,
            };
        }
        state
    }

    /// `currentBrokerState`: controlled shutdown if a shutdown offset is set, else fenced or
    /// unfenced as registered.
    pub fn current_state(
        &mut self,
        broker_id: i32,
        epoch: i64,
        registered_fenced: bool,
    ) -> BrokerControlState {
        let state = self.state_mut(broker_id, epoch, registered_fenced);
        state.fenced = registered_fenced;
        if state.controlled_shutdown_offset.is_some() {
            BrokerControlState::ControlledShutdown
        } else if registered_fenced {
            BrokerControlState::Fenced
        } else {
            BrokerControlState::Unfenced
        }
    }

    /// `touch`: stores the reported metadata offset and the fenced state after this heartbeat;
    /// fencing clears the controlled-shutdown offset.
    pub fn touch(&mut self, broker_id: i32, epoch: i64, fenced: bool, metadata_offset: i64) {
        let state = self.state_mut(broker_id, epoch, fenced);
        state.fenced = fenced;
        state.metadata_offset = metadata_offset;
        if fenced {
            state.controlled_shutdown_offset = None;
        }
    }

    /// `maybeUpdateControlledShutdownOffset`: sets the shutdown target once; later calls keep
    /// the first value.
    pub fn maybe_set_controlled_shutdown_offset(
        &mut self,
        broker_id: i32,
        epoch: i64,
        offset: i64,
    ) {
        let state = self.state_mut(broker_id, epoch, false);
        if state.controlled_shutdown_offset.is_none() {
            state.controlled_shutdown_offset = Some(offset);
        }
    }

    /// `fence`: the broker was fenced by session expiry; it no longer counts as active. Its
    /// controlled-shutdown target, if any, is kept (as in Java).
    pub fn mark_fenced(&mut self, broker_id: i32) {
        if let Some(state) = self.states.get_mut(&broker_id) {
            state.fenced = true;
        }
    }

    /// The controlled-shutdown target of a broker, if it is shutting down.
    pub fn controlled_shutdown_offset(&self, broker_id: i32) -> Option<i64> {
        self.states
            .get(&broker_id)
            .and_then(|s| s.controlled_shutdown_offset)
    }

    /// `lowestActiveOffset`: the lowest metadata offset reported by an active broker (unfenced,
    /// not shutting down), or `i64::MAX` if there is none.
    pub fn lowest_active_offset(&self) -> i64 {
        self.states
            .values()
            .filter(|s| !s.fenced && s.controlled_shutdown_offset.is_none())
            .map(|s| s.metadata_offset)
            .min()
            .unwrap_or(i64::MAX)
    }

    /// `calculateNextBrokerState` for a heartbeat: (current state, next state).
    pub fn next_state(
        &mut self,
        broker_id: i32,
        epoch: i64,
        registered_fenced: bool,
        heartbeat: &HeartbeatInput,
    ) -> (BrokerControlState, BrokerControlState) {
        let HeartbeatInput {
            want_fence,
            want_shut_down,
            current_metadata_offset,
            registration_offset,
            has_leaderships,
        } = *heartbeat;
        let current = self.current_state(broker_id, epoch, registered_fenced);
        let next = match current {
            BrokerControlState::Fenced => {
                if want_shut_down {
                    BrokerControlState::ShutdownNow
                } else if !want_fence && current_metadata_offset >= registration_offset {
                    BrokerControlState::Unfenced
                } else {
                    BrokerControlState::Fenced
                }
            }
            BrokerControlState::Unfenced => {
                if want_fence {
                    if want_shut_down {
                        BrokerControlState::ShutdownNow
                    } else {
                        BrokerControlState::Fenced
                    }
                } else if want_shut_down {
                    if has_leaderships {
                        BrokerControlState::ControlledShutdown
                    } else {
                        BrokerControlState::ShutdownNow
                    }
                } else {
                    BrokerControlState::Unfenced
                }
            }
            BrokerControlState::ControlledShutdown => {
                let target = self.controlled_shutdown_offset(broker_id).unwrap_or(-1);
                if has_leaderships || target > self.lowest_active_offset() {
                    BrokerControlState::ControlledShutdown
                } else {
                    BrokerControlState::ShutdownNow
                }
            }
            BrokerControlState::ShutdownNow => BrokerControlState::ShutdownNow,
        };
        (current, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hb(
        want_fence: bool,
        want_shut_down: bool,
        current_metadata_offset: i64,
        registration_offset: i64,
        has_leaderships: bool,
    ) -> HeartbeatInput {
        HeartbeatInput {
            want_fence,
            want_shut_down,
            current_metadata_offset,
            registration_offset,
            has_leaderships,
        }
    }

    fn manager() -> BrokerHeartbeatManager {
        BrokerHeartbeatManager::activate(9000, &ClusterImage::default(), 0)
    }

    #[test]
    fn sessions_expire_strictly_after_the_timeout() {
        let mut m = manager();
        m.track_contact(1, 100, 1000);
        assert!(m.has_valid_session(1, 100, 10_000));
        assert!(!m.has_valid_session(1, 100, 10_001));
        assert!(
            !m.has_valid_session(1, 99, 1000),
            "sessions belong to one epoch"
        );
        assert_eq!(m.next_expiry_ms(), Some(10_001));
        assert_eq!(m.remove_one_expired(10_000), None);
        assert_eq!(m.remove_one_expired(10_001), Some((1, 100)));
        assert_eq!(m.remove_one_expired(10_001), None);
    }

    #[test]
    fn expired_sessions_come_out_one_at_a_time() {
        let mut m = manager();
        m.track_contact(2, 5, 0);
        m.track_contact(1, 7, 0);
        assert_eq!(m.remove_one_expired(20_000), Some((1, 7)));
        assert_eq!(m.remove_one_expired(20_000), Some((2, 5)));
    }

    #[test]
    fn fenced_broker_unfences_once_caught_up() {
        let mut m = manager();
        let s = |m: &mut BrokerHeartbeatManager, want_fence, offset| {
            m.next_state(1, 10, true, &hb(want_fence, false, offset, 10, false))
                .1
        };
        assert_eq!(s(&mut m, true, 50), BrokerControlState::Fenced);
        assert_eq!(s(&mut m, false, 9), BrokerControlState::Fenced);
        assert_eq!(s(&mut m, false, 10), BrokerControlState::Unfenced);
        assert_eq!(
            m.next_state(1, 10, true, &hb(false, true, 0, 10, false)).1,
            BrokerControlState::ShutdownNow
        );
    }

    #[test]
    fn unfenced_transitions() {
        let mut m = manager();
        let mut s = |want_fence, want_shut_down, leads| {
            m.next_state(1, 10, false, &hb(want_fence, want_shut_down, 20, 10, leads))
                .1
        };
        assert_eq!(s(false, false, true), BrokerControlState::Unfenced);
        assert_eq!(s(true, false, true), BrokerControlState::Fenced);
        assert_eq!(s(true, true, true), BrokerControlState::ShutdownNow);
        assert_eq!(s(false, true, true), BrokerControlState::ControlledShutdown);
        assert_eq!(s(false, true, false), BrokerControlState::ShutdownNow);
    }

    #[test]
    fn controlled_shutdown_waits_for_leaderships_and_the_lowest_active_offset() {
        let mut m = manager();
        m.touch(2, 20, false, 40);
        m.maybe_set_controlled_shutdown_offset(1, 10, 50);
        m.maybe_set_controlled_shutdown_offset(1, 10, 99);
        assert_eq!(
            m.controlled_shutdown_offset(1),
            Some(50),
            "the target is set once"
        );
        assert_eq!(
            m.next_state(1, 10, false, &hb(false, true, 60, 10, true)).1,
            BrokerControlState::ControlledShutdown
        );
        assert_eq!(
            m.next_state(1, 10, false, &hb(false, true, 60, 10, false))
                .1,
            BrokerControlState::ControlledShutdown
        );
        m.touch(2, 20, false, 50);
        assert_eq!(
            m.next_state(1, 10, false, &hb(false, true, 60, 10, false))
                .1,
            BrokerControlState::ShutdownNow
        );
        // Fencing clears the target.
        m.touch(1, 10, true, 60);
        assert_eq!(m.controlled_shutdown_offset(1), None);
    }

    #[test]
    fn a_new_incarnation_starts_a_fresh_state() {
        let mut m = manager();
        m.maybe_set_controlled_shutdown_offset(1, 10, 50);
        assert_eq!(m.current_state(1, 11, true), BrokerControlState::Fenced);
        assert_eq!(m.controlled_shutdown_offset(1), None);
    }
}
