//! Delegation tokens (KIP-48) on the active controller, as Kafka 4.1.2's
//! `DelegationTokenControlManager` with `ControllerApis.handleCreate/Renew/ExpireDelegationToken`
//! in front of it: CreateDelegationToken, RenewDelegationToken and ExpireDelegationToken write
//! DelegationTokenRecord / RemoveDelegationTokenRecord, and the active controller sweeps expired
//! tokens every `delegation.token.expiry.check.interval.ms`.
//!
//! A token is its id (a random Kafka UUID string) and its HMAC, `HmacSHA512` of the id keyed
//! by `delegation.token.secret.key` ([`kraftwerk_sasl::token_hmac`]). The record holds no HMAC:
//! every node with the secret recomputes it, to find a token by HMAC (renew, expire) and to
//! check a client that authenticates with the token over SCRAM.
//!
//! Requests [`disabled::allow_token_requests`] refuses never get here (any controller answers
//! DELEGATION_TOKEN_REQUEST_NOT_ALLOWED); without a secret the active controller answers
//! DELEGATION_TOKEN_AUTH_DISABLED, below metadata.version 3.6-IV2 UNSUPPORTED_VERSION.

use std::fmt;

use bytes::Bytes;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{
    CreateDelegationTokenRequest, CreateDelegationTokenResponse, ExpireDelegationTokenRequest,
    ExpireDelegationTokenResponse, RenewDelegationTokenRequest, RenewDelegationTokenResponse,
};
use kafka_protocol::protocol::StrBytes;
use kraftwerk_protocol::kafka_uuid::kafka_uuid_to_string;
use kraftwerk_records::metadata::{
    ApiMessageAndVersion, DelegationTokenRecord, RemoveDelegationTokenRecord,
};

use crate::api::WriteContext;
use crate::authorization::{client_host, Authz};
use crate::authorizer::{AclOperation, ResourceType};
use crate::controller::ControllerConfig;
use crate::handlers::disabled;
use crate::ids::random_topic_id;
use crate::image::MetadataImage;
use crate::request::{ControllerResult, Principal};

/// Kafka's `KafkaPrincipal.USER_TYPE`: the only principal type a renewer may have.
const USER_TYPE: &str = "User";

/// `DelegationTokenManager.ErrorTimestamp`: the timestamps of a refused CreateDelegationToken.
const ERROR_TIMESTAMP: i64 = -1;

/// The `delegation.token.*` keys (Kafka `DelegationTokenManagerConfigs`) of a controller whose
/// `delegation.token.secret.key` is set and not empty (`KafkaConfig.tokenAuthEnabled`).
#[derive(Clone, PartialEq, Eq)]
pub struct DelegationTokenSettings {
    /// `delegation.token.secret.key` (Kafka 3.x's deprecated `delegation.token.master.key`
    /// when only that is set): the HMAC key. Never logged.
    pub secret_key: String,
    /// `delegation.token.max.lifetime.ms` (7 days, ≥ 1): no token lives longer, renewed or not.
    pub max_lifetime_ms: i64,
    /// `delegation.token.expiry.time.ms` (1 day, ≥ 1): how long a new or renewed token lasts
    /// before it must be renewed (the longest renewal too).
    pub expiry_time_ms: i64,
    /// `delegation.token.expiry.check.interval.ms` (1 hour, ≥ 1): period of the sweep that
    /// removes expired tokens.
    pub expiry_check_interval_ms: u64,
}

impl DelegationTokenSettings {
    /// Default of `delegation.token.max.lifetime.ms`, in ms (7 days).
    pub const DEFAULT_MAX_LIFETIME_MS: i64 = 7 * 24 * 60 * 60 * 1000;
    /// Default of `delegation.token.expiry.time.ms`, in ms (1 day).
    pub const DEFAULT_EXPIRY_TIME_MS: i64 = 24 * 60 * 60 * 1000;
    /// Default of `delegation.token.expiry.check.interval.ms`, in ms (1 hour).
    pub const DEFAULT_EXPIRY_CHECK_INTERVAL_MS: i64 = 60 * 60 * 1000;

    /// Kafka's defaults with `secret_key`.
    pub fn new(secret_key: impl Into<String>) -> Self {
        DelegationTokenSettings {
            secret_key: secret_key.into(),
            max_lifetime_ms: Self::DEFAULT_MAX_LIFETIME_MS,
            expiry_time_ms: Self::DEFAULT_EXPIRY_TIME_MS,
            expiry_check_interval_ms: Self::DEFAULT_EXPIRY_CHECK_INTERVAL_MS as u64,
        }
    }

    /// The HMAC of token `token_id` under this secret.
    pub fn hmac(&self, token_id: &str) -> Vec<u8> {
        kraftwerk_sasl::token_hmac(&self.secret_key, token_id)
    }
}

// The secret stays out of logs (ControllerConfig is logged with `{:?}`).
impl fmt::Debug for DelegationTokenSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelegationTokenSettings")
            .field("secret_key", &"[hidden]")
            .field("max_lifetime_ms", &self.max_lifetime_ms)
            .field("expiry_time_ms", &self.expiry_time_ms)
            .field("expiry_check_interval_ms", &self.expiry_check_interval_ms)
            .finish()
    }
}

/// Whether two HMACs are equal, without an early exit on the first differing byte.
fn equal_hmacs(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `KafkaPrincipal.toString`: `TYPE:NAME`, as records store principals.
fn principal_text(principal_type: &str, name: &str) -> String {
    format!("{principal_type}:{name}")
}

/// `now + duration`, saturating at `i64::MAX` (`DelegationTokenControlManager.sum`).
fn sum(now: i64, duration: i64) -> i64 {
    now.saturating_add(duration)
}

fn now_ms(c: &WriteContext<'_>) -> i64 {
    i64::try_from(c.ctx.now_ms).unwrap_or(i64::MAX)
}

/// Whether the metadata.version in force allows DelegationTokenRecord (3.6-IV2).
fn supported(image: &MetadataImage) -> bool {
    image
        .features
        .metadata_version_or_minimum()
        .is_delegation_token_supported()
}

/// The token whose HMAC is `hmac` (`DelegationTokenCache.tokenForHmac`).
fn token_for_hmac<'a>(
    image: &'a MetadataImage,
    settings: &DelegationTokenSettings,
    hmac: &[u8],
) -> Option<&'a DelegationTokenRecord> {
    image
        .other
        .delegation_tokens
        .values()
        .find(|token| equal_hmacs(&settings.hmac(&token.token_id), hmac))
}

/// Whether the token has expired at `now` (`maxTimestamp < now || expiryTimestamp < now`).
fn expired(token: &DelegationTokenRecord, now: i64) -> bool {
    token.max_timestamp < now || token.expiration_timestamp < now
}

/// `allowedToRenew`: the principal is the token's owner or one of its renewers.
fn may_renew(token: &DelegationTokenRecord, principal: &Principal) -> bool {
    let text = principal_text(&principal.principal_type, &principal.name);
    token.owner == text || token.renewers.contains(&text)
}

fn text(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_owned())
}

/// CreateDelegationToken (api 38, v1-3) on the active controller. The owner is the request's
/// owner when it names one, else the requester. Answers, in Java's order:
/// DELEGATION_TOKEN_AUTHORIZATION_FAILED (timestamps -1) when an authorizer is configured and
/// the requester may not CREATE_TOKENS for another owner (`User` resource named after the
/// owner); DELEGATION_TOKEN_AUTH_DISABLED without a secret; UNSUPPORTED_VERSION below
/// metadata.version 3.6-IV2; INVALID_PRINCIPAL_TYPE for a renewer that is not a `User`. Else a
/// new token: issued now, max timestamp now + min(`delegation.token.max.lifetime.ms`, the
/// request's max lifetime if > 0), expiry now + `delegation.token.expiry.time.ms` (never past
/// the max), one DelegationTokenRecord.
pub fn create_delegation_token(
    c: &mut WriteContext<'_>,
    request: &CreateDelegationTokenRequest,
) -> ControllerResult<CreateDelegationTokenResponse> {
    let requester = &c.ctx.principal;
    let (owner_type, owner_name) = disabled::token_owner(request, requester);
    let response = CreateDelegationTokenResponse::default()
        .with_principal_type(text(&owner_type))
        .with_principal_name(text(&owner_name))
        .with_token_requester_principal_type(text(&requester.principal_type))
        .with_token_requester_principal_name(text(&requester.name));
    let refuse =
        |code: i16| ControllerResult::atomic(Vec::new(), response.clone().with_error_code(code));
    let for_someone_else = owner_type != requester.principal_type || owner_name != requester.name;
    if let (Some(authorizer), true) = (&c.config.authorizer, for_someone_else) {
        // ControllerApis: "Requester is always allowed to create token for self".
        let host = client_host(c.ctx);
        let owner = principal_text(&owner_type, &owner_name);
        if !Authz::new(authorizer, c.image, requester, &host).allows(
            AclOperation::CreateTokens,
            ResourceType::User,
            &owner,
        ) {
            return ControllerResult::atomic(
                Vec::new(),
                response
                    .clone()
                    .with_error_code(ResponseError::DelegationTokenAuthorizationFailed.code())
                    .with_issue_timestamp_ms(ERROR_TIMESTAMP)
                    .with_expiry_timestamp_ms(ERROR_TIMESTAMP)
                    .with_max_timestamp_ms(ERROR_TIMESTAMP),
            );
        }
    }
    let Some(settings) = &c.config.delegation_tokens else {
        return ControllerResult::atomic(
            Vec::new(),
            disabled::create_delegation_token(c.ctx, request),
        );
    };
    if !supported(c.image) {
        return refuse(ResponseError::UnsupportedVersion.code());
    }
    let now = now_ms(c);
    let mut max_lifetime = settings.max_lifetime_ms;
    if request.max_lifetime_ms > 0 {
        max_lifetime = max_lifetime.min(request.max_lifetime_ms);
    }
    let max_timestamp = sum(now, max_lifetime);
    let expiry_timestamp = max_timestamp.min(sum(now, settings.expiry_time_ms));
    let token_id = kafka_uuid_to_string(random_topic_id(&mut c.rng.ids));
    let mut renewers = Vec::with_capacity(request.renewers.len());
    for renewer in &request.renewers {
        if renewer.principal_type.as_str() != USER_TYPE {
            return refuse(ResponseError::InvalidPrincipalType.code());
        }
        renewers.push(principal_text(USER_TYPE, &renewer.principal_name));
    }
    let hmac = settings.hmac(&token_id);
    let record = DelegationTokenRecord {
        owner: principal_text(&owner_type, &owner_name),
        requester: principal_text(&requester.principal_type, &requester.name),
        renewers,
        issue_timestamp: now,
        max_timestamp,
        expiration_timestamp: expiry_timestamp,
        token_id: token_id.clone(),
        ..Default::default()
    };
    tracing::info!(
        token_id = %token_id,
        owner = %record.owner,
        expiry_timestamp,
        max_timestamp,
        "creating a delegation token"
    );
    ControllerResult::atomic(
        vec![ApiMessageAndVersion::new(record, 0)],
        response
            .with_error_code(0)
            .with_issue_timestamp_ms(now)
            .with_expiry_timestamp_ms(expiry_timestamp)
            .with_max_timestamp_ms(max_timestamp)
            .with_token_id(text(&token_id))
            .with_hmac(Bytes::from(hmac)),
    )
}

/// RenewDelegationToken (api 39, v1-2) on the active controller: DELEGATION_TOKEN_AUTH_DISABLED
/// without a secret, UNSUPPORTED_VERSION below 3.6-IV2, DELEGATION_TOKEN_NOT_FOUND (no token
/// has this HMAC), DELEGATION_TOKEN_EXPIRED, DELEGATION_TOKEN_OWNER_MISMATCH (the requester is
/// neither owner nor renewer); else the expiry becomes now + min(`expiry.time.ms`, the
/// request's renew period if > 0), never past the max timestamp, in a DelegationTokenRecord.
pub fn renew_delegation_token(
    c: &mut WriteContext<'_>,
    request: &RenewDelegationTokenRequest,
) -> ControllerResult<RenewDelegationTokenResponse> {
    let refuse = |code: i16| {
        ControllerResult::atomic(
            Vec::new(),
            RenewDelegationTokenResponse::default().with_error_code(code),
        )
    };
    let Some(settings) = &c.config.delegation_tokens else {
        return ControllerResult::atomic(Vec::new(), disabled::renew_delegation_token(c.ctx));
    };
    if !supported(c.image) {
        return refuse(ResponseError::UnsupportedVersion.code());
    }
    let now = now_ms(c);
    let Some(token) = token_for_hmac(c.image, settings, &request.hmac) else {
        return refuse(ResponseError::DelegationTokenNotFound.code());
    };
    if expired(token, now) {
        return refuse(ResponseError::DelegationTokenExpired.code());
    }
    if !may_renew(token, &c.ctx.principal) {
        return refuse(ResponseError::DelegationTokenOwnerMismatch.code());
    }
    let mut renew_lifetime = settings.expiry_time_ms;
    if request.renew_period_ms > 0 {
        renew_lifetime = renew_lifetime.min(request.renew_period_ms);
    }
    let expiry_timestamp = token.max_timestamp.min(sum(now, renew_lifetime));
    let record = DelegationTokenRecord {
        expiration_timestamp: expiry_timestamp,
        ..token.clone()
    };
    ControllerResult::atomic(
        vec![ApiMessageAndVersion::new(record, 0)],
        RenewDelegationTokenResponse::default().with_expiry_timestamp_ms(expiry_timestamp),
    )
}

/// ExpireDelegationToken (api 40, v1-2) on the active controller: as
/// [`renew_delegation_token`] up to the owner check (which comes before the expiry check here);
/// a negative expiry period removes the token now (RemoveDelegationTokenRecord, expiry
/// timestamp now), even an expired one; otherwise an expired token is
/// DELEGATION_TOKEN_EXPIRED, and a live one's expiry becomes now + the period (never past the
/// max timestamp).
pub fn expire_delegation_token(
    c: &mut WriteContext<'_>,
    request: &ExpireDelegationTokenRequest,
) -> ControllerResult<ExpireDelegationTokenResponse> {
    let refuse = |code: i16| {
        ControllerResult::atomic(
            Vec::new(),
            ExpireDelegationTokenResponse::default().with_error_code(code),
        )
    };
    let Some(settings) = &c.config.delegation_tokens else {
        return ControllerResult::atomic(Vec::new(), disabled::expire_delegation_token(c.ctx));
    };
    if !supported(c.image) {
        return refuse(ResponseError::UnsupportedVersion.code());
    }
    let now = now_ms(c);
    let Some(token) = token_for_hmac(c.image, settings, &request.hmac) else {
        return refuse(ResponseError::DelegationTokenNotFound.code());
    };
    if !may_renew(token, &c.ctx.principal) {
        return refuse(ResponseError::DelegationTokenOwnerMismatch.code());
    }
    if request.expiry_time_period_ms < 0 {
        tracing::info!(token_id = %token.token_id, owner = %token.owner, "expiring a delegation token now");
        let record = RemoveDelegationTokenRecord {
            token_id: token.token_id.clone(),
            ..Default::default()
        };
        return ControllerResult::atomic(
            vec![ApiMessageAndVersion::new(record, 0)],
            ExpireDelegationTokenResponse::default().with_expiry_timestamp_ms(now),
        );
    }
    if expired(token, now) {
        return refuse(ResponseError::DelegationTokenExpired.code());
    }
    let expiry_timestamp = token
        .max_timestamp
        .min(sum(now, request.expiry_time_period_ms));
    let record = DelegationTokenRecord {
        expiration_timestamp: expiry_timestamp,
        ..token.clone()
    };
    ControllerResult::atomic(
        vec![ApiMessageAndVersion::new(record, 0)],
        ExpireDelegationTokenResponse::default().with_expiry_timestamp_ms(expiry_timestamp),
    )
}

/// `sweepExpiredDelegationTokens`: a RemoveDelegationTokenRecord for every token expired at
/// `now_ms` (ms since the Unix epoch), when tokens are enabled and metadata.version allows
/// them; empty otherwise.
pub fn sweep_expired_tokens(
    image: &MetadataImage,
    config: &ControllerConfig,
    now_ms: u64,
) -> Vec<ApiMessageAndVersion> {
    if config.delegation_tokens.is_none() || !supported(image) {
        return Vec::new();
    }
    let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
    image
        .other
        .delegation_tokens
        .values()
        .filter(|token| expired(token, now))
        .map(|token| {
            tracing::info!(
                token_id = %token.token_id,
                owner = %token.owner,
                "Delegation token expired; removing it"
            );
            ApiMessageAndVersion::new(
                RemoveDelegationTokenRecord {
                    token_id: token.token_id.clone(),
                    ..Default::default()
                },
                0,
            )
        })
        .collect()
}
