//! How direct-access drive volumes come to exist, per Portworx release: created by
//! the management Portworx when their claims bind (dynamic), or pre-created by pxfa
//! and imported by an annotation on the claim (import).
//!
//! Portworx documents FADA volume import only for some releases and driver
//! settings, so the choice is a table (`TABLE`) rather than a flag. The table is a
//! `const` so that `docs/spec.md`, the lint rule PXFA020 and the plan print the same
//! rows.
// The field docs are the CRD's descriptions (`kubectl explain`), where `[L]` and
// `[M]` are confidence marks for the admin, not links: rustdoc's escapes would show
// there as `\[L\]`.
#![allow(rustdoc::broken_intra_doc_links)]

use serde::{Deserialize, Serialize};

use super::model::Provisioning;
use super::version::Version;
use super::{SpecError, TenantStorage};

/// How the drive volumes of a direct-access tenant come to exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// The management Portworx creates each volume when its claim binds, in the
    /// tenant's pod (the class's `pure_fa_pod_name`); pxfa creates only the pod.
    Dynamic,
    /// pxfa pre-creates tagged volumes; each claim names its volume in an annotation.
    Import,
}

impl Strategy {
    /// `dynamic` / `import`.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Dynamic => "dynamic",
            Strategy::Import => "import",
        }
    }
}

/// One row of the provisioning table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row {
    /// The releases the row covers, in words (`3.6.x (≥ 3.6.2)`).
    pub releases: &'static str,
    /// First `(major, minor)` the row covers; rows are ordered by it.
    pub from: (u32, u32),
    /// The FA/FB driver setting the row needs (`None`: any).
    pub fa_fb_driver: Option<bool>,
    /// What `auto` resolves to.
    pub auto: Strategy,
    /// The claim annotation that imports a pre-created volume, where documented;
    /// `None`: import is unsupported on these releases.
    pub import_annotation: Option<&'static str>,
    /// Why import is or is not available, with its confidence.
    pub evidence: &'static str,
    /// Where it is documented (docs.portworx.com paths).
    pub source: &'static str,
}

/// The provisioning table, oldest release first. Releases below 3.6.2 are refused
/// by PXFA001 and use the first row; unknown newer releases use the last rows.
pub(crate) const TABLE: &[Row] = &[
    Row {
        releases: "3.6.x (≥ 3.6.2)",
        from: (3, 6),
        fa_fb_driver: None,
        auto: Strategy::Dynamic,
        import_annotation: None,
        evidence: "\"Volume import and CSI ephemeral volumes are not supported\" [H]; the 3.6 FA/FB driver is Early Access [H]",
        source: "portworx-enterprise/3.6/provision-storage/create-pvcs/pure-flasharray; portworx-enterprise/3.6/platform/configure-portworx-components/enable-fa-fb-driver",
    },
    Row {
        releases: "≥ 3.7.0",
        from: (3, 7),
        fa_fb_driver: Some(false),
        auto: Strategy::Dynamic,
        import_annotation: None,
        evidence: "the FADA page still lists import as unsupported [H]; the pre-provisioned FADA page states no release [L]: treated as unsupported",
        source: "portworx-enterprise/provision-storage/create-pvcs/pure-flasharray; portworx-enterprise/provision-storage/create-pvcs/pure-flasharray/using-preprovisioned-fada-volumes",
    },
    Row {
        releases: "≥ 3.7.0",
        from: (3, 7),
        fa_fb_driver: Some(true),
        auto: Strategy::Dynamic,
        import_annotation: Some(IMPORT_ANNOTATION),
        evidence: "the 3.7 FA/FB driver lists static provisioning of existing volumes [H]; that it reads the PX-CSI annotation is [L]",
        source: "portworx-enterprise/platform/configure-portworx-components/enable-fa-fb-driver; portworx-csi/provision-storage/static-provisioning/flasharray-block-volumes",
    },
];

/// The claim annotation that names a pre-created volume (`<pod>::<volume>`), as
/// PX-CSI documents it.
pub const IMPORT_ANNOTATION: &str = "portworx.io/pure-volume-name";

/// The strategy a spec resolves to, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Dynamic or import.
    pub strategy: Strategy,
    /// The import annotation (import only).
    pub import_annotation: Option<&'static str>,
    /// The table row's sources.
    pub source: &'static str,
    /// A doubt to print with an allowed import (the [L] annotation row).
    pub warning: Option<String>,
}

/// An import the table refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What is refused and what to do instead.
    pub message: String,
    /// The table row's sources.
    pub source: &'static str,
}

/// The row for a release and driver setting.
pub(crate) fn row(version: Version, fa_fb_driver: bool) -> &'static Row {
    let at = (version.major, version.minor);
    TABLE
        .iter()
        .rev()
        .find(|r| r.from <= at && r.fa_fb_driver.is_none_or(|d| d == fa_fb_driver))
        .unwrap_or(&TABLE[0])
}

/// Resolves the asked strategy on a release.
pub(crate) fn resolve(
    version: Version,
    fa_fb_driver: bool,
    asked: Provisioning,
) -> Result<Resolved, Refusal> {
    let r = row(version, fa_fb_driver);
    let strategy = match asked {
        Provisioning::Auto => r.auto,
        Provisioning::Dynamic => Strategy::Dynamic,
        Provisioning::Import => Strategy::Import,
    };
    if strategy == Strategy::Dynamic {
        return Ok(Resolved {
            strategy,
            import_annotation: None,
            source: r.source,
            warning: None,
        });
    }
    match r.import_annotation {
        Some(a) => Ok(Resolved {
            strategy,
            import_annotation: Some(a),
            source: r.source,
            warning: Some(format!(
                "import on Portworx {version} uses the {a} annotation as PX-CSI documents it; that the \
                 Portworx Enterprise FA/FB driver reads it is unconfirmed: verify on a lab array"
            )),
        }),
        None => Err(Refusal {
            message: format!(
                "provisioning: import is not supported on Portworx {version}{}: {}; use \
                 provisioning: dynamic (or auto)",
                if fa_fb_driver {
                    ""
                } else {
                    " without the FA/FB driver"
                },
                r.evidence
            ),
            source: r.source,
        }),
    }
}

impl TenantStorage {
    /// The resolved provisioning strategy of a direct-access tenant.
    pub fn provisioning(&self) -> Result<Resolved, Refusal> {
        resolve(
            self.management_portworx_version(),
            self.spec.management.fa_fb_driver,
            self.spec.storage.provisioning,
        )
    }
}

/// Validation of the provisioning fields, kept apart from `validate`.
pub(super) fn validate(t: &TenantStorage) -> Vec<SpecError> {
    let mut out = Vec::new();
    let s = &t.spec.storage;
    if !t.mode().drives_are_vm_disks() && s.provisioning != Provisioning::Auto {
        out.push(SpecError::new(
            "spec.storage.provisioning",
            format!(
                "only direct-access has drive volumes to provision; {} takes no provisioning",
                t.mode()
            ),
        ));
    }
    if t.mode().uses_management_hosts()
        && s.attach == super::Attach::HostGroup
        && t.provisioning().map(|r| r.strategy) == Ok(Strategy::Dynamic)
    {
        out.push(SpecError::new(
            "spec.storage.attach",
            "host-group pre-connects volumes pxfa creates; with dynamic provisioning the \
             management Portworx connects its volumes itself — use attach: fada (or \
             provisioning: import where the Portworx release supports it)",
        ));
    }
    out
}

/// The table as Markdown rows, for `docs/spec.md` and its test.
pub fn table_markdown() -> String {
    let mut out = String::from(
        "| Portworx | FA/FB driver | `auto` → | Import annotation | Evidence | Source |\n|---|---|---|---|---|---|\n",
    );
    for r in TABLE {
        let driver = match r.fa_fb_driver {
            None => "any",
            Some(true) => "`faFbDriver: true`",
            Some(false) => "`faFbDriver: false`",
        };
        let import = r
            .import_annotation
            .map_or("none: import refused (PXFA020)".to_string(), |a| {
                format!("`{a}: <pod>::<volume>` (PXFA020 warning)")
            });
        out.push_str(&format!(
            "| {} | {driver} | {} | {import} | {} | {} |\n",
            r.releases,
            r.auto.as_str(),
            r.evidence,
            r.source
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_picked_by_release_and_driver() {
        let v362 = Version::new(3, 6, 2);
        let v370 = Version::new(3, 7, 0);
        let v381 = Version::new(3, 8, 1);
        assert_eq!(row(v362, true).from, (3, 6));
        assert_eq!(row(v370, false).fa_fb_driver, Some(false));
        assert_eq!(row(v370, true).fa_fb_driver, Some(true));
        assert_eq!(row(v381, true).fa_fb_driver, Some(true));
        assert_eq!(row(Version::new(3, 5, 0), false).from, (3, 6));
    }

    #[test]
    fn auto_is_dynamic_everywhere_and_import_needs_the_driver_on_3_7() {
        for v in [Version::new(3, 6, 2), Version::new(3, 7, 0)] {
            for d in [false, true] {
                let r = resolve(v, d, Provisioning::Auto).unwrap();
                assert_eq!(r.strategy, Strategy::Dynamic);
                assert_eq!(r.import_annotation, None);
            }
        }
        let e = resolve(Version::new(3, 6, 2), true, Provisioning::Import).unwrap_err();
        assert!(
            e.message.contains("not supported on Portworx 3.6.2"),
            "{}",
            e.message
        );
        assert!(resolve(Version::new(3, 7, 0), false, Provisioning::Import).is_err());
        let ok = resolve(Version::new(3, 7, 0), true, Provisioning::Import).unwrap();
        assert_eq!(ok.strategy, Strategy::Import);
        assert_eq!(ok.import_annotation, Some(IMPORT_ANNOTATION));
        assert!(ok.warning.unwrap().contains("lab array"));
    }
}
