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

/// The oldest REST 2.x version the simulator can be asked to be: 2.0, the first.
pub const OLDEST_MINOR: u32 = 0;

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
pub fn top_minor() -> u32 {
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
        // Errors and other shapes are left alone.
        let mut error = json!({"errors": [{"message": "x"}]});
        strip("hosts", 0, &mut error);
        assert_eq!(error, json!({"errors": [{"message": "x"}]}));
    }
}
