//! The grammar of every string a spec holds, in one place: the array's management
//! endpoint, iSCSI and NVMe qualified names, array user names, Linux interface
//! names, image references, the DNS label and subdomain rules Kubernetes names
//! follow, label and annotation keys and values, Secret keys. Each check returns the
//! problem in words, or `None`; [`Grammar`] names the rule a spec field follows
//! (`validate::string_fields` lists every field with its rule, `docs/spec.md` the
//! same table).

use std::net::Ipv4Addr;

use super::limits;

/// The rule a free string field of the spec follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Grammar {
    /// A DNS-1123 label of at most this many characters (namespaces, most object
    /// names).
    DnsLabel(usize),
    /// A DNS-1123 subdomain (StorageClass, VolumeSnapshotClass, Secret, node names).
    DnsSubdomain,
    /// A fully qualified, pinned container image reference.
    ImageReference,
    /// A Secret data key.
    SecretKey,
    /// A label or annotation key (Kubernetes qualified name).
    QualifiedKey,
    /// A label value.
    LabelValue,
    /// An annotation value: text, line breaks and tabs allowed (Kubernetes takes
    /// any string, and tools write multi-line ones); no other control character.
    AnnotationValue,
    /// A Linux interface name.
    InterfaceName,
    /// An array user name.
    ArrayUser,
    /// The array's management endpoint.
    Endpoint,
}

impl Grammar {
    /// Why `s` does not follow this rule, or `None`.
    pub(super) fn problem(self, s: &str) -> Option<String> {
        match self {
            Grammar::DnsLabel(max) => dns_label_problem(s, max),
            Grammar::DnsSubdomain => dns_subdomain_problem(s),
            Grammar::ImageReference => image_reference_problem(s),
            Grammar::SecretKey => secret_key_problem(s),
            Grammar::QualifiedKey => qualified_name_key_problem(s),
            Grammar::LabelValue => label_value_problem(s),
            Grammar::AnnotationValue => annotation_value_problem(s),
            Grammar::InterfaceName => interface_name_problem(s),
            Grammar::ArrayUser => array_user_problem(s),
            Grammar::Endpoint => endpoint_problem(s),
        }
    }
}

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

/// Checks the `YYYY-MM.authority[:id]` part shared by IQNs and NQNs: a date, a
/// reversed domain of lowercase letters, digits, '-' and '.', then letters, digits,
/// '-', '.', ':' and '_'.
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
    // RFC 3720 §3.2.6.2 allows '-', '.', ':', lowercase letters and digits; '_' is
    // kept for host names that carry one. Nothing a shell or YAML gives meaning to.
    if !tail
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':' | '_'))
    {
        return Some("only letters, digits, '-', '.', ':' and '_' may follow the ':'".into());
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

/// Why `v` is not a Linux interface name, or `None`. Within the kernel's rule
/// (`dev_valid_name`: 1 to 15 bytes, not `.` or `..`, no `/`, `:` or whitespace),
/// the names interfaces actually get: ASCII letters, digits, `-`, `_` and `.`
/// (`ens1f1.400`, `br-storage`), starting with a letter or digit, so that no name
/// means anything to a shell or YAML.
pub(super) fn interface_name_problem(v: &str) -> Option<String> {
    let ok = !v.is_empty()
        && v.len() <= 15
        && v.starts_with(|c: char| c.is_ascii_alphanumeric())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    (!ok).then(|| {
        format!(
            "{v:?} is not a Linux interface name (1 to 15 ASCII letters, digits, '-', '_' or \
             '.', starting with a letter or digit; no '/', ':' or spaces)"
        )
    })
}

/// Longest image name (registry and repository), as containers/image's `reference`
/// package bounds it (`NameTotalLengthMax`).
pub(super) const MAX_IMAGE_NAME: usize = 255;
/// Longest image tag (containers/image `reference`: `[\w][\w.-]{0,127}`).
pub(super) const MAX_IMAGE_TAG: usize = 128;

/// Why `s` is not a fully qualified, pinned image reference, or `None`:
/// `registry[:port]/path[:tag][@algorithm:hex]` in the grammar of containers/image's
/// `reference` package (distribution's `reference/regexp.go`). The registry is a DNS
/// name (or `localhost`, an IPv4 address, or `[IPv6]`) with an optional port; path
/// components are lowercase alphanumerics joined by `.`, `_`, `__` or dashes; the
/// tag is `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`; a digest is `sha256:` and 64 or
/// `sha512:` and 128 lowercase hex digits. A tag or a digest is required (a release
/// is pinned), the name is at most 255 characters.
pub(super) fn image_reference_problem(s: &str) -> Option<String> {
    let bad = |why: &str| Some(format!("{s:?} is not an image reference: {why}"));
    let (rest, digest) = match s.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (s, None),
    };
    if let Some(d) = digest
        && let Some(why) = image_digest_problem(d)
    {
        return bad(&why);
    }
    // A ':' after the last '/' starts the tag; before it, it is the registry's port.
    let last_slash = rest.rfind('/');
    let (name, tag) = match rest.rfind(':') {
        Some(i) if last_slash.is_none_or(|j| i > j) => (&rest[..i], Some(&rest[i + 1..])),
        _ => (rest, None),
    };
    if let Some(t) = tag
        && let Some(why) = image_tag_problem(t)
    {
        return bad(&why);
    }
    if tag.is_none() && digest.is_none() {
        return bad("expected a tag (:4.19.10-multi) or a digest (@sha256:...)");
    }
    if name.len() > MAX_IMAGE_NAME {
        return bad(&format!(
            "the name is longer than {MAX_IMAGE_NAME} characters"
        ));
    }
    let Some((registry, path)) = name.split_once('/') else {
        return bad(
            "expected registry/repository (e.g. quay.io/openshift-release-dev/ocp-release)",
        );
    };
    if let Some(why) = image_registry_problem(registry) {
        return bad(&why);
    }
    path.split('/')
        .find_map(image_path_component_problem)
        .and_then(|why| bad(&why))
}

/// The registry part of an image reference: `host[:port]`.
fn image_registry_problem(r: &str) -> Option<String> {
    let (host, port) = if let Some(rest) = r.strip_prefix('[') {
        let Some((v6, after)) = rest.split_once(']') else {
            return Some(format!("registry {r:?} opens '[' without closing it"));
        };
        if v6.parse::<std::net::Ipv6Addr>().is_err() {
            return Some(format!("registry {r:?}: {v6:?} is not an IPv6 address"));
        }
        (None, after.strip_prefix(':'))
    } else {
        match r.split_once(':') {
            Some((h, p)) => (Some(h), Some(p)),
            None => (Some(r), None),
        }
    };
    if let Some(h) = host {
        let component_ok = |c: &str| {
            !c.is_empty()
                && c.len() <= 63
                && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-')
                && !c.starts_with('-')
                && !c.ends_with('-')
        };
        if !h.split('.').all(component_ok) {
            return Some(format!(
                "registry {r:?} is not a host name (letters, digits, '-', joined by '.')"
            ));
        }
        if !h.contains('.') && h != "localhost" && port.is_none() {
            return Some(format!(
                "{r:?} is not a registry: write the registry host first (quay.io/..., \
                 registry.example.com:5000/...)"
            ));
        }
    }
    if let Some(p) = port
        && !(p.len() <= 5 && !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    {
        return Some(format!("registry {r:?}: the port must be digits"));
    }
    None
}

/// One repository path component: `[a-z0-9]+` joined by `.`, `_`, `__` or `-`+.
fn image_path_component_problem(c: &str) -> Option<String> {
    let why = || {
        Some(format!(
            "path component {c:?}: lowercase letters and digits, separated by '.', '_', '__' or \
             dashes"
        ))
    };
    let b = c.as_bytes();
    let alnum = |x: u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return why();
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !alnum(b[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|x| x == b'-')) {
            return why();
        }
    }
    None
}

/// An image tag: `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn image_tag_problem(t: &str) -> Option<String> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let ok = t.len() <= MAX_IMAGE_TAG
        && t.starts_with(word)
        && t.chars().all(|c| word(c) || c == '.' || c == '-');
    (!ok).then(|| {
        format!(
            "tag {t:?}: letters, digits, '_', '.' and '-', not starting with '.' or '-', at most \
             {MAX_IMAGE_TAG} characters"
        )
    })
}

/// An image digest: `sha256:` and 64, or `sha512:` and 128, lowercase hex digits.
fn image_digest_problem(d: &str) -> Option<String> {
    let hex_len = match d.split_once(':') {
        Some(("sha256", h)) => (h, 64),
        Some(("sha512", h)) => (h, 128),
        _ => return Some(format!("digest {d:?}: expected sha256:<64 hex digits>")),
    };
    let (hex, len) = hex_len;
    let ok = hex.len() == len
        && hex
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
    (!ok).then(|| format!("digest {d:?}: expected {len} lowercase hex digits"))
}

/// Why `k` is not a Kubernetes qualified name (label and annotation keys):
/// an optional DNS-1123 subdomain prefix and `/`, then a name of at most 63
/// characters, alphanumeric at both ends, with `-`, `_` and `.` inside.
pub(super) fn qualified_name_key_problem(k: &str) -> Option<String> {
    let (prefix, name) = match k.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    if let Some(p) = prefix
        && let Some(why) = dns_subdomain_problem(p)
    {
        return Some(format!("the prefix of key {k:?}: {why}"));
    }
    if name.is_empty() {
        return Some(format!("key {k:?} has an empty name"));
    }
    label_value_problem(name).map(|why| format!("key {k:?}: {why}"))
}

/// Why `v` is not a Kubernetes label value: empty, or at most 63 characters,
/// alphanumeric at both ends, with `-`, `_` and `.` inside.
pub(super) fn label_value_problem(v: &str) -> Option<String> {
    if v.is_empty() {
        return None;
    }
    let inner = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let ok = v.len() <= 63
        && v.chars().all(inner)
        && v.starts_with(|c: char| c.is_ascii_alphanumeric())
        && v.ends_with(|c: char| c.is_ascii_alphanumeric());
    (!ok).then(|| {
        format!(
            "{v:?} is not a label value (at most 63 letters, digits, '-', '_' or '.', starting \
             and ending with a letter or digit)"
        )
    })
}

/// Longest annotation value pxfa carries (Kubernetes bounds all of an object's
/// annotations together at 256 KiB).
pub(super) const MAX_ANNOTATION_VALUE: usize = 256 * 1024;

/// Why `v` is not an annotation value pxfa carries: at most 256 KiB of text without
/// control characters or line breaks (annotations are carried, never interpreted;
/// one line each keeps every place they may be shown a single line).
pub(super) fn annotation_value_problem(v: &str) -> Option<String> {
    if v.len() > MAX_ANNOTATION_VALUE {
        return Some(format!(
            "{} bytes is more than an annotation may hold ({MAX_ANNOTATION_VALUE})",
            v.len()
        ));
    }
    // The value reaches no manifest, comment or command: a multi-line annotation
    // another tool put on a TenantStorage must not stop the controller.
    v.chars()
        .find(|c| is_unprintable(*c) && !matches!(c, '\n' | '\r' | '\t'))
        .map(|c| format!("{v:?} holds the control character {c:?}"))
}

/// Control characters and the Unicode line and paragraph separators (which some
/// YAML 1.1 readers and terminals take as line breaks).
pub fn is_unprintable(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `s` with every [`is_unprintable`] character written as a Rust escape (`\n`,
/// `\u{1b}`): what pxfa prints of an input (error messages, finding objects) can
/// then never move the cursor, recolour or retitle a terminal, or start a line.
pub(crate) fn escape_unprintable(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_unprintable) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unprintable(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Why `k` is not a Secret data key (`[-._a-zA-Z0-9]+`, at most 253 characters, not
/// `.` or `..`), or `None`.
pub(super) fn secret_key_problem(k: &str) -> Option<String> {
    let ok = !k.is_empty()
        && k.len() <= 253
        && k != "."
        && k != ".."
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    (!ok).then(|| {
        format!(
            "{k:?} is not a Secret key (1 to 253 letters, digits, '-', '.' or '_'; not '.' or \
             '..')"
        )
    })
}
