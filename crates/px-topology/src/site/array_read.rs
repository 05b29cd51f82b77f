//! `pxfa doctor`'s read of the array: the array's own details, the pipeline's
//! observe and plan (read only: the space, the blockers and the node → host map),
//! and which management nodes no host stands for. Reads only.

use std::collections::BTreeSet;

use flasharray::models::{Host, ManualEradication};
use flasharray::{FlashArray, ListParams, Wwn};

use super::views::ArrayView;
use crate::pipeline::{ObserveError, Site};
use crate::plan::{NodeHost, PlanOptions, RealmGateError};
use crate::sizing::ArraySpaceInfo;
use crate::spec::ManagementNode;
use crate::spec::realm::REALM_MIN_REST_MINOR;
use crate::tenant::Tenant;

/// What the array says about `tenant`, for [`super::array_checks`]. An array that
/// does not answer is an [`ArrayView::unreachable`], never an error.
pub async fn read_array(tenant: &Tenant, array: &dyn FlashArray) -> ArrayView {
    let info = match array.get_array().await {
        Ok(i) => i,
        Err(e) => {
            return ArrayView {
                unreachable: Some(format!("{e:#}")),
                ..ArrayView::default()
            };
        }
    };
    let mut view = ArrayView {
        name: Some(info.name.clone()),
        purity_version: info.version.clone(),
        safemode: info
            .eradication_config
            .manual_eradication
            .map(|m| m != ManualEradication::AllEnabled),
        rest_minor: array.rest_minor_version().await.ok().flatten(),
        ..ArrayView::default()
    };
    let mut host_map = Vec::new();
    match tenant.observe(Site::array(array)).await {
        Ok(observation) => {
            let planned = observation.plan(&PlanOptions::default());
            let space = array
                .get_array_space()
                .await
                .ok()
                .map(|s| ArraySpaceInfo::from(&s));
            view.space_findings = planned
                .preflight(space.as_ref(), Default::default())
                .into_iter()
                .map(|f| f.message)
                .collect();
            view.blockers = planned
                .plan()
                .conflicts
                .iter()
                .map(|b| format!("{} {}: {}", b.kind.label(), b.name, b.reason))
                .collect();
            host_map = planned.plan().host_map.clone();
        }
        Err(ObserveError::Realm(e)) => view.rest_needed = Some(rest_needed(&e)),
        Err(e) => view
            .blockers
            .push(format!("cannot observe the tenant: {e}")),
    }
    if tenant.desired.hosts.is_empty() {
        // The plan makes no host (`attach: fada`, or a mode whose drives reach the
        // tenant another way): what the array holds is told, never a warning.
        view.no_hosts_planned = Some(no_hosts_reason(tenant));
    }
    let nodes = &tenant.spec.spec.management.nodes;
    // The array's hosts only for the nodes the plan's map does not answer for.
    let hosts = if nodes.iter().all(|n| mapped(&host_map, n).is_some()) {
        Some(Vec::new())
    } else {
        array.list_hosts(&ListParams::default()).await.ok()
    };
    view.nodes_without_host = nodes_without_host(nodes, &host_map, hosts.as_deref());
    view
}

/// Why the node → host check does not apply, for the doctor line.
fn no_hosts_reason(tenant: &Tenant) -> String {
    if tenant.spec.mode().drives_are_vm_disks()
        && tenant.spec.spec.storage.attach == crate::spec::Attach::Fada
    {
        "with attach: fada the management Portworx connects the drives on demand (its \
         hosts); pxfa plans no hosts"
            .to_string()
    } else {
        format!("pxfa plans no hosts for a {} tenant", tenant.spec.mode())
    }
}

fn rest_needed(e: &RealmGateError) -> (u32, String) {
    match e {
        RealmGateError::TagsUnsupported { kind, need, .. } => (*need, format!("tags on {kind}")),
        _ => (REALM_MIN_REST_MINOR, "realms (spec.array.realm)".into()),
    }
}

fn mapped<'a>(host_map: &'a [NodeHost], node: &ManagementNode) -> Option<&'a NodeHost> {
    host_map.iter().find(|h| h.node == node.name)
}

fn node_initiators(n: &ManagementNode) -> impl Iterator<Item = &String> {
    n.wwns.iter().chain(&n.iqns).chain(&n.nqns)
}

/// The management nodes (with initiators) none of whose initiators is on a host: the
/// plan's node → host map answers for the nodes it resolved (a host to create is
/// none yet), the array's `hosts` for the others, every initiator compared as
/// [`Wwn::initiator_key`] says. Without `hosts` (unreadable), the others are not
/// reported.
fn nodes_without_host(
    nodes: &[ManagementNode],
    host_map: &[NodeHost],
    hosts: Option<&[Host]>,
) -> Vec<String> {
    let known: BTreeSet<String> = hosts
        .unwrap_or_default()
        .iter()
        .flat_map(|h| h.iqns.iter().chain(&h.wwns).chain(&h.nqns))
        .map(|i| Wwn::initiator_key(i))
        .collect();
    nodes
        .iter()
        .filter(|n| node_initiators(n).next().is_some())
        .filter(|n| match mapped(host_map, n) {
            Some(h) => h.created,
            None => {
                hosts.is_some()
                    && !node_initiators(n).any(|i| known.contains(&Wwn::initiator_key(i)))
            }
        })
        .map(|n| n.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::HostOwner;

    fn node(name: &str, wwns: &[&str]) -> ManagementNode {
        serde_json::from_value(serde_json::json!({ "name": name, "wwns": wwns }))
            .expect("a management node")
    }

    fn host(name: &str, wwns: &[&str]) -> Host {
        let mut h = Host::default();
        h.name = name.into();
        h.wwns = wwns.iter().map(|w| w.to_string()).collect();
        h
    }

    #[test]
    fn colon_written_wwns_find_the_array_form() {
        let nodes = [
            node(
                "worker-01",
                &["21:00:f4:c7:aa:00:27:06", "21:00:f4:c7:aa:00:27:07"],
            ),
            node("worker-02", &["21:00:f4:c7:aa:00:5a:06"]),
        ];
        let hosts = [host("px-mgmt-worker-01", &["2100F4C7AA002706"])];
        assert_eq!(nodes_without_host(&nodes, &[], Some(&hosts)), ["worker-02"]);
        // Unreadable hosts: nothing is claimed about the unmapped nodes.
        assert!(nodes_without_host(&nodes, &[], None).is_empty());
    }

    #[test]
    fn the_plans_host_map_answers_for_the_nodes_it_resolved() {
        let nodes = [
            node("worker-01", &["21:00:f4:c7:aa:00:27:06"]),
            node("worker-02", &["21:00:f4:c7:aa:00:28:06"]),
        ];
        let entry = |node: &str, created: bool| NodeHost {
            node: node.into(),
            hosts: vec![format!("mgmt-{node}")],
            found_by: Vec::new(),
            owner: HostOwner::Pxfa,
            missing_initiators: Vec::new(),
            created,
        };
        let map = [entry("worker-01", false), entry("worker-02", true)];
        assert_eq!(nodes_without_host(&nodes, &map, None), ["worker-02"]);
    }
}
