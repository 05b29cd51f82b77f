//! Token rotation against MockArray and a fake tenant cluster holding px-pure-secret.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use flasharray::FlashArray;
use flasharray_mock::MockArray;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use px_cluster::token::{PURE_SECRET, TOKEN_USER_ANNOTATION, pure_secret_holds_real_token};
use px_cluster::{RotateOptions, TokenProbe, rotate_token};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, Request, Respond, ResponseTemplate};

use crate::support::*;

const PRIMARY: &str = "pxfa-tenant-cd";
const ALTERNATE: &str = "pxfa-tenant-cd-alt";

/// Called after each secret write, to inject faults at that moment.
type AfterPut = Box<dyn Fn(&MockArray) + Send + Sync>;

/// The tenant's px-pure-secret, kept in memory; every write is checked against the
/// array: the new token must already work and the one it replaces must still work.
#[derive(Clone)]
struct SecretStore {
    secret: Arc<Mutex<Value>>,
    mock: MockArray,
    violations: Arc<Mutex<Vec<String>>>,
    events: Arc<Mutex<Vec<String>>>,
    fail_next_put: Arc<AtomicBool>,
    after_put: Arc<Mutex<Option<AfterPut>>>,
}

fn pure_token(secret: &Value) -> String {
    let s: Secret = serde_json::from_value(secret.clone()).unwrap();
    let raw = &s.data.unwrap()["pure.json"];
    let pure: Value = serde_json::from_slice(&raw.0).unwrap();
    pure["FlashArrays"][0]["APIToken"]
        .as_str()
        .unwrap()
        .to_string()
}

impl SecretStore {
    fn token(&self) -> String {
        pure_token(&self.secret.lock().unwrap())
    }
}

impl Respond for SecretStore {
    fn respond(&self, r: &Request) -> ResponseTemplate {
        match r.method.as_str() {
            "GET" => ResponseTemplate::new(200).set_body_json(self.secret.lock().unwrap().clone()),
            "PUT" => {
                if self.fail_next_put.swap(false, Ordering::SeqCst) {
                    return ResponseTemplate::new(500).set_body_json(json!({
                        "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 500,
                        "reason": "InternalError", "message": "etcd timeout"}));
                }
                let mut new: Value = r.body_json().unwrap();
                let old_token = self.token();
                let new_token = pure_token(&new);
                let user = new["metadata"]["annotations"][TOKEN_USER_ANNOTATION]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if self.mock.api_token_owner(&new_token).as_deref() != Some(user.as_str()) {
                    self.violations
                        .lock()
                        .unwrap()
                        .push(format!("wrote a token that does not log in as {user}"));
                }
                if self.mock.api_token_owner(&old_token).is_none() {
                    self.violations
                        .lock()
                        .unwrap()
                        .push("the replaced token was already deleted".into());
                }
                self.events
                    .lock()
                    .unwrap()
                    .push(format!("secret -> {user}"));
                let rv: u64 = new["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                new["metadata"]["resourceVersion"] = json!((rv + 1).to_string());
                *self.secret.lock().unwrap() = new.clone();
                if let Some(hook) = self.after_put.lock().unwrap().as_ref() {
                    hook(&self.mock);
                }
                ResponseTemplate::new(200).set_body_json(new)
            }
            _ => ResponseTemplate::new(405),
        }
    }
}

struct MockProbe {
    mock: MockArray,
    fail_next: AtomicBool,
    events: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl TokenProbe for MockProbe {
    async fn verify(&self, user: &str, token: &SecretString) -> Result<(), px_cluster::BoxError> {
        if self.fail_next.swap(false, Ordering::SeqCst) {
            return Err("login refused (injected)".into());
        }
        let owner = self
            .mock
            .api_token_owner(token.expose_secret())
            .ok_or("login refused")?;
        if owner != user {
            return Err(format!("logs in as {owner}").into());
        }
        self.events
            .lock()
            .unwrap()
            .push(format!("verified {owner}"));
        Ok(())
    }
}

struct Rotation {
    fake: Fake,
    mock: MockArray,
    store: SecretStore,
    probe: MockProbe,
    original: String,
}

async fn rotation_setup() -> Rotation {
    let fake = Fake::start().await;
    let mock = MockArray::new();
    mock.add_admin(PRIMARY);
    mock.add_admin(ALTERNATE);
    let original = mock
        .create_api_token(PRIMARY, None)
        .await
        .unwrap()
        .api_token
        .expose()
        .unwrap()
        .to_string();
    let pure = json!({"FlashArrays": [{"MgmtEndPoint": "fa1.example.net", "APIToken": original}]});
    let secret = Secret {
        metadata: kube::core::ObjectMeta {
            name: Some(PURE_SECRET.into()),
            namespace: Some("portworx".into()),
            resource_version: Some("1".into()),
            ..Default::default()
        },
        data: Some(
            [(
                "pure.json".to_string(),
                ByteString(pure.to_string().into_bytes()),
            )]
            .into(),
        ),
        ..Default::default()
    };
    let events = Arc::new(Mutex::new(Vec::new()));
    let store = SecretStore {
        secret: Arc::new(Mutex::new(serde_json::to_value(secret).unwrap())),
        mock: mock.clone(),
        violations: Arc::default(),
        events: events.clone(),
        fail_next_put: Arc::default(),
        after_put: Arc::default(),
    };
    Mock::given(path(format!(
        "/api/v1/namespaces/portworx/secrets/{PURE_SECRET}"
    )))
    .respond_with(store.clone())
    .mount(&fake.server)
    .await;
    let probe = MockProbe {
        mock: mock.clone(),
        fail_next: AtomicBool::new(false),
        events,
    };
    Rotation {
        fake,
        mock,
        store,
        probe,
        original,
    }
}

fn rotate_opts() -> RotateOptions {
    RotateOptions {
        alternate_user: ALTERNATE.into(),
        lifetime: None,
        grace: Duration::ZERO,
        journal: None,
    }
}

async fn tokens_of(mock: &MockArray, user: &str) -> usize {
    mock.list_api_tokens(&[user.to_string()], false)
        .await
        .unwrap()
        .iter()
        .filter(|t| t.api_token.created_at.is_some())
        .count()
}

/// The end state every successful run reaches: the token user holds the only token,
/// it is in the secret and works, the original is dead.
async fn assert_rotated(r: &Rotation) {
    let token = r.store.token();
    assert_ne!(token, r.original);
    assert_eq!(r.mock.api_token_owner(&token).as_deref(), Some(PRIMARY));
    assert_eq!(r.mock.api_token_owner(&r.original), None);
    assert_eq!(tokens_of(&r.mock, ALTERNATE).await, 0);
    assert_eq!(
        r.store.secret.lock().unwrap()["metadata"]["annotations"][TOKEN_USER_ANNOTATION],
        PRIMARY
    );
    assert!(
        r.store.violations.lock().unwrap().is_empty(),
        "{:?}",
        r.store.violations
    );
}

fn assert_tenant_works(r: &Rotation) {
    assert!(
        r.mock.api_token_owner(&r.store.token()).is_some(),
        "the tenant was left without a working token"
    );
}

#[tokio::test]
async fn token_rotation_writes_and_confirms_before_deleting() {
    let r = rotation_setup().await;
    let client = r.fake.client().await;
    let report = rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .expect("rotate");
    assert_eq!(report.active_user, PRIMARY);
    assert_rotated(&r).await;
    assert_eq!(
        *r.store.events.lock().unwrap(),
        [
            format!("verified {ALTERNATE}"),
            format!("secret -> {ALTERNATE}"),
            format!("verified {PRIMARY}"),
            format!("secret -> {PRIMARY}")
        ]
    );
    let steps = report.steps.join("\n");
    let pos = |s: &str| {
        steps
            .find(s)
            .unwrap_or_else(|| panic!("{s} missing in {steps}"))
    };
    assert!(
        pos(&format!(
            "confirmed Secret portworx/{PURE_SECRET} holds the token of {ALTERNATE}"
        )) < pos(&format!("deleted the old token of {PRIMARY}"))
    );
    assert!(
        pos(&format!(
            "confirmed Secret portworx/{PURE_SECRET} holds the token of {PRIMARY}"
        )) < pos(&format!("deleted the old token of {ALTERNATE}"))
    );
    // Only the bookkeeping manager wrote, with the resourceVersion it had read.
    let puts = r.fake.requests("PUT", "/secrets/").await;
    assert_eq!(puts.len(), 2);
    assert!(
        puts[0]
            .url
            .query()
            .unwrap()
            .contains("fieldManager=pxfa-bookkeeping")
    );
    assert_eq!(
        puts[0].body_json::<Value>().unwrap()["metadata"]["resourceVersion"],
        "1"
    );
    // Again: still converges, nothing left over.
    rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .expect("second rotation");
    assert_eq!(tokens_of(&r.mock, PRIMARY).await, 1);
    assert_eq!(tokens_of(&r.mock, ALTERNATE).await, 0);
}

#[tokio::test]
async fn token_rotation_failing_verification_is_completed_by_a_rerun() {
    let r = rotation_setup().await;
    let client = r.fake.client().await;
    r.probe.fail_next.store(true, Ordering::SeqCst);
    let err = rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .unwrap_err();
    assert!(format!("{err:#}").contains("does not log in"), "{err:#}");
    assert_eq!(r.store.token(), r.original, "secret untouched");
    assert_tenant_works(&r);
    rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .expect("re-run");
    assert_rotated(&r).await;
}

#[tokio::test]
async fn token_rotation_failing_secret_write_is_completed_by_a_rerun() {
    let r = rotation_setup().await;
    let client = r.fake.client().await;
    r.store.fail_next_put.store(true, Ordering::SeqCst);
    let err = rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .unwrap_err();
    let text = format!("{err:#}");
    assert!(
        text.contains("cannot update Secret portworx/px-pure-secret"),
        "{text}"
    );
    assert!(!text.contains(&r.original), "no token in errors");
    assert_tenant_works(&r);
    rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .expect("re-run");
    assert_rotated(&r).await;
}

#[tokio::test]
async fn token_rotation_interrupted_after_each_switch_is_completed_by_a_rerun() {
    for nth_put in [1usize, 2] {
        let r = rotation_setup().await;
        let client = r.fake.client().await;
        // Right after the nth secret write the array becomes unavailable, so the
        // deletion of the replaced token fails.
        let puts = Arc::new(AtomicUsize::new(0));
        let p = puts.clone();
        *r.store.after_put.lock().unwrap() = Some(Box::new(move |mock: &MockArray| {
            if p.fetch_add(1, Ordering::SeqCst) + 1 == nth_put {
                mock.faults().unavailable_next(1);
            }
        }));
        let err = rotate_token(
            &r.mock,
            &r.probe,
            &client,
            &cloud_drive_spec(),
            &rotate_opts(),
        )
        .await
        .unwrap_err();
        assert!(format!("{err:#}").contains("API token"), "{err:#}");
        assert_tenant_works(&r);
        rotate_token(
            &r.mock,
            &r.probe,
            &client,
            &cloud_drive_spec(),
            &rotate_opts(),
        )
        .await
        .unwrap_or_else(|e| panic!("re-run after switch {nth_put}: {e:#}"));
        assert_rotated(&r).await;
    }
}

/// `apply` asks this before reporting a token nobody has: a real token in the tenant's
/// px-pure-secret counts as a copy, a template or a missing secret does not.
#[tokio::test]
async fn pure_secret_copy_is_recognised() {
    let r = rotation_setup().await;
    let client = r.fake.client().await;
    let spec = cloud_drive_spec();
    assert!(pure_secret_holds_real_token(&client, &spec).await.unwrap());
    let template = px_topology::PureJson::single(
        "fa1.example.net",
        px_topology::PureJson::placeholder_token(PRIMARY),
    );
    r.store.secret.lock().unwrap()["data"]["pure.json"] =
        serde_json::to_value(ByteString(template.to_text().into_bytes())).unwrap();
    assert!(!pure_secret_holds_real_token(&client, &spec).await.unwrap());
    // No secret at all.
    let empty = Fake::start().await;
    let client = empty.client().await;
    Mock::given(path(format!(
        "/api/v1/namespaces/portworx/secrets/{PURE_SECRET}"
    )))
    .respond_with(ResponseTemplate::new(404).set_body_json(json!({
        "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
        "reason": "NotFound", "message": "secrets \"px-pure-secret\" not found"})))
    .mount(&empty.server)
    .await;
    assert!(!pure_secret_holds_real_token(&client, &spec).await.unwrap());
}

/// With a token journal, a rotation killed right after any token creation (before
/// the secret holds it) is finished by the next run: the journaled token is written,
/// not created again, and the end state is the usual one.
#[tokio::test]
async fn rotation_killed_after_a_token_creation_resumes_from_the_journal() {
    use px_topology::token_journal::{JournalStep, MemTokenJournal};
    for nth in [1usize, 2] {
        let r = rotation_setup().await;
        let client = r.fake.client().await;
        let token_journal = MemTokenJournal::new();
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        token_journal.set_hook(Box::new(move |step| {
            if step == JournalStep::Token && c.fetch_add(1, Ordering::SeqCst) + 1 == nth {
                panic!("killed after journaling token {nth}");
            }
        }));
        let opts = RotateOptions {
            journal: Some(Arc::new(token_journal.clone())),
            ..rotate_opts()
        };
        let (mock, cl, o) = (r.mock.clone(), client.clone(), opts.clone());
        let probe = MockProbe {
            mock: r.mock.clone(),
            fail_next: AtomicBool::new(false),
            events: r.store.events.clone(),
        };
        let killed =
            tokio::spawn(
                async move { rotate_token(&mock, &probe, &cl, &cloud_drive_spec(), &o).await },
            )
            .await;
        assert!(killed.is_err(), "run {nth} was not killed");
        assert_tenant_works(&r);
        token_journal.clear_hook();
        let report = rotate_token(&r.mock, &r.probe, &client, &cloud_drive_spec(), &opts)
            .await
            .unwrap_or_else(|e| panic!("re-run after kill {nth}: {e:#}"));
        assert!(
            report.steps.iter().any(|s| s.contains("is in the journal")),
            "{:?}",
            report.steps
        );
        assert_rotated(&r).await;
    }
}
