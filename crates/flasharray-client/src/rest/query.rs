//! Query strings encoded the way Pure's Python SDK encodes them.
//!
//! Arrays are only known to accept what the SDK sends: every list element
//! percent-encoded on its own (only unreserved characters and `/` kept), elements
//! joined with a raw `,`. Encoding a whole list with `serde_urlencoded` would turn the
//! separators into `%2C`, which no captured client sends, so the string is built here.

use std::fmt::Write as _;

/// An ordered list of query parameters whose values are already encoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// An empty query.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A `[csv]` parameter; left out when `values` is empty, as the SDK does.
    pub(crate) fn csv<S: AsRef<str>>(mut self, key: &str, values: &[S]) -> Self {
        if !values.is_empty() {
            let mut out = String::new();
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode_into(&mut out, v.as_ref());
            }
            self.pairs.push((key.to_string(), out));
        }
        self
    }

    /// A single value.
    pub(crate) fn value(mut self, key: &str, value: &str) -> Self {
        let mut out = String::new();
        encode_into(&mut out, value);
        self.pairs.push((key.to_string(), out));
        self
    }

    /// An optional single value.
    pub(crate) fn opt(self, key: &str, value: Option<&str>) -> Self {
        match value {
            Some(v) => self.value(key, v),
            None => self,
        }
    }

    /// A boolean, written `true`/`false`.
    pub(crate) fn flag(self, key: &str, value: bool) -> Self {
        self.value(key, if value { "true" } else { "false" })
    }

    /// An optional boolean.
    pub(crate) fn opt_flag(self, key: &str, value: Option<bool>) -> Self {
        match value {
            Some(v) => self.flag(key, v),
            None => self,
        }
    }

    pub(crate) fn number(mut self, key: &str, value: u64) -> Self {
        self.pairs.push((key.to_string(), value.to_string()));
        self
    }

    /// Replaces (or adds) a parameter; used by paging.
    pub(crate) fn set(&mut self, key: &str, value: &str) {
        self.pairs.retain(|(k, _)| k != key);
        let mut out = String::new();
        encode_into(&mut out, value);
        self.pairs.push((key.to_string(), out));
    }

    /// True when there are no parameters.
    pub(crate) fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The encoded query string, without the leading `?`.
    pub(crate) fn encoded(&self) -> String {
        let mut out = String::new();
        for (i, (k, v)) in self.pairs.iter().enumerate() {
            if i > 0 {
                out.push('&');
            }
            out.push_str(k);
            out.push('=');
            out.push_str(v);
        }
        out
    }
}

/// Python's `urllib.parse.quote(s, safe="/")`: keeps `A-Z a-z 0-9 - . _ ~ /`.
fn encode_into(out: &mut String, s: &str) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_the_sdk() {
        let q = Query::new()
            .csv("names", &["pod1::v1", "vg1/v1", "a b"])
            .value("filter", "name='x*' and provisioned>1")
            .flag("destroyed", false)
            .number("limit", 10);
        assert_eq!(
            q.encoded(),
            "names=pod1%3A%3Av1,vg1/v1,a%20b&filter=name%3D%27x%2A%27%20and%20provisioned%3E1&destroyed=false&limit=10"
        );
    }

    #[test]
    fn empty_lists_are_left_out() {
        let q = Query::new().csv::<&str>("names", &[]);
        assert!(q.is_empty());
    }

    #[test]
    fn set_replaces() {
        let mut q = Query::new().number("limit", 1);
        q.set("continuation_token", "a+b=");
        q.set("continuation_token", "c");
        assert_eq!(q.encoded(), "limit=1&continuation_token=c");
    }

    #[test]
    fn multibyte_characters_are_encoded_per_byte() {
        let q = Query::new().value("filter", "é");
        assert_eq!(q.encoded(), "filter=%C3%A9");
    }
}
