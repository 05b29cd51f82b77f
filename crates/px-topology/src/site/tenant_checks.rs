//! The tenant cluster's prerequisites and health, from a [`TenantView`].

use super::management_checks::credentials;
use super::report::{Check, CheckBuilder, Credential, Layer};
use super::views::{Read, TenantView};
use crate::render::tenant::{PORTWORX_OLM_PACKAGE, VALIDATION_PVC};
use crate::spec::TenantStorage;

const READ_FIX: &str =
    "run doctor with a tenant kubeconfig whose user may get and list this object";

fn t(name: &str, read: impl Into<String>) -> CheckBuilder {
    Check::of(Layer::Tenant, name, read)
}

/// Every tenant check for `spec`, and the credentials found. kubevirt-csi tenants run
/// no Portworx: only the validation claim and the credentials are checked there.
pub fn tenant_checks(spec: &TenantStorage, view: &TenantView) -> (Vec<Check>, Vec<Credential>) {
    let ns = &spec.spec.portworx.namespace;
    let mut out = Vec::new();
    if spec.mode().runs_portworx() {
        out.push(operator(ns, &view.operator));
        if spec.mode().needs_token() {
            let c = t("px-pure-secret", format!("Secret {ns}/px-pure-secret"));
            out.push(match &view.pure_secret {
                Read::Found(()) => c.ok("present"),
                Read::Missing => c.fail(
                    "missing: Portworx cannot reach the array",
                    "run `pxfa apply` with --tenant-kubeconfig, or apply the rendered Secret",
                ),
                Read::Unreadable(why) => c.unknown(why.clone(), READ_FIX),
            });
        }
        out.push(phase(
            t(
                "storage-cluster",
                format!(
                    "StorageCluster {ns}/{} status.phase",
                    spec.portworx_cluster_name()
                ),
            ),
            &view.storage_cluster,
            "Online",
        ));
        out.push(storage_nodes(spec, &view.storage_nodes));
    }
    out.push(phase(
        t(
            "validation-claim",
            format!("PersistentVolumeClaim {VALIDATION_PVC} status.phase"),
        ),
        &view.validation_claim,
        "Bound",
    ));
    let creds = credentials(spec, &view.credentials, Layer::Tenant);
    (out, creds)
}

fn operator(ns: &str, read: &Read<String>) -> Check {
    let c = t(
        "portworx-operator",
        format!("Subscription {ns}/{PORTWORX_OLM_PACKAGE} status.installedCSV"),
    );
    match read {
        Read::Found(csv) if !csv.is_empty() => c.ok(format!("installed: {csv}")),
        Read::Found(_) => c.warn(
            "subscribed, not installed yet",
            "wait for OLM, or check the InstallPlan",
        ),
        Read::Missing => c.fail(
            "no Subscription",
            "apply the bundle's operator step (OperatorGroup and Subscription)",
        ),
        Read::Unreadable(why) => c.unknown(why.clone(), READ_FIX),
    }
}

fn phase(c: CheckBuilder, read: &Read<String>, want: &str) -> Check {
    match read {
        Read::Found(p) if p == want => c.ok(p.clone()),
        Read::Found(p) => c.fail(
            p.clone(),
            format!("wait for {want}, or see `pxfa status` for the layer below"),
        ),
        Read::Missing => c.fail(
            "missing",
            "apply the tenant bundle (`pxfa apply --tenant-kubeconfig`)",
        ),
        Read::Unreadable(why) => c.unknown(why.clone(), READ_FIX),
    }
}

fn storage_nodes(spec: &TenantStorage, read: &Read<Vec<(String, String)>>) -> Check {
    let c = t(
        "storage-nodes",
        format!(
            "StorageNode {}/* status.phase",
            spec.spec.portworx.namespace
        ),
    );
    let nodes = match read {
        Read::Found(n) => n,
        Read::Missing => return c.fail("none", "apply the tenant bundle"),
        Read::Unreadable(why) => return c.unknown(why.clone(), READ_FIX),
    };
    let want = spec.storage_nodes() as usize;
    let offline: Vec<String> = nodes
        .iter()
        .filter(|(_, p)| p != "Online")
        .map(|(n, p)| format!("{n} ({p})"))
        .collect();
    let online = nodes.len() - offline.len();
    if offline.is_empty() && online >= want {
        c.ok(format!("{online} Online"))
    } else {
        c.fail(
            format!(
                "{online} of {want} Online{}",
                if offline.is_empty() {
                    String::new()
                } else {
                    format!("; not: {}", offline.join(", "))
                }
            ),
            "see `pxctl status` on the nodes that are not Online",
        )
    }
}
