//! Guards in front of destructive commands.
//!
//! Destroying, eradicating, deleting and disconnecting ask on a terminal and need
//! `--yes` otherwise, so a script never loses data by default and an admin always sees
//! what is about to go. Empty and wildcard selections are refused outright: the array
//! API takes explicit names, and a `*` typed in a shell is far more likely a mistake
//! than an intent.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::Result;

use crate::exit::InvalidInput;

/// The user declined a confirmation. Exit code 1.
#[derive(Debug, thiserror::Error)]
#[error("{0}: not confirmed, nothing changed")]
pub(crate) struct Declined(pub(crate) String);

/// Refuses empty selections and names with wildcard characters.
pub(crate) fn check_selection(action: &str, names: &[String]) -> Result<()> {
    if names.is_empty() || names.iter().all(|n| n.trim().is_empty()) {
        return Err(InvalidInput::error(format!(
            "{action}: refusing an empty selection; name the objects explicitly"
        )));
    }
    if let Some(n) = names
        .iter()
        .find(|n| n.contains(['*', '?', '[', ']']) || n.trim().is_empty())
    {
        return Err(InvalidInput::error(format!(
            "{action}: refusing the wildcard or empty name {n:?}; name the objects explicitly"
        )));
    }
    Ok(())
}

/// Asks `question` on the terminal unless `yes`; without a terminal, `--yes` is
/// required.
pub(crate) fn confirm(yes: bool, question: &str) -> Result<()> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(InvalidInput::error(format!(
            "{question}: refusing without --yes because stdin is not a terminal"
        )));
    }
    let mut err = std::io::stderr().lock();
    write!(err, "{question} [y/N] ")?;
    err.flush()?;
    drop(err);
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    if answer_is_yes(&line) {
        Ok(())
    } else {
        Err(anyhow::Error::new(Declined(question.to_string())))
    }
}

fn answer_is_yes(line: &str) -> bool {
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections() {
        assert!(check_selection("destroy", &["v1".into()]).is_ok());
        assert!(check_selection("destroy", &[]).is_err());
        assert!(check_selection("destroy", &["px-*".into()]).is_err());
        assert!(check_selection("destroy", &["v1".into(), " ".into()]).is_err());
        assert_eq!(
            crate::exit::code_for(&check_selection("destroy", &["*".into()]).unwrap_err()),
            2
        );
    }

    #[test]
    fn answers() {
        assert!(answer_is_yes("y\n"));
        assert!(answer_is_yes(" YES "));
        assert!(!answer_is_yes("\n"));
        assert!(!answer_is_yes("no"));
    }

    #[test]
    fn yes_skips_the_question() {
        assert!(confirm(true, "destroy 3 volumes").is_ok());
    }
}
