//! The operations of the [`flasharray::FlashArray`] trait as values, so that calls,
//! faults and call statistics name them with a type instead of a string.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One operation of the [`flasharray::FlashArray`] trait. Its serde and `Display`
/// form is the trait method's name (`create_volumes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Op {
    /// `list_volumes`: `GET /volumes`.
    ListVolumes,
    /// `create_volumes`: `POST /volumes`.
    CreateVolumes,
    /// `create_volumes_batch`: `POST /volumes/batch`.
    CreateVolumesBatch,
    /// `patch_volumes`: `PATCH /volumes`.
    PatchVolumes,
    /// `eradicate_volumes`: `DELETE /volumes`.
    EradicateVolumes,
    /// `list_tags`: `GET /tags`.
    ListTags,
    /// `set_tags`: `PUT /tags/batch`.
    SetTags,
    /// `delete_tags`: `DELETE /tags`.
    DeleteTags,
    /// `list_hosts`: `GET /hosts`.
    ListHosts,
    /// `create_hosts`: `POST /hosts`.
    CreateHosts,
    /// `patch_hosts`: `PATCH /hosts`.
    PatchHosts,
    /// `delete_hosts`: `DELETE /hosts`.
    DeleteHosts,
    /// `list_host_groups`: `GET /host-groups`.
    ListHostGroups,
    /// `create_host_groups`: `POST /host-groups`.
    CreateHostGroups,
    /// `delete_host_groups`: `DELETE /host-groups`.
    DeleteHostGroups,
    /// `list_host_group_members`: `GET /host-groups/hosts`.
    ListHostGroupMembers,
    /// `add_host_group_members`: `POST /host-groups/hosts`.
    AddHostGroupMembers,
    /// `remove_host_group_members`: `DELETE /host-groups/hosts`.
    RemoveHostGroupMembers,
    /// `list_connections`: `GET /connections`.
    ListConnections,
    /// `create_connections`: `POST /connections`.
    CreateConnections,
    /// `delete_connections`: `DELETE /connections`.
    DeleteConnections,
    /// `list_pods`: `GET /pods`.
    ListPods,
    /// `create_pods`: `POST /pods`.
    CreatePods,
    /// `patch_pods`: `PATCH /pods`.
    PatchPods,
    /// `eradicate_pods`: `DELETE /pods`.
    EradicatePods,
    /// `list_pod_arrays`: `GET /pods/arrays`.
    ListPodArrays,
    /// `get_array`: `GET /arrays`.
    GetArray,
    /// `get_array_space`: `GET /arrays/space`.
    GetArraySpace,
    /// `list_api_tokens`: `GET /admins/api-tokens`.
    ListApiTokens,
    /// `create_api_token`: `POST /admins/api-tokens`.
    CreateApiToken,
    /// `delete_api_token`: `DELETE /admins/api-tokens`.
    DeleteApiToken,
    /// `list_realms`: `GET /realms`.
    ListRealms,
    /// `create_realms`: `POST /realms`.
    CreateRealms,
    /// `patch_realms`: `PATCH /realms`.
    PatchRealms,
    /// `eradicate_realms`: `DELETE /realms`.
    EradicateRealms,
    /// `list_management_access_policies`: `GET /policies/management-access`.
    ListManagementAccessPolicies,
    /// `create_management_access_policies`: `POST /policies/management-access`.
    CreateManagementAccessPolicies,
    /// `delete_management_access_policies`: `DELETE /policies/management-access`.
    DeleteManagementAccessPolicies,
    /// `list_admins`: `GET /admins`.
    ListAdmins,
    /// `create_admins`: `POST /admins`.
    CreateAdmins,
    /// `delete_admins`: `DELETE /admins`.
    DeleteAdmins,
}

impl Op {
    /// Every operation, in trait order.
    pub const ALL: &[Op] = &[
        Op::ListVolumes,
        Op::CreateVolumes,
        Op::CreateVolumesBatch,
        Op::PatchVolumes,
        Op::EradicateVolumes,
        Op::ListTags,
        Op::SetTags,
        Op::DeleteTags,
        Op::ListHosts,
        Op::CreateHosts,
        Op::PatchHosts,
        Op::DeleteHosts,
        Op::ListHostGroups,
        Op::CreateHostGroups,
        Op::DeleteHostGroups,
        Op::ListHostGroupMembers,
        Op::AddHostGroupMembers,
        Op::RemoveHostGroupMembers,
        Op::ListConnections,
        Op::CreateConnections,
        Op::DeleteConnections,
        Op::ListPods,
        Op::CreatePods,
        Op::PatchPods,
        Op::EradicatePods,
        Op::ListPodArrays,
        Op::GetArray,
        Op::GetArraySpace,
        Op::ListApiTokens,
        Op::CreateApiToken,
        Op::DeleteApiToken,
        Op::ListRealms,
        Op::CreateRealms,
        Op::PatchRealms,
        Op::EradicateRealms,
        Op::ListManagementAccessPolicies,
        Op::CreateManagementAccessPolicies,
        Op::DeleteManagementAccessPolicies,
        Op::ListAdmins,
        Op::CreateAdmins,
        Op::DeleteAdmins,
    ];

    /// The trait method's name, e.g. `create_volumes`.
    pub fn method(self) -> &'static str {
        self.describe().0
    }

    /// The REST request the operation stands for, e.g. `POST /volumes`; errors name
    /// their operation this way, as the REST client's errors do.
    pub fn request(self) -> &'static str {
        self.describe().1
    }

    /// Whether the operation may change the array (everything but `GET`). Write
    /// faults count only these.
    pub fn is_write(self) -> bool {
        !self.request().starts_with("GET ")
    }

    /// One table, so that a method name and its request cannot drift apart.
    fn describe(self) -> (&'static str, &'static str) {
        match self {
            Op::ListVolumes => ("list_volumes", "GET /volumes"),
            Op::CreateVolumes => ("create_volumes", "POST /volumes"),
            Op::CreateVolumesBatch => ("create_volumes_batch", "POST /volumes/batch"),
            Op::PatchVolumes => ("patch_volumes", "PATCH /volumes"),
            Op::EradicateVolumes => ("eradicate_volumes", "DELETE /volumes"),
            Op::ListTags => ("list_tags", "GET /tags"),
            Op::SetTags => ("set_tags", "PUT /tags/batch"),
            Op::DeleteTags => ("delete_tags", "DELETE /tags"),
            Op::ListHosts => ("list_hosts", "GET /hosts"),
            Op::CreateHosts => ("create_hosts", "POST /hosts"),
            Op::PatchHosts => ("patch_hosts", "PATCH /hosts"),
            Op::DeleteHosts => ("delete_hosts", "DELETE /hosts"),
            Op::ListHostGroups => ("list_host_groups", "GET /host-groups"),
            Op::CreateHostGroups => ("create_host_groups", "POST /host-groups"),
            Op::DeleteHostGroups => ("delete_host_groups", "DELETE /host-groups"),
            Op::ListHostGroupMembers => ("list_host_group_members", "GET /host-groups/hosts"),
            Op::AddHostGroupMembers => ("add_host_group_members", "POST /host-groups/hosts"),
            Op::RemoveHostGroupMembers => {
                ("remove_host_group_members", "DELETE /host-groups/hosts")
            }
            Op::ListConnections => ("list_connections", "GET /connections"),
            Op::CreateConnections => ("create_connections", "POST /connections"),
            Op::DeleteConnections => ("delete_connections", "DELETE /connections"),
            Op::ListPods => ("list_pods", "GET /pods"),
            Op::CreatePods => ("create_pods", "POST /pods"),
            Op::PatchPods => ("patch_pods", "PATCH /pods"),
            Op::EradicatePods => ("eradicate_pods", "DELETE /pods"),
            Op::ListPodArrays => ("list_pod_arrays", "GET /pods/arrays"),
            Op::GetArray => ("get_array", "GET /arrays"),
            Op::GetArraySpace => ("get_array_space", "GET /arrays/space"),
            Op::ListApiTokens => ("list_api_tokens", "GET /admins/api-tokens"),
            Op::CreateApiToken => ("create_api_token", "POST /admins/api-tokens"),
            Op::DeleteApiToken => ("delete_api_token", "DELETE /admins/api-tokens"),
            Op::ListRealms => ("list_realms", "GET /realms"),
            Op::CreateRealms => ("create_realms", "POST /realms"),
            Op::PatchRealms => ("patch_realms", "PATCH /realms"),
            Op::EradicateRealms => ("eradicate_realms", "DELETE /realms"),
            Op::ListManagementAccessPolicies => (
                "list_management_access_policies",
                "GET /policies/management-access",
            ),
            Op::CreateManagementAccessPolicies => (
                "create_management_access_policies",
                "POST /policies/management-access",
            ),
            Op::DeleteManagementAccessPolicies => (
                "delete_management_access_policies",
                "DELETE /policies/management-access",
            ),
            Op::ListAdmins => ("list_admins", "GET /admins"),
            Op::CreateAdmins => ("create_admins", "POST /admins"),
            Op::DeleteAdmins => ("delete_admins", "DELETE /admins"),
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_and_display_use_the_method_name() {
        for &op in Op::ALL {
            let json = serde_json::to_value(op).unwrap();
            assert_eq!(json, serde_json::Value::from(op.method()), "{op:?}");
            assert_eq!(op.to_string(), op.method());
            let back: Op = serde_json::from_value(json).unwrap();
            assert_eq!(back, op);
        }
    }

    #[test]
    fn names_and_requests_are_unique_and_reads_are_gets() {
        let mut methods: Vec<_> = Op::ALL.iter().map(|o| o.method()).collect();
        let mut requests: Vec<_> = Op::ALL.iter().map(|o| o.request()).collect();
        methods.sort_unstable();
        methods.dedup();
        requests.sort_unstable();
        requests.dedup();
        assert_eq!(methods.len(), Op::ALL.len());
        assert_eq!(requests.len(), Op::ALL.len());
        assert!(!Op::ListApiTokens.is_write());
        assert!(!Op::GetArraySpace.is_write());
        assert!(Op::SetTags.is_write());
        assert!(Op::RemoveHostGroupMembers.is_write());
        let writes = Op::ALL.iter().filter(|o| o.is_write()).count();
        assert_eq!(writes, 27);
    }
}
