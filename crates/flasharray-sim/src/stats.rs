//! What the simulator saw on the wire: requests, handshakes, protocol versions, and
//! a log of every request with its start and end, from which [`critical_path_depth`]
//! counts the dependent rounds a client needed.
//!
//! The mock's own [`flasharray_mock::CallStats`] counts trait calls; this counts HTTP requests,
//! including those the simulator answers itself (versions, login, logout).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// Counters since the simulator started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SimStats {
    /// HTTP requests answered (or dropped by a fault).
    pub requests: u64,
    /// Requests per `METHOD /path`, with the REST version folded to `2.x` so that
    /// clients pinning different versions count alike.
    pub per_path: BTreeMap<String, u64>,
    /// `POST /api/2.x/login` requests.
    pub logins: u64,
    /// `POST /api/2.x/logout` requests.
    pub logouts: u64,
    /// TCP connections accepted.
    pub connections: u64,
    /// TLS handshakes completed.
    pub tls_handshakes: u64,
    /// Requests per HTTP version (`HTTP/1.1`, `HTTP/2.0`).
    pub http_versions: BTreeMap<String, u64>,
}

/// One request as the simulator served it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// The connection it came on, numbered from 1 in accept order.
    pub conn_id: u64,
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The status answered; 0 when a fault dropped the connection instead.
    pub status: u16,
    /// When the request head arrived.
    pub start: SystemTime,
    /// When the answer was handed to the connection.
    pub end: SystemTime,
}

/// The number of dependent rounds in `records`: a request's depth is one more than
/// the deepest request that had ended before it started (1 when none had), and the
/// log's depth is the largest of those. Requests that overlap in time are one round.
pub fn critical_path_depth(records: &[RequestRecord]) -> usize {
    let mut by_start: Vec<&RequestRecord> = records.iter().collect();
    by_start.sort_by_key(|r| r.start);
    let mut depth: Vec<usize> = Vec::with_capacity(by_start.len());
    for (i, r) in by_start.iter().enumerate() {
        // Only requests that started earlier can have ended before `r` started.
        let before = (0..i)
            .filter(|&j| by_start[j].end <= r.start)
            .map(|j| depth[j])
            .max()
            .unwrap_or(0);
        depth.push(before + 1);
    }
    depth.into_iter().max().unwrap_or(0)
}

/// Shared by every connection of one simulator.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    inner: Mutex<Recorded>,
}

#[derive(Debug, Default)]
struct Recorded {
    stats: SimStats,
    log: Vec<RequestRecord>,
}

/// `/api/2.39/volumes` → `/api/2.x/volumes`.
fn fold_version(path: &str) -> String {
    match path.strip_prefix("/api/2.") {
        Some(rest) => match rest.split_once('/') {
            Some((minor, tail)) if minor.bytes().all(|b| b.is_ascii_digit()) => {
                format!("/api/2.x/{tail}")
            }
            _ => path.to_string(),
        },
        None => path.to_string(),
    }
}

impl Recorder {
    fn with<R>(&self, f: impl FnOnce(&mut Recorded) -> R) -> R {
        // A panic elsewhere while holding the lock leaves counters that are still
        // meaningful; keep counting.
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut g)
    }

    /// Counts an accepted connection and returns its id.
    pub(crate) fn connection(&self) -> u64 {
        self.with(|r| {
            r.stats.connections += 1;
            r.stats.connections
        })
    }

    pub(crate) fn handshake(&self) {
        self.with(|r| r.stats.tls_handshakes += 1);
    }

    pub(crate) fn request(&self, record: RequestRecord, version: &str) {
        self.with(|r| {
            let path = fold_version(&record.path);
            r.stats.requests += 1;
            if record.method == "POST" && path == "/api/2.x/login" {
                r.stats.logins += 1;
            }
            if record.method == "POST" && path == "/api/2.x/logout" {
                r.stats.logouts += 1;
            }
            let key = format!("{} {path}", record.method);
            match r.stats.per_path.get_mut(&key) {
                Some(n) => *n += 1,
                None => {
                    r.stats.per_path.insert(key, 1);
                }
            }
            // Allocate the version's name only the first time it is seen.
            match r.stats.http_versions.get_mut(version) {
                Some(n) => *n += 1,
                None => {
                    r.stats.http_versions.insert(version.to_string(), 1);
                }
            }
            r.log.push(record);
        })
    }

    pub(crate) fn stats(&self) -> SimStats {
        self.with(|r| r.stats.clone())
    }

    pub(crate) fn log(&self) -> Vec<RequestRecord> {
        self.with(|r| r.log.clone())
    }

    pub(crate) fn reset(&self) {
        self.with(|r| *r = Recorded::default());
    }
}

/// Milliseconds since the Unix epoch, for the stats file.
fn epoch_ms(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// The stats and the request log as one JSON document (times in Unix milliseconds),
/// for programs outside Rust, such as the SDK benchmark.
pub fn stats_json(stats: &SimStats, log: &[RequestRecord]) -> serde_json::Value {
    let requests: Vec<serde_json::Value> = log
        .iter()
        .map(|r| {
            serde_json::json!({
                "conn_id": r.conn_id,
                "method": r.method,
                "path": r.path,
                "status": r.status,
                "start_ms": epoch_ms(r.start),
                "end_ms": epoch_ms(r.end),
            })
        })
        .collect();
    serde_json::json!({
        "stats": stats,
        "depth": critical_path_depth(log),
        "requests": requests,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn rec(start_ms: u64, end_ms: u64) -> RequestRecord {
        RequestRecord {
            conn_id: 1,
            method: "GET".into(),
            path: "/api/2.39/volumes".into(),
            status: 200,
            start: UNIX_EPOCH + Duration::from_millis(start_ms),
            end: UNIX_EPOCH + Duration::from_millis(end_ms),
        }
    }

    #[test]
    fn overlapping_requests_are_one_round_and_chains_add_up() {
        assert_eq!(critical_path_depth(&[]), 0);
        assert_eq!(
            critical_path_depth(&[rec(0, 20), rec(1, 21), rec(2, 19)]),
            1
        );
        // 0-20, then 21-40 (after the first), 22-41 (after the first), then 45-60.
        let log = [rec(45, 60), rec(0, 20), rec(21, 40), rec(22, 41)];
        assert_eq!(critical_path_depth(&log), 3);
        // A long request does not hold back one that started before it ended.
        assert_eq!(
            critical_path_depth(&[rec(0, 100), rec(10, 20), rec(30, 40)]),
            2
        );
    }

    #[test]
    fn versions_fold_and_logins_count() {
        assert_eq!(
            fold_version("/api/2.39/volumes/batch"),
            "/api/2.x/volumes/batch"
        );
        assert_eq!(fold_version("/api/api_version"), "/api/api_version");
        let r = Recorder::default();
        let mut login = rec(0, 1);
        login.method = "POST".into();
        login.path = "/api/2.21/login".into();
        r.request(login, "HTTP/1.1");
        r.request(rec(1, 2), "HTTP/2.0");
        let s = r.stats();
        assert_eq!((s.requests, s.logins, s.logouts), (2, 1, 0));
        assert_eq!(s.per_path["POST /api/2.x/login"], 1);
        assert_eq!(s.http_versions["HTTP/2.0"], 1);
        assert_eq!(r.log().len(), 2);
        r.reset();
        assert_eq!(r.stats(), SimStats::default());
    }
}
