//! No import circles in any crate of the workspace: each crate's sources, read as
//! text, give its module graph (an edge for every `use crate::`/`super::` path and
//! every inline `crate::`/`super::` path, followed through re-exports to the module
//! that defines the item), and the graph may have no cycle.
//!
//! A module's `mod` lines are no edges; a parent's `pub use child::X` is one (the
//! parent depends on the child). Across the workspace a child's use of an item
//! *defined* in one of its ancestors is no edge either: a child is part of its
//! parent (Rust gives it the parent's private items; a `#[macro_export]` macro lives
//! at the crate root whatever defines it), so a circle is one between modules
//! neither of which contains the other. `plan/` keeps the stricter rule it has
//! always met: there, a child that imports an item defined in its parent closes a
//! circle, while one that imports an item the parent only re-exports depends on
//! the defining sibling instead.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path below the crate root (`["plan", "diff"]`; the root is empty).
type Module = Vec<String>;

/// The `src` directory of every crate of the workspace, by the crate's directory name.
fn crates() -> BTreeMap<String, PathBuf> {
    let all = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_dir(&all)
        .expect("crates/ is readable")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.join("Cargo.toml").is_file() && p.join("src").is_dir())
        .map(|p| {
            let name = p.file_name().expect("a name").to_string_lossy().to_string();
            (name, p.join("src"))
        })
        .collect()
}

/// Every non-test module of the crate under `root` (its `src`) with its code
/// (comments and inline test modules left out).
fn sources(root: &Path) -> BTreeMap<Module, String> {
    let mut files = Vec::new();
    walk(root, &mut files);
    let mut all: BTreeMap<Module, String> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("a source file is readable");
            (module_of(f.strip_prefix(root).expect("under src")), text)
        })
        .collect();
    let test_only: Vec<Module> = all
        .iter()
        .flat_map(|(m, text)| {
            test_modules(text).into_iter().map(move |name| {
                let mut child = m.clone();
                child.push(name);
                child
            })
        })
        .collect();
    all.retain(|m, _| !test_only.iter().any(|t| m.starts_with(t)));
    all.into_iter().map(|(m, text)| (m, code(&text))).collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `lib.rs` (or a binary's `main.rs`) is the root, `a/mod.rs` and `a.rs` are `a`,
/// `a/b.rs` is `a::b`.
fn module_of(rel: &Path) -> Module {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The children declared `#[cfg(test)] mod name;`.
fn test_modules(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|w| w[0] == "#[cfg(test)]")
        .filter_map(|w| w[1].strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

/// The code without comment lines, and without an inline `#[cfg(test)] mod` (by
/// convention the last item of a file).
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|n| n.trim().starts_with("mod ") && n.trim().ends_with('{'))
        {
            break;
        }
        if !t.starts_with("//") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The `use` declarations of `code`, each as its full paths (`use a::{b, c::d}` is
/// `a::b` and `a::c::d`; `self` in braces is the prefix; `as` renames are kept as
/// `(path, name)`), and the code left after removing them.
fn uses(code: &str) -> (Vec<(Vec<String>, String)>, String) {
    let mut paths = Vec::new();
    let mut rest = String::new();
    let mut tail = code;
    while let Some((at, end)) = find_use(tail) {
        rest.push_str(&tail[..at]);
        let body_start = at + tail[at..].find("use ").expect("found") + 4;
        let tree: String = tail[body_start..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        expand(&tree, &mut Vec::new(), &mut paths);
        tail = &tail[end + 1..];
    }
    rest.push_str(tail);
    (paths, rest)
}

/// Where the next `use` item starts (at the start of a line, maybe `pub`) and where
/// its `;` is; a line that only looks like one (text in a string) is skipped.
fn find_use(code: &str) -> Option<(usize, usize)> {
    let mut offset = 0;
    for line in code.split_inclusive('\n') {
        let t = line.trim_start();
        let body = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub(super) "))
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        if let Some(tree) = body.strip_prefix("use ") {
            let start = offset + line.len() - tree.len();
            if let Some(len) = code[start..].find(';')
                && code[start..start + len]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c.is_whitespace() || "_:{},*".contains(c))
            {
                return Some((offset, start + len));
            }
        }
        offset += line.len();
    }
    None
}

/// Expands one use tree (`a::{b, c::{d, self}}`) under `prefix`.
fn expand(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let tree = tree.trim();
    if tree.is_empty() {
        return;
    }
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = segments(&tree[..open]);
        let inner = &tree[open + 1..tree.rfind('}').expect("braces close")];
        let depth = prefix.len();
        prefix.extend(head);
        for part in split_top(inner) {
            expand(part, prefix, out);
        }
        prefix.truncate(depth);
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p, Some(a.trim().to_string())),
        None => (tree, None),
    };
    let mut full = prefix.clone();
    for s in segments(path) {
        if s != "self" {
            full.push(s);
        }
    }
    let name = alias.unwrap_or_else(|| full.last().cloned().unwrap_or_default());
    if name != "*" && name != "_" {
        out.push((full, name));
    }
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// `inner` split at the commas outside nested braces.
fn split_top(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
}

/// Inline `crate::a::b` and `super::a` paths in code that is not a `use`.
fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for head in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(head) {
            let start = from + at;
            from = start + head.len();
            let before = start.checked_sub(1).map(|i| bytes[i]);
            if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
                continue;
            }
            let end = code[start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| start + e);
            out.push(segments(&code[start..end]));
        }
    }
    out
}

/// The module graph: for every module, the modules its paths resolve to.
struct Graph {
    edges: BTreeMap<Module, BTreeSet<Module>>,
}

impl Graph {
    fn of_crate(src: &Path) -> Graph {
        let sources = sources(src);
        let modules: BTreeSet<Module> = sources.keys().cloned().collect();
        let mut imports: BTreeMap<Module, Vec<(Vec<String>, String)>> = BTreeMap::new();
        let mut inline: BTreeMap<Module, Vec<Vec<String>>> = BTreeMap::new();
        for (m, code) in &sources {
            let (paths, rest) = uses(code);
            imports.insert(m.clone(), paths);
            inline.insert(m.clone(), inline_paths(&rest));
        }
        let names: BTreeMap<(Module, String), Vec<String>> = imports
            .iter()
            .flat_map(|(m, list)| {
                list.iter()
                    .map(move |(path, name)| ((m.clone(), name.clone()), path.clone()))
            })
            .collect();
        let resolver = Resolver {
            modules: &modules,
            names: &names,
        };
        let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for m in &modules {
            let paths = imports[m]
                .iter()
                .map(|(p, _)| p.clone())
                .chain(inline[m].iter().cloned());
            let targets = edges.entry(m.clone()).or_default();
            for p in paths {
                if let Some(t) = resolver.resolve(m, &p, 0)
                    && &t != m
                {
                    targets.insert(t);
                }
            }
        }
        Graph { edges }
    }

    /// The graph without the edges from a module to one of its ancestors.
    fn without_upward_edges(&self) -> Graph {
        let edges = self
            .edges
            .iter()
            .map(|(m, targets)| {
                let down = targets.iter().filter(|t| !m.starts_with(t)).cloned();
                (m.clone(), down.collect())
            })
            .collect();
        Graph { edges }
    }

    /// The strongly connected components with more than one module (Tarjan).
    fn cycles(&self) -> Vec<Vec<Module>> {
        let mut t = Tarjan {
            graph: self,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            next: 0,
            out: Vec::new(),
        };
        for m in self.edges.keys() {
            if !t.index.contains_key(m) {
                t.visit(m);
            }
        }
        t.out
    }
}

struct Resolver<'a> {
    modules: &'a BTreeSet<Module>,
    /// What each module imports, by the name it is known under there.
    names: &'a BTreeMap<(Module, String), Vec<String>>,
}

impl Resolver<'_> {
    /// The module `path`, written in `from`, names (through re-exports), if it is
    /// in this crate.
    fn resolve(&self, from: &Module, path: &[String], depth: usize) -> Option<Module> {
        let (mut base, rest) = self.start(from, path)?;
        let mut rest = rest.iter();
        let mut item = None;
        for seg in rest.by_ref() {
            let mut child = base.clone();
            child.push(seg.clone());
            if self.modules.contains(&child) {
                base = child;
            } else {
                item = Some(seg.clone());
                break;
            }
        }
        // An item the module only imports is the importing path's module.
        if let Some(item) = item
            && depth < 8
            && let Some(target) = self.names.get(&(base.clone(), item))
            && let Some(m) = self.resolve(&base, target, depth + 1)
        {
            return Some(m);
        }
        Some(base)
    }

    /// Where `path` starts (`crate`, `super`, `self`, or a child of `from`) and the
    /// segments after that; `None` for other crates.
    fn start<'p>(&self, from: &Module, path: &'p [String]) -> Option<(Module, &'p [String])> {
        let first = path.first()?;
        match first.as_str() {
            "crate" => Some((Vec::new(), &path[1..])),
            "self" => Some((from.clone(), &path[1..])),
            "super" => {
                let ups = path.iter().take_while(|s| *s == "super").count();
                let base = from[..from.len().checked_sub(ups)?].to_vec();
                Some((base, &path[ups..]))
            }
            child => {
                let mut m = from.clone();
                m.push(child.to_string());
                self.modules.contains(&m).then_some((m, &path[1..]))
            }
        }
    }
}

struct Tarjan<'a> {
    graph: &'a Graph,
    index: BTreeMap<Module, usize>,
    low: BTreeMap<Module, usize>,
    stack: Vec<Module>,
    on_stack: BTreeSet<Module>,
    next: usize,
    out: Vec<Vec<Module>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, m: &Module) {
        self.index.insert(m.clone(), self.next);
        self.low.insert(m.clone(), self.next);
        self.next += 1;
        self.stack.push(m.clone());
        self.on_stack.insert(m.clone());
        for t in self.graph.edges.get(m).into_iter().flatten() {
            if !self.index.contains_key(t) {
                self.visit(t);
                let low = self.low[m].min(self.low[t]);
                self.low.insert(m.clone(), low);
            } else if self.on_stack.contains(t) {
                let low = self.low[m].min(self.index[t]);
                self.low.insert(m.clone(), low);
            }
        }
        if self.low[m] == self.index[m] {
            let mut scc = Vec::new();
            while let Some(top) = self.stack.pop() {
                self.on_stack.remove(&top);
                let done = &top == m;
                scc.push(top);
                if done {
                    break;
                }
            }
            if scc.len() > 1 {
                self.out.push(scc);
            }
        }
    }
}

fn show(cycle: &[Module]) -> String {
    cycle
        .iter()
        .map(|m| m.join("::"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn no_crate_has_an_import_circle() {
    let crates = crates();
    assert!(
        crates.len() >= 8,
        "the workspace's crates were found: {:?}",
        crates.keys().collect::<Vec<_>>()
    );
    let mut circles = Vec::new();
    for (name, src) in &crates {
        let graph = Graph::of_crate(src);
        assert!(
            graph.edges.len() > 2,
            "{name}'s sources were read: {:?}",
            graph.edges.keys().collect::<Vec<_>>()
        );
        let cycles = graph.without_upward_edges().cycles();
        circles.extend(cycles.iter().map(|c| format!("{name}: {}", show(c))));
    }
    assert!(circles.is_empty(), "import circles: {circles:#?}");
}

#[test]
fn plan_has_no_import_circles() {
    let graph = Graph::of_crate(&crates()["px-topology"]);
    let plan = vec!["plan".to_string()];
    assert!(
        graph.edges.keys().filter(|m| m.starts_with(&plan)).count() > 5,
        "the sources were read: {:?}",
        graph.edges.keys().collect::<Vec<_>>()
    );
    let circles: Vec<String> = graph
        .cycles()
        .iter()
        .filter(|c| c.iter().any(|m| m.starts_with(&plan)))
        .map(|c| show(c))
        .collect();
    assert!(
        circles.is_empty(),
        "import circles through plan: {circles:#?}"
    );
}

#[test]
fn the_graph_sees_a_circle_and_follows_re_exports() {
    // `a` re-exports `b::X` and uses `c::Y`; `b` imports `super::Z`, defined in `a`:
    // a circle `a`-`b`. `c` imports `super::X`, which `a` only re-exports from `b`:
    // an edge `c` -> `b`, no circle with `a`.
    let modules: BTreeSet<Module> = [vec![], vec!["a"], vec!["a", "b"], vec!["a", "c"]]
        .into_iter()
        .map(|m| m.into_iter().map(str::to_string).collect())
        .collect();
    let a: Module = vec!["a".into()];
    let b: Module = vec!["a".into(), "b".into()];
    let c: Module = vec!["a".into(), "c".into()];
    let (a_uses, _) = uses("pub use b::X;\nuse c::{self, Y};\n");
    let names: BTreeMap<(Module, String), Vec<String>> = a_uses
        .iter()
        .map(|(p, n)| ((a.clone(), n.clone()), p.clone()))
        .collect();
    let r = Resolver {
        modules: &modules,
        names: &names,
    };
    let path = |p: &str| segments(p);
    assert_eq!(r.resolve(&a, &path("b::X"), 0), Some(b.clone()));
    assert_eq!(r.resolve(&b, &path("super::Z"), 0), Some(a.clone()));
    assert_eq!(r.resolve(&c, &path("super::X"), 0), Some(b.clone()));
    assert_eq!(r.resolve(&c, &path("crate::a::b::W"), 0), Some(b.clone()));
    assert_eq!(r.resolve(&c, &path("flasharray::Size"), 0), None);
    let graph = Graph {
        edges: [
            (a.clone(), BTreeSet::from([b.clone(), c.clone()])),
            (b.clone(), BTreeSet::from([a.clone()])),
            (c.clone(), BTreeSet::from([b.clone()])),
        ]
        .into_iter()
        .collect(),
    };
    let cycles = graph.cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].len(), 3, "a, b and c (c -> b -> a -> c)");
    // Without the children's edges up to `a`, `a` -> `c` -> `b` is no circle.
    assert!(graph.without_upward_edges().cycles().is_empty());
    let siblings = Graph {
        edges: [
            (b.clone(), BTreeSet::from([c.clone()])),
            (c.clone(), BTreeSet::from([b.clone()])),
        ]
        .into_iter()
        .collect(),
    };
    assert_eq!(siblings.without_upward_edges().cycles().len(), 1, "b <-> c");
    let (inline_free, rest) = uses("use crate::x::{y as z, w::*};\nfn f() { super::q::r(); }\n");
    assert_eq!(
        inline_free,
        vec![(path("crate::x::y"), "z".to_string())],
        "globs name nothing"
    );
    assert_eq!(inline_paths(&rest), vec![path("super::q::r")]);
}

/// One module file convention in the workspace: a module with children is
/// `name/mod.rs`, never `name.rs` beside a `name/` folder (`crates/api-surface`'s
/// fixtures keep both on purpose: they are what its reader must understand).
#[test]
fn modules_with_children_are_mod_rs() {
    let all = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&all).expect("crates/ is readable") {
        let krate = krate.expect("a directory entry").path();
        for dir in ["src", "tests", "benches", "examples"] {
            if krate.join(dir).is_dir() {
                walk(&krate.join(dir), &mut files);
            }
        }
    }
    assert!(files.len() > 100, "the sources were read: {}", files.len());
    let beside: Vec<String> = files
        .iter()
        .filter(|f| f.with_extension("").is_dir())
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        beside.is_empty(),
        "name.rs beside a name/ folder (move it to name/mod.rs): {beside:#?}"
    );
}
