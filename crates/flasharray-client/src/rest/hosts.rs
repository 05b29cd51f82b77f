//! `/hosts`: list, create (with creation tags), patch (initiators, host group,
//! personality, rename) and delete.

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::models::{Host, HostPatch, HostPersonality, HostPost};
use crate::name::HostName;
use crate::params::ListParams;
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::reconcile::{json, require, same_opt, strings};
use crate::rest::volumes::target_ref;
use crate::wwn::Wwn;

/// `GET /hosts`; hosts have no ids.
pub(super) async fn list(array: &RestArray, params: &ListParams) -> Result<Vec<Host>> {
    if !params.ids.is_empty() {
        return Err(Error::InvalidRequest(
            "hosts have no ids; select by name".into(),
        ));
    }
    array
        .transport
        .collect_pages(Pager::for_list("hosts", params))
        .await
}

/// Lost answer: a host that now exists with exactly the asked initiators is done; an
/// absent one is created again; a same-named host with other initiators is
/// undecided.
pub(super) async fn create(
    array: &RestArray,
    names: &[HostName],
    body: &HostPost,
) -> Result<Vec<Host>> {
    require("create hosts", names)?;
    array
        .create_tagged(
            strings(names),
            &body.tags,
            |tags| {
                json(&HostPost {
                    tags: tags.to_vec(),
                    ..body.clone()
                })
                .map(Some)
            },
            |h: &Host| has_initiators(h, body),
            "exists with other initiators",
        )
        .await
}

/// Lost answer: a host showing every requested value (under its new name after a
/// rename) is done; an unchanged one is patched again.
pub(super) async fn patch(
    array: &RestArray,
    names: &[HostName],
    patch: &HostPatch,
) -> Result<Vec<Host>> {
    require("patch hosts", names)?;
    array
        .patch_renaming(
            strings(names),
            patch.name.is_some(),
            json(patch)?,
            None,
            |n| patch.name.clone().unwrap_or_else(|| n.to_string()),
            |h: &Host| matches(h, patch),
        )
        .await
}

/// Lost answer: a host that no longer exists is done.
pub(super) async fn delete(array: &RestArray, names: &[HostName]) -> Result<()> {
    require("delete hosts", names)?;
    array.delete_until_gone::<Host>(strings(names), None).await
}

/// Initiators in one comparable form: WWNs as the array stores them (text that is
/// no WWN compared upper-cased), IQNs and NQNs lower-cased.
fn normalize_initiators(list: &[String], wwn: bool) -> BTreeSet<String> {
    list.iter()
        .map(|s| {
            if wwn {
                Wwn::new(s).map_or_else(|_| s.to_ascii_uppercase(), |w| w.as_str().to_string())
            } else {
                s.to_ascii_lowercase()
            }
        })
        .collect()
}

struct Initiators {
    iqns: BTreeSet<String>,
    nqns: BTreeSet<String>,
    wwns: BTreeSet<String>,
}

impl Initiators {
    fn of(h: &Host) -> Self {
        Initiators {
            iqns: normalize_initiators(&h.iqns, false),
            nqns: normalize_initiators(&h.nqns, false),
            wwns: normalize_initiators(&h.wwns, true),
        }
    }
}

/// Case-insensitive membership (WWNs are already upper-cased, IQNs lower-cased).
fn contains_ci(set: &BTreeSet<String>, item: &str) -> bool {
    set.iter().any(|s| s.eq_ignore_ascii_case(item))
}

fn set_eq_ci(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    let lower = |s: &BTreeSet<String>| {
        s.iter()
            .map(|x| x.to_ascii_lowercase())
            .collect::<BTreeSet<_>>()
    };
    lower(a) == lower(b)
}

fn matches(h: &Host, patch: &HostPatch) -> bool {
    let have = Initiators::of(h);
    let replaced = |want: &Option<Vec<String>>, have: &BTreeSet<String>, wwn: bool| {
        want.as_ref()
            .is_none_or(|w| set_eq_ci(&normalize_initiators(w, wwn), have))
    };
    let added = |want: &[String], have: &BTreeSet<String>, wwn: bool| {
        normalize_initiators(want, wwn)
            .iter()
            .all(|w| contains_ci(have, w))
    };
    let removed = |want: &[String], have: &BTreeSet<String>, wwn: bool| {
        normalize_initiators(want, wwn)
            .iter()
            .all(|w| !contains_ci(have, w))
    };
    replaced(&patch.iqns, &have.iqns, false)
        && replaced(&patch.nqns, &have.nqns, false)
        && replaced(&patch.wwns, &have.wwns, true)
        && added(&patch.add_iqns, &have.iqns, false)
        && added(&patch.add_nqns, &have.nqns, false)
        && added(&patch.add_wwns, &have.wwns, true)
        && removed(&patch.remove_iqns, &have.iqns, false)
        && removed(&patch.remove_nqns, &have.nqns, false)
        && removed(&patch.remove_wwns, &have.wwns, true)
        && patch
            .host_group
            .as_ref()
            .is_none_or(|g| same_opt(target_ref(g), h.host_group.name.as_deref()))
        && patch
            .personality
            .as_ref()
            .is_none_or(|p| h.personality.as_ref().map(HostPersonality::as_str) == Some(p.as_str()))
}

fn has_initiators(h: &Host, body: &HostPost) -> bool {
    let have = Initiators::of(h);
    set_eq_ci(&normalize_initiators(&body.iqns, false), &have.iqns)
        && set_eq_ci(&normalize_initiators(&body.nqns, false), &have.nqns)
        && set_eq_ci(&normalize_initiators(&body.wwns, true), &have.wwns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::NameRef;

    #[test]
    fn host_patch_comparison() {
        let h = Host {
            name: "h1".into(),
            wwns: vec!["2100F4C7AA002706".into()],
            host_group: NameRef::new("hg1"),
            ..Default::default()
        };
        let add = HostPatch {
            add_wwns: vec!["21:00:f4:c7:aa:00:27:06".into()],
            ..Default::default()
        };
        assert!(matches(&h, &add));
        let leave = HostPatch {
            host_group: Some(NameRef::new("")),
            ..Default::default()
        };
        assert!(!matches(&h, &leave));
        let join = HostPatch {
            host_group: Some(NameRef::new("HG1")),
            ..Default::default()
        };
        assert!(matches(&h, &join));
    }

    #[test]
    fn create_compares_initiator_sets_in_any_form() {
        let h = Host {
            name: "h1".into(),
            wwns: vec!["2100F4C7AA002706".into()],
            iqns: vec!["iqn.2024-01.io.pxfa:node1".into()],
            ..Default::default()
        };
        let same = HostPost {
            wwns: vec!["21:00:f4:c7:aa:00:27:06".into()],
            iqns: vec!["IQN.2024-01.io.pxfa:NODE1".into()],
            ..Default::default()
        };
        assert!(has_initiators(&h, &same));
        let other = HostPost {
            wwns: vec!["21:00:f4:c7:aa:00:27:07".into()],
            ..same.clone()
        };
        assert!(!has_initiators(&h, &other));
    }
}
