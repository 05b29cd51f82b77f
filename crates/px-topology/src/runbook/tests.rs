//! Golden runbooks for every operation and mode (`fixtures/golden/runbook/`), the
//! generated section of `docs/lifecycle.md`, and the rules the tables must keep.
//! `PXFA_UPDATE_GOLDEN=1 cargo test -p px-topology --lib runbook` rewrites both;
//! review the diff.

use std::path::{Path, PathBuf};

use super::text::{BEGIN_MARKER, END_MARKER};
use super::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn update() -> bool {
    std::env::var("PXFA_UPDATE_GOLDEN").is_ok_and(|v| v == "1")
}

/// The example of `mode` with 4 workers (so that scale-in keeps Portworx's 3).
fn tenant(mode: StorageMode) -> (Tenant, &'static str) {
    let file = match mode {
        StorageMode::CloudDrive => "examples/tenant-cloud-drive.yaml",
        StorageMode::DirectAccess => "examples/tenant-direct-access.yaml",
        StorageMode::KubevirtCsi => "examples/tenant-kubevirt-csi.yaml",
    };
    let yaml = std::fs::read_to_string(root().join(file)).unwrap();
    let mut spec = crate::parse_valid_spec(&yaml).unwrap();
    spec.spec.hosted_cluster.replicas = 4;
    (Tenant::from_spec(spec, file.as_ref()).unwrap(), file)
}

const MODES: [StorageMode; 3] = [
    StorageMode::CloudDrive,
    StorageMode::DirectAccess,
    StorageMode::KubevirtCsi,
];

/// The text `pxfa runbook OP -f EXAMPLE` prints, or the refusal it exits 2 with.
fn golden_text(op: Operation, mode: StorageMode) -> String {
    let (t, file) = tenant(mode);
    // replace-vm takes one worker; every other operation runs on its defaults.
    let workers: &[u32] = if op == Operation::ReplaceVm && mode == StorageMode::DirectAccess {
        &[1]
    } else {
        &[]
    };
    match build(&t, file, op, workers) {
        Ok(r) => to_text(&r),
        Err(e) => format!("refused (exit 2): {e}\n"),
    }
}

#[test]
fn golden_runbooks_for_every_operation_and_mode() {
    let dir = root().join("fixtures/golden/runbook");
    let mut diffs = Vec::new();
    for op in Operation::ALL {
        for mode in MODES {
            let got = golden_text(op, mode);
            let path = dir.join(format!("{}-{}.txt", op.as_str(), mode.as_str()));
            if update() {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &got).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&path)
                .unwrap_or_else(|_| panic!("{} missing; PXFA_UPDATE_GOLDEN=1", path.display()));
            if want != got {
                diffs.push(path.display().to_string());
            }
        }
    }
    assert!(
        diffs.is_empty(),
        "runbooks differ from their golden files (PXFA_UPDATE_GOLDEN=1 to accept): {diffs:?}"
    );
}

#[test]
fn lifecycle_md_carries_the_generated_reference() {
    let path = root().join("docs/lifecycle.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let begin = doc
        .find(BEGIN_MARKER)
        .expect("docs/lifecycle.md has the runbook begin marker");
    let end = doc
        .find(END_MARKER)
        .expect("docs/lifecycle.md has the runbook end marker");
    let inner = &doc[begin + BEGIN_MARKER.len()..end];
    let want = format!("\n{}", reference_markdown());
    if update() && inner != want {
        let new = format!("{}{BEGIN_MARKER}{want}{}", &doc[..begin], &doc[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert_eq!(
        inner, want,
        "docs/lifecycle.md's runbook section is stale (PXFA_UPDATE_GOLDEN=1)"
    );
    // And, said the other way round: every step's command and page is in the doc.
    for op in Operation::ALL {
        for mode in MODES {
            for piece in pieces(op, mode).unwrap_or_default() {
                for t in piece.iter() {
                    let src = sources::source(t.source).unwrap();
                    assert!(
                        doc.contains(src.url),
                        "{}: {} not in lifecycle.md",
                        t.id,
                        src.url
                    );
                    if !t.command.is_empty() {
                        let cmd = t.command.join(" ");
                        assert!(doc.contains(&cmd), "{}: `{cmd}` not in lifecycle.md", t.id);
                    }
                }
            }
        }
    }
}

#[test]
fn every_step_has_a_known_source_and_l_steps_stay_out() {
    for op in Operation::ALL {
        for mode in MODES {
            for piece in pieces(op, mode).unwrap_or_default() {
                for t in piece.iter() {
                    assert!(
                        sources::source(t.source).is_some(),
                        "{}: unknown source {}",
                        t.id,
                        t.source
                    );
                    assert_ne!(
                        t.confidence,
                        Confidence::L,
                        "{}: an [L] step is never in the default procedure",
                        t.id
                    );
                }
            }
        }
    }
}

#[test]
fn scale_in_follows_the_decommission_procedure_in_order() {
    let (t, file) = tenant(StorageMode::DirectAccess);
    let r = build(&t, file, Operation::ScaleIn, &[3]).unwrap();
    let ids: Vec<&str> = r.steps.iter().map(|s| s.id).collect();
    let pos = |id: &str| {
        ids.iter()
            .position(|i| *i == id)
            .unwrap_or_else(|| panic!("{id} missing"))
    };
    assert!(pos("decommission.kvdb") < pos("decommission.maintenance"));
    assert!(pos("decommission.maintenance") < pos("decommission.cluster-delete"));
    assert!(pos("decommission.cluster-delete") < pos("nodepool.scale-in"));
    assert!(pos("nodepool.scale-in") < pos("decommission.restore-replication"));
    let claims = r.steps[0].command.as_deref().unwrap();
    assert!(
        claims.contains("tenant-demo-w03-data0 tenant-demo-w03-meta"),
        "{claims}"
    );
    assert!(claims.contains("-n clusters-tenant-demo"), "{claims}");
}

#[test]
fn workers_are_checked() {
    let (t, file) = tenant(StorageMode::DirectAccess);
    let err = |op, w: &[u32]| build(&t, file, op, w).unwrap_err().0;
    assert!(err(Operation::ScaleIn, &[1]).contains("highest"));
    assert!(err(Operation::ScaleIn, &[2, 3]).contains("minimum of 3"));
    assert!(err(Operation::ReplaceVm, &[]).contains("exactly one"));
    assert!(err(Operation::Grow, &[9]).contains("4 workers"));
    assert!(err(Operation::Delete, &[0]).contains("no --worker"));
    let (cd, cd_file) = tenant(StorageMode::CloudDrive);
    assert!(
        build(&cd, cd_file, Operation::ScaleIn, &[3])
            .unwrap_err()
            .0
            .contains("direct-access")
    );
    assert_eq!(
        build(&t, file, Operation::Grow, &[]).unwrap().workers,
        vec![0, 1, 2, 3]
    );
}

#[test]
fn commands_are_quoted_and_holes_kept() {
    use super::text::{Word, command_line};
    let id = |t: &str| t.to_string();
    let words = vec![
        Word::from_template("oc", id),
        Word::from_template("node/<new-vm>", id),
        Word::from_template("a b", id),
        Word::from_template("<x;y>", id),
        Word::from_template("$(id)<n>", id),
        // A filled value never makes a hole, whatever it holds.
        Word::from_template("{spec}", |_| "<evil;rm -rf ~>".to_string()),
    ];
    assert_eq!(
        command_line(&words),
        "oc node/<new-vm> 'a b' <x;y> '$(id)<n>' '<evil;rm -rf ~>'"
    );
    let (t, file) = tenant(StorageMode::CloudDrive);
    let r = build(&t, file, Operation::Delete, &[]).unwrap();
    let patch = r.steps[0].command.as_deref().unwrap();
    assert!(
        patch.ends_with(r#"-p '{"spec":{"deleteStrategy":{"type":"UninstallAndDelete"}}}'"#),
        "{patch}"
    );
}

#[test]
fn operations_parse_by_name() {
    for op in Operation::ALL {
        assert_eq!(op.as_str().parse::<Operation>().unwrap(), op);
    }
    assert!("scale".parse::<Operation>().is_err());
}

#[test]
fn every_verifiable_step_exists() {
    let ids: Vec<&str> = Operation::ALL
        .iter()
        .flat_map(|&op| MODES.iter().map(move |&m| (op, m)))
        .flat_map(|(op, m)| pieces(op, m).unwrap_or_default())
        .flat_map(|p| p.iter().map(|t| t.id))
        .collect();
    for (id, _) in steps::VERIFIABLE {
        assert!(
            ids.contains(id),
            "VERIFIABLE names {id}, which no runbook has"
        );
    }
}

#[test]
fn a_check_worded_for_direct_access_is_not_claimed_for_other_modes() {
    use crate::spec::StorageMode;
    let id = "nodepool.scale-out";
    assert!(super::steps::verifiable_in(id, StorageMode::DirectAccess).is_some());
    assert!(super::steps::verifiable_in(id, StorageMode::CloudDrive).is_none());
    assert_eq!(
        super::steps::verifiable_in("node.joined", StorageMode::CloudDrive),
        super::steps::verifiable("node.joined")
    );
}

/// `grow` prints old -> new drive sizes from the edited spec; without it the new size
/// is a word to read off `pxfa size`; an edited spec of another tenant or with
/// smaller drives is refused.
#[test]
fn grow_reads_the_new_size_from_the_edited_spec() {
    let (t, file) = tenant(StorageMode::CloudDrive);
    let old = t.sizing.drive_size.gib_ceil();
    let mut spec = t.spec.clone();
    spec.spec.storage.capacity = flasharray::Size::gib(t.spec.spec.storage.capacity.gib_ceil() * 2);
    let after = Tenant::from_spec(spec, file.as_ref()).unwrap();
    let new = after.sizing.drive_size.gib_ceil();
    assert!(new > old, "{old} -> {new}");
    let book = build_edited(&t, file, Operation::Grow, &[], Some(&after)).unwrap();
    let text = to_text(&book);
    assert!(
        text.contains(&format!("from {old} GiB to {new} GiB"))
            && text.contains(&format!("--size {new} ")),
        "{text}"
    );
    let plain = to_text(&build(&t, file, Operation::Grow, &[]).unwrap());
    assert!(plain.contains("--size '<new-drive-gib>'"), "{plain}");
    // Smaller drives, or another tenant: refused.
    let err = build_edited(&after, file, Operation::Grow, &[], Some(&t)).unwrap_err();
    assert!(err.0.contains("spec.storage.capacity"), "{}", err.0);
    let (other, _) = tenant(StorageMode::DirectAccess);
    assert!(build_edited(&t, file, Operation::Grow, &[], Some(&other)).is_err());
}

/// management-maintenance: direct-access stops and restarts each worker around its
/// node's drain (the workers cannot live-migrate with the examples' ReadWriteOnce
/// drives); cloud-drive and kubevirt-csi check the migrations instead; no --worker.
#[test]
fn management_maintenance_per_mode() {
    let op = Operation::ManagementMaintenance;
    let text = |mode| {
        let (t, file) = tenant(mode);
        to_text(&build(&t, file, op, &[]).unwrap())
    };
    let da = text(StorageMode::DirectAccess);
    assert!(
        da.contains("virtctl stop") && da.contains("virtctl start"),
        "{da}"
    );
    assert!(da.contains("hyperconverged-eviction"), "{da}");
    for mode in [StorageMode::CloudDrive, StorageMode::KubevirtCsi] {
        let t = text(mode);
        assert!(
            t.contains("oc get vmim") && !t.contains("virtctl stop"),
            "{t}"
        );
    }
    let (t, file) = tenant(StorageMode::DirectAccess);
    let err = build(&t, file, op, &[0]).unwrap_err();
    assert!(err.0.contains("takes no --worker"), "{}", err.0);
}

/// delete: every mode removes what the HostedCluster's deletion leaves (the MetalLB
/// pool, the Secrets and the NodePool ConfigMap), by pxfa's labels for this tenant,
/// after the HostedCluster is gone.
#[test]
fn delete_removes_the_tenants_other_objects_in_every_mode() {
    for mode in MODES {
        let (t, file) = tenant(mode);
        let text = to_text(&build(&t, file, Operation::Delete, &[]).unwrap());
        let selector = crate::labels::tenant_selector(&t.spec.tenant_id());
        let hc = text
            .find("oc delete hostedcluster")
            .expect("hosted cluster step");
        let pool = text
            .find("oc delete ipaddresspool,l2advertisement -n metallb-system -l")
            .unwrap_or_else(|| panic!("{mode}: {text}"));
        let secrets = text
            .find("oc delete secret,configmap -n")
            .unwrap_or_else(|| panic!("{mode}: {text}"));
        assert!(hc < pool && pool < secrets, "{mode}: {text}");
        assert_eq!(text.matches(&selector).count(), 2, "{mode}: {text}");
        // What an earlier pxfa labelled with the name alone: found by hand.
        assert_eq!(
            text.matches("!pxfa.io/tenant-namespace").count(),
            2,
            "{mode}: {text}"
        );
    }
}

/// The ids of `op`'s steps for `t`, in order.
fn step_ids(t: &Tenant, op: Operation) -> Vec<&'static str> {
    let book = build(t, "t.yaml", op, &[]).unwrap();
    book.steps.iter().map(|s| s.id).collect()
}

/// N6: a dynamic direct-access tenant's drives are released through the management
/// Portworx (reclaim policy Delete before the claims go); an import tenant's, which
/// pxfa made, through the array and the Released PVs deleted by hand.
#[test]
fn direct_access_delete_releases_drives_by_provisioning() {
    let ids = |t: &Tenant| step_ids(t, Operation::Delete);
    let (dynamic, _) = tenant(StorageMode::DirectAccess);
    let got = ids(&dynamic);
    let at = |id: &str| got.iter().position(|s| *s == id);
    let (reclaim, hc, released, destroy) = (
        at("delete.reclaim-delete").expect("reclaim step"),
        at("delete.hosted-cluster").unwrap(),
        at("delete.drives-released").expect("released step"),
        at("delete.pxfa-destroy").unwrap(),
    );
    assert!(
        reclaim < hc && hc < released && released < destroy,
        "{got:?}"
    );
    assert!(
        at("delete.released-pvs").is_none() && at("release.pvs").is_none(),
        "{got:?}"
    );

    let mut spec = dynamic.spec.clone();
    spec.spec.portworx.version = "3.7.0".parse().unwrap();
    spec.spec.management.portworx_version = None;
    spec.spec.management.fa_fb_driver = true;
    spec.spec.storage.provisioning = crate::spec::Provisioning::Import;
    assert_eq!(spec.provisioning().unwrap().strategy, Strategy::Import);
    let import = Tenant::from_spec(spec, "t.yaml".as_ref()).unwrap();
    let got = ids(&import);
    assert!(
        got.contains(&"delete.released-pvs") && got.contains(&"release.pvs"),
        "{got:?}"
    );
    for dynamic_only in [
        "delete.drive-pvs",
        "delete.reclaim-delete",
        "delete.drives-released",
    ] {
        assert!(!got.contains(&dynamic_only), "{got:?}");
    }
}

/// #36 N6 for scale-in: a dynamic worker's drives are released through the
/// management Portworx (each PV's reclaim policy Delete, then its claims), never by
/// `pxfa apply --release-removed-workers`; an import worker's, which pxfa made,
/// through the array and the Released PVs deleted by hand, as before.
#[test]
fn direct_access_scale_in_releases_drives_by_provisioning() {
    let ids = |t: &Tenant| step_ids(t, Operation::ScaleIn);
    let (dynamic, _) = tenant(StorageMode::DirectAccess);
    let got = ids(&dynamic);
    let at = |id: &str| got.iter().position(|s| *s == id);
    let (find, delete, reclaim, claims) = (
        at("worker.find-vm").unwrap(),
        at("decommission.cluster-delete").expect("decommission step"),
        at("release.reclaim-delete").expect("reclaim step"),
        at("release.claims-delete").expect("claims step"),
    );
    assert!(
        find < delete && delete < reclaim && reclaim < claims,
        "{got:?}"
    );
    for import_only in ["release.drives", "release.claims", "release.pvs"] {
        assert!(!got.contains(&import_only), "{got:?}");
    }
    let book = build(&dynamic, "t.yaml", Operation::ScaleIn, &[]).unwrap();
    let text = serde_json::to_string(&book.steps[reclaim]).unwrap();
    assert!(text.contains("persistentVolumeReclaimPolicy"), "{text}");

    let mut spec = dynamic.spec.clone();
    spec.spec.portworx.version = "3.7.0".parse().unwrap();
    spec.spec.management.portworx_version = None;
    spec.spec.management.fa_fb_driver = true;
    spec.spec.storage.provisioning = crate::spec::Provisioning::Import;
    let import = Tenant::from_spec(spec, "t.yaml".as_ref()).unwrap();
    let got = ids(&import);
    for import_only in ["release.drives", "release.claims", "release.pvs"] {
        assert!(got.contains(&import_only), "{got:?}");
    }
    for dynamic_only in ["release.reclaim-delete", "release.claims-delete"] {
        assert!(!got.contains(&dynamic_only), "{got:?}");
    }
}
