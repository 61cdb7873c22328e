//! Delegation tokens (KIP-48) on the controller: CreateDelegationToken, RenewDelegationToken,
//! ExpireDelegationToken with every error code of `DelegationTokenControlManager` and
//! `ControllerApis.allowTokenRequests`, the records they write as the image replays them, and
//! the periodic sweep of expired tokens.

use bytes::Bytes;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::create_delegation_token_request::CreatableRenewers;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::{DelegationTokenRecord, MetadataRecord};
use kraftwerk_records::metadata_version::MetadataVersion;

use crate::authorizer::AuthorizerConfig;
use crate::controller::{ControllerConfig, ControllerRequest, ControllerResponse};
use crate::handlers::delegation_tokens::DelegationTokenSettings;
use crate::request::Principal;
use crate::testing::{config, TestNode};

const MV: MetadataVersion = MetadataVersion::V4_1_IV1;
const SECRET: &str = "token-secret";
const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;

fn token_config(mv: MetadataVersion) -> ControllerConfig {
    let mut config = config(mv);
    config.delegation_tokens = Some(DelegationTokenSettings::new(SECRET));
    config
}

fn node_with(config: ControllerConfig) -> TestNode {
    let mut node = TestNode::new(config);
    // Wall-clock-like times, as the node's clock gives them.
    node.now_ms = 1_700_000_000_000;
    node.become_leader();
    node
}

/// `config` with no periodic work other than the token sweep (no NoOpRecords, no leader
/// rebalance, unclean elections only every 10 days), so a poll shows the sweep alone.
fn quiet(mut config: ControllerConfig) -> ControllerConfig {
    config.noop_interval_ms = 0;
    config.auto_leader_rebalance_enable = false;
    config.unclean_leader_election_interval_ms = 10 * DAY as u64;
    config
}

fn node() -> TestNode {
    node_with(token_config(MV))
}

fn code(e: ResponseError) -> i16 {
    e.code()
}

fn text(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_owned())
}

fn user(name: &str) -> Principal {
    Principal {
        principal_type: "User".into(),
        name: name.into(),
        token_authenticated: false,
    }
}

/// Sends `request` from `principal` as a broker forwards it (inside an Envelope), appends and
/// commits its records.
fn send_as(
    node: &mut TestNode,
    principal: Principal,
    forwarded: bool,
    api_version: i16,
    request: ControllerRequest,
) -> (ControllerResponse, Vec<MetadataRecord>) {
    let mut ctx = node.ctx(api_version);
    ctx.principal = principal;
    ctx.forwarded = forwarded;
    let result = node.controller.handle(&ctx, &request);
    node.append(&result);
    node.commit();
    let records = result.records.into_iter().map(|r| r.record).collect();
    (result.response, records)
}

fn create_as(
    node: &mut TestNode,
    who: &str,
    request: CreateDelegationTokenRequest,
) -> (CreateDelegationTokenResponse, Vec<MetadataRecord>) {
    match send_as(
        node,
        user(who),
        true,
        3,
        ControllerRequest::CreateDelegationToken(request),
    ) {
        (ControllerResponse::CreateDelegationToken(r), records) => (r, records),
        other => panic!("{other:?}"),
    }
}

fn renew_as(
    node: &mut TestNode,
    who: &str,
    hmac: &Bytes,
    period: i64,
) -> (RenewDelegationTokenResponse, Vec<MetadataRecord>) {
    let request = RenewDelegationTokenRequest::default()
        .with_hmac(hmac.clone())
        .with_renew_period_ms(period);
    match send_as(
        node,
        user(who),
        true,
        2,
        ControllerRequest::RenewDelegationToken(request),
    ) {
        (ControllerResponse::RenewDelegationToken(r), records) => (r, records),
        other => panic!("{other:?}"),
    }
}

fn expire_as(
    node: &mut TestNode,
    who: &str,
    hmac: &Bytes,
    period: i64,
) -> (ExpireDelegationTokenResponse, Vec<MetadataRecord>) {
    let request = ExpireDelegationTokenRequest::default()
        .with_hmac(hmac.clone())
        .with_expiry_time_period_ms(period);
    match send_as(
        node,
        user(who),
        true,
        2,
        ControllerRequest::ExpireDelegationToken(request),
    ) {
        (ControllerResponse::ExpireDelegationToken(r), records) => (r, records),
        other => panic!("{other:?}"),
    }
}

fn renewers(names: &[(&str, &str)]) -> Vec<CreatableRenewers> {
    names
        .iter()
        .map(|(t, n)| {
            CreatableRenewers::default()
                .with_principal_type(text(t))
                .with_principal_name(text(n))
        })
        .collect()
}

/// alice creates a token with bob as renewer; returns (token id, hmac).
fn alice_token(node: &mut TestNode) -> (String, Bytes) {
    let (r, _) = create_as(
        node,
        "alice",
        CreateDelegationTokenRequest::default()
            .with_renewers(renewers(&[("User", "bob")]))
            .with_max_lifetime_ms(-1),
    );
    assert_eq!(r.error_code, 0);
    (r.token_id.to_string(), r.hmac)
}

fn stored(node: &TestNode, token_id: &str) -> Option<DelegationTokenRecord> {
    node.latest().other.delegation_tokens.get(token_id).cloned()
}

#[test]
fn create_issues_a_token_whose_hmac_is_keyed_by_the_secret() {
    let mut node = node();
    let now = node.now_ms as i64;
    let (r, records) = create_as(
        &mut node,
        "alice",
        CreateDelegationTokenRequest::default()
            .with_renewers(renewers(&[("User", "bob")]))
            .with_max_lifetime_ms(-1),
    );
    assert_eq!(r.error_code, 0);
    assert_eq!(
        (r.principal_type.as_str(), r.principal_name.as_str()),
        ("User", "alice")
    );
    assert_eq!(r.token_requester_principal_name.as_str(), "alice");
    assert_eq!(r.issue_timestamp_ms, now);
    assert_eq!(r.expiry_timestamp_ms, now + DAY);
    assert_eq!(r.max_timestamp_ms, now + 7 * DAY);
    // A Kafka Uuid string (22 characters of URL-safe base64), HMAC-SHA512 of it.
    assert_eq!(r.token_id.len(), 22);
    assert_eq!(
        r.hmac.to_vec(),
        kraftwerk_sasl::token_hmac(SECRET, r.token_id.as_str())
    );
    assert_eq!(r.hmac.len(), 64);
    let [MetadataRecord::DelegationToken(record)] = &records[..] else {
        panic!("{records:?}")
    };
    assert_eq!(record.owner, "User:alice");
    assert_eq!(record.requester, "User:alice");
    assert_eq!(record.renewers, vec!["User:bob".to_owned()]);
    assert_eq!(record.token_id, r.token_id.as_str());
    assert_eq!(
        (
            record.issue_timestamp,
            record.expiration_timestamp,
            record.max_timestamp
        ),
        (now, now + DAY, now + 7 * DAY)
    );
    // Replayed into the image, committed.
    assert_eq!(stored(&node, &r.token_id).as_ref(), Some(record));
    assert!(node
        .controller
        .image()
        .other
        .delegation_tokens
        .contains_key(r.token_id.as_str()));
    // A second token gets another id.
    let (id2, _) = alice_token(&mut node);
    assert_ne!(id2, r.token_id.as_str());
}

#[test]
fn create_caps_lifetimes_and_takes_the_requested_owner() {
    let mut node = node();
    let now = node.now_ms as i64;
    // A shorter max lifetime than the expiry time: the expiry is the max.
    let (r, _) = create_as(
        &mut node,
        "admin",
        CreateDelegationTokenRequest::default()
            .with_max_lifetime_ms(HOUR)
            .with_owner_principal_type(Some(text("User")))
            .with_owner_principal_name(Some(text("carol"))),
    );
    assert_eq!(r.error_code, 0);
    assert_eq!(
        (r.max_timestamp_ms, r.expiry_timestamp_ms),
        (now + HOUR, now + HOUR)
    );
    assert_eq!(r.principal_name.as_str(), "carol");
    assert_eq!(r.token_requester_principal_name.as_str(), "admin");
    let token = stored(&node, &r.token_id).unwrap();
    assert_eq!(
        (token.owner.as_str(), token.requester.as_str()),
        ("User:carol", "User:admin")
    );
    // A longer one than configured: the configured 7 days.
    let (r, _) = create_as(
        &mut node,
        "alice",
        CreateDelegationTokenRequest::default().with_max_lifetime_ms(30 * DAY),
    );
    assert_eq!(r.max_timestamp_ms, now + 7 * DAY);
    // An empty owner name means the requester.
    let (r, _) = create_as(
        &mut node,
        "alice",
        CreateDelegationTokenRequest::default().with_owner_principal_name(Some(text(""))),
    );
    assert_eq!(r.principal_name.as_str(), "alice");
}

#[test]
fn create_refuses_renewers_that_are_not_users() {
    let mut node = node();
    let (r, records) = create_as(
        &mut node,
        "alice",
        CreateDelegationTokenRequest::default()
            .with_renewers(renewers(&[("User", "bob"), ("Group", "ops")])),
    );
    assert_eq!(r.error_code, code(ResponseError::InvalidPrincipalType));
    assert!(records.is_empty());
    assert!(r.token_id.is_empty() && r.hmac.is_empty());
    assert!(node.latest().other.delegation_tokens.is_empty());
}

#[test]
fn without_a_secret_tokens_are_disabled() {
    let mut node = node_with(config(MV));
    let (r, records) = create_as(&mut node, "alice", CreateDelegationTokenRequest::default());
    assert_eq!(
        r.error_code,
        code(ResponseError::DelegationTokenAuthDisabled)
    );
    assert!(records.is_empty());
    let hmac = Bytes::from(vec![1u8; 64]);
    assert_eq!(
        renew_as(&mut node, "alice", &hmac, 0).0.error_code,
        code(ResponseError::DelegationTokenAuthDisabled)
    );
    assert_eq!(
        expire_as(&mut node, "alice", &hmac, -1).0.error_code,
        code(ResponseError::DelegationTokenAuthDisabled)
    );
}

#[test]
fn below_3_6_iv2_tokens_are_an_unsupported_version() {
    let mut node = node_with(token_config(MetadataVersion::V3_6_IV1));
    let (r, records) = create_as(&mut node, "alice", CreateDelegationTokenRequest::default());
    assert_eq!(r.error_code, code(ResponseError::UnsupportedVersion));
    assert!(records.is_empty());
    let hmac = Bytes::from(vec![1u8; 64]);
    assert_eq!(
        renew_as(&mut node, "alice", &hmac, 0).0.error_code,
        code(ResponseError::UnsupportedVersion)
    );
    assert_eq!(
        expire_as(&mut node, "alice", &hmac, -1).0.error_code,
        code(ResponseError::UnsupportedVersion)
    );
}

#[test]
fn direct_and_token_authenticated_requests_are_not_allowed() {
    let mut node = node();
    let (_, hmac) = alice_token(&mut node);
    let token_alice = Principal {
        token_authenticated: true,
        ..user("alice")
    };
    for (principal, forwarded) in [(user("alice"), false), (token_alice, true)] {
        let requests = [
            ControllerRequest::CreateDelegationToken(CreateDelegationTokenRequest::default()),
            ControllerRequest::RenewDelegationToken(
                RenewDelegationTokenRequest::default().with_hmac(hmac.clone()),
            ),
            ControllerRequest::ExpireDelegationToken(
                ExpireDelegationTokenRequest::default()
                    .with_hmac(hmac.clone())
                    .with_expiry_time_period_ms(-1),
            ),
        ];
        for request in requests {
            let (response, records) = send_as(&mut node, principal.clone(), forwarded, 2, request);
            assert!(records.is_empty());
            let (code, timestamp) = match response {
                ControllerResponse::CreateDelegationToken(r) => (r.error_code, r.max_timestamp_ms),
                ControllerResponse::RenewDelegationToken(r) => {
                    (r.error_code, r.expiry_timestamp_ms)
                }
                ControllerResponse::ExpireDelegationToken(r) => {
                    (r.error_code, r.expiry_timestamp_ms)
                }
                other => panic!("{other:?}"),
            };
            assert_eq!(
                (code, timestamp),
                (ResponseError::DelegationTokenRequestNotAllowed.code(), -1)
            );
        }
    }
    assert_eq!(node.latest().other.delegation_tokens.len(), 1);
}

#[test]
fn a_standby_answers_not_controller() {
    let mut node = node();
    node.controller.deactivate();
    let (response, records) = send_as(
        &mut node,
        user("alice"),
        true,
        3,
        ControllerRequest::CreateDelegationToken(CreateDelegationTokenRequest::default()),
    );
    let ControllerResponse::CreateDelegationToken(r) = response else {
        panic!()
    };
    assert_eq!(r.error_code, code(ResponseError::NotController));
    assert!(records.is_empty());
}

#[test]
fn creating_for_another_owner_needs_create_tokens_with_an_authorizer() {
    let mut config = token_config(MV);
    config.authorizer = Some(AuthorizerConfig {
        super_users: AuthorizerConfig::parse_super_users("User:admin").unwrap(),
        allow_everyone_if_no_acl_found: false,
    });
    let mut node = node_with(config);
    let for_bob = || {
        CreateDelegationTokenRequest::default()
            .with_owner_principal_type(Some(text("User")))
            .with_owner_principal_name(Some(text("bob")))
    };
    let (r, records) = create_as(&mut node, "alice", for_bob());
    assert_eq!(
        r.error_code,
        code(ResponseError::DelegationTokenAuthorizationFailed)
    );
    assert_eq!((r.issue_timestamp_ms, r.max_timestamp_ms), (-1, -1));
    assert!(records.is_empty());
    // For herself alice needs no ACL; a super user may create one for bob.
    assert_eq!(
        create_as(&mut node, "alice", CreateDelegationTokenRequest::default())
            .0
            .error_code,
        0
    );
    let (r, _) = create_as(&mut node, "admin", for_bob());
    assert_eq!(r.error_code, 0);
    assert_eq!(r.principal_name.as_str(), "bob");
}

#[test]
fn renew_extends_the_expiry_up_to_the_max() {
    let mut node = node();
    let (id, hmac) = alice_token(&mut node);
    let issued = node.now_ms as i64;
    node.now_ms += 2 * HOUR as u64;
    let now = node.now_ms as i64;
    // The renewer may renew; a period shorter than the expiry time is taken.
    let (r, records) = renew_as(&mut node, "bob", &hmac, HOUR);
    assert_eq!((r.error_code, r.expiry_timestamp_ms), (0, now + HOUR));
    let [MetadataRecord::DelegationToken(record)] = &records[..] else {
        panic!("{records:?}")
    };
    assert_eq!(record.expiration_timestamp, now + HOUR);
    assert_eq!(record.issue_timestamp, issued);
    assert_eq!(stored(&node, &id).unwrap().expiration_timestamp, now + HOUR);
    // No period (or a longer one): the expiry time, 1 day.
    assert_eq!(
        renew_as(&mut node, "alice", &hmac, 0).0.expiry_timestamp_ms,
        now + DAY
    );
    assert_eq!(
        renew_as(&mut node, "alice", &hmac, 3 * DAY)
            .0
            .expiry_timestamp_ms,
        now + DAY
    );
    // Near the max timestamp, the max: a token of 3 hours renewed 2 hours in.
    let (r, _) = create_as(
        &mut node,
        "alice",
        CreateDelegationTokenRequest::default().with_max_lifetime_ms(3 * HOUR),
    );
    node.now_ms += 2 * HOUR as u64;
    let (renewed, _) = renew_as(&mut node, "alice", &r.hmac, 0);
    assert_eq!(
        (renewed.error_code, renewed.expiry_timestamp_ms),
        (0, r.max_timestamp_ms)
    );
}

#[test]
fn renew_refuses_unknown_foreign_and_expired_tokens() {
    let mut node = node();
    let (_, hmac) = alice_token(&mut node);
    let unknown = Bytes::from(kraftwerk_sasl::token_hmac("other-secret", "x"));
    let (r, records) = renew_as(&mut node, "alice", &unknown, 0);
    assert_eq!(
        (r.error_code, records.len()),
        (code(ResponseError::DelegationTokenNotFound), 0)
    );
    let (r, records) = renew_as(&mut node, "mallory", &hmac, 0);
    assert_eq!(
        (r.error_code, records.len()),
        (code(ResponseError::DelegationTokenOwnerMismatch), 0)
    );
    node.now_ms += (DAY + 1) as u64;
    let (r, records) = renew_as(&mut node, "alice", &hmac, 0);
    assert_eq!(
        (r.error_code, records.len()),
        (code(ResponseError::DelegationTokenExpired), 0)
    );
    // Expired wins over the owner check on renew.
    assert_eq!(
        renew_as(&mut node, "mallory", &hmac, 0).0.error_code,
        code(ResponseError::DelegationTokenExpired)
    );
}

#[test]
fn expire_now_removes_the_token() {
    let mut node = node();
    let (id, hmac) = alice_token(&mut node);
    let now = node.now_ms as i64;
    let (r, records) = expire_as(&mut node, "bob", &hmac, -1);
    assert_eq!((r.error_code, r.expiry_timestamp_ms), (0, now));
    let [MetadataRecord::RemoveDelegationToken(remove)] = &records[..] else {
        panic!("{records:?}")
    };
    assert_eq!(remove.token_id, id);
    assert_eq!(stored(&node, &id), None);
    assert!(node.controller.image().other.delegation_tokens.is_empty());
    // Gone: not found any more.
    assert_eq!(
        renew_as(&mut node, "alice", &hmac, 0).0.error_code,
        code(ResponseError::DelegationTokenNotFound)
    );
    assert_eq!(
        expire_as(&mut node, "alice", &hmac, -1).0.error_code,
        code(ResponseError::DelegationTokenNotFound)
    );
}

#[test]
fn expire_with_a_period_moves_the_expiry() {
    let mut node = node();
    let (id, hmac) = alice_token(&mut node);
    let now = node.now_ms as i64;
    let (r, records) = expire_as(&mut node, "alice", &hmac, 10_000);
    assert_eq!((r.error_code, r.expiry_timestamp_ms), (0, now + 10_000));
    assert!(
        matches!(&records[..], [MetadataRecord::DelegationToken(t)] if t.expiration_timestamp == now + 10_000)
    );
    // A period past the max timestamp stops at it; 0 expires it now (still stored).
    assert_eq!(
        expire_as(&mut node, "alice", &hmac, 30 * DAY)
            .0
            .expiry_timestamp_ms,
        now + 7 * DAY
    );
    assert_eq!(
        expire_as(&mut node, "alice", &hmac, 0)
            .0
            .expiry_timestamp_ms,
        now
    );
    assert_eq!(stored(&node, &id).unwrap().expiration_timestamp, now);
    // Once expired, only an immediate expiry still works; the owner check comes first.
    node.now_ms += 1;
    assert_eq!(
        expire_as(&mut node, "alice", &hmac, 1_000).0.error_code,
        code(ResponseError::DelegationTokenExpired)
    );
    assert_eq!(
        expire_as(&mut node, "mallory", &hmac, 1_000).0.error_code,
        code(ResponseError::DelegationTokenOwnerMismatch)
    );
    assert_eq!(expire_as(&mut node, "alice", &hmac, -1).0.error_code, 0);
    assert_eq!(stored(&node, &id), None);
}

#[test]
fn the_active_controller_sweeps_expired_tokens_every_check_interval() {
    let mut node = node_with(quiet(token_config(MV)));
    let start = node.now_ms;
    assert_eq!(
        node.controller.next_deadline_ms(),
        Some(start + HOUR as u64)
    );
    let (short, _) = {
        let (r, _) = create_as(
            &mut node,
            "alice",
            CreateDelegationTokenRequest::default().with_max_lifetime_ms(HOUR / 2),
        );
        (r.token_id.to_string(), r.hmac)
    };
    let (long, _) = alice_token(&mut node);
    // Expired but not swept before the check.
    node.now_ms = start + (HOUR as u64) - 1;
    assert!(node.poll_until_idle().is_empty());
    assert!(stored(&node, &short).is_some());
    node.now_ms = start + HOUR as u64;
    let written = node.poll_until_idle();
    let removed: Vec<&str> = written
        .iter()
        .map(|r| match &r.record {
            MetadataRecord::RemoveDelegationToken(r) => r.token_id.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(removed, vec![short.as_str()]);
    node.commit();
    assert_eq!(stored(&node, &short), None);
    assert!(stored(&node, &long).is_some());
    // Next check an hour later; the day-long token expires and goes at the check after.
    assert_eq!(
        node.controller.next_deadline_ms(),
        Some(start + 2 * HOUR as u64)
    );
    node.now_ms = start + (DAY + HOUR) as u64 + 1;
    let written = node.poll_until_idle();
    assert_eq!(written.len(), 1);
    node.commit();
    assert!(node.latest().other.delegation_tokens.is_empty());
}

/// More expired tokens than one batch holds: the sweep is not atomic (as Java's
/// `sweepExpiredDelegationTokens` result is not), so it is appended in batches of at most
/// `MAX_RECORDS_PER_BATCH` and every token goes in one sweep.
#[test]
fn a_sweep_of_more_tokens_than_a_batch_holds_is_split_into_batches() {
    use crate::controller::MAX_RECORDS_PER_BATCH;
    use crate::request::ControllerResult;
    use kraftwerk_records::metadata::ApiMessageAndVersion;

    let mut node = node_with(quiet(token_config(MV)));
    let start = node.now_ms;
    let count = MAX_RECORDS_PER_BATCH + 7;
    let tokens: Vec<ApiMessageAndVersion> = (0..count)
        .map(|i| {
            ApiMessageAndVersion::new(
                DelegationTokenRecord {
                    owner: "User:alice".to_owned(),
                    requester: "User:alice".to_owned(),
                    issue_timestamp: start as i64,
                    max_timestamp: start as i64 + HOUR / 2,
                    expiration_timestamp: start as i64 + HOUR / 2,
                    token_id: format!("token-{i}"),
                    ..Default::default()
                },
                0,
            )
        })
        .collect();
    node.append(&ControllerResult::of(tokens, ()));
    node.commit();
    assert_eq!(node.latest().other.delegation_tokens.len(), count);
    node.now_ms = start + HOUR as u64;
    let sweep = node
        .controller
        .poll(node.now_ms, node.next_offset())
        .expect("the check interval has passed");
    assert!(!sweep.atomic, "a sweep must be splittable into batches");
    assert_eq!(sweep.records.len(), count);
    // TestNode::append writes a non-atomic result in batches of at most MAX_RECORDS_PER_BATCH.
    let appended = node.append(&sweep);
    assert_eq!(appended.len(), count);
    node.commit();
    assert!(node.latest().other.delegation_tokens.is_empty());
    assert!(node.poll_until_idle().is_empty());
}

#[test]
fn without_a_secret_there_is_no_sweep() {
    let node = node_with(quiet(config(MV)));
    assert_eq!(
        node.controller.next_deadline_ms(),
        Some(node.now_ms + 10 * DAY as u64)
    );
}

#[test]
fn the_secret_is_not_in_the_debug_output() {
    let config = token_config(MV);
    let text = format!("{config:?}");
    assert!(!text.contains(SECRET), "{text}");
    assert!(text.contains("[hidden]"));
}
