//! The tenant's API token: whether its admin has one, and its part of the plan.
//!
//! Tokens carry no tags, so the token journal (`crate::token_journal`) is what tells a
//! token pxfa created from one someone else did.

use flasharray::{ErrorKind, FlashArray, Result, TagResource};

use super::change::{Action, Blocker, Change, Kind, Payload, Plan, Summary};
use super::ownership::{TagIndex, TokenClaimants};
use crate::desired::DesiredState;

/// The token admin as the array reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenState {
    /// The desired state asks for no token; nothing was read.
    #[default]
    NotWanted,
    /// The admin user does not exist on the array.
    AdminMissing,
    /// The admin exists and has no API token.
    NoToken,
    /// The admin already has an API token.
    HasToken,
}

/// What the token journal (`crate::token_journal`) says about the observed token; filled in
/// by `token_journal::read_journal`, [`JournalVerdict::None`] when no journal was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JournalVerdict {
    /// No entry (or no journal read).
    #[default]
    None,
    /// An entry that does not match the array (another token, or none): ignored.
    Stale,
    /// The array holds the token the journal holds, not yet delivered: deliver it
    /// from the journal without an array write.
    PendingDelivery,
    /// The array holds a token created within the window of an intent whose answer
    /// never reached the journal: provably ours, its value never left the array.
    Interrupted,
}

/// The desired token user's token on the array, and when it was created
/// (`NotWanted` when the desired state wants no token; the admin missing is
/// [`TokenState::AdminMissing`], not an error).
pub(crate) async fn read_token_state(
    array: &dyn FlashArray,
    desired: &DesiredState,
) -> Result<(TokenState, Option<u64>)> {
    read_token(array, desired)
        .await
        .map(|t| (t.state, t.created_at))
}

/// The desired token user's token as the array lists it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TokenRead {
    pub(crate) state: TokenState,
    /// ms since the epoch, the array's clock.
    pub(crate) created_at: Option<u64>,
    /// ms since the epoch, the array's clock; `None`: never, or no token.
    pub(crate) expires_at: Option<u64>,
}

/// [`read_token_state`] with the token's expiry.
pub(crate) async fn read_token(
    array: &dyn FlashArray,
    desired: &DesiredState,
) -> Result<TokenRead> {
    let Some(tok) = &desired.api_token else {
        return Ok(TokenRead {
            state: TokenState::NotWanted,
            ..TokenRead::default()
        });
    };
    match array
        .list_api_tokens(std::slice::from_ref(&tok.admin), false)
        .await
    {
        Ok(items) => {
            let found = items.iter().find(|a| {
                a.name.eq_ignore_ascii_case(&tok.admin)
                    && (a.api_token.created_at.is_some()
                        || a.api_token.token.is_some()
                        || a.api_token.expires_at.is_some())
            });
            Ok(match found {
                Some(a) => TokenRead {
                    state: TokenState::HasToken,
                    created_at: a.api_token.created_at,
                    expires_at: a.api_token.expires_at,
                },
                None => TokenRead {
                    state: TokenState::NoToken,
                    ..TokenRead::default()
                },
            })
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(TokenRead {
            state: TokenState::AdminMissing,
            ..TokenRead::default()
        }),
        Err(e) => Err(e),
    }
}

/// The tenants other than `desired`'s whose objects are on the array and that may
/// use `desired`'s token user: their pod's `token-user` tag names it, or it is their
/// default token user and no tag of theirs names another (see
/// [`TagIndex::note_token_claimants`]): what rotating or deleting that user's token
/// would take from them. Empty when the desired state wants no token.
pub(crate) async fn token_user_claimants(
    array: &dyn FlashArray,
    desired: &DesiredState,
) -> Result<TokenClaimants> {
    let Some(t) = &desired.api_token else {
        return Ok(TokenClaimants::default());
    };
    let mut index = TagIndex::default();
    for kind in [
        TagResource::Volume,
        TagResource::Host,
        TagResource::HostGroup,
        TagResource::Pod,
    ] {
        let tags = super::ownership::lookup_tags(array, kind, &[]).await?;
        index.note_token_claimants(&tags, &desired.tenant, &t.admin);
    }
    Ok(index.token_claimants())
}

/// The conflict of a token user that another tenant may use (see
/// [`TagIndex::note_token_claimants`]), refused before any write. A user another
/// tenant's pod names (its `token-user` tag) is refused to every other tenant
/// unless its own pod names it too (both have been using it: neither is renamed);
/// one that is another tenant's default name only is refused to a tenant with no
/// objects on the array yet, while one that has objects keeps the user it has been
/// using.
pub(crate) fn claimed_elsewhere(desired: &DesiredState, tags: &TagIndex) -> Option<Blocker> {
    let t = desired.api_token.as_ref()?;
    let others = tags.token_claimants();
    let id = &desired.tenant;
    let keeps = if others.any_tagged() {
        tags.records_token_user(id, &t.admin)
    } else {
        tags.owns_objects(id)
    };
    if others.is_empty() || keeps {
        return None;
    }
    let why = if others.any_by_default() {
        " (a default token user derives from the tenant name alone)"
    } else {
        ""
    };
    Some(Blocker {
        kind: Kind::ApiToken,
        name: t.admin.clone(),
        reason: format!(
            "array user {} is {others}, whose objects are on the array{why}",
            t.admin
        ),
        resolution: format!(
            "name a token user of this tenant's own in spec.array.tokenUser (e.g. pxfa-{}-{})",
            id.namespace, id.name
        ),
    })
}

/// The token's part of a plan: its changes, or the conflict of a missing admin.
/// `creates_admin`: the plan creates the realm user, which has no token yet.
pub(crate) fn plan_token(
    desired: &DesiredState,
    (token, journal): (TokenState, JournalVerdict),
    creates_admin: bool,
) -> std::result::Result<Vec<Change>, Blocker> {
    let Some(t) = &desired.api_token else {
        return Ok(Vec::new());
    };
    let payload = Payload::Token {
        admin: t.admin.clone(),
        lifetime: t.lifetime,
    };
    let create = |reason: &str| {
        let mut c = Change::new(Action::Create, Kind::ApiToken, &t.admin, reason);
        if let Some(l) = t.lifetime {
            c = c.detail("lifetime", l);
        }
        c.with(payload.clone())
    };
    Ok(match token {
        TokenState::AdminMissing if creates_admin => vec![
            Change::new(Action::Create, Kind::ApiToken, &t.admin, "the realm user is new")
                .with(payload.clone()),
        ],
        TokenState::AdminMissing => {
            return Err(Blocker {
                kind: Kind::ApiToken,
                name: t.admin.clone(),
                reason: "the admin user does not exist on the array; create it (or name another) first".into(),
                resolution: "create the admin on the array, or name an existing one".into(),
            });
        }
        TokenState::NoToken => vec![create("the admin has no API token")],
        TokenState::HasToken => match journal {
            // The token journal holds it: delivered by apply, no array write.
            JournalVerdict::PendingDelivery => vec![Change::new(
                Action::Update,
                Kind::ApiToken,
                &t.admin,
                "deliver (pending): created by an earlier apply and never delivered; the token journal holds it",
            )],
            // Created by an apply that died before the answer reached the journal:
            // nobody has the value, so it is replaced (delete, then create).
            JournalVerdict::Interrupted => vec![
                Change::new(
                    Action::Delete,
                    Kind::ApiToken,
                    &t.admin,
                    "created by an interrupted apply, never delivered (its value never left the array): replaced",
                )
                .with(payload.clone()),
                create("replaces the token an interrupted apply created"),
            ],
            JournalVerdict::None | JournalVerdict::Stale => vec![Change::new(
                Action::NoOp,
                Kind::ApiToken,
                &t.admin,
                "the admin already has an API token; pxfa keeps it (`pxfa token rotate` replaces it without a gap)",
            )],
        },
        TokenState::NotWanted => Vec::new(),
    })
}

/// `plan` with its API token creation held back because nothing would keep the
/// token's value (`why`): the creation becomes one pending step saying so, and the
/// deletion of an interrupted token it would replace is dropped (that token stays,
/// and the journal with it, until the replacement can be kept). Nothing else changes:
/// the rest of the plan applies, and a later plan creates the token.
pub(crate) fn hold_new_token(mut plan: Plan, why: &str) -> Plan {
    let is_token = |c: &Change, a: Action| c.kind == Kind::ApiToken && c.action == a;
    let Some(created) = plan
        .changes
        .iter()
        .position(|c| is_token(c, Action::Create))
    else {
        return plan;
    };
    let held = &mut plan.changes[created];
    held.action = Action::Pending;
    held.reason = format!(
        "held: {why}; created once the tenant cluster can keep it (the array shows a token's value only once)"
    );
    held.payload = Payload::None;
    held.details.insert("held".into(), why.into());
    plan.changes.retain(|c| !is_token(c, Action::Delete));
    plan.summary = Summary::of(&plan.changes);
    plan
}
