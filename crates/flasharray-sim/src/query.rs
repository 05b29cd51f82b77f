//! Query strings as FlashArray clients send them.
//!
//! Pure's SDK percent-encodes each element of a list with Python's `quote()` and
//! joins them with a raw `,` (`names=pod1%3A%3Av1,v2`); form encoders (reqwest's
//! `.query()`, `curl --data-urlencode`) encode the whole list, separators included
//! (`names=v1%2Cv2`), and `+` for space. Array object names cannot contain a comma,
//! so every list parameter on every endpoint is decoded first and then split on
//! commas ([`Query::csv`], the one list parser): `,` and `%2C` separate alike.
//! Parameters the simulator does not understand are refused with a 400 naming the
//! parameter, rather than silently ignored.

use super::response::{Fail, bad_request};

/// A parsed query string: decoded keys, raw (still encoded) values, in order.
#[derive(Debug, Default, Clone)]
pub(crate) struct Query {
    pairs: Vec<(String, String)>,
}

/// Parameters every endpoint accepts and ignores because they have no meaning on a
/// single simulated array (fleet context, partial-error answers, protection groups).
const IGNORED: &[&str] = &["context_names", "allow_errors", "with_default_protection"];

impl Query {
    /// Splits `a=1&b=x%20y` into pairs; a key without `=` gets an empty value.
    pub(crate) fn parse(raw: Option<&str>) -> Query {
        let pairs = raw
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (percent_decode(k), v.to_string())
            })
            .collect();
        Query { pairs }
    }

    /// Refuses any parameter not in `allowed` (or in the ignored list).
    pub(crate) fn only(&self, allowed: &[&str]) -> Result<(), Fail> {
        for (k, _) in &self.pairs {
            if !allowed.contains(&k.as_str()) && !IGNORED.contains(&k.as_str()) {
                return Err(unknown_parameter(k));
            }
        }
        Ok(())
    }

    /// The parameter names, in order, repeated ones repeated.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.pairs.iter().map(|(k, _)| k.as_str())
    }

    /// Whether the parameter is present at all.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.pairs.iter().any(|(k, _)| k == key)
    }

    /// Every element of a comma-separated list parameter: decoded, then split on
    /// commas (raw or `%2C`); repeated parameters are concatenated and empty
    /// elements dropped.
    pub(crate) fn csv(&self, key: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == key)
            .flat_map(|(_, v)| {
                percent_decode(v)
                    .split(',')
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .filter(|s| !s.is_empty())
            .collect()
    }

    /// Every value of a repeated scalar parameter, decoded (e.g. several `filter`).
    pub(crate) fn all(&self, key: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| percent_decode(v))
            .collect()
    }

    /// The single value of a scalar parameter, decoded; given twice is an error.
    pub(crate) fn one(&self, key: &str) -> Result<Option<String>, Fail> {
        let mut values = self.all(key);
        match values.len() {
            0 => Ok(None),
            1 => Ok(values.pop()),
            _ => Err(bad_request(
                Some(key),
                format!("Parameter {key:?} may be given only once."),
            )),
        }
    }

    /// A `true`/`false` parameter.
    pub(crate) fn bool(&self, key: &str) -> Result<Option<bool>, Fail> {
        match self.one(key)?.as_deref() {
            None => Ok(None),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(v) => Err(bad_request(
                Some(key),
                format!("Invalid value {v:?} for {key}: expected true or false."),
            )),
        }
    }

    /// A non-negative integer parameter.
    pub(crate) fn u64(&self, key: &str) -> Result<Option<u64>, Fail> {
        match self.one(key)? {
            None => Ok(None),
            Some(v) => v.parse::<u64>().map(Some).map_err(|_| {
                bad_request(
                    Some(key),
                    format!("Invalid value {v:?} for {key}: expected a non-negative integer."),
                )
            }),
        }
    }

    /// Several `filter` parameters mean all of them must hold (LXD sends several).
    pub(crate) fn filter(&self) -> Option<String> {
        let filters: Vec<String> = self
            .all("filter")
            .into_iter()
            .filter(|f| !f.trim().is_empty())
            .collect();
        match filters.len() {
            0 => None,
            1 => filters.into_iter().next(),
            _ => Some(
                filters
                    .iter()
                    .map(|f| format!("({f})"))
                    .collect::<Vec<_>>()
                    .join(" and "),
            ),
        }
    }

    /// Sort keys in the client's form (`name-` descending); a leading `-` (newer SDK
    /// documentation) is turned into the trailing form.
    pub(crate) fn sort(&self) -> Vec<String> {
        self.csv("sort")
            .into_iter()
            .map(|s| match s.strip_prefix('-') {
                Some(field) if !field.ends_with('-') => format!("{field}-"),
                _ => s,
            })
            .collect()
    }

    /// The pairs except those named, sorted: identifies "the same query" across the
    /// pages of one listing.
    pub(crate) fn canonical_without(&self, skip: &[&str]) -> String {
        let mut pairs: Vec<String> = self
            .pairs
            .iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .map(|(k, v)| format!("{k}={}", percent_decode(v)))
            .collect();
        pairs.sort();
        pairs.join("&")
    }
}

/// The answer to a query parameter the endpoint does not have (at the REST version
/// asked, too: `versions.rs`), naming it.
pub(crate) fn unknown_parameter(key: &str) -> Fail {
    bad_request(
        Some(key),
        format!("Invalid query parameter {key:?} for this endpoint."),
    )
}

/// Decodes `%XX` escapes and `+`; invalid escapes are kept literally, and invalid
/// UTF-8 is replaced, so that the array's own "does not exist" answers name what was
/// sent.
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_encoded_commas_separate_alike() {
        let q = Query::parse(Some("names=pod1%3A%3Av1,vg1/v2,a+b&names=x%2Cy%2c,z"));
        assert_eq!(
            q.csv("names"),
            vec!["pod1::v1", "vg1/v2", "a b", "x", "y", "z"]
        );
        let sdk = Query::parse(Some("names=v1,v2"));
        let form = Query::parse(Some("names=v1%2Cv2"));
        assert_eq!(sdk.csv("names"), form.csv("names"));
    }

    #[test]
    fn several_filters_are_anded_and_commas_kept() {
        let q = Query::parse(Some(
            "filter=name%3D%28%27a%27%2C%27b%27%29&filter=provisioned%3E1",
        ));
        assert_eq!(q.filter().unwrap(), "(name=('a','b')) and (provisioned>1)");
        let q = Query::parse(Some("filter=name%3D%27x%2A%27"));
        assert_eq!(q.filter().unwrap(), "name='x*'");
    }

    #[test]
    fn both_descending_forms() {
        let q = Query::parse(Some("sort=-name,provisioned-,created"));
        assert_eq!(q.sort(), vec!["name-", "provisioned-", "created"]);
    }

    #[test]
    fn scalars_are_checked() {
        let q = Query::parse(Some("limit=x&destroyed=maybe&offset=3&offset=4"));
        assert!(q.u64("limit").is_err());
        assert!(q.bool("destroyed").is_err());
        assert!(q.one("offset").is_err());
        assert!(q.only(&["limit", "destroyed"]).is_err());
        assert!(
            Query::parse(Some("context_names=a&limit=1"))
                .only(&["limit"])
                .is_ok()
        );
    }

    #[test]
    fn decoding_edge_cases() {
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%4"), "%4");
        assert_eq!(percent_decode("%zz"), "%zz");
        assert_eq!(percent_decode("%41%42"), "AB");
        assert_eq!(percent_decode("a%20b+c"), "a b c");
    }
}
