//! Fibre Channel World Wide Names.
//!
//! One type for every place a WWN is read (specs, command lines, array answers) so
//! that `21:00:F4:C7:AA:00:27:06`, `2100f4c7aa002706` and `21-00-...` are one
//! initiator. The array takes and stores the 16 upper-case hex digits
//! ([`Wwn::as_str`]); people read them as colon pairs in lower case ([`Wwn`]'s
//! `Display`).

use std::fmt;
use std::str::FromStr;

/// A validated WWN: 16 hex digits, optionally written with `:` or `-` separators.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Wwn(String);

/// Why a text is not a WWN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a WWN (16 hex digits)")]
pub struct WwnError {
    /// The rejected text.
    pub input: String,
}

impl Wwn {
    /// Parses a WWN, ignoring `:` and `-` separators and case. Any other character,
    /// or a digit count other than 16, is an error: nothing is dropped silently.
    pub fn new(text: &str) -> Result<Self, WwnError> {
        let digits: String = text
            .chars()
            .filter(|c| *c != ':' && *c != '-')
            .collect::<String>()
            .to_ascii_uppercase();
        if digits.len() != 16 || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(WwnError {
                input: text.to_string(),
            });
        }
        Ok(Wwn(digits))
    }

    /// The array's form: 16 upper-case hex digits, no separators (what is sent).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// An initiator (WWN, IQN or NQN) in the one form in which two spellings of it
    /// compare equal: a WWN in the array's form ([`Wwn::as_str`]) however it was
    /// written, any other text lower-cased (IQNs and NQNs are case-insensitive, and
    /// text that is no WWN is never trimmed into one). Every comparison of
    /// initiators goes through here.
    pub fn initiator_key(initiator: &str) -> String {
        match Wwn::new(initiator) {
            Ok(w) => w.0,
            Err(_) => initiator.to_ascii_lowercase(),
        }
    }
}

impl fmt::Display for Wwn {
    /// Colon pairs in lower case, `21:00:f4:c7:aa:00:27:06`, as arrays print them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, pair) in self.0.as_bytes().chunks(2).enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            for b in pair {
                write!(f, "{}", char::from(*b).to_ascii_lowercase())?;
            }
        }
        Ok(())
    }
}

impl FromStr for Wwn {
    type Err = WwnError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Wwn::new(s)
    }
}

impl AsRef<str> for Wwn {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_parse_to_one_value() {
        let a = Wwn::new("21:00:f4:c7:aa:00:27:06").unwrap();
        assert_eq!(a.as_str(), "2100F4C7AA002706");
        assert_eq!(a, Wwn::new("2100F4C7AA002706").unwrap());
        assert_eq!(a, "21-00-F4-C7-AA-00-27-06".parse().unwrap());
        assert_eq!(a.to_string(), "21:00:f4:c7:aa:00:27:06");
    }

    #[test]
    fn initiator_keys_match_any_spelling_of_one_initiator() {
        let key = Wwn::initiator_key;
        assert_eq!(key("21:00:f4:c7:aa:00:27:06"), key("2100F4C7AA002706"));
        assert_eq!(key("21-00-F4-C7-AA-00-27-06"), "2100F4C7AA002706");
        assert_ne!(key("21:00:f4:c7:aa:00:27:06"), key("2100F4C7AA002707"));
        assert_eq!(
            key("iqn.1994-05.com.RedHat:w1"),
            key("IQN.1994-05.com.redhat:W1")
        );
        // Text that is no WWN is compared whole, not trimmed into one.
        assert_eq!(key("21.00.f4.c7.aa.00.27.06"), "21.00.f4.c7.aa.00.27.06");
    }

    #[test]
    fn rejects_instead_of_dropping() {
        assert!(Wwn::new("21:00").is_err());
        assert!(Wwn::new("21:00:f4:c7:aa:00:27:0g").is_err());
        // A stray character is an error, not silently removed.
        assert!(Wwn::new("21:00:f4:c7:aa:00:27:06 ").is_err());
        assert!(Wwn::new("21.00.f4.c7.aa.00.27.06").is_err());
        let e = Wwn::new("x").unwrap_err();
        assert_eq!(e.to_string(), "\"x\" is not a WWN (16 hex digits)");
    }
}
