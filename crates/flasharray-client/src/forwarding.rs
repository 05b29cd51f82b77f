//! A check that a wrapper around an array forwards every method of
//! [`for_each_method!`](crate::for_each_method) to the array it wraps, the provided
//! ones (`volume_stream`, `rest_minor_version`, `close`) included: a wrapper that let
//! `volume_stream` fall back to the trait's default would collect every page of a
//! paging client in memory, and one that kept the default `close` would never log out.
//!
//! For tests of wrappers (the `Arc`/`Box` forwarders, [`crate::Settling`], the
//! controller's metering): [`unforwarded`] calls every method once through the
//! wrapper over a [`Counting`] array and names the methods that did not reach it
//! exactly once.
//!
//! ```
//! use flasharray::forwarding::unforwarded;
//!
//! # futures_util::FutureExt::now_or_never(async {
//! assert!(unforwarded(|inner| Box::new(inner)).await.is_empty());
//! # }).unwrap();
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures_util::StreamExt;

use crate::array::DynFlashArray;
use crate::array::signature::*;
use crate::error::Error;

/// An array that counts the calls reaching it, per method, and fails every one of
/// them with [`Error::InvalidRequest`] (which no wrapper retries or re-reads).
#[derive(Debug, Default)]
pub struct Counting {
    calls: Mutex<BTreeMap<&'static str, usize>>,
}

impl Counting {
    /// Calls received so far, per method name.
    pub fn calls(&self) -> BTreeMap<&'static str, usize> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn reached<T>(&self, method: &'static str) -> Result<T> {
        *self
            .calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(method)
            .or_default() += 1;
        Err(Error::InvalidRequest(format!("{method}: counted")))
    }
}

macro_rules! counting {
    (
        []
        calls { $($(#[$cm:meta])* $kind:ident $op:ident $request:literal
            fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)* }
        streams { $($(#[$sm:meta])* fn $sname:ident(&$sself:ident $(, $sarg:ident: $sty:ty)* $(,)?)
            -> $sret:ty $sbody:block)* }
        session { $($(#[$pm:meta])* fn $pname:ident(&$pself:ident) -> $pret:ty $pbody:block)* }
    ) => {
        /// Every method's name, in table order.
        pub const METHODS: &[&str] = &[
            $(stringify!($name),)* $(stringify!($sname),)* $(stringify!($pname),)*
        ];

        #[async_trait]
        impl FlashArray for Counting {
            $( async fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
                $(let _ = $arg;)*
                self.reached(stringify!($name))
            } )*
            $( fn $sname(&self, $($sarg: $sty),*) -> ItemStream<'_, $sret> {
                $(let _ = $sarg;)*
                let r = self.reached::<$sret>(stringify!($sname));
                futures_util::stream::iter([r]).boxed()
            } )*
            $( async fn $pname(&self) -> Result<$pret> {
                self.reached(stringify!($pname))
            } )*
        }
    };
}

crate::for_each_method!(counting);

/// Calls every method once on `array`, with [`Sample`] arguments, ignoring answers.
macro_rules! call_every_method {
    (
        [$array:ident]
        calls { $($(#[$cm:meta])* $kind:ident $op:ident $request:literal
            fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)* }
        streams { $($(#[$sm:meta])* fn $sname:ident(&$sself:ident $(, $sarg:ident: $sty:ty)* $(,)?)
            -> $sret:ty $sbody:block)* }
        session { $($(#[$pm:meta])* fn $pname:ident(&$pself:ident) -> $pret:ty $pbody:block)* }
    ) => {
        $( {
            $(let $arg: $ty = Sample::sample();)*
            let _ = $array.$name($($arg),*).await;
        } )*
        $( {
            $(let $sarg: $sty = Sample::sample();)*
            let _ = $array.$sname($($sarg),*).collect::<Vec<_>>().await;
        } )*
        $( {
            let _ = $array.$pname().await;
        } )*
    };
}

/// The methods that did not reach the array under `wrap` exactly once when each was
/// called once through it; empty when the wrapper forwards everything.
pub async fn unforwarded<W: FlashArray>(wrap: impl FnOnce(DynFlashArray) -> W) -> Vec<String> {
    let counting = Arc::new(Counting::default());
    let array = wrap(counting.clone());
    crate::for_each_method!(call_every_method, array);
    let calls = counting.calls();
    METHODS
        .iter()
        .filter(|m| calls.get(*m) != Some(&1))
        .map(|m| format!("{m} (reached {} times)", calls.get(*m).unwrap_or(&0)))
        .collect()
}

/// An argument value for every type the method signatures take (test data only:
/// references are leaked, a few bytes per call).
pub trait Sample: Sized {
    /// Some value of the type.
    fn sample() -> Self;
}

impl<T: Sample + 'static> Sample for &'static T {
    fn sample() -> Self {
        Box::leak(Box::new(T::sample()))
    }
}

impl<T: Sample + 'static> Sample for &'static [T] {
    fn sample() -> Self {
        Box::leak(Box::new([T::sample()]))
    }
}

impl Sample for &'static str {
    fn sample() -> Self {
        "pxfa"
    }
}

macro_rules! sample_default {
    ($($ty:ty),* $(,)?) => {$(
        impl Sample for $ty {
            fn sample() -> Self {
                Default::default()
            }
        }
    )*};
}

sample_default!(
    bool,
    String,
    Option<u32>,
    Option<Duration>,
    ListParams,
    TagParams,
    MemberParams,
    ConnectionParams,
    Tag,
    VolumePost,
    VolumePatch,
    HostPost,
    HostPatch,
    HostGroupPost,
    PodPost,
    PodPatch,
    RealmPost,
    RealmPatch,
    ManagementAccessPolicyPost,
    AdminPost,
);

macro_rules! sample_name {
    ($($ty:ident),* $(,)?) => {$(
        impl Sample for $ty {
            fn sample() -> Self {
                $ty::new("pxfa").expect("a valid name")
            }
        }
    )*};
}

sample_name!(VolumeName, HostName, HostGroupName, PodName, RealmName);

impl Sample for TagResource {
    fn sample() -> Self {
        TagResource::Volume
    }
}

impl Sample for ConnectionTarget {
    fn sample() -> Self {
        ConnectionTarget::Host(HostName::sample())
    }
}

impl Sample for VolumeBatchPost {
    fn sample() -> Self {
        VolumeBatchPost::new(VolumeName::sample(), 1 << 30)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now<F: std::future::Future>(f: F) -> F::Output {
        futures_util::FutureExt::now_or_never(f).expect("ready at once")
    }

    /// Forwards the calls but lets `volume_stream` and `close` fall back to the
    /// trait's defaults: the mistake the check is there to catch.
    #[derive(Debug)]
    struct Leaky(DynFlashArray);

    macro_rules! leaky {
        (
            []
            calls { $($(#[$cm:meta])* $kind:ident $op:ident $request:literal
                fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)* }
            streams { $($tt:tt)* }
            session { $($ss:tt)* }
        ) => {
            #[async_trait]
            impl FlashArray for Leaky {
                $( async fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
                    self.0.$name($($arg),*).await
                } )*
            }
        };
    }

    crate::for_each_method!(leaky);

    #[test]
    fn arc_box_and_nested_wrappers_forward_every_method() {
        assert_eq!(now(unforwarded(|a| a)), Vec::<String>::new());
        assert_eq!(now(unforwarded(Box::new)), Vec::<String>::new());
        assert_eq!(
            now(unforwarded(|a| Arc::new(Box::new(a)))),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_wrapper_that_keeps_a_default_is_named() {
        let missed = now(unforwarded(Leaky));
        assert_eq!(
            missed,
            [
                "list_volumes (reached 2 times)",
                "volume_stream (reached 0 times)",
                "rest_minor_version (reached 0 times)",
                "close (reached 0 times)"
            ]
        );
        assert_eq!(METHODS.len(), 44);
    }
}
