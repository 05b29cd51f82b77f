//! Array operations: one REST call each, batched over names, with the re-read that
//! tells what remains to do after an answer was lost.
//!
//! A write whose answer was lost (`Error::maybe_applied`) may or may not have taken
//! effect. Sending it again blindly could duplicate a create or fail on "already
//! exists", so [`run`] re-reads the affected objects, narrows the operation to what is
//! still missing and only then sends it again.

use std::time::Duration;

use flasharray::models::{
    HostGroupPost, HostPatch, HostPersonality, HostPost, PodPatch, PodPost, Tag, TagBody, Volume,
    VolumeBatchPost, VolumePatch,
};
use flasharray::{
    ConnectionTarget, Error, FlashArray, HostGroupName, HostName, PodName, Result, TagResource,
    VolumeName,
};
use secrecy::SecretString;

use super::realm_ops::RealmOp;
use crate::plan::{
    list_connections_of, lookup_host_groups, lookup_hosts, lookup_pods, lookup_tags, lookup_volumes,
};
use crate::vault::TokenVault;

/// Most times one operation is sent: the first try plus resends after re-reads
/// showed that an ambiguous attempt did not (fully) take effect.
const MAX_SENDS: usize = 3;

/// One REST write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    /// `tags`: the ownership tags the pod is born with.
    CreatePod {
        name: PodName,
        quota: Option<u64>,
        tags: Vec<TagBody>,
    },
    RecoverPods {
        names: Vec<PodName>,
    },
    SetPodQuota {
        name: PodName,
        quota: u64,
    },
    DestroyPods {
        names: Vec<PodName>,
    },
    EradicatePods {
        names: Vec<PodName>,
    },
    CreateHostGroups {
        names: Vec<HostGroupName>,
        tags: Vec<TagBody>,
    },
    DeleteHostGroups {
        names: Vec<HostGroupName>,
    },
    CreateHost {
        name: HostName,
        post: HostPost,
    },
    PatchHost {
        name: HostName,
        patch: HostPatch,
    },
    DeleteHosts {
        names: Vec<HostName>,
    },
    AddMembers {
        group: HostGroupName,
        hosts: Vec<HostName>,
    },
    RemoveMembers {
        group: HostGroupName,
        hosts: Vec<HostName>,
    },
    /// `POST /volumes/batch`: each volume with its size and every desired tag.
    CreateVolumes {
        items: Vec<VolumeBatchPost>,
    },
    RecoverVolumes {
        names: Vec<VolumeName>,
    },
    ResizeVolumes {
        size: u64,
        truncate: bool,
        names: Vec<VolumeName>,
    },
    DestroyVolumes {
        names: Vec<VolumeName>,
    },
    EradicateVolumes {
        names: Vec<VolumeName>,
    },
    SetTags {
        resource: TagResource,
        tags: Vec<Tag>,
    },
    Connect {
        target: ConnectionTarget,
        volumes: Vec<VolumeName>,
        lun: Option<u32>,
    },
    Disconnect {
        target: ConnectionTarget,
        volumes: Vec<VolumeName>,
    },
    CreateToken {
        admin: String,
        lifetime: Option<Duration>,
    },
    DeleteToken {
        admin: String,
    },
    /// The realm, its access policy and its user (`super::realm_ops`).
    Realm(RealmOp),
}

/// What a successful operation taught us.
#[derive(Debug, Default)]
pub(crate) struct Output {
    /// Volumes as the array answered (serials).
    pub volumes: Vec<Volume>,
    /// A token value the array showed.
    pub token: Option<SecretString>,
    /// Its creation time (the array's clock).
    pub token_created_at: Option<u64>,
}

/// A failed operation, for the report.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    /// What failed and the array's answer.
    pub message: String,
    /// `X-Request-ID` of the failed call.
    pub request_id: Option<String>,
    /// The classification of the array's answer.
    pub kind: flasharray::ErrorKind,
}

impl Failure {
    fn new(e: &Error, message: String) -> Self {
        Failure {
            message,
            request_id: e.request_id().map(str::to_string),
            kind: e.kind(),
        }
    }
}

fn strs<T: AsRef<str>>(v: &[T]) -> Vec<String> {
    v.iter().map(|n| n.as_ref().to_string()).collect()
}

fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

fn joined<T: AsRef<str>>(v: &[T]) -> String {
    let names: Vec<&str> = v.iter().map(AsRef::as_ref).collect();
    if names.len() > 4 {
        format!("{}, ... ({} in all)", names[..3].join(", "), names.len())
    } else {
        names.join(", ")
    }
}

fn names_of<T>(items: &[T], name: impl Fn(&T) -> &String) -> Vec<String> {
    items.iter().map(|i| name(i).clone()).collect()
}

/// Of the objects `found` after a lost create, those that carry every creation tag:
/// the ones this create made. A same-named object without them is someone else's;
/// it stays "to create", so the re-sent create fails with "already exists" instead
/// of pxfa taking the object over.
async fn ours(
    array: &dyn FlashArray,
    kind: TagResource,
    found: &[String],
    tags: &[TagBody],
) -> Result<Vec<String>> {
    if tags.is_empty() || found.is_empty() {
        return Ok(found.to_vec());
    }
    let have = lookup_tags(array, kind, found).await?;
    Ok(found
        .iter()
        .filter(|n| carries(&have, n, tags))
        .cloned()
        .collect())
}

/// Whether the listing `have` shows every one of `tags` on the object `name`.
fn carries(have: &[Tag], name: &str, tags: &[TagBody]) -> bool {
    tags.iter().all(|t| {
        have.iter().any(|h| {
            h.key == t.key
                && h.value == t.value
                && h.namespace == t.namespace
                && h.resource.name.as_deref().is_some_and(|r| same(r, name))
        })
    })
}

impl Op {
    /// Words for error messages and logs.
    pub(super) fn describe(&self) -> String {
        match self {
            Op::CreatePod { name, .. } => format!("create pod {name}"),
            Op::RecoverPods { names } => format!("recover pods {}", joined(names)),
            Op::SetPodQuota { name, .. } => format!("set quota of pod {name}"),
            Op::DestroyPods { names } => format!("destroy pods {}", joined(names)),
            Op::EradicatePods { names } => format!("eradicate pods {}", joined(names)),
            Op::CreateHostGroups { names, .. } => {
                format!("create host groups {}", joined(names))
            }
            Op::DeleteHostGroups { names } => format!("delete host groups {}", joined(names)),
            Op::CreateHost { name, .. } => format!("create host {name}"),
            Op::PatchHost { name, .. } => format!("update host {name}"),
            Op::DeleteHosts { names } => format!("delete hosts {}", joined(names)),
            Op::AddMembers { group, hosts } => {
                format!("add hosts {} to host group {group}", joined(hosts))
            }
            Op::RemoveMembers { group, hosts } => {
                format!("remove hosts {} from host group {group}", joined(hosts))
            }
            Op::CreateVolumes { items } => {
                let names: Vec<&VolumeName> = items.iter().map(|i| &i.name).collect();
                format!("create volumes {}", joined(&names))
            }
            Op::RecoverVolumes { names } => format!("recover volumes {}", joined(names)),
            Op::ResizeVolumes { names, .. } => format!("resize volumes {}", joined(names)),
            Op::DestroyVolumes { names } => format!("destroy volumes {}", joined(names)),
            Op::EradicateVolumes { names } => format!("eradicate volumes {}", joined(names)),
            Op::SetTags { resource, tags } => {
                let mut names: Vec<&str> = tags
                    .iter()
                    .filter_map(|t| t.resource.name.as_deref())
                    .collect();
                names.dedup();
                format!("tag {} {}", resource.collection(), joined(&names))
            }
            Op::Connect {
                target, volumes, ..
            } => format!("connect volumes {} to {target}", joined(volumes)),
            Op::Disconnect { target, volumes } => {
                format!("disconnect volumes {} from {target}", joined(volumes))
            }
            Op::CreateToken { admin, .. } => format!("create API token of {admin}"),
            Op::DeleteToken { admin } => format!("delete API token of {admin}"),
            Op::Realm(r) => r.describe(),
        }
    }

    /// Sends the operation once.
    async fn send(&self, array: &dyn FlashArray) -> Result<Output> {
        let mut out = Output::default();
        match self {
            Op::CreatePod { name, quota, tags } => {
                let mut body = PodPost::default().with_tags(tags.clone());
                body.quota_limit = *quota;
                array.create_pods(std::slice::from_ref(name), &body).await?;
            }
            Op::RecoverPods { names } => {
                let patch = PodPatch::recover();
                array.patch_pods(names, &patch, false).await?;
            }
            Op::SetPodQuota { name, quota } => {
                let patch = PodPatch::default().with_quota_limit(*quota);
                array
                    .patch_pods(std::slice::from_ref(name), &patch, false)
                    .await?;
            }
            Op::DestroyPods { names } => {
                let patch = PodPatch::destroy();
                array.patch_pods(names, &patch, false).await?;
            }
            Op::EradicatePods { names } => array.eradicate_pods(names, false).await?,
            Op::CreateHostGroups { names, tags } => {
                let body = HostGroupPost::default().with_tags(tags.clone());
                array.create_host_groups(names, &body).await?;
            }
            Op::DeleteHostGroups { names } => array.delete_host_groups(names).await?,
            Op::CreateHost { name, post } => {
                array.create_hosts(std::slice::from_ref(name), post).await?;
            }
            Op::PatchHost { name, patch } => {
                array.patch_hosts(std::slice::from_ref(name), patch).await?;
            }
            Op::DeleteHosts { names } => array.delete_hosts(names).await?,
            Op::AddMembers { group, hosts } => {
                array.add_host_group_members(group, hosts).await?;
            }
            Op::RemoveMembers { group, hosts } => {
                array.remove_host_group_members(group, hosts).await?
            }
            Op::CreateVolumes { items } => {
                out.volumes = array.create_volumes_batch(items).await?;
            }
            Op::RecoverVolumes { names } => {
                let patch = VolumePatch::recover();
                out.volumes = array.patch_volumes(names, &patch, false).await?;
            }
            Op::ResizeVolumes {
                size,
                truncate,
                names,
            } => {
                let patch = VolumePatch::default().with_provisioned(*size);
                out.volumes = array.patch_volumes(names, &patch, *truncate).await?;
            }
            Op::DestroyVolumes { names } => {
                let patch = VolumePatch::destroy();
                array.patch_volumes(names, &patch, false).await?;
            }
            Op::EradicateVolumes { names } => array.eradicate_volumes(names).await?,
            Op::SetTags { resource, tags } => {
                array.set_tags(*resource, tags).await?;
            }
            Op::Connect {
                target,
                volumes,
                lun,
            } => {
                array.create_connections(target, volumes, *lun).await?;
            }
            Op::Disconnect { target, volumes } => array.delete_connections(target, volumes).await?,
            Op::CreateToken { admin, lifetime } => {
                let t = array.create_api_token(admin, *lifetime).await?;
                out.token_created_at = t.api_token.created_at;
                out.token = t.api_token.token;
            }
            Op::DeleteToken { admin } => array.delete_api_token(admin).await?,
            Op::Realm(r) => r.send(array).await?,
        }
        Ok(out)
    }

    /// Re-reads the affected objects after an ambiguous failure: `None` when the
    /// operation fully took effect, else the narrowed operation still to send.
    async fn remaining(&self, array: &dyn FlashArray, out: &mut Output) -> Result<Option<Op>> {
        let rest = match self {
            Op::CreatePod { name, tags, .. } => {
                let found = lookup_pods(array, &[name.to_string()]).await?;
                let ours = ours(
                    array,
                    TagResource::Pod,
                    &names_of(&found, |p| &p.name),
                    tags,
                )
                .await?;
                (ours.is_empty()).then(|| self.clone())
            }
            Op::RecoverPods { names } | Op::DestroyPods { names } => {
                let want_destroyed = matches!(self, Op::DestroyPods { .. });
                let found = lookup_pods(array, &strs(names)).await?;
                let left: Vec<PodName> = names
                    .iter()
                    .filter(|n| {
                        found
                            .iter()
                            .any(|p| same(&p.name, n.as_str()) && p.destroyed != want_destroyed)
                    })
                    .cloned()
                    .collect();
                match self {
                    Op::RecoverPods { .. } => {
                        (!left.is_empty()).then_some(Op::RecoverPods { names: left })
                    }
                    _ => (!left.is_empty()).then_some(Op::DestroyPods { names: left }),
                }
            }
            Op::SetPodQuota { name, quota } => {
                let found = lookup_pods(array, &[name.to_string()]).await?;
                (!found.iter().any(|p| p.quota_limit == Some(*quota))).then(|| self.clone())
            }
            Op::EradicatePods { names } => {
                let found = lookup_pods(array, &strs(names)).await?;
                let left: Vec<PodName> = names
                    .iter()
                    .filter(|n| found.iter().any(|p| same(&p.name, n.as_str())))
                    .cloned()
                    .collect();
                (!left.is_empty()).then_some(Op::EradicatePods { names: left })
            }
            Op::CreateHostGroups { names, tags } => {
                let found = lookup_host_groups(array, &strs(names)).await?;
                let ours = ours(
                    array,
                    TagResource::HostGroup,
                    &names_of(&found, |g| &g.name),
                    tags,
                )
                .await?;
                let left: Vec<HostGroupName> = names
                    .iter()
                    .filter(|n| !ours.iter().any(|o| same(o, n.as_str())))
                    .cloned()
                    .collect();
                (!left.is_empty()).then(|| Op::CreateHostGroups {
                    names: left,
                    tags: tags.clone(),
                })
            }
            Op::DeleteHostGroups { names } => {
                let found = lookup_host_groups(array, &strs(names)).await?;
                let left: Vec<HostGroupName> = names
                    .iter()
                    .filter(|n| found.iter().any(|g| same(&g.name, n.as_str())))
                    .cloned()
                    .collect();
                (!left.is_empty()).then_some(Op::DeleteHostGroups { names: left })
            }
            Op::CreateHost { name, post } => {
                let found = lookup_hosts(array, &[name.to_string()]).await?;
                let ours = ours(
                    array,
                    TagResource::Host,
                    &names_of(&found, |h| &h.name),
                    &post.tags,
                )
                .await?;
                ours.is_empty().then(|| self.clone())
            }
            Op::PatchHost { name, patch } => {
                let found = lookup_hosts(array, &[name.to_string()]).await?;
                let done = found.iter().any(|h| {
                    let eq = |have: &[String], want: &Option<Vec<String>>| {
                        want.as_ref().is_none_or(|w| {
                            let mut a: Vec<String> =
                                have.iter().map(|s| s.to_ascii_lowercase()).collect();
                            let mut b: Vec<String> =
                                w.iter().map(|s| s.to_ascii_lowercase()).collect();
                            a.sort();
                            b.sort();
                            a == b
                        })
                    };
                    eq(&h.wwns, &patch.wwns)
                        && eq(&h.iqns, &patch.iqns)
                        && eq(&h.nqns, &patch.nqns)
                        && patch.personality.as_ref().is_none_or(|p| {
                            h.personality.as_ref().map_or("", HostPersonality::as_str) == p.as_str()
                        })
                });
                (!done).then(|| self.clone())
            }
            Op::DeleteHosts { names } => {
                let found = lookup_hosts(array, &strs(names)).await?;
                let left: Vec<HostName> = names
                    .iter()
                    .filter(|n| found.iter().any(|h| same(&h.name, n.as_str())))
                    .cloned()
                    .collect();
                (!left.is_empty()).then_some(Op::DeleteHosts { names: left })
            }
            Op::AddMembers { group, hosts } | Op::RemoveMembers { group, hosts } => {
                let adding = matches!(self, Op::AddMembers { .. });
                let found = lookup_hosts(array, &strs(hosts)).await?;
                let left: Vec<HostName> = hosts
                    .iter()
                    .filter(|n| {
                        let in_group = found.iter().any(|h| {
                            same(&h.name, n.as_str())
                                && h.host_group
                                    .name
                                    .as_deref()
                                    .is_some_and(|g| same(g, group.as_str()))
                        });
                        let exists = found.iter().any(|h| same(&h.name, n.as_str()));
                        if adding {
                            !in_group
                        } else {
                            exists && in_group
                        }
                    })
                    .cloned()
                    .collect();
                match (left.is_empty(), adding) {
                    (true, _) => None,
                    (false, true) => Some(Op::AddMembers {
                        group: group.clone(),
                        hosts: left,
                    }),
                    (false, false) => Some(Op::RemoveMembers {
                        group: group.clone(),
                        hosts: left,
                    }),
                }
            }
            Op::CreateVolumes { items } => {
                let names: Vec<String> = items.iter().map(|i| i.name.to_string()).collect();
                let found = lookup_volumes(array, &names).await?;
                let have =
                    lookup_tags(array, TagResource::Volume, &names_of(&found, |v| &v.name)).await?;
                let mut left = Vec::new();
                for item in items {
                    let made = found.iter().find(|v| same(&v.name, item.name.as_str()));
                    match made.filter(|v| carries(&have, &v.name, &item.tags)) {
                        Some(v) => out.volumes.push(v.clone()),
                        None => left.push(item.clone()),
                    }
                }
                (!left.is_empty()).then_some(Op::CreateVolumes { items: left })
            }
            Op::RecoverVolumes { names } | Op::DestroyVolumes { names } => {
                let destroying = matches!(self, Op::DestroyVolumes { .. });
                let found = lookup_volumes(array, &strs(names)).await?;
                let left: Vec<VolumeName> = names
                    .iter()
                    .filter(|n| {
                        found
                            .iter()
                            .any(|v| same(&v.name, n.as_str()) && v.destroyed != destroying)
                    })
                    .cloned()
                    .collect();
                if !destroying {
                    out.volumes
                        .extend(found.into_iter().filter(|v| !v.destroyed));
                }
                match (left.is_empty(), destroying) {
                    (true, _) => None,
                    (false, true) => Some(Op::DestroyVolumes { names: left }),
                    (false, false) => Some(Op::RecoverVolumes { names: left }),
                }
            }
            Op::ResizeVolumes {
                size,
                truncate,
                names,
            } => {
                let found = lookup_volumes(array, &strs(names)).await?;
                let left: Vec<VolumeName> = names
                    .iter()
                    .filter(|n| {
                        !found
                            .iter()
                            .any(|v| same(&v.name, n.as_str()) && v.provisioned == *size)
                    })
                    .cloned()
                    .collect();
                (!left.is_empty()).then_some(Op::ResizeVolumes {
                    size: *size,
                    truncate: *truncate,
                    names: left,
                })
            }
            Op::EradicateVolumes { names } => {
                let found = lookup_volumes(array, &strs(names)).await?;
                let left: Vec<VolumeName> = names
                    .iter()
                    .filter(|n| found.iter().any(|v| same(&v.name, n.as_str())))
                    .cloned()
                    .collect();
                (!left.is_empty()).then_some(Op::EradicateVolumes { names: left })
            }
            Op::SetTags { resource, tags } => {
                let mut names: Vec<String> = tags
                    .iter()
                    .filter_map(|t| t.resource.name.clone())
                    .collect();
                names.sort();
                names.dedup();
                let have = lookup_tags(array, *resource, &names).await?;
                let left: Vec<Tag> = tags
                    .iter()
                    .filter(|t| {
                        !have.iter().any(|h| {
                            h.key == t.key
                                && h.value == t.value
                                && h.namespace == t.namespace
                                && h.resource
                                    .name
                                    .as_deref()
                                    .zip(t.resource.name.as_deref())
                                    .is_some_and(|(a, b)| same(a, b))
                        })
                    })
                    .cloned()
                    .collect();
                (!left.is_empty()).then_some(Op::SetTags {
                    resource: *resource,
                    tags: left,
                })
            }
            Op::Connect {
                target, volumes, ..
            }
            | Op::Disconnect { target, volumes } => {
                let (connecting, lun) = match self {
                    Op::Connect { lun, .. } => (true, *lun),
                    _ => (false, None),
                };
                let rows = list_connections_of(array, &strs(volumes), &[], &[]).await?;
                let left: Vec<VolumeName> = volumes
                    .iter()
                    .filter(|v| {
                        let connected = rows.iter().any(|r| {
                            r.volume
                                .name
                                .as_deref()
                                .is_some_and(|n| same(n, v.as_str()))
                                && match target {
                                    ConnectionTarget::HostGroup(g) => r
                                        .host_group
                                        .name
                                        .as_deref()
                                        .is_some_and(|n| same(n, g.as_str())),
                                    ConnectionTarget::Host(h) => {
                                        r.host_group.name.is_none()
                                            && r.host
                                                .name
                                                .as_deref()
                                                .is_some_and(|n| same(n, h.as_str()))
                                    }
                                }
                        });
                        connected != connecting
                    })
                    .cloned()
                    .collect();
                match (left.is_empty(), connecting) {
                    (true, _) => None,
                    (false, true) => Some(Op::Connect {
                        target: target.clone(),
                        volumes: left,
                        lun,
                    }),
                    (false, false) => Some(Op::Disconnect {
                        target: target.clone(),
                        volumes: left,
                    }),
                }
            }
            Op::CreateToken { admin, .. } | Op::DeleteToken { admin } => {
                let creating = matches!(self, Op::CreateToken { .. });
                let items = array
                    .list_api_tokens(std::slice::from_ref(admin), creating)
                    .await?;
                let token = items
                    .into_iter()
                    .find(|a| same(&a.name, admin))
                    .map(|a| a.api_token)
                    .filter(|t| {
                        t.created_at.is_some() || t.token.is_some() || t.expires_at.is_some()
                    });
                let has = token.is_some();
                if creating && let Some(t) = token {
                    out.token_created_at = t.created_at;
                    out.token = t.token;
                }
                (has != creating).then(|| self.clone())
            }
            Op::Realm(r) => r.still_needed(array).await?.then(|| self.clone()),
        };
        Ok(rest)
    }
}

/// Sends `op`; after an ambiguous failure re-reads, and sends only what is missing.
/// Returns the number of REST calls made alongside the outcome. A token creation is
/// journaled in `vault` (see [`crate::vault`]): intent before the first send, the
/// token as soon as a send or re-read returns it, with no await in between.
pub(crate) async fn run(
    array: &dyn FlashArray,
    op: &Op,
    vault: Option<&dyn TokenVault>,
) -> (usize, std::result::Result<Output, Failure>) {
    let journal = match (op, vault) {
        (Op::CreateToken { admin, .. }, Some(v)) => Some((admin.as_str(), v)),
        _ => None,
    };
    if let Some((admin, v)) = journal
        && let Err(e) = v.record_intent(admin, crate::vault::now_ms())
    {
        let message = format!(
            "{}: not sent, because the intent could not be recorded ({e}); the array shows a token only once",
            op.describe()
        );
        return (
            0,
            Err(Failure {
                message,
                request_id: None,
                kind: flasharray::ErrorKind::Other,
            }),
        );
    }
    let (calls, result) = send_narrowed(array, op).await;
    if let (Some((admin, v)), Ok(out)) = (journal, &result)
        && let Some(token) = &out.token
    {
        // No await since the answer: nothing can cancel between the two. A journal
        // that cannot be written leaves the token in memory, delivered by this run.
        let _ = v.record_token(admin, out.token_created_at, token);
    }
    // The answer with the value was lost and a re-read found the token (without its
    // value, which the array shows only once): created, but nobody has it. Not a
    // success: the journal keeps the intent, and the next run replaces the token.
    if let (Op::CreateToken { .. }, Ok(out)) = (op, &result)
        && out.token.is_none()
    {
        return (
            calls,
            Err(Failure {
                message: format!(
                    "{}: the array created the token but its answer (the only one that shows the value) was lost; the next run replaces it",
                    op.describe()
                ),
                request_id: None,
                kind: flasharray::ErrorKind::Other,
            }),
        );
    }
    (calls, result)
}

async fn send_narrowed(
    array: &dyn FlashArray,
    op: &Op,
) -> (usize, std::result::Result<Output, Failure>) {
    let mut calls = 0;
    let mut current = op.clone();
    let mut out = Output::default();
    let mut attempt = 0;
    loop {
        attempt += 1;
        calls += 1;
        match current.send(array).await {
            Ok(o) => {
                out.volumes.extend(o.volumes);
                if o.token.is_some() {
                    out.token = o.token;
                    out.token_created_at = o.token_created_at;
                }
                return (calls, Ok(out));
            }
            Err(e) if e.maybe_applied() && attempt < MAX_SENDS => {
                calls += 1;
                match current.remaining(array, &mut out).await {
                    Ok(None) => return (calls, Ok(out)),
                    Ok(Some(rest)) => current = rest,
                    Err(read) => {
                        let message = format!(
                            "{}: {e}; re-reading to check whether it took effect failed too: {read}",
                            op.describe()
                        );
                        return (calls, Err(Failure::new(&e, message)));
                    }
                }
            }
            Err(e) => {
                let message = format!("{}: {e}", op.describe());
                return (calls, Err(Failure::new(&e, message)));
            }
        }
    }
}
