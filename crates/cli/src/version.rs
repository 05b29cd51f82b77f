//! What `pxfa --version` says: the build and the versions of the systems pxfa knows,
//! so that a support question starts with facts.

use flasharray::rest::ApiVersion;
use px_topology::spec::DEFAULT_PORTWORX_VERSION;

/// The commit, from `PXFA_GIT_COMMIT` at build time
/// (`PXFA_GIT_COMMIT=$(git rev-parse --short HEAD) cargo install ...`).
const COMMIT: Option<&str> = option_env!("PXFA_GIT_COMMIT");

/// The long version: package version and commit, then the REST, Portworx and
/// OpenShift versions pxfa is written for.
pub(crate) fn long() -> String {
    format!(
        "{} (commit {})\n\
         FlashArray REST API: 2.{}..=2.{} (the highest the array also offers is used)\n\
         Portworx: {} by default (spec.portworx.version; hosted clusters need 3.6.2 or later)\n\
         OpenShift: 4.x hosted control planes (HyperShift) on OpenShift Virtualization",
        env!("CARGO_PKG_VERSION"),
        COMMIT.unwrap_or("unknown"),
        ApiVersion::MIN.minor,
        ApiVersion::MAX.minor,
        DEFAULT_PORTWORX_VERSION,
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_version_names_the_systems() {
        let v = super::long();
        assert!(v.starts_with(env!("CARGO_PKG_VERSION")), "{v}");
        assert!(v.contains("(commit "), "{v}");
        assert!(v.contains("REST API: 2.2..=2.58"), "{v}");
        assert!(v.contains("Portworx: 3.6.2"), "{v}");
        assert!(v.contains("OpenShift"), "{v}");
    }
}
