//! The tenant's worker VMs on the management cluster, which worker index each one
//! carries, and hotplugging that index's Direct Access disks into it.
//!
//! The NodePool names its VMs `<nodePool>-<random>`, so the index of a VM cannot come
//! from its name. pxfa chooses it once and records it twice: on the VM (annotation
//! `pxfa.io/worker-index`) and on each of the index's claims (`pxfa.io/attached-vm`).
//! Later runs keep every recorded choice. A VM that disappeared leaves its claims
//! recording a VM that no longer exists; a new VM gets those disks only with
//! `adopt_replaced_vms`, because the old VM might merely be hidden (another namespace
//! after a move, a deletion still in progress) and the claims are ReadWriteMany: two
//! VMs with the same index would have two Portworx nodes writing one disk.
//!
//! Disks are attached the way the site's KubeVirt gate allows
//! (`management.hotplugGate`, read from the site by `apply --kubeconfig`): with
//! `HotplugVolumes`, the `addvolume` subresource (what `virtctl addvolume --persist`
//! calls), which hotplugs into a running VM and records the disk in the VM spec; with
//! `DeclarativeHotplugVolumes` alone, a JSON patch that appends the disk to the VM
//! template, which KubeVirt then hotplugs.

use std::collections::{BTreeMap, BTreeSet};

use crate::bounds::list_all;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use px_topology::spec::{DiskBus, HotplugGate, Protocol};
use px_topology::{Manifest, TenantStorage};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::kinds::{VIRTUAL_MACHINE, VIRTUAL_MACHINE_INSTANCE};
use crate::readiness::{Pending, WaitOptions};
use crate::{ATTACHED_VM_ANNOTATION, BOOKKEEPING_MANAGER, WORKER_INDEX_ANNOTATION};

/// One disk of a worker: the serial the tenant's device paths expect and its claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiskAttachment {
    /// Disk and volume name in the VM, and the disk serial (`pxdata0`, `pxmeta`).
    pub serial: String,
    /// The management PVC that backs the disk (in the hosted control plane namespace).
    pub claim: String,
    /// The disk bus, as the spec chose it.
    pub bus: DiskBus,
}

/// The disks of one worker index, read from the rendered VM patches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkerDisks {
    /// Worker index (`w00` is 0).
    pub index: u32,
    /// The hosted control plane namespace holding the VMs and claims.
    pub namespace: String,
    /// The worker's disks, in the order the patches list them.
    pub disks: Vec<DiskAttachment>,
}

/// A worker VM as pxfa sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VmInfo {
    /// The VirtualMachine's name in the hosted control plane namespace.
    pub name: String,
    /// Creation time (RFC 3339), for a deterministic order of new VMs.
    pub created: String,
    /// The worker index recorded on it, if any.
    pub index: Option<u32>,
    /// Claim-backed volumes in its spec, by the serial of their disk (the volume
    /// name where the disk has none): serial -> claim ([`claims_by_serial`]).
    pub claims: BTreeMap<String, String>,
}

/// One worker's VM and its disks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assignment {
    /// Worker index (`w00` is 0), as recorded on the VM.
    pub index: u32,
    /// The VM carrying it.
    pub vm: String,
    /// Serials attached by this run.
    pub attached: Vec<String>,
    /// Serials that were attached already.
    pub present: Vec<String>,
}

/// Switches for [`attach_workers`].
#[derive(Debug, Clone, Copy, Default)]
pub struct AttachOptions {
    /// Let a new VM take the disks of a worker whose recorded VM is gone.
    pub adopt_replaced_vms: bool,
    /// How long to wait for the NodePool's VMs to appear.
    pub wait: WaitOptions,
}

/// What [`attach_workers`] did and what waits for the admin or the NodePool.
#[derive(Debug, Clone, Default)]
pub struct AttachOutcome {
    /// Workers with their VM.
    pub assignments: Vec<Assignment>,
    /// Workers without a VM, and why.
    pub pending: Vec<Pending>,
}

/// Reads the disks per worker from the renderer's VM patches (one per worker, named
/// `<nodePool>-wNN`).
pub fn worker_disks(patches: &[&Manifest]) -> Result<Vec<WorkerDisks>> {
    let mut out = Vec::new();
    for m in patches {
        let index = m
            .name
            .rsplit_once("-w")
            .and_then(|(_, n)| n.parse::<u32>().ok())
            .ok_or_else(|| {
                Error::Manifest(format!(
                    "VM patch {}: no worker index (-wNN) in its name",
                    m.name
                ))
            })?;
        let namespace = m
            .namespace
            .clone()
            .ok_or_else(|| Error::Manifest(format!("VM patch {}: no namespace", m.name)))?;
        let ops = m
            .body
            .as_array()
            .ok_or_else(|| Error::Manifest(format!("VM patch {}: not a JSON patch", m.name)))?;
        let mut buses = BTreeMap::new();
        let mut claims = BTreeMap::new();
        for op in ops {
            let path = op.get("path").and_then(Value::as_str).unwrap_or_default();
            let value = op.get("value").cloned().unwrap_or(Value::Null);
            let name = value
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if path.ends_with("/devices/disks/-") {
                let serial = value.get("serial").and_then(Value::as_str).unwrap_or(&name);
                let bus = match value.pointer("/disk/bus") {
                    None => DiskBus::default(),
                    Some(b) => DiskBus::deserialize(b).map_err(|_| {
                        Error::Manifest(format!(
                            "VM patch {}: disk {name} has an unknown bus {b}",
                            m.name
                        ))
                    })?,
                };
                buses.insert(name.clone(), (serial.to_string(), bus));
            } else if path.ends_with("/spec/volumes/-")
                && let Some(claim) = value
                    .pointer("/persistentVolumeClaim/claimName")
                    .and_then(Value::as_str)
            {
                claims.insert(name, claim.to_string());
            }
        }
        let mut disks = Vec::new();
        for (name, (serial, bus)) in buses {
            let claim = claims.remove(&name).ok_or_else(|| {
                Error::Manifest(format!("VM patch {}: disk {name} has no claim", m.name))
            })?;
            disks.push(DiskAttachment { serial, claim, bus });
        }
        out.push(WorkerDisks {
            index,
            namespace,
            disks,
        });
    }
    out.sort_by_key(|w| w.index);
    Ok(out)
}

/// Label HyperShift puts on a NodePool's machines. \[L\] Whether it reaches the
/// KubeVirt VMs is unconfirmed, so it is used when present and the name prefix
/// `<nodePool>-` otherwise.
pub(crate) const NODE_POOL_LABEL: &str = "hypershift.openshift.io/nodePool";

/// The objects that belong to `node_pool`: by [`NODE_POOL_LABEL`] when any object in
/// the namespace carries it (a prefix would also match a pool named
/// `<nodePool>-gpu`), else by the name prefix.
pub(crate) fn of_node_pool(items: Vec<DynamicObject>, node_pool: &str) -> Vec<DynamicObject> {
    if items
        .iter()
        .any(|o| o.labels().contains_key(NODE_POOL_LABEL))
    {
        items
            .into_iter()
            .filter(|o| o.labels().get(NODE_POOL_LABEL).map(String::as_str) == Some(node_pool))
            .collect()
    } else {
        let prefix = format!("{node_pool}-");
        items
            .into_iter()
            .filter(|o| o.name_any().starts_with(&prefix))
            .collect()
    }
}

/// Where each of `node_pool`'s VMIs (see [`of_node_pool`]) runs: `status.nodeName`.
pub(crate) fn placement_of(
    vmis: Vec<DynamicObject>,
    node_pool: &str,
) -> Vec<px_topology::site::WorkerPlacement> {
    of_node_pool(vmis, node_pool)
        .into_iter()
        .map(|vmi| px_topology::site::WorkerPlacement {
            vm: vmi.name_any(),
            node: vmi
                .data
                .pointer("/status/nodeName")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .map(str::to_string),
        })
        .collect()
}

/// The VirtualMachineInstances in `namespace`.
pub(crate) async fn list_vmis(
    client: &Client,
    namespace: &str,
) -> std::result::Result<Vec<DynamicObject>, kube::Error> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &VIRTUAL_MACHINE_INSTANCE.resource(),
    );
    Ok(list_all(&api, &ListParams::default()).await?.items)
}

/// The NodePool's VMs in `namespace` (see [`of_node_pool`]), sorted by name.
pub(crate) async fn discover_vms(
    client: &Client,
    namespace: &str,
    node_pool: &str,
) -> Result<Vec<VmInfo>> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), namespace, &VIRTUAL_MACHINE.resource());
    let list = list_all(&api, &ListParams::default())
        .await
        .map_err(|e| Error::kube(format!("cannot list VirtualMachines in {namespace}"), e))?;
    let mut vms = Vec::new();
    for vm in of_node_pool(list.items, node_pool) {
        let name = vm.name_any();
        let index = match vm.annotations().get(WORKER_INDEX_ANNOTATION) {
            Some(v) => Some(v.parse::<u32>().map_err(|_| {
                Error::State(format!("VirtualMachine {namespace}/{name}: annotation {WORKER_INDEX_ANNOTATION}={v:?} is not a number"))
            })?),
            None => None,
        };
        let created = vm
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.to_string())
            .unwrap_or_default();
        let claims = claims_by_serial(&vm.data);
        vms.push(VmInfo {
            name,
            created,
            index,
            claims,
        });
    }
    vms.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(vms)
}

impl VmInfo {
    /// Whether one of the VM's volumes is backed by `claim`, whatever its name: pxfa
    /// names the volume after the disk's serial, `virtctl addvolume --persist` after
    /// the claim, so the claim (not the volume name) says the disk is attached.
    pub(crate) fn holds_claim(&self, claim: &str) -> bool {
        self.claims.values().any(|c| c == claim)
    }
}

/// A VM's claim-backed volumes keyed by their disk's serial, which names the guest's
/// `/dev/disk/by-id` path and is what pxfa sets (`pxdata<d>`, `pxmeta`). The disk
/// name does not identify a pxfa disk: pxfa's patch names it after the serial, but
/// `virtctl addvolume --persist` after the volume (the claim). A volume whose disk
/// has no serial (or no disk) is keyed by its name.
pub(crate) fn claims_by_serial(vm: &Value) -> BTreeMap<String, String> {
    claim_volumes(vm)
        .into_iter()
        .map(|v| (v.serial, v.claim))
        .collect()
}

/// One claim-backed volume of a VM: its name, its disk's serial (the name where
/// the disk has none) and its claim.
pub(crate) struct ClaimVolume {
    pub(crate) name: String,
    pub(crate) serial: String,
    pub(crate) claim: String,
}

/// The claim-backed volumes of a VM, with their disks' serials.
pub(crate) fn claim_volumes(vm: &Value) -> Vec<ClaimVolume> {
    let spec = &vm["spec"]["template"]["spec"];
    let serials: BTreeMap<&str, &str> = (spec["domain"]["devices"]["disks"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|d| Some((d["name"].as_str()?, d["serial"].as_str()?)))
        .collect();
    (spec["volumes"].as_array().into_iter().flatten())
        .filter_map(|v| {
            let name = v["name"].as_str()?;
            let claim = v.pointer("/persistentVolumeClaim/claimName")?.as_str()?;
            Some(ClaimVolume {
                name: name.to_string(),
                serial: serials.get(name).copied().unwrap_or(name).to_string(),
                claim: claim.to_string(),
            })
        })
        .collect()
}

/// The VM chosen per worker index, and the indices left waiting with the reason.
pub(crate) type Choice = (BTreeMap<u32, String>, Vec<(u32, String)>);

/// Chooses a VM per worker index. Pure: `recorded` is the VM each index's claims name
/// (from a previous run), if any.
///
/// Rules, in order: a VM keeps the index recorded on it; an index whose claims name an
/// existing VM goes to that VM; an index whose recorded VM is gone waits for the admin
/// unless `adopt` is set; remaining VMs, oldest first (then by name), take the free
/// indices in ascending order. Two VMs recording the same index is an error.
pub(crate) fn assign(
    vms: &[VmInfo],
    indices: &[u32],
    recorded: &BTreeMap<u32, String>,
    adopt: bool,
) -> Result<Choice> {
    let wanted: BTreeSet<u32> = indices.iter().copied().collect();
    let mut chosen: BTreeMap<u32, String> = BTreeMap::new();
    let mut taken: BTreeSet<&str> = BTreeSet::new();
    for vm in vms {
        if let Some(i) = vm.index {
            if let Some(other) = chosen.get(&i) {
                return Err(Error::State(format!(
                    "VirtualMachines {other} and {} both carry worker index {i} ({WORKER_INDEX_ANNOTATION}); \
                     remove the annotation from the wrong one",
                    vm.name
                )));
            }
            if wanted.contains(&i) {
                chosen.insert(i, vm.name.clone());
                taken.insert(&vm.name);
            }
        }
    }
    let mut waiting = Vec::new();
    let mut free = Vec::new();
    for &i in &wanted {
        if chosen.contains_key(&i) {
            continue;
        }
        match recorded.get(&i) {
            Some(rec) => match vms.iter().find(|v| &v.name == rec) {
                Some(vm) if vm.index.is_none() => {
                    chosen.insert(i, vm.name.clone());
                    taken.insert(&vm.name);
                }
                Some(vm) => waiting.push((
                    i,
                    format!(
                        "its claims record VM {rec}, which now carries worker index {}; fix the annotations by hand",
                        vm.index.unwrap_or_default()
                    ),
                )),
                None if adopt => free.push(i),
                None => waiting.push((
                    i,
                    format!(
                        "its disks were attached to VM {rec}, which no longer exists; make sure it is gone for \
                         good and decommission its Portworx node, then re-run with --adopt-replaced-vms to give \
                         them to a new VM and wipe them before Portworx starts there (pxfa runbook replace-vm)"
                    ),
                )),
            },
            None => free.push(i),
        }
    }
    let mut fresh: Vec<&VmInfo> = vms
        .iter()
        .filter(|v| v.index.is_none() && !taken.contains(v.name.as_str()))
        .collect();
    fresh.sort_by(|a, b| (&a.created, &a.name).cmp(&(&b.created, &b.name)));
    let mut fresh = fresh.into_iter();
    for i in free {
        match fresh.next() {
            Some(vm) => {
                chosen.insert(i, vm.name.clone());
            }
            None => waiting.push((i, "no VM of the NodePool is free for it yet".to_string())),
        }
    }
    waiting.sort();
    Ok((chosen, waiting))
}

/// Finds the workers' VMs (waiting up to the timeout for the NodePool to create
/// enough), records the choice and hotplugs each worker's missing disks.
pub async fn attach_workers(
    client: &Client,
    spec: &TenantStorage,
    workers: &[WorkerDisks],
    opts: &AttachOptions,
) -> Result<AttachOutcome> {
    let mut outcome = AttachOutcome::default();
    let Some(namespace) = workers.first().map(|w| w.namespace.clone()) else {
        return Ok(outcome);
    };
    let node_pool = spec.node_pool();
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &namespace);
    let recorded = recorded_vms(&pvcs, &namespace, workers).await?;
    let indices: Vec<u32> = workers.iter().map(|w| w.index).collect();
    let (chosen, waiting, vms) =
        wait_for_vms(client, &namespace, &node_pool, &indices, &recorded, opts).await?;
    for (i, why) in waiting {
        outcome.pending.push(Pending {
            object: format!("worker {i:02} of NodePool {node_pool} in {namespace}"),
            state: why,
        });
    }
    let site = Worker {
        client,
        namespace: &namespace,
        pvcs: &pvcs,
        gate: spec.spec.management.hotplug_gate,
    };
    for w in workers {
        let Some(vm_name) = chosen.get(&w.index) else {
            continue;
        };
        let vm = vms
            .iter()
            .find(|v| &v.name == vm_name)
            .ok_or_else(|| Error::State("chosen VM vanished from the listing".to_string()))?;
        outcome.assignments.push(site.attach(w, vm).await?);
    }
    Ok(outcome)
}

/// The VM each worker index was given before, from its claims' annotations.
async fn recorded_vms(
    pvcs: &Api<PersistentVolumeClaim>,
    namespace: &str,
    workers: &[WorkerDisks],
) -> Result<BTreeMap<u32, String>> {
    let mut recorded = BTreeMap::new();
    for w in workers {
        for d in &w.disks {
            let pvc = pvcs.get_opt(&d.claim).await.map_err(|e| {
                Error::kube(
                    format!("cannot read PersistentVolumeClaim {namespace}/{}", d.claim),
                    e,
                )
            })?;
            if let Some(vm) = pvc
                .as_ref()
                .and_then(|p| p.annotations().get(ATTACHED_VM_ANNOTATION))
            {
                recorded.insert(w.index, vm.clone());
                break;
            }
        }
    }
    Ok(recorded)
}

/// Chosen VMs per index, the indexes still waiting (and why), and the VMs seen:
/// polled until every index has a VM of the NodePool or the timeout passes.
async fn wait_for_vms(
    client: &Client,
    namespace: &str,
    node_pool: &str,
    indices: &[u32],
    recorded: &BTreeMap<u32, String>,
    opts: &AttachOptions,
) -> Result<(BTreeMap<u32, String>, Vec<(u32, String)>, Vec<VmInfo>)> {
    let deadline = Instant::now() + opts.wait.timeout;
    loop {
        let vms = discover_vms(client, namespace, node_pool).await?;
        let (chosen, waiting) = assign(&vms, indices, recorded, opts.adopt_replaced_vms)?;
        let for_nodepool = waiting
            .iter()
            .any(|(_, why)| why.starts_with("no VM of the NodePool"));
        if !for_nodepool || Instant::now() >= deadline {
            return Ok((chosen, waiting, vms));
        }
        tracing::info!(
            "waiting for NodePool {node_pool} to create VMs: {} of {} found",
            vms.len(),
            indices.len()
        );
        tokio::time::sleep(
            opts.wait
                .interval
                .min(deadline.saturating_duration_since(Instant::now())),
        )
        .await;
    }
}

/// What attaching one worker's disks needs.
struct Worker<'a> {
    client: &'a Client,
    namespace: &'a str,
    pvcs: &'a Api<PersistentVolumeClaim>,
    /// How the site hotplugs: the `addvolume` subresource, or a VM template edit.
    gate: HotplugGate,
}

impl Worker<'_> {
    /// Records the choice on the VM and the claims, then hotplugs the missing disks.
    async fn attach(&self, w: &WorkerDisks, vm: &VmInfo) -> Result<Assignment> {
        let (namespace, vm_name) = (self.namespace, &vm.name);
        // Refuse before recording anything if the VM holds another claim under one
        // of this worker's disk serials.
        for d in &w.disks {
            if let Some(claim) = vm.claims.get(&d.serial)
                && claim != &d.claim
            {
                return Err(Error::State(format!(
                    "VirtualMachine {namespace}/{vm_name} already has a disk with serial {} backed by claim {claim}, \
                     not {}; it belongs to another worker or was attached by hand",
                    d.serial, d.claim
                )));
            }
        }
        self.record(w, vm).await?;
        let mut a = Assignment {
            index: w.index,
            vm: vm_name.clone(),
            attached: Vec::new(),
            present: Vec::new(),
        };
        for d in &w.disks {
            if vm.holds_claim(&d.claim) {
                a.present.push(d.serial.clone());
                continue;
            }
            match self.gate {
                HotplugGate::HotplugVolumes => {
                    add_volume(self.client, namespace, vm_name, d).await?
                }
                HotplugGate::DeclarativeHotplugVolumes => {
                    add_to_template(self.client, namespace, vm_name, d).await?;
                }
            }
            a.attached.push(d.serial.clone());
        }
        Ok(a)
    }

    /// The worker index on the VM, the VM on each claim (bookkeeping manager).
    async fn record(&self, w: &WorkerDisks, vm: &VmInfo) -> Result<()> {
        let (namespace, vm_name) = (self.namespace, &vm.name);
        let bookkeeping = PatchParams {
            field_manager: Some(BOOKKEEPING_MANAGER.to_string()),
            ..Default::default()
        };
        if vm.index != Some(w.index) {
            let vm_api: Api<DynamicObject> =
                Api::namespaced_with(self.client.clone(), namespace, &VIRTUAL_MACHINE.resource());
            let patch = json!({"metadata": {"annotations": {WORKER_INDEX_ANNOTATION: w.index.to_string()}}});
            vm_api
                .patch(vm_name, &bookkeeping, &Patch::Merge(&patch))
                .await
                .map_err(|e| {
                    Error::kube(
                        format!(
                            "cannot record worker index {} on VirtualMachine {namespace}/{vm_name}",
                            w.index
                        ),
                        e,
                    )
                })?;
        }
        for d in &w.disks {
            let patch = json!({"metadata": {"annotations": {ATTACHED_VM_ANNOTATION: vm_name}}});
            self.pvcs
                .patch(&d.claim, &bookkeeping, &Patch::Merge(&patch))
                .await
                .map_err(|e| {
                    Error::kube(
                        format!(
                            "cannot record VM {vm_name} on PersistentVolumeClaim {namespace}/{}",
                            d.claim
                        ),
                        e,
                    )
                })?;
        }
        Ok(())
    }
}

/// The JSON patch that appends the disk and its hotpluggable volume to the VM
/// template: under KubeVirt's `DeclarativeHotplugVolumes` gate alone, KubeVirt
/// hotplugs what the template gains (kubevirt/user-guide docs/storage/
/// hotplug_volumes.md), and the `addvolume` subresource is not the way.
pub(crate) fn template_patch(d: &DiskAttachment) -> Value {
    let body = add_volume_body(d);
    json!([
        {"op": "add", "path": "/spec/template/spec/domain/devices/disks/-", "value": body["disk"]},
        {"op": "add", "path": "/spec/template/spec/volumes/-",
         "value": {"name": d.serial, "persistentVolumeClaim": body["volumeSource"]["persistentVolumeClaim"]}},
    ])
}

async fn add_to_template(
    client: &Client,
    namespace: &str,
    vm: &str,
    d: &DiskAttachment,
) -> Result<()> {
    let uri = format!("/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{vm}");
    let context = || {
        format!(
            "cannot add claim {} as disk {} to the template of VirtualMachine {namespace}/{vm} \
             (management.hotplugGate: declarative-hotplug-volumes)",
            d.claim, d.serial
        )
    };
    // A raw JSON patch (kube's typed one needs a feature this crate leaves off).
    let req = http::Request::patch(uri)
        .header(http::header::CONTENT_TYPE, "application/json-patch+json")
        .body(template_patch(d).to_string().into_bytes())
        .map_err(|e| Error::kube(context(), kube::Error::HttpError(e)))?;
    client
        .request_text(req)
        .await
        .map_err(|e| Error::kube(context(), e))?;
    tracing::info!(
        "added {} ({}) to the template of {namespace}/{vm}",
        d.serial,
        d.claim
    );
    Ok(())
}

/// The `addvolume` request body: the disk with its fixed serial and bus, backed by
/// the claim as a hotpluggable volume.
pub(crate) fn add_volume_body(d: &DiskAttachment) -> Value {
    json!({
        "name": d.serial,
        "disk": {"name": d.serial, "serial": d.serial, "disk": {"bus": d.bus}},
        "volumeSource": {"persistentVolumeClaim": {"claimName": d.claim, "hotpluggable": true}},
    })
}

async fn add_volume(client: &Client, namespace: &str, vm: &str, d: &DiskAttachment) -> Result<()> {
    let uri = format!(
        "/apis/subresources.kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{vm}/addvolume"
    );
    let context = || {
        format!(
            "cannot hotplug claim {} as disk {} into VirtualMachine {namespace}/{vm} \
             (is the HotplugVolumes feature gate on?)",
            d.claim, d.serial
        )
    };
    let body = add_volume_body(d).to_string().into_bytes();
    let req = http::Request::put(uri)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body)
        .map_err(|e| Error::kube(context(), kube::Error::HttpError(e)))?;
    client
        .request_text(req)
        .await
        .map_err(|e| Error::kube(context(), e))?;
    tracing::info!("attached {} ({}) to {namespace}/{vm}", d.serial, d.claim);
    Ok(())
}

/// The guest's name for the storage NIC, read from the running VMIs' status (needs
/// the guest agent): the interface on the network that uses the storage NAD. `None`
/// when no VMI reports it; an error when VMs disagree.
pub async fn discover_guest_interface(
    client: &Client,
    namespace: &str,
    node_pool: &str,
    nad: &str,
) -> Result<Option<String>> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &VIRTUAL_MACHINE_INSTANCE.resource(),
    );
    let list = list_all(&api, &ListParams::default()).await.map_err(|e| {
        Error::kube(
            format!("cannot list VirtualMachineInstances in {namespace}"),
            e,
        )
    })?;
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for vmi in &of_node_pool(list.items, node_pool) {
        if let Some(iface) = guest_interface_of(&vmi.data, nad) {
            found.entry(iface).or_default().push(vmi.name_any());
        }
    }
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.into_keys().next()),
        _ => Err(Error::State(format!(
            "worker VMs in {namespace} name the storage interface differently: {}",
            found
                .iter()
                .map(|(i, v)| format!("{i} on {}", v.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
        ))),
    }
}

/// What [`resolve_guest_interface`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestInterface {
    /// Nothing to resolve: not cloud-drive over iSCSI, or no storage network.
    NotNeeded,
    /// No VMI reports the interface (not running, or no guest agent): the spec's
    /// name stays.
    Unknown,
    /// The VMs use the spec's name.
    AsSpecified,
    /// The VMs name it differently; the spec now carries their name.
    Replaced {
        /// What the spec said.
        specified: String,
        /// What the VMs report, now in the spec.
        found: String,
    },
}

/// cloud-drive over iSCSI names the guest's storage NIC in `PURE_ISCSI_ALLOWED_IFACES`:
/// when the VMs run, ask them instead of trusting the spec's default, and put their
/// answer into `spec` before rendering. An error leaves `spec` unchanged.
pub async fn resolve_guest_interface(
    management: &Client,
    spec: &mut TenantStorage,
) -> Result<GuestInterface> {
    if !spec.spec.storage.mode.guest_reaches_array()
        || spec.spec.storage.protocol != Some(Protocol::Iscsi)
    {
        return Ok(GuestInterface::NotNeeded);
    }
    let node_pool = spec.node_pool();
    let ns = spec.hcp_namespace();
    let Some(net) = spec.spec.network.as_mut() else {
        return Ok(GuestInterface::NotNeeded);
    };
    Ok(
        match discover_guest_interface(management, &ns, &node_pool, &net.nad_name).await? {
            None => GuestInterface::Unknown,
            Some(found) if found == net.guest_interface => GuestInterface::AsSpecified,
            Some(found) => GuestInterface::Replaced {
                specified: std::mem::replace(&mut net.guest_interface, found.clone()),
                found,
            },
        },
    )
}

/// The guest interface name of the network attached to `nad` in one VMI's JSON.
pub(crate) fn guest_interface_of(vmi: &Value, nad: &str) -> Option<String> {
    let networks = vmi.pointer("/spec/networks")?.as_array()?;
    let net = networks.iter().find(|n| {
        n.pointer("/multus/networkName")
            .and_then(Value::as_str)
            .is_some_and(|m| m == nad || m.rsplit_once('/').is_some_and(|(_, n)| n == nad))
    })?;
    let net_name = net.get("name")?.as_str()?;
    vmi.pointer("/status/interfaces")?
        .as_array()?
        .iter()
        .find(|i| i.get("name").and_then(Value::as_str) == Some(net_name))?
        .get("interfaceName")?
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declarative_patch_appends_the_same_disk_as_addvolume() {
        let d = DiskAttachment {
            serial: "pxdata0".into(),
            claim: "t-w00-data0".into(),
            bus: DiskBus::Virtio,
        };
        let ops = template_patch(&d);
        let body = add_volume_body(&d);
        assert_eq!(ops[0]["path"], "/spec/template/spec/domain/devices/disks/-");
        assert_eq!(ops[0]["value"], body["disk"]);
        assert_eq!(ops[1]["path"], "/spec/template/spec/volumes/-");
        assert_eq!(ops[1]["value"]["name"], "pxdata0");
        assert_eq!(
            ops[1]["value"]["persistentVolumeClaim"]["claimName"],
            "t-w00-data0"
        );
        assert_eq!(
            ops[1]["value"]["persistentVolumeClaim"]["hotpluggable"],
            true
        );
    }

    fn vm(name: &str, created: &str, index: Option<u32>) -> VmInfo {
        VmInfo {
            name: name.into(),
            created: created.into(),
            index,
            claims: BTreeMap::new(),
        }
    }

    #[test]
    fn new_vms_take_indices_oldest_first() {
        let vms = [
            vm("np-zz", "2026-01-01T00:00:00Z", None),
            vm("np-aa", "2026-01-02T00:00:00Z", None),
        ];
        let (chosen, waiting) = assign(&vms, &[0, 1], &BTreeMap::new(), false).unwrap();
        assert_eq!(chosen[&0], "np-zz");
        assert_eq!(chosen[&1], "np-aa");
        assert!(waiting.is_empty());
    }

    #[test]
    fn recorded_indices_are_kept_and_stable() {
        let vms = [vm("np-a", "1", Some(1)), vm("np-b", "2", None)];
        let (chosen, _) = assign(&vms, &[0, 1], &BTreeMap::new(), false).unwrap();
        assert_eq!(chosen[&1], "np-a");
        assert_eq!(chosen[&0], "np-b");
    }

    #[test]
    fn replaced_vm_gets_old_disks_only_when_adopting() {
        let vms = [vm("np-a", "1", Some(0)), vm("np-new", "3", None)];
        let recorded = BTreeMap::from([(1, "np-gone".to_string())]);
        let (chosen, waiting) = assign(&vms, &[0, 1], &recorded, false).unwrap();
        assert_eq!(chosen.get(&1), None);
        assert_eq!(waiting.len(), 1);
        assert!(waiting[0].1.contains("np-gone"), "{waiting:?}");
        let (chosen, waiting) = assign(&vms, &[0, 1], &recorded, true).unwrap();
        assert_eq!(chosen[&1], "np-new");
        assert!(waiting.is_empty());
    }

    #[test]
    fn duplicate_recorded_index_is_refused() {
        let vms = [vm("np-a", "1", Some(0)), vm("np-b", "2", Some(0))];
        let err = assign(&vms, &[0, 1], &BTreeMap::new(), false).unwrap_err();
        assert!(
            err.to_string().contains("both carry worker index 0"),
            "{err}"
        );
    }

    #[test]
    fn too_few_vms_leave_workers_waiting() {
        let vms = [vm("np-a", "1", None)];
        let (chosen, waiting) = assign(&vms, &[0, 1, 2], &BTreeMap::new(), false).unwrap();
        assert_eq!(chosen.len(), 1);
        assert_eq!(waiting.iter().map(|w| w.0).collect::<Vec<_>>(), [1, 2]);
    }

    fn obj(name: &str, pool: Option<&str>) -> DynamicObject {
        let mut o = DynamicObject::new(name, &VIRTUAL_MACHINE.resource());
        if let Some(p) = pool {
            o.metadata.labels = Some([(NODE_POOL_LABEL.to_string(), p.to_string())].into());
        }
        o
    }

    #[test]
    fn node_pool_by_label_when_present_else_by_prefix() {
        let names = |v: Vec<DynamicObject>| v.iter().map(|o| o.name_any()).collect::<Vec<_>>();
        let unlabelled = vec![
            obj("np-a", None),
            obj("np-gpu-b", None),
            obj("other-c", None),
        ];
        assert_eq!(names(of_node_pool(unlabelled, "np")), ["np-a", "np-gpu-b"]);
        let labelled = vec![obj("np-a", Some("np")), obj("np-gpu-b", Some("np-gpu"))];
        assert_eq!(names(of_node_pool(labelled, "np")), ["np-a"]);
    }

    #[test]
    fn a_disk_attached_under_the_claims_name_is_present() {
        let mut v = vm("np-a", "t", Some(0));
        v.claims.insert("t-w00-data0".into(), "t-w00-data0".into());
        assert!(v.holds_claim("t-w00-data0"));
        assert!(!v.holds_claim("t-w00-meta"));
    }

    #[test]
    fn placement_reads_the_node_of_each_pool_vmi() {
        let mut a = obj("np-a", Some("np"));
        a.data = serde_json::json!({"status": {"nodeName": "n1"}});
        let b = obj("np-b", Some("np"));
        let other = obj("x-c", Some("x"));
        let p = placement_of(vec![a, b, other], "np");
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].vm.as_str(), p[0].node.as_deref()),
            ("np-a", Some("n1"))
        );
        assert_eq!((p[1].vm.as_str(), p[1].node.as_deref()), ("np-b", None));
    }

    fn vm_patch(bus: Option<&str>) -> Manifest {
        let mut disk = json!({"name": "pxdata0", "serial": "pxdata0"});
        if let Some(b) = bus {
            disk["disk"] = json!({"bus": b});
        }
        Manifest {
            cluster: px_topology::Cluster::Management,
            order: 90,
            file_name: "90-vm-np-w02.yaml".into(),
            kind: "VirtualMachine".into(),
            name: "np-w02".into(),
            namespace: Some("clusters-t".into()),
            body: json!([
                {"op": "add", "path": "/spec/template/spec/domain/devices/disks/-", "value": disk},
                {"op": "add", "path": "/spec/template/spec/volumes/-",
                 "value": {"name": "pxdata0", "persistentVolumeClaim": {"claimName": "t-w02-data0"}}},
            ]),
            secret: false,
            purpose: Vec::new(),
            form: px_topology::Form::JsonPatch {
                target: "VirtualMachine np-w02".into(),
            },
        }
    }

    #[test]
    fn disk_bus_is_the_spec_type() {
        let w = worker_disks(&[&vm_patch(Some("virtio"))]).unwrap();
        assert_eq!(w[0].index, 2);
        assert_eq!(w[0].disks[0].bus, DiskBus::Virtio);
        assert_eq!(w[0].disks[0].claim, "t-w02-data0");
        assert_eq!(
            add_volume_body(&w[0].disks[0])["disk"]["disk"]["bus"],
            "virtio"
        );
        let w = worker_disks(&[&vm_patch(None)]).unwrap();
        assert_eq!(w[0].disks[0].bus, DiskBus::Scsi);
        let e = worker_disks(&[&vm_patch(Some("ide"))]).unwrap_err();
        assert!(matches!(e, Error::Manifest(_)), "{e:?}");
        assert!(e.to_string().contains("unknown bus"), "{e}");
    }

    #[test]
    fn guest_interface_from_vmi_status() {
        let vmi = json!({
            "spec": {"networks": [
                {"name": "default", "pod": {}},
                {"name": "storage", "multus": {"networkName": "clusters-t/storage-network"}}]},
            "status": {"interfaces": [
                {"name": "default", "interfaceName": "enp1s0"},
                {"name": "storage", "interfaceName": "enp7s0"}]}
        });
        assert_eq!(
            guest_interface_of(&vmi, "storage-network").as_deref(),
            Some("enp7s0")
        );
        assert_eq!(guest_interface_of(&vmi, "other"), None);
    }
}
