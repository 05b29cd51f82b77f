//! Showing an array address without the secrets a user may have put into it.
//!
//! An address is echoed in errors and log lines, and users paste whatever they have:
//! `https://user:password@fa1`, `fa1/?api_token=…`. Only the parts that identify the
//! array (scheme, host, port, path) are ever shown; user-info and query values become
//! `***`, and the fragment is dropped (`SafeUrl`) or masked ([`redact_addr`]).

use std::fmt;

use url::Url;

/// What replaces a secret.
const MASK: &str = "***";

/// A parsed URL shown as `scheme://***@host:port/path?key=***&…`: user-info and
/// query values masked, fragment dropped.
#[derive(Clone, Copy)]
pub(crate) struct SafeUrl<'a>(pub(crate) &'a Url);

impl fmt::Display for SafeUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let u = self.0;
        write!(f, "{}:", u.scheme())?;
        if u.has_authority() {
            f.write_str("//")?;
            if !u.username().is_empty() || u.password().is_some() {
                write!(f, "{MASK}@")?;
            }
            if let Some(host) = u.host_str() {
                f.write_str(host)?;
            }
            if let Some(port) = u.port() {
                write!(f, ":{port}")?;
            }
        }
        f.write_str(u.path())?;
        if let Some(q) = u.query() {
            write!(f, "?{}", mask_query(q))?;
        }
        Ok(())
    }
}

impl fmt::Debug for SafeUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

/// Masks an address that may not parse as a URL: everything between `://` (or the
/// start) and the last `@` becomes `***@` (a password may hold `/`, `?` or `#`),
/// every query value `***`, the fragment `#***`; control characters are escaped.
pub fn redact_addr(input: &str) -> String {
    shorten(redact_full(input))
}

/// The most of an address a message shows: a pasted file or a 70,000-character
/// host name must not flood the terminal.
const MAX_SHOWN: usize = 120;

fn shorten(s: String) -> String {
    match s.char_indices().nth(MAX_SHOWN) {
        Some((cut, _)) => format!("{}... ({} characters)", &s[..cut], s.chars().count()),
        None => s,
    }
}

fn redact_full(input: &str) -> String {
    let auth_start = input.find("://").map_or(0, |i| i + 3);
    let mut out = String::with_capacity(input.len());
    out.push_str(&input[..auth_start]);
    let mut rest = &input[auth_start..];
    let mut in_query = false;
    if let Some(at) = rest.rfind('@') {
        let masked = &rest[..at];
        out.push_str(MASK);
        out.push('@');
        rest = &rest[at + 1..];
        if masked.contains('#') {
            // The '@' was inside the fragment: all that follows is fragment too.
            out.push_str(MASK);
            return escape_control(&out);
        }
        in_query = masked.contains('?');
    }
    let (before_fragment, had_fragment) = match rest.split_once('#') {
        Some((before, _)) => (before, true),
        None => (rest, false),
    };
    if in_query {
        out.push_str(&mask_query(before_fragment));
    } else {
        match before_fragment.split_once('?') {
            Some((b, q)) => {
                out.push_str(b);
                out.push('?');
                out.push_str(&mask_query(q));
            }
            None => out.push_str(before_fragment),
        }
    }
    if had_fragment {
        out.push('#');
        out.push_str(MASK);
    }
    escape_control(&out)
}

/// `a=1&b&c=2` -> `a=***&b&c=***`.
fn mask_query(q: &str) -> String {
    q.split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) => format!("{k}={MASK}"),
            None => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn escape_control(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// An array address as given (`host`, `host:port` or a URL), parsed with `https://`
/// assumed when it names no scheme, and whether it carries user-info. The second is
/// decided even when the address does not parse, so that callers refuse credentials
/// before giving any other reason.
pub fn parse_address(input: &str) -> (Result<Url, url::ParseError>, bool) {
    let with_scheme = if input.contains("://") {
        input.to_string()
    } else {
        format!("https://{input}")
    };
    let url = Url::parse(&with_scheme);
    let carries_credentials = match &url {
        Ok(u) => !u.username().is_empty() || u.password().is_some(),
        // Unparsable, but with a user-info part: say so rather than why it fails.
        Err(_) => input
            .split_once("://")
            .map_or(input, |(_, r)| r)
            .contains('@'),
    };
    (url, carries_credentials)
}

/// The longest host name DNS allows (RFC 1035: 253 characters in text form).
const MAX_HOST: usize = 253;

/// What is wrong with the form of an array address that the URL parser would
/// quietly repair: an empty host before a path (`https:///h`, `//h`), a path (even
/// one the parser normalises away, `/%2e%2e/`), port 0, or a host longer than DNS
/// allows. `url` is the address as [`parse_address`] parsed it. The answer never
/// quotes the address.
pub fn address_form_problem(input: &str, url: &Url) -> Option<&'static str> {
    // The URL parser drops tabs and line breaks silently (`fa1\rx` becomes `fa1x`).
    if input.chars().any(char::is_control) {
        return Some("holds a control character");
    }
    let rest = input.split_once("://").map_or(input, |(_, r)| r);
    if input.starts_with('/') || rest.starts_with('/') {
        return Some("has no host before the path; give host, host:port or https://host[:port]");
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let tail = &rest[authority_end..];
    if !tail.is_empty() && tail != "/" && !tail.starts_with(['?', '#']) {
        return Some("has a path; give only scheme, host and port");
    }
    if url.port() == Some(0) {
        return Some("has port 0, which no array listens on");
    }
    if url.host_str().is_some_and(|h| h.len() > MAX_HOST) {
        return Some("has a host name longer than DNS allows (253 characters)");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CASES: &[(&str, &str)] = &[
        ("http://u:SECRET@h", "h"),
        ("https://SECRET@h:8443", "h"),
        ("https://h/?api_token=SECRET&x=1", "h"),
        ("h?api-token=SECRET", "h"),
        ("https://h/#SECRET", "h"),
        ("ht!tp://u:SECRET@h", "h"),
        ("u:SECRET@fa1.example:443/x", "fa1.example"),
        ("https://a@b:SECRET@h/p", "h"),
        ("https://u:pa?SECRET@h", "h"),
        ("https://u:pa/SECRET@h", "h"),
        ("https://h/?a=b@c&t=SECRET", "https://"),
        ("https://u:pa#SECRET@h", "https://"),
    ];

    #[test]
    fn address_forms_the_parser_would_repair_are_named() {
        let problem = |a: &str| {
            let (url, _) = parse_address(a);
            address_form_problem(a, &url.unwrap())
        };
        for bad in [
            "https:///h",
            "//h",
            "https://h/%2e%2e/",
            "h/x",
            "h:0",
            "127.0.0.1:0",
            "fa1\rspoof.example",
            "fa1\t.example",
        ] {
            assert!(problem(bad).is_some(), "{bad}");
        }
        assert!(problem(&format!("{}.example", "a".repeat(60)).repeat(5)).is_some());
        for good in [
            "h",
            "h:8443",
            "https://h",
            "https://h/",
            "fa1.example.net",
            "[::1]:8443",
        ] {
            assert_eq!(problem(good), None, "{good}");
        }
        // Query and fragment are left to the callers' own messages.
        assert_eq!(problem("https://h?x=1"), None);
    }

    #[test]
    fn unparsed_addresses_lose_their_secrets() {
        for (input, host) in CASES {
            let shown = redact_addr(input);
            assert!(!shown.contains("SECRET"), "{input} -> {shown}");
            assert!(shown.contains(host), "{input} -> {shown}");
        }
        assert_eq!(
            redact_addr("https://u:p@h:8443/a?k=v&flag#f"),
            "https://***@h:8443/a?k=***&flag#***"
        );
        assert_eq!(redact_addr("fa1:8443"), "fa1:8443");
        assert_eq!(redact_addr("fa\n1"), "fa\\n1");
    }

    #[test]
    fn parsed_urls_lose_their_secrets() {
        for (input, host) in CASES {
            let with_scheme = if input.contains("://") {
                input.to_string()
            } else {
                format!("https://{input}")
            };
            let Ok(url) = Url::parse(&with_scheme) else {
                continue;
            };
            let shown = SafeUrl(&url).to_string();
            assert!(!shown.contains("SECRET"), "{input} -> {shown}");
            assert!(shown.contains(host), "{input} -> {shown}");
        }
        let url = Url::parse("https://u:p@h:8443/a?k=v#frag").unwrap();
        assert_eq!(SafeUrl(&url).to_string(), "https://***@h:8443/a?k=***");
        let url = Url::parse("https://fa1.example").unwrap();
        assert_eq!(SafeUrl(&url).to_string(), "https://fa1.example/");
    }

    fn secret() -> impl Strategy<Value = String> {
        "[A-Za-z0-9]{12,24}".prop_map(|s| format!("S3CR{s}"))
    }

    proptest! {
        #[test]
        fn secrets_never_survive(
            host in "[a-z][a-z0-9-]{0,12}(\\.[a-z]{2,5})?",
            port in proptest::option::of(1u16..),
            user in "[a-z]{0,6}",
            secret in secret(),
            place in 0usize..4,
            scheme in prop_oneof![Just(""), Just("https://"), Just("http://"), Just("ht!tp://")],
        ) {
            let port = port.map(|p| format!(":{p}")).unwrap_or_default();
            let addr = match place {
                0 => format!("{scheme}{user}:{secret}@{host}{port}"),
                1 => format!("{scheme}{secret}@{host}{port}/"),
                2 => format!("{scheme}{host}{port}/?x=1&api_token={secret}"),
                _ => format!("{scheme}{host}{port}/#{secret}"),
            };
            let shown = redact_addr(&addr);
            prop_assert!(!shown.contains(&secret), "{} -> {}", addr, shown);
            prop_assert!(shown.contains(&host), "{} -> {}", addr, shown);
            let with_scheme = if addr.contains("://") { addr.clone() } else { format!("https://{addr}") };
            if let Ok(url) = Url::parse(&with_scheme) {
                let shown = SafeUrl(&url).to_string();
                prop_assert!(!shown.contains(&secret), "{} -> {}", addr, shown);
            }
        }
    }
}
