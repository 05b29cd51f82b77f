//! The realm's operations: the realm itself, the access policy and the realm user,
//! each one REST call. A lost answer is settled by the `flasharray::Settling` layer
//! the caller wrapped the array in, as for the other operations in [`super::ops`].

use flasharray::models::{
    AdminPost, ManagementAccessPolicyPost, ManagementAccessRule, RealmPatch, RealmPost,
    ReferenceWithType,
};
use flasharray::{FlashArray, RealmName, Result};

/// One realm write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RealmOp {
    /// `POST /realms`.
    Create { name: RealmName },
    /// `PATCH /realms` `destroyed: false`.
    Recover { name: RealmName },
    /// `PATCH /realms` `destroyed: true`: only ever sent for an empty realm (its pods
    /// go first), so `destroy_contents` is never set.
    Destroy { name: RealmName },
    /// `DELETE /realms`: eradicates the destroyed, empty realm.
    Eradicate { name: RealmName },
    /// `POST /policies/management-access`: `role` inside `realm`.
    CreatePolicy {
        name: String,
        realm: RealmName,
        role: String,
        aggregation_strategy: String,
    },
    /// `DELETE /policies/management-access`.
    DeletePolicy { name: String },
    /// `POST /admins`: a token-only user holding `policy`.
    CreateUser { admin: String, policy: String },
    /// `DELETE /admins` (its API token goes with it).
    DeleteUser { admin: String },
}

impl RealmOp {
    /// Words for error messages and logs.
    pub(super) fn describe(&self) -> String {
        match self {
            RealmOp::Create { name } => format!("create realm {name}"),
            RealmOp::Recover { name } => format!("recover realm {name}"),
            RealmOp::Destroy { name } => format!("destroy realm {name}"),
            RealmOp::Eradicate { name } => format!("eradicate realm {name}"),
            RealmOp::CreatePolicy { name, realm, .. } => {
                format!("create access policy {name} for realm {realm}")
            }
            RealmOp::DeletePolicy { name } => format!("delete access policy {name}"),
            RealmOp::CreateUser { admin, .. } => format!("create realm user {admin}"),
            RealmOp::DeleteUser { admin } => format!("delete realm user {admin}"),
        }
    }

    /// Objects written when the operation succeeds: `(created, destroyed, recovered)`.
    pub(super) fn counts(&self) -> (usize, usize, usize) {
        match self {
            RealmOp::Create { .. } | RealmOp::CreatePolicy { .. } | RealmOp::CreateUser { .. } => {
                (1, 0, 0)
            }
            RealmOp::Recover { .. } => (0, 0, 1),
            RealmOp::Destroy { .. }
            | RealmOp::Eradicate { .. }
            | RealmOp::DeletePolicy { .. }
            | RealmOp::DeleteUser { .. } => (0, 1, 0),
        }
    }

    /// Sends the operation once.
    pub(super) async fn send(&self, array: &dyn FlashArray) -> Result<()> {
        match self {
            RealmOp::Create { name } => {
                array
                    .create_realms(std::slice::from_ref(name), &RealmPost::default())
                    .await?;
            }
            RealmOp::Recover { name } | RealmOp::Destroy { name } => {
                let patch =
                    RealmPatch::default().with_destroyed(matches!(self, RealmOp::Destroy { .. }));
                array
                    .patch_realms(std::slice::from_ref(name), &patch, false)
                    .await?;
            }
            RealmOp::Eradicate { name } => {
                array
                    .eradicate_realms(std::slice::from_ref(name), false)
                    .await?
            }
            RealmOp::CreatePolicy {
                name,
                realm,
                role,
                aggregation_strategy,
            } => {
                let body = ManagementAccessPolicyPost::default()
                    .with_enabled(true)
                    .with_aggregation_strategy(aggregation_strategy.as_str().into())
                    .with_rules(vec![ManagementAccessRule::in_realm(role, realm.as_str())]);
                array
                    .create_management_access_policies(std::slice::from_ref(name), &body)
                    .await?;
            }
            RealmOp::DeletePolicy { name } => {
                array
                    .delete_management_access_policies(std::slice::from_ref(name))
                    .await?
            }
            RealmOp::CreateUser { admin, policy } => {
                let body = AdminPost::default().with_management_access_policies(vec![
                    ReferenceWithType::management_access_policy(policy),
                ]);
                array
                    .create_admins(std::slice::from_ref(admin), &body)
                    .await?;
            }
            RealmOp::DeleteUser { admin } => {
                array.delete_admins(std::slice::from_ref(admin)).await?
            }
        }
        Ok(())
    }
}
