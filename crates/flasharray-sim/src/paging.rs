//! List envelopes and paging, as real arrays do them.
//!
//! Without `limit` every item comes in one page (`more_items_remaining: false`).
//! With `limit`, the answer carries a continuation token when more items remain,
//! unless `sort` was given: then clients page with `offset` instead (that is what
//! Pure's SDK does when no token comes back). The token is opaque (base64url of the
//! next offset and a fingerprint of the query), so a token presented with a
//! different query is refused instead of silently returning the wrong page.
//!
//! Each page re-reads the array: like a real array, items created or removed between
//! two pages can shift the window.

use hyper::StatusCode;
use serde::Serialize;
use serde_json::{Value, json};

use super::query::Query;
use super::response::{Fail, Reply, bad_request};

/// Parameters that control paging; every list endpoint accepts them.
pub(crate) const PAGING_PARAMS: &[&str] = &[
    "limit",
    "offset",
    "continuation_token",
    "total_item_count",
    "total_only",
];

/// Which window of a listing to answer with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PageRequest {
    limit: Option<usize>,
    offset: usize,
    sorted: bool,
    total_item_count: bool,
    total_only: bool,
    fingerprint: u64,
}

impl PageRequest {
    /// Reads the paging parameters of `query` for the listing at `path`.
    pub(crate) fn from_query(path: &str, query: &Query) -> Result<PageRequest, Fail> {
        let fingerprint = fingerprint(path, query);
        let limit = query.u64("limit")?.map(|l| l as usize);
        let mut offset = query.u64("offset")?.unwrap_or(0) as usize;
        if let Some(token) = query.one("continuation_token")? {
            offset = decode_token(&token, fingerprint).ok_or_else(|| {
                bad_request(
                    Some("continuation_token"),
                    "Invalid continuation token: it does not belong to this query.",
                )
            })?;
        }
        Ok(PageRequest {
            limit,
            offset,
            sorted: query.has("sort"),
            total_item_count: query.bool("total_item_count")?.unwrap_or(false),
            total_only: query.bool("total_only")?.unwrap_or(false),
            fingerprint,
        })
    }

    /// The envelope with all five keys (`total` only where the caller gives one,
    /// as real arrays send it only on some endpoints).
    pub(crate) fn reply<T: Serialize>(&self, items: &[T], total: Option<Value>) -> Reply {
        let count = items.len();
        let start = self.offset.min(count);
        let (window, more) = match self.limit {
            // limit=0 asks only for the count; "more" would make clients loop.
            Some(0) => (&items[start..start], false),
            Some(limit) => {
                let end = start.saturating_add(limit).min(count);
                (&items[start..end], end < count)
            }
            None => (&items[start..], false),
        };
        let window = if self.total_only {
            &window[..0]
        } else {
            window
        };
        let token =
            (more && !self.sorted).then(|| encode_token(start + window.len(), self.fingerprint));
        let total_item_count =
            (self.total_item_count || self.limit == Some(0)).then_some(count as u64);
        let mut body = json!({
            "continuation_token": token,
            "more_items_remaining": more && !self.total_only,
            "total_item_count": total_item_count,
            "items": window,
        });
        if let Some(total) = total {
            body["total"] = json!([total]);
        }
        Reply::json_value(StatusCode::OK, body)
    }
}

/// FNV-1a over the path and the query minus the paging parameters, i.e. over what
/// selects and orders the items.
fn fingerprint(path: &str, query: &Query) -> u64 {
    let canonical = query.canonical_without(PAGING_PARAMS);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.bytes().chain([b'?']).chain(canonical.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn encode_token(offset: usize, fingerprint: u64) -> String {
    let mut bytes = Vec::with_capacity(16);
    bytes.extend_from_slice(&(offset as u64).to_be_bytes());
    bytes.extend_from_slice(&fingerprint.to_be_bytes());
    base64url(&bytes)
}

fn decode_token(token: &str, fingerprint: u64) -> Option<usize> {
    let bytes = unbase64url(token)?;
    if bytes.len() != 16 {
        return None;
    }
    let offset = u64::from_be_bytes(bytes[..8].try_into().ok()?);
    let fp = u64::from_be_bytes(bytes[8..].try_into().ok()?);
    (fp == fingerprint).then_some(offset as usize)
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn unbase64url(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in s.bytes() {
        let v = ALPHABET.iter().position(|a| *a == c)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits & 0xff) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(path: &str, q: &str, items: &[u32]) -> Value {
        let query = Query::parse(Some(q));
        let req = match PageRequest::from_query(path, &query) {
            Ok(r) => r,
            Err(_) => panic!("bad request for {q}"),
        };
        req.reply(items, None).body_json()
    }

    #[test]
    fn base64_round_trip() {
        for len in 0..20 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(unbase64url(&base64url(&bytes)).unwrap(), bytes);
        }
        assert!(unbase64url("a=b").is_none());
    }

    #[test]
    fn no_limit_is_one_page() {
        let v = page("/volumes", "", &[1, 2, 3]);
        assert_eq!(
            v,
            json!({"continuation_token": null, "more_items_remaining": false,
                   "total_item_count": null, "items": [1, 2, 3]})
        );
    }

    #[test]
    fn continuation_tokens_walk_the_list() {
        let items = [1, 2, 3, 4, 5];
        let p1 = page("/volumes", "limit=2", &items);
        assert_eq!(p1["items"], json!([1, 2]));
        assert_eq!(p1["more_items_remaining"], json!(true));
        let t1 = p1["continuation_token"].as_str().unwrap().to_string();
        let p2 = page(
            "/volumes",
            &format!("limit=2&continuation_token={t1}"),
            &items,
        );
        assert_eq!(p2["items"], json!([3, 4]));
        let t2 = p2["continuation_token"].as_str().unwrap().to_string();
        let p3 = page(
            "/volumes",
            &format!("continuation_token={t2}&limit=2"),
            &items,
        );
        assert_eq!(p3["items"], json!([5]));
        assert_eq!(p3["more_items_remaining"], json!(false));
        assert!(p3["continuation_token"].is_null());
    }

    #[test]
    fn token_from_another_query_is_refused() {
        let p1 = page("/volumes", "limit=1", &[1, 2]);
        let t = p1["continuation_token"].as_str().unwrap();
        let q = Query::parse(Some(&format!(
            "limit=1&continuation_token={t}&destroyed=true"
        )));
        assert!(PageRequest::from_query("/volumes", &q).is_err());
        let q = Query::parse(Some(&format!("limit=1&continuation_token={t}")));
        assert!(PageRequest::from_query("/hosts", &q).is_err());
        let q = Query::parse(Some("continuation_token=garbage!"));
        assert!(PageRequest::from_query("/hosts", &q).is_err());
    }

    #[test]
    fn sort_pages_by_offset_without_token() {
        let items = [1, 2, 3, 4, 5];
        let p = page("/volumes", "sort=name-&limit=2&offset=2", &items);
        assert_eq!(p["items"], json!([3, 4]));
        assert_eq!(p["more_items_remaining"], json!(true));
        assert!(p["continuation_token"].is_null());
        let p = page("/volumes", "sort=name&limit=2&offset=9", &items);
        assert_eq!(p["items"], json!([]));
        assert_eq!(p["more_items_remaining"], json!(false));
    }

    #[test]
    fn counts_and_total_only() {
        let p = page("/volumes", "total_item_count=true&limit=1", &[1, 2, 3]);
        assert_eq!(p["total_item_count"], json!(3));
        let p = page("/volumes", "limit=0", &[1, 2, 3]);
        assert_eq!(p["items"], json!([]));
        assert_eq!(p["total_item_count"], json!(3));
        assert_eq!(p["more_items_remaining"], json!(false));
        let p = page("/volumes", "total_only=true", &[1, 2, 3]);
        assert_eq!(p["items"], json!([]));
    }
}
