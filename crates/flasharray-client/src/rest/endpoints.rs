//! [`FlashArray`] over REST: one trait method, one endpoint of the reference card.
//!
//! Reads are retried freely. For every write the doc comment of its helper states
//! what counts as "already done" when the answer was lost (see [`super::reconcile`]).

use std::collections::BTreeSet;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::stream::{self, BoxStream, StreamExt};
use reqwest::Method;
use serde::Serialize;

use crate::array::FlashArray;
use crate::error::{Error, Result};
use crate::models::*;
use crate::name::{HostGroupName, HostName, PodName, VolumeName, same_name};
use crate::params::*;
use crate::rest::RestArray;
use crate::rest::http::{Call, Reply};
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::reconcile::{Verdict, find};
use crate::rest::session::ApiVersion;

fn strings<N: AsRef<str>>(names: &[N]) -> Vec<String> {
    names.iter().map(|n| n.as_ref().to_string()).collect()
}

fn require<N>(what: &str, names: &[N]) -> Result<()> {
    if names.is_empty() {
        return Err(Error::InvalidRequest(format!("{what}: no names given")));
    }
    Ok(())
}

fn json<T: Serialize + ?Sized>(body: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(body).map_err(|e| Error::InvalidRequest(format!("cannot encode body: {e}")))
}

fn same_opt(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same_name(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// `""` in a move means "out of any pod/group".
fn target_ref(r: &NameRef) -> Option<&str> {
    r.name.as_deref().filter(|s| !s.is_empty())
}

fn set_eq(a: &[String], b: &[String]) -> bool {
    let norm = |v: &[String]| {
        v.iter()
            .map(|s| s.to_ascii_lowercase())
            .collect::<BTreeSet<_>>()
    };
    norm(a) == norm(b)
}

fn contains_ci(list: &[String], item: &str) -> bool {
    list.iter().any(|s| s.eq_ignore_ascii_case(item))
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

fn normalize_initiators(list: &[String], wwn: bool) -> Vec<String> {
    list.iter()
        .map(|s| {
            if wwn {
                normalize_wwn(s).unwrap_or_else(|_| s.to_ascii_uppercase())
            } else {
                s.to_ascii_lowercase()
            }
        })
        .collect()
}

fn host_matches(h: &Host, patch: &HostPatch) -> bool {
    let iqns = normalize_initiators(&h.iqns, false);
    let nqns = normalize_initiators(&h.nqns, false);
    let wwns = normalize_initiators(&h.wwns, true);
    let replaced = |want: &Option<Vec<String>>, have: &[String], wwn: bool| {
        want.as_ref()
            .is_none_or(|w| set_eq(&normalize_initiators(w, wwn), have))
    };
    let added = |want: &[String], have: &[String], wwn: bool| {
        normalize_initiators(want, wwn)
            .iter()
            .all(|w| contains_ci(have, w))
    };
    let removed = |want: &[String], have: &[String], wwn: bool| {
        normalize_initiators(want, wwn)
            .iter()
            .all(|w| !contains_ci(have, w))
    };
    replaced(&patch.iqns, &iqns, false)
        && replaced(&patch.nqns, &nqns, false)
        && replaced(&patch.wwns, &wwns, true)
        && added(&patch.add_iqns, &iqns, false)
        && added(&patch.add_nqns, &nqns, false)
        && added(&patch.add_wwns, &wwns, true)
        && removed(&patch.remove_iqns, &iqns, false)
        && removed(&patch.remove_nqns, &nqns, false)
        && removed(&patch.remove_wwns, &wwns, true)
        && patch
            .host_group
            .as_ref()
            .is_none_or(|g| same_opt(target_ref(g), h.host_group.name.as_deref()))
        && patch
            .personality
            .as_ref()
            .is_none_or(|p| h.personality.as_deref() == Some(p.as_str()))
}

fn host_has_initiators(h: &Host, body: &HostPost) -> bool {
    let iqns = normalize_initiators(&h.iqns, false);
    let nqns = normalize_initiators(&h.nqns, false);
    let wwns = normalize_initiators(&h.wwns, true);
    set_eq(&normalize_initiators(&body.iqns, false), &iqns)
        && set_eq(&normalize_initiators(&body.nqns, false), &nqns)
        && set_eq(&normalize_initiators(&body.wwns, true), &wwns)
}

fn pod_matches(p: &Pod, patch: &PodPatch) -> bool {
    patch.destroyed.is_none_or(|d| d == p.destroyed)
        && patch.quota_limit.is_none_or(|q| p.quota_limit == Some(q))
}

/// Whether a `/connections` row is the connection of `volume` to `target`.
fn is_connection(c: &Connection, target: &ConnectionTarget, volume: &str) -> bool {
    let vol_ok = same_opt(c.volume.name.as_deref(), Some(volume));
    match target {
        ConnectionTarget::Host(h) => {
            vol_ok
                && same_opt(c.host.name.as_deref(), Some(h.as_str()))
                && c.host_group.name.is_none()
        }
        ConnectionTarget::HostGroup(g) => {
            vol_ok && same_opt(c.host_group.name.as_deref(), Some(g.as_str()))
        }
    }
}

/// Pairs "only done/pending" splits for delete-like writes: an object that is gone
/// is done.
fn gone_verdict<T: crate::rest::reconcile::Named>(
    pending: Vec<String>,
    found: &[T],
) -> Verdict<String, ()> {
    let (still, gone): (Vec<String>, Vec<String>) =
        pending.into_iter().partition(|n| find(found, n).is_some());
    Verdict::Known {
        done: gone.iter().map(|_| ()).collect(),
        pending: still,
    }
}

impl RestArray {
    /// Whether a create may carry `tags` in its body: nothing to carry, or the
    /// negotiated version is 2.39 or newer.
    async fn tags_in_create(&self, tags: &[TagBody]) -> Result<bool> {
        if tags.is_empty() {
            return Ok(true);
        }
        Ok(self.session().await?.version >= ApiVersion::TAGS_IN_CREATE)
    }

    /// Before 2.39: tags the just-created objects in a second call. A process killed
    /// between the two calls leaves the objects untagged; see the crate docs.
    async fn tag_created(
        &self,
        kind: TagResource,
        names: &[String],
        tags: &[TagBody],
    ) -> Result<()> {
        let all: Vec<Tag> = names
            .iter()
            .flat_map(|n| tags.iter().map(move |t| t.on(n.clone())))
            .collect();
        self.set_tags(kind, &all).await.map(drop)
    }

    /// After a lost create with tags in its body: the first of `names` that exists
    /// without every asked tag, i.e. an object this call did not create.
    async fn lacking_tags(
        &self,
        kind: TagResource,
        names: &[String],
        tags: &[TagBody],
    ) -> Result<Option<String>> {
        if names.is_empty() || tags.is_empty() {
            return Ok(None);
        }
        let have = self
            .list_tags(
                kind,
                &TagParams {
                    resource_names: names.to_vec(),
                    ..Default::default()
                },
            )
            .await?;
        Ok(names
            .iter()
            .find(|n| {
                !tags.iter().all(|t| {
                    have.iter().any(|h| {
                        same_opt(h.resource.name.as_deref(), Some(n.as_str()))
                            && h.key == t.key
                            && h.value == t.value
                            && h.namespace.as_deref().unwrap_or("default")
                                == t.namespace.as_deref().unwrap_or("default")
                    })
                })
            })
            .cloned())
    }

    async fn write(
        &self,
        method: Method,
        path: &str,
        query: Query,
        body: Option<Vec<u8>>,
    ) -> Result<Reply> {
        self.call(Call {
            method,
            path,
            query: &query,
            body: body.as_deref(),
        })
        .await
    }

    async fn get(&self, path: &str, query: Query) -> Result<Reply> {
        self.call(Call {
            method: Method::GET,
            path,
            query: &query,
            body: None,
        })
        .await
    }

    async fn single<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T> {
        let reply = self.get(path, Query::new()).await?;
        reply
            .items::<T>()?
            .into_iter()
            .next()
            .ok_or_else(|| Error::Decode {
                operation: reply.operation.clone(),
                path: "items".into(),
                message: "the array answered with no item".into(),
            })
    }

    fn connection_query(target: &ConnectionTarget, volumes: &[String]) -> Query {
        let q = match target {
            ConnectionTarget::Host(h) => Query::new().csv("host_names", &[h.as_str()]),
            ConnectionTarget::HostGroup(g) => Query::new().csv("host_group_names", &[g.as_str()]),
        };
        q.csv("volume_names", volumes)
    }

    async fn connections_of(
        &self,
        target: &ConnectionTarget,
        volumes: &[String],
    ) -> Result<Vec<Connection>> {
        let rows: Vec<Connection> = self
            .collect_pages(Pager::new(
                "connections",
                Self::connection_query(target, &[] as &[String]),
                None,
            ))
            .await?;
        Ok(rows
            .into_iter()
            .filter(|c| volumes.iter().any(|v| is_connection(c, target, v)))
            .collect())
    }

    async fn tokens_of(&self, admin: &str, expose: bool) -> Result<Vec<AdminApiToken>> {
        let mut q = Query::new().csv("names", &[admin]);
        if expose {
            q = q.flag("expose_api_token", true);
        }
        self.collect_pages(Pager::new("admins/api-tokens", q, None))
            .await
    }
}

#[async_trait]
impl FlashArray for RestArray {
    async fn list_volumes(&self, params: &ListParams) -> Result<Vec<Volume>> {
        self.collect_pages(Pager::for_list("volumes", params)).await
    }

    fn volume_stream(&self, params: ListParams) -> BoxStream<'_, Result<Volume>> {
        self.page_stream(Pager::for_list("volumes", &params))
    }

    /// Lost answer: names that now exist, live and of the asked size, are done;
    /// absent names are created again; a same-named volume of another size or
    /// destroyed is undecided.
    async fn create_volumes(&self, names: &[VolumeName], body: &VolumePost) -> Result<Vec<Volume>> {
        require("create volumes", names)?;
        let inline = self.tags_in_create(&body.tags).await?;
        let sent = VolumePost {
            tags: if inline {
                body.tags.clone()
            } else {
                Vec::new()
            },
            ..body.clone()
        };
        let bytes = json(&sent)?;
        let bytes = &bytes;
        let sent = &sent;
        let created = self
            .settle(
                "POST volumes",
                strings(names),
                |pending| {
                    Box::pin(async move {
                        self.write(
                            Method::POST,
                            "volumes",
                            Query::new().csv("names", &pending),
                            Some(bytes.clone()),
                        )
                        .await?
                        .items()
                    })
                },
                |pending| {
                    Box::pin(async move {
                        let found: Vec<Volume> = self.lookup("volumes", &pending).await?;
                        let mut done = Vec::new();
                        let mut rest = Vec::new();
                        for n in pending {
                            match find(&found, &n) {
                                Some(v)
                                    if !v.destroyed
                                        && body.provisioned.is_none_or(|p| p == v.provisioned) =>
                                {
                                    done.push(v.clone())
                                }
                                Some(_) => {
                                    return Ok(Verdict::Undecided(format!(
                                        "volume {n} exists but is not the one asked for"
                                    )));
                                }
                                None => rest.push(n),
                            }
                        }
                        let names: Vec<String> = done.iter().map(|v| v.name.clone()).collect();
                        if let Some(n) = self
                            .lacking_tags(TagResource::Volume, &names, &sent.tags)
                            .await?
                        {
                            return Ok(Verdict::Undecided(format!(
                                "volume {n} exists without the tags asked for"
                            )));
                        }
                        Ok(Verdict::Known {
                            done,
                            pending: rest,
                        })
                    })
                },
            )
            .await?;
        if !inline {
            self.tag_created(TagResource::Volume, &strings(names), &body.tags)
                .await?;
        }
        Ok(created)
    }

    /// Lost answer: a volume that shows every requested value (under its new name
    /// after a rename or move) is done; one still unchanged under its old name is
    /// patched again; anything else is undecided.
    async fn patch_volumes(
        &self,
        names: &[VolumeName],
        patch: &VolumePatch,
        truncate: bool,
    ) -> Result<Vec<Volume>> {
        require("patch volumes", names)?;
        if patch.name.is_some() && names.len() > 1 {
            return Err(Error::InvalidRequest(
                "patch volumes: a rename names exactly one volume".into(),
            ));
        }
        let bytes = json(patch)?;
        let bytes = &bytes;
        self.settle(
            "PATCH volumes",
            strings(names),
            |pending| {
                Box::pin(async move {
                    let mut q = Query::new().csv("names", &pending);
                    if truncate {
                        q = q.flag("truncate", true);
                    }
                    self.write(Method::PATCH, "volumes", q, Some(bytes.clone()))
                        .await?
                        .items()
                })
            },
            |pending| {
                Box::pin(async move {
                    let mut lookup_names = pending.clone();
                    for n in &pending {
                        let after = volume_name_after(n, patch);
                        if !same_name(&after, n) {
                            lookup_names.push(after);
                        }
                    }
                    let found: Vec<Volume> = self.lookup("volumes", &lookup_names).await?;
                    let mut done = Vec::new();
                    let mut rest = Vec::new();
                    for n in pending {
                        let after = volume_name_after(&n, patch);
                        let old = find(&found, &n);
                        let new = find(&found, &after);
                        let renamed = !same_name(&after, &n);
                        match (old, new) {
                            (_, Some(v))
                                if !renamed && v.name == after && volume_matches(v, patch) =>
                            {
                                done.push(v.clone())
                            }
                            (None, Some(v)) if renamed && volume_matches(v, patch) => {
                                done.push(v.clone())
                            }
                            (Some(_), None) if renamed => rest.push(n),
                            (Some(_), _) if !renamed => rest.push(n),
                            _ => {
                                return Ok(Verdict::Undecided(format!(
                                    "volume {n} is neither unchanged nor patched"
                                )));
                            }
                        }
                    }
                    Ok(Verdict::Known {
                        done,
                        pending: rest,
                    })
                })
            },
        )
        .await
    }

    /// Lost answer: a volume that no longer exists is done; one still listed is
    /// eradicated again.
    async fn eradicate_volumes(&self, names: &[VolumeName]) -> Result<()> {
        require("eradicate volumes", names)?;
        self.settle(
            "DELETE volumes",
            strings(names),
            |pending| {
                Box::pin(async move {
                    self.write(
                        Method::DELETE,
                        "volumes",
                        Query::new().csv("names", &pending),
                        None,
                    )
                    .await
                    .map(|_| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let found: Vec<Volume> = self.lookup("volumes", &pending).await?;
                    Ok(gone_verdict(pending, &found))
                })
            },
        )
        .await
        .map(drop)
    }

    async fn list_tags(&self, kind: TagResource, params: &TagParams) -> Result<Vec<Tag>> {
        let q = Query::new()
            .csv("resource_names", &params.resource_names)
            .csv("namespaces", &params.namespaces)
            .opt_flag("resource_destroyed", params.resource_destroyed);
        self.collect_pages(Pager::new(format!("{}/tags", kind.collection()), q, None))
            .await
    }

    /// Lost answer: tags the array now shows with the asked value are done; the
    /// others are put again (a tag put is an overwrite, so this cannot double up).
    async fn set_tags(&self, kind: TagResource, tags: &[Tag]) -> Result<Vec<Tag>> {
        require("set tags", tags)?;
        // The array takes at most 30 tags per batch (Pure's SDK declares the body as
        // `conlist(Tag, max_items=30)`); larger sets go as several batches, a few at
        // a time. Tags are upserts, so a batch that fails can simply be sent again.
        let batches: Vec<Vec<Tag>> = tags
            .chunks(MAX_TAGS_PER_BATCH)
            .map(<[Tag]>::to_vec)
            .collect();
        let answers: Vec<Result<Vec<Tag>>> = stream::iter(batches)
            .map(|batch| self.put_tag_batch(kind, batch))
            .buffered(TAG_BATCHES_IN_FLIGHT)
            .collect()
            .await;
        let mut set = Vec::with_capacity(tags.len());
        for answer in answers {
            set.extend(answer?);
        }
        Ok(set)
    }

    /// Lost answer: objects that no longer carry any of the keys are done; the
    /// others are sent again.
    async fn delete_tags(
        &self,
        kind: TagResource,
        resource_names: &[String],
        keys: &[String],
        namespaces: &[String],
    ) -> Result<()> {
        require("delete tags", resource_names)?;
        require("delete tags (keys)", keys)?;
        let path = format!("{}/tags", kind.collection());
        let path = &path;
        self.settle(
            "DELETE tags",
            resource_names.to_vec(),
            |pending| {
                Box::pin(async move {
                    self.write(
                        Method::DELETE,
                        path,
                        Query::new()
                            .csv("resource_names", &pending)
                            .csv("keys", keys)
                            .csv("namespaces", namespaces),
                        None,
                    )
                    .await
                    .map(|_| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let existing = self
                        .list_tags(
                            kind,
                            &TagParams {
                                resource_names: pending.clone(),
                                namespaces: namespaces.to_vec(),
                                ..Default::default()
                            },
                        )
                        .await?;
                    let (rest, done): (Vec<String>, Vec<String>) =
                        pending.into_iter().partition(|r| {
                            existing.iter().any(|e| {
                                same_opt(e.resource.name.as_deref(), Some(r))
                                    && keys.contains(&e.key)
                            })
                        });
                    Ok(Verdict::Known {
                        done: done.iter().map(|_| ()).collect(),
                        pending: rest,
                    })
                })
            },
        )
        .await
        .map(drop)
    }

    async fn list_hosts(&self, params: &ListParams) -> Result<Vec<Host>> {
        if !params.ids.is_empty() {
            return Err(Error::InvalidRequest(
                "hosts have no ids; select by name".into(),
            ));
        }
        self.collect_pages(Pager::for_list("hosts", params)).await
    }

    /// Lost answer: a host that now exists with exactly the asked initiators is done;
    /// an absent one is created again; a same-named host with other initiators is
    /// undecided.
    async fn create_hosts(&self, names: &[HostName], body: &HostPost) -> Result<Vec<Host>> {
        require("create hosts", names)?;
        let inline = self.tags_in_create(&body.tags).await?;
        let sent = HostPost {
            tags: if inline {
                body.tags.clone()
            } else {
                Vec::new()
            },
            ..body.clone()
        };
        let bytes = json(&sent)?;
        let bytes = &bytes;
        let sent = &sent;
        let created = self
            .settle(
                "POST hosts",
                strings(names),
                |pending| {
                    Box::pin(async move {
                        self.write(
                            Method::POST,
                            "hosts",
                            Query::new().csv("names", &pending),
                            Some(bytes.clone()),
                        )
                        .await?
                        .items()
                    })
                },
                |pending| {
                    Box::pin(async move {
                        let found: Vec<Host> = self.lookup("hosts", &pending).await?;
                        let mut done = Vec::new();
                        let mut rest = Vec::new();
                        for n in pending {
                            match find(&found, &n) {
                                Some(h) if host_has_initiators(h, body) => done.push(h.clone()),
                                Some(_) => {
                                    return Ok(Verdict::Undecided(format!(
                                        "host {n} exists with other initiators"
                                    )));
                                }
                                None => rest.push(n),
                            }
                        }
                        let names: Vec<String> = done.iter().map(|h| h.name.clone()).collect();
                        if let Some(n) = self
                            .lacking_tags(TagResource::Host, &names, &sent.tags)
                            .await?
                        {
                            return Ok(Verdict::Undecided(format!(
                                "host {n} exists without the tags asked for"
                            )));
                        }
                        Ok(Verdict::Known {
                            done,
                            pending: rest,
                        })
                    })
                },
            )
            .await?;
        if !inline {
            self.tag_created(TagResource::Host, &strings(names), &body.tags)
                .await?;
        }
        Ok(created)
    }

    /// Lost answer: a host showing every requested value (under its new name after a
    /// rename) is done; an unchanged one is patched again.
    async fn patch_hosts(&self, names: &[HostName], patch: &HostPatch) -> Result<Vec<Host>> {
        require("patch hosts", names)?;
        if patch.name.is_some() && names.len() > 1 {
            return Err(Error::InvalidRequest(
                "patch hosts: a rename names exactly one host".into(),
            ));
        }
        let bytes = json(patch)?;
        let bytes = &bytes;
        self.settle(
            "PATCH hosts",
            strings(names),
            |pending| {
                Box::pin(async move {
                    self.write(
                        Method::PATCH,
                        "hosts",
                        Query::new().csv("names", &pending),
                        Some(bytes.clone()),
                    )
                    .await?
                    .items()
                })
            },
            |pending| {
                Box::pin(async move {
                    let mut lookup_names = pending.clone();
                    if let Some(new) = &patch.name {
                        lookup_names.push(new.clone());
                    }
                    let found: Vec<Host> = self.lookup("hosts", &lookup_names).await?;
                    let mut done = Vec::new();
                    let mut rest = Vec::new();
                    for n in pending {
                        let after = patch.name.clone().unwrap_or_else(|| n.clone());
                        let renamed = !same_name(&after, &n);
                        match (find(&found, &n), find(&found, &after)) {
                            (_, Some(h))
                                if !renamed && h.name == after && host_matches(h, patch) =>
                            {
                                done.push(h.clone())
                            }
                            (None, Some(h)) if renamed && host_matches(h, patch) => {
                                done.push(h.clone())
                            }
                            (Some(_), None) if renamed => rest.push(n),
                            (Some(_), _) if !renamed => rest.push(n),
                            _ => {
                                return Ok(Verdict::Undecided(format!(
                                    "host {n} is neither unchanged nor patched"
                                )));
                            }
                        }
                    }
                    Ok(Verdict::Known {
                        done,
                        pending: rest,
                    })
                })
            },
        )
        .await
    }

    /// Lost answer: a host that no longer exists is done.
    async fn delete_hosts(&self, names: &[HostName]) -> Result<()> {
        require("delete hosts", names)?;
        self.settle(
            "DELETE hosts",
            strings(names),
            |pending| {
                Box::pin(async move {
                    self.write(
                        Method::DELETE,
                        "hosts",
                        Query::new().csv("names", &pending),
                        None,
                    )
                    .await
                    .map(|_| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let found: Vec<Host> = self.lookup("hosts", &pending).await?;
                    Ok(gone_verdict(pending, &found))
                })
            },
        )
        .await
        .map(drop)
    }

    async fn list_host_groups(&self, params: &ListParams) -> Result<Vec<HostGroup>> {
        if !params.ids.is_empty() {
            return Err(Error::InvalidRequest(
                "host groups have no ids; select by name".into(),
            ));
        }
        self.collect_pages(Pager::for_list("host-groups", params))
            .await
    }

    /// Lost answer: a group that now exists (with the asked tags, when they went in
    /// the body) is done; one without them is undecided.
    async fn create_host_groups(
        &self,
        names: &[HostGroupName],
        body: &HostGroupPost,
    ) -> Result<Vec<HostGroup>> {
        require("create host groups", names)?;
        let inline = self.tags_in_create(&body.tags).await?;
        let sent = HostGroupPost {
            tags: if inline {
                body.tags.clone()
            } else {
                Vec::new()
            },
        };
        // An empty body stays absent, as arrays before 2.39 expect.
        let bytes = if sent.tags.is_empty() {
            None
        } else {
            Some(json(&sent)?)
        };
        let bytes = &bytes;
        let sent = &sent;
        let created = self
            .settle(
                "POST host-groups",
                strings(names),
                |pending| {
                    Box::pin(async move {
                        self.write(
                            Method::POST,
                            "host-groups",
                            Query::new().csv("names", &pending),
                            bytes.clone(),
                        )
                        .await?
                        .items()
                    })
                },
                |pending| {
                    Box::pin(async move {
                        let found: Vec<HostGroup> = self.lookup("host-groups", &pending).await?;
                        let (done, rest): (Vec<String>, Vec<String>) =
                            pending.into_iter().partition(|n| find(&found, n).is_some());
                        if let Some(n) = self
                            .lacking_tags(TagResource::HostGroup, &done, &sent.tags)
                            .await?
                        {
                            return Ok(Verdict::Undecided(format!(
                                "host group {n} exists without the tags asked for"
                            )));
                        }
                        Ok(Verdict::Known {
                            done: done
                                .iter()
                                .filter_map(|n| find(&found, n).cloned())
                                .collect(),
                            pending: rest,
                        })
                    })
                },
            )
            .await?;
        if !inline {
            self.tag_created(TagResource::HostGroup, &strings(names), &body.tags)
                .await?;
        }
        Ok(created)
    }

    /// Lost answer: a group that no longer exists is done.
    async fn delete_host_groups(&self, names: &[HostGroupName]) -> Result<()> {
        require("delete host groups", names)?;
        self.settle(
            "DELETE host-groups",
            strings(names),
            |pending| {
                Box::pin(async move {
                    self.write(
                        Method::DELETE,
                        "host-groups",
                        Query::new().csv("names", &pending),
                        None,
                    )
                    .await
                    .map(|_| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let found: Vec<HostGroup> = self.lookup("host-groups", &pending).await?;
                    Ok(gone_verdict(pending, &found))
                })
            },
        )
        .await
        .map(drop)
    }

    async fn list_host_group_members(&self, params: &MemberParams) -> Result<Vec<Member>> {
        let q = Query::new()
            .csv("group_names", &params.group_names)
            .csv("member_names", &params.member_names);
        self.collect_pages(Pager::new("host-groups/hosts", q, None))
            .await
    }

    /// Lost answer: hosts now listed in the group are done; the others are added again.
    async fn add_host_group_members(
        &self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<Vec<Member>> {
        require("add host group members", hosts)?;
        self.settle(
            "POST host-groups/hosts",
            strings(hosts),
            |pending| {
                Box::pin(async move {
                    self.write(
                        Method::POST,
                        "host-groups/hosts",
                        Query::new()
                            .csv("group_names", &[group.as_str()])
                            .csv("member_names", &pending),
                        None,
                    )
                    .await?
                    .items()
                })
            },
            |pending| {
                Box::pin(async move {
                    let members = self
                        .list_host_group_members(&MemberParams {
                            group_names: vec![group.to_string()],
                            member_names: Vec::new(),
                        })
                        .await?;
                    let mut done = Vec::new();
                    let mut rest = Vec::new();
                    for n in pending {
                        match members
                            .iter()
                            .find(|m| same_opt(m.member.name.as_deref(), Some(&n)))
                        {
                            Some(m) => done.push(m.clone()),
                            None => rest.push(n),
                        }
                    }
                    Ok(Verdict::Known {
                        done,
                        pending: rest,
                    })
                })
            },
        )
        .await
    }

    /// Lost answer: hosts no longer in the group are done.
    async fn remove_host_group_members(
        &self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<()> {
        require("remove host group members", hosts)?;
        self.settle(
            "DELETE host-groups/hosts",
            strings(hosts),
            |pending| {
                Box::pin(async move {
                    self.write(
                        Method::DELETE,
                        "host-groups/hosts",
                        Query::new()
                            .csv("group_names", &[group.as_str()])
                            .csv("member_names", &pending),
                        None,
                    )
                    .await
                    .map(|_| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let members = self
                        .list_host_group_members(&MemberParams {
                            group_names: vec![group.to_string()],
                            member_names: Vec::new(),
                        })
                        .await?;
                    let (rest, done): (Vec<String>, Vec<String>) =
                        pending.into_iter().partition(|n| {
                            members
                                .iter()
                                .any(|m| same_opt(m.member.name.as_deref(), Some(n)))
                        });
                    Ok(Verdict::Known {
                        done: done.iter().map(|_| ()).collect(),
                        pending: rest,
                    })
                })
            },
        )
        .await
        .map(drop)
    }

    async fn list_connections(&self, params: &ConnectionParams) -> Result<Vec<Connection>> {
        let q = Query::new()
            .csv("host_names", &params.host_names)
            .csv("host_group_names", &params.host_group_names)
            .csv("volume_names", &params.volume_names)
            .opt("filter", params.filter.as_deref())
            .csv("sort", &params.sort);
        self.collect_pages(Pager::new("connections", q, params.page_size))
            .await
    }

    /// Lost answer: volumes the target now sees are done; the others are connected
    /// again (a LUN asked for is kept).
    async fn create_connections(
        &self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
        lun: Option<u32>,
    ) -> Result<Vec<Connection>> {
        require("connect volumes", volumes)?;
        if let Some(l) = lun {
            if volumes.len() > 1 {
                return Err(Error::InvalidRequest(format!(
                    "connect volumes to {target}: a LUN can only be given for one volume"
                )));
            }
            if !(1..=4095).contains(&l) {
                return Err(Error::InvalidRequest(format!(
                    "connect volumes to {target}: LUN {l} is outside 1-4095"
                )));
            }
        }
        let body = match lun {
            Some(l) => Some(json(&serde_json::json!({ "lun": l }))?),
            None => None,
        };
        let body = &body;
        self.settle(
            "POST connections",
            strings(volumes),
            |pending| {
                Box::pin(async move {
                    self.write(
                        Method::POST,
                        "connections",
                        Self::connection_query(target, &pending),
                        body.clone(),
                    )
                    .await?
                    .items()
                })
            },
            |pending| {
                Box::pin(async move {
                    let rows = self.connections_of(target, &pending).await?;
                    let mut done = Vec::new();
                    let mut rest = Vec::new();
                    for v in pending {
                        let mine: Vec<&Connection> = rows
                            .iter()
                            .filter(|c| is_connection(c, target, &v))
                            .collect();
                        if mine.is_empty() {
                            rest.push(v);
                        } else if lun.is_some_and(|l| mine.iter().any(|c| c.lun != Some(l))) {
                            return Ok(Verdict::Undecided(format!(
                                "volume {v} is connected to {target} on another LUN"
                            )));
                        } else {
                            done.extend(mine.into_iter().cloned());
                        }
                    }
                    Ok(Verdict::Known {
                        done,
                        pending: rest,
                    })
                })
            },
        )
        .await
    }

    /// Lost answer: volumes the target no longer sees are done.
    async fn delete_connections(
        &self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
    ) -> Result<()> {
        require("disconnect volumes", volumes)?;
        self.settle(
            "DELETE connections",
            strings(volumes),
            |pending| {
                Box::pin(async move {
                    self.write(
                        Method::DELETE,
                        "connections",
                        Self::connection_query(target, &pending),
                        None,
                    )
                    .await
                    .map(|_| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let rows = self.connections_of(target, &pending).await?;
                    let (rest, done): (Vec<String>, Vec<String>) = pending
                        .into_iter()
                        .partition(|v| rows.iter().any(|c| is_connection(c, target, v)));
                    Ok(Verdict::Known {
                        done: done.iter().map(|_| ()).collect(),
                        pending: rest,
                    })
                })
            },
        )
        .await
        .map(drop)
    }

    async fn list_pods(&self, params: &ListParams) -> Result<Vec<Pod>> {
        self.collect_pages(Pager::for_list("pods", params)).await
    }

    /// Lost answer: a live pod with the asked quota is done; an absent one is created
    /// again; anything else is undecided.
    async fn create_pods(&self, names: &[PodName], body: &PodPost) -> Result<Vec<Pod>> {
        require("create pods", names)?;
        let inline = self.tags_in_create(&body.tags).await?;
        let sent = PodPost {
            tags: if inline {
                body.tags.clone()
            } else {
                Vec::new()
            },
            ..body.clone()
        };
        let bytes = json(&sent)?;
        let bytes = &bytes;
        let sent = &sent;
        let created = self
            .settle(
                "POST pods",
                strings(names),
                |pending| {
                    Box::pin(async move {
                        self.write(
                            Method::POST,
                            "pods",
                            Query::new().csv("names", &pending),
                            Some(bytes.clone()),
                        )
                        .await?
                        .items()
                    })
                },
                |pending| {
                    Box::pin(async move {
                        let found: Vec<Pod> = self.lookup("pods", &pending).await?;
                        let mut done = Vec::new();
                        let mut rest = Vec::new();
                        for n in pending {
                            match find(&found, &n) {
                                Some(p)
                                    if !p.destroyed
                                        && body
                                            .quota_limit
                                            .is_none_or(|q| p.quota_limit == Some(q)) =>
                                {
                                    done.push(p.clone())
                                }
                                Some(_) => {
                                    return Ok(Verdict::Undecided(format!(
                                        "pod {n} exists but is not the one asked for"
                                    )));
                                }
                                None => rest.push(n),
                            }
                        }
                        let names: Vec<String> = done.iter().map(|p| p.name.clone()).collect();
                        if let Some(n) = self
                            .lacking_tags(TagResource::Pod, &names, &sent.tags)
                            .await?
                        {
                            return Ok(Verdict::Undecided(format!(
                                "pod {n} exists without the tags asked for"
                            )));
                        }
                        Ok(Verdict::Known {
                            done,
                            pending: rest,
                        })
                    })
                },
            )
            .await?;
        if !inline {
            self.tag_created(TagResource::Pod, &strings(names), &body.tags)
                .await?;
        }
        Ok(created)
    }

    /// Lost answer: a pod showing the requested values (under its new name after a
    /// rename) is done; an unchanged one is patched again.
    async fn patch_pods(
        &self,
        names: &[PodName],
        patch: &PodPatch,
        destroy_contents: bool,
    ) -> Result<Vec<Pod>> {
        require("patch pods", names)?;
        if patch.name.is_some() && names.len() > 1 {
            return Err(Error::InvalidRequest(
                "patch pods: a rename names exactly one pod".into(),
            ));
        }
        let bytes = json(patch)?;
        let bytes = &bytes;
        self.settle(
            "PATCH pods",
            strings(names),
            |pending| {
                Box::pin(async move {
                    let mut q = Query::new().csv("names", &pending);
                    if destroy_contents {
                        q = q.flag("destroy_contents", true);
                    }
                    self.write(Method::PATCH, "pods", q, Some(bytes.clone()))
                        .await?
                        .items()
                })
            },
            |pending| {
                Box::pin(async move {
                    let mut lookup_names = pending.clone();
                    if let Some(new) = &patch.name {
                        lookup_names.push(new.clone());
                    }
                    let found: Vec<Pod> = self.lookup("pods", &lookup_names).await?;
                    let mut done = Vec::new();
                    let mut rest = Vec::new();
                    for n in pending {
                        let after = patch.name.clone().unwrap_or_else(|| n.clone());
                        let renamed = !same_name(&after, &n);
                        match (find(&found, &n), find(&found, &after)) {
                            (_, Some(p))
                                if !renamed && p.name == after && pod_matches(p, patch) =>
                            {
                                done.push(p.clone())
                            }
                            (None, Some(p)) if renamed && pod_matches(p, patch) => {
                                done.push(p.clone())
                            }
                            (Some(_), None) if renamed => rest.push(n),
                            (Some(_), _) if !renamed => rest.push(n),
                            _ => {
                                return Ok(Verdict::Undecided(format!(
                                    "pod {n} is neither unchanged nor patched"
                                )));
                            }
                        }
                    }
                    Ok(Verdict::Known {
                        done,
                        pending: rest,
                    })
                })
            },
        )
        .await
    }

    /// Lost answer: a pod that no longer exists is done.
    async fn eradicate_pods(&self, names: &[PodName], eradicate_contents: bool) -> Result<()> {
        require("eradicate pods", names)?;
        self.settle(
            "DELETE pods",
            strings(names),
            |pending| {
                Box::pin(async move {
                    let mut q = Query::new().csv("names", &pending);
                    if eradicate_contents {
                        q = q.flag("eradicate_contents", true);
                    }
                    self.write(Method::DELETE, "pods", q, None)
                        .await
                        .map(|_| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let found: Vec<Pod> = self.lookup("pods", &pending).await?;
                    Ok(gone_verdict(pending, &found))
                })
            },
        )
        .await
        .map(drop)
    }

    async fn list_pod_arrays(&self, pods: &[PodName]) -> Result<Vec<Member>> {
        let q = Query::new().csv("group_names", &strings(pods));
        self.collect_pages(Pager::new("pods/arrays", q, None)).await
    }

    async fn get_array(&self) -> Result<ArrayInfo> {
        self.single("arrays").await
    }

    async fn get_array_space(&self) -> Result<ArraySpace> {
        self.single("arrays/space").await
    }

    async fn list_api_tokens(&self, admins: &[String], expose: bool) -> Result<Vec<AdminApiToken>> {
        let mut q = Query::new().csv("names", admins);
        if expose {
            q = q.flag("expose_api_token", true);
        }
        self.collect_pages(Pager::new("admins/api-tokens", q, None))
            .await
    }

    /// Lost answer: if the admin now holds a token, it is read back (exposed) and
    /// returned instead of creating a second one; without one, the token is created
    /// again. Arrays are believed (low confidence) to refuse a second token while one
    /// exists, which this rule relies on.
    async fn create_api_token(
        &self,
        admin: &str,
        timeout: Option<Duration>,
    ) -> Result<AdminApiToken> {
        if admin.is_empty() {
            return Err(Error::InvalidRequest(
                "create API token: no admin name".into(),
            ));
        }
        let created = self
            .settle(
                "POST admins/api-tokens",
                vec![admin.to_string()],
                |_| {
                    Box::pin(async move {
                        let mut q = Query::new().csv("names", &[admin]);
                        if let Some(t) = timeout {
                            q = q.number("timeout", t.as_millis().min(u128::from(u64::MAX)) as u64);
                        }
                        self.write(Method::POST, "admins/api-tokens", q, None)
                            .await?
                            .items()
                    })
                },
                |pending| {
                    Box::pin(async move {
                        let found = self.tokens_of(admin, true).await?;
                        match found.into_iter().find(|t| {
                            t.name.eq_ignore_ascii_case(admin) && t.api_token.token.is_some()
                        }) {
                            Some(t) => Ok(Verdict::Known {
                                done: vec![t],
                                pending: Vec::new(),
                            }),
                            None => Ok(Verdict::Known {
                                done: Vec::new(),
                                pending,
                            }),
                        }
                    })
                },
            )
            .await?;
        created.into_iter().next().ok_or_else(|| Error::Decode {
            operation: "POST admins/api-tokens".into(),
            path: "items".into(),
            message: "the array answered with no token".into(),
        })
    }

    /// Lost answer: an admin without a token is done.
    async fn delete_api_token(&self, admin: &str) -> Result<()> {
        if admin.is_empty() {
            return Err(Error::InvalidRequest(
                "delete API token: no admin name".into(),
            ));
        }
        self.settle(
            "DELETE admins/api-tokens",
            vec![admin.to_string()],
            |_| {
                Box::pin(async move {
                    self.write(
                        Method::DELETE,
                        "admins/api-tokens",
                        Query::new().csv("names", &[admin]),
                        None,
                    )
                    .await
                    .map(|_| Vec::<()>::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let found = self.tokens_of(admin, false).await?;
                    let has = found.iter().any(|t| {
                        t.name.eq_ignore_ascii_case(admin)
                            && (t.api_token.created_at.is_some() || t.api_token.token.is_some())
                    });
                    Ok(Verdict::Known {
                        done: Vec::new(),
                        pending: if has { pending } else { Vec::new() },
                    })
                })
            },
        )
        .await
        .map(drop)
    }

    async fn close(&self) -> Result<()> {
        self.logout().await
    }
}

/// Most tags one `PUT /{kind}/tags/batch` may carry.
pub const MAX_TAGS_PER_BATCH: usize = 30;

/// Tag batches sent at the same time when a call holds more than one.
const TAG_BATCHES_IN_FLIGHT: usize = 8;

impl RestArray {
    /// One `PUT /{kind}/tags/batch` of at most [`MAX_TAGS_PER_BATCH`] tags.
    async fn put_tag_batch(&self, kind: TagResource, tags: Vec<Tag>) -> Result<Vec<Tag>> {
        let path = format!("{}/tags/batch", kind.collection());
        let path = &path;
        let resource = |t: &Tag| t.resource.name.clone().unwrap_or_default();
        if let Some(t) = tags.iter().find(|t| resource(t).is_empty()) {
            return Err(Error::InvalidRequest(format!(
                "set tags: tag {:?} names no object",
                t.key
            )));
        }
        self.settle(
            "PUT tags",
            tags,
            |pending| {
                Box::pin(async move {
                    let resources: BTreeSet<String> = pending.iter().map(resource).collect();
                    let body: Vec<serde_json::Value> = pending
                        .iter()
                        .map(|t| {
                            let mut o = serde_json::json!({
                                "key": t.key,
                                "value": t.value,
                                "resource": {"name": resource(t)},
                            });
                            if let Some(ns) = &t.namespace {
                                o["namespace"] = ns.clone().into();
                            }
                            if let Some(c) = t.copyable {
                                o["copyable"] = c.into();
                            }
                            o
                        })
                        .collect();
                    let resources: Vec<String> = resources.into_iter().collect();
                    self.write(
                        Method::PUT,
                        path,
                        Query::new().csv("resource_names", &resources),
                        Some(json(&body)?),
                    )
                    .await?
                    .items()
                })
            },
            |pending| {
                Box::pin(async move {
                    let resources: BTreeSet<String> = pending.iter().map(resource).collect();
                    let existing = self
                        .list_tags(
                            kind,
                            &TagParams {
                                resource_names: resources.into_iter().collect(),
                                ..Default::default()
                            },
                        )
                        .await?;
                    let (done, rest): (Vec<Tag>, Vec<Tag>) = pending.into_iter().partition(|t| {
                        existing.iter().any(|e| {
                            same_opt(e.resource.name.as_deref(), t.resource.name.as_deref())
                                && e.namespace == t.namespace
                                && e.key == t.key
                                && e.value == t.value
                        })
                    });
                    Ok(Verdict::Known {
                        done,
                        pending: rest,
                    })
                })
            },
        )
        .await
    }
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
