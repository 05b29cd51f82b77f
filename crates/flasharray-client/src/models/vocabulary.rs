//! The closed sets of values the array defines for some fields (a volume's subtype, a
//! host's personality, promotion states, eradication settings), as enums.
//!
//! Each has an `Other(String)` variant: a value a newer Purity adds decodes to it (and
//! is sent back unchanged) instead of failing the whole response, and a caller can
//! still send a value this crate does not know, as the mock's tests do to see the
//! array refuse it. They serialise as the array's strings.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An enum over the array's strings, with `Other` for the rest.
macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $value:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A value this crate does not know, kept as the array sent it.
            Other(String),
        }

        impl $name {
            /// The array's string for this value.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $value,)*
                    $name::Other(s) => s,
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $($value => $name::$variant,)*
                    other => $name::Other(other.to_string()),
                }
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                match $name::from(s.as_str()) {
                    $name::Other(_) => $name::Other(s),
                    known => known,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d).map($name::from)
            }
        }
    };
}

vocabulary!(
    /// A volume's `subtype`: an ordinary volume, or a vVols protocol endpoint, which holds
    /// no data and through which a host reaches its vVols.
    VolumeSubtype {
        /// An ordinary volume.
        Regular = "regular",
        /// A protocol endpoint (vVols).
        ProtocolEndpoint = "protocol_endpoint",
    }
);

vocabulary!(
    /// `promotion_status` and `requested_promotion_state` of volumes and pods
    /// (ActiveDR; REST 2.2+).
    PromotionStatus {
        /// Writable.
        Promoted = "promoted",
        /// Read-only, receiving replication.
        Demoted = "demoted",
    }
);

vocabulary!(
    /// A volume's `host_encryption_key_status`.
    HostEncryptionKeyStatus {
        /// No host encryption key.
        None = "none",
        /// A key was detected.
        Detected = "detected",
        /// The key was fetched.
        Fetched = "fetched",
    }
);

vocabulary!(
    /// `eradication_config.manual_eradication` of the array and of pods: whether
    /// destroyed objects may be eradicated by hand (SafeMode disables it).
    ManualEradication {
        /// Every object may be eradicated.
        AllEnabled = "all-enabled",
        /// SafeMode on some objects (the SDK's `EradicationConfig` 2.26 and
        /// `PodEradicationConfig` 2.13 spell it so).
        PartiallyDisabled = "partially-disabled",
        /// SafeMode on everything.
        AllDisabled = "all-disabled",
    }
);

vocabulary!(
    /// How a management access policy combines its rules with others an admin has.
    AggregationStrategy {
        /// The intersection: the least a rule grants.
        LeastCommonPermissions = "least-common-permissions",
        /// The union.
        AllPermissions = "all-permissions",
    }
);

vocabulary!(
    /// A host's `personality` (REST 2.52's list; older Purity versions know fewer).
    /// No personality (`null`) is the Linux default.
    HostPersonality {
        /// IBM AIX.
        Aix = "aix",
        /// VMware ESXi.
        Esxi = "esxi",
        /// Hitachi VSP.
        HitachiVsp = "hitachi-vsp",
        /// HP-UX.
        Hpux = "hpux",
        /// Oracle VM Server.
        OracleVmServer = "oracle-vm-server",
        /// Solaris.
        Solaris = "solaris",
        /// OpenVMS.
        Vms = "vms",
        /// Nutanix management.
        NutanixMgmt = "nutanix-mgmt",
        /// Nutanix cluster.
        NutanixCluster = "nutanix-cluster",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_round_trip_as_the_arrays_strings() {
        for (v, s) in [
            (VolumeSubtype::ProtocolEndpoint, "\"protocol_endpoint\""),
            (VolumeSubtype::Regular, "\"regular\""),
        ] {
            assert_eq!(serde_json::to_string(&v).unwrap(), s);
            assert_eq!(serde_json::from_str::<VolumeSubtype>(s).unwrap(), v);
        }
        let m: ManualEradication = serde_json::from_str("\"partially-disabled\"").unwrap();
        assert_eq!(m, ManualEradication::PartiallyDisabled);
        assert_eq!(m.to_string(), "partially-disabled");
        assert_eq!(HostPersonality::from("esxi"), HostPersonality::Esxi);
        assert_eq!(
            serde_json::to_value(AggregationStrategy::LeastCommonPermissions).unwrap(),
            "least-common-permissions"
        );
    }

    #[test]
    fn an_unknown_value_decodes_to_other_and_goes_back_unchanged() {
        let p: HostPersonality = serde_json::from_str("\"windows95\"").unwrap();
        assert_eq!(p, HostPersonality::Other("windows95".into()));
        assert_eq!(serde_json::to_string(&p).unwrap(), "\"windows95\"");
        let s: PromotionStatus = serde_json::from_str("\"promoting\"").unwrap();
        assert_eq!(s.as_str(), "promoting");
    }

    #[test]
    fn a_volume_with_a_new_subtype_still_decodes() {
        let v: crate::models::Volume = serde_json::from_str(
            r#"{"name":"v","subtype":"stretched","promotion_status":"demoted"}"#,
        )
        .unwrap();
        assert_eq!(v.subtype, Some(VolumeSubtype::Other("stretched".into())));
        assert_eq!(v.promotion_status, Some(PromotionStatus::Demoted));
    }
}
