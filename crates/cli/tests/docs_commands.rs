//! The command lines of docs/cli.md and README.md, run through the binary.
//!
//! Every fenced `sh` block with a line starting `pxfa ` (or the README's `pxsim `
//! alias) is one of three things:
//!
//! * commands: the block runs as one bash script in a scratch folder (HOME, so the
//!   pxfa config file, /tmp and the working folder are the test's; `examples/` is
//!   there; `PUREFA_URL=sim`, so the embedded simulated array answers), and each `pxfa`/`pxsim` line must exit 0,
//!   or N when its comment says `exit N`;
//! * synopses: a line with placeholders (`SPEC`, `[--out DIR]`, `<COMMAND>`, `...`)
//!   is not run; its command path must exist (`pxfa PATH --help` exits 0);
//! * not run: blocks that need a cluster, a real array or a shell's own folders carry
//!   `no-run` in their info string (```` ```sh no-run ````), and [`NOT_RUN`] lists them:
//!   a block marked but not listed, or listed but not marked, fails the test.
//!
//! Where the docs show output, the block says whose: ```` ```json shape-of pxfa ... ````
//! (the JSON's keys must be the command's, recursively) or ```` ```text output-of
//! pxfa ... ```` (each shown line must be one of the command's, `...` matching
//! anything).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The blocks not run, by document and first command line, with why.
const NOT_RUN: &[(&str, &str, &str)] = &[
    ("README.md", "PXFA_GIT_COMMIT=", "installs with cargo"),
    (
        "README.md",
        "pxfa completions bash",
        "writes into your shell's folders",
    ),
    ("README.md", "export PUREFA_URL=fa1-mgmt", "a real array"),
    (
        "README.md",
        "pxfa plan -f SPEC --kubeconfig",
        "needs clusters",
    ),
    ("README.md", "pxfa crd | oc apply", "needs a cluster"),
    (
        "docs/cli.md",
        "pxfa sim serve --listen",
        "a server in the background",
    ),
    (
        "docs/cli.md",
        "pxfa completions bash",
        "writes into your shell's folders",
    ),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fenced block: the line it starts on, its info string and its lines.
struct Block {
    line: usize,
    info: String,
    body: Vec<String>,
}

fn blocks(doc: &str) -> Vec<Block> {
    let text = std::fs::read_to_string(root().join(doc)).unwrap();
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, l) in text.lines().enumerate() {
        if let Some(rest) = l.trim_start().strip_prefix("```") {
            match open.take() {
                Some(b) => out.push(b),
                None => {
                    open = Some(Block {
                        line: i + 1,
                        info: rest.trim().to_string(),
                        body: Vec::new(),
                    });
                }
            }
        } else if let Some(b) = open.as_mut() {
            b.body.push(l.to_string());
        }
    }
    out
}

fn is_command(line: &str) -> bool {
    let l = line.trim_start();
    l.starts_with("pxfa ") || l.starts_with("pxsim ")
}

/// The line without its `# comment`.
fn code(line: &str) -> &str {
    match line.find(" #") {
        Some(i) => line[..i].trim_end(),
        None => line.trim_end(),
    }
}

/// A synopsis line: it has placeholders (`SPEC`, `NAME...`, `[--x]`, `<COMMAND>`).
fn is_synopsis(line: &str) -> bool {
    let c = code(line);
    c.contains('[')
        || c.contains('<')
        || c.contains("...")
        || c.split_whitespace().skip(1).any(|w| {
            let w = w.trim_matches(|c: char| "()|,".contains(c));
            w.len() >= 2
                && w.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                && !w.starts_with("PUREFA")
        })
}

/// The command path of a synopsis: the words before the first option or
/// placeholder (`pxfa volume list [NAME...]` -> `volume list`).
fn command_path(line: &str) -> Vec<String> {
    code(line)
        .split_whitespace()
        .skip(1)
        .take_while(|w| {
            w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-')
        })
        .map(str::to_string)
        .collect()
}

fn pxfa() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pxfa"));
    c.env_remove("PUREFA_API")
        .env_remove("KUBECONFIG")
        .env_remove("PXFA_PROFILE")
        .env("PXFA_CONFIG", "/nonexistent/pxfa-config.yaml")
        .env("NO_COLOR", "1")
        .env("PUREFA_URL", "sim");
    c
}

/// The expected exit code of a command line: `exit N` in its comment, else 0.
fn expected_code(line: &str) -> i32 {
    line.split_once(" #")
        .and_then(|(_, comment)| {
            let after = comment.split("exit ").nth(1)?;
            after
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// The block as a bash script that checks each command's exit code.
fn script(b: &Block, scratch: &Path) -> String {
    let tmp = scratch.join("tmp");
    let mut s = String::from("shopt -s expand_aliases\n");
    for (i, line) in b.body.iter().enumerate() {
        let line = line.replace("/tmp/", &format!("{}/", tmp.display()));
        s.push_str(&line);
        s.push('\n');
        if is_command(&line) {
            let want = expected_code(&line);
            s.push_str(&format!(
                "rc=$?; if [ $rc -ne {want} ]; then echo \"docs line {}: exit $rc, the docs expect {want}\" >&2; exit 99; fi\n",
                b.line + 1 + i
            ));
        }
    }
    s
}

/// A scratch folder with `examples/`, HOME and /tmp of its own.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root().join("examples"), dir.path().join("examples")).unwrap();
    std::fs::create_dir(dir.path().join("tmp")).unwrap();
    dir
}

/// Runs the command blocks of `doc` in order in one scratch folder (the README's
/// alias and state file carry from block to block, as for a reader).
fn run_doc(doc: &str) {
    let dir = scratch();
    let bin = Path::new(env!("CARGO_BIN_EXE_pxfa")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut prelude = String::new();
    let mut listed = 0;
    for b in blocks(doc) {
        let commands: Vec<&String> = b.body.iter().filter(|l| is_command(l)).collect();
        let defines_alias = b.body.iter().any(|l| l.starts_with("alias "));
        if commands.is_empty() && !defines_alias {
            continue;
        }
        let first = b
            .body
            .iter()
            .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .unwrap();
        let marked = b.info.split_whitespace().any(|w| w == "no-run");
        let entry = NOT_RUN
            .iter()
            .find(|(d, start, _)| *d == doc && first.starts_with(start));
        assert_eq!(
            marked,
            entry.is_some(),
            "{doc}:{}: `no-run` and NOT_RUN disagree on the block starting {first:?}",
            b.line
        );
        if marked {
            listed += 1;
            continue;
        }
        if defines_alias {
            let tmp = format!("{}/", dir.path().join("tmp").display());
            prelude.push_str(&b.body.join("\n").replace("/tmp/", &tmp));
            prelude.push('\n');
        }
        let synopses: Vec<&&String> = commands.iter().filter(|l| is_synopsis(l)).collect();
        for s in &synopses {
            let path = command_path(s);
            let out = pxfa().args(&path).arg("--help").output().unwrap();
            assert!(
                out.status.success(),
                "{doc}:{}: `pxfa {} --help` fails: the synopsis {s:?} names no command",
                b.line,
                path.join(" ")
            );
        }
        if synopses.len() == commands.len() {
            continue;
        }
        assert!(
            synopses.is_empty(),
            "{doc}:{}: a block mixes synopses and commands",
            b.line
        );
        let text = format!("{prelude}{}", script(&b, dir.path()));
        let out = Command::new("bash")
            .arg("-c")
            .arg(&text)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("HOME", dir.path())
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env_remove("PUREFA_API")
            .env_remove("KUBECONFIG")
            // The pxfa config file is the scratch HOME's (~/.config/pxfa/config.yaml).
            .env_remove("PXFA_PROFILE")
            .env_remove("PXFA_CONFIG")
            .env_remove("XDG_CONFIG_HOME")
            .env("NO_COLOR", "1")
            .env("PUREFA_URL", "sim")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{doc}:{}: the block failed:\n{text}\nstderr:\n{}",
            b.line,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        listed,
        NOT_RUN.iter().filter(|(d, _, _)| *d == doc).count(),
        "{doc}: a NOT_RUN entry matches no block"
    );
}

#[test]
fn cli_md_commands_run_as_documented() {
    run_doc("docs/cli.md");
}

#[test]
fn readme_commands_run_as_documented() {
    run_doc("README.md");
}

/// The keys of a JSON value, recursively; a list's elements share one path (`[]`).
fn shape(v: &serde_json::Value, at: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}.{k}");
                if !out.contains(&p) {
                    out.push(p.clone());
                }
                shape(x, &p, out);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                shape(x, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

/// Runs a documented command line (in the repository root, on the embedded array).
fn output_of(command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "pxfa", "{command}");
    let out = pxfa()
        .args(&words[1..])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn documented_output_is_the_binarys() {
    let mut compared = 0;
    for doc in ["docs/cli.md", "README.md"] {
        for b in blocks(doc) {
            if let Some(command) = b.info.strip_prefix("json shape-of ") {
                let shown: serde_json::Value = serde_json::from_str(&b.body.join("\n"))
                    .unwrap_or_else(|e| panic!("{doc}:{}: not JSON: {e}", b.line));
                let real: serde_json::Value = serde_json::from_str(&output_of(command)).unwrap();
                let (mut want, mut got) = (Vec::new(), Vec::new());
                shape(&shown, "", &mut want);
                shape(&real, "", &mut got);
                want.sort();
                got.sort();
                // Every key the docs show exists, and the objects the docs show are
                // whole (`summary`, a change), but for the document itself and a
                // change's `details`, whose keys depend on the change.
                for k in &want {
                    assert!(
                        got.contains(k),
                        "{doc}:{}: {k} is not in `{command}`",
                        b.line
                    );
                }
                for k in &got {
                    let parent = k.rsplit_once('.').map_or("", |(p, _)| p);
                    if !parent.is_empty()
                        && !parent.ends_with(".details")
                        && want.iter().any(|w| w == parent)
                    {
                        assert!(
                            want.contains(k),
                            "{doc}:{}: `{command}` prints {k}, the docs do not show it",
                            b.line
                        );
                    }
                }
                compared += 1;
            } else if let Some(command) = b.info.strip_prefix("text output-of ") {
                let real = output_of(command);
                let lines: Vec<&str> = real.lines().map(str::trim_end).collect();
                for shown in b
                    .body
                    .iter()
                    .map(|l| l.trim_end())
                    .filter(|l| !l.is_empty())
                {
                    let found = lines.iter().any(|l| matches_shown(shown, l));
                    assert!(
                        found,
                        "{doc}:{}: `{command}` prints no line like {shown:?}:\n{real}",
                        b.line
                    );
                }
                compared += 1;
            }
        }
    }
    assert!(compared >= 2, "only {compared} output block(s) compared");
}

/// A shown line against a printed one: the same text, `...` matching anything.
fn matches_shown(shown: &str, line: &str) -> bool {
    let parts: Vec<&str> = shown.split("...").collect();
    let mut rest = line;
    for (i, p) in parts.iter().enumerate() {
        match rest.find(p) {
            Some(at) if i > 0 || at == 0 => rest = &rest[at + p.len()..],
            _ => return false,
        }
    }
    parts.len() > 1 || rest.is_empty()
}
