//! IPv4 addresses, prefixes and ranges as admins write them in the spec
//! (`10.40.0.101/20`, `10.40.0.200-10.40.0.250`).
//!
//! Only IPv4 is understood: the storage networks the reference designs use are IPv4,
//! and a silent half-support of IPv6 would be worse than a clear refusal.

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An address with its prefix length, e.g. `10.40.0.101/20` (interface address) or
/// `10.40.0.0/20` (network).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Cidr {
    /// The address as written (host bits kept).
    pub addr: Ipv4Addr,
    /// Prefix length, 0..=32.
    pub prefix: u8,
}

impl Ipv4Cidr {
    /// The network mask.
    pub fn mask(self) -> u32 {
        if self.prefix == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(self.prefix))
        }
    }

    /// The network address (host bits cleared).
    pub fn network(self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) & self.mask())
    }

    /// Whether `ip` lies inside this network.
    pub fn contains(self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & self.mask() == u32::from(self.addr) & self.mask()
    }

    /// Whether the address is the network or broadcast address of its own prefix,
    /// which cannot be given to an interface (except on /31 and /32).
    pub fn is_network_or_broadcast(self) -> bool {
        if self.prefix >= 31 {
            return false;
        }
        let a = u32::from(self.addr);
        let host = a & !self.mask();
        host == 0 || host == !self.mask()
    }
}

impl FromStr for Ipv4Cidr {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (a, p) = s.split_once('/').ok_or_else(|| {
            format!("{s:?} is not an IPv4 address with prefix (expected e.g. 10.40.0.101/20)")
        })?;
        let addr: Ipv4Addr = a
            .parse()
            .map_err(|_| format!("{a:?} in {s:?} is not an IPv4 address"))?;
        let prefix: u8 = p
            .parse()
            .ok()
            .filter(|p| *p <= 32)
            .ok_or_else(|| format!("prefix length {p:?} in {s:?} must be 0..=32"))?;
        Ok(Ipv4Cidr { addr, prefix })
    }
}

impl fmt::Display for Ipv4Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

impl Serialize for Ipv4Cidr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Ipv4Cidr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// An inclusive range of addresses, `10.40.0.200-10.40.0.250`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Range {
    /// First address.
    pub start: Ipv4Addr,
    /// Last address (inclusive).
    pub end: Ipv4Addr,
}

impl Ipv4Range {
    /// Whether `ip` lies inside the range.
    pub fn contains(self, ip: Ipv4Addr) -> bool {
        (u32::from(self.start)..=u32::from(self.end)).contains(&u32::from(ip))
    }

    /// Number of addresses in the range.
    pub fn len(self) -> u64 {
        u64::from(u32::from(self.end) - u32::from(self.start)) + 1
    }

    /// Never true: a parsed range holds at least one address. Present for the
    /// `len`/`is_empty` convention.
    pub fn is_empty(self) -> bool {
        false
    }
}

impl FromStr for Ipv4Range {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (a, b) = s.split_once('-').ok_or_else(|| {
            format!("{s:?} is not an address range (expected e.g. 10.40.0.200-10.40.0.250)")
        })?;
        let start: Ipv4Addr = a
            .parse()
            .map_err(|_| format!("{a:?} in {s:?} is not an IPv4 address"))?;
        let end: Ipv4Addr = b
            .parse()
            .map_err(|_| format!("{b:?} in {s:?} is not an IPv4 address"))?;
        if u32::from(start) > u32::from(end) {
            return Err(format!("range {s:?} ends before it starts"));
        }
        Ok(Ipv4Range { start, end })
    }
}

impl fmt::Display for Ipv4Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.start, self.end)
    }
}

impl Serialize for Ipv4Range {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Ipv4Range {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_contains_and_network() {
        let n: Ipv4Cidr = "10.40.0.0/20".parse().unwrap();
        assert!(n.contains("10.40.15.255".parse().unwrap()));
        assert!(!n.contains("10.40.16.0".parse().unwrap()));
        let a: Ipv4Cidr = "10.40.3.7/20".parse().unwrap();
        assert_eq!(a.network(), Ipv4Addr::new(10, 40, 0, 0));
        assert!(!a.is_network_or_broadcast());
        assert!(
            "10.40.0.0/20"
                .parse::<Ipv4Cidr>()
                .unwrap()
                .is_network_or_broadcast()
        );
        assert!(
            "10.40.15.255/20"
                .parse::<Ipv4Cidr>()
                .unwrap()
                .is_network_or_broadcast()
        );
        assert!(
            "0.0.0.0/0"
                .parse::<Ipv4Cidr>()
                .unwrap()
                .contains(Ipv4Addr::new(1, 2, 3, 4))
        );
    }

    #[test]
    fn cidr_refuses_nonsense() {
        for s in [
            "10.40.0.1",
            "10.40.0.1/33",
            "10.40.0/20",
            "fe80::1/64",
            "a/b",
        ] {
            assert!(s.parse::<Ipv4Cidr>().is_err(), "{s}");
        }
    }

    #[test]
    fn range_parses_and_contains() {
        let r: Ipv4Range = "10.40.0.200-10.40.0.250".parse().unwrap();
        assert_eq!(r.len(), 51);
        assert!(r.contains("10.40.0.250".parse().unwrap()));
        assert!(!r.contains("10.40.0.251".parse().unwrap()));
        assert!("10.40.0.9-10.40.0.1".parse::<Ipv4Range>().is_err());
        assert!("10.40.0.9".parse::<Ipv4Range>().is_err());
    }
}
