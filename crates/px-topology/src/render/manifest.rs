//! One rendered object (or fragment) and where it goes.

use std::fmt;

use serde_json::Value;

/// The cluster a manifest is applied to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cluster {
    /// The management (hosting) cluster: OpenShift Virtualization, MCE, the VMs.
    Management,
    /// The hosted (tenant) cluster, reached with its own kubeconfig.
    Tenant,
}

impl Cluster {
    /// Directory name under the output directory.
    pub fn dir_name(self) -> &'static str {
        match self {
            Cluster::Management => "management",
            Cluster::Tenant => "tenant",
        }
    }

    /// The wording used in file headers.
    pub fn shout(self) -> &'static str {
        match self {
            Cluster::Management => "the MANAGEMENT cluster",
            Cluster::Tenant => "the TENANT (hosted) cluster",
        }
    }
}

/// How a file is applied: not everything pxfa emits is a complete object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Form {
    /// A complete object: `oc apply -f`.
    Resource,
    /// An RFC 6902 JSON patch (`body` is the list of operations) for an object whose
    /// name pxfa cannot know at render time (e.g. a VM named by the NodePool).
    JsonPatch {
        /// What the patch applies to, in words, for the header.
        target: String,
    },
    /// An RFC 7386 JSON merge patch of an object that already exists, named by
    /// `name`/`namespace` (`oc patch --type=merge`): maps are merged key by key, so
    /// the object's other settings stay.
    MergePatch {
        /// What the patch applies to, in words, for the header.
        target: String,
    },
    /// A partial object: the fields at `path` must be merged into the named object
    /// before it is created (e.g. immutable HostedCluster fields).
    Fragment {
        /// Dotted path of the sub-tree this fragment provides, e.g.
        /// `spec.platform.kubevirt.storageDriver`.
        path: String,
    },
}

/// One file of output: a Kubernetes object, a patch or a fragment.
#[derive(Clone, PartialEq)]
pub struct Manifest {
    /// Where to apply it.
    pub cluster: Cluster,
    /// Step in that cluster's apply order, from 1; several files can share a step.
    pub order: u32,
    /// File name inside the cluster's directory, `NN-kind-name[-suffix].yaml`.
    pub file_name: String,
    /// Kubernetes kind (of the object, or of the patched/fragmented object).
    pub kind: String,
    /// The object's `metadata.name`.
    pub name: String,
    /// Namespace, for namespaced objects.
    pub namespace: Option<String>,
    /// The document, keys in `apiVersion, kind, metadata, spec` order.
    pub body: Value,
    /// True when the body holds, or is meant to hold, a credential: written with
    /// owner-only permissions and never shown in `Debug`.
    pub secret: bool,
    /// Why this file exists and anything the admin must do by hand; one line per
    /// entry, shown in the file header and the apply listing.
    pub purpose: Vec<String>,
    /// How the file is applied.
    pub form: Form,
}

impl fmt::Debug for Manifest {
    /// The body of a secret manifest is redacted: Debug output ends up in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Manifest");
        d.field("cluster", &self.cluster)
            .field("order", &self.order)
            .field("file_name", &self.file_name)
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field("namespace", &self.namespace);
        if self.secret {
            d.field("body", &"[REDACTED]");
        } else {
            d.field("body", &self.body);
        }
        d.field("secret", &self.secret)
            .field("purpose", &self.purpose)
            .field("form", &self.form)
            .finish()
    }
}

impl Manifest {
    /// A complete object; kind, name and namespace are read from `body`.
    pub fn resource(cluster: Cluster, order: u32, body: Value, purpose: &[&str]) -> Self {
        let kind = str_at(&body, &["kind"]);
        let name = str_at(&body, &["metadata", "name"]);
        let namespace = body
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(str::to_string);
        Manifest {
            cluster,
            order,
            file_name: String::new(),
            kind,
            name,
            namespace,
            body,
            secret: false,
            purpose: purpose.iter().map(|s| s.to_string()).collect(),
            form: Form::Resource,
        }
    }

    /// Marks the manifest as carrying a credential.
    pub fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    /// Adds one line to the purpose.
    pub fn note(mut self, line: impl Into<String>) -> Self {
        self.purpose.push(line.into());
        self
    }

    /// The base of the file name: `kind-name` in lower case, plus a suffix for
    /// patches and fragments so that they never look like complete objects.
    pub(crate) fn file_stem(&self) -> String {
        let suffix = match self.form {
            Form::Resource => "",
            Form::JsonPatch { .. } | Form::MergePatch { .. } => "-patch",
            Form::Fragment { .. } => "-fragment",
        };
        format!(
            "{}-{}{suffix}",
            self.kind.to_ascii_lowercase(),
            self.name.to_ascii_lowercase()
        )
    }
}

fn str_at(v: &Value, path: &[&str]) -> String {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(n) => cur = n,
            None => return String::new(),
        }
    }
    cur.as_str().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_identity_from_body() {
        let m = Manifest::resource(
            Cluster::Tenant,
            1,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "portworx"}}),
            &["why"],
        );
        assert_eq!(m.kind, "Namespace");
        assert_eq!(m.name, "portworx");
        assert_eq!(m.namespace, None);
        assert_eq!(m.file_stem(), "namespace-portworx");
    }

    #[test]
    fn debug_redacts_secret_bodies() {
        let m = Manifest::resource(
            Cluster::Tenant,
            2,
            json!({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": "px-pure-secret", "namespace": "portworx"},
                   "stringData": {"pure.json": "token-abc-123"}}),
            &[],
        )
        .secret();
        let dbg = format!("{m:?}");
        assert!(!dbg.contains("token-abc-123"), "{dbg}");
        assert!(dbg.contains("REDACTED"));
    }
}
