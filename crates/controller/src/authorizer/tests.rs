//! The matcher against `StandardAuthorizerTest`'s semantics: super users, the no-ACL default,
//! deny over allow, literal / prefixed / wildcard resources, wildcard principal and host,
//! operation implication (for ALLOW only), and filters.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use uuid::Uuid;

use super::*;

fn acl(
    resource_type: ResourceType,
    name: &str,
    pattern: PatternType,
    principal: &str,
    host: &str,
    operation: AclOperation,
    permission: AclPermissionType,
) -> StandardAcl {
    StandardAcl {
        resource_type,
        resource_name: name.to_owned(),
        pattern_type: pattern,
        principal: principal.to_owned(),
        host: host.to_owned(),
        operation,
        permission,
    }
}

fn image_with(acls: &[StandardAcl]) -> MetadataImage {
    let mut image = MetadataImage::empty();
    for (i, a) in acls.iter().enumerate() {
        image
            .other
            .put_acl(&a.to_record(Uuid::from_u64_pair(1, i as u64 + 1)));
    }
    image
}

fn user(name: &str) -> Principal {
    Principal {
        principal_type: "User".into(),
        name: name.into(),
        token_authenticated: false,
    }
}

fn allowed(
    config: &AuthorizerConfig,
    image: &MetadataImage,
    who: &str,
    host: &str,
    op: AclOperation,
    rt: ResourceType,
    name: &str,
) -> bool {
    authorize(
        config,
        image,
        &Action {
            principal: &user(who),
            host,
            operation: op,
            resource_type: rt,
            resource_name: name,
        },
    )
}

use AclOperation as Op;
use AclPermissionType::{Allow, Deny};
use PatternType::{Literal, Prefixed};
use ResourceType::{Cluster, Group, Topic};

#[test]
fn the_table_of_standard_authorizer_cases() {
    let acls = [
        // alice may read topics starting with "foo"; but not foobar; anyone may read "public".
        acl(Topic, "foo", Prefixed, "User:alice", "*", Op::Read, Allow),
        acl(Topic, "foobar", Literal, "User:alice", "*", Op::Read, Deny),
        acl(Topic, "public", Literal, "User:*", "*", Op::Read, Allow),
        // bob may do anything on topic "bob" but only from 10.0.0.1.
        acl(
            Topic,
            "bob",
            Literal,
            "User:bob",
            "10.0.0.1",
            Op::All,
            Allow,
        ),
        // carol may alter configs on every topic, and is denied deleting any.
        acl(
            Topic,
            "*",
            Literal,
            "User:carol",
            "*",
            Op::AlterConfigs,
            Allow,
        ),
        acl(Topic, "*", Literal, "User:carol", "*", Op::Delete, Deny),
        acl(Topic, "c", Prefixed, "User:carol", "*", Op::Delete, Allow),
        // dave is denied ALL on group g, and allowed READ there.
        acl(Group, "g", Literal, "User:dave", "*", Op::All, Deny),
        acl(Group, "g", Literal, "User:dave", "*", Op::Read, Allow),
        // erin has a DENY DESCRIBE and an ALLOW READ on topic e: READ implies DESCRIBE only
        // for ALLOW; the explicit DENY DESCRIBE still wins for DESCRIBE.
        acl(Topic, "e", Literal, "User:erin", "*", Op::Read, Allow),
        acl(Topic, "e", Literal, "User:erin", "*", Op::Describe, Deny),
        // a DENY READ does not deny DESCRIBE (no implication for DENY).
        acl(Topic, "f", Literal, "User:frank", "*", Op::Read, Deny),
        acl(Topic, "f", Literal, "User:frank", "*", Op::Describe, Allow),
        // the broker may do cluster actions.
        acl(
            Cluster,
            CLUSTER_NAME,
            Literal,
            "User:broker",
            "*",
            Op::ClusterAction,
            Allow,
        ),
    ];
    let image = image_with(&acls);
    let cfg = AuthorizerConfig::default();
    #[rustfmt::skip]
    let cases: &[(&str, &str, Op, ResourceType, &str, bool)] = &[
        // prefixed vs literal
        ("alice", "1.2.3.4", Op::Read, Topic, "foo", true),
        ("alice", "1.2.3.4", Op::Read, Topic, "foo1", true),
        ("alice", "1.2.3.4", Op::Read, Topic, "fo", false),
        ("alice", "1.2.3.4", Op::Read, Topic, "foobar", false), // deny beats allow
        ("alice", "1.2.3.4", Op::Read, Topic, "foobar2", true),  // the deny is literal
        ("alice", "1.2.3.4", Op::Write, Topic, "foo", false),
        ("alice", "1.2.3.4", Op::Describe, Topic, "foo", true),  // READ implies DESCRIBE
        // wildcard principal
        ("anyone", "1.2.3.4", Op::Read, Topic, "public", true),
        ("anyone", "1.2.3.4", Op::Write, Topic, "public", false),
        // host match
        ("bob", "10.0.0.1", Op::Write, Topic, "bob", true),
        ("bob", "10.0.0.2", Op::Write, Topic, "bob", false),
        // wildcard resource, deny beats prefixed allow
        ("carol", "h", Op::AlterConfigs, Topic, "anything", true),
        ("carol", "h", Op::DescribeConfigs, Topic, "anything", true), // implied
        ("carol", "h", Op::Delete, Topic, "cat", false),
        ("carol", "h", Op::AlterConfigs, Group, "anything", false),
        // ALL deny beats allow
        ("dave", "h", Op::Read, Group, "g", false),
        ("erin", "h", Op::Read, Topic, "e", true),
        ("erin", "h", Op::Describe, Topic, "e", false),
        ("frank", "h", Op::Read, Topic, "f", false),
        ("frank", "h", Op::Describe, Topic, "f", true),
        // resources with ACLs but none for the principal: denied; without ACLs: the default
        ("zoe", "h", Op::Read, Topic, "foo", false),
        ("zoe", "h", Op::Read, Topic, "untouched", false),
        ("broker", "h", Op::ClusterAction, Cluster, CLUSTER_NAME, true),
        ("broker", "h", Op::Alter, Cluster, CLUSTER_NAME, false),
        ("zoe", "h", Op::ClusterAction, Cluster, CLUSTER_NAME, false),
    ];
    for &(who, host, op, rt, name, expect) in cases {
        assert_eq!(
            allowed(&cfg, &image, who, host, op, rt, name),
            expect,
            "{who}@{host} {op} {rt}:{name}"
        );
    }
}

#[test]
fn allow_everyone_if_no_acl_found_only_where_a_resource_has_no_acls() {
    let image = image_with(&[acl(
        Topic,
        "foo",
        Literal,
        "User:alice",
        "*",
        Op::Read,
        Allow,
    )]);
    let open = AuthorizerConfig {
        allow_everyone_if_no_acl_found: true,
        ..Default::default()
    };
    assert!(allowed(&open, &image, "zoe", "h", Op::Read, Topic, "bar"));
    assert!(!allowed(&open, &image, "zoe", "h", Op::Read, Topic, "foo"));
    assert!(!allowed(
        &AuthorizerConfig::default(),
        &image,
        "zoe",
        "h",
        Op::Read,
        Topic,
        "bar"
    ));
    // A wildcard ACL counts as an ACL on every resource of its type.
    let image = image_with(&[acl(Topic, "*", Literal, "User:alice", "*", Op::Read, Allow)]);
    assert!(!allowed(&open, &image, "zoe", "h", Op::Read, Topic, "bar"));
}

#[test]
fn super_users_are_allowed_everything_even_against_a_deny() {
    let image = image_with(&[acl(
        Cluster,
        CLUSTER_NAME,
        Literal,
        "User:*",
        "*",
        Op::All,
        Deny,
    )]);
    let cfg = AuthorizerConfig {
        super_users: AuthorizerConfig::parse_super_users(" User:CN=broker,OU=it ;;User:admin")
            .unwrap(),
        ..Default::default()
    };
    assert_eq!(cfg.super_users.len(), 2);
    assert!(allowed(
        &cfg,
        &image,
        "CN=broker,OU=it",
        "h",
        Op::ClusterAction,
        Cluster,
        CLUSTER_NAME
    ));
    assert!(allowed(
        &cfg,
        &image,
        "admin",
        "h",
        Op::Alter,
        Cluster,
        CLUSTER_NAME
    ));
    assert!(!allowed(
        &cfg,
        &image,
        "CN=broker",
        "h",
        Op::ClusterAction,
        Cluster,
        CLUSTER_NAME
    ));
    // The type counts too.
    let group_admin = Principal {
        principal_type: "Group".into(),
        name: "admin".into(),
        token_authenticated: false,
    };
    let action = Action {
        principal: &group_admin,
        host: "h",
        operation: Op::Alter,
        resource_type: Cluster,
        resource_name: CLUSTER_NAME,
    };
    assert!(!authorize(&cfg, &image, &action));
    assert_eq!(
        AuthorizerConfig::parse_super_users("admin"),
        Err(AuthorizerConfigError::BadSuperUser("admin".into()))
    );
}

/// KIP-1276: a CIDR host applies to every address of its block, for ALLOW and DENY alike.
#[test]
fn cidr_hosts_match_their_block() {
    let image = image_with(&[
        acl(Topic, "t", Literal, "User:a", "10.0.0.0/8", Op::Read, Allow),
        acl(Topic, "u", Literal, "User:a", "*", Op::Read, Allow),
        acl(Topic, "u", Literal, "User:a", "10.0.0.0/8", Op::Read, Deny),
        acl(Topic, "v", Literal, "User:a", "fd00::/8", Op::Read, Allow),
    ]);
    let cfg = AuthorizerConfig::default();
    let read = |host: &str, topic: &str| allowed(&cfg, &image, "a", host, Op::Read, Topic, topic);
    assert!(read("10.1.2.3", "t"), "inside the allowed block");
    assert!(!read("192.168.0.1", "t"), "outside it");
    assert!(
        read("192.168.0.1", "u"),
        "the deny block does not hold this client"
    );
    assert!(
        !read("10.1.2.3", "u"),
        "a DENY block holding the client wins over ALLOW *"
    );
    assert!(read("fd00:0:0:0:0:0:0:7", "v"));
    assert!(!read("10.1.2.3", "v"), "an IPv6 block holds no IPv4 client");
}

#[test]
fn java_host_addresses() {
    assert_eq!(
        java_host_address(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))),
        "10.0.0.1"
    );
    assert_eq!(
        java_host_address(IpAddr::V6(Ipv6Addr::LOCALHOST)),
        "0:0:0:0:0:0:0:1"
    );
    assert_eq!(
        java_host_address(IpAddr::V6(Ipv4Addr::new(1, 2, 3, 4).to_ipv6_mapped())),
        "1.2.3.4"
    );
}

#[test]
fn filters_match_as_acl_binding_filter() {
    let lit = acl(Topic, "foo", Literal, "User:a", "*", Op::Read, Allow);
    let pre = acl(Topic, "fo", Prefixed, "User:a", "*", Op::Read, Allow);
    let wild = acl(Topic, "*", Literal, "User:b", "h", Op::Write, Deny);
    let any = AclFilter {
        resource_type: ResourceType::Any,
        resource_name: None,
        pattern_type: PatternType::Any,
        principal: None,
        host: None,
        operation: Op::Any,
        permission: AclPermissionType::Any,
    };
    assert!([&lit, &pre, &wild].iter().all(|a| any.matches(a)));
    let named = |name: &str, pattern| AclFilter {
        resource_name: Some(name.into()),
        pattern_type: pattern,
        ..any.clone()
    };
    // ANY: exact name, any pattern type.
    assert!(named("foo", PatternType::Any).matches(&lit));
    assert!(!named("foo", PatternType::Any).matches(&pre));
    // MATCH: every ACL that applies to the literal resource.
    let m = named("foo", PatternType::Match);
    assert!(m.matches(&lit) && m.matches(&pre) && m.matches(&wild));
    assert!(!named("bar", PatternType::Match).matches(&pre));
    // A pattern type restricts.
    assert!(!named("fo", Literal).matches(&pre));
    assert!(named("fo", Prefixed).matches(&pre));
    let entry = AclFilter {
        principal: Some("User:b".into()),
        permission: Deny,
        ..any.clone()
    };
    assert!(entry.matches(&wild) && !entry.matches(&lit));
    assert_eq!(
        AclFilter {
            operation: Op::Unknown,
            ..any.clone()
        }
        .unknown_part(),
        Some("Unknown entryFilter.")
    );
    assert_eq!(
        AclFilter {
            resource_type: ResourceType::Unknown,
            ..any
        }
        .unknown_part(),
        Some("Unknown patternFilter.")
    );
}
