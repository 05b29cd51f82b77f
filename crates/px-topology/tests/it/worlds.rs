//! The arrays a lifecycle test runs on: {empty, brownfield} × {`MockArray` through
//! the trait, `RestArray` against the HTTPS simulator serving that mock}, and one
//! step of the tenant pipeline as the CLI runs it (observe, keep the drives in use,
//! plan with the growth rules, apply), checked the same way in every world: the
//! foreign objects never change, and a second apply plans nothing and writes
//! nothing.

use std::path::Path;

use flasharray::FlashArray;
use flasharray::rest::RestArray;
use flasharray_mock::foreign::ForeignView;
use flasharray_mock::{MockArray, MockClock, Seed};
use flasharray_sim::{RunningSim, SimConfig, Simulator};
use px_topology::spec::{Attach, TenantStorage};
use px_topology::{ApplyOptions, ApplyReport, Plan, PlanOptions, Planned, Site, Tenant};

use crate::support;
use crate::support::tenant::{apply, quiet};

const TOKEN: &str = "7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6";

/// One array to run on.
pub(crate) struct World {
    /// What the test says when it fails.
    pub(crate) name: String,
    /// The array's state (served over HTTPS in the REST worlds).
    pub(crate) mock: MockArray,
    rest: Option<(RunningSim, RestArray)>,
}

impl World {
    /// The array as the code under test reaches it.
    pub(crate) fn array(&self) -> &dyn FlashArray {
        match &self.rest {
            Some((_, r)) => r,
            None => &self.mock,
        }
    }

    /// Stops the simulator and the client, if any.
    pub(crate) async fn close(self) {
        if let Some((sim, rest)) = self.rest {
            rest.close().await.unwrap();
            sim.shutdown().await;
        }
    }
}

fn mock(seed: Seed) -> MockArray {
    MockArray::builder()
        .clock(MockClock::manual(30 * 24 * 3600 * 1000))
        .seed(seed)
        .build()
}

/// A fresh world: the seeded mock, reached directly or over HTTPS.
pub(crate) async fn world(seed: Seed, over_rest: bool) -> World {
    let seed_name = if seed == Seed::Empty {
        "empty"
    } else {
        "brownfield"
    };
    let m = mock(seed);
    let rest = if over_rest {
        let sim = Simulator::start(m.clone(), SimConfig::new(TOKEN.into()))
            .await
            .unwrap();
        let r = RestArray::builder(sim.url())
            .api_token(TOKEN.into())
            .ca_pem(sim.cert_pem().as_bytes().to_vec())
            .build()
            .unwrap();
        Some((sim, r))
    } else {
        None
    };
    World {
        name: format!(
            "{seed_name} array, {}",
            if over_rest { "REST/HTTPS" } else { "MockArray" }
        ),
        mock: m,
        rest,
    }
}

/// Runs `body` once in every world, each starting fresh.
pub(crate) async fn in_every_world(body: impl AsyncFn(&World)) {
    for seed in [Seed::Empty, Seed::brownfield()] {
        for over_rest in [false, true] {
            let w = world(seed.clone(), over_rest).await;
            body(&w).await;
            w.close().await;
        }
    }
}

/// The direct-access example as import through the management host group: the
/// variant whose drives pxfa creates, grows, retains and releases on the array.
pub(crate) fn import_tenant() -> TenantStorage {
    let mut t = support::as_import(
        support::example_specs()
            .into_iter()
            .find(|(m, _)| *m == "direct-access")
            .map(|(_, s)| s)
            .unwrap(),
    );
    t.spec.storage.attach = Attach::HostGroup;
    assert!(t.validate().is_empty(), "{:#?}", t.validate());
    t
}

/// The plan for `spec` on `array` as `pxfa plan` makes it: the drives in use kept
/// (and grown by the growth rules), with the tenant that plan is for.
pub(crate) async fn plan_step(
    array: &dyn FlashArray,
    spec: &TenantStorage,
    opts: PlanOptions,
) -> (Tenant, Plan) {
    let (t, _, p) = planned_step(array, spec, opts).await.into_parts();
    (t, p)
}

/// [`plan_step`]'s plan as the pipeline's stage before the apply.
pub(crate) async fn planned_step<'a>(
    array: &'a dyn FlashArray,
    spec: &TenantStorage,
    opts: PlanOptions,
) -> Planned<'a> {
    let t = Tenant::from_spec(spec.clone(), Path::new("spec.yaml")).unwrap();
    t.observe(Site::array(array))
        .await
        .expect("observe")
        .plan(&opts)
}

/// What one applied step did.
pub(crate) struct Step {
    /// The plan that was applied.
    pub(crate) plan: Plan,
    /// Its report.
    pub(crate) report: ApplyReport,
}

/// Plans and applies `spec` as `pxfa apply` does; asserts the plan applicable,
/// the apply successful, every foreign object unchanged, and that the next plan has
/// no change and its apply writes nothing.
pub(crate) async fn apply_step(w: &World, spec: &TenantStorage, opts: PlanOptions) -> Step {
    let a = w.array();
    let before = ForeignView::read(a, spec.tenant_name()).await.unwrap();
    let plan_staged = planned_step(a, spec, opts).await;
    let plan = plan_staged.plan().clone();
    assert!(plan.is_applicable(), "{}: {}", w.name, plan.to_text(false));
    let report = apply(plan_staged, &ApplyOptions::default(), &quiet).await;
    assert!(report.is_success(), "{}: {report:?}", w.name);
    let after = ForeignView::read(a, spec.tenant_name()).await.unwrap();
    assert_eq!(
        after.changes_since(&before),
        Vec::<String>::new(),
        "{}",
        w.name
    );
    let again_staged = planned_step(a, spec, opts).await;
    let again = again_staged.plan().clone();
    assert!(!again.has_changes(), "{}: {}", w.name, again.to_text(true));
    w.mock.reset_stats();
    let r = apply(again_staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{}: {r:?}", w.name);
    assert_eq!(
        w.mock.stats().writes,
        0,
        "{}: re-apply writes nothing",
        w.name
    );
    Step { plan, report }
}

/// Plans `spec` expecting it not applicable; returns the plan.
pub(crate) async fn refused_step(w: &World, spec: &TenantStorage, opts: PlanOptions) -> Plan {
    let (_, p) = plan_step(w.array(), spec, opts).await;
    assert!(!p.is_applicable(), "{}: {}", w.name, p.to_text(true));
    p
}
