//! UpdateFeatures raising kraft.version (static → dynamic quorum, Kafka 4.1+): the node asks
//! the Raft layer whether the upgrade is possible before the controller answers
//! (`RequestContext::kraft_version_upgrade`, Kafka `FeatureControlManager` calling
//! `KRaftVersionAccessor.upgradeKRaftVersion`), and performs it once the controller accepted
//! the request, before the controller's NoOpRecord, so the answer waits for the upgrade batch
//! to commit.

use kafka_protocol::error::ResponseError;
use kraftwerk_controller::{ApiError, ControllerRequest, ControllerResponse, RequestContext};
use kraftwerk_raft::{KraftUpgradeError, QuorumStateStore, RaftError, ReplicatedLog};
use tracing::{error, info};

use crate::error::NodeError;
use crate::node::Node;

/// Kafka's feature name.
const KRAFT_VERSION: &str = "kraft.version";
/// `FeatureUpdateKey.UpgradeType` UPGRADE.
const UPGRADE: i8 = 1;

/// The kraft.version level an UpdateFeatures asks to upgrade to (the last entry naming it, as
/// Java's maps keep), if any and if it is an upgrade.
fn requested_upgrade(request: &ControllerRequest) -> Option<(i16, bool)> {
    let ControllerRequest::UpdateFeatures(r) = request else {
        return None;
    };
    let update = r
        .feature_updates
        .iter()
        .rev()
        .find(|u| u.feature.as_str() == KRAFT_VERSION)?;
    (update.upgrade_type == UPGRADE).then_some((update.max_version_level, r.validate_only))
}

/// The answer a refused upgrade gets, or the fatal error that stops the node.
fn refusal(e: KraftUpgradeError) -> Result<ApiError, RaftError> {
    let message = e.to_string();
    match e {
        KraftUpgradeError::NotLeader(_) => Ok(ApiError::new(ResponseError::NotController, message)),
        KraftUpgradeError::InvalidUpdateVersion(_) => {
            Ok(ApiError::new(ResponseError::InvalidUpdateVersion, message))
        }
        KraftUpgradeError::IllegalState(_) => {
            Ok(ApiError::new(ResponseError::UnknownServerError, message))
        }
        KraftUpgradeError::Fatal(fatal) => Err(fatal),
    }
}

impl<L: ReplicatedLog, Q: QuorumStateStore> Node<L, Q> {
    /// Fills `ctx.kraft_version_upgrade` for an UpdateFeatures that raises kraft.version
    /// (validation only; nothing is written).
    pub(crate) fn check_kraft_version_upgrade(
        &mut self,
        now_ms: u64,
        ctx: &mut RequestContext,
        request: &ControllerRequest,
    ) -> Result<(), NodeError> {
        let Some((level, _)) = requested_upgrade(request) else {
            return Ok(());
        };
        let epoch = self.raft.epoch();
        ctx.kraft_version_upgrade = Some(
            match self.raft.upgrade_kraft_version(now_ms, epoch, level, true) {
                Ok(_) => Ok(()),
                Err(e) => Err(refusal(e)?),
            },
        );
        Ok(())
    }

    /// Upgrades kraft.version after the controller accepted `request` (`response` without
    /// error, not `validate_only`). Returns the answer to send instead when the Raft layer
    /// refuses after all (it cannot between the check and here: both run on this thread).
    pub(crate) fn apply_kraft_version_upgrade(
        &mut self,
        now_ms: u64,
        request: &ControllerRequest,
        response: &ControllerResponse,
    ) -> Result<Option<ApiError>, NodeError> {
        let Some((level, false)) = requested_upgrade(request) else {
            return Ok(None);
        };
        let ControllerResponse::UpdateFeatures(r) = response else {
            return Ok(None);
        };
        if r.error_code != 0 || level <= self.raft.kraft_version() {
            return Ok(None);
        }
        let epoch = self.raft.epoch();
        match self.raft.upgrade_kraft_version(now_ms, epoch, level, false) {
            Ok(_) => {
                info!(
                    level,
                    "kraft.version upgrade appended: the voter set is now in the log"
                );
                Ok(None)
            }
            Err(e) => {
                let api = refusal(e)?;
                error!(error = ?api.message, "kraft.version upgrade refused after validation");
                Ok(Some(api))
            }
        }
    }
}
