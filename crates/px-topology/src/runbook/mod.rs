//! `pxfa runbook`: the ordered day-2 steps for one tenant — scale out, scale in,
//! grow, add a pool, replace a VM, delete, management-cluster maintenance — for each storage mode, with the names of
//! this tenant filled in, where each step runs, what to check before going on, and
//! the vendor page it follows.
//!
//! The steps are data (`steps`), the pages they cite are data (`sources`), and
//! `pieces` says, per operation and mode, which pieces in which order: one rule
//! per place. Names come from the spec's own functions and `naming`; device
//! paths from the rendered tenant StorageCluster. `docs/lifecycle.md` carries
//! [`reference_markdown`] between markers, and a test keeps it current.

pub(crate) mod sources;
pub(crate) mod steps;
mod text;

use std::collections::BTreeMap;
use std::str::FromStr;

use serde::Serialize;

pub(crate) use sources::SOURCES;
pub use sources::{Confidence, Source};
pub(crate) use steps::{Piece, StepTemplate};
pub use steps::{STATUS_CHECKS, Where, verifiable};
pub use text::{reference_markdown, to_text};

use crate::Tenant;
use crate::driver::ArrayFacts;
use crate::manifests::{RenderOptions, render};
use crate::naming::{DiskRole, worker_volume_short};
use crate::render::Cluster;
use crate::spec::StorageMode;
use crate::spec::provisioning::Strategy;
use steps::*;

/// The runbook's document version.
pub(crate) const API_VERSION: &str = "pxfa.io/v1alpha1";

/// Portworx needs at least this many storage nodes (Portworx system requirements).
pub(crate) const MIN_PORTWORX_NODES: u32 = 3;

/// A day-2 operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    /// More workers.
    ScaleOut,
    /// Fewer workers.
    ScaleIn,
    /// More capacity by larger drives.
    Grow,
    /// More capacity by new pools.
    AddPool,
    /// A worker VM was lost and replaced.
    ReplaceVm,
    /// The tenant goes.
    Delete,
    /// The management cluster is upgraded (OpenShift, OpenShift Virtualization,
    /// Portworx), one node at a time, under the tenant's workers.
    ManagementMaintenance,
}

impl Operation {
    /// Every operation, in the order the docs list them.
    pub const ALL: [Operation; 7] = [
        Operation::ScaleOut,
        Operation::ScaleIn,
        Operation::Grow,
        Operation::AddPool,
        Operation::ReplaceVm,
        Operation::Delete,
        Operation::ManagementMaintenance,
    ];

    /// The command-line name.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::ScaleOut => "scale-out",
            Operation::ScaleIn => "scale-in",
            Operation::Grow => "grow",
            Operation::AddPool => "add-pool",
            Operation::ReplaceVm => "replace-vm",
            Operation::Delete => "delete",
            Operation::ManagementMaintenance => "management-maintenance",
        }
    }

    /// Every command-line name.
    pub fn names() -> [&'static str; 7] {
        Operation::ALL.map(Operation::as_str)
    }
}

impl FromStr for Operation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Operation::ALL
            .into_iter()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown operation {s:?}; one of {}",
                    Operation::names().join(", ")
                )
            })
    }
}

/// Why there is no runbook for this request; the CLI exits 2 with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NoRunbook(pub String);

/// Which pieces, in which order, make `op` for `mode`; `Err` says plainly why the
/// operation does not apply.
pub(crate) fn pieces(op: Operation, mode: StorageMode) -> Result<Vec<Piece>, &'static str> {
    use Operation as O;
    use StorageMode as S;
    Ok(match (op, mode) {
        (O::ScaleOut, S::DirectAccess) => vec![NODEPOOL_SCALE_OUT, DA_STATUS, NEW_NODE_JOINED],
        (O::ManagementMaintenance, S::DirectAccess) => {
            vec![MAINT_PREPARE, MAINT_DA_NODE, MAINT_PORTWORX, DA_STATUS]
        }
        (O::ManagementMaintenance, S::CloudDrive | S::KubevirtCsi) => {
            vec![MAINT_PREPARE, MAINT_MIGRATE, MAINT_PORTWORX]
        }
        (O::ScaleOut, S::CloudDrive) => {
            vec![NODEPOOL_SCALE_OUT, CD_LABEL_NEW_NODE, NEW_NODE_JOINED]
        }
        (O::ScaleOut, S::KubevirtCsi) => vec![CSI_SCALE_OUT],
        (O::ScaleIn, S::DirectAccess) => DA_SCALE_IN.to_vec(),
        (O::ScaleIn, S::CloudDrive) => vec![
            CD_FIND_NODE,
            CD_DRIVESETS,
            CD_DECOMMISSION,
            CD_DRIVESET_GONE,
            NODEPOOL_REMOVE_NODE,
            RESTORE_REPLICATION,
        ],
        (O::ScaleIn, S::KubevirtCsi) => vec![CSI_DRAIN, NODEPOOL_REMOVE_NODE],
        (O::Grow, S::DirectAccess) => vec![DA_GROW],
        (O::Grow, S::CloudDrive) => vec![CD_GROW],
        (O::Grow, S::KubevirtCsi) => {
            return Err(
                "grow does not apply to kubevirt-csi: no Portworx runs in the tenant, so there is no pool to grow; a guest volume grows by editing its claim, and its space comes from the management Portworx",
            );
        }
        (O::AddPool, S::DirectAccess) => vec![DA_ADD_POOL],
        (O::AddPool, S::CloudDrive) => {
            return Err(
                "add-pool does not apply to cloud-drive: its pools grow by resize-drive within the pod quota (pxfa runbook grow); PX-StoreV2 pools take no added drives, and adding a new cloud-drive pool has no confirmed procedure [L]",
            );
        }
        (O::AddPool, S::KubevirtCsi) => {
            return Err(
                "add-pool does not apply to kubevirt-csi: no Portworx runs in the tenant, so there are no pools",
            );
        }
        (O::ReplaceVm, S::DirectAccess) => vec![
            FIND_WORKER_VM,
            DECOMMISSION_OFFLINE,
            DA_REJOIN_WIPED,
            RESTORE_REPLICATION,
            DA_STATUS,
        ],
        (O::ReplaceVm, S::CloudDrive) => vec![CD_REPLACE, NEW_NODE_JOINED, RESTORE_REPLICATION],
        (O::ReplaceVm, S::KubevirtCsi) => vec![CSI_REPLACE],
        (O::Delete, S::DirectAccess) => vec![
            DA_DELETE_PREPARE,
            DA_DELETE_RELEASE_DYNAMIC,
            DELETE_HOSTED_CLUSTER,
            DA_DELETE_RELEASED_DYNAMIC,
            DELETE_TENANT_OBJECTS,
            PXFA_DESTROY,
            DA_DELETE_LEFTOVERS,
        ],
        (O::Delete, S::CloudDrive) => vec![
            CD_UNINSTALL,
            DELETE_HOSTED_CLUSTER,
            DELETE_TENANT_OBJECTS,
            PXFA_DESTROY,
        ],
        (O::Delete, S::KubevirtCsi) => vec![
            DELETE_HOSTED_CLUSTER,
            DELETE_TENANT_OBJECTS,
            CSI_DELETE_LEFTOVERS,
        ],
    })
}

/// The [L] alternatives documented beside `op` for `mode`, never in its steps.
pub(crate) fn unconfirmed(op: Operation, mode: StorageMode) -> Vec<Unconfirmed> {
    match mode {
        StorageMode::DirectAccess => match op {
            Operation::ReplaceVm => vec![ADOPT_AS_OLD_NODE],
            _ => Vec::new(),
        },
        StorageMode::CloudDrive | StorageMode::KubevirtCsi => Vec::new(),
    }
}

/// One step with this tenant's names.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// The step's 1-based position in the runbook.
    pub number: usize,
    /// The id of the step template it was filled from (`nodepool.scale-out`).
    pub id: &'static str,
    /// The cluster or machine the operator runs it on.
    pub on: Where,
    /// The worker index it is for, when it is per worker.
    pub worker: Option<u32>,
    /// What it does.
    pub title: String,
    /// The command line, shell-quoted; `<name>` words are for the operator to fill.
    pub command: Option<String>,
    /// What to check before going on.
    pub check: String,
    /// The page it follows.
    pub source: Source,
    /// How sure it is.
    pub confidence: Confidence,
    /// What pxfa can check after this step once it reads the clusters (see
    /// `VERIFIABLE`; `pxfa status` checks those in [`steps::STATUS_CHECKS`]).
    pub verifiable_by: Option<&'static str>,
}

/// An \[L\] alternative, listed and never run by default.
#[derive(Debug, Clone, Serialize)]
pub struct Alternative {
    /// What it would do.
    pub what: &'static str,
    /// Why it is off.
    pub why: &'static str,
}

/// The runbook document (`kind: Runbook`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Runbook {
    /// `pxfa.io/v1alpha1`.
    pub api_version: &'static str,
    /// `Runbook`.
    pub kind: &'static str,
    /// The tenant (`metadata.name`).
    pub tenant: String,
    /// The storage mode.
    pub mode: StorageMode,
    /// The operation.
    pub operation: Operation,
    /// The worker indexes the per-worker steps are for.
    pub workers: Vec<u32>,
    /// What holds for every step (where pxctl runs, what `<name>` means).
    pub notes: Vec<String>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// \[L\] alternatives, off by default.
    pub unconfirmed: Vec<Alternative>,
}

/// The runbook of `op` for the tenant, its spec named `spec_path` in the commands,
/// for `workers` (direct-access only; see `choose_workers`).
pub fn build(
    tenant: &Tenant,
    spec_path: &str,
    op: Operation,
    workers: &[u32],
) -> Result<Runbook, NoRunbook> {
    build_edited(tenant, spec_path, op, workers, None)
}

/// [`build`], with the spec as it is after the edit the runbook asks for (`grow`: the
/// raised capacity), so that sizes read old -> new from it; without it the new size
/// is a `<new-drive-gib>` word to read off `pxfa size -f` of the edited spec. The
/// edited spec must be the same tenant in the same mode, with drives no smaller.
pub fn build_edited(
    tenant: &Tenant,
    spec_path: &str,
    op: Operation,
    workers: &[u32],
    edited: Option<&Tenant>,
) -> Result<Runbook, NoRunbook> {
    let mode = tenant.spec.mode();
    let pieces = pieces(op, mode).map_err(|r| NoRunbook(r.to_string()))?;
    let workers = choose_workers(tenant, op, workers)?;
    if let Some(e) = edited {
        check_edit(tenant, e)?;
    }
    let vars = Vars::new(tenant, spec_path, edited);
    let strategy = release_strategy(tenant, op);
    let mut out = Vec::new();
    for piece in pieces {
        let piece: Vec<StepTemplate> = (piece.iter())
            .filter(|t| steps::applies_to(t.id, strategy))
            .copied()
            .collect();
        expand_piece(&piece, &workers, &vars, &mut out);
    }
    Ok(Runbook {
        api_version: API_VERSION,
        kind: "Runbook",
        tenant: tenant.spec.tenant_name().to_string(),
        mode,
        operation: op,
        workers,
        notes: notes(tenant),
        steps: out,
        unconfirmed: unconfirmed(op, mode)
            .into_iter()
            .map(|u| Alternative {
                what: u.what,
                why: u.why,
            })
            .collect(),
    })
}

/// The edited spec is the same tenant, in the same mode, and its drives are no
/// smaller (Portworx pools only grow).
fn check_edit(before: &Tenant, after: &Tenant) -> Result<(), NoRunbook> {
    let (b, a) = (&before.spec, &after.spec);
    if a.tenant_name() != b.tenant_name() || a.mode() != b.mode() {
        return Err(NoRunbook(format!(
            "the edited spec is tenant {} ({}), not {} ({})",
            a.tenant_name(),
            a.mode(),
            b.tenant_name(),
            b.mode()
        )));
    }
    if after.sizing.drive_size < before.sizing.drive_size {
        return Err(NoRunbook(format!(
            "spec.storage.capacity: the edited spec's drives ({}) are smaller than today's ({}); pools only grow",
            after.sizing.drive_size, before.sizing.drive_size
        )));
    }
    Ok(())
}

/// The worker indexes the per-worker steps are for, checked against the spec
/// (`spec.hostedCluster.replicas` before the edit the runbook asks for):
/// direct-access only; scale-in removes the highest indexes (default the last one)
/// and keeps at least [`MIN_PORTWORX_NODES`]; replace-vm takes exactly one; grow and
/// add-pool default to every worker.
pub(crate) fn choose_workers(
    tenant: &Tenant,
    op: Operation,
    given: &[u32],
) -> Result<Vec<u32>, NoRunbook> {
    let mode = tenant.spec.mode();
    let replicas = tenant.spec.spec.hosted_cluster.replicas;
    let no = |m: String| Err(NoRunbook(m));
    if !mode.drives_are_vm_disks() {
        if !given.is_empty() {
            return no(format!(
                "--worker is for direct-access tenants: pxfa keeps no worker index for {}; the steps name the node <node>",
                mode.as_str()
            ));
        }
        return Ok(Vec::new());
    }
    let mut w: Vec<u32> = given.to_vec();
    w.sort_unstable();
    w.dedup();
    if let Some(bad) = w.iter().find(|&&i| i >= replicas) {
        return no(format!(
            "--worker {bad}: the spec has {replicas} workers (indexes 0 to {})",
            replicas.saturating_sub(1)
        ));
    }
    match op {
        Operation::ScaleOut | Operation::Delete | Operation::ManagementMaintenance
            if !w.is_empty() =>
        {
            no(format!(
                "{} takes no --worker: {}",
                op.as_str(),
                match op {
                    Operation::ScaleOut => "new workers get the next indexes",
                    Operation::Delete => "the whole tenant goes",
                    _ => "the steps go by management node, whichever workers run there",
                }
            ))
        }
        Operation::ScaleIn => scale_in_workers(w, replicas),
        Operation::ReplaceVm if w.len() != 1 => {
            no("replace-vm takes exactly one --worker: replace one VM at a time".to_string())
        }
        Operation::Grow | Operation::AddPool if w.is_empty() => Ok((0..replicas).collect()),
        _ => Ok(w),
    }
}

/// Scale-in removes the highest indexes: pxfa keeps `0..replicas` after the edit.
fn scale_in_workers(mut w: Vec<u32>, replicas: u32) -> Result<Vec<u32>, NoRunbook> {
    if w.is_empty() {
        w.push(replicas.saturating_sub(1));
    }
    let keep = replicas - w.len() as u32;
    let top: Vec<u32> = (keep..replicas).collect();
    if w != top {
        return Err(NoRunbook(format!(
            "scale-in removes the highest worker indexes (pxfa keeps 0 to {} of {replicas}): --worker {}",
            keep.saturating_sub(1),
            top.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" --worker ")
        )));
    }
    if keep < MIN_PORTWORX_NODES {
        return Err(NoRunbook(format!(
            "scale-in to {keep} workers leaves Portworx below its minimum of {MIN_PORTWORX_NODES} nodes (Portworx system requirements)"
        )));
    }
    Ok(w)
}

/// A direct-access delete's or scale-in's provisioning strategy: its drives are
/// released through the management Portworx (dynamic) or through the array
/// (import). `None` for other operations and modes, whose steps do not depend on it.
fn release_strategy(tenant: &Tenant, op: Operation) -> Option<Strategy> {
    let releases = matches!(op, Operation::Delete | Operation::ScaleIn);
    (releases && tenant.spec.mode().drives_are_vm_disks()).then(|| {
        // A refused import is lint's error; nothing was imported, so release as dynamic.
        (tenant.spec.provisioning()).map_or(Strategy::Dynamic, |r| r.strategy)
    })
}

/// Steps of one piece: runs of per-worker steps are repeated worker by worker, the
/// others appear once.
fn expand_piece(piece: &[StepTemplate], workers: &[u32], vars: &Vars, out: &mut Vec<Step>) {
    let mut i = 0;
    while i < piece.len() {
        if !piece[i].per_worker {
            out.push(vars.step(&piece[i], None, out.len() + 1));
            i += 1;
            continue;
        }
        let end = piece[i..]
            .iter()
            .position(|s| !s.per_worker)
            .map_or(piece.len(), |p| i + p);
        for &w in workers {
            for t in &piece[i..end] {
                out.push(vars.step(t, Some(w), out.len() + 1));
            }
        }
        i = end;
    }
}

/// What holds for every step.
fn notes(t: &Tenant) -> Vec<String> {
    let mut n = vec![
        "management: the management cluster (oc with its kubeconfig); tenant: the hosted cluster; local: pxfa on your machine".to_string(),
        "<name> words are read off an earlier step's output; {name}s from the spec are filled in".to_string(),
    ];
    if t.spec.mode().runs_portworx() {
        n.push(format!(
            "pxctl runs in a Portworx pod of the tenant: oc -n {} exec <portworx-pod> -c portworx -- /opt/pwx/bin/pxctl ...; maintenance, drive and pool commands in the pod on that node",
            crate::render::shell::quote(&t.spec.spec.portworx.namespace)
        ));
    }
    n
}

/// The tenant's names, by template word.
struct Vars {
    scalar: BTreeMap<&'static str, String>,
    /// `{devices}`: the guest paths of a worker's disks (the same on every worker).
    devices: Vec<String>,
    /// `{data_devices}`: the data disks among them (without the metadata disk).
    data_devices: Vec<String>,
    /// `{claims}`: each worker's management claims, data drives then metadata.
    claims: BTreeMap<u32, Vec<String>>,
    /// The tenant's storage mode (what pxfa can verify depends on it).
    mode: StorageMode,
}

impl Vars {
    fn new(t: &Tenant, spec_path: &str, edited: Option<&Tenant>) -> Vars {
        let s = &t.spec;
        let hc = &s.spec.hosted_cluster;
        let pod = s
            .spec
            .storage
            .pod
            .as_ref()
            .map_or_else(|| s.tenant_name().to_string(), |p| p.to_string());
        let scalar = BTreeMap::from([
            ("spec", spec_path.to_string()),
            ("tenant", s.tenant_name().to_string()),
            ("tenant_ns", s.tenant_id().namespace),
            ("hc", hc.name.clone()),
            ("hc_ns", hc.namespace.clone()),
            ("hcp", s.hcp_namespace()),
            ("nodepool", s.node_pool()),
            ("px_ns", s.spec.portworx.namespace.clone()),
            ("stc", s.portworx_cluster_name()),
            ("fada_class", s.fada_storage_class()),
            ("pod", pod),
            ("repl", s.spec.storage.replication.to_string()),
            ("old_gib", t.sizing.drive_size.gib_ceil().to_string()),
            (
                "grow_gib",
                edited.map_or_else(
                    || "<new-drive-gib>".to_string(),
                    |e| e.sizing.drive_size.gib_ceil().to_string(),
                ),
            ),
        ]);
        let claims = (0..hc.replicas).map(|w| (w, worker_claims(t, w))).collect();
        let (data_devices, meta) = tenant_devices(t);
        Vars {
            devices: data_devices.iter().cloned().chain(meta).collect(),
            data_devices,
            scalar,
            claims,
            mode: s.mode(),
        }
    }

    fn step(&self, t: &StepTemplate, worker: Option<u32>, number: usize) -> Step {
        let fill = |s: &str| self.fill(s, worker);
        Step {
            number,
            id: t.id,
            on: t.on,
            worker,
            title: fill(t.title),
            command: (!t.command.is_empty()).then(|| self.command(t.command, worker)),
            check: fill(t.check),
            source: *sources::source(t.source).unwrap_or(&SOURCES[0]),
            confidence: t.confidence,
            verifiable_by: steps::verifiable_in(t.id, self.mode),
        }
    }

    /// `{name}` replaced in running text (unknown names stay as they are).
    fn fill(&self, s: &str, worker: Option<u32>) -> String {
        let mut out = s.to_string();
        for (k, v) in &self.scalar {
            out = out.replace(&format!("{{{k}}}"), v);
        }
        if let Some(w) = worker {
            out = out.replace("{worker}", &format!("{w:02}"));
        }
        out.replace("{devices}", &self.devices.join(" "))
            .replace("{data_devices}", &self.data_devices.join(" "))
    }

    /// The command line: list words expanded, every literal run shell-quoted.
    fn command(&self, words: &[&str], worker: Option<u32>) -> String {
        let mut parts: Vec<text::Word> = Vec::new();
        for w in words {
            match *w {
                "{claims}" => parts.extend(
                    worker
                        .and_then(|w| self.claims.get(&w))
                        .into_iter()
                        .flatten()
                        .cloned()
                        .map(text::Word::Literal),
                ),
                "{devices}" => parts.extend(self.devices.iter().cloned().map(text::Word::Literal)),
                "{data_devices}" => {
                    parts.extend(self.data_devices.iter().cloned().map(text::Word::Literal))
                }
                _ => parts.push(text::Word::from_template(w, |t| self.fill(t, worker))),
            }
        }
        text::command_line(&parts)
    }
}

/// A worker's management claims: its data drives, then its metadata drive (each
/// claim is named like the drive it binds).
fn worker_claims(t: &Tenant, worker: u32) -> Vec<String> {
    (0..t.spec.spec.storage.drives_per_node)
        .map(DiskRole::Data)
        .chain([DiskRole::Metadata])
        .map(|r| worker_volume_short(t.spec.tenant_name(), worker, r))
        .collect()
}

/// The guest paths of a worker's disks, read from the rendered tenant
/// StorageCluster: the data disks (`spec.storage.devices`) and the metadata disk
/// (`systemMetadataDevice`); empty when the tenant runs no Portworx on local drives.
fn tenant_devices(t: &Tenant) -> (Vec<String>, Option<String>) {
    let Ok(manifests) = render(
        &t.spec,
        &t.sizing,
        &ArrayFacts::default(),
        RenderOptions::default(),
    ) else {
        return (Vec::new(), None);
    };
    let Some(stc) = manifests
        .iter()
        .find(|m| m.cluster == Cluster::Tenant && m.kind == "StorageCluster")
    else {
        return (Vec::new(), None);
    };
    let storage = &stc.body["spec"]["storage"];
    let data = storage["devices"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d.as_str().map(str::to_string))
        .collect();
    let meta = storage["systemMetadataDevice"].as_str().map(str::to_string);
    (data, meta)
}

#[cfg(test)]
mod tests;
