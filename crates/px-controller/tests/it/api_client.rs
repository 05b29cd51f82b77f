//! The controller's array Secret with an API client instead of an API token: the
//! pool's production connector logs in to the HTTPS simulator with it, and a whole
//! reconcile runs on it.

use std::collections::BTreeMap;
use std::time::Duration;

use flasharray::models::VolumePost;
use flasharray::{FlashArray, ListParams, VolumeName};
use flasharray_mock::MockArray;
use flasharray_sim::{SimConfig, Simulator};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use px_controller::Outcome;
use px_controller::{Connector, RestConnector, credentials_from_secret};

use crate::fake::{NAME, World, tenant_object};
use serde_json::json;

const NS: &str = "clusters";
const KEY: &str = include_str!("../../../flasharray-client/tests/keys/client-pkcs8.pem");
const PUBLIC: &str = include_str!("../../../flasharray-client/tests/keys/client-public.pem");

fn secret(data: &[(&str, &str)]) -> Secret {
    let data: BTreeMap<String, ByteString> = data
        .iter()
        .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
        .collect();
    Secret {
        data: Some(data),
        ..Secret::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_array_secret_may_hold_an_api_client() {
    flasharray::rest::install_crypto_provider();
    let array = MockArray::new();
    let sim = Simulator::start(array.clone(), SimConfig::new("unused-admin-token".into()))
        .await
        .unwrap();
    let (client_id, key_id) = sim
        .register_api_client(
            "px-controller",
            PUBLIC,
            "storage_admin",
            Duration::from_secs(3600),
        )
        .unwrap();
    let endpoint = sim.url().trim_start_matches("https://").to_string();
    // pure.json names the array and carries no token.
    let pure = json!({"FlashArrays": [{"MgmtEndPoint": endpoint}]}).to_string();
    let mut keys = vec![
        ("pure.json", pure.as_str()),
        ("ca.crt", sim.cert_pem()),
        ("client-id", client_id.as_str()),
        ("key-id", key_id.as_str()),
        ("issuer", "px-controller"),
        ("username", "pureuser"),
        ("private-key", KEY),
    ];
    let reference = serde_json::from_value(json!({"name": "fa1-creds"})).unwrap();
    let creds = credentials_from_secret(&secret(&keys), NS, &reference, None).unwrap();
    let shown = format!("{creds:?}");
    assert!(
        shown.contains(&key_id) && !shown.contains("PRIVATE"),
        "{shown}"
    );

    let rest = RestConnector::default().connect(&creds).unwrap();
    let name = VolumeName::new("controller-v1").unwrap();
    rest.create_volumes(&[name], &VolumePost::default().with_provisioned(1 << 30))
        .await
        .unwrap();
    assert_eq!(
        rest.list_volumes(&ListParams::all()).await.unwrap().len(),
        1
    );
    let log = sim.request_log();
    assert_eq!(
        log.iter().filter(|r| r.path == "/oauth2/1.0/token").count(),
        1
    );
    assert!(
        log.iter().all(|r| !r.path.ends_with("/login")),
        "no API-token login"
    );

    // A partial set is refused naming what is missing, never a value.
    keys.retain(|(k, _)| *k != "key-id");
    let e = credentials_from_secret(&secret(&keys), NS, &reference, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("lacks key-id") && e.contains("fa1-creds"), "{e}");
    assert!(!e.contains(&client_id), "{e}");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_runs_on_an_api_client() {
    flasharray::rest::install_crypto_provider();
    let array = MockArray::new();
    let sim = Simulator::start(array.clone(), SimConfig::new("unused-admin-token".into()))
        .await
        .unwrap();
    let (client_id, key_id) = sim
        .register_api_client(
            "px-controller",
            PUBLIC,
            "array_admin",
            Duration::from_secs(3600),
        )
        .unwrap();
    let endpoint = sim.url().trim_start_matches("https://").to_string();
    let pure = json!({"FlashArrays": [{"MgmtEndPoint": endpoint}]}).to_string();
    let creds = [
        ("pure.json", pure.as_str()),
        ("ca.crt", sim.cert_pem()),
        ("client-id", client_id.as_str()),
        ("key-id", key_id.as_str()),
        ("issuer", "px-controller"),
        ("username", "pureuser"),
        ("private-key", KEY),
    ];
    let mut obj = tenant_object();
    obj["spec"]["array"]["endpoint"] = json!(endpoint);
    let w = World::start_with(
        obj,
        array.clone(),
        2_000,
        &creds,
        Some(Box::new(RestConnector::default())),
    )
    .await;

    let outcome = w.reconcile().await.expect("reconciles");
    assert_eq!(outcome, Outcome::Converged, "{:?}", w.store.status(NAME));
    let volumes = array.list_volumes(&ListParams::all()).await.unwrap();
    assert!(!volumes.is_empty(), "the tenant's volumes are on the array");
    let log = sim.request_log();
    assert!(
        log.iter().all(|r| !r.path.ends_with("/login")),
        "no API-token login"
    );
    assert!(
        log.iter().any(|r| r.path == "/oauth2/1.0/token"),
        "the access token came from the exchange"
    );
    sim.shutdown().await;
}
