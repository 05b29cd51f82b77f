//! Every manifest a tenant needs, for both clusters: the shared management objects
//! from [`crate::render`] plus its storage driver's, sorted and numbered. This sits
//! above [`crate::driver`] so that the drivers can build on [`crate::render`]
//! without the render layer knowing about drivers.

use secrecy::SecretString;

use crate::driver::{ArrayFacts, driver_for};
use crate::render::{Cluster, Manifest, RenderError, hosted_cluster, machineconfig, management};
use crate::sizing::Sizing;
use crate::spec::TenantStorage;

/// Rendering switches. `Debug` never shows the pull secret.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// Write live credentials (the tenant's API token, the pull secret) into secret
    /// manifests. Off: secret manifests carry a clearly marked placeholder instead.
    pub include_secrets: bool,
    /// The hosted cluster's pull secret (the JSON of a `.dockerconfigjson`), read
    /// from a file the admin named; written only with `include_secrets`.
    pub pull_secret: Option<SecretString>,
}

/// Every manifest the tenant needs, for both clusters, sorted by cluster and step
/// and numbered: the shared management objects plus the driver's.
pub fn render(
    spec: &TenantStorage,
    sizing: &Sizing,
    facts: &ArrayFacts,
    opts: RenderOptions,
) -> Result<Vec<Manifest>, RenderError> {
    // The token goes no further than here unless the admin asked for it.
    let redacted;
    let facts = if opts.include_secrets || facts.api_token.is_none() {
        facts
    } else {
        redacted = ArrayFacts {
            volume_serials: facts.volume_serials.clone(),
            api_token: None,
        };
        &redacted
    };

    let driver = driver_for(spec);
    let pull_secret = opts.pull_secret.as_ref().filter(|_| opts.include_secrets);
    let mut out = vec![
        management::multicluster_engine(),
        management::ingress_wildcard_patch(),
    ];
    out.extend(management::nmstate_instance(spec));
    out.extend(management::metallb_instance(spec));
    out.extend(management::metallb(spec));
    // Where the management Portworx install already wrote the host files, a second
    // MachineConfig would write the same paths and reboot every worker again.
    if spec.spec.management.existing_machine_config.is_none() {
        out.push(machineconfig::management_machine_config());
    }
    out.extend(management::node_network_policies(spec)?);
    out.extend(management::root_disk_storage_class(spec));
    out.extend(management::etcd_storage_class(spec));
    out.push(hosted_cluster::namespace(spec));
    out.push(hosted_cluster::pull_secret(spec, pull_secret));
    out.extend(hosted_cluster::ssh_key_secret(spec));
    out.push(hosted_cluster::hosted_cluster(
        spec,
        &driver.guest_storage(spec),
    )?);
    out.extend(management::network_attachment(spec));
    out.extend(driver.manifests(spec, sizing, facts)?);
    Ok(number(out))
}

/// Sorts by cluster and step, renumbers the steps 1.. per cluster and names files.
fn number(mut manifests: Vec<Manifest>) -> Vec<Manifest> {
    // Stable sort: within a step, the order the builders chose (worker by worker,
    // disk by disk) is kept.
    manifests.sort_by_key(|m| (m.cluster, m.order));
    let mut current: Option<(Cluster, u32)> = None;
    let mut n = 0;
    for m in &mut manifests {
        match current {
            Some((c, o)) if c == m.cluster && o == m.order => {}
            Some((c, _)) if c == m.cluster => {
                n += 1;
                current = Some((m.cluster, m.order));
            }
            _ => {
                n = 1;
                current = Some((m.cluster, m.order));
            }
        }
        m.order = n;
        m.file_name = format!("{n:02}-{}.yaml", m.file_stem());
    }
    manifests
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbering_is_contiguous_per_cluster() {
        let mk = |c, o, name: &str| {
            Manifest::resource(
                c,
                o,
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}),
                &[],
            )
        };
        let out = number(vec![
            mk(Cluster::Tenant, 50, "t2"),
            mk(Cluster::Management, 90, "m3"),
            mk(Cluster::Management, 10, "m1"),
            mk(Cluster::Tenant, 10, "t1"),
            mk(Cluster::Management, 90, "m4"),
        ]);
        let got: Vec<_> = out
            .iter()
            .map(|m| (m.cluster, m.order, m.file_name.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (Cluster::Management, 1, "01-configmap-m1.yaml"),
                (Cluster::Management, 2, "02-configmap-m3.yaml"),
                (Cluster::Management, 2, "02-configmap-m4.yaml"),
                (Cluster::Tenant, 1, "01-configmap-t1.yaml"),
                (Cluster::Tenant, 2, "02-configmap-t2.yaml"),
            ]
        );
    }

    /// A MachineConfig the site already has (the management Portworx install's)
    /// means no second one in the bundle.
    #[test]
    fn an_existing_machine_config_is_not_rendered_twice() {
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/tenant-cloud-drive.yaml"
        );
        let mut spec = crate::parse_valid_spec(&std::fs::read_to_string(file).unwrap()).unwrap();
        let has_mc = |spec: &TenantStorage| {
            crate::Tenant::from_spec(spec.clone(), file.as_ref())
                .unwrap()
                .manifests()
                .unwrap()
                .iter()
                .any(|m| m.name == machineconfig::MANAGEMENT_MACHINE_CONFIG)
        };
        assert!(has_mc(&spec));
        spec.spec.management.existing_machine_config = Some("99-worker-portworx".into());
        assert!(!has_mc(&spec));
    }
}
