//! Option (a), Cloud Drive: Portworx in the tenant creates its own FlashArray
//! volumes (FACD) over iSCSI or NVMe/TCP from inside the worker VMs. On the array,
//! pxfa prepares only the tenant's pod (with a quota, so one tenant cannot fill the
//! array) and an API token for the tenant's Portworx.

use flasharray::{PodName, Size};

use super::{ArrayFacts, DriverError, StorageDriver, required_protocol};
use crate::desired::{
    DesiredApiToken, DesiredPod, DesiredRealmUser, DesiredState, Scope, ownership_tags,
};
use crate::render::machineconfig;
use crate::render::management;
use crate::render::tenant::{self, PortworxDrives};
use crate::render::{Manifest, RenderError};
use crate::sizing::Sizing;
use crate::spec::{Protocol, TenantStorage};

/// The Cloud Drive driver.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CloudDrive;

/// The tenant's pod: `storage.pod`, else the tenant name; inside the realm when the
/// spec has one (`<realm>::<pod>`).
fn pod_name(spec: &TenantStorage) -> Result<PodName, DriverError> {
    if let Some(p) = spec.realm_pod() {
        return p.map_err(|source| DriverError::Name {
            path: "spec.array.realm".to_string(),
            source,
        });
    }
    match &spec.spec.storage.pod {
        Some(p) => Ok(p.clone()),
        None => PodName::new(spec.tenant_name()).map_err(|source| DriverError::Name {
            path: "metadata.name".to_string(),
            source,
        }),
    }
}

/// `size=<GiB>,pod=<pod>`: the Portworx cloud-drive spec of one drive in the pod. A
/// pod inside a realm is named as `spec.array.realmPodForm` says (by default without
/// the realm: Portworx reads it from pure.json, [L] in `docs/realms.md`).
fn device_spec(spec: &TenantStorage, size: Size, pod: &PodName) -> String {
    format!(
        "size={},pod={}",
        size.gib_ceil(),
        spec.pod_in_manifests(pod)
    )
}

impl StorageDriver for CloudDrive {
    fn mode(&self) -> &'static str {
        "cloud-drive"
    }

    fn desired_state(
        &self,
        spec: &TenantStorage,
        sizing: &Sizing,
    ) -> Result<DesiredState, DriverError> {
        let tenant = &spec.tenant_id();
        let user = DesiredRealmUser {
            admin: spec.token_user(),
            policy: spec.realm_policy(),
            role: spec.realm_role().to_string(),
            aggregation_strategy: spec.realm_aggregation_strategy().to_string(),
        };
        Ok(DesiredState {
            tenant: tenant.clone(),
            realm: super::desired_realm(spec, Some(user)),
            pod: Some(DesiredPod {
                name: pod_name(spec)?,
                quota: Some(sizing.pod_quota),
                tags: ownership_tags(tenant, Scope::Tenant, "tenant-pod"),
            }),
            api_token: Some(DesiredApiToken {
                admin: spec.token_user(),
                lifetime: spec.token_lifetime(),
            }),
            ..DesiredState::default()
        }
        .with_token_user_tag())
    }

    fn manifests(
        &self,
        spec: &TenantStorage,
        sizing: &Sizing,
        facts: &ArrayFacts,
    ) -> Result<Vec<Manifest>, RenderError> {
        let protocol = required_protocol(spec)?;
        let pod = pod_name(spec)?;
        let config_map = machineconfig::multipath_config_map(spec, protocol)?;
        let node_pool = management::node_pool(spec, std::slice::from_ref(&config_map.name))?;
        let drives = PortworxDrives::Cloud {
            device_specs: (0..sizing.drives_per_node)
                .map(|_| device_spec(spec, sizing.drive_size, &pod))
                .collect(),
            metadata_spec: device_spec(spec, sizing.metadata_size, &pod),
            initial_storage_nodes: spec.storage_nodes(),
        };
        let mut env = vec![(
            "PURE_FLASHARRAY_SAN_TYPE",
            match protocol {
                Protocol::NvmeTcp => "NVMEOF-TCP",
                Protocol::Iscsi | Protocol::Fc => "ISCSI",
            }
            .to_string(),
        )];
        if protocol == Protocol::Iscsi
            && let Some(net) = &spec.spec.network
        {
            // With two NICs in the VM, Portworx must be told which one reaches the
            // array's iSCSI ports.
            env.push(("PURE_ISCSI_ALLOWED_IFACES", net.guest_interface.clone()));
        }
        let mut sc = tenant::storage_cluster(spec, &drives, &env).note(format!(
            "Portworx creates its drives in FlashArray pod {} (quota set by `pxfa apply`).",
            pod.as_str()
        ));
        if protocol == Protocol::Iscsi && spec.spec.network.is_some() {
            sc = sc.note(
                "PURE_ISCSI_ALLOWED_IFACES is the storage NIC's name INSIDE the VM; check it with \
                 `oc get vmi -n <hcp ns> -o json | jq '.items[].status.interfaces'`.",
            );
        }
        let mut out = tenant::portworx_operator(spec);
        out.extend([
            config_map,
            node_pool,
            tenant::namespace(spec),
            tenant::pure_secret(spec, facts.api_token.as_ref()),
            sc,
            tenant::app_storage_class(spec),
            tenant::validation_pvc(
                spec,
                &spec.app_storage_class(),
                &spec.spec.portworx.namespace,
            ),
        ]);
        Ok(out)
    }
}
