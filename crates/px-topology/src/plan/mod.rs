//! Desired state minus observed state: the ordered list of changes `apply` would make.
//!
//! [`observe`] reads only the objects a [`DesiredState`](crate::desired::DesiredState)
//! names plus the objects tagged for the tenant, in as few dependent rounds as the API
//! allows. [`plan`] is a pure function of the desired and observed states, so the same
//! inputs always give the same plan and it can be tested without an array.
//!
//! One file per object kind holds that kind's reads and its part of the diff:
//! `pods`, `host_groups`, `hosts`, `volumes`, `drives` (dynamically provisioned),
//! `connections`, `token` and `realm`. Below them: `change` (the plan's
//! vocabulary), `ownership` (whose an object is, from pxfa's tags) and `observed`
//! (what was read). Above them: `observe` (the read rounds), `diff` (the changes in
//! the order they take effect) and `destroy` (what removing the tenant takes).
//!
//! A plan never touches an object pxfa does not own: a same-named object without
//! pxfa's tags is a *conflict* that blocks the whole plan (unless the admin adopts it),
//! and an object tagged for another tenant is always a conflict. Changes that would
//! lose data (shrinking a volume) are *refused* unless explicitly allowed.

mod change;
mod claim;
mod connections;
mod destroy;
mod diff;
mod document;
mod drives;
mod host_groups;
mod hosts;
pub(crate) mod lifecycle;
mod observe;
mod observed;
pub(crate) mod ownership;
mod pods;
mod realm;
mod token;
mod volumes;

pub(crate) use change::MAX_NAMES_PER_CALL;
pub(crate) use change::Payload;
pub use change::{
    Action, Blocker, Change, Detail, HostOwner, Kind, NodeHost, Plan, PlanOptions, Summary,
};
pub use claim::{Claim, UnclaimedObject, find_unclaimed};
pub(crate) use connections::{list_connections_of, row_target};
pub(crate) use destroy::plan_destroy;
pub use destroy::{DestroyError, DestroyPlan, DestroyScope};
pub(crate) use destroy::{Removal, is_held_dynamic_drive};
pub(crate) use diff::{plan, plan_drive_adoption};
pub use document::PlanDocument;
pub use drives::{
    Binding, BoundDrive, CLAIM_DETAIL, DriveLocator, LocateError, ObservedDrives,
    is_fada_volume_for,
};
pub(crate) use observe::{locate_drives, observe};
pub use observed::{Observed, Orphans};
pub(crate) use ownership::lookup_tags;
pub(crate) use ownership::{Owner, kind_label, marked_tenant, owner};
pub use ownership::{TagIndex, TokenClaimants};
pub(crate) use pods::lookup_pods;
pub(crate) use realm::require_realm_support;
pub use realm::{RealmGateError, RealmState};
pub use token::{JournalVerdict, TokenState};
pub(crate) use token::{hold_new_token, read_token_state, token_user_claimants};
pub(crate) use volumes::lookup_volumes;
