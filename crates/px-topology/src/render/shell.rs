//! The one place pxfa turns a command it suggests (`hcp create cluster ...`, `oc
//! patch ...`, `virtctl addvolume ...`) into text: every word is quoted for a POSIX
//! shell unless it is a plain safe word, so a value can never end the word, start
//! another command or expand (`;`, `$(...)`, backquotes, globs, `~`, `=` at the
//! start of a word in zsh).

use std::borrow::Cow;

/// Whether `c` may stand unquoted anywhere in a word: letters, digits and
/// `_ @ % + = : , . / -` (Python's `shlex` safe set).
fn safe_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '_' | '@' | '%' | '+' | '=' | ':' | ',' | '.' | '/' | '-')
}

/// `word` as one POSIX shell word: unchanged when it is non-empty and plain safe
/// characters (not starting with `=`), else in single quotes, each `'` written as
/// `'\''`.
pub(crate) fn quote(word: &str) -> Cow<'_, str> {
    if !word.is_empty() && !word.starts_with('=') && word.chars().all(safe_char) {
        return Cow::Borrowed(word);
    }
    Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
}

/// `words` as one command line, each `quote`d, separated by single spaces.
pub fn join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_stay_plain_and_the_rest_is_quoted() {
        assert_eq!(
            join(&["hcp", "--name=a", "quay.io/x/y:4.19@sha256:ab", "-n"]),
            "hcp --name=a quay.io/x/y:4.19@sha256:ab -n"
        );
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("x;rm -rf /"), "'x;rm -rf /'");
        assert_eq!(quote("$(id)"), "'$(id)'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("=ls"), "'=ls'");
        assert_eq!(quote("~root"), "'~root'");
        assert_eq!(quote("<file>"), "'<file>'");
        assert_eq!(quote("a\nb"), "'a\nb'");
    }
}
