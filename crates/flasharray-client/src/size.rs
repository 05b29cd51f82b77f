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
/// Largest size a string or number is read as: `i64::MAX` bytes (8 EiB − 1).
/// Kubernetes reads quantities as signed 64-bit integers and most array clients
/// (Go, Java) hold sizes in `i64`, so anything larger cannot reach a manifest or the
/// array intact; refusing it at parse time keeps later arithmetic far from `u64`
/// overflow.
pub(crate) const MAX_PARSED: u64 = i64::MAX as u64;

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
    ///
    /// # Panics
    ///
    /// When `n` GiB does not fit in 64 bits (at compile time for constants); use
    /// [`Size::checked_gib`] for values from input.
    pub const fn gib(n: u64) -> Self {
        match Self::checked_gib(n) {
            Some(s) => s,
            None => panic!("Size::gib overflows u64"),
        }
    }
    /// `n` TiB.
    ///
    /// # Panics
    ///
    /// When `n` TiB does not fit in 64 bits; see [`Size::gib`].
    pub const fn tib(n: u64) -> Self {
        match n.checked_mul(TIB) {
            Some(b) => Size(b),
            None => panic!("Size::tib overflows u64"),
        }
    }
    /// `n` GiB, or `None` when that does not fit in 64 bits.
    pub const fn checked_gib(n: u64) -> Option<Self> {
        match n.checked_mul(GIB) {
            Some(b) => Some(Size(b)),
            None => None,
        }
    }
    /// The byte count.
    pub const fn as_u64(self) -> u64 {
        self.0
    }
    /// Whole GiB, rounded up.
    pub const fn gib_ceil(self) -> u64 {
        self.0.div_ceil(GIB)
    }

    /// Rounds up to a whole number of GiB; `None` when the result would not fit in
    /// 64 bits (the last GiB below `u64::MAX` has no whole-GiB successor).
    pub const fn checked_round_up_gib(self) -> Option<Size> {
        Self::checked_gib(self.gib_ceil())
    }

    /// `self + other`, or `None` on overflow.
    pub const fn checked_add(self, other: Size) -> Option<Size> {
        match self.0.checked_add(other.0) {
            Some(b) => Some(Size(b)),
            None => None,
        }
    }

    /// `self × n`, or `None` on overflow.
    pub const fn checked_mul(self, n: u64) -> Option<Size> {
        match self.0.checked_mul(n) {
            Some(b) => Some(Size(b)),
            None => None,
        }
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

    /// Parses a size typed on a command line: like [`FromStr`], but a number with a
    /// bare decimal unit letter (`10G`, `4T`) is refused naming both readings, since
    /// Purity's CLI reads `10G` as 10 GiB and Kubernetes as 10 GB. `10GiB`/`10Gi` and
    /// `10GB` say which.
    pub fn parse_flag(s: &str) -> Result<Self, SizeError> {
        let size = s.parse::<Size>()?;
        match Self::ambiguous_readings(s) {
            None => Ok(size),
            Some(r) => Err(SizeError {
                input: s.to_string(),
                reason: format!(
                    "a bare {unit} is ambiguous (Purity's CLI reads {s} as {binary}, Kubernetes as \
                     {decimal}): write {num}{unit}iB for {binary} or {num}{unit}B for {decimal}",
                    unit = r.unit.to_ascii_uppercase(),
                    num = r.number,
                    binary = r.binary,
                    decimal = r.decimal,
                ),
            }),
        }
    }

    /// The two readings of a size written with a bare decimal unit letter (`4T`,
    /// `10G`, `500k`): Kubernetes' (powers of 1000, how pxfa reads it) and Purity's
    /// CLI's (powers of 1024). `None` for any other spelling, and for sizes that do
    /// not parse.
    pub fn ambiguous_readings(s: &str) -> Option<AmbiguousSize> {
        let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let (number, unit) = s.split_at(split);
        if !matches!(unit, "k" | "K" | "M" | "G" | "T" | "P") {
            return None;
        }
        let decimal = s.parse::<Size>().ok()?;
        let binary = format!("{number}{}i", unit.to_ascii_uppercase())
            .parse::<Size>()
            .ok()?;
        Some(AmbiguousSize {
            number: number.to_string(),
            unit: unit.to_string(),
            decimal,
            binary,
        })
    }
}

/// A size written with a bare decimal unit letter, and its two readings
/// ([`Size::ambiguous_readings`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmbiguousSize {
    /// The number as written (`4`, `1.5`).
    pub number: String,
    /// The unit letter as written (`T`, `k`).
    pub unit: String,
    /// Kubernetes' reading, powers of 1000: what pxfa reads.
    pub decimal: Size,
    /// Purity's CLI's reading, powers of 1024.
    pub binary: Size,
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

/// The units a size is read with, exactly as written (no other spelling): bytes
/// (none, `B`), decimal `K M G T P` (Kubernetes also spells kilo `k`) and `KB`...,
/// binary `Ki Mi Gi Ti Pi` and `KiB`... Lower-case `m` is Kubernetes' milli (`4000m`
/// is 4 bytes there), so it is never read as mega; other lower-case spellings
/// (`4ti`, `10gib`) are refused rather than guessed.
fn unit_factor(unit: &str) -> Option<u64> {
    let f = match unit {
        "" | "B" => 1,
        "k" | "K" | "KB" => 1_000,
        "M" | "MB" => 1_000_000,
        "G" | "GB" => 1_000_000_000,
        "T" | "TB" => 1_000_000_000_000,
        "P" | "PB" => 1_000_000_000_000_000,
        "Ki" | "KiB" => KIB,
        "Mi" | "MiB" => MIB,
        "Gi" | "GiB" => GIB,
        "Ti" | "TiB" => TIB,
        "Pi" | "PiB" => PIB,
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
        let t = s;
        if t.is_empty() {
            return Err(err("empty"));
        }
        if t.starts_with(char::is_whitespace) || t.ends_with(char::is_whitespace) {
            return Err(err("no spaces or line breaks around a size"));
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
        if unit == "m" {
            return Err(err(
                "'m' is milli in Kubernetes quantities (4000m is 4 bytes), not mega: write M \
                 (10^6) or Mi (2^20)",
            ));
        }
        let factor = unit_factor(unit).ok_or_else(|| {
            err(
                "unknown unit (units are case-sensitive: B, K/KB, M/MB, G/GB, T/TB, P/PB or \
                 Ki/KiB … Pi/PiB; exa units are not read: no volume or pod quota reaches an \
                 exabyte)",
            )
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
                let total = int
                    .checked_mul(scale)
                    .and_then(|v| v.checked_add(frac_v))
                    .and_then(|v| v.checked_mul(u128::from(factor)))
                    .ok_or_else(|| err("too large"))?;
                if !total.is_multiple_of(scale) {
                    return Err(err("not a whole number of bytes"));
                }
                u64::try_from(total / scale).map_err(|_| err("too large"))?
            }
        };
        if bytes > MAX_PARSED {
            return Err(err(
                "too large: sizes end at 8 EiB (i64::MAX bytes, the largest a Kubernetes \
                 quantity holds)",
            ));
        }
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
    /// Accepts a byte count or a string with units; refuses negative, fractional and
    /// non-numeric values with a message that says what a size looks like.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SizeVisitor;

        impl serde::de::Visitor<'_> for SizeVisitor {
            type Value = Size;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a byte count or a size with units such as 500GiB, 2Ti or 64G")
            }

            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Size, E> {
                if n > MAX_PARSED {
                    return Err(E::custom(format!(
                        "{n} is not a valid size: too large: sizes end at 8 EiB (i64::MAX \
                         bytes, the largest a Kubernetes quantity holds)"
                    )));
                }
                Ok(Size(n))
            }

            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Size, E> {
                u64::try_from(n)
                    .map_err(|_| {
                        E::custom(format!("{n} is not a valid size: sizes are not negative"))
                    })
                    .and_then(|n| self.visit_u64(n))
            }

            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Size, E> {
                s.parse().map_err(E::custom)
            }
        }

        d.deserialize_any(SizeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn flags_refuse_a_bare_decimal_unit_with_both_readings() {
        let e = Size::parse_flag("10G").unwrap_err();
        assert!(
            e.reason.contains("10GiB") && e.reason.contains("10GB"),
            "{e}"
        );
        assert!(
            e.reason.contains("10 GiB") && e.reason.contains("9.31 GiB"),
            "{e}"
        );
        assert!(Size::parse_flag("4T").is_err());
        assert!(
            Size::parse_flag("500k")
                .unwrap_err()
                .reason
                .contains("500KiB")
        );
        assert_eq!(Size::parse_flag("10GiB").unwrap(), Size::gib(10));
        assert_eq!(Size::parse_flag("10Gi").unwrap(), Size::gib(10));
        assert_eq!(Size::parse_flag("10GB").unwrap().as_u64(), 10_000_000_000);
        assert_eq!(Size::parse_flag("512").unwrap().as_u64(), 512);
        let r = Size::ambiguous_readings("1.5T").unwrap();
        assert_eq!(r.binary, Size::bytes(3 * TIB / 2));
        assert_eq!(r.decimal.as_u64(), 1_500_000_000_000);
        assert_eq!(Size::ambiguous_readings("4Ti"), None);
        assert_eq!(Size::ambiguous_readings("4TB"), None);
        assert_eq!(Size::ambiguous_readings("4000m"), None);
    }

    #[test]
    fn parses_units() {
        let cases = [
            ("500GiB", 500 * GIB),
            ("2Ti", 2 * TIB),
            ("64G", 64_000_000_000),
            ("1073741824", GIB),
            ("1.5Ti", TIB + TIB / 2),
            ("10GiB", 10 * GIB),
            ("4Pi", 4 * PIB),
            ("512B", 512),
            ("7Mi", 7 * MIB),
            ("3k", 3_000),
            ("3KB", 3_000),
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
            "4000m",
            "4ti",
            "10gib",
            "64g",
            "1mi",
            "2Tib",
            " 7Mi",
            "7Mi ",
            "7Mi\n",
            "\t7Mi",
        ] {
            assert!(s.parse::<Size>().is_err(), "{s}");
        }
        let e = "4 TB".parse::<Size>().unwrap_err();
        assert!(e.to_string().contains("\"4 TB\""));
        let e = "4000m".parse::<Size>().unwrap_err();
        assert!(e.reason.contains("milli"), "{e}");
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

    #[test]
    fn refuses_overflow() {
        for s in [
            "18446744073709551615",                        // u64::MAX bytes
            "9223372036854775808",                         // i64::MAX + 1
            "16Ei",                                        // no exa units at all
            "99999999Pi",                                  // overflows u64
            "8192Pi",                                      // 8 EiB exactly: one past i64::MAX
            "18446744073709551616B",                       // u64::MAX + 1
            "340282366920938463463374607431768211455.5Pi", // u128 overflow in the decimal path
            "99999999999999999999999999999.999999999Pi",
        ] {
            let e = s.parse::<Size>().unwrap_err();
            assert!(
                e.reason.contains("too large")
                    || e.reason.contains("unknown unit")
                    || e.reason.contains("malformed"),
                "{s}: {e}"
            );
        }
        assert_eq!(
            "9223372036854775807".parse::<Size>().unwrap().as_u64(),
            MAX_PARSED
        );
        let n: Result<Size, _> = serde_json::from_str("18446744073709551615");
        assert!(n.unwrap_err().to_string().contains("too large"));
        let n: Size = serde_json::from_str("9223372036854775807").unwrap();
        assert_eq!(n.as_u64(), MAX_PARSED);
    }

    #[test]
    fn checked_ops_refuse_wrapping() {
        let max = Size::bytes(u64::MAX);
        assert_eq!(max.checked_round_up_gib(), None);
        assert_eq!(max.checked_add(Size::bytes(1)), None);
        assert_eq!(max.checked_mul(2), None);
        assert_eq!(Size::checked_gib(u64::MAX / GIB + 1), None);
        assert_eq!(
            Size::bytes(GIB + 1).checked_round_up_gib(),
            Some(Size::gib(2))
        );
        assert_eq!(Size::gib(3).checked_add(Size::gib(4)), Some(Size::gib(7)));
        assert_eq!(Size::gib(3).checked_mul(4), Some(Size::gib(12)));
        // The largest value whose whole-GiB round-up still fits.
        let last = Size::bytes((u64::MAX / GIB) * GIB);
        assert_eq!(last.checked_round_up_gib(), Some(last));
        assert_eq!(Size::bytes(last.as_u64() + 1).checked_round_up_gib(), None);
    }

    proptest! {
        #[test]
        fn parse_never_panics_and_never_exceeds_the_cap(s in "\\PC{0,40}") {
            if let Ok(v) = s.parse::<Size>() {
                prop_assert!(v.as_u64() <= MAX_PARSED);
            }
        }

        #[test]
        fn number_unit_strings_parse_exactly_or_refuse(
            n in 0u64..=u64::MAX,
            unit in 0usize..11,
        ) {
            let (suffix, factor) = [
                ("", 1u64), ("K", 1_000), ("M", 1_000_000), ("G", 1_000_000_000),
                ("T", 1_000_000_000_000), ("P", 1_000_000_000_000_000),
                ("Ki", KIB), ("Mi", MIB), ("Gi", GIB), ("Ti", TIB), ("Pi", PIB),
            ][unit];
            let got = format!("{n}{suffix}").parse::<Size>();
            match u128::from(n) * u128::from(factor) {
                b if b <= u128::from(MAX_PARSED) => prop_assert_eq!(got.unwrap().as_u64() as u128, b),
                _ => prop_assert!(got.is_err()),
            }
        }

        #[test]
        fn checked_ops_agree_with_wide_arithmetic(a in 0u64..=u64::MAX, b in 0u64..=u64::MAX) {
            let wide = u128::from(a) + u128::from(b);
            prop_assert_eq!(
                Size::bytes(a).checked_add(Size::bytes(b)).map(|s| u128::from(s.as_u64())),
                u64::try_from(wide).ok().map(u128::from)
            );
            let wide = u128::from(a) * u128::from(b);
            prop_assert_eq!(
                Size::bytes(a).checked_mul(b).map(|s| u128::from(s.as_u64())),
                u64::try_from(wide).ok().map(u128::from)
            );
            let up = u128::from(a).div_ceil(u128::from(GIB)) * u128::from(GIB);
            prop_assert_eq!(
                Size::bytes(a).checked_round_up_gib().map(|s| u128::from(s.as_u64())),
                u64::try_from(up).ok().map(u128::from)
            );
        }

        #[test]
        fn exact_display_round_trips_over_the_whole_range(b in 0u64..=MAX_PARSED) {
            let s = Size::bytes(b);
            let shown = s.to_string();
            // Exact forms (no decimals) read back to the same value.
            if !shown.contains('.') {
                prop_assert_eq!(shown.replace(' ', "").parse::<Size>().unwrap(), s);
            }
            // The JSON form (plain bytes) always does.
            let json = serde_json::to_string(&s).unwrap();
            prop_assert_eq!(serde_json::from_str::<Size>(&json).unwrap(), s);
        }

        #[test]
        fn display_round_trips_exact(n in 1u64..1024, unit in 0usize..4) {
            let f = [KIB, MIB, GIB, TIB][unit];
            let s = Size::bytes(n * f);
            let shown = s.to_string().replace(' ', "");
            prop_assert_eq!(shown.parse::<Size>().unwrap(), s);
        }
    }
}
