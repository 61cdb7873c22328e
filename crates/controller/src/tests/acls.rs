//! CreateAcls / DeleteAcls / DescribeAcls with StandardAuthorizer (AclApis, AclControlManager,
//! KAFKA-19411's cap) and the ControllerApis checks in front of every request, for direct and
//! Envelope-forwarded requests.

use std::net::{IpAddr, Ipv4Addr};

use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::MetadataRecord;
use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use crate::authorizer::{AuthorizerConfig, CLUSTER_NAME};
use crate::controller::{Controller, ControllerRequest, ControllerResponse};
use crate::request::Principal;
use crate::testing::{config, create_topics, registration, TestNode};

const MV: MetadataVersion = MetadataVersion::V4_1_IV1;

fn authz_config() -> crate::controller::ControllerConfig {
    authz_config_at(MV)
}

fn authz_config_at(mv: MetadataVersion) -> crate::controller::ControllerConfig {
    let mut config = config(mv);
    config.authorizer = Some(AuthorizerConfig {
        super_users: AuthorizerConfig::parse_super_users("User:admin;User:CN=broker,OU=it")
            .unwrap(),
        allow_everyone_if_no_acl_found: false,
    });
    config
}

fn node() -> TestNode {
    let mut node = TestNode::new(authz_config());
    node.become_leader();
    node
}

fn user(name: &str) -> Principal {
    Principal {
        principal_type: "User".into(),
        name: name.into(),
        token_authenticated: false,
    }
}

/// Sends `request` as `principal` (forwarded: inside a broker's Envelope), appends and commits.
fn send(
    node: &mut TestNode,
    principal: &str,
    forwarded: bool,
    api_version: i16,
    request: ControllerRequest,
) -> (ControllerResponse, Vec<MetadataRecord>) {
    let mut ctx = node.ctx(api_version);
    ctx.principal = user(principal);
    ctx.forwarded = forwarded;
    ctx.client_address = Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7)));
    let result = node.controller.handle(&ctx, &request);
    node.append(&result);
    node.commit();
    let records = result.records.into_iter().map(|r| r.record).collect();
    (result.response, records)
}

/// (resource type, name, pattern type, principal, host, operation, permission).
type Acl<'a> = (i8, &'a str, i8, &'a str, &'a str, i8, i8);

fn creation(acl: Acl<'_>) -> AclCreation {
    let (rt, name, pt, principal, host, op, perm) = acl;
    AclCreation::default()
        .with_resource_type(rt)
        .with_resource_name(StrBytes::from_string(name.into()))
        .with_resource_pattern_type(pt)
        .with_principal(StrBytes::from_string(principal.into()))
        .with_host(StrBytes::from_string(host.into()))
        .with_operation(op)
        .with_permission_type(perm)
}

fn create(
    node: &mut TestNode,
    principal: &str,
    acls: &[Acl<'_>],
) -> (Vec<(i16, Option<String>)>, usize) {
    let request =
        CreateAclsRequest::default().with_creations(acls.iter().map(|a| creation(*a)).collect());
    let (response, records) = send(
        node,
        principal,
        true,
        3,
        ControllerRequest::CreateAcls(request),
    );
    let ControllerResponse::CreateAcls(r) = response else {
        panic!("{response:?}")
    };
    let results = r
        .results
        .iter()
        .map(|x| {
            (
                x.error_code,
                x.error_message.as_ref().map(|m| m.to_string()),
            )
        })
        .collect();
    (results, records.len())
}

/// A successful creation: code 0 and the generated default message "" (AclApis sets none).
fn ok() -> (i16, Option<String>) {
    (0, Some(String::new()))
}

fn any_filter() -> DeleteAclsFilter {
    // The generated defaults of the nullable filters are "", which match only "".
    DeleteAclsFilter::default()
        .with_resource_name_filter(None)
        .with_principal_filter(None)
        .with_host_filter(None)
        .with_resource_type_filter(1)
        .with_pattern_type_filter(1)
        .with_operation(1)
        .with_permission_type(1)
}

fn describe_all(node: &mut TestNode, principal: &str) -> DescribeAclsResponse {
    let request = DescribeAclsRequest::default()
        .with_resource_name_filter(None)
        .with_principal_filter(None)
        .with_host_filter(None)
        .with_resource_type_filter(1)
        .with_pattern_type_filter(1)
        .with_operation(1)
        .with_permission_type(1);
    let (response, _) = send(
        node,
        principal,
        true,
        3,
        ControllerRequest::DescribeAcls(request),
    );
    let ControllerResponse::DescribeAcls(r) = response else {
        panic!()
    };
    r
}

// Codes: resource TOPIC 2, GROUP 3, CLUSTER 4; pattern LITERAL 3, PREFIXED 4; operation ALL 2,
// READ 3, CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9; permission DENY 2, ALLOW 3.

#[test]
fn create_describe_delete_round_trip() {
    let mut node = node();
    let (results, records) = create(
        &mut node,
        "admin",
        &[
            (2, "orders", 3, "User:alice", "*", 3, 3),
            (2, "orders", 3, "User:alice", "*", 3, 3), // asked twice: one record
            (2, "log-", 4, "User:bob", "10.0.0.1", 8, 2),
        ],
    );
    assert_eq!(results, vec![ok(); 3]);
    assert_eq!(records, 2);
    // Existing: success, no record.
    let (results, records) = create(
        &mut node,
        "admin",
        &[(2, "orders", 3, "User:alice", "*", 3, 3)],
    );
    assert_eq!((results, records), (vec![ok()], 0));

    assert_eq!(node.controller.image().other.acls.len(), 2);
    let described = describe_all(&mut node, "admin");
    assert_eq!(described.error_code, 0);
    assert_eq!(described.resources.len(), 2);
    let orders = described
        .resources
        .iter()
        .find(|r| r.resource_name.as_str() == "orders")
        .unwrap();
    assert_eq!(
        (orders.resource_type, orders.pattern_type, orders.acls.len()),
        (2, 3, 1)
    );
    assert_eq!(orders.acls[0].principal.as_str(), "User:alice");

    // A MATCH filter finds the prefixed ACL for a literal name; a DELETE of bob's ACLs removes it.
    let request = DeleteAclsRequest::default().with_filters(vec![
        any_filter().with_principal_filter(Some(StrBytes::from_static_str("User:bob"))),
        any_filter().with_resource_name_filter(Some(StrBytes::from_static_str("nothing"))),
        any_filter().with_operation(0),
    ]);
    let (response, records) = send(
        &mut node,
        "admin",
        true,
        3,
        ControllerRequest::DeleteAcls(request),
    );
    let ControllerResponse::DeleteAcls(r) = response else {
        panic!()
    };
    assert_eq!(r.filter_results.len(), 3);
    assert_eq!(r.filter_results[0].error_code, 0);
    assert_eq!(r.filter_results[0].matching_acls.len(), 1);
    assert_eq!(
        r.filter_results[0].matching_acls[0].resource_name.as_str(),
        "log-"
    );
    assert_eq!(
        r.filter_results[0].matching_acls[0].host.as_str(),
        "10.0.0.1"
    );
    assert!(r.filter_results[1].matching_acls.is_empty());
    assert_eq!(r.filter_results[2].error_code, 42);
    assert_eq!(
        r.filter_results[2].error_message.as_deref(),
        Some("Unknown entryFilter.")
    );
    assert!(matches!(
        records.as_slice(),
        [MetadataRecord::RemoveAccessControlEntry(_)]
    ));
    assert_eq!(node.latest().other.acls.len(), 1);
}

#[test]
fn invalid_creations_get_acl_control_manager_messages() {
    let mut node = node();
    let cases: &[(Acl<'_>, &str)] = &[
        ((4, "other", 3, "User:a", "*", 7, 3), "The only valid name for the CLUSTER resource is kafka-cluster"),
        ((2, "", 3, "User:a", "*", 7, 3), "Invalid empty resource name"),
        ((1, "t", 3, "User:a", "*", 7, 3), "Invalid resourceType ANY"),
        ((2, "t", 2, "User:a", "*", 7, 3), "Invalid patternType MATCH"),
        ((2, "t", 3, "User:a", "*", 1, 3), "Invalid operation ANY"),
        ((2, "t", 3, "User:a", "*", 7, 9), "Invalid permissionType UNKNOWN"),
        (
            (2, "t", 3, "alice", "*", 7, 3),
            "Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)",
        ),
        ((2, "t", 3, "User:a", "", 7, 3), "Host pattern cannot be null or empty"),
    ];
    for (acl, message) in cases {
        let (results, records) = create(&mut node, "admin", &[*acl]);
        assert_eq!(results, vec![(42, Some(message.to_string()))], "{acl:?}");
        assert_eq!(records, 0);
    }
    // Below 4.4-IV1 a CIDR host is UNSUPPORTED_VERSION, with Java's message.
    let (results, records) = create(
        &mut node,
        "admin",
        &[(2, "t", 3, "User:a", "10.0.0.0/8", 7, 3)],
    );
    assert_eq!(
        results,
        vec![(
            35,
            Some("CIDR-based ACL host patterns require metadata version 4.4-IV1 or higher.".into())
        )]
    );
    assert_eq!(records, 0);
}

/// KIP-1276: from 4.4-IV1 a CIDR host is written (and then matched by the authorizer); a
/// malformed one is INVALID_REQUEST naming the pattern, as `CidrUtils.validate` refuses it.
#[test]
fn cidr_hosts_are_written_from_4_4_iv1() {
    let mut node = TestNode::new(authz_config_at(MetadataVersion::V4_4_IV1));
    node.become_leader();
    let (results, records) = create(
        &mut node,
        "admin",
        &[
            (2, "t", 3, "User:a", "10.0.0.0/8", 7, 3),
            (2, "t", 3, "User:a", "fd00::/8", 7, 3),
        ],
    );
    assert_eq!(results, vec![ok(), ok()]);
    assert_eq!(records, 2);
    for bad in ["10.0.0.0/33", "10.0.0/8", "zz::/8"] {
        let (results, records) = create(&mut node, "admin", &[(2, "t", 3, "User:a", bad, 7, 3)]);
        assert_eq!(results[0].0, 42, "{bad}");
        assert!(
            results[0]
                .1
                .as_deref()
                .is_some_and(|m| m.starts_with(&format!("Invalid CIDR notation '{bad}': "))),
            "{results:?}"
        );
        assert_eq!(records, 0);
    }
}

#[test]
fn a_request_over_10000_records_is_refused_whole() {
    let mut node = node();
    let names: Vec<String> = (0..10_001).map(|i| format!("t{i}")).collect();
    let acls: Vec<Acl<'_>> = names
        .iter()
        .map(|n| (2, n.as_str(), 3, "User:a", "*", 3, 3))
        .collect();
    let (results, records) = create(&mut node, "admin", &acls);
    assert_eq!(records, 0);
    assert_eq!(results[0].0, 44);
    assert_eq!(results.len(), 10_001);
    assert!(results.iter().all(|r| *r
        == (
            44,
            Some("Unable to perform excessively large batch operation.".into())
        )));
    // 10,000 fit; one more in another request.
    let (_, records) = create(&mut node, "admin", &acls[..10_000]);
    assert_eq!(records, 10_000);
    let (_, records) = create(&mut node, "admin", &acls[10_000..]);
    assert_eq!(records, 1);
    // KAFKA-19411: deleting all 10,001 at once is refused for every filter, nothing removed.
    let request = DeleteAclsRequest::default().with_filters(vec![any_filter(), any_filter()]);
    let (response, records) = send(
        &mut node,
        "admin",
        true,
        3,
        ControllerRequest::DeleteAcls(request),
    );
    let ControllerResponse::DeleteAcls(r) = response else {
        panic!()
    };
    assert!(records.is_empty());
    assert_eq!(r.filter_results.len(), 2);
    for result in &r.filter_results {
        assert_eq!(result.error_code, 42);
        assert_eq!(
            result.error_message.as_deref(),
            Some("Cannot remove more than 10000 acls in a single delete operation.")
        );
    }
    // One, then the remaining 10,000 at once, are fine.
    let request = DeleteAclsRequest::default().with_filters(vec![
        any_filter().with_resource_name_filter(Some(StrBytes::from_static_str("t10000")))
    ]);
    let (_, records) = send(
        &mut node,
        "admin",
        true,
        3,
        ControllerRequest::DeleteAcls(request),
    );
    assert_eq!(records.len(), 1);
    let request = DeleteAclsRequest::default().with_filters(vec![any_filter()]);
    let (_, records) = send(
        &mut node,
        "admin",
        true,
        3,
        ControllerRequest::DeleteAcls(request),
    );
    assert_eq!(records.len(), 10_000);
}

#[test]
fn forwarded_requests_are_authorized_as_the_client() {
    let mut node = node();
    create(
        &mut node,
        "admin",
        &[(4, CLUSTER_NAME, 3, "User:alice", "*", 7, 3)],
    );
    // alice may ALTER the cluster: CreateAcls; bob may not.
    let (results, records) = create(&mut node, "alice", &[(3, "g", 3, "User:x", "*", 3, 3)]);
    assert_eq!((results, records), (vec![ok()], 1));
    let (results, records) = create(&mut node, "bob", &[(3, "g", 3, "User:y", "*", 3, 3)]);
    assert_eq!(records, 0);
    assert_eq!(results[0].0, 31);
    assert_eq!(
        results[0].1.as_deref(),
        Some("Request CreateAcls needs ALTER permission.")
    );
    // Describing needs DESCRIBE (implied by ALTER for alice).
    assert_eq!(describe_all(&mut node, "alice").error_code, 0);
    assert_eq!(describe_all(&mut node, "bob").error_code, 31);
}

#[test]
fn broker_rpcs_need_cluster_action() {
    let mut node = node();
    let request = ControllerRequest::BrokerRegistration(registration(1, Uuid::from_u64_pair(1, 1)));
    let (response, records) = send(&mut node, "intruder", false, 4, request.clone());
    let ControllerResponse::BrokerRegistration(r) = response else {
        panic!()
    };
    assert_eq!(r.error_code, 31);
    assert!(records.is_empty());
    // The broker's certificate principal is a super user.
    let (response, _) = send(&mut node, "CN=broker,OU=it", false, 4, request);
    let ControllerResponse::BrokerRegistration(r) = response else {
        panic!()
    };
    assert_eq!(r.error_code, 0);
    // A CLUSTER_ACTION ACL does it too.
    create(
        &mut node,
        "admin",
        &[(4, CLUSTER_NAME, 3, "User:b2", "10.0.0.7", 9, 3)],
    );
    let (response, _) = send(
        &mut node,
        "b2",
        false,
        4,
        ControllerRequest::BrokerRegistration(registration(2, Uuid::from_u64_pair(2, 1))),
    );
    let ControllerResponse::BrokerRegistration(r) = response else {
        panic!()
    };
    assert_eq!(r.error_code, 0);
}

#[test]
fn create_topics_is_authorized_per_topic() {
    let mut node = node();
    let (response, _) = send(
        &mut node,
        "CN=broker,OU=it",
        false,
        4,
        ControllerRequest::BrokerRegistration(registration(1, Uuid::from_u64_pair(1, 1))),
    );
    let ControllerResponse::BrokerRegistration(r) = response else {
        panic!()
    };
    let epoch = r.broker_epoch;
    let mut hb = node.ctx(1);
    hb.principal = user("admin");
    let heartbeat = BrokerHeartbeatRequest::default()
        .with_broker_id(1.into())
        .with_broker_epoch(epoch)
        .with_current_metadata_offset(node.next_offset())
        .with_want_fence(false);
    let result = node
        .controller
        .handle(&hb, &ControllerRequest::BrokerHeartbeat(heartbeat));
    node.append(&result);
    node.commit();
    // carol may create "a-" topics, and describe the configs of "a-1" only.
    create(
        &mut node,
        "admin",
        &[
            (2, "a-", 4, "User:carol", "*", 5, 3),
            (2, "a-1", 3, "User:carol", "*", 10, 3),
        ],
    );
    let request = create_topics(&[("a-1", 1, 1), ("a-2", 1, 1), ("b-1", 1, 1)]);
    let (response, records) = send(
        &mut node,
        "carol",
        true,
        7,
        ControllerRequest::CreateTopics(request),
    );
    let ControllerResponse::CreateTopics(r) = response else {
        panic!()
    };
    let find = |name: &str| r.topics.iter().find(|t| t.name.as_str() == name).unwrap();
    assert_eq!(r.topics.len(), 3);
    assert_eq!(
        (find("a-1").error_code, find("a-1").topic_config_error_code),
        (0, 0)
    );
    assert!(find("a-1").configs.as_ref().is_some_and(|c| !c.is_empty()));
    // Created, but its configs are not shown.
    assert_eq!(
        (find("a-2").error_code, find("a-2").topic_config_error_code),
        (0, 29)
    );
    assert!(find("a-2").configs.as_ref().is_none_or(|c| c.is_empty()));
    assert_eq!(find("b-1").error_code, 29);
    assert_eq!(
        find("b-1").error_message.as_deref(),
        Some("Authorization failed.")
    );
    let topics = records
        .iter()
        .filter(|r| matches!(r, MetadataRecord::Topic(_)))
        .count();
    assert_eq!(topics, 2);
    // Without any ACL: refused per topic, not whole.
    let request = create_topics(&[("z", 1, 1)]);
    let (response, records) = send(
        &mut node,
        "mallory",
        false,
        7,
        ControllerRequest::CreateTopics(request),
    );
    let ControllerResponse::CreateTopics(r) = response else {
        panic!()
    };
    assert_eq!(r.topics[0].error_code, 29);
    assert!(records.is_empty());
}

#[test]
fn a_standby_answers_describe_acls_and_not_controller_for_writes() {
    let mut active = node();
    create(&mut active, "admin", &[(2, "t", 3, "User:a", "*", 3, 3)]);
    let mut standby = Controller::new(authz_config());
    standby.replay_committed(&active.log).unwrap();
    let mut ctx = active.ctx(3);
    ctx.principal = user("admin");
    let describe = DescribeAclsRequest::default()
        .with_resource_name_filter(None)
        .with_principal_filter(None)
        .with_host_filter(None)
        .with_resource_type_filter(1)
        .with_pattern_type_filter(1)
        .with_operation(1)
        .with_permission_type(1);
    let result = standby.handle(&ctx, &ControllerRequest::DescribeAcls(describe));
    let ControllerResponse::DescribeAcls(r) = result.response else {
        panic!()
    };
    assert_eq!(r.resources.len(), 1);
    let create = CreateAclsRequest::default()
        .with_creations(vec![creation((2, "u", 3, "User:a", "*", 3, 3))]);
    let result = standby.handle(&ctx, &ControllerRequest::CreateAcls(create));
    let ControllerResponse::CreateAcls(r) = result.response else {
        panic!()
    };
    assert_eq!(r.results[0].error_code, 41);
}

#[test]
fn without_an_authorizer_nothing_is_checked_and_acl_apis_are_disabled() {
    let mut node = TestNode::active(MV);
    let (results, records) = create(&mut node, "nobody", &[(2, "t", 3, "User:a", "*", 3, 3)]);
    assert_eq!(records, 0);
    assert_eq!(
        results,
        vec![(54, Some("No Authorizer is configured.".into()))]
    );
    let (response, _) = send(
        &mut node,
        "nobody",
        false,
        4,
        ControllerRequest::BrokerRegistration(registration(1, Uuid::from_u64_pair(1, 1))),
    );
    let ControllerResponse::BrokerRegistration(r) = response else {
        panic!()
    };
    assert_eq!(r.error_code, 0);
}

/// DescribeCluster's authorized operations as `AuthHelper.computeDescribeClusterResponse`
/// computes them: 0 without DESCRIBE on the cluster, else one bit per granted cluster operation;
/// the schema default when not asked for.
#[test]
fn describe_cluster_reports_the_principals_cluster_operations() {
    let mut node = node();
    let ask = |include: bool| {
        ControllerRequest::DescribeCluster(
            DescribeClusterRequest::default()
                .with_endpoint_type(2)
                .with_include_cluster_authorized_operations(include),
        )
    };
    let ops = |response: ControllerResponse| match response {
        ControllerResponse::DescribeCluster(r) => (r.error_code, r.cluster_authorized_operations),
        other => panic!("unexpected {other:?}"),
    };
    // Java sets every supported cluster operation's bit for a super user.
    let all: i32 = [5, 9, 10, 11, 12, 7, 8].iter().map(|c| 1 << c).sum();
    assert_eq!(
        ops(send(&mut node, "admin", false, 1, ask(true)).0),
        (0, all)
    );
    assert_eq!(
        ops(send(&mut node, "admin", false, 1, ask(false)).0),
        (0, i32::MIN)
    );
    // alice may ALTER only: DescribeCluster itself is refused (ALTER is what the controller
    // requires), and with DESCRIBE implied by ALTER she gets ALTER and DESCRIBE.
    assert_eq!(ops(send(&mut node, "alice", false, 1, ask(true)).0).0, 31);
    create(
        &mut node,
        "admin",
        &[(4, CLUSTER_NAME, 3, "User:alice", "*", 7, 3)],
    );
    assert_eq!(
        ops(send(&mut node, "alice", false, 1, ask(true)).0),
        (0, (1 << 7) | (1 << 8))
    );
}
