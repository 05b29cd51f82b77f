//! Option (b), Direct Access: one FlashArray volume per Portworx drive and one
//! metadata volume per worker VM, created by the management Portworx when their FADA
//! claims bind (dynamic, the only way Portworx 3.6 documents) or pre-created by pxfa
//! and imported where a release documents import (the provisioning table); KubeVirt
//! hotplugs them into the VMs with fixed disk serials; the tenant's Portworx uses
//! them as local drives by `/dev/disk/by-id` path.

use std::collections::BTreeMap;

use flasharray::{ConnectionTarget, PodName, Size, Wwn};
use serde_json::{Value, json};

use super::{ArrayFacts, DriverError, StorageDriver, required_protocol};
use crate::desired::{
    DesiredConnection, DesiredDrive, DesiredHost, DesiredHostGroup, DesiredPod, DesiredState,
    DesiredVolume, DriveClaim, Scope, TAG_CAPACITY, TAG_CLAIM, TAG_DISK, TAG_NODE, TenantId,
    ownership_tags,
};
use crate::naming::{self, DiskRole};
use crate::render::management::{self, PX_PROVISIONER, labels};
use crate::render::tenant::{self, PortworxDrives};
use crate::render::{Cluster, Form, Manifest, RenderError, quantity, step};
use crate::sizing::Sizing;
use crate::spec::provisioning::Strategy;
use crate::spec::{Attach, DiskBus, HotplugGate, Protocol, TenantStorage};

// pxfa no longer emits `pure_vol_name`, the annotation of the unversioned "Using
// Pre-provisioned FlashArray Direct Access Volumes" Portworx page: no release states
// support for it. Import uses the annotation of the provisioning table
// (`spec::provisioning`), only on releases that document import.

/// PVC annotation carrying the array volume's serial when apply knows it.
const SERIAL_ANNOTATION: &str = "pxfa.io/array-serial";

/// The Direct Access driver.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DirectAccess;

/// One tenant volume: which worker, which disk, its array name and size.
#[derive(Debug, Clone)]
struct WorkerDisk {
    worker: u32,
    role: DiskRole,
    volume: flasharray::VolumeName,
    size: Size,
}

/// Ownership, role, node index and disk index of a drive: the same in both
/// provisioning strategies, so that sizing and lifecycle rules read either.
fn drive_tags(tenant: &TenantId, d: &WorkerDisk) -> BTreeMap<String, String> {
    let mut tags = ownership_tags(tenant, Scope::Tenant, d.role.tag());
    tags.insert(TAG_NODE.to_string(), d.worker.to_string());
    tags.insert(TAG_DISK.to_string(), d.role.index_tag());
    tags
}

/// The tenant's pod: `storage.pod`, inside the realm when there is one; with a realm
/// and no `storage.pod`, the tenant name inside the realm (the volumes live in the
/// realm's pod).
fn tenant_pod(spec: &TenantStorage) -> Option<PodName> {
    match spec.realm_pod() {
        Some(p) => p.ok(),
        None => spec.spec.storage.pod.clone(),
    }
}

/// Every tenant volume, worker by worker, data disks before the metadata disk.
fn worker_disks(spec: &TenantStorage, sizing: &Sizing) -> Result<Vec<WorkerDisk>, DriverError> {
    let tenant = spec.tenant_name();
    let pod = tenant_pod(spec);
    let pod = pod.as_ref();
    let mut out = Vec::new();
    for worker in 0..spec.spec.hosted_cluster.replicas {
        let roles = (0..sizing.drives_per_node)
            .map(|d| (DiskRole::Data(d), sizing.drive_size))
            .chain(std::iter::once((DiskRole::Metadata, sizing.metadata_size)));
        for (role, size) in roles {
            let volume = naming::worker_volume(tenant, pod, worker, role).map_err(|source| {
                DriverError::Name {
                    path: "metadata.name".to_string(),
                    source,
                }
            })?;
            out.push(WorkerDisk {
                worker,
                role,
                volume,
                size,
            });
        }
    }
    Ok(out)
}

impl StorageDriver for DirectAccess {
    fn mode(&self) -> &'static str {
        "direct-access"
    }

    fn desired_state(
        &self,
        spec: &TenantStorage,
        sizing: &Sizing,
    ) -> Result<DesiredState, DriverError> {
        let tenant = &spec.tenant_id();
        let protocol = required_protocol(spec)?;
        let mgmt = &spec.spec.management;
        let mut state = DesiredState {
            tenant: tenant.clone(),
            ..DesiredState::default()
        };
        let disks = worker_disks(spec, sizing)?;
        let strategy = strategy(spec)?;
        state.realm = super::desired_realm(spec, None);
        if let Some(pod) = tenant_pod(spec) {
            let mut tags = ownership_tags(tenant, Scope::Tenant, "tenant-pod");
            tags.insert(
                TAG_CAPACITY.to_string(),
                spec.spec.storage.capacity.as_u64().to_string(),
            );
            state.pod = Some(DesiredPod {
                name: pod,
                quota: Some(sizing.pod_quota),
                tags,
            });
        }
        // `attach: fada`: the management Portworx connects each drive to the node
        // that runs its VM, on demand; pxfa needs no host, group or connection.
        // `attach: host-group`: the nodes' hosts (found by initiator) share one group
        // that every drive is connected to.
        if spec.spec.storage.attach == Attach::Fada {
            state.notes.push(
                "attach: fada — the management Portworx connects drives on demand; pxfa plans no hosts"
                    .to_string(),
            );
        } else {
            state.host_groups.push(DesiredHostGroup {
                name: mgmt.host_group.clone(),
                scope: Scope::Shared,
                tags: ownership_tags(tenant, Scope::Shared, "mgmt-host-group"),
            });
            state.hosts = node_hosts(spec, protocol)?;
        }
        if strategy == Strategy::Dynamic {
            let place =
                tenant_pod(spec).map_or("on the array".to_string(), |p| format!("in pod {p}"));
            state.notes.push(format!(
                "provisioning: dynamic — the management Portworx creates the {} drive volumes {place} when their claims bind; pxfa finds them through the bound claims and tags them",
                disks.len()
            ));
            state.drives = disks
                .iter()
                .map(|d| {
                    let claim = DriveClaim {
                        namespace: spec.hcp_namespace(),
                        name: d.volume.short().to_string(),
                    };
                    let mut tags = drive_tags(tenant, d);
                    tags.insert(TAG_CLAIM.to_string(), claim.to_string());
                    DesiredDrive {
                        claim,
                        size: d.size,
                        pod: tenant_pod(spec),
                        tags,
                    }
                })
                .collect();
            return Ok(state);
        }
        for d in &disks {
            let tags = drive_tags(tenant, d);
            state.volumes.push(DesiredVolume {
                name: d.volume.clone(),
                size: d.size,
                tags,
            });
            if spec.spec.storage.attach == Attach::HostGroup {
                state.connections.push(DesiredConnection {
                    target: ConnectionTarget::HostGroup(mgmt.host_group.clone()),
                    volume: d.volume.clone(),
                    lun: None,
                });
            }
        }
        Ok(state)
    }

    fn manifests(
        &self,
        spec: &TenantStorage,
        sizing: &Sizing,
        facts: &ArrayFacts,
    ) -> Result<Vec<Manifest>, RenderError> {
        let disks = worker_disks(spec, sizing)?;
        let import = match spec.provisioning() {
            Ok(r) if r.strategy == Strategy::Import => r.import_annotation,
            Ok(_) => None,
            Err(e) => {
                return Err(RenderError::Invalid {
                    path: "spec.storage.provisioning".into(),
                    message: e.message,
                });
            }
        };
        let mut out = vec![fada_storage_class(spec)];
        for d in &disks {
            out.push(claim(spec, d, facts, import));
        }
        for worker in 0..spec.spec.hosted_cluster.replicas {
            let mine: Vec<&WorkerDisk> = disks.iter().filter(|d| d.worker == worker).collect();
            out.push(vm_disk_patch(spec, worker, &mine)?);
        }
        out.push(
            migration_lines(spec)
                .into_iter()
                .fold(management::node_pool(spec, &[])?, Manifest::note),
        );
        if !live_migratable_drives(spec) {
            out.push(management::hyperconverged_eviction_patch());
        }

        let bus = spec.spec.storage.disk_bus;
        let devices = (0..sizing.drives_per_node)
            .map(|d| device_path(bus, DiskRole::Data(d)))
            .collect();
        let drives = PortworxDrives::Local {
            devices,
            metadata_device: device_path(bus, DiskRole::Metadata),
        };
        // [L] PX_NESTED (Portworx nested in VMs whose disks another Portworx serves)
        // has no Portworx source; on by default as before, `portworx.nested: false`
        // leaves it out.
        let nested = spec.spec.portworx.nested;
        let env: Vec<(&str, String)> = if nested {
            vec![("PX_NESTED", "true".to_string())]
        } else {
            Vec::new()
        };
        out.push(tenant::namespace(spec));
        out.extend(tenant::portworx_operator(spec));
        out.push(
            tenant::storage_cluster(spec, &drives, &env)
                .note(
                    "Drives are the hotplugged Direct Access disks, found by their fixed serials (pxdata<d>, pxmeta).",
                )
                .note(if nested {
                    "[L] env PX_NESTED=true (portworx.nested): no Portworx page documents it; it is meant to tell \
                     Portworx it runs nested in VMs whose disks the management Portworx serves. Test on a lab \
                     cluster; portworx.nested: false leaves it out."
                } else {
                    "[L] portworx.nested: false: no PX_NESTED env (no Portworx page documents it either way)."
                }),
        );
        out.push(tenant::app_storage_class(spec));
        out.push(tenant::validation_pvc(
            spec,
            &spec.app_storage_class(),
            &spec.spec.portworx.namespace,
        ));
        Ok(out)
    }
}

/// The management nodes as hosts to find by initiator (and create under `host` or
/// the node name when none holds them).
fn node_hosts(spec: &TenantStorage, protocol: Protocol) -> Result<Vec<DesiredHost>, DriverError> {
    let tenant = &spec.tenant_id();
    let mgmt = &spec.spec.management;
    let mut out = Vec::new();
    for (i, node) in mgmt.nodes.iter().enumerate() {
        let name = node.array_host().map_err(|source| DriverError::Name {
            path: format!("spec.management.nodes[{i}].host"),
            source,
        })?;
        let initiators = node.initiators(protocol);
        if initiators.is_empty() {
            return Err(DriverError::Invalid {
                path: format!("spec.management.nodes[{i}].{}", protocol.initiator_field()),
                message: format!(
                    "node {} has no {} initiators; the array cannot reach it over {protocol}",
                    node.name,
                    protocol.initiator_field()
                ),
            });
        }
        let (mut wwns, mut iqns, mut nqns) = (Vec::new(), Vec::new(), Vec::new());
        match protocol {
            // WWNs as the array stores them ([`Wwn::as_str`]); text that is no WWN
            // is refused, never trimmed into one.
            Protocol::Fc => {
                wwns = initiators
                    .iter()
                    .enumerate()
                    .map(|(j, w)| {
                        Wwn::new(w).map(|w| w.as_str().to_string()).map_err(|e| {
                            DriverError::Invalid {
                                path: format!("spec.management.nodes[{i}].wwns[{j}]"),
                                message: e.to_string(),
                            }
                        })
                    })
                    .collect::<Result<_, _>>()?
            }
            Protocol::Iscsi => iqns = initiators.to_vec(),
            Protocol::NvmeTcp => nqns = initiators.to_vec(),
        }
        out.push(DesiredHost {
            node: node.name.clone(),
            name,
            wwns,
            iqns,
            nqns,
            personality: None,
            host_group: Some(mgmt.host_group.clone()),
            scope: Scope::Shared,
            tags: ownership_tags(tenant, Scope::Shared, "mgmt-host"),
        });
    }
    Ok(out)
}

/// The stable guest path of a disk with the serial of `role` on `bus`.
fn device_path(bus: DiskBus, role: DiskRole) -> String {
    match bus {
        DiskBus::Scsi => format!("/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_{}", role.serial()),
        DiskBus::Virtio => format!("/dev/disk/by-id/virtio-{}", role.serial()),
    }
}

/// The management FADA StorageClass of the tenant's drive claims.
fn fada_storage_class(spec: &TenantStorage) -> Manifest {
    let mut params = serde_json::Map::new();
    params.insert("backend".into(), json!("pure_block"));
    if let Some(pod) = tenant_pod(spec) {
        params.insert(
            "pure_fa_pod_name".into(),
            json!(spec.pod_in_manifests(&pod)),
        );
    }
    let body = json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": spec.fada_storage_class(), "labels": labels(spec)},
        "provisioner": PX_PROVISIONER,
        "parameters": Value::Object(params),
        // The drives hold the tenant's Portworx pools: deleting a claim (or the
        // HostedCluster's namespace) must never delete the array volume.
        "reclaimPolicy": "Retain",
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": true,
    });
    let m = Manifest::resource(
        Cluster::Management,
        step::STORAGE_CLASS,
        body,
        &[
            "FlashArray Direct Access StorageClass of the management Portworx.",
            "The management Portworx needs this array in its px-pure-secret. The tenant's drive claims",
            "bind through this class: dynamic claims create their volumes, import claims name pxfa's.",
        ],
    );
    // StorageClass parameters are immutable and the class names the tenant's pod,
    // so every tenant has its own class (default `pxfa-fada-<tenant>`).
    let m = m.note(
        "reclaimPolicy Retain: deleting a claim, or the tenant, leaves the drive on the array; \
         pxfa removes drives only when asked to (`pxfa destroy`).",
    );
    let m = match spec.realm() {
        Some(r) => m.note(format!(
            "pure_fa_pod_name names the pod as spec.array.realmPodForm says (default: with \
             realm {r}, the pod's full array name, since the management Portworx's token is \
             array-wide; [L], docs/realms.md)."
        )),
        None => m,
    };
    match tenant_pod(spec) {
        Some(pod) => m.note(format!(
            "Bound to FlashArray pod {}; this class is the tenant's own (storage.fadaStorageClass).",
            pod.as_str()
        )),
        None => m,
    }
}

/// The first Portworx release whose FA/FB driver is GA (portworx-enterprise/platform/
/// configure-portworx-components/enable-fa-fb-driver, 3.7); in 3.6 it is Early Access,
/// "should not be used in production".
const FA_FB_DRIVER_GA: crate::spec::Version = crate::spec::Version::new(3, 7, 0);

/// Whether the drive claims may be ReadWriteMany raw block, which KubeVirt needs to
/// live-migrate the worker VMs. Portworx documents multi-node read-write raw-block
/// FADA for KubeVirt live migration only with the FA/FB driver, GA from 3.7; on 3.6
/// it is Early Access. Read like the provisioning table, from the management
/// Portworx, which attaches the drives: `management.faFbDriver` and its release
/// ([`TenantStorage::management_portworx_version`]), never the tenant's own
/// `portworx.version`. Otherwise the claims are ReadWriteOnce and the worker VMs do
/// not live-migrate.
pub(crate) fn live_migratable_drives(spec: &TenantStorage) -> bool {
    spec.spec.management.fa_fb_driver
        && spec
            .management_portworx_version()
            .at_least(&FA_FB_DRIVER_GA)
            == Some(true)
}

/// The header lines that say, plainly, whether the worker VMs can live-migrate with
/// their drives, and why.
fn migration_lines(spec: &TenantStorage) -> Vec<String> {
    let v = spec.management_portworx_version();
    if live_migratable_drives(spec) {
        return vec![format!(
            "Drives are ReadWriteMany raw block, so the worker VMs live-migrate: the management Portworx {v} \
             runs the FA/FB driver (management.faFbDriver), GA from 3.7."
        )];
    }
    let why = if spec.spec.management.fa_fb_driver {
        format!(
            "the FA/FB driver of the management Portworx {v} is Early Access (\"should not be used in production\"; GA in 3.7)"
        )
    } else {
        "the management Portworx does not run the FA/FB driver (management.faFbDriver false)"
            .to_string()
    };
    vec![
        format!(
            "Drives are ReadWriteOnce: the worker VMs do NOT live-migrate. Portworx documents multi-node \
             read-write raw-block FADA for KubeVirt live migration only with the FA/FB driver, and {why}."
        ),
        "Draining a management node cannot move these VMs: stop one worker VM at a time (its Portworx node \
         goes offline; replicated volumes keep serving), drain, then start it again on another node."
            .to_string(),
    ]
}

/// The resolved strategy, or the table's refusal as a driver error.
fn strategy(spec: &TenantStorage) -> Result<Strategy, DriverError> {
    spec.provisioning()
        .map(|r| r.strategy)
        .map_err(|e| DriverError::Invalid {
            path: "spec.storage.provisioning".into(),
            message: e.message,
        })
}

/// One management PVC for one drive: with `import`, the annotation that binds the
/// volume pxfa pre-created; without, the management Portworx creates the volume.
fn claim(
    spec: &TenantStorage,
    d: &WorkerDisk,
    facts: &ArrayFacts,
    import: Option<&'static str>,
) -> Manifest {
    let mut meta_labels = match labels(spec) {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    meta_labels.insert("pxfa.io/node-index".into(), json!(d.worker.to_string()));
    meta_labels.insert("pxfa.io/disk".into(), json!(d.role.serial()));
    meta_labels.insert("portworx.io/app".into(), json!("kubevirt"));
    let mut annotations = BTreeMap::new();
    if let Some(a) = import {
        annotations.insert(a.to_string(), d.volume.as_str().to_string());
        if let Some(serial) = facts.serial_of(d.volume.as_str()) {
            annotations.insert(SERIAL_ANNOTATION.to_string(), serial.to_string());
        }
    }
    let body = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": d.volume.short(),
            "namespace": spec.hcp_namespace(),
            "labels": Value::Object(meta_labels),
            "annotations": annotations,
        },
        "spec": {
            "accessModes": [if live_migratable_drives(spec) { "ReadWriteMany" } else { "ReadWriteOnce" }],
            "volumeMode": "Block",
            "storageClassName": spec.fada_storage_class(),
            "resources": {"requests": {"storage": quantity(d.size)}},
        },
    });
    let purpose: &[&str] = if import.is_some() {
        &[
            "Binds a pre-provisioned array volume (created by `pxfa apply`) for a worker VM disk, raw block.",
            "Apply after `pxfa apply` and after the HostedCluster exists (its namespace holds the VMs).",
        ]
    } else {
        &[
            "A worker VM disk, raw block: the management Portworx creates its array volume in the tenant's",
            "pod when the claim binds (pxfa pre-creates nothing). Apply after `pxfa apply` (the pod must",
            "exist) and after the HostedCluster exists (its namespace holds the VMs).",
        ]
    };
    migration_lines(spec).into_iter().fold(
        Manifest::resource(Cluster::Management, step::CLAIMS, body, purpose),
        Manifest::note,
    )
}

use crate::lint::manifest_rules::{MAX_DISK_SERIAL, MAX_VIRTIO_SERIAL};

/// The serial of `role` on `bus`, refused when QEMU (or virtio-blk) would not keep it
/// whole.
fn disk_serial(role: DiskRole, bus: DiskBus) -> Result<String, RenderError> {
    let serial = role.serial();
    let max = match bus {
        DiskBus::Scsi => MAX_DISK_SERIAL,
        DiskBus::Virtio => MAX_VIRTIO_SERIAL,
    };
    if serial.len() > max {
        return Err(RenderError::field(
            "spec.storage.drivesPerNode",
            format!(
                "disk serial {serial} is longer than the {max} characters a {} disk keeps",
                bus.as_str()
            ),
        ));
    }
    Ok(serial)
}

/// The header lines of a worker's disk patch: what applying it does under the
/// site's hotplug gate (`management.hotplugGate`), and the `virtctl addvolume`
/// lines where that is the live way.
fn hotplug_lines(spec: &TenantStorage, disks: &[&WorkerDisk]) -> Result<Vec<String>, RenderError> {
    let bus = spec.spec.storage.disk_bus;
    let hcp = spec.hcp_namespace();
    let mut out = Vec::new();
    match spec.spec.management.hotplug_gate {
        HotplugGate::DeclarativeHotplugVolumes => out.extend([
            "management.hotplugGate: declarative-hotplug-volumes (a statement about the site: only KubeVirt's"
                .to_string(),
            "DeclarativeHotplugVolumes gate is on). Applying this patch to the running VM hotplugs the disks"
                .to_string(),
            "live: KubeVirt attaches volumes added to the VM template with hotpluggable: true."
                .to_string(),
        ]),
        HotplugGate::HotplugVolumes => {
            out.extend([
                "management.hotplugGate: hotplug-volumes (a statement about the site: KubeVirt's HotplugVolumes"
                    .to_string(),
                "gate is on, alone or with DeclarativeHotplugVolumes, over which it takes precedence). Then"
                    .to_string(),
                "editing the VM template does NOT hotplug: applied to a running VM these ops wait for its next"
                    .to_string(),
                "restart. Attach the disks live with the addvolume subresource instead, one line per disk"
                    .to_string(),
                "(pxfa apply --kubeconfig makes the same calls); --persist records each disk in the VM spec,"
                    .to_string(),
                "so it survives a restart. The recorded disk is named after the volume (the claim), not"
                    .to_string(),
                "pxdata<d>/pxmeta as in the ops below; the serial, which names /dev/disk/by-id, is the same:"
                    .to_string(),
            ]);
            for d in disks {
                let serial = disk_serial(d.role, bus)?;
                let words = [
                    "virtctl".to_string(),
                    "addvolume".to_string(),
                    "<vm>".to_string(),
                    "-n".to_string(),
                    hcp.clone(),
                    format!("--volume-name={}", d.volume.short()),
                    format!("--serial={serial}"),
                    format!("--bus={}", bus.as_str()),
                    "--persist".to_string(),
                ];
                out.push(format!("  {}", crate::render::shell::join(&words)));
            }
        }
    }
    out.push(format!(
        "Disk serials are at most {MAX_DISK_SERIAL} characters (QEMU refuses longer ones; virtio-blk keeps {MAX_VIRTIO_SERIAL})."
    ));
    Ok(out)
}

/// The JSON patch that adds one worker's disks to its VM, persistently; how it
/// hotplugs depends on the site's gate ([`hotplug_lines`]).
fn vm_disk_patch(
    spec: &TenantStorage,
    worker: u32,
    disks: &[&WorkerDisk],
) -> Result<Manifest, RenderError> {
    let bus = spec.spec.storage.disk_bus;
    let mut ops = Vec::new();
    for d in disks {
        let serial = disk_serial(d.role, bus)?;
        ops.push(json!({
            "op": "add",
            "path": "/spec/template/spec/domain/devices/disks/-",
            "value": {"name": serial, "serial": serial, "disk": {"bus": bus.as_str()}},
        }));
        ops.push(json!({
            "op": "add",
            "path": "/spec/template/spec/volumes/-",
            "value": {
                "name": serial,
                "persistentVolumeClaim": {"claimName": d.volume.short(), "hotpluggable": true},
            },
        }));
    }
    let name = naming::fit(&spec.node_pool(), &format!("w{worker:02}"), 253);
    let hcp = spec.hcp_namespace();
    let mut purpose = vec![
        format!(
            "Adds worker {worker:02}'s Portworx disks to ONE worker VM of NodePool {} in {hcp}.",
            spec.node_pool()
        ),
        "Pick a different VM for each worker index (oc get vm -n <ns>) and never give two VMs the same"
            .to_string(),
        "index: nothing else stops two Portworx nodes writing one disk (ReadWriteMany claims do not).".to_string(),
    ];
    purpose.extend(hotplug_lines(spec, disks)?);
    Ok(Manifest {
        cluster: Cluster::Management,
        order: step::VM_DISKS,
        file_name: String::new(),
        kind: "VirtualMachine".to_string(),
        name,
        namespace: Some(hcp.clone()),
        body: Value::Array(ops),
        secret: false,
        purpose,
        form: Form::JsonPatch {
            target: format!("the VirtualMachine of worker {worker:02} in namespace {hcp}"),
        },
    })
}
