//! Byte sizes as storage admins write them.
//!
//! `Size` parses `500GiB`, `2Ti`, `64G`, `1.5T`, `512` (bytes) and shows sizes in
//! binary units (`500 GiB`). Decimal units (`G`, `GB`) are powers of 1000 and binary
//! units (`Gi`, `GiB`) powers of 1024, as in Kubernetes quantities; the array itself
//! only ever sees bytes. [`Size::check_volume`] applies the array's volume rules: a
//! multiple of 512 bytes, from 1 MiB to 4 PiB.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// 1 KiB.
pub const KIB: u64 = 1024;
/// 1 MiB.
pub const MIB: u64 = 1024 * KIB;
/// 1 GiB.
pub const GIB: u64 = 1024 * MIB;
/// 1 TiB.
pub const TIB: u64 = 1024 * GIB;
/// 1 PiB.
pub const PIB: u64 = 1024 * TIB;

/// Smallest volume the array accepts.
pub const MIN_VOLUME: u64 = MIB;
/// Largest volume the array accepts (4 PiB).
pub const MAX_VOLUME: u64 = 4 * PIB;
/// Volume sizes must be a multiple of this.
pub const SECTOR: u64 = 512;

/// Why a size was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a valid size: {reason}")]
pub struct SizeError {
    /// The refused input, as given.
    pub input: String,
    /// What is wrong with it.
    pub reason: String,
}

/// A number of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Size(u64);

impl Size {
    /// Wraps a byte count.
    pub const fn bytes(b: u64) -> Self {
        Size(b)
    }
    /// `n` GiB.
    pub const fn gib(n: u64) -> Self {
        Size(n * GIB)
    }
    /// `n` TiB.
    pub const fn tib(n: u64) -> Self {
        Size(n * TIB)
    }
    /// The byte count.
    pub const fn as_u64(self) -> u64 {
        self.0
    }
    /// Whole GiB, rounded up.
    pub const fn gib_ceil(self) -> u64 {
        self.0.div_ceil(GIB)
    }

    /// Rounds up to a whole number of GiB.
    pub const fn round_up_gib(self) -> Size {
        Size(self.gib_ceil() * GIB)
    }

    /// Checks the array's rules for a volume size.
    pub fn check_volume(self) -> Result<Self, SizeError> {
        let err = |reason: String| SizeError {
            input: self.to_string(),
            reason,
        };
        if !self.0.is_multiple_of(SECTOR) {
            return Err(err(format!(
                "volume sizes must be a multiple of 512 bytes ({} bytes is not)",
                self.0
            )));
        }
        if self.0 < MIN_VOLUME {
            return Err(err("volume sizes start at 1 MiB".into()));
        }
        if self.0 > MAX_VOLUME {
            return Err(err("volume sizes end at 4 PiB".into()));
        }
        Ok(self)
    }

    /// Parses like [`FromStr`], refusing the result if it breaks the volume rules.
    pub fn parse_volume(s: &str) -> Result<Self, SizeError> {
        s.parse::<Size>()?.check_volume()
    }
}

impl From<u64> for Size {
    fn from(b: u64) -> Self {
        Size(b)
    }
}

impl From<Size> for u64 {
    fn from(s: Size) -> u64 {
        s.0
    }
}

fn unit_factor(unit: &str) -> Option<u64> {
    let u = unit.trim();
    let lower = u.to_ascii_lowercase();
    let f = match lower.as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "t" | "tb" => 1_000_000_000_000,
        "p" | "pb" => 1_000_000_000_000_000,
        "ki" | "kib" => KIB,
        "mi" | "mib" => MIB,
        "gi" | "gib" => GIB,
        "ti" | "tib" => TIB,
        "pi" | "pib" => PIB,
        _ => return None,
    };
    Some(f)
}

impl FromStr for Size {
    type Err = SizeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason: &str| SizeError {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        let t = s.trim();
        if t.is_empty() {
            return Err(err("empty"));
        }
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        if num.is_empty() {
            return Err(err("expected a number such as 500GiB, 2Ti or 64G"));
        }
        if unit.starts_with(char::is_whitespace) {
            return Err(err(
                "no space between number and unit (write 4Ti, not \"4 Ti\")",
            ));
        }
        let factor = unit_factor(unit).ok_or_else(|| {
            err("unknown unit (use B, K/KB, M/MB, G/GB, T/TB, P/PB or Ki/KiB … Pi/PiB)")
        })?;
        let bytes = match num.split_once('.') {
            None => num
                .parse::<u64>()
                .ok()
                .and_then(|n| n.checked_mul(factor))
                .ok_or_else(|| err("too large"))?,
            Some((int, frac)) => {
                if frac.is_empty() || frac.contains('.') || frac.len() > 9 {
                    return Err(err("malformed decimal"));
                }
                let int: u128 = if int.is_empty() {
                    0
                } else {
                    int.parse().map_err(|_| err("malformed decimal"))?
                };
                let scale = 10u128.pow(frac.len() as u32);
                let frac_v: u128 = frac.parse().map_err(|_| err("malformed decimal"))?;
                let total = (int * scale + frac_v) * factor as u128;
                if !total.is_multiple_of(scale) {
                    return Err(err("not a whole number of bytes"));
                }
                u64::try_from(total / scale).map_err(|_| err("too large"))?
            }
        };
        Ok(Size(bytes))
    }
}

impl fmt::Display for Size {
    /// Binary units, exact when possible (`500 GiB`), else two decimals (`1.50 TiB`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 5] = [
            (PIB, "PiB"),
            (TIB, "TiB"),
            (GIB, "GiB"),
            (MIB, "MiB"),
            (KIB, "KiB"),
        ];
        for (factor, name) in UNITS {
            if self.0 >= factor {
                return if self.0.is_multiple_of(factor) {
                    write!(f, "{} {}", self.0 / factor, name)
                } else {
                    write!(f, "{:.2} {}", self.0 as f64 / factor as f64, name)
                };
            }
        }
        write!(f, "{} B", self.0)
    }
}

impl Serialize for Size {
    /// Serialized as a plain byte count, the way the array and `-o json` want it.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for Size {
    /// Accepts a byte count or a string with units.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(Size(n)),
            Raw::S(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_units() {
        let cases = [
            ("500GiB", 500 * GIB),
            ("2Ti", 2 * TIB),
            ("64G", 64_000_000_000),
            ("1073741824", GIB),
            ("1.5Ti", TIB + TIB / 2),
            ("10gib", 10 * GIB),
            ("4Pi", 4 * PIB),
            ("512B", 512),
            (" 7Mi ", 7 * MIB),
        ];
        for (s, want) in cases {
            assert_eq!(s.parse::<Size>().unwrap().as_u64(), want, "{s}");
        }
    }

    #[test]
    fn refuses_nonsense() {
        for s in [
            "",
            "4 TB",
            "TB",
            "1.2.3G",
            "5Q",
            "-1G",
            "99999999999999999999",
            "0.3B",
        ] {
            assert!(s.parse::<Size>().is_err(), "{s}");
        }
        let e = "4 TB".parse::<Size>().unwrap_err();
        assert!(e.to_string().contains("\"4 TB\""));
    }

    #[test]
    fn volume_rules() {
        assert!(Size::bytes(MIB).check_volume().is_ok());
        assert!(Size::bytes(MIB - 512).check_volume().is_err());
        assert!(Size::bytes(MIB + 1).check_volume().is_err());
        assert!(Size::bytes(4 * PIB).check_volume().is_ok());
        assert!(Size::bytes(4 * PIB + 512).check_volume().is_err());
        assert!(Size::parse_volume("64G").is_ok()); // 64e9 is a multiple of 512
    }

    #[test]
    fn displays_binary() {
        assert_eq!(Size::gib(500).to_string(), "500 GiB");
        assert_eq!(Size::bytes(TIB + TIB / 2).to_string(), "1.50 TiB");
        assert_eq!(Size::bytes(100).to_string(), "100 B");
    }

    #[test]
    fn serde_forms() {
        let s: Size = serde_json::from_str("\"2Ti\"").unwrap();
        assert_eq!(s, Size::tib(2));
        let s: Size = serde_json::from_str("1024").unwrap();
        assert_eq!(s.as_u64(), 1024);
        assert_eq!(serde_json::to_string(&Size::gib(1)).unwrap(), "1073741824");
    }

    proptest! {
        #[test]
        fn display_round_trips_exact(n in 1u64..1024, unit in 0usize..4) {
            let f = [KIB, MIB, GIB, TIB][unit];
            let s = Size::bytes(n * f);
            let shown = s.to_string().replace(' ', "");
            prop_assert_eq!(shown.parse::<Size>().unwrap(), s);
        }
    }
}
