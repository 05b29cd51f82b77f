//! `pure.json`, the file in `px-pure-secret` that tells Portworx (and pxfa) which
//! arrays to use and with which API token:
//! `{"FlashArrays": [{"MgmtEndPoint": "...", "APIToken": "..."}]}`.
//!
//! One type for every use: the renderer writes it, the CLI reads it for its array
//! address and token, token rotation replaces one entry's token. Keys pxfa does not
//! know (other arrays' labels, `FlashBlades`) are kept as they are, so an edit never
//! drops what an admin added. The token is a [`SecretString`]: Debug redacts it, and
//! parse errors give a position, never the text around it.

use std::fmt;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// The whole file.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct PureJson {
    /// The arrays, in file order.
    #[serde(rename = "FlashArrays", default)]
    pub flash_arrays: Vec<FlashArrayEntry>,
    /// Top-level keys pxfa does not use, kept for writing back.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One array of the file.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct FlashArrayEntry {
    /// The array's management address (a host, maybe with a port).
    #[serde(
        rename = "MgmtEndPoint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub mgmt_endpoint: Option<String>,
    /// The API token Portworx logs in with.
    #[serde(
        rename = "APIToken",
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "expose_token"
    )]
    pub api_token: Option<SecretString>,
    /// The realm the token's user is confined to (FlashArray secure multi-tenancy);
    /// Portworx then creates its volumes inside it. One realm per array per cluster.
    #[serde(rename = "Realm", default, skip_serializing_if = "Option::is_none")]
    pub realm: Option<String>,
    /// Keys of the entry pxfa does not use, kept for writing back.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl fmt::Debug for PureJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PureJson")
            .field("flash_arrays", &self.flash_arrays)
            .field("other", &self.other.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl fmt::Debug for FlashArrayEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlashArrayEntry")
            .field("mgmt_endpoint", &self.mgmt_endpoint)
            .field("api_token", &self.api_token.as_ref().map(|_| "[REDACTED]"))
            .field("realm", &self.realm)
            .field("other", &self.other.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The file is only ever written to a secret or a private file, which is the point
/// of the token being in it.
fn expose_token<S: Serializer>(token: &Option<SecretString>, s: S) -> Result<S::Ok, S::Error> {
    match token {
        Some(t) => s.serialize_str(t.expose_secret()),
        None => s.serialize_none(),
    }
}

/// Why a text is not a usable `pure.json`. Never quotes the text: it holds a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PureJsonError {
    /// Not JSON at all.
    #[error("not valid JSON (line {line}, column {column})")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// JSON, but not shaped like px-pure-secret.
    #[error(
        "not in the px-pure-secret format ({{\"FlashArrays\": [{{\"MgmtEndPoint\", \"APIToken\"}}]}}) (line {line}, column {column})"
    )]
    Format {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// No entry has the tenant's endpoint.
    #[error("has no FlashArrays entry with MgmtEndPoint {0}")]
    NoSuchEndpoint(String),
    /// Several entries and nothing says which one is the tenant's.
    #[error("lists {0} arrays and spec.array.endpoint is not set to say which one is the tenant's")]
    Ambiguous(usize),
}

impl PureJson {
    /// A file naming one array.
    pub fn single(endpoint: impl Into<String>, token: SecretString) -> Self {
        PureJson {
            flash_arrays: vec![FlashArrayEntry {
                mgmt_endpoint: Some(endpoint.into()),
                api_token: Some(token),
                realm: None,
                other: Map::new(),
            }],
            other: Map::new(),
        }
    }

    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<Self, PureJsonError> {
        serde_json::from_str(text).map_err(|e| {
            let (line, column) = (e.line(), e.column());
            match e.classify() {
                serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                    PureJsonError::Syntax { line, column }
                }
                _ => PureJsonError::Format { line, column },
            }
        })
    }

    /// The file's text: pretty JSON with a final newline, as Portworx's docs show it.
    pub fn to_text(&self) -> String {
        // Serializing maps with string keys and strings cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Replaces the token of the tenant's array: the entry whose `MgmtEndPoint` is
    /// `endpoint`, or the only entry when no endpoint is set.
    pub fn set_token(
        &mut self,
        endpoint: Option<&str>,
        token: SecretString,
    ) -> Result<(), PureJsonError> {
        let idx = match endpoint {
            Some(ep) => self
                .flash_arrays
                .iter()
                .position(|a| a.mgmt_endpoint.as_deref() == Some(ep))
                .ok_or_else(|| PureJsonError::NoSuchEndpoint(ep.to_string()))?,
            None if self.flash_arrays.len() == 1 => 0,
            None => return Err(PureJsonError::Ambiguous(self.flash_arrays.len())),
        };
        self.flash_arrays[idx].api_token = Some(token);
        Ok(())
    }

    /// The `APIToken` of a template px-pure-secret: says what to paste, cannot be
    /// mistaken for a token, and Portworx refuses it.
    pub fn placeholder_token(user: &str) -> SecretString {
        SecretString::from(format!("<paste the API token of array user {user} here>"))
    }

    /// True when some entry holds a token that is not a template's placeholder
    /// (empty, or `<...>`: array API tokens are UUIDs, never in angle brackets). Such a
    /// file may be the only copy of the token, so pxfa never overwrites it with a
    /// template.
    pub fn holds_real_token(&self) -> bool {
        self.flash_arrays.iter().any(|a| {
            a.api_token.as_ref().is_some_and(|t| {
                let t = t.expose_secret().trim();
                !t.is_empty() && (!t.starts_with('<') || !t.ends_with('>'))
            })
        })
    }

    /// True when some entry holds `token`.
    pub fn holds_token(&self, token: &SecretString) -> bool {
        self.flash_arrays.iter().any(|a| {
            a.api_token
                .as_ref()
                .is_some_and(|t| t.expose_secret() == token.expose_secret())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_unknown_keys_and_replaces_only_the_tenant_token() {
        let text = r#"{"FlashArrays": [
            {"MgmtEndPoint": "fa1", "APIToken": "old-1", "Labels": {"x": "y"}},
            {"MgmtEndPoint": "fa2", "APIToken": "old-2"}], "FlashBlades": []}"#;
        let mut p = PureJson::parse(text).unwrap();
        p.set_token(Some("fa2"), SecretString::from("new")).unwrap();
        let v: Value = serde_json::from_str(&p.to_text()).unwrap();
        assert_eq!(v["FlashArrays"][0]["APIToken"], "old-1");
        assert_eq!(v["FlashArrays"][0]["Labels"]["x"], "y");
        assert_eq!(v["FlashArrays"][1]["APIToken"], "new");
        assert!(v["FlashBlades"].is_array());
        assert!(p.holds_token(&SecretString::from("new")));
        assert!(!p.holds_token(&SecretString::from("old-2")));
        let e = p.set_token(None, SecretString::from("x")).unwrap_err();
        assert!(e.to_string().contains("spec.array.endpoint"), "{e}");
    }

    #[test]
    fn debug_and_errors_never_show_the_token() {
        let p = PureJson::single("fa1", SecretString::from("s3cr3t-token"));
        assert!(!format!("{p:?}").contains("s3cr3t"));
        let e = PureJson::parse(r#"{"FlashArrays": "s3cr3t-token"}"#).unwrap_err();
        assert!(matches!(e, PureJsonError::Format { .. }), "{e:?}");
        assert!(!e.to_string().contains("s3cr3t"));
        let e = PureJson::parse(r#"{"FlashArrays": [{"APIToken": "s3cr3t"#).unwrap_err();
        assert!(matches!(e, PureJsonError::Syntax { .. }), "{e:?}");
    }

    #[test]
    fn placeholders_and_empty_tokens_are_not_real() {
        let template = PureJson::single("fa1", PureJson::placeholder_token("u1"));
        assert!(!template.holds_real_token());
        assert!(!PureJson::single("fa1", SecretString::from(" ")).holds_real_token());
        assert!(!PureJson::default().holds_real_token());
        let real = PureJson::single(
            "fa1",
            SecretString::from("6d4b1c2e-0000-4000-8000-000000000001"),
        );
        assert!(real.holds_real_token());
    }

    #[test]
    fn realm_is_read_written_and_shown() {
        let p = PureJson::parse(
            r#"{"FlashArrays": [{"MgmtEndPoint": "fa1", "APIToken": "t", "Realm": "tenant-a"}]}"#,
        )
        .unwrap();
        assert_eq!(p.flash_arrays[0].realm.as_deref(), Some("tenant-a"));
        assert!(!p.flash_arrays[0].other.contains_key("Realm"));
        assert!(format!("{p:?}").contains("tenant-a"));
        let mut q = PureJson::single("fa1", SecretString::from("t"));
        q.flash_arrays[0].realm = Some("tenant-b".into());
        assert_eq!(
            q.to_text(),
            "{\n  \"FlashArrays\": [\n    {\n      \"MgmtEndPoint\": \"fa1\",\n      \"APIToken\": \"t\",\n      \"Realm\": \"tenant-b\"\n    }\n  ]\n}\n"
        );
    }

    #[test]
    fn text_is_pretty_with_a_final_newline() {
        let p = PureJson::single("fa1", SecretString::from("t"));
        assert_eq!(
            p.to_text(),
            "{\n  \"FlashArrays\": [\n    {\n      \"MgmtEndPoint\": \"fa1\",\n      \"APIToken\": \"t\"\n    }\n  ]\n}\n"
        );
    }
}
