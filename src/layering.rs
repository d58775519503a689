//! Layers point down (`docs/architecture.md#layers`), checked on the sources themselves:
//! - every top-level module has a rank in [`LAYERS`], the table of
//!   `docs/architecture.md#layers` held as data (a test holds the two
//!   together), and uses no module of a layer above its own;
//! - nothing outside `src/doctor/` and `src/cli/` uses `doctor`;
//! - a command file of `src/cli/` never uses another command file (shared
//!   helpers live in the files of [`CLI_SHARED`]);
//! - no two top-level modules of the crate use each other, directly or
//!   through others (within a layer too).
//!
//! The sources are read from disk (`CARGO_MANIFEST_DIR/src`), so a new file
//! is checked without being listed, and parsed with `syn`. A use is any path
//! that starts with `crate`, `super` or `self`: in code (`use` trees
//! expanded), in macro bodies (`matches!(m, crate::deploy::Mode::Copy)`)
//! and in doc links, never in string literals; `super` is resolved against
//! the file's module and any inline `mod` around it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::visit::Visit;

/// The layers, bottom first, with their top-level modules: the table of
/// `docs/architecture.md#layers`. A module uses modules of its own layer or
/// below, never above.
const LAYERS: [(&str, &[&str]); 6] = [
    (
        "vocabulary",
        &[
            "names", "quote", "command", "shape", "record", "version", "error", "digest",
        ],
    ),
    (
        "services",
        &[
            "env",
            "fsops",
            "disk",
            "platform",
            "lock",
            "hash",
            "interrupt",
            "progress",
            "libcudnn",
            "child",
            "gpu",
        ],
    ),
    (
        "core",
        &[
            "home",
            "store",
            "archive",
            "catalog",
            "toolkit",
            "deploy",
            "activate",
            "pin",
            "verify",
            "usage",
            "modulefile",
            "export_tree",
            "selfupdate",
            "python",
        ],
    ),
    ("operations", &["ops"]),
    ("diagnosis", &["doctor"]),
    ("front end", &["cli"]),
];

/// `src/cli/` files that are not command files of the CLI.
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
        // The crate root, the binary, and this test.
        if rel == "lib.rs" || rel == "main.rs" || rel == "layering.rs" {
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

/// Collects the uses of one file while walking its syntax tree.
struct Uses {
    /// The module being walked: the file's, then any inline `mod` in it.
    here: Vec<String>,
    out: Vec<Use>,
}

impl Uses {
    /// Records `path` (its segments as written) at `span`'s line when it
    /// starts with `crate`, `super` or `self`.
    fn add(&mut self, path: &[String], span: Span) {
        self.add_at(path, span.start().line);
    }

    fn add_at(&mut self, path: &[String], line: usize) {
        let resolved = match path.first().map(String::as_str) {
            Some("crate") => Some(path[1..].to_vec()),
            Some("super" | "self") => {
                let ups = path.iter().take_while(|s| *s == "super").count();
                let skip = ups + usize::from(ups == 0);
                (ups <= self.here.len()).then(|| {
                    let mut abs = self.here[..self.here.len() - ups].to_vec();
                    abs.extend(path[skip..].iter().cloned());
                    abs
                })
            }
            _ => None,
        };
        if let Some(mut p) = resolved.filter(|p| !p.is_empty()) {
            p.truncate(2);
            self.out.push(Use { path: p, line });
        }
    }

    /// Every path of a `use` tree, groups expanded; `self` in a group
    /// names the group's own prefix, and an alias names nothing new.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, &r.ident),
            syn::UseTree::Glob(g) => self.add(prefix, g.star_token.span),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(t, prefix);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], ident: &syn::Ident) {
        let mut path = prefix.to_vec();
        if ident != "self" || path.is_empty() {
            path.push(ident.to_string());
        }
        self.add(&path, ident.span());
    }

    /// Paths in a macro's tokens (`matches!`, `format!`, `assert_eq!`), which
    /// `syn` leaves unparsed: `crate`/`super`/`self` followed by `::`.
    fn tokens(&mut self, tokens: TokenStream) {
        let tts: Vec<TokenTree> = tokens.into_iter().collect();
        let is_sep = |i: usize| {
            matches!((tts.get(i), tts.get(i + 1)),
                (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                    if a.as_char() == ':' && b.as_char() == ':')
        };
        let mut i = 0;
        while i < tts.len() {
            match &tts[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(id)
                    if (id == "crate" || id == "super" || id == "self")
                        && is_sep(i + 1)
                        && !(i >= 2 && is_sep(i - 2)) =>
                {
                    let mut path = vec![id.to_string()];
                    let mut j = i + 1;
                    while is_sep(j) {
                        match tts.get(j + 2) {
                            Some(TokenTree::Ident(next)) => {
                                path.push(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    self.add(&path, id.span());
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// Paths in a doc comment's text (`[`crate::deploy::Change`]`).
    fn doc(&mut self, text: &str, first_line: usize) {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        for start in ["crate::", "super::", "self::"]
            .iter()
            .flat_map(|w| text.match_indices(w).map(|(i, _)| i))
            .collect::<BTreeSet<usize>>()
        {
            let before = text[..start].chars().next_back();
            if before.is_some_and(|c| ident(c) || c == ':') {
                continue;
            }
            let end = text[start..]
                .find(|c: char| !(ident(c) || c == ':'))
                .map_or(text.len(), |n| start + n);
            let path: Vec<String> = text[start..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            let line = first_line + text[..start].matches('\n').count();
            self.add_at(&path, line);
        }
    }
}

impl<'ast> Visit<'ast> for Uses {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        for a in &m.attrs {
            self.visit_attribute(a);
        }
        if let Some((_, items)) = &m.content {
            self.here.push(m.ident.to_string());
            for i in items {
                self.visit_item(i);
            }
            self.here.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for a in &u.attrs {
            self.visit_attribute(a);
        }
        self.use_tree(&u.tree, &mut Vec::new());
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = p.segments.first() {
            self.add(&segs, first.ident.span());
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }

    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        if let syn::Meta::NameValue(nv) = &a.meta
            && nv.path.is_ident("doc")
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            self.doc(&s.value(), s.span().start().line);
            return;
        }
        syn::visit::visit_attribute(self, a);
    }
}

/// Every use in `file` that names a module by an absolute path.
fn uses(file: &SourceFile) -> Vec<Use> {
    let ast = syn::parse_file(&file.text)
        .unwrap_or_else(|e| panic!("src/{} does not parse: {e}", file.rel));
    let mut v = Uses {
        here: file.module.clone(),
        out: Vec::new(),
    };
    v.visit_file(&ast);
    v.out
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

/// The rank of `module` (its layer's index in `layers`, bottom 0) and its layer's name.
fn rank<'a>(layers: &[(&'a str, &[&str])], module: &str) -> Option<(usize, &'a str)> {
    layers
        .iter()
        .enumerate()
        .find(|(_, (_, mods))| mods.contains(&module))
        .map(|(i, (name, _))| (i, *name))
}

/// Top-level modules with no layer in `layers`.
fn unranked(g: &Graph, layers: &[(&str, &[&str])]) -> Vec<String> {
    g.keys()
        .filter(|m| rank(layers, m).is_none())
        .cloned()
        .collect()
}

/// Uses of a module in a layer above the user's, each as
/// `store (core) uses doctor (diagnosis) at src/store/mod.rs:3`.
fn upward_uses(g: &Graph, layers: &[(&str, &[&str])]) -> Vec<String> {
    let mut out = Vec::new();
    for (from, tos) in g {
        let Some((rf, lf)) = rank(layers, from) else {
            continue;
        };
        for (to, at) in tos {
            if let Some((rt, lt)) = rank(layers, to)
                && rt > rf
            {
                out.push(format!(
                    "{from} ({lf}) uses {to} ({lt}) at {}",
                    at.join(", ")
                ));
            }
        }
    }
    out
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

/// The layer table of `docs/architecture.md#layers`: each row's layer name
/// and the modules its second column names in backticks.
fn doc_layers(doc: &str) -> Vec<(String, Vec<String>)> {
    let from = doc
        .find("<a id=\"layers\"></a>")
        .expect("docs/architecture.md has the layers anchor");
    doc[from..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // the header and its `| --- |` line
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let modules = cells[2]
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            (cells[1].to_string(), modules)
        })
        .collect()
}

#[test]
fn layers_point_down() {
    let files = read_sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(files.iter().any(|f| f.rel == "doctor/mod.rs"), "read src/");
    let g = graph(&files);
    let mut problems = Vec::new();
    problems.extend(unranked(&g, &LAYERS).into_iter().map(|m| {
        format!("{m} has no layer: give it one in the table of docs/architecture.md#layers and in LAYERS")
    }));
    problems.extend(
        upward_uses(&g, &LAYERS)
            .into_iter()
            .map(|p| format!("a module uses one of a layer above its own: {p}")),
    );
    problems.extend(
        doctor_outside(&g)
            .into_iter()
            .map(|p| format!("only cli and doctor may use doctor: {p}")),
    );
    problems.extend(
        cli_cross_imports(&files)
            .into_iter()
            .map(|p| format!("a command file uses another (move it to cli/support/): {p}")),
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

/// The table the test holds is the one the maintainers read.
#[test]
fn the_layers_are_the_ones_docs_architecture_draws() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .expect("docs/architecture.md is readable");
    let ours: Vec<(String, Vec<String>)> = LAYERS
        .iter()
        .map(|(name, mods)| {
            (
                name.to_string(),
                mods.iter().map(|m| m.to_string()).collect(),
            )
        })
        .collect();
    assert_eq!(
        doc_layers(&doc),
        ours,
        "the table of docs/architecture.md#layers and LAYERS in src/layering.rs differ"
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
    fn paths_are_read_in_code_macros_and_doc_links_not_in_strings() {
        let f = file(
            "deploy/plan.rs",
            "use crate::{error::{Error, Kind}, store::Store as S};\n\
             use super::backup;\n\
             /// See [`crate::doctor::names`].\n\
             fn f() { let s = \"crate::cli::x\"; let r = r#\"crate::lock\"#; let c = '{'; }\n\
             mod inner {\n    use super::super::super::toolkit::Toolkit;\n    fn g<'a>(x: &'a str) {}\n}\n\
             use crate::{\n    hash,\n    home::Home,\n};\n\
             fn h() -> bool { matches!(m(), crate::pin::Pin::None) && format!(\"{}\", crate::quote::x()).is_empty() }\n\
             // crate::cli::not_a_use in a comment\n\
             fn i(x: crate::activate::Activation) -> self::Local { crate::catalog::f(super::apply::g()) }\n",
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
                "hash@10",
                "home::Home@11",
                "pin::Pin@13",
                "quote::x@13",
                "activate::Activation@15",
                "deploy::plan@15",
                "catalog::f@15",
                "deploy::apply@15",
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
        let layers: [(&str, &[&str]); 3] = [
            ("low", &["a", "c"]),
            ("high", &["b", "doctor"]),
            ("top", &["cli"]),
        ];
        assert_eq!(
            upward_uses(&g, &layers),
            [
                "a (low) uses b (high) at src/a.rs:1",
                "c (low) uses doctor (high) at src/c.rs:2",
            ]
        );
        assert_eq!(unranked(&g, &layers), Vec::<String>::new());
        assert_eq!(unranked(&g, &layers[..2]), ["cli"]);
    }

    #[test]
    fn the_doc_table_is_read_row_by_row() {
        let doc = "# x\n<a id=\"layers\"></a>\n## Modules\n\ntext\n\n\
                   | layer | modules | role |\n| --- | --- | --- |\n\
                   | vocabulary | `names`, `quote` | words |\n| front end | `cli` | one file per command, `cli/ui.rs` |\n\nafter\n";
        assert_eq!(
            doc_layers(doc),
            [
                (
                    "vocabulary".to_string(),
                    vec!["names".to_string(), "quote".to_string()]
                ),
                ("front end".to_string(), vec!["cli".to_string()]),
            ]
        );
    }
}
