//! Terse constructors and assertions for writing checks against any
//! [`FlashArray`], shared by the checks here and by the crate's own tests. They
//! panic on bad input, like the test assertions they stand next to.

use flasharray::models::{HostGroupPost, HostPost, TagBody, Volume, VolumePost};
use flasharray::params::{ListParams, TagParams, TagResource};
use flasharray::{ErrorKind, FlashArray, HostGroupName, HostName, PodName, VolumeName};

/// The default eradication delay in milliseconds, as `time_remaining` reports it.
pub const DAY_MS: u64 = 86_400_000;

/// A volume name; panics if invalid.
pub fn v(s: &str) -> VolumeName {
    VolumeName::new(s).unwrap()
}

/// Several volume names; panics if one is invalid.
pub fn vs(s: &[&str]) -> Vec<VolumeName> {
    s.iter().map(|x| v(x)).collect()
}

/// A host name; panics if invalid.
pub fn h(s: &str) -> HostName {
    HostName::new(s).unwrap()
}

/// A host group name; panics if invalid.
pub fn g(s: &str) -> HostGroupName {
    HostGroupName::new(s).unwrap()
}

/// A pod name; panics if invalid.
pub fn p(s: &str) -> PodName {
    PodName::new(s).unwrap()
}

/// Creates hosts without initiators; panics if the array refuses.
pub async fn hosts(a: &dyn FlashArray, names: &[&str]) {
    let names: Vec<HostName> = names.iter().map(|n| h(n)).collect();
    a.create_hosts(&names, &HostPost::default()).await.unwrap();
}

/// Creates untagged host groups; panics if the array refuses.
pub async fn groups(a: &dyn FlashArray, names: &[&str]) {
    let names: Vec<HostGroupName> = names.iter().map(|n| g(n)).collect();
    a.create_host_groups(&names, &HostGroupPost::default())
        .await
        .unwrap();
}

/// A volume create body of `b` bytes, untagged.
pub fn size(b: u64) -> VolumePost {
    VolumePost::default().with_provisioned(b)
}

/// The volume named `name`; panics if the listing fails or finds none.
pub async fn vol(a: &dyn FlashArray, name: &str) -> Volume {
    a.list_volumes(&ListParams::names([name]))
        .await
        .unwrap()
        .pop()
        .unwrap()
}

/// The kind of error a call that must fail returns; panics if it succeeds.
pub async fn kind<T: std::fmt::Debug>(
    f: impl std::future::Future<Output = flasharray::Result<T>>,
) -> ErrorKind {
    f.await.expect_err("the array should refuse this").kind()
}

/// The ownership tags pxfa puts on a tenant's objects (`pxfa.io/managed-by`,
/// `pxfa.io/tenant=t1`).
pub fn owner_tags() -> Vec<TagBody> {
    vec![
        TagBody::new("pxfa.io", "managed-by", "pxfa"),
        TagBody::new("pxfa.io", "tenant", "t1"),
    ]
}

/// The tags of one object as `namespace/key=value`, in the array's order.
pub async fn tag_keys(a: &dyn FlashArray, kind: TagResource, name: &str) -> Vec<String> {
    a.list_tags(
        kind,
        &TagParams {
            resource_names: vec![name.into()],
            ..Default::default()
        },
    )
    .await
    .unwrap()
    .into_iter()
    .map(|t| format!("{}/{}={}", t.namespace.unwrap_or_default(), t.key, t.value))
    .collect()
}
