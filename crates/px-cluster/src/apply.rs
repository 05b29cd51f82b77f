//! Server-side apply of the rendered manifests, cluster by cluster and step by step,
//! stopping where a later step would build on something missing: a conflict, an
//! object that did not become ready in time, a worker VM pxfa may not choose alone.

use std::collections::BTreeMap;

use kube::Client;
use kube::api::{Patch, PatchParams};
use px_topology::{Cluster, Form, Manifest, TenantStorage};
use serde::Serialize;
use serde_json::Value;

use crate::FIELD_MANAGER;
use crate::discovery::{Resources, object_path};
use crate::error::{Error, Result};
use crate::readiness::{Pending, WaitOptions, WaitTarget, wait_all, waits_for};
use crate::vms::{self, Assignment, AttachOptions};

/// Switches of one apply.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Take over fields another manager owns (`force=true`) instead of reporting the
    /// conflict.
    pub force_conflicts: bool,
    /// How long and how often to wait for each step's objects to become ready.
    pub wait: WaitOptions,
    /// Apply manifests that carry credentials. Off when the rendered secret holds a
    /// placeholder: applying it would replace a working secret with a template.
    pub apply_secrets: bool,
    /// Give the disks of a worker whose VM is gone to a new VM (the admin's explicit
    /// decision; see [`crate::vms`]).
    pub adopt_replaced_vms: bool,
}

/// What of the rendered bundle is applied to the clusters, and why the rest is not.
///
/// Three objects are left to the admin unless asked for: the pull-secret and SSH-key
/// templates (pxfa holds neither; a template would be refused by the API server or
/// lock the admin out, and must never replace a working one), and the management MachineConfigs, because the
/// Machine Config Operator reboots every management worker to apply one (`node_config`
/// is the admin's explicit yes).
pub fn cluster_bundle(
    spec: &TenantStorage,
    manifests: Vec<Manifest>,
    node_config: bool,
) -> (Vec<Manifest>, Vec<String>) {
    let (kept, skipped) = bundle(spec, manifests, node_config);
    (kept, skipped.iter().map(left_out_text).collect())
}

/// How a left-out object is named to the admin: `object (reason)`.
pub(crate) fn left_out_text(s: &Skipped) -> String {
    format!("{} ({})", s.object, s.reason)
}

/// [`cluster_bundle`] with each object left out and its reason apart (the preview
/// lists them as it lists its own skipped objects).
pub(crate) fn bundle(
    spec: &TenantStorage,
    manifests: Vec<Manifest>,
    node_config: bool,
) -> (Vec<Manifest>, Vec<Skipped>) {
    let pull_secret = spec.pull_secret_name();
    let ssh_key = spec.spec.hosted_cluster.ssh_key_secret.as_deref();
    let mut skipped = Vec::new();
    let mut skip = |object: String, reason: &str| {
        skipped.push(Skipped {
            object,
            reason: reason.to_string(),
        });
    };
    let kept = manifests
        .into_iter()
        .filter(|m| {
            let ssh_template = m.kind == "Secret" && Some(m.name.as_str()) == ssh_key;
            if ssh_template {
                skip(format!("Secret/{}", m.name), "SSH public key template: apply your own");
                return false;
            }
            let template = m.secret && m.kind == "Secret" && m.name == pull_secret;
            let reboots = !node_config
                && m.cluster == Cluster::Management
                && m.kind == "MachineConfig";
            if template {
                skip(format!("Secret/{}", m.name), "pull secret: apply your own");
            } else if reboots {
                skip(
                    format!("MachineConfig/{}", m.name),
                    "reboots every management worker; pass --apply-node-config, or apply the rendered file in a maintenance window",
                );
            }
            !(template || reboots)
        })
        .collect();
    (kept, skipped)
}

/// A field ownership conflict reported by the API server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// `Kind namespace/name`.
    pub object: String,
    /// The fields and their current managers, as the API server lists them.
    pub fields: Vec<String>,
    /// The API server's message.
    pub message: String,
}

/// Something deliberately not applied, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Skipped {
    /// `Kind namespace/name` or the file name.
    pub object: String,
    /// Why, and what the admin should do.
    pub reason: String,
}

/// What an apply did and what is left.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ApplyReport {
    /// Objects applied, in order.
    pub applied: Vec<String>,
    /// Objects not applied on purpose.
    pub skipped: Vec<Skipped>,
    /// Conflicts that stopped the apply (re-run with `--force-conflicts` to take over).
    pub conflicts: Vec<Conflict>,
    /// Objects not ready when the wait timed out, or workers waiting for a decision.
    pub pending: Vec<Pending>,
    /// Worker VMs and the disks attached to them.
    pub workers: Vec<Assignment>,
    /// Where the apply stopped, if it did: `management step 80`.
    pub stopped_at: Option<String>,
}

impl ApplyReport {
    /// True when every step ran and nothing is pending or conflicting.
    pub fn complete(&self) -> bool {
        self.stopped_at.is_none() && self.conflicts.is_empty() && self.pending.is_empty()
    }

    /// Whether this run applied `m` (a manifest of the bundle it was given).
    pub fn was_applied(&self, m: &Manifest) -> bool {
        self.applied.contains(&describe(m))
    }
}

/// Applies `manifests` to the management cluster and, when `tenant` is given, to the
/// tenant cluster, in step order, waiting where the next step depends on it.
pub async fn apply_manifests(
    spec: &TenantStorage,
    manifests: &[Manifest],
    management: &Client,
    tenant: Option<&Client>,
    opts: &ApplyOptions,
) -> Result<ApplyReport> {
    let mut report = ApplyReport::default();
    for (cluster, client) in [
        (Cluster::Management, Some(management)),
        (Cluster::Tenant, tenant),
    ] {
        let mut steps: BTreeMap<u32, Vec<&Manifest>> = BTreeMap::new();
        for m in manifests.iter().filter(|m| m.cluster == cluster) {
            steps.entry(m.order).or_default().push(m);
        }
        let Some(client) = client else {
            for m in steps.values().flatten() {
                report.skipped.push(Skipped {
                    object: describe(m),
                    reason: "tenant cluster not given (--tenant-kubeconfig)".to_string(),
                });
            }
            continue;
        };
        let resources = Resources::new(client.clone());
        for (order, group) in steps {
            let stop = apply_step(spec, &resources, &group, opts, &mut report).await?;
            if stop {
                report.stopped_at = Some(format!("{} step {order}", cluster.dir_name()));
                return Ok(report);
            }
        }
    }
    Ok(report)
}

/// One step; true when the apply must stop after it.
async fn apply_step(
    spec: &TenantStorage,
    resources: &Resources,
    group: &[&Manifest],
    opts: &ApplyOptions,
    report: &mut ApplyReport,
) -> Result<bool> {
    let mut waits = Vec::new();
    let mut workers = Vec::new();
    for m in group {
        match &m.form {
            Form::Fragment { path } => report.skipped.push(Skipped {
                object: describe(m),
                reason: format!(
                    "a fragment, not an object: merge its {path} into {} {} before creating it",
                    m.kind, m.name
                ),
            }),
            Form::JsonPatch { .. } if m.kind == "VirtualMachine" => workers.push(*m),
            Form::JsonPatch { target } => report.skipped.push(Skipped {
                object: describe(m),
                reason: format!("a JSON patch for {target}; apply it by hand"),
            }),
            Form::MergePatch { target } => report.skipped.push(Skipped {
                object: describe(m),
                reason: format!("a merge patch for {target}; apply it by hand"),
            }),
            Form::Resource if m.secret && !opts.apply_secrets => report.skipped.push(Skipped {
                object: describe(m),
                reason: "holds a credential pxfa does not have (placeholder); not applied so a \
                         working secret is not replaced by a template"
                    .to_string(),
            }),
            Form::Resource => {
                if let Some(conflict) =
                    server_side_apply(resources, m, opts.force_conflicts).await?
                {
                    report.conflicts.push(conflict);
                    continue;
                }
                report.applied.push(describe(m));
                if waits_for(m.cluster, &m.kind) {
                    waits.push(WaitTarget {
                        api_version: api_version(m)?,
                        kind: m.kind.clone(),
                        namespace: m.namespace.clone(),
                        name: m.name.clone(),
                    });
                }
            }
        }
    }
    if !report.conflicts.is_empty() {
        return Ok(true);
    }
    if !workers.is_empty() {
        let disks = vms::worker_disks(&workers)?;
        let attach = AttachOptions {
            adopt_replaced_vms: opts.adopt_replaced_vms,
            wait: opts.wait,
        };
        let outcome = vms::attach_workers(resources.client(), spec, &disks, &attach).await?;
        report.workers.extend(outcome.assignments);
        if !outcome.pending.is_empty() {
            report.pending.extend(outcome.pending);
            return Ok(true);
        }
    }
    if !waits.is_empty()
        && let Err(pending) = wait_all(resources, &waits, opts.wait).await
    {
        report.pending.extend(pending);
        return Ok(true);
    }
    Ok(false)
}

/// `PATCH` with `application/apply-patch+yaml`, field manager `pxfa`; a 409 is a
/// [`Conflict`], anything else an error naming the object.
async fn server_side_apply(
    resources: &Resources,
    m: &Manifest,
    force: bool,
) -> Result<Option<Conflict>> {
    let what = describe(m);
    let api = resources
        .api(&api_version(m)?, &m.kind, m.namespace.as_deref())
        .await
        .map_err(|e| Error::Apply {
            object: what.clone(),
            source: Box::new(e),
        })?;
    let mut params = PatchParams::apply(FIELD_MANAGER);
    if force {
        params = params.force();
    }
    match api.patch(&m.name, &params, &Patch::Apply(&m.body)).await {
        Ok(_) => {
            tracing::info!("applied {what}");
            Ok(None)
        }
        Err(kube::Error::Api(status)) if status.code == 409 => {
            let fields = status
                .details
                .as_ref()
                .map(|d| {
                    d.causes
                        .iter()
                        .map(|c| {
                            if c.message.is_empty() {
                                c.field.clone()
                            } else {
                                c.message.clone()
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            Ok(Some(Conflict {
                object: what,
                fields,
                message: status.message.clone(),
            }))
        }
        // A validation message may quote field values: for a credential, keep only
        // the status.
        Err(kube::Error::Api(status)) if m.secret => Err(Error::Refused {
            context: format!("cannot apply {what}"),
            code: status.code,
            reason: status.reason.clone(),
        }),
        Err(e) => Err(Error::kube(format!("cannot apply {what}"), e)),
    }
}

pub(crate) fn api_version(m: &Manifest) -> Result<String> {
    m.body
        .get("apiVersion")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| Error::Manifest(format!("{}: the manifest has no apiVersion", describe(m))))
}

pub(crate) fn describe(m: &Manifest) -> String {
    object_path(&m.kind, m.namespace.as_deref(), &m.name)
}
