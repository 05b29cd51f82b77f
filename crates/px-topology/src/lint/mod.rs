//! Lint rules: what is known to break Portworx on FlashArray in hosted clusters,
//! checked in a tenant spec or in manifests an admin already has.
//!
//! Each rule has a stable id (`PXFA001` ...), a severity and a message that says why
//! it matters and how to fix it; `docs/lint-rules.md` lists them all. [`RULES`] is the
//! catalogue; the rules themselves live in [`spec_rules`] and [`manifest_rules`] (its
//! storage-network rules in `network_rules`).

mod finding;
mod load;
mod manifest_doc;
pub(crate) mod manifest_rules;
mod network_rules;
mod nodiscard;
mod rendered;
pub(crate) mod spec_rules;

pub use finding::{Finding, Rule, Severity};
pub use load::{LintError, lint_path, lint_paths};
pub use manifest_rules::lint_manifests;
pub use nodiscard::nodiscard_needed;
pub(crate) use nodiscard::{OCP_VERSION_ANNOTATION, VIRT_VERSION_ANNOTATION, nodiscard_reason};
pub use spec_rules::lint_spec;

/// Every rule, in id order.
pub const RULES: &[Rule] = &[
    Rule::new(
        "PXFA000",
        Severity::Error,
        "the TenantStorage spec is invalid",
    ),
    Rule::new(
        "PXFA001",
        Severity::Error,
        "Portworx below 3.6.2 for hosted clusters",
    ),
    Rule::new(
        "PXFA002",
        Severity::Error,
        "NodePool upgradeType is not InPlace",
    ),
    Rule::new("PXFA003", Severity::Error, "NodePool autoRepair is enabled"),
    Rule::new(
        "PXFA004",
        Severity::Error,
        "VM root volume is not ReadWriteMany + Block",
    ),
    Rule::new(
        "PXFA005",
        Severity::Error,
        "fewer vCPU cores than PX-StoreV2 needs",
    ),
    Rule::new(
        "PXFA006",
        Severity::Error,
        "less memory than PX-StoreV2 needs",
    ),
    Rule::new(
        "PXFA007",
        Severity::Warning,
        "root volume too small for PX-StoreV2",
    ),
    Rule::new(
        "PXFA008",
        Severity::Error,
        "replication greater than storage nodes",
    ),
    Rule::new(
        "PXFA009",
        Severity::Error,
        "nodiscard missing on a VM root-disk StorageClass",
    ),
    Rule::new(
        "PXFA010",
        Severity::Error,
        "attachDefaultNetwork false without additionalNetworks",
    ),
    Rule::new(
        "PXFA011",
        Severity::Warning,
        "several guest NICs without PURE_ISCSI_ALLOWED_IFACES",
    ),
    Rule::new(
        "PXFA012",
        Severity::Error,
        "StorageCluster with both storage and cloudStorage",
    ),
    Rule::new(
        "PXFA013",
        Severity::Warning,
        "StorageCluster limits storage nodes",
    ),
    Rule::new(
        "PXFA014",
        Severity::Error,
        "px-pure-secret with wrong name, key or namespace",
    ),
    Rule::new("PXFA015", Severity::Error, "the same address on two NNCPs"),
    Rule::new(
        "PXFA016",
        Severity::Error,
        "MCE component named hypershift-preview",
    ),
    Rule::new(
        "PXFA017",
        Severity::Error,
        "ReadWriteMany requested with kubevirt-csi (Filesystem: error; Block: unsupported by Portworx)",
    ),
    Rule::new(
        "PXFA018",
        Severity::Warning,
        "Portworx drive below the recommended 128 GiB",
    ),
    Rule::new(
        "PXFA019",
        Severity::Warning,
        "tenant provisioning exceeds the array's free space",
    ),
    Rule::new(
        "PXFA020",
        Severity::Error,
        "FADA volume import on a Portworx release that does not document it",
    ),
    Rule::new(
        "PXFA021",
        Severity::Warning,
        "a tenant that never talks to the array is on the array's storage network",
    ),
    Rule::new(
        "PXFA022",
        Severity::Error,
        "NodePool network names a NAD in another namespace",
    ),
    Rule::new(
        "PXFA023",
        Severity::Warning,
        "NNCP bridge port is a VLAN interface the policy does not define",
    ),
    Rule::new(
        "PXFA024",
        Severity::Warning,
        "hand-made StorageClass the Portworx operator owns",
    ),
    Rule::new(
        "PXFA025",
        Severity::Warning,
        "MetalLB pool open to every namespace",
    ),
    Rule::new(
        "PXFA026",
        Severity::Error,
        "a file pxfa rendered holds more than its one object",
    ),
    Rule::new(
        "PXFA027",
        Severity::Error,
        "no releaseImage: the HostedCluster and NodePool cannot be rendered",
    ),
    Rule::new(
        "PXFA028",
        Severity::Error,
        "the API server's LoadBalancer service has no load balancer",
    ),
    Rule::new(
        "PXFA029",
        Severity::Warning,
        "the stated hotplug gate is unlikely for the stated OpenShift Virtualization version",
    ),
    Rule::new(
        "PXFA030",
        Severity::Error,
        "a VirtualMachine disk serial longer than 36 characters",
    ),
    Rule::new(
        "PXFA031",
        Severity::Warning,
        "worker VMs on a whereabouts network without the IP reconciler",
    ),
    Rule::new(
        "PXFA032",
        Severity::Warning,
        "a cloud-drive tenant without a realm: its token has array-wide rights",
    ),
    Rule::new(
        "PXFA033",
        Severity::Warning,
        "cloud-drive worker VMs on whereabouts addresses, which live migration does not keep",
    ),
    Rule::new(
        "PXFA034",
        Severity::Warning,
        "a spec size with a bare decimal unit (4T): 4 TB as Kubernetes reads it, not 4 TiB",
    ),
    Rule::new(
        "PXFA035",
        Severity::Error,
        "a linux bridge carrying storage sessions would be converted to OVS",
    ),
    Rule::new(
        "PXFA036",
        Severity::Warning,
        "more hotplugged disks per VM than the documented limit, or kubevirt-csi on the virtio bus",
    ),
];

/// The catalogue entry for `id`.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_ordered() {
        for w in RULES.windows(2) {
            assert!(w[0].id < w[1].id, "{} then {}", w[0].id, w[1].id);
        }
        assert_eq!(rule("PXFA012").unwrap().severity, Severity::Error);
        assert!(rule("PXFA999").is_none());
    }
}
