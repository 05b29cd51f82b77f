//! `plan --kubeconfig`: what `apply --kubeconfig` would change on the clusters,
//! beside the array plan. The API servers are asked ([`px_cluster::TenantClusters::preview`]:
//! a read and a server-side apply dry run per object, nothing written), with the
//! bundle apply would send rendered with the serials the array holds now and
//! without credentials, so no secret reaches a request or the output.

use anyhow::{Context, Result};
use px_cluster::{
    ClusterClients, ClusterPreview, PreviewAction, TenantClusters, TenantClustersOptions,
};
use px_topology::Planned;

use super::kube_clients::connect;
use crate::args::{ClusterArgs, GlobalArgs, PlanArgs};
use crate::output::{Printer, inert_cell};

/// The clients of `plan`'s kubeconfig flags (`None` without `--kubeconfig`); a file
/// or context that does not load is bad input (exit 2) before anything is sent.
pub(crate) async fn clients(k: &ClusterArgs, g: &GlobalArgs) -> Result<Option<ClusterClients>> {
    let bounds = g.kube_bounds(true);
    let management = connect(
        "--kubeconfig",
        k.kubeconfig.as_deref(),
        k.context.as_deref(),
        bounds,
    )
    .await?;
    let tenant = connect(
        "--tenant-kubeconfig",
        k.tenant_kubeconfig.as_deref(),
        k.tenant_context.as_deref(),
        bounds,
    )
    .await?;
    Ok(management.map(|management| ClusterClients { management, tenant }))
}

/// The clusters' preview of the planned tenant: the volumes' serials are those the
/// array holds now (volumes the plan creates get theirs in the apply).
pub(crate) async fn preview(
    a: &PlanArgs,
    clients: ClusterClients,
    planned: &Planned<'_>,
    p: &Printer,
) -> Result<ClusterPreview> {
    let options = TenantClustersOptions {
        force_conflicts: a.force_conflicts,
        apply_node_config: a.apply_node_config,
        ..TenantClustersOptions::default()
    };
    let side = TenantClusters::new(Some(clients), options, super::cluster_notices::notices(p));
    let preview = side
        .preview(planned.tenant(), &planned.facts())
        .await
        .map_err(anyhow::Error::new)
        .context("cannot preview the clusters (server-side apply dry run)")?;
    Ok(preview.unwrap_or_default())
}

/// The preview for people, after the array plan: creates, changes and conflicts one
/// per line (unchanged objects too with `-v`), the objects apply leaves out, and a
/// summary line.
pub(crate) fn text(c: &ClusterPreview, p: &Printer) -> String {
    let mut out = vec!["Clusters (server-side apply dry run, nothing written):".to_string()];
    for o in &c.objects {
        let (mark, sgr, word) = match o.action {
            PreviewAction::Create => ('+', "32", "create"),
            PreviewAction::Change => ('~', "33", "change"),
            PreviewAction::Unchanged if p.verbose == 0 => continue,
            PreviewAction::Unchanged => ('=', "0", "unchanged"),
            PreviewAction::Conflict => ('!', "31;1", "conflict"),
        };
        let mut line = format!("{mark} {word} {} {}", o.cluster, inert_cell(&o.object));
        if o.action == PreviewAction::Change && !o.fields.is_empty() {
            line.push_str(&format!(": {}", inert_cell(&o.fields.join(", "))));
        }
        if let Some(note) = o
            .note
            .as_deref()
            .filter(|_| o.action != PreviewAction::Conflict)
        {
            line.push_str(&format!(" ({})", inert_cell(note)));
        }
        out.push(p.paint_out(sgr, &line));
        if o.action == PreviewAction::Conflict {
            if let Some(note) = &o.note {
                out.push(format!("    {}", inert_cell(note)));
            }
            for f in &o.fields {
                out.push(format!("    {}", inert_cell(f)));
            }
            out.push("    apply stops here; --force-conflicts takes these fields over".to_string());
        }
    }
    for s in &c.skipped {
        out.push(format!(
            "  not applied {}: {}",
            inert_cell(&s.object),
            inert_cell(&s.reason)
        ));
    }
    let [create, change, unchanged, conflict] = c.counts();
    out.push(format!(
        "Clusters: {create} to create, {change} to change, {unchanged} unchanged, \
         {conflict} conflict(s), {} not applied.",
        c.skipped.len()
    ));
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use px_topology::PlanDocument;
    use serde_json::{Value, json};

    /// The JSON Schema of what `plan -o json` prints, as committed in
    /// `docs/plan.schema.json`: the plan document (px-topology's) and, with
    /// `--kubeconfig`, the clusters' preview (px-cluster's) under `clusters`.
    fn plan_schema() -> Value {
        let mut doc = PlanDocument::json_schema();
        let mut clusters = ClusterPreview::json_schema();
        let mut defs = serde_json::Map::new();
        if let Some(c) = clusters.as_object_mut() {
            if let Some(Value::Object(d)) = c.remove("$defs") {
                defs = d;
            }
            c.remove("$schema");
            c.remove("title");
        }
        defs.insert("ClusterPreview".to_string(), clusters);
        if let Some(Value::Object(d)) = doc.get_mut("$defs") {
            d.extend(defs);
        }
        if let Some(Value::Object(p)) = doc.get_mut("properties") {
            p.insert(
            "clusters".to_string(),
            json!({
                "description": "With `--kubeconfig`: what `apply --kubeconfig` would change on the clusters (a server-side apply dry run per object). Absent without it.",
                "$ref": "#/$defs/ClusterPreview"
            }),
        );
        }
        doc
    }

    fn schema_path() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/plan.schema.json")
    }

    /// `docs/plan.schema.json` is what the types generate (`PXFA_WRITE_SCHEMAS=1`
    /// writes it), `clusters` included.
    #[test]
    fn committed_plan_schema_matches_the_types() {
        let generated = serde_json::to_string_pretty(&plan_schema()).unwrap() + "\n";
        if std::env::var_os("PXFA_WRITE_SCHEMAS").is_some() {
            std::fs::write(schema_path(), &generated).unwrap();
        }
        let committed = std::fs::read_to_string(schema_path()).unwrap();
        assert_eq!(
            committed, generated,
            "docs/plan.schema.json is stale: run the test with PXFA_WRITE_SCHEMAS=1"
        );
        let v: Value = serde_json::from_str(&committed).unwrap();
        assert_eq!(
            v["properties"]["clusters"]["$ref"],
            "#/$defs/ClusterPreview"
        );
        for def in [
            "ClusterPreview",
            "PreviewItem",
            "PreviewAction",
            "Skipped",
            "Change",
        ] {
            assert!(v["$defs"][def].is_object(), "{def}");
        }
        assert!(
            !v["required"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == "clusters"),
            "clusters only with --kubeconfig"
        );
    }
}
