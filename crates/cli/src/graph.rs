//! The tenant as a picture: `plan -o mermaid|dot` and `status -o mermaid|dot`.
//!
//! One graph, two writers. The nodes are the tenant's array objects from the plan
//! (pod, host groups, hosts, volumes), then what the manifests build on them (the
//! management PVCs that bind the volumes, the worker VMs that get those disks, the
//! tenant's StorageCluster). A plan styles nodes and edges by action; a status by
//! whether the object is as wanted.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use px_cluster::{StatusReport, WorkerDisks};
use px_topology::{Action, CLAIM_DETAIL, Cluster, Detail, Form, Kind, Manifest, Plan};

/// How a node or edge is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Style {
    /// The plan creates it.
    Create,
    /// The plan changes or recovers it.
    Update,
    /// The plan removes it.
    Delete,
    /// Present and as wanted.
    Ok,
    /// Status: not as wanted.
    Problem,
    /// No verdict (already as desired in a plan, or not checked).
    Plain,
}

impl Style {
    fn of(action: Action) -> Self {
        match action {
            Action::Create => Style::Create,
            Action::Update | Action::Recover => Style::Update,
            Action::Delete => Style::Delete,
            // A retained drive stays as it is until released.
            Action::NoOp | Action::Retain | Action::Pending => Style::Plain,
        }
    }

    fn class(self) -> &'static str {
        match self {
            Style::Create => "create",
            Style::Update => "update",
            Style::Delete => "delete",
            Style::Ok => "ok",
            Style::Problem => "problem",
            Style::Plain => "plain",
        }
    }

    fn color(self) -> &'static str {
        match self {
            Style::Create | Style::Ok => "#2e7d32",
            Style::Update => "#ef6c00",
            Style::Delete | Style::Problem => "#c62828",
            Style::Plain => "#616161",
        }
    }

    fn dot_line(self) -> &'static str {
        match self {
            Style::Create => "bold",
            Style::Delete => "dashed",
            _ => "solid",
        }
    }
}

#[derive(Debug, Clone)]
struct Node {
    label: String,
    style: Style,
}

/// Nodes keyed by `kind:name`, edges between keys.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    nodes: BTreeMap<String, Node>,
    order: Vec<String>,
    edges: Vec<(String, String, Option<String>, Style)>,
}

/// What colours the graph.
pub(crate) enum Verdicts<'a> {
    /// By the plan's actions.
    Plan,
    /// By a status report's items.
    Status(&'a StatusReport),
}

impl Verdicts<'_> {
    /// An array object's style: by its action, or (status) fine when a no-op.
    fn array_style(&self, action: Action) -> Style {
        match self {
            Verdicts::Plan => Style::of(action),
            Verdicts::Status(_) if action == Action::NoOp => Style::Ok,
            // Not a problem (see `status`): drawn as the plan draws it.
            Verdicts::Status(_) if action == Action::Pending => Style::of(action),
            Verdicts::Status(_) => Style::Problem,
        }
    }

    /// A cluster object's style: the status item of that kind (and name, when given).
    fn status_of(&self, prefix: &str, name: &str) -> Style {
        let Verdicts::Status(report) = self else {
            return Style::Plain;
        };
        report
            .layers
            .iter()
            .flat_map(|l| &l.items)
            .find(|i| {
                i.object.starts_with(prefix)
                    && (name.is_empty() || i.object.ends_with(&format!("/{name}")))
            })
            .map_or(
                Style::Plain,
                |i| {
                    if i.ok { Style::Ok } else { Style::Problem }
                },
            )
    }
}

impl Graph {
    fn node(&mut self, key: &str, label: String, style: Style) {
        match self.nodes.get_mut(key) {
            Some(n) => {
                if n.style == Style::Plain {
                    n.style = style;
                }
            }
            None => {
                self.order.push(key.to_string());
                self.nodes.insert(key.to_string(), Node { label, style });
            }
        }
    }

    fn edge(&mut self, from: &str, to: &str, label: Option<String>, style: Style) {
        if self.nodes.contains_key(from) && self.nodes.contains_key(to) {
            self.edges.push((from.into(), to.into(), label, style));
        }
    }

    /// The tenant's graph from its plan and rendered manifests.
    pub(crate) fn tenant(plan: &Plan, manifests: &[Manifest], verdicts: &Verdicts<'_>) -> Self {
        let mut g = Graph::default();
        let root = format!("tenant:{}", plan.tenant);
        g.node(&root, format!("tenant {}", plan.tenant), Style::Plain);
        g.array_objects(plan, verdicts);
        g.links(plan, verdicts);
        g.pods_hold_volumes();
        g.claims(plan, manifests, verdicts);
        let workers = g.workers(manifests, verdicts);
        g.storage_clusters(manifests, &workers, verdicts);
        // Everything without a parent hangs off the tenant, so the picture is one tree.
        let orphans: Vec<String> = g
            .order
            .iter()
            .filter(|k| **k != root && !g.edges.iter().any(|(_, to, _, _)| to == *k))
            .cloned()
            .collect();
        for k in orphans {
            g.edge(&root, &k, None, Style::Plain);
        }
        g
    }

    /// The plan's pods, host groups, hosts and volumes.
    fn array_objects(&mut self, plan: &Plan, verdicts: &Verdicts<'_>) {
        for c in &plan.changes {
            let (prefix, label) = match c.kind {
                Kind::Pod => ("pod", "pod"),
                Kind::HostGroup => ("hostgroup", "host group"),
                Kind::Host => ("host", "host"),
                Kind::Volume => ("volume", "volume"),
                _ => continue,
            };
            self.node(
                &format!("{prefix}:{}", c.name),
                format!("{label} {}", c.name),
                verdicts.array_style(c.action),
            );
        }
    }

    /// The plan's memberships (group to host) and connections (host or group to
    /// volume, with the LUN).
    fn links(&mut self, plan: &Plan, verdicts: &Verdicts<'_>) {
        for c in &plan.changes {
            let Some((left, right)) = c.name.split_once(" -> ") else {
                continue;
            };
            match c.kind {
                Kind::HostGroupMembership => {
                    let group = format!("hostgroup:{right}");
                    self.node(&group, format!("host group {right}"), Style::Plain);
                    let style = verdicts.array_style(c.action);
                    self.edge(&group, &format!("host:{left}"), None, style);
                }
                Kind::Connection => {
                    let target = if self.nodes.contains_key(&format!("hostgroup:{right}")) {
                        format!("hostgroup:{right}")
                    } else if self.nodes.contains_key(&format!("host:{right}")) {
                        format!("host:{right}")
                    } else {
                        // A shared management group the plan does not list on its own.
                        let k = format!("hostgroup:{right}");
                        self.node(&k, format!("host group {right}"), Style::Plain);
                        k
                    };
                    let lun = c.details.get("lun").map(|l| format!("LUN {l}"));
                    let style = verdicts.array_style(c.action);
                    self.edge(&target, &format!("volume:{left}"), lun, style);
                }
                _ => {}
            }
        }
    }

    /// A volume inside a pod is `pod::name`; `realm::pod::vol` is in pod `realm::pod`.
    fn pods_hold_volumes(&mut self) {
        let pod_volumes: Vec<(String, String)> = self
            .order
            .iter()
            .filter_map(|k| {
                let v = k.strip_prefix("volume:")?;
                let (pod, _) = v.rsplit_once("::")?;
                Some((format!("pod:{pod}"), k.clone()))
            })
            .collect();
        for (pod, vol) in pod_volumes {
            self.edge(&pod, &vol, None, Style::Plain);
        }
    }

    /// The management cluster's claims, each from the array volume it imports or,
    /// for a dynamic drive, the volume the array holds for it (the plan's claim
    /// detail of a found drive).
    fn claims(&mut self, plan: &Plan, manifests: &[Manifest], verdicts: &Verdicts<'_>) {
        let found: Vec<(&str, &str)> = plan
            .changes
            .iter()
            .filter(|c| c.kind == Kind::Volume)
            .filter_map(|c| match c.details.get(CLAIM_DETAIL) {
                Some(Detail::Text(claim)) => Some((claim.as_str(), c.name.as_str())),
                _ => None,
            })
            .collect();
        for m in manifests.iter().filter(|m| {
            m.cluster == Cluster::Management
                && m.kind == "PersistentVolumeClaim"
                && m.form == Form::Resource
        }) {
            let key = format!("pvc:{}", m.name);
            self.node(
                &key,
                format!("PVC {}", m.name),
                verdicts.status_of("PersistentVolumeClaim", &m.name),
            );
            // An import claim names its array volume (`<pod>::<volume>`); a dynamic
            // claim's volume is made by Portworx when it binds: an edge once found.
            let annotations = &m.body["metadata"]["annotations"];
            let claim = format!("{}/{}", m.namespace.as_deref().unwrap_or_default(), m.name);
            let imported = annotations[px_topology::spec::provisioning::IMPORT_ANNOTATION]
                .as_str()
                .or_else(|| annotations["pure_vol_name"].as_str())
                .or_else(|| found.iter().find(|(c, _)| *c == claim).map(|(_, v)| *v));
            if let Some(vol) = imported {
                self.edge(&format!("volume:{vol}"), &key, None, Style::Plain);
            }
        }
    }

    /// The worker VMs' disks, each from its claim (with the disk serial).
    fn workers(&mut self, manifests: &[Manifest], verdicts: &Verdicts<'_>) -> Vec<WorkerDisks> {
        let patches: Vec<&Manifest> = manifests
            .iter()
            .filter(|m| matches!(m.form, Form::JsonPatch { .. }) && m.kind == "VirtualMachine")
            .collect();
        let workers = px_cluster::worker_disks(&patches).unwrap_or_default();
        for w in &workers {
            let key = format!("worker:{:02}", w.index);
            self.node(
                &key,
                format!("worker {:02} VM disks", w.index),
                verdicts.status_of(&format!("worker {:02}", w.index), ""),
            );
            for d in &w.disks {
                let claim = format!("pvc:{}", d.claim);
                self.edge(&claim, &key, Some(d.serial.clone()), Style::Plain);
            }
        }
        workers
    }

    /// The tenant's StorageCluster, from the workers' disks or (cloud drives) the pods.
    fn storage_clusters(
        &mut self,
        manifests: &[Manifest],
        workers: &[WorkerDisks],
        verdicts: &Verdicts<'_>,
    ) {
        for m in manifests
            .iter()
            .filter(|m| m.cluster == Cluster::Tenant && m.kind == "StorageCluster")
        {
            let key = format!("storagecluster:{}", m.name);
            self.node(
                &key,
                format!("StorageCluster {}", m.name),
                verdicts.status_of("StorageCluster", &m.name),
            );
            if workers.is_empty() {
                // Cloud drives: Portworx makes its drives in the tenant's pod itself.
                let pods: Vec<String> = self
                    .order
                    .iter()
                    .filter(|k| k.starts_with("pod:"))
                    .cloned()
                    .collect();
                for p in pods {
                    self.edge(&p, &key, Some("cloud drives".into()), Style::Plain);
                }
            }
            for w in workers {
                self.edge(&format!("worker:{:02}", w.index), &key, None, Style::Plain);
            }
        }
    }

    /// Graphviz DOT.
    pub(crate) fn to_dot(&self) -> String {
        let id: BTreeMap<&str, usize> = self
            .order
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_str(), i))
            .collect();
        let mut out = String::from(
            "digraph pxfa {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n",
        );
        for (i, k) in self.order.iter().enumerate() {
            let n = &self.nodes[k];
            let _ = writeln!(
                out,
                "  n{i} [label=\"{}\", color=\"{}\", fontcolor=\"{}\", style=\"{}\"];",
                dot_escape(&n.label),
                n.style.color(),
                n.style.color(),
                n.style.dot_line()
            );
        }
        for (from, to, label, style) in &self.edges {
            let label = label
                .as_deref()
                .map_or(String::new(), |l| format!(", label=\"{}\"", dot_escape(l)));
            let _ = writeln!(
                out,
                "  n{} -> n{} [color=\"{}\", style=\"{}\"{label}];",
                id[from.as_str()],
                id[to.as_str()],
                style.color(),
                style.dot_line()
            );
        }
        out.push('}');
        out
    }

    /// A Mermaid flowchart.
    pub(crate) fn to_mermaid(&self) -> String {
        let id: BTreeMap<&str, usize> = self
            .order
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_str(), i))
            .collect();
        let mut out = String::from("flowchart LR\n");
        for (i, k) in self.order.iter().enumerate() {
            let n = &self.nodes[k];
            let _ = writeln!(
                out,
                "  n{i}[\"{}\"]:::{}",
                mermaid_escape(&n.label),
                n.style.class()
            );
        }
        for (from, to, label, style) in &self.edges {
            let arrow = match style {
                Style::Create => "==>",
                Style::Delete => "-.->",
                _ => "-->",
            };
            let label = label
                .as_deref()
                .map_or(String::new(), |l| format!("|\"{}\"|", mermaid_escape(l)));
            let _ = writeln!(
                out,
                "  n{} {arrow}{label} n{}",
                id[from.as_str()],
                id[to.as_str()]
            );
        }
        for s in [
            Style::Create,
            Style::Update,
            Style::Delete,
            Style::Ok,
            Style::Problem,
            Style::Plain,
        ] {
            let dash = if s == Style::Delete {
                ",stroke-dasharray:4 3"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  classDef {} stroke:{},color:{}{dash}",
                s.class(),
                s.color(),
                s.color()
            );
        }
        out.trim_end().to_string()
    }
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Mermaid labels in `"..."`: a quote is written as the `#quot;` entity.
fn mermaid_escape(s: &str) -> String {
    s.replace('"', "#quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Graph {
        let mut g = Graph::default();
        g.node("pod:t", "pod t".into(), Style::Create);
        g.node("volume:t::v\"1", "volume t::v\"1".into(), Style::Delete);
        g.node("pvc:p", "PVC p".into(), Style::Plain);
        g.edge("pod:t", "volume:t::v\"1", None, Style::Create);
        g.edge(
            "volume:t::v\"1",
            "pvc:p",
            Some("LUN 1".into()),
            Style::Delete,
        );
        g.edge("pvc:p", "missing", None, Style::Plain);
        g
    }

    /// The structure a Mermaid parser needs: a header, declared ids, edges between
    /// declared ids only, every class used defined, no raw quote inside a label.
    #[test]
    fn mermaid_is_well_formed() {
        let m = sample().to_mermaid();
        let mut lines = m.lines();
        assert_eq!(lines.next(), Some("flowchart LR"));
        let mut declared = std::collections::BTreeSet::new();
        let mut classes_used = std::collections::BTreeSet::new();
        let mut classes_defined = std::collections::BTreeSet::new();
        let mut edges = 0;
        for l in lines.map(str::trim) {
            if let Some(rest) = l.strip_prefix("classDef ") {
                classes_defined.insert(rest.split(' ').next().unwrap().to_string());
            } else if let Some((id, rest)) = l.split_once("[\"") {
                let (label, class) = rest.rsplit_once("\"]:::").expect(l);
                assert!(!label.contains('"'), "raw quote in {l}");
                assert!(declared.insert(id.to_string()), "duplicate id {id}");
                classes_used.insert(class.to_string());
            } else {
                let parts: Vec<&str> = l.split_whitespace().collect();
                assert!(parts.len() >= 3, "edge {l}");
                assert!(declared.contains(parts[0]), "{l}");
                assert!(declared.contains(parts[parts.len() - 1]), "{l}");
                edges += 1;
            }
        }
        assert_eq!(edges, 2, "an edge to an unknown node is dropped");
        assert!(classes_used.is_subset(&classes_defined));
        assert!(m.contains("#quot;"));
        assert!(m.contains("==>") && m.contains("-.->|\"LUN 1\"|"));
    }

    #[test]
    fn dot_escapes_and_styles() {
        let d = sample().to_dot();
        assert!(d.starts_with("digraph pxfa {") && d.ends_with('}'));
        assert!(d.contains(r#"label="volume t::v\"1""#), "{d}");
        assert!(d.contains("style=\"dashed\""));
        assert_eq!(d.matches("->").count(), 2);
    }
}
