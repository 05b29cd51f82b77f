//! Everything the CLI writes: results on stdout (table, JSON or YAML), messages,
//! warnings and progress on stderr.
//!
//! Machine output goes to stdout only, so `pxfa ... -o json | jq` never sees a log
//! line. Tables fit the terminal width, sizes are shown with units and timestamps in
//! local time; JSON and YAML keep the array's raw values (bytes, ms since the epoch)
//! so that scripts need no unit parsing. Colours appear only on a terminal and never
//! when `NO_COLOR` is set.
#![allow(
    clippy::print_stderr,
    reason = "the printer is the one place in pxfa that writes to the terminal"
)]

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::Result;
use comfy_table::{Cell, ContentArrangement, Table, presets};
use serde::Serialize;

use crate::args::{ColorChoice, GlobalArgs, OutputFormat};

/// Decides what is written where.
#[derive(Debug, Clone)]
pub(crate) struct Printer {
    /// Format of results on stdout.
    pub(crate) format: OutputFormat,
    /// Colour on stdout.
    pub(crate) color_out: bool,
    /// Colour on stderr.
    pub(crate) color_err: bool,
    /// Only errors on stderr.
    pub(crate) quiet: bool,
    /// Verbosity count.
    pub(crate) verbose: u8,
    /// stderr is a terminal (progress bars instead of lines).
    pub(crate) stderr_tty: bool,
    /// Tables without their header line (`--no-headers`).
    pub(crate) no_headers: bool,
}

/// Whether colours are wanted for a stream that is (or is not) a terminal.
pub(crate) fn use_color(choice: ColorChoice, no_color: bool, is_tty: bool) -> bool {
    if no_color {
        return false;
    }
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_tty,
    }
}

impl Printer {
    /// A printer for these options, looking at the real terminal and `NO_COLOR`.
    pub(crate) fn from_args(g: &GlobalArgs) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let stderr_tty = std::io::stderr().is_terminal();
        Printer {
            format: g.output,
            color_out: use_color(g.color, no_color, std::io::stdout().is_terminal()),
            color_err: use_color(g.color, no_color, stderr_tty),
            quiet: g.quiet,
            verbose: g.verbose,
            stderr_tty,
            no_headers: g.no_headers,
        }
    }

    /// `-o wide`: tables get their extra columns.
    pub(crate) fn wide(&self) -> bool {
        self.format == OutputFormat::Wide
    }

    /// Writes a list: JSON/YAML of `items`, `kind/name` lines with `-o name`, else the
    /// table `table` builds (which looks at [`Printer::wide`]).
    pub(crate) fn emit_list<T: Serialize>(
        &self,
        kind: &str,
        items: &[T],
        name: impl Fn(&T) -> String,
        table: impl FnOnce() -> Table,
    ) -> Result<()> {
        if self.format == OutputFormat::Name {
            let lines: Vec<String> = items
                .iter()
                .map(|i| format!("{kind}/{}", name(i)))
                .collect();
            if lines.is_empty() {
                return Ok(());
            }
            return self.stdout(&lines.join("\n"));
        }
        self.emit(&items, table)
    }

    /// Writes a result: `value` as JSON/YAML, or the table `table` builds.
    pub(crate) fn emit<T: Serialize>(
        &self,
        value: &T,
        table: impl FnOnce() -> Table,
    ) -> Result<()> {
        match self.format {
            OutputFormat::Json => self.stdout(&to_json(value)?),
            OutputFormat::Yaml => self.stdout(&to_yaml(value)?),
            OutputFormat::Table | OutputFormat::Wide => {
                let t = table();
                self.stdout(&t.to_string())
            }
            f => Err(unsupported(f)),
        }
    }

    /// Writes a report of rows: JSON/YAML of `value`, CSV of `rows(true)` (raw
    /// numbers, for spreadsheets), or a table of `rows(false)` (sizes with units).
    pub(crate) fn emit_rows<T: Serialize>(
        &self,
        value: &T,
        headers: &[&str],
        rows: impl Fn(bool) -> Vec<Vec<String>>,
    ) -> Result<()> {
        if self.format == OutputFormat::Csv {
            let headers = (!self.no_headers).then_some(headers);
            return self.stdout(to_csv(headers, &rows(true)).trim_end_matches('\n'));
        }
        self.emit(value, || {
            let mut t = self.table(headers);
            for r in rows(false) {
                t.add_row(r.into_iter().map(|c| inert_cell(&c)));
            }
            t
        })
    }

    /// Writes a result that has a plain-text form for humans.
    pub(crate) fn emit_text<T: Serialize>(&self, value: &T, text: &str) -> Result<()> {
        match self.format {
            OutputFormat::Table | OutputFormat::Wide => self.stdout(text.trim_end_matches('\n')),
            _ => self.emit(value, Table::new),
        }
    }

    /// Writes `text` and a newline to stdout.
    pub(crate) fn stdout(&self, text: &str) -> Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")?;
        out.flush()?;
        Ok(())
    }

    /// A new table with headers, sized to the terminal.
    pub(crate) fn table(&self, headers: &[&str]) -> Table {
        let mut t = Table::new();
        // No borders, like kubectl: easy to read, to grep and to cut.
        t.load_preset(presets::NOTHING)
            .set_content_arrangement(ContentArrangement::Dynamic);
        if self.no_headers {
            // No header row at all: lines are data only, for `while read` loops.
        } else if self.color_out {
            t.enforce_styling();
            t.set_header(
                headers
                    .iter()
                    .map(|h| Cell::new(h).add_attribute(comfy_table::Attribute::Bold)),
            );
        } else {
            // No attributes, so no escape codes, but the terminal width still counts.
            t.set_header(headers.iter().copied());
        }
        t
    }

    /// A two-column FIELD/VALUE table for one object.
    pub(crate) fn kv_table(&self, rows: Vec<(&str, String)>) -> Table {
        let mut t = self.table(&["FIELD", "VALUE"]);
        for (k, v) in rows {
            t.add_row(vec![k.to_string(), v]);
        }
        t
    }

    /// A progress or status line on stderr (hidden with `-q`).
    pub(crate) fn info(&self, msg: impl AsRef<str>) {
        if !self.quiet {
            eprintln!("{}", inert(msg.as_ref()));
        }
    }

    /// A success line on stderr (hidden with `-q`), green on a terminal.
    pub(crate) fn done(&self, msg: impl AsRef<str>) {
        if !self.quiet {
            eprintln!("{}", self.paint_err("32", &inert(msg.as_ref())));
        }
    }

    /// A warning on stderr (shown even with `-q`: it is about safety).
    pub(crate) fn warn(&self, msg: impl AsRef<str>) {
        eprintln!(
            "{} {}",
            self.paint_err("33;1", "warning:"),
            inert(msg.as_ref())
        );
    }

    /// The error report on stderr: the whole cause chain on one line.
    pub(crate) fn error(&self, err: &anyhow::Error) {
        eprintln!(
            "{} {}",
            self.paint_err("31;1", "error:"),
            inert(&format!("{err:#}"))
        );
        if let Some(h) = crate::exit::hint_for(err) {
            eprintln!("{} {h}", self.paint_err("36", "hint:"));
        }
    }

    fn paint_err(&self, sgr: &str, s: &str) -> String {
        if self.color_err {
            format!("\x1b[{sgr}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    /// Colours `s` for stdout (e.g. plan actions) when colours are on.
    pub(crate) fn paint_out(&self, sgr: &str, s: &str) -> String {
        if self.color_out {
            format!("\x1b[{sgr}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

/// The usage error for a format this command does not print.
pub(crate) fn unsupported(f: OutputFormat) -> anyhow::Error {
    let what = match f {
        OutputFormat::Name => "-o name is for list commands",
        OutputFormat::Mermaid | OutputFormat::Dot => {
            "-o mermaid and -o dot are for plan and status"
        }
        OutputFormat::Csv => "-o csv is for usage",
        _ => "this output format is not available here",
    };
    crate::exit::InvalidInput::error(format!("{what}; use -o table, wide, json or yaml"))
}

/// RFC 4180 CSV: a field with a comma, quote or line break is quoted, quotes
/// doubled; lines end with CRLF as the RFC says.
pub(crate) fn to_csv(headers: Option<&[&str]>, rows: &[Vec<String>]) -> String {
    fn field(f: &str) -> std::borrow::Cow<'_, str> {
        if f.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", f.replace('"', "\"\"")).into()
        } else {
            f.into()
        }
    }
    let mut out = String::new();
    let lines = headers
        .map(|h| h.iter().map(|s| (*s).to_string()).collect::<Vec<_>>())
        .into_iter()
        .chain(rows.iter().cloned());
    for line in lines {
        let cells: Vec<_> = line.iter().map(|c| field(c)).collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}

/// Pretty JSON.
pub(crate) fn to_json<T: Serialize>(v: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(v)?)
}

pub(crate) fn to_yaml<T: Serialize>(v: &T) -> Result<String> {
    let s = serde_saphyr::to_string(v)?;
    Ok(s.trim_end_matches('\n').to_string())
}

/// A byte count with binary units (`10 GiB`, `1.50 TiB`).
pub(crate) fn human_size(bytes: u64) -> String {
    flasharray::Size::bytes(bytes).to_string()
}

/// An optional byte count; `-` when unknown.
pub(crate) fn human_size_opt(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "-".to_string(), human_size)
}

/// Milliseconds since the epoch as local time (`2026-11-30 15:04:05 CET`).
pub(crate) fn local_time(ms: u64) -> String {
    let Ok(ms) = i64::try_from(ms) else {
        return ms.to_string();
    };
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(ts) => ts
            .to_zoned(jiff::tz::TimeZone::system())
            .strftime("%Y-%m-%d %H:%M:%S %Z")
            .to_string(),
        Err(_) => ms.to_string(),
    }
}

/// Optional local time; `-` when unset.
pub(crate) fn local_time_opt(ms: Option<u64>) -> String {
    ms.map_or_else(|| "-".to_string(), local_time)
}

/// A duration in ms in pxfa's one format (`23h 59m`, `1d 2h`; see
/// [`px_topology::human_ms`]).
pub(crate) fn human_ms(ms: u64) -> String {
    px_topology::human_ms(ms)
}

/// `used` of `total` as a ten-cell bar with the percentage: `[#######...]  72%`.
pub(crate) fn capacity_bar(used: u64, total: u64) -> String {
    if total == 0 {
        return "-".to_string();
    }
    let ratio = (used as f64 / total as f64).clamp(0.0, 1.0);
    let filled = (ratio * 10.0).round() as usize;
    format!(
        "[{}{}] {:>3.0}%",
        "#".repeat(filled),
        ".".repeat(10 - filled),
        ratio * 100.0
    )
}

/// `live`, or `destroyed (eradicated in 23h 59m)` for objects pending eradication.
pub(crate) fn destroyed_state(destroyed: bool, time_remaining: Option<u64>) -> String {
    match (destroyed, time_remaining) {
        (false, _) => "live".to_string(),
        (true, Some(ms)) => format!("destroyed (eradicated in {})", human_ms(ms)),
        (true, None) => "destroyed".to_string(),
    }
}

/// `-` for an empty string list, else comma-separated.
pub(crate) fn list_or_dash(items: &[String]) -> String {
    if items.is_empty() {
        "-".to_string()
    } else {
        items.join(", ")
    }
}

/// The value or `-`.
pub(crate) fn or_dash(v: Option<&str>) -> String {
    v.filter(|s| !s.is_empty()).unwrap_or("-").to_string()
}

/// Progress of `apply` and `destroy` on stderr: a bar on a terminal, one plain line
/// per finished change otherwise (logs, CI), nothing with `-q`.
pub(crate) struct ChangeProgress {
    bar: Option<indicatif::ProgressBar>,
    plain: bool,
    total: usize,
    done: std::sync::atomic::AtomicUsize,
    /// The failures shown in full, with their counter: a batch call's one error
    /// (SafeMode refusing an eradication) is every change's, and is said once.
    failures: std::sync::Mutex<Vec<(String, String)>>,
}

impl ChangeProgress {
    /// Progress over `total` changes.
    pub(crate) fn new(p: &Printer, total: usize) -> Self {
        let show_bar = !p.quiet && p.stderr_tty && p.verbose == 0 && total > 0;
        let bar = show_bar.then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(total as u64),
                indicatif::ProgressDrawTarget::stderr(),
            );
            let style = indicatif::ProgressStyle::with_template(
                "{spinner} [{bar:30}] {pos}/{len} {wide_msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        ChangeProgress {
            bar,
            plain: !p.quiet && !show_bar,
            total,
            done: std::sync::atomic::AtomicUsize::new(0),
            failures: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Handles one event from the converge engine.
    pub(crate) fn event(&self, ev: px_topology::ProgressEvent) {
        use px_topology::{Outcome, ProgressEvent};
        match ev {
            ProgressEvent::ChangeStarted { change, .. } => {
                if let Some(b) = &self.bar {
                    b.set_message(change.to_line());
                }
            }
            ProgressEvent::ChangeFinished {
                change, outcome, ..
            } => {
                let n = self.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                let counter = if self.total == 0 {
                    format!("[{n}]")
                } else {
                    format!("[{n}/{}]", self.total)
                };
                let status = match &outcome {
                    Outcome::Applied => "ok".to_string(),
                    Outcome::Failed {
                        error, request_id, ..
                    } => self.failure(&counter, error, request_id.as_deref()),
                    Outcome::Skipped { reason } => format!("skipped: {reason}"),
                    Outcome::Partial {
                        done,
                        failed,
                        request_id,
                    } => {
                        let id = match request_id {
                            Some(id) if !failed.contains(id.as_str()) => {
                                format!(" (request id {id})")
                            }
                            _ => String::new(),
                        };
                        format!("PARTIAL: done {}; not done: {failed}{id}", done.join("; "))
                    }
                };
                let line = format!("{counter} {} ... {status}", change.to_line());
                match &self.bar {
                    Some(b) => {
                        if !matches!(outcome, Outcome::Applied) {
                            b.println(&line);
                        }
                        b.inc(1);
                    }
                    None if self.plain => eprintln!("{line}"),
                    None => {}
                }
            }
            ProgressEvent::RoundStarted {
                round,
                rounds,
                calls,
            } => {
                tracing::info!(round, rounds, calls, "round started");
            }
            ProgressEvent::RoundFinished { .. } => {}
        }
    }

    /// `FAILED: error`, or, for an error already shown in full, a pointer to it.
    fn failure(&self, counter: &str, error: &str, request_id: Option<&str>) -> String {
        let mut shown = self
            .failures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, first)) = shown.iter().find(|(e, _)| e == error) {
            return format!("FAILED: the same error as {first}");
        }
        shown.push((error.to_string(), counter.to_string()));
        match request_id {
            Some(id) if !error.contains(id) => format!("FAILED: {error} (request id {id})"),
            _ => format!("FAILED: {error}"),
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// A message as the terminal shows it and nothing more: the characters
/// px-topology calls unprintable (control characters, Unicode line separators) that
/// input may carry into an error are shown escaped (`\u{1b}`), so no spec value or
/// file can drive the terminal. Line breaks and tabs stay: messages list findings
/// line by line.
fn inert(msg: &str) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| px_topology::spec::is_unprintable(c) && c != '\n' && c != '\t';
    if !msg.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(msg);
    }
    let mut out = String::with_capacity(msg.len() + 8);
    for c in msg.chars() {
        if escaped(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// A table cell or line as the terminal shows it: what a cluster or array said
/// (names, phases, messages) with every character px-topology calls unprintable
/// escaped, line breaks included, so one value stays on its row.
pub(crate) fn inert_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if px_topology::spec::is_unprintable(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_cannot_drive_the_terminal_or_break_rows() {
        assert_eq!(
            super::inert_cell("3.7\u{1b}[2J\n\u{7}ok"),
            r"3.7\u{1b}[2J\u{a}\u{7}ok"
        );
        assert_eq!(super::inert_cell("plain"), "plain");
    }

    #[test]
    fn messages_cannot_drive_the_terminal() {
        assert_eq!(
            super::inert("a\u{1b}[31mb\rc\n\td"),
            "a\\u{1b}[31mb\\u{d}c\n\td"
        );
        assert!(matches!(
            super::inert("plain\nlines"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    use super::*;

    #[test]
    fn csv_quotes_what_needs_it() {
        let rows = vec![vec!["a,b".to_string(), "say \"hi\"".into(), "plain".into()]];
        assert_eq!(
            to_csv(Some(&["X", "Y", "Z"]), &rows),
            "X,Y,Z\r\n\"a,b\",\"say \"\"hi\"\"\",plain\r\n"
        );
        assert_eq!(to_csv(None, &[]), "");
    }

    #[test]
    fn color_rules() {
        assert!(!use_color(ColorChoice::Always, true, true), "NO_COLOR wins");
        assert!(use_color(ColorChoice::Always, false, false));
        assert!(!use_color(ColorChoice::Auto, false, false));
        assert!(use_color(ColorChoice::Auto, false, true));
        assert!(!use_color(ColorChoice::Never, false, true));
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(human_size(10 * 1024 * 1024 * 1024), "10 GiB");
        assert_eq!(human_size_opt(None), "-");
        assert_eq!(human_ms(86_400_000), "1d");
        assert_eq!(human_ms(90_061_000), "1d 1h");
        assert_eq!(capacity_bar(0, 0), "-");
        assert_eq!(capacity_bar(72, 100), "[#######...]  72%");
        assert_eq!(capacity_bar(200, 100), "[##########] 100%");
        assert_eq!(human_ms(1500), "2s");
    }

    #[test]
    fn local_time_is_formatted() {
        let s = local_time(1_700_000_000_000);
        assert!(s.starts_with("2023-11-1"), "{s}");
        assert_eq!(local_time_opt(None), "-");
    }

    #[test]
    fn yaml_and_json_keep_bytes() {
        #[derive(Serialize)]
        struct V {
            provisioned: u64,
        }
        let v = V {
            provisioned: 1_073_741_824,
        };
        assert!(to_json(&v).unwrap().contains("1073741824"));
        assert_eq!(to_yaml(&v).unwrap(), "provisioned: 1073741824");
    }
}
