//! Rules over Kubernetes manifests an admin already has (any kind pxfa renders).
//!
//! Rules that relate objects (a NodePool's root StorageClass, a StorageCluster's
//! namespace and its secret) look across every document given in one call, so lint a
//! whole directory at once to get them.

use std::collections::BTreeSet;

use serde_json::Value;

use super::finding::{Finding, Severity};
use super::manifest_doc::{kind, name, namespace, object, of_kind, quantity, str_at};
use super::network_rules::{
    bridge_conversions, metallb_pools, nad_namespaces, nncp_addresses, nncp_vlan_ports,
};
use super::nodiscard::{OCP_VERSION_ANNOTATION, VIRT_VERSION_ANNOTATION, nodiscard_reason};
use super::spec_rules::{PX_STOREV2_MIN_CORES, PX_STOREV2_MIN_MEMORY, PX_STOREV2_MIN_ROOT};
use crate::spec::{DEFAULT_PORTWORX_VERSION, Version};

/// The Portworx CSI provisioner.
pub(crate) const PORTWORX_PROVISIONER: &str = "pxd.portworx.com";
/// The KubeVirt CSI provisioner (guest side of kubevirt-csi).
pub(crate) const KUBEVIRT_CSI_PROVISIONER: &str = "csi.kubevirt.io";
/// StorageClass names that hold VM root disks even when no NodePool names them.
const KNOWN_ROOT_DISK_CLASSES: [&str; 2] = ["px-rwx-block-kubevirt", "pxfa-vm-rootdisk"];

/// The longest disk serial QEMU accepts: a longer one makes it refuse the disk and
/// KubeVirt retry without end (kubevirt/kubevirt PR 18734).
pub(crate) const MAX_DISK_SERIAL: usize = 36;
/// virtio-blk exposes at most 20 serial characters, so a longer serial would not
/// be the `/dev/disk/by-id/virtio-<serial>` name the StorageCluster lists.
pub(crate) const MAX_VIRTIO_SERIAL: usize = 20;

/// PXFA030: a VirtualMachine disk (in an object, or added by a JSON patch) whose
/// serial QEMU refuses.
fn disk_serials(docs: &[Value], out: &mut Vec<Finding>) {
    let mut disks: Vec<(String, &Value)> = Vec::new();
    for d in docs {
        if let Some(ops) = d.as_array() {
            for op in ops {
                let path = op.get("path").and_then(Value::as_str).unwrap_or_default();
                if path.contains("/domain/devices/disks")
                    && let Some(v) = op.get("value")
                {
                    disks.push(("a VirtualMachine patch".to_string(), v));
                }
            }
        } else if kind(d) == "VirtualMachine"
            && let Some(list) = d
                .pointer("/spec/template/spec/domain/devices/disks")
                .and_then(Value::as_array)
        {
            disks.extend(list.iter().map(|v| (object(d), v)));
        }
    }
    for (obj, disk) in disks {
        let Some(serial) = disk.get("serial").and_then(Value::as_str) else {
            continue;
        };
        if serial.chars().count() > MAX_DISK_SERIAL {
            out.push(Finding::new(
                "PXFA030",
                Severity::Error,
                obj,
                format!(
                    "disk serial {serial:?} is longer than {MAX_DISK_SERIAL} characters: QEMU refuses \
                     the disk and KubeVirt retries without end (kubevirt/kubevirt PR 18734)"
                ),
            ));
        }
    }
}

/// Every manifest rule that fires on `docs`.
pub fn lint_manifests(docs: &[Value]) -> Vec<Finding> {
    let mut out = Vec::new();
    disk_serials(docs, &mut out);
    let docs = flatten_lists(docs);
    // Without a StorageCluster in the set we cannot tell whether Portworx runs in the
    // tenant (kubevirt-csi tenants have none), so PX-StoreV2 minimums only warn.
    let px_in_set = of_kind(&docs, "StorageCluster").next().is_some();
    for d in &docs {
        match kind(d) {
            "NodePool" => node_pool(d, px_in_set, &mut out),
            "StorageCluster" => storage_cluster(d, &docs, &mut out),
            "MultiClusterEngine" => mce(d, &mut out),
            _ => {}
        }
    }
    repl_vs_nodes(&docs, &mut out);
    nodiscard(&docs, &mut out);
    pure_secret(&docs, &mut out);
    nncp_addresses(&docs, &mut out);
    rwx_on_kubevirt_csi(&docs, &mut out);
    nad_namespaces(&docs, &mut out);
    nncp_vlan_ports(&docs, &mut out);
    operator_owned_classes(&docs, &mut out);
    metallb_pools(&docs, &mut out);
    bridge_conversions(&docs, &mut out);
    kubevirt_csi_virtio(&docs, &mut out);
    out
}

/// `kind: List` documents hold their objects in `items`.
fn flatten_lists(docs: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for d in docs {
        if kind(d).ends_with("List")
            && let Some(items) = d.get("items").and_then(Value::as_array)
        {
            out.extend(flatten_lists(items));
            continue;
        }
        if d.is_object() {
            out.push(d.clone());
        }
    }
    out
}

fn node_pool(d: &Value, px_in_set: bool, out: &mut Vec<Finding>) {
    let obj = object(d);
    management(d, &obj, out);
    let Some(kv) = d.pointer("/spec/platform/kubevirt") else {
        return;
    };
    root_volume(kv, &obj, out);
    // Portworx in this set of documents makes its minimums errors, else warnings.
    let px_severity = if px_in_set {
        Severity::Error
    } else {
        Severity::Warning
    };
    compute(kv, &obj, px_severity, out);
    network(kv, &obj, out);
}

/// PXFA002, PXFA003: machine management that would recreate the storage nodes.
fn management(d: &Value, obj: &str, out: &mut Vec<Finding>) {
    match str_at(d, "/spec/management/upgradeType") {
        Some("InPlace") => {}
        other => out.push(Finding::new(
            "PXFA002",
            Severity::Error,
            obj,
            format!(
                "spec.management.upgradeType is {}; Portworx needs InPlace (Replace recreates \
                 the worker VMs and with them the storage nodes). upgradeType is immutable: \
                 recreate the NodePool with upgradeType: InPlace",
                other
                    .map(|s| format!("{s:?}"))
                    .unwrap_or_else(|| "unset (Replace)".into())
            ),
        )),
    }
    if d.pointer("/spec/management/autoRepair")
        .and_then(Value::as_bool)
        == Some(true)
    {
        out.push(Finding::new(
            "PXFA003",
            Severity::Error,
            obj,
            "spec.management.autoRepair is true; machine recreation destroys Portworx storage \
             nodes. Set autoRepair: false",
        ));
    }
}

/// PXFA004, PXFA007: the worker VMs' root volume (live migration, PX-StoreV2 size).
fn root_volume(kv: &Value, obj: &str, out: &mut Vec<Finding>) {
    let p = kv.pointer("/rootVolume/persistent");
    let modes = p
        .and_then(|p| p.get("accessModes"))
        .and_then(Value::as_array);
    let mode = p.and_then(|p| p.get("volumeMode")).and_then(Value::as_str);
    let rwx = modes.is_some_and(|m| m.iter().any(|m| m.as_str() == Some("ReadWriteMany")));
    if modes.is_none() && mode.is_none() {
        out.push(Finding::new(
            "PXFA004",
            Severity::Warning,
            obj,
            "spec.platform.kubevirt.rootVolume.persistent sets neither accessModes nor \
             volumeMode, so the class's StorageProfile decides; the worker VMs need \
             [ReadWriteMany] + Block to live-migrate. Set both explicitly",
        ));
    } else if !(rwx && mode == Some("Block")) {
        out.push(Finding::new(
            "PXFA004",
            Severity::Error,
            obj,
            "spec.platform.kubevirt.rootVolume.persistent must have accessModes \
             [ReadWriteMany] and volumeMode: Block, or the worker VMs cannot live-migrate \
             and node drains stall",
        ));
    }
    // HyperShift's defaults when unset: 32Gi root volume, 2 cores.
    let root = p
        .and_then(|p| p.get("size"))
        .and_then(quantity)
        .unwrap_or(32 * flasharray::size::GIB);
    if root < PX_STOREV2_MIN_ROOT.as_u64() {
        out.push(Finding::new(
            "PXFA007",
            Severity::Warning,
            obj,
            format!(
                "root volume {} (HyperShift's default is 32Gi) is below the 128 GiB PX-StoreV2 \
                 needs when /var and /opt share the root disk, if Portworx runs in this tenant; \
                 set rootVolume.persistent.size to 128Gi",
                flasharray::Size::bytes(root)
            ),
        ));
    }
}

/// PXFA005, PXFA006: the worker VMs' cores and memory against PX-StoreV2's minimums.
fn compute(kv: &Value, obj: &str, px_severity: Severity, out: &mut Vec<Finding>) {
    let cores = kv
        .pointer("/compute/cores")
        .and_then(Value::as_u64)
        .unwrap_or(2);
    if cores < u64::from(PX_STOREV2_MIN_CORES) {
        out.push(Finding::new(
            "PXFA005",
            px_severity,
            obj,
            format!(
                "compute.cores {cores} (HyperShift's default is 2) is below the PX-StoreV2 \
                 minimum of 8, if Portworx runs in this tenant; set it to at least 8"
            ),
        ));
    }
    if let Some(m) = kv.pointer("/compute/memory").and_then(quantity)
        && m < PX_STOREV2_MIN_MEMORY.as_u64()
    {
        out.push(Finding::new(
            "PXFA006",
            px_severity,
            obj,
            format!(
                "compute.memory {} is below the PX-StoreV2 minimum of 8 GiB (if Portworx runs \
                 in this tenant); raise it",
                flasharray::Size::bytes(m)
            ),
        ));
    }
}

/// PXFA010: VMs with no network at all.
fn network(kv: &Value, obj: &str, out: &mut Vec<Finding>) {
    let additional = kv
        .get("additionalNetworks")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if kv.get("attachDefaultNetwork").and_then(Value::as_bool) == Some(false) && additional == 0 {
        out.push(Finding::new(
            "PXFA010",
            Severity::Error,
            obj,
            "attachDefaultNetwork is false but no additionalNetworks are set: the VMs would \
             have no network. Add the storage network to additionalNetworks or attach the \
             default network",
        ));
    }
}

/// How many NICs the NodePool's VMs get.
fn guest_nics(np: &Value) -> usize {
    let kv = np.pointer("/spec/platform/kubevirt");
    let additional = kv
        .and_then(|k| k.get("additionalNetworks"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let default = kv
        .and_then(|k| k.get("attachDefaultNetwork"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    additional + usize::from(default)
}

fn env_value<'a>(sc: &'a Value, var: &str) -> Option<&'a str> {
    sc.pointer("/spec/env")?
        .as_array()?
        .iter()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(var))
        .map(|e| e.get("value").and_then(Value::as_str).unwrap_or(""))
}

/// The Portworx version of a StorageCluster: `spec.version`, else the image tag.
fn storage_cluster_version(sc: &Value) -> Option<Result<Version, String>> {
    if let Some(v) = str_at(sc, "/spec/version") {
        return Some(v.parse());
    }
    let image = str_at(sc, "/spec/image")?;
    let last = image.rsplit('/').next().unwrap_or(image);
    let (_, tag) = last.split_once(':')?;
    Some(tag.parse())
}

fn storage_cluster(sc: &Value, docs: &[Value], out: &mut Vec<Finding>) {
    let obj = object(sc);
    match storage_cluster_version(sc) {
        Some(Ok(v)) if v.at_least(&DEFAULT_PORTWORX_VERSION) == Some(true) => {}
        Some(Ok(v)) => out.push(Finding::new(
            "PXFA001",
            Severity::Error,
            &obj,
            format!(
                "Portworx {v} is not supported with hosted control planes; use 3.6.2 or later \
                 on the management cluster and in every hosted cluster"
            ),
        )),
        Some(Err(e)) => out.push(Finding::new(
            "PXFA001",
            Severity::Warning,
            &obj,
            format!("cannot tell the Portworx version ({e}); hosted clusters need 3.6.2 or later"),
        )),
        None => {}
    }
    let spec = sc.get("spec");
    let has = |k: &str| spec.and_then(|s| s.get(k)).is_some_and(|v| !v.is_null());
    if has("storage") && has("cloudStorage") {
        out.push(Finding::new(
            "PXFA012",
            Severity::Error,
            &obj,
            "spec.storage (local drives) and spec.cloudStorage (cloud drives) are both set; \
             Portworx uses one drive source. Keep storage for direct-access, cloudStorage for \
             cloud-drive",
        ));
    }
    for field in [
        "maxStorageNodesPerZone",
        "maxStorageNodes",
        "maxStorageNodesPerZonePerNodeGroup",
    ] {
        if spec
            .and_then(|s| s.get("cloudStorage"))
            .and_then(|c| c.get(field))
            .is_some_and(|v| !v.is_null())
        {
            out.push(Finding::new(
                "PXFA013",
                Severity::Warning,
                &obj,
                format!(
                    "spec.cloudStorage.{field} makes some workers storageless; pxfa sizes pools \
                     and replication for every worker being a storage node. Remove {field}"
                ),
            ));
        }
    }
    let iscsi =
        env_value(sc, "PURE_FLASHARRAY_SAN_TYPE").is_some_and(|v| v.eq_ignore_ascii_case("ISCSI"));
    if iscsi && env_value(sc, "PURE_ISCSI_ALLOWED_IFACES").is_none() {
        let multi = of_kind(docs, "NodePool").find(|np| guest_nics(np) > 1);
        if let Some(np) = multi {
            out.push(Finding::new(
                "PXFA011",
                Severity::Warning,
                &obj,
                format!(
                    "PURE_FLASHARRAY_SAN_TYPE=ISCSI with {} guest NICs ({}) and no \
                     PURE_ISCSI_ALLOWED_IFACES: iSCSI sessions may use the pod network. Set \
                     PURE_ISCSI_ALLOWED_IFACES to the storage interface (e.g. enp2s0)",
                    guest_nics(np),
                    object(np)
                ),
            ));
        }
    }
}

fn mce(d: &Value, out: &mut Vec<Finding>) {
    let comps = d
        .pointer("/spec/overrides/components")
        .and_then(Value::as_array);
    for c in comps.into_iter().flatten() {
        if c.get("name").and_then(Value::as_str) == Some("hypershift-preview") {
            out.push(Finding::new(
                "PXFA016",
                Severity::Error,
                object(d),
                "spec.overrides.components names hypershift-preview, folded into hypershift \
                 in MCE 2.3; use name: hypershift (enabled by default)",
            ));
        }
    }
}

/// A Portworx StorageClass's `repl` parameter.
fn repl(sc: &Value) -> Option<u64> {
    match sc.pointer("/parameters/repl")? {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

fn is_portworx_class(sc: &Value) -> bool {
    str_at(sc, "/provisioner") == Some(PORTWORX_PROVISIONER)
}

fn repl_vs_nodes(docs: &[Value], out: &mut Vec<Finding>) {
    // Tenant-side classes only make sense against the tenant's own node count: with
    // exactly one NodePool in the set, its replicas are the storage nodes.
    let pools: Vec<&Value> = of_kind(docs, "NodePool").collect();
    let [np] = pools.as_slice() else { return };
    let Some(nodes) = np.pointer("/spec/replicas").and_then(Value::as_u64) else {
        return;
    };
    let management = management_classes(docs);
    for sc in of_kind(docs, "StorageClass")
        .filter(|s| is_portworx_class(s) && !management.contains(name(s)))
    {
        if let Some(r) = repl(sc)
            && r > nodes
        {
            out.push(Finding::new(
                "PXFA008",
                Severity::Error,
                object(sc),
                format!(
                    "repl {r} needs {r} storage nodes but {} has {nodes} replicas; lower repl \
                     or add workers",
                    object(np)
                ),
            ));
        }
    }
}

/// Portworx StorageClasses that hold VM disks: VM root-disk classes (named by a
/// NodePool, a known root class name, or annotated as the default virt class) and
/// kubevirt-csi infra classes.
fn vm_disk_classes(docs: &[Value]) -> BTreeSet<&str> {
    let mut set: BTreeSet<&str> = KNOWN_ROOT_DISK_CLASSES.into_iter().collect();
    set.extend(of_kind(docs, "NodePool").filter_map(|np| {
        str_at(
            np,
            "/spec/platform/kubevirt/rootVolume/persistent/storageClass",
        )
    }));
    for sc in of_kind(docs, "StorageClass") {
        if str_at(sc, "/provisioner") == Some(KUBEVIRT_CSI_PROVISIONER)
            && let Some(infra) = str_at(sc, "/parameters/infraStorageClassName")
        {
            set.insert(infra);
        }
        if is_virt_default(sc) {
            set.insert(name(sc));
        }
    }
    set
}

/// StorageClasses served by the management cluster's Portworx, whose storage nodes
/// are not the NodePool's VMs: the VM disk classes and FADA (`backend: pure_block`)
/// classes.
fn management_classes(docs: &[Value]) -> BTreeSet<&str> {
    let mut set = vm_disk_classes(docs);
    set.extend(
        of_kind(docs, "StorageClass")
            .filter(|sc| str_at(sc, "/parameters/backend") == Some("pure_block"))
            .map(name),
    );
    set
}

fn is_virt_default(sc: &Value) -> bool {
    str_at(
        sc,
        "/metadata/annotations/storageclass.kubevirt.io~1is-default-virt-class",
    ) == Some("true")
}

fn hyperconverged_version(docs: &[Value]) -> Option<Version> {
    of_kind(docs, "HyperConverged").find_map(|hc| {
        hc.pointer("/status/versions")?
            .as_array()?
            .iter()
            .find(|v| v.get("name").and_then(Value::as_str) == Some("operator"))?
            .get("version")?
            .as_str()?
            .parse()
            .ok()
    })
}

/// The management cluster's OpenShift version from a ClusterVersion: the desired
/// version, else the newest completed one in the history.
fn cluster_version(docs: &[Value]) -> Option<Version> {
    of_kind(docs, "ClusterVersion").find_map(|cv| {
        str_at(cv, "/status/desired/version")
            .and_then(|v| v.parse().ok())
            .or_else(|| {
                cv.pointer("/status/history")?
                    .as_array()?
                    .iter()
                    .find(|h| h.get("state").and_then(Value::as_str) == Some("Completed"))?
                    .get("version")?
                    .as_str()?
                    .parse()
                    .ok()
            })
    })
}

/// A version pxfa recorded on a class it rendered (`unknown` reads as absent).
fn annotated_version(sc: &Value, key: &str) -> Option<Version> {
    sc.get("metadata")?
        .get("annotations")?
        .get(key)?
        .as_str()?
        .parse()
        .ok()
}

fn nodiscard(docs: &[Value], out: &mut Vec<Finding>) {
    let vm_classes = vm_disk_classes(docs);
    // The discard problems are on the nodes that run the VM disks: the management
    // cluster's versions count, from its HyperConverged and ClusterVersion when
    // given, else as pxfa recorded them on the class.
    let virt_file = hyperconverged_version(docs);
    let ocp_file = cluster_version(docs);
    for sc in of_kind(docs, "StorageClass").filter(|s| is_portworx_class(s)) {
        let n = name(sc);
        if !vm_classes.contains(n) {
            continue;
        }
        let set = match sc.pointer("/parameters/nodiscard") {
            Some(Value::String(s)) => s == "true",
            Some(Value::Bool(b)) => *b,
            _ => false,
        };
        if set {
            continue;
        }
        let virt = virt_file.or_else(|| annotated_version(sc, VIRT_VERSION_ANNOTATION));
        let ocp = ocp_file.or_else(|| annotated_version(sc, OCP_VERSION_ANNOTATION));
        let Some(reason) = nodiscard_reason(virt, ocp) else {
            continue;
        };
        let severity = if virt.is_none() || ocp.is_none() {
            Severity::Warning
        } else {
            Severity::Error
        };
        out.push(Finding::new(
            "PXFA009",
            severity,
            object(sc),
            format!(
                "StorageClass {n} holds VM disks and lacks parameters.nodiscard: \"true\", \
                 needed because {reason}; add it (or upgrade, and lint the management cluster's \
                 HyperConverged and ClusterVersion with it so the versions can be checked)"
            ),
        ));
    }
}

fn pure_secret(docs: &[Value], out: &mut Vec<Finding>) {
    let px_namespaces: BTreeSet<&str> = of_kind(docs, "StorageCluster")
        .filter_map(namespace)
        .collect();
    for s in of_kind(docs, "Secret") {
        let holds_pure_json = ["data", "stringData"]
            .iter()
            .filter_map(|k| s.get(*k).and_then(Value::as_object))
            .any(|m| m.contains_key("pure.json"));
        let keys: Vec<String> = ["data", "stringData"]
            .iter()
            .filter_map(|k| s.get(*k).and_then(Value::as_object))
            .flat_map(|m| m.keys().cloned())
            .collect();
        let n = name(s);
        if holds_pure_json && n != "px-pure-secret" {
            out.push(Finding::new(
                "PXFA014",
                Severity::Error,
                object(s),
                format!(
                    "this Secret holds pure.json but is named {n:?}; Portworx only reads a \
                     Secret named px-pure-secret. Rename it"
                ),
            ));
        }
        if n == "px-pure-secret" && !holds_pure_json {
            out.push(Finding::new(
                "PXFA014",
                Severity::Error,
                object(s),
                format!(
                    "px-pure-secret must hold its configuration under the key pure.json (found \
                     keys: {}); recreate it with --from-file=pure.json=<file>",
                    if keys.is_empty() {
                        "none".to_string()
                    } else {
                        keys.join(", ")
                    }
                ),
            ));
        }
        if n == "px-pure-secret"
            && !px_namespaces.is_empty()
            && !namespace(s).is_some_and(|ns| px_namespaces.contains(ns))
        {
            out.push(Finding::new(
                "PXFA014",
                Severity::Error,
                object(s),
                format!(
                    "px-pure-secret is in namespace {:?} but the StorageCluster is in {}; the \
                     secret must be in the StorageCluster's namespace",
                    namespace(s).unwrap_or("(none)"),
                    px_namespaces.iter().copied().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
}

fn rwx_on_kubevirt_csi(docs: &[Value], out: &mut Vec<Finding>) {
    let kv_classes: BTreeSet<&str> = of_kind(docs, "StorageClass")
        .filter(|s| str_at(s, "/provisioner") == Some(KUBEVIRT_CSI_PROVISIONER))
        .map(name)
        .collect();
    for pvc in of_kind(docs, "PersistentVolumeClaim") {
        let Some(class) = str_at(pvc, "/spec/storageClassName") else {
            continue;
        };
        let rwx = pvc
            .pointer("/spec/accessModes")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(|m| m.as_str() == Some("ReadWriteMany")));
        if !rwx || !kv_classes.contains(class) {
            continue;
        }
        let finding = if str_at(pvc, "/spec/volumeMode") == Some("Block") {
            Finding::new(
                "PXFA017",
                Severity::Warning,
                object(pvc),
                format!(
                    "ReadWriteMany Block on {class}, a kubevirt-csi class: HyperShift serves it \
                     from an RWX Block infra class, but Portworx supports only ReadWriteOnce for \
                     hosted clusters on this option; use cloud-drive or direct-access for \
                     supported RWX"
                ),
            )
        } else {
            Finding::new(
                "PXFA017",
                Severity::Error,
                object(pvc),
                format!(
                    "ReadWriteMany Filesystem on {class}, a kubevirt-csi class: each guest PVC is \
                     a disk hot-plugged into VMs and no file system is shared between them, so it \
                     cannot bind. Ask for ReadWriteOnce (or Block) or use a Portworx option"
                ),
            )
        };
        out.push(finding);
    }
}

/// PXFA036 in manifests: a kubevirt-csi class on the virtio bus. Each guest claim is
/// a disk hotplugged into a worker VM: virtio-blk keeps only 20 characters of the
/// serial, so kubevirt-csi cannot find the device and the mount fails
/// (kubevirt/csi-driver#368), and each virtio disk takes a PCIe port, the fifth
/// failing "No more available PCI slots" (kubevirt/kubevirt#14180). [L]
fn kubevirt_csi_virtio(docs: &[Value], out: &mut Vec<Finding>) {
    let virtio = of_kind(docs, "StorageClass").filter(|s| {
        str_at(s, "/provisioner") == Some(KUBEVIRT_CSI_PROVISIONER)
            && str_at(s, "/parameters/bus") == Some("virtio")
    });
    for sc in virtio {
        out.push(Finding::new(
            "PXFA036",
            Severity::Warning,
            object(sc),
            "kubevirt-csi class on the virtio bus: virtio keeps 20 characters of a disk serial, so the \
             driver cannot find the hotplugged disk and the mount fails (kubevirt/csi-driver#368), and \
             each virtio disk takes a PCIe port, the fifth failing \"No more available PCI slots\" \
             (kubevirt/kubevirt#14180) [L]. Use bus: scsi (HyperShift's default)",
        ));
    }
}

/// The classes the Portworx operator creates and owns when OpenShift Virtualization
/// is present (PX >= 3.4, operator >= 25.5).
const OPERATOR_OWNED_CLASSES: [&str; 3] = [
    "px-rwx-block-kubevirt",
    "px-rwx-file-kubevirt",
    "px-cdi-scratch",
];

fn operator_owned_classes(docs: &[Value], out: &mut Vec<Finding>) {
    for sc in of_kind(docs, "StorageClass").filter(|s| OPERATOR_OWNED_CLASSES.contains(&name(s))) {
        out.push(Finding::new(
            "PXFA024",
            Severity::Warning,
            object(sc),
            format!(
                "{} is created and owned by the Portworx operator when OpenShift Virtualization \
                 is installed; a hand-made copy is overwritten or fights the operator. Use the \
                 operator's class, or your own name (pxfa renders pxfa-vm-rootdisk) and set \
                 spec.csi.kubeVirtStorageClasses in the StorageCluster",
                name(sc)
            ),
        ));
    }
}
