//! Issue #28, hostile input: the corpus in `fixtures/hostile/` run against the real
//! binary. The contract (README, docs/cli.md): bad input exits 2 with a message
//! naming the flag or the field path, and nothing is written anywhere (no array
//! change: the `--sim-state` file is absent or unchanged; no output folder, no
//! token journal). Faults never crash (no signal, no allocation failure, no panic)
//! and never hang.
//!
//! Every run of `pxfa` here is bounded: its address space by `prlimit --as`
//! ([`AS_BOUND`]; a healthy run reserves about 250 MB, so an unbounded read of
//! `/dev/zero` or of an 8 GiB file dies at the bound instead of eating the
//! machine), its resident set by sampling ([`RSS_BOUND_KIB`]: a read without a
//! bound is stopped there even when it would have ended in a tidy exit 2), and its
//! wall time by [`TIME_BOUND`] (a run still going then is killed: a hang).
//!
//! Nothing pxfa prints may carry a raw control character (other than newline and
//! tab): with `NO_COLOR` and no terminal, one can only be input echoed unescaped,
//! which a terminal would obey (`\x1b[...`, `\r`).
//!
//! Two exit codes are taken from docs/cli.md rather than a flat 2: `lint` exits 1
//! for findings of severity error, so a spec it refuses may exit 1 or 2 (it must
//! still name the field); and a filter the array answers with 400 is "the array
//! refused", exit 1, unless pxfa refuses it before sending (2).
//!
//! Each test collects the problems of all its cases and fails once at the end: one
//! line per failing case, then for each the command, the exit, every problem and
//! the first lines of stderr.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{Sim, example, pxfa_path};

/// Longest a run may take; a run still going is killed and counted as a hang.
const TIME_BOUND: Duration = Duration::from_secs(20);
/// Address-space bound of every run, bytes. A healthy `apply` or `sim serve` peaks
/// at about 250 MB of address space (measured with `VmPeak`), so 2 GiB is eight
/// times that.
const AS_BOUND: u64 = 2 << 30;
/// Largest resident set a run may reach. A healthy run peaks at about 40 MB; a
/// file flag read without a bound passes this long before the address-space bound,
/// and the run is stopped there.
const RSS_BOUND_KIB: u64 = 256 * 1024;
/// Parallel runs for the cheap cases (2 cores are shared with other builds).
const WORKERS: usize = 3;

fn hostile_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/hostile")
}

fn read_fixture(name: &str) -> String {
    std::fs::read_to_string(hostile_dir().join(name))
        .unwrap_or_else(|e| panic!("fixtures/hostile/{name}: {e}"))
}

/// The tab-separated data lines of a fixture table (no comments, no blank lines).
fn table(name: &str) -> Vec<Vec<String>> {
    read_fixture(name)
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

// ---------------------------------------------------------------------------
// Running pxfa under the bounds
// ---------------------------------------------------------------------------

/// What one bounded run did.
struct Run {
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    /// Highest `VmHWM` sampled, KiB.
    peak_kib: u64,
    /// Stopped because the resident set passed [`RSS_BOUND_KIB`].
    over_rss: bool,
    stdout: String,
    stderr: String,
    wall: Duration,
}

impl Run {
    fn exit(&self) -> String {
        match (self.timed_out, self.signal, self.code) {
            _ if self.over_rss => format!(
                "stopped when its resident set passed {1} MiB ({0} MiB): a read without a bound",
                self.peak_kib / 1024,
                RSS_BOUND_KIB / 1024
            ),
            (true, _, _) => format!("no exit within {TIME_BOUND:?} (killed: a hang)"),
            (_, Some(s), _) => format!("killed by signal {s}{}", signal_name(s)),
            (_, _, Some(c)) => format!("exit {c}"),
            _ => "no exit status".to_string(),
        }
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        6 => " (SIGABRT: a crash, or an allocation over the memory bound)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        7 => " (SIGBUS)",
        _ => "",
    }
}

/// `pxfa ARGS` under the memory bound, with a clean environment: no `PUREFA_*`, no
/// `KUBECONFIG`, and `HOME`/`XDG_STATE_HOME` inside `home` (which must stay absent
/// for a refused run), so that nothing can land in the real home.
fn bounded_command(args: &[OsString], home: &Path) -> Command {
    let mut c = if Path::new("/usr/bin/prlimit").exists() {
        let mut c = Command::new("/usr/bin/prlimit");
        c.arg(format!("--as={AS_BOUND}")).arg("--").arg(pxfa_path());
        c
    } else {
        let mut c = Command::new("bash");
        c.arg("-c")
            .arg(format!("ulimit -v {}; exec \"$0\" \"$@\"", AS_BOUND / 1024))
            .arg(pxfa_path());
        c
    };
    c.args(args)
        .env_remove("PUREFA_URL")
        .env_remove("PUREFA_API")
        .env_remove("KUBECONFIG")
        .env("HOME", home.join("home"))
        .env("XDG_STATE_HOME", home.join("state"))
        // The pxfa config file: the temporary HOME's, never the tester's.
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("PXFA_CONFIG")
        .env_remove("PXFA_PROFILE")
        .env("NO_COLOR", "1")
        // glibc reserves 64 MiB of address space per malloc arena, up to 8 per core:
        // on a machine with many cores that alone would pass the bound. Two arenas
        // keep the reservation independent of the machine; real allocations are not
        // changed.
        .env("MALLOC_ARENA_MAX", "2")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Runs a bounded command to its end or to [`TIME_BOUND`].
fn run_bounded(mut cmd: Command) -> Run {
    let start = Instant::now();
    let mut child = cmd.spawn().expect("start pxfa under prlimit");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let mut timed_out = false;
    let mut over_rss = false;
    let mut peak_kib = 0;
    // prlimit (and the bash fallback) exec pxfa: the child's pid is pxfa's.
    let pid = child.id();
    let status = loop {
        if let Some(kib) = vm_hwm_kib(pid) {
            peak_kib = peak_kib.max(kib);
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if peak_kib > RSS_BOUND_KIB {
            over_rss = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        if start.elapsed() > TIME_BOUND {
            timed_out = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let wall = start.elapsed();
    Run {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        peak_kib,
        over_rss,
        stdout: String::from_utf8_lossy(&out_reader.join().unwrap()).to_string(),
        stderr: String::from_utf8_lossy(&err_reader.join().unwrap()).to_string(),
        wall,
    }
}

/// The kernel's peak-RSS mark of a running process, KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// An argument as shown in a report: long ones shortened.
fn show_arg(a: &OsStr) -> String {
    let s = a.to_string_lossy();
    let shown: String = s.chars().take(100).collect();
    let shown = if shown.len() < s.len() {
        format!("{shown}...({} chars)", s.chars().count())
    } else {
        shown
    };
    if shown
        .chars()
        .any(|c| c.is_control() || " '\"();$`".contains(c))
    {
        format!("{shown:?}")
    } else {
        shown
    }
}

/// The first lines of a stream for a report, each cut to a readable length.
fn first_lines(s: &str, n: usize) -> String {
    let mut lines: Vec<String> = s
        .lines()
        .take(n)
        .map(|l| {
            let cut: String = l.chars().take(300).collect();
            let cut = format!("{cut:?}");
            if l.chars().count() > 300 {
                format!("      {cut}...")
            } else {
                format!("      {cut}")
            }
        })
        .collect();
    let total = s.lines().count();
    if total > n {
        lines.push(format!("      ... ({} more lines)", total - n));
    }
    if lines.is_empty() {
        lines.push("      (empty)".to_string());
    }
    lines.join("\n")
}

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

type Check = Box<dyn Fn(&Run) -> Vec<String> + Send + Sync>;

/// One run of pxfa and everything it must do.
struct Case {
    name: String,
    args: Vec<OsString>,
    /// Accepted exit codes.
    codes: Vec<i32>,
    /// Each group: stderr must contain at least one of its strings.
    names: Vec<Vec<String>>,
    /// Also look for `names` in stdout (lint prints its findings there).
    names_in_stdout: bool,
    /// Paths that must not exist after the run.
    absent: Vec<PathBuf>,
    /// Files that must be byte for byte (and inode for inode) what they were before.
    unchanged: Vec<PathBuf>,
    /// Home of the run (HOME, XDG_STATE_HOME); must stay absent when the run is
    /// expected to fail.
    home: PathBuf,
    /// Further checks.
    check: Option<Check>,
    /// Environment variables for the run.
    env: Vec<(String, OsString)>,
}

impl Case {
    fn new(name: impl Into<String>, args: Vec<OsString>, codes: &[i32], home: &Path) -> Case {
        Case {
            name: name.into(),
            args,
            codes: codes.to_vec(),
            names: Vec::new(),
            names_in_stdout: false,
            absent: Vec::new(),
            unchanged: Vec::new(),
            home: home.to_path_buf(),
            check: None,
            env: Vec::new(),
        }
    }
    fn names_any(mut self, any: &[&str]) -> Case {
        self.names.push(any.iter().map(|s| s.to_string()).collect());
        self
    }
    fn absent(mut self, p: impl Into<PathBuf>) -> Case {
        self.absent.push(p.into());
        self
    }
    fn unchanged(mut self, p: impl Into<PathBuf>) -> Case {
        self.unchanged.push(p.into());
        self
    }
    fn check(mut self, f: impl Fn(&Run) -> Vec<String> + Send + Sync + 'static) -> Case {
        self.check = Some(Box::new(f));
        self
    }

    fn command_line(&self) -> String {
        let mut s = "pxfa".to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(&show_arg(a));
        }
        s
    }
}

/// Identity and content of a file (`None`: absent).
fn fingerprint(p: &Path) -> Option<(u64, Vec<u8>)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(p).ok()?;
    Some((m.ino(), std::fs::read(p).unwrap_or_default()))
}

/// What a path that should not exist holds, for the report.
fn describe_written(p: &Path) -> String {
    match std::fs::read_dir(p) {
        Ok(entries) => {
            let names: Vec<String> = entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .take(5)
                .collect();
            format!("{} (folder: {})", p.display(), names.join(", "))
        }
        Err(_) => p.display().to_string(),
    }
}

/// Runs one case; `None` when it met its contract, else the report entry.
fn run_case(case: &Case) -> Option<String> {
    let before: Vec<_> = case.unchanged.iter().map(|p| fingerprint(p)).collect();
    let mut cmd = bounded_command(&case.args, &case.home);
    for (k, v) in &case.env {
        cmd.env(k, v);
    }
    let r = run_bounded(cmd);
    let mut problems = Vec::new();
    if r.timed_out || r.over_rss || r.signal.is_some() {
        problems.push(r.exit());
    } else if !r.code.is_some_and(|c| case.codes.contains(&c)) {
        let want: Vec<String> = case.codes.iter().map(i32::to_string).collect();
        problems.push(format!("{}, expected {}", r.exit(), want.join(" or ")));
    }
    if r.stderr.contains("panicked") {
        problems.push("panicked".to_string());
    }
    if r.stderr.contains("memory allocation of") {
        problems.push("an allocation failed (read without a bound?)".to_string());
    }
    for (stream, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        if let Some(c) = text
            .chars()
            .find(|&c| c.is_control() && c != '\n' && c != '\t')
        {
            problems.push(format!(
                "{stream} carries a raw control character U+{:04X}: input echoed unescaped \
                 (it drives the terminal)",
                c as u32
            ));
        }
    }
    let haystack = if case.names_in_stdout {
        format!("{}\n{}", r.stdout, r.stderr)
    } else {
        r.stderr.clone()
    };
    for group in &case.names {
        if !group.iter().any(|n| haystack.contains(n.as_str())) {
            let shown: Vec<String> = group.iter().map(|n| show_arg(OsStr::new(n))).collect();
            problems.push(format!("the message does not name {}", shown.join(" or ")));
        }
    }
    // A run that may succeed may also make its home (a token journal folder).
    let home = (!case.codes.contains(&0)).then_some(&case.home);
    for p in case.absent.iter().chain(home) {
        if std::fs::symlink_metadata(p).is_ok() {
            problems.push(format!("wrote {}", describe_written(p)));
        }
    }
    for (p, was) in case.unchanged.iter().zip(before) {
        if fingerprint(p) != was {
            problems.push(format!("changed {}", p.display()));
        }
    }
    if let Some(check) = &case.check {
        problems.extend(check(&r));
    }
    if problems.is_empty() {
        return None;
    }
    let mut report = format!(
        "[{}] {}\n    {} after {:.1?}\n",
        case.name,
        case.command_line(),
        r.exit(),
        r.wall
    );
    problems.dedup();
    for p in &problems {
        report.push_str(&format!("    - {p}\n"));
    }
    report.push_str("    stderr:\n");
    report.push_str(&first_lines(&r.stderr, 8));
    if case.names_in_stdout && !r.stdout.is_empty() {
        report.push_str("\n    stdout:\n");
        report.push_str(&first_lines(&r.stdout, 4));
    }
    Some(report)
}

/// Runs the cases on `workers` threads; returns the reports of those that failed.
fn run_all(cases: &[Case], workers: usize) -> Vec<String> {
    let next = Mutex::new(cases.iter());
    let failed = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers.max(1) {
            s.spawn(|| {
                loop {
                    let job = next.lock().unwrap().next();
                    let Some(case) = job else { break };
                    if let Some(f) = run_case(case) {
                        failed.lock().unwrap().push(f);
                    }
                }
            });
        }
    });
    let mut failed = failed.into_inner().unwrap();
    failed.sort();
    failed
}

/// Fails the test with every report, if any.
fn finish(group: &str, total: usize, failed: Vec<String>) {
    if failed.is_empty() {
        return;
    }
    // One line per failing case first (its name and first problem), then the
    // details: the command, the exit, every problem and the start of stderr.
    let index: Vec<String> = failed
        .iter()
        .map(|f| {
            let lines: Vec<&str> = f.lines().collect();
            let head = lines.first().copied().unwrap_or("");
            let Some((name, _)) = head.split_once("] ") else {
                return format!("  {head}");
            };
            // The second line of a case's report is "EXIT after WALL".
            let exit = lines.get(1).map_or("", |l| l.trim());
            let problems: Vec<&str> = lines
                .iter()
                .filter_map(|l| l.strip_prefix("    - "))
                .collect();
            format!("  {name}] {exit}: {}", problems.join("; "))
        })
        .collect();
    panic!(
        "hostile {group}: {} of {total} case(s) broke the contract:\n{}\n\n{}",
        failed.len(),
        index.join("\n"),
        failed.join("\n")
    );
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// A file with `body` and mode 0600.
fn private_file(p: &Path, body: &[u8]) -> PathBuf {
    std::fs::write(p, body).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p.to_path_buf()
}

// ---------------------------------------------------------------------------
// Spec payloads: every string field times every payload
// ---------------------------------------------------------------------------

struct Payload {
    name: String,
    value: String,
}

fn payloads() -> Vec<Payload> {
    let doc: Value = serde_json::from_str(&read_fixture("payloads.json")).unwrap();
    doc["payloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let name = p["name"].as_str().unwrap().to_string();
            let value = match (&p["value"], &p["repeat"]) {
                (Value::String(v), _) => v.clone(),
                (_, Value::String(r)) => r.repeat(p["times"].as_u64().unwrap() as usize),
                _ => panic!("payload {name}: needs value, or repeat and times"),
            };
            Payload { name, value }
        })
        .collect()
}

/// Sets `path` (`spec.management.nodes[0].iqns[0]`) in a parsed spec, creating the
/// mappings on the way; list items must exist.
fn set_path(doc: &mut Value, path: &str, new: Value) -> Result<(), String> {
    enum Step {
        Key(String),
        Index(usize),
    }
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        steps.push(Step::Key(key.to_string()));
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            let n = idx
                .trim_end_matches(']')
                .parse()
                .map_err(|_| format!("{path}: bad index {idx}"))?;
            steps.push(Step::Index(n));
        }
    }
    let mut cur = doc;
    let last = steps.len() - 1;
    for (i, step) in steps.into_iter().enumerate() {
        let placeholder = if i == last {
            Value::Null
        } else {
            Value::Object(Default::default())
        };
        cur = match step {
            Step::Key(k) => cur
                .as_object_mut()
                .ok_or_else(|| format!("{path}: {k} is not under a mapping"))?
                .entry(k)
                .or_insert(placeholder),
            Step::Index(n) => cur
                .as_array_mut()
                .and_then(|a| a.get_mut(n))
                .ok_or_else(|| format!("{path}: no item {n}"))?,
        };
    }
    *cur = new;
    Ok(())
}

/// An example spec as a JSON value (YAML 1.2 reads JSON, so the edited spec is
/// written back as JSON: every payload character reaches the field exactly).
fn example_value(name: &str) -> Value {
    let text = std::fs::read_to_string(example(name)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("examples/{name}: {e}"))
}

fn file_stem(field: &str) -> String {
    field
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

#[test]
fn hostile_spec_string_payloads() {
    let dir = tempfile::tempdir().unwrap();
    let fields = table("spec-fields.txt");
    let payloads = payloads();
    assert!(fields.len() >= 40 && payloads.len() >= 10);
    let mut cases = Vec::new();
    // The apply control of each example used: it applies as is (with
    // `--include-secrets`, a cloud-drive token has somewhere to go), so that an
    // apply refusing a payload refuses the payload, not the example.
    let mut bases: Vec<&str> = fields.iter().map(|r| r[1].as_str()).collect();
    bases.sort();
    bases.dedup();
    for base in bases {
        let spec = dir.path().join(format!("{base}-control.yaml"));
        std::fs::write(
            &spec,
            serde_json::to_string_pretty(&example_value(base)).unwrap(),
        )
        .unwrap();
        let out = dir.path().join(format!("{base}-control-apply-out"));
        let state = dir.path().join(format!("{base}-control-apply-state.json"));
        let mut args = os(&["--array", "sim", "--sim-state"]);
        args.push(state.into());
        args.extend(os(&["apply", "-f"]));
        args.extend([spec.into(), "--yes".into(), "--out".into(), out.into()]);
        args.push("--include-secrets".into());
        let home = dir.path().join(format!("{base}-control-apply-home"));
        cases.push(Case::new(
            format!("{base} control (apply)"),
            args,
            &[0],
            &home,
        ));
    }
    for row in &fields {
        let (field, base, valid, also) = match &row[..] {
            [f, b, v] => (f, b, v, None),
            [f, b, v, a] => (f, b, v, Some(a)),
            _ => panic!("spec-fields.txt: bad line {row:?}"),
        };
        let stem = file_stem(field);
        let mut base_doc = example_value(base);
        for setting in also.iter().flat_map(|a| a.split(',')) {
            let (path, value) = setting
                .split_once('=')
                .unwrap_or_else(|| panic!("spec-fields.txt: {field}: bad setting {setting}"));
            set_path(&mut base_doc, path, Value::String(value.to_string())).unwrap();
        }
        // The control: a valid value in the same place renders.
        let mut doc = base_doc.clone();
        set_path(&mut doc, field, Value::String(valid.clone())).unwrap();
        let spec = dir.path().join(format!("{stem}-control.yaml"));
        std::fs::write(&spec, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        let out = dir.path().join(format!("{stem}-control-out"));
        let home = dir.path().join(format!("{stem}-control-home"));
        let mut args = os(&["render", "-f"]);
        args.extend([spec.into(), "--out".into(), out.clone().into()]);
        let written = out.clone();
        cases.push(
            Case::new(format!("{field} control {valid:?}"), args, &[0], &home).check(move |_| {
                if written.join("README.txt").exists() {
                    vec![]
                } else {
                    vec![format!(
                        "the control wrote no {}/README.txt: is the field path right?",
                        written.display()
                    )]
                }
            }),
        );
        for p in &payloads {
            let mut doc = base_doc.clone();
            set_path(&mut doc, field, Value::String(p.value.clone())).unwrap();
            let id = format!("{stem}-{}", p.name);
            let spec = dir.path().join(format!("{id}.yaml"));
            std::fs::write(&spec, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
            let name = |cmd: &str| format!("{field} <- {} ({cmd})", p.name);

            // lint: documented as exit 1 for findings of severity error, so 1 or 2;
            // it never writes, but must name the field.
            let home = dir.path().join(format!("{id}-lint-home"));
            let mut args = os(&["lint", "-f"]);
            args.push(spec.clone().into());
            let mut c = Case::new(name("lint"), args, &[1, 2], &home).names_any(&[field]);
            c.names_in_stdout = true;
            cases.push(c);

            let home = dir.path().join(format!("{id}-render-home"));
            let out = dir.path().join(format!("{id}-render-out"));
            let mut args = os(&["render", "-f"]);
            args.extend([spec.clone().into(), "--out".into(), out.clone().into()]);
            cases.push(
                Case::new(name("render"), args, &[2], &home)
                    .names_any(&[field])
                    .absent(out),
            );

            let home = dir.path().join(format!("{id}-apply-home"));
            let out = dir.path().join(format!("{id}-apply-out"));
            let state = dir.path().join(format!("{id}-apply-state.json"));
            let mut args = os(&["--array", "sim", "--sim-state"]);
            args.push(state.clone().into());
            args.extend(os(&["apply", "-f"]));
            args.extend([
                spec.into(),
                "--yes".into(),
                "--out".into(),
                out.clone().into(),
                "--include-secrets".into(),
            ]);
            cases.push(
                Case::new(name("apply"), args, &[2], &home)
                    .names_any(&[field])
                    .absent(out)
                    .absent(state),
            );
        }
    }
    let failed = run_all(&cases, WORKERS);
    finish("spec string payloads", cases.len(), failed);
}

// ---------------------------------------------------------------------------
// Grammar specs: fixtures/hostile/specs/*.yaml
// ---------------------------------------------------------------------------

#[test]
fn hostile_grammar_specs() {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(hostile_dir().join("specs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "only {} grammar specs", files.len());
    let mut cases = Vec::new();
    for spec in files {
        let file = spec.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&spec).unwrap();
        let header = |key: &str| {
            text.lines()
                .take_while(|l| l.starts_with('#'))
                .find_map(|l| l.strip_prefix(&format!("# {key}: ")))
                .map(str::trim)
                .map(str::to_string)
        };
        let expect: i32 = header("expect")
            .unwrap_or_else(|| panic!("{file}: the first line must be `# expect: CODE`"))
            .parse()
            .unwrap();
        let names = header("names");
        let commands = header("commands").unwrap_or_else(|| "lint render apply".into());
        for cmd in commands.split_whitespace() {
            let id = format!("{file}-{cmd}");
            let home = dir.path().join(format!("{id}-home"));
            let out = dir.path().join(format!("{id}-out"));
            let state = dir.path().join(format!("{id}-state.json"));
            let mut args = Vec::new();
            let mut codes = vec![expect];
            match cmd {
                "lint" => {
                    args.extend(os(&["lint", "-f"]));
                    args.push(spec.clone().into());
                    if expect == 2 {
                        // Findings of severity error exit 1 (docs/cli.md).
                        codes = vec![1, 2];
                    }
                }
                "render" => {
                    args.extend(os(&["render", "-f"]));
                    args.extend([spec.clone().into(), "--out".into(), out.clone().into()]);
                }
                "apply" => {
                    args.extend(os(&["--array", "sim", "--sim-state"]));
                    args.push(state.clone().into());
                    args.extend(os(&["apply", "-f"]));
                    args.extend([
                        spec.clone().into(),
                        "--yes".into(),
                        "--out".into(),
                        out.clone().into(),
                    ]);
                }
                other => panic!("{file}: unknown command {other}"),
            }
            let mut c = Case::new(format!("{file} ({cmd})"), args, &codes, &home);
            c.names_in_stdout = cmd == "lint";
            if let Some(n) = &names {
                c = c.names_any(&[n]);
            }
            if expect != 0 {
                c = c.absent(out).absent(state);
            }
            cases.push(c);
        }
    }
    let failed = run_all(&cases, WORKERS);
    finish("grammar specs", cases.len(), failed);
}

// ---------------------------------------------------------------------------
// Array addresses
// ---------------------------------------------------------------------------

/// Expands `{C*N}` (C repeated N times).
fn expand(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').expect("unclosed {") + start;
        let (c, n) = rest[start + 1..end].split_once('*').expect("{C*N}");
        out.push_str(&c.repeat(n.parse().unwrap()));
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn hostile_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let tok = private_file(&dir.path().join("tok"), b"t0k3n\n");
    let mut cases = Vec::new();
    for (i, row) in table("addresses.txt").into_iter().enumerate() {
        let [addr, code] = &row[..] else {
            panic!("addresses.txt: bad line {row:?}");
        };
        let code: i32 = code.parse().unwrap();
        let home = dir.path().join(format!("{i}-home"));
        let mut args = os(&["--array", &expand(&unescape(addr)), "--api-token-file"]);
        args.push(tok.clone().into());
        args.extend(os(&[
            "--retries",
            "0",
            "--connect-timeout",
            "3s",
            "volume",
            "list",
        ]));
        let mut c = Case::new(format!("address {addr}"), args, &[code], &home);
        if code == 2 {
            c = c.names_any(&["--array", "array address"]);
        }
        cases.push(c);
    }
    let failed = run_all(&cases, WORKERS);
    finish("addresses", cases.len(), failed);
}

// ---------------------------------------------------------------------------
// Token files, against `pxfa sim serve`
// ---------------------------------------------------------------------------

/// Unescapes `\r \n \0 \t \\ \u{XXXX}`.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('r') => out.push('\r'),
            Some('n') => out.push('\n'),
            Some('0') => out.push('\0'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let hex: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap());
            }
            other => panic!("unknown escape \\{other:?} in {s:?}"),
        }
    }
    out
}

/// A token file's bytes: the escapes undone, the token put in for `{TOKEN}`.
fn token_content(s: &str, token: &str) -> Vec<u8> {
    unescape(&s.replace("{TOKEN}", token)).into_bytes()
}

#[test]
fn hostile_token_files() {
    let sim = Sim::start();
    let token = sim.token();
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for row in table("token-files.txt") {
        let (name, content, codes, via) = match &row[..] {
            [n, c, k] => (n, c, k, "file"),
            [n, c, k, v] => (n, c, k, v.as_str()),
            _ => panic!("token-files.txt: bad line {row:?}"),
        };
        let codes: Vec<i32> = codes.split('|').map(|c| c.parse().unwrap()).collect();
        let bytes = token_content(content, &token);
        let home = dir.path().join(format!("{name}-home"));
        let mut args = os(&["--array", &sim.url, "--ca-file"]);
        args.push(sim.cert.clone().into());
        let mut env = Vec::new();
        // What a refusal must name (one of).
        let source: &'static [&'static str] = match via {
            "file" => {
                let file = private_file(&dir.path().join(name), &bytes);
                args.push("--api-token-file".into());
                args.push(file.into());
                &["--api-token-file"][..]
            }
            "env" => {
                let value = String::from_utf8(bytes).unwrap();
                env.push(("PUREFA_API".to_string(), OsString::from(value)));
                &["PUREFA_API"][..]
            }
            "pure-json" => {
                let value = String::from_utf8(bytes).unwrap();
                let host = sim.url.trim_start_matches("https://");
                let doc = serde_json::json!({
                    "FlashArrays": [{"MgmtEndPoint": host, "APIToken": value}]
                });
                let file = private_file(
                    &dir.path().join(format!("{name}.json")),
                    doc.to_string().as_bytes(),
                );
                args.push("--pure-json".into());
                args.push(file.into());
                &["APIToken", "--pure-json"][..]
            }
            other => panic!("token-files.txt: {name}: unknown source {other}"),
        };
        args.extend(os(&["--retries", "0", "volume", "list"]));
        let t = token.clone();
        let mut c =
            Case::new(format!("token via {via} {name}"), args, &codes, &home).check(move |r| {
                let mut p = Vec::new();
                if r.stdout.contains(&t) || r.stderr.contains(&t) {
                    p.push("the API token was printed".to_string());
                }
                if r.code == Some(2) && !source.iter().any(|s| r.stderr.contains(s)) {
                    p.push(format!("the message does not name {}", source.join(" or ")));
                }
                if r.code == Some(2) && r.stderr.contains("HTTP") {
                    p.push("exit 2 after a request reached the array".to_string());
                }
                p
            });
        c.env = env;
        cases.push(c);
    }
    let failed = run_all(&cases, WORKERS);
    finish("token files", cases.len(), failed);
}

// ---------------------------------------------------------------------------
// File flags pointed at /dev/zero, FIFOs, an 8 GiB sparse file
// ---------------------------------------------------------------------------

#[test]
fn hostile_file_flags() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("fifo");
    let st = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(st.success());
    let huge = d.join("huge");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let tok = private_file(&d.join("tok"), b"t0k3n\n");
    let spec = example("tenant-direct-access.yaml");
    // A kubeconfig that parses, for the flag next to the hostile one; no cluster is
    // contacted before both are read.
    let kube = private_file(
        &d.join("kubeconfig"),
        b"apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\n\
          users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n\
          current-context: x\n",
    );
    // The hostile files: /dev/zero; a FIFO nobody opens for writing; a FIFO whose
    // writer never writes nor closes it; a FIFO fed zeros without end; an 8 GiB
    // sparse file.
    let kinds = [
        "dev-zero",
        "fifo",
        "fifo-silent-writer",
        "fifo-endless-writer",
        "sparse-8GiB",
    ];
    let mkfifo = |p: &Path| {
        let st = Command::new("mkfifo").arg(p).status().expect("mkfifo");
        assert!(st.success(), "mkfifo {}", p.display());
    };
    // Writers of the FIFOs, ended after the runs: the read-write handles this
    // process holds (on Linux they open a FIFO without blocking and count as its
    // writer), and the `cat /dev/zero` feeding the endless ones.
    let mut held = Vec::new();
    let mut feeders = Vec::new();
    let mut slow = Vec::new();
    let mut fast = Vec::new();
    for row in table("file-flags.txt") {
        let [name, named, template] = &row[..] else {
            panic!("file-flags.txt: bad line {row:?}");
        };
        for kind in kinds {
            let id = format!("{name}-{kind}");
            let in_dir = template.contains("{DIR}");
            // {DIR}: a folder holding one such file as x.yaml (no device without
            // root, so not for /dev/zero).
            if in_dir && kind == "dev-zero" {
                continue;
            }
            // State files may hold 512 MiB (docs/cli.md), more than the resident-set
            // bound: an endless pipe would be stopped by the bound, not by their cap.
            if kind == "fifo-endless-writer" && name.contains("state") {
                continue;
            }
            let folder = d.join(format!("{id}-dir"));
            let file = if in_dir {
                std::fs::create_dir(&folder).unwrap();
                folder.join("x.yaml")
            } else {
                match kind {
                    "dev-zero" => PathBuf::from("/dev/zero"),
                    "fifo" => fifo.clone(),
                    "sparse-8GiB" => huge.clone(),
                    _ => d.join(format!("{id}-fifo")),
                }
            };
            if kind == "sparse-8GiB" && in_dir {
                std::fs::File::create(&file)
                    .unwrap()
                    .set_len(8 << 30)
                    .unwrap();
            }
            if kind.starts_with("fifo") && (in_dir || kind != "fifo") {
                mkfifo(&file);
            }
            if kind == "fifo-silent-writer" || kind == "fifo-endless-writer" {
                held.push(
                    std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(&file)
                        .unwrap(),
                );
            }
            if kind == "fifo-endless-writer" {
                feeders.push(
                    Command::new("sh")
                        .arg("-c")
                        .arg("exec cat /dev/zero > \"$0\"")
                        .arg(&file)
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .spawn()
                        .expect("start cat /dev/zero"),
                );
            }
            let out = d.join(format!("{id}-out"));
            let state = d.join(format!("{id}-state.json"));
            let home = d.join(format!("{id}-home"));
            let fill = |s: &str| -> OsString {
                match s {
                    "{FILE}" | "{DIR}/x.yaml" => file.clone().into(),
                    "{SPEC}" => spec.clone().into(),
                    "{TOK}" => tok.clone().into(),
                    "{OUT}" => out.clone().into(),
                    "{STATE}" => state.clone().into(),
                    "{KUBE}" => kube.clone().into(),
                    "{DIR}" => folder.clone().into(),
                    other => other.into(),
                }
            };
            let args: Vec<OsString> = template.split(' ').map(fill).collect();
            let named = fill(named).to_string_lossy().to_string();
            let c = Case::new(format!("{name} = {kind}"), args, &[2], &home)
                .names_any(&[&named])
                .absent(out)
                .absent(state);
            if kind.starts_with("fifo") {
                slow.push(c);
            } else {
                fast.push(c);
            }
        }
    }
    // A run waiting on a FIFO costs no CPU: all of them at once, so that waits
    // (and hangs) cost one time bound, not one each. The others read as fast as
    // they can up to the memory bound: two at a time.
    let (mut failed, more) = std::thread::scope(|s| {
        let blocked = s.spawn(|| run_all(&slow, slow.len()));
        let reading = run_all(&fast, 2);
        (blocked.join().unwrap(), reading)
    });
    for mut f in feeders {
        let _ = f.kill();
        let _ = f.wait();
    }
    drop(held);
    failed.extend(more);
    failed.sort();
    assert_eq!(
        std::fs::metadata(&huge).unwrap().len(),
        8 << 30,
        "the sparse file changed size"
    );
    finish("file flags", slow.len() + fast.len(), failed);
}

// ---------------------------------------------------------------------------
// Symbolic links and odd paths in --out and --sim-state
// ---------------------------------------------------------------------------

/// A folder with mode 0755 holding one file, to point a link at.
fn link_target(p: &Path) -> PathBuf {
    std::fs::create_dir(p).unwrap();
    std::fs::write(p.join("keep.txt"), b"untouched\n").unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.to_path_buf()
}

/// The target folder still has mode 0755 and only its own file.
fn target_untouched(target: PathBuf) -> impl Fn(&Run) -> Vec<String> + Send + Sync {
    move |_| {
        let mut p = Vec::new();
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o7777;
        if mode != 0o755 {
            p.push(format!(
                "the link target {} changed mode to {mode:o}",
                target.display()
            ));
        }
        let entries: Vec<String> = std::fs::read_dir(&target)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| n != "keep.txt")
            .collect();
        if !entries.is_empty() {
            p.push(format!(
                "wrote into the link target {}: {}",
                target.display(),
                entries.join(", ")
            ));
        }
        p
    }
}

fn apply_args(state: &Path, spec: &Path, out: &Path, extra: &[&str]) -> Vec<OsString> {
    let mut a = os(&["--array", "sim", "--sim-state"]);
    a.push(state.into());
    a.extend(os(&["apply", "-f"]));
    a.extend([spec.into(), "--yes".into(), "--out".into(), out.into()]);
    a.extend(os(extra));
    a
}

#[test]
fn hostile_symlinks_and_paths() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let da = example("tenant-direct-access.yaml");
    let cd = example("tenant-cloud-drive.yaml");
    let mut cases = Vec::new();

    // Control: the cloud-drive apply with secrets works into a plain folder.
    let out = d.join("control-out");
    let state = d.join("control-state.json");
    let written = out.clone();
    cases.push(
        Case::new(
            "control: cloud-drive apply --out --include-secrets",
            apply_args(&state, &cd, &out, &["--include-secrets"]),
            &[0],
            &d.join("control-home"),
        )
        .check(move |_| {
            if written.join("README.txt").exists() {
                vec![]
            } else {
                vec!["the control wrote no README.txt".into()]
            }
        }),
    );

    // OUT/.pxfa (the token journal's folder, chmod-ed 0700) is a link elsewhere.
    let out = d.join("journal-link-out");
    std::fs::create_dir(&out).unwrap();
    let target = link_target(&d.join("journal-link-target"));
    std::os::unix::fs::symlink(&target, out.join(".pxfa")).unwrap();
    let state = d.join("journal-link-state.json");
    let link = out.join(".pxfa").to_string_lossy().to_string();
    cases.push(
        Case::new(
            "--out DIR with DIR/.pxfa a symlink (cloud-drive, token journal)",
            apply_args(&state, &cd, &out, &["--include-secrets"]),
            &[2],
            &d.join("journal-link-home"),
        )
        .names_any(&[&link, "--out"])
        .absent(state)
        .check(target_untouched(target)),
    );

    // OUT/tenant and OUT/management are links elsewhere.
    for sub in ["tenant", "management"] {
        let out = d.join(format!("{sub}-link-out"));
        std::fs::create_dir(&out).unwrap();
        let target = link_target(&d.join(format!("{sub}-link-target")));
        std::os::unix::fs::symlink(&target, out.join(sub)).unwrap();
        let state = d.join(format!("{sub}-link-state.json"));
        let link = out.join(sub).to_string_lossy().to_string();
        cases.push(
            Case::new(
                format!("apply --out DIR with DIR/{sub} a symlink"),
                apply_args(&state, &da, &out, &[]),
                &[2],
                &d.join(format!("{sub}-link-home")),
            )
            .names_any(&[&link, "--out"])
            .absent(state)
            .check(target_untouched(target)),
        );
        let out = d.join(format!("render-{sub}-link-out"));
        std::fs::create_dir(&out).unwrap();
        let target = link_target(&d.join(format!("render-{sub}-link-target")));
        std::os::unix::fs::symlink(&target, out.join(sub)).unwrap();
        let link = out.join(sub).to_string_lossy().to_string();
        let mut args = os(&["render", "-f"]);
        args.extend([da.clone().into(), "--out".into(), out.into()]);
        cases.push(
            Case::new(
                format!("render --out DIR with DIR/{sub} a symlink"),
                args,
                &[2],
                &d.join(format!("render-{sub}-link-home")),
            )
            .names_any(&[&link, "--out"])
            .check(target_untouched(target)),
        );
    }

    // --out names an existing regular file: refused before the array changes (the
    // pod would be created, then the manifests fail).
    let file = d.join("out-is-a-file");
    std::fs::write(&file, b"not a folder\n").unwrap();
    let state = d.join("out-file-state.json");
    let shown = file.to_string_lossy().to_string();
    cases.push(
        Case::new(
            "apply --out naming a regular file",
            apply_args(&state, &da, &file, &[]),
            &[2],
            &d.join("out-file-home"),
        )
        .names_any(&[&shown, "--out"])
        .absent(state)
        .unchanged(file),
    );

    // render --out naming an existing regular file.
    let file = d.join("render-out-is-a-file");
    std::fs::write(&file, b"not a folder\n").unwrap();
    let shown = file.to_string_lossy().to_string();
    let mut args = os(&["render", "-f"]);
    args.extend([da.clone().into(), "--out".into(), file.clone().into()]);
    cases.push(
        Case::new(
            "render --out naming a regular file",
            args,
            &[2],
            &d.join("render-out-file-home"),
        )
        .names_any(&[&shown, "--out"])
        .unchanged(file),
    );

    // --sim-state in a folder that does not exist: refused before any change.
    let missing = d.join("no-such-folder");
    let state = missing.join("state.json");
    let out = d.join("missing-state-out");
    let shown = state.to_string_lossy().to_string();
    cases.push(
        Case::new(
            "--sim-state in a missing folder",
            apply_args(&state, &da, &out, &[]),
            &[2],
            &d.join("missing-state-home"),
        )
        .names_any(&[&shown, "--sim-state"])
        .absent(missing)
        .absent(out),
    );

    let failed = run_all(&cases, 2);
    finish("symlinks and paths", cases.len(), failed);
}

// ---------------------------------------------------------------------------
// Loose permissions warn
// ---------------------------------------------------------------------------

fn warns(r: &Run) -> bool {
    r.stderr
        .lines()
        .any(|l| l.to_lowercase().contains("warning"))
}

#[test]
fn hostile_loose_permissions() {
    let sim = Sim::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut cases = Vec::new();

    // A --sim-state file holding state, mode 0644 (and 0600 as the control).
    for (mode, should_warn) in [(0o644, true), (0o600, false)] {
        let state = d.join(format!("state-{mode:o}.json"));
        let mut args = os(&["--array", "sim", "--sim-state"]);
        args.push(state.clone().into());
        args.extend(os(&["volume", "create", "v1", "--size", "1GiB"]));
        let r = run_bounded(bounded_command(&args, &d.join("seed-home")));
        assert_eq!(r.code, Some(0), "seeding {}: {}", state.display(), r.stderr);
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(mode)).unwrap();
        let mut args = os(&["--array", "sim", "--sim-state"]);
        args.push(state.clone().into());
        args.extend(os(&["volume", "list"]));
        let shown = state.to_string_lossy().to_string();
        let mut c = Case::new(
            format!("--sim-state mode {mode:o}"),
            args,
            &[0],
            &d.join(format!("state-{mode:o}-home")),
        )
        .unchanged(state);
        if should_warn {
            c = c.names_any(&[&shown, "--sim-state"]).check(|r| {
                if warns(r) {
                    vec![]
                } else {
                    vec!["no warning about a state file readable by others".into()]
                }
            });
        } else {
            c = c.check(|r| {
                if warns(r) {
                    vec!["a warning about a private state file".into()]
                } else {
                    vec![]
                }
            });
        }
        cases.push(c);
    }

    // A 0600 state file in a folder everybody can write to.
    let open = d.join("open-state-folder");
    std::fs::create_dir(&open).unwrap();
    let state = open.join("state.json");
    let mut args = os(&["--array", "sim", "--sim-state"]);
    args.push(state.clone().into());
    args.extend(os(&["volume", "create", "v1", "--size", "1GiB"]));
    let r = run_bounded(bounded_command(&args, &d.join("seed-home")));
    assert_eq!(r.code, Some(0), "seeding {}: {}", state.display(), r.stderr);
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut args = os(&["--array", "sim", "--sim-state"]);
    args.push(state.clone().into());
    args.extend(os(&["volume", "list"]));
    let shown = [
        state.to_string_lossy().to_string(),
        open.to_string_lossy().to_string(),
    ];
    cases.push(
        Case::new(
            "--sim-state 0600 in a 777 folder",
            args,
            &[0],
            &d.join("open-state-home"),
        )
        .unchanged(state)
        .names_any(&[&shown[0], &shown[1], "--sim-state"])
        .check(|r| {
            if warns(r) {
                vec![]
            } else {
                vec!["no warning about a state file in a folder anyone can write".into()]
            }
        }),
    );

    // A 0600 token file in a folder everybody can write to (0777): anyone can
    // replace it (and 0700 as the control).
    for (mode, should_warn) in [(0o777, true), (0o700, false)] {
        let folder = d.join(format!("tokens-{mode:o}"));
        std::fs::create_dir(&folder).unwrap();
        let tok = private_file(&folder.join("tok"), format!("{}\n", sim.token()).as_bytes());
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode)).unwrap();
        let mut args = os(&["--array", &sim.url, "--ca-file"]);
        args.push(sim.cert.clone().into());
        args.push("--api-token-file".into());
        args.push(tok.clone().into());
        args.extend(os(&["volume", "list"]));
        let shown = [
            tok.to_string_lossy().to_string(),
            folder.to_string_lossy().to_string(),
        ];
        let mut c = Case::new(
            format!("token file 0600 in a {mode:o} folder"),
            args,
            &[0],
            &d.join(format!("tokens-{mode:o}-home")),
        );
        if should_warn {
            c = c.names_any(&[&shown[0], &shown[1]]).check(|r| {
                if warns(r) {
                    vec![]
                } else {
                    vec!["no warning about a token file in a folder anyone can write".into()]
                }
            });
        } else {
            c = c.check(|r| {
                if warns(r) {
                    vec!["a warning about a token file in a private folder".into()]
                } else {
                    vec![]
                }
            });
        }
        cases.push(c);
    }
    let failed = run_all(&cases, 2);
    finish("loose permissions", cases.len(), failed);
}

// ---------------------------------------------------------------------------
// Deeply nested filters
// ---------------------------------------------------------------------------

/// Filters nested deeper than any parser should recurse: balanced (valid but for
/// the depth) and only opening.
fn nested_filters() -> Vec<(&'static str, String)> {
    let leaf = "name='x'";
    vec![
        (
            "(x5000",
            format!("{}{leaf}{}", "(".repeat(5000), ")".repeat(5000)),
        ),
        (
            "not(x3000",
            format!("{}{leaf}{}", "not(".repeat(3000), ")".repeat(3000)),
        ),
        (
            "(x20000",
            format!("{}{leaf}{}", "(".repeat(20000), ")".repeat(20000)),
        ),
        ("(x20000 unclosed", "(".repeat(20000)),
    ]
}

/// Percent-encodes what a query value cannot carry as is (parentheses can).
fn query_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'(' | b')' | b'-' | b'_' | b'.' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `curl` against the simulator: (HTTP status, body, response headers).
fn curl(sim: &Sim, extra: &[&str], url: &str) -> (String, String) {
    let out = Command::new("curl")
        .args(["-sS", "-g", "--max-time", "20", "--cacert"])
        .arg(&sim.cert)
        .args(["-w", "\n%{http_code}"])
        .args(extra)
        .arg(url)
        .output()
        .expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.trim().to_string(), body.to_string())
}

#[test]
fn hostile_nested_filters() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut cases = Vec::new();
    let mut failed = Vec::new();

    // The embedded simulator: parsed in the pxfa process itself.
    let state = d.join("state.json");
    let mut args = os(&["--array", "sim", "--sim-state"]);
    args.push(state.clone().into());
    args.extend(os(&["volume", "create", "x", "--size", "1GiB"]));
    let r = run_bounded(bounded_command(&args, &d.join("seed-home")));
    assert_eq!(r.code, Some(0), "seeding: {}", r.stderr);
    let filters = nested_filters();
    for (name, filter) in &filters {
        let mut args = os(&["--array", "sim", "--sim-state"]);
        args.push(state.clone().into());
        args.extend(os(&["volume", "list", "--filter", filter]));
        // The array answers 400, which docs/cli.md maps to 1 ("the array
        // refused"); 2 if pxfa refuses it before sending.
        cases.push(
            Case::new(
                format!("--array sim volume list --filter {name}"),
                args,
                &[1, 2],
                &d.join(format!("embedded-{}-home", file_stem(name))),
            )
            .names_any(&["filter"])
            .unchanged(state.clone()),
        );
    }

    // The HTTPS simulator: the same filters in raw requests, then through pxfa; the
    // server must answer 400 and still serve afterwards.
    let sim = Sim::start();
    let versions: Value =
        serde_json::from_str(&curl(&sim, &[], &format!("{}/api/api_version", sim.url)).1)
            .expect("the simulator's api_version");
    let version = versions["version"]
        .as_array()
        .and_then(|v| v.last())
        .and_then(Value::as_str)
        .expect("a REST version")
        .to_string();
    let api = format!("{}/api/{version}", sim.url);
    let hdr = d.join("login-headers");
    let (code, _) = curl(
        &sim,
        &[
            "-X",
            "POST",
            "-H",
            &format!("api-token: {}", sim.token()),
            "-D",
            hdr.to_str().unwrap(),
        ],
        &format!("{api}/login"),
    );
    assert_eq!(code, "200", "login to the simulator");
    let headers = std::fs::read_to_string(&hdr).unwrap();
    let session = headers
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("x-auth-token"))
                .map(|(_, v)| v.trim().to_string())
        })
        .expect("x-auth-token");
    let auth = format!("x-auth-token: {session}");
    for (name, filter) in &filters {
        let url = format!("{api}/volumes?filter={}", query_encode(filter));
        let (code, body) = curl(&sim, &["-H", &auth], &url);
        if code != "400" {
            failed.push(format!(
                "[sim serve: raw GET /volumes?filter={name}] HTTP {code}, expected 400\n    body: {:?}",
                body.chars().take(300).collect::<String>()
            ));
        }
        let (code, _) = curl(&sim, &["-H", &auth], &format!("{api}/volumes"));
        if code != "200" {
            failed.push(format!(
                "[sim serve: GET /volumes after filter {name}] HTTP {code}: the simulator no longer serves"
            ));
        }
        let mut args = os(&["--array", &sim.url, "--ca-file"]);
        args.push(sim.cert.clone().into());
        args.push("--api-token-file".into());
        args.push(sim.token_file.clone().into());
        args.extend(os(&[
            "--retries",
            "0",
            "volume",
            "list",
            "--filter",
            filter,
        ]));
        cases.push(
            Case::new(
                format!("sim serve: volume list --filter {name}"),
                args,
                &[1, 2],
                &d.join(format!("served-{}-home", file_stem(name))),
            )
            .names_any(&["filter"]),
        );
    }
    failed.extend(run_all(&cases, 2));
    // Alive at the end.
    let mut args = os(&["--array", &sim.url, "--ca-file"]);
    args.push(sim.cert.clone().into());
    args.push("--api-token-file".into());
    args.push(sim.token_file.clone().into());
    args.extend(os(&["--retries", "0", "volume", "list"]));
    let alive = Case::new(
        "sim serve alive after the filters",
        args,
        &[0],
        &d.join("alive"),
    );
    failed.extend(run_case(&alive));
    failed.sort();
    finish(
        "nested filters",
        cases.len() + filters.len() * 2 + 1,
        failed,
    );
}

// ---------------------------------------------------------------------------
// Two writers on one --sim-state file
// ---------------------------------------------------------------------------

#[test]
fn hostile_concurrent_sim_state_writers() {
    const ROUNDS: usize = 8;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let state = d.join("state.json");
    let mut failed = Vec::new();
    // Volumes whose creation a process reported (exit 0).
    let mut reported: Vec<(String, String)> = Vec::new();
    for round in 0..ROUNDS {
        let runs: Vec<(String, Run, String)> = std::thread::scope(|s| {
            let handles: Vec<_> = ["a", "b"]
                .into_iter()
                .map(|who| {
                    let state = &state;
                    s.spawn(move || {
                        let vol = format!("race{round}{who}");
                        // Latency in the embedded array widens the window between
                        // loading the state file and saving it.
                        let mut args = os(&["--array", "sim", "--sim-latency", "100ms"]);
                        args.push("--sim-state".into());
                        args.push(state.into());
                        args.extend(os(&["volume", "create", &vol, "--size", "1GiB"]));
                        let shown = format!(
                            "pxfa {}",
                            args.iter()
                                .map(|a| show_arg(a))
                                .collect::<Vec<_>>()
                                .join(" ")
                        );
                        let home = d.join(format!("home-{round}{who}"));
                        (vol, run_bounded(bounded_command(&args, &home)), shown)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut ok = 0;
        for (vol, r, shown) in runs {
            if r.code == Some(0) {
                ok += 1;
                reported.push((vol, shown));
            } else if r.timed_out || r.signal.is_some() || !r.stderr.to_lowercase().contains("lock")
            {
                failed.push(format!(
                    "[round {round}: {vol}] {shown}\n    {} without a message about the state file's lock\n    stderr:\n{}",
                    r.exit(),
                    first_lines(&r.stderr, 8)
                ));
            }
        }
        if ok == 0 {
            failed.push(format!(
                "[round {round}] neither writer succeeded (a lock must let one through)"
            ));
        }
    }
    let mut args = os(&["--array", "sim", "--sim-state"]);
    args.push(state.clone().into());
    args.extend(os(&["volume", "list", "-o", "json"]));
    let r = run_bounded(bounded_command(&args, &d.join("list-home")));
    assert_eq!(r.code, Some(0), "volume list: {}", r.stderr);
    let listed: Value = serde_json::from_str(&r.stdout).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    for (vol, shown) in &reported {
        if !names.contains(&vol.as_str()) {
            failed.push(format!(
                "[lost write: {vol}] {shown}\n    exited 0, but {vol} is not in the state file (lost to the other writer's save)"
            ));
        }
    }
    failed.sort();
    finish(
        "concurrent --sim-state writers",
        ROUNDS * 2 + reported.len(),
        failed,
    );
}
