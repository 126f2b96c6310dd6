//! Module layers: within a crate, modules import one another one way.
//!
//! A crate's module tree comes from its `src/` files (`lib.rs` or `main.rs` the root, `a.rs`
//! or `a/mod.rs` the module `a`, `a/b.rs` its child `b`; each `bin/x.rs` or `bin/x/` a crate
//! of its own). A module refers to another by a path that starts with `crate::`, `super::`
//! or `self::` (use groups such as `use crate::{a, b::c}` expanded), resolved to the longest
//! module prefix that exists. Comments, string and char literals and the bodies of
//! `#[cfg(test)]` modules are not read: tests may reach anywhere.
//!
//! A reference from `a::x` to `b::y` is a layer edge between the siblings `a` and `b` under
//! their closest common ancestor (the root here); a module using its own ancestor or
//! descendant is not one. [`cycles`] reports every circle among siblings; [`check_order`]
//! checks the top-level modules against a declared order, lowest first, in which each module
//! may import only modules listed before it.
//!
//! What it cannot see: a sibling reached through a parent's glob import or re-export
//! (`crate::Name` re-exported by the root). Name items by the module that defines them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

/// A source file of one crate: `path` relative to `src/`, `/`-separated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(path: &str, text: &str) -> Self {
        SourceFile {
            path: path.into(),
            text: text.into(),
        }
    }
}

/// A module's path from its crate root; empty for the root.
pub type ModPath = Vec<String>;

/// `a::b`, or `<root>`.
pub fn display(m: &[String]) -> String {
    if m.is_empty() {
        "<root>".into()
    } else {
        m.join("::")
    }
}

/// A module's reference to another module of its crate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The module of the file the reference is in.
    pub from: ModPath,
    /// The longest existing module prefix of the path.
    pub to: ModPath,
    pub file: String,
    pub line: usize,
    /// The path as written (a use group's member in full).
    pub path: String,
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "src/{}:{} `{}`", self.file, self.line, self.path)
    }
}

/// One crate (a library, a binary) read: its modules and their references.
#[derive(Clone, Debug)]
pub struct Crate {
    /// The crate's name in messages (its directory, `(bin x)` for a `src/bin` target).
    pub name: String,
    /// Every module and its file (test-only modules left out).
    pub modules: BTreeMap<ModPath, String>,
    /// In file order, then line order.
    pub references: Vec<Reference>,
}

/// A layer edge: under `parent`, its child `from` imports its child `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub parent: ModPath,
    pub from: String,
    pub to: String,
    /// The first reference that makes the edge.
    pub at: Reference,
}

/// Sibling modules that import one another in a circle.
#[derive(Clone, Debug)]
pub struct Cycle {
    pub krate: String,
    pub parent: ModPath,
    /// The circle's modules, by name.
    pub modules: Vec<String>,
    /// Every edge among them, so every edge of every circle through them.
    pub edges: Vec<Edge>,
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: the modules of {} import one another in a circle: {}",
            self.krate,
            display(&self.parent),
            self.modules.join(", ")
        )?;
        for e in &self.edges {
            writeln!(f, "  {} -> {}: {}", e.from, e.to, e.at)?;
        }
        write!(
            f,
            "  make the imports run one way: move what a lower module takes from a higher one \
             down into the lower module (or a new module below both), then drop the upward import"
        )
    }
}

/// The crates of a package's `src/` files: the library (or the binary of `main.rs`), the
/// binary of `main.rs` next to a `lib.rs`, and each `bin/` target.
pub fn crates(name: &str, files: &[SourceFile]) -> Vec<Crate> {
    let mut main = Vec::new();
    let mut alone_main = None;
    let mut bins: BTreeMap<String, Vec<SourceFile>> = BTreeMap::new();
    let has_lib = files.iter().any(|f| f.path == "lib.rs");
    for f in files {
        if let Some(rest) = f.path.strip_prefix("bin/") {
            let (bin, path) = match rest.split_once('/') {
                Some((dir, path)) => (dir.to_string(), path.to_string()),
                None => (rest.trim_end_matches(".rs").to_string(), "main.rs".into()),
            };
            bins.entry(bin).or_default().push(SourceFile {
                path,
                text: f.text.clone(),
            });
        } else if has_lib && f.path == "main.rs" {
            alone_main = Some(f.clone());
        } else {
            main.push(f.clone());
        }
    }
    let mut out = Vec::new();
    if !main.is_empty() {
        out.push(analyze(name, &main));
    }
    if let Some(m) = alone_main {
        out.push(analyze(&format!("{name} (main.rs)"), &[m]));
    }
    for (bin, files) in bins {
        out.push(analyze(&format!("{name} (bin {bin})"), &files));
    }
    out
}

/// The module of a file of one crate: `lib.rs`/`main.rs` the root, `a.rs` and `a/mod.rs` the
/// module `a`, `a/b.rs` the module `a::b`.
pub fn module_of(path: &str) -> Option<ModPath> {
    let stem = path.strip_suffix(".rs")?;
    let mut segs: ModPath = stem.split('/').map(String::from).collect();
    if segs.len() == 1 && (segs[0] == "lib" || segs[0] == "main") {
        return Some(Vec::new());
    }
    if segs.last().is_some_and(|s| s == "mod") {
        segs.pop();
    }
    Some(segs)
}

/// Reads one crate's files (see [`crates`] to split a package's `src/`).
pub fn analyze(name: &str, files: &[SourceFile]) -> Crate {
    let mut files: Vec<&SourceFile> = files.iter().collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut modules = BTreeMap::new();
    for f in &files {
        if let Some(m) = module_of(&f.path) {
            modules.insert(m, f.path.clone());
        }
    }
    let mut raw = Vec::new();
    let mut test_modules = BTreeSet::new();
    for f in &files {
        let Some(from) = module_of(&f.path) else {
            continue;
        };
        let scan = scan(&tokens(&f.text), &from);
        test_modules.extend(scan.test_modules);
        raw.extend(
            scan.paths
                .into_iter()
                .map(|(path, text, line)| (from.clone(), path, text, f.path.clone(), line)),
        );
    }
    modules.retain(|m, _| !test_modules.iter().any(|t| m.starts_with(t)));
    let references = raw
        .into_iter()
        .filter(|(from, ..)| modules.contains_key(from))
        .map(|(from, path, text, file, line)| {
            let to = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains_key(p))
                .unwrap_or_default();
            Reference {
                from,
                to,
                file,
                line,
                path: text,
            }
        })
        .collect();
    Crate {
        name: name.into(),
        modules,
        references,
    }
}

/// The crate's layer edges, one per (parent, from, to), each at its first reference.
pub fn edges(krate: &Crate) -> Vec<Edge> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for r in &krate.references {
        let common = r.from.iter().zip(&r.to).take_while(|(a, b)| a == b).count();
        // An ancestor or a descendant: not a layer edge.
        if common == r.from.len() || common == r.to.len() {
            continue;
        }
        let edge = Edge {
            parent: r.from[..common].to_vec(),
            from: r.from[common].clone(),
            to: r.to[common].clone(),
            at: r.clone(),
        };
        if seen.insert((edge.parent.clone(), edge.from.clone(), edge.to.clone())) {
            out.push(edge);
        }
    }
    out
}

/// Every circle among sibling modules: each group of siblings that reach one another.
pub fn cycles(krate: &Crate) -> Vec<Cycle> {
    let all = edges(krate);
    let mut by_parent: BTreeMap<&ModPath, Vec<&Edge>> = BTreeMap::new();
    for e in &all {
        by_parent.entry(&e.parent).or_default().push(e);
    }
    let mut out = Vec::new();
    for (parent, es) in by_parent {
        let nodes: BTreeSet<&str> = es
            .iter()
            .flat_map(|e| [e.from.as_str(), e.to.as_str()])
            .collect();
        let reach = |start: &str| -> BTreeSet<&str> {
            let mut seen = BTreeSet::new();
            let mut todo = vec![start];
            while let Some(n) = todo.pop() {
                for e in es.iter().filter(|e| e.from == n) {
                    if seen.insert(e.to.as_str()) {
                        todo.push(&e.to);
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&str, BTreeSet<&str>> =
            nodes.iter().map(|n| (*n, reach(n))).collect();
        let mut done = BTreeSet::new();
        for n in &nodes {
            if done.contains(n) || !reaches[n].contains(n) {
                continue;
            }
            let group: BTreeSet<&str> = nodes
                .iter()
                .copied()
                .filter(|m| reaches[n].contains(m) && reaches[m].contains(n))
                .collect();
            done.extend(group.iter().copied());
            out.push(Cycle {
                krate: krate.name.clone(),
                parent: parent.clone(),
                modules: group.iter().map(|s| s.to_string()).collect(),
                edges: es
                    .iter()
                    .filter(|e| group.contains(e.from.as_str()) && group.contains(e.to.as_str()))
                    .map(|e| (*e).clone())
                    .collect(),
            });
        }
    }
    out
}

/// Checks the crate's top-level modules against `order`, lowest first: each module imports
/// only modules listed before it, and every module is listed. One message per problem, each
/// saying what to change.
pub fn check_order(krate: &Crate, order: &[&str]) -> Vec<String> {
    let name = &krate.name;
    let top: BTreeMap<&str, &str> = krate
        .modules
        .iter()
        .filter(|(m, _)| m.len() == 1)
        .map(|(m, f)| (m[0].as_str(), f.as_str()))
        .collect();
    let root_edges: Vec<Edge> = edges(krate)
        .into_iter()
        .filter(|e| e.parent.is_empty())
        .collect();
    let position = |m: &str| order.iter().position(|o| *o == m);
    let mut problems = Vec::new();
    for (i, m) in order.iter().enumerate() {
        if order[..i].contains(m) {
            problems.push(format!(
                "{name}: the declared order lists `{m}` twice; keep one"
            ));
        }
        if !top.contains_key(m) {
            problems.push(format!(
                "{name}: the declared order lists `{m}`, which is not a module of the crate \
                 (no src/{m}.rs or src/{m}/mod.rs); remove it from the list"
            ));
        }
    }
    for (m, file) in &top {
        if position(m).is_some() {
            continue;
        }
        // Where it fits: above everything it imports, below everything importing it.
        let above = root_edges
            .iter()
            .filter(|e| e.from == *m)
            .filter_map(|e| position(&e.to))
            .max()
            .map(|p| order[p]);
        let below = root_edges
            .iter()
            .filter(|e| e.to == *m)
            .filter_map(|e| position(&e.from))
            .min()
            .map(|p| order[p]);
        let place = match (above, below) {
            (Some(a), Some(b)) if position(a) >= position(b) => format!(
                "once it no longer sits in a circle: it imports `{a}`, which comes after `{b}`, \
                 which imports it"
            ),
            (Some(a), Some(b)) => format!("after `{a}` (the highest module it imports) and before `{b}` (the lowest module that imports it)"),
            (Some(a), None) => format!("anywhere after `{a}` (the highest module it imports)"),
            (None, Some(b)) => format!("anywhere before `{b}` (the lowest module that imports it)"),
            (None, None) => "anywhere (it imports none of the listed modules and none imports it)".into(),
        };
        problems.push(format!(
            "{name}: module `{m}` (src/{file}) is not in the declared order; add it {place}"
        ));
    }
    for e in &root_edges {
        let (Some(from), Some(to)) = (position(&e.from), position(&e.to)) else {
            continue;
        };
        if to > from {
            problems.push(format!(
                "{name}: `{}` imports `{}` at {}, but `{}` is listed above `{}`: move what `{}` \
                 needs from `{}` down into `{}` or a module below it (or, if `{}` belongs below \
                 `{}`, move it before `{}` in the declared order)",
                e.from, e.to, e.at, e.to, e.from, e.from, e.to, e.from, e.to, e.from, e.from
            ));
        }
    }
    problems
}

/// The `members` of a workspace's root Cargo.toml (a plain list of strings).
pub fn workspace_members(cargo_toml: &str) -> Vec<String> {
    let Some(start) = cargo_toml
        .lines()
        .position(|l| l.trim_start().starts_with("members") && l.contains('='))
    else {
        return Vec::new();
    };
    let mut list = String::new();
    for line in cargo_toml.lines().skip(start) {
        let line = line.split('#').next().unwrap_or_default();
        list.push_str(line);
        if line.contains(']') {
            break;
        }
    }
    let list = list.split_once('[').map(|(_, l)| l).unwrap_or_default();
    let list = list.split(']').next().unwrap_or_default();
    list.split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Every `.rs` file under `src`, paths relative to it.
pub fn read_src(src: &Path) -> std::io::Result<Vec<SourceFile>> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<SourceFile>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if entry.file_type()?.is_dir() {
                walk(&entry.path(), &path, out)?;
            } else if name.ends_with(".rs") {
                out.push(SourceFile {
                    path,
                    text: std::fs::read_to_string(entry.path())?,
                });
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(src, "", &mut out)?;
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

/// Rust tokens enough to find paths, with their lines; comments and literals dropped.
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    // Skips a quoted literal from its opening quote; `raw` has no escapes and ends at a quote
    // followed by `hashes` hashes.
    let skip_quoted = |mut i: usize, line: &mut usize, raw: bool, hashes: usize| -> usize {
        i += 1;
        while i < c.len() {
            match c[i] {
                '\\' if !raw => {
                    if at(i + 1) == '\n' {
                        *line += 1;
                    }
                    i += 2;
                    continue;
                }
                '"' if (1..=hashes).all(|h| at(i + h) == '#') => return i + 1 + hashes,
                '\n' => *line += 1,
                _ => {}
            }
            i += 1;
        }
        i
    };
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_quoted(i, &mut line, false, 0);
        } else if ch == '\'' {
            // A char literal, else a lifetime or label (whose name is lexed as an ident).
            if at(i + 1) == '\\' {
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let raw_prefix = matches!(word.as_str(), "r" | "br" | "cr");
            if raw_prefix && (at(i) == '"' || at(i) == '#') {
                let hashes = (i..).take_while(|j| at(*j) == '#').count();
                if at(i + hashes) == '"' {
                    i = skip_quoted(i + hashes, &mut line, true, hashes);
                    continue;
                }
                if word == "r" && hashes == 1 {
                    // A raw identifier, `r#name`.
                    i += 1;
                    let start = i;
                    while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                        i += 1;
                    }
                    out.push((Tok::Ident(c[start..i].iter().collect()), line));
                    continue;
                }
            }
            if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                i = skip_quoted(i, &mut line, false, 0);
                continue;
            }
            out.push((Tok::Ident(word), line));
        } else if ch == ':' && at(i + 1) == ':' {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

struct Scan {
    /// Absolute module paths referred to, as written, and their lines.
    paths: Vec<(ModPath, String, usize)>,
    /// Modules declared `#[cfg(test)] mod name;`.
    test_modules: Vec<ModPath>,
}

fn is_ident(t: Option<&(Tok, usize)>, s: &str) -> bool {
    matches!(t, Some((Tok::Ident(i), _)) if i == s)
}

fn is_punct(t: Option<&(Tok, usize)>, p: char) -> bool {
    matches!(t, Some((Tok::Punct(c), _)) if *c == p)
}

/// The index after the bracketed group opening at `k` (`open` at `toks[k]`).
fn skip_group(toks: &[(Tok, usize)], mut k: usize, open: char, close: char) -> usize {
    let mut depth = 0;
    while k < toks.len() {
        if is_punct(toks.get(k), open) {
            depth += 1;
        } else if is_punct(toks.get(k), close) {
            depth -= 1;
            if depth == 0 {
                return k + 1;
            }
        }
        k += 1;
    }
    k
}

/// The paths of the file of module `module`.
fn scan(toks: &[(Tok, usize)], module: &[String]) -> Scan {
    let mut out = Scan {
        paths: Vec::new(),
        test_modules: Vec::new(),
    };
    // Inline modules (`mod name { .. }`) open here, with the brace depth outside them.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let current = |inline: &[(String, usize)]| -> ModPath {
        let mut m = module.to_vec();
        m.extend(inline.iter().map(|(n, _)| n.clone()));
        m
    };
    let mut k = 0;
    while k < toks.len() {
        let cfg_test = [
            Tok::Punct('#'),
            Tok::Punct('['),
            Tok::Ident("cfg".into()),
            Tok::Punct('('),
            Tok::Ident("test".into()),
            Tok::Punct(')'),
            Tok::Punct(']'),
        ];
        if toks.len() >= k + cfg_test.len()
            && toks[k..k + cfg_test.len()]
                .iter()
                .map(|(t, _)| t)
                .eq(cfg_test.iter())
        {
            // A test module's body is skipped; other test-only items are read as usual.
            let mut j = k + cfg_test.len();
            while is_punct(toks.get(j), '#') && is_punct(toks.get(j + 1), '[') {
                j = skip_group(toks, j + 1, '[', ']');
            }
            if is_ident(toks.get(j), "pub") {
                j += 1;
                if is_punct(toks.get(j), '(') {
                    j = skip_group(toks, j, '(', ')');
                }
            }
            if let (true, Some((Tok::Ident(name), _))) =
                (is_ident(toks.get(j), "mod"), toks.get(j + 1))
            {
                if is_punct(toks.get(j + 2), '{') {
                    k = skip_group(toks, j + 2, '{', '}');
                    continue;
                }
                if is_punct(toks.get(j + 2), ';') {
                    let mut m = current(&inline);
                    m.push(name.clone());
                    out.test_modules.push(m);
                }
            }
            k += cfg_test.len();
            continue;
        }
        match &toks[k] {
            (Tok::Ident(kw), _) if kw == "mod" => {
                if let (Some((Tok::Ident(name), _)), true) =
                    (toks.get(k + 1), is_punct(toks.get(k + 2), '{'))
                {
                    inline.push((name.clone(), depth));
                    depth += 1;
                    k += 3;
                    continue;
                }
            }
            (Tok::Punct('{'), _) => depth += 1,
            (Tok::Punct('}'), _) => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            (Tok::Ident(kw), line)
                if matches!(kw.as_str(), "crate" | "super" | "self")
                    && matches!(toks.get(k + 1), Some((Tok::PathSep, _)))
                    && !matches!(
                        k.checked_sub(1).and_then(|p| toks.get(p)),
                        Some((Tok::PathSep, _))
                    ) =>
            {
                let (trees, next) = path_tree(toks, k);
                let here = current(&inline);
                for segs in trees {
                    let mut abs = here.clone();
                    for s in &segs {
                        match s.as_str() {
                            "crate" => abs.clear(),
                            "super" => {
                                abs.pop();
                            }
                            "self" => {}
                            _ => abs.push(s.clone()),
                        }
                    }
                    // `use a::{self}` names `a`.
                    let written = segs.join("::");
                    let written = written.strip_suffix("::self").unwrap_or(&written);
                    out.paths.push((abs, written.to_string(), *line));
                }
                k = next;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// The paths of a path (with use groups, `*`, `as`) starting at `toks[k]`, and the index
/// after it.
fn path_tree(toks: &[(Tok, usize)], mut k: usize) -> (Vec<Vec<String>>, usize) {
    let mut segs = Vec::new();
    while let Some((t, _)) = toks.get(k) {
        match t {
            Tok::Ident(s) => {
                segs.push(s.clone());
                k += 1;
                if matches!(toks.get(k), Some((Tok::PathSep, _))) {
                    k += 1;
                } else {
                    break;
                }
            }
            Tok::Punct('{') => {
                k += 1;
                let mut out = Vec::new();
                while k < toks.len() && !is_punct(toks.get(k), '}') {
                    let (subs, next) = path_tree(toks, k);
                    out.extend(subs.into_iter().map(|s| [segs.clone(), s].concat()));
                    k = next.max(k + 1);
                    // Past `as alias` to the next member.
                    while k < toks.len()
                        && !is_punct(toks.get(k), ',')
                        && !is_punct(toks.get(k), '}')
                    {
                        k += 1;
                    }
                    if is_punct(toks.get(k), ',') {
                        k += 1;
                    }
                }
                return (out, k + 1);
            }
            Tok::Punct('*') => {
                k += 1;
                break;
            }
            _ => break,
        }
    }
    (vec![segs], k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn krate(files: &[(&str, &str)]) -> Crate {
        let files: Vec<SourceFile> = files.iter().map(|(p, t)| SourceFile::new(p, t)).collect();
        analyze("demo", &files)
    }

    fn targets(k: &Crate) -> Vec<String> {
        k.references
            .iter()
            .map(|r| format!("{} -> {}", display(&r.from), display(&r.to)))
            .collect()
    }

    #[test]
    fn files_nest_into_modules() {
        assert_eq!(module_of("lib.rs"), Some(vec![]));
        assert_eq!(module_of("main.rs"), Some(vec![]));
        assert_eq!(module_of("a.rs"), Some(vec!["a".to_string()]));
        assert_eq!(module_of("a/mod.rs"), Some(vec!["a".to_string()]));
        assert_eq!(module_of("a/b.rs"), Some(vec!["a".to_string(), "b".into()]));
        assert_eq!(
            module_of("a/b/mod.rs"),
            Some(vec!["a".to_string(), "b".into()])
        );
        assert_eq!(module_of("notes.txt"), None);
    }

    #[test]
    fn a_cycle_is_reported_with_both_files_and_lines() {
        let k = krate(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
            ("a.rs", "//! A.\n\nuse crate::b::Thing;\n"),
            ("b.rs", "fn f() {\n    super::a::g();\n}\n"),
            ("c.rs", "use crate::a;\n"),
        ]);
        let cycles = cycles(&k);
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert_eq!(cycles[0].modules, ["a", "b"]);
        let text = cycles[0].to_string();
        assert!(
            text.contains("a -> b: src/a.rs:3 `crate::b::Thing`"),
            "{text}"
        );
        assert!(text.contains("b -> a: src/b.rs:2 `super::a::g`"), "{text}");
        assert!(!text.contains("c ->"), "{text}");
    }

    #[test]
    fn use_groups_are_expanded_and_resolved_to_the_longest_module() {
        let k = krate(&[
            ("lib.rs", ""),
            ("a.rs", "use crate::{b, c::{self, d::E as F}, e::*};\n"),
            ("b.rs", ""),
            ("c/mod.rs", ""),
            ("c/d.rs", ""),
            ("e.rs", ""),
        ]);
        assert_eq!(targets(&k), ["a -> b", "a -> c", "a -> c::d", "a -> e"]);
        let paths: Vec<&str> = k.references.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            paths,
            ["crate::b", "crate::c", "crate::c::d::E", "crate::e"]
        );
    }

    #[test]
    fn comments_strings_and_test_modules_are_not_read() {
        let k = krate(&[
            ("lib.rs", ""),
            (
                "a.rs",
                r####"
//! See [`crate::b`].
/// Uses [`crate::b::f`].
// crate::b::f();
/* crate::b /* nested */ crate::b */
fn f() -> &'static str {
    let _c = '"';
    let _s = "crate::b::f \" crate::b";
    let _r = r#"crate::b "quoted" crate::b"#;
    let _b = b"crate::b";
    crate::c::g();
    "crate::b"
}
#[cfg(test)]
mod tests {
    use crate::b;
    mod inner { fn f() { crate::b::f(); } }
}
#[cfg(test)]
mod helpers;
"####,
            ),
            ("a/helpers.rs", "use crate::b;\n"),
            ("b.rs", "pub fn f() {}\n"),
            ("c.rs", "pub fn g() {}\n"),
        ]);
        assert_eq!(targets(&k), ["a -> c"]);
        assert_eq!(k.references[0].line, 11);
        assert!(!k
            .modules
            .contains_key(&vec!["a".to_string(), "helpers".into()]));
    }

    #[test]
    fn parents_and_children_are_not_layer_edges_and_edges_lift_to_siblings() {
        let k = krate(&[
            ("lib.rs", "use crate::a::x;\n"),
            ("a/mod.rs", "use self::x::Y;\n"),
            (
                "a/x.rs",
                "use super::super::b::deep::Z;\nuse crate::a::y;\nuse super::Q;\n",
            ),
            ("a/y.rs", ""),
            ("b/mod.rs", "pub mod deep;\n"),
            ("b/deep.rs", "mod inner { use super::super::super::a; }\n"),
        ]);
        let e: Vec<String> = edges(&k)
            .iter()
            .map(|e| format!("{}: {} -> {}", display(&e.parent), e.from, e.to))
            .collect();
        assert_eq!(e, ["<root>: a -> b", "a: x -> y", "<root>: b -> a"]);
        let cycles = cycles(&k);
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].parent, Vec::<String>::new());
    }

    #[test]
    fn a_declared_order_is_checked_both_ways() {
        let k = krate(&[
            ("lib.rs", ""),
            ("low.rs", "use crate::high::X;\n"),
            ("mid.rs", "use crate::low;\n"),
            ("high.rs", "use crate::mid;\nuse crate::new::N;\n"),
            ("new.rs", "use crate::low;\n"),
        ]);
        let problems = check_order(&k, &["low", "mid", "high", "gone"]);
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(
            problems[0].contains("lists `gone`, which is not a module")
                && problems[0].contains("remove it")
        );
        assert!(
            problems[1].contains("module `new` (src/new.rs) is not in the declared order")
                && problems[1].contains("after `low`")
                && problems[1].contains("before `high`"),
            "{}",
            problems[1]
        );
        assert!(
            problems[2].contains("`low` imports `high` at src/low.rs:1 `crate::high::X`")
                && problems[2].contains("move what `low` needs from `high` down"),
            "{}",
            problems[2]
        );
        assert!(check_order(&k, &["high", "low", "new", "mid", "high"])
            .iter()
            .any(|p| p.contains("lists `high` twice")));
        let ok = krate(&[
            ("main.rs", "mod a;\nmod b;\n"),
            ("a.rs", ""),
            ("b.rs", "use crate::a;"),
        ]);
        assert!(check_order(&ok, &["a", "b"]).is_empty());
    }

    #[test]
    fn binaries_are_crates_of_their_own() {
        let files = [
            SourceFile::new("lib.rs", "pub mod a;"),
            SourceFile::new("a.rs", ""),
            SourceFile::new("bin/tool.rs", "mod a;"),
            SourceFile::new("bin/big/main.rs", "mod x;\nmod y;"),
            SourceFile::new("bin/big/x.rs", "use crate::y;"),
            SourceFile::new("bin/big/y.rs", "use crate::x;"),
        ];
        let crates = crates("pkg", &files);
        let names: Vec<&str> = crates.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["pkg", "pkg (bin big)", "pkg (bin tool)"]);
        assert!(cycles(&crates[0]).is_empty());
        assert_eq!(cycles(&crates[1])[0].modules, ["x", "y"]);
    }

    #[test]
    fn workspace_members_are_read_from_the_root_manifest() {
        let toml = "[workspace]\nresolver = \"2\"\nmembers = [\n    \"a\",\n    \"tools/b\", # why\n]\nexclude = [\"c\"]\n";
        assert_eq!(workspace_members(toml), ["a", "tools/b"]);
        assert_eq!(
            workspace_members("[workspace]\nmembers = [\"x\", \"y\"]\n"),
            ["x", "y"]
        );
    }
}
