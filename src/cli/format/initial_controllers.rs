//! `--initial-controllers id@host:port:directoryId,...` and `--standalone` of
//! `kraftwerk format`: the initial voter set of a dynamic quorum (KIP-853), parsed with the
//! rules and messages of `org.apache.kafka.raft.DynamicVoters.parse` / `DynamicVoter.parse`,
//! turned into the VotersRecord voters Java's `DynamicVoters.toVoterSet` gives.

use std::net::Ipv6Addr;

use kraftwerk_log::bootstrap::quorum::{
    java_voter_set_order, BootstrapVoter, KRaftVersionRange, QuorumRecordsError, VoterEndpoint,
};
use kraftwerk_protocol::kafka_uuid::kafka_uuid_from_string;
use uuid::Uuid;

/// One `id@host:port:directoryId` entry (`DynamicVoter`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicVoter {
    /// `node.id`, ≥ 0.
    pub node_id: i32,
    /// Host as written (brackets of an IPv6 literal removed).
    pub host: String,
    /// Port, 0..=65535.
    pub port: u16,
    /// The voter's metadata log directory id.
    pub directory_id: Uuid,
}

/// `DynamicVoters.parse`: comma-separated entries (empty ones skipped), each trimmed and
/// parsed by [`parse_dynamic_voter`]; at least one; node ids unique. Sorted by node id (Java
/// keeps them in a `TreeMap`).
///
/// Errors: the `IllegalArgumentException` message Java gives.
pub fn parse_dynamic_voters(input: &str) -> Result<Vec<DynamicVoter>, String> {
    let mut voters: Vec<DynamicVoter> = Vec::new();
    for entry in input.trim().split(',').filter(|e| !e.is_empty()) {
        let voter = parse_dynamic_voter(entry)?;
        if voters.iter().any(|v| v.node_id == voter.node_id) {
            return Err(format!(
                "Node id {} was specified more than once.",
                voter.node_id
            ));
        }
        voters.push(voter);
    }
    if voters.is_empty() {
        return Err("No voters given.".to_owned());
    }
    voters.sort_by_key(|v| v.node_id);
    Ok(voters)
}

/// Java's `Integer.parseInt`: optional sign, then ASCII digits, in range.
fn java_parse_int(text: &str) -> Option<i32> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `DynamicVoter.parse`: `id@host:port:directoryId`, the host in brackets when it holds
/// colons (the host is otherwise not checked), with Java's messages.
pub fn parse_dynamic_voter(input: &str) -> Result<DynamicVoter, String> {
    let input = input.trim();
    let at = input
        .find('@')
        .ok_or("No @ found in dynamic voter string.")?;
    if at == 0 {
        return Err("Invalid @ at beginning of dynamic voter string.".to_owned());
    }
    let node_id =
        java_parse_int(&input[..at]).ok_or("Failed to parse node id in dynamic voter string.")?;
    if node_id < 0 {
        return Err(format!(
            "Invalid negative node id {node_id} in dynamic voter string."
        ));
    }
    let rest = &input[at + 1..];
    if rest.is_empty() {
        return Err("No hostname found after node id.".to_owned());
    }
    let (host, rest) = if let Some(bracketed) = rest.strip_prefix('[') {
        let end = bracketed
            .find(']')
            .ok_or("Hostname began with left bracket, but no right bracket was found.")?;
        (&bracketed[..end], &bracketed[end + 1..])
    } else {
        let end = rest
            .find(':')
            .ok_or("No colon following hostname could be found.")?;
        (&rest[..end], &rest[end..])
    };
    let rest = rest
        .strip_prefix(':')
        .ok_or("Port section must start with a colon.")?;
    let end = rest
        .find(':')
        .ok_or("No colon following port could be found.")?;
    let port =
        java_parse_int(&rest[..end]).ok_or("Failed to parse port in dynamic voter string.")?;
    let port =
        u16::try_from(port).map_err(|_| format!("Invalid port {port} in dynamic voter string."))?;
    let directory_id = kafka_uuid_from_string(&rest[end + 1..])
        .map_err(|_| "Failed to parse directory ID in dynamic voter string.".to_owned())?;
    Ok(DynamicVoter {
        node_id,
        host: host.to_owned(),
        port,
        directory_id,
    })
}

/// Java 17's `IPAddressUtil.textToNumericFormatV4`: 1 to 4 dot-separated decimal parts of
/// ASCII digits (at most 15 characters), the last part filling the remaining bytes, so `127.1`
/// is 127.0.0.1 and `010.0.0.1` is 10.0.0.1.
fn java_ipv4_literal(text: &str) -> Option<[u8; 4]> {
    if text.is_empty() || text.len() > 15 {
        return None;
    }
    let mut bytes = [0u8; 4];
    let mut parts = 0usize;
    let mut value: u64 = 0;
    let mut new_part = true;
    for c in text.chars() {
        if c == '.' {
            if new_part || value > 0xff || parts == 3 {
                return None;
            }
            bytes[parts] = value as u8;
            parts += 1;
            value = 0;
            new_part = true;
        } else {
            value = value * 10 + u64::from(c.to_digit(10).filter(|_| c.is_ascii_digit())?);
            new_part = false;
        }
    }
    if new_part || value >= 1u64 << ((4 - parts) * 8) {
        return None;
    }
    for (i, byte) in bytes.iter_mut().enumerate().skip(parts) {
        *byte = (value >> ((3 - i) * 8)) as u8;
    }
    Some(bytes)
}

/// The host text Java writes into the VotersRecord for `host`:
/// `new InetSocketAddress(host, port).getHostString()` on Java 17. An empty host is the
/// loopback address, `localhost`; an IPv4 literal (in any form Java accepts) is written as a
/// dotted quad; an IPv6 literal without a zone as eight lower-case hex groups
/// (`0:0:0:0:0:0:0:1`), or as a dotted quad when IPv4-mapped; anything else (a host name, a
/// literal with a `%zone`) as given, since Java keeps the name it resolved.
pub fn java_host_string(host: &str) -> String {
    if host.is_empty() {
        return "localhost".to_owned();
    }
    let dotted = |b: [u8; 4]| format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3]);
    if let Some(v4) = java_ipv4_literal(host) {
        return dotted(v4);
    }
    let literal_start = host.starts_with(':') || host.starts_with(|c: char| c.is_ascii_hexdigit());
    if literal_start && !host.contains('%') {
        if let Ok(v6) = host.parse::<Ipv6Addr>() {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return dotted(v4.octets());
            }
            let groups: Vec<String> = v6.segments().iter().map(|g| format!("{g:x}")).collect();
            return groups.join(":");
        }
    }
    host.to_owned()
}

/// The voters of the VotersRecord Java's `format` writes for `voters`
/// (`DynamicVoters.toVoterSet(controllerListenerName).toVotersRecord(0)`): one endpoint each,
/// on the upper-cased `controller_listener_name`, with [`java_host_string`]'s host; supported
/// kraft.version `[0, 1]`; in Java's `HashMap` order ([`java_voter_set_order`]).
///
/// Errors: [`QuorumRecordsError::TreeifiedBucket`] for a set whose Java order is not
/// reproduced.
pub fn bootstrap_voters(
    voters: &[DynamicVoter],
    controller_listener_name: &str,
) -> Result<Vec<BootstrapVoter>, QuorumRecordsError> {
    let mut ids: Vec<i32> = voters.iter().map(|v| v.node_id).collect();
    ids.sort_unstable();
    let order = java_voter_set_order(&ids)?;
    Ok(order
        .iter()
        .filter_map(|id| voters.iter().find(|v| v.node_id == *id))
        .map(|v| BootstrapVoter {
            id: v.node_id,
            directory_id: v.directory_id,
            endpoints: vec![VoterEndpoint {
                listener_name: controller_listener_name.to_uppercase(),
                host: java_host_string(&v.host),
                port: v.port,
            }],
            kraft_version: KRaftVersionRange::INITIAL_CONTROLLER,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIR: &str = "xkFWfagsSa2W4IuY_DK9zQ";

    #[test]
    fn parses_like_dynamic_voters() {
        let voters = parse_dynamic_voters(&format!(
            " 3@h3:9095:{DIR},,1@[::1]:9093:{DIR}, 2@:+9094:{DIR}"
        ))
        .unwrap();
        assert_eq!(
            voters.iter().map(|v| v.node_id).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert_eq!((voters[0].host.as_str(), voters[0].port), ("::1", 9093));
        assert_eq!((voters[1].host.as_str(), voters[1].port), ("", 9094));
        assert_eq!(voters[2].directory_id, kafka_uuid_from_string(DIR).unwrap());
    }

    #[test]
    fn refuses_with_javas_messages() {
        // Each message is the one Kafka 4.1.2's and 4.4.0's kafka-storage print.
        let cases = [
            (String::new(), "No voters given."),
            (",".to_owned(), "No voters given."),
            ("x".to_owned(), "No @ found in dynamic voter string."),
            (
                format!("@h:1:{DIR}"),
                "Invalid @ at beginning of dynamic voter string.",
            ),
            (
                format!("a@h:1:{DIR}"),
                "Failed to parse node id in dynamic voter string.",
            ),
            (
                format!("-1@h:1:{DIR}"),
                "Invalid negative node id -1 in dynamic voter string.",
            ),
            ("1@".to_owned(), "No hostname found after node id."),
            (
                "1@h".to_owned(),
                "No colon following hostname could be found.",
            ),
            (
                format!("1@[h:1:{DIR}"),
                "Hostname began with left bracket, but no right bracket was found.",
            ),
            (
                format!("1@[h]1:{DIR}"),
                "Port section must start with a colon.",
            ),
            (
                "1@h:1".to_owned(),
                "No colon following port could be found.",
            ),
            (
                format!("1@h:x:{DIR}"),
                "Failed to parse port in dynamic voter string.",
            ),
            (
                format!("1@h:70000:{DIR}"),
                "Invalid port 70000 in dynamic voter string.",
            ),
            (
                "1@h:1:bad".to_owned(),
                "Failed to parse directory ID in dynamic voter string.",
            ),
            (
                format!("1@h:1:{DIR},1@g:2:{DIR}"),
                "Node id 1 was specified more than once.",
            ),
            // --standalone with an IPv6 controller listener: StorageTool builds
            // `1@::1:9093:<id>` without brackets, which DynamicVoter.parse cannot read.
            (
                format!("1@::1:9093:{DIR}"),
                "Failed to parse port in dynamic voter string.",
            ),
        ];
        for (input, message) in cases {
            assert_eq!(
                parse_dynamic_voters(&input).unwrap_err(),
                message,
                "{input}"
            );
        }
    }

    #[test]
    fn hosts_are_written_as_java_17_writes_them() {
        // Observed with `new InetSocketAddress(h, 1).getHostString()` on OpenJDK 17.0.15.
        for (host, java) in [
            ("", "localhost"),
            ("h1", "h1"),
            ("LOCALHOST", "LOCALHOST"),
            ("127.0.0.1", "127.0.0.1"),
            ("127.1", "127.0.0.1"),
            ("1", "0.0.0.1"),
            ("010.0.0.1", "10.0.0.1"),
            ("4294967295", "255.255.255.255"),
            ("0x7f.0.0.1", "0x7f.0.0.1"),
            ("1.2.3.4.5", "1.2.3.4.5"),
            ("256.1.1.1", "256.1.1.1"),
            ("::1", "0:0:0:0:0:0:0:1"),
            ("::ffff:1.2.3.4", "1.2.3.4"),
            ("::1.2.3.4", "0:0:0:0:0:0:102:304"),
            ("FE80::ABCD", "fe80:0:0:0:0:0:0:abcd"),
            ("fe80::1%lo", "fe80::1%lo"),
            ("1::", "1:0:0:0:0:0:0:0"),
            ("cafe", "cafe"),
            (":::", ":::"),
            ("1:2", "1:2"),
            ("\u{663}.1.1.1", "\u{663}.1.1.1"),
        ] {
            assert_eq!(java_host_string(host), java, "{host:?}");
        }
    }

    #[test]
    fn voters_record_voters_follow_java_order_and_endpoint() {
        let voters =
            parse_dynamic_voters(&format!("2@a:1:{DIR},9@[::1]:2:{DIR},1@:3:{DIR}")).unwrap();
        let out = bootstrap_voters(&voters, "controller").unwrap();
        assert_eq!(out.iter().map(|v| v.id).collect::<Vec<_>>(), [1, 9, 2]);
        assert_eq!(
            out[1].endpoints,
            [VoterEndpoint {
                listener_name: "CONTROLLER".into(),
                host: "0:0:0:0:0:0:0:1".into(),
                port: 2
            }]
        );
        assert_eq!(out[0].endpoints[0].host, "localhost");
        assert_eq!(out[2].kraft_version, KRaftVersionRange { min: 0, max: 1 });
    }
}
