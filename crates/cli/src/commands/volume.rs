//! `pxfa volume ...`.

use anyhow::{Context, Result};
use comfy_table::Table;
use flasharray::models::{Tag, Volume, VolumePatch, VolumePost};
use flasharray::{ListParams, Size, TagParams, TagResource};
use px_topology::{VolumeHolder, read_volume_holders};

use super::{Ctx, describe, destroyed_filter, list_params, volume_names};
use crate::args::{DestroyedArgs, ListArgs, TagArgs, VolumeCmd};
use crate::confirm::{check_selection, confirm};
use crate::exit::{InvalidInput, Outcome};
use crate::output::{
    Printer, destroyed_state, human_size, human_size_opt, inert_cell, local_time_opt, or_dash,
};

/// Runs a `volume` subcommand.
pub(crate) async fn run(cmd: VolumeCmd, ctx: &Ctx<'_>) -> Result<Outcome> {
    match cmd {
        VolumeCmd::List {
            list,
            destroyed,
            tenant,
        } => list_volumes(ctx, &list, &destroyed, tenant.as_deref()).await?,
        VolumeCmd::Get { name } => get(ctx, &name).await?,
        VolumeCmd::Create { names, size } => create(ctx, &names, &size).await?,
        VolumeCmd::Resize {
            names,
            size,
            truncate,
        } => resize(ctx, &names, &size, truncate).await?,
        VolumeCmd::Rename { name, new_name } => rename(ctx, &name, &new_name).await?,
        VolumeCmd::Destroy { names } => destroy(ctx, &names).await?,
        VolumeCmd::Recover { names } => recover(ctx, &names).await?,
        VolumeCmd::Eradicate { names } => eradicate(ctx, &names).await?,
        VolumeCmd::Tag(args) => {
            let vnames = volume_names(&args.names)?;
            let names: Vec<String> = vnames.iter().map(|n| n.as_str().to_string()).collect();
            tag(ctx, TagResource::Volume, &names, &args).await?;
        }
    }
    Ok(Outcome::Success)
}

/// `volume list`: with `--tenant`, only that tenant's volumes; `-o wide` and
/// `--tenant` read the `pxfa.io` tags (the ownership rule's holder, as `usage`
/// counts it) for the TENANT and WORKER columns.
async fn list_volumes(
    ctx: &Ctx<'_>,
    list: &ListArgs,
    destroyed: &DestroyedArgs,
    tenant: Option<&str>,
) -> Result<()> {
    let p = ctx.printer;
    volume_names(&list.names)?;
    let filter = tenant.map(super::usage::tenant_filter).transpose()?;
    let mut params = list_params(list, destroyed_filter(destroyed))?;
    // The limit applies after the tenant filter: the array cannot filter by tags.
    let limit = if filter.is_some() {
        params.limit.take()
    } else {
        None
    };
    let vols = ctx
        .array()
        .list_volumes(&params)
        .await
        .context("cannot list volumes")?;
    if filter.is_none() && !p.wide() {
        return p.emit_list("volume", &vols, |v| v.name.clone(), || table(p, &vols, &[]));
    }
    let holders = read_volume_holders(ctx.array(), &vols)
        .await
        .context("cannot read the volumes' pxfa.io tags")?;
    let (vols, holders): (Vec<Volume>, Vec<VolumeHolder>) = vols
        .into_iter()
        .zip(holders)
        .filter(|(_, h)| filter.as_ref().is_none_or(|f| h.holder.is_named_by(f)))
        .take(limit.unwrap_or(usize::MAX))
        .unzip();
    p.emit_list(
        "volume",
        &vols,
        |v| v.name.clone(),
        || table(p, &vols, &holders),
    )
}

/// `volume get`.
async fn get(ctx: &Ctx<'_>, name: &str) -> Result<()> {
    let p = ctx.printer;
    let names = volume_names(&[name.to_string()])?;
    let vols = ctx
        .array()
        .list_volumes(&ListParams::names(&names))
        .await
        .with_context(|| format!("cannot read volume {name}"))?;
    let v = vols
        .into_iter()
        .next()
        .with_context(|| format!("volume {name} does not exist"))?;
    p.emit(&v, || detail(p, &v))
}

/// `volume create`.
async fn create(ctx: &Ctx<'_>, names: &[String], size: &str) -> Result<()> {
    let p = ctx.printer;
    let vnames = volume_names(names)?;
    let size = Size::parse_flag(size)?.check_volume()?;
    let created = ctx
        .array()
        .create_volumes(
            &vnames,
            &VolumePost::default().with_provisioned(size.as_u64()),
        )
        .await
        .with_context(|| format!("cannot create {}", describe("volume", names)))?;
    p.done(format!("created {} of {size}", describe("volume", names)));
    p.emit(&created, || table(p, &created, &[]))
}

/// `volume resize`: a shrink only with `--truncate`, and confirmed.
async fn resize(ctx: &Ctx<'_>, names: &[String], size: &str, truncate: bool) -> Result<()> {
    let p = ctx.printer;
    let array = ctx.array();
    let vnames = volume_names(names)?;
    let size = Size::parse_flag(size)?.check_volume()?;
    let current = array
        .list_volumes(&ListParams::names(&vnames))
        .await
        .with_context(|| format!("cannot read {}", describe("volume", names)))?;
    let shrinking: Vec<String> = current
        .iter()
        .filter(|v| v.provisioned > size.as_u64())
        .map(|v| format!("{} ({})", v.name, human_size(v.provisioned)))
        .collect();
    if !shrinking.is_empty() && !truncate {
        return Err(InvalidInput::error(format!(
            "refusing to shrink {} to {size}: data beyond the new size would be lost; add --truncate if that is intended",
            shrinking.join(", ")
        )));
    }
    if !shrinking.is_empty() {
        confirm(
            ctx.yes,
            &format!(
                "shrink {} to {size}, losing data beyond it",
                shrinking.join(", ")
            ),
        )?;
    }
    let patch = VolumePatch::default().with_provisioned(size.as_u64());
    let out = array
        .patch_volumes(&vnames, &patch, truncate)
        .await
        .with_context(|| format!("cannot resize {}", describe("volume", names)))?;
    p.done(format!("resized {} to {size}", describe("volume", names)));
    p.emit(&out, || table(p, &out, &[]))
}

/// `volume rename`.
async fn rename(ctx: &Ctx<'_>, name: &str, new_name: &str) -> Result<()> {
    let p = ctx.printer;
    let old = volume_names(&[name.to_string()])?;
    let new = volume_names(&[new_name.to_string()])?;
    let patch = VolumePatch::default().with_name(new[0].as_str().to_string());
    let out = ctx
        .array()
        .patch_volumes(&old, &patch, false)
        .await
        .with_context(|| format!("cannot rename volume {name} to {new_name}"))?;
    p.done(format!("renamed volume {name} to {new_name}"));
    p.emit(&out, || table(p, &out, &[]))
}

/// `volume destroy`: recoverable until eradicated, confirmed.
async fn destroy(ctx: &Ctx<'_>, names: &[String]) -> Result<()> {
    let p = ctx.printer;
    check_selection("volume destroy", names)?;
    let vnames = volume_names(names)?;
    confirm(
        ctx.yes,
        &format!(
            "destroy {} (recoverable until eradicated)",
            describe("volume", names)
        ),
    )?;
    let patch = VolumePatch::destroy();
    let out = ctx
        .array()
        .patch_volumes(&vnames, &patch, false)
        .await
        .with_context(|| format!("cannot destroy {}", describe("volume", names)))?;
    p.done(format!(
        "destroyed {}; `pxfa volume recover` brings them back until they are eradicated",
        describe("volume", names)
    ));
    p.emit(&out, || table(p, &out, &[]))
}

/// `volume recover`.
async fn recover(ctx: &Ctx<'_>, names: &[String]) -> Result<()> {
    let p = ctx.printer;
    let vnames = volume_names(names)?;
    let patch = VolumePatch::recover();
    let out = ctx
        .array()
        .patch_volumes(&vnames, &patch, false)
        .await
        .with_context(|| format!("cannot recover {}", describe("volume", names)))?;
    p.done(format!("recovered {}", describe("volume", names)));
    p.emit(&out, || table(p, &out, &[]))
}

/// `volume eradicate`: irreversible, confirmed.
async fn eradicate(ctx: &Ctx<'_>, names: &[String]) -> Result<()> {
    let p = ctx.printer;
    check_selection("volume eradicate", names)?;
    let vnames = volume_names(names)?;
    confirm(
        ctx.yes,
        &format!("eradicate {} (irreversible)", describe("volume", names)),
    )?;
    ctx.array()
        .eradicate_volumes(&vnames)
        .await
        .with_context(|| format!("cannot eradicate {}", describe("volume", names)))?;
    p.done(format!("eradicated {}", describe("volume", names)));
    p.emit(&serde_json::json!({ "eradicated": names }), || {
        let mut t = p.table(&["ERADICATED"]);
        for n in names {
            t.add_row(vec![n.clone()]);
        }
        t
    })
}

/// Shows, sets or removes tags on objects of `kind`; shared with other resources.
pub(crate) async fn tag(
    ctx: &Ctx<'_>,
    kind: TagResource,
    names: &[String],
    args: &TagArgs,
) -> Result<()> {
    let array = ctx.array();
    let p = ctx.printer;
    let mut set = Vec::new();
    for kv in &args.set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| InvalidInput::error(format!("--set {kv:?}: expected KEY=VALUE")))?;
        if k.trim().is_empty() {
            return Err(InvalidInput::error(format!(
                "--set {kv:?}: the key is empty"
            )));
        }
        for n in names {
            set.push(Tag::new(n.as_str(), args.namespace.as_str(), k.trim(), v));
        }
    }
    if !set.is_empty() {
        array
            .set_tags(kind, &set)
            .await
            .with_context(|| format!("cannot tag {}", describe(kind.collection(), names)))?;
        p.done(format!(
            "set {} tag(s) on {}",
            args.set.len(),
            describe("object", names)
        ));
    }
    if !args.remove.is_empty() {
        array
            .delete_tags(
                kind,
                names,
                &args.remove,
                std::slice::from_ref(&args.namespace),
            )
            .await
            .with_context(|| format!("cannot remove tags from {}", describe("object", names)))?;
        p.done(format!(
            "removed tag(s) {} from {}",
            args.remove.join(", "),
            describe("object", names)
        ));
    }
    let tags = array
        .list_tags(
            kind,
            &TagParams {
                resource_names: names.to_vec(),
                namespaces: Vec::new(),
                resource_destroyed: None,
            },
        )
        .await
        .with_context(|| format!("cannot list tags of {}", describe("object", names)))?;
    p.emit(&tags, || tag_table(p, &tags))
}

fn tag_table(p: &Printer, tags: &[Tag]) -> Table {
    let mut t = p.table(&["OBJECT", "NAMESPACE", "KEY", "VALUE"]);
    for tag in tags {
        t.add_row(vec![
            or_dash(tag.resource.name.as_deref()),
            or_dash(tag.namespace.as_deref()),
            tag.key.clone(),
            tag.value.clone(),
        ]);
    }
    t
}

/// The volume list table; `-o wide` adds the holder and worker of each volume from
/// `holders` (in the same order; `-` where not given).
pub(crate) fn table(p: &Printer, vols: &[Volume], holders: &[VolumeHolder]) -> Table {
    let mut headers = vec![
        "NAME",
        "SIZE",
        "USED",
        "CONNECTIONS",
        "SERIAL",
        "CREATED",
        "STATE",
    ];
    if p.wide() {
        headers.extend(["ID", "POD", "QOS BANDWIDTH", "QOS IOPS", "TENANT", "WORKER"]);
    }
    let mut t = p.table(&headers);
    for (i, v) in vols.iter().enumerate() {
        let mut row = vec![
            v.name.clone(),
            human_size(v.provisioned),
            human_size_opt(v.space.total_used.or(v.space.total_physical)),
            v.connection_count
                .map_or_else(|| "-".into(), |c| c.to_string()),
            or_dash(v.serial.as_deref()),
            local_time_opt(v.created),
            destroyed_state(v.destroyed, v.time_remaining),
        ];
        if p.wide() {
            row.extend([
                or_dash(v.id.as_deref()),
                or_dash(v.pod.name.as_deref()),
                v.qos
                    .bandwidth_limit
                    .map_or_else(|| "unlimited".into(), |b| format!("{}/s", human_size(b))),
                v.qos
                    .iops_limit
                    .map_or_else(|| "unlimited".into(), |c| c.to_string()),
            ]);
            let h = holders.get(i);
            row.push(h.map_or_else(|| "-".into(), |h| inert_cell(&h.holder.to_string())));
            row.push(h.and_then(|h| h.worker).map_or_else(
                || "-".into(),
                |w| format!("{w} ({})", h.and_then(|h| h.disk.as_deref()).unwrap_or("-")),
            ));
        }
        t.add_row(row);
    }
    t
}

fn detail(p: &Printer, v: &Volume) -> Table {
    p.kv_table(vec![
        ("name", v.name.clone()),
        ("id", or_dash(v.id.as_deref())),
        ("size", human_size(v.provisioned)),
        (
            "used",
            human_size_opt(v.space.total_used.or(v.space.total_physical)),
        ),
        ("pod", or_dash(v.pod.name.as_deref())),
        ("serial", or_dash(v.serial.as_deref())),
        (
            "connections",
            v.connection_count
                .map_or_else(|| "-".into(), |c| c.to_string()),
        ),
        ("created", local_time_opt(v.created)),
        ("state", destroyed_state(v.destroyed, v.time_remaining)),
        (
            "qos bandwidth",
            v.qos
                .bandwidth_limit
                .map_or_else(|| "unlimited".into(), |b| format!("{}/s", human_size(b))),
        ),
        (
            "qos iops",
            v.qos
                .iops_limit
                .map_or_else(|| "unlimited".into(), |c| c.to_string()),
        ),
    ])
}
