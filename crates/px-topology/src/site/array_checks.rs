//! The array's prerequisites, from an [`ArrayView`] (what the CLI read with the
//! pipeline's observe and plan, never writing).

use super::report::{Check, CheckBuilder, Layer};
use super::views::ArrayView;

fn a(name: &str, read: impl Into<String>) -> CheckBuilder {
    Check::of(Layer::Array, name, read)
}

/// Every array check. An unreachable array gives one failed check and nothing else.
pub fn array_checks(view: &ArrayView) -> Vec<Check> {
    let reach = a("reachable", "GET /api/api_version, then /arrays");
    if let Some(why) = &view.unreachable {
        return vec![reach.fail(
            why.clone(),
            "check --array / PUREFA_URL, the API token and the network path",
        )];
    }
    let mut out = vec![reach.ok(view.name.clone().unwrap_or_else(|| "answered".into()))];
    out.push(rest_version(view));
    let purity = a("purity-version", "/arrays version");
    out.push(match &view.purity_version {
        Some(v) => purity.ok(v.clone()),
        None => purity.unknown(
            "not reported",
            "check the array's Purity version in its GUI",
        ),
    });
    let safemode = a("safemode", "/arrays eradication_config");
    out.push(match view.safemode {
        Some(true) => safemode.warn(
            "SafeMode locks eradication",
            "`pxfa destroy --eradicate` leaves volumes pending until their timer ends; that is expected",
        ),
        Some(false) => safemode.ok("eradication not locked"),
        None => safemode.ok("not reported"),
    });
    let space = a(
        "space-and-quota",
        "/arrays/space and the pod quotas, against the plan",
    );
    out.push(if view.space_findings.is_empty() {
        space.ok("the plan fits")
    } else {
        space.fail(
            view.space_findings.join("; "),
            "free space on the array or lower spec.storage.capacity",
        )
    });
    let hosts = a(
        "management-initiators",
        "/hosts iqns, wwns, nqns of spec.management.nodes",
    );
    out.push(if let Some(why) = &view.no_hosts_planned {
        hosts.ok(match view.nodes_without_host.as_slice() {
            [] => why.clone(),
            nodes => format!("{why}; no host holds yet the initiators of: {}", nodes.join(", ")),
        })
    } else if view.nodes_without_host.is_empty() {
        hosts.ok("every management node's initiators are on a host, or pxfa creates it")
    } else {
        hosts.warn(
            format!("no host holds the initiators of: {}", view.nodes_without_host.join(", ")),
            "`pxfa apply` creates the hosts; check the initiators in spec.management.nodes if the array should know them",
        )
    });
    let names = a(
        "name-collisions",
        "the plan's blockers (objects with pxfa's names it does not own)",
    );
    out.push(if view.blockers.is_empty() {
        names.ok("none")
    } else {
        names.fail(
            view.blockers.join("; "),
            "rename in the spec, or adopt them (`pxfa plan` names the flag)",
        )
    });
    out
}

fn rest_version(view: &ArrayView) -> Check {
    let c = a("rest-version", "GET /api/api_version");
    match (view.rest_minor, &view.rest_needed) {
        (Some(have), Some((need, what))) if have < *need => c.fail(
            format!("REST 2.{have}; the spec needs 2.{need} for {what}"),
            "upgrade Purity, or drop the feature from the spec",
        ),
        (Some(have), _) => c.ok(format!("REST 2.{have}")),
        (None, _) => c.unknown("not reported", "check the array's REST versions"),
    }
}
