//! Array-wide settings and singletons that `purefa_info` reads on every run:
//! `/support`, `/dns`, `/smi-s`, `/snmp-agents`, `/admins/settings`,
//! `/arrays/performance`, `/smtp-servers` and `/subscriptions`. Each answers the
//! one item a fresh array has, with the factory defaults; they are read-only here.

use hyper::Method;
use serde_json::json;

use super::Call;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply, not_found};

/// Whether `resource` is one of these singletons.
pub(super) fn is_singleton(resource: &str) -> bool {
    matches!(
        resource,
        "support"
            | "dns"
            | "smi-s"
            | "snmp-agents"
            | "admins/settings"
            | "arrays/performance"
            | "smtp-servers"
            | "subscriptions"
    )
}

/// The counters of the REST 2.39 `ArrayPerformance` model.
const PERFORMANCE_COUNTERS: &[&str] = &[
    "bytes_per_mirrored_write",
    "bytes_per_op",
    "bytes_per_read",
    "bytes_per_write",
    "mirrored_write_bytes_per_sec",
    "mirrored_writes_per_sec",
    "qos_rate_limit_usec_per_mirrored_write_op",
    "qos_rate_limit_usec_per_read_op",
    "qos_rate_limit_usec_per_write_op",
    "queue_usec_per_mirrored_write_op",
    "queue_usec_per_read_op",
    "queue_usec_per_write_op",
    "read_bytes_per_sec",
    "reads_per_sec",
    "san_usec_per_mirrored_write_op",
    "san_usec_per_read_op",
    "san_usec_per_write_op",
    "service_usec_per_mirrored_write_op",
    "service_usec_per_read_op",
    "service_usec_per_read_op_cache_reduction",
    "service_usec_per_write_op",
    "usec_per_mirrored_write_op",
    "usec_per_read_op",
    "usec_per_write_op",
    "write_bytes_per_sec",
    "writes_per_sec",
    "local_queue_usec_per_op",
    "others_per_sec",
    "queue_depth",
    "usec_per_other_op",
];

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    if call.method != Method::GET {
        return Err(call.method_not_allowed());
    }
    let mut allowed = vec![
        "names",
        "filter",
        "sort",
        "expose_api_token",
        "protocol_group",
    ];
    allowed.extend_from_slice(PAGING_PARAMS);
    call.query.only(&allowed)?;
    let page = PageRequest::from_query(&call.resource, &call.query)?;
    let items = match call.resource.as_str() {
        "support" => vec![json!({
            "phonehome_enabled": false, "proxy": "", "remote_assist_active": false,
            // A closed session: 0 for its times (purefa_info tests `!= 0`), and
            // the default duration of 24 hours.
            "remote_assist_duration": 86_400_000, "remote_assist_expires": 0,
            "remote_assist_opened": 0, "remote_assist_paths": [],
            "remote_assist_status": "disconnected",
        })],
        "dns" => vec![json!({
            "name": "management", "domain": "", "nameservers": [], "services": ["management"],
            "source": {"name": null}, "ca_certificate": null, "ca_certificate_group": {"name": null},
        })],
        "smtp-servers" => vec![json!({
            "name": "smtp", "relay_host": null, "sender_domain": "", "user_name": null,
            "password": null, "encryption_mode": null,
        })],
        // purefa_info reads the first subscription's `service` as the array's
        // service mode, so arrays always list one. The value a non-subscription
        // array sends is not documented in our references; "Capex" is a stand-in.
        "subscriptions" => vec![json!({"id": "sim-subscription", "service": "Capex"})],
        "smi-s" => {
            vec![json!({"name": "smi-s", "slp_enabled": false, "wbem_https_enabled": false})]
        }
        "snmp-agents" => vec![json!({
            "name": "localhost", "engine_id": "80000d6303000000000000",
            "v2c": {"community": null}, "version": "v2c",
            "v3": {"auth_passphrase": null, "auth_protocol": null, "privacy_passphrase": null,
                   "privacy_protocol": null, "user": null},
        })],
        "admins/settings" => vec![json!({
            "lockout_duration": null, "max_login_attempts": null, "min_password_length": 1,
            "single_sign_on_enabled": false,
        })],
        "arrays/performance" => {
            // An idle array: every counter of the 2.39 model is 0 (purefa_info
            // reads each one).
            let info = call.state.array.get_array().await?;
            let mut item = json!({"id": info.id, "name": info.name, "time": call.state.now_ms()});
            for field in PERFORMANCE_COUNTERS {
                item[*field] = json!(0);
            }
            vec![item]
        }
        other => return Err(not_found(&format!("/{other}"))),
    };
    Ok(page.reply(&items, None))
}
