//! The FlashArray `filter` query language, evaluated against a model serialized to
//! JSON, so that the mock and the simulator answer filters the way an array does.
//!
//! Grammar (case-insensitive keywords):
//!
//! ```text
//! expr    := and ("or" and)*
//! and     := unary ("and" unary)*
//! unary   := "not" "(" expr ")" | "(" expr ")" | call | test
//! call    := "contains" "(" path "," value ")"
//! test    := path [op (value | "(" value ("," value)* ")")]
//! op      := "=" | "!=" | "<" | "<=" | ">" | ">="
//! path    := ident ("." ident | "[any]")*
//! value   := 'quoted, \ escapes, * wildcard' | "double quoted" | number | true | false | null | bare-word
//! ```
//!
//! Semantics chosen where the array's are not documented (tagged `[M]` in the reference):
//! string comparison ignores ASCII case (names are case-insensitive on the array);
//! a path that reaches a list matches when any element does; a bare path tests that
//! the field exists and is neither `null`, an empty list, nor a reference whose
//! fields are all `null`; `!=` is the negation of `=`; `tags(...)` is not supported
//! because tags are not part of the objects' JSON.

use std::cmp::Ordering;

use serde_json::Value;

/// A parsed filter expression.
///
/// Parsing refuses filters over [`Filter::MAX_BYTES`], nested deeper than
/// [`Filter::MAX_DEPTH`] or with more than [`Filter::MAX_TERMS`] terms, so that no
/// filter a client sends can exhaust the stack: the parser, [`Filter::matches`],
/// `Debug`, `Clone` and `Drop` recurse once per nesting level, never once per term
/// (`a and b and c ...` is one flat list).
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    root: Expr,
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    /// Every operand holds (two or more, in the order written).
    And(Vec<Expr>),
    /// Some operand holds (two or more).
    Or(Vec<Expr>),
    Not(Box<Expr>),
    Exists(Path),
    Cmp(Path, Op, Vec<Lit>),
    Contains(Path, Lit),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Field(String),
    Any,
}

type Path = Vec<Seg>;

/// One piece of a quoted string: literal text or a `*` wildcard.
#[derive(Debug, Clone, PartialEq)]
enum Pat {
    Text(String),
    Star,
}

#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Str(Vec<Pat>),
    Num(f64),
    Bool(bool),
    Null,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(Vec<Pat>),
    Num(f64),
    Op(Op),
    LParen,
    RParen,
    Comma,
    Dot,
    AnyIndex,
}

fn lex(input: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = input.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | '\r' => i += 1,
            '(' => {
                out.push(Tok::LParen);
                i += 1;
            }
            ')' => {
                out.push(Tok::RParen);
                i += 1;
            }
            ',' => {
                out.push(Tok::Comma);
                i += 1;
            }
            '.' if !chars.get(i + 1).is_some_and(char::is_ascii_digit) => {
                out.push(Tok::Dot);
                i += 1;
            }
            '[' => {
                let end = chars[i..]
                    .iter()
                    .position(|&c| c == ']')
                    .ok_or_else(|| format!("unclosed '[' at position {i}"))?;
                let inner: String = chars[i + 1..i + end].iter().collect();
                if inner.trim() != "any" {
                    return Err(format!(
                        "only [any] list indexes are supported, got [{inner}] at position {i}"
                    ));
                }
                out.push(Tok::AnyIndex);
                i += end + 1;
            }
            '=' => {
                out.push(Tok::Op(Op::Eq));
                i += 1;
            }
            '!' if chars.get(i + 1) == Some(&'=') => {
                out.push(Tok::Op(Op::Ne));
                i += 2;
            }
            '<' | '>' => {
                let eq = chars.get(i + 1) == Some(&'=');
                out.push(Tok::Op(match (c, eq) {
                    ('<', true) => Op::Le,
                    ('<', false) => Op::Lt,
                    ('>', true) => Op::Ge,
                    _ => Op::Gt,
                }));
                i += if eq { 2 } else { 1 };
            }
            '\'' | '"' => {
                let quote = c;
                let start = i;
                i += 1;
                let mut parts = Vec::new();
                let mut text = String::new();
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err(format!("unterminated string starting at position {start}"));
                    };
                    i += 1;
                    if c == quote {
                        break;
                    }
                    match c {
                        '\\' => {
                            let Some(&n) = chars.get(i) else {
                                return Err(format!(
                                    "unterminated string starting at position {start}"
                                ));
                            };
                            text.push(n);
                            i += 1;
                        }
                        '*' => {
                            if !text.is_empty() {
                                parts.push(Pat::Text(std::mem::take(&mut text)));
                            }
                            parts.push(Pat::Star);
                        }
                        _ => text.push(c),
                    }
                }
                if !text.is_empty() || parts.is_empty() {
                    parts.push(Pat::Text(text));
                }
                out.push(Tok::Str(parts));
            }
            c if c.is_ascii_digit() || c == '-' || c == '.' => {
                let start = i;
                i += 1;
                while i < chars.len()
                    && (chars[i].is_ascii_digit() || matches!(chars[i], '.' | 'e' | 'E' | '+'))
                {
                    i += 1;
                }
                let s: String = chars[start..i].iter().collect();
                let n: f64 = s
                    .parse()
                    .map_err(|_| format!("{s:?} at position {start} is not a number"))?;
                out.push(Tok::Num(n));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '_' | '-' | ':'))
                {
                    i += 1;
                }
                out.push(Tok::Ident(chars[start..i].iter().collect()));
            }
            _ => return Err(format!("unexpected character {c:?} at position {i}")),
        }
    }
    Ok(out)
}

/// What an operand starts with.
enum Operand {
    /// `(` or `not(`: a group opens.
    Open(Group),
    /// A comparison, existence test or `contains(...)`.
    Leaf(Expr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// The whole filter.
    Top,
    /// `( ... )`.
    Paren,
    /// `not( ... )`.
    Not,
}

/// A group being parsed: `a and b or c and` so far is `or = [a and b]`, `and = [c]`.
struct Frame {
    group: Group,
    or: Vec<Expr>,
    and: Vec<Expr>,
}

impl Frame {
    fn new(group: Group) -> Frame {
        Frame {
            group,
            or: Vec::new(),
            and: Vec::new(),
        }
    }

    /// `or` was read: the operands so far are one alternative.
    fn end_alternative(&mut self) {
        let and = std::mem::take(&mut self.and);
        self.or.push(flat(and, Expr::And));
    }

    fn finish(mut self) -> Expr {
        self.end_alternative();
        flat(self.or, Expr::Or)
    }
}

/// One operand as itself, several as `make(all)`.
fn flat(mut all: Vec<Expr>, make: fn(Vec<Expr>) -> Expr) -> Expr {
    if all.len() == 1 {
        all.remove(0)
    } else {
        make(all)
    }
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    /// Terms parsed so far (see [`Filter::MAX_TERMS`]).
    terms: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn expect(&mut self, want: &Tok, what: &str) -> Result<(), String> {
        match self.next() {
            Some(t) if &t == want => Ok(()),
            Some(t) => Err(format!("expected {what}, found {}", describe(&t))),
            None => Err(format!("expected {what}, found the end of the filter")),
        }
    }

    fn keyword(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(s)) if s.eq_ignore_ascii_case(kw))
    }

    /// Counts one more term, refusing the filter past [`Filter::MAX_TERMS`].
    fn count_term(&mut self) -> Result<(), String> {
        self.terms += 1;
        if self.terms > Filter::MAX_TERMS {
            return Err(format!(
                "the filter has more than {} terms",
                Filter::MAX_TERMS
            ));
        }
        Ok(())
    }

    /// `expr` without recursion: open `(` and `not(` wait on `frames`, so a deep
    /// filter costs heap, not stack, and `and`/`or` chains are flat lists.
    fn expr(&mut self) -> Result<Expr, String> {
        let mut frames = vec![Frame::new(Group::Top)];
        loop {
            let operand = match self.operand()? {
                Operand::Open(group) => {
                    if frames.len() > Filter::MAX_DEPTH {
                        return Err(format!(
                            "the filter nests parentheses more than {} levels deep",
                            Filter::MAX_DEPTH
                        ));
                    }
                    frames.push(Frame::new(group));
                    continue;
                }
                Operand::Leaf(e) => e,
            };
            let mut done = operand;
            // Close every group that ends right after this operand.
            loop {
                let top = frames.last_mut().ok_or("unbalanced filter")?;
                top.and.push(done);
                if self.keyword("and") {
                    self.pos += 1;
                    break;
                }
                if self.keyword("or") {
                    self.pos += 1;
                    top.end_alternative();
                    break;
                }
                let group = top.group;
                if group == Group::Top {
                    return frames
                        .pop()
                        .map(Frame::finish)
                        .ok_or_else(|| "unbalanced filter".into());
                }
                let closing = match group {
                    Group::Not => "')' closing not(",
                    _ => "')'",
                };
                self.expect(&Tok::RParen, closing)?;
                done = frames.pop().map(Frame::finish).ok_or("unbalanced filter")?;
                if group == Group::Not {
                    done = Expr::Not(Box::new(done));
                }
            }
        }
    }

    /// The start of an operand: an opening `(`/`not(`, or a whole leaf.
    fn operand(&mut self) -> Result<Operand, String> {
        let call = |p: &Self, name: &str| {
            matches!(p.peek(), Some(Tok::Ident(s)) if s.eq_ignore_ascii_case(name))
                && p.toks.get(p.pos + 1) == Some(&Tok::LParen)
        };
        if self.peek() == Some(&Tok::LParen) {
            self.pos += 1;
            return Ok(Operand::Open(Group::Paren));
        }
        if call(self, "not") {
            self.pos += 2;
            return Ok(Operand::Open(Group::Not));
        }
        if call(self, "contains") {
            self.pos += 2;
            self.count_term()?;
            let path = self.path()?;
            self.expect(&Tok::Comma, "',' in contains(field, 'text')")?;
            let lit = self.literal()?;
            self.expect(&Tok::RParen, "')' closing contains(")?;
            return Ok(Operand::Leaf(Expr::Contains(path, lit)));
        }
        if let Some(Tok::Ident(s)) = self.peek()
            && self.toks.get(self.pos + 1) == Some(&Tok::LParen)
        {
            return Err(format!("function {s}() is not supported"));
        }
        self.test().map(Operand::Leaf)
    }

    fn path(&mut self) -> Result<Path, String> {
        let mut path = Vec::new();
        match self.next() {
            Some(Tok::Ident(s)) => path.push(Seg::Field(s)),
            Some(t) => return Err(format!("expected a field name, found {}", describe(&t))),
            None => return Err("expected a field name, found the end of the filter".into()),
        }
        loop {
            match self.peek() {
                Some(Tok::Dot) => {
                    self.pos += 1;
                    match self.next() {
                        Some(Tok::Ident(s)) => path.push(Seg::Field(s)),
                        _ => return Err("expected a field name after '.'".into()),
                    }
                }
                Some(Tok::AnyIndex) => {
                    self.pos += 1;
                    path.push(Seg::Any);
                }
                _ => return Ok(path),
            }
        }
    }

    fn test(&mut self) -> Result<Expr, String> {
        self.count_term()?;
        let path = self.path()?;
        let op = match self.peek() {
            Some(Tok::Op(op)) => *op,
            _ => return Ok(Expr::Exists(path)),
        };
        self.pos += 1;
        if self.peek() == Some(&Tok::LParen) {
            self.pos += 1;
            let mut lits = vec![self.literal()?];
            while self.peek() == Some(&Tok::Comma) {
                self.pos += 1;
                // Each further value of a list is a term of its own.
                self.count_term()?;
                lits.push(self.literal()?);
            }
            self.expect(&Tok::RParen, "')' closing the value list")?;
            if !matches!(op, Op::Eq | Op::Ne) {
                return Err("a value list needs '=' or '!='".into());
            }
            return Ok(Expr::Cmp(path, op, lits));
        }
        let lit = self.literal()?;
        Ok(Expr::Cmp(path, op, vec![lit]))
    }

    fn literal(&mut self) -> Result<Lit, String> {
        match self.next() {
            Some(Tok::Str(p)) => Ok(Lit::Str(p)),
            Some(Tok::Num(n)) => Ok(Lit::Num(n)),
            Some(Tok::Ident(s)) => Ok(match s.to_ascii_lowercase().as_str() {
                "true" => Lit::Bool(true),
                "false" => Lit::Bool(false),
                "null" => Lit::Null,
                _ => Lit::Str(vec![Pat::Text(s)]),
            }),
            Some(t) => Err(format!("expected a value, found {}", describe(&t))),
            None => Err("expected a value, found the end of the filter".into()),
        }
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("{s:?}"),
        Tok::Str(_) => "a string".into(),
        Tok::Num(n) => format!("{n}"),
        Tok::Op(_) => "an operator".into(),
        Tok::LParen => "'('".into(),
        Tok::RParen => "')'".into(),
        Tok::Comma => "','".into(),
        Tok::Dot => "'.'".into(),
        Tok::AnyIndex => "'[any]'".into(),
    }
}

impl Filter {
    /// Longest filter accepted, in bytes. A filter reaches the simulator in the
    /// request line, which is capped at 64 KiB (hyper's limit, flasharray-sim's
    /// `guard.rs`), so
    /// no filter an HTTP client can send is refused for its length alone; the
    /// embedded mock (`pxfa --array sim`) has no URL, and without this bound a
    /// many-megabyte filter would be copied into a char list of four times its
    /// size before any other check ran.
    pub const MAX_BYTES: usize = flasharray::params::MAX_FILTER_LEN;

    /// Deepest nesting of `(...)` and `not(...)` accepted. Parsing, matching,
    /// `Debug`, `Clone` and `Drop` recurse once per level, and an unbounded depth
    /// let one list request overflow the stack and abort the process (issue #28:
    /// `(` x 5000). Real filters nest a few levels (pxfa's own: one; the simulator
    /// wraps each of several `filter` parameters in one more); 64 leaves ample
    /// room and needs only tens of KiB of stack even in debug builds (a test
    /// parses, matches, prints and drops the deepest filter on a 256 KiB thread).
    pub const MAX_DEPTH: usize = flasharray::params::MAX_FILTER_DEPTH;

    /// Most terms accepted: comparisons, existence tests, `contains(...)`, and each
    /// value of a value list (`name=('a','b')` is two). Matching costs terms x
    /// items, so this bounds the work one request can ask for. pxfa sends at most
    /// 100 names in a membership filter (`flasharray::MAX_NAMES_PER_CALL`) and 16
    /// alternatives in an `or` chain; 1024 is ten times the largest known.
    pub const MAX_TERMS: usize = flasharray::params::MAX_FILTER_TERMS;

    /// Parses a filter; the error says what is wrong and where.
    pub fn parse(input: &str) -> Result<Filter, String> {
        // Before anything else looks at it: the lexer holds the filter as chars.
        if input.len() > Filter::MAX_BYTES {
            return Err(format!(
                "the filter is longer than {} bytes",
                Filter::MAX_BYTES
            ));
        }
        let toks = lex(input)?;
        if toks.is_empty() {
            return Err("empty filter".into());
        }
        let mut p = Parser {
            toks,
            pos: 0,
            terms: 0,
        };
        let root = p.expr()?;
        if let Some(t) = p.peek() {
            return Err(format!(
                "unexpected {} after a complete expression",
                describe(t)
            ));
        }
        Ok(Filter { root })
    }

    /// Whether `item` (a model serialized to JSON) passes the filter.
    pub fn matches(&self, item: &Value) -> bool {
        eval(&self.root, item)
    }
}

impl std::str::FromStr for Filter {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Filter::parse(s)
    }
}

/// Every value the path reaches; lists met on the way fan out.
fn resolve<'a>(v: &'a Value, path: &[Seg], out: &mut Vec<&'a Value>) {
    let Some((first, rest)) = path.split_first() else {
        match v {
            Value::Array(items) => out.extend(items.iter()),
            _ => out.push(v),
        }
        return;
    };
    match (first, v) {
        (Seg::Field(f), Value::Object(m)) => {
            if let Some(x) = m.get(f.as_str()) {
                resolve(x, rest, out);
            }
        }
        (Seg::Field(_), Value::Array(items)) => {
            for x in items {
                resolve(x, path, out);
            }
        }
        (Seg::Any, Value::Array(items)) => {
            for x in items {
                resolve(x, rest, out);
            }
        }
        _ => {}
    }
}

fn present(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Object(m) => m.values().any(present),
        _ => true,
    }
}

fn eval(e: &Expr, item: &Value) -> bool {
    match e {
        Expr::And(all) => all.iter().all(|e| eval(e, item)),
        Expr::Or(all) => all.iter().any(|e| eval(e, item)),
        Expr::Not(a) => !eval(a, item),
        Expr::Exists(p) => {
            let mut vals = Vec::new();
            resolve(item, p, &mut vals);
            vals.iter().any(|v| present(v))
        }
        Expr::Contains(p, lit) => {
            let mut vals = Vec::new();
            resolve(item, p, &mut vals);
            let needle = lit_text(lit).to_ascii_lowercase();
            vals.iter()
                .any(|v| scalar_text(v).is_some_and(|s| s.to_ascii_lowercase().contains(&needle)))
        }
        Expr::Cmp(p, op, lits) => {
            let mut vals = Vec::new();
            resolve(item, p, &mut vals);
            if vals.is_empty() {
                // A missing field equals null.
                vals.push(&Value::Null);
            }
            match op {
                Op::Eq => vals.iter().any(|v| lits.iter().any(|l| equal(v, l))),
                Op::Ne => !vals.iter().any(|v| lits.iter().any(|l| equal(v, l))),
                _ => vals.iter().any(|v| {
                    lits.iter().any(|l| {
                        order(v, l).is_some_and(|o| match op {
                            Op::Lt => o == Ordering::Less,
                            Op::Le => o != Ordering::Greater,
                            Op::Gt => o == Ordering::Greater,
                            Op::Ge => o != Ordering::Less,
                            Op::Eq | Op::Ne => false,
                        })
                    })
                }),
            }
        }
    }
}

fn lit_text(l: &Lit) -> String {
    match l {
        Lit::Str(parts) => parts
            .iter()
            .map(|p| match p {
                Pat::Text(t) => t.as_str(),
                Pat::Star => "*",
            })
            .collect(),
        Lit::Num(n) => n.to_string(),
        Lit::Bool(b) => b.to_string(),
        Lit::Null => "null".into(),
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn equal(v: &Value, l: &Lit) -> bool {
    match (v, l) {
        (Value::Null, Lit::Null) => true,
        (_, Lit::Null) | (Value::Null, _) => false,
        (Value::Number(n), Lit::Num(x)) => n.as_f64() == Some(*x),
        (Value::Number(n), Lit::Str(p)) => match pattern_number(p) {
            Some(x) => n.as_f64() == Some(x),
            None => wildcard(p, &n.to_string()),
        },
        (Value::Bool(b), Lit::Bool(x)) => b == x,
        (Value::Bool(b), Lit::Str(p)) => wildcard(p, if *b { "true" } else { "false" }),
        (Value::String(s), Lit::Str(p)) => wildcard(p, s),
        (Value::String(s), Lit::Num(x)) => s.parse::<f64>().ok() == Some(*x),
        (Value::String(s), Lit::Bool(x)) => {
            s.eq_ignore_ascii_case(if *x { "true" } else { "false" })
        }
        _ => false,
    }
}

fn pattern_number(p: &[Pat]) -> Option<f64> {
    match p {
        [Pat::Text(t)] => t.trim().parse().ok(),
        _ => None,
    }
}

fn order(v: &Value, l: &Lit) -> Option<Ordering> {
    match (v, l) {
        (Value::Number(n), Lit::Num(x)) => n.as_f64()?.partial_cmp(x),
        (Value::Number(n), Lit::Str(p)) => n.as_f64()?.partial_cmp(&pattern_number(p)?),
        (Value::String(s), Lit::Num(x)) => s.parse::<f64>().ok()?.partial_cmp(x),
        (Value::String(s), Lit::Str(p)) => Some(
            s.to_ascii_lowercase()
                .cmp(&lit_text(&Lit::Str(p.to_vec())).to_ascii_lowercase()),
        ),
        _ => None,
    }
}

/// Case-insensitive match of `s` against a pattern with `*` wildcards.
fn wildcard(pat: &[Pat], s: &str) -> bool {
    let s = s.to_ascii_lowercase();
    let parts: Vec<String> = pat
        .iter()
        .map(|p| match p {
            Pat::Text(t) => t.to_ascii_lowercase(),
            Pat::Star => String::new(),
        })
        .collect();
    if !pat.contains(&Pat::Star) {
        return parts.concat() == s;
    }
    // Greedy segment matching: text pieces must appear in order; the first piece
    // anchors at the start unless a star precedes it, the last at the end unless a
    // star follows it.
    let mut rest = s.as_str();
    let n = pat.len();
    for (i, p) in pat.iter().enumerate() {
        let Pat::Text(_) = p else { continue };
        let t = &parts[i];
        let starred_before = i > 0 && pat[i - 1] == Pat::Star;
        let last_text = !pat[i + 1..].iter().any(|q| matches!(q, Pat::Text(_)));
        let starred_after = i + 1 < n;
        if !starred_before {
            if !rest.starts_with(t.as_str()) {
                return false;
            }
            rest = &rest[t.len()..];
        } else if last_text && !starred_after {
            return rest.ends_with(t.as_str());
        } else {
            match rest.find(t.as_str()) {
                Some(pos) => rest = &rest[pos + t.len()..],
                None => return false,
            }
        }
    }
    pat.last() == Some(&Pat::Star) || rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vol() -> Value {
        json!({
            "name": "tenant-a::px-data-01",
            "provisioned": 1073741824u64,
            "destroyed": false,
            "pod": {"id": "p1", "name": "tenant-a"},
            "source": {"id": null, "name": null},
            "time_remaining": null,
            "wwns": ["2100F4C7AA002706", "2100F4C7AA002707"],
            "arrays": [{"name": "a1", "status": "online"}, {"name": "a2", "status": "offline"}],
            "note": "it's * here",
        })
    }

    fn m(f: &str) -> bool {
        Filter::parse(f)
            .unwrap_or_else(|e| panic!("{f}: {e}"))
            .matches(&vol())
    }

    #[test]
    fn comparisons() {
        assert!(m("name='tenant-a::px-data-01'"));
        assert!(m("name='TENANT-A::PX-DATA-01'"));
        assert!(!m("name='px-data-01'"));
        assert!(m("name!='x'"));
        assert!(m("provisioned=1073741824"));
        assert!(m("provisioned>1024"));
        assert!(m("provisioned>=1073741824"));
        assert!(!m("provisioned<1073741824"));
        assert!(m("provisioned<=1073741824"));
        assert!(m("provisioned='1073741824'"));
        assert!(m("destroyed=false"));
        assert!(m("destroyed='false'"));
        assert!(!m("destroyed=true"));
        assert!(m("time_remaining=null"));
        assert!(m("missing=null"));
        assert!(!m("missing='x'"));
    }

    #[test]
    fn wildcards_and_escapes() {
        assert!(m("name='tenant-a::*'"));
        assert!(m("name='*data*'"));
        assert!(m("name='*-01'"));
        assert!(m("name='t*a::px*01'"));
        assert!(!m("name='*-02'"));
        assert!(!m("name='px*'"));
        assert!(m("note='it\\'s \\* here'"));
        assert!(!m("note='it\\'s \\* her'"));
        assert!(m("note='it\\'s*'"));
    }

    #[test]
    fn logic_and_precedence() {
        assert!(m("destroyed=false and provisioned>1"));
        assert!(!m("destroyed=true and provisioned>1"));
        assert!(m("destroyed=true or provisioned>1"));
        // and binds tighter than or
        assert!(m("destroyed=true and provisioned>1 or name='*01'"));
        assert!(!m("destroyed=true and (provisioned>1 or name='*01')"));
        assert!(m("not(destroyed=true)"));
        assert!(m("NOT(destroyed=true) AND name='t*'"));
    }

    #[test]
    fn membership_nested_lists_existence_contains() {
        assert!(m("name=('a','tenant-a::px-data-01')"));
        assert!(!m("name=('a','b')"));
        assert!(m("name!=('a','b')"));
        assert!(m("pod.name='tenant-a'"));
        assert!(m("pod.name='tenant-*'"));
        assert!(m("arrays[any].status='offline'"));
        assert!(m("arrays.name='a2'"));
        assert!(m("wwns='2100F4C7AA002707'"));
        assert!(m("pod"));
        assert!(!m("source"));
        assert!(!m("time_remaining"));
        assert!(m("contains(name,'DATA')"));
        assert!(!m("contains(name,'zzz')"));
        assert!(m("contains(wwns,'2707')"));
    }

    #[test]
    fn parse_errors_say_what_is_wrong() {
        for (f, want) in [
            ("", "empty"),
            ("name='x", "unterminated"),
            ("name=", "expected a value"),
            ("(name='x'", "')'"),
            ("name='x' name='y'", "unexpected"),
            ("tags('k','v')", "not supported"),
            ("arrays[0].name='x'", "[any]"),
            ("name<('a','b')", "value list"),
            ("name # 'x'", "unexpected character"),
            ("contains(name 'x')", "','"),
        ] {
            let e = Filter::parse(f).unwrap_err();
            assert!(e.contains(want), "{f:?}: {e}");
        }
    }

    /// Arbitrary input (built from the language's own characters, so that most of
    /// it gets deep into the parser) must give an answer, never a panic.
    #[test]
    fn never_panics_on_arbitrary_input() {
        const ALPHABET: &[&str] = &[
            "name", "pod", ".", "[any]", "[", "]", "(", ")", ",", "=", "!=", "<", "<=", ">", ">=",
            "'", "\"", "\\", "*", "and", "or", "not", "contains", " ", "1", "-", "2.5e3", "true",
            "null", "é", "::", "_",
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let item = vol();
        let mut parsed = 0;
        for _ in 0..20_000 {
            let len = (next() % 12) as usize;
            let input: String = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
                .collect();
            if let Ok(f) = Filter::parse(&input) {
                parsed += 1;
                f.matches(&item);
            }
        }
        assert!(
            parsed > 100,
            "the generator should reach valid filters ({parsed})"
        );
    }

    /// The segment matcher agrees with a plain backtracking glob on every pattern
    /// and text over a small alphabet.
    #[test]
    fn wildcard_agrees_with_backtracking() {
        fn reference(p: &[char], s: &[char]) -> bool {
            match p.split_first() {
                None => s.is_empty(),
                Some(('*', rest)) => (0..=s.len()).any(|i| reference(rest, &s[i..])),
                Some((c, rest)) => s.first() == Some(c) && reference(rest, &s[1..]),
            }
        }
        fn to_pat(p: &str) -> Vec<Pat> {
            let mut out = Vec::new();
            let mut text = String::new();
            for c in p.chars() {
                if c == '*' {
                    if !text.is_empty() {
                        out.push(Pat::Text(std::mem::take(&mut text)));
                    }
                    out.push(Pat::Star);
                } else {
                    text.push(c);
                }
            }
            if !text.is_empty() || out.is_empty() {
                out.push(Pat::Text(text));
            }
            out
        }
        let words = |alphabet: &[char], max: usize| {
            let mut all = vec![String::new()];
            let mut frontier = vec![String::new()];
            for _ in 0..max {
                frontier = frontier
                    .iter()
                    .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
                    .collect();
                all.extend(frontier.iter().cloned());
            }
            all
        };
        for p in words(&['a', 'b', '*'], 4) {
            for t in words(&['a', 'b'], 4) {
                let pc: Vec<char> = p.chars().collect();
                let tc: Vec<char> = t.chars().collect();
                assert_eq!(
                    wildcard(&to_pat(&p), &t),
                    reference(&pc, &tc),
                    "{p:?} ~ {t:?}"
                );
            }
        }
    }

    /// Filters that used to overflow the stack or take unbounded memory (issue #28),
    /// each refused at once with a message naming the limit.
    fn hostile() -> Vec<(&'static str, String, &'static str)> {
        let chain = |n: usize| "a and ".repeat(n) + "a";
        vec![
            ("( x 5000", "(".repeat(5000), "levels deep"),
            ("not( x 3000", "not(".repeat(3000), "levels deep"),
            ("not( x 20000", "not(".repeat(20_000), "bytes"),
            (
                "balanced not( x 10000",
                "not(".repeat(10_000) + "a" + &")".repeat(10_000),
                "levels deep",
            ),
            ("10 MB of `a and `", chain(10 * 1024 * 1024 / 6), "bytes"),
            ("one term too many", chain(Filter::MAX_TERMS), "terms"),
            (
                "a value list one value too long",
                format!("name=({})", vec!["'v'"; Filter::MAX_TERMS + 1].join(",")),
                "terms",
            ),
        ]
    }

    /// A filter exactly `depth` levels deep, mixing `(... or ...)`, `(... and ...)`
    /// and `not(...)`.
    fn nested(depth: usize) -> String {
        let mut f = "name='tenant-a::*'".to_string();
        for level in 0..depth {
            f = match level % 3 {
                0 => format!("not(not({f}) or destroyed=true)"),
                1 => format!("(pod.name='tenant-a' and {f})"),
                _ => format!("(missing or {f})"),
            };
        }
        f
    }

    /// The deepest [`nested`] filter within [`Filter::MAX_DEPTH`] (the depth grows
    /// with the levels).
    fn deepest() -> String {
        (0..200)
            .map(nested)
            .take_while(|f| depth_of(f) <= Filter::MAX_DEPTH)
            .last()
            .unwrap()
    }

    fn depth_of(f: &str) -> usize {
        let (mut depth, mut max) = (0usize, 0usize);
        for c in f.chars() {
            match c {
                '(' => {
                    depth += 1;
                    max = max.max(depth);
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        max
    }

    #[test]
    fn hostile_filters_are_refused_quickly() {
        for (what, f, want) in hostile() {
            let start = std::time::Instant::now();
            let e = Filter::parse(&f).unwrap_err();
            assert!(e.contains(want), "{what}: {e}");
            assert!(
                start.elapsed() < std::time::Duration::from_secs(2),
                "{what} took {:?}",
                start.elapsed()
            );
        }
    }

    #[test]
    fn limits_are_exact() {
        // `nested(n)` reaches depth n + 1 every third level (`not(not(`).
        let deepest = deepest();
        assert!(m(&deepest), "{deepest}");
        let over = "(".repeat(Filter::MAX_DEPTH - depth_of(&deepest) + 1)
            + &deepest
            + &")".repeat(Filter::MAX_DEPTH - depth_of(&deepest) + 1);
        assert_eq!(depth_of(&over), Filter::MAX_DEPTH + 1);
        assert!(Filter::parse(&over).unwrap_err().contains("levels deep"));

        let at = "(".repeat(Filter::MAX_DEPTH) + "pod" + &")".repeat(Filter::MAX_DEPTH);
        assert!(m(&at));
        let terms = "destroyed=false and ".repeat(Filter::MAX_TERMS - 1) + "pod";
        assert!(terms.len() <= Filter::MAX_BYTES);
        assert!(m(&terms));
        let list = format!("name=({})", vec!["'v'"; Filter::MAX_TERMS].join(","));
        assert!(!m(&list));
        let long = format!("name='{}'", "x".repeat(Filter::MAX_BYTES - 7));
        assert_eq!(long.len(), Filter::MAX_BYTES);
        assert!(!m(&long));
        assert!(
            Filter::parse(&format!("{long} "))
                .unwrap_err()
                .contains("bytes")
        );
    }

    /// A chain is one flat list, however long.
    #[test]
    fn chains_are_flat() {
        let f = Filter::parse("a and b and c or d or e and f").unwrap();
        let Expr::Or(alternatives) = &f.root else {
            panic!("{f:?}")
        };
        assert_eq!(alternatives.len(), 3);
        assert!(matches!(&alternatives[0], Expr::And(all) if all.len() == 3));
        assert!(matches!(&alternatives[1], Expr::Exists(_)));
        assert!(matches!(&alternatives[2], Expr::And(all) if all.len() == 2));
    }

    /// No recursion deeper than the limits allow is left anywhere: on a 256 KiB
    /// stack (the main thread has 8 MiB), the hostile filters are refused, and the
    /// largest accepted ones are parsed, matched, printed, cloned and dropped.
    #[test]
    fn everything_fits_a_small_stack() {
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                for (what, f, _) in hostile() {
                    assert!(Filter::parse(&f).is_err(), "{what}");
                }
                let item = vol();
                let deep = deepest();
                let long = "destroyed=false and ".repeat(Filter::MAX_TERMS - 1) + "pod";
                let parens = "(".repeat(Filter::MAX_DEPTH) + "pod" + &")".repeat(Filter::MAX_DEPTH);
                let nots =
                    "not(".repeat(Filter::MAX_DEPTH) + "pod" + &")".repeat(Filter::MAX_DEPTH);
                for f in [deep, long, parens, nots] {
                    let parsed = Filter::parse(&f).unwrap();
                    parsed.matches(&item);
                    let copy = parsed.clone();
                    assert_eq!(copy, parsed);
                    assert!(!format!("{parsed:?}").is_empty());
                    assert!(!format!("{parsed:#?}").is_empty());
                    drop(parsed);
                    drop(copy);
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn double_quotes_and_bare_words() {
        assert!(m("pod.name=\"tenant-a\""));
        assert!(m("arrays.status=online"));
    }
}
