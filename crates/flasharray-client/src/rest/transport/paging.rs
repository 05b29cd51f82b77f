//! Following list answers page by page.
//!
//! Each request asks for `limit` = the page size ([`ListParams::page_size`], else the
//! client's [`crate::rest::RestArrayBuilder::page_size`], else [`DEFAULT_PAGE_SIZE`]).
//! The next page is requested with the answer's `continuation_token`; arrays give
//! no token when `sort` is set, and then, like Pure's SDK, the next page is asked
//! for by `offset` as long as `more_items_remaining` is true. A token the array
//! repeats is an error instead of an endless loop.

use futures_util::stream::{self, BoxStream, StreamExt};
use reqwest::Method;
use serde::de::DeserializeOwned;

use super::Call;
use super::Transport;
use crate::error::{Error, Result};
use crate::params::{ListParams, Page};
use crate::rest::query::Query;

/// Items asked for per request when the caller sets no page size. Real arrays answer
/// a GET without `limit` in one page, however large; 1000 bounds both the answer
/// size and the client's memory while costing one round trip per thousand objects.
pub const DEFAULT_PAGE_SIZE: u32 = 1000;

enum Next {
    Start,
    Token(String),
    Offset(u64),
    Done,
}

/// The state of one paged listing.
pub(crate) struct Pager {
    path: String,
    query: Query,
    /// `None`: the client's page size.
    page_size: Option<u32>,
    remaining: Option<usize>,
    seen: u64,
    next: Next,
    /// A filter over the bounds every backend enforces: refused before sending.
    refused: Option<String>,
}

impl Pager {
    pub(crate) fn new(path: impl Into<String>, query: Query, page_size: Option<u32>) -> Self {
        Pager {
            path: path.into(),
            query,
            page_size: page_size.filter(|n| *n > 0),
            remaining: None,
            seen: 0,
            next: Next::Start,
            refused: None,
        }
    }

    /// A pager for `/volumes`-like collections from [`ListParams`].
    pub(crate) fn for_list(path: &str, params: &ListParams) -> Self {
        let query = Query::new()
            .csv("names", &params.names)
            .csv("ids", &params.ids)
            .opt("filter", params.filter.as_deref())
            .csv("sort", &params.sort)
            .opt_flag("destroyed", params.destroyed);
        let mut p = Pager::new(path, query, params.page_size);
        p.remaining = params.limit;
        p.refused = params
            .filter
            .as_deref()
            .and_then(crate::params::filter_bound_problem);
        p
    }

    fn done(&self) -> bool {
        matches!(self.next, Next::Done) || self.remaining == Some(0)
    }
}

impl Transport {
    /// Fetches the next page, or `None` when the listing is complete.
    pub(crate) async fn next_page<T: DeserializeOwned>(
        &self,
        pager: &mut Pager,
    ) -> Result<Option<Vec<T>>> {
        if let Some(why) = pager.refused.take() {
            pager.next = Next::Done;
            return Err(Error::InvalidRequest(format!("filter: {why}")));
        }
        if pager.done() {
            return Ok(None);
        }
        let page_size = u64::from(pager.page_size.unwrap_or(self.page_size));
        let limit = match pager.remaining {
            Some(r) => (r as u64).min(page_size),
            None => page_size,
        };
        let mut query = pager.query.clone().number("limit", limit);
        let previous_token = match &pager.next {
            Next::Token(t) => {
                query.set("continuation_token", t);
                Some(t.clone())
            }
            Next::Offset(o) => {
                query = query.number("offset", *o);
                None
            }
            Next::Start | Next::Done => None,
        };
        let reply = self
            .call(Call {
                method: Method::GET,
                path: &pager.path,
                query: &query,
                body: None,
            })
            .await?;
        let page: Page<T> = reply.decode()?;
        let mut items = page.items;
        pager.seen += items.len() as u64;
        if let Some(r) = &mut pager.remaining {
            items.truncate(*r);
            *r -= items.len();
        }
        pager.next = match page.continuation_token.filter(|t| !t.is_empty()) {
            Some(t) if previous_token.as_deref() == Some(t.as_str()) => {
                return Err(Error::Decode {
                    operation: reply.operation.clone(),
                    path: "continuation_token".into(),
                    message: "the array returned the same continuation token twice".into(),
                });
            }
            Some(_) if items.is_empty() => Next::Done,
            Some(t) => Next::Token(t),
            None if page.more_items_remaining == Some(true) && !items.is_empty() => {
                Next::Offset(pager.seen)
            }
            None => Next::Done,
        };
        Ok(Some(items))
    }

    /// Every item of a listing.
    pub(crate) async fn collect_pages<T: DeserializeOwned>(
        &self,
        mut pager: Pager,
    ) -> Result<Vec<T>> {
        let mut all = Vec::new();
        while let Some(mut page) = self.next_page(&mut pager).await? {
            all.append(&mut page);
        }
        Ok(all)
    }

    /// Items of a listing as a stream; one page is held in memory at a time.
    pub(crate) fn page_stream<T: DeserializeOwned + Send + 'static>(
        &self,
        pager: Pager,
    ) -> BoxStream<'_, Result<T>> {
        stream::try_unfold(pager, move |mut pager| async move {
            Ok(self
                .next_page::<T>(&mut pager)
                .await?
                .map(|page| (page, pager)))
        })
        .flat_map(|r: Result<Vec<T>>| match r {
            Ok(page) => stream::iter(page.into_iter().map(Ok)).boxed(),
            Err(e) => stream::iter([Err(e)]).boxed(),
        })
        .boxed()
    }
}
