//! Array-wide settings and singletons that `purefa_info` reads on every run:
//! `/support`, `/dns`, `/smi-s`, `/snmp-agents`, `/admins/settings`,
//! `/arrays/performance`, `/smtp-servers` and `/subscriptions`. Each answers the
//! one item a fresh array has, with the factory defaults; they are read-only here.

use hyper::Method;
use serde_json::json;

use super::Call;
use crate::sim::paging::{PAGING_PARAMS, PageRequest};
use crate::sim::response::{Fail, Reply, not_found};

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
            let info = call.state.array.get_array().await?;
            vec![json!({
                "id": info.id, "name": info.name, "time": call.state.now_ms(),
                "reads_per_sec": 0, "writes_per_sec": 0, "read_bytes_per_sec": 0,
                "write_bytes_per_sec": 0, "usec_per_read_op": 0, "usec_per_write_op": 0,
                "queue_depth": 0, "local_queue_usec_per_op": 0,
            })]
        }
        other => return Err(not_found(&format!("/{other}"))),
    };
    Ok(page.reply(&items, None))
}
