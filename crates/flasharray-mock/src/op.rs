//! The operations of the [`flasharray::FlashArray`] trait as values, so that calls,
//! faults and call statistics name them with a type instead of a string. The list is
//! the trait's own ([`flasharray::for_each_method!`]).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Expands the method table's REST calls into [`Op`].
macro_rules! ops {
    (
        []
        calls { $($(#[$cm:meta])* $kind:ident $op:ident $request:literal
            fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)* }
        streams { $($tt:tt)* }
        session { $($ss:tt)* }
    ) => {
        /// One REST call of the [`flasharray::FlashArray`] trait (the provided stream
        /// and session methods are not calls of their own). Its serde and `Display` form
        /// is the trait method's name (`create_volumes`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        #[non_exhaustive]
        pub enum Op {
            $(
                #[doc = concat!("`", stringify!($name), "`: `", $request, "`.")]
                $op,
            )*
        }

        impl Op {
            /// Every operation, in trait order.
            pub const ALL: &[Op] = &[$(Op::$op),*];

            /// One table, so that a method name and its request cannot drift apart.
            fn describe(self) -> (&'static str, &'static str) {
                match self {
                    $(Op::$op => (stringify!($name), $request),)*
                }
            }
        }
    };
}

flasharray::for_each_method!(ops);

impl Op {
    /// The trait method's name, e.g. `create_volumes`.
    pub fn method(self) -> &'static str {
        self.describe().0
    }

    /// The REST request the operation stands for, e.g. `POST /volumes`; errors name
    /// their operation this way, as the REST client's errors do.
    pub fn request(self) -> &'static str {
        self.describe().1
    }

    /// Whether the operation may change the array (everything but `GET`). Write
    /// faults count only these.
    pub fn is_write(self) -> bool {
        !self.request().starts_with("GET ")
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_and_display_use_the_method_name() {
        for &op in Op::ALL {
            let json = serde_json::to_value(op).unwrap();
            assert_eq!(json, serde_json::Value::from(op.method()), "{op:?}");
            assert_eq!(op.to_string(), op.method());
            let back: Op = serde_json::from_value(json).unwrap();
            assert_eq!(back, op);
        }
    }

    #[test]
    fn names_and_requests_are_unique_and_reads_are_gets() {
        let mut methods: Vec<_> = Op::ALL.iter().map(|o| o.method()).collect();
        let mut requests: Vec<_> = Op::ALL.iter().map(|o| o.request()).collect();
        methods.sort_unstable();
        methods.dedup();
        requests.sort_unstable();
        requests.dedup();
        assert_eq!(methods.len(), Op::ALL.len());
        assert_eq!(requests.len(), Op::ALL.len());
        assert!(!Op::ListApiTokens.is_write());
        assert!(!Op::GetArraySpace.is_write());
        assert!(Op::SetTags.is_write());
        assert!(Op::RemoveHostGroupMembers.is_write());
        let writes = Op::ALL.iter().filter(|o| o.is_write()).count();
        assert_eq!(writes, 27);
    }
}
