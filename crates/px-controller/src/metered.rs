//! An array client that counts its calls by outcome for `/metrics`
//! (`pxfa_controller_array_calls_total{array, outcome}`): every [`FlashArray`] call
//! forwards to the wrapped client and records `ok` or the error's kind
//! (`not_found`, `rate_limited`, `transport`, ...). The methods come from
//! [`flasharray::for_each_method!`], so none can be missed. Nothing else changes: the
//! wrapped client keeps its own session, paging stream (`volume_stream` is forwarded,
//! uncounted) and retries.

use std::sync::Arc;

use async_trait::async_trait;
use flasharray::array::signature::*;

use crate::metrics::Metrics;

/// A counted array client.
#[derive(Debug)]
pub(crate) struct Metered {
    inner: Arc<dyn FlashArray>,
    endpoint: String,
    metrics: Arc<Metrics>,
}

impl Metered {
    /// Wraps `inner`, counting into `metrics` under the label `endpoint`.
    pub(crate) fn new(inner: Arc<dyn FlashArray>, endpoint: &str, metrics: Arc<Metrics>) -> Self {
        Metered {
            inner,
            endpoint: endpoint.to_string(),
            metrics,
        }
    }

    fn count<T>(&self, r: Result<T>) -> Result<T> {
        let outcome = match &r {
            Ok(_) => "ok".to_string(),
            Err(e) => outcome_of(e),
        };
        self.metrics.array_call(&self.endpoint, &outcome);
        r
    }
}

/// The outcome label of an error: its kind in snake case, or `transport` for
/// failures that never got an answer.
fn outcome_of(e: &flasharray::Error) -> String {
    match e {
        flasharray::Error::Transport(_) => "transport".to_string(),
        flasharray::Error::RetriesExhausted { .. } => "retries_exhausted".to_string(),
        _ => {
            let kind = format!("{:?}", e.kind());
            let mut out = String::new();
            for (i, ch) in kind.chars().enumerate() {
                if ch.is_ascii_uppercase() && i > 0 {
                    out.push('_');
                }
                out.push(ch.to_ascii_lowercase());
            }
            out
        }
    }
}

/// Counts each REST call; the provided methods (the paging stream, the session) are
/// forwarded as they are, so that a metered REST client still pages.
macro_rules! metered {
    (
        []
        calls { $($(#[$cm:meta])* $kind:ident $op:ident $request:literal
            fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)* }
        streams { $($(#[$sm:meta])* fn $sname:ident(&$sself:ident $(, $sarg:ident: $sty:ty)* $(,)?)
            -> $sret:ty $sbody:block)* }
        session { $($(#[$pm:meta])* fn $pname:ident(&$pself:ident) -> $pret:ty $pbody:block)* }
    ) => {
        #[async_trait]
        impl FlashArray for Metered {
            $( async fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
                self.count(self.inner.$name($($arg),*).await)
            } )*
            $( fn $sname(&self, $($sarg: $sty),*) -> ItemStream<'_, $sret> {
                self.inner.$sname($($sarg),*)
            } )*
            $( async fn $pname(&self) -> Result<$pret> {
                self.inner.$pname().await
            } )*
        }
    };
}

flasharray::for_each_method!(metered);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_reaches_the_wrapped_array_once() {
        let metrics = Arc::new(Metrics::default());
        let missed =
            futures_util::FutureExt::now_or_never(flasharray::forwarding::unforwarded(|inner| {
                Metered::new(inner, "array1", metrics)
            }))
            .expect("ready at once");
        assert!(missed.is_empty(), "not forwarded: {missed:?}");
    }

    #[test]
    fn error_kinds_become_snake_case_labels() {
        let e = flasharray::Error::api(404, None, "no such volume");
        assert_eq!(outcome_of(&e), "not_found");
        let e = flasharray::Error::api(429, None, "slow down");
        assert_eq!(outcome_of(&e), "rate_limited");
    }
}
