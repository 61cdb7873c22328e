//! CIDR host patterns in ACLs (KIP-1276, metadata.version 4.4-IV1): an ACL whose host is
//! `10.0.0.0/8` or `fd00::/8` applies to every client address in that block. Kafka checks them
//! with `org.apache.kafka.server.authorizer.internals.CidrUtils` (commons-net's `SubnetUtils`
//! for IPv4 with the inclusive host count, `SubnetUtils6` for IPv6); this follows it:
//!
//! - a pattern is IPv6 when it contains `:`, else IPv4 (`a.b.c.d/n`, octets of 1–3 digits up to
//!   255, leading zeros allowed as commons-net allows them, `n` in 0..=32; IPv6 `n` in 0..=128);
//! - an address of the other family, or one that does not parse, is not in range, and neither is
//!   `0.0.0.0` (commons-net never counts address 0 in a range);
//! - every address from the network to the broadcast address is in range (inclusive count).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A parsed CIDR block: the network bits and the prefix length (bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cidr {
    /// `a.b.c.d/n`, `n` in 0..=32.
    V4(u32, u8),
    /// `x:…/n`, `n` in 0..=128.
    V6(u128, u8),
}

impl Cidr {
    /// Parses `pattern` as `CidrUtils.validate` does; the error text says what is wrong.
    pub fn parse(pattern: &str) -> Result<Cidr, String> {
        let (address, prefix) = pattern
            .split_once('/')
            .ok_or_else(|| format!("Could not parse [{pattern}]"))?;
        let digits = |max: u8| -> Result<u8, String> {
            let n = (!prefix.is_empty()
                && prefix.len() <= 3
                && prefix.bytes().all(|b| b.is_ascii_digit()))
            .then(|| prefix.parse::<u16>().ok())
            .flatten()
            .ok_or_else(|| format!("Could not parse [{pattern}]"))?;
            if n > u16::from(max) {
                return Err(format!("Value [{n}] not in range [0,{max}]"));
            }
            Ok(n as u8)
        };
        if pattern.contains(':') {
            let ip: Ipv6Addr = address
                .parse()
                .map_err(|_| format!("Could not parse [{pattern}]"))?;
            Ok(Cidr::V6(u128::from(ip), digits(128)?))
        } else {
            let ip = ipv4_commons(address).ok_or_else(|| format!("Could not parse [{pattern}]"))?;
            if prefix.len() > 2 {
                return Err(format!("Could not parse [{pattern}]"));
            }
            Ok(Cidr::V4(ip, digits(32)?))
        }
    }

    /// Whether `host` (an address as Java's `InetAddress.getHostAddress` prints it) is in the
    /// block.
    pub fn contains(&self, host: &str) -> bool {
        match *self {
            Cidr::V4(network, bits) => match ipv4_commons(host) {
                Some(0) | None => false,
                Some(address) => masked_v4(address, bits) == masked_v4(network, bits),
            },
            Cidr::V6(network, bits) => {
                // Java prints a scoped address with `%scope`; the block has no scope.
                let host = host.split('%').next().unwrap_or(host);
                match host.parse::<IpAddr>() {
                    Ok(IpAddr::V6(ip)) => {
                        masked_v6(u128::from(ip), bits) == masked_v6(network, bits)
                    }
                    _ => false,
                }
            }
        }
    }
}

/// `CidrUtils.isInRange(host, pattern)`: false unless `pattern` is a valid CIDR block that
/// holds `host`.
pub fn in_range(host: &str, pattern: &str) -> bool {
    pattern.contains('/') && Cidr::parse(pattern).is_ok_and(|c| c.contains(host))
}

/// A dotted quad as commons-net's `SubnetUtils` reads one: four groups of 1–3 digits, each
/// at most 255 (leading zeros allowed).
fn ipv4_commons(text: &str) -> Option<u32> {
    let mut octets = [0u8; 4];
    let mut parts = text.split('.');
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *octet = u8::try_from(part.parse::<u16>().ok()?).ok()?;
    }
    if parts.next().is_some() {
        return None;
    }
    Some(u32::from(Ipv4Addr::from(octets)))
}

fn masked_v4(address: u32, bits: u8) -> u32 {
    if bits == 0 {
        0
    } else {
        address & (u32::MAX << (32 - u32::from(bits)))
    }
}

fn masked_v6(address: u128, bits: u8) -> u128 {
    if bits == 0 {
        0
    } else {
        address & (u128::MAX << (128 - u32::from(bits)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_blocks_hold_network_to_broadcast() {
        assert!(in_range("10.1.2.3", "10.0.0.0/8"));
        assert!(
            in_range("10.0.0.0", "10.0.0.0/8"),
            "network address, inclusive count"
        );
        assert!(
            in_range("10.255.255.255", "10.0.0.0/8"),
            "broadcast address"
        );
        assert!(!in_range("11.0.0.0", "10.0.0.0/8"));
        assert!(in_range("192.168.1.7", "192.168.1.7/32"));
        assert!(!in_range("192.168.1.8", "192.168.1.7/32"));
        assert!(in_range("192.168.1.6", "192.168.1.7/31"));
        // Host bits set in the pattern are ignored, as SubnetUtils masks them.
        assert!(in_range("10.9.9.9", "10.1.2.3/8"));
        assert!(in_range("1.2.3.4", "0.0.0.0/0"));
        assert!(
            !in_range("0.0.0.0", "0.0.0.0/0"),
            "address 0 is never in range"
        );
        assert!(
            in_range("10.0.0.1", "010.0.0.0/8"),
            "leading zeros as commons-net reads them"
        );
    }

    #[test]
    fn ipv6_blocks_and_families() {
        assert!(in_range("fd00:0:0:0:0:0:0:1", "fd00::/8"));
        assert!(in_range("0:0:0:0:0:0:0:1", "::1/128"));
        assert!(in_range("fe80:0:0:0:0:0:0:1%eth0", "fe80::/10"));
        assert!(!in_range("fe00:0:0:0:0:0:0:1", "fd00::/8"));
        assert!(
            !in_range("10.0.0.1", "::/0"),
            "an IPv4 client is not in an IPv6 block"
        );
        assert!(
            !in_range("0:0:0:0:0:0:0:1", "0.0.0.0/0"),
            "nor an IPv6 client in an IPv4 one"
        );
    }

    #[test]
    fn invalid_patterns_match_nothing_and_say_why() {
        for bad in [
            "10.0.0.0/33",
            "10.0.0/8",
            "10.0.0.256/8",
            "10.0.0.0/",
            "10.0.0.0/x",
            "fd00::/129",
            "zz::/8",
            "/8",
        ] {
            assert!(Cidr::parse(bad).is_err(), "{bad}");
            assert!(!in_range("10.0.0.1", bad), "{bad}");
        }
        assert_eq!(
            Cidr::parse("10.0.0.0/33").unwrap_err(),
            "Value [33] not in range [0,32]"
        );
        assert!(
            !in_range("10.0.0.1", "10.0.0.1"),
            "no slash: not a CIDR pattern"
        );
    }
}
