//! What ties objects together: tags, host group membership, connections.

use super::named::same_opt;
use super::{Settling, Verdict, rounds, split};
use crate::array::signature::*;

impl<A: FlashArray> Settling<A> {
    /// Tags the array now shows with the asked value are done; the others are put
    /// again (a tag put is an overwrite, so this cannot double up).
    pub(super) async fn set_tags(&self, kind: TagResource, tags: &[Tag]) -> Result<Vec<Tag>> {
        rounds(
            "set_tags",
            tags.to_vec(),
            |p| Box::pin(async move { self.inner.set_tags(kind, &p).await }),
            |pending| {
                Box::pin(async move {
                    let mut names: Vec<String> = pending
                        .iter()
                        .filter_map(|t| t.resource.name.clone())
                        .collect();
                    names.sort();
                    names.dedup();
                    let params = TagParams {
                        resource_names: names,
                        ..Default::default()
                    };
                    let have = self.inner.list_tags(kind, &params).await?;
                    let (done, rest): (Vec<Tag>, Vec<Tag>) =
                        pending.into_iter().partition(|t| shows(&have, t));
                    Ok(Verdict::Known {
                        done,
                        pending: rest,
                    })
                })
            },
        )
        .await
    }

    /// Objects that no longer carry any of the keys are done; the others are sent
    /// again.
    pub(super) async fn delete_tags(
        &self,
        kind: TagResource,
        resource_names: &[String],
        keys: &[String],
        namespaces: &[String],
    ) -> Result<()> {
        rounds(
            "delete_tags",
            resource_names.to_vec(),
            |p| {
                Box::pin(async move {
                    let sent = self.inner.delete_tags(kind, &p, keys, namespaces).await;
                    sent.map(|()| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let params = TagParams {
                        resource_names: pending.clone(),
                        namespaces: namespaces.to_vec(),
                        ..Default::default()
                    };
                    let existing = self.inner.list_tags(kind, &params).await?;
                    let (rest, done): (Vec<String>, Vec<String>) =
                        pending.into_iter().partition(|r| {
                            existing.iter().any(|e| {
                                same_opt(e.resource.name.as_deref(), Some(r))
                                    && keys.contains(&e.key)
                            })
                        });
                    Ok(split(done.len(), rest))
                })
            },
        )
        .await
        .map(drop)
    }

    /// Hosts now listed in the group are done; the others are added again.
    pub(super) async fn add_host_group_members(
        &self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<Vec<Member>> {
        rounds(
            "add_host_group_members",
            hosts.to_vec(),
            |p| Box::pin(async move { self.inner.add_host_group_members(group, &p).await }),
            |pending| {
                Box::pin(async move {
                    let members = self.members_of(group).await?;
                    let mut done = Vec::new();
                    let mut rest = Vec::new();
                    for h in pending {
                        match members.iter().find(|m| is_member(m, &h)) {
                            Some(m) => done.push(m.clone()),
                            None => rest.push(h),
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

    /// Hosts no longer in the group are done.
    pub(super) async fn remove_host_group_members(
        &self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<()> {
        rounds(
            "remove_host_group_members",
            hosts.to_vec(),
            |p| {
                Box::pin(async move {
                    let sent = self.inner.remove_host_group_members(group, &p).await;
                    sent.map(|()| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let members = self.members_of(group).await?;
                    let (rest, done): (Vec<HostName>, Vec<HostName>) = pending
                        .into_iter()
                        .partition(|h| members.iter().any(|m| is_member(m, h)));
                    Ok(split(done.len(), rest))
                })
            },
        )
        .await
        .map(drop)
    }

    /// Volumes the target now sees are done; the others are connected again (a LUN
    /// asked for is kept); a volume connected on another LUN is undecided.
    pub(super) async fn create_connections(
        &self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
        lun: Option<u32>,
    ) -> Result<Vec<Connection>> {
        rounds(
            "create_connections",
            volumes.to_vec(),
            |p| Box::pin(async move { self.inner.create_connections(target, &p, lun).await }),
            |pending| {
                Box::pin(async move {
                    let rows = self.connections_of(target).await?;
                    let mut done = Vec::new();
                    let mut rest = Vec::new();
                    for v in pending {
                        let mine: Vec<&Connection> = rows
                            .iter()
                            .filter(|c| is_connection(c, target, v.as_str()))
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

    /// Volumes the target no longer sees are done.
    pub(super) async fn delete_connections(
        &self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
    ) -> Result<()> {
        rounds(
            "delete_connections",
            volumes.to_vec(),
            |p| {
                Box::pin(async move {
                    let sent = self.inner.delete_connections(target, &p).await;
                    sent.map(|()| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let rows = self.connections_of(target).await?;
                    let (rest, done): (Vec<VolumeName>, Vec<VolumeName>) = pending
                        .into_iter()
                        .partition(|v| rows.iter().any(|c| is_connection(c, target, v.as_str())));
                    Ok(split(done.len(), rest))
                })
            },
        )
        .await
        .map(drop)
    }

    /// Every member of `group`.
    async fn members_of(&self, group: &HostGroupName) -> Result<Vec<Member>> {
        let params = MemberParams {
            group_names: vec![group.to_string()],
            member_names: Vec::new(),
        };
        self.inner.list_host_group_members(&params).await
    }

    /// Every connection of the target (a volume that is not connected must not fail
    /// the read, so volumes are picked locally).
    async fn connections_of(&self, target: &ConnectionTarget) -> Result<Vec<Connection>> {
        let params = match target {
            ConnectionTarget::Host(h) => ConnectionParams {
                host_names: vec![h.to_string()],
                ..Default::default()
            },
            ConnectionTarget::HostGroup(g) => ConnectionParams {
                host_group_names: vec![g.to_string()],
                ..Default::default()
            },
        };
        self.inner.list_connections(&params).await
    }
}

/// Whether the listing `have` shows `tag` with its value.
fn shows(have: &[Tag], tag: &Tag) -> bool {
    have.iter().any(|h| {
        h.key == tag.key
            && h.value == tag.value
            && h.namespace.as_deref().unwrap_or("default")
                == tag.namespace.as_deref().unwrap_or("default")
            && same_opt(h.resource.name.as_deref(), tag.resource.name.as_deref())
    })
}

fn is_member(m: &Member, host: &HostName) -> bool {
    same_opt(m.member.name.as_deref(), Some(host.as_str()))
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
