//! API tokens, and the realm, its access policy and its user. Their collections are
//! small, so a re-read lists the whole collection: an object that shows what was
//! asked is a write that worked, a name that is gone is a delete that worked.

use futures_util::future::BoxFuture;

use super::{Settling, Verdict, rounds, single, split};
use crate::array::signature::*;
use crate::name::same_name;

impl<A: FlashArray> Settling<A> {
    /// If the admin now holds a token, it is read back (exposed) and returned instead
    /// of creating a second one, without its value when the array shows a value only
    /// in the answer that was lost; without one, the token is created again.
    pub(super) async fn create_api_token(
        &self,
        admin: &str,
        timeout: Option<Duration>,
    ) -> Result<AdminApiToken> {
        let made = rounds(
            "create_api_token",
            vec![admin.to_string()],
            |_| {
                Box::pin(
                    async move { Ok(vec![self.inner.create_api_token(admin, timeout).await?]) },
                )
            },
            |pending| {
                Box::pin(async move {
                    let found = self.token_of(admin, true).await?;
                    Ok(match found {
                        Some(t) => Verdict::Known {
                            done: vec![t],
                            pending: Vec::new(),
                        },
                        None => Verdict::Known {
                            done: Vec::new(),
                            pending,
                        },
                    })
                })
            },
        )
        .await?;
        single(made, "create_api_token")
    }

    /// An admin without a token is done.
    pub(super) async fn delete_api_token(&self, admin: &str) -> Result<()> {
        rounds(
            "delete_api_token",
            vec![admin.to_string()],
            |_| {
                Box::pin(async move {
                    self.inner
                        .delete_api_token(admin)
                        .await
                        .map(|()| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let has = self.token_of(admin, false).await?.is_some();
                    Ok(split(0, if has { pending } else { Vec::new() }))
                })
            },
        )
        .await
        .map(drop)
    }

    /// The admin's token, if it holds one.
    async fn token_of(&self, admin: &str, expose: bool) -> Result<Option<AdminApiToken>> {
        let listed = self
            .inner
            .list_api_tokens(&[admin.to_string()], expose)
            .await?;
        Ok(listed.into_iter().find(|t| {
            let k = &t.api_token;
            same_name(&t.name, admin)
                && (k.created_at.is_some() || k.token.is_some() || k.expires_at.is_some())
        }))
    }

    pub(super) async fn create_realms(
        &self,
        names: &[RealmName],
        body: &RealmPost,
    ) -> Result<Vec<Realm>> {
        let shows = |r: &Realm, n: &str| same_name(&r.name, n) && !r.destroyed;
        self.present(names, &shows, |p| {
            Box::pin(async move { self.inner.create_realms(&p, body).await })
        })
        .await
    }

    pub(super) async fn patch_realms(
        &self,
        names: &[RealmName],
        patch: &RealmPatch,
        destroy_contents: bool,
    ) -> Result<Vec<Realm>> {
        let shows = |r: &Realm, n: &str| {
            let name = patch.name.as_deref().unwrap_or(n);
            same_name(&r.name, name) && patch.destroyed.is_none_or(|d| d == r.destroyed)
        };
        self.present(names, &shows, |p| {
            Box::pin(async move { self.inner.patch_realms(&p, patch, destroy_contents).await })
        })
        .await
    }

    pub(super) async fn eradicate_realms(
        &self,
        names: &[RealmName],
        eradicate_contents: bool,
    ) -> Result<()> {
        self.gone(names, &|r: &Realm| r.name.clone(), |p| {
            Box::pin(async move { self.inner.eradicate_realms(&p, eradicate_contents).await })
        })
        .await
    }

    pub(super) async fn create_management_access_policies(
        &self,
        names: &[String],
        body: &ManagementAccessPolicyPost,
    ) -> Result<Vec<ManagementAccessPolicy>> {
        let shows = |p: &ManagementAccessPolicy, n: &str| same_name(&p.name, n);
        self.present(names, &shows, |p| {
            Box::pin(async move { self.inner.create_management_access_policies(&p, body).await })
        })
        .await
    }

    pub(super) async fn delete_management_access_policies(&self, names: &[String]) -> Result<()> {
        self.gone(names, &|p: &ManagementAccessPolicy| p.name.clone(), |p| {
            Box::pin(async move { self.inner.delete_management_access_policies(&p).await })
        })
        .await
    }

    pub(super) async fn create_admins(
        &self,
        names: &[String],
        body: &AdminPost,
    ) -> Result<Vec<Admin>> {
        let shows = |a: &Admin, n: &str| same_name(&a.name, n);
        self.present(names, &shows, |p| {
            Box::pin(async move { self.inner.create_admins(&p, body).await })
        })
        .await
    }

    pub(super) async fn delete_admins(&self, names: &[String]) -> Result<()> {
        self.gone(names, &|a: &Admin| a.name.clone(), |p| {
            Box::pin(async move { self.inner.delete_admins(&p).await })
        })
        .await
    }

    /// A create or patch: a name some object of the whole collection `shows` is done.
    async fn present<'f, T, N>(
        &'f self,
        names: &[N],
        shows: &'f (impl Fn(&T, &str) -> bool + Sync),
        write: impl Fn(Vec<N>) -> BoxFuture<'f, Result<Vec<T>>>,
    ) -> Result<Vec<T>>
    where
        T: Whole,
        N: AsRef<str> + Clone + Send + Sync + 'f,
    {
        let probe = move |pending: Vec<N>| -> BoxFuture<'f, Result<Verdict<N, T>>> {
            Box::pin(async move {
                let all = T::list_all(&self.inner).await?;
                let mut done = Vec::new();
                let mut rest = Vec::new();
                for n in pending {
                    match all.iter().find(|o| shows(o, n.as_ref())) {
                        Some(o) => done.push(o.clone()),
                        None => rest.push(n),
                    }
                }
                Ok(Verdict::Known {
                    done,
                    pending: rest,
                })
            })
        };
        rounds(T::WHAT, names.to_vec(), write, probe).await
    }

    /// A delete: a name no object of the whole collection has is done.
    async fn gone<'f, T, N>(
        &'f self,
        names: &[N],
        name_of: &'f (impl Fn(&T) -> String + Sync),
        write: impl Fn(Vec<N>) -> BoxFuture<'f, Result<()>>,
    ) -> Result<()>
    where
        T: Whole,
        N: AsRef<str> + Clone + Send + Sync + 'f,
    {
        let write = &write;
        let probe = move |pending: Vec<N>| -> BoxFuture<'f, Result<Verdict<N, ()>>> {
            Box::pin(async move {
                let all = T::list_all(&self.inner).await?;
                let (still, gone): (Vec<N>, Vec<N>) = pending
                    .into_iter()
                    .partition(|n| all.iter().any(|o| same_name(&name_of(o), n.as_ref())));
                Ok(split(gone.len(), still))
            })
        };
        let send = |p: Vec<N>| -> BoxFuture<'f, Result<Vec<()>>> {
            let sent = write(p);
            Box::pin(async move { sent.await.map(|()| Vec::new()) })
        };
        rounds(T::WHAT, names.to_vec(), send, probe).await.map(drop)
    }
}

/// A small collection that is re-read whole.
trait Whole: Clone + Send + Sync + 'static {
    /// The collection, in log lines.
    const WHAT: &'static str;
    /// Every object of the collection.
    fn list_all<A: FlashArray>(a: &A) -> BoxFuture<'_, Result<Vec<Self>>>;
}

impl Whole for Realm {
    const WHAT: &'static str = "realms";
    fn list_all<A: FlashArray>(a: &A) -> BoxFuture<'_, Result<Vec<Self>>> {
        Box::pin(async move { a.list_realms(&ListParams::all()).await })
    }
}

impl Whole for ManagementAccessPolicy {
    const WHAT: &'static str = "management access policies";
    fn list_all<A: FlashArray>(a: &A) -> BoxFuture<'_, Result<Vec<Self>>> {
        a.list_management_access_policies(&[])
    }
}

impl Whole for Admin {
    const WHAT: &'static str = "admins";
    fn list_all<A: FlashArray>(a: &A) -> BoxFuture<'_, Result<Vec<Self>>> {
        a.list_admins(&[])
    }
}
