//! ACL authorization as Kafka's `org.apache.kafka.metadata.authorizer.StandardAuthorizer`
//! (`StandardAuthorizerData.authorize`), over the ACLs of the committed metadata image
//! (AccessControlEntryRecords, see [`crate::image::other`]).
//!
//! An action (principal, client host, operation, resource type, literal resource name) is
//! decided as Java decides it:
//!
//! 1. a principal listed in `super.users` (`TYPE:NAME`, compared as text) is allowed anything;
//! 2. otherwise every ACL on the resource is considered: LITERAL ACLs with the exact name,
//!    LITERAL ACLs named `*`, and PREFIXED ACLs whose name starts the resource's name;
//! 3. of those, the ones for the principal (or `User:*`) and the host (or `*`) apply; a DENY
//!    for the operation (or `ALL`) wins over any ALLOW; an ALLOW for the operation (or `ALL`,
//!    or for an operation implying it: READ, WRITE, DELETE and ALTER imply DESCRIBE;
//!    ALTER_CONFIGS implies DESCRIBE_CONFIGS — implication only for ALLOW, as in
//!    `StandardAuthorizerData.findResult`) allows;
//! 4. nothing applies: denied if the resource has any ACL at all, else the
//!    `allow.everyone.if.no.acl.found` default (false: denied).
//!
//! Hosts are `*`, an exact address as Java prints it (`InetAddress.getHostAddress`), or (Kafka
//! 4.4-IV1, KIP-1276) a CIDR block holding the client's address ([`cidr`]), as
//! `StandardAuthorizerData.findResult` matches them.
//!
//! The ACLs are scanned linearly per action: controllers see few ACL-checked requests (admin
//! and broker RPCs), and the image keeps ACLs by id, not by resource, as `AclsImage` does.

use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;

use kraftwerk_records::metadata::AccessControlEntryRecord;

use crate::image::MetadataImage;
use crate::request::Principal;

/// `authorizer.class.name` of Kafka's KRaft authorizer, the only one kraftwerk implements.
pub const STANDARD_AUTHORIZER_CLASS: &str =
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

/// The name of the CLUSTER resource (`Resource.CLUSTER_NAME`).
pub const CLUSTER_NAME: &str = "kafka-cluster";

/// The wildcard resource name, principal name and host (`ResourcePattern.WILDCARD_RESOURCE`,
/// `AclEntry.WILDCARD_HOST`).
pub const WILDCARD: &str = "*";

macro_rules! code_enum {
    ($(#[doc = $doc:literal])* $name:ident { $($variant:ident = $code:literal => $java:literal,)* }) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $(
                #[doc = concat!("`", $java, "` (", stringify!($code), ").")]
                $variant,
            )*
        }

        impl $name {
            /// The value for a wire code; codes Kafka does not know are `Unknown`
            /// (`fromCode`).
            pub fn from_code(code: i8) -> Self {
                match code {
                    $( $code => Self::$variant, )*
                    _ => Self::Unknown,
                }
            }

            /// The wire code.
            pub fn code(self) -> i8 {
                match self { $( Self::$variant => $code, )* }
            }

            /// Java's name of the constant (`toString`), as error messages print it.
            pub fn java_name(self) -> &'static str {
                match self { $( Self::$variant => $java, )* }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.java_name())
            }
        }
    };
}

code_enum! {
    /// `org.apache.kafka.common.acl.AclOperation`.
    AclOperation {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        All = 2 => "ALL",
        Read = 3 => "READ",
        Write = 4 => "WRITE",
        Create = 5 => "CREATE",
        Delete = 6 => "DELETE",
        Alter = 7 => "ALTER",
        Describe = 8 => "DESCRIBE",
        ClusterAction = 9 => "CLUSTER_ACTION",
        DescribeConfigs = 10 => "DESCRIBE_CONFIGS",
        AlterConfigs = 11 => "ALTER_CONFIGS",
        IdempotentWrite = 12 => "IDEMPOTENT_WRITE",
        CreateTokens = 13 => "CREATE_TOKENS",
        DescribeTokens = 14 => "DESCRIBE_TOKENS",
        TwoPhaseCommit = 15 => "TWO_PHASE_COMMIT",
    }
}

code_enum! {
    /// `org.apache.kafka.common.resource.ResourceType`.
    ResourceType {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        Topic = 2 => "TOPIC",
        Group = 3 => "GROUP",
        Cluster = 4 => "CLUSTER",
        TransactionalId = 5 => "TRANSACTIONAL_ID",
        DelegationToken = 6 => "DELEGATION_TOKEN",
        User = 7 => "USER",
    }
}

code_enum! {
    /// `org.apache.kafka.common.resource.PatternType`.
    PatternType {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        Match = 2 => "MATCH",
        Literal = 3 => "LITERAL",
        Prefixed = 4 => "PREFIXED",
    }
}

code_enum! {
    /// `org.apache.kafka.common.acl.AclPermissionType`.
    AclPermissionType {
        Unknown = 0 => "UNKNOWN",
        Any = 1 => "ANY",
        Deny = 2 => "DENY",
        Allow = 3 => "ALLOW",
    }
}

/// One ACL as `StandardAcl` holds it: a resource pattern and an access control entry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StandardAcl {
    /// Resource type.
    pub resource_type: ResourceType,
    /// Resource name (`*` with LITERAL: every resource of the type).
    pub resource_name: String,
    /// LITERAL or PREFIXED.
    pub pattern_type: PatternType,
    /// `TYPE:NAME`; `User:*` matches every principal.
    pub principal: String,
    /// `*` or a host address.
    pub host: String,
    /// Operation.
    pub operation: AclOperation,
    /// ALLOW or DENY.
    pub permission: AclPermissionType,
}

impl StandardAcl {
    /// The ACL of a record (`StandardAcl.fromRecord`).
    pub fn from_record(record: &AccessControlEntryRecord) -> Self {
        StandardAcl {
            resource_type: ResourceType::from_code(record.resource_type),
            resource_name: record.resource_name.clone(),
            pattern_type: PatternType::from_code(record.pattern_type),
            principal: record.principal.clone(),
            host: record.host.clone(),
            operation: AclOperation::from_code(record.operation),
            permission: AclPermissionType::from_code(record.permission_type),
        }
    }

    /// The record of this ACL under `id` (`StandardAclWithId.toRecord`).
    pub fn to_record(&self, id: uuid::Uuid) -> AccessControlEntryRecord {
        AccessControlEntryRecord {
            id,
            resource_type: self.resource_type.code(),
            resource_name: self.resource_name.clone(),
            pattern_type: self.pattern_type.code(),
            principal: self.principal.clone(),
            host: self.host.clone(),
            operation: self.operation.code(),
            permission_type: self.permission.code(),
            ..Default::default()
        }
    }

    /// Whether the ACL's pattern covers the literal resource `name` of its type.
    fn covers(&self, name: &str) -> bool {
        match self.pattern_type {
            PatternType::Literal => self.resource_name == name || self.resource_name == WILDCARD,
            PatternType::Prefixed => name.starts_with(self.resource_name.as_str()),
            // Never written by a controller (AclControlManager accepts LITERAL and PREFIXED).
            _ => false,
        }
    }

    /// Whether the ACL is for `principal` (or for `User:*`), compared as `KafkaPrincipal`s:
    /// type and name, split at the first colon (`SecurityUtils.parseKafkaPrincipal`).
    fn applies_to_principal(&self, principal: &Principal) -> bool {
        match self.principal.split_once(':') {
            Some(("User", WILDCARD)) => true,
            Some((principal_type, name)) => {
                principal_type == principal.principal_type && name == principal.name
            }
            None => false,
        }
    }

    /// Whether the ACL applies to a client at `host`: `*`, the same address, or a CIDR block
    /// that holds it.
    fn applies_to_host(&self, host: &str) -> bool {
        self.host == WILDCARD || self.host == host || cidr::in_range(host, &self.host)
    }

    /// `StandardAuthorizerData.findResult`: Some(allowed?) if the ACL decides `operation` for
    /// this principal and host, None if it does not apply.
    fn decides(&self, principal: &Principal, host: &str, operation: AclOperation) -> Option<bool> {
        if !self.applies_to_principal(principal) || !self.applies_to_host(host) {
            return None;
        }
        let allow = self.permission == AclPermissionType::Allow;
        if self.operation != AclOperation::All {
            let matches = if allow {
                match operation {
                    AclOperation::Describe => matches!(
                        self.operation,
                        AclOperation::Describe
                            | AclOperation::Read
                            | AclOperation::Write
                            | AclOperation::Delete
                            | AclOperation::Alter
                    ),
                    AclOperation::DescribeConfigs => matches!(
                        self.operation,
                        AclOperation::DescribeConfigs | AclOperation::AlterConfigs
                    ),
                    op => self.operation == op,
                }
            } else {
                self.operation == operation
            };
            if !matches {
                return None;
            }
        }
        match self.permission {
            AclPermissionType::Allow => Some(true),
            AclPermissionType::Deny => Some(false),
            _ => None,
        }
    }
}

/// The authorizer's configuration (`StandardAuthorizer.configure`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthorizerConfig {
    /// `super.users`: principals (`TYPE:NAME`) allowed everything.
    pub super_users: BTreeSet<String>,
    /// `allow.everyone.if.no.acl.found` (false): the answer for a resource without ACLs.
    pub allow_everyone_if_no_acl_found: bool,
}

/// Why an authorizer configuration is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthorizerConfigError {
    /// A `super.users` entry is not `TYPE:NAME` (`SecurityUtils.parseKafkaPrincipal` throws).
    #[error("super.users: `{0}` is not a principal of the form TYPE:NAME (e.g. User:admin)")]
    BadSuperUser(String),
}

impl AuthorizerConfig {
    /// Parses `super.users` as `StandardAuthorizer.getConfiguredSuperUsers` does: entries
    /// separated by `;`, trimmed, empty ones skipped, each a `TYPE:NAME` principal (names may
    /// hold commas and `=`, e.g. `User:CN=broker,OU=it`).
    pub fn parse_super_users(value: &str) -> Result<BTreeSet<String>, AuthorizerConfigError> {
        let mut users = BTreeSet::new();
        for entry in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
            if !entry.contains(':') {
                return Err(AuthorizerConfigError::BadSuperUser(entry.to_owned()));
            }
            users.insert(entry.to_owned());
        }
        Ok(users)
    }

    /// Whether `principal` is a super user (compared as `KafkaPrincipal.toString`).
    pub fn is_super_user(&self, principal: &Principal) -> bool {
        self.super_users
            .contains(&format!("{}:{}", principal.principal_type, principal.name))
    }
}

/// One authorization question (`Action` plus the request context's principal and address).
#[derive(Clone, Copy, Debug)]
pub struct Action<'a> {
    /// Who asks.
    pub principal: &'a Principal,
    /// The client's address as Java prints it ([`java_host_address`]).
    pub host: &'a str,
    /// What it wants to do.
    pub operation: AclOperation,
    /// On which kind of resource.
    pub resource_type: ResourceType,
    /// The resource's (literal) name.
    pub resource_name: &'a str,
}

/// `StandardAuthorizerData.authorize` over the ACLs of `image`: true if allowed.
pub fn authorize(config: &AuthorizerConfig, image: &MetadataImage, action: &Action<'_>) -> bool {
    if config.is_super_user(action.principal) {
        return true;
    }
    let mut has_resource_acls = false;
    let mut allowed = false;
    for record in image.other.acls.values() {
        if record.resource_type != action.resource_type.code() {
            continue;
        }
        let acl = StandardAcl::from_record(record);
        if !acl.covers(action.resource_name) {
            continue;
        }
        has_resource_acls = true;
        match acl.decides(action.principal, action.host, action.operation) {
            Some(false) => return false,
            Some(true) => allowed = true,
            None => {}
        }
    }
    allowed || (!has_resource_acls && config.allow_everyone_if_no_acl_found)
}

/// An address as Java's `InetAddress.getHostAddress` prints it, the form ACL hosts are written
/// in: dotted IPv4 (also for an IPv4-mapped IPv6 address, which Java turns into an
/// `Inet4Address`), IPv6 as eight hex groups without leading zeros and without `::`
/// compression (`0:0:0:0:0:0:0:1`).
pub fn java_host_address(address: IpAddr) -> String {
    match address {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6
                .segments()
                .iter()
                .map(|s| format!("{s:x}"))
                .collect::<Vec<_>>()
                .join(":"),
        },
    }
}

/// `ResourcePatternFilter` plus `AccessControlEntryFilter` (an `AclBindingFilter`), as
/// DescribeAcls and DeleteAcls carry them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AclFilter {
    /// ANY matches every type.
    pub resource_type: ResourceType,
    /// None matches every name.
    pub resource_name: Option<String>,
    /// ANY: every pattern type with the exact name; MATCH: the ACLs that would apply to the
    /// literal resource `resource_name`; LITERAL / PREFIXED: that pattern type only.
    pub pattern_type: PatternType,
    /// None matches every principal.
    pub principal: Option<String>,
    /// None matches every host.
    pub host: Option<String>,
    /// ANY matches every operation.
    pub operation: AclOperation,
    /// ANY matches both.
    pub permission: AclPermissionType,
}

impl AclFilter {
    /// `AclBindingFilter.isUnknown`: a filter with an UNKNOWN part (an unknown code).
    pub fn unknown_part(&self) -> Option<&'static str> {
        if self.resource_type == ResourceType::Unknown || self.pattern_type == PatternType::Unknown
        {
            Some("Unknown patternFilter.")
        } else if self.operation == AclOperation::Unknown
            || self.permission == AclPermissionType::Unknown
        {
            Some("Unknown entryFilter.")
        } else {
            None
        }
    }

    /// `AclBindingFilter.matches(binding)`.
    pub fn matches(&self, acl: &StandardAcl) -> bool {
        self.pattern_matches(acl) && self.entry_matches(acl)
    }

    /// `ResourcePatternFilter.matches`.
    fn pattern_matches(&self, acl: &StandardAcl) -> bool {
        if self.resource_type != ResourceType::Any && self.resource_type != acl.resource_type {
            return false;
        }
        if !matches!(self.pattern_type, PatternType::Any | PatternType::Match)
            && self.pattern_type != acl.pattern_type
        {
            return false;
        }
        let Some(name) = &self.resource_name else {
            return true;
        };
        if self.pattern_type == PatternType::Any || self.pattern_type == acl.pattern_type {
            return *name == acl.resource_name;
        }
        // MATCH: the ACL would apply to the literal resource `name`.
        acl.covers(name)
    }

    /// `AccessControlEntryFilter.matches`.
    fn entry_matches(&self, acl: &StandardAcl) -> bool {
        self.principal.as_ref().is_none_or(|p| *p == acl.principal)
            && self.host.as_ref().is_none_or(|h| *h == acl.host)
            && (self.operation == AclOperation::Any || self.operation == acl.operation)
            && (self.permission == AclPermissionType::Any || self.permission == acl.permission)
    }
}

pub mod cidr;

#[cfg(test)]
mod tests;
