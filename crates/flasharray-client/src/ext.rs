//! Conveniences built on the [`FlashArray`] trait, for every array alike.
//!
//! [`FlashArrayExt`] has provided methods only and is implemented for every
//! `FlashArray` (the model is `object_store`'s `ObjectStoreExt`): backends implement
//! the REST calls, the conveniences are written once, here.
//!
//! # Looking up names that may not exist
//!
//! Arrays fail a `names=` listing as a whole when any one name is missing ("does not
//! exist"). The `lookup_*` methods read a set of names tolerating missing ones, in
//! one round trip, by one rule:
//!
//! 1. names go in chunks of at most [`MAX_NAMES_PER_CALL`] names and
//!    [`MAX_FILTER_BYTES`] of encoded filter, the chunks concurrently;
//! 2. each chunk is listed with the filter `name=('a','b',...)`, which matches what
//!    exists and ignores the rest; the names are picked locally, ignoring case;
//! 3. an answer [`ErrorKind::NotFound`] to the filter means none of the chunk exists;
//! 4. only when the array rejects the filter itself as [`ErrorKind::Invalid`] (an
//!    older Purity) is the chunk listed by `names=`, and when that fails as
//!    [`ErrorKind::NotFound`], everything is listed and the names are picked locally.
//!
//! Names cannot contain `'` or `*`, so quoting them is safe. Destroyed objects are
//! included, for recovery.

use std::collections::BTreeSet;
use std::future::Future;

use async_trait::async_trait;
use futures_util::future::join_all;

use crate::array::FlashArray;
use crate::error::{ErrorKind, Result};
use crate::models::{Host, HostGroup, Pod, Volume};
use crate::params::ListParams;

/// Most names sent in one REST call. Names travel in the query string; 100 names of
/// up to 63 characters stay well below the 8 KiB URL limit common to HTTP servers.
pub const MAX_NAMES_PER_CALL: usize = 100;

/// Most bytes of one percent-encoded `name=(...)` filter: front ends in the style of
/// nginx cap a request line at 8 KiB, and `'` alone encodes as three bytes.
pub const MAX_FILTER_BYTES: usize = 6_000;

/// Conveniences every [`FlashArray`] has; see the module text for the lookup rule.
#[async_trait]
pub trait FlashArrayExt: FlashArray {
    /// The named volumes that exist, destroyed ones included; missing names are
    /// skipped.
    async fn lookup_volumes(&self, names: &[String]) -> Result<Vec<Volume>> {
        lookup(names, |p| async move { self.list_volumes(&p).await }).await
    }

    /// The named hosts that exist; missing names are skipped.
    async fn lookup_hosts(&self, names: &[String]) -> Result<Vec<Host>> {
        lookup(names, |p| async move { self.list_hosts(&p).await }).await
    }

    /// The named host groups that exist; missing names are skipped.
    async fn lookup_host_groups(&self, names: &[String]) -> Result<Vec<HostGroup>> {
        lookup(names, |p| async move { self.list_host_groups(&p).await }).await
    }

    /// The named pods that exist, destroyed ones included; missing names are skipped.
    async fn lookup_pods(&self, names: &[String]) -> Result<Vec<Pod>> {
        lookup(names, |p| async move { self.list_pods(&p).await }).await
    }
}

impl<T: FlashArray + ?Sized> FlashArrayExt for T {}

/// Objects that have a name, for lookups and existence checks.
pub(crate) trait Named {
    fn object_name(&self) -> &str;
}

macro_rules! named {
    ($($ty:ty),*) => {$(
        impl Named for $ty {
            fn object_name(&self) -> &str {
                &self.name
            }
        }
    )*};
}

named!(Volume, Host, HostGroup, Pod);

/// Bytes `c` takes in a query string once percent-encoded.
fn encoded_len(c: u8) -> usize {
    if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'~') {
        1
    } else {
        3
    }
}

/// The encoded size of `'name',` in a membership filter.
fn quoted_cost(name: &str) -> usize {
    name.bytes().map(encoded_len).sum::<usize>() + 3 * 3
}

/// Splits `names` into chunks of at most [`MAX_NAMES_PER_CALL`] names whose
/// membership filter stays within [`MAX_FILTER_BYTES`] encoded.
pub(crate) fn filter_chunks(names: &[String]) -> Vec<&[String]> {
    // `name=(` and `)`, encoded.
    const FRAME: usize = 4 + 3 + 3 + 3;
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, FRAME);
    for (i, n) in names.iter().enumerate() {
        let cost = quoted_cost(n);
        if i > start && (i - start == MAX_NAMES_PER_CALL || bytes + cost > MAX_FILTER_BYTES) {
            out.push(&names[start..i]);
            (start, bytes) = (i, FRAME);
        }
        bytes += cost;
    }
    if start < names.len() {
        out.push(&names[start..]);
    }
    out
}

/// `field=('a','b',...)`: membership of `field` in `names`.
pub fn membership_filter(field: &str, names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    format!("{field}=({})", quoted.join(","))
}

/// The lookup rule of the module text, for one collection.
async fn lookup<T, F, Fut>(names: &[String], list: F) -> Result<Vec<T>>
where
    T: Named,
    F: Fn(ListParams) -> Fut,
    Fut: Future<Output = Result<Vec<T>>>,
{
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let list = &list;
    let chunks = filter_chunks(names).into_iter().map(|chunk| async move {
        let wanted: BTreeSet<String> = chunk.iter().map(|n| n.to_ascii_lowercase()).collect();
        let pick = |items: Vec<T>| -> Vec<T> {
            items
                .into_iter()
                .filter(|i| wanted.contains(&i.object_name().to_ascii_lowercase()))
                .collect()
        };
        match list(ListParams::all().filter(membership_filter("name", chunk))).await {
            Ok(items) => Ok(pick(items)),
            // The filter names nothing but the chunk: none of it exists.
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) if e.kind() == ErrorKind::Invalid => {
                match list(ListParams::names(chunk)).await {
                    Ok(items) => Ok(pick(items)),
                    Err(e) if e.kind() == ErrorKind::NotFound => {
                        list(ListParams::all()).await.map(pick)
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    });
    let mut out = Vec::new();
    for r in join_all(chunks).await {
        out.extend(r?);
    }
    Ok(out)
}

/// Finds `name` among `items`, ignoring case as the array does.
pub(crate) fn find<'a, T: Named>(items: &'a [T], name: &str) -> Option<&'a T> {
    items
        .iter()
        .find(|i| crate::name::same_name(i.object_name(), name))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::Error;

    fn vol(name: &str) -> Volume {
        Volume {
            name: name.into(),
            ..Default::default()
        }
    }

    /// A listing over `have` that answers `names=` as arrays do and the filter as
    /// `filter` says, recording each call's selection.
    fn run(
        have: &[&str],
        ask: &[&str],
        filter: fn(&[&str], &str) -> Result<Vec<Volume>>,
    ) -> (Vec<String>, Vec<String>) {
        let calls = Mutex::new(Vec::new());
        let names: Vec<String> = ask.iter().map(|s| s.to_string()).collect();
        let list = |p: ListParams| {
            let calls = &calls;
            async move {
                if !p.names.is_empty() {
                    calls
                        .lock()
                        .unwrap()
                        .push(format!("names={}", p.names.join(",")));
                    if let Some(m) = p
                        .names
                        .iter()
                        .find(|n| !have.iter().any(|h| h.eq_ignore_ascii_case(n)))
                    {
                        return Err(Error::api(400, Some(m), "Volume does not exist."));
                    }
                    return Ok(p.names.iter().map(|n| vol(n)).collect());
                }
                match p.filter {
                    Some(f) => {
                        calls.lock().unwrap().push(format!("filter={f}"));
                        filter(have, &f)
                    }
                    None => {
                        calls.lock().unwrap().push("all".into());
                        Ok(have.iter().map(|n| vol(n)).collect())
                    }
                }
            }
        };
        let found = futures_util::FutureExt::now_or_never(lookup(&names, list))
            .expect("ready at once")
            .unwrap();
        let found = found.into_iter().map(|v| v.name).collect();
        (found, calls.into_inner().unwrap())
    }

    fn by_filter(have: &[&str], f: &str) -> Result<Vec<Volume>> {
        Ok(have
            .iter()
            .filter(|h| {
                f.to_ascii_lowercase()
                    .contains(&format!("'{}'", h.to_ascii_lowercase()))
            })
            .map(|n| vol(n))
            .collect())
    }

    #[test]
    fn every_name_present_is_one_filtered_call() {
        let (found, calls) = run(&["a", "b", "c"], &["a", "B"], by_filter);
        assert_eq!(found, ["a", "b"]);
        assert_eq!(calls, ["filter=name=('a','B')"]);
    }

    #[test]
    fn a_missing_name_costs_nothing_more() {
        let (found, calls) = run(&["a", "c"], &["a", "b"], by_filter);
        assert_eq!(found, ["a"]);
        assert_eq!(calls, ["filter=name=('a','b')"]);
    }

    #[test]
    fn a_filter_that_finds_nothing_means_none_exist() {
        let (found, calls) = run(&["c"], &["a"], |_, _| {
            Err(Error::api(400, None, "Volume does not exist."))
        });
        assert!(found.is_empty());
        assert_eq!(calls, ["filter=name=('a')"]);
    }

    #[test]
    fn a_rejected_filter_falls_back_to_names_then_to_listing_everything() {
        let rejected = |_: &[&str], _: &str| Err(Error::api(400, None, "Invalid filter."));
        let (found, calls) = run(&["a", "c"], &["A", "c"], rejected);
        assert_eq!(found, ["A", "c"]);
        assert_eq!(calls, ["filter=name=('A','c')", "names=A,c"]);
        let (found, calls) = run(&["a", "c"], &["A", "b"], rejected);
        assert_eq!(found, ["a"]);
        assert_eq!(calls, ["filter=name=('A','b')", "names=A,b", "all"]);
    }

    #[test]
    fn long_names_are_chunked_by_encoded_filter_size() {
        let names: Vec<String> = (0..100)
            .map(|i| format!("{i:03}{}", "x".repeat(60)))
            .collect();
        let chunks = filter_chunks(&names);
        assert!(
            chunks.len() > 1,
            "100 names of 63 bytes exceed {MAX_FILTER_BYTES}"
        );
        assert_eq!(chunks.iter().map(|c| c.len()).sum::<usize>(), 100);
        for c in &chunks {
            let f = membership_filter("name", c);
            let encoded: usize = f.bytes().map(encoded_len).sum();
            assert!(encoded <= MAX_FILTER_BYTES, "{encoded}");
        }
        let short: Vec<String> = (0..250).map(|i| format!("v{i}")).collect();
        let sizes: Vec<usize> = filter_chunks(&short).iter().map(|c| c.len()).collect();
        assert_eq!(sizes, [100, 100, 50]);
        assert!(filter_chunks(&[]).is_empty());
    }

    #[test]
    fn names_go_in_chunks() {
        let have: Vec<String> = (0..250).map(|i| format!("v{i}")).collect();
        let have_ref: Vec<&str> = have.iter().map(String::as_str).collect();
        let (found, calls) = run(&have_ref, &have_ref, by_filter);
        assert_eq!(found.len(), 250);
        assert_eq!(calls.len(), 3);
    }
}
