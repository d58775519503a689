//! The repository stands on its own: what it says about cuDNN releases cites
//! public pages (NVIDIA's, a bug tracker's, a package index's) or the tables
//! in `docs/`, never notes kept outside the repository.

use std::path::{Path, PathBuf};

/// Names of the outside notes the project started from. Spelled in pieces
/// so that this file does not match itself once `src` is checked.
const OUTSIDE_NOTES: &[&str] = &[
    concat!("shared", "/reference"),
    concat!("..", "/shared"),
    concat!("cudnn", "-facts"),
    concat!("field", "-cases"),
    concat!("windows", "-testing"),
    concat!("DESIGN", ".md"),
    concat!("STYLE", ".md"),
    concat!("issue", " item"),
];

/// Checked: the catalog, the docs and the README.
const ROOTS: &[&str] = &["manifest.toml", "README.md", "docs"];

/// Also checked: the code, the tests, the scripts, the shell hooks and CI,
/// comments included.
const EXTRA_ROOTS: &[&str] = &["src", "tests", "scripts", "shims", ".ci"];

/// Whether [`EXTRA_ROOTS`] are checked too (they are, since the comments
/// cite `docs/` and public pages).
const CHECK_EXTRA_ROOTS: bool = true;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn roots() -> Vec<&'static str> {
    let mut r = ROOTS.to_vec();
    if CHECK_EXTRA_ROOTS {
        r.extend_from_slice(EXTRA_ROOTS);
    }
    r
}

/// Every text file under `path` (or `path` itself), in a stable order.
fn text_files(path: &Path, out: &mut Vec<(PathBuf, String)>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            text_files(&p, out);
        }
    } else if let Ok(text) = std::fs::read_to_string(path) {
        out.push((path.to_path_buf(), text));
    }
}

fn checked_files() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for r in roots() {
        let p = repo().join(r);
        assert!(p.exists(), "{} is missing", p.display());
        text_files(&p, &mut files);
    }
    files
}

fn shown(p: &Path) -> String {
    p.strip_prefix(repo()).unwrap_or(p).display().to_string()
}

/// The outside note `line` cites, if any: one of [`OUTSIDE_NOTES`], a
/// section sign (the notes were cited by section number), or a field-case
/// id such as `F` followed by two digits (the notes' numbering of bug
/// reports; cite the report's URL or its `docs/breakages.md` anchor).
fn outside_reference(line: &str) -> Option<&'static str> {
    if let Some(name) = OUTSIDE_NOTES.iter().find(|t| line.contains(*t)) {
        return Some(name);
    }
    if line.contains('\u{a7}') {
        return Some("a section sign");
    }
    let b = line.as_bytes();
    (0..b.len().saturating_sub(2))
        .any(|i| {
            b[i] == b'F'
                && b[i + 1].is_ascii_digit()
                && b[i + 2].is_ascii_digit()
                && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
                && b.get(i + 3).is_none_or(|c| !c.is_ascii_alphanumeric())
        })
        .then_some("a field case id")
}

#[test]
fn outside_references_are_recognised() {
    let field_case = format!("(F{}: the 8.3 archives)", 20);
    assert_eq!(outside_reference(&field_case), Some("a field case id"));
    assert_eq!(outside_reference("x64 F200 0xF20a"), None);
    let section = format!("facts {}5.3", '\u{a7}');
    assert_eq!(outside_reference(&section), Some("a section sign"));
    let design = format!("see {}.md", "DESIGN");
    assert!(outside_reference(&design).is_some());
    assert_eq!(outside_reference("docs/architecture.md#layers"), None);
}

#[test]
fn nothing_cites_notes_outside_the_repository() {
    let mut hits = Vec::new();
    for (path, text) in checked_files() {
        for (n, line) in text.lines().enumerate() {
            if let Some(name) = outside_reference(line) {
                hits.push(format!(
                    "{}:{}: cites {name}: {}",
                    shown(&path),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "cite the public source or a table in docs/ instead:\n{}",
        hits.join("\n")
    );
}

/// Every `source` of the embedded catalog names at least one public address.
#[test]
fn every_catalog_source_names_a_public_address() {
    let doc: toml::Value = toml::from_str(super::EMBEDDED_MANIFEST).unwrap();
    let mut sources: Vec<(String, String)> = Vec::new();
    let mut take = |what: String, v: Option<&toml::Value>| {
        let s = v.and_then(toml::Value::as_str).unwrap_or_default();
        sources.push((what, s.to_string()));
    };
    for (i, a) in doc["archive"].as_array().unwrap().iter().enumerate() {
        let id = format!("archive {} {} {}", a["version"], a["cuda"], a["platform"]);
        take(format!("{id} (#{i})"), a.get("source"));
        for h in a["hashes"].as_array().unwrap() {
            take(format!("{id} hash"), h.get("source"));
        }
    }
    for s in doc["support"].as_array().unwrap() {
        take(format!("support {}", s["cudnn"]), s.get("source"));
    }
    for w in doc["wheel"].as_array().unwrap() {
        take(format!("wheel {}", w["package"]), w.get("source"));
    }
    for r in doc["redist"].as_array().unwrap() {
        take(format!("redist {}", r["label"]), r.get("source"));
    }
    for g in doc["gpu"].as_array().unwrap() {
        take(format!("gpu {}", g["architecture"]), g.get("source"));
    }
    assert!(sources.len() > 300, "{}", sources.len());
    let bad: Vec<String> = sources
        .iter()
        .filter(|(_, s)| !s.contains("https://"))
        .map(|(w, s)| format!("{w}: {s:?}"))
        .collect();
    assert!(
        bad.is_empty(),
        "sources without a public address:\n{}",
        bad.join("\n")
    );
}

/// The anchors a `docs/<file>.md#anchor` citation may point at: explicit
/// `<a id="…">` tags and GitHub's heading slugs.
fn anchors(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(i) = rest.find("id=\"") {
            let tail = &rest[i + 4..];
            let end = tail.find('"').unwrap_or(tail.len());
            out.push(tail[..end].to_string());
            rest = &tail[end..];
        }
        if let Some(h) = line.strip_prefix('#') {
            let title = h.trim_start_matches('#').trim();
            let slug: String = title
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
                .map(|c| if c == ' ' { '-' } else { c })
                .collect();
            out.push(slug);
        }
    }
    out
}

/// `docs/<file>.md#anchor` citations in `text`: the file and the anchor
/// (empty when none). A `docs/` inside a URL or a longer path is not one.
fn docs_citations(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut from = 0;
        while let Some(i) = line[from..].find("docs/").map(|i| i + from) {
            from = i + 5;
            let before = line[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || "/._-".contains(c)) {
                continue;
            }
            let tail = &line[i..];
            let end = tail
                .find(|c: char| !(c.is_alphanumeric() || "/._-#".contains(c)))
                .unwrap_or(tail.len());
            let cite = tail[..end].trim_end_matches('.');
            let (file, anchor) = cite.split_once('#').unwrap_or((cite, ""));
            if file.ends_with(".md") {
                out.push((n + 1, file.to_string(), anchor.to_string()));
            }
        }
    }
    out
}

/// Relative Markdown links inside a `docs/` page: `](other.md#anchor)`,
/// `](#anchor)`, as `docs/`-rooted file and anchor.
fn markdown_links(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for part in line.split("](").skip(1) {
            let target = part.split(')').next().unwrap_or("");
            if target.contains("://") || target.is_empty() {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file = if file.is_empty() {
                String::new()
            } else {
                format!("docs/{file}")
            };
            out.push((n + 1, file, anchor.to_string()));
        }
    }
    out
}

/// A citation such as `docs/breakages.md#dll-load-failed-zlibwapi` names a
/// file and an anchor that exist, wherever it is written (code included),
/// and the links between the `docs/` pages resolve.
#[test]
fn docs_citations_resolve() {
    let mut files = checked_files();
    if !CHECK_EXTRA_ROOTS {
        for r in EXTRA_ROOTS {
            text_files(&repo().join(r), &mut files);
        }
    }
    let mut bad = Vec::new();
    let mut seen = 0;
    for (path, text) in &files {
        let rel = shown(path);
        let mut cites = docs_citations(text);
        if rel.starts_with("docs") && rel.ends_with(".md") {
            for (n, file, anchor) in markdown_links(text) {
                let file = if file.is_empty() {
                    rel.replace('\\', "/")
                } else {
                    file
                };
                cites.push((n, file, anchor));
            }
        }
        for (n, file, anchor) in cites {
            seen += 1;
            let Ok(doc) = std::fs::read_to_string(repo().join(&file)) else {
                bad.push(format!("{rel}:{n}: {file}: no such file"));
                continue;
            };
            if !anchor.is_empty() && !anchors(&doc).contains(&anchor) {
                bad.push(format!("{rel}:{n}: {file}#{anchor}: no such anchor"));
            }
        }
    }
    assert!(seen > 0, "no docs/ citation found at all");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn citations_are_told_from_urls() {
    let c = docs_citations(
        "see docs/breakages.md#dll-load-failed-zlibwapi. and https://github.com/tensorflow/docs/blob/x.md\n(docs/system.md)",
    );
    assert_eq!(
        c,
        vec![
            (
                1,
                "docs/breakages.md".to_string(),
                "dll-load-failed-zlibwapi".to_string()
            ),
            (2, "docs/system.md".to_string(), String::new()),
        ]
    );
    let l = markdown_links("[a](releases.md#x), [b](#y), [c](https://e.org/a.md)");
    assert_eq!(
        l,
        vec![
            (1, "docs/releases.md".to_string(), "x".to_string()),
            (1, String::new(), "y".to_string()),
        ]
    );
}

#[test]
fn heading_slugs_follow_github() {
    let a = anchors(
        "## Minimum compute capability\n<a id=\"dll-load-failed-zlibwapi\"></a>\n### 8.3+ `lib` moved",
    );
    assert_eq!(
        a,
        vec![
            "minimum-compute-capability",
            "dll-load-failed-zlibwapi",
            "83-lib-moved"
        ]
    );
}
