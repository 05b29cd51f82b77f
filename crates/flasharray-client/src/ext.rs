//! Conveniences built on the [`FlashArray`] trait, for every array alike.
//!
//! [`FlashArrayExt`] has provided methods only and is implemented for every
//! `FlashArray` (the model is `object_store`'s `ObjectStoreExt`): backends implement
//! the REST calls, the conveniences are written once, here.
//!
//! # Looking up names that may not exist
//!
//! Arrays fail a `names=` listing as a whole when any one name is missing ("does not
//! exist"). The `lookup_*` methods read a set of names tolerating missing ones, by one
//! rule:
//!
//! 1. names go in chunks of [`MAX_NAMES_PER_CALL`], the chunks concurrently;
//! 2. each chunk is listed by `names=`;
//! 3. when that fails as [`ErrorKind::NotFound`], the chunk is listed again with the
//!    filter `name=('a','b',...)`, which matches what exists and ignores the rest;
//! 4. when the filter answer is [`ErrorKind::NotFound`] as well, none of the chunk
//!    exists; when the array rejects the filter as [`ErrorKind::Invalid`], everything
//!    is listed and the names are picked locally.
//!
//! So a chunk costs one round trip when every name exists and two when some do not.
//! Names compare case-insensitively; destroyed objects are included.

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
    let chunks = names.chunks(MAX_NAMES_PER_CALL).map(|chunk| async move {
        let wanted: BTreeSet<String> = chunk.iter().map(|n| n.to_ascii_lowercase()).collect();
        let pick = |items: Vec<T>| -> Vec<T> {
            items
                .into_iter()
                .filter(|i| wanted.contains(&i.object_name().to_ascii_lowercase()))
                .collect()
        };
        match list(ListParams::names(chunk)).await {
            Ok(items) => Ok(pick(items)),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let quoted: Vec<String> = chunk.iter().map(|n| format!("'{n}'")).collect();
                let filter = format!("name=({})", quoted.join(","));
                match list(ListParams::all().filter(filter)).await {
                    Ok(items) => Ok(pick(items)),
                    // The filter names nothing but the chunk: none of it exists.
                    Err(e) if e.kind() == ErrorKind::NotFound => Ok(Vec::new()),
                    Err(e) if e.kind() == ErrorKind::Invalid => {
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
#[cfg(feature = "rest")]
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
            .filter(|h| f.contains(&format!("'{h}'")))
            .map(|n| vol(n))
            .collect())
    }

    #[test]
    fn every_name_present_is_one_call() {
        let (found, calls) = run(&["a", "b", "c"], &["a", "B"], by_filter);
        assert_eq!(found, ["a", "B"]);
        assert_eq!(calls, ["names=a,B"]);
    }

    #[test]
    fn a_missing_name_falls_back_to_the_filter() {
        let (found, calls) = run(&["a", "c"], &["a", "b"], by_filter);
        assert_eq!(found, ["a"]);
        assert_eq!(calls, ["names=a,b", "filter=name=('a','b')"]);
    }

    #[test]
    fn a_filter_that_finds_nothing_means_none_exist() {
        let (found, calls) = run(&["c"], &["a"], |_, _| {
            Err(Error::api(400, None, "Volume does not exist."))
        });
        assert!(found.is_empty());
        assert_eq!(calls.len(), 2);
    }

    #[test]
    fn a_rejected_filter_falls_back_to_listing_everything() {
        let (found, calls) = run(&["a", "c"], &["A", "b"], |_, _| {
            Err(Error::api(400, None, "Invalid filter."))
        });
        assert_eq!(found, ["a"]);
        assert_eq!(calls, ["names=A,b", "filter=name=('A','b')", "all"]);
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
