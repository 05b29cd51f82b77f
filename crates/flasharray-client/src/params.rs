//! Query parameters shared by every backend.

use serde::{Deserialize, Serialize};

use crate::name::{HostGroupName, HostName};

/// Longest filter expression any backend accepts, in bytes: the simulator's request
/// line is capped at 64 KiB, and the embedded mock, which has no URL, must not copy
/// a many-megabyte filter before refusing it (issue #28).
pub const MAX_FILTER_LEN: usize = 64 * 1024;

/// Deepest nesting of `(...)` and `not(...)` any backend accepts. One list request
/// nested 5,000 deep overflowed the simulator's stack and aborted it (issue #28);
/// real filters nest a few levels.
pub const MAX_FILTER_DEPTH: usize = 64;

/// Most terms (comparisons, tests, `contains`, each value of a value list) in one
/// filter: matching costs terms x items. pxfa sends at most 100 names in one
/// membership filter.
pub const MAX_FILTER_TERMS: usize = 1024;

/// Why `filter` is over the length or nesting bound, checked without parsing it
/// (quoted text does not count towards the nesting). The REST client refuses such a
/// filter before sending it; the mock's parser enforces the same bounds, and the
/// number of terms, as it parses.
#[cfg_attr(not(feature = "rest"), allow(dead_code))] // only the REST client sends filters
pub(crate) fn filter_bound_problem(filter: &str) -> Option<String> {
    if filter.len() > MAX_FILTER_LEN {
        return Some(format!(
            "the filter is {} bytes, more than the {MAX_FILTER_LEN} a filter may have",
            filter.len()
        ));
    }
    let (mut depth, mut deepest, mut quote) = (0usize, 0usize, None);
    for c in filter.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (None, ')') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    (deepest > MAX_FILTER_DEPTH)
        .then(|| format!("the filter nests parentheses more than {MAX_FILTER_DEPTH} levels deep"))
}

/// Selection for list calls on volumes, hosts, host groups and pods.
///
/// Backends return **every** matching item, following continuation tokens;
/// `page_size` only sets how many items each REST call asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ListParams {
    /// Only these names; every one must exist, else the call fails (as on the array).
    pub names: Vec<String>,
    /// Only these ids (volumes, pods).
    pub ids: Vec<String>,
    /// Array filter expression, e.g. `name='px-*' and provisioned>1073741824`.
    pub filter: Option<String>,
    /// Sort keys; a trailing `-` sorts descending (`name-`).
    pub sort: Vec<String>,
    /// `Some(true)` only destroyed, `Some(false)` only live, `None` both.
    pub destroyed: Option<bool>,
    /// Stop after this many items.
    pub limit: Option<usize>,
    /// Items per REST call.
    pub page_size: Option<u32>,
}

impl ListParams {
    /// No selection: every object, live and destroyed (add [`ListParams::destroyed`] to
    /// pick one).
    pub fn all() -> Self {
        Self::default()
    }

    /// Only the given names.
    pub fn names<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        ListParams {
            names: names.into_iter().map(|s| s.as_ref().to_string()).collect(),
            ..Self::default()
        }
    }

    /// Adds a filter expression.
    pub fn filter(mut self, f: impl Into<String>) -> Self {
        self.filter = Some(f.into());
        self
    }

    /// Restricts to destroyed (`true`) or live (`false`) objects.
    pub fn destroyed(mut self, d: bool) -> Self {
        self.destroyed = Some(d);
        self
    }

    /// Items per REST call for this listing, over the client's page size; `0` keeps the
    /// client's.
    pub fn page_size(mut self, n: u32) -> Self {
        self.page_size = Some(n);
        self
    }
}

/// Selection for `/connections`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConnectionParams {
    /// Only connections seen by these hosts (private or through their group).
    pub host_names: Vec<String>,
    /// Only connections of these host groups.
    pub host_group_names: Vec<String>,
    /// Only connections of these volumes.
    pub volume_names: Vec<String>,
    /// Array filter expression on connection rows, e.g. `lun>10`.
    pub filter: Option<String>,
    /// Sort keys; a trailing `-` sorts descending (`lun-`).
    pub sort: Vec<String>,
    /// Items per REST call.
    pub page_size: Option<u32>,
}

/// Selection for membership listings (`/host-groups/hosts`, `/pods/arrays`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemberParams {
    /// Only rows of these groups (host groups, or pods for `/pods/arrays`); empty for every
    /// group.
    pub group_names: Vec<String>,
    /// Only rows of these members (hosts, or arrays for `/pods/arrays`); empty for every
    /// member.
    pub member_names: Vec<String>,
}

/// Selection for tag listings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TagParams {
    /// Only tags of these objects.
    pub resource_names: Vec<String>,
    /// Only tags in these namespaces.
    pub namespaces: Vec<String>,
    /// Include tags of destroyed objects (`None`: the array's default).
    pub resource_destroyed: Option<bool>,
}

/// Kinds of objects that carry tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TagResource {
    /// `/volumes/tags`.
    Volume,
    /// `/hosts/tags`.
    Host,
    /// `/host-groups/tags`.
    HostGroup,
    /// `/pods/tags`.
    Pod,
}

impl TagResource {
    /// The collection path segment (`volumes`, `hosts`, `host-groups`, `pods`).
    pub fn collection(self) -> &'static str {
        match self {
            TagResource::Volume => "volumes",
            TagResource::Host => "hosts",
            TagResource::HostGroup => "host-groups",
            TagResource::Pod => "pods",
        }
    }
}

/// The host side of a connection: one host (private LUN) or one host group (shared
/// LUN). The REST API allows several volumes per call but only one host or group.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ConnectionTarget {
    /// A private connection.
    Host(HostName),
    /// A shared connection.
    HostGroup(HostGroupName),
}

impl ConnectionTarget {
    /// The host or host group name.
    pub fn name(&self) -> &str {
        match self {
            ConnectionTarget::Host(h) => h.as_str(),
            ConnectionTarget::HostGroup(g) => g.as_str(),
        }
    }
}

impl std::fmt::Display for ConnectionTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectionTarget::Host(h) => write!(f, "host {h}"),
            ConnectionTarget::HostGroup(g) => write!(f, "host group {g}"),
        }
    }
}

/// One page of a list answer, as the REST API shapes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(feature = "rest"), allow(dead_code))] // only the REST client pages
pub(crate) struct Page<T> {
    /// Items of this page.
    pub items: Vec<T>,
    /// Token for the next page, if any.
    pub continuation_token: Option<String>,
    /// Whether more items follow.
    pub more_items_remaining: Option<bool>,
    /// Total count, when asked for.
    pub total_item_count: Option<u64>,
}

#[cfg(test)]
mod filter_bound_tests {
    use super::*;

    #[test]
    fn length_and_nesting_are_bounded_quotes_aside() {
        assert_eq!(filter_bound_problem("name='a' and (x=1 or not(y=2))"), None);
        assert!(filter_bound_problem(&"(".repeat(5000)).is_some());
        assert!(filter_bound_problem(&"not(".repeat(MAX_FILTER_DEPTH + 1)).is_some());
        assert_eq!(filter_bound_problem(&"not(".repeat(MAX_FILTER_DEPTH)), None);
        let quoted = format!("name='{}'", "(".repeat(500));
        assert_eq!(filter_bound_problem(&quoted), None);
        assert!(filter_bound_problem(&"a".repeat(MAX_FILTER_LEN + 1)).is_some());
    }
}
