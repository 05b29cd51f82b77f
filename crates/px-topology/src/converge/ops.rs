//! Array operations: one REST call each, batched over names.
//!
//! A write whose answer was lost (`Error::maybe_applied`) may or may not have taken
//! effect. Sending it again blindly could duplicate a create or fail on "already
//! exists". Settling that is [`flasharray::Settling`]'s (its rules are in
//! `flasharray::settle`), the one layer, which the caller puts around the array it
//! hands converge (the CLI's session, the controller's pool): [`run`] sends each
//! operation once through that array and adds no layer of its own, so a write is
//! settled once, whoever calls.

use std::time::Duration;

use flasharray::models::{
    HostGroupPost, HostPatch, HostPost, PodPatch, PodPost, Tag, TagBody, Volume, VolumeBatchPost,
    VolumePatch,
};
use flasharray::{
    ConnectionTarget, Error, FlashArray, HostGroupName, HostName, PodName, Result, TagResource,
    VolumeName,
};
use secrecy::SecretString;

use super::realm_ops::RealmOp;
use crate::token_journal::TokenJournal;

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

fn joined<T: AsRef<str>>(v: &[T]) -> String {
    let names: Vec<&str> = v.iter().map(AsRef::as_ref).collect();
    if names.len() > 4 {
        format!("{}, ... ({} in all)", names[..3].join(", "), names.len())
    } else {
        names.join(", ")
    }
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
}

/// Sends `op` through `array`, which is expected inside [`flasharray::Settling`] (see
/// the module text). Returns the writes pxfa asked for (one; re-reads and re-sends
/// are the settling layer's) alongside the outcome. A token creation is journaled
/// in `token_journal` (see [`crate::token_journal`]): intent before the send, the token as soon as
/// the send (or the settling layer's re-read) returns it, with no await in between.
pub(crate) async fn run(
    array: &dyn FlashArray,
    op: &Op,
    token_journal: Option<&dyn TokenJournal>,
) -> (usize, std::result::Result<Output, Failure>) {
    let journal = match (op, token_journal) {
        (Op::CreateToken { admin, .. }, Some(v)) => Some((admin.as_str(), v)),
        _ => None,
    };
    if let Some((admin, v)) = journal
        && let Err(e) = v.record_intent(admin, crate::token_journal::now_ms())
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
    let result = op
        .send(array)
        .await
        .map_err(|e| Failure::new(&e, format!("{}: {e}", op.describe())));
    let calls = 1;
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

#[cfg(test)]
mod tests {
    use super::*;
    use flasharray::Settling;
    use flasharray::settle::WRITE_ROUNDS;
    use flasharray_mock::MockArray;

    fn create_pod() -> Op {
        Op::CreatePod {
            name: PodName::new("pod1").unwrap(),
            quota: None,
            tags: Vec::new(),
        }
    }

    /// Drops every send (more than two layers could make) of the pod's creation and
    /// runs it on `array`; how often it went out.
    async fn sends_with_every_send_dropped(mock: &MockArray, array: &dyn FlashArray) -> u64 {
        for nth in 1..=u64::from(WRITE_ROUNDS * WRITE_ROUNDS) {
            mock.faults().drop_write(nth);
        }
        let (_, result) = run(array, &create_pod(), None).await;
        assert!(result.is_err(), "every send was dropped");
        mock.stats().op(flasharray_mock::Op::CreatePods)
    }

    /// The CLI and the controller hand converge an array inside `Settling`; it is
    /// settled there once: every send of the create is dropped and it goes out
    /// `WRITE_ROUNDS` times, not their square.
    #[tokio::test]
    async fn an_array_inside_settling_is_settled_once() {
        let mock = MockArray::new();
        let sends = sends_with_every_send_dropped(&mock, &Settling::new(mock.clone())).await;
        assert_eq!(sends, u64::from(WRITE_ROUNDS));
    }

    /// Converge adds no layer of its own: over a bare array a lost create is sent
    /// once and reported.
    #[tokio::test]
    async fn converge_settles_nothing_itself() {
        let mock = MockArray::new();
        let sends = sends_with_every_send_dropped(&mock, &mock).await;
        assert_eq!(sends, 1);
    }
}
