//! One view of a tenant across the cluster layers: the management claims, the disks
//! in the worker VMs, the tenant's StorageCluster and StorageNodes. The array layer
//! comes from the plan (`pxfa status` adds it); this module reads clusters only and
//! never changes anything.

use crate::bounds::list_all;
use kube::Client;
use kube::ResourceExt;
use kube::api::{Api, DynamicObject, ListParams};
use px_topology::{Cluster, Form, Manifest, TenantStorage};
use schemars::JsonSchema;
use serde::Serialize;

use crate::discovery::{Resources, object_path, status_code};
use crate::error::Result;
use crate::kinds::{PVC, STORAGE_CLUSTER, STORAGE_NODE};
use crate::readiness::{WaitTarget, check, readiness, to_value};
use crate::vms::{self, discover_vms};

mod runbook_checks;

pub use runbook_checks::{BY_LAYERS, runbook_checks};

/// One object's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Item {
    /// `Kind namespace/name`, or a worker.
    pub object: String,
    /// Its state in the cluster's words.
    pub state: String,
    /// Whether that is the state pxfa wants.
    pub ok: bool,
    /// What is wrong and what to do, when not ok; `null` when ok.
    pub problem: Option<String>,
}

/// One layer (array, management claims, VM disks, tenant Portworx).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Layer {
    /// The layer's name.
    pub name: String,
    /// The layer's objects, each with its state and whether pxfa wants it so.
    pub items: Vec<Item>,
}

/// What `pxfa status` found, layer by layer; healthy when every item is ok.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StatusReport {
    /// Layers from the array up to the tenant.
    pub layers: Vec<Layer>,
}

impl StatusReport {
    /// True when every item is as wanted.
    pub fn healthy(&self) -> bool {
        self.layers.iter().all(|l| l.items.iter().all(|i| i.ok))
    }
}

/// `apiVersion` of the status document.
pub const STATUS_API_VERSION: &str = "pxfa.io/v1alpha1";
/// `kind` of the status document.
pub const STATUS_KIND: &str = "Status";

/// What `pxfa status -o json|yaml` prints and `docs/status.schema.json` describes:
/// every field always present; fields are only ever added within one `apiVersion`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusDocument<'a> {
    /// Always `pxfa.io/v1alpha1`.
    #[schemars(schema_with = "api_version_schema")]
    pub api_version: &'static str,
    /// Always `Status`.
    #[schemars(schema_with = "kind_schema")]
    pub kind: &'static str,
    /// The tenant's identity, `namespace/name` (see docs/spec.md, "Tenant identity").
    pub tenant: &'a str,
    /// True when every item of every layer is as wanted.
    pub healthy: bool,
    /// Layers from the array up to the tenant.
    pub layers: &'a [Layer],
}

impl<'a> StatusDocument<'a> {
    /// The document of `report` for `tenant`.
    pub fn new(tenant: &'a str, report: &'a StatusReport) -> Self {
        StatusDocument {
            api_version: STATUS_API_VERSION,
            kind: STATUS_KIND,
            tenant,
            healthy: report.healthy(),
            layers: &report.layers,
        }
    }

    /// The JSON Schema (draft 2020-12) of the document, as committed in
    /// `docs/status.schema.json`.
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(StatusDocument<'static>)).unwrap_or_default()
    }
}

fn api_version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "const": STATUS_API_VERSION })
}

fn kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "const": STATUS_KIND })
}

/// The cluster layers of the tenant described by `spec` and its rendered `manifests`.
pub async fn cluster_status(
    spec: &TenantStorage,
    manifests: &[Manifest],
    management: &Client,
    tenant: Option<&Client>,
) -> Result<StatusReport> {
    let mut report = StatusReport::default();
    let mgmt = Resources::new(management.clone());

    let mut claims = Layer {
        name: "management claims".into(),
        items: Vec::new(),
    };
    for m in manifests.iter().filter(|m| {
        m.cluster == Cluster::Management && m.kind == PVC.kind && m.form == Form::Resource
    }) {
        claims.items.push(object_item(&mgmt, m, "PVC is not bound: check the FADA StorageClass and that pxfa apply created the array volume").await);
    }
    if !claims.items.is_empty() {
        report.layers.push(claims);
    }

    let patches: Vec<&Manifest> = manifests
        .iter()
        .filter(|m| matches!(m.form, Form::JsonPatch { .. }) && m.kind == "VirtualMachine")
        .collect();
    if !patches.is_empty() {
        let workers = vms::worker_disks(&patches)?;
        let ns = workers
            .first()
            .map(|w| w.namespace.clone())
            .unwrap_or_default();
        let found = discover_vms(management, &ns, &spec.node_pool()).await?;
        let mut layer = Layer {
            name: "VM disks".into(),
            items: Vec::new(),
        };
        for w in &workers {
            let object = format!("worker {:02}", w.index);
            let Some(vm) = found.iter().find(|v| v.index == Some(w.index)) else {
                layer.items.push(Item {
                    object,
                    state: "no VM".into(),
                    ok: false,
                    problem: Some(
                        "no VM carries this worker index: run pxfa apply with --kubeconfig".into(),
                    ),
                });
                continue;
            };
            let missing: Vec<&str> = w
                .disks
                .iter()
                .filter(|d| !vm.holds_claim(&d.claim))
                .map(|d| d.serial.as_str())
                .collect();
            layer.items.push(Item {
                object: format!("{object} (VM {})", vm.name),
                state: if missing.is_empty() {
                    "all disks attached".into()
                } else {
                    format!("missing {}", missing.join(", "))
                },
                ok: missing.is_empty(),
                problem: (!missing.is_empty())
                    .then(|| "disks not attached: run pxfa apply with --kubeconfig".to_string()),
            });
        }
        report.layers.push(layer);
    }

    if let Some(layer) = worker_placement(spec, management).await {
        report.layers.push(layer);
    }

    if let Some(tenant) = tenant {
        let res = Resources::new(tenant.clone());
        let mut layer = Layer {
            name: "tenant Portworx".into(),
            items: Vec::new(),
        };
        for m in manifests
            .iter()
            .filter(|m| m.cluster == Cluster::Tenant && m.kind == STORAGE_CLUSTER.kind)
        {
            layer.items.push(object_item(&res, m, "StorageCluster not Online: see oc describe storagecluster and the portworx pods' logs").await);
        }
        let ns = spec.spec.portworx.namespace.clone();
        let nodes: Api<DynamicObject> =
            Api::namespaced_with(tenant.clone(), &ns, &STORAGE_NODE.resource());
        match list_all(&nodes, &ListParams::default()).await {
            Ok(list) => {
                for n in list.items {
                    let state = readiness(STORAGE_NODE.kind, &to_value(&n));
                    layer.items.push(Item {
                        object: format!("StorageNode {ns}/{}", n.name_any()),
                        state: state.clone().err().unwrap_or_else(|| "phase Online".into()),
                        ok: state.is_ok(),
                        problem: state.err().map(|_| {
                            "Portworx node not online: pxctl status on that worker".into()
                        }),
                    });
                }
            }
            Err(e) if status_code(&e) == Some(404) => {}
            Err(e) => layer.items.push(Item {
                object: format!("StorageNodes in {ns}"),
                state: "unreadable".into(),
                ok: false,
                problem: Some(format!("cannot list them: {e}")),
            }),
        }
        report.layers.push(layer);
    }
    Ok(report)
}

/// The "worker placement" layer, for the modes that run Portworx in the tenant: one
/// item per management node that runs more than one of the tenant's storage workers
/// (one drain would take them all), else one ok item.
async fn worker_placement(spec: &TenantStorage, management: &Client) -> Option<Layer> {
    if !spec.mode().runs_portworx() {
        return None;
    }
    let ns = spec.hcp_namespace();
    let items = match vms::list_vmis(management, &ns).await {
        Ok(vmis) => placement_items(&vms::placement_of(vmis, &spec.node_pool())),
        Err(e) if status_code(&e) == Some(404) => return None,
        Err(e) => vec![Item {
            object: format!("VirtualMachineInstances in {ns}"),
            state: "unreadable".into(),
            ok: false,
            problem: Some(format!("cannot list them: {e}")),
        }],
    };
    Some(Layer {
        name: "worker placement".into(),
        items,
    })
}

/// The items of [`worker_placement`] for what was read.
fn placement_items(placements: &[px_topology::site::WorkerPlacement]) -> Vec<Item> {
    let shared = px_topology::site::shared_nodes(placements);
    if shared.is_empty() {
        let running = placements.iter().filter(|p| p.node.is_some()).count();
        return vec![Item {
            object: "worker VMs".into(),
            state: format!("{running} running, each on its own management node"),
            ok: true,
            problem: None,
        }];
    }
    shared
        .into_iter()
        .map(|(node, vms)| {
            Item {
            object: format!("management node {node}"),
            state: format!("runs {}", vms.join(", ")),
            ok: false,
            problem: Some(
                "one drain takes more than one Portworx node of this tenant (on three workers, the \
                 KVDB quorum): move one VM to another node before the next drain (pxfa doctor: \
                 worker-spread says how for this mode)"
                    .into(),
            ),
        }
        })
        .collect()
}

async fn object_item(res: &Resources, m: &Manifest, hint: &str) -> Item {
    let target = WaitTarget {
        api_version: m
            .body
            .get("apiVersion")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_string(),
        kind: m.kind.clone(),
        namespace: m.namespace.clone(),
        name: m.name.clone(),
    };
    let object = object_path(&m.kind, m.namespace.as_deref(), &m.name);
    match check(res, &target).await {
        Ok(()) => Item {
            object,
            state: "ready".into(),
            ok: true,
            problem: None,
        },
        Err(state) => Item {
            object,
            problem: Some(if state == "not found" {
                "not applied: run pxfa apply with --kubeconfig".to_string()
            } else {
                hint.to_string()
            }),
            state,
            ok: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use px_topology::site::WorkerPlacement;

    fn at(vm: &str, node: &str) -> WorkerPlacement {
        WorkerPlacement {
            vm: vm.into(),
            node: Some(node.into()),
        }
    }

    #[test]
    fn co_located_workers_are_a_problem_per_node() {
        let items = placement_items(&[at("np-a", "n1"), at("np-b", "n1"), at("np-c", "n2")]);
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].object, "management node n1");
        assert_eq!(items[0].state, "runs np-a, np-b");
        assert!(!items[0].ok);
        let items = placement_items(&[at("np-a", "n1"), at("np-c", "n2")]);
        assert!(items[0].ok, "{items:?}");
        assert!(items[0].state.starts_with("2 running"));
    }
}
