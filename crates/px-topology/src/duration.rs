//! How pxfa writes a duration for people, everywhere: the two largest units, no
//! zeros (`1d 2h`, `23h 59m`, `5m`, `45s`). One format, so that a plan, a destroy
//! report and a volume listing say the same thing the same way.

use std::time::Duration;

/// `d` as `1d 2h`, `23h 59m`, `5m 30s`, `45s`; below a minute the seconds round up,
/// so that something about to happen never reads `0s`.
pub(crate) fn human(d: Duration) -> String {
    let secs = if d < Duration::from_secs(60) {
        d.as_millis().div_ceil(1000) as u64
    } else {
        d.as_secs()
    };
    let units = [
        (secs / 86_400, "d"),
        (secs % 86_400 / 3600, "h"),
        (secs % 3600 / 60, "m"),
        (secs % 60, "s"),
    ];
    let Some(first) = units.iter().position(|(n, _)| *n > 0) else {
        return "0s".to_string();
    };
    let mut out = format!("{}{}", units[first].0, units[first].1);
    if let Some((n, u)) = units.get(first + 1).filter(|(n, _)| *n > 0) {
        out.push_str(&format!(" {n}{u}"));
    }
    out
}

/// A duration in milliseconds, as the array reports them.
pub fn human_ms(ms: u64) -> String {
    human(Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_largest_units_without_zeros() {
        assert_eq!(human_ms(86_400_000), "1d");
        assert_eq!(human_ms(90_061_000), "1d 1h");
        assert_eq!(human_ms(86_340_000), "23h 59m");
        assert_eq!(human_ms(1_439 * 60_000), "23h 59m");
        assert_eq!(human_ms(330_000), "5m 30s");
        assert_eq!(human_ms(1500), "2s");
        assert_eq!(human_ms(0), "0s");
        assert_eq!(human(Duration::from_secs(30 * 86_400)), "30d");
    }
}
