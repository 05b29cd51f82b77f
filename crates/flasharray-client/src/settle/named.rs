//! The named collections (volumes, hosts, host groups, pods): creating with creation
//! tags, patching with a possible rename, deleting until gone.

use std::collections::BTreeSet;

use futures_util::future::BoxFuture;

use super::{Settling, Verdict, rounds, split};
use crate::array::signature::*;
use crate::ext::{FlashArrayExt, Named, find};
use crate::name::same_name;
use crate::wwn::Wwn;

/// A named collection: its tag kind, its noun in messages, its lookup.
pub(super) trait Collection: Named + Clone + Send + Sync + 'static {
    /// The tag kind, which also names the collection.
    const KIND: TagResource;
    /// The object's name in messages.
    const NOUN: &'static str;
    /// The named objects that exist (see [`crate::ext`] for the rule).
    fn lookup<'a, A: FlashArray>(a: &'a A, names: &'a [String])
    -> BoxFuture<'a, Result<Vec<Self>>>;
}

macro_rules! collection {
    ($($ty:ident $kind:ident $noun:literal $lookup:ident;)*) => {$(
        impl Collection for $ty {
            const KIND: TagResource = TagResource::$kind;
            const NOUN: &'static str = $noun;
            fn lookup<'a, A: FlashArray>(
                a: &'a A,
                names: &'a [String],
            ) -> BoxFuture<'a, Result<Vec<Self>>> {
                a.$lookup(names)
            }
        }
    )*};
}

collection! {
    Volume Volume "volume" lookup_volumes;
    Host Host "host" lookup_hosts;
    HostGroup HostGroup "host group" lookup_host_groups;
    Pod Pod "pod" lookup_pods;
}

/// Names as strings, for re-reads.
pub(super) fn strings<N: AsRef<str>>(names: &[N]) -> Vec<String> {
    names.iter().map(|n| n.as_ref().to_string()).collect()
}

/// An object a create made, with the tags it still lacks.
type Made<T> = (T, Vec<Tag>);

/// Objects a create answered: made whole.
fn fully_made<T>(objects: Vec<T>) -> Vec<Made<T>> {
    objects.into_iter().map(|o| (o, Vec::new())).collect()
}

/// The `tags` that `have` (a tag listing) does not show on the object `name`, as
/// tags to put on it.
fn missing_tags(have: &[Tag], name: &str, tags: &[TagBody]) -> Vec<Tag> {
    tags.iter()
        .filter(|t| {
            !have.iter().any(|h| {
                h.resource
                    .name
                    .as_deref()
                    .is_some_and(|r| same_name(r, name))
                    && h.key == t.key
                    && h.value == t.value
                    && h.namespace.as_deref().unwrap_or("default")
                        == t.namespace.as_deref().unwrap_or("default")
            })
        })
        .map(|t| t.on(name.to_string()))
        .collect()
}

/// The first REST minor version whose creates carry their tags: 2.39 for the
/// named creates, 2.32 for `POST /volumes/batch` (the REST client's rule, one place).
#[cfg(feature = "rest")]
fn tags_in_create_since(batch: bool) -> u32 {
    use crate::rest::ApiVersion;
    if batch {
        ApiVersion::VOLUME_BATCH.minor
    } else {
        ApiVersion::TAGS_IN_CREATE.minor
    }
}

/// Without the REST client no array here creates in two calls.
#[cfg(not(feature = "rest"))]
fn tags_in_create_since(_: bool) -> u32 {
    0
}

impl<A: FlashArray> Settling<A> {
    pub(super) async fn create_volumes(
        &self,
        names: &[VolumeName],
        body: &VolumePost,
    ) -> Result<Vec<Volume>> {
        let asked =
            |v: &Volume| !v.destroyed && body.provisioned.is_none_or(|p| p == v.provisioned);
        self.create_named(
            names,
            &body.tags,
            &asked,
            "exists but is not the one asked for",
            |p| Box::pin(async move { self.inner.create_volumes(&p, body).await }),
        )
        .await
    }

    pub(super) async fn create_hosts(
        &self,
        names: &[HostName],
        body: &HostPost,
    ) -> Result<Vec<Host>> {
        let asked = |h: &Host| has_initiators(h, body);
        self.create_named(
            names,
            &body.tags,
            &asked,
            "exists with other initiators",
            |p| Box::pin(async move { self.inner.create_hosts(&p, body).await }),
        )
        .await
    }

    pub(super) async fn create_host_groups(
        &self,
        names: &[HostGroupName],
        body: &HostGroupPost,
    ) -> Result<Vec<HostGroup>> {
        self.create_named(names, &body.tags, &|_: &HostGroup| true, "exists", |p| {
            Box::pin(async move { self.inner.create_host_groups(&p, body).await })
        })
        .await
    }

    pub(super) async fn create_pods(&self, names: &[PodName], body: &PodPost) -> Result<Vec<Pod>> {
        let asked =
            |p: &Pod| !p.destroyed && body.quota_limit.is_none_or(|q| p.quota_limit == Some(q));
        self.create_named(
            names,
            &body.tags,
            &asked,
            "exists but is not the one asked for",
            |p| Box::pin(async move { self.inner.create_pods(&p, body).await }),
        )
        .await
    }

    pub(super) async fn patch_volumes(
        &self,
        names: &[VolumeName],
        patch: &VolumePatch,
        truncate: bool,
    ) -> Result<Vec<Volume>> {
        let after = |n: &str| volume_name_after(n, patch);
        self.patch_named(names, &after, &|v: &Volume| volume_matches(v, patch), |p| {
            Box::pin(async move { self.inner.patch_volumes(&p, patch, truncate).await })
        })
        .await
    }

    pub(super) async fn patch_hosts(
        &self,
        names: &[HostName],
        patch: &HostPatch,
    ) -> Result<Vec<Host>> {
        let after = |n: &str| patch.name.clone().unwrap_or_else(|| n.to_string());
        self.patch_named(names, &after, &|h: &Host| host_matches(h, patch), |p| {
            Box::pin(async move { self.inner.patch_hosts(&p, patch).await })
        })
        .await
    }

    pub(super) async fn patch_pods(
        &self,
        names: &[PodName],
        patch: &PodPatch,
        destroy_contents: bool,
    ) -> Result<Vec<Pod>> {
        let after = |n: &str| patch.name.clone().unwrap_or_else(|| n.to_string());
        let matches = |p: &Pod| {
            patch.destroyed.is_none_or(|d| d == p.destroyed)
                && patch.quota_limit.is_none_or(|q| p.quota_limit == Some(q))
        };
        self.patch_named(names, &after, &matches, |p| {
            Box::pin(async move { self.inner.patch_pods(&p, patch, destroy_contents).await })
        })
        .await
    }

    pub(super) async fn eradicate_volumes(&self, names: &[VolumeName]) -> Result<()> {
        self.delete_named::<Volume, _>(names, |p| {
            Box::pin(async move { self.inner.eradicate_volumes(&p).await })
        })
        .await
    }

    pub(super) async fn delete_hosts(&self, names: &[HostName]) -> Result<()> {
        self.delete_named::<Host, _>(names, |p| {
            Box::pin(async move { self.inner.delete_hosts(&p).await })
        })
        .await
    }

    pub(super) async fn delete_host_groups(&self, names: &[HostGroupName]) -> Result<()> {
        self.delete_named::<HostGroup, _>(names, |p| {
            Box::pin(async move { self.inner.delete_host_groups(&p).await })
        })
        .await
    }

    pub(super) async fn eradicate_pods(
        &self,
        names: &[PodName],
        eradicate_contents: bool,
    ) -> Result<()> {
        self.delete_named::<Pod, _>(names, |p| {
            Box::pin(async move { self.inner.eradicate_pods(&p, eradicate_contents).await })
        })
        .await
    }

    /// Per item: its volume now exists, live, of its size and with its tags: done;
    /// absent: sent again; anything else: undecided. Tags missing where the batch
    /// does not carry them (see the module text) are put afterwards.
    pub(super) async fn create_volumes_batch(
        &self,
        items: &[VolumeBatchPost],
    ) -> Result<Vec<Volume>> {
        let made = rounds(
            "create_volumes_batch",
            items.to_vec(),
            |p| Box::pin(async move { Ok(fully_made(self.inner.create_volumes_batch(&p).await?)) }),
            |p| Box::pin(self.batch_verdict(p)),
        )
        .await?;
        self.put_missing_tags(TagResource::Volume, made).await
    }

    async fn batch_verdict(
        &self,
        pending: Vec<VolumeBatchPost>,
    ) -> Result<Verdict<VolumeBatchPost, Made<Volume>>> {
        let names: Vec<String> = pending.iter().map(|i| i.name.to_string()).collect();
        let found = self.inner.lookup_volumes(&names).await?;
        let have = self.tags_of(TagResource::Volume, &found).await?;
        let mut done = Vec::new();
        let mut rest = Vec::new();
        for item in pending {
            match find(&found, item.name.as_str()) {
                Some(v) if !v.destroyed && item.provisioned.is_none_or(|p| p == v.provisioned) => {
                    let missing = missing_tags(&have, &v.name, &item.tags);
                    done.push((v.clone(), missing));
                }
                Some(_) => {
                    return Ok(Verdict::Undecided(format!(
                        "volume {} exists but is not the one asked for",
                        item.name
                    )));
                }
                None => rest.push(item),
            }
        }
        self.untagged_verdict("volume", true, done, rest).await
    }

    /// The tags of `objects`, none asked for when there are none.
    async fn tags_of<T: Named>(&self, kind: TagResource, objects: &[T]) -> Result<Vec<Tag>> {
        if objects.is_empty() {
            return Ok(Vec::new());
        }
        let params = TagParams {
            resource_names: objects
                .iter()
                .map(|o| o.object_name().to_string())
                .collect(),
            ..Default::default()
        };
        self.inner.list_tags(kind, &params).await
    }

    /// A create: names that now exist, pass `is_asked` and carry `tags` are done;
    /// absent names are created again; a same-named object that fails `is_asked`
    /// (`"{noun} {name} {mismatch}"`) or lacks the tags is undecided (but where the
    /// create does not carry the tags, see the module text: those are put then).
    async fn create_named<'f, T, N>(
        &'f self,
        names: &[N],
        tags: &'f [TagBody],
        is_asked: &'f (impl Fn(&T) -> bool + Sync),
        mismatch: &'f str,
        write: impl Fn(Vec<N>) -> BoxFuture<'f, Result<Vec<T>>>,
    ) -> Result<Vec<T>>
    where
        T: Collection,
        N: AsRef<str> + Clone + Send + Sync + 'f,
    {
        let write = &write;
        let made = rounds(
            &format!("create {}", T::KIND.collection()),
            names.to_vec(),
            |p| {
                let sent = write(p);
                Box::pin(async move { Ok(fully_made(sent.await?)) })
            },
            move |p| Box::pin(self.create_verdict(p, tags, is_asked, mismatch)),
        )
        .await?;
        self.put_missing_tags(T::KIND, made).await
    }

    /// The verdict of [`Self::create_named`]'s re-read.
    async fn create_verdict<T, N>(
        &self,
        pending: Vec<N>,
        tags: &[TagBody],
        is_asked: &(impl Fn(&T) -> bool + Sync),
        mismatch: &str,
    ) -> Result<Verdict<N, Made<T>>>
    where
        T: Collection,
        N: AsRef<str>,
    {
        let found = T::lookup(&self.inner, &strings(&pending)).await?;
        let mut done = Vec::new();
        let mut rest = Vec::new();
        for n in pending {
            match find(&found, n.as_ref()) {
                Some(o) if is_asked(o) => done.push(o.clone()),
                Some(_) => {
                    let why = format!("{} {} {mismatch}", T::NOUN, n.as_ref());
                    return Ok(Verdict::Undecided(why));
                }
                None => rest.push(n),
            }
        }
        let have = if tags.is_empty() {
            Vec::new()
        } else {
            self.tags_of(T::KIND, &done).await?
        };
        let done = done
            .into_iter()
            .map(|o| {
                let missing = missing_tags(&have, o.object_name(), tags);
                (o, missing)
            })
            .collect();
        self.untagged_verdict(T::NOUN, false, done, rest).await
    }

    /// Objects found made but without some of their tags: undecided where the
    /// create carries its tags (someone else's object), else done, their tags to be
    /// put (see the module text).
    async fn untagged_verdict<T: Named, N>(
        &self,
        noun: &str,
        batch: bool,
        done: Vec<Made<T>>,
        pending: Vec<N>,
    ) -> Result<Verdict<N, Made<T>>> {
        if let Some((o, _)) = done.iter().find(|(_, missing)| !missing.is_empty())
            && self.tags_travel_with_create(batch).await
        {
            let why = format!(
                "{noun} {} exists without the tags asked for",
                o.object_name()
            );
            return Ok(Verdict::Undecided(why));
        }
        Ok(Verdict::Known { done, pending })
    }

    /// Whether a create carries its tags in the one call: an array without a REST
    /// version (in memory), or one whose REST version takes them (see the module
    /// text); an array that cannot say is taken to.
    async fn tags_travel_with_create(&self, batch: bool) -> bool {
        match self.inner.rest_minor_version().await {
            Ok(Some(minor)) => minor >= tags_in_create_since(batch),
            Ok(None) | Err(_) => true,
        }
    }

    /// Puts the tags a settled create found missing (through this layer), and
    /// answers the objects.
    async fn put_missing_tags<T>(&self, kind: TagResource, made: Vec<Made<T>>) -> Result<Vec<T>> {
        let missing: Vec<Tag> = made.iter().flat_map(|(_, m)| m.iter().cloned()).collect();
        if !missing.is_empty() {
            self.set_tags(kind, &missing).await?;
        }
        Ok(made.into_iter().map(|(o, _)| o).collect())
    }

    /// A patch: an object showing every asked value under its name after the patch
    /// is done; one still unchanged under its old name is patched again; anything
    /// else is undecided.
    async fn patch_named<'f, T, N>(
        &'f self,
        names: &[N],
        name_after: &'f (impl Fn(&str) -> String + Sync),
        matches: &'f (impl Fn(&T) -> bool + Sync),
        write: impl Fn(Vec<N>) -> BoxFuture<'f, Result<Vec<T>>>,
    ) -> Result<Vec<T>>
    where
        T: Collection,
        N: AsRef<str> + Clone + Send + Sync + 'f,
    {
        let probe = move |pending: Vec<N>| -> BoxFuture<'f, Result<Verdict<N, T>>> {
            Box::pin(async move {
                let mut lookup = strings(&pending);
                for n in &pending {
                    let after = name_after(n.as_ref());
                    if !same_name(&after, n.as_ref()) {
                        lookup.push(after);
                    }
                }
                let found = T::lookup(&self.inner, &lookup).await?;
                let mut done = Vec::new();
                let mut rest = Vec::new();
                for n in pending {
                    let after = name_after(n.as_ref());
                    let renamed = !same_name(&after, n.as_ref());
                    match (find(&found, n.as_ref()), find(&found, &after)) {
                        (_, Some(o)) if !renamed && matches(o) => done.push(o.clone()),
                        (None, Some(o)) if renamed && matches(o) => done.push(o.clone()),
                        (Some(_), None) if renamed => rest.push(n),
                        (Some(_), _) if !renamed => rest.push(n),
                        _ => {
                            let why = format!(
                                "{} {} is neither unchanged nor patched",
                                T::NOUN,
                                n.as_ref()
                            );
                            return Ok(Verdict::Undecided(why));
                        }
                    }
                }
                Ok(Verdict::Known {
                    done,
                    pending: rest,
                })
            })
        };
        rounds(
            &format!("patch {}", T::KIND.collection()),
            names.to_vec(),
            write,
            probe,
        )
        .await
    }

    /// A delete: an object that no longer exists is done; one still listed is
    /// deleted again.
    async fn delete_named<'f, T, N>(
        &'f self,
        names: &[N],
        write: impl Fn(Vec<N>) -> BoxFuture<'f, Result<()>>,
    ) -> Result<()>
    where
        T: Collection,
        N: AsRef<str> + Clone + Send + Sync + 'f,
    {
        let write = &write;
        let probe = move |pending: Vec<N>| -> BoxFuture<'f, Result<Verdict<N, ()>>> {
            Box::pin(async move {
                let found = T::lookup(&self.inner, &strings(&pending)).await?;
                let (still, gone): (Vec<N>, Vec<N>) = pending
                    .into_iter()
                    .partition(|n| find(&found, n.as_ref()).is_some());
                Ok(split(gone.len(), still))
            })
        };
        rounds(
            &format!("delete {}", T::KIND.collection()),
            names.to_vec(),
            |p| {
                let sent = write(p);
                Box::pin(async move { sent.await.map(|()| Vec::new()) })
            },
            probe,
        )
        .await
        .map(drop)
    }
}

/// `""` in a move means "out of any pod/group".
fn target_ref(r: &NameRef) -> Option<&str> {
    r.name.as_deref().filter(|s| !s.is_empty())
}

/// Two optional names that are the same, as the array compares them.
pub(super) fn same_opt(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same_name(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// The name a volume has after `patch` (renames and moves change it).
fn volume_name_after(original: &str, patch: &VolumePatch) -> String {
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

/// The volume shows every field `patch` sets.
fn volume_matches(v: &Volume, patch: &VolumePatch) -> bool {
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

/// Initiators in one comparable form ([`Wwn::initiator_key`]).
fn initiators(list: &[String]) -> BTreeSet<String> {
    list.iter().map(|s| Wwn::initiator_key(s)).collect()
}

/// A host's initiators of the three kinds, in [`initiators`] form.
fn host_initiators(h: &Host) -> [BTreeSet<String>; 3] {
    [
        initiators(&h.iqns),
        initiators(&h.nqns),
        initiators(&h.wwns),
    ]
}

fn has_initiators(h: &Host, body: &HostPost) -> bool {
    let want = [
        initiators(&body.iqns),
        initiators(&body.nqns),
        initiators(&body.wwns),
    ];
    host_initiators(h) == want
}

fn host_matches(h: &Host, patch: &HostPatch) -> bool {
    let have = host_initiators(h);
    let replace = [&patch.iqns, &patch.nqns, &patch.wwns];
    let add = [&patch.add_iqns, &patch.add_nqns, &patch.add_wwns];
    let remove = [&patch.remove_iqns, &patch.remove_nqns, &patch.remove_wwns];
    let initiators_ok = (0..3).all(|i| {
        replace[i].as_ref().is_none_or(|w| initiators(w) == have[i])
            && initiators(add[i]).iter().all(|w| have[i].contains(w))
            && initiators(remove[i]).iter().all(|w| !have[i].contains(w))
    });
    initiators_ok
        && patch
            .host_group
            .as_ref()
            .is_none_or(|g| same_opt(target_ref(g), h.host_group.name.as_deref()))
        && patch
            .personality
            .as_ref()
            .is_none_or(|p| h.personality.as_ref().map(HostPersonality::as_str) == Some(p.as_str()))
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
        assert_eq!(volume_name_after("v1", &p(Some("v2"), None)), "v2");
        assert_eq!(
            volume_name_after("pod1::v1", &p(Some("v2"), None)),
            "pod1::v2"
        );
        assert_eq!(volume_name_after("v1", &p(None, Some("pod2"))), "pod2::v1");
        assert_eq!(volume_name_after("pod1::v1", &p(None, Some(""))), "v1");
        assert_eq!(volume_name_after("pod1::v1", &p(None, None)), "pod1::v1");
    }

    #[test]
    fn hosts_compare_initiators_in_any_form() {
        let h = Host {
            name: "h1".into(),
            wwns: vec!["2100F4C7AA002706".into()],
            iqns: vec!["iqn.2024-01.io.pxfa:node1".into()],
            host_group: NameRef::new("hg1"),
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
        let add = HostPatch {
            add_wwns: vec!["21:00:f4:c7:aa:00:27:06".into()],
            ..Default::default()
        };
        assert!(host_matches(&h, &add));
        let leave = HostPatch {
            host_group: Some(NameRef::new("")),
            ..Default::default()
        };
        assert!(!host_matches(&h, &leave));
        let join = HostPatch {
            host_group: Some(NameRef::new("HG1")),
            ..Default::default()
        };
        assert!(host_matches(&h, &join));
    }
}
