//! The controller: committed image, speculative images of appended-but-uncommitted results,
//! broker sessions, request dispatch and internal writes (Kafka's `QuorumController`, without
//! threads or I/O).
//!
//! # Contract with the node
//!
//! * Every committed batch is handed over in log order through
//!   [`Controller::replay_committed`] (on every controller, active or standby).
//! * Raft leadership: once everything before the new epoch's start offset is committed and
//!   replayed, the node calls [`Controller::activate`]; on losing leadership,
//!   [`Controller::deactivate`] (the speculative images are dropped: the controller reverts to
//!   the committed image).
//! * While active, a request goes to [`Controller::handle`]; the result's records must be
//!   appended (in batches of at most [`MAX_RECORDS_PER_BATCH`], all in one batch if
//!   `atomic`) starting at exactly `ctx.next_offset`, then replayed through
//!   [`Controller::replay_uncommitted`] *before the next `handle` or `poll` call*. The response
//!   is sent once the records commit (or at once, if there are none and nothing is pending).
//! * The node calls [`Controller::poll`] after every event and whenever
//!   [`Controller::next_deadline_ms`] passes, applies the result like a request's, and polls
//!   again until it returns `None`.
//!
//! # "Empty log" and bootstrap (case C18)
//!
//! On activation, if the latest image holds no metadata record at all (only control records were
//! replayed), `poll` writes the bootstrap records (`ControllerConfig::bootstrap`: the
//! metadata.version FeatureLevelRecord first) as ONE atomic batch, plus the cluster-wide
//! `min.insync.replicas` ConfigRecord when ELR is enabled (as Kafka 4.1.2 does). Because the
//! bootstrap batch is the first metadata batch and is atomic, a new leader either has all of
//! it in its log (committed by the time it activates: not empty, nothing written) or none of it
//! (empty: written once). A log with metadata records but no metadata.version (a pre-3.3 log)
//! is not bootstrapped; handlers then use the oldest metadata.version this controller supports.
//! An open metadata transaction left by a failed Java leader is aborted first
//! (AbortTransactionRecord).

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};

use kraftwerk_records::metadata::{
    AbortTransactionRecord, ApiMessageAndVersion, ConfigRecord, NoOpRecord,
};
use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::api::{AnsweredBy, ReadContext, WriteContext};
use crate::authorization::{authorize_request, client_host, Authorized, Authz};
use crate::authorizer::{AclOperation, AuthorizerConfig, ResourceType};
use crate::error::{ApiError, ReplayError};
use crate::handlers;
pub use crate::handlers::delegation_tokens::DelegationTokenSettings;
use crate::handlers::disabled::QuorumRole;
use crate::handlers::leader_isr::LeaderIsrUpdater;
use crate::heartbeat::BrokerHeartbeatManager;
use crate::image::configs::resource_type;
use crate::image::features::ELR_FEATURE_NAME;
use crate::image::{MetadataImage, MIN_INSYNC_REPLICAS_CONFIG};
use crate::java_random::JavaRandom;
use crate::replay::replay;
use crate::validate;

pub use crate::api::{ControllerRequest, ControllerResponse};
pub use crate::request::{ControllerResult, RequestContext};

pub use kraftwerk_protocol::constants::MAX_RECORDS_PER_BATCH;

/// Static settings of the controller (Kafka's controller-side `server.properties` keys).
#[derive(Clone, Debug)]
pub struct ControllerConfig {
    /// `node.id` of this controller.
    pub node_id: i32,
    /// Cluster id from `meta.properties`; registrations with another id are refused.
    pub cluster_id: String,
    /// `broker.session.timeout.ms` (9000): a broker without heartbeats for longer is fenced.
    pub session_timeout_ms: u64,
    /// `broker.heartbeat.interval.ms` (2000); informational (Kafka derives a heartbeat deadline).
    pub heartbeat_interval_ms: u64,
    /// `metadata.max.idle.interval.ms` (500): NoOpRecord period; 0 disables NoOps.
    pub noop_interval_ms: u64,
    /// `default.replication.factor` (1) for CreateTopics with replication factor -1.
    pub default_replication_factor: i16,
    /// `num.partitions` (1) for CreateTopics with -1 partitions.
    pub default_num_partitions: i32,
    /// `min.insync.replicas` (1): static default of the topic config.
    pub min_insync_replicas: i32,
    /// `unclean.leader.election.enable` (false): static default of the topic config.
    pub unclean_leader_election_enable: bool,
    /// `delete.topic.enable` (true).
    pub delete_topic_enable: bool,
    /// `auto.leader.rebalance.enable` (true): periodic preferred-leader elections.
    pub auto_leader_rebalance_enable: bool,
    /// `leader.imbalance.check.interval.seconds` × 1000 (300,000).
    pub leader_imbalance_check_interval_ms: u64,
    /// `unclean.leader.election.interval.ms` (300,000): period of the unclean-election check.
    pub unclean_leader_election_interval_ms: u64,
    /// Node ids of the controller quorum (voters); UpdateFeatures requires each to have
    /// registered (from MV 3.7-IV0), and BROKER config resources may name them.
    pub quorum_node_ids: Vec<i32>,
    /// `unstable.feature.versions.enable` (false): UpdateFeatures may pick unstable levels.
    pub enable_unstable_feature_versions: bool,
    /// Records of `bootstrap.checkpoint`: FeatureLevelRecord(metadata.version) first, then the
    /// other features, then SCRAM credentials. Written once, on the first activation over an
    /// empty log.
    pub bootstrap: Vec<ApiMessageAndVersion>,
    /// Seed of the controller's RNG (topic ids, replica placement).
    pub rng_seed: u64,
    /// The quorum's `kraft.version` (0 for static voters); registrations must support it.
    pub kraft_version: i16,
    /// `remote.log.storage.system.enable` (false): topics may set `remote.storage.enable=true`.
    pub remote_log_storage_system_enable: bool,
    /// `authorizer.class.name` = StandardAuthorizer with its `super.users` and
    /// `allow.everyone.if.no.acl.found`; `None` (no authorizer): nothing is authorized and the
    /// ACL APIs answer SECURITY_DISABLED.
    pub authorizer: Option<AuthorizerConfig>,
    /// `delegation.token.*` when `delegation.token.secret.key` is set (KIP-48); `None`:
    /// delegation tokens are disabled (token requests answer DELEGATION_TOKEN_AUTH_DISABLED).
    pub delegation_tokens: Option<DelegationTokenSettings>,
}

impl ControllerConfig {
    /// Default of `broker.session.timeout.ms`, in ms (Kafka `BrokerServer` default).
    pub const DEFAULT_SESSION_TIMEOUT_MS: u64 = 9000;
    /// Default of `broker.heartbeat.interval.ms`, in ms.
    pub const DEFAULT_HEARTBEAT_INTERVAL_MS: u64 = 2000;
    /// Default of `metadata.max.idle.interval.ms`, in ms.
    pub const DEFAULT_NOOP_INTERVAL_MS: u64 = 500;
    /// Default of `default.replication.factor`.
    pub const DEFAULT_REPLICATION_FACTOR: i16 = 1;
    /// Default of `num.partitions`.
    pub const DEFAULT_NUM_PARTITIONS: i32 = 1;

    /// A configuration with Kafka's defaults for everything but the identity and bootstrap.
    pub fn new(
        node_id: i32,
        cluster_id: impl Into<String>,
        bootstrap: Vec<ApiMessageAndVersion>,
    ) -> Self {
        ControllerConfig {
            node_id,
            cluster_id: cluster_id.into(),
            session_timeout_ms: Self::DEFAULT_SESSION_TIMEOUT_MS,
            heartbeat_interval_ms: Self::DEFAULT_HEARTBEAT_INTERVAL_MS,
            noop_interval_ms: Self::DEFAULT_NOOP_INTERVAL_MS,
            default_replication_factor: Self::DEFAULT_REPLICATION_FACTOR,
            default_num_partitions: Self::DEFAULT_NUM_PARTITIONS,
            min_insync_replicas: 1,
            unclean_leader_election_enable: false,
            delete_topic_enable: true,
            auto_leader_rebalance_enable: true,
            leader_imbalance_check_interval_ms: 300_000,
            unclean_leader_election_interval_ms: 300_000,
            quorum_node_ids: vec![node_id],
            enable_unstable_feature_versions: false,
            bootstrap,
            rng_seed: 0,
            kraft_version: 0,
            remote_log_storage_system_enable: false,
            authorizer: None,
            delegation_tokens: None,
        }
    }
}

/// The controller's random number generators, both seeded from [`ControllerConfig::rng_seed`]:
/// one for topic ids, one (a `java.util.Random`) for replica placement.
#[derive(Clone, Debug)]
pub struct ControllerRng {
    /// Topic ids.
    pub ids: StdRng,
    /// Replica placement (`StripedReplicaPlacer`'s `Random`).
    pub placement: JavaRandom,
}

impl ControllerRng {
    /// Generators for `seed`.
    pub fn new(seed: u64) -> Self {
        ControllerRng {
            ids: StdRng::seed_from_u64(seed),
            placement: JavaRandom::new(seed as i64),
        }
    }
}

/// State only the active controller has.
#[derive(Debug)]
struct ActiveState {
    epoch: i32,
    heartbeats: BrokerHeartbeatManager,
    next_noop_ms: u64,
    next_rebalance_ms: u64,
    next_unclean_ms: u64,
    /// When the expired delegation tokens are swept next (`sweepExpiredDelegationTokens`).
    next_token_sweep_ms: u64,
    /// Offset up to which the node must have replayed what this controller returned; checked
    /// at the next `handle`/`poll` (the node must replay before asking again).
    expected_last_offset: i64,
}

/// The KRaft controller state machine. See the module docs for the contract with the node.
#[derive(Debug)]
pub struct Controller {
    config: ControllerConfig,
    rng: ControllerRng,
    committed: MetadataImage,
    /// (last offset, image after it) per replayed uncommitted result, oldest first.
    uncommitted: VecDeque<(i64, MetadataImage)>,
    active: Option<ActiveState>,
    /// Set by tests: the next write handler panics.
    inject_panic: bool,
    /// Handlers that panicked (each answered UNKNOWN_SERVER_ERROR).
    handler_panics: u64,
}

impl Controller {
    /// A standby controller with an empty image.
    pub fn new(config: ControllerConfig) -> Self {
        let rng = ControllerRng::new(config.rng_seed);
        Controller {
            config,
            rng,
            committed: MetadataImage::empty(),
            uncommitted: VecDeque::new(),
            active: None,
            inject_panic: false,
            handler_panics: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ControllerConfig {
        &self.config
    }

    /// The Raft layer's kraft.version and voter ids in force changed (KIP-853: read from the
    /// log, committed or not): what ApiVersions / DescribeFeatures report as the finalized
    /// `kraft.version`, what registrations must support, and which ids are controllers.
    /// Returns true if anything changed.
    pub fn set_quorum(&mut self, kraft_version: i16, voter_ids: Vec<i32>) -> bool {
        if self.config.kraft_version == kraft_version && self.config.quorum_node_ids == voter_ids {
            return false;
        }
        self.config.kraft_version = kraft_version;
        self.config.quorum_node_ids = voter_ids;
        true
    }

    /// The image at the high watermark.
    pub fn image(&self) -> &MetadataImage {
        &self.committed
    }

    /// The image including appended-but-uncommitted records (= [`Controller::image`] on a
    /// standby).
    pub fn latest(&self) -> &MetadataImage {
        self.uncommitted
            .back()
            .map_or(&self.committed, |(_, image)| image)
    }

    /// Offset of the last committed record replayed, -1 if none.
    pub fn last_committed_offset(&self) -> i64 {
        self.committed.last_offset
    }

    /// True between [`Controller::activate`] and [`Controller::deactivate`].
    pub fn is_active(&self) -> bool {
        self.active.is_some()
    }

    /// Records that a heartbeat of broker `broker_id` at `broker_epoch` arrived at `arrived_ms`,
    /// ahead of handling the request itself: the network layer reports each heartbeat's arrival
    /// as it is read, so a broker whose heartbeat waits behind a slow batch is not fenced for
    /// the wait (Kafka 4.0's `QuorumController.processBrokerHeartbeat` updates the
    /// `BrokerHeartbeatTracker` outside the event queue for the same reason, KAFKA-17793).
    /// Ignored unless active and the broker is registered at that epoch, so that made-up ids
    /// take no room.
    pub fn note_broker_contact(&mut self, broker_id: i32, broker_epoch: i64, arrived_ms: u64) {
        let registered = self
            .latest()
            .cluster
            .broker(broker_id)
            .is_some_and(|b| b.epoch == broker_epoch);
        if let (Some(active), true) = (self.active.as_mut(), registered) {
            active
                .heartbeats
                .track_contact(broker_id, broker_epoch, arrived_ms);
        }
    }

    /// The epoch this controller is active in, if any.
    pub fn active_epoch(&self) -> Option<i32> {
        self.active.as_ref().map(|a| a.epoch)
    }

    /// Applies one committed batch, in log order. If the batch ends exactly where a speculative
    /// image ends, that image becomes the committed one without replaying again (the active
    /// controller's fast path); otherwise the records are replayed onto the committed image.
    ///
    /// # Errors
    /// A [`ReplayError`] if a record cannot be applied, or offsets do not increase; the node
    /// must treat it as fatal.
    pub fn replay_committed(
        &mut self,
        records: &[(i64, ApiMessageAndVersion)],
    ) -> Result<(), ReplayError> {
        let Some(&(last, _)) = records.last() else {
            return Ok(());
        };
        let mut fast = None;
        while let Some((end, _)) = self.uncommitted.front() {
            if *end > last {
                break;
            }
            fast = self.uncommitted.pop_front();
        }
        match fast {
            Some((end, image)) if end == last => {
                self.committed = image;
            }
            _ => {
                let mut image = self.committed.clone();
                apply(&mut image, records)?;
                self.committed = image;
            }
        }
        Ok(())
    }

    /// Replaces the committed image with a snapshot's content (KIP-630 load): every record is
    /// replayed at the snapshot's last contained offset, into an empty image. Only standbys
    /// load snapshots (a leader never does), so this also drops any speculative state.
    ///
    /// # Errors
    /// A [`ReplayError`] if a record cannot be applied (fatal: the snapshot is corrupt).
    pub fn load_snapshot(
        &mut self,
        records: &[ApiMessageAndVersion],
        last_contained_offset: i64,
    ) -> Result<(), ReplayError> {
        assert!(
            self.active.is_none(),
            "the active controller never loads a snapshot"
        );
        let mut image = MetadataImage::empty();
        for record in records {
            replay(&mut image, record, last_contained_offset)?;
        }
        image.last_offset = last_contained_offset;
        self.committed = image;
        self.uncommitted.clear();
        Ok(())
    }

    /// Applies records this active controller just appended (one result), on top of the latest
    /// image.
    ///
    /// # Errors
    /// A [`ReplayError`] (fatal on the active controller).
    pub fn replay_uncommitted(
        &mut self,
        records: &[(i64, ApiMessageAndVersion)],
    ) -> Result<(), ReplayError> {
        let Some(&(last, _)) = records.last() else {
            return Ok(());
        };
        assert!(
            self.active.is_some(),
            "replay_uncommitted on a standby controller"
        );
        let before = self.latest().clone();
        let mut image = before.clone();
        apply(&mut image, records)?;
        assert_own_records_keep_invariants(&before, &image, records);
        self.uncommitted.push_back((last, image));
        Ok(())
    }

    /// Becomes the active controller for raft `epoch`: everything before the epoch's start
    /// offset is committed and replayed. Every registered unfenced broker gets a session that
    /// starts now (`ClusterControlManager.activate`), so failover does not fence brokers.
    pub fn activate(&mut self, epoch: i32, now_ms: u64) {
        self.uncommitted.clear();
        let heartbeats = BrokerHeartbeatManager::activate(
            self.config.session_timeout_ms,
            &self.committed.cluster,
            now_ms,
        );
        self.active = Some(ActiveState {
            epoch,
            heartbeats,
            next_noop_ms: now_ms.saturating_add(self.config.noop_interval_ms),
            next_rebalance_ms: now_ms
                .saturating_add(self.config.leader_imbalance_check_interval_ms),
            next_unclean_ms: now_ms.saturating_add(self.config.unclean_leader_election_interval_ms),
            next_token_sweep_ms: now_ms.saturating_add(self.token_sweep_interval_ms().unwrap_or(0)),
            expected_last_offset: self.committed.last_offset,
        });
    }

    /// Stops being active: drops sessions and the speculative images (the state reverts to the
    /// committed image).
    pub fn deactivate(&mut self) {
        self.active = None;
        self.uncommitted.clear();
    }

    /// Warns if the node did not replay the previous result. That is legitimate only when its
    /// append failed because leadership was lost (the node deactivates next); results computed
    /// meanwhile cannot be appended either.
    fn check_replayed(&self) {
        if let Some(active) = &self.active {
            if self.latest().last_offset < active.expected_last_offset {
                tracing::warn!(
                    latest = self.latest().last_offset,
                    expected = active.expected_last_offset,
                    "the previous controller result was not replayed"
                );
            }
        }
    }

    /// The node could not write the last result (it was refused whole): nothing of it will be
    /// replayed, so the next call must not expect it.
    pub fn abandon_result(&mut self) {
        let latest = self.latest().last_offset;
        if let Some(active) = &mut self.active {
            active.expected_last_offset = latest;
        }
    }

    fn expect<R>(&mut self, next_offset: i64, result: &ControllerResult<R>) {
        if let Some(active) = &mut self.active {
            if !result.records.is_empty() {
                active.expected_last_offset = next_offset + result.records.len() as i64 - 1;
            }
        }
    }

    /// Handles a request: a request any controller answers ([`AnsweredBy::AnyController`]) is
    /// answered from the committed image without records; one that needs the active controller
    /// gets NOT_CONTROLLER on a standby, otherwise its handler runs on the latest image. This is
    /// the only place that decides between the three.
    ///
    /// Around every handler: a request with a string Kafka could not decode is answered
    /// INVALID_REQUEST first ([`ControllerRequest::check_strings`]); a handler that panics is
    /// answered UNKNOWN_SERVER_ERROR, logged with the request's name, and leaves nothing changed
    /// (the image is only read, and the RNG and broker sessions it may change are copies kept
    /// only when it returns); a result that cannot be written
    /// ([`validate::batch::check_result`]) is answered with Java's error for it instead of
    /// records. The controller keeps serving in every case.
    pub fn handle(
        &mut self,
        ctx: &RequestContext,
        request: &ControllerRequest,
    ) -> ControllerResult<ControllerResponse> {
        if let Err(error) = request.check_strings() {
            tracing::info!(
                request = request.name(),
                message = error.message.as_deref().unwrap_or(""),
                "refusing a request with a string longer than Kafka allows"
            );
            return refused(request, &error);
        }
        // ControllerApis authorizes before the controller sees the request (and before a
        // standby answers NOT_CONTROLLER), with the ACLs of the committed image.
        let (effective, denied) = match &self.config.authorizer {
            None => (None, None),
            Some(_) if ctx.internal => (None, None),
            Some(authorizer) => {
                let host = client_host(ctx);
                let authz = Authz::new(authorizer, &self.committed, &ctx.principal, &host);
                match authorize_request(&authz, self.config.delete_topic_enable, request) {
                    Authorized::Whole => (None, None),
                    Authorized::Part(effective, denied) => (Some(effective), Some(denied)),
                    Authorized::Refused(response) => {
                        return ControllerResult::of(Vec::new(), response)
                    }
                }
            }
        };
        let effective = effective.as_ref().unwrap_or(request);
        let (result, by_handler) = self.dispatch(ctx, effective, request);
        match denied {
            Some(denied) if by_handler => result.map(|response| denied.merge(response)),
            _ => result,
        }
    }

    /// Whether the authorizer allows `principal` at `client` the operation on the resource,
    /// over the committed image's ACLs; always true without an authorizer. For the requests
    /// the node checks itself (Raft RPCs, Envelope).
    pub fn authorize(
        &self,
        principal: &crate::request::Principal,
        client: Option<std::net::IpAddr>,
        operation: AclOperation,
        resource_type: ResourceType,
        resource_name: &str,
    ) -> bool {
        let Some(authorizer) = &self.config.authorizer else {
            return true;
        };
        let host = client
            .map(crate::authorizer::java_host_address)
            .unwrap_or_default();
        Authz::new(authorizer, &self.committed, principal, &host).allows(
            operation,
            resource_type,
            resource_name,
        )
    }

    /// Answers `request` (authorized; `original` is the request as it came, whose shape an
    /// error answer takes): true with the answer if a handler gave it, false for NOT_CONTROLLER
    /// and the error answers of [`Controller::handle`].
    fn dispatch(
        &mut self,
        ctx: &RequestContext,
        request: &ControllerRequest,
        original: &ControllerRequest,
    ) -> (ControllerResult<ControllerResponse>, bool) {
        let answered_by = request.answered_by(&self.config, ctx);
        if answered_by == AnsweredBy::AnyController || self.active.is_none() {
            let response = if answered_by == AnsweredBy::AnyController {
                let read = ReadContext {
                    image: &self.committed,
                    config: &self.config,
                    ctx,
                    role: self.quorum_role(ctx),
                };
                match catch_unwind(AssertUnwindSafe(|| request.read(&read))) {
                    Ok(response) => response,
                    Err(panic) => {
                        self.handler_panics += 1;
                        return (handler_panicked(original, panic.as_ref()), false);
                    }
                }
            } else {
                None
            };
            return match response {
                Some(response) => (ControllerResult::of(Vec::new(), response), true),
                None => (
                    ControllerResult::of(Vec::new(), original.not_controller_response()),
                    false,
                ),
            };
        }
        self.check_replayed();
        self.run_write_handler(ctx, request, original)
    }

    /// Runs the handler of a request on the active controller (see [`Controller::handle`]).
    fn run_write_handler(
        &mut self,
        ctx: &RequestContext,
        request: &ControllerRequest,
        original: &ControllerRequest,
    ) -> (ControllerResult<ControllerResponse>, bool) {
        let image = self.latest().clone();
        let active = self.active.as_ref().expect("checked by handle");
        // Copies (O(1): persistent maps): a panic mid-handler drops them half-changed.
        let mut rng = self.rng.clone();
        let mut heartbeats = active.heartbeats.clone();
        let inject_panic = std::mem::take(&mut self.inject_panic);
        let config = &self.config;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let mut write = WriteContext {
                image: &image,
                config,
                ctx,
                rng: &mut rng,
                heartbeats: &mut heartbeats,
            };
            let result = request.write(&mut write);
            // After the handler changed what it changes: the worst moment to fail.
            assert!(!inject_panic, "panic injected by a test");
            result
        }));
        let result = match outcome {
            Ok(result) => result,
            Err(panic) => {
                self.handler_panics += 1;
                return (handler_panicked(original, panic.as_ref()), false);
            }
        };
        if let Err(error) = validate::batch::check_result(&result.records, result.atomic) {
            tracing::error!(
                request = request.name(),
                records = result.records.len(),
                code = error.code,
                message = error.message.as_deref().unwrap_or(""),
                "the handler's result cannot be written; answering with an error instead"
            );
            return (refused(original, &error), false);
        }
        self.rng = rng;
        self.active.as_mut().expect("checked by handle").heartbeats = heartbeats;
        self.expect(ctx.next_offset, &result);
        (result, true)
    }

    /// How many request handlers panicked since this controller was created (each was answered
    /// UNKNOWN_SERVER_ERROR and changed nothing).
    pub fn handler_panics(&self) -> u64 {
        self.handler_panics
    }

    /// Makes the handler of the next request that reaches [`Controller::handle`]'s write path
    /// panic as it returns (after it changed the RNG or broker sessions it uses), to test that a
    /// failing handler is contained.
    #[cfg(any(test, feature = "testing"))]
    pub fn panic_in_next_handler(&mut self) {
        self.inject_panic = true;
    }

    /// Where this node stands for the voter-change checks (`ctx.leader_id` tells whether it
    /// leads).
    fn quorum_role(&self, ctx: &RequestContext) -> QuorumRole {
        if ctx.leader_id != self.config.node_id {
            QuorumRole::NotLeader
        } else if self.active.is_some() {
            QuorumRole::Leader
        } else {
            QuorumRole::LeaderCatchingUp
        }
    }

    /// The next internal write, if one is due: an abort of an open transaction, the bootstrap
    /// records (first activation over an empty log), fencing of ONE broker whose session
    /// expired, a NoOpRecord, preferred-leader elections, unclean elections, or the removal of
    /// expired delegation tokens (every `delegation.token.expiry.check.interval.ms`). `next_offset` is the offset the first record will get.
    pub fn poll(&mut self, now_ms: u64, next_offset: i64) -> Option<ControllerResult<()>> {
        self.active.as_ref()?;
        self.check_replayed();
        let result = self.next_internal_write(now_ms);
        if let Some(result) = &result {
            self.expect(next_offset, result);
        }
        result
    }

    fn next_internal_write(&mut self, now_ms: u64) -> Option<ControllerResult<()>> {
        let image = self.latest().clone();
        if image.transaction.is_some() {
            let abort = AbortTransactionRecord {
                reason: Some("Controller failover".to_owned()),
                ..Default::default()
            };
            return Some(ControllerResult::atomic(
                vec![ApiMessageAndVersion::new(abort, 0)],
                (),
            ));
        }
        if image.records_replayed == 0 {
            // One atomic batch, so that a new leader has all of it or none of it. (A bootstrap
            // file with more than 10,000 records, e.g. SCRAM users, cannot be atomic; Kafka
            // would use a metadata transaction there.)
            let records = self.bootstrap_records();
            let atomic = records.len() <= MAX_RECORDS_PER_BATCH;
            return Some(ControllerResult {
                records,
                atomic,
                response: (),
            });
        }
        let config = &self.config;
        let active = self.active.as_mut().expect("poll checked active");
        while let Some((broker_id, epoch)) = active.heartbeats.remove_one_expired(now_ms) {
            let Some(registration) = image.cluster.broker(broker_id) else {
                active.heartbeats.remove(broker_id);
                continue;
            };
            if registration.epoch != epoch || registration.fenced {
                // An old incarnation's session, or a broker that is already fenced: nothing to
                // write (Java 4.1.2 writes a redundant fence record for the latter).
                continue;
            }
            tracing::info!(
                broker_id,
                epoch,
                "fencing broker because its session has timed out"
            );
            let mut records = Vec::new();
            LeaderIsrUpdater {
                image: &image,
                config,
            }
            .broker_fenced(broker_id, &mut records);
            active.heartbeats.mark_fenced(broker_id);
            return Some(ControllerResult::of(records, ()));
        }
        if config.noop_interval_ms > 0 && now_ms >= active.next_noop_ms {
            active.next_noop_ms = now_ms.saturating_add(config.noop_interval_ms);
            return Some(ControllerResult::of(
                vec![ApiMessageAndVersion::new(NoOpRecord::default(), 0)],
                (),
            ));
        }
        if config.auto_leader_rebalance_enable && now_ms >= active.next_rebalance_ms {
            let (records, more) = handlers::elections::balance_partition_leaders(&image, config);
            active.next_rebalance_ms = if more {
                now_ms
            } else {
                now_ms.saturating_add(config.leader_imbalance_check_interval_ms)
            };
            if !records.is_empty() {
                return Some(ControllerResult::of(records, ()));
            }
        }
        if now_ms >= active.next_unclean_ms {
            let (records, more) = handlers::elections::elect_unclean_leaders(&image, config);
            active.next_unclean_ms = if more {
                now_ms
            } else {
                now_ms.saturating_add(config.unclean_leader_election_interval_ms)
            };
            if !records.is_empty() {
                return Some(ControllerResult::of(records, ()));
            }
        }
        if let Some(interval) = config
            .delegation_tokens
            .as_ref()
            .map(|t| t.expiry_check_interval_ms)
        {
            if now_ms >= active.next_token_sweep_ms {
                active.next_token_sweep_ms = now_ms.saturating_add(interval);
                let records =
                    handlers::delegation_tokens::sweep_expired_tokens(&image, config, now_ms);
                if !records.is_empty() {
                    return Some(ControllerResult::of(records, ()));
                }
            }
        }
        None
    }

    /// `delegation.token.expiry.check.interval.ms` when delegation tokens are enabled.
    fn token_sweep_interval_ms(&self) -> Option<u64> {
        self.config
            .delegation_tokens
            .as_ref()
            .map(|t| t.expiry_check_interval_ms)
    }

    /// `ActivationRecordsGenerator.recordsForEmptyLog` without transaction markers: the
    /// bootstrap records, then `min.insync.replicas` for the cluster if ELR is enabled.
    fn bootstrap_records(&self) -> Vec<ApiMessageAndVersion> {
        let mut records = self.config.bootstrap.clone();
        let elr_enabled = records.iter().any(|r| {
            matches!(&r.record, kraftwerk_records::metadata::MetadataRecord::FeatureLevel(f)
                if f.name == ELR_FEATURE_NAME && f.feature_level > 0)
        });
        if elr_enabled {
            records.push(ApiMessageAndVersion::new(
                ConfigRecord {
                    resource_type: resource_type::BROKER,
                    resource_name: String::new(),
                    name: MIN_INSYNC_REPLICAS_CONFIG.to_owned(),
                    value: Some(self.config.min_insync_replicas.to_string()),
                    ..Default::default()
                },
                0,
            ));
        }
        records
    }

    /// When `poll` next has something to do (a session expiry, a NoOp, a periodic election
    /// check, a delegation-token sweep), if active.
    pub fn next_deadline_ms(&self) -> Option<u64> {
        let active = self.active.as_ref()?;
        [
            (self.config.noop_interval_ms > 0).then_some(active.next_noop_ms),
            active.heartbeats.next_expiry_ms(),
            self.config
                .auto_leader_rebalance_enable
                .then_some(active.next_rebalance_ms),
            Some(active.next_unclean_ms),
            self.token_sweep_interval_ms()
                .map(|_| active.next_token_sweep_ms),
        ]
        .into_iter()
        .flatten()
        .min()
    }
}

/// Cheap checks of what this controller itself wrote (a violation is a controller bug, so it
/// stops the node): every partition it created or changed keeps leader ∈ ISR or -1, ISR ⊆
/// replicas, one directory per replica; a new broker incarnation gets a larger epoch than the
/// one it replaces.
fn assert_own_records_keep_invariants(
    before: &MetadataImage,
    after: &MetadataImage,
    records: &[(i64, ApiMessageAndVersion)],
) {
    use kraftwerk_records::metadata::MetadataRecord;
    for (offset, record) in records {
        let partition = match &record.record {
            MetadataRecord::Partition(r) => Some((r.topic_id, r.partition_id)),
            MetadataRecord::PartitionChange(r) => Some((r.topic_id, r.partition_id)),
            MetadataRecord::RegisterBroker(r) => {
                if let Some(previous) = before.cluster.broker(r.broker_id) {
                    assert!(
                        previous.incarnation_id == r.incarnation_id
                            || r.broker_epoch > previous.epoch,
                        "broker {} re-registered at offset {offset} with epoch {} not above {}",
                        r.broker_id,
                        r.broker_epoch,
                        previous.epoch
                    );
                }
                None
            }
            _ => None,
        };
        if let Some((topic_id, partition_id)) = partition {
            if let Some(p) = after.topics.partition(&topic_id, partition_id) {
                if let Err(violation) = p.check_invariants() {
                    panic!("record at offset {offset} broke partition {topic_id}:{partition_id}: {violation}");
                }
            }
        }
    }
}

/// The request's error answer for `error`, without records.
fn refused(request: &ControllerRequest, error: &ApiError) -> ControllerResult<ControllerResponse> {
    ControllerResult::of(
        Vec::new(),
        request.error_response(error.code, error.message.as_deref()),
    )
}

/// The answer to a request whose handler panicked: UNKNOWN_SERVER_ERROR, nothing written (Java's
/// `QuorumController.handleEventException` for an unexpected exception, without the failover).
fn handler_panicked(
    request: &ControllerRequest,
    panic: &(dyn std::any::Any + Send),
) -> ControllerResult<ControllerResponse> {
    let reason = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    tracing::error!(
        request = request.name(),
        %reason,
        "the request's handler panicked; answering UNKNOWN_SERVER_ERROR, nothing changed"
    );
    let error = ApiError::new(
        kafka_protocol::error::ResponseError::UnknownServerError,
        format!("The controller failed to handle the request: {reason}"),
    );
    refused(request, &error)
}

fn apply(
    image: &mut MetadataImage,
    records: &[(i64, ApiMessageAndVersion)],
) -> Result<(), ReplayError> {
    for (offset, record) in records {
        if *offset <= image.last_offset {
            return Err(ReplayError::OffsetNotIncreasing {
                offset: *offset,
                last: image.last_offset,
            });
        }
        replay(image, record, *offset)?;
    }
    Ok(())
}
