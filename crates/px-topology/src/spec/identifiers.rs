//! Problems with the identifiers a spec names outside Kubernetes: the array's
//! management endpoint, iSCSI and NVMe qualified names, array user names, and the
//! DNS label and subdomain rules Kubernetes names follow. Each check
//! returns the problem in words, or `None`.

use std::net::Ipv4Addr;

use super::limits;

/// Why `ep` is not `host`, `host:port` or `[ipv6]:port` (host a DNS name or IPv4
/// address, port 1..=65535), or `None`.
pub(super) fn endpoint_problem(ep: &str) -> Option<String> {
    let (host, port) = if let Some(rest) = ep.strip_prefix('[') {
        let Some((v6, after)) = rest.split_once(']') else {
            return Some(format!("{ep:?} opens '[' without closing it"));
        };
        if v6.parse::<std::net::Ipv6Addr>().is_err() {
            return Some(format!("{v6:?} in {ep:?} is not an IPv6 address"));
        }
        match after {
            "" => (None, None),
            a => match a.strip_prefix(':') {
                Some(p) => (None, Some(p)),
                None => return Some(format!("{ep:?}: expected ':port' after ']'")),
            },
        }
    } else {
        match ep.split_once(':') {
            Some((h, p)) if !p.contains(':') => (Some(h), Some(p)),
            Some(_) => {
                return Some(format!(
                    "{ep:?}: write an IPv6 address in brackets ([2001:db8::10]), as pure.json does"
                ));
            }
            None => (Some(ep), None),
        }
    };
    if let Some(h) = host
        && h.parse::<Ipv4Addr>().is_err()
        && let Some(p) = dns_subdomain_problem(&h.to_ascii_lowercase())
    {
        return Some(format!("{h:?} is not a host name or IPv4 address: {p}"));
    }
    if let Some(p) = port {
        let ok = p.len() <= 5
            && p.chars().all(|c| c.is_ascii_digit())
            && p.parse::<u32>().is_ok_and(|n| limits::PORT.contains(&n));
        if !ok {
            return Some(format!("port {p:?} in {ep:?} is out of range 1..=65535"));
        }
    }
    None
}

/// Why `raw` is not an iSCSI qualified name (`iqn.YYYY-MM.naming-authority[:id]`,
/// RFC 3720 §3.2.6.3.1) or EUI name (`eui.` and 16 hex digits), or `None`.
pub(super) fn iscsi_name_problem(raw: &str) -> Option<String> {
    let bad = |why: &str| Some(format!("{raw:?} is not an iSCSI name: {why}"));
    if raw.len() > 223 {
        return bad("longer than 223 bytes");
    }
    if let Some(hex) = raw.strip_prefix("eui.") {
        if hex.len() != 16 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return bad("eui. names carry exactly 16 hex digits");
        }
        return None;
    }
    let Some(rest) = raw.strip_prefix("iqn.") else {
        return bad("expected iqn.… or eui.…");
    };
    qualified_name_problem(rest, "iqn.2004-10.com.example").and_then(|why| bad(&why))
}

/// Why `raw` is not an NVMe qualified name (`nqn.YYYY-MM.reverse-domain:…`, at most
/// 223 bytes, NVMe base spec §4.5), or `None`.
pub(super) fn nvme_name_problem(raw: &str) -> Option<String> {
    let bad = |why: &str| Some(format!("{raw:?} is not an NVMe qualified name: {why}"));
    if raw.len() > 223 {
        return bad("longer than 223 bytes");
    }
    let Some(rest) = raw.strip_prefix("nqn.") else {
        return bad("expected nqn.…");
    };
    qualified_name_problem(rest, "nqn.2014-08.org.nvmexpress").and_then(|why| bad(&why))
}

/// Checks the `YYYY-MM.authority[:anything]` part shared by IQNs and NQNs: a date,
/// a reversed domain of lowercase letters, digits, '-' and '.', then printable ASCII
/// without spaces.
pub(super) fn qualified_name_problem(rest: &str, example: &str) -> Option<String> {
    let b = rest.as_bytes();
    let date_ok = b.len() > 8
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && matches!(
            &rest[5..7],
            "01" | "02" | "03" | "04" | "05" | "06" | "07" | "08" | "09" | "10" | "11" | "12"
        )
        && b[7] == b'.';
    if !date_ok {
        return Some(format!(
            "expected a date YYYY-MM and '.' after the prefix ({example}…)"
        ));
    }
    let after = &rest[8..];
    let (authority, tail) = after.split_once(':').unwrap_or((after, ""));
    if authority.is_empty()
        || !authority
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
    {
        return Some(
            "the naming authority (reversed domain) takes lowercase letters, digits, '-' and '.'"
                .into(),
        );
    }
    if !tail.chars().all(|c| c.is_ascii_graphic()) {
        return Some("only printable ASCII without spaces may follow the ':'".into());
    }
    None
}

/// Array user names: letters, digits, `-`, `_`, 1..=32 characters (conservative: the
/// array's exact rule is not documented in our references).
pub(super) fn array_user_problem(u: &str) -> Option<String> {
    if u.is_empty() || u.len() > 32 {
        return Some(format!("{u:?} must be 1 to 32 characters long"));
    }
    if !u
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Some(format!("{u:?} may only hold letters, digits, '-' and '_'"));
    }
    if !u.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Some(format!("{u:?} must start with a letter"));
    }
    None
}

/// Why `s` is not a DNS-1123 label (lowercase letters, digits, `-`, alphanumeric at
/// both ends, at most `max` characters), or `None` when it is one.
pub(super) fn dns_label_problem(s: &str, max: usize) -> Option<String> {
    if s.is_empty() {
        return Some("must not be empty".into());
    }
    if s.len() > max {
        return Some(format!(
            "{s:?} is {} characters long; the limit is {max}",
            s.len()
        ));
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Some(format!(
            "{s:?} is not a DNS-1123 label (only lowercase letters, digits and '-')"
        ));
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Some(format!("{s:?} must start and end with a letter or digit"));
    }
    None
}

/// Why `s` is not a DNS-1123 subdomain (labels joined by `.`, at most 253), or `None`.
pub(super) fn dns_subdomain_problem(s: &str) -> Option<String> {
    if s.len() > 253 {
        return Some(format!("{s:?} is longer than 253 characters"));
    }
    s.split('.')
        .find_map(|l| dns_label_problem(l, 63))
        .map(|p| format!("{s:?} is not a DNS-1123 subdomain: {p}"))
}
