//! `/volumes`: list, stream, create (with creation tags), patch (resize, rename,
//! move, destroy, recover) and eradicate.

use futures_util::stream::BoxStream;

use crate::error::Result;
use crate::models::{NameRef, Volume, VolumePatch, VolumePost};
use crate::name::VolumeName;
use crate::params::ListParams;
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::reconcile::{json, require, same_opt, strings};

/// `GET /volumes`.
pub(super) async fn list(array: &RestArray, params: &ListParams) -> Result<Vec<Volume>> {
    array
        .transport
        .collect_pages(Pager::for_list("volumes", params))
        .await
}

/// `GET /volumes`, one page in memory at a time.
pub(super) fn stream(array: &RestArray, params: ListParams) -> BoxStream<'_, Result<Volume>> {
    array
        .transport
        .page_stream(Pager::for_list("volumes", &params))
}

/// Lost answer: names that now exist, live and of the asked size, are done; absent
/// names are created again; a same-named volume of another size or destroyed is
/// undecided.
pub(super) async fn create(
    array: &RestArray,
    names: &[VolumeName],
    body: &VolumePost,
) -> Result<Vec<Volume>> {
    require("create volumes", names)?;
    array
        .create_tagged(
            strings(names),
            &body.tags,
            |tags| {
                json(&VolumePost {
                    tags: tags.to_vec(),
                    ..body.clone()
                })
                .map(Some)
            },
            |v: &Volume| !v.destroyed && body.provisioned.is_none_or(|p| p == v.provisioned),
            "exists but is not the one asked for",
        )
        .await
}

/// Lost answer: a volume that shows every requested value (under its new name after
/// a rename or move) is done; one still unchanged under its old name is patched
/// again; anything else is undecided.
pub(super) async fn patch(
    array: &RestArray,
    names: &[VolumeName],
    patch: &VolumePatch,
    truncate: bool,
) -> Result<Vec<Volume>> {
    require("patch volumes", names)?;
    array
        .patch_renaming(
            strings(names),
            patch.name.is_some(),
            json(patch)?,
            truncate.then_some("truncate"),
            |n| name_after(n, patch),
            |v: &Volume| matches(v, patch),
        )
        .await
}

/// Lost answer: a volume that no longer exists is done; one still listed is
/// eradicated again.
pub(super) async fn eradicate(array: &RestArray, names: &[VolumeName]) -> Result<()> {
    require("eradicate volumes", names)?;
    array
        .delete_until_gone::<Volume>(strings(names), None)
        .await
}

/// `""` in a move means "out of any pod/group".
pub(super) fn target_ref(r: &NameRef) -> Option<&str> {
    r.name.as_deref().filter(|s| !s.is_empty())
}

/// The name a volume has after `patch` (renames and moves change it).
fn name_after(original: &str, patch: &VolumePatch) -> String {
    let base = patch.name.as_deref().unwrap_or(original);
    let short = base.rsplit("::").next().unwrap_or(base);
    let pod_now = original.split_once("::").map(|(p, _)| p);
    let pod = match &patch.pod {
        Some(r) => target_ref(r),
        None => match base.split_once("::") {
            Some((p, _)) => Some(p),
            None => pod_now,
        },
    };
    match pod {
        Some(p) => format!("{p}::{short}"),
        None => short.to_string(),
    }
}

fn matches(v: &Volume, patch: &VolumePatch) -> bool {
    patch.provisioned.is_none_or(|p| p == v.provisioned)
        && patch.destroyed.is_none_or(|d| d == v.destroyed)
        && patch
            .pod
            .as_ref()
            .is_none_or(|r| same_opt(target_ref(r), v.pod.name.as_deref()))
        && patch.qos.as_ref().is_none_or(|q| {
            q.bandwidth_limit
                .is_none_or(|b| v.qos.bandwidth_limit == Some(b))
                && q.iops_limit.is_none_or(|i| v.qos.iops_limit == Some(i))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_after_renames_and_moves() {
        let p = |name: Option<&str>, pod: Option<&str>| VolumePatch {
            name: name.map(str::to_string),
            pod: pod.map(NameRef::new),
            ..Default::default()
        };
        assert_eq!(name_after("v1", &p(Some("v2"), None)), "v2");
        assert_eq!(name_after("pod1::v1", &p(Some("v2"), None)), "pod1::v2");
        assert_eq!(name_after("v1", &p(None, Some("pod2"))), "pod2::v1");
        assert_eq!(name_after("pod1::v1", &p(None, Some(""))), "v1");
        assert_eq!(name_after("pod1::v1", &p(None, None)), "pod1::v1");
    }
}
