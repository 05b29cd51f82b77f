//! The tenant MachineConfig for cloud drives: Portworx in the tenant attaches
//! FlashArray volumes over iSCSI or NVMe/TCP itself, so the worker VMs need the
//! multipath and udev settings Portworx requires, and iscsid/multipathd running.
//!
//! HyperShift takes MachineConfigs for a NodePool from ConfigMaps in the NodePool's
//! namespace (key `config`), referenced from `NodePool.spec.config`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use super::manifest::{Cluster, Manifest};
use super::{RenderError, management::labels, step};
use crate::naming;
use crate::spec::{Protocol, TenantStorage};

/// `/etc/multipath.conf`: the settings Portworx's FlashArray preparation page
/// requires (defaults, the PURE/FlashArray SCSI and NVMe device stanzas, the
/// blacklist exception for SCSI/WWN identities, and Portworx's own `pxd` devices
/// blacklisted).
pub const MULTIPATH_CONF: &str = r#"defaults {
    user_friendly_names no
    find_multipaths yes
    polling_interval 10
    enable_foreign "^$"
}

devices {
    device {
        vendor "NVME"
        product "Pure Storage FlashArray"
        path_selector "queue-length 0"
        path_grouping_policy group_by_prio
        prio ana
        failback immediate
        fast_io_fail_tmo 10
        user_friendly_names no
        no_path_retry 0
        features 0
        dev_loss_tmo 60
    }
    device {
        vendor "PURE"
        product "FlashArray"
        path_selector "service-time 0"
        hardware_handler "1 alua"
        path_grouping_policy group_by_prio
        prio alua
        failback immediate
        path_checker tur
        fast_io_fail_tmo 10
        user_friendly_names no
        no_path_retry 0
        features 0
        dev_loss_tmo 600
    }
}

blacklist_exceptions {
    property "(SCSI_IDENT_|ID_WWN)"
}

blacklist {
    devnode "^pxd[0-9]*"
    devnode "^pxd*"
}
"#;

/// `/etc/udev/rules.d/99-pure-storage.rules`: Pure's published Linux recommendations
/// (no I/O scheduler and no entropy collection on FlashArray devices, completions on
/// the submitting CPU, 60 s SCSI timeout).
pub const UDEV_RULES: &str = r#"# Pure Storage FlashArray recommended settings (written by pxfa).
# No I/O scheduler for non-rotating FlashArray devices.
ACTION=="add|change", KERNEL=="sd*[!0-9]", SUBSYSTEM=="block", ENV{ID_VENDOR}=="PURE", ATTR{queue/scheduler}="none"
ACTION=="add|change", KERNEL=="dm-[0-9]*", SUBSYSTEM=="block", ENV{DM_NAME}=="3624a937*", ATTR{queue/scheduler}="none"
# No entropy collection from FlashArray devices.
ACTION=="add|change", KERNEL=="sd*[!0-9]", SUBSYSTEM=="block", ENV{ID_VENDOR}=="PURE", ATTR{queue/add_random}="0"
ACTION=="add|change", KERNEL=="dm-[0-9]*", SUBSYSTEM=="block", ENV{DM_NAME}=="3624a937*", ATTR{queue/add_random}="0"
# Complete I/O on the CPU that submitted it.
ACTION=="add|change", KERNEL=="sd*[!0-9]", SUBSYSTEM=="block", ENV{ID_VENDOR}=="PURE", ATTR{queue/rq_affinity}="2"
# SCSI command timeout of 60 seconds.
ACTION=="add|change", SUBSYSTEMS=="scsi", ATTRS{model}=="FlashArray      ", ATTR{timeout}="60"
"#;

/// Ignition spec version understood by every supported RHCOS.
const IGNITION_VERSION: &str = "3.2.0";

fn data_url(text: &str) -> String {
    format!(
        "data:text/plain;charset=utf-8;base64,{}",
        STANDARD.encode(text.as_bytes())
    )
}

/// The MachineConfig (as a JSON value) for the tenant's workers.
pub fn machine_config(protocol: Protocol) -> serde_json::Value {
    let file = |path: &str, text: &str| {
        json!({
            "path": path,
            "mode": 420,
            "overwrite": true,
            "contents": {"source": data_url(text)},
        })
    };
    let mut spec = serde_json::Map::new();
    spec.insert(
        "config".into(),
        json!({
            "ignition": {"version": IGNITION_VERSION},
            "storage": {"files": [
                file("/etc/multipath.conf", MULTIPATH_CONF),
                file("/etc/udev/rules.d/99-pure-storage.rules", UDEV_RULES),
            ]},
            "systemd": {"units": [
                {"name": "iscsid.service", "enabled": true},
                {"name": "multipathd.service", "enabled": true},
            ]},
        }),
    );
    if protocol == Protocol::NvmeTcp {
        // dm-multipath, not native NVMe multipath, manages the paths (Portworx
        // requirement for NVMe-oF/TCP with multipath-tools).
        spec.insert("kernelArguments".into(), json!(["nvme_core.multipath=N"]));
    }
    json!({
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfig",
        "metadata": {
            "name": "99-worker-px-multipath",
            "labels": {"machineconfiguration.openshift.io/role": "worker"},
        },
        "spec": serde_json::Value::Object(spec),
    })
}

/// The ConfigMap carrying the MachineConfig, in the NodePool namespace.
pub fn multipath_config_map(
    spec: &TenantStorage,
    protocol: Protocol,
) -> Result<Manifest, RenderError> {
    let mc = machine_config(protocol);
    let text = serde_saphyr::to_string(&mc).map_err(|e| RenderError::Yaml {
        file: "MachineConfig 99-worker-px-multipath".to_string(),
        message: e.to_string(),
    })?;
    let body = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": naming::multipath_config_map(spec.tenant_name()),
            "namespace": spec.spec.hosted_cluster.namespace,
            "labels": labels(spec),
        },
        "data": {"config": text},
    });
    Ok(Manifest::resource(
        Cluster::Management,
        step::MACHINE_CONFIG,
        body,
        &[
            "MachineConfig for the tenant's workers: FlashArray multipath.conf and udev rules, iscsid and multipathd.",
            "The NodePool references it in spec.config; changing it rolls the workers (in place).",
        ],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls_round_trip() {
        let url = data_url(MULTIPATH_CONF);
        let b64 = url
            .strip_prefix("data:text/plain;charset=utf-8;base64,")
            .unwrap();
        let back = STANDARD.decode(b64).unwrap();
        assert_eq!(back, MULTIPATH_CONF.as_bytes());
    }

    #[test]
    fn nvme_gets_the_kernel_argument_only() {
        assert!(
            machine_config(Protocol::NvmeTcp)
                .pointer("/spec/kernelArguments")
                .is_some()
        );
        assert!(
            machine_config(Protocol::Iscsi)
                .pointer("/spec/kernelArguments")
                .is_none()
        );
        let mc = machine_config(Protocol::Iscsi);
        let units = mc
            .pointer("/spec/config/systemd/units")
            .unwrap()
            .as_array()
            .unwrap();
        assert!(units.iter().all(|u| u["enabled"] == true));
        assert_eq!(units.len(), 2);
    }
}
