//! What `apply --kubeconfig` would change on the clusters, asked of the API servers
//! themselves: per object a read of it as it is and a server-side apply dry run
//! (`dryRun=All`, field manager [`FIELD_MANAGER`], as apply sends it), compared.
//! Nothing is written: every request is a GET or a dry-run PATCH, and the objects
//! previewed are those [`crate::apply_manifests`] would apply, skipped for the same
//! reasons (see [`crate::apply`]).
//!
//! Limits of a preview: an object whose kind or namespace an earlier step of the
//! same apply creates cannot be dry-run yet (it shows as `create` with why), and the
//! worker VMs' disks are attached by apply from the VMs it finds then.

use kube::api::{Patch, PatchParams};
use px_topology::{Cluster, Form, Manifest};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::FIELD_MANAGER;
use crate::apply::{Skipped, api_version, describe};
use crate::discovery::{Resources, status_code};
use crate::error::{Error, Result};

/// What apply would do to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PreviewAction {
    /// It does not exist: apply creates it.
    Create,
    /// It exists and apply changes fields of it.
    Change,
    /// It exists as apply would leave it.
    Unchanged,
    /// Another field manager owns fields apply sets: apply stops here unless
    /// `--force-conflicts`.
    Conflict,
}

/// One object's preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PreviewItem {
    /// `management` or `tenant`.
    pub cluster: &'static str,
    /// `Kind namespace/name`.
    pub object: String,
    /// What apply would do.
    pub action: PreviewAction,
    /// For a change, the fields that differ (`spec.replicas`), at most
    /// twelve; for a conflict, the API server's fields and managers.
    pub fields: Vec<String>,
    /// Why a create could not be dry-run, or the conflict's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The most differing fields listed per object.
pub(crate) const MAX_FIELDS: usize = 12;

/// The clusters' side of a plan: what `apply --kubeconfig` would change on the
/// management (and tenant) cluster, as `plan --kubeconfig -o json` prints it under
/// `clusters`.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ClusterPreview {
    /// Objects apply would apply, in apply's order.
    pub objects: Vec<PreviewItem>,
    /// Objects apply would not apply, and why.
    pub skipped: Vec<Skipped>,
}

impl ClusterPreview {
    /// How many objects would be created, changed, left unchanged, and conflict.
    pub fn counts(&self) -> [usize; 4] {
        let n = |a| self.objects.iter().filter(|o| o.action == a).count();
        [
            n(PreviewAction::Create),
            n(PreviewAction::Change),
            n(PreviewAction::Unchanged),
            n(PreviewAction::Conflict),
        ]
    }

    /// The JSON Schema (draft 2020-12) of the preview, the `clusters` part of
    /// `docs/plan.schema.json`.
    pub fn json_schema() -> Value {
        serde_json::to_value(schemars::schema_for!(ClusterPreview)).unwrap_or_default()
    }

    /// Whether apply would change anything on the clusters.
    pub fn has_changes(&self) -> bool {
        self.objects
            .iter()
            .any(|o| o.action != PreviewAction::Unchanged)
    }
}

/// Previews `manifests` (a [`crate::cluster_bundle`]) on the management cluster and,
/// when `tenant` is given, the tenant cluster. `apply_secrets` and `force` as apply
/// would get them.
pub async fn preview_manifests(
    manifests: &[Manifest],
    management: &kube::Client,
    tenant: Option<&kube::Client>,
    apply_secrets: bool,
    force: bool,
) -> Result<ClusterPreview> {
    let mut out = ClusterPreview::default();
    for (cluster, client) in [
        (Cluster::Management, Some(management)),
        (Cluster::Tenant, tenant),
    ] {
        let mut ms: Vec<&Manifest> = manifests.iter().filter(|m| m.cluster == cluster).collect();
        ms.sort_by_key(|m| m.order);
        let Some(client) = client else {
            out.skipped.extend(ms.iter().map(|m| Skipped {
                object: describe(m),
                reason: "tenant cluster not given (--tenant-kubeconfig)".to_string(),
            }));
            continue;
        };
        let resources = Resources::new(client.clone());
        for m in ms {
            match skip_reason(m, apply_secrets) {
                Some(reason) => out.skipped.push(Skipped {
                    object: describe(m),
                    reason,
                }),
                None => out.objects.push(preview_one(&resources, m, force).await?),
            }
        }
    }
    Ok(out)
}

/// Why apply would not server-side apply `m` (the reasons of `apply_step`).
fn skip_reason(m: &Manifest, apply_secrets: bool) -> Option<String> {
    match &m.form {
        Form::Resource if m.secret && !apply_secrets => Some(
            "holds a credential pxfa does not have here (placeholder); apply writes it only with the token"
                .to_string(),
        ),
        Form::Resource => None,
        Form::JsonPatch { .. } if m.kind == "VirtualMachine" => Some(
            "worker VM disks: apply attaches them to the VMs it finds then".to_string(),
        ),
        Form::Fragment { path } => Some(format!(
            "a fragment, not an object: merge its {path} into {} {} before creating it",
            m.kind, m.name
        )),
        Form::JsonPatch { target } => Some(format!("a JSON patch for {target}; apply it by hand")),
        Form::MergePatch { target } => {
            Some(format!("a merge patch for {target}; apply it by hand"))
        }
    }
}

fn item(m: &Manifest, action: PreviewAction) -> PreviewItem {
    PreviewItem {
        cluster: m.cluster.dir_name(),
        object: describe(m),
        action,
        fields: Vec::new(),
        note: None,
    }
}

/// One object: read it, dry-run the apply, compare.
async fn preview_one(resources: &Resources, m: &Manifest, force: bool) -> Result<PreviewItem> {
    let what = describe(m);
    let api = match resources
        .api(&api_version(m)?, &m.kind, m.namespace.as_deref())
        .await
    {
        Ok(api) => api,
        Err(Error::NotServed { .. }) => {
            let mut i = item(m, PreviewAction::Create);
            i.note = Some(format!(
                "{} is not served yet (an earlier step installs it); not dry-run",
                m.kind
            ));
            return Ok(i);
        }
        Err(e) => return Err(e),
    };
    let current = api
        .get_opt(&m.name)
        .await
        .map_err(|e| Error::kube(format!("cannot read {what}"), e))?;
    let mut params = PatchParams::apply(FIELD_MANAGER).dry_run();
    if force {
        params = params.force();
    }
    let answer = api.patch(&m.name, &params, &Patch::Apply(&m.body)).await;
    let after = match answer {
        Ok(o) => o,
        Err(kube::Error::Api(status)) if status.code == 409 => {
            let mut i = item(m, PreviewAction::Conflict);
            i.fields = status
                .details
                .as_ref()
                .map(|d| d.causes.iter().map(|c| c.message.clone()).collect())
                .unwrap_or_default();
            i.note = Some(status.message.clone());
            return Ok(i);
        }
        Err(e) if current.is_none() && status_code(&e) == Some(404) => {
            let mut i = item(m, PreviewAction::Create);
            i.note = Some(
                "its namespace does not exist yet (an earlier step creates it); not dry-run".into(),
            );
            return Ok(i);
        }
        // A validation message may quote a credential's values: only the status.
        Err(kube::Error::Api(status)) if m.secret => {
            return Err(Error::Refused {
                context: format!("cannot dry-run the apply of {what}"),
                code: status.code,
                reason: status.reason.clone(),
            });
        }
        Err(e) => {
            return Err(Error::kube(
                format!("cannot dry-run the apply of {what}"),
                e,
            ));
        }
    };
    let Some(current) = current else {
        return Ok(item(m, PreviewAction::Create));
    };
    let before = comparable(serde_json::to_value(&current).unwrap_or(Value::Null));
    let after = comparable(serde_json::to_value(&after).unwrap_or(Value::Null));
    let mut fields = Vec::new();
    differing(&before, &after, "", &mut fields);
    let mut i = item(
        m,
        if fields.is_empty() {
            PreviewAction::Unchanged
        } else {
            PreviewAction::Change
        },
    );
    // A Secret's field names are fine to show; its values never are (only paths here).
    fields.truncate(MAX_FIELDS);
    i.fields = fields;
    Ok(i)
}

/// The object without what the API server changes on every write by itself.
fn comparable(mut v: Value) -> Value {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in ["managedFields", "resourceVersion", "generation"] {
            meta.remove(k);
        }
    }
    if let Some(o) = v.as_object_mut() {
        o.remove("status");
    }
    v
}

/// The dotted paths where `a` and `b` differ (an object's keys are walked, any
/// other difference is the path itself).
fn differing(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    if a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                let null = Value::Null;
                differing(
                    x.get(k).unwrap_or(&null),
                    y.get(k).unwrap_or(&null),
                    &path,
                    out,
                );
            }
        }
        _ => out.push(if at.is_empty() {
            "(whole object)".into()
        } else {
            at.to_string()
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn differing_lists_the_leaf_paths_and_ignores_server_bookkeeping() {
        let a = super::comparable(json!({"metadata": {"name": "x", "resourceVersion": "1",
            "managedFields": [1]}, "spec": {"a": 1, "b": {"c": [1]}}, "status": {"x": 1}}));
        let b = super::comparable(json!({"metadata": {"name": "x", "resourceVersion": "2"},
            "spec": {"a": 1, "b": {"c": [1, 2]}, "d": true}}));
        let mut out = Vec::new();
        super::differing(&a, &b, "", &mut out);
        assert_eq!(out, ["spec.b.c", "spec.d"]);
        let mut none = Vec::new();
        super::differing(&a, &a.clone(), "", &mut none);
        assert!(none.is_empty());
    }
}
