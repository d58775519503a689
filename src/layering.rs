//! Layers point down (`docs/architecture.md#layers`), checked on the sources themselves:
//! - nothing outside `src/doctor/` and `src/cli/` uses `doctor`;
//! - a command file of `src/cli/` never uses another command file (shared
//!   helpers live in `cli/support.rs`);
//! - no two top-level modules of the crate use each other, directly or
//!   through others (every `src/<name>.rs` and `src/<name>/` counts,
//!   `error` and `env` included).
//!
//! The sources are read from disk (`CARGO_MANIFEST_DIR/src`), so a new file
//! is checked without being listed. A use is any path that starts with
//! `crate` or `super` (in code and in doc links, not in string literals),
//! with `{…}` groups expanded and `super` resolved against the file's
//! module and any inline `mod` around it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// `src/` files that are not command files of the CLI.
const CLI_SHARED: [&str; 6] = ["candidates", "help", "mod", "style", "support", "ui"];

/// One source file.
struct SourceFile {
    /// Path below `src/`, `/`-separated (`deploy/plan.rs`).
    rel: String,
    /// Its module path (`["deploy", "plan"]`; `["deploy"]` for `deploy/mod.rs`).
    module: Vec<String>,
    text: String,
}

/// A use of another module: the absolute path it names (crate-relative,
/// its first two segments) and the line it is on.
#[derive(Debug, PartialEq, Eq)]
struct Use {
    path: Vec<String>,
    line: usize,
}

fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

fn read_sources(src: &Path) -> Vec<SourceFile> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(src).sort_by_file_name() {
        let e = e.expect("the source tree is readable");
        if !e.file_type().is_file() || e.path().extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let rel = e
            .path()
            .strip_prefix(src)
            .expect("below src")
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "lib.rs" || rel == "main.rs" {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).expect("sources are UTF-8");
        out.push(SourceFile {
            module: module_of(&rel),
            rel,
            text,
        });
    }
    out
}

/// The text with string and char literals blanked (same length, newlines
/// kept), and a copy with comments blanked too.
fn blank(text: &str) -> (String, String) {
    let b: Vec<char> = text.chars().collect();
    let mut no_lit = b.clone();
    let mut code = b.clone();
    let blank_range = |v: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut v[from..to] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            let end = b[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(b.len(), |p| i + p);
            blank_range(&mut code, i, end);
            i = end;
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j] == '/' && b.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == '*' && b.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank_range(&mut code, i, j);
            i = j;
        } else if (c == 'r' || c == 'b') && (i == 0 || !ident(b[i - 1])) && {
            // r"…", r#"…"#, br"…", b"…"
            let mut j = i + 1;
            if c == 'b' && b.get(j) == Some(&'r') {
                j += 1;
            }
            while b.get(j) == Some(&'#') {
                j += 1;
            }
            b.get(j) == Some(&'"') && (j > i + 1 || c == 'b' || c == 'r')
        } {
            let raw = c == 'r' || b.get(i + 1) == Some(&'r');
            let mut j = i + 1;
            if c == 'b' && b.get(j) == Some(&'r') {
                j += 1;
            }
            let hashes = b[j..].iter().take_while(|&&c| c == '#').count();
            j += hashes + 1; // past the opening quote
            while j < b.len() {
                if !raw && b[j] == '\\' {
                    j += 2;
                    continue;
                }
                if b[j] == '"'
                    && b[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&c| c == '#')
                        .count()
                        == hashes
                {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            let j = j.min(b.len());
            blank_range(&mut no_lit, i, j);
            blank_range(&mut code, i, j);
            i = j;
        } else if c == '"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                j += if b[j] == '\\' { 2 } else { 1 };
            }
            let j = (j + 1).min(b.len());
            blank_range(&mut no_lit, i, j);
            blank_range(&mut code, i, j);
            i = j;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{1F600}'), else a lifetime.
            let end = if next == Some('\\') {
                b.get(i + 3..)
                    .and_then(|rest| rest.iter().position(|&c| c == '\''))
                    .map(|p| i + 3 + p + 1)
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(j) => {
                    blank_range(&mut no_lit, i, j);
                    blank_range(&mut code, i, j);
                    i = j;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    (no_lit.into_iter().collect(), code.into_iter().collect())
}

/// Reads one path at `i` (`a::b::{c, d::e}`), returning every path it names
/// (groups expanded) and where it ends.
fn read_path(b: &[char], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut path = prefix;
    loop {
        while b.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if b.get(i) == Some(&'{') {
            i += 1;
            loop {
                while b.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                match b.get(i) {
                    None => return i,
                    Some('}') => return i + 1,
                    _ => {}
                }
                let before = i;
                i = read_path(b, i, path.clone(), out);
                if i == before {
                    i += 1; // `*` or something else that names no module
                }
            }
        }
        let start = i;
        while b.get(i).is_some_and(|&c| ident(c)) {
            i += 1;
        }
        if i == start {
            break;
        }
        let seg: String = b[start..i].iter().collect();
        if seg != "self" {
            path.push(seg);
        }
        if b.get(i) == Some(&':') && b.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            break;
        }
    }
    // `a::b as c`: the alias names nothing new.
    let mut j = i;
    while b.get(j).is_some_and(|c| c.is_whitespace()) {
        j += 1;
    }
    if b.get(j) == Some(&'a')
        && b.get(j + 1) == Some(&'s')
        && b.get(j + 2).is_some_and(|c| c.is_whitespace())
    {
        j += 3;
        while b.get(j).is_some_and(|c| c.is_whitespace()) {
            j += 1;
        }
        while b.get(j).is_some_and(|&c| ident(c)) {
            j += 1;
        }
        i = j;
    }
    out.push(path);
    i
}

/// Every use in `file` that names a module by an absolute path.
fn uses(file: &SourceFile) -> Vec<Use> {
    let (no_lit, code) = blank(&file.text);
    let b: Vec<char> = no_lit.chars().collect();
    let c: Vec<char> = code.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    // Inline `mod name {` blocks: (name, depth inside it).
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut line = 1usize;
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match c[i] {
            '\n' => line += 1,
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if stack.last().is_some_and(|(_, d)| *d > depth) {
                    stack.pop();
                }
            }
            _ => {}
        }
        let starts_word = i == 0 || !(ident(b[i - 1]) || b[i - 1] == ':');
        if !starts_word || !ident(b[i]) {
            i += 1;
            continue;
        }
        let end = (i..b.len()).find(|&j| !ident(b[j])).unwrap_or(b.len());
        let word: String = b[i..end].iter().collect();
        let code_word: String = c[i..end].iter().collect();
        if word == "mod" && code_word == "mod" {
            // `mod name {` opens an inline module; `mod name;` a file.
            let mut j = end;
            while c.get(j).is_some_and(|c| c.is_whitespace()) {
                j += 1;
            }
            let n_end = (j..c.len()).find(|&k| !ident(c[k])).unwrap_or(c.len());
            let name: String = c[j..n_end].iter().collect();
            let mut k = n_end;
            while c.get(k).is_some_and(|c| c.is_whitespace()) {
                k += 1;
            }
            if !name.is_empty() && c.get(k) == Some(&'{') {
                stack.push((name, depth + 1));
            }
        }
        let is_path = (word == "crate" || word == "super")
            && b.get(end) == Some(&':')
            && b.get(end + 1) == Some(&':');
        if !is_path {
            i = end;
            continue;
        }
        let mut paths = Vec::new();
        let stop = read_path(&b, i, Vec::new(), &mut paths);
        let mut here: Vec<String> = file.module.clone();
        here.extend(stack.iter().map(|(n, _)| n.clone()));
        for p in paths {
            let resolved = if p[0] == "crate" {
                Some(p[1..].to_vec())
            } else {
                let ups = p.iter().take_while(|s| *s == "super").count();
                (ups <= here.len()).then(|| {
                    let mut abs = here[..here.len() - ups].to_vec();
                    abs.extend(p[ups..].iter().cloned());
                    abs
                })
            };
            if let Some(mut path) = resolved.filter(|p| !p.is_empty()) {
                path.truncate(2);
                out.push(Use { path, line });
            }
        }
        // Count the lines the path spanned (a multi-line `use` group).
        for k in end..stop.min(b.len()) {
            if c[k] == '{' {
                depth += 1;
            } else if c[k] == '}' {
                depth = depth.saturating_sub(1);
            }
            if b[k] == '\n' {
                line += 1;
            }
        }
        i = stop.max(end);
    }
    out
}

/// Edges between top-level modules: `from → to → [file:line, …]`.
type Graph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

fn graph(files: &[SourceFile]) -> Graph {
    let tops: BTreeSet<&str> = files.iter().map(|f| f.module[0].as_str()).collect();
    let mut g = Graph::new();
    for f in files {
        let from = &f.module[0];
        g.entry(from.clone()).or_default();
        for u in uses(f) {
            let to = &u.path[0];
            if to != from && tops.contains(to.as_str()) {
                g.entry(from.clone())
                    .or_default()
                    .entry(to.clone())
                    .or_default()
                    .push(format!("src/{}:{}", f.rel, u.line));
            }
        }
    }
    g
}

/// One cycle per group of top-level modules that use each other, each as
/// `a → b (src/a.rs:3) → a (src/b.rs:9)`.
fn cycles(g: &Graph) -> Vec<String> {
    // Tarjan's strongly connected components.
    struct T<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        sccs: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g[v].keys().map(String::as_str) {
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.sccs.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        sccs: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    let mut out = Vec::new();
    for comp in &t.sccs {
        let inside: BTreeSet<&str> = comp.iter().copied().collect();
        let start = *inside.iter().next().expect("not empty");
        // The shortest way back to `start`, within the component.
        let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        let mut last = None;
        while let Some(v) = queue.pop_front() {
            for w in g[v]
                .keys()
                .map(String::as_str)
                .filter(|w| inside.contains(w))
            {
                if w == start {
                    last = Some(v);
                    queue.clear();
                    break;
                }
                if !prev.contains_key(w) {
                    prev.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
        let mut path = vec![start];
        let mut v = last.expect("a component has a cycle");
        while v != start {
            path.push(v);
            v = prev[v];
        }
        path[1..].reverse();
        path.push(start);
        let mut text = start.to_string();
        for w in path.windows(2) {
            text.push_str(&format!(" → {} ({})", w[1], g[w[0]][w[1]][0]));
        }
        out.push(text);
    }
    out
}

/// Uses of `doctor` by modules other than `doctor` and `cli`.
fn doctor_outside(g: &Graph) -> Vec<String> {
    g.iter()
        .filter(|(from, _)| *from != "cli" && *from != "doctor")
        .filter_map(|(from, to)| Some((from, to.get("doctor")?)))
        .map(|(from, at)| format!("{from} uses doctor at {}", at.join(", ")))
        .collect()
}

/// Command files of `src/cli/` that use another command file.
fn cli_cross_imports(files: &[SourceFile]) -> Vec<String> {
    let commands: BTreeSet<&str> = files
        .iter()
        .filter(|f| f.module.len() == 2 && f.module[0] == "cli")
        .map(|f| f.module[1].as_str())
        .filter(|m| !CLI_SHARED.contains(m))
        .collect();
    let mut bad = Vec::new();
    for f in files
        .iter()
        .filter(|f| f.module[0] == "cli" && f.module.len() >= 2)
    {
        let own = f.module[1].as_str();
        if !commands.contains(own) {
            continue;
        }
        for u in uses(f) {
            if u.path.len() == 2
                && u.path[0] == "cli"
                && u.path[1] != own
                && commands.contains(u.path[1].as_str())
            {
                bad.push(format!("src/{}:{} uses cli::{}", f.rel, u.line, u.path[1]));
            }
        }
    }
    bad
}

#[test]
fn layers_point_down() {
    let files = read_sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(files.iter().any(|f| f.rel == "doctor/mod.rs"), "read src/");
    let g = graph(&files);
    let mut problems = Vec::new();
    problems.extend(
        doctor_outside(&g)
            .into_iter()
            .map(|p| format!("only cli and doctor may use doctor: {p}")),
    );
    problems.extend(
        cli_cross_imports(&files)
            .into_iter()
            .map(|p| format!("a command file uses another (move it to cli/support.rs): {p}")),
    );
    problems.extend(
        cycles(&g)
            .into_iter()
            .map(|c| format!("top-level modules use each other: {c}")),
    );
    assert!(
        problems.is_empty(),
        "layers that do not point down:\n{}",
        problems.join("\n")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(rel: &str, text: &str) -> SourceFile {
        SourceFile {
            rel: rel.into(),
            module: module_of(rel),
            text: text.into(),
        }
    }

    fn paths(f: &SourceFile) -> Vec<String> {
        uses(f)
            .iter()
            .map(|u| format!("{}@{}", u.path.join("::"), u.line))
            .collect()
    }

    #[test]
    fn paths_are_read_in_code_and_doc_links_not_in_strings() {
        let f = file(
            "deploy/plan.rs",
            "use crate::{error::{Error, Kind}, store::Store as S};\n\
             use super::backup;\n\
             /// See [`crate::doctor::names`].\n\
             fn f() { let s = \"crate::cli::x\"; let r = r#\"crate::lock\"#; let c = '{'; }\n\
             mod inner {\n    use super::super::super::toolkit::Toolkit;\n    fn g<'a>(x: &'a str) {}\n}\n\
             use crate::{\n    hash,\n    home::Home,\n};\n",
        );
        assert_eq!(
            paths(&f),
            [
                "error::Error@1",
                "error::Kind@1",
                "store::Store@1",
                "deploy::backup@2",
                "doctor::names@3",
                "toolkit::Toolkit@6",
                "hash@9",
                "home::Home@9",
            ]
        );
        assert_eq!(module_of("activate/mod.rs"), ["activate"]);
        assert_eq!(module_of("cli/use_.rs"), ["cli", "use_"]);
    }

    #[test]
    fn each_rule_fails_on_a_violation() {
        let files = [
            file("a.rs", "use crate::b::X;"),
            file("b/mod.rs", "pub fn f() { crate::c::g() }"),
            file("c.rs", "use super::a;\nuse crate::doctor::finding;"),
            file("doctor/mod.rs", "use crate::a;"),
            file("cli/list.rs", "use super::{Ctx, list_remote::run};"),
            file("cli/list_remote.rs", "use super::support::human_size;"),
            file("cli/support.rs", "use crate::cli::list::Args;"),
        ];
        let g = graph(&files);
        let c = cycles(&g);
        assert_eq!(
            c,
            ["a → b (src/a.rs:1) → c (src/b/mod.rs:1) → a (src/c.rs:1)"]
        );
        assert_eq!(doctor_outside(&g), ["c uses doctor at src/c.rs:2"]);
        assert_eq!(
            cli_cross_imports(&files),
            ["src/cli/list.rs:1 uses cli::list_remote"]
        );
    }
}
