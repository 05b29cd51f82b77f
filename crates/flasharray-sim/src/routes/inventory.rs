//! Collections the simulated array holds nothing of (protection groups, file
//! systems, alerts, performance samples, ...). Pure's Ansible collection and SDK
//! list them while gathering facts; a real array with none of them answers an empty
//! list, so the simulator does too instead of a 404 that the collection cannot
//! handle. A lookup by name fails as for any object that does not exist. Writes to
//! these collections stay unsupported (404), so nothing is ever silently dropped.

use hyper::Method;
use serde_json::Value;

use super::Call;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply, bad_request};

/// Every such collection, by path below `/api/2.N/`.
const EMPTY: &[&str] = &[
    "active-directory",
    "alert-watchers",
    "alerts",
    "apps",
    "apps/nodes",
    "array-connections/path",
    "arrays/cloud-capacity",
    "certificates",
    "directories",
    "directories/performance",
    "directories/policies",
    "directory-exports",
    "directory-services",
    "directory-services/roles",
    "directory-snapshots",
    "file-systems",
    "fleets",
    "fleets/members",
    "host-groups/performance",
    "host-groups/protection-groups",
    "hosts/performance",
    "hosts/performance/balance",
    "hosts/protection-groups",
    "kmip",
    "maintenance-windows",
    "network-interfaces",
    "network-interfaces/neighbors",
    "network-interfaces/performance",
    "offloads",
    "pod-replica-links",
    "pods/performance",
    "policies",
    "policies/nfs",
    "policies/nfs/client-rules",
    "policies/password",
    "policies/quota",
    "policies/quota/rules",
    "policies/smb",
    "policies/smb/client-rules",
    "policies/snapshot",
    "policies/snapshot/rules",
    "ports",
    "protection-group-snapshots",
    "protection-group-snapshots/transfer",
    "protection-groups",
    "protection-groups/host-groups",
    "protection-groups/hosts",
    "protection-groups/tags",
    "protection-groups/targets",
    "protection-groups/volumes",
    "realms",
    "realms/performance",
    "remote-volume-snapshots",
    "remote-volume-snapshots/transfer",
    "snmp-managers",
    "sso/saml2/idps",
    "subnets",
    "subscription-assets",
    "syslog-servers",
    "virtual-machine-snapshots",
    "virtual-machines",
    "volume-groups",
    "volume-groups/performance",
    "volume-groups/tags",
    "volume-groups/volumes",
    "volume-snapshots",
    "volume-snapshots/tags",
    "volumes/performance",
    "volumes/protection-groups",
];

/// Parameters of list endpoints in general; with no items, none of them can
/// select anything.
const LIST_PARAMS: &[&str] = &[
    "names",
    "ids",
    "filter",
    "sort",
    "destroyed",
    "member_names",
    "member_ids",
    "group_names",
    "group_ids",
    "source_names",
    "source_ids",
    "resource_names",
    "resource_ids",
    "resource_destroyed",
    "vm_type",
    "policy_names",
    "policy_ids",
    "remote_names",
    "remote_ids",
    "host_names",
    "host_group_names",
    "volume_names",
    "volume_ids",
    "namespaces",
    "resolution",
    "start_time",
    "end_time",
    "protocol",
    "protocol_group",
    "flagged",
    "fleet_ids",
    "fleet_names",
    "local_pod_names",
    "remote_pod_names",
    "exclude_rules",
];

/// Whether `resource` is one of the empty collections.
pub(super) fn is_empty_collection(resource: &str) -> bool {
    EMPTY.contains(&resource)
}

pub(super) async fn empty(call: &Call<'_>) -> Result<Reply, Fail> {
    if call.method != Method::GET {
        return Err(call.method_not_allowed());
    }
    let mut allowed = LIST_PARAMS.to_vec();
    allowed.extend_from_slice(PAGING_PARAMS);
    call.query.only(&allowed)?;
    if let Some(name) = call.query.csv("names").first() {
        return Err(bad_request(Some(name), "Object does not exist."));
    }
    let page = PageRequest::from_query(&call.resource, &call.query)?;
    Ok(page.reply::<Value>(&[], None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_has_no_served_resource() {
        assert!(EMPTY.windows(2).all(|w| w[0] < w[1]), "keep EMPTY sorted");
        for served in [
            "volumes",
            "hosts",
            "pods",
            "arrays",
            "admins",
            "controllers",
        ] {
            assert!(!is_empty_collection(served), "{served}");
        }
    }
}
