//! Deleting a TenantStorage object: the finalizer keeps it until the tenant's array
//! objects are destroyed as `spec.onDelete` says: `destroy` (the default) leaves
//! them recoverable for the array's eradication delay, `eradicate` only when the
//! object says so, `keep` touches nothing.

use flasharray::FlashArray;
use px_topology::Tenant;
use px_topology::converge::{self, DestroyOptions, DestroyReport};
use px_topology::spec::OnDelete;

use crate::error::{Error, Reason, with_request_id};

/// The finalizer the controller puts on every object it reconciled.
pub const FINALIZER: &str = "pxfa.io/tenant-storage";

/// What deleting did on the array.
#[derive(Debug)]
pub enum Deleted {
    /// `onDelete: keep`: nothing was touched.
    Kept,
    /// Destroyed (and eradicated when asked); the report says what is recoverable.
    Destroyed(DestroyReport),
}

/// Runs the object's delete policy against the array. An incomplete destroy is an
/// error: the finalizer stays and the delete is retried (the next run re-observes,
/// so nothing is replayed blindly).
pub async fn on_delete(array: &dyn FlashArray, tenant: &Tenant) -> Result<Deleted, Error> {
    let policy = tenant.spec.spec.on_delete.unwrap_or_default();
    let eradicate = match policy {
        OnDelete::Keep => return Ok(Deleted::Kept),
        OnDelete::Destroy => false,
        OnDelete::Eradicate => true,
    };
    let name = tenant.spec.tenant_name().to_string();
    let report = converge::destroy(
        array,
        &tenant.desired,
        &DestroyOptions {
            eradicate,
            ..DestroyOptions::default()
        },
        &|_| {},
    )
    .await
    .map_err(|e| {
        Error::new(
            Reason::ArrayUnreachable,
            format!("cannot destroy tenant {name}: {e}"),
        )
    })?;
    if let Some(f) = report.failed.first() {
        return Err(Error::new(
            Reason::ArrayWriteFailed,
            with_request_id(
                &format!(
                    "destroying tenant {name}: {} failed: {}",
                    f.change.to_line(),
                    f.error
                ),
                f.request_id.as_deref(),
            ),
        ));
    }
    Ok(Deleted::Destroyed(report))
}
