//! The controller's Prometheus metrics, kept in memory and rendered in the text
//! exposition format (version 0.0.4) for `/metrics`. A handful of counters does not
//! justify a metrics framework; the names follow Prometheus conventions
//! (`_total` counters, `_seconds` histograms, base units).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Upper bounds of the reconcile duration histogram, in seconds.
const BUCKETS: [f64; 10] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Default)]
struct Counters {
    reconciles: BTreeMap<String, u64>,
    errors: BTreeMap<String, u64>,
    array_calls: BTreeMap<(String, String), u64>,
    events: BTreeMap<String, u64>,
    /// Orphans by (array, kind) as the last scan counted them (a gauge).
    orphans: BTreeMap<(String, String), usize>,
    durations: Histogram,
}

/// Every metric of one controller process.
#[derive(Default)]
pub struct Metrics {
    counters: Mutex<Counters>,
    leader: AtomicBool,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// Empty metrics.
    pub fn new() -> Self {
        Metrics::default()
    }

    fn with(&self, f: impl FnOnce(&mut Counters)) {
        if let Ok(mut c) = self.counters.lock() {
            f(&mut c);
        }
    }

    /// One finished reconcile: its outcome (`converged`, `error`, ...) and duration.
    pub fn reconciled(&self, outcome: &str, took: Duration) {
        let secs = took.as_secs_f64();
        self.with(|c| {
            *c.reconciles.entry(outcome.to_string()).or_insert(0) += 1;
            let h = &mut c.durations;
            for (i, le) in BUCKETS.iter().enumerate() {
                if secs <= *le {
                    h.counts[i] += 1;
                }
            }
            h.count += 1;
            h.sum += secs;
        });
    }

    /// One failed reconcile, by condition reason.
    pub fn error(&self, reason: &str) {
        self.with(|c| *c.errors.entry(reason.to_string()).or_insert(0) += 1);
    }

    /// One array call to `array`: `ok` or the error class.
    pub fn array_call(&self, array: &str, outcome: &str) {
        self.with(|c| {
            *c.array_calls
                .entry((array.to_string(), outcome.to_string()))
                .or_insert(0) += 1
        });
    }

    /// One Kubernetes Event published (`Normal`/`Warning`) or `failed`.
    pub fn event(&self, outcome: &str) {
        self.with(|c| *c.events.entry(outcome.to_string()).or_insert(0) += 1);
    }

    /// The orphan counts of one scan of `array`, by kind (`crate::orphans`).
    pub fn set_orphans<'a>(&self, array: &str, counts: impl IntoIterator<Item = (&'a str, usize)>) {
        self.with(|c| {
            for (kind, n) in counts {
                c.orphans.insert((array.to_string(), kind.to_string()), n);
            }
        });
    }

    /// The orphans of `kind` on `array` at the last scan, when it was scanned.
    pub fn orphans(&self, array: &str, kind: &str) -> Option<usize> {
        self.counters.lock().ok().and_then(|c| {
            c.orphans
                .get(&(array.to_string(), kind.to_string()))
                .copied()
        })
    }

    /// Whether this replica leads.
    pub fn set_leader(&self, leading: bool) {
        self.leader.store(leading, Ordering::SeqCst);
    }

    /// Reconciles so far with `outcome` (all outcomes when `None`).
    pub fn reconciles(&self, outcome: Option<&str>) -> u64 {
        self.counters
            .lock()
            .map(|c| match outcome {
                Some(o) => c.reconciles.get(o).copied().unwrap_or(0),
                None => c.reconciles.values().sum(),
            })
            .unwrap_or(0)
    }

    /// Array calls so far to `array` with `outcome` (all outcomes when `None`).
    pub fn array_calls(&self, array: &str, outcome: Option<&str>) -> u64 {
        self.counters
            .lock()
            .map(|c| {
                c.array_calls
                    .iter()
                    .filter(|((a, o), _)| a == array && outcome.is_none_or(|want| want == o))
                    .map(|(_, n)| *n)
                    .sum()
            })
            .unwrap_or(0)
    }

    /// Array calls so far to every array, all outcomes.
    pub fn array_calls_total(&self) -> u64 {
        self.counters
            .lock()
            .map(|c| c.array_calls.values().sum())
            .unwrap_or(0)
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let Ok(c) = self.counters.lock() else {
            return out;
        };
        family(
            &mut out,
            "pxfa_controller_reconciles_total",
            "counter",
            "Finished reconciles of TenantStorage objects by outcome.",
        );
        for (o, n) in &c.reconciles {
            let _ = writeln!(
                out,
                "pxfa_controller_reconciles_total{{outcome=\"{}\"}} {n}",
                escape(o)
            );
        }
        family(
            &mut out,
            "pxfa_controller_reconcile_errors_total",
            "counter",
            "Failed reconciles by reason (the Degraded condition's reason).",
        );
        for (r, n) in &c.errors {
            let _ = writeln!(
                out,
                "pxfa_controller_reconcile_errors_total{{reason=\"{}\"}} {n}",
                escape(r)
            );
        }
        family(
            &mut out,
            "pxfa_controller_reconcile_duration_seconds",
            "histogram",
            "Time one reconcile took.",
        );
        let h = &c.durations;
        for (le, n) in BUCKETS.iter().zip(h.counts.iter()) {
            let _ = writeln!(
                out,
                "pxfa_controller_reconcile_duration_seconds_bucket{{le=\"{le}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "pxfa_controller_reconcile_duration_seconds_bucket{{le=\"+Inf\"}} {}\n\
             pxfa_controller_reconcile_duration_seconds_sum {}\n\
             pxfa_controller_reconcile_duration_seconds_count {}",
            h.count, h.sum, h.count
        );
        family(
            &mut out,
            "pxfa_controller_array_calls_total",
            "counter",
            "FlashArray REST calls by array endpoint and outcome.",
        );
        for ((a, o), n) in &c.array_calls {
            let _ = writeln!(
                out,
                "pxfa_controller_array_calls_total{{array=\"{}\",outcome=\"{}\"}} {n}",
                escape(a),
                escape(o)
            );
        }
        family(
            &mut out,
            "pxfa_controller_events_total",
            "counter",
            "Kubernetes Events by type, or failed to publish.",
        );
        for (t, n) in &c.events {
            let _ = writeln!(
                out,
                "pxfa_controller_events_total{{type=\"{}\"}} {n}",
                escape(t)
            );
        }
        family(
            &mut out,
            "pxfa_controller_orphans",
            "gauge",
            "Objects pxfa made that no tenant accounts for, by array and kind, at the last scan (pxfa orphans).",
        );
        for ((a, k), n) in &c.orphans {
            let _ = writeln!(
                out,
                "pxfa_controller_orphans{{array=\"{}\",kind=\"{}\"}} {n}",
                escape(a),
                escape(k)
            );
        }
        family(
            &mut out,
            "pxfa_controller_leader",
            "gauge",
            "Whether this replica holds the leader Lease (1) or not (0).",
        );
        let _ = writeln!(
            out,
            "pxfa_controller_leader {}",
            u8::from(self.leader.load(Ordering::SeqCst))
        );
        out
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A label value as the exposition format wants it.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_exposition_format() {
        let m = Metrics::new();
        m.reconciled("converged", Duration::from_millis(300));
        m.reconciled("error", Duration::from_secs(3));
        m.error("ArrayUnreachable");
        m.array_call("fa1", "ok");
        m.array_call("fa1", "ok");
        m.array_call("fa1", "unavailable");
        m.set_leader(true);
        m.set_orphans("fa1", [("tenant-gone", 2), ("unbound-drive", 0)]);
        let text = m.render();
        assert!(text.contains("# TYPE pxfa_controller_orphans gauge"));
        assert!(text.contains("pxfa_controller_orphans{array=\"fa1\",kind=\"tenant-gone\"} 2"));
        assert_eq!(m.orphans("fa1", "unbound-drive"), Some(0));
        assert_eq!(m.orphans("fa2", "tenant-gone"), None);
        assert!(text.contains("# TYPE pxfa_controller_reconciles_total counter"));
        assert!(text.contains("pxfa_controller_reconciles_total{outcome=\"converged\"} 1"));
        assert!(
            text.contains("pxfa_controller_reconcile_errors_total{reason=\"ArrayUnreachable\"} 1")
        );
        assert!(text.contains("pxfa_controller_reconcile_duration_seconds_bucket{le=\"0.25\"} 0"));
        assert!(text.contains("pxfa_controller_reconcile_duration_seconds_bucket{le=\"0.5\"} 1"));
        assert!(text.contains("pxfa_controller_reconcile_duration_seconds_bucket{le=\"+Inf\"} 2"));
        assert!(text.contains("pxfa_controller_reconcile_duration_seconds_count 2"));
        assert!(text.contains("pxfa_controller_array_calls_total{array=\"fa1\",outcome=\"ok\"} 2"));
        assert!(text.lines().any(|l| l == "pxfa_controller_leader 1"));
        assert_eq!(m.array_calls("fa1", None), 3);
        assert_eq!(escape("a\"b\\c"), "a\\\"b\\\\c");
    }
}
