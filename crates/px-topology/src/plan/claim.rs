//! Claiming an earlier pxfa's objects for one namespace.
//!
//! pxfa before tenant identities tagged a tenant's objects `tenant=<name>` alone. Two
//! namespaces may both hold a tenant of that name, so pxfa cannot tell whose such an
//! object is: it is nobody's ([`super::Owner::Unclaimed`]) until the admin claims
//! it for one namespace (`pxfa claim -f SPEC`), which adds the
//! `tenant-namespace` tag and changes nothing else. Until then plan, apply and
//! destroy leave it alone and say why.

use flasharray::models::Tag;
use flasharray::{FlashArray, Result, TagResource};
use futures_util::future::try_join_all;
use serde::Serialize;

use super::change::MAX_NAMES_PER_CALL;
use super::ownership::{TagIndex, kind_label, lookup_tags};
use crate::desired::{TAG_NAMESPACE, TAG_TENANT_NAMESPACE, TenantId};

/// The kinds pxfa tags, in the order a claim lists them.
const KINDS: [TagResource; 4] = [
    TagResource::Pod,
    TagResource::HostGroup,
    TagResource::Host,
    TagResource::Volume,
];

/// One object an earlier pxfa tagged for the tenant's name without a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnclaimedObject {
    /// `pod`, `host group`, `host` or `volume`.
    pub kind: &'static str,
    /// The object, as the array spells it.
    pub name: String,
    #[serde(skip)]
    resource: TagResource,
}

/// What a claim found, or took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Claim {
    /// The tenant the objects are claimed for, `namespace/name`.
    pub tenant: TenantId,
    /// The objects (destroyed ones included: their tags stay until eradication).
    pub objects: Vec<UnclaimedObject>,
}

/// The objects an earlier pxfa tagged `tenant=<tenant's name>` without a
/// namespace. Reads only (every `pxfa.io` tag, one listing per kind).
pub async fn find_unclaimed(array: &dyn FlashArray, tenant: &TenantId) -> Result<Claim> {
    let listings = try_join_all(KINDS.map(|k| lookup_tags(array, k, &[]))).await?;
    let mut objects = Vec::new();
    for (resource, tags) in KINDS.into_iter().zip(listings) {
        let mut index = TagIndex::default();
        index.insert(resource, &tags);
        objects.extend(
            index
                .unclaimed_by(resource, tenant)
                .into_iter()
                .map(|name| UnclaimedObject {
                    kind: kind_label(resource),
                    name,
                    resource,
                }),
        );
    }
    Ok(Claim {
        tenant: tenant.clone(),
        objects,
    })
}

impl Claim {
    /// Tags every object `tenant-namespace=<namespace>`: from then on they are this
    /// tenant's. One batched tag call per kind and `MAX_NAMES_PER_CALL` objects;
    /// a claim interrupted half-way is finished by running it again.
    pub async fn take(&self, array: &dyn FlashArray) -> Result<()> {
        for kind in KINDS {
            let tags: Vec<Tag> = (self.objects.iter())
                .filter(|o| o.resource == kind)
                .map(|o| {
                    Tag::new(
                        &o.name,
                        TAG_NAMESPACE,
                        TAG_TENANT_NAMESPACE,
                        &self.tenant.namespace,
                    )
                })
                .collect();
            for chunk in tags.chunks(MAX_NAMES_PER_CALL) {
                array.set_tags(kind, chunk).await?;
            }
        }
        Ok(())
    }
}
