//! What each REST 2.x version serves: the version that introduced each endpoint
//! and each model field, so that a simulator advertising up to `2.N` answers as an
//! array of that version (`SimConfig::versions`, [`versions_up_to`]).
//!
//! Source: Pure's Python SDK py-pure-client 1.96.0, which ships one client per
//! REST version (`pypureclient.flasharray.FA_2_N`). Each version's
//! `api/__init__.py` names that version's API modules, whose request paths are its
//! endpoints; its `models/__init__.py` names each model's module, whose fields are
//! the model's fields at that version. A path or field is listed with the first
//! `N` whose client has it (the SDK ships no client for 2.12 and 2.18; a feature
//! first seen at 2.13 may date from 2.12). `tests/sdk_compat/rest_versions.py`
//! derives both tables from the installed SDK, and `tests/sdk_compat/
//! test_versions.py` fails when this file and the SDK disagree. Endpoints every
//! 2.x version has (`volumes`, `hosts`, `host-groups`, `connections`, `login`, ...)
//! are not listed; fields are listed only where they came later than their
//! endpoint. docs/simulator.md has the table in prose.

use serde_json::Value;

use super::query::{Query, unknown_parameter};
use super::response::{Fail, bad_request};

/// The oldest REST 2.x version the simulator can be asked to be: 2.0, the first.
pub(crate) const OLDEST_MINOR: u32 = 0;

/// Endpoint (path after `/api/2.N/`) and the first minor version that has it.
pub(crate) const ENDPOINTS: &[(&str, u32)] = &[
    ("active-directory", 3),
    ("admins", 2),
    ("admins/api-tokens", 2),
    ("admins/cache", 2),
    ("admins/policies/management-access", 36),
    ("admins/settings", 2),
    ("alert-watchers", 4),
    ("alert-watchers/test", 4),
    ("alerts", 2),
    ("alerts/events", 2),
    ("alerts/rules", 23),
    ("alerts/rules/catalog", 23),
    ("api-clients", 1),
    ("apps", 2),
    ("apps/nodes", 2),
    ("array-connections", 4),
    ("array-connections/connection-key", 4),
    ("array-connections/path", 4),
    ("arrays", 2),
    ("arrays/cloud-capacity", 29),
    ("arrays/cloud-capacity/supported-steps", 29),
    ("arrays/cloud-provider-tags", 6),
    ("arrays/cloud-provider-tags/batch", 6),
    ("arrays/erasures", 34),
    ("arrays/eula", 2),
    ("arrays/factory-reset-token", 4),
    ("arrays/ntp-test", 2),
    ("arrays/performance", 2),
    ("arrays/performance/by-link", 19),
    ("arrays/space", 2),
    ("arrays/tags", 34),
    ("arrays/tags/batch", 34),
    ("audits", 2),
    ("certificate-groups", 36),
    ("certificate-groups/certificates", 36),
    ("certificates", 4),
    ("certificates/certificate-groups", 36),
    ("certificates/certificate-signing-requests", 4),
    ("container-default-protections", 16),
    ("controllers", 2),
    ("directories", 3),
    ("directories/locks/nlm-reclamations", 21),
    ("directories/performance", 3),
    ("directories/policies", 3),
    ("directories/policies/audit-file", 35),
    ("directories/policies/autodir", 24),
    ("directories/policies/nfs", 3),
    ("directories/policies/quota", 7),
    ("directories/policies/smb", 3),
    ("directories/policies/snapshot", 3),
    ("directories/space", 3),
    ("directory-exports", 3),
    ("directory-quotas", 7),
    ("directory-services", 2),
    ("directory-services/local/groups", 21),
    ("directory-services/local/groups/members", 21),
    ("directory-services/local/users", 21),
    ("directory-services/local/users/members", 21),
    ("directory-services/roles", 2),
    ("directory-services/roles/policies/management-access", 36),
    ("directory-services/test", 2),
    ("directory-snapshots", 3),
    ("dns", 2),
    ("drives", 4),
    ("file-systems", 3),
    ("files", 26),
    ("fleets", 36),
    ("fleets/fleet-key", 36),
    ("fleets/members", 36),
    ("hardware", 2),
    ("host-groups/protection-groups", 1),
    ("host-groups/space", 1),
    ("host-groups/tags", 34),
    ("host-groups/tags/batch", 34),
    ("hosts/performance/balance", 4),
    ("hosts/protection-groups", 1),
    ("hosts/space", 1),
    ("hosts/tags", 34),
    ("hosts/tags/batch", 34),
    ("kmip", 2),
    ("kmip/test", 2),
    ("log-targets", 35),
    ("log-targets/file", 35),
    ("log-targets/syslog", 35),
    ("log-targets/syslog/settings", 35),
    ("log-targets/syslog/test", 35),
    ("maintenance-windows", 2),
    ("network-interfaces", 4),
    ("network-interfaces/neighbors", 22),
    ("network-interfaces/performance", 4),
    ("network-interfaces/port-details", 16),
    ("offloads", 1),
    ("pod-replica-links", 2),
    ("pod-replica-links/lag", 2),
    ("pod-replica-links/mappings/policies", 32),
    ("pod-replica-links/performance/replication", 2),
    ("pods", 1),
    ("pods/arrays", 1),
    ("pods/members", 36),
    ("pods/performance", 1),
    ("pods/performance/by-array", 1),
    ("pods/performance/replication", 2),
    ("pods/performance/replication/by-array", 2),
    ("pods/space", 1),
    ("pods/tags", 39),
    ("pods/tags/batch", 39),
    ("pods/test", 31),
    ("policies", 3),
    ("policies/alert-watcher", 33),
    ("policies/alert-watcher/members", 33),
    ("policies/alert-watcher/rules", 33),
    ("policies/alert-watcher/rules/test", 33),
    ("policies/audit-file", 35),
    ("policies/audit-file/members", 35),
    ("policies/autodir", 24),
    ("policies/autodir/members", 24),
    ("policies/management-access", 36),
    ("policies/management-access/members", 36),
    ("policies/members", 3),
    ("policies/nfs", 3),
    ("policies/nfs/client-rules", 3),
    ("policies/nfs/members", 3),
    ("policies/password", 34),
    ("policies/quota", 7),
    ("policies/quota/members", 7),
    ("policies/quota/rules", 7),
    ("policies/smb", 3),
    ("policies/smb/client-rules", 3),
    ("policies/smb/members", 3),
    ("policies/snapshot", 3),
    ("policies/snapshot/members", 3),
    ("policies/snapshot/rules", 3),
    ("ports", 2),
    ("ports/initiators", 2),
    ("protection-group-snapshots", 1),
    ("protection-group-snapshots/replica", 25),
    ("protection-group-snapshots/test", 25),
    ("protection-group-snapshots/transfer", 1),
    ("protection-groups", 1),
    ("protection-groups/host-groups", 1),
    ("protection-groups/hosts", 1),
    ("protection-groups/performance/replication", 1),
    ("protection-groups/performance/replication/by-array", 1),
    ("protection-groups/space", 1),
    ("protection-groups/tags", 39),
    ("protection-groups/tags/batch", 39),
    ("protection-groups/targets", 1),
    ("protection-groups/volumes", 1),
    ("realms", 36),
    ("realms/performance", 36),
    ("realms/space", 36),
    ("remote-arrays", 36),
    ("remote-pods", 1),
    ("remote-protection-group-snapshots", 1),
    ("remote-protection-group-snapshots/test", 25),
    ("remote-protection-group-snapshots/transfer", 1),
    ("remote-protection-groups", 1),
    ("remote-volume-snapshots", 1),
    ("remote-volume-snapshots/transfer", 1),
    ("sessions", 4),
    ("smi-s", 2),
    ("smtp-servers", 4),
    ("snmp-agents", 4),
    ("snmp-agents/mib", 4),
    ("snmp-managers", 4),
    ("snmp-managers/test", 4),
    ("software", 2),
    ("software-bundle", 5),
    ("software-check", 9),
    ("software-installation-steps", 2),
    ("software-installations", 2),
    ("software-patches", 17),
    ("software-patches/catalog", 17),
    ("software-versions", 9),
    ("sso/saml2/idps", 11),
    ("sso/saml2/idps/test", 11),
    ("subnets", 2),
    ("subscription-assets", 26),
    ("subscriptions", 26),
    ("support", 2),
    ("support-diagnostics/details", 36),
    ("support-diagnostics/settings", 36),
    ("support/test", 2),
    ("syslog-servers", 4),
    ("syslog-servers/settings", 4),
    ("syslog-servers/test", 4),
    ("vchost-connections", 33),
    ("vchosts", 26),
    ("vchosts/certificates", 26),
    ("vchosts/endpoints", 26),
    ("virtual-machine-snapshots", 14),
    ("virtual-machine-volume-snapshots", 35),
    ("virtual-machines", 10),
    ("volume-groups", 1),
    ("volume-groups/performance", 1),
    ("volume-groups/space", 1),
    ("volume-groups/tags", 39),
    ("volume-groups/tags/batch", 39),
    ("volume-groups/volumes", 1),
    ("volume-snapshots/tags", 2),
    ("volume-snapshots/tags/batch", 2),
    ("volume-snapshots/test", 25),
    ("volumes/batch", 32),
    ("volumes/batch/test", 33),
    ("volumes/diff", 9),
    ("volumes/protection-groups", 1),
    ("volumes/tags", 2),
    ("volumes/tags/batch", 2),
    ("volumes/test", 31),
    ("volumes/volume-groups", 1),
];

/// Resource, model field and the first minor version whose model has the field
/// (only fields newer than their endpoint).
pub(crate) const FIELDS: &[(&str, &str, u32)] = &[
    ("admins", "management_access_policies", 36),
    ("api-clients", "access_policies", 36),
    ("array-connections", "encryption", 33),
    ("array-connections", "encryption_mode", 33),
    ("array-connections", "context", 38),
    ("arrays", "encryption", 6),
    ("arrays", "eradication_config", 6),
    ("arrays", "as_of", 26),
    ("arrays", "ntp_symmetric_key", 26),
    ("arrays", "time_zone", 26),
    ("arrays", "context", 38),
    ("arrays/space", "context", 38),
    ("connections", "nsid", 27),
    ("connections", "context", 38),
    ("controllers", "mode_since", 30),
    ("host-groups", "destroyed", 36),
    ("host-groups", "time_remaining", 36),
    ("host-groups", "context", 38),
    ("hosts", "is_local", 1),
    ("hosts", "vlan", 16),
    ("hosts", "destroyed", 36),
    ("hosts", "time_remaining", 36),
    ("hosts", "context", 38),
    ("pods", "link_source_count", 2),
    ("pods", "link_target_count", 2),
    ("pods", "promotion_status", 2),
    ("pods", "requested_promotion_state", 2),
    ("pods", "array_count", 3),
    ("pods", "eradication_config", 13),
    ("pods", "quota_limit", 23),
    ("pods", "members", 36),
    ("pods", "context", 38),
    ("volumes", "promotion_status", 2),
    ("volumes", "requested_promotion_state", 2),
    ("volumes", "priority", 10),
    ("volumes", "priority_adjustment", 10),
    ("volumes", "protocol_endpoint", 33),
    ("volumes", "context", 38),
];

/// Query parameters newer than their operation: resource, method, parameter and the
/// first minor version whose operation has it (the SDK's `*_with_http_info`
/// functions: the `_query_params` each appends).
pub(crate) const PARAMETERS: &[(&str, &str, &str, u32)] = &[
    ("admins", "GET", "expose_public_key", 32),
    ("array-connections", "DELETE", "context_names", 38),
    ("array-connections", "GET", "allow_errors", 38),
    ("array-connections", "GET", "context_names", 38),
    ("array-connections", "PATCH", "refresh", 33),
    ("array-connections", "PATCH", "renew_encryption_key", 33),
    ("array-connections", "PATCH", "context_names", 38),
    ("array-connections", "POST", "context_names", 38),
    ("array-connections/connection-key", "GET", "encrypted", 33),
    ("arrays", "GET", "allow_errors", 38),
    ("arrays", "GET", "context_names", 38),
    ("arrays", "GET", "continuation_token", 38),
    ("arrays", "PATCH", "context_names", 38),
    ("arrays/space", "GET", "allow_errors", 38),
    ("arrays/space", "GET", "context_names", 38),
    ("arrays/space", "GET", "continuation_token", 38),
    ("connections", "DELETE", "volume_ids", 9),
    ("connections", "DELETE", "context_names", 38),
    ("connections", "GET", "continuation_token", 1),
    ("connections", "GET", "protocol_endpoint_ids", 9),
    ("connections", "GET", "volume_ids", 9),
    ("connections", "GET", "allow_errors", 38),
    ("connections", "GET", "context_names", 38),
    ("connections", "POST", "volume_ids", 9),
    ("connections", "POST", "context_names", 38),
    ("container-default-protections", "GET", "allow_errors", 38),
    ("container-default-protections", "GET", "context_names", 38),
    (
        "container-default-protections",
        "PATCH",
        "context_names",
        38,
    ),
    ("host-groups", "DELETE", "context_names", 38),
    ("host-groups", "GET", "continuation_token", 1),
    ("host-groups", "GET", "destroyed", 36),
    ("host-groups", "GET", "allow_errors", 38),
    ("host-groups", "GET", "context_names", 38),
    ("host-groups", "PATCH", "context_names", 38),
    ("host-groups", "POST", "context_names", 38),
    ("host-groups/hosts", "DELETE", "context_names", 38),
    ("host-groups/hosts", "GET", "continuation_token", 1),
    ("host-groups/hosts", "GET", "allow_errors", 38),
    ("host-groups/hosts", "GET", "context_names", 38),
    ("host-groups/hosts", "POST", "context_names", 38),
    ("host-groups/tags", "DELETE", "context_names", 38),
    ("host-groups/tags", "GET", "allow_errors", 38),
    ("host-groups/tags", "GET", "context_names", 38),
    ("host-groups/tags", "GET", "resource_destroyed", 39),
    ("host-groups/tags/batch", "PUT", "context_names", 38),
    ("hosts", "DELETE", "context_names", 38),
    ("hosts", "GET", "continuation_token", 1),
    ("hosts", "GET", "destroyed", 36),
    ("hosts", "GET", "allow_errors", 38),
    ("hosts", "GET", "context_names", 38),
    ("hosts", "PATCH", "context_names", 38),
    ("hosts", "POST", "context_names", 38),
    ("hosts/host-groups", "DELETE", "context_names", 38),
    ("hosts/host-groups", "GET", "continuation_token", 1),
    ("hosts/host-groups", "GET", "allow_errors", 38),
    ("hosts/host-groups", "GET", "context_names", 38),
    ("hosts/host-groups", "POST", "context_names", 38),
    ("hosts/tags", "DELETE", "context_names", 38),
    ("hosts/tags", "GET", "allow_errors", 38),
    ("hosts/tags", "GET", "context_names", 38),
    ("hosts/tags", "GET", "resource_destroyed", 39),
    ("hosts/tags/batch", "PUT", "context_names", 38),
    ("pods", "DELETE", "eradicate_contents", 3),
    ("pods", "DELETE", "context_names", 38),
    ("pods", "GET", "allow_errors", 38),
    ("pods", "GET", "context_names", 38),
    ("pods", "PATCH", "abort_quiesce", 2),
    ("pods", "PATCH", "promote_from", 2),
    ("pods", "PATCH", "quiesce", 2),
    ("pods", "PATCH", "skip_quiesce", 2),
    ("pods", "PATCH", "destroy_contents", 3),
    ("pods", "PATCH", "from_member_ids", 36),
    ("pods", "PATCH", "from_member_names", 36),
    ("pods", "PATCH", "move_with_host_group_names", 36),
    ("pods", "PATCH", "move_with_host_names", 36),
    ("pods", "PATCH", "to_member_ids", 36),
    ("pods", "PATCH", "to_member_names", 36),
    ("pods", "PATCH", "context_names", 38),
    ("pods", "POST", "allow_throttle", 31),
    ("pods", "POST", "context_names", 38),
    ("pods/arrays", "DELETE", "context_names", 38),
    ("pods/arrays", "GET", "allow_errors", 38),
    ("pods/arrays", "GET", "context_names", 38),
    ("pods/arrays", "GET", "continuation_token", 38),
    ("pods/arrays", "POST", "context_names", 38),
    ("policies/management-access", "DELETE", "context_names", 38),
    ("policies/management-access", "GET", "allow_errors", 38),
    ("policies/management-access", "GET", "context_names", 38),
    ("policies/management-access", "PATCH", "context_names", 38),
    ("policies/management-access", "POST", "context_names", 38),
    ("volumes", "DELETE", "context_names", 38),
    ("volumes", "GET", "continuation_token", 1),
    ("volumes", "GET", "allow_errors", 38),
    ("volumes", "GET", "context_names", 38),
    ("volumes", "PATCH", "add_to_protection_group_names", 23),
    ("volumes", "PATCH", "remove_from_protection_group_names", 23),
    ("volumes", "PATCH", "add_to_protection_group_ids", 26),
    ("volumes", "PATCH", "remove_from_protection_group_ids", 26),
    ("volumes", "PATCH", "context_names", 38),
    ("volumes", "POST", "add_to_protection_group_names", 16),
    ("volumes", "POST", "with_default_protection", 16),
    ("volumes", "POST", "add_to_protection_group_ids", 26),
    ("volumes", "POST", "allow_throttle", 31),
    ("volumes", "POST", "context_names", 38),
    ("volumes/batch", "POST", "context_names", 38),
    ("volumes/tags", "DELETE", "context_names", 38),
    ("volumes/tags", "GET", "continuation_token", 3),
    ("volumes/tags", "GET", "namespaces", 3),
    ("volumes/tags", "GET", "allow_errors", 38),
    ("volumes/tags", "GET", "context_names", 38),
    ("volumes/tags/batch", "PUT", "context_names", 38),
];

/// Request-body fields newer than their operation: resource, method, field (`a.b`
/// for `b` inside `a`; the items of a list under the list's name) and the first
/// minor version whose body model has it (the version's own model, as
/// `models/__init__.py` names it, nested models included).
pub(crate) const BODY_FIELDS: &[(&str, &str, &str, u32)] = &[
    ("admins", "PATCH", "management_access_policies", 36),
    ("admins", "PATCH", "management_access_policies.id", 36),
    ("admins", "PATCH", "management_access_policies.name", 36),
    (
        "admins",
        "PATCH",
        "management_access_policies.resource_type",
        36,
    ),
    ("admins", "POST", "management_access_policies", 36),
    ("admins", "POST", "management_access_policies.id", 36),
    ("admins", "POST", "management_access_policies.name", 36),
    (
        "admins",
        "POST",
        "management_access_policies.resource_type",
        36,
    ),
    ("api-clients", "POST", "access_policies", 36),
    ("api-clients", "POST", "access_policies.id", 36),
    ("api-clients", "POST", "access_policies.name", 36),
    ("api-clients", "POST", "access_policies.resource_type", 36),
    ("array-connections", "PATCH", "connection_key", 33),
    ("array-connections", "PATCH", "encryption", 33),
    ("array-connections", "PATCH", "management_address", 33),
    ("array-connections", "PATCH", "replication_addresses", 33),
    ("array-connections", "PATCH", "throttle", 33),
    ("array-connections", "PATCH", "throttle.default_limit", 33),
    ("array-connections", "PATCH", "throttle.window", 33),
    ("array-connections", "PATCH", "throttle.window.end", 33),
    ("array-connections", "PATCH", "throttle.window.start", 33),
    ("array-connections", "PATCH", "throttle.window_limit", 33),
    ("array-connections", "PATCH", "type", 33),
    ("array-connections", "POST", "encryption", 33),
    ("arrays", "PATCH", "encryption", 6),
    ("arrays", "PATCH", "encryption.data_at_rest", 6),
    ("arrays", "PATCH", "encryption.data_at_rest.algorithm", 6),
    ("arrays", "PATCH", "encryption.data_at_rest.enabled", 6),
    ("arrays", "PATCH", "encryption.module_version", 6),
    ("arrays", "PATCH", "eradication_config", 6),
    ("arrays", "PATCH", "eradication_config.eradication_delay", 6),
    (
        "arrays",
        "PATCH",
        "eradication_config.manual_eradication",
        10,
    ),
    ("arrays", "PATCH", "space.used_provisioned", 23),
    ("arrays", "PATCH", "as_of", 26),
    ("arrays", "PATCH", "eradication_config.disabled_delay", 26),
    ("arrays", "PATCH", "eradication_config.enabled_delay", 26),
    ("arrays", "PATCH", "ntp_symmetric_key", 26),
    ("arrays", "PATCH", "space.total_used", 26),
    ("arrays", "PATCH", "time_zone", 26),
    ("arrays", "PATCH", "space.footprint", 34),
    ("arrays", "PATCH", "context", 38),
    ("arrays", "PATCH", "context.id", 38),
    ("arrays", "PATCH", "context.name", 38),
    (
        "container-default-protections",
        "PATCH",
        "default_protections.id",
        26,
    ),
    ("container-default-protections", "PATCH", "context", 38),
    ("container-default-protections", "PATCH", "context.id", 38),
    ("container-default-protections", "PATCH", "context.name", 38),
    ("host-groups", "POST", "tags", 39),
    ("host-groups", "POST", "tags.key", 39),
    ("host-groups", "POST", "tags.namespace", 39),
    ("host-groups", "POST", "tags.resource", 39),
    ("host-groups", "POST", "tags.resource.id", 39),
    ("host-groups", "POST", "tags.resource.name", 39),
    ("host-groups", "POST", "tags.value", 39),
    ("hosts", "PATCH", "vlan", 16),
    ("hosts", "POST", "vlan", 16),
    ("hosts", "POST", "tags", 39),
    ("hosts", "POST", "tags.key", 39),
    ("hosts", "POST", "tags.namespace", 39),
    ("hosts", "POST", "tags.resource", 39),
    ("hosts", "POST", "tags.resource.id", 39),
    ("hosts", "POST", "tags.resource.name", 39),
    ("hosts", "POST", "tags.value", 39),
    ("pods", "PATCH", "requested_promotion_state", 2),
    ("pods", "PATCH", "ignore_usage", 23),
    ("pods", "PATCH", "quota_limit", 23),
    ("pods", "POST", "quota_limit", 23),
    ("pods", "POST", "tags", 39),
    ("pods", "POST", "tags.context", 39),
    ("pods", "POST", "tags.context.id", 39),
    ("pods", "POST", "tags.context.name", 39),
    ("pods", "POST", "tags.copyable", 39),
    ("pods", "POST", "tags.key", 39),
    ("pods", "POST", "tags.namespace", 39),
    ("pods", "POST", "tags.resource", 39),
    ("pods", "POST", "tags.resource.id", 39),
    ("pods", "POST", "tags.resource.name", 39),
    ("pods", "POST", "tags.value", 39),
    ("realms", "POST", "tags", 39),
    ("realms", "POST", "tags.key", 39),
    ("realms", "POST", "tags.namespace", 39),
    ("realms", "POST", "tags.resource", 39),
    ("realms", "POST", "tags.resource.id", 39),
    ("realms", "POST", "tags.resource.name", 39),
    ("realms", "POST", "tags.value", 39),
    ("volumes", "PATCH", "requested_promotion_state", 2),
    ("volumes", "PATCH", "priority_adjustment", 10),
    (
        "volumes",
        "PATCH",
        "priority_adjustment.priority_adjustment_operator",
        10,
    ),
    (
        "volumes",
        "PATCH",
        "priority_adjustment.priority_adjustment_value",
        10,
    ),
    ("volumes", "PATCH", "protocol_endpoint", 33),
    (
        "volumes",
        "PATCH",
        "protocol_endpoint.container_version",
        33,
    ),
    ("volumes", "POST", "priority_adjustment", 10),
    (
        "volumes",
        "POST",
        "priority_adjustment.priority_adjustment_operator",
        10,
    ),
    (
        "volumes",
        "POST",
        "priority_adjustment.priority_adjustment_value",
        10,
    ),
    ("volumes", "POST", "protocol_endpoint", 33),
    ("volumes", "POST", "protocol_endpoint.container_version", 33),
    ("volumes", "POST", "tags", 39),
    ("volumes", "POST", "tags.context", 39),
    ("volumes", "POST", "tags.context.id", 39),
    ("volumes", "POST", "tags.context.name", 39),
    ("volumes", "POST", "tags.copyable", 39),
    ("volumes", "POST", "tags.key", 39),
    ("volumes", "POST", "tags.namespace", 39),
    ("volumes", "POST", "tags.resource", 39),
    ("volumes", "POST", "tags.resource.id", 39),
    ("volumes", "POST", "tags.resource.name", 39),
    ("volumes", "POST", "tags.value", 39),
    ("volumes/batch", "POST", "protocol_endpoint", 33),
    (
        "volumes/batch",
        "POST",
        "protocol_endpoint.container_version",
        33,
    ),
    ("volumes/batch", "POST", "tags.context", 38),
    ("volumes/batch", "POST", "tags.context.id", 38),
    ("volumes/batch", "POST", "tags.context.name", 38),
    ("volumes/tags/batch", "PUT", "context", 38),
    ("volumes/tags/batch", "PUT", "context.id", 38),
    ("volumes/tags/batch", "PUT", "context.name", 38),
];

/// The first minor version that serves `resource`, if it came after 2.0.
pub(crate) fn endpoint_since(resource: &str) -> Option<u32> {
    ENDPOINTS
        .iter()
        .find(|(path, _)| *path == resource)
        .map(|(_, since)| *since)
}

/// Removes from every item of a `{"items": [...]}` answer on `resource` the fields
/// its model does not have yet at `2.minor`.
pub(crate) fn strip(resource: &str, minor: u32, value: &mut Value) {
    // A listing whose `continuation_token` parameter came later cannot hand one
    // out: the next page is then asked for by `offset` (`more_items_remaining`).
    if parameter_since(resource, "GET", "continuation_token").is_some_and(|since| since > minor)
        && let Some(token) = value.get_mut("continuation_token")
    {
        *token = Value::Null;
    }
    let later: Vec<&str> = FIELDS
        .iter()
        .filter(|(r, _, since)| *r == resource && *since > minor)
        .map(|(_, field, _)| *field)
        .collect();
    if later.is_empty() {
        return;
    }
    let Some(items) = value.get_mut("items").and_then(Value::as_array_mut) else {
        return;
    };
    for item in items.iter_mut().filter_map(Value::as_object_mut) {
        for field in &later {
            item.remove(*field);
        }
    }
}

/// The first minor whose `method` on `resource` has the query parameter `key`, when
/// that came after the operation itself.
fn parameter_since(resource: &str, method: &str, key: &str) -> Option<u32> {
    PARAMETERS
        .iter()
        .find(|(r, m, p, _)| *r == resource && *m == method && *p == key)
        .map(|(.., since)| *since)
}

/// The first minor whose `method` on `resource` takes the body field `path`
/// (`a.b` for `b` inside `a`; a list's items as the list), when that came after
/// the operation itself.
fn body_field_since(resource: &str, method: &str, path: &str) -> Option<u32> {
    BODY_FIELDS
        .iter()
        .find(|(r, m, f, _)| *r == resource && *m == method && *f == path)
        .map(|(.., since)| *since)
}

/// Refuses a request that uses a query parameter or a body field its operation
/// gained after `2.minor`, as the array of that version answers a parameter or
/// field it does not have (400 naming it). A body that is not JSON is left to the
/// handler.
pub(crate) fn refuse_later(
    resource: &str,
    method: &str,
    minor: u32,
    query: &Query,
    body: &[u8],
) -> Result<(), Fail> {
    if let Some(key) = query
        .keys()
        .find(|k| parameter_since(resource, method, k).is_some_and(|since| since > minor))
    {
        return Err(unknown_parameter(key));
    }
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return Ok(());
    };
    let mut later = None;
    walk_fields(&value, "", &mut |path| {
        if later.is_none()
            && body_field_since(resource, method, path).is_some_and(|since| since > minor)
        {
            later = Some(path.to_string());
        }
    });
    match later {
        Some(path) => Err(unknown_field(&path)),
        None => Ok(()),
    }
}

/// The answer to a body field the operation does not have at the version asked.
fn unknown_field(path: &str) -> Fail {
    bad_request(
        Some(path),
        format!("Invalid field {path:?} in the request body for this endpoint."),
    )
}

/// Calls `seen` with the dotted path of every object key in `value`, nested ones
/// included; a list's items are walked under the list's own path. Depth is bounded
/// by the request body's size (4 MiB) and serde_json's recursion limit (128).
fn walk_fields(value: &Value, prefix: &str, seen: &mut dyn FnMut(&str)) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                seen(&path);
                walk_fields(inner, &path, seen);
            }
        }
        Value::Array(items) => {
            for item in items {
                walk_fields(item, prefix, seen);
            }
        }
        _ => {}
    }
}

/// The `GET /api/api_version` list of an array whose newest REST version is
/// `2.top`: REST 1.17 to 1.19, then 2.0 to `2.top`, ascending, as real arrays list
/// them.
pub fn versions_up_to(top: u32) -> Vec<String> {
    let mut v: Vec<String> = ["1.17", "1.18", "1.19"].map(String::from).to_vec();
    v.extend((OLDEST_MINOR..=top).map(|n| format!("2.{n}")));
    v
}

/// The minor of a `--rest-version` value `2.N`, `N` at most the simulator's top
/// version (its models are those of [`super::TOP_REST_VERSION`]; it cannot
/// answer as a newer array).
pub fn parse_rest_version(text: &str) -> Result<u32, String> {
    let top = top_minor();
    let minor = text
        .strip_prefix("2.")
        .filter(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
        .filter(|m| m.len() == 1 || !m.starts_with('0'))
        .and_then(|m| m.parse::<u32>().ok())
        .ok_or_else(|| format!("REST version {text:?} is not of the form 2.N"))?;
    if minor > top {
        return Err(format!(
            "REST version {text} is newer than the simulator's newest, 2.{top}"
        ));
    }
    Ok(minor)
}

/// The minor of [`super::TOP_REST_VERSION`].
pub(crate) fn top_minor() -> u32 {
    super::TOP_REST_VERSION
        .strip_prefix("2.")
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_and_their_parsing() {
        assert_eq!(
            versions_up_to(2),
            ["1.17", "1.18", "1.19", "2.0", "2.1", "2.2"]
        );
        assert_eq!(
            versions_up_to(top_minor()),
            super::super::default_versions()
        );
        assert_eq!(parse_rest_version("2.36"), Ok(36));
        assert_eq!(parse_rest_version("2.0"), Ok(0));
        for bad in ["2.40", "2.036", "3.0", "2.", "2.x", "1.19", "2.-1"] {
            assert!(parse_rest_version(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn endpoints_and_fields_follow_the_table() {
        assert_eq!(endpoint_since("realms"), Some(36));
        assert_eq!(endpoint_since("volumes/batch"), Some(32));
        assert_eq!(endpoint_since("volumes"), None);
        let mut answer = json!({"items": [{"name": "h1", "vlan": "any", "destroyed": false,
                                          "context": {"name": "sim"}}]});
        strip("hosts", 36, &mut answer);
        assert_eq!(
            answer["items"][0],
            json!({"name": "h1", "vlan": "any", "destroyed": false})
        );
        strip("hosts", 15, &mut answer);
        assert_eq!(answer["items"][0], json!({"name": "h1"}));
        // `continuation_token` on volumes/tags came with 2.3: none is handed out
        // before (the client then pages by offset).
        let page =
            || json!({"items": [], "continuation_token": "t1", "more_items_remaining": true});
        let mut old = page();
        strip("volumes/tags", 2, &mut old);
        assert_eq!(old["continuation_token"], Value::Null);
        let mut new = page();
        strip("volumes/tags", 3, &mut new);
        assert_eq!(new["continuation_token"], "t1");
        // Errors and other shapes are left alone.
        let mut error = json!({"errors": [{"message": "x"}]});
        strip("hosts", 0, &mut error);
        assert_eq!(error, json!({"errors": [{"message": "x"}]}));
    }

    /// The context a refusal names, or `None` when the request passes.
    fn refused_at(
        resource: &str,
        method: &str,
        minor: u32,
        query: &str,
        body: &str,
    ) -> Option<String> {
        let query = Query::parse(Some(query));
        match refuse_later(resource, method, minor, &query, body.as_bytes()) {
            Ok(()) => None,
            Err(Fail::Reply(reply)) => {
                assert_eq!(reply.status, hyper::StatusCode::BAD_REQUEST);
                let v: Value = serde_json::from_slice(&reply.body).unwrap();
                v["errors"][0]["context"].as_str().map(str::to_string)
            }
            Err(_) => panic!("no answer"),
        }
    }

    #[test]
    fn later_parameters_and_body_fields_are_refused_naming_them() {
        // `destroyed` on GET /hosts came with 2.36; other methods do not have it.
        assert_eq!(
            refused_at("hosts", "GET", 35, "destroyed=false", ""),
            Some("destroyed".into())
        );
        assert_eq!(refused_at("hosts", "GET", 36, "destroyed=false", ""), None);
        assert_eq!(refused_at("hosts", "GET", 2, "names=h1&limit=3", ""), None);
        // Tags in a create body (2.39), nested in a list: the list is named.
        let volume = r#"{"provisioned": 1048576, "tags": [{"key": "k", "value": "v"}]}"#;
        assert_eq!(
            refused_at("volumes", "POST", 38, "names=v1", volume),
            Some("tags".into())
        );
        assert_eq!(refused_at("volumes", "POST", 39, "names=v1", volume), None);
        // A nested field newer than its parent (EradicationConfig 2.26).
        let delays = r#"{"eradication_config": {"disabled_delay": 86400000}}"#;
        assert_eq!(
            refused_at("arrays", "PATCH", 25, "", delays),
            Some("eradication_config.disabled_delay".into())
        );
        assert_eq!(refused_at("arrays", "PATCH", 26, "", delays), None);
        // A list body: each item's fields (volumes/batch tags' context 2.38).
        let batch = r#"[{"name": "a", "provisioned": 1, "tags": [{"key": "k", "context": {"name": "x"}}]}]"#;
        assert_eq!(
            refused_at("volumes/batch", "POST", 37, "", batch),
            Some("tags.context".into())
        );
        // Not JSON: left to the handler's own answer.
        assert_eq!(refused_at("volumes", "POST", 2, "", "{not json"), None);
    }
}
