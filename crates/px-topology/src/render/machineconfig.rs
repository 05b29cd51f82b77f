//! MachineConfigs for FlashArray hosts, following Portworx's FlashArray preparation
//! page: multipath and udev settings, the `CAPACITY_DATA_HAS_CHANGED` rescan rule,
//! iscsid/multipathd running.
//!
//! Two users: the tenant's worker VMs for cloud drives (Portworx in the tenant
//! attaches FlashArray volumes over iSCSI or NVMe/TCP itself; HyperShift takes
//! MachineConfigs for a NodePool from ConfigMaps in the NodePool's namespace, key
//! `config`, referenced from `NodePool.spec.config`), and the management cluster's
//! workers, which run the VM disks and the FADA volumes. Cloned VMs share one image,
//! so every worker VM makes its own iSCSI initiator name and NVMe host NQN at first
//! boot (RHCOS from 4.18 ships no `initiatorname.iscsi` at all).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::manifest::{Cluster, Manifest};
use super::{RenderError, management::labels, step};
use crate::naming;
use crate::spec::{Protocol, TenantStorage};

/// `/etc/multipath.conf`: the settings Portworx's FlashArray preparation page
/// requires (defaults, the PURE/FlashArray SCSI and NVMe device stanzas, the
/// blacklist exception for SCSI/WWN identities, and Portworx's own `pxd` devices
/// blacklisted).
pub(crate) const MULTIPATH_CONF: &str = r#"defaults {
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
pub(crate) const UDEV_RULES: &str = r#"# Pure Storage FlashArray recommended settings (written by pxfa).
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

/// `/etc/udev/rules.d/90-scsi-ua.rules`: the SCSI unit-attention rules of RHEL's
/// `/lib/udev/rules.d/90-scsi-ua.rules` (same name in `/etc` replaces it) with the
/// `CAPACITY_DATA_HAS_CHANGED` rescan active, as Portworx's FlashArray preparation
/// page asks for Red Hat systems: a resized FlashArray volume is then seen at once.
pub(crate) const SCSI_UA_RULES: &str = r#"# SCSI unit attentions (written by pxfa; replaces /lib/udev/rules.d/90-scsi-ua.rules).
# CAPACITY_DATA_HAS_CHANGED is active, as Portworx requires for FlashArray.
ACTION!="change", GOTO="scsi_ua_end"
SUBSYSTEM!="scsi", GOTO="scsi_ua_end"
ENV{SDEV_UA}=="INQUIRY_DATA_HAS_CHANGED", TEST=="rescan", ATTR{rescan}="x"
ENV{SDEV_UA}=="CAPACITY_DATA_HAS_CHANGED", TEST=="rescan", ATTR{rescan}="x"
ENV{SDEV_UA}=="THIN_PROVISIONING_SOFT_THRESHOLD_REACHED", TEST=="rescan", ATTR{rescan}="x"
ENV{SDEV_UA}=="MODE_PARAMETERS_CHANGED", TEST=="rescan", ATTR{rescan}="x"
ENV{SDEV_UA}=="REPORTED_LUNS_DATA_HAS_CHANGED", RUN+="scan-scsi-target $env{DEVPATH}"
LABEL="scsi_ua_end"
"#;

/// First-boot script giving this VM its own iSCSI initiator name.
pub(crate) const UNIQUE_IQN_SCRIPT: &str = r#"#!/bin/sh
# Written by pxfa. Cloned worker VMs must not share an iSCSI initiator name: the
# array would see one host. Runs once per VM (the marker file stays).
set -eu
mkdir -p /etc/iscsi
echo "InitiatorName=$(/usr/sbin/iscsi-iname)" > /etc/iscsi/initiatorname.iscsi
touch /etc/iscsi/.pxfa-unique-initiator
"#;

/// First-boot script giving this VM its own NVMe host NQN and host id.
pub(crate) const UNIQUE_NQN_SCRIPT: &str = r#"#!/bin/sh
# Written by pxfa. Cloned worker VMs must not share an NVMe host NQN: the array
# would see one host. Runs once per VM (the marker file stays).
set -eu
mkdir -p /etc/nvme
nqn=$(/usr/sbin/nvme gen-hostnqn)
echo "$nqn" > /etc/nvme/hostnqn
echo "${nqn##*:}" > /etc/nvme/hostid
touch /etc/nvme/.pxfa-unique-hostnqn
"#;

/// `/etc/modules-load.d/nvme_tcp.conf`: the NVMe/TCP initiator loaded at boot.
pub(crate) const NVME_TCP_MODULE: &str = "nvme_tcp\n";

const IQN_SCRIPT_PATH: &str = "/etc/pxfa/unique-iscsi-initiator.sh";
const NQN_SCRIPT_PATH: &str = "/etc/pxfa/unique-nvme-hostnqn.sh";

fn first_boot_unit(name: &str, what: &str, marker: &str, script: &str, before: &str) -> Value {
    let contents = format!(
        "[Unit]\nDescription={what} (pxfa)\nConditionPathExists=!{marker}\nBefore={before}\n\n\
         [Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh {script}\n\n\
         [Install]\nWantedBy=multi-user.target\n"
    );
    json!({"name": name, "enabled": true, "contents": contents})
}

/// Ignition spec version understood by every supported RHCOS.
const IGNITION_VERSION: &str = "3.2.0";

fn data_url(text: &str) -> String {
    format!(
        "data:text/plain;charset=utf-8;base64,{}",
        STANDARD.encode(text.as_bytes())
    )
}

fn file(path: &str, mode: u32, text: &str) -> Value {
    json!({
        "path": path,
        "mode": mode,
        "overwrite": true,
        "contents": {"source": data_url(text)},
    })
}

/// The paths of [`flasharray_host_files`].
const HOST_FILE_PATHS: [&str; 3] = [
    "/etc/multipath.conf",
    "/etc/udev/rules.d/99-pure-storage.rules",
    "/etc/udev/rules.d/90-scsi-ua.rules",
];

/// The paths the management MachineConfig writes (what another MachineConfig must
/// not write too).
pub(crate) fn management_host_files() -> [&'static str; 3] {
    HOST_FILE_PATHS
}

/// The files every FlashArray host gets: multipath.conf, Pure's udev rules, the
/// SCSI unit-attention rules with the capacity rescan.
fn flasharray_host_files() -> Vec<Value> {
    let [multipath, udev, scsi_ua] = HOST_FILE_PATHS;
    vec![
        file(multipath, 420, MULTIPATH_CONF),
        file(udev, 420, UDEV_RULES),
        file(scsi_ua, 420, SCSI_UA_RULES),
    ]
}

fn worker_machine_config(name: &str, config: Value, kernel_args: &[&str]) -> Value {
    let mut spec = serde_json::Map::new();
    spec.insert("config".into(), config);
    if !kernel_args.is_empty() {
        spec.insert("kernelArguments".into(), json!(kernel_args));
    }
    json!({
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfig",
        "metadata": {
            "name": name,
            "labels": {"machineconfiguration.openshift.io/role": "worker"},
        },
        "spec": Value::Object(spec),
    })
}

/// The MachineConfig (as a JSON value) for the tenant's workers: the FlashArray host
/// files, multipathd, and per protocol: iscsid and a unique initiator name (iSCSI);
/// `nvme_tcp` loaded, a unique host NQN and dm-multipath managing the paths
/// (NVMe/TCP).
pub(crate) fn machine_config(protocol: Protocol) -> Value {
    let mut files = flasharray_host_files();
    let mut units = vec![json!({"name": "multipathd.service", "enabled": true})];
    let mut kernel_args = Vec::new();
    match protocol {
        Protocol::NvmeTcp => {
            files.push(file(
                "/etc/modules-load.d/nvme_tcp.conf",
                420,
                NVME_TCP_MODULE,
            ));
            files.push(file(NQN_SCRIPT_PATH, 493, UNIQUE_NQN_SCRIPT));
            units.push(first_boot_unit(
                "pxfa-unique-nvme-hostnqn.service",
                "Give this VM its own NVMe host NQN",
                "/etc/nvme/.pxfa-unique-hostnqn",
                NQN_SCRIPT_PATH,
                "multipathd.service",
            ));
            // dm-multipath, not native NVMe multipath, manages the paths (Portworx
            // requirement for NVMe-oF/TCP with multipath-tools).
            kernel_args.push("nvme_core.multipath=N");
        }
        Protocol::Iscsi | Protocol::Fc => {
            files.push(file(IQN_SCRIPT_PATH, 493, UNIQUE_IQN_SCRIPT));
            units.push(first_boot_unit(
                "pxfa-unique-iscsi-initiator.service",
                "Give this VM its own iSCSI initiator name",
                "/etc/iscsi/.pxfa-unique-initiator",
                IQN_SCRIPT_PATH,
                "iscsid.service iscsid.socket",
            ));
            units.push(json!({"name": "iscsid.service", "enabled": true}));
        }
    }
    let config = json!({
        "ignition": {"version": IGNITION_VERSION},
        "storage": {"files": files},
        "systemd": {"units": units},
    });
    worker_machine_config("99-worker-px-multipath", config, &kernel_args)
}

/// Name of the management nodes' MachineConfig.
pub(crate) const MANAGEMENT_MACHINE_CONFIG: &str = "99-worker-pxfa-flasharray";

/// The management workers' MachineConfig: the FlashArray host files, iscsid and
/// multipathd, the same for every tenant (the management Portworx's own protocol is
/// not in a tenant's spec, and iscsid idles without iSCSI targets). The management
/// nodes keep their own initiator names, which the array's hosts already know.
pub(crate) fn management_machine_config() -> Manifest {
    let config = json!({
        "ignition": {"version": IGNITION_VERSION},
        "storage": {"files": flasharray_host_files()},
        "systemd": {"units": [
            {"name": "iscsid.service", "enabled": true},
            {"name": "multipathd.service", "enabled": true},
        ]},
    });
    let mut body = worker_machine_config(MANAGEMENT_MACHINE_CONFIG, config, &[]);
    if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut)
        && let Some(Value::Object(l)) = meta.get_mut("labels")
    {
        l.insert("app.kubernetes.io/managed-by".into(), json!("pxfa"));
    }
    Manifest::resource(
        Cluster::Management,
        step::NODE_CONFIG,
        body,
        &[
            "FlashArray host settings for the management workers (multipath.conf, udev rules with the",
            "CAPACITY_DATA_HAS_CHANGED rescan, iscsid, multipathd), which run the VM disks and FADA volumes.",
            "APPLYING IT REBOOTS the worker pool node by node. Shared by tenants; NVMe/TCP management nodes",
            "also need the kernel argument nvme_core.multipath=N (not set here: it is the cluster's choice).",
        ],
    )
}

/// The ConfigMap carrying the MachineConfig, in the NodePool namespace.
pub(crate) fn multipath_config_map(
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
            "MachineConfig for the tenant's workers: FlashArray multipath.conf and udev rules, multipathd, and",
            "per protocol iscsid or nvme_tcp; each VM makes its own initiator name / host NQN at first boot.",
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
        let names: Vec<&str> = units.iter().map(|u| u["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "multipathd.service",
                "pxfa-unique-iscsi-initiator.service",
                "iscsid.service"
            ]
        );
        let nvme = machine_config(Protocol::NvmeTcp);
        let files: Vec<&str> = nvme
            .pointer("/spec/config/storage/files")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert!(
            files.contains(&"/etc/modules-load.d/nvme_tcp.conf"),
            "{files:?}"
        );
        assert!(files.contains(&NQN_SCRIPT_PATH), "{files:?}");
        assert!(!files.contains(&IQN_SCRIPT_PATH), "{files:?}");
    }

    #[test]
    fn capacity_rescan_is_active_and_first_boot_units_run_once() {
        assert!(
            SCSI_UA_RULES
                .lines()
                .any(|l| l.starts_with("ENV{SDEV_UA}==\"CAPACITY_DATA_HAS_CHANGED\""))
        );
        let u = first_boot_unit("x.service", "X", "/etc/m", "/etc/s.sh", "iscsid.service");
        let text = u["contents"].as_str().unwrap();
        assert!(text.contains("ConditionPathExists=!/etc/m"), "{text}");
        assert!(UNIQUE_IQN_SCRIPT.contains("touch /etc/iscsi/.pxfa-unique-initiator"));
        assert!(UNIQUE_NQN_SCRIPT.contains("touch /etc/nvme/.pxfa-unique-hostnqn"));
    }
}
