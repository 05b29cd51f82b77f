//! The tenant pipeline every command starts from: a validated spec, its pool sizing
//! and the array objects it needs ([`Tenant`]), plus the rule that an apply must not
//! create an API token it has nowhere to keep.

use std::path::{Path, PathBuf};

use crate::desired::{
    DesiredState, TAG_CAPACITY, TAG_DRIVE_SIZE, TAG_DRIVES_PER_NODE, TAG_METADATA_SIZE,
};
use crate::driver::{ArrayFacts, DriverError, driver_for};
use crate::manifests::RenderOptions;
use crate::plan::{Action, Blocker, Kind, Observed, Plan, PlanOptions};
use crate::render::{Manifest, RenderError};
use crate::sizing::{self, Sizing};
use crate::spec::{self, SpecError, SpecErrors, TenantStorage};

/// A loaded tenant: spec, sizing and the array objects it needs.
#[derive(Debug, Clone)]
pub struct Tenant {
    /// The spec as loaded, already validated (every later stage reads it).
    pub spec: TenantStorage,
    /// The Portworx pool sizing computed from the spec (before the drives in use are
    /// kept).
    pub sizing: Sizing,
    /// What the array must hold.
    pub desired: DesiredState,
}

/// Why a spec file does not make a tenant. Every variant is the admin's input, named
/// by file; the message is complete, so the cause is not repeated as a source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TenantError {
    /// The spec does not parse or validate; every problem with its field path.
    #[error("{}: invalid spec:\n{errors}", path.display())]
    Spec {
        /// The spec file.
        path: PathBuf,
        /// Every problem found.
        errors: SpecErrors,
    },
    /// The spec is valid but cannot be sized.
    #[error("{}: {error}", path.display())]
    Sizing {
        /// The spec file.
        path: PathBuf,
        /// Why.
        error: SpecError,
    },
    /// The storage option cannot derive the array objects.
    #[error("{}: {error}", path.display())]
    Driver {
        /// The spec file.
        path: PathBuf,
        /// Why.
        error: DriverError,
    },
}

impl Tenant {
    /// Loads and validates a spec file.
    pub fn load(path: &Path) -> Result<Tenant, TenantError> {
        let spec = spec::load_spec(path).map_err(|errors| TenantError::Spec {
            path: path.to_path_buf(),
            errors,
        })?;
        Self::from_spec(spec, path)
    }

    /// Loads a spec file whose absent `metadata.namespace` is `namespace()` (the
    /// CLI's: where `oc apply` would put the object), validated as if the file said
    /// so. `namespace` is called only when the file names none; its error is the
    /// field's.
    pub fn load_in_namespace(
        path: &Path,
        namespace: impl FnOnce() -> Result<String, String>,
    ) -> Result<Tenant, TenantError> {
        let invalid = |errors| TenantError::Spec {
            path: path.to_path_buf(),
            errors,
        };
        let mut spec = spec::load_spec(path).map_err(invalid)?;
        if spec.metadata.namespace.is_none() {
            let ns = namespace().map_err(|why| {
                invalid(SpecErrors(vec![SpecError::new("metadata.namespace", why)]))
            })?;
            spec.metadata.namespace = Some(ns);
            let errors = spec.validate();
            if !errors.is_empty() {
                return Err(invalid(SpecErrors(errors)));
            }
        }
        Self::from_spec(spec, path)
    }

    /// Sizing and desired state of a validated spec read from `path` (named in
    /// errors).
    pub fn from_spec(spec: TenantStorage, path: &Path) -> Result<Tenant, TenantError> {
        let sizing = sizing::size(&spec, None).map_err(|error| TenantError::Sizing {
            path: path.to_path_buf(),
            error,
        })?;
        let desired = driver_for(&spec)
            .desired_state(&spec, &sizing)
            .map_err(|error| TenantError::Driver {
                path: path.to_path_buf(),
                error,
            })?;
        let desired = record_sizing(desired, &sizing);
        Ok(Tenant {
            spec,
            sizing,
            desired,
        })
    }

    /// The tenant re-sized so that the drives already on the array keep their size
    /// (scale-out gives new workers the size in use; capacity is not re-divided over
    /// more nodes, and an existing drive is never planned smaller), with that sizing
    /// recorded on the tenant's pod: `None` when the fresh sizing already matches.
    /// `observed` is what `plan::observe` read for this tenant's desired state;
    /// volume names do not depend on sizes, so it stays valid.
    /// The pipeline's observation ([`Tenant::observe`]) does this, in its place.
    pub(crate) fn keeping_drives_in_use(
        &self,
        observed: &crate::plan::Observed,
    ) -> Result<Option<Tenant>, TenantError> {
        let in_use = crate::plan::lifecycle::drives_in_use(observed, &self.desired.tenant);
        let sizing = sizing::keep_drives_in_use(&self.spec, self.sizing.clone(), &in_use);
        if sizing == self.sizing {
            return Ok(None);
        }
        let desired = driver_for(&self.spec)
            .desired_state(&self.spec, &sizing)
            .map_err(|error| TenantError::Driver {
                path: std::path::PathBuf::from(self.spec.tenant_name()),
                error,
            })?;
        let desired = record_sizing(desired, &sizing);
        Ok(Some(Tenant {
            spec: self.spec.clone(),
            sizing,
            desired,
        }))
    }

    /// The plan against `observed` (`crate::plan::plan`) plus what the sizing
    /// against the drives in use says: a capacity raise the growth path cannot do
    /// or a decrease (without `allow_shrink`) is a refusal on the data drives, and
    /// the path taken and the Portworx steps after it are a note and next steps.
    /// The pipeline ([`crate::pipeline::Observation::plan`]) calls it on the tenant
    /// re-sized to the drives in use; called on a tenant that was not, it plans the
    /// fresh sizing.
    pub fn plan(&self, observed: &Observed, opts: &PlanOptions) -> Plan {
        let mut plan = crate::plan::plan(&self.desired, observed, opts);
        if let Some(g) = &self.sizing.growth {
            plan.notes.push(g.line());
            if let Some((reason, resolution)) = g.refusal(opts.allow_shrink) {
                plan.refusals.push(Blocker {
                    kind: Kind::Volume,
                    name: format!("data drives of {}", self.spec.tenant_name()),
                    reason,
                    resolution,
                });
            } else {
                plan.next_steps.extend(g.admin_steps());
            }
        }
        plan
    }

    /// The tenant's manifests with no array facts and the default options: what
    /// `pxfa render` writes, and what status compares the clusters with.
    pub fn manifests(&self) -> Result<Vec<Manifest>, RenderError> {
        crate::manifests::render(
            &self.spec,
            &self.sizing,
            &ArrayFacts::default(),
            RenderOptions::default(),
        )
    }

    /// The array admins (token users) this tenant needs on the array before an
    /// apply; an embedded simulated array creates them. A realm user is not among
    /// them: pxfa creates it, with rights only inside the realm.
    pub fn token_users(&self) -> Vec<String> {
        let realm_user = self
            .desired
            .realm
            .as_ref()
            .and_then(|r| r.user.as_ref())
            .map(|u| u.admin.as_str());
        self.desired
            .api_token
            .iter()
            .filter(|t| realm_user.is_none_or(|u| !u.eq_ignore_ascii_case(&t.admin)))
            .map(|t| t.admin.clone())
            .collect()
    }
}

/// `desired` with the sizing in use recorded on the tenant's pod (direct-access: the
/// pod that carries the [`TAG_CAPACITY`] tag): data drive size, data drives per
/// worker and metadata size. None of them depends on the number of workers, so a
/// scale-out or scale-in writes no tag. `plan::lifecycle::drives_in_use` reads them back when no drive can be seen (a
/// dynamic tenant applied without cluster access: nobody tagged its drives), so that
/// a scale-out keeps every drive and claim at its size.
fn record_sizing(mut desired: DesiredState, sizing: &Sizing) -> DesiredState {
    if !sizing.has_pool || sizing.drives_per_node == 0 {
        return desired;
    }
    if let Some(pod) = desired.pod.as_mut()
        && pod.tags.contains_key(TAG_CAPACITY)
    {
        for (key, value) in [
            (TAG_DRIVE_SIZE, sizing.drive_size.as_u64()),
            (TAG_DRIVES_PER_NODE, u64::from(sizing.drives_per_node)),
            (TAG_METADATA_SIZE, sizing.metadata_size.as_u64()),
        ] {
            pod.tags.insert(key.to_string(), value.to_string());
        }
    }
    desired
}

/// An apply would create an API token and nothing would keep its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "this apply would create an API token for array user {user}, and the array shows a token's value only once; \
     nothing was changed"
)]
pub struct NewTokenWouldBeLost {
    /// The array user the token is for.
    pub user: String,
}

/// An array shows an API token's value only once, in the answer that creates it. If
/// `plan` creates one and `kept` is false (the caller has nowhere to put it: no
/// secret file, no tenant cluster), the tenant would end up with a token nobody can
/// read: refuse before changing anything.
pub(crate) fn refuse_losing_a_new_token(
    plan: &Plan,
    kept: bool,
) -> Result<(), NewTokenWouldBeLost> {
    let created = plan
        .changes
        .iter()
        .find(|c| c.action == Action::Create && c.kind == Kind::ApiToken);
    match created {
        Some(token) if !kept => Err(NewTokenWouldBeLost {
            user: token.name.clone(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Observed, PlanOptions, TokenState, plan};

    fn example(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name)
    }

    #[test]
    fn an_absent_namespace_is_the_resolvers_and_is_validated_as_the_files() {
        let spec = example("tenant-cloud-drive.yaml");
        let t = Tenant::load_in_namespace(&spec, || Ok("team-a".into())).unwrap();
        assert_eq!(t.desired.tenant.to_string(), "team-a/tenant-cd");
        assert_eq!(
            t.desired.pod.as_ref().unwrap().tags["tenant-namespace"],
            "team-a"
        );
        // A namespace no DNS label could be, or one that cannot be told, is refused
        // with the field's path.
        for resolved in [Ok("Team_A".to_string()), Err("no kubeconfig".to_string())] {
            let e = Tenant::load_in_namespace(&spec, || resolved).unwrap_err();
            assert!(e.to_string().contains("metadata.namespace"), "{e}");
        }
        // A namespace in the file wins; the resolver is not asked.
        let dir = tempfile::tempdir().unwrap();
        let named = dir.path().join("t.yaml");
        let text = std::fs::read_to_string(&spec).unwrap();
        let text = text.replacen(
            "  name: tenant-cd\n",
            "  name: tenant-cd\n  namespace: team-b\n",
            1,
        );
        std::fs::write(&named, text).unwrap();
        let t = Tenant::load_in_namespace(&named, || panic!("asked")).unwrap();
        assert_eq!(t.desired.tenant.to_string(), "team-b/tenant-cd");
    }

    #[test]
    fn a_new_token_needs_a_keeper() {
        let t = Tenant::load(&example("tenant-cloud-drive.yaml")).expect("example loads");
        assert!(!t.token_users().is_empty(), "cloud-drive has a token user");
        let without_token = Observed {
            token: TokenState::NoToken,
            ..Observed::default()
        };
        let fresh = plan(&t.desired, &without_token, &PlanOptions::default());
        let lost = refuse_losing_a_new_token(&fresh, false).unwrap_err();
        assert_eq!(lost.user, t.token_users()[0]);
        assert!(lost.to_string().contains("only once"), "{lost}");
        assert_eq!(refuse_losing_a_new_token(&fresh, true), Ok(()));
        // A token that exists already is not created, so nothing can be lost.
        let with_token = Observed {
            token: TokenState::HasToken,
            ..Observed::default()
        };
        let again = plan(&t.desired, &with_token, &PlanOptions::default());
        assert_eq!(refuse_losing_a_new_token(&again, false), Ok(()));
    }

    #[test]
    fn no_token_no_refusal() {
        let t = Tenant::load(&example("tenant-kubevirt-csi.yaml")).expect("example loads");
        let fresh = plan(&t.desired, &Observed::default(), &PlanOptions::default());
        assert_eq!(refuse_losing_a_new_token(&fresh, false), Ok(()));
    }

    #[test]
    fn errors_name_the_file() {
        let e = Tenant::load(Path::new("/nonexistent/tenant.yaml")).unwrap_err();
        assert!(matches!(e, TenantError::Spec { .. }), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("/nonexistent/tenant.yaml: invalid spec:"),
            "{e}"
        );
    }
}
