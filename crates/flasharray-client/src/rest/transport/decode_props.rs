//! Generated answers for every response decoder: whatever an array (or something
//! posing as one) sends, decoding ends in a value or a `Decode` error that names a
//! path and shows no string it was sent; no panic, no wrapped number, no hang.

use proptest::prelude::*;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{Items, api_error, decode_bytes};
use crate::error::Error;
use crate::models::{
    Admin, AdminApiToken, ApiToken, ArrayInfo, ArraySpace, Connection, Host, HostGroup,
    ManagementAccessPolicy, Member, Pod, Realm, Tag, Volume,
};
use crate::params::Page;

/// Every generated string starts with this: an error that shows it echoed a value.
const MARK: &str = "SeCrEt";

/// Field names the models read, so generated objects hit the real fields with
/// values of the wrong (or right) shape.
const FIELDS: &[&str] = &[
    "name",
    "id",
    "serial",
    "provisioned",
    "created",
    "destroyed",
    "time_remaining",
    "space",
    "total_physical",
    "total_provisioned",
    "capacity",
    "qos",
    "bandwidth_limit",
    "iops_limit",
    "pod",
    "host_group",
    "host",
    "volume",
    "lun",
    "iqns",
    "wwns",
    "nqns",
    "personality",
    "chap",
    "port_connectivity",
    "connection_count",
    "host_count",
    "member",
    "group",
    "arrays",
    "quota_limit",
    "eradication_config",
    "key",
    "value",
    "namespace",
    "resource",
    "copyable",
    "api_token",
    "token",
    "expires_at",
    "created_at",
    "role",
    "management_access_policies",
    "rules",
    "scope",
    "realm",
    "realms",
    "os",
    "version",
    "items",
    "continuation_token",
    "more_items_remaining",
    "total_item_count",
    "errors",
    "message",
    "context",
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        // Beyond u64, negative and fractional sizes must not wrap into a small value.
        prop_oneof![
            Just(1e30),
            Just(-1.0),
            Just(0.5),
            Just(1.8446744073709552e19)
        ]
        .prop_map(|f| json!(f)),
        "[a-z0-9:_./-]{0,12}".prop_map(|s| Value::from(format!("{MARK}{s}"))),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(prop::sample::select(FIELDS), inner, 0..6).prop_map(|m| {
                Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

/// A list answer: `{"items": [...], ...}` with generated items and envelope fields.
fn listing() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(value(), 0..4),
        prop::option::of(scalar()),
        prop::option::of(scalar()),
    )
        .prop_map(|(items, token, more)| {
            let mut v = json!({ "items": items });
            if let Some(t) = token {
                v["continuation_token"] = t;
            }
            if let Some(m) = more {
                v["more_items_remaining"] = m;
            }
            v
        })
}

/// Decodes `body` as a page and as items of `T`: a value, or an error naming the
/// operation and showing no generated string.
fn check<T: DeserializeOwned>(body: &[u8]) -> Result<(), TestCaseError> {
    for r in [
        decode_bytes::<Page<T>>(body, "GET /api/2.x/things").map(|_| ()),
        decode_bytes::<Items<T>>(body, "GET /api/2.x/things").map(|_| ()),
    ] {
        if let Err(e) = r {
            prop_assert!(matches!(e, Error::Decode { .. }), "{e:?}");
            let shown = format!("{e} {e:?}");
            prop_assert!(!shown.contains(MARK), "a value is echoed: {shown}");
            prop_assert!(shown.contains("GET /api/2.x/things"), "{shown}");
        }
    }
    Ok(())
}

fn check_all(body: &[u8]) -> Result<(), TestCaseError> {
    check::<Volume>(body)?;
    check::<Host>(body)?;
    check::<HostGroup>(body)?;
    check::<Member>(body)?;
    check::<Connection>(body)?;
    check::<Pod>(body)?;
    check::<Tag>(body)?;
    check::<ArrayInfo>(body)?;
    check::<ArraySpace>(body)?;
    check::<Realm>(body)?;
    check::<ManagementAccessPolicy>(body)?;
    check::<Admin>(body)?;
    check::<ApiToken>(body)?;
    check::<AdminApiToken>(body)?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn listings_of_any_shape_decode_or_fail_cleanly(v in listing()) {
        check_all(&serde_json::to_vec(&v).unwrap())?;
    }

    #[test]
    fn any_bytes_decode_or_fail_cleanly(body in prop::collection::vec(any::<u8>(), 0..512)) {
        check_all(&body)?;
    }

    #[test]
    fn any_error_answer_becomes_an_api_error(
        status in 400u16..600,
        v in value(),
        raw in prop::bool::ANY,
    ) {
        let body = if raw { format!("{v}").into_bytes() } else { serde_json::to_vec(&json!({"errors": [v]})).unwrap() };
        let e = api_error(
            StatusCode::from_u16(status).unwrap(),
            &HeaderMap::new(),
            &body,
            "POST /api/2.x/things".into(),
            "rid".into(),
        );
        let api = e.as_api().expect("an API error");
        prop_assert_eq!(api.status, status);
        prop_assert!(!api.errors.is_empty());
    }
}

#[test]
fn sizes_that_do_not_fit_are_refused_not_wrapped() {
    for bad in ["-1", "1e30", "18446744073709551616", "0.5"] {
        let body = format!(r#"{{"items": [{{"name": "v1", "provisioned": {bad}}}]}}"#);
        let r = decode_bytes::<Items<Volume>>(body.as_bytes(), "GET /api/2.x/volumes");
        match r {
            Err(Error::Decode { path, .. }) => assert!(path.contains("provisioned"), "{path}"),
            Ok(v) => panic!("{bad} decoded as {:?}", v.items[0].provisioned),
            Err(e) => panic!("{e:?}"),
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = format!(
        "{{\"items\": [{}{}]}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let started = std::time::Instant::now();
    assert!(decode_bytes::<Items<Volume>>(deep.as_bytes(), "GET /x").is_err());
    assert!(decode_bytes::<Items<Value>>(deep.as_bytes(), "GET /x").is_err());
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}
